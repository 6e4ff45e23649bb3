/*-------------------------------------------------------------------------
 *
 * gbtree_keyrange.h
 *	  A multi-column scan's conditions as ranges of multi-word keys
 *	  (gbtree_keyshape.h), as btree's _bt_preprocess_keys and _bt_first
 *	  turn them into a start and a stop.
 *
 * Each column's conditions are folded first: comparisons narrow one
 * interval of its values, = and = ANY give a sorted set of points, IS
 * [NOT] NULL fix the null state; row comparisons narrow the ranges built
 * below where they can, and are always filtered too.  Then, in column order, every leading
 * column that is pinned to points (an equality, an = ANY, IS NULL) is
 * expanded, and the first column that is not bounds each range with its
 * interval.  The cartesian product of the pinned columns gives one range
 * each, sorted in index order.  Those columns' conditions are enforced by
 * the ranges ("required", as btree calls the keys that end its scan); the
 * conditions of every later column are left to a filter on the decoded
 * entry.
 *
 * Values are order keys in the columns' own fields (GbtColValue): the
 * caller converts a condition's datum, clamping a cross-type value that
 * lies outside the column's type.  Conditions follow the column's
 * ascending order whatever its DESC, which only maps them onto words.
 *
 * Multi-column scans' conditions (src/README, "Multi-word keys"), for
 * wide_scankey.c; plain C, tested exhaustively over small columns by
 * test/unit/test_keys.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_KEYRANGE_H
#define GBTREE_KEYRANGE_H

#include "gbtree_keyshape.h"

/* btree's strategy numbers */
#define GBT_COND_LT		1
#define GBT_COND_LE		2
#define GBT_COND_EQ		3
#define GBT_COND_GE		4
#define GBT_COND_GT		5
#define GBT_COND_ISNULL		6
#define GBT_COND_NOTNULL	7

/*
 * Row comparisons, (a, b) > (x, y): columns col .. col + narr - 1, values
 * arr[], strategy rowop (GBT_COND_LT .. GT, not EQ).  Always left to the
 * filter as well, since a NULL in a row member makes the comparison
 * unknown where the words would still order it; a row that starts at the
 * first column not pinned to points, over columns of one direction,
 * narrows the ranges too, as btree's row-compare scan keys bound a scan.
 */
#define GBT_COND_ROW		8


/* a text value in full */
typedef struct GbtBytes
{
	const unsigned char *data;
	int			len;
} GbtBytes;

typedef struct GbtColCond
{
	int			col;
	int			op;				/* GBT_COND_* */
	GbtColValue value;			/* a comparison's value (NULL: no row) */
	const GbtColValue *arr;		/* = ANY: op GBT_COND_EQ and narr values, */
	int			narr;			/* sorted, distinct and without NULLs, as
								 * scankey.c prepares arrays; or a row
								 * comparison's values */
	int			rowop;			/* GBT_COND_ROW: its strategy */

	/*
	 * A text value at least as long as its field (the caller's,
	 * wide_scankey.c: values longer than the field are cut, gbtree_tail.h):
	 * the ranges take op over the field, which holds only its first bytes,
	 * so they hold more than the condition does (lossy: the column goes to
	 * the filter), and the filter compares the whole text by textop (the
	 * strategy) or, for = ANY, with every element of tarr[0..ntarr) (sorted
	 * by bytes).
	 */
	bool		lossy;
	int			textop;
	GbtBytes	text;
	const GbtBytes *tarr;
	int			ntarr;
} GbtColCond;

typedef struct GbtWordRange
{
	uint64_t	lo[GBT_MAX_KEY_WORDS];	/* inclusive */
	uint64_t	hi[GBT_MAX_KEY_WORDS];	/* inclusive */
} GbtWordRange;

/* one column's conditions, folded */
typedef struct GbtColFold
{
	bool		impossible;
	bool		isnull;			/* IS NULL */
	bool		notnull;		/* IS NOT NULL, or any comparison */
	bool		bounded;		/* lo/hi narrowed by a comparison */
	GbtColValue lo;				/* inclusive, ascending order */
	GbtColValue hi;
	bool		points;			/* an equality or = ANY: pts[0..npts) */
	const GbtColValue *pts;		/* the caller's array, or &one */
	int			npts;
	GbtColValue one;
	bool		lossy;			/* a condition left out: filter the column */
} GbtColFold;

static inline int
gbt_field_cmp(const GbtColValue *a, const GbtColValue *b)
{
	for (int k = 0; k < GBT_FIELD_WORDS; k++)
		if (a->v[k] != b->v[k])
			return a->v[k] < b->v[k] ? -1 : 1;
	return 0;
}

/* the least and greatest values of a field */
static inline void
gbt_field_min(GbtColValue *v)
{
	memset(v->v, 0, sizeof(v->v));
	v->isnull = false;
}

static inline void
gbt_field_max(const GbtColShape *col, GbtColValue *v)
{
	int			nw = gbt_field_wide_words(col->bits);

	memset(v->v, 0, sizeof(v->v));
	if (nw == 0)
		v->v[0] = gbt_field_mask(col->bits);
	for (int k = 0; k < nw; k++)
		v->v[k] = ~gbt_field_mask(64 - gbt_field_word_bits(col->bits, k));
	v->isnull = false;
}

/* v + 1 and v - 1 within the field; false at its end */
static inline bool
gbt_field_step(const GbtColShape *col, GbtColValue *v, int dir)
{
	GbtColValue edge;

	if (dir > 0)
		gbt_field_max(col, &edge);
	else
		gbt_field_min(&edge);
	if (gbt_field_cmp(v, &edge) == 0)
		return false;
	if (col->bits > 64)
	{
		/* the field's last bit is the low bit of its last word's share */
		int			nw = gbt_field_wide_words(col->bits);
		uint64_t	one = UINT64_C(1) << (64 - gbt_field_word_bits(col->bits, nw - 1));

		for (int k = nw - 1; k >= 0; k--, one = 1)
		{
			uint64_t	old = v->v[k];

			v->v[k] += dir > 0 ? one : -one;
			if (dir > 0 ? v->v[k] > old : v->v[k] < old)
				break;			/* no carry or borrow into word k - 1 */
		}
	}
	else
		v->v[0] += dir > 0 ? 1 : UINT64_MAX;
	return true;
}


/* Fold every condition on column c. */
static inline void
gbt_fold_column(const GbtKeyShape *shape, int c, const GbtColCond *conds, int nconds,
				GbtColFold *f)
{
	const GbtColShape *col = &shape->col[c];

	memset(f, 0, sizeof(*f));
	gbt_field_min(&f->lo);
	gbt_field_max(col, &f->hi);
	for (int i = 0; i < nconds; i++)
	{
		const GbtColCond *k = &conds[i];
		GbtColValue v = k->value;

		if (k->col != c)
			continue;
		if (k->lossy)
			f->lossy = true;
		/* a comparison with NULL is never true */
		if (v.isnull && k->op >= GBT_COND_LT && k->op <= GBT_COND_GT && !k->arr)
			f->impossible = true;
		v.isnull = false;
		switch (k->op)
		{
			case GBT_COND_ROW:
				break;			/* gbt_row_bound */
			case GBT_COND_ISNULL:
				f->isnull = true;
				break;
			case GBT_COND_NOTNULL:
				f->notnull = true;
				break;
			case GBT_COND_LT:
			case GBT_COND_LE:
				f->notnull = f->bounded = true;
				if (k->op == GBT_COND_LT && !gbt_field_step(col, &v, -1))
					f->impossible = true;
				else if (gbt_field_cmp(&v, &f->hi) < 0)
					f->hi = v;
				break;
			case GBT_COND_GT:
			case GBT_COND_GE:
				f->notnull = f->bounded = true;
				if (k->op == GBT_COND_GT && !gbt_field_step(col, &v, 1))
					f->impossible = true;
				else if (gbt_field_cmp(&v, &f->lo) > 0)
					f->lo = v;
				break;
			case GBT_COND_EQ:
				f->notnull = true;
				if (f->points)
				{
					/*
					 * A second equality on the column: the first one's points
					 * stay, a superset; this one is left to the filter.
					 */
					f->lossy = true;
				}
				else if (k->arr)
				{
					f->pts = k->arr;
					f->npts = k->narr;
					f->points = true;
				}
				else
				{
					f->one = v;
					f->pts = &f->one;
					f->npts = 1;
					f->points = true;
				}
				break;
		}
	}
	if (f->isnull && f->notnull)
		f->impossible = true;
	/* without null bits the NULLs are in their own tree: none here */
	if (f->isnull && !shape->nullbits)
		f->impossible = true;
	if (gbt_field_cmp(&f->lo, &f->hi) > 0)
		f->impossible = true;
	if (f->points)
	{
		/* the points inside the interval: a slice of the sorted array */
		while (f->npts > 0 && gbt_field_cmp(&f->pts[0], &f->lo) < 0)
		{
			f->pts++;
			f->npts--;
		}
		while (f->npts > 0 && gbt_field_cmp(&f->pts[f->npts - 1], &f->hi) > 0)
			f->npts--;
		if (f->npts == 0)
			f->impossible = true;
	}
}


/* words + 1 (dir > 0) or - 1; false when they wrap around */
static inline bool
gbt_words_step(uint64_t *w, int nwords, int dir)
{
	for (int i = nwords - 1; i >= 0; i--)
	{
		if (dir > 0 ? w[i]++ != UINT64_MAX : w[i]-- != 0)
			return true;
	}
	return false;
}

/*
 * Narrow [lo, hi] by a row comparison that starts at column j, the first
 * column not pinned, with vals[0..j) the pinned columns' values of this
 * range.  Returns false if no key is left.  Rows over columns of mixed
 * directions, or with a NULL value, do not narrow (the filter decides).
 */
static inline bool
gbt_row_bound(const GbtKeyShape *shape, const GbtColCond *k, GbtColValue *vals, int j,
			  uint64_t *lo, uint64_t *hi)
{
	uint64_t	b[GBT_MAX_KEY_WORDS];
	bool		desc = shape->col[j].desc;
	int			op = k->rowop;
	bool		ok;

	if (k->col + k->narr > shape->ncols)
		return true;
	for (int i = 0; i < k->narr; i++)
	{
		if (shape->col[j + i].desc != desc || k->arr[i].isnull)
			return true;
		vals[j + i] = k->arr[i];
	}
	/* in a DESC run, ascending "greater" is lower in the words */
	if (desc)
		op = GBT_COND_GT + GBT_COND_LT - op;
	if (op == GBT_COND_GT || op == GBT_COND_GE)
	{
		gbt_shape_prefix_bound(shape, vals, j + k->narr, op == GBT_COND_GT, b);
		ok = op == GBT_COND_GE || gbt_words_step(b, shape->nwords, 1);
		if (!ok)
			return false;
		if (gbt_words_cmp(b, lo, shape->nwords) > 0)
			memcpy(lo, b, sizeof(uint64_t) * shape->nwords);
	}
	else
	{
		gbt_shape_prefix_bound(shape, vals, j + k->narr, op == GBT_COND_LE, b);
		ok = op == GBT_COND_LE || gbt_words_step(b, shape->nwords, -1);
		if (!ok)
			return false;
		if (gbt_words_cmp(b, hi, shape->nwords) < 0)
			memcpy(hi, b, sizeof(uint64_t) * shape->nwords);
	}
	return gbt_words_cmp(lo, hi, shape->nwords) <= 0;
}

/*
 * The ranges of keys the conditions allow, sorted and disjoint, into
 * out[0..max).  Returns their number (0: no row can match), or -1 if the
 * pinned columns' product exceeds max (the caller pins fewer columns).
 * *nrequired is the number of leading columns whose conditions the ranges
 * enforce; a later column's conditions need the filter.  fold is the
 * caller's room for shape->ncols folded columns (no allocation here, so
 * that the backend and the tests can both call it).
 */
static inline int
gbt_key_ranges(const GbtKeyShape *shape, const GbtColCond *conds, int nconds,
			   GbtColFold *fold, GbtWordRange *out, int max, int *nrequired)
{
	GbtColValue vals[GBT_MAX_KEY_COLS];
	int			npin = 0;
	int			nout = 1;
	int			idx[GBT_MAX_KEY_COLS] = {0};
	int			bound;			/* the column that bounds each range, or -1 */
	int			nkept = 0;
	bool		keep = true;
	bool		cut = false;

	*nrequired = 0;
	for (int c = 0; c < shape->ncols; c++)
	{
		gbt_fold_column(shape, c, conds, nconds, &fold[c]);
		if (fold[c].impossible)
			return 0;
	}
	/*
	 * Leading columns pinned to points: equalities, = ANY, IS NULL.  None
	 * after a lossy one (GbtColCond.lossy): an entry cut there has its
	 * later fields all set or clear, whatever its values.
	 */
	while (npin < shape->ncols && (fold[npin].points || fold[npin].isnull))
	{
		nout *= fold[npin].points ? fold[npin].npts : 1;
		if (nout > max)
			return -1;
		if (fold[npin++].lossy)
		{
			cut = true;
			break;
		}
	}
	bound = !cut && npin < shape->ncols && fold[npin].notnull ? npin : -1;
	*nrequired = bound >= 0 ? npin + 1 : npin;
	/* a column with a condition left out is filtered, and so is any after it */
	for (int c = 0; c < *nrequired; c++)
		if (fold[c].lossy)
		{
			*nrequired = c;
			break;
		}

	for (int r = 0; r < nout; r++)
	{
		int			nprefix = npin;

		/* the r-th combination of the pinned columns' points */
		for (int c = 0, rest = r; c < npin; c++)
		{
			if (fold[c].isnull)
			{
				memset(&vals[c], 0, sizeof(GbtColValue));
				vals[c].isnull = true;
				continue;
			}
			idx[c] = rest % fold[c].npts;
			rest /= fold[c].npts;
			vals[c] = fold[c].pts[idx[c]];
		}
		if (bound >= 0)
		{
			bool		desc = shape->col[bound].desc;

			/* a DESC column's words run from its greatest value down */
			nprefix = bound + 1;
			vals[bound] = desc ? fold[bound].hi : fold[bound].lo;
			gbt_shape_prefix_bound(shape, vals, nprefix, false, out[r].lo);
			vals[bound] = desc ? fold[bound].lo : fold[bound].hi;
			gbt_shape_prefix_bound(shape, vals, nprefix, true, out[r].hi);
		}
		else
			gbt_shape_prefix_bounds(shape, vals, nprefix, out[r].lo, out[r].hi);
		for (int i = 0; i < nconds && keep && !cut; i++)
			if (conds[i].op == GBT_COND_ROW && conds[i].col == npin)
				keep = gbt_row_bound(shape, &conds[i], vals, npin, out[r].lo, out[r].hi);
		if (keep && nkept != r)
			out[nkept] = out[r];
		nkept += keep;
		keep = true;
	}
	nout = nkept;
	/* index order: DESC columns and NULLS FIRST decide, so sort the words */
	for (int i = 1; i < nout; i++)
	{
		GbtWordRange t = out[i];
		int			j = i;

		while (j > 0 && gbt_words_cmp(out[j - 1].lo, t.lo, shape->nwords) > 0)
		{
			out[j] = out[j - 1];
			j--;
		}
		out[j] = t;
	}
	return nout;
}

/* whether a comparison's result r (value against the condition's) meets op */
static inline bool
gbt_cmp_holds(int op, int r)
{
	switch (op)
	{
		case GBT_COND_LT:
			return r < 0;
		case GBT_COND_LE:
			return r <= 0;
		case GBT_COND_EQ:
			return r == 0;
		case GBT_COND_GE:
			return r >= 0;
		case GBT_COND_GT:
			return r > 0;
	}
	return false;
}

/* whole texts in the "C" order: bytes, then length */
static inline int
gbt_bytes_cmp(const unsigned char *a, int alen, const unsigned char *b, int blen)
{
	int			c = memcmp(a, b, alen < blen ? alen : blen);

	return c != 0 ? c : (alen > blen) - (alen < blen);
}

static inline int
gbt_bytes_qcmp(const void *a, const void *b)
{
	const GbtBytes *x = (const GbtBytes *) a,
			   *y = (const GbtBytes *) b;

	return gbt_bytes_cmp(x->data, x->len, y->data, y->len);
}

/*
 * A condition on a whole text (GbtColCond.text, .tarr: a value at least
 * as long as its field) against an entry's text in full.
 */
static inline bool
gbt_text_cond_holds(const GbtColCond *c, const unsigned char *bytes, int len, bool isnull)
{
	int			r;

	if (isnull)
		return false;
	if (c->tarr)
	{
		int			lo = 0,
					hi = c->ntarr;

		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			r = gbt_bytes_cmp(c->tarr[mid].data, c->tarr[mid].len, bytes, len);
			if (r == 0)
				return true;
			if (r < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		return false;
	}
	return gbt_cmp_holds(c->textop, gbt_bytes_cmp(bytes, len, c->text.data, c->text.len));
}

/*
 * Whether a row of decoded fields satisfies a condition, as SQL has it: a
 * NULL satisfies only IS NULL; a row comparison is decided by its first
 * unequal member, and unknown (false) if a NULL comes first.  The filter
 * of the conditions that the ranges do not enforce.
 */
static inline bool
gbt_cond_holds(const GbtColCond *k, const GbtColValue *row)
{
	const GbtColValue *v = &row[k->col];
	int			c;

	if (k->op == GBT_COND_ROW)
	{
		for (int i = 0; i < k->narr; i++)
		{
			const GbtColValue *m = &row[k->col + i];

			if (m->isnull || k->arr[i].isnull)
				return false;
			c = gbt_field_cmp(m, &k->arr[i]);
			if (c != 0)
				return (k->rowop == GBT_COND_LT || k->rowop == GBT_COND_LE) ? c < 0 : c > 0;
		}
		return k->rowop == GBT_COND_LE || k->rowop == GBT_COND_GE;
	}
	if (k->op == GBT_COND_ISNULL)
		return v->isnull;
	if (k->op == GBT_COND_NOTNULL)
		return !v->isnull;
	if (v->isnull)
		return false;
	if (k->op == GBT_COND_EQ && k->arr)
	{
		/* sorted and distinct: a binary search */
		int			lo = 0,
					hi = k->narr;

		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			c = gbt_field_cmp(&k->arr[mid], v);
			if (c == 0)
				return true;
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		return false;
	}
	if (k->value.isnull)
		return false;
	return gbt_cmp_holds(k->op, gbt_field_cmp(v, &k->value));
}

#endif							/* GBTREE_KEYRANGE_H */
