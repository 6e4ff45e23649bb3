/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Index scans for gbtree: amgettuple (both directions, mark/restore),
 *	  amgetbitmap, array keys, IS [NOT] NULL, index-only scans.
 *
 * Scan keys are reduced to a list of "segments" in index order: the tree
 * of values with a sorted list of disjoint key ranges (one range for plain
 * quals, one point range per distinct array element), and the tree of
 * NULLs.  A scan reads one leaf at a time under a share lock, copies every
 * entry of that leaf that falls in any range (all array keys that land on
 * the leaf are served from that one visit), then drops the lock and keeps
 * the pin while it returns them.  The right-link and left-link saved with
 * the copy lead to the neighbour pages (Lehman and Yao); a next range that
 * starts beyond the leaf's high key is found by a fresh descent.
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
 * A backward parallel scan is run whole by the first participant.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"

#include "access/relscan.h"
#include "storage/condition_variable.h"
#include "storage/lmgr.h"
#include "storage/spin.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "access/tupmacs.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_keys.h"

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
	uint64		lowkey;			/* its first entry's key, if so */
	int			nitems;
	int			itemIndex;
	GbtEntry	items[GBT_MAX_SLOTS];
} GbtScanPos;

typedef struct GbtScanOpaqueData
{
	GbtIndexInfo *info;
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
	 * and NULL ranges until a CPU path needs them (points_to_ranges).
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
	IndexTuple	itup;			/* index-only result for non-null keys */
	int16		attlen;
	bool		int64_keys;		/* ascending int8-like keys: a datum is key ^ sign */
} GbtScanOpaqueData;

typedef GbtScanOpaqueData *GbtScanOpaque;

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


IndexScanDesc
gbtbeginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan;
	GbtScanOpaque so;

	/* this backend's own pending entries first (batch.c) */
	gbt_batch_flush_index(RelationGetRelid(index));
	scan = RelationGetIndexScan(index, nkeys, norderbys);

	/*
	 * Not palloc0: the position holds a leaf's worth of items (8 KB) that
	 * are written before they are read, and zeroing them is a measurable
	 * part of a point lookup.
	 */
	so = palloc(sizeof(GbtScanOpaqueData));
	memset(so, 0, offsetof(GbtScanOpaqueData, pos));
	memset(&so->pos, 0, offsetof(GbtScanPos, items));
	so->mark = NULL;
	so->markValid = false;
	so->par_serial = false;
	so->par_chunk = false;
	so->clip = false;
	so->gpu_items = NULL;
	so->gpu_locked = false;
	so->info = gbt_index_info(index);
	so->keycxt = NULL;
	so->tupcxt = NULL;			/* made on first use (index-only NULLs) */
	so->buf = InvalidBuffer;
	so->pos.seg = -1;

	/*
	 * All supported types are fixed-width and passed by value: the index
	 * tuple for a non-null key is built in place, no per-row allocation.
	 */
	so->attlen = TupleDescAttr(RelationGetDescr(index), 0)->attlen;
	so->itup = palloc0(MAXALIGN(sizeof(IndexTupleData)) + sizeof(Datum));
	so->itup->t_info = MAXALIGN(MAXALIGN(sizeof(IndexTupleData)) + so->attlen);
	so->int64_keys = !so->info->desc &&
		(so->info->keytype == INT8OID || so->info->keytype == TIMESTAMPOID ||
		 so->info->keytype == TIMESTAMPTZOID);
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(index);
	return scan;
}

static void
drop_pin(GbtScanOpaque so)
{
	if (BufferIsValid(so->buf))
	{
		ReleaseBuffer(so->buf);
		so->buf = InvalidBuffer;
	}
}

/* ------------------------------------------------------------------------
 * Scan key preprocessing
 * ------------------------------------------------------------------------
 */

/* Apply "key <strategy> x" (index key space) to [lo, hi]. */
static void
apply_bound(int strategy, uint64 x, uint64 *lo, uint64 *hi, bool *impossible)
{
	switch (strategy)
	{
		case BTLessStrategyNumber:
			if (x == 0)
				*impossible = true;
			else
				*hi = Min(*hi, x - 1);
			break;
		case BTLessEqualStrategyNumber:
			*hi = Min(*hi, x);
			break;
		case BTEqualStrategyNumber:
			*lo = Max(*lo, x);
			*hi = Min(*hi, x);
			break;
		case BTGreaterEqualStrategyNumber:
			*lo = Max(*lo, x);
			break;
		case BTGreaterStrategyNumber:
			if (x == UINT64_MAX)
				*impossible = true;
			else
				*lo = Max(*lo, x + 1);
			break;
		default:
			elog(ERROR, "gbtree: unexpected strategy number %d", strategy);
	}
}

/* A DESC column stores complemented keys: mirror the comparison. */
static int
mirror_strategy(int strategy)
{
	switch (strategy)
	{
		case BTLessStrategyNumber:
			return BTGreaterStrategyNumber;
		case BTLessEqualStrategyNumber:
			return BTGreaterEqualStrategyNumber;
		case BTGreaterEqualStrategyNumber:
			return BTLessEqualStrategyNumber;
		case BTGreaterStrategyNumber:
			return BTLessStrategyNumber;
		default:
			return strategy;
	}
}

/* Intersection of two sorted unique arrays, into a; returns length. */
static int
intersect_sorted(uint64 *a, int na, const uint64 *b, int nb)
{
	int			i = 0,
				j = 0,
				m = 0;

	while (i < na && j < nb)
	{
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
		{
			a[m++] = a[i];
			i++;
			j++;
		}
	}
	return m;
}

/* DEBUG1 breakdown of preprocess_keys(): sorting arrays, building ranges */
static double prep_sort_ms,
			prep_ranges_ms;

static double
ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

static void
preprocess_keys(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtIndexInfo *info = so->info;
	uint64		lo = 0,
				hi = UINT64_MAX;
	bool		impossible = false;
	bool		isnull_qual = false;
	bool		notnull_qual = false;
	bool		value_qual = false;
	uint64	   *arr = NULL;
	int			narr = -1;		/* -1: no array key */
	bool		has_array = false;
	MemoryContext old;
	bool		timed = message_level_is_interesting(DEBUG1);
	instr_time	t0;
	/* one equality array, serial scan, GPU in sight: leave it unsorted */
	bool		defer_ok = scan->parallel_scan == NULL && gbt_device_mode != GBT_DEVICE_CPU;
	bool		deferred = false;

	/*
	 * Array keys need memory that lives until the next rescan; plain quals
	 * fit in fixed_ranges, which keeps a point lookup free of context setup.
	 */
	for (int i = 0; i < scan->numberOfKeys; i++)
		if (scan->keyData[i].sk_flags & SK_SEARCHARRAY)
			has_array = true;
	if (has_array)
	{
		if (so->keycxt == NULL)
			so->keycxt = AllocSetContextCreate(CurrentMemoryContext, "gbtree scan keys",
											   ALLOCSET_DEFAULT_SIZES);
		MemoryContextReset(so->keycxt);
		old = MemoryContextSwitchTo(so->keycxt);
	}
	else
		old = CurrentMemoryContext;

	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		Oid			argtype = OidIsValid(sk->sk_subtype) ? sk->sk_subtype : info->keytype;
		int			strategy = sk->sk_strategy;

		if (sk->sk_flags & SK_ISNULL)
		{
			if (sk->sk_flags & SK_SEARCHNULL)
				isnull_qual = true;
			else if (sk->sk_flags & SK_SEARCHNOTNULL)
				notnull_qual = true;
			else
				impossible = true;	/* comparison with NULL */
			continue;
		}
		if (sk->sk_attno != 1)
			elog(ERROR, "gbtree: unexpected scan key attribute %d", sk->sk_attno);
		if (strategy < 1 || strategy > GBT_NSTRATEGIES)
			elog(ERROR, "gbtree: unexpected strategy number %d", strategy);
		value_qual = true;
		if (info->desc)
			strategy = mirror_strategy(strategy);

		if (sk->sk_flags & SK_SEARCHARRAY)
		{
			ArrayType  *a = DatumGetArrayTypeP(sk->sk_argument);
			int16		elmlen;
			bool		elmbyval;
			char		elmalign;
			int			nelems = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
			uint64	   *vals;
			int			nv = 0;

			get_typlenbyvalalign(ARR_ELEMTYPE(a), &elmlen, &elmbyval, &elmalign);
			vals = palloc(sizeof(uint64) * Max(nelems, 1));
			gbt_advise_huge(vals, sizeof(uint64) * Max(nelems, 1));
			if (!ARR_HASNULL(a) && elmbyval && elmlen > 0)
			{
				/*
				 * The common case, read in place: deconstructing a large
				 * array would allocate and fill two more arrays of its size.
				 */
				const char *p = ARR_DATA_PTR(a);
				uint64		flip = info->desc ? UINT64_MAX : 0;

				if (argtype == INT8OID && elmlen == sizeof(int64))
				{
					for (int j = 0; j < nelems; j++)
						vals[j] = gbt_key_from_int64(((const int64 *) p)[j]) ^ flip;
				}
				else
				{
					for (int j = 0; j < nelems; j++)
					{
						vals[j] = gbt_datum_to_key(fetch_att(p, true, elmlen), argtype, NULL) ^ flip;
						p = att_addlength_pointer(p, elmlen, p);
						p = (const char *) att_align_nominal(p, elmalign);
					}
				}
				nv = nelems;
			}
			else
			{
				Datum	   *elems;
				bool	   *nulls;

				deconstruct_array(a, ARR_ELEMTYPE(a), elmlen, elmbyval, elmalign,
								  &elems, &nulls, &nelems);
				for (int j = 0; j < nelems; j++)
				{
					uint64		k;

					if (nulls[j])
						continue;
					k = gbt_datum_to_key(elems[j], argtype, NULL);
					vals[nv++] = info->desc ? ~k : k;
				}
				pfree(elems);
				pfree(nulls);
			}
			if (nv == 0)
			{
				impossible = true;
				continue;
			}
			if (timed)
				INSTR_TIME_SET_CURRENT(t0);
			if (defer_ok && strategy == BTEqualStrategyNumber && narr < 0 &&
				gbt_gpu_wanted(nv))
				deferred = true;	/* the device sorts them */
			else
			{
				nv = gbt_sort_unique_u64(vals, nv);
				if (deferred && strategy == BTEqualStrategyNumber)
				{
					/* intersecting with a second array needs both sorted */
					narr = gbt_sort_unique_u64(arr, narr);
					deferred = false;
				}
			}
			if (timed)
				prep_sort_ms += ms_since(t0);
			if (strategy == BTEqualStrategyNumber)
			{
				if (narr < 0)
				{
					arr = vals;
					narr = nv;
				}
				else
					narr = intersect_sorted(arr, narr, vals, nv);
			}
			else if (strategy == BTLessStrategyNumber ||
					 strategy == BTLessEqualStrategyNumber)
				apply_bound(strategy, vals[nv - 1], &lo, &hi, &impossible);
			else
				apply_bound(strategy, vals[0], &lo, &hi, &impossible);
		}
		else
		{
			uint64		k = gbt_datum_to_key(sk->sk_argument, argtype, NULL);

			apply_bound(strategy, info->desc ? ~k : k, &lo, &hi, &impossible);
		}
	}

	so->nsegs = 0;
	so->points = NULL;
	if (isnull_qual && (value_qual || notnull_qual))
		impossible = true;
	if (lo > hi)
		impossible = true;
	if (!impossible && narr >= 0)
	{
		int			m = 0;

		for (int j = 0; j < narr; j++)
			if (arr[j] >= lo && arr[j] <= hi)
				arr[m++] = arr[j];
		narr = m;
		if (narr == 0)
			impossible = true;
	}
	so->impossible = impossible;

	if (!impossible)
	{
		GbtSegment	valseg,
					nullseg;

		valseg.root = GBT_ROOT_BLKNO;
		if (timed)
			INSTR_TIME_SET_CURRENT(t0);
		if (deferred)
		{
			valseg.nranges = narr;
			valseg.ranges = NULL;
			so->points = arr;
		}
		else if (narr >= 0)
		{
			valseg.nranges = narr;
			valseg.ranges = palloc(sizeof(GbtRange) * narr);
			gbt_advise_huge(valseg.ranges, sizeof(GbtRange) * narr);
			for (int j = 0; j < narr; j++)
				valseg.ranges[j].lo = valseg.ranges[j].hi = arr[j];
		}
		else
		{
			valseg.nranges = 1;
			valseg.ranges = &so->fixed_ranges[0];
			valseg.ranges[0].lo = lo;
			valseg.ranges[0].hi = hi;
		}
		if (timed)
			prep_ranges_ms += ms_since(t0);
		nullseg.root = GBT_NULLROOT_BLKNO;
		nullseg.nranges = 1;
		nullseg.ranges = &so->fixed_ranges[1];
		nullseg.ranges[0].lo = 0;
		nullseg.ranges[0].hi = UINT64_MAX;

		if (isnull_qual)
			so->segs[so->nsegs++] = nullseg;
		else if (value_qual || notnull_qual)
			so->segs[so->nsegs++] = valseg;
		else if (info->nulls_first)
		{
			so->segs[so->nsegs++] = nullseg;
			so->segs[so->nsegs++] = valseg;
		}
		else
		{
			so->segs[so->nsegs++] = valseg;
			so->segs[so->nsegs++] = nullseg;
		}
	}
	MemoryContextSwitchTo(old);
}

/* ------------------------------------------------------------------------
 * Reading leaves
 * ------------------------------------------------------------------------
 */

/* first range whose hi >= key, or nranges */
static int
first_range_hi_ge(GbtSegment *seg, uint64 key)
{
	int			lo = 0,
				hi = seg->nranges;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (seg->ranges[mid].hi < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* last range whose lo <= key, or -1 */
static int
last_range_lo_le(GbtSegment *seg, uint64 key)
{
	int			lo = 0,
				hi = seg->nranges;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (seg->ranges[mid].lo <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/*
 * Whether to keep the pin on a leaf while returning its TIDs.  The pin is
 * what makes VACUUM's cleanup lock wait, so that a TID is not recycled
 * under a scan about to visit it.  As nbtree does, an MVCC scan of a
 * WAL-logged index that visits the heap needs no such interlock (a
 * recycled TID's new tuple is invisible to its snapshot), so it drops the
 * pin and never holds up VACUUM; index-only scans keep it.
 */
static bool
keep_pin(IndexScanDesc scan)
{
	return !(IsMVCCSnapshot(scan->xs_snapshot) &&
			 RelationNeedsWAL(scan->indexRelation) &&
			 !scan->xs_want_itup);
}

/*
 * buf was just read (and pinned) as the scan's current leaf: keep exactly
 * one pin on it if keep, none otherwise, and none on the previous leaf.
 * Re-reading the leaf already pinned takes a second pin, dropped here.
 */
static void
hold_pin(IndexScanDesc scan, Buffer buf, bool keep)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (so->buf == buf)
		ReleaseBuffer(buf);
	else
	{
		drop_pin(so);
		so->buf = buf;
	}
	if (!keep)
		drop_pin(so);
}

/*
 * Copy the entries of the locked leaf in buf that fall in segment seg's
 * ranges into so->pos; then unlock, keeping the pin as so->buf.
 */
static void
read_leaf(IndexScanDesc scan, Buffer buf, int segno)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtSegment *seg = &so->segs[segno];
	GbtScanPos *pos = &so->pos;
	Page		page = BufferGetPage(buf);
	GbtNode		node;
	GbtPageOpaque op;
	int			first,
				last,
				n = 0;

	gbt_page_view(page, &node);
	op = node.opaque;
	if (!(op->flags & GBT_F_LEAF))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a non-leaf page where a leaf was expected at block %u",
						RelationGetRelationName(scan->indexRelation),
						BufferGetBlockNumber(buf))));

	pos->seg = segno;
	pos->blk = BufferGetBlockNumber(buf);
	pos->next = op->rightlink;
	pos->prev = op->leftlink;
	pos->rightmost = (op->flags & GBT_F_RIGHTMOST) != 0;
	pos->deleted = (op->flags & GBT_F_DELETED) != 0;
	pos->pagelowkey = op->lowkey;
	pos->pagelowtid = op->lowtid;
	if (pos->deleted)
	{
		/* its key range went right: the next page starts where it did */
		pos->hikey = op->lowkey;
		pos->hitid = op->lowtid;
		pos->nitems = 0;
		pos->hasentries = false;
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		hold_pin(scan, buf, false);
		return;
	}
	pos->hikey = op->hikey;
	pos->hitid = op->hitid;

	first = gbt_node_first_used(&node);
	last = gbt_node_last_used(&node);
	pos->hasentries = first < node.nslots;
	if (pos->hasentries)
	{
		uint64		fk = node.keys[first];
		uint64		lk = node.keys[last];
		int			r = first_range_hi_ge(seg, fk);
		int			nwords = (node.nslots + 63) / 64;
		bool		disorder = false;

		pos->lowkey = fk;

		for (; r < seg->nranges && seg->ranges[r].lo <= lk; r++)
		{
			uint64		rhi = seg->ranges[r].hi;
			int			s = gbt_node_lower_bound(&node, seg->ranges[r].lo);
			bool		done = false;

			/* walk the used-slot bitmap from s while keys stay <= rhi */
			for (int w = s >> 6; w < nwords && !done; w++)
			{
				uint64		bits = node.used[w];

				if (w == (s >> 6))
					bits &= ~UINT64CONST(0) << (s & 63);
				while (bits)
				{
					int			t = (w << 6) + pg_rightmost_one_pos64(bits);

					bits &= bits - 1;
					if (t >= node.nslots || node.keys[t] > rhi)
					{
						done = true;
						break;
					}
					pos->items[n].key = node.keys[t];
					pos->items[n].tid = node.tids[t];
					/* cheap guard: a damaged page must not yield rows silently */
					if (n > 0)
						disorder |= !gbt_entry_lt(pos->items[n - 1].key, pos->items[n - 1].tid,
												  node.keys[t], node.tids[t]);
					n++;
				}
			}
		}
		if (disorder)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" block %u: entries out of order",
							RelationGetRelationName(scan->indexRelation),
							BufferGetBlockNumber(buf)),
					 errhint("Please REINDEX it.")));
	}
	/* a parallel chunk ends where the next one starts */
	if (so->clip)
		while (n > 0 && !gbt_entry_lt(pos->items[n - 1].key, pos->items[n - 1].tid,
									  so->clip_key, so->clip_tid))
			n--;
	pos->nitems = n;

	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	hold_pin(scan, buf, keep_pin(scan));
}

/* Pin and share-lock block blkno of the index, after the basic page check. */
static Buffer
lock_shared(Relation index, BlockNumber blkno)
{
	Buffer		buf = ReadBuffer(index, blkno);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	gbt_check_page(index, buf);
	return buf;
}

static pg_attribute_noreturn() void
left_link_broken(Relation index, BlockNumber blkno)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\": left-link of block %u does not lead back to it",
					RelationGetRelationName(index), blkno),
			 errhint("Please REINDEX it.")));
}

/* Is block blkno now a deleted page?  (No other lock held by caller.) */
static bool
page_is_deleted(IndexScanDesc scan, BlockNumber blkno)
{
	Buffer		buf = lock_shared(scan->indexRelation, blkno);
	bool		deleted;

	deleted = (gbt_page_opaque((char *) BufferGetPage(buf))->flags & GBT_F_DELETED) != 0;
	UnlockReleaseBuffer(buf);
	return deleted;
}

/*
 * Read the right sibling of pos's leaf (share lock).
 *
 * It must start exactly where our leaf ended: its low key is our saved high
 * key, whatever splits happened since.  One thing lowers it legitimately:
 * VACUUM deleted our (by then empty) leaf and handed its low key to this
 * sibling.  A low key above ours means skipped pages, and one below ours
 * with our leaf still in place means a link to the wrong page: both are
 * damage, and following them would lose or repeat entries silently.
 */
static void
read_right(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	Relation	index = scan->indexRelation;
	BlockNumber from = pos->blk;
	BlockNumber next = pos->next;
	Buffer		buf;
	GbtPageOpaque op;

	buf = lock_shared(index, next);
	op = gbt_page_opaque((char *) BufferGetPage(buf));
	if (op->lowkey != pos->hikey || op->lowtid != pos->hitid)
	{
		bool		below = gbt_entry_lt(op->lowkey, op->lowtid, pos->hikey, pos->hitid);

		/* look at our own leaf with no lock held on the sibling */
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (!below || !page_is_deleted(scan, from))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" block %u: low key does not match its left sibling's high key",
							RelationGetRelationName(index), next),
					 errhint("Please REINDEX it.")));
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		gbt_check_page(index, buf);
	}
	read_leaf(scan, buf, pos->seg);
}

/*
 * Position on the first entry >= (key, tid) (forward) or the last entry
 * < (key, tid) (backward) of segment segno.  Returns false if the leaf we
 * land on has no such item; pos then describes that leaf.
 */
static bool
seek(IndexScanDesc scan, int segno, uint64 key, uint64 tid, bool backward)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	Buffer		buf;
	int			lo = 0,
				hi;

	buf = gbt_descend(scan->indexRelation, so->segs[segno].root, key, tid,
					  backward, BUFFER_LOCK_SHARE);
	read_leaf(scan, buf, segno);

	/* first item >= (key, tid) */
	hi = pos->nitems;
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (gbt_entry_lt(pos->items[mid].key, pos->items[mid].tid, key, tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	pos->itemIndex = backward ? lo - 1 : lo;
	return pos->itemIndex >= 0 && pos->itemIndex < pos->nitems;
}

static bool
seek_segment_start(IndexScanDesc scan, int segno, bool backward)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtSegment *seg = &so->segs[segno];

	if (!backward)
		return seek(scan, segno, seg->ranges[0].lo, 0, false);
	else
	{
		uint64		h = seg->ranges[seg->nranges - 1].hi;

		if (h == UINT64_MAX)
			return seek(scan, segno, UINT64_MAX, UINT64_MAX, true);
		return seek(scan, segno, h + 1, 0, true);
	}
}

/*
 * Find the left neighbour of pos's leaf: the page at the saved left-link,
 * or, if that page split since, the page to its right whose right-link is
 * our leaf.  Deleted pages on the way are stepped over to their left.  If
 * our own leaf was deleted, its left neighbour now links to its right
 * sibling, so that is the right-link to look for.  Returns InvalidBuffer
 * if the leaves left of us have all been deleted meanwhile.
 */
static Buffer
walk_left(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	BlockNumber target = so->pos.deleted ? so->pos.next : so->pos.blk;
	BlockNumber blk = so->pos.prev;
	int			hops = 0;

	for (;;)
	{
		Buffer		buf;
		GbtPageOpaque op;

		/*
		 * Reached through the left-link of a deleted page: VACUUM removed
		 * everything left of us (the leftmost leaves), nothing is there.
		 */
		if (blk == GBT_NO_BLOCK)
			return InvalidBuffer;
		if (++hops > 100000)
			left_link_broken(index, so->pos.blk);
		buf = lock_shared(index, blk);
		op = gbt_page_opaque((char *) BufferGetPage(buf));
		if (!(op->flags & GBT_F_LEAF))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\": left-link of block %u leads to a non-leaf page",
							RelationGetRelationName(index), so->pos.blk)));
		if (op->flags & GBT_F_DELETED)
			blk = op->leftlink;
		else if (op->rightlink == target)
		{
			/*
			 * It ends where our leaf starts.  Our leaf's low key can only
			 * have dropped since we read it (it absorbed a deleted left
			 * neighbour), never risen.
			 */
			if (gbt_entry_lt(so->pos.pagelowkey, so->pos.pagelowtid, op->hikey, op->hitid))
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" block %u: high key is above its right sibling's low key",
								RelationGetRelationName(index), blk),
						 errhint("Please REINDEX it.")));
			return buf;
		}
		else if ((op->flags & GBT_F_RIGHTMOST) || op->rightlink == GBT_NO_BLOCK ||
				 gbt_entry_lt(so->pos.pagelowkey, so->pos.pagelowtid, op->lowkey, op->lowtid))
		{
			/*
			 * Walked past where our leaf was.  VACUUM may have deleted it
			 * since we read it (and maybe its right sibling too): then its
			 * left neighbour now links to the first live page to its
			 * right, the right-link to look for, and the walk starts again
			 * from the deleted page's left-link.
			 */
			BlockNumber t = target;
			bool		moved = false;

			UnlockReleaseBuffer(buf);
			for (;;)
			{
				Buffer		tbuf = lock_shared(index, t);
				GbtPageOpaque top = gbt_page_opaque((char *) BufferGetPage(tbuf));
				bool		deleted = (top->flags & GBT_F_DELETED) != 0;

				if (deleted)
				{
					blk = top->leftlink;
					t = top->rightlink;
					moved = true;
				}
				UnlockReleaseBuffer(tbuf);
				if (!deleted)
					break;
				if (++hops > 100000)
					left_link_broken(index, so->pos.blk);
			}
			if (!moved)
				left_link_broken(index, so->pos.blk);
			target = t;
			continue;
		}
		else
			blk = op->rightlink;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The current leaf is used up in direction dir: move to the next leaf
 * (or range, or segment) that has a matching entry.  Returns false at the
 * end, with pos left on the last leaf visited (itemIndex just past it), so
 * that a scroll in the other direction resumes correctly.
 */
static bool par_next(IndexScanDesc scan, int want_slices);
static bool gpu_next(IndexScanDesc scan, ScanDirection dir);
static bool par_claim_serial(IndexScanDesc scan);

/*
 * The serial part of step(); a parallel participant runs it inside the
 * chunk it claimed (so->par_chunk), where the end of the chunk (so->clip)
 * or of its segment ends the walk.
 */
static bool
step_serial(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;

	for (;;)
	{
		GbtSegment *seg = &so->segs[pos->seg];

		CHECK_FOR_INTERRUPTS();
		if (ScanDirectionIsForward(dir))
		{
			int			r;

			/* everything right of this leaf is at or past the clip */
			if (so->clip && !pos->rightmost &&
				!gbt_entry_lt(pos->hikey, pos->hitid, so->clip_key, so->clip_tid))
			{
				pos->itemIndex = pos->nitems;
				return false;
			}
			if (!pos->rightmost)
				r = first_range_hi_ge(seg, pos->hikey);
			if (pos->rightmost || r >= seg->nranges)
			{
				/* this segment is done */
				if (pos->seg + 1 >= so->nsegs || so->par_chunk)
				{
					pos->itemIndex = pos->nitems;
					return false;
				}
				if (seek_segment_start(scan, pos->seg + 1, false))
					return true;
				continue;
			}
			if (so->clip && !gbt_entry_lt(seg->ranges[r].lo, 0, so->clip_key, so->clip_tid))
			{
				pos->itemIndex = pos->nitems;
				return false;
			}
			if (seg->ranges[r].lo <= pos->hikey)
			{
				read_right(scan);
				pos->itemIndex = 0;
				if (pos->nitems > 0)
					return true;
				continue;
			}
			/*
			 * The next range starts beyond this leaf.  Dense sorted keys
			 * usually land on the next leaf: try it before descending
			 * again, unless the key lies further beyond our high key than
			 * this leaf's own key span (sparse keys: descend directly).
			 */
			if (!pos->deleted && pos->hikey >= pos->pagelowkey &&
				seg->ranges[r].lo - pos->hikey > pos->hikey - pos->pagelowkey)
			{
				if (seek(scan, pos->seg, seg->ranges[r].lo, 0, false))
					return true;
				continue;
			}
			read_right(scan);
			pos->itemIndex = 0;
			if (pos->nitems > 0)
				return true;
			if (pos->rightmost || pos->deleted || seg->ranges[r].lo <= pos->hikey)
				continue;
			if (seek(scan, pos->seg, seg->ranges[r].lo, 0, false))
				return true;
		}
		else
		{
			int			r = seg->nranges - 1;
			bool		left = pos->prev != GBT_NO_BLOCK;

			if (left && pos->hasentries)
			{
				r = last_range_lo_le(seg, pos->lowkey);
				if (r < 0)
					left = false;
			}
			if (!left)
			{
				if (pos->seg == 0)
				{
					pos->itemIndex = -1;
					return false;
				}
				if (seek_segment_start(scan, pos->seg - 1, true))
					return true;
				continue;
			}
			if (!pos->hasentries || seg->ranges[r].hi >= pos->lowkey)
			{
				Buffer		buf = walk_left(scan);

				if (!BufferIsValid(buf))
				{
					pos->prev = GBT_NO_BLOCK;
					continue;
				}
				read_leaf(scan, buf, pos->seg);
				pos->itemIndex = pos->nitems - 1;
				if (pos->nitems > 0)
					return true;
				continue;
			}
			if (seek(scan, pos->seg, seg->ranges[r].hi + 1, 0, true))
				return true;

			/*
			 * The leaf the descent chose has nothing below the target
			 * (its lower entries were deleted): the answer is to its left.
			 * Seeking again would find the same leaf.
			 */
			if (pos->prev == GBT_NO_BLOCK)
			{
				if (pos->seg == 0)
				{
					pos->itemIndex = -1;
					return false;
				}
				if (seek_segment_start(scan, pos->seg - 1, true))
					return true;
				continue;
			}
			{
				Buffer		buf = walk_left(scan);

				if (!BufferIsValid(buf))
				{
					pos->prev = GBT_NO_BLOCK;
					continue;
				}
				read_leaf(scan, buf, pos->seg);
				pos->itemIndex = pos->nitems - 1;
				if (pos->nitems > 0)
					return true;
			}
		}
	}
}


static bool
step(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (scan->parallel_scan && !so->par_serial)
	{
		if (!ScanDirectionIsForward(dir))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gbtree parallel scans cannot change direction")));
		return par_next(scan, 0);
	}
	return step_serial(scan, dir);
}


/* ------------------------------------------------------------------------
 * Parallel scans
 * ------------------------------------------------------------------------
 */

static inline GbtParallelScan
par_shared(IndexScanDesc scan)
{
	return (GbtParallelScan) OffsetToPointer(scan->parallel_scan,
											 scan->parallel_scan->ps_offset);
}

Size
gbtestimateparallelscan(void)
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

/* Backward parallel scan: true for the one participant that runs it. */
static bool
par_claim_serial(IndexScanDesc scan)
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
			Buffer		buf = lock_shared(index, b);
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

static bool gpu_fetch(IndexScanDesc scan);
static void gpu_release(IndexScanDesc scan);

/*
 * Start slice number slice of a parallel scan split into slices: segment
 * 0 narrowed to that slice's ranges, looked up as one GPU batch, or on the
 * CPU if the GPU cannot serve it.  True when it yields an entry (a GPU
 * batch's first entry is already returned, as gpu_next() does).
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
	if (gbt_device_mode != GBT_DEVICE_CPU && gpu_fetch(scan))
	{
		so->gpu_i = -1;
		if (gpu_next(scan, ForwardScanDirection))
			return true;
		gpu_release(scan);
		return false;
	}
	so->par_chunk = true;
	so->clip = false;
	if (seek_segment_start(scan, 0, false))
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
 * positioned for return_item().
 */
static bool
par_next(IndexScanDesc scan, int want_slices)
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
			if (step_serial(scan, ForwardScanDirection))
				return true;
			so->par_chunk = false;
			so->clip = false;
		}
		chunk = par_claim_chunk(scan, want_slices, &slices);
		if (chunk < 0)
		{
			drop_pin(so);
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
			found = seek_segment_start(scan, b->seg, false);
		else
			found = seek(scan, b->seg, b->key, b->tid, false);
		if (found)
			return true;
	}
}


/* ------------------------------------------------------------------------
 * GPU scans
 * ------------------------------------------------------------------------
 */

static void
gpu_release(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (so->gpu_items)
		pfree(so->gpu_items);
	so->gpu_items = NULL;
	if (so->gpu_locked)
		UnlockPage(scan->indexRelation, GBT_GPU_SCAN_LOCK, ShareLock);
	so->gpu_locked = false;
}

/*
 * Run the whole scan as GPU batches (one per segment); first() has found
 * that gbtree.device and the batch size call for it.  Returns true when
 * so->gpu_items holds the answer; false to run on the CPU.
 *
 * Entries come back without pins on their leaves.  Where a scan relies on
 * those pins to keep VACUUM from recycling TIDs under it (index-only and
 * non-MVCC scans, see keep_pin()), it holds a share lock on the
 * GBT_GPU_SCAN_LOCK tag instead, which VACUUM's deletion pass takes
 * exclusively; if VACUUM holds it now, the scan runs on the CPU.
 */
static bool
gpu_fetch(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	GbtEntry   *parts[2] = {NULL, NULL};
	uint64		counts[2] = {0, 0};
	MemoryContext oldcxt;

	if (keep_pin(scan))
	{
		if (!ConditionalLockPage(index, GBT_GPU_SCAN_LOCK, ShareLock))
		{
			if (gbt_device_mode == GBT_DEVICE_GPU)
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("gbtree: the GPU cannot serve a scan of index \"%s\" while VACUUM removes entries from it",
								RelationGetRelationName(index)),
						 errhint("Set gbtree.device to 'auto' to run it on the CPU meanwhile.")));
			return false;
		}
		so->gpu_locked = true;
	}
	/*
	 * The results must outlive this call: amgettuple runs in a per-tuple
	 * context that the executor resets.
	 */
	oldcxt = MemoryContextSwitchTo(GetMemoryChunkContext(so));
	for (int s = 0; s < so->nsegs; s++)
	{
		GbtSegment *seg = &so->segs[s];

		if (!gbt_gpu_lookup(index, seg->root, seg->ranges, seg->nranges,
							seg->ranges ? NULL : so->points, &parts[s], &counts[s]))
		{
			if (parts[0])
				pfree(parts[0]);
			MemoryContextSwitchTo(oldcxt);
			gpu_release(scan);
			return false;
		}
	}
	if (so->nsegs == 2)
	{
		GbtEntry   *all = MemoryContextAllocHuge(CurrentMemoryContext,
												 sizeof(GbtEntry) * Max(counts[0] + counts[1], 1));

		memcpy(all, parts[0], sizeof(GbtEntry) * counts[0]);
		memcpy(all + counts[0], parts[1], sizeof(GbtEntry) * counts[1]);
		pfree(parts[0]);
		pfree(parts[1]);
		parts[0] = all;
	}
	MemoryContextSwitchTo(oldcxt);
	so->gpu_items = parts[0];
	so->gpu_n = counts[0] + counts[1];
	/* which part holds NULL entries (the NULL tree's segment) */
	so->gpu_nulls_from = so->gpu_nulls_to = 0;
	for (int s = 0, at = 0; s < so->nsegs; at += counts[s], s++)
		if (so->segs[s].root == GBT_NULLROOT_BLKNO)
		{
			so->gpu_nulls_from = at;
			so->gpu_nulls_to = at + counts[s];
		}
	return true;
}

/* The deferred point keys as the value segment's sorted ranges. */
static void
points_to_ranges(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtSegment *seg = &so->segs[0];	/* a value qual: the only segment */
	int			n;

	if (so->points == NULL)
		return;
	Assert(so->nsegs == 1 && seg->ranges == NULL);
	n = gbt_sort_unique_u64(so->points, seg->nranges);
	seg->ranges = MemoryContextAlloc(so->keycxt, sizeof(GbtRange) * Max(n, 1));
	gbt_advise_huge(seg->ranges, sizeof(GbtRange) * Max(n, 1));
	for (int j = 0; j < n; j++)
		seg->ranges[j].lo = seg->ranges[j].hi = so->points[j];
	seg->nranges = n;
	so->points = NULL;
}

static bool
first(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	bool		backward = ScanDirectionIsBackward(dir);

	if (message_level_is_interesting(DEBUG1))
	{
		instr_time	t0;

		INSTR_TIME_SET_CURRENT(t0);
		prep_sort_ms = prep_ranges_ms = 0;
		preprocess_keys(scan);
		elog(DEBUG1, "gbtree scan of \"%s\": keys prepared in %.3f ms (sorting %.3f ms, ranges %.3f ms)",
			 RelationGetRelationName(scan->indexRelation), ms_since(t0),
			 prep_sort_ms, prep_ranges_ms);
	}
	else
		preprocess_keys(scan);
	so->started = true;
	pgstat_count_index_scan(scan->indexRelation);
	if (so->impossible || so->nsegs == 0)
	{
		so->pos.seg = -1;
		return false;
	}
	so->par_serial = false;
	so->par_slices = false;
	if (gbt_device_mode != GBT_DEVICE_CPU)
	{
		int			nq = 0;

		for (int s = 0; s < so->nsegs; s++)
			nq += so->segs[s].nranges;
		if (gbt_gpu_wanted(nq) && scan->parallel_scan && !backward && so->nsegs == 1)
		{
			/*
			 * A forward parallel scan of one segment goes in slices of its
			 * ranges, each one GPU batch, that the participants claim in
			 * order: each one's output stays in index order, and they
			 * share the work of returning the rows.
			 */
			return par_next(scan, Max(1, Min(GBT_PAR_MAX_SLICES, nq / GBT_PAR_SLICE_RANGES)));
		}
		if (gbt_gpu_wanted(nq))
		{
			/* one participant of other parallel scans runs the whole batch */
			if (scan->parallel_scan)
			{
				if (!par_claim_serial(scan))
				{
					so->pos.seg = -1;
					return false;
				}
				so->par_serial = true;
			}
			if (gpu_fetch(scan))
			{
				so->gpu_i = backward ? so->gpu_n : -1;
				return gpu_next(scan, dir);
			}
		}
	}
	points_to_ranges(scan);		/* the CPU path needs them sorted */
	if (scan->parallel_scan && !so->par_serial)
	{
		if (!backward)
			return par_next(scan, 0);
		if (!par_claim_serial(scan))
		{
			so->pos.seg = -1;
			return false;
		}
		so->par_serial = true;
	}
	if (seek_segment_start(scan, backward ? so->nsegs - 1 : 0, backward))
		return true;
	return step(scan, dir);
}

static void
return_entry(IndexScanDesc scan, GbtEntry *e, bool isnull);

static void
return_item(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	return_entry(scan, &so->pos.items[so->pos.itemIndex],
				 so->segs[so->pos.seg].root == GBT_NULLROOT_BLKNO);
}

static void
return_entry(IndexScanDesc scan, GbtEntry *e, bool entry_isnull)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	gbt_tid_to_itemptr(e->tid, &scan->xs_heaptid);
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		Datum		value;
		bool		isnull = entry_isnull;
		MemoryContext old;

		if (!isnull)
		{
			if (so->int64_keys)
				value = Int64GetDatum(gbt_key_to_int64(e->key));
			else
				value = gbt_index_datum(so->info, e->key, e->tid);
			store_att_byval((char *) so->itup + MAXALIGN(sizeof(IndexTupleData)),
							value, so->attlen);
			scan->xs_itup = so->itup;
		}
		else
		{
			value = (Datum) 0;
			if (so->tupcxt == NULL)
				so->tupcxt = AllocSetContextCreate(CurrentMemoryContext, "gbtree scan tuple",
												   ALLOCSET_SMALL_SIZES);
			MemoryContextReset(so->tupcxt);
			old = MemoryContextSwitchTo(so->tupcxt);
			scan->xs_itup = index_form_tuple(RelationGetDescr(scan->indexRelation),
											 &value, &isnull);
			MemoryContextSwitchTo(old);
		}
	}
}

static bool
gpu_next(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (ScanDirectionIsForward(dir))
	{
		if (++so->gpu_i >= so->gpu_n)
		{
			so->gpu_i = so->gpu_n;
			return false;
		}
	}
	else
	{
		if (--so->gpu_i < 0)
		{
			so->gpu_i = -1;
			return false;
		}
	}
	return_entry(scan, &so->gpu_items[so->gpu_i],
				 so->gpu_i >= so->gpu_nulls_from && so->gpu_i < so->gpu_nulls_to);
	return true;
}

bool
gbtgettuple(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;

	if (!so->started)
	{
		if (!first(scan, dir))
			return false;
		if (so->gpu_items)
			return true;		/* gpu_next() returned the entry */
	}
	else if (so->gpu_items)
	{
		if (gpu_next(scan, dir))
			return true;
		if (!so->par_slices)
			return false;
		/* a parallel scan's GPU slice is used up: on to the next slice */
		gpu_release(scan);
		if (!par_next(scan, 0))
			return false;
	}
	else
	{
		if (pos->seg < 0)
			return false;
		if (ScanDirectionIsForward(dir))
		{
			if (++pos->itemIndex >= pos->nitems)
			{
				pos->itemIndex = pos->nitems;
				if (!step(scan, dir))
					return false;
			}
		}
		else
		{
			if (--pos->itemIndex < 0)
			{
				pos->itemIndex = -1;
				if (!step(scan, dir))
					return false;
			}
		}
	}
	if (so->gpu_items)
		return true;			/* a GPU slice began: its entry is returned */
	return_item(scan);
	return true;
}

/* GPU batches of at least this many matches go into a bitmap in TID order */
#define GBT_BITMAP_SORT_MIN		4096

int64
gbtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	ItemPointerData tids[GBT_MAX_SLOTS];
	int64		ntids = 0;

	if (!first(scan, ForwardScanDirection))
	{
		drop_pin(so);
		if (so->gpu_items)
			gpu_release(scan);
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
		gpu_release(scan);
		gbt_sort_tids(t, n);
		for (int i = 0; i < n; i += GBT_MAX_SLOTS)
		{
			int			m = Min(n - i, GBT_MAX_SLOTS);

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
		/* first() returned the first entry already */
		for (int64 i = 0; i < so->gpu_n; i += GBT_MAX_SLOTS)
		{
			int			n = (int) Min(so->gpu_n - i, GBT_MAX_SLOTS);

			for (int j = 0; j < n; j++)
				gbt_tid_to_itemptr(so->gpu_items[i + j].tid, &tids[j]);
			tbm_add_tuples(tbm, tids, n, false);
		}
		ntids = so->gpu_n;
		gpu_release(scan);
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
		if (!step(scan, ForwardScanDirection))
			break;
	}
	drop_pin(so);
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
 */
int64
gbt_scan_tids(IndexScanDesc scan, GbtTidSink sink, void *arg, int max)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	Relation	index = scan->indexRelation;
	bool		locked;
	uint64	   *t;
	int			n = 0;
	int64		total = 0;
	bool		timed = message_level_is_interesting(DEBUG1);
	instr_time	t0;

	Assert(scan->parallel_scan == NULL);
	max = Max(max, GBT_MAX_SLOTS);
	scan->xs_want_itup = true;	/* keep_pin(): leaf pins are held */
	locked = ConditionalLockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
	if (!first(scan, ForwardScanDirection))
	{
		drop_pin(so);
		if (so->gpu_items)
			gpu_release(scan);
		if (locked)
			UnlockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
		return 0;
	}
	if (timed)
		INSTR_TIME_SET_CURRENT(t0);
	t = palloc_extended(sizeof(uint64) * (so->gpu_items ? Min(so->gpu_n, (uint64) max) : max),
						MCXT_ALLOC_HUGE);
	if (so->gpu_items)
	{
		/* the batch's entries stay covered by gpu_fetch()'s lock */
		for (uint64 i = 0; i < so->gpu_n; i += n)
		{
			n = (int) Min(so->gpu_n - i, (uint64) max);
			for (int j = 0; j < n; j++)
				t[j] = so->gpu_items[i + j].tid >> 16;	/* no flags */
			sink(arg, t, n, true);
			CHECK_FOR_INTERRUPTS();
		}
		total = so->gpu_n;
		gpu_release(scan);
	}
	else
	{
		for (;;)
		{
			int			m = pos->nitems - Max(pos->itemIndex, 0);

			if (n + m > max)
			{
				sink(arg, t, n, false);
				total += n;
				n = 0;
			}
			for (int i = Max(pos->itemIndex, 0); i < pos->nitems; i++)
				t[n++] = pos->items[i].tid >> 16;
			pos->itemIndex = pos->nitems;
			if (!locked && n > 0)
			{
				/* this leaf is still pinned */
				sink(arg, t, n, false);
				total += n;
				n = 0;
			}
			if (!step(scan, ForwardScanDirection))
				break;
		}
		if (n > 0)
		{
			sink(arg, t, n, false);
			total += n;
		}
		drop_pin(so);
	}
	pfree(t);
	if (timed)
		elog(DEBUG1, "gbtree TID scan of \"%s\": " INT64_FORMAT " TIDs%s, passed on in %.3f ms",
			 RelationGetRelationName(index), total, locked ? "" : " leaf by leaf", ms_since(t0));
	if (locked)
		UnlockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
	return total;
}

void
gbtrescan(IndexScanDesc scan, ScanKey keys, int nkeys,
		  ScanKey orderbys, int norderbys)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	drop_pin(so);
	gpu_release(scan);
	so->started = false;
	so->markValid = false;
	so->pos.seg = -1;
	so->par_chunk = false;
	so->clip = false;
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
}

void
gbtendscan(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	drop_pin(so);
	gpu_release(scan);
	if (so->keycxt)
		MemoryContextDelete(so->keycxt);
	if (so->tupcxt)
		MemoryContextDelete(so->tupcxt);
	if (so->mark)
		pfree(so->mark);
	pfree(so->itup);
	pfree(so);
}

/*
 * Mark and restore copy the position (the copied items of the current
 * leaf and where the leaf sits); the items stay valid for this scan's
 * snapshot even if the leaf changed since.
 */
void
gbtmarkpos(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;

	if (so->started && so->gpu_items)
	{
		so->gpu_mark = so->gpu_i;
		so->markValid = true;
		return;
	}
	if (!so->started || pos->seg < 0)
	{
		so->markValid = false;
		return;
	}
	if (so->mark == NULL)
		so->mark = MemoryContextAlloc(GetMemoryChunkContext(so), sizeof(GbtScanPos));
	memcpy(so->mark, pos, offsetof(GbtScanPos, items) + sizeof(GbtEntry) * pos->nitems);
	so->markValid = true;
}

void
gbtrestrpos(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (!so->markValid)
		return;
	if (so->gpu_items)
	{
		so->gpu_i = so->gpu_mark;
		return;
	}
	if (so->pos.blk != so->mark->blk || so->pos.seg != so->mark->seg ||
		!BufferIsValid(so->buf))
	{
		drop_pin(so);
		if (keep_pin(scan))
			so->buf = ReadBuffer(scan->indexRelation, so->mark->blk);
	}
	memcpy(&so->pos, so->mark,
		   offsetof(GbtScanPos, items) + sizeof(GbtEntry) * so->mark->nitems);
}

bool
gbtcanreturn(Relation index, int attno)
{
	return true;
}
