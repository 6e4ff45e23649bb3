/*-------------------------------------------------------------------------
 *
 * gbtree_cuda.h
 *	  The C interface of the CUDA side of gbtree (libgbtree_cuda.so).
 *
 * Only the GPU service (a background worker, see ARCHITECTURE.md) will
 * dlopen this library; gbtree.so never links it.  Everything here is
 * plain C, never throws, and returns error codes; no PostgreSQL headers.
 *
 * Model: a GbtCudaCopy is the device copy of one index, its 8 KB page
 * images addressed by block number.  The service ships page images with
 * gbt_cuda_copy_put_pages() and runs batched lookups with
 * gbt_cuda_lookup(): a warp-cooperative descent from the root (Lehman-Yao
 * move-right included), a count of the matches of every query walking
 * right-links as far as needed, an exclusive prefix sum of the counts,
 * then a fill pass that writes the matches.
 *
 * Memory: the page array (capacity x 8 KB; grows by 25% + 64 blocks when a
 * put goes beyond it), a page staging buffer (largest put), and a lookup
 * workspace sized by the largest batch seen: about 120 bytes per query plus
 * CUB scratch, and 16 bytes per result (x 1.25).  Nothing shrinks until
 * gbt_cuda_copy_free().
 *
 * Unsorted batches of 16384 queries or more (GBT_CUDA_SORT_MIN in the
 * environment at copy creation overrides) are sorted on the device by
 * their low key before the descent, so that neighbouring queries share
 * paths and leaves; results still come out in batch order.  Sorted (or
 * device-sorted) batches with at least 2 queries per block of the copy
 * are resolved one query per lane in the leaf they share; the others, and
 * queries that need TID comparisons or span more than two leaves, take the
 * warp-cooperative path above.  Either way the answer is the same.
 *
 * Threads and streams: each copy owns one CUDA stream and its own device
 * and pinned scratch buffers, and every call on a copy is synchronous
 * (returns when its work on the device is done).  Calls on one copy must
 * not run concurrently (serialize them in the caller); calls on different
 * copies may run from different threads.  gbt_cuda_init() selects the
 * device for the calling thread (call it once in each thread that uses
 * the library).  gbt_cuda_last_error() is per thread.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_CUDA_H
#define GBTREE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define GBT_CUDA_ABI_VERSION 3

/* gbt_cuda_lookup's queries_sorted for a batch of bare point keys */
#define GBT_CUDA_POINTS		2

/* return codes: 0 ok, > 0 "retry with more room", < 0 errors */
#define GBT_CUDA_OK			0
#define GBT_CUDA_ESPACE		1	/* results do not fit: *out_total says how many */
#define GBT_CUDA_EINVAL		(-1)	/* bad argument */
#define GBT_CUDA_ECORRUPT	(-2)	/* inconsistent page images: use the CPU path */
#define GBT_CUDA_ENOMEM		(-3)	/* device or pinned host memory exhausted */
#define GBT_CUDA_EDEVICE	(-4)	/* any other CUDA error (no device, driver) */

/* 0 on success; fills a short device description. */
int			gbt_cuda_probe(char *desc, int desclen, uint64_t *mem_total);

int			gbt_cuda_abi_version(void);

/*
 * Select the device for the calling thread and initialise the CUDA
 * context.  0 on success, else a negative code with a message in err.
 */
int			gbt_cuda_init(int device, char *err, int errlen);

/* Text of the last error of the calling thread ("" if none). */
const char *gbt_cuda_last_error(void);

typedef struct GbtCudaCopy GbtCudaCopy;

/*
 * A device copy with room for capacity_blocks pages (it grows on demand).
 * Blocks never put read as all-zero pages, which a lookup that reaches
 * them reports as corruption.
 */
int			gbt_cuda_copy_create(GbtCudaCopy **copy, uint32_t capacity_blocks);

/*
 * Write npages 8 KB images (images[i * 8192 ...]) to blocks blknos[i].
 * Grows the copy, keeping its content, when a blkno is beyond capacity.
 * If a blkno appears twice, the later image wins.  Synchronous: the
 * images may be reused once it returns.
 */
int			gbt_cuda_copy_put_pages(GbtCudaCopy *copy, const uint32_t *blknos,
									const void *images, uint32_t npages);

/* Same for the npages consecutive blocks first_blkno.. (bulk loading). */
int			gbt_cuda_copy_put_range(GbtCudaCopy *copy, uint32_t first_blkno,
									const void *images, uint32_t npages);

/* Number of blocks the copy holds (capacity) and its device memory. */
uint32_t	gbt_cuda_copy_nblocks(const GbtCudaCopy *copy);
uint64_t	gbt_cuda_copy_device_bytes(const GbtCudaCopy *copy);

/* Free the copy and its scratch buffers.  NULL is accepted. */
void		gbt_cuda_copy_free(GbtCudaCopy *copy);

/*
 * A query matches the entries e with (lo_key, lo_tid) <= e < (hi_key, hi_tid)
 * in (key, TID) order.  Equality k: lo = (k, 0), hi = (k, UINT64_MAX);
 * a <= k <= b: lo = (a, 0), hi = (b, UINT64_MAX).  lo >= hi matches nothing.
 */
typedef struct GbtCudaQuery
{
	uint64_t	lo_key;
	uint64_t	lo_tid;
	uint64_t	hi_key;
	uint64_t	hi_tid;
} GbtCudaQuery;

/*
 * Batched lookup from root_blkno (1 for the value tree).
 *
 * offsets [nqueries + 1]: exclusive prefix sum of the match counts
 *     (offsets[nqueries] = total).
 * out_keys (may be NULL), out_tids [out_capacity]: the matches of query i
 *     in (key, TID) order at [offsets[i], offsets[i + 1]).
 * queries_sorted: a hint that queries come in ascending lo order (the
 *     answer is the same either way); or GBT_CUDA_POINTS: queries is then
 *     an array of nqueries point keys (uint64_t), in any order and maybe
 *     repeated, which the device sorts and deduplicates into equality
 *     queries; offsets then covers the distinct keys in key order.
 *
 * Returns 0 when everything was written; GBT_CUDA_ESPACE when *out_total >
 * out_capacity (offsets and *out_total are valid, the outputs are not);
 * GBT_CUDA_ECORRUPT when a page reached is inconsistent (bad page id,
 * kind, level or capacity, a child or right-link out of range or to the
 * fixed blocks 0-2, a page whose low key is above the target, a right-link
 * loop, too many levels or hops, a zero page); GBT_CUDA_ENOMEM,
 * GBT_CUDA_EDEVICE or GBT_CUDA_EINVAL otherwise.  On any error nothing
 * but *out_total (0) is meaningful.
 *
 * Host buffers may be ordinary memory; pinning them with
 * gbt_cuda_host_register() makes the transfers faster.
 */
int			gbt_cuda_lookup(GbtCudaCopy *copy, uint32_t root_blkno,
							const GbtCudaQuery *queries, uint32_t nqueries,
							int queries_sorted, uint64_t *offsets,
							uint64_t *out_keys, uint64_t *out_tids,
							uint64_t out_capacity, uint64_t *out_total);

/* Page-lock (pin) / unpin host memory, e.g. the service's shared buffers. */
int			gbt_cuda_host_register(void *ptr, size_t bytes);
int			gbt_cuda_host_unregister(void *ptr);

/*
 * For each of n query keys, the number of the 16 keys of its block that
 * are < the query (the in-page count of src/simd.c), computed on the
 * device.  Used to check the device path against the CPU one.
 */
int			gbt_cuda_count_lt16(const uint64_t *blocks, const uint64_t *queries,
								int *counts, int n);

#ifdef __cplusplus
}
#endif

#endif							/* GBTREE_CUDA_H */
