#!/usr/bin/env bash
# test/bench/gpu-join.sh: joins through a gbtree index on the GPU machine
# (issue 22 item 1), under PostgreSQL's default planner settings: one int8
# table of GPU_BENCH_ROWS rows (default 100M) with keys spread over the
# whole table, joined with probe tables of 10k, 100k and 1M of its
# existing keys (random rows, random order): inner join returning rows
# (count(*), sum(t.id): every matched row is fetched), semi join (IN) and
# anti join (NOT EXISTS against keys that half miss).  btree first, then
# gbtree on the same table (gbtree.device = auto, then = cpu).  Each time
# is the execution time of EXPLAIN (ANALYZE, TIMING OFF) of the query, the
# plan is the one the server chose, and every answer is checked against
# btree's.  Needs psql access to a server with gbtree preloaded
# (test/gpu/device-run.sh joinbench).  Writes a markdown table to stdout
# and to $1.
set -u
ROWS=${GPU_BENCH_ROWS:-100000000}
REPEAT=${GPU_BENCH_REPEAT:-3}
OUTFILE=${1:-/tmp/gpu-join.md}
# shellcheck source=test/bench/gpu-lib.sh
. "$(dirname "$0")/gpu-lib.sh"

count_table gj_t gj_keys "$ROWS"
# probe tables: the keys of gj_keys; the anti join's half are existing
# keys + 1 (keys are hashint8(i) # (i << 20): +1 almost never exists)
q >/dev/null <<'SQL'
CREATE TABLE gj_p10000 AS SELECT unnest(a) AS x FROM gj_keys WHERE n = 10000;
CREATE TABLE gj_p100000 AS SELECT unnest(a) AS x FROM gj_keys WHERE n = 100000;
CREATE TABLE gj_p1000000 AS SELECT unnest(a) AS x FROM gj_keys WHERE n = 1000000;
CREATE TABLE gj_m10000 AS SELECT x + (row_number() OVER () % 2) AS x FROM gj_p10000;
CREATE TABLE gj_m100000 AS SELECT x + (row_number() OVER () % 2) AS x FROM gj_p100000;
CREATE TABLE gj_m1000000 AS SELECT x + (row_number() OVER () % 2) AS x FROM gj_p1000000;
VACUUM ANALYZE gj_p10000, gj_p100000, gj_p1000000, gj_m10000, gj_m100000, gj_m1000000;
SQL

declare -A SQLS=(
    [inner]="SELECT count(*), sum(t.id) FROM gj_p%N p JOIN gj_t t ON t.k = p.x"
    [semi]="SELECT count(*) FROM gj_p%N p WHERE p.x IN (SELECT k FROM gj_t)"
    [anti]="SELECT count(*) FROM gj_m%N p WHERE NOT EXISTS (SELECT 1 FROM gj_t t WHERE t.k = p.x)"
)
KINDS=${GPU_JOIN_KINDS:-inner semi anti}
SIZES=${GPU_JOIN_SIZES:-10000 100000 1000000}

# REPEAT runs of one query in one session, default settings: prints
# "ANSWER <row>", then "TIME <ms>" and "PLAN <nodes>" per run
run_default() {   # $1 = sql, $2 = settings
    local explains
    explains=$(for _ in $(seq 1 "$REPEAT"); do echo "EXPLAIN (ANALYZE, TIMING OFF) $1;"; done)
    q <<QUERY | awk '/^ANSWER/ { print; next } /Execution Time:/ { print "TIME", $3; print "PLAN", p; p = "" }
                     /(Scan|Join|Gather|Aggregate|Hash|Loop|GbtreeJoin)/ && !/(Cond|Filter|Buckets|Type|Name):/ { sub(/^[ ->]+/, ""); sub(/  \(.*/, ""); p = p (p ? " / " : "") $0 }'
SET jit = off;
$2
SELECT 'ANSWER ' || s::text FROM ($1) s;
$explains
QUERY
}

declare -A RES
measure() {   # $1 label, $2 settings
    local n k out sql
    for k in $KINDS; do
        for n in $SIZES; do
            sql=${SQLS[$k]//%N/$n}
            out=$(run_default "$sql" "$2")
            RES["$1,$k,$n,answer"]=$(echo "$out" | awk '/^ANSWER/ { sub(/^ANSWER /, ""); print }')
            RES["$1,$k,$n"]=$(echo "$out" | awk '/^TIME/ { print $2 }' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
            RES["$1,$k,$n,plan"]=$(echo "$out" | awk '/^PLAN/ { sub(/^PLAN /, ""); p = $0 } END { print p }')
            echo "  $1 $k n=$n: median ${RES["$1,$k,$n"]} ms of [$(echo "$out" | awk '/^TIME/ { printf "%s ", $2 }')], answer ${RES["$1,$k,$n,answer"]}, plan: ${RES["$1,$k,$n,plan"]}"
        done
    done
}

q -c "CREATE INDEX gj_t_k ON gj_t USING btree (k)"
q -c "SELECT pg_prewarm('gj_t_k')" >/dev/null
q -c "SELECT pg_prewarm('gj_t')" >/dev/null
measure btree ""
q -c "DROP INDEX gj_t_k"
q -c "CREATE INDEX gj_t_k ON gj_t USING gbtree (k)"
q -c "SELECT pg_prewarm('gj_t_k')" >/dev/null
# the first GPU query ships the index unless the build left it there
q -c "SELECT count(*) FROM gj_t WHERE k = ANY(ARRAY[1, 2, 3]::int8[])" >/dev/null
measure gbtree-auto ""
measure gbtree-cpu "SET gbtree.device = cpu;"

{
    echo "# Joins through the index under PostgreSQL's default settings, $ROWS rows"
    echo
    echo "- command: \`test/gpu/device-run.sh joinbench\` (test/bench/gpu-join.sh, GPU_BENCH_ROWS=$ROWS, GPU_BENCH_REPEAT=$REPEAT, GPU_JOIN_KINDS='$KINDS', GPU_JOIN_SIZES='$SIZES')"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); git revision: ${GIT_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); GPU: $(q -c "SELECT value FROM gbtree_device_info() WHERE name = 'device'")"
    echo "- PostgreSQL $(q -c 'SHOW server_version') with its default planner settings (max_parallel_workers_per_gather = $(q -c 'SHOW max_parallel_workers_per_gather'), work_mem = $(q -c 'SHOW work_mem')); shared_buffers = $(q -c 'SHOW shared_buffers'); jit = off in the timed sessions; table and index prewarmed; the table vacuumed (all visible)"
    echo "- queries (N = probe rows): inner \`${SQLS[inner]}\`; semi \`${SQLS[semi]}\`; anti \`${SQLS[anti]}\` (gj_m: half the keys + 1, which miss)"
    echo "- values: execution time of EXPLAIN (ANALYZE, TIMING OFF), median of $REPEAT in one session; plan: the plan of the last run; every answer equals btree's"
    echo
    echo "| join | probe rows | btree ms | gbtree auto (GPU) ms | gbtree CPU ms | btree / GPU | btree / CPU | btree plan | gbtree auto plan | gbtree CPU plan | answer |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for k in $KINDS; do
        for n in $SIZES; do
            b=${RES["btree,$k,$n"]}; g=${RES["gbtree-auto,$k,$n"]}; c=${RES["gbtree-cpu,$k,$n"]}
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$k" "$n" "$b" "$g" "$c" "$(div "$b" "$g")" "$(div "$b" "$c")" \
                "${RES["btree,$k,$n,plan"]}" "${RES["gbtree-auto,$k,$n,plan"]}" "${RES["gbtree-cpu,$k,$n,plan"]}" "${RES["btree,$k,$n,answer"]}"
        done
    done
    echo
    q -c "SELECT '- ' || name || ': ' || value FROM gbtree_device_info() WHERE name NOT LIKE 'copy%'"
} | tee "$OUTFILE"
for k in $KINDS; do
    for n in $SIZES; do
        for e in gbtree-auto gbtree-cpu; do
            [ "${RES["$e,$k,$n,answer"]}" = "${RES["btree,$k,$n,answer"]}" ] || { echo "ANSWER MISMATCH $e $k n=$n"; exit 1; }
        done
    done
done
