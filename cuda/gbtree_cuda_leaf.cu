/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_leaf.cu
 *	  The count pass of sorted and device-sorted batches: leaf_kernel,
 *	  which resolves the queries lying in one leaf and leaves the others
 *	  to count_kernel.
 *
 * One query per lane.  Each warp takes a contiguous run of the (sorted)
 * order in tiles of 32.  Per round the smallest pending low bound picks a
 * leaf: the leaf the warp is on, its right sibling (one header load), or a
 * warp-cooperative descent from the root.  Every pending lane whose query
 * starts in that leaf and ends there resolves it alone from the leaf (its
 * directory, one or two blocks, the bitmap); a query that needs TID
 * comparisons or continues past the leaf goes to a list that count_kernel
 * resolves afterwards.  Neighbouring sorted queries share the leaf, so a
 * tile costs about one header check and 32 independent in-leaf searches,
 * with no per-query descent and no lock-step group work.
 *
 *-------------------------------------------------------------------------
 */
#include "gbtree_cuda_kernels.cuh"

/* the checked header of the leaf a warp is on */
struct LeafHdr
{
	u64			hik,
				hit,
				lowk,
				lowt;
	uint32_t	blk;
	uint32_t	next;
	bool		rightmost;
	bool		valid;
};

static __device__ __forceinline__ void
set_hdr(LeafHdr &h, uint32_t blk, const Opaque &o)
{
	h.hik = o.hik;
	h.hit = o.hit;
	h.lowk = o.lowk;
	h.lowt = o.lowt;
	h.blk = blk;
	h.next = (uint32_t) o.links;
	h.rightmost = ((o.w5 >> 16) & GBT_F_RIGHTMOST) != 0;
	h.valid = true;
}

/*
 * Warp-cooperative descent to the leaf holding (tk, tt), a bound that needs
 * no TID comparison; the same arguments in every lane.  Returns E_NONE with
 * the leaf in h, or an error code with its block in *eblk.
 */
static __device__ __forceinline__ int
leaf_descend(const LParams &p, u64 tk, u64 tt, LeafHdr &h, uint32_t *eblk)
{
	const int	lane = threadIdx.x & 31;
	uint32_t	blk = p.root;
	int			exp_level = -1;
	uint32_t	hops = 0;

	for (;;)
	{
		const char *pg = p.pages + (size_t) blk * GBT_PAGE_SIZE;
		const Opaque o = ld_opaque(pg);
		/* the directory and bitmap words are loaded with the header */
		u64			dv = ld1((const u64 *) (pg + DIR_OFF) + lane);
		u64			uw = lane < GBT_BITMAP_WORDS ? ld1((const u64 *) (pg + USED_OFF) + lane) : 0;
		const uint32_t level = (uint32_t) (o.w5 & 0xFFFF);
		const uint32_t flags = (uint32_t) (o.w5 >> 16) & 0xFFFF;
		const bool	rightmost = (flags & GBT_F_RIGHTMOST) != 0;
		int			bad = page_check(o.w5, o.w7, exp_level);

		*eblk = blk;
		if (bad != E_NONE)
			return bad;
		if ((flags & GBT_F_DELETED) || (!rightmost && !elt(tk, tt, o.hik, o.hit)))
		{
			uint32_t	nx = (uint32_t) o.links;

			if (!link_ok(nx, blk, p.nblocks))
				return E_RIGHTLINK;
			if (++hops > p.maxhops)
				return E_HOPS;
			blk = nx;
			exp_level = (int) level;
			continue;
		}
		if (elt(tk, tt, o.lowk, o.lowt))
			return E_LOWKEY;
		if (flags & GBT_F_LEAF)
		{
			if (!rightmost && !elt(o.lowk, o.lowt, o.hik, o.hit))
				return E_HIKEY;
			set_hdr(h, blk, o);
			return E_NONE;
		}

		/* inner page: the child of the last slot below the target */
		unsigned	bm = __ballot_sync(FULL_MASK, lane < GBT_INNER_BLOCKS && klt_bound(dv, tk, tt));
		int			bb = __popc(bm);
		int			lb = GBT_INNER_SLOTS;

		if (bb < GBT_INNER_BLOCKS)
		{
			u64			kv = lane < 16 ? ld1((const u64 *) (pg + GBT_INNER_KEYS_OFF) + bb * 16 + lane) : ~0ULL;
			unsigned	km = __ballot_sync(FULL_MASK, lane < 16 && klt_bound(kv, tk, tt));

			lb = bb * 16 + __popc(km);
		}

		int			cslot = lb - 1;
		unsigned	nz = __ballot_sync(FULL_MASK, uw != 0);

		if (lb == 0)
		{
			if (nz == 0)
				return E_EMPTY;
			cslot = (__ffs(nz) - 1) * 64 + __ffsll(__shfl_sync(FULL_MASK, uw, __ffs(nz) - 1)) - 1;
		}
		if (cslot >= GBT_INNER_SLOTS)
			return E_EMPTY;

		u64			cw = __shfl_sync(FULL_MASK, uw, cslot >> 6);

		if (!((cw >> (cslot & 63)) & 1))
			return E_SLOT;

		uint32_t	child = __ldg((const uint32_t *) (pg + GBT_INNER_CHILD_OFF) + cslot);

		if (!link_ok(child, blk, p.nblocks))
			return E_CHILD;
		if (++hops > p.maxhops)
			return E_HOPS;
		blk = child;
		exp_level = (int) level - 1;
	}
}

/*
 * Key threshold of a bound that needs no TID comparison: an entry is below
 * (k, t) iff its key is below the threshold (t is 0, or UINT64_MAX with k
 * below UINT64_MAX, so k + 1 does not wrap).
 */
static __device__ __forceinline__ u64
key_threshold(u64 k, u64 t)
{
	return t == 0 ? k : k + 1;
}

/*
 * Directory entries of a leaf below x (all lanes; lane i holds entry i, the
 * padding entries 30 and 31 read as UINT64_MAX): a binary search over the
 * lanes, at most GBT_LEAF_BLOCKS even on a garbage page.
 */
static __device__ __forceinline__ int
dir_below(u64 dv, u64 x)
{
	int			pos = 0;

#pragma unroll
	for (int step = 16; step >= 1; step >>= 1)
	{
		u64			v = __shfl_sync(FULL_MASK, dv, pos + step - 1);

		if (v < x)
			pos += step;
	}
	return pos + (__shfl_sync(FULL_MASK, dv, pos) < x ? 1 : 0);
}

/* keys of a 16-slot block below x_lo, and below x_hi, from one load of it */
static __device__ __forceinline__ void
block_below2(const u64 *kp, u64 x_lo, u64 x_hi, int *c_lo, int *c_hi)
{
	ulonglong2	k[8];
	int			cl = 0,
				ch = 0;

#pragma unroll
	for (int j = 0; j < 8; j++)
		k[j] = ld2(kp + 2 * j);
#pragma unroll
	for (int j = 0; j < 8; j++)
	{
		cl += (k[j].x < x_lo ? 1 : 0) + (k[j].y < x_lo ? 1 : 0);
		ch += (k[j].x < x_hi ? 1 : 0) + (k[j].y < x_hi ? 1 : 0);
	}
	*c_lo = cl;
	*c_hi = ch;
}

/* keys of a 16-slot block below x (inlined, the second count folds away) */
static __device__ __forceinline__ int
block_below(const u64 *kp, u64 x)
{
	int			c,
				dup;

	block_below2(kp, x, x, &c, &dup);
	return c;
}

/*
 * Used slots of the checked leaf pg in [lb_lo, lb_hi), by one lane: lb_lo
 * from the directory position b_lo of threshold x_lo (0 when from_start),
 * lb_hi from b_hi and x_hi (the leaf's end when b_hi is GBT_LEAF_BLOCKS).
 */
static __device__ __forceinline__ unsigned
leaf_range(const char *pg, int b_lo, int b_hi, u64 x_lo, u64 x_hi, bool from_start, int *lbp)
{
	const u64  *keys = (const u64 *) (pg + GBT_LEAF_KEYS_OFF);
	const u64  *used = (const u64 *) (pg + USED_OFF);
	int			lb_lo = from_start ? 0 : GBT_LEAF_SLOTS,
				lb_hi = GBT_LEAF_SLOTS;
	bool		hi_done = b_hi >= GBT_LEAF_BLOCKS;
	unsigned	cnt = 0;

	if (!from_start && b_lo < GBT_LEAF_BLOCKS)
	{
		int			c_lo,
					c_hi;

		block_below2(keys + b_lo * 16, x_lo, x_hi, &c_lo, &c_hi);
		lb_lo = b_lo * 16 + c_lo;
		/* both bounds in one block: the usual case for short ranges */
		if (b_hi == b_lo)
		{
			lb_hi = b_lo * 16 + c_hi;
			hi_done = true;
		}
	}
	if (!hi_done)
		lb_hi = b_hi * 16 + block_below(keys + b_hi * 16, x_hi);

	/* used slots in [lb_lo, lb_hi) */
	if (lb_lo < lb_hi)
	{
		const int	w1 = (lb_hi - 1) >> 6;

		for (int w = lb_lo >> 6; w <= w1; w++)
		{
			u64			m = ld1(used + w);

			if (w == (lb_lo >> 6))
				m &= ~0ULL << (lb_lo & 63);
			if (w == w1 && (lb_hi & 63) != 0)
				m &= ~(~0ULL << (lb_hi & 63));
			cnt += __popcll(m);
		}
	}
	*lbp = lb_lo;
	return cnt;
}

/*
 * Writes the count pass's result of query qi: count, first match (fk, ft)
 * (valid when cnt > 0) and start; on the direct path also the match itself
 * at position qi, or the flag that the direct results are not complete.
 */
static __device__ __forceinline__ void
leaf_result(const LParams &p, uint64_t qi, unsigned cnt, u64 fk, u64 ft, uint64_t sw)
{
	if (p.rec)
	{
		put_rec(p.rec, qi, cnt, cnt ? sw : 0, cnt ? fk : 0, cnt ? ft : NO_FIRST);
		return;
	}
	p.counts[qi] = cnt;
	if (cnt > 0)
	{
		p.first[qi] = make_ulonglong2(fk, ft);
		if (cnt > 1 || ft == NO_FIRST)
			p.start[qi] = sw;
	}
	if (p.out_tids)
	{
		if (cnt == 1 && ft != NO_FIRST)
		{
			if (p.out_keys)
				p.out_keys[qi] = fk;
			p.out_tids[qi] = ft;
		}
		else
			*(volatile u64 *) p.multi = 1;
	}
}

/* append the lanes with want set to the list (one atomic per warp) */
static __device__ __forceinline__ void
list_push(const LParams &p, bool want, uint64_t qi)
{
	const int	lane = threadIdx.x & 31;
	unsigned	m = __ballot_sync(FULL_MASK, want);
	u64			base = 0;

	if (m == 0)
		return;
	if (lane == __ffs(m) - 1)
	{
		base = atomicAdd(p.nlist, (u64) __popc(m));
		if (p.out_tids)
			*(volatile u64 *) p.multi = 1;	/* the direct results are not complete */
	}
	base = __shfl_sync(FULL_MASK, base, __ffs(m) - 1);
	if (want)
		p.list[base + __popc(m & ((1u << lane) - 1))] = (uint32_t) qi;
}

/* blocks of 256 per SM the leaf kernel is compiled for (register cap) */
#ifndef LEAF_MINB
#define LEAF_MINB 4
#endif

/* moves h to its right sibling when that is a live leaf, checked as a walk does */
static __device__ __forceinline__ int
leaf_step_right(const LParams &p, LeafHdr &h, bool *moved)
{
	const uint32_t nx = h.next;

	*moved = false;
	if (!link_ok(nx, h.blk, p.nblocks))
		return E_RIGHTLINK;

	const Opaque o = ld_opaque(p.pages + (size_t) nx * GBT_PAGE_SIZE);
	const uint32_t fl = (uint32_t) (o.w5 >> 16) & 0xFFFF;
	int			bad = page_check(o.w5, o.w7, 0);

	if (bad != E_NONE)
		return bad;
	if (fl & GBT_F_DELETED)
		return E_NONE;			/* not moved: the caller descends or defers */
	if (o.lowk != h.hik || o.lowt != h.hit)
		return E_CHAIN;
	if (!(fl & GBT_F_RIGHTMOST) && !elt(o.lowk, o.lowt, o.hik, o.hit))
		return E_HIKEY;
	set_hdr(h, nx, o);
	*moved = true;
	return E_NONE;
}

template <bool PERM, int MINB>
__global__ void __launch_bounds__(256, MINB)
leaf_kernel(LParams p)
{
	const int	lane = threadIdx.x & 31;
	const uint64_t warp = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	const uint64_t nwarps = ((uint64_t) gridDim.x * blockDim.x) >> 5;
	const uint64_t chunk = (((p.n + nwarps - 1) / nwarps) + 31) & ~(uint64_t) 31;
	const uint64_t end = min(p.n, (warp + 1) * chunk);
	LeafHdr		h;

	h.valid = false;
	h.rightmost = false;
	h.hik = h.hit = h.lowk = h.lowt = 0;
	h.blk = h.next = 0;
	for (uint64_t pos = warp * chunk; pos < end; pos += 32)
	{
		const uint64_t j = pos + lane;
		uint64_t	qi = 0;
		u64			lk = 0,
					lt = 0,
					hk = 0,
					ht = 0;
		bool		pending = false,
					defer = false,
					carry = false;	/* continues into the right sibling */
		unsigned	acc = 0;		/* carried: matches so far, */
		u64			cfk = 0,
					cft = NO_FIRST;	/* the first of them, */
		uint64_t	csw = 0;		/* and where they start */

		if (__any_sync(FULL_MASK, *(volatile u64 *) p.err != 0))
			return;				/* the host reports the corruption */
		if (j < end)
		{
			QBounds		qb;

			qi = PERM ? __ldg(p.perm + j) : j;
			qb = ld_query(p.queries, qi);
			lk = qb.lk;
			lt = qb.lt;
			hk = qb.hk;
			ht = qb.ht;
			if (!elt(lk, lt, hk, ht))
				leaf_result(p, qi, 0, 0, NO_FIRST, 0);
			else if (bound_needs_tid(lk, lt) || bound_needs_tid(hk, ht))
				defer = true;
			else
				pending = true;
		}
		list_push(p, defer, qi);

		while (__any_sync(FULL_MASK, pending || carry))
		{
			const bool	carrying = __any_sync(FULL_MASK, carry);
			int			bad = E_NONE;
			uint32_t	eblk = h.next;

			if (carrying)
			{
				/* queries running past the leaf continue in its right sibling */
				bool		moved;

				bad = leaf_step_right(p, h, &moved);
				if (bad == E_NONE && !moved)
				{
					/* a deleted sibling: the count kernel walks these */
					list_push(p, carry, qi);
					carry = false;
					continue;
				}
			}
			else
			{
				/* the smallest pending low bound (key, then TID) picks the leaf */
				u64			tk = pending ? lk : ~0ULL;

#pragma unroll
				for (int m = 16; m >= 1; m >>= 1)
				{
					u64			o = __shfl_xor_sync(FULL_MASK, tk, m);

					tk = o < tk ? o : tk;
				}

				const u64	tt = __any_sync(FULL_MASK, pending && lk == tk && lt == 0) ? 0 : ~0ULL;
				bool		here = h.valid && !elt(tk, tt, h.lowk, h.lowt) &&
					(h.rightmost || elt(tk, tt, h.hik, h.hit));

				if (!here && h.valid && !h.rightmost && !elt(tk, tt, h.hik, h.hit))
				{
					/* sorted batches run into the right sibling */
					bool		moved;

					bad = leaf_step_right(p, h, &moved);
					here = bad == E_NONE && moved && (h.rightmost || elt(tk, tt, h.hik, h.hit));
				}
				if (bad == E_NONE && !here)
					bad = leaf_descend(p, tk, tt, h, &eblk);
			}
			if (bad != E_NONE)
			{
				if (lane == 0)
					report(p.err, bad, eblk);
				return;			/* give up this chunk */
			}

			/* pending queries starting in this leaf; carried ones ending in it */
			const bool	in = pending && !elt(lk, lt, h.lowk, h.lowt) &&
				(h.rightmost || elt(lk, lt, h.hik, h.hit));
			const bool	ends = h.rightmost || !elt(h.hik, h.hit, hk, ht);
			const bool	fin = carry && ends;

			if (!carrying && !__any_sync(FULL_MASK, in))
			{
				/* cannot happen after the checks above; never loop on it */
				if (lane == 0)
					report(p.err, E_LOWKEY, h.blk);
				return;
			}
			{
				/* the leaf's directory, one entry per lane; thresholds searched by all lanes */
				const char *pg = p.pages + (size_t) h.blk * GBT_PAGE_SIZE;
				const u64	dv = lane < GBT_LEAF_BLOCKS ? ld1((const u64 *) (pg + DIR_OFF) + lane) : ~0ULL;
				const u64	x_lo = key_threshold(lk, lt),
							x_hi = key_threshold(hk, ht);
				const int	b_lo = dir_below(dv, x_lo),
							b_hi = dir_below(dv, x_hi);

				if (in || fin)
				{
					int			lb;
					unsigned	cnt = leaf_range(pg, b_lo, ends ? b_hi : GBT_LEAF_BLOCKS, x_lo, x_hi,
												 fin, &lb);
					const uint64_t sw = ((uint64_t) h.blk << 32) | (1u << 16) | (uint32_t) lb;
					u64			fk = 0,
								ft = NO_FIRST;

					if (cnt > 0)
					{
						/* slot lb holds the first match (a gap copies its next) */
						fk = ld1((const u64 *) (pg + GBT_LEAF_KEYS_OFF) + lb);
						ft = ld1((const u64 *) (pg + GBT_LEAF_TIDS_OFF) + lb);
					}
					if (fin)
						leaf_result(p, qi, acc + cnt, acc ? cfk : fk, acc ? cft : ft, csw);
					else if (ends)
						leaf_result(p, qi, cnt, fk, ft, sw);
					else
					{
						/* runs past this leaf: carried into the next round */
						acc = cnt;
						cfk = fk;
						cft = ft;
						csw = sw;
					}
				}
			}
			/* carried queries that run past a second leaf go to the count kernel */
			list_push(p, carry && !ends, qi);
			carry = in && !ends;
			pending = pending && !in;
		}
	}
}

cudaError_t
leaf_kernel_occupancy(int *blocks_per_sm)
{
	return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, leaf_kernel<true, LEAF_MINB>,
														 256, 0);
}

cudaError_t
launch_leaf_kernel(const LParams &p, bool perm, int grid, cudaStream_t stream)
{
	if (perm)
		leaf_kernel<true, LEAF_MINB><<<grid, 256, 0, stream>>>(p);
	else
		leaf_kernel<false, LEAF_MINB><<<grid, 256, 0, stream>>>(p);
	return cudaGetLastError();
}
