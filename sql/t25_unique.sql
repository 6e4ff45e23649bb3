--
-- Unique indexes (src/README, "Unique indexes"): CREATE UNIQUE INDEX ...
-- USING gbtree, with or without NULLS NOT DISTINCT.  Every statement runs
-- on a gbtree table and on its btree twin, and what each did (rows, or
-- the error's SQLSTATE, message, detail and constraint) must be the same
-- once the index names are set aside; the tables' contents are compared
-- after each part under index, index-only, bitmap and sequential scans.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- what one statement did: its row count, or its error
CREATE FUNCTION u_one(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	st text;
	msg text;
	det text;
	con text;
BEGIN
	EXECUTE stmt;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN 'ok ' || n;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		det = PG_EXCEPTION_DETAIL, con = CONSTRAINT_NAME;
	RETURN st || ' ' || msg || coalesce(' / ' || nullif(det, ''), '') ||
		coalesce(' / constraint ' || nullif(con, ''), '');
END;
$$;

-- stmt (with %1$I for the table, %2$s for its access method) on gbtree
-- table g and btree table b:
-- "same: <outcome>" with the table names written T, or both outcomes
CREATE FUNCTION u_both(stmt text, g text, b text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	rg text := replace(u_one(format(stmt, g, 'gbtree')), g, 'T');
	rb text := replace(u_one(format(stmt, b, 'btree')), b, 'T');
BEGIN
	IF rg = rb THEN
		RETURN 'same: ' || rg;
	END IF;
	RETURN 'DIFFERENT: gbtree ' || rg || ' | btree ' || rb;
END;
$$;

-- the kinds of scan under which table g's rows matching cond differ from
-- those of its twin b read by a sequential scan
CREATE FUNCTION u_diff(g text, b text, cond text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ref text;
	got text;
	bad text := '';
	q text;
	sel text;
BEGIN
	FOREACH q IN ARRAY ARRAY['index', 'indexonly', 'bitmap', 'seq'] LOOP
		sel := CASE WHEN q = 'indexonly' THEN 'k::text' ELSE 'k::text || ''@'' || id' END;
		SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off;
		SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off;
		EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(%s, '','' ORDER BY %s)), '''') FROM %I WHERE %s',
					   sel, sel, b, cond) INTO ref;
		EXECUTE format('SET LOCAL enable_seqscan = %s', q = 'seq');
		EXECUTE format('SET LOCAL enable_indexscan = %s', q IN ('index', 'indexonly'));
		EXECUTE format('SET LOCAL enable_indexonlyscan = %s', q = 'indexonly');
		EXECUTE format('SET LOCAL enable_bitmapscan = %s', q = 'bitmap');
		EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(%s, '','' ORDER BY %s)), '''') FROM %I WHERE %s',
					   sel, sel, g, cond) INTO got;
		IF got IS DISTINCT FROM ref THEN
			bad := bad || q || ' ';
		END IF;
	END LOOP;
	RETURN coalesce(nullif(bad, ''), 'same');
END;
$$;

-- 1. int4 keys: a build, then duplicates refused, within a statement and
-- a transaction too, space made by DELETE and UPDATE, NULLs distinct.
CREATE TABLE ug_a (id serial, k int4, v int4);
CREATE TABLE ub_a (id serial, k int4, v int4);
INSERT INTO ug_a (k, v) SELECT g * 2, g FROM generate_series(0, 2999) g;
INSERT INTO ub_a (k, v) SELECT g * 2, g FROM generate_series(0, 2999) g;
SELECT u_both('CREATE UNIQUE INDEX %1$I_k ON %1$I USING %2$s (k)', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (10, 0)', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (11, 0)', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (13, 0), (15, 0), (13, 1)', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (0, 0)', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (5998, 0)', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (-1, 0), (6001, 0)', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) SELECT g, 0 FROM generate_series(7001, 9001, 2) g', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) SELECT g, 0 FROM generate_series(9001, 9101, 2) g', 'ug_a', 'ub_a');
SELECT u_both('DELETE FROM %1$I WHERE k = 20', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (20, 1)', 'ug_a', 'ub_a');
SELECT u_both('UPDATE %1$I SET k = 24 WHERE k = 22', 'ug_a', 'ub_a');
SELECT u_both('UPDATE %1$I SET k = 23 WHERE k = 22', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (22, 2)', 'ug_a', 'ub_a');
SELECT u_both('UPDATE %1$I SET v = v + 1 WHERE k < 100', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (NULL, 1), (NULL, 2)', 'ug_a', 'ub_a');
-- the same key twice in one transaction, and after a rolled back insert
BEGIN;
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (30001, 0)', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (30001, 1)', 'ug_a', 'ub_a');
ROLLBACK;
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (30001, 2)', 'ug_a', 'ub_a');
-- a savepoint rolled back: its entry's tuple is dead, not a duplicate
BEGIN;
SAVEPOINT s;
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (30003, 0)', 'ug_a', 'ub_a');
ROLLBACK TO s;
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (30003, 1)', 'ug_a', 'ub_a');
COMMIT;
-- COPY checks each row as it comes
COPY ug_a (k, v) FROM stdin;
40001	1
40003	1
\.
COPY ub_a (k, v) FROM stdin;
40001	1
40003	1
\.
SELECT u_both('COPY %1$I (k, v) FROM PROGRAM ''printf "40005\t1\n40001\t2\n"''', 'ug_a', 'ub_a');
SELECT u_diff('ug_a', 'ub_a', 'k IS NOT NULL'), u_diff('ug_a', 'ub_a', 'k IS NULL'),
	   u_diff('ug_a', 'ub_a', 'k BETWEEN 10 AND 30'), u_diff('ug_a', 'ub_a', 'k = ANY (''{0,10,11,20,22,23,24,30001,40001}'')');
SELECT gbtree_check('ug_a_k');

-- 2. Building a unique index: refused over a duplicate, not over a
-- duplicate whose tuple is dead, nor over NULLs (unless NULLS NOT
-- DISTINCT).
CREATE TABLE ug_b (id serial, k int8);
CREATE TABLE ub_b (id serial, k int8);
INSERT INTO ug_b (k) SELECT g FROM generate_series(1, 5000) g;
INSERT INTO ub_b (k) SELECT g FROM generate_series(1, 5000) g;
SELECT u_both('INSERT INTO %1$I (k) VALUES (4321)', 'ug_b', 'ub_b');
SELECT u_both('CREATE UNIQUE INDEX %1$I_k ON %1$I USING %2$s (k)', 'ug_b', 'ub_b');
SELECT u_both('DELETE FROM %1$I WHERE id = 5001', 'ug_b', 'ub_b');
SELECT u_both('INSERT INTO %1$I (k) VALUES (NULL), (NULL), (-9223372036854775808), (9223372036854775807)', 'ug_b', 'ub_b');
SELECT u_both('CREATE UNIQUE INDEX %1$I_nnd ON %1$I USING %2$s (k) NULLS NOT DISTINCT', 'ug_b', 'ub_b');
SELECT u_both('CREATE UNIQUE INDEX %1$I_k ON %1$I USING %2$s (k)', 'ug_b', 'ub_b');
SELECT u_both('INSERT INTO %1$I (k) VALUES (-9223372036854775808)', 'ug_b', 'ub_b');
SELECT u_both('INSERT INTO %1$I (k) VALUES (9223372036854775807)', 'ug_b', 'ub_b');
SELECT u_both('INSERT INTO %1$I (k) VALUES (NULL)', 'ug_b', 'ub_b');
SELECT u_diff('ug_b', 'ub_b', 'k > 4000'), u_diff('ug_b', 'ub_b', 'k IS NULL');
SELECT gbtree_check('ug_b_k');

-- 3. NULLS NOT DISTINCT: one NULL at most.
CREATE TABLE ug_c (id serial, k int4);
CREATE TABLE ub_c (id serial, k int4);
SELECT u_both('CREATE UNIQUE INDEX %1$I_k ON %1$I USING %2$s (k) NULLS NOT DISTINCT', 'ug_c', 'ub_c');
SELECT u_both('INSERT INTO %1$I (k) VALUES (1), (NULL)', 'ug_c', 'ub_c');
SELECT u_both('INSERT INTO %1$I (k) VALUES (NULL)', 'ug_c', 'ub_c');
SELECT u_both('INSERT INTO %1$I (k) VALUES (1)', 'ug_c', 'ub_c');
SELECT u_both('UPDATE %1$I SET k = NULL WHERE k = 1', 'ug_c', 'ub_c');
SELECT u_both('DELETE FROM %1$I WHERE k IS NULL', 'ug_c', 'ub_c');
SELECT u_both('UPDATE %1$I SET k = NULL WHERE k = 1', 'ug_c', 'ub_c');
SELECT u_diff('ug_c', 'ub_c', 'k IS NULL OR k = 1');
SELECT gbtree_check('ug_c_k');

-- 4. float8: 0 and -0 are one key, as are all NaNs; the infinities.
CREATE TABLE ug_d (id serial, k float8);
CREATE TABLE ub_d (id serial, k float8);
SELECT u_both('CREATE UNIQUE INDEX %1$I_k ON %1$I USING %2$s (k)', 'ug_d', 'ub_d');
SELECT u_both('INSERT INTO %1$I (k) VALUES (0), (''NaN''), (''Infinity''), (''-Infinity''), (1.5)', 'ug_d', 'ub_d');
SELECT u_both('INSERT INTO %1$I (k) VALUES (''-0'')', 'ug_d', 'ub_d');
SELECT u_both('INSERT INTO %1$I (k) VALUES (''NaN''::float8 * 0)', 'ug_d', 'ub_d');
SELECT u_both('INSERT INTO %1$I (k) VALUES (''-Infinity'')', 'ug_d', 'ub_d');
SELECT u_both('INSERT INTO %1$I (k) VALUES (1.5000000000000002)', 'ug_d', 'ub_d');
SELECT u_both('DELETE FROM %1$I WHERE k = 0', 'ug_d', 'ub_d');
SELECT u_both('INSERT INTO %1$I (k) VALUES (''-0'')', 'ug_d', 'ub_d');
SELECT u_both('INSERT INTO %1$I (k) VALUES (0)', 'ug_d', 'ub_d');
SELECT u_diff('ug_d', 'ub_d', 'true'), u_diff('ug_d', 'ub_d', 'k = 0');
SELECT gbtree_check('ug_d_k');

-- 5. Many versions of one key: updates of an indexed column (no HOT) pile
-- up entries of key 1 over several leaves; each is checked against all
-- the others.  Then the key is refused, and taken again once deleted.
CREATE TABLE ug_e (id serial, k int4, v int4) WITH (autovacuum_enabled = off);
CREATE TABLE ub_e (id serial, k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO ug_e (k, v) SELECT g, 0 FROM generate_series(0, 2) g;
INSERT INTO ub_e (k, v) SELECT g, 0 FROM generate_series(0, 2) g;
CREATE UNIQUE INDEX ug_e_k ON ug_e USING gbtree (k) WITH (deduplicate_items = off);
CREATE UNIQUE INDEX ub_e_k ON ub_e USING btree (k);
CREATE INDEX ug_e_v ON ug_e (v);
CREATE INDEX ub_e_v ON ub_e (v);
DO $$
BEGIN
	FOR i IN 1..1200 LOOP
		UPDATE ug_e SET v = v + 1 WHERE k = 1;
		UPDATE ub_e SET v = v + 1 WHERE k = 1;
	END LOOP;
END;
$$;
SELECT pg_relation_size('ug_e_k') / 8192 > 5 AS several_leaves;
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (1, 0)', 'ug_e', 'ub_e');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (0, 0)', 'ug_e', 'ub_e');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (2, 0)', 'ug_e', 'ub_e');
SELECT u_both('UPDATE %1$I SET k = 1 WHERE k = 2', 'ug_e', 'ub_e');
SELECT u_both('DELETE FROM %1$I WHERE k = 1', 'ug_e', 'ub_e');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (1, 5)', 'ug_e', 'ub_e');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (1, 6)', 'ug_e', 'ub_e');
SELECT u_diff('ug_e', 'ub_e', 'true'), u_diff('ug_e', 'ub_e', 'k = 1');
SELECT gbtree_check('ug_e_k');
-- the same in the posting form
CREATE UNIQUE INDEX ug_e_kp ON ug_e USING gbtree (k) WITH (deduplicate_items = on);
DO $$
BEGIN
	FOR i IN 1..2500 LOOP
		UPDATE ug_e SET v = v + 1 WHERE k = 1;
	END LOOP;
END;
$$;
SELECT u_one('INSERT INTO ug_e (k, v) VALUES (1, 0)');
SELECT u_one('DELETE FROM ug_e WHERE k = 1');
SELECT u_one('INSERT INTO ug_e (k, v) VALUES (1, 7)');
SELECT k, v FROM ug_e WHERE k = 1;
SELECT gbtree_check('ug_e_k'), gbtree_check('ug_e_kp');

-- 6. Partial and DESC unique indexes.
CREATE TABLE ug_f (id serial, k int4);
CREATE TABLE ub_f (id serial, k int4);
CREATE UNIQUE INDEX ug_f_k ON ug_f USING gbtree (k DESC) WHERE k > 100;
CREATE UNIQUE INDEX ub_f_k ON ub_f USING btree (k DESC) WHERE k > 100;
SELECT u_both('INSERT INTO %1$I (k) VALUES (5), (5), (101), (200)', 'ug_f', 'ub_f');
SELECT u_both('INSERT INTO %1$I (k) VALUES (200)', 'ug_f', 'ub_f');
SELECT u_both('INSERT INTO %1$I (k) VALUES (100), (100)', 'ug_f', 'ub_f');
SELECT u_diff('ug_f', 'ub_f', 'k > 100');
SELECT gbtree_check('ug_f_k');

-- 7. What the server does with a unique index beyond its checks: the
-- planner removes a join whose inner side an index proves unique (before
-- PostgreSQL 18 only with btree's operator families: the gbtree join
-- stays); a constraint can be built only on a btree index; and before
-- 18, INSERT ... ON CONFLICT cannot run on a table with a unique gbtree
-- index (0A000, before the executor's own error).  PostgreSQL 18's
-- output is t25_unique_1.out.
EXPLAIN (COSTS OFF) SELECT a.k FROM ug_b a LEFT JOIN ug_b b ON a.k = b.k;
EXPLAIN (COSTS OFF) SELECT a.k FROM ub_b a LEFT JOIN ub_b b ON a.k = b.k;
SELECT u_one('ALTER TABLE ug_a ADD CONSTRAINT ug_a_uq UNIQUE USING INDEX ug_a_k');
SELECT u_one('INSERT INTO ug_b (k) VALUES (10) ON CONFLICT DO NOTHING');
-- from PostgreSQL 18 on, ON CONFLICT works and must do what btree's does
-- (before it, the gbtree side is refused and the rows differ)
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (10, 0), (88888, 0) ON CONFLICT DO NOTHING', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (10, 5), (77777, 5), (88888, 5) ON CONFLICT (k) DO UPDATE SET v = excluded.v', 'ug_a', 'ub_a');
SELECT u_both('INSERT INTO %1$I (k, v) VALUES (12, 1), (12, 2) ON CONFLICT (k) DO UPDATE SET v = excluded.v', 'ug_a', 'ub_a');
SELECT u_diff('ug_a', 'ub_a', 'k IN (10, 12, 77777, 88888)'), u_diff('ug_a', 'ub_a', 'true');
SELECT k, v FROM ug_a WHERE k IN (10, 12, 77777, 88888) ORDER BY k;
-- a unique index on a partitioned table: before PostgreSQL 18 the core
-- matches the partition key only in btree and hash indexes (0A000 for
-- gbtree, and the gbtree side then takes the duplicate: the rows
-- differ); from 18 on it asks the access method for its equality
-- operator (amtranslatecmptype), and each partition's index checks its
-- rows, ON CONFLICT and ATTACH PARTITION included
CREATE TABLE upg (k int8, p int4, id int4) PARTITION BY LIST (p);
CREATE TABLE upg_0 PARTITION OF upg FOR VALUES IN (0);
CREATE TABLE upg_1 PARTITION OF upg FOR VALUES IN (1);
CREATE TABLE upg_2 (k int8, p int4, id int4);
CREATE TABLE upb (k int8, p int4, id int4) PARTITION BY LIST (p);
CREATE TABLE upb_0 PARTITION OF upb FOR VALUES IN (0);
CREATE TABLE upb_1 PARTITION OF upb FOR VALUES IN (1);
CREATE TABLE upb_2 (k int8, p int4, id int4);
SELECT u_both('CREATE UNIQUE INDEX ON %1$I USING %2$s (k)', 'upg', 'upb');
SELECT u_both('CREATE UNIQUE INDEX ON %1$I USING %2$s (k, p)', 'upg', 'upb');
SELECT u_both('INSERT INTO %1$I SELECT g, g %% 2, 0 FROM generate_series(1, 1000) g', 'upg', 'upb');
SELECT u_both('INSERT INTO %1$I VALUES (5, 1, 1)', 'upg', 'upb');
SELECT u_both('INSERT INTO %1$I VALUES (5, 1, 1), (5, 0, 1) ON CONFLICT DO NOTHING', 'upg', 'upb');
SELECT u_both('INSERT INTO %1$I VALUES (7, 1, 2), (2000, 0, 2) ON CONFLICT (k, p) DO UPDATE SET id = excluded.id', 'upg', 'upb');
SELECT u_both('CREATE UNIQUE INDEX ON %1$I USING %2$s (p, k)', 'upg_2', 'upb_2');
SELECT u_both('INSERT INTO %1$I VALUES (9, 2, 0), (9, 2, 0)', 'upg_2', 'upb_2');
SELECT u_both('INSERT INTO %1$I VALUES (9, 2, 0), (10, 2, 0)', 'upg_2', 'upb_2');
SELECT u_both('ALTER TABLE %1$s ATTACH PARTITION %1$s_2 FOR VALUES IN (2)', 'upg', 'upb');
SELECT u_both('INSERT INTO %1$I VALUES (10, 2, 3)', 'upg', 'upb');
SELECT u_diff('upg', 'upb', 'true');
DROP TABLE upg, upb;
-- a foreign key whose referenced columns' first unique index (in OID
-- order) is gbtree's: before 18 the core checks foreign keys through
-- btree only and stops with an internal error, which gbtree turns into
-- 0A000, even beside a btree primary key made after it; referencing the
-- primary key itself works; from 18 on the gbtree index serves the key
-- as btree's does
CREATE TABLE fpg (id int8 NOT NULL, v int4);
CREATE TABLE fpb (id int8 NOT NULL, v int4);
INSERT INTO fpg SELECT g, 0 FROM generate_series(1, 100) g;
INSERT INTO fpb SELECT g, 0 FROM generate_series(1, 100) g;
SELECT u_both('CREATE UNIQUE INDEX ON %1$I USING %2$s (id)', 'fpg', 'fpb');
SELECT u_both('CREATE TABLE %1$s_c (pid int8 REFERENCES %1$s (id) ON DELETE CASCADE, w int4)', 'fpg', 'fpb');
SELECT u_both('INSERT INTO %1$s_c VALUES (5, 1), (6, 1), (NULL, 1)', 'fpg', 'fpb');
SELECT u_both('INSERT INTO %1$s_c VALUES (5000, 1)', 'fpg', 'fpb');
SELECT u_both('DELETE FROM %1$I WHERE id = 5', 'fpg', 'fpb');
SELECT u_both('SELECT pid FROM %1$s_c', 'fpg', 'fpb');
SELECT u_both('ALTER TABLE %1$I ADD PRIMARY KEY (id)', 'fpg', 'fpb');
SELECT u_both('CREATE TABLE %1$s_d (pid int8 REFERENCES %1$s, w int4)', 'fpg', 'fpb');
SELECT u_both('INSERT INTO %1$s_d VALUES (7, 1), (5, 1)', 'fpg', 'fpb');
SELECT u_both('CREATE TABLE %1$s_e (pid int8, w int4)', 'fpg', 'fpb');
SELECT u_both('ALTER TABLE %1$s_e ADD FOREIGN KEY (pid) REFERENCES %1$s (id)', 'fpg', 'fpb');
DROP TABLE fpg, fpb CASCADE;
DROP TABLE fpg_d, fpb_d, fpg_e, fpb_e;
DROP TABLE IF EXISTS fpg_c, fpb_c;

DROP TABLE ug_a, ub_a, ug_b, ub_b, ug_c, ub_c, ug_d, ub_d, ug_e, ub_e, ug_f, ub_f;
DROP FUNCTION u_one(text), u_both(text, text, text), u_diff(text, text, text);
