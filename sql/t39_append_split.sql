--
-- batched inserts into multi-word indexes whose sorted runs go past a full
-- leaf's last entry (src/README, "Multi-word keys": append splits): a
-- COPY or INSERT into an empty index, keys above those present.  The run
-- goes to a new right page filled as a build fills its leaves (the
-- fillfactor), and the full leaf keeps its entries where they are, taking
-- only a new high key; so each page is logged once, as it is made, where
-- splits logged it whole when made and again when split (about 2.8 times
-- its size).  A run that falls among a full leaf's entries makes a merge
-- split: the leaf's entries and the run are cut in halves, both pages
-- written once (section 4).  Entries with tails, and runs that meet a page
-- with tails, go in as before.  Every query runs on the gbtree table and
-- on its btree twin under forced index, index-only and bitmap scans.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- uuid (two words), text (four words, built empty; one value in 53 past
-- them, with a tail), (int8, int8 DESC, int4) (three words); NULLs, empty
-- and duplicate strings, uuid and int8 min and max
CREATE TABLE apa (id int, u uuid, s text COLLATE "C", a int8, b int8, c int4);
CREATE TABLE apb (LIKE apa);
CREATE FUNCTION aprows(lo int, hi int) RETURNS SETOF apa
LANGUAGE sql AS $$
  SELECT g,
		 CASE g % 97 WHEN 0 THEN NULL
				WHEN 1 THEN '00000000-0000-0000-0000-000000000000'
				WHEN 2 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
				ELSE md5(g::text)::uuid END,
		 CASE g % 89 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'dup'
				ELSE CASE WHEN g % 53 = 0 THEN repeat(md5(g::text), 2)
						  ELSE substr(md5(g::text), 1, 10) || '@example.com' END END,
		 CASE g % 83 WHEN 0 THEN NULL WHEN 1 THEN -9223372036854775808
				WHEN 2 THEN 9223372036854775807 ELSE g % 50 END,
		 (g * 7919) % 100000,
		 g % 7
  FROM generate_series(lo, hi) g
$$;
SELECT tw_both('CREATE INDEX %1$I_u ON %1$I USING %2$s (u)', 'apa', 'apb');
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'apa', 'apb');
SELECT tw_both('CREATE INDEX %1$I_abc ON %1$I USING %2$s (a, b DESC, c)', 'apa', 'apb');

-- 1. Into the empty indexes, one batch.
INSERT INTO apa SELECT * FROM aprows(1, 30000);
INSERT INTO apb SELECT * FROM apa;
VACUUM ANALYZE apa, apb;
SELECT gbtree_check('apa_u', true), gbtree_check('apa_s', true), gbtree_check('apa_abc', true);
SELECT tw_diff('apa', 'apb', 'u', 'u = ''ffffffff-ffff-ffff-ffff-ffffffffffff''');
SELECT tw_diff('apa', 'apb', 'u', 'u = ''00000000-0000-0000-0000-000000000000''');
SELECT tw_diff('apa', 'apb', 'u', 'u BETWEEN ''7f000000-0000-0000-0000-000000000000'' AND ''81000000-0000-0000-0000-000000000000''');
SELECT tw_diff('apa', 'apb', 'u', 'u = ANY (SELECT md5(g::text)::uuid FROM generate_series(1, 30000, 37) g)', plans => false);
SELECT tw_diff('apa', 'apb', 'u', 'u IS NULL');
SELECT tw_diff('apa', 'apb', 's', 's = ''dup''');
SELECT tw_diff('apa', 'apb', 's', 's = ''''');
SELECT tw_diff('apa', 'apb', 's', 's BETWEEN ''3'' AND ''4''');
SELECT tw_diff('apa', 'apb', 's', 's = repeat(md5(''53''), 2) OR s = repeat(md5(''106''), 2)');
SELECT tw_diff('apa', 'apb', 's', 's > ''f''', 's', 500);
SELECT tw_diff('apa', 'apb', 'a, b, c', 'a = 7 AND b < 40000');
SELECT tw_diff('apa', 'apb', 'a, b, c', 'a = 9223372036854775807 OR a = -9223372036854775808', plans => false);
SELECT tw_diff('apa', 'apb', 'a, b, c', 'a IS NULL');
SELECT tw_diff('apa', 'apb', 'a, b, c', 'a > 45', 'a, b DESC, c', 700);
SELECT tw_order('apa', 'apb', 'u', 'u');
SELECT tw_order('apa', 'apb', 's', 's');
SELECT tw_order('apa', 'apb', 'a, b, c', 'a, b DESC, c');
-- filled as a build fills them: about as many pages as CREATE INDEX makes
CREATE INDEX apa_u2 ON apa USING gbtree (u);
CREATE INDEX apa_abc2 ON apa USING gbtree (a, b DESC, c);
SELECT pg_relation_size('apa_u') BETWEEN pg_relation_size('apa_u2') * 0.9
									 AND pg_relation_size('apa_u2') * 1.1 AS u_pages_as_built,
	   pg_relation_size('apa_abc') BETWEEN pg_relation_size('apa_abc2') * 0.9
									   AND pg_relation_size('apa_abc2') * 1.1 AS abc_pages_as_built;
DROP INDEX apa_u2, apa_abc2;

-- 2. Runs above the keys present (text and the first column), and a
-- transaction whose savepoint is rolled back (its entries dropped).
CREATE FUNCTION aprows_above(lo int, hi int) RETURNS SETOF apa
LANGUAGE sql AS $$
  SELECT g, md5(g::text)::uuid, 'zz' || lpad(g::text, 8, '0'), 1000 + g / 100, g, g % 7
  FROM generate_series(lo, hi) g
$$;
INSERT INTO apa SELECT * FROM aprows_above(30001, 42000);
INSERT INTO apb SELECT * FROM aprows_above(30001, 42000);
BEGIN;
INSERT INTO apa SELECT * FROM aprows_above(42001, 46000);
INSERT INTO apb SELECT * FROM aprows_above(42001, 46000);
SAVEPOINT s1;
INSERT INTO apa SELECT * FROM aprows_above(46001, 52000);
INSERT INTO apb SELECT * FROM aprows_above(46001, 52000);
SELECT tw_diff('apa', 'apb', 's', 's > ''zz00047''', 's', 300);
ROLLBACK TO s1;
INSERT INTO apa SELECT * FROM aprows(52001, 58000);
INSERT INTO apb SELECT * FROM aprows(52001, 58000);
COMMIT;
VACUUM ANALYZE apa, apb;
SELECT gbtree_check('apa_u', true), gbtree_check('apa_s', true), gbtree_check('apa_abc', true);
SELECT tw_diff('apa', 'apb', 's', 's > ''zz''', 's', 900);
SELECT tw_diff('apa', 'apb', 's', 's BETWEEN ''zz00041000'' AND ''zz00047000''');
SELECT tw_diff('apa', 'apb', 'u', 'u BETWEEN ''40000000-0000-0000-0000-000000000000'' AND ''42000000-0000-0000-0000-000000000000''');
SELECT tw_diff('apa', 'apb', 'a, b, c', 'a BETWEEN 1300 AND 1400');
SELECT tw_diff('apa', 'apb', 'a, b, c', 'a >= 1455', 'a DESC, b, c DESC', 500);
SELECT tw_order('apa', 'apb', 'u', 'u');
SELECT tw_order('apa', 'apb', 's', 's');
SELECT tw_order('apa', 'apb', 'a, b, c', 'a, b DESC, c');

-- 3. The WAL: the same rows into a table with gbtree indexes built empty
-- and into one without indexes; the difference, the indexes' WAL, stays
-- near their size (full_page_writes is off here: only the images the
-- records ask for count): generic WAL 1.08x, gbtree's own records (the
-- suites under a preloaded gbtree) 0.84x, where an append split that
-- logged its entries twice gave 1.60x.
CREATE TABLE apw (u uuid, s text COLLATE "C");
CREATE INDEX apw_u ON apw USING gbtree (u);
CREATE INDEX apw_s ON apw USING gbtree (s);
CREATE TABLE aph (u uuid, s text COLLATE "C");
SELECT pg_current_wal_insert_lsn() AS w0 \gset
INSERT INTO aph SELECT md5(g::text)::uuid, substr(md5(g::text), 1, 10) || '@example.com'
  FROM generate_series(1, 40000) g;
SELECT pg_current_wal_insert_lsn() AS w1 \gset
INSERT INTO apw SELECT md5(g::text)::uuid, substr(md5(g::text), 1, 10) || '@example.com'
  FROM generate_series(1, 40000) g;
SELECT pg_current_wal_insert_lsn() AS w2 \gset
SELECT (pg_wal_lsn_diff(:'w2', :'w1') - pg_wal_lsn_diff(:'w1', :'w0')) /
	   (pg_relation_size('apw_u') + pg_relation_size('apw_s')) < 1.3 AS index_wal_near_index_size;
SELECT gbtree_check('apw_u', true), gbtree_check('apw_s', true);

-- 4. Merge splits: as many random rows again into indexes of 30,000; a
-- full leaf and the batch's entries for it are cut in halves, each page
-- written once.  The indexes' WAL stays near their size (a split of the
-- leaf's entries and then one insert after another logged about twice
-- it), and they take about as many pages as CREATE INDEX of all the rows.
CREATE TABLE apm (u uuid, s text COLLATE "C");
CREATE TABLE apn (u uuid, s text COLLATE "C");
INSERT INTO apm SELECT md5(g::text)::uuid, substr(md5(g::text), 1, 10) || '@example.com'
  FROM generate_series(1, 30000) g;
INSERT INTO apn SELECT * FROM apm;
CREATE INDEX apm_u ON apm USING gbtree (u);
CREATE INDEX apm_s ON apm USING gbtree (s);
SELECT pg_current_wal_insert_lsn() AS w0 \gset
INSERT INTO apn SELECT md5(g::text)::uuid, substr(md5(g::text), 1, 10) || '@example.com'
  FROM generate_series(30001, 60000) g;
SELECT pg_current_wal_insert_lsn() AS w1 \gset
INSERT INTO apm SELECT md5(g::text)::uuid, substr(md5(g::text), 1, 10) || '@example.com'
  FROM generate_series(30001, 60000) g;
SELECT pg_current_wal_insert_lsn() AS w2 \gset
SELECT (pg_wal_lsn_diff(:'w2', :'w1') - pg_wal_lsn_diff(:'w1', :'w0')) /
	   (pg_relation_size('apm_u') + pg_relation_size('apm_s')) < 1.5 AS index_wal_near_index_size;
CREATE INDEX apn_u ON apn USING gbtree (u);
CREATE INDEX apn_s ON apn USING gbtree (s);
SELECT pg_relation_size('apm_u') + pg_relation_size('apm_s') <=
	   (pg_relation_size('apn_u') + pg_relation_size('apn_s')) * 1.12 AS pages_near_built;
SELECT gbtree_check('apm_u', true), gbtree_check('apm_s', true);
-- against apn read by a sequential scan
SELECT tw_diff('apm', 'apn', 'u', 'u BETWEEN ''30000000-0000-0000-0000-000000000000'' AND ''90000000-0000-0000-0000-000000000000''', plans => false);
SELECT tw_diff('apm', 'apn', 'u', 'u > ''f0000000-0000-0000-0000-000000000000''', 'u DESC', 300, plans => false);
SELECT tw_diff('apm', 'apn', 's', 's >= ''5'' AND s < ''9''', plans => false);
SELECT tw_diff('apm', 'apn', 's', 's > ''e''', 's', 400, plans => false);

-- 5. A run after the last entry of a leaf VACUUM thinned: (k, ts) with
-- 100 k's, the older half of every k's rows deleted and vacuumed, then as
-- many rows again, each k's after its last.  The leaf that holds a k's
-- last rows lost the next k's first ones, so it has room: it is filled to
-- the fill factor before a new page takes the rest.  An append split left
-- that room empty and put the run on a page of its own, whose last few
-- entries began yet another (424 pages against btree's 339; now 335).
CREATE TABLE apv (id int8, k int4, ts timestamptz);
CREATE TABLE apvb (LIKE apv);
INSERT INTO apv SELECT g, CASE WHEN g % 331 = 0 THEN NULL ELSE g % 100 END,
	'2024-01-01'::timestamptz + g * interval '1 second' FROM generate_series(1, 60000) g;
INSERT INTO apvb SELECT * FROM apv;
SELECT tw_both('CREATE INDEX %1$I_kt ON %1$I USING %2$s (k, ts)', 'apv', 'apvb');
DELETE FROM apv WHERE id <= 30000;
DELETE FROM apvb WHERE id <= 30000;
VACUUM apv, apvb;
INSERT INTO apv SELECT g, CASE WHEN g % 331 = 0 THEN NULL ELSE g % 100 END,
	'2024-01-01'::timestamptz + g * interval '1 second' FROM generate_series(60001, 90000) g;
INSERT INTO apvb SELECT * FROM apv WHERE id > 60000;
VACUUM ANALYZE apv, apvb;
SELECT gbtree_check('apv_kt', true);
SELECT pg_relation_size('apv_kt') <= pg_relation_size('apvb_kt') * 1.1 AS thinned_leaves_filled;
SELECT tw_diff('apv', 'apvb', 'id, k, ts', 'k = 42');
SELECT tw_diff('apv', 'apvb', 'k, ts', 'k BETWEEN 10 AND 20 AND ts > ''2024-01-01 12:00''');
SELECT tw_diff('apv', 'apvb', 'id, k, ts', 'k IS NULL');
SELECT tw_diff('apv', 'apvb', 'k, ts', 'k >= 97', 'k DESC, ts DESC', 500);
SELECT tw_order('apv', 'apvb', 'k, ts', 'k, ts');

DROP FUNCTION aprows(int, int), aprows_above(int, int);
DROP TABLE apa, apb, apw, aph, apm, apn, apv, apvb;
DROP FUNCTION tw_one(text), tw_both(text, text, text),
	tw_shape(text, text), tw_diff(text, text, text, text, text, int, boolean),
	tw_order(text, text, text, text);
