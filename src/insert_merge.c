/*-------------------------------------------------------------------------
 *
 * insert_merge.c
 *	  Batched insertion: sorted runs of entries merged into the leaves
 *	  (gbt_insert_sorted, fed by batch.c), with the same locking, SMO and
 *	  WAL protocol as insert.c's single inserts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_insert.h"
#include "gbtree_xlog.h"

/*
 * Batched insertion
 * -----------------
 *
 * e[0..n) is sorted by (key, tid).  Each step takes the leaf of the first
 * entry not yet placed and the run of entries below its high key.  If the
 * leaf has room for the whole run, they go in under one exclusive lock and
 * one WAL record (a full image once there are many of them).  If not, the
 * leaf splits under the SMO lock, as a single insert's would, but with the
 * run merged in: the left page gets its share of the merged entries, the
 * right page the rest when they fit, else the leaf's old entries beyond
 * the cut plus as many new ones as make it as full as a build would; the
 * remaining new entries belong to the right page's range and the next step
 * goes on from there.  Every step is one atomic split record, so a crash
 * or an error between steps leaves a valid tree, and concurrent readers
 * and inserters see ordinary splits.
 *
 * dedup: some entries may already be in the index (a flush that failed
 * midway and is tried again); such entries are skipped.
 */

/* Merges a leaf's old entries with a sorted run of new ones. */
typedef struct GbtMergeCursor
{
	const uint64 *okeys;
	const uint64 *otids;
	int			nold;
	int			a;				/* next old entry */
	const GbtEntry *e;
	Size		k;				/* new entries e[0..k) */
	Size		b;				/* next new entry */
} GbtMergeCursor;

/* The next merged entry, or false at the end; a new entry equal to an old one is dropped. */
static bool
merge_next(GbtMergeCursor *mc, uint64 *key, uint64 *tid)
{
	bool		take_old;

	if (mc->a < mc->nold && mc->b < mc->k &&
		mc->e[mc->b].key == mc->okeys[mc->a] && mc->e[mc->b].tid == mc->otids[mc->a])
		mc->b++;				/* already in the leaf */
	if (mc->a >= mc->nold && mc->b >= mc->k)
		return false;
	take_old = mc->b >= mc->k ||
		(mc->a < mc->nold &&
		 gbt_entry_lt(mc->okeys[mc->a], mc->otids[mc->a], mc->e[mc->b].key, mc->e[mc->b].tid));
	if (take_old)
	{
		*key = mc->okeys[mc->a];
		*tid = mc->otids[mc->a];
		mc->a++;
	}
	else
	{
		*key = mc->e[mc->b].key;
		*tid = mc->e[mc->b].tid;
		mc->b++;
	}
	return true;
}

/* The end of the run of e[i..n) below the leaf's high key. */
static Size
leaf_run_end(GbtPageOpaque op, const GbtEntry *e, Size i, Size n)
{
	Size		lo = i,
				hi = n;

	if (op->flags & GBT_F_RIGHTMOST)
		return n;
	while (lo < hi)
	{
		Size		mid = lo + (hi - lo) / 2;

		if (gbt_entry_lt(e[mid].key, e[mid].tid, op->hikey, op->hitid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The leaf's entries merged with the sorted e[0..k) (those it holds
 * already skipped) into keys and tids: their number, or -1 past max.
 */
/*
 * Scratch of the merges below, which neither nest nor recurse: a batch
 * merges into thousands of leaves, and a palloc of this size is a malloc.
 */
static uint64 merge_okeys[GBT_LEAF_MAX_ENTRIES];
static uint64 merge_otids[GBT_LEAF_MAX_ENTRIES];
static uint64 merge_keys[GBT_LEAF_MAX_ENTRIES];
static uint64 merge_tids[GBT_LEAF_MAX_ENTRIES];

static int
leaf_merged(Page page, const GbtEntry *e, Size k, uint64 *keys, uint64 *tids, int max)
{
	uint64	   *okeys = merge_okeys;
	uint64	   *otids = merge_otids;
	GbtMergeCursor mc = {0};
	uint64		key,
				tid;
	int			m = 0;

	mc.nold = gbt_leaf_extract((char *) page, okeys, otids);
	mc.okeys = okeys;
	mc.otids = otids;
	mc.e = e;
	mc.k = k;
	while (merge_next(&mc, &key, &tid))
	{
		if (m >= max)
		{
			m = -1;
			break;
		}
		keys[m] = key;
		tids[m] = tid;
		m++;
	}
	return m;
}

/*
 * Would the leaf hold e[0..k) merged in?  Past its slots only in posting
 * form: where it has it, or where keys repeat enough to take it.
 */
bool
gbt_leaf_merge_fits(Page page, const GbtEntry *e, Size k, bool posting)
{
	uint64	   *keys = merge_keys;
	uint64	   *tids = merge_tids;
	int			m;

	if (k > GBT_LEAF_MAX_ENTRIES)
		return false;
	if (k == 1 && gbt_page_is_posting((char *) page) &&
		gbt_post_insert_inplace((char *) page, e[0].key, e[0].tid, false))
		return true;
	m = leaf_merged(page, e, k, keys, tids, GBT_LEAF_MAX_ENTRIES);
	return m >= 0 &&
		(m <= GBT_LEAF_SLOTS ||
		 (gbt_post_fits(m, keys, tids) && (posting || gbt_leaf_worth_posting(m, keys))));
}

/*
 * Rewrite a leaf with the sorted entries e[0..k) merged in, in whichever
 * form holds them (gbt_leaf_fill); false, the page unchanged, if neither
 * does.
 */
bool
gbt_leaf_merge(Page page, const GbtEntry *e, Size k, bool spread)
{
	uint64	   *keys = merge_keys;
	uint64	   *tids = merge_tids;
	int			m;

	/* one entry into a posting leaf: in place, the rewrite's bytes */
	if (k == 1)
	{
#ifdef USE_ASSERT_CHECKING
		PGAlignedBlock before;

		memcpy(before.data, page, BLCKSZ);
#endif
		if (gbt_post_insert_inplace((char *) page, e[0].key, e[0].tid, true))
		{
#ifdef USE_ASSERT_CHECKING
			m = leaf_merged((Page) before.data, e, k, keys, tids, GBT_LEAF_MAX_ENTRIES);
			gbt_page_leaf_rewrite((Page) before.data, m, keys, tids, spread);
			Assert(memcmp(before.data, page, BLCKSZ) == 0);
#endif
			return true;
		}
	}
	m = leaf_merged(page, e, k, keys, tids, GBT_LEAF_MAX_ENTRIES);
	if (m < 0 || !gbt_leaf_fits(m, keys, tids))
		return false;
	if (!gbt_page_is_posting((char *) page) && m <= GBT_LEAF_SLOTS)
	{
		/* plain stays plain: the slots are laid out again where they are */
		GbtNode		node;

		gbt_page_view(page, &node);
		gbt_node_load_spread(&node, m, keys, tids, NULL, spread);
		gbt_leaf_clear_dead((char *) page);
	}
	else
		gbt_page_leaf_rewrite(page, m, keys, tids, spread);
	return true;
}

/*
 * Rewrite a leaf with the sorted entries e[0..k) merged in (those it holds
 * already are skipped), gaps spread evenly.  The caller made sure they fit.
 */
void
gbt_page_merge(Page page, const GbtEntry *e, Size k)
{
	if (!gbt_leaf_merge(page, e, k, true))
		elog(ERROR, "gbtree: leaf unexpectedly full");
}

/* Put e[0..k) into the leaf, which has room for them: one WAL record. */
static void
merge_into_leaf(Relation index, Buffer buf, const GbtEntry *e, Size k, bool dedup)
{
	GbtWal	   *w;
	BlockNumber blkno = BufferGetBlockNumber(buf);

	if (k < GBT_MERGE_REWRITE_MIN)
	{
		uint64		keys[GBT_MERGE_REWRITE_MIN];
		uint64		tids[GBT_MERGE_REWRITE_MIN];
		int			n = 0;

		for (Size x = 0; x < k; x++)
		{
			if (dedup && gbt_page_has_entry(BufferGetPage(buf), e[x].key, e[x].tid))
				continue;
			keys[n] = e[x].key;
			tids[n] = e[x].tid;
			n++;
		}
		/* all there already (a flush tried again): nothing to change or log */
		if (n > 0)
			gbt_leaf_insert_few(index, buf, keys, tids, n);
		return;
	}
	gbt_check_rebuilt_page(index, buf);
	w = gbt_wal_start(index);
	gbt_page_merge(gbt_wal_register(w, buf, GBT_WAL_WHOLE), e, k);
	gbt_wal_block_data(w, 0, e, sizeof(GbtEntry) * k);
	gbt_wal_finish(w, XLOG_GBT_MERGE);
	gbt_gpu_note_changes(index, &blkno, 1, false);
}

/*
 * The entries of a split's right page when the rest of the merge does not
 * fit it: the leaf's old entries beyond the left page's (they must stay),
 * with as many of the next new ones, e[b..), as leave the page as full as
 * a build would (none if the old ones fill it already).  Into keys/tids;
 * returns their number and the new ones taken in *taken (-1: they do not
 * fit a page).
 */
static int
right_page_entries(bool dedup, int ff, const uint64 *okeys, const uint64 *otids, int a,
				   int nold, const GbtEntry *e, Size b, Size k, uint64 *keys, uint64 *tids,
				   Size *taken)
{
	GbtLeafShape sh = {0};
	Size		best = 0;
	uint64		prevkey = 0;
	GbtMergeCursor mc = {0};
	int			n = 0;

	/* the old entries alone */
	for (int x = a; x < nold; x++)
		gbt_shape_add(&sh, otids[x], x == a || okeys[x] != okeys[x - 1]);

	/*
	 * Then new ones, one at a time: a new entry adds a key unless an old
	 * one or the new one before has it.  Past the plain form's share, the
	 * posting form's size only grows, so once it is over the limit no
	 * later count can be within it.
	 */
	for (Size t = 1; b + t <= k && sh.n < GBT_LEAF_MAX_ENTRIES; t++)
	{
		const GbtEntry *ne = &e[b + t - 1];
		bool		newkey = !(t > 1 && ne->key == prevkey);

		if (newkey)
		{
			int			lo = a,
						hi = nold;

			while (lo < hi)
			{
				int			mid = lo + (hi - lo) / 2;

				if (okeys[mid] < ne->key)
					lo = mid + 1;
				else
					hi = mid;
			}
			newkey = !(lo < nold && okeys[lo] == ne->key);
		}
		prevkey = ne->key;
		gbt_shape_add(&sh, ne->tid, newkey);
		if (gbt_shape_within(&sh, dedup, ff))
			best = t;
		else if (sh.n > GBT_LEAF_SLOTS * ff / 100 &&
				 (!dedup || gbt_shape_post_size(&sh) > GBT_POST_END))
			break;
	}

	mc.okeys = okeys;
	mc.otids = otids;
	mc.nold = nold;
	mc.a = a;
	mc.e = e;
	mc.b = b;
	mc.k = b + best;
	while (n < GBT_LEAF_MAX_ENTRIES && merge_next(&mc, &keys[n], &tids[n]))
		n++;
	if (mc.a < mc.nold || mc.b < mc.k)
		n = -1;
	*taken = best;
	return n;
}

/*
 * Split the leaf buf (pbuf its parent, invalid if the leaf is the root)
 * with the new entries e[i..j) merged in, as far as one split takes them.
 * Returns the first entry not placed.
 */
static Size
split_merged(Relation index, Buffer pbuf, Buffer buf, const GbtEntry *e, Size i, Size j,
			 bool may_recycle)
{
	GbtSplitBuf *sb = &gbt_split_sb;
	uint64	   *okeys = gbt_split_okeys;
	uint64	   *otids = gbt_split_otids;
	uint64	   *mkeys = gbt_split_mkeys;
	uint64	   *mtids = gbt_split_mtids;
	bool		dedup = gbt_get_dedup(index);
	int			ff = gbt_get_fillfactor(index);
	GbtMergeCursor mc = {0};
	GbtSplitPlan plan;
	int			nold,
				m = 0,
				full,
				nright;
	bool		all,
				appended;
	Size		placed;

	nold = gbt_leaf_extract((char *) BufferGetPage(buf), okeys, otids);
	mc.nold = nold;
	mc.okeys = okeys;
	mc.otids = otids;
	mc.e = e + i;
	mc.k = j - i;

	/*
	 * The merged entries: as many as one build-full page takes (full, as
	 * gbt_leaf_prefix measures it, found as they come), then up to twice
	 * that, to know whether two halves would hold them all.
	 */
	{
		GbtLeafShape sh = {0};
		size_t		limit = gbt_post_limit(ff);
		bool		growing = true;

		full = 1;
		while (m < GBT_SPLIT_MAX && (growing || m <= 2 * full) &&
			   merge_next(&mc, &mkeys[m], &mtids[m]))
		{
			if (growing)
			{
				gbt_shape_add(&sh, mtids[m], m == 0 || mkeys[m] != mkeys[m - 1]);
				if (gbt_shape_within(&sh, dedup, ff))
					full = m + 1;
				else if (sh.n > GBT_LEAF_SLOTS * ff / 100 &&
						 (!dedup || gbt_shape_post_size(&sh) > limit))
					growing = false;	/* the size only grows from here */
			}
			m++;
		}
	}
	all = mc.a >= mc.nold && mc.b >= mc.k;

	/*
	 * New entries that all go after the leaf's old ones (ascending keys at
	 * the rightmost leaf, a key's duplicates in heap order, a one-row
	 * statement's of either): the leaf grows at its end, so it keeps one
	 * build-full page, as split_point has a single insert's split do, and
	 * the right page takes the rest packed, its free slots at its end
	 * where the next ones go.  Halves there left a non-unique index on a
	 * serial or a timestamp, filled by single-row INSERTs, at 1.5x
	 * btree's pages.
	 */
	appended = nold > 0 &&
		gbt_entry_lt(okeys[nold - 1], otids[nold - 1], e[i].key, e[i].tid);

	/* the left page: half of two build-full pages' worth, else one such page */
	plan.cut = (all && m <= 2 * full && !appended) ? m / 2 : Min(full, m - 1);
	plan.cut = Max(plan.cut, 1);
	memcpy(sb->keys, mkeys, sizeof(uint64) * plan.cut);
	memcpy(sb->tids, mtids, sizeof(uint64) * plan.cut);
	plan.sepkey = mkeys[plan.cut];
	plan.septid = mtids[plan.cut];

	/* where the left page's entries leave the old and the new ones */
	memset(&mc, 0, sizeof(mc));
	mc.nold = nold;
	mc.okeys = okeys;
	mc.otids = otids;
	mc.e = e + i;
	mc.k = j - i;
	for (int x = 0; x < plan.cut; x++)
	{
		uint64		k,
					t;

		if (!merge_next(&mc, &k, &t))
			break;
	}

	/* the right page: the rest if it fits, else what a build would put there */
	nright = m - plan.cut;
	if (all && (nright <= GBT_LEAF_SLOTS ||
				((nold > GBT_LEAF_SLOTS ||
				  (dedup && gbt_leaf_worth_posting(nright, mkeys + plan.cut))) &&
				 gbt_post_fits(nright, mkeys + plan.cut, mtids + plan.cut))))
	{
		memcpy(sb->keys + plan.cut, mkeys + plan.cut, sizeof(uint64) * nright);
		memcpy(sb->tids + plan.cut, mtids + plan.cut, sizeof(uint64) * nright);
		placed = j - i;
	}
	else
	{
		Size		taken;

		nright = right_page_entries(dedup, ff, okeys, otids, mc.a, nold, mc.e, mc.b, mc.k,
									sb->keys + plan.cut, sb->tids + plan.cut, &taken);
		placed = mc.b + taken;
	}
	if (nright < 0 || !gbt_leaf_fits(plan.cut, sb->keys, sb->tids) ||
		!gbt_leaf_fits(nright, sb->keys + plan.cut, sb->tids + plan.cut))
		elog(ERROR, "gbtree: batch split of block %u of index \"%s\" does not fit",
			 BufferGetBlockNumber(buf), RelationGetRelationName(index));
	sb->n = plan.cut + nright;
	plan.rspread = !appended;
	memset(sb->child, 0, sizeof(uint32) * sb->n);

	if (BufferIsValid(pbuf))
		gbt_split_page(index, pbuf, buf, sb, &plan, may_recycle);
	else
		gbt_split_root(index, buf, sb, &plan, may_recycle);
	return i + placed;
}

/*
 * A unique index's run e[i..j) for the leaf on page: how far it goes
 * before the first entry that the leaf cannot settle (unique.c,
 * gbt_unique_fits_leaf), or that repeats the key before it (checked
 * against the leaf without the first one).  Only as many as a step can
 * place are checked (a run into the rightmost leaf is the rest of the
 * batch): three leaves' worth, so that a split still sees more than two.
 */
static Size
unique_run_end(Relation index, Relation heap, Page page, const GbtEntry *e, Size i, Size j)
{
	j = Min(j, i + 3 * GBT_LEAF_MAX_ENTRIES);
	for (Size x = i; x < j; x++)
		if ((x > i && e[x].key == e[x - 1].key) ||
			!gbt_unique_fits_leaf(index, heap, page, e[x].key, e[x].tid))
			return x;
	return j;
}

/* A batch's SMO: where it is and how far it went */
typedef struct GbtMergeSmo
{
	GbtSmoTarget target;		/* the first entry not placed */
	const GbtEntry *e;
	Size		i;
	Size		n;
	bool		dedup;
	int			steps;
	Relation	heap;			/* a unique index's table, else NULL */
	bool		slow;			/* e[i] goes in alone, checked so */
} GbtMergeSmo;

static bool
merge_at_leaf(Relation index, Buffer pbuf, Buffer buf, bool may_recycle, void *arg)
{
	GbtMergeSmo *ms = (GbtMergeSmo *) arg;
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));
	Size		j = leaf_run_end(op, ms->e, ms->i, ms->n);

	if (ms->heap != NULL)
	{
		j = unique_run_end(index, ms->heap, BufferGetPage(buf), ms->e, ms->i, j);
		if (j == ms->i)
		{
			if (ms->dedup && gbt_page_has_entry(BufferGetPage(buf), ms->e[ms->i].key,
												ms->e[ms->i].tid))
				ms->i++;		/* in already (a flush tried again) */
			else
				ms->slow = true;
			return true;
		}
	}
	if (gbt_leaf_has_room(index, buf, ms->e + ms->i, j - ms->i))
	{
		/* no split needed: back to the optimistic path */
		merge_into_leaf(index, buf, ms->e + ms->i, j - ms->i, ms->dedup);
		ms->i = j;
		return true;
	}
	ms->i = split_merged(index, pbuf, buf, ms->e, ms->i, j, may_recycle);
	if (ms->i >= ms->n || ++ms->steps >= GBT_BATCH_SMO_STEPS)
		return true;
	ms->target.key = ms->e[ms->i].key;
	ms->target.tid = ms->e[ms->i].tid;
	return false;
}

/*
 * Place what the optimistic path cannot: split leaves with their new
 * entries under the SMO lock, until a leaf takes its run without a split
 * or GBT_BATCH_SMO_STEPS steps have passed.  Returns the first entry not
 * placed.
 */
static Size
merge_pessimistic(Relation index, Relation heap, BlockNumber root, const GbtEntry *e, Size i,
				  Size n, bool dedup)
{
	GbtMergeSmo ms;

	ms.target.key = e[i].key;
	ms.target.tid = e[i].tid;
	ms.e = e;
	ms.i = i;
	ms.n = n;
	ms.dedup = dedup;
	ms.steps = 0;
	ms.heap = heap;
	ms.slow = false;
	gbt_smo_run(index, root, &ms.target, merge_at_leaf, &ms);
	if (ms.slow)
	{
		gbt_insert_unique(index, heap, UNIQUE_CHECK_YES, root, e[ms.i].key, e[ms.i].tid, NULL,
						  NULL);
		return ms.i + 1;
	}
	return ms.i;
}

/* right-links a hinted leaf may be from the right one: a few splits */
#define GBT_HINT_MAX_HOPS	4

/*
 * The leaf of (key, tid) in the tree under root, exclusively locked, from
 * a hint: a block the GPU found in a device copy that may be behind the
 * pages, or be plainly wrong.  The hint is taken only if, under the lock,
 * it is a live leaf of that tree whose key range starts at or below the
 * entry (then, as in a Lehman-Yao descent, the entry's leaf is that one or
 * to its right); else InvalidBuffer, and the caller descends.
 */
static Buffer
leaf_from_hint(Relation index, BlockNumber root, BlockNumber hint, BlockNumber nblocks,
			   uint64 key, uint64 tid)
{
	Buffer		buf;

	if (hint == InvalidBlockNumber || hint < GBT_ROOT_BLKNO || hint >= nblocks)
		return InvalidBuffer;
	buf = ReadBuffer(index, hint);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	for (int hops = 0;; hops++)
	{
		Page		page = BufferGetPage(buf);
		GbtPageOpaque op;
		BlockNumber next;

		if (PageIsNew(page) || PageGetSpecialSize(page) != GBT_OPAQUE_SIZE)
			break;
		op = gbt_page_opaque((char *) page);
		if (op->page_id != GBT_PAGE_ID ||
			((op->flags & GBT_F_POSTING) ? op->nslots != 0 :
			 (op->nslots != GBT_LEAF_SLOTS || op->nused > op->nslots)) ||
			op->level != 0 ||
			(op->flags & (GBT_F_LEAF | GBT_F_META | GBT_F_DELETED)) != GBT_F_LEAF ||
			!gbt_page_in_tree(op, root) ||
			gbt_entry_lt(key, tid, op->lowkey, op->lowtid))
			break;
		if (!gbt_must_move_right(op, key, tid, false))
			return buf;
		/* split since the copy was made: the entry moved right */
		if (hops >= GBT_HINT_MAX_HOPS)
			break;
		next = gbt_checked_rightlink(index, buf);
		UnlockReleaseBuffer(buf);
		buf = ReadBuffer(index, next);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		/* the right sibling of a page we trusted: checked as a descent would */
		gbt_check_page(index, buf);
	}
	UnlockReleaseBuffer(buf);
	return InvalidBuffer;
}

/*
 * Insert the sorted, distinct entries e[0..n) into the tree under root
 * (see "Batched insertion" above).  leaves, if not NULL, holds for each
 * entry a hint of its leaf (see leaf_from_hint); the leaves reached from a
 * hint and by a descent are then added to *hinted and *descended.
 */
void
gbt_insert_sorted(Relation index, Relation heap, BlockNumber root, const GbtEntry *e, Size n,
				  bool dedup, const BlockNumber *leaves, uint64 *hinted, uint64 *descended)
{
	Size		i = 0;
	BlockNumber nblocks = leaves ? RelationGetNumberOfBlocks(index) : 0;

	while (i < n)
	{
		Buffer		buf = InvalidBuffer;
		GbtPageOpaque op;
		Size		j;

		CHECK_FOR_INTERRUPTS();
		if (leaves)
		{
			buf = leaf_from_hint(index, root, leaves[i], nblocks, e[i].key, e[i].tid);
			if (BufferIsValid(buf))
				(*hinted)++;
			else
				(*descended)++;
		}
		if (!BufferIsValid(buf))
			buf = gbt_descend(index, root, e[i].key, e[i].tid, false, BUFFER_LOCK_EXCLUSIVE);
		op = gbt_page_opaque((char *) BufferGetPage(buf));
		j = leaf_run_end(op, e, i, n);
		if (heap != NULL)
		{
			/* a unique index's: checked again where they go in (unique.c) */
			j = unique_run_end(index, heap, BufferGetPage(buf), e, i, j);
			if (j == i)
			{
				/* a flush tried again may have put it in already */
				bool		present = dedup && gbt_page_has_entry(BufferGetPage(buf), e[i].key,
																  e[i].tid);

				UnlockReleaseBuffer(buf);
				if (!present)
					gbt_insert_unique(index, heap, UNIQUE_CHECK_YES, root, e[i].key, e[i].tid,
									  NULL, NULL);
				i++;
				continue;
			}
		}
		if (gbt_leaf_has_room(index, buf, e + i, j - i))
		{
			merge_into_leaf(index, buf, e + i, j - i, dedup);
			UnlockReleaseBuffer(buf);
			i = j;
			continue;
		}
		UnlockReleaseBuffer(buf);
		i = merge_pessimistic(index, heap, root, e, i, n, dedup);
	}
}
