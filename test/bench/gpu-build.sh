#!/usr/bin/env bash
# test/bench/gpu-build.sh: issue 6's measure on the GPU machine.  CREATE
# INDEX on GPU_BUILD_ROWS-row tables (default 100M) of each type in
# GPU_BUILD_TYPES (default int8,float8,timestamptz): btree, gbtree built on
# the CPU (gbtree.device = cpu) and gbtree built on the GPU (gbtree.device
# = gpu), same table, same server, default settings plus
# maintenance_work_mem = GPU_BUILD_MWM (default 4GB: enough for gbtree to
# sort 100M entries at once, 32 bytes each) for all three; each build
# GPU_BUILD_REPEAT times (median, min-max).  The gbtree builds' DEBUG1
# line (of the median run) gives the time breakdown.  Needs psql access
# to a server with gbtree preloaded (test/gpu/device-run.sh buildbench).
# Writes a markdown table to stdout and to $1.
set -u
ROWS=${GPU_BUILD_ROWS:-100000000}
TYPES=${GPU_BUILD_TYPES:-int8,float8,timestamptz}
MWM=${GPU_BUILD_MWM:-4GB}
REPEAT=${GPU_BUILD_REPEAT:-1}
OUTFILE=${1:-/tmp/gpu-build.md}
# shellcheck source=test/bench/gpu-lib.sh
. "$(dirname "$0")/gpu-lib.sh"
SCR=$(mktemp -d "${TMPDIR:-/tmp}/gbtree-gpubuild.XXXXXX") || exit 1
trap 'rm -rf "$SCR"' EXIT
keyexpr() {
    case $1 in
        int8) echo "hashint8(i) # (i << 20)" ;;
        float8) echo "(hashint8(i) # (i << 20))::float8 / 3" ;;
        timestamptz) echo "'2000-01-01'::timestamptz + ((hashint8(i) # (i << 20)) % 1000000000000) * interval '1 microsecond'" ;;
        *) echo "unknown type $1" >&2; exit 2 ;;
    esac
}

# one build: prints seconds; the DEBUG1 breakdown goes to $SCR/gbb_breakdown
build() {   # $1 am, $2 settings
    q -c "DROP INDEX IF EXISTS gbb_k" -c "CHECKPOINT" >/dev/null
    local t0 t1
    t0=$(now)
    q -c "SET maintenance_work_mem = '$MWM'; SET client_min_messages = debug1; $2" \
      -c "CREATE INDEX gbb_k ON gbb USING $1 (k)" 2>$SCR/gbb_debug.log >/dev/null ||
        { cat $SCR/gbb_debug.log >&2; exit 1; }
    t1=$(now)
    grep -o "gbtree build of.*" $SCR/gbb_debug.log | sed 's/^gbtree build of "gbb_k" //' >$SCR/gbb_breakdown
    sub "$t1" "$t0"
}

# repeated builds: prints "median (min-max)" seconds; the median run's
# breakdown goes to $SCR/gbb_breakdown
builds() {  # $1 am, $2 settings
    local i t; local -a ts; : >$SCR/gbb_all
    for i in $(seq 1 "$REPEAT"); do
        t=$(build "$1" "$2")
        ts+=("$t")
        echo "$t $(cat $SCR/gbb_breakdown)" >>$SCR/gbb_all
    done
    sort -n $SCR/gbb_all | sed -n "$(( (REPEAT + 1) / 2 ))p" | cut -d' ' -f2- >$SCR/gbb_breakdown
    printf '%s\n' "${ts[@]}" | sort -n | awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; if (NR > 1) printf "%s (%s-%s)", m, v[1], v[NR]; else printf "%s", m }'
}
med() { echo "${1%% *}"; }

declare -a LINES
q -c "CREATE EXTENSION IF NOT EXISTS gbtree" >/dev/null
for typ in ${TYPES//,/ }; do
    q -c "DROP TABLE IF EXISTS gbb" -c "CREATE TABLE gbb (id int8, k $typ) WITH (autovacuum_enabled = off)" >/dev/null
    t0=$(now)
    load_rows gbb "$ROWS" "$(keyexpr "$typ")"
    q -c "VACUUM (FREEZE, ANALYZE) gbb" >/dev/null
    echo "$typ: loaded $ROWS rows in $(sub "$(now)" "$t0") s"
    bt=$(builds btree "")
    echo "  btree: $bt s"
    gc=$(builds gbtree "SET gbtree.device = cpu;"); bdc=$(cat $SCR/gbb_breakdown)
    echo "  gbtree CPU: $gc s ($bdc)"
    gg=$(builds gbtree "SET gbtree.device = gpu;"); bdg=$(cat $SCR/gbb_breakdown)
    echo "  gbtree GPU: $gg s ($bdg)"
    ok=$(q -c "SELECT 'ok' FROM gbtree_check('gbb_k', false)")
    LINES+=("| $typ | $bt | $gc | $gg | $(div "$(med "$bt")" "$(med "$gg")" 2) | $(div "$(med "$gc")" "$(med "$gg")" 2) | $ok |")
    LINES+=("|  | | *CPU build:* $bdc | *GPU build:* $bdg | | | |")
    q -c "DROP TABLE gbb" >/dev/null
done

{
    echo "# CREATE INDEX on the GPU: $ROWS rows per type"
    echo
    echo "- command: \`test/gpu/device-run.sh buildbench\` (test/bench/gpu-build.sh, GPU_BUILD_ROWS=$ROWS, GPU_BUILD_TYPES=$TYPES, GPU_BUILD_MWM=$MWM, GPU_BUILD_REPEAT=$REPEAT)"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); git revision: ${GIT_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); GPU: $(q -c "SELECT value FROM gbtree_device_info() WHERE name = 'device'")"
    echo "- PostgreSQL $(q -c 'SHOW server_version'), default settings (so btree builds with max_parallel_maintenance_workers = $(q -c 'SHOW max_parallel_maintenance_workers') workers) plus maintenance_work_mem = $MWM for every build (gbtree's build, like btree's, stays within it: beyond it, it spills sorted runs and merges them)"
    echo "- values: seconds of CREATE INDEX from psql, after a CHECKPOINT, median (min-max) of $REPEAT; ratios of the medians; keys: distinct pseudo-random values, rows in id order"
    echo
    echo "| type | btree s | gbtree CPU s | gbtree GPU s | btree / GPU | CPU / GPU | gbtree_check |"
    echo "|---|---|---|---|---|---|---|"
    printf '%s\n' "${LINES[@]}"
} | tee "$OUTFILE"
