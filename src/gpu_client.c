/*-------------------------------------------------------------------------
 *
 * gpu_client.c
 *	  The backend side of the GPU path: GUCs, tracking of changed pages,
 *	  keeping a device copy fresh before a GPU scan, batched lookups
 *	  through the GPU service, gbtree_device_info().
 *
 * Freshness (src/README, invariant 5).  Every page change records
 * its blocks in the copy's dirty set in shared memory before the pages'
 * buffer locks are released, and counts itself if it spans pages.  A GPU
 * scan, after taking its snapshot and holding the copy's sync lock, takes
 * the dirty set and ships those pages, again while multi-page changes
 * were recorded during the shipment; then it submits its lookup, which
 * the service runs after every shipment before it.  Any change committed
 * before the snapshot recorded its pages before its commit, so it is on
 * the device; the pages of one change are recorded under the buffer locks
 * that made it, so a page read after a split finds the split's other
 * pages in the next take (see sync_copy()).
 * On a hot standby, WAL replay changes pages without the access method:
 * there a sync ships every page whose LSN is past the replay position
 * of the previous sync.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gbtree_gpu.h"
#include "gpu_internal.h"

int			gbt_device_mode = GBT_DEVICE_AUTO;
int			gbt_gpu_min_batch = 10000;
int			gbt_gpu_merge_min = 65536;
int			gbt_gpu_memory_limit_mb = 0;
int			gbt_gpu_sort_run = 0;
int			gbt_gpu_inject_fault = 0;
int			gbt_gpu_staging_mb = 64;
char	   *gbt_device_library = NULL;
char	   *gbt_gpu_staging = NULL;
Size		gbt_gpu_staging_size = 0;

/*
 * This backend's hold on the staging area, and its request in flight.  A
 * request still running when the backend gives up (cancel, error, exit) is
 * marked abandoned; the service then frees its slot and, if the request
 * was staged, the staging area, since it may still be writing there.
 */
static bool staging_held = false;
static GbtGpuRequest *my_request = NULL;
static bool exit_callback_set = false;
static uint32 wait_gpu_request = 0;	/* wait event: waiting on the GPU service */

static const struct config_enum_entry gbt_device_options[] = {
	{"auto", GBT_DEVICE_AUTO, false},
	{"cpu", GBT_DEVICE_CPU, false},
	{"gpu", GBT_DEVICE_GPU, false},
	{NULL, 0, false}
};

#define SHIP_CHUNK_PAGES	1024	/* 8 MB per shipment */
#define SYNC_MAX_ROUNDS		64

static object_access_hook_type prev_object_access_hook = NULL;

void
gbt_gpu_define_gucs(void)
{
	DefineCustomEnumVariable("gbtree.device",
							 "Where gbtree runs batched lookups: auto, cpu or gpu.",
							 "auto uses the GPU service for batches of at least gbtree.gpu_min_batch "
							 "keys when it is ready; gpu uses it for every scan it can serve and "
							 "raises an error when it cannot; cpu never uses it.",
							 &gbt_device_mode,
							 GBT_DEVICE_AUTO,
							 gbt_device_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("gbtree.gpu_min_batch",
							"Smallest = ANY batch that gbtree.device = auto sends to the GPU.",
							NULL,
							&gbt_gpu_min_batch,
							10000, 1, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("gbtree.gpu_merge_min",
							"Smallest insert batch that gbtree.device = auto sorts and places on the GPU (0: never).",
							"Under gbtree.device = gpu, gbtree.gpu_min_batch applies instead.",
							&gbt_gpu_merge_min,
							65536, 0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("gbtree.gpu_memory_limit",
							"Device memory the GPU service may use for index copies (0: 90% of the device).",
							"Least recently used copies are dropped to stay under it.",
							&gbt_gpu_memory_limit_mb,
							0, 0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
	/* read at server start: these exist only when gbtree is preloaded */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomStringVariable("gbtree.device_library",
								   "The library the GPU service loads for the device (empty: $libdir/libgbtree_cuda.so).",
								   "Testing: test/gpu/emu builds a stand-in that runs on the CPU.",
								   &gbt_device_library,
								   "",
								   PGC_POSTMASTER,
								   GUC_SUPERUSER_ONLY,
								   NULL, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("gbtree.gpu_staging_buffer",
								"Shared memory through which GPU lookups pass their keys and results (0: none).",
								"A batch whose keys and results do not fit, or that finds it in use, goes "
								"through a dynamic shared memory segment instead, which costs page faults.",
								&gbt_gpu_staging_mb,
								64, 0, 4096,
								PGC_POSTMASTER,
								GUC_UNIT_MB,
								NULL, NULL, NULL);
	DefineCustomIntVariable("gbtree.gpu_sort_run",
							"Most entries one GPU sort of a build takes at once (0: a quarter of the device memory's worth).",
							"Larger builds are sorted as several runs, merged on the CPU before the pages are laid out.",
							&gbt_gpu_sort_run,
							0, 0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("gbtree.gpu_inject_fault",
							"Testing only: 1 makes the GPU service fail this session's lookups and builds as a device error would.",
							"2 makes the GPU service exit, as a crash would, when it receives this session's "
							"next build data; 3 when it lays out a build's pages past the first chunk.",
							&gbt_gpu_inject_fault,
							0, 0, 3,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
}

/* ------------------------------------------------------------------------
 * Copies and dirty pages
 * ------------------------------------------------------------------------
 */

static inline bool
copy_is(GbtGpuCopy *c, Oid indexoid)
{
	return c->inuse && c->indexoid == indexoid && c->dboid == MyDatabaseId;
}

/* Slot of the copy of this index, or -1.  Unlocked peek, then confirmed. */
int
gbt_gpu_find_copy(Oid indexoid)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	for (int i = 0; i < GBT_GPU_MAX_COPIES; i++)
	{
		GbtGpuCopy *c = &sh->copies[i];
		bool		match;

		if (!copy_is(c, indexoid))
			continue;
		SpinLockAcquire(&c->mutex);
		match = copy_is(c, indexoid);
		SpinLockRelease(&c->mutex);
		if (match)
			return i;
	}
	return -1;
}

/*
 * Record that pages of this index changed: blknos[n], all still locked by
 * the caller, in one critical change.  multi_page: the change spans pages
 * (split, page deletion); counting such changes is what lets a sync stop
 * at a consistent copy (see sync_copy()).  Costs an atomic read when no
 * index has a device copy.
 */
void
gbt_gpu_note_changes(Relation index, const BlockNumber *blknos, int n, bool multi_page)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	Oid			indexoid = RelationGetRelid(index);
	int			i;
	GbtGpuCopy *c;

	if (sh == NULL)
		return;
	pg_memory_barrier();
	if (pg_atomic_read_u32(&sh->ncopies) == 0)
		return;
	i = gbt_gpu_find_copy(indexoid);
	if (i < 0)
		return;
	c = &sh->copies[i];
	SpinLockAcquire(&c->mutex);
	if (copy_is(c, indexoid))
	{
		for (int j = 0; j < n; j++)
		{
			if (c->ndirty > 0 && c->dirty[c->ndirty - 1] == blknos[j])
				continue;		/* already there */
			if (c->ndirty < GBT_GPU_MAX_DIRTY)
				c->dirty[c->ndirty++] = blknos[j];
			else
				c->overflow = true;
		}
		if (multi_page)
			c->smo_count++;
	}
	SpinLockRelease(&c->mutex);
}

/* The index was rebuilt in place (TRUNCATE in its creating transaction). */
void
gbt_gpu_forget(Relation index)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	int			i;

	if (sh == NULL || pg_atomic_read_u32(&sh->ncopies) == 0)
		return;
	i = gbt_gpu_find_copy(RelationGetRelid(index));
	if (i < 0)
		return;
	SpinLockAcquire(&sh->copies[i].mutex);
	if (copy_is(&sh->copies[i], RelationGetRelid(index)))
		sh->copies[i].valid = false;
	SpinLockRelease(&sh->copies[i].mutex);
}

void
gbt_gpu_count_fallback(const char *why, uint64 *counter)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	if (sh == NULL)
		return;
	SpinLockAcquire(&sh->mutex);
	sh->fallbacks++;
	if (counter)
		(*counter)++;
	strlcpy(sh->last_fallback, why, sizeof(sh->last_fallback));
	SpinLockRelease(&sh->mutex);
}

/*
 * Give up on this backend's request: leave a running one to the service
 * (with the staging area, if it uses it), free a pending or finished one.
 */
void
gbt_gpu_abandon_request(void)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	GbtGpuRequest *req = my_request;

	if (req == NULL)
		return;
	my_request = NULL;
	SpinLockAcquire(&sh->mutex);
	if (req->state == GBT_REQ_PENDING || req->state == GBT_REQ_DONE)
		req->state = GBT_REQ_FREE;
	else if (req->state == GBT_REQ_RUNNING)
	{
		req->abandoned = true;
		if (req->staged)
			staging_held = false;
	}
	SpinLockRelease(&sh->mutex);
}

void
gbt_gpu_staging_release(void)
{
	if (!staging_held)
		return;
	SpinLockAcquire(&gbt_gpu_shared->mutex);
	gbt_gpu_shared->staging_busy = false;
	SpinLockRelease(&gbt_gpu_shared->mutex);
	staging_held = false;
}

/* FATAL exits skip PG_CATCH: settle the request and the staging area here */
static void
gpu_client_exit(int code, Datum arg)
{
	if (gbt_gpu_shared == NULL)
		return;
	gbt_gpu_abandon_request();
	gbt_gpu_staging_release();
}

static void
register_exit_callback(void)
{
	if (!exit_callback_set)
	{
		before_shmem_exit(gpu_client_exit, (Datum) 0);
		exit_callback_set = true;
	}
}

/* The staging area, if it is free and holds size bytes. */
char *
gbt_gpu_staging_acquire(Size size)
{
	bool		got = false;

	if (gbt_gpu_staging == NULL || size > gbt_gpu_staging_size)
		return NULL;
	register_exit_callback();
	SpinLockAcquire(&gbt_gpu_shared->mutex);
	if (!gbt_gpu_shared->staging_busy)
	{
		gbt_gpu_shared->staging_busy = true;
		gbt_gpu_shared->staged_batches++;
		got = true;
	}
	SpinLockRelease(&gbt_gpu_shared->mutex);
	staging_held = got;
	return got ? gbt_gpu_staging : NULL;
}

/*
 * Queue a request for the service; NULL (with a message) when the service
 * is not ready or every slot is taken.  Requests the caller will wait for
 * become this backend's request in flight (my_request), which an error or
 * exit abandons.
 */
GbtGpuRequest *
gbt_gpu_submit_request(GbtGpuOp op, int copyno, uint64 gen, dsm_segment *seg, bool staged,
			   const uint64 *args, char *errbuf, Size errlen)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	GbtGpuRequest *req = NULL;
	int			svc = -1;
	bool		nowait = (op == GBT_OP_DROP || op == GBT_OP_SORT_END);

	Assert(my_request == NULL || nowait);
	SpinLockAcquire(&sh->mutex);
	if (sh->state == GBT_SVC_READY)
	{
		for (int i = 0; i < GBT_GPU_MAX_REQUESTS; i++)
			if (sh->requests[i].state == GBT_REQ_FREE)
			{
				req = &sh->requests[i];
				break;
			}
		if (req)
		{
			req->op = op;
			req->copyno = copyno;
			req->gen = gen;
			req->pgprocno = gbt_my_procno();
			req->handle = seg ? dsm_segment_handle(seg) : DSM_HANDLE_INVALID;
			req->staged = staged;
			for (int a = 0; a < 3; a++)
				req->arg[a] = args ? args[a] : 0;
			req->ms = 0;
			req->seq = sh->next_seq++;
			req->result = 0;
			req->total = 0;
			req->errmsg[0] = '\0';
			/* nobody waits for these: the service frees their slots */
			req->abandoned = nowait;
			req->inject_fault = gbt_gpu_inject_fault;
			req->state = GBT_REQ_PENDING;
			svc = sh->service_pgprocno;
		}
	}
	SpinLockRelease(&sh->mutex);
	if (req == NULL)
	{
		strlcpy(errbuf, "the GPU service is not ready or busy", errlen);
		return NULL;
	}
	if (!nowait)
	{
		register_exit_callback();
		my_request = req;
	}
	if (svc >= 0)
		SetLatch(&ProcGlobal->allProcs[svc].procLatch);
	return req;
}

/* Wait for this backend's request in flight.  Returns its result code. */
int
gbt_gpu_wait_request(GbtGpuRequest *req, uint64 *total, double *ms, char *errbuf, Size errlen)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	int			result = GBT_GPU_ESERVICE;

	Assert(req == my_request);
	PG_TRY();
	{
		for (;;)
		{
			bool		done = false;

			SpinLockAcquire(&sh->mutex);
			if (req->state == GBT_REQ_DONE)
			{
				result = req->result;
				if (total)
					*total = req->total;
				if (ms)
					*ms = req->ms;
				strlcpy(errbuf, req->errmsg, errlen);
				req->state = GBT_REQ_FREE;
				done = true;
			}
			SpinLockRelease(&sh->mutex);
			if (done)
			{
				my_request = NULL;
				break;
			}
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 100L, gbt_wait_event("GbtreeGpuRequest", &wait_gpu_request));
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		gbt_gpu_abandon_request();
		PG_RE_THROW();
	}
	PG_END_TRY();
	return result;
}

/* Submit a request and wait for it.  Returns the service's result code. */
int
gbt_gpu_submit_and_wait(GbtGpuOp op, int copyno, uint64 gen, dsm_segment *seg, bool staged,
				const uint64 *args, uint64 *total, double *ms, char *errbuf, Size errlen)
{
	GbtGpuRequest *req = gbt_gpu_submit_request(op, copyno, gen, seg, staged, args, errbuf, errlen);

	if (req == NULL)
		return GBT_GPU_ESERVICE;
	if (op == GBT_OP_DROP || op == GBT_OP_SORT_END)
		return 0;
	return gbt_gpu_wait_request(req, total, ms, errbuf, errlen);
}

/* The copy slot for this index, creating (or taking over) one. */
int
gbt_gpu_get_copy(Relation index)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	Oid			indexoid = RelationGetRelid(index);
	int			i;
	int			victim = -1;
	uint64		oldest = PG_UINT64_MAX;
	bool		was_free = false;
	GbtGpuCopy *c;

	LWLockAcquire(sh->copies_lock, LW_SHARED);
	i = gbt_gpu_find_copy(indexoid);
	LWLockRelease(sh->copies_lock);
	if (i >= 0)
		return i;

	LWLockAcquire(sh->copies_lock, LW_EXCLUSIVE);
	i = gbt_gpu_find_copy(indexoid);
	if (i >= 0)
	{
		LWLockRelease(sh->copies_lock);
		return i;
	}
	for (int j = 0; j < GBT_GPU_MAX_COPIES; j++)
	{
		uint64		lu;
		bool		inuse;

		SpinLockAcquire(&sh->copies[j].mutex);
		inuse = sh->copies[j].inuse;
		lu = sh->copies[j].last_used;
		SpinLockRelease(&sh->copies[j].mutex);
		if (!inuse)
		{
			victim = j;
			was_free = true;
			break;
		}
		if (lu < oldest)
		{
			oldest = lu;
			victim = j;
		}
	}
	/* a slot taken over must not be in the middle of a sync */
	LWLockAcquire(&sh->sync_locks[victim].lock, LW_EXCLUSIVE);
	c = &sh->copies[victim];
	SpinLockAcquire(&c->mutex);
	c->inuse = true;
	c->valid = false;
	c->dboid = MyDatabaseId;
	c->indexoid = indexoid;
	c->relfilenode = InvalidOid;
	c->gen++;
	c->nblocks = 0;
	c->syncs = 0;
	c->pages_shipped = 0;
	c->standby_lsn = InvalidXLogRecPtr;
	c->ndirty = 0;
	c->overflow = false;
	SpinLockRelease(&c->mutex);
	if (was_free)
		pg_atomic_fetch_add_u32(&sh->ncopies, 1);	/* full barrier */
	LWLockRelease(&sh->sync_locks[victim].lock);
	LWLockRelease(sh->copies_lock);
	return victim;
}

/*
 * Start a full load of copy c (its mutex held): a new generation, not
 * valid, with changes tracked from now on.
 */
void
gbt_gpu_copy_restart_locked(GbtGpuCopy *c, Relation index)
{
	c->gen++;
	c->relfilenode = gbt_rel_filenumber(index);
	c->ndirty = 0;
	c->overflow = false;
	c->valid = false;
}

/*
 * A full load of generation gen is on the device with nblocks blocks: the
 * copy is valid unless another load (or a takeover) began meanwhile.
 */
void
gbt_gpu_copy_loaded(GbtGpuCopy *c, uint64 gen, BlockNumber nblocks, XLogRecPtr standby_lsn)
{
	SpinLockAcquire(&c->mutex);
	if (c->gen == gen)
	{
		c->valid = true;
		c->nblocks = nblocks;
		c->standby_lsn = standby_lsn;
	}
	SpinLockRelease(&c->mutex);
}

void
gbt_gpu_count_shipped(int copyno, uint64 shipped)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	SpinLockAcquire(&sh->mutex);
	sh->pages_shipped += shipped;
	SpinLockRelease(&sh->mutex);
	SpinLockAcquire(&sh->copies[copyno].mutex);
	sh->copies[copyno].pages_shipped += shipped;
	SpinLockRelease(&sh->copies[copyno].mutex);
}

/*
 * Ship pages to the device copy: blknos[n] (sorted), or, with blknos NULL,
 * blocks [first, first + n).  When lsn_after is valid only pages whose LSN
 * is past it go (hot standby).  reset: this starts a full load.
 */
static int
ship_pages(Relation index, int copyno, uint64 gen, const BlockNumber *blknos,
		   BlockNumber first, BlockNumber n, BlockNumber nblocks, bool reset,
		   XLogRecPtr lsn_after, char *errbuf, Size errlen)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	Size		hdrsz = MAXALIGN(sizeof(GbtGpuPutPayload));
	Size		blksz = TYPEALIGN(BLCKSZ, sizeof(BlockNumber) * SHIP_CHUNK_PAGES);
	dsm_segment *seg;
	char	   *base;
	GbtGpuPutPayload *hdr;
	BlockNumber *bl;
	char	   *images;
	BlockNumber done = 0;
	uint64		shipped = 0;
	int			rc = 0;

	seg = dsm_create(hdrsz + blksz + (Size) BLCKSZ * SHIP_CHUNK_PAGES, 0);
	base = dsm_segment_address(seg);
	hdr = (GbtGpuPutPayload *) base;
	bl = (BlockNumber *) (base + hdrsz);
	images = base + hdrsz + blksz;

	while (done < n || reset)
	{
		uint32		k = 0;

		while (done < n && k < SHIP_CHUNK_PAGES)
		{
			BlockNumber blk = blknos ? blknos[done] : first + done;
			Buffer		buf;
			Page		page;
			bool		take = true;

			done++;
			if (blk >= nblocks)
				continue;		/* truncated away since recorded */
			CHECK_FOR_INTERRUPTS();
			buf = ReadBufferExtended(index, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			if (!XLogRecPtrIsInvalid(lsn_after) && PageGetLSN(page) <= lsn_after)
				take = false;
			/* the kernels do not cut runs by tails yet: the CPU answers */
			if (!PageIsNew(page) && PageGetSpecialSize(page) == GBT_OPAQUE_SIZE &&
				(gbt_page_opaque((char *) page)->flags & GBT_F_TAILS))
			{
				UnlockReleaseBuffer(buf);
				snprintf(errbuf, errlen, "index holds text longer than its words (block %u)", blk);
				rc = -1;
				break;
			}
			/*
			 * nor read posting leaves of multi-word trees (node_wpost.c),
			 * those of keys that fit one word included
			 */
			if (!PageIsNew(page) && PageGetSpecialSize(page) == GBT_OPAQUE_SIZE &&
				(gbt_page_opaque((char *) page)->keywords > 1 || gbt_index_info(index)->wide) &&
				(gbt_page_opaque((char *) page)->flags & GBT_F_POSTING))
			{
				UnlockReleaseBuffer(buf);
				snprintf(errbuf, errlen, "index holds multi-word posting leaves (block %u)", blk);
				rc = -1;
				break;
			}
			if (take)
			{
				bl[k] = blk;
				memcpy(images + (Size) k * BLCKSZ, page, BLCKSZ);
				k++;
			}
			UnlockReleaseBuffer(buf);
		}
		if (rc != 0 || (k == 0 && !reset))
			break;
		hdr->npages = k;
		hdr->nblocks = nblocks;
		hdr->reset = reset;
		rc = gbt_gpu_submit_and_wait(GBT_OP_PUT_PAGES, copyno, gen, seg, false, NULL, NULL, NULL, errbuf, errlen);
		if (rc != 0)
			break;
		shipped += k;
		reset = false;
	}
	dsm_detach(seg);
	FreeAccessStrategy(strategy);
	gbt_gpu_count_shipped(copyno, shipped);
	return rc;
}

static int
cmp_blkno(const void *a, const void *b)
{
	BlockNumber x = *(const BlockNumber *) a;
	BlockNumber y = *(const BlockNumber *) b;

	return (x > y) - (x < y);
}

/*
 * Bring the device copy of index up to date for the caller's snapshot.
 * Called holding the copy's sync lock.  Returns 0 or an error code.
 */
static int
sync_copy(Relation index, int copyno, uint64 *genp, char *errbuf, Size errlen)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	GbtGpuCopy *c = &sh->copies[copyno];
	BlockNumber *dirty = palloc(sizeof(BlockNumber) * GBT_GPU_MAX_DIRTY);
	bool		in_recovery = RecoveryInProgress();
	int			rc = 0;

	for (int round = 0;; round++)
	{
		bool		valid;
		bool		overflow;
		Oid			rfn;
		uint64		gen;
		XLogRecPtr	standby_lsn;
		int			n;
		BlockNumber nblocks;
		uint64		smo_before;
		uint64		smo_after;

		if (round >= SYNC_MAX_ROUNDS)
		{
			strlcpy(errbuf, "the index changes faster than its device copy can follow", errlen);
			rc = GBT_GPU_ENOCOPY;
			break;
		}
		SpinLockAcquire(&c->mutex);
		valid = c->valid;
		rfn = c->relfilenode;
		overflow = c->overflow;
		standby_lsn = c->standby_lsn;
		if (!valid || overflow || rfn != gbt_rel_filenumber(index))
		{
			gbt_gpu_copy_restart_locked(c, index);
			valid = false;
			n = 0;
		}
		else
		{
			n = c->ndirty;
			memcpy(dirty, c->dirty, sizeof(BlockNumber) * n);
			c->ndirty = 0;
		}
		gen = c->gen;
		smo_before = c->smo_count;
		SpinLockRelease(&c->mutex);
		*genp = gen;
		pg_memory_barrier();

		if (!valid)
		{
			XLogRecPtr	lsn0 = in_recovery ? GetXLogReplayRecPtr(NULL) : InvalidXLogRecPtr;

			nblocks = RelationGetNumberOfBlocks(index);
			rc = ship_pages(index, copyno, gen, NULL, 0, nblocks, nblocks, true,
							InvalidXLogRecPtr, errbuf, errlen);
			if (rc != 0)
				break;
			gbt_gpu_copy_loaded(c, gen, nblocks, lsn0);
			continue;			/* then the pages changed meanwhile */
		}

		if (!XLogRecPtrIsInvalid(standby_lsn))
		{
			/* loaded during recovery: WAL replay changed pages behind us */
			XLogRecPtr	lsn0 = in_recovery ? GetXLogReplayRecPtr(NULL) : InvalidXLogRecPtr;

			if (!in_recovery || lsn0 != standby_lsn)
			{
				nblocks = RelationGetNumberOfBlocks(index);
				rc = ship_pages(index, copyno, gen, NULL, 0, nblocks, nblocks, false,
								standby_lsn, errbuf, errlen);
				if (rc != 0)
					break;
				SpinLockAcquire(&c->mutex);
				if (c->gen == gen)
				{
					c->standby_lsn = lsn0;
					c->nblocks = nblocks;
				}
				SpinLockRelease(&c->mutex);
			}
		}
		if (n == 0)
			break;
		qsort(dirty, n, sizeof(BlockNumber), cmp_blkno);
		{
			int			m = 0;

			for (int j = 0; j < n; j++)
				if (m == 0 || dirty[m - 1] != dirty[j])
					dirty[m++] = dirty[j];
			n = m;
		}
		nblocks = RelationGetNumberOfBlocks(index);
		rc = ship_pages(index, copyno, gen, dirty, 0, n, nblocks, false,
						InvalidXLogRecPtr, errbuf, errlen);
		if (rc != 0)
			break;
		SpinLockAcquire(&c->mutex);
		if (c->gen == gen && nblocks > c->nblocks)
			c->nblocks = nblocks;
		smo_after = c->smo_count;
		SpinLockRelease(&c->mutex);

		/*
		 * Every change committed before our snapshot was in this take or
		 * an earlier one.  A page read here may be newer than the take; if
		 * a split or page deletion happened meanwhile, its other pages are
		 * only in the next take, so go round again.  Single-page changes
		 * made meanwhile leave the copy consistent: they wait for the next
		 * sync.
		 */
		if (smo_after == smo_before)
			break;
	}
	if (rc != 0)
	{
		SpinLockAcquire(&c->mutex);
		c->valid = false;
		SpinLockRelease(&c->mutex);
	}
	else
	{
		SpinLockAcquire(&c->mutex);
		c->syncs++;
		SpinLockRelease(&c->mutex);
	}
	pfree(dirty);
	return rc;
}

/*
 * The device copy of index, brought up to date for a request: *copyno and
 * *gen name it.  Returns 0, GBT_GPU_ENOCOPY when its slot went to another
 * index meanwhile (try again), or the error of shipping pages.
 */
int
gbt_gpu_copy_for_request(Relation index, int *copyno, uint64 *gen, char *errbuf, Size errlen)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	int			rc;

	*copyno = gbt_gpu_get_copy(index);
	LWLockAcquire(&sh->sync_locks[*copyno].lock, LW_EXCLUSIVE);
	if (gbt_gpu_find_copy(RelationGetRelid(index)) != *copyno)
	{
		/* taken over by another index meanwhile */
		LWLockRelease(&sh->sync_locks[*copyno].lock);
		return GBT_GPU_ENOCOPY;
	}
	SpinLockAcquire(&sh->mutex);
	sh->copies[*copyno].last_used = sh->next_seq;
	SpinLockRelease(&sh->mutex);
	rc = sync_copy(index, *copyno, gen, errbuf, errlen);
	LWLockRelease(&sh->sync_locks[*copyno].lock);
	return rc;
}

/*
 * Whether a GPU serves this server now (the service is up with a device):
 * deduplicate_items = auto turns deduplication off then (gbtree.c).
 */
bool
gbt_gpu_serving(void)
{
	return gbt_gpu_shared != NULL && gbt_gpu_shared->state == GBT_SVC_READY;
}

bool
gbt_gpu_wanted(Size nitems)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	switch (gbt_device_mode)
	{
		case GBT_DEVICE_CPU:
			return false;
		case GBT_DEVICE_GPU:
			return true;
		default:
			return sh != NULL && sh->state == GBT_SVC_READY &&
				nitems >= (Size) gbt_gpu_min_batch;
	}
}

static const char *
state_name(GbtServiceState st)
{
	switch (st)
	{
		case GBT_SVC_NOT_LOADED:
			return "not loaded";
		case GBT_SVC_STARTING:
			return "starting";
		case GBT_SVC_READY:
			return "ready";
		case GBT_SVC_NO_DEVICE:
			return "no device";
		case GBT_SVC_RESTARTING:
			return "restarting";
	}
	return "?";
}

/*
 * Under gbtree.device = gpu a failure is an error; under auto, a counted
 * fallback: a scan notes it at DEBUG1, a build (rare, and slow to redo on
 * the CPU) at LOG.
 */
bool
gbt_gpu_failed(Relation index, bool build, const char *why, uint64 *counter)
{
	gbt_gpu_count_fallback(why, counter);
	if (gbt_device_mode == GBT_DEVICE_GPU)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 build ?
				 errmsg("gbtree: the GPU cannot build index \"%s\"",
						RelationGetRelationName(index)) :
				 errmsg("gbtree: the GPU cannot serve a scan of index \"%s\"",
						RelationGetRelationName(index)),
				 errdetail("%s", why),
				 build ?
				 errhint("Set gbtree.device to 'auto' or 'cpu' to build it on the CPU.") :
				 errhint("Set gbtree.device to 'auto' or 'cpu' to run it on the CPU.")));
	if (build)
		ereport(LOG,
				(errmsg("gbtree: building index \"%s\" on the CPU: %s",
						RelationGetRelationName(index), why)));
	else
		ereport(DEBUG1,
				(errmsg_internal("gbtree: scan of \"%s\" falls back to the CPU: %s",
								 RelationGetRelationName(index), why)));
	return false;
}

/* The fallback counter a service or library result code belongs to. */
uint64 *
gbt_gpu_fallback_counter(int rc)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	if (rc == GBT_CUDA_ENOMEM)
		return &sh->fallback_memory;
	if (rc == GBT_GPU_ESERVICE)
		return &sh->fallback_service;
	return &sh->fallback_error;
}

/* Whether the service can take requests; if not, see gpu_failed. */
bool
gbt_gpu_service_usable(Relation index, bool build)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	char		why[320];

	if (sh == NULL)
		return gbt_gpu_failed(index, build,
						  "gbtree is not in shared_preload_libraries, so there is no GPU service",
						  NULL);
	if (sh->state == GBT_SVC_READY)
	{
		/*
		 * Multi-word keys: lookups only (their builds and inserts run on the
		 * CPU without asking), and only by a library that has them.
		 */
		if (gbt_index_info(index)->wide)
		{
			if (build)
				return false;
			if (!sh->can_words)
				return gbt_gpu_failed(index, false,
									  "libgbtree_cuda.so has no lookup of multi-word keys",
									  &sh->fallback_error);
		}
		return true;
	}
	SpinLockAcquire(&sh->mutex);
	snprintf(why, sizeof(why), "GPU service state \"%s\": %s",
			 state_name(sh->state), sh->detail);
	SpinLockRelease(&sh->mutex);
	return gbt_gpu_failed(index, build, why, &sh->fallback_service);
}

/* ------------------------------------------------------------------------
 * Transfers: through the staging area, or DSM
 * ------------------------------------------------------------------------
 */

/* A buffer of size bytes for one transfer: the staging area, or DSM. */
char *
gbt_gpu_transfer_buffer(Size size, dsm_segment **seg)
{
	char	   *buf = gbt_gpu_staging_acquire(size);

	*seg = NULL;
	if (buf == NULL)
	{
		*seg = dsm_create(size, 0);
		buf = dsm_segment_address(*seg);
	}
	return buf;
}

void
gbt_gpu_transfer_done(dsm_segment *seg)
{
	if (seg)
		dsm_detach(seg);
	else
		gbt_gpu_staging_release();
}

/* Entries per transfer: the staging area's worth, else 64 MB DSM segments */
Size
gbt_gpu_transfer_entries(void)
{
	return (gbt_gpu_staging_size >= 1024 * sizeof(GbtEntry) ?
			gbt_gpu_staging_size : (Size) 64 * 1024 * 1024) / sizeof(GbtEntry);
}

/* DROP INDEX: free the device copy now rather than at eviction. */
static void
gbt_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				  int subId, void *arg)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || classId != RelationRelationId || subId != 0 || sh == NULL ||
		pg_atomic_read_u32(&sh->ncopies) == 0)
		return;
	LWLockAcquire(sh->copies_lock, LW_EXCLUSIVE);
	{
		int			i = gbt_gpu_find_copy(objectId);

		if (i >= 0)
		{
			char		errbuf[64];

			LWLockAcquire(&sh->sync_locks[i].lock, LW_EXCLUSIVE);
			SpinLockAcquire(&sh->copies[i].mutex);
			sh->copies[i].inuse = false;
			sh->copies[i].valid = false;
			sh->copies[i].gen++;
			SpinLockRelease(&sh->copies[i].mutex);
			pg_atomic_fetch_sub_u32(&sh->ncopies, 1);
			LWLockRelease(&sh->sync_locks[i].lock);
			(void) gbt_gpu_submit_and_wait(GBT_OP_DROP, i, 0, NULL, false, NULL, NULL, NULL, errbuf, sizeof(errbuf));
		}
	}
	LWLockRelease(sh->copies_lock);
}

void
gbt_gpu_install_hooks(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = gbt_object_access;
}

/* ------------------------------------------------------------------------
 * gbtree_device_info()
 * ------------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(gbtree_device_info);

static void
info_row(ReturnSetInfo *rsinfo, const char *name, const char *value)
{
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(value);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static void
info_u64(ReturnSetInfo *rsinfo, const char *name, uint64 v)
{
	char		buf[32];

	snprintf(buf, sizeof(buf), UINT64_FORMAT, v);
	info_row(rsinfo, name, buf);
}

Datum
gbtree_device_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GbtGpuShared *sh = gbt_gpu_shared;
	GbtGpuShared *snapp;
	const char *mode = gbt_device_mode == GBT_DEVICE_GPU ? "gpu" :
		gbt_device_mode == GBT_DEVICE_CPU ? "cpu" : "auto";

	InitMaterializedSRF(fcinfo, 0);
	info_row(rsinfo, "gbtree.device", mode);
	if (sh == NULL)
	{
		info_row(rsinfo, "service", "not loaded");
		info_row(rsinfo, "detail", "add gbtree to shared_preload_libraries to start the GPU service");
		info_row(rsinfo, "device", "none");
		return (Datum) 0;
	}
	/* the counters and state only: the whole struct is large */
	snapp = palloc(offsetof(GbtGpuShared, ncopies));
	SpinLockAcquire(&sh->mutex);
	memcpy(snapp, sh, offsetof(GbtGpuShared, ncopies));
	SpinLockRelease(&sh->mutex);

	info_row(rsinfo, "service", state_name(snapp->state));
	info_row(rsinfo, "detail", snapp->detail);
	info_row(rsinfo, "device", snapp->device[0] ? snapp->device : "none");
	info_u64(rsinfo, "service_pid", (uint64) snapp->service_pid);
	info_u64(rsinfo, "memory_total_mb", snapp->mem_total >> 20);
	info_u64(rsinfo, "memory_used_mb", snapp->mem_used >> 20);
	info_u64(rsinfo, "gpu_min_batch", (uint64) gbt_gpu_min_batch);
	info_u64(rsinfo, "gpu_batches", snapp->batches);
	info_u64(rsinfo, "staged_batches", snapp->staged_batches);
	info_u64(rsinfo, "gpu_builds", snapp->gpu_builds);
	info_u64(rsinfo, "gpu_build_runs", snapp->gpu_build_runs);
	info_u64(rsinfo, "gpu_build_layouts", snapp->gpu_build_layouts);
	info_u64(rsinfo, "gpu_merges", snapp->gpu_merges);
	info_u64(rsinfo, "gpu_merge_entries", snapp->gpu_merge_entries);
	info_u64(rsinfo, "gpu_merge_leaves_hinted", snapp->gpu_merge_hinted);
	info_u64(rsinfo, "gpu_merge_leaves_descended", snapp->gpu_merge_descended);
	info_u64(rsinfo, "gpu_keys", snapp->keys);
	info_u64(rsinfo, "gpu_matches", snapp->matches);
	info_u64(rsinfo, "pages_shipped", snapp->pages_shipped);
	info_u64(rsinfo, "fallbacks", snapp->fallbacks);
	info_u64(rsinfo, "fallbacks_service", snapp->fallback_service);
	info_u64(rsinfo, "fallbacks_memory", snapp->fallback_memory);
	info_u64(rsinfo, "fallbacks_error", snapp->fallback_error);
	info_row(rsinfo, "last_fallback", snapp->last_fallback);
	for (int i = 0; i < GBT_GPU_MAX_COPIES; i++)
	{
		GbtGpuCopy *cp = palloc(offsetof(GbtGpuCopy, dirty));
		char		name[64];
		char		val[256];

		SpinLockAcquire(&sh->copies[i].mutex);
		memcpy(cp, &sh->copies[i], offsetof(GbtGpuCopy, dirty));
		SpinLockRelease(&sh->copies[i].mutex);
		if (!cp->inuse)
			continue;
		snprintf(name, sizeof(name), "copy %u/%u", cp->dboid, cp->indexoid);
		snprintf(val, sizeof(val),
				 "%s, %u blocks, %llu MB, %d pages changed since last sync%s, %llu syncs, %llu pages shipped",
				 cp->valid ? "on device" : "not loaded", cp->nblocks,
				 (unsigned long long) (cp->device_bytes >> 20), cp->ndirty,
				 cp->overflow ? " (overflowed: full reload)" : "",
				 (unsigned long long) cp->syncs, (unsigned long long) cp->pages_shipped);
		info_row(rsinfo, name, val);
	}
	return (Datum) 0;
}
