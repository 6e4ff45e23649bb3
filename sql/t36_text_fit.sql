--
-- text fields fitted to the data (src/README, "Text keys"): a build that
-- sees at least 10,000 rows with a text value and no text key longer than
-- a smaller field gives the index the fewest key words whose fields hold
-- every key whole, and says so in its metapage (keywords, read here with
-- pageinspect); every backend takes the shape from there.  Values inserted
-- later that are longer than the fitted field take tails.  Every query
-- runs on a gbtree table and on its btree twin under forced index,
-- index-only, bitmap and sequential scans, with the plans of both.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE EXTENSION IF NOT EXISTS pageinspect;	-- needs: pageinspect
SET max_parallel_workers_per_gather = 0;
SET jit = off;

\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- the key words a gbtree index's metapage records
CREATE FUNCTION fit_words(ix regclass) RETURNS int
LANGUAGE sql AS $$ SELECT get_byte(get_raw_page(ix::text, 0), 56) $$;

-- 1. One text column of at most 16 bytes: two words, the field full at
-- 16 (never one word: one-word pages have no tails for longer values).
-- NULLs, empty strings, heavy duplicates, bytes 0x01 and 0xFF-led UTF-8.
CREATE TABLE fa (id int, s text COLLATE "C", r text COLLATE "C");
CREATE TABLE fb (id int, s text COLLATE "C", r text COLLATE "C");
INSERT INTO fa (id, s)
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
  FROM generate_series(1, 12000) g;
UPDATE fa SET r = reverse(s);
VACUUM FULL fa;
INSERT INTO fb SELECT * FROM fa ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'fa', 'fb');
SELECT tw_both('CREATE INDEX %1$I_d ON %1$I USING %2$s (r DESC NULLS FIRST)', 'fa', 'fb');
SELECT fit_words('fa_s') AS fa_s, fit_words('fa_d') AS fa_d;
VACUUM ANALYZE fa, fb;
-- a new backend takes the shape from the metapage
\c
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT tw_diff('fa', 'fb', 's', 's = ''dup''');
SELECT tw_diff('fa', 'fb', 's', 's = ''''');
SELECT tw_diff('fa', 'fb', 's', 's < ''dup''');
SELECT tw_diff('fa', 'fb', 's', 's >= repeat(''z'', 15)');
SELECT tw_diff('fa', 'fb', 's', 's BETWEEN ''0000000000001000'' AND ''0000000000002000''');
SELECT tw_diff('fa', 'fb', 's', 's IS NULL');
SELECT tw_diff('fa', 'fb', 's', 's = ANY (ARRAY['''', ''dup'', repeat(''z'', 16), NULL, ''nope'', repeat(''z'', 17)])');
SELECT tw_diff('fa', 'fb', 's', 's > ''ÿ''');
SELECT tw_diff('fa', 'fb', 's', 'true', 's', 300);
SELECT tw_diff('fa', 'fb', 's', 's > ''dup''', 's DESC', 300);
SELECT tw_diff('fa', 'fb', 'r', 'true', 'r DESC NULLS FIRST', 300);
SELECT tw_diff('fa', 'fb', 'r', 'r > ''1'' AND r < ''5''');
-- constants longer than the fitted field
SELECT tw_diff('fa', 'fb', 's', 's < repeat(''z'', 17)');
SELECT tw_diff('fa', 'fb', 's', 's > repeat(''z'', 15) || ''!x''');
SELECT tw_diff('fa', 'fb', 's', 's = ''0000000000000001x''');
SELECT tw_order('fa', 'fb', 's', 's');
SELECT tw_order('fa', 'fb', 'r', 'r DESC NULLS FIRST');

-- longer values come: tails in a two-word index, some sharing their first
-- 16 bytes with stored keys, some of those equal to one another
SELECT tw_both('INSERT INTO %1$I (id, s) SELECT 100000 + g, CASE mod(g, 4)
		   WHEN 0 THEN repeat(''z'', 16) || mod(g, 7)
		   WHEN 1 THEN lpad(mod(g, 5000)::text, 16, ''0'') || ''-'' || repeat(''t'', mod(g, 50))
		   WHEN 2 THEN ''dup'' || repeat(''q'', 14 + mod(g, 3))
		   ELSE md5(g::text) END
	FROM generate_series(1, 3000) g', 'fa', 'fb');
SELECT tw_both('UPDATE %1$I SET r = reverse(s) WHERE id > 100000', 'fa', 'fb');
SELECT tw_both('DELETE FROM %1$I WHERE mod(id, 13) = 0', 'fa', 'fb');
VACUUM ANALYZE fa, fb;
SELECT gbtree_check('fa_s', true), gbtree_check('fa_d', true);
SELECT fit_words('fa_s') AS fa_s;
SELECT tw_diff('fa', 'fb', 's', 's = repeat(''z'', 16)');
SELECT tw_diff('fa', 'fb', 's', 's > repeat(''z'', 16) AND s < repeat(''z'', 16) || ''5''');
SELECT tw_diff('fa', 'fb', 's', 's BETWEEN ''0000000000001000'' AND ''0000000000002000''');
SELECT tw_diff('fa', 'fb', 's', 's LIKE ''dup'' || repeat(''q'', 14) || ''%''');
SELECT tw_diff('fa', 'fb', 's', 's = ANY (ARRAY[''dup'' || repeat(''q'', 15), ''0000000000000042-tt'', repeat(''z'', 16) || ''3'', md5(''12'')])');
SELECT tw_diff('fa', 'fb', 's', 's >= ''0000000000004990''', 's', 500);
SELECT tw_diff('fa', 'fb', 's', 's < ''dup'' || repeat(''q'', 15)', 's DESC', 500);
SELECT tw_diff('fa', 'fb', 'r', 'r < ''5''', 'r DESC NULLS FIRST', 500);
SELECT tw_order('fa', 'fb', 's', 's');
SELECT tw_order('fa', 'fb', 'r', 'r DESC NULLS FIRST');
-- REINDEX fits again: the tails need the default four words
REINDEX INDEX fa_s;
SELECT fit_words('fa_s') AS fa_s;
SELECT tw_order('fa', 'fb', 's', 's');

-- 2. UNIQUE on a fitted index of 8-byte keys (two words): a duplicate
-- short key, a longer key with a stored one's 8 bytes, then its duplicate
CREATE TABLE fua (s text COLLATE "C");
CREATE TABLE fub (s text COLLATE "C");
INSERT INTO fua SELECT 'u' || lpad(g::text, 7, '0') FROM generate_series(1, 11000) g;
INSERT INTO fub SELECT * FROM fua;
SELECT tw_both('CREATE UNIQUE INDEX %1$I_s ON %1$I USING %2$s (s)', 'fua', 'fub');
SELECT fit_words('fua_s') AS fua_s;
SELECT tw_both('INSERT INTO %1$I VALUES (''u0000042'')', 'fua', 'fub');
SELECT tw_both('INSERT INTO %1$I VALUES (''u0000042-longer'')', 'fua', 'fub');
SELECT tw_both('INSERT INTO %1$I VALUES (''u0000042-longer'')', 'fua', 'fub');
SELECT tw_both('INSERT INTO %1$I VALUES (''u00000'')', 'fua', 'fub');
SELECT gbtree_check('fua_s', true);
SELECT tw_diff('fua', 'fub', 's', 's >= ''u0000040'' AND s < ''u0000044''');

-- 3. Below 10,000 rows with a text value the build keeps the default
-- four words, however many rows are NULL
CREATE TABLE fsa AS SELECT * FROM fua LIMIT 9999;
CREATE INDEX fsa_s ON fsa USING gbtree (s);
INSERT INTO fsa SELECT NULL FROM generate_series(1, 5000);
CREATE INDEX fsa_s2 ON fsa USING gbtree (s);
SELECT fit_words('fsa_s') AS fsa_s, fit_words('fsa_s2') AS fsa_s2;
DROP TABLE fsa;

-- 4. (int4, text): the text field shares the words with the integer and
-- both columns' NULL bits; at most 11 bytes fit two words.  Also a row
-- comparison, a prefix and a DESC text.
CREATE TABLE fma (id int, t int4, s text COLLATE "C");
CREATE TABLE fmb (id int, t int4, s text COLLATE "C");
INSERT INTO fma (id, t, s)
  SELECT g, CASE WHEN g % 17 = 0 THEN NULL ELSE g % 50 END,
		 CASE g % 6 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN repeat('m', 11)
		   ELSE substr(md5(g::text), 1, 1 + g % 11) END
  FROM generate_series(1, 15000) g;
INSERT INTO fmb SELECT * FROM fma ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_ts ON %1$I USING %2$s (t, s)', 'fma', 'fmb');
SELECT tw_both('CREATE INDEX %1$I_sd ON %1$I USING %2$s (s DESC, t)', 'fma', 'fmb');
SELECT fit_words('fma_ts') AS fma_ts, fit_words('fma_sd') AS fma_sd;
VACUUM ANALYZE fma, fmb;
SELECT tw_diff('fma', 'fmb', 't, s', 't = 7');
SELECT tw_diff('fma', 'fmb', 't, s', 't = 7 AND s > ''8''');
SELECT tw_diff('fma', 'fmb', 't, s', 't IS NULL AND s IS NOT NULL');
SELECT tw_diff('fma', 'fmb', 't, s', 't BETWEEN 10 AND 12 AND s = ''''');
-- (rows only: core PostgreSQL offers row comparisons as index conditions
-- to btree only)
SELECT tw_diff('fma', 'fmb', 't, s', '(t, s) > (48, ''c'')', NULL, NULL, false);
SELECT tw_diff('fma', 'fmb', 't, s', 's = repeat(''m'', 11)');
SELECT tw_diff('fma', 'fmb', 't, s', 's > ''f''', 's DESC, t', 300);
SELECT tw_diff('fma', 'fmb', 't, s', 't > 45', 't, s', 300);
SELECT tw_diff('fma', 'fmb', 't, s', 't = ANY (ARRAY[3, 5, NULL]) AND s < ''5''');
SELECT tw_both('INSERT INTO %1$I (id, t, s) SELECT 100000 + g, mod(g, 50), repeat(''m'', 11) || g
	FROM generate_series(1, 2000) g', 'fma', 'fmb');
VACUUM ANALYZE fma, fmb;
SELECT gbtree_check('fma_ts', true), gbtree_check('fma_sd', true);
SELECT tw_diff('fma', 'fmb', 't, s', 't = 7 AND s >= repeat(''m'', 11)');
SELECT tw_diff('fma', 'fmb', 't, s', 's > repeat(''m'', 11) AND s < repeat(''m'', 11) || ''5''');
SELECT tw_diff('fma', 'fmb', 't, s', 'true', 's DESC, t', 500);
SELECT tw_order('fma', 'fmb', 't, s', 't, s');

-- 5. Two text columns, and a text INCLUDE column (the heap TID's bits
-- come between keys and INCLUDE columns)
CREATE TABLE f2a (id int, a text COLLATE "C", b text COLLATE "C", k int4);
CREATE TABLE f2b (id int, a text COLLATE "C", b text COLLATE "C", k int4);
INSERT INTO f2a (id, a, b, k)
  SELECT g, CASE WHEN g % 23 = 0 THEN NULL ELSE substr(md5(g::text), 1, g % 8) END,
		 CASE WHEN g % 29 = 0 THEN NULL ELSE 'b' || g % 300 END,
		 g % 4000
  FROM generate_series(1, 12000) g;
INSERT INTO f2b SELECT * FROM f2a ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_ab ON %1$I USING %2$s (a, b)', 'f2a', 'f2b');
SELECT tw_both('CREATE INDEX %1$I_ki ON %1$I USING %2$s (k) INCLUDE (b)', 'f2a', 'f2b');
SELECT fit_words('f2a_ab') AS f2a_ab, fit_words('f2a_ki') AS f2a_ki;
VACUUM ANALYZE f2a, f2b;
SELECT tw_diff('f2a', 'f2b', 'a, b', 'a = ''c4''');
SELECT tw_diff('f2a', 'f2b', 'a, b', 'a > ''f'' AND b < ''b2''');
SELECT tw_diff('f2a', 'f2b', 'a, b', 'a IS NULL OR a = ''''', NULL, NULL, false);
SELECT tw_diff('f2a', 'f2b', 'a, b', 'true', 'a, b', 300);
SELECT tw_diff('f2a', 'f2b', 'k, b', 'k BETWEEN 100 AND 160');
SELECT tw_diff('f2a', 'f2b', 'k, b', 'k < 40', 'k', 200);
SELECT tw_both('INSERT INTO %1$I (id, a, b, k) SELECT 100000 + g, md5(g::text), ''b-long-'' || g, mod(g, 4000)
	FROM generate_series(1, 1500) g', 'f2a', 'f2b');
VACUUM ANALYZE f2a, f2b;
SELECT gbtree_check('f2a_ab', true), gbtree_check('f2a_ki', true);
SELECT tw_diff('f2a', 'f2b', 'a, b', 'a > ''f''');
SELECT tw_diff('f2a', 'f2b', 'k, b', 'k BETWEEN 100 AND 160');
SELECT tw_order('f2a', 'f2b', 'a, b', 'a, b');
SELECT tw_order('f2a', 'f2b', 'k, b', 'k, id');
DROP TABLE fa, fb, fua, fub, fma, fmb, f2a, f2b;
DROP FUNCTION fit_words(regclass), tw_one(text), tw_both(text, text, text),
	tw_shape(text, text), tw_diff(text, text, text, text, text, int, boolean),
	tw_order(text, text, text, text);
