--
-- t51_domains: columns of a domain type.  A domain's values are its base
-- type's, and btree indexes them through the base type's operator class;
-- gbtree takes the base type's keys (gbt_column_type).  A domain over
-- numeric without a scale keeps each value's display scale, so its index
-- does not return values (index-only scans), as for numeric itself.
-- Every query runs on a gbtree table and on its btree twin, under forced
-- index, index-only and bitmap scans, against a sequential scan.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

CREATE DOMAIN d_posint AS int8 CHECK (VALUE > 0);
CREATE DOMAIN d_email AS text COLLATE "C" CHECK (VALUE LIKE '%@%');
CREATE DOMAIN d_code AS varchar(12);
CREATE DOMAIN d_id AS uuid;
CREATE DOMAIN d_amount AS numeric;
CREATE DOMAIN d_money2 AS numeric(12, 2);
CREATE DOMAIN d_ratio AS float8;
CREATE DOMAIN d_at AS timestamptz NOT NULL DEFAULT '2020-01-01 00:00+00';
-- a domain over a domain
CREATE DOMAIN d_small AS d_posint CHECK (VALUE < 100000);

CREATE TABLE dg (id int4, a d_posint, e d_email, c d_code, u d_id, n d_amount,
				 m d_money2, r d_ratio, t d_at, s d_small);
CREATE TABLE db (LIKE dg);
INSERT INTO dg (id, a, e, c, u, n, m, r, t, s)
SELECT g,
	   CASE WHEN g % 17 = 0 THEN NULL ELSE g * 7 END,
	   CASE WHEN g % 19 = 0 THEN NULL WHEN g % 5 = 0 THEN repeat('x', 30) || g || '@long.example'
			ELSE 'u' || g || '@x' END,
	   CASE WHEN g % 23 = 0 THEN NULL WHEN g % 7 = 0 THEN '' ELSE 'c' || (g % 300) END,
	   CASE WHEN g = 1 THEN '00000000-0000-0000-0000-000000000000'
			WHEN g = 2 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
			WHEN g % 29 = 0 THEN NULL ELSE md5(g::text)::uuid END,
	   CASE WHEN g % 31 = 0 THEN NULL WHEN g % 3 = 0 THEN (g % 50)::numeric(10, 3)
			WHEN g % 3 = 1 THEN (g % 50)::numeric ELSE 'NaN' END,
	   CASE WHEN g % 37 = 0 THEN NULL ELSE (g % 1000) / 3.0 END,
	   CASE WHEN g % 41 = 0 THEN NULL WHEN g % 11 = 0 THEN 'NaN' WHEN g % 11 = 1 THEN '-0'
			WHEN g % 11 = 2 THEN 'Infinity' WHEN g % 11 = 3 THEN '-Infinity' ELSE g / 9.0 END,
	   '2020-01-01 00:00+00'::timestamptz + (g % 400) * interval '1 hour',
	   CASE WHEN g % 43 = 0 THEN NULL ELSE 1 + g % 500 END
FROM generate_series(1, 6000) g;
INSERT INTO db SELECT * FROM dg ORDER BY id;

SELECT tw_both('CREATE INDEX %1$I_a ON %1$I USING %2$s (a)', 'dg', 'db');
SELECT tw_both('CREATE INDEX %1$I_e ON %1$I USING %2$s (e)', 'dg', 'db');
SELECT tw_both('CREATE INDEX %1$I_c ON %1$I USING %2$s (c DESC)', 'dg', 'db');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_u ON %1$I USING %2$s (u)', 'dg', 'db');
SELECT tw_both('CREATE INDEX %1$I_n ON %1$I USING %2$s (n)', 'dg', 'db');
SELECT tw_both('CREATE INDEX %1$I_m ON %1$I USING %2$s (m) INCLUDE (s)', 'dg', 'db');
SELECT tw_both('CREATE INDEX %1$I_r ON %1$I USING %2$s (r)', 'dg', 'db');
SELECT tw_both('CREATE INDEX %1$I_ts ON %1$I USING %2$s (t, s)', 'dg', 'db');
VACUUM ANALYZE dg, db;

-- the key order of each: the whole table in index order, rows that differ
SELECT tw_order('dg', 'db', 'a', 'a');
SELECT tw_order('dg', 'db', 'e', 'e');
SELECT tw_order('dg', 'db', 'c', 'c DESC');
SELECT tw_order('dg', 'db', 'u', 'u');
SELECT tw_order('dg', 'db', 'm', 'm');
SELECT tw_order('dg', 'db', 'r', 'r');
SELECT tw_order('dg', 'db', 't, s', 't, s');

SELECT tw_diff('dg', 'db', 'a', 'a = 70');
SELECT tw_diff('dg', 'db', 'a', 'a BETWEEN 100 AND 2000', 'a', 50);
SELECT tw_diff('dg', 'db', 'a', 'a = ANY (''{7,14,21,119,7000000}''::d_posint[])');
SELECT tw_diff('dg', 'db', 'a', 'a IS NULL');
SELECT tw_diff('dg', 'db', 'e', 'e > ''u5''', 'e', 100);
SELECT tw_diff('dg', 'db', 'e', 'e = ''u77@x''');
SELECT tw_diff('dg', 'db', 'e', 'e LIKE ''xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx1%''');
SELECT tw_diff('dg', 'db', 'e', 'e = ''xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx25@long.example''');
SELECT tw_diff('dg', 'db', 'c', 'c = ''''');
SELECT tw_diff('dg', 'db', 'c', 'c < ''c2''', 'c DESC', 80);
SELECT tw_diff('dg', 'db', 'u', 'u = ''00000000-0000-0000-0000-000000000000'' OR u = ''ffffffff-ffff-ffff-ffff-ffffffffffff''');
SELECT tw_diff('dg', 'db', 'u', 'u > ''fe000000-0000-0000-0000-000000000000''', 'u', 50);
SELECT tw_diff('dg', 'db', 'u', 'u = ANY (''{00000000-0000-0000-0000-000000000000,ffffffff-ffff-ffff-ffff-ffffffffffff,NULL}''::d_id[])');
-- arrays of a domain's values, long enough for the batched scans
SELECT tw_diff('dg', 'db', 'a', 'a = ANY (ARRAY(SELECT (g * 7)::d_posint FROM generate_series(1, 20000, 3) g))', NULL, NULL, false);
SELECT tw_diff('dg', 'db', 'u', 'u = ANY (ARRAY(SELECT md5(g::text)::d_id FROM generate_series(1, 20000, 3) g))', NULL, NULL, false);
SET enable_seqscan = off;
SELECT (SELECT count(*) FROM dg WHERE a = ANY (ARRAY(SELECT (g * 7)::d_posint FROM generate_series(1, 20000) g))) =
	   (SELECT count(*) FROM db WHERE a = ANY (ARRAY(SELECT (g * 7)::d_posint FROM generate_series(1, 20000) g))) AS count_a_same,
	   (SELECT count(*) FROM dg WHERE u = ANY (ARRAY(SELECT md5(g::text)::d_id FROM generate_series(1, 20000) g))) =
	   (SELECT count(*) FROM db WHERE u = ANY (ARRAY(SELECT md5(g::text)::d_id FROM generate_series(1, 20000) g))) AS count_u_same;
RESET enable_seqscan;
-- numeric without a scale: 2, 2.0 and 2.000 are equal, and print apart
SELECT tw_diff('dg', 'db', 'n', 'n = 2', NULL, NULL, false);
SELECT tw_diff('dg', 'db', 'n', 'n BETWEEN 10 AND 12.5', 'n', 100, false);
SELECT tw_diff('dg', 'db', 'n', 'n = ''NaN''', NULL, NULL, false);
SELECT tw_diff('dg', 'db', 'm, s', 'm > 300', 'm', 60);
SELECT tw_diff('dg', 'db', 'r', 'r = 0');
SELECT tw_diff('dg', 'db', 'r', 'r = ''NaN'' OR r IS NULL');
SELECT tw_diff('dg', 'db', 'r', 'r >= ''Infinity'' OR r <= ''-Infinity''');
SELECT tw_diff('dg', 'db', 't, s', 't = ''2020-01-02 00:00+00'' AND s > 200');
SELECT tw_diff('dg', 'db', 't, s', 't < ''2020-01-01 05:00+00''', 't, s', 40);

-- index-only scans: returned for every domain but the unscaled numeric
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM dg WHERE n > 40;
EXPLAIN (COSTS OFF) SELECT m FROM dg WHERE m > 300;
EXPLAIN (COSTS OFF) SELECT e FROM dg WHERE e > 'u9';
SELECT n::text, count(*) FROM dg WHERE n = 2 GROUP BY 1 ORDER BY 1;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- writes: the domain's checks come first, the unique index's after
SELECT tw_both('INSERT INTO %1$I (id, a, e, u) VALUES (0, 5, ''x@y'', ''00000000-0000-0000-0000-000000000000'')', 'dg', 'db');
SELECT tw_both('INSERT INTO %1$I (id, a, e) VALUES (0, -5, ''x@y'')', 'dg', 'db');
SELECT tw_both('INSERT INTO %1$I (id, a, e, u) SELECT g, g, ''n'' || g || ''@n'', md5(g::text)::uuid FROM generate_series(100001, 103000) g', 'dg', 'db');
SELECT tw_both('UPDATE %1$I SET e = ''moved@x'', a = a + 1 WHERE id %% 10 = 0', 'dg', 'db');
SELECT tw_both('DELETE FROM %1$I WHERE id %% 7 = 3', 'dg', 'db');
VACUUM dg, db;
SELECT tw_diff('dg', 'db', 'a', 'a > 100000', 'a', 100);
SELECT tw_diff('dg', 'db', 'e', 'e = ''moved@x''');
SELECT tw_order('dg', 'db', 'a', 'a');
SELECT tw_order('dg', 'db', 'e', 'e');
SELECT gbtree_check('dg_a', true), gbtree_check('dg_e', true), gbtree_check('dg_u', true),
	   gbtree_check('dg_n', true), gbtree_check('dg_ts', true);

-- a join on domain keys
CREATE TABLE probe (x d_posint);
INSERT INTO probe SELECT g * 7 FROM generate_series(1, 300) g;
ANALYZE probe;
SELECT (SELECT count(*) || ':' || sum(p.x) || ':' || sum(dg.id) FROM probe p JOIN dg ON dg.a = p.x) =
	   (SELECT count(*) || ':' || sum(p.x) || ':' || sum(db.id) FROM probe p JOIN db ON db.a = p.x) AS join_same,
	   (SELECT count(*) FROM probe p WHERE p.x IN (SELECT a FROM dg)) =
	   (SELECT count(*) FROM probe p WHERE p.x IN (SELECT a FROM db)) AS semi_same;
-- and GbtreeJoin taking them (the core's joins off)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
-- (the plan's node, not its Join Cond, whose sides 17 prints the other way)
CREATE FUNCTION plan_has(q text, node text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	ln text;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF strpos(ln, node) > 0 THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END;
$$;
SELECT plan_has('SELECT count(*) FROM probe p JOIN dg ON dg.a = p.x', 'Custom Scan (GbtreeJoin)') AS gbtree_join_planned;
SELECT (SELECT count(*) || ':' || sum(p.x) || ':' || sum(dg.id) FROM probe p JOIN dg ON dg.a = p.x) =
	   (SELECT count(*) || ':' || sum(p.x) || ':' || sum(db.id) FROM probe p JOIN db ON db.a = p.x) AS gbtree_join_same;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;

DROP TABLE dg, db, probe;
DROP FUNCTION plan_has(text, text);
DROP DOMAIN d_small, d_posint, d_email, d_code, d_id, d_amount, d_money2, d_ratio, d_at;
