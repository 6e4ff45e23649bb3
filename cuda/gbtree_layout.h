/*-------------------------------------------------------------------------
 *
 * gbtree_layout.h
 *	  The page layout of a bulk-built tree, word by word: what build.c's
 *	  build_tree writes, computed for any 8-byte word of any page on its
 *	  own, so that the device can lay out all pages at once (one thread a
 *	  word).  Shared by the device sort (gbtree_cuda_sort.cu) and the CPU
 *	  stand-in of the CUDA library (test/gpu/emu), so CI checks the same
 *	  arithmetic against build_tree.  Plain C, or CUDA device code.
 *
 * Slot s of a page of cnt inputs and ns slots holds input
 * ceil(s * cnt / ns): build_tree spreads input i to slot floor(i * ns /
 * cnt) and fills each gap with the next used slot, so that is the first
 * input placed at or after s; the slot is used when the input lands on it
 * exactly.  Slots past the last input hold the sentinel.  Input j of an
 * inner level is the first input of page j of the level below, so it is
 * the entry found by applying "first input of page" down to the leaves.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_LAYOUT_H
#define GBTREE_LAYOUT_H

#include <string.h>

#include "gbtree_node.h"

#ifdef __CUDACC__
#define GBT_LAYOUT_FN __device__ static inline
#else
#define GBT_LAYOUT_FN static inline
#endif

#define GBT_LAYOUT_PAGE_WORDS	(GBT_PAGE_SIZE / 8)

/* Where a page of the build order lies and what it holds */
typedef struct GbtLayoutPage
{
	int			level;
	uint64_t	p;				/* page within its level */
	uint64_t	np;				/* pages of the level */
	uint64_t	from;			/* first input */
	uint64_t	cnt;			/* inputs */
	uint32_t	blk;
	int			ns;				/* slots */
	int			top;
} GbtLayoutPage;

/*
 * Whether pages [first, first + count) of plan can be laid out from n
 * sorted entries: NULL if so, else why not.  Host code (both libraries).
 */
static inline const char *
gbt_layout_check(const GbtCudaTreePlan *plan, uint64_t n, uint64_t first, uint64_t count)
{
	uint64_t	total = 0;

	if (plan == NULL || plan->n != n || plan->nlevels < 1 ||
		plan->nlevels > GBT_CUDA_MAX_LEVELS || plan->npages[plan->nlevels - 1] != 1)
		return "sort_layout: the plan does not fit the sort";
	for (uint32_t l = 0; l < plan->nlevels; l++)
		total += plan->npages[l];
	if (first > total || count > total - first)
		return "sort_layout: pages outside the tree";
	return NULL;
}

/* Index into the sorted entries of input j of level level. */
GBT_LAYOUT_FN uint64_t
gbt_layout_entry(const GbtCudaTreePlan *plan, int level, uint64_t j)
{
	for (int l = level - 1; l >= 0; l--)
	{
		uint64_t	nin = (l == 0) ? plan->n : plan->npages[l - 1];

		j = nin * j / plan->npages[l];
	}
	return j;
}

/* Page j of the build order: leaves left to right, then each level up. */
GBT_LAYOUT_FN void
gbt_layout_locate(const GbtCudaTreePlan *plan, uint64_t j, GbtLayoutPage *lp)
{
	int			level = 0;
	uint64_t	nin;

	while (level < (int) plan->nlevels - 1 && j >= plan->npages[level])
		j -= plan->npages[level++];
	nin = (level == 0) ? plan->n : plan->npages[level - 1];
	lp->level = level;
	lp->p = j;
	lp->np = plan->npages[level];
	lp->from = nin * j / lp->np;
	lp->cnt = nin * (j + 1) / lp->np - lp->from;
	lp->top = (level == (int) plan->nlevels - 1);
	lp->blk = lp->top ? plan->root_blkno : plan->first_blkno[level] + (uint32_t) j;
	lp->ns = (level == 0) ? GBT_LEAF_SLOTS : GBT_INNER_SLOTS;
}

/* Slot s: whether used, and its key, TID and child block. */
GBT_LAYOUT_FN int
gbt_layout_slot(const GbtCudaTreePlan *plan, const GbtLayoutPage *lp, const uint64_t *keys,
				const uint64_t *tids, int s, uint64_t *key, uint64_t *tid, uint32_t *child)
{
	uint64_t	i = ((uint64_t) s * lp->cnt + lp->ns - 1) / lp->ns;
	uint64_t	e;

	*child = 0;
	if (i >= lp->cnt)
	{
		*key = GBT_SENTINEL;
		*tid = GBT_SENTINEL;
		return 0;
	}
	if (lp->level > 0)
		*child = plan->first_blkno[lp->level - 1] + (uint32_t) (lp->from + i);
	if (lp->level > 0 && lp->p == 0 && i == 0)
	{
		/* the leftmost page of an inner level starts at minus infinity */
		*key = 0;
		*tid = 0;
	}
	else
	{
		e = gbt_layout_entry(plan, lp->level, lp->from + i);
		*key = keys[e];
		*tid = tids[e];
	}
	return i * lp->ns / lp->cnt == (uint64_t) s;
}

GBT_LAYOUT_FN void
gbt_layout_opaque(const GbtCudaTreePlan *plan, const GbtLayoutPage *lp, const uint64_t *keys,
				  const uint64_t *tids, GbtPageOpaqueData *op)
{
	memset(op, 0, sizeof(*op));
	op->level = (uint16_t) lp->level;
	op->flags = (uint16_t) (plan->tree_flags | (lp->level == 0 ? GBT_F_LEAF : 0) |
							(lp->top ? GBT_F_ROOT : 0));
	op->nused = (uint16_t) lp->cnt;
	op->nslots = (uint16_t) lp->ns;
	op->page_id = GBT_PAGE_ID;
	op->leftlink = lp->p == 0 ? GBT_NO_BLOCK : lp->blk - 1;
	if (lp->p > 0)
	{
		uint64_t	e = gbt_layout_entry(plan, lp->level, lp->from);

		op->lowkey = keys[e];
		op->lowtid = tids[e];
	}
	if (lp->p + 1 < lp->np)
	{
		uint64_t	e = gbt_layout_entry(plan, lp->level, lp->from + lp->cnt);

		op->rightlink = lp->blk + 1;
		op->hikey = keys[e];
		op->hitid = tids[e];
	}
	else
	{
		op->rightlink = GBT_NO_BLOCK;
		op->flags |= GBT_F_RIGHTMOST;
		op->hikey = GBT_SENTINEL;
		op->hitid = GBT_SENTINEL;
	}
}

/* 8-byte word w of the page. */
GBT_LAYOUT_FN uint64_t
gbt_layout_word(const GbtCudaTreePlan *plan, const GbtLayoutPage *lp, const uint64_t *keys,
				const uint64_t *tids, int w)
{
	int			leaf = (lp->level == 0);
	int			keys_w = (leaf ? GBT_LEAF_KEYS_OFF : GBT_INNER_KEYS_OFF) / 8;
	int			tids_w = (leaf ? GBT_LEAF_TIDS_OFF : GBT_INNER_TIDS_OFF) / 8;
	int			child_w = GBT_INNER_CHILD_OFF / 8;
	int			dir_w = (leaf ? GBT_LEAF_DIR_OFF : GBT_INNER_DIR_OFF) / 8;
	int			used_w = (leaf ? GBT_LEAF_USED_OFF : GBT_INNER_USED_OFF) / 8;
	int			opaque_w = GBT_OPAQUE_OFFSET / 8;
	uint64_t	k,
				t,
				v = 0;
	uint32_t	c,
				c2;

	if (w < GBT_BODY_OFFSET / 8)
	{
		memcpy(&v, plan->header[leaf ? 0 : 1] + 8 * w, 8);
		return v;
	}
	if (w >= keys_w && w < keys_w + lp->ns)
	{
		gbt_layout_slot(plan, lp, keys, tids, w - keys_w, &k, &t, &c);
		return k;
	}
	if (w >= tids_w && w < tids_w + lp->ns)
	{
		gbt_layout_slot(plan, lp, keys, tids, w - tids_w, &k, &t, &c);
		return t;
	}
	if (!leaf && w >= child_w && w < child_w + lp->ns / 2)
	{
		int			s = 2 * (w - child_w);

		gbt_layout_slot(plan, lp, keys, tids, s, &k, &t, &c);
		gbt_layout_slot(plan, lp, keys, tids, s + 1, &k, &t, &c2);
		return (uint64_t) c | ((uint64_t) c2 << 32);
	}
	if (w >= dir_w && w < dir_w + GBT_DIR_SIZE)
	{
		int			b = w - dir_w;

		if (b >= lp->ns / GBT_BLOCK_SLOTS)
			return GBT_SENTINEL;
		gbt_layout_slot(plan, lp, keys, tids, b * GBT_BLOCK_SLOTS + GBT_BLOCK_SLOTS - 1,
						&k, &t, &c);
		return k;
	}
	if (w >= used_w && w < used_w + GBT_BITMAP_WORDS)
	{
		int			base = (w - used_w) * 64;

		for (int b = 0; b < 64 && base + b < lp->ns; b++)
		{
			uint64_t	i = ((uint64_t) (base + b) * lp->cnt + lp->ns - 1) / lp->ns;

			if (i < lp->cnt && i * lp->ns / lp->cnt == (uint64_t) (base + b))
				v |= UINT64_C(1) << b;
		}
		return v;
	}
	if (w >= opaque_w)
	{
		GbtPageOpaqueData op;

		gbt_layout_opaque(plan, lp, keys, tids, &op);
		memcpy(&v, (const char *) &op + 8 * (w - opaque_w), 8);
		return v;
	}
	return 0;
}

#endif							/* GBTREE_LAYOUT_H */
