-- test/gpu/gpu_build.sql: CREATE INDEX on the GPU against the CPU build.
-- For every key type, on data with NULLs, the type's extremes, NaN,
-- +-Infinity, -0.0 and heavy duplicates: build the index with
-- gbtree.device = cpu and with gbtree.device = gpu; the page images must
-- be identical (LSN and checksum aside), the (key, TID) sequences read
-- back through each index identical, and gbtree_check(idx, true) must
-- pass on both.  Prints one line per check: "ok ..." or "FAIL ...".
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pageinspect;	-- needs: pageinspect
DROP TABLE IF EXISTS gb_types;
CREATE TABLE gb_types (name text, typ text, expr text, opts text);
-- expr: the key of row g (1..N); every tenth row NULL, rows 2..6 mod 10
-- the nasty values, rows 7 mod 10 one heavily duplicated value
INSERT INTO gb_types VALUES
 ('int8', 'int8', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN -9223372036854775808 WHEN 2 THEN 9223372036854775807 WHEN 3 THEN 0 WHEN 7 THEN 42 ELSE hashint8(g) END$$, ''),
 ('int4', 'int4', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN -2147483648 WHEN 2 THEN 2147483647 WHEN 7 THEN 42 ELSE hashint4(g::int4) END$$, ''),
 ('int2', 'int2', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN -32768 WHEN 2 THEN 32767 WHEN 7 THEN 42 ELSE (hashint4(g::int4) % 32768)::int2 END$$, ''),
 ('float8', 'float8', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN 'NaN'::float8 WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity' WHEN 4 THEN '-0'::float8 WHEN 5 THEN 0.0 WHEN 7 THEN 1.5 ELSE hashint8(g)::float8 / 7 END$$, ''),
 ('float8 desc nulls first', 'float8', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN 'NaN'::float8 WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity' WHEN 4 THEN '-0'::float8 WHEN 5 THEN 0.0 WHEN 7 THEN 1.5 ELSE hashint8(g)::float8 / 7 END$$, 'DESC NULLS FIRST'),
 ('float4', 'float4', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN 'NaN'::float4 WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity' WHEN 4 THEN '-0'::float4 WHEN 5 THEN 0.0 WHEN 7 THEN 1.5 ELSE hashint4(g::int4)::float4 / 7 END$$, ''),
 ('timestamptz', 'timestamptz', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN '-infinity'::timestamptz WHEN 2 THEN 'infinity' WHEN 3 THEN '4713-01-01 BC' WHEN 7 THEN '2026-01-01' ELSE to_timestamp((hashint8(g) % 4000000000)::float8) END$$, ''),
 ('timestamp', 'timestamp', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN '-infinity'::timestamp WHEN 2 THEN 'infinity' WHEN 7 THEN '2026-01-01' ELSE to_timestamp((hashint8(g) % 4000000000)::float8)::timestamp END$$, ''),
 ('date', 'date', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN '-infinity'::date WHEN 2 THEN 'infinity' WHEN 7 THEN '2026-01-01' ELSE '2000-01-01'::date + (hashint4(g::int4) % 100000) END$$, ''),
 ('time', 'time', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN '00:00' WHEN 2 THEN '24:00' WHEN 7 THEN '12:00' ELSE '00:00'::time + (abs(hashint4(g::int4)) % 86400) * interval '1 second' END$$, ''),
 ('bool', 'bool', $$CASE g % 10 WHEN 0 THEN NULL ELSE hashint4(g::int4) % 3 = 0 END$$, ''),
 ('oid', 'oid', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN 0 WHEN 2 THEN 4294967295 WHEN 7 THEN 42 ELSE (abs(hashint4(g::int4)))::oid END$$, ''),
 ('money', 'money', $$CASE g % 10 WHEN 0 THEN NULL WHEN 1 THEN '-92233720368547758.08'::money WHEN 2 THEN '92233720368547758.07'::money WHEN 7 THEN 42::money ELSE (hashint4(g::int4))::money END$$, '');

DROP TABLE IF EXISTS gb_dump_cpu, gb_dump_gpu;
CREATE TABLE gb_dump_cpu (rn int8, k text, tid tid);
CREATE TABLE gb_dump_gpu (rn int8, k text, tid tid);

CREATE OR REPLACE FUNCTION pg_temp.build_compare(tname text, typ text, expr text, opts text, n int)
RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
	builds0 int8;
	builds1 int8;
	ndiff int8;
	npages int8;
	nrows int8;
	ok bool;
BEGIN
	EXECUTE 'DROP TABLE IF EXISTS gb_b';
	EXECUTE format('CREATE TABLE gb_b (id int8, k %s)', typ);
	-- rows in random order, so heap order is not key order
	EXECUTE format('INSERT INTO gb_b SELECT g, %s FROM generate_series(1, %s) g ORDER BY random()', expr, n);
	PERFORM set_config('gbtree.device', 'cpu', true);
	EXECUTE format('CREATE INDEX gb_b_cpu ON gb_b USING gbtree (k %s)', opts);
	PERFORM set_config('gbtree.device', 'gpu', true);
	SELECT value::int8 INTO builds0 FROM gbtree_device_info() WHERE name = 'gpu_builds';
	EXECUTE format('CREATE INDEX gb_b_gpu ON gb_b USING gbtree (k %s)', opts);
	SELECT value::int8 INTO builds1 FROM gbtree_device_info() WHERE name = 'gpu_builds';
	PERFORM set_config('gbtree.device', 'cpu', true);
	IF builds1 = builds0 + 1 THEN
		RETURN NEXT format('ok   build %s: the GPU built it', tname);
	ELSE
		RETURN NEXT format('FAIL build %s: gpu_builds %s -> %s', tname, builds0, builds1);
	END IF;

	npages := pg_relation_size('gb_b_cpu') / 8192;
	IF pg_relation_size('gb_b_gpu') / 8192 <> npages THEN
		RETURN NEXT format('FAIL build %s: %s pages on the CPU, %s on the GPU', tname, npages,
						   pg_relation_size('gb_b_gpu') / 8192);
	ELSE
		SELECT count(*) INTO ndiff FROM generate_series(0, npages - 1) b
		 WHERE substr(get_raw_page('gb_b_cpu', b::int), 11) IS DISTINCT FROM
			   substr(get_raw_page('gb_b_gpu', b::int), 11);
		IF ndiff = 0 THEN
			RETURN NEXT format('ok   build %s: %s pages identical', tname, npages);
		ELSE
			RETURN NEXT format('FAIL build %s: %s of %s pages differ', tname, ndiff, npages);
		END IF;
	END IF;
	PERFORM gbtree_check('gb_b_cpu', true);
	PERFORM gbtree_check('gb_b_gpu', true);
	RETURN NEXT format('ok   build %s: gbtree_check passes on both', tname);

	-- the (key, TID) sequence through each index alone, in index order
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_sort', 'off', true);
	TRUNCATE gb_dump_cpu, gb_dump_gpu;
	EXECUTE 'DROP INDEX gb_b_gpu';
	EXECUTE format('INSERT INTO gb_dump_cpu SELECT row_number() OVER (), k::text, ctid FROM (SELECT k, ctid FROM gb_b ORDER BY k %s) s', opts);
	EXECUTE 'DROP INDEX gb_b_cpu';
	PERFORM set_config('gbtree.device', 'gpu', true);
	EXECUTE format('CREATE INDEX gb_b_gpu ON gb_b USING gbtree (k %s)', opts);
	PERFORM set_config('gbtree.device', 'cpu', true);
	EXECUTE format('INSERT INTO gb_dump_gpu SELECT row_number() OVER (), k::text, ctid FROM (SELECT k, ctid FROM gb_b ORDER BY k %s) s', opts);
	SELECT count(*) INTO nrows FROM gb_dump_cpu;
	SELECT count(*) INTO ndiff FROM
		((SELECT * FROM gb_dump_cpu EXCEPT ALL SELECT * FROM gb_dump_gpu)
		 UNION ALL (SELECT * FROM gb_dump_gpu EXCEPT ALL SELECT * FROM gb_dump_cpu)) d;
	IF nrows = n AND ndiff = 0 THEN
		RETURN NEXT format('ok   build %s: (key, TID) sequences identical, %s entries with NULLs', tname, nrows);
	ELSE
		RETURN NEXT format('FAIL build %s: %s entries of %s, %s differ', tname, nrows, n, ndiff);
	END IF;
	-- and the order really is the key order (sequential scan + sort as the oracle)
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_sort', 'on', true);
	EXECUTE 'DROP INDEX gb_b_gpu';
	EXECUTE format('SELECT count(*) FROM gb_dump_gpu d JOIN (SELECT row_number() OVER (ORDER BY k %s, ctid) rn, k::text k FROM gb_b) s USING (rn) WHERE d.k IS DISTINCT FROM s.k', opts)
		INTO ndiff;
	IF ndiff = 0 THEN
		RETURN NEXT format('ok   build %s: GPU-built index order equals a sort of the table', tname);
	ELSE
		RETURN NEXT format('FAIL build %s: %s positions out of key order', tname, ndiff);
	END IF;
	PERFORM set_config('enable_bitmapscan', 'on', true);
END
$f$;

SELECT value AS l0 FROM gbtree_device_info() WHERE name = 'gpu_build_layouts' \gset
SELECT pg_temp.build_compare(name, typ, expr, opts, :rows) FROM gb_types ORDER BY name;
-- those builds fit one GPU sort: their pages were laid out on the device
-- (2 GPU builds per type), and are the CPU's byte for byte (above)
SELECT CASE WHEN value::int8 - :l0 = 2 * (SELECT count(*) FROM gb_types)
            THEN 'ok   the GPU builds above laid their pages out on the device (' || value::int8 - :l0 || ' builds)'
            ELSE 'FAIL device layouts: gpu_build_layouts ' || :l0 || ' -> ' || value END
  FROM gbtree_device_info() WHERE name = 'gpu_build_layouts';

-- More entries than one GPU sort takes (gbtree.gpu_sort_run, here a small
-- odd number, so run boundaries split duplicate runs): sorted runs on the
-- GPU, merged on the CPU; the pages must still equal the CPU build's.
SELECT value AS r0 FROM gbtree_device_info() WHERE name = 'gpu_build_runs' \gset
SET gbtree.gpu_sort_run = 7001;
SELECT pg_temp.build_compare(name || ' in sorted runs', typ, expr, opts, :rows)
  FROM gb_types WHERE name IN ('int8', 'float8 desc nulls first', 'timestamptz') ORDER BY name;
RESET gbtree.gpu_sort_run;
-- each type is built on the GPU twice by build_compare
SELECT CASE WHEN value::int8 - :r0 >= 6 * ((:rows * 9 / 10) / 7001) THEN 'ok   the GPU builds above sorted in runs (' || value::int8 - :r0 || ' runs)'
            ELSE 'FAIL sorted runs: gpu_build_runs ' || :r0 || ' -> ' || value END
  FROM gbtree_device_info() WHERE name = 'gpu_build_runs';

-- Mostly NULLs, more than one streaming chunk (512k entries) of them:
-- the NULL tree is streamed, sorted and laid out on the device too, in
-- a parallel build where the table is large enough for workers.
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
DROP TABLE IF EXISTS gb_nul;
CREATE TABLE gb_nul AS SELECT g AS id, CASE WHEN g % 5 < 3 THEN NULL WHEN g % 5 = 3 THEN 7 ELSE hashint8(g) END AS k
  FROM generate_series(1, 1500000) g ORDER BY random();
SET gbtree.device = cpu;
CREATE INDEX gb_nul_cpu ON gb_nul USING gbtree (k);
SET gbtree.device = gpu;
SELECT value AS l0 FROM gbtree_device_info() WHERE name = 'gpu_build_layouts' \gset
CREATE INDEX gb_nul_gpu ON gb_nul USING gbtree (k);
SET gbtree.device = cpu;
SELECT CASE WHEN value::int8 = :l0 + 1 THEN 'ok   900k NULLs: the GPU build laid out its pages on the device'
            ELSE 'FAIL 900k NULLs: gpu_build_layouts ' || :l0 || ' -> ' || value END
  FROM gbtree_device_info() WHERE name = 'gpu_build_layouts';
SELECT CASE WHEN pg_relation_size('gb_nul_gpu') = pg_relation_size('gb_nul_cpu') AND
                 (SELECT count(*) FROM generate_series(0, pg_relation_size('gb_nul_cpu') / 8192 - 1) b
                   WHERE substr(get_raw_page('gb_nul_cpu', b::int), 11) IS DISTINCT FROM
                         substr(get_raw_page('gb_nul_gpu', b::int), 11)) = 0
            THEN 'ok   900k NULLs: ' || pg_relation_size('gb_nul_cpu') / 8192 || ' pages identical to the CPU build'
            ELSE 'FAIL 900k NULLs: the GPU build''s pages differ from the CPU build''s' END;
SELECT 'ok   900k NULLs: gbtree_check passes' FROM gbtree_check('gb_nul_gpu', true);
SET enable_seqscan = off;
SELECT CASE WHEN count(*) = 900000 THEN 'ok   900k NULLs: IS NULL finds them all through the GPU-built index'
            ELSE 'FAIL 900k NULLs: IS NULL found ' || count(*) END FROM gb_nul WHERE k IS NULL;
RESET enable_seqscan;
DROP TABLE gb_nul;
RESET max_parallel_maintenance_workers;
RESET min_parallel_table_scan_size;
RESET gbtree.device;

-- REINDEX runs the same build
SET gbtree.device = gpu;
DROP TABLE IF EXISTS gb_r;
CREATE TABLE gb_r AS SELECT g AS id, hashint8(g) AS k FROM generate_series(1, :rows) g;
CREATE INDEX gb_r_k ON gb_r USING gbtree (k);
SELECT value AS b0 FROM gbtree_device_info() WHERE name = 'gpu_builds' \gset
REINDEX INDEX gb_r_k;
SELECT CASE WHEN value::int8 = :b0 + 1 THEN 'ok   REINDEX built on the GPU'
            ELSE 'FAIL REINDEX: gpu_builds ' || :b0 || ' -> ' || value END
  FROM gbtree_device_info() WHERE name = 'gpu_builds';
SELECT 'ok   REINDEX: gbtree_check passes' FROM gbtree_check('gb_r_k', true);
-- the new index was loaded onto the device by its build
SELECT CASE WHEN value LIKE 'on device%' THEN 'ok   the GPU build left the index on the device'
            ELSE 'FAIL after the GPU build the copy is: ' || value END
  FROM gbtree_device_info() WHERE name = 'copy ' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/' || 'gb_r_k'::regclass::oid;
SET enable_seqscan = off;
SET gbtree.device = cpu;
SELECT count(*) AS e FROM gb_r WHERE k = ANY(ARRAY(SELECT hashint8(g) FROM generate_series(1, 1000) g)) \gset
SET gbtree.device = gpu;
SELECT value AS p0 FROM gbtree_device_info() WHERE name = 'pages_shipped' \gset
SELECT count(*) AS c FROM gb_r WHERE k = ANY(ARRAY(SELECT hashint8(g) FROM generate_series(1, 1000) g)) \gset
SELECT CASE WHEN :c = :e AND :c >= 1000 AND value::int8 = :p0 THEN 'ok   first GPU scan after the build shipped no pages'
            ELSE 'FAIL first GPU scan: ' || :c || ' rows (CPU: ' || :e || '), pages shipped ' || :p0 || ' -> ' || value END
  FROM gbtree_device_info() WHERE name = 'pages_shipped';
RESET enable_seqscan;
RESET gbtree.device;
DROP TABLE gb_r, gb_b, gb_types, gb_dump_cpu, gb_dump_gpu;
