/*-------------------------------------------------------------------------
 *
 * insert.c
 *	  aminsert for gbtree: optimistic leaf insert, serialized page splits.
 *
 * Most inserts find room in their leaf: descend with share locks (one at
 * a time, moving right as Lehman and Yao), lock the leaf exclusively, put
 * the entry into a gap or shift up to the nearest gap, one generic WAL
 * record of one page.
 *
 * A full leaf needs a structure modification (SMO).  SMOs are serialized
 * by a heavyweight lock on the metapage block, taken with no buffer lock
 * held, so inner pages change only under that lock.  The SMO descends
 * again with exclusive lock coupling from the root and splits every full
 * inner page it meets on the way down (proactive splitting, as Awad et
 * al.), so the parent of the leaf always has room for the new downlink.
 * Every split is then one generic WAL record of at most four pages:
 *	leaf split:  left, new right, old right sibling (left-link), parent
 *	inner split: left, new right, parent
 *	root split:  root (rewritten in place one level higher), two new pages
 * so a split is atomic, crash recovery never sees a half-split, and no
 * "incomplete split" state exists.  Readers and optimistic inserters hold
 * one buffer lock at a time; the SMO locks top-down and left-to-right; so
 * there is no deadlock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gbtree.h"
#include "gbtree_gpu.h"

/* Space for the entries of one page plus the new one. */
typedef struct GbtSplitBuf
{
	uint64		keys[GBT_MAX_SLOTS + 1];
	uint64		tids[GBT_MAX_SLOTS + 1];
	uint32		child[GBT_MAX_SLOTS + 1];
	int			n;
} GbtSplitBuf;

/* Gather a node's entries, with (key, tid) merged in if addnew. */
static int
gather(GbtNode *node, GbtSplitBuf *sb, bool addnew, uint64 key, uint64 tid)
{
	int			n = gbt_node_extract(node, sb->keys, sb->tids, sb->child);
	int			pos = n;

	if (addnew)
	{
		pos = 0;
		while (pos < n && gbt_entry_lt(sb->keys[pos], sb->tids[pos], key, tid))
			pos++;
		memmove(sb->keys + pos + 1, sb->keys + pos, sizeof(uint64) * (n - pos));
		memmove(sb->tids + pos + 1, sb->tids + pos, sizeof(uint64) * (n - pos));
		memmove(sb->child + pos + 1, sb->child + pos, sizeof(uint32) * (n - pos));
		sb->keys[pos] = key;
		sb->tids[pos] = tid;
		sb->child[pos] = 0;
		n++;
	}
	sb->n = n;
	return pos;
}

/*
 * Where to split n entries: in the middle, except when a leaf grows at its
 * end: ascending keys at the rightmost leaf, or duplicates of one key
 * arriving in heap order, which always land after their equals.  Then the
 * left page keeps the fillfactor, so such loads pack pages as tightly as a
 * build instead of leaving them half full.
 */
static int
split_point(Relation index, int n, bool leaf, bool rightmost, int newpos)
{
	if (leaf && newpos == n - 1)
	{
		int			cap = GBT_LEAF_SLOTS * gbt_get_fillfactor(index) / 100;

		return Max(1, Min(n - 1, cap));
	}
	return n / 2;
}

static void
load_half(Page page, GbtSplitBuf *sb, int from, int to, bool leaf, bool spread)
{
	GbtNode		node;

	gbt_page_view(page, &node);
	gbt_node_load_spread(&node, to - from, sb->keys + from, sb->tids + from,
						 leaf ? NULL : sb->child + from, spread);
}

static void
insert_into_parent(Relation index, Page ppage, uint64 key, uint64 tid, BlockNumber child)
{
	GbtNode		pnode;

	gbt_page_view(ppage, &pnode);
	if (gbt_node_insert(&pnode, key, tid, child) < 0)
		elog(ERROR, "gbtree: no room for a downlink in index \"%s\"",
			 RelationGetRelationName(index));
}

/*
 * Split page buf (leaf or inner) whose parent is pbuf; for a leaf, the new
 * entry goes in with the split.  All buffers exclusively locked by caller
 * except the new right page and the old right sibling, taken here.
 */
static void
split_page(Relation index, Buffer pbuf, Buffer buf, bool addnew, uint64 key, uint64 tid,
		   bool may_recycle)
{
	GbtSplitBuf *sb = palloc(sizeof(GbtSplitBuf));
	Buffer		rbuf = gbt_new_buffer(index, may_recycle);
	Buffer		sbuf = InvalidBuffer;
	BlockNumber lblk = BufferGetBlockNumber(buf);
	BlockNumber rblk = BufferGetBlockNumber(rbuf);
	GenericXLogState *state;
	Page		lpage,
				rpage,
				ppage,
				spage = NULL;
	GbtPageOpaque lop,
				rop;
	GbtPageOpaqueData old;
	GbtNode		lnode;
	bool		leaf;
	bool		appending;
	int			pos,
				cut;

	old = *gbt_page_opaque((char *) BufferGetPage(buf));
	leaf = (old.flags & GBT_F_LEAF) != 0;
	if (leaf && !(old.flags & GBT_F_RIGHTMOST))
	{
		sbuf = ReadBuffer(index, old.rightlink);
		LockBuffer(sbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_check_page(index, sbuf);
	}

	state = GenericXLogStart(index);
	lpage = GenericXLogRegisterBuffer(state, buf, 0);
	rpage = GenericXLogRegisterBuffer(state, rbuf, GENERIC_XLOG_FULL_IMAGE);
	ppage = GenericXLogRegisterBuffer(state, pbuf, 0);
	if (BufferIsValid(sbuf))
		spage = GenericXLogRegisterBuffer(state, sbuf, 0);

	gbt_page_view(lpage, &lnode);
	pos = gather(&lnode, sb, addnew, key, tid);
	cut = split_point(index, sb->n, leaf, (old.flags & GBT_F_RIGHTMOST) != 0,
					  addnew ? pos : -1);

	/* an append split: the right page will grow at its end, pack it */
	appending = leaf && addnew && pos == sb->n - 1;
	gbt_init_page(lpage, leaf, old.level, old.flags & GBT_F_NULLTREE);
	gbt_init_page(rpage, leaf, old.level, old.flags & GBT_F_NULLTREE);
	load_half(lpage, sb, 0, cut, leaf, true);
	load_half(rpage, sb, cut, sb->n, leaf, !appending);

	lop = gbt_page_opaque((char *) lpage);
	rop = gbt_page_opaque((char *) rpage);
	rop->hikey = old.hikey;
	rop->hitid = old.hitid;
	rop->rightlink = old.rightlink;
	rop->flags |= old.flags & GBT_F_RIGHTMOST;
	rop->leftlink = leaf ? lblk : GBT_NO_BLOCK;
	rop->lowkey = sb->keys[cut];
	rop->lowtid = sb->tids[cut];
	lop->lowkey = old.lowkey;
	lop->lowtid = old.lowtid;
	lop->hikey = sb->keys[cut];
	lop->hitid = sb->tids[cut];
	lop->rightlink = rblk;
	lop->leftlink = old.leftlink;
	if (spage)
		gbt_page_opaque((char *) spage)->leftlink = rblk;

	insert_into_parent(index, ppage, sb->keys[cut], sb->tids[cut], rblk);
	GenericXLogFinish(state);
	/* recorded before any of the four buffers is unlocked */
	{
		BlockNumber changed[4] = {lblk, rblk, BufferGetBlockNumber(pbuf)};

		if (BufferIsValid(sbuf))
			changed[3] = BufferGetBlockNumber(sbuf);
		gbt_gpu_note_changes(index, changed, BufferIsValid(sbuf) ? 4 : 3, true);
	}

	if (BufferIsValid(sbuf))
		UnlockReleaseBuffer(sbuf);
	UnlockReleaseBuffer(rbuf);
	pfree(sb);
}

/*
 * Split the root in place: its entries (plus the new one, for a leaf root)
 * move to two new pages and the root becomes an inner page one level up.
 */
static void
split_root(Relation index, Buffer rootbuf, bool addnew, uint64 key, uint64 tid,
		   bool may_recycle)
{
	GbtSplitBuf *sb = palloc(sizeof(GbtSplitBuf));
	Buffer		abuf = gbt_new_buffer(index, may_recycle);
	Buffer		bbuf = gbt_new_buffer(index, may_recycle);
	BlockNumber ablk = BufferGetBlockNumber(abuf);
	BlockNumber bblk = BufferGetBlockNumber(bbuf);
	GenericXLogState *state;
	Page		root,
				apage,
				bpage;
	GbtPageOpaqueData old;
	GbtPageOpaque aop,
				bop;
	GbtNode		node;
	bool		leaf;
	bool		appending;
	int			pos,
				cut;
	uint64		k2[2],
				t2[2];
	uint32		c2[2];
	uint16		tree;

	old = *gbt_page_opaque((char *) BufferGetPage(rootbuf));
	leaf = (old.flags & GBT_F_LEAF) != 0;
	tree = old.flags & GBT_F_NULLTREE;

	state = GenericXLogStart(index);
	root = GenericXLogRegisterBuffer(state, rootbuf, 0);
	apage = GenericXLogRegisterBuffer(state, abuf, GENERIC_XLOG_FULL_IMAGE);
	bpage = GenericXLogRegisterBuffer(state, bbuf, GENERIC_XLOG_FULL_IMAGE);

	gbt_page_view(root, &node);
	pos = gather(&node, sb, addnew, key, tid);
	cut = split_point(index, sb->n, leaf, true, addnew ? pos : -1);

	appending = leaf && addnew && pos == sb->n - 1;
	gbt_init_page(apage, leaf, old.level, tree);
	gbt_init_page(bpage, leaf, old.level, tree);
	load_half(apage, sb, 0, cut, leaf, true);
	load_half(bpage, sb, cut, sb->n, leaf, !appending);
	aop = gbt_page_opaque((char *) apage);
	bop = gbt_page_opaque((char *) bpage);
	aop->rightlink = bblk;
	aop->hikey = sb->keys[cut];
	aop->hitid = sb->tids[cut];
	bop->leftlink = leaf ? ablk : GBT_NO_BLOCK;
	bop->flags |= GBT_F_RIGHTMOST;
	bop->lowkey = sb->keys[cut];
	bop->lowtid = sb->tids[cut];

	gbt_init_page(root, false, old.level + 1, tree | GBT_F_ROOT | GBT_F_RIGHTMOST);
	gbt_page_view(root, &node);
	/* the root's first separator is minus infinity (see build.c) */
	k2[0] = 0;
	t2[0] = 0;
	c2[0] = ablk;
	k2[1] = sb->keys[cut];
	t2[1] = sb->tids[cut];
	c2[1] = bblk;
	gbt_node_load(&node, 2, k2, t2, c2);
	GenericXLogFinish(state);
	{
		BlockNumber changed[3] = {BufferGetBlockNumber(rootbuf), ablk, bblk};

		gbt_gpu_note_changes(index, changed, 3, true);
	}

	UnlockReleaseBuffer(abuf);
	UnlockReleaseBuffer(bbuf);
	pfree(sb);
}

static void
insert_into_leaf(Relation index, Buffer buf, uint64 key, uint64 tid)
{
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, buf, 0);
	GbtNode		node;

	gbt_page_view(page, &node);
	if (gbt_node_insert(&node, key, tid, 0) < 0)
		elog(ERROR, "gbtree: leaf unexpectedly full");
	GenericXLogFinish(state);
	{
		BlockNumber blkno = BufferGetBlockNumber(buf);

		gbt_gpu_note_changes(index, &blkno, 1, false);
	}
}

/* Returns false if the leaf is full and an SMO is needed. */
static bool
insert_optimistic(Relation index, BlockNumber root, uint64 key, uint64 tid)
{
	Buffer		buf = gbt_descend(index, root, key, tid, false, BUFFER_LOCK_EXCLUSIVE);
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));

	if (op->nused >= op->nslots)
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	insert_into_leaf(index, buf, key, tid);
	UnlockReleaseBuffer(buf);
	return true;
}

static void
insert_pessimistic(Relation index, BlockNumber root, uint64 key, uint64 tid)
{
	bool		may_recycle;

	LockPage(index, GBT_META_BLKNO, ExclusiveLock);
	may_recycle = gbt_lock_recycling(index);
	for (;;)
	{
		Buffer		pbuf = InvalidBuffer;
		Buffer		buf = ReadBuffer(index, root);
		bool		done = false;

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		for (;;)
		{
			Page		page;
			GbtPageOpaque op;
			GbtNode		node;
			int			s;
			BlockNumber child;

			CHECK_FOR_INTERRUPTS();
			gbt_check_page(index, buf);
			page = BufferGetPage(buf);
			op = gbt_page_opaque((char *) page);
			if ((op->flags & GBT_F_DELETED) ||
				(!(op->flags & GBT_F_RIGHTMOST) && gbt_hikey_le(op, key, tid)))
			{
				BlockNumber next = op->rightlink;

				UnlockReleaseBuffer(buf);
				buf = ReadBuffer(index, next);
				LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
				continue;
			}

			if (op->flags & GBT_F_LEAF)
			{
				if (op->nused < op->nslots)
					insert_into_leaf(index, buf, key, tid);
				else if (!BufferIsValid(pbuf))
					split_root(index, buf, true, key, tid, may_recycle);
				else
					split_page(index, pbuf, buf, true, key, tid, may_recycle);
				done = true;
				break;
			}

			if (op->nused >= op->nslots)
			{
				/* proactive split of a full inner page, then start over */
				if (!BufferIsValid(pbuf))
					split_root(index, buf, false, 0, 0, may_recycle);
				else
					split_page(index, pbuf, buf, false, 0, 0, may_recycle);
				break;
			}

			gbt_page_view(page, &node);
			s = gbt_node_prev_used(&node, gbt_node_lower_bound_entry(&node, key, tid));
			if (s < 0)
				s = gbt_node_first_used(&node);
			child = node.child[s];
			if (BufferIsValid(pbuf))
				UnlockReleaseBuffer(pbuf);
			pbuf = buf;
			buf = ReadBuffer(index, child);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		}
		UnlockReleaseBuffer(buf);
		if (BufferIsValid(pbuf))
			UnlockReleaseBuffer(pbuf);
		if (done)
			break;
	}
	if (may_recycle)
		gbt_unlock_recycling(index);
	UnlockPage(index, GBT_META_BLKNO, ExclusiveLock);
}

bool
gbtinsert(Relation index, Datum *values, bool *isnull,
		  ItemPointer ht_ctid, Relation heapRel,
		  IndexUniqueCheck checkUnique, bool indexUnchanged,
		  IndexInfo *indexInfo)
{
	GbtIndexInfo *info = gbt_index_info(index);
	uint64		key;
	uint64		tid;
	BlockNumber root;

	if (isnull[0])
	{
		key = 0;
		tid = gbt_tid_from_itemptr(ht_ctid, 0);
		root = GBT_NULLROOT_BLKNO;
	}
	else
	{
		uint16		flags;

		key = gbt_index_key(info, values[0], &flags);
		tid = gbt_tid_from_itemptr(ht_ctid, flags);
		root = GBT_ROOT_BLKNO;
	}

	if (!insert_optimistic(index, root, key, tid))
		insert_pessimistic(index, root, key, tid);
	return false;
}
