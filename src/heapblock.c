/*-------------------------------------------------------------------------
 *
 * heapblock.c
 *	  Reading a heap table a block at a time, as a bitmap heap scan does,
 *	  for the scans that have their TIDs sorted by block (GbtreeArrayScan,
 *	  GbtreeJoin).
 *
 * The caller pins the block (gbt_heap_block_lock takes the pin over:
 * opportunistic prune, share lock), searches the HOT chain of each of its
 * TIDs under the snapshot (heap_hot_search_buffer, which also takes the
 * predicate lock and checks serializable conflicts, as for an index
 * scan), unlocks, and then returns the visible tuples with the pin alone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "pgstat.h"

#include "heapblock.h"

void
gbt_heap_block_init(GbtHeapBlock *hb, Relation heap, Relation index)
{
	hb->heap = heap;
	hb->index = index;
	hb->buf = InvalidBuffer;
	hb->n = 0;
}

/* take buf's pin over (dropping the last block's) and share-lock it */
void
gbt_heap_block_lock(GbtHeapBlock *hb, Buffer buf)
{
	gbt_heap_block_release(hb);
	hb->buf = buf;
	heap_page_prune_opt(hb->heap, buf);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	hb->n = 0;
}

/* the HOT chain at off: true, and its visible member kept, if there is one */
bool
gbt_heap_block_search(GbtHeapBlock *hb, OffsetNumber off, Snapshot snapshot)
{
	ItemPointerData tid;
	HeapTupleData found;
	bool		all_dead = false;

	ItemPointerSet(&tid, BufferGetBlockNumber(hb->buf), off);
	if (!heap_hot_search_buffer(&tid, hb->heap, hb->buf, snapshot, &found,
								&all_dead, true))
		return false;
	/* distinct entries reach distinct tuples, at most a page's worth */
	if (hb->n >= MaxHeapTuplesPerPage)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" led to more visible tuples than heap block %u can hold",
						RelationGetRelationName(hb->index), BufferGetBlockNumber(hb->buf))));
	hb->off[hb->n++] = ItemPointerGetOffsetNumber(&tid);
	return true;
}

void
gbt_heap_block_unlock(GbtHeapBlock *hb)
{
	LockBuffer(hb->buf, BUFFER_LOCK_UNLOCK);
}

/* the i-th visible tuple into slot, which pins the buffer too */
void
gbt_heap_block_store(GbtHeapBlock *hb, int i, TupleTableSlot *slot)
{
	Page		page = BufferGetPage(hb->buf);
	ItemId		lp = PageGetItemId(page, hb->off[i]);

	hb->tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
	hb->tuple.t_len = ItemIdGetLength(lp);
	hb->tuple.t_tableOid = RelationGetRelid(hb->heap);
	ItemPointerSet(&hb->tuple.t_self, BufferGetBlockNumber(hb->buf), hb->off[i]);
	ExecStoreBufferHeapTuple(&hb->tuple, slot, hb->buf);
	pgstat_count_heap_fetch(hb->index);
}

void
gbt_heap_block_release(GbtHeapBlock *hb)
{
	if (BufferIsValid(hb->buf))
		ReleaseBuffer(hb->buf);
	hb->buf = InvalidBuffer;
	hb->n = 0;
}
