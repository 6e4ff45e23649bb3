/*
 * bench_lookup.cu
 *	  Benchmark of the batched lookup on a device-resident copy of a
 *	  100M-entry int8 index (uniform random distinct keys, normalized as
 *	  int8 is: value ^ 0x8000000000000000, i.e. uniform over uint64; TIDs of
 *	  a heap of 180 rows per page; leaves at 90% as build.c lays them out).
 *
 *	  bench_lookup OUT.md [--entries N] [--batch N]
 *
 *	  Measures: HBM bandwidth (device-to-device copy, read-only kernel);
 *	  count kernel variants (lanes per query, register cap) on batches of
 *	  existing keys, unsorted and sorted; count + scan + fill; API latency
 *	  of gbt_cuda_lookup for small batches including host<->device
 *	  transfers.  Prints a markdown table and writes it to OUT.md.
 *
 *	  The library source (all of it but the build sort) is compiled in so
 *	  the kernels can be timed alone.
 */
#include "../gbtree_cuda.cu"
#include "../gbtree_cuda_lookup.cu"
#include "../gbtree_cuda_count.cu"
#include "../gbtree_cuda_leaf.cu"
#include "../gbtree_cuda_fill.cu"
#include "../gbtree_cuda_posting.cu"
#include "../gbtree_cuda_wlookup.cu"

#include <cub/device/device_radix_sort.cuh>
#include <omp.h>
#include <string>
#include <vector>
#include <algorithm>
#include <chrono>

#include "tree_model.h"

#define CKB(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)

static std::string report_md;
static double out_rate_unsorted = 0;

static void
out(const char *fmt,...)
{
	char		buf[2048];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs(buf, stdout);
	fflush(stdout);
	report_md += buf;
}

__device__ __forceinline__ uint64_t
d_splitmix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* row r of the heap: key = a bijection of r (distinct, uniform) */
__global__ void
gen_rows(uint64_t *keys, uint32_t *rows, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n; i += (uint64_t) gridDim.x * blockDim.x)
	{
		keys[i] = d_splitmix(i);
		rows[i] = (uint32_t) i;
	}
}

/* query keys: existing keys of random rows */
__global__ void
gen_query_keys(uint64_t *qk, uint64_t nq, uint64_t nrows, uint64_t seed)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < nq; i += (uint64_t) gridDim.x * blockDim.x)
		qk[i] = d_splitmix(d_splitmix(i + seed) % nrows);
}

__global__ void
make_queries(const uint64_t *qk, GbtCudaQuery *q, uint64_t nq)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < nq; i += (uint64_t) gridDim.x * blockDim.x)
	{
		GbtCudaQuery x;

		x.lo_key = qk[i];
		x.lo_tid = 0;
		x.hi_key = qk[i];
		x.hi_tid = ~0ULL;
		q[i] = x;
	}
}

__global__ void
read_kernel(const ulonglong2 *p, size_t n, u64 *sink)
{
	u64			acc = 0;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
	{
		ulonglong2	v = __ldg(p + i);

		acc ^= v.x + v.y;
	}
	if (acc == 0x123456789ULL)
		*sink = acc;
}

/* check: every count 1 (each key exists once) */
__global__ void
check_counts(const uint64_t *counts, uint64_t n, unsigned long long *bad)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n; i += (uint64_t) gridDim.x * blockDim.x)
		if (counts[i] != 1)
			atomicAdd(bad, 1ULL);
}

static float
median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

typedef void (*CountFn) (KParams);

struct Variant
{
	const char *name;
	int			group;
	CountFn		fn;
	int			blocks;
};

static float
time_count(GbtCudaCopy *c, Variant &v, uint64_t n, int reps)
{
	KParams		p;
	cudaEvent_t a,
				b;
	std::vector<float> ts;

	set_tree_params(&p, c, GBT_ROOT_BLKNO, n, NULL, NULL);
	p.n_dev = NULL;
	CKB(cudaEventCreate(&a));
	CKB(cudaEventCreate(&b));
	CKB(cudaMemsetAsync(c->d_err, 0, 8, c->stream));
	for (int r = 0; r < reps + 1; r++)	/* reps 0: one launch (profiling) */
	{
		CKB(cudaEventRecord(a, c->stream));
		v.fn<<<v.blocks, 256, 0, c->stream>>>(p);
		CKB(cudaGetLastError());
		CKB(cudaEventRecord(b, c->stream));
		CKB(cudaEventSynchronize(b));
		float		ms;

		CKB(cudaEventElapsedTime(&ms, a, b));
		if (r > 0 || reps == 0)
			ts.push_back(ms);
	}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return ts.empty() ? 0 : median(ts);
}

typedef void (*LeafFn) (LParams);

/* the leaf kernel alone (sorted order as given), median of reps launches */
static float
time_leaf(GbtCudaCopy *c, LeafFn fn, int nsm, uint64_t n, int reps)
{
	LParams		p;
	cudaEvent_t a,
				b;
	std::vector<float> ts;
	int			nb = 0;

	CKB(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, 256, 0));
	set_tree_params(&p, c, GBT_ROOT_BLKNO, n, NULL, NULL);
	p.out_keys = p.out_tids = NULL;
	p.multi = c->d_err + 3;
	p.list = c->d_skeys[0];
	p.nlist = c->d_err + 1;
	CKB(cudaEventCreate(&a));
	CKB(cudaEventCreate(&b));
	CKB(cudaMemsetAsync(c->d_err, 0, 8, c->stream));
	for (int r = 0; r < reps + 1; r++)
	{
		float		ms;

		CKB(cudaMemsetAsync(c->d_err + 1, 0, 8, c->stream));	/* list length */
		CKB(cudaEventRecord(a, c->stream));
		fn<<<nb * nsm, 256, 0, c->stream>>>(p);
		CKB(cudaGetLastError());
		CKB(cudaEventRecord(b, c->stream));
		CKB(cudaEventSynchronize(b));
		CKB(cudaEventElapsedTime(&ms, a, b));
		if (r > 0)
			ts.push_back(ms);
	}
	{
		u64			nl = 0;

		CKB(cudaMemcpy(&nl, c->d_err + 1, 8, cudaMemcpyDeviceToHost));
		if (nl != 0)
			printf("  leaf kernel left %llu queries to the count kernel\n", (unsigned long long) nl);
	}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return median(ts);
}

static bool
verify_counts(GbtCudaCopy *c, uint64_t n)
{
	unsigned long long *d_bad,
				bad = 0;
	u64			err = 0;

	CKB(cudaMalloc(&d_bad, 8));
	CKB(cudaMemset(d_bad, 0, 8));
	CKB(cudaStreamSynchronize(c->stream));
	check_counts<<<1024, 256>>>(c->d_counts, n, d_bad);
	CKB(cudaMemcpy(&bad, d_bad, 8, cudaMemcpyDeviceToHost));
	CKB(cudaMemcpy(&err, c->d_err, 8, cudaMemcpyDeviceToHost));
	cudaFree(d_bad);
	if (bad || err)
		printf("  VERIFY FAILED: %llu counts != 1, err word %llx\n", bad, (unsigned long long) err);
	return bad == 0 && err == 0;
}

int
main(int argc, char **argv)
{
	const char *outpath = argc > 1 ? argv[1] : "bench.md";
	uint64_t	nentries = 100000000ULL;
	uint64_t	nq = 16ULL << 20;
	cudaDeviceProp prop;

	bool		ncu_mode = false;

	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--ncu") == 0)
			ncu_mode = true;
	for (int i = 2; i + 1 < argc; i += 2)
	{
		if (strcmp(argv[i], "--entries") == 0)
			nentries = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--batch") == 0)
			nq = strtoull(argv[i + 1], NULL, 10);
	}
	CKB(cudaSetDevice(0));
	CKB(cudaGetDeviceProperties(&prop, 0));
	out("# gbtree GPU lookup benchmark\n\n");
	out("device: %s, %d SMs, L2 %d MB, %.1f GiB\n\n", prop.name, prop.multiProcessorCount,
		prop.l2CacheSize >> 20, prop.totalGlobalMem / 1073741824.0);

	/* ---- bandwidth ------------------------------------------------------- */
	double		bw_copy = 0,
				bw_read = 1;

	if (!ncu_mode)
	{
		size_t		bytes = 4ULL << 30;
		char	   *a,
				   *b;
		u64		   *sink;
		cudaEvent_t e0,
					e1;
		std::vector<float> tc,
					tr;

		CKB(cudaMalloc(&a, bytes));
		CKB(cudaMalloc(&b, bytes));
		CKB(cudaMalloc(&sink, 8));
		CKB(cudaMemset(a, 1, bytes));
		CKB(cudaEventCreate(&e0));
		CKB(cudaEventCreate(&e1));
		for (int r = 0; r < 6; r++)
		{
			float		ms;

			CKB(cudaEventRecord(e0));
			CKB(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
			CKB(cudaEventRecord(e1));
			CKB(cudaEventSynchronize(e1));
			CKB(cudaEventElapsedTime(&ms, e0, e1));
			if (r)
				tc.push_back(ms);
			CKB(cudaEventRecord(e0));
			read_kernel<<<prop.multiProcessorCount * 8, 256>>>((const ulonglong2 *) a, bytes / 16, sink);
			CKB(cudaEventRecord(e1));
			CKB(cudaEventSynchronize(e1));
			CKB(cudaEventElapsedTime(&ms, e0, e1));
			if (r)
				tr.push_back(ms);
		}
		bw_copy = 2.0 * bytes / (median(tc) * 1e-3);
		bw_read = (double) bytes / (median(tr) * 1e-3);
		cudaFree(a);
		cudaFree(b);
		cudaFree(sink);
		out("HBM bandwidth: device-to-device copy %.2f TB/s (read + write), read-only kernel %.2f TB/s\n\n",
			bw_copy / 1e12, bw_read / 1e12);
	}

	/* ---- the index ------------------------------------------------------------ */
	auto		t0 = std::chrono::steady_clock::now();
	std::vector<TmEntry> entries(nentries);

	{
		uint64_t   *dk,
				   *dk2;
		uint32_t   *dr,
				   *dr2;
		void	   *tmp = NULL;
		size_t		tmpb = 0;
		std::vector<uint64_t> hk(nentries);
		std::vector<uint32_t> hr(nentries);

		CKB(cudaMalloc(&dk, nentries * 8));
		CKB(cudaMalloc(&dk2, nentries * 8));
		CKB(cudaMalloc(&dr, nentries * 4));
		CKB(cudaMalloc(&dr2, nentries * 4));
		gen_rows<<<1024, 256>>>(dk, dr, nentries);
		CKB(cub::DeviceRadixSort::SortPairs(tmp, tmpb, dk, dk2, dr, dr2, (int64_t) nentries));
		CKB(cudaMalloc(&tmp, tmpb));
		CKB(cub::DeviceRadixSort::SortPairs(tmp, tmpb, dk, dk2, dr, dr2, (int64_t) nentries));
		CKB(cudaMemcpy(hk.data(), dk2, nentries * 8, cudaMemcpyDeviceToHost));
		CKB(cudaMemcpy(hr.data(), dr2, nentries * 4, cudaMemcpyDeviceToHost));
		cudaFree(dk);
		cudaFree(dk2);
		cudaFree(dr);
		cudaFree(dr2);
		cudaFree(tmp);
#pragma omp parallel for
		for (long i = 0; i < (long) nentries; i++)
		{
			entries[i].key = hk[i];
			entries[i].tid = gbt_tid_pack(hr[i] / 180, (uint16_t) (hr[i] % 180 + 1), 0);
		}
	}

	TmIndex		ix;

	tm_build(ix, entries, 90, 70);
	entries.clear();
	entries.shrink_to_fit();

	GbtCudaCopy *c = NULL;

	if (gbt_cuda_copy_create(&c, ix.nblocks) != 0 ||
		gbt_cuda_copy_put_range(c, 0, ix.img.data(), ix.nblocks) != 0)
	{
		fprintf(stderr, "copy: %s\n", gbt_cuda_last_error());
		return 2;
	}

	double		build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	unsigned	rootlevel = ix.op(GBT_ROOT_BLKNO)->level;

	out("index: %llu entries, %u blocks (%.2f GB), root level %u (%u levels); host build + upload %.1f s\n\n",
		(unsigned long long) nentries, ix.nblocks, ix.nblocks * 8192.0 / 1e9, rootlevel, rootlevel + 1, build_s);

	/* ---- batches of existing keys -------------------------------------------------- */
	if (reserve_lookup_workspace(c, nq) != 0 || reserve_result_buffers(c, nq) != 0)
	{
		fprintf(stderr, "workspace: %s\n", gbt_cuda_last_error());
		return 2;
	}

	GbtCudaQuery *d_unsorted;
	uint64_t   *dqk,
			   *dqk2;

	CKB(cudaMalloc(&d_unsorted, nq * sizeof(GbtCudaQuery)));
	CKB(cudaMalloc(&dqk, nq * 8));
	CKB(cudaMalloc(&dqk2, nq * 8));
	gen_query_keys<<<1024, 256>>>(dqk, nq, nentries, 777);
	make_queries<<<1024, 256>>>(dqk, d_unsorted, nq);
	{
		void	   *tmp = NULL;
		size_t		tmpb = 0;

		CKB(cub::DeviceRadixSort::SortKeys(tmp, tmpb, dqk, dqk2, (int64_t) nq));
		CKB(cudaMalloc(&tmp, tmpb));
		CKB(cub::DeviceRadixSort::SortKeys(tmp, tmpb, dqk, dqk2, (int64_t) nq));
		cudaFree(tmp);
	}
	CKB(cudaDeviceSynchronize());

	int			nsm = prop.multiProcessorCount;
	Variant		vars[] = {
		{"8 lanes/query, 3 blocks/SM, no leaf fast path", 8, count_kernel<8, 3, false>, 0},
		{"8 lanes/query, 2 blocks/SM", 8, count_kernel<8, 2, true>, 0},
		{"8 lanes/query, 3 blocks/SM", 8, count_kernel<8, 3, true>, 0},
		{"8 lanes/query, 4 blocks/SM", 8, count_kernel<8, 4, true>, 0},
		{"16 lanes/query, 3 blocks/SM", 16, count_kernel<16, 3, true>, 0},
	};
	const int	nvars = sizeof(vars) / sizeof(vars[0]);

	for (int i = 0; i < nvars; i++)
	{
		int			nb = 0;
		cudaFuncAttributes fa;

		CKB(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, vars[i].fn, 256, 0));
		CKB(cudaFuncGetAttributes(&fa, vars[i].fn));
		vars[i].blocks = nb * nsm;
		printf("variant %-28s %3d regs, %d blocks/SM\n", vars[i].name, fa.numRegs, nb);
	}

	/* DRAM bytes per lookup, by construction (upper levels stay in L2) */
	const double leaf_bytes = 32.0 * (8 + 2 + 2 + 4 + 4);	/* dir, used, opaque, keys, TIDs sectors */
	const double count_bytes = leaf_bytes + 32 + 8 + 8 + 16;	/* + query, count, start, first */
	const double fill_bytes = 16 + 8 + 16 + 16;	/* offsets, start, first, result */

	out("DRAM bytes per lookup (model: leaf sectors dir 8 + bitmap 2 + special 2 + keys 4 + TIDs 4, "
		"upper levels in L2): count %.0f B, fill %.0f B; bound at the read-only bandwidth: "
		"count %.2e/s, count+fill %.2e/s\n\n", count_bytes, fill_bytes, bw_read / count_bytes,
		bw_read / (count_bytes + fill_bytes));

	out("## Count kernel alone, batch of %llu existing keys\n\n", (unsigned long long) nq);
	out("| variant | unsorted lookups/s | sorted lookups/s | unsorted fraction of DRAM bound |\n|---|---|---|---|\n");

	if (ncu_mode)
	{
		/*
		 * For the profiler's counters: the whole pipeline (count + scan +
		 * fill) once on the sorted batch, once on the unsorted batch with
		 * the device sort.
		 */
		make_queries<<<1024, 256, 0, c->stream>>>(dqk2, c->d_queries, nq);
		CKB(queue_lookup_phases(c, GBT_ROOT_BLKNO, nq, 1, 0, c->out_cap, true));
		CKB(cudaStreamSynchronize(c->stream));
		make_queries<<<1024, 256, 0, c->stream>>>(dqk, c->d_queries, nq);
		CKB(queue_lookup_phases(c, GBT_ROOT_BLKNO, nq, 0, 0, c->out_cap, true));
		CKB(cudaDeviceSynchronize());
		return 0;
	}

	int			best_u = 0,
				best_s = 0;
	double		rate_u[16],
				rate_s[16];

	for (int i = 0; i < nvars; i++)
	{
		float		tu,
					ts;
		bool		ok;

		make_queries<<<1024, 256, 0, c->stream>>>(dqk, c->d_queries, nq);
		tu = time_count(c, vars[i], nq, 5);
		ok = verify_counts(c, nq);
		make_queries<<<1024, 256, 0, c->stream>>>(dqk2, c->d_queries, nq);
		ts = time_count(c, vars[i], nq, 5);
		ok = verify_counts(c, nq) && ok;
		rate_u[i] = nq / (tu * 1e-3);
		rate_s[i] = nq / (ts * 1e-3);
		out("| %s%s | %.3e (%.2f ms) | %.3e (%.2f ms) | %.0f%% |\n", vars[i].name, ok ? "" : " (WRONG COUNTS)",
			rate_u[i], tu, rate_s[i], ts, 100.0 * rate_u[i] * count_bytes / bw_read);
		if (rate_u[i] > rate_u[best_u])
			best_u = i;
		if (rate_s[i] > rate_s[best_s])
			best_s = i;
	}
	{
		/* the leaf kernel (one query per lane), both register caps */
		struct
		{
			const char *name;
			LeafFn		fn;
		}			lv[] = {
			{"leaf kernel, one query per lane, 3 blocks/SM", leaf_kernel<false, 3>},
			{"leaf kernel, one query per lane, 4 blocks/SM", leaf_kernel<false, 4>},
		};

		for (int i = 0; i < 2; i++)
		{
			float		tu,
						ts;
			bool		ok;
			cudaFuncAttributes fa;

			CKB(cudaFuncGetAttributes(&fa, lv[i].fn));
			printf("variant %s: %d regs, %zu B local\n", lv[i].name, fa.numRegs, fa.localSizeBytes);
			make_queries<<<1024, 256, 0, c->stream>>>(dqk, c->d_queries, nq);
			tu = time_leaf(c, lv[i].fn, nsm, nq, 3);
			ok = verify_counts(c, nq);
			make_queries<<<1024, 256, 0, c->stream>>>(dqk2, c->d_queries, nq);
			ts = time_leaf(c, lv[i].fn, nsm, nq, 5);
			ok = verify_counts(c, nq) && ok;
			out("| %s%s | %.3e (%.2f ms) | %.3e (%.2f ms) | %.0f%% |\n", lv[i].name, ok ? "" : " (WRONG COUNTS)",
				nq / (tu * 1e-3), tu, nq / (ts * 1e-3), ts, 100.0 * nq / (tu * 1e-3) * count_bytes / bw_read);
		}
	}
	out("\n");

	/*
	 * Bytes per lookup the pipelines touch (model).  Leaf level: a sorted
	 * batch of this size reaches every leaf, reading its keys, directory,
	 * bitmap and special space, plus the TID sector of each match.
	 * Sorted, direct path (every count 1): query 32, leaf level, count +
	 * first match + result written 8 + 16 + 16, prefix sum 8 + 8; the fill
	 * pass does nothing.  Minimum: query, leaf level, result and offset.
	 * Device-sorted: key extraction (query sector 32, key and index 8),
	 * histogram 4, three radix passes 3 x 16, index 4 + query 32 + leaf
	 * level + result record 32, record counts 32 + 8, prefix sum 16, fill
	 * (offsets 8, record 32, result 16).
	 */
	uint64_t	nleaves = 0;

	for (uint32_t b = GBT_FIRST_FREE_BLKNO; b < ix.nblocks; b++)
		if (ix.op(b)->flags & GBT_F_LEAF)
			nleaves++;

	const double leaf_level = (double) nleaves * (GBT_LEAF_SLOTS * 8 + 256 + 64 + 64) / nq + 32;
	const double pipe_bytes = 32 + leaf_level + (8 + 16 + 16) + (8 + 8);
	const double min_bytes = 32 + leaf_level + 16 + 8;
	const double unsorted_bytes = (32 + 8) + 4 + 3 * 16 + (4 + 32 + leaf_level + 32) + (32 + 8) + 16 + (8 + 32 + 16);

	/* ---- whole device pipeline (library default kernel) -------------------- */
	out("## Whole device pipeline (queries and results on the device; sorted order: leaf kernel, %d blocks/SM cap; "
		"as given: count kernel, %d lanes/query)\n\n", LEAF_MINB, lanes_per_query(0));
	out("| batch | path | count only ms | count+scan+fill ms | lookups/s (count+fill) | count-only lookups/s |\n|---|---|---|---|---|---|\n");

	double		rate_sorted = 0;
	const int	sbits[2] = {16, 24};

	for (int mode = 0; mode < 4; mode++)
	{
		/*
		 * 0: unsorted batch passed as sorted (no device sort: the leaf
		 * kernel on random order); 1, 2: unsorted, sorted on the device
		 * first (16, 24 bits); 3: sorted batch
		 */
		const char *names[4] = {"unsorted, flagged sorted (no device sort)", "unsorted, device sort by 16 bits",
		"unsorted, device sort by 24 bits", "sorted"};
		cudaEvent_t e0,
					e1;
		std::vector<float> tc,
					tf;

		if (mode == 1 || mode == 2)
			c->sort_bits = sbits[mode - 1];
		CKB(cudaEventCreate(&e0));
		CKB(cudaEventCreate(&e1));
		make_queries<<<1024, 256, 0, c->stream>>>(mode == 3 ? dqk2 : dqk, c->d_queries, nq);
		for (int withfill = 0; withfill < 2; withfill++)
			for (int r = 0; r < 6; r++)
			{
				float		ms;

				CKB(cudaEventRecord(e0, c->stream));
				CKB(queue_lookup_phases(c, GBT_ROOT_BLKNO, nq, mode == 0 || mode == 3, 0,
										withfill ? c->out_cap : 0, true));
				CKB(cudaEventRecord(e1, c->stream));
				CKB(cudaEventSynchronize(e1));
				CKB(cudaEventElapsedTime(&ms, e0, e1));
				if (r)
					(withfill ? tf : tc).push_back(ms);
			}
		c->sort_bits = SORT_BITS;
		/* the results are the query keys, in batch order */
		{
			std::vector<uint64_t> ok(nq),
						qk(nq);
			uint64_t	total = 0;
			u64			err[2] = {0, 0};

			CKB(cudaMemcpy(&total, c->d_offsets + nq, 8, cudaMemcpyDeviceToHost));
			CKB(cudaMemcpy(err, c->d_err, 16, cudaMemcpyDeviceToHost));
			CKB(cudaMemcpy(ok.data(), c->d_out_keys, nq * 8, cudaMemcpyDeviceToHost));
			CKB(cudaMemcpy(qk.data(), mode == 3 ? dqk2 : dqk, nq * 8, cudaMemcpyDeviceToHost));
			if (total != nq || ok != qk || err[0])
				out("**results WRONG** (total %llu, err %llx)\n", (unsigned long long) total, (unsigned long long) err[0]);
			if (mode != 0 && err[1])
				printf("  %llu queries left to the count kernel\n", (unsigned long long) err[1]);
		}
		out("| %llu | %s | %.2f | %.2f | %.3e | %.3e |\n", (unsigned long long) nq, names[mode],
			median(tc), median(tf), nq / (median(tf) * 1e-3), nq / (median(tc) * 1e-3));
		if (mode == 2)
			out_rate_unsorted = nq / (median(tf) * 1e-3);
		if (mode == 3)
			rate_sorted = nq / (median(tf) * 1e-3);
	}
	out("\nBandwidth bound (model, bytes per lookup; read-only bandwidth %.2f TB/s measured above): "
		"%llu leaves, leaf level %.0f B/lookup; sorted pipeline (direct path) %.0f B/lookup -> bound %.2e/s; "
		"minimum %.0f B/lookup -> bound %.2e/s; device-sorted pipeline %.0f B/lookup -> bound %.2e/s\n\n",
		bw_read / 1e12, (unsigned long long) nleaves, leaf_level, pipe_bytes, bw_read / pipe_bytes,
		min_bytes, bw_read / min_bytes, unsorted_bytes, bw_read / unsorted_bytes);
	out("fraction of the bandwidth bound, count+fill: sorted %.0f%% (%.0f%% of the minimum); "
		"unsorted via device sort (24 bits) %.0f%%\n\n",
		100.0 * rate_sorted * pipe_bytes / bw_read, 100.0 * rate_sorted * min_bytes / bw_read,
		100.0 * out_rate_unsorted * unsorted_bytes / bw_read);

	/* ---- API latency, host buffers ------------------------------------------------------------ */
	out("## gbt_cuda_lookup end to end (host queries in, host results out, pinned host buffers)\n\n");
	out("Orders: unsorted and sorted send 32-byte range queries; \"points\" sends the unsorted keys as bare "
		"8-byte keys (GBT_CUDA_POINTS, what a SQL = ANY batch sends), which the device sorts and "
		"deduplicates before the lookup, results in key order (lookups/s counts the keys sent; the draws "
		"repeat, so fewer distinct keys are answered).\n\n");
	out("| batch | order | median latency | lookups/s |\n|---|---|---|---|\n");
	{
		uint64_t	maxn = std::min(nq, (uint64_t) 16 << 20);
		std::vector<uint64_t> hk_u(maxn),
					hk_s(maxn);
		GbtCudaQuery *hq;
		uint64_t   *hpts,
				   *hoff,
				   *hkeys,
				   *htids;

		CKB(cudaMemcpy(hk_u.data(), dqk, maxn * 8, cudaMemcpyDeviceToHost));
		CKB(cudaMallocHost(&hq, maxn * sizeof(GbtCudaQuery)));
		CKB(cudaMallocHost(&hpts, maxn * 8));
		CKB(cudaMallocHost(&hoff, (maxn + 1) * 8));
		CKB(cudaMallocHost(&hkeys, maxn * 8));
		CKB(cudaMallocHost(&htids, maxn * 8));

		const uint64_t sizes[] = {1000, 10000, 100000, 1000000, maxn};

		for (uint64_t bn : sizes)
		{
			if (bn > maxn)
				continue;
			for (int order = 0; order < 3; order++)
			{
				/* 0 unsorted, 1 sorted, 2 unsorted bare keys (GBT_CUDA_POINTS) */
				int			sorted = order == 1 ? 1 : order == 2 ? GBT_CUDA_POINTS : 0;
				const char *label = order == 0 ? "unsorted" : order == 1 ? "sorted" : "points";
				std::vector<uint64_t> ks(hk_u.begin(), hk_u.begin() + bn);
				std::vector<double> ts;
				int			reps = bn >= 1000000 ? 5 : 21;
				bool		ok = true;

				if (order == 1)
					std::sort(ks.begin(), ks.end());
				for (uint64_t i = 0; i < bn; i++)
					hq[i] = GbtCudaQuery{ks[i], 0, ks[i], ~0ULL};
				if (order == 2)
				{
					std::copy(ks.begin(), ks.end(), hpts);
					/* the device answers the distinct keys (draws repeat) in key order */
					std::sort(ks.begin(), ks.end());
					ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
				}
				for (int r = 0; r < reps + 1; r++)
				{
					uint64_t	total = 0;
					auto		a = std::chrono::steady_clock::now();
					int			rc = gbt_cuda_lookup(c, GBT_ROOT_BLKNO,
													 order == 2 ? (const GbtCudaQuery *) hpts : hq,
													 (uint32_t) bn, sorted, hoff, hkeys, htids, maxn, &total);
					auto		b = std::chrono::steady_clock::now();

					if (rc != 0 || total != ks.size())
					{
						ok = false;
						printf("lookup rc %d: %s\n", rc, gbt_cuda_last_error());
						break;
					}
					if (r)
						ts.push_back(std::chrono::duration<double>(b - a).count());
				}
				if (ok)
					ok = std::equal(ks.begin(), ks.end(), hkeys);
				if (!ok)
				{
					out("| %llu | %s | FAILED | |\n", (unsigned long long) bn, label);
					continue;
				}
				std::sort(ts.begin(), ts.end());
				double		med = ts[ts.size() / 2];

				out("| %llu | %s | %.1f us | %.3e |\n", (unsigned long long) bn, label, med * 1e6, bn / med);
			}
		}
		cudaFreeHost(hq);
		cudaFreeHost(hpts);
		cudaFreeHost(hoff);
		cudaFreeHost(hkeys);
		cudaFreeHost(htids);
	}
	out("\n");

	FILE	   *f = fopen(outpath, "w");

	if (f)
	{
		fputs(report_md.c_str(), f);
		fclose(f);
	}
	gbt_cuda_copy_free(c);
	return 0;
}
