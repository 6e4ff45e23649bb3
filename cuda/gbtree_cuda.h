/*-------------------------------------------------------------------------
 *
 * gbtree_cuda.h
 *	  The C interface of the CUDA side of gbtree (libgbtree_cuda.so).
 *
 * Only the GPU service (a background worker, see ARCHITECTURE.md) will
 * dlopen this library; gbtree.so never links it.  Everything here is
 * plain C and returns error codes instead of throwing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_CUDA_H
#define GBTREE_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define GBT_CUDA_ABI_VERSION 1

/* 0 on success; fills a short device description. */
int			gbt_cuda_probe(char *desc, int desclen, uint64_t *mem_total);

/*
 * For each of n query keys, the number of the 16 keys of its block that
 * are < the query (the in-page count of src/simd.c), computed on the
 * device.  Used to check the device path against the CPU one.
 */
int			gbt_cuda_count_lt16(const uint64_t *blocks, const uint64_t *queries,
								int *counts, int n);

int			gbt_cuda_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif							/* GBTREE_CUDA_H */
