/* gbtree--0.1--0.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION gbtree UPDATE TO '0.2'" to load this file. \quit

-- uuid keys: two words a key (src/README, "Multi-word keys").
CREATE OPERATOR FAMILY uuid_ops USING gbtree;

CREATE OPERATOR CLASS uuid_ops
DEFAULT FOR TYPE uuid USING gbtree FAMILY uuid_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (uuid, uuid) uuid_cmp(uuid, uuid);
