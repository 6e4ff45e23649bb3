--
-- t03_scans: scan mechanics, gbtree twin vs btree twin.
--
-- Heavy duplicates spanning many pages (including the largest int8 key,
-- NaN, -0 / 0 and infinite timestamps), = ANY / IN arrays (large,
-- unsorted, duplicates, NULL elements, inequality ANY, two arrays, arrays
-- plus ranges, ordered output), ORDER BY with every ASC / DESC / NULLS
-- FIRST / NULLS LAST combination on indexes of every such kind, scrollable
-- cursors (FETCH / MOVE in all directions across page boundaries, backward
-- scans exactly reversing forward scans) and index-only scans on tables
-- that are not all-visible.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t03;
SET search_path = t03, public;

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
-- heavy duplicates: 10000 copies of 42, 5000 of the largest and 5000 of
-- the smallest int8, 5000 NULLs, 15000 distinct keys; loaded through
-- inserts into an existing index (dup) and by an index build (dupbuild)
--
CREATE TABLE dup_g (id int, k int8);
CREATE TABLE dup_b (id int, k int8);
CREATE INDEX dup_g_idx ON dup_g USING gbtree (k);
CREATE INDEX dup_b_idx ON dup_b USING btree (k);
INSERT INTO dup_g
SELECT g, CASE g % 8 WHEN 0 THEN 42 WHEN 1 THEN 42 WHEN 2 THEN 9223372036854775807
					 WHEN 3 THEN -9223372036854775808 WHEN 4 THEN NULL ELSE g END
FROM generate_series(1, 40000) g;
INSERT INTO dup_b SELECT * FROM dup_g;
CREATE TABLE dupbuild_g AS SELECT * FROM dup_g;
CREATE TABLE dupbuild_b AS SELECT * FROM dup_g;
CREATE INDEX dupbuild_g_idx ON dupbuild_g USING gbtree (k);
CREATE INDEX dupbuild_b_idx ON dupbuild_b USING btree (k);
VACUUM ANALYZE dup_g, dup_b, dupbuild_g, dupbuild_b;
SELECT * FROM am_of('dup');
SELECT k, count(*) FROM dup_g WHERE k = 42 OR k >= 9223372036854775807 OR k <= -9223372036854775808 OR k IS NULL
GROUP BY k ORDER BY k;

CREATE FUNCTION dup_preds() RETURNS text[] LANGUAGE sql AS $f$
	SELECT ARRAY['k = 42', 'k > 42', 'k >= 42', 'k < 42', 'k <= 42', 'k = 41', 'k = 43',
				 'k BETWEEN 41 AND 45', 'k > 41 AND k < 45', 'k >= 42 AND k <= 42',
				 'k = 9223372036854775807', 'k >= 9223372036854775807',
				 'k > 9223372036854775806', 'k < 9223372036854775807',
				 'k > 39990 AND k <= 9223372036854775807', 'k > 39990 AND k < 9223372036854775807',
				 'k = -9223372036854775808', 'k > -9223372036854775808',
				 'k <= -9223372036854775808', 'k < -9223372036854775807',
				 'k = ANY (''{42,9223372036854775807,-9223372036854775808,42,NULL}'')',
				 'k = ANY (''{42,43,45}'') AND k >= 42', 'k = ANY (''{41,42,43}'') AND k < 42',
				 'k IS NULL', 'k IS NOT NULL', 'k IS NULL OR k = 42']
$f$;
SELECT * FROM chk_list('dup', dup_preds());
SELECT * FROM chk_list('dupbuild', dup_preds());

CREATE FUNCTION dup_ords() RETURNS TABLE (n int, ord text, pred text, lim text)
LANGUAGE sql AS $f$
	VALUES (1, 'k', 'true', 'ALL'), (2, 'k DESC', 'true', 'ALL'),
		   (3, 'k', 'true', '5003'), (4, 'k DESC', 'true', '5003'),
		   (5, 'k DESC', 'k IS NOT NULL', '5003'), (6, 'k', 'k > 42', '3'),
		   (7, 'k DESC', 'k < 42', '3'), (8, 'k DESC', 'k <= 42', '10003'),
		   (9, 'k', 'k >= 42', '10003'), (10, 'k DESC', 'k < 9223372036854775807', '3'),
		   (11, 'k', 'k > -9223372036854775808', '3'),
		   (12, 'k DESC', 'k >= 42 AND k < 100', 'ALL'),
		   (13, 'k', 'k = ANY (''{9223372036854775807,42,45}'')', 'ALL'),
		   (14, 'k DESC', 'k = ANY (''{9223372036854775807,42,45}'')', 'ALL')
$f$;
SELECT o.n, o.ord, o.pred, o.lim, c.*
FROM dup_ords() o, LATERAL chk_order('dup', o.ord, o.pred, o.lim) c ORDER BY o.n;
SELECT o.n, o.ord, o.pred, o.lim, c.*
FROM dup_ords() o, LATERAL chk_order('dupbuild', o.ord, o.pred, o.lim) c ORDER BY o.n;
SELECT * FROM minmax('dup');

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM dup_g WHERE k < 9223372036854775807 ORDER BY k DESC LIMIT 3;
SELECT k FROM dup_g WHERE k < 9223372036854775807 ORDER BY k DESC LIMIT 3;
SELECT k FROM dup_g WHERE k > 42 ORDER BY k LIMIT 3;
SELECT k FROM dup_g WHERE k < 42 ORDER BY k DESC LIMIT 3;
SELECT count(*) FROM dup_g WHERE k = 42;
SELECT count(*) FROM dup_g WHERE k >= 9223372036854775807;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- NaN, -0, 0 and infinities, thousands of each
CREATE TABLE fdup_g (id int, k float8);
CREATE TABLE fdup_b (id int, k float8);
INSERT INTO fdup_g
SELECT g, CASE g % 10 WHEN 0 THEN 'NaN' WHEN 1 THEN 'NaN' WHEN 2 THEN '-0' WHEN 3 THEN '-0'
					  WHEN 4 THEN '0' WHEN 5 THEN 'Infinity' WHEN 6 THEN '-Infinity'
					  WHEN 7 THEN NULL ELSE g / 7.0 - 2000 END
FROM generate_series(1, 15000) g;
CREATE INDEX fdup_g_idx ON fdup_g USING gbtree (k);
INSERT INTO fdup_g
SELECT g, CASE g % 10 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN '0' WHEN 3 THEN '-0'
					  WHEN 4 THEN 'NaN' WHEN 5 THEN '-Infinity' WHEN 6 THEN 'Infinity'
					  WHEN 7 THEN NULL ELSE -g / 7.0 END
FROM generate_series(15001, 30000) g;
INSERT INTO fdup_b SELECT * FROM fdup_g;
CREATE INDEX fdup_b_idx ON fdup_b USING btree (k);
VACUUM ANALYZE fdup_g, fdup_b;
SELECT k::text AS k, count(*) FROM fdup_g WHERE k = 0 OR k = 'NaN' OR k >= 'Infinity' OR k <= '-Infinity'
GROUP BY 1 ORDER BY 1;
SELECT * FROM chk_list('fdup', ARRAY[
	'k = 0', 'k = ''-0''', 'k > 0', 'k < 0', 'k >= 0', 'k <= ''-0''', 'k = ''NaN''',
	'k > ''Infinity''', 'k >= ''Infinity''', 'k < ''NaN''', 'k <= ''NaN''', 'k = ''Infinity''',
	'k = ''-Infinity''', 'k > ''-Infinity''', 'k > ''-Infinity'' AND k < ''Infinity''',
	'k = ANY (''{NaN,0,-Infinity}'')', 'k BETWEEN -1 AND 1', 'k IS NULL', 'k IS NOT NULL']);
SELECT o.ord, o.pred, o.lim, c.*
FROM (VALUES (1, 'k', 'true', 'ALL'), (2, 'k DESC', 'true', 'ALL'),
			 (3, 'k', 'k >= 0', '10000'), (4, 'k DESC', 'k <= 0', '10000'),
			 (5, 'k DESC', 'k IS NOT NULL', '6010'), (6, 'k', 'k > ''-Infinity''', '10'))
	 AS o(n, ord, pred, lim),
	 LATERAL chk_order('fdup', o.ord, o.pred, o.lim) c ORDER BY o.n;

-- infinite timestamps, thousands of each
SELECT mk('tsdup', 'timestamp',
	'CASE WHEN v % 3 = 0 THEN ''infinity'' WHEN v % 3 = 1 THEN ''-infinity'' ELSE ''2000-01-01''::timestamp + v * interval ''1 hour'' END',
	'{infinity,-infinity,NULL,294276-12-31 23:59:59.999999}', 1000);
VACUUM ANALYZE tsdup_g, tsdup_b;
SELECT * FROM chk_list('tsdup', ARRAY[
	'k = ''infinity''', 'k = ''-infinity''', 'k > ''2000-01-01''', 'k < ''infinity''',
	'k > ''-infinity''', 'k >= ''infinity''', 'k <= ''-infinity''',
	'k >= ''294276-12-31 23:59:59.999999''', 'k > ''-infinity'' AND k < ''infinity''',
	'k = ANY (''{infinity,-infinity}'')', 'k IS NULL']);
SELECT o.ord, o.pred, o.lim, c.*
FROM (VALUES (1, 'k', 'true', 'ALL'), (2, 'k DESC', 'true', 'ALL'),
			 (3, 'k DESC', 'k < ''infinity''', '10'), (4, 'k', 'k > ''-infinity''', '10'))
	 AS o(n, ord, pred, lim),
	 LATERAL chk_order('tsdup', o.ord, o.pred, o.lim) c ORDER BY o.n;

--
-- arrays (= ANY, IN)
--
SELECT mk('arr', 'int4', 'v * 3', '{-2147483648,2147483647,NULL}');
VACUUM ANALYZE arr_g, arr_b;
SELECT * FROM chk_list('arr', ARRAY[
	format('k = ANY (%L::int4[])', (SELECT array_agg(g * 3) FROM generate_series(-400, 400) g)),
	format('k = ANY (%L::int4[])', (SELECT array_agg(g ORDER BY -g) FROM generate_series(-1100, 1100) g)),
	format('k = ANY (%L::int4[])', (SELECT array_agg(g % 5 * 3) FROM generate_series(1, 500) g)),
	'k = ANY (ARRAY(SELECT g * 6 FROM generate_series(-200, 200) g))',
	'k = ANY (''{900,-900,0,0,NULL,NULL,2147483647,-2147483648,901}'')',
	'k = ANY (''{NULL,NULL}'')',
	'k = ANY (''{1,2,4,5,7}'')',
	'k = ANY (''{2147483648,-2147483649,3,NULL}''::int8[])',
	'k IN (3, 6, 9, 3, 6, 9)',
	'k = ANY (''{-300,-150,0,150,300,600}'') AND k > -150 AND k <= 300',
	'k = ANY (''{-300,-150,0,150,300}'') AND k > 300',
	'k = ANY (''{-300,-150,0,150,300}'') AND k = ANY (''{0,300,600}'')',
	'k = ANY (''{-300,-150,0,150,300}'') AND k = ANY (''{1,2}'')',
	'k = ANY (''{-300,-150,0}'') AND k = 0',
	'k < ANY (''{-900,0,NULL}'')', 'k <= ANY (''{-900,-1047}'')', 'k > ANY (''{900,0}'')',
	'k >= ANY (''{1047,2147483647}'')', 'k < ANY (''{}'')',
	'k = ANY (''{3,6}'') OR k = ANY (''{9,-3}'') OR k IS NULL'],
	ARRAY['801 elements', '2201 elements, descending', '500 elements, 5 distinct',
		  'ARRAY(subquery)', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		  NULL, NULL, NULL, NULL, NULL, NULL]);
SELECT o.ord, o.pred, o.lim, c.*
FROM (VALUES (1, 'k', 'k = ANY (''{900,-900,0,0,NULL,2147483647,-2147483648,901}'')', 'ALL'),
			 (2, 'k DESC', 'k = ANY (''{900,-900,0,0,NULL,2147483647,-2147483648,901}'')', 'ALL'),
			 (3, 'k', 'k = ANY (''{900,-900,0,3,6,9}'')', '5'),
			 (4, 'k DESC', 'k = ANY (''{900,-900,0,3,6,9}'')', '5'),
			 (5, 'k', 'k = ANY (''{900,-900,0,3,6,9}'') AND k > 0', 'ALL'),
			 (6, 'k DESC', 'k = ANY (''{900,-900,0,3,6,9}'') AND k < 9', 'ALL'),
			 (7, 'k', 'k IN (9, 3, 6)', 'ALL'), (8, 'k DESC', 'k IN (9, 3, 6)', '7'))
	 AS o(n, ord, pred, lim),
	 LATERAL chk_order('arr', o.ord, o.pred, o.lim) c ORDER BY o.n;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM arr_g WHERE k = ANY ('{900,-900,0,2147483647}') ORDER BY k DESC;
SELECT k FROM arr_g WHERE k = ANY ('{900,-900,0,2147483647}') ORDER BY k DESC;
EXPLAIN (COSTS OFF) SELECT id, k FROM arr_g WHERE k IN (903, -903, 0) ORDER BY k;
SELECT k FROM arr_g WHERE k IN (903, -903, 0) ORDER BY k;
SELECT k FROM arr_g WHERE k = ANY ('{}') ORDER BY k;
SELECT k FROM arr_g WHERE k = ANY (NULL::int[]) ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- ORDER BY and NULLS FIRST / LAST on indexes declared ASC, DESC,
-- NULLS FIRST and DESC NULLS LAST
--
SELECT mk('o_asc', 'int4', 'v', '{NULL,-2147483648,2147483647}', 20, '(k)');
SELECT mk('o_desc', 'int4', 'v', '{NULL,-2147483648,2147483647}', 20, '(k DESC)');
SELECT mk('o_nf', 'int4', 'v', '{NULL,-2147483648,2147483647}', 20, '(k NULLS FIRST)');
SELECT mk('o_dnl', 'int4', 'v', '{NULL,-2147483648,2147483647}', 20, '(k DESC NULLS LAST)');
VACUUM ANALYZE o_asc_g, o_asc_b, o_desc_g, o_desc_b, o_nf_g, o_nf_b, o_dnl_g, o_dnl_b;
SELECT pg_get_indexdef(i) FROM unnest(ARRAY['o_asc_g_idx'::regclass, 'o_desc_g_idx',
											'o_nf_g_idx', 'o_dnl_g_idx']) i;
SELECT b.base, o.ord, o.pred, o.lim, c.*
FROM unnest(ARRAY['o_asc', 'o_desc', 'o_nf', 'o_dnl']) WITH ORDINALITY AS b(base, bn),
	 (VALUES (1, 'k', 'true', 'ALL'), (2, 'k DESC', 'true', 'ALL'),
			 (3, 'k NULLS FIRST', 'true', 'ALL'), (4, 'k DESC NULLS LAST', 'true', 'ALL'),
			 (5, 'k NULLS FIRST', 'true', '70'), (6, 'k DESC NULLS LAST', 'true', '70'),
			 (7, 'k', 'true', '70'), (8, 'k DESC', 'true', '70'),
			 (9, 'k', 'k > 0', '5'), (10, 'k DESC', 'k > 0', '5'),
			 (11, 'k NULLS FIRST', 'k < 0', '5'), (12, 'k DESC NULLS LAST', 'k < 0', '5'),
			 (13, 'k DESC', 'k = ANY (''{1,-1,350,NULL}'')', 'ALL'),
			 (14, 'k', 'k IS NULL', 'ALL'), (15, 'k DESC', 'k IS NOT NULL', '3'))
	 AS o(n, ord, pred, lim),
	 LATERAL chk_order(b.base, o.ord, o.pred, o.lim) c
ORDER BY b.bn, o.n;
SELECT b.base, c.*
FROM unnest(ARRAY['o_asc', 'o_desc', 'o_nf', 'o_dnl']) WITH ORDINALITY AS b(base, bn),
	 unnest(ARRAY['k = 7', 'k < -300', 'k >= 300', 'k BETWEEN -5 AND 5', 'k IS NULL',
				  'k IS NOT NULL', 'k = ANY (''{-350,350,NULL,0}'')', 'k > 2147483646',
				  'k < -2147483647']) WITH ORDINALITY AS p(pred, pn),
	 LATERAL chk_list(b.base, ARRAY[p.pred]) c
ORDER BY b.bn, p.pn;
SELECT b.base, m.* FROM unnest(ARRAY['o_asc', 'o_desc', 'o_nf', 'o_dnl']) b(base), minmax(b.base) m;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM o_desc_g ORDER BY k DESC LIMIT 3;
SELECT k FROM o_desc_g ORDER BY k DESC LIMIT 3;
EXPLAIN (COSTS OFF) SELECT k FROM o_desc_g ORDER BY k LIMIT 3;
SELECT k FROM o_desc_g ORDER BY k LIMIT 3;
EXPLAIN (COSTS OFF) SELECT k FROM o_nf_g ORDER BY k NULLS FIRST LIMIT 3;
SELECT k FROM o_nf_g WHERE k IS NOT NULL ORDER BY k NULLS FIRST LIMIT 3;
EXPLAIN (COSTS OFF) SELECT k FROM o_dnl_g ORDER BY k NULLS FIRST LIMIT 3;
SELECT k FROM o_dnl_g WHERE k IS NOT NULL ORDER BY k NULLS FIRST LIMIT 3;
EXPLAIN (COSTS OFF) SELECT max(k) FROM o_desc_g;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- scrollable cursors
--
-- cur: 6000 unique keys (3, 6, ..., 18000, about 13 leaf pages) and 50 NULLs
CREATE TABLE cur_g (id int, k int4);
CREATE TABLE cur_b (id int, k int4);
INSERT INTO cur_g SELECT g, CASE WHEN g > 6000 THEN NULL ELSE g * 3 END
FROM generate_series(1, 6050) g ORDER BY (g * 7919) % 6053;
INSERT INTO cur_b SELECT * FROM cur_g;
CREATE INDEX cur_g_idx ON cur_g USING gbtree (k);
CREATE INDEX cur_b_idx ON cur_b USING btree (k);
VACUUM ANALYZE cur_g, cur_b;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT id, k FROM cur_g WHERE k > 100 ORDER BY k;
BEGIN;
DECLARE cg SCROLL CURSOR FOR SELECT id, k FROM cur_g WHERE k > 100 ORDER BY k;
DECLARE cb SCROLL CURSOR FOR SELECT id, k FROM cur_b WHERE k > 100 ORDER BY k;
FETCH 3 FROM cg;
FETCH 3 FROM cb;
FETCH BACKWARD 2 FROM cg;
FETCH BACKWARD 2 FROM cb;
FETCH ABSOLUTE 1000 FROM cg;
FETCH ABSOLUTE 1000 FROM cb;
FETCH RELATIVE -450 FROM cg;
FETCH RELATIVE -450 FROM cb;
FETCH RELATIVE 900 FROM cg;
FETCH RELATIVE 900 FROM cb;
FETCH LAST FROM cg;
FETCH LAST FROM cb;
FETCH BACKWARD 3 FROM cg;
FETCH BACKWARD 3 FROM cb;
FETCH ABSOLUTE -1 FROM cg;
FETCH ABSOLUTE -1 FROM cb;
FETCH NEXT FROM cg;
FETCH NEXT FROM cb;
FETCH PRIOR FROM cg;
FETCH PRIOR FROM cb;
MOVE BACKWARD ALL FROM cg;
MOVE BACKWARD ALL FROM cb;
FETCH NEXT FROM cg;
FETCH NEXT FROM cb;
FETCH PRIOR FROM cg;
FETCH PRIOR FROM cb;
FETCH FIRST FROM cg;
FETCH FIRST FROM cb;
MOVE FORWARD 5000 FROM cg;
MOVE FORWARD 5000 FROM cb;
FETCH BACKWARD 2 FROM cg;
FETCH BACKWARD 2 FROM cb;
FETCH ABSOLUTE 6000 FROM cg;
FETCH ABSOLUTE 6000 FROM cb;
FETCH ABSOLUTE 5967 FROM cg;
FETCH ABSOLUTE 5967 FROM cb;
COMMIT;

-- descending index-only cursor, and a cursor over the NULLs
SET enable_indexonlyscan = on;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT k FROM cur_g ORDER BY k DESC;
BEGIN;
DECLARE cg SCROLL CURSOR FOR SELECT k FROM cur_g ORDER BY k DESC;
DECLARE cb SCROLL CURSOR FOR SELECT k FROM cur_b ORDER BY k DESC;
FETCH 2 FROM cg;
FETCH 2 FROM cb;
FETCH ABSOLUTE 49 FROM cg;
FETCH ABSOLUTE 49 FROM cb;
FETCH 3 FROM cg;
FETCH 3 FROM cb;
FETCH BACKWARD 3 FROM cg;
FETCH BACKWARD 3 FROM cb;
FETCH LAST FROM cg;
FETCH LAST FROM cb;
FETCH RELATIVE -433 FROM cg;
FETCH RELATIVE -433 FROM cb;
FETCH FORWARD 3 FROM cg;
FETCH FORWARD 3 FROM cb;
FETCH 1 FROM cg;
FETCH 1 FROM cb;
FETCH BACKWARD 1 FROM cg;
FETCH BACKWARD 1 FROM cb;
COMMIT;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;

--
-- page splits under an open cursor: rows inserted by the cursor's own
-- transaction after DECLARE are invisible to it, but their index entries
-- split the pages the scan is positioned on
--
CREATE TABLE sp_g (id int, k int8);
CREATE TABLE sp_b (id int, k int8);
CREATE INDEX sp_g_idx ON sp_g USING gbtree (k);
CREATE INDEX sp_b_idx ON sp_b USING btree (k);
INSERT INTO sp_g SELECT g, g * 10 FROM generate_series(1, 5000) g;
INSERT INTO sp_b SELECT * FROM sp_g;
VACUUM ANALYZE sp_g, sp_b;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
BEGIN;
DECLARE cg SCROLL CURSOR FOR SELECT id, k FROM sp_g ORDER BY k;
DECLARE cb SCROLL CURSOR FOR SELECT id, k FROM sp_b ORDER BY k;
MOVE FORWARD 2003 FROM cg;
MOVE FORWARD 2003 FROM cb;
FETCH 1 FROM cg;
FETCH 1 FROM cb;
INSERT INTO sp_g SELECT 100000 + g, 20000 + g % 3000 FROM generate_series(1, 20000) g;
INSERT INTO sp_g SELECT 200000 + g, 20035 FROM generate_series(1, 5000) g;
INSERT INTO sp_b SELECT * FROM sp_g WHERE id > 100000;
FETCH 1 FROM cg;
FETCH 1 FROM cb;
FETCH BACKWARD 2 FROM cg;
FETCH BACKWARD 2 FROM cb;
MOVE FORWARD ALL FROM cg;
MOVE FORWARD ALL FROM cb;
FETCH BACKWARD 1 FROM cg;
FETCH BACKWARD 1 FROM cb;
MOVE BACKWARD ALL FROM cg;
MOVE BACKWARD ALL FROM cb;
FETCH 1 FROM cg;
FETCH 1 FROM cb;
COMMIT;
BEGIN;
DECLARE cg SCROLL CURSOR FOR SELECT k FROM sp_g WHERE k BETWEEN 20000 AND 21000 ORDER BY k DESC;
DECLARE cb SCROLL CURSOR FOR SELECT k FROM sp_b WHERE k BETWEEN 20000 AND 21000 ORDER BY k DESC;
FETCH 2 FROM cg;
FETCH 2 FROM cb;
INSERT INTO sp_g SELECT 300000 + g, 20500 + g % 500 FROM generate_series(1, 20000) g;
INSERT INTO sp_b SELECT * FROM sp_g WHERE id > 300000;
MOVE FORWARD ALL FROM cg;
MOVE FORWARD ALL FROM cb;
FETCH BACKWARD 3 FROM cg;
FETCH BACKWARD 3 FROM cb;
COMMIT;
-- how far the cursors get (MOVE counts) while 30000 entries are inserted
CREATE FUNCTION split_moves(OUT twin text, OUT first_move bigint, OUT forward_all bigint,
							OUT backward_all bigint)
RETURNS SETOF record LANGUAGE plpgsql AS $f$
DECLARE
	c refcursor;
BEGIN
	FOREACH twin IN ARRAY ARRAY['g', 'b'] LOOP
		OPEN c SCROLL FOR EXECUTE format('SELECT k FROM sp_%s ORDER BY k', twin);
		MOVE FORWARD 10000 FROM c;
		GET DIAGNOSTICS first_move = ROW_COUNT;
		EXECUTE format('INSERT INTO sp_%s SELECT 400000 + g, g %% 60000 FROM generate_series(1, 30000) g', twin);
		MOVE FORWARD ALL FROM c;
		GET DIAGNOSTICS forward_all = ROW_COUNT;
		MOVE BACKWARD ALL FROM c;
		GET DIAGNOSTICS backward_all = ROW_COUNT;
		CLOSE c;
		RETURN NEXT;
	END LOOP;
END
$f$;
SELECT * FROM split_moves();
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT * FROM chk_list('sp', ARRAY['k = 20035', 'k BETWEEN 20000 AND 21000', 'k < 100000']);

--
-- cursor_walk(base, tail, mode, steps): open the same scroll cursor on both
-- twins ("SELECT id, k FROM <twin> <tail>") under the forced scan kind, move
-- both by each step (NEXT, PRIOR, FIRST, LAST, ABSOLUTE n, RELATIVE n,
-- FORWARD n, BACKWARD n) and report the current row of the gbtree cursor
-- (fetched with FETCH RELATIVE 0) and whether the btree cursor has the same.
--
CREATE FUNCTION cursor_walk(base text, tail text, m text, steps text[],
							OUT step text, OUT g_row text, OUT same boolean)
RETURNS SETOF record LANGUAGE plpgsql AS $f$
DECLARE
	cg refcursor;
	cb refcursor;
	sel text := CASE m WHEN 'ionly' THEN 'k::text AS ks' ELSE 'id::text AS ids, k::text AS ks' END;
	d text;
	n int;
	rg record;
	rb record;
	fg boolean;
	fb boolean;
BEGIN
	PERFORM force_scan(m);
	OPEN cg SCROLL FOR EXECUTE format('SELECT %s FROM %I %s', sel, base || '_g', tail);
	OPEN cb SCROLL FOR EXECUTE format('SELECT %s FROM %I %s', sel, base || '_b', tail);
	FOREACH step IN ARRAY steps LOOP
		d := split_part(step, ' ', 1);
		n := nullif(split_part(step, ' ', 2), '')::int;
		CASE d
			WHEN 'NEXT' THEN MOVE NEXT FROM cg; MOVE NEXT FROM cb;
			WHEN 'PRIOR' THEN MOVE PRIOR FROM cg; MOVE PRIOR FROM cb;
			WHEN 'FIRST' THEN MOVE FIRST FROM cg; MOVE FIRST FROM cb;
			WHEN 'LAST' THEN MOVE LAST FROM cg; MOVE LAST FROM cb;
			WHEN 'ABSOLUTE' THEN MOVE ABSOLUTE n FROM cg; MOVE ABSOLUTE n FROM cb;
			WHEN 'RELATIVE' THEN MOVE RELATIVE n FROM cg; MOVE RELATIVE n FROM cb;
			WHEN 'FORWARD' THEN MOVE FORWARD n FROM cg; MOVE FORWARD n FROM cb;
			WHEN 'BACKWARD' THEN MOVE BACKWARD n FROM cg; MOVE BACKWARD n FROM cb;
		END CASE;
		FETCH RELATIVE 0 FROM cg INTO rg;
		fg := FOUND;
		FETCH RELATIVE 0 FROM cb INTO rb;
		fb := FOUND;
		g_row := CASE WHEN fg THEN rg::text ELSE '(none)' END;
		same := fg = fb AND (NOT fg OR rg::text = rb::text);
		RETURN NEXT;
	END LOOP;
	CLOSE cg;
	CLOSE cb;
END
$f$;

--
-- scroll_check(base, tail, m): read the whole cursor forward, then the
-- whole way back; the forward keys must equal the btree twin's, the
-- backward rows must be exactly the forward rows reversed, and the rows
-- (id, k) must be the btree twin's multiset.
--
CREATE FUNCTION scroll_check(base text, tail text, m text,
							 OUT nrows int, OUT keys_match boolean,
							 OUT backward_is_reverse boolean, OUT same_rows boolean)
LANGUAGE plpgsql AS $f$
DECLARE
	c refcursor;
	r record;
	fwd text[] := '{}';
	bwd text[] := '{}';
	fwd_k text[] := '{}';
	oracle_k text[];
	oracle_rows text[];
	sel text := CASE m WHEN 'ionly' THEN 'k::text AS ids, k::text AS ks'
						 ELSE 'id::text AS ids, k::text AS ks' END;
BEGIN
	PERFORM force_scan(m);
	OPEN c SCROLL FOR EXECUTE format('SELECT %s FROM %I %s', sel, base || '_g', tail);
	LOOP
		FETCH NEXT FROM c INTO r;
		EXIT WHEN NOT FOUND;
		fwd := fwd || r::text;
		fwd_k := fwd_k || r.ks;
	END LOOP;
	LOOP
		FETCH PRIOR FROM c INTO r;
		EXIT WHEN NOT FOUND;
		bwd := bwd || r::text;
	END LOOP;
	CLOSE c;
	EXECUTE format('SELECT array_agg(k::text) FROM (SELECT k FROM %I %s) s', base || '_b', tail)
		INTO oracle_k;
	EXECUTE format('SELECT array_agg(s::text ORDER BY s::text) FROM (SELECT %s FROM %I %s) s',
				   sel, base || '_b', tail) INTO oracle_rows;
	nrows := cardinality(fwd);
	keys_match := fwd_k = coalesce(oracle_k, '{}');
	backward_is_reverse := bwd = ARRAY(SELECT fwd[i] FROM generate_series(cardinality(fwd), 1, -1) i);
	same_rows := ARRAY(SELECT x FROM unnest(fwd) x ORDER BY x) = coalesce(oracle_rows, '{}');
END
$f$;

SELECT * FROM cursor_walk('cur', 'WHERE k > 100 ORDER BY k', 'iscan',
	ARRAY['NEXT', 'PRIOR', 'PRIOR', 'NEXT', 'FORWARD 430', 'NEXT', 'PRIOR', 'PRIOR',
		  'ABSOLUTE 433', 'ABSOLUTE 434', 'ABSOLUTE 432', 'RELATIVE 1', 'RELATIVE -1',
		  'ABSOLUTE -1', 'NEXT', 'NEXT', 'PRIOR', 'BACKWARD 2000', 'FORWARD 1',
		  'ABSOLUTE 5967', 'ABSOLUTE 5968', 'ABSOLUTE 0', 'PRIOR', 'NEXT', 'LAST',
		  'RELATIVE -5966', 'RELATIVE -1', 'RELATIVE 2', 'FIRST', 'BACKWARD 1', 'FORWARD 3000']);
SELECT * FROM cursor_walk('cur', 'ORDER BY k DESC', 'ionly',
	ARRAY['NEXT', 'FORWARD 49', 'NEXT', 'PRIOR', 'FORWARD 500', 'BACKWARD 501',
		  'ABSOLUTE -1', 'PRIOR', 'RELATIVE -3000', 'LAST', 'NEXT', 'PRIOR', 'FIRST', 'PRIOR', 'NEXT']);
SELECT * FROM cursor_walk('cur', 'WHERE k = ANY (''{300,3000,9000,17997,18000,1}'') ORDER BY k', 'iscan',
	ARRAY['NEXT', 'NEXT', 'NEXT', 'PRIOR', 'LAST', 'PRIOR', 'PRIOR', 'NEXT', 'NEXT', 'NEXT',
		  'PRIOR', 'FIRST', 'PRIOR', 'NEXT', 'ABSOLUTE 4', 'RELATIVE -2']);
SELECT * FROM cursor_walk('cur', 'WHERE k IS NULL ORDER BY k', 'ionly',
	ARRAY['NEXT', 'LAST', 'NEXT', 'PRIOR', 'FIRST', 'PRIOR']);

SELECT t.base, t.tail, m.m, s.*
FROM (VALUES (1, 'cur', 'ORDER BY k'), (2, 'cur', 'ORDER BY k DESC'),
			 (3, 'cur', 'WHERE k BETWEEN 1000 AND 9000 ORDER BY k'),
			 (4, 'cur', 'WHERE k IS NULL'),
			 (5, 'cur', 'WHERE k = ANY (''{300,3000,9000,17997,18000,1}'') ORDER BY k DESC'),
			 (6, 'dup', 'WHERE k >= 42 ORDER BY k'),
			 (7, 'dup', 'WHERE k <= 42 ORDER BY k DESC'),
			 (8, 'dup', 'WHERE k = 42'),
			 (9, 'dup', 'WHERE k = 9223372036854775807'),
			 (10, 'dup', 'WHERE k IS NULL'),
			 (11, 'fdup', 'WHERE k >= 0 ORDER BY k DESC'),
			 (12, 'tsdup', 'WHERE k > ''-infinity'' ORDER BY k'))
	 AS t(n, base, tail),
	 unnest(ARRAY['iscan', 'ionly']) WITH ORDINALITY AS m(m, mn),
	 LATERAL scroll_check(t.base, t.tail, m.m) s
ORDER BY t.n, m.mn;

--
-- index-only scans on tables that are not (or no longer) all-visible
--
CREATE TABLE nv_g (id int, k float4);
CREATE TABLE nv_b (id int, k float4);
CREATE INDEX nv_g_idx ON nv_g USING gbtree (k);
CREATE INDEX nv_b_idx ON nv_b USING btree (k);
INSERT INTO nv_g SELECT g, CASE g % 5 WHEN 0 THEN '-0' WHEN 1 THEN 'NaN' ELSE (g % 1000)::float4 END
FROM generate_series(1, 5000) g;
INSERT INTO nv_b SELECT * FROM nv_g;
SELECT * FROM chk_list('nv', ARRAY['k = 0', 'k > 500', 'k = ''NaN''', 'k IS NOT NULL']);
VACUUM nv_g, nv_b;
UPDATE nv_g SET k = -k WHERE id % 7 = 0;
UPDATE nv_b SET k = -k WHERE id % 7 = 0;
DELETE FROM nv_g WHERE id % 11 = 0;
DELETE FROM nv_b WHERE id % 11 = 0;
SELECT * FROM chk_list('nv', ARRAY['k = 0', 'k < 0', 'k > 500', 'k = ''NaN''', 'k IS NOT NULL']);
SELECT o.ord, c.* FROM unnest(ARRAY['k', 'k DESC']) o(ord), LATERAL chk_order('nv', o.ord) c;

-- clean up
RESET search_path;
DROP SCHEMA t03 CASCADE;
