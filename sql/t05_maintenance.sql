--
-- t05_maintenance: gbtree indexes through table and index maintenance,
-- gbtree twins vs btree twins.
--
-- Delete / VACUUM / reinsert churn (gaps reused, pages emptied and
-- refilled), non-HOT and HOT updates, aborted inserts, index builds over
-- dead tuples and inside the loading transaction, REINDEX (plain and
-- CONCURRENTLY), CREATE INDEX CONCURRENTLY, TRUNCATE (also rolled back),
-- unlogged and temporary tables, SET LOGGED / UNLOGGED, partitioned
-- tables, and the fillfactor reloption (10, 50, 100, ALTER INDEX SET /
-- RESET).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t05;
SET search_path = t05, public;

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

-- a compact set of checks used after every step
CREATE FUNCTION churn_preds() RETURNS text[] LANGUAGE sql AS $f$
	SELECT ARRAY['k = 4242', 'k < 1000', 'k >= 19000', 'k BETWEEN 5000 AND 5100',
				 'k = ANY (''{0,1,2,4242,19999,20000,NULL}'')', 'k IS NULL', 'k IS NOT NULL',
				 'k > 9223372036854775806']
$f$;
CREATE FUNCTION churn_ords() RETURNS TABLE (n int, ord text, pred text, lim text)
LANGUAGE sql AS $f$
	VALUES (1, 'k', 'true', 'ALL'), (2, 'k DESC', 'true', 'ALL'),
		   (3, 'k', 'k > 4990', '50'), (4, 'k DESC', 'k < 5110', '50')
$f$;
CREATE FUNCTION churn_check(base text)
RETURNS TABLE (what text, nrows bigint, seq text, iscan text, bitmap text, ionly text)
LANGUAGE sql AS $f$
	SELECT * FROM chk_list(base, churn_preds())
	UNION ALL
	SELECT 'ORDER BY ' || o.ord || ' WHERE ' || o.pred || ' LIMIT ' || o.lim,
		   c.nrows, NULL, c.iscan, NULL, c.ionly
	FROM churn_ords() o, LATERAL chk_order(base, o.ord, o.pred, o.lim) c
$f$;

--
-- delete / vacuum / reinsert churn
--
CREATE TABLE ch_g (id int, k int8);
CREATE TABLE ch_b (id int, k int8);
CREATE INDEX ch_g_idx ON ch_g USING gbtree (k);
CREATE INDEX ch_b_idx ON ch_b USING btree (k);
INSERT INTO ch_g SELECT g, CASE WHEN g % 100 = 0 THEN NULL ELSE (g * 7919) % 20000 END
FROM generate_series(1, 20000) g;
INSERT INTO ch_g SELECT 100000 + g, 9223372036854775807 FROM generate_series(1, 1000) g;
INSERT INTO ch_b SELECT * FROM ch_g;
VACUUM ANALYZE ch_g, ch_b;
CREATE TEMP TABLE sizes (step text, sz bigint);
SELECT * FROM churn_check('ch');

-- 1: delete every other row, vacuum, check
DELETE FROM ch_g WHERE id % 2 = 0;
DELETE FROM ch_b WHERE id % 2 = 0;
SELECT * FROM churn_check('ch');
VACUUM ch_g, ch_b;
SELECT * FROM churn_check('ch');

-- 2: reinsert as many rows with keys in the same range (fills the gaps)
INSERT INTO ch_g SELECT 200000 + g, CASE WHEN g % 100 = 0 THEN NULL ELSE (g * 104729) % 20000 END
FROM generate_series(1, 10000) g;
INSERT INTO ch_b SELECT * FROM ch_g WHERE id > 200000;
SELECT * FROM churn_check('ch');

-- 3: empty a whole key range (whole leaf pages), vacuum, refill it
DELETE FROM ch_g WHERE k BETWEEN 3000 AND 12000 OR k = 9223372036854775807;
DELETE FROM ch_b WHERE k BETWEEN 3000 AND 12000 OR k = 9223372036854775807;
VACUUM ch_g, ch_b;
SELECT * FROM churn_check('ch');
INSERT INTO ch_g SELECT 300000 + g, 3000 + g % 9001 FROM generate_series(1, 12000) g;
INSERT INTO ch_g SELECT 400000 + g, 9223372036854775807 FROM generate_series(1, 500) g;
INSERT INTO ch_b SELECT * FROM ch_g WHERE id > 300000;
SELECT * FROM churn_check('ch');

-- 4: update every key (non-HOT), then vacuum
UPDATE ch_g SET k = k + 1 WHERE k < 9223372036854775807;
UPDATE ch_b SET k = k + 1 WHERE k < 9223372036854775807;
SELECT * FROM churn_check('ch');
VACUUM ch_g, ch_b;
SELECT * FROM churn_check('ch');

-- 5: delete everything, vacuum, load again
DELETE FROM ch_g;
DELETE FROM ch_b;
VACUUM ch_g, ch_b;
SELECT * FROM churn_check('ch');
INSERT INTO ch_g SELECT g, CASE WHEN g % 100 = 0 THEN NULL ELSE (g * 7919) % 20000 END
FROM generate_series(1, 20000) g;
INSERT INTO ch_g SELECT 100000 + g, 9223372036854775807 FROM generate_series(1, 1000) g;
INSERT INTO ch_b SELECT * FROM ch_g;
VACUUM ch_g, ch_b;
SELECT * FROM churn_check('ch');
-- steady churn: each round deletes a fifth of the rows, vacuums and
-- inserts as many rows with keys in the same range; VACUUM makes the
-- deleted entries' space reusable, so the index stops growing
CREATE TABLE sp_g (id int, k int4);
CREATE TABLE sp_b (id int, k int4);
CREATE INDEX sp_g_idx ON sp_g USING gbtree (k);
CREATE INDEX sp_b_idx ON sp_b USING btree (k);
INSERT INTO sp_g SELECT g, (g * 7919) % 20000 FROM generate_series(1, 20000) g;
INSERT INTO sp_b SELECT * FROM sp_g;
CREATE FUNCTION sp_round(r int) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	DELETE FROM sp_g WHERE (id + r) % 5 = 0;
	DELETE FROM sp_b WHERE (id + r) % 5 = 0;
END
$f$;
CREATE FUNCTION sp_refill(r int) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	INSERT INTO sp_g SELECT r * 100000 + g, (g * 104729 + r) % 20000 FROM generate_series(1, 4000) g;
	INSERT INTO sp_b SELECT * FROM sp_g WHERE id > r * 100000 AND id < (r + 1) * 100000;
	INSERT INTO sizes SELECT 'g round ' || r, pg_relation_size('sp_g_idx');
	INSERT INTO sizes SELECT 'b round ' || r, pg_relation_size('sp_b_idx');
END
$f$;
SELECT sp_round(1);
VACUUM sp_g, sp_b;
SELECT sp_refill(1);
SELECT sp_round(2);
VACUUM sp_g, sp_b;
SELECT sp_refill(2);
SELECT sp_round(3);
VACUUM sp_g, sp_b;
SELECT sp_refill(3);
SELECT sp_round(4);
VACUUM sp_g, sp_b;
SELECT sp_refill(4);
SELECT sp_round(5);
VACUUM sp_g, sp_b;
SELECT sp_refill(5);
SELECT (SELECT sz FROM sizes WHERE step = 'g round 5') <=
	   (SELECT sz FROM sizes WHERE step = 'g round 1') * 1.25 AS gbtree_stopped_growing,
	   (SELECT sz FROM sizes WHERE step = 'b round 5') <=
	   (SELECT sz FROM sizes WHERE step = 'b round 1') * 1.25 AS btree_stopped_growing;
SELECT * FROM chk_list('sp', ARRAY['k = 4242', 'k < 100', 'k BETWEEN 10000 AND 10100', 'k IS NOT NULL']);

--
-- scans that start inside key ranges whose leaf pages VACUUM emptied,
-- in both directions, on ASC and DESC indexes
--
CREATE TABLE vr_g (id int, k int8);
CREATE TABLE vr_b (id int, k int8);
CREATE TABLE vrd_g (id int, k int8);
CREATE TABLE vrd_b (id int, k int8);
CREATE INDEX vr_g_idx ON vr_g USING gbtree (k);
CREATE INDEX vr_b_idx ON vr_b USING btree (k);
CREATE INDEX vrd_g_idx ON vrd_g USING gbtree (k DESC);
CREATE INDEX vrd_b_idx ON vrd_b USING btree (k DESC);
INSERT INTO vr_g SELECT g, g FROM generate_series(1, 5000) g;
INSERT INTO vr_b SELECT * FROM vr_g;
INSERT INTO vrd_g SELECT * FROM vr_g;
INSERT INTO vrd_b SELECT * FROM vr_g;
DELETE FROM vr_g WHERE k BETWEEN 1000 AND 2000;
DELETE FROM vr_b WHERE k BETWEEN 1000 AND 2000;
DELETE FROM vrd_g WHERE k BETWEEN 1000 AND 2000;
DELETE FROM vrd_b WHERE k BETWEEN 1000 AND 2000;
VACUUM vr_g, vr_b, vrd_g, vrd_b;
CREATE FUNCTION vr_probe(OUT q text, OUT gbtree text, OUT same boolean)
RETURNS SETOF record LANGUAGE plpgsql AS $f$
DECLARE
	rb text;
BEGIN
	PERFORM force_scan('iscan');
	FOREACH q IN ARRAY ARRAY[
		'SELECT array_agg(k) FROM (SELECT k FROM vr{S} WHERE k < 1500 ORDER BY k DESC LIMIT 3) s',
		'SELECT array_agg(k) FROM (SELECT k FROM vr{S} WHERE k <= 2000 ORDER BY k DESC LIMIT 3) s',
		'SELECT array_agg(k) FROM (SELECT k FROM vr{S} WHERE k < 2002 ORDER BY k DESC LIMIT 3) s',
		'SELECT array_agg(k) FROM (SELECT k FROM vr{S} WHERE k > 1500 ORDER BY k LIMIT 3) s',
		'SELECT array_agg(k) FROM (SELECT k FROM vr{S} WHERE k >= 999 ORDER BY k LIMIT 3) s',
		'SELECT max(k)::text FROM vr{S} WHERE k < 1500',
		'SELECT min(k)::text FROM vr{S} WHERE k > 1500',
		'SELECT count(*)::text FROM vr{S} WHERE k BETWEEN 500 AND 2500',
		'SELECT array_agg(k) FROM (SELECT k FROM vrd{S} WHERE k > 1500 ORDER BY k LIMIT 3) s',
		'SELECT array_agg(k) FROM (SELECT k FROM vrd{S} WHERE k < 1500 ORDER BY k DESC LIMIT 3) s',
		'SELECT max(k)::text FROM vrd{S} WHERE k < 1500',
		'SELECT min(k)::text FROM vrd{S} WHERE k > 1500'] LOOP
		EXECUTE replace(q, '{S}', '_g') INTO gbtree;
		EXECUTE replace(q, '{S}', '_b') INTO rb;
		same := gbtree IS NOT DISTINCT FROM rb;
		RETURN NEXT;
	END LOOP;
END
$f$;
SELECT * FROM vr_probe();
SELECT b.base, o.ord, o.pred, c.*
FROM unnest(ARRAY['vr', 'vrd']) b(base),
	 (VALUES (1, 'k DESC', 'k < 1500'), (2, 'k', 'k > 1500'), (3, 'k DESC', 'true'),
			 (4, 'k', 'true')) AS o(n, ord, pred),
	 LATERAL chk_order(b.base, o.ord, o.pred, '5') c
ORDER BY b.base, o.n;

--
-- HOT updates, updates that keep the key, aborted inserts, rolled-back
-- deletes
--
UPDATE ch_g SET id = -id WHERE id % 3 = 0;
UPDATE ch_b SET id = -id WHERE id % 3 = 0;
UPDATE ch_g SET k = k WHERE id % 5 = 0;
UPDATE ch_b SET k = k WHERE id % 5 = 0;
SELECT * FROM chk_list('ch', churn_preds());
BEGIN;
INSERT INTO ch_g SELECT 500000 + g, g % 50 FROM generate_series(1, 5000) g;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT count(*) FROM ch_g WHERE k < 50;
ROLLBACK;
BEGIN;
DELETE FROM ch_g WHERE k < 1000;
ROLLBACK;
SELECT * FROM chk_list('ch', churn_preds());
VACUUM ch_g, ch_b;
SELECT * FROM chk_list('ch', churn_preds());

--
-- index builds: over dead tuples and HOT chains, and inside the
-- transaction that loads the table
--
CREATE TABLE bd_g (id int, k float8);
INSERT INTO bd_g SELECT g, CASE WHEN g % 7 = 0 THEN '-0' WHEN g % 11 = 0 THEN 'NaN' ELSE (g % 3000)::float8 END
FROM generate_series(1, 20000) g;
DELETE FROM bd_g WHERE id % 4 = 0;
UPDATE bd_g SET k = -k WHERE id % 9 = 0;
UPDATE bd_g SET id = id + 1000000 WHERE id % 13 = 0;
CREATE TABLE bd_b AS SELECT * FROM bd_g;
CREATE INDEX bd_g_idx ON bd_g USING gbtree (k);
CREATE INDEX bd_b_idx ON bd_b USING btree (k);
SELECT * FROM chk_list('bd', ARRAY['k = 0', 'k < 0', 'k = ''NaN''', 'k BETWEEN 100 AND 200', 'k > 2990']);
BEGIN;
CREATE TABLE tx_g (id int, k int2);
CREATE TABLE tx_b (id int, k int2);
INSERT INTO tx_g SELECT g, g % 1000 - 500 FROM generate_series(1, 5000) g;
INSERT INTO tx_b SELECT * FROM tx_g;
CREATE INDEX tx_g_idx ON tx_g USING gbtree (k);
CREATE INDEX tx_b_idx ON tx_b USING btree (k);
INSERT INTO tx_g VALUES (5001, 32767), (5002, -32768);
INSERT INTO tx_b VALUES (5001, 32767), (5002, -32768);
SELECT * FROM chk_list('tx', ARRAY['k = 0', 'k < -490', 'k > 490', 'k = ANY (''{1,2,32767}'')']);
COMMIT;
SELECT * FROM chk_list('tx', ARRAY['k = 0', 'k < -490', 'k > 490', 'k = ANY (''{1,2,32767}'')']);

--
-- REINDEX, REINDEX CONCURRENTLY, CREATE INDEX CONCURRENTLY
--
REINDEX INDEX ch_g_idx;
SELECT * FROM churn_check('ch');
DELETE FROM ch_g WHERE id % 10 = 1;
DELETE FROM ch_b WHERE id % 10 = 1;
REINDEX TABLE ch_g;
SELECT * FROM churn_check('ch');
REINDEX INDEX CONCURRENTLY ch_g_idx;
SELECT * FROM churn_check('ch');
INSERT INTO ch_g SELECT 600000 + g, g FROM generate_series(1, 3000) g;
INSERT INTO ch_b SELECT * FROM ch_g WHERE id > 600000;
REINDEX TABLE CONCURRENTLY ch_g;
SELECT * FROM churn_check('ch');
DROP INDEX ch_g_idx;
CREATE INDEX CONCURRENTLY ch_g_idx ON ch_g USING gbtree (k);
SELECT c.relname, a.amname, i.indisvalid, i.indisready
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
WHERE i.indrelid = 'ch_g'::regclass;
SELECT * FROM churn_check('ch');
DROP INDEX CONCURRENTLY ch_g_idx;
CREATE INDEX CONCURRENTLY ch_g_idx ON ch_g USING gbtree (k DESC) WHERE k IS NOT NULL;
SELECT pg_get_indexdef('ch_g_idx'::regclass);
SELECT p.pred, c.nrows, c.seq, c.iscan, c.bitmap, c.ionly
FROM unnest(ARRAY['k = 4242', 'k < 1000', 'k >= 19000']) p(pred), LATERAL chk('ch', p.pred) c;

--
-- TRUNCATE (committed and rolled back)
--
SELECT mk('tr', 'int4', 'v', '{-2147483648,2147483647,NULL}');
VACUUM ANALYZE tr_g, tr_b;
BEGIN;
TRUNCATE tr_g;
SET LOCAL enable_seqscan = off;
SELECT count(*) FROM tr_g WHERE k > 0;
ROLLBACK;
SELECT * FROM chk_list('tr', ARRAY['k = 7', 'k > 300', 'k IS NULL']);
TRUNCATE tr_g, tr_b;
SELECT * FROM chk_list('tr', ARRAY['k = 7', 'k > 300', 'k IS NULL']);
SELECT * FROM minmax('tr');
INSERT INTO tr_g SELECT g, g % 700 - 350 FROM generate_series(1, 4000) g;
INSERT INTO tr_b SELECT * FROM tr_g;
SELECT * FROM chk_list('tr', ARRAY['k = 7', 'k > 300', 'k IS NULL']);
SELECT * FROM chk_order('tr', 'k DESC', 'k < 10', '20');

--
-- unlogged and temporary tables; SET LOGGED / SET UNLOGGED
--
CREATE UNLOGGED TABLE ul_g (id int, k timestamptz);
CREATE UNLOGGED TABLE ul_b (id int, k timestamptz);
CREATE INDEX ul_g_idx ON ul_g USING gbtree (k);
CREATE INDEX ul_b_idx ON ul_b USING btree (k);
INSERT INTO ul_g SELECT g, CASE WHEN g % 50 = 0 THEN NULL WHEN g % 51 = 0 THEN 'infinity'
								ELSE '2020-01-01 00:00+00'::timestamptz + g * interval '1 hour' END
FROM generate_series(1, 5000) g;
INSERT INTO ul_b SELECT * FROM ul_g;
SELECT relname, relpersistence FROM pg_class WHERE relname IN ('ul_g', 'ul_g_idx') ORDER BY 1;
SELECT * FROM chk_list('ul', ARRAY['k = ''2020-01-02 00:00+00''', 'k > ''2020-06-01 00:00+00''',
								   'k = ''infinity''', 'k IS NULL']);
ALTER TABLE ul_g SET LOGGED;
ALTER TABLE ul_b SET LOGGED;
SELECT relname, relpersistence FROM pg_class WHERE relname IN ('ul_g', 'ul_g_idx') ORDER BY 1;
SELECT * FROM chk_list('ul', ARRAY['k = ''2020-01-02 00:00+00''', 'k > ''2020-06-01 00:00+00''',
								   'k = ''infinity''', 'k IS NULL']);
ALTER TABLE ul_g SET UNLOGGED;
ALTER TABLE ul_b SET UNLOGGED;
INSERT INTO ul_g VALUES (6000, '-infinity');
INSERT INTO ul_b VALUES (6000, '-infinity');
SELECT * FROM chk_list('ul', ARRAY['k < ''2020-01-01 05:00+00''', 'k = ''infinity''']);
TRUNCATE ul_g;
INSERT INTO ul_g SELECT * FROM ul_b;
SELECT * FROM chk_list('ul', ARRAY['k < ''2020-01-01 05:00+00''', 'k = ''infinity''']);

CREATE TEMP TABLE tmp_g (id int, k money);
CREATE TEMP TABLE tmp_b (id int, k money);
CREATE INDEX tmp_g_idx ON tmp_g USING gbtree (k);
CREATE INDEX tmp_b_idx ON tmp_b USING btree (k);
INSERT INTO tmp_g SELECT g, (g % 500 - 250)::numeric::money FROM generate_series(1, 3000) g;
INSERT INTO tmp_g VALUES (3001, '-92233720368547758.08'), (3002, '92233720368547758.07');
INSERT INTO tmp_b SELECT * FROM tmp_g;
SELECT * FROM chk_list('tmp', ARRAY['k = ''1.00''', 'k < ''-200''', 'k >= ''92233720368547758.07''']);

--
-- partitioned tables: CREATE INDEX on the parent cascades to partitions
--
CREATE TABLE pt_g (id int, k int8) PARTITION BY RANGE (k);
CREATE TABLE pt_g1 PARTITION OF pt_g FOR VALUES FROM (MINVALUE) TO (0);
CREATE TABLE pt_g2 PARTITION OF pt_g FOR VALUES FROM (0) TO (MAXVALUE);
CREATE TABLE pt_g3 PARTITION OF pt_g DEFAULT;
CREATE TABLE pt_b (id int, k int8) PARTITION BY RANGE (k);
CREATE TABLE pt_b1 PARTITION OF pt_b FOR VALUES FROM (MINVALUE) TO (0);
CREATE TABLE pt_b2 PARTITION OF pt_b FOR VALUES FROM (0) TO (MAXVALUE);
CREATE TABLE pt_b3 PARTITION OF pt_b DEFAULT;
INSERT INTO pt_g SELECT g, CASE WHEN g % 100 = 0 THEN NULL ELSE g % 2000 - 1000 END FROM generate_series(1, 6000) g;
INSERT INTO pt_g VALUES (6001, 9223372036854775807), (6002, -9223372036854775808);
INSERT INTO pt_b SELECT * FROM pt_g;
CREATE INDEX pt_g_idx ON pt_g USING gbtree (k);
CREATE INDEX pt_b_idx ON pt_b USING btree (k);
VACUUM ANALYZE pt_g, pt_b, pt_g1, pt_g2, pt_g3, pt_b1, pt_b2, pt_b3;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname LIKE 'pt_g%idx' ORDER BY 1;
SELECT * FROM chk_list('pt', ARRAY['k = 5', 'k < -990', 'k > 990', 'k BETWEEN -5 AND 5',
								   'k IS NULL', 'k = 9223372036854775807']);
SELECT * FROM chk_order('pt', 'k', 'k > 995', 'ALL');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM pt_g WHERE k BETWEEN -5 AND 5 ORDER BY k;
SELECT k FROM pt_g WHERE k BETWEEN -5 AND 5 AND id < 2100 ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- fillfactor
--
SELECT mk('ff10', 'int8', 'v * 1000', '{-9223372036854775808,9223372036854775807,NULL}', 50, '(k)', 'WITH (fillfactor = 10)');
SELECT mk('ff50', 'int8', 'v * 1000', '{-9223372036854775808,9223372036854775807,NULL}', 50, '(k)', 'WITH (fillfactor = 50)');
SELECT mk('ff100', 'int8', 'v * 1000', '{-9223372036854775808,9223372036854775807,NULL}', 50, '(k)', 'WITH (fillfactor = 100)');
VACUUM ANALYZE ff10_g, ff10_b, ff50_g, ff50_b, ff100_g, ff100_b;
SELECT c.relname, c.reloptions FROM pg_class c WHERE c.relname LIKE 'ff%_g_idx' ORDER BY 1;
SELECT b.base, c.*
FROM unnest(ARRAY['ff10', 'ff50', 'ff100']) WITH ORDINALITY b(base, n),
	 LATERAL chk_list(b.base, ARRAY['k = 7000', 'k < -300000', 'k >= 9223372036854775807',
									'k = ANY (''{0,1000,-9223372036854775808}'')', 'k IS NULL']) c
ORDER BY b.n;
SELECT b.base, o.ord, c.*
FROM unnest(ARRAY['ff10', 'ff50', 'ff100']) WITH ORDINALITY b(base, n),
	 unnest(ARRAY['k', 'k DESC']) o(ord), LATERAL chk_order(b.base, o.ord) c
ORDER BY b.n, o.ord;
-- index builds honour fillfactor: fuller pages, smaller index
CREATE TABLE ffs (k int4);
INSERT INTO ffs SELECT g FROM generate_series(1, 100000) g;
CREATE INDEX ffs10 ON ffs USING gbtree (k) WITH (fillfactor = 10);
CREATE INDEX ffs50 ON ffs USING gbtree (k) WITH (fillfactor = 50);
CREATE INDEX ffs100 ON ffs USING gbtree (k) WITH (fillfactor = 100);
CREATE INDEX ffsdef ON ffs USING gbtree (k);
SELECT pg_relation_size('ffs10') > pg_relation_size('ffs50') AS ff10_bigger_than_ff50,
	   pg_relation_size('ffs50') > pg_relation_size('ffsdef') AS ff50_bigger_than_default,
	   pg_relation_size('ffsdef') > pg_relation_size('ffs100') AS default_bigger_than_ff100;
ALTER INDEX ffs100 SET (fillfactor = 30);
SELECT reloptions FROM pg_class WHERE relname = 'ffs100';
CREATE TEMP TABLE ffsize AS SELECT pg_relation_size('ffs100') AS before;
REINDEX INDEX ffs100;
SELECT pg_relation_size('ffs100') > before AS grew_after_reindex FROM ffsize;
ALTER INDEX ffs100 RESET (fillfactor);
SELECT reloptions FROM pg_class WHERE relname = 'ffs100';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), min(k), max(k) FROM ffs WHERE k BETWEEN 500 AND 99500;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- clean up
RESET search_path;
DROP SCHEMA t05 CASCADE;
