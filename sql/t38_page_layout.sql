--
-- multi-word pages of both layouts (src/README, "Multi-word keys"): pages
-- formatted now keep 16 directory entries a later word where they have at
-- most 16 blocks (GBT_F_DIRFIT), and so hold 224 slots a leaf at three
-- words and 176 at four; indexes built before kept 32 a word (208 and
-- 160 slots), and those pages are read and written as they are.  The
-- testing setting gbtree.dir32_pages formats pages the older way, so one
-- tree here holds pages of both layouts: built in one, grown by inserts
-- (splits) in the other.  Every query runs on the gbtree table and on its
-- btree twin under forced index, index-only and bitmap scans.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- five shapes: uuid (two words), text fitted to three words, (int8, int8,
-- int4) (three words), (int8, int8, int8) (four words), and text of 33 to
-- 97 bytes (four words and a tail: tailed pages, whose directories are
-- compact now too); NULLs in every column, heavy duplicates, type min
-- and max, uuid min and max
CREATE TABLE pla (id int, u uuid, s text COLLATE "C", a int8, b int8, c int4, d int8,
				  t text COLLATE "C");
CREATE TABLE plb (LIKE pla);
CREATE FUNCTION lrows(lo int, hi int) RETURNS SETOF pla
LANGUAGE sql AS $$
  SELECT g,
		 CASE g % 97 WHEN 0 THEN NULL
				WHEN 1 THEN '00000000-0000-0000-0000-000000000000'
				WHEN 2 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
				ELSE md5((g % 30000)::text)::uuid END,
		 CASE g % 89 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'dup'
				ELSE substr(md5(g::text), 1, 1 + g % 20) END,
		 CASE g % 83 WHEN 0 THEN NULL WHEN 1 THEN -9223372036854775808
				WHEN 2 THEN 9223372036854775807 ELSE g % 50 END,
		 CASE g % 79 WHEN 0 THEN NULL ELSE (g * 7919) % 100000 END,
		 CASE g % 73 WHEN 0 THEN NULL WHEN 1 THEN -2147483648
				WHEN 2 THEN 2147483647 ELSE g % 7 END,
		 CASE g % 71 WHEN 0 THEN NULL ELSE g END,
		 CASE g % 61 WHEN 0 THEN NULL
				ELSE repeat(md5((g % 5000)::text), 1 + g % 3) || g % 7 END
  FROM generate_series(lo, hi) g
$$;
INSERT INTO pla SELECT * FROM lrows(1, 20000);
INSERT INTO plb SELECT * FROM pla;

-- 1. Built in the older layout, then grown in the new one.
SET gbtree.dir32_pages = on;
SELECT tw_both('CREATE INDEX %1$I_u ON %1$I USING %2$s (u)', 'pla', 'plb');
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'pla', 'plb');
SELECT tw_both('CREATE INDEX %1$I_abc ON %1$I USING %2$s (a, b, c)', 'pla', 'plb');
SELECT tw_both('CREATE INDEX %1$I_dab ON %1$I USING %2$s (d NULLS FIRST, a DESC, b)', 'pla', 'plb');
SELECT tw_both('CREATE INDEX %1$I_t ON %1$I USING %2$s (t)', 'pla', 'plb');
RESET gbtree.dir32_pages;
-- the same indexes built in the new layout take fewer pages at three and
-- four words (and as many at two: 304 slots a leaf either way)
CREATE INDEX pla_u2 ON pla USING gbtree (u);
CREATE INDEX pla_s2 ON pla USING gbtree (s);
CREATE INDEX pla_abc2 ON pla USING gbtree (a, b, c);
CREATE INDEX pla_dab2 ON pla USING gbtree (d NULLS FIRST, a DESC, b);
CREATE INDEX pla_t2 ON pla USING gbtree (t);
SELECT x AS ix,
	   pg_relation_size(x || '2') < pg_relation_size(x) AS fewer_pages_now
FROM unnest(ARRAY['pla_s', 'pla_abc', 'pla_dab']) x;
-- tailed pages keep their slots (80 a leaf) and gain tail area, which
-- these tails of 1 to 67 bytes do not need
SELECT pg_relation_size('pla_t2') <= pg_relation_size('pla_t') AS tailed_no_more_pages;
SELECT pg_relation_size('pla_u2') = pg_relation_size('pla_u') AS uuid_same_pages;
DROP INDEX pla_u2, pla_s2, pla_abc2, pla_dab2, pla_t2;

-- inserts into pages of the older layout, splits into the new one
INSERT INTO pla SELECT * FROM lrows(20001, 50000);
INSERT INTO plb SELECT * FROM lrows(20001, 50000);
DELETE FROM pla WHERE id % 5 = 0;
DELETE FROM plb WHERE id % 5 = 0;
VACUUM ANALYZE pla, plb;
SELECT gbtree_check('pla_u', true), gbtree_check('pla_s', true),
	   gbtree_check('pla_abc', true), gbtree_check('pla_dab', true),
	   gbtree_check('pla_t', true);
SELECT tw_diff('pla', 'plb', 'u', 'u = ''ffffffff-ffff-ffff-ffff-ffffffffffff''');
SELECT tw_diff('pla', 'plb', 'u', 'u = ''00000000-0000-0000-0000-000000000000''');
SELECT tw_diff('pla', 'plb', 'u', 'u > ''80000000-0000-0000-0000-000000000000'' AND u < ''90000000-0000-0000-0000-000000000000''');
SELECT tw_diff('pla', 'plb', 'u', 'u = ANY (SELECT md5(g::text)::uuid FROM generate_series(1, 3000, 7) g)', plans => false);
SELECT tw_diff('pla', 'plb', 'u', 'u IS NULL');
SELECT tw_diff('pla', 'plb', 'u', 'u >= ''f0000000-0000-0000-0000-000000000000''', 'u DESC', 500);
SELECT tw_diff('pla', 'plb', 's', 's = ''dup''');
SELECT tw_diff('pla', 'plb', 's', 's = ''''');
SELECT tw_diff('pla', 'plb', 's', 's BETWEEN ''3'' AND ''5''');
SELECT tw_diff('pla', 'plb', 's', 's > ''e''', 's', 700);
SELECT tw_diff('pla', 'plb', 'a, b, c', 'a = 7', plans => false);
SELECT tw_diff('pla', 'plb', 'a, b, c', 'a = 9223372036854775807 OR a = -9223372036854775808', plans => false);
SELECT tw_diff('pla', 'plb', 'a, b, c', 'a = 3 AND b BETWEEN 1000 AND 60000');
SELECT tw_diff('pla', 'plb', 'a, b, c', 'a IS NULL AND b < 500');
SELECT tw_diff('pla', 'plb', 'a, b, c', 'a = ANY (ARRAY[1, 2, 40]) AND b > 90000', plans => false);
SELECT tw_diff('pla', 'plb', 'a, b, c', 'a > 45', 'a, b, c', 900);
SELECT tw_diff('pla', 'plb', 'd, a, b', 'd = 12346');
SELECT tw_diff('pla', 'plb', 'd, a, b', 'd BETWEEN 20000 AND 30000 AND a < 20');
SELECT tw_diff('pla', 'plb', 'd, a, b', 'd IS NULL');
SELECT tw_diff('pla', 'plb', 'd, a, b', 'd < 5000 OR d IS NULL', 'd NULLS FIRST, a DESC, b', 800);
SELECT tw_diff('pla', 'plb', 't', 't = repeat(md5(''77''), 3) || ''4''');
SELECT tw_diff('pla', 'plb', 't', 't BETWEEN ''4'' AND ''6''');
SELECT tw_diff('pla', 'plb', 't', 't > ''f''', 't', 400);
SELECT tw_order('pla', 'plb', 'u', 'u');
SELECT tw_order('pla', 'plb', 't', 't');
SELECT tw_order('pla', 'plb', 's', 's');
SELECT tw_order('pla', 'plb', 'a, b, c', 'a, b, c');
SELECT tw_order('pla', 'plb', 'd, a, b', 'd NULLS FIRST, a DESC, b');

-- 2. Built in the new layout, then grown with pages of the older one
-- (what a standby or a crash never makes, but the readers must not care
-- which layout a page has)
CREATE TABLE pma (LIKE pla);
CREATE TABLE pmb (LIKE pla);
INSERT INTO pma SELECT * FROM lrows(1, 20000);
INSERT INTO pmb SELECT * FROM pma;
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'pma', 'pmb');
SELECT tw_both('CREATE INDEX %1$I_abd ON %1$I USING %2$s (a, b, d)', 'pma', 'pmb');
SET gbtree.dir32_pages = on;
INSERT INTO pma SELECT * FROM lrows(20001, 45000);
INSERT INTO pmb SELECT * FROM lrows(20001, 45000);
RESET gbtree.dir32_pages;
INSERT INTO pma SELECT * FROM lrows(45001, 52000);
INSERT INTO pmb SELECT * FROM lrows(45001, 52000);
VACUUM ANALYZE pma, pmb;
SELECT gbtree_check('pma_s', true), gbtree_check('pma_abd', true);
SELECT tw_diff('pma', 'pmb', 's', 's < ''2''');
SELECT tw_diff('pma', 'pmb', 's', 's IS NULL');
SELECT tw_diff('pma', 'pmb', 'a, b, d', 'a = 17 AND b > 50000');
SELECT tw_diff('pma', 'pmb', 'a, b, d', 'a >= 48', 'a, b, d', 600);
SELECT tw_order('pma', 'pmb', 's', 's');
SELECT tw_order('pma', 'pmb', 'a, b, d', 'a, b, d');
-- a REINDEX formats every page anew
REINDEX INDEX pma_s;
SELECT gbtree_check('pma_s', true);
SELECT tw_diff('pma', 'pmb', 's', 's > ''c''', 's', 300);
DROP FUNCTION lrows(int, int);
DROP TABLE pla, plb, pma, pmb;
DROP FUNCTION tw_one(text), tw_both(text, text, text),
	tw_shape(text, text), tw_diff(text, text, text, text, text, int, boolean),
	tw_order(text, text, text, text);
