--
-- t07_large: a million rows, gbtree twin vs btree twin.
--
-- Random int8 keys (reproducible: setseed) with NULLs and hot duplicate
-- keys, built by CREATE INDEX; range and array scans of every kind; the
-- whole table read in index order both ways (compared by digest); then
-- 10% deleted, 5% updated, VACUUM, 100000 more rows inserted through the
-- existing index, and everything compared again.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t07;
SET search_path = t07, public;

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

-- digest of the keys in index order (index-only scan forced)
CREATE FUNCTION ordered_digest(tbl text, ord text, OUT n bigint, OUT digest text)
LANGUAGE plpgsql AS $f$
BEGIN
	PERFORM force_scan('ionly');
	EXECUTE format('SELECT count(*), md5(string_agg(coalesce(k::text, ''-''), '','')) FROM (SELECT k FROM %I ORDER BY %s) s',
				   tbl, ord) INTO n, digest;
END
$f$;
CREATE FUNCTION big_order_check(OUT ord text, OUT n bigint, OUT same_as_btree boolean,
								OUT same_as_sort boolean, OUT plan text)
RETURNS SETOF record LANGUAGE plpgsql AS $f$
DECLARE
	dg text;
	db text;
	ds text;
BEGIN
	FOREACH ord IN ARRAY ARRAY['k', 'k DESC'] LOOP
		SELECT d.n, d.digest INTO n, dg FROM ordered_digest('big_g', ord) d;
		SELECT d.digest INTO db FROM ordered_digest('big_b', ord) d;
		PERFORM force_scan('seq');
		EXECUTE format('SELECT md5(string_agg(coalesce(k::text, ''-''), '','')) FROM (SELECT k FROM big_b ORDER BY %s) s', ord) INTO ds;
		same_as_btree := dg = db;
		same_as_sort := dg = ds;
		PERFORM force_scan('ionly');
		plan := shape_of(plan_of(format('SELECT k FROM big_g ORDER BY %s', ord)));
		RETURN NEXT;
	END LOOP;
END
$f$;

SELECT setseed(0.42);
CREATE TABLE big_g (id int, k int8);
INSERT INTO big_g
SELECT g, CASE WHEN r < 0.01 THEN NULL
			   WHEN r < 0.03 THEN 777
			   WHEN r < 0.04 THEN 9223372036854775807
			   WHEN r < 0.045 THEN -9223372036854775808
			   ELSE (r * 4000000000)::int8 - 2000000000 END
FROM (SELECT g, random() AS r FROM generate_series(1, 1000000) g) s;
CREATE TABLE big_b AS SELECT * FROM big_g;
CREATE INDEX big_g_idx ON big_g USING gbtree (k);
CREATE INDEX big_b_idx ON big_b USING btree (k);
VACUUM ANALYZE big_g, big_b;
CREATE TABLE keys_sample AS SELECT k FROM big_b WHERE id % 1000 = 0;
SELECT * FROM am_of('big');
SELECT count(*), count(k), count(DISTINCT k) > 900000 AS mostly_distinct FROM big_g;

CREATE FUNCTION big_preds() RETURNS text[] LANGUAGE sql AS $f$
	SELECT ARRAY['k = 777', 'k = 9223372036854775807', 'k = -9223372036854775808',
				 'k BETWEEN 0 AND 2000000', 'k < -1999000000', 'k >= 1999000000',
				 'k > 500000000 AND k < 502000000',
				 format('k = ANY (%L::int8[])',
						(SELECT array_agg(g::int8 * 40000000 - 2000000000) FROM generate_series(0, 100) g)
						|| '{777,NULL}'::int8[]),
				 format('k = ANY (%L::int8[])', (SELECT array_agg(k) FROM keys_sample)),
				 'k IS NULL']
$f$;SELECT * FROM chk_list('big', big_preds(),
	ARRAY[NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'k = ANY (101 constants and 777)',
		  'k = ANY (keys of 1000 rows)', NULL]);
SELECT o.ord, o.pred, o.lim, c.*
FROM (VALUES (1, 'k', 'k > 0', '1000'), (2, 'k DESC', 'k < 0', '1000'),
			 (3, 'k DESC', 'k <= 777', '25000'), (4, 'k', 'k >= 777', '25000'),
			 (5, 'k DESC', 'true', '20000'))
	 AS o(n, ord, pred, lim),
	 LATERAL chk_order('big', o.ord, o.pred, o.lim) c ORDER BY o.n;
SELECT * FROM big_order_check();
SELECT * FROM minmax('big');

-- churn: delete 10%, update 5% (new keys), vacuum, insert 100000 rows
DELETE FROM big_g WHERE id % 10 = 3;
DELETE FROM big_b WHERE id % 10 = 3;
UPDATE big_g SET k = k / 2 + 1 WHERE id % 20 = 7;
UPDATE big_b SET k = k / 2 + 1 WHERE id % 20 = 7;
VACUUM big_g, big_b;
SELECT setseed(0.17);
INSERT INTO big_g
SELECT 1000000 + g, CASE WHEN r < 0.02 THEN 777 WHEN r < 0.03 THEN NULL
						 ELSE (r * 4000000000)::int8 - 2000000000 END
FROM (SELECT g, random() AS r FROM generate_series(1, 100000) g) s;
INSERT INTO big_b SELECT * FROM big_g WHERE id > 1000000;
ANALYZE big_g, big_b;
SELECT count(*), count(k) FROM big_g;
SELECT * FROM chk_list('big', big_preds(),
	ARRAY[NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'k = ANY (101 constants and 777)',
		  'k = ANY (keys of 1000 rows)', NULL]);
SELECT * FROM big_order_check();
SELECT * FROM minmax('big');

-- clean up
RESET search_path;
DROP SCHEMA t07 CASCADE;
