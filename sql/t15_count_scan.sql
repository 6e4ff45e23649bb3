--
-- t15_count_scan: count(*) through Custom Scan (GbtreeCount), gbtree twin
-- vs btree twin vs a sequential scan.
--
-- The count scan counts the TIDs of the index scan per heap block: a block
-- the visibility map calls all visible counts whole, the others are
-- fetched and checked against the snapshot.  Every count here is compared
-- with the btree twin's and with a sequential scan's, on the nasty values
-- (NULL, NaN, -0, +-Infinity, type min / max, heavy duplicates), with
-- pages that are all visible, not all visible (deleted, updated, HOT and
-- not, rows deleted by the counting transaction itself), with parameters
-- of cached plans, rescans, subqueries, SERIALIZABLE, and the query shapes
-- that must not use it.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t15;
SET search_path = t15, public;
SET extra_float_digits = 1;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET statement_timeout = '60s';

-- plan node names, e.g. 'Custom Scan (GbtreeCount)' or 'Aggregate > Seq Scan'
CREATE FUNCTION shape_of(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
	res text := '';
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF ln !~ '^\s+[A-Z][A-Za-z ]*:' THEN
			res := res || CASE WHEN res = '' THEN '' ELSE ' > ' END ||
				regexp_replace(regexp_replace(ln, '^\s*(->\s*)?', ''), ' (using|on) .*$', '');
		END IF;
	END LOOP;
	RETURN res;
END
$f$;

--
-- cnt(base, pred): count(*) WHERE pred on the gbtree twin (whatever plan
-- the planner takes: the count scan where it can), on the btree twin, and
-- on the gbtree twin with a sequential scan.  ok when all three agree.
--
CREATE FUNCTION cnt(base text, pred text,
					OUT n bigint, OUT ok boolean, OUT plan text)
LANGUAGE plpgsql AS $f$
DECLARE
	q text := 'SELECT count(*) FROM %I WHERE ' || pred;
	ng bigint;
	nb bigint;
	ns bigint;
BEGIN
	plan := shape_of(format(q, base || '_g'));
	EXECUTE format(q, base || '_g') INTO ng;
	EXECUTE format(q, base || '_b') INTO nb;
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('gbtree.enable_count_scan', 'off', true);
	EXECUTE format(q, base || '_g') INTO ns;
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_indexonlyscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
	PERFORM set_config('gbtree.enable_count_scan', 'on', true);
	n := ng;
	ok := ng = nb AND nb = ns;
	IF NOT ok THEN
		plan := format('gbtree %s, btree %s, seq %s: ', ng, nb, ns) || plan;
	END IF;
END
$f$;

-- int8: heavy duplicates, NULLs, the type's extremes
CREATE TABLE i8_g (id int, k int8) WITH (autovacuum_enabled = off);
INSERT INTO i8_g
SELECT i, CASE WHEN i % 50 = 0 THEN NULL
			   WHEN i % 7 = 0 THEN 42
			   WHEN i % 101 = 0 THEN 9223372036854775807
			   WHEN i % 103 = 0 THEN -9223372036854775808
			   ELSE (i * 7919) % 20011 END
FROM generate_series(1, 60000) i;
CREATE TABLE i8_b AS SELECT * FROM i8_g;
ALTER TABLE i8_b SET (autovacuum_enabled = off);
CREATE INDEX i8_g_idx ON i8_g USING gbtree (k);
CREATE INDEX i8_b_idx ON i8_b USING btree (k);
VACUUM ANALYZE i8_g, i8_b;

-- float8: NaN, -0, +-Infinity
CREATE TABLE f8_g (id int, k float8) WITH (autovacuum_enabled = off);
INSERT INTO f8_g
SELECT i, CASE i % 9 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN '0'
					 WHEN 3 THEN 'Infinity' WHEN 4 THEN '-Infinity'
					 WHEN 5 THEN NULL ELSE (i % 997) / 7.0 END
FROM generate_series(1, 30000) i;
CREATE TABLE f8_b AS SELECT * FROM f8_g;
ALTER TABLE f8_b SET (autovacuum_enabled = off);
CREATE INDEX f8_g_idx ON f8_g USING gbtree (k DESC NULLS LAST);
CREATE INDEX f8_b_idx ON f8_b USING btree (k DESC NULLS LAST);
VACUUM ANALYZE f8_g, f8_b;

-- timestamptz: +-infinity
CREATE TABLE ts_g (id int, k timestamptz) WITH (autovacuum_enabled = off);
INSERT INTO ts_g
SELECT i, CASE i % 11 WHEN 0 THEN 'infinity' WHEN 1 THEN '-infinity' WHEN 2 THEN NULL
		  ELSE '2020-01-01'::timestamptz + (i % 500) * interval '1 hour' END
FROM generate_series(1, 30000) i;
CREATE TABLE ts_b AS SELECT * FROM ts_g;
ALTER TABLE ts_b SET (autovacuum_enabled = off);
CREATE INDEX ts_g_idx ON ts_g USING gbtree (k);
CREATE INDEX ts_b_idx ON ts_b USING btree (k);
VACUUM ANALYZE ts_g, ts_b;

CREATE TABLE preds (base text, pred text, n serial);
INSERT INTO preds (base, pred) VALUES
	('i8', 'k = 42'),
	('i8', 'k = 43'),
	('i8', '42 = k'),
	('i8', 'k = 42::int4'),
	('i8', 'k < 100'),
	('i8', '100 > k'),
	('i8', 'k >= 100 AND k < 5000'),
	('i8', 'k > 5000 AND k <= 5000'),
	('i8', 'k = 9223372036854775807'),
	('i8', 'k = -9223372036854775808'),
	('i8', 'k <= -9223372036854775808'),
	('i8', 'k > 9223372036854775806'),
	('i8', 'k IS NULL'),
	('i8', 'k IS NOT NULL'),
	('i8', 'k IS NULL AND k = 42'),
	('i8', 'k = ANY(''{42, 1, 2, 3, 42, 9223372036854775807, NULL}'')'),
	('i8', 'k = ANY(''{}''::int8[])'),
	('i8', 'k = ANY(NULL::int8[])'),
	('i8', 'k = ANY(ARRAY(SELECT g::int8 FROM generate_series(0, 20010, 3) g))'),
	('i8', 'k < ANY(''{5, 10}'')'),
	('i8', 'k = ANY(''{42, 7, 8}'') AND k > 7'),
	('i8', 'k IN (1, 2, 3) AND k = ANY(''{2, 3, 4}'')'),
	('f8', 'k = ''NaN'''),
	('f8', 'k = ''-0'''),
	('f8', 'k = 0'),
	('f8', 'k > 100'),
	('f8', 'k >= ''Infinity'''),
	('f8', 'k < ''-Infinity'''),
	('f8', 'k <= ''-Infinity'''),
	('f8', 'k < ''NaN'''),
	('f8', 'k IS NULL'),
	('f8', 'k = ANY(''{NaN, -0, Infinity, 3.5}'')'),
	('ts', 'k = ''infinity'''),
	('ts', 'k > ''2020-01-10'''),
	('ts', 'k < ''-infinity'''),
	('ts', 'k BETWEEN ''2020-01-02'' AND ''2020-01-03'''),
	('ts', 'k IS NOT NULL');

-- all visible
SELECT p.n, p.base, p.pred, c.* FROM preds p, cnt(p.base, p.pred) c ORDER BY p.n;

-- not all visible: deletes and updates (HOT and not) without VACUUM
DELETE FROM i8_g WHERE id % 3 = 0;
DELETE FROM i8_b WHERE id % 3 = 0;
UPDATE i8_g SET id = -id WHERE id % 5 = 0;	-- HOT where the page has room
UPDATE i8_b SET id = -id WHERE id % 5 = 0;
UPDATE i8_g SET k = k + 1 WHERE id % 11 = 0 AND k < 100000;
UPDATE i8_b SET k = k + 1 WHERE id % 11 = 0 AND k < 100000;
DELETE FROM f8_g WHERE id % 4 = 1;
DELETE FROM f8_b WHERE id % 4 = 1;
DELETE FROM ts_g WHERE id < 10000;
DELETE FROM ts_b WHERE id < 10000;
SELECT p.n, p.base, p.pred, c.* FROM preds p, cnt(p.base, p.pred) c ORDER BY p.n;

-- the counting transaction's own deletes and inserts, and a savepoint
BEGIN;
DELETE FROM i8_g WHERE k = 42 AND id % 2 = 0;
DELETE FROM i8_b WHERE k = 42 AND id % 2 = 0;
INSERT INTO i8_g SELECT -i, 42 FROM generate_series(1, 100) i;
INSERT INTO i8_b SELECT -i, 42 FROM generate_series(1, 100) i;
SAVEPOINT s;
DELETE FROM i8_g WHERE k < 100;
DELETE FROM i8_b WHERE k < 100;
ROLLBACK TO s;
SELECT p.n, p.base, p.pred, c.* FROM preds p, cnt(p.base, p.pred) c
WHERE p.base = 'i8' ORDER BY p.n;
COMMIT;

-- and after VACUUM, all visible again
VACUUM i8_g, i8_b, f8_g, f8_b, ts_g, ts_b;
SELECT p.n, p.base, p.pred, c.* FROM preds p, cnt(p.base, p.pred) c ORDER BY p.n;

-- what EXPLAIN shows (on the CPU path: a GPU batch this large for the
-- table reads the whole visibility map instead of counting blocks)
SET gbtree.device = cpu;
EXPLAIN (COSTS OFF) SELECT count(*) FROM i8_g WHERE k = ANY('{1,2,42}');
EXPLAIN (COSTS OFF, VERBOSE) SELECT count(*) AS c, count(*) + 1 FROM i8_g WHERE k > 5 AND 100 > k;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM i8_g WHERE k = ANY('{1,2,42}');
DELETE FROM i8_g WHERE k = 2;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM i8_g WHERE k = ANY('{1,2,42}');
DELETE FROM i8_b WHERE k = 2;
RESET gbtree.device;

-- cached generic plans: the parameters are scan keys evaluated per execution
SET plan_cache_mode = force_generic_plan;
PREPARE pg(int8[]) AS SELECT count(*) FROM i8_g WHERE k = ANY($1);
PREPARE pb(int8[]) AS SELECT count(*) FROM i8_b WHERE k = ANY($1);
PREPARE pr(int8, int8) AS SELECT count(*) FROM i8_g WHERE k >= $1 AND k < $2;
PREPARE prb(int8, int8) AS SELECT count(*) FROM i8_b WHERE k >= $1 AND k < $2;
EXPLAIN (COSTS OFF) EXECUTE pg('{1}');
EXECUTE pg('{42, 43, 44}');
EXECUTE pb('{42, 43, 44}');
EXECUTE pg(NULL);
EXECUTE pg('{}');
SELECT array_agg(g::int8) AS big FROM generate_series(0, 20010) g \gset
EXECUTE pg(:'big');
EXECUTE pb(:'big');
EXECUTE pr(100, 200);
EXECUTE prb(100, 200);
EXECUTE pr(NULL, 200);
EXECUTE pr(-9223372036854775808, 9223372036854775807);
EXECUTE prb(-9223372036854775808, 9223372036854775807);
RESET plan_cache_mode;

-- rescans (a correlated subquery) and subqueries (range table offsets)
SELECT count(*) AS keys, sum(g) = sum(b) AS same, sum(g) AS total FROM (
	SELECT (SELECT count(*) FROM i8_g WHERE k = x) AS g,
		   (SELECT count(*) FROM i8_b WHERE k = x) AS b
	FROM generate_series(0, 200) x) s;
EXPLAIN (COSTS OFF)
SELECT x, (SELECT count(*) FROM i8_g WHERE k = x) FROM generate_series(1, 3) x;
SELECT x, (SELECT count(*) FROM i8_g WHERE k = x) AS g,
	   (SELECT count(*) FROM i8_b WHERE k = x) AS b
FROM generate_series(40, 44) x;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT * FROM (SELECT count(*) FROM i8_g WHERE k < 10) a,
			  (SELECT count(*) FROM f8_g WHERE k = 'NaN') b;
SELECT * FROM (SELECT count(*) FROM i8_g WHERE k < 10) a,
			  (SELECT count(*) FROM f8_g WHERE k = 'NaN') b,
			  (SELECT count(*) FROM i8_b WHERE k < 10) c,
			  (SELECT count(*) FROM f8_b WHERE k = 'NaN') d;
WITH c AS (SELECT count(*) AS n FROM ts_g WHERE k > '2020-01-05')
SELECT n = (SELECT count(*) FROM ts_b WHERE k > '2020-01-05') AS same FROM c;
CREATE FUNCTION count_g(lo int8) RETURNS bigint LANGUAGE plpgsql AS $f$
BEGIN
	RETURN (SELECT count(*) FROM i8_g WHERE k >= lo);
END
$f$;
SELECT count_g(x) = (SELECT count(*) FROM i8_b WHERE k >= x) AS same
FROM (VALUES (0), (5000), (9223372036854775807)) v(x);

-- SERIALIZABLE: the count takes the predicate locks an index-only scan takes
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) FROM i8_g WHERE k BETWEEN 100 AND 110;
SELECT locktype, relation::regclass, page IS NOT NULL AS page_lock
FROM pg_locks WHERE mode = 'SIReadLock' AND pid = pg_backend_pid()
GROUP BY 1, 2, 3 ORDER BY 1, 2::text, 3;
COMMIT;

-- statistics: index tuples read, heap tuples fetched
UPDATE i8_g SET id = id WHERE k = 100;	-- k = 100's pages are no longer all visible
UPDATE i8_b SET id = id WHERE k = 100;
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE st0 AS
SELECT idx_scan, idx_tup_read, idx_tup_fetch FROM pg_stat_user_indexes WHERE indexrelname = 'i8_g_idx';
SELECT count(*) FROM i8_g WHERE k = 100;
SELECT count(*) FROM i8_g WHERE k = 101;
SELECT pg_stat_force_next_flush();
SELECT s.idx_scan - st0.idx_scan AS scans, s.idx_tup_read - st0.idx_tup_read AS tup_read,
	   s.idx_tup_fetch - st0.idx_tup_fetch AS fetched
FROM pg_stat_user_indexes s, st0 WHERE s.indexrelname = 'i8_g_idx';

-- shapes that are not a lone count(*) of gbtree index quals keep the
-- Aggregate (and still agree with btree)
CREATE FUNCTION agg_both(q text, OUT plan text, OUT same boolean) LANGUAGE plpgsql AS $f$
DECLARE
	rg text;
	rb text;
BEGIN
	plan := shape_of(format(q, 'i8_g'));
	EXECUTE format('SELECT array_agg(r::text ORDER BY r::text) FROM (%s) r', format(q, 'i8_g')) INTO rg;
	EXECUTE format('SELECT array_agg(r::text ORDER BY r::text) FROM (%s) r', format(q, 'i8_b')) INTO rb;
	same := rg IS NOT DISTINCT FROM rb;
END
$f$;
SET enable_seqscan = off;
SELECT q, b.* FROM (VALUES
	('SELECT count(*) FROM %I WHERE k < 100 GROUP BY k'),
	('SELECT count(k) FROM %I WHERE k < 100'),
	('SELECT count(*), sum(k) FROM %I WHERE k < 100'),
	('SELECT count(*) FILTER (WHERE k > 3) FROM %I WHERE k < 100'),
	('SELECT count(DISTINCT k) FROM %I WHERE k < 100'),
	('SELECT count(*) FROM %I WHERE k < 100 AND id > 0'),
	('SELECT count(*) FROM %I WHERE k < 100 OR k > 20000'),
	('SELECT count(*) FROM %I WHERE k < 100 HAVING count(*) > 0'),
	('SELECT count(*) FROM %I WHERE k + 0 < 100'),
	('SELECT count(*) FROM %I'),
	('SELECT count(*) FROM %I WHERE k < (random() * 0 + 100)::int8'),
	('SELECT count(*) FROM %I t WHERE k = (SELECT max(k) FROM %1$I WHERE k < 100)'),
	('SELECT count(*) FROM %I t, (VALUES (1)) v(x) WHERE k < 100'),
	('SELECT count(*) OVER () FROM %I WHERE k < 100 LIMIT 1')
) v(q), agg_both(v.q) b;
RESET enable_seqscan;

-- expression and partial indexes, and a second gbtree index: the count
-- scan takes only a plain single-column, non-partial gbtree index
CREATE TABLE ex_g (id int, k int8, j int8) WITH (autovacuum_enabled = off);
INSERT INTO ex_g SELECT i, i % 100, i % 7 FROM generate_series(1, 5000) i;
CREATE INDEX ex_g_expr ON ex_g USING gbtree ((k + 1));
CREATE INDEX ex_g_part ON ex_g USING gbtree (j) WHERE k < 50;
VACUUM ANALYZE ex_g;
SET enable_seqscan = off;
SELECT shape_of('SELECT count(*) FROM ex_g WHERE k + 1 = 5') AS expr,
	   shape_of('SELECT count(*) FROM ex_g WHERE j = 3 AND k < 50') AS partial;
SELECT (SELECT count(*) FROM ex_g WHERE k + 1 = 5) AS expr,
	   (SELECT count(*) FROM ex_g WHERE j = 3 AND k < 50) AS partial;
CREATE INDEX ex_g_j ON ex_g USING gbtree (j);
SELECT shape_of('SELECT count(*) FROM ex_g WHERE j = 3') AS plain,
	   (SELECT count(*) FROM ex_g WHERE j = 3) AS n;
-- row-level security: the policy's quals are not the index's to reorder
-- (as a role that does not bypass it)
ALTER TABLE ex_g ENABLE ROW LEVEL SECURITY;
CREATE POLICY ex_g_low ON ex_g USING (j < 5);
CREATE ROLE regress_t15_reader;
GRANT USAGE ON SCHEMA t15 TO regress_t15_reader;
GRANT SELECT ON ex_g TO regress_t15_reader;
GRANT EXECUTE ON FUNCTION shape_of(text) TO regress_t15_reader;
SET ROLE regress_t15_reader;
SELECT shape_of('SELECT count(*) FROM ex_g WHERE j >= 3') AS rls_plan,
	   (SELECT count(*) FROM ex_g WHERE j >= 3) AS n,
	   (SELECT count(*) FROM ex_g WHERE j >= 3 AND j < 5) AS expected;
RESET ROLE;
REVOKE ALL ON ex_g FROM regress_t15_reader;
REVOKE ALL ON SCHEMA t15 FROM regress_t15_reader;
REVOKE ALL ON FUNCTION shape_of(text) FROM regress_t15_reader;
DROP ROLE regress_t15_reader;
ALTER TABLE ex_g DISABLE ROW LEVEL SECURITY;
RESET enable_seqscan;

-- off switch
SET gbtree.enable_count_scan = off;
SELECT shape_of('SELECT count(*) FROM i8_g WHERE k = 42') AS off_plan;
RESET gbtree.enable_count_scan;

-- a scrollable cursor over the count
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT count(*) FROM i8_g WHERE k = 42;
FETCH c;
FETCH PRIOR c;
FETCH c;
COMMIT;

-- PostgreSQL's default parallel settings: the count scan must win over
-- an Aggregate above a (parallel) index-only scan for array keys, lists
-- and ranges, on a table large enough for parallel scans to be offered
RESET max_parallel_workers_per_gather;
CREATE TABLE par_g (id int, k int8) WITH (autovacuum_enabled = off);
INSERT INTO par_g SELECT i, hashint8extended(i, 3) % 1000000 FROM generate_series(1, 200000) i;
CREATE TABLE par_b (LIKE par_g) WITH (autovacuum_enabled = off);
INSERT INTO par_b SELECT * FROM par_g;
CREATE INDEX par_g_k ON par_g USING gbtree (k);
CREATE INDEX par_b_k ON par_b USING btree (k);
VACUUM ANALYZE par_g, par_b;
SELECT current_setting('max_parallel_workers_per_gather') AS workers,
	   pg_relation_size('par_g_k') >= pg_size_bytes(current_setting('min_parallel_index_scan_size')) AS index_big_enough,
	   pg_relation_size('par_g') >= pg_size_bytes(current_setting('min_parallel_table_scan_size')) AS table_big_enough;
SELECT 'keys ' || nkeys AS pred, c.*
FROM (VALUES (300), (20000)) v(nkeys),
	 LATERAL cnt('par', format('k = ANY (%L::int8[])',
			(SELECT array_agg(hashint8extended(i, 3) % 1000000)::text
			   FROM generate_series(1, nkeys * 7, 7) i))) c;
SELECT * FROM cnt('par', 'k IN (5, 17, 99, 1234, 77777, 424242, -999, -31337, 500000, 999999)');
SELECT * FROM cnt('par', 'k BETWEEN -500000 AND 500000');
SELECT * FROM cnt('par', 'k >= 990000 OR k IS NULL');

DROP SCHEMA t15 CASCADE;
