--
-- test/gpu/gpu_merge.sql: insert batches sorted and placed on the GPU (see
-- gpu_client.c, "Batched inserts on the GPU") against btree twins and a
-- sequential scan: large and small batches, heavy duplicates, NULLs, the
-- nasty float8 values, savepoints rolled back, a device copy left behind
-- by several batches (its leaves then only hints), an injected device
-- error, and gbtree.device = cpu, which must not use the GPU.
-- Prints one line per check: "ok <n> <what>" or "FAIL <n> <what>: ...".
--
\set ON_ERROR_STOP 0
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS gpu_merge CASCADE;
CREATE SCHEMA gpu_merge;
SET search_path = gpu_merge, public;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET gbtree.device = auto;
SET gbtree.gpu_merge_min = 1000;

CREATE TABLE m_g (id int8, k int8, f float8);
CREATE TABLE m_b (id int8, k int8, f float8);
INSERT INTO m_g SELECT i, hashint8(i) % 1000000007, hashint4(i) / 977.0 FROM generate_series(1, 300000) i;
INSERT INTO m_b SELECT * FROM m_g;
CREATE INDEX m_g_k ON m_g USING gbtree (k);
CREATE INDEX m_g_f ON m_g USING gbtree (f DESC NULLS FIRST);
CREATE INDEX m_b_k ON m_b USING btree (k);
CREATE INDEX m_b_f ON m_b USING btree (f DESC NULLS FIRST);
VACUUM ANALYZE m_g;
VACUUM ANALYZE m_b;

CREATE TABLE checks (n serial, what text, result text);
CREATE TABLE merges (n bigint);
INSERT INTO merges VALUES (0);

CREATE FUNCTION info(what text) RETURNS bigint LANGUAGE sql AS
$$ SELECT value::bigint FROM gbtree_device_info() WHERE name = what $$;

-- a fingerprint of a table read through index idx (an index-only scan of
-- its key, with the heap's id), or by a sequential scan when idx is NULL
CREATE FUNCTION print(tab text, col text, idx bool) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE r text;
BEGIN
	PERFORM set_config('enable_seqscan', (NOT idx)::text, true);
	PERFORM set_config('enable_indexscan', idx::text, true);
	PERFORM set_config('enable_indexonlyscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_sort', (NOT idx)::text, true);
	EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(%1$s::text || ''/'' || id::text, '','' ORDER BY %1$s %3$s, id)), '''')
					FROM (SELECT * FROM %2$s ORDER BY %1$s %3$s) s',
				   col, tab, CASE WHEN col = 'f' THEN 'DESC NULLS FIRST' ELSE 'NULLS LAST' END) INTO r;
	RETURN r;
END $f$;

-- after the statements run on both twins: gbtree against btree and a
-- sequential scan on both columns, gbtree_check, and the merges it made
CREATE FUNCTION check_twins(what text, expect_gpu bool DEFAULT true) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
	res text := '';
	g text; b text; s text;
	m0 bigint; m1 bigint;
BEGIN
	SELECT n INTO m0 FROM merges;
	m1 := info('gpu_merges');
	UPDATE merges SET n = m1;
	FOREACH g IN ARRAY ARRAY['k', 'f'] LOOP
		s := print('m_b', g, false);
		b := print('m_b', g, true);
		IF print('m_g', g, true) <> s OR b <> s THEN
			res := res || format(' column %s: gbtree %s, btree %s, seq scan %s;', g, print('m_g', g, true), b, s);
		END IF;
	END LOOP;
	BEGIN
		PERFORM gbtree_check('m_g_k', true);
		PERFORM gbtree_check('m_g_f', true);
	EXCEPTION WHEN others THEN
		res := res || ' gbtree_check: ' || SQLERRM || ';';
	END;
	IF expect_gpu AND m1 <= m0 THEN
		res := res || format(' no GPU merges (%s -> %s);', m0, m1);
	ELSIF NOT expect_gpu AND m1 <> m0 THEN
		res := res || format(' %s GPU merges, none expected;', m1 - m0);
	END IF;
	INSERT INTO checks (what, result) VALUES (what, CASE WHEN res = '' THEN NULL ELSE res END);
END $f$;

-- a scan loads the device copies (gbtree.device = gpu: it must)
SET gbtree.device = gpu;
SELECT count(*) FROM m_g WHERE k = ANY (ARRAY(SELECT k FROM m_b WHERE id % 1000 = 0));
SET gbtree.device = auto;

-- one large batch: spread keys, every leaf touched, many split
SELECT info('gpu_merge_leaves_hinted') AS h0, info('gpu_merge_leaves_descended') AS d0 \gset
INSERT INTO m_g SELECT i, hashint8(i) % 1000000007, hashint4(i) / 977.0 FROM generate_series(300001, 500000) i;
INSERT INTO m_b SELECT i, hashint8(i) % 1000000007, hashint4(i) / 977.0 FROM generate_series(300001, 500000) i;
SELECT check_twins('one batch of 200,000 spread keys');
-- the device's leaves are right nearly always (a leaf too full for its new
-- entries splits, which descends from the root for the parent anyway)
INSERT INTO checks (what, result)
SELECT 'the GPU found the leaves: ' || (info('gpu_merge_leaves_hinted') - :h0) || ' taken, ' ||
	   (info('gpu_merge_leaves_descended') - :d0) || ' refused',
	   CASE WHEN info('gpu_merge_leaves_hinted') - :h0 >= 20 AND
				 info('gpu_merge_leaves_hinted') - :h0 > 4 * (info('gpu_merge_leaves_descended') - :d0)
			THEN NULL ELSE ' too few leaves taken from the GPU''s hints' END;
SELECT info('gpu_merge_leaves_hinted') AS h0, info('gpu_merge_leaves_descended') AS d0 \gset

-- batches in a row with no scan between: the device copy falls behind the
-- pages, its leaves are only hints (split leaves, entries moved right)
BEGIN;
INSERT INTO m_g SELECT i, hashint8(i) % 1000000007, hashint4(i) / 977.0 FROM generate_series(500001, 560000) i;
INSERT INTO m_g SELECT i, (hashint8(i) % 1000000007) + 1, -(hashint4(i) / 977.0) FROM generate_series(560001, 620000) i;
COMMIT;
INSERT INTO m_g SELECT i, (hashint8(i) % 1000000007) + 2, hashint4(i) / 971.0 FROM generate_series(620001, 700000) i;
INSERT INTO m_b SELECT i, hashint8(i) % 1000000007, hashint4(i) / 977.0 FROM generate_series(500001, 560000) i;
INSERT INTO m_b SELECT i, (hashint8(i) % 1000000007) + 1, -(hashint4(i) / 977.0) FROM generate_series(560001, 620000) i;
INSERT INTO m_b SELECT i, (hashint8(i) % 1000000007) + 2, hashint4(i) / 971.0 FROM generate_series(620001, 700000) i;
SELECT check_twins('batches behind the device copy');
INSERT INTO checks (what, result)
SELECT 'a device copy behind the pages still finds the leaves: ' || (info('gpu_merge_leaves_hinted') - :h0) ||
	   ' taken, ' || (info('gpu_merge_leaves_descended') - :d0) || ' refused',
	   CASE WHEN info('gpu_merge_leaves_hinted') - :h0 > 2 * (info('gpu_merge_leaves_descended') - :d0)
			THEN NULL ELSE ' too few leaves taken from the GPU''s hints' END;

-- heavy duplicates: a few keys over many leaves, and NULLs (the NULL tree)
INSERT INTO m_g SELECT i, i % 7, CASE WHEN i % 3 = 0 THEN NULL ELSE (i % 5)::float8 END FROM generate_series(700001, 760000) i;
INSERT INTO m_b SELECT i, i % 7, CASE WHEN i % 3 = 0 THEN NULL ELSE (i % 5)::float8 END FROM generate_series(700001, 760000) i;
INSERT INTO m_g SELECT i, NULL, NULL FROM generate_series(760001, 775000) i;
INSERT INTO m_b SELECT i, NULL, NULL FROM generate_series(760001, 775000) i;
SELECT check_twins('heavy duplicates and NULLs');

-- the nasty values, and the type's extremes
INSERT INTO m_g SELECT i, CASE i % 4 WHEN 0 THEN 9223372036854775807 WHEN 1 THEN -9223372036854775808 WHEN 2 THEN 0 ELSE -1 END,
	   (ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0', '1e308', '-1e308', '5e-324']::float8[])[1 + i % 8]
FROM generate_series(775001, 800000) i;
INSERT INTO m_b SELECT i, CASE i % 4 WHEN 0 THEN 9223372036854775807 WHEN 1 THEN -9223372036854775808 WHEN 2 THEN 0 ELSE -1 END,
	   (ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0', '1e308', '-1e308', '5e-324']::float8[])[1 + i % 8]
FROM generate_series(775001, 800000) i;
SELECT check_twins('NaN, -0, infinities and the int8 extremes');

-- savepoints: batches rolled back to a savepoint, kept ones merged
BEGIN;
INSERT INTO m_g SELECT i, hashint8(i), 1.5 FROM generate_series(800001, 810000) i;
SAVEPOINT a;
INSERT INTO m_g SELECT i, hashint8(i), 2.5 FROM generate_series(810001, 830000) i;
SELECT count(*) FROM m_g WHERE k = 12345;	-- a scan flushes the batch
INSERT INTO m_g SELECT i, hashint8(i), 3.5 FROM generate_series(830001, 840000) i;
ROLLBACK TO a;
INSERT INTO m_g SELECT i, hashint8(i), 4.5 FROM generate_series(840001, 850000) i;
COMMIT;
INSERT INTO m_b SELECT i, hashint8(i), 1.5 FROM generate_series(800001, 810000) i;
INSERT INTO m_b SELECT i, hashint8(i), 4.5 FROM generate_series(840001, 850000) i;
SELECT check_twins('savepoints rolled back around GPU merges');

-- an UPDATE of the key (new entries for every row version)
UPDATE m_g SET k = CASE WHEN k > 0 THEN k - 3 ELSE k + 3 END WHERE id % 10 = 0;
UPDATE m_b SET k = CASE WHEN k > 0 THEN k - 3 ELSE k + 3 END WHERE id % 10 = 0;
SELECT check_twins('UPDATE of 10% of the keys');

-- an injected device error: the CPU merges, the fallback is counted
SELECT info('fallbacks') AS fb0 \gset
SET gbtree.gpu_inject_fault = 1;
INSERT INTO m_g SELECT i, hashint8(i) % 99991, 7.25 FROM generate_series(850001, 870000) i;
RESET gbtree.gpu_inject_fault;
INSERT INTO m_b SELECT i, hashint8(i) % 99991, 7.25 FROM generate_series(850001, 870000) i;
SELECT check_twins('injected device error', false);
INSERT INTO checks (what, result)
SELECT 'injected device error counted as a fallback',
	   CASE WHEN info('fallbacks') > :fb0 THEN NULL ELSE format('fallbacks %s -> %s', :fb0, info('fallbacks')) END;

-- gbtree.device = cpu, and batches below gbtree.gpu_merge_min: no GPU
SET gbtree.device = cpu;
INSERT INTO m_g SELECT i, hashint8(i), 8.5 FROM generate_series(870001, 890000) i;
RESET gbtree.device;
SET gbtree.gpu_merge_min = 100000;
INSERT INTO m_g SELECT i, hashint8(i), 9.5 FROM generate_series(890001, 900000) i;
SET gbtree.gpu_merge_min = 1000;
INSERT INTO m_b SELECT i, hashint8(i), 8.5 FROM generate_series(870001, 890000) i;
INSERT INTO m_b SELECT i, hashint8(i), 9.5 FROM generate_series(890001, 900000) i;
SELECT check_twins('gbtree.device = cpu and small batches stay on the CPU', false);

-- the entries GPU merges took, against the rows inserted in GPU batches
INSERT INTO checks (what, result)
SELECT 'gpu_merge_entries counts the merged entries',
	   CASE WHEN info('gpu_merge_entries') >= 400000 THEN NULL
			ELSE format('gpu_merge_entries = %s', info('gpu_merge_entries')) END;

SELECT CASE WHEN result IS NULL THEN 'ok ' || n || ' ' || what
			ELSE 'FAIL ' || n || ' ' || what || ':' || result END
FROM checks ORDER BY n;
