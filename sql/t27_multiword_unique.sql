--
-- Unique indexes of several columns and on uuid (src/README, "Multi-word
-- keys", "Unique indexes").  As t25_unique: every statement runs on a
-- gbtree table and on its btree twin, and what each did (rows, or the
-- error's SQLSTATE, message, detail and constraint) must be the same once
-- the index names are set aside; the tables' contents are compared after
-- each part under index, index-only, bitmap and sequential scans.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

CREATE FUNCTION w_one(stmt text) RETURNS text
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

-- stmt (%1$I the table, %2$s its access method) on gbtree table g and
-- btree table b: "same: <outcome>" with the table names written T, or both
CREATE FUNCTION w_both(stmt text, g text, b text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	rg text := replace(w_one(format(stmt, g, 'gbtree')), g, 'T');
	rb text := replace(w_one(format(stmt, b, 'btree')), b, 'T');
BEGIN
	IF rg = rb THEN
		RETURN 'same: ' || rg;
	END IF;
	RETURN 'DIFFERENT: gbtree ' || rg || ' | btree ' || rb;
END;
$$;

-- the kinds of scan under which g's rows (columns cols) matching cond
-- differ from those of its twin b read by a sequential scan
CREATE FUNCTION w_diff(g text, b text, cols text, cond text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ref text;
	got text;
	bad text := '';
	sel text;
BEGIN
	FOREACH sel IN ARRAY ARRAY['index', 'indexonly', 'bitmap', 'seq'] LOOP
		SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off;
		SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off;
		EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(r, '','' ORDER BY r)), '''') FROM (SELECT (%s)::text AS r FROM %I WHERE %s) s',
					   CASE WHEN sel = 'indexonly' THEN cols ELSE 'row(' || cols || ', id)' END, b, cond) INTO ref;
		EXECUTE format('SET LOCAL enable_seqscan = %s', sel = 'seq');
		EXECUTE format('SET LOCAL enable_indexscan = %s', sel IN ('index', 'indexonly'));
		EXECUTE format('SET LOCAL enable_indexonlyscan = %s', sel = 'indexonly');
		EXECUTE format('SET LOCAL enable_bitmapscan = %s', sel = 'bitmap');
		EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(r, '','' ORDER BY r)), '''') FROM (SELECT (%s)::text AS r FROM %I WHERE %s) s',
					   CASE WHEN sel = 'indexonly' THEN cols ELSE 'row(' || cols || ', id)' END, g, cond) INTO got;
		IF got IS DISTINCT FROM ref THEN
			bad := bad || sel || ' ';
		END IF;
	END LOOP;
	RETURN coalesce(nullif(bad, ''), 'same');
END;
$$;

-- 1. (int4, timestamptz): a build, duplicates refused within a statement
-- and a transaction, NULLs in either column distinct, room made by DELETE
-- and UPDATE, keys that differ in the second column only.
CREATE TABLE wg_a (id serial, a int4, t timestamptz);
CREATE TABLE wb_a (id serial, a int4, t timestamptz);
INSERT INTO wg_a (a, t) SELECT g % 50, timestamptz '2026-01-01 00:00+00' + (g / 50) * interval '1 hour'
  FROM generate_series(0, 4999) g;
INSERT INTO wb_a (a, t) SELECT a, t FROM wg_a ORDER BY id;
SELECT w_both('CREATE UNIQUE INDEX %1$I_at ON %1$I USING %2$s (a, t)', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (7, timestamptz ''2026-01-01 00:00+00'')', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (7, timestamptz ''2026-01-01 00:00:01+00'')', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (51, timestamptz ''2026-03-01 12:00+00''), (52, timestamptz ''2026-03-01 12:00+00''), (51, timestamptz ''2026-03-01 12:00+00'')', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (NULL, timestamptz ''2026-01-01 00:00+00''), (NULL, timestamptz ''2026-01-01 00:00+00'')', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (7, NULL), (7, NULL), (NULL, NULL), (NULL, NULL)', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) SELECT 60 + mod(g, 3), timestamptz ''2026-06-01 00:00+00'' + g * interval ''1 s'' FROM generate_series(1, 3000) g', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (61, timestamptz ''2026-06-01 00:00+00'' + 2998 * interval ''1 s'')', 'wg_a', 'wb_a');
SELECT w_both('DELETE FROM %1$I WHERE a = 3 AND t < timestamptz ''2026-01-02 00:00+00''', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (3, timestamptz ''2026-01-01 01:00+00'')', 'wg_a', 'wb_a');
SELECT w_both('UPDATE %1$I SET a = 4 WHERE a = 5 AND t = timestamptz ''2026-01-01 00:00+00''', 'wg_a', 'wb_a');
SELECT w_both('UPDATE %1$I SET a = 4 WHERE a = 5 AND t = timestamptz ''2026-01-05 00:00+00''', 'wg_a', 'wb_a');
SELECT w_both('UPDATE %1$I SET t = t + interval ''1 hour'' WHERE a = 8', 'wg_a', 'wb_a');
SELECT w_both('UPDATE %1$I SET t = t + interval ''30 min'' WHERE a = 8', 'wg_a', 'wb_a');
BEGIN;
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (70, timestamptz ''2026-01-01 00:00+00'')', 'wg_a', 'wb_a');
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (70, timestamptz ''2026-01-01 00:00+00'')', 'wg_a', 'wb_a');
ROLLBACK;
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (70, timestamptz ''2026-01-01 00:00+00'')', 'wg_a', 'wb_a');
BEGIN;
SAVEPOINT s;
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (71, timestamptz ''2026-01-01 00:00+00'')', 'wg_a', 'wb_a');
ROLLBACK TO s;
SELECT w_both('INSERT INTO %1$I (a, t) VALUES (71, timestamptz ''2026-01-01 00:00+00'')', 'wg_a', 'wb_a');
COMMIT;
VACUUM ANALYZE wg_a, wb_a;
SELECT w_diff('wg_a', 'wb_a', 'a, t', 'true'), w_diff('wg_a', 'wb_a', 'a, t', 'a = 8'),
	   w_diff('wg_a', 'wb_a', 'a, t', 'a IS NULL OR t IS NULL'), w_diff('wg_a', 'wb_a', 'a, t', 'a BETWEEN 60 AND 71');
SELECT gbtree_check('wg_a_at', true);

-- 2. Building a unique index: refused over a duplicate, not over one whose
-- tuple is dead, nor over NULLs unless NULLS NOT DISTINCT.
CREATE TABLE wg_b (id serial, a int8, b int2);
CREATE TABLE wb_b (id serial, a int8, b int2);
INSERT INTO wg_b (a, b) SELECT g, (g % 7)::int2 FROM generate_series(1, 6000) g;
INSERT INTO wb_b (a, b) SELECT a, b FROM wg_b ORDER BY id;
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (4321, 2)', 'wg_b', 'wb_b');
SELECT w_both('CREATE UNIQUE INDEX %1$I_ab ON %1$I USING %2$s (a, b)', 'wg_b', 'wb_b');
SELECT w_both('CREATE UNIQUE INDEX %1$I_ba ON %1$I USING %2$s (b DESC, a)', 'wg_b', 'wb_b');
SELECT w_both('DELETE FROM %1$I WHERE id = 6001', 'wg_b', 'wb_b');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (NULL, 1), (NULL, 1), (5, NULL)', 'wg_b', 'wb_b');
SELECT w_both('CREATE UNIQUE INDEX %1$I_nnd ON %1$I USING %2$s (a, b) NULLS NOT DISTINCT', 'wg_b', 'wb_b');
SELECT w_both('CREATE UNIQUE INDEX %1$I_ab ON %1$I USING %2$s (a, b)', 'wg_b', 'wb_b');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (6000, 1)', 'wg_b', 'wb_b');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (6000, 2)', 'wg_b', 'wb_b');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (NULL, 1)', 'wg_b', 'wb_b');
SELECT w_diff('wg_b', 'wb_b', 'a, b', 'a > 5990 OR a IS NULL OR b IS NULL');
SELECT gbtree_check('wg_b_ab', true);

-- 3. NULLS NOT DISTINCT over two columns: a NULL equals a NULL, column by
-- column.
CREATE TABLE wg_c (id serial, a int4, b float8);
CREATE TABLE wb_c (id serial, a int4, b float8);
SELECT w_both('CREATE UNIQUE INDEX %1$I_ab ON %1$I USING %2$s (a, b) NULLS NOT DISTINCT', 'wg_c', 'wb_c');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (1, NULL), (NULL, 1), (NULL, NULL), (1, 1)', 'wg_c', 'wb_c');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (1, NULL)', 'wg_c', 'wb_c');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (NULL, NULL)', 'wg_c', 'wb_c');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (NULL, 2)', 'wg_c', 'wb_c');
-- 0 and -0 are one value, as are all NaNs
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (2, 0), (2, ''NaN''), (2, ''-Infinity'')', 'wg_c', 'wb_c');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (2, ''-0'')', 'wg_c', 'wb_c');
SELECT w_both('INSERT INTO %1$I (a, b) VALUES (2, ''NaN''::float8 * 0)', 'wg_c', 'wb_c');
SELECT w_both('UPDATE %1$I SET b = NULL WHERE a = 1 AND b = 1', 'wg_c', 'wb_c');
SELECT w_both('DELETE FROM %1$I WHERE a = 1 AND b IS NULL', 'wg_c', 'wb_c');
SELECT w_both('UPDATE %1$I SET b = NULL WHERE a = 1 AND b = 1', 'wg_c', 'wb_c');
SELECT w_diff('wg_c', 'wb_c', 'a, b', 'true');
SELECT gbtree_check('wg_c_ab', true);

-- 4. uuid: the primary key kind.  Keys that differ in the last byte, in
-- either half, the least and the greatest; NULLs distinct; many versions
-- of one key (updates of an indexed column) over several leaves.
CREATE TABLE wg_u (id serial, u uuid, v int4) WITH (autovacuum_enabled = off);
CREATE TABLE wb_u (id serial, u uuid, v int4) WITH (autovacuum_enabled = off);
INSERT INTO wg_u (u, v) SELECT md5(g::text)::uuid, 0 FROM generate_series(1, 20000) g;
INSERT INTO wb_u (u, v) SELECT u, v FROM wg_u ORDER BY id;
SELECT w_both('CREATE UNIQUE INDEX %1$I_u ON %1$I USING %2$s (u)', 'wg_u', 'wb_u');
CREATE INDEX wg_u_v ON wg_u (v);
CREATE INDEX wb_u_v ON wb_u (v);
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (md5(''17'')::uuid, 1)', 'wg_u', 'wb_u');
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (''00000000-0000-0000-0000-000000000000'', 1), (''ffffffff-ffff-ffff-ffff-ffffffffffff'', 1), (''00000000-0000-0000-0000-000000000001'', 1), (''00000000-0000-0001-0000-000000000000'', 1)', 'wg_u', 'wb_u');
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (''00000000-0000-0000-0000-000000000000'', 2)', 'wg_u', 'wb_u');
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (''ffffffff-ffff-ffff-ffff-ffffffffffff'', 2)', 'wg_u', 'wb_u');
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (''00000000-0000-0001-0000-000000000001'', 2)', 'wg_u', 'wb_u');
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (NULL, 1), (NULL, 2)', 'wg_u', 'wb_u');
SELECT w_both('INSERT INTO %1$I (u, v) SELECT md5((g * 3)::text)::uuid, 3 FROM generate_series(20001, 20100) g', 'wg_u', 'wb_u');
DO $$
BEGIN
	FOR i IN 1..900 LOOP
		UPDATE wg_u SET v = v + 1 WHERE u = md5('5')::uuid;
		UPDATE wb_u SET v = v + 1 WHERE u = md5('5')::uuid;
	END LOOP;
END;
$$;
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (md5(''5'')::uuid, 0)', 'wg_u', 'wb_u');
SELECT w_both('UPDATE %1$I SET u = md5(''5'')::uuid WHERE u = md5(''6'')::uuid', 'wg_u', 'wb_u');
SELECT w_both('DELETE FROM %1$I WHERE u = md5(''5'')::uuid', 'wg_u', 'wb_u');
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (md5(''5'')::uuid, 5)', 'wg_u', 'wb_u');
SELECT w_both('INSERT INTO %1$I (u, v) VALUES (md5(''5'')::uuid, 6)', 'wg_u', 'wb_u');
SELECT w_both('COPY %1$I (u, v) FROM PROGRAM ''printf "11111111-2222-3333-4444-555555555555\t1\n11111111-2222-3333-4444-555555555555\t2\n"''', 'wg_u', 'wb_u');
VACUUM ANALYZE wg_u, wb_u;
SELECT w_diff('wg_u', 'wb_u', 'u', 'true'), w_diff('wg_u', 'wb_u', 'u', 'u = md5(''5'')::uuid'),
	   w_diff('wg_u', 'wb_u', 'u', 'u IS NULL'), w_diff('wg_u', 'wb_u', 'u', 'u < ''01000000-0000-0000-0000-000000000000''');
SELECT gbtree_check('wg_u_u', true);

-- 5. A deferrable unique constraint can only be a btree index; the same
-- deferred check through gbtree is an exclusion constraint (t25, the
-- isolation spec gbtree-exclusion-deferred): here over two columns.
CREATE TABLE wg_x (a int4, b int4, EXCLUDE USING gbtree (a WITH =, b WITH =) DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE wb_x (a int4, b int4, EXCLUDE USING btree (a WITH =, b WITH =) DEFERRABLE INITIALLY DEFERRED);
INSERT INTO wg_x VALUES (1, 1), (1, 2);
INSERT INTO wb_x VALUES (1, 1), (1, 2);
BEGIN;
SELECT w_both('INSERT INTO %1$I VALUES (1, 1)', 'wg_x', 'wb_x');
SELECT w_both('UPDATE %1$I SET b = 3 WHERE a = 1 AND b = 1 AND ctid = (SELECT min(ctid) FROM %1$I WHERE a = 1 AND b = 1)', 'wg_x', 'wb_x');
COMMIT;
SELECT w_both('SET CONSTRAINTS ALL IMMEDIATE; INSERT INTO %1$I VALUES (1, 2)', 'wg_x', 'wb_x');
SELECT * FROM wg_x ORDER BY a, b;

-- 6. A unique index of two uuids is wider than 256 bits: refused as any
-- such index.
CREATE TABLE wg_w (u uuid, v uuid);
SELECT w_one('CREATE UNIQUE INDEX wg_w_uv ON wg_w USING gbtree (u, v)');

-- 7. One key updated over and over, each update a new entry (an indexed
-- column changes) in a transaction of its own: the unique check marks the
-- old versions it finds dead to every transaction, and the insert into
-- their leaf removes them first (as btree's LP_DEAD marks and simple
-- deletion do), so the index stays near btree's size instead of taking an
-- entry an update, and every check does not fetch every old version.
CREATE TABLE wg_h (id uuid, n int8);
CREATE TABLE wb_h (id uuid, n int8);
CREATE UNIQUE INDEX wg_h_id ON wg_h USING gbtree (id);
CREATE INDEX wg_h_n ON wg_h USING gbtree (n);
CREATE UNIQUE INDEX wb_h_id ON wb_h (id);
CREATE INDEX wb_h_n ON wb_h (n);
INSERT INTO wg_h SELECT md5(g::text)::uuid, g FROM generate_series(1, 500) g;
INSERT INTO wb_h SELECT md5(g::text)::uuid, g FROM generate_series(1, 500) g;
DO $$
BEGIN
	FOR r IN 1..2000 LOOP
		UPDATE wg_h SET n = n + 1000 WHERE id = md5('7')::uuid;
		UPDATE wb_h SET n = n + 1000 WHERE id = md5('7')::uuid;
		COMMIT;
	END LOOP;
END;
$$;
-- 2,500 entries without the removal: about 13 leaves
SELECT pg_relation_size('wg_h_id') <= 1.5 * pg_relation_size('wb_h_id') + 8192 AS size_near_btree,
	pg_relation_size('wg_h_id') < 8 * 8192 AS few_pages;
SELECT w_diff('wg_h', 'wb_h', 'id', 'true'), w_diff('wg_h', 'wb_h', 'id', 'id = md5(''7'')::uuid');
SELECT w_both('INSERT INTO %1$I VALUES (md5(''7'')::uuid, 0)', 'wg_h', 'wb_h');
SELECT gbtree_check('wg_h_id', true);

DROP TABLE wg_a, wb_a, wg_b, wb_b, wg_c, wb_c, wg_u, wb_u, wg_x, wb_x, wg_w, wg_h, wb_h;
DROP FUNCTION w_one(text), w_both(text, text, text), w_diff(text, text, text, text);
