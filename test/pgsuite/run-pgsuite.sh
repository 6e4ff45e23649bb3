#!/usr/bin/env bash
# test/pgsuite/run-pgsuite.sh: PostgreSQL's own regression suite as is
# (btree) and with every btree CREATE INDEX rewritten to USING gbtree, the
# two outputs of each test compared against the list of known differences;
# then a third run, btree with the statements that gbtree refused refused
# too, compared with the gbtree run again (README.md in this directory).
#
#   PG_CONFIG=.../bin/pg_config PGSUITE_PG_SRC=/path/to/postgresql-15.x \
#       test/pgsuite/run-pgsuite.sh
#
# make test-cassert runs it as harness suite pgsuite, against the cached
# assertion-enabled build and its source.  gbtree must be installed into
# PG_CONFIG's installation, whose version must be the source's.
#
# Environment:
#   PGSUITE_PG_SRC=dir      PostgreSQL source tree (src/test/regress: the
#                           scripts, expected files, data, regress.c;
#                           contrib/spi: autoinc.c, refint.c)
#   PGSUITE_SCHEDULE=file   schedule (default: the source's parallel_schedule)
#   PGSUITE_RECORD=dir      also write the differences found as new lists,
#                           dir/allowed.txt and dir/allowed-same.txt (review
#                           before replacing those here)
#   PGSUITE_TIMEOUT=seconds per suite run (default 1200)
#   PGSUITE_SCRATCH=dir     work here (kept) instead of a new scratch
#                           directory under /tmp (removed unless KEEP_TMP=1)
#
# Prints "ok   NAME" / "FAIL NAME (why)" for the rewrite, the three suite
# runs and each test of the schedule twice (TEST: gbtree against btree,
# same/TEST: gbtree against the third run), the time of each run, and last
# "N passed, N failed"; the exit status is 0 only when nothing failed.

set -u
set -o pipefail
exec 2>&1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/lib.sh
. "$HERE/../lib.sh"
export LANG=C.UTF-8
unset LC_ALL

NPASS=0
NFAIL=0
FINAL=0
ok()   { echo "ok   $1"; NPASS=$((NPASS + 1)); }
bad()  { echo "FAIL $1${2:+ ($2)}"; NFAIL=$((NFAIL + 1)); }
S=""
on_exit() {
    local rc=$? d
    # a pg_regress killed by its time limit leaves its server running
    for d in "${S:-/nonexistent}"/tmp_*/data; do
        [ -f "$d/postmaster.pid" ] &&
            gb_run_as "$PG_BINDIR/pg_ctl" -D "$d" -m immediate -w stop >/dev/null 2>&1
    done
    if [ -n "${GB_SCRATCH:-}" ] && [ -d "$GB_SCRATCH" ]; then
        if [ "${KEEP_TMP:-0}" = 1 ]; then
            echo "KEEP_TMP=1: scratch directory kept: $GB_SCRATCH"
        else
            rm -rf "$GB_SCRATCH"
        fi
    fi
    if [ "$FINAL" = 0 ]; then
        echo "$NPASS passed, $NFAIL failed"
        [ "$rc" -eq 0 ] && rc=1
    fi
    exit "$rc"
}
trap on_exit EXIT
die() { bad setup "$*"; exit 1; }

[ -n "${PGSUITE_PG_SRC:-}" ] || die "PGSUITE_PG_SRC is not set (a PostgreSQL source tree)"
REG=$PGSUITE_PG_SRC/src/test/regress
SPI=$PGSUITE_PG_SRC/contrib/spi
[ -f "$REG/parallel_schedule" ] && [ -f "$REG/regress.c" ] && [ -f "$SPI/refint.c" ] ||
    die "$PGSUITE_PG_SRC is not a PostgreSQL source tree"
SCHEDULE=${PGSUITE_SCHEDULE:-$REG/parallel_schedule}
gb_resolve_pg_config >/dev/null
SRC_VERSION=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'\$/\1/p" "$PGSUITE_PG_SRC/configure")
PG_VERSION=$("$PG_CONFIG" --version | sed 's/^PostgreSQL //')
[ "$SRC_VERSION" = "$PG_VERSION" ] ||
    die "the source is PostgreSQL $SRC_VERSION, PG_CONFIG's installation $PG_VERSION"
[ -f "$PG_SHAREDIR/extension/gbtree.control" ] || die "gbtree is not installed into $PG_SHAREDIR"
PG_REGRESS=$PG_PKGLIBDIR/pgxs/src/test/regress/pg_regress
[ -x "$PG_REGRESS" ] || die "no $PG_REGRESS"
gb_ensure_test_user
if [ -n "${PGSUITE_SCRATCH:-}" ]; then
    # the caller's (test/run-tests.sh): it removes it, or keeps it
    mkdir -p "$PGSUITE_SCRATCH" || die "cannot create $PGSUITE_SCRATCH"
    [ "$GB_IS_ROOT" = 1 ] && chown "$GB_TEST_USER:" "$PGSUITE_SCRATCH"
    S=$PGSUITE_SCRATCH
else
    gb_make_scratch gbtree-pgsuite
    S=$GB_SCRATCH
fi
echo "PostgreSQL $PG_VERSION regression suite ($REG), scratch $S"

# ---- the copies of the suite ---------------------------------------------------
# Only what pg_regress and the scripts read: scripts, expected outputs,
# data files, and resultmap (alternative expected files by platform).
# Real copies (-L): rewrite.py edits them in place, and must never edit
# the source through a symbolic link.
for d in btree gbtree same; do
    mkdir -p "$S/$d" &&
    cp -rL "$REG/sql" "$REG/expected" "$REG/data" "$REG/resultmap" "$S/$d/" ||
        die "could not copy $REG"
done
if RW=$(python3 "$HERE/rewrite.py" "$S"/gbtree/sql/*.sql); then
    echo "$RW"
    N_RW=${RW##* }
    # A rewrite that finds (almost) nothing would compare the suite with
    # itself and pass.
    if [ "$N_RW" -ge 500 ]; then
        ok rewrite
    else
        bad rewrite "only $N_RW CREATE INDEX statements rewritten"
    fi
else
    echo "$RW"
    die "rewrite.py failed"
fi

# ---- the C functions the suite loads (regress.so, refint.so, autoinc.so) ----
mkdir -p "$S/lib" && cp "$REG/regress.c" "$SPI/refint.c" "$SPI/autoinc.c" "$S/lib/" || die "copy failed"
# REFINT_VERBOSE as contrib/spi builds it: triggers expects its notices
printf 'MODULES = regress refint autoinc\nPG_CPPFLAGS = -I%s -DREFINT_VERBOSE\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n' \
    "$REG" >"$S/lib/Makefile"
[ "$GB_IS_ROOT" = 1 ] && chown -R "$GB_TEST_USER:" "$S"
(cd "$S/lib" && gb_run_as make -s PG_CONFIG="$PG_CONFIG" >"$S/lib/build.log" 2>&1) ||
    { tail -n 30 "$S/lib/build.log"; die "could not build regress.so, refint.so, autoinc.so"; }

# ---- the two runs ------------------------------------------------------------
# run_suite NAME: pg_regress on a temporary instance with gbtree loaded
# (both runs: the only difference is the rewrite); its own verdict against
# the expected files is not used, the comparison below is.
run_suite() {
    local name=$1 t0=$SECONDS rc
    gb_run_as mkdir -p "$S/out_$name"
    (cd "$S" && gb_run_as timeout --kill-after=20 "${PGSUITE_TIMEOUT:-1200}" "$PG_REGRESS" \
        --temp-instance="$S/tmp_$name" \
        --bindir="$PG_BINDIR" \
        --dlpath="$S/lib" \
        --inputdir="$S/$name" \
        --outputdir="$S/out_$name" \
        --schedule="$SCHEDULE" \
        --max-concurrent-tests=20 \
        --no-locale --encoding=UTF8 \
        --load-extension=gbtree \
        --temp-config="$HERE/pgsuite.conf" >"$S/out_$name/pg_regress.log" 2>&1)
    rc=$?
    TIME[$name]=$((SECONDS - t0))
    echo "suite run $name: $((SECONDS - t0)) s, pg_regress exit status $rc," \
        "$(grep -cE '\.\.\. (FAILED|failed)' "$S/out_$name/pg_regress.log") tests differ from PostgreSQL's expected output"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        bad "suite-$name" "timed out"
    elif grep -qE 'terminated by signal|TRAP:|PANIC' "$S/tmp_$name/log/postmaster.log" 2>/dev/null; then
        grep -nE -B2 -A8 'terminated by signal|TRAP:|PANIC' "$S/tmp_$name/log/postmaster.log" | head -n 60
        bad "suite-$name" "server crashed"
    elif ! grep -q 'tests passed\|tests failed\|failed (ignoring' "$S/out_$name/pg_regress.log"; then
        tail -n 30 "$S/out_$name/pg_regress.log"
        bad "suite-$name" "pg_regress did not finish (exit status $rc)"
    elif [ "$name" = btree ] && ! unexpected=$(btree_run_as_expected); then
        bad "suite-$name" "differs from PostgreSQL's expected output in:$unexpected"
    else
        ok "suite-$name"
    fi
    # pg_regress keeps a failed run's instance; its log is all we need (a
    # timed-out run's server is still up)
    [ -f "$S/tmp_$name/data/postmaster.pid" ] &&
        gb_run_as "$PG_BINDIR/pg_ctl" -D "$S/tmp_$name/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$S/tmp_$name/data"
}

# The btree run must give PostgreSQL's expected output, except where the
# extension itself shows (psql's \dA, amutils' property list and
# opr_sanity's operator list name gbtree): a suite that failed wholesale
# (regress.so not loaded, data files missing) would fail alike in every
# run, and the comparisons would pass.
BTREE_DIFFERS="amutils opr_sanity psql"
btree_run_as_expected() {
    local t extra=""
    for t in $(awk '/\(ignored\)/ { next }
                    ($2 == "..." && $3 != "ok") || ($1 == "test" && $3 == "..." && $4 != "ok") {
                        print ($1 == "test" ? $2 : $1) }' "$S/out_btree/pg_regress.log"); do
        case " $BTREE_DIFFERS " in *" $t "*) ;; *) extra="$extra $t" ;; esac
    done
    echo "$extra"
    [ -z "$extra" ]
}
declare -A TIME
run_suite btree
run_suite gbtree

# The third run, "same": btree again, but the statements that gbtree
# refused are rewritten here too, so they fail alike and both runs have
# the same indexes.  Against it the gbtree run must agree without the
# knock-ons of missing indexes (allowed-same.txt is short).
python3 "$HERE/compare.py" --schedule "$SCHEDULE" --right-out "$S/out_gbtree" \
    --refused "$S/refused.txt" || die "compare.py --refused failed"
python3 "$HERE/rewrite.py" --only "$S/refused.txt" "$S"/same/sql/*.sql || die "rewrite.py --only failed"
[ "$GB_IS_ROOT" = 1 ] && chown -R "$GB_TEST_USER:" "$S/same"
run_suite same

# ---- the comparisons -----------------------------------------------------------
# compare LIST PREFIX LEFT [--record FILE]: LEFT's outputs against the
# gbtree run's, the tests named PREFIXTEST
compare() {
    local list=$1 prefix=$2 left=$3 rc d subst=(); shift 3
    for d in btree gbtree same; do
        subst+=(--subst "$S/$d=@srcdir@" --subst "$S/out_$d=@outdir@")
    done
    python3 "$HERE/compare.py" --schedule "$SCHEDULE" --orig-sql "$S/btree/sql" \
        --left-sql "$S/$left/sql" --left-out "$S/out_$left" \
        --right-sql "$S/gbtree/sql" --right-out "$S/out_gbtree" \
        "${subst[@]}" --allowed "$HERE/$list" --prefix "$prefix" \
        --pg-version "$PG_VERSION" "$@" >"$S/compare_$left.log"
    rc=$?
    cat "$S/compare_$left.log"
    [ "$rc" -le 1 ] || bad "compare-$left" "compare.py exit status $rc"
    NPASS=$((NPASS + $(grep -c '^ok   ' "$S/compare_$left.log")))
    NFAIL=$((NFAIL + $(grep -c '^FAIL ' "$S/compare_$left.log")))
}
rec=() rec_same=()
if [ -n "${PGSUITE_RECORD:-}" ]; then
    rec=(--record "$PGSUITE_RECORD/allowed.txt")
    rec_same=(--record "$PGSUITE_RECORD/allowed-same.txt")
fi
compare allowed.txt "" btree "${rec[@]+"${rec[@]}"}"
compare allowed-same.txt same/ same "${rec_same[@]+"${rec_same[@]}"}"
echo "pgsuite: $N_RW CREATE INDEX statements rewritten, $(wc -l <"$S/refused.txt") refused;" \
    "suite runs: btree ${TIME[btree]} s, gbtree ${TIME[gbtree]} s, same ${TIME[same]} s"
FINAL=1
echo "$NPASS passed, $NFAIL failed"
[ "$NFAIL" -eq 0 ] && [ "$NPASS" -gt 0 ]
