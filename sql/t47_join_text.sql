--
-- t47_join_text: Custom Scan (GbtreeJoin) on a text index (join.c): the
-- outer keys are encoded as the index stores them, sorted by words and
-- then by value, and looked up with one = ANY scan a batch.  A value
-- longer than the key's field shares its words with every value of the
-- same first bytes, so an entry is paired with the batch's value its heap
-- row holds, and stands for its value alone (an index-only pair, or a
-- semi or anti join's one match) only where no other value of the batch
-- has its words.
--
-- Every query runs twice: on the gbtree twin with the core's join methods
-- disabled (so GbtreeJoin is the plan, which inner and semi joins check),
-- and on the btree twin with the planner's own choice.  The two results
-- must be the same multiset of rows.  Left and anti joins are compared
-- only: from PostgreSQL 16 the core plans some of them (src/README,
-- "Joining in batches").  Inner, left, semi and anti joins; NULL keys on
-- both sides; empty strings; heavy duplicates; values that differ only
-- after a long common prefix (past the key's field: tails); bytes above
-- 0x7F; an index fitted to short values, then given long ones; a DESC
-- NULLS FIRST index; a varchar column; a clause of another collation (not
-- taken); batches of a few rows; a rescan; parallel workers; rows deleted,
-- updated and inserted by the joining transaction.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t47;
SET search_path = t47, public;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET statement_timeout = '120s';

-- inner twins: NULLs, '', duplicates, values of 40 equal bytes and then a
-- number (words tie, tails differ), prefixes of each other, high bytes
CREATE TABLE tg (id int4, k text COLLATE "C", v int4, pad text);
INSERT INTO tg SELECT g, CASE WHEN g % 53 = 0 THEN NULL
							  WHEN g % 29 = 0 THEN ''
							  WHEN g % 7 = 0 THEN repeat('p', 40) || (g % 60)
							  WHEN g % 11 = 0 THEN repeat('q', 31 + g % 4)
							  WHEN g % 13 = 0 THEN chr(255) || (g % 100)
							  ELSE 'k' || (g % 3000) END,
	   g % 97, 'p' || g
FROM generate_series(1, 20000) g;
CREATE TABLE tb AS SELECT * FROM tg;
CREATE INDEX tg_k ON tg USING gbtree (k);
CREATE INDEX tb_k ON tb (k);
-- the same rows under a DESC NULLS FIRST index
CREATE TABLE dg AS SELECT * FROM tg;
CREATE TABLE db AS SELECT * FROM tg;
CREATE INDEX dg_k ON dg USING gbtree (k DESC NULLS FIRST);
CREATE INDEX db_k ON db (k DESC NULLS FIRST);
-- short values only when built (the index fits its words to them), long
-- ones inserted after; and a varchar column
CREATE TABLE fg (id int4, k varchar COLLATE "C", v int4);
INSERT INTO fg SELECT g, CASE WHEN g % 41 = 0 THEN NULL ELSE 'k' || (g % 3000) END, g % 97
FROM generate_series(1, 15000) g;
CREATE TABLE fb AS SELECT * FROM fg;
CREATE INDEX fg_k ON fg USING gbtree (k);
CREATE INDEX fb_k ON fb (k);
INSERT INTO fg SELECT 20000 + g, repeat('k', 30) || (g % 70), g FROM generate_series(1, 700) g;
INSERT INTO fb SELECT 20000 + g, repeat('k', 30) || (g % 70), g FROM generate_series(1, 700) g;

-- outer side: NULLs, '', duplicates, keys with no match, long values that
-- share their first 40 bytes with the inner ones (some with no match)
CREATE TABLE o (id int4, x text COLLATE "C", y int4);
INSERT INTO o SELECT g, CASE WHEN g % 31 = 0 THEN NULL
							 WHEN g % 23 = 0 THEN ''
							 WHEN g % 5 = 0 THEN repeat('p', 40) || (g % 70)
							 WHEN g % 9 = 0 THEN repeat('q', 30 + g % 6)
							 WHEN g % 19 = 0 THEN chr(255) || (g % 120)
							 WHEN g % 17 = 0 THEN repeat('k', 30) || (g % 80)
							 ELSE 'k' || ((g * 13) % 4000) END,
	   g % 11
FROM generate_series(1, 3000) g;
INSERT INTO o VALUES (3001, 'k7', 0), (3002, repeat('p', 40), 0), (3003, NULL, 0),
	(3004, repeat('p', 41), 0), (3005, repeat('p', 40) || '7', 0);
VACUUM ANALYZE tg, tb, dg, db, fg, fb, o;

\getenv abs_srcdir PG_ABS_SRCDIR
\set join_twins :abs_srcdir '/sql/helpers/join_twins.sql'
\i :join_twins
-- jq(q): tw_join with @ standing for 'tg' / 'tb', ^ for 'dg' / 'db' (the
-- DESC index), ! for 'fg' / 'fb' (the fitted varchar index)
CREATE FUNCTION jq(q text, OUT nrows bigint, OUT gbtree_join boolean, OUT same boolean)
LANGUAGE sql AS $f$
SELECT * FROM tw_join(replace(replace(q, '^', '@'), '!', '@'),
					  CASE WHEN q LIKE '%^%' THEN 'dg' WHEN q LIKE '%!%' THEN 'fg' ELSE 'tg' END,
					  CASE WHEN q LIKE '%^%' THEN 'db' WHEN q LIKE '%!%' THEN 'fb' ELSE 'tb' END)
$f$;
-- jc(q): jq for left and anti joins, without the plan
CREATE FUNCTION jc(q text, OUT nrows bigint, OUT same boolean)
LANGUAGE sql AS $f$ SELECT nrows, same FROM jq(q) $f$;

-- inner joins: heap columns, join filters, the inner table's quals, an
-- expression as the outer key, the DESC index, the fitted varchar index
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k, i.pad FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON o.x = i.k');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x AND i.v < o.y * 9');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x WHERE i.v % 3 = 0');
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = repeat(''p'', 40) || (o.id % 80)');
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k FROM o JOIN ^ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.k FROM o JOIN ! i ON i.k = o.x');
SELECT * FROM jq('SELECT o.x, count(*) AS n, sum(i.v) AS s FROM o JOIN @ i ON i.k = o.x GROUP BY o.x');
-- the inner key alone: given from the index where the heap block is all
-- visible and no other value of the batch has the entry's words, fetched
-- otherwise
SELECT * FROM jq('SELECT o.id, i.k FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.k FROM o JOIN ^ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.k FROM o JOIN ! i ON i.k = o.x');
-- semi joins
SELECT * FROM jq('SELECT o.id FROM o WHERE o.x IN (SELECT k FROM @)');
SELECT * FROM jq('SELECT o.id FROM o WHERE EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x AND i.v > 40)');
SELECT * FROM jq('SELECT o.id FROM o WHERE o.x IN (SELECT k FROM !)');
SELECT * FROM jq('SELECT o.id FROM o WHERE o.x IN (SELECT k FROM ^ WHERE v < 20)');
-- left and anti joins
SELECT * FROM jc('SELECT o.id, i.id AS iid, i.pad FROM o LEFT JOIN @ i ON i.k = o.x');
SELECT * FROM jc('SELECT o.id, i.id AS iid FROM o LEFT JOIN ^ i ON i.k = o.x AND i.v > 50');
SELECT * FROM jc('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x)');
SELECT * FROM jc('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM ^ i WHERE i.k = o.x)');
SELECT * FROM jc('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM ! i WHERE i.k = o.x AND i.v < 60)');
-- the outer side gives its key alone
SELECT * FROM jq('SELECT i.id FROM (SELECT x FROM o) s JOIN @ i ON i.k = s.x');
SELECT * FROM jc('SELECT s.x FROM (SELECT x FROM o) s WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = s.x)');
-- a clause under another collation than the index's: not GbtreeJoin's
SELECT * FROM jc('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x COLLATE "POSIX"');
SELECT jq.gbtree_join FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x COLLATE "POSIX"');

-- batches of a few rows: keys of one distinct value across batches
SET gbtree.join_batch_size = 7;
SELECT * FROM jq('SELECT o.id, i.id AS iid FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jc('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM ^ i WHERE i.k = o.x)');
SET gbtree.join_batch_size = 1;
SELECT * FROM jc('SELECT o.id, i.k FROM o LEFT JOIN @ i ON i.k = o.x');
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
DELETE FROM tg WHERE id % 10 = 1;
DELETE FROM tb WHERE id % 10 = 1;
UPDATE tg SET v = v + 1 WHERE id % 10 = 2;
UPDATE tb SET v = v + 1 WHERE id % 10 = 2;
UPDATE tg SET k = k || 'x' WHERE id % 10 = 3;
UPDATE tb SET k = k || 'x' WHERE id % 10 = 3;
INSERT INTO tg SELECT 30000 + g, repeat('p', 40) || (g % 20), g, 'new' FROM generate_series(1, 500) g;
INSERT INTO tb SELECT 30000 + g, repeat('p', 40) || (g % 20), g, 'new' FROM generate_series(1, 500) g;
SELECT * FROM jq('SELECT o.id, i.id AS iid, i.v FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jq('SELECT o.id, i.k FROM o JOIN @ i ON i.k = o.x');
SELECT * FROM jc('SELECT o.id FROM o WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.k = o.x)');
ROLLBACK;

SELECT gbtree_check('tg_k', true), gbtree_check('dg_k', true), gbtree_check('fg_k', true);
DROP SCHEMA t47 CASCADE;
