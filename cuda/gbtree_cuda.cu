/*-------------------------------------------------------------------------
 *
 * gbtree_cuda.cu
 *	  Device side of gbtree: device copies of an index (page images by
 *	  block number) and batched lookups over them.
 *
 * This file holds the error channel, device selection, host memory
 * pinning, the device copies (creation, growth, page shipping) and the
 * 16-slot count kept from ABI 1.  Lookup = count, prefix sum, fill; its
 * parts are
 *
 *	gbtree_cuda_lookup.cu	the driver: workspace, device sort of unsorted
 *							batches, the phases, gbt_cuda_lookup()
 *	gbtree_cuda_count.cu	count_kernel: lock-step groups of 8 or 16 lanes
 *	gbtree_cuda_leaf.cu		leaf_kernel: sorted batches, a query per lane
 *	gbtree_cuda_fill.cu		fill_kernel: the matches at their offsets
 *	gbtree_cuda_kernels.cuh	what the kernels share: parameters, page
 *							checks, corruption codes, device helpers
 *	gbtree_cuda_host.cuh	a copy's state and the error channel
 *
 * and gbtree_cuda_sort.cu is the device sort of GPU builds and insert
 * batches.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbtree_cuda_host.cuh"

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------
 */
static __thread char last_error[512];

/* also the device sort's error channel (gbtree_cuda_sort.cu) */
void
gbt_cuda_set_error(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

extern "C" const char *
gbt_cuda_last_error(void)
{
	return last_error;
}

/* a failed CUDA call as the last error; its GBT_CUDA_E* code */
int
gbt_cuda_fail(cudaError_t e, const char *what)
{
	gbt_cuda_set_error("%s: %s", what, cudaGetErrorString(e));
	if (e == cudaErrorMemoryAllocation)
	{
		cudaGetLastError();		/* not sticky: clear it */
		return GBT_CUDA_ENOMEM;
	}
	return GBT_CUDA_EDEVICE;
}

extern "C" int
gbt_cuda_abi_version(void)
{
	return GBT_CUDA_ABI_VERSION;
}

extern "C" int
gbt_cuda_probe(char *desc, int desclen, uint64_t *mem_total)
{
	int			n = 0;
	cudaDeviceProp prop;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
		return -1;
	if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
		return -1;
	snprintf(desc, desclen, "%s (sm_%d%d)", prop.name, prop.major, prop.minor);
	*mem_total = prop.totalGlobalMem;
	return 0;
}

extern "C" int
gbt_cuda_init(int device, char *err, int errlen)
{
	cudaError_t e;
	int			n = 0;

	last_error[0] = '\0';
	e = cudaGetDeviceCount(&n);
	if (e == cudaSuccess && (device < 0 || device >= n))
	{
		gbt_cuda_set_error("device %d not present (%d devices)", device, n);
		if (err && errlen > 0)
			snprintf(err, errlen, "%s", last_error);
		return GBT_CUDA_EINVAL;
	}
	if (e == cudaSuccess)
		e = cudaSetDevice(device);
	if (e == cudaSuccess)
		e = cudaFree(0);		/* create the context now */
	if (e != cudaSuccess)
	{
		int			rc = gbt_cuda_fail(e, "gbt_cuda_init");

		if (err && errlen > 0)
			snprintf(err, errlen, "%s", last_error);
		return rc;
	}
	return 0;
}

extern "C" int
gbt_cuda_host_register(void *ptr, size_t bytes)
{
	CK(cudaHostRegister(ptr, bytes, cudaHostRegisterDefault), "cudaHostRegister");
	return 0;
}

extern "C" int
gbt_cuda_host_unregister(void *ptr)
{
	CK(cudaHostUnregister(ptr), "cudaHostUnregister");
	return 0;
}

/* ------------------------------------------------------------------------
 * Page scatter (put_pages)
 * ------------------------------------------------------------------------
 */
__global__ void
scatter_pages_kernel(char *pages, const char *stage, const uint32_t *blknos, uint32_t n)
{
	uint32_t	i = blockIdx.x;

	if (i >= n)
		return;

	const uint4 *src = (const uint4 *) (stage + (size_t) i * GBT_PAGE_SIZE);
	uint4	   *dst = (uint4 *) (pages + (size_t) blknos[i] * GBT_PAGE_SIZE);

	for (int j = threadIdx.x; j < GBT_PAGE_SIZE / 16; j += blockDim.x)
		dst[j] = src[j];
}

/* ------------------------------------------------------------------------
 * Device copies
 * ------------------------------------------------------------------------
 */
extern "C" int
gbt_cuda_copy_create(GbtCudaCopy **copyp, uint32_t capacity_blocks)
{
	GbtCudaCopy *c;
	cudaDeviceProp prop;
	int			nb = 0;

	if (!copyp)
	{
		gbt_cuda_set_error("gbt_cuda_copy_create: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	*copyp = NULL;
	c = (GbtCudaCopy *) calloc(1, sizeof(GbtCudaCopy));
	if (!c)
	{
		gbt_cuda_set_error("out of host memory");
		return GBT_CUDA_ENOMEM;
	}
	if (capacity_blocks < GBT_FIRST_FREE_BLKNO)
		capacity_blocks = GBT_FIRST_FREE_BLKNO;

	cudaError_t e = cudaGetDevice(&c->device);

	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&prop, c->device);
	if (e == cudaSuccess)
		e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
	if (e == cudaSuccess)
		e = cudaMalloc(&c->d_pages, (size_t) capacity_blocks * GBT_PAGE_SIZE);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(c->d_pages, 0, (size_t) capacity_blocks * GBT_PAGE_SIZE, c->stream);
	if (e == cudaSuccess)
		e = cudaMalloc(&c->d_err, 4 * sizeof(u64));
	if (e == cudaSuccess)
		e = cudaMallocHost(&c->h_small, 4 * sizeof(u64));
	if (e == cudaSuccess)
		e = count_kernel_occupancy(8, &nb);
	if (e == cudaSuccess)
	{
		c->count_blocks_g8 = nb * prop.multiProcessorCount;
		e = count_kernel_occupancy(16, &nb);
	}
	if (e == cudaSuccess)
	{
		c->count_blocks_g16 = nb * prop.multiProcessorCount;
		e = fill_kernel_occupancy(&nb);
	}
	if (e == cudaSuccess)
	{
		c->fill_blocks = nb * prop.multiProcessorCount;
		e = leaf_kernel_occupancy(&nb);
	}
	if (e == cudaSuccess)
	{
		c->leaf_blocks = nb * prop.multiProcessorCount;
		e = cudaStreamSynchronize(c->stream);
	}
	if (e != cudaSuccess)
	{
		int			rc = gbt_cuda_fail(e, "gbt_cuda_copy_create");

		gbt_cuda_copy_free(c);
		return rc;
	}
	c->nblocks = capacity_blocks;
	c->sort_min = SORT_MIN_BATCH;
	c->sort_bits = SORT_BITS;
	{
		const char *env = getenv("GBT_CUDA_SORT_MIN");

		if (env && *env)
			c->sort_min = strtoull(env, NULL, 10);
	}
	*copyp = c;
	return 0;
}

extern "C" void
gbt_cuda_copy_free(GbtCudaCopy *c)
{
	if (!c)
		return;
	if (c->stream)
		cudaStreamSynchronize(c->stream);
	cudaFree(c->d_pages);
	cudaFree(c->d_stage);
	cudaFree(c->d_blknos);
	free_lookup_workspace(c);
	free_words_workspace(c);
	cudaFree(c->d_pts);
	cudaFree(c->d_out_keys);
	cudaFree(c->d_out_tids);
	cudaFree(c->d_err);
	if (c->h_small)
		cudaFreeHost(c->h_small);
	if (c->stream)
		cudaStreamDestroy(c->stream);
	free(c);
}

extern "C" uint32_t
gbt_cuda_copy_nblocks(const GbtCudaCopy *c)
{
	return c ? c->nblocks : 0;
}

/* For gbtree_cuda_sort.cu: the page array on the device, and its capacity */
const char *
gbt_cuda_copy_device_pages(const GbtCudaCopy *c, uint32_t *nblocks)
{
	*nblocks = c->nblocks;
	return c->d_pages;
}

extern "C" uint64_t
gbt_cuda_copy_device_bytes(const GbtCudaCopy *c)
{
	if (!c)
		return 0;
	return (uint64_t) c->nblocks * GBT_PAGE_SIZE +
		(uint64_t) c->stage_cap * (GBT_PAGE_SIZE + 4) +
		(uint64_t) c->q_cap * (sizeof(GbtCudaQuery) + 8 + 8 + 16 + 8 + sizeof(QRec) + 16) + 16 +
		c->cub_bytes + c->sort_bytes +
		(uint64_t) c->out_cap * 16 + 8;
}

/* grow the page array to hold block need - 1, keeping the content */
static int
grow_page_array(GbtCudaCopy *c, uint32_t need)
{
	uint64_t	ncap;
	char	   *np = NULL;

	if (need <= c->nblocks)
		return 0;
	ncap = (uint64_t) c->nblocks + c->nblocks / 4 + 64;
	if (ncap < need)
		ncap = need;
	if (ncap > GBT_NO_BLOCK)
		ncap = GBT_NO_BLOCK;
	CK(cudaMalloc(&np, ncap * GBT_PAGE_SIZE), "growing the device copy");
	cudaError_t e = cudaMemcpyAsync(np, c->d_pages, (size_t) c->nblocks * GBT_PAGE_SIZE,
									cudaMemcpyDeviceToDevice, c->stream);

	if (e == cudaSuccess)
		e = cudaMemsetAsync(np + (size_t) c->nblocks * GBT_PAGE_SIZE, 0,
							(size_t) (ncap - c->nblocks) * GBT_PAGE_SIZE, c->stream);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(c->stream);
	if (e != cudaSuccess)
	{
		cudaFree(np);
		return gbt_cuda_fail(e, "growing the device copy");
	}
	cudaFree(c->d_pages);
	c->d_pages = np;
	c->nblocks = (uint32_t) ncap;
	return 0;
}

/*
 * A page in posting form among these images sends the copy's lookups to
 * the walk kernels from now on (the others read plain leaves only).
 */
static void
note_posting(GbtCudaCopy *c, const char *images, uint32_t npages)
{
	for (uint32_t i = 0; i < npages && !c->posting; i++)
	{
		const GbtPageOpaqueData *op =
			(const GbtPageOpaqueData *) (images + (size_t) i * GBT_PAGE_SIZE + GBT_OPAQUE_OFFSET);

		if (op->page_id == GBT_PAGE_ID && (op->flags & GBT_F_POSTING))
			c->posting = true;
	}
}

extern "C" int
gbt_cuda_copy_put_range(GbtCudaCopy *c, uint32_t first, const void *images, uint32_t npages)
{
	int			rc;

	if (!c || (!images && npages))
	{
		gbt_cuda_set_error("gbt_cuda_copy_put_range: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	if (npages == 0)
		return 0;
	if ((uint64_t) first + npages >= GBT_NO_BLOCK)
	{
		gbt_cuda_set_error("block number out of range");
		return GBT_CUDA_EINVAL;
	}
	if ((rc = grow_page_array(c, first + npages)) != 0)
		return rc;
	note_posting(c, (const char *) images, npages);
	CK(cudaMemcpyAsync(c->d_pages + (size_t) first * GBT_PAGE_SIZE, images,
					   (size_t) npages * GBT_PAGE_SIZE, cudaMemcpyHostToDevice, c->stream),
	   "copying pages");
	CK(cudaStreamSynchronize(c->stream), "copying pages");
	return 0;
}

static int
cmp_idx_by_blk(const void *a, const void *b, void *arg)
{
	const uint32_t *blk = (const uint32_t *) arg;
	uint32_t	ia = *(const uint32_t *) a,
				ib = *(const uint32_t *) b;

	if (blk[ia] != blk[ib])
		return blk[ia] < blk[ib] ? -1 : 1;
	return ia < ib ? -1 : (ia > ib ? 1 : 0);
}

extern "C" int
gbt_cuda_copy_put_pages(GbtCudaCopy *c, const uint32_t *blknos, const void *images, uint32_t npages)
{
	uint32_t	maxblk = 0;
	const uint32_t *use_blk = blknos;
	uint32_t   *tmp = NULL;
	uint32_t   *idx = NULL;
	const char *img = (const char *) images;
	char	   *packed = NULL;
	uint32_t	nuse = npages;
	int			rc;

	if (!c || ((!blknos || !images) && npages))
	{
		gbt_cuda_set_error("gbt_cuda_copy_put_pages: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	if (npages == 0)
		return 0;
	note_posting(c, img, npages);
	for (uint32_t i = 0; i < npages; i++)
	{
		if (blknos[i] >= GBT_NO_BLOCK - 1)
		{
			gbt_cuda_set_error("block number %u out of range", blknos[i]);
			return GBT_CUDA_EINVAL;
		}
		if (blknos[i] > maxblk)
			maxblk = blknos[i];
	}
	/* duplicates: keep the last image of each block */
	{
		bool		sorted_unique = true;

		for (uint32_t i = 1; i < npages; i++)
			if (blknos[i] <= blknos[i - 1])
				sorted_unique = false;
		if (!sorted_unique)
		{
			idx = (uint32_t *) malloc(sizeof(uint32_t) * npages);
			tmp = (uint32_t *) malloc(sizeof(uint32_t) * npages);
			if (!idx || !tmp)
			{
				free(idx);
				free(tmp);
				gbt_cuda_set_error("out of host memory");
				return GBT_CUDA_ENOMEM;
			}
			for (uint32_t i = 0; i < npages; i++)
				idx[i] = i;
			qsort_r(idx, npages, sizeof(uint32_t), cmp_idx_by_blk, (void *) blknos);
			nuse = 0;
			for (uint32_t i = 0; i < npages; i++)
				if (i + 1 == npages || blknos[idx[i + 1]] != blknos[idx[i]])
					idx[nuse++] = idx[i];
			for (uint32_t i = 0; i < nuse; i++)
				tmp[i] = blknos[idx[i]];
			use_blk = tmp;
			packed = (char *) malloc((size_t) nuse * GBT_PAGE_SIZE);
			if (!packed)
			{
				free(idx);
				free(tmp);
				gbt_cuda_set_error("out of host memory");
				return GBT_CUDA_ENOMEM;
			}
			for (uint32_t i = 0; i < nuse; i++)
				memcpy(packed + (size_t) i * GBT_PAGE_SIZE, img + (size_t) idx[i] * GBT_PAGE_SIZE,
					   GBT_PAGE_SIZE);
			img = packed;
		}
	}
	rc = grow_page_array(c, maxblk + 1);
	if (rc == 0 && c->stage_cap < nuse)
	{
		size_t		ncap = nuse < 256 ? 256 : nuse;

		cudaFree(c->d_stage);
		cudaFree(c->d_blknos);
		c->d_stage = NULL;
		c->d_blknos = NULL;
		c->stage_cap = 0;
		cudaError_t e = cudaMalloc(&c->d_stage, ncap * GBT_PAGE_SIZE);

		if (e == cudaSuccess)
			e = cudaMalloc(&c->d_blknos, ncap * sizeof(uint32_t));
		if (e != cudaSuccess)
			rc = gbt_cuda_fail(e, "page staging buffer");
		else
			c->stage_cap = ncap;
	}
	if (rc == 0)
	{
		cudaError_t e = cudaMemcpyAsync(c->d_stage, img, (size_t) nuse * GBT_PAGE_SIZE,
										cudaMemcpyHostToDevice, c->stream);

		if (e == cudaSuccess)
			e = cudaMemcpyAsync(c->d_blknos, use_blk, nuse * sizeof(uint32_t),
								cudaMemcpyHostToDevice, c->stream);
		if (e == cudaSuccess)
		{
			scatter_pages_kernel<<<nuse, 256, 0, c->stream>>>(c->d_pages, c->d_stage, c->d_blknos, nuse);
			e = cudaGetLastError();
		}
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(c->stream);
		if (e != cudaSuccess)
			rc = gbt_cuda_fail(e, "copying pages");
	}
	free(idx);
	free(tmp);
	free(packed);
	return rc;
}

/* ------------------------------------------------------------------------
 * The 16-slot count (kept from ABI 1)
 * ------------------------------------------------------------------------
 */
__global__ static void
count_lt16_kernel(const uint64_t *blocks, const uint64_t *queries, int *counts, int n)
{
	int			q = (blockIdx.x * blockDim.x + threadIdx.x) / 16;
	int			lane = threadIdx.x & 15;
	unsigned	half = (threadIdx.x & 16) ? 0xFFFF0000u : 0x0000FFFFu;
	bool		active = q < n;
	unsigned	ballot;

	ballot = __ballot_sync(0xFFFFFFFFu, active && blocks[(size_t) q * 16 + lane] < queries[q]);
	if (active && lane == 0)
		counts[q] = __popc(ballot & half);
}

extern "C" int
gbt_cuda_count_lt16(const uint64_t *blocks, const uint64_t *queries, int *counts, int n)
{
	uint64_t   *d_blocks = NULL,
			   *d_queries = NULL;
	int		   *d_counts = NULL;
	int			rc = -1;

	if (n <= 0)
		return 0;
	if (cudaMalloc(&d_blocks, sizeof(uint64_t) * 16 * n) != cudaSuccess ||
		cudaMalloc(&d_queries, sizeof(uint64_t) * n) != cudaSuccess ||
		cudaMalloc(&d_counts, sizeof(int) * n) != cudaSuccess)
		goto out;
	if (cudaMemcpy(d_blocks, blocks, sizeof(uint64_t) * 16 * n, cudaMemcpyHostToDevice) != cudaSuccess ||
		cudaMemcpy(d_queries, queries, sizeof(uint64_t) * n, cudaMemcpyHostToDevice) != cudaSuccess)
		goto out;
	count_lt16_kernel<<<(n * 16 + 255) / 256, 256>>>(d_blocks, d_queries, d_counts, n);
	if (cudaGetLastError() != cudaSuccess)
		goto out;
	if (cudaMemcpy(counts, d_counts, sizeof(int) * n, cudaMemcpyDeviceToHost) != cudaSuccess)
		goto out;
	rc = 0;
out:
	cudaFree(d_blocks);
	cudaFree(d_queries);
	cudaFree(d_counts);
	return rc;
}
