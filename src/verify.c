/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  gbtree_check(index, heapallindexed): structural verification in the
 *	  spirit of amcheck's bt_index_check.
 *
 * Takes AccessShareLock on the index and its table, so it runs under
 * concurrent reads and writes.  Pages are read one at a time under share
 * locks, except that moving along a level holds the left page while
 * locking its right sibling (left to right, as every writer locks), which
 * makes the cross-page checks exact at that instant:
 *
 *	metapage: magic, version, roots
 *	every page: page id, special size, kind, slot capacity, the in-page
 *		invariants (entry order, gap copies, directory, used count)
 *	every level, left to right: levels agree, entries below the high key,
 *		right sibling's entries at or above it, leaf left-links
 *	inner pages: each child is one level down and its entries lie within
 *		[separator, next separator or high key)
 *	entries: TIDs plausible, NULL tree keys zero
 *	heapallindexed: every heap tuple visible to a fresh MVCC snapshot has
 *		exactly one entry with its TID and its key
 *
 * Violations raise ERRCODE_INDEX_CORRUPTED naming the block.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gbtree.h"
#include "gbtree_wide.h"

PG_FUNCTION_INFO_V1(gbtree_check);

typedef struct GbtCheckState
{
	Relation	index;
	Relation	heap;
	GbtIndexInfo *info;
	BlockNumber heapblocks;
	/* heapallindexed */
	GbtEntry   *byTid;			/* (key = packed TID, tid = index key) */
	Size		n;
	Size		cap;
	int64		heapchecked;
} GbtCheckState;

#define CORRUPT(st, blk, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("index \"%s\" block %u: %s", RelationGetRelationName((st)->index), (blk), \
					psprintf(__VA_ARGS__))))

static Buffer
read_locked(GbtCheckState *st, BlockNumber blk)
{
	Buffer		buf;

	if (blk == GBT_NO_BLOCK || blk >= RelationGetNumberOfBlocks(st->index))
		CORRUPT(st, blk, "link to a block beyond the end of the index");
	buf = ReadBuffer(st->index, blk);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	gbt_check_page(st->index, buf);
	return buf;
}

static void
remember_entry(GbtCheckState *st, uint64 key, uint64 tid, bool isnull)
{
	if (st->byTid == NULL)
		return;
	if (st->n == st->cap)
	{
		st->cap *= 2;
		st->byTid = repalloc_huge(st->byTid, st->cap * sizeof(GbtEntry));
	}
	/* sort by TID (flags cleared); keep key; mark NULL entries in flags */
	st->byTid[st->n].key = tid & ~GBT_TID_FLAGS_MASK;
	st->byTid[st->n].tid = isnull ? 0 : key;
	if (isnull)
		st->byTid[st->n].key |= 1;
	else if (gbt_tid_flags(tid) & GBT_TID_FLAG_NEGZERO)
		st->byTid[st->n].key |= 2;
	st->n++;
}

/*
 * The first and last entries of a page of either form: false if it has
 * none.
 */
static bool
page_bounds(Page page, uint64 *fk, uint64 *ft, uint64 *lk, uint64 *lt)
{
	GbtNode		node;
	int			f,
				l;

	if (gbt_page_is_posting((char *) page))
	{
		GbtPost		p;
		int			n;

		gbt_post_view((char *) page, &p);
		n = p.hdr->nentries;
		if (n == 0 || p.hdr->ngroups == 0)
			return false;
		*fk = p.keys[0];
		*ft = gbt_post_tid(&p, 0);
		*lk = p.keys[p.hdr->ngroups - 1];
		*lt = gbt_post_tid(&p, n - 1);
		return true;
	}
	gbt_page_view(page, &node);
	f = gbt_node_first_used(&node);
	l = gbt_node_last_used(&node);
	if (f >= node.nslots || l < 0)
		return false;
	*fk = node.keys[f];
	*ft = node.tids[f];
	*lk = node.keys[l];
	*lt = node.tids[l];
	return true;
}

/* the checks of each entry of a posting leaf (check_page_alone's) */
static void
check_posting_alone(GbtCheckState *st, Buffer buf, bool nulltree)
{
	BlockNumber blk = BufferGetBlockNumber(buf);
	Page		page = BufferGetPage(buf);
	GbtPageOpaque op = gbt_page_opaque((char *) page);
	const char *err = gbt_post_check((char *) page);
	uint64	   *keys;
	uint64	   *tids;
	int			n;

	if (err)
		CORRUPT(st, blk, "%s", err);
	keys = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
	tids = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
	n = gbt_post_decode((char *) page, keys, tids);
	if (n > 0 && !(op->flags & GBT_F_RIGHTMOST) &&
		!gbt_entry_lt(keys[n - 1], tids[n - 1], op->hikey, op->hitid))
		CORRUPT(st, blk, "last posting entry is not below the high key");
	for (int i = 0; i < n; i++)
	{
		OffsetNumber off = gbt_tid_offset(tids[i]);
		BlockNumber hblk = gbt_tid_block(tids[i]);

		if (nulltree && keys[i] != 0)
			CORRUPT(st, blk, "posting entry %d of the NULL tree has a key", i);
		if (off < FirstOffsetNumber || off > MaxHeapTuplesPerPage)
			CORRUPT(st, blk, "posting entry %d has invalid heap offset %u", i, off);
		if (hblk >= st->heapblocks)
		{
			st->heapblocks = RelationGetNumberOfBlocks(st->heap);
			if (hblk >= st->heapblocks)
				CORRUPT(st, blk, "posting entry %d points to heap block %u beyond the table's end", i, hblk);
		}
		remember_entry(st, keys[i], tids[i], nulltree);
	}
	pfree(keys);
	pfree(tids);
}

/* checks of one page that need nothing else */
static void
check_page_alone(GbtCheckState *st, Buffer buf, bool nulltree)
{
	BlockNumber blk = BufferGetBlockNumber(buf);
	GbtNode		node;
	GbtPageOpaque op;
	const char *err;

	op = gbt_page_opaque((char *) BufferGetPage(buf));
	if (((op->flags & GBT_F_NULLTREE) != 0) != nulltree)
		CORRUPT(st, blk, "page belongs to the wrong tree");
	if (!(op->flags & GBT_F_RIGHTMOST) && op->rightlink == GBT_NO_BLOCK)
		CORRUPT(st, blk, "page without right sibling is not marked rightmost");
	if (op->flags & GBT_F_POSTING)
	{
		check_posting_alone(st, buf, nulltree);
		return;
	}
	gbt_page_view(BufferGetPage(buf), &node);
	err = gbt_node_check(&node);
	if (err)
		CORRUPT(st, blk, "%s", err);
	if (op->flags & GBT_F_LEAF)
	{
		const uint64 *dead = gbt_leaf_dead((char *) BufferGetPage(buf));

		/* marks are set on used slots and cleared whenever slots move */
		for (int w = 0; w < GBT_BITMAP_WORDS; w++)
			if (dead[w] & ~node.used[w])
				CORRUPT(st, blk, "dead mark on an unused slot near slot %d", w * 64);
	}
	if (!(op->flags & GBT_F_RIGHTMOST))
	{
		int			last = gbt_node_last_used(&node);

		if (last >= 0 &&
			!gbt_entry_lt(node.keys[last], node.tids[last], op->hikey, op->hitid))
			CORRUPT(st, blk, "entry at slot %d is not below the high key", last);
	}
	for (int s = gbt_node_first_used(&node); s < node.nslots; s = gbt_node_next_used(&node, s + 1))
	{
		if (nulltree && node.keys[s] != 0)
			CORRUPT(st, blk, "entry at slot %d of the NULL tree has a key", s);
		if (op->flags & GBT_F_LEAF)
		{
			OffsetNumber off = gbt_tid_offset(node.tids[s]);
			BlockNumber hblk = gbt_tid_block(node.tids[s]);

			if (off < FirstOffsetNumber || off > MaxHeapTuplesPerPage)
				CORRUPT(st, blk, "entry at slot %d has invalid heap offset %u", s, off);
			if (hblk >= st->heapblocks)
			{
				st->heapblocks = RelationGetNumberOfBlocks(st->heap);
				if (hblk >= st->heapblocks)
					CORRUPT(st, blk, "entry at slot %d points to heap block %u beyond the table's end", s, hblk);
			}
			remember_entry(st, node.keys[s], node.tids[s], nulltree);
		}
		else
		{
			uint32		c = node.child[s];

			if (c <= GBT_NULLROOT_BLKNO || c == GBT_NO_BLOCK)
				CORRUPT(st, blk, "invalid downlink %u at slot %d", c, s);
		}
	}
}

/* Check each child of an inner page (a copy of it) against its separators. */
static void
check_children(GbtCheckState *st, BlockNumber pblk, char *pcopy, bool leftmost)
{
	GbtNode		pnode;
	GbtPageOpaque pop;

	gbt_node_view(pcopy, &pnode);
	pop = pnode.opaque;
	for (int s = gbt_node_first_used(&pnode); s < pnode.nslots;
		 s = gbt_node_next_used(&pnode, s + 1))
	{
		int			nx = gbt_node_next_used(&pnode, s + 1);
		bool		have_upper = nx < pnode.nslots || !(pop->flags & GBT_F_RIGHTMOST);
		uint64		uk = nx < pnode.nslots ? pnode.keys[nx] : pop->hikey;
		uint64		ut = nx < pnode.nslots ? pnode.tids[nx] : pop->hitid;
		bool		first = (s == gbt_node_first_used(&pnode));
		Buffer		cbuf;
		GbtPageOpaque cop;
		bool		nonempty;
		uint64		fk,
					ft,
					lk,
					lt;

		CHECK_FOR_INTERRUPTS();
		cbuf = read_locked(st, pnode.child[s]);
		cop = gbt_page_opaque((char *) BufferGetPage(cbuf));
		if (cop->flags & GBT_F_DELETED)
		{
			/* unlinked since we copied the parent */
			UnlockReleaseBuffer(cbuf);
			continue;
		}
		if (cop->level + 1 != pop->level)
			CORRUPT(st, pnode.child[s], "level %u under parent block %u of level %u",
					cop->level, pblk, pop->level);
		/* merges only lower a low key, so this holds under concurrency */
		if (!(leftmost && first) &&
			gbt_entry_lt(pnode.keys[s], pnode.tids[s], cop->lowkey, cop->lowtid))
			CORRUPT(st, pnode.child[s], "low key is above its separator in parent block %u", pblk);
		nonempty = page_bounds(BufferGetPage(cbuf), &fk, &ft, &lk, &lt);
		if (nonempty && !(leftmost && first) &&
			gbt_entry_lt(fk, ft, pnode.keys[s], pnode.tids[s]))
			CORRUPT(st, pnode.child[s], "first entry is below its separator in parent block %u", pblk);
		if (nonempty && have_upper && !gbt_entry_lt(lk, lt, uk, ut))
			CORRUPT(st, pnode.child[s], "last entry is not below the next separator in parent block %u", pblk);
		UnlockReleaseBuffer(cbuf);
	}
}

/* Walk one tree level by level, left to right. */
static void
check_tree(GbtCheckState *st, BlockNumber root, bool nulltree)
{
	Buffer		buf = read_locked(st, root);
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));
	int			level = op->level;
	BlockNumber leftmost = root;
	char	   *copy = palloc(BLCKSZ);

	if (!(op->flags & GBT_F_ROOT) || (op->flags & GBT_F_DELETED) ||
		!(op->flags & GBT_F_RIGHTMOST))
		CORRUPT(st, root, "root page is not marked as a root");
	UnlockReleaseBuffer(buf);

	for (;;)
	{
		BlockNumber blk = leftmost;
		BlockNumber nextleftmost = GBT_NO_BLOCK;
		int64		hops = 0;
		bool		first = true;

		buf = read_locked(st, blk);
		op = gbt_page_opaque((char *) BufferGetPage(buf));
		if ((op->flags & GBT_F_LEAF) && op->leftlink != GBT_NO_BLOCK)
			CORRUPT(st, blk, "leftmost leaf has a left-link");
		if (op->lowkey != 0 || op->lowtid != 0)
			CORRUPT(st, blk, "leftmost page of level %d has a low key", level);
		for (;;)
		{
			GbtNode		node;
			Buffer		rbuf;
			GbtPageOpaque rop;
			uint64		rfk,
						rft,
						rlk,
						rlt;
			BlockNumber next;

			CHECK_FOR_INTERRUPTS();
			op = gbt_page_opaque((char *) BufferGetPage(buf));
			if (!(op->flags & GBT_F_POSTING))
				gbt_page_view(BufferGetPage(buf), &node);
			if (op->flags & GBT_F_DELETED)
			{
				/* unlinked while we were not holding its left sibling */
				next = op->rightlink;
				UnlockReleaseBuffer(buf);
				buf = read_locked(st, next);
				blk = next;
				continue;
			}
			if (op->level != level)
				CORRUPT(st, blk, "level %u where level %d was expected", op->level, level);
			if (++hops > (int64) RelationGetNumberOfBlocks(st->index))
				CORRUPT(st, blk, "right-links form a cycle");
			check_page_alone(st, buf, nulltree);
			if (level > 0)
			{
				if (nextleftmost == GBT_NO_BLOCK)
				{
					int			f = gbt_node_first_used(&node);

					if (f >= node.nslots)
						CORRUPT(st, blk, "inner page has no downlinks");
					nextleftmost = node.child[f];
				}
				memcpy(copy, BufferGetPage(buf), BLCKSZ);
			}
			if (op->flags & GBT_F_RIGHTMOST)
			{
				UnlockReleaseBuffer(buf);
				if (level > 0)
					check_children(st, blk, copy, first);
				break;
			}

			/* hold this page while looking at its right sibling */
			next = op->rightlink;
			rbuf = read_locked(st, next);
			rop = gbt_page_opaque((char *) BufferGetPage(rbuf));
			if (rop->flags & GBT_F_DELETED)
				CORRUPT(st, next, "deleted page is still the right sibling of block %u", blk);
			if (rop->level != op->level)
				CORRUPT(st, next, "level %u differs from left sibling %u's level %u",
						rop->level, blk, op->level);
			if ((rop->flags & GBT_F_LEAF) && rop->leftlink != blk)
				CORRUPT(st, next, "left-link %u does not lead back to left sibling %u",
						rop->leftlink, blk);
			if (rop->lowkey != op->hikey || rop->lowtid != op->hitid)
				CORRUPT(st, next, "low key differs from left sibling %u's high key", blk);
			if (page_bounds(BufferGetPage(rbuf), &rfk, &rft, &rlk, &rlt) &&
				gbt_entry_lt(rfk, rft, op->hikey, op->hitid))
				CORRUPT(st, next, "first entry is below the left sibling's high key (block %u)", blk);
			UnlockReleaseBuffer(rbuf);
			UnlockReleaseBuffer(buf);

			/* children with no lock held */
			if (level > 0)
				check_children(st, blk, copy, first);
			first = false;
			blk = next;
			buf = read_locked(st, blk);
		}
		if (level == 0)
			break;
		leftmost = nextleftmost;
		level--;
	}
	pfree(copy);
}

static int
cmp_entry_key(const void *a, const void *b)
{
	uint64		x = ((const GbtEntry *) a)->key;
	uint64		y = ((const GbtEntry *) b)->key;

	return (x > y) - (x < y);
}

static void
heap_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			  bool tupleIsAlive, void *state)
{
	GbtCheckState *st = (GbtCheckState *) state;
	uint64		t = gbt_tid_pack(ItemPointerGetBlockNumber(tid),
								 ItemPointerGetOffsetNumber(tid), 0);
	Size		lo = 0,
				hi = st->n;
	uint64		want;
	uint16		flags = 0;

	if (isnull[0])
		want = t | 1;
	else
	{
		uint64		key = gbt_index_key(st->info, values[0], &flags);

		want = t | ((flags & GBT_TID_FLAG_NEGZERO) ? 2 : 0);
		(void) key;
	}
	/* find the entries with this TID (low bits hold null/-0 marks) */
	while (lo < hi)
	{
		Size		mid = lo + (hi - lo) / 2;

		if (st->byTid[mid].key < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= st->n || (st->byTid[lo].key & ~UINT64_C(3)) != t)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) from table \"%s\" lacks matching index entry in index \"%s\"",
						ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(st->heap), RelationGetRelationName(st->index))));
	if (lo + 1 < st->n && (st->byTid[lo + 1].key & ~UINT64_C(3)) == t)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) from table \"%s\" has more than one entry in index \"%s\"",
						ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(st->heap), RelationGetRelationName(st->index))));
	if (st->byTid[lo].key != want ||
		(!isnull[0] && st->byTid[lo].tid != gbt_index_key(st->info, values[0], &flags)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) from table \"%s\" has a different key in index \"%s\"",
						ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(st->heap), RelationGetRelationName(st->index))));
	st->heapchecked++;
}

/*
 * Multi-word trees (wide_check.c checks their structure); heapallindexed:
 * every visible heap tuple's key words found at its TID.
 */
typedef struct GbtWideCheck
{
	GbtCheckState *st;
	uint64	   *entries;		/* words, TID, tail hash; sorted by TID */
	Size		n;
	int			nw;
} GbtWideCheck;

/* entries of nw (*arg) words by heap TID, the flag bits left out */
static int
cmp_wide_tid(const void *a, const void *b, void *arg)
{
	int			nw = *(int *) arg;
	uint64		x = ((const uint64 *) a)[nw] & ~GBT_TID_FLAGS_MASK;
	uint64		y = ((const uint64 *) b)[nw] & ~GBT_TID_FLAGS_MASK;

	return x < y ? -1 : x > y ? 1 : 0;
}

static void
wide_heap_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
				   bool tupleIsAlive, void *state)
{
	GbtWideCheck *wc = (GbtWideCheck *) state;
	int			stride = wc->nw + 2;
	uint64		words[GBT_MAX_KEY_WORDS];
	uint16		flags;
	unsigned char tail[GBT_TAIL_HIGHEST_LEN];
	int			tlen;
	uint64		want = gbt_tid_pack(ItemPointerGetBlockNumber(tid),
									ItemPointerGetOffsetNumber(tid), 0);
	Size		lo = 0,
				hi = wc->n;

	(void) gbt_wide_encode_tail(wc->st->info, values, isnull, tid, words, &flags, tail,
								&tlen, NULL);
	while (lo < hi)
	{
		Size		mid = (lo + hi) / 2;
		if ((wc->entries[mid * stride + wc->nw] & ~GBT_TID_FLAGS_MASK) < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= wc->n ||
		(wc->entries[lo * stride + wc->nw] & ~GBT_TID_FLAGS_MASK) != want ||
		memcmp(&wc->entries[lo * stride], words, sizeof(uint64) * wc->nw) != 0 ||
		wc->entries[lo * stride + wc->nw + 1] != gbt_wide_tail_hash((GbtTail) {tail, tlen}))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) from table \"%s\" lacks matching index tuple within index \"%s\"",
						ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(wc->st->heap),
						RelationGetRelationName(index))));
	wc->st->heapchecked++;
}

static void
check_wide(GbtCheckState *st, bool heapallindexed, Snapshot snapshot)
{
	GbtWideCheck wc;
	Size		cap = 1024;

	memset(&wc, 0, sizeof(wc));
	wc.st = st;
	wc.nw = st->info->nwords;
	if (heapallindexed)
		wc.entries = MemoryContextAllocHuge(CurrentMemoryContext,
											cap * (wc.nw + 2) * sizeof(uint64));
	gbt_wide_verify(st->index, GBT_ROOT_BLKNO, heapallindexed ? &wc.entries : NULL, &wc.n, &cap);
	gbt_wide_verify(st->index, GBT_NULLROOT_BLKNO, heapallindexed ? &wc.entries : NULL, &wc.n, &cap);
	if (heapallindexed)
	{
		IndexInfo  *indexInfo = BuildIndexInfo(st->index);
		TableScanDesc scan;

		qsort_arg(wc.entries, wc.n, (wc.nw + 2) * sizeof(uint64), cmp_wide_tid, &wc.nw);
		scan = table_beginscan_strat(st->heap, snapshot, 0, NULL, true, true);
		indexInfo->ii_Concurrent = true;
		table_index_build_scan(st->heap, st->index, indexInfo, true, false,
							   wide_heap_callback, (void *) &wc, scan);
		UnregisterSnapshot(snapshot);
		pfree(wc.entries);
	}
}

Datum
gbtree_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_ARGISNULL(1) ? false : PG_GETARG_BOOL(1);
	Oid			heapoid;
	Relation	heap,
				index;
	GbtCheckState st;
	Snapshot	snapshot = InvalidSnapshot;
	Oid			amoid;

	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
	{
		char	   *name = get_rel_name(indexoid);

		if (name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation with OID %u does not exist", indexoid)));
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", name)));
	}
	/* table first, then index, as every other locker does */
	heap = table_open(heapoid, AccessShareLock);
	index = index_open(indexoid, AccessShareLock);

	amoid = get_am_oid("gbtree", false);
	if (index->rd_rel->relam != amoid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("\"%s\" is not a gbtree index", RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check temporary indexes of other sessions")));
	/* the caller's own pending entries are part of the index (batch.c) */
	gbt_batch_flush_index(indexoid);
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check index \"%s\"", RelationGetRelationName(index)),
				 errdetail("Index is not valid.")));

	memset(&st, 0, sizeof(st));
	st.index = index;
	st.heap = heap;
	st.info = gbt_index_info_copy(index);
	st.heapblocks = RelationGetNumberOfBlocks(heap);

	if (heapallindexed)
	{
		/* the snapshot first: everything it sees was indexed before */
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
		if (index->rd_index->indcheckxmin &&
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data),
								   snapshot->xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("index \"%s\" cannot be verified using transaction snapshot",
							RelationGetRelationName(index))));
		st.cap = 65536;
		st.byTid = MemoryContextAllocHuge(CurrentMemoryContext, st.cap * sizeof(GbtEntry));
	}

	gbt_check_meta(index);
	if (RelationGetNumberOfBlocks(index) <= GBT_NULLROOT_BLKNO)
		CORRUPT(&st, (BlockNumber) 0, "index has fewer blocks than its fixed pages");
	if (st.info->wide)
	{
		check_wide(&st, heapallindexed, snapshot);
		index_close(index, AccessShareLock);
		table_close(heap, AccessShareLock);
		PG_RETURN_VOID();
	}
	check_tree(&st, GBT_ROOT_BLKNO, false);
	check_tree(&st, GBT_NULLROOT_BLKNO, true);

	if (heapallindexed)
	{
		IndexInfo  *indexInfo = BuildIndexInfo(index);
		TableScanDesc scan;

		qsort(st.byTid, st.n, sizeof(GbtEntry), cmp_entry_key);
		scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, true);
		indexInfo->ii_Concurrent = true;
		table_index_build_scan(heap, index, indexInfo, true, false,
							   heap_callback, (void *) &st, scan);
		UnregisterSnapshot(snapshot);
		pfree(st.byTid);
	}

	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	PG_RETURN_VOID();
}
