--
-- t50_no_skip_scan: gbtree has no skip scan.  A condition on a later
-- column of an index, with no '=' on a column before it, bounds nothing
-- there: the scan reads the whole range that the columns before it bound
-- (the whole index, where the first column has no condition) and filters
-- its entries.  From PostgreSQL 18 on, btree's estimator, which gbtree's
-- uses, prices such a condition as a skip scan (one descent a value of the
-- skipped columns); gbtree's estimate must price what it reads (cost.c).
-- Each check compares estimates of the same index, so it holds on every
-- major; the answers are compared with the btree twin's.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t50;
SET search_path = t50, public;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- a of 10 values, b distinct, c of 1,000 values; some NULLs in each
CREATE TABLE sg (id int4, a int4, b int4, c int4);
INSERT INTO sg
SELECT g,
	   CASE WHEN g % 997 = 0 THEN NULL ELSE g % 10 END,
	   CASE WHEN g % 991 = 0 THEN NULL ELSE g END,
	   CASE WHEN g % 983 = 0 THEN NULL ELSE g % 1000 END
FROM generate_series(1, 200000) g;
CREATE TABLE sb (LIKE sg);
INSERT INTO sb SELECT * FROM sg ORDER BY id;
CREATE INDEX sg_abc ON sg USING gbtree (a, b, c);
CREATE INDEX sb_abc ON sb USING btree (a, b, c);
VACUUM ANALYZE sg, sb;

-- the estimated total cost of the plan's scan of sg_abc for this query
CREATE FUNCTION scan_cost(q text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
	node json;
	todo json[];
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
	todo := ARRAY[plan -> 0 -> 'Plan'];
	WHILE cardinality(todo) > 0 LOOP
		node := todo[1];
		todo := todo[2:];
		IF node ->> 'Index Name' = 'sg_abc' THEN
			RETURN (node ->> 'Total Cost')::float8;
		END IF;
		IF node -> 'Plans' IS NOT NULL THEN
			todo := todo || ARRAY(SELECT json_array_elements(node -> 'Plans'));
		END IF;
	END LOOP;
	RAISE EXCEPTION 'no scan of sg_abc in the plan of %', q;
END;
$$;

-- the rows of sg matching cond under bitmap, index and index-only scans,
-- each against the btree twin's read by a sequential scan
CREATE FUNCTION same_rows(cond text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	qry text := 'SELECT count(*) || '':'' || coalesce(sum(a), 0) || '':'' || '
		'coalesce(sum(b), 0) || '':'' || coalesce(sum(c), 0) FROM %I WHERE %s';
	mode text;
	ref text;
	got text;
	bad text := '';
BEGIN
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	EXECUTE format(qry, 'sb', cond) INTO ref;
	FOREACH mode IN ARRAY ARRAY['bitmap', 'index', 'indexonly'] LOOP
		PERFORM set_config('enable_seqscan', 'off', true);
		PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
		PERFORM set_config('enable_indexscan', (mode <> 'bitmap')::text, true);
		PERFORM set_config('enable_indexonlyscan', (mode = 'indexonly')::text, true);
		EXECUTE format(qry, 'sg', cond) INTO got;
		IF got IS DISTINCT FROM ref THEN
			bad := bad || mode || ': ' || got || ' ';
		END IF;
	END LOOP;
	RETURN coalesce('DIFFERENT from ' || ref || ': ' || nullif(bad, ''), 'same ' || ref);
END;
$$;

-- bitmap scans only: a Bitmap Index Scan's cost is the index's estimate
-- alone (a plain index scan's adds the rows it returns)
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_bitmapscan = on;

-- the whole index (every non-NULL a), and the range of a = 3
SELECT scan_cost('SELECT * FROM sg WHERE a IS NOT NULL') AS whole \gset
SELECT scan_cost('SELECT * FROM sg WHERE a = 3') AS a3 \gset

-- no condition on a: the whole index is read, whatever b's condition is
SELECT scan_cost('SELECT * FROM sg WHERE b = 5008') >= :whole * 0.95 AS b_eq_reads_all;
SELECT scan_cost('SELECT * FROM sg WHERE b = ANY (''{5000,6000,NULL}'')') >= :whole * 0.95 AS b_any_reads_all;
SELECT scan_cost('SELECT * FROM sg WHERE b IS NULL') >= :whole * 0.95 AS b_null_reads_all;
SELECT scan_cost('SELECT * FROM sg WHERE c = 13') >= :whole * 0.95 AS c_eq_reads_all;
-- a range on a, then b: b bounds nothing inside a's range
SELECT scan_cost('SELECT * FROM sg WHERE a > 5 AND b = 5008') >=
	   scan_cost('SELECT * FROM sg WHERE a > 5') * 0.95 AS b_after_range_reads_range;
-- a = 3, nothing on b, c = 13: c bounds nothing inside a = 3
SELECT scan_cost('SELECT * FROM sg WHERE a = 3 AND c = 13') >= :a3 * 0.95 AS c_after_gap_reads_a3;
-- what does bound: b right after a's '=' (and IS NULL as '='), c after both
SELECT scan_cost('SELECT * FROM sg WHERE a = 3 AND b = 5003') < :a3 * 0.2 AS b_after_eq_bounds;
SELECT scan_cost('SELECT * FROM sg WHERE a IS NULL AND b > 100000') <
	   scan_cost('SELECT * FROM sg WHERE a IS NULL') AS b_after_null_bounds;
SELECT scan_cost('SELECT * FROM sg WHERE a = 3 AND b = 5003 AND c = 3') < :a3 * 0.2 AS c_after_eqs_bounds;

RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- the answers
SELECT same_rows('b = 5008');
SELECT same_rows('b = ANY (''{5000,6000,NULL}'')');
SELECT same_rows('b IS NULL');
SELECT same_rows('c = 13');
SELECT same_rows('a > 5 AND b = 5008');
SELECT same_rows('a = 3 AND c = 13');
SELECT same_rows('a IS NULL AND c > 500');
SELECT same_rows('a = 3 AND b = 5003');
SELECT same_rows('a = 3 AND b = 5003 AND c = 3');

-- under the default settings, a condition on b alone reads the table
-- (the index would be read whole), as btree's did before skip scan
EXPLAIN (COSTS OFF) SELECT * FROM sg WHERE b = 5008;
EXPLAIN (COSTS OFF) SELECT * FROM sg WHERE a = 3 AND c = 13;

DROP SCHEMA t50 CASCADE;
