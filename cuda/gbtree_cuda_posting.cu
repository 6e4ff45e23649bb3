/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_posting.cu
 *	  Lookups on a device copy that holds leaves in posting form:
 *	  walk_count_kernel and walk_fill_kernel.
 *
 * The count, leaf and fill kernels read plain leaves only.  A copy that
 * received a page in posting form (src/README, "Deduplication") is served
 * by these two instead: one thread per query walks the tree as the
 * reference walk does (src/gbtree_walk.h): a Lehman-Yao descent with
 * binary searches over the (key, TID) pairs of inner pages (gaps copy the
 * next used slot, so the pairs are sorted), then the leaf chain, reading
 * a plain leaf through its bitmap and a posting leaf through its distinct
 * keys and TID lists.  The first walk counts, the second, after the
 * prefix sum, writes each query's matches at its offset.  Every page is
 * checked as the other kernels check it; a damaged copy sets the error
 * word (GBT_CUDA_ECORRUPT), never faults or loops.
 *
 *-------------------------------------------------------------------------
 */
#include "gbtree_cuda_kernels.cuh"

/* gbtree_node.h's posting-form sizes, for the device */
static __device__ __forceinline__ size_t
d_align8(size_t n)
{
	return (n + 7) & ~(size_t) 7;
}

static __device__ __forceinline__ size_t
d_post_size(int gcap, int nentries, bool wide)
{
	return GBT_POST_KEYS_OFF + (size_t) gcap * 8 + d_align8((size_t) (gcap + 1) * 2) +
		d_align8((size_t) nentries * (wide ? 4 : 2)) + d_align8((size_t) nentries * 2);
}

/* the (key, TID) pair of entry i of a posting leaf */
static __device__ __forceinline__ u64
post_tid(const char *pg, const GbtPostHeader *h, const char *blocks, const uint16_t *offs, int i)
{
	uint32_t	blk = h->wide ? ((const uint32_t *) blocks)[i] :
		h->baseblk + ((const uint16_t *) blocks)[i];
	uint16_t	o = offs[i];

	return ((u64) blk << 32) | ((u64) (o & (GBT_POST_NEGZERO - 1)) << 16) |
		((o & GBT_POST_NEGZERO) ? GBT_TID_FLAG_NEGZERO : 0);
}

/* a page of the copy passes the checks every kernel makes; E_NONE if so */
static __device__ __forceinline__ int
check_page(const GbtPageOpaqueData *op, int expect_level)
{
	if (op->page_id != GBT_PAGE_ID)
		return E_PAGEID;
	if (op->flags & GBT_F_META)
		return E_META;
	if (op->flags & GBT_F_POSTING)
	{
		const GbtPostHeader *h = (const GbtPostHeader *) ((const char *) op - GBT_OPAQUE_OFFSET +
														  GBT_BODY_OFFSET);

		if (!(op->flags & GBT_F_LEAF) || op->nslots != 0 || op->level != 0 ||
			h->ngroups > GBT_POST_MAX_GROUPS || h->nentries > GBT_POST_MAX_ENTRIES ||
			h->gcap < h->ngroups || h->gcap > GBT_POST_MAX_GROUPS || h->gcap % GBT_BLOCK_SLOTS != 0 ||
			h->wide > 1 || d_post_size(h->gcap, h->nentries, h->wide) > GBT_POST_END)
			return E_KIND;
	}
	else if (op->nslots != ((op->flags & GBT_F_LEAF) ? GBT_LEAF_SLOTS : GBT_INNER_SLOTS) ||
			 ((op->flags & GBT_F_LEAF) != 0) != (op->level == 0))
		return E_KIND;
	if (expect_level >= 0 && op->level != expect_level)
		return E_LEVEL;
	return E_NONE;
}

/*
 * The matches of query q: their number, each written at out[0..] when out
 * is not NULL (at most cap of them).  -1 after reporting a damaged page.
 */
static __device__ int64_t
walk_query(const char *pages, uint32_t nblocks, uint32_t root, const GbtCudaQuery q,
		   uint64_t *out_keys, uint64_t *out_tids, uint64_t cap, u64 *err, uint32_t maxhops)
{
	uint32_t	blk = root;
	int			expect = -1;
	uint32_t	hops = 0;
	int64_t		n = 0;
	bool		firstpage = true;
	int			bad;

	if (!elt(q.lo_key, q.lo_tid, q.hi_key, q.hi_tid))
		return 0;
	/* descent to the leaf of (lo_key, lo_tid) */
	for (;;)
	{
		const char *pg;
		const GbtPageOpaqueData *op;
		const u64  *keys;
		const u64  *tids;
		const u64  *used;
		const uint32_t *child;
		int			lo,
					hi,
					s;

		if (blk >= nblocks || blk < GBT_ROOT_BLKNO || ++hops > maxhops)
		{
			report(err, hops > maxhops ? E_HOPS : E_RIGHTLINK, blk);
			return -1;
		}
		pg = pages + (size_t) blk * GBT_PAGE_SIZE;
		op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);
		if ((bad = check_page(op, expect)) != E_NONE)
		{
			report(err, bad, blk);
			return -1;
		}
		if ((op->flags & GBT_F_DELETED) ||
			(!(op->flags & GBT_F_RIGHTMOST) && !elt(q.lo_key, q.lo_tid, op->hikey, op->hitid)))
		{
			if (op->rightlink == GBT_NO_BLOCK || op->rightlink == blk)
			{
				report(err, E_RIGHTLINK, blk);
				return -1;
			}
			expect = op->level;
			blk = op->rightlink;
			continue;
		}
		if (elt(q.lo_key, q.lo_tid, op->lowkey, op->lowtid))
		{
			report(err, E_LOWKEY, blk);
			return -1;
		}
		if (op->flags & GBT_F_LEAF)
			break;
		keys = (const u64 *) (pg + GBT_INNER_KEYS_OFF);
		tids = (const u64 *) (pg + GBT_INNER_TIDS_OFF);
		used = (const u64 *) (pg + GBT_INNER_USED_OFF);
		child = (const uint32_t *) (pg + GBT_INNER_CHILD_OFF);
		/* the last used slot below (lo_key, lo_tid), else the first used one */
		lo = 0;
		hi = GBT_INNER_SLOTS;
		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (elt(keys[mid], tids[mid], q.lo_key, q.lo_tid))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (s = lo - 1; s >= 0 && !((used[s >> 6] >> (s & 63)) & 1); s--)
			;
		if (s < 0)
			for (s = 0; s < GBT_INNER_SLOTS && !((used[s >> 6] >> (s & 63)) & 1); s++)
				;
		if (s >= GBT_INNER_SLOTS)
		{
			report(err, E_EMPTY, blk);
			return -1;
		}
		if (child[s] == GBT_NO_BLOCK || child[s] < GBT_FIRST_FREE_BLKNO)
		{
			report(err, E_CHILD, blk);
			return -1;
		}
		expect = op->level - 1;
		blk = child[s];
	}

	/* the leaf chain from there */
	for (;;)
	{
		const char *pg = pages + (size_t) blk * GBT_PAGE_SIZE;
		const GbtPageOpaqueData *op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);

		if (!(op->flags & GBT_F_DELETED))
		{
			if (op->flags & GBT_F_POSTING)
			{
				const GbtPostHeader *h = (const GbtPostHeader *) (pg + GBT_BODY_OFFSET);
				const u64  *gkeys = (const u64 *) (pg + GBT_POST_KEYS_OFF);
				const uint16_t *start = (const uint16_t *) (pg + GBT_POST_KEYS_OFF + (size_t) h->gcap * 8);
				const char *blocks = (const char *) start + d_align8((size_t) (h->gcap + 1) * 2);
				const uint16_t *offs = (const uint16_t *) (blocks +
														   d_align8((size_t) h->nentries * (h->wide ? 4 : 2)));
				int			g = 0,
							i = 0;

				if (firstpage)
				{
					/* the first group whose key is >= lo_key, then the TID */
					int			lo = 0,
								hi = h->ngroups;

					while (lo < hi)
					{
						int			mid = (lo + hi) / 2;

						if (gkeys[mid] < q.lo_key)
							lo = mid + 1;
						else
							hi = mid;
					}
					g = lo;
					i = g < h->ngroups ? start[g] : h->nentries;
					if (g < h->ngroups && gkeys[g] == q.lo_key)
					{
						int			e = start[g + 1];

						while (i < e && post_tid(pg, h, blocks, offs, i) < q.lo_tid)
							i++;
					}
				}
				for (; g < h->ngroups; g++)
				{
					int			e = start[g + 1];

					if (start[g] > e || e > h->nentries)
					{
						report(err, E_SLOT, blk);
						return -1;
					}
					for (i = i > start[g] ? i : start[g]; i < e; i++)
					{
						u64			t = post_tid(pg, h, blocks, offs, i);

						if (!elt(gkeys[g], t, q.hi_key, q.hi_tid))
							return n;
						if (out_tids && (uint64_t) n < cap)
						{
							if (out_keys)
								out_keys[n] = gkeys[g];
							out_tids[n] = t;
						}
						n++;
					}
				}
			}
			else
			{
				const u64  *keys = (const u64 *) (pg + GBT_LEAF_KEYS_OFF);
				const u64  *tids = (const u64 *) (pg + GBT_LEAF_TIDS_OFF);
				const u64  *used = (const u64 *) (pg + GBT_LEAF_USED_OFF);
				int			s = 0;

				if (firstpage)
				{
					int			hi = GBT_LEAF_SLOTS;

					while (s < hi)
					{
						int			mid = (s + hi) / 2;

						if (elt(keys[mid], tids[mid], q.lo_key, q.lo_tid))
							s = mid + 1;
						else
							hi = mid;
					}
				}
				for (; s < GBT_LEAF_SLOTS; s++)
				{
					if (!((used[s >> 6] >> (s & 63)) & 1))
						continue;
					if (!elt(keys[s], tids[s], q.hi_key, q.hi_tid))
						return n;
					if (out_tids && (uint64_t) n < cap)
					{
						if (out_keys)
							out_keys[n] = keys[s];
						out_tids[n] = tids[s];
					}
					n++;
				}
			}
			if ((op->flags & GBT_F_RIGHTMOST) || !elt(op->hikey, op->hitid, q.hi_key, q.hi_tid))
				return n;
			firstpage = false;
		}
		{
			uint32_t	next = op->rightlink;
			const GbtPageOpaqueData *nop;

			if (next >= nblocks || next < GBT_FIRST_FREE_BLKNO || next == blk || ++hops > maxhops)
			{
				report(err, hops > maxhops ? E_HOPS : E_RIGHTLINK, blk);
				return -1;
			}
			nop = (const GbtPageOpaqueData *) (pages + (size_t) next * GBT_PAGE_SIZE + GBT_OPAQUE_OFFSET);
			if ((bad = check_page(nop, 0)) != E_NONE)
			{
				report(err, bad, next);
				return -1;
			}
			if (!(op->flags & GBT_F_DELETED) &&
				(nop->lowkey != op->hikey || nop->lowtid != op->hitid))
			{
				report(err, E_CHAIN, next);
				return -1;
			}
			blk = next;
		}
	}
}

__global__ void __launch_bounds__(256)
walk_count_kernel(WParams p)
{
	for (uint64_t q = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x; q < p.n;
		 q += (uint64_t) gridDim.x * blockDim.x)
	{
		int64_t		c = walk_query(p.pages, p.nblocks, p.root, p.queries[q], NULL, NULL, 0,
								   p.err, p.maxhops);

		p.counts[q] = c < 0 ? 0 : (uint64_t) c;
	}
}

__global__ void __launch_bounds__(256)
walk_fill_kernel(WParams p)
{
	if (*(volatile u64 *) p.err != 0 || p.offsets[p.n] > p.cap)
		return;					/* the host reports ECORRUPT or ESPACE */
	for (uint64_t q = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x; q < p.n;
		 q += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	off = p.offsets[q];
		uint64_t	cnt = p.offsets[q + 1] - off;
		int64_t		c;

		if (cnt == 0)
			continue;
		c = walk_query(p.pages, p.nblocks, p.root, p.queries[q],
					   p.out_keys ? p.out_keys + off : NULL, p.out_tids + off, cnt,
					   p.err, p.maxhops);
		if (c >= 0 && (uint64_t) c != cnt)
			report(p.err, E_FILL, p.root);
	}
}

cudaError_t
launch_walk_kernel(const WParams &p, bool fill, cudaStream_t stream)
{
	uint64_t	blocks = (p.n + 255) / 256;
	unsigned	grid = (unsigned) (blocks < 65535 ? (blocks ? blocks : 1) : 65535);

	if (fill)
		walk_fill_kernel<<<grid, 256, 0, stream>>>(p);
	else
		walk_count_kernel<<<grid, 256, 0, stream>>>(p);
	return cudaGetLastError();
}
