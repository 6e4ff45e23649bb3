/*-------------------------------------------------------------------------
 *
 * gbtree_cuda.cu
 *	  Device side of gbtree: device copies of an index (page images by
 *	  block number) and batched lookups over them.
 *
 * Lookup = count, prefix sum, fill.
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
 * sort, see leaf_kernel); results are still written by batch position.
 * The count pass also keeps the first match and the start (leaf, slot) of
 * every query.
 *
 * leaf_kernel (sorted and device-sorted batches, instead of count_kernel):
 * one query per lane.  Each warp takes a contiguous run of the order in
 * tiles of 32; the smallest pending low bound of a tile picks a leaf (the
 * one the warp is on, its right sibling, or a warp-cooperative descent),
 * and every lane whose query lies wholly in that leaf and needs no TID
 * comparison resolves it alone there.  The other queries (TID bounds,
 * ranges that continue past the leaf) go to a list that count_kernel then
 * resolves as above.  The device sort orders unsorted batches by 24 bits
 * of the low key (below the highest bit in which a sample of the batch's
 * keys differ), enough for leaf-level locality.
 *
 * fill_kernel: one query per lane; single-match queries copy the kept
 * match, the others are walked again by the whole warp from their start.
 *
 * Every page reached is checked (page id, kind, capacity, level, low key
 * against the target, links in range and away from blocks 0-2, the leaf
 * chain's low keys equal to the previous high key, hop and level bounds),
 * so a damaged or half-updated copy gives GBT_CUDA_ECORRUPT, never a
 * fault, a hang or an out-of-bounds read.
 *
 *-------------------------------------------------------------------------
 */
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <algorithm>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbtree_cuda.h"
extern "C"
{
#include "gbtree_node.h"
}

typedef unsigned long long u64;

static_assert(GBT_LEAF_DIR_OFF == GBT_INNER_DIR_OFF, "directory at one offset for both kinds");
static_assert(GBT_LEAF_USED_OFF == GBT_INNER_USED_OFF, "bitmap at one offset for both kinds");
static_assert(sizeof(GbtCudaQuery) == 32, "query layout");

#define FULL_MASK	0xFFFFFFFFu
#define DIR_OFF		GBT_LEAF_DIR_OFF
#define USED_OFF	GBT_LEAF_USED_OFF
#define FIRST_DATA_BLKNO 3		/* 0 meta, 1 value root, 2 NULL root */
#define MAX_LEVELS	32

/*
 * first[q].tid when the count pass did not keep the first match (no real
 * TID packs to it): the fill pass then walks from start[q].
 */
#define NO_FIRST	GBT_SENTINEL

/*
 * Result of the count pass for one query of a device-sorted batch, written
 * whole at the query's batch position: the writes land in random order,
 * and a whole 32-byte sector costs one DRAM write where the separate
 * count, first and start arrays cost a read and a write of each sector.
 */
struct __align__(32) QRec
{
	u64			count;
	u64			start;
	u64			fkey;
	u64			ftid;			/* NO_FIRST: not kept */
};

/* corruption codes kept in the device error word: code << 32 | blkno */
enum
{
	E_NONE = 0,
	E_PAGEID,
	E_META,
	E_KIND,
	E_LEVELS,
	E_LEVEL,
	E_RIGHTLINK,
	E_HOPS,
	E_LOWKEY,
	E_CHAIN,
	E_HIKEY,
	E_CHILD,
	E_EMPTY,
	E_SLOT,
	E_FILL,
	E_ROOT,
	E_NCODES
};

static const char *const err_text[E_NCODES] = {
	"no error",
	"bad page id (zero or foreign page)",
	"metapage reached",
	"page kind or slot capacity mismatch",
	"too many levels",
	"level mismatch",
	"bad right-link",
	"too many hops (right-link loop)",
	"page reached whose low key is above the target",
	"leaf chain broken (low key differs from the left page's high key)",
	"high key not above low key",
	"bad downlink",
	"empty inner page",
	"search landed on an unused slot",
	"fill pass disagrees with count pass",
	"bad root block",
};

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------
 */
static __thread char last_error[512];

/* also the device sort's error channel (gbtree_cuda_sort.cu) */
void
gbt_cuda_set_error(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

extern "C" const char *
gbt_cuda_last_error(void)
{
	return last_error;
}

static int
cuda_fail(cudaError_t e, const char *what)
{
	gbt_cuda_set_error("%s: %s", what, cudaGetErrorString(e));
	if (e == cudaErrorMemoryAllocation)
	{
		cudaGetLastError();		/* not sticky: clear it */
		return GBT_CUDA_ENOMEM;
	}
	return GBT_CUDA_EDEVICE;
}

#define CK(call, what) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return cuda_fail(e_, what); } while (0)

extern "C" int
gbt_cuda_abi_version(void)
{
	return GBT_CUDA_ABI_VERSION;
}

extern "C" int
gbt_cuda_probe(char *desc, int desclen, uint64_t *mem_total)
{
	int			n = 0;
	cudaDeviceProp prop;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
		return -1;
	if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
		return -1;
	snprintf(desc, desclen, "%s (sm_%d%d)", prop.name, prop.major, prop.minor);
	*mem_total = prop.totalGlobalMem;
	return 0;
}

extern "C" int
gbt_cuda_init(int device, char *err, int errlen)
{
	cudaError_t e;
	int			n = 0;

	last_error[0] = '\0';
	e = cudaGetDeviceCount(&n);
	if (e == cudaSuccess && (device < 0 || device >= n))
	{
		gbt_cuda_set_error("device %d not present (%d devices)", device, n);
		if (err && errlen > 0)
			snprintf(err, errlen, "%s", last_error);
		return GBT_CUDA_EINVAL;
	}
	if (e == cudaSuccess)
		e = cudaSetDevice(device);
	if (e == cudaSuccess)
		e = cudaFree(0);		/* create the context now */
	if (e != cudaSuccess)
	{
		int			rc = cuda_fail(e, "gbt_cuda_init");

		if (err && errlen > 0)
			snprintf(err, errlen, "%s", last_error);
		return rc;
	}
	return 0;
}

extern "C" int
gbt_cuda_host_register(void *ptr, size_t bytes)
{
	CK(cudaHostRegister(ptr, bytes, cudaHostRegisterDefault), "cudaHostRegister");
	return 0;
}

extern "C" int
gbt_cuda_host_unregister(void *ptr)
{
	CK(cudaHostUnregister(ptr), "cudaHostUnregister");
	return 0;
}

/* ------------------------------------------------------------------------
 * Device helpers
 * ------------------------------------------------------------------------
 */
__device__ __forceinline__ bool
elt(u64 k1, u64 t1, u64 k2, u64 t2)
{
	return k1 < k2 || (k1 == k2 && t1 < t2);
}

/* entry (k, t) < bound (bk, bt); t is only looked at when it matters */
__device__ __forceinline__ bool
elt_bound(u64 k, u64 t, u64 bk, u64 bt)
{
	return k < bk || (k == bk && t < bt);
}

/* a bound whose comparisons need TIDs (see need_tid in the count kernel) */
__device__ __forceinline__ bool
bound_needs_tid(u64 k, u64 t)
{
	return !(t == 0 || (t == ~0ULL && k != ~0ULL));
}

/* entry < bound, from the key alone (valid when !bound_needs_tid) */
__device__ __forceinline__ bool
klt_bound(u64 k, u64 bk, u64 bt)
{
	return bt == 0 ? k < bk : k <= bk;
}

__device__ __forceinline__ void
put_rec(QRec *rec, uint64_t qi, u64 cnt, u64 startw, u64 fk, u64 ft)
{
	ulonglong2 *r = (ulonglong2 *) (rec + qi);

	r[0] = make_ulonglong2(cnt, startw);
	r[1] = make_ulonglong2(fk, ft);
}

__device__ __forceinline__ ulonglong2
ld2(const void *p)
{
	return __ldg((const ulonglong2 *) p);
}

__device__ __forceinline__ u64
ld1(const void *p)
{
	return __ldg((const u64 *) p);
}

__device__ __forceinline__ bool
link_ok(uint32_t b, uint32_t cur, uint32_t nblocks)
{
	return b >= FIRST_DATA_BLKNO && b < nblocks && b != cur;
}

__device__ __forceinline__ void
report(u64 *err, int code, uint32_t blk)
{
	atomicCAS(err, 0ULL, ((u64) code << 32) | blk);
}

template <int G>
__device__ __forceinline__ unsigned
group_sum(unsigned v)
{
#pragma unroll
	for (int m = G / 2; m >= 1; m >>= 1)
		v += __shfl_xor_sync(FULL_MASK, v, m);
	return v;
}

/* popcount of the used bits of word w (lane w < 8) within slots [from, to) */
__device__ __forceinline__ unsigned
range_pop(u64 word, int w, int from, int to)
{
	int			lo = w * 64,
				hi = lo + 64;

	if (w >= 8)
		return 0;
	if (from > lo)
		lo = from;
	if (to < hi)
		hi = to;
	if (lo >= hi)
		return 0;
	{
		int			n = hi - lo;
		u64			m = (n == 64) ? ~0ULL : (((1ULL << n) - 1) << (lo - w * 64));

		return __popcll(word & m);
	}
}

/* ------------------------------------------------------------------------
 * Count kernel
 * ------------------------------------------------------------------------
 */
struct KParams
{
	const char *pages;
	uint32_t	nblocks;
	uint32_t	root;
	const GbtCudaQuery *queries;
	const uint32_t *perm;		/* NULL, or the order to take the queries in */
	uint64_t	n;
	const u64  *n_dev;			/* NULL, or the device word holding n (<= n) */
	uint64_t   *counts;			/* [n + 1] */
	ulonglong2 *first;			/* [n] first match (key, tid) */
	uint64_t   *start;			/* [n] leaf << 32 | inline flag << 16 | slot */
	QRec	   *rec;			/* NULL, or results go here instead */
	u64		   *err;
	uint32_t	maxhops;
};

/*
 * Unsorted batches of at least this many queries are sorted on the device
 * first (environment GBT_CUDA_SORT_MIN overrides, read at copy creation).
 */
#define SORT_MIN_BATCH 16384

/*
 * The device sort orders by this many bits of the low key, taken below the
 * highest bit in which a sample of the batch's low keys differ: enough to
 * order the batch at leaf granularity (a 100M-entry index has ~2^18
 * leaves), in fewer radix passes than the whole key.  Any order gives the
 * same answer; the sort only buys locality.
 */
/*
 * The leaf kernel serves sorted batches with at least this many queries per
 * block of the index: sparser batches put most tile neighbours in different
 * leaves, and its one leaf per round then serializes a tile (H100, 100M
 * entries, 1000 sorted queries: 49 us with the count kernel, 212 us with
 * the leaf kernel), so they go to the count kernel with its leaf fast path.
 */
#define LEAF_DENSITY 2

#ifndef SORT_BITS
#define SORT_BITS 24
#endif

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
__device__ __forceinline__ void
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
			u64			a_lk = 0,
						a_lt = 0,
						a_hk = 0,
						a_ht = 0;

			if (gcand && myq < qend)
			{
				ulonglong2	a,
							b;

				myqi = p.perm ? __ldg(p.perm + myq) : myq;
				a = ld2(&p.queries[myqi].lo_key);
				b = ld2(&p.queries[myqi].hi_key);
				a_lk = a.x;
				a_lt = a.y;
				a_hk = b.x;
				a_ht = b.y;
				simple = !elt(a_lk, a_lt, a_hk, a_ht) ||
					(!bound_needs_tid(a_lk, a_lt) && !bound_needs_tid(a_hk, a_ht) &&
					 !elt(a_lk, a_lt, o_lowk, o_lowt) &&
					 (hrm || !elt(o_hik, o_hit, a_hk, a_ht)));
			}

			unsigned	gb = (__ballot_sync(FULL_MASK, simple) >> gbase) & ((1u << G) - 1);
			int			m = __ffs(~gb) - 1;	/* leading simple queries */

			if (simple && gl < m)
				leaf_resolve_lane(p, p.pages + (size_t) hblk * GBT_PAGE_SIZE, hblk, myqi,
								  a_lk, a_lt, a_hk, a_ht);
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
				ulonglong2	a,
							b;

				if ((q & 63) == 0 && *(volatile u64 *) p.err != 0)
				{
					q = qend;
					break;
				}
				qi = p.perm ? __ldg(p.perm + q) : q;
				a = ld2(&p.queries[qi].lo_key);
				b = ld2(&p.queries[qi].hi_key);
				lk = a.x;
				lt = a.y;
				hk = b.x;
				ht = b.y;
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
			const char *op = pg + GBT_OPAQUE_OFFSET;
			ulonglong2	a = ld2(op),
						b = ld2(op + 16),
						c = ld2(op + 32),
						d = ld2(op + 48);
			const u64  *dp = (const u64 *) (pg + DIR_OFF) + gl * D;

			o_hik = a.x;
			o_hit = a.y;
			o_lowk = b.x;
			o_lowt = b.y;
			o_links = c.x;
			o_w5 = c.y;
			o_w7 = d.y;
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
			const u64  *kp = (const u64 *) keys + b_lo * 16 + gl * S;

			if (S == 1)
				klo[0] = ld1(kp);
			else
			{
				ulonglong2	v = ld2(kp);

				klo[0] = v.x;
				klo[S - 1] = v.y;
			}
			if (ld_lo_tid)
			{
				const u64  *tp = (const u64 *) tids + b_lo * 16 + gl * S;

				if (S == 1)
					tlo[0] = ld1(tp);
				else
				{
					ulonglong2	v = ld2(tp);

					tlo[0] = v.x;
					tlo[S - 1] = v.y;
				}
			}
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
			const u64  *kp = (const u64 *) keys + b_hi * 16 + gl * S;

			if (S == 1)
				khi[0] = ld1(kp);
			else
			{
				ulonglong2	v = ld2(kp);

				khi[0] = v.x;
				khi[S - 1] = v.y;
			}
			if (hi_tid)
			{
				const u64  *tp = (const u64 *) tids + b_hi * 16 + gl * S;

				if (S == 1)
					thi[0] = ld1(tp);
				else
				{
					ulonglong2	v = ld2(tp);

					thi[0] = v.x;
					thi[S - 1] = v.y;
				}
			}
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

/* ------------------------------------------------------------------------
 * Leaf kernel (sorted and device-sorted batches)
 * ------------------------------------------------------------------------
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
 */
struct LParams
{
	const char *pages;
	uint32_t	nblocks;
	uint32_t	root;
	const GbtCudaQuery *queries;
	const uint32_t *perm;		/* NULL, or the order to take the queries in */
	uint64_t	n;
	uint64_t   *counts;
	ulonglong2 *first;
	uint64_t   *start;
	QRec	   *rec;			/* NULL, or results go here instead */
	uint64_t   *out_keys;		/* direct path (NULL: off): the match of */
	uint64_t   *out_tids;		/* query i at i when every count is 1 */
	u64		   *multi;			/* set when some count is not 1 */
	uint32_t   *list;			/* queries left to count_kernel */
	u64		   *nlist;
	u64		   *err;
	uint32_t	maxhops;
};

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

/* the checks every page reached gets (see the count kernel) */
__device__ __forceinline__ int
page_check(u64 w5, u64 w7, int exp_level)
{
	const uint32_t level = (uint32_t) (w5 & 0xFFFF);
	const uint32_t flags = (uint32_t) (w5 >> 16) & 0xFFFF;
	const uint32_t nsl = (uint32_t) (w5 >> 48);
	const bool	leaf = (flags & GBT_F_LEAF) != 0;

	if ((w7 >> 48) != GBT_PAGE_ID)
		return E_PAGEID;
	if (flags & GBT_F_META)
		return E_META;
	if (leaf != (level == 0) || nsl != (leaf ? GBT_LEAF_SLOTS : GBT_INNER_SLOTS))
		return E_KIND;
	if (level >= MAX_LEVELS)
		return E_LEVELS;
	if (exp_level >= 0 && (int) level != exp_level)
		return E_LEVEL;
	return E_NONE;
}

__device__ __forceinline__ void
set_hdr(LeafHdr &h, uint32_t blk, ulonglong2 a, ulonglong2 b, ulonglong2 c)
{
	h.hik = a.x;
	h.hit = a.y;
	h.lowk = b.x;
	h.lowt = b.y;
	h.blk = blk;
	h.next = (uint32_t) c.x;
	h.rightmost = ((c.y >> 16) & GBT_F_RIGHTMOST) != 0;
	h.valid = true;
}

/*
 * Warp-cooperative descent to the leaf holding (tk, tt), a bound that needs
 * no TID comparison; the same arguments in every lane.  Returns E_NONE with
 * the leaf in h, or an error code with its block in *eblk.
 */
__device__ __forceinline__ int
leaf_descend(const LParams &p, u64 tk, u64 tt, LeafHdr &h, uint32_t *eblk)
{
	const int	lane = threadIdx.x & 31;
	uint32_t	blk = p.root;
	int			exp_level = -1;
	uint32_t	hops = 0;

	for (;;)
	{
		const char *pg = p.pages + (size_t) blk * GBT_PAGE_SIZE;
		const char *op = pg + GBT_OPAQUE_OFFSET;
		ulonglong2	a = ld2(op),
					b = ld2(op + 16),
					c = ld2(op + 32),
					d = ld2(op + 48);
		/* the directory and bitmap words are loaded with the header */
		u64			dv = ld1((const u64 *) (pg + DIR_OFF) + lane);
		u64			uw = lane < GBT_BITMAP_WORDS ? ld1((const u64 *) (pg + USED_OFF) + lane) : 0;
		const uint32_t level = (uint32_t) (c.y & 0xFFFF);
		const uint32_t flags = (uint32_t) (c.y >> 16) & 0xFFFF;
		const bool	rightmost = (flags & GBT_F_RIGHTMOST) != 0;
		int			bad = page_check(c.y, d.y, exp_level);

		*eblk = blk;
		if (bad != E_NONE)
			return bad;
		if ((flags & GBT_F_DELETED) || (!rightmost && !elt(tk, tt, a.x, a.y)))
		{
			uint32_t	nx = (uint32_t) c.x;

			if (!link_ok(nx, blk, p.nblocks))
				return E_RIGHTLINK;
			if (++hops > p.maxhops)
				return E_HOPS;
			blk = nx;
			exp_level = (int) level;
			continue;
		}
		if (elt(tk, tt, b.x, b.y))
			return E_LOWKEY;
		if (flags & GBT_F_LEAF)
		{
			if (!rightmost && !elt(b.x, b.y, a.x, a.y))
				return E_HIKEY;
			set_hdr(h, blk, a, b, c);
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
__device__ __forceinline__ u64
key_threshold(u64 k, u64 t)
{
	return t == 0 ? k : k + 1;
}

/*
 * Directory entries of a leaf below x (all lanes; lane i holds entry i, the
 * padding entries 30 and 31 read as UINT64_MAX): a binary search over the
 * lanes, at most GBT_LEAF_BLOCKS even on a garbage page.
 */
__device__ __forceinline__ int
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

/* keys of a 16-slot block below x */
__device__ __forceinline__ int
block_below(const u64 *kp, u64 x)
{
	ulonglong2	k[8];
	int			c = 0;

#pragma unroll
	for (int j = 0; j < 8; j++)
		k[j] = ld2(kp + 2 * j);
#pragma unroll
	for (int j = 0; j < 8; j++)
		c += (k[j].x < x ? 1 : 0) + (k[j].y < x ? 1 : 0);
	return c;
}

/*
 * Used slots of the checked leaf pg in [lb_lo, lb_hi), by one lane: lb_lo
 * from the directory position b_lo of threshold x_lo (0 when from_start),
 * lb_hi from b_hi and x_hi (the leaf's end when b_hi is GBT_LEAF_BLOCKS).
 */
__device__ __forceinline__ unsigned
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
		const u64  *kp = keys + b_lo * 16;
		ulonglong2	k[8];
		int			c_lo = 0,
					c_hi = 0;

#pragma unroll
		for (int j = 0; j < 8; j++)
			k[j] = ld2(kp + 2 * j);
#pragma unroll
		for (int j = 0; j < 8; j++)
		{
			c_lo += (k[j].x < x_lo ? 1 : 0) + (k[j].y < x_lo ? 1 : 0);
			c_hi += (k[j].x < x_hi ? 1 : 0) + (k[j].y < x_hi ? 1 : 0);
		}
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
__device__ __forceinline__ void
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
__device__ __forceinline__ void
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
__device__ __forceinline__ int
leaf_step_right(const LParams &p, LeafHdr &h, bool *moved)
{
	const uint32_t nx = h.next;

	*moved = false;
	if (!link_ok(nx, h.blk, p.nblocks))
		return E_RIGHTLINK;

	const char *op = p.pages + (size_t) nx * GBT_PAGE_SIZE + GBT_OPAQUE_OFFSET;
	ulonglong2	a = ld2(op),
				b = ld2(op + 16),
				c = ld2(op + 32),
				d = ld2(op + 48);
	const uint32_t fl = (uint32_t) (c.y >> 16) & 0xFFFF;
	int			bad = page_check(c.y, d.y, 0);

	if (bad != E_NONE)
		return bad;
	if (fl & GBT_F_DELETED)
		return E_NONE;			/* not moved: the caller descends or defers */
	if (b.x != h.hik || b.y != h.hit)
		return E_CHAIN;
	if (!(fl & GBT_F_RIGHTMOST) && !elt(b.x, b.y, a.x, a.y))
		return E_HIKEY;
	set_hdr(h, nx, a, b, c);
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
			ulonglong2	a,
						b;

			qi = PERM ? __ldg(p.perm + j) : j;
			a = ld2(&p.queries[qi].lo_key);
			b = ld2(&p.queries[qi].hi_key);
			lk = a.x;
			lt = a.y;
			hk = b.x;
			ht = b.y;
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

/* ------------------------------------------------------------------------
 * Fill kernel
 * ------------------------------------------------------------------------
 */
struct FParams
{
	const char *pages;
	uint32_t	nblocks;
	const GbtCudaQuery *queries;
	uint64_t	n;
	const uint64_t *offsets;
	const ulonglong2 *first;
	const uint64_t *start;
	const QRec *rec;			/* NULL, or first and start are here */
	const u64  *direct;			/* NULL, or the leaf kernel's flag: 0 = all written */
	uint64_t   *out_keys;		/* may be NULL */
	uint64_t   *out_tids;
	uint64_t	cap;
	u64		   *err;
	uint32_t	maxhops;
};

/* the whole warp writes the matches of one query, from its start */
__device__ static void
fill_walk(const FParams &p, uint64_t qi, uint64_t off, uint64_t cnt, uint64_t startw)
{
	const int	lane = threadIdx.x & 31;
	const unsigned below = (1u << lane) - 1;
	uint32_t	blk = (uint32_t) (startw >> 32);
	int			slot = (int) (startw & 0xFFFF);
	ulonglong2	a = ld2(&p.queries[qi].lo_key),
				b = ld2(&p.queries[qi].hi_key);
	u64			lk = a.x,
				lt = a.y,
				hk = b.x,
				ht = b.y;
	uint64_t	pos = off,
				end = off + cnt;
	u64			ek = 0,
				et = 0;
	bool		first = true;
	uint32_t	hops = 0;
	int			bad = E_NONE;

	for (;;)
	{
		/* the start leaf may be a root leaf (block 1 or 2); links go >= 3 */
		if (blk == 0 || blk >= p.nblocks)
		{
			bad = E_RIGHTLINK;
			break;
		}

		const char *pg = p.pages + (size_t) blk * GBT_PAGE_SIZE;
		const char *op = pg + GBT_OPAQUE_OFFSET;
		ulonglong2	oa = ld2(op),
					ob = ld2(op + 16),
					oc = ld2(op + 32),
					od = ld2(op + 48);
		uint32_t	flags = (uint32_t) (oc.y >> 16) & 0xFFFF;
		uint32_t	level = (uint32_t) (oc.y & 0xFFFF);
		uint32_t	nsl = (uint32_t) (oc.y >> 48);

		if ((od.y >> 48) != GBT_PAGE_ID || !(flags & GBT_F_LEAF) || level != 0 ||
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
			uint32_t	nx = (uint32_t) oc.x;

			if (!(nx >= FIRST_DATA_BLKNO && nx < p.nblocks && nx != blk))
			{
				bad = E_RIGHTLINK;
				break;
			}
			blk = nx;
			continue;
		}
		if (!first && (ob.x != ek || ob.y != et))
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
			bool		lt_hi = elt(k, t, hk, ht);
			bool		m = in && u && lt_hi && !elt(k, t, lk, lt);
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
		if (stop || (flags & GBT_F_RIGHTMOST) || !elt(oa.x, oa.y, hk, ht))
			break;
		{
			uint32_t	nx = (uint32_t) oc.x;

			if (!(nx >= FIRST_DATA_BLKNO && nx < p.nblocks && nx != blk))
			{
				bad = E_RIGHTLINK;
				break;
			}
			ek = oa.x;
			et = oa.y;
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

/* ------------------------------------------------------------------------
 * Page scatter (put_pages)
 * ------------------------------------------------------------------------
 */
__global__ void
scatter_pages_kernel(char *pages, const char *stage, const uint32_t *blknos, uint32_t n)
{
	uint32_t	i = blockIdx.x;

	if (i >= n)
		return;

	const uint4 *src = (const uint4 *) (stage + (size_t) i * GBT_PAGE_SIZE);
	uint4	   *dst = (uint4 *) (pages + (size_t) blknos[i] * GBT_PAGE_SIZE);

	for (int j = threadIdx.x; j < GBT_PAGE_SIZE / 16; j += blockDim.x)
		dst[j] = src[j];
}

/* ------------------------------------------------------------------------
 * Host side
 * ------------------------------------------------------------------------
 */
struct GbtCudaCopy
{
	int			device;
	cudaStream_t stream;
	char	   *d_pages;
	uint32_t	nblocks;

	/* put_pages staging */
	char	   *d_stage;
	uint32_t   *d_blknos;
	size_t		stage_cap;		/* pages */

	/* lookup workspace */
	size_t		q_cap;			/* queries */
	GbtCudaQuery *d_queries;
	uint64_t   *d_counts;		/* q_cap + 1 */
	uint64_t   *d_offsets;		/* q_cap + 1 */
	ulonglong2 *d_first;
	uint64_t   *d_start;
	QRec	   *d_rec;			/* device-sorted batches: results by record */
	bool		rec_used;		/* the last count pass wrote d_rec */
	bool		direct_used;	/* the last count pass wrote results directly */
	void	   *d_cub;
	size_t		cub_bytes;
	uint32_t   *d_skeys[2];		/* unsorted batches: sort keys and order */
	uint32_t   *d_perm[2];
	void	   *d_sort;
	size_t		sort_bytes;
	void	   *d_pts;			/* point batches: CUB sort and unique scratch */
	size_t		pts_bytes;
	size_t		out_cap;
	uint64_t   *d_out_keys;
	uint64_t   *d_out_tids;
	u64		   *d_err;			/* [0] error word, [1] list length, [2] sort shift,
								 * [3] direct path incomplete */
	u64		   *h_small;		/* pinned: [0] err, [1] total */
	int			sort_bits;		/* low-key bits the device sort orders by */

	uint64_t	sort_min;		/* see SORT_MIN_BATCH */
	int			count_blocks_g8;	/* persistent grid sizes */
	int			count_blocks_g16;
	int			leaf_blocks;
	int			fill_blocks;
};

extern "C" int
gbt_cuda_copy_create(GbtCudaCopy **copyp, uint32_t capacity_blocks)
{
	GbtCudaCopy *c;
	cudaDeviceProp prop;
	int			nb = 0;

	if (!copyp)
	{
		gbt_cuda_set_error("gbt_cuda_copy_create: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	*copyp = NULL;
	c = (GbtCudaCopy *) calloc(1, sizeof(GbtCudaCopy));
	if (!c)
	{
		gbt_cuda_set_error("out of host memory");
		return GBT_CUDA_ENOMEM;
	}
	if (capacity_blocks < FIRST_DATA_BLKNO)
		capacity_blocks = FIRST_DATA_BLKNO;

	cudaError_t e = cudaGetDevice(&c->device);

	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&prop, c->device);
	if (e == cudaSuccess)
		e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
	if (e == cudaSuccess)
		e = cudaMalloc(&c->d_pages, (size_t) capacity_blocks * GBT_PAGE_SIZE);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(c->d_pages, 0, (size_t) capacity_blocks * GBT_PAGE_SIZE, c->stream);
	if (e == cudaSuccess)
		e = cudaMalloc(&c->d_err, 4 * sizeof(u64));
	if (e == cudaSuccess)
		e = cudaMallocHost(&c->h_small, 4 * sizeof(u64));
	if (e == cudaSuccess)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, count_kernel<8, COUNT_MINB, true>, 256, 0);
	if (e == cudaSuccess)
	{
		c->count_blocks_g8 = nb * prop.multiProcessorCount;
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, count_kernel<16, COUNT_MINB, true>, 256, 0);
	}
	if (e == cudaSuccess)
	{
		c->count_blocks_g16 = nb * prop.multiProcessorCount;
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fill_kernel, 256, 0);
	}
	if (e == cudaSuccess)
	{
		c->fill_blocks = nb * prop.multiProcessorCount;
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, leaf_kernel<true, LEAF_MINB>, 256, 0);
	}
	if (e == cudaSuccess)
	{
		c->leaf_blocks = nb * prop.multiProcessorCount;
		e = cudaStreamSynchronize(c->stream);
	}
	if (e != cudaSuccess)
	{
		int			rc = cuda_fail(e, "gbt_cuda_copy_create");

		gbt_cuda_copy_free(c);
		return rc;
	}
	c->nblocks = capacity_blocks;
	c->sort_min = SORT_MIN_BATCH;
	c->sort_bits = SORT_BITS;
	{
		const char *env = getenv("GBT_CUDA_SORT_MIN");

		if (env && *env)
			c->sort_min = strtoull(env, NULL, 10);
	}
	*copyp = c;
	return 0;
}

extern "C" void
gbt_cuda_copy_free(GbtCudaCopy *c)
{
	if (!c)
		return;
	if (c->stream)
		cudaStreamSynchronize(c->stream);
	cudaFree(c->d_pages);
	cudaFree(c->d_stage);
	cudaFree(c->d_blknos);
	cudaFree(c->d_queries);
	cudaFree(c->d_counts);
	cudaFree(c->d_offsets);
	cudaFree(c->d_first);
	cudaFree(c->d_start);
	cudaFree(c->d_rec);
	cudaFree(c->d_cub);
	for (int i = 0; i < 2; i++)
	{
		cudaFree(c->d_skeys[i]);
		cudaFree(c->d_perm[i]);
	}
	cudaFree(c->d_sort);
	cudaFree(c->d_pts);
	cudaFree(c->d_out_keys);
	cudaFree(c->d_out_tids);
	cudaFree(c->d_err);
	if (c->h_small)
		cudaFreeHost(c->h_small);
	if (c->stream)
		cudaStreamDestroy(c->stream);
	free(c);
}

extern "C" uint32_t
gbt_cuda_copy_nblocks(const GbtCudaCopy *c)
{
	return c ? c->nblocks : 0;
}

/* For gbtree_cuda_sort.cu: the page array on the device, and its capacity */
const char *
gbt_cuda_copy_device_pages(const GbtCudaCopy *c, uint32_t *nblocks)
{
	*nblocks = c->nblocks;
	return c->d_pages;
}

extern "C" uint64_t
gbt_cuda_copy_device_bytes(const GbtCudaCopy *c)
{
	if (!c)
		return 0;
	return (uint64_t) c->nblocks * GBT_PAGE_SIZE +
		(uint64_t) c->stage_cap * (GBT_PAGE_SIZE + 4) +
		(uint64_t) c->q_cap * (sizeof(GbtCudaQuery) + 8 + 8 + 16 + 8 + sizeof(QRec) + 16) + 16 +
		c->cub_bytes + c->sort_bytes +
		(uint64_t) c->out_cap * 16 + 8;
}

/* grow the page array to hold block need - 1, keeping the content */
static int
copy_grow(GbtCudaCopy *c, uint32_t need)
{
	uint64_t	ncap;
	char	   *np = NULL;

	if (need <= c->nblocks)
		return 0;
	ncap = (uint64_t) c->nblocks + c->nblocks / 4 + 64;
	if (ncap < need)
		ncap = need;
	if (ncap > GBT_NO_BLOCK)
		ncap = GBT_NO_BLOCK;
	CK(cudaMalloc(&np, ncap * GBT_PAGE_SIZE), "growing the device copy");
	cudaError_t e = cudaMemcpyAsync(np, c->d_pages, (size_t) c->nblocks * GBT_PAGE_SIZE,
									cudaMemcpyDeviceToDevice, c->stream);

	if (e == cudaSuccess)
		e = cudaMemsetAsync(np + (size_t) c->nblocks * GBT_PAGE_SIZE, 0,
							(size_t) (ncap - c->nblocks) * GBT_PAGE_SIZE, c->stream);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(c->stream);
	if (e != cudaSuccess)
	{
		cudaFree(np);
		return cuda_fail(e, "growing the device copy");
	}
	cudaFree(c->d_pages);
	c->d_pages = np;
	c->nblocks = (uint32_t) ncap;
	return 0;
}

extern "C" int
gbt_cuda_copy_put_range(GbtCudaCopy *c, uint32_t first, const void *images, uint32_t npages)
{
	int			rc;

	if (!c || (!images && npages))
	{
		gbt_cuda_set_error("gbt_cuda_copy_put_range: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	if (npages == 0)
		return 0;
	if ((uint64_t) first + npages >= GBT_NO_BLOCK)
	{
		gbt_cuda_set_error("block number out of range");
		return GBT_CUDA_EINVAL;
	}
	if ((rc = copy_grow(c, first + npages)) != 0)
		return rc;
	CK(cudaMemcpyAsync(c->d_pages + (size_t) first * GBT_PAGE_SIZE, images,
					   (size_t) npages * GBT_PAGE_SIZE, cudaMemcpyHostToDevice, c->stream),
	   "copying pages");
	CK(cudaStreamSynchronize(c->stream), "copying pages");
	return 0;
}

static int
cmp_idx_by_blk(const void *a, const void *b, void *arg)
{
	const uint32_t *blk = (const uint32_t *) arg;
	uint32_t	ia = *(const uint32_t *) a,
				ib = *(const uint32_t *) b;

	if (blk[ia] != blk[ib])
		return blk[ia] < blk[ib] ? -1 : 1;
	return ia < ib ? -1 : (ia > ib ? 1 : 0);
}

extern "C" int
gbt_cuda_copy_put_pages(GbtCudaCopy *c, const uint32_t *blknos, const void *images, uint32_t npages)
{
	uint32_t	maxblk = 0;
	const uint32_t *use_blk = blknos;
	uint32_t   *tmp = NULL;
	uint32_t   *idx = NULL;
	const char *img = (const char *) images;
	char	   *packed = NULL;
	uint32_t	nuse = npages;
	int			rc;

	if (!c || ((!blknos || !images) && npages))
	{
		gbt_cuda_set_error("gbt_cuda_copy_put_pages: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	if (npages == 0)
		return 0;
	for (uint32_t i = 0; i < npages; i++)
	{
		if (blknos[i] >= GBT_NO_BLOCK - 1)
		{
			gbt_cuda_set_error("block number %u out of range", blknos[i]);
			return GBT_CUDA_EINVAL;
		}
		if (blknos[i] > maxblk)
			maxblk = blknos[i];
	}
	/* duplicates: keep the last image of each block */
	{
		bool		sorted_unique = true;

		for (uint32_t i = 1; i < npages; i++)
			if (blknos[i] <= blknos[i - 1])
				sorted_unique = false;
		if (!sorted_unique)
		{
			idx = (uint32_t *) malloc(sizeof(uint32_t) * npages);
			tmp = (uint32_t *) malloc(sizeof(uint32_t) * npages);
			if (!idx || !tmp)
			{
				free(idx);
				free(tmp);
				gbt_cuda_set_error("out of host memory");
				return GBT_CUDA_ENOMEM;
			}
			for (uint32_t i = 0; i < npages; i++)
				idx[i] = i;
			qsort_r(idx, npages, sizeof(uint32_t), cmp_idx_by_blk, (void *) blknos);
			nuse = 0;
			for (uint32_t i = 0; i < npages; i++)
				if (i + 1 == npages || blknos[idx[i + 1]] != blknos[idx[i]])
					idx[nuse++] = idx[i];
			for (uint32_t i = 0; i < nuse; i++)
				tmp[i] = blknos[idx[i]];
			use_blk = tmp;
			packed = (char *) malloc((size_t) nuse * GBT_PAGE_SIZE);
			if (!packed)
			{
				free(idx);
				free(tmp);
				gbt_cuda_set_error("out of host memory");
				return GBT_CUDA_ENOMEM;
			}
			for (uint32_t i = 0; i < nuse; i++)
				memcpy(packed + (size_t) i * GBT_PAGE_SIZE, img + (size_t) idx[i] * GBT_PAGE_SIZE,
					   GBT_PAGE_SIZE);
			img = packed;
		}
	}
	rc = copy_grow(c, maxblk + 1);
	if (rc == 0 && c->stage_cap < nuse)
	{
		size_t		ncap = nuse < 256 ? 256 : nuse;

		cudaFree(c->d_stage);
		cudaFree(c->d_blknos);
		c->d_stage = NULL;
		c->d_blknos = NULL;
		c->stage_cap = 0;
		cudaError_t e = cudaMalloc(&c->d_stage, ncap * GBT_PAGE_SIZE);

		if (e == cudaSuccess)
			e = cudaMalloc(&c->d_blknos, ncap * sizeof(uint32_t));
		if (e != cudaSuccess)
			rc = cuda_fail(e, "page staging buffer");
		else
			c->stage_cap = ncap;
	}
	if (rc == 0)
	{
		cudaError_t e = cudaMemcpyAsync(c->d_stage, img, (size_t) nuse * GBT_PAGE_SIZE,
										cudaMemcpyHostToDevice, c->stream);

		if (e == cudaSuccess)
			e = cudaMemcpyAsync(c->d_blknos, use_blk, nuse * sizeof(uint32_t),
								cudaMemcpyHostToDevice, c->stream);
		if (e == cudaSuccess)
		{
			scatter_pages_kernel<<<nuse, 256, 0, c->stream>>>(c->d_pages, c->d_stage, c->d_blknos, nuse);
			e = cudaGetLastError();
		}
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(c->stream);
		if (e != cudaSuccess)
			rc = cuda_fail(e, "copying pages");
	}
	free(idx);
	free(tmp);
	free(packed);
	return rc;
}

static int
ensure_workspace(GbtCudaCopy *c, size_t n)
{
	size_t		cub_need = 0;

	if (n <= c->q_cap)
		return 0;
	{
		size_t		ncap = n < 4096 ? 4096 : n;

		cudaFree(c->d_queries);
		cudaFree(c->d_counts);
		cudaFree(c->d_offsets);
		cudaFree(c->d_first);
		cudaFree(c->d_start);
		cudaFree(c->d_rec);
		cudaFree(c->d_cub);
		cudaFree(c->d_sort);
		for (int i = 0; i < 2; i++)
		{
			cudaFree(c->d_skeys[i]);
			cudaFree(c->d_perm[i]);
			c->d_skeys[i] = c->d_perm[i] = NULL;
		}
		c->d_sort = NULL;
		c->sort_bytes = 0;
		c->d_queries = NULL;
		c->d_counts = c->d_offsets = c->d_start = NULL;
		c->d_first = NULL;
		c->d_rec = NULL;
		c->d_cub = NULL;
		c->q_cap = 0;
		c->cub_bytes = 0;
		CK(cub::DeviceScan::ExclusiveSum(NULL, cub_need, (uint64_t *) NULL, (uint64_t *) NULL,
										 (int64_t) ncap + 1, c->stream), "scan size");
		CK(cudaMalloc(&c->d_queries, ncap * sizeof(GbtCudaQuery)), "query buffer");
		CK(cudaMalloc(&c->d_counts, (ncap + 1) * sizeof(uint64_t)), "count buffer");
		CK(cudaMalloc(&c->d_offsets, (ncap + 1) * sizeof(uint64_t)), "offset buffer");
		CK(cudaMalloc(&c->d_first, ncap * sizeof(ulonglong2)), "match buffer");
		CK(cudaMalloc(&c->d_start, ncap * sizeof(uint64_t)), "start buffer");
		CK(cudaMalloc(&c->d_rec, ncap * sizeof(QRec)), "result record buffer");
		CK(cudaMalloc(&c->d_cub, cub_need), "scan buffer");
		c->cub_bytes = cub_need;
		{
			size_t		sort_need = 0;

			CK(cub::DeviceRadixSort::SortPairs(NULL, sort_need, (uint32_t *) NULL, (uint32_t *) NULL,
											   (uint32_t *) NULL, (uint32_t *) NULL, (int64_t) ncap,
											   0, 32, c->stream), "sort size");
			for (int i = 0; i < 2; i++)
			{
				CK(cudaMalloc(&c->d_skeys[i], ncap * sizeof(uint32_t)), "sort buffer");
				CK(cudaMalloc(&c->d_perm[i], ncap * sizeof(uint32_t)), "sort buffer");
			}
			CK(cudaMalloc(&c->d_sort, sort_need), "sort buffer");
			c->sort_bytes = sort_need;
		}
		c->q_cap = ncap;
	}
	return 0;
}

static int
ensure_out(GbtCudaCopy *c, size_t n)
{
	if (n <= c->out_cap)
		return 0;
	{
		size_t		ncap = n + n / 4 + 1024;

		cudaFree(c->d_out_keys);
		cudaFree(c->d_out_tids);
		c->d_out_keys = c->d_out_tids = NULL;
		c->out_cap = 0;
		CK(cudaMalloc(&c->d_out_keys, ncap * sizeof(uint64_t)), "result buffer");
		CK(cudaMalloc(&c->d_out_tids, ncap * sizeof(uint64_t)), "result buffer");
		c->out_cap = ncap;
	}
	return 0;
}

/*
 * The parameters the count and leaf kernels share: the copy's pages, the
 * batch and its per-query outputs.
 */
template <typename P>
static void
set_tree_params(P *p, const GbtCudaCopy *c, uint32_t root, uint64_t n,
				const uint32_t *perm, QRec *rec)
{
	p->pages = c->d_pages;
	p->nblocks = c->nblocks;
	p->root = root;
	p->queries = c->d_queries;
	p->perm = perm;
	p->n = n;
	p->counts = c->d_counts;
	p->first = c->d_first;
	p->start = c->d_start;
	p->rec = rec;
	p->err = c->d_err;
	p->maxhops = c->nblocks + 64;
}

/*
 * Device-side phases, on queries already on the device (c->d_queries).
 * group: 8 or 16 lanes per query; grid_blocks 0 = persistent grid.
 */
static cudaError_t
launch_count(GbtCudaCopy *c, uint32_t root, uint64_t n, int group, int grid_blocks,
			 const uint32_t *perm, bool fast, const u64 *n_dev, QRec *rec)
{
	KParams		p;
	int			maxb = group == 16 ? c->count_blocks_g16 : c->count_blocks_g8;
	uint64_t	want = (n * (uint64_t) group + 255) / 256;

	set_tree_params(&p, c, root, n, perm, rec);
	p.n_dev = n_dev;
	if (grid_blocks <= 0)
		grid_blocks = maxb;
	if ((uint64_t) grid_blocks > want)
		grid_blocks = (int) (want ? want : 1);
	/*
	 * The leaf fast path pays off on sorted batches only (H100, 16M batch:
	 * sorted 3.2e9 -> 5.8e9 lookups/s; unsorted as given 6.0e8 -> 4.2e8).
	 */
	if (group == 16)
	{
		if (fast)
			count_kernel<16, COUNT_MINB, true><<<grid_blocks, 256, 0, c->stream>>>(p);
		else
			count_kernel<16, COUNT_MINB, false><<<grid_blocks, 256, 0, c->stream>>>(p);
	}
	else
	{
		if (fast)
			count_kernel<8, COUNT_MINB, true><<<grid_blocks, 256, 0, c->stream>>>(p);
		else
			count_kernel<8, COUNT_MINB, false><<<grid_blocks, 256, 0, c->stream>>>(p);
	}
	return cudaGetLastError();
}

static cudaError_t
launch_scan(GbtCudaCopy *c, uint64_t n)
{
	size_t		bytes = c->cub_bytes;
	cudaError_t e = cudaMemsetAsync(c->d_counts + n, 0, sizeof(uint64_t), c->stream);

	if (e != cudaSuccess)
		return e;
	return cub::DeviceScan::ExclusiveSum(c->d_cub, bytes, c->d_counts, c->d_offsets,
										 (int64_t) n + 1, c->stream);
}

static cudaError_t
launch_fill(GbtCudaCopy *c, uint64_t n, uint64_t cap, bool keys)
{
	FParams		p;
	uint64_t	want = (n * 32 / 32 + 255) / 256;
	int			grid = c->fill_blocks;

	p.pages = c->d_pages;
	p.nblocks = c->nblocks;
	p.queries = c->d_queries;
	p.n = n;
	p.offsets = c->d_offsets;
	p.first = c->d_first;
	p.start = c->d_start;
	p.rec = c->rec_used ? c->d_rec : NULL;
	p.direct = c->direct_used ? c->d_err + 3 : NULL;
	p.out_keys = keys ? c->d_out_keys : NULL;
	p.out_tids = c->d_out_tids;
	p.cap = cap;
	p.err = c->d_err;
	p.maxhops = c->nblocks + 64;
	if ((uint64_t) grid > want)
		grid = (int) (want ? want : 1);
	fill_kernel<<<grid, 256, 0, c->stream>>>(p);
	return cudaGetLastError();
}

static int
corrupt_error(u64 err)
{
	unsigned	code = (unsigned) (err >> 32);

	gbt_cuda_set_error("inconsistent device copy at block %u: %s", (unsigned) err,
			  code < E_NCODES ? err_text[code] : "?");
	return GBT_CUDA_ECORRUPT;
}

static int	choose_group(int sorted);


/*
 * The shift that keeps the sort_bits bits of the low keys below the
 * highest bit in which a sample of them differ (one block).
 */
__global__ void
sort_shift_kernel(const GbtCudaQuery *q, uint64_t n, int bits, u64 *shift)
{
	__shared__ u64 acc;
	const uint64_t ns = n < 4096 ? n : 4096;
	const u64	k0 = q[0].lo_key;
	u64			x = 0;

	if (threadIdx.x == 0)
		acc = 0;
	__syncthreads();
	for (uint64_t i = threadIdx.x; i < ns; i += blockDim.x)
		x |= q[i * (n / ns)].lo_key ^ k0;
	atomicOr(&acc, x);
	__syncthreads();
	if (threadIdx.x == 0)
	{
		int			top = acc ? 64 - __clzll(acc) : 0;	/* bits in use */

		*shift = top > bits ? top - bits : 0;
	}
}

__global__ void
sort_keys_kernel(const GbtCudaQuery *q, uint32_t *keys, uint32_t *perm, uint64_t n, int bits,
				 const u64 *shiftp)
{
	const int	shift = (int) *shiftp;
	const uint32_t mask = bits >= 32 ? ~0u : (1u << bits) - 1;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		keys[i] = (uint32_t) (q[i].lo_key >> shift) & mask;
		perm[i] = (uint32_t) i;
	}
}

/* the counts of the records, for the prefix sum */
__global__ void
rec_counts_kernel(const QRec *rec, uint64_t *counts, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		counts[i] = rec[i].count;
}

static cudaError_t
launch_leaf(GbtCudaCopy *c, uint32_t root, uint64_t n, const uint32_t *perm, bool direct, bool keys)
{
	LParams		p;
	uint64_t	want = (n + 255) / 256;	/* 8 warps of 32 queries */
	int			grid = c->leaf_blocks;

	set_tree_params(&p, c, root, n, perm, perm ? c->d_rec : NULL);
	p.out_keys = direct && keys ? c->d_out_keys : NULL;
	p.out_tids = direct ? c->d_out_tids : NULL;
	p.multi = c->d_err + 3;
	p.list = c->d_skeys[0];
	p.nlist = c->d_err + 1;
	if ((uint64_t) grid > want)
		grid = (int) (want ? want : 1);
	if (perm)
		leaf_kernel<true, LEAF_MINB><<<grid, 256, 0, c->stream>>>(p);
	else
		leaf_kernel<false, LEAF_MINB><<<grid, 256, 0, c->stream>>>(p);
	return cudaGetLastError();
}

/*
 * The device phases on queries already in c->d_queries: optional sort of
 * an unsorted batch by sort_bits bits of the low key (neighbouring queries
 * then share leaves; results still come out in batch order), count (leaf
 * kernel, then count kernel on what it leaves; as given: count kernel),
 * prefix sum, and fill into c->d_out_* when fill_cap is
 * not 0 (the fill kernel does nothing when the total exceeds fill_cap).
 */
static cudaError_t
device_phases(GbtCudaCopy *c, uint32_t root, uint64_t n, int sorted, int group,
			  uint64_t fill_cap, bool keys)
{
	cudaError_t e;
	const uint32_t *perm = NULL;

	/* error word, list length, sort shift, direct-path flag */
	e = cudaMemsetAsync(c->d_err, 0, 4 * sizeof(u64), c->stream);
	c->rec_used = false;
	c->direct_used = false;
	if (e == cudaSuccess && !sorted && n >= c->sort_min)
	{
		size_t		bytes = c->sort_bytes;

		sort_shift_kernel<<<1, 256, 0, c->stream>>>(c->d_queries, n, c->sort_bits, c->d_err + 2);
		sort_keys_kernel<<<(unsigned) std::min<uint64_t>((n + 255) / 256, 4096), 256, 0, c->stream>>>(
			c->d_queries, c->d_skeys[0], c->d_perm[0], n, c->sort_bits, c->d_err + 2);
		e = cudaGetLastError();
		if (e == cudaSuccess)
			e = cub::DeviceRadixSort::SortPairs(c->d_sort, bytes, c->d_skeys[0], c->d_skeys[1],
												c->d_perm[0], c->d_perm[1], (int64_t) n, 0,
												c->sort_bits, c->stream);
		perm = c->d_perm[1];
		sorted = 1;
	}
	if (e == cudaSuccess && sorted && n >= LEAF_DENSITY * (uint64_t) c->nblocks)
	{
		/*
		 * Sorted order: the leaf kernel resolves the queries lying in one
		 * leaf; count_kernel takes the rest from the list it leaves (in
		 * d_skeys[0], free once the sort is done).
		 */
		/*
		 * Direct path (sorted batches whose results fit the device buffer):
		 * the leaf kernel also writes each single match at its query's
		 * position, and the fill pass is skipped when every count is 1.
		 */
		c->direct_used = !perm && fill_cap && n <= c->out_cap;
		e = launch_leaf(c, root, n, perm, c->direct_used, keys);
		if (e == cudaSuccess)
			e = launch_count(c, root, n, group ? group : choose_group(1), 0, c->d_skeys[0], true,
							 c->d_err + 1, perm ? c->d_rec : NULL);
	}
	else if (e == cudaSuccess)
		e = launch_count(c, root, n, group ? group : choose_group(sorted), 0, perm, sorted != 0, NULL,
						 perm ? c->d_rec : NULL);
	c->rec_used = perm != NULL;
	if (e == cudaSuccess && perm)
	{
		rec_counts_kernel<<<(unsigned) std::min<uint64_t>((n + 255) / 256, 4096), 256, 0, c->stream>>>(
			c->d_rec, c->d_counts, n);
		e = cudaGetLastError();
	}
	if (e == cudaSuccess)
		e = launch_scan(c, n);
	if (e == cudaSuccess && fill_cap)
		e = launch_fill(c, n, fill_cap, keys);
	return e;
}

/* point keys (sorted, distinct) to equality queries */
__global__ void
points_to_queries(const uint64_t *keys, GbtCudaQuery *q, uint32_t n)
{
	uint32_t	i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		uint64_t	k = keys[i];

		q[i].lo_key = k;
		q[i].lo_tid = 0;
		q[i].hi_key = k;
		q[i].hi_tid = ~(uint64_t) 0;
	}
}

/*
 * GBT_CUDA_POINTS batches: n point keys in any order, repeats allowed, to
 * c->d_queries as a sorted batch of distinct equality queries; *nu gets
 * their number.  The keys go through d_first (room for 2n keys) and
 * d_start, which the lookup phases overwrite only later.
 */
static int
points_on_device(GbtCudaCopy *c, const uint64_t *keys, uint32_t n, uint32_t *nu)
{
	uint64_t   *in = (uint64_t *) c->d_first;
	cub::DoubleBuffer<uint64_t> buf(in, in + n);
	size_t		sort_need = 0,
				uniq_need = 0,
				need;
	int64_t    *d_num = (int64_t *) c->d_offsets;

	CK(cudaMemcpyAsync(in, keys, (size_t) n * sizeof(uint64_t), cudaMemcpyHostToDevice, c->stream),
	   "copying point keys");
	CK(cub::DeviceRadixSort::SortKeys(NULL, sort_need, buf, (int64_t) n, 0, 64, c->stream), "sort size");
	CK(cub::DeviceSelect::Unique(NULL, uniq_need, (uint64_t *) NULL, (uint64_t *) NULL,
								 d_num, (int64_t) n, c->stream), "unique size");
	need = std::max(sort_need, uniq_need);
	if (need > c->pts_bytes)
	{
		cudaFree(c->d_pts);
		c->d_pts = NULL;
		c->pts_bytes = 0;
		CK(cudaMalloc(&c->d_pts, need), "point sort buffer");
		c->pts_bytes = need;
	}
	sort_need = c->pts_bytes;
	CK(cub::DeviceRadixSort::SortKeys(c->d_pts, sort_need, buf, (int64_t) n, 0, 64, c->stream),
	   "sorting point keys");
	uniq_need = c->pts_bytes;
	CK(cub::DeviceSelect::Unique(c->d_pts, uniq_need, buf.Current(), c->d_start, d_num,
								 (int64_t) n, c->stream), "point keys unique");
	CK(cudaMemcpyAsync(&c->h_small[0], d_num, sizeof(u64), cudaMemcpyDeviceToHost, c->stream),
	   "point keys unique");
	CK(cudaStreamSynchronize(c->stream), "point keys");
	*nu = (uint32_t) c->h_small[0];
	if (*nu > 0)
	{
		points_to_queries<<<(*nu + 255) / 256, 256, 0, c->stream>>>(c->d_start, c->d_queries, *nu);
		CK(cudaGetLastError(), "point queries");
	}
	return 0;
}

extern "C" int
gbt_cuda_lookup(GbtCudaCopy *c, uint32_t root, const GbtCudaQuery *queries, uint32_t n,
				int sorted, uint64_t *offsets, uint64_t *out_keys, uint64_t *out_tids,
				uint64_t out_capacity, uint64_t *out_total)
{
	int			rc;
	bool		filled;
	uint64_t	total;

	if (out_total)
		*out_total = 0;
	if (!c || !offsets || !out_total || (n && !queries) || (out_capacity && !out_tids))
	{
		gbt_cuda_set_error("gbt_cuda_lookup: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	if (root >= c->nblocks || root == 0)
	{
		gbt_cuda_set_error("root block %u out of range (copy has %u blocks)", root, c->nblocks);
		return GBT_CUDA_ECORRUPT;
	}
	if (n == 0)
	{
		offsets[0] = 0;
		return 0;
	}
	if ((rc = ensure_workspace(c, n)) != 0)
		return rc;
	/* room for a one-pass fill when the device buffer already covers it */
	filled = out_capacity <= c->out_cap;

	if (sorted == GBT_CUDA_POINTS)
	{
		if ((rc = points_on_device(c, (const uint64_t *) queries, n, &n)) != 0)
			return rc;
		sorted = 1;
		if (n == 0)
		{
			offsets[0] = 0;
			return 0;
		}
	}
	else
		CK(cudaMemcpyAsync(c->d_queries, queries, (size_t) n * sizeof(GbtCudaQuery),
						   cudaMemcpyHostToDevice, c->stream), "copying queries");
	CK(device_phases(c, root, n, sorted, 0, filled ? out_capacity : 0, out_keys != NULL), "lookup kernels");
	CK(cudaMemcpyAsync(&c->h_small[0], c->d_err, sizeof(u64), cudaMemcpyDeviceToHost, c->stream),
	   "lookup");
	CK(cudaMemcpyAsync(&c->h_small[1], c->d_offsets + n, sizeof(u64), cudaMemcpyDeviceToHost,
					   c->stream), "lookup");
	CK(cudaMemcpyAsync(offsets, c->d_offsets, ((size_t) n + 1) * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, c->stream), "copying offsets");
	CK(cudaStreamSynchronize(c->stream), "lookup");
	if (c->h_small[0] != 0)
		return corrupt_error(c->h_small[0]);
	total = c->h_small[1];
	*out_total = total;
	if (total > out_capacity)
		return GBT_CUDA_ESPACE;
	if (total == 0)
		return 0;
	if (!filled)
	{
		if ((rc = ensure_out(c, total)) != 0)
			return rc;
		CK(launch_fill(c, n, total, out_keys != NULL), "fill kernel");
		CK(cudaMemcpyAsync(&c->h_small[0], c->d_err, sizeof(u64), cudaMemcpyDeviceToHost,
						   c->stream), "lookup");
	}
	if (out_keys)
		CK(cudaMemcpyAsync(out_keys, c->d_out_keys, total * sizeof(uint64_t),
						   cudaMemcpyDeviceToHost, c->stream), "copying results");
	CK(cudaMemcpyAsync(out_tids, c->d_out_tids, total * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, c->stream), "copying results");
	CK(cudaStreamSynchronize(c->stream), "lookup");
	if (c->h_small[0] != 0)
	{
		*out_total = 0;
		return corrupt_error(c->h_small[0]);
	}
	return 0;
}

/* group width by batch kind (measured: cuda/test/RESULTS.md) */
static int	group_sorted = 8;
static int	group_unsorted = 8;

static int
choose_group(int sorted)
{
	return sorted ? group_sorted : group_unsorted;
}

/* ------------------------------------------------------------------------
 * The 16-slot count (kept from ABI 1)
 * ------------------------------------------------------------------------
 */
__global__ static void
count_lt16_kernel(const uint64_t *blocks, const uint64_t *queries, int *counts, int n)
{
	int			q = (blockIdx.x * blockDim.x + threadIdx.x) / 16;
	int			lane = threadIdx.x & 15;
	unsigned	half = (threadIdx.x & 16) ? 0xFFFF0000u : 0x0000FFFFu;
	bool		active = q < n;
	unsigned	ballot;

	ballot = __ballot_sync(0xFFFFFFFFu, active && blocks[(size_t) q * 16 + lane] < queries[q]);
	if (active && lane == 0)
		counts[q] = __popc(ballot & half);
}

extern "C" int
gbt_cuda_count_lt16(const uint64_t *blocks, const uint64_t *queries, int *counts, int n)
{
	uint64_t   *d_blocks = NULL,
			   *d_queries = NULL;
	int		   *d_counts = NULL;
	int			rc = -1;

	if (n <= 0)
		return 0;
	if (cudaMalloc(&d_blocks, sizeof(uint64_t) * 16 * n) != cudaSuccess ||
		cudaMalloc(&d_queries, sizeof(uint64_t) * n) != cudaSuccess ||
		cudaMalloc(&d_counts, sizeof(int) * n) != cudaSuccess)
		goto out;
	if (cudaMemcpy(d_blocks, blocks, sizeof(uint64_t) * 16 * n, cudaMemcpyHostToDevice) != cudaSuccess ||
		cudaMemcpy(d_queries, queries, sizeof(uint64_t) * n, cudaMemcpyHostToDevice) != cudaSuccess)
		goto out;
	count_lt16_kernel<<<(n * 16 + 255) / 256, 256>>>(d_blocks, d_queries, d_counts, n);
	if (cudaGetLastError() != cudaSuccess)
		goto out;
	if (cudaMemcpy(counts, d_counts, sizeof(int) * n, cudaMemcpyDeviceToHost) != cudaSuccess)
		goto out;
	rc = 0;
out:
	cudaFree(d_blocks);
	cudaFree(d_queries);
	cudaFree(d_counts);
	return rc;
}
