/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_wlookup.cu
 *	  Batched lookups in device copies of multi-word indexes
 *	  (gbt_cuda_lookup_words; src/README, "Multi-word keys").
 *
 * One warp a query: a Lehman-Yao descent to the leaf of (lo, TID 0) with
 * the warp's in-page search (gbtree_cuda_words.cuh, checked against
 * node.c by cuda/test/test_words.cu), then the leaf chain, 32 slots a
 * ballot, while the keys are <= hi.  The first pass counts each query's
 * matches, a prefix sum gives their offsets, and the second pass walks
 * again and writes them, each lane its slot's words and TID at the
 * position its ballot gives.  Every page reached gets the checks of the
 * one-word kernels (page id, kind, word count, capacity, level, low key
 * against the target, links in range and away from the fixed blocks, the
 * leaf chain's low keys equal to the previous high key, a hop bound), so
 * a damaged copy gives GBT_CUDA_ECORRUPT, never a fault or a loop.  The
 * CPU reference is gbtree_walk.h's gbt_walk_range_words, which the
 * stand-in (test/gpu/emu) answers with and cuda/test/test_wtree.cu
 * compares this with.
 *
 *-------------------------------------------------------------------------
 */
#include <cub/cub.cuh>

#include "gbtree_cuda_host.cuh"
#include "gbtree_cuda_words.cuh"

#define WL_WARPS_PER_BLOCK	8

struct WLParams
{
	const char *pages;
	uint32_t	nblocks;
	uint32_t	root;
	int			nw;
	uint64_t	n;
	const uint64_t *queries;	/* n x 2 x nw */
	uint64_t   *counts;			/* count pass */
	const uint64_t *offsets;	/* fill pass */
	uint64_t   *out_words;		/* fill pass: nw a match */
	uint64_t   *out_tids;
	uint64_t	cap;
	u64		   *err;
	uint32_t	maxhops;
};

static __device__ __forceinline__ bool
wl_used(const uint64_t *used, int s)
{
	return (__ldg(&used[s >> 6]) >> (s & 63)) & 1;
}

/* (k1, t1) < (k2, t2), nw words */
static __device__ __forceinline__ bool
wl_lt(const uint64_t *k1, u64 t1, const uint64_t *k2, u64 t2, int nw)
{
	for (int k = 0; k < nw; k++)
		if (k1[k] != k2[k])
			return k1[k] < k2[k];
	return t1 < t2;
}

/* a page's high (or low) key, all its words */
static __device__ __forceinline__ void
wl_bound(const GbtPageOpaqueData *op, const uint64_t *xb, int nw, bool high,
		 uint64_t *key, u64 *tid)
{
	key[0] = high ? op->hikey : op->lowkey;
	for (int k = 1; k < nw; k++)
		key[k] = xb[(high ? 0 : nw - 1) + k - 1];
	*tid = high ? op->hitid : op->lowtid;
}

/* the checks every page reached gets; E_NONE if it passes */
static __device__ __forceinline__ int
wl_check(const GbtPageOpaqueData *op, int nw, int expect_level)
{
	bool		leaf = (op->flags & GBT_F_LEAF) != 0;

	if (op->page_id != GBT_PAGE_ID)
		return E_PAGEID;
	if (op->flags & (GBT_F_META | GBT_F_POSTING))
		return E_KIND;
	if ((op->keywords > 1 ? op->keywords : 1) != nw || leaf != (op->level == 0) ||
		op->nslots != words_flags_slots(op->flags, nw, leaf))
		return E_KIND;
	if (expect_level >= 0 && op->level != expect_level)
		return E_LEVEL;
	return E_NONE;
}

/* the word arrays of a checked page, its bitmap, children and bounds */
struct WLPage
{
	WordsPage	p;
	const uint64_t *used;
	const uint32_t *child;
	const uint64_t *xb;
};

static __device__ __forceinline__ WLPage
wl_page(const char *pg, int nw, bool leaf)
{
	WLPage		w;
	size_t		ns;
	size_t		off;

	w.p = words_page(pg, nw, leaf);
	ns = (size_t) w.p.nslots;
	off = GBT_BODY_OFFSET + 16 * ns;
	w.child = leaf ? NULL : (const uint32_t *) (pg + off);
	if (!leaf)
		off += 4 * ns;
	w.used = (const uint64_t *) (pg + off + GBT_DIR_SIZE * 8);
	w.xb = w.p.xb;
	return w;
}

/*
 * Query q's matches: their number; with out_words, each written there
 * (at most cap).  -1 after reporting a damaged page.  Every lane of the
 * warp calls it with the same query.
 */
static __device__ int64_t
wl_walk(const WLParams &prm, uint64_t q, uint64_t *out_words, uint64_t *out_tids, uint64_t cap)
{
	int			nw = prm.nw;
	int			lane = threadIdx.x & 31;
	uint64_t	lo[GBT_MAX_KEY_WORDS],
				hi[GBT_MAX_KEY_WORDS],
				bk[GBT_MAX_KEY_WORDS];
	u64			bt;
	uint32_t	blk = prm.root;
	int			expect = -1;
	uint32_t	hops = 0;
	int64_t		n = 0;
	int			s;
	int			bad;

	for (int k = 0; k < nw; k++)
	{
		lo[k] = prm.queries[(q * 2) * nw + k];
		hi[k] = prm.queries[(q * 2 + 1) * nw + k];
	}
	if (wl_lt(hi, 0, lo, 0, nw))
		return 0;
	/* descent to the leaf of (lo, TID 0) */
	for (;;)
	{
		const char *pg;
		const GbtPageOpaqueData *op;
		WLPage		w;
		bool		leaf;

		if (blk >= prm.nblocks || blk < GBT_ROOT_BLKNO || ++hops > prm.maxhops)
		{
			report(prm.err, hops > prm.maxhops ? E_HOPS : E_RIGHTLINK, blk);
			return -1;
		}
		pg = prm.pages + (size_t) blk * GBT_PAGE_SIZE;
		op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);
		if ((bad = wl_check(op, nw, expect)) != E_NONE)
		{
			report(prm.err, bad, blk);
			return -1;
		}
		leaf = (op->flags & GBT_F_LEAF) != 0;
		w = wl_page(pg, nw, leaf);
		wl_bound(op, w.xb, nw, true, bk, &bt);
		/* a tailed high key's unseen tail: only greater words move right */
		if (op->flags & GBT_F_TAILS)
			bt = ~(u64) 0;
		if ((op->flags & GBT_F_DELETED) ||
			(!(op->flags & GBT_F_RIGHTMOST) && !wl_lt(lo, 0, bk, bt, nw)))
		{
			/* moved right by a split the parent does not show yet */
			if (op->rightlink == GBT_NO_BLOCK || op->rightlink == blk ||
				op->rightlink < GBT_FIRST_FREE_BLKNO)
			{
				report(prm.err, E_RIGHTLINK, blk);
				return -1;
			}
			expect = op->level;
			blk = op->rightlink;
			continue;
		}
		wl_bound(op, w.xb, nw, false, bk, &bt);
		if (wl_lt(lo, 0, bk, bt, nw))
		{
			report(prm.err, E_LOWKEY, blk);
			return -1;
		}
		s = words_lower_bound_entry(w.p, lo, 0);
		if (leaf)
			break;
		{
			/* the child of the last used slot below (lo, 0), else the first */
			int			c = s - 1;
			uint32_t	child;

			while (c >= 0 && !wl_used(w.used, c))
				c--;
			if (c < 0)
				for (c = 0; c < w.p.nslots && !wl_used(w.used, c); c++)
					;
			if (c >= w.p.nslots)
			{
				report(prm.err, E_EMPTY, blk);
				return -1;
			}
			child = __ldg(&w.child[c]);
			if (child < GBT_FIRST_FREE_BLKNO || child >= prm.nblocks)
			{
				report(prm.err, E_CHILD, blk);
				return -1;
			}
			expect = op->level - 1;
			blk = child;
		}
	}
	/* the leaf chain: used slots from s on while their key <= hi */
	for (;;)
	{
		const char *pg = prm.pages + (size_t) blk * GBT_PAGE_SIZE;
		const GbtPageOpaqueData *op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);
		WLPage		w = wl_page(pg, nw, true);
		bool		done = false;

		if (!(op->flags & GBT_F_DELETED))
		{
			for (int base = s; base < w.p.nslots && !done; base += 32)
			{
				int			slot = base + lane;
				bool		u = slot < w.p.nslots && wl_used(w.used, slot);
				bool		in = u && words_below(w.p.w, slot, hi, nw, true);
				unsigned	ball = __ballot_sync(FULL_MASK, in);

				if (in && out_words)
				{
					uint64_t	at = (uint64_t) n + __popc(ball & ((1u << lane) - 1));

					if (at < cap)
					{
						for (int k = 0; k < nw; k++)
							out_words[at * nw + k] = __ldg(&w.p.w[k][slot]);
						out_tids[at] = __ldg(&w.p.tids[slot]);
					}
				}
				n += __popc(ball);
				done = __ballot_sync(FULL_MASK, u && !in) != 0;
			}
			if (done || (op->flags & GBT_F_RIGHTMOST))
				return n;
			/* no entry of the next leaf is <= hi when its low key is above hi */
			wl_bound(op, w.xb, nw, true, bk, &bt);
			if (wl_lt(hi, ~0ULL, bk, bt, nw))
				return n;
		}
		{
			uint32_t	next = op->rightlink;
			const GbtPageOpaqueData *nop;
			const uint64_t *nxb;
			uint64_t	lk[GBT_MAX_KEY_WORDS];
			u64			lt;

			if (next >= prm.nblocks || next < GBT_FIRST_FREE_BLKNO || next == blk ||
				++hops > prm.maxhops)
			{
				report(prm.err, hops > prm.maxhops ? E_HOPS : E_RIGHTLINK, blk);
				return -1;
			}
			pg = prm.pages + (size_t) next * GBT_PAGE_SIZE;
			nop = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);
			if ((bad = wl_check(nop, nw, 0)) != E_NONE)
			{
				report(prm.err, bad, next);
				return -1;
			}
			if (!(op->flags & GBT_F_DELETED))
			{
				nxb = wl_page(pg, nw, true).xb;
				wl_bound(nop, nxb, nw, false, lk, &lt);
				bool		same;

				wl_bound(op, w.xb, nw, true, bk, &bt);
				same = lt == bt;
				for (int k = 0; k < nw; k++)
					same = same && lk[k] == bk[k];
				if (!same)
				{
					report(prm.err, E_CHAIN, next);
					return -1;
				}
			}
			blk = next;
			s = 0;
		}
	}
}

__global__ void __launch_bounds__(32 * WL_WARPS_PER_BLOCK)
wl_count_kernel(WLParams p)
{
	uint64_t	q = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) / 32;

	if (q >= p.n)
	{
		if (q == p.n && (threadIdx.x & 31) == 0)
			p.counts[q] = 0;	/* the prefix sum's last element: the total */
		return;
	}
	{
		int64_t		c = wl_walk(p, q, NULL, NULL, 0);

		if ((threadIdx.x & 31) == 0)
			p.counts[q] = c < 0 ? 0 : (uint64_t) c;
	}
}

__global__ void __launch_bounds__(32 * WL_WARPS_PER_BLOCK)
wl_fill_kernel(WLParams p)
{
	uint64_t	q = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) / 32;
	uint64_t	off,
				cnt;
	int64_t		c;

	if (q >= p.n || *(volatile u64 *) p.err != 0)
		return;
	off = p.offsets[q];
	cnt = p.offsets[q + 1] - off;
	if (cnt == 0)
		return;
	c = wl_walk(p, q, p.out_words + off * p.nw, p.out_tids + off, cnt);
	if (c >= 0 && (uint64_t) c != cnt && (threadIdx.x & 31) == 0)
		report(p.err, E_FILL, p.root);
}

void
free_words_workspace(GbtCudaCopy *c)
{
	cudaFree(c->d_wqueries);
	cudaFree(c->d_wcounts);
	cudaFree(c->d_woffsets);
	cudaFree(c->d_wcub);
	cudaFree(c->d_wout_words);
	cudaFree(c->d_wout_tids);
	c->d_wqueries = c->d_wcounts = c->d_woffsets = NULL;
	c->d_wcub = NULL;
	c->d_wout_words = c->d_wout_tids = NULL;
	c->wq_cap = c->wcub_bytes = c->wout_cap = 0;
}

/* per-query buffers and the prefix sum's scratch for n queries */
static int
reserve_words_queries(GbtCudaCopy *c, size_t n)
{
	size_t		ncap,
				need = 0;

	if (n <= c->wq_cap)
		return 0;
	ncap = n < 4096 ? 4096 : n + n / 4;
	cudaFree(c->d_wqueries);
	cudaFree(c->d_wcounts);
	cudaFree(c->d_woffsets);
	cudaFree(c->d_wcub);
	c->d_wqueries = c->d_wcounts = c->d_woffsets = NULL;
	c->d_wcub = NULL;
	c->wq_cap = c->wcub_bytes = 0;
	CK(cub::DeviceScan::ExclusiveSum(NULL, need, (uint64_t *) NULL, (uint64_t *) NULL,
									 (int64_t) ncap + 1, c->stream), "scan size");
	CK(cudaMalloc(&c->d_wqueries, ncap * 2 * GBT_MAX_KEY_WORDS * sizeof(uint64_t)), "query buffer");
	CK(cudaMalloc(&c->d_wcounts, (ncap + 1) * sizeof(uint64_t)), "count buffer");
	CK(cudaMalloc(&c->d_woffsets, (ncap + 1) * sizeof(uint64_t)), "offset buffer");
	CK(cudaMalloc(&c->d_wcub, need), "scan buffer");
	c->wcub_bytes = need;
	c->wq_cap = ncap;
	return 0;
}

static int
reserve_words_results(GbtCudaCopy *c, size_t n)
{
	size_t		ncap;

	if (n <= c->wout_cap)
		return 0;
	ncap = n + n / 4 + 1024;
	cudaFree(c->d_wout_words);
	cudaFree(c->d_wout_tids);
	c->d_wout_words = c->d_wout_tids = NULL;
	c->wout_cap = 0;
	CK(cudaMalloc(&c->d_wout_words, ncap * GBT_MAX_KEY_WORDS * sizeof(uint64_t)), "result buffer");
	CK(cudaMalloc(&c->d_wout_tids, ncap * sizeof(uint64_t)), "result buffer");
	c->wout_cap = ncap;
	return 0;
}

static unsigned
wl_grid(uint64_t warps)
{
	return (unsigned) ((warps + WL_WARPS_PER_BLOCK - 1) / WL_WARPS_PER_BLOCK);
}

extern "C" int
gbt_cuda_lookup_words(GbtCudaCopy *c, uint32_t root, int nw, const uint64_t *queries,
					  uint32_t n, uint64_t *offsets, uint64_t *out_words, uint64_t *out_tids,
					  uint64_t out_capacity, uint64_t *out_total)
{
	WLParams	p;
	uint32_t	nblocks;
	size_t		bytes;
	uint64_t	total;
	int			rc;

	if (out_total)
		*out_total = 0;
	if (!c || !offsets || !out_total || (n && !queries) ||
		(out_capacity && (!out_tids || !out_words)))
	{
		gbt_cuda_set_error("gbt_cuda_lookup_words: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	if (nw < 1 || nw > GBT_MAX_KEY_WORDS)
	{
		gbt_cuda_set_error("gbt_cuda_lookup_words: %d words a key", nw);
		return GBT_CUDA_EINVAL;
	}
	if (root >= c->nblocks || root == GBT_META_BLKNO)
	{
		gbt_cuda_set_error("root block %u out of range (copy has %u blocks)", root, c->nblocks);
		return GBT_CUDA_ECORRUPT;
	}
	offsets[0] = 0;
	if (n == 0)
		return 0;
	if ((rc = reserve_words_queries(c, n)) != 0)
		return rc;
	memset(&p, 0, sizeof(p));
	p.pages = gbt_cuda_copy_device_pages(c, &nblocks);
	p.nblocks = nblocks;
	p.root = root;
	p.nw = nw;
	p.n = n;
	p.queries = c->d_wqueries;
	p.counts = c->d_wcounts;
	p.offsets = c->d_woffsets;
	p.err = c->d_err;
	/* a walk never visits more pages than the copy has, plus move-rights */
	p.maxhops = nblocks + 64;
	CK(cudaMemcpyAsync(c->d_wqueries, queries, (size_t) n * 2 * nw * sizeof(uint64_t),
					   cudaMemcpyHostToDevice, c->stream), "copying queries");
	CK(cudaMemsetAsync(c->d_err, 0, 4 * sizeof(u64), c->stream), "lookup");
	wl_count_kernel<<<wl_grid((uint64_t) n + 1), 32 * WL_WARPS_PER_BLOCK, 0, c->stream>>>(p);
	CK(cudaGetLastError(), "count kernel");
	bytes = c->wcub_bytes;
	CK(cub::DeviceScan::ExclusiveSum(c->d_wcub, bytes, c->d_wcounts, c->d_woffsets,
									 (int64_t) n + 1, c->stream), "prefix sum");
	CK(cudaMemcpyAsync(&c->h_small[0], c->d_err, sizeof(u64), cudaMemcpyDeviceToHost, c->stream),
	   "lookup");
	CK(cudaMemcpyAsync(offsets, c->d_woffsets, ((size_t) n + 1) * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, c->stream), "copying offsets");
	CK(cudaStreamSynchronize(c->stream), "lookup");
	if (c->h_small[0] != 0)
		return corrupt_copy_error(c->h_small[0]);
	total = offsets[n];
	*out_total = total;
	if (total > out_capacity)
		return GBT_CUDA_ESPACE;
	if (total == 0)
		return 0;
	if ((rc = reserve_words_results(c, total)) != 0)
		return rc;
	p.out_words = c->d_wout_words;
	p.out_tids = c->d_wout_tids;
	p.cap = total;
	wl_fill_kernel<<<wl_grid(n), 32 * WL_WARPS_PER_BLOCK, 0, c->stream>>>(p);
	CK(cudaGetLastError(), "fill kernel");
	CK(cudaMemcpyAsync(&c->h_small[0], c->d_err, sizeof(u64), cudaMemcpyDeviceToHost, c->stream),
	   "lookup");
	CK(cudaMemcpyAsync(out_words, c->d_wout_words, total * nw * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, c->stream), "copying results");
	CK(cudaMemcpyAsync(out_tids, c->d_wout_tids, total * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, c->stream), "copying results");
	CK(cudaStreamSynchronize(c->stream), "lookup");
	if (c->h_small[0] != 0)
	{
		*out_total = 0;
		return corrupt_copy_error(c->h_small[0]);
	}
	return 0;
}
