/*-------------------------------------------------------------------------
 *
 * scan_parallel.c
 *	  Parallel gbtree scans: the shared state, and how participants split
 *	  the scan between them.
 *
 * Parallel scans (forward) split the key space into chunks instead of
 * passing one position from leaf to leaf: the first participant reads the
 * separators of the highest inner level that has enough of them inside
 * the scan's key range (a few pages), and every participant then claims
 * chunks in order from a shared counter and scans each one serially,
 * clipped to [its bound, the next bound).  Participants meet once per
 * chunk rather than once per leaf, which matters most where workers share
 * few cores.  The separators are only hints: whatever splits happen
 * meanwhile, each chunk is an ordinary Lehman and Yao range scan, and the
 * chunks partition the (key, TID) order exactly.  Each participant claims
 * chunks in increasing order, so its own output stays in index order.
 * A forward scan of one segment large enough for the GPU goes in slices
 * of its ranges instead, one GPU batch each.  A backward parallel scan,
 * and any other GPU one, is run whole by the first participant.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_scan.h"

/* Shared state of a parallel scan */
typedef enum GbtParState
{
	GBT_PAR_NOT_STARTED,
	GBT_PAR_SERIAL,				/* one participant runs the whole scan */
	GBT_PAR_PLANNING,			/* a participant is collecting the bounds */
	GBT_PAR_CHUNKS,				/* chunks are there to claim */
	GBT_PAR_SLICES				/* GPU batches: slices of the ranges to claim */
} GbtParState;

/*
 * Chunk i starts at bounds[i] and ends before bounds[i + 1], or at the end
 * of its segment when there is no next bound in that segment.
 */
typedef struct GbtParBound
{
	int32		seg;
	bool		segstart;		/* the start of segment seg (key, tid unused) */
	uint64		key;
	uint64		tid;
} GbtParBound;

#define GBT_PAR_MAX_BOUNDS	1024
/* enough chunks that participants finish close together */
#define GBT_PAR_WANT_CHUNKS 64
/* GPU slices: enough ranges each that a batch's fixed cost stays small */
#define GBT_PAR_SLICE_RANGES 8192
#define GBT_PAR_MAX_SLICES	16

typedef struct GbtParallelScanData
{
	slock_t		mutex;
	ConditionVariable cv;
	GbtParState state;
	int			nbounds;		/* valid in GBT_PAR_CHUNKS; slices in
								 * GBT_PAR_SLICES */
	int			nextchunk;
	GbtParBound bounds[GBT_PAR_MAX_BOUNDS];
} GbtParallelScanData;

typedef GbtParallelScanData *GbtParallelScan;

static inline GbtParallelScan
par_shared(IndexScanDesc scan)
{
	return (GbtParallelScan) gbt_parallel_scan_am_area(scan->parallel_scan);
}

Size
gbtestimateparallelscan(GBT_ESTIMATEPARALLELSCAN_PARAMS)
{
	return sizeof(GbtParallelScanData);
}

void
gbtinitparallelscan(void *target)
{
	GbtParallelScan ps = (GbtParallelScan) target;

	SpinLockInit(&ps->mutex);
	ConditionVariableInit(&ps->cv);
	ps->state = GBT_PAR_NOT_STARTED;
}

void
gbtparallelrescan(IndexScanDesc scan)
{
	GbtParallelScan ps = par_shared(scan);

	SpinLockAcquire(&ps->mutex);
	ps->state = GBT_PAR_NOT_STARTED;
	SpinLockRelease(&ps->mutex);
}

/*
 * A parallel scan run whole by one participant (backward, or one GPU
 * batch): true for the participant that runs it.
 */
bool
gbt_par_claim_serial(IndexScanDesc scan)
{
	GbtParallelScan ps = par_shared(scan);
	bool		mine = false;

	SpinLockAcquire(&ps->mutex);
	if (ps->state == GBT_PAR_NOT_STARTED)
	{
		ps->state = GBT_PAR_SERIAL;
		mine = true;
	}
	SpinLockRelease(&ps->mutex);
	return mine;
}

/*
 * Append to out[] (at most max) the bounds that split segment segno's key
 * range into chunks: the separators (downlink low keys) strictly inside
 * the range, from the highest inner level that has GBT_PAR_WANT_CHUNKS of
 * them there, evenly thinned to max.  Reads one page per level on the way
 * down plus that level's pages across the range.  Returns the count; 0
 * when the segment's tree is a single leaf.
 */
static int
collect_bounds(IndexScanDesc scan, int segno, GbtParBound *out, int max)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	GbtSegment *seg = &so->segs[segno];
	uint64		lo = seg->ranges[0].lo;
	uint64		hi = seg->ranges[seg->nranges - 1].hi;
	BlockNumber blk = seg->root;
	int			cap = 1024;
	uint64	   *keys = palloc(cap * sizeof(uint64));
	uint64	   *tids = palloc(cap * sizeof(uint64));
	int			n = 0;
	int			result = 0;

	for (;;)
	{
		BlockNumber down = GBT_NO_BLOCK;
		BlockNumber b = blk;
		int			level = -1;
		int			hops = 0;

		n = 0;
		while (b != GBT_NO_BLOCK)
		{
			Buffer		buf = gbt_read_shared(index, b);
			Page		page = BufferGetPage(buf);
			GbtPageOpaque op = gbt_page_opaque((char *) page);
			GbtNode		node;
			bool		last;

			if ((op->flags & (GBT_F_LEAF | GBT_F_DELETED | GBT_F_META)) ||
				(level >= 0 && op->level != level) || ++hops > 100000)
			{
				/* a leaf root, or something odd: chunk by what we have */
				UnlockReleaseBuffer(buf);
				break;
			}
			level = op->level;
			/* moved right by a split: not yet at the range's start */
			if (down == GBT_NO_BLOCK && !(op->flags & GBT_F_RIGHTMOST) &&
				gbt_hikey_le(op, lo, 0))
			{
				b = op->rightlink;
				UnlockReleaseBuffer(buf);
				continue;
			}
			gbt_page_view(page, &node);
			if (down == GBT_NO_BLOCK)
			{
				int			s = gbt_node_prev_used(&node, gbt_node_lower_bound_entry(&node, lo, 0));

				if (s < 0)
					s = gbt_node_first_used(&node);
				down = s < node.nslots ? node.child[s] : GBT_NO_BLOCK;
			}
			for (int s = gbt_node_first_used(&node); s < node.nslots;
				 s = gbt_node_next_used(&node, s + 1))
			{
				uint64		k = node.keys[s],
							t = node.tids[s];

				if (k > hi)
					break;
				if (!gbt_entry_lt(lo, 0, k, t) ||
					(n > 0 && !gbt_entry_lt(keys[n - 1], tids[n - 1], k, t)))
					continue;
				if (n == cap)
				{
					cap *= 2;
					keys = repalloc(keys, cap * sizeof(uint64));
					tids = repalloc(tids, cap * sizeof(uint64));
				}
				keys[n] = k;
				tids[n] = t;
				n++;
			}
			last = (op->flags & GBT_F_RIGHTMOST) || op->hikey > hi;
			b = last ? GBT_NO_BLOCK : op->rightlink;
			UnlockReleaseBuffer(buf);
		}
		if (level < 0)
			break;
		if (n >= GBT_PAR_WANT_CHUNKS || level <= 1 || down == GBT_NO_BLOCK)
		{
			/* keep max of them, evenly spaced */
			result = Min(n, max);
			for (int i = 0; i < result; i++)
			{
				int			src = (n <= max) ? i : (int) (((int64) (i + 1) * n) / (max + 1));

				out[i].seg = segno;
				out[i].segstart = false;
				out[i].key = keys[src];
				out[i].tid = tids[src];
			}
			break;
		}
		blk = down;
	}
	pfree(keys);
	pfree(tids);
	return result;
}

/* Fill the shared bounds: each segment's start, then its separators. */
static int
plan_chunks(IndexScanDesc scan, GbtParBound *bounds)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	int			per_seg = GBT_PAR_MAX_BOUNDS / so->nsegs - 1;
	int			n = 0;

	for (int s = 0; s < so->nsegs; s++)
	{
		bounds[n].seg = s;
		bounds[n].segstart = true;
		bounds[n].key = bounds[n].tid = 0;
		n++;
		n += collect_bounds(scan, s, bounds + n, per_seg);
	}
	return n;
}

/*
 * Claim the next chunk: its number, or -1 when none is left.  The first
 * participant to come decides how the scan is split: in want_slices
 * slices of the ranges, run as GPU batches, when it asks for them (*slices
 * says which way it went), else in chunks of the key space that it plans
 * while the others wait.  Every participant follows that decision, whatever
 * it would have chosen.  On error the query fails as a whole, so a scan
 * left PLANNING is never waited on.
 */
static int
par_claim_chunk(IndexScanDesc scan, int want_slices, bool *slices)
{
	GbtParallelScan ps = par_shared(scan);

	for (;;)
	{
		GbtParState st;
		int			chunk = -1;

		SpinLockAcquire(&ps->mutex);
		st = ps->state;
		if (st == GBT_PAR_NOT_STARTED && want_slices > 0)
		{
			ps->state = st = GBT_PAR_SLICES;
			ps->nbounds = want_slices;
			ps->nextchunk = 0;
		}
		else if (st == GBT_PAR_NOT_STARTED)
			ps->state = GBT_PAR_PLANNING;
		if ((st == GBT_PAR_CHUNKS || st == GBT_PAR_SLICES) && ps->nextchunk < ps->nbounds)
			chunk = ps->nextchunk++;
		*slices = (st == GBT_PAR_SLICES);
		SpinLockRelease(&ps->mutex);

		if (st == GBT_PAR_NOT_STARTED)
		{
			int			n = plan_chunks(scan, ps->bounds);

			SpinLockAcquire(&ps->mutex);
			ps->nbounds = n;
			ps->nextchunk = 0;
			ps->state = GBT_PAR_CHUNKS;
			SpinLockRelease(&ps->mutex);
			ConditionVariableBroadcast(&ps->cv);
			continue;
		}
		if (st == GBT_PAR_PLANNING)
		{
			ConditionVariableSleep(&ps->cv, PG_WAIT_EXTENSION);
			continue;
		}
		ConditionVariableCancelSleep();
		return chunk;
	}
}

/*
 * The number of GPU slices to split a forward scan of nranges ranges into
 * (the want_slices of gbt_par_next()).
 */
int
gbt_par_slice_count(int nranges)
{
	return Max(1, Min(GBT_PAR_MAX_SLICES, nranges / GBT_PAR_SLICE_RANGES));
}

/*
 * Start slice number slice of a parallel scan split into slices: segment
 * 0 narrowed to that slice's ranges, looked up as one GPU batch, or on the
 * CPU if the GPU cannot serve it.  True when it yields an entry (a GPU
 * batch's first entry is already returned, as gbt_scan_gpu_next() does).
 */
static bool
par_start_slice(IndexScanDesc scan, int slice, int nslices)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtSegment *seg = &so->segs[0];
	int			from = (int) ((int64) so->slice_nbase * slice / nslices);
	int			to = (int) ((int64) so->slice_nbase * (slice + 1) / nslices);

	if (so->nsegs != 1)
		elog(ERROR, "gbtree: the participants of a parallel scan disagree on its keys");
	if (to <= from)
		return false;
	seg->ranges = so->slice_base + from;
	seg->nranges = to - from;
	if (gbt_device_mode != GBT_DEVICE_CPU && gbt_scan_gpu_fetch(scan))
	{
		so->gpu_i = -1;
		if (gbt_scan_gpu_next(scan, ForwardScanDirection))
			return true;
		gbt_scan_gpu_release(scan);
		return false;
	}
	so->par_chunk = true;
	so->clip = false;
	if (gbt_seek_segment_start(scan, 0, false))
		return true;
	so->par_chunk = false;
	return false;
}

/*
 * Forward parallel scan: go on in the current chunk, and claim the next
 * one when it is used up, until one yields an entry.  want_slices: the
 * number of GPU slices this participant would split the scan into (0 for
 * chunks of the key space), if it is the first to claim.  A GPU slice's
 * entry comes back already returned (so->gpu_items is set), a CPU one
 * positioned for return_current_item().
 */
bool
gbt_par_next(IndexScanDesc scan, int want_slices)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	GbtParallelScan ps = par_shared(scan);

	for (;;)
	{
		int			chunk;
		GbtParBound *b;
		bool		found;
		bool		slices;

		CHECK_FOR_INTERRUPTS();
		if (so->par_chunk)
		{
			if (gbt_next_leaf_serial(scan, ForwardScanDirection))
				return true;
			so->par_chunk = false;
			so->clip = false;
		}
		chunk = par_claim_chunk(scan, want_slices, &slices);
		if (chunk < 0)
		{
			gbt_scan_drop_pin(so);
			pos->seg = -1;
			return false;
		}
		if (slices)
		{
			if (!so->par_slices)
			{
				/* the whole set, before a slice narrows segment 0 */
				so->par_slices = true;
				so->slice_base = so->segs[0].ranges;
				so->slice_nbase = so->segs[0].nranges;
			}
			if (par_start_slice(scan, chunk, ps->nbounds))
				return true;
			continue;
		}
		/* the bounds do not change once claiming has begun */
		b = &ps->bounds[chunk];
		so->clip = chunk + 1 < ps->nbounds && !ps->bounds[chunk + 1].segstart;
		if (so->clip)
		{
			so->clip_key = ps->bounds[chunk + 1].key;
			so->clip_tid = ps->bounds[chunk + 1].tid;
		}
		so->par_chunk = true;
		if (b->segstart)
			found = gbt_seek_segment_start(scan, b->seg, false);
		else
			found = gbt_seek_entry(scan, b->seg, b->key, b->tid, false);
		if (found)
			return true;
	}
}
