/*-------------------------------------------------------------------------
 *
 * gbtree_tail.h
 *	  Keys of values whose text is longer than its field: the words plus a
 *	  "tail" of bytes, so that entries order by (words, tail).
 *
 * The encoding of cut values (src/README, "What is left", item 4), tested
 * against a column-by-column model by test/unit/test_tail.c.  A value is
 * cut at column c, the first text column longer than its P = bits / 8
 * bytes.  Its words are the fields up to c as gbt_shape_encode has them
 * (c's field being its first P bytes), then every bit of the later fields
 * set when c is ASC and clear when DESC, so that the words tie with those
 * of any value that shares c's first P bytes whatever follows.  Its tail
 * then orders what the words left undecided:
 *
 *	  c's byte		  255 - c (ASC) or c (DESC)
 *	  c's rest		  the bytes after the first P (complemented when DESC)
 *	  end byte		  0x00 (ASC) or 0xFF (DESC): text has no zero byte
 *	  later columns	  each in a self-delimiting form (gbt_tail_later)
 *
 * A value that is not cut has no tail, which gbt_tail_cmp takes as {128}:
 * one of exactly P bytes thus sorts before (ASC) or after (DESC) the cut
 * values it begins, and of two values cut at different columns, the one
 * cut first has the longer text there and sorts after (ASC) or before
 * (DESC) the other.
 *
 * A scan's condition on the first m columns becomes a range of (words,
 * tail) that holds exactly the values with that prefix, cut or not
 * (gbt_shape_prefix_lower_cut and _upper_cut): the upper bound's tail is
 * followed by +infinity (GbtTailBound, gbt_tail_cmp_bound).  Index-only
 * scans get the columns back, text in full, from (words, tail)
 * (gbt_shape_decode_cut).
 *
 * Plain C, no PostgreSQL headers, as gbtree_keyshape.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_TAIL_H
#define GBTREE_TAIL_H

#include "gbtree_keyshape.h"
#include "gbtree_node.h"

/*
 * One column's value.  val is what gbt_shape_encode takes (a text column's
 * from gbt_bytes_field, so its first P bytes); a text column also gives
 * all of its bytes.  The functions below take is_text[c] for each of the
 * shape's columns.
 */
typedef struct GbtColInput
{
	GbtColValue val;
	const unsigned char *bytes; /* text: the whole value */
	int			len;
} GbtColInput;

/* The first of in[0..n-1] that is a text longer than P; -1 if none */
static inline int
gbt_cut_column_of(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in,
				  int n)
{
	for (int c = 0; c < n; c++)
		if (is_text[c] && !in[c].val.isnull && in[c].len > shape->col[c].bits / 8)
			return c;
	return -1;
}

/* The column a value is cut at: its first text column longer than P; -1 if none */
static inline int
gbt_cut_column(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in)
{
	return gbt_cut_column_of(shape, is_text, in, shape->ncols);
}

/*
 * Column d's bytes after a cut, into out at n when out is not NULL;
 * returns n past them.  Each form orders as the column and tells where it
 * ends: the null bit as a byte, then a fixed field's encoded bits (big
 * endian, right-aligned) or a text's bytes and end byte.
 */
static inline int64_t
gbt_tail_later(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in,
			   int d, unsigned char *out, int64_t n)
{
	const GbtColShape *col = &shape->col[d];
	const GbtColValue *v = &in[d].val;
	unsigned char inv = col->desc ? 0xFF : 0;
	int			nbytes = (col->bits + 7) / 8;

	if (shape->nullbits)
	{
		if (out)
			out[n] = (unsigned char) (v->isnull != col->nulls_first);
		n++;
	}
	if (v->isnull)
		return n;
	if (is_text[d])
	{
		if (out)
		{
			for (int i = 0; i < in[d].len; i++)
				out[n + i] = in[d].bytes[i] ^ inv;
			out[n + in[d].len] = inv;
		}
		return n + in[d].len + 1;
	}
	if (out)
	{
		for (int i = 0; i < nbytes; i++)
		{
			uint64_t	b;

			if (col->bits <= 64)
				b = v->v[0] >> (8 * (nbytes - 1 - i));
			else				/* wide fields are whole bytes */
				b = v->v[i / 8] >> (56 - 8 * (i % 8));
			out[n + i] = (unsigned char) b ^ inv;
		}
		/* a field of bits not a multiple of 8: only its bits, right-aligned */
		if (col->bits % 8 != 0)
			out[n] &= (unsigned char) ((1 << (col->bits % 8)) - 1);
	}
	return n + nbytes;
}

/*
 * The tail of a value cut at column c, as far as column end (exclusive),
 * into out (when not NULL); its length
 */
static inline int64_t
gbt_tail_write_cols(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in,
					int c, int end, unsigned char *out)
{
	unsigned char inv = shape->col[c].desc ? 0xFF : 0;
	int			p = shape->col[c].bits / 8;
	int64_t		n = 1 + (in[c].len - p) + 1;

	if (out)
	{
		out[0] = (unsigned char) (255 - c) ^ inv;
		for (int i = p; i < in[c].len; i++)
			out[1 + i - p] = in[c].bytes[i] ^ inv;
		out[n - 1] = inv;
	}
	for (int d = c + 1; d < end; d++)
		n = gbt_tail_later(shape, is_text, in, d, out, n);
	return n;
}

/* The tail of a value cut at column c into out (when not NULL); its length */
static inline int64_t
gbt_tail_write(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in,
			   int c, unsigned char *out)
{
	return gbt_tail_write_cols(shape, is_text, in, c, shape->ncols, out);
}

/* Set the field bits from pos on, not the padding after them */
static inline void
gbt_words_fill_fields(const GbtKeyShape *shape, uint64_t *words, int pos)
{
	for (; pos < shape->nbits; pos += 64)
		gbt_words_put(words, pos, UINT64_MAX,
					  shape->nbits - pos < 64 ? shape->nbits - pos : 64);
}

/*
 * The words of a value cut at column c: its fields up to c, then the later
 * fields' bits set (c ASC) or clear (c DESC)
 */
static inline void
gbt_cut_words(const GbtKeyShape *shape, const GbtColInput *in, int c, uint64_t *words)
{
	GbtColValue vals[GBT_MAX_KEY_COLS];
	int			pos;

	memset(vals, 0, sizeof(vals));	/* quiets gcc's maybe-uninitialized */
	for (int d = 0; d <= c; d++)
		vals[d] = in[d].val;
	pos = gbt_shape_encode_cols(shape, vals, c + 1, words);
	if (!shape->col[c].desc)
		gbt_words_fill_fields(shape, words, pos);
}

/* The length of a value's tail, 0 if it has none */
static inline int64_t
gbt_tail_bytes_needed(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in)
{
	int			c = gbt_cut_column(shape, is_text, in);

	return c < 0 ? 0 : gbt_tail_write(shape, is_text, in, c, NULL);
}

/*
 * A value's key: shape->nwords words, and its tail into tail[cap].
 * Returns the tail's length (0: none), or -1 if it is longer than cap (the
 * words are written all the same, the tail not at all).
 */
static inline int
gbt_shape_encode_cut(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in,
					 uint64_t *words, unsigned char *tail, int cap)
{
	int			c = gbt_cut_column(shape, is_text, in);
	int64_t		len;

	if (c < 0)
	{
		GbtColValue vals[GBT_MAX_KEY_COLS];

		memset(vals, 0, sizeof(vals));
		for (int d = 0; d < shape->ncols; d++)
			vals[d] = in[d].val;
		gbt_shape_encode(shape, vals, words);
		return 0;
	}
	gbt_cut_words(shape, in, c, words);
	len = gbt_tail_write(shape, is_text, in, c, NULL);
	if (len > cap)
		return -1;
	gbt_tail_write(shape, is_text, in, c, tail);
	return (int) len;
}

/*
 * A scan's bound on (words, tail): upper means "these bytes followed by
 * +infinity", above every tail that starts with them (len 0: above every
 * tail); otherwise the bytes themselves, compared as gbt_tail_cmp.
 */
typedef struct GbtTailBound
{
	const unsigned char *data;
	int			len;
	bool		upper;
} GbtTailBound;

/*
 * An entry's tail t (len 0: no tail, {128}) against a bound's bytes b:
 * < 0, 0 (only when !upper and equal) or > 0.
 */
static inline int
gbt_tail_cmp_bound(const unsigned char *t, int tlen, const unsigned char *b, int blen,
				   bool upper)
{
	static const unsigned char none = 128;
	int			n,
				r;

	if (!upper)
		return gbt_tail_cmp(t, tlen, b, blen);
	if (tlen == 0)
	{
		t = &none;
		tlen = 1;
	}
	n = tlen < blen ? tlen : blen;
	r = n > 0 ? memcmp(t, b, (size_t) n) : 0;
	if (r != 0)
		return r < 0 ? -1 : 1;
	/* t starts with b, or is a proper prefix of it */
	return -1;
}

/*
 * The bounds of the values whose first m columns (0 to ncols) are
 * in[0..m-1] (only those are read), given in full: NULL where
 * shape->nullbits, or text longer than P.  Every value with that prefix
 * lies in [lower, upper], every value with a smaller prefix below lower,
 * every one with a greater prefix above upper, so no recheck is needed.
 * Writes the words and the bound's tail into tail[cap]; returns the
 * tail's length (never 0), or -1 past cap (the words written all the
 * same).  The lower bound is inclusive (gbt_tail_cmp), the upper one's
 * bytes are meant with upper = true (gbt_tail_cmp_bound).
 *
 * With a cut column c < m, every value with the prefix has c's words (as
 * gbt_cut_words) and a tail that starts with T0: c's byte, rest and end
 * byte and the forms of columns c + 1 to m - 1; the forms being
 * self-delimiting, the others with those words have tails that differ
 * from T0 within it.  The bounds are (words, T0) and (words, T0 then
 * +infinity).
 *
 * Without one, the words are the prefix's fields then every later field
 * bit clear (lower) or set (upper, not the padding: real words never set
 * it).  Those words also belong to values of another prefix, cut at a
 * column d < m whose prefix value has exactly P bytes: a DESC cut (a
 * smaller value) among the lower words, with a tail that starts with d;
 * an ASC cut (a greater one) among the upper words, starting with 255 -
 * d.  The values with the prefix there are uncut ({128}) or cut at e >=
 * m (e or 255 - e).  Hence the tails {m} and {255 - m} then +infinity
 * (d < m <= e < 128 < 255 - e <= 255 - m < 255 - d), not {0x00} and
 * +infinity, which would take in those of the other prefix.
 */
static inline int
gbt_shape_prefix_bound_cut(const GbtKeyShape *shape, const bool *is_text,
						   const GbtColInput *in, int m, bool upper,
						   uint64_t *words, unsigned char *tail, int cap)
{
	int			c = gbt_cut_column_of(shape, is_text, in, m);
	int64_t		len;

	if (c < 0)
	{
		GbtColValue vals[GBT_MAX_KEY_COLS];
		int			pos;

		memset(vals, 0, sizeof(vals));
		for (int d = 0; d < m; d++)
			vals[d] = in[d].val;
		pos = gbt_shape_encode_cols(shape, vals, m, words);
		if (upper)
			gbt_words_fill_fields(shape, words, pos);
		if (cap < 1)
			return -1;
		tail[0] = (unsigned char) (upper ? 255 - m : m);
		return 1;
	}
	gbt_cut_words(shape, in, c, words);
	len = gbt_tail_write_cols(shape, is_text, in, c, m, NULL);
	if (len > cap)
		return -1;
	gbt_tail_write_cols(shape, is_text, in, c, m, tail);
	return (int) len;
}

/* The lower bound of a prefix, inclusive */
static inline int
gbt_shape_prefix_lower_cut(const GbtKeyShape *shape, const bool *is_text,
						   const GbtColInput *in, int m,
						   uint64_t *words, unsigned char *tail, int cap)
{
	return gbt_shape_prefix_bound_cut(shape, is_text, in, m, false, words, tail, cap);
}

/* The upper bound of a prefix: the tail's bytes followed by +infinity */
static inline int
gbt_shape_prefix_upper_cut(const GbtKeyShape *shape, const bool *is_text,
						   const GbtColInput *in, int m,
						   uint64_t *words, unsigned char *tail, int cap)
{
	return gbt_shape_prefix_bound_cut(shape, is_text, in, m, true, words, tail, cap);
}

/*
 * Column d's form in tail[n..tlen-1] into o (a text's bytes into
 * buf[*used..cap-1]); returns n past it, or -1 if it is malformed or buf
 * too small.  The inverse of gbt_tail_later: it takes only what that
 * writes (a null byte of 0 or 1, a field's unused high bits clear).
 */
static inline int
gbt_tail_later_read(const GbtKeyShape *shape, const bool *is_text, int d,
					const unsigned char *tail, int tlen, int n, GbtColInput *o,
					unsigned char *buf, int cap, int *used)
{
	const GbtColShape *col = &shape->col[d];
	unsigned char inv = col->desc ? 0xFF : 0;
	int			nbytes = (col->bits + 7) / 8;

	memset(o, 0, sizeof(*o));
	if (shape->nullbits)
	{
		if (n >= tlen || tail[n] > 1)
			return -1;
		o->val.isnull = (tail[n] != 0) != col->nulls_first;
		n++;
	}
	if (o->val.isnull)
		return n;
	if (is_text[d])
	{
		int			start = n;

		while (n < tlen && tail[n] != inv)
			n++;
		if (n >= tlen || *used + (n - start) > cap)
			return -1;
		o->bytes = buf + *used;
		o->len = n - start;
		for (int i = 0; i < o->len; i++)
			buf[*used + i] = tail[start + i] ^ inv;
		*used += o->len;
		gbt_bytes_field(o->bytes, o->len, col->bits / 8, &o->val);
		return n + 1;
	}
	if (tlen - n < nbytes)
		return -1;
	if (col->bits % 8 != 0 && (tail[n] >> (col->bits % 8)) != 0)
		return -1;
	for (int i = 0; i < nbytes; i++)
	{
		uint64_t	b = tail[n + i] ^ inv;

		if (col->bits <= 64)
			o->val.v[0] = (o->val.v[0] << 8) | b;
		else
			o->val.v[i / 8] |= b << (56 - 8 * (i % 8));
	}
	if (col->bits <= 64)
		o->val.v[0] &= gbt_field_mask(col->bits);
	return n + nbytes;
}

/*
 * The bytes of a tail that hold key columns [0, nkey) of its value: from
 * the start through column nkey - 1's form when the value is cut at a key
 * column, else 0 (not cut, or cut at a later, INCLUDE column: the key
 * columns are whole in the words); -1 if the tail is malformed.  Two
 * entries have equal keys when their words agree on the key columns' bits
 * and these bytes are the same: the forms end themselves, so no key part
 * is a prefix of another, and entries of one key lie together in
 * (words, tail) order.
 */
static inline int
gbt_tail_key_len(const GbtKeyShape *shape, const bool *is_text, const unsigned char *tail,
				 int tlen, int nkey)
{
	unsigned char buf[GBT_TAIL_HIGHEST_LEN];
	GbtColInput o;
	unsigned char inv;
	int			used = 0,
				c,
				n;

	if (tlen == 0)
		return 0;
	c = tail[0] >= 128 ? 255 - tail[0] : tail[0];
	if (c >= shape->ncols || !is_text[c])
		return -1;
	if (c >= nkey)
		return 0;
	inv = shape->col[c].desc ? 0xFF : 0;
	for (n = 1; n < tlen && tail[n] != inv; n++)
		;
	if (n >= tlen)
		return -1;
	n++;
	for (int d = c + 1; d < nkey; d++)
	{
		n = gbt_tail_later_read(shape, is_text, d, tail, tlen, n, &o, buf, sizeof(buf), &used);
		if (n < 0)
			return -1;
	}
	return n;
}

/*
 * The inverse of gbt_shape_encode_cut, for index-only scans: every
 * column's NULL flag and GbtColValue (as gbt_shape_decode has it), and a
 * text column's bytes and length, into buf[cap]: from its field before
 * the cut, from the field and the tail's rest at the cut, from the tail
 * after it.  tlen + the text columns' P bytes always suffice.  Returns
 * the bytes of buf used, or -1 if buf is too small or the key is not one
 * that gbt_shape_encode_cut writes (a tail whose column byte, words, rest,
 * forms or length do not fit); it never reads tail past tlen.
 */
static inline int
gbt_shape_decode_cut(const GbtKeyShape *shape, const bool *is_text, const uint64_t *words,
					 const unsigned char *tail, int tlen, GbtColInput *out,
					 unsigned char *buf, int cap)
{
	GbtColValue vals[GBT_MAX_KEY_COLS];
	unsigned char field[GBT_FIELD_WORDS * 8];
	int			c = -1;
	int			used = 0;
	int			n;

	gbt_shape_decode(shape, words, vals);
	memset(out, 0, sizeof(GbtColInput) * shape->ncols);
	if (tlen > 0)
	{
		int			pos = 0;

		/* 255 - c under ASC, c under DESC: at most 16 columns either way */
		c = tail[0] >= 128 ? 255 - tail[0] : tail[0];
		if (c >= shape->ncols || !is_text[c] || shape->col[c].desc != (tail[0] < 128) ||
			vals[c].isnull)
			return -1;
		/* the later fields' bits all set (ASC) or clear (DESC) */
		for (int d = 0; d <= c; d++)
			pos += shape->col[d].bits + (shape->nullbits ? 1 : 0);
		for (; pos < shape->nbits; pos += 64)
		{
			int			k = shape->nbits - pos < 64 ? shape->nbits - pos : 64;

			if (gbt_words_get(words, pos, k) != (shape->col[c].desc ? 0 : gbt_field_mask(k)))
				return -1;
		}
	}

	for (int d = 0; d < (c < 0 ? shape->ncols : c + 1); d++)
	{
		int			len;

		out[d].val = vals[d];
		if (!is_text[d] || vals[d].isnull)
			continue;
		/* straight into buf where the whole field fits, else by field */
		if (used + shape->col[d].bits / 8 <= cap)
			len = gbt_bytes_from_field(&vals[d], shape->col[d].bits / 8, buf + used);
		else
		{
			len = gbt_bytes_from_field(&vals[d], shape->col[d].bits / 8, field);
			if (used + len <= cap)
				memcpy(buf + used, field, len);
		}
		/* a cut value fills its field */
		if ((d == c && len != shape->col[d].bits / 8) || used + len > cap)
			return -1;
		out[d].bytes = buf + used;
		out[d].len = len;
		used += len;
	}
	if (c < 0)
		return used;

	/* c's rest, at least one byte, up to its end byte: buf after its field */
	{
		unsigned char inv = shape->col[c].desc ? 0xFF : 0;
		const unsigned char *end = tlen > 1 ?
			memchr(tail + 1, inv, (size_t) (tlen - 1)) : NULL;
		int			m = end ? (int) (end - (tail + 1)) : 0;

		/* found, not at once, and the rest fits */
		if (end == NULL || m == 0 || used + m > cap)
			return -1;
		if (inv == 0)
			memcpy(buf + used, tail + 1, m);
		else
			for (int i = 0; i < m; i++)
				buf[used + i] = tail[1 + i] ^ inv;
		used += m;
		out[c].len += m;
		n = m + 2;
	}
	for (int d = c + 1; d < shape->ncols; d++)
	{
		n = gbt_tail_later_read(shape, is_text, d, tail, tlen, n, &out[d], buf, cap, &used);
		if (n < 0)
			return -1;
	}
	return n == tlen ? used : -1;
}

#endif							/* GBTREE_TAIL_H */
