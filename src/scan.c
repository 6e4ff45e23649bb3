/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Index scans for gbtree: amgettuple (both directions, mark/restore),
 *	  array keys, IS [NOT] NULL, index-only scans.  The scans that return
 *	  every match at once (amgetbitmap, TID and entry sinks) are in
 *	  scan_bulk.c.
 *
 * Scan keys are reduced to a list of "segments" in index order: the tree
 * of values with a sorted list of disjoint key ranges (one range for plain
 * quals, one point range per distinct array element), and the tree of
 * NULLs.  A scan reads one leaf at a time under a share lock, copies every
 * entry of that leaf that falls in any range (all array keys that land on
 * the leaf are served from that one visit), then drops the lock and keeps
 * the pin while it returns them.  The right-link and left-link saved with
 * the copy lead to the neighbour pages (Lehman and Yao); a next range that
 * starts beyond the leaf's high key is found by a fresh descent.
 *
 * The scan keys become segments in scankey.c; parallel scans, which split
 * the segments into chunks that participants claim, are in
 * scan_parallel.c.  A scan with enough keys can run as GPU batches
 * instead, which return every match at once (gbt_scan_gpu_fetch).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_keys.h"
#include "gbtree_scan.h"
#include "gbtree_wide.h"

static void mark_killed(IndexScanDesc scan);

IndexScanDesc
gbtbeginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan;
	GbtScanOpaque so;

	/* this backend's own pending entries first (batch.c) */
	gbt_batch_flush_index(RelationGetRelid(index));
	scan = RelationGetIndexScan(index, nkeys, norderbys);
	if (gbt_index_is_wide(index))
		return gbt_wide_beginscan(scan);

	/*
	 * Not palloc0: the position holds a leaf's worth of items (8 KB) that
	 * are written before they are read, and zeroing them is a measurable
	 * part of a point lookup.
	 */
	so = palloc(sizeof(GbtScanOpaqueData));
	memset(so, 0, offsetof(GbtScanOpaqueData, pos));
	memset(&so->pos, 0, offsetof(GbtScanPos, items));
	so->mark = NULL;
	so->markValid = false;
	so->par_serial = false;
	so->par_chunk = false;
	so->clip = false;
	so->gpu_items = NULL;
	so->gpu_locked = false;
	so->killed = NULL;
	so->nkilled = 0;
	so->info = gbt_index_info_copy(index);
	so->keycxt = NULL;
	so->tupcxt = NULL;			/* made on first use (index-only NULLs) */
	so->buf = InvalidBuffer;
	so->pos.seg = -1;

	/*
	 * All supported types are fixed-width and passed by value: the index
	 * tuple for a non-null key is built in place, no per-row allocation.
	 */
	so->attlen = TupleDescAttr(RelationGetDescr(index), 0)->attlen;
	so->itup = palloc0(MAXALIGN(sizeof(IndexTupleData)) + sizeof(Datum));
	so->itup->t_info = MAXALIGN(MAXALIGN(sizeof(IndexTupleData)) + so->attlen);
	so->int64_keys = !so->info->desc &&
		(so->info->keytype == INT8OID || so->info->keytype == TIMESTAMPOID ||
		 so->info->keytype == TIMESTAMPTZOID);
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(index);
	return scan;
}

/* Drop the pin on the current leaf, if the scan holds one. */
void
gbt_scan_drop_pin(GbtScanOpaque so)
{
	if (BufferIsValid(so->buf))
	{
		ReleaseBuffer(so->buf);
		so->buf = InvalidBuffer;
	}
}

/* ------------------------------------------------------------------------
 * Reading leaves
 * ------------------------------------------------------------------------
 */

/* first range whose hi >= key, or nranges */
static int
first_range_hi_ge(GbtSegment *seg, uint64 key)
{
	int			lo = 0,
				hi = seg->nranges;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (seg->ranges[mid].hi < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* last range whose lo <= key, or -1 */
static int
last_range_lo_le(GbtSegment *seg, uint64 key)
{
	int			lo = 0,
				hi = seg->nranges;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (seg->ranges[mid].lo <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/*
 * Whether to keep the pin on a leaf while returning its TIDs.  The pin is
 * what makes VACUUM's cleanup lock wait, so that a TID is not recycled
 * under a scan about to visit it.  As nbtree does, an MVCC scan of a
 * WAL-logged index that visits the heap needs no such interlock (a
 * recycled TID's new tuple is invisible to its snapshot), so it drops the
 * pin and never holds up VACUUM; index-only scans keep it.
 */
static bool
needs_leaf_pin(IndexScanDesc scan)
{
	return !(IsMVCCSnapshot(scan->xs_snapshot) &&
			 RelationNeedsWAL(scan->indexRelation) &&
			 !scan->xs_want_itup);
}

/*
 * buf was just read (and pinned) as the scan's current leaf: keep exactly
 * one pin on it if keep, none otherwise, and none on the previous leaf.
 * Re-reading the leaf already pinned takes a second pin, dropped here.
 */
static void
hold_leaf_pin(IndexScanDesc scan, Buffer buf, bool keep)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (so->buf == buf)
		ReleaseBuffer(buf);
	else
	{
		gbt_scan_drop_pin(so);
		so->buf = buf;
	}
	if (!keep)
		gbt_scan_drop_pin(so);
}

/*
 * read_leaf for a leaf in posting form: each range's first key found by
 * the same SIMD counts over the distinct keys, then their posting lists.
 * Posting leaves carry no dead-entry marks.  Returns the entries copied.
 */
static int
read_posting(GbtSegment *seg, Page page, GbtScanPos *pos)
{
	GbtPost		p;
	GbtNode		kn;
	int			ng;
	int			n = 0;

	gbt_post_view((char *) page, &p);
	gbt_post_key_node(&p, &kn);
	ng = p.hdr->ngroups;
	pos->hasentries = ng > 0;
	if (ng == 0)
		return 0;
	pos->lowkey = p.keys[0];
	for (int r = first_range_hi_ge(seg, p.keys[0]);
		 r < seg->nranges && seg->ranges[r].lo <= p.keys[ng - 1]; r++)
	{
		uint64		rhi = seg->ranges[r].hi;

		for (int g = gbt_node_lower_bound(&kn, seg->ranges[r].lo);
			 g < ng && p.keys[g] <= rhi; g++)
		{
			uint64		key = p.keys[g];
			int			from = p.start[g];
			int			to = p.start[g + 1];
			GbtEntry   *out = &pos->items[n];

			/* one loop per block width: this is an ordered scan's inner loop */
			if (p.blocks16)
			{
				uint32		base = p.hdr->baseblk;

				for (int i = from; i < to; i++)
				{
					out[i - from].key = key;
					out[i - from].tid = gbt_post_tid_at(base + p.blocks16[i], p.offs[i]);
				}
			}
			else
				for (int i = from; i < to; i++)
				{
					out[i - from].key = key;
					out[i - from].tid = gbt_post_tid_at(p.blocks32[i], p.offs[i]);
				}
			n += to - from;
		}
	}
	return n;
}

/*
 * Copy the entries of the locked leaf in buf that fall in segment seg's
 * ranges into so->pos; then unlock, keeping the pin as so->buf.
 */
static void
read_leaf(IndexScanDesc scan, Buffer buf, int segno)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtSegment *seg = &so->segs[segno];
	GbtScanPos *pos = &so->pos;
	Page		page = BufferGetPage(buf);
	GbtNode		node;
	GbtPageOpaque op;
	int			first,
				last,
				n = 0;

	op = gbt_page_opaque((char *) page);
	if (!(op->flags & GBT_F_LEAF))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a non-leaf page where a leaf was expected at block %u",
						RelationGetRelationName(scan->indexRelation),
						BufferGetBlockNumber(buf))));

	pos->seg = segno;
	pos->nullkeys = seg->root == GBT_NULLROOT_BLKNO;
	pos->blk = BufferGetBlockNumber(buf);
	pos->next = op->rightlink;
	pos->prev = op->leftlink;
	pos->rightmost = (op->flags & GBT_F_RIGHTMOST) != 0;
	pos->deleted = (op->flags & GBT_F_DELETED) != 0;
	pos->pagelowkey = op->lowkey;
	pos->pagelowtid = op->lowtid;
	pos->lsn = BufferGetLSNAtomic(buf);
	if (pos->deleted)
	{
		/* its key range went right: the next page starts where it did */
		pos->hikey = op->lowkey;
		pos->hitid = op->lowtid;
		pos->nitems = 0;
		pos->hasentries = false;
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		hold_leaf_pin(scan, buf, false);
		pos->pinned = false;
		return;
	}
	pos->hikey = op->hikey;
	pos->hitid = op->hitid;

	if (gbt_page_is_posting((char *) page))
	{
		n = read_posting(seg, page, pos);
		goto clip;
	}
	gbt_page_view(page, &node);
	first = gbt_node_first_used(&node);
	last = gbt_node_last_used(&node);
	pos->hasentries = first < node.nslots;
	if (pos->hasentries)
	{
		uint64		fk = node.keys[first];
		uint64		lk = node.keys[last];
		int			r = first_range_hi_ge(seg, fk);
		int			nwords = (node.nslots + 63) / 64;
		bool		disorder = false;
		const uint64 *dead = gbt_leaf_dead((char *) page);

		/*
		 * Entries marked dead are skipped, as nbtree skips LP_DEAD items,
		 * except by a transaction that began in recovery: marks made on
		 * the primary may count tuples dead that its snapshot still sees
		 * (they are not WAL-logged, but a base backup copies them).
		 */
		if (!scan->ignore_killed_tuples)
			dead = NULL;

		pos->lowkey = fk;

		for (; r < seg->nranges && seg->ranges[r].lo <= lk; r++)
		{
			uint64		rhi = seg->ranges[r].hi;
			int			s = gbt_node_lower_bound(&node, seg->ranges[r].lo);
			bool		done = false;

			/* walk the used-slot bitmap from s while keys stay <= rhi */
			for (int w = s >> 6; w < nwords && !done; w++)
			{
				uint64		bits = gbt_node_live_bits(&node, dead, w, s, node.nslots);

				while (bits)
				{
					int			t = (w << 6) + pg_rightmost_one_pos64(bits);

					bits &= bits - 1;
					if (t >= node.nslots || node.keys[t] > rhi)
					{
						done = true;
						break;
					}
					pos->items[n].key = node.keys[t];
					pos->items[n].tid = node.tids[t];
					/* cheap guard: a damaged page must not yield rows silently */
					if (n > 0)
						disorder |= !gbt_entry_lt(pos->items[n - 1].key, pos->items[n - 1].tid,
												  node.keys[t], node.tids[t]);
					n++;
				}
			}
		}
		if (disorder)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" block %u: entries out of order",
							RelationGetRelationName(scan->indexRelation),
							BufferGetBlockNumber(buf)),
					 errhint("Please REINDEX it.")));
	}
clip:
	/* a parallel chunk ends where the next one starts */
	if (so->clip)
		while (n > 0 && !gbt_entry_lt(pos->items[n - 1].key, pos->items[n - 1].tid,
									  so->clip_key, so->clip_tid))
			n--;
	pos->nitems = n;

	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	pos->pinned = needs_leaf_pin(scan);
	hold_leaf_pin(scan, buf, pos->pinned);
}

/* Pin and share-lock block blkno of the index, after the basic page check. */
Buffer
gbt_read_shared(Relation index, BlockNumber blkno)
{
	Buffer		buf = ReadBuffer(index, blkno);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	gbt_check_page(index, buf);
	return buf;
}

static gbt_noreturn void
report_broken_left_link(Relation index, BlockNumber blkno)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\": left-link of block %u does not lead back to it",
					RelationGetRelationName(index), blkno),
			 errhint("Please REINDEX it.")));
}

/* Is block blkno now a deleted page?  (No other lock held by caller.) */
static bool
page_is_deleted(IndexScanDesc scan, BlockNumber blkno)
{
	Buffer		buf = gbt_read_shared(scan->indexRelation, blkno);
	bool		deleted;

	deleted = (gbt_page_opaque((char *) BufferGetPage(buf))->flags & GBT_F_DELETED) != 0;
	UnlockReleaseBuffer(buf);
	return deleted;
}

/*
 * Read the right sibling of pos's leaf (share lock).
 *
 * It must start exactly where our leaf ended: its low key is our saved high
 * key, whatever splits happened since.  One thing lowers it legitimately:
 * VACUUM deleted our (by then empty) leaf and handed its low key to this
 * sibling.  A low key above ours means skipped pages, and one below ours
 * with our leaf still in place means a link to the wrong page: both are
 * damage, and following them would lose or repeat entries silently.
 */
static void
read_right_sibling(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	Relation	index = scan->indexRelation;
	BlockNumber from = pos->blk;
	BlockNumber next = pos->next;
	Buffer		buf;
	GbtPageOpaque op;

	buf = gbt_read_shared(index, next);
	op = gbt_page_opaque((char *) BufferGetPage(buf));
	if (op->lowkey != pos->hikey || op->lowtid != pos->hitid)
	{
		bool		below = gbt_entry_lt(op->lowkey, op->lowtid, pos->hikey, pos->hitid);

		/* look at our own leaf with no lock held on the sibling */
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (!below || !page_is_deleted(scan, from))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" block %u: low key does not match its left sibling's high key",
							RelationGetRelationName(index), next),
					 errhint("Please REINDEX it.")));
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		gbt_check_page(index, buf);
	}
	read_leaf(scan, buf, pos->seg);
}

/*
 * Position on the first entry >= (key, tid) (forward) or the last entry
 * < (key, tid) (backward) of segment segno.  Returns false if the leaf we
 * land on has no such item; pos then describes that leaf.
 */
bool
gbt_seek_entry(IndexScanDesc scan, int segno, uint64 key, uint64 tid,
			   bool backward)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;
	Buffer		buf;
	int			lo = 0,
				hi;

	gbt_count_index_search(scan);
	buf = gbt_descend(scan->indexRelation, so->segs[segno].root, key, tid,
					  backward, BUFFER_LOCK_SHARE);
	read_leaf(scan, buf, segno);

	/* first item >= (key, tid) */
	hi = pos->nitems;
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (gbt_entry_lt(pos->items[mid].key, pos->items[mid].tid, key, tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	pos->itemIndex = backward ? lo - 1 : lo;
	return pos->itemIndex >= 0 && pos->itemIndex < pos->nitems;
}

/* Position on the first (forward) or last (backward) entry of segment segno */
bool
gbt_seek_segment_start(IndexScanDesc scan, int segno, bool backward)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtSegment *seg = &so->segs[segno];

	if (!backward)
		return gbt_seek_entry(scan, segno, seg->ranges[0].lo, 0, false);
	else
	{
		uint64		h = seg->ranges[seg->nranges - 1].hi;

		if (h == UINT64_MAX)
			return gbt_seek_entry(scan, segno, UINT64_MAX, UINT64_MAX, true);
		return gbt_seek_entry(scan, segno, h + 1, 0, true);
	}
}

/*
 * Find the left neighbour of pos's leaf: the page at the saved left-link,
 * or, if that page split since, the page to its right whose right-link is
 * our leaf.  Deleted pages on the way are stepped over to their left.  If
 * our own leaf was deleted, its left neighbour now links to its right
 * sibling, so that is the right-link to look for.  Returns InvalidBuffer
 * if the leaves left of us have all been deleted meanwhile.
 */
static Buffer
lock_left_sibling(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	BlockNumber target = so->pos.deleted ? so->pos.next : so->pos.blk;
	BlockNumber blk = so->pos.prev;
	int			hops = 0;

	for (;;)
	{
		Buffer		buf;
		GbtPageOpaque op;

		/*
		 * Reached through the left-link of a deleted page: VACUUM removed
		 * everything left of us (the leftmost leaves), nothing is there.
		 */
		if (blk == GBT_NO_BLOCK)
			return InvalidBuffer;
		if (++hops > 100000)
			report_broken_left_link(index, so->pos.blk);
		buf = gbt_read_shared(index, blk);
		op = gbt_page_opaque((char *) BufferGetPage(buf));
		if (!(op->flags & GBT_F_LEAF))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\": left-link of block %u leads to a non-leaf page",
							RelationGetRelationName(index), so->pos.blk)));
		if (op->flags & GBT_F_DELETED)
			blk = op->leftlink;
		else if (op->rightlink == target)
		{
			/*
			 * It ends where our leaf starts.  Our leaf's low key can only
			 * have dropped since we read it (it absorbed a deleted left
			 * neighbour), never risen.
			 */
			if (gbt_entry_lt(so->pos.pagelowkey, so->pos.pagelowtid, op->hikey, op->hitid))
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" block %u: high key is above its right sibling's low key",
								RelationGetRelationName(index), blk),
						 errhint("Please REINDEX it.")));
			return buf;
		}
		else if ((op->flags & GBT_F_RIGHTMOST) || op->rightlink == GBT_NO_BLOCK ||
				 gbt_entry_lt(so->pos.pagelowkey, so->pos.pagelowtid, op->lowkey, op->lowtid))
		{
			/*
			 * Walked past where our leaf was.  VACUUM may have deleted it
			 * since we read it (and maybe its right sibling too): then its
			 * left neighbour now links to the first live page to its
			 * right, the right-link to look for, and the walk starts again
			 * from the deleted page's left-link.
			 */
			BlockNumber t = target;
			bool		moved = false;

			UnlockReleaseBuffer(buf);
			for (;;)
			{
				Buffer		tbuf = gbt_read_shared(index, t);
				GbtPageOpaque top = gbt_page_opaque((char *) BufferGetPage(tbuf));
				bool		deleted = (top->flags & GBT_F_DELETED) != 0;

				if (deleted)
				{
					blk = top->leftlink;
					t = top->rightlink;
					moved = true;
				}
				UnlockReleaseBuffer(tbuf);
				if (!deleted)
					break;
				if (++hops > 100000)
					report_broken_left_link(index, so->pos.blk);
			}
			if (!moved)
				report_broken_left_link(index, so->pos.blk);
			target = t;
			continue;
		}
		else
			blk = op->rightlink;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The serial part of gbt_scan_next_leaf(); a parallel participant runs it inside the
 * chunk it claimed (so->par_chunk), where the end of the chunk (so->clip)
 * or of its segment ends the walk.
 */
bool
gbt_next_leaf_serial(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;

	for (;;)
	{
		GbtSegment *seg = &so->segs[pos->seg];

		CHECK_FOR_INTERRUPTS();
		if (ScanDirectionIsForward(dir))
		{
			int			r;

			/* everything right of this leaf is at or past the clip */
			if (so->clip && !pos->rightmost &&
				!gbt_entry_lt(pos->hikey, pos->hitid, so->clip_key, so->clip_tid))
			{
				pos->itemIndex = pos->nitems;
				return false;
			}
			if (!pos->rightmost)
				r = first_range_hi_ge(seg, pos->hikey);
			if (pos->rightmost || r >= seg->nranges)
			{
				/* this segment is done */
				if (pos->seg + 1 >= so->nsegs || so->par_chunk)
				{
					pos->itemIndex = pos->nitems;
					return false;
				}
				if (gbt_seek_segment_start(scan, pos->seg + 1, false))
					return true;
				continue;
			}
			if (so->clip && !gbt_entry_lt(seg->ranges[r].lo, 0, so->clip_key, so->clip_tid))
			{
				pos->itemIndex = pos->nitems;
				return false;
			}
			if (seg->ranges[r].lo <= pos->hikey)
			{
				read_right_sibling(scan);
				pos->itemIndex = 0;
				if (pos->nitems > 0)
					return true;
				continue;
			}
			/*
			 * The next range starts beyond this leaf.  Dense sorted keys
			 * usually land on the next leaf: try it before descending
			 * again, unless the key lies further beyond our high key than
			 * this leaf's own key span (sparse keys: descend directly).
			 */
			if (!pos->deleted && pos->hikey >= pos->pagelowkey &&
				seg->ranges[r].lo - pos->hikey > pos->hikey - pos->pagelowkey)
			{
				if (gbt_seek_entry(scan, pos->seg, seg->ranges[r].lo, 0, false))
					return true;
				continue;
			}
			read_right_sibling(scan);
			pos->itemIndex = 0;
			if (pos->nitems > 0)
				return true;
			if (pos->rightmost || pos->deleted || seg->ranges[r].lo <= pos->hikey)
				continue;
			if (gbt_seek_entry(scan, pos->seg, seg->ranges[r].lo, 0, false))
				return true;
		}
		else
		{
			int			r = seg->nranges - 1;
			bool		left = pos->prev != GBT_NO_BLOCK;

			if (left && pos->hasentries)
			{
				r = last_range_lo_le(seg, pos->lowkey);
				if (r < 0)
					left = false;
			}
			if (!left)
			{
				if (pos->seg == 0)
				{
					pos->itemIndex = -1;
					return false;
				}
				if (gbt_seek_segment_start(scan, pos->seg - 1, true))
					return true;
				continue;
			}
			if (!pos->hasentries || seg->ranges[r].hi >= pos->lowkey)
			{
				Buffer		buf = lock_left_sibling(scan);

				if (!BufferIsValid(buf))
				{
					pos->prev = GBT_NO_BLOCK;
					continue;
				}
				read_leaf(scan, buf, pos->seg);
				pos->itemIndex = pos->nitems - 1;
				if (pos->nitems > 0)
					return true;
				continue;
			}
			if (gbt_seek_entry(scan, pos->seg, seg->ranges[r].hi + 1, 0, true))
				return true;

			/*
			 * The leaf the descent chose has nothing below the target
			 * (its lower entries were deleted): the answer is to its left.
			 * Seeking again would find the same leaf.
			 */
			if (pos->prev == GBT_NO_BLOCK)
			{
				if (pos->seg == 0)
				{
					pos->itemIndex = -1;
					return false;
				}
				if (gbt_seek_segment_start(scan, pos->seg - 1, true))
					return true;
				continue;
			}
			{
				Buffer		buf = lock_left_sibling(scan);

				if (!BufferIsValid(buf))
				{
					pos->prev = GBT_NO_BLOCK;
					continue;
				}
				read_leaf(scan, buf, pos->seg);
				pos->itemIndex = pos->nitems - 1;
				if (pos->nitems > 0)
					return true;
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * Dead entries (src/README, "Dead entries")
 * ------------------------------------------------------------------------
 */

/*
 * The entry last returned from the current leaf has a heap tuple dead to
 * every transaction (the executor set kill_prior_tuple): remember it, to
 * be marked when the scan leaves the leaf.  Entries of GPU batches are
 * not remembered: they carry no leaf.
 */
static void
remember_killed(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;

	if (so->gpu_items || pos->seg < 0 || pos->itemIndex < 0 || pos->itemIndex >= pos->nitems)
		return;
	if (so->nkilled > 0 && (so->kill_blk != pos->blk || so->kill_lsn != pos->lsn ||
							so->kill_pinned != pos->pinned))
		mark_killed(scan);
	if (so->killed == NULL)
		so->killed = MemoryContextAlloc(GetMemoryChunkContext(so),
										sizeof(GbtEntry) * GBT_LEAF_MAX_ENTRIES);
	if (so->nkilled == 0)
	{
		so->kill_blk = pos->blk;
		so->kill_lsn = pos->lsn;
		so->kill_pinned = pos->pinned;
	}
	if (so->nkilled < GBT_LEAF_MAX_ENTRIES)
		so->killed[so->nkilled++] = pos->items[pos->itemIndex];
}

/*
 * Mark the remembered entries dead on their leaf, as nbtree's
 * _bt_killitems sets LP_DEAD: a hint, under a share lock, not WAL-logged.
 * Called with no buffer locked.  An entry is marked only where it is sure
 * to be the one the scan returned: if the scan kept its pin on the leaf
 * ever since it read it, VACUUM (which takes a cleanup lock on every leaf
 * before any heap TID is reused) cannot have let the entry's TID be
 * reused, so finding (key, TID) on the leaf is enough; otherwise the leaf
 * must be unchanged since it was read (same LSN, which only a WAL-logged
 * index moves), else nothing is marked.  A missed mark costs only a later
 * visit.  gbt_kill_leaf returns that leaf share-locked, or InvalidBuffer
 * where nothing may be marked (wide_scan.c uses it too).
 */
Buffer
gbt_kill_leaf(Relation index, Buffer pin, BlockNumber blk, XLogRecPtr lsn,
			  bool kill_pinned, int nwords, bool *release)
{
	bool		pinned = kill_pinned && BufferIsValid(pin) &&
		BufferGetBlockNumber(pin) == blk;
	Buffer		buf;
	Page		page;

	/* without WAL the LSN does not move: only the pin can vouch */
	if (!pinned && !RelationNeedsWAL(index))
		return InvalidBuffer;
	buf = pinned ? pin : ReadBuffer(index, blk);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if ((!pinned && BufferGetLSNAtomic(buf) != lsn) ||
		PageIsNew(page) || PageGetSpecialSize(page) != GBT_OPAQUE_SIZE ||
		(gbt_page_opaque((char *) page)->flags &
		 (GBT_F_LEAF | GBT_F_DELETED | GBT_F_POSTING | GBT_F_META)) != GBT_F_LEAF ||
		gbt_page_nwords(gbt_page_opaque((char *) page)) != nwords)
	{
		/* posting leaves carry no marks */
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (!pinned)
			ReleaseBuffer(buf);
		return InvalidBuffer;
	}
	*release = !pinned;			/* a pin of its own, not the scan's */
	return buf;
}

/* Let go of gbt_kill_leaf's leaf, dirtied as a hint if marked. */
void
gbt_kill_leaf_done(Buffer buf, bool marked, bool release)
{
	if (marked)
		MarkBufferDirtyHint(buf, true);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (release)
		ReleaseBuffer(buf);
}

static void
mark_killed(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	Buffer		buf;
	GbtNode		node;
	uint64	   *dead;
	bool		marked = false;
	bool		release;
	int			n = so->nkilled;

	if (n == 0)
		return;
	so->nkilled = 0;
	buf = gbt_kill_leaf(scan->indexRelation, so->buf, so->kill_blk, so->kill_lsn,
						so->kill_pinned, 1, &release);
	if (!BufferIsValid(buf))
		return;
	gbt_page_view(BufferGetPage(buf), &node);
	dead = gbt_leaf_dead((char *) BufferGetPage(buf));
	for (int i = 0; i < n; i++)
	{
		GbtEntry   *e = &so->killed[i];
		int			s = gbt_node_lower_bound_entry(&node, e->key, e->tid);

		/* a gap holds its next used slot's entry: that slot is the one */
		if (s < node.nslots)
			s = gbt_node_next_used(&node, s);
		if (s >= node.nslots || node.keys[s] != e->key || node.tids[s] != e->tid)
			continue;
		if (!(dead[s >> 6] & (UINT64CONST(1) << (s & 63))))
		{
			dead[s >> 6] |= UINT64CONST(1) << (s & 63);
			marked = true;
		}
	}
	gbt_kill_leaf_done(buf, marked, release);
}

/*
 * The current leaf is used up in direction dir: move to the next leaf
 * (or range, or segment) that has a matching entry.  Returns false at the
 * end, with pos left on the last leaf visited (itemIndex just past it), so
 * that a scroll in the other direction resumes correctly.
 */
bool
gbt_scan_next_leaf(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	mark_killed(scan);
	if (scan->parallel_scan && !so->par_serial)
	{
		if (!ScanDirectionIsForward(dir))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gbtree parallel scans cannot change direction")));
		return gbt_par_next(scan, 0);
	}
	return gbt_next_leaf_serial(scan, dir);
}

/* ------------------------------------------------------------------------
 * GPU scans
 * ------------------------------------------------------------------------
 */

/* Free the GPU batch's entries and the lock that covered them, if any. */
void
gbt_scan_gpu_release(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (so->gpu_items)
		pfree(so->gpu_items);
	so->gpu_items = NULL;
	if (so->gpu_locked)
		UnlockPage(scan->indexRelation, GBT_GPU_SCAN_LOCK, ShareLock);
	so->gpu_locked = false;
}

/*
 * The share lock on GBT_GPU_SCAN_LOCK that a GPU batch holds instead of
 * leaf pins; false (under auto) when VACUUM holds it, an error under gpu.
 */
bool
gbt_gpu_scan_lock(Relation index)
{
	if (ConditionalLockPage(index, GBT_GPU_SCAN_LOCK, ShareLock))
		return true;
	if (gbt_device_mode == GBT_DEVICE_GPU)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("gbtree: the GPU cannot serve a scan of index \"%s\" while VACUUM removes entries from it",
						RelationGetRelationName(index)),
				 errhint("Set gbtree.device to 'auto' to run it on the CPU meanwhile.")));
	return false;
}

/*
 * Run the whole scan as GPU batches (one per segment); gbt_scan_start() has found
 * that gbtree.device and the batch size call for it.  Returns true when
 * so->gpu_items holds the answer; false to run on the CPU.
 *
 * Entries come back without pins on their leaves.  Where a scan relies on
 * those pins to keep VACUUM from recycling TIDs under it (index-only and
 * non-MVCC scans, see needs_leaf_pin()), it holds a share lock on the
 * GBT_GPU_SCAN_LOCK tag instead, which VACUUM's deletion pass takes
 * exclusively; if VACUUM holds it now, the scan runs on the CPU.
 */
bool
gbt_scan_gpu_fetch(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	GbtEntry   *parts[2] = {NULL, NULL};
	uint64		counts[2] = {0, 0};
	MemoryContext oldcxt;

	if (needs_leaf_pin(scan))
	{
		if (!gbt_gpu_scan_lock(index))
			return false;
		so->gpu_locked = true;
	}
	/*
	 * The results must outlive this call: amgettuple runs in a per-tuple
	 * context that the executor resets.
	 */
	oldcxt = MemoryContextSwitchTo(GetMemoryChunkContext(so));
	for (int s = 0; s < so->nsegs; s++)
	{
		GbtSegment *seg = &so->segs[s];

		if (!gbt_gpu_lookup(index, seg->root, seg->ranges, seg->nranges,
							seg->ranges ? NULL : so->points, &parts[s], &counts[s]))
		{
			if (parts[0])
				pfree(parts[0]);
			MemoryContextSwitchTo(oldcxt);
			gbt_scan_gpu_release(scan);
			return false;
		}
		gbt_count_index_search(scan);	/* one batched search per tree */
	}
	if (so->nsegs == 2)
	{
		GbtEntry   *all = MemoryContextAllocHuge(CurrentMemoryContext,
												 sizeof(GbtEntry) * Max(counts[0] + counts[1], 1));

		memcpy(all, parts[0], sizeof(GbtEntry) * counts[0]);
		memcpy(all + counts[0], parts[1], sizeof(GbtEntry) * counts[1]);
		pfree(parts[0]);
		pfree(parts[1]);
		parts[0] = all;
	}
	MemoryContextSwitchTo(oldcxt);
	so->gpu_items = parts[0];
	so->gpu_n = counts[0] + counts[1];
	/* which part holds NULL entries (the NULL tree's segment) */
	so->gpu_nulls_from = so->gpu_nulls_to = 0;
	for (int s = 0, at = 0; s < so->nsegs; at += counts[s], s++)
		if (so->segs[s].root == GBT_NULLROOT_BLKNO)
		{
			so->gpu_nulls_from = at;
			so->gpu_nulls_to = at + counts[s];
		}
	return true;
}

/*
 * Begin the scan in direction dir: prepare the keys, choose between GPU
 * batches, parallel chunks and a serial walk, and position on the first
 * matching entry.  False when there is none.  A GPU batch's first entry
 * comes back already returned (so->gpu_items is set), a leaf's positioned
 * for return_current_item().
 */
bool
gbt_scan_start(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	bool		backward = ScanDirectionIsBackward(dir);

	gbt_prepare_scan_keys(scan);
	so->started = true;
	pgstat_count_index_scan(scan->indexRelation);
	if (so->impossible || so->nsegs == 0)
	{
		so->pos.seg = -1;
		return false;
	}
	so->par_serial = false;
	so->par_slices = false;
	if (gbt_device_mode != GBT_DEVICE_CPU)
	{
		int			nq = 0;

		for (int s = 0; s < so->nsegs; s++)
			nq += so->segs[s].nranges;
		if (gbt_gpu_wanted(nq) && scan->parallel_scan && !backward && so->nsegs == 1)
		{
			/*
			 * A forward parallel scan of one segment goes in slices of its
			 * ranges, each one GPU batch, that the participants claim in
			 * order: each one's output stays in index order, and they
			 * share the work of returning the rows.
			 */
			return gbt_par_next(scan, gbt_par_slice_count(nq));
		}
		if (gbt_gpu_wanted(nq))
		{
			/* one participant of other parallel scans runs the whole batch */
			if (scan->parallel_scan)
			{
				if (!gbt_par_claim_serial(scan))
				{
					so->pos.seg = -1;
					return false;
				}
				so->par_serial = true;
			}
			if (gbt_scan_gpu_fetch(scan))
			{
				so->gpu_i = backward ? so->gpu_n : -1;
				return gbt_scan_gpu_next(scan, dir);
			}
		}
	}
	gbt_points_to_ranges(scan); /* the CPU path needs them sorted */
	if (scan->parallel_scan && !so->par_serial)
	{
		if (!backward)
			return gbt_par_next(scan, 0);
		if (!gbt_par_claim_serial(scan))
		{
			so->pos.seg = -1;
			return false;
		}
		so->par_serial = true;
	}
	if (gbt_seek_segment_start(scan, backward ? so->nsegs - 1 : 0, backward))
		return true;
	return gbt_scan_next_leaf(scan, dir);
}

/* An index-only result for a NULL key: a tuple with its null bit set */
static void
set_null_result(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	Datum		value = (Datum) 0;
	bool		isnull = true;
	MemoryContext old;

	if (so->tupcxt == NULL)
		so->tupcxt = AllocSetContextCreate(CurrentMemoryContext, "gbtree scan tuple",
										   ALLOCSET_SMALL_SIZES);
	MemoryContextReset(so->tupcxt);
	old = MemoryContextSwitchTo(so->tupcxt);
	scan->xs_itup = index_form_tuple(RelationGetDescr(scan->indexRelation),
									 &value, &isnull);
	MemoryContextSwitchTo(old);
}

/*
 * Make entry e the scan's result: its heap TID and, if wanted, index tuple.
 * Inlined into gbtgettuple's per-row path, where it is most of the work an
 * index-only scan does per row besides the executor's own.
 */
static pg_attribute_always_inline void
set_scan_result(IndexScanDesc scan, const GbtEntry *e, bool entry_isnull)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	gbt_tid_to_itemptr(e->tid, &scan->xs_heaptid);
	scan->xs_recheck = false;
	if (!scan->xs_want_itup)
		return;
	if (likely(!entry_isnull))
	{
		Datum		value;

		if (so->int64_keys)
			value = Int64GetDatum(gbt_key_to_int64(e->key));
		else
			value = gbt_index_datum(so->info, e->key, e->tid);
		store_att_byval((char *) so->itup + MAXALIGN(sizeof(IndexTupleData)),
						value, so->attlen);
		scan->xs_itup = so->itup;
	}
	else
		set_null_result(scan);
}

/* Return the item of the current leaf that pos.itemIndex points at. */
static void
return_current_item(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	set_scan_result(scan, &so->pos.items[so->pos.itemIndex],
					so->pos.nullkeys);
}

/* Step through the GPU batch in direction dir and return its next entry. */
bool
gbt_scan_gpu_next(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (ScanDirectionIsForward(dir))
	{
		if (++so->gpu_i >= so->gpu_n)
		{
			so->gpu_i = so->gpu_n;
			return false;
		}
	}
	else
	{
		if (--so->gpu_i < 0)
		{
			so->gpu_i = -1;
			return false;
		}
	}
	set_scan_result(scan, &so->gpu_items[so->gpu_i],
					so->gpu_i >= so->gpu_nulls_from && so->gpu_i < so->gpu_nulls_to);
	return true;
}

bool
gbtgettuple(IndexScanDesc scan, ScanDirection dir)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;

	if (gbt_scan_is_wide(scan))
		return gbt_wide_gettuple(scan, dir);

	if (scan->kill_prior_tuple && so->started)
		remember_killed(scan);

	/*
	 * The common case first: the next entry of the leaf already copied.
	 * An ordered scan returns most rows this way, so it does no more per
	 * row than nbtree does: step, set the TID, store the key.
	 */
	if (likely(so->started && so->gpu_items == NULL && pos->seg >= 0))
	{
		int			i = pos->itemIndex + (ScanDirectionIsForward(dir) ? 1 : -1);

		if (i >= 0 && i < pos->nitems)
		{
			pos->itemIndex = i;
			set_scan_result(scan, &pos->items[i], pos->nullkeys);
			return true;
		}
	}

	if (!so->started)
	{
		if (!gbt_scan_start(scan, dir))
			return false;
		if (so->gpu_items)
			return true;		/* gbt_scan_gpu_next() returned the entry */
	}
	else if (so->gpu_items)
	{
		if (gbt_scan_gpu_next(scan, dir))
			return true;
		if (!so->par_slices)
			return false;
		/* a parallel scan's GPU slice is used up: on to the next slice */
		gbt_scan_gpu_release(scan);
		if (!gbt_par_next(scan, 0))
			return false;
	}
	else
	{
		if (pos->seg < 0)
			return false;
		if (ScanDirectionIsForward(dir))
		{
			if (++pos->itemIndex >= pos->nitems)
			{
				pos->itemIndex = pos->nitems;
				if (!gbt_scan_next_leaf(scan, dir))
					return false;
			}
		}
		else
		{
			if (--pos->itemIndex < 0)
			{
				pos->itemIndex = -1;
				if (!gbt_scan_next_leaf(scan, dir))
					return false;
			}
		}
	}
	if (so->gpu_items)
		return true;			/* a GPU slice began: its entry is returned */
	return_current_item(scan);
	return true;
}

void
gbtrescan(IndexScanDesc scan, ScanKey keys, int nkeys,
		  ScanKey orderbys, int norderbys)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (gbt_scan_is_wide(scan))
	{
		gbt_wide_rescan(scan, keys, nkeys);
		return;
	}
	mark_killed(scan);
	gbt_scan_drop_pin(so);
	gbt_scan_gpu_release(scan);
	so->started = false;
	so->markValid = false;
	so->pos.seg = -1;
	so->par_chunk = false;
	so->clip = false;
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
}

void
gbtendscan(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (gbt_scan_is_wide(scan))
	{
		gbt_wide_endscan(scan);
		return;
	}
	mark_killed(scan);
	gbt_scan_drop_pin(so);
	gbt_scan_gpu_release(scan);
	if (so->keycxt)
		MemoryContextDelete(so->keycxt);
	if (so->killed)
		pfree(so->killed);
	if (so->tupcxt)
		MemoryContextDelete(so->tupcxt);
	if (so->mark)
		pfree(so->mark);
	pfree(so->itup);
	pfree(so->info);
	pfree(so);
}

/*
 * Mark and restore copy the position (the copied items of the current
 * leaf and where the leaf sits); the items stay valid for this scan's
 * snapshot even if the leaf changed since.
 */
void
gbtmarkpos(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;
	GbtScanPos *pos = &so->pos;

	if (gbt_scan_is_wide(scan))
	{
		gbt_wide_markpos(scan);
		return;
	}
	if (so->started && so->gpu_items)
	{
		so->gpu_mark = so->gpu_i;
		so->markValid = true;
		return;
	}
	if (!so->started || pos->seg < 0)
	{
		so->markValid = false;
		return;
	}
	if (so->mark == NULL)
		so->mark = MemoryContextAlloc(GetMemoryChunkContext(so), sizeof(GbtScanPos));
	memcpy(so->mark, pos, offsetof(GbtScanPos, items) + sizeof(GbtEntry) * pos->nitems);
	so->markValid = true;
}

void
gbtrestrpos(IndexScanDesc scan)
{
	GbtScanOpaque so = (GbtScanOpaque) scan->opaque;

	if (gbt_scan_is_wide(scan))
	{
		gbt_wide_restrpos(scan);
		return;
	}
	if (!so->markValid)
		return;
	if (so->gpu_items)
	{
		so->gpu_i = so->gpu_mark;
		return;
	}
	mark_killed(scan);
	if (so->pos.blk != so->mark->blk || so->pos.seg != so->mark->seg ||
		!BufferIsValid(so->buf))
	{
		gbt_scan_drop_pin(so);
		if (needs_leaf_pin(scan))
			so->buf = ReadBuffer(scan->indexRelation, so->mark->blk);
	}
	memcpy(&so->pos, so->mark,
		   offsetof(GbtScanPos, items) + sizeof(GbtEntry) * so->mark->nitems);
	/* whatever pin is held now was not held all along since the mark */
	so->pos.pinned = false;
}

bool
gbtcanreturn(Relation index, int attno)
{
	int32		typmod;
	Oid			type = gbt_column_type(index, attno - 1, &typmod);

	/*
	 * A numeric without a declared scale (a domain's included): its key
	 * holds the value, not the display scale each stored value keeps
	 * (keys.c, "numeric")
	 */
	return !(type == NUMERICOID && typmod < 0);
}
