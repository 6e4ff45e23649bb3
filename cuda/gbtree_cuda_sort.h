/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_sort.h
 *	  C interface of the device sort behind CREATE INDEX on the GPU (part of
 *	  libgbtree_cuda.so, loaded by the GPU service with dlopen).
 *
 * A build streams its (key, TID) entries in, in chunks, sorts them on the
 * device by (key, TID >> 16) -- the TID's low 16 bits are flags that never
 * tell two entries apart, as in build.c's radix sort -- and reads them
 * back in order.  The sort is stable, so the result is exactly the CPU
 * build's order.  Entries are 16-byte (key, tid) pairs as GbtEntry.
 *
 * Return codes are gbtree_cuda.h's: 0 or a negative GBT_CUDA_E* code;
 * gbt_cuda_last_error() describes the last failure of this thread.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_CUDA_SORT_H
#define GBTREE_CUDA_SORT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct GbtCudaSort GbtCudaSort;

/* Room on the device for n entries (GBT_CUDA_ENOMEM when it does not fit). */
extern int	gbt_cuda_sort_create(uint64_t n, GbtCudaSort **out);

/* Entries [offset, offset + count) from host memory (key, tid pairs). */
extern int	gbt_cuda_sort_put(GbtCudaSort *s, uint64_t offset,
							  const uint64_t *entries, uint64_t count);

/*
 * Sort the n entries put so far by (key, tid >> 16); tid_sorted says they
 * arrived in TID order (a serial heap scan), which saves the TID passes.
 */
extern int	gbt_cuda_sort_run(GbtCudaSort *s, int tid_sorted);

/* Sorted entries [offset, offset + count) into host memory. */
extern int	gbt_cuda_sort_get(GbtCudaSort *s, uint64_t offset,
							  uint64_t *entries, uint64_t count);

/* Device milliseconds of the last run (sort only, no transfers). */
extern double gbt_cuda_sort_last_ms(GbtCudaSort *s);

extern void gbt_cuda_sort_free(GbtCudaSort *s);

#ifdef __cplusplus
}
#endif

#endif							/* GBTREE_CUDA_SORT_H */
