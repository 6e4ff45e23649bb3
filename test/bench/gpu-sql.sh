#!/usr/bin/env bash
# test/bench/gpu-sql.sh: the SQL-level GPU measure of issue 5 on the GPU
# machine.  SELECT count(*) FROM t WHERE k = ANY($1) (prepared, generic
# plan, index-only) with 10k, 100k and 1M existing keys in random order, on
# one int8 table of GPU_BENCH_ROWS rows (default 100M), with a btree index,
# then with a gbtree index in its place: same table, same server, same
# keys.  gbtree runs with gbtree.device = cpu and = gpu (and auto).
# Needs psql access to a server with gbtree preloaded (test/gpu/device-run.sh
# does the set-up).  Writes a markdown table to stdout and to $1.
set -u
ROWS=${GPU_BENCH_ROWS:-100000000}
REPEAT=${GPU_BENCH_REPEAT:-3}
OUTFILE=${1:-/tmp/gpu-sql.md}
# shellcheck source=test/bench/gpu-lib.sh
. "$(dirname "$0")/gpu-lib.sh"

count_table gb_t gb_keys "$ROWS"

# Plans of the timed queries.  Serial, as issue 5 measures; or parallel
# (leader + 2 workers, the default max_parallel_workers_per_gather): a
# generic plan's = ANY($1) is estimated at 10 keys, so the planner is told
# that parallel workers cost nothing to start and that rows are dear.
# With the 10-key estimate it still gathers every row into the leader
# rather than counting them in each participant (test/bench/gpu-par-trace.sh
# shows the plan).  Same settings for both engines.
SERIAL_SETTINGS="SET max_parallel_workers_per_gather = 0;"
# Bitmap plans (serial): a bitmap index scan under a bitmap heap scan,
# which for count(*) reads no heap page that the visibility map says is
# all visible and returns each TID's row without the index-only scan's
# per-row visibility-map probe.  work_mem large enough for an exact bitmap
# (1M TIDs; with the default 4MB the bitmap turns lossy and every heap
# page is read and rechecked).  Same settings for both engines.
BITMAP_SETTINGS="SET enable_bitmapscan = on; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET work_mem = '64MB';"
PAR_SETTINGS="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET min_parallel_index_scan_size = 0; SET cpu_tuple_cost = 1;"

# one EXECUTE for the count, one EXPLAIN ANALYZE EXECUTE for the time:
# prints "<count> <execution ms> <workers launched>"
run_q() {   # $1 = n keys, $2 = settings, $3 = plan settings (default serial)
    q <<EOF | awk '/^COUNT / { c = $2 } /Execution Time:/ { t = $3 } /Workers Launched:/ { w = $3 }
                   /GbtreeCount/ { p = "count" } /Index Only Scan/ && p == "" { p = "ionly" } /Bitmap Heap Scan/ && p == "" { p = "bitmap" }
                   END { print c, t, w + 0, p }'
${3:-$SERIAL_SETTINGS}
SET enable_seqscan = off; SET enable_bitmapscan = off;
SET plan_cache_mode = force_generic_plan;
$2
SELECT a AS arr FROM gb_keys WHERE n = $1 \gset
PREPARE p(int8[]) AS SELECT count(*) FROM gb_t WHERE k = ANY(\$1);
EXECUTE p(:'arr') \\gset c_
\\echo COUNT :c_count
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
EOF
}

# the plan the server picks with default settings (parallel plans allowed,
# no enable_* changes), its time and shape: prints "<ms> <plan nodes>"
run_default() {   # $1 = n keys, $2 = settings
    q <<EOF | awk '/Execution Time:/ { t = $3 } /(Scan|Gather|Aggregate)/ { sub(/^[ ->]+/, ""); sub(/  \(.*/, ""); p = p (p ? " / " : "") $0 } END { print t, p }'
SET plan_cache_mode = force_generic_plan;
$2
SELECT a AS arr FROM gb_keys WHERE n = $1 \gset
PREPARE p(int8[]) AS SELECT count(*) FROM gb_t WHERE k = ANY(\$1);
EXECUTE p(:'arr');
EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');
EOF
}
# where the time of a GPU batch goes (DEBUG1 lines of the scan)
gpu_phases() {   # $1 = n keys
    q <<EOF 2>&1 | grep -E "gbtree (GPU batch|scan of|TID scan)" | sed 's/^DEBUG: */  /'
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SET plan_cache_mode = force_generic_plan;
SET gbtree.device = gpu;
SELECT a AS arr FROM gb_keys WHERE n = $1 \gset
PREPARE p(int8[]) AS SELECT count(*) FROM gb_t WHERE k = ANY(\$1);
EXECUTE p(:'arr');
SET client_min_messages = debug1;
EXECUTE p(:'arr');
EOF
}
declare -A RES
measure() {   # $1 label, $2 settings, $3 plan settings (default serial)
    local n r cnt ms w plan vals med
    for n in 10000 100000 1000000; do
        vals=""
        for r in $(seq 1 "$REPEAT"); do
            read -r cnt ms w plan <<<"$(run_q "$n" "$2" "${3:-}")"
            vals="$vals $ms"
        done
        RES["$1,$n,plan"]=$plan
        med=$(echo "$vals" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        RES["$1,$n"]=$med
        RES["$1,$n,count"]=$cnt
        RES["$1,$n,workers"]=$w
        echo "  $1 n=$n: median ${med} ms of [$vals ] count $cnt, workers launched $w, plan $plan"
    done
}

q -c "CHECKPOINT" >/dev/null
t0=$(now); q -c "CREATE INDEX gb_t_k ON gb_t USING btree (k)"; t1=$(now)
BT_BUILD=$(sub "$t1" "$t0")
echo "btree CREATE INDEX: $BT_BUILD s, $(q -c "SELECT pg_size_pretty(pg_relation_size('gb_t_k'))")"
q -c "SELECT pg_prewarm('gb_t_k')" >/dev/null
measure btree ""
measure btree-par "" "$PAR_SETTINGS"
measure btree-bm "$BITMAP_SETTINGS"
for n in 100000 1000000; do echo "  btree default plan n=$n: $(run_default $n "")"; done
q -c "DROP INDEX gb_t_k; CHECKPOINT" >/dev/null
t0=$(now); q -c "CREATE INDEX gb_t_k ON gb_t USING gbtree (k)"; t1=$(now)
GB_BUILD=$(sub "$t1" "$t0")
echo "gbtree CREATE INDEX (default settings, gbtree.device = auto): $GB_BUILD s, $(q -c "SELECT pg_size_pretty(pg_relation_size('gb_t_k'))")"
q -c "SELECT pg_prewarm('gb_t_k')" >/dev/null
measure gbtree-cpu "SET gbtree.device = cpu;"
# first GPU use ships the whole index: time it apart
t0=$(now); run_q 10000 "SET gbtree.device = gpu;" >/dev/null; t1=$(now)
LOAD=$(sub "$t1" "$t0")
echo "first GPU query (ships the index to the device): $LOAD s"
measure gbtree-gpu "SET gbtree.device = gpu;"
measure gbtree-auto "SET gbtree.device = auto;"
# the plan before the count scan: every row through an index-only scan
measure gbtree-gpu-ionly "SET gbtree.device = gpu; SET gbtree.enable_count_scan = off;"
measure gbtree-gpu-par "SET gbtree.device = gpu; SET gbtree.enable_count_scan = off;" "$PAR_SETTINGS"
measure gbtree-gpu-bm "SET gbtree.device = gpu; $BITMAP_SETTINGS"
for n in 100000 1000000; do
    echo "  gbtree default plan n=$n: $(run_default $n "")"
    echo "  gbtree gpu default plan n=$n: $(run_default $n "SET gbtree.device = gpu;")"
done
echo "GPU batch phases, 1M keys:"
gpu_phases 1000000

{
    echo "# GPU SQL benchmark: count(*) WHERE k = ANY(\$1), $ROWS rows"
    echo
    echo "- command: \`test/gpu/device-run.sh sqlbench\` (test/bench/gpu-sql.sh, GPU_BENCH_ROWS=$ROWS, GPU_BENCH_REPEAT=$REPEAT)"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); git revision: ${GIT_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); GPU: $(q -c "SELECT value FROM gbtree_device_info() WHERE name = 'device'")"
    echo "- PostgreSQL: $(q -c 'SHOW server_version'), default settings except max_parallel_workers_per_gather = 0 in the timed sessions; the index is prewarmed"
    echo "- values: EXPLAIN (ANALYZE, TIMING OFF) execution time of a prepared generic-plan EXECUTE, median of $REPEAT; the plan is the planner's with seq and bitmap scans off: btree an index-only scan under an Aggregate, gbtree the Custom Scan (GbtreeCount) (plan column), and gbtree's index-only scan apart with gbtree.enable_count_scan = off; keys are existing keys of random rows in random order; the same key arrays for every engine"
    echo "- CREATE INDEX: btree $BT_BUILD s, gbtree $GB_BUILD s (default settings under gbtree.device = auto: on the GPU when the service is up, the values streamed to the device during the heap scan and the pages laid out there, and the index loaded onto the device as it is written); the first GPU query, which ships the index to the device unless the build left it there: $LOAD s"
    echo
    echo "| keys | btree ms | gbtree CPU ms | gbtree GPU ms | gbtree auto ms | btree / GPU | CPU / GPU | gbtree plan | gbtree GPU index-only ms | btree / GPU index-only | rows |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for n in 10000 100000 1000000; do
        b=${RES["btree,$n"]}; c=${RES["gbtree-cpu,$n"]}; g=${RES["gbtree-gpu,$n"]}; a=${RES["gbtree-auto,$n"]}; i=${RES["gbtree-gpu-ionly,$n"]}
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$n" "$b" "$c" "$g" "$a" \
            "$(div "$b" "$g")" "$(div "$c" "$g")" "${RES["gbtree-gpu,$n,plan"]}" "$i" "$(div "$b" "$i")" "${RES["btree,$n,count"]}"
    done
    echo
    echo "Parallel plans (a parallel index-only scan under a Gather, the leader and the workers the planner gives it, at most 2; $PAR_SETTINGS for both engines, and gbtree.enable_count_scan = off; gbtree splits the keys into slices that the participants claim, each one GPU batch):"
    echo
    echo "| keys | btree ms | gbtree GPU ms | btree / GPU | serial btree / parallel GPU | workers launched (btree, gbtree) |"
    echo "|---|---|---|---|---|---|"
    for n in 10000 100000 1000000; do
        bp=${RES["btree-par,$n"]}; gp=${RES["gbtree-gpu-par,$n"]}; b=${RES["btree,$n"]}
        printf "| %s | %s | %s | %s | %s | %s, %s |\n" "$n" "$bp" "$gp" "$(div "$bp" "$gp")" "$(div "$b" "$gp")" \
            "${RES["btree-par,$n,workers"]}" "${RES["gbtree-gpu-par,$n,workers"]}"
    done
    echo
    echo "Bitmap plans (serial; a bitmap index scan under a bitmap heap scan; $BITMAP_SETTINGS for both engines):"
    echo
    echo "| keys | btree ms | gbtree GPU ms | btree / GPU | serial index-only btree / bitmap GPU |"
    echo "|---|---|---|---|---|"
    for n in 10000 100000 1000000; do
        bb=${RES["btree-bm,$n"]}; gb=${RES["gbtree-gpu-bm,$n"]}; b=${RES["btree,$n"]}
        printf "| %s | %s | %s | %s | %s |\n" "$n" "$bb" "$gb" "$(div "$bb" "$gb")" "$(div "$b" "$gb")"
    done
    echo
    q -c "SELECT '- ' || name || ': ' || value FROM gbtree_device_info()"
} | tee "$OUTFILE"
for n in 10000 100000 1000000; do
    for e in gbtree-cpu gbtree-gpu gbtree-auto gbtree-gpu-ionly btree-par gbtree-gpu-par btree-bm gbtree-gpu-bm; do
        [ "${RES["$e,$n,count"]}" = "${RES["btree,$n,count"]}" ] || { echo "COUNT MISMATCH $e n=$n"; exit 1; }
    done
done
