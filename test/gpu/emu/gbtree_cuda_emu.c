/*-------------------------------------------------------------------------
 *
 * gbtree_cuda_emu.c
 *	  A stand-in for libgbtree_cuda.so that runs on the CPU, for testing.
 *
 * It implements the C interface of cuda/gbtree_cuda.h with plain memory
 * and the page layer of
 * src/node.c: a "device copy" is an array of page images, a lookup is the
 * reference descent and leaf walk that the CUDA tests check the kernels
 * against (src/gbtree_walk.h), a sort is a sort by (key, TID).  With
 * gbtree.device_library pointing at it, the GPU service, device copies,
 * page shipping, lookups, GPU builds and their failure paths all run on a
 * machine without a GPU, so CI tests them (test/run-tests.sh, suite gpuemu);
 * the real kernels are tested on the GPU machine (make test-gpu).
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbtree_node.h"
#include "gbtree_walk.h"
#include "gbtree_cuda.h"
#include "gbtree_layout.h"

#ifndef Max
#define Max(a, b)	((a) > (b) ? (a) : (b))
#endif

#define EMU_MEMORY	((uint64_t) 8 << 30)	/* what the "device" reports */

static __thread char emu_error[256];

struct GbtCudaCopy
{
	char	   *img;
	uint32_t	capacity;
};

struct GbtCudaSort
{
	uint64_t   *e;				/* cap (key, tid) pairs, n of them put */
	uint64_t	cap;
	uint64_t   *keys;			/* the sorted entries split, for layouts */
	uint64_t   *tids;
	uint64_t	n;
};

static int
fail(int code, const char *msg)
{
	snprintf(emu_error, sizeof(emu_error), "emulated device: %s", msg);
	return code;
}

int
gbt_cuda_abi_version(void)
{
	return GBT_CUDA_ABI_VERSION;
}

int
gbt_cuda_probe(char *desc, int desclen, uint64_t *mem_total)
{
	snprintf(desc, desclen, "gbtree CPU emulator (test/gpu/emu, no GPU)");
	*mem_total = EMU_MEMORY;
	return 0;
}

int
gbt_cuda_init(int device, char *err, int errlen)
{
	if (err && errlen > 0)
		err[0] = '\0';
	return 0;
}

const char *
gbt_cuda_last_error(void)
{
	return emu_error;
}

static int
grow(GbtCudaCopy *c, uint32_t nblocks)
{
	uint32_t	cap;
	char	   *img;

	if (nblocks <= c->capacity)
		return 0;
	cap = Max(nblocks, c->capacity + c->capacity / 4 + 64);
	img = realloc(c->img, (size_t) cap * GBT_PAGE_SIZE);
	if (img == NULL)
		return fail(GBT_CUDA_ENOMEM, "out of memory");
	memset(img + (size_t) c->capacity * GBT_PAGE_SIZE, 0,
		   (size_t) (cap - c->capacity) * GBT_PAGE_SIZE);
	c->img = img;
	c->capacity = cap;
	return 0;
}

int
gbt_cuda_copy_create(GbtCudaCopy **copy, uint32_t capacity_blocks)
{
	GbtCudaCopy *c = calloc(1, sizeof(GbtCudaCopy));
	int			rc;

	if (c == NULL)
		return fail(GBT_CUDA_ENOMEM, "out of memory");
	rc = grow(c, Max(capacity_blocks, 1));
	if (rc != 0)
	{
		free(c);
		return rc;
	}
	*copy = c;
	return 0;
}

int
gbt_cuda_copy_put_pages(GbtCudaCopy *copy, const uint32_t *blknos,
						const void *images, uint32_t npages)
{
	for (uint32_t i = 0; i < npages; i++)
	{
		int			rc = grow(copy, blknos[i] + 1);

		if (rc != 0)
			return rc;
		memcpy(copy->img + (size_t) blknos[i] * GBT_PAGE_SIZE,
			   (const char *) images + (size_t) i * GBT_PAGE_SIZE, GBT_PAGE_SIZE);
	}
	return 0;
}

int
gbt_cuda_copy_put_range(GbtCudaCopy *copy, uint32_t first_blkno,
						const void *images, uint32_t npages)
{
	int			rc = grow(copy, first_blkno + npages);

	if (rc != 0)
		return rc;
	memcpy(copy->img + (size_t) first_blkno * GBT_PAGE_SIZE, images,
		   (size_t) npages * GBT_PAGE_SIZE);
	return 0;
}

uint32_t
gbt_cuda_copy_nblocks(const GbtCudaCopy *copy)
{
	return copy->capacity;
}

uint64_t
gbt_cuda_copy_device_bytes(const GbtCudaCopy *copy)
{
	return (uint64_t) copy->capacity * GBT_PAGE_SIZE;
}

void
gbt_cuda_copy_free(GbtCudaCopy *copy)
{
	if (copy)
	{
		free(copy->img);
		free(copy);
	}
}

/* where the second pass of a lookup writes the matches of one query */
typedef struct EmuMatchSink
{
	uint64_t   *keys;			/* NULL when the caller wants no keys */
	uint64_t   *tids;
	uint64_t	n;
} EmuMatchSink;

static void
write_match(void *arg, uint64_t key, uint64_t tid)
{
	EmuMatchSink *sink = (EmuMatchSink *) arg;

	if (sink->keys)
		sink->keys[sink->n] = key;
	if (sink->tids)
		sink->tids[sink->n] = tid;
	sink->n++;
}

/*
 * The matches of query q, by the reference walk (src/gbtree_walk.h), each
 * handed to match when it is not NULL: their number, or -1 on an
 * inconsistent page.
 */
static int64_t
walk_query(const GbtCudaCopy *c, uint32_t root, const GbtCudaQuery *q,
		   GbtWalkMatchFn match, void *arg)
{
	return gbt_walk_range(c->img, c->capacity, root, q->lo_key, q->lo_tid,
						  q->hi_key, q->hi_tid, match, arg);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

int
gbt_cuda_lookup(GbtCudaCopy *copy, uint32_t root_blkno,
				const GbtCudaQuery *queries, uint32_t nqueries,
				int queries_sorted, uint64_t *offsets,
				uint64_t *out_keys, uint64_t *out_tids,
				uint64_t out_capacity, uint64_t *out_total)
{
	uint64_t	total = 0;
	GbtCudaQuery *points = NULL;

	*out_total = 0;
	if (queries_sorted == GBT_CUDA_POINTS)
	{
		/* bare keys, any order, repeats: sorted and deduplicated first */
		uint64_t   *k = (uint64_t *) malloc(sizeof(uint64_t) * (nqueries + 1));
		uint32_t	nu = 0;

		points = (GbtCudaQuery *) malloc(sizeof(GbtCudaQuery) * (nqueries + 1));
		if (!k || !points)
		{
			free(k);
			free(points);
			return fail(GBT_CUDA_ENOMEM, "out of memory");
		}
		memcpy(k, queries, sizeof(uint64_t) * nqueries);
		qsort(k, nqueries, sizeof(uint64_t), cmp_u64);
		for (uint32_t i = 0; i < nqueries; i++)
			if (i == 0 || k[i] != k[i - 1])
			{
				points[nu].lo_key = points[nu].hi_key = k[i];
				points[nu].lo_tid = 0;
				points[nu].hi_tid = UINT64_MAX;
				nu++;
			}
		free(k);
		queries = points;
		nqueries = nu;
	}
	for (uint32_t i = 0; i < nqueries; i++)
	{
		int64_t		n = walk_query(copy, root_blkno, &queries[i], NULL, NULL);

		if (n < 0)
			return fail(GBT_CUDA_ECORRUPT, "inconsistent page images");
		offsets[i] = total;
		total += (uint64_t) n;
	}
	offsets[nqueries] = total;
	*out_total = total;
	if (total > out_capacity)
	{
		free(points);
		return GBT_CUDA_ESPACE;
	}
	for (uint32_t i = 0; i < nqueries; i++)
	{
		EmuMatchSink sink;

		sink.keys = out_keys ? out_keys + offsets[i] : NULL;
		sink.tids = out_tids ? out_tids + offsets[i] : NULL;
		sink.n = 0;
		(void) walk_query(copy, root_blkno, &queries[i], write_match, &sink);
	}
	free(points);
	return 0;
}

/* a multi-word match, written at the sink's position */
typedef struct EmuWordsSink
{
	uint64_t   *words;
	uint64_t   *tids;
	int			nw;
	uint64_t	n;
} EmuWordsSink;

static void
write_words_match(void *arg, const uint64_t *key, uint64_t tid)
{
	EmuWordsSink *sink = (EmuWordsSink *) arg;

	memcpy(sink->words + sink->n * sink->nw, key, sizeof(uint64_t) * sink->nw);
	sink->tids[sink->n++] = tid;
}

/* gbt_cuda_lookup_words through the reference walk (gbtree_walk.h) */
int
gbt_cuda_lookup_words(GbtCudaCopy *copy, uint32_t root_blkno, int nwords,
					  const uint64_t *queries, uint32_t nqueries, uint64_t *offsets,
					  uint64_t *out_words, uint64_t *out_tids, uint64_t out_capacity,
					  uint64_t *out_total)
{
	uint64_t	total = 0;

	*out_total = 0;
	if (nwords < 1 || nwords > GBT_MAX_KEY_WORDS)
		return fail(GBT_CUDA_EINVAL, "bad word count");
	if (root_blkno >= copy->capacity || root_blkno == GBT_META_BLKNO)
		return fail(GBT_CUDA_ECORRUPT, "root block out of range");
	for (uint32_t i = 0; i < nqueries; i++)
	{
		const uint64_t *lo = queries + (size_t) i * 2 * nwords;
		int64_t		n = gbt_walk_range_words(copy->img, copy->capacity, root_blkno, nwords,
											 lo, 0, lo + nwords, UINT64_MAX, NULL, NULL);

		if (n < 0)
			return fail(GBT_CUDA_ECORRUPT, "inconsistent page images");
		offsets[i] = total;
		total += (uint64_t) n;
	}
	offsets[nqueries] = total;
	*out_total = total;
	if (total > out_capacity)
		return GBT_CUDA_ESPACE;
	for (uint32_t i = 0; i < nqueries; i++)
	{
		const uint64_t *lo = queries + (size_t) i * 2 * nwords;
		EmuWordsSink sink;

		sink.words = out_words + offsets[i] * nwords;
		sink.tids = out_tids + offsets[i];
		sink.nw = nwords;
		sink.n = 0;
		(void) gbt_walk_range_words(copy->img, copy->capacity, root_blkno, nwords,
									lo, 0, lo + nwords, UINT64_MAX, write_words_match, &sink);
	}
	return 0;
}

int
gbt_cuda_host_register(void *ptr, size_t bytes)
{
	return 0;
}

int
gbt_cuda_host_unregister(void *ptr)
{
	return 0;
}

int
gbt_cuda_count_lt16(const uint64_t *blocks, const uint64_t *queries,
					int *counts, int n)
{
	for (int i = 0; i < n; i++)
	{
		int			c = 0;

		for (int j = 0; j < 16; j++)
			c += blocks[i * 16 + j] < queries[i];
		counts[i] = c;
	}
	return 0;
}

/* ---- sorting: by (key, TID bits 16-63), as the device sort ---- */

int
gbt_cuda_sort_create(uint64_t n, GbtCudaSort **out)
{
	GbtCudaSort *s = calloc(1, sizeof(GbtCudaSort));

	if (s == NULL || (s->e = malloc(sizeof(uint64_t) * 2 * Max(n, 1))) == NULL)
	{
		free(s);
		return fail(GBT_CUDA_ENOMEM, "out of memory");
	}
	s->cap = n;
	s->n = 0;
	*out = s;
	return 0;
}

int
gbt_cuda_sort_put(GbtCudaSort *s, uint64_t offset, const uint64_t *entries, uint64_t count)
{
	if (offset + count > s->cap)
	{
		uint64_t	cap = Max(offset + count, s->cap + s->cap / 2);
		uint64_t   *e = realloc(s->e, sizeof(uint64_t) * 2 * cap);

		if (e == NULL)
			return fail(GBT_CUDA_ENOMEM, "out of memory");
		s->e = e;
		s->cap = cap;
	}
	memcpy(s->e + 2 * offset, entries, sizeof(uint64_t) * 2 * count);
	if (offset + count > s->n)
		s->n = offset + count;
	return 0;
}

uint64_t
gbt_cuda_sort_count(GbtCudaSort *s)
{
	return s->n;
}

static int
cmp_entry(const void *a, const void *b)
{
	const uint64_t *x = a;
	const uint64_t *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	if ((x[1] >> 16) != (y[1] >> 16))
		return (x[1] >> 16) < (y[1] >> 16) ? -1 : 1;
	return 0;
}

int
gbt_cuda_sort_run(GbtCudaSort *s, int tid_sorted)
{
	/* (key, TID) is unique, so an unstable sort gives the one order */
	qsort(s->e, s->n, sizeof(uint64_t) * 2, cmp_entry);
	free(s->keys);
	free(s->tids);
	s->keys = s->tids = NULL;
	return 0;
}

/* The device's layout, word by word with gbtree_layout.h, as the kernel. */
int
gbt_cuda_sort_layout(GbtCudaSort *s, const GbtCudaTreePlan *plan, uint64_t first,
					 uint32_t count, void *pages)
{
	const char *bad = gbt_layout_check(plan, s->n, first, count);

	if (bad)
		return fail(GBT_CUDA_EINVAL, bad);
	if (s->keys == NULL)
	{
		s->keys = malloc(sizeof(uint64_t) * Max(s->n, 1));
		s->tids = malloc(sizeof(uint64_t) * Max(s->n, 1));
		if (s->keys == NULL || s->tids == NULL)
			return fail(GBT_CUDA_ENOMEM, "out of memory");
		for (uint64_t i = 0; i < s->n; i++)
		{
			s->keys[i] = s->e[2 * i];
			s->tids[i] = s->e[2 * i + 1];
		}
	}
	for (uint32_t j = 0; j < count; j++)
	{
		GbtLayoutPage lp;
		uint64_t   *page = (uint64_t *) pages + (uint64_t) j * GBT_LAYOUT_PAGE_WORDS;

		gbt_layout_locate(plan, first + j, &lp);
		for (int w = 0; w < GBT_LAYOUT_PAGE_WORDS; w++)
			page[w] = gbt_layout_word(plan, &lp, s->keys, s->tids, w);
	}
	return 0;
}

int
gbt_cuda_sort_get(GbtCudaSort *s, uint64_t offset, uint64_t *entries, uint64_t count)
{
	if (offset + count > s->n)
		return fail(GBT_CUDA_EINVAL, "sort_get beyond the sort's size");
	memcpy(entries, s->e + 2 * offset, sizeof(uint64_t) * 2 * count);
	return 0;
}

int
gbt_cuda_sort_leaves(GbtCudaSort *s, const GbtCudaCopy *copy, uint32_t root_blkno,
					 uint64_t offset, uint64_t count, uint32_t *leaves)
{
	if (copy == NULL)
		return fail(GBT_CUDA_EINVAL, "sort_leaves: no device copy");
	if (offset + count > s->n)
		return fail(GBT_CUDA_EINVAL, "sort_leaves beyond the sort's size");
	for (uint64_t i = 0; i < count; i++)
	{
		const uint64_t *e = s->e + 2 * (offset + i);

		if (gbt_walk_descend(copy->img, copy->capacity, root_blkno, e[0], e[1],
							 &leaves[i], NULL) != 0)
			leaves[i] = GBT_NO_BLOCK;
	}
	return 0;
}

double
gbt_cuda_sort_last_ms(GbtCudaSort *s)
{
	return 0.0;
}

void
gbt_cuda_sort_free(GbtCudaSort *s)
{
	if (s)
	{
		free(s->e);
		free(s->keys);
		free(s->tids);
		free(s);
	}
}
