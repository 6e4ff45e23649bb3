/*
 * test_wtree.cu
 *	  Lookups on whole trees of multi-word keys through the library's
 *	  gbt_cuda_lookup_words: the model builder of src/gbtree_walk.h lays
 *	  sorted entries out bottom-up as src/build.c does (pages of node.c's
 *	  multi-word format, right-links, high and low keys with their later
 *	  words in the body), the pages go into a device copy, and every
 *	  query's matches (count, words and TIDs, in order) must equal the CPU
 *	  walk's (gbt_walk_range_words), whose counts must equal a binary
 *	  search's over the sorted entries; the same on trees whose entries
 *	  carry tails (mixed pages, searched by words).  Then damaged copies (a bad page
 *	  id, a child or right-link out of range, a right-link loop, a wrong
 *	  word count) must give GBT_CUDA_ECORRUPT, and one timing: point
 *	  lookups on a large two-word tree, transfers included.
 *
 *	  test_wtree [entries for the timing, default 20000000]
 *	  Last line: "N passed, N failed"; exit status 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <chrono>
#include <vector>

#include "test_common.h"

#include "gbtree_cuda.h"

extern "C"
{
#include "gbtree_simd.h"
#include "gbtree_walk.h"
#include "gbtree_wsort.h"
#include "gbtree_tailwalk.h"
}

/* ---- the tree: gbtree_walk.h's model builder ---- */

struct WTree
{
	std::vector<char> img;
	uint32_t	root = 0;
	uint32_t	nblocks = 0;
	int			nw = 2;
};

static void
build_tree(WTree &t, const std::vector<uint64_t> &e, size_t n, int nw)
{
	t.nw = nw;
	t.img.assign(gbt_walk_words_max_pages(n, nw, 90) * GBT_PAGE_SIZE, 0);
	t.root = gbt_walk_build_words(t.img.data(), e.data(), n, nw, 90, &t.nblocks);
	t.img.resize((size_t) t.nblocks * GBT_PAGE_SIZE);
}

struct RangeQuery
{
	uint64_t	lo[GBT_MAX_KEY_WORDS];
	uint64_t	hi[GBT_MAX_KEY_WORDS];
};

/* the CPU walk's matches, appended */
struct WalkOut
{
	std::vector<uint64_t> words;
	std::vector<uint64_t> tids;
	int			nw;
};

static void
walk_match(void *arg, const uint64_t *key, uint64_t tid)
{
	WalkOut    *o = (WalkOut *) arg;

	o->words.insert(o->words.end(), key, key + o->nw);
	o->tids.push_back(tid);
}

/* a device copy holding the tree's pages */
static GbtCudaCopy *
load_copy(const WTree &t)
{
	GbtCudaCopy *c = NULL;

	if (gbt_cuda_copy_create(&c, t.nblocks) != 0 ||
		gbt_cuda_copy_put_range(c, 0, t.img.data(), t.nblocks) != 0)
	{
		printf("copy: %s\n", gbt_cuda_last_error());
		exit(1);
	}
	return c;
}

/* the library's lookup of qs: rc, offsets, words, TIDs */
static int
lookup(GbtCudaCopy *c, const WTree &t, const std::vector<RangeQuery> &qs,
	   std::vector<uint64_t> &offsets, std::vector<uint64_t> &words, std::vector<uint64_t> &tids)
{
	std::vector<uint64_t> flat((size_t) qs.size() * 2 * t.nw);
	uint64_t	total = 0;
	uint64_t	cap = 1024;
	int			rc;

	for (size_t i = 0; i < qs.size(); i++)
		for (int k = 0; k < t.nw; k++)
		{
			flat[i * 2 * t.nw + k] = qs[i].lo[k];
			flat[i * 2 * t.nw + t.nw + k] = qs[i].hi[k];
		}
	offsets.assign(qs.size() + 1, 0);
	for (;;)
	{
		words.assign(cap * t.nw, 0);
		tids.assign(cap, 0);
		rc = gbt_cuda_lookup_words(c, t.root, t.nw, flat.data(), (uint32_t) qs.size(),
								   offsets.data(), words.data(), tids.data(), cap, &total);
		if (rc != GBT_CUDA_ESPACE)
			break;
		cap = total;
	}
	words.resize(total * t.nw);
	tids.resize(total);
	return rc;
}

/* ---- the reference ---- */

static size_t
ref_bound(const std::vector<uint64_t> &e, size_t n, int nw, const uint64_t *x, bool upper)
{
	size_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;
		int			c = 0;

		for (int k = 0; k < nw && c == 0; k++)
			c = (e[mid * (nw + 1) + k] > x[k]) - (e[mid * (nw + 1) + k] < x[k]);
		if (upper ? c <= 0 : c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* entries: kind 0 uuid-like, 1 (tenant, time), 2 heavy ties in every word */
static void
make_entries(std::vector<uint64_t> &e, size_t n, int nw, int kind)
{
	std::vector<uint64_t> scratch(n * (nw + 1));
	std::vector<size_t> hist(gbt_wsort_hist_size(nw));

	e.resize(n * (nw + 1));
	for (size_t i = 0; i < n; i++)
	{
		uint64_t   *r = &e[i * (nw + 1)];

		for (int k = 0; k < nw; k++)
			r[k] = kind == 0 ? xrand() : kind == 1 ? (k == 0 ? xrand() % 1000 : xrand() >> 20)
				: xrand() % 4;
		r[nw] = ((uint64_t) (i / 200) << 32 | (uint64_t) (i % 200 + 1) << 16);
	}
	gbt_wsort(e.data(), scratch.data(), n, nw, hist.data(), NULL);
}

static void
run_case(int nw, int kind, size_t n, int nq, bool timed)
{
	std::vector<uint64_t> e;
	WTree		t;
	std::vector<RangeQuery> qs(nq);
	std::vector<uint64_t> offsets,
				words,
				tids;
	GbtCudaCopy *c;
	int			mism = 0;
	int			rc = 0;
	auto		t0 = std::chrono::steady_clock::now();

	make_entries(e, n, nw, kind);
	build_tree(t, e, n, nw);
	for (int i = 0; i < nq; i++)
	{
		RangeQuery &q = qs[i];
		size_t		ia = xrand() % n;
		const uint64_t *a = &e[ia * (nw + 1)];
		/* a near entry: ranges of a few hundred matches, not a third of the tree */
		const uint64_t *b = &e[std::min(ia + xrand() % 400, n - 1) * (nw + 1)];
		int			form = timed ? 0 : (int) (i % 5);

		/* the first word's whole range matches a quarter of a tree of ties */
		if (form == 1 && kind == 2 && i % 50 != 1)
			form = 0;

		memset(&q, 0, sizeof(q));
		for (int k = 0; k < nw; k++)
		{
			q.lo[k] = a[k];
			q.hi[k] = a[k];
		}
		if (form == 1)			/* the first word's whole range */
			for (int k = 1; k < nw; k++)
			{
				q.lo[k] = 0;
				q.hi[k] = UINT64_MAX;
			}
		else if (form == 2)		/* between two entries */
		{
			bool		swap = false;

			for (int k = 0; k < nw; k++)
				if (a[k] != b[k])
				{
					swap = a[k] > b[k];
					break;
				}
			for (int k = 0; k < nw; k++)
			{
				q.lo[k] = swap ? b[k] : a[k];
				q.hi[k] = swap ? a[k] : b[k];
			}
		}
		else if (form == 3)		/* absent keys, extremes */
			for (int k = 0; k < nw; k++)
			{
				q.lo[k] = i % 2 ? UINT64_MAX : 0;
				q.hi[k] = q.lo[k];
			}
		else if (form == 4)		/* an empty range: hi below lo */
			for (int k = 0; k < nw; k++)
				q.hi[k] = k == nw - 1 && q.lo[k] > 0 ? q.lo[k] - 1 : q.lo[k];
	}
	double		build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

	c = load_copy(t);
	for (int rep = 0; rep < (timed ? 3 : 1); rep++)
	{
		auto		l0 = std::chrono::steady_clock::now();

		rc = lookup(c, t, qs, offsets, words, tids);
		if (timed)
			printf("  timing: %zu entries of %d words (%zu pages, %.0f MB), %d point lookups: %.2f ms through gbt_cuda_lookup_words, transfers included (%zu matches)\n",
				   n, nw, t.img.size() / GBT_PAGE_SIZE, t.img.size() / 1e6, nq,
				   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - l0).count(),
				   tids.size());
	}
	EXPECT(rc == 0, "%d words, kind %d: gbt_cuda_lookup_words returned %d: %s", nw, kind, rc,
		   gbt_cuda_last_error());
	for (int i = 0; i < nq && rc == 0; i++)
	{
		size_t		a = ref_bound(e, n, nw, qs[i].lo, false),
					b = ref_bound(e, n, nw, qs[i].hi, true);
		uint64_t	want = b > a ? b - a : 0;
		uint64_t	got = offsets[i + 1] - offsets[i];
		WalkOut		w;
		int64_t		walk;
		bool		same;

		w.nw = nw;
		walk = gbt_walk_range_words(t.img.data(), t.nblocks, t.root, nw, qs[i].lo, 0,
									qs[i].hi, UINT64_MAX, walk_match, &w);
		same = got == want && walk == (int64_t) want &&
			memcmp(w.words.data(), &words[offsets[i] * nw], sizeof(uint64_t) * nw * got) == 0 &&
			memcmp(w.tids.data(), &tids[offsets[i]], sizeof(uint64_t) * got) == 0;
		if (!same && mism++ < 5)
			printf("  query %d: device %llu, CPU walk %lld, reference %llu (or the matches differ)\n",
				   i, (unsigned long long) got, (long long) walk, (unsigned long long) want);
	}
	EXPECT(mism == 0, "%d words, kind %d, %zu entries: %d of %d queries differ (device, CPU walk, reference)",
		   nw, kind, n, mism, nq);
	printf("%d words, %s, %zu entries, %zu pages, build %.0f ms: %d queries, %zu matches, %d differ\n", nw,
		   kind == 0 ? "uuid-like" : kind == 1 ? "(tenant, time)" : "ties in every word", n,
		   t.img.size() / GBT_PAGE_SIZE, build_ms, nq, tids.size(), mism);
	gbt_cuda_copy_free(c);
}

/*
 * Trees whose entries carry tails (gbtree_tailwalk.h: pages of words alone
 * and tailed pages, mixed): the device searches words and TIDs only, so a
 * lookup of words lo..hi, both inclusive, must return every entry whose
 * words lie there, in index order ((words, tail, TID)), as the sorted
 * entries hold them and as the CPU walk of words gives them.  dense: most
 * entries carry a tail (every page tailed); else one in 60.
 */
static void
run_tail_case(int nw, int kind, bool dense, size_t n, int nq)
{
	std::vector<uint64_t> e,
				r((n + 1) * (nw + 2)),
				scratch((n + 1) * (nw + 2)),
				se((n + 1) * (nw + 1));
	std::vector<size_t> hist(gbt_wsort_hist_size(nw + 1));
	std::vector<GbtTail> tails(n + 1),
				stails(n + 1);
	std::vector<unsigned char> bytes((n + 1) * 8);
	std::vector<RangeQuery> qs(nq);
	std::vector<uint64_t> offsets,
				words,
				tids;
	WTree		t;
	GbtCudaCopy *c;
	int			mism = 0,
				ntailed = 0;
	int			rc;

	make_entries(e, n, nw, kind);
	for (size_t i = 0; i < n; i++)
	{
		int			len = dense ? (int) (xrand() % 7) : (xrand() % 60 == 0 ? 1 + (int) (xrand() % 6) : 0);

		for (int b = 0; b < len; b++)
			bytes[i * 8 + b] = (unsigned char) (1 + xrand() % 255);
		tails[i].data = &bytes[i * 8];
		tails[i].len = len;
		memcpy(&r[i * (nw + 2)], &e[i * (nw + 1)], sizeof(uint64_t) * (nw + 1));
		r[i * (nw + 2) + nw + 1] = (uint64_t) i << 16;
	}
	gbt_tail_sort(r.data(), scratch.data(), n, nw, tails.data(), hist.data());
	for (size_t i = 0; i < n; i++)
	{
		memcpy(&se[i * (nw + 1)], &r[i * (nw + 2)], sizeof(uint64_t) * (nw + 1));
		stails[i] = tails[r[i * (nw + 2) + nw + 1] >> 16];
	}
	t.nw = nw;
	gbt_walk_build_tails(NULL, se.data(), stails.data(), n, nw, 90, &t.nblocks);
	t.img.assign((size_t) t.nblocks * GBT_PAGE_SIZE, 0);
	t.root = gbt_walk_build_tails(t.img.data(), se.data(), stails.data(), n, nw, 90, &t.nblocks);
	for (uint32_t b = GBT_FIRST_FREE_BLKNO; b < t.nblocks; b++)
		ntailed += (gbt_page_opaque(gbt_walk_page(t.img.data(), b))->flags & GBT_F_TAILS) != 0;
	for (int i = 0; i < nq; i++)
	{
		RangeQuery &q = qs[i];
		size_t		ia = xrand() % n;
		const uint64_t *a = &se[ia * (nw + 1)];
		const uint64_t *b = &se[std::min(ia + xrand() % 400, n - 1) * (nw + 1)];

		for (int k = 0; k < nw; k++)
		{
			q.lo[k] = a[k];
			q.hi[k] = i % 3 == 1 ? b[k] : a[k];
		}
		if (i % 3 == 2)
			for (int k = 1; k < nw; k++)
			{
				q.lo[k] = 0;
				q.hi[k] = UINT64_MAX;
			}
	}
	c = load_copy(t);
	rc = lookup(c, t, qs, offsets, words, tids);
	EXPECT(rc == 0, "tails, %d words: gbt_cuda_lookup_words returned %d: %s", nw, rc,
		   gbt_cuda_last_error());
	for (int i = 0; i < nq && rc == 0; i++)
	{
		size_t		a = ref_bound(se, n, nw, qs[i].lo, false),
					b = ref_bound(se, n, nw, qs[i].hi, true);
		uint64_t	want = b > a ? b - a : 0;
		uint64_t	got = offsets[i + 1] - offsets[i];
		WalkOut		w;
		int64_t		walk;
		bool		same = got == want;

		w.nw = nw;
		walk = gbt_walk_range_words(t.img.data(), t.nblocks, t.root, nw, qs[i].lo, 0,
									qs[i].hi, UINT64_MAX, walk_match, &w);
		for (uint64_t j = 0; same && j < got; j++)
			same = memcmp(&words[(offsets[i] + j) * nw], &se[(a + j) * (nw + 1)],
						  sizeof(uint64_t) * nw) == 0 &&
				tids[offsets[i] + j] == se[(a + j) * (nw + 1) + nw];
		same = same && walk == (int64_t) want &&
			memcmp(w.tids.data(), &tids[offsets[i]], sizeof(uint64_t) * got) == 0;
		if (!same && mism++ < 5)
			printf("  tails, query %d: device %llu, CPU walk %lld, sorted entries %llu (or the matches differ)\n",
				   i, (unsigned long long) got, (long long) walk, (unsigned long long) want);
	}
	EXPECT(mism == 0, "tails, %d words, kind %d, %s: %d of %d queries differ", nw, kind,
		   dense ? "dense" : "sparse", mism, nq);
	EXPECT(ntailed > 0 && (dense || ntailed < (int) t.nblocks - GBT_FIRST_FREE_BLKNO),
		   "tails, %d words: %d of %u pages tailed", nw, ntailed, t.nblocks - GBT_FIRST_FREE_BLKNO);
	printf("%d words, %s, tails %s, %zu entries, %u pages (%d tailed): %d queries, %zu matches, %d differ\n",
		   nw, kind == 0 ? "uuid-like" : kind == 1 ? "(tenant, time)" : "ties in every word",
		   dense ? "on most entries" : "on one in 60", n, t.nblocks - GBT_FIRST_FREE_BLKNO, ntailed,
		   nq, tids.size(), mism);
	gbt_cuda_copy_free(c);
}

/*
 * Damaged copies: each damage, put into a copy of a small tree, must give
 * GBT_CUDA_ECORRUPT from a lookup that reaches it (never a fault or hang).
 */
static void
run_damage(void)
{
	std::vector<uint64_t> e;
	WTree		t;
	std::vector<RangeQuery> qs(64);
	const char *what[] = {"page id", "word count", "child out of range", "right-link loop",
	"right-link out of range"};

	make_entries(e, 50000, 2, 0);
	build_tree(t, e, 50000, 2);
	for (size_t i = 0; i < qs.size(); i++)
	{
		memset(&qs[i], 0, sizeof(RangeQuery));
		for (int k = 0; k < 2; k++)
			qs[i].hi[k] = UINT64_MAX;	/* every entry: every leaf is reached */
	}
	for (int d = 0; d < 5; d++)
	{
		WTree		bad = t;
		std::vector<uint64_t> offsets,
					words,
					tids;
		GbtCudaCopy *c;
		int			rc;
		uint32_t	leaf = GBT_NO_BLOCK;

		/* a leaf in the middle of the chain, and the root */
		for (uint32_t b = GBT_FIRST_FREE_BLKNO; b < bad.nblocks && leaf == GBT_NO_BLOCK; b++)
		{
			GbtPageOpaqueData *op = (GbtPageOpaqueData *) (bad.img.data() + (size_t) b * GBT_PAGE_SIZE +
														   GBT_OPAQUE_OFFSET);

			if ((op->flags & GBT_F_LEAF) && !(op->flags & GBT_F_RIGHTMOST) && b > bad.nblocks / 3)
				leaf = b;
		}
		{
			GbtPageOpaqueData *lop = (GbtPageOpaqueData *) (bad.img.data() + (size_t) leaf * GBT_PAGE_SIZE +
															GBT_OPAQUE_OFFSET);
			char	   *root = bad.img.data() + (size_t) bad.root * GBT_PAGE_SIZE;
			GbtNode		node;

			gbt_node_view(root, &node);
			switch (d)
			{
				case 0:
					lop->page_id = 0x1234;
					break;
				case 1:
					lop->keywords = 3;
					break;
				case 2:
					for (int sl = 0; sl < node.nslots; sl++)
						node.child[sl] = bad.nblocks + 7;
					break;
				case 3:
					lop->rightlink = leaf;
					break;
				case 4:
					lop->rightlink = bad.nblocks + 100;
					break;
			}
		}
		c = load_copy(bad);
		rc = lookup(c, bad, qs, offsets, words, tids);
		EXPECT(rc == GBT_CUDA_ECORRUPT, "damage \"%s\": rc %d (%s), want GBT_CUDA_ECORRUPT",
			   what[d], rc, gbt_cuda_last_error());
		printf("damage \"%s\": %s\n", what[d], gbt_cuda_last_error());
		gbt_cuda_copy_free(c);
	}
}

int
main(int argc, char **argv)
{
	size_t		big = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000;

	rng = 0x853C49E6748FEA9BULL;
	gbt_simd_set(gbt_simd_best());
	if (gbt_cuda_init(0, NULL, 0) != 0)
	{
		printf("no device: %s\n0 passed, 1 failed\n", gbt_cuda_last_error());
		return 1;
	}
	for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
		for (int kind = 0; kind < 3; kind++)
		{
			run_case(nw, kind, 1000, 2000, false);
			if (big > 0)		/* not under memcheck (test_wtree 0) */
				run_case(nw, kind, 200000, 20000, false);
		}
	for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
		for (int kind = 1; kind < 3; kind++)
		{
			run_tail_case(nw, kind, true, 3000, 2000);
			run_tail_case(nw, kind, false, big > 0 ? 100000 : 3000, 4000);
		}
	run_damage();
	if (big > 0)
		run_case(2, 0, big, 1000000, true);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
