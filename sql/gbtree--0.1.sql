/* gbtree--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gbtree" to load this file. \quit

CREATE FUNCTION gbtree_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE ACCESS METHOD gbtree TYPE INDEX HANDLER gbtree_handler;
COMMENT ON ACCESS METHOD gbtree IS 'B-tree with SIMD (and GPU) batched search';

-- Operator classes use the built-in comparison operators and btree
-- comparison functions, so the planner maps them onto btree's sort
-- orderings (ORDER BY, merge joins, min/max) exactly as for btree.

CREATE OPERATOR FAMILY integer_ops USING gbtree;

CREATE OPERATOR CLASS int2_ops
DEFAULT FOR TYPE int2 USING gbtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint2cmp(int2, int2);

CREATE OPERATOR CLASS int4_ops
DEFAULT FOR TYPE int4 USING gbtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint4cmp(int4, int4);

CREATE OPERATOR CLASS int8_ops
DEFAULT FOR TYPE int8 USING gbtree FAMILY integer_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 btint8cmp(int8, int8);

ALTER OPERATOR FAMILY integer_ops USING gbtree ADD
	OPERATOR 1 < (int2, int4),
	OPERATOR 2 <= (int2, int4),
	OPERATOR 3 = (int2, int4),
	OPERATOR 4 >= (int2, int4),
	OPERATOR 5 > (int2, int4),
	FUNCTION 1 (int2, int4) btint24cmp(int2, int4),
	OPERATOR 1 < (int2, int8),
	OPERATOR 2 <= (int2, int8),
	OPERATOR 3 = (int2, int8),
	OPERATOR 4 >= (int2, int8),
	OPERATOR 5 > (int2, int8),
	FUNCTION 1 (int2, int8) btint28cmp(int2, int8),
	OPERATOR 1 < (int4, int2),
	OPERATOR 2 <= (int4, int2),
	OPERATOR 3 = (int4, int2),
	OPERATOR 4 >= (int4, int2),
	OPERATOR 5 > (int4, int2),
	FUNCTION 1 (int4, int2) btint42cmp(int4, int2),
	OPERATOR 1 < (int4, int8),
	OPERATOR 2 <= (int4, int8),
	OPERATOR 3 = (int4, int8),
	OPERATOR 4 >= (int4, int8),
	OPERATOR 5 > (int4, int8),
	FUNCTION 1 (int4, int8) btint48cmp(int4, int8),
	OPERATOR 1 < (int8, int2),
	OPERATOR 2 <= (int8, int2),
	OPERATOR 3 = (int8, int2),
	OPERATOR 4 >= (int8, int2),
	OPERATOR 5 > (int8, int2),
	FUNCTION 1 (int8, int2) btint82cmp(int8, int2),
	OPERATOR 1 < (int8, int4),
	OPERATOR 2 <= (int8, int4),
	OPERATOR 3 = (int8, int4),
	OPERATOR 4 >= (int8, int4),
	OPERATOR 5 > (int8, int4),
	FUNCTION 1 (int8, int4) btint84cmp(int8, int4);

CREATE OPERATOR FAMILY float_ops USING gbtree;

CREATE OPERATOR CLASS float4_ops
DEFAULT FOR TYPE float4 USING gbtree FAMILY float_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (float4, float4) btfloat4cmp(float4, float4);

CREATE OPERATOR CLASS float8_ops
DEFAULT FOR TYPE float8 USING gbtree FAMILY float_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (float8, float8) btfloat8cmp(float8, float8);

ALTER OPERATOR FAMILY float_ops USING gbtree ADD
	OPERATOR 1 < (float4, float8),
	OPERATOR 2 <= (float4, float8),
	OPERATOR 3 = (float4, float8),
	OPERATOR 4 >= (float4, float8),
	OPERATOR 5 > (float4, float8),
	FUNCTION 1 (float4, float8) btfloat48cmp(float4, float8),
	OPERATOR 1 < (float8, float4),
	OPERATOR 2 <= (float8, float4),
	OPERATOR 3 = (float8, float4),
	OPERATOR 4 >= (float8, float4),
	OPERATOR 5 > (float8, float4),
	FUNCTION 1 (float8, float4) btfloat84cmp(float8, float4);

CREATE OPERATOR FAMILY oid_ops USING gbtree;

CREATE OPERATOR CLASS oid_ops
DEFAULT FOR TYPE oid USING gbtree FAMILY oid_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (oid, oid) btoidcmp(oid, oid);

CREATE OPERATOR FAMILY date_ops USING gbtree;

CREATE OPERATOR CLASS date_ops
DEFAULT FOR TYPE date USING gbtree FAMILY date_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (date, date) date_cmp(date, date);

CREATE OPERATOR FAMILY time_ops USING gbtree;

CREATE OPERATOR CLASS time_ops
DEFAULT FOR TYPE time USING gbtree FAMILY time_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (time, time) time_cmp(time, time);

CREATE OPERATOR FAMILY timestamp_ops USING gbtree;

CREATE OPERATOR CLASS timestamp_ops
DEFAULT FOR TYPE timestamp USING gbtree FAMILY timestamp_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (timestamp, timestamp) timestamp_cmp(timestamp, timestamp);

CREATE OPERATOR FAMILY timestamptz_ops USING gbtree;

CREATE OPERATOR CLASS timestamptz_ops
DEFAULT FOR TYPE timestamptz USING gbtree FAMILY timestamptz_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (timestamptz, timestamptz) timestamptz_cmp(timestamptz, timestamptz);

CREATE OPERATOR FAMILY money_ops USING gbtree;

CREATE OPERATOR CLASS money_ops
DEFAULT FOR TYPE money USING gbtree FAMILY money_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (money, money) cash_cmp(money, money);

CREATE OPERATOR FAMILY bool_ops USING gbtree;

CREATE OPERATOR CLASS bool_ops
DEFAULT FOR TYPE bool USING gbtree FAMILY bool_ops AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 (bool, bool) btboolcmp(bool, bool);

-- Structural verification in the spirit of amcheck's bt_index_check.
CREATE FUNCTION gbtree_check(index regclass, heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT PARALLEL RESTRICTED;

REVOKE ALL ON FUNCTION gbtree_check(regclass, boolean) FROM PUBLIC;

-- The GPU path: service state, device, statistics and device copies.
CREATE FUNCTION gbtree_device_info(OUT name text, OUT value text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gbtree_device_info'
LANGUAGE C STRICT VOLATILE;
