#!/usr/bin/env bash
# test/demo.sh: what `make demo` runs.  One command does everything:
# installs missing packages (as root), builds and installs gbtree, starts a
# throwaway PostgreSQL cluster, loads two identical tables of DEMO_ROWS
# random int8 keys (with duplicates), indexes one with btree and one with
# gbtree, checks that both tables are entirely all-visible, and compares
# build times, query times, plans, answers and index sizes.
#
# Environment:
#   DEMO_ROWS=1000000   rows per table
#   DEMO_REPS=5         timed runs per query and engine (the median is reported)
#   DEMO_BUILD_REPS=3   timed index builds per engine (the median is reported)
#   DEMO_PRELOAD=auto   1: put gbtree in shared_preload_libraries (starts the
#                       GPU service); auto: do so when the installed gbtree has
#                       its CUDA library and an NVIDIA device node exists
#   KEEP_TMP=1          keep the scratch directory (cluster is still stopped)
#   GIT_REV             revision printed in the header (default: git's)
#   PG_CONFIG, CUDA     as for test/run-tests.sh (CUDA defaults to 0)
#
# Query times are server execution times from EXPLAIN (ANALYZE, TIMING OFF),
# measured the same way for both tables in one session, the engines
# alternating (btree, gbtree, then gbtree, btree, ...) so that a noisy
# neighbour hits both, after one untimed warm-up run of each.
# Exits non-zero if the two tables give different answers to any query, or
# if a table is not entirely all-visible before the timings.

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
DEMO_BUILD_REPS=${DEMO_BUILD_REPS:-3}
DEMO_PRELOAD=${DEMO_PRELOAD:-auto}
KEEP_TMP=${KEEP_TMP:-0}
case $DEMO_ROWS in ''|*[!0-9]*) gb_die "DEMO_ROWS must be a number" ;; esac
case $DEMO_REPS in ''|*[!0-9]*|0) gb_die "DEMO_REPS must be a positive number" ;; esac
case $DEMO_BUILD_REPS in ''|*[!0-9]*|0) gb_die "DEMO_BUILD_REPS must be a positive number" ;; esac
case $DEMO_PRELOAD in auto|0|1) ;; *) gb_die "DEMO_PRELOAD must be auto, 0 or 1" ;; esac
[ "$DEMO_ROWS" -ge 20000 ] || gb_die "DEMO_ROWS must be at least 20000"

# ---- what runs where -------------------------------------------------------------
# GIT_REV from the environment wins: an exported copy of the tree has no git
# metadata.
if [ -z "${GIT_REV:-}" ]; then
    GIT_REV=$(git -C "$GB_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [ -n "$(git -C "$GB_ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
        GIT_REV="$GIT_REV-dirty"
    fi
fi
cpu_model() {
    local m
    m=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
    [ -n "$m" ] || m=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
    printf '%s' "${m:-unknown CPU}"
}
cpu_simd_flags() {  # what the CPU offers, as lscpu's flags name it
    local f have=""
    for f in avx2 avx512f avx512bw; do
        grep -qw "$f" /proc/cpuinfo 2>/dev/null && have="$have $f"
    done
    printf '%s' "${have# }"
}
load_avg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null; }
MEM_GIB=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
GPU_NODE=no; [ -e /dev/nvidia0 ] && GPU_NODE=yes
MACHINE="$(cpu_model), $(gb_nproc) CPUs, ${MEM_GIB:-?} GiB RAM (SIMD flags: $(cpu_simd_flags)), $(uname -sr), NVIDIA device node: $GPU_NODE"
START_LOAD=$(load_avg)

gb_say "gbtree demo: revision $GIT_REV, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
gb_say "machine: $MACHINE"
gb_say "load average at start: $START_LOAD"

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
# Every scratch file (build copy, cluster, socket, query files) lives in this
# mktemp -d directory; only its owner (the test user) and root may enter it.
gb_make_scratch gbtree-demo
chmod 700 "$GB_SCRATCH"
if [ "$GB_IS_ROOT" = 1 ]; then
    BUILD_DIR=$GB_SCRATCH/src
    gb_copy_tree "$BUILD_DIR" || gb_die "could not copy the tree"
else
    BUILD_DIR=$GB_ROOT
fi
gb_build "$BUILD_DIR" || gb_die "build failed"
gb_install "$BUILD_DIR" || gb_die "install failed"
# Someone else may install gbtree on this machine meanwhile: remember what
# this build installed, so that the end can say whether it was measured.
lib_sum() { sha256sum "$1" 2>/dev/null | cut -c1-16; }
BUILT_SUM=$(lib_sum "$BUILD_DIR/gbtree.so")
INSTALLED_SUM=$(lib_sum "$PG_PKGLIBDIR/gbtree.so")
gb_say "gbtree.so: built $BUILT_SUM, installed $INSTALLED_SUM (sha256, first 16 digits)"
[ "$BUILT_SUM" = "$INSTALLED_SUM" ] ||
    gb_warn "the installed gbtree.so is not the one just built (another install at the same time?)"

# ---- cluster -------------------------------------------------------------------
gb_section "cluster"
port_free() {  # nothing listening on TCP localhost:$1
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
# The GPU service starts only from shared_preload_libraries.
if [ "$DEMO_PRELOAD" = auto ]; then
    DEMO_PRELOAD=0
    if [ -e "$PG_PKGLIBDIR/libgbtree_cuda.so" ] && [ -e /dev/nvidia0 ]; then
        DEMO_PRELOAD=1
    fi
fi
PRELOAD_CONF="# gbtree not preloaded: no GPU service"
[ "$DEMO_PRELOAD" = 1 ] && PRELOAD_CONF="shared_preload_libraries = 'gbtree'"
# synchronous_commit stays on.  Under asynchronous commit SetHintBits()
# leaves a tuple's xmin-committed hint unset until WAL is flushed past the
# LSN clog keeps for its group of 32 transaction ids (the latest commit
# among them), and VACUUM marks a page all-visible only when all its tuples
# have the hint: the ANALYZE committed just before the second table's VACUUM
# left none of that table's pages all-visible, and its index-only scans read
# the heap.  With fsync off a synchronous commit costs next to nothing.
cat >>"$PGDATA_DIR/postgresql.conf" <<EOF

# gbtree demo (the same for both tables)
port = $PORT
listen_addresses = ''
unix_socket_directories = '$SOCKDIR'
shared_buffers = 256MB
maintenance_work_mem = 256MB
fsync = off
synchronous_commit = on
full_page_writes = off
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
max_parallel_maintenance_workers = 0
log_min_messages = warning
$PRELOAD_CONF
EOF
gb_run_as "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -l "$GB_SCRATCH/server.log" -w -t 120 start >/dev/null ||
    { tail -n 30 "$GB_SCRATCH/server.log"; gb_die "could not start the server"; }
gb_say "PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //') running on port $PORT, socket in $SOCKDIR"
gb_say "Server settings (both tables): shared_buffers=256MB, maintenance_work_mem=256MB, fsync=off," \
    "synchronous_commit=on, full_page_writes=off, autovacuum=off, jit=off, no parallel workers"

# psql as the test user; extra args follow.
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 -h "$SOCKDIR" -p "$PORT" -d postgres)
sql() { gb_run_as "$PG_BINDIR/${PSQL[0]}" "${PSQL[@]:1}" "$@"; }

show_server_log_tail() {
    gb_say "---- tail of the server log ----"
    tail -n 30 "$GB_SCRATCH/server.log"
}

sql -c "CREATE EXTENSION gbtree" || { show_server_log_tail; gb_die "CREATE EXTENSION gbtree failed"; }
gb_say "Extension: gbtree $(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'gbtree'")"
# pg_visibility reads the visibility map itself; without it (no contrib) the
# check below relies on pg_class.relallvisible, which VACUUM sets from it.
HAS_PGVIS=0
if [ -f "$PG_SHAREDIR/extension/pg_visibility.control" ] && sql -c "CREATE EXTENSION pg_visibility" 2>/dev/null; then
    HAS_PGVIS=1
fi

# ---- device ------------------------------------------------------------------------
HAS_DEVINFO=$(sql -c "SELECT to_regprocedure('gbtree_device_info()') IS NOT NULL")
devinfo() {  # NAME -> gbtree_device_info()'s value, or empty
    [ "$HAS_DEVINFO" = t ] || return 0
    sql -c "SELECT value FROM gbtree_device_info() WHERE name = '$1'" 2>/dev/null
}
gpu_work() {  # batches and builds the GPU service has done so far
    [ "$HAS_DEVINFO" = t ] || { echo 0; return; }
    sql -c "SELECT coalesce(sum(value::bigint), 0) FROM gbtree_device_info()
             WHERE name IN ('gpu_batches', 'gpu_builds')" 2>/dev/null || echo 0
}
# gbtree.simd = auto takes the best the CPU has; asking for more is refused.
SIMD=scalar
for s in avx512 avx2; do
    if sql -c "LOAD 'gbtree'" -c "SET gbtree.simd = $s" >/dev/null 2>&1; then SIMD=$s; break; fi
done
GPU_STATE=$(devinfo service)
if [ "$DEMO_PRELOAD" = 1 ]; then
    # the service probes the device after the server is up
    for _ in $(seq 1 60); do
        case $GPU_STATE in starting|restarting) sleep 1; GPU_STATE=$(devinfo service) ;; *) break ;; esac
    done
fi
case $GPU_STATE in
    ready) DEVICE="GPU service ready on $(devinfo device); gbtree.device = auto: = ANY batches of at least $(devinfo gpu_min_batch) keys and index builds go to the GPU, everything else runs on the CPU (SIMD: $SIMD)" ;;
    "") DEVICE="CPU (SIMD: $SIMD); this gbtree has no GPU service" ;;
    "not loaded") DEVICE="CPU (SIMD: $SIMD); GPU service not loaded (gbtree is not in shared_preload_libraries)" ;;
    *) DEVICE="CPU (SIMD: $SIMD); GPU service \"$GPU_STATE\" ($(devinfo detail))" ;;
esac
gb_say "gbtree device: $DEVICE"
# tag of a table row: where gbtree's runs went
device_tag() {  # GPU-WORK-BEFORE GPU-WORK-AFTER
    if [ "$2" -gt "$1" ] 2>/dev/null; then echo gpu; else echo cpu; fi
}

# ---- data ----------------------------------------------------------------------
gb_section "data"
gb_say "Loading $DEMO_ROWS rows into demo_btree and demo_gbtree (identical contents)"
STEP=$((DEMO_ROWS / 10000))
# Keys: ~0.9*N distinct values spread over a wide signed range, drawn N
# times, so a good share of them occur more than once.  demo_probe: 10000
# keys for the join, one in five of them absent (k + 1 is never a key).
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
CREATE TABLE demo_probe (k int8 NOT NULL);
INSERT INTO demo_probe
  SELECT CASE WHEN id % (5 * $STEP) = $STEP / 2 THEN k + 1 ELSE k END
    FROM demo_src WHERE id % $STEP = $STEP / 2 ORDER BY id;
-- the builds below then all read the same hinted, all-visible heap
VACUUM ANALYZE demo_btree;
VACUUM ANALYZE demo_gbtree;
VACUUM ANALYZE demo_probe;
EOF
sql -c "SELECT format('%s rows, %s distinct keys, %s keys occur more than once; demo_probe: %s keys',
               count(*), count(DISTINCT k),
               (SELECT count(*) FROM (SELECT k FROM demo_src GROUP BY k HAVING count(*) > 1) d),
               (SELECT count(*) FROM demo_probe))
          FROM demo_src"

# ---- index builds ----------------------------------------------------------------
gb_section "index builds"
median() { sort -g | awk 'NF { v[++n] = $1 } END { if (n == 0) print ""; else if (n % 2) print v[(n + 1) / 2]; else printf "%.3f\n", (v[n / 2] + v[n / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NF { if (!n++) lo = $1; hi = $1 } END { if (n) printf "%s-%s\n", lo, hi }'; }
build_ms() {  # TABLE AM -> prints build time in ms
    sql -c "SET client_min_messages = warning" -c "DROP INDEX IF EXISTS ${1}_k_idx" -c '\timing on' -c "CREATE INDEX ${1}_k_idx ON $1 USING $2 (k)" |
        sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n 1
}
gb_say "CREATE INDEX, $DEMO_BUILD_REPS times each, engines alternating (psql \\timing; serial builds)"
declare -A BUILDS=([btree]="" [gbtree]="")
GPU_BEFORE=$(gpu_work)
for r in $(seq 1 "$DEMO_BUILD_REPS"); do
    order="btree gbtree"; [ $((r % 2)) = 0 ] && order="gbtree btree"
    for am in $order; do
        ms=$(build_ms "demo_$am" "$am")
        [ -n "$ms" ] || { show_server_log_tail; gb_die "CREATE INDEX USING $am failed"; }
        BUILDS[$am]="${BUILDS[$am]} $ms"
    done
done
BUILD_TAG=$(device_tag "$GPU_BEFORE" "$(gpu_work)")
BT_BUILD=$(tr ' ' '\n' <<<"${BUILDS[btree]}" | median)
GB_BUILD=$(tr ' ' '\n' <<<"${BUILDS[gbtree]}" | median)
gb_say "btree  build: median $BT_BUILD ms (runs:${BUILDS[btree]})"
gb_say "gbtree build: median $GB_BUILD ms (runs:${BUILDS[gbtree]})"

# ---- visibility --------------------------------------------------------------------
gb_section "visibility"
# Index-only scans and gbtree's count scan skip the heap only for pages the
# visibility map calls all-visible: a comparison means something only when
# that holds for every page of both tables.  The CHECKPOINT writes the load's
# dirty pages now rather than during the timed runs.
sql -c "VACUUM ANALYZE demo_btree" -c "VACUUM ANALYZE demo_gbtree" -c "VACUUM ANALYZE demo_probe" -c "CHECKPOINT" ||
    { show_server_log_tail; gb_die "VACUUM ANALYZE failed"; }
VIS_BAD=0
for t in demo_btree demo_gbtree demo_probe; do
    vm="NULL"
    [ "$HAS_PGVIS" = 1 ] && vm="(SELECT all_visible FROM pg_visibility_map_summary('$t'))"
    IFS='|' read -r pages relpages relvis vmvis <<<"$(sql -c "
        SELECT pg_relation_size('$t') / current_setting('block_size')::int,
               relpages, relallvisible, coalesce($vm::text, 'n/a')
          FROM pg_class WHERE oid = '$t'::regclass")"
    line=$(printf '%-12s %6s heap pages; all-visible: %6s by pg_class.relallvisible (relpages %s), %6s by the visibility map' \
        "$t" "$pages" "$relvis" "$relpages" "$vmvis")
    if [ "$relvis" = "$pages" ] && [ "$relpages" = "$pages" ] && { [ "$vmvis" = n/a ] || [ "$vmvis" = "$pages" ]; }; then
        gb_say "$line: ok"
    else
        gb_say "$line: NOT ALL VISIBLE"
        VIS_BAD=1
    fi
done
[ "$HAS_PGVIS" = 1 ] || gb_say "(pg_visibility is not installed: relallvisible only)"
if [ "$VIS_BAD" = 1 ]; then
    gb_say "!!!!!!!! a table is not entirely all-visible after VACUUM: timings would compare heap fetches, not indexes !!!!!!!!"
    exit 1
fi

# ---- queries -----------------------------------------------------------------------
gb_section "queries"
P_KEY=$(sql -c "SELECT k FROM demo_src GROUP BY k HAVING count(*) > 1 ORDER BY k LIMIT 1 OFFSET 7")
R_LO=$(sql -c "SELECT percentile_disc(0.50) WITHIN GROUP (ORDER BY k) FROM demo_src")
R_HI=$(sql -c "SELECT percentile_disc(0.51) WITHIN GROUP (ORDER BY k) FROM demo_src")
ARR=$(sql -c "SELECT '{' || string_agg(k::text, ',' ORDER BY id) || '}'
                FROM demo_src WHERE id % $STEP = 0 AND id <= $((STEP * 10000))")
NKEYS=10000

# Point lookups as one statement: a PL/pgSQL loop runs `k = $1` once per key
# (each a complete executor run of a cached plan, as a prepared statement
# from a client would be, without the client round trip that dominates
# pgbench -S), so the per-lookup time has microsecond resolution.
for am in btree gbtree; do
    sql >/dev/null <<EOF || gb_die "creating demo_lookups_demo_$am failed"
CREATE FUNCTION demo_lookups_demo_$am(keys int8[]) RETURNS text
LANGUAGE plpgsql AS \$f\$
DECLARE
    key         int8;
    n           int8 := 0;
    found_keys  int8 := 0;
    checksum    int8 := 0;
    ids         int8;
BEGIN
    FOREACH key IN ARRAY keys LOOP
        n := n + 1;
        SELECT sum(id) INTO ids FROM demo_$am WHERE k = key;
        IF ids IS NOT NULL THEN
            found_keys := found_keys + 1;
            checksum := checksum + ids * n;
        END IF;
    END LOOP;
    RETURN format('%s lookups, %s keys found, checksum %s', n, found_keys, checksum);
END
\$f\$;
EOF
done

# name | ordered (1: compare output as is; 0: compare sorted) |
# per (0: report ms; N: report microseconds per item, N items) |
# settings of this query | SQL (TBL = table) |
# SQL whose plan is shown (default: the same)
# The count without gbtree's count scan shows what the index alone gives
# (both then aggregate an index-only scan).  The join runs as each engine's
# planner chooses with the default settings, as users run it: btree's
# nested loop or hash join, gbtree's batched join (GbtreeJoin) where it
# costs less.
GENERIC="SET plan_cache_mode = force_generic_plan; PREPARE p(int8) AS SELECT sum(id) FROM TBL WHERE k = \$1; EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) EXECUTE p($P_KEY)"
QUERIES=(
    "point lookups, time per lookup|0|$NKEYS||SELECT demo_lookups_TBL('$ARR'::int8[])|$GENERIC"
    "k = ANY($NKEYS keys): count(*)|0|0||SELECT count(*) FROM TBL WHERE k = ANY('$ARR'::int8[])|"
    "k = ANY($NKEYS keys): count(*), no count scan|0|0|SET gbtree.enable_count_scan = off;|SELECT count(*) FROM TBL WHERE k = ANY('$ARR'::int8[])|"
    "k = ANY($NKEYS keys): sum(id), rows|0|0||SELECT sum(id) FROM TBL WHERE k = ANY('$ARR'::int8[])|"
    "range (~1%): count(*)|0|0||SELECT count(*) FROM TBL WHERE k BETWEEN $R_LO AND $R_HI|"
    "range (~1%): rows (id, k)|0|0||SELECT id, k FROM TBL WHERE k BETWEEN $R_LO AND $R_HI|"
    "join: demo_probe ($NKEYS keys) on k|0|0||SELECT count(*), sum(t.id) FROM demo_probe p JOIN TBL t ON t.k = p.k|"
    "ORDER BY k LIMIT 100 OFFSET 1000|1|0||SELECT k FROM TBL ORDER BY k LIMIT 100 OFFSET 1000|"
    "min(k), max(k)|0|0||SELECT min(k), max(k) FROM TBL|"
)
SETTINGS="SET enable_seqscan = off;"
gb_say "Settings for every query: enable_seqscan=off (demo_probe is still read sequentially), jit=off, max_parallel_workers_per_gather=0"
gb_say "Timing: EXPLAIN (ANALYZE, TIMING OFF) execution time, median of $DEMO_REPS runs per engine after 1 warm-up each;"
gb_say "        both engines in one session, alternating btree, gbtree / gbtree, btree / ..."
gb_say "Plans: EXPLAIN (ANALYZE, COSTS OFF) nodes, outermost first; the point lookups show the generic plan of one lookup"

QDIR=$GB_SCRATCH/queries
mkdir -p "$QDIR"
chmod 755 "$QDIR"
MISMATCH=0
NOTES=0
ROWS=()   # result table rows: name|per|btree ms|gbtree ms|tag

# compact_plan < EXPLAIN text -> "Node / Node [heap fetches N] / ..."
compact_plan() {
    awk '
    /^(Planning|Execution) Time:/ { exit }
    /^[^ ]/ && n == 0 || /^ *->  / {
        s = $0; sub(/^ *(->  )?/, "", s); sub(/ \(actual .*$/, "", s); sub(/ \(never executed\)$/, "", s)
        node[++n] = s; next
    }
    /^ *Index Name: / { s = $0; sub(/^ *Index Name: /, "", s); node[n] = node[n] " using " s; next }
    /^ *Heap Fetches: / { s = $0; sub(/^ *Heap Fetches: /, "", s); node[n] = node[n] " [heap fetches " s "]"; next }
    END { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " / " : ""), node[i]; print "" }'
}

# time_pair PREFIX SQL-BTREE SQL-GBTREE: the timed runs, engines alternating
# in one session, under $SETTINGS and the query's $qset; writes PREFIX.times ("engine ms" lines, warm-ups left out)
time_pair() {
    local f=$1 r e order
    local -A stmt=([btree]=$2 [gbtree]=$3)
    {
        echo "$SETTINGS $qset"
        for r in $(seq 0 "$DEMO_REPS"); do
            order="btree gbtree"; [ $((r % 2)) = 1 ] && order="gbtree btree"
            for e in $order; do
                printf '\\echo @@ %s\n' "$e"
                echo "EXPLAIN (ANALYZE, TIMING OFF) ${stmt[$e]};"
            done
        done
    } >"$f.timed.sql"
    sql -f "$f.timed.sql" >"$f.timed.out" 2>&1 || return 1
    awk '/^@@ / { e = $2; seen[e]++ }
         /^Execution Time: / && seen[e] > 1 { print e, $3 }' "$f.timed.out" >"$f.times"
}

qi=0
for entry in "${QUERIES[@]}"; do
    qi=$((qi + 1))
    IFS='|' read -r name ordered per qset qtext ptext <<<"$entry"
    [ -n "$ptext" ] || ptext="EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $qtext"
    declare -A NODE=()
    fail=0
    for am in btree gbtree; do
        q=${qtext//TBL/demo_$am}
        f=$QDIR/q${qi}_$am
        # answer, for the comparison
        { echo "$SETTINGS $qset"; echo "$q;"; } >"$f.sql"
        if ! sql -f "$f.sql" >"$f.out" 2>&1; then
            gb_say "!!! $name on demo_$am FAILED:"
            sed 's/^/    /' "$f.out" | head -n 20
            fail=1
            continue
        fi
        [ "$ordered" = 1 ] || { LC_ALL=C sort "$f.out" >"$f.sorted" && mv "$f.sorted" "$f.out"; }
        # plan
        { echo "$SETTINGS $qset"; echo "${ptext//TBL/demo_$am};"; } >"$f.plan.sql"
        if ! sql -f "$f.plan.sql" >"$f.plan.out" 2>&1; then
            gb_say "!!! EXPLAIN of $name on demo_$am FAILED:"
            sed 's/^/    /' "$f.plan.out" | head -n 20
            fail=1
            continue
        fi
        NODE[$am]=$(compact_plan <"$f.plan.out")
    done
    GPU_BEFORE=$(gpu_work)
    if [ "$fail" = 0 ] && ! time_pair "$QDIR/q$qi" "${qtext//TBL/demo_btree}" "${qtext//TBL/demo_gbtree}"; then
        gb_say "!!! EXPLAIN ANALYZE of $name FAILED:"
        sed 's/^/    /' "$QDIR/q$qi.timed.out" | grep -v '^    [ @]' | head -n 20
        fail=1
    fi
    tag=$(device_tag "$GPU_BEFORE" "$(gpu_work)")
    if [ "$fail" = 0 ] && ! cmp -s "$QDIR/q${qi}_btree.out" "$QDIR/q${qi}_gbtree.out"; then
        fail=1
        gb_say "!!! MISMATCH: $name: btree and gbtree answers differ:"
        diff "$QDIR/q${qi}_btree.out" "$QDIR/q${qi}_gbtree.out" | head -n 20 | sed 's/^/    /'
    fi
    [ "$fail" = 1 ] && MISMATCH=$((MISMATCH + 1))
    status=same; [ "$fail" = 1 ] && status=DIFFERENT
    declare -A MS=() SPREAD=()
    for am in btree gbtree; do
        MS[$am]=$(awk -v e="$am" '$1 == e { print $2 }' "$QDIR/q$qi.times" 2>/dev/null | median)
        SPREAD[$am]=$(awk -v e="$am" '$1 == e { print $2 }' "$QDIR/q$qi.times" 2>/dev/null | spread)
    done
    gb_say "$name: answers $status${qset:+ (and $qset)}"
    for am in btree gbtree; do
        gb_say "$(printf '    %-6s %10s ms (runs %s ms)  plan: %s' "$am" "${MS[$am]:-?}" "${SPREAD[$am]:-?}" "${NODE[$am]:-?}")"
    done
    case ${NODE[btree]:-} in *demo_btree_k_idx*) ;;
        *) gb_say "    (note: the btree plan does not use demo_btree_k_idx)"; NOTES=$((NOTES + 1)) ;;
    esac
    case ${NODE[gbtree]:-} in *demo_gbtree_k_idx*) ;;
        *) gb_say "    (note: the gbtree plan does not use demo_gbtree_k_idx)"; NOTES=$((NOTES + 1)) ;;
    esac
    # Same plan shape on both (names aside), unless gbtree counts with its
    # Custom Scan, which is the point of it.
    if [ "${NODE[btree]//demo_btree/T}" != "${NODE[gbtree]//demo_gbtree/T}" ]; then
        case ${NODE[gbtree]:-} in
            *GbtreeCount*) gb_say "    (plans differ: gbtree counts with its count scan, btree aggregates an index-only scan)" ;;
            *) gb_say "    (note: the two plans differ)"; NOTES=$((NOTES + 1)) ;;
        esac
    fi
    case "${NODE[btree]:-} ${NODE[gbtree]:-}" in *"heap fetches "[1-9]*)
        gb_say "    (note: heap fetches: the visibility map did not cover every page read)"; NOTES=$((NOTES + 1)) ;;
    esac
    ROWS+=("$name|$per|${MS[btree]:-}|${MS[gbtree]:-}|$tag")
    unset MS SPREAD NODE
done

# ---- results ---------------------------------------------------------------------
gb_section "results ($DEMO_ROWS rows, revision $GIT_REV)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a + 0 == 0) print "n/a"; else printf "%.2f\n", b / a }'; }
fmt_t() {  # MS PER -> "12.345 ms" or, per item, "4.56 us"
    if [ -z "$1" ]; then printf 'error'
    elif [ "$2" -gt 0 ]; then awk -v m="$1" -v n="$2" 'BEGIN { printf "%.2f us", m * 1000 / n }'
    else printf '%.3f ms' "$1"; fi
}
gb_say "machine: $MACHINE"
gb_say "gbtree device: $DEVICE"
gb_say "Times: medians of $DEMO_REPS server execution times (index builds: $DEMO_BUILD_REPS client-timed runs);"
gb_say "       ratio below 1: gbtree faster.  device: where gbtree's runs went (cpu: none reached a GPU)"
echo
W=46
LINE=$(printf '%*s' $((W + 52)) '' | tr ' ' '-')
printf "%-${W}s | %12s | %12s | %12s | %s\n" "query" "btree" "gbtree" "gbtree/btree" "device"
printf '%s\n' "$LINE"
printf "%-${W}s | %12s | %12s | %12s | %s\n" "index build (CREATE INDEX)" \
    "$(fmt_t "$BT_BUILD" 0)" "$(fmt_t "$GB_BUILD" 0)" "$(ratio "$BT_BUILD" "$GB_BUILD")" "$BUILD_TAG"
for row in "${ROWS[@]}"; do
    IFS='|' read -r name per bt gb tag <<<"$row"
    printf "%-${W}s | %12s | %12s | %12s | %s\n" "$name" \
        "$(fmt_t "$bt" "$per")" "$(fmt_t "$gb" "$per")" "$(ratio "$bt" "$gb")" "$tag"
done
BT_SIZE=$(sql -c "SELECT pg_relation_size('demo_btree_k_idx')")
GB_SIZE=$(sql -c "SELECT pg_relation_size('demo_gbtree_k_idx')")
printf "%-${W}s | %12s | %12s | %12s |\n" "index size (demo_*_k_idx)" \
    "$(sql -c "SELECT pg_size_pretty($BT_SIZE::bigint)")" \
    "$(sql -c "SELECT pg_size_pretty($GB_SIZE::bigint)")" "$(ratio "$BT_SIZE" "$GB_SIZE")"
echo

# What a reader may take from the table.
NOW_SUM=$(lib_sum "$PG_PKGLIBDIR/gbtree.so")
if [ "$NOW_SUM" != "$INSTALLED_SUM" ]; then
    gb_say "WARNING: the installed gbtree.so changed during the demo ($INSTALLED_SUM -> $NOW_SUM):"
    gb_say "         sessions started after that ran another build; the figures may mix two builds."
fi
case $DEVICE in
    GPU*) gb_say "Measured: gbtree with its GPU service under gbtree.device = auto (rows tagged gpu used the GPU) against btree." ;;
    *) gb_say "Measured: gbtree's CPU path (SIMD $SIMD in-page search) against btree; no GPU was used for any figure above." ;;
esac
gb_say "Same data, same settings, both tables entirely all-visible, plans as listed, load average $START_LOAD at start, $(load_avg) at the end."
gb_say "GPU figures (H100): README.md \"Benchmarks\", test/bench/results/gpu-sql-100000000.md, gpu-build-100000000.md, test/gpu/RESULTS.md."
if [ "$MISMATCH" -gt 0 ]; then
    gb_say "!!!!!!!! $MISMATCH of ${#QUERIES[@]} queries gave DIFFERENT answers (or failed) on gbtree !!!!!!!!"
    exit 1
fi
[ "$NOTES" -gt 0 ] && gb_say "$NOTES plan note(s) above: read the plans before the times."
gb_say "All ${#QUERIES[@]} queries gave identical answers on btree and gbtree."
