--
-- t10_prepared_stats: prepared statements with generic plans (parameters
-- as index keys, run-time NULLs, array parameters, LIMIT parameters),
-- gbtree twin vs btree twin; and the cumulative statistics of gbtree
-- indexes (pg_stat_user_indexes.idx_scan / idx_tup_read / idx_tup_fetch
-- and pg_statio_user_indexes) move as they do for btree.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t10;
SET search_path = t10, public;

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

SELECT mk('ps', 'int4', 'v * 3', '{-2147483648,2147483647,NULL}', 5);
SELECT mk('pf', 'float8', 'v / 4.0', '{NaN,-0,0,Infinity,-Infinity,NULL}', 5, '(k DESC)');
VACUUM ANALYZE ps_g, ps_b, pf_g, pf_b;

--
-- PREPARE / EXECUTE with generic plans
--
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
PREPARE eq_g(int4) AS SELECT count(*), sum(id::int8) FROM ps_g WHERE k = $1;
PREPARE eq_b(int4) AS SELECT count(*), sum(id::int8) FROM ps_b WHERE k = $1;
EXPLAIN (COSTS OFF) EXECUTE eq_g(3);
EXECUTE eq_g(3);
EXECUTE eq_b(3);
EXECUTE eq_g(NULL);
EXECUTE eq_b(NULL);
EXECUTE eq_g(2147483647);
EXECUTE eq_b(2147483647);
PREPARE rng_g(int8, int8) AS SELECT count(*), sum(id::int8) FROM ps_g WHERE k > $1 AND k <= $2;
PREPARE rng_b(int8, int8) AS SELECT count(*), sum(id::int8) FROM ps_b WHERE k > $1 AND k <= $2;
EXPLAIN (COSTS OFF) EXECUTE rng_g(0, 10);
EXECUTE rng_g(-9223372036854775808, 9223372036854775807);
EXECUTE rng_b(-9223372036854775808, 9223372036854775807);
EXECUTE rng_g(-30, 30);
EXECUTE rng_b(-30, 30);
EXECUTE rng_g(2147483646, 4294967296);
EXECUTE rng_b(2147483646, 4294967296);
EXECUTE rng_g(30, -30);
EXECUTE rng_b(30, -30);
PREPARE any_g(int4[]) AS SELECT count(*), sum(id::int8) FROM ps_g WHERE k = ANY ($1);
PREPARE any_b(int4[]) AS SELECT count(*), sum(id::int8) FROM ps_b WHERE k = ANY ($1);
EXPLAIN (COSTS OFF) EXECUTE any_g('{1}');
EXECUTE any_g('{3,6,6,NULL,-2147483648}');
EXECUTE any_b('{3,6,6,NULL,-2147483648}');
EXECUTE any_g('{}');
EXECUTE any_b('{}');
EXECUTE any_g(NULL);
EXECUTE any_b(NULL);
PREPARE top_g(float8, int8) AS SELECT array_agg(k) FROM (SELECT k FROM pf_g WHERE k >= $1 ORDER BY k LIMIT $2) s;
PREPARE top_b(float8, int8) AS SELECT array_agg(k) FROM (SELECT k FROM pf_b WHERE k >= $1 ORDER BY k LIMIT $2) s;
EXPLAIN (COSTS OFF) EXECUTE top_g(0, 5);
EXECUTE top_g('-0', 12);
EXECUTE top_b('-0', 12);
EXECUTE top_g(87, 100);
EXECUTE top_b(87, 100);
EXECUTE top_g('NaN', 100);
EXECUTE top_b('NaN', 100);
PREPARE bot_g(float8, int8) AS SELECT array_agg(k) FROM (SELECT k FROM pf_g WHERE k < $1 ORDER BY k DESC LIMIT $2) s;
PREPARE bot_b(float8, int8) AS SELECT array_agg(k) FROM (SELECT k FROM pf_b WHERE k < $1 ORDER BY k DESC LIMIT $2) s;
EXPLAIN (COSTS OFF) EXECUTE bot_g(0, 5);
EXECUTE bot_g('NaN', 8);
EXECUTE bot_b('NaN', 8);
EXECUTE bot_g(0.3, 12);
EXECUTE bot_b(0.3, 12);
EXECUTE bot_g(-87, 100);
EXECUTE bot_b(-87, 100);
DEALLOCATE ALL;

-- many argument values: PL/pgSQL runs its static queries as prepared
-- statements, here with generic plans
CREATE FUNCTION mkfuncs() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
	s text;
BEGIN
	FOREACH s IN ARRAY ARRAY['g', 'b'] LOOP
		EXECUTE format($q$
			CREATE FUNCTION f_eq_%1$s(p int8) RETURNS text LANGUAGE plpgsql AS $b$
			BEGIN
				RETURN (SELECT count(*) || ' ' || coalesce(sum(id::int8), 0) FROM ps_%1$s WHERE k = p);
			END $b$;
			CREATE FUNCTION f_lt_%1$s(p int4) RETURNS text LANGUAGE plpgsql AS $b$
			BEGIN
				RETURN (SELECT count(*) || ' ' || coalesce(sum(id::int8), 0) FROM ps_%1$s WHERE k < p);
			END $b$;
			CREATE FUNCTION f_ge_desc_%1$s(p int2) RETURNS text LANGUAGE plpgsql AS $b$
			BEGIN
				RETURN (SELECT array_agg(k)::text FROM (SELECT k FROM ps_%1$s WHERE k >= p ORDER BY k DESC LIMIT 7) s);
			END $b$;
			CREATE FUNCTION f_f_%1$s(p float4) RETURNS text LANGUAGE plpgsql AS $b$
			BEGIN
				RETURN (SELECT count(*) || ' ' || coalesce(sum(id::int8), 0) FROM pf_%1$s WHERE k = p)
					|| ' ' || (SELECT array_agg(k)::text FROM (SELECT k FROM pf_%1$s WHERE k > p ORDER BY k LIMIT 3) s);
			END $b$;
		$q$, s);
	END LOOP;
END
$f$;
SELECT mkfuncs();
SELECT v, f_eq_g(v) AS gbtree, f_eq_g(v) = f_eq_b(v) AS same
FROM unnest(ARRAY[-9223372036854775808, -2147483649, -2147483648, -1050, -1, 0, 3, 1050, 1051,
				  2147483647, 2147483648, NULL]) v;
SELECT v, f_lt_g(v) AS gbtree, f_lt_g(v) = f_lt_b(v) AS same
FROM unnest(ARRAY[-2147483648, -1050, 0, 1, 1051, 2147483647, NULL]) v;
SELECT v, f_ge_desc_g(v::int2) AS gbtree, f_ge_desc_g(v::int2) IS NOT DISTINCT FROM f_ge_desc_b(v::int2) AS same
FROM unnest(ARRAY[-32768, 0, 1047, 1048, 32767, NULL]) v;
SELECT v, f_f_g(v) AS gbtree, f_f_g(v) IS NOT DISTINCT FROM f_f_b(v) AS same
FROM unnest(ARRAY['-Infinity', '-0', '0', '0.25', '87.25', '87.5', 'Infinity', 'NaN', NULL]::float4[]) v;
RESET plan_cache_mode;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- statistics: idx_scan counts scans (and rescans), idx_tup_read the index
-- entries returned, idx_tup_fetch the heap tuples fetched by plain index
-- scans; buffer accesses show in pg_statio_user_indexes (on the CPU path:
-- a GPU scan reads the device copy, not shared buffers)
--
SET gbtree.device = cpu;
SELECT mk('st', 'int8', 'v', '{-9223372036854775808,9223372036854775807,NULL}');
VACUUM ANALYZE st_g, st_b;
CREATE TABLE st_outer (x int8);
INSERT INTO st_outer SELECT g * 10 FROM generate_series(-5, 4) g;
CREATE FUNCTION st_snap() RETURNS TABLE (idx name, scans bigint, tup_read bigint, tup_fetch bigint, blks bigint)
LANGUAGE sql AS $f$
	SELECT s.indexrelname, s.idx_scan, s.idx_tup_read, s.idx_tup_fetch, io.idx_blks_read + io.idx_blks_hit
	FROM pg_stat_user_indexes s JOIN pg_statio_user_indexes io USING (indexrelid)
	WHERE s.indexrelname IN ('st_g_idx', 'st_b_idx')
$f$;
-- st_delta(): the change since the previous call, for both twins (the
-- values must be equal; the planner probes only btree indexes for the
-- actual extremes of a column, so the queries stay inside the histogram)
CREATE TABLE st_prev AS SELECT * FROM st_snap();
CREATE FUNCTION st_delta(OUT idx name, OUT scans bigint, OUT tup_read bigint,
						 OUT tup_fetch bigint, OUT blks_used boolean)
RETURNS SETOF record LANGUAGE plpgsql AS $f$
BEGIN
	RETURN QUERY SELECT n.idx, n.scans - p.scans, n.tup_read - p.tup_read,
						n.tup_fetch - p.tup_fetch, n.blks > p.blks
				 FROM st_snap() n JOIN st_prev p USING (idx) ORDER BY 1;
	DELETE FROM st_prev;
	INSERT INTO st_prev SELECT * FROM st_snap();
END
$f$;
SELECT pg_stat_force_next_flush();
SELECT count(*) FROM st_delta();

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
-- one plain index scan
SELECT count(*) FROM (SELECT id FROM st_g WHERE k BETWEEN -5 AND 5) s;
SELECT count(*) FROM (SELECT id FROM st_b WHERE k BETWEEN -5 AND 5) s;
SELECT pg_stat_force_next_flush();
SELECT * FROM st_delta();
-- an index-only scan (all-visible: no heap fetches)
SET enable_indexonlyscan = on;
SELECT count(*) FROM st_g WHERE k BETWEEN -5 AND 5;
SELECT count(*) FROM st_b WHERE k BETWEEN -5 AND 5;
SELECT pg_stat_force_next_flush();
SELECT * FROM st_delta();
-- a bitmap scan
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = on;
SELECT count(*) FROM (SELECT id FROM st_g WHERE k BETWEEN 100 AND 140) s;
SELECT count(*) FROM (SELECT id FROM st_b WHERE k BETWEEN 100 AND 140) s;
SELECT pg_stat_force_next_flush();
SELECT * FROM st_delta();
-- a nested loop: one rescan of the inner index scan per outer row
SET enable_indexscan = on;
SET enable_bitmapscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
EXPLAIN (COSTS OFF) SELECT count(s.id) FROM st_outer o JOIN st_g s ON s.k = o.x;
SELECT count(s.id) FROM st_outer o JOIN st_g s ON s.k = o.x;
SELECT count(s.id) FROM st_outer o JOIN st_b s ON s.k = o.x;
SELECT pg_stat_force_next_flush();
SELECT * FROM st_delta();
-- a scan that finds nothing is still a scan
SELECT count(*) FROM (SELECT id FROM st_g WHERE k = 12345) s;
SELECT count(*) FROM (SELECT id FROM st_b WHERE k = 12345) s;
SELECT pg_stat_force_next_flush();
SELECT * FROM st_delta();
-- = ANY: at least one scan, every matching entry read
SELECT count(*) FROM (SELECT id FROM st_g WHERE k = ANY ('{1,2,3,400}')) s;
SELECT count(*) FROM (SELECT id FROM st_b WHERE k = ANY ('{1,2,3,400}')) s;
SELECT pg_stat_force_next_flush();
SELECT idx, scans > 0 AS scanned, tup_read, tup_fetch, blks_used FROM st_delta();
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;

-- clean up
RESET search_path;
DROP SCHEMA t10 CASCADE;
