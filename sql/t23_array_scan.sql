--
-- t23_array_scan: Custom Scan (GbtreeArrayScan), the rows of
-- "column = ANY (array)" fetched in heap block order after one batched
-- lookup, against a btree twin.
--
-- Every query runs twice: on the gbtree twin with sequential scans off (so
-- GbtreeArrayScan is the plan, which is checked), and on the btree twin
-- with the planner's own choice.  The two results must be the same
-- multiset of rows.  NULL keys and NULL array elements; duplicates in the
-- table and in the array; type extremes; NaN, -0 and infinities; cross-type
-- arrays; other quals on the index column and on other columns; arrays from
-- parameters and subqueries; rescans with a changing array; parallel
-- workers sharing one lookup (with and without the leader); the
-- transaction's own deletes, updates and inserts; UPDATE and DELETE
-- through it (a concurrent update rechecked by EvalPlanQual is in
-- isolation/specs/gbtree-array-epq.spec); and where it is not offered.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t23;
SET search_path = t23, public;
SET extra_float_digits = 1;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

CREATE TABLE ig (id int4, k int8, v int4, pad text);
INSERT INTO ig SELECT g, CASE WHEN g % 53 = 0 THEN NULL
							  WHEN g % 7 = 0 THEN (g % 40) * 7
							  ELSE g % 3000 END,
	   g % 97, 'p' || g
FROM generate_series(1, 20000) g;
INSERT INTO ig VALUES (20001, 9223372036854775807, 1, 'max'),
	(20002, -9223372036854775808, 2, 'min'), (20003, 0, 3, 'zero'),
	(20004, NULL, 4, 'null');
CREATE TABLE ib AS SELECT * FROM ig;
CREATE INDEX ig_k ON ig USING gbtree (k);
CREATE INDEX ib_k ON ib (k);

CREATE TABLE fg (id int4, k float8);
INSERT INTO fg SELECT g, (ARRAY['NaN', '-0', '0', 'Infinity', '-Infinity',
								'1.5', '-1.5', NULL, '1e308', '-1e-308'])[1 + g % 10]::float8
FROM generate_series(1, 500) g;
CREATE TABLE fb AS SELECT * FROM fg;
CREATE INDEX fg_k ON fg USING gbtree (k);
CREATE INDEX fb_k ON fb (k);
VACUUM ANALYZE ig, ib, fg, fb;

--
-- aq(q): q with @ standing for the table ('ig' / 'ib'; & for 'fg' / 'fb').
-- Returns the row count, whether the gbtree run's plan has
-- GbtreeArrayScan, and whether both runs gave the same multiset of rows.
--
\getenv abs_srcdir PG_ABS_SRCDIR
\set join_twins :abs_srcdir '/sql/helpers/join_twins.sql'
\i :join_twins
CREATE FUNCTION aq(q text, OUT nrows bigint, OUT array_scan boolean, OUT same boolean)
LANGUAGE sql AS $f$
	SELECT * FROM tw_array_pair(replace(replace(q, '@', 'ig'), '&', 'fg'),
								replace(replace(q, '@', 'ib'), '&', 'fb'))
$f$;

-- the plan
EXPLAIN (COSTS OFF) SELECT id, v FROM ig WHERE k = ANY ('{1, 7, 14}') AND v > 3;
-- literal arrays: duplicates, NULL elements, keys with no row, extremes
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (''{1, 7, 14, 7, 2999, 5000, -1}'')');
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (ARRAY[0, NULL, 21, 9223372036854775807, -9223372036854775808])');
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (''{NULL}''::int8[])');
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (''{}''::int8[])');
SELECT * FROM aq('SELECT * FROM @ WHERE k IN (7, 14, 21, 28, 35, 42)');
SELECT * FROM aq('SELECT id, pad FROM @ WHERE k = ANY (ARRAY(SELECT g FROM generate_series(-50, 3100, 3) g))');
-- cross-type arrays, other index quals, filters on other columns
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (''{1, 7, 2147483647}''::int4[])');
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (''{7, 14, 77, 2000}''::int2[]) AND k > 10');
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (ARRAY(SELECT g FROM generate_series(1, 3000) g)) AND k < 1000 AND v % 5 = 1');
SELECT * FROM aq('SELECT k, count(*), sum(v) FROM @ WHERE k = ANY (ARRAY(SELECT g * 7 FROM generate_series(0, 50) g)) GROUP BY k');
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (''{1, 7}'') OR k IS NULL');
-- floats: NaN = NaN, -0 = 0, infinities; float4 elements
SELECT * FROM aq('SELECT * FROM & WHERE k = ANY (''{NaN, 0, Infinity}''::float8[])');
SELECT * FROM aq('SELECT * FROM & WHERE k = ANY (''{-0, -Infinity, 1.5, 2.5, 1e308}''::float8[])');
SELECT * FROM aq('SELECT * FROM & WHERE k = ANY (''{NaN, -0, 1.5}''::float4[])');
-- a rescan with a changing array (correlated subquery)
SELECT * FROM aq('SELECT g, (SELECT sum(v) FROM @ WHERE k = ANY (ARRAY[g, g * 7, g + 1000])) FROM generate_series(1, 60) g');
-- the array from a parameter: a prepared statement's generic plan
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;

PREPARE pg(int8[]) AS SELECT count(*), sum(v), min(pad) FROM ig WHERE k = ANY ($1);
PREPARE pb(int8[]) AS SELECT count(*), sum(v), min(pad) FROM ib WHERE k = ANY ($1);
EXPLAIN (COSTS OFF) EXECUTE pg('{1}');
EXECUTE pg('{1, 7, 14, 9223372036854775807}');
EXECUTE pb('{1, 7, 14, 9223372036854775807}');
EXECUTE pg(NULL);
EXECUTE pb(NULL);
RESET plan_cache_mode;

RESET enable_seqscan;

-- the transaction's own changes: deletes, HOT and non-HOT updates, inserts
BEGIN;
DELETE FROM ig WHERE k = 7 AND id % 2 = 0;
DELETE FROM ib WHERE k = 7 AND id % 2 = 0;
UPDATE ig SET v = v + 1000 WHERE k = 14;
UPDATE ib SET v = v + 1000 WHERE k = 14;
UPDATE ig SET k = 21 WHERE k = 28;
UPDATE ib SET k = 21 WHERE k = 28;
INSERT INTO ig VALUES (30001, 7, 7, 'new'), (30002, 28, 28, 'new');
INSERT INTO ib VALUES (30001, 7, 7, 'new'), (30002, 28, 28, 'new');
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (''{7, 14, 21, 28}'')');
ROLLBACK;

-- UPDATE and DELETE through it
BEGIN;
SET LOCAL enable_seqscan = off;

EXPLAIN (COSTS OFF) UPDATE ig SET v = -v WHERE k = ANY ('{35, 42}');
UPDATE ig SET v = -v WHERE k = ANY ('{35, 42}');
UPDATE ib SET v = -v WHERE k = ANY ('{35, 42}');
DELETE FROM ig WHERE k = ANY ('{49, 56}') AND v > 10;
DELETE FROM ib WHERE k = ANY ('{49, 56}') AND v > 10;
SELECT * FROM aq('SELECT * FROM @ WHERE k = ANY (''{35, 42, 49, 56}'')');
ROLLBACK;

-- parallel: one lookup shared by the participants
CREATE TABLE pg_t (id int4, k int8, v int4);
INSERT INTO pg_t SELECT g, g % 50000, g % 101 FROM generate_series(1, 200000) g;
CREATE TABLE pb_t AS SELECT * FROM pg_t;
CREATE INDEX pg_t_k ON pg_t USING gbtree (k);
CREATE INDEX pb_t_k ON pb_t (k);
VACUUM ANALYZE pg_t, pb_t;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET enable_seqscan = off;

-- a literal array, whose length the planner knows (a generic plan's
-- parameter or a subquery's array counts as 10 keys, too few to share)
SELECT array_agg(g * 3)::text AS arr FROM generate_series(1, 5000) g \gset
SELECT par_plan(format('SELECT count(*), sum(v) FROM pg_t WHERE k = ANY (%L::int8[])', :'arr'));
-- the workers' plan leaves the array out (the leader looks up); EXPLAIN
-- still shows it
CREATE FUNCTION par_cond(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
	cond text := 'no Index Cond';
	par bool := false;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF, VERBOSE) ' || q LOOP
		par := par OR ln LIKE '%Parallel Custom Scan (GbtreeArrayScan)%';
		IF ln LIKE '%Index Cond:%' THEN
			cond := substr(btrim(ln), 1, 50) || '... ' || length(ln);
		END IF;
	END LOOP;
	RETURN CASE WHEN par THEN cond ELSE 'not parallel' END;
END
$f$;
SELECT par_cond(format('SELECT count(*), sum(v) FROM pg_t WHERE k = ANY (%L::int8[])', :'arr'));
SELECT count(*), sum(v) FROM pg_t WHERE k = ANY (:'arr'::int8[]);
SET parallel_leader_participation = off;
SELECT count(*), sum(v) FROM pg_t WHERE k = ANY (:'arr'::int8[]);
RESET parallel_leader_participation;
SELECT par_plan(format('SELECT k, v FROM pg_t WHERE k = ANY (%L::int8[]) AND v %% 7 = 1', :'arr'));
SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM pg_t WHERE k = ANY (:'arr'::int8[]) AND v % 7 = 1) s;
RESET enable_seqscan;

SELECT count(*), sum(v) FROM pb_t WHERE k = ANY (:'arr'::int8[]);
SELECT count(*), sum(k), sum(v) FROM (SELECT k, v FROM pb_t WHERE k = ANY (:'arr'::int8[]) AND v % 7 = 1) s;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- not offered: no array, the array on a non-indexed column, off
SET enable_seqscan = off;

EXPLAIN (COSTS OFF) SELECT * FROM ig WHERE k = 7;
RESET enable_seqscan;
EXPLAIN (COSTS OFF) SELECT * FROM ig WHERE v = ANY ('{1, 2}');
SET enable_seqscan = off;
SET gbtree.enable_array_scan = off;
EXPLAIN (COSTS OFF) SELECT * FROM ig WHERE k = ANY ('{1, 2}');
RESET gbtree.enable_array_scan;
RESET enable_seqscan;

-- EXPLAIN ANALYZE counters: the rows of 3 keys, one of them deleted
CREATE FUNCTION counters(q text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF ln ~ '(Index Name|Index Entries|Heap Fetches|Heap Blocks):' THEN
			RETURN NEXT trim(ln);
		END IF;
	END LOOP;
END
$f$;
BEGIN;
DELETE FROM ig WHERE k = 1;
SET LOCAL enable_seqscan = off;

SELECT * FROM counters('SELECT * FROM ig WHERE k = ANY (''{1, 2, 3}'')');
ROLLBACK;

DROP SCHEMA t23 CASCADE;
