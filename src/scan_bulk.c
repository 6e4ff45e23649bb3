/*-------------------------------------------------------------------------
 *
 * scan_bulk.c
 *	  Scans that return every match at once, in no particular order:
 *	  amgetbitmap, and the TID and entry sinks of GbtreeCount and
 *	  GbtreeJoin.  They start and walk the scan as scan.c does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_scan.h"
#include "gbtree_wide.h"

/* GPU batches of at least this many matches go into a bitmap in TID order */
#define GBT_BITMAP_SORT_MIN		4096

int64
gbtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	ItemPointerData tids[GBT_LEAF_MAX_ENTRIES];
	int64		ntids = 0;

	if (gbt_scan_is_wide(scan))
		return gbt_wide_getbitmap(scan, tbm);

	if (!gbt_scan_start(scan, ForwardScanDirection))
	{
		gbt_scan_drop_pin(so);
		if (so->gpu_items)
			gbt_scan_gpu_release(scan);
		return 0;
	}
	if (so->gpu_items && so->gpu_n >= GBT_BITMAP_SORT_MIN && so->gpu_n <= INT_MAX)
	{
		/*
		 * A large batch's TIDs come in key order, so nearly every one is on
		 * another heap block than the one before, and the bitmap looks its
		 * block up again for each.  In (block, offset) order it looks up
		 * each block once: sort them first (radix, linear).
		 */
		int			n = (int) so->gpu_n;
		uint64	   *t = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);

		gbt_advise_huge(t, sizeof(uint64) * n);
		for (int i = 0; i < n; i++)
			t[i] = so->gpu_items[i].tid >> 16;	/* block, offset; no flags */
		gbt_scan_gpu_release(scan);
		gbt_sort_tids(t, n);
		for (int i = 0; i < n; i += GBT_LEAF_MAX_ENTRIES)
		{
			int			m = Min(n - i, GBT_LEAF_MAX_ENTRIES);

			for (int j = 0; j < m; j++)
				ItemPointerSet(&tids[j], (BlockNumber) (t[i + j] >> 16),
							   (OffsetNumber) (t[i + j] & 0xFFFF));
			tbm_add_tuples(tbm, tids, m, false);
		}
		pfree(t);
		return n;
	}
	if (so->gpu_items)
	{
		/* gbt_scan_start() returned the first entry already */
		for (int64 i = 0; i < so->gpu_n; i += GBT_LEAF_MAX_ENTRIES)
		{
			int			n = (int) Min(so->gpu_n - i, GBT_LEAF_MAX_ENTRIES);

			for (int j = 0; j < n; j++)
				gbt_tid_to_itemptr(so->gpu_items[i + j].tid, &tids[j]);
			tbm_add_tuples(tbm, tids, n, false);
		}
		ntids = so->gpu_n;
		gbt_scan_gpu_release(scan);
		return ntids;
	}
	for (;;)
	{
		int			n = 0;

		for (int i = pos->itemIndex; i < pos->nitems; i++)
			gbt_tid_to_itemptr(pos->items[i].tid, &tids[n++]);
		if (n > 0)
			tbm_add_tuples(tbm, tids, n, false);
		ntids += n;
		pos->itemIndex = pos->nitems;
		if (!gbt_scan_next_leaf(scan, ForwardScanDirection))
			break;
	}
	gbt_scan_drop_pin(so);
	return ntids;
}

/*
 * gbt_scan_tids: every TID the scan matches, for callers that need no
 * order and no index tuples (GbtreeCount, count.c).  The TIDs reach sink
 * in chunks of at most max, in no particular order, packed as
 * block << 16 | offset (gbt_sort_tids() sorts them); all_read tells the
 * sink that the scan has read every TID it will pass from the index (a
 * GPU batch), so that what the sink learns from the heap after the first
 * chunk holds for the later ones.
 *
 * Like an index-only scan, the caller checks the TIDs' visibility against
 * the visibility map after the index gave them, so VACUUM must not remove
 * entries (and free their heap slots for reuse) until it has: the scan
 * holds GBT_GPU_SCAN_LOCK, which VACUUM's deletion pass takes exclusively,
 * until the last chunk is done.  If VACUUM holds it now, the scan goes
 * leaf by leaf instead and passes each leaf's TIDs while its pin is held,
 * as an index-only scan does.  Returns the number of TIDs.
 *
 * gbt_scan_entries is the same with whole entries (the key as stored in
 * the index, the TID packed with its flags), for GbtreeJoin (join.c).
 */
typedef struct GbtMatchSink
{
	GbtTidSink	tids;
	GbtEntrySink entries;
	void	   *arg;
	uint64	   *t;				/* buffer of tids */
	GbtEntry   *e;				/* or of entries */
} GbtMatchSink;

static inline void
match_put(GbtMatchSink *ms, int n, const GbtEntry *item)
{
	if (ms->e)
		ms->e[n] = *item;
	else
		ms->t[n] = item->tid >> 16;	/* no flags */
}

static inline void
match_pass(GbtMatchSink *ms, int n, bool all_read)
{
	if (ms->e)
		ms->entries(ms->arg, ms->e, n, all_read);
	else
		ms->tids(ms->arg, ms->t, n, all_read);
}

/*
 * A TID scan's buffer of *cap elements of width bytes, doubled (up to
 * max) while it cannot hold need: a scan of a few rows should not
 * allocate max's megabytes, which malloc maps and unmaps again in a new
 * backend.  Returns the buffer, moved or not.
 */
void *
gbt_scan_buf_grow(void *buf, Size width, int *cap, int need, int max)
{
	if (need > *cap && *cap < max)
	{
		*cap = Min(max, Max(2 * *cap, need));
		buf = repalloc_huge(buf, width * *cap);
	}
	return buf;
}

static int64
scan_matches(IndexScanDesc scan, GbtMatchSink *ms, int max)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	Relation	index = scan->indexRelation;
	bool		locked;
	Size		width = ms->entries ? sizeof(GbtEntry) : sizeof(uint64);
	void	   *buf;
	int			cap;
	int			n = 0;
	int64		total = 0;
	bool		timed = message_level_is_interesting(DEBUG1);
	instr_time	t0;

	Assert(scan->parallel_scan == NULL);
	max = Max(max, GBT_LEAF_MAX_ENTRIES);
	scan->xs_want_itup = true;	/* needs_leaf_pin(): leaf pins are held */
	locked = ConditionalLockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
	if (!gbt_scan_start(scan, ForwardScanDirection))
	{
		gbt_scan_drop_pin(so);
		if (so->gpu_items)
			gbt_scan_gpu_release(scan);
		if (locked)
			UnlockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
		return 0;
	}
	if (timed)
		INSTR_TIME_SET_CURRENT(t0);
	/* a CPU scan's buffer starts small (gbt_scan_buf_grow) */
	cap = so->gpu_items ? (int) Min(so->gpu_n, (uint64) max) : Min(max, GBT_SCAN_FIRST_CHUNK);
	buf = palloc_extended(width * Max(cap, 1), MCXT_ALLOC_HUGE);
	ms->t = ms->entries ? NULL : (uint64 *) buf;
	ms->e = ms->entries ? (GbtEntry *) buf : NULL;
	if (so->gpu_items)
	{
		/* the batch's entries stay covered by gbt_scan_gpu_fetch()'s lock */
		for (uint64 i = 0; i < so->gpu_n; i += n)
		{
			n = (int) Min(so->gpu_n - i, (uint64) max);
			for (int j = 0; j < n; j++)
				match_put(ms, j, &so->gpu_items[i + j]);
			match_pass(ms, n, true);
			CHECK_FOR_INTERRUPTS();
		}
		total = so->gpu_n;
		gbt_scan_gpu_release(scan);
	}
	else
	{
		for (;;)
		{
			int			m = pos->nitems - Max(pos->itemIndex, 0);

			buf = gbt_scan_buf_grow(buf, width, &cap, n + m, max);
			ms->t = ms->entries ? NULL : (uint64 *) buf;
			ms->e = ms->entries ? (GbtEntry *) buf : NULL;
			if (n + m > cap)
			{
				match_pass(ms, n, false);
				total += n;
				n = 0;
			}
			for (int i = Max(pos->itemIndex, 0); i < pos->nitems; i++)
				match_put(ms, n++, &pos->items[i]);
			pos->itemIndex = pos->nitems;
			if (!locked && n > 0)
			{
				/* this leaf is still pinned */
				match_pass(ms, n, false);
				total += n;
				n = 0;
			}
			if (!gbt_scan_next_leaf(scan, ForwardScanDirection))
				break;
		}
		if (n > 0)
		{
			match_pass(ms, n, false);
			total += n;
		}
		gbt_scan_drop_pin(so);
	}
	pfree(buf);
	if (timed)
		elog(DEBUG1, "gbtree TID scan of \"%s\": " INT64_FORMAT " TIDs%s, passed on in %.3f ms",
			 RelationGetRelationName(index), total, locked ? "" : " leaf by leaf",
			 gbt_ms_since(t0));
	if (locked)
		UnlockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
	return total;
}

int64
gbt_scan_tids(IndexScanDesc scan, GbtTidSink sink, void *arg, int max)
{
	GbtMatchSink ms = {.tids = sink,.arg = arg};

	if (gbt_scan_is_wide(scan))
		return gbt_wide_scan_tids(scan, sink, arg, max);
	return scan_matches(scan, &ms, max);
}

int64
gbt_scan_entries(IndexScanDesc scan, GbtEntrySink sink, void *arg, int max)
{
	GbtMatchSink ms = {.entries = sink,.arg = arg};

	Assert(!gbt_scan_is_wide(scan));

	return scan_matches(scan, &ms, max);
}
