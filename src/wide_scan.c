/*-------------------------------------------------------------------------
 *
 * wide_scan.c
 *	  Scans of indexes with multi-word keys (gbtree_wide.h).
 *
 * wide_scankey.c turns the scan keys into conditions and sorted ranges of
 * key words (gbtree_wide_scan.h has the scan's state); the conditions the
 * ranges do not enforce are checked here on each entry's decoded fields
 * (passes_filter).  So no entry needs the heap to recheck a condition.
 *
 * A range is read leaf by leaf, each leaf's matching entries copied under
 * its share lock, as scan.c does: forward along right-links read with the
 * leaf, backward by a new descent for the entries below the leaf's low
 * key (no left-links to follow, so a concurrent split needs no care).
 * Index-only scans and scans under a non-MVCC snapshot keep the current
 * leaf pinned, so that VACUUM, which takes a cleanup lock on each leaf,
 * cannot remove its entries' heap tuples meanwhile.
 *
 * On the GPU (gbtree.device = gpu, or auto with the service ready and at
 * least gbtree.gpu_min_batch ranges), each segment's ranges go to the
 * device copy as one batch (gbt_gpu_lookup_words) and every match comes
 * back at once, in index order; the filter then runs over them, and the
 * scan steps through that array either way.  As in scan.c, such a batch
 * holds no leaf pins: scans that need them hold GBT_GPU_SCAN_LOCK
 * instead, and any failure runs the scan on the CPU (under auto).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "nodes/tidbitmap.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/uuid.h"
#include "access/htup_details.h"

#include "gbtree_gpu.h"
#include "gbtree_wide_scan.h"
#include "gbtree_wpost.h"


static void mark_killed(IndexScanDesc scan);

static bool
needs_pin(IndexScanDesc scan)
{
	return scan->xs_want_itup || !IsMVCCSnapshot(scan->xs_snapshot);
}

IndexScanDesc
gbt_wide_beginscan(IndexScanDesc scan)
{
	/* not zeroed whole: a leaf's items (19 KB) are written before read */
	GbtWideScan so = palloc(sizeof(GbtWideScanData));

	memset(so, 0, offsetof(GbtWideScanData, pos));
	memset(&so->pos, 0, offsetof(WidePos, items));

	so->info = gbt_index_info_copy(scan->indexRelation);
	so->nw = so->info->nwords;
	so->pin = InvalidBuffer;
	so->pos.seg = -1;
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
	return scan;
}

static void
drop_pin(GbtWideScan so)
{
	if (BufferIsValid(so->pin))
		ReleaseBuffer(so->pin);
	so->pin = InvalidBuffer;
}

/* Free a GPU batch's matches and the lock that covered them, if any. */
static void
gpu_release(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	if (so->gpu_items)
		pfree(so->gpu_items);
	so->gpu_items = NULL;
	so->itups_hi = so->itups_lo = 0;	/* made of its entries */
	if (so->gpu_locked)
		UnlockPage(scan->indexRelation, GBT_GPU_SCAN_LOCK, ShareLock);
	so->gpu_locked = false;
}


/*
 * The filter: every condition the ranges do not enforce, on the entry's
 * words and tail (tlen 0: none).  An entry with a tail, or a condition on
 * a whole text, decodes the values in full (gbt_shape_decode_cut).
 */
static bool
passes_filter(GbtWideScan so, const uint64 *words, const unsigned char *tail, int tlen)
{
	const GbtKeyShape *shape = &so->info->shape;
	GbtColValue vals[GBT_MAX_KEY_COLS];
	GbtColInput in[GBT_MAX_KEY_COLS];
	unsigned char buf[GBT_TAIL_HIGHEST_LEN + GBT_MAX_KEY_WORDS * 8];
	bool		full = tlen > 0 || so->text_filter;

	if (full)
	{
		if (gbt_shape_decode_cut(shape, so->info->is_text, words, tail, tlen, in, buf,
								 sizeof(buf)) < 0)
			gbt_tail_corrupted(so->info->indexrelid);
		for (int c = 0; c < shape->ncols; c++)
			vals[c] = in[c].val;
	}
	else
		gbt_shape_decode(shape, words, vals);
	for (int i = 0; i < so->nconds; i++)
	{
		const GbtColCond *c = &so->conds[i];

		if (!(so->filter_all || c->col >= so->nrequired || c->op == GBT_COND_ROW))
			continue;
		if (c->text.data || c->tarr ? !gbt_text_cond_holds(c, in[c->col].bytes, in[c->col].len, in[c->col].val.isnull) : !gbt_cond_holds(c, vals))
			return false;
	}
	return true;
}

/*
 * GPU batches
 * -----------
 */

/*
 * Run the whole scan as GPU batches, one per segment, and keep the matches
 * that pass the filter.  False to run it on the CPU (after the fallback was
 * counted; under gbtree.device = gpu the failure was an error).
 */
static bool
gpu_fetch(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	Relation	index = scan->indexRelation;
	int			nw = so->nw;
	Size		stride = nw + 1;
	uint64	   *words[2] = {NULL, NULL};
	uint64	   *tids[2] = {NULL, NULL};
	uint64		counts[2] = {0, 0};
	uint64	   *out;
	int64		n = 0;
	MemoryContext oldcxt;

	if (needs_pin(scan))
	{
		if (!gbt_gpu_scan_lock(index))
			return false;
		so->gpu_locked = true;
	}
	/* the matches outlive this call; amgettuple's context is per tuple */
	oldcxt = MemoryContextSwitchTo(GetMemoryChunkContext(so));
	for (int sg = 0; sg < so->nsegs; sg++)
	{
		WideSeg    *seg = &so->segs[sg];
		uint64	   *q = palloc(sizeof(uint64) * 2 * nw * seg->nranges);

		for (int r = 0; r < seg->nranges; r++)
		{
			memcpy(&q[(Size) r * 2 * nw], seg->ranges[r].lo, sizeof(uint64) * nw);
			memcpy(&q[(Size) r * 2 * nw + nw], seg->ranges[r].hi, sizeof(uint64) * nw);
		}
		if (!gbt_gpu_lookup_words(index, seg->root, nw, q, seg->nranges,
								  &words[sg], &tids[sg], &counts[sg]))
		{
			for (int i = 0; i < sg; i++)
			{
				pfree(words[i]);
				pfree(tids[i]);
			}
			pfree(q);
			MemoryContextSwitchTo(oldcxt);
			gpu_release(scan);
			return false;
		}
		pfree(q);
	}
	out = MemoryContextAllocHuge(CurrentMemoryContext,
								 sizeof(uint64) * stride * Max(counts[0] + counts[1], 1));
	so->gpu_nulls_from = so->gpu_nulls_to = 0;
	for (int sg = 0; sg < so->nsegs; sg++)
	{
		bool		nulls = so->segs[sg].root == GBT_NULLROOT_BLKNO;

		if (nulls)
			so->gpu_nulls_from = n;
		for (uint64 j = 0; j < counts[sg]; j++)
		{
			uint64	   *item = &out[n * stride];

			memcpy(item, &words[sg][j * nw], sizeof(uint64) * nw);
			/* the NULL tree's entries have no fields to filter */
			if (!nulls && so->need_filter && !passes_filter(so, item, NULL, 0))
				continue;
			item[nw] = tids[sg][j];
			n++;
		}
		if (nulls)
			so->gpu_nulls_to = n;
		pfree(words[sg]);
		pfree(tids[sg]);
	}
	MemoryContextSwitchTo(oldcxt);
	so->gpu_items = out;
	so->gpu_n = n;
	return true;
}

/*
 * Dead entries (src/README, "Dead entries"): scan.c's remember_killed and
 * mark_killed over the entries' words.  An entry is marked only where it
 * is sure to be the one returned: the scan kept its pin on the leaf since
 * it read it, or the leaf still has the LSN it had then.
 */
static void
remember_killed(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;
	int			stride = so->nw + 1;

	if (so->gpu_items || pos->seg < 0 || pos->itemIndex < 0 || pos->itemIndex >= pos->nitems)
		return;
	if (so->nkilled > 0 && (so->kill_blk != pos->blk || so->kill_lsn != pos->lsn ||
							so->kill_pinned != pos->pinned))
		mark_killed(scan);
	if (so->killed == NULL)
		so->killed = MemoryContextAlloc(GetMemoryChunkContext(so),
										sizeof(uint64) * stride * GBT_MAX_SLOTS);
	if (so->nkilled == 0)
	{
		so->kill_blk = pos->blk;
		so->kill_lsn = pos->lsn;
		so->kill_pinned = pos->pinned;
	}
	if (so->nkilled < GBT_MAX_SLOTS)
		memcpy(&so->killed[so->nkilled++ * stride], &pos->items[pos->itemIndex * stride],
			   sizeof(uint64) * stride);
}

/* Mark the remembered entries; called with no buffer locked. */
static void
mark_killed(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	int			nw = so->nw;
	int			n = so->nkilled;
	Buffer		buf;
	GbtNode		node;
	uint64	   *dead;
	bool		marked = false;
	bool		release;

	if (n == 0)
		return;
	so->nkilled = 0;
	buf = gbt_kill_leaf(scan->indexRelation, so->pin, so->kill_blk, so->kill_lsn,
						so->kill_pinned, nw, &release);
	if (!BufferIsValid(buf))
		return;
	/* posting leaves carry no marks (VACUUM removes their dead TIDs) */
	if (gbt_page_is_posting((char *) BufferGetPage(buf)))
	{
		gbt_kill_leaf_done(buf, false, release);
		return;
	}
	gbt_node_view((char *) BufferGetPage(buf), &node);
	dead = gbt_leaf_dead((char *) BufferGetPage(buf));
	for (int i = 0; i < n; i++)
	{
		const uint64 *e = &so->killed[i * (nw + 1)];
		int			s;
		bool		same;

		if (node.toff)
		{
			/* a run of equal words orders by tail first: look at each */
			int			hi = gbt_node_upper_bound_words(&node, e);

			for (s = gbt_node_next_used(&node, gbt_node_lower_bound_words(&node, e));
				 s < hi && node.tids[s] != e[nw]; s = gbt_node_next_used(&node, s + 1))
				;
			if (s >= hi)
				continue;
		}
		else
		{
			s = gbt_node_lower_bound_entry_words(&node, e, e[nw]);
			/* a gap holds its next used slot's entry: that slot is the one */
			if (s < node.nslots)
				s = gbt_node_next_used(&node, s);
		}
		if (s >= node.nslots || node.tids[s] != e[nw] || node.keys[s] != e[0])
			continue;
		same = true;
		for (int k = 1; k < nw; k++)
			same &= node.xkeys[k - 1][s] == e[k];
		if (same && !((dead[s >> 6] >> (s & 63)) & 1))
		{
			dead[s >> 6] |= UINT64CONST(1) << (s & 63);
			marked = true;
		}
	}
	gbt_kill_leaf_done(buf, marked, release);
}

/*
 * Reading leaves
 * --------------
 */

static inline bool
words_are(const uint64 *words, int nw, uint64 value)
{
	for (int k = 0; k < nw; k++)
		if (words[k] != value)
			return false;
	return true;
}

/*
 * Copy the used and unmarked slots of [start, end) that pass the filter
 * into items (nw words and the TID each), a bitmap word at a time; the
 * caller passes nw as a constant where it can, so the copy unrolls.
 */
static inline pg_attribute_always_inline int
gather_live(GbtWideScan so, const GbtNode *node, const uint64 *dead, int start, int end,
			WidePos *pos, int nw)
{
	uint64	   *items = pos->items;
	int			n = 0;

	pos->tails = node->toff != NULL;
	pos->tused = 0;
	for (int w = start >> 6; w < (end + 63) >> 6; w++)
	{
		uint64		bits = gbt_node_live_bits(node, dead, w, start, end);

		while (bits)
		{
			int			sl = (w << 6) + pg_rightmost_one_pos64(bits);
			uint64	   *item = &items[n * (nw + 1)];
			GbtTail		t = {NULL, 0};

			bits &= bits - 1;
			item[0] = node->keys[sl];
			for (int k = 1; k < nw; k++)
				item[k] = node->xkeys[k - 1][sl];
			if (pos->tails)
				t = gbt_node_slot_tail(node, sl);
			if (so->need_filter && !passes_filter(so, item, t.data, t.len))
				continue;
			item[nw] = node->tids[sl];
			if (pos->tails)
			{
				pos->itlen[n] = t.len;
				pos->itoff[n] = pos->tused;
				memcpy(pos->tbytes + pos->tused, t.data, t.len);
				pos->tused += t.len;
			}
			n++;
		}
	}
	return n;
}

/*
 * gather_live for a leaf in posting form: its entries [start, end) that
 * pass the filter (it has no tails and no marks).  The form is
 * node_wpost.c's (wp), or node_post.c's (op) where the key fits one word.
 */
static int
gather_posting(GbtWideScan so, const GbtWPost *wp, const GbtPost *op, int start, int end,
			   WidePos *pos, int nw)
{
	const uint64 *keys = wp ? wp->keys : op->keys;
	const uint16 *starts = wp ? wp->start : op->start;
	int			ngroups = wp ? wp->hdr->ngroups : op->hdr->ngroups;
	int			n = 0;
	int			g = 0;

	pos->tails = false;
	pos->tused = 0;
	while (g < ngroups && starts[g + 1] <= start)
		g++;
	for (int i = start; i < end; i++)
	{
		uint64	   *item = &pos->items[n * (nw + 1)];

		while (starts[g + 1] <= i)
			g++;
		memcpy(item, &keys[(Size) g * nw], sizeof(uint64) * nw);
		if (so->need_filter && !passes_filter(so, item, NULL, 0))
			continue;
		item[nw] = wp ? gbt_wpost_tid(wp, i) : gbt_post_tid(op, i);
		n++;
	}
	return n;
}

/* the first entry of a posting leaf whose words are above key */
static int
posting_upper_bound(const GbtWPost *p, const uint64 *key)
{
	int			nw = p->hdr->nwords;
	int			lo = 0,
				hi = p->hdr->ngroups;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (gbt_words_cmp(&p->keys[(Size) mid * nw], key, nw) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return p->start[lo];
}

/*
 * Copy the entries of the locked leaf in buf that the position's range
 * wants; below (with its tail and TID), when not NULL, takes only those
 * below it.
 */
static void
read_leaf(IndexScanDesc scan, Buffer buf, int seg, int range, const uint64 *below,
		  GbtTail belowtail, uint64 belowtid)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;
	const GbtWordRange *r = &so->segs[seg].ranges[range];
	Page		page = BufferGetPage(buf);
	GbtNode		node;
	int			nw = so->nw;
	int			start,
				end;

	/* marked entries are skipped as scan.c skips them (src/README) */
	const uint64 *dead = scan->ignore_killed_tuples ? gbt_leaf_dead((char *) page) : NULL;

	gbt_node_view((char *) page, &node);
	so->itups_hi = so->itups_lo = 0;
	pos->seg = seg;
	pos->range = range;
	pos->blk = BufferGetBlockNumber(buf);
	pos->lsn = BufferGetLSNAtomic(buf);
	pos->pinned = needs_pin(scan);
	pos->next = node.opaque->rightlink;
	pos->rightmost = (node.opaque->flags & GBT_F_RIGHTMOST) != 0;
	gbt_walk_bound_words(&node, false, pos->lowkey, &pos->lowtid);
	gbt_walk_bound_words(&node, true, pos->hikey, &pos->hitid);
	{
		GbtTail		lt = gbt_node_bound_tail(&node, 1);
		GbtTail		ht = gbt_node_bound_tail(&node, 0);

		pos->lowtaillen = lt.len;
		memcpy(pos->lowtail, lt.data, lt.len);
		pos->hitaillen = ht.len;
		memcpy(pos->hitail, ht.data, ht.len);
	}
	if (gbt_page_is_posting((char *) page) && nw == 1)
	{
		GbtPost		p;

		Assert(!so->segs[seg].lotails && belowtail.len == 0);
		gbt_post_view((char *) page, &p);
		end = r->hi[0] == UINT64_MAX ? p.hdr->nentries :
			gbt_post_lower_bound_entry(&p, r->hi[0] + 1, 0);
		start = r->lo[0] == 0 ? 0 : gbt_post_lower_bound_entry(&p, r->lo[0], 0);
		if (below)
			end = Min(end, gbt_post_lower_bound_entry(&p, below[0], belowtid));
		pos->nitems = start < end ? gather_posting(so, NULL, &p, start, end, pos, 1) : 0;
	}
	else if (gbt_page_is_posting((char *) page))
	{
		GbtWPost	p;
		GbtTail		lt = so->segs[seg].lotails ? so->segs[seg].lotails[range] : GBT_NO_TAIL;
		GbtTail		ht = so->segs[seg].hitails ? so->segs[seg].hitails[range] : GBT_NO_TAIL;

		/*
		 * Its entries have no tails (text keys of more bytes than the words
		 * go into plain leaves), and no tail orders among tails as the
		 * one-byte tail {128} (gbt_tail_cmp): a bound of the same words
		 * with a tail above that excludes an entry below it, one with a
		 * tail below that an entry above it.
		 */
		gbt_wpost_view((char *) page, &p);
		end = words_are(r->hi, nw, UINT64_MAX) ? p.hdr->nentries :
			gbt_tail_cmp(NULL, 0, ht.data, ht.len) <= 0 ? posting_upper_bound(&p, r->hi) :
			p.start[gbt_wpost_lower_bound_group(&p, r->hi)];
		start = words_are(r->lo, nw, 0) && lt.len == 0 ? 0 :
			gbt_tail_cmp(NULL, 0, lt.data, lt.len) < 0 ? posting_upper_bound(&p, r->lo) :
			p.start[gbt_wpost_lower_bound_group(&p, r->lo)];
		if (below)
		{
			int			c = gbt_tail_cmp(NULL, 0, belowtail.data, belowtail.len);

			end = Min(end, c < 0 ? posting_upper_bound(&p, below) :
					  c > 0 ? p.start[gbt_wpost_lower_bound_group(&p, below)] :
					  gbt_wpost_lower_bound_entry(&p, below, belowtid));
		}
		pos->nitems = start < end ? gather_posting(so, &p, NULL, start, end, pos, nw) : 0;
	}
	else
	{
		/*
		 * The used slots from the first key >= lo to the last <= hi; an end
		 * the range leaves open (a scan of the whole index, ORDER BY) needs
		 * no count.
		 */
		if (so->segs[seg].lotails)
		{
			GbtTail		lt = so->segs[seg].lotails[range],
						ht = so->segs[seg].hitails[range];

			end = gbt_node_upper_bound_tail(&node, r->hi, ht.data, ht.len);
			start = gbt_node_lower_bound_tail(&node, r->lo, lt.data, lt.len, 0);
		}
		else
		{
			end = words_are(r->hi, nw, UINT64_MAX) ? node.nslots :
				gbt_node_upper_bound_words(&node, r->hi);
			start = words_are(r->lo, nw, 0) ? 0 : gbt_node_lower_bound_words(&node, r->lo);
		}
		if (below)
			end = Min(end, gbt_node_lower_bound_tail(&node, below, belowtail.data,
													 belowtail.len, belowtid));
		switch (nw)
		{
			case 2:
				pos->nitems = gather_live(so, &node, dead, start, end, pos, 2);
				break;
			case 3:
				pos->nitems = gather_live(so, &node, dead, start, end, pos, 3);
				break;
			case 4:
				pos->nitems = gather_live(so, &node, dead, start, end, pos, 4);
				break;
			default:
				pos->nitems = gather_live(so, &node, dead, start, end, pos, nw);
				break;
		}
	}
	if (needs_pin(scan))
	{
		drop_pin(so);
		so->pin = buf;
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	}
	else
		UnlockReleaseBuffer(buf);
}

/* the tails that bound range (seg, range) below and above */
static GbtTail
range_lotail(GbtWideScan so, int seg, int range)
{
	return so->segs[seg].lotails ? so->segs[seg].lotails[range] : GBT_TAIL_LOWEST;
}

static GbtTail
range_hitail(GbtWideScan so, int seg, int range)
{
	return so->segs[seg].hitails ? so->segs[seg].hitails[range] : GBT_TAIL_HIGHEST;
}

/* Read the leaf where range (seg, range) starts, in direction dir. */
static void
read_range_start(IndexScanDesc scan, int seg, int range, ScanDirection dir)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	const GbtWordRange *r = &so->segs[seg].ranges[range];
	bool		backward = ScanDirectionIsBackward(dir);
	Buffer		buf;

	buf = gbt_wide_descend(scan->indexRelation, so->segs[seg].root, so->nw,
						   backward ? r->hi : r->lo,
						   backward ? range_hitail(so, seg, range) : range_lotail(so, seg, range),
						   backward ? UINT64_MAX : 0, backward, BUFFER_LOCK_SHARE);
	read_leaf(scan, buf, seg, range, NULL, GBT_NO_TAIL, 0);
	so->pos.itemIndex = backward ? so->pos.nitems - 1 : 0;
}

/*
 * The leaf the position is on, read again for range (seg, range) of the
 * same segment when that starts on it, instead of a descent (each range
 * of an = ANY costs one otherwise): forward, the range starts below the
 * leaf's high key, and above its low key as the ranges are sorted, and
 * the page is as it was read (its LSN: a split, a deletion or an insert
 * would have moved it; without WAL it does not move, so this is not
 * tried).  False, nothing read, to descend.
 */
static bool
reread_leaf(IndexScanDesc scan, int seg, int range)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;
	Relation	index = scan->indexRelation;
	const GbtWordRange *r = &so->segs[seg].ranges[range];
	Buffer		buf;

	if (seg != pos->seg || !RelationNeedsWAL(index) ||
		(!pos->rightmost &&
		 gbt_tentry_cmp(r->lo, range_lotail(so, seg, range), 0, pos->hikey,
						(GbtTail) {pos->hitail, pos->hitaillen}, pos->hitid, so->nw) >= 0))
		return false;
	buf = ReadBuffer(index, pos->blk);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (BufferGetLSNAtomic(buf) != pos->lsn)
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	read_leaf(scan, buf, seg, range, NULL, GBT_NO_TAIL, 0);
	pos->itemIndex = 0;
	return true;
}

/*
 * The next leaf in direction dir: the rest of the current range, or the
 * start of the next one; false at the end (the position stays).
 */
static bool
next_leaf(IndexScanDesc scan, ScanDirection dir)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	Relation	index = scan->indexRelation;
	WidePos    *pos = &so->pos;
	const GbtWordRange *r = &so->segs[pos->seg].ranges[pos->range];
	int			nw = so->nw;
	int			seg = pos->seg,
				range = pos->range;

	CHECK_FOR_INTERRUPTS();
	mark_killed(scan);			/* while the leaf's pin still vouches */
	if (ScanDirectionIsForward(dir))
	{
		/* the range goes on right of this leaf: its high key is within */
		if (!pos->rightmost &&
			(so->segs[seg].hitails ?
			 gbt_tentry_cmp(pos->hikey, (GbtTail) {pos->hitail, pos->hitaillen}, pos->hitid,
							r->hi, so->segs[seg].hitails[range], UINT64_MAX, nw) <= 0 :
			 gbt_words_cmp(pos->hikey, r->hi, nw) <= 0))
		{
			Buffer		buf = ReadBuffer(index, pos->next);

			LockBuffer(buf, BUFFER_LOCK_SHARE);
			gbt_wide_check_page(index, buf, nw);
			gbt_check_in_tree(index, buf, so->segs[seg].root);
			if (!(gbt_page_opaque((char *) BufferGetPage(buf))->flags & GBT_F_LEAF))
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" has a leaf whose right-link leads to an inner page at block %u",
								RelationGetRelationName(index), pos->next)));
			read_leaf(scan, buf, seg, range, NULL, GBT_NO_TAIL, 0);
			pos->itemIndex = 0;
			return true;
		}
		if (++range == so->segs[seg].nranges)
		{
			if (++seg == so->nsegs)
				return false;
			range = 0;
		}
		if (reread_leaf(scan, seg, range))
			return true;
	}
	else
	{
		/*
		 * Entries of the range may lie left of the leaf: below its low key,
		 * unless that is minus infinity (zero words, TID 0: the first leaf).
		 */
		if ((pos->lowtid != 0 || !words_are(pos->lowkey, nw, 0)) &&
			gbt_tentry_cmp(r->lo, range_lotail(so, seg, range), 0, pos->lowkey,
						   (GbtTail) {pos->lowtail, pos->lowtaillen}, pos->lowtid, nw) < 0)
		{
			uint64		lk[GBT_MAX_KEY_WORDS],
						lt = pos->lowtid;
			unsigned char *ltail = palloc(Max(pos->lowtaillen, 1));
			GbtTail		ltl = {ltail, pos->lowtaillen};
			Buffer		buf;

			memcpy(lk, pos->lowkey, sizeof(uint64) * nw);
			memcpy(ltail, pos->lowtail, pos->lowtaillen);
			buf = gbt_wide_descend(index, so->segs[seg].root, nw, lk, ltl, lt, true,
								   BUFFER_LOCK_SHARE);

			/*
			 * Only what lies below the low key: if VACUUM deleted empty
			 * leaves left of the one just read, that leaf took over their
			 * key range, and the descent comes back to it (src/README,
			 * "VACUUM").
			 */
			read_leaf(scan, buf, seg, range, lk, ltl, lt);
			pfree(ltail);
			pos->itemIndex = pos->nitems - 1;
			return true;
		}
		if (--range < 0)
		{
			if (--seg < 0)
				return false;
			range = so->segs[seg].nranges - 1;
		}
	}
	read_range_start(scan, seg, range, dir);
	return true;
}

/* Step to the next matching entry in direction dir; false at the end. */
static bool
step(IndexScanDesc scan, ScanDirection dir)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;

	if (!so->started)
	{
		so->started = true;
		so->par_idle = false;
		gbt_wide_prepare_scan(scan);
		if (so->impossible)
			return false;
		/* a parallel scan is run whole by the first participant */
		if (scan->parallel_scan && !gbt_par_claim_serial(scan))
		{
			so->par_idle = true;
			return false;
		}
		if (gbt_device_mode != GBT_DEVICE_CPU)
		{
			int			nq = 0;
			bool		tails = false;

			/*
			 * Ranges bounded by tails are the CPU's: the kernels search
			 * words, and ranges split by tails share their words.
			 */
			for (int sg = 0; sg < so->nsegs; sg++)
			{
				nq += so->segs[sg].nranges;
				tails |= so->segs[sg].lotails != NULL;
			}
			if (!tails && gbt_gpu_wanted(nq) && gpu_fetch(scan))
				so->gpu_i = ScanDirectionIsForward(dir) ? -1 : so->gpu_n;
		}
		if (so->gpu_items)
			;
		else if (ScanDirectionIsForward(dir))
			read_range_start(scan, 0, 0, dir);
		else
			read_range_start(scan, so->nsegs - 1, so->segs[so->nsegs - 1].nranges - 1, dir);
	}
	else if (so->impossible || so->par_idle || (pos->seg < 0 && so->gpu_items == NULL))
		return false;
	else if (so->gpu_items == NULL)
		pos->itemIndex += ScanDirectionIsForward(dir) ? 1 : -1;
	if (so->gpu_items)
	{
		/* a GPU batch: one array; off either end, a step back re-enters it */
		if (ScanDirectionIsForward(dir))
			so->gpu_i = Min(so->gpu_i + 1, so->gpu_n);
		else
			so->gpu_i = Max(so->gpu_i - 1, -1);
		return so->gpu_i >= 0 && so->gpu_i < so->gpu_n;
	}
	while (pos->itemIndex < 0 || pos->itemIndex >= pos->nitems)
	{
		if (!next_leaf(scan, dir))
		{
			/* past the end, where a step the other way finds the last entry */
			pos->itemIndex = ScanDirectionIsForward(dir) ? pos->nitems : -1;
			return false;
		}
	}
	return true;
}

/*
 * Assert builds: a whole tuple without NULLs made from the words (and the
 * entry's tail, tlen > 0), as index_form_tuple makes it from
 * gbt_wide_decode_tail's Datums: length, flags, bytes, zero padding.
 */
static void
check_itup(GbtWideScan so, TupleDesc desc, const uint64 *item, const unsigned char *tail,
		   int tlen, IndexTuple itup)
{
#ifdef USE_ASSERT_CHECKING
	Datum		values[GBT_MAX_KEY_COLS];
	bool		isnull[GBT_MAX_KEY_COLS];
	Size		hoff = IndexInfoFindDataOffset(0);
	Size		size;
	uint16		mask = 0;
	char	   *want;
	char	   *scratch = palloc(GBT_DECODE_SCRATCH);

	gbt_wide_decode_tail(so->info, item, tail, tlen, item[so->nw], values, isnull, scratch);
	size = heap_compute_data_size(desc, values, isnull);
	want = palloc0(size);
	heap_fill_tuple(desc, values, isnull, want, size, &mask, NULL);
	Assert(IndexTupleSize(itup) == MAXALIGN(hoff + size));
	Assert(((itup->t_info & INDEX_VAR_MASK) != 0) == ((mask & HEAP_HASVARWIDTH) != 0));
	Assert(!IndexTupleHasNulls(itup));
	Assert(memcmp(want, (char *) itup + hoff, size) == 0);
	for (Size b = hoff + size; b < IndexTupleSize(itup); b++)
		Assert(((char *) itup)[b] == 0);
	pfree(want);
	pfree(scratch);
#endif
}

/* entries whose index-only tuples are made at once (at most 64) */
#define GBT_ITUPS_CHUNK 32

/* so->itup_tail, of at least need bytes, zeroed */
static void
itup_tail_zeroed(GbtWideScan so, Size need)
{
	if (need > so->itup_tail_cap)
	{
		if (so->itup_tail)
			pfree(so->itup_tail);
		so->itup_tail_cap = Max(need, 1024);
		so->itup_tail = MemoryContextAlloc(GetMemoryChunkContext(so), so->itup_tail_cap);
	}
	memset(so->itup_tail, 0, need);
}

/*
 * The plan of the scan's index-only tuples and their buffers, on its first
 * tuple: index_form_tuple's work without its allocations.  Every column is
 * either of fixed width or a text of at most the key's 32 bytes, so the
 * largest tuple is known (plan->maxsize).
 */
static void
itup_init(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	MemoryContext cxt = GetMemoryChunkContext(so);

	gbt_wide_itup_plan(so->info, RelationGetDescr(scan->indexRelation), &so->itup_plan);
	so->itup = MemoryContextAllocZero(cxt, MAXALIGN(sizeof(IndexTupleData) +
													sizeof(IndexAttributeBitMapData)) +
									  GBT_MAX_KEY_COLS * MAXALIGN(sizeof(GbtColBuf)));
	if (gbt_wide_itup_batch(&so->itup_plan))
	{
		so->itups_stride = MAXALIGN(IndexInfoFindDataOffset(0) + so->itup_plan.maxsize);
		so->itups = MemoryContextAlloc(cxt, GBT_ITUPS_CHUNK * so->itups_stride);
	}
}

/*
 * The index-only tuple of item where the chunk has none (gbt_wide_gettuple):
 * an entry with a tail, with a NULL, or of a plan whose words hold order
 * keys; apart so that gettuple's frame stays small.
 */
static pg_noinline void
build_itup(IndexScanDesc scan, const uint64 *item, bool nulltree)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	int			nw = so->nw;
	TupleDesc	desc = RelationGetDescr(scan->indexRelation);
	Datum		values[GBT_MAX_KEY_COLS];
	bool		isnull[GBT_MAX_KEY_COLS];
	bool		hasnull = false;
	Size		hoff,
				data_size;
	uint16		mask = 0;

	/*
	 * An entry with a tail: its values in full, in a buffer kept for the
	 * scan (no allocation a row); from the words and the tail's bytes where
	 * the plan can, else decoded into scratch and laid out as
	 * index_form_tuple would (no value is long enough to be compressed).
	 */
	if (!so->gpu_items && so->pos.tails && so->pos.itlen[so->pos.itemIndex] > 0)
	{
		int			i = so->pos.itemIndex;
		const unsigned char *tail = so->pos.tbytes + so->pos.itoff[i];
		int			tlen = so->pos.itlen[i];
		Size		need;

		need = MAXALIGN(IndexInfoFindDataOffset(0) + so->itup_plan.maxsize + 8 + tlen);
		itup_tail_zeroed(so, need);
		if (gbt_wide_itup_fill_tail(&so->itup_plan, item, item[nw], tail, tlen,
									(char *) so->itup_tail + IndexInfoFindDataOffset(0),
									&data_size))
		{
			so->itup_tail->t_info = (unsigned short) MAXALIGN(IndexInfoFindDataOffset(0) +
															  data_size) | INDEX_VAR_MASK;
			check_itup(so, desc, item, tail, tlen, so->itup_tail);
			scan->xs_itup = so->itup_tail;
			return;
		}

		if (so->decode_scratch == NULL)
			so->decode_scratch = MemoryContextAlloc(GetMemoryChunkContext(so),
													GBT_DECODE_SCRATCH);
		gbt_wide_decode_tail(so->info, item, tail, tlen, item[nw], values, isnull,
							 so->decode_scratch);
		for (int c = 0; c < desc->natts; c++)
			hasnull |= isnull[c];
		hoff = IndexInfoFindDataOffset(hasnull ? INDEX_NULL_MASK : 0);
		data_size = heap_compute_data_size(desc, values, isnull);
		need = MAXALIGN(hoff + data_size);
		itup_tail_zeroed(so, need);
		heap_fill_tuple(desc, values, isnull, (char *) so->itup_tail + hoff, data_size,
						&mask, hasnull ? (bits8 *) ((char *) so->itup_tail +
													sizeof(IndexTupleData)) : NULL);
		so->itup_tail->t_info = (unsigned short) need |
			(hasnull ? INDEX_NULL_MASK : 0) | ((mask & HEAP_HASVARWIDTH) ? INDEX_VAR_MASK : 0);
		scan->xs_itup = so->itup_tail;
		return;
	}

	/* the NULL tree's entry, or one decoded from its words */
	if (nulltree)
	{
		values[0] = (Datum) 0;
		isnull[0] = true;
	}
	else
		gbt_wide_decode(so->info, item, item[nw], values, isnull, so->bufs);
	for (int c = 0; c < desc->natts; c++)
		hasnull |= isnull[c];
	Assert(hasnull || so->itup_plan.decode);
	hoff = IndexInfoFindDataOffset(hasnull ? INDEX_NULL_MASK : 0);
	data_size = heap_compute_data_size(desc, values, isnull);
	memset(so->itup, 0, MAXALIGN(hoff + data_size));
	heap_fill_tuple(desc, values, isnull, (char *) so->itup + hoff, data_size, &mask,
					hasnull ? (bits8 *) ((char *) so->itup + sizeof(IndexTupleData)) : NULL);
	so->itup->t_info = (unsigned short) MAXALIGN(hoff + data_size) |
		(hasnull ? INDEX_NULL_MASK : 0) | ((mask & HEAP_HASVARWIDTH) ? INDEX_VAR_MASK : 0);
	scan->xs_itup = so->itup;
}

bool
gbt_wide_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	const uint64 *item;
	int			nw = so->nw;

	if (scan->kill_prior_tuple && so->started)
		remember_killed(scan);

	/* the next entry of the leaf already read, without step()'s checks */
	if (so->started && so->gpu_items == NULL && so->pos.seg >= 0 &&
		ScanDirectionIsForward(dir) && so->pos.itemIndex + 1 < so->pos.nitems &&
		so->pos.itemIndex >= 0 && !so->impossible && !so->par_idle)
		so->pos.itemIndex++;
	else if (!step(scan, dir))
		return false;
	if (so->gpu_items)
		item = &so->gpu_items[so->gpu_i * (nw + 1)];
	else
		item = &so->pos.items[so->pos.itemIndex * (nw + 1)];
	gbt_tid_to_itemptr(item[nw], &scan->xs_heaptid);
	scan->xs_recheck = so->recheck;
	if (scan->xs_want_itup)
	{
		/* the entries the position reads: the leaf's, or the GPU batch's */
		const uint64 *items = so->gpu_items ? so->gpu_items : so->pos.items;
		int64		n = so->gpu_items ? so->gpu_n : so->pos.nitems;
		int64		i = so->gpu_items ? so->gpu_i : so->pos.itemIndex;
		bool		nulltree = so->gpu_items ?
			(i >= so->gpu_nulls_from && i < so->gpu_nulls_to) :
			(so->pos.seg >= 0 && so->segs[so->pos.seg].root == GBT_NULLROOT_BLKNO);

		if (unlikely(so->itup == NULL))
			itup_init(scan);

		/*
		 * Values the words hold: the entries' tuples a chunk at a time (fixed
		 * widths a column at a time), each returned in place, as btree
		 * returns its copy of the leaf's tuples; the chunk is cut at
		 * GBT_ITUPS_CHUNK so that a LIMIT makes few that it does not take.
		 * Entries with a tail or a NULL column are left to build_itup.
		 */
		if (so->itups && !nulltree &&
			!(!so->gpu_items && so->pos.tails && so->pos.itlen[i] > 0))
		{
			if (i < so->itups_lo || i >= so->itups_hi)
			{
				if (ScanDirectionIsBackward(dir))
					so->itups_lo = Max(0, i - (GBT_ITUPS_CHUNK - 1));
				else
					so->itups_lo = i;
				so->itups_hi = Min(n, so->itups_lo + GBT_ITUPS_CHUNK);
				so->itups_nulls =
					gbt_wide_itup_fill_many(&so->itup_plan, &items[so->itups_lo * (nw + 1)], nw,
											(int) (so->itups_hi - so->itups_lo), so->itups,
											so->itups_stride);
				if (!so->gpu_items && so->pos.tails)
					for (int64 k = so->itups_lo; k < so->itups_hi; k++)
						if (so->pos.itlen[k] > 0)
							so->itups_nulls |= UINT64CONST(1) << (k - so->itups_lo);
			}
			if (!((so->itups_nulls >> (i - so->itups_lo)) & 1))
			{
				IndexTuple	itup = (IndexTuple) (so->itups +
												 (i - so->itups_lo) * so->itups_stride);

				check_itup(so, RelationGetDescr(scan->indexRelation), item, NULL, 0, itup);
				scan->xs_itup = itup;
				return true;
			}
		}
		build_itup(scan, item, nulltree);
	}
	return true;
}

int64
gbt_wide_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	int			nw = so->nw;
	int64		n = 0;
	ItemPointerData tids[GBT_LEAF_MAX_ENTRIES];

	if (!step(scan, ForwardScanDirection))
		return 0;
	if (so->gpu_items)
	{
		/* a GPU batch: all of it, a chunk of TIDs at a time */
		for (; so->gpu_i < so->gpu_n;)
		{
			int			k = 0;

			for (; so->gpu_i < so->gpu_n && k < GBT_MAX_SLOTS; so->gpu_i++)
				gbt_tid_to_itemptr(so->gpu_items[so->gpu_i * (nw + 1) + nw], &tids[k++]);
			tbm_add_tuples(tbm, tids, k, so->recheck);
			n += k;
			CHECK_FOR_INTERRUPTS();
		}
		return n;
	}
	for (;;)
	{
		WidePos    *pos = &so->pos;
		int			k = 0;

		for (int i = pos->itemIndex; i < pos->nitems; i++)
			gbt_tid_to_itemptr(pos->items[i * (nw + 1) + nw], &tids[k++]);
		tbm_add_tuples(tbm, tids, k, so->recheck);
		n += k;
		pos->itemIndex = pos->nitems - 1;
		if (!step(scan, ForwardScanDirection))
			break;
	}
	return n;
}

/*
 * gbt_scan_tids for a multi-word index (scan_bulk.c says what it gives):
 * every TID the scan matches, packed as block << 16 | offset, in chunks of
 * at most max; or, to an item sink, every entry whole (its nw words, then
 * its TID as the page holds it).  As an index-only scan, it keeps the
 * current leaf pinned (needs_pin) or holds GBT_GPU_SCAN_LOCK, so that
 * VACUUM removes none of the entries before the sink has seen their heap
 * tuples; without the lock a leaf's entries go to the sink while its pin
 * is held.
 */
static int64
scan_out(IndexScanDesc scan, GbtTidSink tid_sink, GbtWideItemSink item_sink, void *arg,
		 int max)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	Relation	index = scan->indexRelation;
	int			nw = so->nw;
	int			width = item_sink ? nw + 1 : 1;
	bool		locked;
	uint64	   *buf;
	int			n = 0;
	int64		total = 0;

#define SCAN_OUT(buf, n, all_read) \
	(item_sink ? item_sink(arg, (buf), (n), (all_read)) : tid_sink(arg, (buf), (n), (all_read)))
#define SCAN_PUT(dst, item) \
	do { \
		if (item_sink) \
			memcpy((dst), (item), sizeof(uint64) * (nw + 1)); \
		else \
			*(dst) = (item)[nw] >> 16; \
	} while (0)

	Assert(scan->parallel_scan == NULL);
	max = Max(max, GBT_LEAF_MAX_ENTRIES);
	scan->xs_want_itup = true;
	locked = ConditionalLockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
	if (!step(scan, ForwardScanDirection))
	{
		drop_pin(so);
		gpu_release(scan);
		if (locked)
			UnlockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
		return 0;
	}

	/*
	 * The planner gives a count no condition the heap would have to
	 * recheck (count.c); a count cannot recheck one.
	 */
	if (so->recheck)
		elog(ERROR, "gbtree TID scan of \"%s\" with a condition left to the heap's recheck",
			 RelationGetRelationName(index));
	if (so->gpu_items)
	{
		buf = palloc_extended(sizeof(uint64) * width * Min(so->gpu_n, (int64) max),
							  MCXT_ALLOC_HUGE);
		for (int64 i = 0; i < so->gpu_n; i += n)
		{
			n = (int) Min(so->gpu_n - i, (int64) max);
			for (int j = 0; j < n; j++)
				SCAN_PUT(&buf[j * width], &so->gpu_items[(i + j) * (nw + 1)]);
			SCAN_OUT(buf, n, true);
			CHECK_FOR_INTERRUPTS();
		}
		total = so->gpu_n;
		gpu_release(scan);
	}
	else
	{
		WidePos    *pos = &so->pos;

		/* starts small (gbt_scan_buf_grow) */
		int			cap = Min(max, GBT_SCAN_FIRST_CHUNK);

		buf = palloc_extended(sizeof(uint64) * width * cap, MCXT_ALLOC_HUGE);
		for (;;)
		{
			int			m = pos->nitems - pos->itemIndex;

			buf = gbt_scan_buf_grow(buf, sizeof(uint64) * width, &cap, n + m, max);
			if (n + m > cap)
			{
				SCAN_OUT(buf, n, false);
				total += n;
				n = 0;
			}
			for (int i = pos->itemIndex; i < pos->nitems; i++)
				SCAN_PUT(&buf[width * n++], &pos->items[i * (nw + 1)]);
			if (!locked && n > 0)
			{
				/* this leaf is still pinned */
				SCAN_OUT(buf, n, false);
				total += n;
				n = 0;
			}
			pos->itemIndex = pos->nitems - 1;
			if (!step(scan, ForwardScanDirection))
				break;
		}
		if (n > 0)
		{
			SCAN_OUT(buf, n, false);
			total += n;
		}
		drop_pin(so);
	}
#undef SCAN_OUT
#undef SCAN_PUT
	pfree(buf);
	if (locked)
		UnlockPage(index, GBT_GPU_SCAN_LOCK, ShareLock);
	return total;
}

int64
gbt_wide_scan_tids(IndexScanDesc scan, GbtTidSink sink, void *arg, int max)
{
	return scan_out(scan, sink, NULL, arg, max);
}

/* the same, whole entries: GbtreeJoin's lookups of multi-word keys */
int64
gbt_wide_scan_items(IndexScanDesc scan, GbtWideItemSink sink, void *arg, int max)
{
	return scan_out(scan, NULL, sink, arg, max);
}

void
gbt_wide_rescan(IndexScanDesc scan, ScanKey keys, int nkeys)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	mark_killed(scan);
	drop_pin(so);
	gpu_release(scan);
	so->started = false;
	so->markValid = false;
	so->pos.seg = -1;
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
}

void
gbt_wide_endscan(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	mark_killed(scan);
	drop_pin(so);
	gpu_release(scan);
	if (so->keycxt)
		MemoryContextDelete(so->keycxt);
	if (so->itup)
		pfree(so->itup);
	if (so->itups)
		pfree(so->itups);
	if (so->mark)
		pfree(so->mark);
	if (so->killed)
		pfree(so->killed);
	pfree(so->info);
	pfree(so);
}

/*
 * A copy of position src: its entries and, on a tailed leaf, their tails,
 * which an index-only scan's tuples and the filter read beside them.
 */
static void
copy_pos(WidePos *dst, const WidePos *src, int nw)
{
	memcpy(dst, src, offsetof(WidePos, items) + sizeof(uint64) * (nw + 1) * src->nitems);
	dst->tails = src->tails;
	dst->tused = src->tused;
	if (src->tails)
	{
		memcpy(dst->itoff, src->itoff, sizeof(uint16) * src->nitems);
		memcpy(dst->itlen, src->itlen, sizeof(uint16) * src->nitems);
		memcpy(dst->tbytes, src->tbytes, src->tused);
	}
}

/* Mark and restore copy the position, as scan.c's do. */
void
gbt_wide_markpos(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;
	WidePos    *pos = &so->pos;

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
		so->mark = MemoryContextAlloc(GetMemoryChunkContext(so), sizeof(WidePos));
	copy_pos(so->mark, pos, so->nw);
	so->markValid = true;
}

void
gbt_wide_restrpos(IndexScanDesc scan)
{
	GbtWideScan so = (GbtWideScan) scan->opaque;

	if (!so->markValid)
		return;
	if (so->gpu_items)
	{
		so->gpu_i = so->gpu_mark;
		return;
	}
	mark_killed(scan);
	if (so->pos.blk != so->mark->blk || !BufferIsValid(so->pin))
	{
		drop_pin(so);
		if (needs_pin(scan))
			so->pin = ReadBuffer(scan->indexRelation, so->mark->blk);
	}
	copy_pos(&so->pos, so->mark, so->nw);
	so->itups_hi = so->itups_lo = 0;
	/* the pin may have lapsed since the mark's leaf was read: the LSN vouches */
	so->pos.pinned = false;
}
