/*-------------------------------------------------------------------------
 *
 * arrayscan.c
 *	  GbtreeArrayScan: the rows of "column = ANY (array)" fetched in heap
 *	  block order after one batched lookup.
 *
 * An index scan with an array of keys returns rows in key order, so its
 * heap fetches jump across the table; a bitmap heap scan reads the heap in
 * block order, but first puts every TID into a hash table, and past
 * work_mem that table turns lossy and whole pages are rechecked against
 * the array.  GbtreeArrayScan looks all the array's keys up at once (a GPU
 * batch when the device allows, or the CPU batch path), radix-sorts the
 * matching TIDs by heap block, and fetches them a block at a time under
 * the query's snapshot, as an index scan would (a TID's HOT chain shares its key, so
 * no recheck of the index quals is needed; only EvalPlanQual rechecks
 * them).  The TIDs are used after the index scan ends, as a bitmap heap
 * scan uses its bitmap: safe under an MVCC snapshot.
 *
 * The path is offered for a plain table whose restrictions include a
 * "key column = ANY (array)" qual of a gbtree index whose key columns are
 * table columns (the key columns' other index quals join it, in index
 * column order; every other restriction stays a filter, and so does
 * x < ANY (...) on a multi-column or multi-word index, which such a scan
 * may leave to the heap's recheck), wherever a bitmap heap scan over the
 * same index would be: it
 * is costed as that scan with a bitmap that never goes lossy, less the
 * recheck of the index quals it never needs.  enable_indexscan or enable_bitmapscan off, or
 * gbtree.enable_array_scan off, keeps the core's plans.  Parallel-aware:
 * the leader looks the keys up while it sets up the parallel query, before
 * the workers start, and leaves the sorted TIDs in the query's shared
 * memory; every participant then claims runs of them, so the lookup is
 * done once and the heap fetches are spread.
 *
 * Since only the leader looks up, only the leader needs the array.  A
 * parallel plan's literal arrays are therefore kept out of the plan text
 * the workers get (nodeToString writes a Const byte by byte as decimal
 * text, some 30 MB for a million int8 keys, which every worker must parse
 * before it starts: 600 ms on the 2-core machine).  Each one becomes an
 * executor parameter in the index quals, and the Const itself is kept in
 * a GbtLeaderConsts node in custom_private, whose text form leaves the
 * value out.  The leader sets the parameters when the node starts;
 * EXPLAIN shows the Consts again.
 *
 * The node keeps 8 bytes per matching index entry (in the query's dynamic
 * shared memory when parallel).
 *
 * The plan node scans its relation (scanrelid); custom_exprs are the index
 * quals, the column on the left.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeIndexscan.h"
#include "access/parallel.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/readfuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paramassign.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/bufmgr.h"
#include "storage/condition_variable.h"
#if PG_VERSION_NUM >= 170000
#include "storage/read_stream.h"
#endif
#include "storage/spin.h"
#include "utils/dsa.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

#include "gbtree.h"
#include "heapblock.h"

#define GBT_ARRAY_NAME	"GbtreeArrayScan"

/* TIDs a parallel participant claims at a time */
#define ARRAY_CLAIM		1024

bool		gbt_enable_array_scan = true;

static set_rel_pathlist_hook_type prev_rel_pathlist_hook = NULL;

/*
 * custom_private's second member, when the plan is parallel-aware: the
 * literal arrays of the index quals, which custom_exprs reference as
 * PARAM_EXEC parameters.  Its text form (outfuncs, hence the workers'
 * copy of the plan) keeps the parameter numbers and leaves the values out.
 */
#define GBT_LEADER_CONSTS_NAME	"GbtLeaderConsts"

typedef struct GbtLeaderConsts
{
	ExtensibleNode node;
	List	   *paramids;		/* integers */
	List	   *consts;			/* Const per paramid; NIL when read from text */
} GbtLeaderConsts;

typedef enum ArraySharedPhase
{
	ARRAY_SHARED_NONE,
	ARRAY_SHARED_READY
} ArraySharedPhase;

/* a parallel scan's one lookup, in the query's dynamic shared memory */
typedef struct GbtArrayShared
{
	slock_t		mutex;
	ArraySharedPhase phase;
	ConditionVariable cv;
	dsa_pointer tids;			/* sorted, (block << 16 | offset) */
	int64		ntids;
	int64		nblocks;
	pg_atomic_uint64 next;		/* the next TID to claim */
} GbtArrayShared;

typedef struct GbtArrayState
{
	CustomScanState css;
	Relation	heap;
	Relation	index;
	ScanKey		keys;
	int			nkeys;
	IndexRuntimeKeyInfo *rtkeys;
	int			nrtkeys;
	ExprContext *rtcxt;
	ExprState  *indexqual;		/* EvalPlanQual's recheck */
	IndexFetchTableData *fetch;
	MemoryContext cxt;

	/* the lookup's TIDs, sorted by heap block, and the run being fetched */
	bool		looked_up;
	uint64	   *tids;
	int64		ntids;
	int64		nblocks;		/* distinct heap blocks among them */
	int64		maxtids;
	int64		pos;
	int64		end;

	/*
	 * Heap tables are read a block at a time, as a bitmap heap scan does:
	 * the block's TIDs are resolved under one share lock (their HOT chains
	 * searched), then its visible tuples are returned with the pin alone.
	 */
	bool		by_block;
	GbtHeapBlock block;
	int			visible_pos;	/* the next of block's visible tuples */
	BufferAccessStrategy strategy;	/* a ring for reads beyond NBuffers */
#if PG_VERSION_NUM >= 170000

	/*
	 * PostgreSQL 17+: the blocks come through a read stream, which reads
	 * ahead (and combines adjacent reads).  Its callback walks the TIDs on
	 * its own cursor, claiming runs when parallel, and hands each block's
	 * range of TIDs along with it.
	 */
	ReadStream *stream;
	int64		cb_pos;
	int64		cb_end;
#endif

	/* parallel: the shared lookup */
	GbtArrayShared *shared;
	dsa_area   *dsa;

	/* EXPLAIN ANALYZE, this process, summed over rescans */
	int64		entries;
	int64		heap_fetches;
	int64		heap_blocks;
	BlockNumber last_block;
} GbtArrayState;

static Plan *array_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						List *tlist, List *clauses, List *custom_plans);
static Node *array_create_state(CustomScan *cscan);
static void array_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *array_exec(CustomScanState *node);
static void array_end(CustomScanState *node);
static void array_rescan(CustomScanState *node);
static void array_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static Size array_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void array_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void array_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void array_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);

static const CustomPathMethods array_path_methods = {
	.CustomName = GBT_ARRAY_NAME,
	.PlanCustomPath = array_plan,
};

static const CustomScanMethods array_scan_methods = {
	.CustomName = GBT_ARRAY_NAME,
	.CreateCustomScanState = array_create_state,
};

static const CustomExecMethods array_exec_methods = {
	.CustomName = GBT_ARRAY_NAME,
	.BeginCustomScan = array_begin,
	.ExecCustomScan = array_exec,
	.EndCustomScan = array_end,
	.ReScanCustomScan = array_rescan,
	.EstimateDSMCustomScan = array_estimate_dsm,
	.InitializeDSMCustomScan = array_init_dsm,
	.ReInitializeDSMCustomScan = array_reinit_dsm,
	.InitializeWorkerCustomScan = array_init_worker,
	.ExplainCustomScan = array_explain,
};

/* ------------------------------------------------------------------------
 * Planning
 * ------------------------------------------------------------------------
 */

/*
 * A path costed as bitmap, the bitmap heap path over the same index quals,
 * less what the node does not do: recheck the index quals on each row.
 */
static CustomPath *
make_array_path(PlannerInfo *root, RelOptInfo *rel, BitmapHeapPath *bitmap,
				IndexOptInfo *index, List *quals, List *index_rinfos,
				QualCost *qualcost, double tuples, int workers)
{
	CustomPath *cpath = makeNode(CustomPath);
	double		per_process = workers > 0 ? bitmap->path.rows : tuples;

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = workers > 0;
	cpath->path.parallel_safe = rel->consider_parallel;
	cpath->path.parallel_workers = workers;
	cpath->path.rows = bitmap->path.rows;
	cpath->path.startup_cost = Max(bitmap->path.startup_cost - qualcost->startup, 0);
	cpath->path.total_cost = Max(bitmap->path.total_cost - qualcost->startup -
								 qualcost->per_tuple * per_process,
								 cpath->path.startup_cost);
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = NIL;
	cpath->custom_private = list_make3(makeInteger(index->indexoid), quals, index_rinfos);
	cpath->methods = &array_path_methods;
	return cpath;
}

/*
 * The bitmap heap path over ipath, priced as a bitmap that never goes
 * lossy: the node keeps every TID, where past work_mem a bitmap heap scan
 * would recheck every row of its lossy pages (and is priced so).
 */
static BitmapHeapPath *
exact_bitmap_path(PlannerInfo *root, RelOptInfo *rel, Path *ipath, int workers)
{
	int			save_work_mem = work_mem;
	BitmapHeapPath *path = NULL;

	work_mem = MAX_KILOBYTES;
	PG_TRY();
	{
		path = create_bitmap_heap_path(root, rel, ipath, NULL, 1.0, workers);
	}
	PG_FINALLY();
	{
		work_mem = save_work_mem;
	}
	PG_END_TRY();
	return path;
}

/*
 * set_rel_pathlist_hook: offer GbtreeArrayScan for a plain table with an
 * "= ANY" index qual on a key column of a gbtree index.
 */
static void
gbt_array_paths(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	ListCell   *lc;

	if (prev_rel_pathlist_hook)
		prev_rel_pathlist_hook(root, rel, rti, rte);

	/*
	 * An index scan that fetches as a bitmap heap scan does: turning
	 * either off keeps the core's plans.
	 */
	if (!gbt_enable_array_scan || !enable_indexscan || !enable_bitmapscan)
		return;
	if ((rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		rte->rtekind != RTE_RELATION || rte->inh || rte->tablesample ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
		rel->baserestrictinfo == NIL || rel->indexlist == NIL ||
		!bms_is_empty(rel->lateral_relids))
		return;
	/* row-level security quals keep their own order of evaluation */
	foreach(lc, rel->baserestrictinfo)
		if (lfirst_node(RestrictInfo, lc)->security_level > 0)
			return;

	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(lc);
		List	   *iclauses;
		List	   *quals;
		List	   *index_rinfos;
		bool		has_array = false;
		IndexPath  *ipath;
		BitmapHeapPath *bitmap;
		QualCost	qualcost;
		double		tuples;
		ListCell   *lc2;

		if (index->amcostestimate != (void (*) ()) gbtcostestimate ||
			!gbt_plain_key_columns(index) ||
			(index->indpred != NIL && !index->predOK))
			continue;
		/* every other restriction, x < ANY (...) on a multi-word index too, a filter */
		(void) gbt_key_quals(root, rel, index, false, &iclauses, &quals, &index_rinfos);
		foreach(lc2, quals)
			has_array |= IsA(lfirst(lc2), ScalarArrayOpExpr);
		if (!has_array)
			continue;

		ipath = create_index_path(root, index, iclauses, NIL, NIL, NIL,
								  ForwardScanDirection, false, NULL, 1.0, false);
		cost_qual_eval(&qualcost, index_rinfos, root);
		tuples = ipath->indexselectivity * rel->tuples;
		bitmap = exact_bitmap_path(root, rel, (Path *) ipath, 0);
		add_path(rel, (Path *) make_array_path(root, rel, bitmap, index, quals,
											   index_rinfos, &qualcost, tuples, 0));

		/* a partial path, with as many workers as the bitmap heap scan */
		if (rel->consider_parallel && max_parallel_workers_per_gather > 0)
		{
			double		pages = compute_bitmap_pages(root, rel, (Path *) ipath, 1,
													 NULL, NULL);
			int			workers = compute_parallel_worker(rel, pages, -1,
														  max_parallel_workers_per_gather);

			if (workers > 0)
			{
				bitmap = exact_bitmap_path(root, rel, (Path *) ipath, workers);
				add_partial_path(rel, (Path *) make_array_path(root, rel, bitmap, index, quals,
															   index_rinfos, &qualcost,
															   tuples, workers));
			}
		}
	}
}

static void
leader_consts_copy(ExtensibleNode *newnode, const ExtensibleNode *oldnode)
{
	GbtLeaderConsts *to = (GbtLeaderConsts *) newnode;
	const GbtLeaderConsts *from = (const GbtLeaderConsts *) oldnode;

	to->paramids = list_copy(from->paramids);
	to->consts = copyObject(from->consts);
}

static bool
leader_consts_equal(const ExtensibleNode *a, const ExtensibleNode *b)
{
	const GbtLeaderConsts *x = (const GbtLeaderConsts *) a;
	const GbtLeaderConsts *y = (const GbtLeaderConsts *) b;

	/* a copy read back from text, without its values, is not the original */
	return equal(x->paramids, y->paramids) && equal(x->consts, y->consts);
}

static void
leader_consts_out(StringInfo str, const ExtensibleNode *node)
{
	const GbtLeaderConsts *lc = (const GbtLeaderConsts *) node;

	appendStringInfoString(str, " :paramids ");
	outNode(str, lc->paramids);
}

static void
leader_consts_read(ExtensibleNode *node)
{
	GbtLeaderConsts *lc = (GbtLeaderConsts *) node;
	int			len;

	(void) pg_strtok(&len);		/* :paramids */
	lc->paramids = (List *) nodeRead(NULL, 0);
	lc->consts = NIL;
}

static const ExtensibleNodeMethods leader_consts_methods = {
	.extnodename = GBT_LEADER_CONSTS_NAME,
	.node_size = sizeof(GbtLeaderConsts),
	.nodeCopy = leader_consts_copy,
	.nodeEqual = leader_consts_equal,
	.nodeOut = leader_consts_out,
	.nodeRead = leader_consts_read,
};

/* custom_private's GbtLeaderConsts, if any */
static GbtLeaderConsts *
leader_consts_of(CustomScan *cscan)
{
	if (list_length(cscan->custom_private) < 2)
		return NULL;
	return (GbtLeaderConsts *) lsecond(cscan->custom_private);
}

typedef struct DetachConsts
{
	PlannerInfo *root;
	GbtLeaderConsts *lc;
} DetachConsts;

/* an "= ANY" qual's literal array becomes a new executor parameter */
static Node *
detach_consts(Node *node, DetachConsts *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, ScalarArrayOpExpr) && IsA(lsecond(((ScalarArrayOpExpr *) node)->args), Const))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) copyObject(node);
		Const	   *c = (Const *) lsecond(saop->args);
		Param	   *p;

		if (c->constisnull)
			return (Node *) saop;
		p = generate_new_exec_param(cxt->root, c->consttype, c->consttypmod,
									c->constcollid);
		p->location = c->location;

		/*
		 * No plan node sets it: the node itself does, in the leader, when it
		 * starts.  For the plan's parameter bookkeeping (SS_finalize_plan)
		 * it is therefore one supplied from outside the plan tree.
		 */
		cxt->root->outer_params = bms_add_member(cxt->root->outer_params, p->paramid);
		cxt->lc->paramids = lappend_int(cxt->lc->paramids, p->paramid);
		cxt->lc->consts = lappend(cxt->lc->consts, c);
		lsecond(saop->args) = p;
		return (Node *) saop;
	}
	return expression_tree_mutator(node, detach_consts, (void *) cxt);
}

/* EXPLAIN: the leader's Consts in place of their parameters */
static Node *
attach_consts(Node *node, GbtLeaderConsts *lc)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
	{
		ListCell   *id,
				   *c;

		forboth(id, lc->paramids, c, lc->consts)
		{
			if (lfirst_int(id) == ((Param *) node)->paramid)
				return (Node *) lfirst(c);
		}
	}
	return expression_tree_mutator(node, attach_consts, (void *) lc);
}

static Plan *
array_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
		   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Oid			indexoid = intVal(linitial(best_path->custom_private));
	List	   *quals = (List *) lsecond(best_path->custom_private);
	List	   *index_rinfos = (List *) lthird(best_path->custom_private);

	cscan->scan.plan.targetlist = tlist;
	/* the other restrictions are filters; the index's quals hold by lookup */
	cscan->scan.plan.qual = extract_actual_clauses(list_difference_ptr(clauses, index_rinfos),
												   false);
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = copyObject(quals);
	cscan->custom_private = list_make1(makeInteger(indexoid));
	if (best_path->path.parallel_aware)
	{
		DetachConsts cxt;

		cxt.root = root;
		cxt.lc = (GbtLeaderConsts *) newNode(sizeof(GbtLeaderConsts), T_ExtensibleNode);
		cxt.lc->node.extnodename = GBT_LEADER_CONSTS_NAME;
		cscan->custom_exprs = (List *) detach_consts((Node *) cscan->custom_exprs, &cxt);
		if (cxt.lc->paramids != NIL)
			cscan->custom_private = lappend(cscan->custom_private, cxt.lc);
	}
	cscan->custom_scan_tlist = NIL;
	cscan->methods = &array_scan_methods;
	return &cscan->scan.plan;
}

/* ------------------------------------------------------------------------
 * Execution
 * ------------------------------------------------------------------------
 */

static Node *
array_create_state(CustomScan *cscan)
{
	GbtArrayState *st = (GbtArrayState *) newNode(sizeof(GbtArrayState), T_CustomScanState);

	st->css.methods = &array_exec_methods;
	return (Node *) st;
}

typedef struct ToIndexColumn
{
	Index		scanrelid;
	Relation	index;
} ToIndexColumn;

/* the scan relation's key columns become index columns (INDEX_VAR) */
static Node *
to_index_column(Node *node, ToIndexColumn *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == cxt->scanrelid &&
		((Var *) node)->varlevelsup == 0)
	{
		int			nkeys = IndexRelationGetNumberOfKeyAttributes(cxt->index);

		for (int col = 0; col < nkeys; col++)
			if (((Var *) node)->varattno == cxt->index->rd_index->indkey.values[col])
			{
				Var		   *v = (Var *) copyObject(node);

				v->varno = INDEX_VAR;
				v->varattno = col + 1;
				return (Node *) v;
			}
	}
	return expression_tree_mutator(node, to_index_column, (void *) cxt);
}

static void
array_begin(CustomScanState *node, EState *estate, int eflags)
{
	GbtArrayState *st = (GbtArrayState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Index		scanrelid = cscan->scan.scanrelid;
	ToIndexColumn cxt;
	IndexArrayKeyInfo *arraykeys;
	int			narraykeys;

	st->heap = node->ss.ss_currentRelation;

	/*
	 * The rows come in the table's own slots, not the virtual one that
	 * ExecInitCustomScan made: build the scan slot, the filter and the
	 * projection again for that slot type.
	 */
	ExecInitScanTupleSlot(estate, &node->ss, RelationGetDescr(st->heap),
						  table_slot_callbacks(st->heap));
	node->ss.ps.qual = ExecInitQual(cscan->scan.plan.qual, &node->ss.ps);
	ExecAssignScanProjectionInfoWithVarno(&node->ss, scanrelid);
	st->indexqual = ExecInitQual(cscan->custom_exprs, &node->ss.ps);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	/* the leader holds the detached arrays; a worker never looks up */
	if (!IsParallelWorker() && leader_consts_of(cscan) != NULL)
	{
		GbtLeaderConsts *lc = leader_consts_of(cscan);
		ListCell   *id,
				   *c;

		forboth(id, lc->paramids, c, lc->consts)
		{
			ParamExecData *prm = &estate->es_param_exec_vals[lfirst_int(id)];

			prm->execPlan = NULL;
			prm->value = ((Const *) lfirst(c))->constvalue;
			prm->isnull = ((Const *) lfirst(c))->constisnull;
		}
	}

	st->index = index_open((Oid) intVal(linitial(cscan->custom_private)),
						   exec_rt_fetch(scanrelid, estate)->rellockmode);
	cxt.scanrelid = scanrelid;
	cxt.index = st->index;
	ExecIndexBuildScanKeys(&node->ss.ps, st->index,
						   (List *) to_index_column((Node *) cscan->custom_exprs, &cxt),
						   false, &st->keys, &st->nkeys, &st->rtkeys, &st->nrtkeys,
						   &arraykeys, &narraykeys);
	Assert(narraykeys == 0);	/* gbtree takes arrays itself */
	if (st->nrtkeys > 0)
		st->rtcxt = CreateExprContext(estate);
	st->cxt = AllocSetContextCreate(estate->es_query_cxt, "GbtreeArrayScan TIDs",
									ALLOCSET_DEFAULT_SIZES);
	st->last_block = InvalidBlockNumber;
	st->by_block = st->heap->rd_rel->relam == HEAP_TABLE_AM_OID;
	gbt_heap_block_init(&st->block, st->heap, st->index);
}

/* GbtTidSink: keep the chunk */
static void
array_tids(void *arg, uint64 *tids, int n, bool all_read)
{
	GbtArrayState *st = (GbtArrayState *) arg;

	if (st->ntids + n > st->maxtids)
	{
		int64		newmax = Max(st->maxtids * 2, st->ntids + n);

		st->tids = repalloc_huge(st->tids, sizeof(uint64) * newmax);
		st->maxtids = newmax;
	}
	memcpy(st->tids + st->ntids, tids, sizeof(uint64) * n);
	st->ntids += n;
}

/* look the keys up; the TIDs, sorted by heap block, go to st->tids */
static void
look_up(GbtArrayState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	IndexScanDesc scan;
	MemoryContext old;
	long		chunk;
	int64		entries;

	/* the TIDs outlive the index scan: safe only under MVCC (see header) */
	if (!IsMVCCSnapshot(estate->es_snapshot))
		elog(ERROR, "GbtreeArrayScan needs an MVCC snapshot");
	if (st->nrtkeys > 0)
	{
		ResetExprContext(st->rtcxt);
		ExecIndexEvalRuntimeKeys(st->rtcxt, st->rtkeys, st->nrtkeys);
	}
	MemoryContextReset(st->cxt);
	old = MemoryContextSwitchTo(st->cxt);
	st->maxtids = 1024;
	st->ntids = 0;
	st->tids = palloc(sizeof(uint64) * st->maxtids);
	scan = gbt_index_beginscan(st->heap, st->index, estate->es_snapshot, st->nkeys, 0);
	index_rescan(scan, st->keys, st->nkeys, NULL, 0);
	chunk = Min(Max((long) work_mem * 1024L / (long) sizeof(uint64), 65536L), 1L << 26);
	entries = gbt_scan_tids(scan, array_tids, st, (int) chunk);
	index_endscan(scan);
	st->entries += entries;
	pgstat_count_index_tuples(st->index, entries);
	/* heap block order */
	gbt_sort_tids(st->tids, (int) st->ntids);

	/*
	 * Distinct keys never share a heap TID, nor do two entries of one key:
	 * a TID found twice is a damaged index, which must not return its row
	 * twice.
	 */
	st->nblocks = st->ntids > 0 ? 1 : 0;
	for (int64 i = 1; i < st->ntids; i++)
	{
		if ((st->tids[i] >> 16) != (st->tids[i - 1] >> 16))
			st->nblocks++;
		else if (st->tids[i] == st->tids[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" returned heap TID (%u,%u) twice",
							RelationGetRelationName(st->index),
							(unsigned) (st->tids[i] >> 16),
							(unsigned) (st->tids[i] & 0xFFFF))));
	}
	MemoryContextSwitchTo(old);
}

/*
 * Parallel: the leader looks the keys up while it initializes the shared
 * state (ExecInitParallelPlan, or ExecParallelReinitialize on a rescan),
 * before the workers start, and leaves the TIDs in the query's shared
 * memory.  Doing it there, not in whichever participant comes first, also
 * serves a leader that does not take part in the scan
 * (parallel_leader_participation off).
 */
static void
publish_lookup(GbtArrayState *st)
{
	GbtArrayShared *sh = st->shared;
	dsa_pointer dp;

	look_up(st);
	dp = dsa_allocate_extended(st->dsa, sizeof(uint64) * Max(st->ntids, 1),
							   DSA_ALLOC_HUGE);
	memcpy(dsa_get_address(st->dsa, dp), st->tids, sizeof(uint64) * st->ntids);
	MemoryContextReset(st->cxt);
	st->tids = NULL;
	SpinLockAcquire(&sh->mutex);
	sh->tids = dp;
	sh->ntids = st->ntids;
	sh->nblocks = st->nblocks;
	sh->phase = ARRAY_SHARED_READY;
	SpinLockRelease(&sh->mutex);
	ConditionVariableBroadcast(&sh->cv);
}

/* every participant: the published TIDs */
static void
attach_lookup(GbtArrayState *st)
{
	GbtArrayShared *sh = st->shared;

	ConditionVariablePrepareToSleep(&sh->cv);
	for (;;)
	{
		ArraySharedPhase phase;

		SpinLockAcquire(&sh->mutex);
		phase = sh->phase;
		SpinLockRelease(&sh->mutex);
		if (phase == ARRAY_SHARED_READY)
			break;
		ConditionVariableSleep(&sh->cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	st->tids = (uint64 *) dsa_get_address(st->dsa, sh->tids);
	st->ntids = sh->ntids;
	st->nblocks = sh->nblocks;
	st->pos = st->end = 0;
}

/* the next run of TIDs to fetch into [*pos, *end); false when none is left */
static bool
claim_run(GbtArrayState *st, int64 *pos, int64 *end)
{
	uint64		start;

	if (st->shared == NULL)
		return false;			/* serial: the one run is [0, ntids) */
	start = pg_atomic_fetch_add_u64(&st->shared->next, ARRAY_CLAIM);
	if (start >= (uint64) st->ntids)
		return false;
	*pos = (int64) start;
	*end = Min(st->ntids, (int64) start + ARRAY_CLAIM);
	return true;
}

static bool
claim(GbtArrayState *st)
{
	return claim_run(st, &st->pos, &st->end);
}

#if PG_VERSION_NUM >= 170000
/* a block the stream reads, and the TIDs of it to resolve */
typedef struct ArrayStreamRun
{
	int64		start;
	int64		end;
} ArrayStreamRun;

static BlockNumber
array_stream_next(ReadStream *stream, void *arg, void *per_buffer_data)
{
	GbtArrayState *st = (GbtArrayState *) arg;
	ArrayStreamRun *run = (ArrayStreamRun *) per_buffer_data;
	BlockNumber blk;

	if (st->cb_pos >= st->cb_end && !claim_run(st, &st->cb_pos, &st->cb_end))
		return InvalidBlockNumber;
	blk = (BlockNumber) (st->tids[st->cb_pos] >> 16);
	run->start = st->cb_pos;
	while (st->cb_pos < st->cb_end && (BlockNumber) (st->tids[st->cb_pos] >> 16) == blk)
		st->cb_pos++;
	run->end = st->cb_pos;
	return blk;
}
#endif

/*
 * Read the block of the next TID and resolve all the run's TIDs on it:
 * each one's HOT chain is searched under the snapshot (with the predicate
 * lock an index scan takes) and the visible member's offset kept.  The
 * buffer stays pinned while its tuples are returned.
 */
static void
resolve_block(GbtArrayState *st, Buffer buf, Snapshot snapshot)
{
	BlockNumber blk = BufferGetBlockNumber(buf);

	st->heap_blocks++;
	gbt_heap_block_lock(&st->block, buf);
	st->visible_pos = 0;
	while (st->pos < st->end && (BlockNumber) (st->tids[st->pos] >> 16) == blk)
	{
		st->heap_fetches++;
		(void) gbt_heap_block_search(&st->block, (OffsetNumber) (st->tids[st->pos++] & 0xFFFF),
									 snapshot);
	}
	gbt_heap_block_unlock(&st->block);
}

#if PG_VERSION_NUM >= 170000
/* the stream's next block and its TIDs, resolved; false at the end */
static bool
stream_block(GbtArrayState *st, Snapshot snapshot)
{
	ArrayStreamRun *run;
	Buffer		buf;

	gbt_heap_block_release(&st->block);
	buf = read_stream_next_buffer(st->stream, (void **) &run);
	if (!BufferIsValid(buf))
		return false;
	st->pos = run->start;
	st->end = run->end;
	resolve_block(st, buf, snapshot);
	return true;
}
#else
/* the block of the next TID of the run, resolved */
static void
read_block(GbtArrayState *st, Snapshot snapshot)
{
	BlockNumber blk = (BlockNumber) (st->tids[st->pos] >> 16);

	gbt_heap_block_release(&st->block);
	resolve_block(st, ReadBufferExtended(st->heap, MAIN_FORKNUM, blk, RBM_NORMAL, st->strategy),
				  snapshot);
}
#endif

/* the next visible tuple of the current block into slot, or false */
static bool
next_in_block(GbtArrayState *st, TupleTableSlot *slot)
{
	if (st->visible_pos >= st->block.n)
		return false;
	gbt_heap_block_store(&st->block, st->visible_pos++, slot);
	return true;
}

static TupleTableSlot *
array_next(ScanState *node)
{
	GbtArrayState *st = (GbtArrayState *) node;
	TupleTableSlot *slot = node->ss_ScanTupleSlot;
	Snapshot	snapshot = node->ps.state->es_snapshot;

	if (!st->looked_up)
	{
		if (st->shared)
			attach_lookup(st);
		else
		{
			look_up(st);
			st->pos = 0;
			st->end = st->ntids;
		}
		st->looked_up = true;

		/*
		 * A lookup whose blocks outnumber shared_buffers could not stay
		 * cached anyway: it reads through a ring, as a large sequential
		 * scan does, so that it does not evict the buffer pool (and skips
		 * the pool's clock sweep: 10-15% faster at 45k blocks of a
		 * 10M-row table under 16k buffers).  Smaller ones go through the
		 * pool, where the next run of the same keys finds them.
		 */
		if (st->by_block && st->strategy == NULL && st->nblocks > NBuffers)
			st->strategy = GetAccessStrategy(BAS_BULKREAD);
#if PG_VERSION_NUM >= 170000
		if (st->by_block)
		{
			MemoryContext old = MemoryContextSwitchTo(node->ps.state->es_query_cxt);

			/* serial: the one run; parallel: the callback claims them */
			st->cb_pos = st->pos;
			st->cb_end = st->end;
			st->stream = read_stream_begin_relation(READ_STREAM_DEFAULT, st->strategy,
													st->heap, MAIN_FORKNUM,
													array_stream_next, st,
													sizeof(ArrayStreamRun));
			MemoryContextSwitchTo(old);
		}
#endif
	}
	if (st->by_block)
	{
		for (;;)
		{
			if (next_in_block(st, slot))
				return slot;
			CHECK_FOR_INTERRUPTS();
#if PG_VERSION_NUM >= 170000
			/* ended: a call after the end finds the end again */
			if (st->stream == NULL)
				return ExecClearTuple(slot);
			if (!stream_block(st, snapshot))
			{
				read_stream_end(st->stream);
				st->stream = NULL;
				return ExecClearTuple(slot);
			}
#else
			if (st->pos >= st->end && !claim(st))
			{
				gbt_heap_block_release(&st->block);
				return ExecClearTuple(slot);
			}
			read_block(st, snapshot);
#endif
		}
	}
	if (st->fetch == NULL)
		st->fetch = table_index_fetch_begin(st->heap);
	for (;;)
	{
		uint64		t;
		ItemPointerData tid;
		bool		call_again = false;
		bool		all_dead = false;

		if (st->pos >= st->end && !claim(st))
			return ExecClearTuple(slot);
		t = st->tids[st->pos++];
		if ((st->pos & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		ItemPointerSet(&tid, (BlockNumber) (t >> 16), (OffsetNumber) (t & 0xFFFF));
		st->heap_fetches++;
		if ((BlockNumber) (t >> 16) != st->last_block)
		{
			st->last_block = (BlockNumber) (t >> 16);
			st->heap_blocks++;
		}
		/* under MVCC a HOT chain has one visible member: no call_again */
		if (table_index_fetch_tuple(st->fetch, &tid, snapshot, slot,
									&call_again, &all_dead))
		{
			pgstat_count_heap_fetch(st->index);
			return slot;
		}
	}
}

/* EvalPlanQual: the index quals on the row it gives */
static bool
array_recheck(ScanState *node, TupleTableSlot *slot)
{
	GbtArrayState *st = (GbtArrayState *) node;
	ExprContext *econtext = node->ps.ps_ExprContext;

	econtext->ecxt_scantuple = slot;
	return ExecQualAndReset(st->indexqual, econtext);
}

static TupleTableSlot *
array_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, array_next, array_recheck);
}

static void
array_rescan(CustomScanState *node)
{
	GbtArrayState *st = (GbtArrayState *) node;

	/* the shared lookup is reset by array_reinit_dsm */
	if (st->shared == NULL && st->cxt)
		MemoryContextReset(st->cxt);
	st->tids = NULL;
	st->ntids = st->maxtids = 0;
	st->pos = st->end = 0;
	st->looked_up = false;
	st->last_block = InvalidBlockNumber;
	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	gbt_heap_block_release(&st->block);
	st->visible_pos = 0;
#if PG_VERSION_NUM >= 170000
	if (st->stream)
		read_stream_end(st->stream);
	st->stream = NULL;
#endif
	ExecScanReScan(&node->ss);
}

static void
array_end(CustomScanState *node)
{
	GbtArrayState *st = (GbtArrayState *) node;

	if (st->fetch)
		table_index_fetch_end(st->fetch);
#if PG_VERSION_NUM >= 170000
	if (st->stream)
		read_stream_end(st->stream);
#endif
	gbt_heap_block_release(&st->block);
	if (st->strategy)
		FreeAccessStrategy(st->strategy);
	if (st->index)
		index_close(st->index, NoLock);
}

static Size
array_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return sizeof(GbtArrayShared);
}

static void
array_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GbtArrayState *st = (GbtArrayState *) node;
	GbtArrayShared *sh = (GbtArrayShared *) coordinate;

	/* no shared area (no workers could be had): the scan runs alone */
	if (node->ss.ps.state->es_query_dsa == NULL)
		return;
	SpinLockInit(&sh->mutex);
	sh->phase = ARRAY_SHARED_NONE;
	ConditionVariableInit(&sh->cv);
	sh->tids = InvalidDsaPointer;
	sh->ntids = 0;
	pg_atomic_init_u64(&sh->next, 0);
	st->shared = sh;
	st->dsa = node->ss.ps.state->es_query_dsa;
	publish_lookup(st);
}

static void
array_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GbtArrayState *st = (GbtArrayState *) node;
	GbtArrayShared *sh = (GbtArrayShared *) coordinate;

	if (st->shared == NULL)
		return;
	/* the workers of the last scan are done: none uses the TIDs */
	if (DsaPointerIsValid(sh->tids))
		dsa_free(st->dsa, sh->tids);
	sh->tids = InvalidDsaPointer;
	sh->ntids = 0;
	sh->phase = ARRAY_SHARED_NONE;
	pg_atomic_write_u64(&sh->next, 0);
	publish_lookup(st);
}

static void
array_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GbtArrayState *st = (GbtArrayState *) node;

	st->shared = (GbtArrayShared *) coordinate;
	st->dsa = node->ss.ps.state->es_query_dsa;
	if (st->dsa == NULL)
		elog(ERROR, "GbtreeArrayScan found no shared memory area for its parallel lookup");
}

static void
array_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GbtArrayState *st = (GbtArrayState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	List	   *exprs;
	bool		useprefix;

	ExplainPropertyText("Index Name", get_rel_name((Oid) intVal(linitial(cscan->custom_private))), es);
	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	useprefix = es->verbose || list_length(es->rtable) > 1;
	exprs = cscan->custom_exprs;
	if (leader_consts_of(cscan) != NULL)
		exprs = (List *) attach_consts((Node *) exprs, leader_consts_of(cscan));
	ExplainPropertyText("Index Cond",
						deparse_expression((Node *) make_ands_explicit(exprs),
										   context, useprefix, false), es);
	if (es->analyze)
	{
		/* this process's share: a parallel lookup is done by one of them */
		ExplainPropertyInteger("Index Entries", NULL, st->entries, es);
		ExplainPropertyInteger("Heap Fetches", NULL, st->heap_fetches, es);
		ExplainPropertyInteger("Heap Blocks", NULL, st->heap_blocks, es);
	}
}

void
gbt_array_scan_init(void)
{
	DefineCustomBoolVariable("gbtree.enable_array_scan",
							 "Lets the planner fetch the rows of an = ANY lookup in heap block order.",
							 "A scan with \"column = ANY (array)\" on a gbtree index's column can run as a "
							 "Custom Scan (GbtreeArrayScan) that looks the keys up at once and fetches "
							 "the rows in heap block order.",
							 &gbt_enable_array_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	RegisterCustomScanMethods(&array_scan_methods);
	RegisterExtensibleNodeMethods(&leader_consts_methods);
	prev_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = gbt_array_paths;
}
