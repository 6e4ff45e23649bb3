/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_host.cuh
 *	  Host side shared by the files of libgbtree_cuda.so: the state of a
 *	  device copy, its lookup defaults, the error channel behind
 *	  gbt_cuda_last_error(), and the freeing and growth of device buffers.
 *
 * Private to cuda/.  gbtree_cuda.cu creates copies and ships pages to
 * them, gbtree_cuda_lookup.cu runs batched lookups on them, and
 * gbtree_cuda_sort.cu finds the leaves of sorted entries in them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_CUDA_HOST_CUH
#define GBTREE_CUDA_HOST_CUH

#include "gbtree_cuda_kernels.cuh"

/*
 * Unsorted batches of at least this many queries are sorted on the device
 * first (environment GBT_CUDA_SORT_MIN overrides, read at copy creation).
 */
#define SORT_MIN_BATCH 16384

/*
 * The device sort orders by this many bits of the low key, taken below the
 * highest bit in which a sample of the batch's low keys differ: enough to
 * order the batch at leaf granularity (a 100M-entry index has ~2^18
 * leaves), in fewer radix passes than the whole key.  Any order gives the
 * same answer; the sort only buys locality.
 */
#ifndef SORT_BITS
#define SORT_BITS 24
#endif

/* a device copy (opaque in gbtree_cuda.h) and the scratch of its calls */
struct GbtCudaCopy
{
	int			device;
	cudaStream_t stream;
	char	   *d_pages;
	uint32_t	nblocks;

	/* put_pages staging */
	char	   *d_stage;
	uint32_t   *d_blknos;
	size_t		stage_cap;		/* pages */

	/* lookup workspace */
	size_t		q_cap;			/* queries */
	GbtCudaQuery *d_queries;
	uint64_t   *d_counts;		/* q_cap + 1 */
	uint64_t   *d_offsets;		/* q_cap + 1 */
	ulonglong2 *d_first;
	uint64_t   *d_start;
	QRec	   *d_rec;			/* device-sorted batches: results by record */
	bool		rec_used;		/* the last count pass wrote d_rec */
	bool		direct_used;	/* the last count pass wrote results directly */
	bool		posting;		/* a page in posting form was put: the walk kernels
								 * serve its lookups (gbtree_cuda_posting.cu) */
	void	   *d_cub;
	size_t		cub_bytes;
	uint32_t   *d_skeys[2];		/* unsorted batches: sort keys and order */
	uint32_t   *d_perm[2];
	void	   *d_sort;
	size_t		sort_bytes;
	void	   *d_pts;			/* point batches: CUB sort and unique scratch */
	size_t		pts_bytes;
	size_t		out_cap;
	uint64_t   *d_out_keys;
	uint64_t   *d_out_tids;
	u64		   *d_err;			/* [0] error word, [1] list length, [2] sort shift,
								 * [3] direct path incomplete */
	u64		   *h_small;		/* pinned: [0] err, [1] total */
	int			sort_bits;		/* low-key bits the device sort orders by */

	uint64_t	sort_min;		/* see SORT_MIN_BATCH */
	/* multi-word lookups (gbtree_cuda_wlookup.cu) */
	size_t		wq_cap;			/* queries */
	uint64_t   *d_wqueries;		/* wq_cap x 2 x GBT_MAX_KEY_WORDS words */
	uint64_t   *d_wcounts;		/* wq_cap + 1 */
	uint64_t   *d_woffsets;		/* wq_cap + 1 */
	void	   *d_wcub;
	size_t		wcub_bytes;
	size_t		wout_cap;		/* matches */
	uint64_t   *d_wout_words;	/* wout_cap x GBT_MAX_KEY_WORDS */
	uint64_t   *d_wout_tids;

	int			count_blocks_g8;	/* persistent grid sizes */
	int			count_blocks_g16;
	int			leaf_blocks;
	int			fill_blocks;
};

/*
 * gbtree_cuda.cu: the calling thread's last error (gbt_cuda_last_error()),
 * set from a format or from a failed CUDA call (then returning the
 * GBT_CUDA_E* code for it).
 */
extern void gbt_cuda_set_error(const char *fmt,...);
extern GBT_CUDA_PRIVATE int gbt_cuda_fail(cudaError_t e, const char *what);

#define CK(call, what) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return gbt_cuda_fail(e_, what); } while (0)

/*
 * Device scratch that only grows: when need units of unit bytes exceed
 * *cap, *p is replaced by a buffer of need units, its contents not kept
 * (*cap is 0 on failure).
 */
template <typename T, typename N>
static inline cudaError_t
grow_device_scratch(T **p, N *cap, uint64_t need, size_t unit)
{
	cudaError_t e;

	if (need <= *cap)
		return cudaSuccess;
	cudaFree(*p);
	*p = NULL;
	*cap = 0;
	e = cudaMalloc(p, (size_t) need * unit);
	if (e == cudaSuccess)
		*cap = (N) need;
	return e;
}

/*
 * gbtree_cuda_lookup.cu: frees a copy's lookup workspace (the per-query
 * buffers and the CUB scratch sized with them) and sets its capacity to 0
 */
extern GBT_CUDA_PRIVATE void free_lookup_workspace(GbtCudaCopy *c);

/* gbtree_cuda_lookup.cu: the device error word as the last error */
extern GBT_CUDA_PRIVATE int corrupt_copy_error(u64 err);

/* gbtree_cuda_wlookup.cu: frees a copy's multi-word lookup scratch */
extern GBT_CUDA_PRIVATE void free_words_workspace(GbtCudaCopy *c);

/* gbtree_cuda.cu: a copy's page array on the device, and its capacity */
extern const char *gbt_cuda_copy_device_pages(const GbtCudaCopy *c, uint32_t *nblocks);

#endif							/* GBTREE_CUDA_HOST_CUH */
