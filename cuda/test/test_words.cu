/*
 * test_words.cu
 *	  The device's in-page search on multi-word pages
 *	  (cuda/gbtree_cuda_words.cuh) against the CPU's (src/node.c,
 *	  gbt_node_lower_bound_entry_words), probe by probe.  Pages of 2, 3
 *	  and 4 words, leaves and inner pages, built by node.c from random
 *	  inserts and deletes (gaps anywhere), reloads packed at the front,
 *	  and full pages; keys that tie in all words but the last; probes at
 *	  existing entries, between them, and at the extremes.
 *
 *	  test_words    Last line: "N passed, N failed"; exit status 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "test_common.h"

#include "gbtree_cuda_words.cuh"

extern "C"
{
#include "gbtree_simd.h"
}

/* words that often tie in all but the last, with the extremes */
static void
rand_key(uint64_t *key, int nw)
{
	for (int k = 0; k < nw; k++)
	{
		uint64_t	r = xrand() % 8;

		if (k < nw - 1 && r < 5)
			key[k] = xrand() % 3;
		else if (r == 5)
			key[k] = 0;
		else if (r == 6)
			key[k] = UINT64_MAX;
		else
			key[k] = xrand() % 1000;
	}
}

struct Probe
{
	uint32_t	page;
	uint32_t	pad;
	uint64_t	tid;
	uint64_t	key[GBT_MAX_KEY_WORDS];
};

__global__ void
search_kernel(const char *pages, const Probe *probes, int nprobes, int nwords, bool leaf,
			  int *out)
{
	int			warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	uint64_t	x[GBT_MAX_KEY_WORDS];
	WordsPage	p;
	int			r;

	if (warp >= nprobes)
		return;
	for (int k = 0; k < GBT_MAX_KEY_WORDS; k++)
		x[k] = probes[warp].key[k];
	p = words_page(pages + (size_t) probes[warp].page * GBT_PAGE_SIZE, nwords, leaf);
	r = words_lower_bound_entry(p, x, probes[warp].tid);
	if ((threadIdx.x & 31) == 0)
		out[warp] = r;
}

/*
 * a page of nw words built as the access method's writers would; dir32:
 * in the layout of pages written before GBT_F_DIRFIT
 */
static void
build_page(char *page, int nw, bool leaf, int kind, bool dir32,
		   std::vector<std::vector<uint64_t>> &entries)
{
	GbtNode		node;
	uint64_t	key[GBT_MAX_KEY_WORDS] = {0};

	gbt_node_format_layout(page, leaf, leaf ? 0 : 1, dir32 ? 0 : GBT_F_DIRFIT, nw);
	gbt_node_view(page, &node);
	/* kind 0: random inserts and deletes; 1: full; 2: packed reload */
	int			target = kind == 1 ? node.nslots : (int) (xrand() % (node.nslots + 1));

	for (int i = 0; node.opaque->nused < target && i < 4 * node.nslots; i++)
	{
		uint64_t	tid = ((xrand() % 100000) + 1) << 16;
		int			at;

		rand_key(key, nw);
		/* (key, TID) pairs are unique in an index: skip a repeat */
		at = gbt_node_next_used(&node, gbt_node_lower_bound_entry_words(&node, key, tid));
		if (at < node.nslots && node.tids[at] == tid && node.keys[at] == key[0] &&
			(nw < 2 || node.xkeys[0][at] == key[1]) && (nw < 3 || node.xkeys[1][at] == key[2]) &&
			(nw < 4 || node.xkeys[2][at] == key[3]))
			continue;
		gbt_node_insert_words(&node, key, tid, 7);
		if (kind == 0 && node.opaque->nused > 4 && xrand() % 4 == 0)
		{
			int			s = gbt_node_next_used(&node, (int) (xrand() % node.nslots));

			if (s < node.nslots)
				gbt_node_delete_slot(&node, s);
		}
	}
	if (kind == 2)
	{
		std::vector<uint64_t> k(GBT_MAX_SLOT_WORDS),
					t(GBT_MAX_SLOTS);
		std::vector<uint32_t> c(GBT_MAX_SLOTS);
		int			n = gbt_node_extract(&node, k.data(), t.data(), c.data());

		gbt_node_format_layout(page, leaf, leaf ? 0 : 1, dir32 ? 0 : GBT_F_DIRFIT, nw);
		gbt_node_view(page, &node);
		gbt_node_load_spread(&node, n, k.data(), t.data(), leaf ? NULL : c.data(), false);
	}
	EXPECT(gbt_node_check(&node) == NULL, "page check: %s", gbt_node_check(&node));
	entries.clear();
	for (int s = gbt_node_first_used(&node); s < node.nslots; s = gbt_node_next_used(&node, s + 1))
	{
		std::vector<uint64_t> e(GBT_MAX_KEY_WORDS + 1, 0);

		e[0] = node.keys[s];
		for (int k = 1; k < nw; k++)
			e[k] = node.xkeys[k - 1][s];
		e[GBT_MAX_KEY_WORDS] = node.tids[s];
		entries.push_back(e);
	}
}

int
main(void)
{
	const int	npages = 512;
	const int	per_page = 48;
	char	   *h_pages;
	char	   *d_pages;
	Probe	   *d_probes;
	int		   *d_out;

	rng = 0x9E3779B97F4A7C15ULL;
	gbt_simd_set(gbt_simd_best());
	h_pages = (char *) aligned_alloc(64, (size_t) npages * GBT_PAGE_SIZE);
	CUDA_OK(cudaMalloc(&d_pages, (size_t) npages * GBT_PAGE_SIZE));
	CUDA_OK(cudaMalloc(&d_probes, sizeof(Probe) * npages * per_page));
	CUDA_OK(cudaMalloc(&d_out, sizeof(int) * npages * per_page));
	for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
		for (int leaf = 0; leaf <= 1; leaf++)
		{
			std::vector<Probe> probes;
			std::vector<int> want;
			std::vector<int> got(npages * per_page);
			std::vector<std::vector<uint64_t>> entries;
			int			mism = 0;

			for (int pg = 0; pg < npages; pg++)
			{
				char	   *page = h_pages + (size_t) pg * GBT_PAGE_SIZE;
				GbtNode		node;

				build_page(page, nw, leaf, pg % 3, (pg / 3) % 2 == 1, entries);
				gbt_node_view(page, &node);
				for (int q = 0; q < per_page; q++)
				{
					Probe		pr;

					memset(&pr, 0, sizeof(pr));
					pr.page = (uint32_t) pg;
					if (!entries.empty() && q % 3 == 0)
					{
						const std::vector<uint64_t> &e = entries[xrand() % entries.size()];

						for (int k = 0; k < nw; k++)
							pr.key[k] = e[k];
						pr.tid = e[GBT_MAX_KEY_WORDS] + (xrand() % 3) - 1;	/* at, just below, just above */
					}
					else
					{
						rand_key(pr.key, nw);
						pr.tid = q % 3 == 1 ? 0 : (q % 3 == 2 ? UINT64_MAX : xrand());
					}
					if (q == 1)
						memset(pr.key, 0, sizeof(pr.key));
					if (q == 2)
						memset(pr.key, 0xFF, sizeof(pr.key));
					probes.push_back(pr);
					want.push_back(gbt_node_lower_bound_entry_words(&node, pr.key, pr.tid));
				}
			}
			CUDA_OK(cudaMemcpy(d_pages, h_pages, (size_t) npages * GBT_PAGE_SIZE,
							   cudaMemcpyHostToDevice));
			CUDA_OK(cudaMemcpy(d_probes, probes.data(), sizeof(Probe) * probes.size(),
							   cudaMemcpyHostToDevice));
			search_kernel<<<(int) (probes.size() * 32 + 255) / 256, 256>>>(d_pages, d_probes,
																	   (int) probes.size(), nw,
																	   leaf != 0, d_out);
			CUDA_OK(cudaGetLastError());
			CUDA_OK(cudaMemcpy(got.data(), d_out, sizeof(int) * probes.size(),
							   cudaMemcpyDeviceToHost));
			for (size_t i = 0; i < probes.size(); i++)
				if (got[i] != want[i] && mism++ < 5)
					printf("  probe %zu (page %u): device %d, node.c %d\n", i, probes[i].page,
						   got[i], want[i]);
			EXPECT(mism == 0, "%d words, %s: %d of %zu probes differ", nw, leaf ? "leaves" : "inner pages",
				   mism, probes.size());
			printf("%d words, %s: %zu probes, %d differ\n", nw, leaf ? "leaves" : "inner pages",
				   probes.size(), mism);
		}
	cudaFree(d_pages);
	cudaFree(d_probes);
	cudaFree(d_out);
	free(h_pages);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
