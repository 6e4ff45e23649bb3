/*
 * test_common.h
 *	  What the multi-word CUDA tests (test_words, test_wsort, test_wtree)
 *	  share: the pass/fail counts and checks, and a xorshift generator
 *	  whose seed each test sets first.
 */
#ifndef GBT_CUDA_TEST_COMMON_H
#define GBT_CUDA_TEST_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

static int	npass = 0,
			nfail = 0;

#define EXPECT(cond, ...) \
	do { if (cond) npass++; else { nfail++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

#define CUDA_OK(call) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(2); } } while (0)

static uint64_t rng;

static uint64_t
xrand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#endif							/* GBT_CUDA_TEST_COMMON_H */
