/*-------------------------------------------------------------------------
 *
 * gpu_service.c
 *	  The GPU service: a background worker that owns the CUDA context and
 *	  the device copies of gbtree indexes, and serves backends' requests
 *	  (page shipments, batched lookups) through shared memory.
 *
 * It exists only when gbtree is in shared_preload_libraries.  The
 * postmaster never touches CUDA: the worker dlopens libgbtree_cuda.so
 * (built separately, see cuda/) and probes the device itself.  No
 * library, no driver or no device: the worker records why and exits
 * for good, and every scan runs on the CPU.  Any other exit (an error,
 * pg_terminate_backend) makes the postmaster start it again after a few
 * seconds; requests in flight then fail and their scans fall back to
 * the CPU, and every device copy is reloaded on next use.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dlfcn.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "tcop/tcopprot.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "gbtree_gpu.h"
#include "gbtree_cuda.h"

GbtGpuShared *gbt_gpu_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * The CUDA library's entry points, resolved with dlsym in the service; each
 * typed by the header's function type, so that the compiler checks them
 */
typedef struct GbtCudaApi
{
	GbtCudaAbiVersionFn *abi_version;
	GbtCudaProbeFn *probe;
	GbtCudaInitFn *init;
	GbtCudaCopyCreateFn *copy_create;
	GbtCudaCopyPutPagesFn *copy_put_pages;
	GbtCudaCopyDeviceBytesFn *copy_device_bytes;
	GbtCudaCopyFreeFn *copy_free;
	GbtCudaLookupFn *lookup;
	GbtCudaLookupWordsFn *lookup_words;	/* optional */
	GbtCudaLastErrorFn *last_error;
	/* the build's sort: optional (NULL: builds stay on the CPU) */
	GbtCudaSortCreateFn *sort_create;
	GbtCudaSortPutFn *sort_put;
	GbtCudaSortRunFn *sort_run;
	GbtCudaSortGetFn *sort_get;
	GbtCudaSortLastMsFn *sort_last_ms;
	GbtCudaSortFreeFn *sort_free;
	/* the build's page layout: optional (NULL: the CPU lays pages out) */
	GbtCudaSortLayoutFn *sort_layout;
	GbtCudaSortCountFn *sort_count;
	/* batched inserts' leaves: optional (NULL: batches merge on the CPU) */
	GbtCudaSortLeavesFn *sort_leaves;
	GbtCudaHostRegisterFn *host_register;
} GbtCudaApi;

static GbtCudaApi cuda;
static uint32 wait_service_main = 0;	/* wait event: the service waits for work */

/* service-local: the device copy behind each shared copy slot */
static GbtCudaCopy *dev_copy[GBT_GPU_MAX_COPIES];
static uint64 dev_gen[GBT_GPU_MAX_COPIES];

/* service-local: index builds' device sorts, and who started each */
static GbtCudaSort *dev_sort[GBT_GPU_MAX_SORTS];
static int	sort_owner_procno[GBT_GPU_MAX_SORTS];
static int	sort_owner_pid[GBT_GPU_MAX_SORTS];

/* ------------------------------------------------------------------------
 * Shared memory and registration (postmaster, at preload)
 * ------------------------------------------------------------------------
 */

static Size
gpu_shmem_size(void)
{
	return MAXALIGN(sizeof(GbtGpuShared));
}

static Size
gpu_staging_size(void)
{
	return (Size) gbt_gpu_staging_mb * 1024 * 1024;
}

static void
gpu_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(gpu_shmem_size());
	if (gpu_staging_size() > 0)
		RequestAddinShmemSpace(gpu_staging_size());
	RequestNamedLWLockTranche("gbtree_gpu", 1 + GBT_GPU_MAX_COPIES);
}

static void
gpu_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gbt_gpu_shared = ShmemInitStruct("gbtree gpu service", gpu_shmem_size(), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche("gbtree_gpu");

		memset(gbt_gpu_shared, 0, gpu_shmem_size());
		gbt_gpu_shared->copies_lock = &locks[0].lock;
		for (int i = 0; i < GBT_GPU_MAX_COPIES; i++)
		{
			SpinLockInit(&gbt_gpu_shared->copies[i].mutex);
			gbt_gpu_shared->sync_locks[i] = locks[1 + i];
		}
		SpinLockInit(&gbt_gpu_shared->mutex);
		pg_atomic_init_u32(&gbt_gpu_shared->ncopies, 0);
		gbt_gpu_shared->state = GBT_SVC_STARTING;
		gbt_gpu_shared->service_pgprocno = -1;
		strlcpy(gbt_gpu_shared->detail, "the GPU service has not started yet",
				sizeof(gbt_gpu_shared->detail));
	}
	if (gpu_staging_size() > 0)
	{
		gbt_gpu_staging = ShmemInitStruct("gbtree gpu staging", gpu_staging_size(), &found);
		gbt_gpu_staging_size = gpu_staging_size();
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init when loaded by shared_preload_libraries. */
void
gbt_gpu_register(void)
{
	BackgroundWorker worker;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = gpu_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = gpu_shmem_startup;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 5;
	strlcpy(worker.bgw_library_name, "gbtree", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "gbt_gpu_service_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "gbtree gpu service", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "gbtree gpu service", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* ------------------------------------------------------------------------
 * The service process
 * ------------------------------------------------------------------------
 */

static void
set_state(GbtServiceState st, const char *detail)
{
	SpinLockAcquire(&gbt_gpu_shared->mutex);
	gbt_gpu_shared->state = st;
	if (detail)
		strlcpy(gbt_gpu_shared->detail, detail, sizeof(gbt_gpu_shared->detail));
	SpinLockRelease(&gbt_gpu_shared->mutex);
}

static void
wake(int pgprocno)
{
	if (pgprocno >= 0)
		SetLatch(&ProcGlobal->allProcs[pgprocno].procLatch);
}

/*
 * On any exit: the device copies die with the CUDA context, so mark them
 * invalid; fail the requests in flight so their backends fall back now
 * rather than wait.
 */
static void
service_exit(int code, Datum arg)
{
	GbtGpuShared *sh = gbt_gpu_shared;

	for (int i = 0; i < GBT_GPU_MAX_COPIES; i++)
	{
		SpinLockAcquire(&sh->copies[i].mutex);
		sh->copies[i].valid = false;
		sh->copies[i].device_bytes = 0;
		SpinLockRelease(&sh->copies[i].mutex);
	}
	SpinLockAcquire(&sh->mutex);
	if (sh->state == GBT_SVC_READY || sh->state == GBT_SVC_STARTING)
	{
		sh->state = GBT_SVC_RESTARTING;
		strlcpy(sh->detail, "the GPU service exited; the postmaster restarts it",
				sizeof(sh->detail));
	}
	sh->service_pgprocno = -1;
	sh->service_pid = 0;
	sh->mem_used = 0;
	for (int i = 0; i < GBT_GPU_MAX_REQUESTS; i++)
	{
		GbtGpuRequest *r = &sh->requests[i];

		if (r->state == GBT_REQ_PENDING || r->state == GBT_REQ_RUNNING)
		{
			r->result = GBT_GPU_ESERVICE;
			strlcpy(r->errmsg, "the GPU service exited", sizeof(r->errmsg));
			if (r->abandoned && r->staged)
				sh->staging_busy = false;
			r->state = r->abandoned ? GBT_REQ_FREE : GBT_REQ_DONE;
			wake(r->pgprocno);
		}
	}
	SpinLockRelease(&sh->mutex);
}

static void *
resolve(void *lib, const char *name)
{
	void	   *p = dlsym(lib, name);

	if (p == NULL)
	{
		char		msg[256];

		snprintf(msg, sizeof(msg), "libgbtree_cuda.so lacks %s", name);
		set_state(GBT_SVC_NO_DEVICE, msg);
		ereport(LOG, (errmsg("gbtree gpu service: %s; running on the CPU only", msg)));
		proc_exit(0);
	}
	return p;
}

/* Load the CUDA side and take the device, or exit for good. */
static void
service_open_device(void)
{
	char		path[MAXPGPATH];
	char		desc[128];
	char		err[256];
	uint64_t	mem_total = 0;
	void	   *lib;

	if (gbt_device_library && gbt_device_library[0])
		strlcpy(path, gbt_device_library, sizeof(path));
	else
		snprintf(path, sizeof(path), "%s/libgbtree_cuda.so", pkglib_path);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL)
	{
		snprintf(err, sizeof(err), "cannot load %s: %s", path, dlerror());
		set_state(GBT_SVC_NO_DEVICE, err);
		ereport(LOG, (errmsg("gbtree gpu service: %s; running on the CPU only", err)));
		proc_exit(0);
	}
	cuda.abi_version = resolve(lib, "gbt_cuda_abi_version");
	if (cuda.abi_version() != GBT_CUDA_ABI_VERSION)
	{
		snprintf(err, sizeof(err), "libgbtree_cuda.so has ABI %d, gbtree.so expects %d",
				 cuda.abi_version(), GBT_CUDA_ABI_VERSION);
		set_state(GBT_SVC_NO_DEVICE, err);
		ereport(LOG, (errmsg("gbtree gpu service: %s; running on the CPU only", err)));
		proc_exit(0);
	}
	cuda.probe = resolve(lib, "gbt_cuda_probe");
	cuda.init = resolve(lib, "gbt_cuda_init");
	cuda.copy_create = resolve(lib, "gbt_cuda_copy_create");
	cuda.copy_put_pages = resolve(lib, "gbt_cuda_copy_put_pages");
	cuda.copy_device_bytes = resolve(lib, "gbt_cuda_copy_device_bytes");
	cuda.copy_free = resolve(lib, "gbt_cuda_copy_free");
	cuda.lookup = resolve(lib, "gbt_cuda_lookup");
	cuda.lookup_words = dlsym(lib, "gbt_cuda_lookup_words");
	cuda.last_error = resolve(lib, "gbt_cuda_last_error");
	cuda.sort_create = dlsym(lib, "gbt_cuda_sort_create");
	cuda.sort_put = dlsym(lib, "gbt_cuda_sort_put");
	cuda.sort_run = dlsym(lib, "gbt_cuda_sort_run");
	cuda.sort_get = dlsym(lib, "gbt_cuda_sort_get");
	cuda.sort_last_ms = dlsym(lib, "gbt_cuda_sort_last_ms");
	cuda.sort_free = dlsym(lib, "gbt_cuda_sort_free");
	cuda.sort_layout = dlsym(lib, "gbt_cuda_sort_layout");
	cuda.sort_count = dlsym(lib, "gbt_cuda_sort_count");
	cuda.sort_leaves = dlsym(lib, "gbt_cuda_sort_leaves");
	if (cuda.sort_count == NULL)
		cuda.sort_layout = NULL;
	cuda.host_register = resolve(lib, "gbt_cuda_host_register");
	if (!cuda.sort_create || !cuda.sort_put || !cuda.sort_run || !cuda.sort_get ||
		!cuda.sort_last_ms || !cuda.sort_free)
		cuda.sort_create = NULL;
	if (cuda.sort_create == NULL)
	{
		cuda.sort_layout = NULL;
		cuda.sort_leaves = NULL;
	}

	if (cuda.probe(desc, sizeof(desc), &mem_total) != 0)
	{
		set_state(GBT_SVC_NO_DEVICE, "no CUDA device or driver found");
		ereport(LOG, (errmsg("gbtree gpu service: no CUDA device or driver; running on the CPU only")));
		proc_exit(0);
	}
	if (cuda.init(0, err, sizeof(err)) != 0)
	{
		set_state(GBT_SVC_NO_DEVICE, err);
		ereport(LOG, (errmsg("gbtree gpu service: cannot initialize the device: %s", err)));
		proc_exit(0);
	}
	/* pinned, the staging area moves batches at full DMA speed */
	if (gbt_gpu_staging != NULL &&
		cuda.host_register(gbt_gpu_staging, gbt_gpu_staging_size) != 0)
		ereport(LOG,
				(errmsg("gbtree gpu service: the staging area stays unpinned: %s",
						cuda.last_error())));
	SpinLockAcquire(&gbt_gpu_shared->mutex);
	strlcpy(gbt_gpu_shared->device, desc, sizeof(gbt_gpu_shared->device));
	gbt_gpu_shared->mem_total = mem_total;
	SpinLockRelease(&gbt_gpu_shared->mutex);
	ereport(LOG, (errmsg("gbtree gpu service: using %s, %llu MB", desc,
						 (unsigned long long) (mem_total >> 20))));
}

static uint64
memory_limit(void)
{
	uint64		total = gbt_gpu_shared->mem_total;

	if (gbt_gpu_memory_limit_mb > 0)
		return Min((uint64) gbt_gpu_memory_limit_mb << 20, total);
	return total / 10 * 9;		/* leave room for the kernels' buffers */
}

static void
free_copy(int copyno)
{
	GbtGpuCopy *c = &gbt_gpu_shared->copies[copyno];

	if (dev_copy[copyno])
		cuda.copy_free(dev_copy[copyno]);
	dev_copy[copyno] = NULL;
	dev_gen[copyno] = 0;
	SpinLockAcquire(&c->mutex);
	c->valid = false;
	c->device_bytes = 0;
	c->nblocks = 0;
	SpinLockRelease(&c->mutex);
}

static uint64
used_bytes(void)
{
	uint64		sum = 0;

	for (int i = 0; i < GBT_GPU_MAX_COPIES; i++)
		if (dev_copy[i])
			sum += cuda.copy_device_bytes(dev_copy[i]);
	return sum;
}

/*
 * Keep the device copies under gbtree.gpu_memory_limit: drop whole copies,
 * least recently used first, never the one being served.  Returns false
 * if even that one alone does not fit.
 */
static bool
enforce_memory_limit(int keep)
{
	uint64		limit = memory_limit();

	for (;;)
	{
		uint64		used = used_bytes();
		int			victim = -1;
		uint64		oldest = PG_UINT64_MAX;

		SpinLockAcquire(&gbt_gpu_shared->mutex);
		gbt_gpu_shared->mem_used = used;
		SpinLockRelease(&gbt_gpu_shared->mutex);
		if (used <= limit)
			return true;
		for (int i = 0; i < GBT_GPU_MAX_COPIES; i++)
		{
			uint64		lu;

			if (i == keep || dev_copy[i] == NULL)
				continue;
			SpinLockAcquire(&gbt_gpu_shared->copies[i].mutex);
			lu = gbt_gpu_shared->copies[i].last_used;
			SpinLockRelease(&gbt_gpu_shared->copies[i].mutex);
			if (lu < oldest)
			{
				oldest = lu;
				victim = i;
			}
		}
		if (victim < 0)
			return false;
		elog(DEBUG1, "gbtree gpu service: evicting the device copy of index %u",
			 gbt_gpu_shared->copies[victim].indexoid);
		free_copy(victim);
	}
}

static int
serve_put(GbtGpuRequest *req, char *payload)
{
	GbtGpuPutPayload *hdr = (GbtGpuPutPayload *) payload;
	BlockNumber *blknos = (BlockNumber *) (payload + MAXALIGN(sizeof(GbtGpuPutPayload)));
	char	   *images = payload + MAXALIGN(sizeof(GbtGpuPutPayload)) +
		TYPEALIGN(BLCKSZ, sizeof(BlockNumber) * hdr->npages);
	int			copyno = req->copyno;
	int			rc;

	if (hdr->reset || dev_copy[copyno] == NULL || dev_gen[copyno] != req->gen)
	{
		if (!hdr->reset)
			return GBT_GPU_ENOCOPY;
		free_copy(copyno);
		/* make room first, so the new copy can have it */
		if ((uint64) hdr->nblocks * BLCKSZ > memory_limit())
		{
			strlcpy(req->errmsg, "the index is larger than gbtree.gpu_memory_limit",
					sizeof(req->errmsg));
			return GBT_CUDA_ENOMEM;
		}
		rc = cuda.copy_create(&dev_copy[copyno], hdr->nblocks);
		if (rc != 0)
		{
			dev_copy[copyno] = NULL;
			strlcpy(req->errmsg, cuda.last_error(), sizeof(req->errmsg));
			return rc;
		}
		dev_gen[copyno] = req->gen;
	}
	rc = cuda.copy_put_pages(dev_copy[copyno], blknos, images, hdr->npages);
	if (rc != 0)
	{
		strlcpy(req->errmsg, cuda.last_error(), sizeof(req->errmsg));
		free_copy(copyno);
		return rc;
	}
	if (!enforce_memory_limit(copyno))
	{
		free_copy(copyno);
		strlcpy(req->errmsg, "the index does not fit in gbtree.gpu_memory_limit",
				sizeof(req->errmsg));
		return GBT_CUDA_ENOMEM;
	}
	SpinLockAcquire(&gbt_gpu_shared->copies[copyno].mutex);
	gbt_gpu_shared->copies[copyno].device_bytes = cuda.copy_device_bytes(dev_copy[copyno]);
	SpinLockRelease(&gbt_gpu_shared->copies[copyno].mutex);
	return 0;
}

static int
serve_lookup(GbtGpuRequest *req, char *payload)
{
	GbtGpuLookupPayload *hdr = (GbtGpuLookupPayload *) payload;
	char	   *p = payload + MAXALIGN(sizeof(GbtGpuLookupPayload));
	GbtCudaQuery *queries = (GbtCudaQuery *) p;
	uint64	   *offsets,
			   *keys,
			   *tids;
	uint64_t	total = 0;
	int			rc;

	if (dev_copy[req->copyno] == NULL || dev_gen[req->copyno] != req->gen)
		return GBT_GPU_ENOCOPY;
	if (req->inject_fault == 1)
	{
		strlcpy(req->errmsg, "injected device error (gbtree.gpu_inject_fault)", sizeof(req->errmsg));
		return GBT_CUDA_EDEVICE;
	}
	if (hdr->nwords > 0)
	{
		/* multi-word keys: queries of 2 x nwords words, nwords a match */
		Size		nw = hdr->nwords;

		if (cuda.lookup_words == NULL)
		{
			strlcpy(req->errmsg, "libgbtree_cuda.so has no multi-word lookup",
					sizeof(req->errmsg));
			return GBT_CUDA_EINVAL;
		}
		p += MAXALIGN(sizeof(uint64) * 2 * nw * hdr->nqueries);
		offsets = (uint64 *) p;
		p += MAXALIGN(sizeof(uint64) * ((Size) hdr->nqueries + 1));
		keys = (uint64 *) p;
		tids = keys + hdr->capacity * nw;
		rc = cuda.lookup_words(dev_copy[req->copyno], hdr->root, hdr->nwords,
							   (const uint64 *) queries, hdr->nqueries, offsets, keys, tids,
							   hdr->capacity, &total);
	}
	else
	{
		p += MAXALIGN(sizeof(GbtCudaQuery) * hdr->nqueries);
		offsets = (uint64 *) p;
		p += MAXALIGN(sizeof(uint64) * ((Size) hdr->nqueries + 1));
		keys = (uint64 *) p;
		tids = keys + hdr->capacity;
		rc = cuda.lookup(dev_copy[req->copyno], hdr->root, queries, hdr->nqueries,
						 hdr->sorted, offsets, keys, tids, hdr->capacity, &total);
	}
	req->total = total;
	if (rc < 0)
		strlcpy(req->errmsg, cuda.last_error(), sizeof(req->errmsg));
	return rc;
}

/*
 * Index builds' sorts.  A sort belongs to the backend that began it; one
 * whose backend is gone (it died without ending it) is freed when a new
 * build needs its slot.
 */
static bool
sort_owner_alive(int i)
{
	PGPROC	   *proc = &ProcGlobal->allProcs[sort_owner_procno[i]];

	return proc->pid == sort_owner_pid[i];
}

static int
serve_sort(GbtGpuRequest *req, char *payload)
{
	int			i = (int) req->arg[0];
	int			rc;

	if (cuda.sort_create == NULL)
	{
		strlcpy(req->errmsg, "libgbtree_cuda.so has no device sort", sizeof(req->errmsg));
		return GBT_CUDA_EINVAL;
	}
	if (req->op == GBT_OP_SORT_BEGIN)
	{
		int			slot = -1;

		for (int j = 0; j < GBT_GPU_MAX_SORTS && slot < 0; j++)
			if (dev_sort[j] == NULL)
				slot = j;
		for (int j = 0; j < GBT_GPU_MAX_SORTS && slot < 0; j++)
			if (!sort_owner_alive(j))
			{
				cuda.sort_free(dev_sort[j]);
				dev_sort[j] = NULL;
				slot = j;
			}
		if (slot < 0)
		{
			strlcpy(req->errmsg, "too many GPU index builds at once", sizeof(req->errmsg));
			return GBT_CUDA_ENOMEM;
		}
		rc = cuda.sort_create(req->arg[0], &dev_sort[slot]);
		if (rc != 0)
		{
			strlcpy(req->errmsg, cuda.last_error(), sizeof(req->errmsg));
			dev_sort[slot] = NULL;
			return rc;
		}
		sort_owner_procno[slot] = req->pgprocno;
		sort_owner_pid[slot] = ProcGlobal->allProcs[req->pgprocno].pid;
		req->total = slot;
		return 0;
	}
	if (i < 0 || i >= GBT_GPU_MAX_SORTS || dev_sort[i] == NULL)
	{
		strlcpy(req->errmsg, "no such GPU sort", sizeof(req->errmsg));
		return GBT_CUDA_EINVAL;
	}
	if (req->inject_fault == 2 && req->op == GBT_OP_SORT_PUT)
	{
		ereport(LOG,
				(errmsg("gbtree gpu service: exiting in the middle of a build, as gbtree.gpu_inject_fault asks")));
		proc_exit(1);
	}
	switch (req->op)
	{
		case GBT_OP_SORT_PUT:
			rc = cuda.sort_put(dev_sort[i], req->arg[1], (const uint64_t *) payload, req->arg[2]);
			break;
		case GBT_OP_SORT_RUN:
			rc = cuda.sort_run(dev_sort[i], (int) req->arg[1]);
			req->ms = cuda.sort_last_ms(dev_sort[i]);
			req->total = cuda.sort_count ? cuda.sort_count(dev_sort[i]) : 0;
			break;
		case GBT_OP_SORT_GET:
			rc = cuda.sort_get(dev_sort[i], req->arg[1], (uint64_t *) payload, req->arg[2]);
			break;
		case GBT_OP_SORT_LAYOUT:
			if (cuda.sort_layout == NULL)
			{
				strlcpy(req->errmsg, "libgbtree_cuda.so does not lay out pages", sizeof(req->errmsg));
				return GBT_CUDA_EINVAL;
			}
			/* past the first chunk, so that the build has written pages */
			if (req->inject_fault == 3 && req->arg[1] > 0)
			{
				ereport(LOG,
						(errmsg("gbtree gpu service: exiting while laying out a build's pages, as gbtree.gpu_inject_fault asks")));
				proc_exit(1);
			}
			rc = cuda.sort_layout(dev_sort[i], (const GbtCudaTreePlan *) payload, req->arg[1],
								  (uint32_t) req->arg[2], payload + GBT_GPU_PLAN_SPACE);
			break;
		case GBT_OP_SORT_LEAVES:
			{
				GbtGpuLeavesPayload *hdr = (GbtGpuLeavesPayload *) payload;
				char	   *entries = payload + MAXALIGN(sizeof(GbtGpuLeavesPayload));

				if (cuda.sort_leaves == NULL)
				{
					strlcpy(req->errmsg, "libgbtree_cuda.so does not find leaves", sizeof(req->errmsg));
					return GBT_CUDA_EINVAL;
				}
				if (req->copyno < 0 || req->copyno >= GBT_GPU_MAX_COPIES ||
					dev_copy[req->copyno] == NULL || dev_gen[req->copyno] != req->gen)
					return GBT_GPU_ENOCOPY;
				if (req->inject_fault == 1)
				{
					strlcpy(req->errmsg, "injected device error (gbtree.gpu_inject_fault)",
							sizeof(req->errmsg));
					return GBT_CUDA_EDEVICE;
				}
				rc = cuda.sort_get(dev_sort[i], req->arg[1], (uint64_t *) entries, req->arg[2]);
				if (rc == 0)
					rc = cuda.sort_leaves(dev_sort[i], dev_copy[req->copyno], hdr->root,
										  req->arg[1], req->arg[2],
										  (uint32_t *) (entries + req->arg[2] * 2 * sizeof(uint64)));
			}
			break;
		case GBT_OP_SORT_END:
			cuda.sort_free(dev_sort[i]);
			dev_sort[i] = NULL;
			return 0;
		default:
			return GBT_CUDA_EINVAL;
	}
	if (rc != 0)
		strlcpy(req->errmsg, cuda.last_error(), sizeof(req->errmsg));
	return rc;
}

/* Oldest pending request, now RUNNING, or NULL */
static GbtGpuRequest *
next_request(void)
{
	GbtGpuShared *sh = gbt_gpu_shared;
	GbtGpuRequest *best = NULL;

	SpinLockAcquire(&sh->mutex);
	for (int i = 0; i < GBT_GPU_MAX_REQUESTS; i++)
	{
		GbtGpuRequest *r = &sh->requests[i];

		if (r->state == GBT_REQ_PENDING && (best == NULL || r->seq < best->seq))
			best = r;
	}
	if (best)
		best->state = GBT_REQ_RUNNING;
	SpinLockRelease(&sh->mutex);
	return best;
}

void
gbt_gpu_service_main(Datum arg)
{
	GbtGpuShared *sh;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	sh = gbt_gpu_shared;
	if (sh == NULL)
		proc_exit(0);
	SpinLockAcquire(&sh->mutex);
	sh->state = GBT_SVC_STARTING;
	sh->service_pid = MyProcPid;
	SpinLockRelease(&sh->mutex);
	before_shmem_exit(service_exit, (Datum) 0);

	service_open_device();

	SpinLockAcquire(&sh->mutex);
	sh->service_pgprocno = gbt_my_procno();
	sh->can_layout = (cuda.sort_layout != NULL);
	sh->can_merge = (cuda.sort_leaves != NULL);
	sh->can_words = (cuda.lookup_words != NULL);
	sh->state = GBT_SVC_READY;
	strlcpy(sh->detail, "ready", sizeof(sh->detail));
	SpinLockRelease(&sh->mutex);

	for (;;)
	{
		GbtGpuRequest *req;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			(void) enforce_memory_limit(-1);
		}
		req = next_request();
		if (req == NULL)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 1000L, gbt_wait_event("GbtreeGpuServiceMain", &wait_service_main));
			ResetLatch(MyLatch);
			continue;
		}

		{
			dsm_segment *seg = NULL;
			int			rc;

			req->errmsg[0] = '\0';
			if (req->op == GBT_OP_DROP)
			{
				free_copy(req->copyno);
				(void) enforce_memory_limit(-1);
				rc = 0;
			}
			else if (req->op >= GBT_OP_SORT_BEGIN && req->handle == DSM_HANDLE_INVALID &&
					 !req->staged)
				rc = serve_sort(req, NULL);
			else if (!req->staged && (seg = dsm_attach(req->handle)) == NULL)
				rc = GBT_GPU_ESERVICE;
			else
			{
				char	   *payload = req->staged ? gbt_gpu_staging : dsm_segment_address(seg);

				switch (req->op)
				{
					case GBT_OP_PUT_PAGES:
						rc = serve_put(req, payload);
						break;
					case GBT_OP_LOOKUP:
						rc = serve_lookup(req, payload);
						break;
					case GBT_OP_SORT_PUT:
					case GBT_OP_SORT_GET:
					case GBT_OP_SORT_LAYOUT:
					case GBT_OP_SORT_LEAVES:
						rc = serve_sort(req, payload);
						break;
					default:
						rc = GBT_GPU_ESERVICE;
				}
				if (seg)
					dsm_detach(seg);
			}
			SpinLockAcquire(&sh->mutex);
			req->result = rc;
			/* an abandoned request's staging area is the service's to free */
			if (req->abandoned && req->staged)
				sh->staging_busy = false;
			req->state = req->abandoned ? GBT_REQ_FREE : GBT_REQ_DONE;
			SpinLockRelease(&sh->mutex);
			wake(req->pgprocno);
		}
	}
}
