/*-------------------------------------------------------------------------
 *
 * wide_wal.c
 *	  The WSPLIT record of gbtree's resource manager: a split of a
 *	  multi-word page, written by wide_tree.c and replayed here
 *	  (gbtree_xlog.h).  Under generic WAL a split logs its new right page
 *	  whole, and a left page laid out again whole too: two 8 kB images.
 *	  This record logs the split page's input to its node function, which
 *	  redo runs again on the same bytes, and the right page's entries,
 *	  from which redo lays it out again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogutils.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"

#include "gbtree.h"
#include "gbtree_wide.h"
#include "gbtree_xlog.h"

/*
 * The record's data, kept until gbt_wal_finish has copied it: block 0's
 * (the left page's input), block 1's (the right page) and block 2's (the
 * downlink).
 */
struct GbtWsplitLog
{
	xl_gbt_wsplit x;
	StringInfoData left;
	StringInfoData right;
	StringInfoData down;
	StringInfoData main;		/* APPEND: the header, then the given entries */
};

/*
 * A split's record, started with the left page's input: kind, share
 * (HALVES: leftpct; MERGE: nleft), grows (HALVES), and the nnew entries
 * given to the node function (keys nwords words each, then tids; for
 * HALVES at most one, with its tail and child).  NULL under generic WAL.
 */
GbtWsplitLog *
gbt_wsplit_start(int nwords, GbtWsplitKind kind, int share, bool grows, int nnew,
				 const uint64 *keys, const uint64 *tids, GbtTail tail, uint32 child)
{
	GbtWsplitLog *lg;

	if (!gbt_wal_rmgr)
		return NULL;
	lg = palloc0(sizeof(GbtWsplitLog));
	lg->x.kind = kind;
	lg->x.grows = grows;
	lg->x.hasnew = nnew > 0;
	lg->x.share = share;
	lg->x.nnew = nnew;
	lg->x.nwords = nwords;
	initStringInfo(&lg->left);
	initStringInfo(&lg->right);
	initStringInfo(&lg->down);
	initStringInfo(&lg->main);
	appendBinaryStringInfo(&lg->left, (const char *) keys, sizeof(uint64) * nwords * nnew);
	appendBinaryStringInfo(&lg->left, (const char *) tids, sizeof(uint64) * nnew);
	if (kind == GBT_WSPLIT_HALVES && nnew > 0)
	{
		uint16		tlen = tail.len;

		appendBinaryStringInfo(&lg->left, (const char *) &child, sizeof(uint32));
		appendBinaryStringInfo(&lg->left, (const char *) &tlen, sizeof(uint16));
		appendBinaryStringInfo(&lg->left, (const char *) tail.data, tail.len);
	}
	return lg;
}

void
gbt_wsplit_free(GbtWsplitLog *lg)
{
	if (lg == NULL)
		return;
	pfree(lg->left.data);
	pfree(lg->right.data);
	pfree(lg->down.data);
	pfree(lg->main.data);
	pfree(lg);
}

/* whether the bodies of two page images are the same bytes */
static bool
same_body(const char *a, const char *b)
{
	return memcmp(a + GBT_BODY_OFFSET, b + GBT_BODY_OFFSET, BLCKSZ - GBT_BODY_OFFSET) == 0;
}

/*
 * Block 1's data: the right page rp as built (gbtree_xlog.h).  given: the
 * split's given entries in main data (an append split's), which the page's
 * entries are left out for when they are exactly those.
 */
static void
describe_right(StringInfo out, Page rp, const GbtWsplitLog *given)
{
	GbtNode		node;
	xl_gbt_wpage wp;
	int			nw,
				n;
	bool		leaf;
	uint64	   *keys = palloc(sizeof(uint64) * GBT_MAX_SLOT_WORDS);
	uint64	   *tids = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint32	   *child = palloc(sizeof(uint32) * GBT_MAX_SLOTS);
	GbtTail    *tails = palloc(sizeof(GbtTail) * GBT_MAX_SLOTS);
	GbtTail		lowtail,
				hitail;
	PGAlignedBlock *img = palloc(sizeof(PGAlignedBlock));

	gbt_node_view((char *) rp, &node);
	nw = node.nwords;
	leaf = (node.opaque->flags & GBT_F_LEAF) != 0;
	n = gbt_node_extract_tails(&node, keys, tids, leaf ? NULL : child, tails);
	lowtail = gbt_node_bound_tail(&node, 1);
	hitail = gbt_node_bound_tail(&node, 0);

	memset(&wp, 0, sizeof(wp));
	wp.op = *node.opaque;
	wp.n = n;
	wp.lowtaillen = lowtail.len;
	wp.hitaillen = hitail.len;
	/* which of the two layouts the split gave it; else the body itself */
	wp.image = true;
	for (int spread = 1; spread >= 0 && wp.image; spread--)
	{
		memset(img->data, 0, BLCKSZ);
		gbt_node_fill_page(img->data, node.opaque, node.xbounds, lowtail, hitail, n, keys,
						   tids, child, node.toff ? tails : NULL, spread);
		if (same_body(img->data, (const char *) rp))
		{
			wp.image = false;
			wp.spread = spread;
		}
	}
	if (!wp.image && given != NULL && leaf && node.toff == NULL && n == given->x.nnew &&
		memcmp(keys, given->left.data, sizeof(uint64) * nw * n) == 0 &&
		memcmp(tids, given->left.data + sizeof(uint64) * nw * n, sizeof(uint64) * n) == 0)
		wp.given = true;
	appendBinaryStringInfo(out, (const char *) &wp, sizeof(wp));
	if (wp.image)
		appendBinaryStringInfo(out, (const char *) rp + GBT_BODY_OFFSET,
							   BLCKSZ - GBT_BODY_OFFSET);
	else
	{
		appendBinaryStringInfo(out, (const char *) node.xbounds, sizeof(uint64) * 2 * (nw - 1));
		if (!wp.given)
		{
			appendBinaryStringInfo(out, (const char *) keys, sizeof(uint64) * nw * n);
			appendBinaryStringInfo(out, (const char *) tids, sizeof(uint64) * n);
		}
		if (!leaf)
			appendBinaryStringInfo(out, (const char *) child, sizeof(uint32) * n);
		if (node.toff)
		{
			for (int i = 0; i < n; i++)
			{
				uint16		len = tails[i].len;

				appendBinaryStringInfo(out, (const char *) &len, sizeof(uint16));
			}
			appendBinaryStringInfo(out, (const char *) lowtail.data, lowtail.len);
			appendBinaryStringInfo(out, (const char *) hitail.data, hitail.len);
			for (int i = 0; i < n; i++)
				appendBinaryStringInfo(out, (const char *) tails[i].data, tails[i].len);
		}
	}
	pfree(img);
	pfree(keys);
	pfree(tids);
	pfree(child);
	pfree(tails);
}

/*
 * Complete the record before gbt_wal_finish: the right page rp as built
 * (its links set), and the downlink (sep, septail, septid) the parent
 * took.  Nothing under generic WAL (lg NULL).
 */
void
gbt_wsplit_finish(GbtWal *w, GbtWsplitLog *lg, Page rp, const uint64 *sep, GbtTail septail,
				  uint64 septid)
{
	bool		append = lg != NULL && lg->x.kind == GBT_WSPLIT_APPEND;

	if (lg == NULL)
		return;
	describe_right(&lg->right, rp, append ? lg : NULL);
	appendBinaryStringInfo(&lg->down, (const char *) sep, sizeof(uint64) * lg->x.nwords);
	appendBinaryStringInfo(&lg->down, (const char *) &septid, sizeof(uint64));
	appendBinaryStringInfo(&lg->down, (const char *) septail.data, septail.len);
	lg->x.septaillen = septail.len;
	if (append)
	{
		/*
		 * An append split's given entries are all the right page's: they
		 * go once, in the main data (kept with an image of the left page,
		 * which registered data is not), not in block 0's and again in
		 * block 1's.  Logged twice, they made a COPY's index WAL 1.6x the
		 * index's size with the resource manager (generic WAL: 1.08x).
		 */
		appendBinaryStringInfo(&lg->main, (const char *) &lg->x, sizeof(xl_gbt_wsplit));
		appendBinaryStringInfo(&lg->main, lg->left.data, lg->left.len);
		gbt_wal_main_data(w, lg->main.data, lg->main.len);
	}
	else
	{
		gbt_wal_main_data(w, &lg->x, sizeof(xl_gbt_wsplit));
		gbt_wal_block_data(w, 0, lg->left.data, lg->left.len);
	}
	gbt_wal_block_data(w, 1, lg->right.data, lg->right.len);
	gbt_wal_block_data(w, 2, lg->down.data, lg->down.len);
}

/* ---- redo (gbt_redo resets its memory context after each record) --------- */

/* A reader of a block's data that fails loudly past its end */
typedef struct DataReader
{
	const char *p;
	Size		left;
} DataReader;

static const void *
take(DataReader *r, Size len)
{
	const char *at = r->p;

	if (len > r->left)
		elog(PANIC, "gbtree redo: a split record's data is short");
	r->p += len;
	r->left -= len;
	return at;
}

/* len bytes from the reader, copied to aligned memory */
static void *
take_copy(DataReader *r, Size len)
{
	void	   *out = palloc(Max(len, 1));

	memcpy(out, take(r, len), len);
	return out;
}

/* The given entries: an append split's in the main data, else block 0's */
static void
given_entries(XLogReaderState *record, const xl_gbt_wsplit *x, DataReader *r)
{
	Size		len;

	if (x->kind == GBT_WSPLIT_APPEND)
	{
		r->p = XLogRecGetData(record) + sizeof(xl_gbt_wsplit);
		r->left = XLogRecGetDataLen(record) - sizeof(xl_gbt_wsplit);
	}
	else
	{
		r->p = XLogRecGetBlockData(record, 0, &len);
		r->left = r->p ? len : 0;
	}
}

static void
redo_left(XLogReaderState *record, const xl_gbt_wsplit *x, Page page, BlockNumber rblk)
{
	DataReader	r;
	int			nw = x->nwords;
	uint64	   *keys,
			   *tids;
	PGAlignedBlock *old = palloc(sizeof(PGAlignedBlock));
	PGAlignedBlock *left = palloc0(sizeof(PGAlignedBlock));
	PGAlignedBlock *right = palloc0(sizeof(PGAlignedBlock));

	given_entries(record, x, &r);
	keys = take_copy(&r, sizeof(uint64) * nw * x->nnew);
	tids = take_copy(&r, sizeof(uint64) * x->nnew);
	switch (x->kind)
	{
		case GBT_WSPLIT_HALVES:
			{
				uint32		child = 0;
				uint16		tlen = 0;
				GbtTail		tail = GBT_NO_TAIL;

				if (x->hasnew)
				{
					memcpy(&child, take(&r, sizeof(uint32)), sizeof(uint32));
					memcpy(&tlen, take(&r, sizeof(uint16)), sizeof(uint16));
					tail.data = take_copy(&r, tlen);
					tail.len = tlen;
				}
				memcpy(old->data, page, BLCKSZ);
				if (gbt_node_split(old->data, x->hasnew ? keys : NULL, tail, x->hasnew ? tids[0] : 0,
								   child, x->share, x->grows, left->data, right->data) < 0)
					elog(PANIC, "gbtree redo: a split of a page of fewer than two entries");
				gbt_wide_put_body(page, left->data);
				break;
			}
		case GBT_WSPLIT_CUT:
			if (!gbt_node_cut_split((char *) page, keys, tids, x->nnew, right->data))
				elog(PANIC, "gbtree redo: a cut split that does not fit");
			gbt_wide_set_lower(page);
			break;
		case GBT_WSPLIT_MERGE:
			memcpy(old->data, page, BLCKSZ);
			gbt_node_merge_split(old->data, keys, tids, x->nnew, x->share, left->data,
								 right->data);
			gbt_wide_put_body(page, left->data);
			break;
		case GBT_WSPLIT_APPEND:
			gbt_node_append_split((char *) page, keys, tids, x->nnew, right->data);
			break;
		default:
			elog(PANIC, "gbtree redo: unknown split kind %u", x->kind);
	}
	gbt_page_opaque((char *) page)->rightlink = rblk;
}

static void
redo_right(XLogReaderState *record, const xl_gbt_wsplit *x, Page page)
{
	Size		len;
	DataReader	r;
	xl_gbt_wpage wp;
	PGAlignedBlock *img = palloc0(sizeof(PGAlignedBlock));

	r.p = XLogRecGetBlockData(record, 1, &len);
	r.left = r.p ? len : 0;
	memcpy(&wp, take(&r, sizeof(wp)), sizeof(wp));
	PageInit(page, BLCKSZ, GBT_OPAQUE_SIZE);
	if (wp.image)
		memcpy(img->data + GBT_BODY_OFFSET, take(&r, BLCKSZ - GBT_BODY_OFFSET),
			   BLCKSZ - GBT_BODY_OFFSET);
	else
	{
		int			nw = x->nwords,
					n = wp.n;
		bool		leaf = (wp.op.flags & GBT_F_LEAF) != 0;
		bool		tailed = (wp.op.flags & GBT_F_TAILS) != 0;
		uint64	   *xb = take_copy(&r, sizeof(uint64) * 2 * (nw - 1));
		DataReader	g;
		DataReader *from = &r;
		uint64	   *keys,
				   *tids;
		uint32	   *child;
		GbtTail    *tails = NULL;
		GbtTail		lowtail = GBT_NO_TAIL,
					hitail = GBT_NO_TAIL;

		if (wp.given)
		{
			/* an append split's: the given entries in the main data */
			given_entries(record, x, &g);
			from = &g;
		}
		keys = take_copy(from, sizeof(uint64) * nw * n);
		tids = take_copy(from, sizeof(uint64) * n);
		child = leaf ? NULL : take_copy(&r, sizeof(uint32) * n);

		if (tailed)
		{
			uint16	   *lens = take_copy(&r, sizeof(uint16) * n);

			lowtail.len = wp.lowtaillen;
			lowtail.data = take(&r, wp.lowtaillen);
			hitail.len = wp.hitaillen;
			hitail.data = take(&r, wp.hitaillen);
			tails = palloc(sizeof(GbtTail) * Max(n, 1));
			for (int i = 0; i < n; i++)
			{
				tails[i].len = lens[i];
				tails[i].data = take(&r, lens[i]);
			}
		}
		gbt_node_fill_page(img->data, &wp.op, xb, lowtail, hitail, n, keys, tids, child, tails,
						   wp.spread);
	}
	gbt_wide_put_body(page, img->data);
}

void
gbt_wide_redo_split(XLogReaderState *record)
{
	const xl_gbt_wsplit *xp = (const xl_gbt_wsplit *) XLogRecGetData(record);
	xl_gbt_wsplit x;
	XLogRecPtr	lsn = record->EndRecPtr;
	Buffer		bufs[4] = {InvalidBuffer, InvalidBuffer, InvalidBuffer, InvalidBuffer};
	BlockNumber lblk,
				rblk;

	memcpy(&x, xp, sizeof(x));
	XLogRecGetBlockTag(record, 0, NULL, NULL, &lblk);
	XLogRecGetBlockTag(record, 1, NULL, NULL, &rblk);

	/* all pages stay locked until every one is done, as on the primary */
	if (XLogReadBufferForRedo(record, 0, &bufs[0]) == BLK_NEEDS_REDO)
	{
		redo_left(record, &x, BufferGetPage(bufs[0]), rblk);
		PageSetLSN(BufferGetPage(bufs[0]), lsn);
		MarkBufferDirty(bufs[0]);
	}
	bufs[1] = XLogInitBufferForRedo(record, 1);
	redo_right(record, &x, BufferGetPage(bufs[1]));
	PageSetLSN(BufferGetPage(bufs[1]), lsn);
	MarkBufferDirty(bufs[1]);
	if (XLogReadBufferForRedo(record, 2, &bufs[2]) == BLK_NEEDS_REDO)
	{
		Page		pp = BufferGetPage(bufs[2]);
		Size		len;
		DataReader	r;
		uint64	   *sep;
		uint64		septid;
		GbtTail		septail;
		GbtNode		node;

		r.p = XLogRecGetBlockData(record, 2, &len);
		r.left = r.p ? len : 0;
		sep = take_copy(&r, sizeof(uint64) * x.nwords);
		memcpy(&septid, take(&r, sizeof(uint64)), sizeof(uint64));
		septail.len = x.septaillen;
		septail.data = take(&r, x.septaillen);
		gbt_node_view((char *) pp, &node);
		if (!gbt_wide_node_put(pp, &node, sep, septail, septid, rblk))
			elog(PANIC, "gbtree redo: no room for a downlink");
		gbt_wide_set_lower(pp);
		PageSetLSN(pp, lsn);
		MarkBufferDirty(bufs[2]);
	}
	if (XLogRecHasBlockRef(record, 3) &&
		XLogReadBufferForRedo(record, 3, &bufs[3]) == BLK_NEEDS_REDO)
	{
		gbt_page_opaque((char *) BufferGetPage(bufs[3]))->leftlink = rblk;
		PageSetLSN(BufferGetPage(bufs[3]), lsn);
		MarkBufferDirty(bufs[3]);
	}
	for (int i = 0; i < 4; i++)
		if (BufferIsValid(bufs[i]))
			UnlockReleaseBuffer(bufs[i]);
}

void
gbt_wide_desc_split(StringInfo buf, XLogReaderState *record)
{
	static const char *const kinds[] = {"halves", "cut", "merge", "append"};
	const xl_gbt_wsplit *x = (const xl_gbt_wsplit *) XLogRecGetData(record);
	Size		len = 0;
	xl_gbt_wpage wp;
	const char *d = XLogRecGetBlockData(record, 1, &len);

	appendStringInfo(buf, "kind: %s, words: %u, given entries: %u",
					 x->kind < lengthof(kinds) ? kinds[x->kind] : "?", x->nwords, x->nnew);
	if (d && len >= sizeof(wp))
	{
		memcpy(&wp, d, sizeof(wp));
		appendStringInfo(buf, ", level: %u, right entries: %u%s%s", wp.op.level, wp.n,
						 wp.image ? ", right page whole" : "",
						 wp.given ? " (the given ones)" : "");
	}
	if (XLogRecHasBlockImage(record, 0))
		appendStringInfoString(buf, ", left page whole");
}

/*
 * Redo of XLOG_GBT_WMERGE: the entries merged into the multi-word leaf
 * again (wide_post.c, gbt_wide_merge_page)
 */
void
gbt_wide_redo_merge(XLogReaderState *record)
{
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		const uint64 *e = (const uint64 *) XLogRecGetBlockData(record, 0, &len);
		Size		esize = sizeof(uint64) * (gbt_page_words(page) + 1);

		if (e == NULL || len == 0 || len % esize != 0)
			elog(PANIC, "gbtree redo: bad multi-word entries");
		gbt_wide_merge_page(page, e, (int) (len / esize));
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}
