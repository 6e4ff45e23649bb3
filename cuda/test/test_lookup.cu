/*
 * test_lookup.cu
 *	  Tests of libgbtree_cuda.so: batched lookups on device copies compared
 *	  bit for bit with the CPU reference (src/gbtree_walk.h, through
 *	  tree_model.h), which is itself checked against a sorted-array oracle;
 *	  corrupted copies must give GBT_CUDA_ECORRUPT; the ESPACE path; page
 *	  shipping (growth, duplicates).
 *
 *	  test_lookup [--small]    (--small: sizes for compute-sanitizer)
 *	  Last line: "N passed, N failed"; exit status 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <string>
#include <vector>
#include <chrono>

#include "tree_model.h"		/* first: declares node.c's functions extern "C" */
#include "gbtree_cuda.h"

static int	npass = 0,
			nfail = 0;
static auto t_start = std::chrono::steady_clock::now();

static double
elapsed(void)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
}
static bool small = false;

#define EXPECT(cond, ...) \
	do { if (cond) npass++; else { nfail++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static const uint64_t MAXU = UINT64_MAX;
static const uint64_t TID_MIN = 0x10000ULL;	/* block 0, offset 1 */
static const uint64_t TID_MAX = 0xFFFFFFFEFFFFFFFFULL;

static uint64_t
rand_tid(TmRng &r)
{
	switch (r.below(8))
	{
		case 0:
			return TID_MIN;
		case 1:
			return TID_MAX;
		default:
			return gbt_tid_pack((uint32_t) r.below(0xFFFFFFFFu), (uint16_t) (1 + r.below(0xFFFF)),
								(uint16_t) r.below(2));
	}
}

/* ---- reference results --------------------------------------------------- */
struct Result
{
	std::vector<uint64_t> off,
				keys,
				tids;
};

static bool
reference(const TmIndex &ix, const std::vector<GbtCudaQuery> &qs, Result &r)
{
	std::vector<TmEntry> out;

	r.off.assign(qs.size() + 1, 0);
	r.keys.clear();
	r.tids.clear();
	for (size_t i = 0; i < qs.size(); i++)
	{
		out.clear();
		if (tm_lookup(ix, GBT_ROOT_BLKNO, qs[i].lo_key, qs[i].lo_tid, qs[i].hi_key, qs[i].hi_tid, out) != 0)
			return false;
		r.off[i] = r.keys.size();
		for (auto &e : out)
		{
			r.keys.push_back(e.key);
			r.tids.push_back(e.tid);
		}
	}
	r.off[qs.size()] = r.keys.size();
	return true;
}

/* the same from the sorted array of live entries */
static bool
oracle_matches(const std::vector<TmEntry> &live, const std::vector<GbtCudaQuery> &qs, const Result &r)
{
	uint64_t	pos = 0;

	for (size_t i = 0; i < qs.size(); i++)
	{
		TmEntry		lo{qs[i].lo_key, qs[i].lo_tid},
					hi{qs[i].hi_key, qs[i].hi_tid};

		if (r.off[i] != pos)
			return false;
		if (!(lo < hi))
			continue;
		auto		a = std::lower_bound(live.begin(), live.end(), lo);
		auto		b = std::lower_bound(live.begin(), live.end(), hi);

		for (auto it = a; it != b; ++it, pos++)
			if (pos >= r.keys.size() || r.keys[pos] != it->key || r.tids[pos] != it->tid)
				return false;
	}
	return r.off[qs.size()] == pos;
}

/* ---- device copy ----------------------------------------------------------- */

/* ship the pages in shuffled chunks, with stale duplicates that later puts override */
static GbtCudaCopy *
make_copy(const TmIndex &ix, TmRng &rng)
{
	GbtCudaCopy *c = NULL;
	int			rc = gbt_cuda_copy_create(&c, 4);	/* force growth */

	EXPECT(rc == 0, "copy_create: %d %s", rc, gbt_cuda_last_error());
	if (rc)
		return NULL;

	std::vector<uint32_t> order(ix.nblocks);

	for (uint32_t i = 0; i < ix.nblocks; i++)
		order[i] = i;
	for (uint32_t i = ix.nblocks; i > 1; i--)
		std::swap(order[i - 1], order[rng.below(i)]);

	size_t		pos = 0;

	while (pos < order.size())
	{
		size_t		n = std::min(order.size() - pos, (size_t) (1 + rng.below(700)));
		std::vector<uint32_t> blk;
		std::vector<char> img;

		/* a garbage image of a block first, the real one later in the call */
		if (rng.below(3) == 0)
		{
			blk.push_back(order[pos]);
			img.resize(GBT_PAGE_SIZE, (char) 0x5A);
		}
		for (size_t i = 0; i < n; i++)
		{
			blk.push_back(order[pos + i]);
			img.insert(img.end(), ix.page(order[pos + i]), ix.page(order[pos + i]) + GBT_PAGE_SIZE);
		}
		rc = gbt_cuda_copy_put_pages(c, blk.data(), img.data(), (uint32_t) blk.size());
		EXPECT(rc == 0, "put_pages: %d %s", rc, gbt_cuda_last_error());
		pos += n;
	}
	return c;
}

static bool
same_result(const Result &a, const std::vector<uint64_t> &off, const std::vector<uint64_t> &keys,
			const std::vector<uint64_t> &tids, uint64_t total, std::string &why)
{
	char		buf[256];

	if (total != a.keys.size())
	{
		snprintf(buf, sizeof(buf), "total %llu, expected %zu", (unsigned long long) total, a.keys.size());
		why = buf;
		return false;
	}
	for (size_t i = 0; i < a.off.size(); i++)
		if (off[i] != a.off[i])
		{
			snprintf(buf, sizeof(buf), "offsets[%zu] = %llu, expected %llu", i,
					 (unsigned long long) off[i], (unsigned long long) a.off[i]);
			why = buf;
			return false;
		}
	for (size_t i = 0; i < total; i++)
		if (keys[i] != a.keys[i] || tids[i] != a.tids[i])
		{
			snprintf(buf, sizeof(buf), "match %zu = (%llx,%llx), expected (%llx,%llx)", i,
					 (unsigned long long) keys[i], (unsigned long long) tids[i],
					 (unsigned long long) a.keys[i], (unsigned long long) a.tids[i]);
			why = buf;
			return false;
		}
	return true;
}

/* run one batch through the GPU (twice: first fill path, then the one-pass path) */
static void
check_batch(GbtCudaCopy *c, const TmIndex &ix, const std::vector<TmEntry> *live,
			const std::vector<GbtCudaQuery> &qs, int sorted, const char *what)
{
	Result		ref;

	if (!reference(ix, qs, ref))
	{
		EXPECT(false, "%s: reference lookup failed (model bug)", what);
		return;
	}
	if (live)
		EXPECT(oracle_matches(*live, qs, ref), "%s: reference disagrees with oracle", what);

	uint64_t	total = ref.keys.size();

	for (int round = 0; round < 2; round++)
	{
		std::vector<uint64_t> off(qs.size() + 1, 0xDEADBEEF), keys(total + 1, 0xABAB), tids(total + 1, 0xCDCD);
		uint64_t	got = 12345;
		int			rc = gbt_cuda_lookup(c, GBT_ROOT_BLKNO, qs.data(), (uint32_t) qs.size(), sorted,
										 off.data(), keys.data(), tids.data(), total + 1, &got);
		std::string why;

		EXPECT(rc == 0, "%s: lookup rc %d: %s", what, rc, gbt_cuda_last_error());
		if (rc == 0)
			EXPECT(same_result(ref, off, keys, tids, got, why), "%s (round %d): %s", what, round, why.c_str());
		/* keys optional */
		if (round == 1 && rc == 0)
		{
			std::vector<uint64_t> t2(total + 1);

			rc = gbt_cuda_lookup(c, GBT_ROOT_BLKNO, qs.data(), (uint32_t) qs.size(), sorted,
								 off.data(), NULL, t2.data(), total, &got);
			EXPECT(rc == 0 && got == total && std::equal(ref.tids.begin(), ref.tids.end(), t2.begin()),
				   "%s: lookup without keys rc %d", what, rc);
		}
	}
	/* ESPACE */
	if (total > 0)
	{
		std::vector<uint64_t> off(qs.size() + 1), tids(total);
		uint64_t	got = 0;
		int			rc = gbt_cuda_lookup(c, GBT_ROOT_BLKNO, qs.data(), (uint32_t) qs.size(), sorted,
										 off.data(), NULL, tids.data(), total - 1, &got);

		EXPECT(rc == GBT_CUDA_ESPACE && got == total && off == ref.off,
			   "%s: ESPACE path rc %d total %llu", what, rc, (unsigned long long) got);
	}
}

/*
 * A GBT_CUDA_POINTS batch: bare keys in the given order, repeats allowed;
 * the answer must be the one of their sorted distinct equality queries.
 */
static void
check_points(GbtCudaCopy *c, const TmIndex &ix, const std::vector<uint64_t> &keys, const char *what)
{
	std::vector<uint64_t> uniq(keys);
	std::vector<GbtCudaQuery> qs;
	Result		ref;

	std::sort(uniq.begin(), uniq.end());
	uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
	for (uint64_t k : uniq)
		qs.push_back({k, 0, k, MAXU});
	if (!reference(ix, qs, ref))
	{
		EXPECT(false, "%s: reference lookup failed (model bug)", what);
		return;
	}
	uint64_t	total = ref.keys.size();

	for (int round = 0; round < 2; round++)
	{
		std::vector<uint64_t> off(keys.size() + 1, 0xDEADBEEF), k(total + 1), t(total + 1);
		uint64_t	got = 12345;
		int			rc = gbt_cuda_lookup(c, GBT_ROOT_BLKNO, (const GbtCudaQuery *) keys.data(),
										 (uint32_t) keys.size(), GBT_CUDA_POINTS, off.data(),
										 k.data(), t.data(), total + 1, &got);
		std::string why;

		EXPECT(rc == 0, "%s: points lookup rc %d: %s", what, rc, gbt_cuda_last_error());
		if (rc == 0)
			EXPECT(same_result(ref, off, k, t, got, why), "%s (points, round %d): %s", what, round, why.c_str());
	}
	if (total > 0)
	{
		std::vector<uint64_t> off(keys.size() + 1), t(total);
		uint64_t	got = 0;
		int			rc = gbt_cuda_lookup(c, GBT_ROOT_BLKNO, (const GbtCudaQuery *) keys.data(),
										 (uint32_t) keys.size(), GBT_CUDA_POINTS, off.data(),
										 NULL, t.data(), total - 1, &got);

		EXPECT(rc == GBT_CUDA_ESPACE && got == total, "%s: points ESPACE rc %d total %llu", what, rc,
			   (unsigned long long) got);
	}
}

/* ---- query generation ------------------------------------------------------- */
static std::vector<GbtCudaQuery>
gen_queries(const std::vector<TmEntry> &live, size_t n, TmRng &r, uint64_t maxrange)
{
	std::vector<GbtCudaQuery> qs(n);

	for (size_t i = 0; i < n; i++)
	{
		GbtCudaQuery &q = qs[i];
		const TmEntry *e = live.empty() ? NULL : &live[r.below(live.size())];
		uint64_t	k = e ? e->key : r.next();

		switch (r.below(16))
		{
			case 0: case 1: case 2: case 3: case 4:	/* equality, existing key */
				q = {k, 0, k, MAXU};
				break;
			case 5:				/* equality, random key (mostly missing) */
				k = r.next();
				q = {k, 0, k, MAXU};
				break;
			case 6:				/* exact entry */
				if (e)
					q = {e->key, e->tid, e->key, e->tid + 1};
				else
					q = {k, 1, k, 2};
				break;
			case 7:				/* range over following entries */
				{
					size_t		j = e ? (size_t) (e - live.data()) : 0;
					size_t		j2 = std::min(live.size() ? live.size() - 1 : 0, j + (size_t) r.below(maxrange + 1));
					uint64_t	k2 = live.empty() ? k : live[j2].key;

					q = {k, 0, k2, MAXU};
				}
				break;
			case 8:				/* general TID bounds */
				{
					size_t		j = e ? (size_t) (e - live.data()) : 0;
					size_t		j2 = std::min(live.size() ? live.size() - 1 : 0, j + (size_t) r.below(maxrange + 1));
					const TmEntry *e2 = live.empty() ? NULL : &live[j2];

					q = {k, r.below(2) ? rand_tid(r) : (e ? e->tid : 0),
						e2 ? e2->key : k, r.below(2) ? rand_tid(r) : (e2 ? e2->tid + r.below(2) : 5)};
				}
				break;
			case 9:				/* below the minimum / above the maximum */
				if (r.below(2))
					q = {0, 0, live.empty() ? 5 : live[0].key, r.below(2) ? 0 : live.empty() ? 0 : live[0].tid};
				else
					q = {live.empty() ? 0 : live.back().key, live.empty() ? 0 : live.back().tid + 1, MAXU, MAXU};
				break;
			case 10:			/* empty: lo >= hi */
				q = {k, 5, k, r.below(2) ? (uint64_t) 5 : (uint64_t) 3};
				break;
			case 11:			/* key 0 / key MAX, all TIDs */
				q = r.below(2) ? GbtCudaQuery{0, 0, 0, MAXU} : GbtCudaQuery{MAXU, 0, MAXU, MAXU};
				break;
			case 12:			/* between neighbours */
				q = {k + 1, 0, k + 1, MAXU};
				break;
			case 13:			/* lo (k, MAX): after all entries of k */
				q = {k, MAXU, k + 3, 0};
				break;
			default:			/* short range by key */
				q = {k, 0, k + (r.next() >> (r.below(16) ? 40 + r.below(24) : 8 + r.below(56))), MAXU};
				break;
		}
	}
	return qs;
}

static void
sort_queries(std::vector<GbtCudaQuery> &qs)
{
	std::sort(qs.begin(), qs.end(), [](const GbtCudaQuery &a, const GbtCudaQuery &b) {
		return a.lo_key < b.lo_key || (a.lo_key == b.lo_key && a.lo_tid < b.lo_tid);
	});
}

/* ---- a test case: build, mutate, query ------------------------------------------ */
static void
run_case(const char *name, TmIndex &ix, std::vector<TmEntry> &live, size_t nq, uint64_t maxrange,
		 uint64_t seed)
{
	TmRng		r(seed);
	GbtCudaCopy *c = make_copy(ix, r);
	char		what[256];

	if (!c)
		return;
	std::sort(live.begin(), live.end());
	{
		std::vector<GbtCudaQuery> qs = gen_queries(live, nq, r, maxrange);

		snprintf(what, sizeof(what), "%s unsorted x%zu", name, nq);
		check_batch(c, ix, &live, qs, 0, what);
		/* a wrong hint: the leaf kernel on an unsorted batch */
		snprintf(what, sizeof(what), "%s unsorted flagged sorted x%zu", name, nq);
		check_batch(c, ix, &live, qs, 1, what);
		sort_queries(qs);
		snprintf(what, sizeof(what), "%s sorted x%zu", name, nq);
		check_batch(c, ix, &live, qs, 1, what);
	}
	{
		std::vector<GbtCudaQuery> qs = gen_queries(live, 1, r, maxrange);

		snprintf(what, sizeof(what), "%s batch of 1", name);
		check_batch(c, ix, &live, qs, 1, what);
	}
	{
		/* every entry by equality, sorted: neighbouring queries share leaves */
		std::vector<GbtCudaQuery> qs;
		size_t		step = std::max((size_t) 1, live.size() / (small ? 3000 : 200000));

		for (size_t i = 0; i < live.size(); i += step)
			if (qs.empty() || qs.back().lo_key != live[i].key)
				qs.push_back({live[i].key, 0, live[i].key, MAXU});
		snprintf(what, sizeof(what), "%s all keys sorted x%zu", name, qs.size());
		check_batch(c, ix, &live, qs, 1, what);
		{
			/* the same keys as bare points, reversed, each twice, and absent ones */
			std::vector<uint64_t> keys;

			for (size_t i = qs.size(); i-- > 0;)
			{
				keys.push_back(qs[i].lo_key);
				keys.push_back(qs[i].lo_key + 1);
				keys.push_back(qs[i].lo_key);
			}
			snprintf(what, sizeof(what), "%s point keys x%zu", name, keys.size());
			check_points(c, ix, keys, what);
			check_points(c, ix, std::vector<uint64_t>(1, qs.empty() ? 0 : qs[0].lo_key), what);
		}
		/* whole-index range */
		qs.assign(1, GbtCudaQuery{0, 0, MAXU, MAXU});
		snprintf(what, sizeof(what), "%s full range", name);
		check_batch(c, ix, &live, qs, 1, what);
	}
	gbt_cuda_copy_free(c);
	printf("ok   %s (%u blocks, %zu entries, root level %u) [%.1f s]\n", name, ix.nblocks, live.size(),
		   (unsigned) ix.op(GBT_ROOT_BLKNO)->level, elapsed());
	fflush(stdout);
}

static std::vector<TmEntry>
random_entries(size_t n, TmRng &r, uint64_t keydomain)
{
	std::vector<TmEntry> v(n);

	for (size_t i = 0; i < n; i++)
	{
		v[i].key = keydomain ? r.below(keydomain) * 0x9E3779B97F4A7C15ULL : r.next();
		v[i].tid = gbt_tid_pack((uint32_t) (i / 180), (uint16_t) (i % 180 + 1), 0);
	}
	std::sort(v.begin(), v.end());
	v.erase(std::unique(v.begin(), v.end()), v.end());
	return v;
}

static void
case_plain(const char *name, size_t n, int ff, int iff, uint64_t keydomain, size_t nq, uint64_t seed)
{
	TmRng		r(seed);
	std::vector<TmEntry> live = random_entries(n, r, keydomain);
	TmIndex		ix;

	tm_build(ix, live, ff, iff);
	run_case(name, ix, live, nq, 40, seed + 1);
}

/*
 * Leaves in posting form (src/README, "Deduplication"): every every-th
 * non-empty leaf rewritten in that form with its own entries, so the
 * chain mixes both forms; the copy's lookups then go to the walk kernels.
 */
static void
to_posting(TmIndex &ix, int every)
{
	std::vector<uint64_t> keys(GBT_LEAF_MAX_ENTRIES),
				tids(GBT_LEAF_MAX_ENTRIES);
	int			k = 0;

	for (uint32_t b = GBT_ROOT_BLKNO; b < ix.nblocks; b++)
	{
		char	   *pg = ix.page(b);
		GbtPageOpaque op = gbt_page_opaque(pg);
		int			n;

		if (op->page_id != GBT_PAGE_ID || !(op->flags & GBT_F_LEAF) ||
			(op->flags & (GBT_F_DELETED | GBT_F_META)) || k++ % every != 0)
			continue;
		n = gbt_leaf_extract(pg, keys.data(), tids.data());
		if (n > 0 && gbt_post_fits(n, keys.data(), tids.data()))
			gbt_post_encode(pg, n, keys.data(), tids.data());
	}
}

static void
case_posting(const char *name, size_t n, uint64_t keydomain, int every, size_t nq, uint64_t seed)
{
	TmRng		r(seed);
	std::vector<TmEntry> live = random_entries(n, r, keydomain);
	TmIndex		ix;

	tm_build(ix, live, 90, 70);
	to_posting(ix, every);
	run_case(name, ix, live, nq, 40, seed + 1);
}

static void
case_mutated(const char *name, size_t n, size_t ninsert, size_t ndelete, int nleafdel,
			 uint64_t keydomain, size_t nq, uint64_t seed)
{
	TmRng		r(seed);
	std::vector<TmEntry> live = random_entries(n, r, keydomain);
	TmIndex		ix;
	size_t		ins = 0,
				split0;

	tm_build(ix, live, 60, 10);
	split0 = ix.nblocks;
	for (size_t i = 0; i < ninsert; i++)
	{
		TmEntry		e;

		if (keydomain)
			e.key = r.below(keydomain) * 0x9E3779B97F4A7C15ULL;
		else if (r.below(4) == 0 && !live.empty())
			e.key = live[r.below(live.size())].key;	/* duplicate key */
		else
			e.key = r.next();
		e.tid = rand_tid(r);
		if (std::binary_search(live.begin(), live.end(), e))
			continue;
		if (tm_insert(ix, e, r))
		{
			live.insert(std::upper_bound(live.begin(), live.end(), e), e);
			ins++;
		}
	}
	for (size_t i = 0; i < ndelete; i++)
	{
		TmEntry		g;

		if (tm_delete_random(ix, r, &g))
			live.erase(std::lower_bound(live.begin(), live.end(), g));
	}
	int			deleted = 0;

	for (int i = 0; i < nleafdel; i++)
	{
		std::vector<TmEntry> gone;

		if (tm_delete_leaf(ix, r, i % 3, gone))
		{
			deleted++;
			for (auto &g : gone)
				live.erase(std::lower_bound(live.begin(), live.end(), g));
		}
	}
	printf("     %s: %zu inserted, %u pages added by splits, %d leaves deleted\n", name, ins,
		   ix.nblocks - (unsigned) split0, deleted);
	EXPECT(deleted > 0 || nleafdel == 0, "%s: no leaf could be deleted", name);
	run_case(name, ix, live, nq, 60, seed + 7);
}

/* ---- corruption -------------------------------------------------------------------- */
static void
expect_corrupt_order(const TmIndex &ix, uint32_t root, const std::vector<GbtCudaQuery> &qs,
					 const char *what, uint32_t extra_blocks, int sorted)
{
	TmRng		r(99);
	GbtCudaCopy *c = NULL;
	int			rc = gbt_cuda_copy_create(&c, ix.nblocks + extra_blocks);

	EXPECT(rc == 0, "copy_create");
	if (rc)
		return;
	rc = gbt_cuda_copy_put_range(c, 0, ix.img.data(), ix.nblocks);
	EXPECT(rc == 0, "put_range: %s", gbt_cuda_last_error());

	std::vector<uint64_t> off(qs.size() + 1), keys(1 << 20), tids(1 << 20);
	uint64_t	total = 7;

	rc = gbt_cuda_lookup(c, root, qs.data(), (uint32_t) qs.size(), sorted, off.data(), keys.data(),
						 tids.data(), keys.size(), &total);
	EXPECT(rc == GBT_CUDA_ECORRUPT, "%s%s: expected ECORRUPT, got %d (%s)", what,
		   sorted ? " (sorted)" : "", rc, gbt_cuda_last_error());
	if (rc == GBT_CUDA_ECORRUPT)
		printf("ok   corrupt%s: %s -> %s\n", sorted ? " (sorted)" : "", what, gbt_cuda_last_error());
	/* the copy stays usable: a batch of nothing works */
	rc = gbt_cuda_lookup(c, GBT_ROOT_BLKNO, qs.data(), 0, 0, off.data(), NULL, tids.data(), 0, &total);
	EXPECT(rc == 0, "%s: empty batch after corruption rc %d", what, rc);
	gbt_cuda_copy_free(c);
}

/*
 * Both kernels: as given (count kernel) and flagged sorted (leaf kernel,
 * with the queries it leaves to the count kernel).
 */
static void
expect_corrupt(const TmIndex &ix, uint32_t root, const std::vector<GbtCudaQuery> &qs, const char *what,
			   uint32_t extra_blocks = 0)
{
	expect_corrupt_order(ix, root, qs, what, extra_blocks, 0);
	expect_corrupt_order(ix, root, qs, what, extra_blocks, 1);
}

static uint32_t
find_inner(TmIndex &ix, int level)
{
	for (uint32_t b = GBT_FIRST_FREE_BLKNO; b < ix.nblocks; b++)
		if (!(ix.op(b)->flags & GBT_F_LEAF) && ix.op(b)->level == level)
			return b;
	return 0;
}

static void
corruption_tests(void)
{
	TmRng		r(4242);
	std::vector<TmEntry> live = random_entries(small ? 6000 : 60000, r, 0);
	TmIndex		base;

	tm_build(base, live, 90, 1);	/* several levels (fanout 3) */

	std::vector<GbtCudaQuery> qs;

	/* point queries for every 10th entry (touch every leaf) and a full range */
	for (size_t i = 0; i < live.size(); i += 10)
		qs.push_back({live[i].key, 0, live[i].key, MAXU});
	qs.push_back({0, 0, MAXU, MAXU});

	uint32_t	l1 = find_inner(base, 1);
	uint32_t	leaf = 0;

	/*
	 * Point queries only, flagged sorted: the leaf kernel alone (every
	 * warp starts with a descent, and each leaf holds queries).
	 */
	std::vector<GbtCudaQuery> points(qs.begin(), qs.end() - 1);

	EXPECT(l1 != 0, "no level-1 page");
	tm_descend(base, GBT_ROOT_BLKNO, live[live.size() / 2].key, 0, &leaf);

	/* bad child: out of range, metapage, NULL root, never-put block */
	{
		const uint32_t bads[4] = {base.nblocks + 1000, GBT_META_BLKNO, GBT_NULLROOT_BLKNO,
		base.nblocks + 3};
		const char *names[4] = {"child out of range", "child = metapage", "child = NULL root",
		"child = never-put block"};

		for (int k = 0; k < 4; k++)
		{
			TmIndex		ix = base;
			GbtNode		node;

			gbt_node_view(ix.page(l1), &node);
			for (int s = 0; s < node.nslots; s++)
				node.child[s] = bads[k];
			expect_corrupt(ix, GBT_ROOT_BLKNO, qs, names[k], k == 3 ? 10 : 0);
			expect_corrupt_order(ix, GBT_ROOT_BLKNO, points, names[k], k == 3 ? 10 : 0, 1);
		}
	}
	/* child to a page of the wrong level */
	{
		TmIndex		ix = base;
		GbtNode		node;

		gbt_node_view(ix.page(l1), &node);
		for (int s = 0; s < node.nslots; s++)
			node.child[s] = l1;
		node.child[0] = l1;
		/* l1 -> l1 is also "not the current page"? use another inner page */
		for (uint32_t b = GBT_FIRST_FREE_BLKNO; b < ix.nblocks; b++)
			if (b != l1 && !(ix.op(b)->flags & GBT_F_LEAF))
			{
				for (int s = 0; s < node.nslots; s++)
					node.child[s] = b;
				break;
			}
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "downlink to a page of the wrong level");
		expect_corrupt_order(ix, GBT_ROOT_BLKNO, points, "downlink to a page of the wrong level, points", 0, 1);
	}
	/* zeroed leaf, garbage page id */
	{
		TmIndex		ix = base;

		memset(ix.page(leaf), 0, GBT_PAGE_SIZE);
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "zeroed leaf");
		expect_corrupt_order(ix, GBT_ROOT_BLKNO, points, "zeroed leaf, points", 0, 1);
		ix = base;
		ix.op(leaf)->page_id = 0x1234;
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "bad page id");
		expect_corrupt_order(ix, GBT_ROOT_BLKNO, points, "bad page id, points", 0, 1);
		ix = base;
		ix.op(leaf)->nslots = 384;
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "leaf with inner capacity");
		expect_corrupt_order(ix, GBT_ROOT_BLKNO, points, "leaf with inner capacity, points", 0, 1);
	}
	/* right-link to itself; right-link loop between two leaves (move-right loop) */
	{
		TmIndex		ix = base;

		ix.op(leaf)->rightlink = leaf;
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "right-link to itself");
		ix = base;
		ix.op(leaf)->rightlink = ix.op(leaf)->leftlink;
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "right-link back to the left sibling");
		ix = base;
		{
			uint32_t	a = leaf,
						b = ix.op(leaf)->rightlink;

			ix.op(a)->hikey = 1;
			ix.op(a)->hitid = 0;
			ix.op(a)->lowkey = 0;
			ix.op(a)->lowtid = 0;
			ix.op(b)->hikey = 1;
			ix.op(b)->hitid = 0;
			ix.op(b)->lowkey = 0;
			ix.op(b)->lowtid = 0;
			ix.op(b)->rightlink = a;
			expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "move-right loop between two leaves");
			/* point queries only: the descent itself loops (hop bound) */
			std::vector<GbtCudaQuery> pq(qs.begin(), qs.end() - 1);

			expect_corrupt(ix, GBT_ROOT_BLKNO, pq, "move-right loop, descents only");
		}
		ix = base;
		ix.op(leaf)->rightlink = base.nblocks + 5;
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "right-link out of range");
	}
	/* swapped downlinks: a page whose low key is above the target */
	{
		TmIndex		ix = base;
		std::vector<TmEntry> pe;
		std::vector<uint32_t> pc;

		tm_extract(ix.page(l1), pe, &pc);
		std::reverse(pc.begin(), pc.end());
		tm_reload(ix.page(l1), pe, &pc, true);
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "reversed downlinks (low key above target)");
	}
	/* leaf chain broken: a leaf's low key changed */
	{
		TmIndex		ix = base;
		uint32_t	rl = ix.op(leaf)->rightlink;

		ix.op(rl)->lowkey += 1;
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "leaf low key differs from left high key");
	}
	/* root out of range, root = metapage, level too high */
	{
		expect_corrupt(base, GBT_META_BLKNO, qs, "root = metapage");
		expect_corrupt(base, base.nblocks + 7, qs, "root out of range");
		TmIndex		ix = base;

		ix.op(GBT_ROOT_BLKNO)->level = 40;
		expect_corrupt(ix, GBT_ROOT_BLKNO, qs, "root level 40");
		expect_corrupt_order(ix, GBT_ROOT_BLKNO, points, "root level 40, points", 0, 1);
	}
	/* random garbage in random pages: ECORRUPT or a result, never a crash */
	for (int t = 0; t < (small ? 3 : 20); t++)
	{
		TmIndex		ix = base;
		GbtCudaCopy *c = NULL;

		for (int k = 0; k < 5; k++)
		{
			uint32_t	b = (uint32_t) r.below(ix.nblocks);
			size_t		off = r.below(GBT_PAGE_SIZE - 8);
			uint64_t	v = r.below(2) ? r.next() : r.below(ix.nblocks + 3);

			memcpy(ix.page(b) + off, &v, r.below(2) ? 4 : 8);
		}
		if (gbt_cuda_copy_create(&c, ix.nblocks) == 0)
		{
			std::vector<uint64_t> off(qs.size() + 1), tids(1 << 20);
			uint64_t	total;
			int			rc;

			gbt_cuda_copy_put_range(c, 0, ix.img.data(), ix.nblocks);
			rc = gbt_cuda_lookup(c, GBT_ROOT_BLKNO, qs.data(), (uint32_t) qs.size(), t & 1, off.data(), NULL,
								 tids.data(), tids.size(), &total);
			EXPECT(rc == 0 || rc == GBT_CUDA_ECORRUPT || rc == GBT_CUDA_ESPACE, "garbage: rc %d (%s)", rc,
				   gbt_cuda_last_error());
			gbt_cuda_copy_free(c);
		}
	}
	printf("ok   random garbage pages\n");
}

/* ---- API odds and ends --------------------------------------------------------------- */
static void
api_tests(void)
{
	GbtCudaCopy *c = NULL;
	char		err[256];

	EXPECT(gbt_cuda_abi_version() == GBT_CUDA_ABI_VERSION, "abi version");
	EXPECT(gbt_cuda_init(0, err, sizeof(err)) == 0, "init: %s", err);
	EXPECT(gbt_cuda_init(999, err, sizeof(err)) == GBT_CUDA_EINVAL, "init of a missing device");
	EXPECT(gbt_cuda_init(0, err, sizeof(err)) == 0, "init again");
	EXPECT(gbt_cuda_copy_create(&c, 10) == 0, "create");

	/* growth keeps content; unput blocks read as zero */
	{
		TmRng		r(5);
		std::vector<TmEntry> live = random_entries(3000, r, 0);
		TmIndex		ix;

		tm_build(ix, live, 90);
		EXPECT(gbt_cuda_copy_put_range(c, 0, ix.img.data(), GBT_FIRST_FREE_BLKNO) == 0, "put_range");
		EXPECT(gbt_cuda_copy_put_range(c, GBT_FIRST_FREE_BLKNO, ix.page(GBT_FIRST_FREE_BLKNO),
									   ix.nblocks - GBT_FIRST_FREE_BLKNO) == 0, "put_range growth");
		EXPECT(gbt_cuda_copy_nblocks(c) >= ix.nblocks, "nblocks");
		EXPECT(gbt_cuda_copy_device_bytes(c) >= (uint64_t) ix.nblocks * 8192, "device bytes");

		std::vector<GbtCudaQuery> qs = gen_queries(live, 500, r, 20);

		check_batch(c, ix, &live, qs, 0, "after put_range growth");

		uint32_t	far = 50000;

		EXPECT(gbt_cuda_copy_put_pages(c, &far, ix.page(GBT_FIRST_FREE_BLKNO), 1) == 0, "put far block");
		EXPECT(gbt_cuda_copy_nblocks(c) > far, "grown to far block");
		check_batch(c, ix, &live, qs, 0, "after growth by put_pages");

		uint64_t	tot;
		std::vector<uint64_t> off(qs.size() + 1);

		EXPECT(gbt_cuda_lookup(c, GBT_META_BLKNO, qs.data(), 1, 0, off.data(), NULL, NULL, 0, &tot) ==
			   GBT_CUDA_ECORRUPT, "root 0");
		EXPECT(gbt_cuda_lookup(NULL, GBT_ROOT_BLKNO, qs.data(), 1, 0, off.data(), NULL, NULL, 0, &tot) ==
			   GBT_CUDA_EINVAL, "NULL copy");
		EXPECT(gbt_cuda_lookup(c, GBT_ROOT_BLKNO, qs.data(), 0, 0, off.data(), NULL, NULL, 0, &tot) == 0 &&
			   off[0] == 0 && tot == 0, "empty batch");
	}
	gbt_cuda_copy_free(c);
	gbt_cuda_copy_free(NULL);

	/* the old 16-slot count */
	{
		uint64_t	blocks[32],
					qv[2] = {10, 0};
		int			counts[2];

		for (int i = 0; i < 32; i++)
			blocks[i] = i;
		EXPECT(gbt_cuda_count_lt16(blocks, qv, counts, 2) == 0 && counts[0] == 10 && counts[1] == 0,
			   "count_lt16");
	}
	printf("ok   api\n");
}

int
main(int argc, char **argv)
{
	char		desc[256];
	uint64_t	mem = 0;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--small") == 0)
			small = true;
	/* exercise the device sort of unsorted batches at the small size too */
	if (small)
		setenv("GBT_CUDA_SORT_MIN", "2000", 1);
	if (gbt_cuda_probe(desc, sizeof(desc), &mem) != 0)
	{
		printf("no CUDA device\n0 passed, 1 failed\n");
		return 1;
	}
	printf("device: %s, %llu MiB\n", desc, (unsigned long long) (mem >> 20));

	api_tests();

	size_t		nq = small ? 3000 : 200000;

	case_plain("single leaf root", 100, 90, 70, 0, small ? 500 : 5000, 1);
	case_plain("empty tree", 0, 90, 70, 0, 300, 2);
	case_plain("two levels", small ? 8000 : 20000, 90, 70, 0, nq, 3);
	case_plain("three levels", small ? 20000 : 300000, 90, small ? 10 : 70, 0, nq, 4);
	case_plain("five levels (small fanout)", small ? 8000 : 40000, 10, 2, 0, nq, 5);
	case_plain("few distinct keys (long duplicate runs)", small ? 10000 : 100000, 70, 20, 37, small ? 1000 : 20000, 6);
	case_posting("posting leaves, few distinct keys", small ? 10000 : 100000, 37, 1, small ? 1000 : 20000, 61);
	case_posting("posting and plain leaves, distinct keys", small ? 8000 : 60000, 0, 2, nq, 62);
	case_posting("posting leaves, a thousand keys", small ? 10000 : 200000, 1000, 1, nq, 63);
	{
		/* one key, 150k entries over hundreds of leaves */
		std::vector<TmEntry> live;
		size_t		n = small ? 5000 : 150000;
		TmIndex		ix;

		for (size_t i = 0; i < n; i++)
			live.push_back({0x8000000000000123ULL, gbt_tid_pack((uint32_t) (i / 7), (uint16_t) (i % 7 + 1), 0)});
		tm_build(ix, live, 90, 70);
		run_case("all keys equal", ix, live, small ? 100 : 300, 3, 7);
	}
	{
		/* keys 0 and UINT64_MAX, TIDs at both extremes */
		TmRng		r(8);
		std::vector<TmEntry> live = random_entries(small ? 2000 : 20000, r, 0);
		TmIndex		ix;

		for (int i = 0; i < 700; i++)
		{
			live.push_back({0, i == 0 ? TID_MIN : i == 1 ? TID_MAX : rand_tid(r)});
			live.push_back({MAXU, i == 0 ? TID_MIN : i == 1 ? TID_MAX : rand_tid(r)});
			live.push_back({1, rand_tid(r)});
			live.push_back({MAXU - 1, rand_tid(r)});
		}
		std::sort(live.begin(), live.end());
		live.erase(std::unique(live.begin(), live.end()), live.end());
		tm_build(ix, live, 50, 5);
		run_case("keys 0 and UINT64_MAX, extreme TIDs", ix, live, nq / 4, 50, 9);
	}
	case_mutated("mutated: inserts, uneven splits, deletes, deleted leaves", small ? 6000 : 50000,
				 small ? 6000 : 60000, small ? 1000 : 10000, small ? 12 : 60, 0, nq, 10);
	case_mutated("mutated with duplicate runs", small ? 6000 : 40000, small ? 6000 : 40000,
				 small ? 1000 : 5000, small ? 12 : 40, 300, nq, 11);
	if (!small)
	{
		/* a batch of millions */
		TmRng		r(12);
		std::vector<TmEntry> live = random_entries(1000000, r, 0);
		TmIndex		ix;

		tm_build(ix, live, 90, 70);

		GbtCudaCopy *c = make_copy(ix, r);
		std::vector<GbtCudaQuery> qs = gen_queries(live, 2000000, r, 10);

		check_batch(c, ix, &live, qs, 0, "1M entries, 2M queries unsorted");
		sort_queries(qs);
		check_batch(c, ix, &live, qs, 1, "1M entries, 2M queries sorted");
		{
			/* 1M point keys of live entries in random order, some repeated, some absent */
			std::vector<uint64_t> keys;

			for (size_t i = 0; i < 1000000; i++)
				keys.push_back(i % 10 == 9 ? (r.next() | 1) : live[r.next() % live.size()].key);
			check_points(c, ix, keys, "1M entries, 1M point keys");
		}
		gbt_cuda_copy_free(c);
		printf("ok   batch of millions\n");
	}
	corruption_tests();

	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
