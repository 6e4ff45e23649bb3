--
-- t48_join_prefix: Custom Scan (GbtreeJoin) on the leading column of an
-- index of several columns, or with INCLUDE columns (join.c): the outer
-- keys become the first bits of the index's words (the leading column's
-- null bit and field, DESC inverted), an entry's words are cut to those
-- bits to find its key, and an outer value outside the column's type (an
-- int8 against an int4 column) equals no entry.  Leading columns of the
-- types whose equal keys are equal values: the integers, dates and
-- timestamps, uuid; a float or text leading column is not taken.
--
-- Every query runs on the gbtree twin with the core's join methods off
-- (GbtreeJoin where offered; inner and semi joins check it) and on the
-- btree twin under the planner's own plan (tw_join); the two must give the
-- same multiset of rows.  Left and anti joins are compared only: from
-- PostgreSQL 16 the core plans some of them.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t48;
SET search_path = t48, public;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET statement_timeout = '120s';
\getenv abs_srcdir PG_ABS_SRCDIR
\set join_twins :abs_srcdir '/sql/helpers/join_twins.sql'
\i :join_twins

-- (tenant, time) twins: NULL tenants, the type's extremes, a tenant of
-- thousands of rows, the time column NULL at times
CREATE TABLE cg (id int4, a int4, ts timestamptz, v int4, pad text);
INSERT INTO cg SELECT g, CASE WHEN g % 41 = 0 THEN NULL
							  WHEN g % 70 = 0 THEN 2147483647
							  WHEN g % 110 = 0 THEN -2147483648
							  WHEN g % 13 = 0 THEN 3
							  ELSE g % 500 END,
	   CASE WHEN g % 17 = 0 THEN NULL ELSE '2024-01-01 UTC'::timestamptz + g * interval '1 minute' END,
	   g % 97, 'p' || g
FROM generate_series(1, 20000) g;
CREATE TABLE cb AS SELECT * FROM cg;
CREATE INDEX cg_k ON cg USING gbtree (a, ts);
CREATE INDEX cb_k ON cb (a, ts);
-- a uuid leading DESC NULLS FIRST, then an int4
CREATE TABLE ug (id int4, a uuid, b int4);
INSERT INTO ug SELECT g, CASE WHEN g % 37 = 0 THEN NULL
							  WHEN g % 50 = 0 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
							  ELSE md5((g % 700)::text)::uuid END, g % 9
FROM generate_series(1, 8000) g;
CREATE TABLE ub AS SELECT * FROM ug;
CREATE INDEX ug_k ON ug USING gbtree (a DESC NULLS FIRST, b);
CREATE INDEX ub_k ON ub (a DESC NULLS FIRST, b);
-- an int8 key with INCLUDE columns
CREATE TABLE ig (id int4, a int8, c float8, d int4);
INSERT INTO ig SELECT g, CASE WHEN g % 29 = 0 THEN NULL ELSE (g % 900)::int8 * 1000000007 END, g / 7.0, g % 5
FROM generate_series(1, 10000) g;
CREATE TABLE ib AS SELECT * FROM ig;
CREATE INDEX ig_k ON ig USING gbtree (a) INCLUDE (c, d);
CREATE INDEX ib_k ON ib (a) INCLUDE (c, d);
-- an int2 leading DESC, then a date; and a unique (int4, int2)
CREATE TABLE sg (id int4, a int2, d date);
INSERT INTO sg SELECT g, CASE WHEN g % 23 = 0 THEN NULL WHEN g % 9 = 0 THEN 32767 ELSE g % 300 - 150 END,
	   '2024-01-01'::date + g % 50
FROM generate_series(1, 6000) g;
CREATE TABLE sb AS SELECT * FROM sg;
CREATE INDEX sg_k ON sg USING gbtree (a DESC, d);
CREATE INDEX sb_k ON sb (a DESC, d);
CREATE TABLE qg (id int4, a int4, b int2);
INSERT INTO qg SELECT g, g % 1500, g / 1500 FROM generate_series(1, 9000) g;
CREATE TABLE qb AS SELECT * FROM qg;
CREATE UNIQUE INDEX qg_k ON qg USING gbtree (a, b);
CREATE UNIQUE INDEX qb_k ON qb (a, b);
-- leading columns not taken: float8, text
CREATE TABLE fg (id int4, a float8, b int4);
INSERT INTO fg SELECT g, (g % 100) / 4.0, g FROM generate_series(1, 2000) g;
CREATE TABLE fb AS SELECT * FROM fg;
CREATE INDEX fg_k ON fg USING gbtree (a, b);
CREATE INDEX fb_k ON fb (a, b);
CREATE TABLE xg (id int4, a text COLLATE "C", b int4);
INSERT INTO xg SELECT g, 'k' || (g % 100), g FROM generate_series(1, 2000) g;
CREATE TABLE xb AS SELECT * FROM xg;
CREATE INDEX xg_k ON xg USING gbtree (a, b);
CREATE INDEX xb_k ON xb (a, b);

-- outer side: int8 (cross-type, some outside int4 and int2) and int4 keys,
-- NULLs, the extremes, keys with no match; uuids
CREATE TABLE o (id int4, x int8, y int4, u uuid, w int4);
INSERT INTO o SELECT g, CASE WHEN g % 31 = 0 THEN NULL
							 WHEN g % 19 = 0 THEN 2147483648
							 WHEN g % 23 = 0 THEN 2147483647
							 WHEN g % 29 = 0 THEN -2147483649
							 WHEN g % 5 = 0 THEN 3
							 ELSE (g * 13) % 700 - 100 END,
	   CASE WHEN g % 37 = 0 THEN NULL WHEN g % 43 = 0 THEN -2147483648 ELSE (g * 7) % 600 END,
	   CASE WHEN g % 11 = 0 THEN NULL WHEN g % 7 = 0 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
			ELSE md5(((g * 3) % 900)::text)::uuid END,
	   g % 11
FROM generate_series(1, 3000) g;
INSERT INTO o VALUES (3001, 32767, 32767, NULL, 0), (3002, 32768, -32769, NULL, 0),
	(3003, 899000000000 + 6293, 1, NULL, 0), (3004, 5000000035, 2, NULL, 0);
VACUUM ANALYZE cg, cb, ug, ub, ig, ib, sg, sb, qg, qb, fg, fb, xg, xb, o;

-- inner joins: cross-type and same-type keys, heap columns, join filters,
-- the inner table's quals, an expression as the outer key
SELECT * FROM tw_join('SELECT o.id, i.id AS iid, i.ts, i.pad FROM o JOIN @ i ON i.a = o.x', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid FROM o JOIN @ i ON o.y = i.a', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.a = o.y AND i.v < o.w * 9', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.a = o.x WHERE i.ts > ''2024-01-05''', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.a = o.id % 40', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid, i.b FROM o JOIN @ i ON i.a = o.u', 'ug', 'ub');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid, i.c, i.d FROM o JOIN @ i ON i.a = o.y::int8 * 1000000007', 'ig', 'ib');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid, i.d FROM o JOIN @ i ON i.a = o.x', 'sg', 'sb');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid, i.d FROM o JOIN @ i ON i.a = o.y', 'sg', 'sb');
SELECT * FROM tw_join('SELECT o.id, i.b FROM o JOIN @ i ON i.a = o.y', 'qg', 'qb');
SELECT * FROM tw_join('SELECT o.y, count(*) AS n, sum(i.v) AS s FROM o JOIN @ i ON i.a = o.y GROUP BY o.y', 'cg', 'cb');
-- the inner key alone: from the index where its block is all visible (the
-- outer value, of the column's type), else from the heap (cross-type)
SELECT * FROM tw_join('SELECT o.id, i.a FROM o JOIN @ i ON i.a = o.y', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id, i.a FROM o JOIN @ i ON i.a = o.x', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id, i.a FROM o JOIN @ i ON i.a = o.u', 'ug', 'ub');
SELECT * FROM tw_join('SELECT i.a FROM (SELECT y FROM o) s JOIN @ i ON i.a = s.y', 'cg', 'cb');
-- semi joins
SELECT * FROM tw_join('SELECT o.id FROM o WHERE o.x IN (SELECT a FROM @)', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id FROM o WHERE EXISTS (SELECT 1 FROM @ i WHERE i.a = o.y AND i.v > 40)', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id FROM o WHERE o.u IN (SELECT a FROM @ WHERE b < 4)', 'ug', 'ub');
SELECT * FROM tw_join('SELECT o.id FROM o WHERE o.x IN (SELECT a FROM @)', 'sg', 'sb');
-- left and anti joins
SELECT nrows, same FROM tw_join('SELECT o.id, i.id AS iid, i.pad FROM o LEFT JOIN @ i ON i.a = o.x', 'cg', 'cb');
SELECT nrows, same FROM tw_join('SELECT o.id, i.id AS iid FROM o LEFT JOIN @ i ON i.a = o.u AND i.b > 5', 'ug', 'ub');
SELECT nrows, same FROM tw_join('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.a = o.x)', 'cg', 'cb');
SELECT nrows, same FROM tw_join('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.a = o.x)', 'sg', 'sb');
SELECT nrows, same FROM tw_join('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.a = o.y::int8 * 1000000007)', 'ig', 'ib');
-- leading columns of a float or text: the core's plans
SELECT * FROM tw_join('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.a = o.x / 4.0', 'fg', 'fb');
SELECT * FROM tw_join('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.a = ''k'' || o.w', 'xg', 'xb');

-- batches of a few rows: one key's rows across batches
SET gbtree.join_batch_size = 7;
SELECT * FROM tw_join('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.a = o.x', 'cg', 'cb');
SELECT nrows, same FROM tw_join('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.a = o.u)', 'ug', 'ub');
RESET gbtree.join_batch_size;

-- parallel workers, each joining its share of the outer rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM tw_join('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.a = o.y', 'cg', 'cb');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- rows deleted, updated (HOT and not) and inserted by the joining
-- transaction
BEGIN;
DELETE FROM cg WHERE id % 10 = 1;
DELETE FROM cb WHERE id % 10 = 1;
UPDATE cg SET v = v + 1 WHERE id % 10 = 2;
UPDATE cb SET v = v + 1 WHERE id % 10 = 2;
UPDATE cg SET a = a + 1 WHERE id % 10 = 3 AND a < 2147483647;
UPDATE cb SET a = a + 1 WHERE id % 10 = 3 AND a < 2147483647;
INSERT INTO cg SELECT 30000 + g, g % 20, now(), g, 'new' FROM generate_series(1, 500) g;
INSERT INTO cb SELECT 30000 + g, g % 20, now(), g, 'new' FROM generate_series(1, 500) g;
SELECT * FROM tw_join('SELECT o.id, i.id AS iid, i.v FROM o JOIN @ i ON i.a = o.x', 'cg', 'cb');
SELECT * FROM tw_join('SELECT o.id, i.a FROM o JOIN @ i ON i.a = o.y', 'cg', 'cb');
SELECT nrows, same FROM tw_join('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.a = o.y)', 'cg', 'cb');
ROLLBACK;

SELECT gbtree_check('cg_k', true), gbtree_check('ug_k', true), gbtree_check('ig_k', true),
	gbtree_check('sg_k', true), gbtree_check('qg_k', true);
DROP SCHEMA t48 CASCADE;
