--
-- text and varchar keys (src/README, "Text keys"): under the "C" collation
-- a key is the value's bytes, zero-padded, in the field the index's other
-- columns leave of its four words: 32 bytes alone, less beside other
-- columns.  A longer value keeps its first bytes there and the rest in a
-- tail (t30_long_text); ICU collations key by sort keys
-- (t32_icu_collation), libc ones other than "C" are refused (0A000) but
-- C.UTF-8 in a UTF8 database (t32_icu_collation).  Every query runs on a
-- gbtree table and on its btree twin; rows are compared under forced index,
-- index-only, bitmap and sequential scans, and the plans of both under the
-- same settings.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- the twins' functions (tw_one, tw_both, tw_shape, tw_diff)
\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- 1. One text column: NULLs, empty strings, heavy duplicates, values that
-- differ only in their last byte after a long common prefix, the field's
-- full 32 bytes, multi-byte and 0xFF-led UTF-8, control characters.
CREATE TABLE sg (id serial, s text COLLATE "C", v varchar(40) COLLATE "C");
CREATE TABLE sb (id serial, s text COLLATE "C", v varchar(40) COLLATE "C");
INSERT INTO sg (s, v)
  SELECT CASE g % 11
		   WHEN 0 THEN NULL
		   WHEN 1 THEN ''
		   WHEN 2 THEN 'dup'
		   WHEN 3 THEN repeat('p', 31) || chr(33 + g % 90)
		   WHEN 4 THEN 'https://example.com/a/b/' || lpad((g % 997)::text, 6, '0')
		   WHEN 5 THEN repeat('z', 32)
		   WHEN 6 THEN 'é' || g || 'ÿ'
		   WHEN 7 THEN chr(1) || g
		   WHEN 8 THEN 'dup ' || g % 3
		   ELSE md5(g::text)
		 END,
		 CASE WHEN g % 5 = 0 THEN NULL ELSE substr(md5((g % 400)::text), 1, 1 + g % 30) END
  FROM generate_series(1, 12000) g;
INSERT INTO sb SELECT * FROM sg ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'sg', 'sb');
SELECT tw_both('CREATE INDEX %1$I_v ON %1$I USING %2$s (v DESC NULLS FIRST)', 'sg', 'sb');
VACUUM ANALYZE sg, sb;
SELECT tw_diff('sg', 'sb', 's', 's = ''dup''');
SELECT tw_diff('sg', 'sb', 's', 's = ''''');
SELECT tw_diff('sg', 'sb', 's', 's < ''dup''');
SELECT tw_diff('sg', 'sb', 's', 's >= ''dup''');
SELECT tw_diff('sg', 'sb', 's', 's > ''dup 1'' AND s <= ''https://example.com/a/b/000500''');
SELECT tw_diff('sg', 'sb', 's', 's BETWEEN repeat(''p'', 31) || ''A'' AND repeat(''p'', 31) || ''Z''');
SELECT tw_diff('sg', 'sb', 's', 's LIKE ''https://example.com/a/b/0001%''');
SELECT tw_diff('sg', 'sb', 's', 's = ANY (ARRAY['''', ''dup'', repeat(''z'', 32), NULL, ''nope'', repeat(''z'', 40)])');
-- arrays long enough for the radix sort's levels (sort.c): every value of
-- the table in a scrambled order, with its duplicates, NULLs and prefixes
-- shared up to the last byte; and the DESC column's
CREATE TABLE s_arr AS SELECT id, s, v FROM sb;
SELECT tw_diff('sg', 'sb', 's', 's = ANY (ARRAY(SELECT s FROM s_arr ORDER BY md5(id::text)))');
SELECT tw_diff('sg', 'sb', 'v', 'v = ANY (ARRAY(SELECT v FROM s_arr WHERE id % 3 = 0 ORDER BY md5(id::text)))');
DROP TABLE s_arr;
SELECT tw_diff('sg', 'sb', 's', 's IS NULL');
SELECT tw_diff('sg', 'sb', 's', 's IS NOT NULL AND s < chr(2)');
SELECT tw_diff('sg', 'sb', 's', 's > ''é''');
SELECT tw_diff('sg', 'sb', 's', 'true', 's', 300);
SELECT tw_diff('sg', 'sb', 's', 's > ''dup''', 's DESC', 300);
SELECT tw_diff('sg', 'sb', 's', 's < ''f''', 's DESC NULLS LAST', 50);
-- constants longer than the field, which no stored value can be: x < c is
-- x <= c's first 32 bytes, x > c is x > them, x = c holds for no row
SELECT tw_diff('sg', 'sb', 's', 's < repeat(''z'', 33)');
SELECT tw_diff('sg', 'sb', 's', 's <= repeat(''z'', 32) || ''a''');
SELECT tw_diff('sg', 'sb', 's', 's > repeat(''p'', 31) || ''Wxyz''');
SELECT tw_diff('sg', 'sb', 's', 's >= repeat(''z'', 33)');
SELECT tw_diff('sg', 'sb', 's', 's = repeat(''z'', 33)');
SELECT tw_diff('sg', 'sb', 's', 's < ANY (ARRAY[''b'', repeat(''p'', 40)])');
SELECT tw_diff('sg', 'sb', 's', 's > ALL (ARRAY[''b'', repeat(''p'', 40)])');
SELECT tw_diff('sg', 'sb', 'v', 'v = ''a87ff''');
-- (rows only: PostgreSQL 18 costs the next plan, and the (n, t) one in
-- section 3, otherwise for gbtree than for btree)
SELECT tw_diff('sg', 'sb', 'v', 'v > ''f'' OR v IS NULL', NULL, NULL, false);
SELECT tw_diff('sg', 'sb', 'v', 'v < ''3''', 'v DESC NULLS FIRST', 80);
-- the query's collation must be the index's for the planner to use it
SELECT tw_diff('sg', 'sb', 's', 's COLLATE "POSIX" < ''b''');
SELECT gbtree_check('sg_s', true), gbtree_check('sg_v', true);

-- 2. Writes: inserts, updates, deletes, VACUUM; values longer than the
-- field go in too, their rest in tails.
SELECT tw_both('INSERT INTO %1$I (s) SELECT ''ins'' || g FROM generate_series(1, 3000) g', 'sg', 'sb');
SELECT tw_both('UPDATE %1$I SET s = s || ''!'' WHERE s LIKE ''dup%%''', 'sg', 'sb');
SELECT tw_both('DELETE FROM %1$I WHERE s > ''ins2''', 'sg', 'sb');
SELECT tw_both('INSERT INTO %1$I (s) VALUES (''ok''), (repeat(''x'', 33))', 'sg', 'sb');
SELECT tw_both('INSERT INTO %1$I (s) SELECT repeat(''y'', 32) || g FROM generate_series(1, 10) g', 'sg', 'sb');
SELECT tw_both('UPDATE %1$I SET s = s || repeat(''-'', 40) WHERE s = ''dup!''', 'sg', 'sb');
SELECT (SELECT count(*) FROM sg) = (SELECT count(*) FROM sb) AS same_rows;
VACUUM ANALYZE sg, sb;
SELECT tw_diff('sg', 'sb', 's', 's LIKE ''dup%''');
SELECT tw_diff('sg', 'sb', 's', 's > ''i'' AND s < ''j''', 's', 500);
SELECT tw_diff('sg', 'sb', 'v', 'v >= ''a''');
SELECT gbtree_check('sg_s', true), gbtree_check('sg_v', true);
-- existing long values: the build takes them
SELECT tw_both('REINDEX INDEX %1$I_s', 'sg', 'sb');
SELECT tw_diff('sg', 'sb', 's', 's >= ''dup'' AND s < ''e'' ', 's DESC', 300);
SELECT gbtree_check('sg_s', true);

-- 3. Several columns: text after a fixed-width column (27 bytes of field),
-- text first and DESC, two text columns (15 bytes each); row comparisons,
-- = ANY on any column, ORDER BY on a prefix both ways.
CREATE TABLE cg (id serial, t int4, n text COLLATE "C", m text COLLATE "C");
CREATE TABLE cb (id serial, t int4, n text COLLATE "C", m text COLLATE "C");
INSERT INTO cg (t, n, m)
  SELECT CASE WHEN g % 17 = 0 THEN NULL ELSE g % 40 END,
		 CASE WHEN g % 13 = 0 THEN NULL WHEN g % 7 = 0 THEN '' ELSE 'name ' || (g * 7919) % 500 END,
		 CASE WHEN g % 3 = 0 THEN NULL ELSE left(md5(g::text), g % 12) END
  FROM generate_series(1, 9000) g;
INSERT INTO cb SELECT * FROM cg ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_tn ON %1$I USING %2$s (t, n)', 'cg', 'cb');
SELECT tw_both('CREATE INDEX %1$I_nt ON %1$I USING %2$s (n DESC NULLS LAST, t)', 'cg', 'cb');
SELECT tw_both('CREATE INDEX %1$I_nm ON %1$I USING %2$s (n, m NULLS FIRST)', 'cg', 'cb');
VACUUM ANALYZE cg, cb;
SELECT tw_diff('cg', 'cb', 't, n', 't = 5 AND n > ''name 3''');
SELECT tw_diff('cg', 'cb', 't, n', 't = ANY (''{1,2,39}'') AND n = ANY (ARRAY[''name 1'', ''name 2'', '''', repeat(''n'', 30)])');
SELECT tw_diff('cg', 'cb', 't, n', 't IS NULL AND n IS NULL');
-- (PostgreSQL 15 gives row comparisons to btree's index conditions only:
-- gbtree's plans filter them, so only their rows are compared)
SELECT tw_diff('cg', 'cb', 't, n', '(t, n) > (38, ''name 9'')', 't, n', 400, false);
SELECT tw_diff('cg', 'cb', 't, n', '(t, n) < (2, repeat(''name 1'', 6))', 't DESC, n DESC', 400, false);
SELECT tw_diff('cg', 'cb', 't, n', 't = 3 AND n < repeat(''name 4'', 5)');
SELECT tw_diff('cg', 'cb', 'n, t', 'n = ''name 42''', 'n DESC, t', 100);
SELECT tw_diff('cg', 'cb', 'n, t', 'n >= ''name 48'' AND t < 10', NULL, NULL, false);
SELECT tw_diff('cg', 'cb', 'n, m', 'n = ''name 12'' AND m > ''8''');
SELECT tw_diff('cg', 'cb', 'n, m', 'n = ''''', 'n, m NULLS FIRST', 200);
SELECT tw_diff('cg', 'cb', 'n, m', 'm < ''1''');
SELECT tw_both('INSERT INTO %1$I (t, n, m) SELECT g %% 3, ''new '' || g, NULL FROM generate_series(1, 2000) g', 'cg', 'cb');
SELECT tw_both('INSERT INTO %1$I (t, n) VALUES (1, repeat(''w'', 28))', 'cg', 'cb');
SELECT tw_both('INSERT INTO %1$I (t, n) VALUES (1, repeat(''w'', 27))', 'cg', 'cb');
SELECT tw_both('INSERT INTO %1$I (t, n) VALUES (1, repeat(''w'', 15))', 'cg', 'cb');
SELECT tw_both('INSERT INTO %1$I (n, m) VALUES (''ok'', repeat(''w'', 16))', 'cg', 'cb');
SELECT tw_both('INSERT INTO %1$I (n, m) VALUES (''ok'', repeat(''w'', 15))', 'cg', 'cb');
VACUUM ANALYZE cg, cb;
SELECT tw_diff('cg', 'cb', 't, n', 't = 1', 't, n', 300);
SELECT tw_diff('cg', 'cb', 'n, m', 'n = ''ok''');
SELECT gbtree_check('cg_tn', true), gbtree_check('cg_nt', true), gbtree_check('cg_nm', true);

-- 4. Unique text keys: 23505 with btree's message, NULLs distinct or not,
-- an expression index, INCLUDE text (the two text fields share the key's
-- room: 12 bytes each).
CREATE TABLE xg (id serial, e text COLLATE "C", pay text COLLATE "C");
CREATE TABLE xb (id serial, e text COLLATE "C", pay text COLLATE "C");
SELECT tw_both('CREATE UNIQUE INDEX %1$I_e ON %1$I USING %2$s (e) INCLUDE (pay)', 'xg', 'xb');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_le ON %1$I USING %2$s (lower(e)) NULLS NOT DISTINCT', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e, pay) SELECT ''u'' || g || ''@x.io'', g FROM generate_series(1, 3000) g', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (''u7@x.io'')', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (''U7@x.io'')', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (NULL)', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (NULL)', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES ('''')', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES ('''')', 'xg', 'xb');
SELECT tw_both('UPDATE %1$I SET e = ''u8@x.io'' WHERE e = ''u9@x.io''', 'xg', 'xb');
SELECT tw_both('UPDATE %1$I SET pay = repeat(''p'', 12) WHERE e LIKE ''u1%%''', 'xg', 'xb');
VACUUM ANALYZE xg, xb;
SELECT tw_diff('xg', 'xb', 'e, pay', 'e > ''u2999''', 'e', 50);
SELECT tw_diff('xg', 'xb', 'e, pay', 'e = ANY (ARRAY[''u1@x.io'', ''u1000@x.io'', ''u1000@x.iox''])');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (''u123456789@x.io'')', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (''u123456789@x.io'')', 'xg', 'xb');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_pay ON %1$I USING %2$s (pay)', 'xg', 'xb');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_pay ON %1$I USING %2$s (pay) WHERE pay < ''p''', 'xg', 'xb');
SELECT tw_both('INSERT INTO %1$I (e, pay) VALUES (''dup'', ''2'')', 'xg', 'xb');
SELECT gbtree_check('xg_e', true), gbtree_check('xg_le', true), gbtree_check('xg_pay', true);

-- 5. Refused: a libc collation other than "C" and "POSIX" (its sort keys
-- are not trusted; C.UTF-8 is taken only in a UTF8 database), and a key
-- too wide for a text field.  (The tests' databases are SQL_ASCII, where
-- ICU cannot be used: t32_icu_collation makes its own.)
CREATE COLLATION t29_c_utf8 (provider = libc, locale = 'C.UTF-8');
\set c_utf8 :abs_srcdir '/sql/helpers/c_utf8.sql'
\i :c_utf8
SELECT c_utf8_index('CREATE INDEX sg_cu ON sg USING gbtree (s COLLATE t29_c_utf8)', 'sg_cu'),
	c_utf8_index('CREATE INDEX sg_cu ON sg USING gbtree (v COLLATE t29_c_utf8 DESC)', 'sg_cu');
CREATE TABLE dg (a int8, b int8, c int8, d int8, s text COLLATE "C");
SELECT tw_one('CREATE INDEX dg_wide ON dg USING gbtree (a, b, c, d, s)');
-- INCLUDE text is stored, never ordered: a collation that does not order
-- by bytes is accepted there, and index-only scans return it
CREATE TABLE ig (t int4, m text COLLATE t29_c_utf8);
CREATE TABLE ib (t int4, m text COLLATE t29_c_utf8);
INSERT INTO ig SELECT t, m FROM cg ORDER BY id;
INSERT INTO ib SELECT * FROM ig;
SELECT tw_both('CREATE INDEX %1$I_t ON %1$I USING %2$s (t) INCLUDE (m)', 'ig', 'ib');
VACUUM ANALYZE ig, ib;
SELECT tw_diff('ig', 'ib', 't, m', 't = 1');
SELECT tw_diff('ig', 'ib', 't, m', 't > 30', 't', 100);
SELECT tw_both('INSERT INTO %1$I VALUES (1, repeat(''m'', 22))', 'ig', 'ib');
SELECT tw_diff('ig', 'ib', 't, m', 't = 1');

DROP TABLE sg, sb, cg, cb, xg, xb, dg, ig, ib;
DROP COLLATION t29_c_utf8;
DROP FUNCTION tw_one(text), tw_both(text, text, text), tw_shape(text, text),
	tw_diff(text, text, text, text, text, int, boolean), tw_order(text, text, text, text);
