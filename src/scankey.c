/*-------------------------------------------------------------------------
 *
 * scankey.c
 *	  Turning a gbtree scan's keys into the segments that scan.c reads.
 *
 * The keys are read first: comparisons with values narrow one range
 * [lo, hi] of index keys, = ANY arrays become sorted lists of point keys
 * (intersected when there are several), IS [NOT] NULL set flags.  Then the
 * bounds are folded together (a contradiction makes the scan impossible),
 * and the segments are set up in index order: the tree of values with its
 * ranges, the tree of NULLs, or both.  A DESC column stores complemented
 * keys, so everything here works in index key space.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_keys.h"
#include "gbtree_scan.h"

/* What the scan keys ask for, before the segments are set up */
typedef struct GbtKeyQuals
{
	uint64		lo;				/* every value qual: [lo, hi] */
	uint64		hi;
	bool		impossible;		/* nothing can match */
	bool		isnull_qual;
	bool		notnull_qual;
	bool		value_qual;
	uint64	   *arr;			/* = ANY point keys, sorted unless deferred */
	int			narr;			/* -1: no array key */
	bool		deferred;		/* arr left unsorted for the GPU */
	/* DEBUG1 breakdown: sorting arrays, building ranges */
	bool		timed;
	double		sort_ms;
	double		ranges_ms;
} GbtKeyQuals;

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

/*
 * The elements of array key sk as index keys, NULLs dropped, in the order
 * given; *nkeys gets their number.
 */
static uint64 *
read_array_keys(GbtIndexInfo *info, ScanKey sk, Oid argtype, int *nkeys)
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
		 * The common case, read in place: deconstructing a large array
		 * would allocate and fill two more arrays of its size.
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
	*nkeys = nv;
	return vals;
}

/*
 * Fold the nv (> 0) keys of an array key with strategy (index key space)
 * into q: an equality array becomes the point keys, or narrows those of an
 * earlier one; for an inequality only its extreme element counts.  With
 * defer_ok, a first equality array large enough for the GPU stays unsorted
 * (the device sorts it).
 */
static void
fold_array_keys(GbtKeyQuals *q, int strategy, uint64 *vals, int nv,
				bool defer_ok)
{
	instr_time	t0;

	if (q->timed)
		INSTR_TIME_SET_CURRENT(t0);
	if (defer_ok && strategy == BTEqualStrategyNumber && q->narr < 0 &&
		gbt_gpu_wanted(nv))
		q->deferred = true;		/* the device sorts them */
	else
	{
		nv = gbt_sort_unique_u64(vals, nv);
		if (q->deferred && strategy == BTEqualStrategyNumber)
		{
			/* intersecting with a second array needs both sorted */
			q->narr = gbt_sort_unique_u64(q->arr, q->narr);
			q->deferred = false;
		}
	}
	if (q->timed)
		q->sort_ms += gbt_ms_since(t0);
	if (strategy == BTEqualStrategyNumber)
	{
		if (q->narr < 0)
		{
			q->arr = vals;
			q->narr = nv;
		}
		else
			q->narr = intersect_sorted(q->arr, q->narr, vals, nv);
	}
	else if (strategy == BTLessStrategyNumber ||
			 strategy == BTLessEqualStrategyNumber)
		apply_bound(strategy, vals[nv - 1], &q->lo, &q->hi, &q->impossible);
	else
		apply_bound(strategy, vals[0], &q->lo, &q->hi, &q->impossible);
}

/* Read every scan key of scan into q. */
static void
read_scan_keys(IndexScanDesc scan, GbtKeyQuals *q)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtIndexInfo *info = so->info;

	/* one equality array, serial scan, GPU in sight: leave it unsorted */
	bool		defer_ok = scan->parallel_scan == NULL && gbt_device_mode != GBT_DEVICE_CPU;

	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		Oid			argtype = OidIsValid(sk->sk_subtype) ? sk->sk_subtype : info->keytype;
		int			strategy = sk->sk_strategy;

		if (sk->sk_flags & SK_ISNULL)
		{
			if (sk->sk_flags & SK_SEARCHNULL)
				q->isnull_qual = true;
			else if (sk->sk_flags & SK_SEARCHNOTNULL)
				q->notnull_qual = true;
			else
				q->impossible = true;	/* comparison with NULL */
			continue;
		}
		if (sk->sk_attno != 1)
			elog(ERROR, "gbtree: unexpected scan key attribute %d", sk->sk_attno);
		if (strategy < 1 || strategy > GBT_NSTRATEGIES)
			elog(ERROR, "gbtree: unexpected strategy number %d", strategy);
		q->value_qual = true;
		if (info->desc)
			strategy = mirror_strategy(strategy);

		if (sk->sk_flags & SK_SEARCHARRAY)
		{
			int			nv;
			uint64	   *vals = read_array_keys(info, sk, argtype, &nv);

			if (nv == 0)
			{
				q->impossible = true;
				continue;
			}
			fold_array_keys(q, strategy, vals, nv, defer_ok);
		}
		else
		{
			uint64		k = gbt_datum_to_key(sk->sk_argument, argtype, NULL);

			apply_bound(strategy, info->desc ? ~k : k, &q->lo, &q->hi, &q->impossible);
		}
	}
}

/*
 * Fold the quals together: contradictions make the scan impossible, and
 * the point keys keep only those inside [lo, hi].
 */
static void
fold_bounds(GbtKeyQuals *q)
{
	if (q->isnull_qual && (q->value_qual || q->notnull_qual))
		q->impossible = true;
	if (q->lo > q->hi)
		q->impossible = true;
	if (!q->impossible && q->narr >= 0)
	{
		int			m = 0;

		for (int j = 0; j < q->narr; j++)
			if (q->arr[j] >= q->lo && q->arr[j] <= q->hi)
				q->arr[m++] = q->arr[j];
		q->narr = m;
		if (q->narr == 0)
			q->impossible = true;
	}
}

/* Set up so's segments, in index order, from the folded quals. */
static void
setup_segments(GbtScanOpaque so, GbtKeyQuals *q)
{
	GbtSegment	valseg,
				nullseg;
	instr_time	t0;

	so->nsegs = 0;
	so->points = NULL;
	so->impossible = q->impossible;
	if (q->impossible)
		return;

	valseg.root = GBT_ROOT_BLKNO;
	if (q->timed)
		INSTR_TIME_SET_CURRENT(t0);
	if (q->deferred)
	{
		valseg.nranges = q->narr;
		valseg.ranges = NULL;
		so->points = q->arr;
	}
	else if (q->narr >= 0)
	{
		valseg.nranges = q->narr;
		valseg.ranges = palloc(sizeof(GbtRange) * q->narr);
		gbt_advise_huge(valseg.ranges, sizeof(GbtRange) * q->narr);
		for (int j = 0; j < q->narr; j++)
			valseg.ranges[j].lo = valseg.ranges[j].hi = q->arr[j];
	}
	else
	{
		valseg.nranges = 1;
		valseg.ranges = &so->fixed_ranges[0];
		valseg.ranges[0].lo = q->lo;
		valseg.ranges[0].hi = q->hi;
	}
	if (q->timed)
		q->ranges_ms += gbt_ms_since(t0);
	nullseg.root = GBT_NULLROOT_BLKNO;
	nullseg.nranges = 1;
	nullseg.ranges = &so->fixed_ranges[1];
	nullseg.ranges[0].lo = 0;
	nullseg.ranges[0].hi = UINT64_MAX;

	if (q->isnull_qual)
		so->segs[so->nsegs++] = nullseg;
	else if (q->value_qual || q->notnull_qual)
		so->segs[so->nsegs++] = valseg;
	else if (so->info->nulls_first)
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

/*
 * Turn the scan keys into so->segs (or so->impossible), with the DEBUG1
 * timing of the work.
 */
void
gbt_prepare_scan_keys(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtKeyQuals q;
	bool		has_array = false;
	MemoryContext old;
	instr_time	t0;

	q.lo = 0;
	q.hi = UINT64_MAX;
	q.impossible = false;
	q.isnull_qual = false;
	q.notnull_qual = false;
	q.value_qual = false;
	q.arr = NULL;
	q.narr = -1;
	q.deferred = false;
	q.timed = message_level_is_interesting(DEBUG1);
	q.sort_ms = 0;
	q.ranges_ms = 0;
	if (q.timed)
		INSTR_TIME_SET_CURRENT(t0);

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

	read_scan_keys(scan, &q);
	fold_bounds(&q);
	setup_segments(so, &q);
	MemoryContextSwitchTo(old);

	if (q.timed)
		elog(DEBUG1, "gbtree scan of \"%s\": keys prepared in %.3f ms (sorting %.3f ms, ranges %.3f ms)",
			 RelationGetRelationName(scan->indexRelation), gbt_ms_since(t0),
			 q.sort_ms, q.ranges_ms);
}

/* The deferred point keys as the value segment's sorted ranges. */
void
gbt_points_to_ranges(IndexScanDesc scan)
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
