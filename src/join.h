/*-------------------------------------------------------------------------
 *
 * join.h
 *	  What GbtreeJoin's planning (join_plan.c) and execution (join.c) share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_JOIN_H
#define GBTREE_JOIN_H

#include "nodes/extensible.h"

#define GBT_JOIN_NAME	"GbtreeJoin"

extern bool gbt_enable_join;
extern int	gbt_join_batch_size;
extern const CustomScanMethods gbt_join_scan_methods;

extern void gbt_join_plan_init(void);

#endif							/* GBTREE_JOIN_H */
