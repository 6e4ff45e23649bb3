/*-------------------------------------------------------------------------
 *
 * gbtree_wide.h
 *	  Indexes with multi-word keys: several key columns, or one column
 *	  wider than a word (uuid).  Their trees are node.c's pages of
 *	  keywords words (src/README, "Multi-word keys"); wide.c builds them,
 *	  wide_tree.c descends and inserts, wide_scankey.c and wide_scan.c
 *	  scan them (on the GPU too); vacuum.c vacuums them with the one-word
 *	  leaves and wide_vacuum.c deletes their empty ones; wide_check.c
 *	  checks them.  Builds and inserts stay on the CPU, and the batch, count,
 *	  array-scan and join paths do not take them.
 *
 * An entry is nwords key words and the packed TID, one after another
 * ("stride" words), as gbtree_wsort.h sorts them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_WIDE_H
#define GBTREE_WIDE_H

#include "access/relscan.h"
#include "common/hashfn.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"

#include "gbtree.h"
#include "gbtree_keyrange.h"
#include "gbtree_walk.h"
#include "gbtree_tailwalk.h"

#define GBT_WIDE_MAX_STRIDE		(GBT_MAX_KEY_WORDS + 1)

/* the flag bit of a float column's -0.0, beside the TID */
#define GBT_WIDE_NEGZERO(col)	((uint16) (1 << (col)))

/* Whether conversion clamped a scan value into the column's field */
typedef enum GbtClamp
{
	GBT_CLAMP_NONE,
	GBT_CLAMP_BELOW,			/* below every value of the column's type */
	GBT_CLAMP_ABOVE,			/* above every value */
	GBT_CLAMP_PAST				/* text longer than the field: above the field
								 * value of its first bytes, below the next */
} GbtClamp;

/* Room for one column's value decoded by reference: a uuid, a text */
typedef union GbtColBuf
{
	int32		align;			/* a varlena header's */
	char		bytes[VARHDRSZ + GBT_MAX_KEY_WORDS * 8];
} GbtColBuf;

static inline bool
gbt_index_is_wide(Relation index)
{
	return gbt_index_info(index)->wide;
}

/*
 * Whether an open scan is of a multi-word index: both scans' states
 * (GbtScanOpaqueData, wide_scan.c's) begin with their own copy of the
 * index's information (the relcache's may be freed under an open scan),
 * so the AM entry points dispatch per call without the relcache.
 */
static inline bool
gbt_scan_is_wide(IndexScanDesc scan)
{
	return (*(GbtIndexInfo **) scan->opaque)->wide;
}

/* collate.c */
extern void gbt_collate_column(Relation index, GbtIndexInfo *info, int a, int s);
extern bool gbt_collation_orders_by_bytes(Oid collid);
extern bool gbt_wide_dedup(Relation index, const GbtIndexInfo *info);
extern const unsigned char *gbt_text_key(const GbtIndexInfo *info, int s, const text *t,
										 int *len, bool *alloc);
extern int	gbt_text_key_value_start(const unsigned char *k, int len);

/* page images for gbt_node_split, and the separator it made */
typedef struct WideSplit
{
	PGAlignedBlock old;
	PGAlignedBlock left;
	PGAlignedBlock right;
	uint64		sep[GBT_MAX_KEY_WORDS];
	uint64		septid;
	GbtTail		septail;		/* points into right */
	int			placed;			/* gbt_node_split's result */
} WideSplit;

/* the words of a key on the page (keywords: 0 on one-word pages) */
static inline int
gbt_page_words(Page page)
{
	int			k = gbt_page_opaque((char *) page)->keywords;

	return k > 0 ? k : 1;
}

/* wide_post.c */
extern void gbt_wide_leaf_fill(Page page, int nw, const uint64 *e, int n);
extern bool gbt_wide_posting_insert(Relation index, Buffer buf, int nw, const uint64 *key,
									uint64 tid);
extern bool gbt_wide_posting_takes(Page page, int nw, const uint64 *key, uint64 tid);
extern bool gbt_wide_posting_instead_of_split(Relation index, Buffer buf, int nw,
											  const uint64 *key, uint64 tid);
extern void gbt_wide_posting_split_images(Page page, int nw, WideSplit *ws, const uint64 *key,
										  GbtTail tail, uint64 tid, int fillfactor);
extern void gbt_wide_merge_page(Page page, const uint64 *add, int m);
extern Buffer gbt_wide_posting_split(Relation index, Buffer pbuf, Buffer buf, int nw,
									 WideSplit *ws, const uint64 *key, GbtTail tail, uint64 tid,
									 bool may_recycle);
extern Size gbt_wide_posting_batch(Relation index, Buffer buf, int nw, const uint64 *e,
								   const GbtTail *tails, int stride, Size i, Size n,
								   const uint64 *hk, uint64 ht, bool rightmost, bool convert);

/* wide.c */
extern void gbt_wide_info_init(Relation index, GbtIndexInfo *info, int keywords);
extern int	gbt_wide_fit_words(const GbtIndexInfo *info, int keylen);
extern void gbt_wide_reshape_key(const GbtIndexInfo *from, const GbtIndexInfo *to,
								 const uint64 *src, uint64 *dst);
extern bool gbt_wide_refit_first(Relation index, Oid heapoid, int held_refs, uint64 *values,
								 Size *nvalues, uint64 *nulls, Size *nnulls,
								 const uint64 *extra, int extra_tlen, bool extra_null);
extern bool gbt_wide_encode(GbtIndexInfo *info, Datum *values, bool *isnull,
							ItemPointer htid, uint64 *words, uint16 *tidflags);
extern bool gbt_wide_encode_tail(GbtIndexInfo *info, Datum *values, bool *isnull,
								 ItemPointer htid, uint64 *words, uint16 *tidflags,
								 unsigned char *tail, int *tlen, int *keylen);
extern void gbt_tail_corrupted(Oid indexrelid);
/* gbt_wide_decode_tail's scratch: every value's bytes, headers and alignment */
#define GBT_DECODE_SCRATCH \
	(GBT_TAIL_HIGHEST_LEN + GBT_MAX_KEY_WORDS * 8 + GBT_MAX_KEY_COLS * (VARHDRSZ + MAXIMUM_ALIGNOF + 16))
extern void gbt_wide_decode_tail(GbtIndexInfo *info, const uint64 *words,
								 const unsigned char *tail, int tlen, uint64 tid,
								 Datum *values, bool *isnull, char *scratch);
extern void gbt_wide_decode(GbtIndexInfo *info, const uint64 *words, uint64 tid,
							Datum *values, bool *isnull, GbtColBuf *bufs);
/* An index-only tuple's columns, written from the words (wide.c) */
typedef enum GbtItupKind
{
	GBT_ITUP_INT16,
	GBT_ITUP_INT32,
	GBT_ITUP_INT64,
	GBT_ITUP_OID,
	GBT_ITUP_BOOL,
	GBT_ITUP_FLOAT4,
	GBT_ITUP_FLOAT8,
	GBT_ITUP_UUID,
	GBT_ITUP_TEXT,				/* a short varlena of the field's bytes */
	GBT_ITUP_NUMERIC			/* a short varlena of the numeric they key */
} GbtItupKind;

typedef struct GbtItupStep
{
	uint8		kind;			/* GbtItupKind */
	char		align;			/* the attribute's attalign */
	int16		len;			/* and its attlen (fixed widths) */
	uint16		bits;			/* the field's width */
	bool		nulls_first;
	int16		nullpos;		/* the field's null bit, or -1 */
	int16		pos;			/* its first value bit */
	uint16		negzero;		/* the column's -0.0 flag among the TID's */
	uint64		inv;			/* DESC: the field's bits complemented */
	Size		off;			/* where the value goes in the tuple's data */
	int32		typmod;			/* a numeric's (its scale) */
} GbtItupStep;

typedef struct GbtItupPlan
{
	int			nsteps;
	bool		varwidth;		/* a text column: offsets found as it goes */
	Size		maxsize;		/* the most bytes a fill writes (without
								 * text: the data's size) */
	bool		tail_last;		/* gbt_wide_itup_fill_tail can fill entries
								 * with a tail: that of an ASC text last */
	unsigned char tail_byte;	/* such a tail's first byte */
	bool		text_alone;		/* one text column, all the key's words */
	bool		decode;			/* a text column's words hold its order key
								 * (collate.c), not its bytes: no plan */
	GbtItupStep step[GBT_MAX_KEY_COLS];	/* step c writes index column c */
} GbtItupPlan;

extern void gbt_wide_itup_plan(GbtIndexInfo *info, TupleDesc desc, GbtItupPlan *plan);
extern bool gbt_wide_itup_fill_tail(const GbtItupPlan *plan, const uint64 *words, uint64 tid,
									const unsigned char *tail, int tlen, char *data,
									Size *size);
extern uint64 gbt_wide_itup_fill_many(const GbtItupPlan *plan, const uint64 *items,
									  int nwords, int n, char *out, Size stride);

/* whether the words hold a plan's values, for gbt_wide_itup_fill_many */
static inline bool
gbt_wide_itup_batch(const GbtItupPlan *plan)
{
	return !plan->decode;
}
extern GbtClamp gbt_wide_field(GbtIndexInfo *info, int col, Datum value, Oid typid,
							   GbtColValue *v, uint16 *flags);
extern IndexBuildResult *gbt_wide_build(Relation heap, Relation index,
										struct IndexInfo *indexInfo);
extern void gbt_wide_init_page(Page page, bool leaf, uint16 level, uint16 flags, int nwords);
extern void gbt_wide_set_lower(Page page);
extern void gbt_wide_check_page(Relation index, Buffer buf, int nwords);

/* wide_tree.c */
extern Buffer gbt_wide_descend(Relation index, BlockNumber root, int nwords,
							   const uint64 *key, GbtTail tail, uint64 tid, bool backward,
							   int leaflock);
extern void gbt_wide_insert(Relation index, BlockNumber root, const uint64 *key, GbtTail tail,
							uint64 tid);
extern void gbt_wide_insert_batch(Relation index, Relation heap, BlockNumber root,
								  const uint64 *slots, Size nslots, bool skip_present);
extern void gbt_wide_sort_entries(uint64 *e, Size n, int nw);
extern bool gbt_wide_node_put(Page page, GbtNode *node, const uint64 *key, GbtTail tail,
							  uint64 tid, uint32 child);
extern void gbt_wide_put_body(Page page, const char *img);
extern void gbt_wide_put_halves(Page lp, Page rp, const WideSplit *ws, BlockNumber lblk,
								BlockNumber rblk);
extern void gbt_wide_put_downlink(Relation index, Buffer pbuf, Page pp, const uint64 *sep,
								  GbtTail septail, uint64 septid, BlockNumber rblk);
extern gbt_noreturn void gbt_wide_report_inconsistent(Relation index, Buffer buf,
													  const char *what);
extern bool gbt_wide_page_has_room(Page page, GbtTail tail);
extern Buffer gbt_wide_lock_old_right(Relation index, BlockNumber rightlink, int nw);

/*
 * GbtEntry slots an insert batch gives an entry of nw words, its TID, the
 * length of its tail and the tail's bytes (gbt_batch_add_words)
 */
static inline Size
gbt_wide_batch_slots(int nw, int tlen)
{
	return (nw + 2 + (tlen + 7) / 8 + 1) / 2;
}
extern bool gbt_wide_move_right(Page page, int nw, const uint64 *key, GbtTail tail, uint64 tid,
								bool backward);
extern bool gbt_wide_leaf_insert_if_room(Relation index, Buffer buf, const uint64 *key,
										 GbtTail tail, uint64 tid);
extern Buffer gbt_wide_lock_right_sibling(Relation index, Buffer buf, int nw, int mode);

/* What gbt_wide_smo does at the leaf, which it holds with its parent */
typedef enum GbtWideLeafDo
{
	GBT_WIDE_INSERT,			/* insert, splitting the leaf if full */
	GBT_WIDE_MAKE_ROOM,			/* split the leaf if full, insert nothing */
	GBT_WIDE_NOTHING,
	GBT_WIDE_APPEND				/* a new right page takes a run above the
								 * leaf's entries (wide_tree.c's insert
								 * batch only: arg is its WideAppend) */
} GbtWideLeafDo;
typedef GbtWideLeafDo (*GbtWideLeafAction) (Relation index, Buffer leaf, void *arg);
extern void gbt_wide_smo(Relation index, BlockNumber root, const uint64 *key, GbtTail tail,
						 uint64 tid, GbtWideLeafAction action, void *arg);
extern void gbt_wide_page_bounds(Page page, bool high, uint64 *key, uint64 *tid);
/* a tail's hash for heapallindexed: 0 for none */
static inline uint64
gbt_wide_tail_hash(GbtTail tail)
{
	return tail.len == 0 ? 0 : hash_bytes_extended(tail.data, tail.len, 0) | 1;
}

/* wide_check.c */
extern const char *gbt_wide_page_range_problem(const GbtNode *node);
#ifdef USE_ASSERT_CHECKING
extern void gbt_wide_check_written(Relation index, Buffer buf, const char *where);
#define GBT_CHECK_WRITTEN(index, buf, where) gbt_wide_check_written(index, buf, where)
#else
#define GBT_CHECK_WRITTEN(index, buf, where) ((void) 0)
#endif
extern void gbt_wide_verify(Relation index, BlockNumber root, uint64 **entries, Size *n,
							Size *cap);

/* wide_vacuum.c */
/* levels of inner pages one leaf's deletion may take with it (vacuum.c) */
#define GBT_DELETE_MAX_LEVELS 16
extern bool gbt_wide_delete_leaf(Relation index, BlockNumber blkno, BlockNumber *deleted,
								 int *ndeleted);
extern bool gbt_give_last_child(Relation index, int nw, Buffer gbuf, int sx, bool gleftmost,
								BlockNumber *xdeleted);
extern bool gbt_make_not_last(Relation index, BlockNumber root, int nw, BlockNumber target,
							  uint16 level, int depth, BlockNumber *deleted, int *ndeleted);

/* wide_scan.c */
extern IndexScanDesc gbt_wide_beginscan(IndexScanDesc scan);
extern void gbt_wide_rescan(IndexScanDesc scan, ScanKey keys, int nkeys);
extern bool gbt_wide_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 gbt_wide_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern int64 gbt_wide_scan_tids(IndexScanDesc scan, GbtTidSink sink, void *arg, int max);
/* n whole entries, each its words then its TID (gbt_wide_scan_items) */
typedef void (*GbtWideItemSink) (void *arg, const uint64 *items, int n, bool all_read);
extern int64 gbt_wide_scan_items(IndexScanDesc scan, GbtWideItemSink sink, void *arg, int max);
extern void gbt_wide_endscan(IndexScanDesc scan);
extern void gbt_wide_markpos(IndexScanDesc scan);
extern void gbt_wide_restrpos(IndexScanDesc scan);

#endif							/* GBTREE_WIDE_H */
