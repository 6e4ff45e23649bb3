--
-- text keys under ICU collations (src/README, "Collations"): a key orders
-- by K(s), the collation's sort key, escaped, then the value's bytes
-- (collate.c), so that gbtree orders exactly as btree's varstr_cmp does:
-- the collation first, the bytes where it ties.  The tests' own databases
-- are SQL_ASCII, where ICU cannot be used, so this one makes a UTF8
-- database whose default collation is ICU's too.  Every query runs on a
-- gbtree table and on its btree twin; rows are compared under forced index,
-- index-only, bitmap and sequential scans, and the plans of both.  A server
-- built without ICU skips it (expected/t32_icu_collation_1.out).
--
SET client_min_messages = warning;
-- (ICU's collations are imported at initdb where the server has ICU; from
-- 16 the catalog holds "unicode", an ICU one, in every build)
SELECT NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') AS no_icu \gset
\if :no_icu
\echo 'this server has no ICU collations'
\quit
\endif
\set regdb :DBNAME
DROP DATABASE IF EXISTS gbtree_t32_icu;
CREATE DATABASE gbtree_t32_icu TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'
	LOCALE_PROVIDER icu ICU_LOCALE 'en';
\c gbtree_t32_icu
SET client_min_messages = warning;
CREATE EXTENSION gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- 1. One column of the database's default collation (ICU "en") and one of
-- Swedish (where 'ä' sorts after 'z'): NULLs, empty strings, case and
-- accents, a precomposed 'é' and 'e' with a combining accent (canonically
-- equal: ICU ties them, the bytes decide), full-width letters, 'ß' and
-- 'ss', punctuation and digits, heavy duplicates, long values that differ
-- only at their end (their order keys go on in tails), scripts beyond
-- Latin.
CREATE TABLE zg (id serial, s text, v varchar(60) COLLATE "sv-x-icu");
CREATE TABLE zb (id serial, s text, v varchar(60) COLLATE "sv-x-icu");
CREATE TABLE u_vals (k int, x text);
INSERT INTO u_vals VALUES
	(0, NULL), (1, ''), (2, 'a'), (3, 'A'), (4, 'b'), (5, 'B'), (6, 'é'),
	(7, 'e' || U&'\0301'), (8, 'e'), (9, 'E'), (10, 'É'), (11, 'ä'), (12, 'Ä'),
	(13, 'ae'), (14, 'z'), (15, 'Z'), (16, 'ß'), (17, 'ss'), (18, 'SS'),
	(19, 'ａ'), (20, 'Ａ'), (21, '-'), (22, '_'), (23, ' '), (24, '1'), (25, '10'),
	(26, '9'), (27, 'résumé'), (28, 'resume'), (29, 'Résumé'), (30, 'RESUME'),
	(31, 'ö'), (32, 'o'), (33, 'å'), (34, 'Ω'), (35, 'ж'), (36, '日本'), (37, '한국'),
	(38, 'x-y'), (39, 'xy'), (40, 'x y'), (41, 'co-op'), (42, 'coop'), (43, 'ǅ'),
	(44, 'ﬁ'), (45, 'fi'), (46, '🙂'), (47, U&'\00C5'), (48, 'A' || U&'\030A');
INSERT INTO zg (s, v)
  SELECT CASE WHEN g % 7 = 0 THEN md5(g::text)
			  WHEN g % 7 = 1 THEN repeat('Lorem ipsum dolor ', 3) || (g % 50)
			  WHEN g % 7 = 2 THEN upper(repeat('lorem ipsum dolor ', 3)) || (g % 50)
			  ELSE (SELECT x FROM u_vals WHERE k = g % 49) END,
		 CASE WHEN g % 5 = 0 THEN NULL
			  WHEN g % 5 = 1 THEN (SELECT x FROM u_vals WHERE k = (g * 7) % 49)
			  ELSE substr(md5((g % 300)::text), 1, 1 + g % 20) || 'ä' END
  FROM generate_series(1, 6000) g;
INSERT INTO zb SELECT * FROM zg ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'zg', 'zb');
SELECT tw_both('CREATE INDEX %1$I_v ON %1$I USING %2$s (v DESC NULLS FIRST)', 'zg', 'zb');
VACUUM ANALYZE zg, zb;
-- GbtreeJoin on ICU keys (join.c): the outer values become sort-key
-- words, the long ones past the field share theirs, and each pair is
-- decided by bytes; against the btree twin under the planner's own plan
\set join_twins :abs_srcdir '/sql/helpers/join_twins.sql'
\i :join_twins
CREATE TABLE jo (id int, x text, y varchar(60) COLLATE "sv-x-icu");
INSERT INTO jo SELECT g,
	CASE WHEN g % 4 = 0 THEN repeat('Lorem ipsum dolor ', 3) || (g % 60)
		 WHEN g % 4 = 1 THEN (SELECT x FROM u_vals WHERE k = g % 49)
		 WHEN g % 4 = 2 THEN md5(g::text)
		 ELSE upper(repeat('lorem ipsum dolor ', 3)) || (g % 55) END,
	CASE WHEN g % 3 = 0 THEN (SELECT x FROM u_vals WHERE k = (g * 5) % 49)
		 ELSE substr(md5((g % 350)::text), 1, 1 + g % 20) || 'ä' END
FROM generate_series(1, 2000) g;
VACUUM ANALYZE jo;
SELECT * FROM tw_join('SELECT jo.id, i.id AS iid, i.s FROM jo JOIN @ i ON i.s = jo.x', 'zg', 'zb');
SELECT * FROM tw_join('SELECT jo.id, i.s FROM jo JOIN @ i ON i.s = jo.x', 'zg', 'zb');
SELECT * FROM tw_join('SELECT jo.x, i.id AS iid FROM jo JOIN @ i ON i.s = jo.x', 'zg', 'zb');
SELECT * FROM tw_join('SELECT jo.id FROM jo WHERE jo.x IN (SELECT s FROM @)', 'zg', 'zb');
SELECT * FROM tw_join('SELECT jo.id, i.id AS iid, i.v FROM jo JOIN @ i ON i.v = jo.y', 'zg', 'zb');
SELECT nrows, same FROM tw_join('SELECT jo.id FROM jo WHERE NOT EXISTS (SELECT 1 FROM @ i WHERE i.s = jo.x)', 'zg', 'zb');
SELECT tw_order('zg', 'zb', 's', 's') AS s_asc, tw_order('zg', 'zb', 's', 's DESC') AS s_desc,
	tw_order('zg', 'zb', 'v', 'v DESC NULLS FIRST') AS v_desc, tw_order('zg', 'zb', 'v', 'v') AS v_asc;
SELECT tw_diff('zg', 'zb', 's', 's = ''é''');
SELECT tw_diff('zg', 'zb', 's', 's = ''e'' || U&''\0301''');
SELECT tw_diff('zg', 'zb', 's', 's = ''''');
SELECT tw_diff('zg', 'zb', 's', 's < ''e''');
SELECT tw_diff('zg', 'zb', 's', 's >= ''E'' AND s <= ''f''');
SELECT tw_diff('zg', 'zb', 's', 's > ''ss'' AND s < ''st''');
SELECT tw_diff('zg', 'zb', 's', 's BETWEEN ''LOREM'' AND ''lorem ipsum dolor lorem ipsum dolor lorem ipsum dolor 3''');
SELECT tw_diff('zg', 'zb', 's', 's = ''Lorem ipsum dolor Lorem ipsum dolor Lorem ipsum dolor 22''');
SELECT tw_diff('zg', 'zb', 's', 's = ANY (ARRAY[''a'', ''A'', ''ß'', NULL, ''ａ'', ''nope'', repeat(''Lorem ipsum dolor '', 3) || ''8''])');
SELECT tw_diff('zg', 'zb', 's', 's = ANY (ARRAY(SELECT x FROM u_vals ORDER BY md5(k::text)))');
SELECT tw_diff('zg', 'zb', 's', 's IS NULL');
SELECT tw_diff('zg', 'zb', 's', 'true', 's', 400);
SELECT tw_diff('zg', 'zb', 's', 's > ''b''', 's DESC', 300);
SELECT tw_diff('zg', 'zb', 's', 's < ''ä''', 's DESC NULLS LAST', 80);
SELECT tw_diff('zg', 'zb', 's', 's < ANY (ARRAY[''b'', repeat(''Lorem'', 20)])');
SELECT tw_diff('zg', 'zb', 's', 's > ALL (ARRAY[''b'', ''LOREM IPSUM''])');
SELECT tw_diff('zg', 'zb', 'v', 'v > ''z''');
SELECT tw_diff('zg', 'zb', 'v', 'v = ''ä''');
SELECT tw_diff('zg', 'zb', 'v', 'v < ''b''', 'v DESC NULLS FIRST', 100);
SELECT tw_diff('zg', 'zb', 'v', 'v >= ''a'' AND v < ''b''', 'v', 100);
-- the query's collation must be the index's for the planner to use it
SELECT tw_diff('zg', 'zb', 's', 's COLLATE "C" < ''b''');
SELECT gbtree_check('zg_s', true), gbtree_check('zg_v', true);

-- 2. Writes: inserts one by one and in a batch, updates, deletes, VACUUM,
-- REINDEX
SELECT tw_both('INSERT INTO %1$I (s, v) SELECT x, upper(x) FROM u_vals', 'zg', 'zb');
SELECT tw_both('INSERT INTO %1$I (s, v) VALUES (''Ä'' || repeat(''ä'', 30), ''Ö'')', 'zg', 'zb');
SELECT tw_both('INSERT INTO %1$I (s, v) SELECT ''ins '' || g || '' é'', g FROM generate_series(1, 3000) g', 'zg', 'zb');
SELECT tw_both('UPDATE %1$I SET s = upper(s) WHERE s LIKE ''ins 1%%''', 'zg', 'zb');
SELECT tw_both('DELETE FROM %1$I WHERE s > ''INS 2'' AND s < ''ins 5''', 'zg', 'zb');
VACUUM ANALYZE zg, zb;
SELECT tw_order('zg', 'zb', 's', 's') AS s_asc, tw_order('zg', 'zb', 'v', 'v DESC NULLS FIRST') AS v_desc;
SELECT tw_diff('zg', 'zb', 's', 's >= ''ins 2'' AND s < ''INS 3''', 's', 500);
SELECT tw_diff('zg', 'zb', 's', 's > ''Ä''', 's', 50);
SELECT gbtree_check('zg_s', true), gbtree_check('zg_v', true);
SELECT tw_both('REINDEX INDEX %1$I_s', 'zg', 'zb');
SELECT tw_order('zg', 'zb', 's', 's') AS s_asc;
SELECT gbtree_check('zg_s', true);

-- 3. Several columns: (int4, ICU text), (ICU text DESC, "C" text); row
-- comparisons, = ANY on either column, ORDER BY a prefix both ways.
CREATE TABLE mg (id serial, t int4, n text COLLATE "de-x-icu", m text COLLATE "C");
CREATE TABLE mb (id serial, t int4, n text COLLATE "de-x-icu", m text COLLATE "C");
INSERT INTO mg (t, n, m)
  SELECT CASE WHEN g % 17 = 0 THEN NULL ELSE g % 30 END,
		 CASE WHEN g % 13 = 0 THEN NULL
			  ELSE (SELECT x FROM u_vals WHERE k = g % 49) || ' ' || (g * 7919) % 40 END,
		 CASE WHEN g % 3 = 0 THEN NULL ELSE left(md5(g::text), g % 9) END
  FROM generate_series(1, 8000) g;
INSERT INTO mb SELECT * FROM mg ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_tn ON %1$I USING %2$s (t, n)', 'mg', 'mb');
SELECT tw_both('CREATE INDEX %1$I_nm ON %1$I USING %2$s (n DESC, m NULLS FIRST)', 'mg', 'mb');
VACUUM ANALYZE mg, mb;
SELECT tw_order('mg', 'mb', 't, n', 't, n') AS tn, tw_order('mg', 'mb', 'n, m', 'n DESC, m NULLS FIRST') AS nm;
SELECT tw_diff('mg', 'mb', 't, n', 't = 5 AND n > ''é''');
-- (btree filters the second = ANY, gbtree takes it as an index condition:
-- rows only)
SELECT tw_diff('mg', 'mb', 't, n', 't = ANY (''{1,2,29}'') AND n = ANY (ARRAY[''a 1'', ''A 1'', ''ß 3'', ''ss 3''])', NULL, NULL, false);
SELECT tw_diff('mg', 'mb', 't, n', '(t, n) > (28, ''s'')', 't, n', 300, false);
SELECT tw_diff('mg', 'mb', 't, n', '(t, n) < (2, ''Ä'')', 't DESC, n DESC', 300, false);
SELECT tw_diff('mg', 'mb', 'n, m', 'n = ''ä 7''', 'n DESC, m NULLS FIRST', 100);
SELECT tw_diff('mg', 'mb', 'n, m', 'n < ''b'' AND m > ''8''');
SELECT gbtree_check('mg_tn', true), gbtree_check('mg_nm', true);

-- 4. Unique: values the collation ties but whose bytes differ are
-- distinct, as in btree; a duplicate gives btree's 23505, the value read
-- back from the order key.
CREATE TABLE qg (id serial, e text COLLATE "und-x-icu");
CREATE TABLE qb (id serial, e text COLLATE "und-x-icu");
SELECT tw_both('CREATE UNIQUE INDEX %1$I_e ON %1$I USING %2$s (e)', 'qg', 'qb');
SELECT tw_both('INSERT INTO %1$I (e) SELECT x FROM u_vals WHERE x IS NOT NULL', 'qg', 'qb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (''é'')', 'qg', 'qb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (''e'' || U&''\0301'')', 'qg', 'qb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (repeat(''Ünïcödé '', 8))', 'qg', 'qb');
SELECT tw_both('INSERT INTO %1$I (e) VALUES (repeat(''Ünïcödé '', 8))', 'qg', 'qb');
SELECT tw_both('UPDATE %1$I SET e = ''ß'' WHERE e = ''ss''', 'qg', 'qb');
SELECT tw_diff('qg', 'qb', 'e', 'e > ''a''', 'e', 100);
SELECT gbtree_check('qg_e', true);

-- 5. Random strings (setseed): 20,000 of 0-24 characters drawn from an
-- alphabet of case pairs, accents precomposed and combining, ligatures,
-- punctuation ICU weighs differently from its bytes, digits and other
-- scripts; the whole order both ways, and ranges and = ANY between random
-- values of the table.
SELECT setseed(0.32);
CREATE TABLE r_alpha (i int, c text);
INSERT INTO r_alpha
  SELECT ordinality, c FROM unnest(ARRAY['a', 'A', 'b', 'e', 'E', 'é', 'É', U&'\0301', 'ä', 'Ä',
	's', 'S', 'ß', 'ﬁ', 'ǅ', '-', '_', ' ', '.', '''', '0', '1', '9', 'ö', 'o', 'z', 'Z',
	'Ω', 'ж', '日', '🙂', 'ａ', U&'\00C5', U&'\030A']) WITH ORDINALITY AS u(c, ordinality);
CREATE TABLE rg (id serial, s text COLLATE "und-x-icu");
CREATE TABLE rb (id serial, s text COLLATE "und-x-icu");
INSERT INTO rg (s)
  SELECT CASE WHEN random() < 0.02 THEN NULL ELSE
		   (SELECT string_agg(a.arr[1 + floor(random() * array_length(a.arr, 1))::int + w * 0], '')
			  FROM generate_series(1, floor(random() * 25)::int + g * 0) w) END
  FROM generate_series(1, 20000) g, (SELECT array_agg(c ORDER BY i) arr FROM r_alpha) a;
INSERT INTO rb SELECT * FROM rg ORDER BY id;
SELECT count(DISTINCT s) > 15000 AS varied, count(*) FILTER (WHERE s IS NULL) > 0 AS has_null FROM rg;
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'rg', 'rb');
VACUUM ANALYZE rg, rb;
SELECT tw_order('rg', 'rb', 's', 's') AS asc_, tw_order('rg', 'rb', 's', 's DESC') AS desc_;
CREATE TABLE r_probe AS
  SELECT n, lo.s lo, hi.s hi
  FROM (SELECT n, 1 + floor(random() * 20000)::int a, 1 + floor(random() * 20000)::int b
		FROM generate_series(1, 12) n) p
	   JOIN rb lo ON lo.id = p.a JOIN rb hi ON hi.id = p.b;
-- (how many rows a range holds is left out: it is ICU's order, which a
-- newer ICU may change)
SELECT n, split_part(tw_diff('rg', 'rb', 's', format('s >= %L AND s < %L', least(lo, hi), greatest(lo, hi))), ' ', 1) AS range_,
	tw_diff('rg', 'rb', 's', format('s = %L OR s = %L', lo, hi), NULL, NULL, false) AS eq
FROM r_probe ORDER BY n;
CREATE TABLE r_arr AS SELECT id, s FROM rb;
SELECT tw_diff('rg', 'rb', 's', 's = ANY (ARRAY(SELECT s FROM r_arr WHERE id % 7 = 0))');
SELECT tw_both('INSERT INTO %1$I (s) SELECT s || ''é'' FROM rb WHERE id %% 3 = 0', 'rg', 'rb');
SELECT tw_both('DELETE FROM %1$I WHERE id %% 5 = 0', 'rg', 'rb');
VACUUM rg, rb;
SELECT tw_order('rg', 'rb', 's', 's') AS asc_;
SELECT gbtree_check('rg_s', true);

-- 6. Refused (0A000): a nondeterministic collation, and a libc one other
-- than "C", "POSIX" and C.UTF-8 (whose strxfrm is not trusted; each such
-- locale the system has is tried, none taken).  C.UTF-8 is taken in this
-- UTF8 database: glibc 2.35 and later compare by code point, UTF-8's byte
-- order (collate.c checks it), so its keys are the bytes as under "C",
-- and it answers as btree under it (the whole order, ranges, = ANY; a
-- database whose default it is: TAP 013).  A long value's order key is
-- longer than its bytes, so the longest value gbtree takes is shorter
-- than under "C" (54000).
CREATE COLLATION t32_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE COLLATION t32_libc (provider = libc, locale = 'C.UTF-8');
SELECT tw_one('CREATE INDEX zg_ci ON zg USING gbtree (s COLLATE t32_ci)');
CREATE FUNCTION other_libc_taken() RETURNS int LANGUAGE plpgsql AS $$
DECLARE c record; taken int := 0;
BEGIN
  FOR c IN SELECT oid::regcollation AS coll FROM pg_collation
		   WHERE collprovider = 'c' AND collencoding IN (-1, 6)
			 AND collcollate NOT IN ('C', 'POSIX') AND collcollate !~* '^c\.utf-?8$' LOOP
	BEGIN
	  EXECUTE format('CREATE INDEX zg_other ON zg USING gbtree (v COLLATE %s)', c.coll);
	  taken := taken + 1;
	  DROP INDEX zg_other;
	EXCEPTION WHEN feature_not_supported THEN NULL;
	END;
  END LOOP;
  RETURN taken;
END $$;
SELECT other_libc_taken();
CREATE TABLE ug8 (id serial, s text COLLATE t32_libc, v varchar(60) COLLATE t32_libc);
CREATE TABLE ub8 (id serial, s text COLLATE t32_libc, v varchar(60) COLLATE t32_libc);
INSERT INTO ug8 (s, v) SELECT s, v FROM zb ORDER BY id;
INSERT INTO ug8 (s, v) SELECT s || repeat('ü', id % 40), 'https://例え.jp/パス/' || md5(id::text)
	FROM zb WHERE id % 3 = 0;
INSERT INTO ub8 SELECT * FROM ug8 ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_s ON %1$I USING %2$s (s)', 'ug8', 'ub8');
SELECT tw_both('CREATE INDEX %1$I_v ON %1$I USING %2$s (v DESC NULLS FIRST, id)', 'ug8', 'ub8');
VACUUM ANALYZE ug8, ub8;
SELECT tw_order('ug8', 'ub8', 's', 's') AS s_asc, tw_order('ug8', 'ub8', 's', 's DESC') AS s_desc,
	tw_order('ug8', 'ub8', 'v', 'v DESC NULLS FIRST') AS v_desc;
SELECT tw_diff('ug8', 'ub8', 's', 's >= ''é'' AND s < ''ü''', 's', 50) AS range_,
	tw_diff('ug8', 'ub8', 'v, id', 'v = ANY (ARRAY(SELECT v FROM ub8 WHERE id % 7 = 0)) AND id > 10',
			NULL, NULL, false) AS any_,
	tw_diff('ug8', 'ub8', 'v, id', 'v LIKE ''https://例え.jp/パス/a%''', NULL, NULL, false) AS like_;
SELECT gbtree_check('ug8_s', true), gbtree_check('ug8_v', true);
CREATE TABLE lg (t text, c text COLLATE "C");
SELECT tw_one('CREATE INDEX lg_t ON lg USING gbtree (t)');
SELECT tw_one('CREATE INDEX lg_c ON lg USING gbtree (c)');
SELECT tw_one('INSERT INTO lg VALUES (repeat(''Ünïcödé '', 20), repeat(''Ünïcödé '', 60))');
SELECT tw_one('INSERT INTO lg VALUES (repeat(''Ünïcödé '', 60), repeat(''Ünïcödé '', 60))');
SELECT count(*) FROM lg;

-- 7. Values that share a long prefix (URLs): their keys tie in the words,
-- under ICU for the whole prefix, so a scan of a long constant is bounded
-- by the constant's tail too (src/README, item 4 (c')): equality, = ANY of
-- many such values (with absent ones, duplicates, the bare prefix and,
-- under "C", a value exactly as long as the field: 'https://...path/ab'),
-- ranges both ways,
-- under ICU and "C", ascending and descending.
CREATE TABLE pg_ (id serial, i text COLLATE "und-x-icu", c text COLLATE "C");
CREATE TABLE pb_ (id serial, i text COLLATE "und-x-icu", c text COLLATE "C");
INSERT INTO pg_ (i, c)
  SELECT v, v FROM (SELECT CASE WHEN g % 50 = 0 THEN NULL
							   WHEN g % 41 = 0 THEN 'https://example.com/some/path/'
							   WHEN g % 37 = 0 THEN 'https://example.com/some/path/ab'
							   ELSE 'https://example.com/some/path/' || md5((g % 2500)::text) ||
									repeat('x', g % 7) END v
					FROM generate_series(1, 6000) g) q;
INSERT INTO pb_ SELECT * FROM pg_ ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_i ON %1$I USING %2$s (i)', 'pg_', 'pb_');
SELECT tw_both('CREATE INDEX %1$I_c ON %1$I USING %2$s (c DESC)', 'pg_', 'pb_');
VACUUM ANALYZE pg_, pb_;
CREATE TABLE p_arr AS SELECT id, i FROM pb_;
SELECT col, tw_diff('pg_', 'pb_', col, format('%s = %L', col, v)) AS eq,
	tw_diff('pg_', 'pb_', col, format('%s < %L', col, v), col || ' DESC', 40) AS lt_desc,
	tw_diff('pg_', 'pb_', col, format('%s >= %L', col, v), col, 40) AS ge,
	tw_diff('pg_', 'pb_', col, format('%s > %L AND %s <= %L', col, v, col, v || 'z'), NULL, NULL, false) AS between_
FROM unnest(ARRAY['i', 'c']) col,
	 unnest(ARRAY['https://example.com/some/path/' || md5('7') || 'xx',
				  'https://example.com/some/path/' || md5('8'),
				  'https://example.com/some/path/ab', 'https://example.com/some/path/',
				  'https://example.com/some/path/' || md5('no such'),
				  'https://example.com/some/path/ab12']) WITH ORDINALITY AS u(v, k)
ORDER BY col, k;
SELECT tw_diff('pg_', 'pb_', 'i', 'i = ANY (ARRAY(SELECT i FROM p_arr WHERE id % 11 = 0) || ARRAY[''nope'', ''https://example.com/some/path/zz'', NULL])');
SELECT tw_diff('pg_', 'pb_', 'c', 'c = ANY (ARRAY(SELECT i COLLATE "C" FROM p_arr WHERE id % 11 = 0) || ARRAY[''nope'', ''https://example.com/some/path/zz'', ''https://example.com/some/pat'', NULL])');
SELECT tw_diff('pg_', 'pb_', 'i', 'i = ANY (ARRAY(SELECT i FROM p_arr WHERE id % 13 = 0))', 'i DESC', 200);
SELECT tw_diff('pg_', 'pb_', 'c', 'c = ANY (ARRAY(SELECT i COLLATE "C" FROM p_arr WHERE id % 13 = 0))', 'c', 200);
SELECT gbtree_check('pg__i', true), gbtree_check('pg__c', true);

-- 8. The same in indexes of several columns (item 4 (c')): a condition on
-- the URL column beside equality on the columns before it (=, = ANY, IS
-- NULL) is bounded in each range by the constant's tails, ASC and DESC,
-- with INCLUDE; and the URL first, a later column beside it.
CREATE TABLE mg_ (id serial, tn int, i text COLLATE "und-x-icu", c text COLLATE "C", x int);
CREATE TABLE mb_ (id serial, tn int, i text COLLATE "und-x-icu", c text COLLATE "C", x int);
INSERT INTO mg_ (tn, i, c, x)
  SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE g % 7 END, v, v, g % 5
  FROM (SELECT g, CASE WHEN g % 50 = 0 THEN NULL
						WHEN g % 41 = 0 THEN 'https://example.com/some/path/'
						WHEN g % 37 = 0 THEN 'https://example.com/some/path/ab'
						ELSE 'https://example.com/some/path/' || md5((g % 900)::text) ||
							 repeat('x', g % 3) END v
		FROM generate_series(1, 6000) g) q;
INSERT INTO mb_ SELECT * FROM mg_ ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_ti ON %1$I USING %2$s (tn, i)', 'mg_', 'mb_');
SELECT tw_both('CREATE INDEX %1$I_tc ON %1$I USING %2$s (tn DESC, c DESC) INCLUDE (x)', 'mg_', 'mb_');
CREATE TABLE ng_ AS SELECT * FROM mg_;
CREATE TABLE nb_ AS SELECT * FROM mb_;
SELECT tw_both('CREATE INDEX %1$I_ix ON %1$I USING %2$s (i, x)', 'ng_', 'nb_');
SELECT tw_both('CREATE INDEX %1$I_cx ON %1$I USING %2$s (c DESC, x)', 'ng_', 'nb_');
VACUUM ANALYZE mg_, mb_, ng_, nb_;
SELECT col, tw_diff('mg_', 'mb_', 'tn, ' || col, format('tn = 3 AND %s = %L', col, v)) AS eq,
	tw_diff('mg_', 'mb_', 'tn, ' || col, format('tn = ANY (ARRAY[1, 3, 6]) AND %s >= %L', col, v),
			NULL, NULL, false) AS any_ge,
	tw_diff('mg_', 'mb_', 'tn, ' || col, format('tn = 2 AND %s < %L', col, v),
			col || ' DESC', 40) AS lt_desc,
	tw_diff('mg_', 'mb_', 'tn, ' || col, format('tn IS NULL AND %s > %L', col, v), col, 40) AS null_gt,
	tw_diff('mg_', 'mb_', 'tn, ' || col, format('tn = 4 AND %s <= %L', col, v), NULL, NULL, false) AS le,
	tw_diff('mg_', 'mb_', 'tn, ' || col, format('tn = 5 AND %s > %L AND %s <= %L', col, v, col, v || 'z'),
			NULL, NULL, false) AS between_,
	tw_diff('ng_', 'nb_', col || ', x', format('%s = %L AND x = 2', col, v)) AS first_eq,
	tw_diff('ng_', 'nb_', col || ', x', format('%s > %L AND x > 1', col, v), NULL, NULL, false) AS first_gt
FROM unnest(ARRAY['i', 'c']) col,
	 unnest(ARRAY['https://example.com/some/path/' || md5('7') || 'xx',
				  'https://example.com/some/path/' || md5('8'),
				  'https://example.com/some/path/ab', 'https://example.com/some/path/',
				  'https://example.com/some/path/' || md5('no such'),
				  'https://example.com/some/path/ab12',
				  'https://example.com/some/path/' || md5('10') || 'x',
				  'https://example.com/some/path/' || md5('12')]) WITH ORDINALITY AS u(v, k)
ORDER BY col, k;
-- LIKE of a prefix longer than the field: >= and < on one column
SELECT p, tw_diff('mg_', 'mb_', 'tn, c', p, NULL, NULL, false) AS twin,
	tw_diff('ng_', 'nb_', 'c, x', replace(p, 'tn = ANY (ARRAY[2, 4]) AND ', ''), NULL, NULL, false) AS first
FROM unnest(ARRAY['tn = ANY (ARRAY[2, 4]) AND c LIKE ''https://example.com/some/path/a%''',
				  'tn = ANY (ARRAY[2, 4]) AND c LIKE ''https://example.com/some/path/' || left(md5('7'), 6) || '%''',
				  'tn = ANY (ARRAY[2, 4]) AND c LIKE ''https://example.com/some/path/' || md5('8') || '%''',
				  'tn = ANY (ARRAY[2, 4]) AND c BETWEEN ''https://example.com/some/path/1'' AND ''https://example.com/some/path/3''',
				  'tn = ANY (ARRAY[2, 4]) AND c > ''https://example.com/some/path/1'' AND c <= ''https://example.com/some/path/' || md5('16') || 'x''']) AS u(p);
SELECT tw_diff('mg_', 'mb_', 'tn, i', 'tn = ANY (ARRAY[2, 4]) AND i > ''https://example.com/some/path/1'' AND i <= ''https://example.com/some/path/' || md5('16') || 'x''', NULL, NULL, false) AS asc_le,
	tw_diff('ng_', 'nb_', 'i, x', 'i >= ''https://example.com/some/path/' || md5('16') || 'x'' AND i < ''https://example.com/some/path/d''', NULL, NULL, false) AS first_ge,
	tw_diff('ng_', 'nb_', 'i, x', 'i > ''https://example.com/some/path/1'' AND i <= ''https://example.com/some/path/' || md5('16') || 'x''', NULL, NULL, false) AS first_le;
-- = ANY of URLs beside the columns before them (=, = ANY, IS NULL): each
-- element its own range, cut by its tails (range_tails_any), in index
-- order both ways; elements absent, repeated, NULL, short, the bare
-- prefix, exactly the field's length under "C"; with one past the longest
-- tail, the range stays whole; many elements on one leaf, read again for
-- the next range rather than descended to (reread_leaf)
CREATE TABLE m_arr AS SELECT id, i FROM mb_ WHERE i IS NOT NULL;
CREATE FUNCTION m_any(col text) RETURNS text LANGUAGE sql AS $f$
SELECT format('ARRAY(SELECT i COLLATE %s FROM m_arr WHERE id %% 23 = 0) || ARRAY[%s]',
	CASE col WHEN 'i' THEN '"und-x-icu"' ELSE '"C"' END,
	$$'nope', NULL, 'https://example.com/some/path/', 'https://example.com/some/path/ab',
	'https://example.com/some/path/zz', 'https://example.com/some/pat',
	'https://example.com/some/path/' || md5('8'), 'https://example.com/some/path/' || md5('8')$$)
$f$;
SELECT col, w, tw_diff('mg_', 'mb_', 'tn, ' || col, format('%s AND %s = ANY (%s)', w, col, m_any(col)),
			NULL, NULL, false) AS any_,
	tw_diff('mg_', 'mb_', 'tn, ' || col, format('%s AND %s = ANY (%s)', w, col, m_any(col)),
			format('tn DESC, %s DESC', col), NULL, false) AS desc_,
	tw_diff('mg_', 'mb_', 'tn, ' || col, format('%s AND %s = ANY (%s)', w, col, m_any(col)),
			format('tn, %s', col), 300, false) AS asc_
FROM unnest(ARRAY['i', 'c']) col,
	 unnest(ARRAY['tn = 3', 'tn = ANY (ARRAY[1, 3, 6, NULL])', 'tn IS NULL', 'tn >= 5']) WITH ORDINALITY AS t(w, tk)
ORDER BY col, tk;
SELECT col, tw_diff('mg_', 'mb_', 'tn, ' || col,
			format('tn = 3 AND %s = ANY (%s || ARRAY[repeat(''https://example.com/some/path/'', 90)])',
				   col, m_any(col)), NULL, NULL, false) AS past_longest_tail
FROM unnest(ARRAY['i', 'c']) col;
SELECT tw_diff('ng_', 'nb_', 'i, x', 'i = ANY (ARRAY(SELECT i FROM m_arr WHERE id % 5 = 0)) AND x = 2',
			NULL, NULL, false) AS first_any,
	tw_diff('ng_', 'nb_', 'c, x', 'c = ANY (ARRAY(SELECT i COLLATE "C" FROM m_arr WHERE id % 5 = 0)) AND x = ANY (ARRAY[1, 4])',
			NULL, NULL, false) AS first_any_desc;
SELECT gbtree_check('mg__ti', true), gbtree_check('mg__tc', true),
	gbtree_check('ng__ix', true), gbtree_check('ng__cx', true);
-- a text column before the URL's (slug, URL): bounded where the slug is
-- one value shorter than its field (its words hold all of it), left whole
-- where it fills the field (it may be cut there: a long slug, and under
-- ICU most, whose order key is longer than its bytes); "C", C.UTF-8, ICU
CREATE TABLE sg8 (id serial, sc text COLLATE "C", uc text COLLATE "C",
	s8 text COLLATE t32_libc, u8 text COLLATE t32_libc,
	si text COLLATE "und-x-icu", ui text COLLATE "und-x-icu");
CREATE TABLE sb8 (LIKE sg8);
INSERT INTO sg8 (sc, uc, s8, u8, si, ui)
  SELECT s, u, s, u, s, u
  FROM (SELECT CASE WHEN g % 53 = 0 THEN NULL WHEN g % 11 = 0 THEN 'a-tenant-slug-longer-than-its-field-' || g % 3
					WHEN g % 13 = 0 THEN 'é' || g % 4 ELSE 'tenant-' || g % 9 END s,
			   CASE WHEN g % 47 = 0 THEN NULL
					ELSE 'https://example.com/some/path/' || md5((g % 700)::text) || repeat('x', g % 3) END u
		FROM generate_series(1, 5000) g) q;
INSERT INTO sb8 SELECT * FROM sg8 ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_c ON %1$I USING %2$s (sc, uc)', 'sg8', 'sb8');
SELECT tw_both('CREATE INDEX %1$I_8 ON %1$I USING %2$s (s8 DESC, u8 DESC)', 'sg8', 'sb8');
SELECT tw_both('CREATE INDEX %1$I_i ON %1$I USING %2$s (si, ui)', 'sg8', 'sb8');
VACUUM ANALYZE sg8, sb8;
SELECT k, tw_diff('sg8', 'sb8', replace(replace('@S, @U', '@S', 's' || k), '@U', 'u' || k),
				  replace(replace(w, '@S', 's' || k), '@U', 'u' || k), NULL, NULL, false) AS twin
FROM unnest(ARRAY['c', '8', 'i']) k,
	 unnest(ARRAY['@S = ''tenant-1'' AND @U = ''https://example.com/some/path/'' || md5(''12'') || ''x''',
				  '@S = ANY (ARRAY[''tenant-1'', ''tenant-4'', ''é2'', NULL]) AND @U = ANY (ARRAY(SELECT @U FROM sb8 WHERE id % 9 = 0))',
				  '@S = ''tenant-5'' AND @U >= ''https://example.com/some/path/'' || md5(''30'')',
				  '@S = ''tenant-5'' AND @U < ''https://example.com/some/path/'' || md5(''30'')',
				  '@S = ''a-tenant-slug-longer-than-its-field-2'' AND @U = ''https://example.com/some/path/'' || md5(''532'') || ''xx''',
				  '@S IS NULL AND @U > ''https://example.com/some/path/8''',
				  '@S = ''é1'' AND @U LIKE ''https://example.com/some/path/c%''']) WITH ORDINALITY AS q(w, n)
ORDER BY k, n;
SELECT gbtree_check('sg8_c', true), gbtree_check('sg8_8', true), gbtree_check('sg8_i', true);
-- and unique indexes over such values: a key's check reads that key's
-- entries, not every URL that shares its words; each duplicate gives
-- 23505 and each new key goes in, as in btree (ICU with INCLUDE, "C" DESC)
CREATE TABLE ug_ (tn int, v text COLLATE "und-x-icu", x int);
CREATE TABLE ub_ (tn int, v text COLLATE "und-x-icu", x int);
CREATE TABLE vg_ (tn int, v text COLLATE "C", x int);
CREATE TABLE vb_ (tn int, v text COLLATE "C", x int);
SELECT tw_both('CREATE UNIQUE INDEX %1$I_tv ON %1$I USING %2$s (tn, v) INCLUDE (x)', 'ug_', 'ub_');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_v ON %1$I USING %2$s (v DESC) INCLUDE (tn)', 'vg_', 'vb_');
CREATE FUNCTION uq_load(t text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE ok int := 0; dup int := 0;
BEGIN
  FOR g IN 1..2500 LOOP
    BEGIN
      EXECUTE format('INSERT INTO %I VALUES ($1, $2, $3)', t)
        USING g % 4 / 2, 'https://example.com/some/path/' || md5((g % 1100)::text) || repeat('x', g % 2), g;
      ok := ok + 1;
    EXCEPTION WHEN unique_violation THEN dup := dup + 1;
    END;
  END LOOP;
  RETURN ok || ' ok, ' || dup || ' 23505';
END $f$;
SELECT uq_load('ug_') AS ug, uq_load('ub_') AS ub, uq_load('vg_') AS vg, uq_load('vb_') AS vb;
SELECT tw_diff('ug_', 'ub_', 'tn, v, x', 'tn = 1 AND v >= ''https://example.com/some/path/8''', NULL, NULL, false),
	tw_diff('vg_', 'vb_', 'v, tn', 'v < ''https://example.com/some/path/4''', NULL, NULL, false);
SELECT gbtree_check('ug__tv', true), gbtree_check('vg__v', true);

\c :regdb
DROP DATABASE gbtree_t32_icu;
