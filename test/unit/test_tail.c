/*
 * test_tail.c
 *	  Unit tests of the keys of cut values (src/gbtree_tail.h): for shapes
 *	  with text columns, ASC and DESC, NULLS FIRST and LAST, small fields
 *	  that force cuts and the real ones, random rows are encoded and
 *	  (words, tail) compared, word by word and then by gbt_tail_cmp,
 *	  against a column-by-column model of the rows, over random pairs,
 *	  near neighbours and sorted lists.  Every key is decoded back to its
 *	  row, and its tail cut short, lengthened and garbled must be refused
 *	  or decode to a row with that key.  The bounds of prefixes of 0 to
 *	  ncols columns, most taken from the rows, must put every row below,
 *	  inside or above them as the model compares its first columns.
 *	  Mutants of the encoding and of the bounds must be caught.  Exits
 *	  non-zero on failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gbtree_tail.h"

static int	failures = 0;
static long checks = 0;
static long pairs = 0;

/* pairs whose words tie, by what the tails then decide (M_NONE only) */
enum
{
	TIE_UNCUT,					/* one cut, one not */
	TIE_UNCUT_LATER,			/* the same, the cut not at the last column */
	TIE_CUTS,					/* cut at different columns */
	TIE_SAME_CUT,				/* cut at the same column, tails differ */
	NTIES
};
static long ties[NTIES];
static long all_ties[NTIES];

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

#define MAXC		6
#define MAXT		72			/* longest text */
#define TAILCAP		(MAXC * (MAXT + 18))

typedef enum Kind
{
	K_TEXT,
	K_INT,						/* int2/int4/int8 by width */
	K_BOOL,
	K_UUID
} Kind;

typedef struct Spec
{
	const char *name;
	int			ncols;
	bool		nullbits;
	Kind		kind[MAXC];
	int			bits[MAXC];		/* text: 8 * P */
	bool		desc[MAXC];
	bool		nf[MAXC];		/* NULLS FIRST */
} Spec;

typedef struct Row
{
	/* the values */
	bool		isnull[MAXC];
	int64_t		iv[MAXC];		/* int and bool */
	unsigned char b[MAXC][MAXT];	/* text and uuid */
	int			len[MAXC];
	/* the key */
	int			cut;
	uint64_t	w[GBT_MAX_KEY_WORDS];
	int			tlen;
	unsigned char tail[TAILCAP];
} Row;

/* the mutants of the encoding the checks must catch */
typedef enum Mutant
{
	M_NONE,
	M_NO_FILL,					/* fields after the cut as they are */
	M_END_FF,					/* end byte 0xFF after an ASC cut's rest */
	M_NO_CUT_BYTE,				/* no column byte at the tail's start */
	M_NONE_EMPTY,				/* no tail sorts first, not as {128} */
	M_NO_NULL_BYTE,				/* later columns without their null byte */
	M_NMUTANTS
} Mutant;

static const char *const mutant_name[] = {"none", "no fill after the cut", "end byte 0xFF under ASC",
	"no column byte", "no tail as the empty tail", "no null bytes in the tail"};

static const Spec *cur;			/* for qsort */
static const bool *cur_is_text;	/* check_pair's key parts */
static long keyeqs = 0;			/* pairs of equal keys seen */

/* ---- the model ---- */

static int
sign(int64_t x)
{
	return (x > 0) - (x < 0);
}

static int
text_cmp(const unsigned char *a, int alen, const unsigned char *b, int blen)
{
	int			m = memcmp(a, b, alen < blen ? alen : blen);

	return m != 0 ? sign(m) : sign(alen - blen);
}

/* the first n columns, column by column, as btree compares index tuples */
static int
model_cmp_n(const Spec *s, const Row *a, const Row *b, int n)
{
	for (int c = 0; c < n; c++)
	{
		int			r;

		if (a->isnull[c] || b->isnull[c])
		{
			if (a->isnull[c] && b->isnull[c])
				continue;
			r = a->isnull[c] ? 1 : -1;
			return s->nf[c] ? -r : r;
		}
		if (s->kind[c] == K_TEXT)
			r = text_cmp(a->b[c], a->len[c], b->b[c], b->len[c]);
		else if (s->kind[c] == K_UUID)
			r = sign(memcmp(a->b[c], b->b[c], 16));
		else
			r = (a->iv[c] > b->iv[c]) - (a->iv[c] < b->iv[c]);
		if (r != 0)
			return s->desc[c] ? -r : r;
	}
	return 0;
}

static int
model_cmp(const Spec *s, const Row *a, const Row *b)
{
	return model_cmp_n(s, a, b, s->ncols);
}

/* ---- random rows ---- */

static const unsigned char alphabet[] = {1, 2, 'a', 'b', 127, 128, 129, 254, 255};

static unsigned char
rand_byte(void)
{
	return alphabet[xrand() % sizeof(alphabet)];
}

static int
clamp_len(int n)
{
	return n < 0 ? 0 : n > MAXT ? MAXT : n;
}

/* a length around P, or empty, short or long */
static int
rand_len(int p)
{
	switch (xrand() % 10)
	{
		case 0:
			return 0;
		case 1:
			return (int) (xrand() % (p + 1));
		case 2:
			return clamp_len(p + 1 + (int) (xrand() % 60));
		default:
			return clamp_len(p - 2 + (int) (xrand() % 9));
	}
}

static void
rand_text(Row *r, int c, int p)
{
	uint64_t	x = xrand();

	r->len[c] = rand_len(p);
	for (int i = 0; i < r->len[c]; i++)
		r->b[c][i] = x % 8 == 0 ? 255 : x % 8 == 1 ? 1 : rand_byte();	/* the extremes */
}

/* change a text a little: what makes ties in the words and in tails */
static void
edit_text(Row *r, int c, int p)
{
	unsigned char *b = r->b[c];
	int		   *len = &r->len[c];

	switch (xrand() % 6)
	{
		case 0:					/* cut short */
			*len = *len > 0 ? (int) (xrand() % (*len + 1)) : 0;
			break;
		case 1:					/* longer */
			for (int n = 1 + (int) (xrand() % 8); n > 0 && *len < MAXT; n--)
				b[(*len)++] = rand_byte();
			break;
		case 2:					/* exactly P */
			while (*len < p && *len < MAXT)
				b[(*len)++] = rand_byte();
			*len = p < MAXT ? p : MAXT;
			break;
		case 3:					/* one byte, mostly near or past P */
			if (*len > 0)
			{
				int			i = (int) (xrand() % *len);

				if (xrand() % 2 && *len > p - 1 && p > 0)
					i = p - 1 + (int) (xrand() % (*len - p + 1));
				b[i] = rand_byte();
			}
			break;
		case 4:					/* the last byte to the extremes */
			if (*len > 0)
				b[*len - 1] = xrand() % 2 ? 1 : 255;
			break;
		default:
			rand_text(r, c, p);
	}
}

static void
rand_col(const Spec *s, Row *r, int c)
{
	int			bits = s->bits[c];

	r->isnull[c] = s->nullbits && xrand() % 6 == 0;
	r->iv[c] = 0;
	r->len[c] = 0;
	if (r->isnull[c])
		return;
	switch (s->kind[c])
	{
		case K_TEXT:
			rand_text(r, c, bits / 8);
			break;
		case K_INT:
			{
				int64_t		hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
				int64_t		special[] = {-hi - 1, hi, 0, -1, 1, -hi, hi - 1};

				if (xrand() % 3)
					r->iv[c] = special[xrand() % (sizeof(special) / sizeof(special[0]))];
				else
					r->iv[c] = (int64_t) xrand() >> (64 - bits);
				break;
			}
		case K_BOOL:
			r->iv[c] = (int64_t) (xrand() & 1);
			break;
		case K_UUID:
			{
				unsigned char v = xrand() % 3 == 0 ? 0 : xrand() % 2 ? 0xFF : 0x5A;

				memset(r->b[c], v, 16);
				if (xrand() % 2)
					r->b[c][8 + xrand() % 8] = (unsigned char) xrand();
				break;
			}
	}
}

/* a fresh row, or a near copy of one in the pool */
static void
rand_row(const Spec *s, Row *r, Row **pool, int npool)
{
	if (npool > 0 && xrand() % 4 != 0)
	{
		int			nedits = 1 + (int) (xrand() % 2);

		*r = *pool[xrand() % npool];
		for (int e = 0; e < nedits; e++)
		{
			int			c = (int) (xrand() % s->ncols);

			if (s->kind[c] == K_TEXT && !r->isnull[c] && xrand() % 4 != 0)
				edit_text(r, c, s->bits[c] / 8);
			else
				rand_col(s, r, c);
		}
	}
	else
		for (int c = 0; c < s->ncols; c++)
			rand_col(s, r, c);
}

/* ---- the encoding under test ---- */

static void
shape_of(const Spec *s, GbtKeyShape *sh, bool *is_text)
{
	memset(sh, 0, sizeof(*sh));
	sh->ncols = s->ncols;
	sh->nullbits = s->nullbits;
	for (int c = 0; c < s->ncols; c++)
	{
		sh->col[c].bits = (uint16_t) s->bits[c];
		sh->col[c].desc = s->desc[c];
		sh->col[c].nulls_first = s->nf[c];
		is_text[c] = s->kind[c] == K_TEXT;
	}
}

static void
inputs_of(const Spec *s, const Row *r, GbtColInput *in)
{
	memset(in, 0, sizeof(GbtColInput) * GBT_MAX_KEY_COLS);
	for (int c = 0; c < s->ncols; c++)
	{
		GbtColValue *v = &in[c].val;

		memset(&in[c], 0, sizeof(in[c]));
		v->isnull = r->isnull[c];
		if (v->isnull)
			continue;
		switch (s->kind[c])
		{
			case K_TEXT:
				gbt_bytes_field(r->b[c], r->len[c], s->bits[c] / 8, v);
				in[c].bytes = r->b[c];
				in[c].len = r->len[c];
				break;
			case K_INT:
				v->v[0] = gbt_int_field(r->iv[c], s->bits[c]);
				break;
			case K_BOOL:
				v->v[0] = (uint64_t) r->iv[c];
				break;
			case K_UUID:
				gbt_uuid_field(r->b[c], v);
				break;
		}
	}
}

/* the column the model says a row is cut at */
static int
model_cut(const Spec *s, const Row *r)
{
	for (int c = 0; c < s->ncols; c++)
		if (s->kind[c] == K_TEXT && !r->isnull[c] && r->len[c] > s->bits[c] / 8)
			return c;
	return -1;
}

/* ---- decoding ---- */

#define DECCAP		(MAXC * MAXT + TAILCAP)

/*
 * Tails and the decoder's buffer go at the end of heap blocks, so that a
 * read past tlen or a write past cap is out of bounds under
 * -fsanitize=address.
 */
static unsigned char *tail_arena;
static unsigned char *buf_arena;

static long decoded,
			dec_truncated,
			dec_garbled,
			dec_garbled_ok;

static int
decode_at_end(const GbtKeyShape *sh, const bool *is_text, const uint64_t *w,
			  const unsigned char *tail, int tlen, GbtColInput *out, int cap)
{
	unsigned char *t = tail_arena + TAILCAP + 8 - tlen;

	memcpy(t, tail, tlen);
	return gbt_shape_decode_cut(sh, is_text, w, t, tlen, out, buf_arena + DECCAP - cap, cap);
}

/* the columns of two inputs equal: NULLs, field words, a text's bytes */
static bool
same_inputs(const Spec *s, const GbtColInput *a, const GbtColInput *b)
{
	for (int c = 0; c < s->ncols; c++)
	{
		if (a[c].val.isnull != b[c].val.isnull)
			return false;
		if (a[c].val.isnull)
			continue;
		if (memcmp(a[c].val.v, b[c].val.v, sizeof(a[c].val.v)) != 0)
			return false;
		if (s->kind[c] == K_TEXT &&
			(a[c].len != b[c].len || memcmp(a[c].bytes, b[c].bytes, a[c].len) != 0))
			return false;
	}
	return true;
}

/* a byte a garbled tail may hold: the ones the encoding gives meaning to, or any */
static unsigned char
garble_byte(const Spec *s)
{
	switch (xrand() % 6)
	{
		case 0:
			return 0;
		case 1:
			return 0xFF;
		case 2:
			return (unsigned char) (xrand() % 2);
		case 3:
			return (unsigned char) (xrand() % 2 ? xrand() % s->ncols : 255 - xrand() % s->ncols);
		case 4:
			return 128;
		default:
			return (unsigned char) xrand();
	}
}

/*
 * decode(encode(r)) must give r back, with exactly the bytes it needs;
 * its tail cut short or longer must be refused, and one garbled must be
 * refused or decode to a value that encodes to it.
 */
static void
check_decode(const Spec *s, const GbtKeyShape *sh, const bool *is_text, const Row *r,
			 const GbtColInput *in)
{
	GbtColInput out[GBT_MAX_KEY_COLS];
	unsigned char t[TAILCAP];
	uint64_t	w2[GBT_MAX_KEY_WORDS];
	unsigned char t2[TAILCAP];
	int			need = 0,
				got;

	for (int c = 0; c < s->ncols; c++)
		if (s->kind[c] == K_TEXT && !r->isnull[c])
			need += r->len[c];
	got = decode_at_end(sh, is_text, r->w, r->tail, r->tlen, out, need);
	decoded++;
	CHECK(got == need && same_inputs(s, in, out), "%s: decode gives %d of %d bytes, %s",
		  s->name, got, need, got >= 0 && !same_inputs(s, in, out) ? "another value" : "");
	if (need > 0)
		CHECK(decode_at_end(sh, is_text, r->w, r->tail, r->tlen, out, need - 1) == -1,
			  "%s: decode into too small a buffer", s->name);

	/* a tail cut short or one byte longer is not a tail */
	for (int len = 1; len < r->tlen; len++, dec_truncated++)
		CHECK(decode_at_end(sh, is_text, r->w, r->tail, len, out, DECCAP) == -1,
			  "%s: tail cut to %d of %d decoded", s->name, len, r->tlen);
	if (r->tlen > 0 && r->tlen < TAILCAP)
	{
		memcpy(t, r->tail, r->tlen);
		t[r->tlen] = garble_byte(s);
		CHECK(decode_at_end(sh, is_text, r->w, t, r->tlen + 1, out, DECCAP) == -1,
			  "%s: tail with a byte more decoded", s->name);
	}

	for (int k = 0; k < 4; k++)
	{
		int			tlen;

		if (r->tlen > 0 && k < 3)
		{
			/* a byte or a few changed, the length sometimes too */
			tlen = r->tlen;
			memcpy(t, r->tail, tlen);
			for (int e = 1 + (int) (xrand() % 3); e > 0; e--)
				t[xrand() % tlen] = garble_byte(s);
			if (xrand() % 4 == 0)
				tlen = 1 + (int) (xrand() % tlen);
		}
		else
		{
			/* any bytes */
			tlen = 1 + (int) (xrand() % 24);
			for (int i = 0; i < tlen; i++)
				t[i] = garble_byte(s);
		}
		got = decode_at_end(sh, is_text, r->w, t, tlen, out, DECCAP);
		dec_garbled++;
		if (got < 0)
			continue;
		dec_garbled_ok++;
		CHECK(gbt_shape_encode_cut(sh, is_text, out, w2, t2, TAILCAP) == tlen &&
			  memcmp(t2, t, tlen) == 0 && memcmp(w2, r->w, 8 * sh->nwords) == 0,
			  "%s: a garbled tail decodes to a value of another key", s->name);
	}
}

/* encode r, checking what can be checked of one key alone */
static void
encode(const Spec *s, const GbtKeyShape *sh, const bool *is_text, Row *r, Mutant m)
{
	GbtColInput in[GBT_MAX_KEY_COLS];
	GbtColValue vals[GBT_MAX_KEY_COLS];
	uint64_t	plain[GBT_MAX_KEY_WORDS],
				w2[GBT_MAX_KEY_WORDS];
	unsigned char t2[TAILCAP];
	int			c = model_cut(s, r);

	inputs_of(s, r, in);
	memset(vals, 0, sizeof(vals));
	for (int d = 0; d < s->ncols; d++)
		vals[d] = in[d].val;
	r->cut = c;
	r->tlen = gbt_shape_encode_cut(sh, is_text, in, r->w, r->tail, TAILCAP);
	gbt_shape_encode(sh, vals, plain);

	if (m == M_NONE)
	{
		int64_t		need = gbt_tail_bytes_needed(sh, is_text, in);
		uint64_t	pad[GBT_MAX_KEY_WORDS];

		CHECK(gbt_cut_column(sh, is_text, in) == c, "%s: cut column", s->name);
		CHECK((r->tlen > 0) == (c >= 0), "%s: a tail exactly when cut (%d, cut %d)",
			  s->name, r->tlen, c);
		CHECK(need == r->tlen, "%s: bytes needed %ld, tail %d", s->name, (long) need, r->tlen);
		memcpy(pad, r->w, sizeof(pad));
		gbt_words_clear_after(pad, sh->nwords, sh->nbits);
		CHECK(memcmp(pad, r->w, 8 * sh->nwords) == 0, "%s: padding zero", s->name);
		if (c < 0)
			CHECK(memcmp(plain, r->w, 8 * sh->nwords) == 0, "%s: uncut words", s->name);
		else
		{
			CHECK(r->tail[0] == (s->desc[c] ? c : 255 - c), "%s: column byte", s->name);
			/* the words up to the cut field, then all ones or zeros */
			CHECK(r->tlen > 0 && gbt_shape_encode_cut(sh, is_text, in, w2, t2, r->tlen - 1) == -1,
				  "%s: capacity refused", s->name);
			CHECK(memcmp(w2, r->w, 8 * sh->nwords) == 0, "%s: words without the tail", s->name);
			CHECK(gbt_shape_encode_cut(sh, is_text, in, w2, t2, r->tlen) == r->tlen &&
				  memcmp(t2, r->tail, r->tlen) == 0, "%s: exact capacity", s->name);
		}
		check_decode(s, sh, is_text, r, in);
		return;
	}

	if (c < 0)
		return;
	switch (m)
	{
		case M_NO_FILL:
			memcpy(r->w, plain, sizeof(plain));
			break;
		case M_END_FF:
			if (!s->desc[c])
				r->tail[1 + r->len[c] - s->bits[c] / 8] = 0xFF;
			break;
		case M_NO_CUT_BYTE:
			memmove(r->tail, r->tail + 1, --r->tlen);
			break;
		case M_NO_NULL_BYTE:
			if (s->nullbits)
			{
				/* the later columns again, without their null byte */
				GbtKeyShape nsh = *sh;
				int64_t		n = 1 + (r->len[c] - s->bits[c] / 8) + 1;

				nsh.nullbits = false;
				for (int d = c + 1; d < s->ncols; d++)
					n = gbt_tail_later(&nsh, is_text, in, d, r->tail, n);
				r->tlen = (int) n;
			}
			break;
		default:
			break;
	}
}

static int
key_cmp(const GbtKeyShape *sh, const Row *a, const Row *b, Mutant m)
{
	int			r = gbt_words_cmp(a->w, b->w, sh->nwords);

	if (r != 0)
		return r;
	if (m == M_NONE_EMPTY && (a->tlen == 0 || b->tlen == 0))
		return (a->tlen > 0) - (b->tlen > 0);
	return gbt_tail_cmp(a->tail, a->tlen, b->tail, b->tlen);
}

static int
row_model_qsort(const void *x, const void *y)
{
	return model_cmp(cur, *(Row *const *) x, *(Row *const *) y);
}

static void
print_row(const Spec *s, const Row *r)
{
	fprintf(stderr, "  (");
	for (int c = 0; c < s->ncols; c++)
	{
		fprintf(stderr, c ? ", " : "");
		if (r->isnull[c])
			fprintf(stderr, "NULL");
		else if (s->kind[c] == K_TEXT)
		{
			fprintf(stderr, "'");
			for (int i = 0; i < r->len[c]; i++)
				fprintf(stderr, "%s%02x", i ? " " : "", r->b[c][i]);
			fprintf(stderr, "'[%d]", r->len[c]);
		}
		else if (s->kind[c] == K_UUID)
			fprintf(stderr, "uuid %02x..%02x", r->b[c][0], r->b[c][15]);
		else
			fprintf(stderr, "%lld", (long long) r->iv[c]);
	}
	fprintf(stderr, ") cut %d words", r->cut);
	for (int k = 0; k < GBT_MAX_KEY_WORDS; k++)
		fprintf(stderr, " %016llx", (unsigned long long) r->w[k]);
	fprintf(stderr, " tail[%d]", r->tlen);
	for (int i = 0; i < r->tlen; i++)
		fprintf(stderr, " %02x", r->tail[i]);
	fputc('\n', stderr);
}

/* one pair: returns 1 on a mismatch, reported unless under a mutant */
static int
check_pair(const Spec *s, const GbtKeyShape *sh, const Row *a, const Row *b, Mutant m)
{
	int			want = model_cmp(s, a, b),
				got = key_cmp(sh, a, b, m);

	pairs++;
	if (m != M_NONE)
		return sign(got) != want;
	if (gbt_words_cmp(a->w, b->w, sh->nwords) == 0 && got != 0)
	{
		if ((a->cut < 0) != (b->cut < 0))
		{
			ties[TIE_UNCUT]++;
			if ((a->cut < 0 ? b->cut : a->cut) < s->ncols - 1)
				ties[TIE_UNCUT_LATER]++;
		}
		else if (a->cut != b->cut)
			ties[TIE_CUTS]++;
		else
			ties[TIE_SAME_CUT]++;
	}
	CHECK(sign(got) == want, "%s: model %d, keys %d", s->name, want, got);
	if (sign(got) != want)
	{
		print_row(s, a);
		print_row(s, b);
		return 1;
	}
	/*
	 * A unique index's equality over its first nkey columns: the words'
	 * bits of those columns and the tails' key parts (gbt_tail_key_len).
	 */
	{
		int			nkey = 1 + (int) (pairs % s->ncols);
		int			keybits = 0;
		int			la,
					lb;
		bool		eq;

		for (int c = 0; c < nkey; c++)
			keybits += sh->col[c].bits + (sh->nullbits ? 1 : 0);
		la = gbt_tail_key_len(sh, cur_is_text, a->tail, a->tlen, nkey);
		lb = gbt_tail_key_len(sh, cur_is_text, b->tail, b->tlen, nkey);
		CHECK(la >= 0 && lb >= 0 && la <= a->tlen && lb <= b->tlen, "%s: key parts %d, %d",
			  s->name, la, lb);
		eq = gbt_words_prefix_cmp(a->w, b->w, keybits) == 0 && la == lb &&
			memcmp(a->tail, b->tail, la) == 0;
		keyeqs += eq;
		CHECK(eq == (model_cmp_n(s, a, b, nkey) == 0), "%s: %d key columns: model %s, keys %s",
			  s->name, nkey, model_cmp_n(s, a, b, nkey) == 0 ? "equal" : "differ",
			  eq ? "equal" : "differ");
	}
	return 0;
}

/*
 * n rows of shape s: sorted by the model, the keys must not decrease and
 * must increase exactly where the model does; then all pairs of some,
 * near neighbours in the sorted list and random pairs.  Returns the
 * mismatches.
 */
static long
test_spec(const Spec *s, int n, long npairs, Mutant m)
{
	GbtKeyShape sh;
	bool		is_text[GBT_MAX_KEY_COLS] = {0};
	Row		   *rows = malloc(sizeof(Row) * n);
	Row		  **sorted = malloc(sizeof(Row *) * n);
	long		bad = 0;
	int			ncut = 0;
	int			nall = n < 700 ? n : 700;

	shape_of(s, &sh, is_text);
	cur_is_text = is_text;
	CHECK(gbt_shape_init(&sh) && sh.nbits <= GBT_MAX_KEY_WORDS * 64, "%s: shape fits", s->name);
	for (int i = 0; i < n; i++)
	{
		rand_row(s, &rows[i], sorted, i);
		sorted[i] = &rows[i];
		encode(s, &sh, is_text, &rows[i], m);
		ncut += rows[i].cut >= 0;
	}
	if (m == M_NONE)
		CHECK(ncut > n / 10 && ncut < n - n / 10, "%s: %d of %d rows cut", s->name, ncut, n);
	memset(ties, 0, sizeof(ties));

	cur = s;
	qsort(sorted, n, sizeof(Row *), row_model_qsort);
	for (int i = 0; i + 1 < n; i++)
		bad += check_pair(s, &sh, sorted[i], sorted[i + 1], m);

	for (int i = 0; i < nall; i++)
		for (int j = 0; j < nall; j++)
			bad += check_pair(s, &sh, &rows[i], &rows[j], m);

	for (long k = 0; k < npairs; k++)
	{
		int			i = (int) (xrand() % n);
		int			j = xrand() % 2 ? (int) (xrand() % n) : i + 1 + (int) (xrand() % 16);

		if (j >= n)
			j = n - 1;
		bad += check_pair(s, &sh, sorted[i], sorted[j], m);
	}
	if (m == M_NONE)
	{
		CHECK(ties[TIE_SAME_CUT] > 0, "%s: no cut values tie in the words", s->name);
		printf("  %-60s %5d of %d cut; ties: uncut %ld (later fields %ld), cuts %ld, same cut %ld\n",
			   s->name, ncut, n, ties[TIE_UNCUT], ties[TIE_UNCUT_LATER], ties[TIE_CUTS],
			   ties[TIE_SAME_CUT]);
		for (int k = 0; k < NTIES; k++)
			all_ties[k] += ties[k];
	}
	free(rows);
	free(sorted);
	return bad;
}

/* ---- the bounds of a prefix ---- */

/* the mutants of the bounds the checks must catch */
typedef enum BoundMutant
{
	B_NONE,
	B_LOWER_ZERO,				/* uncut prefix: lower tail {0x00} */
	B_LOWER_128,				/* uncut prefix: lower tail {128}, no tail */
	B_UPPER_INF,				/* uncut prefix: upper tail +infinity */
	B_UPPER_PADDING,			/* uncut prefix: upper words with the padding set */
	B_UPPER_CLOSED,				/* upper tail taken as bytes, not + infinity */
	B_NMUTANTS
} BoundMutant;

static const char *const bound_mutant_name[] = {"none", "lower tail {0x00}",
	"lower tail {128}", "upper tail +infinity", "upper words padded with ones",
"upper bound closed"};

static long bound_pairs;

/* r's key, without encode's checks */
static void
encode_plain(const Spec *s, const GbtKeyShape *sh, const bool *is_text, Row *r)
{
	GbtColInput in[GBT_MAX_KEY_COLS];

	inputs_of(s, r, in);
	r->cut = model_cut(s, r);
	r->tlen = gbt_shape_encode_cut(sh, is_text, in, r->w, r->tail, TAILCAP);
}

/*
 * nprefix prefixes of shape s, of 0 to ncols columns, taken mostly from
 * rows of the pool (so that they match some and tie with others in the
 * words), against all n rows: the model's comparison of a row's first m
 * columns with the prefix must be what the row's key says against the
 * bounds, < lower, in [lower, upper] or > upper.  That is every condition
 * a scan makes of the prefix: x >= p from lower, x > p after upper, x <=
 * p up to upper, x < p before lower.  Returns the rows on the wrong side.
 */
static long
test_bounds(const Spec *s, int n, int nprefix, BoundMutant bm)
{
	GbtKeyShape sh;
	bool		is_text[GBT_MAX_KEY_COLS] = {0};
	Row		   *rows = malloc(sizeof(Row) * n);
	Row		  **pool = malloc(sizeof(Row *) * n);
	long		bad = 0,
				match = 0,
				tied_in = 0,
				tied_out = 0;
	int			ncutpre = 0,
				nnullpre = 0;

	shape_of(s, &sh, is_text);
	CHECK(gbt_shape_init(&sh), "%s: shape fits", s->name);
	for (int i = 0; i < n; i++)
	{
		rand_row(s, &rows[i], pool, i);
		pool[i] = &rows[i];
		encode_plain(s, &sh, is_text, &rows[i]);
	}

	for (int k = 0; k < nprefix; k++)
	{
		Row			p;
		GbtColInput in[GBT_MAX_KEY_COLS];
		uint64_t	lo[GBT_MAX_KEY_WORDS],
					hi[GBT_MAX_KEY_WORDS],
					w2[GBT_MAX_KEY_WORDS];
		unsigned char lt[TAILCAP],
					ht[TAILCAP],
					t2[TAILCAP];
		/* no columns at all now and then: every row matches */
		int			m = xrand() % 16 == 0 ? 0 : 1 + (int) (xrand() % s->ncols);
		int			llen,
					hlen,
					cut;
		GbtTailBound hb;

		switch (xrand() % 8)
		{
			case 0:
				rand_row(s, &p, pool, 0);
				break;
			case 1:
			case 2:
				rand_row(s, &p, pool, n);
				break;
			default:
				p = rows[xrand() % n];
		}
		encode_plain(s, &sh, is_text, &p);	/* for print_row */
		inputs_of(s, &p, in);
		/* the columns after the prefix must not be read */
		for (int d = m; d < s->ncols; d++)
		{
			memset(in[d].val.v, 0xA5, sizeof(in[d].val.v));
			in[d].val.isnull = false;
			in[d].bytes = NULL;
			in[d].len = 1 << 30;
		}
		cut = gbt_cut_column_of(&sh, is_text, in, m);
		CHECK(cut == (model_cut(s, &p) < m ? model_cut(s, &p) : -1), "%s: prefix cut", s->name);
		ncutpre += cut >= 0;
		for (int d = 0; d < m; d++)
			if (p.isnull[d])
			{
				nnullpre++;
				break;
			}

		llen = gbt_shape_prefix_lower_cut(&sh, is_text, in, m, lo, lt, TAILCAP);
		hlen = gbt_shape_prefix_upper_cut(&sh, is_text, in, m, hi, ht, TAILCAP);
		if (bm == B_NONE)
		{
			CHECK(llen > 0 && hlen > 0, "%s: bound tails %d, %d", s->name, llen, hlen);
			CHECK(gbt_shape_prefix_lower_cut(&sh, is_text, in, m, w2, t2, llen - 1) == -1 &&
				  memcmp(w2, lo, 8 * sh.nwords) == 0, "%s: lower past cap", s->name);
			CHECK(gbt_shape_prefix_upper_cut(&sh, is_text, in, m, w2, t2, hlen) == hlen &&
				  memcmp(w2, hi, 8 * sh.nwords) == 0 && memcmp(t2, ht, hlen) == 0,
				  "%s: upper at cap", s->name);
		}
		if (cut < 0)
		{
			if (bm == B_LOWER_ZERO || bm == B_LOWER_128)
				lt[0] = bm == B_LOWER_ZERO ? 0 : 128;
			else if (bm == B_UPPER_INF)
				hlen = 0;
			else if (bm == B_UPPER_PADDING)
			{
				GbtColValue vals[GBT_MAX_KEY_COLS];

				for (int d = 0; d < m; d++)
					vals[d] = in[d].val;
				gbt_shape_prefix_bound(&sh, vals, m, true, hi);
			}
		}
		hb.data = ht;
		hb.len = hlen;
		hb.upper = bm != B_UPPER_CLOSED;

		for (int i = 0; i < n; i++)
		{
			const Row  *r = &rows[i];
			int			want = model_cmp_n(s, r, &p, m);
			int			cl = gbt_words_cmp(r->w, lo, sh.nwords),
						ch = gbt_words_cmp(r->w, hi, sh.nwords);
			bool		tied = cl == 0 || ch == 0;

			if (cl == 0)
				cl = gbt_tail_cmp(r->tail, r->tlen, lt, llen);
			if (ch == 0)
				ch = gbt_tail_cmp_bound(r->tail, r->tlen, hb.data, hb.len, hb.upper);
			bound_pairs++;
			match += want == 0 && m > 0;
			if (tied)
			{
				if (want == 0)
					tied_in++;
				else
					tied_out++;
			}
			if ((want < 0) == (cl < 0) && (want > 0) == (ch > 0) &&
				(want == 0) == (cl >= 0 && ch <= 0))
				continue;
			bad++;
			if (bm != B_NONE)
				continue;
			CHECK(false, "%s: prefix of %d columns: model %d, below lower %d, above upper %d",
				  s->name, m, want, cl < 0, ch > 0);
			print_row(s, &p);
			print_row(s, r);
		}
	}
	if (bm == B_NONE)
	{
		/* the tails decided for rows of the prefix and of others */
		CHECK(tied_in > 0 && tied_out > 0 && ncutpre > 0, "%s: tails decided no bound", s->name);
		printf("  %-60s prefixes %4d cut, %4d with NULL; %7ld rows match; words tie %6ld in, %6ld out\n",
			   s->name, ncutpre, nnullpre, match, tied_in, tied_out);
	}
	free(rows);
	free(pool);
	return bad;
}

/*
 * The shapes: a small P forces cuts often; the real P is what
 * gbt_wide_info_init gives (the 256 bits less the other fields and the
 * null bits, shared by the text columns).
 */
static const Spec specs[] = {
	{"text ASC, P=3", 1, false, {K_TEXT}, {24}, {false}, {false}},
	{"text ASC, P=32", 1, false, {K_TEXT}, {256}, {false}, {false}},
	{"text DESC, P=4", 1, false, {K_TEXT}, {32}, {true}, {false}},
	{"text DESC, P=32", 1, false, {K_TEXT}, {256}, {true}, {false}},
	{"(text, int4), P=3", 2, true, {K_TEXT, K_INT}, {24, 32}, {false, false}, {false, false}},
	{"(text, int4), P=27", 2, true, {K_TEXT, K_INT}, {216, 32}, {false, false}, {false, false}},
	{"(text, int4 NULLS FIRST), P=3", 2, true, {K_TEXT, K_INT}, {24, 32}, {false, false}, {false, true}},
	{"(text DESC, int4), P=3", 2, true, {K_TEXT, K_INT}, {24, 32}, {true, false}, {false, false}},
	{"(int4, text) NULLS FIRST, P=4", 2, true, {K_INT, K_TEXT}, {32, 32}, {false, false}, {true, true}},
	{"(int4, text) NULLS FIRST, P=27", 2, true, {K_INT, K_TEXT}, {32, 216}, {false, false}, {true, true}},
	{"(text DESC NULLS FIRST, int8), P=3", 2, true, {K_TEXT, K_INT}, {24, 64}, {true, false}, {true, false}},
	{"(text DESC NULLS FIRST, int8), P=23", 2, true, {K_TEXT, K_INT}, {184, 64}, {true, false}, {true, false}},
	{"(text, text DESC), P=3+3", 2, true, {K_TEXT, K_TEXT}, {24, 24}, {false, true}, {false, false}},
	{"(text, text DESC), P=15+15", 2, true, {K_TEXT, K_TEXT}, {120, 120}, {false, true}, {false, false}},
	{"(text DESC, text), P=4+3", 2, true, {K_TEXT, K_TEXT}, {32, 24}, {true, false}, {false, true}},
	{"(text, text NULLS FIRST), P=3+3", 2, true, {K_TEXT, K_TEXT}, {24, 24}, {false, false}, {false, true}},
	{"(text DESC, text DESC), P=3+3", 2, true, {K_TEXT, K_TEXT}, {24, 24}, {true, true}, {false, false}},
	{"(text, int2, text), P=3+3", 3, true, {K_TEXT, K_INT, K_TEXT}, {24, 16, 24}, {false, false, false}, {false, false, false}},
	{"(text, int2, text), P=14+14", 3, true, {K_TEXT, K_INT, K_TEXT}, {112, 16, 112}, {false, false, false}, {false, false, false}},
	{"(text NF, int4 DESC NF, bool, uuid DESC, text DESC), P=3+3", 5, true,
	{K_TEXT, K_INT, K_BOOL, K_UUID, K_TEXT}, {24, 32, 1, 128, 24},
	{false, true, false, true, true}, {true, true, false, false, false}},
	{"(text DESC, int2 DESC NF, text NF, int8 DESC), P=4+3", 4, true,
	{K_TEXT, K_INT, K_TEXT, K_INT}, {32, 16, 24, 64},
	{true, true, false, true}, {false, true, true, false}},
};

int
main(void)
{
	int			nspecs = (int) (sizeof(specs) / sizeof(specs[0]));

	tail_arena = malloc(TAILCAP + 8);
	buf_arena = malloc(DECCAP);

	for (int i = 0; i < nspecs; i++)
		test_spec(&specs[i], 6000, 1000000, M_NONE);
	/* across the shapes, the tails decided pairs of every kind */
	for (int k = 0; k < NTIES; k++)
		CHECK(all_ties[k] > 0, "no ties of kind %d in the words", k);
	printf("test_tail: %d shapes, %ld pairs compared\n", nspecs, pairs);

	/* each mutant of the encoding must put some pair out of order */
	for (int m = M_NONE + 1; m < M_NMUTANTS; m++)
	{
		long		bad = 0;

		for (int i = 0; i < nspecs; i++)
			bad += test_spec(&specs[i], 1500, 50000, (Mutant) m);
		CHECK(bad > 0, "mutant \"%s\" not caught", mutant_name[m]);
		printf("test_tail: mutant \"%s\": %ld pairs out of order\n", mutant_name[m], bad);
	}

	printf("test_tail: %ld keys decoded, %ld tails cut short refused, %ld garbled (%ld decoded, to themselves)\n",
		   decoded, dec_truncated, dec_garbled, dec_garbled_ok);

	for (int i = 0; i < nspecs; i++)
		test_bounds(&specs[i], 2000, 1000, B_NONE);
	printf("test_tail: bounds of prefixes, %ld rows against them\n", bound_pairs);
	for (int m = B_NONE + 1; m < B_NMUTANTS; m++)
	{
		long		bad = 0;

		for (int i = 0; i < nspecs; i++)
			bad += test_bounds(&specs[i], 600, 200, (BoundMutant) m);
		CHECK(bad > 0, "bounds mutant \"%s\" not caught", bound_mutant_name[m]);
		printf("test_tail: bounds mutant \"%s\": %ld rows on the wrong side\n",
			   bound_mutant_name[m], bad);
	}

	printf("test_tail: %ld pairs with equal keys over a prefix of columns (words and key parts)\n",
		   keyeqs);
	CHECK(keyeqs > 10000, "too few pairs of equal keys (%ld)", keyeqs);
	printf("test_tail: %ld checks, %d failures\n", checks, failures);
	free(tail_arena);
	free(buf_arena);
	return failures ? 1 : 0;
}
