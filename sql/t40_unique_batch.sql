--
-- batched inserts into unique indexes (src/README, "Unique
-- indexes"): each entry is checked as it comes, against the stored ones,
-- and again where the statement's flush puts it in; so a duplicate of a
-- stored row fails at its row, and a key a statement makes twice fails at
-- the statement's end, with btree's error either way.  Every statement
-- runs on a gbtree table and on its btree twin (tw_both), with uuid, text
-- (long common prefixes) and (int8, int4) NULLS NOT DISTINCT keys; the
-- twins are compared row for row at the end, under forced scans.  (A
-- statement that makes several keys twice may name another of them than
-- btree does: its checks at the end go index by index, in key order.)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

CREATE TABLE uba (id int, u uuid, s text COLLATE "C", k int8, c int4);
CREATE TABLE ubb (LIKE uba);
CREATE TABLE ubc (LIKE uba);	-- gbtree, loaded with batching off
CREATE FUNCTION ubrows(lo int, hi int) RETURNS SETOF uba
LANGUAGE sql AS $$
  SELECT g,
		 CASE WHEN g = 1 THEN '00000000-0000-0000-0000-000000000000'
			  WHEN g = 2 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
			  WHEN g % 97 = 0 THEN NULL
			  ELSE md5(g::text)::uuid END,
		 CASE WHEN g = 3 THEN '' WHEN g % 89 = 0 THEN NULL
			  WHEN g % 53 = 0 THEN repeat('p', 40) || md5(g::text)
			  ELSE substr(md5(g::text), 1, 12) || '@example.com' END,
		 CASE g % 83 WHEN 0 THEN NULL ELSE g % 50 END,
		 g
  FROM generate_series(lo, hi) g
$$;
SELECT tw_both('CREATE UNIQUE INDEX %1$I_u ON %1$I USING %2$s (u)', 'uba', 'ubb');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_s ON %1$I USING %2$s (s)', 'uba', 'ubb');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_kc ON %1$I USING %2$s (k, c) NULLS NOT DISTINCT', 'uba', 'ubb');
CREATE UNIQUE INDEX ubc_u ON ubc USING gbtree (u);
CREATE UNIQUE INDEX ubc_s ON ubc USING gbtree (s);
CREATE UNIQUE INDEX ubc_kc ON ubc USING gbtree (k, c) NULLS NOT DISTINCT;

-- 1. Into the empty indexes, one statement each: the same rows; batched,
-- the pages are filled as a build fills them, fewer than one insert at a
-- time leaves
SELECT tw_both('INSERT INTO %1$I SELECT * FROM ubrows(1, 20000)', 'uba', 'ubb');
SET gbtree.insert_batch_memory = 0;
INSERT INTO ubc SELECT * FROM ubrows(1, 20000);
RESET gbtree.insert_batch_memory;
SELECT pg_relation_size('uba_u') < pg_relation_size('ubc_u') * 0.85 AS u_fewer_pages,
	   pg_relation_size('uba_kc') < pg_relation_size('ubc_kc') * 0.85 AS kc_fewer_pages;
SELECT gbtree_check('uba_u', true), gbtree_check('uba_s', true), gbtree_check('uba_kc', true);

-- 2. Duplicates of stored rows, at their row; keys a statement makes
-- twice (at its end, the second a statement's last row or its first
-- after many), updates that meet the next row's key, the same key
-- deleted and inserted by one statement
SELECT tw_both('INSERT INTO %1$I VALUES (900001, md5(''5000'')::uuid, ''n1'', 1, -1)', 'uba', 'ubb');
SELECT tw_both('INSERT INTO %1$I VALUES (900002, NULL, ''''::text, 1, -2)', 'uba', 'ubb');
SELECT tw_both('INSERT INTO %1$I SELECT * FROM ubrows(30001, 31000) UNION ALL SELECT 900003, md5(''30500'')::uuid, ''n3'', 1, -3', 'uba', 'ubb');
SELECT tw_both('INSERT INTO %1$I SELECT 900004, md5(''30002'')::uuid, ''n4'', 1, -4 UNION ALL SELECT * FROM ubrows(30001, 31000)', 'uba', 'ubb');
SELECT tw_both('INSERT INTO %1$I SELECT * FROM ubrows(32001, 33000) UNION ALL SELECT 900005, md5(''x900005'')::uuid, repeat(''p'', 40) || md5(''32065''), 1, -5', 'uba', 'ubb');
SELECT tw_both('INSERT INTO %1$I SELECT * FROM ubrows(34001, 35000) UNION ALL SELECT 900006, md5(''x900006'')::uuid, ''n6'', NULL, 34030', 'uba', 'ubb');
SELECT tw_both('UPDATE %1$I SET u = md5((id + 1)::text)::uuid WHERE id BETWEEN 1000 AND 1010', 'uba', 'ubb');
SELECT tw_both('UPDATE %1$I SET s = s || ''.x'' WHERE id BETWEEN 1000 AND 3000', 'uba', 'ubb');
SELECT tw_both('WITH d AS (DELETE FROM %1$I WHERE id = 4000 RETURNING *) INSERT INTO %1$I SELECT 904000, u, s, k, c FROM d', 'uba', 'ubb');
SELECT tw_both('INSERT INTO %1$I SELECT * FROM ubrows(40001, 50000)', 'uba', 'ubb');
-- keys moved onto each other's by one UPDATE (rows met in heap order):
-- each fails at its row, as btree's, whether it is the statement's first
-- row or a later one; checked only at the statement's end, both would go
-- through (the rows holding the keys are updated by then)
SELECT tw_both('INSERT INTO %1$I (id, u, k, c) SELECT id, u::uuid, 91, id FROM (VALUES (910001, ''cccccccc-0000-0000-0000-000000000011''), (910002, ''cccccccc-0000-0000-0000-000000000012''), (910003, ''cccccccc-0000-0000-0000-000000000020''), (910004, ''cccccccc-0000-0000-0000-000000000021''), (910005, ''cccccccc-0000-0000-0000-000000000022'')) v (id, u)', 'uba', 'ubb');
SELECT tw_both('UPDATE %1$I SET u = CASE id WHEN 910001 THEN ''cccccccc-0000-0000-0000-000000000012''::uuid ELSE ''cccccccc-0000-0000-0000-000000000013'' END WHERE id IN (910001, 910002)', 'uba', 'ubb');
SELECT tw_both('UPDATE %1$I SET u = CASE id WHEN 910003 THEN ''cccccccc-0000-0000-0000-000000000030''::uuid WHEN 910004 THEN ''cccccccc-0000-0000-0000-000000000022'' ELSE ''cccccccc-0000-0000-0000-000000000023'' END WHERE id IN (910003, 910004, 910005)', 'uba', 'ubb');
-- NULLs are distinct, but for (k, c) NULLS NOT DISTINCT
SELECT tw_both('INSERT INTO %1$I VALUES (900007, NULL, NULL, 7, 900007), (900008, NULL, NULL, 8, 900008)', 'uba', 'ubb');
SELECT tw_both('INSERT INTO %1$I VALUES (900009, NULL, NULL, NULL, -9), (900010, NULL, NULL, NULL, -9)', 'uba', 'ubb');

-- 3. In one transaction: a key taken by an earlier statement, a key given
-- back by ROLLBACK TO and taken again, a handler catching 23505
BEGIN;
SELECT tw_both('INSERT INTO %1$I SELECT * FROM ubrows(60001, 60100)', 'uba', 'ubb');
SELECT tw_both('INSERT INTO %1$I VALUES (900011, md5(''60050'')::uuid, ''n11'', 1, -11)', 'uba', 'ubb');
SAVEPOINT a;
SELECT tw_both('INSERT INTO %1$I SELECT * FROM ubrows(60101, 60200)', 'uba', 'ubb');
ROLLBACK TO a;
SELECT tw_both('INSERT INTO %1$I SELECT * FROM ubrows(60101, 60200)', 'uba', 'ubb');
SELECT tw_both('DO $$ DECLARE n int := 0; BEGIN FOR i IN 60190..60210 LOOP
  BEGIN INSERT INTO %1$I SELECT * FROM ubrows(i, i); EXCEPTION WHEN unique_violation THEN n := n + 1; END;
END LOOP; RAISE NOTICE ''%% conflicts'', n; END $$', 'uba', 'ubb');
COMMIT;
-- the last DO's conflicts, on each twin: rows 60190..60200 were there
SELECT count(*) FILTER (WHERE id BETWEEN 60190 AND 60210) AS g_rows FROM uba;
SELECT count(*) FILTER (WHERE id BETWEEN 60190 AND 60210) AS b_rows FROM ubb;

-- 4. COPY: a key twice in the data, a key of a stored row (md5('5000')), new keys
COPY uba FROM stdin;
900012	aaaaaaaa-0000-0000-0000-000000000001	n12	1	-12
900013	aaaaaaaa-0000-0000-0000-000000000001	n13	1	-13
\.
COPY ubb FROM stdin;
900012	aaaaaaaa-0000-0000-0000-000000000001	n12	1	-12
900013	aaaaaaaa-0000-0000-0000-000000000001	n13	1	-13
\.
COPY uba FROM stdin;
900014	aaaaaaaa-0000-0000-0000-000000000002	n14	1	-14
900015	a35fe7f7-fe82-17b4-369a-0af4244d1fca	n15	1	-15
\.
COPY ubb FROM stdin;
900014	aaaaaaaa-0000-0000-0000-000000000002	n14	1	-14
900015	a35fe7f7-fe82-17b4-369a-0af4244d1fca	n15	1	-15
\.
COPY uba FROM stdin;
900016	aaaaaaaa-0000-0000-0000-000000000003	n16	1	-16
900017	bbbbbbbb-0000-0000-0000-000000000003	n17	1	-17
\.
COPY ubb FROM stdin;
900016	aaaaaaaa-0000-0000-0000-000000000003	n16	1	-16
900017	bbbbbbbb-0000-0000-0000-000000000003	n17	1	-17
\.

-- 5. The twins, row for row, under every kind of scan
VACUUM ANALYZE uba, ubb;
SELECT gbtree_check('uba_u', true), gbtree_check('uba_s', true), gbtree_check('uba_kc', true);
SELECT tw_diff('uba', 'ubb', 'id, u, s, k, c', 'u IS NOT NULL', plans => false);
SELECT tw_diff('uba', 'ubb', 'id, u, s, k, c', 'u BETWEEN ''40000000-0000-0000-0000-000000000000'' AND ''48000000-0000-0000-0000-000000000000''');
SELECT tw_diff('uba', 'ubb', 'id, s', 's >= ''pppp''', plans => false);
SELECT tw_diff('uba', 'ubb', 'id, k, c', 'k = 7', plans => false);
SELECT tw_diff('uba', 'ubb', 'id, k, c', 'k IS NULL', plans => false);
SELECT tw_order('uba', 'ubb', 'u', 'u');
SELECT tw_order('uba', 'ubb', 's', 's');
SELECT (SELECT count(*) FROM uba) AS g_rows, (SELECT count(*) FROM ubb) AS b_rows;

DROP FUNCTION ubrows(int, int);
DROP TABLE uba, ubb, ubc;

-- 6. One-word keys (a bigint key, -0.0 and NaN of a float8 one): the same
-- batch, checked as it comes and again where the flush puts it in
CREATE TABLE u1a (id int, k int8, f float8);
CREATE TABLE u1b (LIKE u1a);
CREATE TABLE u1c (LIKE u1a);	-- gbtree, loaded with batching off
SELECT tw_both('CREATE UNIQUE INDEX %1$I_k ON %1$I USING %2$s (k)', 'u1a', 'u1b');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_f ON %1$I USING %2$s (f DESC)', 'u1a', 'u1b');
CREATE UNIQUE INDEX u1c_k ON u1c USING gbtree (k);
SELECT tw_both('INSERT INTO %1$I SELECT g, CASE g WHEN 1 THEN -9223372036854775808 WHEN 2 THEN 9223372036854775807 ELSE hashint8(g) * 4294967296 + g END, CASE WHEN g %% 101 = 0 THEN NULL ELSE g * 1.5 END FROM generate_series(1, 20000) g', 'u1a', 'u1b');
SET gbtree.insert_batch_memory = 0;
INSERT INTO u1c SELECT * FROM u1a;
RESET gbtree.insert_batch_memory;
SELECT pg_relation_size('u1a_k') < pg_relation_size('u1c_k') * 0.9 AS k_fewer_pages;
SELECT tw_both('INSERT INTO %1$I VALUES (900001, 9223372036854775807, -1)', 'u1a', 'u1b');
SELECT tw_both('INSERT INTO %1$I SELECT g + 100000, g + 100000, NULL::float8 FROM generate_series(1, 500) g UNION ALL SELECT 900002, 100250, NULL::float8', 'u1a', 'u1b');
SELECT tw_both('INSERT INTO %1$I SELECT g + 200000, g + 200000, NULL::float8 FROM generate_series(1, 500) g UNION ALL SELECT 900003, 7, ''NaN''::float8', 'u1a', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (900004, 1, ''1e200''), (900005, 2, ''-0''), (900006, 3, ''0'')', 'u1a', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (900007, 4, ''NaN''), (900008, 5, ''1''), (900009, 6, ''NaN'')', 'u1a', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (900018, 11, 1e300), (900019, 12, ''-0''), (900010, 13, ''Infinity''), (900011, 14, ''-Infinity'')', 'u1a', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (900012, 15, ''0'')', 'u1a', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (900013, 21, NULL), (900014, 22, NULL), (900015, 23, NULL)', 'u1a', 'u1b');
SELECT tw_both('UPDATE %1$I SET k = CASE id WHEN 900013 THEN 22 ELSE 24 END WHERE id IN (900013, 900014)', 'u1a', 'u1b');
SELECT tw_both('UPDATE %1$I SET k = CASE id WHEN 900013 THEN 30 WHEN 900014 THEN 23 ELSE 31 END WHERE id IN (900013, 900014, 900015)', 'u1a', 'u1b');
SELECT tw_both('UPDATE %1$I SET k = k + 1000 WHERE id IN (900013, 900014, 900015)', 'u1a', 'u1b');
COPY u1a FROM stdin;
900016	41	\N
900017	41	\N
\.
COPY u1b FROM stdin;
900016	41	\N
900017	41	\N
\.
VACUUM ANALYZE u1a, u1b;
SELECT gbtree_check('u1a_k', true), gbtree_check('u1a_f', true);
SELECT tw_diff('u1a', 'u1b', 'id, k, f', 'k IS NOT NULL', plans => false);
SELECT tw_diff('u1a', 'u1b', 'id, k, f', 'k BETWEEN 0 AND 1000000000000000');
SELECT tw_diff('u1a', 'u1b', 'id, f', 'f > 100 OR f = ''NaN'' OR f = 0', plans => false);
SELECT tw_order('u1a', 'u1b', 'k', 'k');
SELECT tw_order('u1a', 'u1b', 'f', 'f DESC');
DROP TABLE u1a, u1b, u1c;
DROP FUNCTION tw_one(text), tw_both(text, text, text), tw_shape(text, text),
	tw_diff(text, text, text, text, text, int, boolean), tw_order(text, text, text, text);
