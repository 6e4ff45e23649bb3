/*-------------------------------------------------------------------------
 *
 * vacuum.c
 *	  ambulkdelete and amvacuumcleanup for gbtree.
 *
 * Bulk delete visits every page in physical order and turns the entries
 * of dead heap tuples into gaps, one generic WAL record per changed leaf.
 * It takes a cleanup lock on each leaf, so it waits for scans that still
 * hold a pin on that leaf while returning its TIDs (the same interlock as
 * nbtree: a TID is not recycled under a scan that is about to visit it).
 *
 * Pages a concurrent split creates are allocated at the end of the
 * relation (deleted pages are not recycled yet), so a split can only move
 * entries to a block the scan has yet to reach; the scan repeats until
 * the relation stops growing.  Gaps are reused by later inserts into the
 * same key range.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gbtree.h"

static void
vacuum_leaf(Relation index, Buffer buf, IndexBulkDeleteResult *stats,
			IndexBulkDeleteCallback callback, void *callback_state)
{
	Page		page = BufferGetPage(buf);
	GbtNode		node;
	int			dead[GBT_MAX_SLOTS];
	int			ndead = 0;
	int			live = 0;

	gbt_page_view(page, &node);
	for (int s = gbt_node_first_used(&node); s < node.nslots;
		 s = gbt_node_next_used(&node, s + 1))
	{
		ItemPointerData tid;

		gbt_tid_to_itemptr(node.tids[s], &tid);
		if (callback && callback(&tid, callback_state))
			dead[ndead++] = s;
		else
			live++;
	}

	if (ndead > 0)
	{
		GenericXLogState *state = GenericXLogStart(index);
		Page		wpage = GenericXLogRegisterBuffer(state, buf, 0);
		GbtNode		wnode;

		gbt_page_view(wpage, &wnode);
		/* from the right, so each deletion refreshes only its own gap run */
		for (int i = ndead - 1; i >= 0; i--)
			gbt_node_delete_slot(&wnode, dead[i]);
		GenericXLogFinish(state);
		stats->tuples_removed += ndead;
	}
	stats->num_index_tuples += live;
}

static void
scan_index(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
		   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	bool		needLock = !RELATION_IS_LOCAL(index);
	BlockNumber blkno = GBT_ROOT_BLKNO;
	BlockNumber npages;

	stats->num_index_tuples = 0;
	for (;;)
	{
		if (needLock)
			LockRelationForExtension(index, ExclusiveLock);
		npages = RelationGetNumberOfBlocks(index);
		if (needLock)
			UnlockRelationForExtension(index, ExclusiveLock);
		if (blkno >= npages)
			break;
		for (; blkno < npages; blkno++)
		{
			Buffer		buf;
			GbtPageOpaque op;

			vacuum_delay_point();
			buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
									 info->strategy);
			LockBufferForCleanup(buf);
			if (PageIsNew(BufferGetPage(buf)))
			{
				/* extended by a crashed split: harmless, leave it */
				UnlockReleaseBuffer(buf);
				continue;
			}
			gbt_check_page(index, buf);
			op = gbt_page_opaque((char *) BufferGetPage(buf));
			if ((op->flags & GBT_F_LEAF) && !(op->flags & GBT_F_DELETED))
				vacuum_leaf(index, buf, stats, callback, callback_state);
			UnlockReleaseBuffer(buf);
		}
	}
	stats->num_pages = npages;
	stats->estimated_count = false;
}

IndexBulkDeleteResult *
gbtbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	scan_index(info, stats, callback, callback_state);
	return stats;
}

IndexBulkDeleteResult *
gbtvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
	{
		/* no bulk delete ran: count entries for the statistics */
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		scan_index(info, stats, NULL, NULL);
	}
	IndexFreeSpaceMapVacuum(info->index);
	return stats;
}
