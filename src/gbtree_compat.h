/*-------------------------------------------------------------------------
 *
 * gbtree_compat.h
 *	  The differences between the PostgreSQL majors gbtree builds against
 *	  (15, 16, 17 and 18), in one place.  Code elsewhere uses these names
 *	  and has no version tests of its own, except where a newer major
 *	  offers something gbtree uses (an IndexAmRoutine field, a callback).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_COMPAT_H
#define GBTREE_COMPAT_H

#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "commands/vacuum.h"
#include "storage/proc.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/wait_event.h"

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "gbtree supports PostgreSQL 15, 16, 17 and 18 (this is PG_VERSION_NUM " CppAsString2(PG_VERSION_NUM) ")"
#endif

#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#endif

/*
 * 16: RelFileNode became RelFileLocator ("storage" here: the files of a
 * relation; which one changes on TRUNCATE, REINDEX, SET TABLESPACE).
 */
#if PG_VERSION_NUM >= 160000
typedef RelFileLocator GbtStorage;
#define gbt_rel_storage(rel)			((rel)->rd_locator)
#define gbt_smgr_storage(smgr)			((smgr)->smgr_rlocator.locator)
#define gbt_storage_equals(a, b)		RelFileLocatorEquals(a, b)
#define gbt_rel_filenumber(rel)			((Oid) (rel)->rd_locator.relNumber)
#else
typedef RelFileNode GbtStorage;
#define gbt_rel_storage(rel)			((rel)->rd_node)
#define gbt_smgr_storage(smgr)			((smgr)->smgr_rnode.node)
#define gbt_storage_equals(a, b)		RelFileNodeEquals(a, b)
#define gbt_rel_filenumber(rel)			((rel)->rd_node.relNode)
#endif

/*
 * 16: VACUUM tells index AMs the table, so that a deleted page's xid is
 * checked against that table's horizon (nbtree does the same) rather than
 * the most conservative one, that of shared catalogs.
 */
#if PG_VERSION_NUM >= 160000
#define gbt_vacuum_heaprel(info)		((info)->heaprel)
#else
#define gbt_vacuum_heaprel(info)		((Relation) NULL)
#endif

/*
 * A recovery conflict with no page change: nbtree's XLOG_BTREE_REUSE_PAGE
 * record, whose redo only cancels (or waits for) standby queries whose
 * snapshots are older than the horizon.  16 renamed its fields and added
 * isCatalogRel (logical decoding on standbys).
 */
#if PG_VERSION_NUM >= 160000
#define gbt_fill_conflict_record(x, index, heap, blkno, fxid) \
	do { \
		(x)->locator = (index)->rd_locator; \
		(x)->block = (blkno); \
		(x)->snapshotConflictHorizon = (fxid); \
		(x)->isCatalogRel = RelationIsAccessibleInLogicalDecoding(heap); \
	} while (0)
#else
#define gbt_fill_conflict_record(x, index, heap, blkno, fxid) \
	do { \
		(x)->node = (index)->rd_node; \
		(x)->block = (blkno); \
		(x)->latestRemovedFullXid = (fxid); \
	} while (0)
#endif

/* 17: PGPROC lost pgprocno; a backend's slot is its ProcNumber */
#if PG_VERSION_NUM >= 170000
#define gbt_my_procno()					((int) MyProcNumber)
#else
#define gbt_my_procno()					(MyProc->pgprocno)
#endif

/* 17: estimate_array_length takes the planner root (it may use statistics) */
#if PG_VERSION_NUM >= 170000
#define gbt_estimate_array_length(root, arrayexpr) \
	estimate_array_length((root), (arrayexpr))
#else
#define gbt_estimate_array_length(root, arrayexpr) \
	estimate_array_length(arrayexpr)
#endif

/* amestimateparallelscan's parameters: none, then the key counts, then the index too */
#if PG_VERSION_NUM >= 180000
#define GBT_ESTIMATEPARALLELSCAN_PARAMS	Relation index, int nkeys, int norderbys
#elif PG_VERSION_NUM >= 170000
#define GBT_ESTIMATEPARALLELSCAN_PARAMS	int nkeys, int norderbys
#else
#define GBT_ESTIMATEPARALLELSCAN_PARAMS	void
#endif

/*
 * Before 18 the executor builds a speculative insertion's unique-index
 * information for btree only (BuildSpeculativeIndexInfo): ON CONFLICT on a
 * table with a unique gbtree index must be refused (unique.c).
 */
#if PG_VERSION_NUM >= 180000
#define GBT_ON_CONFLICT_BTREE_ONLY	0
#else
#define GBT_ON_CONFLICT_BTREE_ONLY	1
#endif

/*
 * Before 18 a foreign key checks its referenced columns through a btree
 * unique index only (ATAddForeignKeyConstraint); from 18 on it asks the
 * index's access method for its equality operator (unique.c).
 */
#if PG_VERSION_NUM >= 180000
#define GBT_FK_BTREE_ONLY	0
#else
#define GBT_FK_BTREE_ONLY	1
#endif

/*
 * 17's logical replication apply builds a replica identity index's scan
 * keys from a fixed equality strategy of btree and hash only
 * (get_equal_strategy_number_for_am); 15 and 16 take btree's number for
 * any index, 18 asks the access method (unique.c).
 */
#if PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 180000
#define GBT_REPLICA_IDENTITY_BTREE_ONLY	1
#else
#define GBT_REPLICA_IDENTITY_BTREE_ONLY	0
#endif

/* 18: the AM's part of a parallel scan's shared area moved to ps_offset_am */
#if PG_VERSION_NUM >= 180000
#define gbt_parallel_scan_am_area(ps)	OffsetToPointer((ps), (ps)->ps_offset_am)
#else
#define gbt_parallel_scan_am_area(ps)	OffsetToPointer((ps), (ps)->ps_offset)
#endif

/*
 * 18: index scans carry instrumentation ("Index Searches" in EXPLAIN
 * ANALYZE); an AM counts each descent of its tree it makes for the scan.
 */
#if PG_VERSION_NUM >= 180000
#define gbt_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#define gbt_count_index_search(scan) \
	do { \
		if ((scan)->instrument) \
			(scan)->instrument->nsearches++; \
	} while (0)
#else
#define gbt_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#define gbt_count_index_search(scan)	((void) 0)
#endif

/* 18: vacuum_delay_point says whether it is ANALYZE's */
#if PG_VERSION_NUM >= 180000
#define gbt_vacuum_delay_point()		vacuum_delay_point(false)
#else
#define gbt_vacuum_delay_point()		vacuum_delay_point()
#endif

/*
 * Parallel workers for CREATE INDEX: from 17 the core plans them for an AM
 * with amcanbuildparallel (honouring index_build's "parallel" argument);
 * before, only for btree, so gbtree asks the planner's rule itself.
 */
#if PG_VERSION_NUM >= 170000
#define gbt_index_build_workers(heap, index, indexInfo) \
	((indexInfo)->ii_ParallelWorkers)
#else
#define gbt_index_build_workers(heap, index, indexInfo) \
	plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index))
#endif

/* 18: pg_attribute_noreturn() gave way to C11's _Noreturn (pg_noreturn) */
#if PG_VERSION_NUM >= 180000
#define gbt_noreturn					pg_noreturn
#else
#define gbt_noreturn					pg_attribute_noreturn()
#endif

/*
 * 17: extensions name their wait events, and pg_stat_activity.wait_event
 * shows the name; before, every extension's wait is "Extension".  *cache
 * keeps the event's number once it is registered.
 */
static inline uint32
gbt_wait_event(const char *name, uint32 *cache)
{
#if PG_VERSION_NUM >= 170000
	if (*cache == 0)
		*cache = WaitEventExtensionNew(name);
	return *cache;
#else
	(void) name;
	(void) cache;
	return PG_WAIT_EXTENSION;
#endif
}

#endif							/* GBTREE_COMPAT_H */
