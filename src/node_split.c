/*-------------------------------------------------------------------------
 *
 * node_split.c
 *	  Whole-page rewrites of multi-word pages with tails: a page of words
 *	  alone made tailed, and a page cut in two (src/README, "Text keys",
 *	  item 4).  Plain C over node.c's public in-page operations, shared by
 *	  the access method and the unit tests.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "gbtree_node.h"
#include "gbtree_tailwalk.h"

/*
 * Turn a multi-word page without tails into one with (GBT_F_TAILS), in
 * place, so that it can take an entry or bound with a tail: its entries,
 * bounds, links and flags kept, its dead marks cleared (the slots move).
 * False, the page unchanged, if its entries outnumber a tailed page's
 * slots.
 */
bool
gbt_node_to_tails(char *page)
{
	GbtNode		node;
	GbtPageOpaqueData old = *gbt_page_opaque(page);
	uint64_t	keys[GBT_MAX_SLOT_WORDS],
				tids[GBT_MAX_SLOTS],
				xb[2 * (GBT_MAX_KEY_WORDS - 1)];
	uint32_t	child[GBT_MAX_SLOTS];
	GbtTail		tails[GBT_MAX_SLOTS];
	bool		leaf = (old.flags & GBT_F_LEAF) != 0;
	int			n,
				nw = gbt_page_nwords(&old);

	gbt_node_view(page, &node);
	if (nw < 2 || node.toff)
		return node.toff != NULL;
	if (old.nused > gbt_tail_slots(leaf, false))
		return false;
	n = gbt_node_extract(&node, keys, tids, leaf ? NULL : child);
	memset(tails, 0, sizeof(GbtTail) * n);
	/* a level's first inner page starts at minus infinity: tail {0} */
	if (!leaf && old.leftlink == GBT_NO_BLOCK && n > 0)
	{
		tails[0].data = gbt_tail_minus_inf;
		tails[0].len = 1;
	}
	memcpy(xb, node.xbounds, sizeof(uint64_t) * 2 * (nw - 1));
	gbt_node_format_tails(page, leaf, old.level, old.flags & ~GBT_F_LEAF, nw);
	gbt_node_view(page, &node);
	memcpy(node.xbounds, xb, sizeof(uint64_t) * 2 * (nw - 1));
	node.opaque->hikey = old.hikey;
	node.opaque->hitid = old.hitid;
	node.opaque->lowkey = old.lowkey;
	node.opaque->lowtid = old.lowtid;
	node.opaque->rightlink = old.rightlink;
	node.opaque->leftlink = old.leftlink;
	node.opaque->xact = old.xact;
	gbt_node_load_tails(&node, n, keys, tids, leaf ? NULL : child, tails, true);
	return true;
}

/*
 * Lay a multi-word page out afresh on img (zeroed) as a split builds its
 * new pages (split_fill, split_off_right, gbt_node_merge_split): op's
 * layout, level, flags, links and bound's first words, xbounds its other
 * words (gbtree_node.h), the bounds' tails, and the n sorted entries
 * (tails: NULL or one each, on a tailed layout; child: inner pages), their
 * gaps spread or packed.  The redo of a split's right page (wide_wal.c).
 */
void
gbt_node_fill_page(char *img, const GbtPageOpaqueData *op, const uint64_t *xbounds,
				   GbtTail lowtail, GbtTail hitail, int n, const uint64_t *keys,
				   const uint64_t *tids, const uint32_t *child, const GbtTail *tails,
				   bool spread)
{
	GbtNode		node;
	bool		leaf = (op->flags & GBT_F_LEAF) != 0;
	int			nw = gbt_page_nwords(op);

	gbt_node_format_layout(img, leaf, op->level, op->flags & ~GBT_F_LEAF, nw);
	gbt_node_view(img, &node);
	node.opaque->lowkey = op->lowkey;
	node.opaque->lowtid = op->lowtid;
	node.opaque->hikey = op->hikey;
	node.opaque->hitid = op->hitid;
	memcpy(node.xbounds, xbounds, sizeof(uint64_t) * 2 * (nw - 1));
	if (node.toff)
	{
		if (lowtail.len > 0)
			gbt_node_set_bound_tail(&node, 1, lowtail.data, lowtail.len);
		if (hitail.len > 0)
			gbt_node_set_bound_tail(&node, 0, hitail.data, hitail.len);
		gbt_node_load_tails(&node, n, keys, tids, leaf ? NULL : child, tails, spread);
	}
	else
		gbt_node_load_spread(&node, n, keys, tids, leaf ? NULL : child, spread);
	node.opaque->rightlink = op->rightlink;
	node.opaque->leftlink = op->leftlink;
}

/*
 * Splitting a page in two, tails and all (src/README, "What is left", item
 * 4): the entries of page, and a new one when newkey is not NULL, go to
 * the images left and right, cut where both fit: each half is a page of
 * words alone unless an entry or bound of it has a tail, and a tailed half
 * must fit a tailed page's slots and tail area.  Of the cuts that fit,
 * the one nearest leftpct percent of the entries on the left.  Each half's
 * entries are spread over it, but for grows_at_new (the new entry goes on
 * a run of ascending inserts): a half that ends with the new entry is
 * packed, its free slots after it where the run's next entries go, each
 * then a gap filled rather than slots shifted.  left may be page itself.  Left keeps the page's low key and left-link and gets
 * the separator as its high key (the right page's first entry, or on a
 * leaf whose first right entry has a tail, the shortest key between the
 * halves: leaf_separator); right
 * gets that separator as its low key and the page's high key, right-link
 * and GBT_F_RIGHTMOST; the caller links them (left's right-link, right's
 * left-link).  The first entry of a level's first inner page (minus
 * infinity) keeps the tail {0} on a tailed page and none otherwise.
 * Returns 1 with the new entry placed (or none given); 0 when no cut fits
 * with it (a page of words alone full but for a tailed entry in its
 * middle): then the page's entries alone are split, and the caller
 * inserts again; -1 if fewer than two entries.
 */
typedef struct SplitSet
{
	int			n;
	uint64_t	keys[GBT_MAX_SLOT_WORDS + GBT_MAX_KEY_WORDS];
	uint64_t	tids[GBT_MAX_SLOTS + 1];
	uint32_t	child[GBT_MAX_SLOTS + 1];
	GbtTail		tails[GBT_MAX_SLOTS + 1];
	int			space[GBT_MAX_SLOTS + 2];	/* prefix sums of tail bytes */
	int			ntails[GBT_MAX_SLOTS + 2];	/* prefix counts of tails */
	unsigned char bytes[2 * GBT_PAGE_SIZE];
} SplitSet;

/*
 * A leaf split's separator between entries m - 1 and m when entry m has a
 * tail (gbt_tail_separator).  Returns the tail's length and sets *septid.
 */
static int
leaf_separator(const SplitSet *ss, int m, int nw, uint64_t *septid)
{
	return gbt_tail_separator(&ss->keys[(m - 1) * nw], ss->tails[m - 1], ss->tids[m - 1],
							  &ss->keys[m * nw], ss->tails[m], ss->tids[m], nw, septid);
}

/*
 * Does [from, to) with these bounds' tails fit a page?  *layout: 0 for a
 * page of words alone, else the tailed layout's flags (gbt_tail_layout).
 */
static bool
split_half_fits(const SplitSet *ss, int from, int to, int lowspace, int highspace, bool leaf,
				int nw, uint16_t *layout)
{
	int			n = to - from;

	*layout = 0;
	if (lowspace == 0 && highspace == 0 && ss->ntails[to] == ss->ntails[from])
		return n <= (leaf ? gbt_leaf_slots_for(nw) : gbt_inner_slots_for(nw));
	*layout = gbt_tail_layout(n, ss->space[to] - ss->space[from], lowspace + highspace, leaf,
							  nw);
	return *layout != 0;
}

static void
split_fill(char *img, const SplitSet *ss, int from, int to, uint16_t layout, bool leaf,
		   const GbtPageOpaqueData *old, int nw, const uint64_t *lowkey, GbtTail lowtail,
		   uint64_t lowtid, const uint64_t *hikey, GbtTail hitail, uint64_t hitid,
		   bool rightmost, bool minus_inf_first, bool spread)
{
	GbtNode		node;
	GbtTail		tl[GBT_MAX_SLOTS + 1];
	uint16_t	flags = old->flags & (GBT_F_NULLTREE);

	gbt_node_format_words(img, leaf, old->level, flags | (rightmost ? GBT_F_RIGHTMOST : 0) | layout,
						  nw);
	gbt_node_view(img, &node);
	node.opaque->lowkey = lowkey[0];
	node.opaque->lowtid = lowtid;
	node.opaque->hikey = hikey ? hikey[0] : GBT_SENTINEL;
	node.opaque->hitid = hikey ? hitid : GBT_SENTINEL;
	for (int k = 1; k < nw; k++)
	{
		node.xbounds[k - 1] = hikey ? hikey[k] : GBT_SENTINEL;
		node.xbounds[nw - 1 + k - 1] = lowkey[k];
	}
	if (layout)
	{
		gbt_node_set_bound_tail(&node, 1, lowtail.data, lowtail.len);
		if (hikey)
			gbt_node_set_bound_tail(&node, 0, hitail.data, hitail.len);
		memcpy(tl, &ss->tails[from], sizeof(GbtTail) * (to - from));
		if (minus_inf_first)
		{
			tl[0].data = gbt_tail_minus_inf;
			tl[0].len = 1;
		}
		gbt_node_load_tails(&node, to - from, &ss->keys[from * nw], &ss->tids[from],
							leaf ? NULL : &ss->child[from], tl, spread);
	}
	else
		gbt_node_load_spread(&node, to - from, &ss->keys[from * nw], &ss->tids[from],
							 leaf ? NULL : &ss->child[from], spread);
}

int
gbt_node_split(const char *page, const uint64_t *newkey, GbtTail newtail, uint64_t newtid,
			   uint32_t newchild, int leftpct, bool grows_at_new, char *left, char *right)
{
	SplitSet	sset;
	SplitSet   *ss = &sset;
	GbtNode		node;
	GbtPageOpaqueData old = *gbt_page_opaque((char *) page);
	bool		leaf = (old.flags & GBT_F_LEAF) != 0;
	bool		leftmost_inner = !leaf && old.leftlink == GBT_NO_BLOCK;
	int			nw = gbt_page_nwords(&old);
	uint64_t	lowkey[GBT_MAX_KEY_WORDS],
				hikey[GBT_MAX_KEY_WORDS],
				lowtid,
				hitid,
				sep[GBT_MAX_KEY_WORDS],
				septid;
	GbtTail		lowtail,
				hitail,
				septail;
	int			used = 0;
	bool		addnew = newkey != NULL;
	int			result = 1;
	int			best = -1;
	int			newpos = -1;
	uint16_t	ltailed = 0,
				rtailed = 0;
	bool		rightmost = (old.flags & GBT_F_RIGHTMOST) != 0;

	gbt_node_view((char *) page, &node);
	gbt_walk_bound_words(&node, false, lowkey, &lowtid);
	gbt_walk_bound_words(&node, true, hikey, &hitid);

	/* everything that left may overwrite, copied: entries, tails, bounds' tails */
	for (int pass = 0; pass < 2 && best < 0; pass++)
	{
		GbtTail		t;
		int			pos;
		int			target;

		used = 0;
		ss->n = gbt_node_extract_tails(&node, ss->keys, ss->tids, leaf ? NULL : ss->child,
									   ss->tails);
		for (int i = 0; i < ss->n; i++)
		{
			memcpy(ss->bytes + used, ss->tails[i].data, ss->tails[i].len);
			ss->tails[i].data = ss->bytes + used;
			used += ss->tails[i].len;
		}
		t = gbt_node_bound_tail(&node, 1);
		memcpy(ss->bytes + used, t.data, t.len);
		lowtail.data = ss->bytes + used;
		lowtail.len = t.len;
		used += t.len;
		t = gbt_node_bound_tail(&node, 0);
		memcpy(ss->bytes + used, t.data, t.len);
		hitail.data = ss->bytes + used;
		hitail.len = t.len;
		used += t.len;
		if (leftmost_inner && ss->n > 0)
			ss->tails[0].len = 0;	/* minus infinity, given its tail by split_fill */
		if (addnew)
		{
			/* nothing goes before minus infinity, whose tail here is none */
			for (pos = ss->n; pos > (leftmost_inner && ss->n > 0 ? 1 : 0); pos--)
				if (gbt_tentry_cmp(&ss->keys[(pos - 1) * nw], ss->tails[pos - 1],
										 ss->tids[pos - 1], newkey, newtail, newtid, nw) < 0)
					break;
			memmove(&ss->keys[(pos + 1) * nw], &ss->keys[pos * nw],
					sizeof(uint64_t) * nw * (ss->n - pos));
			memmove(&ss->tids[pos + 1], &ss->tids[pos], sizeof(uint64_t) * (ss->n - pos));
			memmove(&ss->child[pos + 1], &ss->child[pos], sizeof(uint32_t) * (ss->n - pos));
			memmove(&ss->tails[pos + 1], &ss->tails[pos], sizeof(GbtTail) * (ss->n - pos));
			memcpy(&ss->keys[pos * nw], newkey, sizeof(uint64_t) * nw);
			ss->tids[pos] = newtid;
			ss->child[pos] = newchild;
			memcpy(ss->bytes + used, newtail.data, newtail.len);
			ss->tails[pos].data = ss->bytes + used;
			ss->tails[pos].len = newtail.len;
			used += newtail.len;
			ss->n++;
			newpos = pos;
		}
		else
			newpos = -1;
		if (ss->n < 2)
			return -1;
		ss->space[0] = ss->ntails[0] = 0;
		for (int i = 0; i < ss->n; i++)
		{
			ss->space[i + 1] = ss->space[i] + gbt_tail_space(ss->tails[i].len);
			ss->ntails[i + 1] = ss->ntails[i] + (ss->tails[i].len > 0);
		}
		target = ss->n * leftpct / 100;
		if (target < 1)
			target = 1;
		if (target > ss->n - 1)
			target = ss->n - 1;
		for (int d = 0; d < ss->n && best < 0; d++)
			for (int sgn = -1; sgn <= 1 && best < 0; sgn += 2)
			{
				int			m = target + sgn * d;
				uint16_t	lt,
							rt;
				int			lowsp = gbt_tail_space(lowtail.len);
				int			seplen;
				uint64_t	stid;

				if (m < 1 || m > ss->n - 1 || (d == 0 && sgn > 0))
					continue;
				seplen = leaf && ss->tails[m].len > 0 ?
					leaf_separator(ss, m, nw, &stid) : ss->tails[m].len;
				if (split_half_fits(ss, 0, m, lowsp, gbt_tail_space(seplen), leaf, nw,
									&lt) &&
					(!leftmost_inner || !lt ||
					 split_half_fits(ss, 0, m, lowsp + 3, gbt_tail_space(seplen), leaf,
									 nw, &lt)) &&
					split_half_fits(ss, m, ss->n, gbt_tail_space(seplen),
									rightmost ? 0 : gbt_tail_space(hitail.len), leaf, nw, &rt))
				{
					best = m;
					ltailed = lt;
					rtailed = rt;
				}
			}
		if (best < 0 && addnew)
		{
			/* split the page's own entries; the caller inserts again */
			addnew = false;
			result = 0;
		}
	}
	if (best < 0)
		return -1;
	memcpy(sep, &ss->keys[best * nw], sizeof(uint64_t) * nw);
	septid = ss->tids[best];
	septail = ss->tails[best];
	if (leaf && septail.len > 0)
		septail.len = leaf_separator(ss, best, nw, &septid);
	/* the page the new entry ends, where its run goes on: packed */
	split_fill(right, ss, best, ss->n, rtailed, leaf, &old, nw, sep, septail, septid,
			   rightmost ? NULL : hikey, hitail, hitid, rightmost, false,
			   !(grows_at_new && newpos == ss->n - 1));
	split_fill(left, ss, 0, best, ltailed, leaf, &old, nw, lowkey, lowtail, lowtid,
			   sep, septail, septid, false, leftmost_inner && ltailed,
			   !(grows_at_new && newpos == best - 1));
	gbt_page_opaque(left)->leftlink = old.leftlink;
	gbt_page_opaque(right)->rightlink = old.rightlink;
	return result;
}

/*
 * The right part of a split of the words-only leaf node views at the
 * entry keys[0]: the n sorted entries (keys nwords words each, then tids)
 * on the image right, a words-only leaf with keys[0] as its low key and
 * the page's high key, right-link and GBT_F_RIGHTMOST, gaps spread; the
 * page takes keys[0] as its high key and is no longer rightmost.
 */
static void
split_off_right(GbtNode *node, const uint64_t *keys, const uint64_t *tids, int n, char *right)
{
	GbtPageOpaqueData old = *node->opaque;
	int			nw = node->nwords;
	GbtNode		rnode;

	gbt_node_format_words(right, true, old.level,
						  old.flags & (GBT_F_NULLTREE | GBT_F_RIGHTMOST), nw);
	gbt_node_view(right, &rnode);
	rnode.opaque->lowkey = keys[0];
	rnode.opaque->lowtid = tids[0];
	rnode.opaque->hikey = old.hikey;
	rnode.opaque->hitid = old.hitid;
	for (int k = 1; k < nw; k++)
	{
		rnode.xbounds[k - 1] = node->xbounds[k - 1];
		rnode.xbounds[nw - 1 + k - 1] = keys[k];
	}
	gbt_node_load_spread(&rnode, n, keys, tids, NULL, true);
	rnode.opaque->rightlink = old.rightlink;

	node->opaque->hikey = keys[0];
	node->opaque->hitid = tids[0];
	for (int k = 1; k < nw; k++)
		node->xbounds[k - 1] = keys[k];
	node->opaque->flags &= ~GBT_F_RIGHTMOST;
}

/*
 * An append split of a words-only leaf: the n entries (keys nwords words
 * each, then tids; sorted, no tails, all above the page's entries and
 * below its high key) go to the image right, a words-only leaf with the
 * first of them as its low key and the page's high key, right-link
 * and GBT_F_RIGHTMOST; the page keeps its entries where they are and
 * takes that first entry as its high key, so that nothing on it moves
 * and its record is a few bytes.  The caller links the pages.
 */
void
gbt_node_append_split(char *page, const uint64_t *keys, const uint64_t *tids, int n, char *right)
{
	GbtNode		node;

	gbt_node_view(page, &node);
	split_off_right(&node, keys, tids, n, right);
}

/*
 * A split of a full words-only leaf right after the n new entries (keys
 * nwords words each, then tids; sorted, no tails, all between the same two
 * entries of the page), which go on a run of ascending inserts ending
 * there (split_share, merge_share): the page keeps its entries below them
 * where they are and takes them after those, its free slots all after
 * them, where the run's next entries go; the entries above them go to the
 * image right, a words-only leaf with the first of them as its low key
 * and the page's high key, right-link and GBT_F_RIGHTMOST, their gaps
 * spread, and the page takes that first entry as its high key.  Only the
 * slots that empty, the new ones and the bounds change on the page, so
 * generic WAL logs a delta of it where a page laid out again is logged
 * whole (8 kB).  False, nothing changed, when no entry lies above them or
 * the page could not take them with those below.  The caller links the
 * pages.
 */
bool
gbt_node_cut_split(char *page, const uint64_t *keys, const uint64_t *tids, int nnew, char *right)
{
	static uint64_t rkeys[GBT_MAX_SLOT_WORDS];
	static uint64_t rtids[GBT_MAX_SLOTS];
	GbtNode		node;
	int			nw = gbt_page_nwords(gbt_page_opaque(page));
	int			p,
				n = 0;

	gbt_node_view(page, &node);
	p = gbt_node_lower_bound_entry_words(&node, keys, tids[0]);
	for (int s = gbt_node_next_used(&node, p); s < node.nslots; s = gbt_node_next_used(&node, s + 1))
	{
		gbt_walk_slot_words(&node, s, &rkeys[n * nw]);
		rtids[n++] = node.tids[s];
	}
	if (n == 0 || node.opaque->nused - n + nnew > node.nslots)
		return false;

	split_off_right(&node, rkeys, rtids, n, right);
	/* the slots that empty are the last: deleted from the end, gaps copy sentinels */
	gbt_leaf_clear_dead(page);
	for (int s = gbt_node_last_used(&node); s >= p; s = gbt_node_prev_used(&node, s))
		gbt_node_delete_slot(&node, s);
	/* each into the first free slot after the one before: room was checked */
	for (int i = 0; i < nnew; i++)
		(void) gbt_node_insert_words(&node, &keys[i * nw], tids[i], 0);
	return true;
}

/*
 * A merge split of a full words-only leaf: its entries and the n sorted
 * ones given (keys nwords words each, then tids; no tails, none on the
 * page already, all below its high key; at most two built leaves' worth
 * in all) are cut in two: the first nleft of them on the left, or
 * halves if nleft is 0 (nleft is kept within 1 .. all but one).  left
 * keeps the page's low key and the first part, with the second part's
 * first entry as its high key; right takes that key as its low key, the
 * second part, and the page's high key, right-link and GBT_F_RIGHTMOST.
 * Both are words-only leaves of the layout formatted now, their entries
 * spread, but for the page that ends with the last given entry (for left,
 * when nleft cut there), which is packed, its free slots after that entry
 * where a run of ascending inserts goes on; left may be page itself.  The
 * caller links the pages.
 */
void
gbt_node_merge_split(const char *page, const uint64_t *keys, const uint64_t *tids, int n,
					 int nleft, char *left, char *right)
{
	static uint64_t mkeys[2 * GBT_MAX_SLOT_WORDS];
	static uint64_t mtids[2 * GBT_MAX_SLOTS];
	static uint64_t okeys[GBT_MAX_SLOT_WORDS];
	static uint64_t otids[GBT_MAX_SLOTS];
	GbtNode		node;
	GbtPageOpaqueData old = *gbt_page_opaque((char *) page);
	int			nw = gbt_page_nwords(&old);
	uint64_t	xb[2 * (GBT_MAX_KEY_WORDS - 1)];
	int			nold,
				a = 0,
				b = 0,
				m = 0,
				lastnew = -1,
				half;

	gbt_node_view((char *) page, &node);
	memcpy(xb, node.xbounds, sizeof(uint64_t) * 2 * (nw - 1));
	nold = gbt_node_extract(&node, okeys, otids, NULL);
	while (a < nold || b < n)
	{
		bool		take_old = b >= n ||
			(a < nold && gbt_wentry_lt(&okeys[a * nw], otids[a], &keys[b * nw], tids[b], nw));

		if (take_old)
		{
			memcpy(&mkeys[m * nw], &okeys[a * nw], sizeof(uint64_t) * nw);
			mtids[m++] = otids[a++];
		}
		else
		{
			memcpy(&mkeys[m * nw], &keys[b * nw], sizeof(uint64_t) * nw);
			mtids[m++] = tids[b++];
			if (b == n)
				lastnew = m - 1;
		}
	}
	half = nleft <= 0 ? m / 2 : nleft < m ? nleft : m - 1;

	gbt_node_format_words(right, true, old.level, old.flags & (GBT_F_NULLTREE | GBT_F_RIGHTMOST),
						  nw);
	gbt_node_view(right, &node);
	node.opaque->lowkey = mkeys[half * nw];
	node.opaque->lowtid = mtids[half];
	node.opaque->hikey = old.hikey;
	node.opaque->hitid = old.hitid;
	for (int k = 1; k < nw; k++)
	{
		node.xbounds[k - 1] = xb[k - 1];
		node.xbounds[nw - 1 + k - 1] = mkeys[half * nw + k];
	}
	gbt_node_load_spread(&node, m - half, &mkeys[half * nw], &mtids[half], NULL,
						 lastnew != m - 1);
	node.opaque->rightlink = old.rightlink;

	gbt_node_format_words(left, true, old.level, old.flags & GBT_F_NULLTREE, nw);
	gbt_node_view(left, &node);
	node.opaque->lowkey = old.lowkey;
	node.opaque->lowtid = old.lowtid;
	node.opaque->hikey = mkeys[half * nw];
	node.opaque->hitid = mtids[half];
	for (int k = 1; k < nw; k++)
	{
		node.xbounds[k - 1] = mkeys[half * nw + k];
		node.xbounds[nw - 1 + k - 1] = xb[nw - 1 + k - 1];
	}
	gbt_node_load_spread(&node, half, mkeys, mtids, NULL, !(nleft > 0 && lastnew == half - 1));
	node.opaque->leftlink = old.leftlink;
}
