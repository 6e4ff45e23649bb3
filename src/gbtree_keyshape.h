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
	uint8_t		bits;			/* value bits: 1 to 64, or 128 */
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
 * up to 64 bits in its low bits; a 128-bit field is v[0] (high) then v[1].
 */
typedef struct GbtColValue
{
	uint64_t	v[2];
	bool		isnull;
} GbtColValue;

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

		if (b < 1 || (b > 64 && b != 128))
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

/* Encode a row's columns into shape->nwords words. */
static inline void
gbt_shape_encode(const GbtKeyShape *shape, const GbtColValue *vals, uint64_t *words)
{
	int			pos = 0;

	memset(words, 0, sizeof(uint64_t) * shape->nwords);
	for (int c = 0; c < shape->ncols; c++)
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
			if (col->bits == 128)
			{
				gbt_words_put(words, pos, v->v[0] ^ inv, 64);
				gbt_words_put(words, pos + 64, v->v[1] ^ inv, 64);
			}
			else
				gbt_words_put(words, pos, v->v[0] ^ inv, col->bits);
		}
		pos += col->bits;
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
		uint64_t	inv = col->desc ? UINT64_MAX : 0;

		v->isnull = false;
		if (shape->nullbits)
		{
			v->isnull = gbt_words_get(words, pos, 1) != (uint64_t) col->nulls_first;
			pos++;
		}
		v->v[0] = v->v[1] = 0;
		if (!v->isnull)
		{
			if (col->bits == 128)
			{
				v->v[0] = gbt_words_get(words, pos, 64) ^ inv;
				v->v[1] = gbt_words_get(words, pos + 64, 64) ^ inv;
			}
			else
				v->v[0] = (gbt_words_get(words, pos, col->bits) ^ inv) &
					gbt_field_mask(col->bits);
		}
		pos += col->bits;
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
	GbtKeyShape prefix = *shape;
	int			pos = 0;

	/* the first nprefix fields, encoded into all of the shape's words */
	prefix.ncols = nprefix;
	for (int c = 0; c < nprefix; c++)
		pos += shape->col[c].bits + (shape->nullbits ? 1 : 0);
	gbt_shape_encode(&prefix, vals, words);
	if (ones)
		for (int p = pos; p < shape->nwords * 64;)
		{
			int			n = 64 - p % 64;

			gbt_words_put(words, p, UINT64_MAX, n);
			p += n;
		}
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
	v->v[0] = v->v[1] = 0;
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

#endif							/* GBTREE_KEYSHAPE_H */
