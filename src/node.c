/*-------------------------------------------------------------------------
 *
 * node.c
 *	  In-page search and update on gapped 16-slot blocks.
 *
 * Plain C, shared by the access method and the unit tests.  The search
 * is two branchless counts (directory, then one block); updates write into
 * a gap or shift only up to the nearest gap, then re-copy the run of gaps
 * just before the change and the directory entries of the touched blocks.
 * See gbtree_node.h for the invariants.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "gbtree_node.h"
#include "gbtree_simd.h"
#include "gbtree_tailwalk.h"

const unsigned char gbt_tail_lowest_bytes[1] = {0};
const unsigned char gbt_tail_highest_bytes[GBT_TAIL_HIGHEST_LEN] = {[0 ... GBT_TAIL_HIGHEST_LEN - 1] = 0xFF};

void
gbt_node_format(char *page, bool leaf, uint16_t level, uint16_t flags)
{
	gbt_node_format_words(page, leaf, level, flags, 1);
}

/* testing (gbtree.dir32_pages): format the layout before GBT_F_DIRFIT */
bool		gbt_format_dir32 = false;

/* A page whose keys are nwords words (1 formats today's one-word page). */
void
gbt_node_format_words(char *page, bool leaf, uint16_t level, uint16_t flags, int nwords)
{
	/* every multi-word page formatted now takes the compact directories */
	flags &= ~GBT_F_DIRFIT;
	if (nwords > 1 && !gbt_format_dir32)
		flags |= GBT_F_DIRFIT;
	gbt_node_format_layout(page, leaf, level, flags, nwords);
}

/*
 * A page laid out as flags say, GBT_F_DIRFIT included: gbt_node_format_words,
 * and the unit tests' pages of the layout before GBT_F_DIRFIT.
 */
void
gbt_node_format_layout(char *page, bool leaf, uint16_t level, uint16_t flags, int nwords)
{
	GbtPageOpaque op = gbt_page_opaque(page);
	GbtNode		node;

	memset(op, 0, sizeof(GbtPageOpaqueData));
	op->flags = flags | (leaf ? GBT_F_LEAF : 0);
	op->level = level;
	op->rightlink = GBT_NO_BLOCK;
	op->leftlink = GBT_NO_BLOCK;
	op->hikey = GBT_SENTINEL;
	op->hitid = GBT_SENTINEL;
	op->lowkey = 0;
	op->lowtid = 0;
	op->page_id = GBT_PAGE_ID;
	op->keywords = (uint16_t) (nwords > 1 ? nwords : 0);
	gbt_node_view(page, &node);
	op->nslots = (uint16_t) node.nslots;
	op->nused = 0;

	for (int i = 0; i < node.nslots; i++)
	{
		node.keys[i] = GBT_SENTINEL;
		node.tids[i] = GBT_SENTINEL;
		for (int k = 1; k < node.nwords; k++)
			node.xkeys[k - 1][i] = GBT_SENTINEL;
	}
	if (node.child)
		memset(node.child, 0, sizeof(uint32_t) * node.nslots);
	for (int i = 0; i < GBT_DIR_SIZE; i++)
		node.dir[i] = GBT_SENTINEL;
	for (int k = 1; k < node.nwords; k++)
		for (int i = 0; i < node.xdirlen; i++)
			node.xdir[k - 1][i] = GBT_SENTINEL;
	memset(node.used, 0, sizeof(uint64_t) * GBT_BITMAP_WORDS);
	/* high key +inf in every word, low key -inf */
	for (int k = 1; k < node.nwords; k++)
	{
		node.xbounds[k - 1] = GBT_SENTINEL;
		node.xbounds[node.nwords - 1 + k - 1] = 0;
	}
	if (leaf && node.nwords > 1)
		memset(gbt_leaf_dead(page), 0, GBT_BITMAP_WORDS * 8);
	if (node.toff)
	{
		memset(node.toff, 0, sizeof(uint16_t) * node.nslots);
		node.btoff[0] = node.btoff[1] = 0;
		op->taillow = GBT_OPAQUE_OFFSET;
		op->tailfree = 0;
	}
}

/* A multi-word page whose entries may carry tails (gbtree_node.h). */
void
gbt_node_format_tails(char *page, bool leaf, uint16_t level, uint16_t flags, int nwords)
{
	gbt_node_format_words(page, leaf, level, flags | GBT_F_TAILS, nwords);
}

/* first slot whose key is >= key (nslots if none) */
int
gbt_node_lower_bound(const GbtNode *node, uint64_t key)
{
	int			b;

	b = gbt_count_lt16(node->dir, key) + gbt_count_lt16(node->dir + 16, key);
	if (b >= node->nblocks)
		return node->nslots;
	return b * GBT_BLOCK_SLOTS + gbt_count_lt16(node->keys + b * GBT_BLOCK_SLOTS, key);
}

/* first slot whose key is > key (nslots if none) */
int
gbt_node_upper_bound(const GbtNode *node, uint64_t key)
{
	int			b;

	b = gbt_count_le16(node->dir, key) + gbt_count_le16(node->dir + 16, key);
	if (b >= node->nblocks)
		return node->nslots;
	return b * GBT_BLOCK_SLOTS + gbt_count_le16(node->keys + b * GBT_BLOCK_SLOTS, key);
}

/*
 * The first slot of [lo, hi), a run of equal keys, whose TID is >= tid:
 * TIDs are non-decreasing within the run, gap copies included.
 */
static inline int
tid_lower_bound(const GbtNode *node, int lo, int hi, uint64_t tid)
{
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (node->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* first slot whose (key, tid) is >= (key, tid) */
int
gbt_node_lower_bound_entry(const GbtNode *node, uint64_t key, uint64_t tid)
{
	int			lo = gbt_node_lower_bound(node, key);
	int			hi;

	if (lo >= node->nslots || node->keys[lo] != key)
		return lo;
	hi = gbt_node_upper_bound(node, key);
	return tid_lower_bound(node, lo, hi, tid);
}

/*
 * Multi-word keys: the same two counts over every word at once
 * (gbt_count_words16).  inclusive counts the slots at or below key.
 */
static int
words_bound(const GbtNode *node, const uint64_t *key, bool inclusive)
{
	const uint64_t *dir[GBT_MAX_KEY_WORDS];
	const uint64_t *w[GBT_MAX_KEY_WORDS];
	int			b;

	dir[0] = node->dir;
	w[0] = node->keys;
	for (int k = 1; k < node->nwords; k++)
	{
		dir[k] = node->xdir[k - 1];
		w[k] = node->xkeys[k - 1];
	}
	/* a page of at most 16 blocks may keep only 16 entries a later word */
	b = gbt_count_words16(dir, 0, key, node->nwords, inclusive);
	if (node->nblocks > 16)
		b += gbt_count_words16(dir, 16, key, node->nwords, inclusive);
	if (b >= node->nblocks)
		return node->nslots;
	return b * GBT_BLOCK_SLOTS + gbt_count_words16(w, b * GBT_BLOCK_SLOTS, key, node->nwords,
												   inclusive);
}

/* first slot whose key is >= key (nwords words; nslots if none) */
int
gbt_node_lower_bound_words(const GbtNode *node, const uint64_t *key)
{
	if (node->nwords == 1)
		return gbt_node_lower_bound(node, key[0]);
	return words_bound(node, key, false);
}

/* first slot whose key is > key */
int
gbt_node_upper_bound_words(const GbtNode *node, const uint64_t *key)
{
	if (node->nwords == 1)
		return gbt_node_upper_bound(node, key[0]);
	return words_bound(node, key, true);
}

static inline bool
slot_key_eq(const GbtNode *node, int s, const uint64_t *key)
{
	if (node->keys[s] != key[0])
		return false;
	for (int k = 1; k < node->nwords; k++)
		if (node->xkeys[k - 1][s] != key[k])
			return false;
	return true;
}

static inline const char *
node_page(const GbtNode *node)
{
	return (const char *) node->opaque - GBT_OPAQUE_OFFSET;
}

/* the tail at offset off of the page (0: none) */
static inline GbtTail
tail_at(const GbtNode *node, uint16_t off)
{
	GbtTail		t = {NULL, 0};

	if (off != 0)
	{
		uint16_t	len;

		memcpy(&len, node_page(node) + off, sizeof(len));
		t.data = (const unsigned char *) node_page(node) + off + 2;
		t.len = len;
	}
	return t;
}

GbtTail
gbt_node_slot_tail(const GbtNode *node, int slot)
{
	GbtTail		none = {NULL, 0};

	return node->toff ? tail_at(node, node->toff[slot]) : none;
}

/* which: 0 the high key's tail, 1 the low key's */
GbtTail
gbt_node_bound_tail(const GbtNode *node, int which)
{
	GbtTail		none = {NULL, 0};

	return node->btoff ? tail_at(node, node->btoff[which]) : none;
}

/*
 * The first slot of [lo, hi), a run of equal words, at or above (tail,
 * tid), or above (tail, every TID) when upper: the run is non-decreasing in
 * (tail, TID), gap copies included, and trailing gaps come last however
 * their words tie.
 */
static int
tail_run_bound(const GbtNode *node, int lo, int hi, const unsigned char *tail, int tlen,
			   uint64_t tid, bool upper)
{
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		GbtTail		t = gbt_node_slot_tail(node, mid);
		int			c = gbt_tail_cmp(t.data, t.len, tail, tlen);

		/* trailing gaps (sentinel words and TID, no tail) end every run */
		if (node->tids[mid] == GBT_SENTINEL)
			c = 1;
		if (c < 0 || (c == 0 && (upper || node->tids[mid] < tid)))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * First slot at or above (key, tail, tid) on a multi-word page; a page
 * without tails holds only entries without one.
 */
int
gbt_node_lower_bound_tail(const GbtNode *node, const uint64_t *key,
						  const unsigned char *tail, int tlen, uint64_t tid)
{
	int			lo = words_bound(node, key, false);

	if (lo >= node->nslots || !slot_key_eq(node, lo, key))
		return lo;
	return tail_run_bound(node, lo, words_bound(node, key, true), tail, tlen, tid, false);
}

/* First slot above (key, tail) with any TID. */
int
gbt_node_upper_bound_tail(const GbtNode *node, const uint64_t *key,
						  const unsigned char *tail, int tlen)
{
	int			lo = words_bound(node, key, false);

	if (lo >= node->nslots || !slot_key_eq(node, lo, key))
		return lo;
	return tail_run_bound(node, lo, words_bound(node, key, true), tail, tlen, 0, true);
}

/*
 * First slot whose (key, tid) is >= (key, tid).  It does not see tails, as
 * the kernels do not: on a tailed page the TIDs of a run of equal words
 * follow their tails, so only TID 0 is meaningful there (the run's start).
 */
int
gbt_node_lower_bound_entry_words(const GbtNode *node, const uint64_t *key, uint64_t tid)
{
	int			lo,
				hi;

	if (node->nwords == 1)
		return gbt_node_lower_bound_entry(node, key[0], tid);
	lo = words_bound(node, key, false);
	if (lo >= node->nslots || !slot_key_eq(node, lo, key))
		return lo;
	hi = words_bound(node, key, true);
	return tid_lower_bound(node, lo, hi, tid);
}

/* first used slot >= slot, or nslots */
int
gbt_node_next_used(const GbtNode *node, int slot)
{
	int			w;

	if (slot < 0)
		slot = 0;
	if (slot >= node->nslots)
		return node->nslots;
	w = slot >> 6;
	{
		uint64_t	bits = node->used[w] & (~UINT64_C(0) << (slot & 63));

		while (bits == 0)
		{
			if (++w >= (node->nslots + 63) / 64)
				return node->nslots;
			bits = node->used[w];
		}
		return (w << 6) + __builtin_ctzll(bits);
	}
}

/* last used slot < slot, or -1 */
int
gbt_node_prev_used(const GbtNode *node, int slot)
{
	int			w;
	uint64_t	bits;

	if (slot <= 0)
		return -1;
	if (slot > node->nslots)
		slot = node->nslots;
	slot--;						/* last candidate */
	w = slot >> 6;
	bits = node->used[w] & (~UINT64_C(0) >> (63 - (slot & 63)));
	while (bits == 0)
	{
		if (--w < 0)
			return -1;
		bits = node->used[w];
	}
	return (w << 6) + 63 - __builtin_clzll(bits);
}

int
gbt_node_first_used(const GbtNode *node)
{
	return gbt_node_next_used(node, 0);
}

int
gbt_node_last_used(const GbtNode *node)
{
	return gbt_node_prev_used(node, node->nslots);
}

/* first unused slot >= slot, or nslots */
static int
next_unused(const GbtNode *node, int slot)
{
	for (int w = slot >> 6; w < (node->nslots + 63) / 64; w++)
	{
		uint64_t	bits = ~node->used[w];

		if (w == (slot >> 6))
			bits &= ~UINT64_C(0) << (slot & 63);
		if (bits)
		{
			int			s = (w << 6) + __builtin_ctzll(bits);

			return s < node->nslots ? s : node->nslots;
		}
	}
	return node->nslots;
}

/* last unused slot < slot, or -1 */
static int
prev_unused(const GbtNode *node, int slot)
{
	if (slot <= 0)
		return -1;
	slot--;
	for (int w = slot >> 6; w >= 0; w--)
	{
		uint64_t	bits = ~node->used[w];

		if (w == (slot >> 6))
			bits &= ~UINT64_C(0) >> (63 - (slot & 63));
		if (bits)
			return (w << 6) + 63 - __builtin_clzll(bits);
	}
	return -1;
}

static inline void
set_used(GbtNode *node, int slot)
{
	node->used[slot >> 6] |= UINT64_C(1) << (slot & 63);
}

static inline void
clear_used(GbtNode *node, int slot)
{
	node->used[slot >> 6] &= ~(UINT64_C(1) << (slot & 63));
}

static inline void
set_slot(GbtNode *node, int slot, uint64_t key, uint64_t tid, uint32_t child)
{
	node->keys[slot] = key;
	node->tids[slot] = tid;
	if (node->child)
		node->child[slot] = child;
}

/*
 * The helpers below take the word count as an argument: callers on the
 * one-word paths pass a constant 1, so that those compile to what they
 * were before multi-word keys (the in-page insert is on every INSERT).
 */

/* slot takes (key[0..nw), tid, child) */
static inline void
set_slot_words(GbtNode *node, int slot, const uint64_t *key, uint64_t tid, uint32_t child,
			   int nw)
{
	set_slot(node, slot, key[0], tid, child);
	for (int k = 1; k < nw; k++)
		node->xkeys[k - 1][slot] = key[k];
}

/* a gap copies the next slot, or holds the sentinel at the end */
static inline void
gap_copy(GbtNode *node, int s, int nw)
{
	if (s + 1 < node->nslots)
	{
		set_slot(node, s, node->keys[s + 1], node->tids[s + 1],
				 node->child ? node->child[s + 1] : 0);
		for (int k = 1; k < nw; k++)
			node->xkeys[k - 1][s] = node->xkeys[k - 1][s + 1];
		if (nw > 1 && node->toff)
			node->toff[s] = node->toff[s + 1];
	}
	else
	{
		set_slot(node, s, GBT_SENTINEL, GBT_SENTINEL, 0);
		for (int k = 1; k < nw; k++)
			node->xkeys[k - 1][s] = GBT_SENTINEL;
		if (nw > 1 && node->toff)
			node->toff[s] = 0;
	}
}

/* the directory entry of block b: its last slot's key */
static inline void
set_dir(GbtNode *node, int b, int nw)
{
	int			s = b * GBT_BLOCK_SLOTS + GBT_BLOCK_SLOTS - 1;

	node->dir[b] = node->keys[s];
	for (int k = 1; k < nw; k++)
		node->xdir[k - 1][b] = node->xkeys[k - 1][s];
}

/*
 * Re-establish the gap copies just before 'from' (the gaps there copy the
 * value that now sits at 'from'), then the directory entries of the blocks
 * from the first re-copied slot up to 'to'.
 */
static inline void
refresh(GbtNode *node, int from, int to, int nw)
{
	int			g = from - 1;
	int			b;

	while (g >= 0 && !gbt_slot_used(node, g))
	{
		gap_copy(node, g, nw);
		g--;
	}
	g++;
	if (to >= node->nslots)
		to = node->nslots - 1;
	for (b = g / GBT_BLOCK_SLOTS; b <= to / GBT_BLOCK_SLOTS; b++)
		set_dir(node, b, nw);
	/* every change of an insert ends here, from the first re-copied gap */
	if (g < node->mod_lo)
		node->mod_lo = g;
	if (to > node->mod_hi)
		node->mod_hi = to;
}

static void
move_slots(GbtNode *node, int dst, int src, int n, int nw)
{
	if (n <= 0)
		return;
	memmove(node->keys + dst, node->keys + src, sizeof(uint64_t) * n);
	memmove(node->tids + dst, node->tids + src, sizeof(uint64_t) * n);
	if (node->child)
		memmove(node->child + dst, node->child + src, sizeof(uint32_t) * n);
	for (int k = 1; k < nw; k++)
		memmove(node->xkeys[k - 1] + dst, node->xkeys[k - 1] + src, sizeof(uint64_t) * n);
	if (nw > 1 && node->toff)
		memmove(node->toff + dst, node->toff + src, sizeof(uint16_t) * n);
}

static inline int
block_used(const GbtNode *node, int b)
{
	int			s = b * GBT_BLOCK_SLOTS;

	return __builtin_popcountll((node->used[s >> 6] >> (s & 63)) & 0xFFFF);
}

/*
 * Block split/redistribution inside the page.  Inserting where the nearest
 * gap is more than a block away would shift entries across block
 * boundaries, and keep doing so for every later insert nearby (ascending
 * runs into a packed page, hot spots).  Instead, grow a window of whole
 * blocks around block b until it holds at least one gap per block, and
 * spread its entries evenly over it, so each block of the window ends with
 * free slots of its own.  Returns false (nothing changed) when even the
 * whole page has fewer gaps than blocks: then the page is nearly full and
 * a plain shift is as cheap.  At a hot spot (slot hot, not -1), the window
 * grows until it holds half the page's gaps instead, and puts them all at
 * the hot spot; that never gives up.
 */
static inline __attribute__((always_inline)) void
spread_window(GbtNode *node, int s0, int s1, int nw, int hot)
{
	int			width = s1 - s0;
	int			n = 0;
	uint64_t	k[GBT_MAX_SLOT_WORDS],
				t[GBT_MAX_SLOTS];
	uint32_t	c[GBT_MAX_SLOTS];
	uint16_t	o[GBT_MAX_SLOTS];
	int			nbelow = 0;

	for (int s = s0; s < s1; s++)
	{
		if (!gbt_slot_used(node, s))
			continue;
		nbelow += s < hot;
		k[n * nw] = node->keys[s];
		for (int w = 1; w < nw; w++)
			k[n * nw + w] = node->xkeys[w - 1][s];
		t[n] = node->tids[s];
		c[n] = node->child ? node->child[s] : 0;
		if (nw > 1 && node->toff)
			o[n] = node->toff[s];
		n++;
		clear_used(node, s);
	}

	/*
	 * Entry i goes to the start of its share of the window, gaps follow;
	 * or, for a hot spot at slot hot, the entries below it to the window's
	 * start and the others to its end, all gaps between.
	 */
	for (int i = 0; i < n; i++)
	{
		int			s = hot < 0 ? s0 + (int) (((int64_t) i * width) / n) :
			i < nbelow ? s0 + i : s1 - (n - i);

		set_slot_words(node, s, &k[i * nw], t[i], c[i], nw);
		if (nw > 1 && node->toff)
			node->toff[s] = o[i];
		set_used(node, s);
	}
	/* gaps copy the next used slot: walk back from the window's end */
	for (int s = s1 - 1; s >= s0; s--)
	{
		if (!gbt_slot_used(node, s))
			gap_copy(node, s, nw);
	}
	/* gaps before the window copy its (possibly new) first slot; directory */
	refresh(node, s0, s1 - 1, nw);
}

static bool
redistribute_blocks(GbtNode *node, int b, int hot)
{
	int			b0 = b,
				b1 = b;
	int			used = block_used(node, b);

	/*
	 * A hot spot (insert_hot_spot) takes half the page's free slots, so
	 * that its run goes on that long without moving a slot, and leaves the
	 * other half where other runs may be.  Gathering only a gap a block
	 * there, the next window had to reach past the blocks packed before,
	 * growing with every gathering.
	 */
	int			need = hot >= 0 ? (node->nslots - node->opaque->nused + 1) / 2 : 0;

	while ((b1 - b0 + 1) * GBT_BLOCK_SLOTS - used < (need > b1 - b0 + 1 ? need : b1 - b0 + 1))
	{
		bool		left = b0 > 0 && (b1 == node->nblocks - 1 || (b - b0) <= (b1 - b));

		if (b0 == 0 && b1 == node->nblocks - 1)
		{
			if (hot >= 0)
				break;			/* the page's gaps, at least one, all to it */
			return false;
		}
		if (left)
			used += block_used(node, --b0);
		else
			used += block_used(node, ++b1);
	}
	if (node->nwords == 1)
		spread_window(node, b0 * GBT_BLOCK_SLOTS, (b1 + 1) * GBT_BLOCK_SLOTS, 1, hot);
	else
		spread_window(node, b0 * GBT_BLOCK_SLOTS, (b1 + 1) * GBT_BLOCK_SLOTS, node->nwords,
					  hot);
	return true;
}

/* How an entry goes in at its lower bound p (insert_span). */
typedef enum InsertWay
{
	INSERT_GAP,					/* into the gap at p */
	INSERT_RIGHT,				/* p..r-1 shift right into the gap at r */
	INSERT_LEFT					/* l+1..p-1 shift left into the gap at l */
} InsertWay;

/*
 * Where node_insert puts an entry whose lower bound is p (the page has a
 * free slot): the slots the entry and its shift take, [*lo, *hi], and
 * *dist, how far the gap it fills is.  The nearer gap wins, the right one
 * on a tie.
 */
static inline InsertWay
insert_span(const GbtNode *node, int p, int *lo, int *hi, int *dist)
{
	int			r,
				l;

	if (p < node->nslots && !gbt_slot_used(node, p))
	{
		*lo = *hi = p;
		*dist = 0;
		return INSERT_GAP;
	}
	r = next_unused(node, p);
	l = prev_unused(node, p);
	if (r < node->nslots && (l < 0 || r - p <= p - 1 - l))
	{
		*lo = p;
		*hi = r;
		*dist = r - p;
		return INSERT_RIGHT;
	}
	*lo = l;
	*hi = p - 1;
	*dist = p - 1 - l;
	return INSERT_LEFT;
}

/*
 * Where an insert at lower bound p that spreads blocks should put their
 * gaps: at p (returned) when the leaf entry before p is of the heap row
 * just before the new one's, so that p looks like a run of ascending
 * inserts that will take the next ones (a group's newest rows in an index
 * on (tenant, ts), a key's duplicates in heap order); spread evenly
 * otherwise (-1).  Spread gaps lie a block apart once the page fills, so
 * such a run shifted a block's slots, or spread blocks, at every insert.
 */
static inline int
insert_hot_spot(const GbtNode *node, int p, uint64_t tid)
{
	int			prev;

	if (node->child)
		return -1;
	prev = gbt_node_prev_used(node, p);
	return prev >= 0 && gbt_tid_follows(node->tids[prev], tid) ? p : -1;
}

/* The lower bound of an entry on the page (its tail on a tailed page). */
static inline __attribute__((always_inline)) int
entry_lower_bound(const GbtNode *node, const uint64_t *key, uint64_t tid, int nw,
				  const unsigned char *tail, int tlen)
{
	return nw == 1 ? gbt_node_lower_bound_entry(node, key[0], tid) :
		node->toff ? gbt_node_lower_bound_tail(node, key, tail, tlen, tid) :
		gbt_node_lower_bound_entry_words(node, key, tid);
}

/*
 * Insert (key, tid[, child]) at its place in (key, tid) order, whose lower
 * bound is p0 if the caller knows it (else -1).  Returns the slot it went
 * to, or -1 if the page is full.
 */
static inline __attribute__((always_inline)) int
node_insert(GbtNode *node, const uint64_t *key, uint64_t tid, uint32_t child, int nw,
			const unsigned char *tail, int tlen, uint16_t toffv, int p0)
{
	int			p;
	int			slot;
	int			lo,
				hi,
				dist;
	InsertWay	way;

	if (node->opaque->nused >= node->nslots)
		return -1;

	p = p0 >= 0 ? p0 : entry_lower_bound(node, key, tid, nw, tail, tlen);
	way = insert_span(node, p, &lo, &hi, &dist);
	if (way != INSERT_GAP && dist > GBT_BLOCK_SLOTS &&
		redistribute_blocks(node, (p < node->nslots ? p : node->nslots - 1) / GBT_BLOCK_SLOTS,
							insert_hot_spot(node, p, tid)))
	{
		p = entry_lower_bound(node, key, tid, nw, tail, tlen);
		way = insert_span(node, p, &lo, &hi, &dist);
	}
	if (way == INSERT_GAP)
	{
		/* a gap at the position: it copies an entry > ours, take it */
		slot = p;
		set_used(node, slot);
	}
	else if (way == INSERT_RIGHT)
	{
		move_slots(node, p + 1, p, hi - p, nw);
		set_used(node, hi);
		slot = p;
	}
	else
	{
		move_slots(node, lo, lo + 1, p - 1 - lo, nw);
		set_used(node, lo);
		slot = p - 1;
	}
	set_slot_words(node, slot, key, tid, child, nw);
	if (nw > 1 && node->toff)
		node->toff[slot] = toffv;
	node->opaque->nused++;
	refresh(node, lo, hi, nw);
	return slot;
}

/*
 * The slots an insert of (key, tid) into node, a page of words alone with
 * a free slot, will change: [*lo, *hi], each of them in every array, for a
 * WAL writer that logs them as they are.  refresh also re-copies the gaps
 * just before *lo, but with the bytes they hold: into a gap at p, p - 1 is
 * used (a gap there would copy an entry > ours and be the lower bound);
 * shifting right from a used p, likewise; shifting left into the gap at l,
 * the gaps before l copied the entry that moves into l.  *p is the
 * entry's lower bound, for gbt_node_insert_at.  False where the insert
 * would first spread the entries of whole blocks.
 */
bool
gbt_node_insert_extent(const GbtNode *node, const uint64_t *key, uint64_t tid, int *p,
					   int *lo, int *hi)
{
	int			dist;

	/* a page of words alone, with a free slot (the caller checked) */
	*p = entry_lower_bound(node, key, tid, node->nwords, NULL, 0);
	return insert_span(node, *p, lo, hi, &dist) == INSERT_GAP || dist <= GBT_BLOCK_SLOTS;
}

/*
 * Whether an insert of (key, tid) into node, a page of words alone with a
 * free slot, would shift more than a block's slots on a page with fewer
 * than half as many gaps as blocks, far too few to spread
 * (redistribute_blocks): a page that full takes such an insert only by
 * moving many slots, each logged whole in generic WAL, where a split
 * costs less (gbt_leaf_crowded).  At fewer gaps than blocks, random uuid
 * inserts left 1.15x btree's pages (1.05x before); at half that, the same.
 * Not at a hot spot, whose gaps gather (redistribute_blocks): splitting
 * there left an index on (tenant, ts) 1.17x btree's size midway.
 */
bool
gbt_node_insert_crowded(const GbtNode *node, const uint64_t *key, uint64_t tid)
{
	int			p = entry_lower_bound(node, key, tid, node->nwords, NULL, 0),
				lo,
				hi,
				dist;

	return insert_span(node, p, &lo, &hi, &dist) != INSERT_GAP && dist > GBT_BLOCK_SLOTS &&
		node->nslots - node->opaque->nused < node->nblocks / 2 &&
		insert_hot_spot(node, p, tid) < 0;
}

/* gbt_node_insert_words at the lower bound p gbt_node_insert_extent gave */
int
gbt_node_insert_at(GbtNode *node, const uint64_t *key, uint64_t tid, int p)
{
	if (node->nwords == 1)
		return node_insert(node, key, tid, 0, 1, NULL, 0, 0, p);
	return node_insert(node, key, tid, 0, node->nwords, NULL, 0, 0, p);
}

int
gbt_node_insert(GbtNode *node, uint64_t key, uint64_t tid, uint32_t child)
{
	return node_insert(node, &key, tid, child, 1, NULL, 0, 0, -1);
}

/* The same with a key of node->nwords words (no tail). */
int
gbt_node_insert_words(GbtNode *node, const uint64_t *key, uint64_t tid, uint32_t child)
{
	if (node->nwords == 1)
		return node_insert(node, key, tid, child, 1, NULL, 0, 0, -1);
	return node_insert(node, key, tid, child, node->nwords, NULL, 0, 0, -1);
}

/*
 * Move the tails that slots and bounds hold to the top of the area, in
 * slot order, dropping the bytes of deleted ones; gaps copy the new
 * offsets.
 */
static void
tails_compact(GbtNode *node)
{
	char		buf[GBT_PAGE_SIZE];
	char	   *page = (char *) node_page(node);
	int			top = GBT_OPAQUE_OFFSET;

	for (int s = gbt_node_next_used(node, 0); s < node->nslots;
		 s = gbt_node_next_used(node, s + 1))
	{
		GbtTail		t = gbt_node_slot_tail(node, s);

		if (t.len == 0)
			continue;
		top -= gbt_tail_space(t.len);
		memcpy(buf + top, t.data - 2, gbt_tail_space(t.len));
		node->toff[s] = (uint16_t) top;
	}
	for (int b = 0; b < 2; b++)
	{
		GbtTail		t = gbt_node_bound_tail(node, b);

		if (t.len == 0)
			continue;
		top -= gbt_tail_space(t.len);
		memcpy(buf + top, t.data - 2, gbt_tail_space(t.len));
		node->btoff[b] = (uint16_t) top;
	}
	memcpy(page + top, buf + top, GBT_OPAQUE_OFFSET - top);
	node->opaque->taillow = (uint16_t) top;
	node->opaque->tailfree = 0;
	for (int s = node->nslots - 1; s >= 0; s--)
		if (!gbt_slot_used(node, s))
			node->toff[s] = s + 1 < node->nslots ? node->toff[s + 1] : 0;
}

/* free bytes for tails, counting those compaction would win back */
int
gbt_node_tail_room(const GbtNode *node)
{
	if (!node->toff)
		return 0;
	return node->opaque->taillow - node->tailstart + node->opaque->tailfree;
}

/*
 * Copy a tail into the area (compacting it if that makes room); its
 * offset, or 0 if it does not fit.  The tail must not lie in this page.
 */
static uint16_t
tail_alloc(GbtNode *node, const unsigned char *data, int len)
{
	GbtPageOpaque op = node->opaque;
	char	   *page = (char *) node_page(node);
	int			need = gbt_tail_space(len);
	uint16_t	l = (uint16_t) len;

	if (len <= 0 || len > UINT16_MAX || need > gbt_node_tail_room(node))
		return 0;
	if (op->taillow - need < node->tailstart)
		tails_compact(node);
	op->taillow -= need;
	memcpy(page + op->taillow, &l, sizeof(l));
	memcpy(page + op->taillow + 2, data, (size_t) len);
	return op->taillow;
}

/*
 * Insert (key, tail, tid[, child]) at its place in (key, tail, TID) order
 * on a page formatted for tails.  Returns the slot, or -1 if the page has
 * no free slot or no room for the tail.
 */
int
gbt_node_insert_tail(GbtNode *node, const uint64_t *key, const unsigned char *tail, int tlen,
					 uint64_t tid, uint32_t child)
{
	uint16_t	off = 0;

	if (!node->toff)
		return tlen > 0 ? -1 : gbt_node_insert_words(node, key, tid, child);
	if (node->opaque->nused >= node->nslots)
		return -1;
	if (tlen > 0 && (off = tail_alloc(node, tail, tlen)) == 0)
		return -1;
	return node_insert(node, key, tid, child, node->nwords, tail, tlen, off, -1);
}

/* Give the high (which 0) or low (1) key a tail; false if it does not fit. */
bool
gbt_node_set_bound_tail(GbtNode *node, int which, const unsigned char *tail, int len)
{
	GbtTail		old;
	uint16_t	off = 0;

	if (!node->btoff)
		return len == 0;
	old = gbt_node_bound_tail(node, which);
	if (gbt_tail_space(len) > gbt_node_tail_room(node) + gbt_tail_space(old.len))
		return false;
	node->opaque->tailfree += gbt_tail_space(old.len);
	node->btoff[which] = 0;
	if (len > 0)
		off = tail_alloc(node, tail, len);
	node->btoff[which] = off;
	return true;
}

/*
 * The used slots the bitmap counts.  A page whose nused disagrees has no
 * gap where gbt_node_insert expects one (insert.c, check_leaf_room).
 */
int
gbt_node_count_used(const GbtNode *node)
{
	int			n = 0;

	for (int w = 0; w < (node->nslots + 63) / 64; w++)
	{
		uint64_t	bits = node->used[w];

		if ((w + 1) * 64 > node->nslots)
			bits &= (UINT64_C(1) << (node->nslots & 63)) - 1;
		n += __builtin_popcountll(bits);
	}
	return n;
}

/* Turn a used slot into a gap. */
void
gbt_node_delete_slot(GbtNode *node, int slot)
{
	if (node->toff)
		node->opaque->tailfree += gbt_tail_space(gbt_node_slot_tail(node, slot).len);
	clear_used(node, slot);
	gap_copy(node, slot, node->nwords);
	node->opaque->nused--;
	refresh(node, slot, slot, node->nwords);
}

/* Copy out the used entries in order; returns their number. */
static inline __attribute__((always_inline)) int
node_extract(const GbtNode *node, uint64_t *keys, uint64_t *tids, uint32_t *child,
			 GbtTail *tails, int nw)
{
	int			n = 0;

	for (int s = gbt_node_next_used(node, 0); s < node->nslots;
		 s = gbt_node_next_used(node, s + 1))
	{
		keys[n * nw] = node->keys[s];
		for (int k = 1; k < nw; k++)
			keys[n * nw + k] = node->xkeys[k - 1][s];
		tids[n] = node->tids[s];
		if (child)
			child[n] = node->child ? node->child[s] : 0;
		if (tails)
			tails[n] = gbt_node_slot_tail(node, s);
		n++;
	}
	return n;
}

int
gbt_node_extract(const GbtNode *node, uint64_t *keys, uint64_t *tids, uint32_t *child)
{
	if (node->nwords == 1)
		return node_extract(node, keys, tids, child, NULL, 1);
	return node_extract(node, keys, tids, child, NULL, node->nwords);
}

/* The same with each entry's tail, pointing into the page. */
int
gbt_node_extract_tails(const GbtNode *node, uint64_t *keys, uint64_t *tids, uint32_t *child,
					   GbtTail *tails)
{
	if (node->nwords == 1)
		return node_extract(node, keys, tids, child, tails, 1);
	return node_extract(node, keys, tids, child, tails, node->nwords);
}

/*
 * Lay out n sorted entries on an empty (formatted) node with the gaps
 * spread evenly, as the BS-tree bulk load does.
 */
void
gbt_node_load(GbtNode *node, int n, const uint64_t *keys, const uint64_t *tids,
			  const uint32_t *child)
{
	gbt_node_load_spread(node, n, keys, tids, child, true);
}

/*
 * Lay out n sorted entries on an empty node: gaps spread evenly (spread),
 * or all free slots at the end, for a page that will grow at its end
 * (ascending inserts), where each append then takes a trailing gap and
 * shifts nothing.
 */
static inline __attribute__((always_inline)) void
node_load(GbtNode *node, int n, const uint64_t *keys, const uint64_t *tids,
		  const uint32_t *child, const uint16_t *offs, bool spread, int nw)
{
	int			ns = node->nslots;

	memset(node->used, 0, sizeof(uint64_t) * GBT_BITMAP_WORDS);
	for (int i = 0; i < n; i++)
	{
		int			s = spread ? (int) (((int64_t) i * ns) / n) : i;

		set_slot_words(node, s, &keys[i * nw], tids[i], child ? child[i] : 0, nw);
		if (nw > 1 && node->toff)
			node->toff[s] = offs ? offs[i] : 0;
		set_used(node, s);
	}
	node->opaque->nused = (uint16_t) n;
	/* gaps copy the next used slot; trailing gaps hold the sentinel */
	for (int s = ns - 1; s >= 0; s--)
	{
		if (!gbt_slot_used(node, s))
			gap_copy(node, s, nw);
	}
	for (int b = 0; b < node->nblocks; b++)
		set_dir(node, b, nw);
	for (int b = node->nblocks; b < GBT_DIR_SIZE; b++)
		node->dir[b] = GBT_SENTINEL;
	for (int k = 1; k < nw; k++)
		for (int b = node->nblocks; b < node->xdirlen; b++)
			node->xdir[k - 1][b] = GBT_SENTINEL;
}

void
gbt_node_load_spread(GbtNode *node, int n, const uint64_t *keys, const uint64_t *tids,
					 const uint32_t *child, bool spread)
{
	if (node->nwords == 1)
		node_load(node, n, keys, tids, child, NULL, spread, 1);
	else
	{
		if (node->toff)
			gbt_node_load_tails(node, n, keys, tids, child, NULL, spread);
		else
			node_load(node, n, keys, tids, child, NULL, spread, node->nwords);
	}
}

/*
 * Lay out n sorted entries with their tails (NULL: none) on a page
 * formatted for tails, replacing its entries and keeping its bounds'
 * tails.  False, the page unchanged, if they do not fit.
 */
bool
gbt_node_load_tails(GbtNode *node, int n, const uint64_t *keys, const uint64_t *tids,
					const uint32_t *child, const GbtTail *tails, bool spread)
{
	uint16_t	offs[GBT_MAX_SLOTS];
	int			need = 0,
				dropped = 0;

	if (!node->toff)
		return false;
	for (int i = 0; tails && i < n; i++)
		need += gbt_tail_space(tails[i].len);
	for (int s = gbt_node_next_used(node, 0); s < node->nslots;
		 s = gbt_node_next_used(node, s + 1))
		dropped += gbt_tail_space(gbt_node_slot_tail(node, s).len);
	if (n > node->nslots || need > gbt_node_tail_room(node) + dropped)
		return false;

	/* the old entries' tails are garbage now; no slot holds one */
	memset(node->used, 0, sizeof(uint64_t) * GBT_BITMAP_WORDS);
	node->opaque->nused = 0;
	memset(node->toff, 0, sizeof(uint16_t) * node->nslots);
	node->opaque->tailfree += dropped;
	/* compact once, before the first copy: compaction keeps only held tails */
	if (node->opaque->taillow - need < node->tailstart)
		tails_compact(node);
	for (int i = 0; i < n; i++)
		offs[i] = tails && tails[i].len > 0 ? tail_alloc(node, tails[i].data, tails[i].len) : 0;
	node_load(node, n, keys, tids, child, offs, spread, node->nwords);
	return true;
}

/* slot a's key against slot b's, word by word */
static inline int
slot_key_cmp(const GbtNode *node, int a, int b)
{
	if (node->keys[a] != node->keys[b])
		return node->keys[a] < node->keys[b] ? -1 : 1;
	for (int k = 1; k < node->nwords; k++)
		if (node->xkeys[k - 1][a] != node->xkeys[k - 1][b])
			return node->xkeys[k - 1][a] < node->xkeys[k - 1][b] ? -1 : 1;
	return 0;
}

/* does gap s hold a copy of slot s + 1 (the sentinel at the end)? */
static inline bool
gap_holds_copy(const GbtNode *node, int s)
{
	bool		last = s + 1 >= node->nslots;

	if (node->keys[s] != (last ? GBT_SENTINEL : node->keys[s + 1]) ||
		node->tids[s] != (last ? GBT_SENTINEL : node->tids[s + 1]))
		return false;
	for (int k = 1; k < node->nwords; k++)
		if (node->xkeys[k - 1][s] != (last ? GBT_SENTINEL : node->xkeys[k - 1][s + 1]))
			return false;
	if (node->toff && node->toff[s] != (last ? 0 : node->toff[s + 1]))
		return false;
	return true;
}

/*
 * A tailed page's area: every tail a used slot or bound holds lies inside
 * it, no two overlap, and with the free bytes they account for all of it.
 */
static const char *
check_tails(const GbtNode *node)
{
	unsigned char owner[GBT_PAGE_SIZE];
	int			low = node->opaque->taillow;
	int			held = 0;

	if (low < node->tailstart || low > GBT_OPAQUE_OFFSET)
		return "tail area start out of range";
	memset(owner, 0, sizeof(owner));
	for (int i = -2; i < node->nslots; i++)
	{
		uint16_t	off;
		uint16_t	len;

		if (i >= 0 && !gbt_slot_used(node, i))
			continue;
		off = i < 0 ? node->btoff[i + 2] : node->toff[i];
		if (off == 0)
			continue;
		if (off < low || off + 2 > GBT_OPAQUE_OFFSET)
			return "tail offset outside the tail area";
		memcpy(&len, node_page(node) + off, sizeof(len));
		if (len == 0 || off + 2 + len > GBT_OPAQUE_OFFSET)
			return "tail length out of range";
		/* readers copy a tail into buffers of the longest a key can have */
		if (len > gbt_tail_max(node->nwords))
			return "tail longer than any key's";
		for (int b = off; b < off + 2 + len; b++)
		{
			if (owner[b])
				return "tails overlap";
			owner[b] = 1;
		}
		held += 2 + len;
	}
	if (held + node->opaque->tailfree != GBT_OPAQUE_OFFSET - low)
		return "tail area bytes unaccounted for";
	return NULL;
}

/*
 * Verify the in-page invariants.  Returns NULL if all hold, else a short
 * description of the first violation.
 */
const char *
gbt_node_check(const GbtNode *node)
{
	int			count = 0;
	int			prev = -1;

	if (node->opaque->nslots != node->nslots)
		return "slot capacity does not match page kind";
	if (node->toff)
	{
		const char *err = check_tails(node);

		if (err)
			return err;
	}
	for (int s = 0; s < node->nslots; s++)
	{
		if (gbt_slot_used(node, s))
		{
			int			c;

			if (node->tids[s] == GBT_SENTINEL)
				return "used slot holds the sentinel TID";
			c = prev < 0 ? -1 : slot_key_cmp(node, prev, s);
			if (c == 0 && node->toff)
			{
				GbtTail		a = gbt_node_slot_tail(node, prev),
							b = gbt_node_slot_tail(node, s);

				c = gbt_tail_cmp(a.data, a.len, b.data, b.len);
			}
			if (c > 0 || (c == 0 && node->tids[prev] >= node->tids[s]))
				return "entries out of (key, tail, TID) order";
			prev = s;
			count++;
		}
		else if (!gap_holds_copy(node, s))
			return "gap does not copy the next entry";
	}
	for (int s = node->nslots; s < GBT_MAX_SLOTS; s++)
		if ((node->used[s >> 6] >> (s & 63)) & 1)
			return "used bit beyond page capacity";
	if (count != node->opaque->nused)
		return "used-slot count does not match bitmap";
	for (int b = 0; b < GBT_DIR_SIZE; b++)
	{
		int			last = b * GBT_BLOCK_SLOTS + GBT_BLOCK_SLOTS - 1;

		if (node->dir[b] != (b < node->nblocks ? node->keys[last] : GBT_SENTINEL))
			return "directory entry does not match its block";
		for (int k = 1; k < node->nwords && b < node->xdirlen; k++)
			if (node->xdir[k - 1][b] != (b < node->nblocks ? node->xkeys[k - 1][last] : GBT_SENTINEL))
				return "directory entry does not match its block";
	}
	return NULL;
}
