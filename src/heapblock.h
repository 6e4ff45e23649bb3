/*-------------------------------------------------------------------------
 *
 * heapblock.h
 *	  One heap block's index TIDs resolved under one share lock, for the
 *	  scans that fetch in heap block order (GbtreeArrayScan, GbtreeJoin).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_HEAPBLOCK_H
#define GBTREE_HEAPBLOCK_H

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

typedef struct GbtHeapBlock
{
	Relation	heap;
	Relation	index;			/* named in errors, counted in pgstat */
	Buffer		buf;			/* pinned while its tuples are returned */
	int			n;				/* visible tuples found in it */
	OffsetNumber off[MaxHeapTuplesPerPage];
	HeapTupleData tuple;
} GbtHeapBlock;

extern void gbt_heap_block_init(GbtHeapBlock *hb, Relation heap, Relation index);
extern void gbt_heap_block_lock(GbtHeapBlock *hb, Buffer buf);
extern bool gbt_heap_block_search(GbtHeapBlock *hb, OffsetNumber off, Snapshot snapshot);
extern void gbt_heap_block_unlock(GbtHeapBlock *hb);
extern void gbt_heap_block_store(GbtHeapBlock *hb, int i, TupleTableSlot *slot);
extern void gbt_heap_block_release(GbtHeapBlock *hb);

#endif							/* GBTREE_HEAPBLOCK_H */
