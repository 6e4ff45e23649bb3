--
-- t49_multiword_dedup: deduplication of multi-word keys (src/README,
-- "Deduplication"): where keys of several columns or a uuid repeat, a leaf
-- takes the posting form (node_wpost.c; node_post.c's for keys that fit
-- one word; text keys' entries without tails), each key's words once with its
-- TIDs, built by CREATE INDEX, taken by a full leaf of duplicates instead
-- of a split, kept through inserts, splits, deletes and VACUUM.  Every
-- table has a btree twin filled by the same statements (the same heap
-- TIDs), and every answer is compared with it under index, index-only and
-- bitmap plans and a sequential scan (tw_diff), and in index order both
-- ways (tw_order); the sizes against btree's (its own deduplication).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t49;
SET search_path = t49, public;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
-- deduplicate_items = auto (the default) is off while a GPU serves the
-- server, whose kernels do not read multi-word posting leaves: the
-- indexes here say on, and are answered on the CPU
SET gbtree.device = cpu;
\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins
\set join_twins :abs_srcdir '/sql/helpers/join_twins.sql'
\i :join_twins

-- (tenant, status) of 2,000 combinations over 100,000 rows, NULLs in either
-- column, the extremes; built after the load
CREATE TABLE pg (id int4, a int4, b int4, pad text);
CREATE TABLE pb (id int4, a int4, b int4, pad text);
INSERT INTO pg SELECT g, CASE WHEN g % 97 = 0 THEN NULL WHEN g % 89 = 0 THEN 2147483647
							  WHEN g % 83 = 0 THEN -2147483648 ELSE g % 400 END,
	   CASE WHEN g % 101 = 0 THEN NULL ELSE g % 5 END, 'p' || g
FROM generate_series(1, 100000) g;
INSERT INTO pb SELECT * FROM pg;
SELECT tw_both('CREATE INDEX %1$I_ab ON %1$I USING %2$s (a, b DESC NULLS FIRST) WITH (deduplicate_items = on)', 'pg', 'pb');
-- a uuid column of 10 rows a value, NULLs (the NULL tree deduplicates too)
CREATE TABLE ug (id int4, u uuid);
CREATE TABLE ub (id int4, u uuid);
INSERT INTO ug SELECT g, CASE WHEN g % 13 = 0 THEN NULL ELSE md5((g / 10)::text)::uuid END
FROM generate_series(1, 60000) g;
INSERT INTO ub SELECT * FROM ug;
SELECT tw_both('CREATE INDEX %1$I_u ON %1$I USING %2$s (u) WITH (deduplicate_items = on)', 'ug', 'ub');
-- a float8 key with -0 and 0 (equal keys, a TID flag apart), NaN and the
-- infinities, then an int2
CREATE TABLE fg (id int4, x float8, y int2);
CREATE TABLE fb (id int4, x float8, y int2);
INSERT INTO fg SELECT g, (ARRAY['-0', '0', 'NaN', 'Infinity', '-Infinity', '1.5', NULL])[1 + g % 7]::float8,
	   (g % 3)::int2
FROM generate_series(1, 40000) g;
INSERT INTO fb SELECT * FROM fg;
SELECT tw_both('CREATE INDEX %1$I_xy ON %1$I USING %2$s (x, y) WITH (deduplicate_items = on)', 'fg', 'fb');
-- keys of several columns that fit one word ((int2, date): 50 bits) have
-- one-word pages, whose posting form is node_post.c's: NULLs, the extremes,
-- infinity, DESC
CREATE TABLE sg (id int4, a int2, d date);
CREATE TABLE sb (id int4, a int2, d date);
INSERT INTO sg SELECT g, CASE WHEN g % 97 = 0 THEN NULL WHEN g % 89 = 0 THEN 32767
							  WHEN g % 83 = 0 THEN -32768 ELSE g % 30 END,
	   CASE WHEN g % 101 = 0 THEN NULL WHEN g % 103 = 0 THEN 'infinity'
			ELSE '2024-01-01'::date + g % 20 END
FROM generate_series(1, 100000) g;
INSERT INTO sb SELECT * FROM sg;
SELECT tw_both('CREATE INDEX %1$I_ad ON %1$I USING %2$s (a DESC, d) WITH (deduplicate_items = on)', 'sg', 'sb');
-- (int4, bool), one word too, made empty, then single rows, each inserted
-- as it comes (full plain leaves take the posting form, posting leaves
-- take rows in place), then batches
CREATE TABLE wg (id int4, k int4, f bool);
CREATE TABLE wb (id int4, k int4, f bool);
SELECT tw_both('CREATE INDEX %1$I_kf ON %1$I USING %2$s (k, f) WITH (deduplicate_items = on)', 'wg', 'wb');
SET gbtree.insert_batch_memory = 0;
DO $$
BEGIN
	FOR i IN 1..4000 LOOP
		INSERT INTO wg VALUES (i, i % 3, i % 7 = 0);
		INSERT INTO wb VALUES (i, i % 3, i % 7 = 0);
	END LOOP;
END $$;
RESET gbtree.insert_batch_memory;
INSERT INTO wg SELECT g, g % 50, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 2 = 0 END
FROM generate_series(4001, 100000) g;
INSERT INTO wb SELECT g, g % 50, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 2 = 0 END
FROM generate_series(4001, 100000) g;
-- text keys (C): a status column of few values, fitted to three words
-- (24 bytes) by the build; later values longer than that (tails) go into
-- plain leaves beside the posting ones, one at a time and in batches
CREATE TABLE tg (id int4, s text COLLATE "C");
CREATE TABLE tb (id int4, s text COLLATE "C");
INSERT INTO tg SELECT g, CASE WHEN g % 53 = 0 THEN NULL
	   ELSE (ARRAY['active', 'pending', 'closed', '', repeat('q', 24), 'pending' || repeat('x', 17)])[1 + g % 6] END
FROM generate_series(1, 60000) g;
INSERT INTO tb SELECT * FROM tg;
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s) WITH (deduplicate_items = on)', 'tg', 'tb');
-- an index made empty, then filled by inserts: single rows, batches (as
-- COPY's)
CREATE TABLE ig (id int4, k int8, t timestamptz);
CREATE TABLE ib (id int4, k int8, t timestamptz);
SELECT tw_both('CREATE INDEX %1$I_kt ON %1$I USING %2$s (k, t) WITH (deduplicate_items = on)', 'ig', 'ib');
DO $$
BEGIN
	FOR i IN 1..3000 LOOP
		INSERT INTO ig VALUES (i, i % 7, '2024-01-01 UTC');
		INSERT INTO ib VALUES (i, i % 7, '2024-01-01 UTC');
	END LOOP;
END $$;
INSERT INTO ig SELECT g, g % 40, '2024-01-01 UTC'::timestamptz + (g % 3) * interval '1 day'
FROM generate_series(3001, 120000) g;
INSERT INTO ib SELECT g, g % 40, '2024-01-01 UTC'::timestamptz + (g % 3) * interval '1 day'
FROM generate_series(3001, 120000) g;
INSERT INTO ig SELECT g, g % 40, '2024-01-02 UTC'::timestamptz FROM generate_series(120001, 150000) g;
INSERT INTO ib SELECT g, g % 40, '2024-01-02 UTC'::timestamptz FROM generate_series(120001, 150000) g;
-- the same rows, deduplicate_items off: the plain form
CREATE TABLE og (id int4, a int4, b int4, pad text);
INSERT INTO og SELECT * FROM pg;
CREATE INDEX og_ab ON og USING gbtree (a, b DESC NULLS FIRST) WITH (deduplicate_items = off);
VACUUM ANALYZE pg, pb, ug, ub, fg, fb, ig, ib, og, sg, sb, wg, wb, tg, tb;

-- sizes: no larger than btree's, where the plain form is several times
SELECT pg_relation_size('pg_ab') <= pg_relation_size('pb_ab') AS pg_le_btree,
	   pg_relation_size('ug_u') <= pg_relation_size('ub_u') AS ug_le_btree,
	   pg_relation_size('fg_xy') <= pg_relation_size('fb_xy') AS fg_le_btree,
	   pg_relation_size('ig_kt') <= pg_relation_size('ib_kt') AS ig_le_btree,
	   pg_relation_size('og_ab') > 2 * pg_relation_size('pg_ab') AS plain_larger,
	   pg_relation_size('sg_ad') <= pg_relation_size('sb_ad') AS sg_le_btree,
	   pg_relation_size('wg_kf') <= pg_relation_size('wb_kf') AS wg_le_btree,
	   pg_relation_size('tg_s') <= pg_relation_size('tb_s') AS tg_le_btree;

-- answers
SELECT tw_diff('pg', 'pb', 'id, a, b', 'a = 7', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'id, a, b', 'a = 7 AND b = 3', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'id, a, b', 'a BETWEEN 100 AND 120 AND b >= 2', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'id, a, b', 'a IS NULL', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'id, a, b', 'b IS NULL AND a < 50', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'id, a, b', 'a IN (2147483647, -2147483648, 5)', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'id, a, b', 'a = ANY(ARRAY[1, 3, 399, 400]) AND b = ANY(ARRAY[0, 4])', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'a, b', 'a = 9', 'a, b DESC NULLS FIRST', 700, false);
SELECT tw_diff('pg', 'pb', 'a, b', 'a > 390', 'a DESC, b NULLS LAST', 900, false);
SELECT tw_diff('ug', 'ub', 'id, u', 'u = md5(''77'')::uuid', NULL, NULL, false);
SELECT tw_diff('ug', 'ub', 'id, u', 'u IS NULL', NULL, NULL, false);
SELECT tw_diff('ug', 'ub', 'id, u', 'u > md5(''77'')::uuid', NULL, NULL, false);
SELECT tw_diff('fg', 'fb', 'id, x, y', 'x = 0', NULL, NULL, false);
SELECT tw_diff('fg', 'fb', 'id, x, y', 'x = ''NaN'' AND y = 1', NULL, NULL, false);
SELECT tw_diff('fg', 'fb', 'x::text, y', 'x <= 0', 'x, y', 5000, false);
SELECT tw_diff('ig', 'ib', 'id, k, t', 'k = 3', NULL, NULL, false);
SELECT tw_diff('ig', 'ib', 'id, k, t', 'k = 6 AND t = ''2024-01-01 UTC''', NULL, NULL, false);
SELECT tw_diff('ig', 'ib', 'id, k, t', 'k BETWEEN 10 AND 12', NULL, NULL, false);
SELECT tw_diff('sg', 'sb', 'id, a, d', 'a = 7', NULL, NULL, false);
SELECT tw_diff('sg', 'sb', 'id, a, d', 'a = 7 AND d BETWEEN ''2024-01-05'' AND ''2024-01-09''', NULL, NULL, false);
SELECT tw_diff('sg', 'sb', 'id, a, d', 'a IS NULL OR d IS NULL', NULL, NULL, false);
SELECT tw_diff('sg', 'sb', 'id, a, d', 'a IN (32767, -32768) AND d = ''infinity''', NULL, NULL, false);
SELECT tw_diff('sg', 'sb', 'id, a, d', 'a = ANY(ARRAY[1, 29, 30]) AND d > ''2024-01-15''', NULL, NULL, false);
SELECT tw_diff('sg', 'sb', 'a, d', 'a < 3', 'a DESC, d', 2500, false);
SELECT tw_diff('wg', 'wb', 'id, k, f', 'k = 1', NULL, NULL, false);
SELECT tw_diff('wg', 'wb', 'id, k, f', 'k = 2 AND f', NULL, NULL, false);
SELECT tw_diff('wg', 'wb', 'id, k, f', 'k BETWEEN 10 AND 12 AND f IS NULL', NULL, NULL, false);
SELECT tw_diff('tg', 'tb', 'id, s', 's = ''pending''', NULL, NULL, false);
SELECT tw_diff('tg', 'tb', 'id, s', 's = ANY(ARRAY['''', ''closed'', repeat(''q'', 24), repeat(''q'', 25)])', NULL, NULL, false);
SELECT tw_diff('tg', 'tb', 'id, s', 's > ''pending'' AND s < ''pendingy''', NULL, NULL, false);
SELECT tw_diff('tg', 'tb', 'id, s', 's IS NULL OR s < ''b''', NULL, NULL, false);
SELECT tw_order('pg', 'pb', 'a, b', 'a, b DESC NULLS FIRST') AS pg_asc,
	   tw_order('pg', 'pb', 'a, b', 'a DESC, b NULLS LAST') AS pg_desc,
	   tw_order('tg', 'tb', 's', 's DESC') AS tg_desc,
	   tw_order('sg', 'sb', 'a, d', 'a DESC, d') AS sg_asc,
	   tw_order('sg', 'sb', 'a, d', 'a, d DESC') AS sg_desc,
	   tw_order('wg', 'wb', 'k, f', 'k, f') AS wg_asc,
	   tw_order('ig', 'ib', 'k, t', 'k, t') AS ig_asc,
	   tw_order('ug', 'ub', 'u', 'u') AS ug_asc;
-- counted without rows, and joined on the leading column
SELECT (SELECT count(*) FROM pg WHERE a = ANY(ARRAY[1, 2, 3])) = (SELECT count(*) FROM pb WHERE a = ANY(ARRAY[1, 2, 3])) AS same_count;
SELECT * FROM tw_join('SELECT s.x, i.id AS iid FROM (SELECT g % 500 AS x FROM generate_series(1, 300) g) s JOIN @ i ON i.a = s.x', 'pg', 'pb');
SELECT * FROM tw_join('SELECT s.x, i.id AS iid FROM (SELECT g % 60 AS x FROM generate_series(1, 300) g) s JOIN @ i ON i.k = s.x', 'ig', 'ib');
SELECT * FROM tw_join('SELECT s.x, i.id AS iid FROM (SELECT g % 60 AS x FROM generate_series(1, 300) g) s JOIN @ i ON i.k = s.x', 'wg', 'wb');
SELECT * FROM tw_join('SELECT o.x, i.id AS iid FROM (VALUES (''pending''), (''''), (repeat(''q'', 24)), (''nope'')) o(x) JOIN @ i ON i.s = o.x', 'tg', 'tb');
-- a cursor moving both ways over leaves of one key's TIDs (the rows of
-- equal keys come in no set order: the keys are compared)
BEGIN;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
DECLARE cg SCROLL CURSOR FOR SELECT extract(epoch FROM t)::int FROM ig WHERE k BETWEEN 5 AND 6 ORDER BY k, t;
DECLARE cb SCROLL CURSOR FOR SELECT extract(epoch FROM t)::int FROM ib WHERE k BETWEEN 5 AND 6 ORDER BY k, t;
MOVE FORWARD 4500 IN cg; MOVE FORWARD 4500 IN cb;
CREATE FUNCTION back_same(n int) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	g refcursor := 'cg';
	b refcursor := 'cb';
	x int;
	y int;
BEGIN
	FOR i IN 1..n LOOP
		FETCH PRIOR FROM g INTO x;
		FETCH PRIOR FROM b INTO y;
		IF x IS DISTINCT FROM y THEN
			RETURN false;
		END IF;
	END LOOP;
	RETURN true;
END $$;
SELECT back_same(4400) AS same_backward;
COMMIT;

-- writes into posting leaves: inserts among the duplicates (splits of
-- posting leaves), deletes, VACUUM, inserts again
INSERT INTO pg SELECT 200000 + g, g % 400, g % 5, 'n' FROM generate_series(1, 40000) g;
INSERT INTO pb SELECT 200000 + g, g % 400, g % 5, 'n' FROM generate_series(1, 40000) g;
INSERT INTO ug SELECT 100000 + g, md5((g / 4)::text)::uuid FROM generate_series(1, 20000) g;
INSERT INTO ub SELECT 100000 + g, md5((g / 4)::text)::uuid FROM generate_series(1, 20000) g;
INSERT INTO fg SELECT 100000 + g, '-0'::float8, 1 FROM generate_series(1, 5000) g;
INSERT INTO fb SELECT 100000 + g, '-0'::float8, 1 FROM generate_series(1, 5000) g;
INSERT INTO sg SELECT 100000 + g, g % 30, '2024-01-01'::date + g % 20 FROM generate_series(1, 30000) g;
INSERT INTO sb SELECT 100000 + g, g % 30, '2024-01-01'::date + g % 20 FROM generate_series(1, 30000) g;
SET gbtree.insert_batch_memory = 0;
INSERT INTO wg SELECT 100000 + g, g % 50, g % 2 = 0 FROM generate_series(1, 3000) g;
INSERT INTO wb SELECT 100000 + g, g % 50, g % 2 = 0 FROM generate_series(1, 3000) g;
RESET gbtree.insert_batch_memory;
INSERT INTO tg SELECT 100000 + g, CASE g % 4 WHEN 0 THEN repeat('q', 24) || g % 5 WHEN 1 THEN 'pending' || repeat('x', 17) || 'tail' || g
	   WHEN 2 THEN repeat('q', 24) ELSE 'closed' END FROM generate_series(1, 20000) g;
INSERT INTO tb SELECT 100000 + g, CASE g % 4 WHEN 0 THEN repeat('q', 24) || g % 5 WHEN 1 THEN 'pending' || repeat('x', 17) || 'tail' || g
	   WHEN 2 THEN repeat('q', 24) ELSE 'closed' END FROM generate_series(1, 20000) g;
SET gbtree.insert_batch_memory = 0;
INSERT INTO tg SELECT 200000 + g, CASE WHEN g % 2 = 0 THEN repeat('q', 24) || '!' || g ELSE 'pending' || repeat('x', 17) || chr(1) END
FROM generate_series(1, 600) g;
INSERT INTO tb SELECT 200000 + g, CASE WHEN g % 2 = 0 THEN repeat('q', 24) || '!' || g ELSE 'pending' || repeat('x', 17) || chr(1) END
FROM generate_series(1, 600) g;
RESET gbtree.insert_batch_memory;
SELECT tw_diff('tg', 'tb', 'id, s', 's >= repeat(''q'', 24) AND s <= repeat(''q'', 24) || ''1''', NULL, NULL, false);
SELECT tw_diff('tg', 'tb', 'id, s', 's > repeat(''q'', 24)', NULL, NULL, false);
SELECT tw_diff('tg', 'tb', 'id, s', 's < ''pending'' || repeat(''x'', 17) || ''tail5''', NULL, NULL, false);
SELECT tw_diff('tg', 'tb', 'id, s', 's LIKE ''pendingx%''', NULL, NULL, false);
SELECT tw_order('tg', 'tb', 's', 's') AS tg_asc, tw_order('tg', 'tb', 's', 's DESC') AS tg_desc;
DELETE FROM tg WHERE id % 3 = 0; DELETE FROM tb WHERE id % 3 = 0;
DELETE FROM sg WHERE id % 3 = 0; DELETE FROM sb WHERE id % 3 = 0;
DELETE FROM wg WHERE id % 4 = 1; DELETE FROM wb WHERE id % 4 = 1;
DELETE FROM pg WHERE id % 3 = 0; DELETE FROM pb WHERE id % 3 = 0;
DELETE FROM ug WHERE id % 2 = 0; DELETE FROM ub WHERE id % 2 = 0;
DELETE FROM fg WHERE id % 5 = 0; DELETE FROM fb WHERE id % 5 = 0;
DELETE FROM ig WHERE k % 4 = 1; DELETE FROM ib WHERE k % 4 = 1;
VACUUM pg, pb, ug, ub, fg, fb, ig, ib, sg, sb, wg, wb, tg, tb;
INSERT INTO ig SELECT 300000 + g, g % 40, '2024-01-03 UTC' FROM generate_series(1, 30000) g;
INSERT INTO ib SELECT 300000 + g, g % 40, '2024-01-03 UTC' FROM generate_series(1, 30000) g;
VACUUM ANALYZE pg, pb, ug, ub, fg, fb, ig, ib, sg, sb, wg, wb, tg, tb;
SELECT tw_diff('tg', 'tb', 'id, s', 's = repeat(''q'', 24) OR s = ''pending''', NULL, NULL, false);
SELECT tw_diff('tg', 'tb', 'id, s', 's > ''pendingx''', NULL, NULL, false);
SELECT tw_diff('sg', 'sb', 'id, a, d', 'a = 7 OR a IS NULL', NULL, NULL, false);
SELECT tw_diff('wg', 'wb', 'id, k, f', 'k = 1 OR k = 33', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'id, a, b', 'a = 7', NULL, NULL, false);
SELECT tw_diff('pg', 'pb', 'id, a, b', 'a BETWEEN 100 AND 120 AND b >= 2', NULL, NULL, false);
SELECT tw_diff('ug', 'ub', 'id, u', 'u = md5(''77'')::uuid', NULL, NULL, false);
SELECT tw_diff('ug', 'ub', 'id, u', 'u < md5(''500'')::uuid', NULL, NULL, false);
SELECT tw_diff('fg', 'fb', 'id, x::text, y', 'x = 0', NULL, NULL, false);
SELECT tw_diff('ig', 'ib', 'id, k, t', 'k = 5 OR k = 9', NULL, NULL, false);
SELECT tw_order('pg', 'pb', 'a, b', 'a, b DESC NULLS FIRST') AS pg_asc,
	   tw_order('ig', 'ib', 'k, t', 'k DESC, t DESC') AS ig_desc,
	   tw_order('fg', 'fb', 'y', 'x, y') AS fg_asc,
	   tw_order('sg', 'sb', 'a, d', 'a DESC, d') AS sg_asc,
	   tw_order('wg', 'wb', 'k, f', 'k DESC, f DESC') AS wg_desc;
SELECT pg_relation_size('pg_ab') <= pg_relation_size('pb_ab') AS pg_le_btree,
	   pg_relation_size('ig_kt') <= pg_relation_size('ib_kt') AS ig_le_btree;
SELECT gbtree_check('pg_ab', true), gbtree_check('ug_u', true), gbtree_check('fg_xy', true),
	   gbtree_check('ig_kt', true), gbtree_check('og_ab', true), gbtree_check('sg_ad', true),
	   gbtree_check('wg_kf', true), gbtree_check('tg_s', true);
-- every row deleted: the leaves empty out and go
DELETE FROM ig; DELETE FROM ib;
VACUUM ig, ib;
SELECT count(*) FROM ig WHERE k = 3;
SELECT gbtree_check('ig_kt', true);
DROP SCHEMA t49 CASCADE;
