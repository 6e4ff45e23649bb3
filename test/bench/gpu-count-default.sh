#!/usr/bin/env bash
# test/bench/gpu-count-default.sh: count(*) WHERE k = ANY($1) (or, with
# GPU_COUNT_SELECT, another select list, such as one that fetches rows) under
# PostgreSQL's default planner settings (issue 22 item 3): parallel query
# on (max_parallel_workers_per_gather = 2), no enable_* changes, the
# default plan_cache_mode, on one int8 table of GPU_BENCH_ROWS rows
# (default 100M) with keys spread over the whole table: btree, then
# gbtree on the same table (gbtree.device = auto, then = cpu).  Each time
# is the execution time of EXPLAIN (ANALYZE, TIMING OFF) EXECUTE of a
# prepared statement, the plan is the one the server chose, and every
# count is checked against btree's.  Needs psql access to a server with
# gbtree preloaded (test/gpu/device-run.sh countbench).  Writes a markdown
# table to stdout and to $1.
set -u
ROWS=${GPU_BENCH_ROWS:-100000000}
REPEAT=${GPU_BENCH_REPEAT:-5}
OUTFILE=${1:-/tmp/gpu-count-default.md}
# the select list: count(*), or with GPU_COUNT_SELECT="count(*), sum(id)"
# every matching row is fetched from the heap (test/gpu/device-run.sh rowsbench)
SELECT_LIST=${GPU_COUNT_SELECT:-count(*)}
# GPU_KEY_TYPE=uuid: a uuid key (gpu-lib.sh's count_table), a multi-word index
KEYTYPE=${GPU_KEY_TYPE:-int8}
# GPU_COUNT_SIZES: the array lengths measured
SIZES=${GPU_COUNT_SIZES:-10000 100000 1000000}
# GPU_BTREE_FORCED=1: btree is also measured with its index plan forced
# (enable_seqscan and enable_bitmapscan off), for where the planner gives
# it a sequential scan under the defaults
FORCED=${GPU_BTREE_FORCED:-0}
# shellcheck source=test/bench/gpu-lib.sh
. "$(dirname "$0")/gpu-lib.sh"

count_table gc_t gc_keys "$ROWS"

# REPEAT executions of one prepared count in one session, default
# settings: prints "COUNT <n>", "TIME <ms>" per execution and "PLAN <nodes>"
# of each execution
run_default() {   # $1 = n keys, $2 = settings
    local explains
    explains=$(for _ in $(seq 1 "$REPEAT"); do echo "EXPLAIN (ANALYZE, TIMING OFF) EXECUTE p(:'arr');"; done)
    q <<QUERY | awk '/^COUNT / { print } /Execution Time:/ { print "TIME", $3; print "PLAN", p; p = "" }
                     /(Scan|Gather|Aggregate)/ { sub(/^[ ->]+/, ""); sub(/  \(.*/, ""); p = p (p ? " / " : "") $0 }'
SET jit = off;
$2
SELECT a AS arr FROM gc_keys WHERE n = $1 \gset
PREPARE p($KEYTYPE[]) AS SELECT $SELECT_LIST FROM gc_t WHERE k = ANY(\$1);
PREPARE a($KEYTYPE[]) AS SELECT concat_ws('/', $SELECT_LIST) AS r FROM gc_t WHERE k = ANY(\$1);
EXECUTE a(:'arr') \gset c_
\echo COUNT :c_r
$explains
QUERY
}

declare -A RES
measure() {   # $1 label, $2 settings
    local n out
    for n in $SIZES; do
        out=$(run_default "$n" "$2")
        RES["$1,$n,count"]=$(echo "$out" | awk '/^COUNT/ { print $2 }')
        RES["$1,$n"]=$(echo "$out" | awk '/^TIME/ { print $2 }' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
        RES["$1,$n,plan"]=$(echo "$out" | awk '/^PLAN/ { sub(/^PLAN /, ""); p = $0 } END { print p }')
        echo "  $1 n=$n: median ${RES["$1,$n"]} ms of [$(echo "$out" | awk '/^TIME/ { printf "%s ", $2 }')], count ${RES["$1,$n,count"]}, plans: $(echo "$out" | awk '/^PLAN/ { sub(/^PLAN /, ""); printf "[%s] ", $0 }')"
    done
}

q -c "CREATE INDEX gc_t_k ON gc_t USING btree (k)"
echo "  index sizes: btree $(q -c "SELECT pg_size_pretty(pg_relation_size('gc_t_k'))")"
q -c "SELECT pg_prewarm('gc_t_k')" >/dev/null
measure btree ""
[ "$FORCED" = 1 ] && measure btree-forced "SET enable_seqscan = off; SET enable_bitmapscan = off;"
q -c "DROP INDEX gc_t_k"
# GPU_INDEX_WITH: the gbtree index's options, such as
# "WITH (deduplicate_items = on)" (with GPU_KEY_DUP: leaves in posting form)
q -c "CREATE INDEX gc_t_k ON gc_t USING gbtree (k) ${GPU_INDEX_WITH:-}"
echo "  index sizes: gbtree $(q -c "SELECT pg_size_pretty(pg_relation_size('gc_t_k'))")"
q -c "SELECT pg_prewarm('gc_t_k')" >/dev/null
# the first GPU query ships the index unless the build left it there
run_default 10000 "" >/dev/null
measure gbtree-auto ""
measure gbtree-cpu "SET gbtree.device = cpu;"

{
    echo "# SELECT $SELECT_LIST WHERE k = ANY(\$1) under PostgreSQL's default settings, $ROWS rows, $KEYTYPE keys"
    echo
    echo "- command: \`test/gpu/device-run.sh $( [ "$KEYTYPE" = uuid ] && echo uuid)$( [ "$SELECT_LIST" = 'count(*)' ] && echo countbench || echo rowsbench)\` (test/bench/gpu-count-default.sh, GPU_BENCH_ROWS=$ROWS, GPU_BENCH_REPEAT=$REPEAT, GPU_COUNT_SELECT='$SELECT_LIST', GPU_KEY_DUP=${GPU_KEY_DUP:-1}, GPU_KEY_TYPE=$KEYTYPE, GPU_INDEX_WITH='${GPU_INDEX_WITH:-}', GPU_COUNT_SIZES='$SIZES', GPU_BTREE_FORCED=$FORCED); gbtree index $(q -c "SELECT pg_size_pretty(pg_relation_size('gc_t_k'))")"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); git revision: ${GIT_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); GPU: $(q -c "SELECT value FROM gbtree_device_info() WHERE name = 'device'")"
    echo "- PostgreSQL $(q -c 'SHOW server_version') with its default planner settings (max_parallel_workers_per_gather = $(q -c 'SHOW max_parallel_workers_per_gather'), plan_cache_mode = $(q -c 'SHOW plan_cache_mode')); shared_buffers = $(q -c 'SHOW shared_buffers'), work_mem = $(q -c 'SHOW work_mem'); jit = off in the timed sessions; the index is prewarmed; the table is vacuumed (all visible)"
    echo "- values: execution time of EXPLAIN (ANALYZE, TIMING OFF) EXECUTE of one prepared statement, median of $REPEAT in one session (the first five executions get custom plans, which know the array's length); keys are existing keys of random rows in random order, the same arrays for every engine; plan: the plan of the last execution"
    echo
    echo "| keys | btree ms | gbtree auto (GPU) ms | gbtree CPU ms | btree / GPU | btree / CPU | btree plan | gbtree plan | answer |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for n in $SIZES; do
        b=${RES["btree,$n"]}; g=${RES["gbtree-auto,$n"]}; c=${RES["gbtree-cpu,$n"]}
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$n" "$b" "$g" "$c" "$(div "$b" "$g")" "$(div "$b" "$c")" \
            "${RES["btree,$n,plan"]}" "${RES["gbtree-auto,$n,plan"]}" "${RES["btree,$n,count"]}"
    done
    if [ "$FORCED" = 1 ]; then
        echo
        echo "btree with its index plan forced (enable_seqscan = off, enable_bitmapscan = off), against the same gbtree times:"
        echo
        echo "| keys | btree forced ms | btree forced / gbtree GPU | btree forced / gbtree CPU | plan |"
        echo "|---|---|---|---|---|"
        for n in $SIZES; do
            f=${RES["btree-forced,$n"]}
            printf "| %s | %s | %s | %s | %s |\n" "$n" "$f" "$(div "$f" "${RES["gbtree-auto,$n"]}")" \
                "$(div "$f" "${RES["gbtree-cpu,$n"]}")" "${RES["btree-forced,$n,plan"]}"
        done
    fi
    echo
    q -c "SELECT '- ' || name || ': ' || value FROM gbtree_device_info() WHERE name NOT LIKE 'copy%'"
} | tee "$OUTFILE"
for n in $SIZES; do
    for e in gbtree-auto gbtree-cpu $( [ "$FORCED" = 1 ] && echo btree-forced); do
        [ "${RES["$e,$n,count"]}" = "${RES["btree,$n,count"]}" ] || { echo "COUNT MISMATCH $e n=$n"; exit 1; }
    done
done
