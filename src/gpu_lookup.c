/*-------------------------------------------------------------------------
 *
 * gpu_lookup.c
 *	  Batched work on an index's device copy, backend side: lookups of
 *	  = ANY arrays and ranges for scans, and the sort and leaf search of
 *	  large insert batches.  The transport (requests, staging, copies and
 *	  their freshness) is gpu_client.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gbtree_gpu.h"
#include "gpu_internal.h"

/*
 * One batched lookup: what goes in (queries of one-word or multi-word
 * keys) and what comes out.
 */
typedef struct LookupCall
{
	BlockNumber root;
	int			nqueries;
	int			nwords;			/* 0: one-word keys (ranges or points) */
	const GbtRange *ranges;
	const uint64 *points;
	const uint64 *wqueries;		/* nwords > 0: lo[nwords], hi[nwords] each */
	/* results, in the caller's memory context */
	GbtEntry   *entries;		/* one-word */
	uint64	   *words;			/* multi-word: nwords a match */
	uint64	   *tids;
	uint64		total;
} LookupCall;

/* the payload's room for the queries (bare points take a query's room) */
static Size
query_bytes(const LookupCall *c)
{
	if (c->nwords > 0)
		return sizeof(uint64) * 2 * c->nwords * (Size) c->nqueries;
	return sizeof(GbtCudaQuery) * (Size) c->nqueries;
}

/* bytes a match takes in the payload: its key's words and its TID */
static Size
match_bytes(const LookupCall *c)
{
	return sizeof(uint64) * (Max(c->nwords, 1) + 1);
}

static void
write_queries(const LookupCall *c, char *at)
{
	GbtCudaQuery *q = (GbtCudaQuery *) at;

	if (c->nwords > 0)
		memcpy(at, c->wqueries, query_bytes(c));
	else if (c->points)
		memcpy(at, c->points, sizeof(uint64) * c->nqueries);
	else
		for (int r = 0; r < c->nqueries; r++)
		{
			q[r].lo_key = c->ranges[r].lo;
			q[r].lo_tid = 0;
			q[r].hi_key = c->ranges[r].hi;
			q[r].hi_tid = PG_UINT64_MAX;	/* no real TID packs to it */
		}
}

/* copy the matches out of the payload's keys[capacity x words], tids[capacity] */
static void
read_results(LookupCall *c, const uint64 *keys, uint64 capacity)
{
	uint64		n = Max(c->total, 1);

	if (c->nwords > 0)
	{
		c->words = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint64) * c->nwords * n);
		c->tids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint64) * n);
		memcpy(c->words, keys, sizeof(uint64) * c->nwords * c->total);
		memcpy(c->tids, keys + capacity * c->nwords, sizeof(uint64) * c->total);
		return;
	}
	c->entries = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(GbtEntry) * n);
	gbt_advise_huge(c->entries, sizeof(GbtEntry) * n);
	for (uint64 j = 0; j < c->total; j++)
	{
		c->entries[j].key = keys[j];
		c->entries[j].tid = keys[capacity + j];
	}
}

/*
 * Run a lookup on the index's device copy, synced first.  Returns false
 * (after counting a fallback) when the GPU cannot serve it and
 * gbtree.device is auto; raises an error under gbtree.device = gpu.
 */
static bool
run_lookup(Relation index, LookupCall *c)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	char		errbuf[256];
	int			copyno;
	uint64		gen = 0;
	uint64		capacity;
	uint64		total = 0;
	int			rc;
	int			attempt;
	bool		timed;
	instr_time	t0,
				t1,
				t2,
				t3,
				t4;

	if (!gbt_gpu_service_usable(index, false))
		return false;
	if (index->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		return gbt_gpu_failed(index, false, "temporary indexes live in backend-local buffers",
							  &sh->fallback_error);

	timed = message_level_is_interesting(DEBUG1);
	if (timed)
		INSTR_TIME_SET_CURRENT(t0);
	for (attempt = 0; attempt < 3; attempt++)
	{
		rc = gbt_gpu_copy_for_request(index, &copyno, &gen, errbuf, sizeof(errbuf));
		if (rc != 0)
		{
			if (rc == GBT_GPU_ENOCOPY)
				continue;
			return gbt_gpu_failed(index, false, errbuf[0] ? errbuf : "shipping pages to the device failed",
								  gbt_gpu_fallback_counter(rc));
		}

		if (timed)
			INSTR_TIME_SET_CURRENT(t1);

		/* the lookup itself; once more with room for every match if needed */
		capacity = (uint64) c->nqueries + 1024;
		for (;;)
		{
			Size		hdrsz = MAXALIGN(sizeof(GbtGpuLookupPayload));
			Size		qsz = MAXALIGN(query_bytes(c));
			Size		osz = MAXALIGN(sizeof(uint64) * ((Size) c->nqueries + 1));
			Size		size = hdrsz + qsz + osz + capacity * match_bytes(c);
			dsm_segment *seg = NULL;
			char	   *base;
			GbtGpuLookupPayload *hdr;

			base = gbt_gpu_staging_acquire(size);
			if (base == NULL)
			{
				seg = dsm_create(size, 0);
				base = dsm_segment_address(seg);
			}
			hdr = (GbtGpuLookupPayload *) base;
			hdr->nqueries = c->nqueries;
			hdr->root = c->root;
			hdr->sorted = c->points ? GBT_CUDA_POINTS : 1;
			hdr->nwords = c->nwords;
			hdr->capacity = capacity;
			write_queries(c, base + hdrsz);
			if (timed)
				INSTR_TIME_SET_CURRENT(t2);
			PG_TRY();
			{
				rc = gbt_gpu_submit_and_wait(GBT_OP_LOOKUP, copyno, gen, seg, seg == NULL,
											 NULL, &total, NULL, errbuf, sizeof(errbuf));
				if (timed)
					INSTR_TIME_SET_CURRENT(t3);
				if (rc == GBT_CUDA_OK)
				{
					c->total = total;
					read_results(c, (uint64 *) (base + hdrsz + qsz + osz), capacity);
				}
			}
			PG_CATCH();
			{
				gbt_gpu_staging_release();
				PG_RE_THROW();
			}
			PG_END_TRY();
			if (seg)
				dsm_detach(seg);
			else
				gbt_gpu_staging_release();
			if (rc == GBT_CUDA_OK)
			{
				if (timed)
				{
					INSTR_TIME_SET_CURRENT(t4);
					INSTR_TIME_SUBTRACT(t4, t3);
					INSTR_TIME_SUBTRACT(t3, t2);
					INSTR_TIME_SUBTRACT(t2, t1);
					INSTR_TIME_SUBTRACT(t1, t0);
					elog(DEBUG1, "gbtree GPU batch on \"%s\": %d queries, " UINT64_FORMAT " matches, %s; sync %.3f ms, request %.3f ms, service %.3f ms, results %.3f ms",
						 RelationGetRelationName(index), c->nqueries, total,
						 seg ? "through DSM" : "staged",
						 INSTR_TIME_GET_MILLISEC(t1), INSTR_TIME_GET_MILLISEC(t2),
						 INSTR_TIME_GET_MILLISEC(t3), INSTR_TIME_GET_MILLISEC(t4));
				}
				SpinLockAcquire(&sh->mutex);
				sh->batches++;
				sh->keys += c->nqueries;
				sh->matches += total;
				SpinLockRelease(&sh->mutex);
				return true;
			}
			if (rc == GBT_CUDA_ESPACE && total > capacity)
			{
				capacity = total;
				continue;
			}
			break;
		}
		if (rc == GBT_GPU_ENOCOPY)
			continue;			/* evicted between sync and lookup: again */
		return gbt_gpu_failed(index, false, errbuf[0] ? errbuf : "the GPU lookup failed",
							  gbt_gpu_fallback_counter(rc));
	}
	return gbt_gpu_failed(index, false, "the device copy kept being replaced", &sh->fallback_error);
}

/*
 * Batched lookup on the GPU: all entries of the index tree rooted at root
 * that fall in any of the queries (sorted, disjoint), in index order.
 * Or, with points not NULL, the entries of nranges point keys given in any
 * order and maybe repeated, which the device sorts and deduplicates (8
 * bytes a key through the staging area instead of a 32-byte query, and no
 * sort on the CPU); the answer is the same as for their sorted distinct
 * equality ranges.  False when the GPU cannot serve it (run_lookup).
 */
bool
gbt_gpu_lookup(Relation index, BlockNumber root, const GbtRange *ranges, int nranges,
			   const uint64 *points, GbtEntry **entries, uint64 *nentries)
{
	LookupCall	c;

	memset(&c, 0, sizeof(c));
	c.root = root;
	c.nqueries = nranges;
	c.ranges = ranges;
	c.points = points;
	if (!run_lookup(index, &c))
		return false;
	*entries = c.entries;
	*nentries = c.total;
	return true;
}

/*
 * The same for a tree of nwords-word keys: queries are nqueries ranges,
 * each lo[nwords] then hi[nwords], inclusive, sorted and disjoint; the
 * matches come back in index order, their words (nwords each) in *words
 * and TIDs in *tids.
 */
bool
gbt_gpu_lookup_words(Relation index, BlockNumber root, int nwords, const uint64 *queries,
					 int nqueries, uint64 **words, uint64 **tids, uint64 *nentries)
{
	LookupCall	c;

	memset(&c, 0, sizeof(c));
	c.root = root;
	c.nqueries = nqueries;
	c.nwords = nwords;
	c.wqueries = queries;
	if (!run_lookup(index, &c))
		return false;
	*words = c.words;
	*tids = c.tids;
	*nentries = c.total;
	return true;
}

/* ------------------------------------------------------------------------
 * Batched inserts on the GPU
 *
 * A large insert batch (batch.c) is sorted on the device, and each entry's
 * leaf is found there by a descent of the index's device copy; the backend
 * gets the sorted entries back with their leaves and merges them into the
 * pages itself, writing and logging each changed leaf once, as it does
 * after a CPU sort.  The leaves are hints, checked under the leaf's buffer
 * lock (insert.c), so the copy need not be current: one that is loaded is
 * used as it is, without shipping the pages changed since (a batch changes
 * most leaves of the tree, and the next scan ships them anyway).  Only an
 * index with no copy yet is loaded first.
 * ------------------------------------------------------------------------
 */

/*
 * Whether a batch of n entries goes to the GPU: the service is ready and
 * its library finds leaves, gbtree.device is not cpu, and the batch has
 * gbtree.gpu_merge_min entries (gbtree.gpu_min_batch under
 * gbtree.device = gpu, so that tests reach this path with small batches).
 */
bool
gbt_gpu_merge_wanted(Relation index, Size n)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	Size		min;

	if (sh == NULL || sh->state != GBT_SVC_READY || !sh->can_merge ||
		gbt_device_mode == GBT_DEVICE_CPU ||
		index->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		return false;
	min = gbt_device_mode == GBT_DEVICE_GPU ? (Size) gbt_gpu_min_batch :
		(Size) gbt_gpu_merge_min;
	return gbt_gpu_merge_min > 0 && n >= Max(min, 1) && n <= gbt_gpu_sort_capacity();
}

/*
 * A device copy of index to find leaves in: the one loaded, as it is, or
 * a new one, loaded now.  Returns 0 with *copyno and *gen set, or an error
 * code.
 */
static int
merge_copy(Relation index, int *copyno, uint64 *gen, char *errbuf, Size errlen)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	int			i;
	int			rc;

	LWLockAcquire(sh->copies_lock, LW_SHARED);
	i = gbt_gpu_find_copy(RelationGetRelid(index));
	LWLockRelease(sh->copies_lock);
	if (i >= 0)
	{
		GbtGpuCopy *c = &sh->copies[i];
		bool		usable;

		SpinLockAcquire(&c->mutex);
		usable = c->valid && c->relfilenode == gbt_rel_filenumber(index);
		*gen = c->gen;
		SpinLockRelease(&c->mutex);
		if (usable)
		{
			*copyno = i;
			return 0;
		}
	}
	for (int attempt = 0; attempt < 3; attempt++)
	{
		rc = gbt_gpu_copy_for_request(index, copyno, gen, errbuf, errlen);
		if (rc != GBT_GPU_ENOCOPY)
			return rc;
	}
	return GBT_GPU_ENOCOPY;
}

/*
 * Sort the n entries of in on the device into out, and find the leaf of
 * each in the tree under root: leaves[i] is out[i]'s, or InvalidBlockNumber
 * where the device copy did not say.  Returns false (a counted fallback,
 * never an error: the CPU does the same work) when the GPU could not.
 */
bool
gbt_gpu_merge_plan(Relation index, BlockNumber root, const GbtEntry *in, Size n,
				   GbtEntry *out, BlockNumber *leaves)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	GbtGpuSortTimes times = {0};
	char		errbuf[256];
	uint64		slot;
	int			copyno;
	uint64		gen;
	int			rc;

	errbuf[0] = '\0';
	rc = merge_copy(index, &copyno, &gen, errbuf, sizeof(errbuf));
	if (rc == 0)
		rc = gbt_gpu_sort_start(in, n, false, &times, &slot, errbuf, sizeof(errbuf));
	if (rc == 0)
		rc = gbt_gpu_sort_fetch(slot, n, out, leaves, copyno, gen, root, &times, errbuf,
								sizeof(errbuf));
	if (rc != 0)
	{
		const char *why = errbuf[0] ? errbuf : "the GPU could not sort the batch";

		gbt_gpu_count_fallback(why, gbt_gpu_fallback_counter(rc));
		ereport(DEBUG1,
				(errmsg_internal("gbtree: insert batch into \"%s\" merged on the CPU: %s",
								 RelationGetRelationName(index), why)));
		return false;
	}
	SpinLockAcquire(&sh->mutex);
	sh->gpu_merges++;
	sh->gpu_merge_entries += n;
	SpinLockRelease(&sh->mutex);
	return true;
}

/* After a GPU-planned merge: how its leaves were reached (see insert.c) */
void
gbt_gpu_merge_done(uint64 hinted, uint64 descended)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	SpinLockAcquire(&sh->mutex);
	sh->gpu_merge_hinted += hinted;
	sh->gpu_merge_descended += descended;
	SpinLockRelease(&sh->mutex);
}
