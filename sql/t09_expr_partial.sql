--
-- t09_expr_partial: expression indexes and partial indexes, gbtree twins
-- vs btree twins.  Expressions of every result type gbtree supports
-- (including ones that turn -0 into 0, or produce int2 / float4 / date
-- from other types); partial indexes whose predicate the query must imply
-- (ranges, IS NOT NULL, IS NULL, a predicate on another column), with the
-- planner choosing the same partial index for both twins.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t09;
SET search_path = t09, public;

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

-- expression indexes: the predicates use the indexed expression
SELECT mk('e_div', 'int4', 'v * 1000 + v % 7', '{-2147483648,2147483647,NULL}', 3, '((k / 1000))');
SELECT mk('e_i2', 'int8', 'v * 100003', '{-9223372036854775808,9223372036854775807,NULL}', 3, '(((k % 30000)::int2))');
SELECT mk('e_neg', 'float8', 'v / 4.0', '{NaN,-0,0,Infinity,-Infinity,NULL}', 3, '((-k))');
SELECT mk('e_abs', 'float4', 'v / 4.0', '{NaN,-0,0,Infinity,-Infinity,NULL}', 3, '((abs(k)))');
SELECT mk('e_f4', 'float8', 'v / 3.0', '{NaN,-0,0,Infinity,-Infinity,3.4e38,-3.4e38,0.1,NULL}', 3, '((k::float4))');
SELECT mk('e_date', 'timestamp', '''2000-01-01''::timestamp + v * interval ''7 hours''',
	'{infinity,-infinity,NULL}', 3, '((k::date))');
VACUUM ANALYZE e_div_g, e_div_b, e_i2_g, e_i2_b, e_neg_g, e_neg_b, e_abs_g, e_abs_b,
	e_f4_g, e_f4_b, e_date_g, e_date_b;
SELECT pg_get_indexdef(c.oid) FROM pg_class c WHERE c.relname LIKE 'e\_%\_g\_idx' ORDER BY c.relname;

SELECT * FROM chk_list('e_div', ARRAY['k / 1000 = 7', 'k / 1000 < -340', 'k / 1000 >= 340',
	'k / 1000 BETWEEN -3 AND 3', 'k / 1000 = ANY (''{1,2,NULL,2147483}'')', 'k / 1000 IS NULL',
	'k / 1000 = 2147483::int8', 'k / 1000 > 100 AND k / 1000 < 101']);
SELECT * FROM chk_list('e_i2', ARRAY['(k % 30000)::int2 = 3',
	'(k % 30000)::int2 < -29000', '(k % 30000)::int2 > 100000', '(k % 30000)::int2 = 100000',
	'(k % 30000)::int2 BETWEEN -10 AND 10', '(k % 30000)::int2 IS NULL']);
SELECT * FROM chk_list('e_neg', ARRAY['-k = 0', '-k < 0', '-k > 80', '-k = ''NaN''',
	'-k = ''-Infinity''', '-k IS NULL', '-k = ANY (''{0.25,-0.25,NaN}'')']);
SELECT * FROM chk_list('e_abs', ARRAY['abs(k) = 0', 'abs(k) > 80', 'abs(k) = ''Infinity''',
	'abs(k) = ''NaN''', 'abs(k) < 0.3', 'abs(k) < 0.3::float8', 'abs(k) = 0.25']);
SELECT * FROM chk_list('e_f4', ARRAY['k::float4 = 3.4e38::float8', 'k::float4 = ''Infinity''',
	'k::float4 > 3.3e38::float8', 'k::float4 = (1.0 / 3.0)::float4', 'k::float4 = 1.0 / 3.0',
	'k::float4 = 0', 'k::float4 < ''-1e38''', 'k::float4 = 0.1', 'k::float4 = 0.1::float4',
	'k::float4 = ''NaN''']);
SELECT * FROM chk_list('e_date', ARRAY['k::date = ''2000-01-01''', 'k::date = ''infinity''',
	'k::date < ''1999-12-01''', 'k::date BETWEEN ''2000-01-01'' AND ''2000-01-03''']);
SELECT c.base, c.ord, o.*
FROM (VALUES (1, 'e_div', 'k / 1000'), (2, 'e_div', 'k / 1000 DESC'), (3, 'e_neg', '-k'),
			 (4, 'e_neg', '-k DESC'), (5, 'e_f4', 'k::float4'), (6, 'e_date', 'k::date DESC'))
	 AS c(n, base, ord),
	 LATERAL chk_order(c.base, c.ord, 'true', '50') o
ORDER BY c.n;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id, k FROM e_neg_g WHERE -k > 80 ORDER BY -k;
SELECT k FROM e_neg_g WHERE -k > 87 ORDER BY -k, id;
EXPLAIN (COSTS OFF) SELECT min(k / 1000), max(k / 1000) FROM e_div_g;
SELECT min(k / 1000), max(k / 1000) FROM e_div_g;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- partial indexes
SELECT mk('p_pos', 'int4', 'v', '{-2147483648,2147483647,NULL}', 3, '(k)', 'WHERE k > 0');
SELECT mk('p_nn', 'float8', 'v / 2.0', '{NaN,-0,0,NULL}', 3, '(k)', 'WHERE k IS NOT NULL');
SELECT mk('p_null', 'int8', 'v', '{NULL}', 3, '(k)', 'WHERE k IS NULL');
SELECT mk('p_id', 'date', '''2000-01-01''::date + v', '{infinity,-infinity,NULL}', 3, '(k DESC)', 'WHERE id % 2 = 0');
SELECT mk('p_nan', 'float4', 'v / 2.0', '{NaN,-0,0,Infinity,NULL}', 3, '(k)', 'WHERE k < ''NaN''');
VACUUM ANALYZE p_pos_g, p_pos_b, p_nn_g, p_nn_b, p_null_g, p_null_b, p_id_g, p_id_b, p_nan_g, p_nan_b;
SELECT pg_get_indexdef(c.oid) FROM pg_class c WHERE c.relname LIKE 'p\_%\_g\_idx' ORDER BY c.relname;
SELECT * FROM chk_list('p_pos', ARRAY['k = 7', 'k > 300', 'k > 0', 'k >= 1', 'k > 5 AND k < 10',
	'k = ANY (''{1,2,2147483647}'') AND k > 0', 'k = 2147483647']);
SELECT * FROM chk_list('p_nn', ARRAY['k = 0', 'k > 170', 'k IS NOT NULL', 'k = ''NaN''',
	'k < 0']);
SELECT * FROM chk_list('p_null', ARRAY['k IS NULL']);
SELECT * FROM chk_list('p_id', ARRAY['k = ''2000-01-01'' AND id % 2 = 0',
	'k > ''2000-12-01'' AND id % 2 = 0', 'k = ''infinity'' AND id % 2 = 0',
	'k IS NULL AND id % 2 = 0']);
SELECT * FROM chk_list('p_nan', ARRAY['k = 0 AND k < ''NaN''', 'k > 100 AND k < ''NaN''',
	'k = ''Infinity''', 'k < 0']);
SELECT c.base, c.ord, c.pred, o.*
FROM (VALUES (1, 'p_pos', 'k', 'k > 0'), (2, 'p_pos', 'k DESC', 'k > 0'),
			 (3, 'p_nn', 'k DESC', 'k IS NOT NULL'), (4, 'p_id', 'k', 'id % 2 = 0'),
			 (5, 'p_nan', 'k DESC', 'k < ''NaN'''))
	 AS c(n, base, ord, pred),
	 LATERAL chk_order(c.base, c.ord, c.pred, '30') o
ORDER BY c.n;
-- queries that do not imply the predicate cannot use the partial index
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM p_pos_g WHERE k > -1;
EXPLAIN (COSTS OFF) SELECT id FROM p_pos_g WHERE k > 1;
EXPLAIN (COSTS OFF) SELECT id FROM p_null_g WHERE k IS NULL;
EXPLAIN (COSTS OFF) SELECT k FROM p_id_g WHERE id % 2 = 0 ORDER BY k DESC LIMIT 3;
SELECT k FROM p_id_g WHERE id % 2 = 0 ORDER BY k DESC LIMIT 3;
SELECT k FROM p_id_g WHERE id % 2 = 0 AND k IS NOT NULL ORDER BY k LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- clean up
RESET search_path;
DROP SCHEMA t09 CASCADE;
