--
-- sql/helpers/twins.sql: the functions a test uses to run the same
-- statements and queries on a gbtree table and on its btree twin, and to
-- compare what they give (included with \i; not a test of its own:
-- REGRESS takes sql/*.sql only).
--
CREATE FUNCTION tw_one(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	st text;
	msg text;
	det text;
BEGIN
	EXECUTE stmt;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN 'ok ' || n;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		det = PG_EXCEPTION_DETAIL;
	RETURN st || ' ' || msg || coalesce(' / ' || nullif(det, ''), '');
END;
$$;

CREATE FUNCTION tw_both(stmt text, g text, b text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	rg text := replace(tw_one(format(stmt, g, 'gbtree')), g, 'T');
	rb text := replace(tw_one(format(stmt, b, 'btree')), b, 'T');
BEGIN
	IF rg = rb THEN
		RETURN 'same: ' || rg;
	END IF;
	RETURN 'DIFFERENT: gbtree ' || rg || ' | btree ' || rb;
END;
$$;

-- the plan's node types, the table names written T
CREATE FUNCTION tw_shape(q text, t text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	ln text;
	r text := '';
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF ln ~ '^\s*(->\s*)?[A-Z]' THEN
			r := r || CASE WHEN r = '' THEN '' ELSE ' > ' END ||
				regexp_replace(regexp_replace(ln, '^\s*(->\s*)?', ''), '\(.*$', '');
		END IF;
	END LOOP;
	RETURN btrim(replace(r, t, 'T'));
END;
$$;

-- rows of cols matching cond on g, under each forced kind of scan, against
-- b read by a sequential scan; ordered by ord (at most lim), against b
-- under the same settings, in that order; and g's plan of each kind
-- against b's (unless plans is false)
CREATE FUNCTION tw_diff(g text, b text, cols text, cond text, ord text DEFAULT NULL,
					   lim int DEFAULT NULL, plans boolean DEFAULT true) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	qry text;
	ref text;
	got text;
	bad text := '';
	k text;
BEGIN
	-- (the rows as tw_row: a table's own column s would shadow an alias s)
	qry := 'SELECT count(*) || '':'' || coalesce(md5(string_agg(tw_row::text, '','' ' ||
		CASE WHEN ord IS NULL THEN 'ORDER BY tw_row::text COLLATE "C"' ELSE '' END ||
		')), '''') FROM (SELECT %1$s FROM %2$I WHERE %3$s' ||
		coalesce(' ORDER BY ' || ord, '') || coalesce(' LIMIT ' || lim, '') || ') tw_row';
	SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off;
	SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off;
	EXECUTE format(qry, cols, b, cond) INTO ref;
	FOREACH k IN ARRAY ARRAY['index', 'indexonly', 'bitmap'] LOOP
		IF k = 'bitmap' AND ord IS NOT NULL THEN
			CONTINUE;
		END IF;
		EXECUTE format('SET LOCAL enable_seqscan = %s', false);
		EXECUTE format('SET LOCAL enable_indexscan = %s', k IN ('index', 'indexonly'));
		EXECUTE format('SET LOCAL enable_indexonlyscan = %s', k = 'indexonly');
		EXECUTE format('SET LOCAL enable_bitmapscan = %s', k = 'bitmap');
		EXECUTE format(qry, cols, g, cond) INTO got;
		IF ord IS NOT NULL THEN
			EXECUTE format(qry, cols, b, cond) INTO ref;
		END IF;
		IF got IS DISTINCT FROM ref THEN
			bad := bad || 'rows ' || k || ' ';
		END IF;
		IF plans AND tw_shape(format(qry, cols, g, cond), g) IS DISTINCT FROM
		   tw_shape(format(qry, cols, b, cond), b) THEN
			bad := bad || 'plan ' || k || ': ' || tw_shape(format(qry, cols, g, cond), g) ||
				' | ' || tw_shape(format(qry, cols, b, cond), b) || ' ';
		END IF;
	END LOOP;
	RETURN coalesce('DIFFERENT: ' || nullif(bad, ''), 'same ' || split_part(ref, ':', 1));
END;
$$;

-- the whole table in the index's order, on both twins: rows that differ
CREATE FUNCTION tw_order(g text, b text, col text, ord text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
	EXECUTE format('SELECT count(*) FROM
		(SELECT row_number() OVER () r, x FROM (SELECT %3$s x FROM %1$I ORDER BY %4$s) q) a
		FULL JOIN
		(SELECT row_number() OVER () r, x FROM (SELECT %3$s x FROM %2$I ORDER BY %4$s) q) c
		USING (r) WHERE a.x IS DISTINCT FROM c.x', g, b, col, ord) INTO n;
	RETURN n;
END;
$$;

