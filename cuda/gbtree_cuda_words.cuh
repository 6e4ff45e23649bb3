/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_words.cuh
 *	  The device's in-page search on pages of multi-word keys (src/README,
 *	  "Multi-word keys"): one warp, the same two counts as the CPU's
 *	  gbt_node_lower_bound_entry_words, over the parallel word arrays.
 *
 * The directory step gives each of the 32 lanes one directory entry, the
 * block step 16 lanes one slot each; a lane compares its key with the
 * probe word by word (the last word decides ties of all the others), and
 * a ballot counts the keys below.  Each word's array is read with one
 * coalesced load per step.  Ties on the whole key are then broken by TID
 * over the run of equal keys, 32 TIDs a ballot.  Gaps copy the next used
 * slot, so every array is non-decreasing and the counts are lower bounds,
 * as on the CPU.
 *
 * cuda/test/test_words.cu checks it against node.c on random pages;
 * gbtree_cuda_wlookup.cu's lookups descend and walk with it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_CUDA_WORDS_CUH
#define GBTREE_CUDA_WORDS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

extern "C"
{
#include "gbtree_node.h"
}

#define GBT_WORDS_FULL_MASK 0xFFFFFFFFu

/* A multi-word page's arrays, as gbt_node_view_words lays them out. */
struct WordsPage
{
	const uint64_t *w[GBT_MAX_KEY_WORDS];	/* each word's slots */
	const uint64_t *d[GBT_MAX_KEY_WORDS];	/* each word's directory */
	const uint64_t *tids;
	const uint64_t *xb;			/* words 1.. of the high key, then the low key's */
	int			nslots;
	int			nblocks;
	int			nwords;
};

static __device__ __forceinline__ int
words_slots(int nwords, bool leaf)
{
	if (leaf)
		return nwords <= 1 ? 480 : nwords == 2 ? 304 : nwords == 3 ? 224 : 176;
	return nwords <= 1 ? 384 : nwords == 2 ? 256 : nwords == 3 ? 192 : 160;
}

/* pages written before GBT_F_DIRFIT (gbt_words_slots_dir32) */
static __device__ __forceinline__ int
words_slots_dir32(int nwords, bool leaf)
{
	if (leaf)
		return nwords <= 1 ? 480 : nwords == 2 ? 304 : nwords == 3 ? 208 : 160;
	return nwords <= 1 ? 384 : nwords == 2 ? 256 : nwords == 3 ? 192 : 144;
}

/*
 * A page with tails (GBT_F_TAILS) has fewer slots, its arrays laid out
 * alike; the device searches its words and TIDs and leaves the tails to
 * the CPU (src/README, "What is left", item 4).  As gbt_words_slots_of.
 */
static __device__ __forceinline__ int
words_flags_slots(uint16_t flags, int nwords, bool leaf)
{
	if (flags & GBT_F_TAILS)
		return (flags & GBT_F_TAILS_FEW) ?
			(leaf ? GBT_TAIL_FEW_LEAF_SLOTS : GBT_TAIL_FEW_INNER_SLOTS) :
			(leaf ? GBT_TAIL_LEAF_SLOTS : GBT_TAIL_INNER_SLOTS);
	if (flags & GBT_F_DIRFIT)
		return words_slots(nwords, leaf);
	return words_slots_dir32(nwords, leaf);
}

static __device__ __forceinline__ int
words_page_slots(const char *pg, int nwords, bool leaf)
{
	const GbtPageOpaqueData *op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);

	return words_flags_slots(op->flags, nwords, leaf);
}

/* entries of each later word's directory (gbt_xdir_entries) */
static __device__ __forceinline__ int
words_xdir_entries(const char *pg, int ns)
{
	const GbtPageOpaqueData *op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);

	return (op->flags & GBT_F_DIRFIT) && ns <= 16 * GBT_BLOCK_SLOTS ? 16 : GBT_DIR_SIZE;
}

static __device__ __forceinline__ WordsPage
words_page(const char *pg, int nwords, bool leaf)
{
	WordsPage	p;
	int			ns = words_page_slots(pg, nwords, leaf);
	size_t		off = GBT_BODY_OFFSET;

	p.nslots = ns;
	p.nblocks = ns / GBT_BLOCK_SLOTS;
	p.nwords = nwords;
	p.w[0] = (const uint64_t *) (pg + off);
	off += 8 * (size_t) ns;
	p.tids = (const uint64_t *) (pg + off);
	off += 8 * (size_t) ns;
	if (!leaf)
		off += 4 * (size_t) ns;
	p.d[0] = (const uint64_t *) (pg + off);
	off += GBT_DIR_SIZE * 8 + GBT_BITMAP_WORDS * 8;
	for (int k = 1; k < nwords; k++)
	{
		p.w[k] = (const uint64_t *) (pg + off);
		off += 8 * (size_t) ns;
	}
	for (int k = 1; k < nwords; k++)
	{
		p.d[k] = (const uint64_t *) (pg + off);
		off += 8 * (size_t) words_xdir_entries(pg, ns);
	}
	p.xb = (const uint64_t *) (pg + off);
	return p;
}

/* is the key at index i of arrays a[] below x (inclusive: at or below)? */
static __device__ __forceinline__ bool
words_below(const uint64_t *const *a, int i, const uint64_t *x, int nwords, bool inclusive)
{
	int			k = nwords - 1;
	uint64_t	v = __ldg(&a[k][i]);
	bool		below = inclusive ? v <= x[k] : v < x[k];

	for (k = nwords - 2; k >= 0; k--)
	{
		v = __ldg(&a[k][i]);
		below = v < x[k] || (v == x[k] && below);
	}
	return below;
}

/* slots whose key is below x: directory, then one block (whole warp) */
static __device__ __forceinline__ int
words_bound(const WordsPage &p, const uint64_t *x, bool inclusive)
{
	int			lane = threadIdx.x & 31;
	/* a later word's directory may hold only 16 entries: read the blocks' */
	bool		below = lane < p.nblocks && words_below(p.d, lane, x, p.nwords, inclusive);
	int			b = __popc(__ballot_sync(GBT_WORDS_FULL_MASK, below));

	if (b >= p.nblocks)
		return p.nslots;
	below = lane < GBT_BLOCK_SLOTS &&
		words_below(p.w, b * GBT_BLOCK_SLOTS + (lane & (GBT_BLOCK_SLOTS - 1)), x, p.nwords,
					inclusive);
	return b * GBT_BLOCK_SLOTS + __popc(__ballot_sync(GBT_WORDS_FULL_MASK, below));
}

/*
 * The first slot whose (key, tid) is >= (x, tid), as the CPU's
 * gbt_node_lower_bound_entry_words; every lane of the warp calls it and
 * gets the answer.
 */
static __device__ __forceinline__ int
words_lower_bound_entry(const WordsPage &p, const uint64_t *x, uint64_t tid)
{
	int			lane = threadIdx.x & 31;
	int			lo = words_bound(p, x, false);
	int			hi;
	bool		eq = true;
	int			n = 0;

	if (lo >= p.nslots)
		return lo;
	for (int k = 0; k < p.nwords; k++)
		eq = eq && __ldg(&p.w[k][lo]) == x[k];
	if (!eq)
		return lo;
	hi = words_bound(p, x, true);
	/* TIDs are non-decreasing over the run: count those below tid */
	for (int base = lo; base < hi; base += 32)
	{
		int			s = base + lane;
		bool		below = s < hi && __ldg(&p.tids[s]) < tid;

		n += __popc(__ballot_sync(GBT_WORDS_FULL_MASK, below));
	}
	return lo + n;
}

#endif							/* GBTREE_CUDA_WORDS_CUH */
