/*
 * test_wpost.c
 *	  Unit tests of the multi-word posting form (src/node_wpost.c): random
 *	  sorted entries of 1 (node_post.c's form) to 4 words (heavy duplicates, spread heap blocks,
 *	  TID flags at times) encoded, checked, decoded and searched against
 *	  the sorted input; a page's bounds left where the plain layout has
 *	  them; damaged bodies refused; single entries put in place
 *	  (gbt_wpost_insert_inplace, and node_post.c's gbt_post_insert_inplace
 *	  for one-word leaves) byte for byte as a rewrite of all the entries
 *	  lays them out.  Exits non-zero on a failure.
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
			ntried,
			ninplace,
			ninplace1;

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

/* the sorted entries e (n) with x added, not doubled, into out; the count */
static int
plus_entry(const uint64_t *e, int n, int nw, const uint64_t *x, uint64_t *out)
{
	int			k = 0,
				i = 0;
	bool		placed = false;

	cmp_nw = nw;
	for (; i <= n; i++)
	{
		const uint64_t *y = i < n ? &e[(size_t) i * (nw + 1)] : NULL;
		int			c = y ? entry_cmp(y, x) : 1;

		if (!placed && c >= 0)
		{
			memcpy(&out[(size_t) k++ * (nw + 1)], x, sizeof(uint64_t) * (nw + 1));
			placed = true;
			if (c == 0)
				continue;
		}
		if (y)
			memcpy(&out[(size_t) k++ * (nw + 1)], y, sizeof(uint64_t) * (nw + 1));
	}
	return k;
}

/*
 * Entries put into the encoded page one at a time in place, wherever
 * gbt_wpost_insert_inplace takes them, must leave the bytes a rewrite of
 * all the entries (the page formatted afresh, its bounds kept, encoded)
 * lays out; where it refuses, the page is unchanged.
 */
static void
test_inplace(char *page, int nw, const uint64_t *xb, int ndistinct)
{
	static char rewritten[GBT_PAGE_SIZE];
	static char before[GBT_PAGE_SIZE];
	static uint64_t d[2300 * (GBT_MAX_KEY_WORDS + 1)];
	static uint64_t out[2300 * (GBT_MAX_KEY_WORDS + 1)];
	GbtWPost	p;

	for (int t = 0; t < 40; t++)
	{
		uint64_t	x[GBT_MAX_KEY_WORDS + 1];
		int			n = gbt_wpost_decode(page, d),
					k;
		GbtNode		node;

		gbt_wpost_view(page, &p);
		if (n > 0 && xrand() % 4 != 0)
		{
			/* a key the page has, a TID near its others or anywhere */
			memcpy(x, &d[(size_t) (xrand() % n) * (nw + 1)], sizeof(uint64_t) * nw);
			x[nw] = gbt_tid_pack(xrand() % 8 == 0 ? (uint32_t) (xrand() % 4000000000u) :
								 p.hdr->baseblk + (uint32_t) (xrand() % 600),
								 (uint16_t) (1 + xrand() % 291),
								 xrand() % 6 == 0 ? (uint16_t) (1 << (xrand() % 16)) : 0);
			if (xrand() % 10 == 0)
				x[nw] = d[(size_t) (xrand() % n) * (nw + 1) + nw];	/* maybe present */
		}
		else
		{
			uint64_t	kk = xrand() % (ndistinct + 3);

			for (int w = 0; w < nw; w++)
				x[w] = w == nw - 1 ? kk * 0x9E3779B97F4A7C15ULL : (kk % 3 == 0 ? 0 : UINT64_MAX - kk);
			x[nw] = gbt_tid_pack(p.hdr->baseblk + (uint32_t) (xrand() % 600), (uint16_t) (1 + xrand() % 291), 0);
		}
		memcpy(before, page, GBT_PAGE_SIZE);
		if (!gbt_wpost_insert_inplace(page, x, x[nw], false))
		{
			CHECK(memcmp(before, page, GBT_PAGE_SIZE) == 0, "a refused check changed the page");
			continue;
		}
		CHECK(gbt_wpost_insert_inplace(page, x, x[nw], true), "applied where it said it would not");
		k = plus_entry(d, n, nw, x, out);
		memcpy(rewritten, before, GBT_PAGE_SIZE);
		gbt_leaf_reformat(rewritten, nw);
		gbt_node_view(rewritten, &node);
		memcpy(node.xbounds, xb, sizeof(uint64_t) * 2 * (nw - 1));
		CHECK(k > node.nslots, "in place where the rewrite is plain (%d entries)", k);
		gbt_wpost_encode(rewritten, k, nw, out);
		CHECK(memcmp(rewritten, page, GBT_PAGE_SIZE) == 0,
			  "in place differs from a rewrite (nw %d, %d entries, %s)", nw, k,
			  k == n ? "present" : "new");
		CHECK(gbt_wpost_check(page) == NULL, "check after an insert in place");
		ninplace++;
		if (memcmp(rewritten, page, GBT_PAGE_SIZE) != 0)
			memcpy(page, rewritten, GBT_PAGE_SIZE);
	}
}

/* the same for node_post.c's one-word posting leaves */
static void
test_inplace_one_word(int n, int ndistinct, bool spread)
{
	static char page[GBT_PAGE_SIZE];
	static char rewritten[GBT_PAGE_SIZE];
	static uint64_t keys[2300],
				tids[2300],
				nk[2300],
				nt[2300];
	static uint64_t e[2300 * 2];
	int			m = make_entries(e, n, 1, ndistinct, spread, false);

	for (int i = 0; i < m; i++)
	{
		keys[i] = e[2 * i];
		tids[i] = e[2 * i + 1];
	}
	if (m <= GBT_LEAF_SLOTS || !gbt_post_fits(m, keys, tids))
		return;
	gbt_node_format(page, true, 0, GBT_F_LEAF);
	gbt_leaf_fill(page, m, keys, tids, true);
	for (int t = 0; t < 40; t++)
	{
		GbtPost		p;
		uint64_t	key,
					tid;
		int			k = 0;
		bool		placed = false;

		gbt_post_view(page, &p);
		m = gbt_post_decode(page, keys, tids);
		key = xrand() % 4 ? keys[xrand() % m] : (xrand() % (ndistinct + 3)) * 0x9E3779B97F4A7C15ULL;
		tid = gbt_tid_pack(xrand() % 8 == 0 ? (uint32_t) (xrand() % 4000000000u) :
						   p.hdr->baseblk + (uint32_t) (xrand() % 600),
						   (uint16_t) (1 + xrand() % 291),
						   xrand() % 6 == 0 ? GBT_TID_FLAG_NEGZERO : 0);
		if (!gbt_post_insert_inplace(page, key, tid, false))
			continue;
		CHECK(gbt_post_insert_inplace(page, key, tid, true), "one word: applied where it said it would not");
		for (int i = 0; i <= m; i++)
		{
			bool		before = i < m && (keys[i] < key || (keys[i] == key && tids[i] < tid));

			if (!placed && !before)
			{
				nk[k] = key;
				nt[k++] = tid;
				placed = true;
				if (i < m && keys[i] == key && tids[i] == tid)
					continue;
			}
			if (i < m)
			{
				nk[k] = keys[i];
				nt[k++] = tids[i];
			}
		}
		memcpy(rewritten, page, GBT_PAGE_SIZE);
		gbt_leaf_rewrite(rewritten, k, nk, nt, true);
		CHECK(memcmp(rewritten, page, GBT_PAGE_SIZE) == 0,
			  "one word: in place differs from a rewrite (%d entries)", k);
		CHECK(gbt_post_check(page) == NULL, "one word: check after an insert in place");
		ninplace1++;
		if (memcmp(rewritten, page, GBT_PAGE_SIZE) != 0)
			memcpy(page, rewritten, GBT_PAGE_SIZE);
	}
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
	if (nw == 1)
	{
		/* node_post.c's form (its searches are test_node's) */
		CHECK(gbt_page_opaque(page)->keywords == 0 && gbt_post_check(page) == NULL,
			  "one word: not node_post.c's form");
		return;
	}
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
	test_inplace(page, nw, xb, ndistinct);
	gbt_wpost_view(page, &p);
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
	/* one word: node_post.c's form through these functions, no TID flags */
	for (int r = 0; r < 300; r++)
		test_roundtrip(1, (int) (xrand() % 2200), 1 + (int) (xrand() % (xrand() % 2 ? 8 : 600)),
					   xrand() % 5 == 0, false);
	for (int nw = 2; nw <= 4; nw++)
		for (int r = 0; r < 300; r++)
		{
			int			n = (int) (xrand() % 2200);
			int			nd = 1 + (int) (xrand() % (xrand() % 2 ? 8 : 600));

			test_roundtrip(nw, n, nd, xrand() % 5 == 0, xrand() % 3 == 0);
		}
	for (int r = 0; r < 600; r++)
		test_inplace_one_word(480 + (int) (xrand() % 1700), 1 + (int) (xrand() % (xrand() % 2 ? 8 : 400)),
							  xrand() % 5 == 0);
	/* the generator makes pages that fit and pages that do not */
	CHECK(nfit > ntried / 10 && nfit < ntried, "%d of %d fit", nfit, ntried);
	/* and entries put in place, of both forms */
	CHECK(ninplace > 1000 && ninplace1 > 1000, "%d and %d entries put in place", ninplace, ninplace1);
	if (failures)
	{
		printf("test_wpost: %d of %ld checks failed\n", failures, checks);
		return 1;
	}
	printf("test_wpost: %ld checks passed (%d multi-word and %d one-word entries put in place)\n",
		   checks, ninplace, ninplace1);
	return 0;
}
