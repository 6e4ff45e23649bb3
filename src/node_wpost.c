/*-------------------------------------------------------------------------
 *
 * node_wpost.c
 *	  The posting form of a multi-word leaf (src/README, "Deduplication"):
 *	  each distinct key's words once, then the sorted TIDs of each key, coded
 *	  as node_post.c codes one-word posting leaves.  The body ends where
 *	  the plain layout of the page's word count keeps its bounds' later
 *	  words (xbounds) and dead marks, so that every reader still finds a
 *	  page's bounds where it looks for them.
 *
 *	  Body, from GBT_BODY_OFFSET, each array 8-aligned:
 *		GbtWPostHeader
 *		keys[ngroups * nwords]	each distinct key's words, ascending
 *		start[ngroups + 1]		uint16: key g's TIDs are [start[g], start[g + 1])
 *		blocks[nentries]		uint16 deltas from baseblk, or whole uint32
 *		offs[nentries]			uint16 offsets
 *		tflags[nentries]		uint16 TID flags (a float column's -0), only
 *								when some entry has any
 *
 * A multi-word tree whose key fits one word ((int2, date)) has one-word
 *	  pages, whose posting form is node_post.c's: every function here that
 *	  is given one word (nw 1) or a page of one word (keywords 0) takes
 *	  that form instead, so the multi-word code writes and reads both
 *	  through these.  Its TIDs keep only the -0.0 flag of a one-column
 *	  key: a key of several columns that fits one word has no float
 *	  column (a float takes 64 bits), whose -0 its TID would flag.
 *
 * Plain C, shared by the access method and the unit tests.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "gbtree_node.h"
#include "gbtree_keyshape.h"
#include "gbtree_wpost.h"

/* the plain layout of a leaf of nwords words and flags, on a page of its own */
static char *
plain_layout(int nwords, uint16_t flags, GbtNode *node)
{
	static char page[GBT_PAGE_SIZE];

	gbt_node_view_words_as(page, node, true, nwords,
						   (uint16_t) (flags & ~(GBT_F_POSTING | GBT_F_TAILS | GBT_F_TAILS_FEW)));
	return page;
}

/* where the plain layout of a leaf of nwords words and flags keeps xbounds */
int
gbt_wpost_limit(int nwords, uint16_t flags)
{
	GbtNode		node;
	char	   *page;

	if (nwords == 1)
		return GBT_POST_END;
	page = plain_layout(nwords, flags, &node);
	return (int) ((char *) node.xbounds - page);
}

/* whether the page is a one-word page, whose posting form is node_post.c's */
static inline bool
one_word(const char *page)
{
	return gbt_page_opaque((char *) page)->keywords == 0;
}

/* node_post.c's arrays of n entries (a key and the TID each) */
static uint64_t one_keys[GBT_POST_MAX_ENTRIES];
static uint64_t one_tids[GBT_POST_MAX_ENTRIES];

static void
one_word_split(int n, const uint64_t *e)
{
	for (int i = 0; i < n; i++)
	{
		one_keys[i] = e[2 * i];
		one_tids[i] = e[2 * i + 1];
	}
}

static size_t
a8(size_t n)
{
	return (n + 7) & ~(size_t) 7;
}

/* bytes from the page start to the end of a body of this shape */
size_t
gbt_wpost_size(int nwords, int ngroups, int nentries, bool wideblk, bool tflags)
{
	if (nwords == 1)
		return gbt_post_size(ngroups, nentries, wideblk);
	return GBT_BODY_OFFSET + sizeof(GbtWPostHeader) +
		(size_t) ngroups * nwords * 8 +
		a8((size_t) (ngroups + 1) * 2) +
		a8((size_t) nentries * (wideblk ? 4 : 2)) +
		a8((size_t) nentries * 2) +
		(tflags ? a8((size_t) nentries * 2) : 0);
}

/* the shape of n sorted entries (nwords words and the TID each) */
static void
wpost_shape(int n, int nw, const uint64_t *e, int *ngroups, bool *wideblk, bool *tflags,
			uint32_t *baseblk)
{
	uint32_t	lo = UINT32_MAX,
				hi = 0;
	int			g = 0;
	bool		f = false;

	for (int i = 0; i < n; i++)
	{
		const uint64_t *x = &e[(size_t) i * (nw + 1)];
		uint32_t	b = gbt_tid_block(x[nw]);

		if (i == 0 || gbt_words_cmp(x, x - (nw + 1), nw) != 0)
			g++;
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
		f |= gbt_tid_flags(x[nw]) != 0;
	}
	*ngroups = g;
	*wideblk = n > 0 && hi - lo > UINT16_MAX;
	*tflags = f;
	*baseblk = n > 0 ? lo : 0;
}

/* Do n sorted entries fit a leaf of nwords words and flags in posting form? */
bool
gbt_wpost_fits(int n, int nw, const uint64_t *e, uint16_t flags)
{
	int			g;
	bool		wideblk,
				tf;
	uint32_t	base;

	if (n > GBT_LEAF_MAX_ENTRIES)
		return false;
	if (nw == 1)
	{
		one_word_split(n, e);
		return gbt_post_fits(n, one_keys, one_tids);
	}
	wpost_shape(n, nw, e, &g, &wideblk, &tf, &base);
	return gbt_wpost_size(nw, g, n, wideblk, tf) <= (size_t) gbt_wpost_limit(nw, flags);
}

void
gbt_wpost_view(char *page, GbtWPost *p)
{
	GbtWPostHeader *h = (GbtWPostHeader *) (page + GBT_BODY_OFFSET);
	char	   *c = page + GBT_BODY_OFFSET + sizeof(GbtWPostHeader);
	int			n = h->nentries;

	p->hdr = h;
	p->keys = (uint64_t *) c;
	c += (size_t) h->ngroups * h->nwords * 8;
	p->start = (uint16_t *) c;
	c += a8((size_t) (h->ngroups + 1) * 2);
	p->blocks16 = (h->flags & GBT_WPOST_WIDEBLK) ? NULL : (uint16_t *) c;
	p->blocks32 = (h->flags & GBT_WPOST_WIDEBLK) ? (uint32_t *) c : NULL;
	c += a8((size_t) n * ((h->flags & GBT_WPOST_WIDEBLK) ? 4 : 2));
	p->offs = (uint16_t *) c;
	c += a8((size_t) n * 2);
	p->tflags = (h->flags & GBT_WPOST_TFLAGS) ? (uint16_t *) c : NULL;
}

uint64_t
gbt_wpost_tid(const GbtWPost *p, int i)
{
	uint32_t	b = p->blocks32 ? p->blocks32[i] : p->hdr->baseblk + p->blocks16[i];

	return gbt_tid_pack(b, p->offs[i], p->tflags ? p->tflags[i] : 0);
}

/*
 * Lay out n sorted entries (which gbt_wpost_fits) in posting form on a
 * formatted multi-word leaf: its special space and bounds stay.
 */
void
gbt_wpost_encode(char *page, int n, int nw, const uint64_t *e)
{
	GbtPageOpaque op = gbt_page_opaque(page);
	GbtWPostHeader *h = (GbtWPostHeader *) (page + GBT_BODY_OFFSET);
	int			limit = gbt_wpost_limit(nw, op->flags);
	GbtWPost	p;
	int			g,
				gi = -1;
	bool		wideblk,
				tf;
	uint32_t	base;

	if (nw == 1)
	{
		one_word_split(n, e);
		gbt_post_encode(page, n, one_keys, one_tids);
		return;
	}
	wpost_shape(n, nw, e, &g, &wideblk, &tf, &base);
	memset(page + GBT_BODY_OFFSET, 0, limit - GBT_BODY_OFFSET);
	h->ngroups = (uint16_t) g;
	h->nentries = (uint16_t) n;
	h->nwords = (uint16_t) nw;
	h->flags = (wideblk ? GBT_WPOST_WIDEBLK : 0) | (tf ? GBT_WPOST_TFLAGS : 0);
	h->baseblk = base;
	gbt_wpost_view(page, &p);
	for (int i = 0; i < n; i++)
	{
		const uint64_t *x = &e[(size_t) i * (nw + 1)];
		uint64_t	t = x[nw];

		if (i == 0 || gbt_words_cmp(x, x - (nw + 1), nw) != 0)
		{
			memcpy(&p.keys[(size_t) ++gi * nw], x, sizeof(uint64_t) * nw);
			p.start[gi] = (uint16_t) i;
		}
		if (wideblk)
			p.blocks32[i] = gbt_tid_block(t);
		else
			p.blocks16[i] = (uint16_t) (gbt_tid_block(t) - base);
		p.offs[i] = gbt_tid_offset(t);
		if (tf)
			p.tflags[i] = gbt_tid_flags(t);
	}
	p.start[g] = (uint16_t) n;
	op->flags |= GBT_F_POSTING;
	op->nslots = 0;
	op->nused = (uint16_t) n;
}

/* A posting leaf's entries in order (nwords words and the TID each) */
int
gbt_wpost_decode(char *page, uint64_t *e)
{
	GbtWPost	p;
	int			nw;

	if (one_word(page))
	{
		int			n = gbt_post_decode(page, one_keys, one_tids);

		for (int i = 0; i < n; i++)
		{
			e[2 * i] = one_keys[i];
			e[2 * i + 1] = one_tids[i];
		}
		return n;
	}
	gbt_wpost_view(page, &p);
	nw = p.hdr->nwords;
	for (int g = 0; g < p.hdr->ngroups; g++)
		for (int i = p.start[g]; i < p.start[g + 1]; i++)
		{
			memcpy(&e[(size_t) i * (nw + 1)], &p.keys[(size_t) g * nw], sizeof(uint64_t) * nw);
			e[(size_t) i * (nw + 1) + nw] = gbt_wpost_tid(&p, i);
		}
	return p.hdr->nentries;
}

/* the first group whose words are >= key */
int
gbt_wpost_lower_bound_group(const GbtWPost *p, const uint64_t *key)
{
	int			lo = 0,
				hi = p->hdr->ngroups,
				nw = p->hdr->nwords;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (gbt_words_cmp(&p->keys[(size_t) mid * nw], key, nw) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the first entry >= (key, tid), as an index into the TIDs */
int
gbt_wpost_lower_bound_entry(const GbtWPost *p, const uint64_t *key, uint64_t tid)
{
	int			nw = p->hdr->nwords;
	int			g = gbt_wpost_lower_bound_group(p, key);
	int			lo,
				hi;

	if (g >= p->hdr->ngroups)
		return p->hdr->nentries;
	lo = p->start[g];
	if (gbt_words_cmp(&p->keys[(size_t) g * nw], key, nw) != 0)
		return lo;
	hi = p->start[g + 1];
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (gbt_wpost_tid(p, mid) < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Insert (key, tid) into the posting leaf where it stands, writing exactly
 * the bytes gbt_wpost_encode of its entries with the new one would on the
 * page formatted afresh (node_post.c's gbt_post_insert_inplace does the
 * same for one-word leaves): the TIDs after it move up one, the later
 * arrays by 8 bytes where the one before grows past an 8-byte boundary.
 * An entry the page holds already is not doubled (true, nothing written).
 * Only apply writes; without it, whether it would.  False (nothing
 * written) where only a rewrite can take it: a key the page lacks, the
 * plain form's count or fewer entries after it, a heap block below the
 * page's base (narrow: past its 16-bit span), TID flags where the page
 * stores none, or no room.
 */
bool
gbt_wpost_insert_inplace(char *page, const uint64_t *key, uint64_t tid, bool apply)
{
	GbtPageOpaque op = gbt_page_opaque(page);
	GbtWPost	p;
	GbtWPostHeader *h;
	int			n,
				nw,
				g,
				pos;
	uint32_t	b = gbt_tid_block(tid);
	uint16_t	tf = gbt_tid_flags(tid);
	bool		wideblk,
				hastf;
	size_t		wb;
	char	   *blocks,
			   *offs,
			   *tflags;

	if (!(op->flags & GBT_F_POSTING))
		return false;
	if (one_word(page))
		return gbt_post_insert_inplace(page, key[0], tid, apply);
	gbt_wpost_view(page, &p);
	h = p.hdr;
	n = h->nentries;
	nw = h->nwords;
	wideblk = (h->flags & GBT_WPOST_WIDEBLK) != 0;
	hastf = (h->flags & GBT_WPOST_TFLAGS) != 0;
	if (n + 1 <= gbt_words_slots_of(true, nw, op->flags & ~(GBT_F_POSTING | GBT_F_TAILS |
																  GBT_F_TAILS_FEW)) ||
		n + 1 > GBT_LEAF_MAX_ENTRIES || b < h->baseblk ||
		(!wideblk && b - h->baseblk > UINT16_MAX) || (tf != 0 && !hastf))
		return false;
	g = gbt_wpost_lower_bound_group(&p, key);
	if (g >= h->ngroups || gbt_words_cmp(&p.keys[(size_t) g * nw], key, nw) != 0 ||
		gbt_wpost_size(nw, h->ngroups, n + 1, wideblk, hastf) >
		(size_t) gbt_wpost_limit(nw, op->flags))
		return false;
	pos = gbt_wpost_lower_bound_entry(&p, key, tid);
	if (!apply || (pos < p.start[g + 1] && gbt_wpost_tid(&p, pos) == tid))
		return true;

	/* the arrays from the last: each may grow into the next one's old place */
	wb = wideblk ? 4 : 2;
	blocks = wideblk ? (char *) p.blocks32 : (char *) p.blocks16;
	offs = blocks + a8((size_t) (n + 1) * wb);
	tflags = offs + a8((size_t) (n + 1) * 2);
	if (hastf)
	{
		memmove(tflags + (size_t) (pos + 1) * 2, (char *) p.tflags + (size_t) pos * 2,
				(size_t) (n - pos) * 2);
		memmove(tflags, p.tflags, (size_t) pos * 2);
	}
	memmove(offs + (size_t) (pos + 1) * 2, (char *) p.offs + (size_t) pos * 2, (size_t) (n - pos) * 2);
	memmove(offs, p.offs, (size_t) pos * 2);
	memmove(blocks + (size_t) (pos + 1) * wb, blocks + (size_t) pos * wb, (size_t) (n - pos) * wb);
	/* padding as the encoder leaves it, where an array's old bytes were */
	memset(blocks + (size_t) (n + 1) * wb, 0, offs - (blocks + (size_t) (n + 1) * wb));
	if (hastf)
		memset(offs + (size_t) (n + 1) * 2, 0, tflags - (offs + (size_t) (n + 1) * 2));
	if (wideblk)
		((uint32_t *) blocks)[pos] = b;
	else
		((uint16_t *) blocks)[pos] = (uint16_t) (b - h->baseblk);
	((uint16_t *) offs)[pos] = gbt_tid_offset(tid);
	if (hastf)
		((uint16_t *) tflags)[pos] = tf;
	for (int s = g + 1; s <= h->ngroups; s++)
		p.start[s]++;
	h->nentries = (uint16_t) (n + 1);
	op->nused = (uint16_t) (n + 1);
	return true;
}

/* Verify a multi-word posting leaf: NULL if sound, else what is wrong. */
const char *
gbt_wpost_check(char *page)
{
	GbtPageOpaque op = gbt_page_opaque(page);
	GbtWPostHeader *h = (GbtWPostHeader *) (page + GBT_BODY_OFFSET);
	GbtWPost	p;
	int			nw = h->nwords;
	uint64_t	pt = 0;

	if (one_word(page))
		return gbt_post_check(page);
	if (!(op->flags & GBT_F_LEAF) || op->nslots != 0 || op->keywords < 2)
		return "posting form on a page that is not a multi-word leaf";
	if (nw != op->keywords || h->ngroups > h->nentries ||
		h->nentries > GBT_LEAF_MAX_ENTRIES || (h->ngroups == 0) != (h->nentries == 0) ||
		(h->flags & ~(GBT_WPOST_WIDEBLK | GBT_WPOST_TFLAGS)) != 0 ||
		gbt_wpost_size(nw, h->ngroups, h->nentries, (h->flags & GBT_WPOST_WIDEBLK) != 0,
					   (h->flags & GBT_WPOST_TFLAGS) != 0) > (size_t) gbt_wpost_limit(nw, op->flags))
		return "posting header out of range";
	if (h->nentries != op->nused)
		return "posting entry count does not match the page's";
	gbt_wpost_view(page, &p);
	if (p.start[0] != 0 || p.start[h->ngroups] != h->nentries)
		return "posting lists do not cover the entries";
	for (int g = 0; g < h->ngroups; g++)
	{
		if (p.start[g + 1] <= p.start[g])
			return "empty or reversed posting list";
		if (g > 0 && gbt_words_cmp(&p.keys[(size_t) (g - 1) * nw], &p.keys[(size_t) g * nw], nw) >= 0)
			return "posting keys out of order";
		for (int i = p.start[g]; i < p.start[g + 1]; i++)
		{
			uint64_t	t = gbt_wpost_tid(&p, i);

			if (i > p.start[g] && t <= pt)
				return "posting TIDs out of order";
			if (gbt_tid_offset(t) == 0)
				return "posting TID with offset 0";
			pt = t;
		}
	}
	return NULL;
}
