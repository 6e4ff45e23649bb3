/*-------------------------------------------------------------------------
 *
 * wide_post.c
 *	  Writers of multi-word leaves in posting form (node_wpost.c holds the
 *	  form itself; src/README, "Deduplication"): inserts, the change of a
 *	  full plain leaf to the form, a posting leaf's split images and a
 *	  batch's merge.
 *
 * Every change of a leaf in posting form rewrites it from its entries, in
 * whichever form they take (the plain form when they fit its slots), and
 * is logged by generic WAL: the change itself as a page delta, a split as
 * two page images (wide_tree.c, posting_split).  gbtree's own records
 * (WINSERT, WSPLIT) replay node functions on plain pages and are never
 * written for these.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "utils/rel.h"

#include "gbtree_gpu.h"
#include "gbtree_wide.h"
#include "gbtree_wpost.h"
#include "gbtree_xlog.h"

static bool posting_insert_inplace(Page page, int nw, const uint64 *x);

/* A leaf's entries in order, either form (nw words and the TID each). */
static int
leaf_entries(Page page, int nw, uint64 *e)
{
	GbtNode		node;
	int			n = 0;

	if (gbt_page_is_posting((char *) page))
		return gbt_wpost_decode((char *) page, e);
	gbt_node_view((char *) page, &node);
	Assert(node.toff == NULL);
	for (int s = gbt_node_next_used(&node, 0); s < node.nslots;
		 s = gbt_node_next_used(&node, s + 1))
	{
		gbt_walk_slot_words(&node, s, &e[(Size) n * (nw + 1)]);
		e[(Size) n * (nw + 1) + nw] = node.tids[s];
		n++;
	}
	return n;
}

/* whether n sorted entries fit one leaf of this layout, either form */
static bool
leaf_entries_fit(int n, int nw, const uint64 *e, uint16 flags)
{
	return n <= gbt_leaf_slots_for(nw) || gbt_wpost_fits(n, nw, e, flags);
}

/*
 * Lay out the leaf page (its special space and bounds kept) with n sorted
 * entries that leaf_entries_fit: the plain form where they fit its slots,
 * else the posting form.  Its dead marks go (they described old slots).
 */
void
gbt_wide_leaf_fill(Page page, int nw, const uint64 *e, int n)
{
	uint64		xb[2 * GBT_MAX_KEY_WORDS];
	GbtNode		node;

	gbt_node_view((char *) page, &node);
	memcpy(xb, node.xbounds, sizeof(uint64) * 2 * (nw - 1));
	gbt_leaf_reformat((char *) page, nw);
	gbt_node_view((char *) page, &node);
	memcpy(node.xbounds, xb, sizeof(uint64) * 2 * (nw - 1));
	if (n > node.nslots)
		gbt_wpost_encode((char *) page, n, nw, e);
	else
	{
		uint64	   *keys = palloc(sizeof(uint64) * GBT_MAX_SLOT_WORDS);
		uint64	   *tids = palloc(sizeof(uint64) * GBT_MAX_SLOTS);

		for (int i = 0; i < n; i++)
		{
			memcpy(&keys[i * nw], &e[(Size) i * (nw + 1)], sizeof(uint64) * nw);
			tids[i] = e[(Size) i * (nw + 1) + nw];
		}
		gbt_node_load_spread(&node, n, keys, tids, NULL, true);
		pfree(keys);
		pfree(tids);
	}
	gbt_wide_set_lower(page);
}

/*
 * Rewrite the locked leaf with the n sorted entries e, which are its own
 * merged with the m sorted entries add (stride nw + 1), or with e NULL
 * put the one entry add into the posting leaf in place (the same bytes;
 * posting_insert_inplace), false and nothing written where it does not
 * take it so: an XLOG_GBT_WMERGE
 * record of add, whose redo merges them again (gbt_wide_merge_page), or
 * without the resource manager a page delta.  A rewrite moves every key
 * and TID, so the delta was some 600 bytes for a row's insert.
 */
static bool
leaf_rewrite_logged(Relation index, Buffer buf, int nw, const uint64 *e, int n,
					const uint64 *add, int m, const char *what)
{
	GbtWal	   *w = gbt_wal_start(index);
	Page		page = gbt_wal_register(w, buf, 0);
	BlockNumber blkno = BufferGetBlockNumber(buf);

	if (e)
		gbt_wide_leaf_fill(page, nw, e, n);
	else if (!posting_insert_inplace(page, nw, add))
	{
		gbt_wal_abort(w);
		return false;
	}
	gbt_wal_block_data(w, 0, add, sizeof(uint64) * (nw + 1) * m);
	gbt_wal_finish(w, XLOG_GBT_WMERGE);
	GBT_CHECK_WRITTEN(index, buf, what);
	gbt_gpu_note_changes(index, &blkno, 1, false);
	return true;
}

/*
 * Merge the m sorted entries add (stride `stride`, nw words and the TID
 * first) into the n sorted entries e (stride nw + 1), into out; entries
 * already present are not doubled.  Returns the count.
 */
static int
merge_entries(const uint64 *e, int n, const uint64 *add, int m, int stride, int nw, uint64 *out)
{
	int			i = 0,
				j = 0,
				k = 0;

	while (i < n || j < m)
	{
		const uint64 *x = i < n ? &e[(Size) i * (nw + 1)] : NULL;
		const uint64 *y = j < m ? &add[(Size) j * stride] : NULL;
		int			c = !x ? 1 : !y ? -1 :
			gbt_words_cmp(x, y, nw) != 0 ? gbt_words_cmp(x, y, nw) :
			(x[nw] < y[nw] ? -1 : x[nw] > y[nw]);

		if (c <= 0)
		{
			memcpy(&out[(Size) k++ * (nw + 1)], x, sizeof(uint64) * (nw + 1));
			i++;
			if (c == 0)
				j++;
		}
		else
		{
			memcpy(&out[(Size) k++ * (nw + 1)], y, sizeof(uint64) * (nw + 1));
			j++;
		}
	}
	return k;
}

/* (key, tid) as an entry (nw words and the TID) in x */
static const uint64 *
entry_of(int nw, const uint64 *key, uint64 tid, uint64 *x)
{
	memcpy(x, key, sizeof(uint64) * nw);
	x[nw] = tid;
	return x;
}

/*
 * The leaf's entries with (key, tid) added where key is not NULL, into out
 * (room for GBT_LEAF_MAX_ENTRIES + 1); returns their number.
 */
static int
leaf_plus_entry(Page page, int nw, const uint64 *key, uint64 tid, uint64 *out)
{
	uint64	   *e = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES * GBT_WIDE_MAX_STRIDE);
	uint64		x[GBT_WIDE_MAX_STRIDE];
	int			n = leaf_entries(page, nw, e);
	int			k;

	k = merge_entries(e, n, key ? entry_of(nw, key, tid, x) : NULL, key ? 1 : 0, nw + 1, nw, out);
	pfree(e);
	return k;
}

/*
 * The entry x (nw words, the TID) into the leaf in place where it is in
 * posting form and takes it so (gbt_wpost_insert_inplace); false, the page
 * unchanged, where not.  Assertion builds check the bytes against a
 * rewrite's.
 */
static bool
posting_insert_inplace(Page page, int nw, const uint64 *x)
{
#ifdef USE_ASSERT_CHECKING
	PGAlignedBlock before;

	memcpy(before.data, page, BLCKSZ);
#endif
	if (!gbt_wpost_insert_inplace((char *) page, x, x[nw], true))
		return false;
#ifdef USE_ASSERT_CHECKING
	{
		uint64	   *out = palloc(sizeof(uint64) * (GBT_LEAF_MAX_ENTRIES + 1) * GBT_WIDE_MAX_STRIDE);

		gbt_wide_leaf_fill((Page) before.data, nw, out,
						   leaf_plus_entry((Page) before.data, nw, x, x[nw], out));
		pfree(out);
		Assert(memcmp(before.data, page, BLCKSZ) == 0);
	}
#endif
	return true;
}

/*
 * The locked leaf in posting form takes (key, tid) if the posting form
 * still holds its entries with it; false (nothing written) otherwise.
 */
bool
gbt_wide_posting_insert(Relation index, Buffer buf, int nw, const uint64 *key, uint64 tid)
{
	uint64	   *out;
	int			k;
	uint64		x[GBT_WIDE_MAX_STRIDE];
	bool		done = false;

	if (leaf_rewrite_logged(index, buf, nw, NULL, 0, entry_of(nw, key, tid, x), 1,
							"an insert into a posting leaf"))
		return true;
	out = palloc(sizeof(uint64) * (GBT_LEAF_MAX_ENTRIES + 1) * GBT_WIDE_MAX_STRIDE);
	k = leaf_plus_entry(BufferGetPage(buf), nw, key, tid, out);

	if (leaf_entries_fit(k, nw, out, gbt_page_opaque((char *) BufferGetPage(buf))->flags))
	{
		leaf_rewrite_logged(index, buf, nw, out, k, entry_of(nw, key, tid, x), 1,
							"an insert into a posting leaf");
		done = true;
	}
	pfree(out);
	return done;
}

/* whether the posting leaf would take (key, tid) (gbt_wide_posting_insert's test) */
bool
gbt_wide_posting_takes(Page page, int nw, const uint64 *key, uint64 tid)
{
	uint64	   *out;
	int			k;
	bool		fits;

	if (gbt_wpost_insert_inplace((char *) page, key, tid, false))
		return true;
	out = palloc(sizeof(uint64) * (GBT_LEAF_MAX_ENTRIES + 1) * GBT_WIDE_MAX_STRIDE);
	k = leaf_plus_entry(page, nw, key, tid, out);
	fits = leaf_entries_fit(k, nw, out, gbt_page_opaque((char *) page)->flags);

	pfree(out);
	return fits;
}

/*
 * A full plain leaf of an index that deduplicates (gbt_wide_dedup) takes
 * the posting form instead of splitting, as nbtree deduplicates a leaf
 * that would split: when its entries and (key, tid) fit that form and
 * keys repeat (two TIDs a key or more).  False (nothing written) if not.
 */
bool
gbt_wide_posting_instead_of_split(Relation index, Buffer buf, int nw, const uint64 *key, uint64 tid)
{
	Page		page = BufferGetPage(buf);
	GbtPageOpaque op = gbt_page_opaque((char *) page);
	uint64	   *out;
	uint64		x[GBT_WIDE_MAX_STRIDE];
	int			k,
				groups = 0;
	bool		done = false;

	if (!(op->flags & GBT_F_LEAF) || (op->flags & (GBT_F_POSTING | GBT_F_TAILS)) ||
		!gbt_wide_dedup(index, gbt_index_info(index)))
		return false;
	out = palloc(sizeof(uint64) * (GBT_LEAF_MAX_ENTRIES + 1) * GBT_WIDE_MAX_STRIDE);
	k = leaf_plus_entry(page, nw, key, tid, out);
	for (int i = 0; i < k; i++)
		if (i == 0 || gbt_words_cmp(&out[(Size) i * (nw + 1)], &out[(Size) (i - 1) * (nw + 1)], nw) != 0)
			groups++;
	if (k > gbt_leaf_slots_for(nw) && k >= 2 * groups && gbt_wpost_fits(k, nw, out, op->flags))
	{
		leaf_rewrite_logged(index, buf, nw, out, k, entry_of(nw, key, tid, x), 1,
							"a leaf taking the posting form");
		done = true;
	}
	pfree(out);
	return done;
}

/*
 * The split images of the leaf page in posting form into left and right, and their separator's words and TID
 * into sep: its entries and (key, tid), if key, cut near the middle (at
 * the start of a key's TIDs when one lies within a quarter of it), each
 * half laid out in whichever form holds it; the left image keeps the
 * page's low key and left-link, the right one its high key, right-link
 * and rightmost flag.
 */
static void
posting_images(Page page, int nw, const uint64 *key, GbtTail tail, uint64 tid, int fillfactor,
			   char *left, char *right, uint64 *sep_out)
{
	uint64	   *out = palloc(sizeof(uint64) * (GBT_LEAF_MAX_ENTRIES + 1) * GBT_WIDE_MAX_STRIDE);
	bool		tailed = key && tail.len > 0;
	int			k = leaf_plus_entry(page, nw, tailed ? NULL : key, tid, out),
				m,
				best;
	GbtPageOpaque lo,
				ro;
	GbtNode		lnode,
				rnode;
	const uint64 *sep;

	/*
	 * Near the middle, at a key's first TID if one is near.  But a leaf of
	 * one key (whose rows come in heap order, so the new TID is its last)
	 * or a rightmost leaf given a new last entry keeps the fill factor's
	 * share on the left, as nbtree splits a page of one value and its
	 * rightmost page, so that such runs leave full leaves, not halves.
	 */
	m = k / 2;
	if (tailed)
	{
		/*
		 * An entry with a tail (a text key longer than the words) goes into
		 * no posting leaf: the cut leaves it on a side of few entries, which
		 * takes the plain form, and the insert tries again there, where the
		 * page becomes tailed for it.  A side that small is at most a
		 * quarter of a tailed leaf from the entry's place: on the left if
		 * its place is that near the start, on the right if that near the
		 * end; else the entry's side keeps it that near its start, for the
		 * next try's cut.
		 */
		int			few = gbt_tail_slots(true, true) / 2;
		int			pos = 0;

		/* past the entries of its words if its tail orders above none */
		while (pos < k &&
			   (gbt_words_cmp(&out[(Size) pos * (nw + 1)], key, nw) < 0 ||
				(gbt_words_cmp(&out[(Size) pos * (nw + 1)], key, nw) == 0 &&
				 gbt_tail_cmp(NULL, 0, tail.data, tail.len) < 0)))
			pos++;
		if (pos <= few)
			m = pos;
		else if (k - pos < few)
			m = pos - 1;
		else
			m = pos - few / 2;
	}
	else if (key && k > 2 &&
		(gbt_words_cmp(&out[0], &out[(Size) (k - 1) * (nw + 1)], nw) == 0 ||
		 ((gbt_page_opaque((char *) page)->flags & GBT_F_RIGHTMOST) &&
		  gbt_words_cmp(&out[(Size) (k - 1) * (nw + 1)], key, nw) == 0 &&
		  out[(Size) (k - 1) * (nw + 1) + nw] == tid)))
		m = k * fillfactor / 100;
	else
	{
		best = m;
		for (int d = 0; d <= k / 4; d++)
		{
			if (m - d > 0 && gbt_words_cmp(&out[(Size) (m - d) * (nw + 1)],
										   &out[(Size) (m - d - 1) * (nw + 1)], nw) != 0)
			{
				best = m - d;
				break;
			}
			if (m + d < k && m + d > 0 &&
				gbt_words_cmp(&out[(Size) (m + d) * (nw + 1)],
							  &out[(Size) (m + d - 1) * (nw + 1)], nw) != 0)
			{
				best = m + d;
				break;
			}
		}
		m = best;
	}
	m = Max(1, Min(m, k - 1));

	/*
	 * Each side must fit a page: the new entry can widen every TID (a
	 * float's -0 flag, heap blocks further apart), so a share that fit
	 * before may not now.
	 */
	{
		uint16		lflags = gbt_page_opaque((char *) page)->flags;

		while (m > 1 && !leaf_entries_fit(m, nw, out, lflags))
			m--;
		while (m < k - 1 && !leaf_entries_fit(k - m, nw, &out[(Size) m * (nw + 1)], lflags))
			m++;
		if (!leaf_entries_fit(m, nw, out, lflags) ||
			!leaf_entries_fit(k - m, nw, &out[(Size) m * (nw + 1)], lflags))
			elog(ERROR, "gbtree: no split of a posting leaf of %d entries fits two pages", k);
	}
	sep = &out[(Size) m * (nw + 1)];
	memcpy(left, page, BLCKSZ);
	memcpy(right, page, BLCKSZ);
	/* the left image: the high key the separator, not rightmost, not the root */
	lo = gbt_page_opaque(left);
	lo->flags &= ~(GBT_F_RIGHTMOST | GBT_F_ROOT);
	lo->hikey = sep[0];
	lo->hitid = sep[nw];
	gbt_node_view(left, &lnode);
	for (int i = 1; i < nw; i++)
		lnode.xbounds[i - 1] = sep[i];
	gbt_wide_leaf_fill((Page) left, nw, out, m);
	/* the right image: the separator its low key */
	ro = gbt_page_opaque(right);
	ro->flags &= ~GBT_F_ROOT;
	ro->lowkey = sep[0];
	ro->lowtid = sep[nw];
	gbt_node_view(right, &rnode);
	for (int i = 1; i < nw; i++)
		rnode.xbounds[nw - 1 + i - 1] = sep[i];
	gbt_wide_leaf_fill((Page) right, nw, sep, k - m);
	memcpy(sep_out, sep, sizeof(uint64) * (nw + 1));
	pfree(out);
}

/* wide_tree.c's split_images for a leaf in posting form (posting_images) */
void
gbt_wide_posting_split_images(Page page, int nw, WideSplit *ws, const uint64 *key, GbtTail tail,
							  uint64 tid, int fillfactor)
{
	uint64		sep[GBT_MAX_KEY_WORDS + 1];

	memcpy(ws->old.data, page, BLCKSZ);
	posting_images(page, nw, key, tail, tid, fillfactor, ws->left.data, ws->right.data, sep);
	memcpy(ws->sep, sep, sizeof(uint64) * nw);
	ws->septid = sep[nw];
	ws->septail = GBT_NO_TAIL;
	ws->placed = key && tail.len == 0 ? 1 : 0;
}

/*
 * gbt_wide_insert_batch at a leaf in posting form: the batch's entries
 * from e[i] (stride: words, TID, the tail's index in tails) that belong
 * before the leaf's high key (hk, ht; any, rightmost), up to the first
 * with a tail (which goes in alone, gbt_wide_smo's way), go in, as many as the form then still holds, in one
 * rewrite; an entry the leaf already holds (a flush that failed midway)
 * is not doubled.  Returns how many it took (0: the first does not fit).
 */
Size
gbt_wide_posting_batch(Relation index, Buffer buf, int nw, const uint64 *e, const GbtTail *tails,
					   int stride, Size i, Size n, const uint64 *hk, uint64 ht, bool rightmost,
					   bool convert)
{
	uint64	   *cur,
			   *out;
	int			have;
	uint16		flags = gbt_page_opaque((char *) BufferGetPage(buf))->flags;
	Size		m = 0;
	int			k = 0;

	/* the entries that belong here */
	while (i + m < n && m < GBT_LEAF_MAX_ENTRIES)
	{
		const uint64 *x = &e[(i + m) * stride];

		if ((!rightmost && !gbt_wentry_lt(x, x[nw], hk, ht, nw)) ||
			tails[x[nw + 1] >> 16].len > 0)
			break;				/* (an entry with a tail goes in alone) */
		m++;
	}
	/* one entry into a posting leaf: in place, where it takes it so */
	if (m == 1 && !convert)
	{
		uint64		x[GBT_WIDE_MAX_STRIDE];

		if (leaf_rewrite_logged(index, buf, nw, NULL, 0,
								entry_of(nw, &e[i * stride], e[i * stride + nw], x), 1,
								"a batch's entry into a posting leaf"))
			return 1;
	}
	cur = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES * GBT_WIDE_MAX_STRIDE);
	out = palloc(sizeof(uint64) * (2 * GBT_LEAF_MAX_ENTRIES) * GBT_WIDE_MAX_STRIDE);
	have = leaf_entries(BufferGetPage(buf), nw, cur);
	/* as many as fit: fewer by halves, then one at a time */
	while (m > 0)
	{
		k = merge_entries(cur, have, &e[i * stride], (int) m, stride, nw, out);
		if (k <= GBT_LEAF_MAX_ENTRIES && leaf_entries_fit(k, nw, out, flags))
			break;
		m = m > 8 ? m / 2 : m - 1;
	}
	/*
	 * convert: a full plain leaf takes the posting form only where that
	 * holds more than its slots and keys repeat (two TIDs a key or more)
	 */
	if (m > 0 && convert)
	{
		int			groups = 0;

		for (int j = 0; j < k; j++)
			if (j == 0 || gbt_words_cmp(&out[(Size) j * (nw + 1)], &out[(Size) (j - 1) * (nw + 1)], nw) != 0)
				groups++;
		if (k <= gbt_leaf_slots_for(nw) || k < 2 * groups)
			m = 0;
	}
	if (m > 0)
	{
		/* the record's entries without the batch's tail indexes */
		uint64	   *add = palloc(sizeof(uint64) * (nw + 1) * m);

		for (Size j = 0; j < m; j++)
			memcpy(&add[j * (nw + 1)], &e[(i + j) * stride], sizeof(uint64) * (nw + 1));
		leaf_rewrite_logged(index, buf, nw, out, k, add, (int) m,
							"a batch's merge into a posting leaf");
		pfree(add);
	}
	pfree(cur);
	pfree(out);
	return m;
}

/*
 * Split the locked posting leaf in buf, whose locked parent pbuf takes the
 * downlink, adding (key, tid) when key is not NULL: split_page's work,
 * under generic WAL (both halves whole, the parent and the old right
 * sibling as deltas).  Returns the new right page, locked.
 */
Buffer
gbt_wide_posting_split(Relation index, Buffer pbuf, Buffer buf, int nw, WideSplit *ws,
					   const uint64 *key, GbtTail tail, uint64 tid, bool may_recycle)
{
	GbtPageOpaqueData old = *gbt_page_opaque((char *) BufferGetPage(buf));
	Buffer		rbuf,
				sbuf;
	BlockNumber rblk;
	GbtGxlog   *state;
	Page		lp,
				rp,
				pp;
	BlockNumber changed[4];

	gbt_wide_posting_split_images(BufferGetPage(buf), nw, ws, key, tail, tid,
								  gbt_get_fillfactor(index));
	if (!gbt_wide_page_has_room(BufferGetPage(pbuf), GBT_NO_TAIL))
		return InvalidBuffer;
	rbuf = gbt_new_buffer(index, may_recycle);
	rblk = BufferGetBlockNumber(rbuf);
	sbuf = gbt_wide_lock_old_right(index, old.rightlink, nw);
	state = gbt_gxlog_start(index);
	lp = gbt_gxlog_register(state, buf, GENERIC_XLOG_FULL_IMAGE);
	rp = gbt_gxlog_register(state, rbuf, GENERIC_XLOG_FULL_IMAGE);
	pp = gbt_gxlog_register(state, pbuf, 0);
	gbt_wide_put_halves(lp, rp, ws, BufferGetBlockNumber(buf), rblk);
	gbt_wide_put_downlink(index, pbuf, pp, ws->sep, GBT_NO_TAIL, ws->septid, rblk);
	if (BufferIsValid(sbuf))
	{
		Page		sp = gbt_gxlog_register(state, sbuf, 0);

		gbt_page_opaque((char *) sp)->leftlink = rblk;
	}
	gbt_gxlog_finish(state);
	changed[0] = BufferGetBlockNumber(pbuf);
	changed[1] = BufferGetBlockNumber(buf);
	changed[2] = rblk;
	changed[3] = BufferIsValid(sbuf) ? BufferGetBlockNumber(sbuf) : InvalidBlockNumber;
	gbt_gpu_note_changes(index, changed, BufferIsValid(sbuf) ? 4 : 3, true);
	if (BufferIsValid(sbuf))
		UnlockReleaseBuffer(sbuf);
	GBT_CHECK_WRITTEN(index, buf, "a posting split (left)");
	GBT_CHECK_WRITTEN(index, rbuf, "a posting split (right)");
	GBT_CHECK_WRITTEN(index, pbuf, "a posting split (parent)");
	return rbuf;
}

/*
 * The multi-word leaf with the m sorted entries add merged in, as
 * leaf_rewrite_logged did it: XLOG_GBT_WMERGE's redo (wide_wal.c).
 */
void
gbt_wide_merge_page(Page page, const uint64 *add, int m)
{
	GbtPageOpaque op = gbt_page_opaque((char *) page);
	int			nw = gbt_page_words(page);
	uint64	   *cur,
			   *out;
	int			k;

	if (!(op->flags & GBT_F_LEAF) || (op->flags & GBT_F_TAILS))
		elog(PANIC, "gbtree redo: a merge into a page that is not a leaf of words");
	/* as leaf_rewrite_logged chose: in place wherever the leaf takes it so */
	if (m == 1 && posting_insert_inplace(page, nw, add))
		return;
	cur = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES * GBT_WIDE_MAX_STRIDE);
	out = palloc(sizeof(uint64) * (GBT_LEAF_MAX_ENTRIES + m) * GBT_WIDE_MAX_STRIDE);
	k = merge_entries(cur, leaf_entries(page, nw, cur), add, m, nw + 1, nw, out);
	if (!leaf_entries_fit(k, nw, out, op->flags))
		elog(PANIC, "gbtree redo: merged entries do not fit the leaf");
	gbt_wide_leaf_fill(page, nw, out, k);
	pfree(cur);
	pfree(out);
}
