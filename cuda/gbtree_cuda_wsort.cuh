/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_wsort.cuh
 *	  The device sort of multi-word entries (src/README, "Multi-word
 *	  keys"): nwords key-word arrays and a TID array, sorted together by
 *	  (words, TID), as src/gbtree_wsort.h sorts them on the CPU.
 *
 * The entries stay in their column arrays (each word's array, then the
 * TIDs), as the one-word device sort keeps keys and TIDs apart.  A
 * permutation is sorted instead, one stable CUB radix sort per column,
 * least significant first: the TID's bits 16..63 (skipped when the input
 * is in TID order, as a heap scan delivers it), then the last word up to
 * the first, each column gathered in the current order before its pass.
 * A last gather puts every column in the final order.
 *
 * A step of multi-word builds on the GPU: cuda/test/test_wsort.cu checks
 * it against gbtree_wsort.h; the library's build does not use it yet.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_CUDA_WSORT_CUH
#define GBTREE_CUDA_WSORT_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <cub/device/device_radix_sort.cuh>

extern "C"
{
#include "gbtree_node.h"
}

__global__ static void
wsort_iota(uint32_t *perm, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		perm[i] = (uint32_t) i;
}

__global__ static void
wsort_gather(uint64_t *out, const uint64_t *col, const uint32_t *perm, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		out[i] = col[perm[i]];
}

/*
 * Sort cols[0..nwords) (the key words) and cols[nwords] (the TIDs), each
 * n long on the device, by (words, TID >> 16).  n < 2^32.
 */
static inline cudaError_t
gbt_cuda_wsort(uint64_t *const *cols, uint64_t n, int nwords, bool tid_sorted,
			   cudaStream_t stream)
{
	uint64_t   *keys[2] = {NULL, NULL};
	uint32_t   *perm[2] = {NULL, NULL};
	void	   *temp = NULL;
	size_t		temp_bytes = 0;
	cudaError_t e;
	int			grid = 1024;

	if (n < 2)
		return cudaSuccess;
#define WS_TRY(call) do { e = (call); if (e != cudaSuccess) goto done; } while (0)
	WS_TRY(cudaMalloc(&keys[0], n * sizeof(uint64_t)));
	WS_TRY(cudaMalloc(&keys[1], n * sizeof(uint64_t)));
	WS_TRY(cudaMalloc(&perm[0], n * sizeof(uint32_t)));
	WS_TRY(cudaMalloc(&perm[1], n * sizeof(uint32_t)));
	{
		cub::DoubleBuffer<uint64_t> k(keys[0], keys[1]);
		cub::DoubleBuffer<uint32_t> p(perm[0], perm[1]);

		WS_TRY(cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, k, p, (int64_t) n, 0, 64, stream));
		WS_TRY(cudaMalloc(&temp, temp_bytes));
		wsort_iota<<<grid, 256, 0, stream>>>(p.Current(), n);
		WS_TRY(cudaGetLastError());
		/* least significant column first: the TID, then the last word up */
		for (int c = tid_sorted ? nwords - 1 : nwords; c >= 0; c--)
		{
			wsort_gather<<<grid, 256, 0, stream>>>(k.Current(), cols[c], p.Current(), n);
			WS_TRY(cudaGetLastError());
			WS_TRY(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k, p, (int64_t) n,
												   c == nwords ? 16 : 0, 64, stream));
		}
		/* every column into the final order, through the free key buffer */
		for (int c = 0; c <= nwords; c++)
		{
			wsort_gather<<<grid, 256, 0, stream>>>(k.Alternate(), cols[c], p.Current(), n);
			WS_TRY(cudaGetLastError());
			WS_TRY(cudaMemcpyAsync(cols[c], k.Alternate(), n * sizeof(uint64_t),
								   cudaMemcpyDeviceToDevice, stream));
		}
		WS_TRY(cudaStreamSynchronize(stream));
	}
done:
#undef WS_TRY
	cudaFree(keys[0]);
	cudaFree(keys[1]);
	cudaFree(perm[0]);
	cudaFree(perm[1]);
	cudaFree(temp);
	return e;
}

#endif							/* GBTREE_CUDA_WSORT_CUH */
