/*-------------------------------------------------------------------------
 *
 * gbtree_walk.h
 *	  The reference descent and leaf walk over raw page images, in plain C.
 *
 * The CPU stand-in for the CUDA library (test/gpu/emu) answers lookups
 * with these, and the CUDA tests (cuda/test/tree_model.h) check the
 * kernels' answers against them, so the two cannot drift apart.  Pages
 * are the 8 KB images of an index addressed by block number, img holding
 * nblocks of them, as in a device copy.  The descent is Lehman and Yao's
 * with the checks the kernels make; a page that fails them (or a loop)
 * makes a walk return -1, where the kernels report GBT_CUDA_ECORRUPT.
 *
 * Header-only: link with node.c (the in-page searches).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_WALK_H
#define GBTREE_WALK_H

#include "gbtree_node.h"

/* more hops than any real descent makes: a right-link loop */
#define GBT_WALK_MAX_DESCENT_HOPS	1000000

/* a match of a walk, handed over in (key, TID) order */
typedef void (*GbtWalkMatchFn) (void *arg, uint64_t key, uint64_t tid);

static inline char *
gbt_walk_page(const char *img, uint32_t blk)
{
	return (char *) img + (size_t) blk * GBT_PAGE_SIZE;
}

/*
 * The leaf where (key, tid) belongs, from root: 0 with the leaf in *leaf,
 * or -1 on an inconsistent page.  parent, when not NULL, gets the last
 * inner page the descent went down from (GBT_NO_BLOCK when the root is
 * the leaf), for callers that split or unlink the leaf.
 */
static inline int
gbt_walk_descend(const char *img, uint32_t nblocks, uint32_t root,
				 uint64_t key, uint64_t tid, uint32_t *leaf, uint32_t *parent)
{
	uint32_t	blk = root;
	int			expect = -1;
	long		hops = 0;

	if (parent)
		*parent = GBT_NO_BLOCK;
	for (;;)
	{
		char	   *page;
		GbtPageOpaque op;
		GbtNode		node;
		int			s;

		if (blk >= nblocks)
			return -1;
		page = gbt_walk_page(img, blk);
		op = gbt_page_opaque(page);
		if (op->page_id != GBT_PAGE_ID || (op->flags & GBT_F_META) ||
			(expect >= 0 && op->level != expect) || ++hops > GBT_WALK_MAX_DESCENT_HOPS)
			return -1;
		if ((op->flags & GBT_F_DELETED) ||
			(!(op->flags & GBT_F_RIGHTMOST) && !gbt_entry_lt(key, tid, op->hikey, op->hitid)))
		{
			if (op->rightlink == GBT_NO_BLOCK || op->rightlink == blk)
				return -1;
			expect = op->level;
			blk = op->rightlink;
			continue;
		}
		if (gbt_entry_lt(key, tid, op->lowkey, op->lowtid))
			return -1;
		if (op->flags & GBT_F_LEAF)
		{
			*leaf = blk;
			return 0;
		}

		/* the child of the last used slot below (key, tid), else the first */
		gbt_node_view(page, &node);
		s = gbt_node_prev_used(&node, gbt_node_lower_bound_entry(&node, key, tid));
		if (s < 0)
			s = gbt_node_first_used(&node);
		if (s >= node.nslots || node.child[s] == GBT_NO_BLOCK ||
			node.child[s] < GBT_FIRST_FREE_BLKNO)
			return -1;
		if (parent)
			*parent = blk;
		expect = op->level - 1;
		blk = node.child[s];
	}
}

/*
 * The entries e with (lo_key, lo_tid) <= e < (hi_key, hi_tid), in order:
 * each handed to match (when not NULL) as the leaf chain is walked from
 * the descent's leaf.  Returns their number, or -1 on an inconsistent
 * page (after handing over the matches found before it).
 */
static inline int64_t
gbt_walk_range(const char *img, uint32_t nblocks, uint32_t root,
			   uint64_t lo_key, uint64_t lo_tid, uint64_t hi_key, uint64_t hi_tid,
			   GbtWalkMatchFn match, void *arg)
{
	uint32_t	blk;
	bool		firstpage = true;
	int64_t		n = 0;

	if (!gbt_entry_lt(lo_key, lo_tid, hi_key, hi_tid))
		return 0;
	if (gbt_walk_descend(img, nblocks, root, lo_key, lo_tid, &blk, NULL) != 0)
		return -1;
	for (uint64_t hops = 0;; hops++)
	{
		char	   *page;
		GbtPageOpaque op;
		GbtNode		node;
		int			s;

		if (hops > (uint64_t) nblocks + 10 || blk >= nblocks)
			return -1;
		page = gbt_walk_page(img, blk);
		op = gbt_page_opaque(page);
		if (op->page_id != GBT_PAGE_ID || !(op->flags & GBT_F_LEAF))
			return -1;
		if (op->flags & GBT_F_DELETED)
		{
			blk = op->rightlink;
			continue;
		}
		if (op->flags & GBT_F_POSTING)
		{
			GbtPost		p;
			int			g = 0;

			gbt_post_view(page, &p);
			s = firstpage ? gbt_post_lower_bound_entry(&p, lo_key, lo_tid) : 0;
			for (; s < p.hdr->nentries; s++)
			{
				uint64_t	t = gbt_post_tid(&p, s);

				while (g < p.hdr->ngroups && p.start[g + 1] <= s)
					g++;
				if (!gbt_entry_lt(p.keys[g], t, hi_key, hi_tid))
					return n;
				if (match)
					match(arg, p.keys[g], t);
				n++;
			}
			goto next_page;
		}
		gbt_node_view(page, &node);
		s = firstpage ? gbt_node_lower_bound_entry(&node, lo_key, lo_tid) : 0;
		for (s = gbt_node_next_used(&node, s); s < node.nslots; s = gbt_node_next_used(&node, s + 1))
		{
			if (!gbt_entry_lt(node.keys[s], node.tids[s], hi_key, hi_tid))
				return n;
			if (match)
				match(arg, node.keys[s], node.tids[s]);
			n++;
		}
next_page:
		if ((op->flags & GBT_F_RIGHTMOST) || !gbt_entry_lt(op->hikey, op->hitid, hi_key, hi_tid))
			return n;
		blk = op->rightlink;
		firstpage = false;
	}
}

#endif							/* GBTREE_WALK_H */
