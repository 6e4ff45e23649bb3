--
-- t02_cross_type: cross-type comparisons inside an operator family.
--
-- integer_ops: int2 / int4 / int8 columns against constants of the other
-- two types, including constants outside the column type's range (which
-- must neither error nor wrap around); float_ops: float4 / float8 columns
-- against constants of the other type, including float8 values that no
-- float4 can equal (0.1, 1e300).  Datetime types have no cross-type
-- operators in gbtree: such quals cannot use the index but must still
-- give the right answer.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t02;
SET search_path = t02, public;

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

SELECT mk('i2', 'int2', 'v * 93', '{-32768,32767,-32767,32766,0,NULL}');
SELECT mk('i4', 'int4', 'v * 6135037', '{-2147483648,2147483647,-2147483647,2147483646,0,32767,32768,-32768,-32769,NULL}');
SELECT mk('i8', 'int8', 'v * 26351234391', '{-9223372036854775808,9223372036854775807,2147483647,2147483648,-2147483648,-2147483649,32767,32768,-32768,0,NULL}');
SELECT mk('f4', 'float4', 'v / 10.0', '{NaN,-0,0,Infinity,-Infinity,3.4028235e+38,-3.4028235e+38,1e-45,-1e-45,0.1,0.5,NULL}');
SELECT mk('f8', 'float8', 'v / 10.0', '{NaN,-0,0,Infinity,-Infinity,1e300,-1e300,3.4028234663852886e+38,3.4028235e+38,1.401298464324817e-45,1e-45,0.1,0.10000000149011612,0.5,NULL}');
VACUUM ANALYZE i2_g, i2_b, i4_g, i4_b, i8_g, i8_b, f4_g, f4_b, f8_g, f8_b;
SELECT b.base, a.* FROM unnest(ARRAY['i2', 'i4', 'i8', 'f4', 'f8']) b(base), am_of(b.base) a;

--
-- int2 column
--
SELECT * FROM chk_list('i2', ARRAY[
	'k = 100000', 'k = -100000', 'k = 100000::int8', 'k = 32768', 'k = -32769::int8',
	'k = 32767', 'k = 32767::int8', 'k = -32768::int4', 'k = 93::int8', 'k = 93',
	'k < 100000', 'k <= 100000::int8', 'k > -100000', 'k >= -100000::int8',
	'k > 100000', 'k >= 32768', 'k > 32767::int4', 'k < -32768::int8', 'k <= -32769',
	'k < 9223372036854775807', 'k > -9223372036854775808', 'k > 9223372036854775807',
	'k < -9223372036854775808', 'k <= 32767::int8 AND k >= -32768::int8',
	'k BETWEEN -100000 AND 100000::int8', 'k BETWEEN 930::int8 AND 2790::int4',
	'k > 5::int8 AND k < 1000::int4', 'k > 100::int2 AND k > 50::int8 AND k < 70000 AND k < 1000::int8',
	'k = 93::int8 AND k = 93::int4', 'k = 93::int8 AND k = 186', 'k = 93::int8 AND k > 100000',
	'k = ANY (''{93,100000,-100000,32767,93}''::int4[])',
	'k = ANY (''{-9223372036854775808,9223372036854775807,-32768,0,NULL}''::int8[])',
	'k = ANY (''{1,2,3}''::int8[]) OR k = ANY (''{100000}''::int4[])',
	'k IN (93::int8, 186::int4, 279::int2, 100000)',
	'k = ANY (''{93,186,279,100000}''::int8[]) AND k > 100::int4',
	'k = ANY (''{32767,32768,100000}''::int4[]) AND k >= 32767::int8']);

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM i2_g WHERE k = 100000::int4;
SELECT count(*) FROM i2_g WHERE k = 100000::int4;
EXPLAIN (COSTS OFF) SELECT count(*) FROM i2_g WHERE k < 100000;
SELECT (SELECT count(*) FROM i2_g WHERE k < 100000) AS lt_100000,
	   (SELECT count(*) FROM i2_g WHERE k IS NOT NULL) AS not_null,
	   (SELECT count(*) FROM i2_g WHERE k > -100000::int8) AS gt_minus_100000;
EXPLAIN (COSTS OFF) SELECT k FROM i2_g WHERE k > 32000::int8 ORDER BY k DESC LIMIT 4;
SELECT k FROM i2_g WHERE k > 32000::int8 ORDER BY k DESC LIMIT 4;
SELECT k FROM i2_g WHERE k < -32000::int4 ORDER BY k LIMIT 4;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- int4 column
--
SELECT * FROM chk_list('i4', ARRAY[
	'k = 2147483648', 'k = -2147483649', 'k = 2147483647::int8', 'k = -2147483648::int8',
	'k = 6135037::int8', 'k = 32767::int2', 'k = ''-32768''::int2', 'k = 32768',
	'k < 2147483648', 'k <= 2147483647::int8', 'k > -2147483649', 'k >= -2147483648::int8',
	'k > 2147483647::int8', 'k < -2147483648::int8', 'k > 9223372036854775807',
	'k < 32767::int2', 'k > 32767::int2', 'k >= ''-32768''::int2 AND k <= 32767::int2',
	'k BETWEEN -5000000000 AND 5000000000', 'k > 0::int2 AND k < 100000000::int8',
	'k >= 6135037::int8 AND k <= 6135037::int4', 'k > 1::int2 AND k > 1000::int4 AND k > 10::int8',
	'k = ANY (''{2147483647,2147483648,-2147483649,6135037,NULL}''::int8[])',
	'k = ANY (''{32767,-32768,32767,0}''::int2[])',
	'k IN (32767::int2, 32768::int4, 2147483648::int8)',
	'k = ANY (''{0,32767,32768,6135037}''::int8[]) AND k > 32767::int2']);

--
-- int8 column
--
SELECT * FROM chk_list('i8', ARRAY[
	'k = 32767::int2', 'k = ''-32768''::int2', 'k = 2147483647', 'k = ''-2147483648''::int4',
	'k = 26351234391', 'k = 0::int2', 'k < 5::int2', 'k > 32767::int2', 'k >= ''-32768''::int2',
	'k > 2147483647', 'k >= 2147483648', 'k < ''-2147483648''::int4', 'k <= -2147483649',
	'k > 32767::int2 AND k < 2147483648', 'k BETWEEN ''-32768''::int2 AND 2147483647::int4',
	'k > 0::int2 AND k > 1000::int4 AND k < 9223372036854775807',
	'k = ANY (''{1,2,32767,-32768}''::int2[])', 'k = ANY (''{2147483647,-2147483648,NULL}''::int4[])',
	'k IN (32767::int2, 32768::int4, 2147483648::int8, 9223372036854775807)',
	'k = ANY (''{32767,-32768}''::int2[]) OR k = ANY (''{2147483648}''::int8[])']);

--
-- float4 column against float8 constants (and vice versa below).  0.1 is
-- not a float4: the float4 0.1 widened is 0.10000000149011612 > 0.1.
--
SELECT * FROM chk_list('f4', ARRAY[
	'k = 0.1::float8', 'k = 0.1::float4', 'k = 0.1::float4::float8', 'k < 0.1::float8',
	'k <= 0.1::float8', 'k > 0.1::float8', 'k >= 0.1::float4', 'k = 0.5::float8',
	'k = 1e300::float8', 'k = -1e300::float8', 'k < 1e300::float8', 'k > -1e300::float8',
	'k > 1e300::float8', 'k < -1e300::float8', 'k = 3.4028235e38::float8',
	'k <= 3.4028235e38::float8', 'k > 3.4028234663852886e38::float8',
	'k >= 3.4028234663852886e38::float8', 'k = ''NaN''::float8', 'k > ''Infinity''::float8',
	'k >= ''Infinity''::float8', 'k < ''NaN''::float8', 'k = ''-Infinity''::float8',
	'k = ''-0''::float8', 'k = 0::float8', 'k < 0::float8', 'k > ''-0''::float8',
	'k = 1e-45::float8', 'k = 1.401298464324817e-45::float8', 'k > 0::float8 AND k < 1e-44::float8',
	'k > 0::float8 AND k < 1e-300::float8', 'k BETWEEN -0.1::float8 AND 0.1::float8',
	'k > 0.05::float4 AND k < 0.1::float8', 'k > 0.05::float4 AND k <= 0.1::float4',
	'k > 0.1::float8 AND k > 0.05::float4 AND k < 1e300::float8',
	'k = ANY (''{0.1,0.5,NaN,1e300,NULL}''::float8[])',
	'k = ANY (ARRAY[0.1::float4::float8, 0.2::float8])',
	'k = 0.1', 'k < 0.1', 'k = 0.5']);

--
-- float8 column against float4 constants
--
SELECT * FROM chk_list('f8', ARRAY[
	'k = 0.1::float4', 'k = 0.1::float8', 'k = 0.1::float4::float8', 'k < 0.1::float4',
	'k > 0.1::float4', 'k >= 0.1::float4', 'k = ''NaN''::float4', 'k > ''Infinity''::float4',
	'k = ''Infinity''::float4', 'k > 3.4028235e38::float4', 'k >= 3.4028235e38::float4',
	'k < -3.4028235e38::float4', 'k = 1e-45::float4', 'k > 0::float4 AND k < 1e-45::float4',
	'k = ''-0''::float4', 'k < ''-0''::float4', 'k > 0.05::float4 AND k < 0.2::float8',
	'k = ANY (''{0.1,0.5,NaN,-0}''::float4[])', 'k = ANY (''{0.1,0.5}''::float4[]) AND k > 0.1::float8']);

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM f4_g WHERE k = 0.1;
SELECT count(*) FROM f4_g WHERE k = 0.1;
SELECT count(*) FROM f4_g WHERE k = 0.1::float4;
EXPLAIN (COSTS OFF) SELECT k FROM f4_g WHERE k > 0.09::float8 AND k < 0.11::float8;
SELECT k FROM f4_g WHERE k > 0.09::float8 AND k < 0.11::float8;
SELECT k FROM f4_g WHERE k > 0.1::float8 ORDER BY k LIMIT 4;
SELECT k FROM f4_g WHERE k < 0.1::float8 ORDER BY k DESC LIMIT 4;
SELECT k FROM f4_g WHERE k < 1e300::float8 ORDER BY k DESC LIMIT 2;
SELECT k FROM f4_g WHERE k > 1e300::float8 ORDER BY k LIMIT 5;
EXPLAIN (COSTS OFF) SELECT k FROM f8_g WHERE k = 0.1::float4;
SELECT k FROM f8_g WHERE k = 0.1::float4;
SELECT k FROM f8_g WHERE k > 3.4028235e38::float4 ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- ordered scans with cross-type bounds
--
SELECT c.*, o.*
FROM (VALUES (1, 'i2', 'k', 'k > 100::int8', '10'), (2, 'i2', 'k DESC', 'k < 100000', '10'),
			 (3, 'i2', 'k DESC', 'k > -100000::int8 AND k < 32767::int8', 'ALL'),
			 (4, 'i4', 'k', 'k >= -2147483649', '5'), (5, 'i4', 'k DESC', 'k <= 2147483648', '5'),
			 (6, 'i8', 'k', 'k > 32767::int2', '10'), (7, 'i8', 'k DESC', 'k < 2147483648::int8 AND k > ''-32768''::int2', 'ALL'),
			 (8, 'i8', 'k', 'k = ANY (''{32767,-32768,0}''::int2[])', 'ALL'),
			 (9, 'f4', 'k', 'k > 0.1::float8', '10'), (10, 'f4', 'k DESC', 'k < 0.1::float8', '10'),
			 (11, 'f4', 'k DESC', 'k < 1e300::float8', '3'), (12, 'f4', 'k', 'k > -1e300::float8', '3'),
			 (13, 'f8', 'k', 'k > 0.1::float4', '10'), (14, 'f8', 'k DESC', 'k <= 0.1::float4', '10'))
	 AS c(n, base, ord, pred, lim),
	 LATERAL chk_order(c.base, c.ord, c.pred, c.lim) o
ORDER BY c.n;

--
-- prepared statements with generic plans and cross-type parameters
--
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
PREPARE p_i2_lt(int8) AS SELECT count(*) FROM i2_g WHERE k < $1;
PREPARE p_i2_eq(int4) AS SELECT count(*) FROM i2_g WHERE k = $1;
EXPLAIN (COSTS OFF) EXECUTE p_i2_lt(100000);
EXPLAIN (COSTS OFF) EXECUTE p_i2_eq(93);
SELECT v,
	   (SELECT count(*) FROM i2_b WHERE k < v) AS btree_lt,
	   (SELECT count(*) FROM i2_b WHERE k = v) AS btree_eq
FROM unnest(ARRAY[-9223372036854775808, -100000, -32769, -32768, 0, 93, 32767, 32768, 100000,
				  9223372036854775807, NULL]) v;
EXECUTE p_i2_lt(-9223372036854775808);
EXECUTE p_i2_lt(-100000);
EXECUTE p_i2_lt(-32768);
EXECUTE p_i2_lt(93);
EXECUTE p_i2_lt(32768);
EXECUTE p_i2_lt(9223372036854775807);
EXECUTE p_i2_lt(NULL);
EXECUTE p_i2_eq(-32769);
EXECUTE p_i2_eq(-32768);
EXECUTE p_i2_eq(93);
EXECUTE p_i2_eq(32768);
EXECUTE p_i2_eq(NULL);
PREPARE p_f4(float8, float8) AS SELECT count(*) FROM f4_g WHERE k > $1 AND k <= $2;
EXPLAIN (COSTS OFF) EXECUTE p_f4(0, 1);
SELECT (SELECT count(*) FROM f4_b WHERE k > 0.1::float8 AND k <= 1e300::float8) AS b1,
	   (SELECT count(*) FROM f4_b WHERE k > '-Infinity'::float8 AND k <= 'NaN'::float8) AS b2,
	   (SELECT count(*) FROM f4_b WHERE k > 0::float8 AND k <= 0.1::float8) AS b3;
EXECUTE p_f4(0.1, 1e300);
EXECUTE p_f4('-Infinity', 'NaN');
EXECUTE p_f4(0, 0.1);
PREPARE p_i8_any(int4[]) AS SELECT count(*) FROM i8_g WHERE k = ANY ($1);
EXPLAIN (COSTS OFF) EXECUTE p_i8_any('{1}');
EXECUTE p_i8_any('{2147483647,-2147483648,32767,32767,NULL}');
EXECUTE p_i8_any('{}');
EXECUTE p_i8_any(NULL);
SELECT count(*) FROM i8_b WHERE k = ANY ('{2147483647,-2147483648,32767,32767,NULL}'::int4[]);
DEALLOCATE ALL;
RESET plan_cache_mode;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- no cross-type operators across families: an int4 column against a
-- float8 constant, a date column against a timestamp constant.  gbtree
-- cannot use the index for those quals (btree can, for date/timestamp),
-- but the answers must agree.
--
SELECT mk('d', 'date', '''2000-01-01''::date + v * 37', '{infinity,-infinity,2000-01-01,NULL}');
VACUUM ANALYZE d_g, d_b;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM d_g WHERE k < '2000-01-01 12:00'::timestamp;
SELECT (SELECT count(*) FROM d_g WHERE k < '2000-01-01 12:00'::timestamp) AS g,
	   (SELECT count(*) FROM d_b WHERE k < '2000-01-01 12:00'::timestamp) AS b;
SELECT (SELECT count(*) FROM d_g WHERE k = '2000-01-01 00:00'::timestamptz) AS g,
	   (SELECT count(*) FROM d_b WHERE k = '2000-01-01 00:00'::timestamptz) AS b;
EXPLAIN (COSTS OFF) SELECT count(*) FROM i4_g WHERE k = 6135037::float8;
SELECT (SELECT count(*) FROM i4_g WHERE k = 6135037::float8) AS g,
	   (SELECT count(*) FROM i4_b WHERE k = 6135037::float8) AS b;
SELECT (SELECT count(*) FROM i4_g WHERE k < 2147483647.5) AS g,
	   (SELECT count(*) FROM i4_b WHERE k < 2147483647.5) AS b;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- clean up
RESET search_path;
DROP SCHEMA t02 CASCADE;
