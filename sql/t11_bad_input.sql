--
-- t11_bad_input: inputs a careless or hostile user can give, each of which
-- must get a clear error with a proper SQLSTATE or btree's answer, and
-- leave nothing lost or corrupted.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
RESET client_min_messages;
\set VERBOSITY terse
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE bi_g (k int8);
CREATE TABLE bi_b (k int8);
INSERT INTO bi_g SELECT CASE WHEN g % 100 = 0 THEN NULL ELSE g % 70000 END FROM generate_series(1, 100000) g;
INSERT INTO bi_b SELECT * FROM bi_g;

-- a build with a tiny maintenance_work_mem still builds the whole index
SET maintenance_work_mem = '1MB';
CREATE INDEX bi_g_idx ON bi_g USING gbtree (k);
RESET maintenance_work_mem;
CREATE INDEX bi_b_idx ON bi_b USING btree (k);
VACUUM ANALYZE bi_g;
VACUUM ANALYZE bi_b;
SELECT gbtree_check('bi_g_idx', true);

-- arrays: 10M elements (with duplicates), NULL elements, empty, NULL
SELECT (SELECT count(*) FROM bi_g WHERE k = ANY(ARRAY(SELECT (g % 80000)::int8 FROM generate_series(1, 10000000) g)))
     = (SELECT count(*) FROM bi_b WHERE k = ANY(ARRAY(SELECT (g % 80000)::int8 FROM generate_series(1, 10000000) g)))
  AS huge_array_same;
SELECT count(*) FROM bi_g WHERE k = ANY(ARRAY[NULL, NULL]::int8[]);
SELECT count(*) FROM bi_g WHERE k = ANY('{}'::int8[]);
SELECT count(*) FROM bi_g WHERE k = ANY(NULL::int8[]);
SELECT count(*) FROM bi_g WHERE k = ANY(ARRAY[5, NULL, 7]::int8[]);
SELECT count(*) FROM bi_b WHERE k = ANY(ARRAY[5, NULL, 7]::int8[]);
SELECT count(*) FROM bi_g WHERE k < ANY(ARRAY[NULL, 3]::int8[]);
SELECT count(*) FROM bi_b WHERE k < ANY(ARRAY[NULL, 3]::int8[]);

-- comparisons with NULL, and constants outside every type's range
SELECT count(*) FROM bi_g WHERE k = NULL;
SELECT count(*) FROM bi_g WHERE k > 9223372036854775807;
SELECT count(*) FROM bi_g WHERE k < -9223372036854775808;
SELECT count(*) FROM bi_g WHERE k > 1e30;            -- numeric: not indexable, right answer
SELECT count(*) FROM bi_g WHERE k = 9223372036854775808;  -- numeric constant

-- bad GUC values and reloptions: clear errors, nothing changed
SET gbtree.simd = 'sse9';
SET gbtree.simd = '';
SHOW gbtree.simd;
CREATE INDEX ON bi_g USING gbtree (k) WITH (fillfactor = 9);
CREATE INDEX ON bi_g USING gbtree (k) WITH (fillfactor = 'full');
CREATE INDEX ON bi_g USING gbtree (k) WITH (pages_per_range = 4);
ALTER INDEX bi_g_idx SET (fillfactor = 101);
-- gbtree_check on things that are not gbtree indexes
SELECT gbtree_check('bi_b_idx');
SELECT gbtree_check('bi_g');
SELECT gbtree_check(0);

-- all still there
SELECT (SELECT count(*) FROM bi_g WHERE k >= 0) = (SELECT count(*) FROM bi_b WHERE k >= 0) AS same_after;
SELECT gbtree_check('bi_g_idx', true);
DROP TABLE bi_g, bi_b;
