/*-------------------------------------------------------------------------
 *
 * gbtree_scan.h
 *	  The state of a gbtree index scan, shared by scan.c (reading leaves,
 *	  GPU batches, the AM entry points), scankey.c (turning the scan keys
 *	  into segments) and scan_parallel.c (parallel scans).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_SCAN_H
#define GBTREE_SCAN_H

#include "gbtree.h"

#include "access/relscan.h"
#include "portability/instr_time.h"

/* One tree to scan, and the ranges of keys wanted from it */
typedef struct GbtSegment
{
	BlockNumber root;
	GbtRange   *ranges;			/* sorted, disjoint */
	int			nranges;
} GbtSegment;

/* The entries copied from one leaf, and where that leaf sits. */
typedef struct GbtScanPos
{
	int			seg;			/* segment of this leaf; -1 if no leaf */
	BlockNumber blk;
	BlockNumber next;			/* right-link when read */
	BlockNumber prev;			/* left-link when read */
	bool		rightmost;
	bool		deleted;		/* leaf was unlinked (read via a stale link) */
	uint64		hikey;			/* high key (for a deleted leaf: the low key */
	uint64		hitid;			/* its right sibling must have) */
	uint64		pagelowkey;		/* the leaf's low key */
	uint64		pagelowtid;
	bool		hasentries;		/* leaf had any entry at all */
	bool		nullkeys;		/* its segment is the NULL entries' tree */
	uint64		lowkey;			/* its first entry's key, if so */
	XLogRecPtr	lsn;			/* the leaf's LSN when read */
	bool		pinned;			/* pinned ever since it was read */
	int			nitems;
	int			itemIndex;
	GbtEntry	items[GBT_LEAF_MAX_ENTRIES];
} GbtScanPos;

typedef struct GbtScanOpaqueData
{
	GbtIndexInfo *info;			/* first: gbt_scan_is_wide reads it */
	MemoryContext keycxt;		/* array keys' ranges; made on first use */
	GbtRange	fixed_ranges[2];	/* the ranges of scans without arrays */
	MemoryContext tupcxt;		/* index-only result tuple */
	bool		impossible;
	int			nsegs;
	GbtSegment	segs[2];
	/*
	 * A large = ANY array bound for the GPU: its keys as given (NULLs
	 * dropped, bounds applied), unsorted and maybe repeated, which the
	 * device sorts and deduplicates; the value segment holds their number
	 * and NULL ranges until a CPU path needs them (gbt_points_to_ranges).
	 */
	uint64	   *points;
	bool		started;
	Buffer		buf;			/* pin on pos.blk while items are returned */
	GbtScanPos	pos;
	GbtScanPos *mark;			/* saved by ammarkpos */
	bool		par_serial;		/* parallel scan run whole by this participant */
	bool		par_chunk;		/* scanning a claimed chunk of a parallel scan */
	bool		par_slices;		/* ... whose chunks are slices of the ranges */
	GbtRange   *slice_base;		/* all the ranges of segment 0, which a */
	int			slice_nbase;	/* slice narrows to its part */
	bool		clip;			/* entries from (clip_key, clip_tid) on are */
	uint64		clip_key;		/* another chunk's */
	uint64		clip_tid;
	/* GPU scans: every match, fetched in one batch, in index order */
	GbtEntry   *gpu_items;
	int64		gpu_n;
	int64		gpu_i;
	int64		gpu_mark;
	int64		gpu_nulls_from;	/* items from here on are NULL entries */
	int64		gpu_nulls_to;
	bool		gpu_locked;		/* holds GBT_GPU_SCAN_LOCK */
	bool		markValid;
	/* entries whose heap tuples were found dead to all (kill_prior_tuple) */
	GbtEntry   *killed;			/* made on first use */
	int			nkilled;
	BlockNumber kill_blk;		/* ... all from this leaf */
	XLogRecPtr	kill_lsn;		/* ... as it was at this LSN */
	bool		kill_pinned;	/* ... which stayed pinned since */
	IndexTuple	itup;			/* index-only result for non-null keys */
	int16		attlen;
	bool		int64_keys;		/* ascending int8-like keys: a datum is key ^ sign */
} GbtScanOpaqueData;

typedef GbtScanOpaqueData *GbtScanOpaque;

/* milliseconds since start, for the DEBUG1 timings */
static inline double
gbt_ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* scan.c */
extern void gbt_scan_drop_pin(GbtScanOpaque so);
extern Buffer gbt_read_shared(Relation index, BlockNumber blkno);
extern bool gbt_seek_entry(IndexScanDesc scan, int segno, uint64 key, uint64 tid,
						   bool backward);
extern bool gbt_seek_segment_start(IndexScanDesc scan, int segno, bool backward);
extern bool gbt_next_leaf_serial(IndexScanDesc scan, ScanDirection dir);
extern bool gbt_scan_start(IndexScanDesc scan, ScanDirection dir);
extern bool gbt_scan_next_leaf(IndexScanDesc scan, ScanDirection dir);
extern Buffer gbt_kill_leaf(Relation index, Buffer pin, BlockNumber blk, XLogRecPtr lsn,
							bool kill_pinned, int nwords, bool *release);
extern void gbt_kill_leaf_done(Buffer buf, bool marked, bool release);
extern bool gbt_scan_gpu_fetch(IndexScanDesc scan);
extern bool gbt_gpu_scan_lock(Relation index);
extern bool gbt_scan_gpu_next(IndexScanDesc scan, ScanDirection dir);
extern void gbt_scan_gpu_release(IndexScanDesc scan);

/* scankey.c */
extern void gbt_prepare_scan_keys(IndexScanDesc scan);
extern void gbt_points_to_ranges(IndexScanDesc scan);

/* scan_parallel.c */
extern int	gbt_par_slice_count(int nranges);
extern bool gbt_par_claim_serial(IndexScanDesc scan);
extern bool gbt_par_next(IndexScanDesc scan, int want_slices);

#endif							/* GBTREE_SCAN_H */
