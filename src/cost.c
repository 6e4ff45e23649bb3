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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/amapi.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/index_selfuncs.h"
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

void
gbtcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	double		nkeys;

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
