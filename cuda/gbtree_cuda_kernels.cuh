/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_kernels.cuh
 *	  What the lookup kernels of libgbtree_cuda.so share: their parameter
 *	  blocks, the result record, the corruption codes, the device helpers
 *	  every kernel inlines, and the host launchers of the kernels.
 *
 * Private to cuda/ (the library's C interface is gbtree_cuda.h).  Each
 * kernel lives in its own file (gbtree_cuda_count.cu, gbtree_cuda_leaf.cu,
 * gbtree_cuda_fill.cu) and is launched from gbtree_cuda_lookup.cu through
 * the launchers declared here, so the library needs no relocatable device
 * code; the helpers are static and forced inline, so each kernel compiles
 * exactly as it would with them in its own file.
 *
 * Every page reached is checked (page id, kind, capacity, level, low key
 * against the target, links in range and away from the fixed blocks, the
 * leaf chain's low keys equal to the previous high key, hop and level
 * bounds), so a damaged or half-updated copy gives GBT_CUDA_ECORRUPT,
 * never a fault, a hang or an out-of-bounds read.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_CUDA_KERNELS_CUH
#define GBTREE_CUDA_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

extern "C"
{
#include "gbtree_node.h"
}
#include "gbtree_cuda.h"

/* functions shared between the library's files, not exported by it */
#define GBT_CUDA_PRIVATE __attribute__((visibility("hidden")))

typedef unsigned long long u64;

static_assert(GBT_LEAF_DIR_OFF == GBT_INNER_DIR_OFF, "directory at one offset for both kinds");
static_assert(GBT_LEAF_USED_OFF == GBT_INNER_USED_OFF, "bitmap at one offset for both kinds");
static_assert(sizeof(GbtCudaQuery) == 32, "query layout");

#define FULL_MASK	0xFFFFFFFFu
#define DIR_OFF		GBT_LEAF_DIR_OFF
#define USED_OFF	GBT_LEAF_USED_OFF
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

/* ------------------------------------------------------------------------
 * Parameters of the kernels
 * ------------------------------------------------------------------------
 */
/*
 * What count_kernel and leaf_kernel share: the copy, the batch and its
 * per-query outputs (one setter fills it for both, in gbtree_cuda_lookup.cu).
 */
struct TreeParams
{
	const char *pages;
	uint32_t	nblocks;
	uint32_t	root;
	const GbtCudaQuery *queries;
	const uint32_t *perm;		/* NULL, or the order to take the queries in */
	uint64_t	n;
	uint64_t   *counts;			/* [n + 1] */
	ulonglong2 *first;			/* [n] first match (key, tid) */
	uint64_t   *start;			/* [n] leaf << 32 | inline flag << 16 | slot */
	QRec	   *rec;			/* NULL, or results go here instead */
	u64		   *err;
	uint32_t	maxhops;
};

/* count_kernel (gbtree_cuda_count.cu) */
struct KParams : TreeParams
{
	const u64  *n_dev;			/* NULL, or the device word holding n (<= n) */
};

/* leaf_kernel (gbtree_cuda_leaf.cu) */
struct LParams : TreeParams
{
	uint64_t   *out_keys;		/* direct path (NULL: off): the match of */
	uint64_t   *out_tids;		/* query i at i when every count is 1 */
	u64		   *multi;			/* set when some count is not 1 */
	uint32_t   *list;			/* queries left to count_kernel */
	u64		   *nlist;
};

/* fill_kernel (gbtree_cuda_fill.cu) */
/* walk_count_kernel and walk_fill_kernel (gbtree_cuda_posting.cu) */
struct WParams
{
	const char *pages;
	uint32_t	nblocks;
	uint32_t	root;
	const GbtCudaQuery *queries;
	uint64_t	n;
	uint64_t   *counts;			/* count pass: [n] */
	const uint64_t *offsets;	/* fill pass: [n + 1] */
	uint64_t   *out_keys;		/* may be NULL */
	uint64_t   *out_tids;
	uint64_t	cap;
	u64		   *err;
	uint32_t	maxhops;
};

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

/* ------------------------------------------------------------------------
 * Device helpers
 * ------------------------------------------------------------------------
 */
/* (k1, t1) < (k2, t2) */
static __device__ __forceinline__ bool
elt(u64 k1, u64 t1, u64 k2, u64 t2)
{
	return k1 < k2 || (k1 == k2 && t1 < t2);
}

/* entry (k, t) < bound (bk, bt); t is only looked at when it matters */
static __device__ __forceinline__ bool
elt_bound(u64 k, u64 t, u64 bk, u64 bt)
{
	return k < bk || (k == bk && t < bt);
}

/* a bound whose comparisons need TIDs (see need_tid in the count kernel) */
static __device__ __forceinline__ bool
bound_needs_tid(u64 k, u64 t)
{
	return !(t == 0 || (t == ~0ULL && k != ~0ULL));
}

/* entry < bound, from the key alone (valid when !bound_needs_tid) */
static __device__ __forceinline__ bool
klt_bound(u64 k, u64 bk, u64 bt)
{
	return bt == 0 ? k < bk : k <= bk;
}

static __device__ __forceinline__ void
put_rec(QRec *rec, uint64_t qi, u64 cnt, u64 startw, u64 fk, u64 ft)
{
	ulonglong2 *r = (ulonglong2 *) (rec + qi);

	r[0] = make_ulonglong2(cnt, startw);
	r[1] = make_ulonglong2(fk, ft);
}

static __device__ __forceinline__ ulonglong2
ld2(const void *p)
{
	return __ldg((const ulonglong2 *) p);
}

static __device__ __forceinline__ u64
ld1(const void *p)
{
	return __ldg((const u64 *) p);
}

/*
 * A query's bounds: lo = (lk, lt), hi = (hk, ht).  Returned by value: the
 * kernels that keep the bounds in their own variables copy them (passing
 * pointers to those variables, or keeping a QBounds across iterations
 * instead, changes their machine code).
 */
struct QBounds
{
	u64			lk,
				lt,
				hk,
				ht;
};

static __device__ __forceinline__ QBounds
ld_query(const GbtCudaQuery *queries, uint64_t qi)
{
	ulonglong2	a = ld2(&queries[qi].lo_key),
				b = ld2(&queries[qi].hi_key);
	QBounds		r;

	r.lk = a.x;
	r.lt = a.y;
	r.hk = b.x;
	r.ht = b.y;
	return r;
}

/*
 * The 64-bit words of a page's opaque area (GbtPageOpaqueData), as every
 * kernel loads it: four 16-byte loads.
 */
struct Opaque
{
	u64			hik,
				hit;			/* high key */
	u64			lowk,
				lowt;			/* low key */
	u64			links;			/* right-link in the low half */
	u64			w5;				/* level | flags << 16 | nused << 32 | nslots << 48 */
	u64			w6;				/* xact */
	u64			w7;				/* page_id << 48 */
};

static __device__ __forceinline__ Opaque
ld_opaque(const char *pg)
{
	const char *op = pg + GBT_OPAQUE_OFFSET;
	ulonglong2	a = ld2(op),
				b = ld2(op + 16),
				c = ld2(op + 32),
				d = ld2(op + 48);
	Opaque		o = {a.x, a.y, b.x, b.y, c.x, c.y, d.x, d.y};

	return o;
}

/* a right-link or downlink: in the copy, not to itself nor a fixed block */
static __device__ __forceinline__ bool
link_ok(uint32_t b, uint32_t cur, uint32_t nblocks)
{
	return b >= GBT_FIRST_FREE_BLKNO && b < nblocks && b != cur;
}

static __device__ __forceinline__ void
report(u64 *err, int code, uint32_t blk)
{
	atomicCAS(err, 0ULL, ((u64) code << 32) | blk);
}

template <int G>
static __device__ __forceinline__ unsigned
group_sum(unsigned v)
{
#pragma unroll
	for (int m = G / 2; m >= 1; m >>= 1)
		v += __shfl_xor_sync(FULL_MASK, v, m);
	return v;
}

/* popcount of the used bits of word w (lane w < 8) within slots [from, to) */
static __device__ __forceinline__ unsigned
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

/* the checks every page reached gets (see the count kernel) */
static __device__ __forceinline__ int
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

/* ------------------------------------------------------------------------
 * Launchers (the kernels' files): the grid blocks of 256 threads per SM
 * each kernel runs with, and a launch on a stream returning its error
 * ------------------------------------------------------------------------
 */
/* count_kernel<group, COUNT_MINB, true> (group 8 or 16) */
extern GBT_CUDA_PRIVATE cudaError_t count_kernel_occupancy(int group, int *blocks_per_sm);

/* count_kernel<group, COUNT_MINB, fast> */
extern GBT_CUDA_PRIVATE cudaError_t launch_count_kernel(const KParams &p, int group, bool fast,
														int grid, cudaStream_t stream);

/* leaf_kernel<true, LEAF_MINB> */
extern GBT_CUDA_PRIVATE cudaError_t leaf_kernel_occupancy(int *blocks_per_sm);

/* leaf_kernel<perm, LEAF_MINB>: perm says p.perm is set */
extern GBT_CUDA_PRIVATE cudaError_t launch_leaf_kernel(const LParams &p, bool perm, int grid,
													   cudaStream_t stream);

extern GBT_CUDA_PRIVATE cudaError_t launch_walk_kernel(const WParams &p, bool fill,
													   cudaStream_t stream);
extern GBT_CUDA_PRIVATE cudaError_t fill_kernel_occupancy(int *blocks_per_sm);
extern GBT_CUDA_PRIVATE cudaError_t launch_fill_kernel(const FParams &p, int grid,
													   cudaStream_t stream);

#endif							/* GBTREE_CUDA_KERNELS_CUH */
