# cuda/cuda.mk: tests and benchmark of the CUDA side (GPU machine only).
# Included by the root Makefile; also works alone, without PostgreSQL:
#   make -f cuda/cuda.mk cuda-test
#   make -f cuda/cuda.mk cuda-bench BENCH_OUT=results.md
#
# cuda-test:  builds cuda/test/build/test_lookup, runs it at full size, then
#             under compute-sanitizer memcheck and racecheck at --small size;
#             last line "N passed, N failed", non-zero exit on any failure.
# cuda-test-words: builds and runs cuda/test/build/test_words (the
#             multi-word page search against node.c; then under memcheck),
#             test_wsort (the multi-word entry sort against the CPU's) and
#             test_wtree (the library's multi-word lookups on whole trees
#             against the CPU walk and a binary search, damaged copies, and
#             a timing; then under memcheck, untimed).
# cuda-bench: builds cuda/test/build/bench_lookup (100M-entry int8 index,
#             batches of 16M keys, small-batch latencies); markdown table on
#             stdout and in $(BENCH_OUT).

NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_ARCH ?= sm_90
CC ?= cc

ifeq ($(origin CUDA_LIB),undefined)
CUDA_LIB = cuda/libgbtree_cuda.so
$(CUDA_LIB): $(wildcard cuda/*.cu) $(wildcard cuda/*.cuh) $(wildcard cuda/*.h) src/gbtree_node.h
	$(NVCC) -O3 -arch=$(CUDA_ARCH) -Xcompiler -fPIC -shared -Isrc -Icuda \
		-o $@ $(filter %.cu,$^)
endif

CUDA_TEST_BUILD = cuda/test/build
CUDA_TEST_NVCC = $(NVCC) -O2 -std=c++17 -arch=$(CUDA_ARCH) -Isrc -Icuda -Icuda/test
COMPUTE_SANITIZER ?= $(shell command -v compute-sanitizer 2>/dev/null || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
BENCH_OUT ?= cuda/test/build/bench.md

$(CUDA_TEST_BUILD)/node.o: src/node.c src/gbtree_node.h src/gbtree_simd.h src/gbtree_tailwalk.h \
		src/gbtree_walk.h src/gbtree_wsort.h
	@mkdir -p $(CUDA_TEST_BUILD)
	$(CC) -O2 -std=gnu99 -Isrc -c -o $@ src/node.c

$(CUDA_TEST_BUILD)/node_post.o: src/node_post.c src/gbtree_node.h
	@mkdir -p $(CUDA_TEST_BUILD)
	$(CC) -O2 -std=gnu99 -Isrc -c -o $@ src/node_post.c

$(CUDA_TEST_BUILD)/simd.o: src/simd.c src/gbtree_simd.h
	@mkdir -p $(CUDA_TEST_BUILD)
	$(CC) -O2 -std=gnu99 -Isrc -c -o $@ src/simd.c

$(CUDA_TEST_BUILD)/test_lookup: cuda/test/test_lookup.cu cuda/test/tree_model.h cuda/gbtree_cuda.h \
		src/gbtree_node.h src/gbtree_walk.h \
		$(CUDA_TEST_BUILD)/node.o $(CUDA_TEST_BUILD)/node_post.o $(CUDA_TEST_BUILD)/simd.o $(CUDA_LIB)
	$(CUDA_TEST_NVCC) -o $@ cuda/test/test_lookup.cu $(CUDA_TEST_BUILD)/node.o $(CUDA_TEST_BUILD)/node_post.o $(CUDA_TEST_BUILD)/simd.o \
		-Lcuda -lgbtree_cuda -Xlinker -rpath -Xlinker $(abspath cuda)

# the device's multi-word page search against node.c, and its sort of
# multi-word entries against gbtree_wsort.h (no library needed)
$(CUDA_TEST_BUILD)/test_words: cuda/test/test_words.cu cuda/test/test_common.h cuda/gbtree_cuda_words.cuh src/gbtree_node.h \
		$(CUDA_TEST_BUILD)/node.o $(CUDA_TEST_BUILD)/node_post.o $(CUDA_TEST_BUILD)/simd.o
	$(CUDA_TEST_NVCC) -o $@ cuda/test/test_words.cu $(CUDA_TEST_BUILD)/node.o $(CUDA_TEST_BUILD)/node_post.o $(CUDA_TEST_BUILD)/simd.o

$(CUDA_TEST_BUILD)/test_wsort: cuda/test/test_wsort.cu cuda/test/test_common.h cuda/gbtree_cuda_wsort.cuh src/gbtree_wsort.h
	@mkdir -p $(CUDA_TEST_BUILD)
	$(CUDA_TEST_NVCC) -o $@ cuda/test/test_wsort.cu

$(CUDA_TEST_BUILD)/test_wtree: cuda/test/test_wtree.cu cuda/test/test_common.h cuda/gbtree_cuda.h src/gbtree_node.h \
		src/gbtree_walk.h src/gbtree_wsort.h src/gbtree_tailwalk.h $(CUDA_TEST_BUILD)/node.o $(CUDA_TEST_BUILD)/node_post.o $(CUDA_TEST_BUILD)/simd.o $(CUDA_LIB)
	$(CUDA_TEST_NVCC) -o $@ cuda/test/test_wtree.cu $(CUDA_TEST_BUILD)/node.o $(CUDA_TEST_BUILD)/node_post.o $(CUDA_TEST_BUILD)/simd.o \
		-Lcuda -lgbtree_cuda -Xlinker -rpath -Xlinker $(abspath cuda)

# the benchmark compiles the library source in (it times the kernels alone too)
$(CUDA_TEST_BUILD)/bench_lookup: cuda/test/bench_lookup.cu cuda/test/tree_model.h $(wildcard cuda/*.cu) \
		$(wildcard cuda/*.cuh) cuda/gbtree_cuda.h src/gbtree_node.h src/gbtree_walk.h \
		$(CUDA_TEST_BUILD)/node.o $(CUDA_TEST_BUILD)/node_post.o $(CUDA_TEST_BUILD)/simd.o
	$(CUDA_TEST_NVCC) -Xcompiler -fopenmp -o $@ cuda/test/bench_lookup.cu \
		$(CUDA_TEST_BUILD)/node.o $(CUDA_TEST_BUILD)/node_post.o $(CUDA_TEST_BUILD)/simd.o -lgomp

cuda-test: $(CUDA_TEST_BUILD)/test_lookup
	COMPUTE_SANITIZER="$(COMPUTE_SANITIZER)" sh cuda/test/run_tests.sh $(CUDA_TEST_BUILD)/test_lookup

cuda-test-words: $(CUDA_TEST_BUILD)/test_words $(CUDA_TEST_BUILD)/test_wsort $(CUDA_TEST_BUILD)/test_wtree
	$(CUDA_TEST_BUILD)/test_words
	$(COMPUTE_SANITIZER) --tool memcheck --error-exitcode 1 $(CUDA_TEST_BUILD)/test_words
	$(CUDA_TEST_BUILD)/test_wsort
	$(CUDA_TEST_BUILD)/test_wtree
	$(COMPUTE_SANITIZER) --tool memcheck --error-exitcode 1 $(CUDA_TEST_BUILD)/test_wtree 0

cuda-bench: $(CUDA_TEST_BUILD)/bench_lookup
	$(CUDA_TEST_BUILD)/bench_lookup $(BENCH_OUT)

cuda-clean:
	rm -rf $(CUDA_TEST_BUILD)

.PHONY: cuda-test cuda-test-words cuda-bench cuda-clean
