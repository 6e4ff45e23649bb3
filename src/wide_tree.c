/*-------------------------------------------------------------------------
 *
 * wide_tree.c
 *	  Descents and inserts in trees of multi-word keys (gbtree_wide.h).
 *
 * The tree is a Lehman-Yao B-link tree as the one-word one is: every page
 * has a high key and a right-link, and a descent that finds its target at
 * or above a page's high key moves right.  An insert goes to its leaf
 * under that leaf's exclusive lock when the leaf has a free slot.
 * Otherwise it takes the index's structure lock (a heavyweight lock on
 * the metapage's block number, as insert.c's splits do), so only one
 * structure change runs at a time and inner pages change only under it,
 * and descends again with exclusive locks, splitting on the way down
 * every full page it passes (the root in place).  Each split is one WAL
 * record of every page it touches: the page, its new right sibling, the
 * parent that gets the new downlink (which has room, since a full parent
 * was split before) and the old right sibling's left-link; so the tree is
 * whole after every record, and needs no incomplete-split repair after a
 * crash.  Page changes are logged as generic WAL.
 *
 * Readers hold one page lock at a time, and inserts one leaf, so the
 * structure change's several locks, always taken parent before child and
 * left before right, cannot deadlock with them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gbtree_gpu.h"
#include "gbtree_wide.h"
#include "gbtree_xlog.h"

/* high (high) or low key of a page, all its words */
void
gbt_wide_page_bounds(Page page, bool high, uint64 *key, uint64 *tid)
{
	GbtNode		node;

	gbt_node_view((char *) page, &node);
	gbt_walk_bound_words(&node, high, key, tid);
}

static void
set_bound(GbtNode *node, bool high, const uint64 *key, uint64 tid)
{
	int			nw = node->nwords;

	if (high)
	{
		node->opaque->hikey = key[0];
		node->opaque->hitid = tid;
	}
	else
	{
		node->opaque->lowkey = key[0];
		node->opaque->lowtid = tid;
	}
	for (int i = 1; i < nw; i++)
		node->xbounds[(high ? 0 : nw - 1) + i - 1] = key[i];
}

/* must a descent for (key, tid) go right of this page? (gbt_must_move_right) */
bool
gbt_wide_move_right(Page page, int nw, const uint64 *key, uint64 tid, bool backward)
{
	GbtPageOpaque op = gbt_page_opaque((char *) page);
	uint64		hk[GBT_MAX_KEY_WORDS],
				ht;

	if (op->flags & GBT_F_DELETED)
		return true;
	if (op->flags & GBT_F_RIGHTMOST)
		return false;
	gbt_wide_page_bounds(page, true, hk, &ht);
	if (backward)
		return gbt_wentry_lt(hk, ht, key, tid, nw);
	return !gbt_wentry_lt(key, tid, hk, ht, nw);
}

static void
report_inconsistent(Relation index, Buffer buf, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" has %s at block %u",
					RelationGetRelationName(index), what, BufferGetBlockNumber(buf)),
			 errhint("Please REINDEX it.")));
}

/* the child of a locked inner page to descend to for (key, tid) */
static BlockNumber
inner_child(Relation index, Buffer buf, const uint64 *key, uint64 tid)
{
	GbtNode		node;
	int			s;
	BlockNumber child;

	gbt_node_view((char *) BufferGetPage(buf), &node);
	s = gbt_node_prev_used(&node, gbt_node_lower_bound_entry_words(&node, key, tid));
	if (s < 0)
		s = gbt_node_first_used(&node);
	if (s >= node.nslots)
		report_inconsistent(index, buf, "an empty inner page");
	child = node.child[s];
	if (child == GBT_NO_BLOCK || child < GBT_FIRST_FREE_BLKNO)
		report_inconsistent(index, buf, "an invalid downlink");
	return child;
}

/*
 * The leaf holding the first entry >= (key, tid) (forward) or the last
 * entry < (key, tid) (backward), pinned and locked in leaflock mode; as
 * gbt_descend.
 */
Buffer
gbt_wide_descend(Relation index, BlockNumber root, int nw, const uint64 *key, uint64 tid,
				 bool backward, int leaflock)
{
	Buffer		buf;
	int			mode = BUFFER_LOCK_SHARE;
	int			expect_level = -1;
	int			hops = 0;

	buf = ReadBuffer(index, root);
	LockBuffer(buf, mode);
	for (;;)
	{
		Page		page;
		GbtPageOpaque op;
		BlockNumber child;
		uint64		lk[GBT_MAX_KEY_WORDS],
					lt;

		CHECK_FOR_INTERRUPTS();
		gbt_wide_check_page(index, buf, nw);
		page = BufferGetPage(buf);
		op = gbt_page_opaque((char *) page);
		gbt_check_in_tree(index, buf, root);
		if ((op->flags & GBT_F_META) ||
			(expect_level >= 0 && op->level != expect_level) || ++hops > 1000000)
			report_inconsistent(index, buf, "an inconsistent tree");
		if (gbt_wide_move_right(page, nw, key, tid, backward))
		{
			BlockNumber next = gbt_checked_rightlink(index, buf);

			expect_level = op->level;
			UnlockReleaseBuffer(buf);
			buf = ReadBuffer(index, next);
			LockBuffer(buf, mode);
			continue;
		}
		/* a page that starts above the target was reached by a bad link */
		gbt_wide_page_bounds(page, false, lk, &lt);
		if (gbt_wentry_lt(key, tid, lk, lt, nw))
			report_inconsistent(index, buf, "a page reached by a search for a key below its low key");
		if (op->flags & GBT_F_LEAF)
		{
			if (mode != leaflock)
			{
				/* the root was a leaf: relock and look again, it may have split */
				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
				LockBuffer(buf, leaflock);
				mode = leaflock;
				continue;
			}
			return buf;
		}
		if (mode != BUFFER_LOCK_SHARE)
		{
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			mode = BUFFER_LOCK_SHARE;
			continue;
		}
		child = inner_child(index, buf, key, tid);
		expect_level = op->level - 1;
		mode = op->level == 1 ? leaflock : BUFFER_LOCK_SHARE;
		UnlockReleaseBuffer(buf);
		buf = ReadBuffer(index, child);
		LockBuffer(buf, mode);
	}
}

/* the right sibling of the locked page, read and locked in mode (lock coupling) */
Buffer
gbt_wide_lock_right_sibling(Relation index, Buffer buf, int nw, int mode)
{
	Buffer		next = ReadBuffer(index, gbt_checked_rightlink(index, buf));

	LockBuffer(next, mode);
	gbt_wide_check_page(index, next, nw);
	return next;
}

static bool
page_is_full(Buffer buf)
{
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));

	return op->nused >= op->nslots;
}

/* Insert into the exclusively locked leaf if it has a free slot. */
bool
gbt_wide_leaf_insert_if_room(Relation index, Buffer buf, const uint64 *key, uint64 tid)
{
	GenericXLogState *state;
	Page		page;
	GbtNode		node;

	/*
	 * Entries marked dead go first (nbtree's simple deletion, vacuum.c):
	 * the insert would clear their marks, and the next dead find would
	 * cost a heap visit again.
	 */
	gbt_leaf_reclaim_dead(index, buf);
	if (page_is_full(buf))
		return false;
	/* with gbtree's resource manager, its own small record */
	if (!gbt_wal_insert_words_inplace(index, buf, key, tid))
	{
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, buf, 0);
		gbt_node_view((char *) page, &node);
		gbt_leaf_clear_dead((char *) page);	/* the slots move */
		if (gbt_node_insert_words(&node, key, tid, 0) < 0)
		{
			GenericXLogAbort(state);
			return false;
		}
		GenericXLogFinish(state);
	}
	/* a device copy ships the leaf before its next lookup */
	{
		BlockNumber blkno = BufferGetBlockNumber(buf);

		gbt_gpu_note_changes(index, &blkno, 1, false);
	}
	return true;
}

/* The entries of a page, and where a new one goes among them */
typedef struct WideSplitBuf
{
	int			n;
	uint64		keys[GBT_MAX_SLOT_WORDS + GBT_MAX_KEY_WORDS];
	uint64		tids[GBT_MAX_SLOTS + 1];
	uint32		child[GBT_MAX_SLOTS + 1];
} WideSplitBuf;

static void
gather(Page page, WideSplitBuf *sb, bool addnew, const uint64 *key, uint64 tid)
{
	GbtNode		node;
	int			nw;
	int			pos;

	gbt_node_view((char *) page, &node);
	nw = node.nwords;
	sb->n = gbt_node_extract(&node, sb->keys, sb->tids, node.child ? sb->child : NULL);
	if (!addnew)
		return;
	for (pos = sb->n; pos > 0; pos--)
		if (gbt_wentry_lt(&sb->keys[(pos - 1) * nw], sb->tids[pos - 1], key, tid, nw))
			break;
	memmove(&sb->keys[(pos + 1) * nw], &sb->keys[pos * nw], sizeof(uint64) * nw * (sb->n - pos));
	memmove(&sb->tids[pos + 1], &sb->tids[pos], sizeof(uint64) * (sb->n - pos));
	memmove(&sb->child[pos + 1], &sb->child[pos], sizeof(uint32) * (sb->n - pos));
	memcpy(&sb->keys[pos * nw], key, sizeof(uint64) * nw);
	sb->tids[pos] = tid;
	sb->child[pos] = 0;
	sb->n++;
}

/* fill a formatted page with entries [from, to) of sb */
static void
fill(Page page, const WideSplitBuf *sb, int from, int to)
{
	GbtNode		node;

	gbt_node_view((char *) page, &node);
	gbt_node_load_spread(&node, to - from, &sb->keys[from * node.nwords], &sb->tids[from],
						 node.child ? &sb->child[from] : NULL, true);
}

/*
 * Split the locked page in buf, whose locked parent pbuf has room for a
 * downlink, adding (key, tid) to it when addnew (a full leaf).  Returns
 * the new right page, locked, and its first entry in *sep, *septid.
 */
static Buffer
split_page(Relation index, Buffer pbuf, Buffer buf, int nw, bool addnew,
		   const uint64 *key, uint64 tid, uint64 *sep, uint64 *septid)
{
	WideSplitBuf *sb = palloc(sizeof(WideSplitBuf));
	Page		page = BufferGetPage(buf);
	GbtPageOpaqueData old = *gbt_page_opaque((char *) page);
	bool		leaf = (old.flags & GBT_F_LEAF) != 0;
	uint64		lowk[GBT_MAX_KEY_WORDS],
				lowt,
				hik[GBT_MAX_KEY_WORDS],
				hit;
	int			m;
	Buffer		rbuf,
				sbuf = InvalidBuffer;
	BlockNumber rblk;
	GenericXLogState *state;
	Page		lp,
				rp,
				pp;
	GbtNode		node;

	gbt_wide_page_bounds(page, false, lowk, &lowt);
	gbt_wide_page_bounds(page, true, hik, &hit);
	gather(page, sb, addnew, key, tid);
	if (sb->n < 2)
		report_inconsistent(index, buf, "a full page with fewer than two entries");

	/*
	 * Halves, except where keys arrive in ascending order at the end of the
	 * tree: there the left page keeps the fill factor's share, as nbtree's
	 * rightmost splits do.
	 */
	m = sb->n / 2;
	if (leaf && addnew && (old.flags & GBT_F_RIGHTMOST) &&
		memcmp(&sb->keys[(sb->n - 1) * nw], key, sizeof(uint64) * nw) == 0 &&
		sb->tids[sb->n - 1] == tid)
		m = Max(1, Min(sb->n - 1, sb->n * gbt_get_fillfactor(index) / 100));
	memcpy(sep, &sb->keys[m * nw], sizeof(uint64) * nw);
	*septid = sb->tids[m];

	rbuf = gbt_new_buffer(index, false);
	rblk = BufferGetBlockNumber(rbuf);
	if (old.rightlink != GBT_NO_BLOCK)
	{
		sbuf = ReadBuffer(index, old.rightlink);
		LockBuffer(sbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_wide_check_page(index, sbuf, nw);
	}

	state = GenericXLogStart(index);
	lp = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
	rp = GenericXLogRegisterBuffer(state, rbuf, GENERIC_XLOG_FULL_IMAGE);
	pp = GenericXLogRegisterBuffer(state, pbuf, 0);

	gbt_wide_init_page(lp, leaf, old.level, old.flags & GBT_F_NULLTREE, nw);
	fill(lp, sb, 0, m);
	gbt_node_view((char *) lp, &node);
	node.opaque->leftlink = old.leftlink;
	node.opaque->rightlink = rblk;
	set_bound(&node, false, lowk, lowt);
	set_bound(&node, true, sep, *septid);

	gbt_wide_init_page(rp, leaf, old.level, old.flags & (GBT_F_NULLTREE | GBT_F_RIGHTMOST), nw);
	fill(rp, sb, m, sb->n);
	gbt_node_view((char *) rp, &node);
	node.opaque->leftlink = BufferGetBlockNumber(buf);
	node.opaque->rightlink = old.rightlink;
	set_bound(&node, false, sep, *septid);
	if (!(old.flags & GBT_F_RIGHTMOST))
		set_bound(&node, true, hik, hit);

	gbt_node_view((char *) pp, &node);
	if (gbt_node_insert_words(&node, sep, *septid, rblk) < 0)
	{
		GenericXLogAbort(state);
		report_inconsistent(index, pbuf, "a parent page with no room for a downlink");
	}
	if (BufferIsValid(sbuf))
	{
		Page		sp = GenericXLogRegisterBuffer(state, sbuf, 0);

		gbt_page_opaque((char *) sp)->leftlink = rblk;
	}
	GenericXLogFinish(state);
	{
		BlockNumber changed[4] = {BufferGetBlockNumber(pbuf), BufferGetBlockNumber(buf), rblk,
		BufferIsValid(sbuf) ? BufferGetBlockNumber(sbuf) : InvalidBlockNumber};

		gbt_gpu_note_changes(index, changed, BufferIsValid(sbuf) ? 4 : 3, true);
	}
	if (BufferIsValid(sbuf))
		UnlockReleaseBuffer(sbuf);
	pfree(sb);
	return rbuf;
}

/*
 * Split the full root in place: its entries go to two new pages, and the
 * root, one level up, points to them.  The root stays locked.
 */
static void
split_root(Relation index, Buffer rootbuf, int nw)
{
	WideSplitBuf *sb = palloc(sizeof(WideSplitBuf));
	Page		page = BufferGetPage(rootbuf);
	GbtPageOpaqueData old = *gbt_page_opaque((char *) page);
	bool		leaf = (old.flags & GBT_F_LEAF) != 0;
	uint16		tree = old.flags & GBT_F_NULLTREE;
	uint64		zero[GBT_MAX_KEY_WORDS] = {0};
	uint64		sep[GBT_MAX_KEY_WORDS],
				septid;
	int			m;
	Buffer		abuf,
				bbuf;
	GenericXLogState *state;
	Page		rp,
				ap,
				bp;
	GbtNode		node;
	uint64		rkeys[2 * GBT_MAX_KEY_WORDS] = {0};
	uint64		rtids[2];
	uint32		rchild[2];

	gather(page, sb, false, NULL, 0);
	if (sb->n < 2)
		report_inconsistent(index, rootbuf, "a full root with fewer than two entries");
	m = sb->n / 2;
	memcpy(sep, &sb->keys[m * nw], sizeof(uint64) * nw);
	septid = sb->tids[m];
	abuf = gbt_new_buffer(index, false);
	bbuf = gbt_new_buffer(index, false);

	state = GenericXLogStart(index);
	rp = GenericXLogRegisterBuffer(state, rootbuf, GENERIC_XLOG_FULL_IMAGE);
	ap = GenericXLogRegisterBuffer(state, abuf, GENERIC_XLOG_FULL_IMAGE);
	bp = GenericXLogRegisterBuffer(state, bbuf, GENERIC_XLOG_FULL_IMAGE);

	gbt_wide_init_page(ap, leaf, old.level, tree, nw);
	fill(ap, sb, 0, m);
	gbt_node_view((char *) ap, &node);
	node.opaque->rightlink = BufferGetBlockNumber(bbuf);
	set_bound(&node, false, zero, 0);
	set_bound(&node, true, sep, septid);

	gbt_wide_init_page(bp, leaf, old.level, tree | GBT_F_RIGHTMOST, nw);
	fill(bp, sb, m, sb->n);
	gbt_node_view((char *) bp, &node);
	node.opaque->leftlink = BufferGetBlockNumber(abuf);
	set_bound(&node, false, sep, septid);

	gbt_wide_init_page(rp, false, old.level + 1, tree | GBT_F_ROOT | GBT_F_RIGHTMOST, nw);
	memcpy(&rkeys[nw], sep, sizeof(uint64) * nw);
	rtids[0] = 0;
	rtids[1] = septid;
	rchild[0] = BufferGetBlockNumber(abuf);
	rchild[1] = BufferGetBlockNumber(bbuf);
	gbt_node_view((char *) rp, &node);
	gbt_node_load_spread(&node, 2, rkeys, rtids, rchild, true);
	set_bound(&node, false, zero, 0);
	GenericXLogFinish(state);
	{
		BlockNumber changed[3] = {BufferGetBlockNumber(rootbuf), BufferGetBlockNumber(abuf),
		BufferGetBlockNumber(bbuf)};

		gbt_gpu_note_changes(index, changed, 3, true);
	}

	UnlockReleaseBuffer(abuf);
	UnlockReleaseBuffer(bbuf);
	pfree(sb);
}

/*
 * The structure change: under the structure lock, from the root down with
 * exclusive locks, split every full page on the way (each one's parent
 * then has room); at the leaf, action (NULL: insert) says what to do:
 * insert, splitting the leaf if it is full; only make room; or nothing.
 */
void
gbt_wide_smo(Relation index, BlockNumber root, const uint64 *key, uint64 tid,
			 GbtWideLeafAction action, void *arg)
{
	int			nw = gbt_index_info(index)->nwords;
	Buffer		buf,
				pbuf = InvalidBuffer;

	LockPage(index, GBT_META_BLKNO, ExclusiveLock);
	buf = ReadBuffer(index, root);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	gbt_wide_check_page(index, buf, nw);
	if (page_is_full(buf))
		split_root(index, buf, nw);
	for (;;)
	{
		GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));
		Buffer		cbuf;

		CHECK_FOR_INTERRUPTS();
		if (op->flags & GBT_F_LEAF)
		{
			GbtWideLeafDo todo = action ? action(index, buf, arg) : GBT_WIDE_INSERT;
			uint64		sep[GBT_MAX_KEY_WORDS],
						septid;

			if (todo == GBT_WIDE_INSERT && gbt_wide_leaf_insert_if_room(index, buf, key, tid))
				break;
			if (todo == GBT_WIDE_NOTHING || (todo == GBT_WIDE_MAKE_ROOM && !page_is_full(buf)))
				break;
			if (!BufferIsValid(pbuf))
				report_inconsistent(index, buf, "a full root leaf after its split");
			UnlockReleaseBuffer(split_page(index, pbuf, buf, nw, todo == GBT_WIDE_INSERT,
										   key, tid, sep, &septid));
			break;
		}
		cbuf = ReadBuffer(index, inner_child(index, buf, key, tid));
		LockBuffer(cbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_wide_check_page(index, cbuf, nw);
		/* nothing splits but under the structure lock: no need to move right */
		if (gbt_wide_move_right(BufferGetPage(cbuf), nw, key, tid, false))
			report_inconsistent(index, cbuf, "a downlink to a page below the target");
		if (!(gbt_page_opaque((char *) BufferGetPage(cbuf))->flags & GBT_F_LEAF) &&
			page_is_full(cbuf))
		{
			uint64		sep[GBT_MAX_KEY_WORDS],
						septid;
			Buffer		rbuf = split_page(index, buf, cbuf, nw, false, NULL, 0, sep, &septid);

			if (gbt_wentry_lt(key, tid, sep, septid, nw))
				UnlockReleaseBuffer(rbuf);
			else
			{
				UnlockReleaseBuffer(cbuf);
				cbuf = rbuf;
			}
		}
		if (BufferIsValid(pbuf))
			UnlockReleaseBuffer(pbuf);
		pbuf = buf;
		buf = cbuf;
	}
	if (BufferIsValid(pbuf))
		UnlockReleaseBuffer(pbuf);
	UnlockReleaseBuffer(buf);
	UnlockPage(index, GBT_META_BLKNO, ExclusiveLock);
}

void
gbt_wide_insert(Relation index, BlockNumber root, const uint64 *key, uint64 tid)
{
	int			nw = gbt_index_info(index)->nwords;
	Buffer		buf = gbt_wide_descend(index, root, nw, key, tid, false,
									   BUFFER_LOCK_EXCLUSIVE);
	bool		done = gbt_wide_leaf_insert_if_room(index, buf, key, tid);

	UnlockReleaseBuffer(buf);
	if (!done)
		gbt_wide_smo(index, root, key, tid, NULL, NULL);
}

/* whether the leaf already holds the entry (key, tid) */
static bool
leaf_holds(GbtNode *node, const uint64 *key, uint64 tid)
{
	int			s = gbt_node_next_used(node, gbt_node_lower_bound_entry_words(node, key, tid));

	if (s >= node->nslots || node->tids[s] != tid || node->keys[s] != key[0])
		return false;
	for (int k = 1; k < node->nwords; k++)
		if (node->xkeys[k - 1][s] != key[k])
			return false;
	return true;
}

/*
 * Merge an insert batch's entries (batch.c: nslots GbtEntry slots, each
 * entry gbt_wide_batch_slots of them) into the tree under root.  Sorted
 * first, they go in leaf by leaf: every entry that belongs in the locked
 * leaf and fits goes in under one generic WAL record, so a leaf costs one
 * page diff a flush instead of one an entry; an entry that meets a full
 * leaf goes in alone through the split path (gbt_wide_smo).  skip_present:
 * a flush failed midway before, so entries already in their leaf are
 * skipped.
 */
void
gbt_wide_insert_batch(Relation index, BlockNumber root, const uint64 *slots, Size nslots,
					  bool skip_present)
{
	int			nw = gbt_index_info(index)->nwords;
	Size		per = gbt_wide_batch_slots(nw) * 2;	/* words an entry takes */
	Size		n = nslots * 2 / per;
	int			stride = nw + 1;
	uint64	   *e = MemoryContextAllocHuge(CurrentMemoryContext,
										   sizeof(uint64) * stride * Max(n, 1));
	Size		i = 0;

	for (Size j = 0; j < n; j++)
		memcpy(&e[j * stride], &slots[j * per], sizeof(uint64) * stride);
	gbt_wide_sort_entries(e, n, nw);
	while (i < n)
	{
		const uint64 *first = &e[i * stride];
		Buffer		buf = gbt_wide_descend(index, root, nw, first, first[nw], false,
										   BUFFER_LOCK_EXCLUSIVE);
		Page		page = BufferGetPage(buf);
		GbtPageOpaque op = gbt_page_opaque((char *) page);
		bool		rightmost = (op->flags & GBT_F_RIGHTMOST) != 0;
		int			room;
		uint64		hk[GBT_MAX_KEY_WORDS],
					ht;
		GenericXLogState *state;
		GbtNode		node;
		int			added = 0;
		bool		failed = false;

		CHECK_FOR_INTERRUPTS();
		gbt_wide_page_bounds(page, true, hk, &ht);
		/* entries marked dead go before the merge clears their marks */
		gbt_leaf_reclaim_dead(index, buf);
		room = op->nslots - op->nused;
		if (room == 0)
		{
			bool		present;

			gbt_node_view((char *) page, &node);
			present = skip_present && leaf_holds(&node, first, first[nw]);
			UnlockReleaseBuffer(buf);
			if (!present)
				gbt_wide_smo(index, root, first, first[nw], NULL, NULL);
			i++;
			continue;
		}
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, buf, 0);
		gbt_node_view((char *) page, &node);
		gbt_leaf_clear_dead((char *) page);	/* the slots move */
		for (; i < n && room > 0; i++)
		{
			const uint64 *x = &e[i * stride];

			if (!rightmost && !gbt_wentry_lt(x, x[nw], hk, ht, nw))
				break;			/* its place is right of this leaf */
			if (skip_present && leaf_holds(&node, x, x[nw]))
				continue;
			if (gbt_node_insert_words(&node, x, x[nw], 0) < 0)
			{
				failed = true;
				break;
			}
			room--;
			added++;
		}
		if (failed && added == 0)
		{
			/* no room after all: this entry through the split path */
			GenericXLogAbort(state);
			UnlockReleaseBuffer(buf);
			gbt_wide_smo(index, root, &e[i * stride], e[i * stride + nw], NULL, NULL);
			i++;
			continue;
		}
		if (added > 0)
		{
			BlockNumber blkno = BufferGetBlockNumber(buf);

			GenericXLogFinish(state);
			gbt_gpu_note_changes(index, &blkno, 1, false);
		}
		else
			GenericXLogAbort(state);
		UnlockReleaseBuffer(buf);
	}
	pfree(e);
}

/*
 * gbtree_check of a multi-word tree (verify.c): each level left to right,
 * holding a page while its right sibling and its children are read (left
 * to right and parent to child, as writers lock): page checks, entries in
 * order within [low key, high key), each page's low key its left
 * sibling's high key and its left-link that sibling, each child one level
 * down with the downlink's key as its low key.  With heapallindexed,
 * every leaf entry is appended to *entries (stride nw + 1).
 */
static void
verify_fail(Relation index, BlockNumber blk, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" block %u: %s", RelationGetRelationName(index), blk, what)));
}

void
gbt_wide_verify(Relation index, BlockNumber root, uint64 **entries, Size *n, Size *cap)
{
	int			nw = gbt_index_info(index)->nwords;
	BlockNumber first = root;
	int			level = -1;
	uint64	   *keys = palloc(sizeof(uint64) * GBT_MAX_SLOT_WORDS);
	uint64	   *tids = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint32	   *child = palloc(sizeof(uint32) * GBT_MAX_SLOTS);

	for (;;)
	{
		BlockNumber blk = first,
					prev = GBT_NO_BLOCK;
		BlockNumber nextfirst = GBT_NO_BLOCK;
		uint64		prevhk[GBT_MAX_KEY_WORDS] = {0},
					prevht = 0;
		Buffer		buf = ReadBuffer(index, blk);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		for (;;)
		{
			Page		page;
			GbtNode		node;
			const char *err;
			uint64		lk[GBT_MAX_KEY_WORDS],
						lt,
						hk[GBT_MAX_KEY_WORDS],
						ht;
			bool		rightmost;
			int			k;
			Buffer		rbuf;

			CHECK_FOR_INTERRUPTS();
			gbt_wide_check_page(index, buf, nw);
			gbt_check_in_tree(index, buf, root);
			page = BufferGetPage(buf);
			gbt_node_view((char *) page, &node);
			if ((err = gbt_node_check(&node)) != NULL)
				verify_fail(index, blk, err);
			if (level < 0)
				level = node.opaque->level;
			if (node.opaque->level != level)
				verify_fail(index, blk, "page on a level it is not linked from");
			rightmost = (node.opaque->flags & GBT_F_RIGHTMOST) != 0;
			gbt_walk_bound_words(&node, false, lk, &lt);
			gbt_walk_bound_words(&node, true, hk, &ht);
			if (node.opaque->leftlink != prev)
				verify_fail(index, blk, "left-link is not the left sibling");
			if (prev != GBT_NO_BLOCK &&
				(gbt_words_cmp(lk, prevhk, nw) != 0 || lt != prevht))
				verify_fail(index, blk, "low key is not the left sibling's high key");
			k = gbt_node_extract(&node, keys, tids, node.child ? child : NULL);
			for (int i = 0; i < k; i++)
			{
				const uint64 *key = &keys[i * nw];

				if (i > 0 && !gbt_wentry_lt(&keys[(i - 1) * nw], tids[i - 1], key, tids[i], nw))
					verify_fail(index, blk, "entries out of order");
				if (!(level > 0 && prev == GBT_NO_BLOCK && i == 0) &&
					gbt_wentry_lt(key, tids[i], lk, lt, nw))
					verify_fail(index, blk, "entry below the page's low key");
				if (!rightmost && !gbt_wentry_lt(key, tids[i], hk, ht, nw))
					verify_fail(index, blk, "entry at or above the page's high key");
				if (level == 0 && entries)
				{
					if (*n == *cap)
					{
						*cap *= 2;
						*entries = repalloc_huge(*entries, *cap * (nw + 1) * sizeof(uint64));
					}
					memcpy(*entries + *n * (nw + 1), key, sizeof(uint64) * nw);
					(*entries)[*n * (nw + 1) + nw] = tids[i];
					(*n)++;
				}
				if (level > 0)
				{
					Buffer		cbuf;
					GbtNode		cnode;
					uint64		ck[GBT_MAX_KEY_WORDS],
								ct;

					if (child[i] < GBT_FIRST_FREE_BLKNO ||
						child[i] >= RelationGetNumberOfBlocks(index))
						verify_fail(index, blk, "an invalid downlink");
					cbuf = ReadBuffer(index, child[i]);
					LockBuffer(cbuf, BUFFER_LOCK_SHARE);
					gbt_wide_check_page(index, cbuf, nw);
					gbt_node_view((char *) BufferGetPage(cbuf), &cnode);
					gbt_walk_bound_words(&cnode, false, ck, &ct);
					if (cnode.opaque->level != level - 1)
						verify_fail(index, child[i], "child not one level below its parent");
					if (gbt_words_cmp(ck, key, nw) != 0 || ct != tids[i])
						verify_fail(index, child[i], "low key is not its downlink's key");
					UnlockReleaseBuffer(cbuf);
					if (nextfirst == GBT_NO_BLOCK)
						nextfirst = child[i];
				}
			}
			if (rightmost)
			{
				if (node.opaque->rightlink != GBT_NO_BLOCK)
					verify_fail(index, blk, "rightmost page with a right-link");
				UnlockReleaseBuffer(buf);
				break;
			}
			memcpy(prevhk, hk, sizeof(uint64) * nw);
			prevht = ht;
			prev = blk;
			rbuf = gbt_wide_lock_right_sibling(index, buf, nw, BUFFER_LOCK_SHARE);
			UnlockReleaseBuffer(buf);
			buf = rbuf;
			blk = BufferGetBlockNumber(buf);
		}
		if (level == 0)
			break;
		if (nextfirst == GBT_NO_BLOCK)
			verify_fail(index, first, "inner level with no downlink");
		first = nextfirst;
		level--;
	}
	pfree(keys);
	pfree(tids);
	pfree(child);
}
