/*
 * gbtree_cuda.cu
 *	  Device side of gbtree.  For now: device probe and the warp-wide
 *	  block count (one 16-slot block per query, one lane per slot, a
 *	  ballot), the building block of the batched descent to come.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "gbtree_cuda.h"

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

/* 16 lanes per query: lane i compares slot i, a ballot counts them */
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
