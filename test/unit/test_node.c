/*
 * test_node.c
 *	  Unit tests of the in-page layer (src/node.c) and of the block counts
 *	  (src/simd.c): every implementation against a sorted-array model, on
 *	  random and adversarial pages.  Exits non-zero on the first failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbtree_node.h"
#include "gbtree_simd.h"
#include "gbtree_walk.h"
#include "gbtree_tailwalk.h"
#include "gbtree_wsort.h"

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

/* keys drawn from a small or a full domain, with the extremes often */
static uint64_t
rand_key(int mode)
{
	switch (mode)
	{
		case 0:
			return xrand() % 8;	/* heavy duplicates */
		case 1:
			{
				uint64_t	r = xrand() % 10;

				if (r == 0)
					return 0;
				if (r == 1)
					return UINT64_MAX;
				return xrand();
			}
		default:
			return xrand() % 100000;
	}
}

typedef struct Model
{
	uint64_t	k[GBT_MAX_SLOTS + 1];
	uint64_t	t[GBT_MAX_SLOTS + 1];
	int			n;
} Model;

static int
model_find(Model *m, uint64_t k, uint64_t t)
{
	for (int i = 0; i < m->n; i++)
		if (m->k[i] == k && m->t[i] == t)
			return i;
	return -1;
}

static void
model_insert(Model *m, uint64_t k, uint64_t t)
{
	int			i = 0;

	while (i < m->n && gbt_entry_lt(m->k[i], m->t[i], k, t))
		i++;
	memmove(m->k + i + 1, m->k + i, sizeof(uint64_t) * (m->n - i));
	memmove(m->t + i + 1, m->t + i, sizeof(uint64_t) * (m->n - i));
	m->k[i] = k;
	m->t[i] = t;
	m->n++;
}

static void
model_delete(Model *m, int i)
{
	memmove(m->k + i, m->k + i + 1, sizeof(uint64_t) * (m->n - i - 1));
	memmove(m->t + i, m->t + i + 1, sizeof(uint64_t) * (m->n - i - 1));
	m->n--;
}

/* compare node contents and searches with the model */
static void
compare(GbtNode *node, Model *m, int mode)
{
	uint64_t	k[GBT_MAX_SLOTS],
				t[GBT_MAX_SLOTS];
	int			n = gbt_node_extract(node, k, t, NULL);
	const char *err = gbt_node_check(node);

	CHECK(err == NULL, "node check: %s", err ? err : "");
	CHECK(n == m->n, "count %d vs model %d", n, m->n);
	for (int i = 0; i < n && i < m->n; i++)
		CHECK(k[i] == m->k[i] && t[i] == m->t[i], "entry %d differs", i);

	for (int q = 0; q < 20; q++)
	{
		uint64_t	x = (q < 3) ? (q == 0 ? 0 : q == 1 ? UINT64_MAX : UINT64_MAX - 1) :
			(m->n > 0 && q % 2) ? m->k[xrand() % m->n] : rand_key(mode);
		int			lb = 0,
					ub = 0;
		int			s;

		while (lb < m->n && m->k[lb] < x)
			lb++;
		ub = lb;
		while (ub < m->n && m->k[ub] <= x)
			ub++;
		/* lower bound, then the next used slot, must be the model's lb-th */
		s = gbt_node_next_used(node, gbt_node_lower_bound(node, x));
		if (lb < m->n)
			CHECK(s < node->nslots && node->keys[s] == m->k[lb] && node->tids[s] == m->t[lb],
				  "lower_bound(%llu) wrong", (unsigned long long) x);
		else
			CHECK(s == node->nslots, "lower_bound(%llu) should be past end", (unsigned long long) x);
		s = gbt_node_next_used(node, gbt_node_upper_bound(node, x));
		if (ub < m->n)
			CHECK(s < node->nslots && node->keys[s] == m->k[ub] && node->tids[s] == m->t[ub],
				  "upper_bound(%llu) wrong", (unsigned long long) x);
		else
			CHECK(s == node->nslots, "upper_bound(%llu) should be past end", (unsigned long long) x);
		if (m->n > 0)
		{
			int			i = xrand() % m->n;

			s = gbt_node_next_used(node, gbt_node_lower_bound_entry(node, m->k[i], m->t[i]));
			CHECK(s < node->nslots && node->keys[s] == m->k[i] && node->tids[s] == m->t[i],
				  "lower_bound_entry of existing entry %d wrong", i);
		}
	}
}

static void
random_ops(bool leaf, int mode, int nops, int simd)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	GbtNode		node;
	Model		m;
	uint64_t	nexttid = 1;

	gbt_simd_set((GbtSimdLevel) simd);
	gbt_node_format(page, leaf, leaf ? 0 : 1, 0);
	gbt_node_view(page, &node);
	m.n = 0;
	for (int op = 0; op < nops; op++)
	{
		uint64_t	r = xrand() % 100;

		if (r < 60 && m.n < node.nslots)
		{
			uint64_t	k = rand_key(mode);
			uint64_t	t = (xrand() % 3 == 0) ? (nexttid++ << 16) : ((xrand() % 1000000) << 16);
			int			slot;

			if (model_find(&m, k, t) >= 0)
				continue;
			slot = gbt_node_insert(&node, k, t, 7);
			CHECK(slot >= 0, "insert failed with room");
			model_insert(&m, k, t);
		}
		else if (r < 62 && m.n == node.nslots)
		{
			CHECK(gbt_node_insert(&node, 1, 1 << 16, 0) < 0, "insert into full page succeeded");
		}
		else if (r < 90 && m.n > 0)
		{
			int			i = xrand() % m.n;
			int			s = gbt_node_next_used(&node,
											   gbt_node_lower_bound_entry(&node, m.k[i], m.t[i]));

			CHECK(s < node.nslots && gbt_slot_used(&node, s), "entry to delete not found");
			if (s < node.nslots)
				gbt_node_delete_slot(&node, s);
			model_delete(&m, i);
		}
		else if (r < 92)
		{
			/* bulk reload of the current contents, as a split does */
			uint64_t	k[GBT_MAX_SLOTS],
						t[GBT_MAX_SLOTS];
			uint32_t	c[GBT_MAX_SLOTS];
			int			n = gbt_node_extract(&node, k, t, c);

			gbt_node_format(page, leaf, leaf ? 0 : 1, 0);
			gbt_node_view(page, &node);
			gbt_node_load_spread(&node, n, k, t, leaf ? NULL : c, (xrand() % 2) == 0);
		}
		if (op % 7 == 0)
			compare(&node, &m, mode);
	}
	/* fill to the brim, then empty it */
	while (m.n < node.nslots)
	{
		uint64_t	k = rand_key(mode),
					t = (nexttid++) << 16;

		CHECK(gbt_node_insert(&node, k, t, 0) >= 0, "fill insert failed");
		model_insert(&m, k, t);
	}
	compare(&node, &m, mode);
	while (m.n > 0)
	{
		int			i = xrand() % m.n;
		int			s = gbt_node_next_used(&node, gbt_node_lower_bound_entry(&node, m.k[i], m.t[i]));

		gbt_node_delete_slot(&node, s);
		model_delete(&m, i);
		if (m.n % 50 == 0)
			compare(&node, &m, mode);
	}
	compare(&node, &m, mode);
}

static int
block_gaps(const GbtNode *node, int b)
{
	int			g = 0;

	for (int s = b * GBT_BLOCK_SLOTS; s < (b + 1) * GBT_BLOCK_SLOTS; s++)
		g += !gbt_slot_used(node, s);
	return g;
}

/*
 * Block redistribution: inserts into the middle of a packed page (all gaps
 * at the end, as after an append split) must spread gaps over a few
 * blocks around the insert point, not shift half the page each time, and
 * leave blocks far away untouched.
 */
static void
test_redistribution(bool leaf, int simd)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	GbtNode		node;
	Model		m;
	uint64_t	k[GBT_MAX_SLOTS],
				t[GBT_MAX_SLOTS];
	uint32_t	c[GBT_MAX_SLOTS];
	int			n;

	gbt_simd_set((GbtSimdLevel) simd);
	gbt_node_format(page, leaf, leaf ? 0 : 1, 0);
	gbt_node_view(page, &node);
	n = node.nslots / 2;
	for (int i = 0; i < n; i++)
	{
		k[i] = (uint64_t) i * 1000;
		t[i] = (uint64_t) (i + 1) << 16;
		c[i] = 100 + i;
	}
	gbt_node_load_spread(&node, n, k, t, leaf ? NULL : c, false);
	m.n = 0;
	for (int i = 0; i < n; i++)
		model_insert(&m, k[i], t[i]);
	compare(&node, &m, 2);
	CHECK(block_gaps(&node, 0) == 0 && block_gaps(&node, 2) == 0, "packed page has gaps in front");

	/* one insert into block 2: a local window gets gaps, the far end does not move */
	gbt_node_insert(&node, 2 * 16 * 1000 + 500, 1 << 16, 9);
	model_insert(&m, 2 * 16 * 1000 + 500, 1 << 16);
	compare(&node, &m, 2);
	CHECK(block_gaps(&node, 2) > 0 || block_gaps(&node, 1) > 0 || block_gaps(&node, 3) > 0,
		  "no gap near the insert after redistribution");
	CHECK(block_gaps(&node, node.nblocks - 1) == GBT_BLOCK_SLOTS,
		  "redistribution reached blocks it did not need");

	/* many inserts at random places, then every block must have been spread */
	for (int i = 0; i < n / 2; i++)
	{
		uint64_t	key = (xrand() % (uint64_t) n) * 1000 + 1 + xrand() % 998;
		uint64_t	tid = (uint64_t) (n + i + 1) << 16;
		uint32_t	child = 7;

		CHECK(gbt_node_insert(&node, key, tid, child) >= 0, "insert failed with room");
		model_insert(&m, key, tid);
		if (i % 16 == 0)
			compare(&node, &m, 2);
	}
	compare(&node, &m, 2);
	/* fill completely: redistribution gives up, shifts still work */
	for (uint64_t i = 0; m.n < node.nslots; i++)
	{
		uint64_t	key = (xrand() % (uint64_t) n) * 1000 + 999;
		uint64_t	tid = (uint64_t) (3 * n + i + 1) << 16;

		if (model_find(&m, key, tid) >= 0)
			continue;
		CHECK(gbt_node_insert(&node, key, tid, 7) >= 0, "insert failed with room");
		model_insert(&m, key, tid);
	}
	compare(&node, &m, 2);
}

/*
 * Slots an ascending run of inserts moves on a leaf 90% full, its entries
 * spread: the run goes in between two entries, its heap TIDs adjacent
 * (each row just after the one before, as a group's newest rows come) or
 * not.  Adjacent, a spread of blocks puts their gaps where the run goes
 * on (node.c, insert_hot_spot), so the run shifts far fewer slots; the
 * page checked against a model after each insert either way.
 */
static long
hot_run_moves(bool adjacent)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static uint64_t bk[GBT_MAX_SLOTS],
				bt[GBT_MAX_SLOTS];
	static bool bu[GBT_MAX_SLOTS];
	GbtNode		node;
	Model		m;
	uint64_t	k[GBT_MAX_SLOTS],
				t[GBT_MAX_SLOTS];
	int			n;
	long		moved = 0;

	gbt_node_format(page, true, 0, 0);
	gbt_node_view(page, &node);
	n = node.nslots * 9 / 10;
	m.n = 0;
	for (int i = 0; i < n; i++)
	{
		k[i] = (uint64_t) i * 1000;
		t[i] = gbt_tid_pack(100 + 3 * i, 1, 0);	/* no two adjacent */
		model_insert(&m, k[i], t[i]);
	}
	gbt_node_load_spread(&node, n, k, t, NULL, true);
	for (int j = 0; m.n < node.nslots; j++)
	{
		uint64_t	key = (uint64_t) (n / 3) * 1000 + 1 + j;
		uint64_t	tid = adjacent ? gbt_tid_pack(5000, 1 + j, 0) : gbt_tid_pack(5000 + 2 * j, 1, 0);

		for (int s = 0; s < node.nslots; s++)
		{
			bk[s] = node.keys[s];
			bt[s] = node.tids[s];
			bu[s] = gbt_slot_used(&node, s);
		}
		CHECK(gbt_node_insert(&node, key, tid, 0) >= 0, "hot run: insert %d failed with room", j);
		model_insert(&m, key, tid);
		compare(&node, &m, 2);
		for (int s = 0; s < node.nslots; s++)
			moved += gbt_slot_used(&node, s) &&
				(!bu[s] || bk[s] != node.keys[s] || bt[s] != node.tids[s]);
	}
	return moved;
}

static void
test_hot_spot(int simd)
{
	long		hot,
				cold;

	gbt_simd_set((GbtSimdLevel) simd);
	hot = hot_run_moves(true);
	cold = hot_run_moves(false);
	CHECK(hot * 2 < cold, "an ascending run with adjacent TIDs moved %ld slots, %ld without", hot,
		  cold);
	if (simd == 0)
		printf("test_node: a run that fills a leaf from 90%%: %ld slots moved with adjacent heap TIDs, %ld without\n",
			   hot, cold);
}

static void
test_counts(int simd)
{
	uint64_t	block[16];

	for (int iter = 0; iter < 200000; iter++)
	{
		uint64_t	x;
		int			lt = 0,
					le = 0;

		for (int i = 0; i < 16; i++)
			block[i] = rand_key(iter % 3);
		x = (iter % 5 == 0) ? block[xrand() % 16] : rand_key(iter % 3);
		for (int i = 0; i < 16; i++)
		{
			lt += block[i] < x;
			le += block[i] <= x;
		}
		CHECK(gbt_count_lt16_scalar(block, x) == lt, "scalar lt");
		CHECK(gbt_count_le16_scalar(block, x) == le, "scalar le");
		if (simd >= GBT_SIMD_AVX2)
		{
			CHECK(gbt_count_lt16_avx2(block, x) == lt, "avx2 lt");
			CHECK(gbt_count_le16_avx2(block, x) == le, "avx2 le");
		}
		if (simd >= GBT_SIMD_AVX512)
		{
			CHECK(gbt_count_lt16_avx512(block, x) == lt, "avx512 lt");
			CHECK(gbt_count_le16_avx512(block, x) == le, "avx512 le");
		}
	}
}

/*
 * Multi-word counts: every implementation against a word-by-word
 * comparison, 1 to 4 words, over words with many ties (so that the later
 * words decide) and over the extremes.
 */
static void
test_word_counts(int simd)
{
	uint64_t	cols[4][32];
	const uint64_t *w[4] = {cols[0], cols[1], cols[2], cols[3]};

	for (int iter = 0; iter < 200000; iter++)
	{
		int			nwords = 1 + iter % 4;
		int			at = (iter / 4) % 2 ? 16 : 0;
		uint64_t	x[4];

		for (int k = 0; k < nwords; k++)
		{
			int			mode = (iter / 8 + k) % 3;

			for (int i = 0; i < 32; i++)
				cols[k][i] = rand_key(mode);
			x[k] = rand_key(mode);
		}
		/* a probe equal to a slot in some words, often all */
		if (iter % 3 == 0)
		{
			int			s = at + (int) (xrand() % 16);
			int			upto = (int) (xrand() % (nwords + 1));

			for (int k = 0; k < upto; k++)
				x[k] = cols[k][s];
		}
		for (int inclusive = 0; inclusive <= 1; inclusive++)
		{
			int			want = 0;

			for (int i = 0; i < 16; i++)
			{
				int			c = 0;

				for (int k = 0; k < nwords && c == 0; k++)
					c = (cols[k][at + i] > x[k]) - (cols[k][at + i] < x[k]);
				want += inclusive ? c <= 0 : c < 0;
			}
			CHECK(gbt_count_words16_scalar(w, at, x, nwords, inclusive) == want,
				  "scalar words %d %d", nwords, inclusive);
			if (simd >= GBT_SIMD_AVX2)
				CHECK(gbt_count_words16_avx2(w, at, x, nwords, inclusive) == want,
					  "avx2 words %d %d", nwords, inclusive);
			if (simd >= GBT_SIMD_AVX512)
				CHECK(gbt_count_words16_avx512(w, at, x, nwords, inclusive) == want,
					  "avx512 words %d %d", nwords, inclusive);
		}
	}
}

/*
 * Multi-word pages (nwords 2 to 4, leaf and inner): random inserts,
 * deletes and reloads against a sorted model of (words, TID), with the
 * searches and gbt_node_check after every few operations.  The words
 * often tie in all but the last, so that every word decides somewhere.
 */
typedef struct WModel
{
	uint64_t	k[GBT_MAX_SLOTS + 1][GBT_MAX_KEY_WORDS];
	uint64_t	t[GBT_MAX_SLOTS + 1];
	int			n;
	int			nw;
} WModel;

static int
wkey_cmp(const uint64_t *a, const uint64_t *b, int nw)
{
	for (int k = 0; k < nw; k++)
		if (a[k] != b[k])
			return a[k] < b[k] ? -1 : 1;
	return 0;
}

static int
wentry_cmp(const WModel *m, int i, const uint64_t *key, uint64_t tid)
{
	int			c = wkey_cmp(m->k[i], key, m->nw);

	return c ? c : (m->t[i] > tid) - (m->t[i] < tid);
}

static void
rand_wkey(uint64_t *key, int nw, int mode)
{
	for (int k = 0; k < nw; k++)
		key[k] = (k < nw - 1 && xrand() % 4) ? xrand() % 3 : rand_key(mode);
}

static void
wcompare(GbtNode *node, WModel *m, int mode)
{
	uint64_t	k[GBT_MAX_SLOT_WORDS],
				t[GBT_MAX_SLOTS];
	int			nw = m->nw;
	int			n = gbt_node_extract(node, k, t, NULL);
	const char *err = gbt_node_check(node);

	CHECK(err == NULL, "words %d: node check: %s", nw, err ? err : "");
	CHECK(n == m->n, "words %d: count %d vs model %d", nw, n, m->n);
	for (int i = 0; i < n && i < m->n; i++)
		CHECK(wkey_cmp(&k[i * nw], m->k[i], nw) == 0 && t[i] == m->t[i],
			  "words %d: entry %d differs", nw, i);
	for (int q = 0; q < 20; q++)
	{
		uint64_t	x[GBT_MAX_KEY_WORDS];
		int			lb = 0,
					ub,
					s;

		if (m->n > 0 && q % 2)
			memcpy(x, m->k[xrand() % m->n], sizeof(x));
		else
			rand_wkey(x, nw, mode);
		if (q == 0)
			memset(x, 0, sizeof(x));
		if (q == 2)
			memset(x, 0xFF, sizeof(x));
		while (lb < m->n && wkey_cmp(m->k[lb], x, nw) < 0)
			lb++;
		ub = lb;
		while (ub < m->n && wkey_cmp(m->k[ub], x, nw) <= 0)
			ub++;
		s = gbt_node_next_used(node, gbt_node_lower_bound_words(node, x));
		CHECK(lb < m->n ? (s < node->nslots && node->tids[s] == m->t[lb]) : s == node->nslots,
			  "words %d: lower bound wrong", nw);
		s = gbt_node_next_used(node, gbt_node_upper_bound_words(node, x));
		CHECK(ub < m->n ? (s < node->nslots && node->tids[s] == m->t[ub]) : s == node->nslots,
			  "words %d: upper bound wrong", nw);
		if (m->n > 0)
		{
			int			i = (int) (xrand() % m->n);

			s = gbt_node_next_used(node, gbt_node_lower_bound_entry_words(node, m->k[i], m->t[i]));
			CHECK(s < node->nslots && node->tids[s] == m->t[i] && node->keys[s] == m->k[i][0],
				  "words %d: entry %d not found", nw, i);
		}
	}
}

static void
wmodel_insert(WModel *m, const uint64_t *key, uint64_t tid)
{
	int			i = 0;

	while (i < m->n && wentry_cmp(m, i, key, tid) < 0)
		i++;
	memmove(m->k + i + 1, m->k + i, sizeof(m->k[0]) * (m->n - i));
	memmove(m->t + i + 1, m->t + i, sizeof(uint64_t) * (m->n - i));
	memset(m->k[i], 0, sizeof(m->k[i]));
	memcpy(m->k[i], key, sizeof(uint64_t) * m->nw);
	m->t[i] = tid;
	m->n++;
}

/*
 * dir32: on pages of the layout written before GBT_F_DIRFIT (32 directory
 * entries a word, fewer slots), which indexes may still hold
 */
static void
random_word_ops(bool leaf, int nw, int mode, int nops, int simd, bool dir32)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	GbtNode		node;
	WModel		m;

	gbt_simd_set((GbtSimdLevel) simd);
	gbt_node_format_layout(page, leaf, leaf ? 0 : 1, dir32 ? 0 : GBT_F_DIRFIT, nw);
	gbt_node_view(page, &node);
	CHECK(node.nwords == nw &&
		  node.nslots == (dir32 ? gbt_words_slots_dir32(leaf, nw) :
						  leaf ? gbt_leaf_slots_for(nw) : gbt_inner_slots_for(nw)) &&
		  node.xdirlen == (dir32 || node.nblocks > 16 ? GBT_DIR_SIZE : 16) &&
		  ((gbt_page_opaque(page)->flags & GBT_F_DIRFIT) != 0) == !dir32,
		  "words %d: page view", nw);
	if (leaf)
	{
		/* the last array ends before the dead marks, which end before the special space */
		CHECK((char *) (node.xbounds + 2 * (nw - 1)) <= (char *) gbt_leaf_dead(page) &&
			  (char *) gbt_leaf_dead(page) + GBT_BITMAP_WORDS * 8 <= page + GBT_OPAQUE_OFFSET,
			  "words %d: leaf layout fits", nw);
	}
	else
		CHECK((char *) (node.xbounds + 2 * (nw - 1)) <= page + GBT_OPAQUE_OFFSET,
			  "words %d: inner layout fits", nw);
	m.n = 0;
	m.nw = nw;
	for (int op = 0; op < nops; op++)
	{
		uint64_t	r = xrand() % 100;

		if (r < 60 && m.n < node.nslots)
		{
			uint64_t	key[GBT_MAX_KEY_WORDS] = {0};
			uint64_t	tid = ((xrand() % 1000000) + 1) << 16;
			bool		dup = false;

			rand_wkey(key, nw, mode);
			for (int i = 0; i < m.n && !dup; i++)
				dup = wentry_cmp(&m, i, key, tid) == 0;
			if (dup)
				continue;
			CHECK(gbt_node_insert_words(&node, key, tid, 7) >= 0, "words %d: insert failed", nw);
			wmodel_insert(&m, key, tid);
		}
		else if (r < 62 && m.n == node.nslots)
		{
			uint64_t	key[GBT_MAX_KEY_WORDS] = {1};

			CHECK(gbt_node_insert_words(&node, key, 1 << 16, 0) < 0, "words %d: full page took one", nw);
		}
		else if (r < 90 && m.n > 0)
		{
			int			i = (int) (xrand() % m.n);
			int			s = gbt_node_next_used(&node,
											   gbt_node_lower_bound_entry_words(&node, m.k[i], m.t[i]));

			CHECK(s < node.nslots && gbt_slot_used(&node, s), "words %d: entry to delete not found", nw);
			if (s < node.nslots)
				gbt_node_delete_slot(&node, s);
			memmove(m.k + i, m.k + i + 1, sizeof(m.k[0]) * (m.n - i - 1));
			memmove(m.t + i, m.t + i + 1, sizeof(uint64_t) * (m.n - i - 1));
			m.n--;
		}
		else if (r < 92)
		{
			uint64_t	k[GBT_MAX_SLOT_WORDS],
						t[GBT_MAX_SLOTS];
			uint32_t	c[GBT_MAX_SLOTS];
			int			n = gbt_node_extract(&node, k, t, c);

			gbt_node_format_layout(page, leaf, leaf ? 0 : 1, dir32 ? 0 : GBT_F_DIRFIT, nw);
			gbt_node_view(page, &node);
			gbt_node_load_spread(&node, n, k, t, leaf ? NULL : c, (xrand() % 2) == 0);
		}
		if (op % 7 == 0)
			wcompare(&node, &m, mode);
	}
	while (m.n < node.nslots)
	{
		uint64_t	key[GBT_MAX_KEY_WORDS] = {0};
		uint64_t	tid = (uint64_t) (2000000 + m.n) << 16;

		rand_wkey(key, nw, mode);
		CHECK(gbt_node_insert_words(&node, key, tid, 0) >= 0, "words %d: fill insert failed", nw);
		wmodel_insert(&m, key, tid);
	}
	wcompare(&node, &m, mode);
}

/*
 * Pages with tails (GBT_F_TAILS): random inserts, deletes, reloads and
 * bound tails against a sorted model of (words, tail, TID), with the
 * searches and gbt_node_check after every few operations.  Words tie
 * often and tails are drawn from a few bytes, as prefixes of each other
 * and as none (which orders as {128}), so that the tail decides often;
 * long tails fill the area, so that inserts meet a full area and
 * compaction.
 */
#define TAIL_BUF 1400

typedef struct TModel
{
	uint64_t	k[GBT_MAX_SLOTS + 1][GBT_MAX_KEY_WORDS];
	unsigned char tail[GBT_MAX_SLOTS + 1][TAIL_BUF];
	int			tlen[GBT_MAX_SLOTS + 1];
	uint64_t	t[GBT_MAX_SLOTS + 1];
	int			n;
	int			nw;
} TModel;

static TModel tmodel;

static int
tentry_cmp(const TModel *m, int i, const uint64_t *key, const unsigned char *tail, int tlen,
		   uint64_t tid)
{
	int			c = wkey_cmp(m->k[i], key, m->nw);

	if (c == 0)
		c = gbt_tail_cmp(m->tail[i], m->tlen[i], tail, tlen);
	return c ? c : (m->t[i] > tid) - (m->t[i] < tid);
}

static int
rand_tail(unsigned char *tail, int nw)
{
	static const unsigned char bytes[] = {1, 2, 127, 128, 129, 255};
	uint64_t	r = xrand() % 10;
	int			len;

	if (r < 4)
		return 0;
	if (r < 9)
		len = 1 + (int) (xrand() % 4);
	else
		len = 100 + (int) (xrand() % (gbt_tail_max(nw) - 99));
	for (int i = 0; i < len; i++)
		tail[i] = bytes[xrand() % sizeof(bytes)];
	return len;
}

static void
tcompare(GbtNode *node, TModel *m, int mode)
{
	static uint64_t k[GBT_MAX_SLOT_WORDS];
	static uint64_t t[GBT_MAX_SLOTS];
	static GbtTail tl[GBT_MAX_SLOTS];
	int			nw = m->nw;
	int			n = gbt_node_extract_tails(node, k, t, NULL, tl);
	const char *err = gbt_node_check(node);

	CHECK(err == NULL, "tails %d: node check: %s", nw, err ? err : "");
	CHECK(n == m->n, "tails %d: count %d vs model %d", nw, n, m->n);
	for (int i = 0; i < n && i < m->n; i++)
		CHECK(wkey_cmp(&k[i * nw], m->k[i], nw) == 0 && t[i] == m->t[i] &&
			  tl[i].len == m->tlen[i] && memcmp(tl[i].data, m->tail[i], tl[i].len) == 0,
			  "tails %d: entry %d differs", nw, i);
	for (int q = 0; q < 20; q++)
	{
		uint64_t	x[GBT_MAX_KEY_WORDS] = {0};
		unsigned char xt[TAIL_BUF];
		int			xl;
		uint64_t	xtid = (xrand() % 3) << 16;
		int			lb = 0,
					ub = 0,
					s;

		if (m->n > 0 && q % 2)
		{
			int			i = (int) (xrand() % m->n);

			memcpy(x, m->k[i], sizeof(x));
			xl = m->tlen[i];
			memcpy(xt, m->tail[i], xl);
			if (xrand() % 2)
				xtid = m->t[i];
		}
		else
		{
			rand_wkey(x, nw, mode);
			xl = rand_tail(xt, nw);
		}
		while (lb < m->n && tentry_cmp(m, lb, x, xt, xl, xtid) < 0)
			lb++;
		while (ub < m->n && tentry_cmp(m, ub, x, xt, xl, GBT_SENTINEL) < 0)
			ub++;
		s = gbt_node_next_used(node, gbt_node_lower_bound_tail(node, x, xt, xl, xtid));
		CHECK(lb < m->n ? (s < node->nslots && node->tids[s] == m->t[lb]) : s == node->nslots,
			  "tails %d: lower bound wrong", nw);
		s = gbt_node_next_used(node, gbt_node_upper_bound_tail(node, x, xt, xl));
		CHECK(ub < m->n ? (s < node->nslots && node->tids[s] == m->t[ub]) : s == node->nslots,
			  "tails %d: upper bound wrong", nw);
	}
}

static bool
tmodel_insert(GbtNode *node, TModel *m, const uint64_t *key, const unsigned char *tail,
			  int tlen, uint64_t tid)
{
	int			i = 0;
	bool		fits = m->n < node->nslots && gbt_tail_space(tlen) <= gbt_node_tail_room(node);
	int			s = gbt_node_insert_tail(node, key, tail, tlen, tid, 7);

	CHECK((s >= 0) == fits, "tails %d: insert %s (n %d, tail %d, room %d)", m->nw,
		  s >= 0 ? "took an entry that does not fit" : "refused one that fits", m->n, tlen,
		  gbt_node_tail_room(node));
	if (s < 0)
		return false;
	while (i < m->n && tentry_cmp(m, i, key, tail, tlen, tid) < 0)
		i++;
	memmove(m->k + i + 1, m->k + i, sizeof(m->k[0]) * (m->n - i));
	memmove(m->tail + i + 1, m->tail + i, sizeof(m->tail[0]) * (m->n - i));
	memmove(m->tlen + i + 1, m->tlen + i, sizeof(int) * (m->n - i));
	memmove(m->t + i + 1, m->t + i, sizeof(uint64_t) * (m->n - i));
	memset(m->k[i], 0, sizeof(m->k[i]));
	memcpy(m->k[i], key, sizeof(uint64_t) * m->nw);
	memcpy(m->tail[i], tail, tlen);
	m->tlen[i] = tlen;
	m->t[i] = tid;
	m->n++;
	return true;
}

static void
random_tail_ops(bool leaf, int nw, int mode, int nops, int simd, bool few, bool dir32)
{
	uint16_t	layout = GBT_F_TAILS | (few ? GBT_F_TAILS_FEW : 0) | (dir32 ? 0 : GBT_F_DIRFIT);
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static unsigned char saved[GBT_MAX_SLOTS][TAIL_BUF];
	static unsigned char btail[2][TAIL_BUF];
	int			blen[2] = {0, 0};
	GbtNode		node;
	TModel	   *m = &tmodel;

	gbt_simd_set((GbtSimdLevel) simd);
	gbt_node_format_layout(page, leaf, leaf ? 0 : 1, layout, nw);
	gbt_node_view(page, &node);
	CHECK(node.nwords == nw && node.toff != NULL &&
		  node.nslots == gbt_tail_slots(leaf, few) &&
		  node.tailstart == gbt_tail_start_as(leaf, nw, layout) &&
		  (dir32 || node.tailstart == gbt_tail_start_few(leaf, nw, few)) &&
		  (!few || node.tailstart < gbt_tail_start_as(leaf, nw, layout & ~GBT_F_TAILS_FEW)) &&
		  (char *) (node.xbounds + 2 * (nw - 1)) <= (char *) node.toff &&
		  (char *) (node.btoff + 2) <= page + node.tailstart &&
		  GBT_OPAQUE_OFFSET - node.tailstart >= 4 * gbt_tail_space(gbt_tail_max(nw)),
		  "tails %d: page view", nw);
	if (leaf)
		CHECK((char *) (node.btoff + 2) <= (char *) gbt_leaf_dead(page) &&
			  (char *) gbt_leaf_dead(page) + GBT_BITMAP_WORDS * 8 == page + node.tailstart,
			  "tails %d: dead marks lie between the arrays and the tails", nw);
	m->n = 0;
	m->nw = nw;
	for (int op = 0; op < nops; op++)
	{
		uint64_t	r = xrand() % 100;

		if (r < 60)
		{
			uint64_t	key[GBT_MAX_KEY_WORDS] = {0};
			unsigned char tail[TAIL_BUF];
			int			tlen = rand_tail(tail, nw);
			uint64_t	tid = ((xrand() % 1000000) + 1) << 16;
			bool		dup = false;

			rand_wkey(key, nw, mode);
			for (int i = 0; i < m->n && !dup; i++)
				dup = tentry_cmp(m, i, key, tail, tlen, tid) == 0;
			if (!dup)
				tmodel_insert(&node, m, key, tail, tlen, tid);
		}
		else if (r < 88 && m->n > 0)
		{
			int			i = (int) (xrand() % m->n);
			int			s = gbt_node_next_used(&node,
											   gbt_node_lower_bound_tail(&node, m->k[i], m->tail[i],
																		 m->tlen[i], m->t[i]));

			CHECK(s < node.nslots && gbt_slot_used(&node, s) && node.tids[s] == m->t[i],
				  "tails %d: entry to delete not found", nw);
			if (s < node.nslots)
				gbt_node_delete_slot(&node, s);
			memmove(m->k + i, m->k + i + 1, sizeof(m->k[0]) * (m->n - i - 1));
			memmove(m->tail + i, m->tail + i + 1, sizeof(m->tail[0]) * (m->n - i - 1));
			memmove(m->tlen + i, m->tlen + i + 1, sizeof(int) * (m->n - i - 1));
			memmove(m->t + i, m->t + i + 1, sizeof(uint64_t) * (m->n - i - 1));
			m->n--;
		}
		else if (r < 91)
		{
			/* a bound's tail: replaced, dropped, or refused when no room */
			int			b = (int) (xrand() % 2);
			unsigned char tail[TAIL_BUF];
			int			tlen = rand_tail(tail, nw);
			bool		fits = gbt_tail_space(tlen) <=
				gbt_node_tail_room(&node) + gbt_tail_space(blen[b]);
			GbtTail		got;

			CHECK(gbt_node_set_bound_tail(&node, b, tail, tlen) == fits,
				  "tails %d: bound tail taken or refused wrongly", nw);
			if (fits)
			{
				memcpy(btail[b], tail, tlen);
				blen[b] = tlen;
			}
			got = gbt_node_bound_tail(&node, b);
			CHECK(got.len == blen[b] && memcmp(got.data, btail[b], got.len) == 0,
				  "tails %d: bound tail differs", nw);
		}
		else if (r < 93)
		{
			/* reload: extract, then lay the entries out again beside the bounds */
			static uint64_t k[GBT_MAX_SLOT_WORDS];
			static uint64_t t[GBT_MAX_SLOTS];
			static uint32_t c[GBT_MAX_SLOTS];
			static GbtTail tl[GBT_MAX_SLOTS];
			int			n = gbt_node_extract_tails(&node, k, t, c, tl);

			for (int i = 0; i < n; i++)
			{
				memcpy(saved[i], tl[i].data, tl[i].len);
				tl[i].data = saved[i];
			}
			if (xrand() % 2)
			{
				/* the page's own layout: a page of few slots holds more tail bytes */
				gbt_node_format_layout(page, leaf, leaf ? 0 : 1, layout, nw);
				gbt_node_view(page, &node);
				for (int b = 0; b < 2; b++)
					CHECK(gbt_node_set_bound_tail(&node, b, btail[b], blen[b]),
						  "tails %d: bound tail refused on an empty page", nw);
			}
			CHECK(gbt_node_load_tails(&node, n, k, t, leaf ? NULL : c, tl, (xrand() % 2) == 0),
				  "tails %d: reload refused", nw);
		}
		if (op % 7 == 0)
			tcompare(&node, m, mode);
	}
	/* fill the page: every insert is taken exactly while slots and bytes last */
	for (int tries = 0; tries < 400; tries++)
	{
		uint64_t	key[GBT_MAX_KEY_WORDS] = {0};
		unsigned char tail[TAIL_BUF];
		int			tlen = rand_tail(tail, nw);

		rand_wkey(key, nw, mode);
		tmodel_insert(&node, m, key, tail, tlen, (uint64_t) (2000000 + tries) << 16);
	}
	tcompare(&node, m, mode);
}

/*
 * Whole multi-word trees (gbtree_walk.h): built bottom-up from sorted
 * entries, every page passes gbt_node_check, and range walks from random
 * bounds give exactly the entries a binary search over the sorted array
 * gives, in order.
 */
typedef struct WalkCheck
{
	const uint64_t *e;			/* the expected entries, in order */
	int			nw;
	int64_t		at;
	bool		ok;
} WalkCheck;

static void
walk_match(void *arg, const uint64_t *key, uint64_t tid)
{
	WalkCheck  *wc = (WalkCheck *) arg;
	const uint64_t *x = &wc->e[wc->at * (wc->nw + 1)];

	if (memcmp(x, key, sizeof(uint64_t) * wc->nw) != 0 || x[wc->nw] != tid)
		wc->ok = false;
	wc->at++;
}

/* first entry >= (key, tid) in the sorted entries */
static size_t
entries_lower_bound(const uint64_t *e, size_t n, int nw, const uint64_t *key, uint64_t tid)
{
	size_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (gbt_wentry_lt(&e[mid * (nw + 1)], e[mid * (nw + 1) + nw], key, tid, nw))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
test_word_trees(void)
{
	for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
		for (int kind = 0; kind < 3; kind++)
		{
			size_t		n = kind == 2 ? 5 : 60000;
			int			stride = nw + 1;
			uint64_t   *e = malloc(sizeof(uint64_t) * stride * n);
			uint64_t   *scratch = malloc(sizeof(uint64_t) * stride * n);
			size_t	   *hist = malloc(sizeof(size_t) * gbt_wsort_hist_size(nw));
			size_t		maxp = gbt_walk_words_max_pages(n, nw, 90);
			char	   *img = malloc(maxp * GBT_PAGE_SIZE);
			uint32_t	nblocks,
						root;
			int			bad = 0;

			for (size_t i = 0; i < n; i++)
			{
				for (int k = 0; k < nw; k++)
					e[i * stride + k] = kind == 1 || k < nw - 1 ? xrand() % 3 : xrand();
				e[i * stride + nw] = (uint64_t) (i + 1) << 16;
			}
			gbt_wsort(e, scratch, n, nw, hist, NULL);
			root = gbt_walk_build_words(img, e, n, nw, 90, &nblocks);
			CHECK(nblocks <= maxp, "tree of %d words: %u pages within %zu", nw, nblocks, maxp);
			for (uint32_t b = GBT_FIRST_FREE_BLKNO; b < nblocks; b++)
			{
				GbtNode		node;
				const char *err;

				gbt_node_view(gbt_walk_page(img, b), &node);
				err = gbt_node_check(&node);
				if (err && bad++ < 3)
					CHECK(false, "tree of %d words, block %u: %s", nw, b, err);
			}
			for (int q = 0; q < 400; q++)
			{
				uint64_t	lo[GBT_MAX_KEY_WORDS] = {0},
							hi[GBT_MAX_KEY_WORDS] = {0};
				uint64_t	lt,
							ht;
				size_t		a,
							z;
				WalkCheck	wc;
				int64_t		got;

				/* bounds at entries, between them, or at the extremes */
				memcpy(lo, &e[(xrand() % n) * stride], sizeof(uint64_t) * nw);
				memcpy(hi, &e[(xrand() % n) * stride], sizeof(uint64_t) * nw);
				lt = q % 4 == 0 ? 0 : xrand() % ((n + 2) << 16);
				ht = q % 4 == 1 ? UINT64_MAX : xrand() % ((n + 2) << 16);
				if (q % 7 == 0)
					memset(lo, 0, sizeof(lo));
				if (q % 11 == 0)
					memset(hi, 0xFF, sizeof(hi));
				if (gbt_wentry_lt(hi, ht, lo, lt, nw))
				{
					uint64_t	tk[GBT_MAX_KEY_WORDS],
								tt = lt;

					memcpy(tk, lo, sizeof(tk));
					memcpy(lo, hi, sizeof(tk));
					memcpy(hi, tk, sizeof(tk));
					lt = ht;
					ht = tt;
				}
				a = entries_lower_bound(e, n, nw, lo, lt);
				z = entries_lower_bound(e, n, nw, hi, ht);
				wc.e = &e[a * stride];
				wc.nw = nw;
				wc.at = 0;
				wc.ok = true;
				got = gbt_walk_range_words(img, nblocks, root, nw, lo, lt, hi, ht, walk_match, &wc);
				CHECK(got == (int64_t) (z - a) && wc.ok,
					  "tree of %d words, kind %d: walk gave %lld entries, want %zu (in order: %d)",
					  nw, kind, (long long) got, z - a, wc.ok);
			}
			free(e);
			free(scratch);
			free(hist);
			free(img);
		}
}

/*
 * gbt_node_to_tails: a page of words alone becomes a tailed page with the
 * same entries, bounds, links and flags, or is left byte for byte as it
 * was when its entries are more than a tailed page's slots.
 */
static void
test_to_tails(void)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char before[GBT_PAGE_SIZE];

	for (int iter = 0; iter < 600; iter++)
	{
		int			nw = 2 + iter % 3;
		bool		leaf = (iter / 3) % 2 == 0;
		int			cap = leaf ? GBT_TAIL_LEAF_SLOTS : GBT_TAIL_INNER_SLOTS;
		int			want = (int) (xrand() % (cap + 20));
		GbtNode		node;
		uint64_t	k1[GBT_MAX_SLOT_WORDS],
					t1[GBT_MAX_SLOTS],
					k2[GBT_MAX_SLOT_WORDS],
					t2[GBT_MAX_SLOTS];
		uint32_t	c1[GBT_MAX_SLOTS],
					c2[GBT_MAX_SLOTS];
		int			n1,
					n2;
		GbtPageOpaqueData op1;
		uint64_t	xb[2 * (GBT_MAX_KEY_WORDS - 1)];
		bool		ok;

		gbt_node_format_words(page, leaf, leaf ? 0 : 2, GBT_F_RIGHTMOST, nw);
		gbt_node_view(page, &node);
		for (int i = 0; i < want; i++)
		{
			uint64_t	key[GBT_MAX_KEY_WORDS] = {0};

			rand_wkey(key, nw, iter % 3);
			gbt_node_insert_words(&node, key, ((uint64_t) i + 1) << 16, 100 + i);
		}
		node.opaque->hikey = 77;
		node.opaque->lowkey = 5;
		node.opaque->lowtid = 9;
		node.opaque->rightlink = 1234;
		node.opaque->leftlink = 4321;
		for (int k = 0; k < 2 * (nw - 1); k++)
			node.xbounds[k] = xrand();
		memcpy(xb, node.xbounds, sizeof(uint64_t) * 2 * (nw - 1));
		n1 = gbt_node_extract(&node, k1, t1, leaf ? NULL : c1);
		op1 = *node.opaque;
		memcpy(before, page, GBT_PAGE_SIZE);
		ok = gbt_node_to_tails(page);
		CHECK(ok == (n1 <= cap), "to_tails of %d entries (cap %d) gave %d", n1, cap, ok);
		if (!ok)
		{
			CHECK(memcmp(before, page, GBT_PAGE_SIZE) == 0, "refused to_tails changed the page");
			continue;
		}
		gbt_node_view(page, &node);
		CHECK(node.toff != NULL && gbt_node_check(&node) == NULL, "to_tails: page check");
		n2 = gbt_node_extract(&node, k2, t2, leaf ? NULL : c2);
		CHECK(n2 == n1 && memcmp(k1, k2, sizeof(uint64_t) * nw * n1) == 0 &&
			  memcmp(t1, t2, sizeof(uint64_t) * n1) == 0 &&
			  (leaf || memcmp(c1, c2, sizeof(uint32_t) * n1) == 0), "to_tails: entries differ");
		CHECK(node.opaque->hikey == op1.hikey && node.opaque->lowkey == op1.lowkey &&
			  node.opaque->lowtid == op1.lowtid && node.opaque->rightlink == op1.rightlink &&
			  node.opaque->leftlink == op1.leftlink && node.opaque->level == op1.level &&
			  (node.opaque->flags & ~GBT_F_TAILS) == op1.flags &&
			  memcmp(node.xbounds, xb, sizeof(uint64_t) * 2 * (nw - 1)) == 0,
			  "to_tails: bounds, links or flags differ");
		/* and it takes a tail now, while it has a slot */
		if (n2 < cap)
		{
			uint64_t	key[GBT_MAX_KEY_WORDS] = {1};
			unsigned char tail[3] = {250, 1, 2};

			CHECK(gbt_node_insert_tail(&node, key, tail, 3, (uint64_t) 999999 << 16, 7) >= 0 &&
				  gbt_node_check(&node) == NULL, "to_tails: tail insert after");
		}
	}
}

/*
 * gbt_node_split against a model: pages of words alone and tailed pages,
 * leaf and inner, full or nearly, with or without a new entry (with or
 * without a tail), bounds with tails, the rightmost page and a level's
 * first inner page: both halves pass gbt_node_check, hold the entries in
 * order (the new one too when placed), are tailed exactly where a tail
 * is, and carry the bounds and links a split must leave.
 */
typedef struct SplitModel
{
	int			n;
	uint64_t	k[GBT_MAX_SLOTS + 2][GBT_MAX_KEY_WORDS];
	unsigned char tb[GBT_MAX_SLOTS + 2][16];
	GbtTail		tl[GBT_MAX_SLOTS + 2];
	uint64_t	t[GBT_MAX_SLOTS + 2];
} SplitModel;

static int
split_model_cmp(const SplitModel *m, int i, const uint64_t *key, GbtTail tail, uint64_t tid,
				int nw)
{
	return gbt_tentry_cmp(m->k[i], m->tl[i], m->t[i], key, tail, tid, nw);
}

/*
 * Whether gbt_node_fill_page lays the split page img out again, byte for
 * byte, from its bounds, entries and tails, spread or packed: the redo of
 * a WSPLIT record's right page (wide_wal.c).
 */
static bool
fill_page_rebuilds(const char *img)
{
	static uint64_t keys[GBT_MAX_SLOT_WORDS];
	static uint64_t tids[GBT_MAX_SLOTS];
	static uint32_t child[GBT_MAX_SLOTS];
	static GbtTail tails[GBT_MAX_SLOTS];
	static char again[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	GbtNode		node;
	bool		leaf;
	int			n;

	gbt_node_view((char *) img, &node);
	leaf = (node.opaque->flags & GBT_F_LEAF) != 0;
	n = gbt_node_extract_tails(&node, keys, tids, leaf ? NULL : child, tails);
	for (int spread = 1; spread >= 0; spread--)
	{
		memset(again, 0, GBT_PAGE_SIZE);
		gbt_node_fill_page(again, node.opaque, node.xbounds, gbt_node_bound_tail(&node, 1),
						   gbt_node_bound_tail(&node, 0), n, keys, tids, child,
						   node.toff ? tails : NULL, spread);
		if (memcmp(again + GBT_BODY_OFFSET, img + GBT_BODY_OFFSET,
				   GBT_PAGE_SIZE - GBT_BODY_OFFSET) == 0)
			return true;
	}
	return false;
}

static void
test_split(void)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char right[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char other[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static SplitModel m;
	int			placed0 = 0,
				mixed = 0,
				few = 0,
				truncated = 0;

	for (int iter = 0; iter < 3000; iter++)
	{
		int			nw = 2 + iter % 3;
		bool		leaf = (iter / 3) % 2 == 0;
		bool		tailed = (iter / 6) % 2 == 0;
		bool		rightmost = xrand() % 4 == 0;
		bool		leftmost = !leaf && xrand() % 4 == 0;
		bool		alias = xrand() % 2 == 0;
		char	   *left = alias ? page : other;
		GbtNode		node,
					ln,
					rn;
		uint64_t	lowk[GBT_MAX_KEY_WORDS] = {5},
					hik[GBT_MAX_KEY_WORDS] = {5000};
		unsigned char lowb[4] = {200, 7, 7, 7},
					hib[4] = {3, 3, 3, 3};
		GbtTail		lowt = {lowb, 0},
					hit = {hib, 0};
		uint64_t	nk[GBT_MAX_KEY_WORDS] = {0};
		unsigned char nb[8];
		GbtTail		nt = {nb, 0};
		uint64_t	ntid;
		int			rc,
					at = 0,
					want;
		bool		with_new = xrand() % 4 != 0;
		bool		huge = tailed && iter % 10 == 0;	/* tails near the longest: bytes bind */
		bool		ties = iter % 3 == 1;	/* equal words, tails sharing prefixes */

		/* entries between the bounds; the page full, or nearly */
		if (tailed)
			gbt_node_format_tails(page, leaf, leaf ? 0 : 1, 0, nw);
		else
			gbt_node_format_words(page, leaf, leaf ? 0 : 1, 0, nw);
		gbt_node_view(page, &node);
		if (tailed && xrand() % 2)
		{
			lowt.len = 1 + (int) (xrand() % 4);
			hit.len = 1 + (int) (xrand() % 4);
			gbt_node_set_bound_tail(&node, 1, lowt.data, lowt.len);
			gbt_node_set_bound_tail(&node, 0, hit.data, hit.len);
		}
		node.opaque->lowkey = lowk[0];
		node.opaque->lowtid = 1;
		node.opaque->hikey = hik[0];
		node.opaque->hitid = 1;
		for (int k = 1; k < nw; k++)
		{
			node.xbounds[k - 1] = hik[k];
			node.xbounds[nw - 1 + k - 1] = lowk[k];
		}
		node.opaque->leftlink = leftmost ? GBT_NO_BLOCK : 11;
		node.opaque->rightlink = rightmost ? GBT_NO_BLOCK : 22;
		if (rightmost)
			node.opaque->flags |= GBT_F_RIGHTMOST;
		m.n = 0;
		if (leftmost)
		{
			uint64_t	z[GBT_MAX_KEY_WORDS] = {0};

			gbt_node_insert_tail(&node, z, gbt_tail_minus_inf, tailed ? 1 : 0, 0, 3);
		}
		for (int tries = 0; tries < 1000; tries++)
		{
			uint64_t	key[GBT_MAX_KEY_WORDS] = {0};
			unsigned char tb[8];
			int			tlen = tailed && xrand() % 3 ? 1 + (int) (xrand() % 6) : 0;

			rand_wkey(key, nw, 0);
			key[0] = 10 + xrand() % 8;
			for (int b = 0; b < tlen; b++)
				tb[b] = (unsigned char) (1 + xrand() % 250);
			if (ties)
			{
				for (int k = 1; k < nw; k++)
					key[k] = xrand() % 2;
				key[0] = 10 + xrand() % 2;
				for (int b = 0; b < tlen; b++)
					tb[b] = (unsigned char) (1 + xrand() % 2);
			}
			if (tlen > 4 && xrand() % 8 == 0)
				tlen = 200 + (int) (xrand() % 300);	/* a long one: the bytes bind */
			if (huge)
				tlen = gbt_tail_max(nw) - (int) (xrand() % 50);
			{
				static unsigned char big[1400];

				if (tlen > 8)
				{
					memset(big, 9, sizeof(big));
					if (gbt_node_insert_tail(&node, key, big, tlen, ((uint64_t) tries + 2) << 16,
											 (uint32_t) (100 + tries)) < 0)
						break;
					continue;
				}
			}
			if (gbt_node_insert_tail(&node, key, tb, tlen, ((uint64_t) tries + 2) << 16,
									 (uint32_t) (100 + tries)) < 0)
				break;
		}
		if (xrand() % 4 == 0)
			gbt_node_delete_slot(&node, gbt_node_first_used(&node) + (leftmost ? 1 : 0));
		/* the model: the page's entries, then the new one in its place */
		{
			static uint64_t k[GBT_MAX_SLOT_WORDS],
						t[GBT_MAX_SLOTS];
			static GbtTail tl[GBT_MAX_SLOTS];

			m.n = gbt_node_extract_tails(&node, k, t, NULL, tl);
			for (int i = 0; i < m.n; i++)
			{
				memset(m.k[i], 0, sizeof(m.k[i]));
				memcpy(m.k[i], &k[i * nw], sizeof(uint64_t) * nw);
				m.t[i] = t[i];
				m.tl[i].len = tl[i].len > 16 ? 16 : tl[i].len;
				memcpy(m.tb[i], tl[i].data, m.tl[i].len);
				m.tl[i].data = m.tb[i];
				m.tl[i].len = tl[i].len;	/* long tails: only their first bytes kept */
			}
		}
		rand_wkey(nk, nw, 0);
		nk[0] = 10 + xrand() % 8;
		ntid = (uint64_t) (900000 + iter) << 16;
		if (xrand() % 2 || huge)
		{
			nt.len = 1 + (int) (xrand() % 6);
			for (int b = 0; b < nt.len; b++)
				nb[b] = (unsigned char) (1 + xrand() % 250);
		}
		/* zero words and a tail below none's {128}: still after minus infinity */
		if (leftmost && !huge && xrand() % 6 == 0)
		{
			memset(nk, 0, sizeof(nk));
			nt.len = 1;
			nb[0] = 5;
		}
		if (huge)
		{
			static unsigned char bignew[1400];

			memset(bignew, 9, sizeof(bignew));
			bignew[0] = nb[0];
			nt.data = bignew;
			nt.len = gbt_tail_max(nw);
		}
		/* either layout of the halves: spread, or packed after the new entry */
		memset(right, 0, GBT_PAGE_SIZE);
		rc = gbt_node_split(page, with_new ? nk : NULL, nt, ntid, 4242, 50, (xrand() % 2) == 0,
							left, right);
		want = m.n + (rc == 1 ? 1 : 0);
		if (m.n + (with_new ? 1 : 0) < 2)
		{
			CHECK(rc == -1, "split of %d entries: %d", m.n, rc);
			continue;
		}
		CHECK(rc == 1 || (rc == 0 && with_new && nt.len > 0 && !tailed),
			  "split (words %d, leaf %d, tailed %d, new %d/%d): rc %d", nw, leaf, tailed,
			  with_new, nt.len, rc);
		if (rc < 0)
			continue;
		placed0 += rc == 0;
		CHECK(fill_page_rebuilds(right), "split (words %d, leaf %d, tailed %d): the right page "
			  "is not laid out again from its entries", nw, leaf, tailed);
		gbt_node_view(left, &ln);
		gbt_node_view(right, &rn);
		CHECK(gbt_node_check(&ln) == NULL && gbt_node_check(&rn) == NULL,
			  "split halves: %s / %s", gbt_node_check(&ln) ? gbt_node_check(&ln) : "ok",
			  gbt_node_check(&rn) ? gbt_node_check(&rn) : "ok");
		mixed += (ln.toff != NULL) != (rn.toff != NULL);
		few += ((ln.opaque->flags | rn.opaque->flags) & GBT_F_TAILS_FEW) != 0;
		/* a tailed level-first inner page starts at (zeros, {0}, 0) */
		if (leftmost && ln.toff)
		{
			GbtTail		ft = gbt_node_slot_tail(&ln, gbt_node_first_used(&ln));

			CHECK(ft.len == 1 && ft.data[0] == 0, "split: minus infinity without its tail");
		}
		/* halves' entries, in order, against the model (and the new entry) */
		{
			bool		newdone = !(rc == 1 && with_new);
			GbtNode    *h[2] = {&ln, &rn};

			for (int side = 0; side < 2; side++)
				for (int s2 = gbt_node_first_used(h[side]); s2 < h[side]->nslots;
					 s2 = gbt_node_next_used(h[side], s2 + 1))
				{
					uint64_t	key[GBT_MAX_KEY_WORDS];
					GbtTail		tl = gbt_node_slot_tail(h[side], s2);
					GbtTail		cmpt = tl;

					gbt_walk_slot_words(h[side], s2, key);
					if (!newdone &&
						(at >= m.n ||
						 (!(leftmost && at == 0) && split_model_cmp(&m, at, nk, nt, ntid, nw) > 0)) &&
						gbt_tentry_cmp(key, tl, h[side]->tids[s2], nk, nt, ntid, nw) == 0)
					{
						newdone = true;
						continue;
					}
					/* compare long tails on their first 16 bytes and length */
					if (at < m.n && m.tl[at].len > 16 && tl.len == m.tl[at].len)
						cmpt.len = 16;
					{
						GbtTail		mt = m.tl[at < m.n ? at : 0];

						if (mt.len > 16)
							mt.len = 16;
						if (leftmost && at == 0 && side == 0)
							cmpt = mt;	/* minus infinity's tail follows its page */
						CHECK(at < m.n && memcmp(key, m.k[at], sizeof(uint64_t) * nw) == 0 &&
							  h[side]->tids[s2] == m.t[at] &&
							  gbt_tail_cmp(cmpt.data, cmpt.len, mt.data, mt.len) == 0,
							  "split: entry %d differs", at);
					}
					at++;
				}
			CHECK(at == m.n && newdone, "split: halves hold %d of %d entries (new placed %d)",
				  at, m.n, newdone);
		}
		(void) want;
		/* bounds and links */
		{
			uint64_t	a[GBT_MAX_KEY_WORDS],
						b[GBT_MAX_KEY_WORDS],
						ta,
						tb2;
			GbtTail		xa,
						xb;
			int			f = gbt_node_first_used(&rn);
			uint64_t	fk[GBT_MAX_KEY_WORDS];

			gbt_walk_bound_tail(&ln, true, a, &xa, &ta);
			gbt_walk_bound_tail(&rn, false, b, &xb, &tb2);
			gbt_walk_slot_words(&rn, f, fk);
			CHECK(gbt_tentry_cmp(a, xa, ta, b, xb, tb2, nw) == 0, "split: left high key is not right low key");
			if (leaf && gbt_node_slot_tail(&rn, f).len > 0)
			{
				/*
				 * a leaf's separator before a tailed entry: above the left
				 * half's last entry, at or below the right's first, its
				 * words, TID 0 and a prefix of its tail, or that entry
				 */
				GbtTail		ft = gbt_node_slot_tail(&rn, f);
				int			l = gbt_node_last_used(&ln);
				uint64_t	lk2[GBT_MAX_KEY_WORDS];
				bool		same = gbt_tentry_cmp(b, xb, tb2, fk, ft, rn.tids[f], nw) == 0;

				gbt_walk_slot_words(&ln, l, lk2);
				CHECK(gbt_tentry_cmp(lk2, gbt_node_slot_tail(&ln, l), ln.tids[l], b, xb, tb2, nw) < 0 &&
					  gbt_tentry_cmp(b, xb, tb2, fk, ft, rn.tids[f], nw) <= 0 &&
					  memcmp(b, fk, sizeof(uint64_t) * nw) == 0 &&
					  (same || (tb2 == 0 && xb.len <= ft.len &&
								memcmp(xb.data, ft.data, xb.len) == 0)),
					  "split: leaf separator (len %d of %d, tid %llu)", xb.len, ft.len,
					  (unsigned long long) tb2);
				truncated += !same;
			}
			else
				CHECK(gbt_tentry_cmp(b, xb, tb2, fk, gbt_node_slot_tail(&rn, f), rn.tids[f], nw) == 0,
					  "split: separator is not the right page's first entry");
			gbt_walk_bound_tail(&ln, false, a, &xa, &ta);
			CHECK(gbt_tentry_cmp(a, xa, ta, lowk, lowt, 1, nw) == 0, "split: left low key");
			if (!rightmost)
			{
				gbt_walk_bound_tail(&rn, true, a, &xa, &ta);
				CHECK(gbt_tentry_cmp(a, xa, ta, hik, hit, 1, nw) == 0, "split: right high key");
			}
			CHECK(((rn.opaque->flags & GBT_F_RIGHTMOST) != 0) == rightmost &&
				  !(ln.opaque->flags & GBT_F_RIGHTMOST) &&
				  ln.opaque->leftlink == (leftmost ? GBT_NO_BLOCK : 11) &&
				  rn.opaque->rightlink == (rightmost ? GBT_NO_BLOCK : 22) &&
				  ln.opaque->level == rn.opaque->level, "split: flags or links");
		}
	}
	CHECK(placed0 > 0 && mixed > 0 && truncated > 100 && few > 0,
		  "split: no case without room for the new entry (%d), of mixed halves (%d), truncated separators (%d) or halves of few slots (%d)",
		  placed0, mixed, truncated, few);

	/*
	 * Two short entries and three of the longest tails, the high key with
	 * a tail, and a short new entry: the even cut would give the right
	 * page the separator's tail twice and overflow it, but a leaf's
	 * separator is shortened to a byte of it, and the even cut fits.
	 * (test_split's near-longest tails are cut by bytes.)
	 */
	{
		static unsigned char big[1400];
		unsigned char small[4] = {5, 5, 5, 5},
					hib[4] = {250, 1, 1, 1};
		int			nw = 4;
		GbtNode		node,
					ln,
					rn;
		int			rc;

		memset(big, 9, sizeof(big));
		gbt_node_format_tails(page, true, 0, 0, nw);
		gbt_node_view(page, &node);
		node.opaque->leftlink = 7;
		node.opaque->hikey = 1000;
		node.opaque->hitid = 1;
		gbt_node_set_bound_tail(&node, 0, hib, 4);
		for (int i = 0; i < 5; i++)
		{
			uint64_t	key[GBT_MAX_KEY_WORDS] = {(uint64_t) (10 + i)};

			CHECK(gbt_node_insert_tail(&node, key, i < 2 ? small : big, i < 2 ? 4 : gbt_tail_max(nw),
									   (uint64_t) (i + 1) << 16, (uint32_t) (50 + i)) >= 0,
				  "bytes case: fill %d", i);
		}
		{
			uint64_t	key[GBT_MAX_KEY_WORDS] = {1};

			rc = gbt_node_split(page, key, (GbtTail) {small, 4}, (uint64_t) 99 << 16, 49, 50, false,
								other, right);
		}
		gbt_node_view(other, &ln);
		gbt_node_view(right, &rn);
		CHECK(rc == 1 && gbt_node_check(&ln) == NULL && gbt_node_check(&rn) == NULL &&
			  ln.opaque->nused + rn.opaque->nused == 6 &&
			  ln.opaque->nused == 3 && gbt_node_bound_tail(&rn, 1).len == 1,
			  "bytes case: rc %d, halves of %d and %d", rc, ln.opaque->nused, rn.opaque->nused);
	}
}

/*
 * Whole trees of tailed pages (gbtree_tailwalk.h): entries sorted by
 * (words, tail, TID) are laid out by slots and bytes; every page passes
 * gbt_node_check, each page's bounds are its neighbours' first entries
 * with their tails, the leaves hold the entries in order, and range walks
 * between random bounds give exactly the entries a binary search over the
 * sorted array gives, in order.
 */
typedef struct TailEntries
{
	uint64_t   *e;				/* words and TID, stride nw + 1 */
	GbtTail    *tails;
	int			nw;
} TailEntries;

static TailEntries *sort_te;

static int
te_cmp_idx(const void *a, const void *b)
{
	size_t		i = *(const size_t *) a,
				j = *(const size_t *) b;
	int			st = sort_te->nw + 1;

	return gbt_tentry_cmp(&sort_te->e[i * st], sort_te->tails[i], sort_te->e[i * st + sort_te->nw],
						  &sort_te->e[j * st], sort_te->tails[j], sort_te->e[j * st + sort_te->nw],
						  sort_te->nw);
}

typedef struct TailWalkCheck
{
	const TailEntries *te;
	size_t		at;
	bool		ok;
} TailWalkCheck;

static void
tail_walk_match(void *arg, const uint64_t *key, GbtTail tail, uint64_t tid)
{
	TailWalkCheck *wc = (TailWalkCheck *) arg;
	int			st = wc->te->nw + 1;
	size_t		i = wc->at++;

	if (gbt_tentry_cmp(key, tail, tid, &wc->te->e[i * st], wc->te->tails[i],
					   wc->te->e[i * st + wc->te->nw], wc->te->nw) != 0)
		wc->ok = false;
}

/* first of the n sorted entries whose words are >= key (> key: upper) */
static size_t
words_bound(const uint64_t *e, size_t n, int nw, const uint64_t *key, bool upper)
{
	size_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;
		int			c = 0;

		for (int k = 0; k < nw && c == 0; k++)
			c = e[mid * (nw + 1) + k] < key[k] ? -1 : e[mid * (nw + 1) + k] > key[k];
		if (c < 0 || (upper && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* first entry at or above (key, tail, tid) */
static size_t
te_lower_bound(const TailEntries *te, size_t n, const uint64_t *key, GbtTail tail, uint64_t tid)
{
	size_t		lo = 0,
				hi = n;
	int			st = te->nw + 1;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (gbt_tentry_cmp(&te->e[mid * st], te->tails[mid], te->e[mid * st + te->nw],
						   key, tail, tid, te->nw) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
test_tail_trees(void)
{
	for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
		for (int kind = 0; kind < 6; kind++)
		{
			/* kind 5: every tail near the longest, inner pages at 70% */
			size_t		n = kind == 3 ? (size_t) (xrand() % 6) : kind == 5 ? 600 : 12000;
			int			npages[2] = {0, 0};
			int			st = nw + 1;
			uint64_t   *e = malloc(sizeof(uint64_t) * st * (n + 1));
			uint64_t   *se = malloc(sizeof(uint64_t) * st * (n + 1));
			GbtTail    *tails = malloc(sizeof(GbtTail) * (n + 1));
			GbtTail    *stails = malloc(sizeof(GbtTail) * (n + 1));
			unsigned char *bytes = malloc((size_t) TAIL_BUF * (n + 1));
			size_t	   *idx = malloc(sizeof(size_t) * (n + 1));
			TailEntries te = {e, tails, nw},
						ste = {se, stails, nw};
			uint32_t	nblocks,
						root,
						nb2;
			char	   *img;
			int			bad = 0;
			int			pct = kind == 2 ? 100 : kind == 5 ? 70 : 90;

			for (size_t i = 0; i < n; i++)
			{
				for (int k = 0; k < nw; k++)
					e[i * st + k] = kind == 1 ? 7 : (k < nw - 1 ? xrand() % 3 : xrand() % 5);
				e[i * st + nw] = (uint64_t) (i + 1) << 16;
				/* long tails only now and then, so that pages hold many entries */
				tails[i].len = (xrand() % 50 == 0) ? rand_tail(bytes + i * TAIL_BUF, nw) :
					(int) (xrand() % 7);
				/* kind 4: a tail in a few hundred entries, runs of words alone between */
				if (kind == 4 && xrand() % 300 != 0)
					tails[i].len = 0;
				if (kind == 5)
				{
					/* half of them alike but for their last bytes: long separators */
					bool		alike = xrand() % 2 == 0;

					tails[i].len = gbt_tail_max(nw) - (int) (xrand() % 8);
					for (int b = 0; b < tails[i].len; b++)
						bytes[i * TAIL_BUF + b] = (unsigned char)
							(alike && b < tails[i].len - 2 ? 1 : 1 + xrand() % 2);
				}
				for (int b = 0; b < tails[i].len && b < 7 && tails[i].len < 7; b++)
					bytes[i * TAIL_BUF + b] = (unsigned char) (1 + xrand() % 3);
				tails[i].data = bytes + i * TAIL_BUF;
				idx[i] = i;
			}
			sort_te = &te;
			qsort(idx, n, sizeof(size_t), te_cmp_idx);
			for (size_t i = 0; i < n; i++)
			{
				memcpy(&se[i * st], &e[idx[i] * st], sizeof(uint64_t) * st);
				stails[i] = tails[idx[i]];
			}
			/* gbt_tail_sort gives qsort's order */
			{
				uint64_t   *re = malloc(sizeof(uint64_t) * (st + 1) * (n + 1));
				uint64_t   *rs = malloc(sizeof(uint64_t) * (st + 1) * (n + 1));
				size_t	   *hist = malloc(sizeof(size_t) * gbt_wsort_hist_size(nw + 1));
				size_t		wrong = 0;

				for (size_t i = 0; i < n; i++)
				{
					memcpy(&re[i * (st + 1)], &e[i * st], sizeof(uint64_t) * st);
					re[i * (st + 1) + st] = (uint64_t) i << 16;
				}
				gbt_tail_sort(re, rs, n, nw, tails, hist);
				for (size_t i = 0; i < n; i++)
					if (memcmp(&re[i * (st + 1)], &se[i * st], sizeof(uint64_t) * st) != 0 ||
						(re[i * (st + 1) + st] >> 16) != idx[i])
						wrong++;
				CHECK(wrong == 0, "tail sort of %d words: %zu of %zu entries misplaced", nw, wrong, n);
				free(re);
				free(rs);
				free(hist);
			}

			root = gbt_walk_build_tails(NULL, se, stails, n, nw, pct, &nblocks);
			CHECK(root != GBT_NO_BLOCK, "tail tree of %d words, kind %d: no top", nw, kind);
			if (root == GBT_NO_BLOCK)
				continue;
			/* two entries a page at least: at most n pages in all */
			CHECK(nblocks <= GBT_FIRST_FREE_BLKNO + n + 1,
				  "tail tree of %d words, kind %d: %u blocks for %zu entries", nw, kind,
				  nblocks, n);
			img = malloc((size_t) nblocks * GBT_PAGE_SIZE);
			root = gbt_walk_build_tails(img, se, stails, n, nw, pct, &nb2);
			CHECK(nb2 == nblocks, "tail tree of %d words: %u blocks counted, %u laid out", nw,
				  nblocks, nb2);

			/* every page, and the leaf chain's entries against the sorted array */
			{
				size_t		at = 0,
							truncated = 0;
				int			nfew = 0;
				uint32_t	b = root;
				uint64_t	k[GBT_MAX_KEY_WORDS],
							t,
							lasthi[GBT_MAX_KEY_WORDS] = {0},
							lasthitid = 0;
				static unsigned char lasthibytes[TAIL_BUF];
				GbtTail		tl,
							lasthitail = {lasthibytes, 0};
				GbtNode		node;

				for (uint32_t blk = GBT_FIRST_FREE_BLKNO; blk < nblocks; blk++)
				{
					const char *err;

					gbt_node_view(gbt_walk_page(img, blk), &node);
					err = gbt_node_check(&node);
					if (err && bad++ < 3)
						CHECK(false, "tail tree of %d words, block %u: %s", nw, blk, err);
					npages[node.toff != NULL]++;
					nfew += (node.opaque->flags & GBT_F_TAILS_FEW) != 0;
				}
				/* down the left edge to the first leaf */
				for (;;)
				{
					gbt_node_view(gbt_walk_page(img, b), &node);
					if (node.opaque->flags & GBT_F_LEAF)
						break;
					b = node.child[gbt_node_first_used(&node)];
				}
				for (;;)
				{
					gbt_node_view(gbt_walk_page(img, b), &node);
					if (node.opaque->leftlink != GBT_NO_BLOCK)
					{
						/* a separator: above the entry before, at or below the next */
						gbt_walk_bound_tail(&node, false, k, &tl, &t);
						CHECK(at > 0 && at < n &&
							  gbt_tentry_cmp(&se[(at - 1) * st], stails[at - 1],
											 se[(at - 1) * st + nw], k, tl, t, nw) < 0 &&
							  gbt_tentry_cmp(k, tl, t, &se[at * st], stails[at],
											 se[at * st + nw], nw) <= 0,
							  "tail tree of %d words: low key of leaf %u", nw, b);
						CHECK(gbt_tentry_cmp(k, tl, t, lasthi, lasthitail, lasthitid, nw) == 0,
							  "tail tree of %d words: low key of leaf %u is not the left's high key", nw, b);
						if (tl.len < stails[at].len)
							truncated++;
					}
					for (int s = gbt_node_first_used(&node); s < node.nslots;
						 s = gbt_node_next_used(&node, s + 1), at++)
					{
						gbt_walk_slot_words(&node, s, k);
						CHECK(at < n && gbt_tentry_cmp(k, gbt_node_slot_tail(&node, s), node.tids[s],
													   &se[at * st], stails[at],
													   se[at * st + nw], nw) == 0,
							  "tail tree of %d words: leaf entry %zu", nw, at);
					}
					if (node.opaque->flags & GBT_F_RIGHTMOST)
						break;
					gbt_walk_bound_tail(&node, true, k, &tl, &t);
					CHECK(at > 0 && at < n &&
						  gbt_tentry_cmp(&se[(at - 1) * st], stails[at - 1],
										 se[(at - 1) * st + nw], k, tl, t, nw) < 0 &&
						  gbt_tentry_cmp(k, tl, t, &se[at * st], stails[at],
										 se[at * st + nw], nw) <= 0,
						  "tail tree of %d words: high key of leaf %u", nw, b);
					memcpy(lasthi, k, sizeof(uint64_t) * nw);
					memcpy(lasthibytes, tl.data, tl.len);
					lasthitail.len = tl.len;
					lasthitid = t;
					b = node.opaque->rightlink;
				}
				CHECK(at == n, "tail tree of %d words: leaves hold %zu of %zu", nw, at, n);
				/* long tails between pages: most bounds carry a few bytes of them */
				if (kind == 0 || kind == 5)
					CHECK(truncated > 0, "tail tree of %d words, kind %d: no bound truncated",
						  nw, kind);
				/* long tails: many pages of few slots */
				if (kind == 5)
					CHECK(nfew > npages[1] / 4, "tail tree of %d words: %d pages of few slots of %d",
						  nw, nfew, npages[1]);
				/* tails everywhere: tailed pages; a few: both kinds */
				if (kind == 4)
					CHECK(npages[0] > 0 && npages[1] > 0, "mixed tree of %d words: %d plain, %d tailed pages",
						  nw, npages[0], npages[1]);
				if (kind == 0)
					CHECK(npages[1] > npages[0], "tailed tree of %d words: %d plain, %d tailed pages",
						  nw, npages[0], npages[1]);
			}

			for (int q = 0; q < 300; q++)
			{
				uint64_t	lo[GBT_MAX_KEY_WORDS] = {0},
							hi[GBT_MAX_KEY_WORDS] = {0};
				unsigned char lb[8],
							hb[8];
				GbtTail		lt = {lb, 0},
							ht = {hb, 0};
				uint64_t	ltid,
							htid;
				size_t		a,
							z;
				TailWalkCheck wc;
				int64_t		got;

				if (n > 0 && q % 3)
				{
					size_t		i = xrand() % n,
								j = xrand() % n;

					if (j < i)
					{
						size_t		x = i;

						i = j;
						j = x;
					}
					memcpy(lo, &se[i * st], sizeof(uint64_t) * nw);
					lt = stails[i];
					ltid = q % 2 ? se[i * st + nw] : 0;
					memcpy(hi, &se[j * st], sizeof(uint64_t) * nw);
					ht = stails[j];
					htid = q % 5 ? se[j * st + nw] + 1 : GBT_SENTINEL;
				}
				else
				{
					for (int k = 0; k < nw; k++)
					{
						lo[k] = xrand() % 3;
						hi[k] = 2 + xrand() % 6;
					}
					lt.len = (int) (xrand() % 3);
					ht.len = (int) (xrand() % 3);
					for (int b = 0; b < 2; b++)
					{
						lb[b] = (unsigned char) (xrand() % 4);
						hb[b] = (unsigned char) (1 + xrand() % 3);
					}
					ltid = 0;
					htid = GBT_SENTINEL;
				}
				a = te_lower_bound(&ste, n, lo, lt, ltid);
				z = te_lower_bound(&ste, n, hi, ht, htid);
				if (z < a)
					z = a;
				wc.te = &ste;
				wc.at = a;
				wc.ok = true;
				got = gbt_walk_range_tails(img, nblocks, root, nw, lo, lt, ltid, hi, ht, htid,
										   tail_walk_match, &wc);
				CHECK(got == (int64_t) (z - a) && wc.ok,
					  "tail tree of %d words, kind %d: walk gave %lld entries, want %zu (in order: %d)",
					  nw, kind, (long long) got, z - a, wc.ok);

				/*
				 * The kernels' walk, of words alone (gbtree_walk.h, the
				 * device lookups' reference): every entry whose words lie
				 * in [lo, hi], whatever its tail, in index order.  A
				 * truncated high key of those words (TID 0, its tail unseen)
				 * must not send the descent right of them.
				 */
				{
					size_t		wa = words_bound(se, n, nw, lo, false),
								wz = words_bound(se, n, nw, hi, true);
					WalkCheck	wwc = {se, nw, (int64_t) wa, true};
					int64_t		wgot;

					if (wz < wa)
						wz = wa;
					wgot = gbt_walk_range_words(img, nblocks, root, nw, lo, 0, hi, UINT64_MAX,
												walk_match, &wwc);
					CHECK(wgot == (int64_t) (wz - wa) && wwc.ok,
						  "tail tree of %d words, kind %d: words walk gave %lld entries, want %zu (in order: %d)",
						  nw, kind, (long long) wgot, wz - wa, wwc.ok);
				}
			}
			free(e);
			free(se);
			free(tails);
			free(stails);
			free(bytes);
			free(idx);
			free(img);
		}
}

/*
 * gbt_node_check refuses a tail longer than gbt_tail_max even when it lies
 * inside the tail area: readers copy tails into buffers of that size.
 */
static void
test_tail_limit(void)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static unsigned char big[1400];
	GbtNode		node;
	uint64_t	key[GBT_MAX_KEY_WORDS] = {7};
	int			nw = 2,
				max = gbt_tail_max(nw),
				s;
	uint16_t	len;

	memset(big, 9, sizeof(big));
	gbt_node_format_tails(page, true, 0, 0, nw);
	gbt_node_view(page, &node);
	CHECK(gbt_node_insert_tail(&node, key, big, max, 1 << 16, 0) >= 0, "tail limit: first");
	key[0] = 8;
	s = gbt_node_insert_tail(&node, key, big, max, 2 << 16, 0);
	CHECK(s >= 0 && gbt_node_check(&node) == NULL, "tail limit: two of the longest");
	if (s < 0)
		return;
	/* the lower tail made one byte too long: it overlaps, but length is checked first */
	len = (uint16_t) (max + 1);
	memcpy(page + node.toff[s], &len, sizeof(len));
	CHECK(gbt_node_check(&node) != NULL &&
		  strcmp(gbt_node_check(&node), "tail longer than any key's") == 0,
		  "tail limit: %s", gbt_node_check(&node) ? gbt_node_check(&node) : "accepted");
}

/*
 * gbt_first_diff (generic WAL's changed bytes, wal.c) against a byte loop:
 * two 8 kB pages that differ in 0-40 random bytes and runs, every start
 * and end around them, at each SIMD level.
 */
static void
test_first_diff(int best)
{
	static char a[8192],
				b[8192];
	unsigned int seed = 4242;

	for (int simd = 0; simd <= best; simd++)
	{
		gbt_simd_set((GbtSimdLevel) simd);
		for (int round = 0; round < 300; round++)
		{
			int			ndiff = (int) (rand_r(&seed) % 41);

			for (int i = 0; i < 8192; i++)
				a[i] = b[i] = (char) rand_r(&seed);
			for (int d = 0; d < ndiff; d++)
			{
				int			at = (int) (rand_r(&seed) % 8192);
				int			len = 1 + (int) (rand_r(&seed) % (d % 3 == 0 ? 40 : 2));

				for (int k = at; k < at + len && k < 8192; k++)
					b[k] = (char) (a[k] ^ (1 + rand_r(&seed) % 255));
			}
			for (int t = 0; t < 40; t++)
			{
				int			from = (int) (rand_r(&seed) % 8193);
				int			to = from + (int) (rand_r(&seed) % (8193 - from));
				int			want = to;

				for (int i = from; i < to; i++)
					if (a[i] != b[i])
					{
						want = i;
						break;
					}
				CHECK(gbt_first_diff(a, b, from, to) == want,
					  "first_diff simd %d [%d, %d): %d, want %d", simd, from, to,
					  gbt_first_diff(a, b, from, to), want);
			}
		}
	}
	gbt_simd_set((GbtSimdLevel) best);
}

/*
 * gbt_node_insert_extent: where it says yes, the insert at the lower bound
 * it gives (gbt_node_insert_at) makes the page gbt_node_insert_words makes,
 * and changes no byte but the slots [lo, hi] in the key and TID arrays,
 * their blocks' directory entries and bitmap words, and the special space
 * (the generic WAL writer logs those alone, wal.c).  Random inserts and
 * deletes on leaves of 1 to 4 words, keys that tie often.
 */
static void
test_insert_extent(int nw, int simd)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char before[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char other[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	GbtNode		node;
	int			yes = 0,
				no = 0;

	gbt_simd_set((GbtSimdLevel) simd);
	gbt_node_format_words(page, true, 0, 0, nw);
	gbt_node_view(page, &node);
	for (int op = 0; op < 20000; op++)
	{
		uint64_t	key[GBT_MAX_KEY_WORDS] = {0};
		uint64_t	tid = ((xrand() % 1000000) + 1) << 16;
		int			p,
					lo,
					hi;
		bool		changed[GBT_PAGE_SIZE];
		GbtNode		onode;

		/* deletes keep the page between half full and full */
		if (node.opaque->nused >= node.nslots ||
			(node.opaque->nused > node.nslots / 2 && xrand() % 100 < 45))
		{
			int			s = gbt_node_next_used(&node, (int) (xrand() % node.nslots));

			if (s >= node.nslots)
				s = gbt_node_first_used(&node);
			gbt_node_delete_slot(&node, s);
			continue;
		}
		for (int w = 0; w < nw; w++)
			key[w] = xrand() % 64;
		/* a duplicate (key, TID) is not a btree entry: skip it */
		p = nw == 1 ? gbt_node_lower_bound_entry(&node, key[0], tid) :
			gbt_node_lower_bound_entry_words(&node, key, tid);
		p = gbt_node_next_used(&node, p);
		if (p < node.nslots && node.tids[p] == tid)
			continue;
		memcpy(before, page, GBT_PAGE_SIZE);
		memcpy(other, page, GBT_PAGE_SIZE);
		if (!gbt_node_insert_extent(&node, key, tid, &p, &lo, &hi))
		{
			no++;
			CHECK(gbt_node_insert_words(&node, key, tid, 0) >= 0, "words %d: insert failed", nw);
			continue;
		}
		yes++;
		CHECK(lo >= 0 && lo <= hi && hi < node.nslots, "words %d: extent [%d, %d]", nw, lo, hi);
		CHECK(gbt_node_insert_at(&node, key, tid, p) >= 0, "words %d: insert_at failed", nw);
		gbt_node_view(other, &onode);
		CHECK(gbt_node_insert_words(&onode, key, tid, 0) >= 0, "words %d: insert failed", nw);
		CHECK(memcmp(page, other, GBT_PAGE_SIZE) == 0, "words %d: insert_at made another page", nw);
		memset(changed, 0, sizeof(changed));
#define MARK(a, from, to) \
		memset(changed + ((char *) ((a) + (from)) - page), 1, \
			   sizeof(*(a)) * ((to) - (from) + 1))
		MARK(node.keys, lo, hi);
		MARK(node.tids, lo, hi);
		for (int k = 1; k < nw; k++)
			MARK(node.xkeys[k - 1], lo, hi);
		MARK(node.dir, lo / GBT_BLOCK_SLOTS, hi / GBT_BLOCK_SLOTS);
		for (int k = 1; k < nw; k++)
			MARK(node.xdir[k - 1], lo / GBT_BLOCK_SLOTS, hi / GBT_BLOCK_SLOTS);
		MARK(node.used, lo >> 6, hi >> 6);
#undef MARK
		memset(changed + GBT_OPAQUE_OFFSET, 1, GBT_PAGE_SIZE - GBT_OPAQUE_OFFSET);
		for (int i = 0; i < GBT_PAGE_SIZE; i++)
			if (!changed[i] && page[i] != before[i])
			{
				CHECK(false, "words %d: byte %d changed outside the extent [%d, %d]", nw, i, lo, hi);
				break;
			}
	}
	CHECK(yes > 1000 && no > 0, "words %d: extents known %d, not %d", nw, yes, no);
}

/*
 * Where each array of a multi-word page of words alone lies, written out
 * byte for byte rather than through the view: for pages written before
 * GBT_F_DIRFIT (32 directory entries every word, the layout of the indexes
 * users already have) and for pages formatted now (16 entries a later
 * word on pages of at most 16 blocks).
 */
static void
test_layout_offsets(void)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static const int dir32_slots[2][5] = {{0, 384, 256, 192, 144}, {0, 480, 304, 208, 160}};
	static const int dirfit_slots[2][5] = {{0, 384, 256, 192, 160}, {0, 480, 304, 224, 176}};

	/* kind 0: words alone; 1: tailed (80 / 64 slots); 2: tailed, few (32 / 16) */
	for (int kind = 0; kind < 3; kind++)
		for (int dir32 = 0; dir32 < 2; dir32++)
			for (int leaf = 0; leaf < 2; leaf++)
				for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
				{
					GbtNode		node;
					uint16_t	flags = (kind > 0 ? GBT_F_TAILS : 0) |
						(kind == 2 ? GBT_F_TAILS_FEW : 0) | (dir32 ? 0 : GBT_F_DIRFIT);
					int			ns = kind == 2 ? (leaf ? 32 : 16) : kind == 1 ? (leaf ? 80 : 64) :
						dir32 ? dir32_slots[leaf][nw] : dirfit_slots[leaf][nw];
					int			xdir = dir32 || ns > 256 ? 32 : 16;
					size_t		off = 64;
					bool		ok = true;

					if (kind == 0 && !dir32)
						gbt_node_format_words(page, leaf, leaf ? 0 : 1, 0, nw);
					else
						gbt_node_format_layout(page, leaf, leaf ? 0 : 1, flags, nw);
					gbt_node_view(page, &node);
#define AT(ptr, bytes) do { ok = ok && (char *) (ptr) == page + off; off += (bytes); } while (0)
					AT(node.keys, 8 * ns);
					AT(node.tids, 8 * ns);
					if (!leaf)
						AT(node.child, 4 * ns);
					AT(node.dir, 256);
					AT(node.used, 64);
					for (int k = 1; k < nw; k++)
						AT(node.xkeys[k - 1], 8 * ns);
					for (int k = 1; k < nw; k++)
						AT(node.xdir[k - 1], 8 * xdir);
					AT(node.xbounds, 16 * (nw - 1));
					if (kind > 0)
					{
						AT(node.toff, 2 * ns);
						AT(node.btoff, 8);
					}
					if (leaf)
						AT(gbt_leaf_dead(page), 64);
#undef AT
					CHECK(ok && off <= GBT_OPAQUE_OFFSET && node.nslots == ns &&
						  gbt_page_opaque(page)->nslots == ns &&
						  (kind == 0 || (node.tailstart == (int) off &&
										 gbt_tail_start_as(leaf, nw, flags) == (int) off)),
						  "layout %d/%d/%d/%d: an array is not where it was, or past the special space",
						  kind, dir32, leaf, nw);
				}
	/* the longest tail is what it was: it must fit pages of either layout */
	CHECK(gbt_tail_max(2) == 1328 && gbt_tail_max(3) == 1100 && gbt_tail_max(4) == 872,
		  "gbt_tail_max changed: %d %d %d", gbt_tail_max(2), gbt_tail_max(3), gbt_tail_max(4));
}

/*
 * An empty words-only leaf of the older layout (dir32) or today's, for
 * the append and merge split tests: low key (5, 3..., TID 1), high key
 * (2^62, 9..., TID 7) and right-link 4711 unless rightmost, left-link 815.
 */
static void
split_test_leaf(char *page, GbtNode *node, int nw, bool dir32, bool rightmost)
{
	gbt_format_dir32 = dir32;
	memset(page, 0, GBT_PAGE_SIZE);
	gbt_node_format_words(page, true, 0, rightmost ? GBT_F_RIGHTMOST : 0, nw);
	gbt_format_dir32 = false;
	gbt_node_view(page, node);
	node->opaque->lowkey = 5;
	node->opaque->lowtid = 1;
	node->opaque->hikey = rightmost ? GBT_SENTINEL : UINT64_C(1) << 62;
	node->opaque->hitid = rightmost ? GBT_SENTINEL : 7;
	node->opaque->rightlink = rightmost ? GBT_NO_BLOCK : 4711;
	node->opaque->leftlink = 815;
	for (int k = 1; k < nw; k++)
	{
		node->xbounds[k - 1] = rightmost ? GBT_SENTINEL : 9;
		node->xbounds[nw - 1 + k - 1] = 3;
	}
}

/*
 * gbt_node_append_split: a full words-only leaf of either layout, rightmost
 * or not, and a sorted run above its entries: the leaf keeps every entry
 * in its slot and takes the run's first entry as its high key; the right
 * page (the layout formatted now) holds the run with that low key, the
 * leaf's old high key, right-link and rightmost flag; both pass
 * gbt_node_check and find every entry.
 */
static void
test_append_split(void)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char before[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char right[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static uint64_t keys[GBT_MAX_SLOTS * GBT_MAX_KEY_WORDS];
	static uint64_t tids[GBT_MAX_SLOTS];

	for (int iter = 0; iter < 600; iter++)
	{
		int			nw = 2 + iter % 3;
		bool		dir32 = (iter / 3) % 2 == 1;
		bool		rightmost = (iter / 6) % 2 == 1;
		GbtNode		node,
					rn;
		GbtPageOpaqueData old;
		uint64_t	key[GBT_MAX_KEY_WORDS];
		uint64_t	base = (uint64_t) 1 << 32;
		int			n,
					cap;

		split_test_leaf(page, &node, nw, dir32, rightmost);
		/* fill it (random keys below base), then the run above them */
		for (;;)
		{
			key[0] = 10 + xrand() % (base - 10);
			for (int k = 1; k < nw; k++)
				key[k] = xrand() % 4;
			if (gbt_node_insert_words(&node, key, (xrand() % 1000 + 1) << 16, 0) < 0)
				break;
		}
		CHECK(node.opaque->nused == node.nslots, "append split: leaf not full");
		memcpy(before, page, GBT_PAGE_SIZE);
		old = *gbt_page_opaque(page);
		cap = gbt_leaf_slots_for(nw) * 9 / 10;
		n = 1 + xrand() % cap;
		for (int i = 0; i < n; i++)
		{
			keys[i * nw] = base + (uint64_t) i * 3 + xrand() % 3;
			for (int k = 1; k < nw; k++)
				keys[i * nw + k] = xrand() % 4;
			tids[i] = (uint64_t) (i + 1) << 16;
		}
		memset(right, 0, GBT_PAGE_SIZE);
		gbt_node_append_split(page, keys, tids, n, right);
		CHECK(fill_page_rebuilds(right), "append split (words %d): the right page is not laid "
			  "out again from its entries", nw);
		gbt_node_view(page, &node);
		gbt_node_view(right, &rn);
		CHECK(gbt_node_check(&node) == NULL && gbt_node_check(&rn) == NULL,
			  "append split (words %d, dir32 %d): %s / %s", nw, dir32,
			  gbt_node_check(&node) ? gbt_node_check(&node) : "ok",
			  gbt_node_check(&rn) ? gbt_node_check(&rn) : "ok");
		/* the leaf: every byte as before but its high key and flags */
		CHECK(memcmp(page + 64, before + 64, (char *) node.xbounds - page - 64) == 0 &&
			  memcmp((char *) (node.xbounds + nw - 1), before + ((char *) (node.xbounds + nw - 1) - page),
					 GBT_OPAQUE_OFFSET - ((char *) (node.xbounds + nw - 1) - page)) == 0,
			  "append split: the leaf's entries moved (words %d)", nw);
		gbt_walk_bound_words(&node, true, key, &tids[GBT_MAX_SLOTS - 1]);
		CHECK(wkey_cmp(key, keys, nw) == 0 && node.opaque->hitid == tids[0] &&
			  !(node.opaque->flags & GBT_F_RIGHTMOST) && node.opaque->lowkey == 5 &&
			  node.opaque->nused == old.nused && node.opaque->rightlink == old.rightlink,
			  "append split: the leaf's high key or flags");
		/* the right page: the run, the bounds, the links, the layout of now */
		CHECK(rn.opaque->nused == n && rn.nslots == gbt_leaf_slots_for(nw) &&
			  (rn.opaque->flags & GBT_F_LEAF) && rn.toff == NULL &&
			  ((rn.opaque->flags & GBT_F_RIGHTMOST) != 0) == rightmost &&
			  rn.opaque->rightlink == old.rightlink && rn.opaque->hikey == old.hikey &&
			  rn.opaque->hitid == old.hitid && rn.opaque->lowkey == keys[0] &&
			  rn.opaque->lowtid == tids[0],
			  "append split: the right page's bounds, links or flags (words %d)", nw);
		for (int k = 1; k < nw; k++)
			CHECK(rn.xbounds[k - 1] == (rightmost ? GBT_SENTINEL : 9) &&
				  rn.xbounds[nw - 1 + k - 1] == keys[k],
				  "append split: the right page's bound words");
		for (int i = 0, s = gbt_node_first_used(&rn); i < n; i++, s = gbt_node_next_used(&rn, s + 1))
		{
			int			lb = gbt_node_lower_bound_entry_words(&rn, &keys[i * nw], tids[i]);

			lb = gbt_node_next_used(&rn, lb);

			gbt_walk_slot_words(&rn, s, key);
			CHECK(s < rn.nslots && wkey_cmp(key, &keys[i * nw], nw) == 0 && rn.tids[s] == tids[i] &&
				  lb == s, "append split: entry %d of %d not where a search finds it", i, n);
		}
	}
}

/*
 * gbt_node_merge_split: a full words-only leaf of either layout and a
 * sorted run among its entries, up to two built leaves' worth in all,
 * cut in halves or where asked: the parts pass gbt_node_check, hold every entry in order, the left
 * one the page's low key and left-link, the right one its high key,
 * right-link and rightmost flag, the separator the right half's first
 * entry; both are of the layout formatted now.
 */
static int
went_cmp_idx(const uint64_t *k, const uint64_t *t, int a, int b, int nw)
{
	int			c = wkey_cmp(&k[a * nw], &k[b * nw], nw);

	return c != 0 ? c : (t[a] < t[b] ? -1 : t[a] > t[b]);
}

/* insertion sort of n entries by (words, TID) */
static void
wentries_sort(uint64_t *k, uint64_t *t, int n, int nw)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && went_cmp_idx(k, t, j - 1, j, nw) > 0; j--)
		{
			uint64_t	tk[GBT_MAX_KEY_WORDS],
						tt = t[j];

			memcpy(tk, &k[j * nw], sizeof(uint64_t) * nw);
			memcpy(&k[j * nw], &k[(j - 1) * nw], sizeof(uint64_t) * nw);
			memcpy(&k[(j - 1) * nw], tk, sizeof(uint64_t) * nw);
			t[j] = t[j - 1];
			t[j - 1] = tt;
		}
}

/*
 * Fill the split test leaf node views with random distinct entries until
 * it is full (heavy duplicates of the first word when iter % 5 is 0; TIDs
 * odd, each its own), their words and TIDs into all and allt in the order
 * inserted; returns their number.
 */
static int
fill_split_leaf(GbtNode *node, int nw, int iter, uint64_t *all, uint64_t *allt)
{
	uint64_t	key[GBT_MAX_KEY_WORDS],
				tid;
	int			nall = 0;

	for (;;)
	{
		key[0] = 10 + xrand() % (iter % 5 == 0 ? 40 : 1000000);
		for (int k = 1; k < nw; k++)
			key[k] = xrand() % 4;
		tid = ((uint64_t) (nall * 64 + xrand() % 64) << 16) | 1;
		if (gbt_node_insert_words(node, key, tid, 0) < 0)
			return nall;
		memcpy(&all[nall * nw], key, sizeof(uint64_t) * nw);
		allt[nall++] = tid;
	}
}

/*
 * The bounds, links and flags of a split of split_test_leaf's page (old
 * its special space) into ln and rn, at entry cut of the sorted all/allt.
 */
static void
check_split_bounds(const char *what, GbtNode *ln, GbtNode *rn, const GbtPageOpaqueData *old,
				   const uint64_t *all, const uint64_t *allt, int cut, int nw, bool rightmost)
{
	uint64_t	key[GBT_MAX_KEY_WORDS],
				tid;

	gbt_walk_bound_words(ln, true, key, &tid);
	CHECK(wkey_cmp(key, &all[cut * nw], nw) == 0 && tid == allt[cut] &&
		  rn->opaque->lowkey == all[cut * nw] && rn->opaque->lowtid == allt[cut] &&
		  ln->opaque->lowkey == 5 && ln->opaque->lowtid == 1 && ln->opaque->leftlink == 815 &&
		  rn->opaque->hikey == old->hikey && rn->opaque->hitid == old->hitid &&
		  rn->opaque->rightlink == old->rightlink && !(ln->opaque->flags & GBT_F_RIGHTMOST) &&
		  ((rn->opaque->flags & GBT_F_RIGHTMOST) != 0) == rightmost,
		  "%s: bounds, links or flags (words %d)", what, nw);
	for (int k = 1; k < nw; k++)
		CHECK(ln->xbounds[nw - 1 + k - 1] == 3 && rn->xbounds[k - 1] == (rightmost ? GBT_SENTINEL : 9) &&
			  rn->xbounds[nw - 1 + k - 1] == all[cut * nw + k],
			  "%s: bound words (words %d)", what, nw);
}

static void
test_merge_split(void)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char left[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char right[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static uint64_t keys[2 * GBT_MAX_SLOTS * GBT_MAX_KEY_WORDS];
	static uint64_t tids[2 * GBT_MAX_SLOTS];
	static uint64_t all[3 * GBT_MAX_SLOTS * GBT_MAX_KEY_WORDS];
	static uint64_t allt[3 * GBT_MAX_SLOTS];

	for (int iter = 0; iter < 600; iter++)
	{
		int			nw = 2 + iter % 3;
		bool		dir32 = (iter / 3) % 2 == 1;
		bool		rightmost = (iter / 6) % 2 == 1;
		bool		alias = (iter / 12) % 2 == 1;
		char	   *lp = alias ? page : left;
		GbtNode		node,
					ln,
					rn;
		GbtPageOpaqueData old;
		uint64_t	key[GBT_MAX_KEY_WORDS];
		int			n,
					nall,
					cap,
					nleft,
					cut,
					at = 0;

		split_test_leaf(page, &node, nw, dir32, rightmost);
		nall = fill_split_leaf(&node, nw, iter, all, allt);
		old = *gbt_page_opaque(page);
		/* the run: sorted, TIDs even, so none is on the page */
		cap = gbt_leaf_slots_for(nw) * 9 / 10;
		n = 1 + xrand() % (2 * cap - old.nused);
		for (int i = 0; i < n; i++)
		{
			keys[i * nw] = 10 + xrand() % (iter % 5 == 0 ? 40 : 1000000);
			for (int k = 1; k < nw; k++)
				keys[i * nw + k] = xrand() % 4;
			tids[i] = (uint64_t) (i * 64 + xrand() % 64 + 1) << 17;
		}
		wentries_sort(keys, tids, n, nw);
		for (int i = 0; i < n; i++)
		{
			memcpy(&all[nall * nw], &keys[i * nw], sizeof(uint64_t) * nw);
			allt[nall++] = tids[i];
		}
		wentries_sort(all, allt, nall, nw);
		memset(right, 0, GBT_PAGE_SIZE);
		if (!alias)
			memset(left, 0, GBT_PAGE_SIZE);
		/* halves, or a given cut (merge_share's) that both pages can hold */
		nleft = 0;
		if (iter % 4 == 3)
		{
			int			lo = nall - cap > 1 ? nall - cap : 1,
						hi = cap < nall - 1 ? cap : nall - 1;

			if (lo <= hi)
				nleft = lo + xrand() % (hi - lo + 1);
		}
		cut = nleft > 0 ? nleft : nall / 2;
		gbt_node_merge_split(page, keys, tids, n, nleft, lp, right);
		CHECK(fill_page_rebuilds(right), "merge split (words %d): the right page is not laid "
			  "out again from its entries", nw);
		gbt_node_view(lp, &ln);
		gbt_node_view(right, &rn);
		CHECK(gbt_node_check(&ln) == NULL && gbt_node_check(&rn) == NULL,
			  "merge split (words %d, dir32 %d): %s / %s", nw, dir32,
			  gbt_node_check(&ln) ? gbt_node_check(&ln) : "ok",
			  gbt_node_check(&rn) ? gbt_node_check(&rn) : "ok");
		CHECK(ln.opaque->nused + rn.opaque->nused == nall &&
			  ln.opaque->nused == cut && ln.nslots == gbt_leaf_slots_for(nw) &&
			  rn.nslots == gbt_leaf_slots_for(nw) && ln.toff == NULL && rn.toff == NULL,
			  "merge split: %d + %d entries of %d (words %d)", ln.opaque->nused,
			  rn.opaque->nused, nall, nw);
		/* every entry, in order, left then right */
		for (int side = 0; side < 2; side++)
		{
			GbtNode    *h = side ? &rn : &ln;

			for (int s2 = gbt_node_first_used(h); s2 < h->nslots; s2 = gbt_node_next_used(h, s2 + 1))
			{
				int			lb = gbt_node_lower_bound_entry_words(h, &all[at * nw], allt[at]);

				gbt_walk_slot_words(h, s2, key);
				CHECK(at < nall && wkey_cmp(key, &all[at * nw], nw) == 0 && h->tids[s2] == allt[at] &&
					  gbt_node_next_used(h, lb) == s2,
					  "merge split: entry %d of %d (side %d, words %d)", at, nall, side, nw);
				at++;
			}
		}
		CHECK(at == nall, "merge split: %d entries of %d found", at, nall);
		check_split_bounds("merge split", &ln, &rn, &old, all, allt, cut, nw, rightmost);
	}
}

/*
 * gbt_node_cut_split: a full words-only leaf of either layout, rightmost
 * or not, and a sorted run between two of its entries: the leaf keeps the
 * entries below the run in their slots and takes the run in the slots
 * right after them; the right page holds the entries above it, with the
 * first of them as its low key and the leaf's high key; both pass
 * gbt_node_check and find every entry in order.
 */
static void
test_cut_split(void)
{
	static char page[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static char right[GBT_PAGE_SIZE] __attribute__((aligned(64)));
	static uint64_t all[GBT_MAX_SLOTS * GBT_MAX_KEY_WORDS];
	static uint64_t allt[GBT_MAX_SLOTS];
	static uint64_t keys[GBT_MAX_SLOTS * GBT_MAX_KEY_WORDS];
	static uint64_t tids[GBT_MAX_SLOTS];
	static int	slot_of[GBT_MAX_SLOTS];

	for (int iter = 0; iter < 400; iter++)
	{
		int			nw = 2 + iter % 3;
		bool		dir32 = (iter / 3) % 2 == 1;
		bool		rightmost = (iter / 6) % 2 == 1;
		GbtNode		node,
					ln,
					rn;
		GbtPageOpaqueData old;
		uint64_t	key[GBT_MAX_KEY_WORDS];
		int			nall = 0,
					j,
					nnew,
					at = 0,
					last = -1;

		split_test_leaf(page, &node, nw, dir32, rightmost);
		(void) fill_split_leaf(&node, nw, iter, all, allt);
		old = *gbt_page_opaque(page);
		nall = gbt_node_extract(&node, all, allt, NULL);
		for (int s2 = gbt_node_first_used(&node), i = 0; s2 < node.nslots;
			 s2 = gbt_node_next_used(&node, s2 + 1))
			slot_of[i++] = s2;
		/* the run after entry j, whose next entry has other words: j's words, larger TIDs */
		j = xrand() % (nall - 1);
		while (j < nall - 1 && wkey_cmp(&all[j * nw], &all[(j + 1) * nw], nw) == 0)
			j++;
		if (j >= nall - 1)
			continue;
		nnew = 1 + xrand() % (node.nslots - j - 1 < 20 ? node.nslots - j - 1 : 20);
		for (int i = 0; i < nnew; i++)
		{
			memcpy(&keys[i * nw], &all[j * nw], sizeof(uint64_t) * nw);
			tids[i] = allt[j] + 2 * (i + 1);
		}
		memset(right, 0, GBT_PAGE_SIZE);
		CHECK(gbt_node_cut_split(page, keys, tids, nnew, right), "cut split refused (words %d)", nw);
		CHECK(fill_page_rebuilds(right), "cut split (words %d): the right page is not laid out "
			  "again from its entries", nw);
		gbt_node_view(page, &ln);
		gbt_node_view(right, &rn);
		CHECK(gbt_node_check(&ln) == NULL && gbt_node_check(&rn) == NULL,
			  "cut split (words %d, dir32 %d): %s / %s", nw, dir32,
			  gbt_node_check(&ln) ? gbt_node_check(&ln) : "ok",
			  gbt_node_check(&rn) ? gbt_node_check(&rn) : "ok");
		CHECK(ln.opaque->nused == j + 1 + nnew && rn.opaque->nused == nall - j - 1,
			  "cut split: %d + %d entries, want %d + %d (words %d)", ln.opaque->nused,
			  rn.opaque->nused, j + 1 + nnew, nall - j - 1, nw);
		/* left: the kept entries in their slots, then the run after them */
		for (int s2 = gbt_node_first_used(&ln); s2 < ln.nslots; s2 = gbt_node_next_used(&ln, s2 + 1))
		{
			const uint64_t *wk = at <= j ? &all[at * nw] : &keys[(at - j - 1) * nw];
			uint64_t	wt = at <= j ? allt[at] : tids[at - j - 1];
			int			want = at <= j ? slot_of[at] : last + 1;

			gbt_walk_slot_words(&ln, s2, key);
			CHECK(wkey_cmp(key, wk, nw) == 0 && ln.tids[s2] == wt && s2 == want &&
				  gbt_node_next_used(&ln, gbt_node_lower_bound_entry_words(&ln, wk, wt)) == s2,
				  "cut split: left entry %d in slot %d, want %d (words %d)", at, s2, want, nw);
			last = s2;
			at++;
		}
		at = j + 1;
		for (int s2 = gbt_node_first_used(&rn); s2 < rn.nslots; s2 = gbt_node_next_used(&rn, s2 + 1))
		{
			gbt_walk_slot_words(&rn, s2, key);
			CHECK(at < nall && wkey_cmp(key, &all[at * nw], nw) == 0 && rn.tids[s2] == allt[at] &&
				  gbt_node_next_used(&rn, gbt_node_lower_bound_entry_words(&rn, &all[at * nw], allt[at])) == s2,
				  "cut split: right entry %d (words %d)", at, nw);
			at++;
		}
		CHECK(at == nall, "cut split: right ends at %d of %d", at, nall);
		check_split_bounds("cut split", &ln, &rn, &old, all, allt, j + 1, nw, rightmost);
		for (int k = 1; k < nw; k++)
			CHECK(ln.xbounds[k - 1] == all[(j + 1) * nw + k],
				  "cut split: left's high bound words (words %d)", nw);
	}
}

int
main(void)
{
	int			best = gbt_simd_best();

	printf("test_node: best SIMD level on this CPU: %s\n", gbt_simd_name(best));
	test_layout_offsets();
	test_first_diff(best);
	test_counts(best);
	test_word_counts(best);
	test_word_trees();
	test_tail_trees();
	test_to_tails();
	test_split();
	test_cut_split();
	test_append_split();
	test_merge_split();
	test_tail_limit();
	for (int simd = 0; simd <= best; simd++)
		for (int nw = 1; nw <= GBT_MAX_KEY_WORDS; nw++)
			test_insert_extent(nw, simd);
	for (int simd = 0; simd <= best; simd++)
		for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
			for (int mode = 0; mode < 3; mode++)
			{
				for (int dir32 = 0; dir32 < 2; dir32++)
				{
					random_word_ops(true, nw, mode, 6000, simd, dir32);
					random_word_ops(false, nw, mode, 6000, simd, dir32);
				}
			}
	for (int simd = 0; simd <= best; simd++)
		for (int nw = 2; nw <= GBT_MAX_KEY_WORDS; nw++)
			for (int mode = 0; mode < 3; mode++)
			{
				for (int few = 0; few < 4; few++)
				{
					random_tail_ops(true, nw, mode, 6000, simd, few & 1, few >> 1);
					random_tail_ops(false, nw, mode, 6000, simd, few & 1, few >> 1);
				}
			}
	for (int simd = 0; simd <= best; simd++)
		for (int mode = 0; mode < 3; mode++)
		{
			random_ops(true, mode, 20000, simd);
			random_ops(false, mode, 20000, simd);
		}
	for (int simd = 0; simd <= best; simd++)
	{
		test_redistribution(true, simd);
		test_redistribution(false, simd);
		test_hot_spot(simd);
	}
	printf("test_node: %ld checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
