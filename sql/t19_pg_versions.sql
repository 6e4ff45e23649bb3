--
-- t19_pg_versions: what gbtree does differently on each PostgreSQL major
-- (src/gbtree_compat.h).  Each check states what this server's major must
-- show, so one expected output serves 15 to 18 and every check can fail on
-- every major:
--   * 18: EXPLAIN ANALYZE shows "Index Searches" for gbtree scans, as for
--     btree (before 18, for neither);
--   * 17+: an inserting statement's batched entries reach the index when
--     the statement ends (aminsertcleanup); before 17 they wait, at the
--     latest, for COMMIT;
--   * 18: ordered scans and correlation still come through the planner's
--     mapping of "<" to a sort order (amtranslatecmptype).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t19;
SET search_path = t19, public;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

SELECT current_setting('server_version_num')::int / 10000 BETWEEN 15 AND 18 AS supported_major;

CREATE TABLE v_g (id int, k int8);
CREATE TABLE v_b (id int, k int8);
INSERT INTO v_g SELECT g, g * 3 FROM generate_series(1, 20000) g;
INSERT INTO v_b SELECT * FROM v_g;
CREATE INDEX v_g_idx ON v_g USING gbtree (k);
CREATE INDEX v_b_idx ON v_b USING btree (k);
VACUUM ANALYZE v_g;
VACUUM ANALYZE v_b;

-- the "Index Searches" values of a plan, in plan order ('' when none)
CREATE FUNCTION index_searches(q text, m text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
	res text := '';
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_indexscan', (m = 'iscan')::text, true);
	PERFORM set_config('enable_indexonlyscan', (m = 'ionly')::text, true);
	PERFORM set_config('enable_bitmapscan', (m = 'bitmap')::text, true);
	FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF ln ~ 'Index Searches:' THEN
			res := res || CASE WHEN res = '' THEN '' ELSE ',' END
				|| substring(ln FROM 'Index Searches: ([0-9]+)');
		END IF;
	END LOOP;
	RETURN res;
END
$f$;

-- gbtree shows the same count as btree where both descend once, and a
-- count for every scan node; before 18 neither shows any
CREATE FUNCTION searches_as_this_major_should(pred text) RETURNS TABLE (m text, ok boolean)
LANGUAGE plpgsql AS $f$
DECLARE
	g text;
	b text;
BEGIN
	FOREACH m IN ARRAY ARRAY['iscan', 'ionly', 'bitmap'] LOOP
		g := index_searches(format('SELECT k FROM v_g WHERE %s', pred), m);
		b := index_searches(format('SELECT k FROM v_b WHERE %s', pred), m);
		IF current_setting('server_version_num')::int >= 180000 THEN
			ok := g = b AND g ~ '^[1-9]';
		ELSE
			ok := g = '' AND b = '';
		END IF;
		IF NOT ok THEN
			RAISE NOTICE 'Index Searches for % (%): gbtree "%", btree "%"', pred, m, g, b;
		END IF;
		RETURN NEXT;
	END LOOP;
END
$f$;
SET client_min_messages = notice;
SELECT * FROM searches_as_this_major_should('k = 300');
SELECT * FROM searches_as_this_major_should('k BETWEEN 300 AND 900');
SELECT * FROM searches_as_this_major_should('k < 0');

-- = ANY with keys far apart: at least one search, and the same rows
SELECT CASE WHEN current_setting('server_version_num')::int >= 180000
			THEN index_searches('SELECT k FROM v_g WHERE k = ANY(''{3, 30000, 59997}'')', 'iscan') ~ '^[1-9][0-9]*$'
			ELSE index_searches('SELECT k FROM v_g WHERE k = ANY(''{3, 30000, 59997}'')', 'iscan') = ''
	   END AS any_searches_as_this_major_should;
SELECT (SELECT array_agg(k ORDER BY k) FROM v_g WHERE k = ANY('{3, 30000, 59997}'))
	 = (SELECT array_agg(k ORDER BY k) FROM v_b WHERE k = ANY('{3, 30000, 59997}')) AS same_rows;
RESET enable_seqscan;

-- ordered scans both ways, and the planner's correlation for the index
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM v_g ORDER BY k DESC LIMIT 3;
SELECT k FROM v_g ORDER BY k DESC LIMIT 3;
SELECT k FROM v_g WHERE k > 59990 ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- end of statement: the batch of a statement inside an open transaction
CREATE TABLE w_g (k int8);
CREATE INDEX w_g_idx ON w_g USING gbtree (k);
SELECT pg_relation_size('w_g_idx') AS empty_size \gset
BEGIN;
INSERT INTO w_g SELECT g FROM generate_series(1, 50000) g;
-- pg_relation_size reads no table, so it flushes nothing itself
SELECT CASE WHEN current_setting('server_version_num')::int >= 170000
			THEN pg_relation_size('w_g_idx') > :empty_size
			ELSE pg_relation_size('w_g_idx') = :empty_size
	   END AS flushed_as_this_major_should;
COMMIT;
SELECT pg_relation_size('w_g_idx') > :empty_size AS flushed_by_commit;
SET enable_seqscan = off;
SELECT count(*), sum(k) FROM w_g WHERE k > 0;
RESET enable_seqscan;

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA t19 CASCADE;
