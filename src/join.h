/*-------------------------------------------------------------------------
 *
 * join.h
 *	  What GbtreeJoin's planning (join_plan.c) and execution (join.c) share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_JOIN_H
#define GBTREE_JOIN_H

#include "catalog/pg_type_d.h"
#include "nodes/extensible.h"

#include "gbtree.h"

#define GBT_JOIN_NAME	"GbtreeJoin"

extern bool gbt_enable_join;
extern int	gbt_join_batch_size;
extern const CustomScanMethods gbt_join_scan_methods;

extern void gbt_join_plan_init(void);

/*
 * The key types GbtreeJoin takes: the one-word ones, uuid (two words, no
 * tail, equal exactly when its words are) and text (words that equal
 * values share; join.c pairs by value where different values share them)
 */
static inline bool
gbt_join_key_type(Oid type)
{
	return gbt_type_supported(type) || type == UUIDOID || type == TEXTOID;
}

/*
 * Types whose values are equal exactly when their keys are (unlike float,
 * with its -0 and NaNs, or numeric's scales): an outer side of one such
 * column needs no copy of its rows, and they are the leading column types
 * GbtreeJoin takes in an index of several columns (or with INCLUDE
 * columns), where an entry's first bits name its key alone (join.c,
 * prefix_words)
 */
static inline bool
gbt_join_exact_type(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
			return true;
		default:
			return false;
	}
}

#endif							/* GBTREE_JOIN_H */
