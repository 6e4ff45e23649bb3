/*-------------------------------------------------------------------------
 *
 * build.c
 *	  CREATE INDEX for gbtree: heap scan, radix sort of fixed-width
 *	  (key, TID) pairs, bottom-up page layout, sequential bulk writes.
 *
 * The entries held in memory are bounded by maintenance_work_mem; beyond
 * it each participant spills sorted runs, which are merged on the way to
 * the pages (build_runs.c; see src/README, "Build").  Workers scan the
 * heap with the leader when the planner grants them (build_parallel.c).
 *
 * Pages are built in local memory, WAL-logged in batches with
 * log_newpages() and written with smgrextend() in block order, as nbtree's
 * build does; the two roots and the metapage sit in blocks 0-2 and are
 * written last.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gbtree_build.h"
#include "gbtree_wide.h"


/*
 * A serial streamed scan's offsets into the device sorts and its failure
 * flag; a parallel scan's are in its shared memory.
 */
typedef struct GbtStreamCounters
{
	pg_atomic_uint64 stream_next;
	pg_atomic_uint64 null_next;
	pg_atomic_uint32 stream_bad;
} GbtStreamCounters;

/* Milliseconds since start: the build's timings for its DEBUG1 summary */
static double
elapsed_ms(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* Double an array of entries the scan fills (*cap entries now). */
static void
grow_entry_array(GbtEntry **arr, Size *cap, Size limit)
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
			instr_time	start;

			INSTR_TIME_SET_CURRENT(start);
			if (!gbt_gpu_build_put(bs->gpu, nulls, off, nulls ? bs->nulls : bs->entries, *n,
								   bs->stream_err, sizeof(bs->stream_err)))
			{
				bs->stream_failed = true;
				pg_atomic_write_u32(bs->stream_bad, 1);
			}
			bs->stream_ms += elapsed_ms(start);
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

/* Send what is left in memory to the device once the scan is done. */
void
gbt_build_stream_flush(GbtBuildState *bs)
{
	stream_chunk(bs, false);
	stream_chunk(bs, true);
}

/*
 * Each heap tuple of the scan, the leader's or a worker's: its entry goes
 * into memory, then to the device or into a run when there is enough.
 */
void
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
			grow_entry_array(&bs->nulls, &bs->nullcap, bs->limit);
		e = &bs->nulls[bs->nnulls++];
		e->key = 0;
		e->tid = gbt_tid_from_itemptr(tid, 0);
	}
	else
	{
		uint16		flags;

		if (bs->nentries == bs->capacity)
			grow_entry_array(&bs->entries, &bs->capacity, bs->limit);
		e = &bs->entries[bs->nentries++];
		e->key = gbt_index_key(bs->info, values[0], &flags);
		e->tid = gbt_tid_from_itemptr(tid, flags);
		if (bs->last_tid > e->tid)
			bs->tid_sorted = false;
		bs->last_tid = e->tid;
	}
	if (bs->streaming)
	{
		/* a chunk of each in memory: a full one goes to the device */
		if ((null ? bs->nnulls : bs->nentries) == GBT_STREAM_CHUNK)
			stream_chunk(bs, null);
	}
	else if (bs->nentries + bs->nnulls >= bs->limit)
		gbt_build_spill_run(bs, bs->nnulls > bs->nentries);
}

void
gbt_writer_flush(GbtPageWriter *w)
{
	SMgrRelation smgr;

	if (w->n == 0)
		return;
	if (w->use_wal)
		log_newpages(&gbt_rel_storage(w->index), MAIN_FORKNUM, w->n, w->blknos, w->pages, true);
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
		gbt_gpu_build_load_done(w->load, w->blknos, w->n);
	w->n = 0;
}

/*
 * Returns the batch slot for block blkno; the caller fills the page.
 * While the device copy is loaded, a batch's slots lie in the loader's
 * shipment buffer, so the pages need no copying to get there.
 */
Page
gbt_writer_page(GbtPageWriter *w, BlockNumber blkno)
{
	if (w->n == GBT_WRITE_BATCH)
		gbt_writer_flush(w);
	if (w->load && w->n == 0)
	{
		char	   *slots = gbt_gpu_build_load_next(w->load, GBT_WRITE_BATCH);

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
 * The leaves of a tree with deduplication: each leaf takes as many of the
 * sorted entries as gbt_leaf_prefix gives it (the posting form where keys
 * repeat, else the plain form's share), so the number of leaves is known
 * only at the end.  Leaves go to consecutive blocks, or, when one leaf
 * takes everything, to rootblk.  Returns the number of leaves, with their
 * first entries and blocks in *seps and *sepblk (not set for a root leaf).
 */
static Size
build_leaves_posting(GbtPageWriter *w, GbtSource *src, BlockNumber rootblk, uint16 treeflag,
					 int fillfactor, GbtEntry **seps, BlockNumber **sepblk)
{
	uint64	   *kbuf = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
	uint64	   *tbuf = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
	Size		cap = 1024;
	Size		np = 0;
	int			cnt = 0;
	bool		more = true;

	*seps = palloc(sizeof(GbtEntry) * cap);
	*sepblk = palloc(sizeof(BlockNumber) * cap);
	for (;;)
	{
		int			take;
		bool		last;
		BlockNumber blk;
		Page		page;
		GbtPageOpaque op;
		GbtEntry	e;

		CHECK_FOR_INTERRUPTS();
		while (more && cnt < GBT_LEAF_MAX_ENTRIES)
		{
			if (!gbt_source_peek(src, &e))
			{
				more = false;
				break;
			}
			gbt_source_next(src, &e);
			kbuf[cnt] = e.key;
			tbuf[cnt] = e.tid;
			cnt++;
		}
		take = gbt_leaf_prefix(true, kbuf, tbuf, cnt, fillfactor);
		last = !more && take == cnt;
		blk = (last && np == 0) ? rootblk : w->nextblk++;
		page = gbt_writer_page(w, blk);
		gbt_init_page(page, true, 0, treeflag | ((last && np == 0) ? GBT_F_ROOT : 0));
		gbt_leaf_fill((char *) page, take, kbuf, tbuf, true);
		gbt_leaf_set_lower(page);
		op = gbt_page_opaque((char *) page);
		op->leftlink = np == 0 ? GBT_NO_BLOCK : blk - 1;
		if (np > 0)
		{
			op->lowkey = kbuf[0];
			op->lowtid = tbuf[0];
		}
		if (last)
			op->flags |= GBT_F_RIGHTMOST;
		else
		{
			op->rightlink = blk + 1;
			/* the next leaf's first entry */
			op->hikey = kbuf[take];
			op->hitid = tbuf[take];
		}
		if (np == cap)
		{
			cap *= 2;
			*seps = repalloc(*seps, sizeof(GbtEntry) * cap);
			*sepblk = repalloc(*sepblk, sizeof(BlockNumber) * cap);
		}
		(*seps)[np].key = kbuf[0];
		(*seps)[np].tid = tbuf[0];
		(*sepblk)[np] = blk;
		np++;
		w->done += take;
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, w->done);
		if (last)
			break;
		cnt -= take;
		memmove(kbuf, kbuf + take, sizeof(uint64) * cnt);
		memmove(tbuf, tbuf + take, sizeof(uint64) * cnt);
	}
	pfree(kbuf);
	pfree(tbuf);
	return np;
}

/*
 * Build one tree bottom-up from sorted entries, top page at rootblk.
 * Separators of inner pages are the first entry of each child.  With
 * dedup, the leaves come from build_leaves_posting.
 */
static void
build_tree(GbtPageWriter *w, GbtSource *src, Size n, BlockNumber rootblk,
		   uint16 treeflag, int fillfactor, bool dedup)
{
	Size		npages[32];
	int			nlevels;
	GbtEntry   *seps = NULL;	/* separators of the level being built */
	BlockNumber *sepblk = NULL;
	Size		nseps = 0;
	int			firstlevel = 0;
	uint64	   *kbuf = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint64	   *tbuf = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint32	   *cbuf = palloc(sizeof(uint32) * GBT_MAX_SLOTS);

	if (dedup && n > GBT_LEAF_SLOTS)
	{
		int			innercap = Max(2, GBT_INNER_SLOTS * GBT_INNER_FILLFACTOR / 100);

		nseps = build_leaves_posting(w, src, rootblk, treeflag, fillfactor, &seps, &sepblk);
		npages[0] = nseps;
		nlevels = 1;
		while (npages[nlevels - 1] > 1)
		{
			npages[nlevels] = (npages[nlevels - 1] + innercap - 1) / innercap;
			nlevels++;
		}
		firstlevel = 1;
	}
	else
		nlevels = tree_levels(n, fillfactor, npages);

	for (int level = firstlevel; level < nlevels; level++)
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
			Page		page = gbt_writer_page(w, blk);
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

					gbt_source_next(src, &e);
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
			if (level == 0)
				gbt_leaf_fill((char *) page, cntp, kbuf, tbuf, true);
			else
				gbt_node_load(&node, cntp, kbuf, tbuf, cbuf);

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
					if (!gbt_source_peek(src, &e))
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
 * Build one tree as build_tree does, from the n values (or NULLs) that the
 * GPU session holds sorted on the device, with the pages laid out there
 * and brought back a chunk at a time.  False when the GPU failed under
 * gbtree.device = auto (the session then lets the sort go): the caller
 * lays the tree out again on the CPU, over the blocks written so far,
 * which it rewrites with the same images.
 */
static bool
build_tree_device(GbtPageWriter *w, GbtGpuBuild *gpu, bool nulls, Size n, int fillfactor,
				  double *layout_ms)
{
	Size		npages[32];
	int			nlevels = tree_levels(n, fillfactor, npages);
	BlockNumber rootblk = nulls ? GBT_NULLROOT_BLKNO : GBT_ROOT_BLKNO;
	GbtCudaTreePlan plan;
	PGAlignedBlock tmp;
	BlockNumber first = w->nextblk;
	BlockNumber blk = first;
	uint64		total = 0;
	int			cnt;

	if (nlevels > GBT_CUDA_MAX_LEVELS)
		elog(ERROR, "gbtree build: a tree of %d levels", nlevels);
	memset(&plan, 0, sizeof(plan));
	plan.n = n;
	plan.nlevels = nlevels;
	plan.root_blkno = rootblk;
	plan.tree_flags = nulls ? GBT_F_NULLTREE : 0;
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

	for (uint64 from = 0; from < total; from += cnt)
	{
		char	   *buf = gbt_gpu_build_layout(gpu, nulls, &plan, from, &cnt, layout_ms);

		if (buf == NULL)
			return false;
		for (int j = 0; j < cnt; j++)
		{
			uint64		pageno = from + j;
			char	   *img = buf + (Size) j * BLCKSZ;
			GbtPageOpaque op = gbt_page_opaque(img);
			Page		page = gbt_writer_page(w, pageno == total - 1 ? rootblk :
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
	w->nextblk = blk;
	return true;
}

/*
 * Lay out and write the index.  gpu: the session of a GPU build, whose
 * index goes onto the device as it is written, and whose trees the device
 * holds sorted are laid out there (NULL: a CPU build).  The values' tree
 * then comes from unsorted, the same entries in host memory, which the
 * CPU sorts and lays out should the GPU fail (*dev_failed); without it (a
 * streamed build) the entries are nowhere else, and a failure returns
 * false for the caller to start over.
 */
static bool
write_index(Relation index, GbtSource *values, Size n, GbtSource *nulls, Size nnulls,
			bool use_wal, GbtGpuBuild *gpu, GbtEntry *unsorted, double *layout_ms,
			bool *dev_failed)
{
	GbtPageWriter *w = palloc0(sizeof(GbtPageWriter));
	int			ff = gbt_get_fillfactor(index);
	bool		dedup = gbt_get_dedup(index);
	Page		meta;

	w->index = index;
	w->use_wal = use_wal;
	w->nextblk = GBT_FIRST_FREE_BLKNO;
	/* a build started over after a GPU failure rewrites what it wrote */
	w->extended = RelationGetNumberOfBlocks(index);
	if (gpu && gbt_gpu_build_load_begin(gpu, (BlockNumber) (GBT_FIRST_FREE_BLKNO +
															tree_blocks(n, ff) +
															tree_blocks(nnulls, ff))))
		w->load = gpu;
	if (w->load == NULL)
		for (int i = 0; i < GBT_WRITE_BATCH; i++)
			w->pages[i] = palloc(BLCKSZ);

	if (gpu && gbt_gpu_build_on_device(gpu, false))
	{
		if (!build_tree_device(w, gpu, false, n, ff, layout_ms))
		{
			GbtEntry   *scratch;

			*dev_failed = true;
			if (unsorted == NULL)
				return false;
			scratch = MemoryContextAllocHuge(CurrentMemoryContext,
											 Max(n, 1) * sizeof(GbtEntry));
			gbt_writer_flush(w);
			w->nextblk = GBT_FIRST_FREE_BLKNO;
			w->done = 0;
			gbt_radix_sort(unsorted, scratch, n);
			pfree(scratch);
			build_tree(w, values, n, GBT_ROOT_BLKNO, 0, ff, dedup);
		}
	}
	else
		build_tree(w, values, n, GBT_ROOT_BLKNO, 0, ff, dedup);
	if (gpu && gbt_gpu_build_on_device(gpu, true))
	{
		/* streamed NULLs, sorted on the device: laid out there too */
		if (!build_tree_device(w, gpu, true, nnulls, ff, layout_ms))
		{
			*dev_failed = true;
			return false;
		}
	}
	else
		build_tree(w, nulls, nnulls, GBT_NULLROOT_BLKNO, GBT_F_NULLTREE, ff, dedup);
	meta = gbt_writer_page(w, GBT_META_BLKNO);
	gbt_init_metapage(meta, index, n + nnulls);
	gbt_writer_flush(w);
	if (w->load)
		gbt_gpu_build_load_finish(w->load, w->extended);

	/* as nbtree: the pages bypassed shared buffers, so sync them now */
	if (use_wal)
		smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);
	return true;
}

/* The result of a build of nentries entries (values and NULLs) */
static IndexBuildResult *
build_result(GbtBuildState *bs, Size nentries)
{
	IndexBuildResult *result = palloc(sizeof(IndexBuildResult));

	result->heap_tuples = bs->heaptuples;
	result->index_tuples = (double) nentries;
	return result;
}

/*
 * Strategy "GPU streamed": the participants sent the values to the device
 * during the scan; sort them there, lay out and write the pages.  NULL
 * when the GPU failed (under gbtree.device = auto; an ERROR under gpu):
 * the caller starts over.
 */
static IndexBuildResult *
build_gpu_streamed(Relation index, GbtBuildState *bs, double scan_ms, int nprocesses)
{
	GbtGpuSortTimes gtimes;
	instr_time	start;
	double		sort_ms,
				write_ms,
				layout_ms = 0;
	bool		dev_failed = false;
	GbtSource	vsrc,
				nsrc;
	Size		nnulls = bs->nulls_streamed;

	/* on failure the session's sorts go when build_index ends it */
	if (bs->stream_failed)
	{
		gbt_gpu_build_stream_failed(bs->gpu, bs->stream_err[0] ? bs->stream_err :
									"a participant of the scan could not stream to the GPU");
		return NULL;
	}
	INSTR_TIME_SET_CURRENT(start);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
								 (int64) (bs->streamed + nnulls));
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_GPU_SORT);
	if (!gbt_gpu_build_sort_streamed(bs->gpu, bs->streamed, nnulls, bs->tid_sorted, &gtimes))
		return NULL;
	sort_ms = elapsed_ms(start);

	INSTR_TIME_SET_CURRENT(start);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_LOAD);
	gbt_source_from_array(&vsrc, NULL, 0);
	gbt_source_from_array(&nsrc, NULL, 0);
	if (!write_index(index, &vsrc, bs->streamed, &nsrc, nnulls, RelationNeedsWAL(index),
					 bs->gpu, NULL, &layout_ms, &dev_failed))
		return NULL;
	write_ms = elapsed_ms(start);

	ereport(DEBUG1,
			(errmsg_internal("gbtree build of \"%s\" on the GPU, streamed: %zu entries (%zu NULL); heap scan %.1f ms (%d processes), during which the entries went to the device (%d chunks, %.1f ms of requests over all processes), sort %.1f ms (device sort %.1f ms in %.1f ms of requests), pages laid out on the device and brought back %.1f ms of requests, written (with the device copy) in %.1f ms in all",
							 RelationGetRelationName(index), (size_t) (bs->streamed + nnulls),
							 (size_t) nnulls, scan_ms, nprocesses, bs->stream_chunks,
							 bs->stream_ms, sort_ms, gtimes.sort_ms, gtimes.run_ms, layout_ms,
							 write_ms)));
	return build_result(bs, bs->streamed + nnulls);
}

/*
 * Strategy "CPU with spilled runs": more entries than maintenance_work_mem
 * holds, in sorted runs (some perhaps sorted on the GPU), merged into the
 * pages.  The parallel context of pb ends here: the merge reads the
 * workers' runs from its file set.
 */
static IndexBuildResult *
build_from_runs(Relation index, GbtBuildState *bs, GbtParallelBuild *pb, double scan_ms,
				int nprocesses)
{
	FileSet    *fs = pb->fileset;
	GbtSource	vsrc,
				nsrc;
	instr_time	start;
	double		write_ms;

	INSTR_TIME_SET_CURRENT(start);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
								 (int64) (bs->spilled_v + bs->spilled_n));
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_MERGE_LOAD);
	gbt_build_merge_excess_runs(bs, 'v', fs);
	gbt_build_merge_excess_runs(bs, 'n', fs);
	gbt_source_from_runs(&vsrc, bs, 'v', fs, INT_MAX);
	gbt_source_from_runs(&nsrc, bs, 'n', fs, INT_MAX);
	write_index(index, &vsrc, bs->spilled_v, &nsrc, bs->spilled_n, RelationNeedsWAL(index),
				bs->gpu_runs > 0 ? bs->gpu : NULL, NULL, NULL, NULL);
	gbt_source_end(&vsrc);
	gbt_source_end(&nsrc);
	gbt_build_end_parallel(pb);
	write_ms = elapsed_ms(start);
	ereport(DEBUG1,
			(errmsg_internal("gbtree build of \"%s\" in sorted runs: %zu entries; heap scan, sorting and writing %d runs (%d sorted on the GPU) %.1f ms (%d processes), merge, layout and write%s %.1f ms",
							 RelationGetRelationName(index), (size_t) (bs->spilled_v + bs->spilled_n),
							 bs->nruns, bs->gpu_runs, scan_ms, nprocesses,
							 bs->gpu_runs > 0 ? " (and device copy)" : "", write_ms)));
	return build_result(bs, bs->spilled_v + bs->spilled_n);
}

/* Scratch space for sorting the larger of bs's arrays */
static GbtEntry *
alloc_sort_scratch(GbtBuildState *bs)
{
	Size		maxn = Max(bs->nentries, bs->nnulls);
	GbtEntry   *scratch = MemoryContextAllocHuge(CurrentMemoryContext,
												 maxn * sizeof(GbtEntry));

	gbt_advise_huge(scratch, maxn * sizeof(GbtEntry));
	return scratch;
}

/*
 * Write the index from the entries held in bs's arrays, sorted but for
 * those the GPU session gpu holds on the device (see write_index).
 * Returns the milliseconds it took.
 */
static double
write_from_arrays(Relation index, GbtBuildState *bs, GbtGpuBuild *gpu, double *layout_ms,
				  bool *dev_failed)
{
	GbtSource	vsrc,
				nsrc;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_LOAD);
	gbt_source_from_array(&vsrc, bs->entries, bs->nentries);
	gbt_source_from_array(&nsrc, bs->nulls, bs->nnulls);
	/* the first GPU scan of a GPU-built index finds it on the device */
	write_index(index, &vsrc, bs->nentries, &nsrc, bs->nnulls, RelationNeedsWAL(index),
				gpu, bs->entries, layout_ms, dev_failed);
	return elapsed_ms(start);
}

static void
report_cpu_build(Relation index, GbtBuildState *bs, double scan_ms, int nprocesses,
				 double sort_ms, double write_ms)
{
	ereport(DEBUG1,
			(errmsg_internal("gbtree build of \"%s\" on the CPU: %zu entries; heap scan %.1f ms (%d processes), sort %.1f ms, layout and write %.1f ms",
							 RelationGetRelationName(index), (size_t) (bs->nentries + bs->nnulls),
							 scan_ms, nprocesses, sort_ms, write_ms)));
}

/* Strategy "CPU in memory": sort the entries held in memory and write them. */
static IndexBuildResult *
build_cpu_in_memory(Relation index, GbtBuildState *bs, double scan_ms, int nprocesses)
{
	instr_time	start;
	double		sort_ms,
				write_ms;

	INSTR_TIME_SET_CURRENT(start);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
								 (int64) (bs->nentries + bs->nnulls));
	if (bs->nentries > 1 || bs->nnulls > 1)
	{
		GbtEntry   *scratch = alloc_sort_scratch(bs);

		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_SORT);
		gbt_radix_sort(bs->entries, scratch, bs->nentries);
		gbt_radix_sort(bs->nulls, scratch, bs->nnulls);
		pfree(scratch);
	}
	sort_ms = elapsed_ms(start);
	write_ms = write_from_arrays(index, bs, NULL, NULL, NULL);
	report_cpu_build(index, bs, scan_ms, nprocesses, sort_ms, write_ms);
	return build_result(bs, bs->nentries + bs->nnulls);
}

/*
 * Strategy "GPU sorted": the values held in memory (more than one) are
 * sorted on the device, and laid out there too when it can hold them
 * whole; else the sorted values come back, in runs merged here when there
 * are more than it sorts at once.  Should the GPU fail (under
 * gbtree.device = auto), the CPU sorts and lays them out.
 */
static IndexBuildResult *
build_gpu_sorted(Relation index, GbtBuildState *bs, double scan_ms, int nprocesses)
{
	GbtGpuSortTimes gtimes;
	GbtEntry   *scratch;
	instr_time	start;
	double		sort_ms,
				write_ms,
				merge_ms = 0,
				layout_ms = 0;
	bool		on_gpu;
	bool		on_device;		/* sorted and kept on the device */
	bool		dev_failed = false;

	INSTR_TIME_SET_CURRENT(start);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL,
								 (int64) (bs->nentries + bs->nnulls));
	scratch = alloc_sort_scratch(bs);

	/*
	 * The GPU sorts into the scratch array and leaves the entries as they
	 * were, so a failure can still fall back to the CPU sort.
	 */
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_GPU_SORT);
	on_gpu = gbt_gpu_build_sort(bs->gpu, bs->entries, scratch, bs->nentries, bs->tid_sorted,
								!gbt_get_dedup(index), &gtimes);
	/* kept to be laid out on the device?  bs->entries then stay as they are */
	on_device = on_gpu && gbt_gpu_build_on_device(bs->gpu, false);
	if (on_gpu && !on_device)
	{
		GbtEntry   *sorted = scratch;

		scratch = bs->entries;
		bs->entries = sorted;
		/* more than the device takes at once: merge its runs */
		if (gtimes.nruns > 1)
		{
			instr_time	merge_start;

			INSTR_TIME_SET_CURRENT(merge_start);
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_GPU_MERGE);
			gbt_merge_runs(bs->entries, scratch, bs->nentries, gtimes.run_entries,
						   gtimes.nruns);
			sorted = scratch;
			scratch = bs->entries;
			bs->entries = sorted;
			merge_ms = elapsed_ms(merge_start);
		}
	}
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_SORT);
	if (!on_gpu)
		gbt_radix_sort(bs->entries, scratch, bs->nentries);
	gbt_radix_sort(bs->nulls, scratch, bs->nnulls);
	pfree(scratch);
	sort_ms = elapsed_ms(start);

	write_ms = write_from_arrays(index, bs, on_gpu ? bs->gpu : NULL, &layout_ms, &dev_failed);

	if (on_device)
		ereport(DEBUG1,
				(errmsg_internal("gbtree build of \"%s\" on the GPU: %zu entries; heap scan %.1f ms (%d processes), sort %.1f ms (to the device %.1f ms, device sort %.1f ms in %.1f ms of requests), %s %.1f ms",
								 RelationGetRelationName(index), (size_t) (bs->nentries + bs->nnulls),
								 scan_ms, nprocesses, sort_ms, gtimes.to_device_ms,
								 gtimes.sort_ms, gtimes.run_ms,
								 dev_failed ? "the GPU failed laying out the pages: sorted and laid out on the CPU, written, with device copy," :
								 psprintf("pages laid out on the device and brought back (%.1f ms of requests), written, with device copy,", layout_ms),
								 write_ms)));
	else if (on_gpu)
		ereport(DEBUG1,
				(errmsg_internal("gbtree build of \"%s\" on the GPU: %zu entries; heap scan %.1f ms (%d processes), sort %.1f ms (%d run%s; to the device %.1f ms, device sort %.1f ms in %.1f ms of requests, back %.1f ms, merge %.1f ms), layout, write and device copy %.1f ms",
								 RelationGetRelationName(index), (size_t) (bs->nentries + bs->nnulls),
								 scan_ms, nprocesses, sort_ms, gtimes.nruns,
								 gtimes.nruns == 1 ? "" : "s", gtimes.to_device_ms, gtimes.sort_ms,
								 gtimes.run_ms, gtimes.from_device_ms, merge_ms, write_ms)));
	else
		report_cpu_build(index, bs, scan_ms, nprocesses, sort_ms, write_ms);
	return build_result(bs, bs->nentries + bs->nnulls);
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

/*
 * A GPU build whose sort the device takes whole streams the values to it
 * during the scan, from every participant, and has the device lay the
 * pages out: no entries gather in the leader.  Sets bs up for that when
 * the GPU takes the build (counters serve a serial scan); when the GPU
 * fails under gbtree.device = auto, for the CPU.
 */
static void
begin_streaming(Relation heap, GbtBuildState *bs, GbtStreamCounters *counters)
{
	bool		failed;

	if (!gbt_gpu_build_stream(bs->gpu, estimate_entries(heap), &failed))
	{
		if (failed)
			bs->cpu_only = true;	/* the GPU failed (auto): the CPU builds it */
		return;
	}
	bs->streaming = true;
	pg_atomic_init_u64(&counters->stream_next, 0);
	pg_atomic_init_u64(&counters->null_next, 0);
	pg_atomic_init_u32(&counters->stream_bad, 0);
	bs->stream_next = &counters->stream_next;
	bs->null_next = &counters->null_next;
	bs->stream_bad = &counters->stream_bad;
	bs->entries = palloc(GBT_STREAM_CHUNK * sizeof(GbtEntry));
	bs->capacity = GBT_STREAM_CHUNK;
	bs->nulls = palloc(GBT_STREAM_CHUNK * sizeof(GbtEntry));
	bs->nullcap = GBT_STREAM_CHUNK;
}

/*
 * Scan the heap into bs, with parallel workers when the planner grants
 * them (pb then holds their context until their runs are merged).  After
 * it a streamed build's entries are all on the device; another's are in
 * bs's arrays, or all in runs if any participant spilled one.  Returns
 * the number of processes that scanned.
 */
static int
scan_heap(Relation heap, Relation index, IndexInfo *indexInfo, GbtBuildState *bs,
		  GbtParallelBuild *pb)
{
	int			nparticipants;

	nparticipants = gbt_build_parallel_scan(heap, index, indexInfo, bs, pb);
	if (nparticipants == 0)
	{
		table_index_build_scan(heap, index, indexInfo, true, true,
							   gbt_build_callback, (void *) bs, NULL);
		if (bs->streaming)
			gbt_build_stream_flush(bs);
		else if (bs->nruns > 0)
		{
			gbt_build_spill_run(bs, false);
			gbt_build_spill_run(bs, true);
		}
	}
	return Max(nparticipants, 1);
}

/*
 * Scan the heap into bs, then build the index by the strategy that fits
 * where the entries went (see build_index).
 */
static IndexBuildResult *
scan_and_build(Relation heap, Relation index, IndexInfo *indexInfo, GbtBuildState *bs)
{
	GbtParallelBuild pb;
	GbtStreamCounters counters;
	instr_time	start;
	double		scan_ms;
	int			nprocesses;

	/* the device lays out plain leaves only: deduplication lays them out here */
	if (!bs->cpu_only && !gbt_get_dedup(index))
		begin_streaming(heap, bs, &counters);

	INSTR_TIME_SET_CURRENT(start);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_TABLESCAN);
	bs->tid_sorted = true;
	nprocesses = scan_heap(heap, index, indexInfo, bs, &pb);
	scan_ms = elapsed_ms(start);

	if (bs->streaming)
		return build_gpu_streamed(index, bs, scan_ms, nprocesses);
	if (bs->nruns > 0)
		return build_from_runs(index, bs, &pb, scan_ms, nprocesses);
	if (bs->nentries > 1 && !bs->cpu_only && gbt_gpu_wanted(bs->nentries))
		return build_gpu_sorted(index, bs, scan_ms, nprocesses);
	return build_cpu_in_memory(index, bs, scan_ms, nprocesses);
}

/*
 * The build, in its own memory and with its GPU session, which releases
 * whatever the build holds on the device however it ends.  NULL when a
 * GPU build that streamed its entries to the device failed (under
 * gbtree.device = auto; under gpu it is an ERROR): the entries are then
 * nowhere else, so the caller starts over with cpu_only.
 */
static IndexBuildResult *
build_index(Relation heap, Relation index, IndexInfo *indexInfo, bool cpu_only)
{
	IndexBuildResult *result = NULL;
	IndexBuildResult *built;
	GbtBuildState bs;
	MemoryContext buildcxt,
				oldcxt;

	memset(&bs, 0, sizeof(bs));
	bs.index = index;
	bs.info = gbt_index_info_copy(index);
	bs.worker = -1;
	bs.limit = gbt_build_entries_for_memory((Size) maintenance_work_mem);
	bs.cpu_only = cpu_only;

	buildcxt = AllocSetContextCreate(CurrentMemoryContext, "gbtree build",
									 ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(buildcxt);
	bs.gpu = gbt_gpu_build_begin(index);
	PG_TRY();
	{
		built = scan_and_build(heap, index, indexInfo, &bs);
	}
	PG_CATCH();
	{
		gbt_gpu_build_end(bs.gpu);
		PG_RE_THROW();
	}
	PG_END_TRY();
	gbt_gpu_build_end(bs.gpu);

	/* the result outlives the build's memory */
	MemoryContextSwitchTo(oldcxt);
	if (built)
	{
		result = palloc(sizeof(IndexBuildResult));
		*result = *built;
	}
	MemoryContextDelete(buildcxt);
	return result;
}

IndexBuildResult *
gbtbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	/*
	 * Rebuilt in place (TRUNCATE): this backend's pending entries are of
	 * tuples it no longer has.
	 */
	gbt_batch_forget_index(RelationGetRelid(index));
	gbt_check_opfamilies(index);
	if (gbt_index_is_wide(index))
	{
		result = gbt_wide_build(heap, index, indexInfo);
		gbt_check_unique_build(heap, index, indexInfo);
		return result;
	}

	result = build_index(heap, index, indexInfo, false);
	/* a streamed GPU build failed under gbtree.device = auto: start over */
	if (result == NULL)
		result = build_index(heap, index, indexInfo, true);
	gbt_check_unique_build(heap, index, indexInfo);
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
			gbt_wide_init_page(page, true, 0,
							   GBT_F_ROOT | GBT_F_RIGHTMOST |
							   (blk == GBT_NULLROOT_BLKNO ? GBT_F_NULLTREE : 0),
							   gbt_index_info(index)->nwords);
		smgr = RelationGetSmgr(index);
		log_newpage(&gbt_smgr_storage(smgr), INIT_FORKNUM, blk, page, true);
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
