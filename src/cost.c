/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  amcostestimate for gbtree.
 *
 * gbtree answers the same quals as btree with the same page-at-a-time
 * access pattern, so it uses btree's estimator: selectivity from the
 * leading qual, btree's descent and per-tuple charges, correlation from
 * the column statistics.  Differences between the two indexes then come
 * only from their sizes (index->pages), which is what makes the planner
 * choose gbtree wherever it would choose btree.
 *
 * One exception: an = ANY array batch the GPU will answer.  btree's
 * estimator charges each array key's leaf pages as random reads from
 * disk (with the Mackert-Lohman cache adjustment), which for a million
 * keys is most of the index read at random_page_cost.  A batch that goes
 * to the GPU reads none of those pages: it is looked up in the index's
 * copy in device memory (a copy the first batch loads, and that is kept
 * fresh after that), and only the matches come back.  So when the GPU
 * would take the batch, the leaf page reads are not charged; the
 * per-key and per-entry CPU charges stay.  With the GPU out of reach
 * (no service, gbtree.device = cpu, a batch below gbtree.gpu_min_batch or
 * below 10,000 keys) the estimate is btree's, except that from 10,000
 * keys on, the CPU batch path's leaf reads are charged as sequential
 * reads: it sorts the keys and walks the leaves once, in order.  Either
 * batch also replaces btree's descent per key (log2 of the index's tuples
 * comparisons each) by a sort and a merge with the leaves, charged at two
 * comparisons a key: on a 10M-row table the descents alone were priced
 * above a parallel sequential scan, which ran 8x slower than the batch.
 *
 * And from PostgreSQL 18 on, btree's estimator prices a condition on a
 * later column, with no '=' on a column before it, as a skip scan: nbtree
 * fills the gap with skip arrays and descends once a value of the
 * skipped columns.  gbtree has no skip scan.  Such a condition bounds
 * nothing there: it filters the entries that the bounded range (the
 * whole index, where the first column has no condition) holds, as in
 * btree before 18.  So the estimate is btree's for the clauses up to the
 * first gap, with the selectivity of all of them and a comparison an
 * entry read for each clause past it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/amapi.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/index_selfuncs.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "gbtree.h"
#include "gbtree_gpu.h"

/*
 * The smallest batch whose leaf reads are left out: below it they are a
 * small part of the cost, and the plans of small arrays stay btree's even
 * when gbtree.gpu_min_batch sends them to the GPU.
 */
#define GBT_COST_DEVICE_MIN_KEYS	10000

/* How many keys the path's = ANY arrays give (as genericcostestimate counts) */
static double
array_keys(PlannerInfo *root, IndexPath *path)
{
	double		n = 1;
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);

			if (IsA(rinfo->clause, ScalarArrayOpExpr))
			{
				ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) rinfo->clause;
				int			alength = gbt_estimate_array_length(root, lsecond(saop->args));

				if (alength > 1)
					n *= alength;
			}
		}
	}
	return n;
}

#if PG_VERSION_NUM >= 180000
/* Does this index qual on column col act as '=' for bounding a scan? */
static bool
qual_is_equality(IndexOptInfo *index, int col, RestrictInfo *rinfo)
{
	Expr	   *clause = rinfo->clause;
	Oid			opno;

	if (IsA(clause, NullTest))
		return ((NullTest *) clause)->nulltesttype == IS_NULL;
	if (IsA(clause, OpExpr))
		opno = ((OpExpr *) clause)->opno;
	else if (IsA(clause, ScalarArrayOpExpr))
		opno = ((ScalarArrayOpExpr *) clause)->opno;
	else
		return false;			/* a row comparison bounds its first column only */
	return get_op_opfamily_strategy(opno, index->opfamily[col]) == BTEqualStrategyNumber;
}

/*
 * The path's index clauses that bound a gbtree scan: those of the leading
 * columns with '=' (or IS NULL), and of the column after them; the rest
 * come after a gap that only a skip scan would bridge.
 */
static List *
bounding_clauses(IndexPath *path)
{
	IndexOptInfo *index = path->indexinfo;
	List	   *kept = NIL;
	int			col = 0;
	bool		equality = false;
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		if (iclause->indexcol != col)
		{
			if (!equality || iclause->indexcol != col + 1)
				break;
			col++;
			equality = false;
		}
		kept = lappend(kept, iclause);
		foreach(lc2, iclause->indexquals)
			equality |= qual_is_equality(index, col, lfirst_node(RestrictInfo, lc2));
	}
	return kept;
}

/*
 * btree's estimate as it was before skip scan: the clauses that bound the
 * scan alone, then the selectivity of all of them, and a comparison an
 * entry read for each of the others.
 */
static void
estimate_without_skip(PlannerInfo *root, IndexPath *path, List *bounding,
					  double loop_count, Cost *indexStartupCost, Cost *indexTotalCost,
					  Selectivity *indexSelectivity, double *indexCorrelation,
					  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	IndexPath	bounded = *path;
	Selectivity bounded_sel;
	List	   *quals;
	int			filters;

	bounded.indexclauses = bounding;
	btcostestimate(root, &bounded, loop_count, indexStartupCost, indexTotalCost,
				   &bounded_sel, indexCorrelation, indexPages);

	quals = get_quals_from_indexclauses(path->indexclauses);
	filters = list_length(quals) - list_length(get_quals_from_indexclauses(bounding));
	*indexSelectivity = clauselist_selectivity(root,
											   add_predicate_to_index_quals(index, quals),
											   index->rel->relid, JOIN_INNER, NULL);
	*indexTotalCost += bounded_sel * index->rel->tuples * filters * cpu_operator_cost;
}
#endif

void
gbtcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	double		nkeys;
#if PG_VERSION_NUM >= 180000
	List	   *bounding = bounding_clauses(path);

	if (list_length(bounding) < list_length(path->indexclauses))
		estimate_without_skip(root, path, bounding, loop_count, indexStartupCost,
							  indexTotalCost, indexSelectivity, indexCorrelation,
							  indexPages);
	else
#endif
		btcostestimate(root, path, loop_count, indexStartupCost, indexTotalCost,
					   indexSelectivity, indexCorrelation, indexPages);

	nkeys = array_keys(root, path);
	if (nkeys >= GBT_COST_DEVICE_MIN_KEYS)
	{
		/* the leaf reads genericcostestimate charged for the array's keys */
		double		outer = Max(loop_count, 1.0);
		double		spc_random_page_cost;
		double		spc_seq_page_cost;
		double		pages;
		double		saved;

		get_tablespace_page_costs(index->reltablespace, &spc_random_page_cost,
								  &spc_seq_page_cost);
		pages = index_pages_fetched(*indexPages * nkeys * outer, index->pages,
									(double) index->pages, root);

		/*
		 * A GPU batch reads none of them.  The CPU batch path sorts the
		 * keys and walks the leaves once, in key order, which after a
		 * build is their order on disk: it reads them in sequence.
		 */
		if (nkeys >= gbt_gpu_min_batch && gbt_gpu_wanted((Size) Min(nkeys, 1e12)))
			saved = spc_random_page_cost;
		else
			saved = Max(spc_random_page_cost - spc_seq_page_cost, 0);
		*indexTotalCost = Max(*indexStartupCost,
							  *indexTotalCost - pages * saved / outer);

		/* btree's descents, one per key (PG 17+: at most a third of the pages) */
		if (index->tuples > 1)
		{
			double		descents = nkeys;
			double		descent_cost = ceil(log(index->tuples) / log(2.0)) * cpu_operator_cost;

#if PG_VERSION_NUM >= 170000
			descents = Max(Min(descents, ceil(index->pages * 0.3333333)), 1);
#endif
			*indexTotalCost = Max(*indexStartupCost,
								  *indexTotalCost - descents * descent_cost +
								  nkeys * 2 * cpu_operator_cost);
		}
	}
}
