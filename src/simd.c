/*-------------------------------------------------------------------------
 *
 * simd.c
 *	  Run-time dispatched block counts: AVX-512, AVX2 and scalar.
 *
 * Plain C (no PostgreSQL headers): also linked into the unit tests.  The
 * vector versions are compiled with function-level target attributes so
 * the library itself needs no -m flags and runs on any x86-64.
 *
 *-------------------------------------------------------------------------
 */
#include "gbtree_simd.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define GBT_HAVE_X86 1
#include <immintrin.h>
#endif

/*
 * The first index in [from, to) where the bytes of a and b differ, or to
 * (gbtree's generic WAL writer, wal.c, looks for a page's changes so).
 */
int
gbt_first_diff_scalar(const char *a, const char *b, int from, int to)
{
	int			i = from;

	for (; i + 8 <= to; i += 8)
	{
		uint64_t	u,
					v;

		memcpy(&u, a + i, sizeof(u));
		memcpy(&v, b + i, sizeof(v));
		if (u != v)
			break;
	}
	for (; i < to; i++)
		if (a[i] != b[i])
			return i;
	return to;
}

int
gbt_count_lt16_scalar(const uint64_t *p, uint64_t x)
{
	int			n = 0;

	for (int i = 0; i < 16; i++)
		n += (p[i] < x);
	return n;
}

int
gbt_count_le16_scalar(const uint64_t *p, uint64_t x)
{
	int			n = 0;

	for (int i = 0; i < 16; i++)
		n += (p[i] <= x);
	return n;
}

/*
 * Multi-word keys (gbtree_keyshape.h): the number of the 16 slots at
 * w[0..nwords)[at..at+16) whose key is below x (inclusive: at or below),
 * comparing word by word.  The last word decides ties of all the others:
 * below = lt[0] | eq[0] & (lt[1] | eq[1] & (... last)), built from the
 * last word up, branch-free.
 */
int
gbt_count_words16_scalar(const uint64_t *const *w, int at, const uint64_t *x, int nwords,
						 bool inclusive)
{
	int			n = 0;

	for (int i = 0; i < 16; i++)
	{
		int			k = nwords - 1;
		uint64_t	a = w[k][at + i];
		int			below = inclusive ? (a <= x[k]) : (a < x[k]);

		for (k = nwords - 2; k >= 0; k--)
		{
			a = w[k][at + i];
			below = (a < x[k]) | ((a == x[k]) & below);
		}
		n += below;
	}
	return n;
}

#ifdef GBT_HAVE_X86

/*
 * AVX2 has only signed 64-bit compares: flip the sign bit of both sides,
 * which maps unsigned order onto signed order.
 */
__attribute__((target("avx2,popcnt")))
static inline int
count_gt16_avx2(const uint64_t *p, uint64_t x)
{
	const __m256i bias = _mm256_set1_epi64x((long long) UINT64_C(0x8000000000000000));
	__m256i		vx = _mm256_xor_si256(_mm256_set1_epi64x((long long) x), bias);
	int			mask = 0;

	for (int i = 0; i < 4; i++)
	{
		__m256i		v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (p + 4 * i)), bias);
		__m256i		gt = _mm256_cmpgt_epi64(v, vx);

		mask |= _mm256_movemask_pd(_mm256_castsi256_pd(gt)) << (4 * i);
	}
	return __builtin_popcount((unsigned) mask);
}

__attribute__((target("avx2,popcnt")))
int
gbt_count_le16_avx2(const uint64_t *p, uint64_t x)
{
	return 16 - count_gt16_avx2(p, x);
}

__attribute__((target("avx2,popcnt")))
int
gbt_count_lt16_avx2(const uint64_t *p, uint64_t x)
{
	/* slots < x  ==  16 - slots >= x  ==  16 - slots > (x - 1) */
	if (x == 0)
		return 0;
	return 16 - count_gt16_avx2(p, x - 1);
}

__attribute__((target("avx512f,popcnt")))
int
gbt_count_lt16_avx512(const uint64_t *p, uint64_t x)
{
	__m512i		vx = _mm512_set1_epi64((long long) x);
	__mmask8	m0 = _mm512_cmplt_epu64_mask(_mm512_loadu_si512((const void *) p), vx);
	__mmask8	m1 = _mm512_cmplt_epu64_mask(_mm512_loadu_si512((const void *) (p + 8)), vx);

	return __builtin_popcount((unsigned) m0 | ((unsigned) m1 << 8));
}

__attribute__((target("avx512f,popcnt")))
int
gbt_count_le16_avx512(const uint64_t *p, uint64_t x)
{
	__m512i		vx = _mm512_set1_epi64((long long) x);
	__mmask8	m0 = _mm512_cmple_epu64_mask(_mm512_loadu_si512((const void *) p), vx);
	__mmask8	m1 = _mm512_cmple_epu64_mask(_mm512_loadu_si512((const void *) (p + 8)), vx);

	return __builtin_popcount((unsigned) m0 | ((unsigned) m1 << 8));
}

/*
 * The vector word counts are written once for any number of words and
 * instantiated per count (1 to 4), so that the compiler unrolls the word
 * loop and keeps every broadcast probe word in a register.
 */
__attribute__((target("avx2,popcnt")))
static inline __attribute__((always_inline)) int
count_words16_avx2(const uint64_t *const *w, int at, const uint64_t *x, const int nwords,
				   bool inclusive)
{
	const __m256i bias = _mm256_set1_epi64x((long long) UINT64_C(0x8000000000000000));
	__m256i		vx[4];
	int			mask = 0;

	for (int k = 0; k < nwords; k++)
		vx[k] = _mm256_xor_si256(_mm256_set1_epi64x((long long) x[k]), bias);
	for (int i = 0; i < 4; i++)
	{
		int			k = nwords - 1;
		__m256i		a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (w[k] + at + 4 * i)), bias);

		/* a <= x is not (a > x); a < x is (x > a) */
		__m256i		below = inclusive ?
			_mm256_andnot_si256(_mm256_cmpgt_epi64(a, vx[k]), _mm256_set1_epi64x(-1)) :
			_mm256_cmpgt_epi64(vx[k], a);

		for (k = nwords - 2; k >= 0; k--)
		{
			a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (w[k] + at + 4 * i)), bias);
			below = _mm256_or_si256(_mm256_cmpgt_epi64(vx[k], a),
									_mm256_and_si256(_mm256_cmpeq_epi64(a, vx[k]), below));
		}
		mask |= _mm256_movemask_pd(_mm256_castsi256_pd(below)) << (4 * i);
	}
	return __builtin_popcount((unsigned) mask);
}

__attribute__((target("avx2,popcnt")))
int
gbt_count_words16_avx2(const uint64_t *const *w, int at, const uint64_t *x, int nwords,
					   bool inclusive)
{
	switch (nwords)
	{
		case 1:
			return count_words16_avx2(w, at, x, 1, inclusive);
		case 2:
			return count_words16_avx2(w, at, x, 2, inclusive);
		case 3:
			return count_words16_avx2(w, at, x, 3, inclusive);
		default:
			return count_words16_avx2(w, at, x, 4, inclusive);
	}
}

__attribute__((target("avx512f,popcnt")))
static inline __attribute__((always_inline)) int
count_words16_avx512(const uint64_t *const *w, int at, const uint64_t *x, const int nwords,
					 bool inclusive)
{
	__m512i		vx[4];
	unsigned	mask = 0;

	for (int k = 0; k < nwords; k++)
		vx[k] = _mm512_set1_epi64((long long) x[k]);
	for (int i = 0; i < 2; i++)
	{
		int			k = nwords - 1;
		__m512i		a = _mm512_loadu_si512((const void *) (w[k] + at + 8 * i));
		__mmask8	below = inclusive ? _mm512_cmple_epu64_mask(a, vx[k]) :
			_mm512_cmplt_epu64_mask(a, vx[k]);

		for (k = nwords - 2; k >= 0; k--)
		{
			a = _mm512_loadu_si512((const void *) (w[k] + at + 8 * i));
			below = _mm512_cmplt_epu64_mask(a, vx[k]) |
				(_mm512_cmpeq_epu64_mask(a, vx[k]) & below);
		}
		mask |= (unsigned) below << (8 * i);
	}
	return __builtin_popcount(mask);
}

__attribute__((target("avx512f,popcnt")))
int
gbt_count_words16_avx512(const uint64_t *const *w, int at, const uint64_t *x, int nwords,
						 bool inclusive)
{
	switch (nwords)
	{
		case 1:
			return count_words16_avx512(w, at, x, 1, inclusive);
		case 2:
			return count_words16_avx512(w, at, x, 2, inclusive);
		case 3:
			return count_words16_avx512(w, at, x, 3, inclusive);
		default:
			return count_words16_avx512(w, at, x, 4, inclusive);
	}
}

__attribute__((target("avx2")))
int
gbt_first_diff_avx2(const char *a, const char *b, int from, int to)
{
	int			i = from;

	for (; i + 32 <= to; i += 32)
	{
		__m256i		x = _mm256_loadu_si256((const __m256i *) (a + i));
		__m256i		y = _mm256_loadu_si256((const __m256i *) (b + i));
		uint32_t	eq = (uint32_t) _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y));

		if (eq != 0xFFFFFFFFu)
			return i + __builtin_ctz(~eq);
	}
	return gbt_first_diff_scalar(a, b, i, to);
}

#else							/* !GBT_HAVE_X86 */

int
gbt_first_diff_avx2(const char *a, const char *b, int from, int to)
{
	return gbt_first_diff_scalar(a, b, from, to);
}

int
gbt_count_lt16_avx2(const uint64_t *p, uint64_t x)
{
	return gbt_count_lt16_scalar(p, x);
}
int
gbt_count_le16_avx2(const uint64_t *p, uint64_t x)
{
	return gbt_count_le16_scalar(p, x);
}
int
gbt_count_lt16_avx512(const uint64_t *p, uint64_t x)
{
	return gbt_count_lt16_scalar(p, x);
}
int
gbt_count_le16_avx512(const uint64_t *p, uint64_t x)
{
	return gbt_count_le16_scalar(p, x);
}
int
gbt_count_words16_avx2(const uint64_t *const *w, int at, const uint64_t *x, int nwords,
					   bool inclusive)
{
	return gbt_count_words16_scalar(w, at, x, nwords, inclusive);
}
int
gbt_count_words16_avx512(const uint64_t *const *w, int at, const uint64_t *x, int nwords,
						 bool inclusive)
{
	return gbt_count_words16_scalar(w, at, x, nwords, inclusive);
}

#endif

gbt_count16_fn gbt_count_lt16 = gbt_count_lt16_scalar;
gbt_count16_fn gbt_count_le16 = gbt_count_le16_scalar;
gbt_count16_words_fn gbt_count_words16 = gbt_count_words16_scalar;
gbt_first_diff_fn gbt_first_diff = gbt_first_diff_scalar;
static GbtSimdLevel active_level = GBT_SIMD_SCALAR;

GbtSimdLevel
gbt_simd_best(void)
{
#ifdef GBT_HAVE_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt"))
		return GBT_SIMD_AVX512;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt"))
		return GBT_SIMD_AVX2;
#endif
	return GBT_SIMD_SCALAR;
}

GbtSimdLevel
gbt_simd_active(void)
{
	return active_level;
}

const char *
gbt_simd_name(GbtSimdLevel level)
{
	switch (level)
	{
		case GBT_SIMD_AVX512:
			return "avx512";
		case GBT_SIMD_AVX2:
			return "avx2";
		default:
			return "scalar";
	}
}

int
gbt_simd_set(GbtSimdLevel level)
{
	if (level > gbt_simd_best())
		return -1;
	switch (level)
	{
		case GBT_SIMD_AVX512:
			gbt_count_lt16 = gbt_count_lt16_avx512;
			gbt_count_le16 = gbt_count_le16_avx512;
			gbt_count_words16 = gbt_count_words16_avx512;
			gbt_first_diff = gbt_first_diff_avx2;
			break;
		case GBT_SIMD_AVX2:
			gbt_count_lt16 = gbt_count_lt16_avx2;
			gbt_count_le16 = gbt_count_le16_avx2;
			gbt_count_words16 = gbt_count_words16_avx2;
			gbt_first_diff = gbt_first_diff_avx2;
			break;
		default:
			gbt_count_lt16 = gbt_count_lt16_scalar;
			gbt_count_le16 = gbt_count_le16_scalar;
			gbt_count_words16 = gbt_count_words16_scalar;
			gbt_first_diff = gbt_first_diff_scalar;
			break;
	}
	active_level = level;
	return 0;
}
