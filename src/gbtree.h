/*-------------------------------------------------------------------------
 *
 * gbtree.h
 *	  Internal declarations of the gbtree index access method.
 *
 * See src/README for the design and the on-disk format.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_H
#define GBTREE_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "catalog/pg_amop.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "utils/relcache.h"

#include "gbtree_compat.h"
#include "gbtree_node.h"
#include "gbtree_keyshape.h"

#define GBT_MAGIC			0x67627472	/* "gbtr" */
#define GBT_FORMAT_VERSION	1
#define GBT_FORMAT_VERSION_WIDE	2	/* keys of several columns or a uuid
										 * (wide.c): pages of keywords words */
#define GBT_EXTENSION_VERSION	"0.2"	/* gbtree.control's default_version */


/*
 * Heavyweight page-lock tags (not buffers): block 0 serializes structure
 * changes (insert.c), block 1 is VACUUM's recycling interlock (pages.c),
 * block 2 is VACUUM's interlock with GPU scans that hold no leaf pins.
 */
#define GBT_GPU_SCAN_LOCK	GBT_NULLROOT_BLKNO

#define GBT_DEFAULT_FILLFACTOR	90
#define GBT_MIN_FILLFACTOR		10
#define GBT_INNER_FILLFACTOR	70

/* strategy numbers: the btree ones */
#define GBT_NSTRATEGIES		5
#define GBT_NPROCS			1

/* build progress subphases (pg_stat_progress_create_index.phase) */
#define GBT_PHASE_TABLESCAN		2
#define GBT_PHASE_SORT			3
#define GBT_PHASE_LOAD			4
#define GBT_PHASE_GPU_SORT		5
/* 6 was a separate device-copy load; builds now load it as they write */
#define GBT_PHASE_GPU_MERGE		7
#define GBT_PHASE_MERGE_LOAD	8

/* How a column type maps to normalized keys */
typedef enum GbtKeyKind
{
	GBT_KIND_INT,				/* int2/int4/int8/date/time/timestamp(tz)/money */
	GBT_KIND_UINT,				/* oid, bool */
	GBT_KIND_FLOAT				/* float4/float8 */
} GbtKeyKind;

/* Contents of the metapage body (block 0) */
typedef struct GbtMetaPageData
{
	uint32		magic;
	uint32		version;
	BlockNumber root;
	BlockNumber nullroot;
	Oid			keytype;		/* column type at build time */
	uint16		indoption;		/* INDOPTION_DESC / NULLS_FIRST at build */
	uint16		fillfactor;
	uint64		build_entries;	/* entries at last build (stats) */
	uint16		keywords;		/* words a key (0 on one-word indexes) */
	uint16		ncols;			/* key columns (0 on one-word indexes) */
} GbtMetaPageData;

typedef GbtMetaPageData *GbtMetaPage;

#define GbtPageGetMeta(page)	((GbtMetaPage) PageGetContents(page))

/* reloptions */
typedef struct GbtOptions
{
	int32		vl_len_;
	int			fillfactor;
	int			deduplicate_items;	/* GBT_DEDUP_* */
} GbtOptions;

#define GBT_DEDUP_AUTO	0
#define GBT_DEDUP_ON	1
#define GBT_DEDUP_OFF	2

/* per-index cached info (rd_amcache) */
typedef struct GbtIndexInfo
{
	Oid			keytype;
	bool		desc;			/* index column is DESC: keys stored inverted */
	bool		nulls_first;

	/*
	 * Keys of several columns, or of one column wider than a word (uuid):
	 * wide.c's multi-word trees.  keytype, desc and nulls_first are the
	 * first column's.
	 */
	bool		wide;
	int			nwords;			/* 1 on one-word indexes */
	int			nkeycols;		/* key columns; the rest are INCLUDE ones */
	int			keybits;		/* the key columns' leading bits of the words */
	int			tidcol;			/* with INCLUDE columns: the shape column of
								 * the heap TID after the keys, else -1 */
	GbtKeyShape shape;
	Oid			coltypes[GBT_MAX_KEY_COLS];
	int			text_bytes;		/* bytes of each text column's field, or 0 */
	bool		is_text[GBT_MAX_KEY_COLS];	/* by shape column */
	/* by shape column: the collation whose sort keys order a text key, or 0 */
	Oid			sortkey_coll[GBT_MAX_KEY_COLS];
	/* by shape column: a numeric column's typmod (its scale decodes it) */
	int32		typmod[GBT_MAX_KEY_COLS];
	Oid			indexrelid;		/* for messages */
} GbtIndexInfo;

/* One entry as the scans and the build see it */
typedef struct GbtEntry
{
	uint64		key;
	uint64		tid;
} GbtEntry;

/* An inclusive range of keys [lo, hi], in index key space */
typedef struct GbtRange
{
	uint64		lo;
	uint64		hi;
} GbtRange;

/* gbtree.c */
extern int	gbt_simd_guc;
extern int	gbt_build_run_size;
extern int	gbt_fit_min_rows;	/* a build fits text words from this many rows */
extern Datum gbtree_handler(PG_FUNCTION_ARGS);
extern void _PG_init(void);
extern bytea *gbtoptions(Datum reloptions, bool validate);
extern int	gbt_get_fillfactor(Relation index);
extern bool gbt_get_dedup(Relation index);

/* keys.c */
extern GbtIndexInfo *gbt_index_info(Relation index);
extern GbtIndexInfo *gbt_index_info_copy(Relation index);
extern void gbt_keys_init(void);
extern bool gbt_amop_is_btrees(Form_pg_amop amop);
extern void gbt_check_opfamilies(Relation index);
extern bool gbt_type_supported(Oid typid);
extern bool gbt_wide_type_supported(Oid typid);
extern Oid	gbt_column_type(Relation index, int attno0, int32 *typmod);
extern bool gbt_type_is_text(Oid typid);
extern bool gbt_type_is_bytes(Oid typid);
extern unsigned char *gbt_numeric_key(const char *data, int len, int *keylen);
extern bool gbt_numeric_lays_out(int32 typmod);
extern Datum gbt_numeric_from_key(const unsigned char *k, int len, int32 typmod,
								  char *dst, Size room);
extern uint64 gbt_datum_to_key(Datum value, Oid typid, uint16 *tidflags);
extern Datum gbt_key_to_datum(uint64 key, uint16 tidflags, Oid typid);
extern uint64 gbt_index_key(GbtIndexInfo *info, Datum value, uint16 *tidflags);
extern Datum gbt_index_datum(GbtIndexInfo *info, uint64 ikey, uint64 tid);

/* pages.c */
extern void gbt_init_page(Page page, bool leaf, uint16 level, uint16 flags);
extern int	gbt_tree_height(Relation index);
extern void gbt_init_metapage(Page page, Relation index, uint64 entries);
extern Buffer gbt_new_buffer(Relation index, bool may_recycle);
extern void gbt_advise_huge(void *p, Size len);
extern bool gbt_lock_recycling(Relation index);
extern void gbt_unlock_recycling(Relation index);
extern void gbt_check_page(Relation index, Buffer buf);
extern void gbt_check_meta(Relation index);
extern bool gbt_hikey_le(GbtPageOpaque op, uint64 key, uint64 tid);
extern bool gbt_must_move_right(GbtPageOpaque op, uint64 key, uint64 tid, bool backward);
extern bool gbt_page_in_tree(GbtPageOpaque op, BlockNumber root);
extern void gbt_check_in_tree(Relation index, Buffer buf, BlockNumber root);
extern BlockNumber gbt_checked_rightlink(Relation index, Buffer buf);
extern Buffer gbt_lock_right_sibling(Relation index, Buffer buf, int mode);
extern BlockNumber gbt_inner_child(Relation index, Buffer buf, uint64 key, uint64 tid);
extern bool gbt_hikey_lt(GbtPageOpaque op, uint64 key, uint64 tid);
extern Buffer gbt_descend(Relation index, BlockNumber root, uint64 key, uint64 tid,
						  bool backward, int leaflock);

/* insert.c, for unique.c */

/*
 * What an SMO does at the leaf: called with the leaf and its parent (or
 * InvalidBuffer when the leaf is the root) exclusively locked; returns
 * true when the SMO is done, false to descend again to the target, which
 * it may have moved.
 */
typedef bool (*GbtLeafAction) (Relation index, Buffer pbuf, Buffer buf, bool may_recycle,
							   void *arg);
extern bool gbt_leaf_insert_if_room(Relation index, Buffer buf, uint64 key, uint64 tid);
extern void gbt_smo_at_leaf(Relation index, BlockNumber root, uint64 key, uint64 tid,
							GbtLeafAction action, void *arg);
extern void gbt_leaf_insert_or_split(Relation index, Buffer pbuf, Buffer buf, bool addnew,
									 uint64 key, uint64 tid, bool may_recycle);

/* unique.c */
struct PlannedStmt;
extern bool gbt_insert_unique(Relation index, Relation heap, IndexUniqueCheck mode,
							  BlockNumber root, uint64 key,
							  uint64 tid, Datum *values, bool *isnull);
extern bool gbt_wide_insert_unique(Relation index, Relation heap, IndexUniqueCheck mode,
								   BlockNumber root, const uint64 *words, GbtTail tail,
								   uint64 tid, Datum *values, bool *isnull);
extern bool gbt_wide_unique_fits_leaf(Relation index, Relation heap, Page page,
									  const uint64 *words, GbtTail tail, uint64 tid);
extern bool gbt_unique_fits_leaf(Relation index, Relation heap, Page page, uint64 key,
								 uint64 tid);
extern void gbt_check_unique_build(Relation heap, Relation index, struct IndexInfo *indexInfo);
extern void gbt_refuse_on_conflict(struct PlannedStmt *stmt);
extern void gbt_refuse_fk_index(void);
extern void gbt_unique_hooks_init(void);

/* build.c */
extern IndexBuildResult *gbtbuild(Relation heap, Relation index, struct IndexInfo *indexInfo);
extern void gbtbuildempty(Relation index);
extern char *gbtbuildphasename(int64 phasenum);

/* sort.c */
extern void gbt_radix_sort(GbtEntry *entries, GbtEntry *scratch, Size n);
extern void gbt_sort_entries(GbtEntry *e, Size n);
extern void gbt_merge_runs(const GbtEntry *src, GbtEntry *dst, Size n, Size runlen, int nruns);
extern void gbt_sort_u64(uint64 *v, int n);
extern int	gbt_sort_unique_u64(uint64 *v, int n);
extern int	gbt_sort_unique_words(uint64 *v, int n, int nw);
extern void gbt_sort_tids(uint64 *t, int n);

/* batch.c */
extern int	gbt_insert_batch_memory;
extern void gbt_batch_init(void);
extern bool gbt_batch_accepts(Relation index, struct IndexInfo *indexInfo);
extern bool gbt_batch_unique_defers(Relation index, Relation heap, struct IndexInfo *indexInfo);
extern void gbt_batch_add(Relation index, Relation heap, bool isnull, uint64 key, uint64 tid);
extern void gbt_batch_add_words(Relation index, Relation heap, bool isnull,
								const uint64 *words, int nw, GbtTail tail, uint64 tid);
extern void gbt_batch_flush_all(void);
extern void gbt_batch_flush_index(Oid indexoid);
extern void gbt_batch_flush_inserted(Relation index);
extern void gbt_batch_forget_index(Oid indexoid);

/* insert.c */
extern int	gbt_leaf_prefix(bool dedup, const uint64 *keys, const uint64 *tids, int n, int pct);
extern void gbt_insert_sorted(Relation index, Relation heap, BlockNumber root,
							  const GbtEntry *e, Size n, bool dedup,
							  const BlockNumber *leaves, uint64 *hinted, uint64 *descended);
#if PG_VERSION_NUM >= 170000
extern void gbtinsertcleanup(Relation index, struct IndexInfo *indexInfo);
#endif
extern bool gbtinsert(Relation index, Datum *values, bool *isnull,
					  ItemPointer ht_ctid, Relation heapRel,
					  IndexUniqueCheck checkUnique, bool indexUnchanged,
					  struct IndexInfo *indexInfo);

/* scan.c */
extern IndexScanDesc gbtbeginscan(Relation index, int nkeys, int norderbys);
extern void gbtrescan(IndexScanDesc scan, ScanKey keys, int nkeys,
					  ScanKey orderbys, int norderbys);
extern bool gbtgettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 gbtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
/*
 * The TID or entry buffer of gbt_scan_tids and gbt_scan_entries starts at
 * this many (two of the largest leaves, 32 or 64 KB) and doubles as needed
 */
#define GBT_SCAN_FIRST_CHUNK	(2 * GBT_LEAF_MAX_ENTRIES)
extern void *gbt_scan_buf_grow(void *buf, Size width, int *cap, int need, int max);
typedef void (*GbtTidSink) (void *arg, uint64 *tids, int n, bool all_read);
extern int64 gbt_scan_tids(IndexScanDesc scan, GbtTidSink sink, void *arg, int max);
typedef void (*GbtEntrySink) (void *arg, GbtEntry *entries, int n, bool all_read);
extern int64 gbt_scan_entries(IndexScanDesc scan, GbtEntrySink sink, void *arg, int max);
extern void gbtendscan(IndexScanDesc scan);
extern void gbtmarkpos(IndexScanDesc scan);
extern void gbtrestrpos(IndexScanDesc scan);
extern bool gbtcanreturn(Relation index, int attno);
extern Size gbtestimateparallelscan(GBT_ESTIMATEPARALLELSCAN_PARAMS);
extern void gbtinitparallelscan(void *target);
extern void gbtparallelrescan(IndexScanDesc scan);

/* vacuum.c */
extern IndexBulkDeleteResult *gbtbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback, void *callback_state);
extern IndexBulkDeleteResult *gbtvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats);
extern bool gbt_leaf_reclaim_dead(Relation index, Buffer buf);
extern void gbt_log_recovery_conflict(Relation index, BlockNumber blkno,
									  FullTransactionId horizon);

/* cost.c */
extern void gbtcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
							Cost *indexStartupCost, Cost *indexTotalCost,
							Selectivity *indexSelectivity, double *indexCorrelation,
							double *indexPages);

/* count.c */
extern bool gbt_enable_count_scan;
extern void gbt_count_init(void);
extern Expr *gbt_index_qual_for(RestrictInfo *rinfo, RelOptInfo *rel, IndexOptInfo *index,
								int col);
extern bool gbt_plain_key_columns(IndexOptInfo *index);
extern bool gbt_key_quals(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index, bool every,
						  List **iclauses, List **quals, List **rinfos);
extern IndexClause *gbt_index_clause(PlannerInfo *root, RestrictInfo *rinfo, Expr *qual,
										 int col);

/* arrayscan.c */
extern void gbt_array_scan_init(void);

/* join.c */
extern void gbt_join_init(void);

/* validate.c */
extern bool gbtvalidate(Oid opclassoid);
extern void gbtadjustmembers(Oid opfamilyoid, Oid opclassoid, List *operators,
							 List *functions);
extern char *gbt_opfamily_name(Oid opfamilyoid);

/* helpers */
static inline uint64
gbt_tid_from_itemptr(ItemPointer tid, uint16 flags)
{
	return gbt_tid_pack(ItemPointerGetBlockNumberNoCheck(tid),
						ItemPointerGetOffsetNumberNoCheck(tid), flags);
}

static inline void
gbt_tid_to_itemptr(uint64 packed, ItemPointer tid)
{
	ItemPointerSet(tid, gbt_tid_block(packed), gbt_tid_offset(packed));
}

/* A plain-form page's slots (a posting leaf has none: gbt_leaf_extract) */
static inline void
gbt_page_view(Page page, GbtNode *node)
{
	Assert(!gbt_page_is_posting((char *) page));
	gbt_node_view((char *) page, node);
}

/*
 * pd_lower of a leaf: past the slots and the dead-entry marks' space of
 * the plain form (full-page images leave out what lies beyond), past
 * everything in the posting form, whose body fills the page.
 */
static inline void
gbt_leaf_set_lower(Page page)
{
	((PageHeader) page)->pd_lower =
		gbt_page_is_posting((char *) page) ? GBT_POST_END : GBT_LEAF_END;
}

/* gbt_leaf_rewrite with pd_lower to match */
static inline void
gbt_page_leaf_rewrite(Page page, int n, const uint64 *keys, const uint64 *tids, bool spread)
{
	gbt_leaf_rewrite((char *) page, n, keys, tids, spread);
	gbt_leaf_set_lower(page);
}

#endif							/* GBTREE_H */
