/*-------------------------------------------------------------------------
 *
 * gbtree_simd.h
 *	  Branchless counts over 16-slot blocks of normalized keys.
 *
 * Three implementations (AVX-512, AVX2, portable scalar) give identical
 * results; one is chosen at load time from CPUID, never from -march.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_SIMD_H
#define GBTREE_SIMD_H

#include <stdbool.h>
#include <stdint.h>

typedef enum GbtSimdLevel
{
	GBT_SIMD_SCALAR = 0,
	GBT_SIMD_AVX2 = 1,
	GBT_SIMD_AVX512 = 2
} GbtSimdLevel;

/* number of the 16 keys at p that are < x (lt) or <= x (le) */
typedef int (*gbt_count16_fn) (const uint64_t *p, uint64_t x);

extern gbt_count16_fn gbt_count_lt16;
extern gbt_count16_fn gbt_count_le16;

/*
 * Multi-word keys: number of the 16 slots at w[0..nwords)[at..] whose
 * key is below (inclusive: at or below) x[0..nwords), word by word
 */
typedef int (*gbt_count16_words_fn) (const uint64_t *const *w, int at, const uint64_t *x,
									 int nwords, bool inclusive);

extern gbt_count16_words_fn gbt_count_words16;

/* the first index in [from, to) where a and b differ, or to */
typedef int (*gbt_first_diff_fn) (const char *a, const char *b, int from, int to);
extern gbt_first_diff_fn gbt_first_diff;
extern int	gbt_first_diff_scalar(const char *a, const char *b, int from, int to);
extern int	gbt_first_diff_avx2(const char *a, const char *b, int from, int to);

extern GbtSimdLevel gbt_simd_best(void);
extern GbtSimdLevel gbt_simd_active(void);
extern int	gbt_simd_set(GbtSimdLevel level);	/* 0 ok, -1 if CPU lacks it */
extern const char *gbt_simd_name(GbtSimdLevel level);

/* direct access for tests and benchmarks */
extern int	gbt_count_lt16_scalar(const uint64_t *p, uint64_t x);
extern int	gbt_count_le16_scalar(const uint64_t *p, uint64_t x);
extern int	gbt_count_lt16_avx2(const uint64_t *p, uint64_t x);
extern int	gbt_count_le16_avx2(const uint64_t *p, uint64_t x);
extern int	gbt_count_lt16_avx512(const uint64_t *p, uint64_t x);
extern int	gbt_count_le16_avx512(const uint64_t *p, uint64_t x);
extern int	gbt_count_words16_scalar(const uint64_t *const *w, int at, const uint64_t *x,
									 int nwords, bool inclusive);
extern int	gbt_count_words16_avx2(const uint64_t *const *w, int at, const uint64_t *x,
								   int nwords, bool inclusive);
extern int	gbt_count_words16_avx512(const uint64_t *const *w, int at, const uint64_t *x,
									 int nwords, bool inclusive);

#endif							/* GBTREE_SIMD_H */
