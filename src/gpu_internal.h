/*-------------------------------------------------------------------------
 *
 * gpu_internal.h
 *	  What the three backend files of the GPU path share: gpu_client.c
 *	  (transport: requests, staging, copies and their freshness,
 *	  fallbacks), gpu_build.c (CREATE INDEX on the GPU) and gpu_lookup.c
 *	  (scans' lookups, insert batches).  Nothing else includes it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPU_INTERNAL_H
#define GPU_INTERNAL_H

#include "access/xlogdefs.h"
#include "storage/dsm.h"

#include "gbtree_gpu.h"

/* gpu_client.c */
extern int gbt_gpu_find_copy(Oid indexoid);
extern void gbt_gpu_count_fallback(const char *why, uint64 *counter);
extern void gbt_gpu_abandon_request(void);
extern void gbt_gpu_staging_release(void);
extern char *gbt_gpu_staging_acquire(Size size);
extern GbtGpuRequest *gbt_gpu_submit_request(GbtGpuOp op, int copyno, uint64 gen,
							dsm_segment *seg, bool staged, const uint64 *args,
							char *errbuf, Size errlen);
extern int gbt_gpu_wait_request(GbtGpuRequest *req, uint64 *total, double *ms,
							char *errbuf, Size errlen);
extern int gbt_gpu_submit_and_wait(GbtGpuOp op, int copyno, uint64 gen,
							dsm_segment *seg, bool staged, const uint64 *args,
							uint64 *total, double *ms, char *errbuf, Size errlen);
extern int gbt_gpu_get_copy(Relation index);
extern void gbt_gpu_copy_restart_locked(GbtGpuCopy *c, Relation index);
extern void gbt_gpu_copy_loaded(GbtGpuCopy *c, uint64 gen, BlockNumber nblocks,
							XLogRecPtr standby_lsn);
extern void gbt_gpu_count_shipped(int copyno, uint64 shipped);
extern int gbt_gpu_copy_for_request(Relation index, int *copyno, uint64 *gen,
							char *errbuf, Size errlen);
extern bool gbt_gpu_failed(Relation index, bool build, const char *why,
							uint64 *counter);
extern uint64 *gbt_gpu_fallback_counter(int rc);
extern bool gbt_gpu_service_usable(Relation index, bool build);
extern char *gbt_gpu_transfer_buffer(Size size, dsm_segment **seg);
extern void gbt_gpu_transfer_done(dsm_segment *seg);
extern Size gbt_gpu_transfer_entries(void);

/* gpu_build.c */
extern void gbt_gpu_sort_end(uint64 slot);
extern int gbt_gpu_sort_start(const GbtEntry *in, Size n, bool tid_sorted,
							GbtGpuSortTimes *times, uint64 *slot, char *errbuf,
							Size errlen);
extern Size gbt_gpu_sort_capacity(void);
extern int gbt_gpu_sort_fetch(uint64 slot, Size n, GbtEntry *out, BlockNumber *leaves,
							int copyno, uint64 gen, BlockNumber root,
							GbtGpuSortTimes *times, char *errbuf, Size errlen);

#endif							/* GPU_INTERNAL_H */
