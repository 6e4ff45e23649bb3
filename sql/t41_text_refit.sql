--
-- An index made on an empty table takes the default four words (it has
-- seen no keys).  The first flush of a batch into it, while it is still
-- only its two root leaves, fits it as a build would (src/README, "Text
-- keys", fitting a new index): at least 10,000 rows with a text value and
-- no tail, the roots' entries counted too, give
-- the fewest words that hold every key whole (keywords in the metapage,
-- read with pageinspect).  Only where nobody else holds the old shape:
-- not inside a subtransaction, not while this backend has the index open
-- elsewhere (a cursor), not while another backend uses the index or has
-- written the table (the isolation spec gbtree-text-refit).  Every table
-- has a btree twin loaded by the same statements, compared under forced
-- index, index-only, bitmap and sequential scans.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE EXTENSION IF NOT EXISTS pageinspect;	-- needs: pageinspect
SET max_parallel_workers_per_gather = 0;
SET jit = off;

\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

CREATE FUNCTION fit_words(ix regclass) RETURNS int
LANGUAGE sql AS $$ SELECT get_byte(get_raw_page(ix::text, 0), 56) $$;

-- the rows every load below inserts: NULLs, empty strings, heavy
-- duplicates, 0x01 and 0xFF-led bytes, keys of up to 16 bytes
CREATE FUNCTION rows_short(n int) RETURNS TABLE (id int, s text)
LANGUAGE sql AS $$
  SELECT g, CASE g % 9
		   WHEN 0 THEN NULL
		   WHEN 1 THEN ''
		   WHEN 2 THEN 'dup'
		   WHEN 3 THEN lpad((g % 5000)::text, 16, '0')
		   WHEN 4 THEN chr(1) || g % 100
		   WHEN 5 THEN 'ÿ' || g % 1000
		   WHEN 6 THEN repeat('z', 16)
		   WHEN 7 THEN repeat('z', 15) || chr(33 + g % 90)
		   ELSE substr(md5(g::text), 1, 1 + g % 16)
		 END
  FROM generate_series(1, n) g $$;

-- 1. One text column, ASC and DESC NULLS FIRST: one INSERT ... SELECT of
-- 12,000 rows into the empty indexes fits both to two words
CREATE TABLE rfa (id int, s text COLLATE "C", r text COLLATE "C");
CREATE TABLE rfb (id int, s text COLLATE "C", r text COLLATE "C");
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'rfa', 'rfb');
SELECT tw_both('CREATE INDEX %1$I_d ON %1$I USING %2$s (r DESC NULLS FIRST)', 'rfa', 'rfb');
SELECT fit_words('rfa_s') AS before_s, fit_words('rfa_d') AS before_d;
INSERT INTO rfa SELECT id, s, reverse(s) FROM rows_short(12000);
INSERT INTO rfb SELECT id, s, reverse(s) FROM rows_short(12000);
SELECT fit_words('rfa_s') AS ra_s, fit_words('rfa_d') AS ra_d;
SELECT gbtree_check('rfa_s', true), gbtree_check('rfa_d', true);
VACUUM ANALYZE rfa, rfb;
-- a new backend takes the shape from the metapage
\c
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT tw_diff('rfa', 'rfb', 's', 's = ''dup''');
SELECT tw_diff('rfa', 'rfb', 's', 's = ''''');
SELECT tw_diff('rfa', 'rfb', 's', 's >= repeat(''z'', 15)');
SELECT tw_diff('rfa', 'rfb', 's', 's BETWEEN ''0000000000001000'' AND ''0000000000002000''');
SELECT tw_diff('rfa', 'rfb', 's', 's IS NULL');
SELECT tw_diff('rfa', 'rfb', 's', 's = ANY (ARRAY['''', ''dup'', repeat(''z'', 16), NULL, ''nope'', repeat(''z'', 17)])');
SELECT tw_diff('rfa', 'rfb', 's', 's > ''ÿ''');
SELECT tw_diff('rfa', 'rfb', 's', 's > ''dup''', 's DESC', 300);
SELECT tw_diff('rfa', 'rfb', 'r', 'r > ''1'' AND r < ''5''');
SELECT tw_diff('rfa', 'rfb', 'r', 'true', 'r DESC NULLS FIRST', 300);
SELECT tw_order('rfa', 'rfb', 's', 's');
SELECT tw_order('rfa', 'rfb', 'r', 'r DESC NULLS FIRST');
-- longer values come later: tails in the two-word index
SELECT tw_both('INSERT INTO %1$I (id, s, r) SELECT 100000 + g, x, reverse(x) FROM (SELECT g,
	CASE mod(g, 3) WHEN 0 THEN repeat(''z'', 16) || mod(g, 7)
	  WHEN 1 THEN lpad(mod(g, 5000)::text, 16, ''0'') || ''-'' || repeat(''t'', mod(g, 40))
	  ELSE md5(g::text) END AS x FROM generate_series(1, 3000) g) v', 'rfa', 'rfb');
VACUUM ANALYZE rfa, rfb;
SELECT gbtree_check('rfa_s', true), gbtree_check('rfa_d', true);
SELECT tw_diff('rfa', 'rfb', 's', 's > repeat(''z'', 16) AND s < repeat(''z'', 16) || ''5''');
SELECT tw_diff('rfa', 'rfb', 's', 's LIKE ''000000000000104%''');
SELECT tw_diff('rfa', 'rfb', 'r', 'r < ''5''', 'r DESC NULLS FIRST', 500);
SELECT tw_order('rfa', 'rfb', 's', 's');
SELECT tw_order('rfa', 'rfb', 'r', 'r DESC NULLS FIRST');

-- 2. (int4, text) and a text INCLUDE column, loaded together in one
-- transaction by two statements (the flush at COMMIT, or from PostgreSQL
-- 17 on at each statement's end, sees them)
CREATE TABLE rma (id int, t int4, s text COLLATE "C");
CREATE TABLE rmb (id int, t int4, s text COLLATE "C");
SELECT tw_both('CREATE INDEX %1$I_ts ON %1$I USING %2$s (t, s)', 'rma', 'rmb');
SELECT tw_both('CREATE INDEX %1$I_ti ON %1$I USING %2$s (t) INCLUDE (s)', 'rma', 'rmb');
BEGIN;
INSERT INTO rma SELECT g, CASE WHEN g % 17 = 0 THEN NULL ELSE g % 50 END,
	CASE g % 6 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN repeat('m', 11)
	  ELSE substr(md5(g::text), 1, 1 + g % 11) END
  FROM generate_series(1, 15000) g;
INSERT INTO rmb SELECT * FROM rma ORDER BY id;
COMMIT;
SELECT fit_words('rma_ts') AS ma_ts, fit_words('rma_ti') AS ma_ti;
VACUUM ANALYZE rma, rmb;
SELECT gbtree_check('rma_ts', true), gbtree_check('rma_ti', true);
SELECT tw_diff('rma', 'rmb', 't, s', 't = 7 AND s > ''8''');
SELECT tw_diff('rma', 'rmb', 't, s', 't IS NULL AND s IS NOT NULL');
SELECT tw_diff('rma', 'rmb', 't, s', 's = repeat(''m'', 11)');
SELECT tw_diff('rma', 'rmb', 't, s', 't > 45', 't, s', 300);
SELECT tw_diff('rma', 'rmb', 't, s', 't BETWEEN 3 AND 5');
SELECT tw_order('rma', 'rmb', 't, s', 't, s');

-- 3. No fitting:
-- (a) a key that needs a tail (longer than any fewer words hold)
CREATE TABLE na (id int, s text COLLATE "C");
CREATE INDEX na_s ON na USING gbtree (s);
INSERT INTO na SELECT id, s FROM rows_short(12000) UNION ALL SELECT 0, repeat('x', 40);
-- (b) fewer than 10,000 rows with a text value, however many NULLs
CREATE TABLE nb (id int, s text COLLATE "C");
CREATE INDEX nb_s ON nb USING gbtree (s);
INSERT INTO nb SELECT g, CASE WHEN g <= 9999 THEN 'v' || g END FROM generate_series(1, 20000) g;
-- (c) the flush comes inside a subtransaction
CREATE TABLE nc (id int, s text COLLATE "C");
CREATE INDEX nc_s ON nc USING gbtree (s);
BEGIN;
SAVEPOINT a;
INSERT INTO nc SELECT id, s FROM rows_short(12000);
SELECT count(*) FROM nc WHERE s = 'dup';
RELEASE a;
COMMIT;
-- (d) this backend has the index open in a cursor when the flush comes
CREATE TABLE nd (id int, s text COLLATE "C");
CREATE INDEX nd_s ON nd USING gbtree (s);
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
DECLARE c CURSOR FOR SELECT s FROM nd WHERE s > 'a' ORDER BY s;
INSERT INTO nd SELECT id, s FROM rows_short(12000);
SELECT count(*) FROM nd WHERE s = 'dup';
FETCH 3 FROM c;
COMMIT;
-- (e) the index has grown past its root leaves (600 rows went in before)
CREATE TABLE ne (id int, s text COLLATE "C");
CREATE INDEX ne_s ON ne USING gbtree (s);
INSERT INTO ne SELECT id, s FROM rows_short(600);
INSERT INTO ne SELECT id, s FROM rows_short(12000);
SELECT fit_words('na_s') AS na, fit_words('nb_s') AS nb, fit_words('nc_s') AS nc,
	fit_words('nd_s') AS nd, fit_words('ne_s') AS ne;
SELECT gbtree_check('na_s', true), gbtree_check('nb_s', true), gbtree_check('nc_s', true),
	gbtree_check('nd_s', true), gbtree_check('ne_s', true);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), count(s), count(DISTINCT s) FROM nd WHERE s >= '';
SELECT count(*) FROM na WHERE s > 'ÿ';
RESET enable_seqscan;
RESET enable_bitmapscan;

-- 4. The root leaves held entries already: a few rows inserted alone
-- before, and a unique index's first entry of the statement, which goes
-- in at once (src/README, "Unique indexes"); they are rewritten in the
-- new words with the roots.  The unique index still refuses a duplicate.
-- (Rows only: the twins' planners may take either index.)
CREATE TABLE rua (id int, s text COLLATE "C");
CREATE TABLE rub (id int, s text COLLATE "C");
SELECT tw_both('CREATE UNIQUE INDEX %1$I_s ON %1$I USING %2$s (s)', 'rua', 'rub');
SELECT tw_both('CREATE INDEX %1$I_sd ON %1$I USING %2$s (s DESC)', 'rua', 'rub');
SELECT tw_both('INSERT INTO %1$I VALUES (-1, ''first''), (-2, NULL), (-3, '''')', 'rua', 'rub');
INSERT INTO rua SELECT g, 'u' || g FROM generate_series(1, 12000) g;
INSERT INTO rub SELECT g, 'u' || g FROM generate_series(1, 12000) g;
SELECT fit_words('rua_s') AS rua_s, fit_words('rua_sd') AS rua_sd;
SELECT tw_both('INSERT INTO %1$I VALUES (0, ''u77'')', 'rua', 'rub');
SELECT tw_both('INSERT INTO %1$I VALUES (0, ''first'')', 'rua', 'rub');
SELECT tw_both('INSERT INTO %1$I VALUES (0, ''u77-and-a-longer-tail'')', 'rua', 'rub');
SELECT tw_both('INSERT INTO %1$I VALUES (0, ''u77-and-a-longer-tail'')', 'rua', 'rub');
VACUUM ANALYZE rua, rub;
SELECT gbtree_check('rua_s', true), gbtree_check('rua_sd', true);
SELECT tw_diff('rua', 'rub', 's', 's < ''u2''', plans => false);
SELECT tw_diff('rua', 'rub', 's', 's = ANY (ARRAY['''', ''first'', ''u77'', ''u12000'', NULL])', plans => false);
SELECT tw_diff('rua', 'rub', 's', 'true', 's DESC', 300, false);
SELECT tw_order('rua', 'rub', 's', 's');

-- 5. A load that fits and then aborts: the index keeps its new words and
-- the aborted entries (dead), and takes what comes next.  TRUNCATE makes
-- a new, four-word index, which the next load fits again.
CREATE TABLE rxa (id int, s text COLLATE "C");
CREATE TABLE rxb (id int, s text COLLATE "C");
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'rxa', 'rxb');
BEGIN;
INSERT INTO rxa SELECT id, s FROM rows_short(12000);
SELECT count(*) FROM rxa WHERE s = 'dup';
ROLLBACK;
SELECT fit_words('rxa_s') AS after_abort;
INSERT INTO rxa SELECT id, s || '-' || id FROM rows_short(3000);
INSERT INTO rxb SELECT id, s || '-' || id FROM rows_short(3000);
VACUUM ANALYZE rxa, rxb;
SELECT gbtree_check('rxa_s', true);
SELECT tw_diff('rxa', 'rxb', 's', 's > ''0''');
SELECT tw_order('rxa', 'rxb', 's', 's');
BEGIN;
TRUNCATE rxa;
SELECT fit_words('rxa_s') AS truncated;
INSERT INTO rxa SELECT id, s FROM rows_short(12000);
COMMIT;
TRUNCATE rxb;
INSERT INTO rxb SELECT id, s FROM rows_short(12000);
SELECT fit_words('rxa_s') AS reloaded;
VACUUM ANALYZE rxa, rxb;
SELECT gbtree_check('rxa_s', true);
SELECT tw_diff('rxa', 'rxb', 's', 's < ''5''', 's', 300);
SELECT tw_order('rxa', 'rxb', 's', 's');

DROP TABLE rfa, rfb, rma, rmb, na, nb, nc, nd, ne, rua, rub, rxa, rxb;
DROP FUNCTION fit_words(regclass), rows_short(int), tw_one(text), tw_both(text, text, text),
	tw_shape(text, text), tw_diff(text, text, text, text, text, int, boolean),
	tw_order(text, text, text, text);
