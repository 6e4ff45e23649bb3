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
 * Batched insertion (gbt_insert_sorted, fed by batch.c) follows the same
 * protocol with sorted runs of entries instead of one: all of a leaf's new
 * entries go in under one exclusive lock and one WAL record, and a leaf
 * that cannot hold them splits with its merged content, a step at a time,
 * each step one atomic split record as above.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xloginsert.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_xlog.h"

/*
 * The content of a split: the left page's entries, then the right page's
 * (each at most one page of them).
 */
typedef struct GbtSplitBuf
{
	uint64		keys[2 * GBT_MAX_SLOTS];
	uint64		tids[2 * GBT_MAX_SLOTS];
	uint32		child[2 * GBT_MAX_SLOTS];
	int			n;
} GbtSplitBuf;

/*
 * How a split lays sb out: [0, cut) on the left page, [cut, n) on the
 * right one; the separator (the right page's low key) is at most the right
 * page's first entry (a batch may still add smaller ones there).  An
 * append split packs the right page's entries at its start (rspread off).
 */
typedef struct GbtSplitPlan
{
	int			cut;
	uint64		sepkey;
	uint64		septid;
	bool		rspread;
} GbtSplitPlan;

/* SMO steps a batch takes before it lets other inserters' splits in */
#define GBT_BATCH_SMO_STEPS		32

/* new entries of a leaf from which it is rewritten whole (full image) */
#define GBT_MERGE_REWRITE_MIN	16

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

/* Does the page hold (key, tid)? */
static bool
node_has_entry(GbtNode *node, uint64 key, uint64 tid)
{
	int			s = gbt_node_next_used(node, gbt_node_lower_bound_entry(node, key, tid));

	return s < node->nslots && node->keys[s] == key && node->tids[s] == tid;
}

/*
 * A page about to be rebuilt from its own entries must hold them in order:
 * rewriting a damaged page would hide the damage.
 */
static void
check_rebuilt_page(Relation index, Buffer buf)
{
	GbtNode		node;
	const char *why;

	gbt_page_view(BufferGetPage(buf), &node);
	why = gbt_node_check(&node);
	if (why)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" block %u is corrupted: %s",
						RelationGetRelationName(index), BufferGetBlockNumber(buf), why),
				 errhint("Please REINDEX it.")));
}

/*
 * A leaf about to take n entries in its gaps must have them: room by its
 * count, and a slot map that agrees with the count, or gbt_node_insert
 * would shift entries into a gap that is not there.
 */
static void
check_leaf_room(Relation index, Buffer buf, int n)
{
	GbtNode		node;
	int			mapped;

	gbt_page_view(BufferGetPage(buf), &node);
	if (node.opaque->nused + n > node.nslots)
		elog(ERROR, "gbtree: leaf unexpectedly full");
	mapped = gbt_node_count_used(&node);
	if (mapped != node.opaque->nused)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), BufferGetBlockNumber(buf)),
				 errdetail("The page counts %u used slots, its slot map %d.",
						   (unsigned) node.opaque->nused, mapped),
				 errhint("Please REINDEX it.")));
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

/*
 * Page changes shared with redo (wal.c): each gives the same bytes from
 * the same page and arguments, when the change is made and when its
 * record is replayed.
 */

/* Lay out n entries on page, formatted afresh. */
static void
fill_page(Page page, bool leaf, uint16 level, uint16 tree, int n, const uint64 *keys,
		  const uint64 *tids, const uint32 *child, bool spread)
{
	GbtNode		node;

	gbt_init_page(page, leaf, level, tree);
	gbt_page_view(page, &node);
	gbt_node_load_spread(&node, n, keys, tids, leaf ? NULL : child, spread);
}

/* Insert n entries, gap by gap; false if they do not fit. */
bool
gbt_page_insert(Page page, const uint64 *keys, const uint64 *tids, const uint32 *child, int n)
{
	GbtNode		node;

	gbt_page_view(page, &node);
	if (node.opaque->flags & GBT_F_LEAF)
		gbt_leaf_clear_dead((char *) page);	/* the slots move */
	for (int i = 0; i < n; i++)
		if (gbt_node_insert(&node, keys[i], tids[i], child ? child[i] : 0) < 0)
			return false;
	return true;
}

/*
 * The left page of a split, rebuilt from its own old content: the entries
 * below the separator, with lnew (new entries below it) merged in.
 */
void
gbt_page_split_left(Page page, uint64 sepkey, uint64 septid, const GbtEntry *lnew, int nlnew,
					BlockNumber rblk)
{
	GbtPageOpaqueData old = *gbt_page_opaque((char *) page);
	GbtSplitBuf *sb = palloc(sizeof(GbtSplitBuf));
	uint64	   *okeys = sb->keys + GBT_MAX_SLOTS;
	uint64	   *otids = sb->tids + GBT_MAX_SLOTS;
	uint32	   *ochild = sb->child + GBT_MAX_SLOTS;
	GbtNode		node;
	int			nold,
				a = 0,
				b = 0,
				m = 0;

	gbt_page_view(page, &node);
	nold = gbt_node_extract(&node, okeys, otids, ochild);
	while (nold > 0 && !gbt_entry_lt(okeys[nold - 1], otids[nold - 1], sepkey, septid))
		nold--;
	while (a < nold || b < nlnew)
	{
		if (b < nlnew && a < nold && lnew[b].key == okeys[a] && lnew[b].tid == otids[a])
		{
			b++;				/* already there */
			continue;
		}
		if (b >= nlnew ||
			(a < nold && gbt_entry_lt(okeys[a], otids[a], lnew[b].key, lnew[b].tid)))
		{
			sb->keys[m] = okeys[a];
			sb->tids[m] = otids[a];
			sb->child[m] = ochild[a];
			a++;
		}
		else
		{
			sb->keys[m] = lnew[b].key;
			sb->tids[m] = lnew[b].tid;
			sb->child[m] = 0;
			b++;
		}
		m++;
	}
	{
		/* formatted afresh, but the same page: its LSN stays */
		XLogRecPtr	lsn = PageGetLSN(page);

		gbt_page_split_left_fill(page, &old, m, sb->keys, sb->tids, sb->child,
								 sepkey, septid, rblk);
		PageSetLSN(page, lsn);
	}
	pfree(sb);
}

/*
 * The left page of a split laid out from all its entries; old holds the
 * page's former special space (level, tree, low key, left-link).
 */
void
gbt_page_split_left_fill(Page page, const GbtPageOpaqueData *old, int n, const uint64 *keys,
						 const uint64 *tids, const uint32 *child, uint64 sepkey, uint64 septid,
						 BlockNumber rblk)
{
	GbtPageOpaque op;

	fill_page(page, (old->flags & GBT_F_LEAF) != 0, old->level, old->flags & GBT_F_NULLTREE,
			  n, keys, tids, child, true);
	op = gbt_page_opaque((char *) page);
	op->lowkey = old->lowkey;
	op->lowtid = old->lowtid;
	op->hikey = sepkey;
	op->hitid = septid;
	op->rightlink = rblk;
	op->leftlink = old->leftlink;
}

/* The new right page of a split. */
void
gbt_page_split_right(Page page, const xl_gbt_split *x, const uint64 *keys, const uint64 *tids,
					 const uint32 *child, BlockNumber lblk)
{
	bool		leaf = (x->flags & GBT_F_LEAF) != 0;
	GbtPageOpaque op;

	fill_page(page, leaf, x->level, x->flags & GBT_F_NULLTREE, x->nright, keys, tids, child,
			  x->rspread);
	op = gbt_page_opaque((char *) page);
	op->hikey = x->hikey;
	op->hitid = x->hitid;
	op->rightlink = x->rightlink;
	op->flags |= x->flags & GBT_F_RIGHTMOST;
	op->leftlink = leaf ? lblk : GBT_NO_BLOCK;
	op->lowkey = x->sepkey;
	op->lowtid = x->septid;
}

/*
 * A root split: entries [0, nleft) to apage, the rest to bpage, and the
 * root rebuilt one level up over the two.
 */
void
gbt_page_root_split(Page root, Page apage, Page bpage, const xl_gbt_root_split *x,
					const uint64 *keys, const uint64 *tids, const uint32 *child,
					BlockNumber ablk, BlockNumber bblk)
{
	bool		leaf = (x->flags & GBT_F_LEAF) != 0;
	uint16		tree = x->flags & GBT_F_NULLTREE;
	GbtPageOpaque aop,
				bop;
	GbtNode		node;
	uint64		k2[2],
				t2[2];
	uint32		c2[2];

	fill_page(apage, leaf, x->level, tree, x->nleft, keys, tids, child, true);
	fill_page(bpage, leaf, x->level, tree, x->nright, keys + x->nleft, tids + x->nleft,
			  child ? child + x->nleft : NULL, x->rspread);
	aop = gbt_page_opaque((char *) apage);
	bop = gbt_page_opaque((char *) bpage);
	aop->rightlink = bblk;
	aop->hikey = x->sepkey;
	aop->hitid = x->septid;
	bop->leftlink = leaf ? ablk : GBT_NO_BLOCK;
	bop->flags |= GBT_F_RIGHTMOST;
	bop->lowkey = x->sepkey;
	bop->lowtid = x->septid;

	gbt_init_page(root, false, x->level + 1, tree | GBT_F_ROOT | GBT_F_RIGHTMOST);
	gbt_page_view(root, &node);
	/* the root's first separator is minus infinity (see build.c) */
	k2[0] = 0;
	t2[0] = 0;
	c2[0] = ablk;
	k2[1] = x->sepkey;
	t2[1] = x->septid;
	c2[1] = bblk;
	gbt_node_load(&node, 2, k2, t2, c2);
}

/*
 * The split of one page (with the new entry merged in, for a leaf): its
 * entries into sb, and where they divide.
 */
static void
plan_single_split(Relation index, Buffer buf, GbtSplitBuf *sb, bool addnew,
				  uint64 key, uint64 tid, GbtSplitPlan *plan)
{
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));
	bool		leaf = (op->flags & GBT_F_LEAF) != 0;
	GbtNode		node;
	int			pos;

	gbt_page_view(BufferGetPage(buf), &node);
	pos = gather(&node, sb, addnew, key, tid);
	plan->cut = split_point(index, sb->n, leaf, (op->flags & GBT_F_RIGHTMOST) != 0,
							addnew ? pos : -1);
	plan->sepkey = sb->keys[plan->cut];
	plan->septid = sb->tids[plan->cut];
	/* an append split: the right page will grow at its end, pack it */
	plan->rspread = !(leaf && addnew && pos == sb->n - 1);
}

/*
 * Split page buf (leaf or inner) whose parent is pbuf into sb's two parts.
 * All buffers exclusively locked by caller except the new right page and
 * the old right sibling, taken here.
 */
static void
split_page(Relation index, Buffer pbuf, Buffer buf, GbtSplitBuf *sb,
		   const GbtSplitPlan *plan, bool may_recycle)
{
	Buffer		rbuf;
	Buffer		sbuf = InvalidBuffer;
	BlockNumber lblk = BufferGetBlockNumber(buf);
	BlockNumber rblk;
	GbtWal	   *w;
	Page		lpage,
				rpage,
				ppage;
	GbtPageOpaqueData old;
	GbtEntry   *lnew;
	int			nlnew = 0;
	xl_gbt_split x;

	old = *gbt_page_opaque((char *) BufferGetPage(buf));
	if (gbt_page_opaque((char *) BufferGetPage(pbuf))->nused >=
		gbt_page_opaque((char *) BufferGetPage(pbuf))->nslots)
		elog(ERROR, "gbtree: no room for a downlink in index \"%s\"",
			 RelationGetRelationName(index));

	check_rebuilt_page(index, buf);
	/* the left part's entries that the page does not hold yet */
	lnew = palloc(sizeof(GbtEntry) * Max(plan->cut, 1));
	{
		GbtNode		node;

		gbt_page_view(BufferGetPage(buf), &node);
		for (int i = 0; i < plan->cut; i++)
			if (!node_has_entry(&node, sb->keys[i], sb->tids[i]))
			{
				lnew[nlnew].key = sb->keys[i];
				lnew[nlnew].tid = sb->tids[i];
				nlnew++;
			}
	}

	rbuf = gbt_new_buffer(index, may_recycle);
	rblk = BufferGetBlockNumber(rbuf);
	if ((old.flags & GBT_F_LEAF) && !(old.flags & GBT_F_RIGHTMOST))
	{
		sbuf = ReadBuffer(index, old.rightlink);
		LockBuffer(sbuf, BUFFER_LOCK_EXCLUSIVE);
		gbt_check_page(index, sbuf);
	}

	x.sepkey = plan->sepkey;
	x.septid = plan->septid;
	x.hikey = old.hikey;
	x.hitid = old.hitid;
	x.lowkey = old.lowkey;
	x.lowtid = old.lowtid;
	x.rightlink = old.rightlink;
	x.leftlink = old.leftlink;
	x.level = old.level;
	x.flags = old.flags;
	x.nright = sb->n - plan->cut;
	x.rspread = plan->rspread;

	/*
	 * A left page whose first change since the checkpoint this is would
	 * log its full image (8 KB): log its entries instead and rebuild it
	 * from them alone.  (A checkpoint that starts just after this test
	 * costs an image, nothing worse: either form replays.)
	 */
	x.left_whole = gbt_wal_rmgr && RelationNeedsWAL(index) && XLogCheckBufferNeedsBackup(buf);

	w = gbt_wal_start(index);
	lpage = gbt_wal_register(w, buf, x.left_whole ? GBT_WAL_NEW : 0);
	rpage = gbt_wal_register(w, rbuf, GBT_WAL_NEW);
	ppage = gbt_wal_register(w, pbuf, 0);
	if (BufferIsValid(sbuf))
	{
		Page		spage = gbt_wal_register(w, sbuf, 0);

		gbt_page_opaque((char *) spage)->leftlink = rblk;
	}
	gbt_page_split_left(lpage, plan->sepkey, plan->septid, lnew, nlnew, rblk);
	gbt_page_split_right(rpage, &x, sb->keys + plan->cut, sb->tids + plan->cut,
						 sb->child + plan->cut, lblk);
	if (!gbt_page_insert(ppage, &x.sepkey, &x.septid, &rblk, 1))
		elog(ERROR, "gbtree: no room for a downlink in index \"%s\"",
			 RelationGetRelationName(index));

	gbt_wal_main_data(w, &x, sizeof(x));
	if (x.left_whole)
	{
		gbt_wal_block_data(w, 0, sb->keys, sizeof(uint64) * plan->cut);
		gbt_wal_block_data(w, 0, sb->tids, sizeof(uint64) * plan->cut);
		if (!(old.flags & GBT_F_LEAF))
			gbt_wal_block_data(w, 0, sb->child, sizeof(uint32) * plan->cut);
	}
	else
		gbt_wal_block_data(w, 0, lnew, sizeof(GbtEntry) * nlnew);
	gbt_wal_block_data(w, 1, sb->keys + plan->cut, sizeof(uint64) * x.nright);
	gbt_wal_block_data(w, 1, sb->tids + plan->cut, sizeof(uint64) * x.nright);
	if (!(old.flags & GBT_F_LEAF))
		gbt_wal_block_data(w, 1, sb->child + plan->cut, sizeof(uint32) * x.nright);
	gbt_wal_finish(w, XLOG_GBT_SPLIT);
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
	pfree(lnew);
}

/*
 * Split the root in place: sb's two parts move to two new pages and the
 * root becomes an inner page one level up.
 */
static void
split_root(Relation index, Buffer rootbuf, GbtSplitBuf *sb, const GbtSplitPlan *plan,
		   bool may_recycle)
{
	Buffer		abuf = gbt_new_buffer(index, may_recycle);
	Buffer		bbuf = gbt_new_buffer(index, may_recycle);
	BlockNumber ablk = BufferGetBlockNumber(abuf);
	BlockNumber bblk = BufferGetBlockNumber(bbuf);
	GbtWal	   *w;
	Page		root,
				apage,
				bpage;
	GbtPageOpaqueData old;
	xl_gbt_root_split x;

	check_rebuilt_page(index, rootbuf);
	old = *gbt_page_opaque((char *) BufferGetPage(rootbuf));
	x.sepkey = plan->sepkey;
	x.septid = plan->septid;
	x.level = old.level;
	x.flags = old.flags;
	x.nleft = plan->cut;
	x.nright = sb->n - plan->cut;
	x.rspread = plan->rspread;

	w = gbt_wal_start(index);
	root = gbt_wal_register(w, rootbuf, GBT_WAL_NEW);
	apage = gbt_wal_register(w, abuf, GBT_WAL_NEW);
	bpage = gbt_wal_register(w, bbuf, GBT_WAL_NEW);
	gbt_page_root_split(root, apage, bpage, &x, sb->keys, sb->tids,
						(old.flags & GBT_F_LEAF) ? NULL : sb->child, ablk, bblk);
	gbt_wal_main_data(w, &x, sizeof(x));
	gbt_wal_block_data(w, 0, sb->keys, sizeof(uint64) * sb->n);
	gbt_wal_block_data(w, 0, sb->tids, sizeof(uint64) * sb->n);
	if (!(old.flags & GBT_F_LEAF))
		gbt_wal_block_data(w, 0, sb->child, sizeof(uint32) * sb->n);
	gbt_wal_finish(w, XLOG_GBT_ROOT_SPLIT);
	{
		BlockNumber changed[3] = {BufferGetBlockNumber(rootbuf), ablk, bblk};

		gbt_gpu_note_changes(index, changed, 3, true);
	}

	UnlockReleaseBuffer(abuf);
	UnlockReleaseBuffer(bbuf);
}

/* Split buf (pbuf its parent, or invalid for the root) around one entry */
static void
split_single(Relation index, Buffer pbuf, Buffer buf, bool addnew, uint64 key,
			 uint64 tid, bool may_recycle)
{
	GbtSplitBuf *sb = palloc(sizeof(GbtSplitBuf));
	GbtSplitPlan plan;

	plan_single_split(index, buf, sb, addnew, key, tid, &plan);
	if (BufferIsValid(pbuf))
		split_page(index, pbuf, buf, sb, &plan, may_recycle);
	else
		split_root(index, buf, sb, &plan, may_recycle);
	pfree(sb);
}

/*
 * Insert n (at most GBT_MERGE_REWRITE_MIN) entries into the exclusively
 * locked leaf buf, which has room for them: one XLOG_GBT_INSERT record,
 * written in place with the resource manager, else through the builder.
 */
static void
leaf_insert(Relation index, Buffer buf, const uint64 *keys, const uint64 *tids, int n)
{
	uint32		child[GBT_MERGE_REWRITE_MIN] = {0};
	BlockNumber blkno = BufferGetBlockNumber(buf);

	Assert(n > 0 && n <= GBT_MERGE_REWRITE_MIN);
	check_leaf_room(index, buf, n);
	if (!gbt_wal_insert_inplace(index, buf, keys, tids, child, n))
	{
		GbtWal	   *w = gbt_wal_start(index);

		if (!gbt_page_insert(gbt_wal_register(w, buf, 0), keys, tids, child, n))
		{
			gbt_wal_abort(w);
			elog(ERROR, "gbtree: leaf unexpectedly full");
		}
		gbt_wal_block_data(w, 0, keys, sizeof(uint64) * n);
		gbt_wal_block_data(w, 0, tids, sizeof(uint64) * n);
		gbt_wal_block_data(w, 0, child, sizeof(uint32) * n);
		gbt_wal_finish(w, XLOG_GBT_INSERT);
	}
	gbt_gpu_note_changes(index, &blkno, 1, false);
}

/*
 * Whether the exclusively locked leaf in buf has room for k more entries,
 * once the entries it has marked dead are gone (they go only when it
 * lacks room: their removal costs heap reads and a WAL record).
 */
static bool
leaf_has_room(Relation index, Buffer buf, Size k)
{
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));

	if (op->nused + k <= (Size) op->nslots)
		return true;
	return gbt_leaf_reclaim_dead(index, buf) && op->nused + k <= (Size) op->nslots;
}

/* Returns false if the leaf is full and an SMO is needed. */
static bool
insert_optimistic(Relation index, BlockNumber root, uint64 key, uint64 tid)
{
	Buffer		buf = gbt_descend(index, root, key, tid, false, BUFFER_LOCK_EXCLUSIVE);

	if (!leaf_has_room(index, buf, 1))
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	leaf_insert(index, buf, &key, &tid, 1);
	UnlockReleaseBuffer(buf);
	return true;
}

/*
 * What an SMO does at the leaf: called with the leaf and its parent (or
 * InvalidBuffer when the leaf is the root) exclusively locked; returns
 * true when the SMO is done, false to descend again to the target, which
 * it may have moved.
 */
typedef bool (*GbtLeafAction) (Relation index, Buffer pbuf, Buffer buf, bool may_recycle,
							   void *arg);

/* Where an SMO descends to */
typedef struct GbtSmoTarget
{
	uint64		key;
	uint64		tid;
} GbtSmoTarget;

/*
 * A structure modification: under the SMO lock, descend from the root to
 * the target's leaf with exclusive lock coupling, splitting every full
 * inner page on the way (and starting over after one), and hand the leaf
 * to action.
 */
static void
smo_run(Relation index, BlockNumber root, GbtSmoTarget *target, GbtLeafAction action,
		void *arg)
{
	bool		may_recycle;
	bool		done = false;

	LockPage(index, GBT_META_BLKNO, ExclusiveLock);
	may_recycle = gbt_lock_recycling(index);
	while (!done)
	{
		Buffer		pbuf = InvalidBuffer;
		Buffer		buf = ReadBuffer(index, root);

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		for (;;)
		{
			Page		page;
			GbtPageOpaque op;
			BlockNumber child;

			CHECK_FOR_INTERRUPTS();
			gbt_check_page(index, buf);
			page = BufferGetPage(buf);
			op = gbt_page_opaque((char *) page);
			gbt_check_in_tree(index, buf, root);
			if (gbt_must_move_right(op, target->key, target->tid, false))
			{
				BlockNumber next = gbt_checked_rightlink(index, buf);

				UnlockReleaseBuffer(buf);
				buf = ReadBuffer(index, next);
				LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
				continue;
			}

			if (op->flags & GBT_F_LEAF)
			{
				done = action(index, pbuf, buf, may_recycle, arg);
				break;
			}

			if (op->nused >= op->nslots)
			{
				/* proactive split of a full inner page, then start over */
				split_single(index, pbuf, buf, false, 0, 0, may_recycle);
				break;
			}

			child = gbt_inner_child(index, buf, target->key, target->tid);
			if (BufferIsValid(pbuf))
				UnlockReleaseBuffer(pbuf);
			pbuf = buf;
			buf = ReadBuffer(index, child);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		}
		UnlockReleaseBuffer(buf);
		if (BufferIsValid(pbuf))
			UnlockReleaseBuffer(pbuf);
	}
	if (may_recycle)
		gbt_unlock_recycling(index);
	UnlockPage(index, GBT_META_BLKNO, ExclusiveLock);
}

/* A single insert's SMO: into the leaf if it has room by now, else split it */
static bool
insert_at_leaf(Relation index, Buffer pbuf, Buffer buf, bool may_recycle, void *arg)
{
	GbtSmoTarget *t = (GbtSmoTarget *) arg;

	if (leaf_has_room(index, buf, 1))
		leaf_insert(index, buf, &t->key, &t->tid, 1);
	else
		split_single(index, pbuf, buf, true, t->key, t->tid, may_recycle);
	return true;
}

static void
insert_pessimistic(Relation index, BlockNumber root, uint64 key, uint64 tid)
{
	GbtSmoTarget t = {key, tid};

	smo_run(index, root, &t, insert_at_leaf, &t);
}

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

/* How many of the old entries e[0..k) repeats. */
static int
count_repeats(const uint64 *okeys, const uint64 *otids, int nold, const GbtEntry *e, Size k)
{
	int			r = 0;

	for (int a = 0; a < nold; a++)
	{
		Size		lo = 0,
					hi = k;

		while (lo < hi)
		{
			Size		mid = lo + (hi - lo) / 2;

			if (gbt_entry_lt(e[mid].key, e[mid].tid, okeys[a], otids[a]))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < k && e[lo].key == okeys[a] && e[lo].tid == otids[a])
			r++;
	}
	return r;
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
 * Rewrite a leaf with the sorted entries e[0..k) merged in (those it holds
 * already are skipped), gaps spread evenly.  The caller made sure they fit.
 */
void
gbt_page_merge(Page page, const GbtEntry *e, Size k)
{
	GbtSplitBuf *sb = palloc(sizeof(GbtSplitBuf));
	uint64	   *okeys = sb->keys + GBT_MAX_SLOTS;
	uint64	   *otids = sb->tids + GBT_MAX_SLOTS;
	GbtMergeCursor mc = {0};
	GbtNode		node;
	int			m = 0;

	gbt_page_view(page, &node);
	mc.nold = gbt_node_extract(&node, okeys, otids, NULL);
	mc.okeys = okeys;
	mc.otids = otids;
	mc.e = e;
	mc.k = k;
	/* merged entries never overtake the old ones still to be read */
	while (m < node.nslots && merge_next(&mc, &sb->keys[m], &sb->tids[m]))
		m++;
	if (mc.a < mc.nold || mc.b < mc.k)
		elog(ERROR, "gbtree: leaf unexpectedly full");
	gbt_node_load_spread(&node, m, sb->keys, sb->tids, NULL, true);
	gbt_leaf_clear_dead((char *) page);
	pfree(sb);
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
		GbtNode		node;
		int			n = 0;

		gbt_page_view(BufferGetPage(buf), &node);
		for (Size x = 0; x < k; x++)
		{
			if (dedup && node_has_entry(&node, e[x].key, e[x].tid))
				continue;
			keys[n] = e[x].key;
			tids[n] = e[x].tid;
			n++;
		}
		/* all there already (a flush tried again): nothing to change or log */
		if (n > 0)
			leaf_insert(index, buf, keys, tids, n);
		return;
	}
	check_rebuilt_page(index, buf);
	w = gbt_wal_start(index);
	gbt_page_merge(gbt_wal_register(w, buf, GBT_WAL_WHOLE), e, k);
	gbt_wal_block_data(w, 0, e, sizeof(GbtEntry) * k);
	gbt_wal_finish(w, XLOG_GBT_MERGE);
	gbt_gpu_note_changes(index, &blkno, 1, false);
}

/*
 * Split the leaf buf (pbuf its parent, invalid if the leaf is the root)
 * with the new entries e[i..j) merged in, as far as one split takes them.
 * Returns the first entry not placed.
 */
static Size
split_merged(Relation index, Buffer pbuf, Buffer buf, const GbtEntry *e, Size i, Size j,
			 bool dedup, bool may_recycle)
{
	GbtSplitBuf *sb = palloc(sizeof(GbtSplitBuf));
	uint64	   *okeys = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint64	   *otids = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	GbtNode		node;
	GbtMergeCursor mc = {0};
	GbtSplitPlan plan;
	int			target = Max(1, GBT_LEAF_SLOTS * gbt_get_fillfactor(index) / 100);
	int			nslots;
	Size		total;
	int			m = 0;

	gbt_page_view(BufferGetPage(buf), &node);
	nslots = node.nslots;
	mc.nold = gbt_node_extract(&node, okeys, otids, NULL);
	mc.okeys = okeys;
	mc.otids = otids;
	mc.e = e + i;
	mc.k = j - i;
	total = mc.nold + mc.k;
	if (dedup)
		total -= count_repeats(okeys, otids, mc.nold, mc.e, mc.k);
	Assert(total > (Size) nslots);

	/* the left page: half of two pages' worth, else one build-full page */
	plan.cut = total <= (Size) 2 * target ? (int) (total / 2) : target;
	while (m < plan.cut && merge_next(&mc, &sb->keys[m], &sb->tids[m]))
		m++;
	Assert(m == plan.cut);

	/* the separator: the smallest entry left, old or new */
	if (mc.a < mc.nold &&
		(mc.b >= mc.k ||
		 !gbt_entry_lt(mc.e[mc.b].key, mc.e[mc.b].tid, okeys[mc.a], otids[mc.a])))
	{
		plan.sepkey = okeys[mc.a];
		plan.septid = otids[mc.a];
	}
	else
	{
		plan.sepkey = mc.e[mc.b].key;
		plan.septid = mc.e[mc.b].tid;
	}

	/* the right page: the rest if it fits, else what a build would put there */
	if (total - plan.cut > (Size) nslots)
	{
		int			oldrest = mc.nold - mc.a;
		Size		take = oldrest < target ? target - oldrest : 0;

		mc.k = Min(mc.k, mc.b + take);
	}
	while (m < 2 * GBT_MAX_SLOTS && merge_next(&mc, &sb->keys[m], &sb->tids[m]))
		m++;
	if (mc.a < mc.nold || m - plan.cut > nslots)
		elog(ERROR, "gbtree: batch split of block %u of index \"%s\" does not fit",
			 BufferGetBlockNumber(buf), RelationGetRelationName(index));
	sb->n = m;
	plan.rspread = true;
	memset(sb->child, 0, sizeof(uint32) * m);

	if (BufferIsValid(pbuf))
		split_page(index, pbuf, buf, sb, &plan, may_recycle);
	else
		split_root(index, buf, sb, &plan, may_recycle);
	pfree(sb);
	pfree(okeys);
	pfree(otids);
	return i + mc.b;
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
} GbtMergeSmo;

static bool
merge_at_leaf(Relation index, Buffer pbuf, Buffer buf, bool may_recycle, void *arg)
{
	GbtMergeSmo *ms = (GbtMergeSmo *) arg;
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));
	Size		j = leaf_run_end(op, ms->e, ms->i, ms->n);

	if (leaf_has_room(index, buf, j - ms->i))
	{
		/* no split needed: back to the optimistic path */
		merge_into_leaf(index, buf, ms->e + ms->i, j - ms->i, ms->dedup);
		ms->i = j;
		return true;
	}
	ms->i = split_merged(index, pbuf, buf, ms->e, ms->i, j, ms->dedup, may_recycle);
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
merge_pessimistic(Relation index, BlockNumber root, const GbtEntry *e, Size i, Size n,
				  bool dedup)
{
	GbtMergeSmo ms;

	ms.target.key = e[i].key;
	ms.target.tid = e[i].tid;
	ms.e = e;
	ms.i = i;
	ms.n = n;
	ms.dedup = dedup;
	ms.steps = 0;
	smo_run(index, root, &ms.target, merge_at_leaf, &ms);
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
		if (op->page_id != GBT_PAGE_ID || op->nslots != GBT_LEAF_SLOTS ||
			op->nused > op->nslots || op->level != 0 ||
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
gbt_insert_sorted(Relation index, BlockNumber root, const GbtEntry *e, Size n, bool dedup,
				  const BlockNumber *leaves, uint64 *hinted, uint64 *descended)
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
		if (leaf_has_room(index, buf, j - i))
		{
			merge_into_leaf(index, buf, e + i, j - i, dedup);
			UnlockReleaseBuffer(buf);
			i = j;
			continue;
		}
		UnlockReleaseBuffer(buf);
		i = merge_pessimistic(index, root, e, i, n, dedup);
	}
}

#if PG_VERSION_NUM >= 170000
/*
 * An inserting statement ends (17+): its pending entries go into the tree
 * now, while the statement still holds the index's lock, so no entry is
 * ever pending while another backend may copy or rebuild the index, and a
 * batch spans one statement.  Before 17 the batch waits for the flush
 * points of src/README ("Batched insertion"), COMMIT at the latest.
 */
void
gbtinsertcleanup(Relation index, IndexInfo *indexInfo)
{
	gbt_batch_flush_index(RelationGetRelid(index));
}
#endif

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

	if (gbt_batch_accepts(index, indexInfo))
		gbt_batch_add(index, heapRel, isnull[0], key, tid);
	else if (!insert_optimistic(index, root, key, tid))
		insert_pessimistic(index, root, key, tid);
	return false;
}
