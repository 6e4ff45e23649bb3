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

#include <stdlib.h>

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
 * Keys are nw words (src/README, "Multi-word keys"); a one-word tree is
 * the case nw = 1.  High and low keys keep their later words in the body
 * (GbtNode.xbounds).  A match of a multi-word walk hands over the slot's
 * words.
 */
typedef void (*GbtWalkWordsMatchFn) (void *arg, const uint64_t *key, uint64_t tid);

/* (k1, t1) < (k2, t2), keys of nw words */
static inline bool
gbt_wentry_lt(const uint64_t *k1, uint64_t t1, const uint64_t *k2, uint64_t t2, int nw)
{
	for (int i = 0; i < nw; i++)
		if (k1[i] != k2[i])
			return k1[i] < k2[i];
	return t1 < t2;
}

/* a multi-word page's high (high) or low key, all its words */
static inline void
gbt_walk_bound_words(const GbtNode *node, bool high, uint64_t *key, uint64_t *tid)
{
	key[0] = high ? node->opaque->hikey : node->opaque->lowkey;
	for (int i = 1; i < node->nwords; i++)
		key[i] = node->xbounds[(high ? 0 : node->nwords - 1) + i - 1];
	*tid = high ? node->opaque->hitid : node->opaque->lowtid;
}

/* the slot's key, all its words */
static inline void
gbt_walk_slot_words(const GbtNode *node, int s, uint64_t *key)
{
	key[0] = node->keys[s];
	for (int i = 1; i < node->nwords; i++)
		key[i] = node->xkeys[i - 1][s];
}

/*
 * The leaf where (key, tid) belongs, from root, in a tree of nw-word keys:
 * 0 with the leaf in *leaf, or -1 on an inconsistent page.  parent, when
 * not NULL, gets the last inner page the descent went down from
 * (GBT_NO_BLOCK when the root is the leaf), for callers that split or
 * unlink the leaf.
 */
static inline int
gbt_walk_descend_words(const char *img, uint32_t nblocks, uint32_t root, int nw,
					   const uint64_t *key, uint64_t tid, uint32_t *leaf, uint32_t *parent)
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
		uint64_t	bk[GBT_MAX_KEY_WORDS],
					bt;
		int			s;

		if (blk >= nblocks)
			return -1;
		page = gbt_walk_page(img, blk);
		op = gbt_page_opaque(page);
		if (op->page_id != GBT_PAGE_ID || (op->flags & GBT_F_META) ||
			gbt_page_nwords(op) != nw ||
			(expect >= 0 && op->level != expect) || ++hops > GBT_WALK_MAX_DESCENT_HOPS)
			return -1;
		gbt_node_view(page, &node);
		gbt_walk_bound_words(&node, true, bk, &bt);

		/*
		 * A tailed page's high key may end in a tail this walk does not see
		 * (a truncated separator, TID 0): entries of its words, below it by
		 * their tails, stay on this page, so only greater words move right.
		 */
		if (op->flags & GBT_F_TAILS)
			bt = UINT64_MAX;
		if ((op->flags & GBT_F_DELETED) ||
			(!(op->flags & GBT_F_RIGHTMOST) && !gbt_wentry_lt(key, tid, bk, bt, nw)))
		{
			if (op->rightlink == GBT_NO_BLOCK || op->rightlink == blk)
				return -1;
			expect = op->level;
			blk = op->rightlink;
			continue;
		}
		gbt_walk_bound_words(&node, false, bk, &bt);
		if (gbt_wentry_lt(key, tid, bk, bt, nw))
			return -1;
		if (op->flags & GBT_F_LEAF)
		{
			*leaf = blk;
			return 0;
		}
		/* the child of the last used slot below (key, tid), else the first */
		s = gbt_node_prev_used(&node, gbt_node_lower_bound_entry_words(&node, key, tid));
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

/* The same in a tree of one-word keys. */
static inline int
gbt_walk_descend(const char *img, uint32_t nblocks, uint32_t root,
				 uint64_t key, uint64_t tid, uint32_t *leaf, uint32_t *parent)
{
	return gbt_walk_descend_words(img, nblocks, root, 1, &key, tid, leaf, parent);
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

/*
 * gbt_walk_range for a tree of nw-word keys (plain leaves only: the
 * posting form has no multi-word layout yet): the entries e with
 * (lo, lo_tid) <= e < (hi, hi_tid), in order, handed to match when not
 * NULL; their number, or -1 on an inconsistent page.
 */
static inline int64_t
gbt_walk_range_words(const char *img, uint32_t nblocks, uint32_t root, int nw,
					 const uint64_t *lo, uint64_t lo_tid, const uint64_t *hi, uint64_t hi_tid,
					 GbtWalkWordsMatchFn match, void *arg)
{
	uint32_t	blk;
	bool		firstpage = true;
	int64_t		n = 0;

	if (!gbt_wentry_lt(lo, lo_tid, hi, hi_tid, nw))
		return 0;
	if (gbt_walk_descend_words(img, nblocks, root, nw, lo, lo_tid, &blk, NULL) != 0)
		return -1;
	for (uint64_t hops = 0;; hops++)
	{
		char	   *page;
		GbtPageOpaque op;
		GbtNode		node;
		uint64_t	k[GBT_MAX_KEY_WORDS],
					t;
		int			s;

		if (hops > (uint64_t) nblocks + 10 || blk >= nblocks)
			return -1;
		page = gbt_walk_page(img, blk);
		op = gbt_page_opaque(page);
		if (op->page_id != GBT_PAGE_ID || !(op->flags & GBT_F_LEAF) || gbt_page_nwords(op) != nw)
			return -1;
		gbt_node_view(page, &node);
		if (!(op->flags & GBT_F_DELETED))
		{
			s = firstpage ? gbt_node_lower_bound_entry_words(&node, lo, lo_tid) : 0;
			for (s = gbt_node_next_used(&node, s); s < node.nslots;
				 s = gbt_node_next_used(&node, s + 1))
			{
				gbt_walk_slot_words(&node, s, k);
				if (!gbt_wentry_lt(k, node.tids[s], hi, hi_tid, nw))
					return n;
				if (match)
					match(arg, k, node.tids[s]);
				n++;
			}
			gbt_walk_bound_words(&node, true, k, &t);
			if ((op->flags & GBT_F_RIGHTMOST) || !gbt_wentry_lt(k, t, hi, hi_tid, nw))
				return n;
		}
		blk = op->rightlink;
		firstpage = false;
	}
}

/*
 * The model of a built multi-word tree, for the tests of the walk and of
 * the kernels: sorted entries (nw words and the TID each) laid out
 * bottom-up, as build.c lays out one-word pages, each page filled to pct
 * percent of its slots, with right- and left-links, high and low keys,
 * and minus infinity as the first separator of each level's first page.
 * Blocks are numbered from GBT_FIRST_FREE_BLKNO in img (the fixed blocks
 * before it stay unused), which must hold
 * gbt_walk_words_max_pages(n, nw, pct) pages; returns the root's block
 * and sets *nblocks.  Plain malloc for each level's separators.
 */
static inline size_t
gbt_walk_words_max_pages(size_t n, int nw, int pct)
{
	size_t		total = GBT_FIRST_FREE_BLKNO,
				m = n;
	bool		leaf = true;

	for (;;)
	{
		size_t		cap = gbt_fill_slots(leaf ? gbt_leaf_slots_for(nw) : gbt_inner_slots_for(nw), pct);
		size_t		pages = m == 0 ? 1 : (m + cap - 1) / cap;

		total += pages;
		if (pages == 1)
			return total;
		m = pages;
		leaf = false;
	}
}

static inline uint32_t
gbt_walk_build_words(char *img, const uint64_t *e, size_t n, int nw, int pct, uint32_t *nblocks)
{
	const int	stride = nw + 1;
	const uint64_t *level = e;	/* this level's entries */
	uint32_t   *child = NULL;	/* and their children, above the leaves */
	uint64_t   *owned = NULL;
	uint32_t	next = GBT_FIRST_FREE_BLKNO;	/* as in an index: no link below */
	uint16_t	lev = 0;

	for (;;)
	{
		bool		leaf = lev == 0;
		size_t		cap = gbt_fill_slots(leaf ? gbt_leaf_slots_for(nw) : gbt_inner_slots_for(nw), pct);
		size_t		npages = n == 0 ? 1 : (n + cap - 1) / cap;
		uint32_t	first = next;
		uint64_t   *up = (uint64_t *) malloc(sizeof(uint64_t) * stride * npages);
		uint32_t   *upchild = (uint32_t *) malloc(sizeof(uint32_t) * npages);
		uint64_t	keys[GBT_MAX_SLOT_WORDS],
					tids[GBT_MAX_SLOTS];
		uint32_t	ch[GBT_MAX_SLOTS];

		for (size_t p = 0; p < npages; p++)
		{
			char	   *page = gbt_walk_page(img, first + (uint32_t) p);
			size_t		from = p * n / npages,
						to = (p + 1) * n / npages;
			int			k = (int) (to - from);
			GbtNode		node;
			GbtPageOpaque op;

			for (int i = 0; i < k; i++)
			{
				memcpy(&keys[i * nw], &level[(from + i) * stride], sizeof(uint64_t) * nw);
				tids[i] = level[(from + i) * stride + nw];
				ch[i] = leaf ? 0 : child[from + i];
			}
			if (!leaf && p == 0 && k > 0)
			{
				memset(keys, 0, sizeof(uint64_t) * nw);
				tids[0] = 0;
			}
			memset(page, 0, GBT_PAGE_SIZE);
			gbt_node_format_words(page, leaf, lev, 0, nw);
			gbt_node_view(page, &node);
			gbt_node_load_spread(&node, k, keys, tids, leaf ? NULL : ch, true);
			op = node.opaque;
			op->leftlink = p == 0 ? GBT_NO_BLOCK : first + (uint32_t) p - 1;
			if (p > 0)
			{
				op->lowkey = level[from * stride];
				op->lowtid = level[from * stride + nw];
				for (int w = 1; w < nw; w++)
					node.xbounds[nw - 1 + w - 1] = level[from * stride + w];
			}
			if (p + 1 < npages)
			{
				op->rightlink = first + (uint32_t) p + 1;
				op->hikey = level[to * stride];
				op->hitid = level[to * stride + nw];
				for (int w = 1; w < nw; w++)
					node.xbounds[w - 1] = level[to * stride + w];
			}
			else
			{
				op->rightlink = GBT_NO_BLOCK;
				op->flags |= GBT_F_RIGHTMOST;
			}
			if (npages == 1)
				op->flags |= GBT_F_ROOT;
			/* the parent's separator: the page's first entry */
			if (k > 0)
				memcpy(&up[p * stride], &level[from * stride], sizeof(uint64_t) * stride);
			else
				memset(&up[p * stride], 0, sizeof(uint64_t) * stride);
			upchild[p] = first + (uint32_t) p;
		}
		next = first + (uint32_t) npages;
		free(owned);
		free(child);
		if (npages == 1)
		{
			free(up);
			free(upchild);
			*nblocks = next;
			return first;
		}
		owned = up;
		level = up;
		child = upchild;
		n = npages;
		lev++;
	}
}

#endif							/* GBTREE_WALK_H */
