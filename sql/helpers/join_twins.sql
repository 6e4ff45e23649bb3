--
-- sql/helpers/join_twins.sql: a join run on a gbtree table and on its
-- btree twin, compared (included with \i; not a test of its own).
--
-- q with @ standing for the inner table of a join: run on g with the
-- core's join methods off (so GbtreeJoin is the plan wherever it is
-- offered), then on b with the planner's own choice; the row count,
-- whether g's plan is GbtreeJoin, and whether both gave the same multiset
-- of rows
CREATE FUNCTION tw_join(q text, g text, b text,
						OUT nrows bigint, OUT gbtree_join boolean, OUT same boolean)
LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	ln text;
	d1 bigint;
	d2 bigint;
	nb bigint;
BEGIN
	PERFORM set_config('enable_hashjoin', 'off', true);
	PERFORM set_config('enable_mergejoin', 'off', true);
	PERFORM set_config('enable_nestloop', 'off', true);
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || replace(q, '@', g) LOOP
		plan := plan || ln || E'\n';
	END LOOP;
	gbtree_join := plan LIKE '%GbtreeJoin%';
	EXECUTE 'CREATE TEMP TABLE tw_rg AS ' || replace(q, '@', g);
	PERFORM set_config('enable_hashjoin', 'on', true);
	PERFORM set_config('enable_mergejoin', 'on', true);
	PERFORM set_config('enable_nestloop', 'on', true);
	EXECUTE 'CREATE TEMP TABLE tw_rb AS ' || replace(q, '@', b);
	SELECT count(*) INTO nrows FROM tw_rg;
	SELECT count(*) INTO nb FROM tw_rb;
	SELECT count(*) INTO d1 FROM (SELECT * FROM tw_rg EXCEPT ALL SELECT * FROM tw_rb) s;
	SELECT count(*) INTO d2 FROM (SELECT * FROM tw_rb EXCEPT ALL SELECT * FROM tw_rg) s;
	same := nrows = nb AND d1 = 0 AND d2 = 0;
	DROP TABLE tw_rg;
	DROP TABLE tw_rb;
END;
$$;
