--
-- t04_joins: joins over gbtree index scans, gbtree twins vs btree twins.
--
-- Merge joins whose inputs are ordered gbtree index scans (duplicates on
-- both sides, so the inner scan is marked and restored), including
-- cross-type merge joins inside integer_ops / float_ops, outer and full
-- joins and descending merge joins; nested loops whose inner side is a
-- parameterized gbtree index scan rescanned for every outer row
-- (equality, cross-type, ranges, = ANY of an array parameter, LATERAL
-- ORDER BY ... LIMIT, semi and anti joins, correlated min / max).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t04;
SET search_path = t04, public;

-- Session settings: stable output, no parallel plans, no JIT.
SET client_min_messages = warning;
SET extra_float_digits = 1;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
SET lc_monetary = 'C';
SET max_parallel_workers_per_gather = 0;
SET jit = off;
-- a hang in the access method becomes an error, not a stuck suite
SET statement_timeout = '60s';
-- the core's join methods over gbtree scans; t22_join tests GbtreeJoin,
-- which would replace many of them
SET gbtree.enable_join = off;

--
-- Helpers.  Every test object is a pair of twin tables <base>_g (indexed
-- USING gbtree) and <base>_b (indexed USING btree, the oracle), with
-- columns (id int, k <type>) and indexes <base>_g_idx / <base>_b_idx.
--

-- EXPLAIN (COSTS OFF) text of a query
CREATE FUNCTION plan_of(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	ln text;
	res text := '';
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		res := res || ln || E'\n';
	END LOOP;
	RETURN res;
END
$f$;

-- plan node names only, e.g. 'Limit > Index Only Scan Backward'
CREATE FUNCTION shape_of(plan text) RETURNS text LANGUAGE sql AS $f$
	SELECT string_agg(regexp_replace(regexp_replace(l, '^\s*(->\s*)?', ''),
									 ' (using|on) .*$', ''), ' > ' ORDER BY n)
	FROM regexp_split_to_table(plan, E'\n') WITH ORDINALITY AS s(l, n)
	WHERE l <> '' AND (n = 1 OR l ~ '->')
$f$;

-- force one scan kind: seq, iscan, bitmap or ionly (transaction-local)
CREATE FUNCTION force_scan(m text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	PERFORM set_config('enable_seqscan', (m = 'seq')::text, true);
	PERFORM set_config('enable_indexscan', (m IN ('iscan', 'ionly'))::text, true);
	PERFORM set_config('enable_indexonlyscan', (m = 'ionly')::text, true);
	PERFORM set_config('enable_bitmapscan', (m = 'bitmap')::text, true);
END
$f$;

-- does a plan contain the scan node that the forced scan kind m asks for?
-- (when the btree twin's plan does not, neither plan is compared: the
-- planner then picks among disabled paths by cost)
CREATE FUNCTION uses_scan(plan text, m text) RETURNS boolean LANGUAGE sql AS $f$
	SELECT CASE m
		WHEN 'iscan' THEN shape_of(plan) ~ '(^|> )Index Scan'
		WHEN 'ionly' THEN shape_of(plan) ~ '(^|> )Index Only Scan'
		WHEN 'bitmap' THEN shape_of(plan) ~ '(^|> )Bitmap Index Scan'
		ELSE true END
$f$;

-- indexes of a twin pair and their access methods
CREATE FUNCTION am_of(base text) RETURNS TABLE (index_name name, am name)
LANGUAGE sql AS $f$
	SELECT c.relname, a.amname
	FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		 JOIN pg_am a ON a.oid = c.relam
	WHERE i.indrelid IN (to_regclass(base || '_g'), to_regclass(base || '_b'))
	ORDER BY 1
$f$;

--
-- chk(base, pred): run "WHERE pred" on both twins under each forced scan
-- kind and compare the multisets of rows (k compared as text, so -0 / 0
-- and NaN payloads must come back exactly; index-only scans return only
-- k).  A cell shows the plan shape of the gbtree twin when the rows agree
-- and the plan equals the btree twin's plan (index names aside), 'n/a'
-- when even the btree twin cannot use that scan kind for pred, else what
-- went wrong ('DIFF n': n rows differ; 'PLAN gbtree <> btree').
--
CREATE FUNCTION chk(base text, pred text,
					OUT nrows bigint, OUT seq text, OUT iscan text,
					OUT bitmap text, OUT ionly text)
LANGUAGE plpgsql AS $f$
DECLARE
	m text;
	sel text;
	qg text;
	qb text;
	pg text;
	pb text;
	nd bigint;
	cell text;
BEGIN
	FOREACH m IN ARRAY ARRAY['seq', 'iscan', 'bitmap', 'ionly'] LOOP
		PERFORM force_scan(m);
		sel := CASE m WHEN 'ionly' THEN 'k::text' ELSE 'id, k::text' END;
		qg := format('SELECT %s FROM %I WHERE %s', sel, base || '_g', pred);
		qb := format('SELECT %s FROM %I WHERE %s', sel, base || '_b', pred);
		pg := plan_of(qg);
		pb := replace(plan_of(qb), base || '_b', base || '_g');
		EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d',
					   qg, qb, qb, qg) INTO nd;
		IF nd <> 0 THEN
			cell := 'DIFF ' || nd;
		ELSIF NOT uses_scan(pb, m) THEN
			cell := 'n/a';
		ELSIF pg <> pb THEN
			cell := 'PLAN ' || shape_of(pg) || ' <> ' || shape_of(pb);
		ELSE
			cell := shape_of(pg);
		END IF;
		CASE m
			WHEN 'seq' THEN
				seq := CASE WHEN nd = 0 THEN 'ok' ELSE cell END;
				EXECUTE format('SELECT count(*) FROM %I WHERE %s', base || '_b', pred) INTO nrows;
			WHEN 'iscan' THEN iscan := cell;
			WHEN 'bitmap' THEN bitmap := cell;
			ELSE ionly := cell;
		END CASE;
	END LOOP;
END
$f$;

--
-- chk_order(base, ord, pred, lim): "WHERE pred ORDER BY ord LIMIT lim" on
-- both twins with index scans and with index-only scans; the key sequence
-- (compared with the type's "=", so -0 = 0 and NaN = NaN) must equal the
-- one of a sequential scan + sort of the btree twin, and the plan must
-- equal the btree twin's.
--
CREATE FUNCTION chk_order(base text, ord text, pred text DEFAULT 'true',
						  lim text DEFAULT 'ALL',
						  OUT nrows int, OUT iscan text, OUT ionly text)
LANGUAGE plpgsql AS $f$
DECLARE
	m text;
	sel text;
	tmpl text;
	qg text;
	qb text;
	pg text;
	pb text;
	ok_g boolean;
	ok_b boolean;
	cell text;
BEGIN
	tmpl := 'SELECT %s FROM %I WHERE %s ORDER BY %s LIMIT %s';
	PERFORM force_scan('seq');
	EXECUTE format('CREATE TEMP TABLE chk_order_oracle AS SELECT array_agg(k) AS a FROM (' || tmpl || ') s',
				   'k', base || '_b', pred, ord, lim);
	SELECT coalesce(cardinality(a), 0) INTO nrows FROM chk_order_oracle;
	FOREACH m IN ARRAY ARRAY['iscan', 'ionly'] LOOP
		PERFORM force_scan(m);
		sel := CASE m WHEN 'ionly' THEN 'k' ELSE 'id, k' END;
		qg := format(tmpl, sel, base || '_g', pred, ord, lim);
		qb := format(tmpl, sel, base || '_b', pred, ord, lim);
		pg := plan_of(qg);
		pb := replace(plan_of(qb), base || '_b', base || '_g');
		EXECUTE 'SELECT (SELECT array_agg(k) FROM (' || qg || ') s) IS NOT DISTINCT FROM a FROM chk_order_oracle' INTO ok_g;
		EXECUTE 'SELECT (SELECT array_agg(k) FROM (' || qb || ') s) IS NOT DISTINCT FROM a FROM chk_order_oracle' INTO ok_b;
		IF NOT ok_g THEN
			cell := 'WRONG ORDER OR ROWS';
		ELSIF NOT ok_b THEN
			cell := 'btree twin disagrees?';
		ELSIF NOT uses_scan(pb, m) THEN
			cell := 'n/a';
		ELSIF pg <> pb THEN
			cell := 'PLAN ' || shape_of(pg) || ' <> ' || shape_of(pb);
		ELSE
			cell := shape_of(pg);
		END IF;
		IF m = 'iscan' THEN iscan := cell; ELSE ionly := cell; END IF;
	END LOOP;
	DROP TABLE chk_order_oracle;
END
$f$;

-- min() and max() through the index on both twins, and whether they agree
CREATE FUNCTION minmax(base text, OUT min_g text, OUT max_g text,
					   OUT same boolean, OUT plan text)
LANGUAGE plpgsql AS $f$
DECLARE
	q text := 'SELECT min(k)::text, max(k)::text FROM %I';
	mb text;
	xb text;
BEGIN
	PERFORM force_scan('ionly');
	EXECUTE format(q, base || '_g') INTO min_g, max_g;
	EXECUTE format(q, base || '_b') INTO mb, xb;
	same := (min_g, max_g) IS NOT DISTINCT FROM (mb, xb);
	plan := shape_of(plan_of(format(q, base || '_g')));
	IF plan_of(format(q, base || '_g')) <> replace(plan_of(format(q, base || '_b')), base || '_b', base || '_g') THEN
		plan := 'PLAN DIFFERS: ' || plan;
	END IF;
END
$f$;

--
-- mk(base, typ, gen, nasty): twin tables of 3000 generated rows plus the
-- nasty values.  gen is an expression of v = (g * 7919) % 701 - 350
-- (about 4 rows per value); every 50th row is NULL.  The first half is
-- loaded before CREATE INDEX (index build), the rest after it (inserts),
-- nasty values (a text array literal, NULL allowed) nrep times each.
-- idx is the parenthesized index column (e.g. '(k DESC)'), suffix what
-- follows it (WITH (...), WHERE ...); both twins get the same.
--
CREATE FUNCTION mk(base text, typ text, gen text, nasty text, nrep int DEFAULT 3,
				   idx text DEFAULT '(k)', suffix text DEFAULT '')
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
	g text := base || '_g';
	b text := base || '_b';
	rows text := 'SELECT g, CASE WHEN g %% 50 = 0 THEN NULL ELSE (%s)::%s END'
		' FROM (SELECT g, (g * 7919) %% 701 - 350 AS v FROM generate_series(%s, %s) g) s';
BEGIN
	EXECUTE format('CREATE TABLE %I (id int, k %s)', g, typ);
	EXECUTE format('CREATE TABLE %I (id int, k %s)', b, typ);
	EXECUTE format('INSERT INTO %I ' || rows, g, gen, typ, 1, 1500);
	EXECUTE format('INSERT INTO %I SELECT * FROM %I', b, g);
	EXECUTE format('CREATE INDEX %I ON %I USING gbtree %s %s', g || '_idx', g, idx, suffix);
	EXECUTE format('CREATE INDEX %I ON %I USING btree %s %s', b || '_idx', b, idx, suffix);
	EXECUTE format('INSERT INTO %I ' || rows, g, gen, typ, 1501, 3000);
	EXECUTE format('INSERT INTO %I SELECT 100000 + r * 100 + n, v::%s'
				   ' FROM generate_series(1, %s) r, unnest(%L::text[]) WITH ORDINALITY u(v, n)',
				   g, typ, nrep, nasty);
	EXECUTE format('INSERT INTO %I SELECT * FROM %I WHERE id > 1500', b, g);
END
$f$;

-- chk() over a list of predicates, each shown with a label
CREATE FUNCTION chk_list(base text, preds text[], labels text[] DEFAULT NULL)
RETURNS TABLE (pred text, nrows bigint, seq text, iscan text, bitmap text, ionly text)
LANGUAGE sql AS $f$
	SELECT coalesce(labels[u.n], u.pred), c.*
	FROM unnest(preds) WITH ORDINALITY AS u(pred, n), LATERAL chk(base, u.pred) c
	ORDER BY u.n
$f$;

--
-- chk_join(q, m): q is a query with {S} in its twin table names; it runs
-- once with {S} = _g (gbtree twins) and once with {S} = _b (btree twins)
-- under the join method m ('merge' or 'nestloop', index scans forced);
-- the row multisets must be equal and the plans the same.
--
CREATE FUNCTION force_join(m text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_hashjoin', 'off', true);
	PERFORM set_config('enable_material', 'off', true);
	PERFORM set_config('enable_memoize', 'off', true);
	PERFORM set_config('enable_mergejoin', (m LIKE 'merge%')::text, true);
	PERFORM set_config('enable_nestloop', (m LIKE 'nestloop%')::text, true);
	PERFORM set_config('enable_sort', 'off', true);
	PERFORM set_config('enable_indexonlyscan', (m LIKE '%ionly')::text, true);
END
$f$;

CREATE FUNCTION chk_join(q text, m text,
						 OUT nrows bigint, OUT ndiff bigint, OUT plan text)
LANGUAGE plpgsql AS $f$
DECLARE
	qg text := replace(q, '{S}', '_g');
	qb text := replace(q, '{S}', '_b');
	pg text;
	pb text;
BEGIN
	PERFORM force_join(m);
	pg := plan_of(qg);
	pb := replace(plan_of(qb), '_b', '_g');
	EXECUTE format('SELECT count(*) FROM (%s) s', qb) INTO nrows;
	EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d',
				   qg, qb, qb, qg) INTO ndiff;
	plan := shape_of(pg);
	IF pg <> pb THEN
		plan := 'PLAN ' || plan || ' <> ' || shape_of(pb);
	END IF;
END
$f$;

CREATE FUNCTION chk_joins(qs text[], m text)
RETURNS TABLE (n bigint, nrows bigint, ndiff bigint, plan text)
LANGUAGE sql AS $f$
	SELECT u.n, c.* FROM unnest(qs) WITH ORDINALITY u(q, n), LATERAL chk_join(u.q, m) c
	ORDER BY u.n
$f$;

-- j4: int4, 0..999 about 5 times each; j8: int8, -500..1500 step 2 about 3
-- times each and some keys beyond the int4 range; both with NULLs
CREATE TABLE j4_g (id int, k int4);
INSERT INTO j4_g SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE (g * 7919) % 1000 END
FROM generate_series(1, 5000) g;
CREATE TABLE j8_g (id int, k int8);
INSERT INTO j8_g SELECT g, CASE WHEN g % 89 = 0 THEN NULL ELSE ((g * 31) % 1001) * 2 - 500 END
FROM generate_series(1, 3000) g;
INSERT INTO j8_g VALUES (3001, 2147483648), (3002, -2147483649), (3003, 9223372036854775807),
	(3004, 2147483647), (3005, -2147483648);
CREATE TABLE j4_b AS SELECT * FROM j4_g;
CREATE TABLE j8_b AS SELECT * FROM j8_g;
INSERT INTO j4_g VALUES (5001, 2147483647), (5002, -2147483648);
INSERT INTO j4_b VALUES (5001, 2147483647), (5002, -2147483648);
CREATE INDEX j4_g_idx ON j4_g USING gbtree (k);
CREATE INDEX j8_g_idx ON j8_g USING gbtree (k);
CREATE INDEX j4_b_idx ON j4_b USING btree (k);
CREATE INDEX j8_b_idx ON j8_b USING btree (k);
-- jd: like j8, indexed DESC
CREATE TABLE jd_g AS SELECT * FROM j8_g;
CREATE TABLE jd_b AS SELECT * FROM j8_g;
CREATE INDEX jd_g_idx ON jd_g USING gbtree (k DESC);
CREATE INDEX jd_b_idx ON jd_b USING btree (k DESC);
-- float4 / float8 pair with -0, 0, NaN, infinities, many of each
CREATE TABLE jf4_g (id int, k float4);
INSERT INTO jf4_g SELECT g, CASE g % 9 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN '0'
									WHEN 3 THEN 'Infinity' WHEN 4 THEN '-Infinity' WHEN 5 THEN NULL
									ELSE (g % 200) / 4.0 END
FROM generate_series(1, 1000) g;
CREATE TABLE jf8_g (id int, k float8);
INSERT INTO jf8_g SELECT g, CASE g % 7 WHEN 0 THEN 'NaN' WHEN 1 THEN '0' WHEN 2 THEN '-0'
									WHEN 3 THEN 'Infinity' WHEN 4 THEN NULL
									ELSE (g % 300) / 4.0 END
FROM generate_series(1, 600) g;
INSERT INTO jf8_g VALUES (2001, 0.1), (2002, 0.1::float4);
INSERT INTO jf4_g VALUES (3001, 0.1);
CREATE TABLE jf4_b AS SELECT * FROM jf4_g;
CREATE TABLE jf8_b AS SELECT * FROM jf8_g;
CREATE INDEX jf4_g_idx ON jf4_g USING gbtree (k);
CREATE INDEX jf8_g_idx ON jf8_g USING gbtree (k);
CREATE INDEX jf4_b_idx ON jf4_b USING btree (k);
CREATE INDEX jf8_b_idx ON jf8_b USING btree (k);
-- jm: three keys, about 1000 rows each (several leaf pages per key)
CREATE TABLE jm_g (id int, k int8);
INSERT INTO jm_g SELECT g, g % 3 FROM generate_series(1, 3000) g;
CREATE TABLE jm_b AS SELECT * FROM jm_g;
CREATE INDEX jm_g_idx ON jm_g USING gbtree (k);
CREATE INDEX jm_b_idx ON jm_b USING btree (k);
-- timestamps with infinities
CREATE TABLE jts_g (id int, k timestamp);
INSERT INTO jts_g SELECT g, CASE g % 5 WHEN 0 THEN 'infinity' WHEN 1 THEN '-infinity'
									WHEN 2 THEN NULL ELSE '2000-01-01'::timestamp + (g % 50) * interval '1 day' END
FROM generate_series(1, 2000) g;
CREATE TABLE jts_b AS SELECT * FROM jts_g;
CREATE INDEX jts_g_idx ON jts_g USING gbtree (k);
CREATE INDEX jts_b_idx ON jts_b USING btree (k);
-- probe values for the nested loops (no index)
CREATE TABLE probe (pid int, v4 int4, v8 int8, lo int4, hi int4, arr int4[]);
INSERT INTO probe VALUES
	(1, 0, 0, 0, 10, '{0,1,2}'),
	(2, 999, 999, 990, 2000, '{999,999,NULL}'),
	(3, 500, 500, 500, 500, '{}'),
	(4, NULL, NULL, NULL, 5, NULL),
	(5, -1, 2147483648, 10, 0, '{NULL}'),
	(6, 2147483647, 2147483647, 2147483640, 2147483647, '{2147483647,-2147483648}'),
	(7, -2147483648, -2147483649, -2147483648, -2147483647, '{-2147483648}'),
	(8, 123, 9223372036854775807, -5, 3, '{3,2,1,0,-1}'),
	(9, 123, 123, 100, 130, '{123,124,125,126}'),
	(10, 0, 0, 0, 10, '{0,1,2}');
VACUUM ANALYZE jm_g, jm_b, j4_g, j4_b, j8_g, j8_b, jd_g, jd_b, jf4_g, jf4_b, jf8_g, jf8_b, jts_g, jts_b, probe;

--
-- merge joins
--
SELECT * FROM chk_joins(ARRAY[
	'SELECT a.id, b.id FROM j4{S} a JOIN j4{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM j4{S} a JOIN j8{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM j8{S} a JOIN j4{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM j4{S} a JOIN j8{S} b ON a.k = b.k WHERE a.k BETWEEN 100 AND 300',
	'SELECT a.id, b.id FROM j4{S} a JOIN j8{S} b ON a.k = b.k WHERE b.k > 900 AND a.k < 2147483647',
	'SELECT a.id, b.id FROM j4{S} a LEFT JOIN j8{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM j4{S} a FULL JOIN j8{S} b ON a.k = b.k',
	'SELECT a.id FROM j4{S} a WHERE a.k IN (SELECT k FROM j8{S})',
	'SELECT a.id, b.id FROM jf4{S} a JOIN jf8{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM jf4{S} a JOIN jf4{S} b ON a.k = b.k WHERE a.k <= 0',
	'SELECT a.id, b.id FROM jf8{S} a FULL JOIN jf4{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM jts{S} a JOIN jts{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM jd{S} a JOIN j4{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM jd{S} a JOIN jd{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM j4{S} a JOIN jm{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM jm{S} a JOIN j4{S} b ON a.k = b.k',
	'SELECT a.id, b.id FROM jm{S} a JOIN jm{S} b ON a.k = b.k WHERE a.id % 100 = 0'], 'merge');
-- the same with index-only scans where the join needs only the keys
SELECT * FROM chk_joins(ARRAY[
	'SELECT a.k, b.k FROM j4{S} a JOIN j4{S} b ON a.k = b.k',
	'SELECT a.k, b.k FROM j4{S} a JOIN j8{S} b ON a.k = b.k',
	'SELECT a.k::text, b.k::text FROM jf4{S} a JOIN jf8{S} b ON a.k = b.k',
	'SELECT a.k, b.k FROM jts{S} a FULL JOIN jts{S} b ON a.k = b.k',
	'SELECT a.k, b.k FROM jd{S} a JOIN jd{S} b ON a.k = b.k WHERE a.k < 100',
	'SELECT a.k, b.k FROM j4{S} a JOIN jm{S} b ON a.k = b.k'], 'merge_ionly');

SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
SET enable_sort = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM j4_g a JOIN j8_g b ON a.k = b.k;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM j4_b a JOIN j8_b b ON a.k = b.k;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM jf4_g a FULL JOIN jf8_g b ON a.k = b.k;
EXPLAIN (COSTS OFF) SELECT a.k, b.k FROM jd_g a JOIN jd_g b ON a.k = b.k ORDER BY a.k DESC;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM j4_g a JOIN jm_g b ON a.k = b.k;
SELECT a.k::text AS ak, b.k::text AS bk, count(*)
FROM jf4_g a JOIN jf8_g b ON a.k = b.k
WHERE a.k = 0 OR a.k = 'NaN' OR a.k < 0.2::float8
GROUP BY 1, 2 ORDER BY 1, 2;
SELECT a.k, count(*) FROM j4_g a JOIN j8_g b ON a.k = b.k
WHERE a.k > 2000 OR a.k < -500 GROUP BY a.k ORDER BY a.k;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_material;
RESET enable_sort;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;

--
-- nested loops with a parameterized inner gbtree index scan
--
SELECT * FROM chk_joins(ARRAY[
	'SELECT p.pid, a.id FROM probe p JOIN j4{S} a ON a.k = p.v4',
	'SELECT p.pid, a.id FROM probe p JOIN j4{S} a ON a.k = p.v8',
	'SELECT p.pid, a.id FROM probe p JOIN j8{S} a ON a.k = p.v4',
	'SELECT p.pid, a.id FROM probe p JOIN j4{S} a ON a.k < p.v4 AND a.k >= p.lo',
	'SELECT p.pid, a.id FROM probe p JOIN j4{S} a ON a.k BETWEEN p.lo AND p.hi',
	'SELECT p.pid, a.id FROM probe p JOIN j8{S} a ON a.k BETWEEN p.lo AND p.v8',
	'SELECT p.pid, a.id FROM probe p JOIN j4{S} a ON a.k = ANY (p.arr)',
	'SELECT p.pid, a.id FROM probe p JOIN j8{S} a ON a.k = ANY (p.arr) AND a.k > p.lo',
	'SELECT p.pid, a.id FROM probe p JOIN jd{S} a ON a.k = p.v8',
	'SELECT p.pid, a.id FROM probe p JOIN jd{S} a ON a.k BETWEEN p.lo AND p.hi',
	'SELECT p.pid, a.id FROM probe p LEFT JOIN j4{S} a ON a.k = p.v4',
	'SELECT p.pid FROM probe p WHERE EXISTS (SELECT 1 FROM j4{S} a WHERE a.k = p.v8)',
	'SELECT p.pid FROM probe p WHERE NOT EXISTS (SELECT 1 FROM j8{S} a WHERE a.k = p.v4)',
	'SELECT p.pid, x.k FROM probe p, LATERAL (SELECT k FROM j4{S} a WHERE a.k > p.v4 ORDER BY a.k LIMIT 3) x',
	'SELECT p.pid, x.k FROM probe p, LATERAL (SELECT k FROM j8{S} a WHERE a.k < p.v8 ORDER BY a.k DESC LIMIT 3) x',
	'SELECT p.pid, x.k FROM probe p, LATERAL (SELECT k FROM jd{S} a WHERE a.k >= p.lo ORDER BY a.k LIMIT 2) x',
	'SELECT p.pid, (SELECT max(k) FROM j4{S} a WHERE a.k < p.v4), (SELECT min(k) FROM j8{S} b WHERE b.k > p.v8) FROM probe p',
	'SELECT a.id, b.id FROM jf4{S} a JOIN jf8{S} b ON b.k = a.k WHERE a.id % 50 = 0',
	'SELECT a.id, b.id FROM jts{S} a JOIN jts{S} b ON b.k = a.k WHERE a.id % 100 = 0'], 'nestloop');

SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT p.pid, a.id FROM probe p JOIN j4_g a ON a.k = p.v8;
EXPLAIN (COSTS OFF) SELECT p.pid, a.id FROM probe p JOIN j4_b a ON a.k = p.v8;
EXPLAIN (COSTS OFF) SELECT p.pid, a.id FROM probe p JOIN j8_g a ON a.k = ANY (p.arr) AND a.k > p.lo;
EXPLAIN (COSTS OFF) SELECT p.pid, x.k FROM probe p, LATERAL (SELECT k FROM j8_g a WHERE a.k < p.v8 ORDER BY a.k DESC LIMIT 3) x;
SELECT p.pid, count(a.id), min(a.k), max(a.k) FROM probe p LEFT JOIN j4_g a ON a.k BETWEEN p.lo AND p.hi
GROUP BY p.pid ORDER BY p.pid;
SELECT p.pid, array_agg(x.k) FROM probe p,
	LATERAL (SELECT k FROM j8_g a WHERE a.k < p.v8 ORDER BY a.k DESC LIMIT 3) x
GROUP BY p.pid ORDER BY p.pid;
SELECT p.pid, array_agg(x.k) FROM probe p,
	LATERAL (SELECT k FROM j4_g a WHERE a.k = ANY (p.arr) ORDER BY a.k LIMIT 4) x
GROUP BY p.pid ORDER BY p.pid;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- clean up
RESET search_path;
DROP SCHEMA t04 CASCADE;
