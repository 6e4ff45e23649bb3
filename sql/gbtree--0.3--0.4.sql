/* gbtree--0.3--0.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION gbtree UPDATE TO '0.4'" to load this file. \quit

-- numeric keys with a declared scale, as order-preserving bytes
-- (src/README, "numeric keys").
CREATE OPERATOR FAMILY numeric_ops USING gbtree;

CREATE OPERATOR CLASS numeric_ops
DEFAULT FOR TYPE numeric USING gbtree FAMILY numeric_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (numeric, numeric) numeric_cmp(numeric, numeric);
