#!/bin/sh
# gpu_run.sh: one device-machine session of the CUDA work (build, tests with
# sanitizers, benchmark, Nsight Compute counters of the lookup pipeline).
# Writes logs under ${OUT:-cuda/test/build}; run at the repository root.
# NO_TESTS=1 skips the tests, NO_NCU=1 the profiler.
out=${OUT:-cuda/test/build}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >"$out/gpu.txt" 2>&1
git rev-parse HEAD >>"$out/gpu.txt" 2>/dev/null
date -u >>"$out/gpu.txt"
rm -f cuda/libgbtree_cuda.so
make -f cuda/cuda.mk cuda-clean >/dev/null
if [ -z "$NO_TESTS" ]; then
	TEST_TIMEOUT=${TEST_TIMEOUT:-200} make -f cuda/cuda.mk cuda-test >"$out/test.log" 2>&1
	echo "tests exit $?" >>"$out/test.log"
	tail -5 "$out/test.log"
fi
make -f cuda/cuda.mk cuda-bench BENCH_OUT="$out/kernel.md" >"$out/bench.log" 2>&1
echo "bench exit $?" >>"$out/bench.log"
tail -40 "$out/bench.log"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$ncu" ] && [ -z "$NO_NCU" ]; then
	timeout 150 "$ncu" --metrics dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.sum,gpu__time_duration.sum \
		cuda/test/build/bench_lookup /dev/null --ncu >"$out/ncu.txt" 2>&1
	echo "ncu exit $?" >>"$out/ncu.txt"
	grep -c "dram__bytes_read" "$out/ncu.txt"
fi
