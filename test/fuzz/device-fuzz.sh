#!/bin/bash
# test/fuzz/device-fuzz.sh: many runs of the differential fuzzer at once,
# on the GPU host's 16 cores (the device tool's machine; the fuzzer needs
# no GPU), where this machine's two run one at a time.  Rare races show
# there: one run in a hundred met the multi-word split bug that
# sql/t31_separator_reuse.sql now reaches on purpose.
#
# Here, once: the PostgreSQL 15 bundle (../shared/gpu-host/README.md) in
# .gpuhost/, and psycopg2 as a wheel beside it:
#   pip download psycopg2-binary --only-binary=:all: --python-version 3.12 \
#       --platform manylinux2014_x86_64 -d .gpuhost/wheels
# Then a device call with carry [".gpuhost"]:
#   N=15 SECS=40 ROUNDS=2 test/fuzz/device-fuzz.sh
# N runs at a time (random seeds), ROUNDS times; TYPES is FUZZ_TYPES
# (text); a run still going after WATCH seconds has its sessions' waits
# shown (pg_stat_activity, ungranted locks); GRACE bounds a run past
# SECS.  $OUT/summary.txt holds each seed's exit status, and a failed
# run's log stays in $OUT.
set -u
cd "$(dirname "$0")/../.."
source .gpuhost/pg-up.sh >/dev/null 2>&1 || { echo "pg-up.sh failed"; exit 1; }
unset PGUSER PGHOST PGPORT PGDATABASE PGDATA
W=$(ls "$PWD"/.gpuhost/wheels/psycopg2*.whl | head -1)
mkdir -p /opt/pylib && (cd /opt/pylib && python3 -m zipfile -e "$W" .) && chmod -R a+rX /opt/pylib
export PYTHONPATH=/opt/pylib
python3 -c "import psycopg2" || exit 1
make -j16 CUDA=0 with_llvm=no >/tmp/build.log 2>&1 && make install CUDA=0 with_llvm=no >/dev/null 2>&1 ||
    { tail -30 /tmp/build.log; exit 1; }
# the image's python3 (the one with the wheel's ABI), not /usr/bin's
sed -i "s#/usr/bin/python3#$(command -v python3)#" test/fuzz/run-fuzz.sh
export PG_CONFIG=$(command -v pg_config)
# run-fuzz.sh creates it too, but N of them at once race on useradd
id gbtree >/dev/null 2>&1 || useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /bin/sh gbtree
N=${N:-15}; SECS=${SECS:-40}; ROUNDS=${ROUNDS:-2}
: > "$OUT/summary.txt"
for r in $(seq 1 "$ROUNDS"); do
    for i in $(seq 1 "$N"); do
        s=$((RANDOM * 32768 + RANDOM))
        (
            env FUZZ_TYPES="${TYPES:-text}" timeout $((SECS + ${GRACE:-120})) \
                test/fuzz/run-fuzz.sh "$SECS" "$s" > "$OUT/fz_$s.log" 2>&1
            rc=$?
            echo "seed $s rc=$rc" >> "$OUT/summary.txt"
            [ $rc = 0 ] && rm -f "$OUT/fz_$s.log"
        ) &
    done
    for _ in $(seq 1 "${WATCH:-110}"); do
        [ -z "$(jobs -rp)" ] && break
        sleep 1
    done
    if [ -n "$(jobs -rp)" ]; then
        for d in /tmp/gbtree-fuzz.*; do
            sock=$(ls "$d"/.s.PGSQL.* 2>/dev/null | grep -v lock | head -1)
            [ -n "$sock" ] || continue
            port=${sock##*.}
            echo "== still running: $d (port $port)"
            runuser -u gbtree -- psql -X -h "$d" -p "$port" -d postgres -Atc \
                "SELECT pid, backend_type, state, wait_event_type, wait_event, now() - query_start, left(query, 150)
                 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state IS DISTINCT FROM 'idle'" 2>&1 | head -20
            runuser -u gbtree -- psql -X -h "$d" -p "$port" -d postgres -Atc \
                "SELECT locktype, relation::regclass, mode, granted, pid FROM pg_locks WHERE NOT granted" 2>&1 | head -10
        done | cut -c1-300 > "$OUT/running_$r.txt"
    fi
    wait
    echo "round $r: $(grep -c 'rc=0' "$OUT/summary.txt") of $(wc -l < "$OUT/summary.txt") clean"
done
grep -v 'rc=0' "$OUT/summary.txt"
for f in "$OUT"/fz_*.log; do
    [ -f "$f" ] || continue
    echo "== $f"
    grep -a -A12 "FAILED\|Traceback\|^ERROR\|unexpected error" "$f" | cut -c1-400 | head -30
done
exit 0
