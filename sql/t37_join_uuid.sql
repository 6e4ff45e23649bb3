--
-- t37_join_uuid: Custom Scan (GbtreeJoin) on a uuid index, whose keys are
-- two words (join.c): the outer keys are encoded as the index stores them
-- (DESC inverted), sorted and looked up with one = ANY scan a batch, and
-- each entry is paired by its words with the batch's outer rows.
--
-- Every query runs twice: on the gbtree twin with the core's join methods
-- disabled (so GbtreeJoin is the plan, which is checked), and on the btree
-- twin with the planner's own choice.  The two results must be the same
-- multiset of rows.  Inner, left, semi and anti joins; NULL keys on both
-- sides; heavy duplicates on both sides; uuid's least and greatest values
-- and keys that differ in one word only; a DESC NULLS FIRST index; the
-- inner key alone (given from the index, its heap block all visible);
-- batches of a few rows; a rescan; parallel workers; rows deleted,
-- updated and inserted by the joining transaction.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t37;
SET search_path = t37, public;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET statement_timeout = '120s';

-- inner twins: NULLs, duplicates (every 7th row one of 40 keys), keys
-- equal in their first or their second word, the least and greatest uuid
CREATE TABLE ug (id int4, k uuid, v int4, pad text);
INSERT INTO ug SELECT g, CASE WHEN g % 53 = 0 THEN NULL
							  WHEN g % 7 = 0 THEN md5((g % 40)::text)::uuid
							  WHEN g % 11 = 0 THEN ('00000000-0000-0001-0000-' || lpad(to_hex(g), 12, '0'))::uuid
							  WHEN g % 13 = 0 THEN (lpad(to_hex(g), 8, '0') || '-0000-0000-ffff-ffffffffffff')::uuid
							  ELSE md5((g % 3000)::text)::uuid END,
	   g % 97, 'p' || g
FROM generate_series(1, 20000) g;
INSERT INTO ug VALUES (20001, 'ffffffff-ffff-ffff-ffff-ffffffffffff', 1, 'max'),
	(20002, '00000000-0000-0000-0000-000000000000', 2, 'min'), (20003, NULL, 3, 'null');
CREATE TABLE ub AS SELECT * FROM ug;
CREATE INDEX ug_k ON ug USING gbtree (k);
CREATE INDEX ub_k ON ub (k);
-- the same rows under a DESC NULLS FIRST index
CREATE TABLE dg AS SELECT * FROM ug;
CREATE TABLE db AS SELECT * FROM ug;
CREATE INDEX dg_k ON dg USING gbtree (k DESC NULLS FIRST);
CREATE INDEX db_k ON db (k DESC NULLS FIRST);

-- outer side: NULLs, duplicates, keys with no match, the extremes
CREATE TABLE o (id int4, x uuid, y int4);
INSERT INTO o SELECT g, CASE WHEN g % 31 = 0 THEN NULL
							 WHEN g % 5 = 0 THEN md5('7')::uuid
							 WHEN g % 9 = 0 THEN ('00000000-0000-0001-0000-' || lpad(to_hex(g * 11), 12, '0'))::uuid
							 ELSE md5(((g * 13) % 4000)::text)::uuid END,
	   g % 11
FROM generate_series(1, 3000) g;
INSERT INTO o VALUES (3001, 'ffffffff-ffff-ffff-ffff-ffffffffffff', 0),
	(3002, '00000000-0000-0000-0000-000000000000', 0), (3003, NULL, 0),
	(3004, 'ffffffff-ffff-ffff-ffff-fffffffffffe', 0);
VACUUM ANALYZE ug, ub, dg, db, o;

--
-- jq(q): q with @ standing for the inner table ('ug' / 'ub'; ^ for 'dg' /
-- 'db').  Returns the row count, whether the gbtree run's plan is
-- GbtreeJoin, and whether both runs gave the same multiset of rows.
--
\getenv abs_srcdir PG_ABS_SRCDIR
\set join_twins :abs_srcdir '/sql/helpers/join_twins.sql'
\i :join_twins
CREATE FUNCTION jq(q text, OUT nrows bigint, OUT gbtree_join boolean, OUT same boolean)
LANGUAGE sql AS $f$
	SELECT * FROM tw_join_pair(replace(replace(q, '@', 'ug'), '^', 'dg'),
							   replace(replace(q, '@', 'ub'), '^', 'db'))
$f$;

-- inner joins: heap columns, join filters, the inner table's quals, an
-- expression as the outer key, the DESC index
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k, i.pad FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON o.x = i.k');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x AND i.v < o.y * 9');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x WHERE i.v % 3 = 0');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = md5((o.id % 50)::text)::uuid');
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k FROM o JOIN ^ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.x, count(*) AS n, sum(i.v) AS s FROM o JOIN @ i ON i.k = o.x GROUP BY o.x');
-- the inner key alone: given from the index where the heap block is all
-- visible (the outer value of its key), fetched otherwise
SELECT * FROM jq('SELECT o.id, i.k FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.k FROM o JOIN ^ i ON i.k = o.x');
-- left, semi and anti joins (left joins through GbtreeJoin on PostgreSQL
-- 15 only, anti joins not on 17, where the core's plans take them, as in
-- t22: src/README, "Joining in batches"; t37_join_uuid_1.out, _2.out)
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.pad FROM o LEFT JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o LEFT JOIN ^ i ON i.k = o.x AND i.v > 50');
SELECT * FROM jq('SELECT o.id FROM o WHERE o.x IN (SELECT k FROM @)');
SELECT * FROM jq('SELECT o.id FROM o WHERE EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x AND i.v > 40)');
SELECT * FROM jq('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x)');
SELECT * FROM jq('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM ^ i WHERE i.k = o.x)');
-- the outer side gives its key alone
SELECT * FROM jq('SELECT i.id FROM (SELECT x FROM o) s JOIN @ i ON i.k = s.x');
SELECT * FROM jq('SELECT s.x FROM (SELECT x FROM o) s WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = s.x)');

-- batches of a few rows: keys of one distinct value across batches
SET gbtree.join_batch_size = 7;
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM ^ i WHERE i.k = o.x)');
SET gbtree.join_batch_size = 1;
SELECT * FROM jq('SELECT o.id, i.k FROM o LEFT JOIN @ i ON i.k = o.x');
RESET gbtree.join_batch_size;

-- a rescan under a nested loop with a changing parameter
SELECT * FROM jq('SELECT g, c, sv FROM generate_series(0, 10) g,
	LATERAL (SELECT count(*) AS c, sum(i.v) AS sv FROM o JOIN @ i ON i.k = o.x
			 WHERE o.y = g) s');

-- parallel workers, each joining its share of the outer rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- rows deleted, updated (HOT and not) and inserted by the joining
-- transaction: entries whose heap tuples are gone, changed or new
BEGIN;
DELETE FROM ug WHERE id % 10 = 1;
DELETE FROM ub WHERE id % 10 = 1;
UPDATE ug SET v = v + 1 WHERE id % 10 = 2;
UPDATE ub SET v = v + 1 WHERE id % 10 = 2;
UPDATE ug SET k = md5(k::text)::uuid WHERE id % 10 = 3;
UPDATE ub SET k = md5(k::text)::uuid WHERE id % 10 = 3;
INSERT INTO ug SELECT 30000 + g, md5((g % 20)::text)::uuid, g, 'new' FROM generate_series(1, 500) g;
INSERT INTO ub SELECT 30000 + g, md5((g % 20)::text)::uuid, g, 'new' FROM generate_series(1, 500) g;
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.v FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.k FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x)');
ROLLBACK;

SELECT gbtree_check('ug_k', true), gbtree_check('dg_k', true);
DROP SCHEMA t37 CASCADE;
