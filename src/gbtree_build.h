/*-------------------------------------------------------------------------
 *
 * gbtree_build.h
 *	  Declarations shared by the files of CREATE INDEX: build.c (the scan's
 *	  callback, the page layout, the build strategies), build_runs.c (the
 *	  sorted runs of a build beyond maintenance_work_mem) and
 *	  build_parallel.c (the parallel heap scan).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_BUILD_H
#define GBTREE_BUILD_H

#include "access/parallel.h"
#include "port/atomics.h"
#include "storage/buffile.h"
#include "storage/fileset.h"
#include "utils/snapshot.h"

#include "gbtree.h"
#include "gbtree_gpu.h"

#define GBT_WRITE_BATCH		32

/* A build's page writer: pages go out in block order, WAL-logged in batches */
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
	GbtGpuBuild *load;			/* the GPU session loading the device copy
								 * meanwhile, or NULL */
} GbtPageWriter;

extern void gbt_writer_flush(GbtPageWriter *w);
extern Page gbt_writer_page(GbtPageWriter *w, BlockNumber blkno);

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
	GbtGpuBuild *gpu;			/* the leader's GPU session (gbtree_gpu.h); a
								 * worker's, attached, if it streams */

	/*
	 * Streaming to the device (streaming): values go to the session's
	 * device sort of values, NULLs to its sort of NULLs, in chunks of
	 * GBT_STREAM_CHUNK as the scan finds them, at offsets reserved in
	 * *stream_next and *null_next; entries[] and nulls[] only hold the
	 * chunks being filled.  Any participant's failure sets *stream_bad,
	 * and the build starts over on the CPU.
	 */
	bool		streaming;
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

/* A parallel build's context, kept until the workers' runs are merged */
typedef struct GbtParallelBuild
{
	ParallelContext *pcxt;
	Snapshot	snapshot;
	FileSet    *fileset;		/* the workers' runs and entries */
} GbtParallelBuild;

/*
 * Where build_tree() takes the leaf entries from, in (key, TID) order:
 * a sorted array, or a merge of sorted runs in temporary files.
 */
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

/* build.c */
extern void gbt_build_callback(Relation index, ItemPointer tid, Datum *values,
							   bool *isnull, bool tupleIsAlive, void *state);
extern void gbt_build_stream_flush(GbtBuildState *bs);

/* build_runs.c */
extern void gbt_build_spill_run(GbtBuildState *bs, bool nulls);
extern void gbt_build_add_run(GbtBuildState *bs, BufFile *file, int worker, char tree,
							  int runno);
extern void gbt_build_merge_excess_runs(GbtBuildState *bs, char tree, FileSet *shared);
extern void gbt_source_from_runs(GbtSource *src, GbtBuildState *bs, char tree,
								 FileSet *shared, int maxin);
extern void gbt_source_take_merged(GbtSource *src, GbtEntry *e);
extern void gbt_source_end(GbtSource *src);

/* build_parallel.c */
extern Size gbt_build_entries_for_memory(Size memory_kb);
extern int	gbt_build_parallel_scan(Relation heap, Relation index, struct IndexInfo *indexInfo,
									GbtBuildState *bs, GbtParallelBuild *pb);
extern void gbt_build_end_parallel(GbtParallelBuild *pb);

/*
 * The array mode of a source is inline: build_tree() takes every leaf
 * entry through it.
 */
static inline void
gbt_source_from_array(GbtSource *src, const GbtEntry *arr, Size n)
{
	memset(src, 0, sizeof(*src));
	src->arr = arr;
	src->n = n;
}

/* the next entry, without taking it; false at the end */
static inline bool
gbt_source_peek(GbtSource *src, GbtEntry *e)
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

/* take the next entry; an ERROR past the end */
static inline void
gbt_source_next(GbtSource *src, GbtEntry *e)
{
	if (src->in != NULL)
	{
		gbt_source_take_merged(src, e);
		return;
	}
	if (src->pos >= src->n)
		elog(ERROR, "gbtree build: fewer entries than counted");
	*e = src->arr[src->pos++];
}

#endif							/* GBTREE_BUILD_H */
