#!/usr/bin/env bash
# test/gpu/run-gpu-tests.sh: what `make test-gpu` runs, on a machine with an
# NVIDIA GPU.  Needs a running PostgreSQL 15 reachable through the PG*
# environment, with this tree's gbtree installed and in
# shared_preload_libraries (test/gpu/RESULTS.md shows the set-up used on the
# GPU machine).  Suites:
#   cuda      CUDA unit tests and compute-sanitizer (make cuda-test)
#   service   the service is up and owns the device
#   regress   the pg_regress suite with every batch on the GPU
#             (gbtree.gpu_min_batch = 1 under gbtree.device = auto)
#   diff      test/gpu/gpu_diff.sql: gbtree.device = gpu against btree
#   merge     test/gpu/gpu_merge.sql: insert batches sorted and placed on
#             the GPU against btree twins (a device copy behind the pages,
#             duplicates, NULLs, savepoints, an injected device error)
#   fresh     concurrent inserters while GPU batches run, in REPEATABLE READ,
#             gbtree on the GPU against the btree twin in the same snapshot
#   build     test/gpu/gpu_build.sql: CREATE INDEX on the GPU against the
#             CPU build for every key type (identical pages, identical
#             (key, TID) sequences, gbtree_check), REINDEX, device copy
#   failures  service terminated mid-query, device memory limit, injected
#             device errors: same answers under auto, clear errors under gpu,
#             and the GPU in use again afterwards; the same for builds
#   standby   a streaming hot standby of this server (pg_basebackup, run as
#             the server's OS user): its device copies, loaded first, must
#             follow WAL replay of inserts with leaf and root splits,
#             deletes with VACUUM and key updates made on the primary;
#             bitmap, index and index-only scans of gbtree on the standby
#             (gbtree.device = $GPU_STANDBY_DEVICE, default gpu; auto runs
#             it without a GPU) against btree, sequential scans and the
#             primary, pages shipped again after each round
# Last line: "N passed, N failed"; exit status 1 if anything failed.

set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=test/lib.sh
. test/lib.sh
# scratch files (logs, pgbench scripts) in a private directory
SCR=$(mktemp -d "${TMPDIR:-/tmp}/gbtree-gputests.XXXXXX") || exit 2
trap 'rm -rf "$SCR"' EXIT
SUITES=${GPU_TESTS_ONLY:-cuda,service,regress,diff,merge,fresh,build,failures,standby}
[ -n "$SUITES" ] || SUITES=cuda,service,regress,diff,merge,fresh,build,failures,standby
PASS=0
FAIL=0
FAILED=""
ok() { PASS=$((PASS + 1)); echo "ok   $*"; }
bad() { FAIL=$((FAIL + 1)); FAILED="$FAILED\n  $*"; echo "FAIL $*"; }
want() { case ",$SUITES," in *",$1,"*) return 0 ;; esac; return 1; }
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
info() { q -c "SELECT value FROM gbtree_device_info() WHERE name = '$1'"; }

# missing_extensions FILE: what FILE says it needs ("needs: x") and this
# server lacks (the PostgreSQL 16 wheel has no contrib modules); such
# tests are skipped, said so, and not counted.
missing_extensions() {
    local e miss=""
    for e in $(gb_needed_extensions "$1"); do
        [ "$(q -c "SELECT count(*) FROM pg_available_extensions WHERE name = '$e'")" = 1 ] || miss="$miss $e"
    done
    echo "${miss# }"
}
skip() { echo "skip $*"; }

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
    if make -s cuda-test >$SCR/gpu-cuda-test.log 2>&1; then
        ok "cuda: $(tail -n 1 $SCR/gpu-cuda-test.log)"
    else
        tail -n 30 $SCR/gpu-cuda-test.log
        bad "cuda: $(tail -n 1 $SCR/gpu-cuda-test.log)"
    fi
    # multi-word keys: the page search, the sort, and the library's lookups
    if make -s cuda-test-words >$SCR/gpu-cuda-words.log 2>&1; then
        ok "cuda words: $(grep -c ' passed, 0 failed' $SCR/gpu-cuda-words.log) programs passed; $(grep 'timing:' $SCR/gpu-cuda-words.log | tail -n 1 | sed 's/^ *//')"
    else
        tail -n 30 $SCR/gpu-cuda-words.log
        bad "cuda words: $(grep -E 'passed|FAIL' $SCR/gpu-cuda-words.log | tail -n 3 | tr '\n' ' ')"
    fi
    [ -n "${OUT:-}" ] && cp $SCR/gpu-cuda-words.log "$OUT/" 2>/dev/null
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
    m0=$(info gpu_merges)
    tests=""
    for f in sql/*.sql; do
        t=$(basename "$f" .sql)
        case $t in gbtree--*) continue ;; esac
        miss=$(missing_extensions "$f")
        if [ -n "$miss" ]; then skip "regress/$t (needs $miss)"; else tests="$tests $t"; fi
    done
    if PGOPTIONS="-c gbtree.gpu_min_batch=1 -c gbtree.gpu_merge_min=1" EXTRA_REGRESS_OPTS=--no-locale make -s installcheck REGRESS="${tests# }" >$SCR/gpu-regress.log 2>&1; then
        ok "regress: $(grep -E 'tests passed|All [0-9]+ tests' $SCR/gpu-regress.log | tail -n 1)"
    else
        tail -n 40 $SCR/gpu-regress.log
        [ -f regression.diffs ] && head -n 80 regression.diffs
        bad "regress under the GPU"
    fi
    b1=$(info gpu_batches)
    if [ "$((b1 - b0))" -gt 100 ]; then
        ok "regress ran $((b1 - b0)) GPU batches"
    else
        bad "regress ran only $((b1 - b0)) GPU batches"
    fi
    m1=$(info gpu_merges)
    if [ "$((m1 - m0))" -gt 50 ]; then
        ok "regress merged $((m1 - m0)) insert batches on the GPU"
    else
        bad "regress merged only $((m1 - m0)) insert batches on the GPU"
    fi
    # 17+: the service's and the backends' waits have names of their own
    if [ "$(q -c "SELECT current_setting('server_version_num')::int >= 170000")" = t ]; then
        ev=$(q -c "SELECT string_agg(name, ',' ORDER BY name) FROM pg_wait_events WHERE type = 'Extension' AND name LIKE 'Gbtree%'")
        if [ "$ev" = "GbtreeGpuRequest,GbtreeGpuServiceMain" ]; then
            ok "wait events named in pg_wait_events: $ev"
        else
            bad "wait events: pg_wait_events has '$ev', not GbtreeGpuRequest,GbtreeGpuServiceMain"
        fi
    fi
fi

# run an SQL file whose lines say "ok <n> ..." or "FAIL <n> ...": it passes
# with no FAIL and at least MIN_OK checks; the log goes to $OUT as well
sql_checks() {  # NAME FILE MIN_OK
    local log=$SCR/gpu-$1.log n_ok n_bad
    q -f "$2" >"$log" 2>&1
    [ -n "${OUT:-}" ] && cp "$log" "$OUT/" 2>/dev/null
    n_ok=$(grep -c '^ok ' "$log")
    n_bad=$(grep -c '^FAIL ' "$log")
    grep '^FAIL ' "$log" | head -n 20
    if [ "$n_bad" = 0 ] && [ "$n_ok" -ge "$3" ]; then
        ok "$1: $n_ok checks"
    else
        grep -E '^(psql|ERROR)' "$log" | head -n 10
        tail -n 5 "$log"
        bad "$1: $n_bad of $((n_ok + n_bad)) checks failed"
    fi
}

if want diff; then
    echo "== diff (gbtree.device = gpu against btree)"
    sql_checks diff test/gpu/gpu_diff.sql 65
fi

if want merge; then
    echo "== merge (insert batches on the GPU against btree)"
    sql_checks merge test/gpu/gpu_merge.sql 10
fi

if want fresh; then
    echo "== fresh (concurrent inserts while GPU batches run)"
    q <<'EOF' >/dev/null
DROP TABLE IF EXISTS fr_g, fr_b, frw_g, frw_b;
CREATE TABLE fr_g (id int8, k int8);
CREATE TABLE fr_b (id int8, k int8);
INSERT INTO fr_g SELECT i, i % 50000 FROM generate_series(1, 200000) i;
INSERT INTO fr_b SELECT * FROM fr_g;
CREATE INDEX fr_g_k ON fr_g USING gbtree (k);
CREATE INDEX fr_b_k ON fr_b USING btree (k);
VACUUM ANALYZE fr_g; VACUUM ANALYZE fr_b;
-- the same on a multi-word key (k, id): its leaf inserts and splits too
-- must reach the device copy before the next batch
CREATE TABLE frw_g AS SELECT * FROM fr_b;
CREATE TABLE frw_b AS SELECT * FROM fr_b;
CREATE INDEX frw_g_k ON frw_g USING gbtree (k, id);
CREATE INDEX frw_b_k ON frw_b USING btree (k, id);
VACUUM ANALYZE frw_g; VACUUM ANALYZE frw_b;
CREATE SEQUENCE IF NOT EXISTS fr_seq START 200001;
EOF
    cat >$SCR/fr_ins.sql <<'EOF'
\set k random(0, 60000)
BEGIN;
SELECT nextval('fr_seq') AS id \gset
INSERT INTO fr_g VALUES (:id, :k);
INSERT INTO fr_b VALUES (:id, :k);
INSERT INTO frw_g VALUES (:id, :k);
INSERT INTO frw_b VALUES (:id, :k);
COMMIT;
EOF
    # one statement, one snapshot: two DELETEs in READ COMMITTED could see
    # different sets of concurrently inserted rows and make the twins differ
    cat >$SCR/fr_del.sql <<'EOF'
\set k random(0, 60000)
WITH d AS (DELETE FROM fr_g WHERE k = :k RETURNING id) DELETE FROM fr_b WHERE id IN (SELECT id FROM d);
WITH d AS (DELETE FROM frw_g WHERE k = :k RETURNING id) DELETE FROM frw_b WHERE id IN (SELECT id FROM d);
EOF
    FRESH_SECS=${FRESH_SECS:-40}
    if [ "${FRESH_DELETES:-1}" = 1 ]; then
        pgbench -n -c 4 -j 4 -T "$FRESH_SECS" -f $SCR/fr_ins.sql@9 -f $SCR/fr_del.sql@1 >$SCR/fr_pgbench.log 2>&1 &
    else
        pgbench -n -c 4 -j 4 -T "$FRESH_SECS" -f $SCR/fr_ins.sql >$SCR/fr_pgbench.log 2>&1 &
    fi
    pgb=$!
    # while the writers run: VACUUM now and then, and GPU batches compared
    # with btree inside one REPEATABLE READ snapshot
    (for _ in 1 2 3 4; do sleep $((FRESH_SECS / 5)); [ "${FRESH_VACUUM:-1}" = 1 ] && q -c "VACUUM fr_g" -c "VACUUM frw_g" >/dev/null 2>&1; done) &
    vac=$!
    cat >$SCR/fr_check.sql <<'EOF'
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
-- (k, id) covers sum(id): an index-only scan would need GBT_GPU_SCAN_LOCK,
-- which the concurrent VACUUM takes (under gpu: a clear error, by design)
SET LOCAL enable_indexonlyscan = off;
SELECT (SELECT array_agg(g) FROM generate_series(0, 60000, 1 + (random() * 5)::int) g) AS keys \gset
SET LOCAL gbtree.device = gpu;
SELECT count(*) || ':' || coalesce(sum(id), 0) AS g FROM fr_g WHERE k = ANY(:'keys') \gset
SET LOCAL gbtree.device = cpu;
SELECT count(*) || ':' || coalesce(sum(id), 0) AS b FROM fr_b WHERE k = ANY(:'keys') \gset
SET LOCAL gbtree.device = gpu;
SELECT count(*) || ':' || coalesce(sum(id), 0) AS gw FROM frw_g WHERE k = ANY(:'keys') \gset
SET LOCAL gbtree.device = cpu;
SELECT count(*) || ':' || coalesce(sum(id), 0) AS bw FROM frw_b WHERE k = ANY(:'keys') \gset
SELECT CASE WHEN :'g' = :'b' AND :'gw' = :'bw' THEN 'same'
            ELSE 'DIFFERENT gpu ' || :'g' || ' btree ' || :'b' || ' multi-word gpu ' || :'gw' || ' btree ' || :'bw' END;
COMMIT;
EOF
    same=0
    diffs=0
    errs=0
    end=$((SECONDS + FRESH_SECS - 5))
    while [ $SECONDS -lt $end ]; do
        r=$(q -f $SCR/fr_check.sql 2>&1 | tail -n 1)
        case $r in
            same) same=$((same + 1)) ;;
            DIFFERENT*) diffs=$((diffs + 1)); echo "  $r" ;;
            *) errs=$((errs + 1)); echo "  $r" ;;
        esac
    done
    wait $pgb
    wait $vac
    tps=$(grep -o 'tps = [0-9.]*' $SCR/fr_pgbench.log | head -n 1)
    # at least a few comparisons while the writers ran: an assertion-enabled
    # build on a 2-core CI machine fits 9-16 into the window, 5 and more
    # mean the check ran throughout it
    if [ $diffs = 0 ] && [ $errs = 0 ] && [ $same -ge 5 ]; then
        ok "fresh: $same GPU batches during concurrent writes ($tps), all equal to btree"
    else
        bad "fresh: $same same, $diffs different, $errs errors"
    fi
    if q -c "SELECT gbtree_check('fr_g_k', true)" -c "SELECT gbtree_check('frw_g_k', true)" >/dev/null 2>&1; then
        ok "fresh: gbtree_check after the writes"
    else
        bad "fresh: gbtree_check"
    fi
fi

miss=""
want build && miss=$(missing_extensions test/gpu/gpu_build.sql)
if want build && [ -n "$miss" ]; then
    skip "build (test/gpu/gpu_build.sql needs $miss)"
elif want build; then
    echo "== build"
    q -v rows="${BUILD_ROWS:-200000}" -f test/gpu/gpu_build.sql >$SCR/gpu-build.out 2>&1
    rc=$?
    while IFS= read -r line; do
        case $line in
            "ok   "*) ok "${line#ok   }" ;;
            "FAIL "*) bad "${line#FAIL }" ;;
        esac
    done <$SCR/gpu-build.out
    nlines=$(grep -c -E '^(ok   |FAIL )' $SCR/gpu-build.out)
    if [ "$rc" -ne 0 ] || [ "$nlines" -lt 60 ]; then
        tail -n 20 $SCR/gpu-build.out
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
    cat >$SCR/fl_loop.sh <<EOF
for i in \$(seq 1 40); do
  psql -X -qAt -c "SET gbtree.gpu_min_batch = 1000; $gpuq" 2>&1 | tail -n 1
done
EOF
    bash $SCR/fl_loop.sh >$SCR/fl_loop.out 2>&1 &
    loop=$!
    for _ in 1 2 3; do
        sleep 2
        pid=$(info service_pid)
        [ -n "$pid" ] && [ "$pid" != 0 ] && q -c "SELECT pg_terminate_backend($pid)" >/dev/null 2>&1
    done
    wait $loop
    nres=$(grep -c . $SCR/fl_loop.out)
    nright=$(grep -c "^$expect\$" $SCR/fl_loop.out)
    if [ "$nres" = 40 ] && [ "$nright" = 40 ]; then
        ok "service terminated 3 times under 40 queries: all 40 answers right ($(info fallbacks_service) fallbacks so far)"
    else
        grep -v "^$expect\$" $SCR/fl_loop.out | head -n 5
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

    # 3. an index with leaves in posting form (deduplicate_items = on; the
    # default, auto, keeps plain leaves while a GPU serves): the walk
    # kernels answer it (src/README, "Deduplication")
    q <<'EOF' >/dev/null
DROP TABLE IF EXISTS fp_g;
CREATE TABLE fp_g AS SELECT g AS id, (g % 50)::int8 AS k FROM generate_series(1, 200000) g;
CREATE INDEX fp_g_k ON fp_g USING gbtree (k) WITH (deduplicate_items = on);
VACUUM ANALYZE fp_g;
EOF
    fpq="SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) || ':' || sum(id) FROM fp_g WHERE k = ANY(ARRAY(SELECT generate_series(-5, 60)::int8))"
    fexp=$(q -c "SET gbtree.device = cpu; $fpq" | tail -n 1)
    b0=$(info gpu_batches)
    ra=$(q -c "SET gbtree.gpu_min_batch = 1; $fpq" 2>&1 | tail -n 1)
    rg=$(q -c "SET gbtree.device = gpu; $fpq" 2>&1 | tail -n 1)
    b1=$(info gpu_batches)
    if [ "$ra" = "$fexp" ] && [ "$rg" = "$fexp" ] && [ "$fexp" = "200000:20000100000" ] && [ "$b1" -ge $((b0 + 2)) ]; then
        ok "posting leaves: right answers from the GPU under auto and gpu ($b0 -> $b1 batches)"
    else
        bad "posting leaves: auto $ra, gpu $rg, expected $fexp (batches $b0 -> $b1)"
    fi
    q -c "INSERT INTO fp_g SELECT g, g % 7 FROM generate_series(200001, 230000) g" >/dev/null
    fexp=$(q -c "SET gbtree.device = cpu; $fpq" | tail -n 1)
    rg=$(q -c "SET gbtree.device = gpu; $fpq" 2>&1 | tail -n 1)
    [ "$rg" = "$fexp" ] && ok "posting leaves after inserts: the GPU agrees with the CPU ($rg)" ||
        bad "posting leaves after inserts: gpu $rg, cpu $fexp"
    q -c "DROP TABLE fp_g" >/dev/null

    # 4. device memory limit too small for the index
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

    # 5. builds: injected device error, service killed mid-build
    q -c "DROP TABLE IF EXISTS fb; CREATE TABLE fb AS SELECT g AS id, hashint8(g) # (g << 20) AS k FROM generate_series(1, 3000000) g" >/dev/null
    # a build under gbtree.device = gpu that must fail: clear error, no index left
    build_fails_under_gpu() {   # $1 what, $2 settings, $3 pattern of the error
        local r left
        r=$(q -c "$2 SET gbtree.device = gpu; CREATE INDEX fb_k ON fb USING gbtree (k)" 2>&1 | tail -n 3)
        left=$(q -c "SELECT count(*) FROM pg_class WHERE relname = 'fb_k'")
        # shellcheck disable=SC2254
        case $r in
            $3) [ "$left" = 0 ] && ok "build: $1 under gpu: clear error, no index left" ||
                bad "build: $1 under gpu left $left index(es)" ;;
            *) bad "build: $1 under gpu: $r" ;;
        esac
    }
    build_fails_under_gpu "device error" "SET gbtree.gpu_inject_fault = 1;" '*GPU cannot build*injected device error*'
    r=$(q -c "SET gbtree.gpu_inject_fault = 1; CREATE INDEX fb_k ON fb USING gbtree (k)" -c "SELECT 'checked' FROM gbtree_check('fb_k', true)" 2>&1 | tail -n 1)
    [ "$r" = checked ] && ok "build: device error under auto: built on the CPU, gbtree_check passes" ||
        bad "build: device error under auto: $r"
    q -c "DROP INDEX IF EXISTS fb_k" >/dev/null
    r=$(q -c "SET gbtree.gpu_inject_fault = 2; CREATE INDEX fb_k ON fb USING gbtree (k)" -c "SELECT 'checked ' || count(*) FROM gbtree_check('fb_k', true), fb WHERE k IS NOT NULL" 2>&1 | tail -n 1)
    [ "$r" = "checked 3000000" ] && ok "build: the service crashed mid-build under auto: built on the CPU, complete, checks" ||
        bad "build: service crash mid-build: $r"
    wait_ready || bad "service did not come back after the build test"
    # the service dies while it lays out the pages, past the first chunk
    # (some pages already written)
    q -c "DROP INDEX IF EXISTS fb_k" >/dev/null
    r=$(q -c "SET maintenance_work_mem = '256MB'; SET gbtree.gpu_inject_fault = 3; CREATE INDEX fb_k ON fb USING gbtree (k)" -c "SELECT 'checked ' || count(*) FROM gbtree_check('fb_k', true), fb WHERE k IS NOT NULL" 2>&1 | tail -n 1)
    [ "$r" = "checked 3000000" ] && ok "build: the service crashed laying out pages under auto: laid out on the CPU, complete, checks" ||
        bad "build: service crash during the device layout: $r"
    wait_ready || bad "service did not come back after the layout crash test"
    q -c "DROP INDEX IF EXISTS fb_k" >/dev/null
    build_fails_under_gpu "service crash laying out pages" "SET maintenance_work_mem = '256MB'; SET gbtree.gpu_inject_fault = 3;" '*GPU cannot build*'
    wait_ready || bad "service did not come back after the layout crash test"
    q -c "DROP TABLE fb" >/dev/null

    # 6. DROP INDEX frees the device copy
    q -c "SET gbtree.device = gpu; $gpuq" >/dev/null
    c0=$(q -c "SELECT count(*) FROM gbtree_device_info() WHERE name LIKE 'copy %'")
    q -c "DROP INDEX fl_g_k" >/dev/null
    sleep 1
    c1=$(q -c "SELECT count(*) FROM gbtree_device_info() WHERE name LIKE 'copy %'")
    [ "$c1" -lt "$c0" ] && ok "DROP INDEX dropped the device copy ($c0 -> $c1 copies)" ||
        bad "DROP INDEX: copies $c0 -> $c1"
fi

if want standby; then
    echo "== standby (a hot standby's device copy follows WAL replay)"
    # A streaming standby of this server, in a scratch directory, run by
    # the OS user that owns the primary's data directory with the same
    # binaries and command-line options (shared_preload_libraries!).  Its
    # device copies are loaded first, then each round changes the twins on
    # the primary (inserts with leaf and root splits, deletes with VACUUM's
    # entry removal and page deletion, key updates) and, once the standby
    # has replayed them, gbtree on the standby (gbtree.device =
    # GPU_STANDBY_DEVICE) must answer like btree and sequential scans there
    # and like the primary.  Twins: sb_* (300,000 rows, 3-level tree) and
    # sbs_* (starts as a single leaf root, split during the rounds).
    SB_DEV=${GPU_STANDBY_DEVICE:-gpu}
    SB_ROUNDS=${STANDBY_ROUNDS:-4}
    sb_dir=""
    sb_port=""
    sb_owner=""
    sb_bin=$(dirname "$(command -v pg_ctl 2>/dev/null || echo "$(pg_config --bindir 2>/dev/null)/pg_ctl")")
    sb_pgdata=$(q -c "SHOW data_directory" 2>/dev/null)
    [ -n "$sb_pgdata" ] && sb_owner=$(stat -c %U "$sb_pgdata" 2>/dev/null)
    # run a command (env assignments first) as the server's OS user
    as_owner() {
        if [ "$(id -un)" = "$sb_owner" ]; then
            env PATH="$sb_bin:$PATH" "$@"
        else
            su -s /bin/bash "$sb_owner" -c "cd /tmp && $(printf '%q ' env PATH="$sb_bin:$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" "$@")"
        fi
    }
    qs() { PGHOST=$sb_dir PGPORT=$sb_port q "$@"; }
    sinfo() { qs -c "SELECT value FROM gbtree_device_info() WHERE name = '$1'"; }
    sb_cleanup() {
        [ -n "$sb_dir" ] || return 0
        if [ -f "$sb_dir/data/postmaster.pid" ]; then
            as_owner pg_ctl -D "$sb_dir/data" -m fast -t 60 -w stop >/dev/null 2>&1 ||
                as_owner pg_ctl -D "$sb_dir/data" -m immediate -w stop >/dev/null 2>&1
        fi
        cat "$sb_dir"/*.log >$SCR/gpu-standby.log 2>/dev/null
        [ -n "${OUT:-}" ] && cp $SCR/gpu-standby.log "$OUT/" 2>/dev/null
        rm -rf "$sb_dir"
        sb_dir=""
    }
    # wait until the standby has replayed everything the primary wrote so far
    sb_wait_replay() {
        local lsn
        lsn=$(q -c "SELECT pg_current_wal_lsn()") || return 1
        for _ in $(seq 1 600); do
            [ "$(qs -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'" 2>/dev/null)" = t ] && return 0
            sleep 0.2
        done
        return 1
    }
    # root level of a gbtree index on the primary (root: block 1; level:
    # the uint16 at byte 40 of the 64-byte special space; see gbtree_node.h)
    sb_level() {
        q -c "SELECT get_byte(b, 0) + 256 * get_byte(b, 1) FROM pg_read_binary_file(pg_relation_filepath('$1'), 8192 + 8192 - 64 + 40, 2) b" 2>/dev/null || echo "?"
    }
    # the standby's device copy of an index: its line in gbtree_device_info()
    sb_copy() {
        qs -c "SELECT value FROM gbtree_device_info() WHERE name = (SELECT 'copy ' || oid || '/' || '$1'::regclass::oid FROM pg_database WHERE datname = current_database())" 2>/dev/null
    }
    # every scan kind on the standby against the primary's answer for the
    # key set of round $1; sets sb_rows; returns 1 on any difference
    sb_compare() {
        local r=$1 p m tab ios set want ref exp out res plan nbad=0
        local noidx="SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;"
        sb_rows=""
        for p in sb sbs; do
            ref=$(q -c "$noidx SELECT sb_probe('${p}_b', false, $r)" 2>&1 | tail -n 1)
            ref=${ref%% *}
            for m in g_bitmap g_index g_ios b_bitmap b_ios g_seq b_seq; do
                tab=${p}_${m%%_*}
                ios=false
                case $m in
                    *_bitmap) set="SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;"
                        want="Bitmap Index Scan on ${tab}_k" ;;
                    *_index) set="SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;"
                        want="Index Scan using ${tab}_k" ;;
                    *_ios) set="SET enable_seqscan = off; SET enable_bitmapscan = off;"
                        want="Index Only Scan using ${tab}_k"
                        ios=true ;;
                    *_seq) set=$noidx
                        want="Seq Scan on $tab" ;;
                esac
                exp=$ref
                [ $ios = true ] && exp=${ref%:*}
                out=$(qs -c "SET gbtree.device = $SB_DEV; SET gbtree.gpu_min_batch = 1000; $set SELECT sb_probe('$tab', $ios, $r)" 2>&1)
                res=$(printf '%s\n' "$out" | tail -n 1)
                plan=${res#* }
                res=${res%% *}
                if [ -z "$ref" ] || [ "$res" != "$exp" ] || [[ $plan != *"$want"* ]]; then
                    nbad=$((nbad + 1))
                    echo "  round $r $tab $m: got '$res' plan '$plan', expected '$exp' and '$want'"
                    printf '%s\n' "$out" | grep -m 2 -E 'ERROR|FATAL' | sed 's/^/    /'
                fi
            done
            sb_rows="${sb_rows:+$sb_rows, }$p: ${ref%%:*} rows"
        done
        [ $nbad = 0 ]
    }
    # under gbtree.device = gpu: the standby's copies are on the device,
    # cover every block, and the last comparison shipped pages to them
    sb_device() {
        local what=$1 p v shipped blocks rel nbad=0 msg=""
        for p in sb sbs; do
            v=$(sb_copy "${p}_g_k")
            shipped=$(printf '%s' "$v" | sed -nE 's/.* ([0-9]+) pages shipped.*/\1/p')
            blocks=$(printf '%s' "$v" | sed -nE 's/^[^,]*, ([0-9]+) blocks.*/\1/p')
            rel=$(qs -c "SELECT pg_relation_size('${p}_g_k') / 8192")
            if [[ $v != "on device,"* ]] || [ "$blocks" != "$rel" ] || [ "${shipped:-0}" -le "${sb_ship0[$p]:-0}" ]; then
                nbad=$((nbad + 1))
                msg="$msg ${p}_g_k: '$v' (index has $rel blocks; pages shipped before: ${sb_ship0[$p]:-0})"
            else
                msg="$msg ${p}_g_k +$((shipped - ${sb_ship0[$p]:-0})) pages shipped, $blocks blocks;"
            fi
            sb_ship0[$p]=${shipped:-0}
        done
        local b1
        b1=$(sinfo gpu_batches)
        if [ "$b1" -le "$sb_batches0" ]; then
            nbad=$((nbad + 1))
            msg="$msg no GPU batches ($sb_batches0 -> $b1)"
        else
            msg="$msg $((b1 - sb_batches0)) GPU batches"
        fi
        sb_batches0=$b1
        if [ $nbad = 0 ]; then ok "standby $what: device copies re-synced:$msg"; else bad "standby $what: device copies:$msg"; fi
    }
    declare -A sb_ship0=()
    sb_batches0=0

    sb_setup() {
        local v wl mws
        case $SB_DEV in auto | gpu | cpu) ;; *) bad "standby: GPU_STANDBY_DEVICE=$SB_DEV (auto, gpu or cpu)"; return 1 ;; esac
        if [ -z "$sb_owner" ] || [ ! -x "$sb_bin/pg_basebackup" ]; then
            bad "standby: no local data directory or binaries (data directory '$sb_pgdata', owner '$sb_owner', bin '$sb_bin')"
            return 1
        fi
        if [ "$(id -un)" != "$sb_owner" ] && [ "$(id -u)" != 0 ]; then
            bad "standby: the server runs as $sb_owner; run this as $sb_owner or root"
            return 1
        fi
        v=$(q -c "SHOW shared_preload_libraries")
        case ",${v// /}," in *,gbtree,*) ;; *) bad "standby: gbtree not in the primary's shared_preload_libraries ('$v')"; return 1 ;; esac
        # the primary must stream WAL to us (pg-up.sh's cluster does; the
        # suite does not reconfigure the server it tests)
        wl=$(q -c "SHOW wal_level")
        mws=$(q -c "SHOW max_wal_senders")
        if [ "$wl" = minimal ] || [ "$mws" -lt 2 ]; then
            bad "standby: the primary cannot stream WAL (wal_level = $wl, max_wal_senders = $mws)"
            return 1
        fi
        sb_dir=$(mktemp -d /tmp/gbtree-standby.XXXXXX) || return 1
        chown "$sb_owner" "$sb_dir" && chmod 700 "$sb_dir"
        # a free port: no Unix socket for it in the usual places, nothing
        # listening on it over TCP (the standby itself listens only on a
        # socket in $sb_dir)
        sb_port=$((${PGPORT:-5432} + 1))
        while [ -e "/tmp/.s.PGSQL.$sb_port" ] || [ -e "${PGHOST:-/tmp}/.s.PGSQL.$sb_port" ] ||
            [ -e "/var/run/postgresql/.s.PGSQL.$sb_port" ] || (exec 3<>"/dev/tcp/127.0.0.1/$sb_port") 2>/dev/null; do
            sb_port=$((sb_port + 1))
        done
        local penv=()
        for v in PGHOST PGPORT PGUSER; do
            [ -n "${!v:-}" ] && penv+=("$v=${!v}")
        done
        if ! as_owner "${penv[@]}" pg_basebackup -D "$sb_dir/data" -R -X stream -c fast -w -l gbtree-standby-test >"$sb_dir/basebackup.log" 2>&1; then
            tail -n 5 "$sb_dir/basebackup.log"
            bad "standby: pg_basebackup failed (does pg_hba.conf allow local replication connections?)"
            return 1
        fi
        # the primary's command-line settings (pg-up.sh passes them with -o)
        # and what a standby of ours needs, after what pg_basebackup copied
        {
            echo "# run-gpu-tests.sh standby"
            q -c "SELECT name || ' = ''' || replace(replace(current_setting(name), '\\', '\\\\'), '''', '''''') || ''''
                  FROM pg_settings WHERE source = 'command line' AND name NOT IN
                  ('port', 'unix_socket_directories', 'listen_addresses', 'data_directory', 'config_file',
                   'hba_file', 'ident_file', 'external_pid_file')"
            echo "shared_preload_libraries = '$(q -c "SHOW shared_preload_libraries")'"
            echo "port = $sb_port"
            echo "unix_socket_directories = '$sb_dir'"
            echo "listen_addresses = ''"
            echo "hot_standby = on"
            echo "hot_standby_feedback = on"
            echo "logging_collector = off"
        } >>"$sb_dir/data/postgresql.auto.conf"
        if ! as_owner pg_ctl -D "$sb_dir/data" -l "$sb_dir/server.log" -w -t 120 start >/dev/null 2>&1; then
            tail -n 10 "$sb_dir/server.log"
            bad "standby: did not start"
            return 1
        fi
        if [ "$(qs -c "SELECT pg_is_in_recovery()")" != t ]; then
            bad "standby: not in recovery"
            return 1
        fi
        for _ in $(seq 1 60); do
            v=$(sinfo service 2>/dev/null)
            case $v in ready | "no device" | "not loaded") break ;; esac
            sleep 1
        done
        if [ "$SB_DEV" = gpu ] && [ "$v" != ready ]; then
            bad "standby: GPU service on the standby: ${v:-?} ($(sinfo detail 2>&1))"
            return 1
        fi
        ok "standby: streaming from the primary on port $sb_port (run as $sb_owner, $(qs -c "SHOW shared_preload_libraries") preloaded), GPU service: $v"
    }

    # the twins, made after the base backup: the builds reach the standby
    # through WAL too
    sb_load() {
        q <<'EOF' >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS sb_g, sb_b, sbs_g, sbs_b;
CREATE TABLE sb_g (id int8, k int8) WITH (autovacuum_enabled = off);
CREATE TABLE sb_b (id int8, k int8) WITH (autovacuum_enabled = off);
CREATE TABLE sbs_g (id int8, k int8) WITH (autovacuum_enabled = off);
CREATE TABLE sbs_b (id int8, k int8) WITH (autovacuum_enabled = off);
-- 300,000 rows: keys 0..99,999 about 3 times each, key 42 3,000 times
INSERT INTO sb_g SELECT i, CASE WHEN i % 100 = 0 THEN 42 ELSE i % 100000 END FROM generate_series(1, 300000) i;
INSERT INTO sb_b SELECT * FROM sb_g;
INSERT INTO sbs_g SELECT i, i % 200 FROM generate_series(1, 400) i;
INSERT INTO sbs_b SELECT * FROM sbs_g;
CREATE INDEX sb_g_k ON sb_g USING gbtree (k);
CREATE INDEX sb_b_k ON sb_b USING btree (k);
CREATE INDEX sbs_g_k ON sbs_g USING gbtree (k);
CREATE INDEX sbs_b_k ON sbs_b USING btree (k);
VACUUM ANALYZE sb_g, sb_b, sbs_g, sbs_b;
-- count:sum(k)[:sum(id)] of the rows whose key is in round r's key set
-- (65,000 keys from -199,999 to 259,999, present and missing, and 42),
-- the array a constant in the query; then ' ' and the plan's scan nodes
CREATE OR REPLACE FUNCTION sb_probe(tab regclass, ios boolean, r int) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    keys text := (SELECT array_agg(g)::text FROM
                  (SELECT generate_series(-200000 + r, 260000, 7) AS g UNION ALL SELECT 42) s);
    q text := format('SELECT count(*) || '':'' || coalesce(sum(k), 0) %s FROM %s WHERE k = ANY(%L::int8[])',
                     CASE WHEN ios THEN '' ELSE '|| '':'' || coalesce(sum(id), 0)' END, tab, keys);
    l text;
    plan text := '';
    res text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF l ~ 'Scan (on|using) ' THEN
            plan := plan || btrim(regexp_replace(l, '^\s*->', '')) || ';';
        END IF;
    END LOOP;
    EXECUTE q INTO res;
    RETURN res || ' ' || plan;
END
$f$;
EOF
    }
    # round $1's changes to twin $2, $3 rows inserted
    sb_changes() {
        cat <<EOF
INSERT INTO $2 SELECT $1 * 1000000 + i, CASE WHEN i % 50 = 0 THEN 42 ELSE (i::int8 * 7919 + $1 * 13) % 200000 END
    FROM generate_series(1, $3) i;
DELETE FROM $2 WHERE id % 13 = $1 OR k BETWEEN $1 * 20000 AND $1 * 20000 + 2999;
VACUUM $2;
UPDATE $2 SET k = -k - 1 WHERE id % 11 = $1 AND k >= 0;
EOF
    }

    trap 'sb_cleanup; rm -rf "$SCR"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    if sb_setup; then
        if ! sb_load; then
            bad "standby: creating the twins on the primary failed"
        elif ! sb_wait_replay; then
            bad "standby: did not replay the twins' creation within 120 s"
        else
            q -c "CHECKPOINT" >/dev/null
            lv0=$(sb_level sbs_g_k)
            lvm0=$(sb_level sb_g_k)
            lv=$lv0
            lvm=$lvm0
            sb_batches0=$(sinfo gpu_batches)
            # round 0 loads the device copies (gbtree.device = gpu)
            if sb_compare 0; then
                ok "standby round 0 (loads the device copies): 7 scans x 2 twins equal to the primary ($sb_rows)"
            else
                bad "standby round 0: answers differ"
            fi
            [ "$SB_DEV" = gpu ] && sb_device "round 0"
            for r in $(seq 1 "$SB_ROUNDS"); do
                if ! { for t in sb_g sb_b; do sb_changes "$r" $t 60000; done
                       for t in sbs_g sbs_b; do sb_changes "$r" $t 50000; done; } | q >/dev/null; then
                    bad "standby round $r: changes on the primary failed"
                    break
                fi
                q -c "CHECKPOINT" >/dev/null
                lv=$(sb_level sbs_g_k)
                lvm=$(sb_level sb_g_k)
                if ! sb_wait_replay; then
                    bad "standby round $r: not replayed within 120 s"
                    break
                fi
                if sb_compare "$r"; then
                    ok "standby round $r (+60,000/+50,000 rows, deletes, VACUUM, key updates): 7 scans x 2 twins equal to the primary ($sb_rows; root levels $lvm, $lv)"
                else
                    bad "standby round $r: answers differ"
                fi
                [ "$SB_DEV" = gpu ] && sb_device "round $r"
            done
            if [ "$SB_ROUNDS" = 0 ]; then
                :
            elif [ "$lv" != "?" ] && [ "$lv0" != "?" ] && [ "$lv" -gt "$lv0" ]; then
                ok "standby: root splits replayed after the copies were loaded (sbs_g_k root level $lv0 -> $lv; sb_g_k $lvm0 -> $lvm)"
            else
                bad "standby: no root split of sbs_g_k seen (root level $lv0 -> $lv)"
            fi
            if r=$(qs -c "SELECT gbtree_check('sb_g_k', true)" -c "SELECT gbtree_check('sbs_g_k', true)" 2>&1); then
                ok "standby: gbtree_check(heapallindexed) on the standby"
            else
                bad "standby: gbtree_check: $r"
            fi
        fi
    fi
    sb_cleanup
    trap 'rm -rf "$SCR"' EXIT
    trap - INT TERM
fi

echo
q -c "SELECT name || ': ' || value FROM gbtree_device_info()" 2>/dev/null | sed 's/^/  /'
[ -n "$FAILED" ] && printf "failed:%b\n" "$FAILED"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
