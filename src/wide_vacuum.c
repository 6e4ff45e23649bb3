/*-------------------------------------------------------------------------
 *
 * wide_vacuum.c
 *	  Page deletion in trees of multi-word keys (gbtree_wide.h), for
 *	  vacuum.c's pass: an empty leaf unlinked as in one-word trees, its
 *	  right sibling taking its low key with all its words and its tail
 *	  (src/README, "Multi-word keys" and "VACUUM").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "gbtree_gpu.h"
#include "gbtree_wide.h"
#include "gbtree_xlog.h"

/*
 * Page deletion (vacuum.c's, here for trees of multi-word keys): the page
 * holding the downlink to page 'target' of level 'level', whose high key
 * is (hk, htail, ht), from root; exclusively locked with *slot set, or
 * InvalidBuffer; *leftmost says whether it is the leftmost page of its
 * level.  The caller holds the structure lock, so inner pages do not
 * change: the downlink sought is the last separator below the high key,
 * as a backward descent takes it.
 */
static Buffer
find_parent(Relation index, BlockNumber root, int nw, BlockNumber target, uint16 level,
			const uint64 *hk, GbtTail htail, uint64 ht, int *slot, bool *leftmost)
{
	BlockNumber blk = root;

	*leftmost = true;
	for (int hops = 0; hops < 1000000; hops++)
	{
		Buffer		buf = ReadBuffer(index, blk);
		Page		page;
		GbtPageOpaque op;
		GbtNode		node;
		int			s;

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		gbt_wide_check_page(index, buf, nw);
		page = BufferGetPage(buf);
		op = gbt_page_opaque((char *) page);
		if ((op->flags & (GBT_F_LEAF | GBT_F_DELETED)) || op->level <= level)
		{
			UnlockReleaseBuffer(buf);
			return InvalidBuffer;
		}
		if (gbt_wide_move_right(page, nw, hk, htail, ht, true))
		{
			blk = gbt_checked_rightlink(index, buf);
			*leftmost = false;
			UnlockReleaseBuffer(buf);
			continue;
		}
		gbt_node_view((char *) page, &node);
		s = gbt_node_prev_used(&node, node.toff ?
							   gbt_node_lower_bound_tail(&node, hk, htail.data, htail.len, ht) :
							   gbt_node_lower_bound_entry_words(&node, hk, ht));
		if (s < 0)
			s = gbt_node_first_used(&node);
		if (s < node.nslots && op->level == level + 1 && node.child[s] == target)
		{
			*slot = s;
			return buf;
		}
		if (s != gbt_node_first_used(&node))
			*leftmost = false;
		blk = s < node.nslots && op->level > level + 1 ? node.child[s] : GBT_NO_BLOCK;
		UnlockReleaseBuffer(buf);
		/* not as expected: leave the page be */
		if (blk == GBT_NO_BLOCK || blk < GBT_FIRST_FREE_BLKNO)
			return InvalidBuffer;
	}
	return InvalidBuffer;
}

/* page blk's special space in *op and its high key's words (not its tail) */
static void
high_key_of(Relation index, BlockNumber blk, int nw, GbtPageOpaqueData *op, uint64 *hk,
			uint64 *ht)
{
	Buffer		buf = ReadBuffer(index, blk);
	GbtNode		node;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	gbt_wide_check_page(index, buf, nw);
	*op = *gbt_page_opaque((char *) BufferGetPage(buf));
	gbt_node_view((char *) BufferGetPage(buf), &node);
	gbt_walk_bound_words(&node, true, hk, ht);
	UnlockReleaseBuffer(buf);
}

/*
 * Make page target, of level 'level' in the tree at root, not the last
 * child of its parent (vacuum.c, gbt_give_last_child): where it is, it
 * moves to its parent's right sibling, after its parent has been made not
 * the last child of its own, and so on up.  Trees of any word count; the
 * inner pages deleted on the way go to deleted[*ndeleted].  The caller
 * holds the structure-modification lock.
 */
bool
gbt_make_not_last(Relation index, BlockNumber root, int nw, BlockNumber target, uint16 level,
				  int depth, BlockNumber *deleted, int *ndeleted)
{
	Buffer		buf;
	GbtPageOpaqueData t;
	GbtNode		node;
	uint64		hk[GBT_MAX_KEY_WORDS],
				ht;
	GbtTail		none = {NULL, 0};
	bool		leftmost;
	int			sx;
	BlockNumber pblk,
				xdeleted;
	bool		moved;

	if (depth >= GBT_DELETE_MAX_LEVELS)
		return false;
	/* the parent is found by the target's high key (no tail: none has one) */
	high_key_of(index, target, nw, &t, hk, &ht);
	if ((t.flags & (GBT_F_DELETED | GBT_F_ROOT | GBT_F_RIGHTMOST | GBT_F_TAILS)) || t.level != level)
		return false;
	buf = find_parent(index, root, nw, target, level, hk, none, ht, &sx, &leftmost);
	if (!BufferIsValid(buf))
		return false;
	gbt_node_view((char *) BufferGetPage(buf), &node);
	if (gbt_node_next_used(&node, sx + 1) < node.nslots)
	{
		UnlockReleaseBuffer(buf);
		return true;
	}
	pblk = BufferGetBlockNumber(buf);
	UnlockReleaseBuffer(buf);

	/* the parent first, then the parent's parent gives the target away */
	if (!gbt_make_not_last(index, root, nw, pblk, level + 1, depth + 1, deleted, ndeleted))
		return false;
	high_key_of(index, pblk, nw, &t, hk, &ht);
	buf = find_parent(index, root, nw, pblk, level + 1, hk, none, ht, &sx, &leftmost);
	if (!BufferIsValid(buf))
		return false;
	moved = gbt_give_last_child(index, nw, buf, sx, leftmost, &xdeleted);
	if (BlockNumberIsValid(xdeleted))
		deleted[(*ndeleted)++] = xdeleted;
	return moved;
}

/*
 * Unlink the empty leaf blkno, as vacuum.c's delete_empty_leaf does in
 * one-word trees (src/README, "VACUUM"): its key range goes to its right
 * sibling, which takes its low key, words and tail; the parent's
 * downlink for the leaf leads to that sibling and the sibling's own goes;
 * the left sibling's right-link skips the leaf, which is marked deleted
 * with the next xid and keeps its right-link and high key, so a reader
 * that still arrives there moves right.  One generic WAL record of the
 * four pages.  A leaf that is its parent's last child moves first to the
 * parent's right sibling (gbt_make_not_last); the inner pages that takes
 * go to deleted[*ndeleted].  Quietly gives up (false) when the leaf is
 * not empty, cannot move, or its low key's tail does not fit the right
 * sibling.  The caller holds the structure lock.
 */
bool
gbt_wide_delete_leaf(Relation index, BlockNumber blkno, BlockNumber *deleted, int *ndeleted)
{
	int			nw = gbt_index_info(index)->nwords;
	Buffer		lbuf,
				pbuf,
				lsbuf = InvalidBuffer,
				rsbuf;
	GbtPageOpaqueData l;
	GbtNode		node;
	uint64		hk[GBT_MAX_KEY_WORDS],
				lk[GBT_MAX_KEY_WORDS],
				ht,
				lt;
	GbtTail		htail,
				ltail;
	unsigned char *hbytes,
			   *lbytes;
	int			sl = 0,
				sr;
	BlockNumber root;
	bool		leftmost;
	bool		ok = false;

	lbuf = ReadBuffer(index, blkno);
	LockBuffer(lbuf, BUFFER_LOCK_SHARE);
	gbt_wide_check_page(index, lbuf, nw);
	l = *gbt_page_opaque((char *) BufferGetPage(lbuf));
	if (!(l.flags & GBT_F_LEAF) || (l.flags & (GBT_F_DELETED | GBT_F_ROOT | GBT_F_RIGHTMOST)) ||
		l.nused > 0)
	{
		UnlockReleaseBuffer(lbuf);
		return false;
	}
	/* both bounds with copies of their tails */
	gbt_node_view((char *) BufferGetPage(lbuf), &node);
	gbt_walk_bound_tail(&node, true, hk, &htail, &ht);
	gbt_walk_bound_tail(&node, false, lk, &ltail, &lt);
	hbytes = palloc(htail.len + 1);
	lbytes = palloc(ltail.len + 1);
	memcpy(hbytes, htail.data, htail.len);
	memcpy(lbytes, ltail.data, ltail.len);
	htail.data = hbytes;
	ltail.data = lbytes;
	UnlockReleaseBuffer(lbuf);

	root = (l.flags & GBT_F_NULLTREE) ? GBT_NULLROOT_BLKNO : GBT_ROOT_BLKNO;
	pbuf = find_parent(index, root, nw, blkno, 0, hk, htail, ht, &sl, &leftmost);
	if (!BufferIsValid(pbuf))
		goto done;
	gbt_node_view((char *) BufferGetPage(pbuf), &node);
	sr = gbt_node_next_used(&node, sl + 1);
	if (sr >= node.nslots)
	{
		/* the leaf is its parent's last child: it moves first */
		UnlockReleaseBuffer(pbuf);
		if (!gbt_make_not_last(index, root, nw, blkno, 0, 0, deleted, ndeleted))
			goto done;
		pbuf = find_parent(index, root, nw, blkno, 0, hk, htail, ht, &sl, &leftmost);
		if (!BufferIsValid(pbuf))
			goto done;
		gbt_node_view((char *) BufferGetPage(pbuf), &node);
		sr = gbt_node_next_used(&node, sl + 1);
	}
	if (sr >= node.nslots || node.child[sr] != l.rightlink)
	{
		UnlockReleaseBuffer(pbuf);
		goto done;
	}

	/* lock order: parent, then leaves left to right */
	if (l.leftlink != GBT_NO_BLOCK)
	{
		lsbuf = ReadBuffer(index, l.leftlink);
		LockBuffer(lsbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_wide_check_page(index, lsbuf, nw);
	}
	lbuf = ReadBuffer(index, blkno);
	LockBuffer(lbuf, BUFFER_LOCK_EXCLUSIVE);
	gbt_wide_check_page(index, lbuf, nw);
	rsbuf = ReadBuffer(index, l.rightlink);
	LockBuffer(rsbuf, BUFFER_LOCK_EXCLUSIVE);
	gbt_wide_check_page(index, rsbuf, nw);

	/* bounds change only under the structure lock: the links say enough */
	{
		GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(lbuf));
		GbtPageOpaque rop = gbt_page_opaque((char *) BufferGetPage(rsbuf));

		ok = op->nused == 0 && !(op->flags & GBT_F_DELETED) &&
			op->rightlink == l.rightlink && op->leftlink == l.leftlink &&
			(rop->flags & GBT_F_LEAF) && !(rop->flags & GBT_F_DELETED) &&
			rop->leftlink == blkno &&
			(!BufferIsValid(lsbuf) ||
			 gbt_page_opaque((char *) BufferGetPage(lsbuf))->rightlink == blkno);
	}
	if (ok)
	{
		GbtGxlog   *state = gbt_gxlog_start(index);
		Page		pp = gbt_gxlog_register(state, pbuf, 0);
		Page		lp = gbt_gxlog_register(state, lbuf, 0);
		Page		rp = gbt_gxlog_register(state, rsbuf, 0);
		GbtNode		rnode;
		xl_gbt_delete_page x;

		/* one-word deletion's page changes, then the low key's later words */
		x.lowkey = lk[0];
		x.lowtid = lt;
		x.xact = U64FromFullTransactionId(ReadNextFullTransactionId());
		x.rightlink = l.rightlink;
		x.leftlink = l.leftlink;
		x.parent_slot = (uint16) sl;
		x.right_slot = (uint16) sr;
		gbt_node_view((char *) rp, &rnode);
		ok = gbt_node_set_bound_tail(&rnode, 1, ltail.data, ltail.len);
		if (ok)
		{
			gbt_page_unlink_right(rp, &x);
			for (int k = 1; k < nw; k++)
				rnode.xbounds[nw - 1 + k - 1] = lk[k];
			gbt_wide_set_lower(rp);
			gbt_page_unlink_parent(pp, &x);
			gbt_wide_set_lower(pp);
			gbt_page_unlink_leaf(lp, &x);
			if (BufferIsValid(lsbuf))
				gbt_page_unlink_left(gbt_gxlog_register(state, lsbuf, 0), &x);
			gbt_gxlog_finish(state);
			{
				BlockNumber changed[4] = {BufferGetBlockNumber(pbuf), blkno, l.rightlink,
				l.leftlink};

				gbt_gpu_note_changes(index, changed, BufferIsValid(lsbuf) ? 4 : 3, true);
			}
			GBT_CHECK_WRITTEN(index, pbuf, "a page deletion (parent)");
			GBT_CHECK_WRITTEN(index, rsbuf, "a page deletion (right sibling)");
		}
		else
			gbt_gxlog_abort(state);
	}
	UnlockReleaseBuffer(rsbuf);
	UnlockReleaseBuffer(lbuf);
	if (BufferIsValid(lsbuf))
		UnlockReleaseBuffer(lsbuf);
	UnlockReleaseBuffer(pbuf);
done:
	pfree(hbytes);
	pfree(lbytes);
	return ok;
}
