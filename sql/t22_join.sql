--
-- t22_join: Custom Scan (GbtreeJoin), the batched index nested-loop join,
-- against a btree twin.
--
-- Every query runs twice: on the gbtree twin with the core's join methods
-- disabled (so GbtreeJoin is the plan, which is checked), and on the
-- btree twin with the planner's own choice.  The two results must be the
-- same multiset of rows.  Inner, left, semi (IN, EXISTS) and anti (NOT
-- EXISTS) joins; NULL keys on both sides; heavy duplicates on both sides; type
-- extremes; NaN, -0 and infinities; cross-type keys; an expression as the
-- outer key; join filters and the inner table's own quals; batches of a
-- few rows; a rescan under a nested loop with a changing parameter;
-- parallel workers; rows deleted, updated (HOT and not) and inserted by the
-- joining transaction; and the plans that must not get it.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t22;
SET search_path = t22, public;
SET extra_float_digits = 1;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET statement_timeout = '120s';

-- inner twins: int8 keys with NULLs, duplicates (every 7th key 40 times),
-- the type's extremes
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

-- outer side: int4 keys (cross-type against int8), NULLs, duplicates,
-- keys with no match
CREATE TABLE o (id int4, x int4, y int8);
INSERT INTO o SELECT g, CASE WHEN g % 31 = 0 THEN NULL
							 WHEN g % 5 = 0 THEN 7
							 ELSE (g * 13) % 4000 - 200 END,
	   g % 11
FROM generate_series(1, 3000) g;
INSERT INTO o VALUES (3001, 0, 0), (3002, 2147483647, 0), (3003, -2147483648, 0);
INSERT INTO o SELECT 4000 + g, NULL, NULL FROM generate_series(1, 5) g;
CREATE TABLE o8 (id int4, x int8);
INSERT INTO o8 VALUES (1, 9223372036854775807), (2, -9223372036854775808),
	(3, 0), (4, NULL), (5, 9223372036854775806), (6, 7), (7, 7);

-- float twins: NaN, -0, infinities
CREATE TABLE fg (id int4, k float8);
INSERT INTO fg SELECT g, (ARRAY['NaN', '-0', '0', 'Infinity', '-Infinity',
								'1.5', '-1.5', NULL, '1e308', '-1e-308'])[1 + g % 10]::float8
FROM generate_series(1, 500) g;
CREATE TABLE fb AS SELECT * FROM fg;
CREATE INDEX fg_k ON fg USING gbtree (k);
CREATE INDEX fb_k ON fb (k);
CREATE TABLE ofl (id int4, x float8);
INSERT INTO ofl VALUES (1, 'NaN'), (2, '0'), (3, '-0'), (4, 'Infinity'),
	(5, '-Infinity'), (6, NULL), (7, 1.5), (8, 2.5), (9, '1e308');
CREATE TABLE of4 (id int4, x float4);
INSERT INTO of4 VALUES (1, 'NaN'), (2, '-0'), (3, 1.5), (4, 'Infinity'), (5, NULL);

-- timestamptz twins (# in jq): duplicates, NULLs, infinities
CREATE TABLE tsg (id int4, k timestamptz);
INSERT INTO tsg SELECT g, CASE WHEN g % 41 = 0 THEN NULL
							   WHEN g % 97 = 0 THEN 'infinity'
							   WHEN g % 89 = 0 THEN '-infinity'
							   ELSE '2024-01-01 UTC'::timestamptz + (g % 500) * interval '1 hour' END
FROM generate_series(1, 3000) g;
CREATE TABLE tsb AS SELECT * FROM tsg;
CREATE INDEX tsg_k ON tsg USING gbtree (k);
CREATE INDEX tsb_k ON tsb (k);
CREATE TABLE ots (x timestamptz, d date);
INSERT INTO ots SELECT CASE WHEN g % 13 = 0 THEN NULL
							WHEN g % 17 = 0 THEN 'infinity'
							ELSE '2024-01-01 UTC'::timestamptz + ((g * 7) % 700) * interval '1 hour' END,
	   CASE WHEN g % 19 = 0 THEN NULL ELSE '2024-01-01'::date + g % 40 END
FROM generate_series(1, 900) g;
CREATE TABLE dg (id int4, k date);
INSERT INTO dg SELECT g, CASE WHEN g % 29 = 0 THEN NULL ELSE '2024-01-01'::date + g % 30 END
FROM generate_series(1, 2000) g;
CREATE TABLE db AS SELECT * FROM dg;
CREATE INDEX dg_k ON dg USING gbtree (k);
CREATE INDEX db_k ON db (k);

VACUUM ANALYZE ig, ib, o, o8, fg, fb, ofl, of4, tsg, tsb, ots, dg, db;

--
-- jq(q): q with @ standing for the inner table ('ig' / 'ib'; with & for
-- 'fg' / 'fb', # for 'tsg' / 'tsb', ! for 'dg' / 'db').  Returns the row count, whether the gbtree run's plan is
-- GbtreeJoin, and whether both runs gave the same multiset of rows.
--
\getenv abs_srcdir PG_ABS_SRCDIR
\set join_twins :abs_srcdir '/sql/helpers/join_twins.sql'
\i :join_twins
CREATE FUNCTION jq(q text, OUT nrows bigint, OUT gbtree_join boolean, OUT same boolean)
LANGUAGE sql AS $f$
	SELECT * FROM tw_join_pair(
		replace(replace(replace(replace(q, '@', 'ig'), '&', 'fg'), '#', 'tsg'), '!', 'dg'),
		replace(replace(replace(replace(q, '@', 'ib'), '&', 'fb'), '#', 'tsb'), '!', 'db'))
$f$;

-- inner joins
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k, i.pad FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON o.x = i.k');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x AND i.v < o.y * 9');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x WHERE i.v % 3 = 0 AND i.pad LIKE ''p1%''');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x::int8 + 1');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.y');
SELECT * FROM jq('SELECT o8.id, i.id AS iid, i.pad FROM o8 JOIN @ i ON i.k = o8.x');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x WHERE o.id < 100');
SELECT * FROM jq('SELECT o.x, count(*) AS n, sum(i.v) AS s FROM o JOIN @ i ON i.k = o.x GROUP BY o.x');
-- semi joins
SELECT * FROM jq('SELECT o.* FROM o WHERE o.x IN (SELECT k FROM @)');
SELECT * FROM jq('SELECT o.* FROM o WHERE EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x AND i.v > o.y * 8)');
SELECT * FROM jq('SELECT o.* FROM o WHERE o.x IN (SELECT k FROM @ WHERE v = 5)');
SELECT * FROM jq('SELECT o8.* FROM o8 WHERE o8.x IN (SELECT k FROM @)');
-- anti joins: NULL outer keys come out
SELECT * FROM jq('SELECT o.* FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x)');
SELECT * FROM jq('SELECT o.* FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x AND i.v < 50)');
SELECT * FROM jq('SELECT o.* FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x AND i.v < o.y)');
SELECT * FROM jq('SELECT o8.* FROM o8 WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o8.x)');
-- left joins: unmatched and NULL-keyed outer rows come out with NULLs
-- (through GbtreeJoin on PostgreSQL 15; from 16 the core's plans, see
-- join.c; t22_join_1.out)
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k, i.pad FROM o LEFT JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o LEFT JOIN @ i ON i.k = o.x AND i.v < o.y * 9');
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.v FROM o LEFT JOIN @ i ON i.k = o.x WHERE i.v IS NULL OR i.v > 90');
SELECT * FROM jq('SELECT o.id, i.k FROM o LEFT JOIN (SELECT * FROM @ WHERE v % 2 = 0) i ON i.k = o.x');
SELECT * FROM jq('SELECT o8.id, i.id AS iid, i.k FROM o8 LEFT JOIN @ i ON i.k = o8.x');
SELECT * FROM jq('SELECT o.x, count(i.id) AS n FROM o LEFT JOIN @ i ON i.k = o.x GROUP BY o.x');
SELECT * FROM jq('SELECT ofl.id, i.id AS iid, i.k FROM ofl LEFT JOIN & i ON i.k = ofl.x');
-- floats: NaN = NaN, -0 = 0, infinities; float4 against float8
SELECT * FROM jq('SELECT ofl.id, i.id AS iid, i.k FROM ofl JOIN & i ON i.k = ofl.x');
SELECT * FROM jq('SELECT of4.id, i.id AS iid, i.k FROM of4 JOIN & i ON i.k = of4.x');
SELECT * FROM jq('SELECT ofl.* FROM ofl WHERE NOT EXISTS (SELECT 1 FROM & i WHERE i.k = ofl.x)');
SELECT * FROM jq('SELECT ofl.* FROM ofl WHERE ofl.x IN (SELECT k FROM &)');

-- the outer side gives its key alone (one column of an exact type): no
-- outer row is kept, each key's rows are its value, repeated
SELECT * FROM jq('SELECT o.x, i.id AS iid, i.v FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.x, count(*) AS n, sum(i.id) AS s FROM o JOIN @ i ON i.k = o.x GROUP BY o.x');
SELECT * FROM jq('SELECT o.x, i.id AS iid FROM o JOIN @ i ON i.k = o.x AND i.v < 40');
SELECT * FROM jq('SELECT o.x FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x)');
SELECT * FROM jq('SELECT o.x FROM o WHERE o.x IN (SELECT k FROM @ WHERE v < 30)');
SELECT * FROM jq('SELECT o.x, i.id AS iid FROM o LEFT JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o8.x, i.id AS iid, i.pad FROM o8 JOIN @ i ON i.k = o8.x');
SELECT * FROM jq('SELECT o.y, i.id AS iid FROM o JOIN @ i ON i.k = o.y');
SELECT * FROM jq('SELECT ots.x, i.id AS iid, i.k FROM ots JOIN # i ON i.k = ots.x');
SELECT * FROM jq('SELECT ots.x FROM ots WHERE NOT EXISTS (SELECT 1 FROM # i WHERE i.k = ots.x)');
SELECT * FROM jq('SELECT ots.d, i.id AS iid FROM ots JOIN ! i ON i.k = ots.d');
SELECT * FROM jq('SELECT ofl.x, i.id AS iid, i.k FROM ofl JOIN & i ON i.k = ofl.x');
SET gbtree.join_batch_size = 7;
SELECT * FROM jq('SELECT o.x, i.id AS iid, i.v FROM o JOIN @ i ON i.k = o.x');
RESET gbtree.join_batch_size;

-- batches of a few rows: keys of one batch, duplicates across batches
SET gbtree.join_batch_size = 3;
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.* FROM o WHERE o.x IN (SELECT k FROM @)');
SELECT * FROM jq('SELECT o.* FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x AND i.v < 50)');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o LEFT JOIN @ i ON i.k = o.x AND i.v < 50');
SET gbtree.join_batch_size = 1;
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x');
RESET gbtree.join_batch_size;

-- rescans: the join under a nested loop, its outer side filtered by the
-- loop's parameter
SELECT * FROM jq('SELECT n.n, s.c FROM generate_series(0, 4) n(n),
	LATERAL (SELECT count(*) AS c, sum(i.v) AS sv FROM o JOIN @ i ON i.k = o.x
			 WHERE o.id % 5 = n.n) s');
SELECT * FROM jq('SELECT n.n, (SELECT count(*) FROM o WHERE o.id % 5 = n.n AND NOT EXISTS
	(SELECT 1 FROM @ i WHERE i.k = o.x)) FROM generate_series(0, 4) n(n)');

-- parallel workers, each joining its share of the outer rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.* FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x)');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o LEFT JOIN @ i ON i.k = o.x');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- visibility: changes by the joining transaction itself, and rows it
-- must not see
BEGIN;
DELETE FROM ig WHERE id % 10 = 1;
DELETE FROM ib WHERE id % 10 = 1;
UPDATE ig SET v = v + 1 WHERE id % 10 = 2;			-- HOT
UPDATE ib SET v = v + 1 WHERE id % 10 = 2;
UPDATE ig SET k = k + 1 WHERE id % 10 = 3;			-- not HOT
UPDATE ib SET k = k + 1 WHERE id % 10 = 3;
INSERT INTO ig SELECT 30000 + g, g, 0, 'new' FROM generate_series(1, 300) g;
INSERT INTO ib SELECT 30000 + g, g, 0, 'new' FROM generate_series(1, 300) g;
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k, i.v FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.* FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x)');
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.v FROM o LEFT JOIN @ i ON i.k = o.x');
ROLLBACK;
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k, i.v FROM o JOIN @ i ON i.k = o.x');

-- a prepared statement: the parameter in a join filter
PREPARE pj(int) AS SELECT count(*), sum(i.v) FROM o JOIN ig i ON i.k = o.x AND i.v < $1;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXECUTE pj(10);
EXECUTE pj(50);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
SELECT count(*), sum(i.v) FROM o JOIN ib i ON i.k = o.x AND i.v < 10;
SELECT count(*), sum(i.v) FROM o JOIN ib i ON i.k = o.x AND i.v < 50;

-- no GbtreeJoin where EvalPlanQual could recheck a joined row, for
-- inner columns it cannot give, or with gbtree.enable_join off
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
CREATE FUNCTION has_join(q text) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF ln LIKE '%GbtreeJoin%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END
$f$;
SELECT has_join('SELECT o.id FROM o JOIN ig i ON i.k = o.x FOR UPDATE OF o');
SELECT has_join('UPDATE o SET y = y FROM ig i WHERE i.k = o.x');
SELECT has_join('DELETE FROM o USING ig i WHERE i.k = o.x');
SELECT has_join('SELECT o.id, i.ctid FROM o JOIN ig i ON i.k = o.x');
SELECT has_join('SELECT o.id, i FROM o JOIN ig i ON i.k = o.x');
SELECT has_join('SELECT o.id FROM o JOIN ig i ON i.k::numeric = o.x');
SELECT has_join('SELECT o.id FROM o FULL JOIN ig i ON i.k = o.x');
-- (a right join is a left join the other way round, and gets it)
SELECT has_join('SELECT o.id FROM ig i RIGHT JOIN o ON i.k = o.x');
SET gbtree.enable_join = off;
SELECT has_join('SELECT o.id FROM o JOIN ig i ON i.k = o.x');
RESET gbtree.enable_join;
SELECT has_join('SELECT o.id FROM o JOIN ig i ON i.k = o.x');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;

-- the same answers after an UPDATE through the btree plans
BEGIN;
UPDATE o SET y = y + 1 FROM ig i WHERE i.k = o.x AND i.v = 3;
SELECT * FROM jq('SELECT o.id, o.y, i.id AS iid FROM o JOIN @ i ON i.k = o.x');
ROLLBACK;

-- EXPLAIN ANALYZE shows the batches (the node's own lines; not the join
-- condition, whose operands some majors print the other way round)
CREATE FUNCTION join_counters(q text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
		IF ln ~ '^\s+(Join Type|Index Name|Join Filter|Batches|GPU Batches|Outer Rows|Lookup Keys|Index Entries|Heap Fetches|All-Visible Entries):' THEN
			RETURN NEXT btrim(ln);
		END IF;
	END LOOP;
END
$f$;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
SET gbtree.join_batch_size = 1000;
SET gbtree.device = cpu;
-- only the key: all-visible entries stand for their rows; the anti join's
-- filter needs another inner column, so it fetches them
VACUUM ig;
SELECT * FROM join_counters('SELECT count(*) FROM o JOIN ig i ON i.k = o.x');
SELECT * FROM join_counters('SELECT count(*) FROM o WHERE o.x IN (SELECT k FROM ig)');
SELECT * FROM join_counters('SELECT * FROM o WHERE NOT EXISTS (SELECT 1 FROM ig i WHERE i.k = o.x AND i.v < o.y)');

RESET ALL;
SET client_min_messages = warning;
DROP SCHEMA t22 CASCADE;
