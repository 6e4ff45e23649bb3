--
-- t33_count_multiword: count(*) through Custom Scan (GbtreeCount) over
-- indexes of several columns and of multi-word keys (uuid, text), gbtree
-- twin vs btree twin vs a sequential scan.
--
-- Such an index counts the TIDs of its multi-word scan (gbt_wide_scan_tids)
-- with conditions on any of its key columns.  Every count is compared with
-- the btree twin's and a sequential scan's, on NULLs in either column, DESC
-- and NULLS FIRST, type extremes, uuid min and max, empty strings and texts
-- longer than their field (whose conditions the scan's filter decides),
-- with pages all visible and not, parameters of cached plans and rescans;
-- and the shapes the count must leave to an Aggregate (x < ANY (...) on a
-- multi-word index, row comparisons, INCLUDE columns) still agree.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t33;
SET search_path = t33, public;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET statement_timeout = '60s';

-- plan node names, e.g. 'Custom Scan (GbtreeCount)' or 'Aggregate > Seq Scan'
-- (an InitPlan's "(returns $0)", which PostgreSQL 17 no longer prints, left out)
CREATE FUNCTION shape_of(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
	res text := '';
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF ln !~ '^\s+[A-Z][A-Za-z ]*:' THEN
			res := res || CASE WHEN res = '' THEN '' ELSE ' > ' END ||
				regexp_replace(regexp_replace(regexp_replace(ln, '^\s*(->\s*)?', ''),
											  ' (using|on) .*$', ''),
							   ' \(returns \$\d+\)', '');
		END IF;
	END LOOP;
	RETURN res;
END
$f$;

-- EXPLAIN ANALYZE's counters of the count scan (PostgreSQL 18 prints its
-- row counts with decimals, so the node lines are left out)
CREATE FUNCTION counters(q text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF ln ~ '(Custom Scan|Index Name|Index Cond|Index Entries|All-Visible Heap Blocks|Heap Fetches):' OR
		   ln ~ '^ *Custom Scan' THEN
			RETURN NEXT regexp_replace(trim(ln), ' \(actual .*$', '');
		END IF;
	END LOOP;
END
$f$;

-- count(*) WHERE pred on the gbtree twin (the plan the planner takes), the
-- btree twin and the gbtree twin by a sequential scan; ok when all agree
CREATE FUNCTION cnt(base text, pred text,
					OUT n bigint, OUT ok boolean, OUT plan text)
LANGUAGE plpgsql AS $f$
DECLARE
	q text := 'SELECT count(*) FROM %I WHERE ' || pred;
	ng bigint;
	nb bigint;
	ns bigint;
BEGIN
	plan := shape_of(format(q, base || '_g'));
	EXECUTE format(q, base || '_g') INTO ng;
	EXECUTE format(q, base || '_b') INTO nb;
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('gbtree.enable_count_scan', 'off', true);
	EXECUTE format(q, base || '_g') INTO ns;
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_indexonlyscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
	PERFORM set_config('gbtree.enable_count_scan', 'on', true);
	n := ng;
	ok := ng = nb AND nb = ns;
	IF NOT ok THEN
		plan := format('gbtree %s, btree %s, seq %s: ', ng, nb, ns) || plan;
	END IF;
END
$f$;

-- (tenant int4, ts timestamptz DESC NULLS FIRST): NULLs in both columns,
-- the extremes, +-infinity, heavy duplicates (30,000 rows a table, all of
-- which ANALYZE samples, so that the plans chosen by cost are stable)
CREATE TABLE co_g (id int, tenant int4, ts timestamptz, pay text)
	WITH (autovacuum_enabled = off);
INSERT INTO co_g
SELECT i,
	   CASE WHEN i % 97 = 0 THEN NULL
			WHEN i % 89 = 0 THEN 2147483647
			WHEN i % 83 = 0 THEN -2147483648
			ELSE i % 300 END,
	   CASE WHEN i % 53 = 0 THEN NULL
			WHEN i % 59 = 0 THEN 'infinity'
			WHEN i % 61 = 0 THEN '-infinity'
			ELSE '2024-01-01'::timestamptz + (i % 5000) * interval '1 minute' END,
	   'p' || i
FROM generate_series(1, 30000) i;
CREATE TABLE co_b AS SELECT * FROM co_g;
ALTER TABLE co_b SET (autovacuum_enabled = off);
CREATE INDEX co_g_idx ON co_g USING gbtree (tenant, ts DESC NULLS FIRST);
CREATE INDEX co_b_idx ON co_b USING btree (tenant, ts DESC NULLS FIRST);

-- uuid: min, max, NULLs and a duplicated value
CREATE TABLE uu_g (id int, u uuid) WITH (autovacuum_enabled = off);
INSERT INTO uu_g
SELECT i, CASE WHEN i % 41 = 0 THEN NULL
			   WHEN i % 43 = 0 THEN '00000000-0000-0000-0000-000000000000'
			   WHEN i % 47 = 0 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
			   WHEN i % 7 = 0 THEN '12345678-1234-1234-1234-123456789abc'
			   ELSE md5(i::text)::uuid END
FROM generate_series(1, 30000) i;
CREATE TABLE uu_b AS SELECT * FROM uu_g;
ALTER TABLE uu_b SET (autovacuum_enabled = off);
CREATE INDEX uu_g_idx ON uu_g USING gbtree (u);
CREATE INDEX uu_b_idx ON uu_b USING btree (u);

-- (slug text COLLATE "C", url text COLLATE "C") INCLUDE (id): empty
-- strings, NULLs, URLs far longer than their field that share long
-- prefixes
CREATE TABLE tx_g (id int, slug text COLLATE "C", url text COLLATE "C")
	WITH (autovacuum_enabled = off);
INSERT INTO tx_g
SELECT i,
	   CASE WHEN i % 31 = 0 THEN NULL WHEN i % 37 = 0 THEN '' ELSE 's' || (i % 40) END,
	   CASE WHEN i % 29 = 0 THEN NULL
			WHEN i % 23 = 0 THEN ''
			ELSE 'https://example.com/a/rather/long/common/path/' || (i % 700) ||
				 CASE WHEN i % 3 = 0 THEN '/x' ELSE '' END END
FROM generate_series(1, 30000) i;
CREATE TABLE tx_b AS SELECT * FROM tx_g;
ALTER TABLE tx_b SET (autovacuum_enabled = off);
CREATE INDEX tx_g_idx ON tx_g USING gbtree (slug, url) INCLUDE (id);
CREATE INDEX tx_b_idx ON tx_b USING btree (slug, url) INCLUDE (id);
VACUUM ANALYZE co_g, co_b, uu_g, uu_b, tx_g, tx_b;

CREATE TABLE preds (base text, pred text, n serial, by_cost boolean DEFAULT false,
					later boolean DEFAULT false);
INSERT INTO preds (base, pred) VALUES
	('co', 'tenant = 7'),
	('co', 'tenant = ANY(''{1, 7, 7, 299, NULL, 2147483647}'')'),
	('co', 'tenant = ANY(ARRAY(SELECT g FROM generate_series(0, 299, 2) g))'),
	('co', 'tenant BETWEEN 10 AND 20'),
	('co', 'tenant = -2147483648'),
	('co', 'tenant IS NULL'),
	('co', 'tenant IS NOT NULL'),
	('co', 'tenant = 7 AND ts >= ''2024-01-02'''),
	('co', 'tenant = 7 AND ts IS NULL'),
	('co', 'tenant IS NULL AND ts IS NOT NULL'),
	('co', 'tenant = ANY(''{3, 5, 8}'') AND ts < ''2024-01-01 12:00'''),
	('co', 'tenant = 8 AND ts = ANY(''{infinity, -infinity, 2024-01-01 00:08}'')'),
	('co', 'ts = ''infinity'''),
	('co', 'ts > ''2024-01-03'' AND ts <= ''2024-01-04'''),
	('co', 'ts IS NULL'),
	('co', 'tenant > 100 AND tenant < 50'),
	('co', 'tenant = 7::int8 AND ts > ''2024-01-02''::date'),
	('co', '7 = tenant'),
	('uu', 'u = ''12345678-1234-1234-1234-123456789abc'''),
	('uu', 'u = ''00000000-0000-0000-0000-000000000000'''),
	('uu', 'u >= ''ffffffff-ffff-ffff-ffff-ffffffffffff'''),
	('uu', 'u = ANY(ARRAY(SELECT md5(g::text)::uuid FROM generate_series(1, 3000, 3) g))'),
	('uu', 'u = ANY(''{00000000-0000-0000-0000-000000000000, ffffffff-ffff-ffff-ffff-ffffffffffff, NULL}'')'),
	('uu', 'u < ''80000000-0000-0000-0000-000000000000'''),
	('uu', 'u IS NULL'),
	('tx', 'slug = ''s7'''),
	('tx', 'slug = '''''),
	('tx', 'slug IS NULL'),
	('tx', 'slug = ''s7'' AND url = ''https://example.com/a/rather/long/common/path/7'''),
	('tx', 'slug = ''s7'' AND url = ''https://example.com/a/rather/long/common/path/287/x'''),
	('tx', 'url = ANY(''{https://example.com/a/rather/long/common/path/7, https://example.com/a/rather/long/common/path/8/x, "", NULL}'')'),
	('tx', 'slug = ANY(''{s1, s2, ""}'') AND url > ''https://example.com/a/rather/long/common/path/5'''),
	('tx', 'url >= ''https://example.com/a/rather/long/common/path/69'' AND url < ''https://example.com/a/rather/long/common/path/7'''),
	('tx', 'url = '''''),
	('tx', 'url IS NULL AND slug IS NOT NULL');
-- = ANY on a later column: the count scan and the index-only scan cost
-- about the same there, and PostgreSQL 17 prices arrays differently
UPDATE preds SET by_cost = true WHERE pred ~ '^(tenant = 8 AND ts|url) = ANY';
-- conditions on a later column alone: a scan of the whole index or of the
-- table, whichever costs less (PostgreSQL 18, which skips through an
-- index's leading column, prices the index lower)
UPDATE preds SET later = true WHERE base <> 'uu' AND pred !~ '^(tenant|slug|7 )';
-- the counts and plans of the preds
CREATE FUNCTION listing(base_not text DEFAULT '', pred_not text DEFAULT '^$', only_base text DEFAULT NULL)
RETURNS TABLE (n int, base text, pred text, count bigint, ok boolean, plan text)
LANGUAGE sql AS $f$
	SELECT p.n, p.base, p.pred, c.n, c.ok,
		   CASE WHEN p.later AND c.ok AND current_setting('enable_seqscan') = 'on' AND
					 c.plan IN ('Custom Scan (GbtreeCount)', 'Aggregate > Index Only Scan',
								'Aggregate > Seq Scan')
				THEN 'a whole scan, by cost'
				WHEN p.by_cost AND c.ok AND
					 c.plan IN ('Custom Scan (GbtreeCount)', 'Aggregate > Index Only Scan')
				THEN 'GbtreeCount or Index Only Scan, by cost' ELSE c.plan END
	FROM preds p, cnt(p.base, p.pred) c
	WHERE p.base <> base_not AND p.pred !~ pred_not AND (only_base IS NULL OR p.base = only_base)
	ORDER BY p.n
$f$;

-- all visible
SELECT * FROM listing() ORDER BY n;

-- not all visible: deletes and updates (HOT and not) without VACUUM
DELETE FROM co_g WHERE id % 3 = 0;
DELETE FROM co_b WHERE id % 3 = 0;
UPDATE co_g SET pay = pay || '+' WHERE id % 5 = 0;
UPDATE co_b SET pay = pay || '+' WHERE id % 5 = 0;
UPDATE co_g SET ts = ts + interval '1 hour' WHERE id % 11 = 0;
UPDATE co_b SET ts = ts + interval '1 hour' WHERE id % 11 = 0;
DELETE FROM uu_g WHERE id % 4 = 1;
DELETE FROM uu_b WHERE id % 4 = 1;
UPDATE tx_g SET url = url || '/moved' WHERE id % 13 = 0;
UPDATE tx_b SET url = url || '/moved' WHERE id % 13 = 0;
SELECT * FROM listing() ORDER BY n;

-- the counting transaction's own changes
BEGIN;
DELETE FROM co_g WHERE tenant = 7 AND id % 2 = 0;
DELETE FROM co_b WHERE tenant = 7 AND id % 2 = 0;
INSERT INTO co_g SELECT -i, 7, NULL FROM generate_series(1, 50) i;
INSERT INTO co_b SELECT -i, 7, NULL FROM generate_series(1, 50) i;
SELECT * FROM listing(only_base => 'co') ORDER BY n;
COMMIT;

-- and after VACUUM, all visible again
VACUUM co_g, co_b, uu_g, uu_b, tx_g, tx_b;
SELECT * FROM listing() ORDER BY n;

-- conditions on a later column alone: the count scans the whole index
SET enable_seqscan = off;
SELECT * FROM listing(base_not => 'uu', pred_not => '^(tenant|slug|7)') ORDER BY n;
RESET enable_seqscan;

-- what EXPLAIN shows: the conditions on both columns
SET gbtree.device = cpu;
EXPLAIN (COSTS OFF) SELECT count(*) FROM co_g WHERE tenant = ANY('{1,2}') AND ts > '2024-01-02';
SELECT * FROM counters('SELECT count(*) FROM co_g WHERE tenant = 7 AND ts IS NULL');
RESET gbtree.device;

-- cached generic plans and rescans
SET plan_cache_mode = force_generic_plan;
PREPARE pg(int4[], timestamptz) AS
	SELECT count(*) FROM co_g WHERE tenant = ANY($1) AND ts >= $2;
PREPARE pb(int4[], timestamptz) AS
	SELECT count(*) FROM co_b WHERE tenant = ANY($1) AND ts >= $2;
EXPLAIN (COSTS OFF) EXECUTE pg('{1}', '2024-01-01');
SELECT a IS NOT DISTINCT FROM b AS same, a FROM
	(VALUES ('{1,2,3}'::int4[], '2024-01-02'::timestamptz), (NULL, '2024-01-01'),
			('{}', '2024-01-01'), ('{5}', NULL), ('{5, 6}', '-infinity')) v(arr, lo),
	LATERAL (SELECT (SELECT count(*) FROM co_g WHERE tenant = ANY(arr) AND ts >= lo)) g(a),
	LATERAL (SELECT (SELECT count(*) FROM co_b WHERE tenant = ANY(arr) AND ts >= lo)) b(b);
EXECUTE pg('{1,2,3}', '2024-01-02');
EXECUTE pb('{1,2,3}', '2024-01-02');
RESET plan_cache_mode;
SELECT count(*) AS tenants, sum(g) = sum(b) AS same, sum(g) AS total FROM (
	SELECT (SELECT count(*) FROM co_g WHERE tenant = x AND ts < '2024-01-03') AS g,
		   (SELECT count(*) FROM co_b WHERE tenant = x AND ts < '2024-01-03') AS b
	FROM generate_series(0, 300) x) s;
SELECT shape_of('SELECT x, (SELECT count(*) FROM uu_g WHERE u > x) FROM (VALUES (''8''::text)) v(y), LATERAL (SELECT md5(y)::uuid) w(x)') AS correlated;

-- shapes left to an Aggregate (the scan may leave them to the heap's
-- recheck, or they are no key column's), which still agree with btree
CREATE FUNCTION agg_both(base text, q text, OUT plan text, OUT same boolean) LANGUAGE plpgsql AS $f$
DECLARE
	rg text;
	rb text;
BEGIN
	plan := shape_of(format(q, base || '_g'));
	EXECUTE format('SELECT array_agg(r::text ORDER BY r::text) FROM (%s) r', format(q, base || '_g')) INTO rg;
	EXECUTE format('SELECT array_agg(r::text ORDER BY r::text) FROM (%s) r', format(q, base || '_b')) INTO rb;
	same := rg IS NOT DISTINCT FROM rb;
END
$f$;
SET enable_seqscan = off;
SELECT v.base, v.q, b.* FROM (VALUES
	('tx', 'SELECT count(*) FROM %I WHERE url < ANY(''{https://example.com/a/rather/long/common/path/5, b}'')'),
	('co', 'SELECT count(*) FROM %I WHERE tenant < ANY(''{5, 10}'')'),
	('co', 'SELECT count(*) FROM %I WHERE (tenant, ts) > (7, ''2024-01-02'')'),
	('tx', 'SELECT count(*) FROM %I WHERE slug = ''s3'' AND id > 100'),
	('tx', 'SELECT count(*) FROM %I WHERE slug = ''s3'' AND url LIKE ''https://example.com/a/rather/long/common/path/3%%''')
) v(base, q), agg_both(v.base, v.q) b;
RESET enable_seqscan;

-- an index that names a column twice, and an expression column: left to
-- the Aggregate
CREATE TABLE tw_g (id int, a int8, b int8) WITH (autovacuum_enabled = off);
INSERT INTO tw_g SELECT i, i % 50, i % 7 FROM generate_series(1, 3000) i;
CREATE INDEX tw_g_aa ON tw_g USING gbtree (a, a DESC);
CREATE INDEX tw_g_expr ON tw_g USING gbtree (b, (a + 1));
VACUUM ANALYZE tw_g;
SET enable_seqscan = off;
SELECT shape_of('SELECT count(*) FROM tw_g WHERE a = 3') AS twice,
	   (SELECT count(*) FROM tw_g WHERE a = 3) AS n_twice,
	   shape_of('SELECT count(*) FROM tw_g WHERE b = 3') AS expr,
	   (SELECT count(*) FROM tw_g WHERE b = 3) AS n_expr;
RESET enable_seqscan;

DROP SCHEMA t33 CASCADE;
