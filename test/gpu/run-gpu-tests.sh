#!/usr/bin/env bash
# test/gpu/run-gpu-tests.sh: what `make test-gpu` runs, on a machine with an
# NVIDIA GPU.  Needs a running PostgreSQL 15 reachable through the PG*
# environment, with this tree's gbtree installed and in
# shared_preload_libraries (test/gpu/README.md shows the set-up used on the
# GPU machine).  Suites:
#   cuda      CUDA unit tests and compute-sanitizer (make cuda-test)
#   service   the service is up and owns the device
#   regress   the pg_regress suite with every batch on the GPU
#             (gbtree.gpu_min_batch = 1 under gbtree.device = auto)
#   diff      test/gpu/gpu_diff.sql: gbtree.device = gpu against btree
#   fresh     concurrent inserters while GPU batches run, in REPEATABLE READ,
#             gbtree on the GPU against the btree twin in the same snapshot
#   build     test/gpu/gpu_build.sql: CREATE INDEX on the GPU against the
#             CPU build for every key type (identical pages, identical
#             (key, TID) sequences, gbtree_check), REINDEX, device copy
#   failures  service terminated mid-query, device memory limit, injected
#             device errors: same answers under auto, clear errors under gpu,
#             and the GPU in use again afterwards; the same for builds
# Last line: "N passed, N failed"; exit status 1 if anything failed.

set -u
cd "$(dirname "$0")/../.." || exit 2
SUITES=${GPU_TESTS_ONLY:-cuda,service,regress,diff,fresh,build,failures}
[ -n "$SUITES" ] || SUITES=cuda,service,regress,diff,fresh,build,failures
PASS=0
FAIL=0
FAILED=""
ok() { PASS=$((PASS + 1)); echo "ok   $*"; }
bad() { FAIL=$((FAIL + 1)); FAILED="$FAILED\n  $*"; echo "FAIL $*"; }
want() { case ",$SUITES," in *",$1,"*) return 0 ;; esac; return 1; }
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
info() { q -c "SELECT value FROM gbtree_device_info() WHERE name = '$1'"; }

wait_ready() {
    for _ in $(seq 1 60); do
        [ "$(info service 2>/dev/null)" = ready ] && return 0
        sleep 1
    done
    return 1
}

q -c "CREATE EXTENSION IF NOT EXISTS gbtree" >/dev/null

if want cuda; then
    echo "== cuda"
    if make -s cuda-test >/tmp/gpu-cuda-test.log 2>&1; then
        ok "cuda: $(tail -n 1 /tmp/gpu-cuda-test.log)"
    else
        tail -n 30 /tmp/gpu-cuda-test.log
        bad "cuda: $(tail -n 1 /tmp/gpu-cuda-test.log)"
    fi
fi

if want service; then
    echo "== service"
    if wait_ready; then
        ok "service ready on $(info device)"
    else
        q -c "SELECT * FROM gbtree_device_info()"
        bad "service not ready: $(info detail)"
    fi
fi

if want regress; then
    echo "== regress (every batch on the GPU)"
    b0=$(info gpu_batches)
    if PGOPTIONS="-c gbtree.gpu_min_batch=1" EXTRA_REGRESS_OPTS=--no-locale make -s installcheck >/tmp/gpu-regress.log 2>&1; then
        ok "regress: $(grep -E 'tests passed|All [0-9]+ tests' /tmp/gpu-regress.log | tail -n 1)"
    else
        tail -n 40 /tmp/gpu-regress.log
        [ -f regression.diffs ] && head -n 80 regression.diffs
        bad "regress under the GPU"
    fi
    b1=$(info gpu_batches)
    if [ "$((b1 - b0))" -gt 100 ]; then
        ok "regress ran $((b1 - b0)) GPU batches"
    else
        bad "regress ran only $((b1 - b0)) GPU batches"
    fi
fi

if want diff; then
    echo "== diff (gbtree.device = gpu against btree)"
    q -f test/gpu/gpu_diff.sql >/tmp/gpu-diff.log 2>&1
    [ -n "${OUT:-}" ] && cp /tmp/gpu-diff.log "$OUT/" 2>/dev/null
    n_ok=$(grep -c '^ok ' /tmp/gpu-diff.log)
    n_bad=$(grep -c '^FAIL ' /tmp/gpu-diff.log)
    grep '^FAIL ' /tmp/gpu-diff.log | head -n 20
    if [ "$n_bad" = 0 ] && [ "$n_ok" -gt 40 ]; then
        ok "diff: $n_ok checks"
    else
        tail -n 5 /tmp/gpu-diff.log
        bad "diff: $n_bad of $((n_ok + n_bad)) checks failed"
    fi
fi

if want fresh; then
    echo "== fresh (concurrent inserts while GPU batches run)"
    q <<'EOF' >/dev/null
DROP TABLE IF EXISTS fr_g, fr_b;
CREATE TABLE fr_g (id int8, k int8);
CREATE TABLE fr_b (id int8, k int8);
INSERT INTO fr_g SELECT i, i % 50000 FROM generate_series(1, 200000) i;
INSERT INTO fr_b SELECT * FROM fr_g;
CREATE INDEX fr_g_k ON fr_g USING gbtree (k);
CREATE INDEX fr_b_k ON fr_b USING btree (k);
VACUUM ANALYZE fr_g; VACUUM ANALYZE fr_b;
CREATE SEQUENCE IF NOT EXISTS fr_seq START 200001;
EOF
    cat >/tmp/fr_ins.sql <<'EOF'
\set k random(0, 60000)
BEGIN;
SELECT nextval('fr_seq') AS id \gset
INSERT INTO fr_g VALUES (:id, :k);
INSERT INTO fr_b VALUES (:id, :k);
COMMIT;
EOF
    # one statement, one snapshot: two DELETEs in READ COMMITTED could see
    # different sets of concurrently inserted rows and make the twins differ
    cat >/tmp/fr_del.sql <<'EOF'
\set k random(0, 60000)
WITH d AS (DELETE FROM fr_g WHERE k = :k RETURNING id) DELETE FROM fr_b WHERE id IN (SELECT id FROM d);
EOF
    FRESH_SECS=${FRESH_SECS:-40}
    if [ "${FRESH_DELETES:-1}" = 1 ]; then
        pgbench -n -c 4 -j 4 -T "$FRESH_SECS" -f /tmp/fr_ins.sql@9 -f /tmp/fr_del.sql@1 >/tmp/fr_pgbench.log 2>&1 &
    else
        pgbench -n -c 4 -j 4 -T "$FRESH_SECS" -f /tmp/fr_ins.sql >/tmp/fr_pgbench.log 2>&1 &
    fi
    pgb=$!
    # while the writers run: VACUUM now and then, and GPU batches compared
    # with btree inside one REPEATABLE READ snapshot
    (for _ in 1 2 3 4; do sleep $((FRESH_SECS / 5)); [ "${FRESH_VACUUM:-1}" = 1 ] && q -c "VACUUM fr_g" >/dev/null 2>&1; done) &
    vac=$!
    cat >/tmp/fr_check.sql <<'EOF'
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
SELECT (SELECT array_agg(g) FROM generate_series(0, 60000, 1 + (random() * 5)::int) g) AS keys \gset
SET LOCAL gbtree.device = gpu;
SELECT count(*) || ':' || coalesce(sum(id), 0) AS g FROM fr_g WHERE k = ANY(:'keys') \gset
SET LOCAL gbtree.device = cpu;
SELECT count(*) || ':' || coalesce(sum(id), 0) AS b FROM fr_b WHERE k = ANY(:'keys') \gset
SELECT CASE WHEN :'g' = :'b' THEN 'same' ELSE 'DIFFERENT gpu ' || :'g' || ' btree ' || :'b' END;
COMMIT;
EOF
    same=0
    diffs=0
    errs=0
    end=$((SECONDS + FRESH_SECS - 5))
    while [ $SECONDS -lt $end ]; do
        r=$(q -f /tmp/fr_check.sql 2>&1 | tail -n 1)
        case $r in
            same) same=$((same + 1)) ;;
            DIFFERENT*) diffs=$((diffs + 1)); echo "  $r" ;;
            *) errs=$((errs + 1)); echo "  $r" ;;
        esac
    done
    wait $pgb
    wait $vac
    tps=$(grep -o 'tps = [0-9.]*' /tmp/fr_pgbench.log | head -n 1)
    if [ $diffs = 0 ] && [ $errs = 0 ] && [ $same -gt 10 ]; then
        ok "fresh: $same GPU batches during concurrent writes ($tps), all equal to btree"
    else
        bad "fresh: $same same, $diffs different, $errs errors"
    fi
    if q -c "SELECT gbtree_check('fr_g_k', true)" >/dev/null 2>&1; then
        ok "fresh: gbtree_check after the writes"
    else
        bad "fresh: gbtree_check"
    fi
fi

if want build; then
    echo "== build"
    q -v rows="${BUILD_ROWS:-200000}" -f test/gpu/gpu_build.sql >/tmp/gpu-build.out 2>&1
    rc=$?
    while IFS= read -r line; do
        case $line in
            "ok   "*) ok "${line#ok   }" ;;
            "FAIL "*) bad "${line#FAIL }" ;;
        esac
    done </tmp/gpu-build.out
    nlines=$(grep -c -E '^(ok   |FAIL )' /tmp/gpu-build.out)
    if [ "$rc" -ne 0 ] || [ "$nlines" -lt 60 ]; then
        tail -n 20 /tmp/gpu-build.out
        bad "build: gpu_build.sql exited $rc after $nlines checks"
    fi
fi

if want failures; then
    echo "== failures"
    q <<'EOF' >/dev/null
DROP TABLE IF EXISTS fl_g, fl_b;
CREATE TABLE fl_g (id int8, k int8);
INSERT INTO fl_g SELECT i, hashint8(i) FROM generate_series(1, 1000000) i;
CREATE TABLE fl_b AS SELECT * FROM fl_g;
CREATE INDEX fl_g_k ON fl_g USING gbtree (k);
CREATE INDEX fl_b_k ON fl_b USING btree (k);
VACUUM ANALYZE fl_g; VACUUM ANALYZE fl_b;
DROP TABLE IF EXISTS fl_keys;
CREATE TABLE fl_keys AS SELECT array_agg(k) AS a FROM (SELECT k FROM fl_b WHERE id % 5 = 0 UNION ALL SELECT 12345) s;
EOF
    expect=$(q -c "SET enable_seqscan = off; SET gbtree.device = cpu; SELECT count(*) || ':' || sum(id) FROM fl_b, fl_keys WHERE k = ANY(a)" | tail -n 1)
    gpuq="SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) || ':' || sum(id) FROM fl_g, fl_keys WHERE k = ANY(a)"

    # 1. the service terminated while queries run: same answers, then back
    cat >/tmp/fl_loop.sh <<EOF
for i in \$(seq 1 40); do
  psql -X -qAt -c "SET gbtree.gpu_min_batch = 1000; $gpuq" 2>&1 | tail -n 1
done
EOF
    bash /tmp/fl_loop.sh >/tmp/fl_loop.out 2>&1 &
    loop=$!
    for _ in 1 2 3; do
        sleep 2
        pid=$(info service_pid)
        [ -n "$pid" ] && [ "$pid" != 0 ] && q -c "SELECT pg_terminate_backend($pid)" >/dev/null 2>&1
    done
    wait $loop
    nres=$(grep -c . /tmp/fl_loop.out)
    nright=$(grep -c "^$expect\$" /tmp/fl_loop.out)
    if [ "$nres" = 40 ] && [ "$nright" = 40 ]; then
        ok "service terminated 3 times under 40 queries: all 40 answers right ($(info fallbacks_service) fallbacks so far)"
    else
        grep -v "^$expect\$" /tmp/fl_loop.out | head -n 5
        bad "service terminated: $nright of $nres answers right (expected $expect)"
    fi
    if wait_ready; then
        b0=$(info gpu_batches)
        r=$(q -c "SET gbtree.gpu_min_batch = 1000; $gpuq" | tail -n 1)
        b1=$(info gpu_batches)
        if [ "$r" = "$expect" ] && [ "$b1" -gt "$b0" ]; then
            ok "service back (restarts: pid $(info service_pid)), GPU in use again"
        else
            bad "after restart: answer $r, batches $b0 -> $b1"
        fi
    else
        bad "service did not come back: $(info detail)"
    fi

    # 2. injected device errors
    r=$(q -c "SET gbtree.gpu_inject_fault = 1; SET gbtree.gpu_min_batch = 1000; $gpuq" 2>&1 | tail -n 1)
    [ "$r" = "$expect" ] && ok "device error under auto: right answer on the CPU" ||
        bad "device error under auto: $r"
    r=$(q -c "SET gbtree.gpu_inject_fault = 1; SET gbtree.device = gpu; $gpuq" 2>&1 | tail -n 3)
    case $r in
        *"GPU cannot serve"*"injected device error"*) ok "device error under gpu: clear error" ;;
        *) bad "device error under gpu: $r" ;;
    esac

    # 3. device memory limit too small for the index
    q -c "ALTER SYSTEM SET gbtree.gpu_memory_limit = '1MB'" -c "SELECT pg_reload_conf()" >/dev/null
    sleep 2
    m0=$(info fallbacks_memory)
    r=$(q -c "SET gbtree.gpu_min_batch = 1000; $gpuq" 2>&1 | tail -n 1)
    m1=$(info fallbacks_memory)
    if [ "$r" = "$expect" ] && [ "$m1" -gt "$m0" ]; then
        ok "out of device memory under auto: right answer on the CPU"
    else
        bad "out of device memory under auto: $r (memory fallbacks $m0 -> $m1)"
    fi
    r=$(q -c "SET gbtree.device = gpu; $gpuq" 2>&1 | tail -n 3)
    case $r in
        *"GPU cannot serve"*) ok "out of device memory under gpu: clear error" ;;
        *) bad "out of device memory under gpu: $r" ;;
    esac
    q -c "ALTER SYSTEM RESET gbtree.gpu_memory_limit" -c "SELECT pg_reload_conf()" >/dev/null
    sleep 2
    r=$(q -c "SET gbtree.device = gpu; $gpuq" 2>&1 | tail -n 1)
    [ "$r" = "$expect" ] && ok "limit lifted: GPU serves again" || bad "limit lifted: $r"

    # 4. builds: injected device error, service killed mid-build
    q -c "DROP TABLE IF EXISTS fb; CREATE TABLE fb AS SELECT g AS id, hashint8(g) # (g << 20) AS k FROM generate_series(1, 3000000) g" >/dev/null
    r=$(q -c "SET gbtree.gpu_inject_fault = 1; SET gbtree.device = gpu; CREATE INDEX fb_k ON fb USING gbtree (k)" 2>&1 | tail -n 3)
    left=$(q -c "SELECT count(*) FROM pg_class WHERE relname = 'fb_k'")
    case $r in
        *"GPU cannot build"*"injected device error"*) [ "$left" = 0 ] && ok "build: device error under gpu: clear error, no index left" ||
            bad "build: device error under gpu left $left index(es)" ;;
        *) bad "build: device error under gpu: $r" ;;
    esac
    r=$(q -c "SET gbtree.gpu_inject_fault = 1; CREATE INDEX fb_k ON fb USING gbtree (k)" -c "SELECT 'checked' FROM gbtree_check('fb_k', true)" 2>&1 | tail -n 1)
    [ "$r" = checked ] && ok "build: device error under auto: built on the CPU, gbtree_check passes" ||
        bad "build: device error under auto: $r"
    q -c "DROP INDEX IF EXISTS fb_k" >/dev/null
    r=$(q -c "SET gbtree.gpu_inject_fault = 2; CREATE INDEX fb_k ON fb USING gbtree (k)" -c "SELECT 'checked ' || count(*) FROM gbtree_check('fb_k', true), fb WHERE k IS NOT NULL" 2>&1 | tail -n 1)
    [ "$r" = "checked 3000000" ] && ok "build: the service crashed mid-build under auto: built on the CPU, complete, checks" ||
        bad "build: service crash mid-build: $r"
    wait_ready || bad "service did not come back after the build test"
    q -c "DROP TABLE fb" >/dev/null

    # 5. DROP INDEX frees the device copy
    q -c "SET gbtree.device = gpu; $gpuq" >/dev/null
    c0=$(q -c "SELECT count(*) FROM gbtree_device_info() WHERE name LIKE 'copy %'")
    q -c "DROP INDEX fl_g_k" >/dev/null
    sleep 1
    c1=$(q -c "SELECT count(*) FROM gbtree_device_info() WHERE name LIKE 'copy %'")
    [ "$c1" -lt "$c0" ] && ok "DROP INDEX dropped the device copy ($c0 -> $c1 copies)" ||
        bad "DROP INDEX: copies $c0 -> $c1"
fi

echo
q -c "SELECT name || ': ' || value FROM gbtree_device_info()" 2>/dev/null | sed 's/^/  /'
[ -n "$FAILED" ] && printf "failed:%b\n" "$FAILED"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
