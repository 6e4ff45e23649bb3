/*-------------------------------------------------------------------------
 *
 * build.c
 *	  CREATE INDEX for gbtree: heap scan, radix sort of fixed-width
 *	  (key, TID) pairs, bottom-up page layout, sequential bulk writes.
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

typedef struct GbtBuildState
{
	Relation	index;
	GbtIndexInfo *info;
	GbtEntry   *entries;		/* non-null (key, tid) */
	Size		nentries;
	Size		capacity;
	GbtEntry   *nulls;			/* tids of NULL keys (key 0) */
	Size		nnulls;
	Size		nullcap;
	double		heaptuples;
	bool		tid_sorted;		/* entries arrived in TID order */
} GbtBuildState;

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
} GbtPageWriter;

/*
 * Ask for transparent huge pages on a large array: a 100M-entry build
 * touches 1.6 GB per array, and taking it in 4 kB page faults costs about
 * a second each time.
 */
static void
advise_huge(void *p, Size len)
{
#if defined(MADV_HUGEPAGE)
	uintptr_t	start = TYPEALIGN((uintptr_t) 2 * 1024 * 1024, (uintptr_t) p);
	uintptr_t	end = TYPEALIGN_DOWN((uintptr_t) 2 * 1024 * 1024, (uintptr_t) p + len);

	if (len >= (Size) 64 * 1024 * 1024 && end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
}

static void
grow(GbtEntry **arr, Size *cap)
{
	Size		newcap = (*cap == 0) ? 65536 : *cap * 2;

	if (newcap * sizeof(GbtEntry) > MaxAllocHugeSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many index entries for one gbtree build")));
	if (*arr == NULL)
		*arr = MemoryContextAllocHuge(CurrentMemoryContext, newcap * sizeof(GbtEntry));
	else
		*arr = repalloc_huge(*arr, newcap * sizeof(GbtEntry));
	*cap = newcap;
	advise_huge(*arr, newcap * sizeof(GbtEntry));
}

static void
gbt_build_callback(Relation index, ItemPointer tid, Datum *values,
				   bool *isnull, bool tupleIsAlive, void *state)
{
	GbtBuildState *bs = (GbtBuildState *) state;

	if (isnull[0])
	{
		if (bs->nnulls == bs->nullcap)
			grow(&bs->nulls, &bs->nullcap);
		bs->nulls[bs->nnulls].key = 0;
		bs->nulls[bs->nnulls].tid = gbt_tid_from_itemptr(tid, 0);
		bs->nnulls++;
	}
	else
	{
		uint16		flags;
		uint64		key = gbt_index_key(bs->info, values[0], &flags);

		uint64		t = gbt_tid_from_itemptr(tid, flags);

		if (bs->nentries == bs->capacity)
			grow(&bs->entries, &bs->capacity);
		if (bs->nentries > 0 && bs->entries[bs->nentries - 1].tid > t)
			bs->tid_sorted = false;
		bs->entries[bs->nentries].key = key;
		bs->entries[bs->nentries].tid = t;
		bs->nentries++;
	}
	bs->heaptuples += 1;
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
	SharedFileSet fileset;
	/* then the ParallelTableScanDesc */
} GbtBuildShared;

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
		advise_huge(*arr, newcap * sizeof(GbtEntry));
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
	table_index_build_scan(heap, index, indexInfo, true, false,
						   gbt_build_callback, (void *) &bs,
						   table_beginscan_parallel(heap, GbtBuildSharedScan(shared)));

	snprintf(name, sizeof(name), "e%d", ParallelWorkerNumber);
	write_entries(&shared->fileset.fs, name, bs.entries, bs.nentries);
	snprintf(name, sizeof(name), "n%d", ParallelWorkerNumber);
	write_entries(&shared->fileset.fs, name, bs.nulls, bs.nnulls);
	SpinLockAcquire(&shared->mutex);
	shared->heaptuples += bs.heaptuples;
	SpinLockRelease(&shared->mutex);

	index_close(index, indexlock);
	table_close(heap, heaplock);
}

/*
 * Scan the heap with parallel workers when the planner's rule for index
 * builds (plan_create_index_workers: table size, max_parallel_maintenance_
 * workers, maintenance_work_mem) grants any.  Returns the number of
 * workers that took part, 0 if the caller must scan alone.
 */
static int
parallel_scan(Relation heap, Relation index, IndexInfo *indexInfo, GbtBuildState *bs)
{
	int			request;
	ParallelContext *pcxt;
	Snapshot	snapshot;
	Size		estshared;
	GbtBuildShared *shared;
	char	   *sharedquery;
	int			querylen;
	int			launched;

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
	querylen = debug_query_string ? strlen(debug_query_string) : 0;
	shm_toc_estimate_chunk(&pcxt->estimator, querylen + 1);
	shm_toc_estimate_keys(&pcxt->estimator, 2);
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
	SharedFileSetInit(&shared->fileset, pcxt->seg);
	table_parallelscan_initialize(heap, GbtBuildSharedScan(shared), snapshot);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_GBT_SHARED, shared);
	sharedquery = shm_toc_allocate(pcxt->toc, querylen + 1);
	if (querylen > 0)
		memcpy(sharedquery, debug_query_string, querylen);
	sharedquery[querylen] = '\0';
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_QUERY_TEXT, sharedquery);

	LaunchParallelWorkers(pcxt);
	launched = pcxt->nworkers_launched;

	/* the leader scans too (alone, if no worker could be started) */
	table_index_build_scan(heap, index, indexInfo, true, true,
						   gbt_build_callback, (void *) bs,
						   table_beginscan_parallel(heap, GbtBuildSharedScan(shared)));
	WaitForParallelWorkersToFinish(pcxt);

	for (int i = 0; i < launched; i++)
	{
		char		name[32];

		snprintf(name, sizeof(name), "e%d", i);
		read_entries(&shared->fileset.fs, name, &bs->entries, &bs->nentries, &bs->capacity);
		snprintf(name, sizeof(name), "n%d", i);
		read_entries(&shared->fileset.fs, name, &bs->nulls, &bs->nnulls, &bs->nullcap);
	}
	bs->heaptuples += shared->heaptuples;
	if (launched > 0)
		bs->tid_sorted = false;	/* the parts interleave */

	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return Max(launched, 0) + 1;
}

/*
 * LSD radix sort by (key, tid), one byte per pass, skipping passes where
 * every entry has the same byte.  The TID's low 16 bits are flags and
 * never distinguish two entries, so they are not sorted on.  If the input
 * is already in TID order (a plain heap scan), the TID passes are skipped.
 */
void
gbt_radix_sort(GbtEntry *entries, GbtEntry *scratch, Size n)
{
	/* 14 passes: tid bytes 2..7, then key bytes 0..7 */
	Size	   *hist;
	GbtEntry   *src = entries,
			   *dst = scratch;
	bool		tid_sorted = true;
	int			pass;

	if (n < 2)
		return;
	hist = palloc0(sizeof(Size) * 14 * 256);
	for (Size i = 0; i < n; i++)
	{
		uint64		t = entries[i].tid;
		uint64		k = entries[i].key;

		if (i > 0 && entries[i - 1].tid > t)
			tid_sorted = false;
		for (int b = 0; b < 6; b++)
			hist[b * 256 + ((t >> (16 + 8 * b)) & 0xFF)]++;
		for (int b = 0; b < 8; b++)
			hist[(6 + b) * 256 + ((k >> (8 * b)) & 0xFF)]++;
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	for (pass = tid_sorted ? 6 : 0; pass < 14; pass++)
	{
		Size	   *h = hist + pass * 256;
		Size		offs[256];
		Size		sum = 0;
		int			shift = pass < 6 ? 16 + 8 * pass : 8 * (pass - 6);
		bool		trivial = false;

		for (int v = 0; v < 256; v++)
		{
			if (h[v] == n)
				trivial = true;
			offs[v] = sum;
			sum += h[v];
		}
		if (trivial)
			continue;
		for (Size i = 0; i < n; i++)
		{
			uint64		word = pass < 6 ? src[i].tid : src[i].key;

			dst[offs[(word >> shift) & 0xFF]++] = src[i];
		}
		{
			GbtEntry   *tmp = src;

			src = dst;
			dst = tmp;
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (src != entries)
		memcpy(entries, src, sizeof(GbtEntry) * n);
	pfree(hist);
}

/*
 * Merge the nruns consecutive sorted runs of src (runlen entries each, the
 * last one shorter) into dst, by (key, TID), through a binary heap of the
 * runs' next entries.
 */
static void
merge_runs(const GbtEntry *src, GbtEntry *dst, Size n, Size runlen, int nruns)
{
	Size	   *next = palloc(sizeof(Size) * nruns);
	Size	   *end = palloc(sizeof(Size) * nruns);
	int		   *heap = palloc(sizeof(int) * nruns);
	int			nheap = 0;

#define RUN_LT(a, b) gbt_entry_lt(src[next[a]].key, src[next[a]].tid, \
								  src[next[b]].key, src[next[b]].tid)

	for (int r = 0; r < nruns; r++)
	{
		next[r] = (Size) r * runlen;
		end[r] = Min(n, next[r] + runlen);
		if (next[r] < end[r])
		{
			/* sift up */
			int			i = nheap++;

			heap[i] = r;
			while (i > 0 && RUN_LT(heap[i], heap[(i - 1) / 2]))
			{
				int			t = heap[i];

				heap[i] = heap[(i - 1) / 2];
				heap[(i - 1) / 2] = t;
				i = (i - 1) / 2;
			}
		}
	}
	for (Size out = 0; nheap > 0; out++)
	{
		int			r = heap[0];
		int			i = 0;

		dst[out] = src[next[r]++];
		if (next[r] == end[r])
			heap[0] = heap[--nheap];
		/* sift down */
		for (;;)
		{
			int			l = 2 * i + 1,
						m = i;

			if (l < nheap && RUN_LT(heap[l], heap[m]))
				m = l;
			if (l + 1 < nheap && RUN_LT(heap[l + 1], heap[m]))
				m = l + 1;
			if (m == i)
				break;
			{
				int			t = heap[i];

				heap[i] = heap[m];
				heap[m] = t;
			}
			i = m;
		}
		if ((out & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
#undef RUN_LT
	pfree(next);
	pfree(end);
	pfree(heap);
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
	w->n = 0;
}

/* Returns the batch slot for block blkno; the caller fills the page. */
static Page
writer_page(GbtPageWriter *w, BlockNumber blkno)
{
	if (w->n == GBT_WRITE_BATCH)
		writer_flush(w);
	w->blknos[w->n] = blkno;
	return (Page) w->pages[w->n++];
}

/*
 * Build one tree bottom-up from sorted entries, top page at rootblk.
 * Separators of inner pages are the first entry of each child.
 */
static void
build_tree(GbtPageWriter *w, GbtEntry *entries, Size n, BlockNumber rootblk,
		   uint16 treeflag, int fillfactor)
{
	int			leafcap = Max(1, GBT_LEAF_SLOTS * fillfactor / 100);
	int			innercap = Max(2, GBT_INNER_SLOTS * GBT_INNER_FILLFACTOR / 100);
	Size		npages[32];
	int			nlevels = 0;
	Size		cnt;
	GbtEntry   *seps = NULL;	/* separators of the level being built */
	BlockNumber *sepblk = NULL;
	Size		nseps = 0;
	uint64	   *kbuf = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint64	   *tbuf = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint32	   *cbuf = palloc(sizeof(uint32) * GBT_MAX_SLOTS);

	/* number of pages per level */
	cnt = n;
	npages[0] = Max((Size) 1, (cnt + leafcap - 1) / leafcap);
	nlevels = 1;
	while (npages[nlevels - 1] > 1)
	{
		npages[nlevels] = (npages[nlevels - 1] + innercap - 1) / innercap;
		nlevels++;
	}

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
					kbuf[i] = entries[from + i].key;
					tbuf[i] = entries[from + i].tid;
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
				op->lowkey = level == 0 ? entries[from].key : seps[from].key;
				op->lowtid = level == 0 ? entries[from].tid : seps[from].tid;
			}
			if (p + 1 < np)
			{
				Size		nf = (nin * (p + 1)) / np;

				op->rightlink = blk + 1;
				op->hikey = level == 0 ? entries[nf].key : seps[nf].key;
				op->hitid = level == 0 ? entries[nf].tid : seps[nf].tid;
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

static void
write_index(Relation index, GbtEntry *entries, Size n, GbtEntry *nulls, Size nnulls,
			bool use_wal)
{
	GbtPageWriter *w = palloc0(sizeof(GbtPageWriter));
	int			ff = gbt_get_fillfactor(index);
	Page		meta;

	w->index = index;
	w->use_wal = use_wal;
	w->nextblk = GBT_FIRST_FREE_BLKNO;
	w->extended = 0;
	for (int i = 0; i < GBT_WRITE_BATCH; i++)
		w->pages[i] = palloc(BLCKSZ);

	build_tree(w, entries, n, GBT_ROOT_BLKNO, 0, ff);
	build_tree(w, nulls, nnulls, GBT_NULLROOT_BLKNO, GBT_F_NULLTREE, ff);
	meta = writer_page(w, GBT_META_BLKNO);
	gbt_init_metapage(meta, index, n + nnulls);
	writer_flush(w);

	/* as nbtree: the pages bypassed shared buffers, so sync them now */
	if (use_wal)
		smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);
}

IndexBuildResult *
gbtbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	GbtBuildState bs;
	MemoryContext buildcxt,
				oldcxt;
	GbtGpuSortTimes gtimes;
	bool		on_gpu = false;
	int			nparticipants;
	instr_time	t0,
				t1;
	double		scan_ms,
				sort_ms,
				write_ms,
				preload_ms,
				merge_ms = 0;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	/* rebuilt in place (TRUNCATE): any device copy is of the old content */
	gbt_gpu_forget(index);
	if (indexInfo->ii_NumIndexKeyAttrs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gbtree indexes support only one key column")));

	memset(&bs, 0, sizeof(bs));
	bs.index = index;
	bs.info = gbt_index_info(index);

	buildcxt = AllocSetContextCreate(CurrentMemoryContext, "gbtree build",
									 ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(buildcxt);

	INSTR_TIME_SET_CURRENT(t0);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_TABLESCAN);
	bs.tid_sorted = true;
	nparticipants = parallel_scan(heap, index, indexInfo, &bs);
	if (nparticipants == 0)
		table_index_build_scan(heap, index, indexInfo, true, true,
							   gbt_build_callback, (void *) &bs, NULL);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	scan_ms = INSTR_TIME_GET_MILLISEC(t1);

	INSTR_TIME_SET_CURRENT(t0);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
								 (int64) (bs.nentries + bs.nnulls));
	if (bs.nentries > 1 || bs.nnulls > 1)
	{
		Size		maxn = Max(bs.nentries, bs.nnulls);
		GbtEntry   *scratch = MemoryContextAllocHuge(buildcxt, maxn * sizeof(GbtEntry));

		advise_huge(scratch, maxn * sizeof(GbtEntry));

		/*
		 * The GPU sorts into the scratch array and leaves the entries as
		 * they were, so a failure can still fall back to the CPU sort.
		 */
		if (bs.nentries > 1 && gbt_gpu_wanted(bs.nentries))
		{
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_GPU_SORT);
			if (gbt_gpu_sort_entries(index, bs.entries, scratch, bs.nentries,
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
					merge_runs(bs.entries, scratch, bs.nentries, gtimes.run_entries, gtimes.nruns);
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
	write_index(index, bs.entries, bs.nentries, bs.nulls, bs.nnulls,
				RelationNeedsWAL(index));
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	write_ms = INSTR_TIME_GET_MILLISEC(t1);

	/* the first GPU scan of a GPU-built index finds it on the device */
	INSTR_TIME_SET_CURRENT(t0);
	if (on_gpu)
	{
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_GPU_LOAD);
		gbt_gpu_preload(index);
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	preload_ms = INSTR_TIME_GET_MILLISEC(t1);

	if (on_gpu)
		ereport(DEBUG1,
				(errmsg_internal("gbtree build of \"%s\" on the GPU: %zu entries; heap scan %.1f ms (%d processes), sort %.1f ms (%d run%s; to the device %.1f ms, device sort %.1f ms in %.1f ms of requests, back %.1f ms, merge %.1f ms), layout and write %.1f ms, device copy %.1f ms",
								 RelationGetRelationName(index), (size_t) (bs.nentries + bs.nnulls),
								 scan_ms, Max(nparticipants, 1), sort_ms, gtimes.nruns,
								 gtimes.nruns == 1 ? "" : "s", gtimes.to_device_ms, gtimes.sort_ms,
								 gtimes.run_ms, gtimes.from_device_ms, merge_ms, write_ms, preload_ms)));
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
		case GBT_PHASE_GPU_LOAD:
			return "building index: loading the device copy";
		case GBT_PHASE_GPU_MERGE:
			return "building index: merging the GPU's sorted runs";
		default:
			return NULL;
	}
}
