-- test/bench/gpu-uuid-profile.sql: after test/gpu/device-run.sh uuidcountbench
-- (its table, keys and gbtree index kept on the warm machine), where the
-- 1M-uuid count spends its time on the GPU path: the GPU batch's own
-- timings (DEBUG1), the plan's node times, and the CPU path's time.
-- test/gpu/device-run.sh sql -f test/bench/gpu-uuid-profile.sql
\timing off
SET jit = off;
SELECT a AS arr FROM gc_keys WHERE n = 1000000 \gset
PREPARE p(uuid[]) AS SELECT count(*) FROM gc_t WHERE k = ANY($1);
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
SET client_min_messages = debug1;
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
RESET client_min_messages;
\echo node times
EXPLAIN (ANALYZE) EXECUTE p(:'arr');
\echo the CPU path for the same query
SET gbtree.device = cpu;
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
