/*
 * test_wpost.c
 *	  Unit tests of the multi-word posting form (src/node_wpost.c): random
 *	  sorted entries of 2 to 4 words (heavy duplicates, spread heap blocks,
 *	  TID flags at times) encoded, checked, decoded and searched against
 *	  the sorted input; a page's bounds left where the plain layout has
 *	  them; damaged bodies refused.  Exits non-zero on a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbtree_node.h"
#include "gbtree_keyshape.h"
#include "gbtree_wpost.h"


static int	failures = 0;
static long checks = 0;

#define CHECK(cond, ...) \
	do { checks++; if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); if (failures > 20) exit(1); } } while (0)

static uint64_t rng = 88172645463325252ULL;

static uint64_t
xrand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int	cmp_nw;
static int	nfit,
			ntried;

static int
entry_cmp(const void *a, const void *b)
{
	const uint64_t *x = a,
			   *y = b;
	int			c = gbt_words_cmp(x, y, cmp_nw);

	if (c != 0)
		return c;
	return x[cmp_nw] < y[cmp_nw] ? -1 : x[cmp_nw] > y[cmp_nw];
}

/* n sorted distinct entries of nw words: keys from a domain of ndistinct */
static int
make_entries(uint64_t *e, int n, int nw, int ndistinct, bool spread, bool flags)
{
	int			m = 0;

	for (int i = 0; i < n; i++)
	{
		uint64_t   *x = &e[(size_t) m * (nw + 1)];
		uint64_t	k = xrand() % ndistinct;

		for (int w = 0; w < nw; w++)
			x[w] = w == nw - 1 ? k * 0x9E3779B97F4A7C15ULL : (k % 3 == 0 ? 0 : UINT64_MAX - k);
		x[nw] = gbt_tid_pack(spread ? (uint32_t) (xrand() % 4000000000u) : (uint32_t) (1000 + xrand() % 500),
							 (uint16_t) (1 + xrand() % 291), flags && xrand() % 4 == 0 ? (uint16_t) (1 << (xrand() % 16)) : 0);
		m++;
	}
	cmp_nw = nw;
	qsort(e, m, sizeof(uint64_t) * (nw + 1), entry_cmp);
	/* drop equal entries */
	{
		int			k = 0;

		for (int i = 0; i < m; i++)
			if (k == 0 || entry_cmp(&e[(size_t) i * (nw + 1)], &e[(size_t) (k - 1) * (nw + 1)]) != 0)
				memmove(&e[(size_t) k++ * (nw + 1)], &e[(size_t) i * (nw + 1)], sizeof(uint64_t) * (nw + 1));
		m = k;
	}
	return m;
}

static void
test_roundtrip(int nw, int n, int ndistinct, bool spread, bool flags)
{
	static char page[GBT_PAGE_SIZE];
	static uint64_t e[2300 * (GBT_MAX_KEY_WORDS + 1)];
	static uint64_t d[2300 * (GBT_MAX_KEY_WORDS + 1)];
	GbtNode		node;
	GbtWPost	p;
	uint64_t	xb[2 * GBT_MAX_KEY_WORDS];
	const char *why;
	int			m = make_entries(e, n, nw, ndistinct, spread, flags);
	bool		fits;

	gbt_node_format_words(page, true, 0, GBT_F_LEAF, nw);
	gbt_node_view(page, &node);
	for (int i = 0; i < 2 * (nw - 1); i++)
		node.xbounds[i] = xb[i] = xrand();
	fits = gbt_wpost_fits(m, nw, e, gbt_page_opaque(page)->flags);
	/* a page of one key holds some 1,200 TIDs or more, whatever its words */
	CHECK(fits || m > 1200 || ndistinct > 1, "%d TIDs of one key do not fit", m);
	nfit += fits;
	ntried++;
	if (!fits)
		return;
	gbt_wpost_encode(page, m, nw, e);
	why = gbt_wpost_check(page);
	CHECK(why == NULL, "check of a page just encoded: %s (nw %d, n %d)", why, nw, m);
	gbt_node_view(page, &node);
	for (int i = 0; i < 2 * (nw - 1); i++)
		CHECK(node.xbounds[i] == xb[i], "bound word %d moved", i);
	CHECK(gbt_wpost_decode(page, d) == m, "decode count");
	CHECK(memcmp(d, e, sizeof(uint64_t) * (nw + 1) * m) == 0, "decode differs (nw %d, n %d)", nw, m);
	gbt_wpost_view(page, &p);
	for (int q = 0; q < 200; q++)
	{
		int			i = m > 0 ? (int) (xrand() % (m + 1)) : 0;
		uint64_t	key[GBT_MAX_KEY_WORDS];
		uint64_t	tid;
		int			got,
					want = 0;

		if (i < m && xrand() % 2)
		{
			memcpy(key, &e[(size_t) i * (nw + 1)], sizeof(uint64_t) * nw);
			tid = e[(size_t) i * (nw + 1) + nw] + (xrand() % 3) - 1;
		}
		else
		{
			for (int w = 0; w < nw; w++)
				key[w] = xrand() % 2 ? xrand() : (i < m ? e[(size_t) i * (nw + 1) + w] : UINT64_MAX);
			tid = xrand();
		}
		while (want < m)
		{
			const uint64_t *x = &e[(size_t) want * (nw + 1)];
			int			c = gbt_words_cmp(x, key, nw);

			if (c > 0 || (c == 0 && x[nw] >= tid))
				break;
			want++;
		}
		got = gbt_wpost_lower_bound_entry(&p, key, tid);
		CHECK(got == want, "lower bound %d, want %d (nw %d, n %d)", got, want, nw, m);
	}
	if (p.hdr->ngroups >= 2)
	{
		/* damage: two keys swapped */
		uint64_t	tmp[GBT_MAX_KEY_WORDS];

		memcpy(tmp, p.keys, sizeof(uint64_t) * nw);
		memcpy(p.keys, &p.keys[nw], sizeof(uint64_t) * nw);
		memcpy(&p.keys[nw], tmp, sizeof(uint64_t) * nw);
		CHECK(gbt_wpost_check(page) != NULL, "swapped keys not seen");
	}
}

int
main(void)
{
	for (int nw = 2; nw <= 4; nw++)
		for (int r = 0; r < 300; r++)
		{
			int			n = (int) (xrand() % 2200);
			int			nd = 1 + (int) (xrand() % (xrand() % 2 ? 8 : 600));

			test_roundtrip(nw, n, nd, xrand() % 5 == 0, xrand() % 3 == 0);
		}
	/* the generator makes pages that fit and pages that do not */
	CHECK(nfit > ntried / 10 && nfit < ntried, "%d of %d fit", nfit, ntried);
	if (failures)
	{
		printf("test_wpost: %d of %ld checks failed\n", failures, checks);
		return 1;
	}
	printf("test_wpost: %ld checks passed\n", checks);
	return 0;
}
