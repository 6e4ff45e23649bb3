--
-- sql/helpers/join_twins.sql: a join or an = ANY scan run on gbtree tables
-- and on their btree twins, compared (included with \i; not a test of
-- its own).
--
-- tw_run(qg, qb, offs, node): qg (on the gbtree tables) with the settings
-- named in offs off, qb (on the btree twins) under the planner's own
-- choice; the row count, whether qg's plan has the node, and whether both
-- gave the same multiset of rows
CREATE FUNCTION tw_run(qg text, qb text, offs text[], node text,
					   OUT nrows bigint, OUT has_node boolean, OUT same boolean)
LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	ln text;
	s text;
	d1 bigint;
	d2 bigint;
	nb bigint;
BEGIN
	FOREACH s IN ARRAY offs LOOP
		PERFORM set_config(s, 'off', true);
	END LOOP;
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || qg LOOP
		plan := plan || ln || E'\n';
	END LOOP;
	has_node := plan LIKE '%' || node || '%';
	EXECUTE 'CREATE TEMP TABLE tw_rg AS ' || qg;
	FOREACH s IN ARRAY offs LOOP
		PERFORM set_config(s, 'on', true);
	END LOOP;
	EXECUTE 'CREATE TEMP TABLE tw_rb AS ' || qb;
	SELECT count(*) INTO nrows FROM tw_rg;
	SELECT count(*) INTO nb FROM tw_rb;
	SELECT count(*) INTO d1 FROM (SELECT * FROM tw_rg EXCEPT ALL SELECT * FROM tw_rb) s;
	SELECT count(*) INTO d2 FROM (SELECT * FROM tw_rb EXCEPT ALL SELECT * FROM tw_rg) s;
	same := nrows = nb AND d1 = 0 AND d2 = 0;
	DROP TABLE tw_rg;
	DROP TABLE tw_rb;
END;
$$;

-- tw_join_pair(qg, qb): tw_run of a join, the core's join methods off
-- for qg (so GbtreeJoin is its plan wherever it is offered)
CREATE FUNCTION tw_join_pair(qg text, qb text,
							 OUT nrows bigint, OUT gbtree_join boolean, OUT same boolean)
LANGUAGE sql AS $$
	SELECT * FROM tw_run(qg, qb, '{enable_hashjoin, enable_mergejoin, enable_nestloop}',
						 'GbtreeJoin')
$$;

-- tw_join(q, g, b): q with @ standing for the inner table, g or b
CREATE FUNCTION tw_join(q text, g text, b text,
						OUT nrows bigint, OUT gbtree_join boolean, OUT same boolean)
LANGUAGE sql AS $$
	SELECT * FROM tw_join_pair(replace(q, '@', g), replace(q, '@', b))
$$;

-- tw_array_pair(qg, qb): tw_run of an = ANY scan, sequential scans off
-- for qg (its plan checked for GbtreeArrayScan)
CREATE FUNCTION tw_array_pair(qg text, qb text,
							  OUT nrows bigint, OUT array_scan boolean, OUT same boolean)
LANGUAGE sql AS $$
	SELECT * FROM tw_run(qg, qb, '{enable_seqscan}', 'GbtreeArrayScan')
$$;

-- par_plan(q): 'Gather over GbtreeArrayScan' where q's plan is one, else the plan
CREATE FUNCTION par_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	ln text;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || ln || E'\n';
	END LOOP;
	RETURN CASE WHEN plan LIKE '%Gather%' AND plan LIKE '%GbtreeArrayScan%'
		THEN 'Gather over GbtreeArrayScan' ELSE plan END;
END;
$$;
