/*-------------------------------------------------------------------------
 *
 * wal.c
 *	  gbtree's WAL: its custom resource manager (records, redo, masking,
 *	  descriptions) and the builder every page change goes through.
 *
 * With gbtree in shared_preload_libraries the resource manager is
 * registered and page changes are logged as gbtree's own logical records:
 * the entries inserted, merged or moved and the slots deleted, not the
 * bytes they shift.  Without the preload a change is logged as generic
 * WAL (written here, gbt_gxlog_*), computed from the same page images, so
 * an index never depends on which way it was logged: the pages are the
 * same.
 *
 * A change is made on copies of its pages (gbt_wal_register), which the
 * page functions shared with redo (gbt_page_*) change exactly as redo
 * will; gbt_wal_finish puts the copies in place and logs them in one
 * critical section, as generic WAL does.  With the resource manager, small
 * leaf inserts skip the copies (gbt_wal_insert_inplace).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/generic_xlog.h"
#include "access/rmgr.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gbtree.h"
#include "gbtree_wide.h"
#include "gbtree_simd.h"
#include "gbtree_xlog.h"

/* the resource manager is registered: log gbtree's own records */
bool		gbt_wal_rmgr = false;

#define GBT_WAL_MAX_DATA	4	/* data pieces per block */

struct GbtWal
{
	Relation	index;
	GbtGxlog   *generic;		/* without the resource manager */
	int			nbuf;
	Buffer		buf[GBT_WAL_MAX_BLOCKS];
	int			flags[GBT_WAL_MAX_BLOCKS];
	PGAlignedBlock *copy[GBT_WAL_MAX_BLOCKS];	/* with the resource manager */
	const void *data[GBT_WAL_MAX_BLOCKS][GBT_WAL_MAX_DATA];
	Size		datalen[GBT_WAL_MAX_BLOCKS][GBT_WAL_MAX_DATA];
	int			ndata[GBT_WAL_MAX_BLOCKS];
	const void *main;
	Size		mainlen;
};

/*
 * Generic WAL, written here
 * -------------------------
 *
 * Without the resource manager, a change is logged as a generic WAL record
 * (RM_GENERIC_ID), which any server replays.  PostgreSQL's writer
 * (generic_xlog.c) finds the changed bytes by comparing the whole page a
 * byte at a time, some 8,000 comparisons a record: for a single-row insert
 * into a multi-word leaf that was half of a unique uuid insert's time.
 * gbt_gxlog_* write the same records, in the format generic_redo reads
 * (per block, fragments of offset, length and bytes; the hole between
 * pd_lower and pd_upper zeroed on the page and left out), finding the
 * next change 32 bytes at a time (gbt_first_diff) and following its run
 * byte by byte.  The page is changed exactly as GenericXLogFinish changes
 * it, so replay (checked by wal_consistency_checking = generic in TAP 003,
 * 009 and 013) gives the same page.  A page's first change since the
 * checkpoint is logged as its image without computing a delta, which the
 * image would replace anyway; so is a page whose delta would not fit in a
 * page.
 */
#define GXLOG_FRAG_HEADER	(2 * (int) sizeof(uint16))

#define GXLOG_MAX_RANGES	16

typedef struct GxlogPage
{
	Buffer		buf;
	int			flags;
	PGAlignedBlock *image;
	char	   *delta;
	int			deltalen;
	int			fbeg;			/* the open fragment, -1 none (gxlog_region) */
	int			fend;
	/* where the changes are, when the caller said (-1: anywhere) */
	int			nranges;
	int			range[GXLOG_MAX_RANGES + 4][2];	/* and gxlog_ranges' four */
	bool		whole[GXLOG_MAX_RANGES + 4];	/* changed throughout (gxlog_whole) */
} GxlogPage;

struct GbtGxlog
{
	bool		logged;
	GxlogPage	pages[GBT_WAL_MAX_BLOCKS];
};

GbtGxlog *
gbt_gxlog_start(Relation index)
{
	GbtGxlog   *g = palloc0(sizeof(GbtGxlog));

	g->logged = RelationNeedsWAL(index);
	for (int i = 0; i < GBT_WAL_MAX_BLOCKS; i++)
		g->pages[i].buf = InvalidBuffer;
	return g;
}

/*
 * A copy of the buffer's page to change (the same one if registered
 * before); flags GENERIC_XLOG_FULL_IMAGE logs its image.
 */
Page
gbt_gxlog_register(GbtGxlog *g, Buffer buf, int flags)
{
	int			i;

	for (i = 0; i < GBT_WAL_MAX_BLOCKS; i++)
	{
		GxlogPage  *p = &g->pages[i];

		if (p->buf == buf)
			return (Page) p->image->data;
		if (BufferIsInvalid(p->buf))
		{
			p->buf = buf;
			p->flags = flags;
			p->nranges = -1;
			p->image = palloc(sizeof(PGAlignedBlock));
			memcpy(p->image->data, BufferGetPage(buf), BLCKSZ);
			return (Page) p->image->data;
		}
	}
	elog(ERROR, "maximum number %d of generic xlog buffers is exceeded", GBT_WAL_MAX_BLOCKS);
	return NULL;				/* keep the compiler quiet */
}

/* the registered page of buf */
static GxlogPage *
gxlog_page(GbtGxlog *g, Buffer buf)
{
	for (int i = 0; i < GBT_WAL_MAX_BLOCKS; i++)
		if (g->pages[i].buf == buf)
			return &g->pages[i];
	elog(ERROR, "gbtree: a generic WAL hint for a buffer not registered");
	return NULL;				/* keep the compiler quiet */
}

/*
 * [off, off + len) among p's ranges; past GXLOG_MAX_RANGES, the page.
 * whole: the caller knows every slot there changed, so its bytes go into
 * the record as they are, without a diff (gxlog_whole).
 */
static void
gxlog_add_range(GxlogPage *p, int off, int len, bool whole)
{
	Assert(off >= 0 && len >= 0 && off + len <= BLCKSZ);
	if (len == 0)
		return;
	if (p->nranges < 0)
		p->nranges = 0;
	if (p->nranges == GXLOG_MAX_RANGES)
	{
		off = 0;
		len = BLCKSZ;
		whole = false;
		p->nranges = 0;
	}
	p->range[p->nranges][0] = off;
	p->range[p->nranges][1] = off + len;
	p->whole[p->nranges] = whole;
	p->nranges++;
}

/*
 * The caller's word that its changes to the registered page of buf lie in
 * [off, off + len), and in other ranges it gives, besides the page header,
 * the special space and what pd_lower and pd_upper move over: the record's
 * delta is then sought there alone, and only those bytes go back to the
 * buffer (a single-row insert changes a few hundred of 8,192).  Assert
 * builds check the word against the whole page.  Without a word, the
 * whole page is compared.
 */
void
gbt_gxlog_hint(GbtGxlog *g, Buffer buf, int off, int len)
{
	gxlog_add_range(gxlog_page(g, buf), off, len, false);
}

/*
 * The slots [lo, hi] of node, a view of page, among p's ranges, in page
 * order (gbt_node_view_words_tails' layout): in every array (whole: the
 * caller knows each of them changed), with their blocks' directory entries
 * and their words of the used bitmap.
 */
static void
gxlog_add_slots(GxlogPage *p, Page page, const GbtNode *node, int lo, int hi, bool whole)
{
	int			b0 = lo / GBT_BLOCK_SLOTS,
				b1 = hi / GBT_BLOCK_SLOTS;

#define HINT_ARRAY(a, from, to, w) \
	gxlog_add_range(p, (int) ((char *) ((a) + (from)) - (char *) page), \
					(int) (sizeof(*(a)) * ((to) - (from) + 1)), (w))

	HINT_ARRAY(node->keys, lo, hi, whole);
	HINT_ARRAY(node->tids, lo, hi, whole);
	if (node->child)
		HINT_ARRAY(node->child, lo, hi, whole);
	HINT_ARRAY(node->dir, b0, b1, false);
	HINT_ARRAY(node->used, lo >> 6, hi >> 6, false);
	for (int k = 1; k < node->nwords; k++)
		HINT_ARRAY(node->xkeys[k - 1], lo, hi, whole);
	for (int k = 1; k < node->nwords; k++)
		HINT_ARRAY(node->xdir[k - 1], b0, b1, false);
#undef HINT_ARRAY
}

/*
 * gbt_gxlog_hint for the changes inserts made through node, a view of
 * the registered page of buf: the slots [mod_lo, mod_hi] (gxlog_add_slots).
 * A page with tails (its tail area changes too) is compared whole.
 */
void
gbt_gxlog_hint_node(GbtGxlog *g, Buffer buf, Page page, const GbtNode *node)
{
	GxlogPage  *p = gxlog_page(g, buf);

	if (node->toff)
	{
		gxlog_add_range(p, 0, BLCKSZ, false);
		return;
	}
	if (node->mod_lo > node->mod_hi)
	{
		/* no slot changed: the header's ranges alone */
		gxlog_add_range(p, 0, SizeOfPageHeaderData, false);
		return;
	}
	gxlog_add_slots(p, page, node, node->mod_lo, node->mod_hi, false);
}

/*
 * The page's ranges with the header, the special space and the stretches
 * pd_lower and pd_upper moved over, sorted and merged; returns their
 * number.
 */
static int
gxlog_ranges(GxlogPage *p, const char *cur, const char *target)
{
	PageHeader	c = (PageHeader) cur,
				t = (PageHeader) target;
	int			n = p->nranges;
	int			m = 0;

	/* ranges the caller knows changed keep their order: not sorted here */
	for (int i = 0; i < n; i++)
		Assert(!p->whole[i]);
	p->range[n][0] = 0;
	p->range[n++][1] = SizeOfPageHeaderData;
	p->range[n][0] = Min(t->pd_special, c->pd_special);
	p->range[n++][1] = BLCKSZ;
	p->range[n][0] = Min(c->pd_lower, t->pd_lower);
	p->range[n++][1] = Max(c->pd_lower, t->pd_lower);
	p->range[n][0] = Min(c->pd_upper, t->pd_upper);
	p->range[n++][1] = Max(c->pd_upper, t->pd_upper);
	/* a few ranges: insertion sort */
	for (int i = 1; i < n; i++)
	{
		int			a = p->range[i][0],
					b = p->range[i][1],
					j = i;

		for (; j > 0 && p->range[j - 1][0] > a; j--)
		{
			p->range[j][0] = p->range[j - 1][0];
			p->range[j][1] = p->range[j - 1][1];
		}
		p->range[j][0] = a;
		p->range[j][1] = b;
	}
	for (int i = 0; i < n; i++)
	{
		if (p->range[i][1] <= p->range[i][0])
			continue;
		if (m > 0 && p->range[i][0] <= p->range[m - 1][1])
			p->range[m - 1][1] = Max(p->range[m - 1][1], p->range[i][1]);
		else
		{
			p->range[m][0] = p->range[i][0];
			p->range[m][1] = p->range[i][1];
			m++;
		}
	}
	memset(p->whole, 0, sizeof(p->whole));
	return m;
}

/* Assert builds: the page changed nowhere outside its ranges but the holes. */
static void
gxlog_check_ranges(GxlogPage *p, int nranges, const char *cur, const char *target)
{
#ifdef USE_ASSERT_CHECKING
	PageHeader	c = (PageHeader) cur,
				t = (PageHeader) target;
	int			r = 0;

	for (int i = 0; i < BLCKSZ; i++)
	{
		while (r < nranges && p->range[r][1] <= i)
			r++;
		if ((r < nranges && i >= p->range[r][0]) ||
			(i >= c->pd_lower && i < c->pd_upper) ||
			(i >= t->pd_lower && i < t->pd_upper))
			continue;
		if (cur[i] != target[i])
			elog(PANIC, "gbtree: generic WAL hint missed a change at byte %d", i);
	}
#endif
}

static void
gxlog_free(GbtGxlog *g)
{
	for (int i = 0; i < GBT_WAL_MAX_BLOCKS; i++)
	{
		if (g->pages[i].image)
			pfree(g->pages[i].image);
		if (g->pages[i].delta)
			pfree(g->pages[i].delta);
	}
	pfree(g);
}

void
gbt_gxlog_abort(GbtGxlog *g)
{
	gxlog_free(g);
}

/* a fragment of target's bytes [off, off + len); false if it does not fit */
static bool
gxlog_put(GxlogPage *p, const char *target, int off, int len)
{
	uint16		o = (uint16) off;
	uint16		l = (uint16) len;

	if (p->deltalen + GXLOG_FRAG_HEADER + len > BLCKSZ)
		return false;
	memcpy(p->delta + p->deltalen, &o, sizeof(o));
	memcpy(p->delta + p->deltalen + sizeof(o), &l, sizeof(l));
	memcpy(p->delta + p->deltalen + GXLOG_FRAG_HEADER, target + off, len);
	p->deltalen += GXLOG_FRAG_HEADER + len;
	return true;
}

/* Add target's bytes [b, e) to the open fragment, or open a new one. */
static bool
gxlog_add(GxlogPage *p, const char *target, int *fbeg, int *fend, int b, int e)
{
	if (*fbeg >= 0 && b - *fend <= GXLOG_FRAG_HEADER)
	{
		*fend = e;
		return true;
	}
	if (*fbeg >= 0 && !gxlog_put(p, target, *fbeg, *fend - *fbeg))
		return false;
	*fbeg = b;
	*fend = e;
	return true;
}

/*
 * The fragments for target's bytes [start, end): those that differ from
 * cur (found by gbt_first_diff, 32 bytes at a time where the CPU can), and
 * all of those outside [vstart, vend), which cur does not hold (its hole).
 * Differences closer than a fragment header join one fragment, across
 * calls too: the last stays open in p until gxlog_close.  False if they do
 * not fit in a page.
 */
static bool
gxlog_region(GxlogPage *p, const char *cur, const char *target, int start, int end,
			 int vstart, int vend)
{
	int			cstart = Max(start, vstart);	/* the bytes cur holds */
	int			cend = Max(Min(end, vend), cstart);
	int			fbeg = p->fbeg,
				fend = p->fend;
	bool		ok = true;

	if (cstart > start && !gxlog_add(p, target, &fbeg, &fend, start, cstart))
		return false;
	for (int i = cstart; i < cend;)
	{
		int			d = gbt_first_diff(cur, target, i, cend);
		int			last = d;
		int			j;

		if (d >= cend)
			break;

		/*
		 * The run of changes from d, 8 bytes at a time here: a run (slots
		 * that moved) is many bytes, and a call for each would cost more
		 * than the search.  It ends before more equal bytes than a
		 * fragment's header, where a new fragment costs no more than going
		 * on: the same fragments as byte by byte.
		 */
		for (j = d + 1; j < cend && j - last <= GXLOG_FRAG_HEADER;)
		{
			if (j + (int) sizeof(uint64) <= cend)
			{
				uint64		a,
							b,
							x;
				uint32		m;
				int			stop = -1;

				memcpy(&a, cur + j, sizeof(a));
				memcpy(&b, target + j, sizeof(b));
				x = a ^ b;
#ifdef WORDS_BIGENDIAN
				x = pg_bswap64(x);
#endif
				/* bit k of m: byte k of the word changed */
				x = (((x & UINT64CONST(0x7F7F7F7F7F7F7F7F)) + UINT64CONST(0x7F7F7F7F7F7F7F7F)) | x) &
					UINT64CONST(0x8080808080808080);
				m = (uint32) (((x >> 7) * UINT64CONST(0x0102040810204080)) >> 56);
				if (m == 0xFF)
					last = j + 7;
				else
				{
					/* the run may end inside: before more equal bytes than a header */
					for (; m != 0; m &= m - 1)
					{
						int			k = pg_rightmost_one_pos32(m);

						if (j + k - last > GXLOG_FRAG_HEADER + 1)
						{
							stop = j + k;
							break;
						}
						last = j + k;
					}
					if (stop >= 0)
					{
						j = stop;
						break;
					}
				}
				j += sizeof(uint64);
			}
			else
			{
				if (cur[j] != target[j])
					last = j;
				j++;
			}
		}
		if (!gxlog_add(p, target, &fbeg, &fend, d, last + 1))
			return false;
		i = j;
	}
	if (end > cend && !gxlog_add(p, target, &fbeg, &fend, cend, end))
		ok = false;
	/* the open fragment stays open for the next region (gxlog_close) */
	p->fbeg = fbeg;
	p->fend = fend;
	return ok;
}

/* Put the fragment gxlog_region left open; false if it does not fit. */
static bool
gxlog_close(GxlogPage *p, const char *target)
{
	bool		ok = p->fbeg < 0 || gxlog_put(p, target, p->fbeg, p->fend - p->fbeg);

	p->fbeg = p->fend = -1;
	return ok;
}

/*
 * The fragment for target's bytes [b, e), which the caller knows changed
 * throughout (a run of slots an insert moved): no diff but of its ends,
 * where keys that share bytes keep them, as gxlog_region would find.
 */
static bool
gxlog_whole(GxlogPage *p, const char *cur, const char *target, int b, int e)
{
	while (b < e && cur[b] == target[b])
		b++;
	while (e > b && cur[e - 1] == target[e - 1])
		e--;
	return b >= e || gxlog_add(p, target, &p->fbeg, &p->fend, b, e);
}

/*
 * p's delta over its ranges, in page order (gxlog_ranges sorts them), each
 * cut to the target's two parts around its hole, from cur (the page
 * before) to target; false if it does not fit in a page.
 */
static bool
gxlog_delta(GxlogPage *p, const char *cur, const char *target)
{
	int			tlower = ((PageHeader) target)->pd_lower,
				tupper = ((PageHeader) target)->pd_upper,
				clower = ((PageHeader) cur)->pd_lower,
				cupper = ((PageHeader) cur)->pd_upper;
	bool		fits = true;

	p->deltalen = 0;
	p->fbeg = p->fend = -1;
	for (int r = 0; r < p->nranges && fits; r++)
	{
		int			a = p->range[r][0],
					b = p->range[r][1];

		/* a whole range is slots: below pd_lower, in both pages */
		Assert(!p->whole[r] || (b <= tlower && b <= clower));
		if (a < tlower)
			fits = p->whole[r] ? gxlog_whole(p, cur, target, a, b) :
				gxlog_region(p, cur, target, a, Min(b, tlower), 0, clower);
		if (fits && b > tupper)
			fits = gxlog_region(p, cur, target, Max(a, tupper), b, cupper, BLCKSZ);
	}
	return gxlog_close(p, target) && fits;
}

/* Put the changed pages in place and log them as one generic WAL record. */
XLogRecPtr
gbt_gxlog_finish(GbtGxlog *g)
{
	XLogRecPtr	lsn = InvalidXLogRecPtr;

	if (g->logged)
	{
		/* outside the critical section: it allocates */
		for (int i = 0; i < GBT_WAL_MAX_BLOCKS; i++)
		{
			GxlogPage  *p = &g->pages[i];
			const char *cur;
			const char *target;

			if (BufferIsInvalid(p->buf) || (p->flags & GENERIC_XLOG_FULL_IMAGE))
				continue;
			if (XLogCheckBufferNeedsBackup(p->buf))
			{
				/* a later checkpoint only makes the image needed anyway */
				p->flags |= GENERIC_XLOG_FULL_IMAGE;
				continue;
			}
			cur = (const char *) BufferGetPage(p->buf);
			target = p->image->data;
			p->delta = palloc(BLCKSZ);
			/* the caller's ranges, else the page */
			if (p->nranges < 0)
				gxlog_add_range(p, 0, BLCKSZ, false);
			p->nranges = gxlog_ranges(p, cur, target);
			gxlog_check_ranges(p, p->nranges, cur, target);
			if (!gxlog_delta(p, cur, target))
				p->flags |= GENERIC_XLOG_FULL_IMAGE;
		}

		XLogBeginInsert();
		START_CRIT_SECTION();
		for (int i = 0; i < GBT_WAL_MAX_BLOCKS; i++)
		{
			GxlogPage  *p = &g->pages[i];
			Page		page;
			PageHeader	hdr;

			if (BufferIsInvalid(p->buf))
				continue;
			page = BufferGetPage(p->buf);
			hdr = (PageHeader) p->image->data;
			/* the hole zeroed, as replay leaves it */
			if (!(p->flags & GENERIC_XLOG_FULL_IMAGE))
			{
				/* the rest is as it was (gxlog_check_ranges) */
				for (int r = 0; r < p->nranges; r++)
					memcpy((char *) page + p->range[r][0], p->image->data + p->range[r][0],
						   p->range[r][1] - p->range[r][0]);
			}
			else
			{
				memcpy(page, p->image->data, hdr->pd_lower);
				memcpy((char *) page + hdr->pd_upper, p->image->data + hdr->pd_upper,
					   BLCKSZ - hdr->pd_upper);
			}
			memset((char *) page + hdr->pd_lower, 0, hdr->pd_upper - hdr->pd_lower);
			MarkBufferDirty(p->buf);
			if (p->flags & GENERIC_XLOG_FULL_IMAGE)
				XLogRegisterBuffer(i, p->buf, REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
			else
			{
				XLogRegisterBuffer(i, p->buf, REGBUF_STANDARD);
				XLogRegisterBufData(i, p->delta, p->deltalen);
			}
		}
		lsn = XLogInsert(RM_GENERIC_ID, 0);
		for (int i = 0; i < GBT_WAL_MAX_BLOCKS; i++)
			if (BufferIsValid(g->pages[i].buf))
				PageSetLSN(BufferGetPage(g->pages[i].buf), lsn);
		END_CRIT_SECTION();
	}
	else
	{
		START_CRIT_SECTION();
		for (int i = 0; i < GBT_WAL_MAX_BLOCKS; i++)
		{
			GxlogPage  *p = &g->pages[i];

			if (BufferIsInvalid(p->buf))
				continue;
			memcpy(BufferGetPage(p->buf), p->image->data, BLCKSZ);
			MarkBufferDirty(p->buf);
		}
		END_CRIT_SECTION();
	}
	gxlog_free(g);
	return lsn;
}

GbtWal *
gbt_wal_start(Relation index)
{
	GbtWal	   *w = palloc(sizeof(GbtWal));

	w->index = index;
	w->generic = gbt_wal_rmgr ? NULL : gbt_gxlog_start(index);
	w->nbuf = 0;
	w->main = NULL;
	w->mainlen = 0;
	return w;
}

/* A copy of the buffer's page to change; block ids follow the calls. */
Page
gbt_wal_register(GbtWal *w, Buffer buf, int flags)
{
	int			i = w->nbuf++;

	Assert(i < GBT_WAL_MAX_BLOCKS);
	w->buf[i] = buf;
	w->flags[i] = flags;
	w->ndata[i] = 0;
	if (w->generic)
		return gbt_gxlog_register(w->generic, buf,
								  (flags & (GBT_WAL_NEW | GBT_WAL_WHOLE)) ?
								  GENERIC_XLOG_FULL_IMAGE : 0);
	/* allocated here: generic WAL keeps copies of its own */
	w->copy[i] = palloc(sizeof(PGAlignedBlock));
	memcpy(w->copy[i]->data, BufferGetPage(buf), BLCKSZ);
	return (Page) w->copy[i]->data;
}

/* gbt_gxlog_hint_node for a block, under generic WAL (else nothing) */
void
gbt_wal_hint_node(GbtWal *w, int block, Page page, const GbtNode *node)
{
	Assert(block < w->nbuf);
	if (w->generic)
		gbt_gxlog_hint_node(w->generic, w->buf[block], page, node);
}

/* Data of a block's record; must stay valid until gbt_wal_finish. */
void
gbt_wal_block_data(GbtWal *w, int block, const void *data, Size len)
{
	Assert(block < w->nbuf && w->ndata[block] < GBT_WAL_MAX_DATA);
	w->data[block][w->ndata[block]] = data;
	w->datalen[block][w->ndata[block]] = len;
	w->ndata[block]++;
}

void
gbt_wal_main_data(GbtWal *w, const void *data, Size len)
{
	w->main = data;
	w->mainlen = len;
}

static void
wal_free(GbtWal *w)
{
	if (!w->generic)
		for (int i = 0; i < w->nbuf; i++)
			pfree(w->copy[i]);
	pfree(w);
}

void
gbt_wal_abort(GbtWal *w)
{
	if (w->generic)
		gbt_gxlog_abort(w->generic);
	wal_free(w);
}

/* Put the changed pages in place and log them as one record. */
void
gbt_wal_finish(GbtWal *w, uint8 info)
{
	XLogRecPtr	lsn;
	bool		needwal = RelationNeedsWAL(w->index);

	if (w->generic)
	{
		gbt_gxlog_finish(w->generic);
		pfree(w);
		return;
	}

	START_CRIT_SECTION();
	for (int i = 0; i < w->nbuf; i++)
	{
		/*
		 * A page rebuilt in place (a split's left page) was formatted
		 * afresh: give it back its LSN, which decides whether this record
		 * needs its full image.
		 */
		if (!(w->flags[i] & GBT_WAL_NEW))
			PageSetLSN((Page) w->copy[i]->data, PageGetLSN(BufferGetPage(w->buf[i])));
		memcpy(BufferGetPage(w->buf[i]), w->copy[i]->data, BLCKSZ);
		MarkBufferDirty(w->buf[i]);
	}
	if (needwal)
	{
		XLogBeginInsert();
		if (w->main)
			XLogRegisterData((char *) w->main, w->mainlen);
		for (int i = 0; i < w->nbuf; i++)
		{
			XLogRegisterBuffer(i, w->buf[i], REGBUF_STANDARD |
							   ((w->flags[i] & GBT_WAL_NEW) ? REGBUF_WILL_INIT : 0));
			for (int d = 0; d < w->ndata[i]; d++)
				if (w->datalen[i][d] > 0)
					XLogRegisterBufData(i, (char *) w->data[i][d], w->datalen[i][d]);
		}
		lsn = XLogInsert(RM_GBTREE_ID, info);
		for (int i = 0; i < w->nbuf; i++)
			PageSetLSN(BufferGetPage(w->buf[i]), lsn);
	}
	END_CRIT_SECTION();
	wal_free(w);
}

/*
 * The end of a page change made in place in the critical section: the
 * buffer dirtied and, where the relation is logged, its record of block 0
 * with the nparts pieces of data given, the page's LSN set.
 */
static void
log_inplace(Relation index, Buffer buf, uint8 info, int nparts, const void *const *data,
			const Size *len)
{
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(index))
	{
		XLogRecPtr	lsn;

		XLogBeginInsert();
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		for (int i = 0; i < nparts; i++)
			if (len[i] > 0)
				XLogRegisterBufData(0, (char *) data[i], len[i]);
		lsn = XLogInsert(RM_GBTREE_ID, info);
		PageSetLSN(BufferGetPage(buf), lsn);
	}
}

/*
 * The in-place writers' generic WAL record of the one page of buf, changed
 * in the critical section from before (over p's ranges): its delta, or its
 * image where image is set (its first change since the checkpoint) or the
 * delta would not fit in a page.  Nothing here allocates.
 */
static void
gxlog_log_inplace(Buffer buf, GxlogPage *p, const char *before, bool image)
{
	Page		page = BufferGetPage(buf);
	XLogRecPtr	lsn;

	if (!image && !gxlog_delta(p, before, (const char *) page))
		image = true;
	XLogBeginInsert();
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD | (image ? REGBUF_FORCE_IMAGE : 0));
	if (!image)
		XLogRegisterBufData(0, p->delta, p->deltalen);
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	PageSetLSN(page, lsn);
}

/*
 * VACUUM's removal of the slots (in the order given) from the plain leaf
 * of buf, cleanup-locked: the buffer changes in the critical section,
 * without the builder's page copy, its allocation and the copy back.  With
 * the resource manager its VACUUM record is logged.  Without, a generic
 * WAL record: the page's image where it is the page's first change since
 * the checkpoint (a VACUUM after a checkpoint: nearly every leaf it
 * changes), else the delta from a copy of the page as it was.
 * False, nothing done, for a leaf in posting form (its rewrite allocates):
 * the caller takes the builder.
 */
bool
gbt_wal_delete_slots_inplace(Relation index, Buffer buf, const uint16 *slots, int n)
{
	static PGAlignedBlock before;
	static PGAlignedBlock delta;
	Page		page = BufferGetPage(buf);
	PageHeader	hdr = (PageHeader) page;
	bool		logged = RelationNeedsWAL(index);
	bool		image = false;
	GxlogPage	p;

	if (gbt_page_is_posting((char *) page))
		return false;
	if (gbt_wal_rmgr)
	{
		START_CRIT_SECTION();
		gbt_page_delete_slots(page, slots, n);
		log_inplace(index, buf, XLOG_GBT_VACUUM, 1, (const void *[]) {slots},
					(Size[]) {sizeof(uint16) * n});
		END_CRIT_SECTION();
		return true;
	}
	if (logged)
	{
		image = XLogCheckBufferNeedsBackup(buf);
		if (!image)
			memcpy(before.data, page, BLCKSZ);
	}
	START_CRIT_SECTION();
	gbt_page_delete_slots(page, slots, n);
	/* the hole zeroed, as replay leaves it */
	memset((char *) page + hdr->pd_lower, 0, hdr->pd_upper - hdr->pd_lower);
	MarkBufferDirty(buf);
	if (logged)
	{
		if (!image)
		{
			memset(&p, 0, sizeof(p));
			p.delta = delta.data;
			p.nranges = 0;
			gxlog_add_range(&p, 0, BLCKSZ, false);
			p.nranges = gxlog_ranges(&p, before.data, (const char *) page);
		}
		gxlog_log_inplace(buf, &p, before.data, image);
	}
	END_CRIT_SECTION();
	return true;
}

/*
 * Insert one entry (key: the page's words, no tail) into the plain leaf of
 * buf, exclusively locked, where it lies, and log it as a generic WAL
 * record, without the builder's page copies and diff: the insert says
 * beforehand which slots it changes (gbt_node_insert_extent), whose words
 * and TIDs go into the record as they are, past the bytes equal at both
 * ends (gxlog_whole), and only those slots and the few other bytes it may
 * change (the slots' directory entries and bitmap words, the special
 * space, which are diffed; not the header) are kept.  The page changes in the
 * critical section, as gbt_wal_insert_inplace changes it for the resource
 * manager.  The copies, the copy back, their allocations and the diff were
 * a fifth of a COPY into a table with a unique uuid index.  An insert that
 * first spreads whole blocks (any of their slots may move) diffs the slots
 * it then says it changed against a copy of the page, still without the
 * builder's allocations and copy back.  False (nothing done) for a leaf in
 * posting form or with tails, or without a free slot: the caller then
 * takes the builder.
 */
static bool
gxlog_insert_inplace(Relation index, Buffer buf, const uint64 *key, uint64 tid)
{
	static PGAlignedBlock before;	/* the ranges' bytes, at their offsets */
	static PGAlignedBlock delta;
	Page		page = BufferGetPage(buf);
	PageHeader	hdr = (PageHeader) page;
	GbtPageOpaque op = gbt_page_opaque((char *) page);
	GbtNode		node;
	GxlogPage	p;
	bool		logged = RelationNeedsWAL(index);
	bool		image = false;
	bool		known;
	int			pos,
				lo,
				hi;

	if (!(op->flags & GBT_F_LEAF) || (op->flags & (GBT_F_POSTING | GBT_F_TAILS)) ||
		op->nused >= op->nslots)
		return false;
	gbt_node_view((char *) page, &node);
	known = gbt_node_insert_extent(&node, key, tid, &pos, &lo, &hi);
	memset(&p, 0, sizeof(p));
	p.delta = delta.data;
	if (logged)
	{
		/* a page's first change since the checkpoint logs its image */
		image = XLogCheckBufferNeedsBackup(buf);
	}
	if (logged && !image)
	{
		if (known)
		{
			/* the slots, in page order, and the special space (nused) */
			gxlog_add_slots(&p, page, &node, lo, hi, true);
			gxlog_add_range(&p, hdr->pd_special, BLCKSZ - hdr->pd_special, false);
		}
#ifdef USE_ASSERT_CHECKING
		/* all of it, for gxlog_check_ranges */
		memcpy(before.data, page, BLCKSZ);
#else
		/* blocks spread first: any slot may move, the insert says which after */
		if (!known)
			memcpy(before.data, page, BLCKSZ);
		for (int r = 0; r < p.nranges; r++)
			memcpy(before.data + p.range[r][0], (char *) page + p.range[r][0],
				   p.range[r][1] - p.range[r][0]);
#endif
	}

	START_CRIT_SECTION();
	gbt_leaf_clear_dead((char *) page);	/* the slots move */
	if ((known ? gbt_node_insert_at(&node, key, tid, pos) :
		 gbt_node_insert_words(&node, key, tid, 0)) < 0)
		elog(PANIC, "gbtree: leaf unexpectedly full");	/* checked before */
	/* the hole zeroed, as replay leaves it */
	memset((char *) page + hdr->pd_lower, 0, hdr->pd_upper - hdr->pd_lower);
	MarkBufferDirty(buf);
	if (logged)
	{
		if (!image)
		{
			if (!known)
			{
				gxlog_add_slots(&p, page, &node, node.mod_lo, node.mod_hi, false);
				p.nranges = gxlog_ranges(&p, before.data, (const char *) page);
			}
			gxlog_check_ranges(&p, p.nranges, before.data, (const char *) page);
		}
		gxlog_log_inplace(buf, &p, before.data, image);
	}
	END_CRIT_SECTION();
	return true;
}

/*
 * Whether the logged leaf page (of words alone, with a free slot) should
 * rather split than take (key, tid) in place: without the resource
 * manager, when the insert would shift more than a block's slots
 * (gbt_node_insert_crowded), every one of them logged whole.  On a page
 * that random inserts fill, its last few percent went in so, some 1-3 kB
 * of WAL an insert, several times a split's two page images in all; the
 * page splits a few percent short of full instead.  With gbtree's own
 * records a shift costs its memmove alone, and an unlogged index logs
 * nothing.
 */
bool
gbt_leaf_crowded(Relation index, Page page, const uint64 *key, uint64 tid)
{
	GbtNode		node;
	GbtPageOpaque op = gbt_page_opaque((char *) page);

	if (gbt_wal_rmgr || !RelationNeedsWAL(index) || !(op->flags & GBT_F_LEAF) ||
		(op->flags & (GBT_F_POSTING | GBT_F_TAILS)) || op->nused >= op->nslots)
		return false;
	gbt_node_view((char *) page, &node);
	return gbt_node_insert_crowded(&node, key, tid);
}

/*
 * Insert n entries into the leaf of buf (exclusively locked, with room
 * for them in its slot map) where it lies and log them as one
 * XLOG_GBT_INSERT record, without the builder's two page copies: the cost
 * a single-row INSERT feels most.  Without the resource manager one entry
 * goes in as gxlog_insert_inplace can take it; false otherwise (the caller
 * takes the builder).  The room was checked before, so nothing in the
 * critical section can fail.
 */
bool
gbt_wal_insert_inplace(Relation index, Buffer buf, const uint64 *keys, const uint64 *tids,
					   const uint32 *child, int n)
{
	Page		page = BufferGetPage(buf);

	if (!gbt_wal_rmgr)
		return n == 1 && child[0] == 0 && gxlog_insert_inplace(index, buf, keys, tids[0]);
	/* a rewrite (posting form) allocates: not in a critical section */
	if (gbt_page_is_posting((char *) page) ||
		gbt_page_opaque((char *) page)->nused + n > gbt_page_opaque((char *) page)->nslots)
		return false;
	START_CRIT_SECTION();
	if (!gbt_page_insert(page, keys, tids, child, n))
		elog(PANIC, "gbtree: leaf unexpectedly full");	/* checked before */
	log_inplace(index, buf, XLOG_GBT_INSERT, 3, (const void *[]) {keys, tids, child},
				(Size[]) {sizeof(uint64) * n, sizeof(uint64) * n, sizeof(uint32) * n});
	END_CRIT_SECTION();
	return true;
}

/*
 * WINSERT's page change, alike on insert and on replay: the slots move, so
 * the dead marks go; a tailed page's pd_upper follows its tails (the
 * insert may have compacted them).  False if the entry does not fit.
 */
static bool
winsert_apply(Page page, GbtNode *node, const uint64 *key, const unsigned char *tail, int tlen,
			  uint64 tid)
{
	gbt_leaf_clear_dead((char *) page);
	if (gbt_node_insert_tail(node, key, tail, tlen, tid, 0) < 0)
		return false;
	if (node->toff)
		gbt_wide_set_lower(page);
	return true;
}

/*
 * The same for one entry of a multi-word leaf that has a free slot
 * (wide_tree.c): an XLOG_GBT_WINSERT record of its words, TID and tail,
 * where generic WAL would copy the page twice and diff it (with a tail,
 * 40% of a unique insert's time).  An entry with a tail goes this way
 * only into a page already tailed with room for it, which is checked
 * here, before the critical section; the first tail of a page of words
 * alone makes it tailed, a whole-page rewrite left to generic WAL.
 * Without the resource manager, an entry without a tail goes in as
 * gxlog_insert_inplace can take it.
 */
bool
gbt_wal_insert_words_inplace(Relation index, Buffer buf, const uint64 *key, GbtTail tail,
							 uint64 tid)
{
	Page		page = BufferGetPage(buf);
	GbtNode		node;
	uint64		e[GBT_MAX_KEY_WORDS + 1];

	if (!gbt_wal_rmgr)
		return tail.len == 0 && gxlog_insert_inplace(index, buf, key, tid);
	gbt_node_view((char *) page, &node);
	if (node.opaque->nused >= node.opaque->nslots)
		return false;
	if (tail.len > 0 &&
		(!node.toff || gbt_tail_space(tail.len) > gbt_node_tail_room(&node)))
		return false;
	memcpy(e, key, sizeof(uint64) * node.nwords);
	e[node.nwords] = tid;
	START_CRIT_SECTION();
	if (!winsert_apply(page, &node, key, tail.data, tail.len, tid))
		elog(PANIC, "gbtree: leaf unexpectedly full");	/* checked before */
	log_inplace(index, buf, XLOG_GBT_WINSERT, 2, (const void *[]) {e, tail.data},
				(Size[]) {sizeof(uint64) * (node.nwords + 1), tail.len});
	END_CRIT_SECTION();
	return true;
}

/* ---- redo ---------------------------------------------------------------- */

/*
 * Entries as block data: keys, tids and, for inner pages, children,
 * n of each, one array after the other.
 */
typedef struct GbtRedoEntries
{
	const uint64 *keys;
	const uint64 *tids;
	const uint32 *child;
	int			n;
} GbtRedoEntries;

static void
redo_entries(XLogReaderState *record, int block, bool with_child, GbtRedoEntries *re)
{
	Size		len;
	char	   *p = XLogRecGetBlockData(record, block, &len);
	Size		each = 16 + (with_child ? 4 : 0);

	if (p == NULL || len % each != 0)
		elog(PANIC, "gbtree redo: bad entry data for block %d", block);
	re->n = len / each;
	re->keys = (const uint64 *) p;
	re->tids = (const uint64 *) (p + 8 * re->n);
	re->child = with_child ? (const uint32 *) (p + 16 * re->n) : NULL;
}

static void
redo_done(Buffer buf, XLogRecPtr lsn)
{
	PageSetLSN(BufferGetPage(buf), lsn);
	MarkBufferDirty(buf);
}

static void
redo_release(Buffer *bufs, int n)
{
	for (int i = 0; i < n; i++)
		if (BufferIsValid(bufs[i]))
			UnlockReleaseBuffer(bufs[i]);
}

static void
redo_insert(XLogReaderState *record)
{
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		GbtRedoEntries re;

		redo_entries(record, 0, true, &re);
		if (!gbt_page_insert(BufferGetPage(buf), re.keys, re.tids, re.child, re.n))
			elog(PANIC, "gbtree redo: entries do not fit");
		redo_done(buf, record->EndRecPtr);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
redo_merge(XLogReaderState *record)
{
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Size		len;
		char	   *p = XLogRecGetBlockData(record, 0, &len);

		gbt_page_merge(BufferGetPage(buf), (const GbtEntry *) p, len / sizeof(GbtEntry));
		redo_done(buf, record->EndRecPtr);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
redo_split(XLogReaderState *record)
{
	xl_gbt_split *x = (xl_gbt_split *) XLogRecGetData(record);
	XLogRecPtr	lsn = record->EndRecPtr;
	bool		leaf = (x->flags & GBT_F_LEAF) != 0;
	Buffer		bufs[4] = {InvalidBuffer, InvalidBuffer, InvalidBuffer, InvalidBuffer};
	BlockNumber lblk,
				rblk;

	XLogRecGetBlockTag(record, 0, NULL, NULL, &lblk);
	XLogRecGetBlockTag(record, 1, NULL, NULL, &rblk);

	/* all pages stay locked until every one is done, as on the primary */
	if (x->left_whole)
	{
		GbtRedoEntries re;
		GbtPageOpaqueData old;

		bufs[0] = XLogInitBufferForRedo(record, 0);
		redo_entries(record, 0, !leaf, &re);
		memset(&old, 0, sizeof(old));
		old.flags = x->flags;
		old.level = x->level;
		old.lowkey = x->lowkey;
		old.lowtid = x->lowtid;
		old.leftlink = x->leftlink;
		gbt_page_split_left_fill(BufferGetPage(bufs[0]), &old, re.n, re.keys, re.tids,
								 re.child, x->sepkey, x->septid, rblk);
		redo_done(bufs[0], lsn);
	}
	else if (XLogReadBufferForRedo(record, 0, &bufs[0]) == BLK_NEEDS_REDO)
	{
		Size		len;
		char	   *p = XLogRecGetBlockData(record, 0, &len);

		gbt_page_split_left(BufferGetPage(bufs[0]), x->sepkey, x->septid,
							(const GbtEntry *) p, p ? len / sizeof(GbtEntry) : 0, rblk);
		redo_done(bufs[0], lsn);
	}
	bufs[1] = XLogInitBufferForRedo(record, 1);
	{
		GbtRedoEntries re;

		redo_entries(record, 1, !leaf, &re);
		if (re.n != x->nright)
			elog(PANIC, "gbtree redo: right page entries do not match");
		gbt_page_split_right(BufferGetPage(bufs[1]), x, re.keys, re.tids, re.child, lblk);
		redo_done(bufs[1], lsn);
	}
	if (XLogReadBufferForRedo(record, 2, &bufs[2]) == BLK_NEEDS_REDO)
	{
		uint32		child = rblk;

		if (!gbt_page_insert(BufferGetPage(bufs[2]), &x->sepkey, &x->septid, &child, 1))
			elog(PANIC, "gbtree redo: no room for a downlink");
		redo_done(bufs[2], lsn);
	}
	if (XLogRecHasBlockRef(record, 3) &&
		XLogReadBufferForRedo(record, 3, &bufs[3]) == BLK_NEEDS_REDO)
	{
		gbt_page_opaque((char *) BufferGetPage(bufs[3]))->leftlink = rblk;
		redo_done(bufs[3], lsn);
	}
	redo_release(bufs, 4);
}

static void
redo_root_split(XLogReaderState *record)
{
	xl_gbt_root_split *x = (xl_gbt_root_split *) XLogRecGetData(record);
	XLogRecPtr	lsn = record->EndRecPtr;
	Buffer		bufs[3];
	BlockNumber ablk,
				bblk;
	GbtRedoEntries re;

	XLogRecGetBlockTag(record, 1, NULL, NULL, &ablk);
	XLogRecGetBlockTag(record, 2, NULL, NULL, &bblk);
	for (int i = 0; i < 3; i++)
		bufs[i] = XLogInitBufferForRedo(record, i);
	redo_entries(record, 0, !(x->flags & GBT_F_LEAF), &re);
	if (re.n != x->nleft + x->nright)
		elog(PANIC, "gbtree redo: root split entries do not match");
	gbt_page_root_split(BufferGetPage(bufs[0]), BufferGetPage(bufs[1]), BufferGetPage(bufs[2]),
						x, re.keys, re.tids, re.child, ablk, bblk);
	for (int i = 0; i < 3; i++)
		redo_done(bufs[i], lsn);
	redo_release(bufs, 3);
}

static void
redo_vacuum(XLogReaderState *record)
{
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Size		len;
		char	   *p = XLogRecGetBlockData(record, 0, &len);

		gbt_page_delete_slots(BufferGetPage(buf), (const uint16 *) p, len / sizeof(uint16));
		redo_done(buf, record->EndRecPtr);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
redo_delete_page(XLogReaderState *record)
{
	xl_gbt_delete_page *x = (xl_gbt_delete_page *) XLogRecGetData(record);
	XLogRecPtr	lsn = record->EndRecPtr;
	Buffer		bufs[4] = {InvalidBuffer, InvalidBuffer, InvalidBuffer, InvalidBuffer};

	if (XLogReadBufferForRedo(record, 0, &bufs[0]) == BLK_NEEDS_REDO)
	{
		gbt_page_unlink_parent(BufferGetPage(bufs[0]), x);
		redo_done(bufs[0], lsn);
	}
	if (XLogReadBufferForRedo(record, 1, &bufs[1]) == BLK_NEEDS_REDO)
	{
		gbt_page_unlink_leaf(BufferGetPage(bufs[1]), x);
		redo_done(bufs[1], lsn);
	}
	if (XLogReadBufferForRedo(record, 2, &bufs[2]) == BLK_NEEDS_REDO)
	{
		gbt_page_unlink_right(BufferGetPage(bufs[2]), x);
		redo_done(bufs[2], lsn);
	}
	if (XLogRecHasBlockRef(record, 3) &&
		XLogReadBufferForRedo(record, 3, &bufs[3]) == BLK_NEEDS_REDO)
	{
		gbt_page_unlink_left(BufferGetPage(bufs[3]), x);
		redo_done(bufs[3], lsn);
	}
	redo_release(bufs, 4);
}

static void
redo_winsert(XLogReaderState *record)
{
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		GbtNode		node;
		Size		len,
					tlen;
		const uint64 *e = (const uint64 *) XLogRecGetBlockData(record, 0, &len);

		gbt_node_view((char *) page, &node);
		if (e == NULL || len < sizeof(uint64) * (node.nwords + 1))
			elog(PANIC, "gbtree redo: bad multi-word entry");
		/* the tail, if any, follows the words and the TID */
		tlen = len - sizeof(uint64) * (node.nwords + 1);
		if (tlen > 0 && !node.toff)
			elog(PANIC, "gbtree redo: an entry with a tail for a page without tails");
		if (!winsert_apply(page, &node, e, (const unsigned char *) (e + node.nwords + 1),
						   (int) tlen, e[node.nwords]))
			elog(PANIC, "gbtree redo: entries do not fit");
		redo_done(buf, record->EndRecPtr);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
gbt_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	static MemoryContext redo_cxt = NULL;
	MemoryContext old;

	/* what a record's redo allocates goes with it (the startup process lives long) */
	if (redo_cxt == NULL)
		redo_cxt = AllocSetContextCreate(TopMemoryContext, "gbtree redo",
										 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(redo_cxt);

	switch (info)
	{
		case XLOG_GBT_INSERT:
			redo_insert(record);
			break;
		case XLOG_GBT_MERGE:
			redo_merge(record);
			break;
		case XLOG_GBT_SPLIT:
			redo_split(record);
			break;
		case XLOG_GBT_ROOT_SPLIT:
			redo_root_split(record);
			break;
		case XLOG_GBT_VACUUM:
			redo_vacuum(record);
			break;
		case XLOG_GBT_DELETE_PAGE:
			redo_delete_page(record);
			break;
		case XLOG_GBT_WINSERT:
			redo_winsert(record);
			break;
		case XLOG_GBT_WSPLIT:
			gbt_wide_redo_split(record);
			break;
		case XLOG_GBT_WMERGE:
			gbt_wide_redo_merge(record);
			break;
		default:
			elog(PANIC, "gbtree redo: unknown record type %u", info);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(redo_cxt);
}

/* ---- descriptions, masking ------------------------------------------------ */

static const char *
gbt_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_GBT_INSERT:
			return "INSERT";
		case XLOG_GBT_MERGE:
			return "MERGE";
		case XLOG_GBT_SPLIT:
			return "SPLIT";
		case XLOG_GBT_ROOT_SPLIT:
			return "ROOT_SPLIT";
		case XLOG_GBT_VACUUM:
			return "VACUUM";
		case XLOG_GBT_DELETE_PAGE:
			return "DELETE_PAGE";
		case XLOG_GBT_WINSERT:
			return "WINSERT";
		case XLOG_GBT_WSPLIT:
			return "WSPLIT";
		case XLOG_GBT_WMERGE:
			return "WMERGE";
	}
	return NULL;
}

static void
gbt_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	Size		len = 0;

	switch (info)
	{
		case XLOG_GBT_INSERT:
			if (XLogRecGetBlockData(record, 0, &len))
				appendStringInfo(buf, "entries: %zu", len / 20);
			break;
		case XLOG_GBT_MERGE:
			if (XLogRecGetBlockData(record, 0, &len))
				appendStringInfo(buf, "entries: %zu", len / sizeof(GbtEntry));
			break;
		case XLOG_GBT_SPLIT:
			{
				xl_gbt_split *x = (xl_gbt_split *) XLogRecGetData(record);

				appendStringInfo(buf, "level: %u, right entries: %u, separator: (%llx, %llx)",
								 x->level, x->nright,
								 (unsigned long long) x->sepkey,
								 (unsigned long long) x->septid);
				if (x->left_whole)
					appendStringInfoString(buf, ", left page whole");
				else
				{
					if (!XLogRecGetBlockData(record, 0, &len))
						len = 0;
					appendStringInfo(buf, ", new left entries: %zu", len / sizeof(GbtEntry));
				}
				break;
			}
		case XLOG_GBT_ROOT_SPLIT:
			{
				xl_gbt_root_split *x = (xl_gbt_root_split *) XLogRecGetData(record);

				appendStringInfo(buf, "new level: %u, entries: %u + %u",
								 x->level + 1, x->nleft, x->nright);
				break;
			}
		case XLOG_GBT_VACUUM:
			if (XLogRecGetBlockData(record, 0, &len))
				appendStringInfo(buf, "deleted: %zu", len / sizeof(uint16));
			break;
		case XLOG_GBT_DELETE_PAGE:
			{
				xl_gbt_delete_page *x = (xl_gbt_delete_page *) XLogRecGetData(record);

				appendStringInfo(buf, "right sibling: %u, left sibling: %d",
								 x->rightlink,
								 x->leftlink == GBT_NO_BLOCK ? -1 : (int) x->leftlink);
				break;
			}
		case XLOG_GBT_WINSERT:
			if (XLogRecGetBlockData(record, 0, &len))
				appendStringInfo(buf, "entry: %zu bytes", len);
			break;
		case XLOG_GBT_WSPLIT:
			gbt_wide_desc_split(buf, record);
			break;
		case XLOG_GBT_WMERGE:
			if (XLogRecGetBlockData(record, 0, &len))
				appendStringInfo(buf, "entries: %zu bytes", len);
			break;
	}
}

/* LSN, checksum and the hole, where leaves keep their dead-entry marks (hints) */
static void
gbt_mask(char *pagedata, BlockNumber blkno)
{
	mask_page_lsn_and_checksum(pagedata);
	mask_unused_space(pagedata);
}

static RmgrData gbt_rmgr = {
	.rm_name = GBT_RMGR_NAME,
	.rm_redo = gbt_redo,
	.rm_desc = gbt_desc,
	.rm_identify = gbt_identify,
	.rm_mask = gbt_mask,
};

/* From _PG_init while preloading: the records need redo everywhere. */
void
gbt_wal_register_rmgr(void)
{
	RegisterCustomRmgr(RM_GBTREE_ID, &gbt_rmgr);
	gbt_wal_rmgr = true;
}
