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
 * Batched insertion (gbt_insert_sorted in insert_merge.c, fed by batch.c)
 * follows the same protocol with sorted runs of entries instead of one:
 * all of a leaf's new entries go in under one exclusive lock and one WAL
 * record, and a leaf that cannot hold them splits with its merged content,
 * a step at a time, each step one atomic split record as above.
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

#include "gbtree_wide.h"
#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_insert.h"
#include "gbtree_xlog.h"

/*
 * Split scratch (160 kB each): gbt_split_sb for the plan of a split
 * (split_single, split_merged and their merged entries), left_sb for
 * rebuilding the left page, which happens within a split and in redo.
 */
GbtSplitBuf gbt_split_sb;
static GbtSplitBuf left_sb;
uint64 gbt_split_okeys[GBT_LEAF_MAX_ENTRIES];
uint64 gbt_split_otids[GBT_LEAF_MAX_ENTRIES];
uint64 gbt_split_mkeys[GBT_SPLIT_MAX];
uint64 gbt_split_mtids[GBT_SPLIT_MAX];
static GbtEntry split_lnew[GBT_LEAF_MAX_ENTRIES];

/* Gather a page's entries, with (key, tid) merged in if addnew. */
static int
gather(Page page, GbtSplitBuf *sb, bool addnew, uint64 key, uint64 tid)
{
	int			n;
	int			pos;

	if (gbt_page_opaque((char *) page)->flags & GBT_F_LEAF)
	{
		n = gbt_leaf_extract((char *) page, sb->keys, sb->tids);
		memset(sb->child, 0, sizeof(uint32) * n);
	}
	else
	{
		GbtNode		node;

		gbt_page_view(page, &node);
		n = gbt_node_extract(&node, sb->keys, sb->tids, sb->child);
	}
	pos = n;

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
bool
gbt_page_has_entry(Page page, uint64 key, uint64 tid)
{
	GbtNode		node;
	int			s;

	if (gbt_page_is_posting((char *) page))
	{
		GbtPost		p;

		gbt_post_view((char *) page, &p);
		s = gbt_post_lower_bound_entry(&p, key, tid);
		return s < p.hdr->nentries && gbt_post_tid(&p, s) == tid &&
			gbt_post_key_at(&p, s) == key;
	}
	gbt_page_view(page, &node);
	s = gbt_node_next_used(&node, gbt_node_lower_bound_entry(&node, key, tid));
	return s < node.nslots && node.keys[s] == key && node.tids[s] == tid;
}

/*
 * A page about to be rebuilt from its own entries must hold them in order:
 * rewriting a damaged page would hide the damage.
 */
void
gbt_check_rebuilt_page(Relation index, Buffer buf)
{
	GbtNode		node;
	const char *why;

	if (gbt_page_is_posting((char *) BufferGetPage(buf)))
		why = gbt_post_check((char *) BufferGetPage(buf));
	else
	{
		gbt_page_view(BufferGetPage(buf), &node);
		why = gbt_node_check(&node);
	}
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
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));

	/* a rewrite (posting form): gbt_page_insert checks that they fit */
	if ((op->flags & GBT_F_POSTING) || op->nused + n > op->nslots)
		return;
	gbt_page_view(BufferGetPage(buf), &node);
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
 * How many of the sorted entries [0, n) one leaf takes when packed to pct
 * percent, as a build packs: the plain form's share of its slots, or,
 * with dedup where keys repeat, as many as the posting form holds in pct
 * percent of the page.
 */
int
gbt_leaf_prefix(bool dedup, const uint64 *keys, const uint64 *tids, int n, int pct)
{
	GbtLeafShape sh = {0};
	int			best = Min(n, Max(1, GBT_LEAF_SLOTS * pct / 100));

	if (!dedup)
		return best;
	for (int m = 0; m < n && m < GBT_POST_MAX_ENTRIES; m++)
	{
		gbt_shape_add(&sh, tids[m], m == 0 || keys[m] != keys[m - 1]);
		if (gbt_shape_within(&sh, dedup, pct))
			best = Max(best, m + 1);
		else if (sh.n > GBT_LEAF_SLOTS * pct / 100 && gbt_shape_post_size(&sh) > gbt_post_limit(pct))
			break;				/* the posting size only grows from here */
	}
	return best;
}

/*
 * Where to split the n entries of sb: in the middle, except when a leaf
 * grows at its end: ascending keys at the rightmost leaf, or duplicates of
 * one key arriving in heap order, which always land after their equals.
 * Then the left page keeps the fillfactor, so such loads pack pages as
 * tightly as a build instead of leaving them half full.
 */
static int
split_point(Relation index, GbtSplitBuf *sb, bool leaf, int newpos)
{
	int			n = sb->n;

	if (leaf && newpos == n - 1)
	{
		int			cap = gbt_leaf_prefix(gbt_get_dedup(index), sb->keys, sb->tids, n,
									  gbt_get_fillfactor(index));

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
	if (leaf)
	{
		gbt_leaf_fill((char *) page, n, keys, tids, spread);
		gbt_leaf_set_lower(page);
		return;
	}
	gbt_page_view(page, &node);
	gbt_node_load_spread(&node, n, keys, tids, child, spread);
}

/*
 * Insert n entries, gap by gap; false if they do not fit.  A leaf in
 * posting form, or one whose slots cannot take them, is rewritten with
 * them merged in (gbt_page_merge), in whichever form holds them.
 */
bool
gbt_page_insert(Page page, const uint64 *keys, const uint64 *tids, const uint32 *child, int n)
{
	GbtNode		node;
	bool		gaps;

	return gbt_page_insert_view(page, keys, tids, child, n, &node, &gaps);
}

/*
 * gbt_page_insert, and *gaps whether the entries went in gap by gap, *node
 * then the view they went through (its slots changed: gbt_gxlog_hint_node)
 */
bool
gbt_page_insert_view(Page page, const uint64 *keys, const uint64 *tids, const uint32 *child,
					 int n, GbtNode *node, bool *gaps)
{
	GbtPageOpaque op = gbt_page_opaque((char *) page);

	*gaps = false;
	if ((op->flags & GBT_F_LEAF) &&
		((op->flags & GBT_F_POSTING) || op->nused + n > op->nslots))
	{
		GbtEntry   *e = palloc(sizeof(GbtEntry) * n);
		bool		ok;

		for (int i = 0; i < n; i++)
		{
			int			j = i;

			/* sorted, as gbt_page_merge wants (they come sorted already) */
			while (j > 0 && gbt_entry_lt(keys[i], tids[i], e[j - 1].key, e[j - 1].tid))
			{
				e[j] = e[j - 1];
				j--;
			}
			e[j].key = keys[i];
			e[j].tid = tids[i];
		}
		ok = gbt_leaf_merge(page, e, n, true);
		pfree(e);
		return ok;
	}
	gbt_page_view(page, node);
	if (node->opaque->flags & GBT_F_LEAF)
		gbt_leaf_clear_dead((char *) page);	/* the slots move */
	*gaps = true;
	for (int i = 0; i < n; i++)
		if (gbt_node_insert(node, keys[i], tids[i], child ? child[i] : 0) < 0)
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
	GbtSplitBuf *sb = &left_sb;
	uint64	   *okeys = sb->keys + GBT_LEAF_MAX_ENTRIES + 2;
	uint64	   *otids = sb->tids + GBT_LEAF_MAX_ENTRIES + 2;
	uint32	   *ochild = sb->child + GBT_LEAF_MAX_ENTRIES + 2;
	int			nold,
				a = 0,
				b = 0,
				m = 0;

	if (old.flags & GBT_F_LEAF)
	{
		nold = gbt_leaf_extract((char *) page, okeys, otids);
		memset(ochild, 0, sizeof(uint32) * nold);
	}
	else
	{
		GbtNode		node;

		gbt_page_view(page, &node);
		nold = gbt_node_extract(&node, okeys, otids, ochild);
	}
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
	int			pos;

	pos = gather(BufferGetPage(buf), sb, addnew, key, tid);
	plan->cut = split_point(index, sb, leaf, addnew ? pos : -1);
	if (leaf && (!gbt_leaf_fits(plan->cut, sb->keys, sb->tids) ||
				 !gbt_leaf_fits(sb->n - plan->cut, sb->keys + plan->cut, sb->tids + plan->cut)))
		elog(ERROR, "gbtree: split of block %u of index \"%s\" does not fit two pages",
			 BufferGetBlockNumber(buf), RelationGetRelationName(index));
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
void
gbt_split_page(Relation index, Buffer pbuf, Buffer buf, GbtSplitBuf *sb,
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

	gbt_check_rebuilt_page(index, buf);
	/* the left part's entries that the page does not hold yet */
	lnew = split_lnew;
	{
		for (int i = 0; i < plan->cut; i++)
			if (!gbt_page_has_entry(BufferGetPage(buf), sb->keys[i], sb->tids[i]))
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
}

/*
 * Split the root in place: sb's two parts move to two new pages and the
 * root becomes an inner page one level up.
 */
void
gbt_split_root(Relation index, Buffer rootbuf, GbtSplitBuf *sb, const GbtSplitPlan *plan,
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

	gbt_check_rebuilt_page(index, rootbuf);
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
	GbtSplitBuf *sb = &gbt_split_sb;
	GbtSplitPlan plan;

	plan_single_split(index, buf, sb, addnew, key, tid, &plan);
	if (BufferIsValid(pbuf))
		gbt_split_page(index, pbuf, buf, sb, &plan, may_recycle);
	else
		gbt_split_root(index, buf, sb, &plan, may_recycle);
}

/*
 * Insert n (at most GBT_MERGE_REWRITE_MIN) entries into the exclusively
 * locked leaf buf, which has room for them: one XLOG_GBT_INSERT record,
 * written in place with the resource manager, else through the builder.
 */
void
gbt_leaf_insert_few(Relation index, Buffer buf, const uint64 *keys, const uint64 *tids, int n)
{
	uint32		child[GBT_MERGE_REWRITE_MIN] = {0};
	BlockNumber blkno = BufferGetBlockNumber(buf);

	Assert(n > 0 && n <= GBT_MERGE_REWRITE_MIN);
	check_leaf_room(index, buf, n);
	if (!gbt_wal_insert_inplace(index, buf, keys, tids, child, n))
	{
		GbtWal	   *w = gbt_wal_start(index);
		Page		page = gbt_wal_register(w, buf, 0);
		GbtNode		node;
		bool		gaps;

		if (!gbt_page_insert_view(page, keys, tids, child, n, &node, &gaps))
		{
			gbt_wal_abort(w);
			elog(ERROR, "gbtree: leaf unexpectedly full");
		}
		if (gaps)
			gbt_wal_hint_node(w, 0, page, &node);
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

/*
 * Could a full plain leaf with k more entries repeat keys enough for the
 * posting form (gbt_leaf_worth_posting)?  Its distinct keys alone bound the
 * merged leaf's from below: a cheap test that spares distinct keys (most
 * splits) the merge that measures the posting form.
 */
static bool
plain_leaf_may_repeat(Page page, Size k)
{
	GbtNode		node;
	int			g = 0;
	uint64		prev = 0;

	gbt_page_view(page, &node);
	for (int s = gbt_node_first_used(&node); s < node.nslots; s = gbt_node_next_used(&node, s + 1))
	{
		g += (g == 0 || node.keys[s] != prev);
		prev = node.keys[s];
	}
	return 2 * (Size) g <= node.opaque->nused + k;
}

bool
gbt_leaf_has_room(Relation index, Buffer buf, const GbtEntry *e, Size k)
{
	Page		page = BufferGetPage(buf);
	GbtPageOpaque op = gbt_page_opaque((char *) page);
	bool		posting = (op->flags & GBT_F_POSTING) != 0;

	if (!posting)
	{
		/* a few entries go in in place: not where that shifts many slots */
		bool		crowded = k < GBT_MERGE_REWRITE_MIN &&
			gbt_leaf_crowded(index, page, &e[0].key, e[0].tid);

		if (op->nused + k <= (Size) op->nslots && !crowded)
			return true;
		if (gbt_leaf_reclaim_dead(index, buf) && op->nused + k <= (Size) op->nslots &&
			!(crowded && gbt_leaf_crowded(index, page, &e[0].key, e[0].tid)))
			return true;
		/* as nbtree: deduplicate only what would otherwise split */
		if (!gbt_get_dedup(index) || !plain_leaf_may_repeat(page, k))
			return false;
	}
	return gbt_leaf_merge_fits(page, e, k, posting);
}

/*
 * Insert (key, tid) into the exclusively locked leaf buf if it has room,
 * and say whether it did (the optimistic insert; unique.c's too).
 */
bool
gbt_leaf_insert_if_room(Relation index, Buffer buf, uint64 key, uint64 tid)
{
	GbtEntry	e = {key, tid};

	if (!gbt_leaf_has_room(index, buf, &e, 1))
		return false;
	gbt_leaf_insert_few(index, buf, &key, &tid, 1);
	return true;
}

/* Returns false if the leaf is full and an SMO is needed. */
static bool
insert_optimistic(Relation index, BlockNumber root, uint64 key, uint64 tid)
{
	Buffer		buf = gbt_descend(index, root, key, tid, false, BUFFER_LOCK_EXCLUSIVE);
	bool		inserted = gbt_leaf_insert_if_room(index, buf, key, tid);

	UnlockReleaseBuffer(buf);
	return inserted;
}


/*
 * A structure modification: under the SMO lock, descend from the root to
 * the target's leaf with exclusive lock coupling, splitting every full
 * inner page on the way (and starting over after one), and hand the leaf
 * to action.
 */
void
gbt_smo_run(Relation index, BlockNumber root, GbtSmoTarget *target, GbtLeafAction action,
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

/*
 * An SMO to (key, tid)'s leaf that hands it, with its parent, to action
 * (unique.c); see gbt_smo_run and GbtLeafAction.
 */
void
gbt_smo_at_leaf(Relation index, BlockNumber root, uint64 key, uint64 tid,
				GbtLeafAction action, void *arg)
{
	GbtSmoTarget t = {key, tid};

	gbt_smo_run(index, root, &t, action, arg);
}

/*
 * Within an SMO action: put (key, tid) into leaf buf, splitting it if it
 * has no room; or, without addnew, split it if it has no room for one more.
 */
void
gbt_leaf_insert_or_split(Relation index, Buffer pbuf, Buffer buf, bool addnew,
						 uint64 key, uint64 tid, bool may_recycle)
{
	GbtEntry	e = {key, tid};

	if (gbt_leaf_has_room(index, buf, &e, 1))
	{
		if (addnew)
			gbt_leaf_insert_few(index, buf, &key, &tid, 1);
	}
	else
		split_single(index, pbuf, buf, addnew, key, tid, may_recycle);
}

/* A single insert's SMO: into the leaf if it has room by now, else split it */
static bool
insert_at_leaf(Relation index, Buffer pbuf, Buffer buf, bool may_recycle, void *arg)
{
	GbtSmoTarget *t = (GbtSmoTarget *) arg;

	gbt_leaf_insert_or_split(index, pbuf, buf, true, t->key, t->tid, may_recycle);
	return true;
}

static void
insert_pessimistic(Relation index, BlockNumber root, uint64 key, uint64 tid)
{
	GbtSmoTarget t = {key, tid};

	gbt_smo_run(index, root, &t, insert_at_leaf, &t);
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
	gbt_batch_flush_inserted(index);
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
	bool		unique = checkUnique != UNIQUE_CHECK_NO;

	if (info->wide)
	{
		uint64		words[GBT_MAX_KEY_WORDS];
		uint16		flags;
		unsigned char tail[GBT_TAIL_HIGHEST_LEN];
		int			tlen;

		/* a row with a NULL column is distinct unless NULLS NOT DISTINCT */
		for (int c = 0; c < info->nkeycols && unique; c++)
			if (isnull[c])
				unique = indexInfo != NULL && indexInfo->ii_NullsNotDistinct;
		root = gbt_wide_encode_tail(info, values, isnull, ht_ctid, words, &flags, tail, &tlen, NULL) ?
			GBT_ROOT_BLKNO : GBT_NULLROOT_BLKNO;
		tid = gbt_tid_from_itemptr(ht_ctid, flags);
		if (unique && checkUnique == UNIQUE_CHECK_YES && root == GBT_ROOT_BLKNO &&
			gbt_batch_unique_defers(index, heapRel, indexInfo))
		{
			/*
			 * Checked now against the stored entries (a duplicate fails at
			 * its row, as nbtree's), and again where the statement's flush
			 * puts it in (unique.c, gbt_wide_unique_fits_leaf).
			 */
			gbt_wide_insert_unique(index, heapRel, UNIQUE_CHECK_EXISTING, root, words,
								   (GbtTail) {tail, tlen}, tid, values, isnull);
			gbt_batch_add_words(index, heapRel, false, words, info->nwords,
								(GbtTail) {tail, tlen}, tid);
			return true;
		}
		if (unique)
			return gbt_wide_insert_unique(index, heapRel, checkUnique, root, words,
										  (GbtTail) {tail, tlen}, tid, values, isnull);
		if (checkUnique == UNIQUE_CHECK_EXISTING)
			return true;
		if (checkUnique == UNIQUE_CHECK_NO && gbt_batch_accepts(index, indexInfo))
			gbt_batch_add_words(index, heapRel, root == GBT_NULLROOT_BLKNO, words,
								info->nwords, (GbtTail) {tail, tlen}, tid);
		else
			gbt_wide_insert(index, root, words, (GbtTail) {tail, tlen}, tid);
		return checkUnique != UNIQUE_CHECK_NO;
	}
	if (isnull[0])
	{
		/* NULLs are distinct from each other unless NULLS NOT DISTINCT */
		unique = unique && indexInfo != NULL && indexInfo->ii_NullsNotDistinct;
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

	if (unique && checkUnique == UNIQUE_CHECK_YES && root == GBT_ROOT_BLKNO &&
		gbt_batch_unique_defers(index, heapRel, indexInfo))
	{
		/* as for multi-word keys above */
		gbt_insert_unique(index, heapRel, UNIQUE_CHECK_EXISTING, root, key, tid, values, isnull);
		gbt_batch_add(index, heapRel, false, key, tid);
		return true;
	}
	if (unique)
		return gbt_insert_unique(index, heapRel, checkUnique, root, key, tid, values, isnull);
	if (checkUnique == UNIQUE_CHECK_EXISTING)
		return true;			/* a NULL, distinct: nothing to recheck */
	if (checkUnique == UNIQUE_CHECK_NO && gbt_batch_accepts(index, indexInfo))
		gbt_batch_add(index, heapRel, isnull[0], key, tid);
	else if (!insert_optimistic(index, root, key, tid))
		insert_pessimistic(index, root, key, tid);
	return checkUnique != UNIQUE_CHECK_NO;
}
