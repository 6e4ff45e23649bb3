/*
 * test_wsort.cu
 *	  The device sort of multi-word entries (cuda/gbtree_cuda_wsort.cuh)
 *	  against the CPU's (src/gbtree_wsort.h), entry by entry: 1 to 4 key
 *	  words, ties in the leading words, input in and out of TID order,
 *	  sizes from 1 to 10M; and the time of each at 10M entries.
 *
 *	  test_wsort    Last line: "N passed, N failed"; exit status 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <chrono>
#include <vector>

#include "test_common.h"

#include "gbtree_cuda_wsort.cuh"

extern "C"
{
#include "gbtree_wsort.h"
}

static double
ms_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int
main(void)
{
	static const uint64_t sizes[] = {1, 2, 1000, 65537, 1000000, 10000000};

	rng = 0x2545F4914F6CDD1DULL;
	for (int nw = 1; nw <= 4; nw++)
		for (int si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
			for (int tid_order = 0; tid_order <= 1; tid_order++)
			{
				uint64_t	n = sizes[si];
				int			stride = nw + 1;
				std::vector<uint64_t> rows(n * stride),
							scratch(n * stride);
				std::vector<size_t> hist(gbt_wsort_hist_size(nw));
				std::vector<uint64_t> back(n);
				uint64_t   *cols[GBT_WSORT_MAX_STRIDE];
				bool		same = true;
				float		dev_ms = 0;
				double		cpu_ms;
				cudaEvent_t ev0,
							ev1;
				cudaError_t e;

				if (n == 10000000 && nw != 2)
					continue;	/* the large size once: (int4, timestamptz), uuid */
				for (uint64_t i = 0; i < n; i++)
				{
					uint64_t   *r = &rows[i * stride];

					for (int k = 0; k < nw; k++)
						r[k] = k < nw - 1 ? xrand() % 4 : xrand();
					r[nw] = (tid_order ? i : (xrand() % (n * 4))) << 16 | (xrand() & 1);
				}
				/* device columns */
				for (int c = 0; c <= nw; c++)
				{
					std::vector<uint64_t> col(n);

					for (uint64_t i = 0; i < n; i++)
						col[i] = rows[i * stride + c];
					cudaMalloc(&cols[c], n * sizeof(uint64_t));
					cudaMemcpy(cols[c], col.data(), n * sizeof(uint64_t), cudaMemcpyHostToDevice);
				}
				cudaEventCreate(&ev0);
				cudaEventCreate(&ev1);
				cudaEventRecord(ev0);
				e = gbt_cuda_wsort(cols, n, nw, tid_order != 0, 0);
				cudaEventRecord(ev1);
				cudaEventSynchronize(ev1);
				cudaEventElapsedTime(&dev_ms, ev0, ev1);
				EXPECT(e == cudaSuccess, "device sort: %s", cudaGetErrorString(e));
				{
					auto		t0 = std::chrono::steady_clock::now();

					gbt_wsort(rows.data(), scratch.data(), n, nw, hist.data(), NULL);
					cpu_ms = ms_since(t0);
				}
				/*
				 * Equal (words, TID >> 16) never happens with distinct TIDs;
				 * random TIDs may repeat, and then both sorts keep input order
				 * (both are stable), so the results must still agree.
				 */
				for (int c = 0; c <= nw && same; c++)
				{
					cudaMemcpy(back.data(), cols[c], n * sizeof(uint64_t), cudaMemcpyDeviceToHost);
					for (uint64_t i = 0; i < n && same; i++)
						same = back[i] == rows[i * stride + c];
				}
				EXPECT(same, "%d words, %llu entries, %s: device and CPU orders differ", nw,
					   (unsigned long long) n, tid_order ? "TID order" : "random TIDs");
				if (n >= 1000000)
					printf("%d words, %llu entries, %s: device %.1f ms, CPU (one core) %.1f ms\n",
						   nw, (unsigned long long) n, tid_order ? "TID order" : "random TIDs",
						   dev_ms, cpu_ms);
				for (int c = 0; c <= nw; c++)
					cudaFree(cols[c]);
				cudaEventDestroy(ev0);
				cudaEventDestroy(ev1);
			}
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
