--
-- Multi-word keys (src/README, "Multi-word keys"): gbtree indexes on
-- several columns and on uuid.  Every index has a btree twin: a table with
-- the same rows and the same index USING btree.  Each check prints 'same'
-- (with the number of rows, or the outcome) when gbtree answers as btree
-- does, and a line starting 'DIFFERENT' otherwise:
--   m_diff  the rows of a condition under forced index, index-only, bitmap
--           and sequential plans of the gbtree table, against the btree
--           twin read by a sequential scan; and the plan of each forced
--           kind against the btree twin's plan under the same settings
--           (index names aside), so that a gbtree index the planner cannot
--           use shows up instead of passing silently;
--   m_ord   ORDER BY ... LIMIT under forced index and index-only scans
--           (the order itself compared, and the plan: no Sort where btree
--           needs none);
--   m_cur   a SCROLL cursor walked forward, backward, ABSOLUTE, RELATIVE,
--           across leaf pages, against the btree twin's cursor;
--   m_cmp   any one-value query (min/max, joins) on both twins.
-- Key shapes wider than 256 bits, unique multi-column and uuid indexes,
-- INCLUDE and text columns are refused (their SQLSTATE and message are
-- printed, with no twin: btree accepts them).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET lc_monetary = 'C';
SET extra_float_digits = 1;
-- a hang in the access method becomes an error, not a stuck suite
SET statement_timeout = '120s';
CREATE SCHEMA t26;
SET search_path = t26, public;

--
-- Helpers
--

-- what one statement did: its row count, or its error
CREATE FUNCTION m_one(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	st text;
	msg text;
BEGIN
	EXECUTE stmt;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN 'ok ' || n;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
	RETURN st || ' ' || msg;
END;
$$;

-- stmt (with %1$I for the table) on gbtree table g and btree table b:
-- "same: <outcome>" with the table names written T, or both outcomes
CREATE FUNCTION m_both(stmt text, g text, b text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	rg text := replace(m_one(format(stmt, g)), g, 'T');
	rb text := replace(m_one(format(stmt, b)), b, 'T');
BEGIN
	IF rg = rb THEN
		RETURN 'same: ' || rg;
	END IF;
	RETURN 'DIFFERENT: gbtree ' || rg || ' | btree ' || rb;
END;
$$;

-- the plan nodes of q (EXPLAIN COSTS OFF, property lines dropped), with
-- table t written T (so its index t_x is T_x)
CREATE FUNCTION m_shape(q text, t text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ln text;
	s text := '';
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		ln := regexp_replace(ln, '^\s*(->\s*)?', '');
		CONTINUE WHEN ln ~ '^[A-Za-z ]+: ';
		s := s || CASE WHEN s = '' THEN '' ELSE ' > ' END || replace(ln, t, 'T');
	END LOOP;
	RETURN s;
END;
$$;

-- force one kind of scan for the rest of the transaction
CREATE FUNCTION m_force(q text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('enable_seqscan', (q = 'seq')::text, true);
	PERFORM set_config('enable_indexscan', (q IN ('index', 'indexonly'))::text, true);
	PERFORM set_config('enable_indexonlyscan', (q = 'indexonly')::text, true);
	PERFORM set_config('enable_bitmapscan', (q = 'bitmap')::text, true);
END;
$$;

-- the rows of g matching cond (cols, then the row's id, except under an
-- index-only scan, which selects cols only: they must be index columns)
-- under each forced kind of scan, against the btree twin b read by a
-- sequential scan: 'same N' (N rows), or the kinds that differ.  With
-- plans, the gbtree plan of each forced kind must also be the btree
-- twin's under the same settings ('plan <kind>: gbtree | btree').
CREATE FUNCTION m_diff(g text, b text, cols text, cond text, plans boolean DEFAULT true)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ref text;
	got text;
	bad text := '';
	q text;
	sel text;
	qry text;
	sg text;
	sb text;
	n text;
BEGIN
	FOREACH q IN ARRAY ARRAY['index', 'indexonly', 'bitmap', 'seq'] LOOP
		sel := CASE WHEN q = 'indexonly' THEN format('ROW(%s)::text', cols)
			   ELSE format('ROW(%s)::text || ''@'' || id', cols) END;
		qry := 'SELECT count(*) || '':'' || coalesce(md5(string_agg(%1$s, '','' ORDER BY %1$s)), '''') FROM %2$I WHERE %3$s';
		PERFORM m_force('seq');
		EXECUTE format(qry, sel, b, cond) INTO ref;
		PERFORM m_force(q);
		EXECUTE format(qry, sel, g, cond) INTO got;
		IF got IS DISTINCT FROM ref THEN
			bad := bad || 'rows ' || q || ' (' || split_part(got, ':', 1) || ' vs ' || split_part(ref, ':', 1) || ') ';
		END IF;
		IF plans AND q <> 'seq' THEN
			sg := m_shape(format(qry, sel, g, cond), g);
			sb := m_shape(format(qry, sel, b, cond), b);
			IF sg IS DISTINCT FROM sb THEN
				bad := bad || 'plan ' || q || ': ' || sg || ' | ' || sb || ' ';
			END IF;
		END IF;
		n := split_part(ref, ':', 1);
	END LOOP;
	RETURN coalesce('DIFFERENT: ' || nullif(bad, ''), 'same ' || n);
END;
$$;

-- SELECT cols FROM g WHERE cond ORDER BY ord LIMIT lim under forced index
-- and index-only scans, the output in its order, against the btree twin
-- read by a sequential scan and a sort; and each plan against the btree
-- twin's under the same settings.  cols must be what ord determines (ties
-- in ord print the same), and index columns.
CREATE FUNCTION m_ord(g text, b text, cols text, cond text, ord text, lim int DEFAULT 100000)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ref text;
	got text;
	bad text := '';
	q text;
	qry text;
	sg text;
	sb text;
BEGIN
	qry := 'SELECT count(*) || '':'' || coalesce(md5(string_agg(s::text, '','')), '''') FROM (SELECT %1$s FROM %2$I WHERE %3$s ORDER BY %4$s LIMIT %5$s) s';
	PERFORM m_force('seq');
	EXECUTE format(qry, cols, b, cond, ord, lim) INTO ref;
	FOREACH q IN ARRAY ARRAY['index', 'indexonly'] LOOP
		PERFORM m_force(q);
		EXECUTE format(qry, cols, g, cond, ord, lim) INTO got;
		IF got IS DISTINCT FROM ref THEN
			bad := bad || 'rows ' || q || ' (' || split_part(got, ':', 1) || ' vs ' || split_part(ref, ':', 1) || ') ';
		END IF;
		sg := m_shape(format(qry, cols, g, cond, ord, lim), g);
		sb := m_shape(format(qry, cols, b, cond, ord, lim), b);
		IF sg IS DISTINCT FROM sb THEN
			bad := bad || 'plan ' || q || ': ' || sg || ' | ' || sb || ' ';
		END IF;
	END LOOP;
	RETURN coalesce('DIFFERENT: ' || nullif(bad, ''), 'same ' || split_part(ref, ':', 1));
END;
$$;

-- one fixed walk over an open scrollable cursor of n rows: every row
-- forward to the end, then backward to the start (counted and hashed);
-- then NEXT, PRIOR past the start, ABSOLUTE, RELATIVE, runs of NEXT and
-- PRIOR long enough to cross leaf pages, LAST, past the end, FIRST, MOVE;
-- every fetch logged
CREATE FUNCTION m_cur_walk(c refcursor, n int) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	v text;
	lg text[] := '{}';
	cnt int;
	acc text[];
BEGIN
	FOR pass IN 1..2 LOOP
		cnt := 0;
		acc := '{}';
		LOOP
			IF pass = 1 THEN
				FETCH NEXT FROM c INTO v;
			ELSE
				FETCH PRIOR FROM c INTO v;
			END IF;
			EXIT WHEN NOT FOUND;
			cnt := cnt + 1;
			acc := acc || v;
		END LOOP;
		lg := lg || (CASE pass WHEN 1 THEN 'all forward ' ELSE 'all backward ' END ||
					 cnt || ' ' || md5(array_to_string(acc, ';')));
	END LOOP;
	FOR i IN 1..5 LOOP
		FETCH NEXT FROM c INTO v; lg := lg || ('next ' || coalesce(v, '-'));
	END LOOP;
	FOR i IN 1..7 LOOP
		FETCH PRIOR FROM c INTO v; lg := lg || ('prior ' || coalesce(v, '-'));
	END LOOP;
	FETCH NEXT FROM c INTO v; lg := lg || ('next ' || coalesce(v, '-'));
	FETCH ABSOLUTE n / 2 FROM c INTO v; lg := lg || ('abs ' || coalesce(v, '-'));
	FOR i IN 1..700 LOOP
		FETCH NEXT FROM c INTO v; lg := lg || ('next ' || coalesce(v, '-'));
	END LOOP;
	FOR i IN 1..1500 LOOP
		FETCH PRIOR FROM c INTO v; lg := lg || ('prior ' || coalesce(v, '-'));
	END LOOP;
	FETCH RELATIVE -(n / 3) FROM c INTO v; lg := lg || ('rel ' || coalesce(v, '-'));
	FETCH RELATIVE n / 4 FROM c INTO v; lg := lg || ('rel ' || coalesce(v, '-'));
	FETCH BACKWARD FROM c INTO v; lg := lg || ('backward ' || coalesce(v, '-'));
	FETCH FORWARD FROM c INTO v; lg := lg || ('forward ' || coalesce(v, '-'));
	FETCH LAST FROM c INTO v; lg := lg || ('last ' || coalesce(v, '-'));
	FOR i IN 1..5 LOOP
		FETCH PRIOR FROM c INTO v; lg := lg || ('prior ' || coalesce(v, '-'));
	END LOOP;
	FOR i IN 1..7 LOOP
		FETCH NEXT FROM c INTO v; lg := lg || ('next ' || coalesce(v, '-'));
	END LOOP;
	FETCH PRIOR FROM c INTO v; lg := lg || ('prior ' || coalesce(v, '-'));
	FETCH ABSOLUTE -1 FROM c INTO v; lg := lg || ('abs ' || coalesce(v, '-'));
	FETCH ABSOLUTE -(n / 5) FROM c INTO v; lg := lg || ('abs ' || coalesce(v, '-'));
	FETCH ABSOLUTE n + 3 FROM c INTO v; lg := lg || ('abs ' || coalesce(v, '-'));
	FETCH PRIOR FROM c INTO v; lg := lg || ('prior ' || coalesce(v, '-'));
	FETCH FIRST FROM c INTO v; lg := lg || ('first ' || coalesce(v, '-'));
	FETCH PRIOR FROM c INTO v; lg := lg || ('prior ' || coalesce(v, '-'));
	FETCH NEXT FROM c INTO v; lg := lg || ('next ' || coalesce(v, '-'));
	MOVE FORWARD 250 FROM c;
	FETCH NEXT FROM c INTO v; lg := lg || ('move+250 next ' || coalesce(v, '-'));
	MOVE BACKWARD 400 FROM c;
	FETCH NEXT FROM c INTO v; lg := lg || ('move-400 next ' || coalesce(v, '-'));
	MOVE FORWARD ALL FROM c;
	FETCH PRIOR FROM c INTO v; lg := lg || ('end prior ' || coalesce(v, '-'));
	MOVE BACKWARD ALL FROM c;
	FETCH NEXT FROM c INTO v; lg := lg || ('start next ' || coalesce(v, '-'));
	MOVE LAST FROM c;
	FETCH NEXT FROM c INTO v; lg := lg || ('last next ' || coalesce(v, '-'));
	FETCH PRIOR FROM c INTO v; lg := lg || ('prior ' || coalesce(v, '-'));
	FETCH PRIOR FROM c INTO v; lg := lg || ('prior ' || coalesce(v, '-'));
	RETURN lg;
END;
$$;

-- SCROLL cursors on SELECT cols FROM t WHERE cond ORDER BY ord over g and
-- over the btree twin b, both under a forced index (or index-only) scan,
-- walked by m_cur_walk: 'same N' or the first step that differs; and the
-- cursors' plans compared as m_diff does.
CREATE FUNCTION m_cur(g text, b text, cols text, cond text, ord text, io boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	cg refcursor;
	cb refcursor;
	n int;
	lg text[];
	lb text[];
	qry text := 'SELECT ROW(%1$s)::text FROM %2$I WHERE %3$s ORDER BY %4$s';
	sg text;
	sb text;
BEGIN
	PERFORM m_force('seq');
	EXECUTE format('SELECT count(*) FROM %I WHERE %s', b, cond) INTO n;
	PERFORM m_force(CASE WHEN io THEN 'indexonly' ELSE 'index' END);
	sg := m_shape('DECLARE x SCROLL CURSOR FOR ' || format(qry, cols, g, cond, ord), g);
	sb := m_shape('DECLARE x SCROLL CURSOR FOR ' || format(qry, cols, b, cond, ord), b);
	OPEN cg SCROLL FOR EXECUTE format(qry, cols, g, cond, ord);
	OPEN cb SCROLL FOR EXECUTE format(qry, cols, b, cond, ord);
	lg := m_cur_walk(cg, n);
	lb := m_cur_walk(cb, n);
	CLOSE cg;
	CLOSE cb;
	FOR i IN 1..greatest(cardinality(lg), cardinality(lb)) LOOP
		IF lg[i] IS DISTINCT FROM lb[i] THEN
			RETURN format('DIFFERENT at step %s: gbtree %s | btree %s', i, lg[i], lb[i]);
		END IF;
	END LOOP;
	IF sg IS DISTINCT FROM sb THEN
		RETURN 'DIFFERENT plan: ' || sg || ' | ' || sb;
	END IF;
	RETURN 'same ' || n;
END;
$$;

-- a query returning one value (tmpl, with %1$I for the table) on g under
-- the session's settings, against the btree twin b with index scans off;
-- with plans, the gbtree plan against btree's under the session's settings
CREATE FUNCTION m_cmp(tmpl text, g text, b text, plans boolean DEFAULT true)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ref text;
	got text;
	sg text;
	sb text;
BEGIN
	EXECUTE format(tmpl, g) INTO got;
	IF plans THEN
		sg := m_shape(format(tmpl, g), g);
		sb := m_shape(format(tmpl, b), b);
	END IF;
	PERFORM m_force('seq');
	PERFORM set_config('enable_hashjoin', 'on', true);
	PERFORM set_config('enable_mergejoin', 'on', true);
	EXECUTE format(tmpl, b) INTO ref;
	IF got IS DISTINCT FROM ref THEN
		RETURN 'DIFFERENT: gbtree ' || coalesce(got, 'NULL') || ' | btree ' || coalesce(ref, 'NULL');
	END IF;
	IF sg IS DISTINCT FROM sb THEN
		RETURN 'DIFFERENT plan: ' || sg || ' | ' || sb;
	END IF;
	RETURN 'same: ' || coalesce(ref, 'NULL');
END;
$$;

--
-- 1. Key shapes.  A key holds at most 256 bits: each column its type's
-- width (bool 1, int2 16, int4/date/oid 32, uuid 128, the others 64) plus
-- a null bit per column in a multi-column index; 16 columns at most.
-- Wider shapes, unique multi-column or uuid indexes, INCLUDE and text
-- columns are refused (0A000).
--
CREATE TABLE mx (a int4, b int4, c int8, d int8, e int8, f int8, i2 int2,
				 u uuid, u2 uuid, t text,
				 b1 bool, b2 bool, b3 bool, b4 bool, b5 bool, b6 bool, b7 bool,
				 b8 bool, b9 bool, b10 bool, b11 bool, b12 bool, b13 bool,
				 b14 bool, b15 bool, b16 bool, b17 bool);
-- refused: too wide
SELECT m_one('CREATE INDEX mx_uu ON mx USING gbtree (u, u2)');                -- 258 bits
SELECT m_one('CREATE INDEX mx_8888 ON mx USING gbtree (c, d, e, f)');         -- 260 bits
SELECT m_one('CREATE INDEX mx_u88 ON mx USING gbtree (u, c, d)');             -- 259 bits
SELECT m_one('CREATE INDEX mx_88844 ON mx USING gbtree (c, d, e, a, b)');     -- 261 bits
SELECT m_one('CREATE INDEX mx_w258 ON mx USING gbtree (u, c, a, i2, b1, b2, b3, b4, b5, b6, b7)'); -- 258 bits
-- 17 one-bit columns (34 bits, but more than 16 columns)
SELECT m_one('CREATE INDEX mx_b17 ON mx USING gbtree (b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15, b16, b17)');
-- accepted: exactly 256 bits, 16 columns, and the shapes tested below
SELECT m_one('CREATE INDEX mx_w256 ON mx USING gbtree (u, c, a, i2, b1, b2, b3, b4, b5, b6)');
SELECT m_one('CREATE INDEX mx_b16 ON mx USING gbtree (b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15, b16)');
SELECT m_one('CREATE INDEX mx_888 ON mx USING gbtree (c, d, e)');             -- 195 bits
SELECT m_one('CREATE INDEX mx_u84 ON mx USING gbtree (u, c DESC, a NULLS FIRST)'); -- 227 bits
SELECT m_one('CREATE INDEX mx_u ON mx USING gbtree (u)');                     -- 128 bits
SELECT m_one('CREATE INDEX mx_u4 ON mx USING gbtree (u DESC, a)');            -- 162 bits
-- accepted: unique over several columns or a uuid (t27_multiword_unique)
SELECT m_one('CREATE UNIQUE INDEX mx_uq_ab ON mx USING gbtree (a, b)');
SELECT m_one('CREATE UNIQUE INDEX mx_uq_u ON mx USING gbtree (u)');
SELECT m_one('CREATE UNIQUE INDEX mx_uq_ua ON mx USING gbtree (u, a)');
-- accepted: INCLUDE (t28_include), text under "C" (t29_text); refused:
-- text under a collation that does not order by bytes, and a text key
-- with no byte of room left
SELECT m_one('CREATE INDEX mx_inc ON mx USING gbtree (a) INCLUDE (b)');
SELECT m_one('CREATE INDEX mx_inc2 ON mx USING gbtree (a, b) INCLUDE (c)');
SELECT m_one('CREATE INDEX mx_t ON mx USING gbtree (t COLLATE "C")');
CREATE COLLATION c_utf8 (provider = libc, locale = 'C.UTF-8');
\getenv abs_srcdir PG_ABS_SRCDIR
\set c_utf8 :abs_srcdir '/sql/helpers/c_utf8.sql'
\i :c_utf8
SELECT c_utf8_index('CREATE INDEX mx_at ON mx USING gbtree (a, t COLLATE c_utf8)', 'mx_at');
SELECT m_one('CREATE INDEX mx_ut ON mx USING gbtree (u, c, a, i2, b1, b2, b3, t COLLATE "C")'); -- 251 bits and text
-- the accepted ones exist, the refused ones do not
SELECT string_agg(c.relname, ' ' ORDER BY c.relname) AS indexes
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = 'mx'::regclass;
-- and they take rows, NULLs and all
INSERT INTO mx (a, b, c, d, e, u, b1, b16)
SELECT g, g, g, -g, g * 3, md5(g::text)::uuid, g % 2 = 0, g % 3 = 0
FROM generate_series(1, 500) g;
INSERT INTO mx (a) VALUES (NULL), (1);
SELECT gbtree_check('mx_w256', true);
DROP TABLE mx;

--
-- 2. (int4, int4): a build over 35,000 rows with NULLs in either column
-- and in both, heavy duplicates (3,000 rows on (7, 7)), the types'
-- extremes; then every kind of condition.
--
CREATE TABLE mg_a (id int, a int4, b int4, c int8, v int4);
INSERT INTO mg_a
SELECT g,
	   CASE WHEN g % 97 = 0 THEN NULL ELSE (g * 7919) % 211 - 5 END,
	   CASE WHEN g % 89 = 0 THEN NULL ELSE (g::int8 * 104729) % 2003 - 1001 END,
	   CASE WHEN g % 83 = 0 THEN NULL ELSE (g::int8 * 1000003) % 400 - 200 END,
	   g % 10
FROM generate_series(1, 30000) g;
INSERT INTO mg_a SELECT g, 7, 7, g % 5, g % 10 FROM generate_series(30001, 33000) g;
INSERT INTO mg_a SELECT g, NULL, NULL, NULL, g % 10 FROM generate_series(33001, 33100) g;
INSERT INTO mg_a SELECT g, 3, NULL, g, 0 FROM generate_series(33101, 33200) g;
INSERT INTO mg_a SELECT g, NULL, 5, g, 0 FROM generate_series(33201, 33300) g;
INSERT INTO mg_a VALUES
	(33301, -2147483648, -2147483648, -9223372036854775808, 1),
	(33302, -2147483648, 2147483647, 9223372036854775807, 1),
	(33303, -2147483648, NULL, NULL, 1),
	(33304, 2147483647, -2147483648, 0, 1),
	(33305, 2147483647, 2147483647, NULL, 1),
	(33306, 2147483647, NULL, 1, 1),
	(33307, NULL, -2147483648, 2, 1),
	(33308, NULL, 2147483647, 3, 1),
	(33309, 0, 0, 0, 1),
	(33310, -1, -1, -1, 1),
	(33311, 0, -1, 0, 1),
	(33312, -1, 0, 0, 1),
	(33313, 2147483647, 2147483647, 4, 1),
	(33314, -2147483648, -2147483648, 5, 1);
CREATE TABLE mb_a (LIKE mg_a);
INSERT INTO mb_a SELECT * FROM mg_a ORDER BY id;
CREATE INDEX mg_a_ab ON mg_a USING gbtree (a, b);
CREATE INDEX mb_a_ab ON mb_a USING btree (a, b);
VACUUM ANALYZE mg_a, mb_a;

-- equality on the prefix and on both columns
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 AND b = 7');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 AND b = 8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 100');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b = 18');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 206');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 0 AND b = 0');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = -1 AND b = -1');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 2147483647');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = -2147483648 AND b = -2147483648');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 2147483647 AND b = 2147483647');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = -2147483648 AND b = 2147483647');
-- a range on the second column under equality on the first
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b > 0');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b >= -10 AND b < 10');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b BETWEEN 990 AND 2000');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b < -1001');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b <= -1001');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 AND b >= 7');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 AND b > 7');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 AND b < 7');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 2147483647 AND b > -2147483648');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = -2147483648 AND b < 2147483647');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 50 AND b > 100 AND b > 500 AND b < 900 AND b <= 800');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 50 AND b > 500 AND b < 400');
-- ranges on the first column only, and on both
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a > 200');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a >= 10 AND a < 20');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a < 0');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a <= -5');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a > 2147483646');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a < -2147483647');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a BETWEEN 50 AND 60 AND b > 900');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a >= 6 AND a <= 8 AND b BETWEEN 0 AND 10');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a > 7 AND a < 8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NOT NULL');
-- conditions on the second column only (a full index scan)
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'b = 5');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'b > 995');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'b <= -2147483648');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'b = 7 AND v = 3');
-- IS NULL / IS NOT NULL on either column
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'b IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL AND b IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL AND b = 5');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL AND b > 0');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL AND b IS NOT NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NOT NULL AND b IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b IS NOT NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a > 200 AND b IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b IS NULL AND b = 5');
-- = ANY / IN on either column: NULL elements, duplicates, empty arrays
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = ANY (''{1,3,3,7,NULL,205,-5}'')');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = ANY (''{}''::int4[])');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = ANY (''{NULL,NULL}''::int4[])');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b = ANY (''{-1001,0,5,5,1001,NULL}'')');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 AND b = ANY (''{}''::int4[])');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IN (1, 2, 3) AND b IN (10, 20, 30, -7, 30)');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'b = ANY (''{1,2,3,7,NULL}'')');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = ANY (''{7,8}'') AND b > 990');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IN (-2147483648, 2147483647) AND b IN (-2147483648, 2147483647, 0)');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL AND b = ANY (''{5,7,2147483647}'')');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = ANY (''{7,3}'') AND b = ANY (''{7,5,NULL}'') AND b = ANY (''{5,7}'')');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a < ANY (''{-3,2}'') AND b > ANY (''{995,1000}'')');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = ANY (''{10,11,12}'') AND b BETWEEN -100 AND 100');
-- row comparisons (core PostgreSQL offers them as index conditions to
-- btree only: the rows are compared, the plans are not)
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a, b) > (100, 0)', false);
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a, b) >= (100, 0) AND (a, b) < (101, -500)', false);
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a, b) > (100, NULL)', false);
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a, b) <= (7, 7) AND a >= 6', false);
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a, b) < (-2147483648, 0)', false);
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a, b) >= (2147483647, 2147483647)', false);
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a, b) > (1::int8, 2::int8) AND a < 3', false);
-- cross-type: int4 columns against int2 and int8 constants, out of the
-- column's range too (2^40, -2^40, 2^31)
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 1099511627776::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a < 1099511627776::int8 AND a > 200::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a > -1099511627776::int8 AND a < 3::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a >= -1099511627776::int8 AND a <= -1099511627775::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7::int8 AND b > 1099511627776::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7::int8 AND b < 1099511627776::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3::int8 AND b >= -1099511627776::int8 AND b <= 0::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b > 2147483647::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b >= -2147483648::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 2147483647 AND b >= 2147483647::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'b = 2147483648::int8');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = ANY (''{7,1099511627776,-1099511627776}''::int8[])');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7::int2 AND b = 7::int2');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3::int2 AND b > 32767::int2');
-- bitmap scans with OR
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a = 3 AND b = 5) OR (a = 100 AND b > 900)');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 OR b = -1001');
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a = 5 AND b < 0) OR a IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 2147483647 OR a = -2147483648 OR (a = 3 AND b IS NULL)');
-- a condition on a column outside the index
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 AND v = 3');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a BETWEEN 100 AND 110 AND c > 0');
-- the whole table, through the index (IS NOT NULL, IS NULL)
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NOT NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL');

-- ORDER BY ... LIMIT, forward and backward, and on a prefix under
-- equality on it
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'true', 'a, b', 50);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'true', 'a DESC, b DESC', 50);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'true', 'a, b', 4000);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'true', 'a DESC, b DESC', 4000);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'a > 100', 'a, b', 500);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'a < 100', 'a DESC, b DESC', 500);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'a = 7', 'a, b', 10);
SELECT m_ord('mg_a', 'mb_a', 'b', 'a = 3', 'b', 10);
SELECT m_ord('mg_a', 'mb_a', 'b', 'a = 3', 'b DESC', 10);
SELECT m_ord('mg_a', 'mb_a', 'b', 'a = 3 AND b > 0', 'b');
SELECT m_ord('mg_a', 'mb_a', 'b', 'a = 3 AND b < 0', 'b DESC');
SELECT m_ord('mg_a', 'mb_a', 'b', 'a = 7', 'b DESC', 3500);
SELECT m_ord('mg_a', 'mb_a', 'b', 'a IS NULL', 'b', 200);
SELECT m_ord('mg_a', 'mb_a', 'b', 'a IS NULL', 'b DESC', 200);
SELECT m_ord('mg_a', 'mb_a', 'a', 'true', 'a', 100);
SELECT m_ord('mg_a', 'mb_a', 'a', 'true', 'a DESC', 100);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'a >= 10 AND a < 20', 'a, b DESC', 100);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'a = ANY (''{3,7,NULL,100}'')', 'a, b', 300);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'a = ANY (''{3,7,NULL,100}'')', 'a DESC, b DESC', 300);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'b = 5', 'a, b', 300);
SELECT m_ord('mg_a', 'mb_a', 'a, b', '(a, b) > (100, 0)', 'a, b', 100);
SELECT m_ord('mg_a', 'mb_a', 'a, b', '(a, b) < (100, 0)', 'a DESC, b DESC', 100);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'a = 1099511627776::int8 OR a IS NULL', 'a, b', 100);
-- min() / max()
SET enable_seqscan = off;
SELECT m_cmp('SELECT min(a)::text || '','' || max(a) FROM %1$I', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT min(b)::text || '','' || max(b) FROM %1$I WHERE a = 7', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT min(b)::text || '','' || max(b) FROM %1$I WHERE a = 3', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT min(b)::text || '','' || max(b) FROM %1$I WHERE a = 2147483647', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT coalesce(max(b)::text, ''none'') FROM %1$I WHERE a = 206', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT min(b)::text || '','' || max(b) FROM %1$I WHERE a IS NULL', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT min(a)::text || '','' || max(a) FROM %1$I WHERE b = 5', 'mg_a', 'mb_a');
RESET enable_seqscan;
-- scrollable cursors, ascending and descending, over the duplicates
SELECT m_cur('mg_a', 'mb_a', 'a, b', 'true', 'a, b');
SELECT m_cur('mg_a', 'mb_a', 'a, b', 'a >= 5 AND a <= 9', 'a, b');
SELECT m_cur('mg_a', 'mb_a', 'a, b', 'a >= 5 AND a <= 9', 'a DESC, b DESC');
SELECT m_cur('mg_a', 'mb_a', 'a, b', 'a >= 5 AND a <= 9', 'a, b', true);
SELECT m_cur('mg_a', 'mb_a', 'b', 'a = 7', 'b DESC', true);
SELECT m_cur('mg_a', 'mb_a', 'a, b', 'a IS NULL OR a > 200', 'a DESC, b DESC');
SELECT m_cur('mg_a', 'mb_a', 'a, b', 'a = 206', 'a, b');

-- a join: the gbtree table as the inner side of a nested loop, looked up
-- on (a, b), on a alone with a range on b, and with NULLs in the outer rows
CREATE TABLE mo (id int, x int4, y int4);
INSERT INTO mo SELECT g, (g * 37) % 215 - 5, (g * 131) % 2003 - 1001 FROM generate_series(1, 300) g;
INSERT INTO mo VALUES (301, 7, 7), (302, 3, NULL), (303, NULL, 5), (304, NULL, NULL),
	(305, 2147483647, 2147483647), (306, -2147483648, -2147483648), (307, 7, 7);
ANALYZE mo;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_material = off;
SET enable_memoize = off;
SET gbtree.enable_join = off;
SELECT m_cmp('SELECT count(*) || '':'' || md5(string_agg(o.id || ''@'' || t.id, '','' ORDER BY o.id, t.id)) FROM mo o JOIN %1$I t ON t.a = o.x AND t.b = o.y', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT count(*) || '':'' || md5(string_agg(o.id || ''@'' || t.id, '','' ORDER BY o.id, t.id)) FROM mo o JOIN %1$I t ON t.a = o.x AND t.b BETWEEN o.y AND o.y::int8 + 20', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT count(*) || '':'' || md5(string_agg(o.id || ''@'' || t.id, '','' ORDER BY o.id, t.id)) FROM mo o JOIN %1$I t ON t.a = o.x WHERE mod(o.id, 10) = 0', 'mg_a', 'mb_a');
SELECT m_cmp('SELECT count(*) || '':'' || md5(string_agg(o.id || ''@'' || t.id, '','' ORDER BY o.id, t.id)) FROM mo o LEFT JOIN %1$I t ON t.a = o.x AND t.b = o.y WHERE o.x IS NULL OR o.y IS NULL OR o.id > 300', 'mg_a', 'mb_a');
-- the same joins as gbtree would plan them on its own (rows only)
RESET gbtree.enable_join;
SELECT m_cmp('SELECT count(*) || '':'' || md5(string_agg(o.id || ''@'' || t.id, '','' ORDER BY o.id, t.id)) FROM mo o JOIN %1$I t ON t.a = o.x AND t.b = o.y', 'mg_a', 'mb_a', false);
SELECT m_cmp('SELECT count(*) || '':'' || md5(string_agg(o.id || ''@'' || t.id, '','' ORDER BY o.id, t.id)) FROM mo o JOIN %1$I t ON t.a = o.x AND t.b BETWEEN o.y AND o.y::int8 + 20', 'mg_a', 'mb_a', false);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_material;
RESET enable_memoize;

--
-- 3. Writes after the build: 20,000 rows in random order (many leaf
-- splits), updates of either key column, deletes, VACUUM; then the same
-- checks again.  Some inserts one entry at a time, the rest batched.
--
SELECT m_both('INSERT INTO %1$I SELECT 40000 + g, mod((g * 7877), 301) - 50, mod((g * 613), 4001) - 2000, g, mod(g, 10) FROM generate_series(1, 15000) g ORDER BY mod((g * 7919), 15013)', 'mg_a', 'mb_a');
SELECT m_both('INSERT INTO %1$I SELECT 60000 + g, 7, 7, g, 0 FROM generate_series(1, 2000) g', 'mg_a', 'mb_a');
SET gbtree.insert_batch_memory = 0;
SELECT m_both('INSERT INTO %1$I SELECT 70000 + g, 3, mod(g, 50), g, 0 FROM generate_series(1, 3000) g ORDER BY g DESC', 'mg_a', 'mb_a');
SELECT m_both('INSERT INTO %1$I VALUES (80001, NULL, NULL, 0, 0), (80002, 2147483647, 2147483647, 0, 0), (80003, -2147483648, NULL, 0, 0)', 'mg_a', 'mb_a');
RESET gbtree.insert_batch_memory;
SELECT m_both('UPDATE %1$I SET b = b + 1 WHERE a = 3 AND b BETWEEN 0 AND 500', 'mg_a', 'mb_a');
SELECT m_both('UPDATE %1$I SET a = NULL WHERE a = 100', 'mg_a', 'mb_a');
SELECT m_both('UPDATE %1$I SET a = 7, b = 7 WHERE a = 101', 'mg_a', 'mb_a');
SELECT m_both('UPDATE %1$I SET b = NULL WHERE a = 102 AND b > 0', 'mg_a', 'mb_a');
SELECT m_both('UPDATE %1$I SET v = v + 1 WHERE a = 104', 'mg_a', 'mb_a');
SELECT m_both('DELETE FROM %1$I WHERE a BETWEEN 10 AND 20', 'mg_a', 'mb_a');
SELECT m_both('DELETE FROM %1$I WHERE a = 7 AND mod(id, 3) = 0', 'mg_a', 'mb_a');
SELECT m_both('DELETE FROM %1$I WHERE b IS NULL AND mod(id, 2) = 0', 'mg_a', 'mb_a');
-- before VACUUM: dead entries still in the index
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a BETWEEN 5 AND 25');
VACUUM ANALYZE mg_a, mb_a;
SELECT gbtree_check('mg_a_ab', true);
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NOT NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 7 AND b = 7');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b >= 0 AND b < 60');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a BETWEEN 5 AND 25');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a > 200 AND b < 0');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'b = 5');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 102 AND b IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = ANY (''{3,7,100,101,102,2147483647}'') AND b < 10');
SELECT m_diff('mg_a', 'mb_a', 'a, b', '(a = 3 AND b = 5) OR (a = 240 AND b > 1000) OR a IS NULL');
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'true', 'a, b', 1000);
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'true', 'a DESC, b DESC', 1000);
SELECT m_ord('mg_a', 'mb_a', 'b', 'a = 3', 'b DESC', 100);
SELECT m_cur('mg_a', 'mb_a', 'a, b', 'a BETWEEN 0 AND 30', 'a, b');
-- REINDEX, then the same answers
REINDEX INDEX mg_a_ab;
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NOT NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a IS NULL');
SELECT m_diff('mg_a', 'mb_a', 'a, b', 'a = 3 AND b > 10');
SELECT m_ord('mg_a', 'mb_a', 'a, b', 'a > 150', 'a DESC, b DESC', 300);

--
-- 4. Three columns with DESC and NULLS FIRST / LAST per column:
-- (a DESC, b NULLS FIRST, c DESC NULLS LAST), built over mg_a's rows.
--
CREATE TABLE mg_c (LIKE mg_a);
CREATE TABLE mb_c (LIKE mg_a);
INSERT INTO mg_c SELECT * FROM mb_a ORDER BY id;
INSERT INTO mb_c SELECT * FROM mb_a ORDER BY id;
CREATE INDEX mg_c_abc ON mg_c USING gbtree (a DESC, b NULLS FIRST, c DESC NULLS LAST);
CREATE INDEX mb_c_abc ON mb_c USING btree (a DESC, b NULLS FIRST, c DESC NULLS LAST);
VACUUM ANALYZE mg_c, mb_c;
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = 7');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = 7 AND b = 7');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = 7 AND b = 7 AND c = 3');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = 7 AND b = 7 AND c > 2');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = 3 AND b IS NULL AND c < 33150');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = 3 AND b > 500');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a > 200');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a < 0 AND b > 0');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'c = 0');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'b = 5 AND c IS NOT NULL AND c < 33220');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a IS NULL AND b IS NULL AND c IS NULL');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a IS NULL AND b = 5 AND c > 33250');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = -2147483648 AND b = -2147483648');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = -2147483648 AND b = 2147483647 AND c = 9223372036854775807');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = ANY (''{3,7,NULL}'') AND b = ANY (''{5,7,NULL}'') AND c = ANY (''{0,1,2,33210,NULL}'')');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = -2147483648 AND b = 2147483647 AND c >= 9223372036854775807');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', 'a = 50 AND c > 100');
SELECT m_diff('mg_c', 'mb_c', 'a, b, c', '(a = 50 AND b < 0) OR (a = 51 AND b > 0 AND c < 0)');
SELECT m_ord('mg_c', 'mb_c', 'a, b, c', 'true', 'a DESC, b NULLS FIRST, c DESC NULLS LAST', 200);
SELECT m_ord('mg_c', 'mb_c', 'a, b, c', 'true', 'a, b DESC NULLS LAST, c NULLS FIRST', 200);
SELECT m_ord('mg_c', 'mb_c', 'a, b, c', 'true', 'a DESC, b, c DESC', 200);
SELECT m_ord('mg_c', 'mb_c', 'b, c', 'a = 3', 'b NULLS FIRST, c DESC NULLS LAST', 300);
SELECT m_ord('mg_c', 'mb_c', 'c', 'a = 7 AND b = 7', 'c DESC NULLS LAST', 100);
SELECT m_ord('mg_c', 'mb_c', 'c', 'a = 7 AND b = 7', 'c NULLS FIRST', 100);
SELECT m_ord('mg_c', 'mb_c', 'a, b, c', 'a BETWEEN 40 AND 45', 'a DESC, b NULLS FIRST, c DESC NULLS LAST', 2000);
SELECT m_ord('mg_c', 'mb_c', 'a', 'true', 'a DESC', 50);
SELECT m_ord('mg_c', 'mb_c', 'a', 'true', 'a', 50);
SELECT m_cur('mg_c', 'mb_c', 'a, b, c', 'a BETWEEN 0 AND 20', 'a DESC, b NULLS FIRST, c DESC NULLS LAST');
SELECT m_cur('mg_c', 'mb_c', 'a, b, c', 'a BETWEEN 0 AND 20', 'a, b DESC NULLS LAST, c NULLS FIRST', true);
SET enable_seqscan = off;
SELECT m_cmp('SELECT min(c)::text || '','' || max(c) FROM %1$I WHERE a = 7 AND b = 7', 'mg_c', 'mb_c');
SELECT m_cmp('SELECT min(a)::text || '','' || max(a) FROM %1$I', 'mg_c', 'mb_c');
RESET enable_seqscan;

--
-- 5. Every type, in pairs (one index per column pair; each column in one
-- index only).  (int2 DESC, int4) fits one word; (bool, int8), (oid,
-- date) two; the others three.  NaN, -0, the infinities, the types'
-- extremes, NULLs.
--
CREATE TABLE mg_t (id int, i2 int2, i4 int4, bo bool, i8 int8, f4 float4, f8 float8,
				   o oid, d date, tm time, ts timestamp, tz timestamptz, m money);
INSERT INTO mg_t
SELECT g,
	   CASE WHEN g % 101 = 0 THEN NULL ELSE ((g * 7) % 301 - 150)::int2 END,
	   CASE WHEN g % 103 = 0 THEN NULL ELSE ((g::int8 * 2654435761) % 4294967296 - 2147483648)::int4 END,
	   CASE WHEN g % 7 = 0 THEN NULL ELSE g % 3 = 0 END,
	   CASE WHEN g % 107 = 0 THEN NULL ELSE (g::int8 * 1000003) % 200000 - 100000 END,
	   CASE WHEN g % 109 = 0 THEN NULL
			WHEN g % 13 = 0 THEN 'NaN'::float4 WHEN g % 13 = 1 THEN '-0'::float4
			WHEN g % 13 = 2 THEN 'Infinity'::float4 WHEN g % 13 = 3 THEN '-Infinity'::float4
			WHEN g % 13 = 4 THEN 0.1::float4 WHEN g % 13 = 5 THEN 0::float4
			ELSE ((g % 40) - 20) / 8.0 END,
	   CASE WHEN g % 113 = 0 THEN NULL
			WHEN g % 11 = 0 THEN 'NaN'::float8 WHEN g % 11 = 1 THEN '-0'::float8
			WHEN g % 11 = 2 THEN 'Infinity'::float8 WHEN g % 11 = 3 THEN '-Infinity'::float8
			WHEN g % 11 = 4 THEN 0::float8
			ELSE (g % 100) * 0.37 - 18 END,
	   CASE WHEN g % 127 = 0 THEN NULL ELSE ((g * 17) % 500)::oid END,
	   CASE WHEN g % 131 = 0 THEN NULL ELSE date '2000-01-01' + (g * 13) % 400 END,
	   CASE WHEN g % 137 = 0 THEN NULL ELSE time '00:00' + ((g * 37) % 600) * interval '2 min' END,
	   CASE WHEN g % 139 = 0 THEN NULL ELSE timestamp '2020-01-01' + (g % 700) * interval '17 min' END,
	   CASE WHEN g % 149 = 0 THEN NULL ELSE timestamptz '2020-01-01 00:00+00' + (g % 500) * interval '1 hour' END,
	   CASE WHEN g % 151 = 0 THEN NULL ELSE (((g * 7) % 777 - 300)::numeric / 4)::money END
FROM generate_series(1, 20000) g;
INSERT INTO mg_t VALUES
	(20001, -32768, -2147483648, false, -9223372036854775808, '-Infinity', '-Infinity',
	 0, '-infinity', '00:00', '-infinity', '-infinity', '-92233720368547758.08'),
	(20002, 32767, 2147483647, true, 9223372036854775807, 'Infinity', 'Infinity',
	 4294967295, 'infinity', '24:00', 'infinity', 'infinity', '92233720368547758.07'),
	(20003, 32767, -2147483648, true, -9223372036854775808, 'NaN', 'NaN',
	 4294967295, '-infinity', '24:00', '-infinity', 'infinity', '-92233720368547758.08'),
	(20004, -32768, 2147483647, false, 9223372036854775807, '-0', '-0',
	 0, 'infinity', '00:00', 'infinity', '-infinity', '92233720368547758.07'),
	(20005, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(20006, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(20007, 5, NULL, NULL, 5, NULL, '-0', NULL, '2000-01-01', NULL, '2020-01-01', NULL, '0'),
	(20008, 5, 5, true, 5, '-0', 'NaN', 5, NULL, '12:00', NULL, '2020-01-02 00:00+00', NULL),
	(20009, 5, 5, true, 5, '0', '-0', 5, '2000-01-01', '12:00', '2020-01-01', '2020-01-02 00:00+00', '0'),
	(20010, 5, 5, true, 5, 'NaN', 'Infinity', 5, '2000-01-01', '12:00', '2020-01-01', '2020-01-02 00:00+00', '0'),
	(20011, 0, 0, false, 0, '-0', '-0', 0, '2000-01-01', '00:00', '2020-01-01', '2020-01-01 00:00+00', '0'),
	(20012, 0, 0, false, 0, '-0', 0, 0, '2000-01-01', '00:00', '2020-01-01', '2020-01-01 00:00+00', '0'),
	(20013, 0, 0, false, 0, 0, '-0', 0, '2000-01-01', '00:00', '2020-01-01', '2020-01-01 00:00+00', '0');
CREATE TABLE mb_t (LIKE mg_t);
INSERT INTO mb_t SELECT * FROM mg_t ORDER BY id;
CREATE INDEX mg_t_i2i4 ON mg_t USING gbtree (i2 DESC, i4);
CREATE INDEX mb_t_i2i4 ON mb_t USING btree (i2 DESC, i4);
CREATE INDEX mg_t_boi8 ON mg_t USING gbtree (bo, i8 DESC NULLS LAST);
CREATE INDEX mb_t_boi8 ON mb_t USING btree (bo, i8 DESC NULLS LAST);
CREATE INDEX mg_t_f4f8 ON mg_t USING gbtree (f4, f8 DESC);
CREATE INDEX mb_t_f4f8 ON mb_t USING btree (f4, f8 DESC);
CREATE INDEX mg_t_od ON mg_t USING gbtree (o NULLS FIRST, d);
CREATE INDEX mb_t_od ON mb_t USING btree (o NULLS FIRST, d);
CREATE INDEX mg_t_tmts ON mg_t USING gbtree (tm DESC NULLS LAST, ts);
CREATE INDEX mb_t_tmts ON mb_t USING btree (tm DESC NULLS LAST, ts);
CREATE INDEX mg_t_tzm ON mg_t USING gbtree (tz, m DESC);
CREATE INDEX mb_t_tzm ON mb_t USING btree (tz, m DESC);
VACUUM ANALYZE mg_t, mb_t;
-- int2, int4; int2 against int4 and int8 constants out of its range
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = 5');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = 5 AND i4 = 5');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = 5 AND i4 > 0');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 BETWEEN -10 AND 10 AND i4 < -1000000000');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = 32767');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = -32768 AND i4 = 2147483647');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = 100000');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 < 100000 AND i2 > 140');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 > -100000 AND i2 < -140');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 >= 32767::int4');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = 5::int8 AND i4 < 4000000000::int8');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = 0 AND i4 >= -4000000000::int8');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = ANY (''{5,70000,-70000,NULL,5}''::int4[])');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i4 > 2000000000');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 IS NULL');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = 5 AND i4 IS NULL');
SELECT m_ord('mg_t', 'mb_t', 'i2, i4', 'true', 'i2 DESC, i4', 300);
SELECT m_ord('mg_t', 'mb_t', 'i2, i4', 'true', 'i2, i4 DESC', 300);
SELECT m_ord('mg_t', 'mb_t', 'i4', 'i2 = 5', 'i4 DESC', 30);
-- bool, int8
-- a condition on bool alone: PostgreSQL 15's planner simplifies bo = true
-- to bo, which only btree's own bool family matches (rows still compared)
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo = true', false);
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo = false AND i8 > 90000');
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo = true AND i8 = 9223372036854775807');
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo = false AND i8 <= -9223372036854775808');
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo IS NULL AND i8 BETWEEN -1000 AND 1000');
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo = true AND i8 IS NULL');
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'i8 = 5::int2');
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo = true AND i8 = ANY (''{5,0,-9223372036854775808,NULL}'')');
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo = true AND i8 > 2147483647::int4', true);
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo <> true', false);
SELECT m_ord('mg_t', 'mb_t', 'bo, i8', 'true', 'bo, i8 DESC NULLS LAST', 200);
SELECT m_ord('mg_t', 'mb_t', 'bo, i8', 'true', 'bo DESC, i8 NULLS FIRST', 200);
-- (ORDER BY i8 under bo = false: btree's plan alone drops the Sort, as above)
SELECT m_diff('mg_t', 'mb_t', 'i8', 'bo = false', false);
-- float4, float8: NaN, -0, infinities; float4 against float8 constants
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = 0');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = ''-0''');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = 0 AND f8 = 0');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = ''NaN''');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = ''NaN'' AND f8 = ''NaN''');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = ''NaN'' AND f8 > ''Infinity''');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = ''Infinity'' AND f8 >= 0');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = ''-Infinity'' AND f8 < 0');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = 1 AND f8 = ''-Infinity''');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 > 2');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 >= ''Infinity''');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 < -2 AND f8 BETWEEN -1 AND 1');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f8 = ''-0''');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f8 = ''NaN''');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = 0.1::float8');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = 0.1::float4');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = 0.5::float8');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 > 1e300::float8');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 < -1e300::float8');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = ''NaN''::float8');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 >= 3.4028235e38::float8');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = 0::float8 AND f8 = 0::float4');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = ANY (''{0,NaN,-Infinity,NULL,0.1}''::float8[])');
-- (f8 IS NULL bounds nothing on (f4, f8): from PostgreSQL 18 on, btree's
-- index is priced as a skip scan, gbtree's as the whole index it reads,
-- so under forced index scans btree's plan is a bitmap OR and gbtree's a
-- sequential scan; t50 checks gbtree's estimate)
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 IS NULL OR f8 IS NULL',
			  current_setting('server_version_num')::int < 180000);
SELECT m_ord('mg_t', 'mb_t', 'f4 + 0 AS x4, f8 + 0 AS x8', 'true', 'f4, f8 DESC', 300);
SELECT m_ord('mg_t', 'mb_t', 'f4 + 0 AS x4, f8 + 0 AS x8', 'true', 'f4 DESC, f8', 300);
SELECT m_ord('mg_t', 'mb_t', 'f8 + 0 AS x8', 'f4 = 0', 'f8 DESC', 3000);
-- oid, date; timestamptz, timestamp and date against each other (their
-- btree operator family mixes them: compared, the plans are not)
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'o = 5');
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'o = 5 AND d = ''2000-01-01''');
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'o = 4294967295');
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'o > 4000000000');
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'o = 0 AND d = ''-infinity''');
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'o = 17 AND d > ''2000-06-01''');
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'o IS NULL AND d < ''2000-03-01''');
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'd = ''infinity''');
SELECT m_diff('mg_t', 'mb_t', 'o, d', 'o = 17 AND d > ''2000-06-01''::timestamp', false);
SELECT m_ord('mg_t', 'mb_t', 'o, d', 'true', 'o NULLS FIRST, d', 300);
SELECT m_ord('mg_t', 'mb_t', 'o, d', 'true', 'o DESC NULLS LAST, d DESC', 300);
-- time, timestamp
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'tm = ''12:00''');
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'tm = ''24:00''');
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'tm = ''00:00'' AND ts < ''2020-01-02''');
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'tm BETWEEN ''10:00'' AND ''11:00'' AND ts >= ''2020-01-05''');
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'tm = ''24:00'' AND ts = ''infinity''');
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'ts = ''-infinity''');
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'tm IS NULL');
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'tm = ''12:00'' AND ts >= ''2020-01-03''::date', false);
SELECT m_diff('mg_t', 'mb_t', 'tm, ts', 'tm = ''12:00'' AND ts >= ''2020-01-03 00:00+00''::timestamptz', false);
SELECT m_ord('mg_t', 'mb_t', 'tm, ts', 'true', 'tm DESC NULLS LAST, ts', 300);
SELECT m_ord('mg_t', 'mb_t', 'tm, ts', 'true', 'tm NULLS FIRST, ts DESC', 300);
-- timestamptz, money
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz = ''2020-01-02 00:00+00''');
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz = ''2020-01-02 00:00+00'' AND m = ''0''');
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz >= ''2020-01-10 00:00+00'' AND tz < ''2020-01-12 00:00+00'' AND m > ''10''');
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz = ''infinity''');
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz = ''-infinity'' AND m = ''92233720368547758.07''');
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'm = ''-92233720368547758.08''');
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'm < ''-70''');
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz IS NULL AND m IS NOT NULL');
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz >= ''2020-01-03''::date AND tz < ''2020-01-05''::date', false);
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz = ''2020-01-02''::date', false);
SELECT m_diff('mg_t', 'mb_t', 'tz, m', 'tz = ''2020-01-02 00:00''::timestamp', false);
SELECT m_ord('mg_t', 'mb_t', 'tz, m', 'true', 'tz, m DESC', 300);
SELECT m_ord('mg_t', 'mb_t', 'tz, m', 'true', 'tz DESC, m', 300);
SELECT m_ord('mg_t', 'mb_t', 'm', 'tz = ''2020-01-02 00:00+00''', 'm DESC', 100);
SELECT m_cur('mg_t', 'mb_t', 'f4 + 0, f8 + 0', 'true', 'f4, f8 DESC');
SELECT m_cur('mg_t', 'mb_t', 'tz, m', 'tz < ''2020-01-15 00:00+00''', 'tz DESC, m', true);
-- updates that move rows between the extremes, then the checks again
SELECT m_both('UPDATE %1$I SET f4 = ''-0'', f8 = ''NaN'' WHERE mod(id, 50) = 1', 'mg_t', 'mb_t');
SELECT m_both('UPDATE %1$I SET i2 = -32768, i4 = NULL, bo = NULL, i8 = -9223372036854775808 WHERE mod(id, 50) = 2', 'mg_t', 'mb_t');
SELECT m_both('DELETE FROM %1$I WHERE mod(id, 50) = 3', 'mg_t', 'mb_t');
VACUUM mg_t, mb_t;
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f4 = 0');
SELECT m_diff('mg_t', 'mb_t', 'f4, f8', 'f8 = ''NaN''');
SELECT m_diff('mg_t', 'mb_t', 'i2, i4', 'i2 = -32768');
SELECT m_diff('mg_t', 'mb_t', 'bo, i8', 'bo IS NULL AND i8 < 0');
SELECT gbtree_check('mg_t_f4f8', true);

--
-- 6. uuid: alone, then (uuid, int4), then (int4 DESC, uuid DESC NULLS
-- FIRST), built one after the other over the same rows.  The all-zero
-- and all-one uuids, the halves' sign bits, 256 uuids differing only in
-- their last byte, a uuid repeated 2,000 times, NULLs.
--
CREATE TABLE mg_u (id int, u uuid, k int4);
INSERT INTO mg_u
SELECT g, CASE WHEN g % 211 = 0 THEN NULL ELSE md5((g % 15000)::text)::uuid END,
	   CASE WHEN g % 41 = 0 THEN NULL ELSE g % 37 - 18 END
FROM generate_series(1, 20000) g;
INSERT INTO mg_u
SELECT 20000 + g, ('12345678-1234-1234-1234-1234567890' || lpad(to_hex(g), 2, '0'))::uuid, g
FROM generate_series(0, 255) g;
INSERT INTO mg_u SELECT 21000 + g, '5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e', g % 10 FROM generate_series(1, 2000) g;
INSERT INTO mg_u VALUES
	(23001, '00000000-0000-0000-0000-000000000000', 0),
	(23002, '00000000-0000-0000-0000-000000000000', NULL),
	(23003, 'ffffffff-ffff-ffff-ffff-ffffffffffff', 2147483647),
	(23004, 'ffffffff-ffff-ffff-ffff-ffffffffffff', -2147483648),
	(23005, '7fffffff-ffff-ffff-ffff-ffffffffffff', 1),
	(23006, '80000000-0000-0000-0000-000000000000', 1),
	(23007, '00000000-0000-0000-7fff-ffffffffffff', 1),
	(23008, '00000000-0000-0000-8000-000000000000', 1),
	(23009, '00000000-0000-0000-ffff-ffffffffffff', 1),
	(23010, '00000000-0000-0001-0000-000000000000', 1),
	(23011, '00000000-0000-0000-0000-000000000001', 1),
	(23012, 'ffffffff-ffff-ffff-ffff-fffffffffffe', 1),
	(23013, NULL, NULL), (23014, NULL, NULL), (23015, NULL, 5),
	(23016, '12345678-1234-1234-1234-123456789000', 7);
CREATE TABLE mb_u (LIKE mg_u);
INSERT INTO mb_u SELECT * FROM mg_u ORDER BY id;
CREATE INDEX mg_u_x ON mg_u USING gbtree (u);
CREATE INDEX mb_u_x ON mb_u USING btree (u);
VACUUM ANALYZE mg_u, mb_u;
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ''00000000-0000-0000-0000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ''ffffffff-ffff-ffff-ffff-ffffffffffff''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ''12345678-1234-1234-1234-1234567890fe''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ''12345678-1234-1234-1234-123456789100''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u > ''12345678-1234-1234-1234-1234567890f0'' AND u < ''12345678-1234-1234-1234-123456789100''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u BETWEEN ''12345678-1234-1234-1234-123456789000'' AND ''12345678-1234-1234-1234-12345678907f''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u >= ''7fffffff-ffff-ffff-ffff-ffffffffffff'' AND u <= ''80000000-0000-0000-0000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u > ''00000000-0000-0000-7fff-ffffffffffff'' AND u < ''00000000-0000-0001-0000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u < ''00000000-0000-0000-8000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u > ''ffffffff-ffff-ffff-ffff-fffffffffffe''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u >= ''80000000-0000-0000-0000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u < ''10000000-0000-0000-0000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u IS NULL');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u IS NOT NULL AND u < ''01000000-0000-0000-0000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ANY (ARRAY[''00000000-0000-0000-0000-000000000000'', ''12345678-1234-1234-1234-123456789001'', ''12345678-1234-1234-1234-123456789001'', NULL, ''ffffffff-ffff-ffff-ffff-ffffffffffff'', md5(''77'')]::uuid[])');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ANY (''{}''::uuid[])');
-- a long array (sort.c's radix levels): every uuid of the table, scrambled,
-- with the 2000 copies of one
CREATE TABLE u_arr AS SELECT id, u FROM mb_u;
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ANY (ARRAY(SELECT u FROM u_arr ORDER BY md5(id::text)))');
DROP TABLE u_arr;
SELECT m_diff('mg_u', 'mb_u', 'u', 'u = ''00000000-0000-0000-0000-000000000000'' OR u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e'' OR u IS NULL');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u IS NOT NULL');
SELECT m_diff('mg_u', 'mb_u', 'u', 'u IS NULL');
SELECT m_ord('mg_u', 'mb_u', 'u', 'true', 'u', 500);
SELECT m_ord('mg_u', 'mb_u', 'u', 'true', 'u DESC', 500);
SELECT m_ord('mg_u', 'mb_u', 'u', 'u > ''12345678-1234-1234-1234-1234567890f0''', 'u', 50);
SELECT m_ord('mg_u', 'mb_u', 'u', 'u < ''12345678-1234-1234-1234-123456789010''', 'u DESC', 50);
SELECT m_cur('mg_u', 'mb_u', 'u', 'true', 'u');
SELECT m_cur('mg_u', 'mb_u', 'u', 'u >= ''12345678-1234-1234-1234-123456789000''', 'u DESC', true);
SET enable_seqscan = off;
SELECT m_cmp('SELECT (SELECT u FROM %1$I WHERE u IS NOT NULL ORDER BY u LIMIT 1)::text || '','' || (SELECT u FROM %1$I WHERE u IS NOT NULL ORDER BY u DESC LIMIT 1)', 'mg_u', 'mb_u');
SELECT m_cmp('SELECT u::text AS v FROM %1$I WHERE u < ''12345678-1234-1234-1234-123456789080'' ORDER BY u DESC LIMIT 1', 'mg_u', 'mb_u');
RESET enable_seqscan;
SELECT gbtree_check('mg_u_x', true);
-- (uuid, int4)
DROP INDEX mg_u_x, mb_u_x;
CREATE INDEX mg_u_uk ON mg_u USING gbtree (u, k);
CREATE INDEX mb_u_uk ON mb_u USING btree (u, k);
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e''');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e'' AND k = 3');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e'' AND k > 7');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''ffffffff-ffff-ffff-ffff-ffffffffffff'' AND k = 2147483647');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''ffffffff-ffff-ffff-ffff-ffffffffffff'' AND k < 0');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''00000000-0000-0000-0000-000000000000'' AND k IS NULL');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u IS NULL AND k = 5');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u IS NULL AND k IS NULL');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u BETWEEN ''12345678-1234-1234-1234-123456789000'' AND ''12345678-1234-1234-1234-1234567890ff'' AND k > 200');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u > ''f0000000-0000-0000-0000-000000000000'' AND k = 0');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'k = 7');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'k = ANY (''{-18,18,NULL}'') AND u < ''08000000-0000-0000-0000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e'' AND k = ANY (''{1,1,9,NULL,100}'')');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''12345678-1234-1234-1234-123456789000'' AND k = 7::int8');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''12345678-1234-1234-1234-123456789000'' AND k < 1099511627776::int8');
SELECT m_diff('mg_u', 'mb_u', 'u, k', '(u, k) > (''12345678-1234-1234-1234-1234567890fe'', 0)', false);
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e'' AND k = 3 OR u = ''00000000-0000-0000-0000-000000000000''');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u IS NOT NULL');
SELECT m_diff('mg_u', 'mb_u', 'u, k', 'u IS NULL');
SELECT m_ord('mg_u', 'mb_u', 'u, k', 'true', 'u, k', 500);
SELECT m_ord('mg_u', 'mb_u', 'u, k', 'true', 'u DESC, k DESC', 500);
SELECT m_ord('mg_u', 'mb_u', 'k', 'u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e''', 'k DESC', 300);
SELECT m_ord('mg_u', 'mb_u', 'u, k', 'u >= ''12345678-1234-1234-1234-123456789000''', 'u, k', 300);
SELECT m_cur('mg_u', 'mb_u', 'u, k', 'u >= ''5e000000-0000-0000-0000-000000000000''', 'u, k');
SELECT m_cur('mg_u', 'mb_u', 'u, k', 'u >= ''5e000000-0000-0000-0000-000000000000''', 'u DESC, k DESC', true);
-- (int4 DESC, uuid DESC NULLS FIRST)
DROP INDEX mg_u_uk, mb_u_uk;
CREATE INDEX mg_u_ku ON mg_u USING gbtree (k DESC, u DESC NULLS FIRST);
CREATE INDEX mb_u_ku ON mb_u USING btree (k DESC, u DESC NULLS FIRST);
SELECT m_diff('mg_u', 'mb_u', 'k, u', 'k = 1');
SELECT m_diff('mg_u', 'mb_u', 'k, u', 'k = 1 AND u > ''7fffffff-ffff-ffff-ffff-ffffffffffff''');
SELECT m_diff('mg_u', 'mb_u', 'k, u', 'k = 1 AND u IS NULL');
SELECT m_diff('mg_u', 'mb_u', 'k, u', 'k IS NULL');
SELECT m_diff('mg_u', 'mb_u', 'k, u', 'k > 200 AND u < ''12345678-1234-1234-1234-1234567890f0''');
SELECT m_diff('mg_u', 'mb_u', 'k, u', 'u = ''5e5e5e5e-5e5e-5e5e-5e5e-5e5e5e5e5e5e''');
SELECT m_ord('mg_u', 'mb_u', 'k, u', 'true', 'k DESC, u DESC NULLS FIRST', 300);
SELECT m_ord('mg_u', 'mb_u', 'k, u', 'true', 'k, u NULLS LAST', 300);
SELECT m_ord('mg_u', 'mb_u', 'u', 'k = 1', 'u DESC NULLS FIRST', 50);

--
-- 7. (tenant int4, ts timestamptz): the index created on the empty
-- table; rows appended in time order (every tenant's entries at the end
-- of its range), one statement a minute of data, some single-entry
-- inserts; then a batch in random order, updates, deletes, VACUUM.
--
CREATE TABLE mg_ev (id int, tenant int4, ts timestamptz, v int4);
CREATE TABLE mb_ev (LIKE mg_ev);
CREATE INDEX mg_ev_tts ON mg_ev USING gbtree (tenant, ts);
CREATE INDEX mb_ev_tts ON mb_ev USING btree (tenant, ts);
-- the empty index
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 1');
SELECT m_ord('mg_ev', 'mb_ev', 'ts', 'tenant = 1', 'ts DESC', 10);
SELECT m_cur('mg_ev', 'mb_ev', 'tenant, ts', 'true', 'tenant, ts');
SET enable_seqscan = off;
SELECT m_cmp('SELECT coalesce(max(ts)::text, ''none'') FROM %1$I WHERE tenant = 1', 'mg_ev', 'mb_ev');
RESET enable_seqscan;
DO $$
BEGIN
	FOR s IN 0..19 LOOP
		INSERT INTO mg_ev SELECT g, g % 50, timestamptz '2024-01-01 00:00+00' + g * interval '1 s', g % 7
		FROM generate_series(s * 1500 + 1, s * 1500 + 1500) g;
		INSERT INTO mb_ev SELECT g, g % 50, timestamptz '2024-01-01 00:00+00' + g * interval '1 s', g % 7
		FROM generate_series(s * 1500 + 1, s * 1500 + 1500) g;
	END LOOP;
END;
$$;
SET gbtree.insert_batch_memory = 0;
SELECT m_both('INSERT INTO %1$I SELECT g, mod(g, 50), timestamptz ''2024-01-01 00:00+00'' + g * interval ''1 s'', mod(g, 7) FROM generate_series(30001, 35000) g', 'mg_ev', 'mb_ev');
RESET gbtree.insert_batch_memory;
SELECT m_both('INSERT INTO %1$I SELECT 40000 + g, mod((g * 13), 60), timestamptz ''2023-12-31 00:00+00'' + (mod((g * 7919), 200000)) * interval ''1 s'', 0 FROM generate_series(1, 10000) g ORDER BY mod((g * 4451), 10007)', 'mg_ev', 'mb_ev');
SELECT m_both('INSERT INTO %1$I VALUES (60001, NULL, ''2024-01-01 00:00+00'', 0), (60002, 5, NULL, 0), (60003, NULL, NULL, 0), (60004, 5, ''infinity'', 0), (60005, 5, ''-infinity'', 0), (60006, -2147483648, ''2024-01-01 00:00+00'', 0), (60007, 2147483647, ''infinity'', 0)', 'mg_ev', 'mb_ev');
SELECT m_both('UPDATE %1$I SET ts = ts + interval ''1 day'' WHERE tenant = 9 AND mod(id, 3) = 0', 'mg_ev', 'mb_ev');
SELECT m_both('UPDATE %1$I SET tenant = 49 WHERE tenant = 10 AND mod(id, 3) = 1', 'mg_ev', 'mb_ev');
SELECT m_both('DELETE FROM %1$I WHERE tenant = 11', 'mg_ev', 'mb_ev');
SELECT m_both('DELETE FROM %1$I WHERE ts < ''2024-01-01 01:00+00'' AND tenant < 20', 'mg_ev', 'mb_ev');
VACUUM ANALYZE mg_ev, mb_ev;
SELECT gbtree_check('mg_ev_tts', true);
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 5');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 9');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 10');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 11');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 49 AND ts >= ''2024-01-01 03:00+00'' AND ts < ''2024-01-01 05:00+00''');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 5 AND ts > ''2024-01-01 09:00+00''');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 5 AND ts = ''infinity''');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 5 AND ts IS NULL');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IS NULL');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IN (1, 2, 3) AND ts > ''2024-01-01 08:00+00''');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant >= 55');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'ts BETWEEN ''2024-01-01 02:00+00'' AND ''2024-01-01 02:01+00''');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 5 AND ts >= ''2024-01-01''::date AND ts < ''2024-01-02''::date', false);
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', '(tenant, ts) >= (20, ''2024-01-01 05:00+00'') AND (tenant, ts) < (21, ''2024-01-01 01:00+00'')', false);
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IS NOT NULL');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IS NULL');
SELECT m_ord('mg_ev', 'mb_ev', 'ts', 'tenant = 7', 'ts DESC', 20);
SELECT m_ord('mg_ev', 'mb_ev', 'ts', 'tenant = 7', 'ts', 20);
SELECT m_ord('mg_ev', 'mb_ev', 'ts', 'tenant = 5', 'ts DESC', 20);
SELECT m_ord('mg_ev', 'mb_ev', 'ts', 'tenant = 7 AND ts < ''2024-01-01 04:00+00''', 'ts DESC', 20);
SELECT m_ord('mg_ev', 'mb_ev', 'tenant, ts', 'true', 'tenant DESC, ts DESC', 1000);
SELECT m_ord('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IN (3, 1, 2)', 'tenant, ts', 1000);
SELECT m_cur('mg_ev', 'mb_ev', 'tenant, ts', 'tenant BETWEEN 5 AND 12', 'tenant, ts');
SET enable_seqscan = off;
SELECT m_cmp('SELECT max(ts)::text FROM %1$I WHERE tenant = 5', 'mg_ev', 'mb_ev');
SELECT m_cmp('SELECT min(ts)::text FROM %1$I WHERE tenant = 9', 'mg_ev', 'mb_ev');
RESET enable_seqscan;
-- TRUNCATE, then the rows again in another order
TRUNCATE mg_ev, mb_ev;
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IS NOT NULL');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IS NULL');
SELECT m_both('INSERT INTO %1$I SELECT g, mod(g, 13), timestamptz ''2024-06-01 00:00+00'' - g * interval ''1 min'', 0 FROM generate_series(1, 20000) g', 'mg_ev', 'mb_ev');
VACUUM ANALYZE mg_ev, mb_ev;
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant = 4 AND ts > ''2024-05-20 00:00+00''');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IS NOT NULL');
SELECT m_diff('mg_ev', 'mb_ev', 'tenant, ts', 'tenant IS NULL');
SELECT m_ord('mg_ev', 'mb_ev', 'ts', 'tenant = 12', 'ts DESC', 30);

--
-- 8. (int8, int8, int8): 195 bits, four words, the int8 extremes in
-- every column.  An UNLOGGED table.
--
CREATE UNLOGGED TABLE mg_3 (id int, x int8, y int8, z int8);
INSERT INTO mg_3
SELECT g,
	   CASE WHEN g % 53 = 0 THEN NULL WHEN g % 17 = 0 THEN -9223372036854775808
			WHEN g % 19 = 0 THEN 9223372036854775807 ELSE (g % 30) - 15 END,
	   CASE WHEN g % 59 = 0 THEN NULL WHEN g % 23 = 0 THEN -9223372036854775808
			WHEN g % 29 = 0 THEN 9223372036854775807 ELSE (g::int8 * 7919) % 1000 - 500 END,
	   CASE WHEN g % 61 = 0 THEN NULL ELSE g::int8 * 1099511627776 END
FROM generate_series(1, 12000) g;
CREATE UNLOGGED TABLE mb_3 (LIKE mg_3);
INSERT INTO mb_3 SELECT * FROM mg_3 ORDER BY id;
CREATE INDEX mg_3_xyz ON mg_3 USING gbtree (x, y DESC, z);
CREATE INDEX mb_3_xyz ON mb_3 USING btree (x, y DESC, z);
VACUUM ANALYZE mg_3, mb_3;
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = 3');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = -9223372036854775808');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = 9223372036854775807 AND y = 9223372036854775807');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = -9223372036854775808 AND y = -9223372036854775808');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = 3 AND y > 0 AND z > 5000000000000000');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = 3 AND y = 9223372036854775807');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = 3 AND z IS NULL');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x IS NULL AND y IS NULL');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x BETWEEN -2 AND 2 AND y < -400');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'z = 1099511627776000');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = 0::int2 AND y = ANY (''{-9223372036854775808,9223372036854775807,NULL}''::int8[])');
SELECT m_ord('mg_3', 'mb_3', 'x, y, z', 'true', 'x, y DESC, z', 300);
SELECT m_ord('mg_3', 'mb_3', 'x, y, z', 'true', 'x DESC, y, z DESC', 300);
SELECT m_ord('mg_3', 'mb_3', 'y, z', 'x = 5', 'y DESC, z', 100);
SELECT m_cur('mg_3', 'mb_3', 'x, y, z', 'x <= 0 OR x IS NULL', 'x, y DESC, z');
SELECT m_both('INSERT INTO %1$I SELECT 20000 + g, mod(g, 3), -g, g FROM generate_series(1, 8000) g ORDER BY mod(g, 97), g', 'mg_3', 'mb_3');
SELECT m_both('UPDATE %1$I SET y = 9223372036854775807 WHERE x = 1 AND mod(id, 5) = 0', 'mg_3', 'mb_3');
SELECT m_both('DELETE FROM %1$I WHERE x = 2 AND y < -4000', 'mg_3', 'mb_3');
VACUUM mg_3, mb_3;
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = 1');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x = 2 AND y BETWEEN -5000 AND -3000');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x IS NOT NULL');
SELECT m_diff('mg_3', 'mb_3', 'x, y, z', 'x IS NULL');
SELECT gbtree_check('mg_3_xyz', true);

--
-- 9. The widest key: (uuid, int8, int4, int2, six bools), exactly 256
-- bits; equality on every column, conditions on the last ones alone.
--
CREATE TABLE mg_w (id int, u uuid, c int8, a int4, s int2,
				   b1 bool, b2 bool, b3 bool, b4 bool, b5 bool, b6 bool);
INSERT INTO mg_w
SELECT g, md5((g % 300)::text)::uuid, g % 4, (g % 5) - 2, (g % 3)::int2,
	   g % 2 = 0, g % 3 = 0, CASE WHEN g % 5 = 0 THEN NULL ELSE g % 4 = 0 END,
	   g % 7 = 0, g % 11 = 0, CASE WHEN g % 13 = 0 THEN NULL ELSE g % 6 = 0 END
FROM generate_series(1, 9000) g;
INSERT INTO mg_w VALUES
	(9001, 'ffffffff-ffff-ffff-ffff-ffffffffffff', 9223372036854775807, 2147483647, 32767, true, true, true, true, true, true),
	(9002, '00000000-0000-0000-0000-000000000000', -9223372036854775808, -2147483648, -32768, false, false, false, false, false, false),
	(9003, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(9004, 'ffffffff-ffff-ffff-ffff-ffffffffffff', 9223372036854775807, 2147483647, 32767, true, true, true, true, true, NULL);
CREATE TABLE mb_w (LIKE mg_w);
INSERT INTO mb_w SELECT * FROM mg_w ORDER BY id;
CREATE INDEX mg_w_all ON mg_w USING gbtree (u, c, a, s, b1, b2, b3, b4, b5, b6);
CREATE INDEX mb_w_all ON mb_w USING btree (u, c, a, s, b1, b2, b3, b4, b5, b6);
VACUUM ANALYZE mg_w, mb_w;
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u = md5(''7'')::uuid');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u = md5(''7'')::uuid AND c = 3 AND a = 0 AND s = 1 AND b1 = false AND b2 = false AND b3 = false AND b4 = false AND b5 = false AND b6 = false');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u = md5(''10'')::uuid AND c = 2 AND a = -2 AND s = 1 AND b1 = true AND b2 = false AND b3 IS NULL AND b4 = false AND b5 = false');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u = ''ffffffff-ffff-ffff-ffff-ffffffffffff'' AND c = 9223372036854775807 AND a = 2147483647 AND s = 32767 AND b1 = true AND b2 = true AND b3 = true AND b4 = true AND b5 = true AND b6 = true');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u = ''ffffffff-ffff-ffff-ffff-ffffffffffff'' AND b6 IS NULL');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u = ''00000000-0000-0000-0000-000000000000'' AND c = -9223372036854775808 AND a = -2147483648 AND s = -32768 AND b6 = false');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'b6 = true', false);
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'b6 IS NULL AND b3 IS NULL');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u = md5(''8'')::uuid AND c = 0 AND a > 0 AND s = ANY (''{0,2,NULL}'')');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u IS NULL');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u IS NOT NULL');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u IS NULL');
SELECT m_ord('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'true', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 500);
SELECT m_ord('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'true', 'u DESC, c DESC, a DESC, s DESC, b1 DESC, b2 DESC, b3 DESC, b4 DESC, b5 DESC, b6 DESC', 500);
-- (equalities on bool columns are btree-only index conditions: see above)
SELECT m_diff('mg_w', 'mb_w', 'b5, b6', 'u = md5(''9'')::uuid AND c = 1 AND a = 2 AND s = 0 AND b1 = false AND b2 = true AND b3 = false AND b4 = false', false);
SELECT m_both('INSERT INTO %1$I SELECT 10000 + g, md5((mod(g, 500))::text)::uuid, mod(g, 3), mod(g, 2), (mod(g, 4))::int2, mod(g, 2) = 1, true, NULL, false, mod(g, 3) = 1, mod(g, 5) = 0 FROM generate_series(1, 6000) g ORDER BY md5(g::text)', 'mg_w', 'mb_w');
VACUUM mg_w, mb_w;
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u = md5(''7'')::uuid');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u IS NOT NULL');
SELECT m_diff('mg_w', 'mb_w', 'u, c, a, s, b1, b2, b3, b4, b5, b6', 'u IS NULL');
SELECT gbtree_check('mg_w_all', true);

--
-- 10. Empty tables (a multi-column and a uuid-led index), then only
-- NULL rows.
--
CREATE TABLE mg_e (id int, a int4, b int4);
CREATE TABLE mb_e (LIKE mg_e);
CREATE INDEX mg_e_ab ON mg_e USING gbtree (a, b);
CREATE INDEX mb_e_ab ON mb_e USING btree (a, b);
CREATE TABLE mg_e2 (id int, u uuid, a int4);
CREATE TABLE mb_e2 (LIKE mg_e2);
CREATE INDEX mg_e2_ua ON mg_e2 USING gbtree (u DESC, a);
CREATE INDEX mb_e2_ua ON mb_e2 USING btree (u DESC, a);
VACUUM ANALYZE mg_e, mb_e, mg_e2, mb_e2;
SELECT m_diff('mg_e', 'mb_e', 'a, b', 'a = 1');
SELECT m_diff('mg_e', 'mb_e', 'a, b', 'a IS NULL');
SELECT m_diff('mg_e', 'mb_e', 'a, b', 'a = 1 AND b > 0');
SELECT m_diff('mg_e', 'mb_e', 'a, b', 'b > 0');
SELECT m_diff('mg_e2', 'mb_e2', 'u, a', 'u = ''00000000-0000-0000-0000-000000000000''');
SELECT m_diff('mg_e2', 'mb_e2', 'u, a', 'u IS NULL');
SELECT m_ord('mg_e', 'mb_e', 'a, b', 'true', 'a, b', 10);
SELECT m_ord('mg_e2', 'mb_e2', 'u, a', 'true', 'u DESC, a', 10);
SELECT m_ord('mg_e2', 'mb_e2', 'u, a', 'true', 'u, a DESC', 10);
SELECT m_cur('mg_e', 'mb_e', 'a, b', 'true', 'a DESC, b DESC');
SELECT m_cur('mg_e2', 'mb_e2', 'u, a', 'true', 'u DESC, a');
SET enable_seqscan = off;
SELECT m_cmp('SELECT coalesce(min(a)::text, ''none'') FROM %1$I', 'mg_e', 'mb_e');
SELECT m_cmp('SELECT coalesce((SELECT u FROM %1$I ORDER BY u DESC LIMIT 1)::text, ''none'')', 'mg_e2', 'mb_e2');
RESET enable_seqscan;
-- only NULL rows
INSERT INTO mg_e SELECT g, NULL, NULL FROM generate_series(1, 50) g;
INSERT INTO mb_e SELECT g, NULL, NULL FROM generate_series(1, 50) g;
INSERT INTO mg_e2 SELECT g, NULL, NULL FROM generate_series(1, 50) g;
INSERT INTO mb_e2 SELECT g, NULL, NULL FROM generate_series(1, 50) g;
VACUUM mg_e, mb_e, mg_e2, mb_e2;
SELECT m_diff('mg_e', 'mb_e', 'a, b', 'a IS NULL AND b IS NULL');
SELECT m_diff('mg_e', 'mb_e', 'a, b', 'a IS NOT NULL');
SELECT m_diff('mg_e', 'mb_e', 'a, b', 'a = 1 OR b = 1');
SELECT m_diff('mg_e2', 'mb_e2', 'u, a', 'u IS NULL');
SELECT m_diff('mg_e2', 'mb_e2', 'u, a', 'u IS NULL AND a IS NULL');
SELECT m_ord('mg_e', 'mb_e', 'a, b', 'true', 'a DESC, b DESC', 10);
SELECT m_ord('mg_e2', 'mb_e2', 'u, a', 'true', 'u DESC, a', 10);
SELECT gbtree_check('mg_e_ab');

-- insert batches (batch.c): entries of a transaction wait in the backend
-- and reach the leaves leaf by leaf; a scan in the transaction sees them,
-- ROLLBACK TO drops a savepoint's, an abort drops all
CREATE TABLE bg (id int, a int4, b timestamptz, u uuid, f float8);
CREATE TABLE bb (id int, a int4, b timestamptz, u uuid, f float8);
CREATE INDEX bg_ab ON bg USING gbtree (a, b DESC);
CREATE INDEX bg_u ON bg USING gbtree (u) INCLUDE (f);
CREATE INDEX bb_ab ON bb USING btree (a, b DESC);
CREATE INDEX bb_u ON bb USING btree (u) INCLUDE (f);
BEGIN;
INSERT INTO bg SELECT g, g % 97, '2020-01-01'::timestamptz + g * interval '7 min',
	CASE WHEN g % 13 = 0 THEN NULL ELSE md5(g::text)::uuid END, g FROM generate_series(1, 30000) g;
INSERT INTO bb SELECT * FROM bg;
SELECT m_diff('bg', 'bb', 'a, b', 'a = 5 AND b > ''2020-02-01''');
SAVEPOINT s1;
INSERT INTO bg SELECT g, g % 97, NULL, md5(g::text)::uuid, -g FROM generate_series(30001, 40000) g;
ROLLBACK TO s1;
INSERT INTO bg SELECT g, NULL, NULL, NULL, g FROM generate_series(40001, 40300) g;
INSERT INTO bb SELECT g, NULL, NULL, NULL, g FROM generate_series(40001, 40300) g;
SAVEPOINT s2;
INSERT INTO bg VALUES (50000, 1, 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 1);
RELEASE s2;
INSERT INTO bb VALUES (50000, 1, 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 1);
COMMIT;
BEGIN;
INSERT INTO bg SELECT g, g % 3, NULL, md5(g::text)::uuid, g FROM generate_series(60001, 70000) g;
ROLLBACK;
SELECT m_diff('bg', 'bb', 'a, b', 'a = ANY(ARRAY[1, 5, 96]) OR a IS NULL');
SELECT m_diff('bg', 'bb', 'u, f', 'u > ''c0000000-0000-0000-0000-000000000000'' OR u IS NULL');
SELECT m_ord('bg', 'bb', 'a, b', 'a BETWEEN 3 AND 4', 'a DESC, b', 50);
SELECT m_ord('bg', 'bb', 'u', 'true', 'u DESC', 20);
SELECT gbtree_check('bg_ab', true), gbtree_check('bg_u', true);

DROP SCHEMA t26 CASCADE;
