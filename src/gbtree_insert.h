/*-------------------------------------------------------------------------
 *
 * gbtree_insert.h
 *	  What insert.c (single inserts, splits) and insert_merge.c (batched
 *	  insertion) share: split buffers and plans, the leaf-shape tests, the
 *	  SMO runner.  Private to those two files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_INSERT_H
#define GBTREE_INSERT_H

#include "gbtree.h"

/*
 * The content of a split: the left page's entries, then the right page's
 * (each at most one page of them).
 */
#define GBT_SPLIT_MAX	(2 * GBT_LEAF_MAX_ENTRIES + 2)

typedef struct GbtSplitBuf
{
	uint64		keys[GBT_SPLIT_MAX];
	uint64		tids[GBT_SPLIT_MAX];
	uint32		child[GBT_SPLIT_MAX];
	int			n;
} GbtSplitBuf;

/*
 * How a split lays sb out: [0, cut) on the left page, [cut, n) on the
 * right one; the separator (the right page's low key) is at most the right
 * page's first entry (a batch may still add smaller ones there).  An
 * append split packs the right page's entries at its start (rspread off).
 */
typedef struct GbtSplitPlan
{
	int			cut;
	uint64		sepkey;
	uint64		septid;
	bool		rspread;
} GbtSplitPlan;

/* new entries of a leaf from which it is rewritten whole (full image) */
#define GBT_MERGE_REWRITE_MIN	16

/* Can n sorted entries make one leaf, in either form? */
static inline bool
gbt_leaf_fits(int n, const uint64 *keys, const uint64 *tids)
{
	return n <= GBT_LEAF_SLOTS || gbt_post_fits(n, keys, tids);
}

/*
 * Whether a leaf that its slots cannot hold should take the posting form
 * rather than split: only where keys repeat (two TIDs a key on average),
 * so that distinct keys keep the plain form, which takes an insert
 * without rewriting the page.
 */
static inline bool
gbt_leaf_worth_posting(int n, const uint64 *keys)
{
	int			g = 0;

	for (int i = 0; i < n; i++)
		g += (i == 0 || keys[i] != keys[i - 1]);
	return 2 * g <= n;
}

/*
 * A leaf's shape as entries are added in order, for gbt_leaf_prefix's
 * test without measuring from the start each time.
 */
typedef struct GbtLeafShape
{
	int			n;
	int			g;				/* distinct keys */
	uint32		lo;				/* least and greatest heap block */
	uint32		hi;
} GbtLeafShape;

static inline void
gbt_shape_add(GbtLeafShape *sh, uint64 tid, bool newkey)
{
	uint32		b = gbt_tid_block(tid);

	if (sh->n == 0)
		sh->lo = sh->hi = b;
	sh->lo = Min(sh->lo, b);
	sh->hi = Max(sh->hi, b);
	sh->n++;
	sh->g += newkey;
}

/* the posting form's size of the shape; above the page when it cannot be */
static inline size_t
gbt_shape_post_size(const GbtLeafShape *sh)
{
	if (sh->g > GBT_POST_MAX_GROUPS || sh->n > GBT_POST_MAX_ENTRIES)
		return SIZE_MAX;
	return gbt_post_size(sh->g, sh->n, sh->hi - sh->lo > PG_UINT16_MAX);
}

/* the bytes of a posting leaf packed to pct percent */
static inline size_t
gbt_post_limit(int pct)
{
	return GBT_POST_KEYS_OFF + (size_t) (GBT_POST_END - GBT_POST_KEYS_OFF) * pct / 100;
}

/* Does a leaf of this shape stay within pct percent, as gbt_leaf_prefix measures? */
static inline bool
gbt_shape_within(const GbtLeafShape *sh, bool dedup, int pct)
{
	size_t		limit = gbt_post_limit(pct);

	if (sh->n <= Max(1, GBT_LEAF_SLOTS * pct / 100))
		return true;
	return dedup && 2 * sh->g <= sh->n && gbt_shape_post_size(sh) <= limit;
}

/* Where an SMO descends to */
typedef struct GbtSmoTarget
{
	uint64		key;
	uint64		tid;
} GbtSmoTarget;

/* SMO steps a batch takes before it lets other inserters' splits in */
#define GBT_BATCH_SMO_STEPS		32

/*
 * Split scratch, backend-local (a palloc this large is an mmap per split).
 * Splits neither nest nor recurse.
 */
extern GbtSplitBuf gbt_split_sb;
extern uint64 gbt_split_okeys[GBT_LEAF_MAX_ENTRIES];
extern uint64 gbt_split_otids[GBT_LEAF_MAX_ENTRIES];
extern uint64 gbt_split_mkeys[GBT_SPLIT_MAX];
extern uint64 gbt_split_mtids[GBT_SPLIT_MAX];

/* insert.c */
extern bool gbt_page_has_entry(Page page, uint64 key, uint64 tid);
extern void gbt_check_rebuilt_page(Relation index, Buffer buf);
extern void gbt_split_page(Relation index, Buffer pbuf, Buffer buf, GbtSplitBuf *sb,
						   const GbtSplitPlan *plan, bool may_recycle);
extern void gbt_split_root(Relation index, Buffer rootbuf, GbtSplitBuf *sb,
						   const GbtSplitPlan *plan, bool may_recycle);
extern void gbt_leaf_insert_few(Relation index, Buffer buf, const uint64 *keys,
								const uint64 *tids, int n);
extern bool gbt_leaf_has_room(Relation index, Buffer buf, const GbtEntry *e, Size k);
extern void gbt_smo_run(Relation index, BlockNumber root, GbtSmoTarget *target,
						GbtLeafAction action, void *arg);

/* insert_merge.c */
extern bool gbt_leaf_merge_fits(Page page, const GbtEntry *e, Size k, bool posting);
extern bool gbt_leaf_merge(Page page, const GbtEntry *e, Size k, bool spread);

#endif							/* GBTREE_INSERT_H */
