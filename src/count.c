/*-------------------------------------------------------------------------
 *
 * count.c
 *	  GbtreeCount: SELECT count(*) over a gbtree index scan, without
 *	  returning the rows.
 *
 * An index-only scan under an Aggregate returns every matching row to the
 * executor one at a time, and the executor probes the visibility map for
 * each one: for a million rows that costs far more than the GPU batch that
 * found them, and the probes jump between visibility-map pages because the
 * rows come in key order.  When a query block is only count(*) over one
 * table whose every restriction is an index qual of one gbtree index, the
 * planner is offered a Custom Scan (GbtreeCount) that does what the
 * index-only scan would, in bulk: it takes the matching TIDs from the
 * index in chunks sorted by heap block (gbt_scan_tids), counts a block's
 * TIDs at once when the visibility map says the block is all visible (with
 * the same page-level predicate lock), and fetches the heap tuples of the
 * other blocks to check them against the snapshot, as the index-only scan
 * does.  The answer is the same by construction; gbtree.enable_count_scan
 * turns the path off.
 *
 * The plan node's custom_scan_tlist is (count(*), the index's key
 * columns), so that setrefs turns the count(*) of the target list into a
 * reference to the node's output and each key column in the quals
 * (custom_exprs) into INDEX_VAR k + 1, which EXPLAIN prints as the column.
 * At execution the quals become ordinary index scan keys
 * (ExecIndexBuildScanKeys), parameters and all.  A multi-column or
 * multi-word index counts through gbt_wide_scan_tids, with any of its key
 * columns' conditions; not x < ANY (...) there, which such a scan may leave
 * to the heap's recheck.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "commands/explain.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/nodeIndexscan.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "gbtree.h"

#define GBT_COUNT_NAME	"GbtreeCount"

bool		gbt_enable_count_scan = true;

static create_upper_paths_hook_type prev_upper_paths_hook = NULL;

typedef struct GbtCountState
{
	CustomScanState css;
	Relation	heap;
	Relation	index;
	ScanKey		keys;
	int			nkeys;
	IndexRuntimeKeyInfo *rtkeys;
	int			nrtkeys;
	ExprContext *rtcxt;
	bool		done;

	/* during a count */
	Snapshot	snapshot;
	Buffer		vmbuf;
	IndexFetchTableData *fetch;
	TupleTableSlot *heapslot;
	int64		count;
	bool		serializable;
	char	   *vismap;			/* all-visible bit per heap block, or NULL */
	BlockNumber vismap_blocks;

	/* EXPLAIN ANALYZE, summed over rescans */
	int64		entries;
	int64		visible_blocks;
	bool		used_vismap;
	int64		heap_fetches;
} GbtCountState;

static Plan *count_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						List *tlist, List *clauses, List *custom_plans);
static Node *count_create_state(CustomScan *cscan);
static void count_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *count_exec(CustomScanState *node);
static void count_end(CustomScanState *node);
static void count_rescan(CustomScanState *node);
static void count_explain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods count_path_methods = {
	.CustomName = GBT_COUNT_NAME,
	.PlanCustomPath = count_plan,
};

static const CustomScanMethods count_scan_methods = {
	.CustomName = GBT_COUNT_NAME,
	.CreateCustomScanState = count_create_state,
};

static const CustomExecMethods count_exec_methods = {
	.CustomName = GBT_COUNT_NAME,
	.BeginCustomScan = count_begin,
	.ExecCustomScan = count_exec,
	.EndCustomScan = count_end,
	.ReScanCustomScan = count_rescan,
	.ExplainCustomScan = count_explain,
};

/* ------------------------------------------------------------------------
 * Planning
 * ------------------------------------------------------------------------
 */

/* Is node the index's column col (a Var of rel, maybe relabelled)? */
static bool
is_index_column(Node *node, RelOptInfo *rel, IndexOptInfo *index, int col)
{
	if (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node && IsA(node, Var) &&
		((Var *) node)->varno == rel->relid &&
		((Var *) node)->varattno == index->indexkeys[col] &&
		((Var *) node)->varlevelsup == 0;
}

/* a comparison value the scan can compute once at its start */
static bool
is_scan_constant(Node *node)
{
	return !contain_var_clause(node) && !contain_volatile_functions(node) &&
		!contain_subplans(node);
}

/*
 * The clause of rinfo as an index qual of index's key column col, the
 * column on the left; NULL when it is not one.
 */
Expr *
gbt_index_qual_for(RestrictInfo *rinfo, RelOptInfo *rel, IndexOptInfo *index, int col)
{
	Expr	   *clause = rinfo->clause;
	Oid			opfamily = index->opfamily[col];

	if (rinfo->pseudoconstant)
		return NULL;
	if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;
		Node	   *left = linitial(op->args);
		Node	   *right = lsecond(op->args);

		if (op->inputcollid != index->indexcollations[col] &&
			OidIsValid(index->indexcollations[col]))
			return NULL;
		if (is_index_column(left, rel, index, col) && is_scan_constant(right) &&
			op_in_opfamily(op->opno, opfamily))
			return clause;
		if (is_index_column(right, rel, index, col) && is_scan_constant(left))
		{
			Oid			comm = get_commutator(op->opno);
			OpExpr	   *c;

			if (!OidIsValid(comm) || !op_in_opfamily(comm, opfamily))
				return NULL;
			c = (OpExpr *) make_opclause(comm, op->opresulttype, op->opretset,
										 (Expr *) copyObject(right),
										 (Expr *) copyObject(left),
										 op->opcollid, op->inputcollid);
			set_opfuncid(c);
			return (Expr *) c;
		}
		return NULL;
	}
	if (IsA(clause, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) clause;

		if (saop->useOr &&
			is_index_column(linitial(saop->args), rel, index, col) &&
			is_scan_constant(lsecond(saop->args)) &&
			op_in_opfamily(saop->opno, opfamily))
			return clause;
		return NULL;
	}
	if (IsA(clause, NullTest))
	{
		NullTest   *nt = (NullTest *) clause;

		if (!nt->argisrow && is_index_column((Node *) nt->arg, rel, index, col))
			return clause;
	}
	return NULL;
}

/* rinfo as an exact qual of index column col + 1, qual its column-left form */
IndexClause *
gbt_index_clause(PlannerInfo *root, RestrictInfo *rinfo, Expr *qual, int col)
{
	IndexClause *ic = makeNode(IndexClause);

	ic->rinfo = rinfo;
	ic->indexquals = list_make1(qual == rinfo->clause ? rinfo :
								make_simple_restrictinfo(root, qual));
	ic->lossy = false;
	ic->indexcol = col;
	ic->indexcols = NIL;
	return ic;
}

/*
 * Does node hold anything but plain count(*) aggregates (and constants or
 * parameters around them)?  The first count(*) goes to *first.
 */
static bool
not_count_star(Node *node, Aggref **first)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *agg = (Aggref *) node;

		if (agg->aggfnoid != F_COUNT_ || !agg->aggstar || agg->aggfilter ||
			agg->aggdistinct || agg->aggorder || agg->agglevelsup != 0)
			return true;
		if (*first == NULL)
			*first = agg;
		return false;
	}
	if (IsA(node, Var) || IsA(node, GroupingFunc) || IsA(node, WindowFunc) ||
		IsA(node, SubPlan) || IsA(node, SubLink))
		return true;
	return expression_tree_walker(node, not_count_star, (void *) first);
}

/*
 * The restrictions of rel that are quals of index's key columns: as index
 * clauses (*iclauses), their column-left forms (*quals), both in index
 * column order (btree's cost estimate, which gbtcostestimate uses, stops
 * at the first clause out of order; EXPLAIN prints them so), and the
 * restrictions they came from (*rinfos, when wanted).  On an index of
 * several columns or of multi-word keys x < ANY (...) is none: such a scan
 * may leave it to the heap's recheck (wide_scankey.c), which neither the
 * count nor the array scan does.  every: false as soon as one restriction
 * is not such a qual.
 */
bool
gbt_key_quals(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index, bool every,
			  List **iclauses, List **quals, List **rinfos)
{
	List	   *col_iclauses[INDEX_MAX_KEYS] = {NIL};
	List	   *col_quals[INDEX_MAX_KEYS] = {NIL};
	bool		one_word = index->ncolumns == 1 &&
		gbt_type_supported(index->opcintype[0]);
	ListCell   *lc;

	*iclauses = *quals = NIL;
	if (rinfos)
		*rinfos = NIL;
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Expr	   *qual = NULL;
		int			col = 0;

		for (; rinfo->security_level == 0 && col < index->nkeycolumns; col++)
			if ((qual = gbt_index_qual_for(rinfo, rel, index, col)) != NULL)
				break;
		if (qual != NULL && !one_word && IsA(qual, ScalarArrayOpExpr) &&
			get_op_opfamily_strategy(((ScalarArrayOpExpr *) qual)->opno,
									 index->opfamily[col]) != BTEqualStrategyNumber)
			qual = NULL;
		if (qual == NULL)
		{
			if (every)
				return false;
			continue;
		}
		col_iclauses[col] = lappend(col_iclauses[col], gbt_index_clause(root, rinfo, qual, col));
		col_quals[col] = lappend(col_quals[col], qual);
		if (rinfos)
			*rinfos = lappend(*rinfos, rinfo);
	}
	for (int col = 0; col < index->nkeycolumns; col++)
	{
		*iclauses = list_concat(*iclauses, col_iclauses[col]);
		*quals = list_concat(*quals, col_quals[col]);
	}
	return true;
}

/*
 * A GbtreeCount path over index, or NULL when some restriction of rel is
 * not an index qual of it.
 */
static CustomPath *
count_path(PlannerInfo *root, RelOptInfo *rel, RelOptInfo *grouped_rel,
		   RangeTblEntry *rte, IndexOptInfo *index, Aggref *countref)
{
	List	   *iclauses;
	List	   *quals;
	List	   *columns = NIL;
	IndexPath  *ipath;
	Cost		counted_cost;
	CustomPath *cpath;

	if (!gbt_key_quals(root, rel, index, true, &iclauses, &quals, NULL))
		return NULL;

	/*
	 * Costed as the index-only scan it replaces, less returning the rows
	 * it only counts: a block the visibility map calls all visible counts
	 * its TIDs at once, where the scan returns each row (cpu_tuple_cost)
	 * to an Aggregate (cpu_operator_cost more, which this path does not
	 * pay either).  Rows of the other blocks are fetched and checked, as
	 * the scan does.
	 */
	ipath = create_index_path(root, index, iclauses, NIL, NIL, NIL,
							  ForwardScanDirection, true, NULL, 1.0, false);
	counted_cost = ipath->path.total_cost -
		cpu_tuple_cost * ipath->path.rows * rel->allvisfrac;
	/* the key columns, which the quals' Vars become (count_plan) */
	for (int col = 0; col < index->nkeycolumns; col++)
	{
		Oid			typid;
		int32		typmod;
		Oid			collid;

		get_atttypetypmodcoll(rte->relid, index->indexkeys[col], &typid, &typmod, &collid);
		columns = lappend(columns, makeVar(rel->relid, index->indexkeys[col], typid, typmod,
										   collid, 0));
	}

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = grouped_rel;
	cpath->path.pathtarget = grouped_rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;

	/*
	 * Safe to run whole in a parallel worker, as an index-only scan is
	 * (the library and its scan methods are loaded there too).  It
	 * matters beyond force_parallel_mode (16+: debug_parallel_query): add_path keeps the
	 * parallel-safe one of two paths within 1% of each other's cost, and
	 * with many array keys the index pages, which both pay alike, are most
	 * of the cost.  Under the default max_parallel_workers_per_gather the
	 * Aggregate over an index-only scan won that tie, and took 10x longer.
	 */
	cpath->path.parallel_safe = rel->consider_parallel && grouped_rel->consider_parallel;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = 1;
	cpath->path.startup_cost = counted_cost;
	cpath->path.total_cost = counted_cost;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = NIL;
	cpath->custom_private = list_make4(makeInteger(index->indexoid),
									   quals, countref, columns);
	cpath->methods = &count_path_methods;
	return cpath;
}

/*
 * Are the index's key columns table columns, each once?  The quals' Vars
 * become references to them (count_plan, arrayscan.c), one index column
 * each.
 */
bool
gbt_plain_key_columns(IndexOptInfo *index)
{
	for (int col = 0; col < index->nkeycolumns; col++)
	{
		if (index->indexkeys[col] == 0)
			return false;
		for (int other = 0; other < col; other++)
			if (index->indexkeys[other] == index->indexkeys[col])
				return false;
	}
	return true;
}

static void
gbt_upper_paths(PlannerInfo *root, UpperRelationKind stage,
				RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	RangeTblEntry *rte;
	Aggref	   *countref = NULL;
	CustomPath *best = NULL;
	ListCell   *lc;

	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);

	/* it is an index-only scan in substance */
	if (stage != UPPERREL_GROUP_AGG || !gbt_enable_count_scan || !enable_indexonlyscan)
		return;
	/* one count(*) row of one table */
	if (parse->commandType != CMD_SELECT || !parse->hasAggs ||
		parse->groupClause || parse->groupingSets || parse->havingQual ||
		parse->hasTargetSRFs || parse->hasWindowFuncs || parse->rowMarks ||
		input_rel->reloptkind != RELOPT_BASEREL || input_rel->rtekind != RTE_RELATION ||
		input_rel->baserestrictinfo == NIL || input_rel->indexlist == NIL)
		return;
	rte = planner_rt_fetch(input_rel->relid, root);
	/* no row-level security: its quals keep their own order of evaluation */
	if (rte->inh || rte->tablesample || rte->securityQuals ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
		return;
	if (not_count_star((Node *) output_rel->reltarget->exprs, &countref) ||
		countref == NULL)
		return;

	foreach(lc, input_rel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(lc);
		CustomPath *cpath;

		if (index->amcostestimate != (void (*) ()) gbtcostestimate ||
			index->indpred != NIL || !gbt_plain_key_columns(index))
			continue;
		cpath = count_path(root, input_rel, output_rel, rte, index, countref);
		if (cpath && (best == NULL || cpath->path.total_cost < best->path.total_cost))
			best = cpath;
	}
	if (best)
		add_path(output_rel, (Path *) best);
}

static Plan *
count_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
		   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Oid			indexoid = intVal(linitial(best_path->custom_private));
	List	   *quals = (List *) lsecond(best_path->custom_private);
	Aggref	   *countref = (Aggref *) lthird(best_path->custom_private);
	List	   *columns = (List *) lfourth(best_path->custom_private);
	ListCell   *lc;

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = copyObject(quals);
	cscan->custom_private = list_make1_oid(indexoid);
	cscan->custom_scan_tlist =
		list_make1(makeTargetEntry((Expr *) copyObject(countref), 1, "count", false));
	foreach(lc, columns)
		cscan->custom_scan_tlist =
			lappend(cscan->custom_scan_tlist,
					makeTargetEntry((Expr *) copyObject(lfirst(lc)),
									list_length(cscan->custom_scan_tlist) + 1, NULL, true));
	cscan->methods = &count_scan_methods;
	return &cscan->scan.plan;
}

/* ------------------------------------------------------------------------
 * Execution
 * ------------------------------------------------------------------------
 */

static Node *
count_create_state(CustomScan *cscan)
{
	GbtCountState *st = (GbtCountState *) newNode(sizeof(GbtCountState), T_CustomScanState);

	st->css.methods = &count_exec_methods;
	return (Node *) st;
}

/* INDEX_VAR k + 1 (the node's entry for key column k) becomes index column k */
static Node *
to_index_column(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == INDEX_VAR)
	{
		Var		   *v = (Var *) copyObject(node);

		v->varattno -= 1;
		return (Node *) v;
	}
	return expression_tree_mutator(node, to_index_column, context);
}

static void
count_begin(CustomScanState *node, EState *estate, int eflags)
{
	GbtCountState *st = (GbtCountState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	/* the column entry's Var, range table offset applied by setrefs */
	Index		rti = castNode(Var, lsecond_node(TargetEntry, cscan->custom_scan_tlist)->expr)->varno;
	IndexArrayKeyInfo *arraykeys;
	int			narraykeys;

	st->heap = ExecOpenScanRelation(estate, rti, eflags);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	st->index = index_open(linitial_oid(cscan->custom_private),
						   exec_rt_fetch(rti, estate)->rellockmode);
	ExecIndexBuildScanKeys(&node->ss.ps, st->index,
						   (List *) to_index_column((Node *) cscan->custom_exprs, NULL),
						   false, &st->keys, &st->nkeys, &st->rtkeys, &st->nrtkeys,
						   &arraykeys, &narraykeys);
	Assert(narraykeys == 0);	/* gbtree takes arrays itself */
	if (st->nrtkeys > 0)
		st->rtcxt = CreateExprContext(estate);
	st->vmbuf = InvalidBuffer;
}

/* Fetch the heap tuples of TIDs (sorted) and count those the snapshot sees. */
static void
count_fetched(GbtCountState *st, const uint64 *tids, int n)
{
	if (n > 0 && st->fetch == NULL)
	{
		st->fetch = table_index_fetch_begin(st->heap);
		st->heapslot = table_slot_create(st->heap, NULL);
	}
	for (int k = 0; k < n; k++)
	{
		ItemPointerData tid;
		bool		call_again = false;
		bool		all_dead = false;

		ItemPointerSet(&tid, (BlockNumber) (tids[k] >> 16), (OffsetNumber) (tids[k] & 0xFFFF));
		do
		{
			st->heap_fetches++;
			if (table_index_fetch_tuple(st->fetch, &tid, st->snapshot,
										st->heapslot, &call_again, &all_dead))
			{
				st->count++;
				pgstat_count_heap_fetch(st->index);
			}
		} while (call_again);
		if ((k & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Every heap block's all-visible bit, read in block order: for a large
 * batch, cheaper than sorting its TIDs to visit the visibility map once
 * per block (probing it in TID order jumps between its pages).
 */
static void
build_vismap(GbtCountState *st)
{
	st->vismap_blocks = RelationGetNumberOfBlocks(st->heap);
	st->vismap = palloc_extended(Max(st->vismap_blocks, 1), MCXT_ALLOC_HUGE);
	for (BlockNumber blk = 0; blk < st->vismap_blocks; blk++)
	{
		st->vismap[blk] = VM_ALL_VISIBLE(st->heap, blk, &st->vmbuf) ? 1 : 0;
		if ((blk & 65535) == 65535)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * A chunk of at most COUNT_SMALL_CHUNK TIDs (a count over a few hundred
 * rows): each TID's block looked up in a small hash set of the blocks seen
 * (the visibility map read once a block, the page's predicate lock taken
 * once), with no sort but of the TIDs to fetch.  Sorting them all was a
 * tenth of such a query.
 */
#define COUNT_SMALL_CHUNK	4096

static void
count_small_chunk(GbtCountState *st, uint64 *tids, int n)
{
	BlockNumber blocks[2 * COUNT_SMALL_CHUNK];
	bool		visible[2 * COUNT_SMALL_CHUNK];
	uint32		mask = pg_nextpower2_32(Max(2 * n, 16)) - 1;	/* at most half full */
	int			nfetch = 0;

	Assert(n <= COUNT_SMALL_CHUNK);
	memset(blocks, 0xFF, sizeof(BlockNumber) * (mask + 1));	/* InvalidBlockNumber: empty */
	for (int i = 0; i < n; i++)
	{
		BlockNumber blk = (BlockNumber) (tids[i] >> 16);
		uint32		h = murmurhash32(blk) & mask;

		while (blocks[h] != blk && blocks[h] != InvalidBlockNumber)
			h = (h + 1) & mask;
		if (blocks[h] == InvalidBlockNumber)
		{
			blocks[h] = blk;
			visible[h] = VM_ALL_VISIBLE(st->heap, blk, &st->vmbuf);
			if (visible[h])
			{
				st->visible_blocks++;
				PredicateLockPage(st->heap, blk, st->snapshot);
			}
		}
		if (visible[h])
			st->count++;
		else
			tids[nfetch++] = tids[i];
	}
	gbt_sort_tids(tids, nfetch);
	count_fetched(st, tids, nfetch);
}

/*
 * GbtTidSink: count a chunk of TIDs as an index-only scan would, after the
 * index gave them.  A TID on a block the visibility map calls all visible
 * counts without a heap visit (with the page's predicate lock, as the
 * index-only scan takes); the others are fetched and checked against the
 * snapshot.  The map is read per block of the sorted chunk, or, when the
 * whole batch was read from the index already and is large for the table,
 * once for the whole table (build_vismap).
 */
static void
count_tids(void *arg, uint64 *tids, int n, bool all_read)
{
	GbtCountState *st = (GbtCountState *) arg;
	int			nfetch = 0;

	if (st->vismap == NULL && all_read &&
		(int64) n >= (int64) RelationGetNumberOfBlocks(st->heap) / 4)
		build_vismap(st);
	if (st->vismap != NULL)
	{
		BlockNumber last = InvalidBlockNumber;

		/* the TIDs to fetch go to the front of tids */
		for (int i = 0; i < n; i++)
		{
			BlockNumber blk = (BlockNumber) (tids[i] >> 16);

			if (blk < st->vismap_blocks && st->vismap[blk])
			{
				st->count++;
				if (st->serializable && blk != last)
					PredicateLockPage(st->heap, blk, st->snapshot);
				last = blk;
			}
			else
				tids[nfetch++] = tids[i];
		}
		gbt_sort_tids(tids, nfetch);
		count_fetched(st, tids, nfetch);
		return;
	}

	if (n <= COUNT_SMALL_CHUNK)
	{
		count_small_chunk(st, tids, n);
		return;
	}
	gbt_sort_tids(tids, n);
	for (int i = 0; i < n;)
	{
		BlockNumber blk = (BlockNumber) (tids[i] >> 16);
		int			j = i + 1;

		while (j < n && (BlockNumber) (tids[j] >> 16) == blk)
			j++;
		if (VM_ALL_VISIBLE(st->heap, blk, &st->vmbuf))
		{
			st->count += j - i;
			st->visible_blocks++;
			PredicateLockPage(st->heap, blk, st->snapshot);
		}
		else
			count_fetched(st, tids + i, j - i);
		i = j;
	}
}

static int64
run_count(GbtCountState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	IndexScanDesc scan;
	long		chunk;
	int64		entries;

	if (st->nrtkeys > 0)
	{
		ResetExprContext(st->rtcxt);
		ExecIndexEvalRuntimeKeys(st->rtcxt, st->rtkeys, st->nrtkeys);
	}
	st->snapshot = estate->es_snapshot;
	st->serializable = IsolationIsSerializable();
	st->count = 0;
	scan = gbt_index_beginscan(st->heap, st->index, st->snapshot, st->nkeys, 0);
	index_rescan(scan, st->keys, st->nkeys, NULL, 0);
	/* sort chunks of up to work_mem, at least 64k TIDs */
	chunk = Min(Max((long) work_mem * 1024L / (long) sizeof(uint64), 65536L), 1L << 26);
	entries = gbt_scan_tids(scan, count_tids, st, (int) chunk);
	st->entries += entries;
	pgstat_count_index_tuples(st->index, entries);
	index_endscan(scan);
	if (st->fetch)
	{
		table_index_fetch_end(st->fetch);
		ExecDropSingleTupleTableSlot(st->heapslot);
		st->fetch = NULL;
		st->heapslot = NULL;
	}
	if (BufferIsValid(st->vmbuf))
		ReleaseBuffer(st->vmbuf);
	st->vmbuf = InvalidBuffer;
	if (st->vismap)
	{
		/* all-visible blocks counted through the map */
		pfree(st->vismap);
		st->vismap = NULL;
		st->used_vismap = true;
	}
	return st->count;
}

/*
 * The node's one row: the count, computed on the first call after a
 * (re)scan, then nothing.
 */
static bool
count_fill(GbtCountState *st, TupleTableSlot *slot)
{
	ExecClearTuple(slot);
	if (st->done)
		return false;
	st->done = true;
	slot->tts_values[0] = Int64GetDatum(run_count(st));
	slot->tts_isnull[0] = false;
	for (int i = 1; i < slot->tts_tupleDescriptor->natts; i++)
	{
		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
	}
	ExecStoreVirtualTuple(slot);
	return true;
}

static TupleTableSlot *
count_next(ScanState *node)
{
	count_fill((GbtCountState *) node, node->ss_ScanTupleSlot);
	return node->ss_ScanTupleSlot;
}

/*
 * Inside an EvalPlanQual recheck (a correlated count under an UPDATE that
 * waited for a concurrent one), minor releases before the fix that runs
 * only the recheck plan's own descendants this way drive a scan with no
 * relation of its own (scanrelid 0) through this method instead of
 * count_next: it must count too, as the index-only scan it replaces
 * would.
 */
static bool
count_recheck(ScanState *node, TupleTableSlot *slot)
{
	return count_fill((GbtCountState *) node, slot);
}

static TupleTableSlot *
count_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, count_next, count_recheck);
}

static void
count_rescan(CustomScanState *node)
{
	GbtCountState *st = (GbtCountState *) node;

	st->done = false;
	ExecScanReScan(&node->ss);
}

static void
count_end(CustomScanState *node)
{
	GbtCountState *st = (GbtCountState *) node;

	if (st->index)
		index_close(st->index, NoLock);
}

static void
count_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GbtCountState *st = (GbtCountState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	char	   *quals;

	ExplainPropertyText("Index Name", get_rel_name(linitial_oid(cscan->custom_private)), es);
	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	quals = deparse_expression((Node *) make_ands_explicit(cscan->custom_exprs),
							   context, es->verbose, false);
	ExplainPropertyText("Index Cond", quals, es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Index Entries", NULL, st->entries, es);
		if (st->used_vismap)
			ExplainPropertyText("Visibility Map", "read whole", es);
		else
			ExplainPropertyInteger("All-Visible Heap Blocks", NULL, st->visible_blocks, es);
		ExplainPropertyInteger("Heap Fetches", NULL, st->heap_fetches, es);
	}
}

void
gbt_count_init(void)
{
	DefineCustomBoolVariable("gbtree.enable_count_scan",
							 "Lets the planner count the rows of a gbtree index scan without returning them.",
							 "count(*) over one table whose restrictions are all quals of one gbtree index "
							 "runs as a Custom Scan (GbtreeCount).",
							 &gbt_enable_count_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	RegisterCustomScanMethods(&count_scan_methods);
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = gbt_upper_paths;
}
