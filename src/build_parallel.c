/*-------------------------------------------------------------------------
 *
 * build_parallel.c
 *	  The parallel heap scan of a gbtree build.
 *
 * As nbtree's parallel build: workers and the leader scan the heap
 * together through a parallel table scan; each worker hands its entries to
 * the leader in a temporary file of a shared file set, and the leader
 * sorts them all as one.  The sort fixes the order completely, (key, TID)
 * being unique, so the index is the one a serial build writes.  A worker
 * that holds more than its share of maintenance_work_mem spills sorted
 * runs instead (build_runs.c); a build streamed to the device has every
 * worker stream its entries there too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/buffile.h"
#include "storage/sharedfileset.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gbtree_build.h"

#define PARALLEL_KEY_GBT_SHARED		UINT64CONST(0xA000000000000001)
#define PARALLEL_KEY_QUERY_TEXT		UINT64CONST(0xA000000000000002)

typedef struct GbtBuildShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	slock_t		mutex;
	double		heaptuples;		/* summed over workers */
	Size		limit;			/* entries each participant holds in memory */
	GbtGpuBuildHandle gpu;		/* the GPU sorts streamed into, if any */
	pg_atomic_uint64 stream_next;
	pg_atomic_uint64 null_next;
	pg_atomic_uint32 stream_bad;
	pg_atomic_uint64 stream_us;	/* the workers' put times */
	pg_atomic_uint32 stream_chunks;
	SharedFileSet fileset;
	/* then the ParallelTableScanDesc */
} GbtBuildShared;

/* What a worker left for the leader */
typedef struct GbtWorkerReport
{
	int			nruns_v;		/* sorted runs "w<i>.v.<r>", "w<i>.n.<r>"; */
	int			nruns_n;		/* none: unsorted "e<i>" and "n<i>" instead */
	Size		nvalues;
	Size		nnulls;
} GbtWorkerReport;

#define PARALLEL_KEY_GBT_REPORTS	UINT64CONST(0xA000000000000003)

#define GbtBuildSharedScan(shared) \
	((ParallelTableScanDesc) ((char *) (shared) + BUFFERALIGN(sizeof(GbtBuildShared))))

/* Leave a worker's unsorted entries to the leader, in file name of fs. */
static void
write_worker_entries(FileSet *fs, const char *name, const GbtEntry *e, Size n)
{
	BufFile    *f = BufFileCreateFileSet(fs, name);

	BufFileWrite(f, (void *) e, n * sizeof(GbtEntry));
	BufFileClose(f);
}

/* Append a worker's file of entries to *arr (n, cap as the callback keeps them). */
static void
append_worker_entries(FileSet *fs, const char *name, GbtEntry **arr, Size *n, Size *cap)
{
	BufFile    *f = BufFileOpenFileSet(fs, name, O_RDONLY, false);
	Size		m = (Size) (BufFileSize(f) / sizeof(GbtEntry));

	if (*cap < *n + m)
	{
		/* room for it all at once: growing by doubling would copy more */
		Size		newcap = *n + m;

		if (newcap * sizeof(GbtEntry) > MaxAllocHugeSize)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many index entries for one gbtree build")));
		*arr = (*arr == NULL) ?
			MemoryContextAllocHuge(CurrentMemoryContext, newcap * sizeof(GbtEntry)) :
			repalloc_huge(*arr, newcap * sizeof(GbtEntry));
		*cap = newcap;
		gbt_advise_huge(*arr, newcap * sizeof(GbtEntry));
	}
	if (m > 0 && BufFileRead(f, *arr + *n, m * sizeof(GbtEntry)) != m * sizeof(GbtEntry))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gbtree: could not read a parallel build worker's entries")));
	*n += m;
	BufFileClose(f);
}

PGDLLEXPORT void gbt_build_worker_main(dsm_segment *seg, shm_toc *toc);

void
gbt_build_worker_main(dsm_segment *seg, shm_toc *toc)
{
	GbtBuildShared *shared = shm_toc_lookup(toc, PARALLEL_KEY_GBT_SHARED, false);
	GbtWorkerReport *reports = shm_toc_lookup(toc, PARALLEL_KEY_GBT_REPORTS, false);
	char	   *sharedquery = shm_toc_lookup(toc, PARALLEL_KEY_QUERY_TEXT, true);
	LOCKMODE	heaplock = shared->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	LOCKMODE	indexlock = shared->isconcurrent ? RowExclusiveLock : AccessExclusiveLock;
	Relation	heap;
	Relation	index;
	IndexInfo  *indexInfo;
	GbtBuildState bs;
	char		name[32];

	debug_query_string = sharedquery;
	pgstat_report_activity(STATE_RUNNING, debug_query_string);
	heap = table_open(shared->heaprelid, heaplock);
	index = index_open(shared->indexrelid, indexlock);
	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = shared->isconcurrent;
	SharedFileSetAttach(&shared->fileset, seg);

	memset(&bs, 0, sizeof(bs));
	bs.index = index;
	bs.info = gbt_index_info_copy(index);
	bs.tid_sorted = true;
	bs.limit = shared->limit;
	bs.worker = ParallelWorkerNumber;
	bs.fileset = &shared->fileset.fs;
	/* owns nothing: the leader's session ends the sorts */
	bs.gpu = gbt_gpu_build_attach(&shared->gpu);
	bs.streaming = (bs.gpu != NULL);
	bs.stream_next = &shared->stream_next;
	bs.null_next = &shared->null_next;
	bs.stream_bad = &shared->stream_bad;
	if (bs.streaming)
	{
		bs.entries = palloc(GBT_STREAM_CHUNK * sizeof(GbtEntry));
		bs.capacity = GBT_STREAM_CHUNK;
		bs.nulls = palloc(GBT_STREAM_CHUNK * sizeof(GbtEntry));
		bs.nullcap = GBT_STREAM_CHUNK;
	}
	table_index_build_scan(heap, index, indexInfo, true, false,
						   gbt_build_callback, (void *) &bs,
						   table_beginscan_parallel(heap, GbtBuildSharedScan(shared)));

	if (bs.streaming)
	{
		/* everything is on the device: nothing goes to the leader */
		gbt_build_stream_flush(&bs);
		pg_atomic_fetch_add_u64(&shared->stream_us, (uint64) (bs.stream_ms * 1000));
		pg_atomic_fetch_add_u32(&shared->stream_chunks, (uint32) bs.stream_chunks);
		if (bs.stream_failed && bs.stream_err[0])
			ereport(DEBUG1,
					(errmsg_internal("gbtree build worker %d stops streaming to the GPU: %s",
									 ParallelWorkerNumber, bs.stream_err)));
	}
	else if (bs.nruns_v + bs.nruns_n > 0)
	{
		/* spilled already: the rest as runs too */
		gbt_build_spill_run(&bs, false);
		gbt_build_spill_run(&bs, true);
	}
	else
	{
		/* all in memory: the leader takes it unsorted */
		snprintf(name, sizeof(name), "e%d", ParallelWorkerNumber);
		write_worker_entries(&shared->fileset.fs, name, bs.entries, bs.nentries);
		snprintf(name, sizeof(name), "n%d", ParallelWorkerNumber);
		write_worker_entries(&shared->fileset.fs, name, bs.nulls, bs.nnulls);
	}
	reports[ParallelWorkerNumber].nruns_v = bs.nruns_v;
	reports[ParallelWorkerNumber].nruns_n = bs.nruns_n;
	reports[ParallelWorkerNumber].nvalues = bs.nentries + bs.spilled_v + bs.streamed;
	reports[ParallelWorkerNumber].nnulls = bs.nnulls + bs.spilled_n + bs.nulls_streamed;
	SpinLockAcquire(&shared->mutex);
	shared->heaptuples += bs.heaptuples;
	SpinLockRelease(&shared->mutex);

	index_close(index, indexlock);
	table_close(heap, heaplock);
}

/* Entries that memory_kb of maintenance_work_mem holds (and sorts) */
Size
gbt_build_entries_for_memory(Size memory_kb)
{
	if (gbt_build_run_size > 0)
		return Max((Size) 100, (Size) gbt_build_run_size);
	/* 32 bytes an entry: the entry and the sort's scratch copy of it */
	return Max((Size) 1024, memory_kb * 1024 / (2 * sizeof(GbtEntry)));
}

/*
 * Scan the heap with parallel workers when the planner's rule for index
 * builds (plan_create_index_workers: table size, max_parallel_maintenance_
 * workers, maintenance_work_mem) grants any.  maintenance_work_mem is
 * shared among the participants, as in nbtree.  Returns the number of
 * processes that took part, 0 if the caller must scan alone (pb->pcxt is
 * then NULL).  If any participant spilled runs, every worker's entries end
 * up in runs of bs; else they are all in bs's arrays.  The caller ends
 * the parallel context (gbt_build_end_parallel) once the runs are merged.
 */
int
gbt_build_parallel_scan(Relation heap, Relation index, IndexInfo *indexInfo, GbtBuildState *bs,
						GbtParallelBuild *pb)
{
	int			request;
	ParallelContext *pcxt;
	Snapshot	snapshot;
	Size		estshared;
	GbtBuildShared *shared;
	GbtWorkerReport *reports;
	char	   *sharedquery;
	int			querylen;
	int			launched;
	bool		any_runs;

	pb->pcxt = NULL;
	pb->fileset = NULL;
	if (!IsNormalProcessingMode())
		return 0;
	request = gbt_index_build_workers(heap, index, indexInfo);
	if (request <= 0)
		return 0;

	EnterParallelMode();
	pcxt = CreateParallelContext("gbtree", "gbt_build_worker_main", request);
	snapshot = indexInfo->ii_Concurrent ? RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;

	estshared = add_size(BUFFERALIGN(sizeof(GbtBuildShared)),
						 table_parallelscan_estimate(heap, snapshot));
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(GbtWorkerReport) * request);
	querylen = debug_query_string ? strlen(debug_query_string) : 0;
	shm_toc_estimate_chunk(&pcxt->estimator, querylen + 1);
	shm_toc_estimate_keys(&pcxt->estimator, 3);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		/* no dynamic shared memory to be had: scan alone */
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return 0;
	}

	shared = shm_toc_allocate(pcxt->toc, estshared);
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = indexInfo->ii_Concurrent;
	SpinLockInit(&shared->mutex);
	shared->heaptuples = 0;
	shared->limit = gbt_build_entries_for_memory((Size) maintenance_work_mem / (request + 1));
	gbt_gpu_build_share(bs->gpu, &shared->gpu);
	pg_atomic_init_u64(&shared->stream_next, 0);
	pg_atomic_init_u64(&shared->null_next, 0);
	pg_atomic_init_u32(&shared->stream_bad, 0);
	pg_atomic_init_u64(&shared->stream_us, 0);
	pg_atomic_init_u32(&shared->stream_chunks, 0);
	SharedFileSetInit(&shared->fileset, pcxt->seg);
	table_parallelscan_initialize(heap, GbtBuildSharedScan(shared), snapshot);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_GBT_SHARED, shared);
	reports = shm_toc_allocate(pcxt->toc, sizeof(GbtWorkerReport) * request);
	memset(reports, 0, sizeof(GbtWorkerReport) * request);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_GBT_REPORTS, reports);
	sharedquery = shm_toc_allocate(pcxt->toc, querylen + 1);
	if (querylen > 0)
		memcpy(sharedquery, debug_query_string, querylen);
	sharedquery[querylen] = '\0';
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_QUERY_TEXT, sharedquery);

	LaunchParallelWorkers(pcxt);
	launched = pcxt->nworkers_launched;
	pb->pcxt = pcxt;
	pb->snapshot = snapshot;
	pb->fileset = &shared->fileset.fs;

	/* the leader scans too (alone, if no worker could be started) */
	bs->limit = shared->limit;
	if (bs->streaming)
	{
		bs->stream_next = &shared->stream_next;
		bs->null_next = &shared->null_next;
		bs->stream_bad = &shared->stream_bad;
	}
	table_index_build_scan(heap, index, indexInfo, true, true,
						   gbt_build_callback, (void *) bs,
						   table_beginscan_parallel(heap, GbtBuildSharedScan(shared)));
	if (bs->streaming)
		gbt_build_stream_flush(bs);
	WaitForParallelWorkersToFinish(pcxt);
	bs->heaptuples += shared->heaptuples;
	if (launched > 0)
		bs->tid_sorted = false;	/* the parts interleave */

	if (bs->streaming)
	{
		/* the workers' entries are all on the device */
		bs->streamed = pg_atomic_read_u64(&shared->stream_next);
		bs->nulls_streamed = pg_atomic_read_u64(&shared->null_next);
		bs->stream_failed |= pg_atomic_read_u32(&shared->stream_bad) != 0;
		bs->stream_ms += pg_atomic_read_u64(&shared->stream_us) / 1000.0;
		bs->stream_chunks += (int) pg_atomic_read_u32(&shared->stream_chunks);
		gbt_build_end_parallel(pb);
		return launched + 1;
	}

	any_runs = bs->nruns > 0;
	for (int i = 0; i < launched; i++)
		any_runs |= reports[i].nruns_v + reports[i].nruns_n > 0;

	if (any_runs)
	{
		/* the leader's rest, then each worker's entries, as runs */
		gbt_build_spill_run(bs, false);
		gbt_build_spill_run(bs, true);
		for (int i = 0; i < launched; i++)
		{
			char		name[32];

			if (reports[i].nruns_v + reports[i].nruns_n > 0)
			{
				for (int r = 0; r < reports[i].nruns_v; r++)
					gbt_build_add_run(bs, NULL, i, 'v', r);
				for (int r = 0; r < reports[i].nruns_n; r++)
					gbt_build_add_run(bs, NULL, i, 'n', r);
				bs->spilled_v += reports[i].nvalues;
				bs->spilled_n += reports[i].nnulls;
				continue;
			}
			/* it held everything in memory: at most its share, sort it here */
			bs->tid_sorted = true;
			snprintf(name, sizeof(name), "e%d", i);
			append_worker_entries(&shared->fileset.fs, name, &bs->entries, &bs->nentries,
					      &bs->capacity);
			for (Size e = 1; e < bs->nentries && bs->tid_sorted; e++)
				bs->tid_sorted = bs->entries[e - 1].tid < bs->entries[e].tid;
			gbt_build_spill_run(bs, false);
			snprintf(name, sizeof(name), "n%d", i);
			append_worker_entries(&shared->fileset.fs, name, &bs->nulls, &bs->nnulls,
					      &bs->nullcap);
			gbt_build_spill_run(bs, true);
		}
	}
	else
	{
		for (int i = 0; i < launched; i++)
		{
			char		name[32];

			snprintf(name, sizeof(name), "e%d", i);
			append_worker_entries(&shared->fileset.fs, name, &bs->entries, &bs->nentries,
					      &bs->capacity);
			snprintf(name, sizeof(name), "n%d", i);
			append_worker_entries(&shared->fileset.fs, name, &bs->nulls, &bs->nnulls,
					      &bs->nullcap);
		}
		gbt_build_end_parallel(pb);
	}
	return Max(launched, 0) + 1;
}

void
gbt_build_end_parallel(GbtParallelBuild *pb)
{
	if (pb->pcxt == NULL)
		return;
	if (IsMVCCSnapshot(pb->snapshot))
		UnregisterSnapshot(pb->snapshot);
	DestroyParallelContext(pb->pcxt);
	ExitParallelMode();
	pb->pcxt = NULL;
	pb->fileset = NULL;
}

