/*-------------------------------------------------------------------------
 *
 * gbtree_tailwalk.h
 *	  Trees of multi-word keys whose entries carry tails (GBT_F_TAILS
 *	  pages, gbtree_node.h), in plain C: their bottom-up layout, descent
 *	  and range walk over raw page images, as gbtree_walk.h has them for
 *	  pages of words alone.
 *
 * An entry is (words, tail, TID), ordered so (gbt_tentry_cmp); tails are
 * given as GbtTail beside the words-and-TID entries of gbtree_walk.h.  A
 * tree mixes pages of words alone, where no entry or bound has a tail
 * (they keep their full count of slots), and tailed pages, cut by slots
 * and by bytes: a page holds its entries' tails
 * and its bounds' (the low key is its first entry, the high key the next
 * page's first), each level's first page starting from the separator
 * (zero words, the tail {0}, TID 0), below every entry, since no tail an
 * entry carries is a prefix of {0} or below it (src/README, "What is
 * left", item 4).  These are the models that the index's build, scans
 * and the kernels' tie handling are to be checked against
 * (test/unit/test_node.c).
 *
 * Header-only: link with node.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_TAILWALK_H
#define GBTREE_TAILWALK_H

#include "gbtree_walk.h"
#include "gbtree_wsort.h"

/*
 * gbt_tail_build's allocations: plain malloc in the unit tests; the
 * index's build defines these to palloc's, which report running out of
 * memory as an error.
 */
#ifndef GBT_TAILWALK_ALLOC
#define GBT_TAILWALK_ALLOC(size) malloc(size)
#define GBT_TAILWALK_FREE(ptr) free(ptr)
#endif

/* the tail of each level's first separator: below every entry's tail */
static const unsigned char gbt_tail_minus_inf[1] = {0};

typedef void (*GbtWalkTailMatchFn) (void *arg, const uint64_t *key, GbtTail tail,
									uint64_t tid);

/* (k1, tail1, t1) against (k2, tail2, t2), keys of nw words */
static inline int
gbt_tentry_cmp(const uint64_t *k1, GbtTail tail1, uint64_t t1,
			   const uint64_t *k2, GbtTail tail2, uint64_t t2, int nw)
{
	int			c;

	for (int i = 0; i < nw; i++)
		if (k1[i] != k2[i])
			return k1[i] < k2[i] ? -1 : 1;
	c = gbt_tail_cmp(tail1.data, tail1.len, tail2.data, tail2.len);
	if (c != 0)
		return c;
	return t1 < t2 ? -1 : t1 > t2 ? 1 : 0;
}

/*
 * Sorting entries with tails, for a build: n entries of nw words, the TID
 * and the index of the entry's tail in tails shifted left 16 (stride
 * nw + 2), ordered by (words, tail, TID).  gbt_wsort orders them by
 * (words, TID), the tail's index riding as the last word; then each run
 * of equal words that holds a tail is merge-sorted by (tail, TID).
 * scratch holds n entries, hist gbt_wsort_hist_size(nw + 1).
 */
static inline int
gbt_tail_sort_cmp(const uint64_t *a, const uint64_t *b, int nw, const GbtTail *tails)
{
	const GbtTail *ta = &tails[a[nw + 1] >> 16],
			   *tb = &tails[b[nw + 1] >> 16];
	int			c = gbt_tail_cmp(ta->data, ta->len, tb->data, tb->len);

	if (c != 0)
		return c;
	return a[nw] < b[nw] ? -1 : a[nw] > b[nw] ? 1 : 0;
}

static inline void
gbt_tail_sort_run(uint64_t *e, uint64_t *scratch, size_t n, int nw, const GbtTail *tails)
{
	const int	stride = nw + 2;
	uint64_t   *src = e,
			   *dst = scratch;

	for (size_t width = 1; width < n; width *= 2)
	{
		for (size_t lo = 0; lo < n; lo += 2 * width)
		{
			size_t		mid = lo + width < n ? lo + width : n,
						hi = lo + 2 * width < n ? lo + 2 * width : n,
						i = lo,
						j = mid,
						k = lo;

			while (i < mid && j < hi)
			{
				if (gbt_tail_sort_cmp(&src[j * stride], &src[i * stride], nw, tails) < 0)
					memcpy(&dst[k++ * stride], &src[j++ * stride], sizeof(uint64_t) * stride);
				else
					memcpy(&dst[k++ * stride], &src[i++ * stride], sizeof(uint64_t) * stride);
			}
			memcpy(&dst[k * stride], &src[i * stride], sizeof(uint64_t) * stride * (mid - i));
			k += mid - i;
			memcpy(&dst[k * stride], &src[j * stride], sizeof(uint64_t) * stride * (hi - j));
		}
		{
			uint64_t   *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != e)
		memcpy(e, src, sizeof(uint64_t) * stride * n);
}

static inline void
gbt_tail_sort(uint64_t *e, uint64_t *scratch, size_t n, int nw, const GbtTail *tails,
			  size_t *hist)
{
	const int	stride = nw + 2;
	size_t		from = 0;

	gbt_wsort(e, scratch, n, nw + 1, hist, NULL);
	while (from < n)
	{
		size_t		to = from + 1;
		bool		tailed = tails[e[from * stride + nw + 1] >> 16].len > 0;

		while (to < n && memcmp(&e[to * stride], &e[from * stride], sizeof(uint64_t) * nw) == 0)
		{
			tailed |= tails[e[to * stride + nw + 1] >> 16].len > 0;
			to++;
		}
		if (tailed && to - from > 1)
			gbt_tail_sort_run(&e[from * stride], scratch, to - from, nw, tails);
		from = to;
	}
}

/*
 * The bound between entries (pk, pt, ptid) and (k, t, tid), t a tail:
 * the shortest key in the order above the one and at or below the other,
 * as nbtree truncates suffixes, so that bounds and downlinks carry a few
 * bytes of a long tail, often none.  k's words, TID 0 and a prefix of t:
 * none at all when that is already above the first entry and not above
 * the second, else the bytes through the first that differs from pt (the
 * words equal).  When neither works (the same words and tail), the second
 * entry itself.  Returns the tail's length and sets *septid.
 */
static inline int
gbt_tail_separator(const uint64_t *pk, GbtTail pt, uint64_t ptid, const uint64_t *k, GbtTail t,
				   uint64_t tid, int nw, uint64_t *septid)
{
	int			len;

	*septid = 0;
	if (gbt_tentry_cmp(pk, pt, ptid, k, GBT_NO_TAIL, 0, nw) < 0 &&
		gbt_tentry_cmp(k, GBT_NO_TAIL, 0, k, t, tid, nw) <= 0)
		return 0;
	len = 1;
	if (memcmp(pk, k, sizeof(uint64_t) * nw) == 0)
		while (len < t.len && len <= pt.len && t.data[len - 1] == pt.data[len - 1])
			len++;
	if (gbt_tentry_cmp(pk, pt, ptid, k, (GbtTail) {t.data, len}, 0, nw) < 0)
		return len;
	*septid = tid;
	return t.len;
}

/*
 * Bytes the tails of entries [from, to) of a level need on one page, with
 * the page's bounds: its low key is entry from's bound (bounds: unless it
 * is the level's first page, which on an inner level starts with the tail
 * {0} instead), its high key entry to's (unless it is the last).
 */
static inline int
gbt_tail_page_bytes(const GbtTail *tails, const GbtTail *bounds, size_t from, size_t to,
					size_t n, bool leaf)
{
	int			bytes = from > 0 ? gbt_tail_space(bounds[from].len) : 0;

	if (from == 0 && !leaf)
		bytes += gbt_tail_space(1) - gbt_tail_space(tails[0].len);
	for (size_t i = from; i < to; i++)
		bytes += gbt_tail_space(tails[i].len);
	if (to < n)
		bytes += gbt_tail_space(bounds[to].len);
	return bytes;
}

/*
 * Where the page that starts at entry from ends, and its layout (*layout:
 * 0 for words alone, else the tailed layout's flags).  A page whose entries and bounds have no tail is a page of
 * words alone, with its full count of slots (a tree's pages pay for tails
 * only where they hold them); otherwise as many entries as fit pct
 * percent of a tailed page's slots and tail area, in the layout, standard
 * or of few slots, that takes more of them, and at least two where
 * two are left (which always fit: gbt_tail_max).  bounds: each entry's
 * form as a page's bound.  A run without tails that ends where a tail
 * starts gives its last entries to the tailed page, so that the run's
 * page can end below the first tail (a page of words alone for each short
 * run between tails would hold few entries).
 */
static inline size_t
gbt_tail_page_cut(const GbtTail *tails, const GbtTail *bounds, size_t from, size_t n, bool leaf,
				  int nw, int pct, uint16_t *layout)
{
	size_t		cap = gbt_fill_slots(gbt_tail_slots(leaf, false), pct);
	size_t		wcap = gbt_fill_slots(leaf ? gbt_leaf_slots_for(nw) : gbt_inner_slots_for(nw), pct);
	size_t		to = from + 1,
				best = 0;

	if (cap < 2)
		cap = 2;
	if (wcap < 2)
		wcap = 2;
	*layout = 0;
	if (tails[from].len == 0)
	{
		while (to < n && to - from < wcap && tails[to].len == 0)
			to++;
		if (to == n || tails[to].len == 0)
			return to;
		if (to - from > cap)
			return to - cap / 2;
	}
	/* tailed: the layout, standard or of few slots, that takes more entries */
	for (int few = 0; few < 2; few++)
	{
		size_t		fcap = gbt_fill_slots(gbt_tail_slots(leaf, few), pct);
		int			budget = (GBT_OPAQUE_OFFSET - gbt_tail_start_few(leaf, nw, few)) * pct / 100;

		if (fcap < 2)
			fcap = 2;
		to = from + 1;
		while (to < n && to - from < fcap &&
			   gbt_tail_page_bytes(tails, bounds, from, to + 1, n, leaf) <= budget)
			to++;
		if (to > best)
		{
			best = to;
			*layout = GBT_F_TAILS | (few ? GBT_F_TAILS_FEW : 0);
		}
	}
	to = best;

	/*
	 * Two entries at least, past the fill percentage if need be (two and
	 * both bounds always fit: gbt_tail_max), so that each level has at
	 * most half the pages of the one below and the tree has a top.
	 */
	if (to - from < 2 && to < n)
		to++;
	return to;
}

/* a tailed page's high (high) or low key, with its tail */
static inline void
gbt_walk_bound_tail(const GbtNode *node, bool high, uint64_t *key, GbtTail *tail,
					uint64_t *tid)
{
	gbt_walk_bound_words(node, high, key, tid);
	*tail = gbt_node_bound_tail(node, high ? 0 : 1);
}

/*
 * Where a tree's pages go: page(arg, blk) gives the image to write block
 * blk into, format(arg, page, ...) makes it an empty page of nw-word keys
 * as gbt_node_format_words does, tailed when flags has GBT_F_TAILS (the
 * index adds PostgreSQL's page header), finish(arg, page) is called once
 * its entries and bounds are in (NULL: nothing to do).
 */
typedef struct GbtTailBuildOps
{
	char	   *(*page) (void *arg, uint32_t blk);
	void		(*format) (void *arg, char *page, bool leaf, uint16_t level, uint16_t flags,
						   int nw);
	void		(*finish) (void *arg, char *page);
	void	   *arg;
} GbtTailBuildOps;

/* what gbt_tail_build holds for a level (NULL: not held) */
static inline void
gbt_tail_build_free_level(size_t *cuts, uint16_t *tailed, uint64_t *owned, GbtTail *ownedtails,
						  uint32_t *child, GbtTail *leafbounds, uint64_t *leafbtids)
{
	GBT_TAILWALK_FREE(cuts);
	GBT_TAILWALK_FREE(tailed);
	if (owned)
		GBT_TAILWALK_FREE(owned);
	if (ownedtails)
		GBT_TAILWALK_FREE(ownedtails);
	if (child)
		GBT_TAILWALK_FREE(child);
	if (leafbounds)
		GBT_TAILWALK_FREE(leafbounds);
	if (leafbtids)
		GBT_TAILWALK_FREE(leafbtids);
}

/*
 * The layout of n sorted entries (e: words and TID, stride nw + 1; tails
 * beside them) as a tree of tailed pages, leaves first, each filled to its
 * level's percentage of slots and tail area: pages from *next on (which
 * it advances), the top page at rootblk (GBT_NO_BLOCK: at *next too),
 * treeflag on every page.  With ops NULL nothing is written and only the
 * blocks are counted, so that a caller can size its images.  Returns the
 * top page's block (GBT_NO_BLOCK if an inner level's page took one entry
 * only, which the cuts rule out).  Each level's cuts and separators are allocated by
 * GBT_TAILWALK_ALLOC.
 */
static inline uint32_t
gbt_tail_build(const GbtTailBuildOps *ops, uint32_t *next, uint32_t rootblk, uint16_t treeflag,
			   const uint64_t *e, const GbtTail *tails, size_t n, int nw, int leafpct,
			   int innerpct)
{
	const int	stride = nw + 1;
	const uint64_t *level = e;
	const GbtTail *ltails = tails;
	uint32_t   *child = NULL;
	uint64_t   *owned = NULL;
	GbtTail    *ownedtails = NULL;
	uint16_t	lev = 0;
	GbtTail    *leafbounds = NULL;
	uint64_t   *leafbtids = NULL;

	for (;;)
	{
		bool		leaf = lev == 0;
		size_t		npages = 0;
		uint32_t	first;
		uint64_t   *up;
		GbtTail    *uptails;
		uint32_t   *upchild;
		const GbtTail *bounds = ltails;
		const uint64_t *btids = NULL;

		/* cut the level: page p takes [cuts[p], cuts[p + 1]), tailed or not */
		size_t	   *cuts = (size_t *) GBT_TAILWALK_ALLOC(sizeof(size_t) * (n + 2));
		uint16_t   *tailed = (uint16_t *) GBT_TAILWALK_ALLOC(sizeof(uint16_t) * (n + 2));

		/*
		 * A leaf's bounds, and the downlinks above, are the shortest keys
		 * between neighbours (gbt_tail_separator); the inner levels' are
		 * their entries.
		 */
		if (leaf && n > 0)
		{
			leafbounds = (GbtTail *) GBT_TAILWALK_ALLOC(sizeof(GbtTail) * n);
			leafbtids = (uint64_t *) GBT_TAILWALK_ALLOC(sizeof(uint64_t) * n);
			leafbounds[0] = ltails[0];
			leafbtids[0] = level[nw];
			for (size_t i = 1; i < n; i++)
			{
				leafbounds[i] = ltails[i];
				leafbtids[i] = level[i * stride + nw];
				if (ltails[i].len > 0)
					leafbounds[i].len =
						gbt_tail_separator(&level[(i - 1) * stride], ltails[i - 1],
										   level[(i - 1) * stride + nw], &level[i * stride],
										   ltails[i], level[i * stride + nw], nw,
										   &leafbtids[i]);
			}
			bounds = leafbounds;
			btids = leafbtids;
		}
		cuts[0] = 0;
		for (size_t from = 0; from < n || npages == 0;)
		{
			size_t		to = 0;

			tailed[npages] = 0;
			if (n > 0)
				to = gbt_tail_page_cut(ltails, bounds, from, n, leaf, nw,
									   leaf ? leafpct : innerpct, &tailed[npages]);
			cuts[++npages] = to;
			from = to;
		}
		/* every page but the last takes two entries, or the tree grows tall */
		if (!leaf && npages > 1 && npages > (n + 1) / 2)
		{
			gbt_tail_build_free_level(cuts, tailed, owned, ownedtails, child, leafbounds,
									  leafbtids);
			return GBT_NO_BLOCK;
		}
		first = npages == 1 && rootblk != GBT_NO_BLOCK ? rootblk : *next;
		if (first == *next)
			*next += (uint32_t) npages;
		up = (uint64_t *) GBT_TAILWALK_ALLOC(sizeof(uint64_t) * stride * npages);
		uptails = (GbtTail *) GBT_TAILWALK_ALLOC(sizeof(GbtTail) * npages);
		upchild = (uint32_t *) GBT_TAILWALK_ALLOC(sizeof(uint32_t) * npages);
		for (size_t p = 0; p < npages; p++)
		{
			size_t		from = cuts[p],
						to = cuts[p + 1];
			int			k = (int) (to - from);
			uint32_t	blk = first + (uint32_t) p;

			if (ops)
			{
				char	   *page = ops->page(ops->arg, blk);
				uint64_t	keys[GBT_MAX_SLOT_WORDS],
							tids[GBT_MAX_SLOTS];
				uint32_t	ch[GBT_MAX_SLOTS];
				GbtTail		tl[GBT_MAX_SLOTS];
				GbtNode		node;
				GbtPageOpaque op;

				for (int i = 0; i < k; i++)
				{
					memcpy(&keys[i * nw], &level[(from + i) * stride], sizeof(uint64_t) * nw);
					tids[i] = level[(from + i) * stride + nw];
					tl[i] = ltails[from + i];
					ch[i] = leaf ? 0 : child[from + i];
				}
				/* minus infinity: below every entry, with a tail where tails are */
				if (!leaf && p == 0 && k > 0)
				{
					memset(keys, 0, sizeof(uint64_t) * nw);
					tids[0] = 0;
					tl[0].data = tailed[p] ? gbt_tail_minus_inf : NULL;
					tl[0].len = tailed[p] ? 1 : 0;
				}
				ops->format(ops->arg, page, leaf, lev, treeflag | tailed[p], nw);
				gbt_node_view(page, &node);
				op = node.opaque;
				op->leftlink = p == 0 ? GBT_NO_BLOCK : blk - 1;
				if (p > 0)
				{
					op->lowkey = level[from * stride];
					op->lowtid = btids ? btids[from] : level[from * stride + nw];
					for (int w = 1; w < nw; w++)
						node.xbounds[nw - 1 + w - 1] = level[from * stride + w];
					gbt_node_set_bound_tail(&node, 1, bounds[from].data, bounds[from].len);
				}
				if (p + 1 < npages)
				{
					op->rightlink = blk + 1;
					op->hikey = level[to * stride];
					op->hitid = btids ? btids[to] : level[to * stride + nw];
					for (int w = 1; w < nw; w++)
						node.xbounds[w - 1] = level[to * stride + w];
					gbt_node_set_bound_tail(&node, 0, bounds[to].data, bounds[to].len);
				}
				else
				{
					op->rightlink = GBT_NO_BLOCK;
					op->flags |= GBT_F_RIGHTMOST;
				}
				if (npages == 1)
					op->flags |= GBT_F_ROOT;
				if (tailed[p])
					gbt_node_load_tails(&node, k, keys, tids, leaf ? NULL : ch, tl, true);
				else
					gbt_node_load_spread(&node, k, keys, tids, leaf ? NULL : ch, true);
				if (ops->finish)
					ops->finish(ops->arg, page);
			}
			/* the parent's separator: the page's low key (its first entry's bound) */
			if (k > 0)
			{
				memcpy(&up[p * stride], &level[from * stride], sizeof(uint64_t) * nw);
				up[p * stride + nw] = btids ? btids[from] : level[from * stride + nw];
				uptails[p] = bounds[from];
			}
			else
			{
				memset(&up[p * stride], 0, sizeof(uint64_t) * stride);
				uptails[p].data = NULL;
				uptails[p].len = 0;
			}
			upchild[p] = blk;
		}
		gbt_tail_build_free_level(cuts, tailed, owned, ownedtails, child, leafbounds,
								  leafbtids);
		leafbounds = NULL;
		leafbtids = NULL;
		if (npages == 1)
		{
			GBT_TAILWALK_FREE(up);
			GBT_TAILWALK_FREE(uptails);
			GBT_TAILWALK_FREE(upchild);
			return first;
		}
		owned = up;
		ownedtails = uptails;
		level = up;
		ltails = uptails;
		child = upchild;
		n = npages;
		lev++;
	}
}

/* images in one array, as gbtree_walk.h's trees */
static inline char *
gbt_tail_img_page(void *arg, uint32_t blk)
{
	return gbt_walk_page((const char *) arg, blk);
}

static inline void
gbt_tail_img_format(void *arg, char *page, bool leaf, uint16_t level, uint16_t flags, int nw)
{
	memset(page, 0, GBT_PAGE_SIZE);
	gbt_node_format_words(page, leaf, level, flags, nw);
}

/*
 * The tree of gbt_tail_build in img from GBT_FIRST_FREE_BLKNO (the fixed
 * blocks before it unused), its root the last page; img NULL counts the
 * blocks.  Returns the root and sets *nblocks.
 */
static inline uint32_t
gbt_walk_build_tails(char *img, const uint64_t *e, const GbtTail *tails, size_t n, int nw,
					 int pct, uint32_t *nblocks)
{
	GbtTailBuildOps ops = {gbt_tail_img_page, gbt_tail_img_format, NULL, img};
	uint32_t	next = GBT_FIRST_FREE_BLKNO;
	uint32_t	root = gbt_tail_build(img ? &ops : NULL, &next, GBT_NO_BLOCK, 0, e, tails, n,
									  nw, pct, pct);

	*nblocks = next;
	return root;
}

/*
 * The leaf where (key, tail, tid) belongs, from root: 0 with the leaf in
 * *leaf, or -1 on an inconsistent page; as gbt_walk_descend_words.
 */
static inline int
gbt_walk_descend_tails(const char *img, uint32_t nblocks, uint32_t root, int nw,
					   const uint64_t *key, GbtTail tail, uint64_t tid, uint32_t *leaf)
{
	uint32_t	blk = root;
	int			expect = -1;
	long		hops = 0;

	for (;;)
	{
		char	   *page;
		GbtPageOpaque op;
		GbtNode		node;
		uint64_t	bk[GBT_MAX_KEY_WORDS],
					bt;
		GbtTail		btail;
		int			s;

		if (blk >= nblocks)
			return -1;
		page = gbt_walk_page(img, blk);
		op = gbt_page_opaque(page);
		if (op->page_id != GBT_PAGE_ID || (op->flags & GBT_F_META) || gbt_page_nwords(op) != nw ||
			(expect >= 0 && op->level != expect) || ++hops > GBT_WALK_MAX_DESCENT_HOPS)
			return -1;
		gbt_node_view(page, &node);
		gbt_walk_bound_tail(&node, true, bk, &btail, &bt);
		if ((op->flags & GBT_F_DELETED) ||
			(!(op->flags & GBT_F_RIGHTMOST) &&
			 gbt_tentry_cmp(key, tail, tid, bk, btail, bt, nw) >= 0))
		{
			if (op->rightlink == GBT_NO_BLOCK || op->rightlink == blk)
				return -1;
			expect = op->level;
			blk = op->rightlink;
			continue;
		}
		/* a level's first page has no low key: minus infinity */
		gbt_walk_bound_tail(&node, false, bk, &btail, &bt);
		if (op->leftlink != GBT_NO_BLOCK &&
			gbt_tentry_cmp(key, tail, tid, bk, btail, bt, nw) < 0)
			return -1;
		if (op->flags & GBT_F_LEAF)
		{
			*leaf = blk;
			return 0;
		}
		s = gbt_node_prev_used(&node, gbt_node_lower_bound_tail(&node, key, tail.data, tail.len,
																tid));
		if (s < 0)
			s = gbt_node_first_used(&node);
		if (s >= node.nslots || node.child[s] == GBT_NO_BLOCK ||
			node.child[s] < GBT_FIRST_FREE_BLKNO)
			return -1;
		expect = op->level - 1;
		blk = node.child[s];
	}
}

/*
 * The entries x with lo <= x < hi ((words, tail, TID) each), in order,
 * handed to match when not NULL; their number, or -1 on an inconsistent
 * page.
 */
static inline int64_t
gbt_walk_range_tails(const char *img, uint32_t nblocks, uint32_t root, int nw,
					 const uint64_t *lo, GbtTail lo_tail, uint64_t lo_tid,
					 const uint64_t *hi, GbtTail hi_tail, uint64_t hi_tid,
					 GbtWalkTailMatchFn match, void *arg)
{
	uint32_t	blk;
	bool		firstpage = true;
	int64_t		n = 0;

	if (gbt_tentry_cmp(lo, lo_tail, lo_tid, hi, hi_tail, hi_tid, nw) >= 0)
		return 0;
	if (gbt_walk_descend_tails(img, nblocks, root, nw, lo, lo_tail, lo_tid, &blk) != 0)
		return -1;
	for (uint64_t hops = 0;; hops++)
	{
		char	   *page;
		GbtPageOpaque op;
		GbtNode		node;
		uint64_t	k[GBT_MAX_KEY_WORDS],
					t;
		GbtTail		tl;
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
			s = firstpage ? gbt_node_lower_bound_tail(&node, lo, lo_tail.data, lo_tail.len,
													  lo_tid) : 0;
			for (s = gbt_node_next_used(&node, s); s < node.nslots;
				 s = gbt_node_next_used(&node, s + 1))
			{
				gbt_walk_slot_words(&node, s, k);
				tl = gbt_node_slot_tail(&node, s);
				if (gbt_tentry_cmp(k, tl, node.tids[s], hi, hi_tail, hi_tid, nw) >= 0)
					return n;
				if (match)
					match(arg, k, tl, node.tids[s]);
				n++;
			}
			gbt_walk_bound_tail(&node, true, k, &tl, &t);
			if ((op->flags & GBT_F_RIGHTMOST) ||
				gbt_tentry_cmp(k, tl, t, hi, hi_tail, hi_tid, nw) >= 0)
				return n;
		}
		blk = op->rightlink;
		firstpage = false;
	}
}

#endif							/* GBTREE_TAILWALK_H */
