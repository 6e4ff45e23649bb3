/*-------------------------------------------------------------------------
 *
 * build_runs.c
 *	  The sorted runs of a gbtree build that holds more entries than
 *	  maintenance_work_mem: each participant sorts what it holds and
 *	  spills it to a temporary file, and the leader merges the runs on the
 *	  way to the pages (see src/README, "Build").
 *
 * The merge reads the runs through a binary heap of their next entries,
 * with a buffer for each run.  It is not sort.c's in-memory merge: its
 * inputs are files, a worker's in the shared file set under a name made
 * from its worker number, tree and run number.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "gbtree_build.h"

/* entries read from (or written to) a run at a time */
#define GBT_RUN_READ	4096

/*
 * A merge reads every run at once, with a buffer for each: merge runs in
 * groups into longer ones first while there are more than this.
 */
#define GBT_MERGE_FANIN 128

/* The name of a worker's run in the shared file set */
static void
worker_run_name(char *name, Size len, int worker, char tree, int runno)
{
	snprintf(name, len, "w%d.%c.%d", worker, tree, runno);
}

/*
 * Sort the n entries of arr by (key, TID), on the GPU when gbtree.device
 * and the size call for it, else on the CPU.  Returns the sorted array:
 * arr or scratch.  Parallel workers sort their runs on the CPU, in
 * parallel: the GPU service runs a bounded number of sorts at once, and
 * the leader's runs keep it busy.
 */
static GbtEntry *
sort_run_entries(GbtBuildState *bs, GbtEntry *arr, GbtEntry *scratch, Size n,
				 bool tid_sorted, bool nulls)
{
	GbtGpuSortTimes gtimes;

	if (!nulls && n > 1 && bs->worker < 0 && !bs->cpu_only && gbt_gpu_wanted(n) &&
		gbt_gpu_build_sort(bs->gpu, arr, scratch, n, tid_sorted, false, &gtimes))
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

/* Record a run for the merge: the leader's file, or a worker's (file NULL). */
void
gbt_build_add_run(GbtBuildState *bs, BufFile *file, int worker, char tree, int runno)
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
void
gbt_build_spill_run(GbtBuildState *bs, bool nulls)
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
	sorted = sort_run_entries(bs, *arr, scratch, *n, nulls || bs->tid_sorted, nulls);
	if (bs->worker >= 0)
	{
		char		name[64];

		worker_run_name(name, sizeof(name), bs->worker, tree, *nruns);
		f = BufFileCreateFileSet(bs->fileset, name);
		BufFileWrite(f, (void *) sorted, *n * sizeof(GbtEntry));
		BufFileClose(f);
	}
	else
	{
		f = BufFileCreateTemp(false);
		BufFileWrite(f, (void *) sorted, *n * sizeof(GbtEntry));
		gbt_build_add_run(bs, f, -1, tree, *nruns);
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

/* Refill an input's buffer from its run; false when the run is used up. */
static bool
refill_merge_input(GbtMergeInput *in)
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
sift_down_merge_heap(GbtSource *src, int i)
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
void
gbt_source_from_runs(GbtSource *src, GbtBuildState *bs, char tree, FileSet *shared, int maxin)
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

			worker_run_name(name, sizeof(name), run->worker, run->tree, run->runno);
			in->file = BufFileOpenFileSet(shared, name, O_RDONLY, false);
		}
		in->own = true;
		in->buf = palloc(GBT_RUN_READ * sizeof(GbtEntry));
		if (refill_merge_input(in))
			src->heap[src->nheap++] = k;
		k++;
	}
	src->nin = k;
	for (int i = src->nheap / 2 - 1; i >= 0; i--)
		sift_down_merge_heap(src, i);
}

/* gbt_source_next() of a merge: take the least of the runs' next entries */
void
gbt_source_take_merged(GbtSource *src, GbtEntry *e)
{
	GbtMergeInput *in;

	if (src->nheap == 0)
		elog(ERROR, "gbtree build: fewer entries in the sorted runs than counted");
	in = &src->in[src->heap[0]];
	*e = in->buf[in->pos++];
	if (in->pos == in->nbuf && !refill_merge_input(in))
		src->heap[0] = src->heap[--src->nheap];
	sift_down_merge_heap(src, 0);
}

void
gbt_source_end(GbtSource *src)
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
 * Merge the runs of tree in groups of GBT_MERGE_FANIN into longer runs of
 * the leader's until no more than GBT_MERGE_FANIN are left.
 */
void
gbt_build_merge_excess_runs(GbtBuildState *bs, char tree, FileSet *shared)
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
		gbt_source_from_runs(&src, bs, tree, shared, GBT_MERGE_FANIN);
		f = BufFileCreateTemp(false);
		while (gbt_source_peek(&src, &e))
		{
			gbt_source_next(&src, &out[nout++]);
			if (nout == GBT_RUN_READ)
			{
				BufFileWrite(f, out, nout * sizeof(GbtEntry));
				nout = 0;
				CHECK_FOR_INTERRUPTS();
			}
		}
		if (nout > 0)
			BufFileWrite(f, out, nout * sizeof(GbtEntry));
		gbt_source_end(&src);
		gbt_build_add_run(bs, f, -1, tree, -1);
	}
	pfree(out);
}
