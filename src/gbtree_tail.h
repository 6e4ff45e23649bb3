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

/* The column a value is cut at: its first text column longer than P; -1 if none */
static inline int
gbt_cut_column(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in)
{
	for (int c = 0; c < shape->ncols; c++)
		if (is_text[c] && !in[c].val.isnull && in[c].len > shape->col[c].bits / 8)
			return c;
	return -1;
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

/* The tail of a value cut at column c into out (when not NULL); its length */
static inline int64_t
gbt_tail_write(const GbtKeyShape *shape, const bool *is_text, const GbtColInput *in,
			   int c, unsigned char *out)
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
	for (int d = c + 1; d < shape->ncols; d++)
		n = gbt_tail_later(shape, is_text, in, d, out, n);
	return n;
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
	GbtColValue vals[GBT_MAX_KEY_COLS];
	int			c = gbt_cut_column(shape, is_text, in);
	int			ncols = c < 0 ? shape->ncols : c + 1;
	int			pos;
	int64_t		len;

	memset(vals, 0, sizeof(vals));	/* quiets gcc's maybe-uninitialized */
	for (int d = 0; d < ncols; d++)
		vals[d] = in[d].val;
	pos = gbt_shape_encode_cols(shape, vals, ncols, words);
	if (c < 0)
		return 0;

	/* the later fields' bits, not the padding after them: set under ASC, clear under DESC */
	if (!shape->col[c].desc)
		for (; pos < shape->nbits; pos += 64)
			gbt_words_put(words, pos, UINT64_MAX,
						  shape->nbits - pos < 64 ? shape->nbits - pos : 64);

	len = gbt_tail_write(shape, is_text, in, c, NULL);
	if (len > cap)
		return -1;
	gbt_tail_write(shape, is_text, in, c, tail);
	return (int) len;
}

#endif							/* GBTREE_TAIL_H */
