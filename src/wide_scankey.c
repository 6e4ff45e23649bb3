/*-------------------------------------------------------------------------
 *
 * wide_scankey.c
 *	  Turning the scan keys of an index with multi-word keys into what
 *	  wide_scan.c reads: conditions in each column's own field, sorted
 *	  ranges of key words in segments (the tree of values, the tree of
 *	  NULLs of a one-column index, or both), and the tails that bound a
 *	  range's ends when a text constant is longer than its field.
 *
 * The conditions are gbtree_keyrange.h's: comparisons, = ANY arrays
 * (sorted and deduplicated here), IS [NOT] NULL and row comparisons.
 * gbt_key_ranges turns them into sorted ranges of key words and says how
 * many leading columns those ranges enforce; wide_scan.c's filter checks
 * the conditions on later columns, and every row comparison, on each
 * entry's decoded fields.  Everything lives in the scan's keycxt, reset by
 * each rescan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/uuid.h"

#include "gbtree_wide_scan.h"

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

	/* a text under "C" is its own key; a sort key or a numeric's is made */
	if (!OidIsValid(so->info->sortkey_coll[col]) && so->info->coltypes[col] != NUMERICOID)
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
	/* an array of a domain's values: its base type's keys */
	elemtype = getBaseType(elemtype);
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
 * key) whose only condition is = ANY of texts, some longer than the field:
 * the words of such an element are its first bytes, which many values may
 * share (under an ICU collation, those of a common prefix of a dozen
 * characters), and the point range they make holds all of them.  A point
 * of words that long elements share becomes one range per element, in
 * index order, bounded by the element's tail at both ends, so that the
 * scan reads the entries of each, not the run between them (src/README,
 * "What is left", item 4 (c')); a point of an element without a tail
 * (exactly as long as the field) keeps the words alone.  The filter still
 * compares whole texts.  Comparisons with one constant are
 * range_tails_cols'.
 */
static void
range_tails(GbtWideScan so, const GbtColCond *c, WideSeg *seg)
{
	const GbtKeyShape *shape = &so->info->shape;
	int			nw = so->nw;
	RangeTail  *rt;
	bool	   *plain;
	int			nrt = 0,
				n = 0,
				cap;
	GbtWordRange *ranges;

	if (shape->ncols != 1 || !so->info->is_text[0] || c->col != 0 || !c->tarr)
		return;
	rt = palloc(sizeof(RangeTail) * Max(c->ntarr, 1));
	plain = palloc0(sizeof(bool) * seg->nranges);
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

/* a text field's bytes, for each column before the compared one */
typedef unsigned char RangeFieldBytes[GBT_MAX_KEY_COLS][GBT_FIELD_WORDS * 8];

/*
 * The point values of columns 0..col-1 in the range, as encoder input, or
 * false when one of them spans several values there.  A text column among
 * them is a point only when its field is not full: its value is then all
 * there (bytes, no zero byte, into fb), while a full field may be a longer
 * value cut there, whose rest the range does not know.
 */
static bool
range_prefix(const GbtKeyShape *shape, const bool *is_text, const GbtWordRange *range,
			 int col, GbtColInput *in, RangeFieldBytes fb)
{
	GbtColValue lo[GBT_MAX_KEY_COLS],
				hi[GBT_MAX_KEY_COLS];

	gbt_shape_decode(shape, range->lo, lo);
	gbt_shape_decode(shape, range->hi, hi);
	memset(in, 0, sizeof(GbtColInput) * GBT_MAX_KEY_COLS);
	for (int d = 0; d < col; d++)
	{
		if (lo[d].isnull != hi[d].isnull ||
			(!lo[d].isnull && memcmp(lo[d].v, hi[d].v, sizeof(lo[d].v)) != 0))
			return false;
		in[d].val = lo[d];
		if (is_text[d] && !lo[d].isnull)
		{
			int			p = shape->col[d].bits / 8;

			in[d].len = gbt_bytes_from_field(&lo[d], p, fb[d]);
			in[d].bytes = fb[d];
			if (in[d].len >= p)
				return false;
		}
	}
	return true;
}

/* a bounded range: its words and tails at both ends */
typedef struct TailRange
{
	GbtWordRange r;
	GbtTail		lo;
	GbtTail		hi;
} TailRange;

static int	tail_range_nw;		/* for tail_range_cmp: qsort has no argument */

static int
tail_range_cmp(const void *a, const void *b)
{
	const TailRange *x = (const TailRange *) a;
	const TailRange *y = (const TailRange *) b;

	return gbt_tentry_cmp(x->r.lo, x->lo, 0, y->r.lo, y->lo, 0, tail_range_nw);
}

/*
 * = ANY of texts on a text column c of an index of several columns, some
 * element at least as long as c's field (the one condition that compares
 * c with such text; range_tails_cols' rules otherwise): the ranges hold
 * the elements' first bytes, so one range holds every value that shares
 * them (a tenant's URLs), and the filter picks the elements out of it.  In
 * each range whose columns before c are one value each, every element
 * becomes its own range, cut to gbt_shape_prefix_lower_cut's L and
 * _upper_cut's U for (those values, the element) as one constant's = is,
 * where that meets the range (elements of other words meet none); they
 * are disjoint, as the prefixes are, and sorted in index order within the
 * range they came from, so the ranges stay sorted and apart.  A range an
 * element's bounds cannot be written for (past the longest tail) stays
 * whole.  So (tenant, url) = (5, ANY of ten URLs) reads the entries of
 * ten URLs, not the tenant's.
 */
static void
range_tails_any(GbtWideScan so, const GbtColCond *c, WideSeg *seg)
{
	const GbtKeyShape *shape = &so->info->shape;
	const bool *is_text = so->info->is_text;
	int			nw = so->nw;
	int			col = c->col;
	int			cap = gbt_tail_max(nw);
	unsigned char *lt = palloc(cap + 1),
			   *ut = palloc(cap + 2);
	TailRange  *out;
	int			nout = 0,
				maxout = seg->nranges + c->ntarr;
	bool		any = false;

	/* every element against every range: bounded by the ranges' own cap */
	if ((double) seg->nranges * c->ntarr > WIDE_MAX_RANGES)
		return;
	out = palloc(sizeof(TailRange) * maxout);
	for (int r = 0; r < seg->nranges; r++)
	{
		const GbtWordRange *range = &seg->ranges[r];
		GbtColInput in[GBT_MAX_KEY_COLS];
		RangeFieldBytes fb;
		int			first = nout;
		bool		whole = !range_prefix(shape, is_text, range, col, in, fb);

		for (int e = 0; e < c->ntarr && !whole; e++)
		{
			TailRange	tr;
			int			ll,
						ul;

			in[col].bytes = c->tarr[e].data;
			in[col].len = c->tarr[e].len;
			gbt_bytes_field(c->tarr[e].data, c->tarr[e].len, shape->col[col].bits / 8,
							&in[col].val);
			ll = gbt_shape_prefix_lower_cut(shape, is_text, in, col + 1, tr.r.lo, lt, cap);
			ul = ll > 0 ? gbt_shape_prefix_upper_cut(shape, is_text, in, col + 1, tr.r.hi, ut,
													 cap) : -1;
			if (ul <= 0)
			{
				whole = true;
				break;
			}
			memset(ut + ul, 0xFF, cap + 2 - ul);
			ul = cap + 2;
			tr.lo = (GbtTail) {lt, ll};
			tr.hi = (GbtTail) {ut, ul};
			/* the range's ends, where they lie inside the element's */
			if (gbt_tentry_cmp(range->lo, GBT_TAIL_LOWEST, 0, tr.r.lo, tr.lo, 0, nw) > 0)
			{
				memcpy(tr.r.lo, range->lo, sizeof(uint64) * nw);
				tr.lo = GBT_TAIL_LOWEST;
			}
			if (gbt_tentry_cmp(range->hi, GBT_TAIL_HIGHEST, 0, tr.r.hi, tr.hi, 0, nw) < 0)
			{
				memcpy(tr.r.hi, range->hi, sizeof(uint64) * nw);
				tr.hi = GBT_TAIL_HIGHEST;
			}
			if (gbt_tentry_cmp(tr.r.lo, tr.lo, 0, tr.r.hi, tr.hi, 0, nw) > 0)
				continue;		/* another range's element */
			if (tr.lo.data == lt)
				tr.lo.data = memcpy(palloc(ll), lt, ll);
			if (tr.hi.data == ut)
				tr.hi.data = memcpy(palloc(ul), ut, ul);
			if (nout == maxout)
			{
				maxout *= 2;
				out = repalloc(out, sizeof(TailRange) * maxout);
			}
			out[nout++] = tr;
		}
		if (whole)
		{
			nout = first;
			if (nout == maxout)
			{
				maxout *= 2;
				out = repalloc(out, sizeof(TailRange) * maxout);
			}
			out[nout].r = *range;
			out[nout].lo = GBT_TAIL_LOWEST;
			out[nout++].hi = GBT_TAIL_HIGHEST;
			continue;
		}
		any = true;
		tail_range_nw = nw;
		qsort(out + first, nout - first, sizeof(TailRange), tail_range_cmp);
	}
	pfree(lt);
	pfree(ut);
	/* no element met any range: nothing matches, but the ranges say so too */
	if (!any || nout == 0)
	{
		pfree(out);
		return;
	}
	seg->ranges = palloc(sizeof(GbtWordRange) * nout);
	seg->lotails = palloc(sizeof(GbtTail) * nout);
	seg->hitails = palloc(sizeof(GbtTail) * nout);
	for (int i = 0; i < nout; i++)
	{
		seg->ranges[i] = out[i].r;
		seg->lotails[i] = out[i].lo;
		seg->hitails[i] = out[i].hi;
	}
	seg->nranges = nout;
	pfree(out);
}

/*
 * Tails for the ranges of any index whose conditions that compare a text
 * column c with text longer than its field are on c alone (at most
 * WIDE_TAIL_CONDS, each of one constant; = ANY of texts is
 * range_tails_any's): in each range where the columns before c are one
 * value each (equality, = ANY or IS NULL on them, which the ranges
 * enforce; a text one not filling its field, range_prefix), every value whose
 * columns 0..c match the range's values and a constant lies between
 * gbt_shape_prefix_lower_cut's bound L and gbt_shape_prefix_upper_cut's U
 * (the tail T0 then +infinity, written out as T0 then 0xFF bytes past the
 * longest tail an entry has).  The ends a condition bounds move there:
 * both for =, the lower one for >= (U for >), the upper one for <= (L for
 * <), mirrored under DESC; each end only inward, so the ranges stay sorted
 * and apart, and the tighter of two conditions wins.  So a lookup of
 * (tenant, url) reads the entries of that URL, not every URL of the tenant
 * that shares its first bytes, and url LIKE 'a long prefix%' (>= and <)
 * the URLs that start with it (src/README, "What is left", item 4 (c')).
 */
#define WIDE_TAIL_CONDS 4

/* *shared takes a copy of bytes[0..len) unless it holds those bytes already */
static void
share_bytes(GbtTail *shared, const unsigned char *bytes, int len)
{
	unsigned char *copy;

	if (shared->data && shared->len == len && memcmp(shared->data, bytes, len) == 0)
		return;
	copy = palloc(len);
	memcpy(copy, bytes, len);
	*shared = (GbtTail) {copy, len};
}

static void
range_tails_cols(GbtWideScan so, const GbtColCond *conds, int nconds, WideSeg *seg)
{
	const GbtKeyShape *shape = &so->info->shape;
	const bool *is_text = so->info->is_text;
	int			nw = so->nw;
	int			cap = gbt_tail_max(nw);
	const GbtColCond *lcs[WIDE_TAIL_CONDS];
	int			nlc = 0,
				col;
	bool		any = false;
	GbtTail    *lotails,
			   *hitails;

	/* per condition: its L and U bytes, shared by the ranges alike */
	GbtTail		lshared[WIDE_TAIL_CONDS],
				ushared[WIDE_TAIL_CONDS];
	unsigned char *lt,
			   *ut;				/* scratch for a range's bounds */

	for (int i = 0; i < nconds; i++)
		if (conds[i].text.data || conds[i].tarr)
		{
			if (nlc == WIDE_TAIL_CONDS || (nlc > 0 && conds[i].col != lcs[0]->col))
				return;
			lcs[nlc++] = &conds[i];
		}
	if (nlc == 0 || !is_text[lcs[0]->col])
		return;
	col = lcs[0]->col;
	if (nlc == 1 && lcs[0]->tarr)
	{
		range_tails_any(so, lcs[0], seg);
		return;
	}
	for (int k = 0; k < nlc; k++)
		if (lcs[k]->tarr)
			return;
	memset(lshared, 0, sizeof(lshared));
	memset(ushared, 0, sizeof(ushared));
	lt = palloc(cap + 1);
	ut = palloc(cap + 2);
	lotails = palloc(sizeof(GbtTail) * seg->nranges);
	hitails = palloc(sizeof(GbtTail) * seg->nranges);
	for (int r = 0; r < seg->nranges; r++)
	{
		GbtWordRange *range = &seg->ranges[r];
		GbtColInput in[GBT_MAX_KEY_COLS];
		RangeFieldBytes fb;

		lotails[r] = GBT_TAIL_LOWEST;
		hitails[r] = GBT_TAIL_HIGHEST;
		if (!range_prefix(shape, is_text, range, col, in, fb))
			continue;
		for (int k = 0; k < nlc; k++)
		{
			const GbtColCond *lc = lcs[k];
			uint64		lw[GBT_MAX_KEY_WORDS],
						uw[GBT_MAX_KEY_WORDS];
			int			ll,
						ul;

			/* the condition in index order: DESC mirrors it */
			int			op = lc->textop;

			if (shape->col[col].desc && op != BTEqualStrategyNumber)
				op = BTMaxStrategyNumber + 1 - op;
			in[col].bytes = lc->text.data;
			in[col].len = lc->text.len;
			gbt_bytes_field(lc->text.data, lc->text.len, shape->col[col].bits / 8, &in[col].val);
			ll = gbt_shape_prefix_lower_cut(shape, is_text, in, col + 1, lw, lt, cap);
			ul = ll > 0 ? gbt_shape_prefix_upper_cut(shape, is_text, in, col + 1, uw, ut, cap) : -1;
			if (ul <= 0)
				continue;
			/* U: its bytes, then 0xFF past any entry's tail */
			memset(ut + ul, 0xFF, cap + 2 - ul);
			ul = cap + 2;
			share_bytes(&lshared[k], lt, ll);
			share_bytes(&ushared[k], ut, ul);
			if (op == BTEqualStrategyNumber || op == BTGreaterEqualStrategyNumber ||
				op == BTGreaterStrategyNumber)
			{
				bool		past = op == BTGreaterStrategyNumber;
				const uint64 *w = past ? uw : lw;
				GbtTail		t = past ? ushared[k] : lshared[k];

				if (gbt_tentry_cmp(w, t, 0, range->lo, lotails[r], 0, nw) > 0)
				{
					memcpy(range->lo, w, sizeof(uint64) * nw);
					lotails[r] = t;
					any = true;
				}
			}
			if (op == BTEqualStrategyNumber || op == BTLessEqualStrategyNumber ||
				op == BTLessStrategyNumber)
			{
				bool		before = op == BTLessStrategyNumber;
				const uint64 *w = before ? lw : uw;
				GbtTail		t = before ? lshared[k] : ushared[k];

				if (gbt_tentry_cmp(w, t, 0, range->hi, hitails[r], 0, nw) < 0)
				{
					memcpy(range->hi, w, sizeof(uint64) * nw);
					hitails[r] = t;
					any = true;
				}
			}
		}
	}
	pfree(lt);
	pfree(ut);
	if (!any)
	{
		pfree(lotails);
		pfree(hitails);
		return;
	}
	seg->lotails = lotails;
	seg->hitails = hitails;
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
			if (so->filter_all)
				;
			else if (nv == 1 && shape->ncols == 1 && vconds[0].tarr)
				range_tails(so, &vconds[0], seg);
			else
				range_tails_cols(so, vconds, nv, seg);
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

void
gbt_wide_prepare_scan(IndexScanDesc scan)
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
