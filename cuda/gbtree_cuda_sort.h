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

/*
 * Entries [offset, offset + count) from host memory (key, tid pairs).
 * Puts beyond the room grow it (a build streaming more entries than it
 * expected); the sort holds entries up to the end of the furthest put,
 * and its caller fills every one of them.
 */
extern int	gbt_cuda_sort_put(GbtCudaSort *s, uint64_t offset,
							  const uint64_t *entries, uint64_t count);

/* Entries the sort holds: the end of the furthest put. */
extern uint64_t gbt_cuda_sort_count(GbtCudaSort *s);

/*
 * Sort the entries put so far by (key, tid >> 16); tid_sorted says they
 * arrived in TID order (a serial heap scan), which saves the TID passes.
 */
extern int	gbt_cuda_sort_run(GbtCudaSort *s, int tid_sorted);

/* Sorted entries [offset, offset + count) into host memory. */
extern int	gbt_cuda_sort_get(GbtCudaSort *s, uint64_t offset,
							  uint64_t *entries, uint64_t count);

/*
 * The shape of a tree laid out from all n sorted entries, as build.c lays
 * it out on the CPU: npages[l] pages at level l (leaves first), page p of
 * a level taking inputs [in * p / np, in * (p + 1) / np) of the in inputs
 * (the entries for the leaves, one separator per page of the level below
 * otherwise), level l's pages at blocks first_blkno[l].. except the top
 * page, which goes to root_blkno.  header[0] and header[1] are the first
 * GBT_BODY_OFFSET bytes of an empty leaf and inner page (PostgreSQL's page
 * header, which this library does not know).
 */
#define GBT_CUDA_MAX_LEVELS		16

typedef struct GbtCudaTreePlan
{
	uint64_t	n;
	uint32_t	nlevels;
	uint32_t	root_blkno;
	uint16_t	tree_flags;		/* GBT_F_NULLTREE or 0 */
	uint16_t	pad[3];
	uint64_t	npages[GBT_CUDA_MAX_LEVELS];
	uint32_t	first_blkno[GBT_CUDA_MAX_LEVELS];
	unsigned char header[2][64];
} GbtCudaTreePlan;

/*
 * Lay out pages [first, first + count) of the tree in build order (level
 * by level from the leaves, each level left to right; the top page last)
 * from the sorted entries, on the device, and copy them into host memory
 * (count * 8192 bytes).  The pages are what build.c's build_tree writes,
 * byte for byte.  Call after gbt_cuda_sort_run().
 */
extern int	gbt_cuda_sort_layout(GbtCudaSort *s, const GbtCudaTreePlan *plan,
								 uint64_t first, uint32_t count, void *pages);

/*
 * Batched inserts: for the sorted entries [offset, offset + count), the
 * block of the leaf each belongs in according to the device copy of the
 * tree rooted at root_blkno (a Lehman-Yao descent comparing (key, TID)),
 * or 0xFFFFFFFF where the copy's pages do not lead to one.  The blocks are
 * hints: the backend checks each under its buffer lock and descends itself
 * when one is wrong.  Call after gbt_cuda_sort_run().
 */
struct GbtCudaCopy;
extern int	gbt_cuda_sort_leaves(GbtCudaSort *s, const struct GbtCudaCopy *copy,
								 uint32_t root_blkno, uint64_t offset, uint64_t count,
								 uint32_t *leaves);

/* Device milliseconds of the last run (sort only, no transfers). */
extern double gbt_cuda_sort_last_ms(GbtCudaSort *s);

extern void gbt_cuda_sort_free(GbtCudaSort *s);

#ifdef __cplusplus
}
#endif

#endif							/* GBTREE_CUDA_SORT_H */
