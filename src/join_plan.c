/*-------------------------------------------------------------------------
 *
 * join_plan.c
 *	  GbtreeJoin's planning: the set_join_pathlist_hook that offers the
 *	  batched index nested-loop join, its costs and its plan node.  The
 *	  executor, and the design, are in join.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/selfuncs.h"
#include "utils/snapmgr.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_wide.h"
#include "heapblock.h"

#include "join.h"

static set_join_pathlist_hook_type prev_join_pathlist_hook = NULL;

static Plan *join_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					   List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods join_path_methods = {
	.CustomName = GBT_JOIN_NAME,
	.PlanCustomPath = join_plan,
};

/* ------------------------------------------------------------------------
 * Planning
 * ------------------------------------------------------------------------
 */

/* what the path carries to join_plan */
typedef struct GbtJoinChoice
{
	IndexOptInfo *index;
	Var		   *inner_key;		/* the index column */
	Expr	   *outer_key;		/* the other side of the clause */
	Oid			opno;
	Expr	   *keyclause;
	List	   *matchquals;		/* bare clauses, keyclause first */
	List	   *otherquals;
	List	   *inner_vars;
} GbtJoinChoice;

/*
 * Could EvalPlanQual reach a plan of this query level?  Only ModifyTable
 * and LockRows recheck, over their own query level and the subqueries
 * below it.
 */
static bool
epq_possible(PlannerInfo *root)
{
	for (PlannerInfo *r = root; r != NULL; r = r->parent_root)
	{
		if (r->parse->commandType != CMD_SELECT || r->parse->rowMarks != NIL)
			return true;
	}
	return false;
}

static Node *
strip_relabel(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node;
}

/*
 * The outer side of rinfo if it is "index column = outer expression" (either
 * way round) with an equality operator of the index's family, else NULL.
 */
static Expr *
outer_key_of(PlannerInfo *root, RestrictInfo *rinfo, RelOptInfo *outerrel, RelOptInfo *innerrel,
			 IndexOptInfo *index, Oid *opno)
{
	OpExpr	   *op;
	Node	   *sides[2];
	int			strategy;
	Oid			lefttype;
	Oid			righttype;

	if (rinfo->pseudoconstant || !IsA(rinfo->clause, OpExpr))
		return NULL;
	op = (OpExpr *) rinfo->clause;
	if (list_length(op->args) != 2 || op->opretset)
		return NULL;
	if (!op_in_opfamily(op->opno, index->opfamily[0]))
		return NULL;
	get_op_opfamily_properties(op->opno, index->opfamily[0], false,
							   &strategy, &lefttype, &righttype);
	if (strategy != BTEqualStrategyNumber)
		return NULL;
	/* a text key is ordered and compared under the index's collation only */
	if (op->inputcollid != index->indexcollations[0])
		return NULL;
	sides[0] = linitial(op->args);
	sides[1] = lsecond(op->args);
	for (int i = 0; i < 2; i++)
	{
		Node	   *col = strip_relabel(sides[i]);
		Node	   *other = sides[1 - i];
		Relids		other_relids;

		if (!col || !IsA(col, Var) || ((Var *) col)->varno != innerrel->relid ||
			((Var *) col)->varattno != index->indexkeys[0] ||
			((Var *) col)->varlevelsup != 0)
			continue;
		other_relids = pull_varnos(root, other);
		if (bms_is_empty(other_relids) || !bms_is_subset(other_relids, outerrel->relids) ||
			contain_volatile_functions(other) || contain_subplans(other) ||
			!gbt_join_key_type(exprType(other)) ||
			exprType(other) != (i == 0 ? righttype : lefttype))
			continue;
		*opno = op->opno;
		return (Expr *) other;
	}
	return NULL;
}

/*
 * The inner relation's columns that node needs, added to *vars; false if it
 * needs one the node cannot give (system columns, whole rows, placeholders).
 */
static bool
collect_inner_vars(Node *node, Index relid, Relids outer_relids, List **vars)
{
	List	   *all = pull_var_clause(node, PVC_INCLUDE_PLACEHOLDERS |
									  PVC_RECURSE_AGGREGATES |
									  PVC_RECURSE_WINDOWFUNCS);
	ListCell   *lc;

	foreach(lc, all)
	{
		Var		   *v = (Var *) lfirst(lc);

		if (!IsA(v, Var))
			return false;
		if (v->varno == relid)
		{
			if (v->varattno <= 0)
				return false;
			*vars = list_append_unique(*vars, v);
		}
		else if (!bms_is_member(v->varno, outer_relids))
			return false;
	}
	return true;
}

/*
 * Cost of joining outer_rows outer rows of which about fetched inner rows
 * match, in batches.  Calibrated against make bench's join measures on
 * one machine, the CPU path: copying an outer row and computing its key,
 * sorting a batch (a radix sort, a quarter of a comparison per level), a
 * lookup per distinct key in ascending order (two comparisons; the leaves,
 * visited in order and once per batch, at half a sequential page each;
 * none when the GPU answers), an entry per match, the inner rows fetched
 * in heap block order as a bitmap heap scan fetches them (only those on
 * blocks not all visible when the join needs just the key), each pair's
 * quals, and each row returned.
 */
static void
cost_join(PlannerInfo *root, CustomPath *cpath, Path *outer, RelOptInfo *innerrel,
		  IndexOptInfo *index, double outer_rows, double fetched, List *quals,
		  double rows, bool key_only, JoinType jointype)
{
	/* with only the key needed, all-visible blocks are not read */
	double		heap_fraction = key_only ? 1.0 - innerrel->allvisfrac : 1.0;
	double		batch_rows = Max(1.0, Min(outer_rows, (double) gbt_join_batch_size));
	double		nbatches = ceil(outer_rows / batch_rows);
	double		fetched_per_batch = fetched / nbatches;
	double		pages;
	double		pages_all;
	double		cost_per_page;
	double		T = Max(innerrel->pages, 1);
	QualCost	qcost;
	Cost		run;

	cost_qual_eval(&qcost, quals, root);

	/*
	 * Inner, semi and anti joins whose one qual is the key clause pair on
	 * equal normalized keys without evaluating it.
	 */
	if (list_length(quals) == 1 && jointype != JOIN_LEFT)
		qcost.per_tuple = 0;
	/* the batch's keys: normalized, then radix-sorted (linear) */
	run = outer_rows * cpu_operator_cost * 3.0;
	run += outer_rows * cpu_operator_cost * 2.0;

	/*
	 * A uuid key is encoded and sorted as two words, its value copied into
	 * the lookup array and sorted again by the scan: measured against a
	 * hash join over a 200k-row table (1k-100k probe keys), the two meet
	 * near 30k outer rows, where this makes their costs meet too.
	 */
	if (index->opcintype[0] == UUIDOID || index->ncolumns > 1)
		run += outer_rows * cpu_operator_cost * 35.0;

	/*
	 * A text key costs more again: its words are cut from the value (or
	 * from its sort key, under ICU, computed once here and once by the
	 * scan), and an inner row is compared with its outer value by bytes.
	 * Against a hash join over a 200k-row table of 22-byte keys under "C"
	 * (1k-100k probe keys) the two meet near 12k outer rows, in time, and
	 * in cost with this; ICU's sort keys (about a microsecond each) are
	 * priced as some 100 operators more.
	 */
	else if (index->opcintype[0] == TEXTOID)
		run += outer_rows * cpu_operator_cost *
			(gbt_collation_orders_by_bytes(index->indexcollations[0]) ? 80.0 : 200.0);
	run += fetched * cpu_index_tuple_cost;
	if (!(batch_rows >= gbt_gpu_min_batch && gbt_gpu_wanted((Size) batch_rows)))
		run += nbatches * Min((double) index->pages, batch_rows) * seq_page_cost / 2.0;
	pages = index_pages_fetched(fetched_per_batch, innerrel->pages, (double) index->pages, root);
	pages = Min(pages, T);
	if (pages >= 2.0)
		cost_per_page = random_page_cost - (random_page_cost - seq_page_cost) * sqrt(pages / T);
	else
		cost_per_page = random_page_cost;

	/*
	 * The batches read their blocks in order, each at the price its own
	 * density gives; how many reads the batches make together is what the
	 * cache leaves over (index_pages_fetched over all the fetches, as a
	 * repeated index scan is priced).  Each batch still visits its blocks
	 * in the buffer pool.
	 */
	pages_all = Max(Min(index_pages_fetched(fetched, innerrel->pages, (double) index->pages, root),
						nbatches * pages), pages);
	run += pages_all * cost_per_page * heap_fraction;
	run += nbatches * pages * cpu_tuple_cost * heap_fraction;
	run += fetched * (cpu_tuple_cost * heap_fraction + qcost.per_tuple);
	run += rows * cpu_tuple_cost;

	cpath->path.rows = rows;
	cpath->path.startup_cost = outer->startup_cost + qcost.startup +
		(outer->total_cost - outer->startup_cost + run) / nbatches;
	cpath->path.total_cost = outer->total_cost + qcost.startup + run;
}

static CustomPath *
make_join_path(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *innerrel,
			   Path *outer, JoinType jointype, GbtJoinChoice *choice,
			   double outer_rows, double rows, double tuples_per_key)
{
	CustomPath *cpath = makeNode(CustomPath);
	double		fetched = outer_rows * tuples_per_key;

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = joinrel->consider_parallel && outer->parallel_safe;
	cpath->path.parallel_workers = outer->parallel_workers;
	cpath->path.pathkeys = NIL;
	/* ExecScan projects; without the flag a Result node would */
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = list_make1(outer);
	cpath->custom_private = list_make4(makeInteger(choice->index->indexoid),
									   makeInteger(jointype),
									   list_make3(choice->inner_key, choice->outer_key,
												  makeInteger(choice->opno)),
									   list_make3(choice->matchquals, choice->otherquals,
												  choice->inner_vars));
	cpath->methods = &join_path_methods;
	cost_join(root, cpath, outer, innerrel, choice->index, outer_rows, fetched,
			  choice->matchquals, rows, list_length(choice->inner_vars) == 1, jointype);
	return cpath;
}

/*
 * set_join_pathlist_hook: offer GbtreeJoin for a join whose inner side is
 * one plain table with a gbtree index on the join key.
 */
static void
gbt_join_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
			   RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	RangeTblEntry *rte;
	Path	   *outer;
	ListCell   *lc;
	ListCell   *ic;
	List	   *joinquals;
	List	   *otherquals;
	GbtJoinChoice best = {0};

	if (prev_join_pathlist_hook)
		prev_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!gbt_enable_join)
		return;
	if (jointype != JOIN_INNER && jointype != JOIN_LEFT &&
		jointype != JOIN_SEMI && jointype != JOIN_ANTI)
		return;
	if (innerrel->reloptkind != RELOPT_BASEREL || innerrel->rtekind != RTE_RELATION ||
		innerrel->indexlist == NIL || !bms_is_empty(innerrel->lateral_relids))
		return;
	outer = outerrel->cheapest_total_path;
	if (outer == NULL || outer->param_info != NULL || !bms_is_empty(joinrel->lateral_relids))
		return;
	rte = planner_rt_fetch(innerrel->relid, root);
	if (rte->inh || rte->tablesample || rte->securityQuals ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
		return;
	if (epq_possible(root))
		return;
#if PG_VERSION_NUM >= 160000

	/*
	 * From PostgreSQL 16 the Vars a left join nulls carry its relid
	 * (varnullingrels), and some plan shapes above such a join left the
	 * node's quals and target list disagreeing about the marking (setrefs:
	 * "wrong varnullingrels"; the fuzzer found them).  Until that is
	 * understood, joins that null anything (left joins, and anti joins
	 * reduced from them) keep the core's plans there.
	 */
	if (extra->sjinfo && extra->sjinfo->ojrelid != 0)
		return;
#endif
	/* quals of security barriers keep their order: leave those to the core */
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant || rinfo->security_level > 0)
			return;
	}
	foreach(lc, innerrel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant || rinfo->security_level > 0)
			return;
	}

	if (jointype == JOIN_ANTI || jointype == JOIN_LEFT)
		extract_actual_join_clauses(extra->restrictlist, joinrel->relids,
									&joinquals, &otherquals);
	else
	{
		joinquals = extract_actual_clauses(extra->restrictlist, false);
		otherquals = NIL;
	}

	foreach(ic, innerrel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(ic);

		if (index->amcostestimate != (void (*) ()) gbtcostestimate ||
			!gbt_join_key_type(index->opcintype[0]) ||
			(index->ncolumns > 1 && !gbt_join_exact_type(index->opcintype[0])) ||
			index->indexkeys[0] == 0 ||
			(index->indpred != NIL && !index->predOK))
			continue;
		foreach(lc, extra->restrictlist)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
			Oid			opno;
			Expr	   *okey;

			if ((jointype == JOIN_ANTI || jointype == JOIN_LEFT) &&
				RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
				continue;
			okey = outer_key_of(root, rinfo, outerrel, innerrel, index, &opno);
			if (okey == NULL)
				continue;
			best.index = index;
			best.outer_key = okey;
			best.opno = opno;
			best.keyclause = rinfo->clause;
			best.inner_key = (Var *) strip_relabel(get_leftop(rinfo->clause));
			if (!IsA(best.inner_key, Var) || best.inner_key->varno != innerrel->relid)
				best.inner_key = (Var *) strip_relabel(get_rightop(rinfo->clause));
			break;
		}
		if (best.index)
			break;
	}
	if (best.index == NULL)
		return;

	/*
	 * A pair must pass the join quals and the inner table's own quals; the
	 * key clause first (it rechecks the key match exactly, and EXPLAIN
	 * shows it as the join condition).
	 */
	best.matchquals = list_make1(best.keyclause);
	foreach(lc, joinquals)
	{
		if (lfirst(lc) != (void *) best.keyclause)
			best.matchquals = lappend(best.matchquals, lfirst(lc));
	}
	best.matchquals = list_concat(best.matchquals,
								  extract_actual_clauses(innerrel->baserestrictinfo, false));
	best.otherquals = otherquals;
	best.inner_vars = NIL;
	if (!collect_inner_vars((Node *) joinrel->reltarget->exprs, innerrel->relid,
							outerrel->relids, &best.inner_vars) ||
		!collect_inner_vars((Node *) best.matchquals, innerrel->relid,
							outerrel->relids, &best.inner_vars) ||
		!collect_inner_vars((Node *) best.otherquals, innerrel->relid,
							outerrel->relids, &best.inner_vars))
		return;
	/* the key column first: the executor finds the table through it */
	best.inner_vars = list_delete(best.inner_vars, best.inner_key);
	best.inner_vars = lcons(best.inner_key, best.inner_vars);

	{
		VariableStatData vardata;
		bool		isdefault;
		double		ndistinct;
		double		tuples_per_key;

		examine_variable(root, (Node *) best.inner_key, 0, &vardata);
		ndistinct = get_variable_numdistinct(&vardata, &isdefault);
		ReleaseVariableStats(vardata);
		tuples_per_key = Max(innerrel->tuples, 1.0) / Max(ndistinct, 1.0);

		add_path(joinrel, (Path *) make_join_path(root, joinrel, innerrel, outer, jointype,
												  &best, outer->rows, joinrel->rows,
												  tuples_per_key));

		/* each worker joins its share of a partial outer path */
		if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL)
		{
			Path	   *pouter = (Path *) linitial(outerrel->partial_pathlist);

			if (pouter->parallel_safe && pouter->param_info == NULL)
			{
				double		share = pouter->rows / Max(outerrel->rows, 1.0);

				add_partial_path(joinrel, (Path *) make_join_path(root, joinrel, innerrel, pouter,
																  jointype, &best, pouter->rows,
																  clamp_row_est(joinrel->rows * share),
																  tuples_per_key));
			}
		}
	}
}

#if PG_VERSION_NUM >= 160000
/*
 * PostgreSQL 16+ marks the Vars a left join nulls (varnullingrels): the
 * target list's inner Vars carry the join, the join clauses' do not.
 * setrefs matches each Var with the first scan-tlist entry of its column
 * and then wants equal markings, so every inner Var of this node takes one
 * marking per column: the target list's where it has the column (the
 * parent plan matches that one), else the first one seen.  The executor
 * never reads the marking.
 */
typedef struct NullingContext
{
	Index		relid;
	List	   *seen;			/* one Var per column: its marking */
} NullingContext;

static bool
note_nulling(Node *node, NullingContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) && ((Var *) node)->varno == cxt->relid &&
		((Var *) node)->varlevelsup == 0)
	{
		ListCell   *lc;

		foreach(lc, cxt->seen)
		{
			if (((Var *) lfirst(lc))->varattno == ((Var *) node)->varattno)
				return false;
		}
		cxt->seen = lappend(cxt->seen, node);
		return false;
	}
	return expression_tree_walker(node, note_nulling, (void *) cxt);
}

static Node *
same_nulling(Node *node, NullingContext *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == cxt->relid &&
		((Var *) node)->varlevelsup == 0)
	{
		Var		   *v = (Var *) copyObject(node);
		ListCell   *lc;

		note_nulling((Node *) v, cxt);
		foreach(lc, cxt->seen)
		{
			if (((Var *) lfirst(lc))->varattno == v->varattno)
				v->varnullingrels = bms_copy(((Var *) lfirst(lc))->varnullingrels);
		}
		return (Node *) v;
	}
	return expression_tree_mutator(node, same_nulling, (void *) cxt);
}
#endif

static Plan *
join_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
		  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *outer_plan = linitial(custom_plans);
	Oid			indexoid = intVal(linitial(best_path->custom_private));
	int			jointype = intVal(lsecond(best_path->custom_private));
	List	   *keyinfo = (List *) lthird(best_path->custom_private);
	List	   *qualinfo = (List *) lfourth(best_path->custom_private);
	Expr	   *outer_key = (Expr *) lsecond(keyinfo);
	Oid			opno = intVal(lthird(keyinfo));
	List	   *matchquals = (List *) linitial(qualinfo);
	List	   *otherquals = (List *) lsecond(qualinfo);
	List	   *inner_vars = (List *) lthird(qualinfo);
	List	   *scan_tlist = NIL;
	ListCell   *lc;
	AttrNumber	resno = 1;

#if PG_VERSION_NUM >= 160000
	{
		NullingContext cxt = {((Var *) linitial(inner_vars))->varno, NIL};
		List	   *vars = NIL;

		note_nulling((Node *) tlist, &cxt);
		matchquals = (List *) same_nulling((Node *) matchquals, &cxt);
		otherquals = (List *) same_nulling((Node *) otherquals, &cxt);
		foreach(lc, (List *) same_nulling((Node *) inner_vars, &cxt))
			vars = list_append_unique(vars, lfirst(lc));
		inner_vars = vars;
	}
#endif

	/* the outer plan's columns, then the inner ones */
	foreach(lc, outer_plan->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(tle->expr), resno++, NULL, false));
	}
	foreach(lc, inner_vars)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(lfirst(lc)), resno++, NULL, false));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = copyObject(otherquals);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = lcons(copyObject(outer_key), copyObject(matchquals));
	cscan->custom_private = list_make4(makeInteger(indexoid), makeInteger(jointype),
									   makeInteger(list_length(outer_plan->targetlist)),
									   makeInteger(opno));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = rel->relids;
	cscan->methods = &gbt_join_scan_methods;
	return &cscan->scan.plan;
}

/* install the planner hook (gbt_join_init defines the settings) */
void
gbt_join_plan_init(void)
{
	prev_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = gbt_join_paths;
}
