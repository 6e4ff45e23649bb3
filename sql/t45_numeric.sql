--
-- t45_numeric: numeric keys (src/README, "numeric keys").  A numeric is
-- keyed by the bytes of an order-preserving encoding (class, exponent,
-- base-10000 digits; negative values complemented and terminated), held
-- as a text's are: a field of the key's words, the rest in a tail.  Its
-- display scale comes back from the column's declared one, so a numeric
-- column with a declared one returns it from index-only scans; a bare
-- numeric is indexed without them (section 6).  Every
-- query runs on a gbtree table and on its btree twin; rows are compared
-- under forced index, index-only, bitmap and sequential scans, and the
-- plans of both under the same settings.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- the twins' functions (tw_one, tw_both, tw_shape, tw_diff, tw_order)
\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- 1. One numeric(12, 3) column: NULLs, NaN, zero, both signs, heavy
-- duplicates, the type's least and greatest, values that differ only in
-- their last digit, in their scale's last place, or by a power of 10000.
CREATE TABLE n1g (id serial, n numeric(12, 3));
CREATE TABLE n1b (id serial, n numeric(12, 3));
INSERT INTO n1g (n)
  SELECT CASE g % 13
		   WHEN 0 THEN NULL
		   WHEN 1 THEN 'NaN'
		   WHEN 2 THEN 0
		   WHEN 3 THEN 42.5
		   WHEN 4 THEN -42.5
		   WHEN 5 THEN 123456789.001 + (g % 7) * 0.001
		   WHEN 6 THEN -123456789.001 - (g % 7) * 0.001
		   WHEN 7 THEN (g % 9 - 4) * 0.001
		   WHEN 8 THEN power(10000::numeric, g % 3) * (g % 5 - 2)
		   WHEN 9 THEN CASE WHEN g % 2 = 0 THEN 999999999.999 ELSE -999999999.999 END
		   ELSE ((g * 7919) % 200001 - 100000) * 0.137
		 END
  FROM generate_series(1, 15000) g;
INSERT INTO n1b SELECT * FROM n1g ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_n ON %1$I USING %2$s (n)', 'n1g', 'n1b');
VACUUM ANALYZE n1g, n1b;
SELECT tw_diff('n1g', 'n1b', 'n', 'n = 42.5');
SELECT tw_diff('n1g', 'n1b', 'n', 'n = 42.50');
SELECT tw_diff('n1g', 'n1b', 'n', 'n = -42.5');
SELECT tw_diff('n1g', 'n1b', 'n', 'n = 0');
SELECT tw_diff('n1g', 'n1b', 'n', 'n = 0.0004');
SELECT tw_diff('n1g', 'n1b', 'n', 'n = ''NaN''');
SELECT tw_diff('n1g', 'n1b', 'n', 'n > ''NaN''');
SELECT tw_diff('n1g', 'n1b', 'n', 'n < ''NaN''');
SELECT tw_diff('n1g', 'n1b', 'n', 'n >= 999999999.999');
SELECT tw_diff('n1g', 'n1b', 'n', 'n <= -999999999.999');
SELECT tw_diff('n1g', 'n1b', 'n', 'n > -0.002 AND n < 0.002');
SELECT tw_diff('n1g', 'n1b', 'n', 'n BETWEEN 123456789.002 AND 123456789.005');
SELECT tw_diff('n1g', 'n1b', 'n', 'n BETWEEN -123456789.005 AND -123456789.002');
SELECT tw_diff('n1g', 'n1b', 'n', 'n > 10000 AND n <= 100000000');
SELECT tw_diff('n1g', 'n1b', 'n', 'n < -9999.9999');
SELECT tw_diff('n1g', 'n1b', 'n', 'n = ANY (ARRAY[0, 42.5, -42.5, NULL, ''NaN'', 1e20, -0.001, 0.0015])');
SELECT tw_diff('n1g', 'n1b', 'n', 'n IS NULL');
SELECT tw_diff('n1g', 'n1b', 'n', 'n > 1e30 OR n < -1e30');
SELECT tw_diff('n1g', 'n1b', 'n', 'true', 'n', 400);
SELECT tw_diff('n1g', 'n1b', 'n', 'n < 5', 'n DESC', 400);
SELECT tw_diff('n1g', 'n1b', 'n', 'n > -5', 'n DESC NULLS LAST', 400);
SELECT tw_order('n1g', 'n1b', 'n::text', 'n, id');
-- an array long enough for the radix sort's levels, with duplicates
CREATE TABLE n_arr AS SELECT id, n FROM n1b;
SELECT tw_diff('n1g', 'n1b', 'n', 'n = ANY (ARRAY(SELECT n FROM n_arr ORDER BY md5(id::text)))');
DROP TABLE n_arr;
-- the values come back at the column's scale (index-only scans)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT n FROM n1g WHERE n = 42.5 LIMIT 1;
SELECT n FROM n1g WHERE n < 0 ORDER BY n LIMIT 2;
SELECT n FROM n1g WHERE n > 0 AND n < 0.003 ORDER BY n LIMIT 1;
-- count(*) of index conditions (the count scan) against btree's count
EXPLAIN (COSTS OFF) SELECT count(*) FROM n1g WHERE n > -1 AND n <= 1000;
SELECT (SELECT count(*) FROM n1g WHERE n > -1 AND n <= 1000) AS g,
	   (SELECT count(*) FROM n1b WHERE n > -1 AND n <= 1000) AS b;
SELECT (SELECT count(*) FROM n1g WHERE n = ANY ('{42.5, NaN, -42.5, 0}')) AS g,
	   (SELECT count(*) FROM n1b WHERE n = ANY ('{42.5, NaN, -42.5, 0}')) AS b;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT gbtree_check('n1g_n', true);

-- 2. Writes: inserts, updates, deletes, VACUUM, REINDEX.
SELECT tw_both('INSERT INTO %1$I (n) SELECT g * 0.25 FROM generate_series(-3000, 3000) g', 'n1g', 'n1b');
SELECT tw_both('UPDATE %1$I SET n = -n WHERE n BETWEEN 100 AND 200', 'n1g', 'n1b');
SELECT tw_both('DELETE FROM %1$I WHERE n BETWEEN -50 AND -40', 'n1g', 'n1b');
SELECT tw_both('INSERT INTO %1$I (n) VALUES (''NaN''), (0.000), (-0.001), (999999999.999)', 'n1g', 'n1b');
VACUUM ANALYZE n1g, n1b;
SELECT tw_diff('n1g', 'n1b', 'n', 'n BETWEEN -200 AND 200', 'n', 500);
SELECT tw_diff('n1g', 'n1b', 'n', 'n = ''NaN'' OR n = 0');
SELECT tw_both('REINDEX INDEX %1$I_n', 'n1g', 'n1b');
SELECT tw_diff('n1g', 'n1b', 'n', 'n > -1000', 'n DESC', 300);
SELECT gbtree_check('n1g_n', true);

-- 3. Long values: numeric(1000, 400), values of hundreds of digits whose
-- keys go on in tails, equal up to their last digits; and numeric(30, 0)
-- identifiers; DESC NULLS FIRST.
CREATE TABLE l1g (id serial, x numeric(1000, 400), b numeric(30, 0));
CREATE TABLE l1b (id serial, x numeric(1000, 400), b numeric(30, 0));
INSERT INTO l1g (x, b)
  SELECT CASE g % 7
		   WHEN 0 THEN NULL
		   WHEN 1 THEN (repeat('9', 300) || '.' || repeat('1', 200) || (g % 10))::numeric
		   WHEN 2 THEN -(repeat('9', 300) || '.' || repeat('1', 200) || (g % 10))::numeric
		   WHEN 3 THEN ('0.' || repeat('0', 350) || (g % 100))::numeric
		   WHEN 4 THEN (g % 50)::numeric
		   ELSE ((g * 104729) % 1000003)::numeric / 7
		 END,
		 CASE WHEN g % 11 = 0 THEN NULL
			  ELSE 123456789012345678901234567890 - (g * 7919) % 100000 * 1000000000::numeric END
  FROM generate_series(1, 12000) g;
INSERT INTO l1b SELECT * FROM l1g ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_x ON %1$I USING %2$s (x)', 'l1g', 'l1b');
SELECT tw_both('CREATE INDEX %1$I_b ON %1$I USING %2$s (b DESC NULLS FIRST)', 'l1g', 'l1b');
VACUUM ANALYZE l1g, l1b;
SELECT tw_diff('l1g', 'l1b', 'x', 'x = (repeat(''9'', 300) || ''.'' || repeat(''1'', 200) || ''3'')::numeric');
SELECT tw_diff('l1g', 'l1b', 'x', 'x > (repeat(''9'', 300) || ''.'' || repeat(''1'', 200) || ''3'')::numeric');
SELECT tw_diff('l1g', 'l1b', 'x', 'x < -(repeat(''9'', 300) || ''.'' || repeat(''1'', 200) || ''6'')::numeric');
SELECT tw_diff('l1g', 'l1b', 'x', 'x > 0 AND x < 1e-300');
SELECT tw_diff('l1g', 'l1b', 'x', 'x BETWEEN 10 AND 20000');
SELECT tw_diff('l1g', 'l1b', 'x', 'true', 'x DESC', 200);
SELECT tw_diff('l1g', 'l1b', 'b', 'b > 123456789012345678000000000000', 'b DESC NULLS FIRST', 200);
SELECT tw_diff('l1g', 'l1b', 'b', 'b IS NULL OR b = 123456789012345678901234567890');
SELECT tw_order('l1g', 'l1b', 'x::text', 'x, id');
SELECT tw_both('INSERT INTO %1$I (x, b) SELECT x + 1, b + 1 FROM %1$I WHERE id %% 5 = 0', 'l1g', 'l1b');
SELECT tw_diff('l1g', 'l1b', 'x', 'x > 1e299', 'x', 200);
SELECT gbtree_check('l1g_x', true), gbtree_check('l1g_b', true);

-- 4. Several columns and INCLUDE: (tenant, amount), amount first and DESC,
-- an amount carried for index-only scans; row comparisons, = ANY on the
-- second column, ORDER BY on a prefix both ways; a negative scale.
CREATE TABLE m1g (id serial, t int4, a numeric(10, 2), r numeric(5, -2));
CREATE TABLE m1b (id serial, t int4, a numeric(10, 2), r numeric(5, -2));
INSERT INTO m1g (t, a, r)
  SELECT CASE WHEN g % 17 = 0 THEN NULL ELSE g % 40 END,
		 CASE WHEN g % 13 = 0 THEN NULL WHEN g % 11 = 0 THEN 'NaN'
			  ELSE ((g * 7919) % 100001 - 50000) / 100.0 END,
		 (g * 31) % 9000000
  FROM generate_series(1, 12000) g;
INSERT INTO m1b SELECT * FROM m1g ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_ta ON %1$I USING %2$s (t, a)', 'm1g', 'm1b');
SELECT tw_both('CREATE INDEX %1$I_at ON %1$I USING %2$s (a DESC, t)', 'm1g', 'm1b');
SELECT tw_both('CREATE INDEX %1$I_ti ON %1$I USING %2$s (id) INCLUDE (a, r)', 'm1g', 'm1b');
VACUUM ANALYZE m1g, m1b;
SELECT tw_diff('m1g', 'm1b', 't, a', 't = 5 AND a > 0');
SELECT tw_diff('m1g', 'm1b', 't, a', 't = 7 AND a = ANY (ARRAY[-1.5, ''NaN'', NULL, 300.07])');
-- (rows only: the planner leaves a row comparison of an index other than
-- btree's to a filter)
SELECT tw_diff('m1g', 'm1b', 't, a', '(t, a) > (20, 100.5) AND t < 23', NULL, NULL, false);
SELECT tw_diff('m1g', 'm1b', 't, a', 't BETWEEN 3 AND 4', 't DESC, a DESC', 300);
SELECT tw_diff('m1g', 'm1b', 'a, t', 'a < -400 AND a > -401');
SELECT tw_diff('m1g', 'm1b', 'a, t', 'a IS NULL OR a = ''NaN''');
SELECT tw_diff('m1g', 'm1b', 'a, t', 'a > 490', 'a DESC, t', 100);
SELECT tw_diff('m1g', 'm1b', 'id, a, r', 'id BETWEEN 100 AND 400');
SELECT tw_diff('m1g', 'm1b', 'id, a, r', 'id > 11000', 'id', 100);
SELECT gbtree_check('m1g_ta', true), gbtree_check('m1g_at', true), gbtree_check('m1g_ti', true);

-- 5. Unique: equal values of any display scale conflict, the messages are
-- btree's (the value at the column's scale), in a build, an insert, a
-- batch of one statement and an update.
CREATE TABLE u1g (n numeric(10, 2), v int);
CREATE TABLE u1b (n numeric(10, 2), v int);
SELECT tw_both('CREATE UNIQUE INDEX %1$I_n ON %1$I USING %2$s (n)', 'u1g', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (1.5, 1), (2, 2), (''NaN'', 3), (-0.01, 4)', 'u1g', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (1.50, 5)', 'u1g', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (''NaN'', 6)', 'u1g', 'u1b');
SELECT tw_both('INSERT INTO %1$I SELECT g / 4.0, g FROM generate_series(10, 20) g', 'u1g', 'u1b');
SELECT tw_both('INSERT INTO %1$I SELECT g / 2.0, g FROM generate_series(1, 6) g', 'u1g', 'u1b');
SELECT tw_both('INSERT INTO %1$I VALUES (3.001, 7)', 'u1g', 'u1b');
SELECT tw_both('UPDATE %1$I SET n = -0.010 WHERE v = 2', 'u1g', 'u1b');
SELECT tw_diff('u1g', 'u1b', 'n, v', 'true', 'n', 100);
CREATE TABLE d1g (n numeric(6, 1));
CREATE TABLE d1b (n numeric(6, 1));
INSERT INTO d1g VALUES (1), (2.25), (2.3), (4);
INSERT INTO d1b SELECT * FROM d1g;
SELECT tw_both('CREATE UNIQUE INDEX %1$I_n ON %1$I USING %2$s (n)', 'd1g', 'd1b');

-- 6. A numeric without a declared scale (a bare column, an expression):
-- its values keep display scales of their own (1.5, 1.50), which the key
-- does not hold, so no index-only scan reads it (an Index Scan where
-- btree's is an Index Only Scan: rows only); infinities, which a declared
-- scale does not allow, and long values.
CREATE TABLE b1g (id serial, n numeric, m numeric(8, 2));
CREATE TABLE b1b (id serial, n numeric, m numeric(8, 2));
INSERT INTO b1g (n, m)
  SELECT CASE g % 11
		   WHEN 0 THEN NULL
		   WHEN 1 THEN 1.5
		   WHEN 2 THEN 1.50
		   WHEN 3 THEN 1.500
		   WHEN 4 THEN 'NaN'
		   WHEN 5 THEN CASE WHEN g % 2 = 0 THEN 'Infinity'::numeric ELSE '-Infinity'::numeric END
		   WHEN 6 THEN 0.000
		   WHEN 7 THEN (g * 1e-20)::numeric
		   WHEN 8 THEN 123456789012345678901234567890.123 + g
		   ELSE round(((g * 7919) % 10007 - 5000) / 7.0, g % 5)
		 END,
		 CASE WHEN g % 13 = 0 THEN NULL ELSE ((g * 31) % 20001 - 10000) / 100.0 END
  FROM generate_series(1, 11000) g;
INSERT INTO b1b SELECT * FROM b1g ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_n ON %1$I USING %2$s (n)', 'b1g', 'b1b');
SELECT tw_both('CREATE INDEX %1$I_e ON %1$I USING %2$s ((m * 2) DESC)', 'b1g', 'b1b');
VACUUM ANALYZE b1g, b1b;
SELECT tw_diff('b1g', 'b1b', 'n', 'n = 1.5', NULL, NULL, false);
SELECT tw_diff('b1g', 'b1b', 'n', 'n = 0', NULL, NULL, false);
SELECT tw_diff('b1g', 'b1b', 'n', 'n >= ''Infinity''', NULL, NULL, false);
SELECT tw_diff('b1g', 'b1b', 'n', 'n <= ''-Infinity''', NULL, NULL, false);
SELECT tw_diff('b1g', 'b1b', 'n', 'n > 0 AND n < 1e-15', NULL, NULL, false);
SELECT tw_diff('b1g', 'b1b', 'n', 'n BETWEEN -10 AND 10', NULL, NULL, false);
SELECT tw_diff('b1g', 'b1b', 'n', 'n = ANY (ARRAY[1.50, ''NaN'', ''Infinity'', NULL, 2])', NULL, NULL, false);
SELECT tw_diff('b1g', 'b1b', 'n', 'n > 1e29', 'n', 100, false);
SELECT tw_diff('b1g', 'b1b', 'n', 'n < 100', 'n DESC', 200, false);
SELECT tw_diff('b1g', 'b1b', 'm', '(m * 2) > 150', '(m * 2) DESC', 100, false);
SELECT tw_diff('b1g', 'b1b', 'm', '(m * 2) = 3.00', NULL, NULL, false);
-- the values come from the heap, at their own scales
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM b1g WHERE n = 1.5;
SELECT n FROM b1g WHERE n = 1.5 ORDER BY id LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT gbtree_check('b1g_n', true), gbtree_check('b1g_e', true);
-- unique: 1.5 and 1.50 are one key; the message has the new row's value
CREATE TABLE v1g (n numeric);
CREATE TABLE v1b (n numeric);
SELECT tw_both('CREATE UNIQUE INDEX %1$I_n ON %1$I USING %2$s (n)', 'v1g', 'v1b');
SELECT tw_both('INSERT INTO %1$I VALUES (1.5), (''NaN''), (''Infinity''), (0.00)', 'v1g', 'v1b');
SELECT tw_both('INSERT INTO %1$I VALUES (1.500)', 'v1g', 'v1b');
SELECT tw_both('INSERT INTO %1$I VALUES (0)', 'v1g', 'v1b');
SELECT tw_both('INSERT INTO %1$I VALUES (''Infinity'')', 'v1g', 'v1b');
SELECT gbtree_check('v1g_n', true);

DROP TABLE n1g, n1b, l1g, l1b, m1g, m1b, u1g, u1b, d1g, d1b, b1g, b1b, v1g, v1b;
-- the twins' functions go, for the tests after this one
DROP FUNCTION tw_one(text), tw_both(text, text, text), tw_shape(text, text),
	tw_diff(text, text, text, text, text, int, boolean), tw_order(text, text, text, text);
