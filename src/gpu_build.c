/*-------------------------------------------------------------------------
 *
 * gpu_build.c
 *	  CREATE INDEX on the GPU, backend side: the device sort of a build's
 *	  entries (whole, in runs, or streamed by the heap scan's
 *	  participants), the pages laid out from it on the device, and the
 *	  new index loaded onto the device as the build writes it.  The
 *	  transport (requests, staging, copies) is gpu_client.c's.
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
bool
gbt_gpu_sort_entries(Relation index, const GbtEntry *in, GbtEntry *out, Size n,
					 bool tid_sorted, GbtGpuSortTimes *times)
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
 * Builds whose pages are laid out on the device.  gbt_gpu_sort_keep sorts
 * the entries as gbt_gpu_sort_entries does but leaves them on the device;
 * gbt_gpu_layout_pages then brings back the pages of a tree laid out from
 * them, chunk by chunk, as the build writes them; gbt_gpu_sort_release
 * frees the device's entries.  Only for builds one sort takes whole (no
 * runs to merge), and only with a library that lays pages out.
 */
bool
gbt_gpu_can_layout(Size n)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	return sh != NULL && sh->state == GBT_SVC_READY && sh->can_layout &&
		n <= gbt_gpu_sort_capacity();
}

/* Returns the sort's slot, or -1 (see gpu_failed) */
int
gbt_gpu_sort_keep(Relation index, const GbtEntry *in, Size n, bool tid_sorted,
				  GbtGpuSortTimes *times)
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
 * gbt_gpu_stream_begin starts a sort with room for about capacity entries
 * (it grows if need be); every participant of the scan, the leader and
 * the parallel workers, puts its chunks at offsets it reserves
 * (gbt_gpu_stream_put); gbt_gpu_stream_sort sorts the n entries once all
 * are in.  The pages are then laid out as for gbt_gpu_sort_keep.
 */
int
gbt_gpu_stream_begin(Relation index, Size capacity)
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
bool
gbt_gpu_stream_put(int slot, uint64 offset, const GbtEntry *entries, Size n,
				   char *errbuf, Size errlen)
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
bool
gbt_gpu_stream_sort(Relation index, int slot, Size n, bool tid_sorted, GbtGpuSortTimes *times)
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

/* A streamed build gave up: count it as gbt_gpu_failed does (ERROR under gpu) */
void
gbt_gpu_stream_failed(Relation index, const char *why)
{
	(void) gbt_gpu_failed(index, true, why, &gbt_gpu_shared->fallback_error);
}

/* Pages in one layout request: the staging area's worth, at most 8 MB */
int
gbt_gpu_layout_chunk(void)
{
	Size		room = gbt_gpu_staging_size > GBT_GPU_PLAN_SPACE ?
		gbt_gpu_staging_size - GBT_GPU_PLAN_SPACE : 0;

	return (int) Max(16, Min(1024, room / BLCKSZ));
}

/*
 * Pages [first, first + count) of plan's tree (count at most
 * gbt_gpu_layout_chunk()) into pages.  False when the GPU could not (see
 * gpu_failed); the caller still ends the sort (gbt_gpu_sort_abort).
 */
bool
gbt_gpu_layout_pages(Relation index, int slot, const GbtCudaTreePlan *plan, uint64 first,
					 int count, char *pages, double *ms)
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

/* After an error: free the device's entries, no questions asked */
void
gbt_gpu_sort_abort(int slot)
{
	gbt_gpu_sort_end(slot);
}

void
gbt_gpu_sort_release(int slot, bool laid_out)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	gbt_gpu_sort_end(slot);
	SpinLockAcquire(&sh->mutex);
	sh->gpu_builds++;
	sh->gpu_build_runs++;
	if (laid_out)
		sh->gpu_build_layouts++;
	SpinLockRelease(&sh->mutex);
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

struct GbtGpuPageLoad
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
};

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
GbtGpuPageLoad *
gbt_gpu_load_begin(Relation index, BlockNumber nblocks)
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
 * it hands over with gbt_gpu_load_done() once they are final.  Ships the
 * current buffer first if it lacks the room.
 */
char *
gbt_gpu_load_next(GbtGpuPageLoad *ld, int n)
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
void
gbt_gpu_load_done(GbtGpuPageLoad *ld, const BlockNumber *blknos, int n)
{
	Assert(ld->n + n <= LOAD_CHUNK_PAGES);
	memcpy(load_blknos(ld, ld->cur) + ld->n, blknos, sizeof(BlockNumber) * n);
	ld->n += n;
	if (ld->n == LOAD_CHUNK_PAGES)
		load_ship(ld);
}

/* Wait for the shipment in flight: before this backend's next request */
void
gbt_gpu_load_wait(GbtGpuPageLoad *ld)
{
	load_wait(ld);
}

/* Ship what is left and make the copy valid with nblocks blocks. */
void
gbt_gpu_load_finish(GbtGpuPageLoad *ld, BlockNumber nblocks)
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
	gbt_gpu_load_abort(ld);
}

/* Stop loading (also on error): give up a shipment in flight. */
void
gbt_gpu_load_abort(GbtGpuPageLoad *ld)
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
