/*-------------------------------------------------------------------------
 *
 * join.c
 *	  GbtreeJoin: an index nested-loop join that looks the outer side's keys
 *	  up in batches.  This file is its executor and design; join_plan.c
 *	  offers and costs the path.
 *
 * A nested loop over a gbtree index scan probes the index once per outer
 * row: a descent, a leaf, then the heap tuples in key order.  GbtreeJoin
 * takes the outer rows in batches (up to gbtree.join_batch_size rows and
 * hash_mem of them), looks up all their distinct keys with one = ANY scan
 * of the index (the GPU batch, or the CPU batch path), sorts the matching
 * TIDs by heap block and fetches the inner rows in that order.  Each inner
 * row's key is normalized again from the heap tuple and matched with the
 * batch's outer rows of that key (a sorted array), so that an entry whose
 * heap tuple changed since cannot pair wrongly; every join clause is then
 * checked on the pair, as the nested loop would.
 *
 * Inner and left joins return a pair as it is found; semi and anti joins
 * mark their outer rows and return them once the batch's lookups are done,
 * as a left join returns its unmatched ones with NULLs.  Outer rows whose
 * key is NULL match nothing (the operator is strict).
 *
 * The path is offered for an inner, left, semi or anti join whose inner
 * side is one plain table with a gbtree index whose one column is of a
 * one-word type, uuid or text (a multi-word tree's keys are compared word
 * by word), or whose leading column, before others or INCLUDE ones, is of
 * an integer, date, timestamp or uuid type (its bits of the words are the
 * key: an entry's words are cut to them), and a join clause "index column
 * = expression of the outer side" with an operator of the index's family
 * (and, for text, the index's collation).  A text longer than its field shares its words with others
 * of the same first bytes, so the batch's distinct text keys are distinct
 * values, ordered by words and then bytes, and an entry of words several
 * of them have is paired with the one its heap row's value equals (a
 * deterministic collation's equal values are equal bytes).  The TIDs are used after the index scan ends, as a
 * bitmap heap scan uses its bitmap: safe under the query's MVCC snapshot.
 * Plans that EvalPlanQual might recheck (UPDATE, DELETE, MERGE, SELECT FOR
 * UPDATE, and subqueries under them) do not get it: a joined row could not
 * be rechecked alone.  With a parallel outer path the node runs in each
 * worker over its share of the outer rows, as a parallel nested loop does.
 *
 * The plan node's custom_scan_tlist is the outer plan's target list
 * followed by the inner columns the join needs; custom_exprs is the outer
 * key expression followed by the quals a pair must pass.
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
#include "gbtree_tail.h"
#include "gbtree_wide.h"
#include "heapblock.h"
#include "join.h"

bool		gbt_enable_join = true;
int			gbt_join_batch_size = 1 << 19;	/* JOIN_MAX_BATCH */

/*
 * The batch's outer rows with a non-null key are GbtEntry (key, row << 16):
 * the build's radix sort orders them by key, rows ascending, and skips the
 * row passes since they come in order.
 */
#define JOIN_ROW(e)		((int) ((e).tid >> 16))

typedef enum GbtJoinPhase
{
	GBT_JOIN_LOAD,				/* read the next batch of outer rows */
	GBT_JOIN_PAIRS,				/* fetch inner rows, pair them */
	GBT_JOIN_EMIT,				/* semi/anti: return the batch's outer rows */
	GBT_JOIN_DONE
} GbtJoinPhase;

typedef struct GbtJoinState
{
	CustomScanState css;
	JoinType	jointype;
	bool		semi_anti;		/* dmatched is used */
	Relation	heap;
	Relation	index;
	int			nouter;			/* outer columns in the scan tuple */
	int			ninner;			/* inner columns after them */
	AttrNumber *inner_attnos;
	AttrNumber	inner_keyattno;
	Oid			inner_keytype;
	Oid			outer_keytype;
	int16		outer_typlen;
	bool		outer_typbyval;
	char		outer_typalign;
	Oid			eqproc;
	Oid			collation;
	ExprState  *outer_key;
	ExprState  *match;
	TupleTableSlot *outerslot;
	TupleTableSlot *heapslot;
	IndexFetchTableData *fetch;
	MemoryContext batchcxt;

	GbtJoinPhase phase;
	bool		outer_done;

	/* the current batch, in batchcxt */
	MinimalTuple *rows;			/* NULL when key_outer */
	int			nrows;
	GbtEntry   *keys;			/* (key, row << 16) of rows with a key */
	Datum	   *keyvals;		/* each row's key value */
	bool	   *keynull;		/* key_outer: each row's key is NULL */
	AttrNumber	outer_key_attno;	/* the key is this outer column, or 0 */

	/*
	 * The outer rows are their key alone (the outer side gives one column,
	 * the key, of a type whose equal keys are equal values): no row is
	 * copied, and the rows of one key are one value.
	 */
	bool		key_outer;
	bool		pair_formed;	/* the scan tuple holds the current pair */
	int			nkeys;
	bool	   *matched;
	/*
	 * A multi-word tree's keys (uuid, text, several columns: wide.c, of
	 * one word at times) are compared as words, nw of them
	 */
	bool		wide;
	int			nw;				/* key words */
	GbtIndexInfo *info;			/* wide: the index's, to encode keys */
	uint64	   *wkeys;			/* wide: each keyed row's words, row << 16 */
	Datum	   *dvalue;			/* wide: each distinct key's value */
	bool		text_key;		/* the key is text: words may tie (header) */
	int			prefix_bits;	/* the key is the leading column of a wider
								 * key: its bits of the words, else 0 */
	bool	   *dtie;			/* text_key: dkey[d]'s words are another's too */
	unsigned char *tailbuf;		/* text_key: a cut value's tail, unused */
	uint64	   *dkey;			/* distinct keys' words, ascending */
	int		   *dstart;			/* keys[] of dkey[d]: dstart[d] .. dstart[d + 1] */
	bool	   *dmatched;		/* semi/anti on the key alone: dkey[d] found */
	int			ndistinct;
	int			dcursor;		/* where the last entry's key was found */
	uint64	   *matches;		/* index entries found, packed (see join_entries) */
	int64		nmatches;
	int64		maxmatches;
	int64		matchpos;
	int			pair;			/* next keys[] entry to pair with the inner row */
	int			pair_end;
	int			pair_d;			/* the distinct key of pair .. pair_end */
	int			emitpos;

	/* the inner row of the pairs: the heap tuple, or the key alone */
	bool		key_only;		/* the join needs no inner column but the key */
	bool		key_clause_only;	/* and no qual but the key clause */
	bool		inner_from_key;
	Datum		inner_key_datum;
	bool		serializable;
	Buffer		vmbuf;
	BlockNumber vis_block;		/* the block whose all-visible bit is vis_all */
	bool		vis_all;

	/*
	 * Heap tables are read a block at a time, as GbtreeArrayScan does: the
	 * entries of one block have their HOT chains searched under one share
	 * lock, then the visible tuples are paired with the pin alone.
	 */
	bool		by_block;
	GbtHeapBlock block;
	int			bpos;			/* the next of block's visible tuples */
	int			bd[MaxHeapTuplesPerPage];	/* their distinct keys */
	int64		nblocks;		/* distinct heap blocks of the batch */
	BufferAccessStrategy strategy;

	/* EXPLAIN ANALYZE, summed over rescans */
	int64		batches;
	int64		gpu_batches;
	int64		outer_rows;
	int64		lookup_keys;
	int64		entries;
	int64		heap_fetches;
	int64		visible_entries;
} GbtJoinState;

static Node *join_create_state(CustomScan *cscan);
static void join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *join_exec(CustomScanState *node);
static void join_end(CustomScanState *node);
static void join_rescan(CustomScanState *node);
static void join_explain(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods gbt_join_scan_methods = {
	.CustomName = GBT_JOIN_NAME,
	.CreateCustomScanState = join_create_state,
};

static const CustomExecMethods join_exec_methods = {
	.CustomName = GBT_JOIN_NAME,
	.BeginCustomScan = join_begin,
	.ExecCustomScan = join_exec,
	.EndCustomScan = join_end,
	.ReScanCustomScan = join_rescan,
	.ExplainCustomScan = join_explain,
};

/* ------------------------------------------------------------------------
 * Execution
 * ------------------------------------------------------------------------
 */

static Node *
join_create_state(CustomScan *cscan)
{
	GbtJoinState *st = (GbtJoinState *) newNode(sizeof(GbtJoinState), T_CustomScanState);

	st->css.methods = &join_exec_methods;
	return (Node *) st;
}

static void
join_begin(CustomScanState *node, EState *estate, int eflags)
{
	GbtJoinState *st = (GbtJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Oid			indexoid = intVal(linitial(cscan->custom_private));
	Oid			opno = intVal(lfourth(cscan->custom_private));
	TargetEntry *keytle;
	Var		   *keyvar;
	PlanState  *outer;
	ListCell   *lc;
	int			i;

	st->jointype = (JoinType) intVal(lsecond(cscan->custom_private));
	st->nouter = intVal(lthird(cscan->custom_private));
	st->ninner = list_length(cscan->custom_scan_tlist) - st->nouter;
	keytle = list_nth_node(TargetEntry, cscan->custom_scan_tlist, st->nouter);
	keyvar = castNode(Var, keytle->expr);
	st->heap = ExecOpenScanRelation(estate, keyvar->varno, eflags);

	outer = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(outer);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	st->index = index_open(indexoid, exec_rt_fetch(keyvar->varno, estate)->rellockmode);
	st->inner_attnos = palloc(sizeof(AttrNumber) * st->ninner);
	i = 0;
	for_each_from(lc, cscan->custom_scan_tlist, st->nouter)
		st->inner_attnos[i++] = castNode(Var, lfirst_node(TargetEntry, lc)->expr)->varattno;
	st->inner_keyattno = keyvar->varattno;
	st->inner_keytype = getBaseType(keyvar->vartype);

	st->outer_key = ExecInitExpr((Expr *) linitial(cscan->custom_exprs), &node->ss.ps);
	/* the common case, a plain outer column, is read straight from its row */
	if (IsA(linitial(cscan->custom_exprs), Var) &&
		((Var *) linitial(cscan->custom_exprs))->varno == INDEX_VAR &&
		((Var *) linitial(cscan->custom_exprs))->varattno <= st->nouter)
		st->outer_key_attno = ((Var *) linitial(cscan->custom_exprs))->varattno;
	st->match = ExecInitQual(list_copy_tail(cscan->custom_exprs, 1), &node->ss.ps);
	/* a domain's values are its base type's (gbt_column_type) */
	st->outer_keytype = getBaseType(exprType((Node *) linitial(cscan->custom_exprs)));
	get_typlenbyvalalign(st->outer_keytype, &st->outer_typlen, &st->outer_typbyval,
						 &st->outer_typalign);
	st->eqproc = get_opcode(opno);
	/* the index's, which the planner made sure is the clause's */
	st->collation = st->index->rd_indcollation[0];

	st->outerslot = ExecInitExtraTupleSlot(estate, ExecGetResultType(outer),
										   &TTSOpsMinimalTuple);
	st->heapslot = ExecInitExtraTupleSlot(estate, RelationGetDescr(st->heap),
										  table_slot_callbacks(st->heap));
	st->batchcxt = AllocSetContextCreate(estate->es_query_cxt, "GbtreeJoin batch",
										 ALLOCSET_DEFAULT_SIZES);
	st->key_only = st->ninner == 1;
	st->key_clause_only = list_length(cscan->custom_exprs) == 2;
	st->semi_anti = st->jointype == JOIN_SEMI || st->jointype == JOIN_ANTI;
	st->info = gbt_index_info_copy(st->index);
	st->wide = st->info->wide;
	st->nw = st->info->wide ? st->info->nwords : 1;
	st->text_key = st->info->wide && st->info->is_text[0];
	st->prefix_bits = 0;
	if (st->info->wide && st->info->shape.ncols > 1)
	{
		st->prefix_bits = (st->info->shape.nullbits ? 1 : 0) + st->info->shape.col[0].bits;

		/*
		 * An entry stands for its inner key as its outer value, which is of
		 * the outer side's type: only where that is the column's
		 */
		if (st->outer_keytype != st->inner_keytype)
			st->key_only = false;
	}
	if (st->text_key)
		st->tailbuf = palloc(gbt_tail_max(st->nw) + 1);
	/* a text key's distinct keys are distinct values (bytes): exact too */
	st->key_outer = st->nouter == 1 && st->outer_key_attno == 1 &&
		(gbt_join_exact_type(st->outer_keytype) || st->text_key);
	st->vmbuf = InvalidBuffer;
	st->by_block = st->heap->rd_rel->relam == HEAP_TABLE_AM_OID;
	gbt_heap_block_init(&st->block, st->heap, st->index);
	st->phase = GBT_JOIN_LOAD;
}

/* the scan tuple: the outer row, then the inner row's columns or NULLs */
static void fill_inner(GbtJoinState *st, TupleTableSlot *scan, bool with_inner);

static TupleTableSlot *
form_pair(GbtJoinState *st, int row, bool with_inner)
{
	TupleTableSlot *scan = st->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(scan);
	if (st->key_outer)
	{
		scan->tts_values[0] = st->keyvals[row];
		scan->tts_isnull[0] = st->keynull[row];
	}
	else
	{
		ExecStoreMinimalTuple(st->rows[row], st->outerslot, false);
		slot_getallattrs(st->outerslot);
		memcpy(scan->tts_values, st->outerslot->tts_values, sizeof(Datum) * st->nouter);
		memcpy(scan->tts_isnull, st->outerslot->tts_isnull, sizeof(bool) * st->nouter);
	}
	fill_inner(st, scan, with_inner);
	return ExecStoreVirtualTuple(scan);
}

/* key_outer: the pair of the current inner row and its key's outer value */
static TupleTableSlot *
form_key_pair(GbtJoinState *st)
{
	TupleTableSlot *scan = st->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(scan);
	/* the key is the value: no read of the rows, nor of another array */
	scan->tts_values[0] = st->wide ? st->dvalue[st->pair_d] :
		gbt_key_to_datum(st->dkey[st->pair_d], 0, st->outer_keytype);
	scan->tts_isnull[0] = false;
	fill_inner(st, scan, true);
	return ExecStoreVirtualTuple(scan);
}

/* the scan tuple's inner columns: the inner row's, or NULLs */
static void
fill_inner(GbtJoinState *st, TupleTableSlot *scan, bool with_inner)
{
	for (int j = 0; j < st->ninner; j++)
	{
		if (with_inner && st->inner_from_key)
		{
			/* key_only: the one inner column is the key */
			scan->tts_values[st->nouter + j] = st->inner_key_datum;
			scan->tts_isnull[st->nouter + j] = false;
		}
		else if (with_inner)
			scan->tts_values[st->nouter + j] =
				slot_getattr(st->heapslot, st->inner_attnos[j],
							 &scan->tts_isnull[st->nouter + j]);
		else
		{
			scan->tts_values[st->nouter + j] = (Datum) 0;
			scan->tts_isnull[st->nouter + j] = true;
		}
	}
}

/*
 * An index entry found, packed so that sorting the packed values sorts by
 * heap TID: block (32 bits) | offset (11) | all visible (1) | the key's -0
 * flag (1) | the number of its distinct key in the batch (19).
 */
#define JOIN_OFFSET_BITS	11
#define JOIN_KEY_BITS		19
#define JOIN_MAX_BATCH		(1 << JOIN_KEY_BITS)
#define JOIN_NEGZERO		(UINT64CONST(1) << JOIN_KEY_BITS)
#define JOIN_VISIBLE		(UINT64CONST(1) << (JOIN_KEY_BITS + 1))
#define JOIN_OFFSET_SHIFT	(JOIN_KEY_BITS + 2)

StaticAssertDecl(MaxHeapTuplesPerPage < (1 << JOIN_OFFSET_BITS),
				 "heap offsets must fit the packed match");

static inline uint64
pack_match(uint64 tid, int d)
{
	return ((uint64) gbt_tid_block(tid) << 32) |
		((uint64) gbt_tid_offset(tid) << JOIN_OFFSET_SHIFT) |
		((gbt_tid_flags(tid) & GBT_TID_FLAG_NEGZERO) ? JOIN_NEGZERO : 0) |
		(uint64) d;
}

/* distinct key d's words */
#define DKEY(st, d)		(&(st)->dkey[(Size) (d) * (st)->nw])

/* the distinct key equal to key, or -1; entries mostly come in key order */
static int
find_distinct(GbtJoinState *st, const uint64 *key)
{
	int			nw = st->nw;
	int			lo;
	int			hi;

	for (int step = 0; step < 4 && st->dcursor < st->ndistinct; step++)
	{
		int			c = gbt_words_cmp(DKEY(st, st->dcursor), key, nw);

		if (c == 0)
			return st->dcursor;
		if (c > 0)
			break;
		st->dcursor++;
	}
	lo = 0;
	hi = st->ndistinct;
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (gbt_words_cmp(DKEY(st, mid), key, nw) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	st->dcursor = lo;
	return (lo < st->ndistinct && gbt_words_cmp(DKEY(st, lo), key, nw) == 0) ? lo : -1;
}

/*
 * A text's words as an index entry of that value has them (its tail is
 * not kept: words alone order the batch and find its entries' keys).  No
 * length limit applies: a value too long for the index has words, and
 * no entry.
 */
static void
text_words(GbtJoinState *st, Datum value, uint64 *words)
{
	const GbtKeyShape *shape = &st->info->shape;
	text	   *t = DatumGetTextPP(value);
	GbtColInput in[1];
	bool		alloc;
	int			len;
	const unsigned char *k = gbt_text_key(st->info, 0, t, &len, &alloc);

	memset(in, 0, sizeof(in));
	in[0].bytes = k;
	in[0].len = len;
	gbt_bytes_field(k, len, shape->col[0].bits / 8, &in[0].val);
	(void) gbt_shape_encode_cut(shape, st->info->is_text, in, words, st->tailbuf,
								gbt_tail_max(shape->nwords));
	if (alloc)
		pfree((void *) k);
	if ((Pointer) t != DatumGetPointer(value))
		pfree(t);
}

/*
 * A leading column's value as the first bits of the index's words, the
 * rest zero; false when it is outside the column's type (a cross-type key:
 * int8 against an int4 column), so that no entry can equal it.
 */
static bool
prefix_words(GbtJoinState *st, Datum value, Oid type, uint64 *words)
{
	GbtColValue v;
	uint16		flags;

	if (gbt_wide_field(st->info, 0, value, type, &v, &flags) != GBT_CLAMP_NONE)
		return false;
	(void) gbt_shape_encode_cols(&st->info->shape, &v, 1, words);
	return true;
}

/* an entry's words cut to the leading column's bits, into out */
static inline void
prefix_of(const GbtJoinState *st, const uint64 *words, uint64 *out)
{
	int			bits = st->prefix_bits;

	for (int k = 0; k < st->nw; k++, bits -= 64)
		out[k] = bits >= 64 ? words[k] :
			bits <= 0 ? 0 : words[k] & ~(UINT64_MAX >> bits);
}

/* a text datum's bytes, detoasted only where it must be (rarely) */
static inline text *
text_pp(Datum d)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);

	if (unlikely(VARATT_IS_COMPRESSED(v) || VARATT_IS_EXTERNAL(v)))
		return DatumGetTextPP(d);
	return (text *) v;
}

/* two text values are equal: under a deterministic collation, their bytes */
static bool
text_values_equal(Datum a, Datum b)
{
	text	   *ta = text_pp(a);
	text	   *tb = text_pp(b);
	bool		eq = VARSIZE_ANY_EXHDR(ta) == VARSIZE_ANY_EXHDR(tb) &&
		memcmp(VARDATA_ANY(ta), VARDATA_ANY(tb), VARSIZE_ANY_EXHDR(ta)) == 0;

	if ((Pointer) ta != DatumGetPointer(a))
		pfree(ta);
	if ((Pointer) tb != DatumGetPointer(b))
		pfree(tb);
	return eq;
}

/* text values in byte order (memcmp, then length), as "C" orders them */
static int
text_values_cmp(Datum a, Datum b)
{
	text	   *ta = text_pp(a);
	text	   *tb = text_pp(b);
	int			la = VARSIZE_ANY_EXHDR(ta);
	int			lb = VARSIZE_ANY_EXHDR(tb);
	int			c = memcmp(VARDATA_ANY(ta), VARDATA_ANY(tb), Min(la, lb));

	if (c == 0)
		c = (la > lb) - (la < lb);
	if ((Pointer) ta != DatumGetPointer(a))
		pfree(ta);
	if ((Pointer) tb != DatumGetPointer(b))
		pfree(tb);
	return c;
}

/*
 * The distinct key that the inner row's key value equals, found from d,
 * whose words the index entry had; -1 if none.  For text, d stands for
 * every distinct key of its words: the one of equal bytes is the match.
 */
static int
inner_key_is(GbtJoinState *st, Datum value, int d)
{
	uint64		w[GBT_MAX_KEY_WORDS];
	uint16		flags;
	bool		isnull = false;
	ItemPointerData none = {0};

	if (!st->wide)
		return gbt_datum_to_key(value, st->inner_keytype, NULL) == st->dkey[d] ? d : -1;
	if (st->text_key)
	{
		/*
		 * Equal values have equal words, so the value is one of those of
		 * d's words or none: their bytes decide, with no encoding.
		 */
		const uint64 *dw = DKEY(st, d);
		int			first = d;

		if (!st->dtie[d])
			return text_values_equal(value, st->dvalue[d]) ? d : -1;
		while (first > 0 && gbt_words_cmp(DKEY(st, first - 1), dw, st->nw) == 0)
			first--;
		for (d = first; d < st->ndistinct && gbt_words_cmp(DKEY(st, d), dw, st->nw) == 0; d++)
			if (text_values_equal(value, st->dvalue[d]))
				return d;
		return -1;
	}
	if (st->prefix_bits > 0)
		return prefix_words(st, value, st->inner_keytype, w) &&
			gbt_words_cmp(w, DKEY(st, d), st->nw) == 0 ? d : -1;
	(void) gbt_wide_encode(st->info, &value, &isnull, &none, w, &flags);
	return gbt_words_cmp(w, DKEY(st, d), st->nw) == 0 ? d : -1;
}

/*
 * A semi or anti join on the key alone has no more use for an entry of
 * distinct key d once d matched; not so for a text key whose words tie
 * with another's, since the entry may be the other's.
 */
static inline bool
matched_already(GbtJoinState *st, int d)
{
	return st->semi_anti && st->dmatched[d] && !(st->text_key && st->dtie[d]);
}

/* an entry found, of distinct key d: kept, packed with its TID */
static inline void
keep_match(GbtJoinState *st, uint64 tid, int d)
{
	/* every entry's key is one the batch asked for */
	if (d < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" returned a key that was not looked up",
						RelationGetRelationName(st->index))));
	st->matches[st->nmatches++] = pack_match(tid, d);
}

static void chunk_visibility(GbtJoinState *st, int n);

/* room for n more matches */
static void
grow_matches(GbtJoinState *st, int n)
{
	if (st->nmatches + n > st->maxmatches)
	{
		int64		newmax = Max(st->maxmatches * 2, st->nmatches + n);

		st->matches = repalloc_huge(st->matches, sizeof(uint64) * newmax);
		st->maxmatches = newmax;
	}
}

/* GbtEntrySink: keep the batch's entries, each with its distinct key */
static void
join_entries(void *arg, GbtEntry *entries, int n, bool all_read)
{
	GbtJoinState *st = (GbtJoinState *) arg;
	bool		desc = st->info->desc;

	grow_matches(st, n);
	for (int i = 0; i < n; i++)
	{
		uint64		key = desc ? ~entries[i].key : entries[i].key;

		keep_match(st, entries[i].tid, find_distinct(st, &key));
	}
	if (all_read && st->nmatches == n)
		st->gpu_batches++;
	chunk_visibility(st, n);
}

/* GbtWideItemSink: join_entries for multi-word keys, stored as compared */
static void
join_items(void *arg, const uint64 *items, int n, bool all_read)
{
	GbtJoinState *st = (GbtJoinState *) arg;
	int			nw = st->nw;

	grow_matches(st, n);
	for (int i = 0; i < n; i++)
	{
		const uint64 *item = &items[i * (nw + 1)];
		uint64		lead[GBT_MAX_KEY_WORDS];

		if (st->prefix_bits > 0)
		{
			/* the entry's leading column alone is the join key */
			prefix_of(st, item, lead);
			item = lead;
		}
		keep_match(st, items[i * (nw + 1) + nw], find_distinct(st, item));
	}
	if (all_read && st->nmatches == n)
		st->gpu_batches++;
	chunk_visibility(st, n);
}

/* the matches of the last n entries found */
static void
chunk_visibility(GbtJoinState *st, int n)
{
	/*
	 * When the entry alone can stand for the row, read the visibility map
	 * now, while the scan still keeps VACUUM from removing these entries
	 * (gbt_scan_entries), as an index-only scan does: once the entry is
	 * gone its heap slot may hold another row, on a page all visible
	 * again.  The chunk is sorted by block to read the map once a block.
	 */
	if (st->key_only)
	{
		uint64	   *chunk = st->matches + st->nmatches - n;
		Snapshot	snapshot = st->css.ss.ps.state->es_snapshot;

		gbt_sort_tids(chunk, n);
		for (int i = 0; i < n; i++)
		{
			BlockNumber blk = (BlockNumber) (chunk[i] >> 32);

			if (blk != st->vis_block)
			{
				st->vis_block = blk;
				st->vis_all = VM_ALL_VISIBLE(st->heap, blk, &st->vmbuf);
				if (st->vis_all && st->serializable)
					PredicateLockPage(st->heap, blk, snapshot);
			}
			/* the entry stands for its value only if its words do */
			if (st->vis_all &&
				!(st->text_key && st->dtie[(int) (chunk[i] & (JOIN_MAX_BATCH - 1))]))
				chunk[i] |= JOIN_VISIBLE;
		}
	}
}

/* qsort_arg: two of the batch's keyed rows (words, row << 16) by value */
static int
text_row_cmp(const void *a, const void *b, void *arg)
{
	GbtJoinState *st = (GbtJoinState *) arg;
	int			ra = (int) (((const uint64 *) a)[st->nw] >> 16);
	int			rb = (int) (((const uint64 *) b)[st->nw] >> 16);
	int			c = text_values_cmp(st->keyvals[ra], st->keyvals[rb]);

	return c != 0 ? c : (ra > rb) - (ra < rb);
}

/*
 * The batch's keyed rows sorted by words: each run of equal words sorted
 * again by value, so that each distinct value's rows are together.  Runs
 * of one value (all but values longer than the field) stay as they are.
 */
static void
sort_text_ties(GbtJoinState *st)
{
	int			stride = st->nw + 1;

	for (int i = 0; i < st->nkeys;)
	{
		const uint64 *w = &st->wkeys[(Size) i * stride];
		int			j = i + 1;
		bool		one_value = true;

		while (j < st->nkeys && gbt_words_cmp(&st->wkeys[(Size) j * stride], w, st->nw) == 0)
		{
			if (one_value &&
				!text_values_equal(st->keyvals[(int) (w[st->nw] >> 16)],
								   st->keyvals[(int) (st->wkeys[(Size) j * stride + st->nw] >> 16)]))
				one_value = false;
			j++;
		}
		if (!one_value)
			qsort_arg(&st->wkeys[(Size) i * stride], j - i, sizeof(uint64) * stride,
					  text_row_cmp, st);
		i = j;
	}
}

/*
 * Read the next batch of outer rows, look their distinct keys up in the
 * index and sort the matching TIDs by heap block.  False when the outer
 * side is exhausted and nothing was read.
 */
static bool
load_batch(GbtJoinState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	PlanState  *outer = linitial(st->css.custom_ps);
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	Size		limit = get_hash_memory_limit();
	Size		used = 0;
	int			maxrows = 1024;
	MemoryContext old;
	Datum	   *values;
	int			nvalues = 0;
	ArrayType  *array;
	ScanKeyData sk;
	IndexScanDesc scan;
	int64		entries;

	/* the TIDs outlive the index scan: safe only under MVCC (see header) */
	if (!IsMVCCSnapshot(estate->es_snapshot))
		elog(ERROR, "GbtreeJoin needs an MVCC snapshot");
	MemoryContextReset(st->batchcxt);
	old = MemoryContextSwitchTo(st->batchcxt);
	st->rows = st->key_outer ? NULL : palloc(sizeof(MinimalTuple) * maxrows);
	st->keys = palloc(sizeof(GbtEntry) * maxrows);
	st->keyvals = palloc(sizeof(Datum) * maxrows);
	st->keynull = st->key_outer ? palloc(sizeof(bool) * maxrows) : NULL;
	st->wkeys = st->wide ? palloc(sizeof(uint64) * (st->nw + 1) * maxrows) : NULL;
	st->nrows = 0;
	st->nkeys = 0;
	while (!st->outer_done && st->nrows < Min(gbt_join_batch_size, JOIN_MAX_BATCH) && used < limit)
	{
		TupleTableSlot *slot;
		Datum		key;
		bool		isnull;
		bool		keyed = true;

		/* not in batchcxt: the outer plan allocates for its lifetime */
		MemoryContextSwitchTo(old);
		slot = ExecProcNode(outer);
		MemoryContextSwitchTo(st->batchcxt);
		if (TupIsNull(slot))
		{
			st->outer_done = true;
			break;
		}
		if (st->nrows == maxrows)
		{
			maxrows *= 2;
			if (!st->key_outer)
				st->rows = repalloc_huge(st->rows, sizeof(MinimalTuple) * maxrows);
			else
				st->keynull = repalloc_huge(st->keynull, sizeof(bool) * maxrows);
			st->keys = repalloc_huge(st->keys, sizeof(GbtEntry) * maxrows);
			st->keyvals = repalloc_huge(st->keyvals, sizeof(Datum) * maxrows);
			if (st->wide)
				st->wkeys = repalloc_huge(st->wkeys, sizeof(uint64) * (st->nw + 1) * maxrows);
		}
		used += sizeof(GbtEntry) + sizeof(Datum) + 16;
		if (!st->key_outer)
		{
			st->rows[st->nrows] = ExecCopySlotMinimalTuple(slot);
			used += st->rows[st->nrows]->t_len + sizeof(MinimalTuple);
		}

		/* the key: an outer column, or computed on the outer row alone */
		if (st->outer_key_attno > 0)
			key = slot_getattr(slot, st->outer_key_attno, &isnull);
		else
		{
			econtext->ecxt_scantuple = form_pair(st, st->nrows, false);
			ResetExprContext(econtext);
			key = ExecEvalExprSwitchContext(st->outer_key, econtext, &isnull);
		}
		if (st->key_outer)
		{
			st->keynull[st->nrows] = isnull;
			st->keyvals[st->nrows] = isnull ? (Datum) 0 : key;
			used += sizeof(bool);
		}
		if (!isnull)
		{
			/* a text's with a 4-byte header, which the lookup array wants */
			st->keyvals[st->nrows] = st->text_key ?
				PointerGetDatum(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(key))) :
				datumCopy(key, st->outer_typbyval, st->outer_typlen);
			if (st->wide)
			{
				/* the words as the index stores them (DESC inverted) */
				uint64	   *w = &st->wkeys[(Size) st->nkeys * (st->nw + 1)];
				uint16		flags;
				ItemPointerData none = {0};

				if (st->text_key)
					text_words(st, key, w);
				else if (st->prefix_bits > 0)
					keyed = prefix_words(st, key, st->outer_keytype, w);
				else
					(void) gbt_wide_encode(st->info, &key, &isnull, &none, w, &flags);
				w[st->nw] = (uint64) st->nrows << 16;
				used += sizeof(uint64) * (st->nw + 1);
			}
			else
				st->keys[st->nkeys].key = gbt_datum_to_key(key, st->outer_keytype, NULL);
			/* a key outside the leading column's type equals no entry */
			if (keyed)
			{
				st->keys[st->nkeys].tid = (uint64) st->nrows << 16;
				st->nkeys++;
			}
		}
		st->nrows++;
		if ((st->nrows & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (st->nrows == 0)
	{
		MemoryContextSwitchTo(old);
		return false;
	}
	st->batches++;
	st->outer_rows += st->nrows;
	st->matched = palloc0(sizeof(bool) * st->nrows);
	st->nmatches = 0;
	st->matchpos = 0;
	st->pair = st->pair_end = 0;
	st->emitpos = 0;
	st->ndistinct = 0;
	if (st->nkeys == 0)
	{
		MemoryContextSwitchTo(old);
		return true;
	}

	/* one array element per distinct key, taken from its first outer row */
	values = palloc(sizeof(Datum) * st->nkeys);
	st->dkey = palloc(sizeof(uint64) * st->nw * st->nkeys);
	st->dstart = palloc(sizeof(int) * (st->nkeys + 1));
	if (st->wide)
	{
		int			stride = st->nw + 1;

		/* keys[] in the words' order: each row, and its distinct key */
		gbt_wide_sort_entries(st->wkeys, st->nkeys, st->nw);
		if (st->text_key)
			sort_text_ties(st);
		for (int i = 0; i < st->nkeys; i++)
		{
			const uint64 *w = &st->wkeys[(Size) i * stride];

			if (i == 0 || gbt_words_cmp(w, w - stride, st->nw) != 0 ||
				(st->text_key &&
				 !text_values_equal(st->keyvals[(int) (w[st->nw] >> 16)],
									st->keyvals[(int) ((w - stride)[st->nw] >> 16)])))
			{
				values[nvalues] = st->keyvals[(int) (w[st->nw] >> 16)];
				memcpy(DKEY(st, nvalues), w, sizeof(uint64) * st->nw);
				st->dstart[nvalues] = i;
				nvalues++;
			}
			st->keys[i].key = nvalues - 1;
			st->keys[i].tid = w[st->nw];
		}
		st->dvalue = values;
		if (st->text_key)
		{
			st->dtie = palloc0(sizeof(bool) * Max(nvalues, 1));
			for (int d = 1; d < nvalues; d++)
				if (gbt_words_cmp(DKEY(st, d), DKEY(st, d - 1), st->nw) == 0)
					st->dtie[d] = st->dtie[d - 1] = true;
		}
	}
	else
	{
		gbt_sort_entries(st->keys, st->nkeys);
		for (int i = 0; i < st->nkeys; i++)
		{
			if (i > 0 && st->keys[i].key == st->keys[i - 1].key)
				continue;
			/* key_outer: the key is the value (read in order, not at random) */
			values[nvalues] = st->key_outer ?
				gbt_key_to_datum(st->keys[i].key, 0, st->outer_keytype) :
				st->keyvals[JOIN_ROW(st->keys[i])];
			st->dkey[nvalues] = st->keys[i].key;
			st->dstart[nvalues] = i;
			nvalues++;
		}
	}
	st->dstart[nvalues] = st->nkeys;
	st->ndistinct = nvalues;
	st->dmatched = palloc0(sizeof(bool) * Max(nvalues, 1));
	st->dcursor = 0;
	st->lookup_keys += nvalues;
	array = construct_array(values, nvalues, st->outer_keytype, st->outer_typlen,
							st->outer_typbyval, st->outer_typalign);

	ScanKeyEntryInitialize(&sk, SK_SEARCHARRAY, 1, BTEqualStrategyNumber,
						   st->outer_keytype, st->collation, st->eqproc,
						   PointerGetDatum(array));
	st->maxmatches = Max(nvalues, 1024);
	st->serializable = IsolationIsSerializable();
	st->vis_block = InvalidBlockNumber;
	st->matches = palloc_extended(sizeof(uint64) * st->maxmatches, MCXT_ALLOC_HUGE);
	scan = gbt_index_beginscan(st->heap, st->index, estate->es_snapshot, 1, 0);
	index_rescan(scan, &sk, 1, NULL, 0);
	entries = st->wide ? gbt_wide_scan_items(scan, join_items, st, 1 << 16) :
		gbt_scan_entries(scan, join_entries, st, 1 << 16);
	index_endscan(scan);
	st->entries += entries;
	pgstat_count_index_tuples(st->index, entries);
	/* heap block order */
	gbt_sort_tids(st->matches, (int) st->nmatches);
	st->nblocks = 0;
	for (int64 i = 0; i < st->nmatches; i++)
	{
		if (i == 0 || (st->matches[i] >> 32) != (st->matches[i - 1] >> 32))
			st->nblocks++;
	}

	/*
	 * As GbtreeArrayScan does: a batch whose blocks outnumber
	 * shared_buffers reads through a ring, as a large sequential scan does.
	 */
	if (st->by_block && st->strategy == NULL && st->nblocks > NBuffers)
	{
		MemoryContextSwitchTo(estate->es_query_cxt);
		st->strategy = GetAccessStrategy(BAS_BULKREAD);
	}
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * The next index entry's inner row and the batch's outer rows of its key.
 * When the join needs no inner column but the key and the visibility map
 * calls the entry's heap block all visible, the entry alone is the row (as
 * in an index-only scan); otherwise the heap tuple is fetched, and counts
 * only if the snapshot sees it and its key is the entry's.  False when the
 * batch's entries are done.
 */
static bool
next_inner(GbtJoinState *st)
{
	Snapshot	snapshot = st->css.ss.ps.state->es_snapshot;

	st->pair_formed = false;
	for (;;)
	{
		uint64		m;
		BlockNumber blk;
		OffsetNumber off;
		int			d;
		ItemPointerData tid;
		bool		call_again = false;
		bool		all_dead = false;
		Datum		value;
		bool		isnull;

		/* the visible tuples of the block read last */
		while (st->bpos < st->block.n)
		{
			d = st->bd[st->bpos];
			if (matched_already(st, d))
			{
				st->bpos++;
				continue;
			}
			gbt_heap_block_store(&st->block, st->bpos++, st->heapslot);
			value = slot_getattr(st->heapslot, st->inner_keyattno, &isnull);
			if (isnull || (d = inner_key_is(st, value, d)) < 0)
				continue;
			st->inner_from_key = false;
			st->pair = st->dstart[d];
			st->pair_end = st->dstart[d + 1];
			st->pair_d = d;
			return true;
		}

		if (st->matchpos >= st->nmatches)
			return false;
		m = st->matches[st->matchpos];
		blk = (BlockNumber) (m >> 32);
		off = (OffsetNumber) ((m >> JOIN_OFFSET_SHIFT) & ((1 << JOIN_OFFSET_BITS) - 1));
		d = (int) (m & (JOIN_MAX_BATCH - 1));

		/*
		 * The entries come in heap order, so their distinct keys (and the
		 * keys' outer rows) are read at random: fetch those of the entries
		 * a little ahead into the cache.
		 */
		if (st->matchpos + 16 < st->nmatches)
		{
			int			ahead = (int) (st->matches[st->matchpos + 16] & (JOIN_MAX_BATCH - 1));

			__builtin_prefetch(DKEY(st, ahead));
			__builtin_prefetch(&st->dstart[ahead]);
			if (st->semi_anti)
				__builtin_prefetch(&st->dmatched[ahead]);
		}

		if ((st->matchpos & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		/* a semi or anti join on the key alone needs one row per key */
		if (matched_already(st, d))
		{
			st->matchpos++;
			continue;
		}
		if (m & JOIN_VISIBLE)
		{
			/* key_only, all visible when the index gave it */
			st->matchpos++;
			st->visible_entries++;
			st->inner_from_key = true;
			/* a multi-word key (uuid) is the value its outer rows gave */
			st->inner_key_datum = st->wide ? st->dvalue[d] :
				gbt_key_to_datum(st->dkey[d],
								 (m & JOIN_NEGZERO) ? GBT_TID_FLAG_NEGZERO : 0,
								 st->inner_keytype);
			st->pair = st->dstart[d];
			st->pair_end = st->dstart[d + 1];
			st->pair_d = d;
			return true;
		}
		if (st->by_block)
		{
			/*
			 * Resolve the block's entries (up to one that stands for its
			 * row) under one share lock: each one's HOT chain is searched
			 * under the snapshot, with the predicate lock an index scan
			 * takes.  Its visible tuples are then paired, with the pin.
			 */
			gbt_heap_block_lock(&st->block,
								ReadBufferExtended(st->heap, MAIN_FORKNUM, blk, RBM_NORMAL,
												   st->strategy));
			st->bpos = 0;
			while (st->matchpos < st->nmatches)
			{
				m = st->matches[st->matchpos];
				if ((BlockNumber) (m >> 32) != blk || (m & JOIN_VISIBLE))
					break;
				st->matchpos++;
				d = (int) (m & (JOIN_MAX_BATCH - 1));
				if (matched_already(st, d))
					continue;
				st->heap_fetches++;
				if (gbt_heap_block_search(&st->block,
										  (OffsetNumber) ((m >> JOIN_OFFSET_SHIFT) & ((1 << JOIN_OFFSET_BITS) - 1)),
										  snapshot))
				{
					st->bd[st->block.n - 1] = d;
					/* its distinct key is read when it pairs, soon */
					__builtin_prefetch(DKEY(st, d));
					__builtin_prefetch(&st->dstart[d]);
				}
			}
			gbt_heap_block_unlock(&st->block);
			continue;
		}

		st->matchpos++;
		st->inner_from_key = false;
		if (st->fetch == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(st->css.ss.ps.state->es_query_cxt);

			st->fetch = table_index_fetch_begin(st->heap);
			MemoryContextSwitchTo(old);
		}
		ItemPointerSet(&tid, blk, off);
		st->heap_fetches++;
		if (!table_index_fetch_tuple(st->fetch, &tid, snapshot, st->heapslot,
									 &call_again, &all_dead))
			continue;
		pgstat_count_heap_fetch(st->index);
		value = slot_getattr(st->heapslot, st->inner_keyattno, &isnull);
		if (isnull || (d = inner_key_is(st, value, d)) < 0)
			continue;
		st->pair = st->dstart[d];
		st->pair_end = st->dstart[d + 1];
		st->pair_d = d;
		return true;
	}
}

static TupleTableSlot *
join_next(ScanState *node)
{
	GbtJoinState *st = (GbtJoinState *) node;
	ExprContext *econtext = node->ps.ps_ExprContext;

	for (;;)
	{
		switch (st->phase)
		{
			case GBT_JOIN_LOAD:
				if (!load_batch(st))
				{
					st->phase = GBT_JOIN_DONE;
					break;
				}
				st->phase = GBT_JOIN_PAIRS;
				break;

			case GBT_JOIN_PAIRS:
				if ((st->jointype == JOIN_SEMI || st->jointype == JOIN_ANTI) &&
					st->key_clause_only && st->pair < st->pair_end)
				{
					/* equal normalized keys satisfy the key clause */
					for (; st->pair < st->pair_end; st->pair++)
						st->matched[JOIN_ROW(st->keys[st->pair])] = true;
					st->dmatched[st->pair_d] = true;
				}
				if (st->jointype == JOIN_INNER && st->key_clause_only &&
					st->pair < st->pair_end)
				{
					/*
					 * Equal normalized keys satisfy the key clause, the only
					 * qual: every outer row of the key pairs.  With key_outer
					 * they are all one value, one pair returned as often.
					 */
					if (st->key_outer)
					{
						if (!st->pair_formed)
						{
							form_key_pair(st);
							st->pair_formed = true;
						}
						st->pair++;
						return st->css.ss.ss_ScanTupleSlot;
					}
					return form_pair(st, JOIN_ROW(st->keys[st->pair++]), true);
				}
				while (st->pair < st->pair_end)
				{
					int			row = JOIN_ROW(st->keys[st->pair++]);
					TupleTableSlot *pair;

					if ((st->jointype == JOIN_SEMI || st->jointype == JOIN_ANTI) &&
						st->matched[row])
						continue;
					pair = form_pair(st, row, true);
					econtext->ecxt_scantuple = pair;
					ResetExprContext(econtext);
					if (!ExecQual(st->match, econtext))
						continue;
					if (st->jointype == JOIN_INNER)
						return pair;
					st->matched[row] = true;
					if (st->jointype == JOIN_LEFT)
						return pair;
				}
				if (!next_inner(st))
					st->phase = st->jointype == JOIN_INNER ? GBT_JOIN_LOAD : GBT_JOIN_EMIT;
				break;

			case GBT_JOIN_EMIT:
				while (st->emitpos < st->nrows)
				{
					int			row = st->emitpos++;

					if (st->matched[row] == (st->jointype == JOIN_SEMI))
						return form_pair(st, row, false);
				}
				st->phase = GBT_JOIN_LOAD;
				break;

			case GBT_JOIN_DONE:
				return ExecClearTuple(node->ss_ScanTupleSlot);
		}
	}
}

/* never reached: plans EvalPlanQual could recheck do not get the path */
static bool
join_recheck(ScanState *node, TupleTableSlot *slot)
{
	return false;
}

static TupleTableSlot *
join_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, join_next, join_recheck);
}

static void
join_rescan(CustomScanState *node)
{
	GbtJoinState *st = (GbtJoinState *) node;
	PlanState  *outer = linitial(node->custom_ps);

	if (outer->chgParam == NULL)
		ExecReScan(outer);
	MemoryContextReset(st->batchcxt);
	st->rows = NULL;
	st->keys = NULL;
	st->wkeys = NULL;
	st->dvalue = NULL;
	st->dtie = NULL;
	st->matches = NULL;
	st->nrows = st->nkeys = st->ndistinct = 0;
	st->nmatches = st->matchpos = 0;
	st->pair = st->pair_end = st->emitpos = 0;
	gbt_heap_block_release(&st->block);
	st->bpos = 0;
	st->outer_done = false;
	st->phase = GBT_JOIN_LOAD;
	ExecScanReScan(&node->ss);
}

static void
join_end(CustomScanState *node)
{
	GbtJoinState *st = (GbtJoinState *) node;

	ExecEndNode(linitial(node->custom_ps));
	if (st->fetch)
		table_index_fetch_end(st->fetch);
	if (BufferIsValid(st->vmbuf))
		ReleaseBuffer(st->vmbuf);
	gbt_heap_block_release(&st->block);
	if (st->strategy)
		FreeAccessStrategy(st->strategy);
	if (st->index)
		index_close(st->index, NoLock);
}

static void
join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GbtJoinState *st = (GbtJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	const char *jt;
	bool		useprefix;

	switch (st->jointype)
	{
		case JOIN_LEFT:
			jt = "Left";
			break;
		case JOIN_SEMI:
			jt = "Semi";
			break;
		case JOIN_ANTI:
			jt = "Anti";
			break;
		default:
			jt = "Inner";
			break;
	}
	ExplainPropertyText("Join Type", jt, es);
	ExplainPropertyText("Index Name", get_rel_name(intVal(linitial(cscan->custom_private))), es);
	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	useprefix = es->verbose || list_length(es->rtable) > 1;
	/* the key clause comes first among the pair's quals */
	ExplainPropertyText("Join Cond",
						deparse_expression((Node *) lsecond(cscan->custom_exprs),
										   context, useprefix, false), es);
	if (list_length(cscan->custom_exprs) > 2)
		ExplainPropertyText("Join Filter",
							deparse_expression((Node *) make_ands_explicit(list_copy_tail(cscan->custom_exprs, 2)),
											   context, useprefix, false), es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Batches", NULL, st->batches, es);
		ExplainPropertyInteger("GPU Batches", NULL, st->gpu_batches, es);
		ExplainPropertyInteger("Outer Rows", NULL, st->outer_rows, es);
		ExplainPropertyInteger("Lookup Keys", NULL, st->lookup_keys, es);
		ExplainPropertyInteger("Index Entries", NULL, st->entries, es);
		ExplainPropertyInteger("Heap Fetches", NULL, st->heap_fetches, es);
		if (st->key_only)
			ExplainPropertyInteger("All-Visible Entries", NULL, st->visible_entries, es);
	}
}

void
gbt_join_init(void)
{
	DefineCustomBoolVariable("gbtree.enable_join",
							 "Lets the planner join through a gbtree index in batches of outer rows.",
							 "An inner, left, semi or anti join on a gbtree index's column can run as a Custom Scan "
							 "(GbtreeJoin) that looks up a batch of outer keys at once.",
							 &gbt_enable_join,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("gbtree.join_batch_size",
							"Most outer rows a GbtreeJoin looks up at once.",
							"A batch also stops at hash_mem (work_mem times hash_mem_multiplier) of outer rows.",
							&gbt_join_batch_size,
							JOIN_MAX_BATCH, 1, JOIN_MAX_BATCH,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
	RegisterCustomScanMethods(&gbt_join_scan_methods);
	gbt_join_plan_init();
}
