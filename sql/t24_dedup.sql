--
-- Deduplication (src/README, "Deduplication"): where keys repeat, leaves
-- take the posting form, each key once with the list of its TIDs, as
-- btree's posting lists; deduplicate_items = off keeps the plain form,
-- and the default, auto, is on unless a GPU serves the server (the
-- GPU suites run this file with one: the indexes here say on).
-- Every table has a btree twin filled by the same statements (so the
-- heap TIDs are the same too), and every answer is compared with it and
-- with a sequential scan, under index, index-only and bitmap plans.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
-- the GPU kernels read plain leaves only: an index with posting leaves is
-- answered on the CPU (src/README), which this file checks
SET gbtree.device = cpu;

-- answers of one condition on table t (gbtree) and its twin tb (btree),
-- under each plan kind, and of a sequential scan: the kinds that differ
CREATE FUNCTION dd_diff(t text, tb text, cond text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ref text;
	got text;
	bad text := '';
	kinds text[] := ARRAY['index', 'indexonly', 'bitmap', 'seq'];
	q text;
BEGIN
	SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off;
	EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(k::text || ''@'' || id, '','' ORDER BY id)), '''') FROM %I WHERE %s', tb, cond) INTO ref;
	FOREACH q IN ARRAY kinds LOOP
		EXECUTE format('SET LOCAL enable_seqscan = %s', q = 'seq');
		EXECUTE format('SET LOCAL enable_indexscan = %s', q = 'index');
		EXECUTE format('SET LOCAL enable_indexonlyscan = %s', q = 'indexonly');
		EXECUTE format('SET LOCAL enable_bitmapscan = %s', q = 'bitmap');
		IF q = 'indexonly' THEN
			-- index-only: the keys alone, counted with their multiplicity
			EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(k::text, '','' ORDER BY k)), '''') FROM %I WHERE %s', t, cond) INTO got;
			EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(k::text, '','' ORDER BY k)), '''') FROM %I WHERE %s', tb, cond) INTO ref;
		ELSE
			EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(k::text || ''@'' || id, '','' ORDER BY id)), '''') FROM %I WHERE %s', tb, cond) INTO ref;
			EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(k::text || ''@'' || id, '','' ORDER BY id)), '''') FROM %I WHERE %s', t, cond) INTO got;
		END IF;
		IF got IS DISTINCT FROM ref THEN
			bad := bad || q || ' ';
		END IF;
	END LOOP;
	RETURN nullif(bad, '');
END;
$$;

-- index order: an ordered index scan in each direction returns the rows
-- of btree's, each key after the one before (the order of equal keys is
-- not SQL's to fix: btree returns a posting list ascending either way)
CREATE FUNCTION dd_order_diff(t text, tb text, cond text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	a text;
	b text;
	bad text := '';
	d text;
	q text := 'SELECT count(*) FILTER (WHERE k %s lag) || '':'' || md5(string_agg(k::text || ''@'' || id, '','' ORDER BY k, id)) FROM (SELECT k, id, lag(k) OVER () FROM (SELECT k, id FROM %I WHERE %s ORDER BY k %s) s) s2';
BEGIN
	SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_sort = off;
	FOREACH d IN ARRAY ARRAY['ASC', 'DESC'] LOOP
		EXECUTE format(q, CASE d WHEN 'ASC' THEN '<' ELSE '>' END, t, cond, d) INTO a;
		EXECUTE format(q, CASE d WHEN 'ASC' THEN '<' ELSE '>' END, tb, cond, d) INTO b;
		IF a IS DISTINCT FROM b OR a NOT LIKE '0:%' THEN
			bad := bad || d || ' ';
		END IF;
	END LOOP;
	RETURN nullif(bad, '');
END;
$$;

-- 1. int8 keys: one key of 5,000 rows (several posting leaves of one key),
-- a skewed run of 100 keys, distinct keys (plain leaves), the type's
-- extremes, and NULLs (the NULL tree is one key repeated).
CREATE TABLE dd_g (id int4, k int8);
CREATE TABLE dd_b (id int4, k int8);
CREATE FUNCTION dd_fill(t text, lo int, hi int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format($q$
		INSERT INTO %I
		SELECT g, CASE
			WHEN g %% 12 < 5 THEN 7
			WHEN g %% 12 < 9 THEN (g * 7919) %% 100
			WHEN g %% 12 = 9 THEN 1000 + g
			WHEN g %% 12 = 10 THEN NULL
			ELSE CASE WHEN g %% 24 = 11 THEN -9223372036854775808 ELSE 9223372036854775807 END
		END
		FROM generate_series(%s, %s) g$q$, t, lo, hi);
END;
$$;
SELECT dd_fill('dd_g', 1, 12000), dd_fill('dd_b', 1, 12000);
CREATE INDEX dd_g_k ON dd_g USING gbtree (k) WITH (deduplicate_items = on);
CREATE INDEX dd_b_k ON dd_b USING btree (k);
VACUUM ANALYZE dd_g;
VACUUM ANALYZE dd_b;
-- the posting form makes the index smaller than btree's (plain: 2.5 times)
SELECT pg_relation_size('dd_g_k') <= pg_relation_size('dd_b_k') AS not_larger_than_btree;
SELECT gbtree_check('dd_g_k', true);

CREATE TABLE dd_cond (c text);
INSERT INTO dd_cond VALUES
	('k = 7'), ('k = 8'), ('k = 99'), ('k = 100'), ('k BETWEEN 5 AND 50'),
	('k > 98 AND k < 1100'), ('k < 0'), ('k >= 1000'),
	('k = -9223372036854775808'), ('k = 9223372036854775807'),
	('k IS NULL'), ('k IS NOT NULL'), ('k = ANY (ARRAY[7, 3, 1009, 9223372036854775807, 5000])'),
	('k = ANY (ARRAY[]::int8[])'), ('k IN (0, 1, 2, 98, 99)'), ('k <> 7 AND k < 50'),
	('k IS NULL OR k = 7'), ('k = 7 AND id % 97 = 3');
SELECT c, dd_diff('dd_g', 'dd_b', c) FROM dd_cond ORDER BY c;
SELECT dd_order_diff('dd_g', 'dd_b', 'k BETWEEN 0 AND 2000') AS ordered,
	dd_order_diff('dd_g', 'dd_b', 'k = 7') AS one_key;
-- count(*) through GbtreeCount, and the plan it takes
SELECT count(*) FROM dd_g WHERE k = 7;
SELECT count(*) FROM dd_g WHERE k BETWEEN 5 AND 50;
SELECT count(*) FROM dd_b WHERE k BETWEEN 5 AND 50;

-- 2. Inserts into posting leaves: single rows (the optimistic path and
-- splits of posting leaves), a batch of one key (merges and append
-- splits), a batch of new distinct keys between them, then deletes and
-- VACUUM (posting lists shrink; a leaf short enough goes back to plain).
DO $$
BEGIN
	FOR i IN 1..400 LOOP
		INSERT INTO dd_g VALUES (20000 + i, i % 3 + 6);
		INSERT INTO dd_b VALUES (20000 + i, i % 3 + 6);
	END LOOP;
END;
$$;
SELECT gbtree_check('dd_g_k', true);
INSERT INTO dd_g SELECT g, 7 FROM generate_series(30001, 36000) g;
INSERT INTO dd_b SELECT g, 7 FROM generate_series(30001, 36000) g;
INSERT INTO dd_g SELECT g, (g % 50) * 2 + 1 FROM generate_series(40001, 43000) g;
INSERT INTO dd_b SELECT g, (g % 50) * 2 + 1 FROM generate_series(40001, 43000) g;
SELECT gbtree_check('dd_g_k', true);
SELECT c, dd_diff('dd_g', 'dd_b', c) FROM dd_cond ORDER BY c;
SELECT dd_order_diff('dd_g', 'dd_b', 'k BETWEEN 0 AND 2000') AS ordered;
DELETE FROM dd_g WHERE id % 3 = 0 OR (k = 7 AND id > 31000);
DELETE FROM dd_b WHERE id % 3 = 0 OR (k = 7 AND id > 31000);
VACUUM dd_g;
VACUUM dd_b;
SELECT gbtree_check('dd_g_k', true);
SELECT c, dd_diff('dd_g', 'dd_b', c) FROM dd_cond ORDER BY c;
-- and the space comes back: new rows of the same keys fit without growth
SELECT pg_relation_size('dd_g_k') AS before_size \gset
INSERT INTO dd_g SELECT g, 7 FROM generate_series(50001, 51000) g;
INSERT INTO dd_b SELECT g, 7 FROM generate_series(50001, 51000) g;
SELECT pg_relation_size('dd_g_k') = :before_size AS reused;
SELECT dd_diff('dd_g', 'dd_b', 'k = 7');
SELECT pg_relation_size('dd_g_k') <= pg_relation_size('dd_b_k') AS not_larger_than_btree;

-- 3. deduplicate_items = off: the plain form (larger), the same answers;
-- the reloption's lock level is btree's, which does not block reads (an
-- ALTER of it must not take AccessExclusiveLock)
REINDEX INDEX dd_g_k;
SELECT pg_relation_size('dd_g_k') AS posting_size \gset
BEGIN;
ALTER INDEX dd_g_k SET (deduplicate_items = off);
SELECT mode FROM pg_locks WHERE relation = 'dd_g_k'::regclass AND locktype = 'relation'
	AND pid = pg_backend_pid() ORDER BY mode;
COMMIT;
-- posting leaves already there stay until a rebuild, and still take inserts
INSERT INTO dd_g SELECT g, 7 FROM generate_series(52001, 52500) g;
INSERT INTO dd_b SELECT g, 7 FROM generate_series(52001, 52500) g;
SELECT gbtree_check('dd_g_k', true);
SELECT dd_diff('dd_g', 'dd_b', 'k = 7'), dd_diff('dd_g', 'dd_b', 'k BETWEEN 5 AND 50');
REINDEX INDEX dd_g_k;
SELECT pg_relation_size('dd_g_k') > 1.5 * :posting_size AS plain_again;
SELECT pg_relation_size('dd_g_k') AS plain_size \gset
SELECT gbtree_check('dd_g_k', true);
SELECT c, dd_diff('dd_g', 'dd_b', c) FROM dd_cond ORDER BY c;
-- full plain leaves do not turn to posting with dedup off: they split
INSERT INTO dd_g SELECT g, 7 FROM generate_series(53001, 54000) g;
INSERT INTO dd_b SELECT g, 7 FROM generate_series(53001, 54000) g;
SELECT pg_relation_size('dd_g_k') >= :plain_size + 2 * 8192 AS still_plain;
ALTER INDEX dd_g_k SET (deduplicate_items = true);
REINDEX INDEX dd_g_k;
SELECT pg_relation_size('dd_g_k') <= pg_relation_size('dd_b_k') AS posting_again;
SELECT pg_relation_size('dd_g_k') AS posting_size \gset
SELECT dd_diff('dd_g', 'dd_b', 'k = 7'), gbtree_check('dd_g_k', true);
CREATE INDEX dd_g_off ON dd_g USING gbtree (k) WITH (deduplicate_items = false);
SELECT pg_relation_size('dd_g_off') > 1.5 * :posting_size AS created_plain;
DROP INDEX dd_g_off;
CREATE INDEX dd_g_bad ON dd_g USING gbtree (k) WITH (deduplicate_items = maybe);
-- the default, auto: posting leaves exactly when no GPU serves the server
CREATE INDEX dd_g_auto ON dd_g USING gbtree (k);
SELECT (pg_relation_size('dd_g_auto') <= :posting_size) =
	((SELECT value FROM gbtree_device_info() WHERE name = 'service') IS DISTINCT FROM 'ready')
	AS auto_as_documented;
DROP INDEX dd_g_auto;

-- 4. Leaves that fill up with repeats by inserts alone (no build): a
-- table loaded by single-row and batched inserts into an empty index,
-- in heap order and in reverse, then compared.
CREATE TABLE ddi_g (id int4, k int8);
CREATE TABLE ddi_b (id int4, k int8);
CREATE INDEX ddi_g_k ON ddi_g USING gbtree (k) WITH (deduplicate_items = yes);
CREATE INDEX ddi_b_k ON ddi_b USING btree (k);
INSERT INTO ddi_g SELECT g, g % 7 FROM generate_series(1, 8000) g;
INSERT INTO ddi_b SELECT g, g % 7 FROM generate_series(1, 8000) g;
INSERT INTO ddi_g SELECT g, g % 5 FROM generate_series(16000, 8001, -1) g;
INSERT INTO ddi_b SELECT g, g % 5 FROM generate_series(16000, 8001, -1) g;
DO $$
BEGIN
	FOR i IN 1..600 LOOP
		INSERT INTO ddi_g VALUES (20000 + i, (i * 13) % 11);
		INSERT INTO ddi_b VALUES (20000 + i, (i * 13) % 11);
	END LOOP;
END;
$$;
SELECT gbtree_check('ddi_g_k', true);
SELECT pg_relation_size('ddi_g_k') <= 1.2 * pg_relation_size('ddi_b_k') AS near_btree;
SELECT dd_diff('ddi_g', 'ddi_b', 'k = 3') AS k3, dd_diff('ddi_g', 'ddi_b', 'k BETWEEN 2 AND 8') AS range,
	dd_diff('ddi_g', 'ddi_b', 'k IN (0, 6, 10)') AS list,
	dd_order_diff('ddi_g', 'ddi_b', 'k >= 0') AS ordered;

-- 5. float8: 0.0 and -0.0 are one key, yet an index-only scan returns
-- each row's own zero (the flag beside its TID survives the posting form);
-- NaN and the infinities repeated
CREATE TABLE ddf_g (id int4, k float8);
CREATE TABLE ddf_b (id int4, k float8);
INSERT INTO ddf_g SELECT g, CASE g % 6 WHEN 0 THEN '0'::float8 WHEN 1 THEN '-0'::float8
	WHEN 2 THEN 'NaN'::float8 WHEN 3 THEN '-Infinity'::float8 WHEN 4 THEN 'Infinity'::float8
	ELSE (g % 10)::float8 END FROM generate_series(1, 9000) g;
INSERT INTO ddf_b SELECT g, CASE g % 6 WHEN 0 THEN '0'::float8 WHEN 1 THEN '-0'::float8
	WHEN 2 THEN 'NaN'::float8 WHEN 3 THEN '-Infinity'::float8 WHEN 4 THEN 'Infinity'::float8
	ELSE (g % 10)::float8 END FROM generate_series(1, 9000) g;
CREATE INDEX ddf_g_k ON ddf_g USING gbtree (k) WITH (deduplicate_items = on);
CREATE INDEX ddf_b_k ON ddf_b USING btree (k);
VACUUM ANALYZE ddf_g;
VACUUM ANALYZE ddf_b;
SELECT gbtree_check('ddf_g_k', true);
SELECT pg_relation_size('ddf_g_k') <= pg_relation_size('ddf_b_k') AS not_larger_than_btree;
SELECT dd_diff('ddf_g', 'ddf_b', 'k = 0') AS zero, dd_diff('ddf_g', 'ddf_b', '''NaN'' = k') AS nan,
	dd_diff('ddf_g', 'ddf_b', 'k > 3') AS above, dd_diff('ddf_g', 'ddf_b', 'k < 0') AS below;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexscan = off;
-- the plan's top node (EXPLAIN's other lines differ between versions)
DO $$
DECLARE
	line text;
BEGIN
	FOR line IN EXPLAIN (COSTS OFF) SELECT k FROM ddf_g WHERE k = 0 LOOP
		RAISE WARNING 'plan: %', line;
		EXIT;
	END LOOP;
END;
$$;
SELECT k::text AS zero, count(*) FROM ddf_g WHERE k = 0 GROUP BY 1 ORDER BY 1;
SELECT k::text AS zero, count(*) FROM ddf_b WHERE k = 0 GROUP BY 1 ORDER BY 1;
RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_indexscan;

-- 6. DESC NULLS LAST over repeats, and a partial index
CREATE INDEX dd_g_desc ON dd_g USING gbtree (k DESC NULLS LAST) WITH (deduplicate_items = on);
CREATE INDEX dd_g_part ON dd_g USING gbtree (k) WITH (deduplicate_items = on) WHERE k < 50;
SELECT gbtree_check('dd_g_desc', true), gbtree_check('dd_g_part', true);
DROP INDEX dd_g_k;
SELECT dd_diff('dd_g', 'dd_b', 'k = 7') AS desc_eq, dd_diff('dd_g', 'dd_b', 'k BETWEEN 5 AND 50') AS desc_range,
	dd_order_diff('dd_g', 'dd_b', 'k > 0') AS desc_order;
DROP INDEX dd_g_desc;
SELECT dd_diff('dd_g', 'dd_b', 'k < 50 AND k > 5') AS partial;

DROP TABLE dd_g, dd_b, ddi_g, ddi_b, ddf_g, ddf_b, dd_cond;
DROP FUNCTION dd_diff(text, text, text), dd_order_diff(text, text, text), dd_fill(text, int, int);
