/*-------------------------------------------------------------------------
 *
 * gbtree_cuda.h
 *	  The C interface of the CUDA side of gbtree (libgbtree_cuda.so): the
 *	  whole host/device contract, in one header.
 *
 * Only the GPU service (a background worker, see src/README) dlopens this
 * library; gbtree.so never links it, and only gpu_service.c, cuda/ and the
 * CPU stand-in of the tests (test/gpu/emu) include this header.  The
 * constants and types both sides build (return codes, GbtCudaQuery,
 * GbtCudaTreePlan) are in src/gbtree_node.h, the PostgreSQL-free page
 * header, so that the backend needs nothing from here.  Everything here is
 * plain C, never throws, and returns those codes.
 *
 * Every entry point is declared through a function type (GbtCuda...Fn),
 * which the service's table of entry points (resolved with dlsym) uses
 * too: a changed signature fails to compile on both sides.
 *
 * Device copies: a GbtCudaCopy is the device copy of one index, its 8 KB
 * page images addressed by block number.  The service ships page images
 * with gbt_cuda_copy_put_pages() and runs batched lookups with
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
 * Device sorts: a GbtCudaSort holds (key, TID) entries -- a build's,
 * streamed in chunks, or a large insert batch's -- sorts them by (key,
 * TID >> 16) (the TID's low 16 bits are flags that never tell two entries
 * apart, as in the CPU radix sort; the sort is stable, so the order is
 * exactly the CPU's), and gives them back, lays a tree's pages out from
 * them, or finds each one's leaf in a device copy.  Entries are 16-byte
 * (key, tid) pairs as GbtEntry.
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

#include "gbtree_node.h"		/* GbtCudaQuery, GbtCudaTreePlan, return codes */

#ifdef __cplusplus
extern "C"
{
#endif

#define GBT_CUDA_ABI_VERSION 3

typedef struct GbtCudaCopy GbtCudaCopy;
typedef struct GbtCudaSort GbtCudaSort;

/* ------------------------------------------------------------------------
 * The library and the device
 * ------------------------------------------------------------------------
 */

typedef int (GbtCudaAbiVersionFn) (void);
extern GbtCudaAbiVersionFn gbt_cuda_abi_version;

/* 0 on success; fills a short device description. */
typedef int (GbtCudaProbeFn) (char *desc, int desclen, uint64_t *mem_total);
extern GbtCudaProbeFn gbt_cuda_probe;

/*
 * Select the device for the calling thread and initialise the CUDA
 * context.  0 on success, else a negative code with a message in err.
 */
typedef int (GbtCudaInitFn) (int device, char *err, int errlen);
extern GbtCudaInitFn gbt_cuda_init;

/* Text of the last error of the calling thread ("" if none). */
typedef const char *(GbtCudaLastErrorFn) (void);
extern GbtCudaLastErrorFn gbt_cuda_last_error;

/* Page-lock (pin) / unpin host memory, e.g. the service's shared buffers. */
typedef int (GbtCudaHostRegisterFn) (void *ptr, size_t bytes);
extern GbtCudaHostRegisterFn gbt_cuda_host_register;
typedef int (GbtCudaHostUnregisterFn) (void *ptr);
extern GbtCudaHostUnregisterFn gbt_cuda_host_unregister;

/* ------------------------------------------------------------------------
 * Device copies and lookups
 * ------------------------------------------------------------------------
 */

/*
 * A device copy with room for capacity_blocks pages (it grows on demand).
 * Blocks never put read as all-zero pages, which a lookup that reaches
 * them reports as corruption.
 */
typedef int (GbtCudaCopyCreateFn) (GbtCudaCopy **copy, uint32_t capacity_blocks);
extern GbtCudaCopyCreateFn gbt_cuda_copy_create;

/*
 * Write npages 8 KB images (images[i * 8192 ...]) to blocks blknos[i].
 * Grows the copy, keeping its content, when a blkno is beyond capacity.
 * If a blkno appears twice, the later image wins.  Synchronous: the
 * images may be reused once it returns.
 */
typedef int (GbtCudaCopyPutPagesFn) (GbtCudaCopy *copy, const uint32_t *blknos,
									 const void *images, uint32_t npages);
extern GbtCudaCopyPutPagesFn gbt_cuda_copy_put_pages;

/* Same for the npages consecutive blocks first_blkno.. (bulk loading). */
typedef int (GbtCudaCopyPutRangeFn) (GbtCudaCopy *copy, uint32_t first_blkno,
									 const void *images, uint32_t npages);
extern GbtCudaCopyPutRangeFn gbt_cuda_copy_put_range;

/* Number of blocks the copy holds (capacity) and its device memory. */
typedef uint32_t (GbtCudaCopyNblocksFn) (const GbtCudaCopy *copy);
extern GbtCudaCopyNblocksFn gbt_cuda_copy_nblocks;
typedef uint64_t (GbtCudaCopyDeviceBytesFn) (const GbtCudaCopy *copy);
extern GbtCudaCopyDeviceBytesFn gbt_cuda_copy_device_bytes;

/* Free the copy and its scratch buffers.  NULL is accepted. */
typedef void (GbtCudaCopyFreeFn) (GbtCudaCopy *copy);
extern GbtCudaCopyFreeFn gbt_cuda_copy_free;

/*
 * Batched lookup from root_blkno (GBT_ROOT_BLKNO for the value tree).
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
 * fixed blocks, a page whose low key is above the target, a right-link
 * loop, too many levels or hops, a zero page); GBT_CUDA_ENOMEM,
 * GBT_CUDA_EDEVICE or GBT_CUDA_EINVAL otherwise.  On any error nothing
 * but *out_total (0) is meaningful.
 *
 * Host buffers may be ordinary memory; pinning them with
 * gbt_cuda_host_register() makes the transfers faster.
 */
typedef int (GbtCudaLookupFn) (GbtCudaCopy *copy, uint32_t root_blkno,
							   const GbtCudaQuery *queries, uint32_t nqueries,
							   int queries_sorted, uint64_t *offsets,
							   uint64_t *out_keys, uint64_t *out_tids,
							   uint64_t out_capacity, uint64_t *out_total);
extern GbtCudaLookupFn gbt_cuda_lookup;

/*
 * Batched lookup in a tree of nwords-word keys (src/README, "Multi-word
 * keys"), from root_blkno: queries holds nqueries ranges of key words,
 * each lo[nwords] then hi[nwords], both inclusive (every TID of a key),
 * sorted and disjoint.  The matches of query i, in (key, TID) order, are
 * at [offsets[i], offsets[i + 1]): their words in out_words (nwords a
 * match) and TIDs in out_tids.  Returns and errors as gbt_cuda_lookup's.
 * Optional: a service whose library lacks it keeps multi-word indexes on
 * the CPU.
 */
typedef int (GbtCudaLookupWordsFn) (GbtCudaCopy *copy, uint32_t root_blkno, int nwords,
									const uint64_t *queries, uint32_t nqueries,
									uint64_t *offsets, uint64_t *out_words,
									uint64_t *out_tids, uint64_t out_capacity,
									uint64_t *out_total);
extern GbtCudaLookupWordsFn gbt_cuda_lookup_words;

/*
 * For each of n query keys, the number of the 16 keys of its block that
 * are < the query (the in-page count of src/simd.c), computed on the
 * device.  Used to check the device path against the CPU one.
 */
typedef int (GbtCudaCountLt16Fn) (const uint64_t *blocks, const uint64_t *queries,
								  int *counts, int n);
extern GbtCudaCountLt16Fn gbt_cuda_count_lt16;

/* ------------------------------------------------------------------------
 * Device sorts: builds and insert batches
 * ------------------------------------------------------------------------
 */

/* Room on the device for n entries (GBT_CUDA_ENOMEM when it does not fit). */
typedef int (GbtCudaSortCreateFn) (uint64_t n, GbtCudaSort **out);
extern GbtCudaSortCreateFn gbt_cuda_sort_create;

/*
 * Entries [offset, offset + count) from host memory (key, tid pairs).
 * Puts beyond the room grow it (a build streaming more entries than it
 * expected); the sort holds entries up to the end of the furthest put,
 * and its caller fills every one of them.
 */
typedef int (GbtCudaSortPutFn) (GbtCudaSort *s, uint64_t offset,
								const uint64_t *entries, uint64_t count);
extern GbtCudaSortPutFn gbt_cuda_sort_put;

/* Entries the sort holds: the end of the furthest put. */
typedef uint64_t (GbtCudaSortCountFn) (GbtCudaSort *s);
extern GbtCudaSortCountFn gbt_cuda_sort_count;

/*
 * Sort the entries put so far by (key, tid >> 16); tid_sorted says they
 * arrived in TID order (a serial heap scan), which saves the TID passes.
 */
typedef int (GbtCudaSortRunFn) (GbtCudaSort *s, int tid_sorted);
extern GbtCudaSortRunFn gbt_cuda_sort_run;

/* Sorted entries [offset, offset + count) into host memory. */
typedef int (GbtCudaSortGetFn) (GbtCudaSort *s, uint64_t offset,
								uint64_t *entries, uint64_t count);
extern GbtCudaSortGetFn gbt_cuda_sort_get;

/*
 * Lay out pages [first, first + count) of the tree planned by plan
 * (gbtree_node.h) in build order (level by level from the leaves, each
 * level left to right; the top page last) from the sorted entries, on the
 * device, and copy them into host memory (count * 8192 bytes).  The pages
 * are what build.c's build_tree writes, byte for byte.  Call after
 * gbt_cuda_sort_run().
 */
typedef int (GbtCudaSortLayoutFn) (GbtCudaSort *s, const GbtCudaTreePlan *plan,
								   uint64_t first, uint32_t count, void *pages);
extern GbtCudaSortLayoutFn gbt_cuda_sort_layout;

/*
 * Batched inserts: for the sorted entries [offset, offset + count), the
 * block of the leaf each belongs in according to the device copy of the
 * tree rooted at root_blkno (a Lehman-Yao descent comparing (key, TID)),
 * or GBT_NO_BLOCK where the copy's pages do not lead to one.  The blocks
 * are hints: the backend checks each under its buffer lock and descends
 * itself when one is wrong.  Call after gbt_cuda_sort_run().
 */
typedef int (GbtCudaSortLeavesFn) (GbtCudaSort *s, const GbtCudaCopy *copy,
								   uint32_t root_blkno, uint64_t offset, uint64_t count,
								   uint32_t *leaves);
extern GbtCudaSortLeavesFn gbt_cuda_sort_leaves;

/* Device milliseconds of the last run (sort only, no transfers). */
typedef double (GbtCudaSortLastMsFn) (GbtCudaSort *s);
extern GbtCudaSortLastMsFn gbt_cuda_sort_last_ms;

typedef void (GbtCudaSortFreeFn) (GbtCudaSort *s);
extern GbtCudaSortFreeFn gbt_cuda_sort_free;

#ifdef __cplusplus
}
#endif

#endif							/* GBTREE_CUDA_H */
