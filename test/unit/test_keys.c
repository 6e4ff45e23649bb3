/*
 * test_keys.c
 *	  Unit tests of key normalization (src/gbtree_keys.h): order
 *	  preservation against the native comparison, exact round trips, and
 *	  PostgreSQL's float rules (-0.0 == 0.0, NaN above +Infinity, all NaNs
 *	  equal).  Exits non-zero on failure.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#include "gbtree_keys.h"

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
	printf("test_keys: %ld checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
