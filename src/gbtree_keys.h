/*-------------------------------------------------------------------------
 *
 * gbtree_keys.h
 *	  Order-preserving normalization of column values to unsigned 64-bit
 *	  keys, and back.
 *
 * Plain C so the unit tests can check it exhaustively.  Signed integers
 * (and date, time, timestamp, timestamptz, money) flip the sign bit of
 * their int64 value; oid and bool are zero-extended.  Floats of either
 * width are widened to double (exact), -0.0 folds onto 0.0 (remembered in
 * a TID flag for exact decoding) and every NaN onto one key above
 * +Infinity, which is PostgreSQL's float order.  Values of the integer
 * family (int2/int4/int8) share one key space, and so do float4/float8,
 * which is what makes cross-type comparisons exact.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_KEYS_H
#define GBTREE_KEYS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define GBT_SIGN_BIT	UINT64_C(0x8000000000000000)
#define GBT_NAN_KEY		UINT64_C(0xFFF8000000000000)	/* above +Inf's key */

static inline uint64_t
gbt_key_from_int64(int64_t v)
{
	return (uint64_t) v ^ GBT_SIGN_BIT;
}

static inline int64_t
gbt_key_to_int64(uint64_t k)
{
	return (int64_t) (k ^ GBT_SIGN_BIT);
}

static inline uint64_t
gbt_key_from_uint32(uint32_t v)
{
	return (uint64_t) v;
}

/* *negzero is set when d is -0.0 (the key itself is that of 0.0) */
static inline uint64_t
gbt_key_from_double(double d, int *negzero)
{
	uint64_t	bits;

	*negzero = 0;
	if (isnan(d))
		return GBT_NAN_KEY;
	if (d == 0.0)
	{
		*negzero = signbit(d) ? 1 : 0;
		d = 0.0;
	}
	memcpy(&bits, &d, sizeof(bits));
	return (bits & GBT_SIGN_BIT) ? ~bits : (bits ^ GBT_SIGN_BIT);
}

static inline double
gbt_key_to_double(uint64_t k, int negzero)
{
	uint64_t	bits;
	double		d;

	if (k == GBT_NAN_KEY)
		return NAN;
	bits = (k & GBT_SIGN_BIT) ? (k ^ GBT_SIGN_BIT) : ~k;
	memcpy(&d, &bits, sizeof(d));
	if (negzero && d == 0.0)
		d = -0.0;
	return d;
}

#endif							/* GBTREE_KEYS_H */
