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
		s = gbt_node_prev_used(&node, gbt_node_lower_bound_tail(&node, hk, htail.data,
																  htail.len, ht));
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

/*
 * vacuum.c's delete_only_parent for trees of multi-word keys: inner page
 * xblk (no tails) deleted by gbt_give_only_child, its own parent first
 * where xblk is that parent's only child; the blocks deleted go to
 * deleted[*ndeleted].
 */
static bool
delete_only_parent(Relation index, BlockNumber root, int nw, BlockNumber xblk, int depth,
				   BlockNumber *deleted, int *ndeleted)
{
	Buffer		buf;
	GbtPageOpaqueData x;
	GbtNode		node;
	uint64		hk[GBT_MAX_KEY_WORDS],
				ht;
	GbtTail		htail = {NULL, 0};
	bool		leftmost;
	int			sx;
	BlockNumber done;

	if (depth >= GBT_DELETE_MAX_LEVELS)
		return false;
	buf = ReadBuffer(index, xblk);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	gbt_wide_check_page(index, buf, nw);
	x = *gbt_page_opaque((char *) BufferGetPage(buf));
	gbt_node_view((char *) BufferGetPage(buf), &node);
	gbt_walk_bound_words(&node, true, hk, &ht);
	UnlockReleaseBuffer(buf);
	if ((x.flags & (GBT_F_LEAF | GBT_F_DELETED | GBT_F_ROOT | GBT_F_RIGHTMOST | GBT_F_TAILS)) ||
		x.nused != 1)
		return false;
	buf = find_parent(index, root, nw, xblk, x.level, hk, htail, ht, &sx, &leftmost);
	if (!BufferIsValid(buf))
		return false;
	gbt_node_view((char *) BufferGetPage(buf), &node);
	if (gbt_node_next_used(&node, sx + 1) >= node.nslots && gbt_node_prev_used(&node, sx - 1) < 0)
	{
		/* X is its parent's only child: the parent goes first */
		BlockNumber gblk = BufferGetBlockNumber(buf);

		UnlockReleaseBuffer(buf);
		if (!delete_only_parent(index, root, nw, gblk, depth + 1, deleted, ndeleted))
			return false;
		buf = find_parent(index, root, nw, xblk, x.level, hk, htail, ht, &sx, &leftmost);
		if (!BufferIsValid(buf))
			return false;
	}
	done = gbt_give_only_child(index, nw, buf, sx, leftmost);
	if (!BlockNumberIsValid(done))
		return false;
	deleted[(*ndeleted)++] = done;
	return true;
}

/*
 * Unlink the empty leaf blkno, as vacuum.c's delete_empty_leaf does in
 * one-word trees (src/README, "VACUUM"): its key range goes to its right
 * sibling, which takes its low key, words and tail; the parent's
 * downlink for the leaf leads to that sibling and the sibling's own goes;
 * the left sibling's right-link skips the leaf, which is marked deleted
 * with the next xid and keeps its right-link and high key, so a reader
 * that still arrives there moves right.  One generic WAL record of the
 * four pages.  A leaf that is its parent's only child is first made one
 * of two by the parent's deletion (gbt_give_only_child); those inner
 * pages go to deleted[*ndeleted].  Quietly gives up (false) when the leaf
 * is not empty, is the last but not the only child of its parent, or its
 * low key's tail does not fit the right sibling.  The caller holds the
 * structure lock.
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
	if (sr >= node.nslots && gbt_node_prev_used(&node, sl - 1) < 0)
	{
		/* the leaf is its parent's only child: the parent goes first */
		BlockNumber pblk = BufferGetBlockNumber(pbuf);

		UnlockReleaseBuffer(pbuf);
		if (!delete_only_parent(index, root, nw, pblk, 0, deleted, ndeleted))
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
