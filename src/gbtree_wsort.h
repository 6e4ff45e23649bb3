/*-------------------------------------------------------------------------
 *
 * gbtree_wsort.h
 *	  Sorting entries of multi-word keys (src/README, "Multi-word keys"):
 *	  the build's sort over nwords key words, then the TID.
 *
 * An entry is nwords key words followed by its packed TID (a stride of
 * nwords + 1 words), as node.c's extract and load pass keys entry after
 * entry.  The sort is sort.c's LSD radix sort widened to the extra words:
 * one byte a pass, least significant first (the TID's bytes 2..7, its
 * flags never telling two entries apart, then the last key word up to the
 * first), skipping a pass where every entry has the same byte and the TID
 * passes when the input is already in TID order (a plain heap scan).
 * Small inputs go by insertion.  Plain C: the caller gives the scratch and
 * the histograms, and a tick that it may use to check for interrupts.
 *
 * A step of multi-word builds; tested by test/unit/test_keys.c against a
 * comparison sort; the build does not use it yet.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_WSORT_H
#define GBTREE_WSORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GBT_WSORT_MAX_STRIDE	6	/* 4 key words, the TID and a payload word */

/* histogram words gbt_wsort needs */
static inline size_t
gbt_wsort_hist_size(int nwords)
{
	return (size_t) (6 + 8 * nwords) * 256;
}

/* entry a < entry b, by (words, TID) */
static inline int
gbt_wentry_cmp(const uint64_t *a, const uint64_t *b, int nwords)
{
	for (int k = 0; k <= nwords; k++)
		if (a[k] != b[k])
			return a[k] < b[k] ? -1 : 1;
	return 0;
}

static inline void
gbt_wsort(uint64_t *e, uint64_t *scratch, size_t n, int nwords, size_t *hist,
		  void (*tick) (void))
{
	const int	stride = nwords + 1;
	const int	npass = 6 + 8 * nwords;
	uint64_t   *src = e,
			   *dst = scratch;
	int			tid_sorted = 1;

	if (n < 2)
		return;
	if (n < 64)
	{
		for (size_t i = 1; i < n; i++)
		{
			uint64_t	x[GBT_WSORT_MAX_STRIDE];
			size_t		j = i;

			memcpy(x, &e[i * stride], sizeof(uint64_t) * stride);
			while (j > 0 && gbt_wentry_cmp(x, &e[(j - 1) * stride], nwords) < 0)
			{
				memcpy(&e[j * stride], &e[(j - 1) * stride], sizeof(uint64_t) * stride);
				j--;
			}
			memcpy(&e[j * stride], x, sizeof(uint64_t) * stride);
		}
		return;
	}
	memset(hist, 0, sizeof(size_t) * gbt_wsort_hist_size(nwords));
	for (size_t i = 0; i < n; i++)
	{
		const uint64_t *r = &e[i * stride];
		uint64_t	t = r[nwords];

		if (i > 0 && (e[(i - 1) * stride + nwords] >> 16) > (t >> 16))
			tid_sorted = 0;
		for (int b = 0; b < 6; b++)
			hist[b * 256 + ((t >> (16 + 8 * b)) & 0xFF)]++;
		/* word k's byte b is pass 6 + (nwords - 1 - k) * 8 + b */
		for (int k = 0; k < nwords; k++)
			for (int b = 0; b < 8; b++)
				hist[(6 + (nwords - 1 - k) * 8 + b) * 256 + ((r[k] >> (8 * b)) & 0xFF)]++;
		if (tick && (i & 0xFFFFF) == 0)
			tick();
	}
	for (int pass = tid_sorted ? 6 : 0; pass < npass; pass++)
	{
		size_t	   *h = hist + (size_t) pass * 256;
		size_t		offs[256];
		size_t		sum = 0;
		int			word = pass < 6 ? nwords : nwords - 1 - (pass - 6) / 8;
		int			shift = pass < 6 ? 16 + 8 * pass : 8 * ((pass - 6) % 8);
		int			trivial = 0;

		for (int v = 0; v < 256; v++)
		{
			if (h[v] == n)
				trivial = 1;
			offs[v] = sum;
			sum += h[v];
		}
		if (trivial)
			continue;
		for (size_t i = 0; i < n; i++)
		{
			const uint64_t *r = &src[i * stride];

			memcpy(&dst[offs[(r[word] >> shift) & 0xFF]++ * stride], r, sizeof(uint64_t) * stride);
		}
		{
			uint64_t   *tmp = src;

			src = dst;
			dst = tmp;
		}
		if (tick)
			tick();
	}
	if (src != e)
		memcpy(e, src, sizeof(uint64_t) * stride * n);
}

#endif							/* GBTREE_WSORT_H */
