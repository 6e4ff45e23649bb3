/* gbtree--0.2--0.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION gbtree UPDATE TO '0.3'" to load this file. \quit

-- text and varchar keys under the "C" collation, as their bytes
-- (src/README, "Text keys").
CREATE OPERATOR FAMILY text_ops USING gbtree;

CREATE OPERATOR CLASS text_ops
DEFAULT FOR TYPE text USING gbtree FAMILY text_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (text, text) bttextcmp(text, text);
