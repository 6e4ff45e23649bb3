/*-------------------------------------------------------------------------
 *
 * build.c
 *	  CREATE INDEX for gbtree: heap scan, radix sort of fixed-width
 *	  (key, TID) pairs, bottom-up page layout, sequential bulk writes.
 *
 * The entries held in memory are bounded by maintenance_work_mem; beyond
 * it each participant spills sorted runs, which are merged on the way to
 * the pages (see src/README, "Build").
 *
 * Pages are built in local memory, WAL-logged in batches with
 * log_newpages() and written with smgrextend() in block order, as nbtree's
 * build does; the two roots and the metapage sit in blocks 0-2 and are
 * written last.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "portability/instr_time.h"

#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/buffile.h"
#include "storage/bufmgr.h"
#include "storage/sharedfileset.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gbtree.h"
#include "gbtree_gpu.h"

#define GBT_WRITE_BATCH		32

/*
 * A sorted run spilled to a temporary file: the participant's own
 * anonymous file (file != NULL) or a worker's file in the shared file set.
 */
typedef struct GbtRun
{
	BufFile    *file;
	int			worker;
	char		tree;			/* 'v' values, 'n' NULLs */
	int			runno;
	bool		merged;			/* taken by a merge already */
} GbtRun;

typedef struct GbtBuildState
{
	Relation	index;
	GbtIndexInfo *info;
	GbtEntry   *entries;		/* non-null (key, tid) in memory */
	Size		nentries;
	Size		capacity;
	GbtEntry   *nulls;			/* tids of NULL keys (key 0) in memory */
	Size		nnulls;
	Size		nullcap;
	double		heaptuples;
	bool		tid_sorted;		/* entries arrived in TID order */

	/*
	 * maintenance_work_mem: at most limit entries (values and NULLs
	 * together) are held in memory; beyond that the larger part is sorted
	 * and spilled as a run.  Runs are merged on the way to the pages.
	 */
	Size		limit;
	int			worker;			/* parallel worker number, -1 in the leader */
	FileSet    *fileset;		/* workers: where their runs go */
	Size		spilled_v;		/* entries in runs */
	Size		spilled_n;
	int			nruns_v;
	int			nruns_n;
	GbtRun	   *runs;			/* the leader's runs, then the workers' */
	int			nruns;
	int			maxruns;
	int			gpu_runs;		/* runs the GPU sorted */
	bool		cpu_only;		/* a GPU build failed: everything on the CPU */

	/*
	 * Streaming to the device (stream_slot >= 0): values go to the GPU
	 * sort stream_slot, NULLs to the GPU sort null_slot, in chunks of
	 * GBT_STREAM_CHUNK as the scan finds them, at offsets reserved in
	 * *stream_next and *null_next; entries[] and nulls[] only hold the
	 * chunks being filled.  Any participant's failure sets *stream_bad,
	 * and the build starts over on the CPU.
	 */
	int			stream_slot;
	int			null_slot;
	pg_atomic_uint64 *stream_next;
	pg_atomic_uint64 *null_next;
	Size		nulls_streamed;
	pg_atomic_uint32 *stream_bad;
	bool		stream_failed;
	Size		streamed;		/* this participant's values sent */
	double		stream_ms;		/* time in its puts */
	int			stream_chunks;
	pg_atomic_uint64 *stream_us;	/* the workers' put times, summed (shared) */
	uint64		last_tid;		/* the previous value's TID (in this run) */
	char		stream_err[160];
} GbtBuildState;

#define GBT_STREAM_CHUNK	((Size) 512 * 1024)	/* 8 MB of entries */

typedef struct GbtPageWriter
{
	Relation	index;
	bool		use_wal;
	BlockNumber nextblk;		/* next block to allocate */
	BlockNumber extended;		/* blocks already in the file */
	int			n;
	BlockNumber blknos[GBT_WRITE_BATCH];
	char	   *pages[GBT_WRITE_BATCH];
	PGAlignedBlock zero;		/* palloc0'd with the writer */
	int64		done;
	GbtGpuPageLoad *load;		/* loading the device copy meanwhile, or NULL */
} GbtPageWriter;

static void
grow(GbtEntry **arr, Size *cap, Size limit)
{
	Size		newcap = (*cap == 0) ? 65536 : *cap * 2;

	/* never more than the build holds before it spills a run */
	if (newcap > limit && limit > *cap)
		newcap = limit;

	if (newcap * sizeof(GbtEntry) > MaxAllocHugeSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many index entries for one gbtree build")));
	if (*arr == NULL)
		*arr = MemoryContextAllocHuge(CurrentMemoryContext, newcap * sizeof(GbtEntry));
	else
		*arr = repalloc_huge(*arr, newcap * sizeof(GbtEntry));
	*cap = newcap;
	gbt_advise_huge(*arr, newcap * sizeof(GbtEntry));
}

/*
 * Sort the n entries of arr by (key, TID), on the GPU when gbtree.device
 * and the size call for it, else on the CPU.  Returns the sorted array:
 * arr or scratch.  Parallel workers sort their runs on the CPU, in
 * parallel: the GPU service runs a bounded number of sorts at once, and
 * the leader's runs keep it busy.
 */
static GbtEntry *
sort_entries(GbtBuildState *bs, GbtEntry *arr, GbtEntry *scratch, Size n, bool tid_sorted,
			 bool nulls)
{
	GbtGpuSortTimes gtimes;

	if (!nulls && n > 1 && bs->worker < 0 && !bs->cpu_only && gbt_gpu_wanted(n) &&
		gbt_gpu_sort_entries(bs->index, arr, scratch, n, tid_sorted, &gtimes))
	{
		bs->gpu_runs++;
		if (gtimes.nruns > 1)
		{
			gbt_merge_runs(scratch, arr, n, gtimes.run_entries, gtimes.nruns);
			return arr;
		}
		return scratch;
	}
	gbt_radix_sort(arr, scratch, n);
	return arr;
}

static void
add_run(GbtBuildState *bs, BufFile *file, int worker, char tree, int runno)
{
	if (bs->nruns == bs->maxruns)
	{
		bs->maxruns = Max(16, bs->maxruns * 2);
		bs->runs = bs->runs ? repalloc(bs->runs, sizeof(GbtRun) * bs->maxruns) :
			palloc(sizeof(GbtRun) * bs->maxruns);
	}
	bs->runs[bs->nruns].file = file;
	bs->runs[bs->nruns].worker = worker;
	bs->runs[bs->nruns].tree = tree;
	bs->runs[bs->nruns].runno = runno;
	bs->runs[bs->nruns].merged = false;
	bs->nruns++;
}

/*
 * Sort the values (or the NULLs) held in memory and write them out as a
 * run: a worker's into the shared file set, where the leader finds it by
 * name, the leader's into an anonymous temporary file it keeps open.
 */
static void
spill(GbtBuildState *bs, bool nulls)
{
	GbtEntry  **arr = nulls ? &bs->nulls : &bs->entries;
	Size	   *n = nulls ? &bs->nnulls : &bs->nentries;
	int		   *nruns = nulls ? &bs->nruns_n : &bs->nruns_v;
	char		tree = nulls ? 'n' : 'v';
	GbtEntry   *scratch;
	GbtEntry   *sorted;
	BufFile    *f;

	if (*n == 0)
		return;
	scratch = MemoryContextAllocHuge(CurrentMemoryContext, *n * sizeof(GbtEntry));
	sorted = sort_entries(bs, *arr, scratch, *n, nulls || bs->tid_sorted, nulls);
	if (bs->worker >= 0)
	{
		char		name[64];

		snprintf(name, sizeof(name), "w%d.%c.%d", bs->worker, tree, *nruns);
		f = BufFileCreateFileSet(bs->fileset, name);
		BufFileWrite(f, (void *) sorted, *n * sizeof(GbtEntry));
		BufFileClose(f);
	}
	else
	{
		f = BufFileCreateTemp(false);
		BufFileWrite(f, (void *) sorted, *n * sizeof(GbtEntry));
		add_run(bs, f, -1, tree, *nruns);
	}
	pfree(scratch);
	(*nruns)++;
	if (nulls)
		bs->spilled_n += *n;
	else
		bs->spilled_v += *n;
	*n = 0;
	/* the callback checks the TID order of each run anew */
	if (!nulls)
	{
		bs->tid_sorted = true;
		bs->last_tid = 0;
	}
	CHECK_FOR_INTERRUPTS();
}

/* Send the chunk of values (or NULLs) in memory to the device. */
static void
stream_chunk(GbtBuildState *bs, bool nulls)
{
	Size	   *n = nulls ? &bs->nnulls : &bs->nentries;
	uint64		off;

	if (*n == 0)
		return;
	if (!bs->stream_failed)
	{
		off = pg_atomic_fetch_add_u64(nulls ? bs->null_next : bs->stream_next, *n);
		if (pg_atomic_read_u32(bs->stream_bad) != 0)
			bs->stream_failed = true;	/* someone else failed: stop */
		else
		{
			instr_time	t0,
						t1;

			INSTR_TIME_SET_CURRENT(t0);
			if (!gbt_gpu_stream_put(nulls ? bs->null_slot : bs->stream_slot, off,
									nulls ? bs->nulls : bs->entries, *n,
									bs->stream_err, sizeof(bs->stream_err)))
			{
				bs->stream_failed = true;
				pg_atomic_write_u32(bs->stream_bad, 1);
			}
			INSTR_TIME_SET_CURRENT(t1);
			INSTR_TIME_SUBTRACT(t1, t0);
			bs->stream_ms += INSTR_TIME_GET_MILLISEC(t1);
			bs->stream_chunks++;
		}
	}
	if (nulls)
		bs->nulls_streamed += *n;
	else
		bs->streamed += *n;
	*n = 0;
	CHECK_FOR_INTERRUPTS();
}

static void
stream_flush(GbtBuildState *bs)
{
	stream_chunk(bs, false);
	stream_chunk(bs, true);
}

static void
gbt_build_callback(Relation index, ItemPointer tid, Datum *values,
				   bool *isnull, bool tupleIsAlive, void *state)
{
	GbtBuildState *bs = (GbtBuildState *) state;
	bool		null = isnull[0];
	GbtEntry   *e;

	bs->heaptuples += 1;
	if (bs->stream_failed)
		return;					/* a streamed build starts over on the CPU */
	if (null)
	{
		if (bs->nnulls == bs->nullcap)
			grow(&bs->nulls, &bs->nullcap, bs->limit);
		e = &bs->nulls[bs->nnulls++];
		e->key = 0;
		e->tid = gbt_tid_from_itemptr(tid, 0);
	}
	else
	{
		uint16		flags;

		if (bs->nentries == bs->capacity)
			grow(&bs->entries, &bs->capacity, bs->limit);
		e = &bs->entries[bs->nentries++];
		e->key = gbt_index_key(bs->info, values[0], &flags);
		e->tid = gbt_tid_from_itemptr(tid, flags);
		if (bs->last_tid > e->tid)
			bs->tid_sorted = false;
		bs->last_tid = e->tid;
	}
	if (bs->stream_slot >= 0)
	{
		/* a chunk of each in memory: a full one goes to the device */
		if ((null ? bs->nnulls : bs->nentries) == GBT_STREAM_CHUNK)
			stream_chunk(bs, null);
	}
	else if (bs->nentries + bs->nnulls >= bs->limit)
		spill(bs, bs->nnulls > bs->nentries);
}

/* ------------------------------------------------------------------------
 * Parallel heap scan
 *
 * As nbtree's parallel build: workers and the leader scan the heap
 * together through a parallel table scan; each worker hands its entries to
 * the leader in a temporary file of a shared file set, and the leader
 * sorts them all as one.  The sort fixes the order completely, (key, TID)
 * being unique, so the index is the one a serial build writes.
 * ------------------------------------------------------------------------
 */

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
	int			stream_slot;	/* streaming to this GPU sort, or -1 */
	int			null_slot;		/* and the NULLs to this one */
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

static void
write_entries(FileSet *fs, const char *name, const GbtEntry *e, Size n)
{
	BufFile    *f = BufFileCreateFileSet(fs, name);

	BufFileWrite(f, (void *) e, n * sizeof(GbtEntry));
	BufFileClose(f);
}

/* Append a worker's file of entries to *arr (n, cap as grow() keeps them). */
static void
read_entries(FileSet *fs, const char *name, GbtEntry **arr, Size *n, Size *cap)
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
	bs.info = gbt_index_info(index);
	bs.tid_sorted = true;
	bs.limit = shared->limit;
	bs.worker = ParallelWorkerNumber;
	bs.fileset = &shared->fileset.fs;
	bs.stream_slot = shared->stream_slot;
	bs.null_slot = shared->null_slot;
	bs.stream_next = &shared->stream_next;
	bs.null_next = &shared->null_next;
	bs.stream_bad = &shared->stream_bad;
	if (bs.stream_slot >= 0)
	{
		bs.entries = palloc(GBT_STREAM_CHUNK * sizeof(GbtEntry));
		bs.capacity = GBT_STREAM_CHUNK;
		bs.nulls = palloc(GBT_STREAM_CHUNK * sizeof(GbtEntry));
		bs.nullcap = GBT_STREAM_CHUNK;
	}
	table_index_build_scan(heap, index, indexInfo, true, false,
						   gbt_build_callback, (void *) &bs,
						   table_beginscan_parallel(heap, GbtBuildSharedScan(shared)));

	if (bs.stream_slot >= 0)
	{
		/* everything is on the device: nothing goes to the leader */
		stream_flush(&bs);
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
		spill(&bs, false);
		spill(&bs, true);
	}
	else
	{
		/* all in memory: the leader takes it unsorted */
		snprintf(name, sizeof(name), "e%d", ParallelWorkerNumber);
		write_entries(&shared->fileset.fs, name, bs.entries, bs.nentries);
		snprintf(name, sizeof(name), "n%d", ParallelWorkerNumber);
		write_entries(&shared->fileset.fs, name, bs.nulls, bs.nnulls);
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

/* A parallel build's context, kept until the workers' runs are merged */
typedef struct GbtParallelBuild
{
	ParallelContext *pcxt;
	Snapshot	snapshot;
	GbtBuildShared *shared;
} GbtParallelBuild;

static void end_parallel(GbtParallelBuild *pb);

/* Entries that memory_kb of maintenance_work_mem holds (and sorts) */
static Size
entries_for_memory(Size memory_kb)
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
 * the parallel context (end_parallel) once the runs are merged.
 */
static int
parallel_scan(Relation heap, Relation index, IndexInfo *indexInfo, GbtBuildState *bs,
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
	if (!IsNormalProcessingMode())
		return 0;
	request = plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
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
	shared->limit = entries_for_memory((Size) maintenance_work_mem / (request + 1));
	shared->stream_slot = bs->stream_slot;
	shared->null_slot = bs->null_slot;
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
	pb->shared = shared;

	/* the leader scans too (alone, if no worker could be started) */
	bs->limit = shared->limit;
	if (bs->stream_slot >= 0)
	{
		bs->stream_next = &shared->stream_next;
		bs->null_next = &shared->null_next;
		bs->stream_bad = &shared->stream_bad;
	}
	table_index_build_scan(heap, index, indexInfo, true, true,
						   gbt_build_callback, (void *) bs,
						   table_beginscan_parallel(heap, GbtBuildSharedScan(shared)));
	if (bs->stream_slot >= 0)
		stream_flush(bs);
	WaitForParallelWorkersToFinish(pcxt);
	bs->heaptuples += shared->heaptuples;
	if (launched > 0)
		bs->tid_sorted = false;	/* the parts interleave */

	if (bs->stream_slot >= 0)
	{
		/* the workers' entries are all on the device */
		bs->streamed = pg_atomic_read_u64(&shared->stream_next);
		bs->nulls_streamed = pg_atomic_read_u64(&shared->null_next);
		bs->stream_failed |= pg_atomic_read_u32(&shared->stream_bad) != 0;
		bs->stream_ms += pg_atomic_read_u64(&shared->stream_us) / 1000.0;
		bs->stream_chunks += (int) pg_atomic_read_u32(&shared->stream_chunks);
		end_parallel(pb);
		return launched + 1;
	}

	any_runs = bs->nruns > 0;
	for (int i = 0; i < launched; i++)
		any_runs |= reports[i].nruns_v + reports[i].nruns_n > 0;

	if (any_runs)
	{
		/* the leader's rest, then each worker's entries, as runs */
		spill(bs, false);
		spill(bs, true);
		for (int i = 0; i < launched; i++)
		{
			char		name[32];

			if (reports[i].nruns_v + reports[i].nruns_n > 0)
			{
				for (int r = 0; r < reports[i].nruns_v; r++)
					add_run(bs, NULL, i, 'v', r);
				for (int r = 0; r < reports[i].nruns_n; r++)
					add_run(bs, NULL, i, 'n', r);
				bs->spilled_v += reports[i].nvalues;
				bs->spilled_n += reports[i].nnulls;
				continue;
			}
			/* it held everything in memory: at most its share, sort it here */
			bs->tid_sorted = true;
			snprintf(name, sizeof(name), "e%d", i);
			read_entries(&shared->fileset.fs, name, &bs->entries, &bs->nentries, &bs->capacity);
			for (Size e = 1; e < bs->nentries && bs->tid_sorted; e++)
				bs->tid_sorted = bs->entries[e - 1].tid < bs->entries[e].tid;
			spill(bs, false);
			snprintf(name, sizeof(name), "n%d", i);
			read_entries(&shared->fileset.fs, name, &bs->nulls, &bs->nnulls, &bs->nullcap);
			spill(bs, true);
		}
	}
	else
	{
		for (int i = 0; i < launched; i++)
		{
			char		name[32];

			snprintf(name, sizeof(name), "e%d", i);
			read_entries(&shared->fileset.fs, name, &bs->entries, &bs->nentries, &bs->capacity);
			snprintf(name, sizeof(name), "n%d", i);
			read_entries(&shared->fileset.fs, name, &bs->nulls, &bs->nnulls, &bs->nullcap);
		}
		end_parallel(pb);
	}
	return Max(launched, 0) + 1;
}

static void
end_parallel(GbtParallelBuild *pb)
{
	if (pb->pcxt == NULL)
		return;
	if (IsMVCCSnapshot(pb->snapshot))
		UnregisterSnapshot(pb->snapshot);
	DestroyParallelContext(pb->pcxt);
	ExitParallelMode();
	pb->pcxt = NULL;
}

/*
 * Where build_tree() takes the leaf entries from, in (key, TID) order:
 * a sorted array, or a merge of sorted runs in temporary files.
 */
#define GBT_RUN_READ	4096

typedef struct GbtMergeInput
{
	BufFile    *file;
	bool		own;			/* opened here: close when done */
	GbtEntry   *buf;
	int			nbuf;
	int			pos;
} GbtMergeInput;

typedef struct GbtSource
{
	const GbtEntry *arr;		/* array mode */
	Size		pos;
	Size		n;
	GbtMergeInput *in;			/* merge mode: a heap of inputs by next entry */
	int		   *heap;
	int			nheap;
	int			nin;
} GbtSource;

static void
source_from_array(GbtSource *src, const GbtEntry *arr, Size n)
{
	memset(src, 0, sizeof(*src));
	src->arr = arr;
	src->n = n;
}

/* refill input i; false when its run is used up */
static bool
merge_fill(GbtMergeInput *in)
{
	size_t		got = BufFileRead(in->file, in->buf, GBT_RUN_READ * sizeof(GbtEntry));

	if (got % sizeof(GbtEntry) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gbtree: could not read a sorted run of the build")));
	in->nbuf = (int) (got / sizeof(GbtEntry));
	in->pos = 0;
	return in->nbuf > 0;
}

#define MERGE_LT(src, a, b) \
	gbt_entry_lt((src)->in[a].buf[(src)->in[a].pos].key, (src)->in[a].buf[(src)->in[a].pos].tid, \
				 (src)->in[b].buf[(src)->in[b].pos].key, (src)->in[b].buf[(src)->in[b].pos].tid)

static void
merge_sift_down(GbtSource *src, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					m = i,
					t;

		if (l < src->nheap && MERGE_LT(src, src->heap[l], src->heap[m]))
			m = l;
		if (l + 1 < src->nheap && MERGE_LT(src, src->heap[l + 1], src->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = src->heap[i];
		src->heap[i] = src->heap[m];
		src->heap[m] = t;
		i = m;
	}
}

/*
 * Merge up to maxin runs of bs for tree ('v' or 'n') not merged yet;
 * shared: the workers' file set.
 */
static void
source_from_runs(GbtSource *src, GbtBuildState *bs, char tree, FileSet *shared, int maxin)
{
	int			k = 0;

	memset(src, 0, sizeof(*src));
	src->in = palloc0(sizeof(GbtMergeInput) * Max(1, Min(bs->nruns, maxin)));
	src->heap = palloc(sizeof(int) * Max(1, Min(bs->nruns, maxin)));
	for (int r = 0; r < bs->nruns && k < maxin; r++)
	{
		GbtRun	   *run = &bs->runs[r];
		GbtMergeInput *in = &src->in[k];

		if (run->tree != tree || run->merged)
			continue;
		run->merged = true;
		if (run->file)
		{
			in->file = run->file;
			if (BufFileSeek(in->file, 0, 0, SEEK_SET) != 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("gbtree: could not rewind a sorted run of the build")));
		}
		else
		{
			char		name[64];

			snprintf(name, sizeof(name), "w%d.%c.%d", run->worker, run->tree, run->runno);
			in->file = BufFileOpenFileSet(shared, name, O_RDONLY, false);
		}
		in->own = true;
		in->buf = palloc(GBT_RUN_READ * sizeof(GbtEntry));
		if (merge_fill(in))
			src->heap[src->nheap++] = k;
		k++;
	}
	src->nin = k;
	for (int i = src->nheap / 2 - 1; i >= 0; i--)
		merge_sift_down(src, i);
}

/* the next entry, without taking it; false at the end */
static inline bool
source_peek(GbtSource *src, GbtEntry *e)
{
	if (src->in == NULL)
	{
		if (src->pos >= src->n)
			return false;
		*e = src->arr[src->pos];
		return true;
	}
	if (src->nheap == 0)
		return false;
	*e = src->in[src->heap[0]].buf[src->in[src->heap[0]].pos];
	return true;
}

static inline void
source_next(GbtSource *src, GbtEntry *e)
{
	GbtMergeInput *in;

	if (src->in == NULL)
	{
		if (src->pos >= src->n)
			elog(ERROR, "gbtree build: fewer entries than counted");
		*e = src->arr[src->pos++];
		return;
	}
	if (src->nheap == 0)
		elog(ERROR, "gbtree build: fewer entries in the sorted runs than counted");
	in = &src->in[src->heap[0]];
	*e = in->buf[in->pos++];
	if (in->pos == in->nbuf && !merge_fill(in))
		src->heap[0] = src->heap[--src->nheap];
	merge_sift_down(src, 0);
}

static void
source_end(GbtSource *src)
{
	if (src->in == NULL)
		return;
	for (int i = 0; i < src->nin; i++)
	{
		if (src->in[i].own && src->in[i].file)
			BufFileClose(src->in[i].file);
		if (src->in[i].buf)
			pfree(src->in[i].buf);
	}
	pfree(src->in);
	pfree(src->heap);
}

/*
 * A merge reads every run at once, with a buffer for each: merge runs in
 * groups into longer ones first while there are more than this.
 */
#define GBT_MERGE_FANIN 128

static void
reduce_runs(GbtBuildState *bs, char tree, FileSet *shared)
{
	GbtEntry   *out = palloc(GBT_RUN_READ * sizeof(GbtEntry));

	for (;;)
	{
		int			left = 0;
		GbtSource	src;
		BufFile    *f;
		int			nout = 0;
		GbtEntry	e;

		for (int r = 0; r < bs->nruns; r++)
			left += (bs->runs[r].tree == tree && !bs->runs[r].merged);
		if (left <= GBT_MERGE_FANIN)
			break;
		source_from_runs(&src, bs, tree, shared, GBT_MERGE_FANIN);
		f = BufFileCreateTemp(false);
		while (source_peek(&src, &e))
		{
			source_next(&src, &out[nout++]);
			if (nout == GBT_RUN_READ)
			{
				BufFileWrite(f, out, nout * sizeof(GbtEntry));
				nout = 0;
				CHECK_FOR_INTERRUPTS();
			}
		}
		if (nout > 0)
			BufFileWrite(f, out, nout * sizeof(GbtEntry));
		source_end(&src);
		add_run(bs, f, -1, tree, -1);
	}
	pfree(out);
}

static void
writer_flush(GbtPageWriter *w)
{
	SMgrRelation smgr;

	if (w->n == 0)
		return;
	if (w->use_wal)
		log_newpages(&w->index->rd_node, MAIN_FORKNUM, w->n, w->blknos, w->pages, true);
	smgr = RelationGetSmgr(w->index);
	for (int i = 0; i < w->n; i++)
	{
		BlockNumber blk = w->blknos[i];

		PageSetChecksumInplace((Page) w->pages[i], blk);
		while (w->extended < blk)
		{
			smgrextend(smgr, MAIN_FORKNUM, w->extended, w->zero.data, true);
			w->extended++;
		}
		if (blk == w->extended)
		{
			smgrextend(smgr, MAIN_FORKNUM, blk, w->pages[i], true);
			w->extended++;
		}
		else
			smgrwrite(smgr, MAIN_FORKNUM, blk, w->pages[i], true);
	}
	/* the pages are final now: they may go to the device */
	if (w->load)
		gbt_gpu_load_done(w->load, w->blknos, w->n);
	w->n = 0;
}

/*
 * Returns the batch slot for block blkno; the caller fills the page.
 * While the device copy is loaded, a batch's slots lie in the loader's
 * shipment buffer, so the pages need no copying to get there.
 */
static Page
writer_page(GbtPageWriter *w, BlockNumber blkno)
{
	if (w->n == GBT_WRITE_BATCH)
		writer_flush(w);
	if (w->load && w->n == 0)
	{
		char	   *slots = gbt_gpu_load_next(w->load, GBT_WRITE_BATCH);

		for (int i = 0; i < GBT_WRITE_BATCH; i++)
			w->pages[i] = slots + (Size) i * BLCKSZ;
	}
	w->blknos[w->n] = blkno;
	return (Page) w->pages[w->n++];
}

/*
 * Pages per level of a tree of n entries built at fillfactor: fills
 * npages[] bottom up and returns the number of levels.
 */
static int
tree_levels(Size n, int fillfactor, Size *npages)
{
	int			leafcap = Max(1, GBT_LEAF_SLOTS * fillfactor / 100);
	int			innercap = Max(2, GBT_INNER_SLOTS * GBT_INNER_FILLFACTOR / 100);
	int			nlevels = 1;

	npages[0] = Max((Size) 1, (n + leafcap - 1) / leafcap);
	while (npages[nlevels - 1] > 1)
	{
		npages[nlevels] = (npages[nlevels - 1] + innercap - 1) / innercap;
		nlevels++;
	}
	return nlevels;
}

/* Blocks a tree takes beyond its fixed root block. */
static Size
tree_blocks(Size n, int fillfactor)
{
	Size		npages[32];
	int			nlevels = tree_levels(n, fillfactor, npages);
	Size		total = 0;

	for (int level = 0; level < nlevels - 1; level++)
		total += npages[level];
	return total;
}

/*
 * Build one tree bottom-up from sorted entries, top page at rootblk.
 * Separators of inner pages are the first entry of each child.
 */
static void
build_tree(GbtPageWriter *w, GbtSource *src, Size n, BlockNumber rootblk,
		   uint16 treeflag, int fillfactor)
{
	Size		npages[32];
	int			nlevels = tree_levels(n, fillfactor, npages);
	GbtEntry   *seps = NULL;	/* separators of the level being built */
	BlockNumber *sepblk = NULL;
	Size		nseps = 0;
	uint64	   *kbuf = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint64	   *tbuf = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint32	   *cbuf = palloc(sizeof(uint32) * GBT_MAX_SLOTS);

	for (int level = 0; level < nlevels; level++)
	{
		Size		np = npages[level];
		Size		nin = (level == 0) ? n : nseps;
		bool		top = (level == nlevels - 1);
		BlockNumber first = top ? rootblk : w->nextblk;
		GbtEntry   *nseparr = NULL;
		BlockNumber *nsepblk = NULL;

		if (!top)
		{
			nseparr = palloc(sizeof(GbtEntry) * np);
			nsepblk = palloc(sizeof(BlockNumber) * np);
			w->nextblk += np;
		}

		for (Size p = 0; p < np; p++)
		{
			Size		from = (nin * p) / np;
			Size		to = (nin * (p + 1)) / np;
			BlockNumber blk = top ? rootblk : first + p;
			Page		page = writer_page(w, blk);
			GbtPageOpaque op;
			GbtNode		node;
			int			cntp = (int) (to - from);

			CHECK_FOR_INTERRUPTS();
			gbt_init_page(page, level == 0, (uint16) level,
						  treeflag | (top ? GBT_F_ROOT : 0));
			gbt_page_view(page, &node);
			op = node.opaque;
			for (int i = 0; i < cntp; i++)
			{
				if (level == 0)
				{
					GbtEntry	e;

					source_next(src, &e);
					kbuf[i] = e.key;
					tbuf[i] = e.tid;
				}
				else
				{
					kbuf[i] = seps[from + i].key;
					tbuf[i] = seps[from + i].tid;
					cbuf[i] = sepblk[from + i];
				}
			}
			/*
			 * The leftmost inner page of a level covers everything below
			 * its second separator: its first separator is minus infinity,
			 * (0, 0), which no real entry equals.  Keeping a real key there
			 * would misplace the downlink of a later split of the leftmost
			 * child whose entries went below that key.
			 */
			if (level > 0 && p == 0 && cntp > 0)
			{
				kbuf[0] = 0;
				tbuf[0] = 0;
			}
			gbt_node_load(&node, cntp, kbuf, tbuf, level == 0 ? NULL : cbuf);

			op->leftlink = (p == 0) ? GBT_NO_BLOCK : blk - 1;
			if (p > 0)
			{
				op->lowkey = level == 0 ? kbuf[0] : seps[from].key;
				op->lowtid = level == 0 ? tbuf[0] : seps[from].tid;
			}
			if (p + 1 < np)
			{
				Size		nf = (nin * (p + 1)) / np;

				op->rightlink = blk + 1;
				if (level == 0)
				{
					GbtEntry	e;

					/* the next page's first entry */
					if (!source_peek(src, &e))
						elog(ERROR, "gbtree build: fewer entries than counted");
					op->hikey = e.key;
					op->hitid = e.tid;
				}
				else
				{
					op->hikey = seps[nf].key;
					op->hitid = seps[nf].tid;
				}
			}
			else
				op->flags |= GBT_F_RIGHTMOST;

			if (!top)
			{
				nseparr[p].key = cntp > 0 ? kbuf[0] : 0;
				nseparr[p].tid = cntp > 0 ? tbuf[0] : 0;
				nsepblk[p] = blk;
			}
			if (level == 0)
			{
				w->done += cntp;
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, w->done);
			}
		}
		if (seps)
		{
			pfree(seps);
			pfree(sepblk);
		}
		seps = nseparr;
		sepblk = nsepblk;
		nseps = np;
	}
	pfree(kbuf);
	pfree(tbuf);
	pfree(cbuf);
}

/*
 * Build one tree as build_tree does, from the n entries of GPU sort slot,
 * with the pages laid out on the device and brought back a chunk at a
 * time.  False when the GPU failed under gbtree.device = auto (the sort is
 * then released): the caller lays the tree out again on the CPU, over the
 * blocks written so far, which it rewrites with the same images.
 */
static bool
build_tree_device(GbtPageWriter *w, int slot, Size n, BlockNumber rootblk, uint16 treeflag,
				  int fillfactor, double *layout_ms)
{
	Size		npages[32];
	int			nlevels = tree_levels(n, fillfactor, npages);
	GbtCudaTreePlan plan;
	PGAlignedBlock tmp;
	BlockNumber first = w->nextblk;
	BlockNumber blk = first;
	uint64		total = 0;
	int			chunk = gbt_gpu_layout_chunk();
	char	   *buf;

	if (nlevels > GBT_CUDA_MAX_LEVELS)
		elog(ERROR, "gbtree build: a tree of %d levels", nlevels);
	memset(&plan, 0, sizeof(plan));
	plan.n = n;
	plan.nlevels = nlevels;
	plan.root_blkno = rootblk;
	plan.tree_flags = treeflag;
	for (int level = 0; level < nlevels; level++)
	{
		plan.npages[level] = npages[level];
		total += npages[level];
		if (level < nlevels - 1)
		{
			plan.first_blkno[level] = blk;
			blk += npages[level];
		}
	}
	/* the page header is PostgreSQL's: the device copies it */
	gbt_init_page((Page) tmp.data, true, 0, 0);
	memcpy(plan.header[0], tmp.data, sizeof(plan.header[0]));
	gbt_init_page((Page) tmp.data, false, 1, 0);
	memcpy(plan.header[1], tmp.data, sizeof(plan.header[1]));

	buf = palloc((Size) chunk * BLCKSZ);
	for (uint64 from = 0; from < total; from += chunk)
	{
		int			cnt = (int) Min((uint64) chunk, total - from);

		/* one request at a time: a device copy shipment may be in flight */
		if (w->load)
			gbt_gpu_load_wait(w->load);
		if (!gbt_gpu_layout_pages(w->index, slot, &plan, from, cnt, buf, layout_ms))
		{
			pfree(buf);
			return false;
		}
		for (int j = 0; j < cnt; j++)
		{
			uint64		pageno = from + j;
			char	   *img = buf + (Size) j * BLCKSZ;
			GbtPageOpaque op = gbt_page_opaque(img);
			Page		page = writer_page(w, pageno == total - 1 ? rootblk :
										   first + (BlockNumber) pageno);

			memcpy(page, img, BLCKSZ);
			if (op->flags & GBT_F_LEAF)
			{
				w->done += op->nused;
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, w->done);
			}
		}
		CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
	w->nextblk = blk;
	return true;
}

/*
 * Lay out and write the index.  load_device: a GPU build, whose index
 * goes onto the device as it is written.  dev_slot >= 0: the values'
 * entries sorted on the device by that GPU sort, whose pages the device
 * lays out; values then reads unsorted, the same entries in host memory,
 * which the CPU sorts and lays out should the GPU fail (*dev_failed).
 */
static bool
write_index(Relation index, GbtSource *values, Size n, GbtSource *nulls, Size nnulls,
			bool use_wal, bool load_device, int dev_slot, int null_slot, GbtEntry *unsorted,
			double *layout_ms, bool *dev_failed)
{
	GbtPageWriter *w = palloc0(sizeof(GbtPageWriter));
	int			ff = gbt_get_fillfactor(index);
	Page		meta;
	volatile int vslot;
	volatile int vnull_slot;
	bool		failed = false;

	w->index = index;
	w->use_wal = use_wal;
	w->nextblk = GBT_FIRST_FREE_BLKNO;
	/* a build started over after a GPU failure rewrites what it wrote */
	w->extended = RelationGetNumberOfBlocks(index);
	if (load_device)
		w->load = gbt_gpu_load_begin(index, (BlockNumber) (GBT_FIRST_FREE_BLKNO +
														   tree_blocks(n, ff) +
														   tree_blocks(nnulls, ff)));
	if (w->load == NULL)
		for (int i = 0; i < GBT_WRITE_BATCH; i++)
			w->pages[i] = palloc(BLCKSZ);

	/* changed in PG_TRY, read in PG_CATCH */
	vslot = dev_slot;
	vnull_slot = null_slot;
	PG_TRY();
	{
		if (vslot >= 0)
		{
			if (build_tree_device(w, vslot, n, GBT_ROOT_BLKNO, 0, ff, layout_ms))
				gbt_gpu_sort_release(vslot, true);
			else if (unsorted == NULL)
			{
				/* streamed: the entries are nowhere else; the caller starts over */
				gbt_gpu_sort_abort(vslot);
				failed = true;
			}
			else
			{
				GbtEntry   *scratch = MemoryContextAllocHuge(CurrentMemoryContext,
															 Max(n, 1) * sizeof(GbtEntry));

				gbt_gpu_sort_abort(vslot);
				vslot = -1;
				*dev_failed = true;
				writer_flush(w);
				w->nextblk = GBT_FIRST_FREE_BLKNO;
				w->done = 0;
				gbt_radix_sort(unsorted, scratch, n);
				pfree(scratch);
				build_tree(w, values, n, GBT_ROOT_BLKNO, 0, ff);
			}
			vslot = -1;
		}
		else
			build_tree(w, values, n, GBT_ROOT_BLKNO, 0, ff);
		if (vnull_slot >= 0)
		{
			/* streamed NULLs, sorted on the device: laid out there too */
			if (!failed &&
				!build_tree_device(w, vnull_slot, nnulls, GBT_NULLROOT_BLKNO,
								   GBT_F_NULLTREE, ff, layout_ms))
				failed = true;
			/* counted with the values' sort: just end this one */
			gbt_gpu_sort_abort(vnull_slot);
			vnull_slot = -1;
		}
		else if (!failed)
			build_tree(w, nulls, nnulls, GBT_NULLROOT_BLKNO, GBT_F_NULLTREE, ff);
		if (!failed)
		{
			meta = writer_page(w, GBT_META_BLKNO);
			gbt_init_metapage(meta, index, n + nnulls);
			writer_flush(w);
			if (w->load)
				gbt_gpu_load_finish(w->load, w->extended);
		}
		else if (w->load)
			gbt_gpu_load_abort(w->load);
	}
	PG_CATCH();
	{
		if (w->load)
			gbt_gpu_load_abort(w->load);
		if (vslot >= 0)
			gbt_gpu_sort_abort(vslot);
		if (vnull_slot >= 0)
			gbt_gpu_sort_abort(vnull_slot);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (failed)
	{
		*dev_failed = true;
		return false;
	}

	/* as nbtree: the pages bypassed shared buffers, so sync them now */
	if (use_wal)
		smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);
	return true;
}

/*
 * The rest of a build that streamed its values to the device: sort them
 * there, lay out and write the pages.  NULL when the GPU failed (under
 * gbtree.device = auto; an ERROR under gpu): the caller starts over.
 */
static IndexBuildResult *
build_streamed(Relation index, GbtBuildState *bs, double scan_ms, int nparticipants)
{
	IndexBuildResult *result;
	GbtGpuSortTimes gtimes;
	GbtGpuSortTimes ntimes;
	instr_time	t0,
				t1;
	double		sort_ms,
				write_ms,
				layout_ms = 0;
	bool		dev_failed = false;
	volatile bool sorted = false;
	GbtSource	vsrc,
				nsrc;
	Size		nnulls = bs->nulls_streamed;

	memset(&gtimes, 0, sizeof(gtimes));
	memset(&ntimes, 0, sizeof(ntimes));
	if (bs->stream_failed)
	{
		gbt_gpu_sort_abort(bs->stream_slot);
		gbt_gpu_sort_abort(bs->null_slot);
		gbt_gpu_stream_failed(index, bs->stream_err[0] ? bs->stream_err :
							  "a participant of the scan could not stream to the GPU");
		return NULL;
	}
	INSTR_TIME_SET_CURRENT(t0);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
								 (int64) (bs->streamed + nnulls));
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_GPU_SORT);
	PG_TRY();
	{
		/* the NULLs in TID order: key 0 each, so sorting them sorts TIDs */
		sorted = gbt_gpu_stream_sort(index, bs->stream_slot, bs->streamed, bs->tid_sorted,
									 &gtimes) &&
			(nnulls == 0 ||
			 gbt_gpu_stream_sort(index, bs->null_slot, nnulls, false, &ntimes));
	}
	PG_CATCH();
	{
		gbt_gpu_sort_abort(bs->stream_slot);
		gbt_gpu_sort_abort(bs->null_slot);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!sorted)
	{
		gbt_gpu_sort_abort(bs->stream_slot);
		gbt_gpu_sort_abort(bs->null_slot);
		return NULL;
	}
	if (nnulls == 0)
	{
		/* an empty NULL tree: the CPU lays it out */
		gbt_gpu_sort_abort(bs->null_slot);
		bs->null_slot = -1;
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	sort_ms = INSTR_TIME_GET_MILLISEC(t1);

	INSTR_TIME_SET_CURRENT(t0);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_LOAD);
	source_from_array(&vsrc, NULL, 0);
	source_from_array(&nsrc, NULL, 0);
	if (!write_index(index, &vsrc, bs->streamed, &nsrc, nnulls, RelationNeedsWAL(index),
					 true, bs->stream_slot, bs->null_slot, NULL, &layout_ms, &dev_failed))
		return NULL;
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	write_ms = INSTR_TIME_GET_MILLISEC(t1);

	ereport(DEBUG1,
			(errmsg_internal("gbtree build of \"%s\" on the GPU, streamed: %zu entries (%zu NULL); heap scan %.1f ms (%d processes), during which the entries went to the device (%d chunks, %.1f ms of requests over all processes), sort %.1f ms (device sort %.1f ms in %.1f ms of requests), pages laid out on the device and brought back %.1f ms of requests, written (with the device copy) in %.1f ms in all",
							 RelationGetRelationName(index), (size_t) (bs->streamed + nnulls),
							 (size_t) nnulls, scan_ms, nparticipants, bs->stream_chunks,
							 bs->stream_ms, sort_ms, gtimes.sort_ms + ntimes.sort_ms,
							 gtimes.run_ms + ntimes.run_ms, layout_ms, write_ms)));
	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = bs->heaptuples;
	result->index_tuples = (double) (bs->streamed + nnulls);
	return result;
}

/* Values the heap will give, for sizing a streamed GPU sort (it grows). */
static Size
estimate_entries(Relation heap)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(heap);
	double		reltuples = heap->rd_rel->reltuples;
	BlockNumber relpages = heap->rd_rel->relpages;
	double		est;

	if (reltuples >= 0 && relpages > 0)
		est = reltuples / relpages * nblocks;
	else
		est = (double) nblocks * 128;	/* never analyzed: narrow rows */
	return (Size) Min(est * 1.05 + 1024, (double) MaxAllocHugeSize / sizeof(GbtEntry));
}

static IndexBuildResult *build_index(Relation heap, Relation index, IndexInfo *indexInfo,
									 bool cpu_only);

IndexBuildResult *
gbtbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	/* rebuilt in place (TRUNCATE): any device copy is of the old content */
	gbt_gpu_forget(index);
	if (indexInfo->ii_NumIndexKeyAttrs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gbtree indexes support only one key column")));

	result = build_index(heap, index, indexInfo, false);
	/* a streamed GPU build failed under gbtree.device = auto: start over */
	if (result == NULL)
		result = build_index(heap, index, indexInfo, true);
	return result;
}

/*
 * The build.  NULL when a GPU build that streamed its entries to the
 * device failed (under gbtree.device = auto; under gpu it is an ERROR):
 * the entries are then nowhere else, so the caller starts over with
 * cpu_only.
 */
static IndexBuildResult *
build_index(Relation heap, Relation index, IndexInfo *indexInfo, bool cpu_only)
{
	IndexBuildResult *result;
	GbtBuildState bs;
	MemoryContext buildcxt,
				oldcxt;
	GbtGpuSortTimes gtimes;
	bool		on_gpu = false;
	int			nparticipants;
	GbtParallelBuild pb;
	instr_time	t0,
				t1;
	double		scan_ms,
				sort_ms,
				write_ms,
				merge_ms = 0,
				layout_ms = 0;
	int			dev_slot = -1;	/* entries sorted and kept on the device */
	bool		dev_failed = false;
	pg_atomic_uint64 stream_next;	/* a serial streamed scan's */
	pg_atomic_uint64 null_next;
	pg_atomic_uint32 stream_bad;

	memset(&bs, 0, sizeof(bs));
	bs.index = index;
	bs.info = gbt_index_info(index);
	bs.worker = -1;
	bs.limit = entries_for_memory((Size) maintenance_work_mem);
	bs.cpu_only = cpu_only;
	bs.stream_slot = -1;
	bs.null_slot = -1;

	buildcxt = AllocSetContextCreate(CurrentMemoryContext, "gbtree build",
									 ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(buildcxt);

	/*
	 * A GPU build whose sort the device takes whole streams the values to
	 * it during the scan, from every participant, and has the device lay
	 * the pages out: no entries gather in the leader.
	 */
	if (!cpu_only)
	{
		Size		est = estimate_entries(heap);

		if (gbt_gpu_wanted(est) && gbt_gpu_can_layout(est) &&
			(bs.stream_slot = gbt_gpu_stream_begin(index, est)) < 0)
			bs.cpu_only = true; /* the GPU failed (auto): the CPU builds it */
		/* the NULLs to a sort of their own, which grows from a little */
		if (bs.stream_slot >= 0)
		{
			PG_TRY();
			{
				bs.null_slot = gbt_gpu_stream_begin(index, Min(est, 65536));
			}
			PG_CATCH();
			{
				gbt_gpu_sort_abort(bs.stream_slot);
				PG_RE_THROW();
			}
			PG_END_TRY();
			if (bs.null_slot < 0)
			{
				gbt_gpu_sort_abort(bs.stream_slot);
				bs.stream_slot = -1;
				bs.cpu_only = true;
			}
		}
		if (bs.stream_slot >= 0)
		{
			pg_atomic_init_u64(&stream_next, 0);
			pg_atomic_init_u64(&null_next, 0);
			pg_atomic_init_u32(&stream_bad, 0);
			bs.stream_next = &stream_next;
			bs.null_next = &null_next;
			bs.stream_bad = &stream_bad;
			bs.entries = palloc(GBT_STREAM_CHUNK * sizeof(GbtEntry));
			bs.capacity = GBT_STREAM_CHUNK;
			bs.nulls = palloc(GBT_STREAM_CHUNK * sizeof(GbtEntry));
			bs.nullcap = GBT_STREAM_CHUNK;
		}
	}

	INSTR_TIME_SET_CURRENT(t0);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_TABLESCAN);
	bs.tid_sorted = true;
	PG_TRY();
	{
		nparticipants = parallel_scan(heap, index, indexInfo, &bs, &pb);
		if (nparticipants == 0 && bs.stream_slot >= 0)
		{
			table_index_build_scan(heap, index, indexInfo, true, true,
								   gbt_build_callback, (void *) &bs, NULL);
			stream_flush(&bs);
		}
	}
	PG_CATCH();
	{
		if (bs.stream_slot >= 0)
		{
			gbt_gpu_sort_abort(bs.stream_slot);
			gbt_gpu_sort_abort(bs.null_slot);
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (bs.stream_slot >= 0)
	{
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		scan_ms = INSTR_TIME_GET_MILLISEC(t1);
		result = build_streamed(index, &bs, scan_ms, Max(nparticipants, 1));
		MemoryContextSwitchTo(oldcxt);
		if (result)
		{
			IndexBuildResult *r = palloc(sizeof(IndexBuildResult));

			*r = *result;
			result = r;
		}
		MemoryContextDelete(buildcxt);
		return result;
	}
	if (nparticipants == 0)
	{
		table_index_build_scan(heap, index, indexInfo, true, true,
							   gbt_build_callback, (void *) &bs, NULL);
		if (bs.nruns > 0)
		{
			spill(&bs, false);
			spill(&bs, true);
		}
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	scan_ms = INSTR_TIME_GET_MILLISEC(t1);

	if (bs.nruns > 0)
	{
		/* more than maintenance_work_mem: merge the runs into the pages */
		GbtSource	vsrc,
					nsrc;
		FileSet    *fs;

		INSTR_TIME_SET_CURRENT(t0);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
									 (int64) (bs.spilled_v + bs.spilled_n));
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_MERGE_LOAD);
		fs = pb.pcxt ? &pb.shared->fileset.fs : NULL;
		reduce_runs(&bs, 'v', fs);
		reduce_runs(&bs, 'n', fs);
		source_from_runs(&vsrc, &bs, 'v', fs, INT_MAX);
		source_from_runs(&nsrc, &bs, 'n', fs, INT_MAX);
		write_index(index, &vsrc, bs.spilled_v, &nsrc, bs.spilled_n, RelationNeedsWAL(index),
					bs.gpu_runs > 0, -1, -1, NULL, NULL, NULL);
		source_end(&vsrc);
		source_end(&nsrc);
		end_parallel(&pb);
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		write_ms = INSTR_TIME_GET_MILLISEC(t1);
		ereport(DEBUG1,
				(errmsg_internal("gbtree build of \"%s\" in sorted runs: %zu entries; heap scan, sorting and writing %d runs (%d sorted on the GPU) %.1f ms (%d processes), merge, layout and write%s %.1f ms",
								 RelationGetRelationName(index), (size_t) (bs.spilled_v + bs.spilled_n),
								 bs.nruns, bs.gpu_runs, scan_ms, Max(nparticipants, 1),
								 bs.gpu_runs > 0 ? " (and device copy)" : "", write_ms)));
		MemoryContextSwitchTo(oldcxt);
		result = palloc(sizeof(IndexBuildResult));
		result->heap_tuples = bs.heaptuples;
		result->index_tuples = (double) (bs.spilled_v + bs.spilled_n);
		MemoryContextDelete(buildcxt);
		return result;
	}

	INSTR_TIME_SET_CURRENT(t0);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
								 (int64) (bs.nentries + bs.nnulls));
	if (bs.nentries > 1 || bs.nnulls > 1)
	{
		Size		maxn = Max(bs.nentries, bs.nnulls);
		GbtEntry   *scratch = MemoryContextAllocHuge(buildcxt, maxn * sizeof(GbtEntry));

		gbt_advise_huge(scratch, maxn * sizeof(GbtEntry));

		/*
		 * The GPU sorts into the scratch array and leaves the entries as
		 * they were, so a failure can still fall back to the CPU sort.
		 */
		if (bs.nentries > 1 && !bs.cpu_only && gbt_gpu_wanted(bs.nentries))
		{
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_GPU_SORT);
			if (gbt_gpu_can_layout(bs.nentries))
			{
				/* sorted and laid out on the device; bs.entries stay as they are */
				dev_slot = gbt_gpu_sort_keep(index, bs.entries, bs.nentries, bs.tid_sorted,
											 &gtimes);
				on_gpu = (dev_slot >= 0);
			}
			else if (gbt_gpu_sort_entries(index, bs.entries, scratch, bs.nentries,
										  bs.tid_sorted, &gtimes))
			{
				GbtEntry   *sorted = scratch;

				scratch = bs.entries;
				bs.entries = sorted;
				on_gpu = true;
				/* more than the device takes at once: merge its runs */
				if (gtimes.nruns > 1)
				{
					instr_time	m0,
								m1;

					INSTR_TIME_SET_CURRENT(m0);
					pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_GPU_MERGE);
					gbt_merge_runs(bs.entries, scratch, bs.nentries, gtimes.run_entries, gtimes.nruns);
					sorted = scratch;
					scratch = bs.entries;
					bs.entries = sorted;
					INSTR_TIME_SET_CURRENT(m1);
					INSTR_TIME_SUBTRACT(m1, m0);
					merge_ms = INSTR_TIME_GET_MILLISEC(m1);
				}
			}
		}
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_SORT);
		if (!on_gpu)
			gbt_radix_sort(bs.entries, scratch, bs.nentries);
		gbt_radix_sort(bs.nulls, scratch, bs.nnulls);
		pfree(scratch);
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	sort_ms = INSTR_TIME_GET_MILLISEC(t1);

	INSTR_TIME_SET_CURRENT(t0);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_LOAD);
	{
		GbtSource	vsrc,
					nsrc;

		source_from_array(&vsrc, bs.entries, bs.nentries);
		source_from_array(&nsrc, bs.nulls, bs.nnulls);
		/* the first GPU scan of a GPU-built index finds it on the device */
		write_index(index, &vsrc, bs.nentries, &nsrc, bs.nnulls, RelationNeedsWAL(index),
					on_gpu, dev_slot, -1, bs.entries, &layout_ms, &dev_failed);
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	write_ms = INSTR_TIME_GET_MILLISEC(t1);

	if (dev_slot >= 0)
		ereport(DEBUG1,
				(errmsg_internal("gbtree build of \"%s\" on the GPU: %zu entries; heap scan %.1f ms (%d processes), sort %.1f ms (to the device %.1f ms, device sort %.1f ms in %.1f ms of requests), %s %.1f ms",
								 RelationGetRelationName(index), (size_t) (bs.nentries + bs.nnulls),
								 scan_ms, Max(nparticipants, 1), sort_ms, gtimes.to_device_ms,
								 gtimes.sort_ms, gtimes.run_ms,
								 dev_failed ? "the GPU failed laying out the pages: sorted and laid out on the CPU, written, with device copy," :
								 psprintf("pages laid out on the device and brought back (%.1f ms of requests), written, with device copy,", layout_ms),
								 write_ms)));
	else if (on_gpu)
		ereport(DEBUG1,
				(errmsg_internal("gbtree build of \"%s\" on the GPU: %zu entries; heap scan %.1f ms (%d processes), sort %.1f ms (%d run%s; to the device %.1f ms, device sort %.1f ms in %.1f ms of requests, back %.1f ms, merge %.1f ms), layout, write and device copy %.1f ms",
								 RelationGetRelationName(index), (size_t) (bs.nentries + bs.nnulls),
								 scan_ms, Max(nparticipants, 1), sort_ms, gtimes.nruns,
								 gtimes.nruns == 1 ? "" : "s", gtimes.to_device_ms, gtimes.sort_ms,
								 gtimes.run_ms, gtimes.from_device_ms, merge_ms, write_ms)));
	else
		ereport(DEBUG1,
				(errmsg_internal("gbtree build of \"%s\" on the CPU: %zu entries; heap scan %.1f ms (%d processes), sort %.1f ms, layout and write %.1f ms",
								 RelationGetRelationName(index), (size_t) (bs.nentries + bs.nnulls),
								 scan_ms, Max(nparticipants, 1), sort_ms, write_ms)));

	MemoryContextSwitchTo(oldcxt);
	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = bs.heaptuples;
	result->index_tuples = (double) (bs.nentries + bs.nnulls);
	MemoryContextDelete(buildcxt);
	return result;
}

/* Init fork of an unlogged index: metapage and two empty root leaves. */
void
gbtbuildempty(Relation index)
{
	Page		page = (Page) palloc(BLCKSZ);
	SMgrRelation smgr;

	for (BlockNumber blk = 0; blk <= GBT_NULLROOT_BLKNO; blk++)
	{
		if (blk == GBT_META_BLKNO)
			gbt_init_metapage(page, index, 0);
		else
			gbt_init_page(page, true, 0,
						  GBT_F_ROOT | GBT_F_RIGHTMOST |
						  (blk == GBT_NULLROOT_BLKNO ? GBT_F_NULLTREE : 0));
		smgr = RelationGetSmgr(index);
		log_newpage(&smgr->smgr_rnode.node, INIT_FORKNUM, blk, page, true);
		PageSetChecksumInplace(page, blk);
		smgrextend(smgr, INIT_FORKNUM, blk, (char *) page, true);
	}
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
	pfree(page);
}

char *
gbtbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case GBT_PHASE_TABLESCAN:
			return "building index: scanning table";
		case GBT_PHASE_SORT:
			return "building index: sorting keys";
		case GBT_PHASE_LOAD:
			return "building index: writing pages";
		case GBT_PHASE_GPU_SORT:
			return "building index: sorting keys on the GPU";
		case GBT_PHASE_GPU_MERGE:
			return "building index: merging the GPU's sorted runs";
		case GBT_PHASE_MERGE_LOAD:
			return "building index: merging sorted runs into pages";
		default:
			return NULL;
	}
}
