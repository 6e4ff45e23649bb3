/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_fill.cu
 *	  The fill pass of a batched lookup: fill_kernel writes the matches of
 *	  every query at its offset (the prefix sum of the counts).
 *
 * fill_kernel: one query per lane; single-match queries copy the kept
 * match, the others are walked again by the whole warp from their start.
 *
 *-------------------------------------------------------------------------
 */
#include "gbtree_cuda_kernels.cuh"

/* the whole warp writes the matches of one query, from its start */
__device__ static void
fill_walk(const FParams &p, uint64_t qi, uint64_t off, uint64_t cnt, uint64_t startw)
{
	const int	lane = threadIdx.x & 31;
	const unsigned below = (1u << lane) - 1;
	uint32_t	blk = (uint32_t) (startw >> 32);
	int			slot = (int) (startw & 0xFFFF);
	const QBounds qb = ld_query(p.queries, qi);
	uint64_t	pos = off,
				end = off + cnt;
	u64			ek = 0,
				et = 0;
	bool		first = true;
	uint32_t	hops = 0;
	int			bad = E_NONE;

	for (;;)
	{
		/* the start leaf may be a root leaf; links go past the fixed blocks */
		if (blk == GBT_META_BLKNO || blk >= p.nblocks)
		{
			bad = E_RIGHTLINK;
			break;
		}

		const char *pg = p.pages + (size_t) blk * GBT_PAGE_SIZE;
		const Opaque o = ld_opaque(pg);
		uint32_t	flags = (uint32_t) (o.w5 >> 16) & 0xFFFF;
		uint32_t	level = (uint32_t) (o.w5 & 0xFFFF);
		uint32_t	nsl = (uint32_t) (o.w5 >> 48);

		if ((o.w7 >> 48) != GBT_PAGE_ID || !(flags & GBT_F_LEAF) || level != 0 ||
			nsl != GBT_LEAF_SLOTS || (flags & GBT_F_META))
		{
			bad = E_KIND;
			break;
		}
		if (++hops > p.maxhops)
		{
			bad = E_HOPS;
			break;
		}
		if (!first && (flags & GBT_F_DELETED))
		{
			uint32_t	nx = (uint32_t) o.links;

			if (!link_ok(nx, blk, p.nblocks))
			{
				bad = E_RIGHTLINK;
				break;
			}
			blk = nx;
			continue;
		}
		if (!first && (o.lowk != ek || o.lowt != et))
		{
			bad = E_CHAIN;
			break;
		}

		const u64  *keys = (const u64 *) (pg + GBT_LEAF_KEYS_OFF);
		const u64  *tids = (const u64 *) (pg + GBT_LEAF_TIDS_OFF);
		const u64  *used = (const u64 *) (pg + USED_OFF);
		bool		stop = false;

		for (int base = slot; base < GBT_LEAF_SLOTS; base += 32)
		{
			int			s = base + lane;
			bool		in = s < GBT_LEAF_SLOTS;
			u64			k = 0,
						t = 0;
			bool		u = false;

			if (in)
			{
				k = ld1(keys + s);
				t = ld1(tids + s);
				u = (ld1(used + (s >> 6)) >> (s & 63)) & 1;
			}
			bool		lt_hi = elt(k, t, qb.hk, qb.ht);
			bool		m = in && u && lt_hi && !elt(k, t, qb.lk, qb.lt);
			unsigned	bm = __ballot_sync(FULL_MASK, m);
			unsigned	sm = __ballot_sync(FULL_MASK, in && u && !lt_hi);

			if (m)
			{
				uint64_t	dst = pos + __popc(bm & below);

				if (dst < end && dst < p.cap)
				{
					if (p.out_keys)
						p.out_keys[dst] = k;
					p.out_tids[dst] = t;
				}
			}
			pos += __popc(bm);
			if (sm)
			{
				stop = true;
				break;
			}
		}
		if (stop || (flags & GBT_F_RIGHTMOST) || !elt(o.hik, o.hit, qb.hk, qb.ht))
			break;
		{
			uint32_t	nx = (uint32_t) o.links;

			if (!link_ok(nx, blk, p.nblocks))
			{
				bad = E_RIGHTLINK;
				break;
			}
			ek = o.hik;
			et = o.hit;
			blk = nx;
			slot = 0;
			first = false;
		}
	}
	if (bad == E_NONE && pos != end)
		bad = E_FILL;
	if (bad != E_NONE && lane == 0)
		report(p.err, bad, blk);
}

__global__ void __launch_bounds__(256)
fill_kernel(FParams p)
{
	const int	lane = threadIdx.x & 31;
	const uint64_t warp = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	const uint64_t nwarps = ((uint64_t) gridDim.x * blockDim.x) >> 5;

	if (*(volatile u64 *) p.err != 0 || p.offsets[p.n] > p.cap)
		return;					/* the host reports ECORRUPT or ESPACE */
	if (p.direct && *(volatile u64 *) p.direct == 0)
		return;					/* every count is 1: the leaf kernel wrote the results */
	for (uint64_t base = warp * 32; base < p.n; base += nwarps * 32)
	{
		uint64_t	q = base + lane;
		bool		valid = q < p.n;
		uint64_t	off = valid ? p.offsets[q] : 0;
		uint64_t	cnt = valid ? p.offsets[q + 1] - off : 0;
		bool		inl = false;
		uint64_t	sw = 0;

		/* a single match kept by the count pass is copied; start unread */
		if (cnt == 1)
		{
			ulonglong2	f = p.rec ? ld2(&p.rec[q].fkey) : __ldg(&p.first[q]);

			inl = f.y != NO_FIRST;
			if (inl && off < p.cap)
			{
				if (p.out_keys)
					p.out_keys[off] = f.x;
				p.out_tids[off] = f.y;
			}
		}
		if (cnt > 1 || (cnt == 1 && !inl))
			sw = p.rec ? ld1(&p.rec[q].start) : p.start[q];

		unsigned	m = __ballot_sync(FULL_MASK, cnt > 1 || (cnt == 1 && !inl));

		while (m)
		{
			int			src = __ffs(m) - 1;

			m &= m - 1;
			fill_walk(p, __shfl_sync(FULL_MASK, q, src), __shfl_sync(FULL_MASK, off, src),
					  __shfl_sync(FULL_MASK, cnt, src), __shfl_sync(FULL_MASK, sw, src));
		}
	}
}

cudaError_t
fill_kernel_occupancy(int *blocks_per_sm)
{
	return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, fill_kernel, 256, 0);
}

cudaError_t
launch_fill_kernel(const FParams &p, int grid, cudaStream_t stream)
{
	fill_kernel<<<grid, 256, 0, stream>>>(p);
	return cudaGetLastError();
}
