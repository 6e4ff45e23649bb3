/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_count.cu
 *	  The count pass of a batched lookup: count_kernel.
 *
 * count_kernel<G>: groups of G lanes (G = 8 or 16: 4 or 2 queries per
 * warp in flight) each take a contiguous chunk of the batch and handle its
 * queries one after the other.  A group visits one page per step: one
 * coalesced load of the page's directory (32/G words per lane), high/low
 * keys, links and used bitmap, a shuffle-reduction of "directory entries
 * below the bound" that picks the block, then one coalesced load of that
 * 16-slot block (keys, TIDs, and on inner pages the child window) and a
 * second reduction that gives the lower bound.  All groups of a warp step
 * in lock-step so that every shuffle runs converged.  Inner pages give the
 * child of the last slot below the target (Lehman-Yao: move right first
 * while the target is >= the high key, or the page is deleted); the leaf
 * gives the count of used slots in [lb(lo), lb(hi)); if hi lies beyond
 * the high key the group walks the right-links, counting whole leaves from
 * their bitmaps.  A query whose low bound lies in the leaf the group has
 * just left starts there without a descent (sorted batches: ~one block load
 * per query).  On sorted batches a leaf fast path goes further: an idle
 * group on a leaf takes its next G queries, one per lane, and each lane
 * whose query lies wholly inside that leaf (bounds needing no TID
 * comparison) resolves it alone from the cached leaf (count_kernel now
 * runs this way only on the queries leaf_kernel leaves to it).  Unsorted
 * batches of 16k queries or more are first sorted on the device (CUB radix
 * sort, see gbtree_cuda_lookup.cu); results are still written by batch
 * position.
 * The count pass also keeps the first match and the start (leaf, slot) of
 * every query.
 *
 *-------------------------------------------------------------------------
 */
#include "gbtree_cuda_kernels.cuh"

/* blocks of 256 per SM the count kernel is compiled for (register cap) */
#ifndef COUNT_MINB
#define COUNT_MINB 3
#endif

enum
{
	ST_IDLE = 0, ST_DESC = 1, ST_WALK = 2
};
enum
{
	A_NONE = 0, A_INNER, A_LEAF_FIRST, A_LEAF_LAST, A_FULL
};

/*
 * Fast path of the count kernel: lane j of an idle group takes query q + j
 * and, if its bounds need no TID comparison and it lies wholly inside the
 * leaf the group is on (lo >= low key, hi <= high key), resolves it alone
 * in that leaf (checked when its header was loaded): directory, block and
 * bitmap from L1/L2, one lane per query.  Writes the query's results.
 */
static __device__ __forceinline__ void
leaf_resolve_lane(const KParams &p, const char *pg, uint32_t blk, uint64_t qi,
				  u64 lk, u64 lt, u64 hk, u64 ht)
{
	const u64  *dir = (const u64 *) (pg + DIR_OFF);
	const u64  *keys = (const u64 *) (pg + GBT_LEAF_KEYS_OFF);
	const u64  *tids = (const u64 *) (pg + GBT_LEAF_TIDS_OFF);
	const u64  *used = (const u64 *) (pg + USED_OFF);
	int			b_lo = 0,
				b_hi = 0,
				c_lo = 0,
				c_hi = 0;
	unsigned	cnt = 0;

	if (!elt(lk, lt, hk, ht))
	{
		if (p.rec)
			put_rec(p.rec, qi, 0, 0, 0, NO_FIRST);
		else
		{
			p.counts[qi] = 0;
			p.start[qi] = 0;
		}
		return;
	}
#pragma unroll
	for (int j = 0; j < GBT_LEAF_BLOCKS; j += 2)
	{
		ulonglong2	d = ld2(dir + j);

		b_lo += klt_bound(d.x, lk, lt) + klt_bound(d.y, lk, lt);
		b_hi += klt_bound(d.x, hk, ht) + klt_bound(d.y, hk, ht);
	}
	if (b_lo < GBT_LEAF_BLOCKS)
	{
#pragma unroll
		for (int j = 0; j < 16; j += 2)
		{
			ulonglong2	k = ld2(keys + b_lo * 16 + j);

			c_lo += klt_bound(k.x, lk, lt) + klt_bound(k.y, lk, lt);
		}
	}
	if (b_hi < GBT_LEAF_BLOCKS)
	{
#pragma unroll
		for (int j = 0; j < 16; j += 2)
		{
			ulonglong2	k = ld2(keys + b_hi * 16 + j);

			c_hi += klt_bound(k.x, hk, ht) + klt_bound(k.y, hk, ht);
		}
	}

	int			lb_lo = b_lo < GBT_LEAF_BLOCKS ? b_lo * 16 + c_lo : GBT_LEAF_SLOTS;
	int			lb_hi = b_hi < GBT_LEAF_BLOCKS ? b_hi * 16 + c_hi : GBT_LEAF_SLOTS;

#pragma unroll
	for (int w = 0; w < 8; w += 2)
	{
		ulonglong2	u = ld2(used + w);

		cnt += range_pop(u.x, w, lb_lo, lb_hi) + range_pop(u.y, w + 1, lb_lo, lb_hi);
	}

	bool		inl = cnt > 0 && lb_lo < GBT_LEAF_SLOTS;

	uint64_t	sw = ((uint64_t) blk << 32) | (inl ? (1u << 16) : 0u) | (uint32_t) lb_lo;

	if (p.rec)
		put_rec(p.rec, qi, cnt, sw, inl ? ld1(keys + lb_lo) : 0, inl ? ld1(tids + lb_lo) : NO_FIRST);
	else
	{
		p.counts[qi] = cnt;
		p.start[qi] = sw;
		if (inl)
			p.first[qi] = make_ulonglong2(ld1(keys + lb_lo), ld1(tids + lb_lo));
	}
}

/* a lane's S (1 or 2) words of a 16-slot block, from p: one load */
template <int S>
static __device__ __forceinline__ void
ld_share(u64 (&v)[S], const u64 *p)
{
	if (S == 1)
		v[0] = ld1(p);
	else
	{
		ulonglong2	w = ld2(p);

		v[0] = w.x;
		v[S - 1] = w.y;
	}
}

template <int G, int MINB, bool FAST>
__global__ void __launch_bounds__(256, MINB)
count_kernel(KParams p)
{
	constexpr int D = 32 / G;	/* directory words per lane */
	constexpr int S = 16 / G;	/* block slots per lane */
	static_assert(G == 8 || G == 16, "group of 8 or 16 lanes");

	const int	lane = threadIdx.x & 31;
	const int	gl = lane & (G - 1);
	const int	gbase = lane & ~(G - 1);
	const uint64_t gid = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) / G;
	const uint64_t ngroups = ((uint64_t) gridDim.x * blockDim.x) / G;
	const uint64_t n = p.n_dev ? min(p.n, (uint64_t) *p.n_dev) : p.n;
	const uint64_t chunk = (n + ngroups - 1) / ngroups;
	uint64_t	q = gid * chunk;
	const uint64_t qend = min(n, q + chunk);
	uint64_t	qi = q;			/* index of query q in the batch (perm) */

	int			st = ST_IDLE;
	bool		need_hdr = true;
	uint32_t	blk = 0;
	int			exp_level = -1;
	uint32_t	hops = 0;
	u64			lk = 0, lt = 0, hk = 0, ht = 0;
	u64			acc = 0, fk = 0, ft = 0, ek = 0, et = 0;
	uint64_t	startw = 0;

	/* header of page hblk, kept across queries */
	uint32_t	hblk = GBT_NO_BLOCK;
	u64			o_hik = 0, o_hit = 0, o_lowk = 0, o_lowt = 0, o_links = 0, o_w5 = 0, o_w7 = 0;
	u64			dirv[D];
	u64			usedw = 0;

#pragma unroll
	for (int j = 0; j < D; j++)
		dirv[j] = 0;

	for (;;)
	{
		/* ---- fast path: queries wholly inside the current leaf ---------- */
		bool		fast_all = false;	/* took G queries: no pickup this step */

		if (FAST)
		{
			const uint32_t hf = (uint32_t) (o_w5 >> 16) & 0xFFFF;
			const bool	gcand = st == ST_IDLE && hblk != GBT_NO_BLOCK && (hf & GBT_F_LEAF) &&
				!(hf & GBT_F_DELETED) && q < qend;
			const bool	hrm = (hf & GBT_F_RIGHTMOST) != 0;
			bool		simple = false;
			uint64_t	myq = q + gl,
						myqi = 0;
			QBounds		aq = {0, 0, 0, 0};

			if (gcand && myq < qend)
			{
				myqi = p.perm ? __ldg(p.perm + myq) : myq;
				aq = ld_query(p.queries, myqi);
				simple = !elt(aq.lk, aq.lt, aq.hk, aq.ht) ||
					(!bound_needs_tid(aq.lk, aq.lt) && !bound_needs_tid(aq.hk, aq.ht) &&
					 !elt(aq.lk, aq.lt, o_lowk, o_lowt) &&
					 (hrm || !elt(o_hik, o_hit, aq.hk, aq.ht)));
			}

			unsigned	gb = (__ballot_sync(FULL_MASK, simple) >> gbase) & ((1u << G) - 1);
			int			m = __ffs(~gb) - 1;	/* leading simple queries */

			if (simple && gl < m)
				leaf_resolve_lane(p, p.pages + (size_t) hblk * GBT_PAGE_SIZE, hblk, myqi,
								  aq.lk, aq.lt, aq.hk, aq.ht);
			if (gcand)
			{
				q += m;
				fast_all = (m == G);
			}
		}

		/* ---- pick up the next query ------------------------------------ */
		if (st == ST_IDLE && !fast_all)
		{
			while (q < qend)
			{
				QBounds		qb;

				if ((q & 63) == 0 && *(volatile u64 *) p.err != 0)
				{
					q = qend;
					break;
				}
				qi = p.perm ? __ldg(p.perm + q) : q;
				qb = ld_query(p.queries, qi);
				lk = qb.lk;
				lt = qb.lt;
				hk = qb.hk;
				ht = qb.ht;
				if (elt(lk, lt, hk, ht))
					break;
				if (gl == 0)
				{
					if (p.rec)
						put_rec(p.rec, qi, 0, 0, 0, NO_FIRST);
					else
					{
						p.counts[qi] = 0;
						p.start[qi] = 0;
					}
				}
				q++;
			}
			if (q < qend)
			{
				uint32_t	fl = (uint32_t) (o_w5 >> 16) & 0xFFFF;

				st = ST_DESC;
				acc = 0;
				hops = 0;
				startw = 0;
				fk = ft = 0;
				if (hblk != GBT_NO_BLOCK && (fl & GBT_F_LEAF) && !(fl & GBT_F_DELETED) &&
					!elt(lk, lt, o_lowk, o_lowt) &&
					((fl & GBT_F_RIGHTMOST) || elt(lk, lt, o_hik, o_hit)))
				{
					/* the target lies in the leaf we are on: no descent */
					blk = hblk;
					exp_level = 0;
					need_hdr = false;
				}
				else
				{
					blk = p.root;
					exp_level = -1;
					need_hdr = true;
				}
			}
		}
		if (!__any_sync(FULL_MASK, st != ST_IDLE || fast_all))
			break;

		const bool	active = (st != ST_IDLE);
		const char *pg = p.pages + (size_t) blk * GBT_PAGE_SIZE;

		/* ---- header: opaque, directory, bitmap ------------------------- */
		if (active && need_hdr)
		{
			const Opaque o = ld_opaque(pg);
			const u64  *dp = (const u64 *) (pg + DIR_OFF) + gl * D;

			o_hik = o.hik;
			o_hit = o.hit;
			o_lowk = o.lowk;
			o_lowt = o.lowt;
			o_links = o.links;
			o_w5 = o.w5;
			o_w7 = o.w7;
			if (D == 1)
				dirv[0] = ld1(dp);
			else
			{
#pragma unroll
				for (int j = 0; j < D; j += 2)
				{
					ulonglong2	v = ld2(dp + j);

					dirv[j] = v.x;
					dirv[(j + 1) % D] = v.y;
				}
			}
			usedw = gl < 8 ? ld1((const u64 *) (pg + USED_OFF) + gl) : 0;
			hblk = blk;
			need_hdr = false;
		}

		/* ---- decide ----------------------------------------------------- */
		const uint32_t level = (uint32_t) (o_w5 & 0xFFFF);
		const uint32_t flags = (uint32_t) (o_w5 >> 16) & 0xFFFF;
		const uint32_t nsl = (uint32_t) (o_w5 >> 48);
		const bool	leaf = (flags & GBT_F_LEAF) != 0;
		const bool	rightmost = (flags & GBT_F_RIGHTMOST) != 0;
		const int	nb = leaf ? GBT_LEAF_BLOCKS : GBT_INNER_BLOCKS;
		int			act = A_NONE;
		int			bad = E_NONE;
		bool		done = false;

		if (active)
		{
			if ((o_w7 >> 48) != GBT_PAGE_ID)
				bad = E_PAGEID;
			else if (flags & GBT_F_META)
				bad = E_META;
			else if (leaf != (level == 0) || nsl != (leaf ? GBT_LEAF_SLOTS : GBT_INNER_SLOTS))
				bad = E_KIND;
			else if (level >= MAX_LEVELS)
				bad = E_LEVELS;
			else if (exp_level >= 0 && (int) level != exp_level)
				bad = E_LEVEL;
			else if ((flags & GBT_F_DELETED) ||
					 (st == ST_DESC && !rightmost && !elt(lk, lt, o_hik, o_hit)))
			{
				/* move right */
				uint32_t	nx = (uint32_t) o_links;

				if (!link_ok(nx, blk, p.nblocks))
					bad = E_RIGHTLINK;
				else if (++hops > p.maxhops)
					bad = E_HOPS;
				else
				{
					if ((hops & 1023) == 0 && *(volatile u64 *) p.err != 0)
						bad = E_HOPS;
					blk = nx;
					exp_level = (int) level;
					need_hdr = true;
				}
			}
			else if (st == ST_DESC)
			{
				if (elt(lk, lt, o_lowk, o_lowt))
					bad = E_LOWKEY;
				else
					act = leaf ? A_LEAF_FIRST : A_INNER;
			}
			else
			{
				/* walking right along the leaves */
				if (o_lowk != ek || o_lowt != et)
					bad = E_CHAIN;
				else if (!rightmost && !elt(o_lowk, o_lowt, o_hik, o_hit))
					bad = E_HIKEY;
				else if (!rightmost && !elt(hk, ht, o_hik, o_hit))
					act = A_FULL;	/* hikey <= hi: the whole leaf matches */
				else
					act = A_LEAF_LAST;
			}
		}

		/* ---- directory counts (all lanes: shuffles) -------------------- */
		/* hi <= the high key: the query ends in this leaf */
		const bool	hi_in = rightmost || !elt(o_hik, o_hit, hk, ht);
		const bool	srch_lo = (act == A_INNER || act == A_LEAF_FIRST);
		const bool	srch_hi = (act == A_LEAF_FIRST && hi_in) || act == A_LEAF_LAST;
		const bool	lo_tid = bound_needs_tid(lk, lt);
		const bool	hi_tid = bound_needs_tid(hk, ht);
		unsigned	packed = 0;

#pragma unroll
		for (int j = 0; j < D; j++)
		{
			int			idx = gl * D + j;
			bool		v = idx < nb;

			packed += (v && dirv[j] < lk) ? 1u : 0u;
			packed += (v && dirv[j] == lk) ? (1u << 8) : 0u;
			packed += (v && dirv[j] < hk) ? (1u << 16) : 0u;
			packed += (v && dirv[j] == hk) ? (1u << 24) : 0u;
		}
		packed = group_sum<G>(packed);

		int			lt_lo = packed & 0xFF,
					eq_lo = (packed >> 8) & 0xFF,
					lt_hi = (packed >> 16) & 0xFF,
					eq_hi = (packed >> 24) & 0xFF;
		int			b_lo = lt_lo + ((lt == 0) ? 0 : eq_lo);
		int			b_hi = lt_hi + ((ht == 0) ? 0 : eq_hi);
		const bool	eqt_lo = srch_lo && lo_tid && eq_lo > 0;
		const bool	eqt_hi = srch_hi && hi_tid && eq_hi > 0;

		/*
		 * A run of equal keys crosses the block ends and the bound needs its
		 * TID: count the blocks whose last entry is still below the bound.
		 */
		if (__any_sync(FULL_MASK, eqt_lo || eqt_hi))
		{
			const char *tids = pg + (leaf ? GBT_LEAF_TIDS_OFF : GBT_INNER_TIDS_OFF);
			unsigned	c = 0;

#pragma unroll
			for (int j = 0; j < D; j++)
			{
				int			idx = gl * D + j;
				bool		v = idx < nb;
				bool		lo_eq = eqt_lo && v && dirv[j] == lk;
				bool		hi_eq = eqt_hi && v && dirv[j] == hk;

				if (lo_eq || hi_eq)
				{
					u64			t = ld1((const u64 *) tids + idx * 16 + 15);

					c += (lo_eq && t < lt) ? 1u : 0u;
					c += (hi_eq && t < ht) ? (1u << 16) : 0u;
				}
			}
			c = group_sum<G>(c);
			if (eqt_lo)
				b_lo = lt_lo + (int) (c & 0xFFFF);
			if (eqt_hi)
				b_hi = lt_hi + (int) (c >> 16);
		}

		/* ---- block loads ------------------------------------------------ */
		const char *keys = pg + GBT_LEAF_KEYS_OFF;
		const char *tids = pg + (leaf ? GBT_LEAF_TIDS_OFF : GBT_INNER_TIDS_OFF);
		const bool	ld_lo = srch_lo && b_lo < nb;
		const bool	ld_hi = srch_hi && b_hi < nb && !(ld_lo && b_hi == b_lo);
		const bool	ld_lo_tid = ld_lo && (leaf || lo_tid);
		u64			klo[S],
					tlo[S],
					khi[S],
					thi[S];
		uint32_t	chv[S];

#pragma unroll
		for (int j = 0; j < S; j++)
		{
			klo[j] = tlo[j] = khi[j] = thi[j] = 0;
			chv[j] = 0;
		}
		if (ld_lo)
		{
			ld_share<S>(klo, (const u64 *) keys + b_lo * 16 + gl * S);
			if (ld_lo_tid)
				ld_share<S>(tlo, (const u64 *) tids + b_lo * 16 + gl * S);
			if (!leaf)
			{
				/* child window: slots b_lo * 16 - 1 .. b_lo * 16 + 14 */
				const uint32_t *cp = (const uint32_t *) (pg + GBT_INNER_CHILD_OFF);

#pragma unroll
				for (int j = 0; j < S; j++)
				{
					int			s = b_lo * 16 - 1 + gl * S + j;

					chv[j] = s >= 0 ? __ldg(cp + s) : 0;
				}
			}
		}
		if (ld_hi)
		{
			ld_share<S>(khi, (const u64 *) keys + b_hi * 16 + gl * S);
			if (hi_tid)
				ld_share<S>(thi, (const u64 *) tids + b_hi * 16 + gl * S);
		}
		else if (srch_hi && b_hi == b_lo)
		{
#pragma unroll
			for (int j = 0; j < S; j++)
			{
				khi[j] = klo[j];
				thi[j] = tlo[j];
			}
		}

		/* ---- in-block counts -------------------------------------------- */
		unsigned	cc = 0;

#pragma unroll
		for (int j = 0; j < S; j++)
		{
			bool		lo_lt = ld_lo_tid ? elt_bound(klo[j], tlo[j], lk, lt) : klt_bound(klo[j], lk, lt);
			bool		hi_lt = hi_tid ? elt_bound(khi[j], thi[j], hk, ht) : klt_bound(khi[j], hk, ht);

			cc += lo_lt ? 1u : 0u;
			cc += hi_lt ? (1u << 8) : 0u;
		}
		cc = group_sum<G>(cc);

		const int	c_lo = cc & 0xFF,
					c_hi = (cc >> 8) & 0xFF;
		int			lb_lo = (b_lo < nb) ? b_lo * 16 + c_lo : (int) nsl;
		int			lb_hi = (b_hi < nb) ? b_hi * 16 + c_hi : (int) nsl;

		if (act == A_LEAF_LAST)
			lb_lo = 0;

		/* ---- inner page: choose the child -------------------------------- */
		int			cslot = lb_lo - 1;
		bool		need_fetch = false;

		{
			/* first used slot (for lb_lo == 0) and the used bit of cslot */
			unsigned	nzm = __ballot_sync(FULL_MASK, gl < 8 && usedw != 0);
			unsigned	gm = (nzm >> gbase) & 0xFFu;
			int			fw = gm ? __ffs(gm) - 1 : 0;
			u64			fwv = __shfl_sync(FULL_MASK, usedw, gbase + fw);
			int			first_used = gm ? fw * 64 + __ffsll(fwv) - 1 : (int) nsl;

			if (act == A_INNER && lb_lo == 0)
				cslot = first_used;
			int			cw = (cslot >= 0 && cslot < (int) nsl) ? (cslot >> 6) : 0;
			u64			cwv = __shfl_sync(FULL_MASK, usedw, gbase + cw);

			if (act == A_INNER)
			{
				if (cslot >= (int) nsl || cslot < 0)
					bad = E_EMPTY;
				else if (!((cwv >> (cslot & 63)) & 1))
					bad = E_SLOT;
				else if (!(ld_lo && lb_lo > 0 && c_lo < 16))
					need_fetch = true;
			}
		}
		uint32_t	child = 0;

		{
			/* child from the window: index c_lo, in lane c_lo / S */
			int			w = c_lo < 16 ? c_lo : 0;
			uint32_t	mine = chv[0];

			if (S == 2 && (w & 1))
				mine = chv[S - 1];
			child = __shfl_sync(FULL_MASK, mine, gbase + w / S);
		}
		if (__any_sync(FULL_MASK, need_fetch && bad == E_NONE))
		{
			if (need_fetch && bad == E_NONE)
				child = __ldg((const uint32_t *) (pg + GBT_INNER_CHILD_OFF) + cslot);
		}

		/* ---- leaf: the first match (slot lb_lo, a gap copies its next) ---- */
		u64			m_k,
					m_t;

		{
			int			w = c_lo < 16 ? c_lo : 0;
			u64			kk = klo[0],
						tt = tlo[0];

			if (S == 2 && (w & 1))
			{
				kk = klo[S - 1];
				tt = tlo[S - 1];
			}
			m_k = __shfl_sync(FULL_MASK, kk, gbase + w / S);
			m_t = __shfl_sync(FULL_MASK, tt, gbase + w / S);
		}

		/* ---- leaf: count used slots in range ------------------------------ */
		int			from = 0,
					to = 0;

		if (act == A_LEAF_FIRST)
		{
			from = lb_lo;
			to = hi_in ? lb_hi : (int) nsl;
		}
		else if (act == A_LEAF_LAST)
		{
			from = 0;
			to = lb_hi;
		}
		else if (act == A_FULL)
		{
			from = 0;
			to = (int) nsl;
		}
		unsigned	pc = group_sum<G>(range_pop(usedw, gl, from, to));

		/* ---- advance the state -------------------------------------------- */
		if (active && bad == E_NONE)
		{
			if (act == A_INNER)
			{
				if (!link_ok(child, blk, p.nblocks))
					bad = E_CHILD;
				else if (++hops > p.maxhops)
					bad = E_HOPS;
				else
				{
					blk = child;
					exp_level = (int) level - 1;
					need_hdr = true;
				}
			}
			else if (act == A_LEAF_FIRST || act == A_LEAF_LAST || act == A_FULL)
			{
				bool		more;

				acc += pc;
				if (act == A_LEAF_FIRST)
				{
					bool		inl = pc > 0 && ld_lo && c_lo < 16;

					fk = m_k;
					ft = m_t;
					startw = ((uint64_t) blk << 32) | (inl ? (1u << 16) : 0u) | (uint32_t) lb_lo;
					more = !hi_in;
				}
				else if (act == A_FULL)
					more = elt(o_hik, o_hit, hk, ht);
				else
					more = false;
				if (more)
				{
					uint32_t	nx = (uint32_t) o_links;

					if (!link_ok(nx, blk, p.nblocks))
						bad = E_RIGHTLINK;
					else if (++hops > p.maxhops)
						bad = E_HOPS;
					else
					{
						if ((hops & 1023) == 0 && *(volatile u64 *) p.err != 0)
							bad = E_HOPS;
						st = ST_WALK;
						ek = o_hik;
						et = o_hit;
						blk = nx;
						exp_level = 0;
						need_hdr = true;
					}
				}
				else
					done = true;
			}
		}
		if (active && bad != E_NONE)
		{
			if (gl == 0)
				report(p.err, bad, blk);
			acc = 0;
			startw = 0;
			done = true;
			q = qend - 1;		/* give up this chunk */
			hblk = GBT_NO_BLOCK;
			need_hdr = true;
		}
		if (active && done)
		{
			if (p.rec)
			{
				if (gl == 0)
					put_rec(p.rec, qi, acc, startw, fk, (startw & (1u << 16)) ? ft : NO_FIRST);
			}
			else if (gl == 0)
			{
				p.counts[qi] = acc;
				p.start[qi] = startw;
			}
			else if (gl == 1)
				p.first[qi] = (startw & (1u << 16)) ? make_ulonglong2(fk, ft) :
					make_ulonglong2(0, NO_FIRST);
			st = ST_IDLE;
			q++;
		}
	}
}

cudaError_t
count_kernel_occupancy(int group, int *blocks_per_sm)
{
	if (group == 16)
		return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm,
															 count_kernel<16, COUNT_MINB, true>,
															 256, 0);
	return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm,
														 count_kernel<8, COUNT_MINB, true>,
														 256, 0);
}

cudaError_t
launch_count_kernel(const KParams &p, int group, bool fast, int grid, cudaStream_t stream)
{
	if (group == 16)
	{
		if (fast)
			count_kernel<16, COUNT_MINB, true><<<grid, 256, 0, stream>>>(p);
		else
			count_kernel<16, COUNT_MINB, false><<<grid, 256, 0, stream>>>(p);
	}
	else
	{
		if (fast)
			count_kernel<8, COUNT_MINB, true><<<grid, 256, 0, stream>>>(p);
		else
			count_kernel<8, COUNT_MINB, false><<<grid, 256, 0, stream>>>(p);
	}
	return cudaGetLastError();
}
