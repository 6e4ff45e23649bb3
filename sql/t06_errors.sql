--
-- t06_errors: what gbtree refuses, with the errors btree-like access
-- methods give: types without a gbtree operator class (as keys or
-- INCLUDE columns), operator classes that do not fit, and bad
-- fillfactor values (CREATE INDEX and ALTER INDEX).  Also the operator
-- classes that are accepted when named explicitly.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t06;
SET search_path = t06, public;

SET client_min_messages = warning;

CREATE TABLE e (i2 int2, i4 int4, i8 int8, o oid, f4 float4, f8 float8, d date,
				t time, ts timestamp, tstz timestamptz, m money, b bool,
				txt text, n numeric, u uuid, iv interval, tz timetz, vc varchar(10),
				by bytea, nm name, arr int4[]);
INSERT INTO e (i4, i8, txt) SELECT g, g, g::text FROM generate_series(1, 100) g;

-- not supported: INCLUDE columns of a type gbtree cannot carry, types
-- without an operator class, text under a collation that does not order
-- by bytes (UNIQUE is: t25_unique; several columns and uuid:
-- t26_multiword; INCLUDE: t28_include; text under "C": t29_text)
-- (glibc's C.UTF-8 orders by code point, UTF-8's byte order: gbtree takes
-- it as such in a UTF8 database, t32_icu_collation, and refuses it in
-- others; sql/helpers/c_utf8.sql)
CREATE COLLATION c_utf8 (provider = libc, locale = 'C.UTF-8');
CREATE INDEX e_bad ON e USING gbtree (i4) INCLUDE (iv);
\getenv abs_srcdir PG_ABS_SRCDIR
\set c_utf8 :abs_srcdir '/sql/helpers/c_utf8.sql'
\i :c_utf8
SELECT c_utf8_index('CREATE INDEX e_bad ON e USING gbtree (txt COLLATE c_utf8)', 'e_bad'),
	c_utf8_index('CREATE INDEX e_bad ON e USING gbtree (vc COLLATE c_utf8)', 'e_bad');

-- types without a default gbtree operator class
CREATE INDEX e_bad ON e USING gbtree (iv);
CREATE INDEX e_bad ON e USING gbtree (tz);
CREATE INDEX e_bad ON e USING gbtree (by);
CREATE INDEX e_bad ON e USING gbtree (nm);
CREATE INDEX e_bad ON e USING gbtree (arr);
CREATE INDEX e_bad ON e USING gbtree ((i4 * interval '1 day'));

-- operator classes that do not exist for gbtree or do not fit the column
CREATE INDEX e_bad ON e USING gbtree (txt text_pattern_ops);
CREATE INDEX e_bad ON e USING gbtree (i4 no_such_ops);
CREATE INDEX e_bad ON e USING gbtree (i4 float8_ops);
CREATE INDEX e_bad ON e USING gbtree (i4 int8_ops);
CREATE INDEX e_bad ON e USING gbtree (ts timestamptz_ops);
CREATE INDEX e_bad ON e USING gbtree (d timestamp_ops);

-- fillfactor out of range or not an integer; unknown options
CREATE INDEX e_bad ON e USING gbtree (i4) WITH (fillfactor = 9);
CREATE INDEX e_bad ON e USING gbtree (i4) WITH (fillfactor = 101);
CREATE INDEX e_bad ON e USING gbtree (i4) WITH (fillfactor = 0);
CREATE INDEX e_bad ON e USING gbtree (i4) WITH (fillfactor = -10);
CREATE INDEX e_bad ON e USING gbtree (i4) WITH (fillfactor = 'abc');
CREATE INDEX e_bad ON e USING gbtree (i4) WITH (fillfactor);
CREATE INDEX e_bad ON e USING gbtree (i4) WITH (foo = 1);
CREATE INDEX e_bad ON e USING gbtree (i4) WITH (fillfactor = 50, fillfactor = 60);

-- nothing of the above was created
SELECT count(*) FROM pg_index WHERE indrelid = 'e'::regclass;
SELECT count(*) FROM pg_class WHERE relname = 'e_bad';

-- accepted: explicit operator classes, fillfactor bounds, sort options
CREATE INDEX e_i2 ON e USING gbtree (i2 int2_ops);
CREATE INDEX e_i4 ON e USING gbtree (i4 int4_ops DESC NULLS LAST) WITH (fillfactor = 10);
CREATE INDEX e_i8 ON e USING gbtree (i8 int8_ops) WITH (fillfactor = 100);
CREATE INDEX e_o ON e USING gbtree (o oid_ops);
CREATE INDEX e_f4 ON e USING gbtree (f4 float4_ops NULLS FIRST);
CREATE INDEX e_f8 ON e USING gbtree (f8 float8_ops DESC);
CREATE INDEX e_d ON e USING gbtree (d date_ops);
CREATE INDEX e_t ON e USING gbtree (t time_ops);
CREATE INDEX e_ts ON e USING gbtree (ts timestamp_ops);
CREATE INDEX e_tstz ON e USING gbtree (tstz timestamptz_ops);
CREATE INDEX e_m ON e USING gbtree (m money_ops);
CREATE INDEX e_b ON e USING gbtree (b bool_ops);
CREATE INDEX e_expr ON e USING gbtree ((i4 * 2)) WHERE i8 > 10;
CREATE INDEX e_len ON e USING gbtree ((length(txt)));
SELECT c.relname, pg_get_indexdef(i.indexrelid), c.reloptions
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = 'e'::regclass ORDER BY 1;

-- the operator classes and families of the extension
SELECT f.opfname AS family, c.opcname AS class, format_type(c.opcintype, NULL) AS type, c.opcdefault
FROM pg_opclass c JOIN pg_opfamily f ON f.oid = c.opcfamily
	 JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'gbtree' ORDER BY 1, 2;

-- bad fillfactor in ALTER INDEX; the index keeps its old setting
ALTER INDEX e_i8 SET (fillfactor = 5);
ALTER INDEX e_i8 SET (fillfactor = 1000);
ALTER INDEX e_i8 SET (fillfactor = 'x');
ALTER INDEX e_i8 SET (bar = 2);
SELECT reloptions FROM pg_class WHERE relname = 'e_i8';
ALTER INDEX e_i8 SET (fillfactor = 42);
SELECT reloptions FROM pg_class WHERE relname = 'e_i8';

-- the errors did not disturb the indexes
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT i8 FROM e WHERE i8 BETWEEN 10 AND 12;
SELECT i8 FROM e WHERE i8 BETWEEN 10 AND 12;
EXPLAIN (COSTS OFF) SELECT i4 FROM e WHERE i4 * 2 = 40 AND i8 > 10;
SELECT i4 FROM e WHERE i4 * 2 = 40 AND i8 > 10;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE e;

-- clean up
RESET search_path;
DROP SCHEMA t06 CASCADE;
