/*-------------------------------------------------------------------------
 *
 * wide_scan.c
 *	  Scans of indexes with multi-word keys (gbtree_wide.h).
 *
 * The scan keys become gbtree_keyrange.h's conditions, in each column's
 * own field: comparisons, = ANY arrays (sorted and deduplicated here), IS
 * [NOT] NULL and row comparisons.  gbt_key_ranges turns them into sorted
 * ranges of key words and says how many leading columns those ranges
 * enforce; the conditions on later columns, and every row comparison,
 * are checked on each entry's decoded fields.  So no entry needs the
 * heap to recheck a condition.
 *
 * A range is read leaf by leaf, each leaf's matching entries copied under
 * its share lock, as scan.c does: forward along right-links read with the
 * leaf, backward by a new descent for the entries below the leaf's low
 * key (no left-links to follow, so a concurrent split needs no care).
 * Index-only scans and scans under a non-MVCC snapshot keep the current
 * leaf pinned, so that VACUUM, which takes a cleanup lock on each leaf,
 * cannot remove its entries' heap tuples meanwhile.
 *
 * On the GPU (gbtree.device = gpu, or auto with the service ready and at
 * least gbtree.gpu_min_batch ranges), each segment's ranges go to the
 * device copy as one batch (gbt_gpu_lookup_words) and every match comes
 * back at once, in index order; the filter then runs over them, and the
 * scan steps through that array either way.  As in scan.c, such a batch
 * holds no leaf pins: scans that need them hold GBT_GPU_SCAN_LOCK
 * instead, and any failure runs the scan on the CPU (under auto).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "nodes/tidbitmap.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/uuid.h"
#include "access/htup_details.h"

#include "gbtree_gpu.h"
#include "gbtree_scan.h"
#include "gbtree_wide.h"
#include "gbtree_tail.h"

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
	 * hitail highest).  range_tails sets them for a long text constant,
	 * whose words alone are only its first bytes.
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
	uint64		items[GBT_MAX_SLOTS * GBT_WIDE_MAX_STRIDE];
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
	WidePos		pos;
	WidePos    *mark;
	bool		markValid;
	IndexTuple	itup;			/* index-only results, built in place */
	IndexTuple	itup_tail;		/* ... or formed, for an entry with a tail */
	Size		itup_len;		/* without NULLs */
	bool		itup_dirty;		/* last built with NULLs: other padding */
	GbtItupPlan itup_plan;		/* how entries without NULLs fill it */
	GbtColBuf	bufs[GBT_MAX_KEY_COLS]; /* their uuid and text values */

	/* a GPU batch: every match, filtered, in index order (gpu_fetch) */
	uint64	   *gpu_items;		/* nw words and the TID each */
	int64		gpu_n;
	int64		gpu_i;			/* the current one; -1 or gpu_n: off the ends */
	int64		gpu_nulls_from; /* [from, to): the NULL tree's matches */
	int64		gpu_nulls_to;
	int64		gpu_mark;
	bool		gpu_locked;		/* GBT_GPU_SCAN_LOCK held instead of pins */
} GbtWideScanData;

typedef GbtWideScanData *GbtWideScan;

static void mark_killed(IndexScanDesc scan);

static bool
needs_pin(IndexScanDesc scan)
{
	return scan->xs_want_itup || !IsMVCCSnapshot(scan->xs_snapshot);
}

IndexScanDesc
gbt_wide_beginscan(IndexScanDesc scan)
{
	/* not zeroed whole: a leaf's items (19 KB) are written before read */
	GbtWideScan so = palloc(sizeof(GbtWideScanData));

	memset(so, 0, offsetof(GbtWideScanData, pos));
	memset(&so->pos, 0, offsetof(WidePos, items));
	so->mark = NULL;
	so->markValid = false;
	so->itup = NULL;
	so->itup_tail = NULL;
	so->itup_dirty = false;
	so->gpu_items = NULL;
	so->gpu_locked = false;

	so->info = gbt_index_info_copy(scan->indexRelation);
	so->nw = so->info->nwords;
	so->pin = InvalidBuffer;
	so->pos.seg = -1;
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
	return scan;
}

static void
drop_pin(GbtWideScan so)
{
	if (BufferIsValid(so->pin))
		ReleaseBuffer(so->pin);
	so->pin = InvalidBuffer;
}

/* Free a GPU batch's matches and the lock that covered them, if any. */
static void
gpu_release(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	if (so->gpu_items)
		pfree(so->gpu_items);
	so->gpu_items = NULL;
	if (so->gpu_locked)
		UnlockPage(scan->indexRelation, GBT_GPU_SCAN_LOCK, ShareLock);
	so->gpu_locked = false;
}

/*
 * Scan keys to conditions
 * -----------------------
 */

/* a scan key's value of type subtype as column col's field */
static GbtClamp
key_value(GbtWideScan so, int col, Datum value, Oid subtype, GbtColValue *v)
{
	uint16		flags;			/* -0.0 compares as 0.0 */

	if (!OidIsValid(subtype))
		subtype = so->info->coltypes[col];
	return gbt_wide_field(so->info, col, value, subtype, v, &flags);
}

/*
 * A text value of column col at least as long as its field, in full (in
 * the current context), or false.  The field then holds only its first
 * bytes, and the index may hold longer values that begin with them (cut
 * entries, gbtree_tail.h): the ranges take the field, the filter the text.
 * With v, the value's field too (as key_value's), from the same order key:
 * an = ANY of ICU text makes each element's sort key once.
 */
static bool
long_text(GbtWideScan so, int col, Datum value, GbtBytes *out, GbtColValue *v)
{
	int			len;
	bool		alloc;
	const unsigned char *k;

	if (!so->info->is_text[col])
		return false;
	k = gbt_text_key(so->info, col, DatumGetTextPP(value), &len, &alloc);
	if (v)
	{
		memset(v, 0, sizeof(GbtColValue));
		gbt_bytes_field(k, len, so->info->shape.col[col].bits / 8, v);
	}
	if (len < so->info->shape.col[col].bits / 8)
	{
		if (alloc)
			pfree((void *) k);
		return false;
	}
	out->len = len;
	if (alloc)
		out->data = k;
	else
	{
		out->data = palloc(Max(len, 1));
		memcpy((unsigned char *) out->data, k, len);
	}
	return true;
}

/* the length of a text value's order key (collate.c) */
static int
text_key_len(GbtWideScan so, int col, Datum value)
{
	int			len;
	bool		alloc;
	const unsigned char *k;

	if (!OidIsValid(so->info->sortkey_coll[col]))
		return toast_raw_datum_size(value) - VARHDRSZ;
	k = gbt_text_key(so->info, col, DatumGetTextPP(value), &len, &alloc);
	if (alloc)
		pfree((void *) k);
	return len;
}

/*
 * A scalar comparison whose value was clamped: always true for a value of
 * the column (then only IS NOT NULL is left), or never.
 */
static bool
clamped_cond(int strategy, GbtClamp clamp, GbtColCond *cond)
{
	bool		always;

	if (clamp == GBT_CLAMP_BELOW)
		always = strategy == BTGreaterStrategyNumber ||
			strategy == BTGreaterEqualStrategyNumber;
	else
		always = strategy == BTLessStrategyNumber ||
			strategy == BTLessEqualStrategyNumber;
	if (always)
		cond->op = GBT_COND_NOTNULL;
	return always;
}

/* An = ANY (or < ANY ...) array; false when nothing can match. */
static bool
array_cond(GbtWideScan so, ScanKey sk, int col, GbtColCond *cond)
{
	ArrayType  *arr = DatumGetArrayTypeP(sk->sk_argument);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	GbtColValue *vals;
	int			n = 0;
	bool		any_above = false,
				any_below = false;
	bool		any_long = false;
	GbtBytes	lt;

	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign, &elems, &nulls, &nelems);
	vals = palloc(sizeof(GbtColValue) * Max(nelems, 1));
	for (int i = 0; i < nelems; i++)
	{
		GbtClamp	c;

		if (nulls[i])
			continue;
		if (long_text(so, col, elems[i], &lt, &vals[n]))
		{
			pfree((void *) lt.data);
			if (sk->sk_strategy != BTEqualStrategyNumber)
			{
				/* x < ANY (...) with a long text: left to the recheck */
				so->recheck = true;
				cond->op = GBT_COND_NOTNULL;
				cond->col = col;
				return true;
			}
			/* = ANY: its first bytes as a point, the whole in tarr */
			n++;
			any_long = true;
			continue;
		}
		if (so->info->is_text[col])
		{
			n++;				/* shorter than the field: exact */
			continue;
		}
		c = key_value(so, col, elems[i], elemtype, &vals[n]);
		if (c == GBT_CLAMP_NONE)
			n++;
		else if (c == GBT_CLAMP_ABOVE)
			any_above = true;
		else if (c == GBT_CLAMP_BELOW)
			any_below = true;
		else if (sk->sk_strategy != BTEqualStrategyNumber)
		{
			/* a text past the field: leave x < ANY (...) to the recheck */
			so->recheck = true;
			cond->op = GBT_COND_NOTNULL;
			cond->col = col;
			return true;
		}
		/* equal to no value of the column (GBT_CLAMP_PAST): dropped */
	}
	cond->col = col;
	if (sk->sk_strategy == BTEqualStrategyNumber)
	{
		int			m = 0;

		if (n == 0)
			return false;
		if (gbt_field_wide_words(so->info->shape.col[col].bits) == 0)
		{
			/*
			 * A field of one word: sort the words alone (the build's radix
			 * sort), not values four words wide, which cost an = ANY of
			 * 100k tenants a quarter of its time.
			 */
			uint64	   *keys = palloc(sizeof(uint64) * n);

			for (int i = 0; i < n; i++)
				keys[i] = vals[i].v[0];
			m = gbt_sort_unique_u64(keys, n);
			memset(vals, 0, sizeof(GbtColValue) * m);
			for (int i = 0; i < m; i++)
				vals[i].v[0] = keys[i];
			pfree(keys);
		}
		else
		{
			/*
			 * A wider field (a uuid, a text): its words, by an MSD radix
			 * sort (sort.c), a quarter of the build's LSD sort's time for 1M
			 * uuids and a sixteenth of qsort's of four-word values.
			 */
			int			nwf = gbt_field_wide_words(so->info->shape.col[col].bits);
			uint64	   *keys = MemoryContextAllocHuge(CurrentMemoryContext,
													  sizeof(uint64) * nwf * n);

			for (int i = 0; i < n; i++)
				memcpy(&keys[(Size) i * nwf], vals[i].v, sizeof(uint64) * nwf);
			m = gbt_sort_unique_words(keys, n, nwf);
			for (int i = 0; i < m; i++)
			{
				memset(&vals[i], 0, sizeof(GbtColValue));
				memcpy(vals[i].v, &keys[(Size) i * nwf], sizeof(uint64) * nwf);
			}
			pfree(keys);
		}
		cond->op = GBT_COND_EQ;
		cond->arr = vals;
		cond->narr = m;
		if (any_long)
		{
			/* every element in full, sorted and distinct, for the filter */
			GbtBytes   *tarr = palloc(sizeof(GbtBytes) * nelems);
			int			nt = 0,
						k = 0;

			for (int i = 0; i < nelems; i++)
			{
				text	   *t;
				bool		alloc;

				if (nulls[i])
					continue;
				t = DatumGetTextPP(elems[i]);
				tarr[nt].data = gbt_text_key(so->info, col, t, &tarr[nt].len, &alloc);
				nt++;
			}
			qsort(tarr, nt, sizeof(GbtBytes), gbt_bytes_qcmp);
			for (int i = 0; i < nt; i++)
				if (k == 0 || gbt_bytes_qcmp(&tarr[k - 1], &tarr[i]) != 0)
					tarr[k++] = tarr[i];
			cond->lossy = true;
			cond->textop = BTEqualStrategyNumber;
			cond->tarr = tarr;
			cond->ntarr = k;
		}
		return true;
	}
	/* x < ANY (array): x < its greatest element; > ANY: its least */
	if (sk->sk_strategy == BTLessStrategyNumber || sk->sk_strategy == BTLessEqualStrategyNumber)
	{
		if (any_above)
			return clamped_cond(sk->sk_strategy, GBT_CLAMP_ABOVE, cond);
		if (n == 0)
			return false;
		cond->value = vals[0];
		for (int i = 1; i < n; i++)
			if (gbt_field_cmp(&vals[i], &cond->value) > 0)
				cond->value = vals[i];
	}
	else
	{
		if (any_below)
			return clamped_cond(sk->sk_strategy, GBT_CLAMP_BELOW, cond);
		if (n == 0)
			return false;
		cond->value = vals[0];
		for (int i = 1; i < n; i++)
			if (gbt_field_cmp(&vals[i], &cond->value) < 0)
				cond->value = vals[i];
	}
	cond->op = sk->sk_strategy;
	return true;
}

/*
 * A row comparison, (a, b) > (x, y): its members must be consecutive index
 * columns in order, with no value clamped; any other is left to the heap's
 * recheck (false).
 */
static bool
row_cond(GbtWideScan so, ScanKey header, GbtColCond *cond)
{
	ScanKey		sub = (ScanKey) DatumGetPointer(header->sk_argument);
	GbtColValue vals[GBT_MAX_KEY_COLS];
	int			n = 0;

	for (;; sub++)
	{
		int			col = sub->sk_attno - 1;

		if (n >= GBT_MAX_KEY_COLS || col != (int) (header->sk_attno - 1) + n ||
			sub->sk_strategy != header->sk_strategy)
			return false;
		if (sub->sk_flags & SK_ISNULL)
		{
			memset(&vals[n], 0, sizeof(GbtColValue));
			vals[n].isnull = true;
		}
		else if (key_value(so, col, sub->sk_argument, sub->sk_subtype, &vals[n]) != GBT_CLAMP_NONE)
			return false;
		else if (so->info->is_text[col] &&
				 text_key_len(so, col, sub->sk_argument) >= so->info->shape.col[col].bits / 8)
			return false;		/* a cut entry's later fields are not its own */
		n++;
		if (sub->sk_flags & SK_ROW_END)
			break;
	}
	cond->col = header->sk_attno - 1;
	cond->op = GBT_COND_ROW;
	cond->rowop = header->sk_strategy;
	cond->narr = n;
	cond->arr = palloc(sizeof(GbtColValue) * n);
	memcpy((void *) cond->arr, vals, sizeof(GbtColValue) * n);
	return true;
}

/* The scan keys as conditions; false when nothing can match. */
static bool
keys_to_conds(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	so->conds = palloc0(sizeof(GbtColCond) * Max(scan->numberOfKeys, 1));
	so->nconds = 0;
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		GbtColCond *cond = &so->conds[so->nconds];
		int			col = sk->sk_attno - 1;
		GbtClamp	clamp;

		cond->col = col;
		if (sk->sk_flags & SK_ROW_HEADER)
		{
			if (row_cond(so, sk, cond))
				so->nconds++;
			else
				so->recheck = true;
			continue;
		}
		if (sk->sk_flags & SK_ISNULL)
		{
			if (sk->sk_flags & SK_SEARCHNULL)
				cond->op = GBT_COND_ISNULL;
			else if (sk->sk_flags & SK_SEARCHNOTNULL)
				cond->op = GBT_COND_NOTNULL;
			else
				return false;	/* a comparison with NULL */
			so->nconds++;
			continue;
		}
		if (sk->sk_flags & SK_SEARCHARRAY)
		{
			if (!array_cond(so, sk, col, cond))
				return false;
			so->nconds++;
			continue;
		}
		if (sk->sk_strategy < BTLessStrategyNumber || sk->sk_strategy > BTGreaterStrategyNumber)
			elog(ERROR, "gbtree: unexpected strategy number %d", sk->sk_strategy);
		clamp = key_value(so, col, sk->sk_argument, sk->sk_subtype, &cond->value);
		cond->op = sk->sk_strategy;
		if (long_text(so, col, sk->sk_argument, &cond->text, NULL))
		{
			/*
			 * Over its first bytes, as wide as needed: x < it holds only
			 * where those bytes are at most its own, x > it where at least.
			 */
			cond->textop = sk->sk_strategy;
			cond->op = sk->sk_strategy < BTEqualStrategyNumber ? BTLessEqualStrategyNumber :
				sk->sk_strategy > BTEqualStrategyNumber ? BTGreaterEqualStrategyNumber :
				BTEqualStrategyNumber;
			cond->lossy = true;
		}
		else if (clamp != GBT_CLAMP_NONE && !clamped_cond(sk->sk_strategy, clamp, cond))
			return false;
		so->nconds++;
	}
	return true;
}

/* Turn the scan keys into segments and ranges, in keycxt. */
/*
 * A text constant's key as an entry's: its words and, when it is longer
 * than the field, its tail (palloc'd) in *tail; false when it has none.
 */
static bool
text_entry(GbtWideScan so, const GbtBytes *k, uint64 *words, GbtTail *tail)
{
	const GbtKeyShape *shape = &so->info->shape;
	GbtColInput in[1];
	unsigned char *t = palloc(gbt_tail_max(shape->nwords) + 1);
	int			tlen;

	memset(in, 0, sizeof(in));
	in[0].bytes = k->data;
	in[0].len = k->len;
	gbt_bytes_field(k->data, k->len, shape->col[0].bits / 8, &in[0].val);
	tlen = gbt_shape_encode_cut(shape, so->info->is_text, in, words, t,
								gbt_tail_max(shape->nwords));
	if (tlen <= 0)
	{
		pfree(t);
		return false;
	}
	tail->data = t;
	tail->len = tlen;
	return true;
}

/* the point range [w, w] of seg's sorted, disjoint ranges, or -1 */
static int
point_range(const WideSeg *seg, const uint64 *w, int nw)
{
	int			a = 0,
				b = seg->nranges;

	while (a < b)
	{
		int			m = a + (b - a) / 2;

		if (gbt_words_cmp(seg->ranges[m].hi, w, nw) < 0)
			a = m + 1;
		else
			b = m;
	}
	if (a >= seg->nranges ||
		gbt_words_cmp(seg->ranges[a].lo, w, nw) != 0 ||
		gbt_words_cmp(seg->ranges[a].hi, w, nw) != 0)
		return -1;
	return a;
}

/* an = ANY element's tail and the point range of its words */
typedef struct RangeTail
{
	int			range;
	GbtTail		tail;
} RangeTail;

/* by range, then in index order */
static int
range_tail_cmp(const void *a, const void *b)
{
	const RangeTail *x = (const RangeTail *) a;
	const RangeTail *y = (const RangeTail *) b;

	if (x->range != y->range)
		return x->range < y->range ? -1 : 1;
	return gbt_tail_cmp(x->tail.data, x->tail.len, y->tail.data, y->tail.len);
}

/*
 * Tails for the ranges of an index of one text column (nothing else in its
 * key) whose only condition compares it with text longer than the field:
 * the words of such a constant are its first bytes, which many values may
 * share (under an ICU collation, those of a common prefix of a dozen
 * characters), and the range they make holds all of them.  An end of a
 * range at a constant's words takes the constant's tail too, so the scan
 * starts and stops at the entry itself (src/README, "What is left", item 4
 * (c')); the filter still compares whole texts, so a bound is never
 * tighter than the condition, only than the words.  For = ANY, a point of
 * words that long elements share becomes one range per element, in index
 * order, so that the scan reads the entries of each, not the run between
 * them; a point of an element without a tail (exactly as long as the
 * field) keeps the words alone.
 */
static void
range_tails(GbtWideScan so, const GbtColCond *c, WideSeg *seg)
{
	const GbtKeyShape *shape = &so->info->shape;
	int			nw = so->nw;

	if (shape->ncols != 1 || !so->info->is_text[0] || c->col != 0 ||
		!(c->text.data || c->tarr))
		return;
	if (c->text.data)
	{
		uint64		w[GBT_MAX_KEY_WORDS];
		GbtTail		t;

		/*
		 * One condition, one range: the end the constant bounds (x >= c
		 * its lower end, under DESC its upper; = both), which lies at its
		 * words.  The other end may have the same words (greatest words
		 * for x >= c, 0xFF bytes): it stays open.
		 */
		bool		desc = shape->col[0].desc;
		bool		at_lo = c->op == BTEqualStrategyNumber ||
			(c->op == BTGreaterEqualStrategyNumber) != desc;
		bool		at_hi = c->op == BTEqualStrategyNumber ||
			(c->op == BTLessEqualStrategyNumber) != desc;

		if (seg->nranges != 1 || !text_entry(so, &c->text, w, &t))
			return;
		at_lo = at_lo && gbt_words_cmp(seg->ranges[0].lo, w, nw) == 0;
		at_hi = at_hi && gbt_words_cmp(seg->ranges[0].hi, w, nw) == 0;
		if (!at_lo && !at_hi)
			return;
		seg->lotails = palloc(sizeof(GbtTail));
		seg->hitails = palloc(sizeof(GbtTail));
		seg->lotails[0] = at_lo ? t : GBT_TAIL_LOWEST;
		seg->hitails[0] = at_hi ? t : GBT_TAIL_HIGHEST;
	}
	else
	{
		RangeTail  *rt = palloc(sizeof(RangeTail) * Max(c->ntarr, 1));
		bool	   *plain = palloc0(sizeof(bool) * seg->nranges);
		int			nrt = 0,
					n = 0,
					cap;
		GbtWordRange *ranges;

		for (int e = 0; e < c->ntarr; e++)
		{
			uint64		w[GBT_MAX_KEY_WORDS];
			bool		tailed = text_entry(so, &c->tarr[e], w, &rt[nrt].tail);
			int			r = point_range(seg, w, nw);

			if (r < 0)
				continue;
			if (!tailed)
				plain[r] = true;
			else
				rt[nrt++].range = r;
		}
		if (nrt == 0)
			return;
		qsort(rt, nrt, sizeof(RangeTail), range_tail_cmp);
		cap = seg->nranges + nrt;
		ranges = palloc(sizeof(GbtWordRange) * cap);
		seg->lotails = palloc(sizeof(GbtTail) * cap);
		seg->hitails = palloc(sizeof(GbtTail) * cap);
		for (int r = 0, k = 0; r < seg->nranges; r++)
		{
			bool		split = k < nrt && rt[k].range == r && !plain[r];

			if (!split)
			{
				ranges[n] = seg->ranges[r];
				seg->lotails[n] = GBT_TAIL_LOWEST;
				seg->hitails[n++] = GBT_TAIL_HIGHEST;
			}
			for (; k < nrt && rt[k].range == r; k++)
				if (split)
				{
					ranges[n] = seg->ranges[r];
					seg->lotails[n] = seg->hitails[n] = rt[k].tail;
					n++;
				}
		}
		seg->ranges = ranges;
		seg->nranges = n;
	}
}

static void
prepare_scan_in(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	const GbtKeyShape *shape = &so->info->shape;
	GbtColFold *fold;
	GbtColCond *vconds;
	int			nv = 0;
	bool		want_nulls = true,
				want_values = true;
	Size		maxr = 1;
	GbtWordRange *ranges;
	int			nr;

	if (!keys_to_conds(scan))
	{
		so->impossible = true;
		return;
	}

	/* a one-column index: IS [NOT] NULL chooses the trees */
	vconds = palloc(sizeof(GbtColCond) * Max(so->nconds, 1));
	for (int i = 0; i < so->nconds; i++)
	{
		if (!shape->nullbits && so->conds[i].op == GBT_COND_ISNULL)
			want_values = false;
		else if (!shape->nullbits)
		{
			want_nulls = false;
			if (so->conds[i].op != GBT_COND_NOTNULL)
				vconds[nv++] = so->conds[i];
		}
		else
			vconds[nv++] = so->conds[i];
		if (so->conds[i].op == GBT_COND_EQ && so->conds[i].arr)
			maxr = Min(maxr * so->conds[i].narr, WIDE_MAX_RANGES + 1);
	}
	if (shape->nullbits)
		want_nulls = false;		/* NULLs are in the words */
	if (!want_values && !want_nulls)
	{
		so->impossible = true;
		return;
	}

	fold = palloc(sizeof(GbtColFold) * shape->ncols);
	if (want_values)
	{
		ranges = palloc(sizeof(GbtWordRange) * Min(maxr, WIDE_MAX_RANGES));
		nr = gbt_key_ranges(shape, vconds, nv, fold, ranges, (int) Min(maxr, WIDE_MAX_RANGES),
							&so->nrequired);
		if (nr < 0)
		{
			/* too many combinations: the arrays only filter */
			int			m = 0;

			for (int i = 0; i < nv; i++)
				if (!(vconds[i].op == GBT_COND_EQ && vconds[i].arr))
					vconds[m++] = vconds[i];
			nr = gbt_key_ranges(shape, vconds, m, fold, ranges, 1, &so->nrequired);
			so->filter_all = true;
			Assert(nr >= 0);
		}
		if (nr > 0)
		{
			WideSeg    *seg = &so->segs[so->nsegs++];

			seg->root = GBT_ROOT_BLKNO;
			seg->ranges = ranges;
			seg->nranges = nr;
			seg->lotails = seg->hitails = NULL;
			if (nv == 1 && !so->filter_all)
				range_tails(so, &vconds[0], seg);
		}
	}
	if (want_nulls)
	{
		WideSeg    *seg = &so->segs[so->nsegs++];

		seg->root = GBT_NULLROOT_BLKNO;
		seg->ranges = palloc0(sizeof(GbtWordRange));
		seg->nranges = 1;
		seg->lotails = seg->hitails = NULL;
		/* NULLS FIRST: the NULLs come before the values */
		if (so->info->nulls_first && so->nsegs == 2)
		{
			WideSeg		t = so->segs[0];

			so->segs[0] = so->segs[1];
			so->segs[1] = t;
		}
	}
	if (!shape->nullbits)
	{
		/* ISNULL/NOTNULL went to the trees; keep the value conditions */
		so->conds = vconds;
		so->nconds = nv;
	}
	so->need_filter = so->text_filter = false;
	for (int i = 0; i < so->nconds; i++)
	{
		if (so->filter_all || so->conds[i].col >= so->nrequired ||
			so->conds[i].op == GBT_COND_ROW)
			so->need_filter = true;
		if (so->conds[i].text.data || so->conds[i].tarr)
			so->text_filter = true;
	}
	if (so->nsegs == 0)
		so->impossible = true;
}

static void
prepare_scan(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	MemoryContext old;

	so->impossible = false;
	so->recheck = false;
	so->nsegs = 0;
	so->nrequired = 0;
	so->filter_all = false;
	so->need_filter = false;
	if (so->keycxt)
		MemoryContextReset(so->keycxt);
	else
		so->keycxt = AllocSetContextCreate(GetMemoryChunkContext(so), "gbtree wide scan keys",
										   ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(so->keycxt);
	prepare_scan_in(scan);
	MemoryContextSwitchTo(old);
}

/*
 * The filter: every condition the ranges do not enforce, on the entry's
 * words and tail (tlen 0: none).  An entry with a tail, or a condition on
 * a whole text, decodes the values in full (gbt_shape_decode_cut).
 */
static bool
passes_filter(GbtWideScan so, const uint64 *words, const unsigned char *tail, int tlen)
{
	const GbtKeyShape *shape = &so->info->shape;
	GbtColValue vals[GBT_MAX_KEY_COLS];
	GbtColInput in[GBT_MAX_KEY_COLS];
	unsigned char buf[GBT_TAIL_HIGHEST_LEN + GBT_MAX_KEY_WORDS * 8];
	bool		full = tlen > 0 || so->text_filter;

	if (full)
	{
		if (gbt_shape_decode_cut(shape, so->info->is_text, words, tail, tlen, in, buf,
								 sizeof(buf)) < 0)
			gbt_tail_corrupted(so->info->indexrelid);
		for (int c = 0; c < shape->ncols; c++)
			vals[c] = in[c].val;
	}
	else
		gbt_shape_decode(shape, words, vals);
	for (int i = 0; i < so->nconds; i++)
	{
		const GbtColCond *c = &so->conds[i];

		if (!(so->filter_all || c->col >= so->nrequired || c->op == GBT_COND_ROW))
			continue;
		if (c->text.data || c->tarr ? !gbt_text_cond_holds(c, in[c->col].bytes, in[c->col].len, in[c->col].val.isnull) : !gbt_cond_holds(c, vals))
			return false;
	}
	return true;
}

/*
 * GPU batches
 * -----------
 */

/*
 * Run the whole scan as GPU batches, one per segment, and keep the matches
 * that pass the filter.  False to run it on the CPU (after the fallback was
 * counted; under gbtree.device = gpu the failure was an error).
 */
static bool
gpu_fetch(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	Relation	index = scan->indexRelation;
	int			nw = so->nw;
	Size		stride = nw + 1;
	uint64	   *words[2] = {NULL, NULL};
	uint64	   *tids[2] = {NULL, NULL};
	uint64		counts[2] = {0, 0};
	uint64	   *out;
	int64		n = 0;
	MemoryContext oldcxt;

	if (needs_pin(scan))
	{
		if (!gbt_gpu_scan_lock(index))
			return false;
		so->gpu_locked = true;
	}
	/* the matches outlive this call; amgettuple's context is per tuple */
	oldcxt = MemoryContextSwitchTo(GetMemoryChunkContext(so));
	for (int sg = 0; sg < so->nsegs; sg++)
	{
		WideSeg    *seg = &so->segs[sg];
		uint64	   *q = palloc(sizeof(uint64) * 2 * nw * seg->nranges);

		for (int r = 0; r < seg->nranges; r++)
		{
			memcpy(&q[(Size) r * 2 * nw], seg->ranges[r].lo, sizeof(uint64) * nw);
			memcpy(&q[(Size) r * 2 * nw + nw], seg->ranges[r].hi, sizeof(uint64) * nw);
		}
		if (!gbt_gpu_lookup_words(index, seg->root, nw, q, seg->nranges,
								  &words[sg], &tids[sg], &counts[sg]))
		{
			for (int i = 0; i < sg; i++)
			{
				pfree(words[i]);
				pfree(tids[i]);
			}
			pfree(q);
			MemoryContextSwitchTo(oldcxt);
			gpu_release(scan);
			return false;
		}
		pfree(q);
	}
	out = MemoryContextAllocHuge(CurrentMemoryContext,
								 sizeof(uint64) * stride * Max(counts[0] + counts[1], 1));
	so->gpu_nulls_from = so->gpu_nulls_to = 0;
	for (int sg = 0; sg < so->nsegs; sg++)
	{
		bool		nulls = so->segs[sg].root == GBT_NULLROOT_BLKNO;

		if (nulls)
			so->gpu_nulls_from = n;
		for (uint64 j = 0; j < counts[sg]; j++)
		{
			uint64	   *item = &out[n * stride];

			memcpy(item, &words[sg][j * nw], sizeof(uint64) * nw);
			/* the NULL tree's entries have no fields to filter */
			if (!nulls && so->need_filter && !passes_filter(so, item, NULL, 0))
				continue;
			item[nw] = tids[sg][j];
			n++;
		}
		if (nulls)
			so->gpu_nulls_to = n;
		pfree(words[sg]);
		pfree(tids[sg]);
	}
	MemoryContextSwitchTo(oldcxt);
	so->gpu_items = out;
	so->gpu_n = n;
	return true;
}

/*
 * Dead entries (src/README, "Dead entries"): scan.c's remember_killed and
 * mark_killed over the entries' words.  An entry is marked only where it
 * is sure to be the one returned: the scan kept its pin on the leaf since
 * it read it, or the leaf still has the LSN it had then.
 */
static void
remember_killed(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;
	int			stride = so->nw + 1;

	if (so->gpu_items || pos->seg < 0 || pos->itemIndex < 0 || pos->itemIndex >= pos->nitems)
		return;
	if (so->nkilled > 0 && (so->kill_blk != pos->blk || so->kill_lsn != pos->lsn ||
							so->kill_pinned != pos->pinned))
		mark_killed(scan);
	if (so->killed == NULL)
		so->killed = MemoryContextAlloc(GetMemoryChunkContext(so),
										sizeof(uint64) * stride * GBT_MAX_SLOTS);
	if (so->nkilled == 0)
	{
		so->kill_blk = pos->blk;
		so->kill_lsn = pos->lsn;
		so->kill_pinned = pos->pinned;
	}
	if (so->nkilled < GBT_MAX_SLOTS)
		memcpy(&so->killed[so->nkilled++ * stride], &pos->items[pos->itemIndex * stride],
			   sizeof(uint64) * stride);
}

/* Mark the remembered entries; called with no buffer locked. */
static void
mark_killed(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	int			nw = so->nw;
	int			n = so->nkilled;
	Buffer		buf;
	GbtNode		node;
	uint64	   *dead;
	bool		marked = false;
	bool		release;

	if (n == 0)
		return;
	so->nkilled = 0;
	buf = gbt_kill_leaf(scan->indexRelation, so->pin, so->kill_blk, so->kill_lsn,
						so->kill_pinned, nw, &release);
	if (!BufferIsValid(buf))
		return;
	gbt_node_view((char *) BufferGetPage(buf), &node);
	dead = gbt_leaf_dead((char *) BufferGetPage(buf));
	for (int i = 0; i < n; i++)
	{
		const uint64 *e = &so->killed[i * (nw + 1)];
		int			s;
		bool		same;

		if (node.toff)
		{
			/* a run of equal words orders by tail first: look at each */
			int			hi = gbt_node_upper_bound_words(&node, e);

			for (s = gbt_node_next_used(&node, gbt_node_lower_bound_words(&node, e));
				 s < hi && node.tids[s] != e[nw]; s = gbt_node_next_used(&node, s + 1))
				;
			if (s >= hi)
				continue;
		}
		else
		{
			s = gbt_node_lower_bound_entry_words(&node, e, e[nw]);
			/* a gap holds its next used slot's entry: that slot is the one */
			if (s < node.nslots)
				s = gbt_node_next_used(&node, s);
		}
		if (s >= node.nslots || node.tids[s] != e[nw] || node.keys[s] != e[0])
			continue;
		same = true;
		for (int k = 1; k < nw; k++)
			same &= node.xkeys[k - 1][s] == e[k];
		if (same && !((dead[s >> 6] >> (s & 63)) & 1))
		{
			dead[s >> 6] |= UINT64CONST(1) << (s & 63);
			marked = true;
		}
	}
	gbt_kill_leaf_done(buf, marked, release);
}

/*
 * Reading leaves
 * --------------
 */

static inline bool
words_are(const uint64 *words, int nw, uint64 value)
{
	for (int k = 0; k < nw; k++)
		if (words[k] != value)
			return false;
	return true;
}

/*
 * Copy the used and unmarked slots of [start, end) that pass the filter
 * into items (nw words and the TID each), a bitmap word at a time; the
 * caller passes nw as a constant where it can, so the copy unrolls.
 */
static inline pg_attribute_always_inline int
gather_live(GbtWideScan so, const GbtNode *node, const uint64 *dead, int start, int end,
			WidePos *pos, int nw)
{
	uint64	   *items = pos->items;
	int			n = 0;

	pos->tails = node->toff != NULL;
	pos->tused = 0;
	for (int w = start >> 6; w < (end + 63) >> 6; w++)
	{
		uint64		bits = gbt_node_live_bits(node, dead, w, start, end);

		while (bits)
		{
			int			sl = (w << 6) + pg_rightmost_one_pos64(bits);
			uint64	   *item = &items[n * (nw + 1)];
			GbtTail		t = {NULL, 0};

			bits &= bits - 1;
			item[0] = node->keys[sl];
			for (int k = 1; k < nw; k++)
				item[k] = node->xkeys[k - 1][sl];
			if (pos->tails)
				t = gbt_node_slot_tail(node, sl);
			if (so->need_filter && !passes_filter(so, item, t.data, t.len))
				continue;
			item[nw] = node->tids[sl];
			if (pos->tails)
			{
				pos->itlen[n] = t.len;
				pos->itoff[n] = pos->tused;
				memcpy(pos->tbytes + pos->tused, t.data, t.len);
				pos->tused += t.len;
			}
			n++;
		}
	}
	return n;
}

/* Copy the entries of the locked leaf in buf that the position's range wants. */
static void
read_leaf(IndexScanDesc scan, Buffer buf, int seg, int range)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;
	const GbtWordRange *r = &so->segs[seg].ranges[range];
	Page		page = BufferGetPage(buf);
	GbtNode		node;
	int			nw = so->nw;
	int			start,
				end;

	/* marked entries are skipped as scan.c skips them (src/README) */
	const uint64 *dead = scan->ignore_killed_tuples ? gbt_leaf_dead((char *) page) : NULL;

	gbt_node_view((char *) page, &node);
	pos->seg = seg;
	pos->range = range;
	pos->blk = BufferGetBlockNumber(buf);
	pos->lsn = BufferGetLSNAtomic(buf);
	pos->pinned = needs_pin(scan);
	pos->next = node.opaque->rightlink;
	pos->rightmost = (node.opaque->flags & GBT_F_RIGHTMOST) != 0;
	gbt_walk_bound_words(&node, false, pos->lowkey, &pos->lowtid);
	gbt_walk_bound_words(&node, true, pos->hikey, &pos->hitid);
	{
		GbtTail		lt = gbt_node_bound_tail(&node, 1);
		GbtTail		ht = gbt_node_bound_tail(&node, 0);

		pos->lowtaillen = lt.len;
		memcpy(pos->lowtail, lt.data, lt.len);
		pos->hitaillen = ht.len;
		memcpy(pos->hitail, ht.data, ht.len);
	}
	/*
	 * The used slots from the first key >= lo to the last <= hi; an end the
	 * range leaves open (a scan of the whole index, ORDER BY) needs no count.
	 */
	if (so->segs[seg].lotails)
	{
		GbtTail		lt = so->segs[seg].lotails[range],
					ht = so->segs[seg].hitails[range];

		end = gbt_node_upper_bound_tail(&node, r->hi, ht.data, ht.len);
		start = gbt_node_lower_bound_tail(&node, r->lo, lt.data, lt.len, 0);
	}
	else
	{
		end = words_are(r->hi, nw, UINT64_MAX) ? node.nslots :
			gbt_node_upper_bound_words(&node, r->hi);
		start = words_are(r->lo, nw, 0) ? 0 : gbt_node_lower_bound_words(&node, r->lo);
	}
	switch (nw)
	{
		case 2:
			pos->nitems = gather_live(so, &node, dead, start, end, pos, 2);
			break;
		case 3:
			pos->nitems = gather_live(so, &node, dead, start, end, pos, 3);
			break;
		case 4:
			pos->nitems = gather_live(so, &node, dead, start, end, pos, 4);
			break;
		default:
			pos->nitems = gather_live(so, &node, dead, start, end, pos, nw);
			break;
	}
	if (needs_pin(scan))
	{
		drop_pin(so);
		so->pin = buf;
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	}
	else
		UnlockReleaseBuffer(buf);
}

/* the tails that bound range (seg, range) below and above */
static GbtTail
range_lotail(GbtWideScan so, int seg, int range)
{
	return so->segs[seg].lotails ? so->segs[seg].lotails[range] : GBT_TAIL_LOWEST;
}

static GbtTail
range_hitail(GbtWideScan so, int seg, int range)
{
	return so->segs[seg].hitails ? so->segs[seg].hitails[range] : GBT_TAIL_HIGHEST;
}

/* Read the leaf where range (seg, range) starts, in direction dir. */
static void
read_range_start(IndexScanDesc scan, int seg, int range, ScanDirection dir)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	const GbtWordRange *r = &so->segs[seg].ranges[range];
	bool		backward = ScanDirectionIsBackward(dir);
	Buffer		buf;

	buf = gbt_wide_descend(scan->indexRelation, so->segs[seg].root, so->nw,
						   backward ? r->hi : r->lo,
						   backward ? range_hitail(so, seg, range) : range_lotail(so, seg, range),
						   backward ? UINT64_MAX : 0, backward, BUFFER_LOCK_SHARE);
	read_leaf(scan, buf, seg, range);
	so->pos.itemIndex = backward ? so->pos.nitems - 1 : 0;
}

/*
 * The next leaf in direction dir: the rest of the current range, or the
 * start of the next one; false at the end (the position stays).
 */
static bool
next_leaf(IndexScanDesc scan, ScanDirection dir)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	Relation	index = scan->indexRelation;
	WidePos    *pos = &so->pos;
	const GbtWordRange *r = &so->segs[pos->seg].ranges[pos->range];
	int			nw = so->nw;
	int			seg = pos->seg,
				range = pos->range;

	CHECK_FOR_INTERRUPTS();
	mark_killed(scan);			/* while the leaf's pin still vouches */
	if (ScanDirectionIsForward(dir))
	{
		/* the range goes on right of this leaf: its high key is within */
		if (!pos->rightmost &&
			(so->segs[seg].hitails ?
			 gbt_tentry_cmp(pos->hikey, (GbtTail) {pos->hitail, pos->hitaillen}, pos->hitid,
							r->hi, so->segs[seg].hitails[range], UINT64_MAX, nw) <= 0 :
			 gbt_words_cmp(pos->hikey, r->hi, nw) <= 0))
		{
			Buffer		buf = ReadBuffer(index, pos->next);

			LockBuffer(buf, BUFFER_LOCK_SHARE);
			gbt_wide_check_page(index, buf, nw);
			gbt_check_in_tree(index, buf, so->segs[seg].root);
			if (!(gbt_page_opaque((char *) BufferGetPage(buf))->flags & GBT_F_LEAF))
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" has a leaf whose right-link leads to an inner page at block %u",
								RelationGetRelationName(index), pos->next)));
			read_leaf(scan, buf, seg, range);
			pos->itemIndex = 0;
			return true;
		}
		if (++range == so->segs[seg].nranges)
		{
			if (++seg == so->nsegs)
				return false;
			range = 0;
		}
	}
	else
	{
		/*
		 * Entries of the range may lie left of the leaf: below its low key,
		 * unless that is minus infinity (zero words, TID 0: the first leaf).
		 */
		if ((pos->lowtid != 0 || !words_are(pos->lowkey, nw, 0)) &&
			gbt_tentry_cmp(r->lo, range_lotail(so, seg, range), 0, pos->lowkey,
						   (GbtTail) {pos->lowtail, pos->lowtaillen}, pos->lowtid, nw) < 0)
		{
			uint64		lk[GBT_MAX_KEY_WORDS],
						lt = pos->lowtid;
			unsigned char *ltail = palloc(Max(pos->lowtaillen, 1));
			GbtTail		ltl = {ltail, pos->lowtaillen};
			Buffer		buf;

			memcpy(lk, pos->lowkey, sizeof(uint64) * nw);
			memcpy(ltail, pos->lowtail, pos->lowtaillen);
			buf = gbt_wide_descend(index, so->segs[seg].root, nw, lk, ltl, lt, true,
								   BUFFER_LOCK_SHARE);
			pfree(ltail);
			read_leaf(scan, buf, seg, range);
			pos->itemIndex = pos->nitems - 1;
			return true;
		}
		if (--range < 0)
		{
			if (--seg < 0)
				return false;
			range = so->segs[seg].nranges - 1;
		}
	}
	read_range_start(scan, seg, range, dir);
	return true;
}

/* Step to the next matching entry in direction dir; false at the end. */
static bool
step(IndexScanDesc scan, ScanDirection dir)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;

	if (!so->started)
	{
		so->started = true;
		so->par_idle = false;
		prepare_scan(scan);
		if (so->impossible)
			return false;
		/* a parallel scan is run whole by the first participant */
		if (scan->parallel_scan && !gbt_par_claim_serial(scan))
		{
			so->par_idle = true;
			return false;
		}
		if (gbt_device_mode != GBT_DEVICE_CPU)
		{
			int			nq = 0;
			bool		tails = false;

			/*
			 * Ranges bounded by tails are the CPU's: the kernels search
			 * words, and ranges split by tails share their words.
			 */
			for (int sg = 0; sg < so->nsegs; sg++)
			{
				nq += so->segs[sg].nranges;
				tails |= so->segs[sg].lotails != NULL;
			}
			if (!tails && gbt_gpu_wanted(nq) && gpu_fetch(scan))
				so->gpu_i = ScanDirectionIsForward(dir) ? -1 : so->gpu_n;
		}
		if (so->gpu_items)
			;
		else if (ScanDirectionIsForward(dir))
			read_range_start(scan, 0, 0, dir);
		else
			read_range_start(scan, so->nsegs - 1, so->segs[so->nsegs - 1].nranges - 1, dir);
	}
	else if (so->impossible || so->par_idle || (pos->seg < 0 && so->gpu_items == NULL))
		return false;
	else if (so->gpu_items == NULL)
		pos->itemIndex += ScanDirectionIsForward(dir) ? 1 : -1;
	if (so->gpu_items)
	{
		/* a GPU batch: one array; off either end, a step back re-enters it */
		if (ScanDirectionIsForward(dir))
			so->gpu_i = Min(so->gpu_i + 1, so->gpu_n);
		else
			so->gpu_i = Max(so->gpu_i - 1, -1);
		return so->gpu_i >= 0 && so->gpu_i < so->gpu_n;
	}
	while (pos->itemIndex < 0 || pos->itemIndex >= pos->nitems)
	{
		if (!next_leaf(scan, dir))
		{
			/* past the end, where a step the other way finds the last entry */
			pos->itemIndex = ScanDirectionIsForward(dir) ? pos->nitems : -1;
			return false;
		}
	}
	return true;
}

/*
 * Assert builds: the columns written from the words are the bytes
 * heap_fill_tuple makes of gbt_wide_decode's Datums.
 */
static void
check_itup_fill(GbtWideScan so, TupleDesc desc, const uint64 *item, const char *data,
				Size size)
{
#ifdef USE_ASSERT_CHECKING
	Datum		values[GBT_MAX_KEY_COLS];
	bool		isnull[GBT_MAX_KEY_COLS];
	uint16		mask = 0;
	Size		want_size;
	char	   *want;

	gbt_wide_decode(so->info, item, item[so->nw], values, isnull, so->bufs);
	want_size = heap_compute_data_size(desc, values, isnull);
	want = palloc0(want_size);
	heap_fill_tuple(desc, values, isnull, want, want_size, &mask, NULL);
	Assert(want_size == size && memcmp(want, data, size) == 0);
	Assert(((mask & HEAP_HASVARWIDTH) != 0) == so->itup_plan.varwidth);
	pfree(want);
#endif
}

bool
gbt_wide_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	const uint64 *item;
	int			nw = so->nw;

	if (scan->kill_prior_tuple && so->started)
		remember_killed(scan);

	/* the next entry of the leaf already read, without step()'s checks */
	if (so->started && so->gpu_items == NULL && so->pos.seg >= 0 &&
		ScanDirectionIsForward(dir) && so->pos.itemIndex + 1 < so->pos.nitems &&
		so->pos.itemIndex >= 0 && !so->impossible && !so->par_idle)
		so->pos.itemIndex++;
	else if (!step(scan, dir))
		return false;
	if (so->gpu_items)
		item = &so->gpu_items[so->gpu_i * (nw + 1)];
	else
		item = &so->pos.items[so->pos.itemIndex * (nw + 1)];
	gbt_tid_to_itemptr(item[nw], &scan->xs_heaptid);
	scan->xs_recheck = so->recheck;
	if (scan->xs_want_itup)
	{
		TupleDesc	desc = RelationGetDescr(scan->indexRelation);
		Datum		values[GBT_MAX_KEY_COLS];
		bool		isnull[GBT_MAX_KEY_COLS];
		bool		hasnull = false;
		Size		hoff,
					data_size;
		uint16		mask = 0;

		bool		nulltree = so->gpu_items ?
			(so->gpu_i >= so->gpu_nulls_from && so->gpu_i < so->gpu_nulls_to) :
			(so->pos.seg >= 0 && so->segs[so->pos.seg].root == GBT_NULLROOT_BLKNO);

		/* an entry with a tail: its values in full, a tuple of any length */
		if (!so->gpu_items && so->pos.tails && so->pos.itlen[so->pos.itemIndex] > 0)
		{
			MemoryContext old;
			int			i = so->pos.itemIndex;

			if (so->itup_tail)
				pfree(so->itup_tail);
			gbt_wide_decode_tail(so->info, item, so->pos.tbytes + so->pos.itoff[i],
								 so->pos.itlen[i], item[nw], values, isnull);
			old = MemoryContextSwitchTo(GetMemoryChunkContext(so));
			so->itup_tail = index_form_tuple(desc, values, isnull);
			MemoryContextSwitchTo(old);
			for (int c = 0; c < desc->natts; c++)
				if (!isnull[c] && !TupleDescAttr(desc, c)->attbyval)
					pfree(DatumGetPointer(values[c]));
			scan->xs_itup = so->itup_tail;
			return true;
		}

		/*
		 * index_form_tuple's work without its allocation: every column is
		 * either of fixed width or a text of at most the key's 32 bytes, so
		 * the largest tuple is known and built in place; and without NULLs
		 * the columns are written from the words (gbt_wide_itup_fill, by a
		 * plan made once a scan).
		 */
		if (so->itup == NULL)
		{
			so->itup = MemoryContextAllocZero(GetMemoryChunkContext(so),
											  MAXALIGN(sizeof(IndexTupleData) +
													   sizeof(IndexAttributeBitMapData)) +
											  GBT_MAX_KEY_COLS * MAXALIGN(sizeof(GbtColBuf)));
			gbt_wide_itup_plan(so->info, desc, &so->itup_plan);
			so->itup_len = 0;
		}
		if (!nulltree && so->itup_plan.text_alone)
		{
			char	   *data = (char *) so->itup + IndexInfoFindDataOffset(0);
			Size		size;

			/*
			 * Nothing else to zero: every such tuple writes the same 33
			 * bytes, zeros past its value, and the allocation's were zero
			 * beyond them.
			 */
			if (so->itup_dirty)
				memset(so->itup, 0, so->itup_len);
			so->itup_dirty = false;
			size = gbt_wide_itup_fill_text_alone(&so->itup_plan, item, data);
			so->itup->t_info = (unsigned short) MAXALIGN(IndexInfoFindDataOffset(0) + size) |
				INDEX_VAR_MASK;
			check_itup_fill(so, desc, item, data, size);
			scan->xs_itup = so->itup;
			return true;
		}
		if (!nulltree)
		{
			char	   *data = (char *) so->itup + IndexInfoFindDataOffset(0);
			Size		size;

			if (so->itup_dirty)
				memset(so->itup, 0, so->itup_len);
			so->itup_dirty = false;
			if (gbt_wide_itup_fill(&so->itup_plan, item, item[nw], data, &size))
			{
				Size		len = MAXALIGN(IndexInfoFindDataOffset(0) + size);

				/*
				 * A text shorter than the last one leaves that one's bytes
				 * past the end; fixed-width columns rewrite the same bytes
				 * every time, so their padding stays zero.
				 */
				if (so->itup_plan.varwidth)
				{
					memset(data + size, 0, Max(len, so->itup_len) - IndexInfoFindDataOffset(0) - size);
					so->itup->t_info = (unsigned short) len | INDEX_VAR_MASK;
				}
				else
					so->itup->t_info = (unsigned short) len;
				so->itup_len = len;
				check_itup_fill(so, desc, item, data, size);
				scan->xs_itup = so->itup;
				return true;
			}
		}
		if (nulltree)
		{
			values[0] = (Datum) 0;
			isnull[0] = true;
		}
		else
			gbt_wide_decode(so->info, item, item[nw], values, isnull, so->bufs);
		for (int c = 0; c < desc->natts; c++)
			hasnull |= isnull[c];
		Assert(hasnull || so->itup_plan.decode);
		hoff = IndexInfoFindDataOffset(INDEX_NULL_MASK);
		data_size = heap_compute_data_size(desc, values, isnull);
		memset(so->itup, 0, MAXALIGN(hoff + data_size));
		heap_fill_tuple(desc, values, isnull, (char *) so->itup + hoff, data_size, &mask,
						(bits8 *) ((char *) so->itup + sizeof(IndexTupleData)));
		so->itup->t_info = (unsigned short) MAXALIGN(hoff + data_size) | INDEX_NULL_MASK |
			((mask & HEAP_HASVARWIDTH) ? INDEX_VAR_MASK : 0);
		so->itup_len = MAXALIGN(hoff + data_size);
		so->itup_dirty = true;
		scan->xs_itup = so->itup;
	}
	return true;
}

int64
gbt_wide_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	int			nw = so->nw;
	int64		n = 0;
	ItemPointerData tids[GBT_MAX_SLOTS];

	if (!step(scan, ForwardScanDirection))
		return 0;
	if (so->gpu_items)
	{
		/* a GPU batch: all of it, a chunk of TIDs at a time */
		for (; so->gpu_i < so->gpu_n;)
		{
			int			k = 0;

			for (; so->gpu_i < so->gpu_n && k < GBT_MAX_SLOTS; so->gpu_i++)
				gbt_tid_to_itemptr(so->gpu_items[so->gpu_i * (nw + 1) + nw], &tids[k++]);
			tbm_add_tuples(tbm, tids, k, so->recheck);
			n += k;
			CHECK_FOR_INTERRUPTS();
		}
		return n;
	}
	for (;;)
	{
		WidePos    *pos = &so->pos;
		int			k = 0;

		for (int i = pos->itemIndex; i < pos->nitems; i++)
			gbt_tid_to_itemptr(pos->items[i * (nw + 1) + nw], &tids[k++]);
		tbm_add_tuples(tbm, tids, k, so->recheck);
		n += k;
		pos->itemIndex = pos->nitems - 1;
		if (!step(scan, ForwardScanDirection))
			break;
	}
	return n;
}

void
gbt_wide_rescan(IndexScanDesc scan, ScanKey keys, int nkeys)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	mark_killed(scan);
	drop_pin(so);
	gpu_release(scan);
	so->started = false;
	so->markValid = false;
	so->pos.seg = -1;
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
}

void
gbt_wide_endscan(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	mark_killed(scan);
	drop_pin(so);
	gpu_release(scan);
	if (so->keycxt)
		MemoryContextDelete(so->keycxt);
	if (so->itup)
		pfree(so->itup);
	if (so->mark)
		pfree(so->mark);
	if (so->killed)
		pfree(so->killed);
	pfree(so->info);
	pfree(so);
}

/* Mark and restore copy the position, as scan.c's do. */
void
gbt_wide_markpos(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;

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
		so->mark = MemoryContextAlloc(GetMemoryChunkContext(so), sizeof(WidePos));
	memcpy(so->mark, pos, offsetof(WidePos, items) +
		   sizeof(uint64) * (so->nw + 1) * pos->nitems);
	so->markValid = true;
}

void
gbt_wide_restrpos(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	if (!so->markValid)
		return;
	if (so->gpu_items)
	{
		so->gpu_i = so->gpu_mark;
		return;
	}
	mark_killed(scan);
	if (so->pos.blk != so->mark->blk || !BufferIsValid(so->pin))
	{
		drop_pin(so);
		if (needs_pin(scan))
			so->pin = ReadBuffer(scan->indexRelation, so->mark->blk);
	}
	memcpy(&so->pos, so->mark, offsetof(WidePos, items) +
		   sizeof(uint64) * (so->nw + 1) * so->mark->nitems);
	/* the pin may have lapsed since the mark's leaf was read: the LSN vouches */
	so->pos.pinned = false;
}
