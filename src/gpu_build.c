/*-------------------------------------------------------------------------
 *
 * gpu_build.c
 *	  CREATE INDEX on the GPU, backend side: the device sort of a build's
 *	  entries (whole, in runs, or streamed by the heap scan's
 *	  participants), the pages laid out from it on the device, and the
 *	  new index loaded onto the device as the build writes it.  The
 *	  transport (requests, staging, copies) is gpu_client.c's.
 *
 * The build files see only the session at the end of this file
 * (GbtGpuBuild, gbt_gpu_build_*), which keeps the device sorts and the
 * load a build holds, so that one call releases them on any path.
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

void
gbt_gpu_sort_end(uint64 slot)
{
	uint64		args[3] = {slot, 0, 0};
	char		errbuf[64];

	(void) gbt_gpu_submit_and_wait(GBT_OP_SORT_END, -1, 0, NULL, false, args, NULL, NULL,
						   errbuf, sizeof(errbuf));
}

/* Milliseconds since t0 */
static double
elapsed_since(instr_time t0)
{
	instr_time	t1;

	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	return INSTR_TIME_GET_MILLISEC(t1);
}

/* A device sort with room for n entries (it grows): its slot in *slot. */
static int
sort_begin(Size n, uint64 *slot, char *errbuf, Size errlen)
{
	uint64		args[3] = {n, 0, 0};
	int			rc;

	*slot = 0;
	rc = gbt_gpu_submit_and_wait(GBT_OP_SORT_BEGIN, -1, 0, NULL, false, args, slot, NULL,
						 errbuf, errlen);
	if (rc != 0 && errbuf[0] == '\0')
		strlcpy(errbuf, "the GPU service could not start the sort", errlen);
	return rc;
}

/* Entries [offset, offset + n) of sort slot, n at most gbt_gpu_transfer_entries() */
static int
sort_put(uint64 slot, uint64 offset, const GbtEntry *entries, Size n, char *errbuf, Size errlen)
{
	uint64		args[3] = {slot, offset, n};
	dsm_segment *seg;
	char	   *buf = gbt_gpu_transfer_buffer(n * sizeof(GbtEntry), &seg);
	int			rc;

	memcpy(buf, entries, n * sizeof(GbtEntry));
	PG_TRY();
	{
		rc = gbt_gpu_submit_and_wait(GBT_OP_SORT_PUT, -1, 0, seg, seg == NULL, args, NULL, NULL,
							 errbuf, errlen);
	}
	PG_CATCH();
	{
		gbt_gpu_transfer_done(seg);
		PG_RE_THROW();
	}
	PG_END_TRY();
	gbt_gpu_transfer_done(seg);
	return rc;
}

/* Sort what sort slot holds; *total: how many entries that is.  Adds to *times. */
static int
sort_run(uint64 slot, bool tid_sorted, uint64 *total, GbtGpuSortTimes *times,
		 char *errbuf, Size errlen)
{
	uint64		args[3] = {slot, tid_sorted ? 1 : 0, 0};
	double		sort_ms = 0;
	int			rc;
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	rc = gbt_gpu_submit_and_wait(GBT_OP_SORT_RUN, -1, 0, NULL, false, args, total, &sort_ms,
						 errbuf, errlen);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	times->sort_ms += sort_ms;
	times->run_ms += INSTR_TIME_GET_MILLISEC(t1);
	return rc;
}

/*
 * Start a GPU sort of n entries from in: entries onto the device, then
 * sorted there; adds to *times.  Returns 0 with the sort's slot in *slot
 * (the caller ends it with sort_end), or the service's error code
 * (errbuf says why) with the sort already ended.
 */
int
gbt_gpu_sort_start(const GbtEntry *in, Size n, bool tid_sorted, GbtGpuSortTimes *times,
		   uint64 *slot, char *errbuf, Size errlen)
{
	Size		chunk = gbt_gpu_transfer_entries();
	uint64		total;
	int			rc;
	instr_time	t0,
				t1;

	rc = sort_begin(n, slot, errbuf, errlen);
	if (rc != 0)
		return rc;
	PG_TRY();
	{
		INSTR_TIME_SET_CURRENT(t0);
		for (Size off = 0; off < n && rc == 0; off += chunk)
		{
			rc = sort_put(*slot, off, in + off, Min(chunk, n - off), errbuf, errlen);
			CHECK_FOR_INTERRUPTS();
		}
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		times->to_device_ms += INSTR_TIME_GET_MILLISEC(t1);
		if (rc == 0)
			rc = sort_run(*slot, tid_sorted, &total, times, errbuf, errlen);
	}
	PG_CATCH();
	{
		gbt_gpu_sort_end(*slot);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (rc != 0)
		gbt_gpu_sort_end(*slot);
	return rc;
}

/*
 * Bring back the n sorted entries of sort slot into out, chunk by chunk,
 * and end the sort.  With leaves not NULL, each entry's leaf in device copy
 * copyno (generation gen) of the tree under root comes back too
 * (SORT_LEAVES; InvalidBlockNumber where the copy did not lead to one).
 * Adds the time to times->from_device_ms.  Returns 0 or the service's
 * error code (errbuf says why).
 */
int
gbt_gpu_sort_fetch(uint64 slot, Size n, GbtEntry *out, BlockNumber *leaves, int copyno,
				   uint64 gen, BlockNumber root, GbtGpuSortTimes *times,
				   char *errbuf, Size errlen)
{
	Size		chunk = gbt_gpu_transfer_entries();
	Size		hdrsz = leaves ? MAXALIGN(sizeof(GbtGpuLeavesPayload)) : 0;
	Size		each = sizeof(GbtEntry) + (leaves ? sizeof(uint32) : 0);
	int			rc = 0;
	instr_time	t0;

	INSTR_TIME_SET_CURRENT(t0);
	PG_TRY();
	{
		for (Size off = 0; off < n && rc == 0; off += chunk)
		{
			Size		cnt = Min(chunk, n - off);
			dsm_segment *seg;
			char	   *buf = gbt_gpu_transfer_buffer(hdrsz + cnt * each, &seg);
			uint64		args[3] = {slot, off, cnt};

			if (leaves)
				((GbtGpuLeavesPayload *) buf)->root = root;
			rc = gbt_gpu_submit_and_wait(leaves ? GBT_OP_SORT_LEAVES : GBT_OP_SORT_GET,
										 leaves ? copyno : -1, gen, seg, seg == NULL, args,
										 NULL, NULL, errbuf, errlen);
			if (rc == 0)
				memcpy(out + off, buf + hdrsz, cnt * sizeof(GbtEntry));
			if (rc == 0 && leaves)
			{
				const uint32 *found = (const uint32 *) (buf + hdrsz + cnt * sizeof(GbtEntry));

				for (Size j = 0; j < cnt; j++)
					leaves[off + j] = found[j] == GBT_NO_BLOCK ? InvalidBlockNumber : found[j];
			}
			gbt_gpu_transfer_done(seg);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		gbt_gpu_staging_release();
		gbt_gpu_sort_end(slot);
		PG_RE_THROW();
	}
	PG_END_TRY();
	gbt_gpu_sort_end(slot);
	times->from_device_ms += elapsed_since(t0);
	return rc;
}

/*
 * One GPU sort: n entries from in, sorted by (key, TID) into out; adds its
 * times to *times.  Returns 0 or the service's error code (errbuf says
 * why).
 */
static int
sort_one_run(const GbtEntry *in, GbtEntry *out, Size n, bool tid_sorted,
			 GbtGpuSortTimes *times, char *errbuf, Size errlen)
{
	uint64		slot;
	int			rc;

	rc = gbt_gpu_sort_start(in, n, tid_sorted, times, &slot, errbuf, errlen);
	if (rc != 0)
		return rc;
	return gbt_gpu_sort_fetch(slot, n, out, NULL, -1, 0, InvalidBlockNumber, times,
							  errbuf, errlen);
}

/*
 * Entries one GPU sort may take: gbtree.gpu_sort_run, else a quarter of
 * the device memory the service may use (a sort holds the entries twice
 * plus the radix sort's scratch, and index copies share the device).
 */
Size
gbt_gpu_sort_capacity(void)
{
	uint64		budget;

	if (gbt_gpu_sort_run > 0)
		return (Size) gbt_gpu_sort_run;
	budget = gbt_gpu_shared->mem_total;
	if (gbt_gpu_memory_limit_mb > 0)
		budget = Min(budget, (uint64) gbt_gpu_memory_limit_mb << 20);
	return Max((Size) 1024, (Size) (budget / 4 / (3 * sizeof(GbtEntry))));
}

/* Whether a build may use the GPU now; if not, see gpu_failed. */
static bool
build_usable(Relation index)
{
	if (!gbt_gpu_service_usable(index, true))
		return false;
	if (gbt_gpu_inject_fault == 1)
		return gbt_gpu_failed(index, true, "injected device error (gbtree.gpu_inject_fault)",
						  &gbt_gpu_shared->fallback_error);
	return true;
}

/*
 * Sort a build's n entries on the GPU by (key, TID): from in, into out
 * (both n entries; in is left as it was, so that after a failure the CPU
 * can still sort it).  More entries than one sort may take (see
 * sort_run_entries) are sorted as consecutive runs of out, each sorted on
 * its own; times->nruns says how many, and the caller merges them.
 * Returns false when the GPU could not do it (see gpu_failed).
 */
static bool
sort_entries(Relation index, const GbtEntry *in, GbtEntry *out, Size n, bool tid_sorted,
			 GbtGpuSortTimes *times)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	char		errbuf[256];
	int			rc = 0;
	Size		run;

	memset(times, 0, sizeof(*times));
	if (!build_usable(index))
		return false;

	errbuf[0] = '\0';
	run = gbt_gpu_sort_capacity();
	times->run_entries = run;
	for (Size off = 0; off < n && rc == 0; off += run)
	{
		rc = sort_one_run(in + off, out + off, Min(run, n - off), tid_sorted,
						  times, errbuf, sizeof(errbuf));
		times->nruns++;
	}
	if (rc != 0)
		return gbt_gpu_failed(index, true, errbuf[0] ? errbuf : "the GPU sort failed",
						  gbt_gpu_fallback_counter(rc));
	SpinLockAcquire(&sh->mutex);
	sh->gpu_builds++;
	sh->gpu_build_runs += times->nruns;
	SpinLockRelease(&sh->mutex);
	return true;
}

/*
 * Builds whose pages are laid out on the device.  sort_keep sorts the
 * entries as sort_entries does but leaves them on the device; layout_pages
 * then brings back the pages of a tree laid out from them, chunk by chunk,
 * as the build writes them; the session frees the device's entries once
 * the last chunk came back.  Only for builds one sort takes whole (no runs
 * to merge), and only with a library that lays pages out.
 */
static bool
can_layout(Size n)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	return sh != NULL && sh->state == GBT_SVC_READY && sh->can_layout &&
		n <= gbt_gpu_sort_capacity();
}

/* Returns the sort's slot, or -1 (see gpu_failed) */
static int
sort_keep(Relation index, const GbtEntry *in, Size n, bool tid_sorted, GbtGpuSortTimes *times)
{
	char		errbuf[256];
	uint64		slot;
	int			rc;

	memset(times, 0, sizeof(*times));
	if (!build_usable(index))
		return -1;
	errbuf[0] = '\0';
	rc = gbt_gpu_sort_start(in, n, tid_sorted, times, &slot, errbuf, sizeof(errbuf));
	if (rc != 0)
	{
		(void) gbt_gpu_failed(index, true, errbuf[0] ? errbuf : "the GPU sort failed",
						  gbt_gpu_fallback_counter(rc));
		return -1;
	}
	times->nruns = 1;
	times->run_entries = n;
	return (int) slot;
}

/*
 * Builds that stream their entries to the device during the heap scan:
 * stream_begin starts a sort with room for about capacity entries (it
 * grows if need be); every participant of the scan, the leader and the
 * parallel workers, puts its chunks at offsets it reserves (stream_put);
 * stream_sort sorts the n entries once all are in.  The pages are then
 * laid out as for sort_keep.
 */
static int
stream_begin(Relation index, Size capacity)
{
	char		errbuf[256];
	uint64		slot;
	int			rc;

	if (!build_usable(index))
		return -1;
	errbuf[0] = '\0';
	rc = sort_begin(capacity, &slot, errbuf, sizeof(errbuf));
	if (rc != 0)
	{
		(void) gbt_gpu_failed(index, true, errbuf, gbt_gpu_fallback_counter(rc));
		return -1;
	}
	return (int) slot;
}

/*
 * Put n entries (at most 512k) at offset; false (errbuf says why) if the
 * GPU could not.
 */
static bool
stream_put(int slot, uint64 offset, const GbtEntry *entries, Size n, char *errbuf, Size errlen)
{
	errbuf[0] = '\0';
	if (n == 0)
		return true;
	if (gbt_gpu_shared == NULL || gbt_gpu_shared->state != GBT_SVC_READY)
	{
		strlcpy(errbuf, "the GPU service is not ready", errlen);
		return false;
	}
	if (sort_put(slot, offset, entries, n, errbuf, errlen) == 0)
		return true;
	if (errbuf[0] == '\0')
		strlcpy(errbuf, "the GPU could not take the build's entries", errlen);
	return false;
}

/* Sort the n entries streamed; false when the GPU could not (see gpu_failed) */
static bool
stream_sort(Relation index, int slot, Size n, bool tid_sorted, GbtGpuSortTimes *times)
{
	char		errbuf[256];
	uint64		total = 0;
	int			rc;

	errbuf[0] = '\0';
	rc = sort_run(slot, tid_sorted, &total, times, errbuf, sizeof(errbuf));
	times->nruns = 1;
	times->run_entries = n;
	if (rc == 0 && total != n)
	{
		snprintf(errbuf, sizeof(errbuf), "the device holds %llu entries of the %llu streamed",
				 (unsigned long long) total, (unsigned long long) n);
		rc = GBT_CUDA_EDEVICE;
	}
	if (rc != 0)
		return gbt_gpu_failed(index, true, errbuf[0] ? errbuf : "the GPU sort failed",
						  gbt_gpu_fallback_counter(rc));
	return true;
}

/* Pages in one layout request: the staging area's worth, at most 8 MB */
static int
layout_chunk(void)
{
	Size		room = gbt_gpu_staging_size > GBT_GPU_PLAN_SPACE ?
		gbt_gpu_staging_size - GBT_GPU_PLAN_SPACE : 0;

	return (int) Max(16, Min(1024, room / BLCKSZ));
}

/*
 * Pages [first, first + count) of plan's tree (count at most
 * layout_chunk()) into pages.  False when the GPU could not (see
 * gpu_failed); the caller still ends the sort.
 */
static bool
layout_pages(Relation index, int slot, const GbtCudaTreePlan *plan, uint64 first, int count,
			 char *pages, double *ms)
{
	char		errbuf[256];
	uint64		args[3];
	dsm_segment *seg;
	char	   *buf;
	int			rc;
	instr_time	t0,
				t1;

	StaticAssertStmt(sizeof(GbtCudaTreePlan) <= GBT_GPU_PLAN_SPACE, "plan too large");
	INSTR_TIME_SET_CURRENT(t0);
	errbuf[0] = '\0';
	buf = gbt_gpu_transfer_buffer(GBT_GPU_PLAN_SPACE + (Size) count * BLCKSZ, &seg);
	memcpy(buf, plan, sizeof(GbtCudaTreePlan));
	args[0] = slot;
	args[1] = first;
	args[2] = count;
	PG_TRY();
	{
		rc = gbt_gpu_submit_and_wait(GBT_OP_SORT_LAYOUT, -1, 0, seg, seg == NULL, args, NULL, NULL,
							 errbuf, sizeof(errbuf));
		if (rc == 0)
			memcpy(pages, buf + GBT_GPU_PLAN_SPACE, (Size) count * BLCKSZ);
	}
	PG_CATCH();
	{
		gbt_gpu_transfer_done(seg);
		PG_RE_THROW();
	}
	PG_END_TRY();
	gbt_gpu_transfer_done(seg);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	*ms += INSTR_TIME_GET_MILLISEC(t1);
	if (rc != 0)
		return gbt_gpu_failed(index, true, errbuf[0] ? errbuf : "the GPU could not lay out the pages",
						  gbt_gpu_fallback_counter(rc));
	return true;
}

/*
 * Loading a new index onto the device while CREATE INDEX writes it, so
 * that the first GPU scan needs no load.  The build lays its pages out
 * directly in one of two shared buffers of LOAD_CHUNK_PAGES pages; a full
 * buffer goes to the service while the build fills the other one, so the
 * device copy costs the build almost nothing beyond the last chunk.  Best
 * effort: on any failure the loading stops (DEBUG1) and the first GPU
 * scan loads the index as it would any other.
 *
 * The copy is claimed as a full load claims it (a new generation, not
 * valid), and made valid at the end only if nobody started another load
 * meanwhile; the index is not visible to other sessions until the build
 * commits, so nobody normally does.
 */
#define LOAD_CHUNK_PAGES	1024	/* 8 MB per shipment */

typedef struct GbtGpuPageLoad
{
	Relation	index;
	int			copyno;
	uint64		gen;
	BlockNumber capacity;		/* expected size, to size the copy */
	dsm_segment *seg[2];
	int			cur;			/* the buffer being filled */
	uint32		n;				/* pages in it */
	GbtGpuRequest *inflight;	/* the other buffer's shipment, if running */
	bool		reset;			/* the next shipment starts the copy */
	bool		failed;
	uint64		shipped;
	char		errbuf[256];
} GbtGpuPageLoad;

static inline GbtGpuPutPayload *
load_header(GbtGpuPageLoad *ld, int b)
{
	return (GbtGpuPutPayload *) dsm_segment_address(ld->seg[b]);
}

static inline BlockNumber *
load_blknos(GbtGpuPageLoad *ld, int b)
{
	return (BlockNumber *) ((char *) dsm_segment_address(ld->seg[b]) +
							MAXALIGN(sizeof(GbtGpuPutPayload)));
}

/* the page images start where the service looks for them (serve_put) */
static inline char *
load_images(GbtGpuPageLoad *ld, int b)
{
	return (char *) load_blknos(ld, b) +
		TYPEALIGN(BLCKSZ, sizeof(BlockNumber) * LOAD_CHUNK_PAGES);
}

static void
load_fail(GbtGpuPageLoad *ld, int rc)
{
	if (ld->failed)
		return;
	ld->failed = true;
	ereport(DEBUG1,
			(errmsg_internal("gbtree: index \"%s\" is not loaded onto the device during its build: %s (code %d)",
							 RelationGetRelationName(ld->index),
							 ld->errbuf[0] ? ld->errbuf : "no room", rc)));
}

/* Wait for the shipment in flight, if any. */
static void
load_wait(GbtGpuPageLoad *ld)
{
	int			rc;

	if (ld->inflight == NULL)
		return;
	rc = gbt_gpu_wait_request(ld->inflight, NULL, NULL, ld->errbuf, sizeof(ld->errbuf));
	ld->inflight = NULL;
	if (rc != 0)
		load_fail(ld, rc);
}

/* Ship the current buffer and switch to the other one. */
static void
load_ship(GbtGpuPageLoad *ld)
{
	GbtGpuPutPayload *hdr = load_header(ld, ld->cur);

	load_wait(ld);
	if (ld->failed || ld->n == 0)
	{
		ld->n = 0;
		return;
	}
	hdr->npages = ld->n;
	hdr->nblocks = ld->capacity;
	hdr->reset = ld->reset;
	ld->inflight = gbt_gpu_submit_request(GBT_OP_PUT_PAGES, ld->copyno, ld->gen, ld->seg[ld->cur],
								  false, NULL, ld->errbuf, sizeof(ld->errbuf));
	if (ld->inflight == NULL)
	{
		load_fail(ld, GBT_GPU_ESERVICE);
		return;
	}
	ld->reset = false;
	ld->shipped += ld->n;
	ld->n = 0;
	ld->cur = 1 - ld->cur;
}

/*
 * Start loading index, expected to have about nblocks blocks, or NULL
 * when there is no GPU to load it onto.
 */
static GbtGpuPageLoad *
load_begin(Relation index, BlockNumber nblocks)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	GbtGpuPageLoad *ld;
	GbtGpuCopy *c;
	Size		bufsz = MAXALIGN(sizeof(GbtGpuPutPayload)) +
		TYPEALIGN(BLCKSZ, sizeof(BlockNumber) * LOAD_CHUNK_PAGES) +
		(Size) BLCKSZ * LOAD_CHUNK_PAGES;

	if (sh == NULL || sh->state != GBT_SVC_READY || gbt_device_mode == GBT_DEVICE_CPU ||
		index->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		return NULL;
	ld = palloc0(sizeof(GbtGpuPageLoad));
	ld->index = index;
	ld->capacity = nblocks;
	ld->reset = true;
	ld->copyno = gbt_gpu_get_copy(index);
	c = &sh->copies[ld->copyno];
	LWLockAcquire(&sh->sync_locks[ld->copyno].lock, LW_EXCLUSIVE);
	if (gbt_gpu_find_copy(RelationGetRelid(index)) != ld->copyno)
	{
		LWLockRelease(&sh->sync_locks[ld->copyno].lock);
		pfree(ld);
		return NULL;
	}
	SpinLockAcquire(&c->mutex);
	gbt_gpu_copy_restart_locked(c, index);
	ld->gen = c->gen;
	SpinLockRelease(&c->mutex);
	LWLockRelease(&sh->sync_locks[ld->copyno].lock);

	for (int b = 0; b < 2; b++)
		ld->seg[b] = dsm_create(bufsz, 0);
	return ld;
}

/*
 * Where the caller lays out its next n pages (consecutive images), which
 * it hands over with load_done() once they are final.  Ships the current
 * buffer first if it lacks the room.
 */
static char *
load_next(GbtGpuPageLoad *ld, int n)
{
	Assert(n <= LOAD_CHUNK_PAGES);
	if (ld->n + n > LOAD_CHUNK_PAGES)
		load_ship(ld);
	return load_images(ld, ld->cur) + (Size) ld->n * BLCKSZ;
}

/*
 * The n slots from the current position hold the final images of blocks
 * blknos[]; ship the buffer when it is full.
 */
static void
load_done(GbtGpuPageLoad *ld, const BlockNumber *blknos, int n)
{
	Assert(ld->n + n <= LOAD_CHUNK_PAGES);
	memcpy(load_blknos(ld, ld->cur) + ld->n, blknos, sizeof(BlockNumber) * n);
	ld->n += n;
	if (ld->n == LOAD_CHUNK_PAGES)
		load_ship(ld);
}

/* Stop loading (also on error): give up a shipment in flight. */
static void
load_abort(GbtGpuPageLoad *ld)
{
	if (ld->inflight)
	{
		gbt_gpu_abandon_request();
		ld->inflight = NULL;
	}
	for (int b = 0; b < 2; b++)
		if (ld->seg[b])
			dsm_detach(ld->seg[b]);
	ld->seg[0] = ld->seg[1] = NULL;
}

/* Ship what is left and make the copy valid with nblocks blocks. */
static void
load_finish(GbtGpuPageLoad *ld, BlockNumber nblocks)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	load_ship(ld);
	load_wait(ld);
	if (!ld->failed)
	{
		/* a takeover of the slot or another load bumped the generation */
		LWLockAcquire(&sh->sync_locks[ld->copyno].lock, LW_EXCLUSIVE);
		gbt_gpu_copy_loaded(&sh->copies[ld->copyno], ld->gen, nblocks, InvalidXLogRecPtr);
		LWLockRelease(&sh->sync_locks[ld->copyno].lock);
		gbt_gpu_count_shipped(ld->copyno, ld->shipped);
	}
	load_abort(ld);
}

/*
 * The build's session: what one build holds on the device, so that the
 * build files end it all with one call (gbt_gpu_build_end), whichever of
 * the paths above it took.  sort[0] holds the values, sort[1] the NULLs.
 * A worker's session is attached to the leader's sorts: it only puts.
 */
struct GbtGpuBuild
{
	Relation	index;
	bool		owner;			/* the sorts are this session's to end */
	bool		streaming;		/* the scan streams into sort[] */
	int			sort[2];		/* the service's sort slots, or -1 */
	GbtGpuPageLoad *load;		/* loading the device copy, or NULL */
	char	   *pages;			/* pages laid out, a chunk at a time */
};

/*
 * Free the device's entries of one tree.  laid_out: the values' pages
 * came back, which makes the build a GPU build in the statistics.
 */
static void
release_sort(GbtGpuBuild *b, bool nulls, bool laid_out)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	int			slot = b->sort[nulls ? 1 : 0];

	if (slot < 0 || !b->owner)
		return;
	/* forgotten first: a slot ended twice might be another build's by then */
	b->sort[nulls ? 1 : 0] = -1;
	gbt_gpu_sort_end(slot);
	if (laid_out)
	{
		SpinLockAcquire(&sh->mutex);
		sh->gpu_builds++;
		sh->gpu_build_runs++;
		sh->gpu_build_layouts++;
		SpinLockRelease(&sh->mutex);
	}
}

/*
 * A build of index begins, holding nothing on the device yet.  The index
 * may be rebuilt in place (TRUNCATE in its creating transaction): any
 * device copy is of the old content.
 */
GbtGpuBuild *
gbt_gpu_build_begin(Relation index)
{
	GbtGpuBuild *b = palloc0(sizeof(GbtGpuBuild));

	b->index = index;
	b->owner = true;
	b->sort[0] = b->sort[1] = -1;
	gbt_gpu_forget(index);
	return b;
}

/*
 * Release whatever the session still holds (a load in progress, the
 * device's entries), and the session.  The load goes first: its shipment
 * in flight is this backend's one request, which the sorts' ends follow.
 */
void
gbt_gpu_build_end(GbtGpuBuild *b)
{
	if (b->load)
	{
		load_abort(b->load);
		pfree(b->load);
		b->load = NULL;
	}
	release_sort(b, false, false);
	release_sort(b, true, false);
	if (b->pages)
		pfree(b->pages);
	pfree(b);
}

/*
 * Stream the heap scan's entries to the device when the GPU takes a build
 * of about expected values and one device sort takes them whole: a sort
 * for the values and one for the NULLs.  False when the build does not
 * stream; *failed then says whether the GPU was wanted but failed (under
 * gbtree.device = auto; an ERROR under gpu).
 */
bool
gbt_gpu_build_stream(GbtGpuBuild *b, Size expected, bool *failed)
{
	*failed = false;
	if (!gbt_gpu_wanted(expected) || !can_layout(expected))
		return false;
	b->sort[0] = stream_begin(b->index, expected);
	/* the NULLs to a sort of their own, which grows from a little */
	if (b->sort[0] >= 0)
		b->sort[1] = stream_begin(b->index, Min(expected, 65536));
	if (b->sort[1] < 0)
	{
		release_sort(b, false, false);
		*failed = true;
		return false;
	}
	b->streaming = true;
	return true;
}

/* What the workers attach to: the sorts streamed into, if any */
void
gbt_gpu_build_share(GbtGpuBuild *b, GbtGpuBuildHandle *handle)
{
	handle->value_sort = b->streaming ? b->sort[0] : -1;
	handle->null_sort = b->streaming ? b->sort[1] : -1;
}

/* A worker's session, which puts into the leader's sorts; NULL if none */
GbtGpuBuild *
gbt_gpu_build_attach(const GbtGpuBuildHandle *handle)
{
	GbtGpuBuild *b;

	if (handle->value_sort < 0)
		return NULL;
	b = palloc0(sizeof(GbtGpuBuild));
	b->streaming = true;
	b->sort[0] = handle->value_sort;
	b->sort[1] = handle->null_sort;
	return b;
}

/*
 * Put n values (or NULLs), at most 512k, at offset of their sort; false
 * (errbuf says why) if the GPU could not.
 */
bool
gbt_gpu_build_put(GbtGpuBuild *b, bool nulls, uint64 offset, const GbtEntry *entries, Size n,
				  char *errbuf, Size errlen)
{
	Assert(b->streaming);
	return stream_put(b->sort[nulls ? 1 : 0], offset, entries, n, errbuf, errlen);
}

/* A participant could not stream: count it as gbt_gpu_failed does (ERROR under gpu) */
void
gbt_gpu_build_stream_failed(GbtGpuBuild *b, const char *why)
{
	(void) gbt_gpu_failed(b->index, true, why, &gbt_gpu_shared->fallback_error);
}

/*
 * Sort the nvalues values and nnulls NULLs streamed; their times add up in
 * *times.  Without NULLs their sort goes (the CPU lays out an empty tree).
 * False when the GPU could not (see gpu_failed).
 */
bool
gbt_gpu_build_sort_streamed(GbtGpuBuild *b, Size nvalues, Size nnulls, bool tid_sorted,
							GbtGpuSortTimes *times)
{
	memset(times, 0, sizeof(*times));
	if (!stream_sort(b->index, b->sort[0], nvalues, tid_sorted, times))
		return false;
	if (nnulls == 0)
	{
		release_sort(b, true, false);
		return true;
	}
	/* the NULLs in TID order: key 0 each, so sorting them sorts TIDs */
	return stream_sort(b->index, b->sort[1], nnulls, false, times);
}

/*
 * Sort n values from in by (key, TID) on the GPU, leaving in as it was
 * (after a failure the CPU can still sort it).  keep: the values stay on
 * the device, to be laid out there, when one sort takes them whole and
 * the library lays pages out (gbt_gpu_build_on_device says whether they
 * did); otherwise they come back into out, as consecutive sorted runs when
 * there are more than one sort takes (times->nruns, times->run_entries),
 * for the caller to merge.  False when the GPU could not (see gpu_failed).
 */
bool
gbt_gpu_build_sort(GbtGpuBuild *b, const GbtEntry *in, GbtEntry *out, Size n, bool tid_sorted,
				   bool keep, GbtGpuSortTimes *times)
{
	if (keep && can_layout(n))
	{
		Assert(b->sort[0] < 0);
		b->sort[0] = sort_keep(b->index, in, n, tid_sorted, times);
		return b->sort[0] >= 0;
	}
	return sort_entries(b->index, in, out, n, tid_sorted, times);
}

/* Whether the device holds the values' (or the NULLs') entries, sorted */
bool
gbt_gpu_build_on_device(GbtGpuBuild *b, bool nulls)
{
	return b->sort[nulls ? 1 : 0] >= 0;
}

/*
 * The next pages of plan's tree, laid out on the device from the values'
 * (or the NULLs') sorted entries: *count pages from page first on, valid
 * until the next call.  Once the tree's last page came back, or when the
 * GPU could not (NULL; see gpu_failed), the device's entries go.
 */
char *
gbt_gpu_build_layout(GbtGpuBuild *b, bool nulls, const GbtCudaTreePlan *plan, uint64 first,
					 int *count, double *ms)
{
	int			chunk = layout_chunk();
	uint64		total = 0;

	Assert(b->sort[nulls ? 1 : 0] >= 0);
	for (int level = 0; level < plan->nlevels; level++)
		total += plan->npages[level];
	*count = (int) Min((uint64) chunk, total - first);
	if (b->pages == NULL)
		b->pages = palloc((Size) chunk * BLCKSZ);
	/* one request at a time: a device copy shipment may be in flight */
	if (b->load)
		load_wait(b->load);
	if (!layout_pages(b->index, b->sort[nulls ? 1 : 0], plan, first, *count, b->pages, ms))
	{
		release_sort(b, nulls, false);
		return NULL;
	}
	/* the NULLs' sort is counted with the values' */
	if (first + *count == total)
		release_sort(b, nulls, !nulls);
	return b->pages;
}

/*
 * Load the new index, expected to have about nblocks blocks, onto the
 * device as the build writes it; false when there is no GPU to load it
 * onto.
 */
bool
gbt_gpu_build_load_begin(GbtGpuBuild *b, BlockNumber nblocks)
{
	Assert(b->load == NULL);
	b->load = load_begin(b->index, nblocks);
	return b->load != NULL;
}

/* Where the build lays out its next n pages; see load_next */
char *
gbt_gpu_build_load_next(GbtGpuBuild *b, int n)
{
	return load_next(b->load, n);
}

/* Those pages are final now: the images of blocks blknos[] */
void
gbt_gpu_build_load_done(GbtGpuBuild *b, const BlockNumber *blknos, int n)
{
	load_done(b->load, blknos, n);
}

/* The index is written, nblocks blocks: the copy is complete */
void
gbt_gpu_build_load_finish(GbtGpuBuild *b, BlockNumber nblocks)
{
	load_finish(b->load, nblocks);
	pfree(b->load);
	b->load = NULL;
}
