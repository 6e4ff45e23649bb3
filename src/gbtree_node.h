/*-------------------------------------------------------------------------
 *
 * gbtree_node.h
 *	  Layout of a gbtree page body and the in-page operations on it.
 *
 * This header is plain C (no PostgreSQL headers) so that the same layout
 * and routines serve the access method, the C unit tests and, later, the
 * CUDA kernels.  See src/README for the format.
 *
 * A page is an 8 KB PostgreSQL page: the standard 24-byte page header, our
 * node body at GBT_BODY_OFFSET, and a GbtPageOpaqueData in the special
 * space at the end.  The body holds "slots": parallel arrays of normalized
 * keys and packed heap TIDs (plus child block numbers on inner pages),
 * grouped in blocks of 16 slots.  Slots are either used or gaps; a gap
 * holds a copy of the next used slot's key and TID (trailing gaps hold
 * GBT_SENTINEL), so both arrays stay non-decreasing and a branchless count
 * of "slots below x" is a valid lower bound even with gaps.  dir[b] is the
 * key of the last slot of block b (unused directory entries hold
 * GBT_SENTINEL), which makes the in-page search two steps.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_NODE_H
#define GBTREE_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define GBT_PAGE_SIZE		8192
#define GBT_BLOCK_SLOTS		16
#define GBT_DIR_SIZE		32	/* directory entries, padded */

#define GBT_LEAF_BLOCKS		30
#define GBT_INNER_BLOCKS	24
#define GBT_LEAF_SLOTS		(GBT_LEAF_BLOCKS * GBT_BLOCK_SLOTS)		/* 480 */
#define GBT_INNER_SLOTS		(GBT_INNER_BLOCKS * GBT_BLOCK_SLOTS)	/* 384 */
#define GBT_MAX_SLOTS		GBT_LEAF_SLOTS
#define GBT_BITMAP_WORDS	((GBT_MAX_SLOTS + 63) / 64)	/* 8 */

/* body starts after the page header, cache-line aligned within the page */
#define GBT_BODY_OFFSET		64

/* value of trailing gaps and unused directory entries */
#define GBT_SENTINEL		UINT64_MAX

/*
 * Packed heap TID: block (32 bits) | offset (16 bits) | flags (16 bits).
 * Ordering packed TIDs orders by (block, offset).  A real TID never packs
 * to GBT_SENTINEL, because block 0xFFFFFFFF is InvalidBlockNumber.
 */
#define GBT_TID_FLAG_NEGZERO	0x0001	/* float key was -0.0 */
#define GBT_TID_FLAGS_MASK		UINT64_C(0xFFFF)

static inline uint64_t
gbt_tid_pack(uint32_t block, uint16_t offset, uint16_t flags)
{
	return ((uint64_t) block << 32) | ((uint64_t) offset << 16) | flags;
}

static inline uint32_t
gbt_tid_block(uint64_t tid)
{
	return (uint32_t) (tid >> 32);
}

static inline uint16_t
gbt_tid_offset(uint64_t tid)
{
	return (uint16_t) ((tid >> 16) & 0xFFFF);
}

/*
 * Whether heap TID tid lies just after before (the same heap block, or the
 * first item of the next): the row came in just after the other, as
 * nbtree's _bt_adjacenthtid has it.
 */
static inline bool
gbt_tid_follows(uint64_t before, uint64_t tid)
{
	return gbt_tid_block(before) == gbt_tid_block(tid) ||
		(gbt_tid_block(before) + 1 == gbt_tid_block(tid) && gbt_tid_offset(tid) == 1);
}

static inline uint16_t
gbt_tid_flags(uint64_t tid)
{
	return (uint16_t) (tid & GBT_TID_FLAGS_MASK);
}

/* Special space of every gbtree page (MAXALIGNed size: 64 bytes). */
typedef struct GbtPageOpaqueData
{
	uint64_t	hikey;			/* high key (entries are < (hikey, hitid)) */
	uint64_t	hitid;			/* ... not valid on the rightmost page */
	uint64_t	lowkey;			/* low key: entries are >= (lowkey, lowtid), */
	uint64_t	lowtid;			/* the left sibling's high key; (0, 0) = -inf */
	uint32_t	rightlink;		/* right sibling, 0xFFFFFFFF if none */
	uint32_t	leftlink;		/* left sibling (leaves), 0xFFFFFFFF if none */
	uint16_t	level;			/* 0 for leaves */
	uint16_t	flags;			/* GBT_F_* */
	uint16_t	nused;			/* used slots */
	uint16_t	nslots;			/* slot capacity of this page */
	uint64_t	xact;			/* deleted pages: next full xid at deletion */
	uint16_t	taillow;		/* GBT_F_TAILS: start of the tail area */
	uint16_t	tailfree;		/* GBT_F_TAILS: bytes of tails no slot holds */
	uint16_t	keywords;		/* words a key (0 on older pages: one) */
	uint16_t	page_id;		/* GBT_PAGE_ID, for tools and checks */
} GbtPageOpaqueData;

typedef GbtPageOpaqueData *GbtPageOpaque;

#define GBT_OPAQUE_SIZE		64
#define GBT_OPAQUE_OFFSET	(GBT_PAGE_SIZE - GBT_OPAQUE_SIZE)

#define GBT_F_LEAF			0x0001
#define GBT_F_ROOT			0x0002
#define GBT_F_META			0x0004
#define GBT_F_NULLTREE		0x0008	/* page of the tree of NULL entries */
#define GBT_F_RIGHTMOST		0x0010	/* no right sibling: hikey is +inf */
#define GBT_F_DELETED		0x0020	/* unlinked; reusable when safe */
#define GBT_F_POSTING		0x0040	/* leaf in posting form (below) */
#define GBT_F_TAILS			0x0080	/* multi-word page whose entries carry tails */
#define GBT_F_TAILS_FEW		0x0100	/* GBT_F_TAILS with few slots: long tails */
#define GBT_F_DIRFIT		0x0200	/* multi-word page, later words' directories
									 * sized to its blocks (gbt_xdir_entries) */

#define GBT_PAGE_ID			0xFB7E

#define GBT_NO_BLOCK		UINT32_C(0xFFFFFFFF)

/*
 * Fixed blocks: the roots never move (root splits happen in place), and
 * no right-link or downlink leads to a block below GBT_FIRST_FREE_BLKNO.
 * Here rather than in gbtree.h so that the CUDA kernels, their tests and
 * the CPU stand-in check links against the same numbers.
 */
#define GBT_META_BLKNO		0
#define GBT_ROOT_BLKNO		1
#define GBT_NULLROOT_BLKNO	2
#define GBT_FIRST_FREE_BLKNO 3

/*
 * Multi-word keys (src/README, "Multi-word keys"): a key of nwords words
 * keeps word 0 where a one-word page has it and each later word in a
 * parallel array of its own, after the used bitmap; the directory gets
 * one such array a word, and the high and low keys' later words follow
 * them.  Leaves keep their dead marks last, past pd_lower.  Slots a page
 * for 1 to 4 words, in whole blocks, as gbt_node_format_words lays out
 * pages now (GBT_F_DIRFIT: a later word's directory has 16 entries where
 * the page has at most 16 blocks):
 */
#ifndef GBT_MAX_KEY_WORDS
#define GBT_MAX_KEY_WORDS	4
#endif
#define GBT_MAX_SLOT_WORDS	704		/* slots x words, the most any page holds */

static inline int
gbt_words_slots_dirfit(bool leaf, int nwords)
{
	if (leaf)
		return nwords <= 1 ? 480 : nwords == 2 ? 304 : nwords == 3 ? 224 : 176;
	return nwords <= 1 ? 384 : nwords == 2 ? 256 : nwords == 3 ? 192 : 160;
}

/*
 * Pages written before GBT_F_DIRFIT kept GBT_DIR_SIZE entries in every
 * word's directory, and so fewer slots at three and four words.  They are
 * read and written as they are; a page formatted again (a split, a build)
 * takes the layout above.
 */
static inline int
gbt_words_slots_dir32(bool leaf, int nwords)
{
	if (leaf)
		return nwords <= 1 ? 480 : nwords == 2 ? 304 : nwords == 3 ? 208 : 160;
	return nwords <= 1 ? 384 : nwords == 2 ? 256 : nwords == 3 ? 192 : 144;
}

/* testing (gbtree.dir32_pages): pages are formatted in the older layout */
extern bool gbt_format_dir32;

/* the slots of a page gbt_node_format_words formats now */
static inline int
gbt_leaf_slots_for(int nwords)
{
	return gbt_format_dir32 ? gbt_words_slots_dir32(true, nwords) :
		gbt_words_slots_dirfit(true, nwords);
}

static inline int
gbt_inner_slots_for(int nwords)
{
	return gbt_format_dir32 ? gbt_words_slots_dir32(false, nwords) :
		gbt_words_slots_dirfit(false, nwords);
}

/*
 * The entries a page of `slots` takes at fill factor pct: btree adds to a
 * page until less than (100 - pct)% of it is free, so the count rounds up
 * (224 slots at 90: 202, as many 32-byte tuples as btree puts on a leaf).
 */
static inline size_t
gbt_fill_slots(size_t slots, int pct)
{
	return (slots * (size_t) pct + 99) / 100;
}

/*
 * Entries of each later word's directory: 16 (one SIMD count) where the
 * page has at most 16 blocks and its flags say so, else GBT_DIR_SIZE.
 */
static inline int
gbt_xdir_entries(int nslots, uint16_t flags)
{
	return (flags & GBT_F_DIRFIT) && nslots <= 16 * GBT_BLOCK_SLOTS ? 16 : GBT_DIR_SIZE;
}

static inline int
gbt_page_nwords(const GbtPageOpaqueData *op)
{
	return op->keywords > 1 ? op->keywords : 1;
}

/*
 * A view of a page body.  The arrays point into the page itself.
 */
typedef struct GbtNode
{
	uint64_t   *keys;			/* [nslots], word 0 of each key */
	uint64_t   *tids;			/* [nslots] */
	uint32_t   *child;			/* [nslots], inner pages only, else NULL */
	uint64_t   *dir;			/* [GBT_DIR_SIZE] */
	uint64_t   *used;			/* bitmap [GBT_BITMAP_WORDS] */
	GbtPageOpaque opaque;
	int			nslots;
	int			nblocks;
	int			nwords;			/* words a key */
	int			xdirlen;		/* entries of each xdir (gbt_xdir_entries) */
	uint64_t   *xkeys[GBT_MAX_KEY_WORDS - 1];	/* words 1.. [nslots] */
	uint64_t   *xdir[GBT_MAX_KEY_WORDS - 1];	/* words 1.. [xdirlen] */
	uint64_t   *xbounds;		/* words 1.. of the high key, then the low key's */
	uint16_t   *toff;			/* GBT_F_TAILS: [nslots] tail offsets, else NULL */
	uint16_t   *btoff;			/* GBT_F_TAILS: the high and low keys' tails */
	int			tailstart;		/* GBT_F_TAILS: end of the arrays (and dead marks) */
	/* the slots inserts changed since the view was made (none: lo > hi) */
	int			mod_lo;
	int			mod_hi;
} GbtNode;

/* byte offsets inside the page, for leaf and inner layout */
#define GBT_LEAF_KEYS_OFF	GBT_BODY_OFFSET
#define GBT_LEAF_TIDS_OFF	(GBT_LEAF_KEYS_OFF + GBT_LEAF_SLOTS * 8)
#define GBT_LEAF_DIR_OFF	(GBT_LEAF_TIDS_OFF + GBT_LEAF_SLOTS * 8)
#define GBT_LEAF_USED_OFF	(GBT_LEAF_DIR_OFF + GBT_DIR_SIZE * 8)
#define GBT_LEAF_END		(GBT_LEAF_USED_OFF + GBT_BITMAP_WORDS * 8)

#define GBT_INNER_KEYS_OFF	GBT_BODY_OFFSET
#define GBT_INNER_TIDS_OFF	(GBT_INNER_KEYS_OFF + GBT_INNER_SLOTS * 8)
#define GBT_INNER_CHILD_OFF (GBT_INNER_TIDS_OFF + GBT_INNER_SLOTS * 8)
#define GBT_INNER_DIR_OFF	(GBT_INNER_CHILD_OFF + GBT_INNER_SLOTS * 4)
#define GBT_INNER_USED_OFF	(GBT_INNER_DIR_OFF + GBT_DIR_SIZE * 8)
#define GBT_INNER_END		(GBT_INNER_USED_OFF + GBT_BITMAP_WORDS * 8)

/*
 * A leaf's dead-entry marks (src/README, "Dead entries"): bit s set means
 * the heap tuple of used slot s was found dead to every transaction.  They
 * lie past pd_lower, in the space PostgreSQL takes for unused: hints, never
 * WAL-logged, restored as zeros by full-page images and cleared by every
 * logged change of the leaf's entries, so a mark never outlives the slot
 * layout it was set for.
 */
#define GBT_LEAF_DEAD_OFF	GBT_LEAF_END
#define GBT_LEAF_DEAD_END	(GBT_LEAF_DEAD_OFF + GBT_BITMAP_WORDS * 8)

/* Both layouts end before the special space. */
typedef char gbt_static_assert_leaf[(GBT_LEAF_DEAD_END <= GBT_OPAQUE_OFFSET) ? 1 : -1];
typedef char gbt_static_assert_inner[(GBT_INNER_END <= GBT_OPAQUE_OFFSET) ? 1 : -1];
typedef char gbt_static_assert_opaque[(sizeof(GbtPageOpaqueData) == GBT_OPAQUE_SIZE) ? 1 : -1];

static inline GbtPageOpaque
gbt_page_opaque(char *page)
{
	return (GbtPageOpaque) (page + GBT_OPAQUE_OFFSET);
}

/*
 * Tails (src/README, "What is left", item 4): a page formatted with
 * GBT_F_TAILS holds fewer slots, and after its arrays a 16-bit offset a
 * slot (0: no tail) and one each for its high and low keys, then (leaves)
 * the dead marks; the tails themselves fill the page from opaque->taillow
 * up to the special space, each a 16-bit length and its bytes.  Slots
 * order by (words, tail, TID), tails by gbt_tail_cmp; a gap copies the
 * next slot's offset with its words, so the arrays stay non-decreasing.
 */
#define GBT_TAIL_LEAF_SLOTS		80
#define GBT_TAIL_INNER_SLOTS	64

/*
 * A tailed page of few slots (GBT_F_TAILS_FEW) gives the bytes of the
 * slots it lacks to its tails: the layout for long ones (hundreds of bytes
 * a value), where the standard one runs out of tail area with most slots
 * empty.
 */
#define GBT_TAIL_FEW_LEAF_SLOTS		32
#define GBT_TAIL_FEW_INNER_SLOTS	16

/* A tail as the node routines take and give it: len 0 is no tail. */
typedef struct GbtTail
{
	const unsigned char *data;
	int			len;
} GbtTail;

/*
 * Targets of searches: no tail; below every tail ({0}: a tail a value
 * carries is longer or starts higher); above every tail (0xFF bytes, more
 * than any tail has: gbt_tail_max).
 */
#define GBT_TAIL_HIGHEST_LEN	1400
extern const unsigned char gbt_tail_lowest_bytes[1];
extern const unsigned char gbt_tail_highest_bytes[GBT_TAIL_HIGHEST_LEN];
#define GBT_NO_TAIL			((GbtTail) {NULL, 0})
#define GBT_TAIL_LOWEST		((GbtTail) {gbt_tail_lowest_bytes, 1})
#define GBT_TAIL_HIGHEST	((GbtTail) {gbt_tail_highest_bytes, GBT_TAIL_HIGHEST_LEN})

/*
 * The order of tails: bytes as memcmp, a proper prefix first, and no tail
 * as the one-byte tail {128} (the encoding of cut values relies on it).
 */
static inline int
gbt_tail_cmp(const unsigned char *a, int alen, const unsigned char *b, int blen)
{
	static const unsigned char none = 128;
	int			n,
				c;

	if (alen == 0)
	{
		a = &none;
		alen = 1;
	}
	if (blen == 0)
	{
		b = &none;
		blen = 1;
	}
	n = alen < blen ? alen : blen;
	c = memcmp(a, b, (size_t) n);
	if (c != 0)
		return c < 0 ? -1 : 1;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* bytes a tail takes in the tail area */
static inline int
gbt_tail_space(int len)
{
	return len > 0 ? len + 2 : 0;
}

/* a tailed page's slots: the standard layout's, or few */
static inline int
gbt_tail_slots(bool leaf, bool few)
{
	if (few)
		return leaf ? GBT_TAIL_FEW_LEAF_SLOTS : GBT_TAIL_FEW_INNER_SLOTS;
	return leaf ? GBT_TAIL_LEAF_SLOTS : GBT_TAIL_INNER_SLOTS;
}

/* the slots of a multi-word page with these flags */
static inline int
gbt_words_slots_of(bool leaf, int nwords, uint16_t flags)
{
	if (flags & GBT_F_TAILS)
		return gbt_tail_slots(leaf, (flags & GBT_F_TAILS_FEW) != 0);
	if (flags & GBT_F_DIRFIT)
		return gbt_words_slots_dirfit(leaf, nwords);
	return gbt_words_slots_dir32(leaf, nwords);
}

/*
 * The end of a GBT_F_TAILS page's arrays (and dead marks), where tails may
 * start, for a page of these flags (GBT_F_TAILS_FEW, GBT_F_DIRFIT).
 */
static inline int
gbt_tail_start_as(bool leaf, int nwords, uint16_t flags)
{
	int			ns = gbt_tail_slots(leaf, (flags & GBT_F_TAILS_FEW) != 0);

	return GBT_BODY_OFFSET + 16 * ns + (leaf ? 0 : 4 * ns) + GBT_DIR_SIZE * 8 +
		GBT_BITMAP_WORDS * 8 +
		(nwords - 1) * (8 * ns + 8 * gbt_xdir_entries(ns, flags) + 16) +
		2 * ns + 8 + (leaf ? GBT_BITMAP_WORDS * 8 : 0);
}

/* the same for a tailed page formatted now, with the standard slots or few */
static inline int
gbt_tail_start_few(bool leaf, int nwords, bool few)
{
	return gbt_tail_start_as(leaf, nwords,
							 (few ? GBT_F_TAILS_FEW : 0) | (gbt_format_dir32 ? 0 : GBT_F_DIRFIT));
}

/*
 * The longest tail an entry may have: two entries and both bounds must fit
 * a page, leaf or inner, so that any split leaves each half room.  Pages
 * written before GBT_F_DIRFIT have the least room, so they set it (872
 * bytes at four words, as it always was).
 */
static inline int
gbt_tail_max(int nwords)
{
	int			leaf = GBT_OPAQUE_OFFSET - gbt_tail_start_as(true, nwords, 0);
	int			inner = GBT_OPAQUE_OFFSET - gbt_tail_start_as(false, nwords, 0);

	return (leaf < inner ? leaf : inner) / 4 - 2;
}

/*
 * The tailed layout for n entries whose tails take bytes of tail area,
 * with bounds whose tails take boundbytes: the flags of the standard
 * layout or of few slots, whichever fits and would hold more entries of
 * this average size (the standard one on a tie); 0 if neither fits.
 */
static inline uint16_t
gbt_tail_layout(int n, int bytes, int boundbytes, bool leaf, int nwords)
{
	uint16_t	best = 0;
	long		bestcap = -1;

	for (int few = 0; few < 2; few++)
	{
		int			slots = gbt_tail_slots(leaf, few);
		int			area = GBT_OPAQUE_OFFSET - gbt_tail_start_few(leaf, nwords, few);
		long		cap = slots;

		if (n > slots || bytes + boundbytes > area)
			continue;
		if (bytes > 0 && (long) (area - boundbytes) * n / bytes < cap)
			cap = (long) (area - boundbytes) * n / bytes;
		if (cap > bestcap)
		{
			bestcap = cap;
			best = GBT_F_TAILS | (few ? GBT_F_TAILS_FEW : 0);
		}
	}
	return best;
}

/*
 * Where a multi-word page's arrays lie (nwords > 1), by the layout its
 * flags give (GBT_F_TAILS, GBT_F_DIRFIT); the rest NULL.
 */
static inline void
gbt_node_view_words_as(char *page, GbtNode *node, bool leaf, int nwords, uint16_t flags)
{
	bool		tails = (flags & GBT_F_TAILS) != 0;
	int			ns = gbt_words_slots_of(leaf, nwords, flags);
	int			xdirlen = gbt_xdir_entries(ns, flags);
	size_t		off = GBT_BODY_OFFSET;

	node->keys = (uint64_t *) (page + off);
	off += 8 * (size_t) ns;
	node->tids = (uint64_t *) (page + off);
	off += 8 * (size_t) ns;
	node->child = NULL;
	if (!leaf)
	{
		node->child = (uint32_t *) (page + off);
		off += 4 * (size_t) ns;
	}
	node->dir = (uint64_t *) (page + off);
	off += GBT_DIR_SIZE * 8;
	node->used = (uint64_t *) (page + off);
	off += GBT_BITMAP_WORDS * 8;
	for (int k = 1; k < GBT_MAX_KEY_WORDS; k++)
	{
		node->xkeys[k - 1] = NULL;
		node->xdir[k - 1] = NULL;
		if (k < nwords)
		{
			node->xkeys[k - 1] = (uint64_t *) (page + off);
			off += 8 * (size_t) ns;
		}
	}
	for (int k = 1; k < nwords; k++)
	{
		node->xdir[k - 1] = (uint64_t *) (page + off);
		off += 8 * (size_t) xdirlen;
	}
	node->xbounds = nwords > 1 ? (uint64_t *) (page + off) : NULL;
	off += 16 * (size_t) (nwords - 1);
	node->toff = NULL;
	node->btoff = NULL;
	node->tailstart = 0;
	if (tails)
	{
		node->toff = (uint16_t *) (page + off);
		off += 2 * (size_t) ns;
		node->btoff = (uint16_t *) (page + off);
		off += 8;
		if (leaf)
			off += GBT_BITMAP_WORDS * 8;	/* the dead marks */
		node->tailstart = (int) off;
	}
	node->nslots = ns;
	node->nblocks = ns / GBT_BLOCK_SLOTS;
	node->xdirlen = xdirlen;
	node->nwords = nwords;
	node->mod_lo = ns;
	node->mod_hi = -1;
}

/* Build a view of an already formatted page. */
static inline void
gbt_node_view(char *page, GbtNode *node)
{
	GbtPageOpaque op = gbt_page_opaque(page);

	node->opaque = op;
	if (op->keywords > 1)
		gbt_node_view_words_as(page, node, (op->flags & GBT_F_LEAF) != 0, op->keywords,
							   op->flags);
	else if (op->flags & GBT_F_LEAF)
	{
		node->keys = (uint64_t *) (page + GBT_LEAF_KEYS_OFF);
		node->tids = (uint64_t *) (page + GBT_LEAF_TIDS_OFF);
		node->child = NULL;
		node->dir = (uint64_t *) (page + GBT_LEAF_DIR_OFF);
		node->used = (uint64_t *) (page + GBT_LEAF_USED_OFF);
		node->nslots = GBT_LEAF_SLOTS;
		node->xdirlen = 0;
		node->nwords = 1;
		node->toff = node->btoff = NULL;
		node->tailstart = 0;
	}
	else
	{
		node->keys = (uint64_t *) (page + GBT_INNER_KEYS_OFF);
		node->tids = (uint64_t *) (page + GBT_INNER_TIDS_OFF);
		node->child = (uint32_t *) (page + GBT_INNER_CHILD_OFF);
		node->dir = (uint64_t *) (page + GBT_INNER_DIR_OFF);
		node->used = (uint64_t *) (page + GBT_INNER_USED_OFF);
		node->nslots = GBT_INNER_SLOTS;
		node->xdirlen = 0;
		node->nwords = 1;
		node->toff = node->btoff = NULL;
		node->tailstart = 0;
	}
	node->nblocks = node->nslots / GBT_BLOCK_SLOTS;
	node->mod_lo = node->nslots;
	node->mod_hi = -1;
}

/* The dead-entry marks of a leaf page (GBT_LEAF_DEAD_OFF) */
static inline uint64_t *
gbt_leaf_dead(char *page)
{
	GbtPageOpaque op = gbt_page_opaque(page);
	int			nwords = gbt_page_nwords(op);
	GbtNode		node;

	if (nwords == 1)
		return (uint64_t *) (page + GBT_LEAF_DEAD_OFF);
	gbt_node_view_words_as(page, &node, true, nwords, op->flags);
	if (node.toff)
		return (uint64_t *) (page + node.tailstart - GBT_BITMAP_WORDS * 8);
	return node.xbounds + 2 * (nwords - 1);
}

static inline bool
gbt_leaf_has_dead(char *page)
{
	const uint64_t *dead = gbt_leaf_dead(page);
	uint64_t	any = 0;

	for (int w = 0; w < GBT_BITMAP_WORDS; w++)
		any |= dead[w];
	return any != 0;
}

static inline void
gbt_leaf_clear_dead(char *page)
{
	memset(gbt_leaf_dead(page), 0, GBT_BITMAP_WORDS * 8);
}

static inline bool
gbt_slot_used(const GbtNode *node, int slot)
{
	return (node->used[slot >> 6] >> (slot & 63)) & 1;
}

/* (k1, t1) < (k2, t2) */
static inline bool
gbt_entry_lt(uint64_t k1, uint64_t t1, uint64_t k2, uint64_t t2)
{
	return k1 < k2 || (k1 == k2 && t1 < t2);
}

/*
 * Posting form of a leaf (src/README, "Deduplication"): each distinct key
 * once, with the sorted list of its TIDs.  Body layout, from
 * GBT_BODY_OFFSET:
 *
 *	GbtPostHeader
 *	dir[GBT_DIR_SIZE]		last key of each 16-key block, GBT_SENTINEL beyond
 *	keys[gcap]				the distinct keys, ascending, GBT_SENTINEL-padded
 *	start[gcap + 1]			uint16: key g's TIDs are [start[g], start[g + 1])
 *	blocks[nentries]		heap block numbers: uint16 deltas from baseblk,
 *							or whole uint32 when the page's blocks span more
 *	offs[nentries]			offset | GBT_POST_NEGZERO
 *
 * each array starting 8-aligned.  The keys, dir and 16-key blocks are the
 * plain form's, so the same branchless SIMD counts find a key's group.
 * The page's nslots is 0 (no slot map: readers that only know the plain
 * form refuse the page instead of misreading it) and nused counts TIDs.
 * Every change rewrites the body from the entry list, so a page is a pure
 * function of its entries: redo repeats a change byte for byte.
 */
typedef struct GbtPostHeader
{
	uint16_t	ngroups;		/* distinct keys */
	uint16_t	nentries;		/* TIDs */
	uint16_t	gcap;			/* key slots: ngroups rounded up to 16 */
	uint16_t	wide;			/* blocks stored whole */
	uint32_t	baseblk;		/* least block, the base of 16-bit deltas */
	uint32_t	pad;
} GbtPostHeader;

#define GBT_POST_DIR_OFF	(GBT_BODY_OFFSET + 16)
#define GBT_POST_KEYS_OFF	(GBT_POST_DIR_OFF + GBT_DIR_SIZE * 8)
#define GBT_POST_END		GBT_OPAQUE_OFFSET
#define GBT_POST_MAX_GROUPS (GBT_DIR_SIZE * GBT_BLOCK_SLOTS)	/* 512 */
#define GBT_POST_NEGZERO	0x8000
/* TIDs a posting leaf holds at most (one key, narrow blocks: 1,898) */
#define GBT_POST_MAX_ENTRIES 2048
/* entries any leaf holds at most, either form */
#define GBT_LEAF_MAX_ENTRIES GBT_POST_MAX_ENTRIES

/* A view of a posting leaf's body */
typedef struct GbtPost
{
	GbtPostHeader *hdr;
	uint64_t   *dir;
	uint64_t   *keys;
	uint16_t   *start;
	uint16_t   *blocks16;		/* narrow, else NULL */
	uint32_t   *blocks32;		/* wide, else NULL */
	uint16_t   *offs;
} GbtPost;

static inline bool
gbt_page_is_posting(const char *page)
{
	return (gbt_page_opaque((char *) page)->flags & GBT_F_POSTING) != 0;
}

static inline size_t
gbt_post_align8(size_t n)
{
	return (n + 7) & ~(size_t) 7;
}

static inline int
gbt_post_gcap(int ngroups)
{
	int			g = (ngroups + GBT_BLOCK_SLOTS - 1) / GBT_BLOCK_SLOTS * GBT_BLOCK_SLOTS;

	return g < GBT_BLOCK_SLOTS ? GBT_BLOCK_SLOTS : g;
}

/* bytes from the page start to the end of a posting body of this shape */
static inline size_t
gbt_post_size(int ngroups, int nentries, bool wide)
{
	int			gcap = gbt_post_gcap(ngroups);

	return GBT_POST_KEYS_OFF + (size_t) gcap * 8 +
		gbt_post_align8((size_t) (gcap + 1) * 2) +
		gbt_post_align8((size_t) nentries * (wide ? 4 : 2)) +
		gbt_post_align8((size_t) nentries * 2);
}

static inline void
gbt_post_view(char *page, GbtPost *p)
{
	GbtPostHeader *h = (GbtPostHeader *) (page + GBT_BODY_OFFSET);
	char	   *c = page + GBT_POST_KEYS_OFF;

	p->hdr = h;
	p->dir = (uint64_t *) (page + GBT_POST_DIR_OFF);
	p->keys = (uint64_t *) c;
	c += (size_t) h->gcap * 8;
	p->start = (uint16_t *) c;
	c += gbt_post_align8((size_t) (h->gcap + 1) * 2);
	p->blocks16 = h->wide ? NULL : (uint16_t *) c;
	p->blocks32 = h->wide ? (uint32_t *) c : NULL;
	c += gbt_post_align8((size_t) h->nentries * (h->wide ? 4 : 2));
	p->offs = (uint16_t *) c;
}

/* the packed TID of a block and a stored offset (with its -0.0 flag) */
static inline uint64_t
gbt_post_tid_at(uint32_t blk, uint16_t o)
{
	return gbt_tid_pack(blk, o & (GBT_POST_NEGZERO - 1),
						(o & GBT_POST_NEGZERO) ? GBT_TID_FLAG_NEGZERO : 0);
}

/* the packed TID of entry i */
static inline uint64_t
gbt_post_tid(const GbtPost *p, int i)
{
	return gbt_post_tid_at(p->blocks32 ? p->blocks32[i] : p->hdr->baseblk + p->blocks16[i],
						   p->offs[i]);
}

/*
 * The distinct keys as a node (keys, dir, 16-key blocks) for
 * gbt_node_lower_bound and gbt_node_upper_bound only: no TIDs, no slot map.
 */
static inline void
gbt_post_key_node(const GbtPost *p, GbtNode *node)
{
	memset(node, 0, sizeof(GbtNode));
	node->keys = p->keys;
	node->dir = p->dir;
	node->nslots = p->hdr->gcap;
	node->nblocks = p->hdr->gcap / GBT_BLOCK_SLOTS;
}

/*
 * The host/device contract's shared constants and types.  The CUDA
 * library's functions (cuda/gbtree_cuda.h) take and return these; the
 * backend (gpu_lookup.c, gpu_build.c, build.c) builds them without seeing
 * that header.
 */

/* gbt_cuda_lookup's queries_sorted for a batch of bare point keys */
#define GBT_CUDA_POINTS		2

/* return codes: 0 ok, > 0 "retry with more room", < 0 errors */
#define GBT_CUDA_OK			0
#define GBT_CUDA_ESPACE		1	/* results do not fit: *out_total says how many */
#define GBT_CUDA_EINVAL		(-1)	/* bad argument */
#define GBT_CUDA_ECORRUPT	(-2)	/* inconsistent page images: use the CPU path */
#define GBT_CUDA_ENOMEM		(-3)	/* device or pinned host memory exhausted */
#define GBT_CUDA_EDEVICE	(-4)	/* any other CUDA error (no device, driver) */

/*
 * A query matches the entries e with (lo_key, lo_tid) <= e < (hi_key, hi_tid)
 * in (key, TID) order.  Equality k: lo = (k, 0), hi = (k, UINT64_MAX);
 * a <= k <= b: lo = (a, 0), hi = (b, UINT64_MAX).  lo >= hi matches nothing.
 */
typedef struct GbtCudaQuery
{
	uint64_t	lo_key;
	uint64_t	lo_tid;
	uint64_t	hi_key;
	uint64_t	hi_tid;
} GbtCudaQuery;

/*
 * The shape of a tree laid out from all n sorted entries, as build.c lays
 * it out on the CPU: npages[l] pages at level l (leaves first), page p of
 * a level taking inputs [in * p / np, in * (p + 1) / np) of the in inputs
 * (the entries for the leaves, one separator per page of the level below
 * otherwise), level l's pages at blocks first_blkno[l].. except the top
 * page, which goes to root_blkno.  header[0] and header[1] are the first
 * GBT_BODY_OFFSET bytes of an empty leaf and inner page (PostgreSQL's page
 * header, which this library does not know).
 */
#define GBT_CUDA_MAX_LEVELS		16

typedef struct GbtCudaTreePlan
{
	uint64_t	n;
	uint32_t	nlevels;
	uint32_t	root_blkno;
	uint16_t	tree_flags;		/* GBT_F_NULLTREE or 0 */
	uint16_t	pad[3];
	uint64_t	npages[GBT_CUDA_MAX_LEVELS];
	uint32_t	first_blkno[GBT_CUDA_MAX_LEVELS];
	unsigned char header[2][64];
} GbtCudaTreePlan;

/* node.c */
extern void gbt_node_format(char *page, bool leaf, uint16_t level, uint16_t flags);
extern void gbt_node_format_words(char *page, bool leaf, uint16_t level, uint16_t flags,
								  int nwords);
extern void gbt_node_format_layout(char *page, bool leaf, uint16_t level, uint16_t flags,
								  int nwords);
extern int	gbt_node_lower_bound_words(const GbtNode *node, const uint64_t *key);
extern int	gbt_node_upper_bound_words(const GbtNode *node, const uint64_t *key);
extern int	gbt_node_lower_bound_entry_words(const GbtNode *node, const uint64_t *key,
											 uint64_t tid);
extern int	gbt_node_insert_words(GbtNode *node, const uint64_t *key, uint64_t tid,
								  uint32_t child);
extern void gbt_node_format_tails(char *page, bool leaf, uint16_t level, uint16_t flags,
								  int nwords);
extern bool gbt_node_to_tails(char *page);
extern void gbt_node_fill_page(char *img, const GbtPageOpaqueData *op, const uint64_t *xbounds,
							   GbtTail lowtail, GbtTail hitail, int n, const uint64_t *keys,
							   const uint64_t *tids, const uint32_t *child,
							   const GbtTail *tails, bool spread);
extern int	gbt_node_split(const char *page, const uint64_t *newkey, GbtTail newtail,
						   uint64_t newtid, uint32_t newchild, int leftpct, bool grows_at_new,
						   char *left, char *right);
extern bool gbt_node_cut_split(char *page, const uint64_t *keys, const uint64_t *tids, int nnew,
							   char *right);
extern void gbt_node_append_split(char *page, const uint64_t *keys, const uint64_t *tids, int n,
								  char *right);
extern void gbt_node_merge_split(const char *page, const uint64_t *keys, const uint64_t *tids,
								 int n, int nleft, char *left, char *right);
extern GbtTail gbt_node_slot_tail(const GbtNode *node, int slot);
extern GbtTail gbt_node_bound_tail(const GbtNode *node, int which);
extern bool gbt_node_set_bound_tail(GbtNode *node, int which, const unsigned char *tail,
									int len);
extern int	gbt_node_tail_room(const GbtNode *node);
extern int	gbt_node_lower_bound_tail(const GbtNode *node, const uint64_t *key,
									  const unsigned char *tail, int tlen, uint64_t tid);
extern int	gbt_node_upper_bound_tail(const GbtNode *node, const uint64_t *key,
									  const unsigned char *tail, int tlen);
extern int	gbt_node_insert_tail(GbtNode *node, const uint64_t *key, const unsigned char *tail,
								 int tlen, uint64_t tid, uint32_t child);
extern int	gbt_node_extract_tails(const GbtNode *node, uint64_t *keys, uint64_t *tids,
								   uint32_t *child, GbtTail *tails);
extern bool gbt_node_load_tails(GbtNode *node, int n, const uint64_t *keys,
								const uint64_t *tids, const uint32_t *child,
								const GbtTail *tails, bool spread);
extern int	gbt_node_lower_bound(const GbtNode *node, uint64_t key);
extern int	gbt_node_upper_bound(const GbtNode *node, uint64_t key);
extern int	gbt_node_lower_bound_entry(const GbtNode *node, uint64_t key, uint64_t tid);
extern int	gbt_node_next_used(const GbtNode *node, int slot);
extern int	gbt_node_prev_used(const GbtNode *node, int slot);
extern int	gbt_node_first_used(const GbtNode *node);
extern int	gbt_node_last_used(const GbtNode *node);

/*
 * The used slots of [from, to) in bitmap word w, less those marked in dead
 * (a leaf's dead-entry bitmap, or NULL): the leaf readers walk these a
 * word at a time, a slot a set bit.
 */
static inline uint64_t
gbt_node_live_bits(const GbtNode *node, const uint64_t *dead, int w, int from, int to)
{
	uint64_t	bits = node->used[w];

	if (dead)
		bits &= ~dead[w];
	if (w == from >> 6)
		bits &= ~UINT64_C(0) << (from & 63);
	if (w == (to - 1) >> 6 && (to & 63) != 0)
		bits &= ~(~UINT64_C(0) << (to & 63));
	return bits;
}
extern int	gbt_node_insert(GbtNode *node, uint64_t key, uint64_t tid, uint32_t child);
extern bool gbt_node_insert_crowded(const GbtNode *node, const uint64_t *key, uint64_t tid);
extern bool gbt_node_insert_extent(const GbtNode *node, const uint64_t *key, uint64_t tid,
								   int *p, int *lo, int *hi);
extern int	gbt_node_insert_at(GbtNode *node, const uint64_t *key, uint64_t tid, int p);
extern int	gbt_node_count_used(const GbtNode *node);
extern void gbt_node_delete_slot(GbtNode *node, int slot);
/* keys of extract and load: nwords words an entry, one entry after another */
extern int	gbt_node_extract(const GbtNode *node, uint64_t *keys, uint64_t *tids, uint32_t *child);
extern void gbt_node_load(GbtNode *node, int n, const uint64_t *keys, const uint64_t *tids,
						  const uint32_t *child);
extern void gbt_node_load_spread(GbtNode *node, int n, const uint64_t *keys,
								 const uint64_t *tids, const uint32_t *child, bool spread);
extern const char *gbt_node_check(const GbtNode *node);
extern bool gbt_post_fits(int n, const uint64_t *keys, const uint64_t *tids);
extern void gbt_post_encode(char *page, int n, const uint64_t *keys, const uint64_t *tids);
extern int	gbt_post_decode(char *page, uint64_t *keys, uint64_t *tids);
extern int	gbt_post_lower_bound_entry(const GbtPost *p, uint64_t key, uint64_t tid);
extern uint64_t gbt_post_key_at(const GbtPost *p, int i);
extern bool gbt_post_insert_inplace(char *page, uint64_t key, uint64_t tid, bool apply);
extern const char *gbt_post_check(char *page);
extern int	gbt_leaf_extract(char *page, uint64_t *keys, uint64_t *tids);
extern void gbt_leaf_fill(char *page, int n, const uint64_t *keys, const uint64_t *tids,
						  bool spread);
extern void gbt_leaf_reformat(char *page, int nwords);
extern void gbt_leaf_rewrite(char *page, int n, const uint64_t *keys, const uint64_t *tids,
							 bool spread);

#ifdef __cplusplus
}
#endif

#endif							/* GBTREE_NODE_H */
