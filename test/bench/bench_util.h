/*
 * bench_util.h
 *	  What the server-less benchmarks (bench_node, bench_multiword,
 *	  bench_textkey) share: a xorshift generator, seeded, and a monotonic
 *	  clock in nanoseconds.
 */
#ifndef GBT_BENCH_UTIL_H
#define GBT_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

static uint64_t rng = 0x2545F4914F6CDD1DULL;

static uint64_t
xrand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#endif							/* GBT_BENCH_UTIL_H */
