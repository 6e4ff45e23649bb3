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
 * Page deletion (vacuum.c's, here for trees of multi-word keys): the
 * level-1 page holding the downlink to leaf, whose high key is (hk,
 * htail, ht), from root; exclusively locked with *slot set, or
 * InvalidBuffer.  The caller holds the structure lock, so inner pages do
 * not change: the downlink sought is the last separator below the high
 * key, as a backward descent takes it.
 */
static Buffer
find_parent(Relation index, BlockNumber root, int nw, BlockNumber leaf, const uint64 *hk,
			GbtTail htail, uint64 ht, int *slot)
{
	BlockNumber blk = root;

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
		if (op->flags & (GBT_F_LEAF | GBT_F_DELETED))
		{
			UnlockReleaseBuffer(buf);
			return InvalidBuffer;
		}
		if (gbt_wide_move_right(page, nw, hk, htail, ht, true))
		{
			blk = gbt_checked_rightlink(index, buf);
			UnlockReleaseBuffer(buf);
			continue;
		}
		gbt_node_view((char *) page, &node);
		s = gbt_node_prev_used(&node, gbt_node_lower_bound_tail(&node, hk, htail.data,
																  htail.len, ht));
		if (s < 0)
			s = gbt_node_first_used(&node);
		if (s < node.nslots && op->level == 1 && node.child[s] == leaf)
		{
			*slot = s;
			return buf;
		}
		blk = s < node.nslots && op->level > 1 ? node.child[s] : GBT_NO_BLOCK;
		UnlockReleaseBuffer(buf);
		/* not as expected: leave the leaf be */
		if (blk == GBT_NO_BLOCK || blk < GBT_FIRST_FREE_BLKNO)
			return InvalidBuffer;
	}
	return InvalidBuffer;
}

/*
 * Unlink the empty leaf blkno, as vacuum.c's delete_empty_leaf does in
 * one-word trees (src/README, "VACUUM"): its key range goes to its right
 * sibling, which takes its low key, words and tail; the parent's
 * downlink for the leaf leads to that sibling and the sibling's own goes;
 * the left sibling's right-link skips the leaf, which is marked deleted
 * with the next xid and keeps its right-link and high key, so a reader
 * that still arrives there moves right.  One generic WAL record of the
 * four pages.  Quietly gives up (false) when the leaf is not empty, is
 * the last child of its parent, or its low key's tail does not fit the
 * right sibling.  The caller holds the structure lock.
 */
bool
gbt_wide_delete_leaf(Relation index, BlockNumber blkno)
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

	pbuf = find_parent(index, (l.flags & GBT_F_NULLTREE) ? GBT_NULLROOT_BLKNO : GBT_ROOT_BLKNO,
					   nw, blkno, hk, htail, ht, &sl);
	if (!BufferIsValid(pbuf))
		goto done;
	gbt_node_view((char *) BufferGetPage(pbuf), &node);
	sr = gbt_node_next_used(&node, sl + 1);
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
