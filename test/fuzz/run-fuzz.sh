#!/usr/bin/env bash
# test/fuzz/run-fuzz.sh: run the differential fuzzer against a throwaway
# PostgreSQL cluster of its own.
#
#   test/fuzz/run-fuzz.sh [SECONDS [SEED]]      (make fuzz FUZZ_MINUTES=N [FUZZ_SEED=S])
#
# FUZZ_WRITERS (3) and FUZZ_BATCHERS (1) set the number of sessions of each
# kind; FUZZ_TYPES (a comma list; FUZZ_TYPES=text: the text-key twins tx,ct,ut) narrows the key types, for more contention.  The extension must be installed (make install).  As root, the cluster runs
# as the unprivileged test user.  Exit status: 0 clean, non-zero on any
# difference (the seed is printed).  FUZZ_KEEP=1 keeps the cluster's
# directory after a failure (the server stopped), for a look at the data.
# FUZZ_PRELOAD=1 preloads gbtree, so that every change is logged by its own
# WAL records, with wal_consistency_checking = 'gbtree'; after a clean run
# the server is killed (immediate stop) and restarted, its crash recovery
# replays the records since the last checkpoint and checks each page it
# rebuilds against the image the record carries, and then every gbtree
# index must pass gbtree_check(index, heapallindexed).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/lib.sh
. "$HERE/../lib.sh"

SECS=${1:-60}
SEED=${2:-}
WRITERS=${FUZZ_WRITERS:-3}
BATCHERS=${FUZZ_BATCHERS:-1}
TYPES=${FUZZ_TYPES:-}
gb_resolve_pg_config
BINDIR=$("$PG_CONFIG" --bindir)
gb_ensure_test_user
gb_make_scratch gbtree-fuzz
PORT=$((20000 + RANDOM % 20000))
DATA=$GB_SCRATCH/data
cp "$HERE/gbtree_fuzz.py" "$GB_SCRATCH/" && chmod 755 "$GB_SCRATCH/gbtree_fuzz.py"
mkdir "$GB_SCRATCH/ts"    # a second tablespace
[ "$GB_IS_ROOT" = 1 ] && chown "$GB_TEST_USER:" "$GB_SCRATCH/gbtree_fuzz.py" "$GB_SCRATCH/ts"

rc=0
stop() {
    if [ "$rc" != 0 ] && [ "${FUZZ_KEEP:-0}" = 1 ]; then
        gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1
        gb_say "FUZZ_KEEP=1: cluster kept in $DATA (port $PORT)"
        return
    fi
    gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -m immediate stop >/dev/null 2>&1
    rm -rf "$GB_SCRATCH"
}
trap stop EXIT

gb_run_as "$BINDIR/initdb" -D "$DATA" --no-locale -A trust >/dev/null || gb_die "initdb failed"
OPTS="-p $PORT -k $GB_SCRATCH -c listen_addresses= -c fsync=off -c max_connections=30 -c autovacuum_naptime=5s -c max_prepared_transactions=10"
[ "${FUZZ_PRELOAD:-0}" = 1 ] && OPTS="$OPTS -c shared_preload_libraries=gbtree -c wal_consistency_checking=gbtree"
start_server() {
    gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -l "$GB_SCRATCH/server.log" -w -t 300 -o "$OPTS" \
        start >/dev/null || { tail -20 "$GB_SCRATCH/server.log"; gb_die "server start failed"; }
}
start_server

# what every session was doing, for a run that does not end
hang_report() {
    local psql=("$BINDIR/psql" -X -qA -h "$GB_SCRATCH" -p "$PORT" -d postgres -P pager=off) pid
    gb_say "gbtree_fuzz: still running ${FUZZ_HANG_SECONDS}s past its ${SECS}s (stopped in 45s); the sessions:"
    gb_run_as "${psql[@]}" -c "SELECT pid, pg_blocking_pids(pid) AS blocked_by, backend_type, state,
            wait_event_type || ':' || wait_event AS waiting, now() - xact_start AS in_xact,
            left(regexp_replace(query, '\s+', ' ', 'g'), 200) AS query
        FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' ORDER BY pid" \
        -c "SELECT locktype, relation::regclass, transactionid, virtualxid, mode, pid
        FROM pg_locks WHERE NOT granted" -c "SELECT gid, prepared, owner FROM pg_prepared_xacts" 2>&1
    # the fuzzer's own stacks (it registers SIGUSR1 with faulthandler)
    pkill -USR1 -f "^/usr/bin/python3 $GB_SCRATCH/gbtree_fuzz.py"
    sleep 2
    if command -v gdb >/dev/null && [ "$GB_IS_ROOT" = 1 ]; then
        for pid in $(gb_run_as "${psql[@]}" -t -c "SELECT pid FROM pg_stat_activity
                WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()" 2>/dev/null); do
            gb_say "backend $pid:"
            timeout 30 gdb -p "$pid" -batch -ex bt 2>/dev/null | grep '^#' | head -30
        done
    fi
    gb_say "server log, last lines:"
    tail -n 30 "$GB_SCRATCH/server.log"
}

# A run that does not end (a session waiting for good) is reported with
# what each session was waiting for, then stopped.
FUZZ_HANG_SECONDS=${FUZZ_HANG_SECONDS:-75}
( sleep $((SECS + FUZZ_HANG_SECONDS)) </dev/null >/dev/null 2>&1 && hang_report ) &
WATCHDOG=$!
gb_run_as timeout --kill-after=10 $((SECS + FUZZ_HANG_SECONDS + 45)) /usr/bin/python3 "$GB_SCRATCH/gbtree_fuzz.py" \
    --dsn "host=$GB_SCRATCH port=$PORT dbname=postgres" \
    --seconds "$SECS" --writers "$WRITERS" --batchers "$BATCHERS" --tablespace "$GB_SCRATCH/ts" \
    ${SEED:+--seed "$SEED"} ${TYPES:+--types "$TYPES"}
rc=$?
{ [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && gb_say "gbtree_fuzz: FAILED: stopped $((FUZZ_HANG_SECONDS + 45))s past its ${SECS}s"
# (the sleep killed first would let the report run: it only follows a
# sleep that ran out)
kill "$WATCHDOG" 2>/dev/null
pkill -P "$WATCHDOG" 2>/dev/null
wait "$WATCHDOG" 2>/dev/null
if grep -q "PANIC\|server process .* was terminated" "$GB_SCRATCH/server.log"; then
    gb_say "server log shows a crash:"
    grep -B2 -A10 "PANIC\|was terminated" "$GB_SCRATCH/server.log" | head -40
    rc=1
fi
if [ "$rc" = 0 ] && [ "${FUZZ_PRELOAD:-0}" = 1 ]; then
    gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -m immediate stop >/dev/null
    start_server
    if grep -q "inconsistent page found\|PANIC" "$GB_SCRATCH/server.log"; then
        gb_say "crash recovery found an inconsistent page:"
        grep -B2 -A6 "inconsistent page found\|PANIC" "$GB_SCRATCH/server.log" | head -30
        rc=1
    elif ! grep -q "redo done at" "$GB_SCRATCH/server.log"; then
        gb_say "crash recovery replayed nothing"
        rc=1
    else
        # every valid gbtree index of every table the fuzzer left
        out=$(gb_run_as "$BINDIR/psql" -X -qAt -v ON_ERROR_STOP=1 -h "$GB_SCRATCH" -p "$PORT" -d postgres -c "
            SELECT count(*) FROM (SELECT gbtree_check(c.oid::regclass, true)
              FROM pg_class c JOIN pg_am a ON a.oid = c.relam JOIN pg_index i ON i.indexrelid = c.oid
             WHERE a.amname = 'gbtree' AND i.indisvalid AND c.relpersistence <> 't') x" 2>&1)
        if [[ "$out" =~ ^[0-9]+$ ]] && [ "$out" -gt 0 ]; then
            gb_say "gbtree_fuzz: crash recovery replayed $(grep -o 'redo done at [^ ]*' "$GB_SCRATCH/server.log" | tail -1 | cut -d' ' -f4) (from $(grep -o 'redo starts at [^ ]*' "$GB_SCRATCH/server.log" | tail -1 | cut -d' ' -f4)) under wal_consistency_checking; gbtree_check(heapallindexed) passed on $out gbtree indexes"
        else
            gb_say "after crash recovery, gbtree_check: $out"
            rc=1
        fi
    fi
fi
exit $rc
