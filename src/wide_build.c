/*-------------------------------------------------------------------------
 *
 * wide_build.c
 *	  CREATE INDEX of an index with multi-word keys (gbtree_wide.h): the
 *	  entries collected and sorted, text fields fitted to the data, and the
 *	  trees laid out page by page.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/sinval.h"
#include "storage/standby.h"
#include "utils/memutils.h"
#include "utils/rel.h"


/* gbt_tail_build's level arrays from the build's memory context */
#define GBT_TAILWALK_ALLOC(size) MemoryContextAllocHuge(CurrentMemoryContext, (size))
#define GBT_TAILWALK_FREE(ptr) pfree(ptr)

#include "gbtree_build.h"
#include "gbtree_gpu.h"
#include "gbtree_wide.h"
#include "gbtree_wpost.h"
#include "gbtree_xlog.h"


/*
 * The build
 * ---------
 * Every entry is collected in memory, sorted by gbtree_wsort.h's radix
 * sort and laid out level by level through build.c's page writer, the
 * top level of each tree at its fixed root block.  Entries whose value is
 * cut (a text longer than its field) are collected apart with their
 * tails; a tree that has any is sorted by (words, tail, TID) and laid out
 * by gbt_tail_build, tailed pages only where tails are.
 */

/* entries with tails of one tree: words, TID, tail index << 16 */
typedef struct GbtTailedEntries
{
	uint64	   *e;				/* stride nwords + 2 */
	Size		n;
	Size		cap;
	GbtTail    *tails;			/* by index; index 0: no tail */
	Size		captails;
	char	   *chunk;			/* the tails' bytes, in chunks */
	Size		chunkfree;
} GbtTailedEntries;

#define GBT_TAIL_CHUNK	(1024 * 1024)

typedef struct GbtWideBuild
{
	GbtIndexInfo *info;
	int			stride;
	uint64	   *vals;			/* entries of the tree of values */
	Size		nvals;
	Size		capvals;
	uint64	   *nulls;			/* and of the tree of NULLs */
	Size		nnulls;
	Size		capnulls;
	GbtTailedEntries tvals;		/* their entries with tails */
	GbtTailedEntries tnulls;
	int			keylen;			/* the longest order key of a text column */
	double		nkeyed;			/* rows with a text column not NULL */
	double		indtuples;
} GbtWideBuild;

static void
append_entry(uint64 **arr, Size *n, Size *cap, int stride, const uint64 *e)
{
	if (*n == *cap)
	{
		Size		newcap = Max(*cap * 2, 1024);

		if (*arr == NULL)
			*arr = MemoryContextAllocHuge(CurrentMemoryContext,
										  newcap * stride * sizeof(uint64));
		else
			*arr = repalloc_huge(*arr, newcap * stride * sizeof(uint64));
		*cap = newcap;
	}
	memcpy(*arr + *n * stride, e, stride * sizeof(uint64));
	(*n)++;
}

/* keep an entry with a tail: e holds its words and TID */
static void
append_tailed(GbtTailedEntries *te, uint64 *e, int nw, const unsigned char *tail, int tlen)
{
	Size		idx = te->n + 1;
	unsigned char *bytes;

	if (idx >= te->captails)
	{
		Size		newcap = Max(te->captails * 2, 1024);

		if (te->tails == NULL)
			te->tails = MemoryContextAllocHuge(CurrentMemoryContext, newcap * sizeof(GbtTail));
		else
			te->tails = repalloc_huge(te->tails, newcap * sizeof(GbtTail));
		te->captails = newcap;
		te->tails[0].data = NULL;
		te->tails[0].len = 0;
	}
	if (te->chunkfree < (Size) tlen)
	{
		te->chunk = palloc(GBT_TAIL_CHUNK);
		te->chunkfree = GBT_TAIL_CHUNK;
	}
	bytes = (unsigned char *) te->chunk + (GBT_TAIL_CHUNK - te->chunkfree);
	memcpy(bytes, tail, tlen);
	te->chunkfree -= tlen;
	te->tails[idx].data = bytes;
	te->tails[idx].len = tlen;
	e[nw + 1] = (uint64) idx << 16;
	append_entry(&te->e, &te->n, &te->cap, nw + 2, e);
}

static void
wide_build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					bool tupleIsAlive, void *state)
{
	GbtWideBuild *wb = (GbtWideBuild *) state;
	uint64		e[GBT_WIDE_MAX_STRIDE + 1];
	uint16		flags;
	int			nw = wb->info->nwords;
	unsigned char tail[GBT_TAIL_HIGHEST_LEN];
	int			tlen;
	int			keylen = -1;
	bool		notnull = gbt_wide_encode_tail(wb->info, values, isnull, tid, e, &flags, tail,
											   &tlen, &keylen);

	if (keylen >= 0)
	{
		wb->keylen = Max(wb->keylen, keylen);
		wb->nkeyed += 1;
	}

	e[nw] = gbt_tid_from_itemptr(tid, flags);
	if (tlen > 0)
		append_tailed(notnull ? &wb->tvals : &wb->tnulls, e, nw, tail, tlen);
	else if (notnull)
		append_entry(&wb->vals, &wb->nvals, &wb->capvals, wb->stride, e);
	else
		append_entry(&wb->nulls, &wb->nnulls, &wb->capnulls, wb->stride, e);
	wb->indtuples += 1;
}

void
gbt_wide_sort_entries(uint64 *e, Size n, int nw)
{
	uint64	   *scratch;
	size_t	   *hist;

	if (n < 2)
		return;
	scratch = MemoryContextAllocHuge(CurrentMemoryContext, n * (nw + 1) * sizeof(uint64));
	hist = palloc(gbt_wsort_hist_size(nw) * sizeof(size_t));
	gbt_wsort(e, scratch, n, nw, hist, NULL);
	pfree(hist);
	pfree(scratch);
}

/*
 * Lay out a tree of n sorted entries, its top page at rootblk: each level's
 * pages take an even share of its entries, up to the fill factor, and give
 * the level above their first entries and blocks.
 */
/*
 * The leaves of a tree with deduplication (gbt_wide_dedup): from entry i,
 * a leaf takes what the posting form holds at the fill factor where keys
 * repeat (two TIDs a key or more, and more than the plain form's share),
 * else the plain form's share.  Returns the leaves' first entries, and
 * their number in *npages; the last element is n.
 */
static Size *
posting_bounds(const uint64 *e, Size n, int nw, int fillfactor, Size *npages)
{
	int			slots = gbt_leaf_slots_for(nw);
	Size		plain = Max(2, gbt_fill_slots(slots, fillfactor));
	uint16		lflags = GBT_F_LEAF | (gbt_format_dir32 ? 0 : GBT_F_DIRFIT);
	Size		budget = GBT_BODY_OFFSET +
		(Size) (gbt_wpost_limit(nw, lflags) - GBT_BODY_OFFSET) * fillfactor / 100;
	Size		cap = 1024;
	Size	   *b = palloc(sizeof(Size) * cap);
	Size		np = 0;
	Size		i = 0;

	while (i < n)
	{
		Size		take;
		Size		j = i;
		int			groups = 0;
		uint32		lo = UINT32_MAX,
					hi = 0;
		bool		tf = false;

		/* the most the posting form holds from i */
		while (j < n && j - i < GBT_LEAF_MAX_ENTRIES)
		{
			const uint64 *x = &e[j * (nw + 1)];
			uint32		blk = gbt_tid_block(x[nw]);
			int			g = groups + ((j == i || gbt_words_cmp(x, x - (nw + 1), nw) != 0) ? 1 : 0);
			uint32		nlo = Min(lo, blk),
						nhi = Max(hi, blk);
			bool		ntf = tf || gbt_tid_flags(x[nw]) != 0;

			if (gbt_wpost_size(nw, g, (int) (j - i + 1), nhi - nlo > UINT16_MAX, ntf) > budget)
				break;
			groups = g;
			lo = nlo;
			hi = nhi;
			tf = ntf;
			j++;
		}
		take = (j - i > plain && j - i >= 2 * (Size) groups) ? j - i : Min(plain, n - i);
		if (np == cap - 1)
		{
			cap *= 2;
			b = repalloc(b, sizeof(Size) * cap);
		}
		b[np++] = i;
		i += take;
	}
	if (np == 0)
		b[np++] = 0;
	b[np] = n;
	*npages = np;
	return b;
}

static void
build_wide_tree(GbtPageWriter *w, const uint64 *entries, Size n, int nw,
				BlockNumber rootblk, uint16 treeflag, int fillfactor, bool dedup)
{
	const int	stride = nw + 1;
	const uint64 *level = entries;
	uint64	   *owned = NULL;
	BlockNumber *child = NULL;
	uint16		lev = 0;
	uint64	   *keys = palloc(sizeof(uint64) * GBT_MAX_SLOT_WORDS);
	uint64	   *tids = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint32	   *ch = palloc(sizeof(uint32) * GBT_MAX_SLOTS);

	for (;;)
	{
		bool		leaf = lev == 0;
		int			slots = leaf ? gbt_leaf_slots_for(nw) : gbt_inner_slots_for(nw);
		Size		cap = Max(2, gbt_fill_slots(slots, leaf ? fillfactor : GBT_INNER_FILLFACTOR));
		Size		npages = n == 0 ? 1 : (n + cap - 1) / cap;
		Size	   *bounds = NULL;
		BlockNumber first;
		uint64	   *up = NULL;
		BlockNumber *upchild = NULL;

		if (leaf && dedup)
			bounds = posting_bounds(level, n, nw, fillfactor, &npages);
		first = npages == 1 ? rootblk : w->nextblk;

		if (npages > 1)
		{
			up = MemoryContextAllocHuge(CurrentMemoryContext, npages * stride * sizeof(uint64));
			upchild = MemoryContextAllocHuge(CurrentMemoryContext, npages * sizeof(BlockNumber));
			w->nextblk += npages;
		}
		for (Size p = 0; p < npages; p++)
		{
			Size		from = bounds ? bounds[p] : p * n / npages;
			Size		to = bounds ? bounds[p + 1] : (p + 1) * n / npages;
			int			k = (int) (to - from);
			BlockNumber blk = first + (BlockNumber) p;
			Page		page = gbt_writer_page(w, blk);
			GbtNode		node;
			GbtPageOpaque op;

			CHECK_FOR_INTERRUPTS();
			/* a posting leaf is encoded from the level's entries */
			for (int i = 0; i < k && k <= slots; i++)
			{
				memcpy(&keys[i * nw], &level[(from + i) * stride], sizeof(uint64) * nw);
				tids[i] = level[(from + i) * stride + nw];
				ch[i] = leaf ? 0 : child[from + i];
			}
			/* a level's first downlink covers everything below its key */
			if (!leaf && p == 0 && k > 0)
			{
				memset(keys, 0, sizeof(uint64) * nw);
				tids[0] = 0;
			}
			gbt_wide_init_page(page, leaf, lev, treeflag, nw);
			gbt_node_view((char *) page, &node);
			if (leaf && k > slots)
			{
				gbt_wpost_encode((char *) page, k, nw, &level[from * stride]);
				gbt_wide_set_lower(page);	/* one word: the body fills the page */
			}
			else
				gbt_node_load_spread(&node, k, keys, tids, leaf ? NULL : ch, true);
			op = node.opaque;
			op->leftlink = p == 0 ? GBT_NO_BLOCK : blk - 1;
			if (p > 0)
			{
				op->lowkey = level[from * stride];
				op->lowtid = level[from * stride + nw];
				for (int i = 1; i < nw; i++)
					node.xbounds[nw - 1 + i - 1] = level[from * stride + i];
			}
			if (p + 1 < npages)
			{
				op->rightlink = blk + 1;
				op->hikey = level[to * stride];
				op->hitid = level[to * stride + nw];
				for (int i = 1; i < nw; i++)
					node.xbounds[i - 1] = level[to * stride + i];
			}
			else
			{
				op->rightlink = GBT_NO_BLOCK;
				op->flags |= GBT_F_RIGHTMOST;
			}
			if (npages == 1)
				op->flags |= GBT_F_ROOT;
			if (up)
			{
				memcpy(&up[p * stride], &level[from * stride], sizeof(uint64) * stride);
				upchild[p] = blk;
			}
		}
		if (owned)
			pfree(owned);
		if (child)
			pfree(child);
		if (bounds)
			pfree(bounds);
		if (npages == 1)
			break;
		owned = up;
		level = up;
		child = upchild;
		n = npages;
		lev++;
	}
	pfree(keys);
	pfree(tids);
	pfree(ch);
}

/* gbt_tail_build's pages: build.c's writer, PostgreSQL's page header */
static char *
tail_build_page(void *arg, uint32 blk)
{
	return (char *) gbt_writer_page((GbtPageWriter *) arg, blk);
}

static void
tail_build_format(void *arg, char *page, bool leaf, uint16 level, uint16 flags, int nw)
{
	gbt_wide_init_page((Page) page, leaf, level, flags, nw);
}

static void
tail_build_finish(void *arg, char *page)
{
	CHECK_FOR_INTERRUPTS();
	gbt_wide_set_lower((Page) page);
}

/*
 * Lay out a tree whose entries include some with tails: the plain ones
 * (sorted, stride nw + 1) and those of te merged in (words, tail, TID)
 * order, then gbt_tail_build.  Frees the plain entries.
 */
static void
build_tailed_tree(GbtPageWriter *w, uint64 *plain, Size nplain, GbtTailedEntries *te, int nw,
				  BlockNumber rootblk, uint16 treeflag, int fillfactor)
{
	const int	stride = nw + 1;
	const int	tstride = nw + 2;
	Size		n = nplain + te->n;
	uint64	   *merged;
	GbtTail    *mtails;
	Size		i = 0,
				j = 0;
	GbtTailBuildOps ops = {tail_build_page, tail_build_format, tail_build_finish, w};
	uint32		next = w->nextblk;

	{
		uint64	   *scratch = MemoryContextAllocHuge(CurrentMemoryContext,
													 te->n * tstride * sizeof(uint64));
		size_t	   *hist = palloc(gbt_wsort_hist_size(nw + 1) * sizeof(size_t));

		gbt_tail_sort(te->e, scratch, te->n, nw, te->tails, hist);
		pfree(hist);
		pfree(scratch);
	}
	merged = MemoryContextAllocHuge(CurrentMemoryContext, n * stride * sizeof(uint64));
	mtails = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(GbtTail));
	for (Size k = 0; k < n; k++)
	{
		static const GbtTail none = {NULL, 0};
		bool		take_plain;

		if ((k & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (i == nplain)
			take_plain = false;
		else if (j == te->n)
			take_plain = true;
		else
		{
			const uint64 *t = &te->e[j * tstride];

			take_plain = gbt_tentry_cmp(&plain[i * stride], none, plain[i * stride + nw],
										t, te->tails[t[nw + 1] >> 16], t[nw], nw) < 0;
		}
		if (take_plain)
		{
			memcpy(&merged[k * stride], &plain[i * stride], sizeof(uint64) * stride);
			mtails[k] = none;
			i++;
		}
		else
		{
			memcpy(&merged[k * stride], &te->e[j * tstride], sizeof(uint64) * stride);
			mtails[k] = te->tails[te->e[j * tstride + nw + 1] >> 16];
			j++;
		}
	}
	if (plain)
		pfree(plain);
	if (gbt_tail_build(&ops, &next, rootblk, treeflag, merged, mtails, n, nw, fillfactor,
					   GBT_INNER_FILLFACTOR) == GBT_NO_BLOCK)
		elog(ERROR, "gbtree build of index \"%s\": an inner page took one entry",
			 RelationGetRelationName(w->index));
	w->nextblk = next;
	pfree(merged);
	pfree(mtails);
}

/*
 * The fewest key words, two or more and below info->nwords, whose text
 * fields hold order keys of keylen bytes whole; info->nwords if none does.  Only a count
 * whose shape comes out at exactly that many words qualifies, so that the
 * metapage's count gives the same shape back (gbt_index_info).
 */
int
gbt_wide_fit_words(const GbtIndexInfo *info, int keylen)
{
	const GbtKeyShape *shape = &info->shape;
	int			ntext = 0;
	int			nullcount = shape->nullbits ? shape->ncols : 0;
	int			fixed;

	for (int c = 0; c < shape->ncols; c++)
		if (info->is_text[c])
			ntext++;
	if (ntext == 0)
		return info->nwords;
	fixed = shape->nbits - nullcount - ntext * 8 * info->text_bytes;
	/* from two: one-word pages have no tails for the longer values to come */
	for (int k = 2; k < info->nwords; k++)
	{
		int			bytes = (k * 64 - fixed - nullcount) / 8 / ntext;

		if (bytes >= Max(keylen, 1) &&
			(fixed + nullcount + ntext * 8 * bytes + 63) / 64 == k)
			return k;
	}
	return info->nwords;
}

/*
 * One key of shape from (src, its words) in shape to, of fewer words
 * (dst; may be src): each text field's bytes fit both (gbt_wide_fit_words),
 * so the key's place in the order does not change: a text field only loses
 * zero bytes at its end.
 */
void
gbt_wide_reshape_key(const GbtIndexInfo *from, const GbtIndexInfo *to, const uint64 *src,
					 uint64 *dst)
{
	uint64		w[GBT_MAX_KEY_WORDS];

	Assert(to->nwords < from->nwords);
	if (from->shape.ncols == 1)
	{
		/* one column: its field is the words from bit 0, narrowed by dropping */
		memmove(dst, src, sizeof(uint64) * to->nwords);
		return;
	}
	{
		GbtColValue vals[GBT_MAX_KEY_COLS];

		gbt_shape_decode(&from->shape, src, vals);
		for (int c = 0; c < from->shape.ncols; c++)
		{
			unsigned char bytes[GBT_MAX_KEY_WORDS * 8];
			int			len;

			if (!from->is_text[c] || vals[c].isnull)
				continue;
			len = gbt_bytes_from_field(&vals[c], from->text_bytes, bytes);
			Assert(len <= to->text_bytes);
			gbt_bytes_field(bytes, len, to->text_bytes, &vals[c]);
		}
		memset(w, 0, sizeof(w));
		gbt_shape_encode(&to->shape, vals, w);
	}
	memcpy(dst, w, sizeof(uint64) * to->nwords);
}

/* n build entries (words, TID) of shape from rewritten in place in shape to */
static void
reshape_entries(const GbtIndexInfo *from, const GbtIndexInfo *to, uint64 *e, Size n)
{
	const int	ow = from->nwords;
	const int	nw = to->nwords;

	for (Size i = 0; i < n; i++)
	{
		uint64		tid = e[i * (ow + 1) + ow];

		gbt_wide_reshape_key(from, to, &e[i * (ow + 1)], &e[i * (nw + 1)]);
		e[i * (nw + 1) + nw] = tid;
	}
}

IndexBuildResult *
gbt_wide_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	GbtWideBuild wb;
	GbtPageWriter *w;
	IndexBuildResult *result;
	MemoryContext cxt,
				old;
	Page		meta;
	int			nw;
	int			fitted;
	int			fillfactor = gbt_get_fillfactor(index);

	memset(&wb, 0, sizeof(wb));
	wb.info = gbt_index_info_copy(index);
	nw = wb.info->nwords;
	wb.stride = nw + 1;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "gbtree wide build",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_TABLESCAN);
	table_index_build_scan(heap, index, indexInfo, true, true,
						   wide_build_callback, &wb, NULL);

	/*
	 * Text keys all shorter than their fields: the fewest words that hold
	 * them whole (src/README, "Text keys"), when there are enough of them
	 * (rows with a text value) to say what later ones will be.  Longer values inserted later take
	 * tails.
	 */
	fitted = wb.info->text_bytes > 0 && wb.tvals.n == 0 && wb.tnulls.n == 0 &&
		wb.nkeyed >= gbt_fit_min_rows ? gbt_wide_fit_words(wb.info, wb.keylen) : nw;
	if (fitted < nw)
	{
		GbtIndexInfo *fit = palloc(sizeof(GbtIndexInfo));

		memcpy(fit, wb.info, sizeof(GbtIndexInfo));
		gbt_wide_info_init(index, fit, fitted);
		reshape_entries(wb.info, fit, wb.vals, wb.nvals);
		reshape_entries(wb.info, fit, wb.nulls, wb.nnulls);
		wb.info = fit;
		nw = fit->nwords;
		wb.stride = nw + 1;
	}
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_SORT);
	gbt_wide_sort_entries(wb.vals, wb.nvals, nw);
	gbt_wide_sort_entries(wb.nulls, wb.nnulls, nw);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_LOAD);
	w = palloc0(sizeof(GbtPageWriter));
	w->index = index;
	w->use_wal = RelationNeedsWAL(index);
	w->nextblk = GBT_FIRST_FREE_BLKNO;
	w->extended = RelationGetNumberOfBlocks(index);
	for (int i = 0; i < GBT_WRITE_BATCH; i++)
		w->pages[i] = palloc(BLCKSZ);
	if (wb.tvals.n > 0)
		build_tailed_tree(w, wb.vals, wb.nvals, &wb.tvals, nw, GBT_ROOT_BLKNO, 0, fillfactor);
	else
		build_wide_tree(w, wb.vals, wb.nvals, nw, GBT_ROOT_BLKNO, 0, fillfactor,
						gbt_wide_dedup(index, wb.info));
	if (wb.tnulls.n > 0)
		build_tailed_tree(w, wb.nulls, wb.nnulls, &wb.tnulls, nw, GBT_NULLROOT_BLKNO,
						  GBT_F_NULLTREE, fillfactor);
	else
		build_wide_tree(w, wb.nulls, wb.nnulls, nw, GBT_NULLROOT_BLKNO, GBT_F_NULLTREE,
						fillfactor, gbt_wide_dedup(index, wb.info));
	/* from here on, the index's cached shape is the one its pages have */
	memcpy(gbt_index_info(index), wb.info, sizeof(GbtIndexInfo));
	meta = gbt_writer_page(w, GBT_META_BLKNO);
	gbt_init_metapage(meta, index, (uint64) wb.indtuples);
	gbt_writer_flush(w);
	if (w->use_wal)
		smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);

	MemoryContextSwitchTo(old);
	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = wb.indtuples;
	result->index_tuples = wb.indtuples;
	MemoryContextDelete(cxt);
	return result;
}

/*
 * Fitting a new index at its first flush
 * --------------------------------------
 * CREATE INDEX on an empty table has seen no keys, so it takes four words
 * ("Text keys" in src/README), and so does every page the index grows by
 * inserts.  Its usual next step is a load.  When a flush brings entries to
 * an index that is still only its two root leaves (empty, or holding what
 * went in alone before: a unique index's first entry of the statement, a
 * few rows), and they are enough to say what later keys will be
 * (gbt_fit_min_rows rows with a text value, none with a tail, the roots'
 * counted too), the index first takes the words a build of those rows
 * would (gbt_wide_fit_words): the roots are rewritten with their entries
 * in the new words, and the batch too.  A load after CREATE INDEX then
 * gets the density of a CREATE INDEX after the load.
 *
 * The shape lives in every backend's relcache (rd_amcache) and in entries
 * not flushed yet, so it changes only where nobody holds it:
 *	- the index locked AccessExclusive, if granted at once: no scan, insert
 *	  or VACUUM elsewhere, since they all lock the index;
 *	- the table locked Share, if granted at once: no other transaction that
 *	  wrote it, so none with entries pending in its batch;
 *	- in this backend, no reference to the index but the flush's and, given
 *	  by held_refs, its inserting statement's (an open cursor's scan holds
 *	  the old shape), no parallel mode, and no subtransaction (its marks
 *	  count the batch in slots of the old shape).
 * The relcache invalidation is sent at once, and to standbys in the WAL,
 * not at commit: the pages changed whether this transaction commits or
 * not.  Then both locks go: whoever locks the index next reads the message
 * first.  A standby keeps the logged AccessExclusiveLock to the end of this
 * transaction, as it does for any.
 *
 * values and nulls: the batch's arrays (batch.c), *nvalues and *nnulls of
 * their GbtEntry slots, rewritten in place.  extra (with extra_tlen): an
 * entry not in them yet, whose words the caller rewrites itself
 * (gbt_wide_reshape_key) when this returns true.
 */

/* one entry's words: the longest text key, and whether it has one */
static void
entry_fit(const GbtIndexInfo *info, const uint64 *words, int *keylen, double *nkeyed)
{
	GbtColValue vals[GBT_MAX_KEY_COLS];
	bool		keyed = false;

	gbt_shape_decode(&info->shape, words, vals);
	for (int c = 0; c < info->shape.ncols; c++)
	{
		unsigned char bytes[GBT_MAX_KEY_WORDS * 8];

		if (!info->is_text[c] || vals[c].isnull)
			continue;
		*keylen = Max(*keylen, gbt_bytes_from_field(&vals[c], info->text_bytes, bytes));
		keyed = true;
	}
	*nkeyed += keyed;
}

/* nulltree: a one-column index's NULLs, no text to count */
static bool
batch_fit(const GbtIndexInfo *info, const uint64 *arr, Size nslots, bool nulltree, int *keylen,
		  double *nkeyed)
{
	const int	nw = info->nwords;

	for (Size at = 0; at < nslots; at += gbt_wide_batch_slots(nw, 0))
	{
		const uint64 *e = arr + 2 * at;

		if (e[nw + 1] != 0)
			return false;		/* a tail: no fewer words hold it whole */
		if (!nulltree)
			entry_fit(info, e, keylen, nkeyed);
	}
	return true;
}

static Size
batch_reshape(const GbtIndexInfo *from, const GbtIndexInfo *to, uint64 *arr, Size nslots)
{
	Size		out = 0;

	for (Size at = 0; at < nslots; at += gbt_wide_batch_slots(from->nwords, 0))
	{
		uint64		e[GBT_MAX_KEY_WORDS + 2];
		uint64	   *dst = arr + 2 * out;
		Size		slots = gbt_wide_batch_slots(to->nwords, 0);

		memcpy(e, arr + 2 * at, sizeof(uint64) * (from->nwords + 2));
		memset(dst, 0, sizeof(GbtEntry) * slots);
		gbt_wide_reshape_key(from, to, e, dst);
		dst[to->nwords] = e[from->nwords];	/* TID; no tail */
		out += slots;
	}
	return out;
}

/* A root that is the tree's only page: a leaf without tails */
typedef struct RootLeaf
{
	int			n;
	uint64	   *keys;			/* n keys of nwords words, one after another */
	uint64	   *tids;
} RootLeaf;

static bool
read_root_leaf(Relation index, Buffer buf, int nw, RootLeaf *r)
{
	GbtNode		node;

	gbt_wide_check_page(index, buf, nw);
	gbt_node_view((char *) BufferGetPage(buf), &node);
	if (!(node.opaque->flags & GBT_F_LEAF) || !(node.opaque->flags & GBT_F_RIGHTMOST) ||
		(node.opaque->flags & (GBT_F_TAILS | GBT_F_POSTING)))
		return false;
	r->keys = palloc(sizeof(uint64) * GBT_MAX_SLOT_WORDS);
	r->tids = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	r->n = gbt_node_extract(&node, r->keys, r->tids, NULL);
	return true;
}

bool
gbt_wide_refit_first(Relation index, Oid heapoid, int held_refs, uint64 *values,
					 Size *nvalues, uint64 *nulls, Size *nnulls, const uint64 *extra,
					 int extra_tlen, bool extra_null)
{
	GbtIndexInfo *info = gbt_index_info(index);
	GbtIndexInfo old,
				fit;
	int			keylen = 0;
	double		nkeyed = 0;
	int			fitted = 0;
	Buffer		bufs[GBT_FIRST_FREE_BLKNO];
	RootLeaf	roots[GBT_FIRST_FREE_BLKNO];

	/* cheapest first: this runs at every flush of a multi-word index */
	if (!info->wide || info->text_bytes == 0 || info->nwords <= 2 || IsInParallelMode() ||
		index->rd_refcnt > held_refs ||
		RelationGetNumberOfBlocks(index) != GBT_FIRST_FREE_BLKNO)
		return false;
	if (!batch_fit(info, values, *nvalues, false, &keylen, &nkeyed) ||
		!batch_fit(info, nulls, *nnulls, true, &keylen, &nkeyed))
		return false;
	if (extra)
	{
		if (extra_tlen != 0)
			return false;
		if (!extra_null)
			entry_fit(info, extra, &keylen, &nkeyed);
	}
	/* what the roots may add cannot make up for too few, nor narrow */
	if (nkeyed + 2 * GBT_MAX_SLOTS < gbt_fit_min_rows ||
		gbt_wide_fit_words(info, keylen) >= info->nwords)
		return false;

	if (!ConditionalLockRelation(index, AccessExclusiveLock))
		return false;
	if (!ConditionalLockRelationOid(heapoid, ShareLock))
	{
		UnlockRelation(index, AccessExclusiveLock);
		return false;
	}
	/* taking the locks read the invalidations: the cache may be new */
	info = gbt_index_info(index);
	memcpy(&old, info, sizeof(GbtIndexInfo));
	for (BlockNumber blk = 0; blk < GBT_FIRST_FREE_BLKNO; blk++)
	{
		bufs[blk] = ReadBuffer(index, blk);
		LockBuffer(bufs[blk], BUFFER_LOCK_EXCLUSIVE);
	}
	if (RelationGetNumberOfBlocks(index) == GBT_FIRST_FREE_BLKNO &&
		GbtPageGetMeta(BufferGetPage(bufs[GBT_META_BLKNO]))->keywords == old.nwords &&
		read_root_leaf(index, bufs[GBT_ROOT_BLKNO], old.nwords, &roots[GBT_ROOT_BLKNO]) &&
		read_root_leaf(index, bufs[GBT_NULLROOT_BLKNO], old.nwords, &roots[GBT_NULLROOT_BLKNO]))
	{
		for (int i = 0; i < roots[GBT_ROOT_BLKNO].n; i++)
			entry_fit(&old, &roots[GBT_ROOT_BLKNO].keys[i * old.nwords], &keylen, &nkeyed);
		if (nkeyed >= gbt_fit_min_rows)
			fitted = gbt_wide_fit_words(&old, keylen);
	}
	if (fitted > 0 && fitted < old.nwords)
	{
		GbtGxlog   *g = gbt_gxlog_start(index);
		Page		meta = gbt_gxlog_register(g, bufs[GBT_META_BLKNO], GENERIC_XLOG_FULL_IMAGE);

		memcpy(&fit, &old, sizeof(GbtIndexInfo));
		gbt_wide_info_init(index, &fit, fitted);
		Assert(fit.nwords == fitted);
		for (BlockNumber blk = GBT_ROOT_BLKNO; blk <= GBT_NULLROOT_BLKNO; blk++)
		{
			RootLeaf   *r = &roots[blk];
			Page		page = gbt_gxlog_register(g, bufs[blk], GENERIC_XLOG_FULL_IMAGE);
			GbtNode		node;

			for (int i = 0; i < r->n; i++)
				gbt_wide_reshape_key(&old, &fit, &r->keys[i * old.nwords],
									 &r->keys[i * fit.nwords]);
			gbt_wide_init_page(page, true, 0,
							   GBT_F_ROOT | GBT_F_RIGHTMOST |
							   (blk == GBT_NULLROOT_BLKNO ? GBT_F_NULLTREE : 0),
							   fitted);
			gbt_node_view((char *) page, &node);
			gbt_node_load_spread(&node, r->n, r->keys, r->tids, NULL, true);
		}
		GbtPageGetMeta(meta)->keywords = (uint16) fitted;
		gbt_gxlog_finish(g);
	}
	else
		fitted = 0;
	for (BlockNumber blk = 0; blk < GBT_FIRST_FREE_BLKNO; blk++)
		UnlockReleaseBuffer(bufs[blk]);
	if (fitted > 0)
	{
		SharedInvalidationMessage msg;

		/* this backend's cache and batch, then everybody else's caches */
		memcpy(gbt_index_info(index), &fit, sizeof(GbtIndexInfo));
		*nvalues = batch_reshape(&old, &fit, values, *nvalues);
		*nnulls = batch_reshape(&old, &fit, nulls, *nnulls);
		gbt_gpu_forget(index);
		memset(&msg, 0, sizeof(msg));
		msg.rc.id = SHAREDINVALRELCACHE_ID;
		msg.rc.dbId = MyDatabaseId;
		msg.rc.relId = RelationGetRelid(index);
		SendSharedInvalidMessages(&msg, 1);
		if (RelationNeedsWAL(index) && XLogStandbyInfoActive())
			LogStandbyInvalidations(1, &msg, false);
	}
	UnlockRelationOid(heapoid, ShareLock);
	UnlockRelation(index, AccessExclusiveLock);
	return fitted > 0;
}
