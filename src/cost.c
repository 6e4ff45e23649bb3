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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "utils/index_selfuncs.h"

#include "gbtree.h"

void
gbtcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	btcostestimate(root, path, loop_count, indexStartupCost, indexTotalCost,
				   indexSelectivity, indexCorrelation, indexPages);
}
