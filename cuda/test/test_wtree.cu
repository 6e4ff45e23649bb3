/*
 * test_wtree.cu
 *	  Range counts on whole trees of multi-word keys on the GPU: the model
 *	  builder of src/gbtree_walk.h lays sorted entries out bottom-up as
 *	  src/build.c does (pages of node.c's multi-word format, right-links,
 *	  high and low keys with their later words in the body), and a simple
 *	  kernel, one warp a query, descends with the warp's in-page search
 *	  (cuda/gbtree_cuda_words.cuh) and counts the leaf entries whose key
 *	  lies in [lo, hi], following right-links.  Each count must equal a
 *	  binary search's over the sorted entries and the CPU walk's
 *	  (gbt_walk_range_words).  Then one timing: point lookups on a large
 *	  two-word tree.
 *
 *	  A step towards the lookup kernels of multi-word indexes; the
 *	  library's kernels do not read such trees yet.
 *
 *	  test_wtree [entries for the timing, default 20000000]
 *	  Last line: "N passed, N failed"; exit status 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <chrono>
#include <vector>

#include "test_common.h"

#include "gbtree_cuda_words.cuh"

extern "C"
{
#include "gbtree_simd.h"
#include "gbtree_walk.h"
#include "gbtree_wsort.h"
}

/* ---- the tree: gbtree_walk.h's model builder ---- */

struct WTree
{
	std::vector<char> img;
	uint32_t	root = 0;
	uint32_t	nblocks = 0;
	int			nw = 2;
};

static void
build_tree(WTree &t, const std::vector<uint64_t> &e, size_t n, int nw)
{
	t.nw = nw;
	t.img.assign(gbt_walk_words_max_pages(n, nw, 90) * GBT_PAGE_SIZE, 0);
	t.root = gbt_walk_build_words(t.img.data(), e.data(), n, nw, 90, &t.nblocks);
	t.img.resize((size_t) t.nblocks * GBT_PAGE_SIZE);
}

/* ---- the kernel ---- */

struct RangeQuery
{
	uint64_t	lo[GBT_MAX_KEY_WORDS];
	uint64_t	hi[GBT_MAX_KEY_WORDS];
};

static __device__ __forceinline__ bool
slot_used(const uint64_t *used, int s)
{
	return (__ldg(&used[s >> 6]) >> (s & 63)) & 1;
}

/* key of slot s <= x, word by word */
static __device__ __forceinline__ bool
key_le(const WordsPage &p, int s, const uint64_t *x)
{
	for (int k = 0; k < p.nwords; k++)
	{
		uint64_t	v = __ldg(&p.w[k][s]);

		if (v != x[k])
			return v < x[k];
	}
	return true;
}

__global__ void
count_kernel(const char *pages, uint32_t root, int nw, const RangeQuery *qs, int nq,
			 unsigned long long *out)
{
	int			q = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	int			lane = threadIdx.x & 31;
	uint64_t	lo[GBT_MAX_KEY_WORDS],
				hi[GBT_MAX_KEY_WORDS];
	uint32_t	blk = root;
	unsigned long long total = 0;
	int			s;

	if (q >= nq)
		return;
	for (int k = 0; k < GBT_MAX_KEY_WORDS; k++)
	{
		lo[k] = qs[q].lo[k];
		hi[k] = qs[q].hi[k];
	}
	/* descend: the last entry below (lo, TID 0), or the first */
	for (;;)
	{
		const char *pg = pages + (size_t) blk * GBT_PAGE_SIZE;
		const GbtPageOpaqueData *op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);
		bool		leaf = (op->flags & GBT_F_LEAF) != 0;
		WordsPage	p = words_page(pg, nw, leaf);
		const uint64_t *used = (const uint64_t *) (pg + GBT_BODY_OFFSET + 16 * (size_t) p.nslots +
												   (leaf ? 0 : 4 * (size_t) p.nslots) + GBT_DIR_SIZE * 8);

		s = words_lower_bound_entry(p, lo, 0);
		if (leaf)
			break;
		{
			int			c = s - 1;
			const uint32_t *child = (const uint32_t *) (pg + GBT_BODY_OFFSET + 16 * (size_t) p.nslots);

			while (c >= 0 && !slot_used(used, c))
				c--;
			if (c < 0)
				for (c = 0; c < p.nslots && !slot_used(used, c); c++)
					;
			blk = __ldg(&child[c]);
		}
	}
	/* count used slots from s on while their key <= hi, leaf after leaf */
	for (;;)
	{
		const char *pg = pages + (size_t) blk * GBT_PAGE_SIZE;
		const GbtPageOpaqueData *op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);
		WordsPage	p = words_page(pg, nw, true);
		const uint64_t *used = (const uint64_t *) (pg + GBT_BODY_OFFSET + 16 * (size_t) p.nslots +
												   GBT_DIR_SIZE * 8);
		bool		done = false;

		for (int base = s; base < p.nslots && !done; base += 32)
		{
			int			slot = base + lane;
			bool		u = slot < p.nslots && slot_used(used, slot);
			bool		in = u && key_le(p, slot, hi);

			total += __popc(__ballot_sync(0xFFFFFFFFu, in));
			done = __ballot_sync(0xFFFFFFFFu, u && !in) != 0;
		}
		if (done || (op->flags & GBT_F_RIGHTMOST))
			break;
		blk = op->rightlink;
		s = 0;
	}
	if (lane == 0)
		out[q] = total;
}

/* ---- the reference ---- */

static size_t
ref_bound(const std::vector<uint64_t> &e, size_t n, int nw, const uint64_t *x, bool upper)
{
	size_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;
		int			c = 0;

		for (int k = 0; k < nw && c == 0; k++)
			c = (e[mid * (nw + 1) + k] > x[k]) - (e[mid * (nw + 1) + k] < x[k]);
		if (upper ? c <= 0 : c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* entries: kind 0 uuid-like, 1 (tenant, time), 2 heavy ties in every word */
static void
make_entries(std::vector<uint64_t> &e, size_t n, int nw, int kind)
{
	std::vector<uint64_t> scratch(n * (nw + 1));
	std::vector<size_t> hist(gbt_wsort_hist_size(nw));

	e.resize(n * (nw + 1));
	for (size_t i = 0; i < n; i++)
	{
		uint64_t   *r = &e[i * (nw + 1)];

		for (int k = 0; k < nw; k++)
			r[k] = kind == 0 ? xrand() : kind == 1 ? (k == 0 ? xrand() % 1000 : xrand() >> 20)
				: xrand() % 4;
		r[nw] = ((uint64_t) (i / 200) << 32 | (uint64_t) (i % 200 + 1) << 16);
	}
	gbt_wsort(e.data(), scratch.data(), n, nw, hist.data(), NULL);
}

static void
run_case(int nw, int kind, size_t n, int nq, bool timed)
{
	std::vector<uint64_t> e;
	WTree		t;
	std::vector<RangeQuery> qs(nq);
	std::vector<unsigned long long> got(nq);
	char	   *d_pages;
	RangeQuery *d_q;
	unsigned long long *d_out;
	int			mism = 0;
	auto		t0 = std::chrono::steady_clock::now();

	make_entries(e, n, nw, kind);
	build_tree(t, e, n, nw);
	for (int i = 0; i < nq; i++)
	{
		RangeQuery &q = qs[i];
		const uint64_t *a = &e[(xrand() % n) * (nw + 1)];
		const uint64_t *b = &e[(xrand() % n) * (nw + 1)];
		int			form = timed ? 0 : (int) (i % 5);

		memset(&q, 0, sizeof(q));
		for (int k = 0; k < nw; k++)
		{
			q.lo[k] = a[k];
			q.hi[k] = a[k];
		}
		if (form == 1)			/* the first word's whole range */
			for (int k = 1; k < nw; k++)
			{
				q.lo[k] = 0;
				q.hi[k] = UINT64_MAX;
			}
		else if (form == 2)		/* between two entries */
		{
			bool		swap = false;

			for (int k = 0; k < nw; k++)
				if (a[k] != b[k])
				{
					swap = a[k] > b[k];
					break;
				}
			for (int k = 0; k < nw; k++)
			{
				q.lo[k] = swap ? b[k] : a[k];
				q.hi[k] = swap ? a[k] : b[k];
			}
		}
		else if (form == 3)		/* absent keys, extremes */
			for (int k = 0; k < nw; k++)
			{
				q.lo[k] = i % 2 ? UINT64_MAX : 0;
				q.hi[k] = q.lo[k];
			}
		else if (form == 4)		/* an empty range: hi below lo */
			for (int k = 0; k < nw; k++)
				q.hi[k] = k == nw - 1 && q.lo[k] > 0 ? q.lo[k] - 1 : q.lo[k];
	}
	double		build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

	CUDA_OK(cudaMalloc(&d_pages, t.img.size()));
	CUDA_OK(cudaMalloc(&d_q, sizeof(RangeQuery) * nq));
	CUDA_OK(cudaMalloc(&d_out, sizeof(unsigned long long) * nq));
	CUDA_OK(cudaMemcpy(d_pages, t.img.data(), t.img.size(), cudaMemcpyHostToDevice));
	CUDA_OK(cudaMemcpy(d_q, qs.data(), sizeof(RangeQuery) * nq, cudaMemcpyHostToDevice));
	{
		cudaEvent_t ev0,
					ev1;
		float		ms = 0;

		cudaEventCreate(&ev0);
		cudaEventCreate(&ev1);
		for (int rep = 0; rep < (timed ? 3 : 1); rep++)
		{
			cudaEventRecord(ev0);
			count_kernel<<<(nq * 32 + 255) / 256, 256>>>(d_pages, t.root, nw, d_q, nq, d_out);
			cudaEventRecord(ev1);
			CUDA_OK(cudaEventSynchronize(ev1));
			CUDA_OK(cudaGetLastError());
			cudaEventElapsedTime(&ms, ev0, ev1);
			if (timed)
				printf("  timing: %zu entries of %d words (%zu pages, %.0f MB), %d point lookups: %.2f ms (%.1f M lookups/s)\n",
					   n, nw, t.img.size() / GBT_PAGE_SIZE, t.img.size() / 1e6, nq, ms, nq / ms / 1e3);
		}
		cudaEventDestroy(ev0);
		cudaEventDestroy(ev1);
	}
	CUDA_OK(cudaMemcpy(got.data(), d_out, sizeof(unsigned long long) * nq, cudaMemcpyDeviceToHost));
	for (int i = 0; i < nq; i++)
	{
		size_t		a = ref_bound(e, n, nw, qs[i].lo, false),
					b = ref_bound(e, n, nw, qs[i].hi, true);
		unsigned long long want = b > a ? b - a : 0;
		int64_t		walk = gbt_walk_range_words(t.img.data(), t.nblocks, t.root, nw, qs[i].lo, 0,
												qs[i].hi, UINT64_MAX, NULL, NULL);

		if ((got[i] != want || walk != (int64_t) want) && mism++ < 5)
			printf("  query %d: device %llu, CPU walk %lld, reference %llu\n", i, got[i],
				   (long long) walk, want);
	}
	EXPECT(mism == 0, "%d words, kind %d, %zu entries: %d of %d counts differ (device, CPU walk, reference)",
		   nw, kind, n, mism, nq);
	printf("%d words, %s, %zu entries, %zu pages, build %.0f ms: %d queries, %d differ\n", nw,
		   kind == 0 ? "uuid-like" : kind == 1 ? "(tenant, time)" : "ties in every word", n,
		   t.img.size() / GBT_PAGE_SIZE, build_ms, nq, mism);
	cudaFree(d_pages);
	cudaFree(d_q);
	cudaFree(d_out);
}

int
main(int argc, char **argv)
{
	size_t		big = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000;

	rng = 0x853C49E6748FEA9BULL;
	gbt_simd_set(gbt_simd_best());
	for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
		for (int kind = 0; kind < 3; kind++)
		{
			run_case(nw, kind, 1000, 2000, false);
			run_case(nw, kind, 200000, 20000, false);
		}
	if (big > 0)
		run_case(2, 0, big, 1000000, true);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
