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
#include "gbtree_wpost.h"
#include "gbtree_xlog.h"

/* high (high) or low key of a page, all its words */
void
gbt_wide_page_bounds(Page page, bool high, uint64 *key, uint64 *tid)
{
	GbtNode		node;

	gbt_node_view((char *) page, &node);
	gbt_walk_bound_words(&node, high, key, tid);
}

/* the same with its tail, which points into the page */
static void
page_bound_tail(Page page, bool high, uint64 *key, GbtTail *tail, uint64 *tid)
{
	GbtNode		node;

	gbt_node_view((char *) page, &node);
	gbt_walk_bound_tail(&node, high, key, tail, tid);
}

/* must a descent for (key, tail, tid) go right of this page? (gbt_must_move_right) */
bool
gbt_wide_move_right(Page page, int nw, const uint64 *key, GbtTail tail, uint64 tid,
					bool backward)
{
	GbtPageOpaque op = gbt_page_opaque((char *) page);
	uint64		hk[GBT_MAX_KEY_WORDS],
				ht;
	GbtTail		htail;

	if (op->flags & GBT_F_DELETED)
		return true;
	if (op->flags & GBT_F_RIGHTMOST)
		return false;
	page_bound_tail(page, true, hk, &htail, &ht);
	if (backward)
		return gbt_tentry_cmp(hk, htail, ht, key, tail, tid, nw) < 0;
	return gbt_tentry_cmp(key, tail, tid, hk, htail, ht, nw) >= 0;
}

/*
 * Is this low key a level's minus infinity, (zero words, TID 0)?  No
 * entry has TID 0; the tail, where a page has one, is below every other.
 */
static bool
minus_inf(const uint64 *key, uint64 tid, int nw)
{
	if (tid != 0)
		return false;
	for (int k = 0; k < nw; k++)
		if (key[k] != 0)
			return false;
	return true;
}

/* an ERRCODE_INDEX_CORRUPTED error naming what the page has */
gbt_noreturn void
gbt_wide_report_inconsistent(Relation index, Buffer buf, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" has %s at block %u",
					RelationGetRelationName(index), what, BufferGetBlockNumber(buf)),
			 errhint("Please REINDEX it.")));
}

/* whether used slot s holds these words and this tail, byte for byte */
static bool
slot_is(const GbtNode *node, int s, const uint64 *key, GbtTail tail)
{
	GbtTail		t = gbt_node_slot_tail(node, s);

	if (node->keys[s] != key[0] || t.len != tail.len ||
		(tail.len > 0 && memcmp(t.data, tail.data, tail.len) != 0))
		return false;
	for (int k = 1; k < node->nwords; k++)
		if (node->xkeys[k - 1][s] != key[k])
			return false;
	return true;
}

/*
 * The child of a locked inner page to descend to for (key, tail, tid): the
 * last downlink whose separator lies below the target, or (forward) at it.
 * A separator equal to the target, words, tail and TID, starts the page
 * that holds it: the right page's first entry when its leaf split, or a
 * build's leaf bound, removed since and its key written again at the TID
 * VACUUM freed.  A forward descent could also take the page before and
 * move right, but the structure change does not move right.
 */
static BlockNumber
inner_child(Relation index, Buffer buf, const uint64 *key, GbtTail tail, uint64 tid,
			bool backward)
{
	GbtNode		node;
	int			s;
	BlockNumber child;

	gbt_node_view((char *) BufferGetPage(buf), &node);
	s = gbt_node_next_used(&node, gbt_node_lower_bound_tail(&node, key, tail.data, tail.len, tid));
	if (backward || s >= node.nslots || node.tids[s] != tid ||
		!slot_is(&node, s, key, tail))
		s = gbt_node_prev_used(&node, s);
	if (s < 0)
		s = gbt_node_first_used(&node);
	if (s >= node.nslots)
		gbt_wide_report_inconsistent(index, buf, "an empty inner page");
	child = node.child[s];
	if (child == GBT_NO_BLOCK || child < GBT_FIRST_FREE_BLKNO)
		gbt_wide_report_inconsistent(index, buf, "an invalid downlink");
	return child;
}

/*
 * The leaf holding the first entry >= (key, tid) (forward) or the last
 * entry < (key, tid) (backward), pinned and locked in leaflock mode; as
 * gbt_descend.
 */
Buffer
gbt_wide_descend(Relation index, BlockNumber root, int nw, const uint64 *key, GbtTail tail,
				 uint64 tid, bool backward, int leaflock)
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
		GbtTail		ltail;

		CHECK_FOR_INTERRUPTS();
		gbt_wide_check_page(index, buf, nw);
		page = BufferGetPage(buf);
		op = gbt_page_opaque((char *) page);
		gbt_check_in_tree(index, buf, root);
		if ((op->flags & GBT_F_META) ||
			(expect_level >= 0 && op->level != expect_level) || ++hops > 1000000)
			gbt_wide_report_inconsistent(index, buf, "an inconsistent tree");
		if (gbt_wide_move_right(page, nw, key, tail, tid, backward))
		{
			BlockNumber next = gbt_checked_rightlink(index, buf);

			expect_level = op->level;
			UnlockReleaseBuffer(buf);
			buf = ReadBuffer(index, next);
			LockBuffer(buf, mode);
			continue;
		}
		/* a page that starts above the target was reached by a bad link */
		page_bound_tail(page, false, lk, &ltail, &lt);
		if (!minus_inf(lk, lt, nw) && gbt_tentry_cmp(key, tail, tid, lk, ltail, lt, nw) < 0)
			gbt_wide_report_inconsistent(index, buf, "a page reached by a search for a key below its low key");
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
		child = inner_child(index, buf, key, tail, tid, backward);
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


/*
 * Room in the locked page for an entry with this tail: a free slot, and
 * for a tail its bytes, or a page of words alone that can become tailed
 * (gbt_node_to_tails).
 */
bool
gbt_wide_page_has_room(Page page, GbtTail tail)
{
	GbtNode		node;
	bool		leaf;

	gbt_node_view((char *) page, &node);
	if (node.opaque->nused >= node.nslots)
		return false;
	if (tail.len == 0)
		return true;
	leaf = (node.opaque->flags & GBT_F_LEAF) != 0;
	if (!node.toff)
		return node.opaque->nused < gbt_tail_slots(leaf, false);	/* gbt_node_to_tails */
	return gbt_tail_space(tail.len) <= gbt_node_tail_room(&node);
}

/*
 * Room in the locked leaf for the entry (key, tail, tid) to go in in place:
 * gbt_wide_page_has_room, and not where that would shift many slots under generic
 * WAL (gbt_leaf_crowded): such a leaf splits instead.
 */
static bool
leaf_takes(Relation index, Page page, const uint64 *key, GbtTail tail, uint64 tid)
{
	if (gbt_page_is_posting((char *) page))
		return tail.len == 0 &&
			gbt_wide_posting_takes(page, gbt_page_words(page), key, tid);
	return gbt_wide_page_has_room(page, tail) && !gbt_leaf_crowded(index, page, key, tid);
}

/*
 * Is the inner page full for the structure change?  Without tails_ready,
 * when it has no free slot.  With it, also when a separator with the
 * longest tail would not fit (the tailed page lacks the bytes, or the page
 * of words alone has more entries than a tailed page holds).
 */
static bool
inner_is_full(Buffer buf, bool tails_ready)
{
	static const unsigned char longest[GBT_TAIL_HIGHEST_LEN];
	GbtNode		node;

	gbt_node_view((char *) BufferGetPage(buf), &node);
	if (!tails_ready)
		return node.opaque->nused >= node.nslots;
	return !gbt_wide_page_has_room(BufferGetPage(buf),
						  (GbtTail) {longest, gbt_tail_max(node.nwords)});
}

/*
 * Put (key, tail, tid) into the page node views (gbt_wide_page_has_room said yes),
 * making a page of words alone tailed first when the entry has a tail;
 * false if it does not fit after all.
 */
bool
gbt_wide_node_put(Page page, GbtNode *node, const uint64 *key, GbtTail tail, uint64 tid, uint32 child)
{
	if (tail.len > 0 && !node->toff)
	{
		if (!gbt_node_to_tails((char *) page))
			return false;
		gbt_node_view((char *) page, node);
	}
	return gbt_node_insert_tail(node, key, tail.data, tail.len, tid, child) >= 0;
}

/*
 * Insert (key, tail, tid) into the page under generic WAL (node_put);
 * false (nothing written) if it does not fit.
 */
static bool
insert_logged(Relation index, Buffer buf, const uint64 *key, GbtTail tail, uint64 tid,
			  uint32 child)
{
	GbtGxlog   *state;
	Page		page;
	GbtNode		node;

	if (!gbt_wide_page_has_room(BufferGetPage(buf), tail))
		return false;
	state = gbt_gxlog_start(index);
	page = gbt_gxlog_register(state, buf, 0);
	gbt_node_view((char *) page, &node);
	if (node.opaque->flags & GBT_F_LEAF)
		gbt_leaf_clear_dead((char *) page);	/* the slots move */
	if (!gbt_wide_node_put(page, &node, key, tail, tid, child))
	{
		gbt_gxlog_abort(state);
		return false;
	}
	gbt_wide_set_lower(page);
	gbt_gxlog_hint_node(state, buf, page, &node);
	gbt_gxlog_finish(state);
	GBT_CHECK_WRITTEN(index, buf, "an insert");
	return true;
}

/* Insert into the exclusively locked leaf if it has room. */
bool
gbt_wide_leaf_insert_if_room(Relation index, Buffer buf, const uint64 *key, GbtTail tail,
							 uint64 tid)
{
	/*
	 * Entries marked dead go first (nbtree's simple deletion, vacuum.c):
	 * the insert would clear their marks, and the next dead find would
	 * cost a heap visit again.
	 */
	if (gbt_page_is_posting((char *) BufferGetPage(buf)))
		return tail.len == 0 &&
			gbt_wide_posting_insert(index, buf,
									gbt_page_words(BufferGetPage(buf)),
									key, tid);
	gbt_leaf_reclaim_dead(index, buf);
	if (!leaf_takes(index, BufferGetPage(buf), key, tail, tid))
		return false;
	/* with gbtree's resource manager, its own small record */
	if (!gbt_wal_insert_words_inplace(index, buf, key, tail, tid))
	{
		if (!insert_logged(index, buf, key, tail, tid, 0))
			return false;
	}
	else
		GBT_CHECK_WRITTEN(index, buf, "an insert in place");
	/* a device copy ships the leaf before its next lookup */
	{
		BlockNumber blkno = BufferGetBlockNumber(buf);

		gbt_gpu_note_changes(index, &blkno, 1, false);
	}
	return true;
}

/* cut a copy of the page (and the new entry) into ws's images */
static void
split_images(Relation index, Buffer buf, WideSplit *ws, const uint64 *key, GbtTail tail,
			 uint64 tid, int leftpct)
{
	/* leftpct 0: halves; else the new entry goes on an ascending run */
	GbtNode		rnode;

	if (gbt_page_is_posting((char *) BufferGetPage(buf)))
	{
		gbt_wide_posting_split_images(BufferGetPage(buf),
									  gbt_page_words(BufferGetPage(buf)),
									  ws, key, tail, tid, leftpct > 0 ? leftpct : 50);
		return;
	}

	memcpy(ws->old.data, BufferGetPage(buf), BLCKSZ);
	/* zeros where the node layer writes nothing, as PageInit leaves them */
	memset(ws->left.data, 0, BLCKSZ);
	memset(ws->right.data, 0, BLCKSZ);
	ws->placed = gbt_node_split(ws->old.data, key, tail, tid, 0, leftpct > 0 ? leftpct : 50,
								leftpct > 0, ws->left.data, ws->right.data);
	if (ws->placed < 0)
		gbt_wide_report_inconsistent(index, buf, "a full page with fewer than two entries");
	gbt_node_view(ws->right.data, &rnode);
	gbt_walk_bound_tail(&rnode, false, ws->sep, &ws->septail, &ws->septid);
}

/* an image's body and special space into a page, keeping its header */
void
gbt_wide_put_body(Page page, const char *img)
{
	memcpy((char *) page + GBT_BODY_OFFSET, img + GBT_BODY_OFFSET, BLCKSZ - GBT_BODY_OFFSET);
	gbt_wide_set_lower(page);
}

/* a split's images into the left page lp and the new right page rp, linked */
void
gbt_wide_put_halves(Page lp, Page rp, const WideSplit *ws, BlockNumber lblk, BlockNumber rblk)
{
	PageInit(rp, BLCKSZ, GBT_OPAQUE_SIZE);
	gbt_wide_put_body(lp, ws->left.data);
	gbt_wide_put_body(rp, ws->right.data);
	gbt_page_opaque((char *) lp)->rightlink = rblk;
	gbt_page_opaque((char *) rp)->leftlink = lblk;
}

/*
 * The downlink (sep, septail, septid) to the new page rblk into the copy
 * pp of the locked parent pbuf, whose room the split checked: an error
 * (nothing logged: the change is not finished) if it has none after all.
 */
void
gbt_wide_put_downlink(Relation index, Buffer pbuf, Page pp, const uint64 *sep, GbtTail septail,
					  uint64 septid, BlockNumber rblk)
{
	GbtNode		node;

	gbt_node_view((char *) pp, &node);
	if (!gbt_wide_node_put(pp, &node, sep, septail, septid, rblk))
		gbt_wide_report_inconsistent(index, pbuf, "a parent page with no room for a downlink");
	gbt_wide_set_lower(pp);
}

/* the old right sibling of a page being split, locked; none at the end */
Buffer
gbt_wide_lock_old_right(Relation index, BlockNumber rightlink, int nw)
{
	Buffer		sbuf;

	if (rightlink == GBT_NO_BLOCK)
		return InvalidBuffer;
	sbuf = ReadBuffer(index, rightlink);
	LockBuffer(sbuf, BUFFER_LOCK_EXCLUSIVE);
	gbt_wide_check_page(index, sbuf, nw);
	return sbuf;
}

/*
 * The end of a split's record: the downlink (sep, septail, septid) to the
 * new right page rbuf (rp its registered copy) put into the parent pp
 * (pbuf's), the old right sibling sbuf (if any) linked back to it, the
 * record written (lg: its WSPLIT data, NULL under generic WAL) and the
 * GPU's copy told; sbuf released.
 */
static void
finish_split(Relation index, GbtWal *w, GbtWsplitLog *lg, Buffer pbuf, Page pp, Buffer buf,
			 Buffer rbuf, Page rp, Buffer sbuf, const uint64 *sep, GbtTail septail,
			 uint64 septid)
{
	BlockNumber rblk = BufferGetBlockNumber(rbuf);
	BlockNumber changed[4] = {BufferGetBlockNumber(pbuf), BufferGetBlockNumber(buf), rblk,
	BufferIsValid(sbuf) ? BufferGetBlockNumber(sbuf) : InvalidBlockNumber};

	gbt_wide_put_downlink(index, pbuf, pp, sep, septail, septid, rblk);
	if (BufferIsValid(sbuf))
	{
		Page		sp = gbt_wal_register(w, sbuf, 0);

		gbt_page_opaque((char *) sp)->leftlink = rblk;
	}
	gbt_wsplit_finish(w, lg, rp, sep, septail, septid);
	gbt_wal_finish(w, XLOG_GBT_WSPLIT);
	gbt_wsplit_free(lg);
	gbt_gpu_note_changes(index, changed, BufferIsValid(sbuf) ? 4 : 3, true);
	if (BufferIsValid(sbuf))
		UnlockReleaseBuffer(sbuf);
}


/* whether keys a and b have the same first column (its null bit too) */
static inline bool
same_first_column(const GbtIndexInfo *info, const uint64 *a, const uint64 *b)
{
	return gbt_words_prefix_cmp(a, b, info->shape.col[0].bits +
								(info->shape.nullbits ? 1 : 0)) == 0;
}

/*
 * The used entries of node below (key, tid): their number, with *last
 * the slot of the last of them (-1: none).
 */
static int
entries_below(const GbtNode *node, const uint64 *key, uint64 tid, int *last)
{
	uint64		pk[GBT_MAX_KEY_WORDS];
	int			n = 0;

	*last = -1;
	for (int s = gbt_node_next_used(node, 0); s < node->nslots;
		 s = gbt_node_next_used(node, s + 1))
	{
		gbt_walk_slot_words(node, s, pk);
		if (!gbt_wentry_lt(pk, node->tids[s], key, tid, node->nwords))
			break;
		n++;
		*last = s;
	}
	return n;
}

/*
 * The share (percent) of entries a split of the full leaf node views
 * leaves on the left when (key, tid) comes into it, as nbtree's
 * _bt_afternewitemoff decides for composite indexes: an entry that
 * follows one of the same first column (and not the same key), of the
 * heap TID just before its own, looks like one of a run of ascending
 * inserts inside a group, as an index on (tenant, ts) takes them.  The
 * split then goes right after it, or at the fill factor if that lies
 * further left (the caller's Min), so the group's leaves fill as a rightmost leaf does
 * rather than by halves, the page that ends with the entry packed
 * (gbt_node_split).  0 (halves) otherwise, and for entries with tails.  nbtree does without the heap TID test for an entry after every
 * other, but then splits where the first column changes nearby.
 */
static int
split_share(Relation index, const GbtNode *node, const uint64 *key, uint64 tid)
{
	GbtIndexInfo *info = gbt_index_info(index);
	int			n = node->opaque->nused,
				before,
				prev;
	uint64		pk[GBT_MAX_KEY_WORDS];

	if (info->nkeycols < 2 || node->toff != NULL)
		return 0;
	before = entries_below(node, key, tid, &prev);
	if (prev < 0)
		return 0;
	gbt_walk_slot_words(node, prev, pk);
	if (!same_first_column(info, pk, key) ||
		gbt_words_prefix_cmp(pk, key, info->keybits) == 0 ||
		!gbt_tid_follows(node->tids[prev], tid))
		return 0;
	return ((before + 1) * 100 + n) / (n + 1);
}

/*
 * Split the locked page in buf, whose locked parent pbuf is to take the
 * downlink, adding (key, tail, tid) to it when key is not NULL (a full
 * leaf).  Returns the new right page, locked, with ws holding the
 * separator and whether the new entry went in (ws->placed 0: insert it
 * again); InvalidBuffer, nothing written, if the parent has no room for
 * the separator (its tail).
 */
static Buffer
split_page(Relation index, Buffer pbuf, Buffer buf, int nw, WideSplit *ws, const uint64 *key,
		   GbtTail tail, uint64 tid, bool may_recycle)
{
	GbtPageOpaqueData old = *gbt_page_opaque((char *) BufferGetPage(buf));
	bool		leaf = (old.flags & GBT_F_LEAF) != 0;
	int			leftpct = 0;	/* halves */
	Buffer		rbuf,
				sbuf = InvalidBuffer;
	BlockNumber rblk;
	GbtWal	   *w;
	GbtWsplitLog *lg;
	Page		lp,
				rp,
				pp;
	GbtNode		node;
	bool		cut = false;	/* the page keeps its entries in place */

	if (leaf && gbt_page_is_posting((char *) BufferGetPage(buf)))
		return gbt_wide_posting_split(index, pbuf, buf, nw, ws, key, tail, tid, may_recycle);

	/*
	 * Halves, except where keys arrive in ascending order at the end of the
	 * tree (there the left page keeps the fill factor's share, as nbtree's
	 * rightmost splits do) or of a group (split_share).  Cut right after
	 * the group's new entry, the page keeps the entries below it where they
	 * are (gbt_node_cut_split).
	 */
	if (leaf && key && !(old.flags & GBT_F_RIGHTMOST))
	{
		GbtNode		onode;
		int			ff = gbt_get_fillfactor(index);

		gbt_node_view((char *) BufferGetPage(buf), &onode);
		leftpct = split_share(index, &onode, key, tid);
		cut = leftpct > 0 && leftpct <= ff && tail.len == 0;
		leftpct = Min(leftpct, ff);
	}
	else if (leaf && key)
	{
		GbtNode		onode;
		int			last;

		gbt_node_view((char *) BufferGetPage(buf), &onode);
		last = gbt_node_last_used(&onode);
		if (last >= 0)
		{
			uint64		lk[GBT_MAX_KEY_WORDS];

			gbt_walk_slot_words(&onode, last, lk);
			if (gbt_tentry_cmp(lk, gbt_node_slot_tail(&onode, last), onode.tids[last],
							   key, tail, tid, nw) < 0)
				leftpct = gbt_get_fillfactor(index);
		}
	}
	if (cut)
	{
		GbtNode		rnode;

		memcpy(ws->left.data, BufferGetPage(buf), BLCKSZ);
		memset(ws->right.data, 0, BLCKSZ);
		cut = gbt_node_cut_split(ws->left.data, key, &tid, 1, ws->right.data);
		if (cut)
		{
			ws->placed = 1;
			gbt_node_view(ws->right.data, &rnode);
			gbt_walk_bound_tail(&rnode, false, ws->sep, &ws->septail, &ws->septid);
		}
	}
	if (!cut)
		split_images(index, buf, ws, key, tail, tid, leftpct);
	if (!gbt_wide_page_has_room(BufferGetPage(pbuf), ws->septail))
		return InvalidBuffer;

	rbuf = gbt_new_buffer(index, may_recycle);
	rblk = BufferGetBlockNumber(rbuf);
	sbuf = gbt_wide_lock_old_right(index, old.rightlink, nw);

	/* the record gives the split's input, which redo cuts the page by again */
	if (cut)
		lg = gbt_wsplit_start(nw, GBT_WSPLIT_CUT, 0, false, 1, key, &tid, GBT_NO_TAIL, 0);
	else
		lg = gbt_wsplit_start(nw, GBT_WSPLIT_HALVES, leftpct > 0 ? leftpct : 50, leftpct > 0,
							  key ? 1 : 0, key, &tid, tail, 0);
	w = gbt_wal_start(index);
	/* a page cut in place changes in part: a delta (generic WAL) */
	lp = gbt_wal_register(w, buf, cut ? 0 : GBT_WAL_WHOLE);
	rp = gbt_wal_register(w, rbuf, GBT_WAL_NEW);
	pp = gbt_wal_register(w, pbuf, 0);

	gbt_wide_put_halves(lp, rp, ws, BufferGetBlockNumber(buf), rblk);
	gbt_node_view((char *) rp, &node);
	ws->septail = gbt_node_bound_tail(&node, 1);	/* the image's, copied */

	finish_split(index, w, lg, pbuf, pp, buf, rbuf, rp, sbuf, ws->sep, ws->septail, ws->septid);
	GBT_CHECK_WRITTEN(index, buf, "a split (left)");
	GBT_CHECK_WRITTEN(index, rbuf, "a split (right)");
	GBT_CHECK_WRITTEN(index, pbuf, "a split (parent)");
	/* the separator's tail, from the page now that the images are gone */
	gbt_node_view((char *) BufferGetPage(rbuf), &node);
	ws->septail = gbt_node_bound_tail(&node, 1);
	return rbuf;
}

/*
 * Split the full root in place: its entries go to two new pages, and the
 * root, one level up, points to them from minus infinity and the
 * separator.  The root stays locked.
 */
static void
split_root(Relation index, Buffer rootbuf, int nw, bool may_recycle)
{
	WideSplit  *ws = palloc(sizeof(WideSplit));
	GbtPageOpaqueData old = *gbt_page_opaque((char *) BufferGetPage(rootbuf));
	uint16		tree = old.flags & GBT_F_NULLTREE;
	Buffer		abuf,
				bbuf;
	GbtGxlog   *state;
	Page		rp,
				ap,
				bp;
	GbtNode		node;
	uint64		rkeys[2 * GBT_MAX_KEY_WORDS] = {0};
	uint64		rtids[2];
	uint32		rchild[2];
	GbtTail		rtails[2];
	bool		tailed;

	split_images(index, rootbuf, ws, NULL, GBT_NO_TAIL, 0, 50);
	abuf = gbt_new_buffer(index, may_recycle);
	bbuf = gbt_new_buffer(index, may_recycle);

	state = gbt_gxlog_start(index);
	rp = gbt_gxlog_register(state, rootbuf, GENERIC_XLOG_FULL_IMAGE);
	ap = gbt_gxlog_register(state, abuf, GENERIC_XLOG_FULL_IMAGE);
	bp = gbt_gxlog_register(state, bbuf, GENERIC_XLOG_FULL_IMAGE);

	PageInit(ap, BLCKSZ, GBT_OPAQUE_SIZE);
	PageInit(bp, BLCKSZ, GBT_OPAQUE_SIZE);
	gbt_wide_put_body(ap, ws->left.data);
	gbt_wide_put_body(bp, ws->right.data);
	gbt_page_opaque((char *) ap)->rightlink = BufferGetBlockNumber(bbuf);
	gbt_page_opaque((char *) bp)->leftlink = BufferGetBlockNumber(abuf);

	/* the root: minus infinity and the separator, a tail each if it has any */
	tailed = ws->septail.len > 0;
	gbt_wide_init_page(rp, false, old.level + 1,
					   tree | GBT_F_ROOT | GBT_F_RIGHTMOST | (tailed ? GBT_F_TAILS : 0), nw);
	memcpy(&rkeys[nw], ws->sep, sizeof(uint64) * nw);
	rtids[0] = 0;
	rtids[1] = ws->septid;
	rchild[0] = BufferGetBlockNumber(abuf);
	rchild[1] = BufferGetBlockNumber(bbuf);
	rtails[0] = tailed ? GBT_TAIL_LOWEST : GBT_NO_TAIL;
	rtails[1] = ws->septail;
	gbt_node_view((char *) rp, &node);
	if (tailed)
		gbt_node_load_tails(&node, 2, rkeys, rtids, rchild, rtails, true);
	else
		gbt_node_load_spread(&node, 2, rkeys, rtids, rchild, true);
	gbt_wide_set_lower(rp);
	gbt_gxlog_finish(state);
	{
		BlockNumber changed[3] = {BufferGetBlockNumber(rootbuf), BufferGetBlockNumber(abuf),
		BufferGetBlockNumber(bbuf)};

		gbt_gpu_note_changes(index, changed, 3, true);
	}
	GBT_CHECK_WRITTEN(index, rootbuf, "a root split (root)");
	GBT_CHECK_WRITTEN(index, abuf, "a root split (left)");
	GBT_CHECK_WRITTEN(index, bbuf, "a root split (right)");

	UnlockReleaseBuffer(abuf);
	UnlockReleaseBuffer(bbuf);
	pfree(ws);
}

/*
 * An insert batch's sorted entries, for the append split: e[i..n) (stride
 * nw + 2: words, TID, the tail's index << 16) remain to be placed.
 */
typedef struct WideAppend
{
	BlockNumber root;
	const uint64 *e;
	const GbtTail *tails;
	Size		i;
	Size		n;
	int			nw;
	int			fillfactor;
	BlockNumber fresh;			/* the last page an append split made */
	int			take;			/* entries the split places */
	bool		merge;			/* a merge split, else an append split */
	int			nleft;			/* a merge split's left part (0: merge_share's) */
	Relation	heap;			/* a unique index's table: its entries are checked */
	bool		slow;			/* the entry goes in alone, checked so */
} WideAppend;

/*
 * How many of the batch's entries from e[i] (at most limit) belong to the
 * leaf node views, before its high key, with no tails: the run a split of
 * it can take.
 */
static Size
run_in_leaf(const WideAppend *wa, Size i, const GbtNode *node, Size limit)
{
	int			nw = wa->nw;
	int			stride = nw + 2;
	bool		rightmost = (node->opaque->flags & GBT_F_RIGHTMOST) != 0;
	uint64		hk[GBT_MAX_KEY_WORDS],
				ht = 0;
	Size		j;

	if (!rightmost)
		gbt_walk_bound_words(node, true, hk, &ht);
	for (j = i; j < wa->n && j - i < limit; j++)
	{
		const uint64 *y = &wa->e[j * stride];

		if (wa->tails[y[nw + 1] >> 16].len > 0 ||
			(!rightmost && gbt_tentry_cmp(y, GBT_NO_TAIL, y[nw], hk, GBT_NO_TAIL, ht, nw) >= 0))
			break;
	}
	return j - i;
}

/*
 * The split path's insert of the entry alone, which checks nothing: a
 * unique index's entry goes in through its own check instead (batch_smo).
 */
static GbtWideLeafDo
unchecked_insert(WideAppend *wa)
{
	wa->take = 0;
	if (wa->heap == NULL)
		return GBT_WIDE_INSERT;
	wa->slow = true;
	return GBT_WIDE_NOTHING;
}

/*
 * gbt_wide_smo's action for the batch's entry e[i] (GBT_WIDE_APPEND,
 * wa->take entries from e[i]), when the run of entries that belong to
 * the leaf does not fit its free slots:
 *	- an append split when they go after the leaf's last entry, or the
 *	  leaf is the page the last append split made: a new page takes them,
 *	  as many as a built leaf holds (so a run of ascending keys, like a
 *	  COPY into an empty index, leaves its pages filled so and logs each
 *	  page once);
 *	- a merge split when they go among the leaf's entries: those and the
 *	  run, up to two built leaves' worth, are cut in halves, each page
 *	  written once, where a split of the leaf's own entries and then one
 *	  insert after another wrote both halves whole and then again in part.
 * Only on words-only leaves (not the root), for entries without tails;
 * otherwise the entry is inserted, splitting the leaf if full.
 */
static GbtWideLeafDo
append_at_leaf(Relation index, Buffer buf, void *arg)
{
	WideAppend *wa = (WideAppend *) arg;
	int			nw = wa->nw;
	const uint64 *x = &wa->e[wa->i * (nw + 2)];
	Page		page = BufferGetPage(buf);
	GbtNode		node;
	uint64		lk[GBT_MAX_KEY_WORDS];
	bool		fresh = BufferGetBlockNumber(buf) == wa->fresh;
	int			last,
				cap = Max(1, (int) gbt_fill_slots(gbt_leaf_slots_for(nw), wa->fillfactor)),
				room;
	Size		run,
				limit;

	wa->take = 0;
	/* the append split sets it again; declined, the page's free slots fill */
	wa->fresh = InvalidBlockNumber;
	gbt_node_view((char *) page, &node);
	if (BufferGetBlockNumber(buf) == wa->root || node.toff != NULL ||
		gbt_page_is_posting((char *) page))
		return unchecked_insert(wa);
	limit = node.nslots + 2 * cap;
	run = run_in_leaf(wa, wa->i, &node, limit);
	if (run == 0)
		return unchecked_insert(wa);
	/*
	 * After every entry?  (another backend may have put some on a fresh
	 * page.)  A leaf VACUUM emptied and kept (the last of its parent's) is
	 * merged into, never append-split: that would give it the
	 * run's first entry as its high key, which can equal its low key (a
	 * key written again at the TID VACUUM freed), leaving a page whose key
	 * range is empty and a parent with two equal separators.
	 */
	last = gbt_node_last_used(&node);
	wa->merge = last < 0;
	if (last >= 0)
	{
		gbt_walk_slot_words(&node, last, lk);
		wa->merge = gbt_tentry_cmp(lk, GBT_NO_TAIL, node.tids[last], x, GBT_NO_TAIL, x[nw],
								   nw) >= 0;
	}
	if (!(fresh && !wa->merge) && node.opaque->nused + run <= node.nslots)
		return unchecked_insert(wa);
	wa->nleft = 0;
	room = cap - node.opaque->nused;
	if (!wa->merge && !fresh && wa->heap == NULL && room > 0 &&
		(room >= cap / 4 ||
		 (run < limit && (run - room + cap - 1) / cap < (run + cap - 1) / cap)))
	{
		/*
		 * A run after the last entry of a leaf short of a built leaf's
		 * fill, like one that VACUUM thinned (a tenant whose old rows went,
		 * whose next tenant's did too), by a quarter of it or by enough
		 * that the run needs a page less: a merge split fills the leaf to
		 * the fill factor first and puts the rest on the new page.  An
		 * append split left that room empty and began a page for the run,
		 * whose last few entries then began another (measured: 300 rows a
		 * tenant after a VACUUM took 55 + 273 + 27 entries on three pages,
		 * not 273 + 82 on two).
		 */
		wa->merge = true;
		wa->nleft = cap;
		wa->take = Min(run, 2 * cap - node.opaque->nused);
	}
	else if (!wa->merge)
		wa->take = Min(run, cap);
	else if (2 * cap > node.opaque->nused)
		wa->take = Min(run, 2 * cap - node.opaque->nused);
	if (wa->heap != NULL)
	{
		/*
		 * A unique index's entries, checked against the leaf as it is (the
		 * split takes the leaf's entries and these, under its lock); the
		 * split takes those before the first that the leaf cannot settle.
		 */
		int			k;

		for (k = 0; k < wa->take; k++)
		{
			const uint64 *y = &wa->e[(wa->i + k) * (nw + 2)];

			if (!gbt_wide_unique_fits_leaf(index, wa->heap, page, y, GBT_NO_TAIL, y[nw]) ||
				(k > 0 && gbt_words_prefix_cmp(y, y - (nw + 2), gbt_index_info(index)->keybits) == 0))
				break;
		}
		wa->take = k;
	}
	return wa->take > 0 ? GBT_WIDE_APPEND : unchecked_insert(wa);
}

/*
 * Where a merge split of the leaf page and the run of n entries cuts
 * (gbt_node_merge_split's nleft; 0: halves).  As split_share: a run that
 * goes in between two entries of the leaf, after one of the same first
 * column as its own first and before one of another, is taken for a
 * group's ascending inserts (a COPY into an index on (tenant, ts)), and
 * the cut goes right after it, where the next group starts, so that the
 * group's next run finds a leaf to append after; within what two leaves
 * of cap entries hold.  The run's heap TIDs must ascend with its keys.
 */
static int
merge_share(Relation index, Page page, const uint64 *keys, const uint64 *tids, int n, int cap,
			bool *after_run)
{
	GbtIndexInfo *info = gbt_index_info(index);
	int			nw = info->nwords;
	int			below,
				prev,
				last,
				next,
				m,
				nleft;
	uint64		pk[GBT_MAX_KEY_WORDS];
	GbtNode		node;

	*after_run = false;
	if (info->nkeycols < 2)
		return 0;
	/* a run's rows came in the order of its keys, as a group's do */
	for (int i = 1; i < n; i++)
		if ((tids[i] >> 16) < (tids[i - 1] >> 16))	/* block, offset: no flags */
			return 0;
	gbt_node_view((char *) page, &node);
	/* between two entries of the leaf, none among the run's */
	below = entries_below(&node, keys, tids[0], &prev);
	if (prev < 0 || below == node.opaque->nused ||
		entries_below(&node, &keys[(n - 1) * nw], tids[n - 1], &last) != below)
		return 0;
	/* after one of the same first column, before one of another */
	gbt_walk_slot_words(&node, prev, pk);
	if (!same_first_column(info, pk, keys))
		return 0;
	next = gbt_node_next_used(&node, prev + 1);
	gbt_walk_slot_words(&node, next, pk);
	if (same_first_column(info, pk, &keys[(n - 1) * nw]))
		return 0;

	/*
	 * One entry (a batch of one row) is taken for a group's only as
	 * split_share takes it: cut after every such entry, many groups of few
	 * rows each kept a sparse page (1,000 tenants: 1.54x btree's pages).
	 */
	if (n == 1 && !gbt_tid_follows(node.tids[prev], tids[0]))
		return 0;
	m = node.opaque->nused + n;
	nleft = Max(Min(below + n, cap), m - cap);
	*after_run = nleft == below + n;
	return nleft;
}

/*
 * The split append_at_leaf chose, on the locked leaf in buf whose locked
 * parent pbuf has room for the downlink, with wa->take entries from e[i]:
 * an append split (the new right page takes them, and the leaf only its
 * new high key and links, so its record holds a few bytes of it) or a
 * merge split (both pages whole).  Returns the new page, locked.
 */
static Buffer
append_page(Relation index, Buffer pbuf, Buffer buf, WideAppend *wa, bool may_recycle)
{
	int			nw = wa->nw;
	int			stride = nw + 2;
	GbtPageOpaqueData old = *gbt_page_opaque((char *) BufferGetPage(buf));
	uint64	   *keys = palloc(sizeof(uint64) * nw * wa->take);
	uint64	   *tids = palloc(sizeof(uint64) * wa->take);
	PGAlignedBlock img;
	Buffer		rbuf,
				sbuf = InvalidBuffer;
	BlockNumber rblk;
	GbtWal	   *w;
	GbtWsplitLog *lg;
	Page		lp,
				rp,
				pp;
	GbtNode		node;
	uint64		sep[GBT_MAX_KEY_WORDS],
				septid;
	int			nleft = 0;
	bool		after_run = false;
	GbtWsplitKind kind = GBT_WSPLIT_APPEND;

	for (int k = 0; k < wa->take; k++)
	{
		memcpy(&keys[k * nw], &wa->e[(wa->i + k) * stride], sizeof(uint64) * nw);
		tids[k] = wa->e[(wa->i + k) * stride + nw];
	}
	if (!gbt_wide_page_has_room(BufferGetPage(pbuf), GBT_NO_TAIL))
		gbt_wide_report_inconsistent(index, pbuf, "a parent page with no room for a downlink");
	rbuf = gbt_new_buffer(index, may_recycle);
	rblk = BufferGetBlockNumber(rbuf);
	sbuf = gbt_wide_lock_old_right(index, old.rightlink, nw);

	/*
	 * A merge split cut right after the run keeps the leaf's entries below
	 * it in place (gbt_node_cut_split): the leaf's record is a delta, not
	 * its image.
	 */
	if (wa->merge && wa->nleft > 0)
		nleft = wa->nleft;
	else if (wa->merge)
		nleft = merge_share(index, BufferGetPage(buf), keys, tids, wa->take,
							Max(1, (int) gbt_fill_slots(gbt_leaf_slots_for(nw), wa->fillfactor)), &after_run);
	w = gbt_wal_start(index);
	lp = gbt_wal_register(w, buf, wa->merge && !after_run ? GBT_WAL_WHOLE : 0);
	rp = gbt_wal_register(w, rbuf, GBT_WAL_NEW);
	pp = gbt_wal_register(w, pbuf, 0);

	PageInit(rp, BLCKSZ, GBT_OPAQUE_SIZE);
	/* zeros where the node layer writes nothing, as PageInit leaves them */
	memset(img.data, 0, BLCKSZ);
	if (wa->merge && !(after_run && gbt_node_cut_split((char *) lp, keys, tids, wa->take, img.data)))
	{
		PGAlignedBlock limg;

		memset(limg.data, 0, BLCKSZ);
		gbt_node_merge_split((char *) lp, keys, tids, wa->take, nleft, limg.data, img.data);
		gbt_wide_put_body(lp, limg.data);
		kind = GBT_WSPLIT_MERGE;
	}
	else if (wa->merge)
	{
		gbt_wide_set_lower(lp);
		kind = GBT_WSPLIT_CUT;
	}
	else
		gbt_node_append_split((char *) lp, keys, tids, wa->take, img.data);
	lg = gbt_wsplit_start(nw, kind, nleft, false, wa->take, keys, tids, GBT_NO_TAIL, 0);
	gbt_wide_put_body(rp, img.data);
	gbt_page_opaque((char *) lp)->rightlink = rblk;
	gbt_page_opaque((char *) rp)->leftlink = BufferGetBlockNumber(buf);
	gbt_node_view((char *) rp, &node);
	gbt_walk_bound_words(&node, false, sep, &septid);

	finish_split(index, w, lg, pbuf, pp, buf, rbuf, rp, sbuf, sep, GBT_NO_TAIL, septid);
	GBT_CHECK_WRITTEN(index, buf, wa->merge ? "a merge split (left)" : "an append split (left)");
	GBT_CHECK_WRITTEN(index, rbuf, wa->merge ? "a merge split (right)" : "an append split (right)");
	GBT_CHECK_WRITTEN(index, pbuf, "an append or merge split (parent)");
	pfree(keys);
	pfree(tids);
	if (!wa->merge)
		wa->fresh = rblk;
	return rbuf;
}

static bool gbt_wide_insert_if_room(Relation index, BlockNumber root, const uint64 *key,
									GbtTail tail, uint64 tid);

/*
 * The structure change: under the structure lock, from the root down with
 * exclusive locks, split every full page on the way (each one's parent
 * then has room); at the leaf, action (NULL: insert) says what to do:
 * insert, splitting the leaf if it is full; only make room; or nothing.
 * A split whose separator carries a tail the parent cannot take, or that
 * could not place the new entry, starts over, with inner pages counted
 * full unless they can take any tail (tails_ready).
 */
void
gbt_wide_smo(Relation index, BlockNumber root, const uint64 *key, GbtTail tail, uint64 tid,
			 GbtWideLeafAction action, void *arg)
{
	int			nw = gbt_index_info(index)->nwords;
	bool		tails_ready = tail.len > 0;
	WideSplit  *ws = palloc(sizeof(WideSplit));
	bool		may_recycle;

	LockPage(index, GBT_META_BLKNO, ExclusiveLock);
	/* pages VACUUM deleted, unless a VACUUM pass is running (vacuum.c) */
	may_recycle = gbt_lock_recycling(index);
	for (int attempt = 0;; attempt++)
	{
		Buffer		buf,
					pbuf = InvalidBuffer;
		bool		again = false;

		/* (an entry with a tail meeting a posting leaf takes two splits) */
		if (attempt > 5)
			elog(ERROR, "gbtree: index \"%s\": no room made for an entry after %d splits",
				 RelationGetRelationName(index), attempt);
		buf = ReadBuffer(index, root);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		gbt_wide_check_page(index, buf, nw);
		if ((gbt_page_opaque((char *) BufferGetPage(buf))->flags & GBT_F_LEAF) ?
			!leaf_takes(index, BufferGetPage(buf), key, tail, tid) :
			inner_is_full(buf, tails_ready))
			split_root(index, buf, nw, may_recycle);
		for (;;)
		{
			GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));
			Buffer		cbuf;

			CHECK_FOR_INTERRUPTS();
			if (op->flags & GBT_F_LEAF)
			{
				GbtWideLeafDo todo = action ? action(index, buf, arg) : GBT_WIDE_INSERT;
				Buffer		rbuf;

				if (todo == GBT_WIDE_APPEND && BufferIsValid(pbuf))
				{
					UnlockReleaseBuffer(append_page(index, pbuf, buf, (WideAppend *) arg,
														may_recycle));
					break;
				}
				Assert(todo != GBT_WIDE_APPEND);
				if (todo == GBT_WIDE_INSERT &&
					gbt_wide_leaf_insert_if_room(index, buf, key, tail, tid))
					break;
				if (todo == GBT_WIDE_NOTHING ||
					(todo == GBT_WIDE_MAKE_ROOM &&
					 leaf_takes(index, BufferGetPage(buf), key, tail, tid)))
					break;
				if (!BufferIsValid(pbuf))
				{
					/* a root leaf with a free slot and no room for the tail */
					UnlockReleaseBuffer(buf);
					buf = InvalidBuffer;
					tails_ready = again = true;
					break;
				}
				/* a full plain leaf of duplicates takes the posting form */
				if (todo == GBT_WIDE_INSERT && tail.len == 0 &&
					gbt_wide_posting_instead_of_split(index, buf, nw, key, tid))
					break;
				rbuf = split_page(index, pbuf, buf, nw, ws,
								  todo == GBT_WIDE_INSERT ? key : NULL, tail, tid, may_recycle);
				if (!BufferIsValid(rbuf) || (todo == GBT_WIDE_INSERT && ws->placed == 0))
					tails_ready = again = true;
				if (BufferIsValid(rbuf))
					UnlockReleaseBuffer(rbuf);
				break;
			}
			cbuf = ReadBuffer(index, inner_child(index, buf, key, tail, tid, false));
			LockBuffer(cbuf, BUFFER_LOCK_EXCLUSIVE);
			gbt_wide_check_page(index, cbuf, nw);
			/* nothing splits but under the structure lock: no need to move right */
			if (gbt_wide_move_right(BufferGetPage(cbuf), nw, key, tail, tid, false))
				gbt_wide_report_inconsistent(index, cbuf, "a downlink to a page below the target");
			if (!(gbt_page_opaque((char *) BufferGetPage(cbuf))->flags & GBT_F_LEAF) &&
				inner_is_full(cbuf, tails_ready))
			{
				Buffer		rbuf = split_page(index, buf, cbuf, nw, ws, NULL, GBT_NO_TAIL, 0,
												  may_recycle);

				if (!BufferIsValid(rbuf))
				{
					/* the parent cannot take its tail: over again, readier */
					UnlockReleaseBuffer(cbuf);
					tails_ready = again = true;
					break;
				}
				if (gbt_tentry_cmp(key, tail, tid, ws->sep, ws->septail, ws->septid, nw) < 0)
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
		if (BufferIsValid(buf))
			UnlockReleaseBuffer(buf);
		if (!again)
			break;
		/* the entry goes in by a fresh descent, which may find room now */
		if (!action && gbt_wide_insert_if_room(index, root, key, tail, tid))
			break;
	}
	if (may_recycle)
		gbt_unlock_recycling(index);
	UnlockPage(index, GBT_META_BLKNO, ExclusiveLock);
	pfree(ws);
}

/* a descent to the leaf and an insert if it has room; false otherwise */
static bool
gbt_wide_insert_if_room(Relation index, BlockNumber root, const uint64 *key, GbtTail tail,
						uint64 tid)
{
	int			nw = gbt_index_info(index)->nwords;
	Buffer		buf = gbt_wide_descend(index, root, nw, key, tail, tid, false,
									   BUFFER_LOCK_EXCLUSIVE);
	bool		done = gbt_wide_leaf_insert_if_room(index, buf, key, tail, tid);

	UnlockReleaseBuffer(buf);
	return done;
}

void
gbt_wide_insert(Relation index, BlockNumber root, const uint64 *key, GbtTail tail, uint64 tid)
{
	if (!gbt_wide_insert_if_room(index, root, key, tail, tid))
		gbt_wide_smo(index, root, key, tail, tid, NULL, NULL);
}

/* whether the leaf already holds the entry (key, tail, tid) */
static bool
leaf_holds(GbtNode *node, const uint64 *key, GbtTail tail, uint64 tid)
{
	int			s = gbt_node_next_used(node, gbt_node_lower_bound_tail(node, key, tail.data,
																		tail.len, tid));

	return s < node->nslots && node->tids[s] == tid && slot_is(node, s, key, tail);
}

/*
 * The structure change for the batch's entry e[i], which met a full leaf
 * (or the page the last append split made): an append split of e[i] and
 * the entries after it, or e[i] alone through the split path.  Returns
 * how many entries it placed.  After a failed flush (skip_present) entries
 * may already be in the pages, so they go one by one.
 */
static Size
batch_smo(Relation index, WideAppend *wa, Size i, bool skip_present)
{
	int			nw = wa->nw;
	const uint64 *x = &wa->e[i * (nw + 2)];

	wa->i = i;
	wa->take = 0;
	wa->slow = false;
	if (wa->heap != NULL && skip_present)
		wa->slow = true;
	else
		gbt_wide_smo(index, wa->root, x, wa->tails[x[nw + 1] >> 16], x[nw],
					 skip_present ? NULL : append_at_leaf, wa);
	if (wa->slow)
	{
		gbt_wide_insert_unique(index, wa->heap, UNIQUE_CHECK_YES, wa->root, x,
							   wa->tails[x[nw + 1] >> 16], x[nw], NULL, NULL);
		return 1;
	}
	return wa->take > 0 ? wa->take : 1;
}


/*
 * Merge an insert batch's entries (batch.c: nslots GbtEntry slots, each
 * entry gbt_wide_batch_slots of them: words, TID, tail length and tail)
 * into the tree under root.  Sorted first by (words, tail, TID), they go in
 * leaf by leaf: every entry that belongs in the locked leaf and fits goes
 * in under one generic WAL record (a page of words alone becomes tailed
 * for the first entry with a tail), so a leaf costs one page diff a flush
 * instead of one an entry; an entry that meets a full leaf goes in alone
 * through the split path (gbt_wide_smo).  skip_present: a flush failed
 * midway before, so entries already in their leaf are skipped.
 */
void
gbt_wide_insert_batch(Relation index, Relation heap, BlockNumber root, const uint64 *slots,
					  Size nslots, bool skip_present)
{
	int			nw = gbt_index_info(index)->nwords;
	int			stride = nw + 2;	/* words, TID, the tail's index << 16 */
	const uint64 *in = slots;
	const uint64 *in_end = slots + nslots * 2;
	Size		n = 0;
	uint64	   *e;
	GbtTail    *tails;
	Size		ntails = 1;
	Size		i = 0;
	WideAppend	wa;
	bool		dedup;

	/* at most one entry a gbt_wide_batch_slots(nw, 0) slots */
	Size		maxn = nslots / gbt_wide_batch_slots(nw, 0);

	e = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint64) * stride * Max(maxn, 1));
	tails = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(GbtTail) * (maxn + 1));
	tails[0] = GBT_NO_TAIL;
	while (in < in_end)
	{
		int			tlen = (int) in[nw + 1];

		memcpy(&e[n * stride], in, sizeof(uint64) * (nw + 1));
		if (tlen > 0)
		{
			tails[ntails] = (GbtTail) {(const unsigned char *) &in[nw + 2], tlen};
			e[n * stride + nw + 1] = (uint64) ntails++ << 16;
		}
		else
			e[n * stride + nw + 1] = 0;
		n++;
		in += gbt_wide_batch_slots(nw, tlen) * 2;
	}
	if (n > 1)
	{
		uint64	   *scratch = MemoryContextAllocHuge(CurrentMemoryContext,
													 sizeof(uint64) * stride * n);
		size_t	   *hist = palloc(gbt_wsort_hist_size(nw + 1) * sizeof(size_t));

		gbt_tail_sort(e, scratch, n, nw, tails, hist);
		pfree(hist);
		pfree(scratch);
	}
	if (heap != NULL && n == 1 && !skip_present)
	{
		/* a one-row statement's: as an insert at once would go */
		gbt_wide_insert_unique(index, heap, UNIQUE_CHECK_YES, root, e, tails[e[nw + 1] >> 16],
							   e[nw], NULL, NULL);
		pfree(tails);
		pfree(e);
		return;
	}
	wa.root = root;
	wa.e = e;
	wa.tails = tails;
	wa.n = n;
	wa.nw = nw;
	wa.fillfactor = gbt_get_fillfactor(index);
	wa.fresh = InvalidBlockNumber;
	wa.nleft = 0;
	wa.heap = heap;
	dedup = gbt_wide_dedup(index, gbt_index_info(index));
	while (i < n)
	{
		const uint64 *first = &e[i * stride];
		GbtTail		ftail = tails[first[nw + 1] >> 16];
		Buffer		buf = gbt_wide_descend(index, root, nw, first, ftail, first[nw], false,
										   BUFFER_LOCK_EXCLUSIVE);
		Page		page = BufferGetPage(buf);
		GbtPageOpaque op = gbt_page_opaque((char *) page);
		bool		rightmost = (op->flags & GBT_F_RIGHTMOST) != 0;
		uint64		hk[GBT_MAX_KEY_WORDS],
					ht;
		GbtTail		htail;
		unsigned char *hbytes = NULL;
		GbtGxlog   *state;
		GbtNode		node;
		int			added = 0;
		bool		full = false;	/* entry i does not fit */
		bool		slow = false;	/* entry i goes in alone, checked so */
		bool		single;			/* the leaf's only entry of the batch */

		CHECK_FOR_INTERRUPTS();
		/* the high key with a copy of its tail (the page changes below) */
		page_bound_tail(page, true, hk, &htail, &ht);
		if (htail.len > 0)
		{
			hbytes = palloc(htail.len);
			memcpy(hbytes, htail.data, htail.len);
			htail.data = hbytes;
		}
		/* a posting leaf takes the batch's entries in one rewrite */
		if (gbt_page_is_posting((char *) page))
		{
			Size		took = gbt_wide_posting_batch(index, buf, nw, e, tails, stride, i, n,
													  hk, ht, rightmost, false);

			UnlockReleaseBuffer(buf);
			if (hbytes)
				pfree(hbytes);
			i += took > 0 ? took : batch_smo(index, &wa, i, skip_present);
			continue;
		}
		/* entries marked dead go before the merge clears their marks */
		gbt_leaf_reclaim_dead(index, buf);
		gbt_node_view((char *) page, &node);
		single = !skip_present &&
			(i + 1 == n || (!rightmost &&
							gbt_tentry_cmp(&e[(i + 1) * stride], tails[e[(i + 1) * stride + nw + 1] >> 16],
										   e[(i + 1) * stride + nw], hk, htail, ht, nw) >= 0));
		if (!gbt_wide_page_has_room(page, ftail) ||
			(single && gbt_leaf_crowded(index, page, first, first[nw])) ||
			(!skip_present && node.toff == NULL &&
			 (BufferGetBlockNumber(buf) == wa.fresh ||
			  run_in_leaf(&wa, i, &node, node.nslots - node.opaque->nused + 1) >
			  node.nslots - node.opaque->nused)))
		{
			bool		present = skip_present && leaf_holds(&node, first, ftail, first[nw]);
			Size		took = 0;

			/* a full leaf of duplicates takes the posting form instead */
			if (!present && dedup && node.toff == NULL && ftail.len == 0)
				took = gbt_wide_posting_batch(index, buf, nw, e, tails, stride, i, n, hk, ht,
											  rightmost, true);
			UnlockReleaseBuffer(buf);
			if (hbytes)
				pfree(hbytes);
			if (present)
				i++;
			else if (took > 0)
				i += took;
			else
				i += batch_smo(index, &wa, i, skip_present);
			continue;
		}
		/*
		 * The leaf's only entry of the batch (a one-row statement's goes
		 * here): in place, as an insert at once, so that with the resource
		 * manager its record is the entry, not a diff of the slots it
		 * shifted (four times btree's WAL for single-row inserts into an
		 * index on (tenant, ts)).
		 */
		if (single &&
			(heap == NULL || gbt_wide_unique_fits_leaf(index, heap, page, first, ftail, first[nw])) &&
			gbt_wal_insert_words_inplace(index, buf, first, ftail, first[nw]))
		{
			BlockNumber blkno = BufferGetBlockNumber(buf);

			GBT_CHECK_WRITTEN(index, buf, "a batch's insert in place");
			gbt_gpu_note_changes(index, &blkno, 1, false);
			UnlockReleaseBuffer(buf);
			if (hbytes)
				pfree(hbytes);
			i++;
			continue;
		}
		state = gbt_gxlog_start(index);
		page = gbt_gxlog_register(state, buf, 0);
		gbt_node_view((char *) page, &node);
		gbt_leaf_clear_dead((char *) page);	/* the slots move */
		for (; i < n; i++)
		{
			const uint64 *x = &e[i * stride];
			GbtTail		xtail = tails[x[nw + 1] >> 16];

			if (!rightmost && gbt_tentry_cmp(x, xtail, x[nw], hk, htail, ht, nw) >= 0)
				break;			/* its place is right of this leaf */
			if (skip_present && leaf_holds(&node, x, xtail, x[nw]))
				continue;
			if (heap != NULL && !gbt_wide_unique_fits_leaf(index, heap, page, x, xtail, x[nw]))
			{
				slow = true;
				break;
			}
			full = !gbt_wide_page_has_room(page, xtail) || !gbt_wide_node_put(page, &node, x, xtail, x[nw], 0);
			if (full)
				break;
			added++;
		}
		if (full && added == 0)
		{
			/* no room after all: the structure change */
			gbt_gxlog_abort(state);
			UnlockReleaseBuffer(buf);
			if (hbytes)
				pfree(hbytes);
			i += batch_smo(index, &wa, i, skip_present);
			continue;
		}
		if (added > 0)
		{
			BlockNumber blkno = BufferGetBlockNumber(buf);

			gbt_wide_set_lower(page);
			gbt_gxlog_hint_node(state, buf, page, &node);
			gbt_gxlog_finish(state);
			GBT_CHECK_WRITTEN(index, buf, "a batch's merge into a leaf");
			gbt_gpu_note_changes(index, &blkno, 1, false);
		}
		else
			gbt_gxlog_abort(state);
		UnlockReleaseBuffer(buf);
		if (hbytes)
			pfree(hbytes);
		if (slow)
		{
			const uint64 *x = &e[i * stride];

			gbt_wide_insert_unique(index, heap, UNIQUE_CHECK_YES, root, x, tails[x[nw + 1] >> 16],
								   x[nw], NULL, NULL);
			i++;
		}
	}
	pfree(tails);
	pfree(e);
}
