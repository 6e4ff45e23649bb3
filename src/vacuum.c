/*-------------------------------------------------------------------------
 *
 * vacuum.c
 *	  ambulkdelete and amvacuumcleanup for gbtree.
 *
 * Bulk delete visits every page in physical order and turns the entries
 * of dead heap tuples into gaps, one generic WAL record per changed leaf.
 * It takes a cleanup lock on each leaf, so it waits for scans that still
 * hold a pin on that leaf while returning its TIDs (the same interlock as
 * nbtree: a TID is not recycled under a scan that is about to visit it).
 *
 * During the pass VACUUM holds a share lock that keeps splits from
 * recycling free pages (gbt_lock_recycling), so a page a concurrent split
 * creates is at the end of the relation and a split can only move entries
 * to a block the pass has yet to reach; the pass repeats until the
 * relation stops growing.  Gaps are reused by later inserts into the same
 * key range.
 *
 * A leaf the pass leaves empty is unlinked right after it, while it is
 * still in VACUUM's buffer ring (as btvacuumpage does): the empty leaf's key
 * range goes to its right sibling (the parent's downlink for the leaf now
 * leads to the right sibling and the sibling's own downlink goes away),
 * so readers that still arrive at the deleted page simply move right, as
 * Lehman and Yao expect.  One generic WAL record of four pages: parent,
 * left sibling, the leaf, right sibling (multi-word trees: the same, by
 * gbt_wide_delete_leaf in wide_vacuum.c).  This runs under the
 * structure-modification lock.  The last child of a parent cannot go that
 * way (its right sibling has another parent): it moves to the parent's
 * right sibling first (gbt_give_last_child).  A deleted page is handed to
 * the FSM once no snapshot can still lead a scan to it (the xid horizon, as
 * nbtree does): at the end of the pass that deleted it if it is safe by
 * then (transactions got xids meanwhile), else by the next VACUUM; a later
 * split reuses it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtxlog.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_xlog.h"
#include "gbtree_wide.h"
#include "gbtree_wpost.h"

/*
 * Page changes shared with redo (wal.c): the same bytes when made and
 * when replayed.
 */

static int
cmp_slot_desc(const void *a, const void *b)
{
	return (int) *(const uint16 *) b - (int) *(const uint16 *) a;
}

/*
 * Turn the given slots of a leaf into gaps, in that order; in a posting
 * leaf, slots number its TIDs, and the leaf is rewritten without them
 * (in plain form once they fit it).
 */
void
gbt_page_delete_slots(Page page, const uint16 *slots, int n)
{
	GbtNode		node;

	if (gbt_page_is_posting((char *) page))
	{
		uint64	   *keys = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
		uint64	   *tids = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
		int			m = gbt_post_decode((char *) page, keys, tids);
		int			kept = 0;

		for (int i = 0; i < n; i++)
			if (slots[i] < m)
				tids[slots[i]] = GBT_SENTINEL;
		for (int i = 0; i < m; i++)
			if (tids[i] != GBT_SENTINEL)
			{
				keys[kept] = keys[i];
				tids[kept] = tids[i];
				kept++;
			}
		gbt_page_leaf_rewrite(page, kept, keys, tids, true);
		pfree(keys);
		pfree(tids);
		return;
	}
	gbt_page_view(page, &node);
	gbt_leaf_clear_dead((char *) page);
	for (int i = 0; i < n; i++)
		gbt_node_delete_slot(&node, slots[i]);
}

/* Page deletion: the leaf's downlink now leads to its right sibling, whose own goes. */
void
gbt_page_unlink_parent(Page ppage, const xl_gbt_delete_page *x)
{
	GbtNode		pnode;

	gbt_page_view(ppage, &pnode);
	gbt_node_delete_slot(&pnode, x->right_slot);
	pnode.child[x->parent_slot] = x->rightlink;
	for (int g = x->parent_slot - 1; g >= 0 && !gbt_slot_used(&pnode, g); g--)
		pnode.child[g] = x->rightlink;
}

void
gbt_page_unlink_leaf(Page lpage, const xl_gbt_delete_page *x)
{
	GbtPageOpaque op = gbt_page_opaque((char *) lpage);

	op->flags |= GBT_F_DELETED;
	op->xact = x->xact;
}

/* the right sibling takes the leaf's key range */
void
gbt_page_unlink_right(Page rspage, const xl_gbt_delete_page *x)
{
	GbtPageOpaque op = gbt_page_opaque((char *) rspage);

	op->leftlink = x->leftlink;
	op->lowkey = x->lowkey;
	op->lowtid = x->lowtid;
}

void
gbt_page_unlink_left(Page lspage, const xl_gbt_delete_page *x)
{
	gbt_page_opaque((char *) lspage)->rightlink = x->rightlink;
}

static void
vacuum_leaf(Relation index, Buffer buf, IndexBulkDeleteResult *stats,
			IndexBulkDeleteCallback callback, void *callback_state)
{
	Page		page = BufferGetPage(buf);
	GbtNode		node;
	int			dead[GBT_LEAF_MAX_ENTRIES];
	int			ndead = 0;
	int			live = 0;

	if (gbt_page_is_posting((char *) page) && gbt_page_opaque((char *) page)->keywords > 1)
	{
		/*
		 * A multi-word posting leaf (node_wpost.c): rewritten with its live
		 * entries, in whichever form they take, under generic WAL.
		 */
		int			nw = gbt_page_opaque((char *) page)->keywords;
		uint64	   *e = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES * (GBT_MAX_KEY_WORDS + 1));
		int			n = gbt_wpost_decode((char *) page, e);

		for (int i = 0; i < n; i++)
		{
			ItemPointerData tid;

			gbt_tid_to_itemptr(e[(Size) i * (nw + 1) + nw], &tid);
			if (callback && callback(&tid, callback_state))
				ndead++;
			else
				memmove(&e[(Size) live++ * (nw + 1)], &e[(Size) i * (nw + 1)],
						sizeof(uint64) * (nw + 1));
		}
		if (ndead > 0)
		{
			GbtGxlog   *g = gbt_gxlog_start(index);
			Page		wpage = gbt_gxlog_register(g, buf, 0);
			BlockNumber blkno = BufferGetBlockNumber(buf);

			gbt_wide_leaf_fill(wpage, nw, e, live);
			gbt_gxlog_finish(g);
			gbt_gpu_note_changes(index, &blkno, 1, false);
			stats->tuples_removed += ndead;
		}
		stats->num_index_tuples += live;
		pfree(e);
		return;
	}
	if (gbt_page_is_posting((char *) page))
	{
		GbtPost		p;

		gbt_post_view((char *) page, &p);
		for (int i = 0; i < p.hdr->nentries; i++)
		{
			ItemPointerData tid;

			gbt_tid_to_itemptr(gbt_post_tid(&p, i), &tid);
			if (callback && callback(&tid, callback_state))
				dead[ndead++] = i;
			else
				live++;
		}
	}
	else
	{
		gbt_page_view(page, &node);
		/* the used slots a bitmap word at a time (a call a slot was a fifth of it) */
		for (int w = 0; w < (node.nslots + 63) / 64; w++)
			for (uint64 bits = gbt_node_live_bits(&node, NULL, w, 0, node.nslots); bits != 0;
				 bits &= bits - 1)
			{
				int			s = (w << 6) + __builtin_ctzll(bits);
				ItemPointerData tid;

				gbt_tid_to_itemptr(node.tids[s], &tid);
				if (callback && callback(&tid, callback_state))
					dead[ndead++] = s;
				else
					live++;
			}
	}

	if (ndead > 0)
	{
		uint16		slots[GBT_LEAF_MAX_ENTRIES];

		/* from the right, so each deletion refreshes only its own gap run */
		for (int i = 0; i < ndead; i++)
			slots[i] = (uint16) dead[ndead - 1 - i];
		if (!gbt_wal_delete_slots_inplace(index, buf, slots, ndead))
		{
			GbtWal	   *w = gbt_wal_start(index);
			Page		wpage = gbt_wal_register(w, buf, 0);

			gbt_page_delete_slots(wpage, slots, ndead);
			gbt_wal_block_data(w, 0, slots, sizeof(uint16) * ndead);
			gbt_wal_finish(w, XLOG_GBT_VACUUM);
		}
		{
			BlockNumber blkno = BufferGetBlockNumber(buf);

			gbt_gpu_note_changes(index, &blkno, 1, false);
		}
		stats->tuples_removed += ndead;
	}
	stats->num_index_tuples += live;
}

/*
 * Standby queries whose snapshots are older than horizon must not see what
 * the records that follow remove (entries of dead tuples, a recycled page).
 * gbtree's own records carry no horizon and generic WAL cannot, so this
 * logs nbtree's page-reuse record, which does nothing on redo but resolve
 * that conflict; nothing is logged where no standby can run queries.
 */
void
gbt_log_recovery_conflict(Relation index, BlockNumber blkno, FullTransactionId horizon)
{
	xl_btree_reuse_page x;
	Relation	heap;

	if (!RelationNeedsWAL(index) || !XLogStandbyInfoActive() ||
		!FullTransactionIdIsValid(horizon))
		return;
	/* the caller holds a lock on the table, as any change of its index does */
	heap = table_open(index->rd_index->indrelid, NoLock);
	memset(&x, 0, sizeof(x));
	gbt_fill_conflict_record(&x, index, heap, blkno, horizon);
	table_close(heap, NoLock);
	XLogBeginInsert();
	XLogRegisterData((char *) &x, SizeOfBtreeReusePage);
	XLogInsert(RM_BTREE_ID, XLOG_BTREE_REUSE_PAGE);
}

/* The full xid of xid, an xid of the recent past (a heap tuple's xmax) */
static FullTransactionId
recent_full_xid(TransactionId xid)
{
	FullTransactionId next = ReadNextFullTransactionId();
	uint32		epoch = EpochFromFullTransactionId(next);

	if (!TransactionIdIsNormal(xid))
		return InvalidFullTransactionId;
	if (xid >= XidFromFullTransactionId(next))
		epoch--;
	return FullTransactionIdFromEpochAndXid(epoch, xid);
}

/*
 * The exclusively locked leaf in buf is full: remove its entries marked
 * dead (src/README, "Dead entries") before it splits, as nbtree's simple
 * deletion does.  The table AM checks their heap TIDs and gives the newest
 * xid among the tuples they lead to, the horizon of the recovery conflict
 * logged first.  Returns whether any entry went.
 */
bool
gbt_leaf_reclaim_dead(Relation index, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	const uint64 *dead = gbt_leaf_dead((char *) page);
	GbtNode		node;
	TM_IndexDeleteOp delstate;
	Relation	heap;
	TransactionId horizon;
	uint16		cand[GBT_LEAF_MAX_ENTRIES];
	uint16		slots[GBT_LEAF_MAX_ENTRIES];
	int			n = 0;
	GbtWal	   *w;

	/* posting leaves carry no marks (and their body overlays the space) */
	if (gbt_page_is_posting((char *) page) || !gbt_leaf_has_dead((char *) page))
		return false;
	gbt_page_view(page, &node);
	for (int s = gbt_node_first_used(&node); s < node.nslots;
		 s = gbt_node_next_used(&node, s + 1))
		if (dead[s >> 6] & (UINT64CONST(1) << (s & 63)))
			cand[n++] = (uint16) s;
	if (n == 0)
		return false;

	delstate.irel = index;
	delstate.iblknum = blkno;
	delstate.bottomup = false;
	delstate.bottomupfreespace = 0;
	delstate.ndeltids = n;
	delstate.deltids = palloc(sizeof(TM_IndexDelete) * n);
	delstate.status = palloc(sizeof(TM_IndexStatus) * n);
	for (int i = 0; i < n; i++)
	{
		gbt_tid_to_itemptr(node.tids[cand[i]], &delstate.deltids[i].tid);
		delstate.deltids[i].id = (int16) i;
		/* an OffsetNumber must be valid (1-based): slot + 1 */
		delstate.status[i].idxoffnum = cand[i] + 1;
		delstate.status[i].knowndeletable = true;
		delstate.status[i].promising = false;
		delstate.status[i].freespace = 16;
	}
	/* the caller holds a lock on the table, as any insert into its index does */
	heap = table_open(index->rd_index->indrelid, NoLock);
	horizon = table_index_delete_tuples(heap, &delstate);
	table_close(heap, NoLock);

	/* every entry was known deletable, so all remain: delete from the right */
	n = delstate.ndeltids;
	for (int i = 0; i < n; i++)
		slots[i] = delstate.status[delstate.deltids[i].id].idxoffnum - 1;
	pfree(delstate.deltids);
	pfree(delstate.status);
	if (n == 0)
		return false;
	qsort(slots, n, sizeof(uint16), cmp_slot_desc);

	gbt_log_recovery_conflict(index, blkno, recent_full_xid(horizon));
	w = gbt_wal_start(index);
	gbt_page_delete_slots(gbt_wal_register(w, buf, 0), slots, n);
	gbt_wal_block_data(w, 0, slots, sizeof(uint16) * n);
	gbt_wal_finish(w, XLOG_GBT_VACUUM);
	gbt_gpu_note_changes(index, &blkno, 1, false);
	return true;
}

/*
 * Find the level-1 page holding the downlink to leaf 'leaf', whose high
 * key is (hikey, hitid), in the tree rooted at root.  Returns it
 * exclusively locked with *slot set, or InvalidBuffer.  Caller holds the
 * structure-modification lock, so inner pages are stable.
 */
static Buffer
find_parent(Relation index, BlockNumber root, BlockNumber leaf,
			uint64 hikey, uint64 hitid, int *slot)
{
	BlockNumber blk = root;

	for (;;)
	{
		Buffer		buf = ReadBuffer(index, blk);
		GbtPageOpaque op;
		GbtNode		node;
		int			s;

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		gbt_check_page(index, buf);
		gbt_page_view(BufferGetPage(buf), &node);
		op = node.opaque;
		if ((op->flags & GBT_F_LEAF) || (op->flags & GBT_F_DELETED))
		{
			UnlockReleaseBuffer(buf);
			return InvalidBuffer;
		}
		if (!(op->flags & GBT_F_RIGHTMOST) && gbt_hikey_lt(op, hikey, hitid))
		{
			blk = op->rightlink;
			UnlockReleaseBuffer(buf);
			continue;
		}
		/* the child holding the last entry < (hikey, hitid) */
		s = gbt_node_prev_used(&node, gbt_node_lower_bound_entry(&node, hikey, hitid));
		if (s < 0)
			s = gbt_node_first_used(&node);
		if (s >= node.nslots)
		{
			UnlockReleaseBuffer(buf);
			return InvalidBuffer;
		}
		if (op->level == 1)
		{
			if (node.child[s] != leaf)
			{
				UnlockReleaseBuffer(buf);
				return InvalidBuffer;
			}
			*slot = s;
			return buf;
		}
		blk = node.child[s];
		UnlockReleaseBuffer(buf);
	}
}

/*
 * The last child of a page cannot be unlinked as other children are: its
 * right sibling has another parent.  So it moves first, to its parent X's
 * right sibling X2, a child of the same page G (src/README, "VACUUM"):
 *
 * - X2 takes the child's downlink, first, below its own;
 * - where the child was X's only one (a queue table, whose rows go from
 *   the low end of the key, empties each parent from the left), X goes:
 *   X2 takes X's low key and left-link, G's downlink for X leads to X2 and
 *   X2's own goes, X's left sibling (G's child before X; none where X is
 *   the leftmost page of its level) links to X2, and X is marked deleted,
 *   keeping its entry, right-link and high key, so that a reader that
 *   still arrives there descends to the child or moves right, and both
 *   still hold its range;
 * - else X keeps its other children: X's high key, X2's low key and G's
 *   separator for X2 become the child's separator, so X2 takes the
 *   child's range.
 *
 * No entry of the leaves moves.  One generic WAL record of up to four
 * pages (G, X's left sibling, X, X2) under the structure-modification
 * lock.  G is gbuf, exclusively locked, and X its child at slot sx;
 * gleftmost says whether G is the leftmost page of its level.  Releases
 * gbuf.  Returns whether the child moved, with X in *xdeleted where X
 * went (else InvalidBlockNumber); gives up where X is G's last child, X2
 * would be full (inner pages keep a free slot for the proactive splits),
 * or a page carries tails.
 */
bool
gbt_give_last_child(Relation index, int nw, Buffer gbuf, int sx, bool gleftmost,
					BlockNumber *xdeleted)
{
	GbtNode		gnode,
				xnode,
				x2node;
	int			sn,
				sp;
	BlockNumber xblk,
				x2blk;
	Buffer		lbuf = InvalidBuffer,
				xbuf,
				x2buf;
	GbtPageOpaque gop,
				xop,
				x2op;
	bool		only,
				done = false;

	*xdeleted = InvalidBlockNumber;
	gbt_node_view((char *) BufferGetPage(gbuf), &gnode);
	gop = gnode.opaque;
	sn = gbt_node_next_used(&gnode, sx + 1);
	sp = gbt_node_prev_used(&gnode, sx);
	if (sn >= gnode.nslots || (gop->flags & GBT_F_TAILS))
	{
		UnlockReleaseBuffer(gbuf);
		return false;
	}
	xblk = gnode.child[sx];
	x2blk = gnode.child[sn];

	/* lock order: the parent, then its children left to right */
	if (sp >= 0)
	{
		lbuf = ReadBuffer(index, gnode.child[sp]);
		LockBuffer(lbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_wide_check_page(index, lbuf, nw);
	}
	xbuf = ReadBuffer(index, xblk);
	LockBuffer(xbuf, BUFFER_LOCK_EXCLUSIVE);
	gbt_wide_check_page(index, xbuf, nw);
	x2buf = ReadBuffer(index, x2blk);
	LockBuffer(x2buf, BUFFER_LOCK_EXCLUSIVE);
	gbt_wide_check_page(index, x2buf, nw);
	gbt_node_view((char *) BufferGetPage(xbuf), &xnode);
	gbt_node_view((char *) BufferGetPage(x2buf), &x2node);
	xop = xnode.opaque;
	x2op = x2node.opaque;
	only = xop->nused == 1;

	if (!(xop->flags & (GBT_F_LEAF | GBT_F_DELETED | GBT_F_ROOT | GBT_F_RIGHTMOST | GBT_F_TAILS)) &&
		xop->nused >= 1 && xop->level + 1 == gop->level && xop->rightlink == x2blk &&
		!(x2op->flags & (GBT_F_LEAF | GBT_F_DELETED | GBT_F_TAILS)) &&
		x2op->level == xop->level && x2op->nused + 1 < x2node.nslots &&
		(!only || sp >= 0 || gleftmost) &&
		(!only || !BufferIsValid(lbuf) ||
		 gbt_page_opaque((char *) BufferGetPage(lbuf))->rightlink == xblk))
	{
		int			s = gbt_node_last_used(&xnode);
		uint64		key[GBT_MAX_KEY_WORDS];
		uint64		tid = xnode.tids[s];
		uint32		child = xnode.child[s];
		GbtGxlog   *gx = gbt_gxlog_start(index);
		Page		gp = gbt_gxlog_register(gx, gbuf, 0);
		Page		xp = gbt_gxlog_register(gx, xbuf, 0);
		Page		x2p = gbt_gxlog_register(gx, x2buf, 0);
		GbtNode		n2,
					nx,
					ng;
		xl_gbt_delete_page x;

		key[0] = xnode.keys[s];
		for (int k = 1; k < nw; k++)
			key[k] = xnode.xkeys[k - 1][s];
		memset(&x, 0, sizeof(x));
		x.xact = U64FromFullTransactionId(ReadNextFullTransactionId());
		x.rightlink = x2blk;
		x.parent_slot = (uint16) sx;
		x.right_slot = (uint16) sn;

		/* X2 takes the child's downlink, first */
		gbt_node_view((char *) x2p, &n2);
		done = gbt_node_insert_words(&n2, key, tid, child) == gbt_node_first_used(&n2);
		if (done && only)
		{
			/* and X's low key and left-link; X goes */
			n2.opaque->lowkey = xop->lowkey;
			n2.opaque->lowtid = xop->lowtid;
			for (int k = 1; k < nw; k++)
				n2.xbounds[nw - 1 + k - 1] = xnode.xbounds[nw - 1 + k - 1];
			/* inner left-links, where a tree keeps them (multi-word builds) */
			n2.opaque->leftlink = xop->leftlink;
			gbt_page_unlink_parent(gp, &x);
			gbt_page_unlink_leaf(xp, &x);
			if (BufferIsValid(lbuf))
				gbt_page_unlink_left(gbt_gxlog_register(gx, lbuf, 0), &x);
			*xdeleted = xblk;
		}
		else if (done)
		{
			/* the child's separator bounds X above and X2 below, in G too */
			n2.opaque->lowkey = key[0];
			n2.opaque->lowtid = tid;
			for (int k = 1; k < nw; k++)
				n2.xbounds[nw - 1 + k - 1] = key[k];
			gbt_node_view((char *) xp, &nx);
			gbt_node_delete_slot(&nx, s);
			nx.opaque->hikey = key[0];
			nx.opaque->hitid = tid;
			for (int k = 1; k < nw; k++)
				nx.xbounds[k - 1] = key[k];
			gbt_node_view((char *) gp, &ng);
			gbt_node_delete_slot(&ng, sn);
			done = gbt_node_insert_words(&ng, key, tid, x2blk) > sx;
		}
		if (done)
		{
			if (nw > 1)
			{
				gbt_wide_set_lower(x2p);
				gbt_wide_set_lower(xp);
				gbt_wide_set_lower(gp);
			}
			gbt_gxlog_finish(gx);
			{
				BlockNumber changed[4] = {BufferGetBlockNumber(gbuf), xblk, x2blk,
				BufferIsValid(lbuf) ? BufferGetBlockNumber(lbuf) : InvalidBlockNumber};

				gbt_gpu_note_changes(index, changed, only && BufferIsValid(lbuf) ? 4 : 3, true);
			}
			GBT_CHECK_WRITTEN(index, gbuf, "a last child's move (parent)");
			GBT_CHECK_WRITTEN(index, x2buf, "a last child's move (right sibling)");
			if (!only)
				GBT_CHECK_WRITTEN(index, xbuf, "a last child's move (its page)");
		}
		else
		{
			gbt_gxlog_abort(gx);
			*xdeleted = InvalidBlockNumber;
		}
	}
	UnlockReleaseBuffer(x2buf);
	UnlockReleaseBuffer(xbuf);
	if (BufferIsValid(lbuf))
		UnlockReleaseBuffer(lbuf);
	UnlockReleaseBuffer(gbuf);
	return done;
}

/*
 * Try to unlink empty leaf blkno; quietly gives up if anything changed.
 * Inner pages deleted on the way go to deleted[*ndeleted].
 */
static bool
delete_empty_leaf(Relation index, BlockNumber blkno, BlockNumber *deleted, int *ndeleted)
{
	Buffer		lbuf,
				pbuf,
				lsbuf = InvalidBuffer,
				rsbuf;
	GbtPageOpaque op;
	GbtPageOpaqueData l;
	GbtNode		pnode;
	int			sl,
				sr;
	BlockNumber root;
	GbtWal	   *w;
	Page		ppage,
				lpage,
				rspage;
	bool		ok = false;

	lbuf = ReadBuffer(index, blkno);
	LockBuffer(lbuf, BUFFER_LOCK_SHARE);
	gbt_check_page(index, lbuf);
	op = gbt_page_opaque((char *) BufferGetPage(lbuf));
	l = *op;
	UnlockReleaseBuffer(lbuf);
	if (!(l.flags & GBT_F_LEAF) || (l.flags & (GBT_F_DELETED | GBT_F_ROOT | GBT_F_RIGHTMOST)) ||
		l.nused > 0)
		return false;
	root = (l.flags & GBT_F_NULLTREE) ? GBT_NULLROOT_BLKNO : GBT_ROOT_BLKNO;

	pbuf = find_parent(index, root, blkno, l.hikey, l.hitid, &sl);
	if (!BufferIsValid(pbuf))
		return false;
	gbt_page_view(BufferGetPage(pbuf), &pnode);
	sr = gbt_node_next_used(&pnode, sl + 1);
	if (sr >= pnode.nslots)
	{
		/* the leaf is its parent's last child: it moves first */
		UnlockReleaseBuffer(pbuf);
		if (!gbt_make_not_last(index, root, 1, blkno, 0, 0, deleted, ndeleted))
			return false;
		pbuf = find_parent(index, root, blkno, l.hikey, l.hitid, &sl);
		if (!BufferIsValid(pbuf))
			return false;
		gbt_page_view(BufferGetPage(pbuf), &pnode);
		sr = gbt_node_next_used(&pnode, sl + 1);
	}
	if (sr >= pnode.nslots || pnode.child[sr] != l.rightlink)
	{
		UnlockReleaseBuffer(pbuf);
		return false;
	}

	/* lock order: parent, then leaves left to right */
	if (l.leftlink != GBT_NO_BLOCK)
	{
		lsbuf = ReadBuffer(index, l.leftlink);
		LockBuffer(lsbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_check_page(index, lsbuf);
	}
	lbuf = ReadBuffer(index, blkno);
	LockBuffer(lbuf, BUFFER_LOCK_EXCLUSIVE);
	rsbuf = ReadBuffer(index, l.rightlink);
	LockBuffer(rsbuf, BUFFER_LOCK_EXCLUSIVE);
	gbt_check_page(index, rsbuf);

	op = gbt_page_opaque((char *) BufferGetPage(lbuf));
	if (op->nused == 0 && !(op->flags & GBT_F_DELETED) &&
		op->rightlink == l.rightlink && op->leftlink == l.leftlink &&
		gbt_page_opaque((char *) BufferGetPage(rsbuf))->leftlink == blkno &&
		(!BufferIsValid(lsbuf) ||
		 gbt_page_opaque((char *) BufferGetPage(lsbuf))->rightlink == blkno))
	{
		xl_gbt_delete_page x;

		x.lowkey = l.lowkey;
		x.lowtid = l.lowtid;
		x.xact = U64FromFullTransactionId(ReadNextFullTransactionId());
		x.rightlink = l.rightlink;
		x.leftlink = l.leftlink;
		x.parent_slot = (uint16) sl;
		x.right_slot = (uint16) sr;

		w = gbt_wal_start(index);
		ppage = gbt_wal_register(w, pbuf, 0);
		lpage = gbt_wal_register(w, lbuf, 0);
		rspage = gbt_wal_register(w, rsbuf, 0);
		if (BufferIsValid(lsbuf))
			gbt_page_unlink_left(gbt_wal_register(w, lsbuf, 0), &x);
		gbt_page_unlink_right(rspage, &x);
		gbt_page_unlink_parent(ppage, &x);
		gbt_page_unlink_leaf(lpage, &x);
		gbt_wal_main_data(w, &x, sizeof(x));
		gbt_wal_finish(w, XLOG_GBT_DELETE_PAGE);
		{
			BlockNumber changed[4] = {BufferGetBlockNumber(pbuf), BufferGetBlockNumber(lbuf),
			BufferGetBlockNumber(rsbuf), InvalidBlockNumber};

			if (BufferIsValid(lsbuf))
				changed[3] = BufferGetBlockNumber(lsbuf);
			gbt_gpu_note_changes(index, changed, BufferIsValid(lsbuf) ? 4 : 3, true);
		}
		ok = true;
	}
	UnlockReleaseBuffer(rsbuf);
	UnlockReleaseBuffer(lbuf);
	if (BufferIsValid(lsbuf))
		UnlockReleaseBuffer(lsbuf);
	UnlockReleaseBuffer(pbuf);
	return ok;
}

/*
 * A root left with one child of level 1 or more (a queue's tree, once its
 * parents on the left have gone) takes that child's place, as btree's
 * fast root spares its descents the level: the root's page becomes a copy
 * of the child's (it is the only page of its level: no siblings), flagged
 * the root, and the child is marked deleted with its right-link at the
 * root, so that a descent that read the root before and still arrives at
 * the child moves right onto the same level's only page.  No leaf
 * changes.  One generic WAL record of both pages under the
 * structure-modification lock; repeated while the root has one inner
 * child.  The children deleted go to deleted[*ndeleted].
 */
static void
collapse_root(Relation index, BlockNumber root, BlockNumber *deleted, int *ndeleted)
{
	int			nw = gbt_index_info(index)->nwords;

	while (*ndeleted < GBT_DELETE_MAX_LEVELS)
	{
		Buffer		rbuf,
					cbuf;
		GbtNode		rnode;
		GbtPageOpaque rop,
					cop;
		BlockNumber child;
		bool		done = false;

		LockPage(index, GBT_META_BLKNO, ExclusiveLock);
		rbuf = ReadBuffer(index, root);
		LockBuffer(rbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_wide_check_page(index, rbuf, nw);
		gbt_node_view((char *) BufferGetPage(rbuf), &rnode);
		rop = rnode.opaque;
		if ((rop->flags & (GBT_F_LEAF | GBT_F_DELETED)) || !(rop->flags & GBT_F_ROOT) ||
			rop->nused != 1 || rop->level < 2)
		{
			UnlockReleaseBuffer(rbuf);
			UnlockPage(index, GBT_META_BLKNO, ExclusiveLock);
			return;
		}
		child = rnode.child[gbt_node_first_used(&rnode)];
		cbuf = ReadBuffer(index, child);
		LockBuffer(cbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_wide_check_page(index, cbuf, nw);
		cop = gbt_page_opaque((char *) BufferGetPage(cbuf));
		if (!(cop->flags & (GBT_F_LEAF | GBT_F_DELETED | GBT_F_ROOT)) &&
			(cop->flags & GBT_F_RIGHTMOST) && cop->rightlink == GBT_NO_BLOCK &&
			cop->level + 1 == rop->level && cop->lowkey == 0 && cop->lowtid == 0 &&
			(cop->flags & GBT_F_NULLTREE) == (rop->flags & GBT_F_NULLTREE))
		{
			GbtGxlog   *gx = gbt_gxlog_start(index);
			Page		rp = gbt_gxlog_register(gx, rbuf, GBT_WAL_WHOLE);
			Page		cp = gbt_gxlog_register(gx, cbuf, 0);
			GbtPageOpaque nrop,
						ncop;

			memcpy(rp, cp, BLCKSZ);
			nrop = gbt_page_opaque((char *) rp);
			nrop->flags |= GBT_F_ROOT;
			nrop->leftlink = GBT_NO_BLOCK;
			ncop = gbt_page_opaque((char *) cp);
			ncop->flags = (ncop->flags | GBT_F_DELETED) & ~GBT_F_RIGHTMOST;
			ncop->xact = U64FromFullTransactionId(ReadNextFullTransactionId());
			ncop->rightlink = root;
			gbt_gxlog_finish(gx);
			{
				BlockNumber changed[2] = {root, child};

				gbt_gpu_note_changes(index, changed, 2, true);
			}
			GBT_CHECK_WRITTEN(index, rbuf, "a root collapse");
			deleted[(*ndeleted)++] = child;
			done = true;
		}
		UnlockReleaseBuffer(cbuf);
		UnlockReleaseBuffer(rbuf);
		UnlockPage(index, GBT_META_BLKNO, ExclusiveLock);
		if (!done)
			return;
	}
}

/* empty leaves waiting for the pass to reach their right siblings */
#define GBT_VACUUM_PENDING 8
/* empty leaves not deleted in their turn, tried again at the pass's end */
#define GBT_VACUUM_RETRY 1024

/* A leaf the pass deleted, for the free space map at its end */
typedef struct GbtDeletedLeaf
{
	BlockNumber blkno;
	FullTransactionId bound;	/* at or after its deletion xid */
} GbtDeletedLeaf;

typedef struct GbtDeleted
{
	GbtDeletedLeaf *leaves;
	int			n;
	int			max;
} GbtDeleted;

/* page blkno, deleted by this pass, for the free space map at its end */
static void
note_deleted(IndexBulkDeleteResult *stats, GbtDeleted *deleted, BlockNumber blkno)
{
	/* as btree counts: pages_deleted includes the ones deleted now */
	stats->pages_newly_deleted++;
	stats->pages_deleted++;
	if (deleted->n == deleted->max)
	{
		deleted->max = Max(64, deleted->max * 2);
		deleted->leaves = deleted->leaves ?
			repalloc(deleted->leaves, sizeof(GbtDeletedLeaf) * deleted->max) :
			palloc(sizeof(GbtDeletedLeaf) * deleted->max);
	}
	deleted->leaves[deleted->n].blkno = blkno;
	/* the page's xid was read before: the next one is at or after it */
	deleted->leaves[deleted->n++].bound = ReadNextFullTransactionId();
}

/*
 * Unlink the empty leaf blkno under the structure-modification lock.  The
 * pass calls this a few blocks after the leaf, while the leaf and its left
 * sibling are still in VACUUM's buffer ring: put off until after the pass
 * (as it once was), every empty leaf had been evicted by then and was read
 * again, one read per deleted page that btree does not make.
 */
static bool
delete_leaf_now(Relation index, BlockNumber blkno, IndexBulkDeleteResult *stats,
				GbtDeleted *deleted)
{
	BlockNumber inner[GBT_DELETE_MAX_LEVELS];
	int			ninner = 0;
	bool		ok;

	/* no buffer is locked or pinned here: the SMO lock comes first */
	LockPage(index, GBT_META_BLKNO, ExclusiveLock);
	ok = gbt_index_info(index)->wide ? gbt_wide_delete_leaf(index, blkno, inner, &ninner) :
		delete_empty_leaf(index, blkno, inner, &ninner);
	UnlockPage(index, GBT_META_BLKNO, ExclusiveLock);
	for (int i = 0; i < ninner; i++)
		note_deleted(stats, deleted, inner[i]);
	if (ok)
		note_deleted(stats, deleted, blkno);
	return ok;
}

/*
 * The pages this pass deleted go to the free space map now if no snapshot
 * can lead a scan to them any more, as btree's _bt_pendingfsm_finalize
 * does; the rest the next VACUUM finds deleted and hands on.  That takes
 * transactions that got xids while the pass ran (on a busy server, those
 * of a long VACUUM's first pages): churn then reuses them without waiting
 * for another VACUUM.
 */
static void
deleted_to_fsm(IndexVacuumInfo *info, IndexBulkDeleteResult *stats, GbtDeleted *deleted)
{
	if (deleted->n == 0)
		return;
	/* refreshes this backend's view of the horizon (the result is not needed) */
	(void) GetOldestNonRemovableTransactionId(NULL);
	/* in deletion order, so the bounds only grow */
	for (int i = 0; i < deleted->n; i++)
	{
		if (!GlobalVisCheckRemovableFullXid(gbt_vacuum_heaprel(info), deleted->leaves[i].bound))
			break;
		RecordFreeIndexPage(info->index, deleted->leaves[i].blkno);
		stats->pages_free++;
	}
	pfree(deleted->leaves);
}

static void
scan_index(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
		   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	bool		needLock = !RELATION_IS_LOCAL(index);
	BlockNumber blkno = GBT_ROOT_BLKNO;
	BlockNumber npages;
	BlockNumber pending[GBT_VACUUM_PENDING][2];	/* the leaf, its right sibling */
	int			npending = 0;
	GbtDeleted	deleted = {0};
	BlockNumber *retry = palloc(sizeof(BlockNumber) * GBT_VACUUM_RETRY);
	int			nretry = 0;

	stats->num_index_tuples = 0;
	stats->pages_deleted = 0;
	stats->pages_free = 0;
	/* wait for GPU scans that return entries without leaf pins (scan.c) */
	if (callback)
		LockPage(index, GBT_GPU_SCAN_LOCK, ExclusiveLock);
	LockPage(index, GBT_ROOT_BLKNO, ShareLock);
	for (;;)
	{
		if (needLock)
			LockRelationForExtension(index, ExclusiveLock);
		npages = RelationGetNumberOfBlocks(index);
		if (needLock)
			UnlockRelationForExtension(index, ExclusiveLock);
		if (blkno >= npages)
			break;
		for (; blkno < npages; blkno++)
		{
			Buffer		buf;
			GbtPageOpaque op;
			BlockNumber empty_right = InvalidBlockNumber;

			gbt_vacuum_delay_point();
			buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
									 info->strategy);
			LockBufferForCleanup(buf);
			if (PageIsNew(BufferGetPage(buf)))
			{
				/* extended by a crashed split: harmless, leave it */
				UnlockReleaseBuffer(buf);
				continue;
			}
			gbt_wide_check_page(index, buf, gbt_index_info(index)->nwords);
			op = gbt_page_opaque((char *) BufferGetPage(buf));
			if (op->flags & GBT_F_DELETED)
			{
				stats->pages_deleted++;
				if (GlobalVisCheckRemovableFullXid(gbt_vacuum_heaprel(info),
												   FullTransactionIdFromU64(op->xact)))
				{
					RecordFreeIndexPage(index, blkno);
					stats->pages_free++;
				}
			}
			else if (op->flags & GBT_F_LEAF)
			{
				vacuum_leaf(index, buf, stats, callback, callback_state);
				if (op->nused == 0 && !(op->flags & (GBT_F_ROOT | GBT_F_RIGHTMOST)))
					empty_right = op->rightlink;
			}
			UnlockReleaseBuffer(buf);

			/*
			 * An empty leaf waits until the pass has been through its right
			 * sibling (or the queue is full): the unlinking changes that
			 * sibling, and changed first, the sibling's own vacuuming would
			 * be logged against a fresh full-page image as a large diff.
			 * Deleting a page moves no entry, so the physical-order pass
			 * misses nothing: the key range goes to the right sibling, and
			 * entries go to new blocks only by splits, past the pass.
			 */
			while (npending > 0 &&
				   (npending == GBT_VACUUM_PENDING || pending[0][1] <= blkno))
			{
				if (!delete_leaf_now(index, pending[0][0], stats, &deleted) &&
					nretry < GBT_VACUUM_RETRY)
					retry[nretry++] = pending[0][0];
				npending--;
				memmove(pending, pending + 1, sizeof(pending[0]) * npending);
			}
			if (BlockNumberIsValid(empty_right))
			{
				pending[npending][0] = blkno;
				pending[npending++][1] = empty_right;
			}
		}
	}
	for (int i = 0; i < npending; i++)
		if (!delete_leaf_now(index, pending[i][0], stats, &deleted) && nretry < GBT_VACUUM_RETRY)
			retry[nretry++] = pending[i][0];

	/*
	 * Once more for the empty leaves that were the last child of their
	 * parent when their turn came: the pass goes in block order, so the
	 * siblings to their left (a queue's) may have gone since, leaving them
	 * the only child, which is deleted with its parent.
	 */
	for (int i = 0; i < nretry; i++)
		(void) delete_leaf_now(index, retry[i], stats, &deleted);
	pfree(retry);
	for (int t = 0; t < 2; t++)
	{
		BlockNumber gone[GBT_DELETE_MAX_LEVELS];
		int			ngone = 0;

		collapse_root(index, t == 0 ? GBT_ROOT_BLKNO : GBT_NULLROOT_BLKNO, gone, &ngone);
		for (int i = 0; i < ngone; i++)
			note_deleted(stats, &deleted, gone[i]);
	}
	UnlockPage(index, GBT_ROOT_BLKNO, ShareLock);
	if (callback)
		UnlockPage(index, GBT_GPU_SCAN_LOCK, ExclusiveLock);
	deleted_to_fsm(info, stats, &deleted);
	stats->num_pages = npages;
	stats->estimated_count = false;
}

IndexBulkDeleteResult *
gbtbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	gbt_batch_flush_index(RelationGetRelid(info->index));
	scan_index(info, stats, callback, callback_state);
	return stats;
}

IndexBulkDeleteResult *
gbtvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
	{
		/* no bulk delete ran: count entries for the statistics */
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		scan_index(info, stats, NULL, NULL);
	}
	IndexFreeSpaceMapVacuum(info->index);
	return stats;
}
