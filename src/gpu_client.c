/*-------------------------------------------------------------------------
 *
 * gpu_client.c
 *	  The backend side of the GPU path: GUCs, tracking of changed pages,
 *	  keeping a device copy fresh before a GPU scan, batched lookups
 *	  through the GPU service, gbtree_device_info().
 *
 * Freshness (ARCHITECTURE.md invariant 5).  Every page change records
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
#include "gbtree_cuda.h"

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
static int
find_copy(Oid indexoid)
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
	i = find_copy(indexoid);
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
	i = find_copy(RelationGetRelid(index));
	if (i < 0)
		return;
	SpinLockAcquire(&sh->copies[i].mutex);
	if (copy_is(&sh->copies[i], RelationGetRelid(index)))
		sh->copies[i].valid = false;
	SpinLockRelease(&sh->copies[i].mutex);
}

static void
count_fallback(const char *why, uint64 *counter)
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
static void
abandon_request(void)
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

static void
staging_release(void)
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
	abandon_request();
	staging_release();
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
static char *
staging_acquire(Size size)
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
static GbtGpuRequest *
submit_request(GbtGpuOp op, int copyno, uint64 gen, dsm_segment *seg, bool staged,
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
			req->pgprocno = MyProc->pgprocno;
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
static int
wait_request(GbtGpuRequest *req, uint64 *total, double *ms, char *errbuf, Size errlen)
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
							 100L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		abandon_request();
		PG_RE_THROW();
	}
	PG_END_TRY();
	return result;
}

/* Submit a request and wait for it.  Returns the service's result code. */
static int
submit_and_wait(GbtGpuOp op, int copyno, uint64 gen, dsm_segment *seg, bool staged,
				const uint64 *args, uint64 *total, double *ms, char *errbuf, Size errlen)
{
	GbtGpuRequest *req = submit_request(op, copyno, gen, seg, staged, args, errbuf, errlen);

	if (req == NULL)
		return GBT_GPU_ESERVICE;
	if (op == GBT_OP_DROP || op == GBT_OP_SORT_END)
		return 0;
	return wait_request(req, total, ms, errbuf, errlen);
}

/* The copy slot for this index, creating (or taking over) one. */
static int
get_copy(Relation index)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	Oid			indexoid = RelationGetRelid(index);
	int			i;
	int			victim = -1;
	uint64		oldest = PG_UINT64_MAX;
	bool		was_free = false;
	GbtGpuCopy *c;

	LWLockAcquire(sh->copies_lock, LW_SHARED);
	i = find_copy(indexoid);
	LWLockRelease(sh->copies_lock);
	if (i >= 0)
		return i;

	LWLockAcquire(sh->copies_lock, LW_EXCLUSIVE);
	i = find_copy(indexoid);
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
static void
copy_restart_locked(GbtGpuCopy *c, Relation index)
{
	c->gen++;
	c->relfilenode = index->rd_node.relNode;
	c->ndirty = 0;
	c->overflow = false;
	c->valid = false;
}

/*
 * A full load of generation gen is on the device with nblocks blocks: the
 * copy is valid unless another load (or a takeover) began meanwhile.
 */
static void
copy_loaded(GbtGpuCopy *c, uint64 gen, BlockNumber nblocks, XLogRecPtr standby_lsn)
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

static void
count_shipped(int copyno, uint64 shipped)
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
			if (take)
			{
				bl[k] = blk;
				memcpy(images + (Size) k * BLCKSZ, page, BLCKSZ);
				k++;
			}
			UnlockReleaseBuffer(buf);
		}
		if (k == 0 && !reset)
			break;
		hdr->npages = k;
		hdr->nblocks = nblocks;
		hdr->reset = reset;
		rc = submit_and_wait(GBT_OP_PUT_PAGES, copyno, gen, seg, false, NULL, NULL, NULL, errbuf, errlen);
		if (rc != 0)
			break;
		shipped += k;
		reset = false;
	}
	dsm_detach(seg);
	FreeAccessStrategy(strategy);
	count_shipped(copyno, shipped);
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
		if (!valid || overflow || rfn != index->rd_node.relNode)
		{
			copy_restart_locked(c, index);
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
			copy_loaded(c, gen, nblocks, lsn0);
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
static int
copy_for_request(Relation index, int *copyno, uint64 *gen, char *errbuf, Size errlen)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	int			rc;

	*copyno = get_copy(index);
	LWLockAcquire(&sh->sync_locks[*copyno].lock, LW_EXCLUSIVE);
	if (find_copy(RelationGetRelid(index)) != *copyno)
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
static bool
gpu_failed(Relation index, bool build, const char *why, uint64 *counter)
{
	count_fallback(why, counter);
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
static uint64 *
fallback_counter(int rc)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	if (rc == GBT_CUDA_ENOMEM)
		return &sh->fallback_memory;
	if (rc == GBT_GPU_ESERVICE)
		return &sh->fallback_service;
	return &sh->fallback_error;
}

/* Whether the service can take requests; if not, see gpu_failed. */
static bool
service_usable(Relation index, bool build)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	char		why[320];

	if (sh == NULL)
		return gpu_failed(index, build,
						  "gbtree is not in shared_preload_libraries, so there is no GPU service",
						  NULL);
	if (sh->state == GBT_SVC_READY)
		return true;
	SpinLockAcquire(&sh->mutex);
	snprintf(why, sizeof(why), "GPU service state \"%s\": %s",
			 state_name(sh->state), sh->detail);
	SpinLockRelease(&sh->mutex);
	return gpu_failed(index, build, why, &sh->fallback_service);
}

/*
 * Batched lookup on the GPU: all entries of the index tree rooted at root
 * that fall in any of the queries (sorted, disjoint), in index order.
 * Or, with points not NULL, the entries of nranges point keys given in any
 * order and maybe repeated, which the device sorts and deduplicates (8
 * bytes a key through the staging area instead of a 32-byte query, and no
 * sort on the CPU); the answer is the same as for their sorted distinct
 * equality ranges.  Returns false (after counting a fallback) when the GPU
 * cannot serve it and gbtree.device is auto; raises an error under
 * gbtree.device = gpu.
 */
bool
gbt_gpu_lookup(Relation index, BlockNumber root, const GbtRange *ranges, int nranges,
			   const uint64 *points, GbtEntry **entries, uint64 *nentries)
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
	GbtEntry   *volatile out = NULL;
	instr_time	t0,
				t1,
				t2,
				t3,
				t4;

	if (!service_usable(index, false))
		return false;
	if (index->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		return gpu_failed(index, false, "temporary indexes live in backend-local buffers",
						  &sh->fallback_error);

	timed = message_level_is_interesting(DEBUG1);
	if (timed)
		INSTR_TIME_SET_CURRENT(t0);
	for (attempt = 0; attempt < 3; attempt++)
	{
		rc = copy_for_request(index, &copyno, &gen, errbuf, sizeof(errbuf));
		if (rc != 0)
		{
			if (rc == GBT_GPU_ENOCOPY)
				continue;
			return gpu_failed(index, false, errbuf[0] ? errbuf : "shipping pages to the device failed",
							  fallback_counter(rc));
		}

		if (timed)
			INSTR_TIME_SET_CURRENT(t1);

		/* the lookup itself; once more with room for every match if needed */
		capacity = (uint64) nranges + 1024;
		for (;;)
		{
			Size		hdrsz = MAXALIGN(sizeof(GbtGpuLookupPayload));
			Size		qsz = MAXALIGN(sizeof(GbtGpuQuery) * nranges);
			Size		osz = MAXALIGN(sizeof(uint64) * ((Size) nranges + 1));
			Size		size = hdrsz + qsz + osz + capacity * 2 * sizeof(uint64);
			dsm_segment *seg = NULL;
			char	   *base;
			GbtGpuLookupPayload *hdr;
			GbtGpuQuery *q;

			base = staging_acquire(size);
			if (base == NULL)
			{
				seg = dsm_create(size, 0);
				base = dsm_segment_address(seg);
			}
			hdr = (GbtGpuLookupPayload *) base;
			hdr->nqueries = nranges;
			hdr->root = root;
			hdr->sorted = points ? GBT_GPU_LOOKUP_POINTS : 1;
			hdr->capacity = capacity;
			q = (GbtGpuQuery *) (base + hdrsz);
			if (points)
				memcpy(q, points, sizeof(uint64) * nranges);
			else
				for (int r = 0; r < nranges; r++)
				{
					q[r].lo_key = ranges[r].lo;
					q[r].lo_tid = 0;
					q[r].hi_key = ranges[r].hi;
					q[r].hi_tid = PG_UINT64_MAX;	/* no real TID packs to it */
				}
			if (timed)
				INSTR_TIME_SET_CURRENT(t2);
			PG_TRY();
			{
				rc = submit_and_wait(GBT_OP_LOOKUP, copyno, gen, seg, seg == NULL,
									 NULL, &total, NULL, errbuf, sizeof(errbuf));
				if (timed)
					INSTR_TIME_SET_CURRENT(t3);
				if (rc == GBT_GPU_OK)
				{
					uint64	   *keys = (uint64 *) (base + hdrsz + qsz + osz);
					uint64	   *tids = keys + capacity;

					out = MemoryContextAllocHuge(CurrentMemoryContext,
												 sizeof(GbtEntry) * Max(total, 1));
					gbt_advise_huge(out, sizeof(GbtEntry) * Max(total, 1));
					for (uint64 j = 0; j < total; j++)
					{
						out[j].key = keys[j];
						out[j].tid = tids[j];
					}
				}
			}
			PG_CATCH();
			{
				staging_release();
				PG_RE_THROW();
			}
			PG_END_TRY();
			if (seg)
				dsm_detach(seg);
			else
				staging_release();
			if (rc == GBT_GPU_OK)
			{
				*entries = out;
				*nentries = total;
				if (timed)
				{
					INSTR_TIME_SET_CURRENT(t4);
					INSTR_TIME_SUBTRACT(t4, t3);
					INSTR_TIME_SUBTRACT(t3, t2);
					INSTR_TIME_SUBTRACT(t2, t1);
					INSTR_TIME_SUBTRACT(t1, t0);
					elog(DEBUG1, "gbtree GPU batch on \"%s\": %d queries, " UINT64_FORMAT " matches, %s; sync %.3f ms, request %.3f ms, service %.3f ms, results %.3f ms",
						 RelationGetRelationName(index), nranges, total,
						 seg ? "through DSM" : "staged",
						 INSTR_TIME_GET_MILLISEC(t1), INSTR_TIME_GET_MILLISEC(t2),
						 INSTR_TIME_GET_MILLISEC(t3), INSTR_TIME_GET_MILLISEC(t4));
				}
				SpinLockAcquire(&sh->mutex);
				sh->batches++;
				sh->keys += nranges;
				sh->matches += total;
				SpinLockRelease(&sh->mutex);
				return true;
			}
			if (rc == GBT_GPU_ESPACE && total > capacity)
			{
				capacity = total;
				continue;
			}
			break;
		}
		if (rc == GBT_GPU_ENOCOPY)
			continue;			/* evicted between sync and lookup: again */
		return gpu_failed(index, false, errbuf[0] ? errbuf : "the GPU lookup failed",
						  fallback_counter(rc));
	}
	return gpu_failed(index, false, "the device copy kept being replaced", &sh->fallback_error);
}

/* ------------------------------------------------------------------------
 * CREATE INDEX on the GPU
 * ------------------------------------------------------------------------
 */

/* A buffer of size bytes for one transfer: the staging area, or DSM. */
static char *
transfer_buffer(Size size, dsm_segment **seg)
{
	char	   *buf = staging_acquire(size);

	*seg = NULL;
	if (buf == NULL)
	{
		*seg = dsm_create(size, 0);
		buf = dsm_segment_address(*seg);
	}
	return buf;
}

static void
transfer_done(dsm_segment *seg)
{
	if (seg)
		dsm_detach(seg);
	else
		staging_release();
}

static void
sort_end(uint64 slot)
{
	uint64		args[3] = {slot, 0, 0};
	char		errbuf[64];

	(void) submit_and_wait(GBT_OP_SORT_END, -1, 0, NULL, false, args, NULL, NULL,
						   errbuf, sizeof(errbuf));
}

/* Entries per transfer: the staging area's worth, else 64 MB DSM segments */
static Size
transfer_entries(void)
{
	return (gbt_gpu_staging_size >= 1024 * sizeof(GbtEntry) ?
			gbt_gpu_staging_size : (Size) 64 * 1024 * 1024) / sizeof(GbtEntry);
}

/* A device sort with room for n entries (it grows): its slot in *slot. */
static int
sort_begin(Size n, uint64 *slot, char *errbuf, Size errlen)
{
	uint64		args[3] = {n, 0, 0};
	int			rc;

	*slot = 0;
	rc = submit_and_wait(GBT_OP_SORT_BEGIN, -1, 0, NULL, false, args, slot, NULL,
						 errbuf, errlen);
	if (rc != 0 && errbuf[0] == '\0')
		strlcpy(errbuf, "the GPU service could not start the sort", errlen);
	return rc;
}

/* Entries [offset, offset + n) of sort slot, n at most transfer_entries() */
static int
sort_put(uint64 slot, uint64 offset, const GbtEntry *entries, Size n, char *errbuf, Size errlen)
{
	uint64		args[3] = {slot, offset, n};
	dsm_segment *seg;
	char	   *buf = transfer_buffer(n * sizeof(GbtEntry), &seg);
	int			rc;

	memcpy(buf, entries, n * sizeof(GbtEntry));
	PG_TRY();
	{
		rc = submit_and_wait(GBT_OP_SORT_PUT, -1, 0, seg, seg == NULL, args, NULL, NULL,
							 errbuf, errlen);
	}
	PG_CATCH();
	{
		transfer_done(seg);
		PG_RE_THROW();
	}
	PG_END_TRY();
	transfer_done(seg);
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
	rc = submit_and_wait(GBT_OP_SORT_RUN, -1, 0, NULL, false, args, total, &sort_ms,
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
static int
sort_start(const GbtEntry *in, Size n, bool tid_sorted, GbtGpuSortTimes *times,
		   uint64 *slot, char *errbuf, Size errlen)
{
	Size		chunk = transfer_entries();
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
		sort_end(*slot);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (rc != 0)
		sort_end(*slot);
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
	uint64		args[3];
	uint64		slot;
	int			rc;
	Size		chunk = transfer_entries();
	instr_time	t0,
				t1;

	rc = sort_start(in, n, tid_sorted, times, &slot, errbuf, errlen);
	if (rc != 0)
		return rc;
	PG_TRY();
	{
		INSTR_TIME_SET_CURRENT(t0);
		for (Size off = 0; off < n && rc == 0; off += chunk)
		{
			Size		cnt = Min(chunk, n - off);
			dsm_segment *seg;
			char	   *buf = transfer_buffer(cnt * sizeof(GbtEntry), &seg);

			args[0] = slot;
			args[1] = off;
			args[2] = cnt;
			rc = submit_and_wait(GBT_OP_SORT_GET, -1, 0, seg, seg == NULL, args, NULL, NULL,
								 errbuf, errlen);
			if (rc == 0)
				memcpy(out + off, buf, cnt * sizeof(GbtEntry));
			transfer_done(seg);
			CHECK_FOR_INTERRUPTS();
		}
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		times->from_device_ms += INSTR_TIME_GET_MILLISEC(t1);
	}
	PG_CATCH();
	{
		staging_release();
		sort_end(slot);
		PG_RE_THROW();
	}
	PG_END_TRY();
	sort_end(slot);
	return rc;
}

/*
 * Entries one GPU sort may take: gbtree.gpu_sort_run, else a quarter of
 * the device memory the service may use (a sort holds the entries twice
 * plus the radix sort's scratch, and index copies share the device).
 */
static Size
sort_run_entries(void)
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
	if (!service_usable(index, true))
		return false;
	if (gbt_gpu_inject_fault == 1)
		return gpu_failed(index, true, "injected device error (gbtree.gpu_inject_fault)",
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
	run = sort_run_entries();
	times->run_entries = run;
	for (Size off = 0; off < n && rc == 0; off += run)
	{
		rc = sort_one_run(in + off, out + off, Min(run, n - off), tid_sorted,
						  times, errbuf, sizeof(errbuf));
		times->nruns++;
	}
	if (rc != 0)
		return gpu_failed(index, true, errbuf[0] ? errbuf : "the GPU sort failed",
						  fallback_counter(rc));
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
		n <= sort_run_entries();
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
	rc = sort_start(in, n, tid_sorted, times, &slot, errbuf, sizeof(errbuf));
	if (rc != 0)
	{
		(void) gpu_failed(index, true, errbuf[0] ? errbuf : "the GPU sort failed",
						  fallback_counter(rc));
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
		(void) gpu_failed(index, true, errbuf, fallback_counter(rc));
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
		return gpu_failed(index, true, errbuf[0] ? errbuf : "the GPU sort failed",
						  fallback_counter(rc));
	return true;
}

/* A streamed build gave up: count it as gpu_failed does (ERROR under gpu) */
void
gbt_gpu_stream_failed(Relation index, const char *why)
{
	(void) gpu_failed(index, true, why, &gbt_gpu_shared->fallback_error);
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
	buf = transfer_buffer(GBT_GPU_PLAN_SPACE + (Size) count * BLCKSZ, &seg);
	memcpy(buf, plan, sizeof(GbtCudaTreePlan));
	args[0] = slot;
	args[1] = first;
	args[2] = count;
	PG_TRY();
	{
		rc = submit_and_wait(GBT_OP_SORT_LAYOUT, -1, 0, seg, seg == NULL, args, NULL, NULL,
							 errbuf, sizeof(errbuf));
		if (rc == 0)
			memcpy(pages, buf + GBT_GPU_PLAN_SPACE, (Size) count * BLCKSZ);
	}
	PG_CATCH();
	{
		transfer_done(seg);
		PG_RE_THROW();
	}
	PG_END_TRY();
	transfer_done(seg);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	*ms += INSTR_TIME_GET_MILLISEC(t1);
	if (rc != 0)
		return gpu_failed(index, true, errbuf[0] ? errbuf : "the GPU could not lay out the pages",
						  fallback_counter(rc));
	return true;
}

/* After an error: free the device's entries, no questions asked */
void
gbt_gpu_sort_abort(int slot)
{
	sort_end(slot);
}

void
gbt_gpu_sort_release(int slot, bool laid_out)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	sort_end(slot);
	SpinLockAcquire(&sh->mutex);
	sh->gpu_builds++;
	sh->gpu_build_runs++;
	if (laid_out)
		sh->gpu_build_layouts++;
	SpinLockRelease(&sh->mutex);
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
	return gbt_gpu_merge_min > 0 && n >= Max(min, 1) && n <= sort_run_entries();
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
	i = find_copy(RelationGetRelid(index));
	LWLockRelease(sh->copies_lock);
	if (i >= 0)
	{
		GbtGpuCopy *c = &sh->copies[i];
		bool		usable;

		SpinLockAcquire(&c->mutex);
		usable = c->valid && c->relfilenode == index->rd_node.relNode;
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
		rc = copy_for_request(index, copyno, gen, errbuf, errlen);
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
	Size		chunk = transfer_entries();
	uint64		slot;
	int			copyno;
	uint64		gen;
	int			rc;

	errbuf[0] = '\0';
	rc = merge_copy(index, &copyno, &gen, errbuf, sizeof(errbuf));
	if (rc == 0)
		rc = sort_start(in, n, false, &times, &slot, errbuf, sizeof(errbuf));
	if (rc == 0)
	{
		PG_TRY();
		{
			for (Size off = 0; off < n && rc == 0; off += chunk)
			{
				Size		cnt = Min(chunk, n - off);
				Size		hdrsz = MAXALIGN(sizeof(GbtGpuLeavesPayload));
				dsm_segment *seg;
				char	   *buf = transfer_buffer(hdrsz + cnt * (sizeof(GbtEntry) + sizeof(uint32)),
												  &seg);
				uint64		args[3] = {slot, off, cnt};

				((GbtGpuLeavesPayload *) buf)->root = root;
				rc = submit_and_wait(GBT_OP_SORT_LEAVES, copyno, gen, seg, seg == NULL, args,
									 NULL, NULL, errbuf, sizeof(errbuf));
				if (rc == 0)
				{
					const uint32 *found = (const uint32 *) (buf + hdrsz + cnt * sizeof(GbtEntry));

					memcpy(out + off, buf + hdrsz, cnt * sizeof(GbtEntry));
					for (Size j = 0; j < cnt; j++)
						leaves[off + j] = found[j] == GBT_NO_BLOCK ? InvalidBlockNumber : found[j];
				}
				transfer_done(seg);
				CHECK_FOR_INTERRUPTS();
			}
		}
		PG_CATCH();
		{
			staging_release();
			sort_end(slot);
			PG_RE_THROW();
		}
		PG_END_TRY();
		sort_end(slot);
	}
	if (rc != 0)
	{
		const char *why = errbuf[0] ? errbuf : "the GPU could not sort the batch";

		count_fallback(why, fallback_counter(rc));
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
	rc = wait_request(ld->inflight, NULL, NULL, ld->errbuf, sizeof(ld->errbuf));
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
	ld->inflight = submit_request(GBT_OP_PUT_PAGES, ld->copyno, ld->gen, ld->seg[ld->cur],
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
	ld->copyno = get_copy(index);
	c = &sh->copies[ld->copyno];
	LWLockAcquire(&sh->sync_locks[ld->copyno].lock, LW_EXCLUSIVE);
	if (find_copy(RelationGetRelid(index)) != ld->copyno)
	{
		LWLockRelease(&sh->sync_locks[ld->copyno].lock);
		pfree(ld);
		return NULL;
	}
	SpinLockAcquire(&c->mutex);
	copy_restart_locked(c, index);
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
		copy_loaded(&sh->copies[ld->copyno], ld->gen, nblocks, InvalidXLogRecPtr);
		LWLockRelease(&sh->sync_locks[ld->copyno].lock);
		count_shipped(ld->copyno, ld->shipped);
	}
	gbt_gpu_load_abort(ld);
}

/* Stop loading (also on error): give up a shipment in flight. */
void
gbt_gpu_load_abort(GbtGpuPageLoad *ld)
{
	if (ld->inflight)
	{
		abandon_request();
		ld->inflight = NULL;
	}
	for (int b = 0; b < 2; b++)
		if (ld->seg[b])
			dsm_detach(ld->seg[b]);
	ld->seg[0] = ld->seg[1] = NULL;
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
		int			i = find_copy(objectId);

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
			(void) submit_and_wait(GBT_OP_DROP, i, 0, NULL, false, NULL, NULL, NULL, errbuf, sizeof(errbuf));
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
