#!/usr/bin/env bash
# test/bench/run-write-bench.sh: what `make bench-write` runs.  The write
# path (issue 18): COPY, INSERT ... SELECT, UPDATE and pgbench single-row
# inserts into the same table with a gbtree index, a btree index and no
# index; see test/bench/README.md.  Packages, build, install and the
# throwaway cluster are run-bench.sh's; this sets this benchmark's
# defaults, installs into a private PostgreSQL tree and runs write_bench.py.
#
# Environment (make variables: `make bench-write BENCH_ROWS=10000000`):
#   BENCH_ROWS=1000000           rows N of each table (1000 .. 100000000)
#   BENCH_REPEAT=3               timed runs per measure (median and min-max)
#   BENCH_INSERT_ROWS=20000      rows each pgbench run inserts (1 client:
#                                about 4 s on the 2-core machine)
#   BENCH_CLIENTS=1,8            pgbench client counts
#   BENCH_MEASURES=copy,copy_full,insert_select,insert_select_full,update,inserts
#   BENCH_OUT=test/bench/results where write-<rows>[-<tag>].md goes
#   BENCH_TAG=                   suffix of the result file's name
#                                (BENCH_TAG=baseline: write-1000000-baseline.md)
#   BENCH_SRC_REV=               build gbtree from this git revision (git
#                                archive) instead of the working tree, which
#                                may hold someone's unfinished edits
#   BENCH_PRIVATE_PG=1           install gbtree into a private copy of the
#                                PostgreSQL tree (hard links and symlinks to
#                                the installed one) in a scratch directory:
#                                another `make install` during the run cannot
#                                swap the library under the benchmark, and
#                                the run installs nothing system-wide.
#                                0: install system-wide, as make bench does
#   BENCH_GBTREE_OPTIONS=        more PGOPTIONS for the gbtree sessions, after
#                                -c gbtree.device=cpu
#   BENCH_PRELOAD=0              1: gbtree in shared_preload_libraries
#   BENCH_INSTALL, BENCH_SCRATCH, KEEP_TMP, PG_CONFIG, CUDA: as for run-bench.sh
#
# Exits non-zero if the tables' contents differ between engines.

set -u
set -o pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/lib.sh
. "$BENCH_DIR/../lib.sh"

export BENCH_ROWS=${BENCH_ROWS:-1000000}
export BENCH_REPEAT=${BENCH_REPEAT:-3}
export BENCH_INSERT_ROWS=${BENCH_INSERT_ROWS:-20000}
export BENCH_MEASURES=${BENCH_MEASURES:-copy,copy_full,insert_select,insert_select_full,update,inserts}
export BENCH_TAG=${BENCH_TAG:-}
export BENCH_INSTALL=${BENCH_INSTALL:-1}
export BENCH_GBTREE_OPTIONS=${BENCH_GBTREE_OPTIONS:-}
export BENCH_WRITE_UNIQUE=${BENCH_WRITE_UNIQUE:-0}
BENCH_SRC_REV=${BENCH_SRC_REV:-}
BENCH_PRIVATE_PG=${BENCH_PRIVATE_PG:-1}
# PostgreSQL's defaults; write_bench.py turns off autovacuum and jit itself
# (ALTER SYSTEM), the only two settings it changes.  No preload: the GPU
# service's hooks would be part of the measured insert path.
export BENCH_DEFAULTS=1 BENCH_PRELOAD=${BENCH_PRELOAD:-0} BENCH_PGBENCH_SCALE=0 BENCH_README=0
export BENCH_TARGET=bench-write BENCH_DRIVER=$BENCH_DIR/write_bench.py
if [ -z "${BENCH_INVOCATION:-}" ] && [ -z "${MAKELEVEL:-}" ]; then
    export BENCH_INVOCATION="test/bench/run-write-bench.sh${*:+ $*}"
fi
case $BENCH_INSERT_ROWS in ''|*[!0-9]*|0) gb_die "BENCH_INSERT_ROWS must be a positive number" ;; esac
case $BENCH_TAG in *[!A-Za-z0-9_.-]*) gb_die "BENCH_TAG may hold letters, digits, '.', '_' and '-' only" ;; esac
[ -z "$BENCH_SRC_REV" ] || [ "$BENCH_INSTALL" = 1 ] || gb_die "BENCH_SRC_REV needs BENCH_INSTALL=1"

WB_TMP=""
cleanup() {
    if [ -n "$WB_TMP" ] && [ -d "$WB_TMP" ]; then
        if [ "${KEEP_TMP:-0}" = 1 ]; then gb_say "KEEP_TMP=1: kept $WB_TMP"; else rm -rf "$WB_TMP"; fi
    fi
}
trap cleanup EXIT
trap 'gb_say "interrupted"; exit 130' INT TERM

if [ "$BENCH_PRIVATE_PG" = 1 ] || [ -n "$BENCH_SRC_REV" ]; then
    gb_section "write benchmark: private install"
    gb_ensure_packages
    gb_ensure_test_user
    gb_resolve_pg_config
    WB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/gbtree-write.XXXXXX") || gb_die "mktemp failed"
    chmod 755 "$WB_TMP"
fi

# A private PostgreSQL tree: the server finds $libdir and the extension
# directory relative to its own binary, so a hard-linked copy of bin/ next
# to lib/ and share/ directories of our own is a separate installation.
# Everything but gbtree's files is a symlink to the installed one.
if [ "$BENCH_PRIVATE_PG" = 1 ]; then
    PRIV=$WB_TMP/pg
    mirror_dir() {   # mirror_dir SYSTEM_DIR: a real directory of symlinks
        local d=$PRIV$1 f
        mkdir -p "$d"
        for f in "$1"/* "$1"/.[!.]*; do
            [ -e "$f" ] || continue
            case $(basename "$f") in gbtree.so|gbtree.control|gbtree--*|libgbtree_cuda.so) continue ;; esac
            ln -s "$f" "$d/"
        done
    }
    bindir=$("$PG_CONFIG" --bindir)
    mkdir -p "$PRIV$bindir"
    for f in "$bindir"/*; do
        ln "$f" "$PRIV$bindir/" 2>/dev/null || cp -p "$f" "$PRIV$bindir/" || gb_die "cannot copy $f"
    done
    pkglibdir=$("$PG_CONFIG" --pkglibdir)
    sharedir=$("$PG_CONFIG" --sharedir)
    mirror_dir "$pkglibdir"
    mirror_dir "$sharedir"
    rm -f "$PRIV$sharedir/extension"
    mirror_dir "$sharedir/extension"
    # what PGXS builds against, where pg_config now says it is
    for opt in --includedir-server --includedir --pkgincludedir --libdir --localedir; do
        d=$("$PG_CONFIG" "$opt")
        [ -e "$PRIV$d" ] || [ ! -e "$d" ] || { mkdir -p "$(dirname "$PRIV$d")" && ln -s "$d" "$PRIV$d"; }
    done
    export PG_CONFIG=$PRIV$bindir/pg_config BENCH_PRIVATE_PG_DIR=$PRIV
    [ "$("$PG_CONFIG" --pkglibdir)" = "$PRIV$pkglibdir" ] ||
        gb_die "PostgreSQL is not relocatable here ($PG_CONFIG --pkglibdir: $("$PG_CONFIG" --pkglibdir)); try BENCH_PRIVATE_PG=0"
    gb_say "Private PostgreSQL tree: $PRIV (gbtree installs there)"
fi

if [ -n "$BENCH_SRC_REV" ]; then
    rev=$(git -C "$GB_ROOT" rev-parse --verify -q "$BENCH_SRC_REV^{commit}") ||
        gb_die "BENCH_SRC_REV=$BENCH_SRC_REV is not a commit"
    src=$WB_TMP/src
    mkdir -p "$src"
    git -C "$GB_ROOT" archive "$rev" | tar -C "$src" -xf - || gb_die "git archive $rev failed"
    [ "$GB_IS_ROOT" = 1 ] && chown -R "$GB_TEST_USER:" "$src"
    GB_TEST_HOME=$WB_TMP
    gb_build "$src" >"$WB_TMP/build.log" 2>&1 && gb_install "$src" >>"$WB_TMP/build.log" 2>&1 ||
        { tail -n 40 "$WB_TMP/build.log"; gb_die "build of $BENCH_SRC_REV failed"; }
    export GIT_REV BENCH_GBTREE_SO_MD5 BENCH_SRC_REV
    GIT_REV=$(git -C "$GB_ROOT" rev-parse --short "$rev")
    BENCH_GBTREE_SO_MD5=$(md5sum <"$src/gbtree.so" | cut -d' ' -f1)
    export BENCH_INSTALL=0
    gb_say "Built and installed gbtree at $GIT_REV (git archive; log: $WB_TMP/build.log)"
fi

"$BENCH_DIR/run-bench.sh" "$@"
