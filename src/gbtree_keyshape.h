/*-------------------------------------------------------------------------
 *
 * gbtree_keyshape.h
 *	  Multi-word normalized keys: several columns, or one column wider
 *	  than 64 bits (uuid), encoded as a fixed sequence of 64-bit words
 *	  whose unsigned lexicographic order is the index's order.
 *
 * The encoding of multi-column and uuid keys (src/README, "Multi-word
 * keys") and its inverse, tested exhaustively by test/unit/test_keys.c;
 * wide.c maps an index's columns onto it.
 *
 * A key is the concatenation, most significant bit first, of each
 * column's field:
 *
 *	  [null bit] value bits
 *
 * The null bit (absent where NULLs are kept apart, as in a one-column
 * index's tree of NULLs) is 1 for NULL under NULLS LAST and 0 under NULLS
 * FIRST, and the other way round for values; a NULL's value bits are all
 * zero, so NULLs of a column are equal and later columns order them.
 * Value bits are the column's order key in its own width (a sign-flipped
 * int2/int4/int8, the double key of gbtree_keys.h, a uuid's 16 bytes as
 * two big-endian halves), inverted for a DESC column.  Bits left over in
 * the last word are zero.  A prefix of columns therefore covers the range
 * [prefix 000..., prefix 111...], which is how a scan's bounds on a
 * prefix become a range of words.
 *
 * Plain C, no PostgreSQL headers, as gbtree_keys.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_KEYSHAPE_H
#define GBTREE_KEYSHAPE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define GBT_MAX_KEY_WORDS	4		/* 256 bits */
#define GBT_MAX_KEY_COLS	16

typedef struct GbtColShape
{
	uint16_t	bits;			/* value bits: 1 to 64, or whole bytes up to 256 */
	bool		desc;
	bool		nulls_first;
} GbtColShape;

typedef struct GbtKeyShape
{
	int			ncols;
	bool		nullbits;		/* each field starts with a null bit */
	int			nbits;			/* total, set by gbt_shape_init */
	int			nwords;
	GbtColShape col[GBT_MAX_KEY_COLS];
} GbtKeyShape;

/*
 * One column's value as an order key: v[0] holds the value of a field of
 * up to 64 bits in its low bits.  A wider field (a uuid's 128 bits, a text
 * column's bytes) fills v[0], v[1], ... from the most significant bit: its
 * first 64 bits are v[0], and a last word it fills only partly keeps them
 * in its high bits, the rest zero.
 */
#define GBT_FIELD_WORDS		GBT_MAX_KEY_WORDS

typedef struct GbtColValue
{
	uint64_t	v[GBT_FIELD_WORDS];
	bool		isnull;
} GbtColValue;

/* Words of a field wider than 64 bits; 0 for one held in v[0]'s low bits */
static inline int
gbt_field_wide_words(int bits)
{
	return bits > 64 ? (bits + 63) / 64 : 0;
}

/* Bits of word k of a wide field */
static inline int
gbt_field_word_bits(int bits, int k)
{
	int			n = bits - 64 * k;

	return n > 64 ? 64 : n;
}

/* The field widths fixed; false if the key would not fit the words. */
static inline bool
gbt_shape_init(GbtKeyShape *shape)
{
	int			n = 0;

	if (shape->ncols < 1 || shape->ncols > GBT_MAX_KEY_COLS)
		return false;
	for (int c = 0; c < shape->ncols; c++)
	{
		int			b = shape->col[c].bits;

		if (b < 1 || (b > 64 && (b % 8 != 0 || b > GBT_MAX_KEY_WORDS * 64)))
			return false;
		n += b + (shape->nullbits ? 1 : 0);
	}
	if (n > GBT_MAX_KEY_WORDS * 64)
		return false;
	shape->nbits = n;
	shape->nwords = (n + 63) / 64;
	return true;
}

/* Write the low nbits (<= 64) of x at bit position pos, MSB first. */
static inline void
gbt_words_put(uint64_t *w, int pos, uint64_t x, int nbits)
{
	int			i = pos / 64;
	int			off = pos % 64;
	int			room = 64 - off;

	if (nbits < 64)
		x &= (UINT64_C(1) << nbits) - 1;
	if (nbits <= room)
		w[i] |= (nbits == 64) ? x : x << (room - nbits);
	else
	{
		w[i] |= x >> (nbits - room);
		w[i + 1] |= x << (64 - (nbits - room));
	}
}

/* Read nbits (<= 64) at bit position pos. */
static inline uint64_t
gbt_words_get(const uint64_t *w, int pos, int nbits)
{
	int			i = pos / 64;
	int			off = pos % 64;
	int			room = 64 - off;
	uint64_t	x;

	if (nbits <= room)
		x = (w[i] << off) >> (64 - nbits);
	else
		x = ((w[i] << off) >> (64 - nbits)) | (w[i + 1] >> (64 - (nbits - room)));
	return x;
}

static inline uint64_t
gbt_field_mask(int nbits)
{
	return nbits >= 64 ? UINT64_MAX : (UINT64_C(1) << nbits) - 1;
}

/*
 * Encode a row's first ncols columns into shape->nwords words, the bits
 * after them zero; returns the bit position after them.
 */
static inline int
gbt_shape_encode_cols(const GbtKeyShape *shape, const GbtColValue *vals, int ncols,
					  uint64_t *words)
{
	int			pos = 0;

	memset(words, 0, sizeof(uint64_t) * shape->nwords);
	for (int c = 0; c < ncols; c++)
	{
		const GbtColShape *col = &shape->col[c];
		const GbtColValue *v = &vals[c];
		uint64_t	inv = col->desc ? UINT64_MAX : 0;

		if (shape->nullbits)
		{
			gbt_words_put(words, pos, (uint64_t) (v->isnull != col->nulls_first), 1);
			pos++;
		}
		if (!v->isnull)
		{
			int			nw = gbt_field_wide_words(col->bits);

			if (nw == 0)
				gbt_words_put(words, pos, v->v[0] ^ inv, col->bits);
			for (int k = 0; k < nw; k++)
			{
				int			n = gbt_field_word_bits(col->bits, k);

				gbt_words_put(words, pos + 64 * k, (v->v[k] ^ inv) >> (64 - n), n);
			}
		}
		pos += col->bits;
	}
	return pos;
}

/* Encode a row's columns into shape->nwords words. */
static inline void
gbt_shape_encode(const GbtKeyShape *shape, const GbtColValue *vals, uint64_t *words)
{
	gbt_shape_encode_cols(shape, vals, shape->ncols, words);
}

/* The value bits of one field at bit position pos (not NULL) into v. */
static inline void
gbt_field_get(const uint64_t *words, int pos, const GbtColShape *col, GbtColValue *v)
{
	uint64_t	inv = col->desc ? UINT64_MAX : 0;
	int			nw = gbt_field_wide_words(col->bits);

	memset(v->v, 0, sizeof(v->v));
	v->isnull = false;
	if (nw == 0)
		v->v[0] = (gbt_words_get(words, pos, col->bits) ^ inv) & gbt_field_mask(col->bits);
	for (int k = 0; k < nw; k++)
	{
		int			n = gbt_field_word_bits(col->bits, k);

		v->v[k] = ((gbt_words_get(words, pos + 64 * k, n) ^ inv) & gbt_field_mask(n)) << (64 - n);
	}
}

/* The inverse of gbt_shape_encode. */
static inline void
gbt_shape_decode(const GbtKeyShape *shape, const uint64_t *words, GbtColValue *vals)
{
	int			pos = 0;

	for (int c = 0; c < shape->ncols; c++)
	{
		const GbtColShape *col = &shape->col[c];
		GbtColValue *v = &vals[c];
		bool		isnull = false;

		if (shape->nullbits)
		{
			isnull = gbt_words_get(words, pos, 1) != (uint64_t) col->nulls_first;
			pos++;
		}
		if (isnull)
		{
			memset(v->v, 0, sizeof(v->v));
			v->isnull = true;
		}
		else
			gbt_field_get(words, pos, col, v);
		pos += col->bits;
	}
}

/* Set every bit of words (nwords of them) from bit pos on. */
static inline void
gbt_words_set_from(uint64_t *words, int pos, int nwords)
{
	for (int p = pos; p < nwords * 64;)
	{
		int			n = 64 - p % 64;

		gbt_words_put(words, p, UINT64_MAX, n);
		p += n;
	}
}

/*
 * The bounds of every key whose first nprefix columns are those of vals:
 * ones == false gives the least (the rest of the bits zero), true the
 * greatest (the rest, padding included, one).
 */
static inline void
gbt_shape_prefix_bound(const GbtKeyShape *shape, const GbtColValue *vals, int nprefix,
					   bool ones, uint64_t *words)
{
	/* the first nprefix fields, encoded into all of the shape's words */
	int			pos = gbt_shape_encode_cols(shape, vals, nprefix, words);

	if (ones)
		gbt_words_set_from(words, pos, shape->nwords);
}

/*
 * Both bounds of one prefix, encoded once: the range of keys that begin
 * with the first nprefix fields.
 */
static inline void
gbt_shape_prefix_bounds(const GbtKeyShape *shape, const GbtColValue *vals, int nprefix,
						uint64_t *lo, uint64_t *hi)
{
	int			pos = gbt_shape_encode_cols(shape, vals, nprefix, lo);

	memcpy(hi, lo, sizeof(uint64_t) * shape->nwords);
	gbt_words_set_from(hi, pos, shape->nwords);
}

/* Unsigned lexicographic comparison of two keys of n words. */
static inline int
gbt_words_cmp(const uint64_t *a, const uint64_t *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/*
 * The same over the first nbits bits only (the key columns of an index
 * with INCLUDE columns after them).
 */
static inline int
gbt_words_prefix_cmp(const uint64_t *a, const uint64_t *b, int nbits)
{
	for (int i = 0; nbits > 0; i++, nbits -= 64)
	{
		uint64_t	m = nbits >= 64 ? UINT64_MAX : ~(UINT64_MAX >> nbits);
		uint64_t	x = a[i] & m,
					y = b[i] & m;

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* Zero the bits of the n words after the first nbits. */
static inline void
gbt_words_clear_after(uint64_t *w, int n, int nbits)
{
	for (int i = 0; i < n; i++, nbits -= 64)
	{
		if (nbits <= 0)
			w[i] = 0;
		else if (nbits < 64)
			w[i] &= ~(UINT64_MAX >> nbits);
	}
}

/*
 * An integer of the int2/int4/int8 family as an order key of its own
 * width: the value's low bits with the sign bit flipped.
 */
static inline uint64_t
gbt_int_field(int64_t v, int bits)
{
	return ((uint64_t) v ^ (UINT64_C(1) << (bits - 1))) & gbt_field_mask(bits);
}

static inline int64_t
gbt_int_from_field(uint64_t f, int bits)
{
	uint64_t	x = f ^ (UINT64_C(1) << (bits - 1));

	if (bits < 64 && (x & (UINT64_C(1) << (bits - 1))))
		x |= ~gbt_field_mask(bits);
	return (int64_t) x;
}

/* A uuid's 16 bytes (memcmp order, as uuid_cmp) as two halves. */
static inline void
gbt_uuid_field(const unsigned char *bytes, GbtColValue *v)
{
	memset(v->v, 0, sizeof(v->v));
	for (int i = 0; i < 8; i++)
	{
		v->v[0] = (v->v[0] << 8) | bytes[i];
		v->v[1] = (v->v[1] << 8) | bytes[8 + i];
	}
}

static inline void
gbt_uuid_from_field(const GbtColValue *v, unsigned char *bytes)
{
	for (int i = 0; i < 8; i++)
	{
		bytes[i] = (unsigned char) (v->v[0] >> (56 - 8 * i));
		bytes[8 + i] = (unsigned char) (v->v[1] >> (56 - 8 * i));
	}
}

/*
 * A text value's bytes under "C" as a field of nbytes bytes, zero-padded:
 * text holds no zero byte, so the padding orders a value before every
 * longer value it is a prefix of, as memcmp-then-length does.  The caller
 * makes sure that len <= nbytes.
 */
static inline void
gbt_bytes_field(const unsigned char *bytes, int len, int nbytes, GbtColValue *v)
{
	memset(v->v, 0, sizeof(v->v));
	for (int i = 0; i < len && i < nbytes; i++)
		v->v[i / 8] |= (uint64_t) bytes[i] << (56 - 8 * (i % 8));
	/* a field of one word or less is held in v[0]'s low bits */
	if (nbytes < 8)
		v->v[0] >>= 64 - 8 * nbytes;
}

/* The inverse: the value's length, its bytes into out[nbytes] */
static inline int
gbt_bytes_from_field(const GbtColValue *v, int nbytes, unsigned char *out)
{
	int			len = nbytes;

	/* a word at a time: each holds its bytes from the top, first byte first */
	for (int k = 0; 8 * k < nbytes; k++)
	{
		uint64_t	w = k > 0 ? v->v[k] : nbytes < 8 ? v->v[0] << (64 - 8 * nbytes) : v->v[0];
		uint64_t	be = __builtin_bswap64(w);
		int			n = nbytes - 8 * k < 8 ? nbytes - 8 * k : 8;

		if (n == 8)
			memcpy(out + 8 * k, &be, 8);
		else
			for (int i = 0; i < n; i++)
				out[8 * k + i] = (unsigned char) (w >> (56 - 8 * i));
	}
	while (len > 0 && out[len - 1] == 0)
		len--;
	return len;
}

#endif							/* GBTREE_KEYSHAPE_H */
