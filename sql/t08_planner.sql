--
-- t08_planner: with default planner settings, the planner must choose
-- gbtree wherever it chooses btree: the same plan for the gbtree twin
-- as for the btree twin (point and range lookups, IN lists, IS NULL,
-- ORDER BY ... LIMIT in both directions, min / max, index-only scans,
-- nested-loop and merge joins), and a sequential scan where btree would
-- not be used either.  Twin tables of 25000 rows, so that ANALYZE reads
-- every row and the statistics are exact and identical.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t08;
SET search_path = t08, public;

-- Session settings: stable output, no parallel plans, no JIT.
SET client_min_messages = warning;
SET extra_float_digits = 1;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
SET lc_monetary = 'C';
SET max_parallel_workers_per_gather = 0;
SET jit = off;
-- plans and statistics here are compared with btree's Aggregate plans;
-- t15_count_scan tests the Custom Scan that replaces them for count(*)
SET gbtree.enable_count_scan = off;
-- and with btree's nested loops (t22_join tests GbtreeJoin)
SET gbtree.enable_join = off;
-- and with btree's bitmap heap scans (t23_array_scan tests GbtreeArrayScan)
SET gbtree.enable_array_scan = off;
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

-- EXPLAIN of q for the gbtree twins ({S} = _g) and the btree twins
-- ({S} = _b), line by line, btree's index and table names mapped to the
-- gbtree twin's
CREATE FUNCTION side_by_side(q text)
RETURNS TABLE (gbtree_plan text, btree_plan text) LANGUAGE sql AS $f$
	SELECT g.l, b.l
	FROM regexp_split_to_table(rtrim(plan_of(replace(q, '{S}', '_g')), E'\n'), E'\n')
		 WITH ORDINALITY g(l, n)
		 FULL JOIN regexp_split_to_table(rtrim(replace(plan_of(replace(q, '{S}', '_b')), '_b', '_g'), E'\n'), E'\n')
		 WITH ORDINALITY b(l, n) ON g.n = b.n
	ORDER BY coalesce(g.n, b.n)
$f$;
CREATE FUNCTION same_plan(q text) RETURNS boolean LANGUAGE sql AS $f$
	SELECT plan_of(replace(q, '{S}', '_g')) = replace(plan_of(replace(q, '{S}', '_b')), '_b', '_g')
$f$;

-- pl: 25000 rows: k unique-ish in 0..99999 for most rows, 20% of rows
-- k = 0, 2% NULL; pl2: a second pair for joins; sm: a small table
CREATE TABLE pl_g (id int, k int4, pad text);
INSERT INTO pl_g SELECT g, CASE WHEN g % 50 = 0 THEN NULL WHEN g % 5 = 0 THEN 0
								ELSE (g * 7919) % 100000 END, repeat('x', 40)
FROM generate_series(1, 25000) g;
CREATE TABLE pl_b AS SELECT * FROM pl_g;
CREATE TABLE pl2_g (id int, k int8, pad text);
INSERT INTO pl2_g SELECT g, (g::int8 * 104729) % 100000, repeat('y', 40) FROM generate_series(1, 25000) g;
CREATE TABLE pl2_b AS SELECT * FROM pl2_g;
CREATE TABLE sm (x int4);
INSERT INTO sm SELECT g * 997 FROM generate_series(1, 20) g;
CREATE INDEX pl_g_idx ON pl_g USING gbtree (k);
CREATE INDEX pl_b_idx ON pl_b USING btree (k);
CREATE INDEX pl2_g_idx ON pl2_g USING gbtree (k);
CREATE INDEX pl2_b_idx ON pl2_b USING btree (k);
VACUUM ANALYZE pl_g, pl_b, pl2_g, pl2_b, sm;

CREATE TABLE queries (n int, what text, q text);
INSERT INTO queries VALUES
	(1, 'point', 'SELECT * FROM pl{S} WHERE k = 4242'),
	(2, 'point, 20% of the rows', 'SELECT * FROM pl{S} WHERE k = 0'),
	(3, 'narrow range', 'SELECT * FROM pl{S} WHERE k BETWEEN 1000 AND 1030'),
	(4, 'range, 5%', 'SELECT * FROM pl{S} WHERE k > 95000'),
	(5, 'range, 60%', 'SELECT * FROM pl{S} WHERE k > 40000'),
	(6, 'IN list', 'SELECT * FROM pl{S} WHERE k IN (17, 4242, 99999)'),
	(7, '= ANY', 'SELECT * FROM pl{S} WHERE k = ANY (''{1,2,3,4,5,6,7,8,9,10}'')'),
	(8, 'IS NULL', 'SELECT id FROM pl{S} WHERE k IS NULL'),
	(9, 'ORDER BY LIMIT', 'SELECT * FROM pl{S} ORDER BY k LIMIT 10'),
	(10, 'ORDER BY DESC LIMIT', 'SELECT * FROM pl{S} ORDER BY k DESC LIMIT 10'),
	(11, 'range ORDER BY LIMIT', 'SELECT * FROM pl{S} WHERE k > 50000 ORDER BY k LIMIT 5'),
	(12, 'NULLS FIRST LIMIT', 'SELECT * FROM pl{S} ORDER BY k NULLS FIRST LIMIT 10'),
	(13, 'min / max', 'SELECT min(k), max(k) FROM pl{S}'),
	(14, 'index-only', 'SELECT k FROM pl{S} WHERE k BETWEEN 100 AND 5000'),
	(15, 'index-only count', 'SELECT count(*) FROM pl{S} WHERE k < 20000 AND k > 0'),
	(16, 'nested loop', 'SELECT * FROM sm JOIN pl{S} p ON p.k = sm.x'),
	(17, 'nested loop, cross-type', 'SELECT * FROM sm JOIN pl2{S} p ON p.k = sm.x'),
	(18, 'merge join + LIMIT', 'SELECT a.id, b.id FROM pl{S} a JOIN pl2{S} b ON a.k = b.k ORDER BY a.k LIMIT 10'),
	(19, 'join, all rows', 'SELECT a.id, b.id FROM pl{S} a JOIN pl2{S} b ON a.k = b.k'),
	(20, 'not indexable', 'SELECT * FROM pl{S} WHERE k + 1 = 4243'),
	(21, 'GROUP BY ORDER BY LIMIT', 'SELECT k, count(*) FROM pl{S} GROUP BY k ORDER BY k LIMIT 3'),
	(22, 'join, ordered', 'SELECT a.k, b.k FROM pl{S} a JOIN pl2{S} b ON a.k = b.k WHERE a.k > 0 ORDER BY a.k');

SELECT n, what, same_plan(q) AS same_plan, shape_of(plan_of(replace(q, '{S}', '_g'))) AS gbtree_plan
FROM queries ORDER BY n;

SELECT n, what, s.* FROM queries, LATERAL side_by_side(q) s ORDER BY n;

-- and the plans read gbtree indexes as such
EXPLAIN (COSTS OFF) SELECT * FROM pl_g WHERE k = 4242;
EXPLAIN (COSTS OFF) SELECT * FROM pl_g ORDER BY k DESC LIMIT 10;
EXPLAIN (COSTS OFF) SELECT min(k), max(k) FROM pl_g;
EXPLAIN (COSTS OFF) SELECT * FROM sm JOIN pl2_g p ON p.k = sm.x;

-- clean up
RESET search_path;
DROP SCHEMA t08 CASCADE;
