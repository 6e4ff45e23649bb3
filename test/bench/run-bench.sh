#!/usr/bin/env bash
# test/bench/run-bench.sh: what `make bench` runs.  gbtree against btree on
# a throwaway PostgreSQL 15 cluster; see test/bench/README.md.
#
# Environment (make variables: `make bench BENCH_ROWS=1000000`):
#   BENCH_ROWS=200000            rows per data set (1000 .. 100000000)
#   BENCH_ENGINES=btree,gbtree   engines; gbtree-gpu is added by default when
#                                the SQL function gbtree_device_info() exists,
#                                and skipped (with a note) when it does not
#   BENCH_OUT=test/bench/results where result files go
#   BENCH_REPEAT=5               timed runs per measure (median and min-max)
#   BENCH_DATASETS=uniform,sequential,zipf,float8,timestamptz,uuid,composite
#   BENCH_PGBENCH_SECS=3         duration of each pgbench run
#   BENCH_PGBENCH_SCALE=10       scale of the `pgbench -S` comparison (0: skip)
#   BENCH_GPU_OPTIONS=           PGOPTIONS for the gbtree-gpu engine's sessions
#   BENCH_INSTALL=1              build and install gbtree first (0: use the
#                                installed one)
#   BENCH_README=1               rewrite the results section of
#                                test/bench/README.md (only with the default
#                                BENCH_OUT)
#   BENCH_MEASURES=build,queries,lookups,joins,copy,vacuum
#                                measure groups (without build, the indexes
#                                are built once, untimed, or kept); joins:
#                                inner, IN and NOT EXISTS joins of probe
#                                tables (uniform, zipf and uuid only)
#   BENCH_CLIENTS=1,8            pgbench client counts of the point lookups
#   BENCH_DEFAULTS=0             1: PostgreSQL's default settings, nothing
#                                changed (parallel plans and builds allowed)
#   BENCH_SHARED_BUFFERS=256MB   shared_buffers of the benchmark's server
#   BENCH_PRELOAD=auto           1: put gbtree in shared_preload_libraries
#                                (starts the GPU service); auto: do so when
#                                the installed gbtree has its CUDA library and
#                                an NVIDIA device node exists; 0: never
#   GB_SKIP_PACKAGES=1           do not check or install Debian packages
#                                (the GPU machine, test/gpu/device-run.sh)
#   KEEP_TMP=1                   keep the scratch directory
#   BENCH_SCRATCH=DIR            use DIR as the scratch directory and keep it;
#                                a cluster an earlier run left there is
#                                started again instead of a new one
#   BENCH_KEEP_DATA=1            leave the data sets in the cluster; a later
#                                run with the same BENCH_SCRATCH and
#                                BENCH_ROWS takes them up (100M rows are
#                                measured over several runs)
#   PG_CONFIG, CUDA              as for test/run-tests.sh (CUDA defaults to 0)
#   BENCH_DRIVER=bench.py        the Python driver run on the cluster
#                                (run-write-bench.sh: write_bench.py)
#
# Exits non-zero if any query gave different answers on two engines.

set -u
set -o pipefail
# The command as make saw it, before MAKEFLAGS goes away.
BENCH_MAKE_VARS=""
case " ${MAKEFLAGS:-} " in *" -- "*) BENCH_MAKE_VARS=${MAKEFLAGS#* -- } ;; esac
BENCH_INVOKED_BY_MAKE=0
[ -n "${MAKELEVEL:-}" ] && BENCH_INVOKED_BY_MAKE=1
unset MAKEFLAGS MFLAGS MAKELEVEL
export LANG=C.UTF-8
unset LC_ALL LC_CTYPE LC_COLLATE LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME LANGUAGE

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/lib.sh
. "$BENCH_DIR/../lib.sh"
# PG=17|18: Debian's build in a chroot (test/pg-chroot.sh), which copies
# test/bench/results back; BENCH_OUT must then be under it.
if [ "$(gb_pg_route)" = chroot ]; then
    export GIT_REV=${GIT_REV:-$(git -C "$GB_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}
    exec "$GB_ROOT/test/pg-chroot.sh" "$GB_PG_MAJOR" test/bench/run-bench.sh
fi
BENCH_DRIVER=${BENCH_DRIVER:-$BENCH_DIR/bench.py}
# only bench.py draws plots
BENCH_PLOTS=0
[ "$BENCH_DRIVER" = "$BENCH_DIR/bench.py" ] && BENCH_PLOTS=1

BENCH_ROWS=${BENCH_ROWS:-200000}
BENCH_ENGINES_SET=${BENCH_ENGINES+1}
BENCH_ENGINES=${BENCH_ENGINES:-btree,gbtree}
BENCH_OUT=${BENCH_OUT:-test/bench/results}
BENCH_REPEAT=${BENCH_REPEAT:-5}
BENCH_DATASETS=${BENCH_DATASETS:-uniform,sequential,zipf,float8,timestamptz,uuid,composite}
BENCH_PGBENCH_SECS=${BENCH_PGBENCH_SECS:-3}
BENCH_PGBENCH_SCALE=${BENCH_PGBENCH_SCALE:-10}
BENCH_GPU_OPTIONS=${BENCH_GPU_OPTIONS:-}
BENCH_INSTALL=${BENCH_INSTALL:-1}
BENCH_README=${BENCH_README:-1}
BENCH_MEASURES=${BENCH_MEASURES:-build,queries,lookups,joins,copy,vacuum}
BENCH_CLIENTS=${BENCH_CLIENTS:-1,8}
BENCH_DEFAULTS=${BENCH_DEFAULTS:-0}
BENCH_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-256MB}
BENCH_PRELOAD=${BENCH_PRELOAD:-auto}
KEEP_TMP=${KEEP_TMP:-0}
BENCH_SCRATCH=${BENCH_SCRATCH:-}
BENCH_KEEP_DATA=${BENCH_KEEP_DATA:-0}

isnum() { case $1 in ''|*[!0-9]*) return 1 ;; esac; return 0; }
isnum "$BENCH_ROWS" || gb_die "BENCH_ROWS must be a number"
[ "$BENCH_ROWS" -ge 1000 ] && [ "$BENCH_ROWS" -le 100000000 ] ||
    gb_die "BENCH_ROWS must be between 1000 and 100000000"
case $BENCH_PRELOAD in auto|0|1) ;; *) gb_die "BENCH_PRELOAD must be auto, 0 or 1" ;; esac
case $BENCH_SHARED_BUFFERS in [0-9]*[kMG]B) ;; *) gb_die "BENCH_SHARED_BUFFERS must look like 256MB or 8GB" ;; esac
isnum "$BENCH_REPEAT" && [ "$BENCH_REPEAT" -ge 1 ] || gb_die "BENCH_REPEAT must be a positive number"
isnum "$BENCH_PGBENCH_SECS" && [ "$BENCH_PGBENCH_SECS" -ge 1 ] || gb_die "BENCH_PGBENCH_SECS must be a positive number"
isnum "$BENCH_PGBENCH_SCALE" || gb_die "BENCH_PGBENCH_SCALE must be a number"
case ",$BENCH_ENGINES," in *,btree,*) ;; *) gb_die "BENCH_ENGINES must include btree (the baseline of every ratio)" ;; esac
case $BENCH_OUT in /*) ;; *) BENCH_OUT=$GB_ROOT/$BENCH_OUT ;; esac
mkdir -p "$BENCH_OUT" || gb_die "cannot create $BENCH_OUT"
BENCH_OUT=$(cd "$BENCH_OUT" && pwd)

if [ -n "${BENCH_INVOCATION:-}" ]; then
    :   # set by a wrapper (test/gpu/device-run.sh bench)
elif [ "$BENCH_INVOKED_BY_MAKE" = 1 ]; then
    BENCH_INVOCATION="make ${BENCH_TARGET:-bench}${BENCH_MAKE_VARS:+ $BENCH_MAKE_VARS}"
else
    BENCH_INVOCATION="test/bench/run-bench.sh${*:+ $*}"
fi
BENCH_START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

GB_SCRATCH=""
PGDATA_DIR=""
cleanup() {
    if [ -n "$PGDATA_DIR" ] && [ -f "$PGDATA_DIR/postmaster.pid" ]; then
        (cd "$GB_SCRATCH" && gb_run_as "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -m fast -w stop >/dev/null 2>&1) ||
            (cd "$GB_SCRATCH" && gb_run_as "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -m immediate -w stop >/dev/null 2>&1) || true
    fi
    if [ -n "$GB_SCRATCH" ] && [ -d "$GB_SCRATCH" ]; then
        if [ "$KEEP_TMP" = 1 ] || [ -n "$BENCH_SCRATCH" ]; then
            gb_say "KEEP_TMP=1: kept $GB_SCRATCH"
        else
            rm -rf "$GB_SCRATCH"
        fi
    fi
    GB_SCRATCH=""
}
trap cleanup EXIT
trap 'gb_say "interrupted"; exit 130' INT TERM

# ---- setup -------------------------------------------------------------------
gb_section "setup"
gb_say "Load average before the run: $BENCH_START_LOAD ($(gb_nproc) CPUs)"
awk -v l="${BENCH_START_LOAD%% *}" -v n="$(gb_nproc)" 'BEGIN { exit !(l + 0 > 0.75 * n) }' &&
    gb_warn "the machine is busy (load $BENCH_START_LOAD): timings will be noisy"
gb_ensure_packages
# pgbench is in postgresql-client; the plot needs gnuplot, the driver python3.
PYTHON=""
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1; then PYTHON=$(command -v "$p"); break; fi
done
need=""
[ -n "$PYTHON" ] || need="$need python3"
[ "$BENCH_PLOTS" = 1 ] && ! command -v gnuplot >/dev/null 2>&1 && need="$need gnuplot-nox"
if [ -n "$need" ] && [ "${GB_SKIP_PACKAGES:-0}" != 1 ]; then
    if [ "$GB_IS_ROOT" = 1 ]; then
        gb_say "Installing:$need"
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need ||
            { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need; } ||
            gb_warn "could not install$need"
    else
        gb_warn "missing (not root, not installing):$need"
    fi
    [ -n "$PYTHON" ] || PYTHON=$(command -v python3 || true)
fi
[ -n "$PYTHON" ] || gb_die "python3 is needed to run the benchmark driver"
[ "$BENCH_PLOTS" = 1 ] && ! command -v gnuplot >/dev/null 2>&1 && gb_warn "gnuplot not found: no plots"
gb_resolve_pg_config
[ -x "$PG_BINDIR/pgbench" ] || gb_die "$PG_BINDIR/pgbench not found"
gb_ensure_test_user
if [ -n "$BENCH_SCRATCH" ]; then
    mkdir -p "$BENCH_SCRATCH" || gb_die "cannot create $BENCH_SCRATCH"
    GB_SCRATCH=$(cd "$BENCH_SCRATCH" && pwd)
    chmod 755 "$GB_SCRATCH"
    [ "$GB_IS_ROOT" = 1 ] && chown "$GB_TEST_USER:" "$GB_SCRATCH"
    GB_TEST_HOME=$GB_SCRATCH
else
    gb_make_scratch gbtree-bench
fi
if [ "$BENCH_INSTALL" = 1 ]; then
    if [ "$GB_IS_ROOT" = 1 ]; then
        BUILD_DIR=$GB_SCRATCH/src
        gb_copy_tree "$BUILD_DIR" || gb_die "could not copy the tree"
    else
        BUILD_DIR=$GB_ROOT
    fi
    gb_build "$BUILD_DIR" >"$GB_SCRATCH/build.log" 2>&1 ||
        { tail -n 40 "$GB_SCRATCH/build.log"; gb_die "build failed"; }
    gb_install "$BUILD_DIR" >>"$GB_SCRATCH/build.log" 2>&1 ||
        { tail -n 40 "$GB_SCRATCH/build.log"; gb_die "install failed"; }
    gb_say "Built and installed gbtree from $(basename "$BUILD_DIR") (log: build.log)"
else
    gb_say "BENCH_INSTALL=0: using the installed gbtree"
fi

# ---- cluster -------------------------------------------------------------------
gb_section "cluster"
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && [ ! -e "/tmp/.s.PGSQL.$1" ]; }
PORT=""
for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 20000))
    if port_free "$p"; then PORT=$p; break; fi
done
[ -n "$PORT" ] || gb_die "no free port found"
SOCKDIR=$GB_SCRATCH
PGDATA_DIR=$GB_SCRATCH/data
cd "$GB_SCRATCH" || gb_die "cd $GB_SCRATCH"
if [ -f "$PGDATA_DIR/PG_VERSION" ]; then
    # BENCH_SCRATCH with an earlier run's cluster: its data sets may be kept
    [ -f "$PGDATA_DIR/postmaster.pid" ] &&
        gb_run_as "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -m fast -w stop >/dev/null 2>&1
    gb_say "Reusing the cluster in $PGDATA_DIR"
    sed -i '/^# gbtree benchmark: connection settings$/,$d' "$PGDATA_DIR/postgresql.conf"
else
    gb_run_as "$PG_BINDIR/initdb" -D "$PGDATA_DIR" -A trust --no-locale -E UTF8 -N >"$GB_SCRATCH/initdb.log" 2>&1 ||
        { cat "$GB_SCRATCH/initdb.log"; gb_die "initdb failed"; }
fi
# Everything not listed here is PostgreSQL's default (the result files list
# every setting whose source is not "default", initdb's included).
BENCH_SETTINGS="shared_buffers = $BENCH_SHARED_BUFFERS
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
max_parallel_maintenance_workers = 0"
[ "$BENCH_DEFAULTS" = 1 ] && BENCH_SETTINGS=""
# The GPU service starts only from shared_preload_libraries.
if [ "$BENCH_PRELOAD" = auto ]; then
    BENCH_PRELOAD=0
    if [ -e "$PG_PKGLIBDIR/libgbtree_cuda.so" ] && [ -e /dev/nvidia0 ]; then
        BENCH_PRELOAD=1
    fi
fi
if [ "$BENCH_PRELOAD" = 1 ]; then
    gb_say "gbtree preloaded: the GPU service starts with the server"
    BENCH_SETTINGS="$BENCH_SETTINGS
shared_preload_libraries = 'gbtree'"
fi
cat >>"$PGDATA_DIR/postgresql.conf" <<EOF

# gbtree benchmark: connection settings
port = $PORT
listen_addresses = ''
unix_socket_directories = '$SOCKDIR'
log_min_messages = warning
# gbtree benchmark: settings that differ from the defaults (see README.md)
$BENCH_SETTINGS
EOF
gb_run_as "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -l "$GB_SCRATCH/server.log" -w -t 120 start >/dev/null ||
    { tail -n 30 "$GB_SCRATCH/server.log"; gb_die "could not start the server"; }
gb_say "PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //') on port $PORT, socket in $SOCKDIR"

# GIT_REV from the environment wins: the GPU machine's copy of the tree has
# no trustworthy git metadata.
if [ -z "${GIT_REV:-}" ]; then
    GIT_REV=$(git -C "$GB_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [ -n "$(git -C "$GB_ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
        GIT_REV="$GIT_REV-dirty"
    fi
fi

export BENCH_ROWS BENCH_ENGINES BENCH_ENGINES_SET BENCH_OUT BENCH_REPEAT BENCH_DATASETS \
    BENCH_PGBENCH_SECS BENCH_PGBENCH_SCALE BENCH_GPU_OPTIONS BENCH_README \
    BENCH_MEASURES BENCH_CLIENTS BENCH_DEFAULTS BENCH_KEEP_DATA \
    BENCH_INVOCATION BENCH_START_LOAD BENCH_SETTINGS GIT_REV GB_ROOT GB_SCRATCH PG_BINDIR
export PGHOST=$SOCKDIR PGPORT=$PORT PGUSER=$GB_TEST_USER PGDATABASE=postgres
unset PGOPTIONS PGSERVICE PGPASSWORD

gb_section "benchmark ($BENCH_ROWS rows)"
"$PYTHON" -B "$BENCH_DRIVER"
rc=$?
if [ "$rc" -ne 0 ]; then
    gb_say "---- tail of the server log ----"
    tail -n 20 "$GB_SCRATCH/server.log"
fi
exit "$rc"
