--
-- test/gpu/gpu_diff.sql: gbtree scans served by the GPU (gbtree.device =
-- gpu) against btree twins and a sequential scan, on the nasty values.
-- Prints one line per check: "ok <n> <what>" or "FAIL <n> <what>: ...".
--
\set ON_ERROR_STOP 0
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS gpu_diff CASCADE;
CREATE SCHEMA gpu_diff;
SET search_path = gpu_diff, public;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET extra_float_digits = 1;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE t_g (id int, i8 int8, i4 int4, f8 float8, ts timestamptz);
INSERT INTO t_g
SELECT i,
	   CASE WHEN i % 97 = 0 THEN NULL WHEN i % 7 = 0 THEN 42 WHEN i = 3 THEN 9223372036854775807
			WHEN i = 4 THEN -9223372036854775808 ELSE hashint4(i)::int8 * 1000003 END,
	   CASE WHEN i % 89 = 0 THEN NULL WHEN i % 5 = 0 THEN i % 50 WHEN i = 8 THEN 2147483647
			WHEN i = 9 THEN -2147483648 ELSE hashint4(i + 1) END,
	   CASE WHEN i % 83 = 0 THEN NULL WHEN i % 101 = 0 THEN 'NaN' WHEN i % 103 = 0 THEN 'Infinity'
			WHEN i % 107 = 0 THEN '-Infinity' WHEN i % 109 = 0 THEN '-0' WHEN i % 11 = 0 THEN 0.5
			ELSE hashint4(i + 2) / 977.0 END,
	   CASE WHEN i % 79 = 0 THEN NULL WHEN i % 13 = 0 THEN '2000-01-01 00:00:00+00'
			WHEN i = 10 THEN 'infinity' WHEN i = 11 THEN '-infinity'
			ELSE '2020-01-01'::timestamptz + (hashint4(i + 3) % 100000000) * interval '1 second' END
FROM generate_series(1, 50000) i;
CREATE TABLE t_b AS SELECT * FROM t_g;
CREATE INDEX ON t_g USING gbtree (i8);
CREATE INDEX ON t_g USING gbtree (i4);
CREATE INDEX ON t_g USING gbtree (f8 DESC NULLS FIRST);
CREATE INDEX ON t_g USING gbtree (ts);
CREATE INDEX ON t_b USING btree (i8);
CREATE INDEX ON t_b USING btree (i4);
CREATE INDEX ON t_b USING btree (f8 DESC NULLS FIRST);
CREATE INDEX ON t_b USING btree (ts);
VACUUM ANALYZE t_g;
VACUUM ANALYZE t_b;

CREATE TABLE checks (n serial, what text, result text);

-- run q (%s = table) three ways: gbtree on the GPU (mode: 'ionly', 'iscan'
-- or 'bitmap'), btree, and a seq scan; compare rows (in order if ordered)
CREATE FUNCTION gpu_check(what text, q text, mode text, ordered bool, expect_gpu bool DEFAULT true) RETURNS void
LANGUAGE plpgsql AS $f$
DECLARE
	agg text := CASE WHEN ordered THEN 'md5(string_agg(x::text, '','' ORDER BY n))'
					 ELSE 'md5(string_agg(x::text, '','' ORDER BY x::text))' END;
	wrap text := 'SELECT count(*) || '':'' || coalesce(' || agg || ', '''') FROM (SELECT x, row_number() OVER () AS n FROM (%s) x) s';
	rg text; rb text; rs text; b0 bigint; b1 bigint; res text;
BEGIN
	SELECT value::bigint INTO b0 FROM gbtree_device_info() WHERE name = 'gpu_batches';
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', (mode = 'ionly')::text, true);
	PERFORM set_config('enable_indexscan', (mode <> 'bitmap')::text, true);
	PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
	PERFORM set_config('gbtree.device', 'gpu', true);
	BEGIN
		EXECUTE format(wrap, format(q, 't_g')) INTO rg;
	EXCEPTION WHEN OTHERS THEN
		rg := 'ERROR ' || SQLERRM;
	END;
	PERFORM set_config('gbtree.device', 'cpu', true);
	SELECT value::bigint INTO b1 FROM gbtree_device_info() WHERE name = 'gpu_batches';
	EXECUTE format(wrap, format(q, 't_b')) INTO rb;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	EXECUTE format(wrap, format(q, 't_b')) INTO rs;
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_indexonlyscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
	IF rg = rb AND rb = rs AND (b1 > b0 OR NOT expect_gpu) THEN
		res := 'ok';
	ELSIF b1 <= b0 AND expect_gpu THEN
		res := 'FAIL (no GPU batch ran) ' || coalesce(rg, '?');
	ELSE
		res := format('FAIL gbtree-gpu %s btree %s seq %s', rg, rb, rs);
	END IF;
	INSERT INTO checks (what, result) VALUES (what || ' [' || mode || '] ' || split_part(rb, ':', 1) || ' rows', res);
END
$f$;

CREATE FUNCTION run_all(col text, keys text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
	m text;
BEGIN
	FOREACH m IN ARRAY ARRAY['ionly', 'iscan', 'bitmap'] LOOP
		PERFORM gpu_check(col || ' = ANY(keys)', format('SELECT %1$s FROM %%s WHERE %1$s = ANY(%2$s)', col, keys), m, false);
		PERFORM gpu_check(col || ' IS NULL', format('SELECT id FROM %%s WHERE %1$s IS NULL', col), m, false);
		PERFORM gpu_check(col || ' range', format('SELECT %1$s FROM %%s WHERE %1$s > (SELECT min(%1$s) FROM t_b) AND %1$s <= (SELECT percentile_disc(0.3) WITHIN GROUP (ORDER BY %1$s) FROM t_b)', col), m, false);
	END LOOP;
	PERFORM gpu_check(col || ' ORDER BY', format('SELECT %1$s FROM %%s WHERE %1$s IS NOT NULL ORDER BY %1$s', col), 'ionly', true);
	PERFORM gpu_check(col || ' ORDER BY DESC', format('SELECT %1$s FROM %%s ORDER BY %1$s DESC NULLS LAST', col), 'ionly', true);
	PERFORM gpu_check(col || ' ORDER BY NULLS FIRST', format('SELECT %1$s FROM %%s ORDER BY %1$s NULLS FIRST', col), 'ionly', true);
	PERFORM gpu_check(col || ' = ANY ORDER BY', format('SELECT %1$s FROM %%s WHERE %1$s = ANY(%2$s) ORDER BY %1$s DESC', col, keys), 'ionly', true);
END
$f$;

SELECT run_all('i8', 'ARRAY(SELECT i8 FROM t_b WHERE mod(id, 3) = 0 UNION ALL SELECT 42 UNION ALL SELECT 9223372036854775807 UNION ALL SELECT 12345)');
SELECT run_all('i4', 'ARRAY(SELECT i4 FROM t_b WHERE mod(id, 4) = 0 UNION ALL SELECT -2147483648)');
SELECT run_all('f8', 'ARRAY(SELECT f8 FROM t_b WHERE mod(id, 5) = 1 UNION ALL SELECT ''NaN'' UNION ALL SELECT ''-0'' UNION ALL SELECT ''Infinity'' UNION ALL SELECT ''-Infinity'' UNION ALL SELECT 0.5)');
SELECT run_all('ts', 'ARRAY(SELECT ts FROM t_b WHERE mod(id, 6) = 0 UNION ALL SELECT ''infinity'')');
-- cross-type keys and the overflow cases
SELECT gpu_check('i4 = ANY(int8 keys incl. out of range)', 'SELECT i4 FROM %s WHERE i4 = ANY(ARRAY[42::int8, 2147483648, -2147483649, 2147483647, 7])', 'ionly', false);
SELECT gpu_check('f8 = ANY(float4 keys)', 'SELECT f8 FROM %s WHERE f8 = ANY(ARRAY[0.5::float4, ''NaN''::float4, ''-0''::float4])', 'ionly', false);
SELECT gpu_check('i8 = ANY(empty)', 'SELECT i8 FROM %s WHERE i8 = ANY(''{}''::int8[])', 'ionly', false, false);
SELECT gpu_check('i8 = ANY(NULLs only)', 'SELECT i8 FROM %s WHERE i8 = ANY(''{NULL,NULL}''::int8[])', 'ionly', false, false);
-- parallel scans: GPU batches in slices of the ranges, claimed by the
-- participants; Gather Merge must see each participant's rows in order
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = on;
-- dear rows, so that sharing them out is worth a Gather Merge
SET cpu_tuple_cost = 1;
-- constant arrays: the planner then knows their size and goes parallel
SELECT array_agg(i8)::text AS arr_i8 FROM (SELECT i8 FROM t_b WHERE mod(id, 2) = 0 UNION ALL SELECT 42) s \gset
SELECT array_agg(f8)::text AS arr_f8 FROM (SELECT f8 FROM t_b WHERE mod(id, 5) <> 0 UNION ALL SELECT 'NaN' UNION ALL SELECT '-0') s \gset
SELECT array_agg(i4)::text AS arr_i4 FROM t_b WHERE mod(id, 5) <> 1 \gset
SELECT gpu_check('parallel i8 = ANY(25k keys)', format('SELECT i8 FROM %%s WHERE i8 = ANY(%L::int8[])', :'arr_i8'), 'ionly', false);
SELECT gpu_check('parallel i8 = ANY(25k keys)', format('SELECT id FROM %%s WHERE i8 = ANY(%L::int8[])', :'arr_i8'), 'iscan', false);
SELECT gpu_check('parallel i8 = ANY(25k keys) ORDER BY', format('SELECT i8 FROM %%s WHERE i8 = ANY(%L::int8[]) ORDER BY i8', :'arr_i8'), 'ionly', true);
SELECT gpu_check('parallel f8 = ANY(40k keys) ORDER BY (DESC index)', format('SELECT f8 FROM %%s WHERE f8 = ANY(%L::float8[]) ORDER BY f8 DESC', :'arr_f8'), 'ionly', true);
SELECT gpu_check('parallel count(*) i4 = ANY(40k keys)', format('SELECT count(*) FROM %%s WHERE i4 = ANY(%L::int4[])', :'arr_i4'), 'ionly', false);
SET parallel_leader_participation = off;
SELECT gpu_check('parallel, workers only, i8 = ANY(25k keys) ORDER BY', format('SELECT i8 FROM %%s WHERE i8 = ANY(%L::int8[]) ORDER BY i8', :'arr_i8'), 'ionly', true);
RESET parallel_leader_participation;
-- the plan really was parallel, and its scan ran as several GPU batches
CREATE FUNCTION parallel_plan_check(arr text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
	line text; plan text := ''; b0 bigint; b1 bigint;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('gbtree.device', 'gpu', true);
	SELECT value::bigint INTO b0 FROM gbtree_device_info() WHERE name = 'gpu_batches';
	FOR line IN EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT i8 FROM t_g WHERE i8 = ANY(%L::int8[]) ORDER BY i8', arr) LOOP
		plan := plan || line || E'\n';
	END LOOP;
	SELECT value::bigint INTO b1 FROM gbtree_device_info() WHERE name = 'gpu_batches';
	INSERT INTO checks (what, result) VALUES ('parallel plan: Gather Merge over a parallel index-only scan run as several GPU batches',
		CASE WHEN plan ~ 'Gather Merge' AND plan ~ 'Parallel Index Only Scan' AND plan ~ 'Workers Launched: [1-9]' AND b1 - b0 >= 2
			 THEN 'ok'
			 ELSE format('FAIL %s GPU batches; plan: %s', b1 - b0, left(replace(plan, E'\n', ' / '), 400)) END);
END
$f$;
SELECT parallel_plan_check(:'arr_i8');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_index_scan_size;
RESET min_parallel_table_scan_size;
RESET cpu_tuple_cost;
SET max_parallel_workers_per_gather = 0;

-- multi-word keys: uuid, and (tenant, ts DESC) INCLUDE (i8), NULLs in
-- either column, uuid min and max, a heavily repeated uuid
CREATE TABLE w_g AS
SELECT id, ts, i8,
	   CASE WHEN id % 71 = 0 THEN NULL WHEN id = 5 THEN '00000000-0000-0000-0000-000000000000'
			WHEN id = 6 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
			WHEN id % 17 = 0 THEN 'dddddddd-dddd-dddd-dddd-dddddddddddd'
			ELSE md5(id::text)::uuid END AS u,
	   CASE WHEN id % 61 = 0 THEN NULL ELSE id % 37 END AS tenant
FROM t_b;
CREATE TABLE w_b AS SELECT * FROM w_g;
CREATE INDEX ON w_g USING gbtree (u);
CREATE INDEX ON w_g USING gbtree (tenant, ts DESC) INCLUDE (i8);
CREATE INDEX ON w_b USING btree (u);
CREATE INDEX ON w_b USING btree (tenant, ts DESC) INCLUDE (i8);
VACUUM ANALYZE w_g;
VACUUM ANALYZE w_b;
CREATE FUNCTION run_wide() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
	m text;
	-- run once w_b is named t_b (below)
	keys text := 'ARRAY(SELECT u FROM t_b WHERE mod(id, 3) = 0 UNION ALL SELECT ''ffffffff-ffff-ffff-ffff-ffffffffffff'' UNION ALL SELECT ''12345678-1234-1234-1234-123456789abc'')';
BEGIN
	FOREACH m IN ARRAY ARRAY['ionly', 'iscan', 'bitmap'] LOOP
		PERFORM gpu_check('uuid = ANY(keys)', format('SELECT u FROM %%s WHERE u = ANY(%s)', keys), m, false);
		PERFORM gpu_check('uuid IS NULL', 'SELECT id FROM %s WHERE u IS NULL', m, false);
		PERFORM gpu_check('uuid range', 'SELECT u FROM %s WHERE u > ''00000000-0000-0000-0000-000000000000'' AND u <= ''40000000-0000-0000-0000-000000000000''', m, false);
		PERFORM gpu_check('(tenant, ts) tenant = ANY AND ts range', 'SELECT tenant, ts, i8 FROM %s WHERE tenant = ANY(ARRAY[0, 1, 5, 36, 99]) AND ts >= ''2020-06-01'' AND ts < ''2021-06-01''', m, false);
		PERFORM gpu_check('(tenant, ts) ts only (filtered)', 'SELECT tenant, ts FROM %s WHERE ts > ''2022-01-01'' AND tenant IS NOT NULL', m, false);
		PERFORM gpu_check('(tenant, ts) tenant IS NULL', 'SELECT id FROM %s WHERE tenant IS NULL', m, false);
	END LOOP;
	PERFORM gpu_check('uuid ORDER BY', 'SELECT u FROM %s WHERE u IS NOT NULL ORDER BY u', 'ionly', true);
	PERFORM gpu_check('uuid ORDER BY DESC NULLS FIRST', 'SELECT u FROM %s ORDER BY u DESC', 'ionly', true);
	PERFORM gpu_check('uuid = ANY ORDER BY DESC', format('SELECT u FROM %%s WHERE u = ANY(%s) ORDER BY u DESC', keys), 'ionly', true);
	PERFORM gpu_check('(tenant, ts) ORDER BY tenant, ts DESC', 'SELECT tenant, ts FROM %s WHERE tenant = ANY(ARRAY[3, 4, 7]) ORDER BY tenant, ts DESC', 'ionly', true);
	PERFORM gpu_check('(tenant, ts) ORDER BY tenant DESC, ts (backward)', 'SELECT tenant, ts FROM %s WHERE tenant >= 30 ORDER BY tenant DESC, ts', 'ionly', true);
END
$f$;
-- gpu_check reads %s as t_g or t_b: point those names at the wide twins
ALTER TABLE t_g RENAME TO t_g_one;
ALTER TABLE t_b RENAME TO t_b_one;
ALTER TABLE w_g RENAME TO t_g;
ALTER TABLE w_b RENAME TO t_b;
SELECT run_wide();
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT gpu_check('uuid merge join (mark and restore)', 'SELECT o.v, a.id FROM (VALUES (''dddddddd-dddd-dddd-dddd-dddddddddddd''::uuid), (''dddddddd-dddd-dddd-dddd-dddddddddddd''), (''ffffffff-ffff-ffff-ffff-ffffffffffff''), (md5(''7'')::uuid)) AS o(v) JOIN %s a ON a.u = o.v', 'iscan', false);
RESET enable_hashjoin;
RESET enable_nestloop;
ALTER TABLE t_g RENAME TO w_g;
ALTER TABLE t_b RENAME TO w_b;
ALTER TABLE t_g_one RENAME TO t_g;
ALTER TABLE t_b_one RENAME TO t_b;

-- merge join: mark and restore on the GPU result (duplicates on both sides)
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT gpu_check('merge join', 'SELECT o.v, a.id FROM (VALUES (5), (5), (45), (-2147483648), (7)) AS o(v) JOIN %s a ON a.i4 = o.v', 'iscan', false);
RESET enable_hashjoin;
RESET enable_nestloop;

SELECT CASE WHEN result = 'ok' THEN 'ok ' ELSE 'FAIL ' END || n || ' ' || what ||
	   CASE WHEN result = 'ok' THEN '' ELSE ': ' || result END
FROM checks ORDER BY n;
