--
-- Single-row inserts that change a leaf in place (wal.c,
-- gxlog_insert_inplace): every insert into a unique index is checked and
-- made alone, and without gbtree preloaded it is logged as generic WAL
-- written from the slots the insert said it would change.  Tables of each
-- persistence (logged, unlogged, temporary: the last two write no WAL),
-- one-word (int8) and two-word (uuid) keys, keys in random order so that
-- leaves fill, spread their blocks and split; each against its btree twin
-- under index, index-only and bitmap scans, with gbtree_check.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- rows of table t matching cond under each scan kind, against a
-- sequential scan of its twin: 'same' or the scan kinds that differ
CREATE FUNCTION si_diff(g text, b text, cond text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ref text;
	got text;
	bad text := '';
BEGIN
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE format('SELECT string_agg(k::text, '','' ORDER BY k::text) FROM %I WHERE %s', b, cond)
		INTO ref;
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = on;
	EXECUTE format('SELECT string_agg(k::text, '','' ORDER BY k::text) FROM %I WHERE %s', g, cond)
		INTO got;
	IF got IS DISTINCT FROM ref THEN bad := bad || ' index'; END IF;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = on;
	EXECUTE format('SELECT string_agg(k::text, '','' ORDER BY k::text) FROM (SELECT k FROM %I WHERE %s) s',
				   g, cond) INTO got;
	IF got IS DISTINCT FROM ref THEN bad := bad || ' index-only'; END IF;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_bitmapscan = on;
	EXECUTE format('SELECT string_agg(k::text, '','' ORDER BY k::text) FROM %I WHERE %s', g, cond)
		INTO got;
	IF got IS DISTINCT FROM ref THEN bad := bad || ' bitmap'; END IF;
	RETURN CASE WHEN bad = '' THEN 'same' ELSE 'DIFFERENT:' || bad END;
END;
$$;

-- twins g and b (unique indexes on k) filled one checked row at a time:
-- 6,000 keys in random order, a duplicate (refused alike), deletes, then
-- 800 keys between the old ones spread over the range, one statement
-- each, in random order; the key of x is keyexpr with # replaced by x
CREATE FUNCTION si_fill(g text, b text, keyexpr text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	t text;
	i int;
BEGIN
	FOREACH t IN ARRAY ARRAY[g, b] LOOP
		EXECUTE format('INSERT INTO %I SELECT i, %s FROM (SELECT i FROM generate_series(1, 6000) i '
					   'ORDER BY hashint4(i)) s', t, replace(keyexpr, '#', '(i * 4)'));
		BEGIN
			EXECUTE format('INSERT INTO %I SELECT 0, %s', t, replace(keyexpr, '#', '400'));
			RETURN NEXT CASE t WHEN g THEN 'gbtree' ELSE 'btree' END || ' took a duplicate';
		EXCEPTION WHEN unique_violation THEN
			RETURN NEXT CASE t WHEN g THEN 'gbtree' ELSE 'btree' END || ': 23505';
		END;
		EXECUTE format('DELETE FROM %I WHERE id %% 7 = 0', t);
		FOR i IN SELECT j FROM generate_series(1, 800) j ORDER BY hashint4(j + 7) LOOP
			EXECUTE format('INSERT INTO %I VALUES ($1, %s)', t, replace(keyexpr, '#', '(($1 * 29 % 6000) * 4 + 1)'))
				USING i;
		END LOOP;
	END LOOP;
END;
$$;

CREATE TABLE si_g_int8 (id int, k int8);
CREATE TABLE si_b_int8 (id int, k int8);
CREATE UNLOGGED TABLE si_g_int8_u (id int, k int8);
CREATE UNLOGGED TABLE si_b_int8_u (id int, k int8);
CREATE TEMP TABLE si_g_int8_t (id int, k int8);
CREATE TEMP TABLE si_b_int8_t (id int, k int8);
CREATE TABLE si_g_uuid (id int, k uuid);
CREATE TABLE si_b_uuid (id int, k uuid);
CREATE UNLOGGED TABLE si_g_uuid_u (id int, k uuid);
CREATE UNLOGGED TABLE si_b_uuid_u (id int, k uuid);
CREATE TEMP TABLE si_g_uuid_t (id int, k uuid);
CREATE TEMP TABLE si_b_uuid_t (id int, k uuid);
DO $$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['int8', 'int8_u', 'int8_t', 'uuid', 'uuid_u', 'uuid_t'] LOOP
		EXECUTE format('CREATE UNIQUE INDEX si_g_%s_k ON si_g_%s USING gbtree (k)', t, t);
		EXECUTE format('CREATE UNIQUE INDEX si_b_%s_k ON si_b_%s USING btree (k)', t, t);
	END LOOP;
END;
$$;
SELECT relname, relpersistence FROM pg_class WHERE relname LIKE 'si_g_%_k' ORDER BY 1;

SELECT si_fill('si_g_int8', 'si_b_int8', '#::int8');
SELECT si_fill('si_g_int8_u', 'si_b_int8_u', '#::int8');
SELECT si_fill('si_g_int8_t', 'si_b_int8_t', '#::int8');
SELECT si_fill('si_g_uuid', 'si_b_uuid', 'md5(#::text)::uuid');
SELECT si_fill('si_g_uuid_u', 'si_b_uuid_u', 'md5(#::text)::uuid');
SELECT si_fill('si_g_uuid_t', 'si_b_uuid_t', 'md5(#::text)::uuid');

SELECT si_diff('si_g_int8', 'si_b_int8', 'true') AS all_rows,
	   si_diff('si_g_int8', 'si_b_int8', 'k BETWEEN 4000 AND 9001') AS range,
	   si_diff('si_g_int8', 'si_b_int8', 'k IN (400, 401, 405, 23201, 23997)') AS points;
SELECT si_diff('si_g_int8_u', 'si_b_int8_u', 'true') AS all_rows,
	   si_diff('si_g_int8_u', 'si_b_int8_u', 'k BETWEEN 4000 AND 9001') AS range;
SELECT si_diff('si_g_int8_t', 'si_b_int8_t', 'true') AS all_rows,
	   si_diff('si_g_int8_t', 'si_b_int8_t', 'k BETWEEN 4000 AND 9001') AS range;
SELECT si_diff('si_g_uuid', 'si_b_uuid', 'true') AS all_rows,
	   si_diff('si_g_uuid', 'si_b_uuid',
			   'k BETWEEN ''40000000-0000-0000-0000-000000000000'' AND ''7fffffff-ffff-ffff-ffff-ffffffffffff''') AS range;
SELECT si_diff('si_g_uuid_u', 'si_b_uuid_u', 'true') AS all_rows,
	   si_diff('si_g_uuid_u', 'si_b_uuid_u',
			   'k BETWEEN ''40000000-0000-0000-0000-000000000000'' AND ''7fffffff-ffff-ffff-ffff-ffffffffffff''') AS range;
SELECT si_diff('si_g_uuid_t', 'si_b_uuid_t', 'true') AS all_rows,
	   si_diff('si_g_uuid_t', 'si_b_uuid_t',
			   'k BETWEEN ''40000000-0000-0000-0000-000000000000'' AND ''7fffffff-ffff-ffff-ffff-ffffffffffff''') AS range;
SELECT (SELECT count(*) FROM si_g_int8) AS g_int8, (SELECT count(*) FROM si_b_int8) AS b_int8,
	   (SELECT count(*) FROM si_g_uuid_t) AS g_uuid_t, (SELECT count(*) FROM si_b_uuid_t) AS b_uuid_t;
SELECT gbtree_check('si_g_int8_k'), gbtree_check('si_g_int8_u_k'), gbtree_check('si_g_int8_t_k'),
	   gbtree_check('si_g_uuid_k'), gbtree_check('si_g_uuid_u_k'), gbtree_check('si_g_uuid_t_k');

DROP TABLE si_g_int8, si_b_int8, si_g_int8_u, si_b_int8_u, si_g_int8_t, si_b_int8_t,
	si_g_uuid, si_b_uuid, si_g_uuid_u, si_b_uuid_u, si_g_uuid_t, si_b_uuid_t;
DROP FUNCTION si_diff(text, text, text), si_fill(text, text, text);
