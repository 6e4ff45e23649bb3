--
-- t34_array_scan_multiword: Custom Scan (GbtreeArrayScan) over indexes of
-- several columns and of multi-word keys (uuid, text), against a btree
-- twin.
--
-- "= ANY (array)" on any key column, with the other key columns' index
-- quals beside it, looks every key up in one multi-word scan
-- (gbt_wide_scan_tids) and fetches the rows in heap block order.  Each
-- query runs on the gbtree twin with sequential scans off (the plan is
-- checked) and on the btree twin with the planner's own choice; the rows
-- must be the same multiset.  NULLs in either column and in arrays, DESC
-- NULLS FIRST, type extremes, uuid min and max, empty and long texts,
-- x < ANY (...) (a filter on a multi-word index: the scan may leave it to
-- the heap's recheck), parameters, rescans, the transaction's own changes,
-- UPDATE and DELETE through it, a parallel lookup shared by workers.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t34;
SET search_path = t34, public;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- (tenant int4, ts timestamptz DESC NULLS FIRST) INCLUDE (v)
CREATE TABLE cg (id int4, tenant int4, ts timestamptz, v int4, pad text);
INSERT INTO cg
SELECT i,
	   CASE WHEN i % 97 = 0 THEN NULL
			WHEN i % 89 = 0 THEN 2147483647
			WHEN i % 83 = 0 THEN -2147483648
			ELSE i % 300 END,
	   CASE WHEN i % 53 = 0 THEN NULL
			WHEN i % 59 = 0 THEN 'infinity'
			WHEN i % 61 = 0 THEN '-infinity'
			ELSE '2024-01-01'::timestamptz + (i % 500) * interval '1 minute' END,
	   i % 101, 'p' || i
FROM generate_series(1, 20000) i;
CREATE TABLE cb AS SELECT * FROM cg;
CREATE INDEX cg_idx ON cg USING gbtree (tenant, ts DESC NULLS FIRST) INCLUDE (v);
CREATE INDEX cb_idx ON cb USING btree (tenant, ts DESC NULLS FIRST) INCLUDE (v);

-- uuid: min, max, NULLs, a duplicated value
CREATE TABLE ug (id int4, u uuid, v int4);
INSERT INTO ug
SELECT i, CASE WHEN i % 41 = 0 THEN NULL
			   WHEN i % 43 = 0 THEN '00000000-0000-0000-0000-000000000000'
			   WHEN i % 47 = 0 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
			   WHEN i % 7 = 0 THEN '12345678-1234-1234-1234-123456789abc'
			   ELSE md5(i::text)::uuid END, i % 13
FROM generate_series(1, 20000) i;
CREATE TABLE ub AS SELECT * FROM ug;
CREATE INDEX ug_idx ON ug USING gbtree (u);
CREATE INDEX ub_idx ON ub USING btree (u);

-- (slug, url) under "C": empty strings, NULLs, URLs longer than their field
CREATE TABLE tg (id int4, slug text COLLATE "C", url text COLLATE "C");
INSERT INTO tg
SELECT i,
	   CASE WHEN i % 31 = 0 THEN NULL WHEN i % 37 = 0 THEN '' ELSE 's' || (i % 40) END,
	   CASE WHEN i % 29 = 0 THEN NULL
			WHEN i % 23 = 0 THEN ''
			ELSE 'https://example.com/a/rather/long/common/path/' || (i % 700) ||
				 CASE WHEN i % 3 = 0 THEN '/x' ELSE '' END END
FROM generate_series(1, 20000) i;
CREATE TABLE tb AS SELECT * FROM tg;
CREATE INDEX tg_idx ON tg USING gbtree (slug, url);
CREATE INDEX tb_idx ON tb USING btree (slug, url);
VACUUM ANALYZE cg, cb, ug, ub, tg, tb;

--
-- aq(q): q with @ standing for the table's prefix ('c', 'u' or 't', which
-- becomes cg / cb and so on).  Returns the row count, whether the gbtree
-- run's plan has GbtreeArrayScan, and whether both runs gave the same
-- multiset of rows.
--
\getenv abs_srcdir PG_ABS_SRCDIR
\set join_twins :abs_srcdir '/sql/helpers/join_twins.sql'
\i :join_twins
CREATE FUNCTION aq(q text, OUT nrows bigint, OUT array_scan boolean, OUT same boolean)
LANGUAGE sql AS $f$
	SELECT * FROM tw_array_pair(regexp_replace(q, '@([cut])', '\1g', 'g'),
								regexp_replace(q, '@([cut])', '\1b', 'g'))
$f$;

CREATE TABLE qs (q text, n serial);
INSERT INTO qs (q) VALUES
	-- the first column
	('SELECT * FROM @c WHERE tenant = ANY (''{1, 7, 7, 299, NULL, 2147483647, -2147483648}'')'),
	('SELECT id, ts FROM @c WHERE tenant = ANY (ARRAY(SELECT g FROM generate_series(-5, 310, 3) g))'),
	('SELECT * FROM @c WHERE tenant = ANY (''{NULL}''::int4[])'),
	('SELECT * FROM @c WHERE tenant = ANY (''{}''::int4[])'),
	('SELECT * FROM @c WHERE tenant IN (3, 5, 8) AND v % 3 = 1'),
	('SELECT * FROM @c WHERE tenant = ANY (''{1, 2, 3}''::int8[])'),
	-- both columns
	('SELECT * FROM @c WHERE tenant = ANY (''{1, 2, 3, 89}'') AND ts >= ''2024-01-01 04:00'''),
	('SELECT * FROM @c WHERE tenant = ANY (''{1, 2, 3}'') AND ts IS NULL'),
	('SELECT * FROM @c WHERE tenant = ANY (''{4, 5}'') AND ts = ANY (''{infinity, -infinity, 2024-01-01 00:04, NULL}'')'),
	('SELECT * FROM @c WHERE tenant BETWEEN 10 AND 20 AND ts = ANY (''{2024-01-01 00:10, 2024-01-01 00:11}'')'),
	('SELECT * FROM @c WHERE tenant IS NULL AND ts = ANY (''{infinity}'')'),
	-- the second column alone
	('SELECT * FROM @c WHERE ts = ANY (''{infinity, 2024-01-01 03:00}'')'),
	-- x < ANY on a multi-word index: a filter
	('SELECT * FROM @c WHERE tenant = ANY (''{6, 9}'') AND ts < ANY (''{2024-01-01 01:00, 2024-01-01 02:00}'')'),
	-- uuid
	('SELECT * FROM @u WHERE u = ANY (''{12345678-1234-1234-1234-123456789abc, 00000000-0000-0000-0000-000000000000, ffffffff-ffff-ffff-ffff-ffffffffffff, NULL}'')'),
	('SELECT * FROM @u WHERE u = ANY (ARRAY(SELECT md5(g::text)::uuid FROM generate_series(1, 5000, 3) g)) AND v < 7'),
	('SELECT * FROM @u WHERE u = ANY (ARRAY(SELECT md5(g::text)::uuid FROM generate_series(1, 5000, 3) g)) AND u > ''80000000-0000-0000-0000-000000000000'''),
	-- text: empty strings, long URLs, a long text < ANY as a filter
	('SELECT * FROM @t WHERE slug = ANY (''{s1, s2, "", NULL}'')'),
	('SELECT * FROM @t WHERE slug = ANY (''{s7, s8}'') AND url = ANY (''{https://example.com/a/rather/long/common/path/7, https://example.com/a/rather/long/common/path/287/x, https://example.com/a/rather/long/common/path/8, ""}'')'),
	('SELECT * FROM @t WHERE url = ANY (''{https://example.com/a/rather/long/common/path/47/x, https://example.com/a/rather/long/common/path/47, ""}'')'),
	('SELECT * FROM @t WHERE slug = ANY (''{s3, s4}'') AND url < ANY (''{https://example.com/a/rather/long/common/path/5, https://example.com/a/rather/long/common/path/33/x}'')'),
	('SELECT * FROM @t WHERE slug = ANY (''{s3, s4}'') AND url >= ''https://example.com/a/rather/long/common/path/600'''),
	-- a rescan with a changing array (correlated subquery)
	('SELECT g, (SELECT sum(length(pad)) FROM @c WHERE tenant = ANY (ARRAY[g, g + 1]) AND ts > ''2024-01-01 05:00'') FROM generate_series(1, 40) g'),
	('SELECT g, (SELECT sum(id) FROM @t WHERE slug = ANY (ARRAY[''s'' || g, '''']) AND url IS NOT NULL) FROM generate_series(1, 20) g');

SELECT qs.n, a.* FROM qs, aq(qs.q) a ORDER BY qs.n;

-- the plan: both columns' conditions in the node, the rest a filter
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM cg WHERE tenant = ANY ('{1, 2}') AND ts > '2024-01-02' AND v > 3;
EXPLAIN (COSTS OFF) SELECT id FROM cg WHERE tenant = ANY ('{6, 9}') AND ts < ANY ('{2024-01-01 01:00, 2024-01-01 02:00}');
RESET enable_seqscan;

-- the array from a parameter: a prepared statement's generic plan
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
PREPARE pg(int4[], timestamptz) AS SELECT count(*), sum(v), min(pad) FROM cg WHERE tenant = ANY ($1) AND ts >= $2;
PREPARE pb(int4[], timestamptz) AS SELECT count(*), sum(v), min(pad) FROM cb WHERE tenant = ANY ($1) AND ts >= $2;
EXPLAIN (COSTS OFF) EXECUTE pg('{1}', '2024-01-01');
EXECUTE pg('{1, 7, 14, 2147483647}', '2024-01-01 02:00');
EXECUTE pb('{1, 7, 14, 2147483647}', '2024-01-01 02:00');
EXECUTE pg(NULL, '2024-01-01');
EXECUTE pg('{5}', NULL);
RESET plan_cache_mode;
RESET enable_seqscan;

-- the transaction's own changes: deletes, HOT and non-HOT updates, inserts
BEGIN;
DELETE FROM cg WHERE tenant = 7 AND id % 2 = 0;
DELETE FROM cb WHERE tenant = 7 AND id % 2 = 0;
UPDATE cg SET pad = pad || '+' WHERE tenant = 8;
UPDATE cb SET pad = pad || '+' WHERE tenant = 8;
UPDATE cg SET ts = ts + interval '1 day' WHERE tenant = 9 AND id % 3 = 0;
UPDATE cb SET ts = ts + interval '1 day' WHERE tenant = 9 AND id % 3 = 0;
INSERT INTO cg SELECT -g, 7, NULL, g, 'new' FROM generate_series(1, 30) g;
INSERT INTO cb SELECT -g, 7, NULL, g, 'new' FROM generate_series(1, 30) g;
SELECT * FROM aq('SELECT * FROM @c WHERE tenant = ANY (''{7, 8, 9}'')');
SELECT * FROM aq('SELECT * FROM @c WHERE tenant = ANY (''{7, 8, 9}'') AND ts > ''2024-01-01 06:00''');
COMMIT;

-- UPDATE and DELETE through it
BEGIN;
SET LOCAL enable_seqscan = off;
EXPLAIN (COSTS OFF) UPDATE ug SET v = -v WHERE u = ANY ('{12345678-1234-1234-1234-123456789abc}');
UPDATE ug SET v = -v WHERE u = ANY ('{12345678-1234-1234-1234-123456789abc}');
UPDATE ub SET v = -v WHERE u = ANY ('{12345678-1234-1234-1234-123456789abc}');
DELETE FROM tg WHERE slug = ANY ('{s5, s6}') AND url > 'https://example.com/a/rather/long/common/path/3';
DELETE FROM tb WHERE slug = ANY ('{s5, s6}') AND url > 'https://example.com/a/rather/long/common/path/3';
SELECT * FROM aq('SELECT * FROM @u WHERE u = ANY (''{12345678-1234-1234-1234-123456789abc}'')');
SELECT * FROM aq('SELECT * FROM @t WHERE slug = ANY (''{s5, s6}'')');
ROLLBACK;

-- parallel: one lookup shared by the participants
CREATE TABLE pg_t (id int4, tenant int4, ts timestamptz, v int4);
INSERT INTO pg_t SELECT g, g % 5000, '2024-01-01'::timestamptz + (g % 977) * interval '1 minute', g % 101
FROM generate_series(1, 200000) g;
CREATE TABLE pb_t AS SELECT * FROM pg_t;
CREATE INDEX pg_t_idx ON pg_t USING gbtree (tenant, ts);
CREATE INDEX pb_t_idx ON pb_t (tenant, ts);
VACUUM ANALYZE pg_t, pb_t;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET enable_seqscan = off;
SELECT array_agg(g * 3)::text AS arr FROM generate_series(1, 1500) g \gset
SELECT par_plan(format('SELECT count(*), sum(v) FROM pg_t WHERE tenant = ANY (%L::int4[]) AND ts > %L',
					   :'arr', '2024-01-01 08:00'));
SELECT count(*), sum(v) FROM pg_t WHERE tenant = ANY (:'arr'::int4[]) AND ts > '2024-01-01 08:00';
SET parallel_leader_participation = off;
SELECT count(*), sum(v) FROM pg_t WHERE tenant = ANY (:'arr'::int4[]) AND ts > '2024-01-01 08:00';
RESET parallel_leader_participation;
RESET enable_seqscan;
SELECT count(*), sum(v) FROM pb_t WHERE tenant = ANY (:'arr'::int4[]) AND ts > '2024-01-01 08:00';
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- not offered: no array on a key column, an INCLUDE column's array, off
SET enable_seqscan = off;
SELECT aq.array_scan FROM aq('SELECT * FROM @c WHERE v = ANY (''{1, 2}'')') aq;
SET gbtree.enable_array_scan = off;
SELECT aq.array_scan, aq.same FROM aq('SELECT * FROM @c WHERE tenant = ANY (''{1, 2}'')') aq;
RESET gbtree.enable_array_scan;
RESET enable_seqscan;

DROP SCHEMA t34 CASCADE;
