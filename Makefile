# gbtree: PGXS build.  gbtree.so never links CUDA; the CUDA side is a
# separate library (cuda/) built only when nvcc is found and CUDA != 0.

EXTENSION = gbtree
MODULE_big = gbtree
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
DATA = $(sort $(wildcard sql/gbtree--*.sql))
PGFILEDESC = "gbtree - B-tree index access method with SIMD and GPU search"

# pg_regress inputs: every sql/*.sql that is not an extension script.
REGRESS = $(sort $(filter-out gbtree--%,$(basename $(notdir $(wildcard sql/*.sql)))))
REGRESS_OPTS = --inputdir=.

# No JIT bitcode: it needs clang and buys nothing for an index AM.
override with_llvm = no

# before PGXS: it folds PG_CPPFLAGS into CPPFLAGS when included
PG_CPPFLAGS = -I$(srcdir)/src -I$(srcdir)/cuda -idirafter $(srcdir)/src/icu_types

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

override CFLAGS += -std=gnu99

# PostgreSQL 18's CFLAGS (Debian sid, built with gcc 14) name a warning that
# older compilers (bookworm's gcc 12, Ubuntu 24.04's gcc 13) reject.
ifneq ($(filter -Wmissing-variable-declarations,$(CFLAGS)),)
ifneq ($(shell $(CC) -Werror -Wmissing-variable-declarations -E -x c /dev/null >/dev/null 2>&1 && echo ok),ok)
override CFLAGS := $(filter-out -Wmissing-variable-declarations,$(CFLAGS))
endif
endif

# PGXS does not track headers
$(OBJS): $(wildcard src/*.h)

# Only what PostgreSQL looks up by name leaves the library: _PG_init, the
# module magic, the SQL functions (PG_FUNCTION_INFO_V1) and the workers'
# entry points (declared PGDLLEXPORT).  PostgreSQL 16 and later build
# modules with -fvisibility=hidden; 15 exports every symbol, so each call
# between gbtree's files went through the PLT, and loading gbtree (with
# -z now) resolved 569 jump slots, 332 now (its imports).
gbtree.exports: $(wildcard src/*.c) $(wildcard src/*.h)
	{ echo '{ global: _PG_init; Pg_magic_func;'; \
	  sed -n 's/^PG_FUNCTION_INFO_V1(\([A-Za-z_0-9]*\));.*/\1; pg_finfo_\1;/p' $(filter %.c,$^); \
	  sed -n 's/^PGDLLEXPORT .*[ *]\([A-Za-z_0-9]*\)(.*/\1;/p' $^ | sort -u; \
	  echo 'local: *; };'; } > $@
$(shlib): gbtree.exports
SHLIB_LINK += -Wl,--version-script=gbtree.exports

# ---- CUDA side (optional) ------------------------------------------------
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifeq ($(strip $(NVCC)),)
CUDA ?= 0
else
CUDA ?= 1
endif
CUDA_ARCH ?= sm_90
CUDA_LIB = cuda/libgbtree_cuda.so

ifeq ($(CUDA),1)
all: $(CUDA_LIB)
install: install-cuda
endif

$(CUDA_LIB): $(wildcard cuda/*.cu) $(wildcard cuda/*.cuh) $(wildcard cuda/*.h) src/gbtree_node.h
	$(NVCC) -O3 -arch=$(CUDA_ARCH) -Xcompiler -fPIC -shared -Isrc -Icuda \
		-o $@ $(filter %.cu,$^)

# CUDA unit tests and the kernel benchmark (GPU machine only)
-include cuda/cuda.mk

install-cuda: $(CUDA_LIB)
	$(INSTALL_SHLIB) $(CUDA_LIB) '$(DESTDIR)$(pkglibdir)/libgbtree_cuda.so'

EXTRA_CLEAN = $(CUDA_LIB) gbtree.exports test/bench/bench_node test/bench/bench_multiword test/bench/bench_textkey test/unit/test_node test/unit/test_keys test/unit/test_tail test/unit/test_wpost results regression.diffs regression.out output_iso tmp_check

# ---- tests, demo ---------------------------------------------------------
# Unit tests of the pure-C layers (no server needed).
UNIT_CFLAGS = -O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu99 -Isrc
test/unit/test_node: test/unit/test_node.c src/node.c src/node_post.c src/node_split.c src/simd.c src/gbtree_node.h src/gbtree_tailwalk.h src/gbtree_simd.h src/gbtree_keys.h src/gbtree_walk.h src/gbtree_wsort.h
	$(CC) $(UNIT_CFLAGS) -o $@ test/unit/test_node.c src/node.c src/node_post.c src/node_split.c src/simd.c
test/unit/test_keys: test/unit/test_keys.c src/gbtree_keys.h src/gbtree_keyshape.h src/gbtree_keyrange.h src/gbtree_wsort.h
	$(CC) $(UNIT_CFLAGS) -o $@ test/unit/test_keys.c -lm
test/unit/test_tail: test/unit/test_tail.c src/gbtree_tail.h src/gbtree_keyshape.h src/gbtree_node.h
	$(CC) $(UNIT_CFLAGS) -o $@ test/unit/test_tail.c

test/bench/bench_node: test/bench/bench_node.c test/bench/bench_util.h src/node.c src/node_post.c src/simd.c src/gbtree_node.h src/gbtree_simd.h
	$(CC) -O2 -g -std=gnu11 -Isrc -o $@ test/bench/bench_node.c src/node.c src/node_post.c src/simd.c

bench-node: test/bench/bench_node
	test/bench/bench_node

test/bench/bench_multiword: test/bench/bench_multiword.c test/bench/bench_util.h src/simd.c src/gbtree_simd.h
	$(CC) -O2 -g -std=gnu11 -Isrc -o $@ test/bench/bench_multiword.c src/simd.c

bench-multiword: test/bench/bench_multiword
	test/bench/bench_multiword

# needs ICU's headers (libicu-dev)
test/bench/bench_textkey: test/bench/bench_textkey.c test/bench/bench_util.h
	$(CC) -O2 -g -std=gnu11 -o $@ test/bench/bench_textkey.c -licui18n -licuuc

bench-textkey: test/bench/bench_textkey
	test/bench/bench_textkey

test/unit/test_wpost: test/unit/test_wpost.c src/node_wpost.c src/node.c src/node_post.c src/node_split.c src/simd.c src/gbtree_wpost.h src/gbtree_node.h src/gbtree_keyshape.h
	$(CC) $(UNIT_CFLAGS) -o $@ test/unit/test_wpost.c src/node_wpost.c src/node.c src/node_post.c src/node_split.c src/simd.c

unit: test/unit/test_node test/unit/test_keys test/unit/test_tail test/unit/test_wpost
	test/unit/test_node && test/unit/test_keys && test/unit/test_tail && test/unit/test_wpost

test:
	test/run-tests.sh

# GPU suites (a machine with an NVIDIA GPU; test/gpu/RESULTS.md)
test-gpu:
	test/gpu/run-gpu-tests.sh

# The same suites without a GPU, against the CPU stand-in for the CUDA
# library (test/gpu/emu); make test runs them as suite gpuemu.
test-gpu-emu:
	test/gpu/run-emu.sh

# regress, isolation and TAP suites on a PostgreSQL 15 built with
# --enable-cassert --enable-debug, cached (test/cassert/README.md)
test-cassert:
	test/cassert/run-cassert.sh
.PHONY: test-cassert

# Only PostgreSQL's own regression suite rewritten to gbtree, as make
# test-cassert runs it (test/pgsuite/README.md)
test-pgsuite:
	CASSERT_SUITES=pgsuite test/cassert/run-cassert.sh
.PHONY: test-pgsuite

demo:
	test/demo.sh

# Differential fuzzer on a throwaway cluster (needs make install first)
FUZZ_MINUTES ?= 5
fuzz:
	test/fuzz/run-fuzz.sh $$(( $(FUZZ_MINUTES) * 60 )) $(FUZZ_SEED)

# Concurrency soak on a throwaway cluster (needs make install first)
SOAK_MINUTES ?= 5
soak:
	test/soak/run-soak.sh $$(( $(SOAK_MINUTES) * 60 ))

# Benchmarks against btree (test/bench/README.md); BENCH_ROWS, BENCH_ENGINES, BENCH_OUT
bench:
	test/bench/run-bench.sh

# The CPU goals of issue 3: 2M-row uniform int8 table, PostgreSQL's default
# settings, CREATE INDEX, size, = ANY, ranges, ORDER BY, pgbench 1 client.
bench-cpu-goals:
	BENCH_TARGET=bench-cpu-goals BENCH_ROWS=2000000 BENCH_DATASETS=uniform BENCH_MEASURES=$${BENCH_MEASURES:-build,queries,lookups} \
	BENCH_CLIENTS=1 BENCH_PGBENCH_SCALE=0 BENCH_PGBENCH_SECS=$${BENCH_PGBENCH_SECS:-10} BENCH_DEFAULTS=1 BENCH_README=0 \
	BENCH_OUT=$${BENCH_OUT:-test/bench/results/cpu-goals} test/bench/run-bench.sh

# The write path (issue 18): COPY, INSERT ... SELECT, UPDATE and pgbench
# inserts, gbtree against btree and no index (test/bench/README.md)
bench-write:
	test/bench/run-write-bench.sh
.PHONY: bench-write

.PHONY: test-gpu test-gpu-emu test demo unit install-cuda bench-node bench-multiword bench-textkey bench bench-cpu-goals fuzz soak
