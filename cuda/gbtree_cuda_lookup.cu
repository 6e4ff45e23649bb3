/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_lookup.cu
 *	  Batched lookups on a device copy: gbt_cuda_lookup() and the device
 *	  phases behind it.
 *
 * Lookup = count, prefix sum, fill.  The count pass gives each query its
 * number of matches, its first match and where its matches start (leaf,
 * slot): count_kernel (gbtree_cuda_count.cu) on batches as given;
 * leaf_kernel (gbtree_cuda_leaf.cu) on sorted and device-sorted batches,
 * with count_kernel on the queries it leaves.  A CUB prefix sum of the
 * counts gives the offsets, and fill_kernel (gbtree_cuda_fill.cu) writes
 * the matches there.  The device sort orders unsorted batches by 24 bits
 * of the low key (below the highest bit in which a sample of the batch's
 * keys differ), enough for leaf-level locality; results still come out in
 * batch order.
 *
 *-------------------------------------------------------------------------
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <algorithm>

#include "gbtree_cuda_host.cuh"

/*
 * The leaf kernel serves sorted batches with at least this many queries per
 * block of the index: sparser batches put most tile neighbours in different
 * leaves, and its one leaf per round then serializes a tile (H100, 100M
 * entries, 1000 sorted queries: 49 us with the count kernel, 212 us with
 * the leaf kernel), so they go to the count kernel with its leaf fast path.
 */
#define LEAF_DENSITY 2

/* the text of each corruption code (E_* in gbtree_cuda_kernels.cuh) */
static const char *const err_text[E_NCODES] = {
	"no error",
	"bad page id (zero or foreign page)",
	"metapage reached",
	"page kind or slot capacity mismatch",
	"too many levels",
	"level mismatch",
	"bad right-link",
	"too many hops (right-link loop)",
	"page reached whose low key is above the target",
	"leaf chain broken (low key differs from the left page's high key)",
	"high key not above low key",
	"bad downlink",
	"empty inner page",
	"search landed on an unused slot",
	"fill pass disagrees with count pass",
	"bad root block",
};

/* group width by batch kind (measured: cuda/test/RESULTS.md) */
static int	group_sorted = 8;
static int	group_unsorted = 8;

/* lanes per query of the count kernel for a sorted or unsorted batch */
static int
lanes_per_query(int sorted)
{
	return sorted ? group_sorted : group_unsorted;
}

/* frees the per-query buffers and CUB scratch, leaving no capacity */
void
free_lookup_workspace(GbtCudaCopy *c)
{
	cudaFree(c->d_queries);
	cudaFree(c->d_counts);
	cudaFree(c->d_offsets);
	cudaFree(c->d_first);
	cudaFree(c->d_start);
	cudaFree(c->d_rec);
	cudaFree(c->d_cub);
	cudaFree(c->d_sort);
	for (int i = 0; i < 2; i++)
	{
		cudaFree(c->d_skeys[i]);
		cudaFree(c->d_perm[i]);
		c->d_skeys[i] = c->d_perm[i] = NULL;
	}
	c->d_sort = NULL;
	c->sort_bytes = 0;
	c->d_queries = NULL;
	c->d_counts = c->d_offsets = c->d_start = NULL;
	c->d_first = NULL;
	c->d_rec = NULL;
	c->d_cub = NULL;
	c->q_cap = 0;
	c->cub_bytes = 0;
}

/* per-query buffers and CUB scratch for batches of up to n queries */
static int
reserve_lookup_workspace(GbtCudaCopy *c, size_t n)
{
	size_t		cub_need = 0;

	if (n <= c->q_cap)
		return 0;
	{
		size_t		ncap = n < 4096 ? 4096 : n;

		free_lookup_workspace(c);
		CK(cub::DeviceScan::ExclusiveSum(NULL, cub_need, (uint64_t *) NULL, (uint64_t *) NULL,
										 (int64_t) ncap + 1, c->stream), "scan size");
		CK(cudaMalloc(&c->d_queries, ncap * sizeof(GbtCudaQuery)), "query buffer");
		CK(cudaMalloc(&c->d_counts, (ncap + 1) * sizeof(uint64_t)), "count buffer");
		CK(cudaMalloc(&c->d_offsets, (ncap + 1) * sizeof(uint64_t)), "offset buffer");
		CK(cudaMalloc(&c->d_first, ncap * sizeof(ulonglong2)), "match buffer");
		CK(cudaMalloc(&c->d_start, ncap * sizeof(uint64_t)), "start buffer");
		CK(cudaMalloc(&c->d_rec, ncap * sizeof(QRec)), "result record buffer");
		CK(cudaMalloc(&c->d_cub, cub_need), "scan buffer");
		c->cub_bytes = cub_need;
		{
			size_t		sort_need = 0;

			CK(cub::DeviceRadixSort::SortPairs(NULL, sort_need, (uint32_t *) NULL, (uint32_t *) NULL,
											   (uint32_t *) NULL, (uint32_t *) NULL, (int64_t) ncap,
											   0, 32, c->stream), "sort size");
			for (int i = 0; i < 2; i++)
			{
				CK(cudaMalloc(&c->d_skeys[i], ncap * sizeof(uint32_t)), "sort buffer");
				CK(cudaMalloc(&c->d_perm[i], ncap * sizeof(uint32_t)), "sort buffer");
			}
			CK(cudaMalloc(&c->d_sort, sort_need), "sort buffer");
			c->sort_bytes = sort_need;
		}
		c->q_cap = ncap;
	}
	return 0;
}

/* device result buffers for n matches */
static int
reserve_result_buffers(GbtCudaCopy *c, size_t n)
{
	if (n <= c->out_cap)
		return 0;
	{
		size_t		ncap = n + n / 4 + 1024;

		cudaFree(c->d_out_keys);
		cudaFree(c->d_out_tids);
		c->d_out_keys = c->d_out_tids = NULL;
		c->out_cap = 0;
		CK(cudaMalloc(&c->d_out_keys, ncap * sizeof(uint64_t)), "result buffer");
		CK(cudaMalloc(&c->d_out_tids, ncap * sizeof(uint64_t)), "result buffer");
		c->out_cap = ncap;
	}
	return 0;
}

/* the parameters the count and leaf kernels share (TreeParams) */
static void
set_tree_params(TreeParams *p, const GbtCudaCopy *c, uint32_t root, uint64_t n,
				const uint32_t *perm, QRec *rec)
{
	p->pages = c->d_pages;
	p->nblocks = c->nblocks;
	p->root = root;
	p->queries = c->d_queries;
	p->perm = perm;
	p->n = n;
	p->counts = c->d_counts;
	p->first = c->d_first;
	p->start = c->d_start;
	p->rec = rec;
	p->err = c->d_err;
	p->maxhops = c->nblocks + 64;
}

/*
 * The count kernel on queries already on the device (c->d_queries).
 * group: 8 or 16 lanes per query; grid_blocks 0 = persistent grid.
 */
static cudaError_t
queue_count_pass(GbtCudaCopy *c, uint32_t root, uint64_t n, int group, int grid_blocks,
				 const uint32_t *perm, bool fast, const u64 *n_dev, QRec *rec)
{
	KParams		p;
	int			maxb = group == 16 ? c->count_blocks_g16 : c->count_blocks_g8;
	uint64_t	want = (n * (uint64_t) group + 255) / 256;

	set_tree_params(&p, c, root, n, perm, rec);
	p.n_dev = n_dev;
	if (grid_blocks <= 0)
		grid_blocks = maxb;
	if ((uint64_t) grid_blocks > want)
		grid_blocks = (int) (want ? want : 1);
	/*
	 * The leaf fast path pays off on sorted batches only (H100, 16M batch:
	 * sorted 3.2e9 -> 5.8e9 lookups/s; unsorted as given 6.0e8 -> 4.2e8).
	 */
	return launch_count_kernel(p, group, fast, grid_blocks, c->stream);
}

/* offsets = exclusive prefix sum of the counts (n + 1 of them) */
static cudaError_t
queue_prefix_sum(GbtCudaCopy *c, uint64_t n)
{
	size_t		bytes = c->cub_bytes;
	cudaError_t e = cudaMemsetAsync(c->d_counts + n, 0, sizeof(uint64_t), c->stream);

	if (e != cudaSuccess)
		return e;
	return cub::DeviceScan::ExclusiveSum(c->d_cub, bytes, c->d_counts, c->d_offsets,
										 (int64_t) n + 1, c->stream);
}

/* the fill kernel: the matches at their offsets, if they fit in cap */
static cudaError_t
queue_fill_pass(GbtCudaCopy *c, uint64_t n, uint64_t cap, bool keys)
{
	FParams		p;
	uint64_t	want = (n * 32 / 32 + 255) / 256;
	int			grid = c->fill_blocks;

	p.pages = c->d_pages;
	p.nblocks = c->nblocks;
	p.queries = c->d_queries;
	p.n = n;
	p.offsets = c->d_offsets;
	p.first = c->d_first;
	p.start = c->d_start;
	p.rec = c->rec_used ? c->d_rec : NULL;
	p.direct = c->direct_used ? c->d_err + 3 : NULL;
	p.out_keys = keys ? c->d_out_keys : NULL;
	p.out_tids = c->d_out_tids;
	p.cap = cap;
	p.err = c->d_err;
	p.maxhops = c->nblocks + 64;
	if ((uint64_t) grid > want)
		grid = (int) (want ? want : 1);
	return launch_fill_kernel(p, grid, c->stream);
}

/* the device error word as the last error; GBT_CUDA_ECORRUPT */
int
corrupt_copy_error(u64 err)
{
	unsigned	code = (unsigned) (err >> 32);

	gbt_cuda_set_error("inconsistent device copy at block %u: %s", (unsigned) err,
					   code < E_NCODES ? err_text[code] : "?");
	return GBT_CUDA_ECORRUPT;
}

/*
 * The shift that keeps the sort_bits bits of the low keys below the
 * highest bit in which a sample of them differ (one block).
 */
__global__ void
sort_shift_kernel(const GbtCudaQuery *q, uint64_t n, int bits, u64 *shift)
{
	__shared__ u64 acc;
	const uint64_t ns = n < 4096 ? n : 4096;
	const u64	k0 = q[0].lo_key;
	u64			x = 0;

	if (threadIdx.x == 0)
		acc = 0;
	__syncthreads();
	for (uint64_t i = threadIdx.x; i < ns; i += blockDim.x)
		x |= q[i * (n / ns)].lo_key ^ k0;
	atomicOr(&acc, x);
	__syncthreads();
	if (threadIdx.x == 0)
	{
		int			top = acc ? 64 - __clzll(acc) : 0;	/* bits in use */

		*shift = top > bits ? top - bits : 0;
	}
}

__global__ void
sort_keys_kernel(const GbtCudaQuery *q, uint32_t *keys, uint32_t *perm, uint64_t n, int bits,
				 const u64 *shiftp)
{
	const int	shift = (int) *shiftp;
	const uint32_t mask = bits >= 32 ? ~0u : (1u << bits) - 1;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		keys[i] = (uint32_t) (q[i].lo_key >> shift) & mask;
		perm[i] = (uint32_t) i;
	}
}

/* the counts of the records, for the prefix sum */
__global__ void
rec_counts_kernel(const QRec *rec, uint64_t *counts, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		counts[i] = rec[i].count;
}

/* the leaf kernel on a sorted (perm NULL) or device-sorted batch */
static cudaError_t
queue_leaf_pass(GbtCudaCopy *c, uint32_t root, uint64_t n, const uint32_t *perm, bool direct, bool keys)
{
	LParams		p;
	uint64_t	want = (n + 255) / 256;	/* 8 warps of 32 queries */
	int			grid = c->leaf_blocks;

	set_tree_params(&p, c, root, n, perm, perm ? c->d_rec : NULL);
	p.out_keys = direct && keys ? c->d_out_keys : NULL;
	p.out_tids = direct ? c->d_out_tids : NULL;
	p.multi = c->d_err + 3;
	p.list = c->d_skeys[0];
	p.nlist = c->d_err + 1;
	if ((uint64_t) grid > want)
		grid = (int) (want ? want : 1);
	return launch_leaf_kernel(p, perm != NULL, grid, c->stream);
}

/* the walk kernels (a copy with posting leaves): count, or fill into cap */
static cudaError_t
queue_walk_pass(GbtCudaCopy *c, uint32_t root, uint64_t n, uint64_t cap, bool keys, bool fill)
{
	WParams		p;

	p.pages = c->d_pages;
	p.nblocks = c->nblocks;
	p.root = root;
	p.queries = c->d_queries;
	p.n = n;
	p.counts = c->d_counts;
	p.offsets = c->d_offsets;
	p.out_keys = keys ? c->d_out_keys : NULL;
	p.out_tids = c->d_out_tids;
	p.cap = cap;
	p.err = c->d_err;
	p.maxhops = c->nblocks + 64;
	return launch_walk_kernel(p, fill, c->stream);
}

/*
 * The device phases on queries already in c->d_queries: optional sort of
 * an unsorted batch by sort_bits bits of the low key (neighbouring queries
 * then share leaves; results still come out in batch order), count (leaf
 * kernel, then count kernel on what it leaves; as given: count kernel),
 * prefix sum, and fill into c->d_out_* when fill_cap is
 * not 0 (the fill kernel does nothing when the total exceeds fill_cap).
 */
static cudaError_t
queue_lookup_phases(GbtCudaCopy *c, uint32_t root, uint64_t n, int sorted, int group,
					uint64_t fill_cap, bool keys)
{
	cudaError_t e;
	const uint32_t *perm = NULL;

	/* error word, list length, sort shift, direct-path flag */
	e = cudaMemsetAsync(c->d_err, 0, 4 * sizeof(u64), c->stream);
	c->rec_used = false;
	c->direct_used = false;
	if (c->posting)
	{
		/* posting leaves: the walk kernels, queries as given */
		if (e == cudaSuccess)
			e = queue_walk_pass(c, root, n, 0, keys, false);
		if (e == cudaSuccess)
			e = queue_prefix_sum(c, n);
		if (e == cudaSuccess && fill_cap)
			e = queue_walk_pass(c, root, n, fill_cap, keys, true);
		return e;
	}
	if (e == cudaSuccess && !sorted && n >= c->sort_min)
	{
		size_t		bytes = c->sort_bytes;

		sort_shift_kernel<<<1, 256, 0, c->stream>>>(c->d_queries, n, c->sort_bits, c->d_err + 2);
		sort_keys_kernel<<<(unsigned) std::min<uint64_t>((n + 255) / 256, 4096), 256, 0, c->stream>>>(
			c->d_queries, c->d_skeys[0], c->d_perm[0], n, c->sort_bits, c->d_err + 2);
		e = cudaGetLastError();
		if (e == cudaSuccess)
			e = cub::DeviceRadixSort::SortPairs(c->d_sort, bytes, c->d_skeys[0], c->d_skeys[1],
												c->d_perm[0], c->d_perm[1], (int64_t) n, 0,
												c->sort_bits, c->stream);
		perm = c->d_perm[1];
		sorted = 1;
	}
	if (e == cudaSuccess && sorted && n >= LEAF_DENSITY * (uint64_t) c->nblocks)
	{
		/*
		 * Sorted order: the leaf kernel resolves the queries lying in one
		 * leaf; count_kernel takes the rest from the list it leaves (in
		 * d_skeys[0], free once the sort is done).
		 */
		/*
		 * Direct path (sorted batches whose results fit the device buffer):
		 * the leaf kernel also writes each single match at its query's
		 * position, and the fill pass is skipped when every count is 1.
		 */
		c->direct_used = !perm && fill_cap && n <= c->out_cap;
		e = queue_leaf_pass(c, root, n, perm, c->direct_used, keys);
		if (e == cudaSuccess)
			e = queue_count_pass(c, root, n, group ? group : lanes_per_query(1), 0, c->d_skeys[0],
								 true, c->d_err + 1, perm ? c->d_rec : NULL);
	}
	else if (e == cudaSuccess)
		e = queue_count_pass(c, root, n, group ? group : lanes_per_query(sorted), 0, perm,
							 sorted != 0, NULL, perm ? c->d_rec : NULL);
	c->rec_used = perm != NULL;
	if (e == cudaSuccess && perm)
	{
		rec_counts_kernel<<<(unsigned) std::min<uint64_t>((n + 255) / 256, 4096), 256, 0, c->stream>>>(
			c->d_rec, c->d_counts, n);
		e = cudaGetLastError();
	}
	if (e == cudaSuccess)
		e = queue_prefix_sum(c, n);
	if (e == cudaSuccess && fill_cap)
		e = queue_fill_pass(c, n, fill_cap, keys);
	return e;
}

/* point keys (sorted, distinct) to equality queries */
__global__ void
points_to_queries(const uint64_t *keys, GbtCudaQuery *q, uint32_t n)
{
	uint32_t	i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		uint64_t	k = keys[i];

		q[i].lo_key = k;
		q[i].lo_tid = 0;
		q[i].hi_key = k;
		q[i].hi_tid = ~(uint64_t) 0;
	}
}

/*
 * GBT_CUDA_POINTS batches: n point keys in any order, repeats allowed, to
 * c->d_queries as a sorted batch of distinct equality queries; *nu gets
 * their number.  The keys go through d_first (room for 2n keys) and
 * d_start, which the lookup phases overwrite only later.
 */
static int
load_point_batch(GbtCudaCopy *c, const uint64_t *keys, uint32_t n, uint32_t *nu)
{
	uint64_t   *in = (uint64_t *) c->d_first;
	cub::DoubleBuffer<uint64_t> buf(in, in + n);
	size_t		sort_need = 0,
				uniq_need = 0,
				need;
	int64_t    *d_num = (int64_t *) c->d_offsets;

	CK(cudaMemcpyAsync(in, keys, (size_t) n * sizeof(uint64_t), cudaMemcpyHostToDevice, c->stream),
	   "copying point keys");
	CK(cub::DeviceRadixSort::SortKeys(NULL, sort_need, buf, (int64_t) n, 0, 64, c->stream), "sort size");
	CK(cub::DeviceSelect::Unique(NULL, uniq_need, (uint64_t *) NULL, (uint64_t *) NULL,
								 d_num, (int64_t) n, c->stream), "unique size");
	need = std::max(sort_need, uniq_need);
	CK(grow_device_scratch(&c->d_pts, &c->pts_bytes, need, 1), "point sort buffer");
	sort_need = c->pts_bytes;
	CK(cub::DeviceRadixSort::SortKeys(c->d_pts, sort_need, buf, (int64_t) n, 0, 64, c->stream),
	   "sorting point keys");
	uniq_need = c->pts_bytes;
	CK(cub::DeviceSelect::Unique(c->d_pts, uniq_need, buf.Current(), c->d_start, d_num,
								 (int64_t) n, c->stream), "point keys unique");
	CK(cudaMemcpyAsync(&c->h_small[0], d_num, sizeof(u64), cudaMemcpyDeviceToHost, c->stream),
	   "point keys unique");
	CK(cudaStreamSynchronize(c->stream), "point keys");
	*nu = (uint32_t) c->h_small[0];
	if (*nu > 0)
	{
		points_to_queries<<<(*nu + 255) / 256, 256, 0, c->stream>>>(c->d_start, c->d_queries, *nu);
		CK(cudaGetLastError(), "point queries");
	}
	return 0;
}

extern "C" int
gbt_cuda_lookup(GbtCudaCopy *c, uint32_t root, const GbtCudaQuery *queries, uint32_t n,
				int sorted, uint64_t *offsets, uint64_t *out_keys, uint64_t *out_tids,
				uint64_t out_capacity, uint64_t *out_total)
{
	int			rc;
	bool		filled;
	uint64_t	total;

	if (out_total)
		*out_total = 0;
	if (!c || !offsets || !out_total || (n && !queries) || (out_capacity && !out_tids))
	{
		gbt_cuda_set_error("gbt_cuda_lookup: NULL argument");
		return GBT_CUDA_EINVAL;
	}
	if (root >= c->nblocks || root == GBT_META_BLKNO)
	{
		gbt_cuda_set_error("root block %u out of range (copy has %u blocks)", root, c->nblocks);
		return GBT_CUDA_ECORRUPT;
	}
	if (n == 0)
	{
		offsets[0] = 0;
		return 0;
	}
	if ((rc = reserve_lookup_workspace(c, n)) != 0)
		return rc;
	/* room for a one-pass fill when the device buffer already covers it */
	filled = out_capacity <= c->out_cap;

	if (sorted == GBT_CUDA_POINTS)
	{
		if ((rc = load_point_batch(c, (const uint64_t *) queries, n, &n)) != 0)
			return rc;
		sorted = 1;
		if (n == 0)
		{
			offsets[0] = 0;
			return 0;
		}
	}
	else
		CK(cudaMemcpyAsync(c->d_queries, queries, (size_t) n * sizeof(GbtCudaQuery),
						   cudaMemcpyHostToDevice, c->stream), "copying queries");
	CK(queue_lookup_phases(c, root, n, sorted, 0, filled ? out_capacity : 0, out_keys != NULL), "lookup kernels");
	CK(cudaMemcpyAsync(&c->h_small[0], c->d_err, sizeof(u64), cudaMemcpyDeviceToHost, c->stream),
	   "lookup");
	CK(cudaMemcpyAsync(&c->h_small[1], c->d_offsets + n, sizeof(u64), cudaMemcpyDeviceToHost,
					   c->stream), "lookup");
	CK(cudaMemcpyAsync(offsets, c->d_offsets, ((size_t) n + 1) * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, c->stream), "copying offsets");
	CK(cudaStreamSynchronize(c->stream), "lookup");
	if (c->h_small[0] != 0)
		return corrupt_copy_error(c->h_small[0]);
	total = c->h_small[1];
	*out_total = total;
	if (total > out_capacity)
		return GBT_CUDA_ESPACE;
	if (total == 0)
		return 0;
	if (!filled)
	{
		if ((rc = reserve_result_buffers(c, total)) != 0)
			return rc;
		if (c->posting)
			CK(queue_walk_pass(c, root, n, total, out_keys != NULL, true), "walk fill kernel");
		else
			CK(queue_fill_pass(c, n, total, out_keys != NULL), "fill kernel");
		CK(cudaMemcpyAsync(&c->h_small[0], c->d_err, sizeof(u64), cudaMemcpyDeviceToHost,
						   c->stream), "lookup");
	}
	if (out_keys)
		CK(cudaMemcpyAsync(out_keys, c->d_out_keys, total * sizeof(uint64_t),
						   cudaMemcpyDeviceToHost, c->stream), "copying results");
	CK(cudaMemcpyAsync(out_tids, c->d_out_tids, total * sizeof(uint64_t),
					   cudaMemcpyDeviceToHost, c->stream), "copying results");
	CK(cudaStreamSynchronize(c->stream), "lookup");
	if (c->h_small[0] != 0)
	{
		*out_total = 0;
		return corrupt_copy_error(c->h_small[0]);
	}
	return 0;
}
