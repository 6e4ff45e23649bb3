--
-- Operator classes and families (src/README, "Operator families").  gbtree
-- orders each type by its built-in btree order and never calls a class's
-- operators, so a family is sound only if every operator in it is the one
-- the type's default btree family has for the same types and strategy.
-- Any other operator is refused with 0A000 where it would enter the
-- catalog, by CREATE OPERATOR CLASS and ALTER OPERATOR FAMILY ... ADD
-- (gbtadjustmembers; before any check, a reversed class below returned 989
-- rows for a query whose answer is 10), and CREATE INDEX refuses a family
-- that holds one anyway (one made before that check existed).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
\set VERBOSITY default

CREATE TABLE opf (k int4);
CREATE TABLE opf_b (k int4);
INSERT INTO opf SELECT g FROM generate_series(1, 1000) g;
INSERT INTO opf_b SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX opf_b_k ON opf_b (k);

-- 1. A reversed order: "<" is >, and so on.
CREATE FUNCTION opf_rev_cmp(int4, int4) RETURNS int4 LANGUAGE sql IMMUTABLE
	AS 'SELECT btint4cmp($2, $1)';
CREATE OPERATOR CLASS int4_rev_ops FOR TYPE int4 USING gbtree AS
	OPERATOR 1 >, OPERATOR 2 >=, OPERATOR 3 =, OPERATOR 4 <=, OPERATOR 5 <,
	FUNCTION 1 opf_rev_cmp(int4, int4);
SELECT count(*) FROM pg_opclass WHERE opcname = 'int4_rev_ops';
-- an operator for a strategy gbtree does not have
CREATE OPERATOR CLASS int4_six_ops FOR TYPE int4 USING gbtree AS
	OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
	OPERATOR 6 <>, FUNCTION 1 btint4cmp(int4, int4);

-- 2. A class of the user's that names btree's own operators is sound, and
-- answers as btree does, in both directions.
CREATE OPERATOR CLASS int4_copy_ops FOR TYPE int4 USING gbtree AS
	OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
	FUNCTION 1 btint4cmp(int4, int4);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'int4_copy_ops';
CREATE INDEX opf_copy ON opf USING gbtree (k int4_copy_ops);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM opf WHERE k > 990 ORDER BY k DESC;
SELECT array_agg(k) = (SELECT array_agg(k ORDER BY k DESC) FROM opf_b WHERE k > 990)
	AS same_as_btree
FROM (SELECT k FROM opf WHERE k > 990 ORDER BY k DESC) s;
SELECT count(*) FROM opf WHERE k > 990;
DROP INDEX opf_copy;
-- a family that holds a foreign operator all the same (written into the
-- catalog directly, as a family made before the check could be): CREATE
-- INDEX refuses it, and amvalidate reports it
UPDATE pg_amop SET amopopr = '<>(int4,int4)'::regoperator
WHERE amopfamily = (SELECT opcfamily FROM pg_opclass WHERE opcname = 'int4_copy_ops')
  AND amopstrategy = 1;
CREATE INDEX opf_copy ON opf USING gbtree (k int4_copy_ops);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'int4_copy_ops';
UPDATE pg_amop SET amopopr = '<(int4,int4)'::regoperator
WHERE amopfamily = (SELECT opcfamily FROM pg_opclass WHERE opcname = 'int4_copy_ops')
  AND amopstrategy = 1;
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'int4_copy_ops';

-- 3. gbtree's own family altered after the index was made: the foreign
-- operators are refused, and the index answers as before.
CREATE INDEX opf_k ON opf USING gbtree (k);
SELECT count(*) FROM opf WHERE k < 5;
-- cross-type operators swapped: "<" (int4, int8) becomes > and ">" becomes
-- <, so k > 995::int8 would be taken for k < 995
BEGIN;
ALTER OPERATOR FAMILY integer_ops USING gbtree DROP OPERATOR 1 (int4, int8), OPERATOR 5 (int4, int8);
ALTER OPERATOR FAMILY integer_ops USING gbtree ADD OPERATOR 1 > (int4, int8), OPERATOR 5 < (int4, int8);
SELECT count(*) FROM opf WHERE k > 995::int8;
ROLLBACK;
SELECT count(*) FROM opf WHERE k > 995::int8;
-- an operator for a type pair gbtree cannot compare
CREATE FUNCTION opf_int4_lt_text(int4, text) RETURNS bool LANGUAGE sql IMMUTABLE
	AS 'SELECT $1::text < $2';
CREATE OPERATOR ##< (LEFTARG = int4, RIGHTARG = text, FUNCTION = opf_int4_lt_text);
BEGIN;
ALTER OPERATOR FAMILY integer_ops USING gbtree ADD OPERATOR 1 ##< (int4, text);
SELECT count(*) FROM opf WHERE k < 5;
ROLLBACK;
SELECT count(*) FROM opf WHERE k < 5;
DROP OPERATOR ##< (int4, text);
DROP FUNCTION opf_int4_lt_text(int4, text);

-- gbtree's own classes all pass amvalidate
SELECT opcname, amvalidate(c.oid)
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'gbtree' AND opcname NOT IN ('int4_rev_ops', 'int4_copy_ops')
ORDER BY opcname;

RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE opf, opf_b;
DROP OPERATOR CLASS int4_copy_ops USING gbtree;
DROP OPERATOR FAMILY int4_copy_ops USING gbtree;
DROP FUNCTION opf_rev_cmp(int4, int4);
