/*-------------------------------------------------------------------------
 *
 * gbtree_wide_scan.h
 *	  The state of a scan of an index with multi-word keys, shared by
 *	  wide_scankey.c, which turns the scan keys into conditions, ranges
 *	  and their tails, and wide_scan.c, which reads those ranges (on the
 *	  CPU leaf by leaf, or on the GPU as one batch) and filters entries.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_WIDE_SCAN_H
#define GBTREE_WIDE_SCAN_H

#include "access/relscan.h"
#include "storage/buf.h"

#include "gbtree_scan.h"
#include "gbtree_tail.h"
#include "gbtree_wide.h"

/* more = ANY combinations than this are filtered rather than expanded */
#define WIDE_MAX_RANGES		(1 << 20)

typedef struct WideSeg
{
	BlockNumber root;
	GbtWordRange *ranges;
	int			nranges;

	/*
	 * Each range's ends as (words, tail): the tails of its lo and hi, or
	 * NULL when every range is bounded by its words alone (lotail lowest,
	 * hitail highest).  range_tails_cols and range_tails (wide_scankey.c)
	 * set them for a long text constant, whose words alone are only its
	 * first bytes.
	 */
	GbtTail    *lotails;
	GbtTail    *hitails;
} WideSeg;

/* A leaf's matching entries, and where the leaf sits */
typedef struct WidePos
{
	int			seg;			/* -1: nothing read yet */
	int			range;
	BlockNumber blk;
	BlockNumber next;			/* right-link when read */
	bool		rightmost;
	uint64		lowkey[GBT_MAX_KEY_WORDS];	/* the leaf's low key when read */
	uint64		lowtid;
	int			lowtaillen;		/* and its tail (tailed leaves) */
	unsigned char lowtail[GBT_TAIL_HIGHEST_LEN];
	uint64		hikey[GBT_MAX_KEY_WORDS];
	uint64		hitid;
	int			hitaillen;		/* and its tail (tailed leaves) */
	unsigned char hitail[GBT_TAIL_HIGHEST_LEN];
	XLogRecPtr	lsn;			/* the leaf's LSN when read */
	bool		pinned;			/* its pin kept since (needs_pin) */
	int			nitems;
	int			itemIndex;
	uint64		items[GBT_LEAF_MAX_ENTRIES * GBT_WIDE_MAX_STRIDE];	/* either form */
	/* a tailed leaf's: each item's tail in tbytes (itlen 0: none) */
	bool		tails;
	int			tused;
	uint16		itoff[GBT_MAX_SLOTS];
	uint16		itlen[GBT_MAX_SLOTS];
	unsigned char tbytes[GBT_PAGE_SIZE];
} WidePos;

typedef struct GbtWideScanData
{
	GbtIndexInfo *info;			/* first, as in GbtScanOpaqueData */
	int			nw;
	MemoryContext keycxt;		/* conditions, arrays and ranges */
	bool		impossible;
	bool		recheck;		/* a condition left to the heap's recheck */
	int			nsegs;
	WideSeg		segs[2];
	GbtColCond *conds;
	int			nconds;
	int			nrequired;		/* leading columns the ranges enforce */
	bool		filter_all;		/* ... none: check every condition */
	bool		need_filter;
	bool		text_filter;	/* a condition compares whole texts */
	bool		started;
	bool		par_idle;		/* a parallel participant left nothing to do */
	Buffer		pin;			/* the current leaf, pinned (needs_pin) */
	/* entries returned whose heap tuples are dead to all (scan.c's) */
	uint64	   *killed;			/* nw words and the TID each */
	int			nkilled;
	BlockNumber kill_blk;
	XLogRecPtr	kill_lsn;
	bool		kill_pinned;
	WidePos    *mark;
	bool		markValid;
	/* index-only results (itup_init on the first) */
	GbtItupPlan itup_plan;		/* how the words fill a tuple */
	char	   *itups;			/* tuples of entries [lo, hi) of the leaf or */
	Size		itups_stride;	/* GPU batch (gbt_wide_itup_fill_many) */
	int64		itups_lo;		/* empty: none */
	int64		itups_hi;
	uint64		itups_nulls;	/* those not made there: a NULL, a tail */
	IndexTuple	itup;			/* the others' (build_itup), */
	IndexTuple	itup_tail;		/* or, for an entry with a tail, here */
	Size		itup_tail_cap;	/* its allocation */
	char	   *decode_scratch; /* that entry's values (GBT_DECODE_SCRATCH) */
	GbtColBuf	bufs[GBT_MAX_KEY_COLS]; /* their uuid and text values */

	/* a GPU batch: every match, filtered, in index order (gpu_fetch) */
	uint64	   *gpu_items;		/* nw words and the TID each */
	int64		gpu_n;
	int64		gpu_i;			/* the current one; -1 or gpu_n: off the ends */
	int64		gpu_nulls_from; /* [from, to): the NULL tree's matches */
	int64		gpu_nulls_to;
	int64		gpu_mark;
	bool		gpu_locked;		/* GBT_GPU_SCAN_LOCK held instead of pins */

	WidePos		pos;			/* last: beginscan zeroes what comes before */
} GbtWideScanData;

typedef GbtWideScanData *GbtWideScan;

/* wide_scankey.c */
extern void gbt_wide_prepare_scan(IndexScanDesc scan);

#endif							/* GBTREE_WIDE_SCAN_H */
