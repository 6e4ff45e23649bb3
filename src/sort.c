/*-------------------------------------------------------------------------
 *
 * sort.c
 *	  Every CPU sort of gbtree: (key, TID) entries for builds and insert
 *	  batches, the merge of sorted runs, and the uint64 sorts of scans
 *	  (= ANY keys, TIDs for bitmaps and counts).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"

#include "gbtree.h"

/*
 * LSD radix sort by (key, tid), one byte per pass, skipping passes where
 * every entry has the same byte.  The TID's low 16 bits are flags and
 * never distinguish two entries, so they are not sorted on.  If the input
 * is already in TID order (a plain heap scan), the TID passes are skipped.
 */
void
gbt_radix_sort(GbtEntry *entries, GbtEntry *scratch, Size n)
{
	/* 14 passes: tid bytes 2..7, then key bytes 0..7 */
	Size	   *hist;
	GbtEntry   *src = entries,
			   *dst = scratch;
	bool		tid_sorted = true;
	int			pass;

	if (n < 2)
		return;
	hist = palloc0(sizeof(Size) * 14 * 256);
	for (Size i = 0; i < n; i++)
	{
		uint64		t = entries[i].tid;
		uint64		k = entries[i].key;

		if (i > 0 && entries[i - 1].tid > t)
			tid_sorted = false;
		for (int b = 0; b < 6; b++)
			hist[b * 256 + ((t >> (16 + 8 * b)) & 0xFF)]++;
		for (int b = 0; b < 8; b++)
			hist[(6 + b) * 256 + ((k >> (8 * b)) & 0xFF)]++;
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	for (pass = tid_sorted ? 6 : 0; pass < 14; pass++)
	{
		Size	   *h = hist + pass * 256;
		Size		offs[256];
		Size		sum = 0;
		int			shift = pass < 6 ? 16 + 8 * pass : 8 * (pass - 6);
		bool		trivial = false;

		for (int v = 0; v < 256; v++)
		{
			if (h[v] == n)
				trivial = true;
			offs[v] = sum;
			sum += h[v];
		}
		if (trivial)
			continue;
		for (Size i = 0; i < n; i++)
		{
			uint64		word = pass < 6 ? src[i].tid : src[i].key;

			dst[offs[(word >> shift) & 0xFF]++] = src[i];
		}
		{
			GbtEntry   *tmp = src;

			src = dst;
			dst = tmp;
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (src != entries)
		memcpy(entries, src, sizeof(GbtEntry) * n);
	pfree(hist);
}

/*
 * Sort n entries in place by (key, TID): by insertion when there are few
 * (most insert batches flushed at commit hold a handful), else by
 * gbt_radix_sort with scratch space of its own.
 */
void
gbt_sort_entries(GbtEntry *e, Size n)
{
	GbtEntry   *scratch;

	if (n < 2)
		return;
	if (n < 64)
	{
		for (Size i = 1; i < n; i++)
		{
			GbtEntry	x = e[i];
			Size		j = i;

			while (j > 0 && gbt_entry_lt(x.key, x.tid, e[j - 1].key, e[j - 1].tid))
			{
				e[j] = e[j - 1];
				j--;
			}
			e[j] = x;
		}
		return;
	}
	scratch = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(GbtEntry) * n);
	gbt_radix_sort(e, scratch, n);
	pfree(scratch);
}

/*
 * Merge the nruns consecutive sorted runs of src (runlen entries each, the
 * last one shorter) into dst, by (key, TID), through a binary heap of the
 * runs' next entries.
 */
void
gbt_merge_runs(const GbtEntry *src, GbtEntry *dst, Size n, Size runlen, int nruns)
{
	Size	   *next = palloc(sizeof(Size) * nruns);
	Size	   *end = palloc(sizeof(Size) * nruns);
	int		   *heap = palloc(sizeof(int) * nruns);
	int			nheap = 0;

#define RUN_LT(a, b) gbt_entry_lt(src[next[a]].key, src[next[a]].tid, \
								  src[next[b]].key, src[next[b]].tid)

	for (int r = 0; r < nruns; r++)
	{
		next[r] = (Size) r * runlen;
		end[r] = Min(n, next[r] + runlen);
		if (next[r] < end[r])
		{
			/* sift up */
			int			i = nheap++;

			heap[i] = r;
			while (i > 0 && RUN_LT(heap[i], heap[(i - 1) / 2]))
			{
				int			t = heap[i];

				heap[i] = heap[(i - 1) / 2];
				heap[(i - 1) / 2] = t;
				i = (i - 1) / 2;
			}
		}
	}
	for (Size out = 0; nheap > 0; out++)
	{
		int			r = heap[0];
		int			i = 0;

		dst[out] = src[next[r]++];
		if (next[r] == end[r])
			heap[0] = heap[--nheap];
		/* sift down */
		for (;;)
		{
			int			l = 2 * i + 1,
						m = i;

			if (l < nheap && RUN_LT(heap[l], heap[m]))
				m = l;
			if (l + 1 < nheap && RUN_LT(heap[l + 1], heap[m]))
				m = l + 1;
			if (m == i)
				break;
			{
				int			t = heap[i];

				heap[i] = heap[m];
				heap[m] = t;
			}
			i = m;
		}
		if ((out & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
#undef RUN_LT
	pfree(next);
	pfree(end);
	pfree(heap);
}

/*
 * PostgreSQL's quicksort specialized for uint64, its comparison inlined:
 * a count over a few hundred rows sorts its TIDs, and qsort's call per
 * comparison was a tenth of such a query.
 */
#define ST_SORT gbt_qsort_u64
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) ((*(a) > *(b)) - (*(a) < *(b)))
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * LSD radix sort, one byte per pass, passes where every key has the same
 * byte skipped.
 */
static void
lsd_sort_u64(uint64 *v, uint64 *tmp, int n)
{
	uint32	   *hist = palloc0(sizeof(uint32) * 8 * 256);
	uint64	   *src = v,
			   *dst = tmp;

	for (int i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			hist[b * 256 + ((v[i] >> (b * 8)) & 0xFF)]++;
	for (int b = 0; b < 8; b++)
	{
		uint32	   *h = hist + b * 256;
		uint32		sum = 0;
		uint64	   *t;

		if (h[(src[0] >> (b * 8)) & 0xFF] == (uint32) n)
			continue;			/* all keys share this byte */
		for (int d = 0; d < 256; d++)
		{
			uint32		c = h[d];

			h[d] = sum;
			sum += c;
		}
		for (int i = 0; i < n; i++)
			dst[h[(src[i] >> (b * 8)) & 0xFF]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, sizeof(uint64) * n);
	pfree(hist);
}

/*
 * Sort large = ANY arrays: one pass distributes the keys into about n/2
 * buckets by their leading bits below the common prefix (so skewed but
 * narrow key sets spread too), then each bucket is sorted where it lies:
 * by insertion when small, which it is for all but skewed data, by the
 * LSD sort otherwise.  Two linear passes instead of up to eight.
 */
void
gbt_sort_u64(uint64 *v, int n)
{
	uint64		mn = v[0],
				mx = v[0];
	int			span,
				bits,
				shift,
				nb;
	uint32	   *start;
	uint32	   *pos;
	uint64	   *tmp;

	for (int i = 1; i < n; i++)
	{
		mn = Min(mn, v[i]);
		mx = Max(mx, v[i]);
	}
	if (mn == mx)
		return;
	span = pg_leftmost_one_pos64(mn ^ mx) + 1;	/* bits below the common prefix */
	bits = Max(8, Min(20, pg_leftmost_one_pos32((uint32) n)));
	bits = Min(bits, span);
	shift = span - bits;
	nb = 1 << bits;

	start = palloc0(sizeof(uint32) * (nb + 1));
	pos = palloc(sizeof(uint32) * nb);
	tmp = palloc(sizeof(uint64) * n);
	gbt_advise_huge(tmp, sizeof(uint64) * n);
	for (int i = 0; i < n; i++)
		start[((v[i] >> shift) & (nb - 1)) + 1]++;
	for (int d = 0; d < nb; d++)
	{
		start[d + 1] += start[d];
		pos[d] = start[d];
	}
	for (int i = 0; i < n; i++)
		tmp[pos[(v[i] >> shift) & (nb - 1)]++] = v[i];
	for (int d = 0; d < nb; d++)
	{
		int			lo = start[d],
					hi = start[d + 1];

		if (hi - lo > 32)
			lsd_sort_u64(tmp + lo, v + lo, hi - lo);	/* v's slice as scratch */
		else
			for (int i = lo + 1; i < hi; i++)
			{
				uint64		x = tmp[i];
				int			k = i;

				while (k > lo && tmp[k - 1] > x)
				{
					tmp[k] = tmp[k - 1];
					k--;
				}
				tmp[k] = x;
			}
	}
	memcpy(v, tmp, sizeof(uint64) * n);
	pfree(tmp);
	pfree(pos);
	pfree(start);
}

/* in-place sort + dedup, returns new length */
int
gbt_sort_unique_u64(uint64 *v, int n)
{
	int			m = 0;
	bool		ascending = true;

	if (n <= 1)
		return n;
	/* arrays often come sorted: then only duplicates need removing */
	for (int i = 1; i < n && ascending; i++)
		ascending = v[i - 1] <= v[i];
	if (!ascending && n < 512)
		gbt_qsort_u64(v, n);
	else if (!ascending)
		gbt_sort_u64(v, n);
	for (int i = 0; i < n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

static void msd_sort(uint64 *v, uint64 *tmp, int lo, int hi, int nw, int depth);

/*
 * MSD radix sort of the keys [lo, hi) of nw words each, from byte depth
 * on (all keys share the bytes before it): one byte a level, a level where
 * every key has the same byte skipped without moving them, runs of up to
 * 32 keys by insertion.  Random keys (uuids) are sorted after two levels.
 */
static inline pg_attribute_always_inline void
msd_sort_words(uint64 *v, uint64 *tmp, int lo, int hi, int nw, int depth)
{
	uint32		start[257];
	uint32		pos[256];

	for (;;)
	{
		int			n = hi - lo;
		int			w = depth >> 3;
		int			shift = 56 - 8 * (depth & 7);
		bool		one_bucket = false;

		if (n <= 32)
		{
			for (int i = lo + 1; i < hi; i++)
			{
				uint64		x[GBT_MAX_KEY_WORDS];
				int			k = i;

				memcpy(x, &v[(Size) i * nw], sizeof(uint64) * nw);
				while (k > lo && gbt_words_cmp(&v[(Size) (k - 1) * nw], x, nw) > 0)
				{
					memcpy(&v[(Size) k * nw], &v[(Size) (k - 1) * nw], sizeof(uint64) * nw);
					k--;
				}
				memcpy(&v[(Size) k * nw], x, sizeof(uint64) * nw);
			}
			return;
		}
		if (depth >= 8 * nw)
			return;				/* all equal */
		memset(start, 0, sizeof(start));
		for (int i = lo; i < hi; i++)
			start[((v[(Size) i * nw + w] >> shift) & 0xFF) + 1]++;
		for (int d = 0; d < 256 && !one_bucket; d++)
			one_bucket = start[d + 1] == (uint32) n;
		if (one_bucket)
		{
			depth++;
			continue;
		}
		for (int d = 0; d < 256; d++)
		{
			start[d + 1] += start[d];
			pos[d] = start[d];
		}
		for (int i = lo; i < hi; i++)
		{
			int			d = (v[(Size) i * nw + w] >> shift) & 0xFF;

			memcpy(&tmp[(Size) (lo + pos[d]++) * nw], &v[(Size) i * nw], sizeof(uint64) * nw);
		}
		memcpy(&v[(Size) lo * nw], &tmp[(Size) lo * nw], sizeof(uint64) * nw * n);
		for (int d = 0; d < 256; d++)
			if (start[d + 1] - start[d] > 1)
				msd_sort(v, tmp, lo + start[d], lo + start[d + 1], nw, depth + 1);
		return;
	}
}

/* msd_sort_words compiled for each word count, so its copies unroll */
static void
msd_sort(uint64 *v, uint64 *tmp, int lo, int hi, int nw, int depth)
{
	switch (nw)
	{
		case 2:
			msd_sort_words(v, tmp, lo, hi, 2, depth);
			break;
		case 4:
			msd_sort_words(v, tmp, lo, hi, 4, depth);
			break;
		default:
			msd_sort_words(v, tmp, lo, hi, nw, depth);
			break;
	}
}

/*
 * Sort keys of nw words (up to GBT_MAX_KEY_WORDS, one after another) and
 * remove duplicates in place; returns the new count.  = ANY arrays on a
 * uuid or text column: a quarter of the build's LSD sort's time for 1M
 * random uuids, which moves every entry once a byte.
 */
int
gbt_sort_unique_words(uint64 *v, int n, int nw)
{
	bool		ascending = true;
	int			m = 0;

	Assert(nw >= 1 && nw <= GBT_MAX_KEY_WORDS);
	if (n <= 1)
		return n;
	for (int i = 1; i < n && ascending; i++)
		ascending = gbt_words_cmp(&v[(Size) (i - 1) * nw], &v[(Size) i * nw], nw) <= 0;
	if (!ascending)
	{
		uint64	   *tmp = MemoryContextAllocHuge(CurrentMemoryContext,
												 sizeof(uint64) * nw * (Size) n);

		msd_sort(v, tmp, 0, n, nw, 0);
		pfree(tmp);
	}
	for (int i = 0; i < n; i++)
	{
		if (m > 0 && memcmp(&v[(Size) (m - 1) * nw], &v[(Size) i * nw], sizeof(uint64) * nw) == 0)
			continue;
		if (m != i)
			memcpy(&v[(Size) m * nw], &v[(Size) i * nw], sizeof(uint64) * nw);
		m++;
	}
	return m;
}

/* sort packed TIDs (block << 16 | offset) */
void
gbt_sort_tids(uint64 *t, int n)
{
	if (n < 512)
		gbt_qsort_u64(t, n);
	else
		gbt_sort_u64(t, n);
}
