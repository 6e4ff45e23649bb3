/*-------------------------------------------------------------------------
 *
 * gbtree_gpu.h
 *	  The GPU path: the GPU service (a background worker, gpu_service.c)
 *	  and its backend side (gpu_client.c, gpu_build.c, gpu_lookup.c).  See
 *	  src/README, "The GPU path".
 *
 * Nothing here touches CUDA: only the service process dlopens
 * libgbtree_cuda.so.  Backends talk to it through shared memory: a table
 * of device copies (one per index, with the set of pages changed since
 * the last sync) and a queue of request slots, whose payloads travel in
 * dynamic shared memory segments.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_GPU_H
#define GBTREE_GPU_H

#include "postgres.h"

#include "storage/block.h"
#include "storage/dsm.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "port/atomics.h"
#include "utils/relcache.h"

#include "gbtree.h"

/* gbtree.device */
typedef enum GbtDeviceMode
{
	GBT_DEVICE_AUTO,
	GBT_DEVICE_CPU,
	GBT_DEVICE_GPU
} GbtDeviceMode;

extern int	gbt_device_mode;
extern int	gbt_gpu_min_batch;
extern int	gbt_gpu_merge_min;
extern int	gbt_gpu_memory_limit_mb;
extern int	gbt_gpu_sort_run;
extern int	gbt_gpu_inject_fault;
extern int	gbt_gpu_staging_mb;
extern char *gbt_device_library;

/*
 * The staging area: a buffer in the main shared memory segment through
 * which one lookup at a time passes its queries and results, mapped (and
 * page-faulted) once per process instead of once per batch as a fresh DSM
 * segment is.  Larger batches, and batches that find it busy, use DSM.
 */
extern char *gbt_gpu_staging;
extern Size gbt_gpu_staging_size;

/* service states (shared memory) */
typedef enum GbtServiceState
{
	GBT_SVC_NOT_LOADED = 0,		/* gbtree not in shared_preload_libraries */
	GBT_SVC_STARTING,
	GBT_SVC_READY,
	GBT_SVC_NO_DEVICE,			/* no library, driver or device: CPU only */
	GBT_SVC_RESTARTING			/* exited abnormally; postmaster restarts it */
} GbtServiceState;

#define GBT_GPU_MAX_COPIES		64
#define GBT_GPU_MAX_DIRTY		4096	/* changed pages remembered per copy */
#define GBT_GPU_MAX_REQUESTS	32

/* One device copy as backends see it */
typedef struct GbtGpuCopy
{
	slock_t		mutex;			/* protects the fields below */
	bool		inuse;			/* slot holds an index */
	bool		valid;			/* device holds a complete image */
	Oid			dboid;
	Oid			indexoid;
	Oid			relfilenode;
	uint64		gen;			/* bumped by every full reload */
	BlockNumber nblocks;		/* blocks on the device */
	uint64		device_bytes;
	uint64		last_used;		/* request counter at last use (LRU) */
	uint64		syncs;
	uint64		pages_shipped;
	XLogRecPtr	standby_lsn;	/* hot standby: replay position of last sync */
	bool		overflow;		/* dirty set overflowed: reload all */
	uint64		smo_count;		/* multi-page changes recorded so far */
	int			ndirty;
	BlockNumber dirty[GBT_GPU_MAX_DIRTY];
} GbtGpuCopy;

typedef enum GbtGpuOp
{
	GBT_OP_PUT_PAGES = 1,
	GBT_OP_LOOKUP,
	GBT_OP_DROP,
	GBT_OP_SORT_BEGIN,			/* CREATE INDEX: room for arg[0] entries */
	GBT_OP_SORT_PUT,			/* entries [arg[1], +arg[2]) of sort arg[0] */
	GBT_OP_SORT_RUN,			/* sort arg[0]; arg[1]: arrived in TID order */
	GBT_OP_SORT_GET,			/* sorted entries [arg[1], +arg[2]) of sort arg[0] */
	GBT_OP_SORT_END,			/* free sort arg[0] */
	GBT_OP_SORT_LAYOUT,			/* pages [arg[1], +arg[2]) of sort arg[0]'s tree */
	GBT_OP_SORT_LEAVES			/* sorted entries [arg[1], +arg[2]) of sort arg[0]
								 * and their leaves in copy copyno */
} GbtGpuOp;

/*
 * Payload of SORT_LEAVES: this header, then the entries (16 bytes each),
 * then their leaves' block numbers (4 bytes each).
 */
typedef struct GbtGpuLeavesPayload
{
	uint32		root;			/* the tree: GBT_ROOT_BLKNO or GBT_NULLROOT_BLKNO */
} GbtGpuLeavesPayload;

/*
 * Payload of SORT_LAYOUT: the tree's shape (GbtCudaTreePlan, plain C, in
 * the first GBT_GPU_PLAN_SPACE bytes), then room for the pages.
 */
#define GBT_GPU_PLAN_SPACE	1024

#define GBT_GPU_MAX_SORTS		8	/* concurrent GPU index builds */

typedef enum GbtReqState
{
	GBT_REQ_FREE = 0,
	GBT_REQ_PENDING,
	GBT_REQ_RUNNING,
	GBT_REQ_DONE
} GbtReqState;

/* A request slot */
typedef struct GbtGpuRequest
{
	GbtReqState state;
	bool		abandoned;		/* requester gone: the service frees the slot */
	int			inject_fault;	/* tests: 1 = fail as a device error would */
	GbtGpuOp	op;
	int			copyno;			/* index into copies[] */
	uint64		gen;			/* the copy must still be this generation */
	int			pgprocno;		/* requester, woken when done */
	dsm_handle	handle;			/* payload */
	bool		staged;			/* payload in the staging area, not DSM */
	uint64		arg[3];			/* sort operations' arguments */
	double		ms;				/* sort run: device milliseconds */
	uint64		seq;			/* order of submission */
	int			result;			/* 0, or a GBT_GPU_E* code */
	uint64		total;			/* lookup: matches found */
	char		errmsg[160];
} GbtGpuRequest;

/*
 * GbtGpuRequest.result: the CUDA library's GBT_CUDA_* code (gbtree_node.h),
 * or one of the service's own
 */
#define GBT_GPU_ENOCOPY		(-100)	/* copy gone (evicted, replaced) */
#define GBT_GPU_ESERVICE	(-101)	/* service died or is not running */

/* Payload of PUT_PAGES: header, blknos[npages], then 8 KB images */
typedef struct GbtGpuPutPayload
{
	uint32		npages;
	BlockNumber nblocks;		/* index size: the copy grows to it */
	bool		reset;			/* first chunk of a full load */
} GbtGpuPutPayload;

/*
 * Payload of LOOKUP: header, queries[nqueries], offsets[nqueries + 1],
 * keys[capacity], tids[capacity].  With nwords > 0, a lookup in a tree of
 * nwords-word keys (gbt_cuda_lookup_words): each query is lo[nwords] then
 * hi[nwords], and the keys' words come nwords a match.
 */
typedef struct GbtGpuLookupPayload
{
	uint32		nqueries;
	uint32		root;
	int32		sorted;			/* 1: sorted queries; GBT_CUDA_POINTS:
								 * nqueries bare keys in the query space */
	int32		nwords;			/* 0: one-word keys */
	uint64		capacity;
} GbtGpuLookupPayload;

typedef struct GbtGpuShared
{
	LWLock	   *copies_lock;	/* creating/dropping copies */
	slock_t		mutex;			/* state, requests, counters */
	GbtServiceState state;
	int			service_pgprocno;
	pid_t		service_pid;
	int			restarts;
	char		device[128];
	char		detail[256];	/* why there is no device, etc. */
	uint64		mem_total;
	uint64		mem_used;
	uint64		next_seq;
	/* statistics */
	uint64		batches;
	uint64		keys;
	uint64		matches;
	uint64		pages_shipped;
	uint64		fallbacks;
	uint64		fallback_service;	/* no service / service died */
	uint64		fallback_memory;
	uint64		fallback_error;
	uint64		gpu_builds;
	uint64		gpu_build_runs; /* sorted runs of those builds */
	uint64		gpu_build_layouts;	/* of those, laid out on the device */
	bool		can_layout;		/* the library lays out pages (SORT_LAYOUT) */
	bool		can_merge;		/* the library finds leaves (SORT_LEAVES) */
	bool		can_words;		/* the library looks up multi-word keys */
	uint64		gpu_merges;		/* insert batches sorted and placed on the GPU */
	uint64		gpu_merge_entries;
	uint64		gpu_merge_hinted;	/* leaves reached from the GPU's hint */
	uint64		gpu_merge_descended;	/* hint refused: descended instead */
	uint64		staged_batches;
	bool		staging_busy;	/* one user at a time; see gpu_client.c */
	char		last_fallback[160];
	pg_atomic_uint32 ncopies;	/* copies in use: zero means no tracking */
	GbtGpuRequest requests[GBT_GPU_MAX_REQUESTS];
	GbtGpuCopy	copies[GBT_GPU_MAX_COPIES];
	LWLockPadded sync_locks[GBT_GPU_MAX_COPIES];	/* one sync at a time per copy */
} GbtGpuShared;

extern GbtGpuShared *gbt_gpu_shared;

/* gpu_service.c */
extern void gbt_gpu_register(void);
PGDLLEXPORT extern void gbt_gpu_service_main(Datum arg);

/* gpu_client.c and gpu_lookup.c */
extern void gbt_gpu_define_gucs(void);
extern void gbt_gpu_note_changes(Relation index, const BlockNumber *blknos, int n,
								 bool multi_page);
/* the index's pages were rewritten in place: its device copy goes */
extern void gbt_gpu_forget(Relation index);
/*
 * Whether a batch of nitems (scan ranges, or a build's entries) goes to
 * the GPU: always under gbtree.device = gpu (which then fails clearly if
 * it cannot), under auto when the service is ready and nitems reaches
 * gbtree.gpu_min_batch.
 */
extern bool gbt_gpu_wanted(Size nitems);
extern bool gbt_gpu_serving(void);
extern bool gbt_gpu_lookup(Relation index, BlockNumber root,
						   const GbtRange *ranges, int nranges, const uint64 *points,
						   GbtEntry **entries, uint64 *nentries);
extern bool gbt_gpu_lookup_words(Relation index, BlockNumber root, int nwords,
								 const uint64 *queries, int nqueries,
								 uint64 **words, uint64 **tids, uint64 *nentries);
extern void gbt_gpu_install_hooks(void);

/*
 * CREATE INDEX on the GPU (gpu_build.c): the one interface of the build
 * files (build.c, build_parallel.c, build_runs.c) to the GPU.  A build
 * begins a session, which owns what the build holds on the device: the
 * sorts of its values and of its NULLs (streamed to during the heap scan,
 * or filled after it), the pages laid out from them, and the load of the
 * new index onto the device as the build writes it.  gbt_gpu_build_end
 * releases whatever the session still holds, after success, a failure
 * the build survives, or an ERROR (from PG_CATCH).
 */
typedef struct GbtGpuBuild GbtGpuBuild;

/*
 * What a parallel build's workers need to stream into the leader's
 * session: plain data, which the leader copies into the build's shared
 * memory (gbt_gpu_build_share) and the workers attach to.
 */
typedef struct GbtGpuBuildHandle
{
	int			value_sort;		/* the service's sort slots, or -1 */
	int			null_sort;
} GbtGpuBuildHandle;

typedef struct GbtGpuSortTimes
{
	double		to_device_ms;	/* entries into the service and onto the device */
	double		sort_ms;		/* device time of the sort */
	double		run_ms;			/* the sort request, end to end */
	double		from_device_ms; /* sorted entries back */
	int			nruns;			/* sorted runs (consecutive in the output) */
	Size		run_entries;	/* entries per run, the last one excepted */
} GbtGpuSortTimes;

extern GbtGpuBuild *gbt_gpu_build_begin(Relation index);
extern void gbt_gpu_build_end(GbtGpuBuild *b);

/* streaming the heap scan's entries to the device */
extern bool gbt_gpu_build_stream(GbtGpuBuild *b, Size expected, bool *failed);
extern void gbt_gpu_build_share(GbtGpuBuild *b, GbtGpuBuildHandle *handle);
extern GbtGpuBuild *gbt_gpu_build_attach(const GbtGpuBuildHandle *handle);
extern bool gbt_gpu_build_put(GbtGpuBuild *b, bool nulls, uint64 offset,
							  const GbtEntry *entries, Size n, char *errbuf, Size errlen);
extern void gbt_gpu_build_stream_failed(GbtGpuBuild *b, const char *why);
extern bool gbt_gpu_build_sort_streamed(GbtGpuBuild *b, Size nvalues, Size nnulls,
										bool tid_sorted, GbtGpuSortTimes *times);

/* sorting entries held in memory */
extern bool gbt_gpu_build_sort(GbtGpuBuild *b, const GbtEntry *in, GbtEntry *out, Size n,
							   bool tid_sorted, bool keep, GbtGpuSortTimes *times);

/* the pages of a tree whose entries the device holds sorted */
extern bool gbt_gpu_build_on_device(GbtGpuBuild *b, bool nulls);
extern char *gbt_gpu_build_layout(GbtGpuBuild *b, bool nulls, const GbtCudaTreePlan *plan,
								  uint64 first, int *count, double *ms);

/* loading the new index onto the device as the build writes it */
extern bool gbt_gpu_build_load_begin(GbtGpuBuild *b, BlockNumber nblocks);
extern char *gbt_gpu_build_load_next(GbtGpuBuild *b, int n);
extern void gbt_gpu_build_load_done(GbtGpuBuild *b, const BlockNumber *blknos, int n);
extern void gbt_gpu_build_load_finish(GbtGpuBuild *b, BlockNumber nblocks);

/*
 * Batched inserts (batch.c; gpu_lookup.c): sort a batch on the device and
 * find the leaf of each entry in the device copy of the tree under root.
 */
extern bool gbt_gpu_merge_wanted(Relation index, Size n);
extern bool gbt_gpu_merge_plan(Relation index, BlockNumber root, const GbtEntry *in, Size n,
							   GbtEntry *out, BlockNumber *leaves);
extern void gbt_gpu_merge_done(uint64 hinted, uint64 descended);

#endif							/* GBTREE_GPU_H */
