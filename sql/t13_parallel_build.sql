--
-- t13_parallel_build: CREATE INDEX with parallel workers scanning the heap
-- must write exactly the index a serial build writes (page images equal
-- but for LSN and checksum), for plain, DESC, expression and partial
-- indexes, with NULLs, float nasties and heavy duplicates, also
-- CONCURRENTLY and by REINDEX; gbtree_check passes and queries agree
-- with btree.  Workers are made possible on small tables by
-- min_parallel_table_scan_size = 0.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE EXTENSION IF NOT EXISTS pageinspect;	-- needs: pageinspect
CREATE SCHEMA t13;
SET search_path = t13, public;
SET extra_float_digits = 1;
SET gbtree.device = cpu;

CREATE TABLE pb (id int, k int8, f float8);
INSERT INTO pb
SELECT i,
	   CASE WHEN i % 97 = 0 THEN NULL
			WHEN i % 11 = 0 THEN 42
			WHEN i = 5 THEN 9223372036854775807
			WHEN i = 6 THEN -9223372036854775808
			ELSE hashint4(i)::int8 * 7919 END,
	   CASE WHEN i % 89 = 0 THEN NULL
			WHEN i % 101 = 0 THEN 'NaN'::float8
			WHEN i % 103 = 0 THEN 'Infinity'::float8
			WHEN i % 107 = 0 THEN '-Infinity'::float8
			WHEN i % 109 = 0 THEN '-0'::float8
			WHEN i % 7 = 0 THEN 1.5
			ELSE hashint4(i + 1)::float8 / 3 END
FROM generate_series(1, 60000) i ORDER BY random();
DELETE FROM pb WHERE id % 13 = 0;	-- dead tuples in the heap
VACUUM ANALYZE pb;

-- pages of two indexes, LSN and checksum aside
CREATE FUNCTION same_pages(a regclass, b regclass) RETURNS text LANGUAGE sql AS $$
	SELECT CASE WHEN pg_relation_size(a) <> pg_relation_size(b) THEN 'sizes differ'
				ELSE count(*) FILTER (WHERE substr(get_raw_page(a::text, blk), 11) IS DISTINCT FROM
											 substr(get_raw_page(b::text, blk), 11)) || ' of ' ||
					 count(*) || ' pages differ' END
	FROM generate_series(0, (pg_relation_size(a) / 8192)::int - 1) blk
$$;

SET maintenance_work_mem = '256MB';
SET min_parallel_table_scan_size = 0;

SET max_parallel_maintenance_workers = 0;
CREATE INDEX pb_k_ser ON pb USING gbtree (k);
CREATE INDEX pb_f_ser ON pb USING gbtree (f DESC NULLS FIRST);
CREATE INDEX pb_e_ser ON pb USING gbtree ((k % 1000));
CREATE INDEX pb_p_ser ON pb USING gbtree (f) WHERE id % 3 = 0;
SET max_parallel_maintenance_workers = 2;
CREATE INDEX pb_k_par ON pb USING gbtree (k);
CREATE INDEX pb_f_par ON pb USING gbtree (f DESC NULLS FIRST);
CREATE INDEX pb_e_par ON pb USING gbtree ((k % 1000));
CREATE INDEX pb_p_par ON pb USING gbtree (f) WHERE id % 3 = 0;
CREATE INDEX CONCURRENTLY pb_k_cic ON pb USING gbtree (k);

SELECT same_pages('pb_k_ser', 'pb_k_par') AS k, same_pages('pb_f_ser', 'pb_f_par') AS f_desc,
	   same_pages('pb_e_ser', 'pb_e_par') AS expr, same_pages('pb_p_ser', 'pb_p_par') AS partial,
	   same_pages('pb_k_ser', 'pb_k_cic') AS concurrently;
SELECT gbtree_check(i, true) FROM unnest(ARRAY['pb_k_par', 'pb_f_par', 'pb_e_par', 'pb_p_par', 'pb_k_cic']::regclass[]) i;

REINDEX INDEX pb_k_par;
SELECT same_pages('pb_k_ser', 'pb_k_par') AS after_reindex;

-- answers against btree and a sequential scan
CREATE TABLE pb_b AS SELECT * FROM pb;
CREATE INDEX pb_b_k ON pb_b USING btree (k);
CREATE INDEX pb_b_f ON pb_b USING btree (f DESC NULLS FIRST);
DROP INDEX pb_k_ser, pb_f_ser, pb_e_ser, pb_p_ser, pb_k_cic, pb_e_par, pb_p_par;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE answers AS
SELECT 'k range' q, (SELECT count(*) || '/' || coalesce(sum(id), 0) FROM pb WHERE k BETWEEN -1000000000000 AND 5000000000000) g,
	   (SELECT count(*) || '/' || coalesce(sum(id), 0) FROM pb_b WHERE k BETWEEN -1000000000000 AND 5000000000000) b
UNION ALL
SELECT 'k = 42', (SELECT count(*) || '/' || sum(id) FROM pb WHERE k = 42),
	   (SELECT count(*) || '/' || sum(id) FROM pb_b WHERE k = 42)
UNION ALL
SELECT 'k null', (SELECT count(*) || '/' || sum(id) FROM pb WHERE k IS NULL),
	   (SELECT count(*) || '/' || sum(id) FROM pb_b WHERE k IS NULL)
UNION ALL
SELECT 'f order', (SELECT string_agg(coalesce(f::text, 'null'), ',') FROM (SELECT f FROM pb ORDER BY f DESC NULLS FIRST LIMIT 40) s),
	   (SELECT string_agg(coalesce(f::text, 'null'), ',') FROM (SELECT f FROM pb_b ORDER BY f DESC NULLS FIRST LIMIT 40) s)
UNION ALL
SELECT 'f nan/-0', (SELECT count(*) || '/' || sum(id) FROM pb WHERE f = 'NaN' OR f = 0),
	   (SELECT count(*) || '/' || sum(id) FROM pb_b WHERE f = 'NaN' OR f = 0);
SELECT q, g = b AS same FROM answers;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*) AS seqscan_k42 FROM pb WHERE k + 0 = 42;

DROP SCHEMA t13 CASCADE;
