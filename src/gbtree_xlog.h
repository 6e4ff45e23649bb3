/*-------------------------------------------------------------------------
 *
 * gbtree_xlog.h
 *	  gbtree's WAL: the records of its custom resource manager, and the
 *	  builder through which every page change is logged, as those records
 *	  when gbtree is preloaded, as generic WAL otherwise (wal.c).
 *
 * See "WAL" in src/README.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_XLOG_H
#define GBTREE_XLOG_H

#include "postgres.h"

#include "access/xlogreader.h"
#include "lib/stringinfo.h"

#include "gbtree.h"

/*
 * gbtree's resource manager ID.  Custom IDs are 128-255; 128 is
 * RM_EXPERIMENTAL_ID.  Listed on https://wiki.postgresql.org/wiki/
 * CustomWALResourceManagers by the maintainers; another extension using
 * the same ID cannot be preloaded beside gbtree (PostgreSQL refuses).
 */
#define RM_GBTREE_ID		161
#define GBT_RMGR_NAME		"gbtree"

/* record types (high bits of xl_info) */
#define XLOG_GBT_INSERT			0x00	/* entries into one page, gap by gap */
#define XLOG_GBT_MERGE			0x10	/* a leaf rewritten with entries merged in */
#define XLOG_GBT_SPLIT			0x20	/* left, new right, parent, right sibling */
#define XLOG_GBT_ROOT_SPLIT		0x30	/* root rebuilt one level up, two new pages */
#define XLOG_GBT_VACUUM			0x40	/* slots of a leaf turned into gaps */
#define XLOG_GBT_DELETE_PAGE	0x50	/* an empty leaf unlinked */
#define XLOG_GBT_WINSERT		0x60	/* an entry of a multi-word key into a leaf */
#define XLOG_GBT_WSPLIT			0x70	/* a split of a multi-word page */
#define XLOG_GBT_WMERGE			0x80	/* a multi-word leaf rewritten, entries merged */

/*
 * XLOG_GBT_INSERT: block 0's data is n x (key, tid, child) as three
 * arrays, inserted in order with gbt_node_insert.
 *
 * XLOG_GBT_MERGE: block 0's data is n x GbtEntry, sorted, merged into the
 * leaf, which is laid out again with its gaps spread.
 */

/*
 * XLOG_GBT_WINSERT: block 0's data is one entry of a multi-word tree (the
 * leaf's keywords words, the TID, then its tail's bytes if it has one, on
 * a page already tailed), inserted with gbt_node_insert_tail.
 */

/*
 * XLOG_GBT_WMERGE: block 0's data is m sorted entries of a multi-word tree
 * (the leaf's keywords words and the TID each, no tails) merged into the
 * leaf, which is laid out again from all its entries in whichever form
 * holds them (wide_post.c: inserts into a posting leaf, a full plain leaf
 * taking the posting form, a batch's entries).
 */

/*
 * XLOG_GBT_WSPLIT: a split of a multi-word page (wide_tree.c, split_page
 * and append_page; wide_wal.c).  Block 0 the split page, 1 the new right
 * page (init), 2 the parent, 3 the old right sibling (if any).
 *
 * The split page is cut again at redo by the same node function from the
 * same bytes, so block 0's data is only that function's input: the entries
 * given to it (nnew x: the words, the TID; for GBT_WSPLIT_HALVES also the
 * child, the tail's length and its bytes).  A full image of block 0, its
 * first change since a checkpoint, leaves that data out.  An append split
 * (GBT_WSPLIT_APPEND) puts them in the main data instead, after the
 * xl_gbt_wsplit, since they are also all its right page's entries: block
 * 1 then leaves its entries' words and TIDs out (xl_gbt_wpage.given).
 *
 * Block 1's data describes the right page as it was built: an
 * xl_gbt_wpage, then the high and low keys' other words (2 x (nwords - 1)),
 * the entries' words (n x nwords), TIDs (n), children (inner pages), tail
 * lengths (uint16, tailed pages), and the tail bytes (low key, high key,
 * entries), all rebuilt by gbt_node_fill_page.  Where that would not give
 * the page's bytes back (image), the page's body follows instead.
 *
 * Block 2's data: the downlink put into the parent: the separator's words,
 * its TID, then its tail's bytes.
 */
typedef enum GbtWsplitKind
{
	GBT_WSPLIT_HALVES,			/* gbt_node_split (split_page) */
	GBT_WSPLIT_CUT,				/* gbt_node_cut_split */
	GBT_WSPLIT_MERGE,			/* gbt_node_merge_split (append_page) */
	GBT_WSPLIT_APPEND			/* gbt_node_append_split (append_page) */
} GbtWsplitKind;

typedef struct xl_gbt_wsplit
{
	uint8		kind;			/* GbtWsplitKind */
	bool		grows;			/* HALVES: grows_at_new */
	bool		hasnew;			/* HALVES: a new entry is given */
	int16		share;			/* HALVES: leftpct; MERGE: nleft */
	uint16		nnew;			/* entries given (block 0's data) */
	uint16		nwords;
	uint16		septaillen;		/* the separator's tail (block 2's data) */
} xl_gbt_wsplit;

typedef struct xl_gbt_wpage
{
	GbtPageOpaqueData op;		/* the page's special space as built */
	uint16		n;				/* entries */
	uint16		lowtaillen;
	uint16		hitaillen;
	bool		spread;			/* gaps spread, else packed */
	bool		image;			/* the body follows, not a description */
	bool		given;			/* the entries are the given ones (main data) */
} xl_gbt_wpage;

/*
 * XLOG_GBT_SPLIT: block 0 the split page, 1 the new right page (init),
 * 2 the parent, 3 the old right sibling (leaves that had one).  Block 0's
 * data: the new entries that went left (GbtEntry[]); the left page keeps
 * its old entries below the separator and takes these.  Or, when the
 * left page would have needed a full image (left_whole), block 0 is
 * WILL_INIT and its data is all the left page's entries.  Block 1's data:
 * the right page's entries (keys, tids, and children for inner pages).
 */
typedef struct xl_gbt_split
{
	uint64		sepkey;			/* separator: right page's low key */
	uint64		septid;
	uint64		hikey;			/* the split page's old high key */
	uint64		hitid;
	uint64		lowkey;			/* and its low key, */
	uint64		lowtid;
	uint32		rightlink;		/* right-link */
	uint32		leftlink;		/* and left-link */
	uint16		level;
	uint16		flags;			/* the split page's old flags */
	uint16		nright;			/* entries of the right page */
	bool		rspread;		/* gaps spread over the right page */
	bool		left_whole;		/* block 0 (init) holds all the left page's
								 * entries, as block 1 does the right's */
} xl_gbt_split;

/*
 * XLOG_GBT_ROOT_SPLIT: block 0 the root (init), 1 and 2 the new pages
 * (init), with their entries as block data as for a split's right page.
 */
typedef struct xl_gbt_root_split
{
	uint64		sepkey;
	uint64		septid;
	uint16		level;			/* the old root's level */
	uint16		flags;			/* the old root's flags */
	uint16		nleft;
	uint16		nright;
	bool		rspread;
} xl_gbt_root_split;

/* XLOG_GBT_VACUUM: block 0's data is the slots, uint16[], in the order deleted */

/*
 * XLOG_GBT_DELETE_PAGE: block 0 the parent, 1 the empty leaf, 2 its right
 * sibling, 3 its left sibling (if any).
 */
typedef struct xl_gbt_delete_page
{
	uint64		lowkey;			/* the leaf's low key: its right sibling's now */
	uint64		lowtid;
	uint64		xact;			/* next full xid at deletion */
	uint32		rightlink;
	uint32		leftlink;
	uint16		parent_slot;	/* the leaf's downlink */
	uint16		right_slot;		/* the right sibling's downlink, removed */
} xl_gbt_delete_page;

/* The builder: one record of up to GBT_WAL_MAX_BLOCKS pages */
#define GBT_WAL_MAX_BLOCKS	4

/* gbt_wal_register flags */
#define GBT_WAL_NEW			0x01	/* the page is built from nothing */
#define GBT_WAL_WHOLE		0x02	/* rewritten whole: generic WAL logs an image */

typedef struct GbtWal GbtWal;

extern bool gbt_wal_rmgr;
extern void gbt_wal_register_rmgr(void);
extern GbtWal *gbt_wal_start(Relation index);
extern Page gbt_wal_register(GbtWal *w, Buffer buf, int flags);
extern void gbt_wal_block_data(GbtWal *w, int block, const void *data, Size len);
extern void gbt_wal_main_data(GbtWal *w, const void *data, Size len);
extern void gbt_wal_finish(GbtWal *w, uint8 info);

/* generic WAL records, written by gbtree (wal.c) */
typedef struct GbtGxlog GbtGxlog;
extern GbtGxlog *gbt_gxlog_start(Relation index);
extern Page gbt_gxlog_register(GbtGxlog *g, Buffer buf, int flags);
extern void gbt_gxlog_hint(GbtGxlog *g, Buffer buf, int off, int len);
extern void gbt_wal_hint_node(GbtWal *w, int block, Page page, const GbtNode *node);
extern void gbt_gxlog_hint_node(GbtGxlog *g, Buffer buf, Page page, const GbtNode *node);
extern XLogRecPtr gbt_gxlog_finish(GbtGxlog *g);
extern void gbt_gxlog_abort(GbtGxlog *g);
extern void gbt_wal_abort(GbtWal *w);
extern bool gbt_wal_insert_inplace(Relation index, Buffer buf, const uint64 *keys,
								   const uint64 *tids, const uint32 *child, int n);
extern bool gbt_leaf_crowded(Relation index, Page page, const uint64 *key, uint64 tid);
extern bool gbt_wal_delete_slots_inplace(Relation index, Buffer buf, const uint16 *slots, int n);
extern bool gbt_wal_insert_words_inplace(Relation index, Buffer buf, const uint64 *key,
										 GbtTail tail, uint64 tid);

/* the WSPLIT record (wide_wal.c) */
typedef struct GbtWsplitLog GbtWsplitLog;
extern GbtWsplitLog *gbt_wsplit_start(int nwords, GbtWsplitKind kind, int share, bool grows,
									  int nnew, const uint64 *keys, const uint64 *tids,
									  GbtTail tail, uint32 child);
extern void gbt_wsplit_finish(GbtWal *w, GbtWsplitLog *lg, Page rp, const uint64 *sep,
							  GbtTail septail, uint64 septid);
extern void gbt_wsplit_free(GbtWsplitLog *lg);
extern void gbt_wide_redo_split(XLogReaderState *record);
extern void gbt_wide_redo_merge(XLogReaderState *record);
extern void gbt_wide_desc_split(StringInfo buf, XLogReaderState *record);

/*
 * The page changes, applied alike when a change is made and when its
 * record is replayed, so that both give the same bytes (insert.c,
 * vacuum.c).
 */
extern bool gbt_page_insert(Page page, const uint64 *keys, const uint64 *tids,
							const uint32 *child, int n);
extern bool gbt_page_insert_view(Page page, const uint64 *keys, const uint64 *tids,
								 const uint32 *child, int n, GbtNode *node, bool *gaps);
extern void gbt_page_merge(Page page, const GbtEntry *e, Size k);
extern void gbt_page_split_left(Page page, uint64 sepkey, uint64 septid,
								const GbtEntry *lnew, int nlnew, BlockNumber rblk);
extern void gbt_page_split_left_fill(Page page, const GbtPageOpaqueData *old, int n,
									 const uint64 *keys, const uint64 *tids,
									 const uint32 *child, uint64 sepkey, uint64 septid,
									 BlockNumber rblk);
extern void gbt_page_split_right(Page page, const xl_gbt_split *x, const uint64 *keys,
								 const uint64 *tids, const uint32 *child, BlockNumber lblk);
extern void gbt_page_root_split(Page root, Page apage, Page bpage, const xl_gbt_root_split *x,
								const uint64 *keys, const uint64 *tids, const uint32 *child,
								BlockNumber ablk, BlockNumber bblk);
extern void gbt_page_delete_slots(Page page, const uint16 *slots, int n);
extern void gbt_page_unlink_parent(Page ppage, const xl_gbt_delete_page *x);
extern void gbt_page_unlink_leaf(Page lpage, const xl_gbt_delete_page *x);
extern void gbt_page_unlink_right(Page rspage, const xl_gbt_delete_page *x);
extern void gbt_page_unlink_left(Page lspage, const xl_gbt_delete_page *x);

#endif							/* GBTREE_XLOG_H */
