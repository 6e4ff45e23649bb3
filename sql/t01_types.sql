--
-- t01_types: every supported type, gbtree twin vs btree twin.
--
-- For each type: a matrix of predicates (equality, ranges, BETWEEN, IN,
-- = ANY with duplicates / NULLs / empty / NULL arrays, IS [NOT] NULL, ORs)
-- run under forced index scans, bitmap scans and index-only scans, with the
-- nasty values (NULL, min / max, NaN, -0, +-Infinity, infinite dates ...)
-- in the data; ordered scans in all directions; min() / max().
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t01;
SET search_path = t01, public;

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
-- preds(typ, min, lo, mid, hi, max, absent): the generic predicate list
-- for one type; min and max are the type's smallest and largest values
-- (for floats: -Infinity and NaN), absent is a value between lo and hi
-- that is not in the table.
--
CREATE FUNCTION preds(typ text, vmin text, lo text, mid text, hi text,
					  vmax text, absent text) RETURNS text[]
LANGUAGE plpgsql AS $f$
DECLARE
	a text := quote_literal(vmin);
	l text := quote_literal(lo);
	m text := quote_literal(mid);
	h text := quote_literal(hi);
	z text := quote_literal(vmax);
	x text := quote_literal(absent);
BEGIN
	RETURN ARRAY[
		format('k = %s', m),
		format('k = %s', a),
		format('k = %s', z),
		format('k = %s', x),
		format('k < %s', l),
		format('k <= %s', l),
		format('k > %s', h),
		format('k >= %s', h),
		format('k < %s', a),
		format('k <= %s', a),
		format('k > %s', z),
		format('k >= %s', z),
		format('k > %s', a),
		format('k < %s', z),
		format('k BETWEEN %s AND %s', l, h),
		format('k BETWEEN %s AND %s', h, l),
		format('k >= %s AND k <= %s', m, m),
		format('k > %s AND k >= %s AND k < %s AND k <= %s', l, m, z, h),
		format('k IN (%s, %s, %s, %s)', l, m, h, x),
		format('k = ANY (%L::%s[])', ARRAY[mid, mid, NULL, vmax, absent, vmin]::text, typ),
		format('k = ANY (%L::%s[])', '{}', typ),
		format('k = ANY (%L::%s[])', '{NULL}', typ),
		format('k = ANY (NULL::%s[])', typ),
		format('k = ANY (%L::%s[]) AND k > %s', ARRAY[lo, mid, hi]::text, typ, l),
		format('k = ANY (%L::%s[]) AND k < %s AND k >= %s', ARRAY[hi, lo, mid]::text, typ, h, m),
		'k IS NULL',
		'k IS NOT NULL',
		format('k IS NOT NULL AND k < %s', m),
		format('k IS NULL AND k = %s', m),
		format('k < %s OR k > %s', l, h),
		format('k = %s OR k IS NULL', m)
	];
END
$f$;

-- the ordering checks for one type
CREATE FUNCTION ords(lo text, mid text, hi text, vmax text)
RETURNS TABLE (ord text, pred text, lim text)
LANGUAGE sql AS $f$
	VALUES ('k', 'true', 'ALL'),
		   ('k DESC', 'true', 'ALL'),
		   ('k NULLS FIRST', 'true', 'ALL'),
		   ('k DESC NULLS LAST', 'true', 'ALL'),
		   ('k', 'true', '10'),
		   ('k DESC', 'true', '10'),
		   ('k', 'k IS NOT NULL', '7'),
		   ('k DESC', 'k IS NOT NULL', '7'),
		   ('k', format('k > %L', lo), '20'),
		   ('k DESC', format('k < %L', hi), '20'),
		   ('k DESC', format('k >= %L', mid), '20'),
		   ('k', format('k BETWEEN %L AND %L', lo, hi), 'ALL'),
		   ('k DESC', format('k BETWEEN %L AND %L', lo, hi), 'ALL'),
		   ('k', format('k = ANY (%L)', ARRAY[hi, lo, mid, vmax, hi]::text), 'ALL'),
		   ('k DESC', format('k = ANY (%L)', ARRAY[hi, lo, mid, vmax, hi]::text), 'ALL'),
		   ('k', 'k IS NULL', 'ALL')
$f$;

-- run the whole matrix for one type
CREATE FUNCTION run_preds(base text, typ text, vmin text, lo text, mid text,
						  hi text, vmax text, absent text, extra text[])
RETURNS TABLE (pred text, nrows bigint, seq text, iscan text, bitmap text, ionly text)
LANGUAGE sql AS $f$
	SELECT p.pred, c.*
	FROM unnest(preds(typ, vmin, lo, mid, hi, vmax, absent) || extra)
		 WITH ORDINALITY AS p(pred, n),
		 LATERAL chk(base, p.pred) c
	ORDER BY p.n
$f$;

CREATE FUNCTION run_ords(base text, lo text, mid text, hi text, vmax text)
RETURNS TABLE (ord text, pred text, lim text, nrows int, iscan text, ionly text)
LANGUAGE sql AS $f$
	SELECT o.ord, o.pred, o.lim, c.*
	FROM ords(lo, mid, hi, vmax) WITH ORDINALITY AS o(ord, pred, lim, n),
		 LATERAL chk_order(base, o.ord, o.pred, o.lim) c
	ORDER BY o.n
$f$;

--
-- int2
--
SELECT mk('int2', 'int2', 'v', '{-32768,32767,0,-1,1,-32767,32766,NULL}');
VACUUM ANALYZE int2_g, int2_b;
SELECT * FROM am_of('int2');
SELECT * FROM run_preds('int2', 'int2', '-32768', '-300', '7', '300', '32767', '123',
	ARRAY['k = 0', 'k >= 32766', 'k <= -32767', 'k > -1 AND k < 1']);
SELECT * FROM run_ords('int2', '-300', '7', '300', '32767');
SELECT * FROM minmax('int2');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM int2_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 3;
SELECT k FROM int2_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 3;
SELECT k FROM int2_g ORDER BY k LIMIT 3;
EXPLAIN (COSTS OFF) SELECT id, k FROM int2_g WHERE k = -32768 ORDER BY id;
SELECT id, k FROM int2_g WHERE k = -32768 ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- int4
--
SELECT mk('int4', 'int4', 'v * 1000003', '{-2147483648,2147483647,0,-1,1,-2147483647,2147483646,NULL}');
VACUUM ANALYZE int4_g, int4_b;
SELECT * FROM am_of('int4');
SELECT * FROM run_preds('int4', 'int4', '-2147483648', '-300000900', '7000021', '300000900',
	'2147483647', '123456789',
	ARRAY['k = 0', 'k >= 2147483646', 'k <= -2147483647', 'k > -1 AND k < 1']);
SELECT * FROM run_ords('int4', '-300000900', '7000021', '300000900', '2147483647');
SELECT * FROM minmax('int4');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM int4_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 3;
SELECT k FROM int4_g ORDER BY k LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- int8
--
SELECT mk('int8', 'int8', 'v * 10000000000019',
	'{-9223372036854775808,9223372036854775807,9223372036854775806,-9223372036854775807,0,-1,1,4294967296,-4294967296,NULL}');
VACUUM ANALYZE int8_g, int8_b;
SELECT * FROM am_of('int8');
SELECT * FROM run_preds('int8', 'int8', '-9223372036854775808', '-3000000000000570',
	'70000000000133', '3000000000000570', '9223372036854775807', '1234567890123',
	ARRAY['k = 0', 'k >= 9223372036854775806', 'k > 9223372036854775806',
		  'k <= -9223372036854775807', 'k = 4294967296', 'k > -1 AND k < 1']);
SELECT * FROM run_ords('int8', '-3000000000000570', '70000000000133', '3000000000000570',
	'9223372036854775807');
SELECT * FROM minmax('int8');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM int8_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 3;
SELECT k FROM int8_g ORDER BY k LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- oid (unsigned: 2147483648 and up sort above 2147483647)
--
SELECT mk('oid', 'oid', '(v + 350) * 6000000::int8', '{0,4294967295,4294967294,2147483647,2147483648,1,NULL}');
VACUUM ANALYZE oid_g, oid_b;
SELECT * FROM am_of('oid');
SELECT * FROM run_preds('oid', 'oid', '0', '300000000', '2100000000', '3900000000',
	'4294967295', '3000000001',
	ARRAY['k > 2147483647', 'k >= 2147483648', 'k < 2147483648', 'k = 2147483648',
		  'k > 4294967294']);
SELECT * FROM run_ords('oid', '300000000', '2100000000', '3900000000', '4294967295');
SELECT * FROM minmax('oid');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM oid_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 3;
SELECT k FROM oid_g ORDER BY k LIMIT 3;
SELECT k FROM oid_g WHERE k BETWEEN 2147483647 AND 2147483648 ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- float4
--
SELECT mk('float4', 'float4', 'v / 10.0',
	'{NaN,-0,0,Infinity,-Infinity,3.4028235e+38,-3.4028235e+38,1e-45,-1e-45,1.1754944e-38,0.1,NULL}');
VACUUM ANALYZE float4_g, float4_b;
SELECT * FROM am_of('float4');
SELECT * FROM run_preds('float4', 'float4', '-Infinity', '-30', '0.5', '30', 'NaN', '0.25',
	ARRAY['k = 0', 'k = ''-0''', 'k < 0', 'k <= 0', 'k > ''-0''', 'k >= 0',
		  'k = ''NaN''', 'k > ''Infinity''', 'k >= ''Infinity''', 'k < ''NaN''',
		  'k <= ''NaN''', 'k = ''Infinity''', 'k = ''-Infinity''', 'k < ''-Infinity''',
		  'k > ''-Infinity'' AND k < ''Infinity''', 'k = ''0.1''', 'k > ''0.1''',
		  'k > 0 AND k < ''1e-30''', 'k < 0 AND k > ''-1e-30''',
		  'k = ANY (''{NaN,-0,Infinity,NaN}'')', 'k >= ''3.4028235e+38''']);
SELECT * FROM run_ords('float4', '-30', '0.5', '30', 'NaN');
SELECT * FROM minmax('float4');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM float4_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 5;
SELECT k FROM float4_g ORDER BY k LIMIT 3;
-- index-only scans must give back -0 and NaN exactly
EXPLAIN (COSTS OFF) SELECT k::text AS k, count(*) FROM float4_g WHERE k = 0 GROUP BY 1 ORDER BY 1;
SELECT k::text AS k, count(*) FROM float4_g WHERE k = 0 GROUP BY 1 ORDER BY 1;
SELECT k::text AS k, count(*) FROM float4_g WHERE k >= 'Infinity' OR k < '-1e38' OR (k > 0 AND k < '1e-30') GROUP BY 1 ORDER BY 1;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- float8
--
SELECT mk('float8', 'float8', 'v / 10.0',
	'{NaN,-0,0,Infinity,-Infinity,1.7976931348623157e+308,-1.7976931348623157e+308,5e-324,-5e-324,2.2250738585072014e-308,0.1,0.10000000149011612,NULL}');
VACUUM ANALYZE float8_g, float8_b;
SELECT * FROM am_of('float8');
SELECT * FROM run_preds('float8', 'float8', '-Infinity', '-30', '0.5', '30', 'NaN', '0.25',
	ARRAY['k = 0', 'k = ''-0''', 'k < 0', 'k <= 0', 'k > ''-0''', 'k >= 0',
		  'k = ''NaN''', 'k > ''Infinity''', 'k >= ''Infinity''', 'k < ''NaN''',
		  'k <= ''NaN''', 'k = ''Infinity''', 'k = ''-Infinity''', 'k < ''-Infinity''',
		  'k > ''-Infinity'' AND k < ''Infinity''', 'k = 0.1', 'k > 0.1', 'k >= 0.1',
		  'k > 0 AND k < ''1e-300''', 'k < 0 AND k > ''-1e-300''',
		  'k = ANY (''{NaN,-0,Infinity,NaN}'')', 'k >= ''1.7976931348623157e+308''']);
SELECT * FROM run_ords('float8', '-30', '0.5', '30', 'NaN');
SELECT * FROM minmax('float8');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM float8_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 5;
SELECT k FROM float8_g ORDER BY k LIMIT 3;
SELECT k::text AS k, count(*) FROM float8_g WHERE k = 0 GROUP BY 1 ORDER BY 1;
SELECT k::text AS k, count(*) FROM float8_g WHERE k >= 'Infinity' OR k < '-1e308' OR (k > 0 AND k < '1e-300') GROUP BY 1 ORDER BY 1;
SELECT k FROM float8_g WHERE k > 0.1 AND k < 0.11 ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- date
--
SELECT mk('date', 'date', '''2000-01-01''::date + v * 37',
	'{infinity,-infinity,4713-01-01 BC,5874897-12-31,294276-12-31,2000-01-01,1970-01-01,NULL}');
VACUUM ANALYZE date_g, date_b;
SELECT * FROM am_of('date');
SELECT * FROM run_preds('date', 'date', '-infinity', '1990-06-01', '2000-01-01', '2010-01-01',
	'infinity', '2000-01-02',
	ARRAY['k > ''294276-12-31''', 'k < ''4713-01-02 BC''', 'k = ''4713-01-01 BC''',
		  'k >= ''5874897-12-31''', 'k > ''-infinity'' AND k < ''infinity''']);
SELECT * FROM run_ords('date', '1990-06-01', '2000-01-01', '2010-01-01', 'infinity');
SELECT * FROM minmax('date');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM date_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 5;
SELECT k FROM date_g ORDER BY k LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- time
--
SELECT mk('time', 'time', '''12:00''::time + v * interval ''123.000001 s''',
	'{00:00,24:00,23:59:59.999999,00:00:00.000001,12:00,NULL}');
VACUUM ANALYZE time_g, time_b;
SELECT * FROM am_of('time');
SELECT * FROM run_preds('time', 'time', '00:00', '06:00', '12:00', '18:00', '24:00', '12:00:01',
	ARRAY['k > ''23:59:59.999999''', 'k >= ''23:59:59.999999''', 'k < ''00:00:00.000001''',
		  'k = ''00:00:00.000001''', 'k > ''00:00'' AND k < ''24:00''']);
SELECT * FROM run_ords('time', '06:00', '12:00', '18:00', '24:00');
SELECT * FROM minmax('time');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM time_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 5;
SELECT k FROM time_g ORDER BY k LIMIT 5;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- timestamp
--
SELECT mk('ts', 'timestamp', '''2000-01-01''::timestamp + v * interval ''37 days 1 hour 1.000001 s''',
	'{infinity,-infinity,4713-01-01 00:00:00 BC,294276-12-31 23:59:59.999999,2000-01-01,1970-01-01,NULL}');
VACUUM ANALYZE ts_g, ts_b;
SELECT * FROM am_of('ts');
SELECT * FROM run_preds('ts', 'timestamp', '-infinity', '1990-01-01', '2000-01-01', '2010-01-01',
	'infinity', '2000-01-01 00:00:01',
	ARRAY['k > ''294276-12-31 23:59:59.999998''', 'k >= ''294276-12-31 23:59:59.999999''',
		  'k < ''4713-01-01 00:00:00.000001 BC''', 'k = ''4713-01-01 00:00:00 BC''',
		  'k > ''-infinity'' AND k < ''infinity''']);
SELECT * FROM run_ords('ts', '1990-01-01', '2000-01-01', '2010-01-01', 'infinity');
SELECT * FROM minmax('ts');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM ts_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 5;
SELECT k FROM ts_g ORDER BY k LIMIT 5;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- timestamptz
--
SELECT mk('tstz', 'timestamptz', '''2000-01-01 00:00+00''::timestamptz + v * interval ''37 days 1 hour 1.000001 s''',
	'{infinity,-infinity,4713-01-01 00:00:00+00 BC,294276-12-31 23:59:59.999999+00,2000-01-01 00:00+00,1970-01-01 00:00+00,NULL}');
VACUUM ANALYZE tstz_g, tstz_b;
SELECT * FROM am_of('tstz');
SELECT * FROM run_preds('tstz', 'timestamptz', '-infinity', '1990-01-01 00:00+00',
	'2000-01-01 00:00+00', '2010-01-01 00:00+00', 'infinity', '2000-01-01 00:00:01+00',
	ARRAY['k > ''294276-12-31 23:59:59.999998+00''', 'k >= ''294276-12-31 23:59:59.999999+00''',
		  'k < ''4713-01-01 00:00:00.000001+00 BC''', 'k = ''2000-01-01 01:00:00+01''',
		  'k > ''-infinity'' AND k < ''infinity''']);
SELECT * FROM run_ords('tstz', '1990-01-01 00:00+00', '2000-01-01 00:00+00',
	'2010-01-01 00:00+00', 'infinity');
SELECT * FROM minmax('tstz');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM tstz_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 5;
SELECT k FROM tstz_g ORDER BY k LIMIT 5;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- money
--
SELECT mk('money', 'money', 'v * 12345.67',
	'{-92233720368547758.08,92233720368547758.07,0,0.01,-0.01,NULL}');
VACUUM ANALYZE money_g, money_b;
SELECT * FROM am_of('money');
SELECT * FROM run_preds('money', 'money', '-92233720368547758.08', '-1000000', '61728.35',
	'1000000', '92233720368547758.07', '0.02',
	ARRAY['k = ''0.01''', 'k > ''-0.01'' AND k < ''0.01''', 'k > ''92233720368547758.06''']);
SELECT * FROM run_ords('money', '-1000000', '61728.35', '1000000', '92233720368547758.07');
SELECT * FROM minmax('money');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k FROM money_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 3;
SELECT k FROM money_g ORDER BY k LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- bool
--
SELECT mk('bool', 'bool', 'v % 3 = 0', '{true,false,NULL}', 200);
VACUUM ANALYZE bool_g, bool_b;
SELECT * FROM am_of('bool');
SELECT p.pred, c.*
FROM unnest(ARRAY['k < true', 'k <= false', 'k > false', 'k >= true', 'k < false',
				  'k > true', 'k >= true AND k <= true', 'k = ANY (''{f,NULL,f}'')',
				  'k = ANY (''{t,f}'')', 'k IS NULL', 'k IS NOT NULL',
				  'k < true OR k IS NULL']) WITH ORDINALITY p(pred, n),
	 LATERAL chk('bool', p.pred) c
ORDER BY p.n;
SELECT o.ord, o.pred, o.lim, c.*
FROM (VALUES (1, 'k', 'true', 'ALL'), (2, 'k DESC', 'true', 'ALL'), (3, 'k', 'true', '300'),
			 (4, 'k DESC', 'k IS NOT NULL', '1500'), (5, 'k', 'k >= false', '1000'))
	 AS o(n, ord, pred, lim),
	 LATERAL chk_order('bool', o.ord, o.pred, o.lim) c
ORDER BY o.n;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT (SELECT k FROM bool_g WHERE k IS NOT NULL ORDER BY k LIMIT 1) AS min_g,
	   (SELECT k FROM bool_g WHERE k IS NOT NULL ORDER BY k DESC LIMIT 1) AS max_g;
RESET enable_seqscan;
RESET enable_bitmapscan;
--
-- "k = true", "k = false", "k IN (true)", "k" and "NOT k": the planner
-- folds these into the bare boolean column, and PostgreSQL 15 turns a bare
-- boolean column back into an index qual only for the built-in btree and
-- hash boolean operator families (IsBooleanOpfamily() in indxpath.c).  So
-- for gbtree these quals are filters, not index conditions; the answers
-- must agree all the same.
--
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM bool_g WHERE k = true;
EXPLAIN (COSTS OFF) SELECT id FROM bool_b WHERE k = true;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT p.pred, c.nrows, c.seq
FROM unnest(ARRAY['k = true', 'k = false', 'k IN (true)', 'k', 'NOT k', 'k IS TRUE',
				  'k IS NOT FALSE', 'k = true OR k IS NULL']) WITH ORDINALITY p(pred, n),
	 LATERAL chk('bool', p.pred) c
ORDER BY p.n;
SELECT (SELECT count(*) FROM bool_g WHERE k) AS g_true,
	   (SELECT count(*) FROM bool_b WHERE k) AS b_true,
	   (SELECT count(*) FROM bool_g WHERE NOT k) AS g_false,
	   (SELECT count(*) FROM bool_b WHERE NOT k) AS b_false,
	   (SELECT count(*) FROM bool_g WHERE k IS NOT TRUE) AS g_not_true,
	   (SELECT count(*) FROM bool_b WHERE k IS NOT TRUE) AS b_not_true;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM bool_g WHERE k = true GROUP BY k;
SELECT k, count(*) FROM bool_g GROUP BY k ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- empty and one-row tables, and a table of NULLs only
--
CREATE TABLE empty_g (id int, k int4);
CREATE TABLE empty_b (id int, k int4);
CREATE INDEX empty_g_idx ON empty_g USING gbtree (k);
CREATE INDEX empty_b_idx ON empty_b USING btree (k);
VACUUM ANALYZE empty_g, empty_b;
SELECT p.pred, c.*
FROM unnest(ARRAY['k = 1', 'k < 1', 'k > 1', 'k IN (1, 2)', 'k IS NULL', 'k IS NOT NULL'])
	 WITH ORDINALITY p(pred, n), LATERAL chk('empty', p.pred) c
ORDER BY p.n;
SELECT * FROM chk_order('empty', 'k DESC');
SELECT * FROM minmax('empty');

CREATE TABLE one_g (id int, k float8);
CREATE TABLE one_b (id int, k float8);
CREATE INDEX one_g_idx ON one_g USING gbtree (k);
CREATE INDEX one_b_idx ON one_b USING btree (k);
INSERT INTO one_g VALUES (1, '-0');
INSERT INTO one_b VALUES (1, '-0');
VACUUM ANALYZE one_g, one_b;
SELECT p.pred, c.*
FROM unnest(ARRAY['k = 0', 'k < 0', 'k <= 0', 'k > 0', 'k >= ''-0''', 'k = ''NaN''',
				  'k = ANY (''{0,0}'')', 'k IS NULL', 'k IS NOT NULL'])
	 WITH ORDINALITY p(pred, n), LATERAL chk('one', p.pred) c
ORDER BY p.n;
SELECT * FROM chk_order('one', 'k DESC');
SELECT * FROM minmax('one');

CREATE TABLE nulls_g (id int, k timestamp);
CREATE TABLE nulls_b (id int, k timestamp);
INSERT INTO nulls_g SELECT g, NULL FROM generate_series(1, 2000) g;
INSERT INTO nulls_b SELECT * FROM nulls_g;
CREATE INDEX nulls_g_idx ON nulls_g USING gbtree (k);
CREATE INDEX nulls_b_idx ON nulls_b USING btree (k);
INSERT INTO nulls_g SELECT g, NULL FROM generate_series(2001, 3000) g;
INSERT INTO nulls_b SELECT * FROM nulls_g WHERE id > 2000;
VACUUM ANALYZE nulls_g, nulls_b;
SELECT p.pred, c.*
FROM unnest(ARRAY['k = ''2000-01-01''', 'k < ''infinity''', 'k IS NULL', 'k IS NOT NULL'])
	 WITH ORDINALITY p(pred, n), LATERAL chk('nulls', p.pred) c
ORDER BY p.n;
SELECT * FROM chk_order('nulls', 'k DESC', 'true', '10');
SELECT * FROM minmax('nulls');

-- clean up
RESET search_path;
DROP SCHEMA t01 CASCADE;
