#!/usr/bin/env bash
# test/gpu/device-run.sh: set-up used on the GPU machine (bare Ubuntu,
# CUDA, no PostgreSQL): carry the PostgreSQL 15 bundle (see
# test/gpu/RESULTS.md; GPU_PG=18 carries .gpuhost/pg18.tar.gz instead), build and install gbtree with its CUDA library,
# restart with gbtree preloaded, then run what is asked:
#   test/gpu/device-run.sh test        make test-gpu
#   test/gpu/device-run.sh sqlbench    test/bench/gpu-sql.sh (issue 5's SQL measure)
#   test/gpu/device-run.sh buildbench  test/bench/gpu-build.sh (issue 6's measure)
#   test/gpu/device-run.sh copybench   test/bench/gpu-copy.sh (issue 18's measure)
#   test/gpu/device-run.sh countbench  test/bench/gpu-count-default.sh (issue 22: count under default settings)
#   test/gpu/device-run.sh joinbench   test/bench/gpu-join.sh (issue 22: joins under default settings)
#   test/gpu/device-run.sh uuidcountbench  countbench on a uuid key (issue 21: 1M uuids)
#   test/gpu/device-run.sh uuidrowsbench  ... with count(*), sum(id)
#   test/gpu/device-run.sh rowsbench   test/bench/gpu-count-default.sh with
#                                      count(*), sum(id): = ANY returning rows
#   test/gpu/device-run.sh bench       make bench (its own server, gbtree
#                                      preloaded; BENCH_* from the
#                                      environment); results in $OUT/bench,
#                                      which starts as a copy of
#                                      test/bench/results; with
#                                      BENCH_KEEP_DATA=1 the cluster, its
#                                      data sets and the results stay in
#                                      /var/tmp/gbtree-bench-keep for the next call (the
#                                      machine keeps ignored files while
#                                      it stays warm)
# Output goes to stdout and, when OUT is set, to $OUT/.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gbtree-out}
mkdir -p "$OUT"
what=${1:-test}
shift || true
args=("$@")
set --
# GPU_PG=17|18: Debian's build of that major, carried with its own C
# library (test/gpu/mkbundle-chroot.sh makes .gpuhost/pgN.tar.gz)
# shellcheck disable=SC1091
if [ "${GPU_PG:-15}" = 15 ]; then
    source .gpuhost/pg-up.sh || exit 1
else
    source test/gpu/pg-up-chroot.sh "$GPU_PG" || exit 1
fi
nproc=$(nproc)
{ make -s with_llvm=no -j"$nproc" && make -s with_llvm=no install; } >"$OUT/build.log" 2>&1 ||
    { tail -n 40 "$OUT/build.log"; exit 1; }
# max_prepared_transactions as test/regress.conf sets it for CI (regress t17)
opts="$opts -c shared_preload_libraries=gbtree -c max_prepared_transactions=10"
pg_restart || exit 1
for _ in $(seq 1 30); do
    s=$(psql -X -qAt -c "CREATE EXTENSION IF NOT EXISTS gbtree" -c "SELECT value FROM gbtree_device_info() WHERE name = 'service'" 2>/dev/null | tail -n 1)
    [ "$s" = ready ] || [ "$s" = "no device" ] && break
    sleep 1
done
psql -X -qAt -c "SELECT name || ': ' || value FROM gbtree_device_info()"
case $what in
    test) GPU_TESTS_ONLY=${GPU_TESTS_ONLY:-} make -s test-gpu 2>&1 | tee "$OUT/test-gpu.log" ;;
    sql) psql -X "${args[@]}" ;;
    sqlbench) test/bench/gpu-sql.sh "$OUT/gpu-sql.md" ;;
    buildbench) test/bench/gpu-build.sh "$OUT/gpu-build.md" ;;
    copybench) test/bench/gpu-copy.sh "$OUT/gpu-copy.md" ;;
    countbench) test/bench/gpu-count-default.sh "$OUT/gpu-count-default.md" ;;
    joinbench) test/bench/gpu-join.sh "$OUT/gpu-join.md" ;;
    uuidcountbench) GPU_KEY_TYPE=uuid test/bench/gpu-count-default.sh "$OUT/gpu-count-uuid.md" ;;
    uuidrowsbench) GPU_KEY_TYPE=uuid GPU_COUNT_SELECT=${GPU_COUNT_SELECT:-"count(*), sum(id)"} test/bench/gpu-count-default.sh "$OUT/gpu-rows-uuid.md" ;;
    rowsbench) GPU_COUNT_SELECT=${GPU_COUNT_SELECT:-"count(*), sum(id)"} test/bench/gpu-count-default.sh "$OUT/gpu-rows-default.md" ;;
    bench)
        # make bench starts its own server: this one would only compete
        su pgrun -c "env PATH=$PATH LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} pg_ctl -D $PGDATA -m fast -w stop" >/dev/null
        inv="test/gpu/device-run.sh bench ($(env | grep '^BENCH_' | sort | tr '\n' ' '))"
        res="$OUT/bench"
        if [ "${BENCH_KEEP_DATA:-0}" = 1 ]; then
            export BENCH_SCRATCH=/var/tmp/gbtree-bench-keep
            res=$BENCH_SCRATCH/results
            [ -d "$res" ] && echo "kept from an earlier call: $(ls "$BENCH_SCRATCH")"
        fi
        [ -d "$res" ] || { mkdir -p "$res" && cp -r test/bench/results/. "$res/"; }
        GB_SKIP_PACKAGES=1 BENCH_INSTALL=0 BENCH_INVOCATION="$inv" BENCH_PRELOAD=1 BENCH_README=0 BENCH_OUT="$res" \
            BENCH_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-8GB} GIT_REV=${GIT_REV:-} \
            timeout "${BENCH_TIME_LIMIT:-86400}" make -s bench 2>&1 | tee "$OUT/bench.log"
        # few files come back from the machine: one archive
        tar -C "$res/.." -czf "$OUT/bench.tar.gz" "$(basename "$res")"
        [ "$res" = "$OUT/bench" ] && rm -rf "$res"
        ;;
    *) echo "unknown: $what"; exit 2 ;;
esac
cp /tmp/pgrun.log "$OUT/server.log" 2>/dev/null
exit 0
