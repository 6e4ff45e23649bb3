#!/usr/bin/env bash
# test/demo.sh: what `make demo` runs.  One command does everything:
# installs missing packages (as root), builds and installs gbtree, starts a
# throwaway PostgreSQL cluster, loads two identical tables of DEMO_ROWS
# random int8 keys (with duplicates), indexes one with btree and one with
# gbtree, and compares build times, query times, answers and index sizes.
#
# Environment:
#   DEMO_ROWS=1000000   rows per table
#   DEMO_REPS=5         timed runs per query (the median is reported)
#   KEEP_TMP=1          keep the scratch directory (cluster is still stopped)
#   PG_CONFIG, CUDA     as for test/run-tests.sh (CUDA defaults to 0)
#
# Query times are server execution times from EXPLAIN (ANALYZE, TIMING OFF),
# measured the same way for both tables, after one untimed warm-up run.
# Exits non-zero if the two tables give different answers to any query.

set -u
set -o pipefail
unset MAKEFLAGS MFLAGS MAKELEVEL
# Same locale everywhere: C.UTF-8 always exists on Debian, a CI runner's
# LANG may name one that is not generated.
export LANG=C.UTF-8
unset LC_ALL LC_CTYPE LC_COLLATE LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME LANGUAGE

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO_ROWS=${DEMO_ROWS:-1000000}
DEMO_REPS=${DEMO_REPS:-5}
KEEP_TMP=${KEEP_TMP:-0}
case $DEMO_ROWS in ''|*[!0-9]*) gb_die "DEMO_ROWS must be a number" ;; esac
case $DEMO_REPS in ''|*[!0-9]*|0) gb_die "DEMO_REPS must be a positive number" ;; esac
[ "$DEMO_ROWS" -ge 20000 ] || gb_die "DEMO_ROWS must be at least 20000"

GB_SCRATCH=""
PGDATA_DIR=""
cleanup() {
    if [ -n "$PGDATA_DIR" ] && [ -f "$PGDATA_DIR/postmaster.pid" ]; then
        gb_say "Stopping the demo cluster"
        (cd "$GB_SCRATCH" && gb_run_as "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -m fast -w stop >/dev/null 2>&1) ||
            (cd "$GB_SCRATCH" && gb_run_as "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -m immediate -w stop >/dev/null 2>&1) || true
    fi
    if [ -n "$GB_SCRATCH" ] && [ -d "$GB_SCRATCH" ]; then
        if [ "$KEEP_TMP" = 1 ]; then
            gb_say "KEEP_TMP=1: kept $GB_SCRATCH"
        else
            rm -rf "$GB_SCRATCH"
        fi
    fi
    GB_SCRATCH=""
}
trap cleanup EXIT
trap 'gb_say "interrupted"; exit 130' INT TERM

# ---- setup, build, install ---------------------------------------------------
gb_section "setup"
gb_ensure_packages
gb_resolve_pg_config
gb_ensure_test_user
gb_make_scratch gbtree-demo
if [ "$GB_IS_ROOT" = 1 ]; then
    BUILD_DIR=$GB_SCRATCH/src
    gb_copy_tree "$BUILD_DIR" || gb_die "could not copy the tree"
else
    BUILD_DIR=$GB_ROOT
fi
gb_build "$BUILD_DIR" || gb_die "build failed"
gb_install "$BUILD_DIR" || gb_die "install failed"

# ---- cluster -------------------------------------------------------------------
gb_section "cluster"
port_free() {  # nothing listening on TCP localhost:$1 and no socket file
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
PORT=""
for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 20000))
    if port_free "$p"; then PORT=$p; break; fi
done
[ -n "$PORT" ] || gb_die "no free port found"
SOCKDIR=$GB_SCRATCH
PGDATA_DIR=$GB_SCRATCH/data
cd "$GB_SCRATCH" || gb_die "cd $GB_SCRATCH"
gb_run_as "$PG_BINDIR/initdb" -D "$PGDATA_DIR" -A trust --no-locale -E UTF8 -N >"$GB_SCRATCH/initdb.log" 2>&1 ||
    { cat "$GB_SCRATCH/initdb.log"; gb_die "initdb failed"; }
cat >>"$PGDATA_DIR/postgresql.conf" <<EOF

# gbtree demo
port = $PORT
listen_addresses = ''
unix_socket_directories = '$SOCKDIR'
shared_buffers = 256MB
maintenance_work_mem = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
log_min_messages = warning
EOF
gb_run_as "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -l "$GB_SCRATCH/server.log" -w -t 120 start >/dev/null ||
    { tail -n 30 "$GB_SCRATCH/server.log"; gb_die "could not start the server"; }
gb_say "PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //') running on port $PORT, socket in $SOCKDIR"

# psql as the test user; extra args follow.
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 -h "$SOCKDIR" -p "$PORT" -d postgres)
sql() { gb_run_as "$PG_BINDIR/${PSQL[0]}" "${PSQL[@]:1}" "$@"; }

show_server_log_tail() {
    gb_say "---- tail of the server log ----"
    tail -n 30 "$GB_SCRATCH/server.log"
}

sql -c "CREATE EXTENSION gbtree" || { show_server_log_tail; gb_die "CREATE EXTENSION gbtree failed"; }
gb_say "Extension: gbtree $(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'gbtree'")"
HAS_DEVINFO=$(sql -c "SELECT to_regprocedure('gbtree_device_info()') IS NOT NULL")
device_info() {  # what gbtree reports, or cpu
    if [ "$HAS_DEVINFO" = t ]; then
        sql -c "SELECT coalesce(string_agg(d::text, '; '), '?') FROM gbtree_device_info() AS d" 2>/dev/null || echo "?"
    else
        echo cpu
    fi
}

# ---- data ----------------------------------------------------------------------
gb_section "data"
gb_say "Loading $DEMO_ROWS rows into demo_btree and demo_gbtree (identical contents)"
# Keys: ~0.9*N distinct values spread over a wide signed range, drawn N
# times, so a good share of them occur more than once.
sql >/dev/null <<EOF || gb_die "loading the data failed"
SELECT setseed(0.4242);
CREATE UNLOGGED TABLE demo_src AS
  SELECT g AS id,
         (floor(random() * ($DEMO_ROWS * 0.9)))::int8 * 1000003 - 450000000000 AS k
    FROM generate_series(1, $DEMO_ROWS) AS g;
CREATE TABLE demo_btree  (id int8 NOT NULL, k int8 NOT NULL);
CREATE TABLE demo_gbtree (id int8 NOT NULL, k int8 NOT NULL);
INSERT INTO demo_btree  SELECT id, k FROM demo_src ORDER BY id;
INSERT INTO demo_gbtree SELECT id, k FROM demo_src ORDER BY id;
EOF
sql -c "SELECT format('%s rows, %s distinct keys, %s keys occur more than once',
               count(*), count(DISTINCT k),
               (SELECT count(*) FROM (SELECT k FROM demo_src GROUP BY k HAVING count(*) > 1) d))
          FROM demo_src"

# ---- index builds ----------------------------------------------------------------
gb_section "index builds"
build_ms() {  # TABLE AM -> prints build time in ms
    sql -c '\timing on' -c "CREATE INDEX ${1}_k_idx ON $1 USING $2 (k)" |
        sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n 1
}
BT_BUILD=$(build_ms demo_btree btree) && [ -n "$BT_BUILD" ] || gb_die "CREATE INDEX USING btree failed"
gb_say "btree  build: $BT_BUILD ms"
GB_BUILD=$(build_ms demo_gbtree gbtree) && [ -n "$GB_BUILD" ] ||
    { show_server_log_tail; gb_die "CREATE INDEX USING gbtree failed"; }
gb_say "gbtree build: $GB_BUILD ms"
BUILD_DEVICE=$(device_info)
sql -c "VACUUM ANALYZE demo_btree" -c "VACUUM ANALYZE demo_gbtree" ||
    { show_server_log_tail; gb_die "VACUUM ANALYZE failed"; }

# ---- queries -----------------------------------------------------------------------
gb_section "queries"
P_KEY=$(sql -c "SELECT k FROM demo_src GROUP BY k HAVING count(*) > 1 ORDER BY k LIMIT 1 OFFSET 7")
R_LO=$(sql -c "SELECT percentile_disc(0.50) WITHIN GROUP (ORDER BY k) FROM demo_src")
R_HI=$(sql -c "SELECT percentile_disc(0.51) WITHIN GROUP (ORDER BY k) FROM demo_src")
STEP=$((DEMO_ROWS / 10000))
ARR=$(sql -c "SELECT '{' || string_agg(k::text, ',' ORDER BY id) || '}'
                FROM demo_src WHERE id % $STEP = 0 AND id <= $((STEP * 10000))")

# name | ordered (1: compare output as is; 0: compare sorted) | SQL (TBL = table)
QUERIES=(
    "point lookup (k = const)|0|SELECT id, k FROM TBL WHERE k = $P_KEY"
    "range count (~1%)|0|SELECT count(*) FROM TBL WHERE k BETWEEN $R_LO AND $R_HI"
    "k = ANY(10000 keys) count|0|SELECT count(*) FROM TBL WHERE k = ANY('$ARR'::int8[])"
    "ORDER BY k LIMIT 100 OFFSET 1000|1|SELECT k FROM TBL ORDER BY k LIMIT 100 OFFSET 1000"
    "min/max|0|SELECT min(k), max(k) FROM TBL"
)
SETTINGS="SET enable_seqscan = off;"
gb_say "Settings for every query: enable_seqscan=off, jit=off, max_parallel_workers_per_gather=0"
gb_say "Timing: EXPLAIN (ANALYZE, TIMING OFF) execution time, median of $DEMO_REPS runs after 1 warm-up"

QDIR=$GB_SCRATCH/queries
mkdir -p "$QDIR"
chmod 755 "$QDIR"
MISMATCH=0
ROWS=()   # result table rows: name|btree|gbtree|device

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# time_query FILE-PREFIX SQL -> prints "median_ms|scan node"
time_query() {
    local f=$1 q=$2
    {
        echo "$SETTINGS"
        for _ in $(seq 0 "$DEMO_REPS"); do echo "EXPLAIN (ANALYZE, TIMING OFF) $q;"; done
    } >"$f.explain.sql"
    sql -f "$f.explain.sql" >"$f.explain.out" 2>&1 || return 1
    local ms node
    ms=$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' "$f.explain.out" | tail -n +2 | median)
    # scan nodes of the first plan, e.g. "Index Only Scan using demo_btree_k_idx on demo_btree"
    node=$(sed -e '/^Execution Time:/q' "$f.explain.out" | grep -E ' Scan' |
        sed -e 's/^[ >-]*//' -e 's/  (cost=.*//' -e 's/ (actual .*//' | paste -sd '/' - | sed 's|/| / |g')
    printf '%s|%s\n' "$ms" "$node"
}

qi=0
for entry in "${QUERIES[@]}"; do
    qi=$((qi + 1))
    name=${entry%%|*}; rest=${entry#*|}
    ordered=${rest%%|*}; qtext=${rest#*|}
    declare -A MS=() NODE=()
    fail=0
    for am in btree gbtree; do
        q=${qtext//TBL/demo_$am}
        f=$QDIR/q${qi}_$am
        # answer, for the comparison
        { echo "$SETTINGS"; echo "$q;"; } >"$f.sql"
        if ! sql -f "$f.sql" >"$f.out" 2>&1; then
            gb_say "!!! $name on demo_$am FAILED:"
            sed 's/^/    /' "$f.out" | head -n 20
            fail=1
            continue
        fi
        [ "$ordered" = 1 ] || { LC_ALL=C sort "$f.out" >"$f.sorted" && mv "$f.sorted" "$f.out"; }
        if ! r=$(time_query "$f" "$q"); then
            gb_say "!!! EXPLAIN ANALYZE of $name on demo_$am FAILED:"
            sed 's/^/    /' "$f.explain.out" | head -n 20
            fail=1
            continue
        fi
        MS[$am]=${r%%|*}
        NODE[$am]=${r#*|}
    done
    dev=$(device_info)
    if [ "$fail" = 0 ] && ! cmp -s "$QDIR/q${qi}_btree.out" "$QDIR/q${qi}_gbtree.out"; then
        fail=1
        gb_say "!!! MISMATCH: $name: btree and gbtree answers differ:"
        diff "$QDIR/q${qi}_btree.out" "$QDIR/q${qi}_gbtree.out" | head -n 20 | sed 's/^/    /'
    fi
    [ "$fail" = 1 ] && MISMATCH=$((MISMATCH + 1))
    status=same; [ "$fail" = 1 ] && status=DIFFERENT
    gb_say "$(printf '%-34s answers %-9s btree: %s\n%-34s %17s gbtree: %s' \
        "$name" "$status" "${NODE[btree]:-?}" "" "" "${NODE[gbtree]:-?}")"
    case ${NODE[gbtree]:-} in *demo_gbtree_k_idx*) ;;
        *) gb_say "    (note: the gbtree query did not scan demo_gbtree_k_idx)" ;;
    esac
    ROWS+=("$name|${MS[btree]:-}|${MS[gbtree]:-}|$dev")
    unset MS NODE
done

# ---- results ---------------------------------------------------------------------
gb_section "results ($DEMO_ROWS rows)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a + 0 == 0) print "n/a"; else printf "%.2f\n", b / a }'; }
fmt_ms() { [ -n "$1" ] && printf '%.3f' "$1" || printf 'error'; }
W=34
printf "%-${W}s | %12s | %12s | %12s | %s\n" "query" "btree ms" "gbtree ms" "gbtree/btree" "device"
printf '%s\n' "$(printf '%*s' $((W + 60)) '' | tr ' ' '-')"
printf "%-${W}s | %12s | %12s | %12s | %s\n" "index build (CREATE INDEX)" \
    "$(fmt_ms "$BT_BUILD")" "$(fmt_ms "$GB_BUILD")" "$(ratio "$BT_BUILD" "$GB_BUILD")" "$BUILD_DEVICE"
for row in "${ROWS[@]}"; do
    IFS='|' read -r name bt gb dev <<<"$row"
    printf "%-${W}s | %12s | %12s | %12s | %s\n" "$name" \
        "$(fmt_ms "$bt")" "$(fmt_ms "$gb")" "$(ratio "$bt" "$gb")" "$dev"
done
echo
BT_SIZE=$(sql -c "SELECT pg_relation_size('demo_btree_k_idx')")
GB_SIZE=$(sql -c "SELECT pg_relation_size('demo_gbtree_k_idx')")
printf "%-${W}s | %12s | %12s | %12s\n" "index size" "btree" "gbtree" "gbtree/btree"
printf "%-${W}s | %12s | %12s | %12s\n" "demo_*_k_idx" \
    "$(sql -c "SELECT pg_size_pretty($BT_SIZE::bigint)")" \
    "$(sql -c "SELECT pg_size_pretty($GB_SIZE::bigint)")" "$(ratio "$BT_SIZE" "$GB_SIZE")"
echo
if [ "$MISMATCH" -gt 0 ]; then
    gb_say "!!!!!!!! $MISMATCH of ${#QUERIES[@]} queries gave DIFFERENT answers (or failed) on gbtree !!!!!!!!"
    exit 1
fi
gb_say "All ${#QUERIES[@]} queries gave identical answers on btree and gbtree."
