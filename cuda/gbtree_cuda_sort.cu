/*
 * gbtree_cuda_sort.cu
 *	  Device sort of CREATE INDEX's (key, TID) entries; see
 *	  gbtree_cuda.h.
 *
 * Keys and TIDs live in separate device arrays (two of each, for CUB's
 * double-buffered radix sort, which needs little extra memory); chunks
 * arrive interleaved as GbtEntry and are split by a kernel.  Two stable
 * LSD radix sorts give (key, tid >> 16) order: by TID bits 16..63 first
 * (skipped when the heap scan delivered TID order), then by key.
 */
#include <stdio.h>
#include <stdint.h>

#include <cub/device/device_radix_sort.cuh>

#include "gbtree_cuda_host.cuh"	/* gbt_cuda_set_error, the copy's pages */
#include "gbtree_layout.h"

struct GbtCudaSort
{
	uint64_t	cap;			/* room in entries */
	uint64_t	n;				/* entries put: the end of the furthest put */
	uint64_t   *keys[2];
	uint64_t   *tids[2];
	int			cur;			/* which buffer holds the data */
	uint64_t   *scratch;		/* interleaved chunk in transit */
	uint64_t	scratch_n;
	void	   *temp;			/* CUB temporary storage */
	size_t		temp_bytes;
	float		last_ms;
	char	   *pages;			/* laid-out pages in transit */
	uint32_t	pages_n;
};

static int
cuda_fail(cudaError_t e, const char *what)
{
	gbt_cuda_set_error("%s: %s", what, cudaGetErrorString(e));
	(void) cudaGetLastError();	/* clear a non-sticky error */
	return e == cudaErrorMemoryAllocation ? GBT_CUDA_ENOMEM : GBT_CUDA_EDEVICE;
}

#define CHECK(call, what) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return cuda_fail(e_, what); } while (0)

__global__ static void
split_entries(const uint64_t *in, uint64_t *keys, uint64_t *tids, uint64_t count)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < count;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		keys[i] = in[2 * i];
		tids[i] = in[2 * i + 1];
	}
}

__global__ static void
join_entries(uint64_t *out, const uint64_t *keys, const uint64_t *tids, uint64_t count)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < count;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		out[2 * i] = keys[i];
		out[2 * i + 1] = tids[i];
	}
}

static int
grid_for(uint64_t count)
{
	uint64_t	blocks = (count + 255) / 256;

	return (int) (blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

extern "C" void
gbt_cuda_sort_free(GbtCudaSort *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < 2; i++)
	{
		cudaFree(s->keys[i]);
		cudaFree(s->tids[i]);
	}
	cudaFree(s->scratch);
	cudaFree(s->temp);
	cudaFree(s->pages);
	delete s;
}

extern "C" int
gbt_cuda_sort_create(uint64_t n, GbtCudaSort **out)
{
	GbtCudaSort *s = new GbtCudaSort();
	cudaError_t e = cudaSuccess;
	size_t		bytes = (size_t) (n ? n : 1) * sizeof(uint64_t);

	*out = NULL;
	for (int i = 0; i < 2 && e == cudaSuccess; i++)
	{
		e = cudaMalloc(&s->keys[i], bytes);
		if (e == cudaSuccess)
			e = cudaMalloc(&s->tids[i], bytes);
	}
	if (e == cudaSuccess)
	{
		cub::DoubleBuffer<uint64_t> k(s->keys[0], s->keys[1]);
		cub::DoubleBuffer<uint64_t> v(s->tids[0], s->tids[1]);

		e = cub::DeviceRadixSort::SortPairs(NULL, s->temp_bytes, k, v, (int64_t) (n ? n : 1));
		if (e == cudaSuccess)
			e = cudaMalloc(&s->temp, s->temp_bytes ? s->temp_bytes : 1);
	}
	if (e != cudaSuccess)
	{
		int			rc = cuda_fail(e, "allocating the build's sort buffers");

		gbt_cuda_sort_free(s);
		return rc;
	}
	s->cap = n;
	s->n = 0;
	*out = s;
	return 0;
}

/*
 * Room for at least want entries: new buffers, the entries so far copied
 * over (a build streaming more entries than its estimate).
 */
static int
grow(GbtCudaSort *s, uint64_t want)
{
	uint64_t	cap = s->cap + s->cap / 2;
	uint64_t   *k[2] = {NULL, NULL};
	uint64_t   *t[2] = {NULL, NULL};
	void	   *temp = NULL;
	size_t		temp_bytes = 0;
	cudaError_t e = cudaSuccess;

	if (cap < want)
		cap = want;
	for (int i = 0; i < 2 && e == cudaSuccess; i++)
	{
		e = cudaMalloc(&k[i], (size_t) cap * sizeof(uint64_t));
		if (e == cudaSuccess)
			e = cudaMalloc(&t[i], (size_t) cap * sizeof(uint64_t));
	}
	if (e == cudaSuccess)
	{
		cub::DoubleBuffer<uint64_t> kb(k[0], k[1]);
		cub::DoubleBuffer<uint64_t> vb(t[0], t[1]);

		e = cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, kb, vb, (int64_t) cap);
		if (e == cudaSuccess)
			e = cudaMalloc(&temp, temp_bytes ? temp_bytes : 1);
	}
	if (e == cudaSuccess && s->n > 0)
		e = cudaMemcpy(k[0], s->keys[s->cur], (size_t) s->n * sizeof(uint64_t),
					   cudaMemcpyDeviceToDevice);
	if (e == cudaSuccess && s->n > 0)
		e = cudaMemcpy(t[0], s->tids[s->cur], (size_t) s->n * sizeof(uint64_t),
					   cudaMemcpyDeviceToDevice);
	if (e != cudaSuccess)
	{
		for (int i = 0; i < 2; i++)
		{
			cudaFree(k[i]);
			cudaFree(t[i]);
		}
		cudaFree(temp);
		return cuda_fail(e, "growing the build's sort buffers");
	}
	for (int i = 0; i < 2; i++)
	{
		cudaFree(s->keys[i]);
		cudaFree(s->tids[i]);
		s->keys[i] = k[i];
		s->tids[i] = t[i];
	}
	cudaFree(s->temp);
	s->temp = temp;
	s->temp_bytes = temp_bytes;
	s->cur = 0;
	s->cap = cap;
	return 0;
}

static int
ensure_scratch(GbtCudaSort *s, uint64_t count)
{
	CHECK(grow_device_scratch(&s->scratch, &s->scratch_n, count, 2 * sizeof(uint64_t)),
		  "allocating a transfer buffer");
	return 0;
}

/* Checks a transfer of entries [offset, offset + count) and makes room for it. */
static int
begin_transfer(GbtCudaSort *s, uint64_t offset, uint64_t count, const char *what)
{
	if (s == NULL || offset > s->n || count > s->n - offset)
	{
		gbt_cuda_set_error("%s: entries %llu..%llu outside 0..%llu", what,
						   (unsigned long long) offset, (unsigned long long) (offset + count),
						   (unsigned long long) (s ? s->n : 0));
		return GBT_CUDA_EINVAL;
	}
	return count ? ensure_scratch(s, count) : 0;
}

extern "C" int
gbt_cuda_sort_put(GbtCudaSort *s, uint64_t offset, const uint64_t *entries, uint64_t count)
{
	int			rc;

	if (s == NULL || offset + count < offset)
		return GBT_CUDA_EINVAL;
	if (offset + count > s->cap && (rc = grow(s, offset + count)) != 0)
		return rc;
	if (count == 0)
		return 0;
	if ((rc = ensure_scratch(s, count)) != 0)
		return rc;
	CHECK(cudaMemcpy(s->scratch, entries, (size_t) count * 2 * sizeof(uint64_t),
					 cudaMemcpyHostToDevice), "copying entries to the device");
	split_entries<<<grid_for(count), 256>>>(s->scratch, s->keys[s->cur] + offset,
											s->tids[s->cur] + offset, count);
	CHECK(cudaGetLastError(), "splitting entries");
	CHECK(cudaDeviceSynchronize(), "splitting entries");
	if (offset + count > s->n)
		s->n = offset + count;
	return 0;
}

extern "C" int
gbt_cuda_sort_run(GbtCudaSort *s, int tid_sorted)
{
	cudaEvent_t start,
				stop;
	cudaError_t e;

	if (s == NULL)
		return GBT_CUDA_EINVAL;
	if (s->n < 2)
		return 0;
	CHECK(cudaEventCreate(&start), "creating an event");
	CHECK(cudaEventCreate(&stop), "creating an event");
	cudaEventRecord(start);
	{
		cub::DoubleBuffer<uint64_t> k(s->keys[s->cur], s->keys[1 - s->cur]);
		cub::DoubleBuffer<uint64_t> v(s->tids[s->cur], s->tids[1 - s->cur]);
		size_t		bytes = s->temp_bytes;

		e = cudaSuccess;
		if (!tid_sorted)
		{
			/* by TID (bits 16..63), keys riding along */
			e = cub::DeviceRadixSort::SortPairs(s->temp, bytes, v, k, (int64_t) s->n, 16, 64);
		}
		/* then stably by key */
		if (e == cudaSuccess)
			e = cub::DeviceRadixSort::SortPairs(s->temp, bytes, k, v, (int64_t) s->n, 0, 64);
		/* CUB flips a pair's key and value buffers together */
		if (e == cudaSuccess)
			s->cur = (k.Current() == s->keys[0]) ? 0 : 1;
	}
	cudaEventRecord(stop);
	if (e == cudaSuccess)
		e = cudaEventSynchronize(stop);
	if (e == cudaSuccess)
		cudaEventElapsedTime(&s->last_ms, start, stop);
	cudaEventDestroy(start);
	cudaEventDestroy(stop);
	if (e != cudaSuccess)
		return cuda_fail(e, "sorting the build's entries");
	return 0;
}

extern "C" int
gbt_cuda_sort_get(GbtCudaSort *s, uint64_t offset, uint64_t *entries, uint64_t count)
{
	int			rc;

	if ((rc = begin_transfer(s, offset, count, "sort_get")) != 0 || count == 0)
		return rc;
	join_entries<<<grid_for(count), 256>>>(s->scratch, s->keys[s->cur] + offset,
										   s->tids[s->cur] + offset, count);
	CHECK(cudaGetLastError(), "joining entries");
	CHECK(cudaMemcpy(entries, s->scratch, (size_t) count * 2 * sizeof(uint64_t),
					 cudaMemcpyDeviceToHost), "copying sorted entries back");
	return 0;
}

extern "C" uint64_t
gbt_cuda_sort_count(GbtCudaSort *s)
{
	return s ? s->n : 0;
}

extern "C" double
gbt_cuda_sort_last_ms(GbtCudaSort *s)
{
	return s ? s->last_ms : 0.0;
}

/*
 * Page layout (gbt_cuda_sort_layout): one thread block per page, each
 * thread computing 8-byte words of it with gbtree_layout.h.
 */
#define LAYOUT_THREADS	256

__global__ static void
layout_pages(GbtCudaTreePlan plan, const uint64_t *keys, const uint64_t *tids,
			 uint64_t first, uint64_t *out)
{
	GbtLayoutPage lp;
	uint64_t   *page = out + (uint64_t) blockIdx.x * GBT_LAYOUT_PAGE_WORDS;

	gbt_layout_locate(&plan, first + blockIdx.x, &lp);
	for (int w = threadIdx.x; w < GBT_LAYOUT_PAGE_WORDS; w += blockDim.x)
		page[w] = gbt_layout_word(&plan, &lp, keys, tids, w);
}

extern "C" int
gbt_cuda_sort_layout(GbtCudaSort *s, const GbtCudaTreePlan *plan, uint64_t first,
					 uint32_t count, void *pages)
{
	const char *bad = s ? gbt_layout_check(plan, s->n, first, count) : "sort_layout: no sort";

	if (bad)
	{
		gbt_cuda_set_error("%s", bad);
		return GBT_CUDA_EINVAL;
	}
	if (count == 0)
		return 0;
	CHECK(grow_device_scratch(&s->pages, &s->pages_n, count, GBT_PAGE_SIZE),
		  "allocating the layout buffer");
	layout_pages<<<count, LAYOUT_THREADS>>>(*plan, s->keys[s->cur], s->tids[s->cur], first,
											(uint64_t *) s->pages);
	CHECK(cudaGetLastError(), "laying out pages");
	CHECK(cudaMemcpy(pages, s->pages, (size_t) count * GBT_PAGE_SIZE, cudaMemcpyDeviceToHost),
		  "copying laid-out pages back");
	return 0;
}

/*
 * Leaves of a batch of inserts (gbt_cuda_sort_leaves): one thread per
 * sorted entry descends the device copy from the root, comparing (key,
 * TID) pairs, to the leaf the entry belongs in.  Neighbouring entries
 * share their path, so the pages stay in cache.  Nothing is trusted: a
 * page that does not look right, a link out of range or too many hops
 * give GBT_NO_BLOCK for that entry, and the backend descends itself.
 */
#define LEAF_MAX_HOPS	256

__device__ static inline bool
entry_lt(uint64_t k1, uint64_t t1, uint64_t k2, uint64_t t2)
{
	return k1 < k2 || (k1 == k2 && t1 < t2);
}

__device__ static uint32_t
entry_leaf(const char *pages, uint32_t nblocks, uint32_t root, uint64_t k, uint64_t t)
{
	uint32_t	blk = root;

	for (int hops = 0; hops < LEAF_MAX_HOPS; hops++)
	{
		const char *pg;
		const GbtPageOpaqueData *op;
		const uint64_t *keys;
		const uint64_t *tids;
		const uint64_t *used;
		int			lo,
					hi,
					slot;

		if (blk >= nblocks || blk == GBT_META_BLKNO)
			return GBT_NO_BLOCK;
		pg = pages + (size_t) blk * GBT_PAGE_SIZE;
		op = (const GbtPageOpaqueData *) (pg + GBT_OPAQUE_OFFSET);
		if (op->page_id != GBT_PAGE_ID || (op->flags & GBT_F_META) ||
			((op->flags & GBT_F_POSTING) ?
			 (op->nslots != 0 || !(op->flags & GBT_F_LEAF)) :
			 op->nslots != ((op->flags & GBT_F_LEAF) ? GBT_LEAF_SLOTS : GBT_INNER_SLOTS)))
			return GBT_NO_BLOCK;
		if ((op->flags & GBT_F_DELETED) ||
			(!(op->flags & GBT_F_RIGHTMOST) && !entry_lt(k, t, op->hikey, op->hitid)))
		{
			blk = op->rightlink;
			continue;
		}
		if (op->flags & GBT_F_LEAF)
			return blk;

		/* inner page: the child of the last used slot at or below (k, t) */
		keys = (const uint64_t *) (pg + GBT_INNER_KEYS_OFF);
		tids = (const uint64_t *) (pg + GBT_INNER_TIDS_OFF);
		used = (const uint64_t *) (pg + GBT_INNER_USED_OFF);
		lo = 0;
		hi = GBT_INNER_SLOTS;
		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (!entry_lt(k, t, keys[mid], tids[mid]))
				lo = mid + 1;
			else
				hi = mid;
		}
		slot = lo - 1;
		if (slot < 0)
		{
			/* below every separator: the first used slot */
			for (slot = 0; slot < GBT_INNER_SLOTS && !((used[slot >> 6] >> (slot & 63)) & 1); slot++)
				;
			if (slot >= GBT_INNER_SLOTS)
				return GBT_NO_BLOCK;
		}
		if (!((used[slot >> 6] >> (slot & 63)) & 1))
			return GBT_NO_BLOCK;
		blk = ((const uint32_t *) (pg + GBT_INNER_CHILD_OFF))[slot];
	}
	return GBT_NO_BLOCK;
}

__global__ static void
leaves_kernel(const char *pages, uint32_t nblocks, uint32_t root, const uint64_t *keys,
			  const uint64_t *tids, uint64_t count, uint32_t *out)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < count;
		 i += (uint64_t) gridDim.x * blockDim.x)
		out[i] = entry_leaf(pages, nblocks, root, keys[i], tids[i]);
}

extern "C" int
gbt_cuda_sort_leaves(GbtCudaSort *s, const GbtCudaCopy *copy, uint32_t root_blkno,
					 uint64_t offset, uint64_t count, uint32_t *leaves)
{
	uint32_t	nblocks = 0;
	const char *pages;
	int			rc;

	if (copy == NULL)
	{
		gbt_cuda_set_error("sort_leaves: no device copy");
		return GBT_CUDA_EINVAL;
	}
	if ((rc = begin_transfer(s, offset, count, "sort_leaves")) != 0 || count == 0)
		return rc;
	pages = gbt_cuda_copy_device_pages(copy, &nblocks);
	/* the scratch buffer holds count entries: room for count leaves */
	leaves_kernel<<<grid_for(count), 256>>>(pages, nblocks, root_blkno, s->keys[s->cur] + offset,
											s->tids[s->cur] + offset, count,
											(uint32_t *) s->scratch);
	CHECK(cudaGetLastError(), "finding the leaves of a batch");
	CHECK(cudaMemcpy(leaves, s->scratch, (size_t) count * sizeof(uint32_t),
					 cudaMemcpyDeviceToHost), "copying the leaves back");
	return 0;
}
