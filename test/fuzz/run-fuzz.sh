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
gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -l "$GB_SCRATCH/server.log" -w \
    -o "-p $PORT -k $GB_SCRATCH -c listen_addresses= -c fsync=off -c max_connections=30 -c autovacuum_naptime=5s -c max_prepared_transactions=10" \
    start >/dev/null || { tail -20 "$GB_SCRATCH/server.log"; gb_die "server start failed"; }

gb_run_as /usr/bin/python3 "$GB_SCRATCH/gbtree_fuzz.py" \
    --dsn "host=$GB_SCRATCH port=$PORT dbname=postgres" \
    --seconds "$SECS" --writers "$WRITERS" --batchers "$BATCHERS" --tablespace "$GB_SCRATCH/ts" \
    ${SEED:+--seed "$SEED"} ${TYPES:+--types "$TYPES"}
rc=$?
if grep -q "PANIC\|server process .* was terminated" "$GB_SCRATCH/server.log"; then
    gb_say "server log shows a crash:"
    grep -B2 -A10 "PANIC\|was terminated" "$GB_SCRATCH/server.log" | head -40
    rc=1
fi
exit $rc
