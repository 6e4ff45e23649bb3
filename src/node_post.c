/*-------------------------------------------------------------------------
 *
 * node_post.c
 *	  A leaf's posting form (gbtree_node.h): a page of heavily duplicated
 *	  keys held as (key, TID list) groups.  Measured, encoded, decoded,
 *	  searched and checked here; gbt_leaf_extract, gbt_leaf_fill and
 *	  gbt_leaf_rewrite read and write a leaf in whichever form it takes.
 *
 * Plain C, shared by the access method and the unit tests.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "gbtree_node.h"

/* Which form a leaf takes is decided by its writers (gbt_leaf_fill, build.c). */

/* the shape of n sorted entries in posting form: distinct keys, block span */
static void
post_shape(int n, const uint64_t *keys, const uint64_t *tids, int *ngroups, bool *wide,
		   uint32_t *baseblk)
{
	uint32_t	lo = UINT32_MAX,
				hi = 0;
	int			g = 0;

	for (int i = 0; i < n; i++)
	{
		uint32_t	b = gbt_tid_block(tids[i]);

		if (i == 0 || keys[i] != keys[i - 1])
			g++;
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	*ngroups = g;
	*wide = n > 0 && hi - lo > UINT16_MAX;
	*baseblk = n > 0 ? lo : 0;
}

/* Do n sorted entries fit one leaf in posting form? */
bool
gbt_post_fits(int n, const uint64_t *keys, const uint64_t *tids)
{
	int			g;
	bool		wide;
	uint32_t	base;

	if (n > GBT_POST_MAX_ENTRIES)
		return false;
	post_shape(n, keys, tids, &g, &wide, &base);
	return g <= GBT_POST_MAX_GROUPS && gbt_post_size(g, n, wide) <= GBT_POST_END;
}

/*
 * Lay out n sorted entries (which gbt_post_fits) in posting form on a
 * formatted leaf, whose special space (links, keys of its range) stays.
 */
void
gbt_post_encode(char *page, int n, const uint64_t *keys, const uint64_t *tids)
{
	GbtPageOpaque op = gbt_page_opaque(page);
	GbtPost		p;
	int			g,
				gi = -1;
	bool		wide;
	uint32_t	base;

	post_shape(n, keys, tids, &g, &wide, &base);
	memset(page + GBT_BODY_OFFSET, 0, GBT_POST_END - GBT_BODY_OFFSET);
	((GbtPostHeader *) (page + GBT_BODY_OFFSET))->ngroups = (uint16_t) g;
	((GbtPostHeader *) (page + GBT_BODY_OFFSET))->nentries = (uint16_t) n;
	((GbtPostHeader *) (page + GBT_BODY_OFFSET))->gcap = (uint16_t) gbt_post_gcap(g);
	((GbtPostHeader *) (page + GBT_BODY_OFFSET))->wide = wide;
	((GbtPostHeader *) (page + GBT_BODY_OFFSET))->baseblk = base;
	gbt_post_view(page, &p);
	for (int i = 0; i < n; i++)
	{
		uint32_t	b = gbt_tid_block(tids[i]);

		if (i == 0 || keys[i] != keys[i - 1])
		{
			p.keys[++gi] = keys[i];
			p.start[gi] = (uint16_t) i;
		}
		if (wide)
			p.blocks32[i] = b;
		else
			p.blocks16[i] = (uint16_t) (b - base);
		p.offs[i] = gbt_tid_offset(tids[i]) |
			((gbt_tid_flags(tids[i]) & GBT_TID_FLAG_NEGZERO) ? GBT_POST_NEGZERO : 0);
	}
	for (int s = g; s < p.hdr->gcap; s++)
		p.keys[s] = GBT_SENTINEL;
	for (int s = g; s <= p.hdr->gcap; s++)
		p.start[s] = (uint16_t) n;
	for (int b = 0; b < GBT_DIR_SIZE; b++)
		p.dir[b] = b < p.hdr->gcap / GBT_BLOCK_SLOTS ?
			p.keys[b * GBT_BLOCK_SLOTS + GBT_BLOCK_SLOTS - 1] : GBT_SENTINEL;
	op->flags |= GBT_F_POSTING;
	op->nslots = 0;
	op->nused = (uint16_t) n;
}

/* A posting leaf's entries in order; returns their number. */
int
gbt_post_decode(char *page, uint64_t *keys, uint64_t *tids)
{
	GbtPost		p;

	gbt_post_view(page, &p);
	for (int g = 0; g < p.hdr->ngroups; g++)
		for (int i = p.start[g]; i < p.start[g + 1]; i++)
		{
			keys[i] = p.keys[g];
			tids[i] = gbt_post_tid(&p, i);
		}
	return p.hdr->nentries;
}

/* The first entry >= (key, tid), as an index into the TIDs */
int
gbt_post_lower_bound_entry(const GbtPost *p, uint64_t key, uint64_t tid)
{
	GbtNode		kn;
	int			g,
				lo,
				hi;

	gbt_post_key_node(p, &kn);
	g = gbt_node_lower_bound(&kn, key);
	if (g >= p->hdr->ngroups)
		return p->hdr->nentries;
	lo = p->start[g];
	if (p->keys[g] != key)
		return lo;
	hi = p->start[g + 1];
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (gbt_post_tid(p, mid) < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Insert (key, tid) into the posting leaf where it stands, writing exactly
 * the bytes gbt_post_encode of its entries with the new one would (the
 * TIDs after it move up one, the offsets' array by 8 bytes where the
 * blocks' array grows past an 8-byte boundary), so that a rewrite, here
 * or at redo, could not tell the difference; an entry the page holds
 * already is not doubled (true, nothing written), as a merge skips it.
 * Only apply writes; without it, whether it would.  False (nothing
 * written) where the layout would change otherwise, which only a rewrite
 * does: the plain form's count or fewer entries after it, a new key past
 * the keys' capacity, a heap block below the page's base (or, narrow,
 * past its 16-bit span), or no room.  A rewrite decodes and encodes every
 * entry of the page, a fifth of a single-row INSERT's time.
 */
bool
gbt_post_insert_inplace(char *page, uint64_t key, uint64_t tid, bool apply)
{
	GbtPageOpaque op = gbt_page_opaque(page);
	GbtPost		p;
	GbtNode		kn;
	GbtPostHeader *h;
	int			n,
				g,
				pos,
				w;
	uint32_t	b = gbt_tid_block(tid);
	bool		newgroup;
	char	   *blocks,
			   *oldoffs,
			   *newoffs;

	if (!(op->flags & GBT_F_POSTING))
		return false;
	gbt_post_view(page, &p);
	h = p.hdr;
	n = h->nentries;
	if (n + 1 <= GBT_LEAF_SLOTS || n + 1 > GBT_POST_MAX_ENTRIES || b < h->baseblk ||
		(!h->wide && b - h->baseblk > UINT16_MAX))
		return false;
	gbt_post_key_node(&p, &kn);
	g = gbt_node_lower_bound(&kn, key);
	newgroup = g >= h->ngroups || p.keys[g] != key;
	if (newgroup && gbt_post_gcap(h->ngroups + 1) != h->gcap)
		return false;
	if (gbt_post_size(h->ngroups + (newgroup ? 1 : 0), n + 1, h->wide) > GBT_POST_END)
		return false;
	pos = gbt_post_lower_bound_entry(&p, key, tid);
	if (!apply || (pos < n && gbt_post_tid(&p, pos) == tid && gbt_post_key_at(&p, pos) == key))
		return true;

	/* the offsets first: the blocks' array may grow into their old place */
	w = h->wide ? 4 : 2;
	blocks = h->wide ? (char *) p.blocks32 : (char *) p.blocks16;
	oldoffs = (char *) p.offs;
	newoffs = blocks + gbt_post_align8((size_t) (n + 1) * w);
	memmove(newoffs + (size_t) (pos + 1) * 2, oldoffs + (size_t) pos * 2, (size_t) (n - pos) * 2);
	memmove(newoffs, oldoffs, (size_t) pos * 2);
	memmove(blocks + (size_t) (pos + 1) * w, blocks + (size_t) pos * w, (size_t) (n - pos) * w);
	memset(blocks + (size_t) (n + 1) * w, 0, newoffs - (blocks + (size_t) (n + 1) * w));
	if (h->wide)
		((uint32_t *) blocks)[pos] = b;
	else
		((uint16_t *) blocks)[pos] = (uint16_t) (b - h->baseblk);
	((uint16_t *) newoffs)[pos] = gbt_tid_offset(tid) |
		((gbt_tid_flags(tid) & GBT_TID_FLAG_NEGZERO) ? GBT_POST_NEGZERO : 0);

	/* the lists' starts, and a new key with its (empty) list */
	if (newgroup)
	{
		memmove(&p.keys[g + 1], &p.keys[g], sizeof(uint64_t) * (h->ngroups - g));
		p.keys[g] = key;
		for (int s = h->gcap; s > g; s--)
			p.start[s] = p.start[s - 1] + 1;
		p.start[g] = (uint16_t) pos;
		h->ngroups++;
		for (int d = 0; d < h->gcap / GBT_BLOCK_SLOTS; d++)
			p.dir[d] = p.keys[d * GBT_BLOCK_SLOTS + GBT_BLOCK_SLOTS - 1];
	}
	else
		for (int s = g + 1; s <= h->gcap; s++)
			p.start[s]++;
	h->nentries = (uint16_t) (n + 1);
	op->nused = (uint16_t) (n + 1);
	return true;
}

/* Verify a posting leaf: NULL if sound, else what is wrong. */
const char *
gbt_post_check(char *page)
{
	GbtPageOpaque op = gbt_page_opaque(page);
	GbtPostHeader *h = (GbtPostHeader *) (page + GBT_BODY_OFFSET);
	GbtPost		p;
	uint64_t	pt = 0;

	if (!(op->flags & GBT_F_LEAF) || op->nslots != 0)
		return "posting form on a page that is not a leaf";
	if (h->ngroups > GBT_POST_MAX_GROUPS || h->nentries > GBT_POST_MAX_ENTRIES ||
		h->gcap != gbt_post_gcap(h->ngroups) || h->ngroups > h->nentries ||
		(h->ngroups == 0) != (h->nentries == 0) || h->wide > 1 ||
		gbt_post_size(h->ngroups, h->nentries, h->wide) > GBT_POST_END)
		return "posting header out of range";
	if (h->nentries != op->nused)
		return "posting entry count does not match the page's";
	gbt_post_view(page, &p);
	if (p.start[0] != 0 || p.start[h->ngroups] != h->nentries)
		return "posting lists do not cover the entries";
	for (int g = 0; g < h->ngroups; g++)
	{
		if (p.start[g + 1] <= p.start[g])
			return "empty or reversed posting list";
		if (g > 0 && p.keys[g] <= p.keys[g - 1])
			return "posting keys out of order";
		for (int i = p.start[g]; i < p.start[g + 1]; i++)
		{
			uint64_t	t = gbt_post_tid(&p, i);

			if (i > p.start[g] && t <= pt)
				return "posting TIDs out of order";
			if (gbt_tid_offset(t) == 0)
				return "posting TID with offset 0";
			pt = t;
		}
	}
	for (int s = h->ngroups; s < h->gcap; s++)
		if (p.keys[s] != GBT_SENTINEL)
			return "posting key padding is not the sentinel";
	for (int b = 0; b < GBT_DIR_SIZE; b++)
	{
		uint64_t	expect = b < h->gcap / GBT_BLOCK_SLOTS ?
			p.keys[b * GBT_BLOCK_SLOTS + GBT_BLOCK_SLOTS - 1] : GBT_SENTINEL;

		if (p.dir[b] != expect)
			return "directory entry does not match its block";
	}
	return NULL;
}

/* A leaf's entries in order, either form; returns their number. */
int
gbt_leaf_extract(char *page, uint64_t *keys, uint64_t *tids)
{
	GbtNode		node;

	if (gbt_page_is_posting(page))
		return gbt_post_decode(page, keys, tids);
	gbt_node_view(page, &node);
	return gbt_node_extract(&node, keys, tids, NULL);
}

/*
 * Lay out n sorted entries on a leaf formatted afresh: the plain form when
 * they fit its slots, else the posting form (the caller made sure they fit
 * it).  Only the count decides, so redo makes the same choice.
 */
void
gbt_leaf_fill(char *page, int n, const uint64_t *keys, const uint64_t *tids, bool spread)
{
	GbtNode		node;

	if (n > GBT_LEAF_SLOTS)
	{
		gbt_post_encode(page, n, keys, tids);
		return;
	}
	gbt_node_view(page, &node);
	gbt_node_load_spread(&node, n, keys, tids, NULL, spread);
}

/*
 * Format a leaf of nwords words afresh for a rewrite of its entries, its
 * special space (bounds, links, flags but the form's) kept, and its layout
 * (GBT_F_DIRFIT or not: the page's, not gbtree.dir32_pages's, so that
 * the fit its writer measured holds, and redo lays it out alike).  The
 * dead-entry marks go: they described the old slots (and a posting body
 * overlays their space).  A multi-word leaf's later bound words
 * (xbounds) are the caller's to keep.
 */
void
gbt_leaf_reformat(char *page, int nwords)
{
	GbtPageOpaqueData old = *gbt_page_opaque(page);
	GbtPageOpaque op;

	gbt_node_format_layout(page, true, old.level,
						   old.flags & ~(GBT_F_LEAF | GBT_F_POSTING), nwords);
	op = gbt_page_opaque(page);
	op->hikey = old.hikey;
	op->hitid = old.hitid;
	op->lowkey = old.lowkey;
	op->lowtid = old.lowtid;
	op->rightlink = old.rightlink;
	op->leftlink = old.leftlink;
	op->xact = old.xact;
	gbt_leaf_clear_dead(page);
}

/* Rewrite a leaf in place with n sorted entries (gbt_leaf_fill's choice of form). */
void
gbt_leaf_rewrite(char *page, int n, const uint64_t *keys, const uint64_t *tids, bool spread)
{
	gbt_leaf_reformat(page, 1);
	gbt_leaf_fill(page, n, keys, tids, spread);
}

/* The key of a posting leaf's entry i */
uint64_t
gbt_post_key_at(const GbtPost *p, int i)
{
	int			lo = 0,
				hi = p->hdr->ngroups - 1;

	/* the last group starting at or before i */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;

		if (p->start[mid] <= i)
			lo = mid;
		else
			hi = mid - 1;
	}
	return p->keys[lo];
}
