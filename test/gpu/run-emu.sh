#!/usr/bin/env bash
# test/gpu/run-emu.sh: the GPU suites of make test-gpu on a machine without
# a GPU.  Builds the CPU stand-in for the CUDA library (test/gpu/emu),
# starts a throwaway cluster with gbtree preloaded and
# gbtree.device_library pointing at the stand-in, and runs
# test/gpu/run-gpu-tests.sh against it (suites GPU_EMU_SUITES, default
# service,regress,diff,merge,fresh,build,failures): the GPU service, device
# copies and their freshness, page shipping, lookups, GPU builds and every
# failure path run for real; only the kernels are stand-ins (the CUDA
# suite tests those on the GPU machine).
#
#   test/gpu/run-emu.sh            (make test-gpu-emu; make test runs it as
#                                   suite gpuemu)
#
# The extension must be installed.  Last line: "N passed, N failed".
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TREE=$(cd "$HERE/../.." && pwd)
# shellcheck source=test/lib.sh
. "$HERE/../lib.sh"

SUITES=${GPU_EMU_SUITES:-service,regress,diff,merge,fresh,build,failures}
gb_resolve_pg_config
BINDIR=$("$PG_CONFIG" --bindir)
gb_ensure_test_user
gb_make_scratch gbtree-gpuemu
PORT=$((20000 + RANDOM % 20000))
DATA=$GB_SCRATCH/data
EMU=$GB_SCRATCH/libgbtree_cuda_emu.so

stop() {
    gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -m immediate stop >/dev/null 2>&1
    rm -rf "$GB_SCRATCH"
}
trap stop EXIT

${CC:-gcc} -O2 -g -std=gnu99 -fPIC -shared -I"$TREE/src" -I"$TREE/cuda" -o "$EMU" \
    "$TREE/test/gpu/emu/gbtree_cuda_emu.c" "$TREE/src/node.c" "$TREE/src/node_post.c" "$TREE/src/simd.c" ||
    { echo "could not build the stand-in"; echo "0 passed, 1 failed"; exit 1; }
[ "$GB_IS_ROOT" = 1 ] && chown "$GB_TEST_USER:" "$EMU"

gb_run_as "$BINDIR/initdb" -D "$DATA" --no-locale -A trust >/dev/null || gb_die "initdb failed"
gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -l "$GB_SCRATCH/server.log" -w \
    -o "-p $PORT -k $GB_SCRATCH -c listen_addresses= -c fsync=off -c max_connections=60 -c autovacuum=off -c max_prepared_transactions=10 -c shared_preload_libraries=gbtree -c gbtree.device_library=$EMU" \
    start >/dev/null || { tail -20 "$GB_SCRATCH/server.log"; gb_die "server start failed"; }

gb_run_as env PATH="$BINDIR:$PATH" PGHOST="$GB_SCRATCH" PGPORT="$PORT" PGDATABASE=postgres \
    PG_CONFIG="$PG_CONFIG" GPU_TESTS_ONLY="$SUITES" FRESH_SECS="${FRESH_SECS:-30}" \
    bash -c "cd '$TREE' && test/gpu/run-gpu-tests.sh"
rc=$?
if grep -qE 'PANIC|TRAP:|terminated by signal' "$GB_SCRATCH/server.log"; then
    echo "---- server log: crashes ----"
    grep -nE -B3 -A3 'PANIC|TRAP:|terminated by signal' "$GB_SCRATCH/server.log" | tail -n 40
fi
exit $rc
