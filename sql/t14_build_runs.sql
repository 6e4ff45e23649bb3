--
-- t14_build_runs: CREATE INDEX with more entries than maintenance_work_mem
-- holds (or than gbtree.build_run_size, the testing knob): every
-- participant sorts what it holds and spills it as a run, and the runs are
-- merged on the way to the pages (groups of runs merged first when there
-- are more than the merge fan-in).  The index must be exactly the one an
-- in-memory build writes (page images equal but for LSN and checksum), for
-- serial and parallel builds, with NULLs (their own runs), float nasties,
-- heavy duplicates split across runs, DESC, CONCURRENTLY and REINDEX; then
-- gbtree_check passes and answers equal btree's.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE EXTENSION IF NOT EXISTS pageinspect;	-- needs: pageinspect
CREATE SCHEMA t14;
SET search_path = t14, public;
SET extra_float_digits = 1;
SET gbtree.device = cpu;

CREATE TABLE br (id int, k int8, f float8);
INSERT INTO br
SELECT i,
	   CASE WHEN i % 7 = 0 THEN NULL
			WHEN i % 11 = 0 THEN 42
			WHEN i = 5 THEN 9223372036854775807
			WHEN i = 6 THEN -9223372036854775808
			ELSE hashint4(i)::int8 * 7919 END,
	   CASE WHEN i % 89 = 0 THEN NULL
			WHEN i % 101 = 0 THEN 'NaN'::float8
			WHEN i % 103 = 0 THEN 'Infinity'::float8
			WHEN i % 107 = 0 THEN '-Infinity'::float8
			WHEN i % 109 = 0 THEN '-0'::float8
			WHEN i % 5 = 0 THEN 1.5
			ELSE hashint4(i + 1)::float8 / 3 END
FROM generate_series(1, 100000) i ORDER BY random();
DELETE FROM br WHERE id % 13 = 0;	-- dead tuples in the heap
VACUUM ANALYZE br;

CREATE FUNCTION same_pages(a regclass, b regclass) RETURNS text LANGUAGE sql AS $$
	SELECT CASE WHEN pg_relation_size(a) <> pg_relation_size(b) THEN 'sizes differ'
				ELSE count(*) FILTER (WHERE substr(get_raw_page(a::text, blk), 11) IS DISTINCT FROM
											 substr(get_raw_page(b::text, blk), 11)) || ' of ' ||
					 count(*) || ' pages differ' END
	FROM generate_series(0, (pg_relation_size(a) / 8192)::int - 1) blk
$$;

-- the reference: serial, everything in memory
SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '256MB';
CREATE INDEX br_k_mem ON br USING gbtree (k);
CREATE INDEX br_f_mem ON br USING gbtree (f DESC NULLS FIRST);

-- serial, 1MB of maintenance_work_mem: 32768 entries in memory, 3 runs
SET maintenance_work_mem = '1MB';
CREATE INDEX br_k_mwm ON br USING gbtree (k);
CREATE INDEX br_f_mwm ON br USING gbtree (f DESC NULLS FIRST);
RESET maintenance_work_mem;
-- serial, runs of 500 entries: about 190 runs, merged in groups first
SET gbtree.build_run_size = 500;
CREATE INDEX br_k_small ON br USING gbtree (k);
RESET gbtree.build_run_size;
SELECT same_pages('br_k_mem', 'br_k_mwm') AS k_mwm, same_pages('br_f_mem', 'br_f_mwm') AS f_mwm,
	   same_pages('br_k_mem', 'br_k_small') AS k_small;

-- parallel: workers spill runs into the shared file set, the leader
-- merges them with its own; with 40000 per participant some of them
-- may hold everything (the leader sorts those into runs itself)
SET maintenance_work_mem = '256MB';
SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
SET gbtree.build_run_size = 3000;
CREATE INDEX br_k_par ON br USING gbtree (k);
CREATE INDEX br_f_par ON br USING gbtree (f DESC NULLS FIRST);
SET gbtree.build_run_size = 40000;
CREATE INDEX br_k_mix ON br USING gbtree (k);
SET gbtree.build_run_size = 2000;
CREATE INDEX CONCURRENTLY br_k_cic ON br USING gbtree (k);
SELECT same_pages('br_k_mem', 'br_k_par') AS k_par, same_pages('br_f_mem', 'br_f_par') AS f_par,
	   same_pages('br_k_mem', 'br_k_mix') AS k_mix, same_pages('br_k_mem', 'br_k_cic') AS k_cic;
REINDEX INDEX br_k_mem;
RESET gbtree.build_run_size;
SELECT same_pages('br_k_mwm', 'br_k_mem') AS after_reindex;
SELECT i AS index, gbtree_check(i, true) FROM unnest(ARRAY['br_k_mwm', 'br_f_mwm', 'br_k_small',
	'br_k_par', 'br_f_par', 'br_k_mix', 'br_k_cic', 'br_k_mem']::regclass[]) i;

-- answers against btree
CREATE TABLE br_b AS SELECT * FROM br;
CREATE INDEX br_b_k ON br_b USING btree (k);
CREATE INDEX br_b_f ON br_b USING btree (f DESC NULLS FIRST);
DROP INDEX br_k_mwm, br_f_mwm, br_k_small, br_k_par, br_k_mix, br_k_cic, br_f_mem;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT 'k = 42' q, (SELECT count(*) || '/' || sum(id) FROM br WHERE k = 42) =
				   (SELECT count(*) || '/' || sum(id) FROM br_b WHERE k = 42) AS same
UNION ALL
SELECT 'k null', (SELECT count(*) || '/' || sum(id) FROM br WHERE k IS NULL) =
				 (SELECT count(*) || '/' || sum(id) FROM br_b WHERE k IS NULL)
UNION ALL
SELECT 'k range', (SELECT count(*) || '/' || sum(id) FROM br WHERE k BETWEEN -1000000000000 AND 5000000000000) =
				  (SELECT count(*) || '/' || sum(id) FROM br_b WHERE k BETWEEN -1000000000000 AND 5000000000000)
UNION ALL
SELECT 'f order', (SELECT string_agg(coalesce(f::text, 'null'), ',') FROM (SELECT f FROM br ORDER BY f DESC NULLS FIRST LIMIT 60) s) =
				  (SELECT string_agg(coalesce(f::text, 'null'), ',') FROM (SELECT f FROM br_b ORDER BY f DESC NULLS FIRST LIMIT 60) s);
RESET enable_seqscan;
RESET enable_bitmapscan;

DROP SCHEMA t14 CASCADE;
