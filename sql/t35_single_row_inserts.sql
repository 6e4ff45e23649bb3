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

-- rows of table g matching cond under each scan kind, against a
-- sequential scan of its twin b: 'same' or the scan kinds that differ
CREATE FUNCTION si_diff(g text, b text, cond text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT string_agg(k::text, '','' ORDER BY k::text) FROM (SELECT k FROM %I WHERE %s) s';
	ref text;
	got text;
	kind text;
	bad text := '';
BEGIN
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE format(q, b, cond) INTO ref;
	SET LOCAL enable_seqscan = off;
	FOREACH kind IN ARRAY ARRAY['index', 'index-only', 'bitmap'] LOOP
		EXECUTE format('SET LOCAL enable_indexscan = %s', kind = 'index');
		EXECUTE format('SET LOCAL enable_indexonlyscan = %s', kind = 'index-only');
		EXECUTE format('SET LOCAL enable_bitmapscan = %s', kind = 'bitmap');
		EXECUTE format(q, g, cond) INTO got;
		IF got IS DISTINCT FROM ref THEN bad := bad || ' ' || kind; END IF;
	END LOOP;
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

-- the cases: key type (its expression, a range of its keys) and persistence
CREATE TEMP TABLE si_cases (n serial, t text, typ text, persistence text, keyexpr text, range text);
INSERT INTO si_cases (t, typ, persistence, keyexpr, range)
SELECT k.typ || v.suffix, k.typ, v.persistence, k.keyexpr, k.range
FROM (VALUES ('int8', '#::int8', 'k BETWEEN 4000 AND 9001'),
			 ('uuid', 'md5(#::text)::uuid',
			  'k BETWEEN ''40000000-0000-0000-0000-000000000000'' AND ''7fffffff-ffff-ffff-ffff-ffffffffffff''')) k(typ, keyexpr, range),
	 (VALUES (1, '', ''), (2, '_u', 'UNLOGGED'), (3, '_t', 'TEMP')) v(o, suffix, persistence)
ORDER BY k.typ, v.o;
-- the twins of each case, unique indexes on k
DO $$
DECLARE
	c record;
BEGIN
	FOR c IN SELECT * FROM si_cases ORDER BY n LOOP
		EXECUTE format('CREATE %s TABLE si_g_%s (id int, k %s)', c.persistence, c.t, c.typ);
		EXECUTE format('CREATE %s TABLE si_b_%s (id int, k %s)', c.persistence, c.t, c.typ);
		EXECUTE format('CREATE UNIQUE INDEX si_g_%s_k ON si_g_%s USING gbtree (k)', c.t, c.t);
		EXECUTE format('CREATE UNIQUE INDEX si_b_%s_k ON si_b_%s USING btree (k)', c.t, c.t);
	END LOOP;
END;
$$;
SELECT relname, relpersistence FROM pg_class WHERE relname LIKE 'si_g_%_k' ORDER BY 1;

SELECT t, si_fill('si_g_' || t, 'si_b_' || t, keyexpr) FROM si_cases ORDER BY n;
SELECT t, si_diff('si_g_' || t, 'si_b_' || t, 'true') AS all_rows,
	   si_diff('si_g_' || t, 'si_b_' || t, range) AS range,
	   gbtree_check(('si_g_' || t || '_k')::regclass)
FROM si_cases ORDER BY n;
SELECT si_diff('si_g_int8', 'si_b_int8', 'k IN (400, 401, 405, 23201, 23997)') AS points;
SELECT (SELECT count(*) FROM si_g_int8) AS g_int8, (SELECT count(*) FROM si_b_int8) AS b_int8,
	   (SELECT count(*) FROM si_g_uuid_t) AS g_uuid_t, (SELECT count(*) FROM si_b_uuid_t) AS b_uuid_t;

DROP TABLE si_g_int8, si_b_int8, si_g_int8_u, si_b_int8_u, si_g_int8_t, si_b_int8_t,
	si_g_uuid, si_b_uuid, si_g_uuid_u, si_b_uuid_u, si_g_uuid_t, si_b_uuid_t, si_cases;
DROP FUNCTION si_diff(text, text, text), si_fill(text, text, text);
