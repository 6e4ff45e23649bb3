/*
 * bench_multiword.c
 *	  Where the second word of a two-word key (uuid, (int4, timestamptz))
 *	  should live in a leaf: beside the first (interleaved pairs) or in a
 *	  parallel array.  ns per in-page lower-bound search of (w0, w1), the
 *	  two-step count gbtree's pages use (a directory of each 16-slot
 *	  block's last key, then the block), over pages of 320 two-word slots
 *	  (24 bytes a slot with the TID: 7,680 bytes, as a one-word leaf's 480
 *	  slots) filled to 90%.
 *
 *	  Searches compared, each checked against a plain binary search:
 *	    par-lex     parallel arrays, lexicographic branchless count
 *	    beside-lex  interleaved pairs, lexicographic branchless count
 *	    par-first   parallel arrays, count on the first word only, then a
 *	                binary search on the second among first-word ties
 *	    simd.c      par-lex through gbtree's own count for any number of
 *	                words (gbt_count_words16), scalar, AVX2 and AVX-512
 *	  each scalar and AVX2 (par-first uses the first word's AVX2 count).
 *
 *	  Key sets: uuid (random first words, ties never), tenants (8 first
 *	  words a page, 36 entries each), one tenant (every first word of the
 *	  page equal: a big tenant's run of an (int4, timestamptz) index).
 *
 *	  make bench-multiword   (prints a table; see test/bench/README)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gbtree_simd.h"
#include "bench_util.h"

#define SLOTS		320
#define BLOCKS		(SLOTS / 16)	/* 20 */
#define DIRPAD		32
#define USED		(SLOTS * 9 / 10)
#define NQUERIES	(1 << 22)
#define POOL_PAGES	16384			/* 16384 pages of 8 KB (128 MB) */
#define SENT		UINT64_MAX

typedef struct ParPage
{
	uint64_t	w0[SLOTS];
	uint64_t	w1[SLOTS];
	uint64_t	d0[DIRPAD];
	uint64_t	d1[DIRPAD];
	uint64_t	tids[SLOTS];
	char		pad[8192 - (2 * SLOTS + 2 * DIRPAD + SLOTS) * 8];
} ParPage;

typedef struct BesidePage
{
	uint64_t	k[SLOTS][2];
	uint64_t	d[DIRPAD][2];
	uint64_t	tids[SLOTS];
	char		pad[8192 - (2 * SLOTS + 2 * DIRPAD + SLOTS) * 8];
} BesidePage;

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

static inline int
lex_lt(uint64_t a0, uint64_t a1, uint64_t x0, uint64_t x1)
{
	return (a0 < x0) | ((a0 == x0) & (a1 < x1));
}

/* ---- scalar counts ---- */

static inline int
count_par_scalar(const uint64_t *a0, const uint64_t *a1, int n, uint64_t x0, uint64_t x1)
{
	int			c = 0;

	for (int i = 0; i < n; i++)
		c += lex_lt(a0[i], a1[i], x0, x1);
	return c;
}

static inline int
count_beside_scalar(const uint64_t (*a)[2], int n, uint64_t x0, uint64_t x1)
{
	int			c = 0;

	for (int i = 0; i < n; i++)
		c += lex_lt(a[i][0], a[i][1], x0, x1);
	return c;
}

/* ---- AVX2 counts: unsigned compares by flipping the sign bit ---- */

__attribute__((target("avx2,popcnt")))
static inline __m256i
lex_lt4(__m256i a0, __m256i a1, __m256i x0, __m256i x1, __m256i sign)
{
	__m256i		s0 = _mm256_xor_si256(a0, sign);
	__m256i		s1 = _mm256_xor_si256(a1, sign);
	__m256i		lt0 = _mm256_cmpgt_epi64(x0, s0);
	__m256i		eq0 = _mm256_cmpeq_epi64(a0, _mm256_xor_si256(x0, sign));
	__m256i		lt1 = _mm256_cmpgt_epi64(x1, s1);

	return _mm256_or_si256(lt0, _mm256_and_si256(eq0, lt1));
}

__attribute__((target("avx2,popcnt")))
static int
count16_par_avx2(const uint64_t *a0, const uint64_t *a1, uint64_t x0, uint64_t x1)
{
	__m256i		sign = _mm256_set1_epi64x((long long) 0x8000000000000000ULL);
	__m256i		vx0 = _mm256_xor_si256(_mm256_set1_epi64x((long long) x0), sign);
	__m256i		vx1 = _mm256_xor_si256(_mm256_set1_epi64x((long long) x1), sign);
	int			c = 0;

	for (int i = 0; i < 16; i += 4)
	{
		__m256i		m = lex_lt4(_mm256_loadu_si256((const __m256i *) (a0 + i)),
								_mm256_loadu_si256((const __m256i *) (a1 + i)),
								vx0, vx1, sign);

		c += __builtin_popcount(_mm256_movemask_pd(_mm256_castsi256_pd(m)));
	}
	return c;
}

__attribute__((target("avx2,popcnt")))
static int
count16_beside_avx2(const uint64_t (*a)[2], uint64_t x0, uint64_t x1)
{
	__m256i		sign = _mm256_set1_epi64x((long long) 0x8000000000000000ULL);
	__m256i		vx0 = _mm256_xor_si256(_mm256_set1_epi64x((long long) x0), sign);
	__m256i		vx1 = _mm256_xor_si256(_mm256_set1_epi64x((long long) x1), sign);
	int			c = 0;

	for (int i = 0; i < 16; i += 4)
	{
		/* pairs i, i+1 and i+2, i+3; unpack gives matching lanes */
		__m256i		p = _mm256_loadu_si256((const __m256i *) a[i]);
		__m256i		q = _mm256_loadu_si256((const __m256i *) a[i + 2]);
		__m256i		m = lex_lt4(_mm256_unpacklo_epi64(p, q), _mm256_unpackhi_epi64(p, q),
								vx0, vx1, sign);

		c += __builtin_popcount(_mm256_movemask_pd(_mm256_castsi256_pd(m)));
	}
	return c;
}

__attribute__((target("avx2,popcnt")))
static int
count16_first_avx2(const uint64_t *a, uint64_t x, int le)
{
	__m256i		sign = _mm256_set1_epi64x((long long) 0x8000000000000000ULL);
	__m256i		vx = _mm256_xor_si256(_mm256_set1_epi64x((long long) x), sign);
	int			c = 0;

	for (int i = 0; i < 16; i += 4)
	{
		__m256i		s = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (a + i)), sign);
		__m256i		m = le ? _mm256_cmpgt_epi64(s, vx) : _mm256_cmpgt_epi64(vx, s);

		c += __builtin_popcount(_mm256_movemask_pd(_mm256_castsi256_pd(m)));
	}
	return le ? 16 - c : c;
}

/* ---- the searches: slot of the first key >= (x0, x1) ---- */

static int
search_par(const ParPage *pg, uint64_t x0, uint64_t x1, int avx)
{
	int			b,
				s;

	if (avx)
		b = count16_par_avx2(pg->d0, pg->d1, x0, x1) +
			count16_par_avx2(pg->d0 + 16, pg->d1 + 16, x0, x1);
	else
		b = count_par_scalar(pg->d0, pg->d1, DIRPAD, x0, x1);
	if (b >= BLOCKS)
		return SLOTS;
	s = avx ? count16_par_avx2(pg->w0 + b * 16, pg->w1 + b * 16, x0, x1)
		: count_par_scalar(pg->w0 + b * 16, pg->w1 + b * 16, 16, x0, x1);
	return b * 16 + s;
}

static int
search_beside(const BesidePage *pg, uint64_t x0, uint64_t x1, int avx)
{
	int			b,
				s;

	if (avx)
		b = count16_beside_avx2(pg->d, x0, x1) + count16_beside_avx2(pg->d + 16, x0, x1);
	else
		b = count_beside_scalar(pg->d, DIRPAD, x0, x1);
	if (b >= BLOCKS)
		return SLOTS;
	s = avx ? count16_beside_avx2(pg->k + b * 16, x0, x1)
		: count_beside_scalar(pg->k + b * 16, 16, x0, x1);
	return b * 16 + s;
}

/* par-lex through simd.c's count of any number of words */
static int
search_simd(const ParPage *pg, uint64_t x0, uint64_t x1, gbt_count16_words_fn count)
{
	const uint64_t *dir[2] = {pg->d0, pg->d1};
	const uint64_t *w[2] = {pg->w0, pg->w1};
	uint64_t	x[2] = {x0, x1};
	int			b = count(dir, 0, x, 2, false) + count(dir, 16, x, 2, false);

	if (b >= BLOCKS)
		return SLOTS;
	return b * 16 + count(w, b * 16, x, 2, false);
}

/* first word: [lo, hi) of slots whose w0 == x0, then binary search on w1 */
static int
first_bound(const ParPage *pg, uint64_t x0, int le, int avx)
{
	int			b = 0,
				s = 0;

	if (avx)
		b = count16_first_avx2(pg->d0, x0, le) + count16_first_avx2(pg->d0 + 16, x0, le);
	else
		for (int i = 0; i < DIRPAD; i++)
			b += le ? pg->d0[i] <= x0 : pg->d0[i] < x0;
	if (b >= BLOCKS)
		return SLOTS;
	if (avx)
		s = count16_first_avx2(pg->w0 + b * 16, x0, le);
	else
		for (int i = 0; i < 16; i++)
			s += le ? pg->w0[b * 16 + i] <= x0 : pg->w0[b * 16 + i] < x0;
	return b * 16 + s;
}

static int
search_first(const ParPage *pg, uint64_t x0, uint64_t x1, int avx)
{
	int			lo = first_bound(pg, x0, 0, avx);
	int			hi;

	if (lo >= SLOTS || pg->w0[lo] != x0)
		return lo;
	hi = first_bound(pg, x0, 1, avx);
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (pg->w1[mid] < x1)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
search_ref(const ParPage *pg, uint64_t x0, uint64_t x1)
{
	int			lo = 0,
				hi = SLOTS;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (lex_lt(pg->w0[mid], pg->w1[mid], x0, x1))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- pages ---- */

static void
fill_page(ParPage *par, BesidePage *bes, int kind)
{
	uint64_t	w0[USED],
				w1[USED];
	uint64_t	tenant[8];

	for (int t = 0; t < 8; t++)
		tenant[t] = xrand() >> 1;
	qsort(tenant, 8, sizeof(uint64_t), cmp_u64);
	for (int i = 0; i < USED; i++)
	{
		switch (kind)
		{
			case 0:				/* uuid */
				w0[i] = xrand();
				w1[i] = xrand();
				break;
			default:			/* 8 tenants, or one: rising timestamps */
				w0[i] = tenant[kind == 1 ? i / (USED / 8) : 0];
				w1[i] = (i == 0 || w0[i] != w0[i - 1]) ? xrand() >> 8
					: w1[i - 1] + 1 + xrand() % 100000;
				break;
		}
	}
	if (kind == 0)
	{
		qsort(w0, USED, sizeof(uint64_t), cmp_u64);
		for (int i = 1; i < USED; i++)	/* equal w0 (never seen) keeps order */
			if (w0[i] == w0[i - 1] && w1[i] < w1[i - 1])
				w1[i] = w1[i - 1];
	}
	/* spread as a build leaves them: trailing sentinel slots */
	for (int i = 0; i < SLOTS; i++)
	{
		par->w0[i] = i < USED ? w0[i] : SENT;
		par->w1[i] = i < USED ? w1[i] : SENT;
		par->tids[i] = (uint64_t) (i + 1) << 16;
		bes->k[i][0] = par->w0[i];
		bes->k[i][1] = par->w1[i];
		bes->tids[i] = par->tids[i];
	}
	for (int b = 0; b < DIRPAD; b++)
	{
		par->d0[b] = b < BLOCKS ? par->w0[b * 16 + 15] : SENT;
		par->d1[b] = b < BLOCKS ? par->w1[b * 16 + 15] : SENT;
		bes->d[b][0] = par->d0[b];
		bes->d[b][1] = par->d1[b];
	}
}

int
main(void)
{
	ParPage    *par = aligned_alloc(64, sizeof(ParPage) * POOL_PAGES);
	BesidePage *bes = aligned_alloc(64, sizeof(BesidePage) * POOL_PAGES);
	uint32_t   *qpage = malloc(sizeof(uint32_t) * NQUERIES);
	uint64_t   *q0 = malloc(sizeof(uint64_t) * NQUERIES);
	uint64_t   *q1 = malloc(sizeof(uint64_t) * NQUERIES);
	static const char *kinds[] = {"uuid", "8 tenants a page", "one tenant a page"};
	static const char *names[] = {"par-lex", "beside-lex", "par-first", "simd.c"};
	gbt_count16_words_fn simd_fns[3] = {gbt_count_words16_scalar, gbt_count_words16_avx2,
	gbt_count_words16_avx512};
	int			have_avx512 = __builtin_cpu_supports("avx512f") != 0;
	int			have_avx2 = __builtin_cpu_supports("avx2") != 0;
	volatile long sink = 0;

	printf("| keys | search | scalar in cache | scalar out of cache | AVX2 in cache | AVX2 out of cache | AVX-512 in cache | AVX-512 out of cache |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (int kind = 0; kind < 3; kind++)
	{
		double		res[4][3][2];

		for (int p = 0; p < POOL_PAGES; p++)
			fill_page(&par[p], &bes[p], kind);
		for (int mode = 0; mode < 2; mode++)
		{
			/* probes: present keys and keys between them */
			for (int i = 0; i < NQUERIES; i++)
			{
				uint32_t	p = mode == 0 ? 0 : (uint32_t) (xrand() % POOL_PAGES);
				int			s = (int) (xrand() % USED);

				qpage[i] = p;
				q0[i] = par[p].w0[s];
				q1[i] = par[p].w1[s] + (xrand() & 1);
			}
			/* every search agrees with the reference */
			for (int i = 0; i < 100000; i++)
			{
				const ParPage *pg = &par[qpage[i]];
				int			r = search_ref(pg, q0[i], q1[i]);

				for (int avx = 0; avx <= have_avx2; avx++)
					if (search_par(pg, q0[i], q1[i], avx) != r ||
						search_beside(&bes[qpage[i]], q0[i], q1[i], avx) != r ||
						search_first(pg, q0[i], q1[i], avx) != r ||
						search_simd(pg, q0[i], q1[i], simd_fns[avx]) != r)
					{
						fprintf(stderr, "mismatch: kind %d probe %d avx %d\n", kind, i, avx);
						return 1;
					}
			}
			for (int i = 0; have_avx512 && i < 100000; i++)
				if (search_simd(&par[qpage[i]], q0[i], q1[i], simd_fns[2]) !=
					search_ref(&par[qpage[i]], q0[i], q1[i]))
				{
					fprintf(stderr, "mismatch: kind %d probe %d avx512\n", kind, i);
					return 1;
				}
			for (int alg = 0; alg < 4; alg++)
				for (int avx = 0; avx < 3; avx++)
				{
					double		t0;

					res[alg][avx][mode] = 0;
					if ((avx == 1 && !have_avx2) || (avx == 2 && (!have_avx512 || alg < 3)))
						continue;
					t0 = now_ns();
					for (int i = 0; i < NQUERIES; i++)
					{
						if (alg == 0)
							sink += search_par(&par[qpage[i]], q0[i], q1[i], avx);
						else if (alg == 1)
							sink += search_beside(&bes[qpage[i]], q0[i], q1[i], avx);
						else if (alg == 2)
							sink += search_first(&par[qpage[i]], q0[i], q1[i], avx);
						else
							sink += search_simd(&par[qpage[i]], q0[i], q1[i], simd_fns[avx]);
					}
					res[alg][avx][mode] = (now_ns() - t0) / NQUERIES;
				}
		}
		for (int alg = 0; alg < 4; alg++)
			printf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", kinds[kind], names[alg],
				   res[alg][0][0], res[alg][0][1], res[alg][1][0], res[alg][1][1],
				   res[alg][2][0], res[alg][2][1]);
	}
	return sink == 42;
}
