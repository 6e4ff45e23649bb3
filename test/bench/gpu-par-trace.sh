#!/usr/bin/env bash
# test/bench/gpu-par-trace.sh: where the time of a 1M-key = ANY count goes
# on the GPU path, serial and parallel, participant by participant: the
# plans with per-worker rows and times (EXPLAIN ANALYZE VERBOSE) and every
# participant's DEBUG1 phase lines (key preparation, each GPU batch) from
# the server log.  A diagnostic for gpu-sql.sh's parallel rows.  Needs a
# server with gbtree preloaded and its log in GPU_TRACE_LOG (default
# /tmp/pgrun.log, test/gpu/device-run.sh's); run as
#   test/gpu/device-run.sh sql -c 'SELECT 1' && test/bench/gpu-par-trace.sh
set -u
ROWS=${GPU_BENCH_ROWS:-100000000}
LOG=${GPU_TRACE_LOG:-/tmp/pgrun.log}
if [ -z "${PGHOST:-}" ] && [ -d /opt/pg15host ]; then
    # after device-run.sh: its server, without sourcing pg-up.sh again
    export PATH=/opt/pg15host/pg15/usr/lib/postgresql/15/bin:$PATH
    export LD_LIBRARY_PATH=/opt/pg15host/pg15/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PGHOST=/tmp PGPORT=5432 PGUSER=pgrun PGDATABASE=postgres
fi
# shellcheck source=test/bench/gpu-lib.sh
. "$(dirname "$0")/gpu-lib.sh"

q -c "CREATE EXTENSION IF NOT EXISTS gbtree" -c "CREATE EXTENSION IF NOT EXISTS tsm_system_rows" >/dev/null
q -c "DROP TABLE IF EXISTS gpt, gpt_keys" -c "CREATE TABLE gpt (id int8, k int8) WITH (autovacuum_enabled = off)" >/dev/null
t0=$(now)
load_rows gpt "$ROWS" "hashint8(i) # (i << 20)"
q -c "VACUUM (FREEZE, ANALYZE) gpt" >/dev/null
t1=$(now)
q -c "SET maintenance_work_mem = '4GB'" -c "CREATE INDEX gpt_k ON gpt USING gbtree (k)" >/dev/null
t2=$(now)
q -c "CREATE TABLE gpt_keys AS SELECT (SELECT array_agg(k) FROM (SELECT k FROM gpt TABLESAMPLE SYSTEM_ROWS(2000000) ORDER BY random() LIMIT 1000000) s) AS a" >/dev/null
echo "loaded and vacuumed $ROWS rows in $(sub "$t1" "$t0") s; gbtree built in $(sub "$t2" "$t1") s"
q -c "ALTER SYSTEM SET log_min_messages = debug1" -c "SELECT pg_reload_conf()" >/dev/null
sleep 1

trace() {   # $1 label, $2 settings
    local mark="gpu-par-trace $1 $(date +%s%N)"
    q -c "DO \$\$BEGIN RAISE LOG '%', '$mark'; END\$\$" >/dev/null
    echo "== $1"
    q <<EOF | grep -E "Execution Time|Workers|Worker [0-9]|actual time|Aggregate|Gather|Scan"
SET enable_seqscan = off; SET enable_bitmapscan = off;
SET plan_cache_mode = force_generic_plan;
SET gbtree.device = gpu;
$2
SELECT a AS arr FROM gpt_keys \gset
PREPARE p(int8[]) AS SELECT count(*) FROM gpt WHERE k = ANY(\$1);
EXECUTE p(:'arr');
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) EXECUTE p(:'arr');
EOF
    sleep 1
    # the phase lines of both executions, with each participant's pid
    awk -v m="$mark" 'index($0, m) { on = 1 } on' "$LOG" |
        grep -E "gbtree (scan of|GPU batch)" | sed 's/^[^[]*\[\([0-9]*\)\] DEBUG: */  [\1] /' | tail -n 80
}
trace serial "SET max_parallel_workers_per_gather = 0;"
trace "parallel (as gpu-sql.sh)" "SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET min_parallel_index_scan_size = 0; SET cpu_tuple_cost = 1;"
q -c "ALTER SYSTEM RESET log_min_messages" -c "SELECT pg_reload_conf()" >/dev/null
