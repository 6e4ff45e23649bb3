-- test/bench/gpu-uuid-btree-forced.sql: after test/gpu/device-run.sh uuidcountbench
-- (its table and keys kept on the warm machine), btree's forced index-only
-- plan for the 1M-key count: test/gpu/device-run.sh sql -f test/bench/gpu-uuid-btree-forced.sql
\timing off
SET jit = off;
DROP INDEX IF EXISTS gc_t_k;
\echo building btree
CREATE INDEX gc_t_kb ON gc_t USING btree (k);
SELECT a AS arr FROM gc_keys WHERE n = 1000000 \gset
PREPARE p(uuid[]) AS SELECT count(*) FROM gc_t WHERE k = ANY($1);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
RESET enable_bitmapscan;
\echo btree with bitmap scans allowed, seq scans off
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
