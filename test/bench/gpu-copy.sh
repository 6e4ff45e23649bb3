#!/usr/bin/env bash
# test/bench/gpu-copy.sh [OUTFILE]: issue 18's measure on the GPU machine.
# COPY of COPY_ROWS (10M) random int8 rows into a table that already holds
# BASE_ROWS (100M) rows, with a btree index, with a gbtree index (built on
# the GPU) and with no index, in one server, from one file; time and WAL of
# each COPY, and the index's share (minus the unindexed table's).  Run by
# test/gpu/device-run.sh copybench (gbtree preloaded, gbtree.device =
# auto); the server's settings are the bundle's defaults plus what is set
# below, printed with the results.  gbtree's insert batches are sorted and
# their leaves found on the GPU (gbtree.gpu_merge_min); COPY_CPU_TWIN=1
# adds a fourth table, t_c, a gbtree twin whose COPY merges on the CPU
# (gbtree.gpu_merge_min = 0), to measure what the GPU merge brings.
set -u
. "$(dirname "$0")/gpu-lib.sh"
out=${1:-/dev/stdout}
BASE=${BASE_ROWS:-100000000}
ADD=${COPY_ROWS:-10000000}
ROUNDS=${COPY_ROUNDS:-1}
dir=${COPY_DIR:-/var/tmp/gbtree-copy}
jobs=$(nproc)
tables="t_n t_b t_g"
[ "${COPY_CPU_TWIN:-0}" = 1 ] && tables="$tables t_c"
mkdir -p "$dir" && chmod 777 "$dir"
key="hashint8extended(i, 0)"

q -c "ALTER SYSTEM SET max_wal_size = '16GB'" -c "ALTER SYSTEM SET jit = off" \
  -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_reload_conf()" >/dev/null
q -c "CREATE EXTENSION IF NOT EXISTS gbtree" >/dev/null

# files of rows lo..hi, one per CPU, written at once
gen_parts() {  # PREFIX LO HI
    local per j a b
    per=$(( ($3 - $2 + jobs) / jobs ))
    for j in $(seq 0 $((jobs - 1))); do
        a=$(( $2 + j * per )); b=$(( a + per - 1 )); [ "$b" -gt "$3" ] && b=$3
        [ "$a" -gt "$3" ] && continue
        q -c "COPY (SELECT $key, i FROM generate_series($a, $b) i) TO '$dir/$1.$j'" &
    done
    wait
}
t0=$(now)
gen_parts base 1 "$BASE"
gen_parts addpart $((BASE + 1)) $((BASE + ADD))
cat "$dir"/addpart.* > "$dir/add.copy" && rm -f "$dir"/addpart.*
chmod 644 "$dir"/*
for t in $tables; do
    q -c "DROP TABLE IF EXISTS $t" -c "CREATE TABLE $t (k int8, v int8)"
    for f in "$dir"/base.*; do q -c "COPY $t FROM '$f'" & done
    wait
    [ "$(q -c "SELECT count(*) FROM $t")" = "$BASE" ] || { echo "loading $t failed"; exit 1; }
done
rm -f "$dir"/base.*
t1=$(now)
q -c "CREATE INDEX t_b_k ON t_b USING btree (k)" &
q -c "CREATE INDEX t_g_k ON t_g USING gbtree (k)" &
wait
case $tables in *t_c*) q -c "CREATE INDEX t_c_k ON t_c USING gbtree (k)" ;; esac
for t in $tables; do q -c "VACUUM ANALYZE $t"; done
t2=$(now)
echo "loaded $BASE rows into $tables in $(sub "$t1" "$t0") s, indexed and vacuumed in $(sub "$t2" "$t1") s"

declare -A ms wal mix
q -c "CREATE EXTENSION IF NOT EXISTS pg_walinspect" >/dev/null
measure() {  # TABLE ROUND
    local lsn a b w
    q -c "CHECKPOINT"
    lsn=$(q -c "SELECT pg_current_wal_insert_lsn()")
    a=$(now)
    if [ "$1" = t_c ]; then
        q -c "SET gbtree.gpu_merge_min = 0" -c "COPY $1 FROM '$dir/add.copy'" || exit 1
    else
        q -c "COPY $1 FROM '$dir/add.copy'" || exit 1
    fi
    b=$(now)
    w=$(q -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$lsn')")
    ms[$1,$2]=$(sub "$b" "$a")
    wal[$1,$2]=$w
    # what the WAL was made of: records by type, full-page images apart
    mix[$1,$2]=$(q -c "SELECT string_agg(format('%s %s x, %s MB + %s MB images', \"resource_manager/record_type\", count, round(record_size / 1048576.0, 1), round(fpi_size / 1048576.0, 1)), '; ' ORDER BY record_size + fpi_size DESC) FROM pg_get_wal_stats('$lsn', pg_current_wal_flush_lsn(), true) WHERE count > 0 AND \"resource_manager/record_type\" NOT LIKE 'Transaction%'")
    echo "round $2: COPY $ADD rows into $1: ${ms[$1,$2]} s, WAL $(div "$w" 1048576 1) MB"
}
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then order=$tables; else order=$(echo "$tables" | tr ' ' '\n' | tac | tr '\n' ' '); fi
    for t in $order; do measure "$t" "$r"; done
done

# the answers: ranges and the added keys, through each index
chk() {
    q -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" -c "$1"
}
ok=1
# (the sequential scan takes the keys as a semi-join: = ANY of 10k keys
# over 110M rows would compare every row with every key)
keys="SELECT $key FROM generate_series($BASE + 1, $BASE + $ADD, 997) i"
for c in "SELECT count(*), sum(v) FROM %s WHERE k BETWEEN -4000000000000000000 AND -3900000000000000000" \
         "SELECT count(*), sum(v) FROM %s WHERE k = ANY (ARRAY($keys))|SELECT count(*), sum(v) FROM %s WHERE k IN ($keys)"; do
    ci=${c%%|*}; cs=${c#*|}
    # shellcheck disable=SC2059
    g=$(chk "$(printf "$ci" t_g)"); b=$(chk "$(printf "$ci" t_b)"); n=$(q -c "$(printf "$cs" t_n)")
    [ "$g" = "$b" ] && [ "$b" = "$n" ] || { ok=0; echo "DIFFERENT: gbtree $g, btree $b, seq $n: $c"; }
    case $tables in *t_c*)
        c2=$(chk "$(printf "$ci" t_c)")
        [ "$c2" = "$b" ] || { ok=0; echo "DIFFERENT: gbtree (CPU merge) $c2, btree $b: $c"; } ;;
    esac
done
check=$(q -c "SELECT gbtree_check('t_g_k')" 2>&1) || { ok=0; echo "gbtree_check: $check"; }
case $tables in *t_c*) check=$(q -c "SELECT gbtree_check('t_c_k')" 2>&1) || { ok=0; echo "gbtree_check t_c_k: $check"; } ;; esac

{
    echo "# COPY of $ADD rows into a $BASE-row indexed table (issue 18)"
    echo
    echo "Command: \`test/gpu/device-run.sh copybench\` (BASE_ROWS=$BASE COPY_ROWS=$ADD COPY_ROUNDS=$ROUNDS COPY_CPU_TWIN=${COPY_CPU_TWIN:-0}) at ${GIT_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo "?")}, $(date -u +%F)."
    echo "Machine: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) CPUs."
    echo "Server: gbtree preloaded (its own WAL records), gbtree.device = auto; settings other than the defaults:"
    echo
    q -c "SELECT '    ' || name || ' = ' || setting || coalesce(unit, '') FROM pg_settings WHERE source NOT IN ('default', 'override') AND name NOT LIKE 'lc_%' ORDER BY name"
    echo
    echo "Keys: hashint8extended(i, 0), spread over the whole int8 range; the base rows and the added ones from the same generator. Each COPY follows a CHECKPOINT, so its pages' first changes log full images, as in any load."
    echo
    echo "| round | measure | no index | btree | gbtree | btree / gbtree |"
    echo "|---|---|---|---|---|---|"
    for r in $(seq 1 "$ROUNDS"); do
        echo "| $r | COPY time (s) | ${ms[t_n,$r]} | ${ms[t_b,$r]} | ${ms[t_g,$r]} | $(div "${ms[t_b,$r]}" "${ms[t_g,$r]}" 2)x |"
        sb=$(sub "${ms[t_b,$r]}" "${ms[t_n,$r]}"); sg=$(sub "${ms[t_g,$r]}" "${ms[t_n,$r]}")
        echo "| $r | the index's share of the time (s) | | $sb | $sg | $(div "$sb" "$sg" 2)x |"
        echo "| $r | WAL (MB) | $(div "${wal[t_n,$r]}" 1048576 1) | $(div "${wal[t_b,$r]}" 1048576 1) | $(div "${wal[t_g,$r]}" 1048576 1) | $(div "${wal[t_b,$r]}" "${wal[t_g,$r]}" 2)x |"
        wb=$(sub "${wal[t_b,$r]}" "${wal[t_n,$r]}"); wg=$(sub "${wal[t_g,$r]}" "${wal[t_n,$r]}")
        echo "| $r | the index's share of the WAL (MB) | | $(div "$wb" 1048576 1) | $(div "$wg" 1048576 1) | $(div "$wb" "$wg" 2)x |"
        case $tables in *t_c*)
            sc=$(sub "${ms[t_c,$r]}" "${ms[t_n,$r]}")
            echo "| $r | gbtree merging on the CPU (t_c): COPY time (s) | | ${ms[t_b,$r]} | ${ms[t_c,$r]} | $(div "${ms[t_b,$r]}" "${ms[t_c,$r]}" 2)x |"
            echo "| $r | gbtree merging on the CPU (t_c): the index's share (s) | | $sb | $sc | $(div "$sb" "$sc" 2)x |"
            echo "| $r | GPU merge against CPU merge: COPY time, t_c / t_g | | | | $(div "${ms[t_c,$r]}" "${ms[t_g,$r]}" 2)x |" ;;
        esac
    done
    echo
    echo "WAL by record type:"
    echo
    for r in $(seq 1 "$ROUNDS"); do
        for t in $tables; do echo "- round $r, $t: ${mix[$t,$r]}"; done
    done
    echo
    echo "Index sizes after: btree $(q -c "SELECT pg_size_pretty(pg_relation_size('t_b_k'))"), gbtree $(q -c "SELECT pg_size_pretty(pg_relation_size('t_g_k'))")."
    echo "Answers (a range of about 0.5% and every 997th added key, through each index and by a sequential scan): $([ $ok = 1 ] && echo identical || echo DIFFERENT); gbtree_check: $([ $ok = 1 ] && echo passed || echo see log)."
    echo "GPU: $(q -c "SELECT string_agg(name || ' ' || value, ', ') FROM gbtree_device_info() WHERE name IN ('device', 'gpu_builds', 'gpu_batches', 'gpu_merges', 'gpu_merge_entries', 'gpu_merge_leaves_hinted', 'gpu_merge_leaves_descended', 'fallbacks', 'last_fallback')")"
} | tee "$out"
[ $ok = 1 ]
