--
-- t12_parallel: parallel index scans and index-only scans (forward, with
-- Gather Merge order, backward, array keys, NULLs, DESC indexes, rescans
-- under a parallel nested loop), gbtree twins against btree twins and a
-- sequential scan.  Parallel plans are forced by zero parallel costs; the
-- plan of every gbtree query is checked to really be a parallel one.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t12;
SET search_path = t12, public;
SET extra_float_digits = 1;
SET jit = off;
SET statement_timeout = '120s';

CREATE TABLE p_g (id int, k int8, f float8);
CREATE TABLE p_b (id int, k int8, f float8);
INSERT INTO p_g
SELECT i,
	   CASE WHEN i % 97 = 0 THEN NULL
			WHEN i % 11 = 0 THEN 42				-- heavy duplicates
			WHEN i % 13 = 0 THEN (i % 5) - 2
			WHEN i = 5 THEN 9223372036854775807
			WHEN i = 6 THEN -9223372036854775808
			ELSE (hashint4(i)::int8 * 7919) END,
	   CASE WHEN i % 89 = 0 THEN NULL
			WHEN i % 101 = 0 THEN 'NaN'::float8
			WHEN i % 103 = 0 THEN 'Infinity'::float8
			WHEN i % 107 = 0 THEN '-Infinity'::float8
			WHEN i % 109 = 0 THEN '-0'::float8
			ELSE hashint4(i + 7) / 1000.0 END
FROM generate_series(1, 200000) i;
INSERT INTO p_b SELECT * FROM p_g;
CREATE INDEX p_g_k ON p_g USING gbtree (k);
CREATE INDEX p_b_k ON p_b USING btree (k);
CREATE INDEX p_g_fd ON p_g USING gbtree (f DESC NULLS LAST);
CREATE INDEX p_b_fd ON p_b USING btree (f DESC NULLS LAST);
VACUUM ANALYZE p_g;
VACUUM ANALYZE p_b;

-- Run query q (with %s for the table) on gbtree, btree and a seq scan,
-- forced parallel; return 'same' or the differing results.  ordered:
-- compare the row sequence (the query has an ORDER BY), else the multiset.
CREATE FUNCTION par_check(q text, ordered bool, ionly bool DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	rg text; rb text; rs text; plan text := ''; ln text;
	agg text := CASE WHEN ordered THEN 'md5(string_agg(x::text, '','' ORDER BY n))'
					 ELSE 'md5(string_agg(x::text, '','' ORDER BY x::text))' END;
	wrap text := 'SELECT count(*) || '':'' || coalesce(' || agg || ', '''') FROM (SELECT x, row_number() OVER () AS n FROM (%s) x) s';
BEGIN
	PERFORM set_config('parallel_setup_cost', '0', true);
	PERFORM set_config('parallel_tuple_cost', '0', true);
	PERFORM set_config('min_parallel_index_scan_size', '0', true);
	PERFORM set_config('min_parallel_table_scan_size', '0', true);
	PERFORM set_config('max_parallel_workers_per_gather', '2', true);
	-- make per-row work dear, so Gather Merge's comparisons are cheap
	PERFORM set_config('cpu_index_tuple_cost', '1', true);
	PERFORM set_config('cpu_tuple_cost', '1', true);
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', ionly::text, true);
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, 'p_g') LOOP
		plan := plan || ln || E'\n';
	END LOOP;
	IF plan !~ 'Parallel Index' THEN
		RETURN 'NOT PARALLEL: ' || plan;
	END IF;
	IF ionly AND plan !~ 'Index Only' THEN
		RETURN 'NOT INDEX-ONLY: ' || plan;
	END IF;
	EXECUTE format(wrap, format(q, 'p_g')) INTO rg;
	EXECUTE format(wrap, format(q, 'p_b')) INTO rb;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', 'off', true);
	EXECUTE format(wrap, format(q, 'p_b')) INTO rs;
	PERFORM set_config('enable_indexscan', 'on', true);
	IF rg = rb AND rb = rs THEN
		RETURN 'same ' || split_part(rg, ':', 1);
	END IF;
	RETURN format('DIFFERENT gbtree %s btree %s seq %s', rg, rb, rs);
END
$f$;

BEGIN;
SELECT par_check('SELECT id, k FROM %s WHERE k > 0', false);
SELECT par_check('SELECT k FROM %s WHERE k > 0', false, true);
SELECT par_check('SELECT k FROM %s WHERE k BETWEEN -1000000000 AND 1000000000', false, true);
SELECT par_check('SELECT id FROM %s WHERE k = 42', false);
SELECT par_check('SELECT k FROM %s WHERE k >= 9223372036854775807', false, true);
SELECT par_check('SELECT k FROM %s WHERE k <= -9223372036854775808', false, true);
SELECT par_check('SELECT k FROM %s WHERE k < -9223372036854775808', false, true);
SELECT par_check('SELECT id FROM %s WHERE k IS NULL', false);
SELECT par_check('SELECT k FROM %s WHERE k IS NOT NULL', false, true);
SELECT par_check('SELECT id, k FROM %s WHERE k = ANY(ARRAY[42, -2, -1, 0, 1, 2, 9223372036854775807, 12345])', false);
SELECT par_check('SELECT k FROM %s WHERE k = ANY(ARRAY(SELECT hashint4(i)::int8 * 7919 FROM generate_series(1, 3000) i)) AND k > 0', false, true);
SELECT par_check('SELECT k FROM %s WHERE k = ANY(''{}''::int8[])', false, true);
-- ordered output through Gather Merge, forward and backward (ties of
-- duplicate keys come in any order, so only keys are compared)
SELECT par_check('SELECT k FROM %s WHERE k > -5 ORDER BY k', true, true);
SELECT par_check('SELECT k FROM %s WHERE k < 1000000 ORDER BY k', true);
SELECT par_check('SELECT k FROM %s WHERE k > -5 ORDER BY k DESC', true, true);
-- float keys with NaN, -0, infinities and NULLs on a DESC NULLS LAST index
SELECT par_check('SELECT f FROM %s WHERE f > 0', false, true);
SELECT par_check('SELECT f FROM %s WHERE f <= 0', false, true);
SELECT par_check('SELECT f FROM %s WHERE f = ANY(ARRAY[''NaN'', ''-0'', ''Infinity'', ''-Infinity'']::float8[])', false, true);
SELECT par_check('SELECT f FROM %s WHERE f > -1e300 ORDER BY f DESC NULLS LAST', true, true);
SELECT par_check('SELECT f FROM %s WHERE f IS NULL', false, true);
COMMIT;

-- leader only, and workers only
BEGIN;
SET LOCAL parallel_leader_participation = off;
SELECT par_check('SELECT k FROM %s WHERE k > 0', false, true);
SELECT par_check('SELECT k FROM %s WHERE k < 1000000 ORDER BY k', true);
COMMIT;
BEGIN;
SET LOCAL max_parallel_workers = 0;
SELECT par_check('SELECT k FROM %s WHERE k > 0', false, true);
SELECT par_check('SELECT k FROM %s WHERE k < 1000000 ORDER BY k', true);
COMMIT;

-- a parallel scan while another session's deletes leave dead entries
DELETE FROM p_g WHERE id % 3 = 0;
DELETE FROM p_b WHERE id % 3 = 0;
BEGIN;
SELECT par_check('SELECT id, k FROM %s WHERE k > 0', false);
SELECT par_check('SELECT k FROM %s WHERE k > -5 ORDER BY k', true, true);
COMMIT;
VACUUM p_g;
VACUUM p_b;
BEGIN;
SELECT par_check('SELECT id, k FROM %s WHERE k > 0', false);
SELECT par_check('SELECT k FROM %s WHERE k IS NOT NULL ORDER BY k', true, true);
COMMIT;

SELECT gbtree_check('p_g_k', true), gbtree_check('p_g_fd', true);
DROP SCHEMA t12 CASCADE;
