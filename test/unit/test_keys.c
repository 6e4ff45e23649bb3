/*
 * test_keys.c
 *	  Unit tests of key normalization (src/gbtree_keys.h): order
 *	  preservation against the native comparison, exact round trips, and
 *	  PostgreSQL's float rules (-0.0 == 0.0, NaN above +Infinity, all NaNs
 *	  equal); and of multi-word keys (src/gbtree_keyshape.h): several
 *	  columns with NULLs, DESC and NULLS FIRST, uuids, compared word by
 *	  word against a column-by-column reference, round trips, and the
 *	  ranges of column prefixes; and the ranges a multi-column scan's
 *	  conditions become (src/gbtree_keyrange.h), against every row of
 *	  small columns; and the radix sort of multi-word entries
 *	  (src/gbtree_wsort.h) against a comparison sort.  Exits non-zero on
 *	  failure.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#include "gbtree_keys.h"
#include "gbtree_keyrange.h"
#include "gbtree_wsort.h"

static int	failures = 0;
static long checks = 0;

#define CHECK(cond, ...) \
	do { checks++; if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); if (failures > 20) exit(1); } } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t
xrand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* PostgreSQL's float8 comparison: NaN equal to NaN and above all else */
static int
pg_float_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

static int
u64_cmp(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static double
rand_double(void)
{
	static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN,
		DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN, 4.9e-324, -4.9e-324, 1.0, -1.0, FLT_MAX, -FLT_MAX};
	uint64_t	r = xrand();

	if (r % 4 == 0)
		return special[xrand() % (sizeof(special) / sizeof(special[0]))];
	if (r % 4 == 1)
	{
		uint64_t	bits = xrand();
		double		d;

		memcpy(&d, &bits, sizeof(d));
		return d;				/* any bit pattern, NaN payloads included */
	}
	if (r % 4 == 2)
		return (double) (float) ((double) (int64_t) xrand() / 1e9);
	return ((double) (int64_t) xrand()) / (double) (xrand() | 1);
}

static int64_t
rand_int(void)
{
	static const int64_t special[] = {0, -1, 1, INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1,
		INT32_MIN, INT32_MAX, -32768, 32767};
	uint64_t	r = xrand();

	if (r % 3 == 0)
		return special[xrand() % (sizeof(special) / sizeof(special[0]))];
	if (r % 3 == 1)
		return (int64_t) (xrand() % 2001) - 1000;
	return (int64_t) xrand();
}

/* ---- multi-word keys ---- */

/* the column kinds of the shapes under test */
typedef enum TestKind
{
	TK_INT,						/* int2/int4/int8 by width */
	TK_FLOAT,					/* float4/float8: the double key */
	TK_BOOL,
	TK_UUID,
	TK_TEXT						/* bytes without zeros, up to the field's width */
} TestKind;

typedef struct TestShape
{
	const char *name;
	GbtKeyShape shape;
	TestKind	kind[GBT_MAX_KEY_COLS];
} TestShape;

/* a text value's bytes: often sharing a long prefix, often short */
static int
rand_text(unsigned char *b, int max)
{
	int			len = (int) (xrand() % (max + 1));
	uint64_t	r = xrand();

	if (r % 4 == 0)
		len = (int) (xrand() % 4) % (max + 1);
	for (int i = 0; i < len; i++)
		b[i] = (r % 4 == 1 && i < max - 2) ? 'p' : (unsigned char) (1 + xrand() % 255);
	if (r % 7 == 0)
		for (int i = 0; i < len; i++)
			b[i] = (unsigned char) (i % 3 == 0 ? 0xFF : 1);	/* the extremes */
	return len;
}

/* memcmp, then length: text's order under "C" */
static int
text_cmp(const unsigned char *a, int alen, const unsigned char *b, int blen)
{
	int			m = memcmp(a, b, alen < blen ? alen : blen);

	if (m == 0)
		m = alen - blen;
	return (m > 0) - (m < 0);
}

static void
rand_uuid(unsigned char *b)
{
	uint64_t	r = xrand();

	for (int i = 0; i < 16; i++)
		b[i] = (unsigned char) xrand();
	if (r % 5 == 0)
		memset(b, 0, 16);		/* the least uuid */
	else if (r % 5 == 1)
		memset(b, 0xFF, 16);	/* the greatest */
	else if (r % 5 == 2)
		memset(b, 0x5A, 8 + (int) (xrand() % 8));	/* long common prefix */
}

static void
rand_col(const TestShape *ts, int c, GbtColValue *v)
{
	const GbtColShape *col = &ts->shape.col[c];
	int			nz;

	memset(v->v, 0, sizeof(v->v));
	v->isnull = ts->shape.nullbits && xrand() % 5 == 0;
	if (v->isnull)
		return;
	switch (ts->kind[c])
	{
		case TK_INT:
			{
				int64_t		x = rand_int();

				/* clamp into the column's type, as its values are */
				if (col->bits < 64)
				{
					int64_t		hi = (INT64_C(1) << (col->bits - 1)) - 1;

					x = x > hi ? hi : (x < -hi - 1 ? -hi - 1 : x);
				}
				v->v[0] = gbt_int_field(x, col->bits);
				break;
			}
		case TK_FLOAT:
			v->v[0] = gbt_key_from_double(rand_double(), &nz);
			break;
		case TK_BOOL:
			v->v[0] = xrand() & 1;
			break;
		case TK_UUID:
			{
				unsigned char b[16];

				rand_uuid(b);
				gbt_uuid_field(b, v);
				break;
			}
		case TK_TEXT:
			{
				unsigned char b[32];
				int			len = rand_text(b, col->bits / 8);

				gbt_bytes_field(b, len, col->bits / 8, v);
				break;
			}
	}
}

/* column by column, as btree compares index tuples */
static int
ref_cmp(const TestShape *ts, const GbtColValue *a, const GbtColValue *b, int ncols)
{
	for (int c = 0; c < ncols; c++)
	{
		const GbtColShape *col = &ts->shape.col[c];
		int			r;

		if (a[c].isnull || b[c].isnull)
		{
			if (a[c].isnull && b[c].isnull)
				continue;
			r = a[c].isnull ? 1 : -1;
			return col->nulls_first ? -r : r;
		}
		if (ts->kind[c] == TK_TEXT)
		{
			unsigned char ab[32],
						bb[32];
			int			al = gbt_bytes_from_field(&a[c], col->bits / 8, ab),
						bl = gbt_bytes_from_field(&b[c], col->bits / 8, bb);

			r = text_cmp(ab, al, bb, bl);
		}
		else
		{
			r = 0;
			for (int k = 0; k < GBT_FIELD_WORDS && r == 0; k++)
				r = u64_cmp(a[c].v[k], b[c].v[k]);
		}
		if (r != 0)
			return col->desc ? -r : r;
	}
	return 0;
}

static void
test_shape(TestShape *ts)
{
	GbtKeyShape *sh = &ts->shape;
	GbtColValue a[GBT_MAX_KEY_COLS],
				b[GBT_MAX_KEY_COLS],
				back[GBT_MAX_KEY_COLS];
	uint64_t	wa[GBT_MAX_KEY_WORDS],
				wb[GBT_MAX_KEY_WORDS],
				lo[GBT_MAX_KEY_WORDS],
				hi[GBT_MAX_KEY_WORDS];

	CHECK(gbt_shape_init(sh), "%s: shape fits", ts->name);
	for (int i = 0; i < 300000; i++)
	{
		int			k = (int) (xrand() % (sh->ncols + 1));

		for (int c = 0; c < sh->ncols; c++)
			rand_col(ts, c, &a[c]);
		/* b shares a random prefix of a's columns, often all of them */
		for (int c = 0; c < sh->ncols; c++)
		{
			if (c < k)
				b[c] = a[c];
			else
				rand_col(ts, c, &b[c]);
		}
		gbt_shape_encode(sh, a, wa);
		gbt_shape_encode(sh, b, wb);
		CHECK(gbt_words_cmp(wa, wb, sh->nwords) == ref_cmp(ts, a, b, sh->ncols),
			  "%s: order (prefix %d)", ts->name, k);
		/* the padding bits stay zero */
		if (sh->nbits % 64)
			CHECK((wa[sh->nwords - 1] & gbt_field_mask(64 - sh->nbits % 64)) == 0,
				  "%s: padding", ts->name);
		gbt_shape_decode(sh, wa, back);
		for (int c = 0; c < sh->ncols; c++)
			CHECK(back[c].isnull == a[c].isnull &&
				  memcmp(back[c].v, a[c].v, sizeof(a[c].v)) == 0,
				  "%s: round trip of column %d", ts->name, c);
		/* a's prefix of k columns bounds b exactly when b shares it */
		gbt_shape_prefix_bound(sh, a, k, false, lo);
		gbt_shape_prefix_bound(sh, a, k, true, hi);
		{
			bool		inside = gbt_words_cmp(lo, wb, sh->nwords) <= 0 &&
				gbt_words_cmp(wb, hi, sh->nwords) <= 0;

			CHECK(inside, "%s: prefix %d bounds a key sharing it", ts->name, k);
			for (int c = 0; c < sh->ncols; c++)
				rand_col(ts, c, &b[c]);
			gbt_shape_encode(sh, b, wb);
			inside = gbt_words_cmp(lo, wb, sh->nwords) <= 0 &&
				gbt_words_cmp(wb, hi, sh->nwords) <= 0;
			CHECK(inside == (ref_cmp(ts, a, b, k) == 0),
				  "%s: prefix %d bounds only keys sharing it", ts->name, k);
		}
	}
}

static void
test_keyshapes(void)
{
	TestShape	shapes[] = {
		{"(int4, timestamptz)", {.ncols = 2,.nullbits = true,
		.col = {{32, false, false}, {64, false, false}}}, {TK_INT, TK_INT}},
		{"uuid alone", {.ncols = 1,.nullbits = false,.col = {{128, false, false}}}, {TK_UUID}},
		{"uuid DESC alone", {.ncols = 1,.nullbits = false,.col = {{128, true, true}}}, {TK_UUID}},
		{"(int2 DESC NULLS FIRST, float8, bool, uuid NULLS FIRST)", {.ncols = 4,.nullbits = true,
			.col = {{16, true, true}, {64, false, false}, {1, false, false}, {128, false, true}}},
		{TK_INT, TK_FLOAT, TK_BOOL, TK_UUID}},
		{"(float8 DESC, int8 DESC NULLS LAST, int4)", {.ncols = 3,.nullbits = true,
			.col = {{64, true, true}, {64, true, false}, {32, false, false}}},
		{TK_FLOAT, TK_INT, TK_INT}},
		{"16 bool columns", {.ncols = 16,.nullbits = true,
			.col = {{1}, {1, true}, {1}, {1, false, true}, {1}, {1}, {1}, {1},
		{1}, {1}, {1}, {1}, {1}, {1}, {1}, {1, true, true}}},
		{TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL,
		TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL, TK_BOOL}},
		{"text alone (32 bytes)", {.ncols = 1,.nullbits = false,.col = {{256, false, false}}},
		{TK_TEXT}},
		{"text DESC alone", {.ncols = 1,.nullbits = false,.col = {{256, true, false}}},
		{TK_TEXT}},
		{"(int4, text of 27 bytes)", {.ncols = 2,.nullbits = true,
		.col = {{32, false, false}, {216, false, true}}}, {TK_INT, TK_TEXT}},
		{"(text of 13 bytes DESC, bool, text of 13 bytes)", {.ncols = 3,.nullbits = true,
		.col = {{104, true, false}, {1, false, false}, {104, false, false}}},
		{TK_TEXT, TK_BOOL, TK_TEXT}},
	};

	for (int i = 0; i < (int) (sizeof(shapes) / sizeof(shapes[0])); i++)
		test_shape(&shapes[i]);

	/* widths: (int4, timestamptz) takes two words, a uuid two, too wide refused */
	CHECK(shapes[0].shape.nwords == 2 && shapes[0].shape.nbits == 98, "(int4, timestamptz) words");
	CHECK(shapes[1].shape.nwords == 2, "uuid words");
	{
		GbtKeyShape wide = {.ncols = 2,.nullbits = true,.col = {{128}, {128}}};
		GbtKeyShape bad = {.ncols = 1,.col = {{65}}};

		CHECK(!gbt_shape_init(&wide), "two nullable uuids do not fit 256 bits");
		CHECK(!gbt_shape_init(&bad), "a 65-bit field is refused");
	}
	/* text fields: bytes round-trip; step and max stay inside the field */
	for (int i = 0; i < 200000; i++)
	{
		int			nbytes = 1 + (int) (xrand() % 32);
		GbtColShape col = {(uint16_t) (8 * nbytes), false, false};
		unsigned char x[32],
					back[32];
		int			len = rand_text(x, nbytes);
		GbtColValue v,
					w,
					max;

		gbt_bytes_field(x, len, nbytes, &v);
		CHECK(gbt_bytes_from_field(&v, nbytes, back) == len && memcmp(x, back, len) == 0,
			  "text round trip (%d of %d bytes)", len, nbytes);
		gbt_field_max(&col, &max);
		w = v;
		if (gbt_field_step(&col, &w, 1))
		{
			CHECK(gbt_field_cmp(&v, &w) < 0 && gbt_field_cmp(&w, &max) <= 0, "text step up");
			CHECK(gbt_field_step(&col, &w, -1) && gbt_field_cmp(&v, &w) == 0,
				  "text step back");
		}
		else
			CHECK(gbt_field_cmp(&v, &max) == 0, "text step up fails only at the max");
		for (int k = 0; k < GBT_FIELD_WORDS; k++)
		{
			int			n = 8 * nbytes - 64 * k;

			if (nbytes <= 8)	/* a narrow field: v[0]'s low bits */
				CHECK(max.v[k] == (k == 0 ? gbt_field_mask(8 * nbytes) : 0),
					  "narrow text max");
			else
				CHECK(n >= 64 || (max.v[k] & gbt_field_mask(n <= 0 ? 64 : 64 - n)) == 0,
					  "text max has no bits past the field");
		}
	}
	/* int fields of every width round-trip and keep order */
	for (int bits = 2; bits <= 64; bits++)
		for (int i = 0; i < 20000; i++)
		{
			int64_t		hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
			int64_t		x = rand_int(),
						y = rand_int();

			x = x > hi ? hi : (x < -hi - 1 ? -hi - 1 : x);
			y = y > hi ? hi : (y < -hi - 1 ? -hi - 1 : y);
			CHECK(gbt_int_from_field(gbt_int_field(x, bits), bits) == x, "int field round trip");
			CHECK(u64_cmp(gbt_int_field(x, bits), gbt_int_field(y, bits)) == ((x > y) - (x < y)),
				  "int field order, %d bits", bits);
		}
	/* uuid bytes round-trip, and memcmp order is the fields' order */
	for (int i = 0; i < 200000; i++)
	{
		unsigned char x[16],
					y[16],
					back[16];
		GbtColValue vx,
					vy;
		int			m,
					f;

		rand_uuid(x);
		rand_uuid(y);
		gbt_uuid_field(x, &vx);
		gbt_uuid_field(y, &vy);
		gbt_uuid_from_field(&vx, back);
		CHECK(memcmp(x, back, 16) == 0, "uuid round trip");
		m = memcmp(x, y, 16);
		m = (m > 0) - (m < 0);
		f = u64_cmp(vx.v[0], vy.v[0]);
		if (f == 0)
			f = u64_cmp(vx.v[1], vy.v[1]);
		CHECK(f == m, "uuid order");
	}
}

/* ---- multi-column conditions as key ranges ---- */

#define KR_COLS		3

/* a column's small domain: 3-bit values, or a few 128-bit extremes */
static int
kr_domain(const GbtColShape *col, GbtColValue *dom)
{
	if (col->bits == 128)
	{
		static const uint64_t d[][2] = {{0, 0}, {0, 1}, {0, UINT64_MAX}, {1, 0},
		{UINT64_MAX, UINT64_MAX - 1}, {UINT64_MAX, UINT64_MAX}};

		for (int i = 0; i < 6; i++)
		{
			dom[i].v[0] = d[i][0];
			dom[i].v[1] = d[i][1];
			dom[i].isnull = false;
		}
		return 6;
	}
	for (int i = 0; i < 8; i++)
	{
		dom[i].v[0] = (uint64_t) i;
		dom[i].v[1] = 0;
		dom[i].isnull = false;
	}
	return 8;
}

/* SQL's answer for one row: a comparison with NULL is not true */
static bool
kr_holds(const GbtColCond *k, const GbtColValue *row)
{
	const GbtColValue *v = &row[k->col];
	int			c;

	if (k->op == GBT_COND_ROW)
	{
		/* member by member; a NULL before the deciding one: unknown */
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
		for (int i = 0; i < k->narr; i++)
			if (!k->arr[i].isnull && gbt_field_cmp(v, &k->arr[i]) == 0)
				return true;
		return false;
	}
	if (k->value.isnull)
		return false;
	c = gbt_field_cmp(v, &k->value);
	switch (k->op)
	{
		case GBT_COND_LT:
			return c < 0;
		case GBT_COND_LE:
			return c <= 0;
		case GBT_COND_EQ:
			return c == 0;
		case GBT_COND_GE:
			return c >= 0;
		default:
			return c > 0;
	}
}

/* how far the ranges reach, on fixed cases: pinned columns, then one bound */
#define KC(c, o, x) {.col = (c),.op = (o),.value = {.v = {(x), 0}}}

static void
test_key_range_cases(void)
{
	GbtKeyShape sh = {.ncols = 3,.nullbits = true,.col = {{32}, {64}, {32}}};
	GbtColValue arr[3] = {{.v = {1, 0}}, {.v = {2, 0}}, {.v = {3, 0}}};
	GbtWordRange r[16];
	GbtColFold	fold[3];
	int			nreq;
	struct
	{
		const char *name;
		GbtColCond	c[2];
		int			n;
		int			nranges;
		int			nreq;
	}			cases[] = {
		{"a = 1 and b > 2", {KC(0, GBT_COND_EQ, 1), KC(1, GBT_COND_GT, 2)}, 2, 1, 2},
		{"a = any(1,2,3) and b = 5", {{.col = 0,.op = GBT_COND_EQ,.arr = arr,.narr = 3},
		KC(1, GBT_COND_EQ, 5)}, 2, 3, 2},
		{"b = 5 alone: a filter", {KC(1, GBT_COND_EQ, 5)}, 1, 1, 0},
		{"a is null and b = 3", {KC(0, GBT_COND_ISNULL, 0), KC(1, GBT_COND_EQ, 3)}, 2, 1, 2},
		{"a < 0: nothing", {KC(0, GBT_COND_LT, 0)}, 1, 0, 0},
		{"a = 1 and c = 2: c a filter", {KC(0, GBT_COND_EQ, 1), KC(2, GBT_COND_EQ, 2)}, 2, 1, 1},
		{"a = 1 and a = 2: the second a filter", {KC(0, GBT_COND_EQ, 1), KC(0, GBT_COND_EQ, 2)}, 2, 1, 0},
	};


	CHECK(gbt_shape_init(&sh), "case shape");
	for (int i = 0; i < (int) (sizeof(cases) / sizeof(cases[0])); i++)
	{
		int			n = gbt_key_ranges(&sh, cases[i].c, cases[i].n, fold, r, 16, &nreq);

		CHECK(n == cases[i].nranges && (n == 0 || nreq == cases[i].nreq),
			  "%s: %d ranges, %d required", cases[i].name, n, nreq);
	}
	/* a row comparison at the first column narrows the range to its start */
	{
		GbtColValue rowv[2] = {{.v = {1, 0}}, {.v = {2, 0}}};
		GbtColCond	row = {.col = 0,.op = GBT_COND_ROW,.arr = rowv,.narr = 2,.rowop = GBT_COND_GE};
		uint64_t	want[GBT_MAX_KEY_WORDS];

		gbt_shape_prefix_bound(&sh, rowv, 2, false, want);
		CHECK(gbt_key_ranges(&sh, &row, 1, fold, r, 16, &nreq) == 1 &&
			  gbt_words_cmp(r[0].lo, want, sh.nwords) == 0, "(a, b) >= (1, 2) starts at (1, 2)");
	}
	/* a product beyond the room asks for fewer pinned columns */
	CHECK(gbt_key_ranges(&sh, cases[1].c, 2, fold, r, 2, &nreq) == -1, "product over max");
}

static void
test_key_ranges(void)
{
	test_key_range_cases();
	for (int iter = 0; iter < 4000; iter++)
	{
		GbtKeyShape sh = {.ncols = KR_COLS,.nullbits = true};
		GbtColValue dom[KR_COLS][8];
		int			ndom[KR_COLS];
		GbtColCond	conds[5];
		GbtColValue arrs[5][4];
		int			nconds = (int) (xrand() % 6);
		GbtColValue rows[5][KR_COLS];
		GbtColValue narrs[5][4];
		GbtColCond	norm[5];
		GbtWordRange ranges[512];
		GbtColFold	fold[KR_COLS];
		int			nreq,
					nr,
					nrows = 1;

		for (int c = 0; c < KR_COLS; c++)
		{
			sh.col[c].bits = (iter % 5 == 0 && c == 1) ? 128 : 3;
			sh.col[c].desc = xrand() % 2;
			sh.col[c].nulls_first = xrand() % 2;
			ndom[c] = kr_domain(&sh.col[c], dom[c]);
			nrows *= ndom[c] + 1;
		}
		CHECK(gbt_shape_init(&sh), "range shape");
		for (int i = 0; i < nconds; i++)
		{
			int			c = (int) (xrand() % KR_COLS);
			int			r = (int) (xrand() % 10);

			/* leading columns get equalities more often, as real scans do */
			if (r < 3 && xrand() % 2)
				c = 0;
			conds[i].col = c;
			conds[i].arr = NULL;
			conds[i].narr = 0;
			conds[i].rowop = 0;
			conds[i].value = dom[c][xrand() % ndom[c]];
			if (r < 5)
				conds[i].op = GBT_COND_LT + (int) (xrand() % 5);
			else if (r < 6)
				conds[i].op = GBT_COND_ISNULL;
			else if (r < 7)
				conds[i].op = GBT_COND_NOTNULL;
			else if (r < 8 && xrand() % 2)
				conds[i].op = GBT_COND_EQ;
			else if (r < 8)
			{
				/* a row comparison from column c on */
				static const int rowops[] = {GBT_COND_LT, GBT_COND_LE, GBT_COND_GE, GBT_COND_GT};

				conds[i].op = GBT_COND_ROW;
				conds[i].rowop = rowops[xrand() % 4];
				conds[i].narr = 1 + (int) (xrand() % (KR_COLS - c));
				for (int j = 0; j < conds[i].narr; j++)
				{
					rows[i][j] = dom[c + j][xrand() % ndom[c + j]];
					if (xrand() % 10 == 0)
						rows[i][j].isnull = true;
				}
				conds[i].arr = rows[i];
			}
			else
			{
				/* = ANY: raw elements (NULLs, repeats) for the reference */
				conds[i].op = GBT_COND_EQ;
				conds[i].narr = 1 + (int) (xrand() % 4);
				for (int j = 0; j < conds[i].narr; j++)
				{
					arrs[i][j] = dom[c][xrand() % ndom[c]];
					arrs[i][j].isnull = xrand() % 8 == 0;
				}
				conds[i].arr = arrs[i];
			}
			/* a comparison with a NULL value */
			if (conds[i].op != GBT_COND_ROW && !conds[i].arr && xrand() % 16 == 0)
				conds[i].value.isnull = true;
		}
		/*
		 * What gbt_key_ranges takes: = ANY arrays sorted, distinct, without
		 * NULLs, as scankey.c prepares them; kr_holds reads the raw ones.
		 */
		for (int i = 0; i < nconds; i++)
		{
			norm[i] = conds[i];
			if (conds[i].op == GBT_COND_EQ && conds[i].arr)
			{
				int			m = 0;

				for (int j = 0; j < conds[i].narr; j++)
				{
					int			at = m;

					if (conds[i].arr[j].isnull)
						continue;
					while (at > 0 && gbt_field_cmp(&narrs[i][at - 1], &conds[i].arr[j]) > 0)
						at--;
					if (at > 0 && gbt_field_cmp(&narrs[i][at - 1], &conds[i].arr[j]) == 0)
						continue;
					memmove(&narrs[i][at + 1], &narrs[i][at], sizeof(GbtColValue) * (m - at));
					narrs[i][at] = conds[i].arr[j];
					m++;
				}
				norm[i].arr = narrs[i];
				norm[i].narr = m;
			}
		}
		nr = gbt_key_ranges(&sh, norm, nconds, fold, ranges, 512, &nreq);
		CHECK(nr >= 0, "range product within 512");
		if (nr < 0)
			continue;
		for (int r = 1; r < nr; r++)
			CHECK(gbt_words_cmp(ranges[r - 1].hi, ranges[r].lo, sh.nwords) < 0,
				  "ranges sorted and disjoint");
		/* every row of the columns' domains, NULL included */
		for (int row = 0; row < nrows; row++)
		{
			GbtColValue vals[KR_COLS];
			uint64_t	w[GBT_MAX_KEY_WORDS];
			bool		match = true,
						filt = true,
						in = false;

			for (int c = 0, rest = row; c < KR_COLS; c++)
			{
				int			d = rest % (ndom[c] + 1);

				rest /= ndom[c] + 1;
				if (d == ndom[c])
				{
					memset(&vals[c], 0, sizeof(GbtColValue));
					vals[c].isnull = true;
				}
				else
					vals[c] = dom[c][d];
			}
			for (int i = 0; i < nconds; i++)
			{
				bool		h = kr_holds(&conds[i], vals);

				/* the scans' filter, on the prepared arrays, agrees */
				CHECK(gbt_cond_holds(&norm[i], vals) == h,
					  "iter %d row %d cond %d: gbt_cond_holds", iter, row, i);
				match = match && h;
				if (conds[i].col >= nreq || conds[i].op == GBT_COND_ROW)
					filt = filt && h;
			}
			gbt_shape_encode(&sh, vals, w);
			for (int r = 0; r < nr && !in; r++)
				in = gbt_words_cmp(ranges[r].lo, w, sh.nwords) <= 0 &&
					gbt_words_cmp(w, ranges[r].hi, sh.nwords) <= 0;
			CHECK(match == (in && filt),
				  "iter %d row %d: match %d, in a range %d, filter %d (%d conds, %d required)",
				  iter, row, match, in, filt, nconds, nreq);
		}
	}
}

/* ---- sorting multi-word entries ---- */

static int	qsort_nwords;

static int
wentry_qcmp(const void *a, const void *b)
{
	return gbt_wentry_cmp((const uint64_t *) a, (const uint64_t *) b, qsort_nwords);
}

static void
test_wsort(void)
{
	static const size_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 70000};

	for (int nw = 1; nw <= 4; nw++)
		for (int si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
			for (int pattern = 0; pattern < 3; pattern++)
			{
				size_t		n = sizes[si];
				int			stride = nw + 1;
				uint64_t   *e = malloc(sizeof(uint64_t) * stride * (n + 1));
				uint64_t   *ref = malloc(sizeof(uint64_t) * stride * (n + 1));
				uint64_t   *scratch = malloc(sizeof(uint64_t) * stride * (n + 1));
				size_t	   *hist = malloc(sizeof(size_t) * gbt_wsort_hist_size(nw));
				bool		same = true;

				for (size_t i = 0; i < n; i++)
				{
					uint64_t   *r = &e[i * stride];

					for (int k = 0; k < nw; k++)
					{
						uint64_t	x = xrand();

						/* ties in the leading words; all bytes vary in the last */
						r[k] = (k < nw - 1 && pattern != 2) ? x % 3 : x;
						if (pattern == 1 && k == nw - 1)
							r[k] = x % 5;
					}
					/* unique (block, offset); flags may differ and never decide */
					r[nw] = (pattern == 0 ? (uint64_t) i : (uint64_t) (n - i)) << 16 | (xrand() & 1);
				}
				memcpy(ref, e, sizeof(uint64_t) * stride * n);
				qsort_nwords = nw;
				qsort(ref, n, sizeof(uint64_t) * stride, wentry_qcmp);
				gbt_wsort(e, scratch, n, nw, hist, NULL);
				for (size_t i = 0; i < n * stride && same; i++)
					same = e[i] == ref[i];
				CHECK(same, "wsort: %d words, %zu entries, pattern %d", nw, n, pattern);
				free(e);
				free(ref);
				free(scratch);
				free(hist);
			}
}

int
main(void)
{
	/* integers: order and round trip */
	for (int i = 0; i < 2000000; i++)
	{
		int64_t		a = rand_int(),
					b = rand_int();

		CHECK(u64_cmp(gbt_key_from_int64(a), gbt_key_from_int64(b)) == ((a > b) - (a < b)),
			  "int order %lld %lld", (long long) a, (long long) b);
		CHECK(gbt_key_to_int64(gbt_key_from_int64(a)) == a, "int round trip %lld", (long long) a);
	}
	/* unsigned 32-bit (oid) */
	for (int i = 0; i < 200000; i++)
	{
		uint32_t	a = (uint32_t) xrand(),
					b = (i % 2) ? (uint32_t) xrand() : UINT32_MAX;

		CHECK(u64_cmp(gbt_key_from_uint32(a), gbt_key_from_uint32(b)) == ((a > b) - (a < b)),
			  "oid order");
	}
	/* floats: PostgreSQL order, exact decoding */
	for (int i = 0; i < 2000000; i++)
	{
		double		a = rand_double(),
					b = rand_double();
		int			nza,
					nzb;
		uint64_t	ka = gbt_key_from_double(a, &nza),
					kb = gbt_key_from_double(b, &nzb);
		double		back = gbt_key_to_double(ka, nza);

		CHECK(u64_cmp(ka, kb) == pg_float_cmp(a, b), "float order %g %g", a, b);
		if (isnan(a))
			CHECK(isnan(back) && ka == GBT_NAN_KEY, "NaN round trip");
		else
			CHECK(memcmp(&a, &back, sizeof(double)) == 0, "float round trip %a -> %a", a, back);
		CHECK(nza == (a == 0.0 && signbit(a) ? 1 : 0), "negzero flag");
	}
	/* fixed points of the float order */
	{
		int			nz;

		CHECK(gbt_key_from_double(-0.0, &nz) == gbt_key_from_double(0.0, &nz), "-0 == 0");
		CHECK(gbt_key_from_double(INFINITY, &nz) < GBT_NAN_KEY, "+Inf < NaN");
		CHECK(gbt_key_from_double(-INFINITY, &nz) > 0, "-Inf above key 0");
		CHECK(gbt_key_from_double(NAN, &nz) == gbt_key_from_double(-NAN, &nz), "NaNs equal");
		/* float4 values widen exactly: order across widths holds */
		CHECK(gbt_key_from_double((double) 0.1f, &nz) != gbt_key_from_double(0.1, &nz),
			  "float4 0.1 differs from float8 0.1");
	}
	test_keyshapes();
	test_key_ranges();
	test_wsort();
	printf("test_keys: %ld checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
