/*
 * bench_node.c
 *	  ns per in-page search: gbtree's two-step branchless count (each SIMD
 *	  implementation) against a binary search over the same page that
 *	  calls a comparison function through a pointer per probe, the way
 *	  nbtree's _bt_compare reaches the type's comparator.  Pages in cache
 *	  (one page searched repeatedly) and out of cache (random pages of a
 *	  256 MB pool).
 *
 *	  make bench-node   (prints a table; see test/bench/README)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gbtree_node.h"
#include "gbtree_simd.h"
#include "bench_util.h"

#define NQUERIES	(1 << 22)
#define POOL_PAGES	32768		/* 256 MB */

/* what nbtree does per probe: an out-of-line comparator call */
typedef int (*cmp_fn) (const void *a, const void *b);

__attribute__((noinline)) static int
int8_cmp(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* binary search over the used entries (dense, as an nbtree page's items) */
static int
binsearch(const int64_t *items, int n, int64_t x, cmp_fn cmp)
{
	int			lo = 0,
				hi = n;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (cmp(&items[mid], &x) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static char *
make_pages(int npages, int64_t **dense)
{
	char	   *pool = aligned_alloc(64, (size_t) npages * GBT_PAGE_SIZE);
	uint64_t	k[GBT_LEAF_SLOTS],
				t[GBT_LEAF_SLOTS];
	int			n = GBT_LEAF_SLOTS * 9 / 10;	/* fillfactor 90 */

	*dense = malloc(sizeof(int64_t) * (size_t) npages * GBT_LEAF_SLOTS);
	for (int p = 0; p < npages; p++)
	{
		GbtNode		node;
		char	   *page = pool + (size_t) p * GBT_PAGE_SIZE;
		uint64_t	base = xrand() >> 8;

		for (int i = 0; i < n; i++)
		{
			base += 1 + xrand() % 1000;
			k[i] = base;
			t[i] = (uint64_t) (i + 1) << 16;
			(*dense)[(size_t) p * GBT_LEAF_SLOTS + i] = (int64_t) (base ^ UINT64_C(0x8000000000000000));
		}
		gbt_node_format(page, true, 0, 0);
		gbt_node_view(page, &node);
		gbt_node_load(&node, n, k, t, NULL);
	}
	return pool;
}

int
main(int argc, char **argv)
{
	int64_t    *dense;
	char	   *pool = make_pages(POOL_PAGES, &dense);
	uint32_t   *qpage = malloc(sizeof(uint32_t) * NQUERIES);
	uint64_t   *qkey = malloc(sizeof(uint64_t) * NQUERIES);
	int			n = GBT_LEAF_SLOTS * 9 / 10;
	volatile long sink = 0;

	printf("| implementation | in cache (ns/search) | out of cache (ns/search) |\n");
	printf("|---|---|---|\n");
	for (int variant = -1; variant <= (int) gbt_simd_best(); variant++)
	{
		double		res[2];

		if (variant >= 0)
			gbt_simd_set((GbtSimdLevel) variant);
		for (int mode = 0; mode < 2; mode++)
		{
			double		t0,
						t1;

			for (int i = 0; i < NQUERIES; i++)
			{
				uint32_t	p = mode == 0 ? 0 : (uint32_t) (xrand() % POOL_PAGES);

				qpage[i] = p;
				qkey[i] = (uint64_t) dense[(size_t) p * GBT_LEAF_SLOTS + xrand() % n] ^
					UINT64_C(0x8000000000000000);
			}
			t0 = now_ns();
			for (int i = 0; i < NQUERIES; i++)
			{
				if (variant < 0)
					sink += binsearch(dense + (size_t) qpage[i] * GBT_LEAF_SLOTS, n,
									  (int64_t) (qkey[i] ^ UINT64_C(0x8000000000000000)), int8_cmp);
				else
				{
					GbtNode		node;

					gbt_node_view(pool + (size_t) qpage[i] * GBT_PAGE_SIZE, &node);
					sink += gbt_node_next_used(&node, gbt_node_lower_bound(&node, qkey[i]));
				}
			}
			t1 = now_ns();
			res[mode] = (t1 - t0) / NQUERIES;
		}
		printf("| %s | %.1f | %.1f |\n",
			   variant < 0 ? "binary search + comparator call" : gbt_simd_name((GbtSimdLevel) variant),
			   res[0], res[1]);
	}
	return sink == 42;
}
