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
 * Rewrite a leaf in place with n sorted entries (gbt_leaf_fill's choice of
 * form), its special space kept.  The dead-entry marks go: they described
 * the old slots (and a posting body overlays their space).
 */
void
gbt_leaf_rewrite(char *page, int n, const uint64_t *keys, const uint64_t *tids, bool spread)
{
	GbtPageOpaqueData old = *gbt_page_opaque(page);
	GbtPageOpaque op;

	gbt_node_format(page, true, old.level,
					old.flags & ~(GBT_F_LEAF | GBT_F_POSTING));
	op = gbt_page_opaque(page);
	op->hikey = old.hikey;
	op->hitid = old.hitid;
	op->lowkey = old.lowkey;
	op->lowtid = old.lowtid;
	op->rightlink = old.rightlink;
	op->leftlink = old.leftlink;
	op->xact = old.xact;
	gbt_leaf_clear_dead(page);
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
