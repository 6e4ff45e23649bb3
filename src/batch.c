/*-------------------------------------------------------------------------
 *
 * batch.c
 *	  The insert batch: the index entries a transaction makes are gathered
 *	  per index in the backend, and sorted and merged into the leaves at
 *	  once (insert.c, gbt_insert_sorted) when they must reach the pages.
 *
 * Pending entries belong to the transaction that made them, and nobody
 * else may see them before it commits, so they must reach the pages
 *	- before this backend scans the index: any statement whose plan names
 *	  the table (ExecutorStart; an INSERT's own target does not count, it
 *	  is not read), any index scan start (planner probes, C callers),
 *	  gbtree_check(), VACUUM;
 *	- before any utility statement but transaction control (TRUNCATE,
 *	  REINDEX, CLUSTER, ALTER ... SET TABLESPACE, DROP, COPY ...: nothing
 *	  that replaces or copies the index's storage can miss them);
 *	- before COMMIT and PREPARE TRANSACTION;
 *	- when they fill gbtree.insert_batch_memory.
 * They are dropped when their (sub)transaction aborts: their heap tuples
 * are dead, and may be pruned and their line pointers reused before any
 * VACUUM would see index entries for them.  A subtransaction's start
 * records where each batch stands (GbtSubxactMark) and ROLLBACK TO cuts
 * the batches back to it; it does not flush, because an error at a
 * subtransaction's start cannot be rolled back cleanly.  A crash loses
 * nothing, since no pending entry belongs to a committed transaction.
 *
 * A flush that fails midway leaves part of its entries in the index, and
 * all of them in the batch, in their order.  Those of the aborting
 * subtransaction are as harmless there as any aborted insert's; those of
 * an enclosing one stay pending, and the next flush skips the ones
 * already in the pages.
 *
 * Not batched: indexes of exclusion constraints (another backend's
 * dirty-snapshot check must find an uncommitted conflicting entry),
 * statements with ON CONFLICT (a speculative insertion that loses its race
 * kills its tuple at once, while the transaction goes on), and
 * transactions without an xid (see gbt_batch_accepts).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_wide.h"

/* Pending entries of one index */
typedef struct GbtBatch
{
	Oid			indexoid;
	Oid			heapoid;
	GbtStorage node;			/* the storage they were made for */
	GbtStorage heapnode;		/* the table's storage, with their tuples */
	GbtEntry   *values;			/* entries of the value tree */
	Size		nvalues;
	Size		maxvalues;
	GbtEntry   *nulls;			/* entries of the NULL tree (key 0) */
	Size		nnulls;
	Size		maxnulls;
	bool		partial;		/* a flush of them began and did not end */
	bool		unique;			/* a unique index's: checked again at the flush */
	uint64		unique_stmt;	/* the statement that inserted into it last */
	uint64		epoch;			/* new whenever the arrays start empty (made or
								 * emptied), unique in the backend */
} GbtBatch;

/*
 * Where the batches stood when a subtransaction began: ROLLBACK TO drops
 * what came after.  Entries are appended in time order and kept in that
 * order until a flush has put them all in the pages, so what a
 * subtransaction (and its children) added is the tail of each array, or
 * the whole of it if the arrays were emptied since.
 */
typedef struct GbtBatchMark
{
	Oid			indexoid;
	uint64		epoch;
	Size		nvalues;
	Size		nnulls;
} GbtBatchMark;

typedef struct GbtSubxactMark
{
	SubTransactionId subid;
	int			nmarks;
	GbtBatchMark *marks;
	struct GbtSubxactMark *next;	/* the enclosing subtransaction's */
} GbtSubxactMark;

/* gbtree.insert_batch_memory, in kB; 0 turns batching off */
int			gbt_insert_batch_memory = 65536;

static MemoryContext batch_cxt = NULL;
static GbtBatch *batches = NULL;
static int	nbatches = 0;
static int	maxbatches = 0;
static Size batch_bytes = 0;	/* entry arrays allocated */
static GbtSubxactMark *subxact_marks = NULL;	/* innermost first */
static int	batch_paused = 0;	/* statements running that must not batch */
static uint64 batch_epochs = 0;
static bool batch_closed = false;	/* this transaction's flush at commit is done */
static bool batch_flushing = false;
static bool unique_pending = false;	/* a unique index's entries may wait */
static uint64 unique_stmt = 1;	/* new at every statement's start and end */

/*
 * What a flush may fit to fewer words (gbt_wide_refit_first): the index
 * whose inserting statement holds it open and, if a full batch made the
 * flush, the entry that found it full, not in the batch yet.
 */
static Oid	held_index = InvalidOid;
static uint64 held_stmt = 0;	/* or the unique indexes this statement inserted into */
static const uint64 *adding_words = NULL;
static int	adding_tlen = 0;
static bool adding_null = false;

static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorEnd_hook_type prev_executor_end = NULL;
static ExecutorFinish_hook_type prev_executor_finish = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;

#define GBT_BATCH_MIN_ENTRIES	256

static GbtBatch *batch_for(Relation index, Relation heap);

static Size
batch_limit_bytes(void)
{
	return (Size) gbt_insert_batch_memory * 1024;
}

/* Forget every pending entry (their transaction is over or aborted). */
static void
batch_discard_all(void)
{
	if (batch_cxt != NULL && batches != NULL)
		MemoryContextReset(batch_cxt);
	batches = NULL;
	nbatches = 0;
	maxbatches = 0;
	batch_bytes = 0;
}

static void
batch_free_entries(GbtBatch *b)
{
	if (b->values)
		pfree(b->values);
	if (b->nulls)
		pfree(b->nulls);
	batch_bytes -= (b->maxvalues + b->maxnulls) * sizeof(GbtEntry);
	b->values = b->nulls = NULL;
	b->nvalues = b->maxvalues = b->nnulls = b->maxnulls = 0;
	b->partial = false;
	b->epoch = ++batch_epochs;
}

/*
 * A sorted copy of n entries (palloc'd in the current context): the batch
 * keeps its insertion order until the flush is done (see GbtSubxactMark).
 */
static GbtEntry *
sorted_copy(const GbtEntry *in, Size n)
{
	GbtEntry   *e = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(GbtEntry) * Max(n, 1));

	memcpy(e, in, sizeof(GbtEntry) * n);
	gbt_sort_entries(e, n);
	return e;
}

/*
 * Merge n pending entries into the tree under root: sorted on the GPU,
 * with each entry's leaf found there, for a large batch when the GPU
 * service can (gpu_lookup.c, "Batched inserts on the GPU"); else sorted
 * here.
 */
static void
flush_tree(Relation index, Relation heap, BlockNumber root, const GbtEntry *pending, Size n,
		   bool dedup)
{
	GbtEntry   *e;
	BlockNumber *leaves = NULL;

	if (heap != NULL && n == 1 && !dedup)
	{
		/* a one-row statement's: as an insert at once would go */
		gbt_insert_unique(index, heap, UNIQUE_CHECK_YES, root, pending[0].key, pending[0].tid,
						  NULL, NULL);
		return;
	}
	if (gbt_gpu_merge_wanted(index, n))
	{
		e = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(GbtEntry) * n);
		leaves = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(BlockNumber) * n);
		if (!gbt_gpu_merge_plan(index, root, pending, n, e, leaves))
		{
			pfree(e);
			pfree(leaves);
			leaves = NULL;
			e = sorted_copy(pending, n);
		}
	}
	else
		e = sorted_copy(pending, n);
	if (leaves)
	{
		uint64		hinted = 0;
		uint64		descended = 0;

		gbt_insert_sorted(index, heap, root, e, n, dedup, leaves, &hinted, &descended);
		gbt_gpu_merge_done(hinted, descended);
		pfree(leaves);
	}
	else
		gbt_insert_sorted(index, heap, root, e, n, dedup, NULL, NULL, NULL);
	pfree(e);
}

/* The storage of the table heapoid (heap, if the caller has it open) */
static GbtStorage
table_storage(Oid heapoid, Relation heap)
{
	GbtStorage node;

	if (heap)
		return gbt_rel_storage(heap);
	heap = relation_open(heapoid, AccessShareLock);
	node = gbt_rel_storage(heap);
	relation_close(heap, AccessShareLock);
	return node;
}

/*
 * The index's storage is no longer the one b's entries were made for: do
 * they follow it?  If the table's storage is still the one holding their
 * tuples, the index was moved with its contents and they go where it went.
 * That happens behind this backend's back: DML holds an index's lock only
 * while its statement runs (ExecCloseIndices releases it; the table's lock
 * stays to the end of the transaction), and ALTER INDEX ... SET TABLESPACE
 * locks the index alone, so it can copy the index between an INSERT and
 * the flush at COMMIT.  Nothing that rebuilds an index can run meanwhile,
 * since it locks the table, but the entries are merged skipping those
 * already present (partial) all the same.  If the table's storage changed
 * too (a TRUNCATE run without a utility statement, as a replicated one
 * is), their tuples went with it and the entries go too.  heap: the
 * table, if the caller has it open (the index is, so the table exists).
 */
static bool
batch_follows_storage(GbtBatch *b, Relation index, Relation heap)
{
	if (!gbt_storage_equals(table_storage(b->heapoid, heap), b->heapnode))
		return false;
	b->node = gbt_rel_storage(index);
	b->partial = true;
	return true;
}

/*
 * Merge one index's pending entries into its pages: into its current
 * storage if it moved (batch_follows_storage); dropped if their table's
 * storage was replaced, or the index was dropped meanwhile.
 */
static void
batch_flush(GbtBatch *b)
{
	Relation	index,
				heap;
	bool		dedup;

	if (b->nvalues == 0 && b->nnulls == 0)
		return;
	index = try_relation_open(b->indexoid, RowExclusiveLock);
	if (index != NULL &&
		(index->rd_rel->relkind != RELKIND_INDEX ||
		 (!gbt_storage_equals(gbt_rel_storage(index), b->node) &&
		  !batch_follows_storage(b, index, NULL))))
	{
		relation_close(index, RowExclusiveLock);
		index = NULL;
	}
	if (index == NULL)
	{
		batch_free_entries(b);
		return;
	}
	dedup = b->partial;

	b->partial = true;
	/* a unique index's entries, all of the value tree, are checked again */
	heap = b->unique ? table_open(b->heapoid, RowExclusiveLock) : NULL;
	if (gbt_index_info(index)->wide)
	{
		/* the first entries of a new index may fit its text to fewer words */
		if (!dedup && subxact_marks == NULL)
			(void) gbt_wide_refit_first(index, b->heapoid,
										b->indexoid == held_index ||
										(held_stmt != 0 && b->unique_stmt == held_stmt) ? 2 : 1,
										(uint64 *) b->values, &b->nvalues,
										(uint64 *) b->nulls, &b->nnulls,
										b->indexoid == held_index ? adding_words : NULL,
										adding_tlen, adding_null);
		/* multi-word entries, several slots each (gbt_batch_add_words) */
		if (b->nvalues > 0)
			gbt_wide_insert_batch(index, heap, GBT_ROOT_BLKNO, (uint64 *) b->values, b->nvalues,
								  dedup);
		if (b->nnulls > 0)
			gbt_wide_insert_batch(index, NULL, GBT_NULLROOT_BLKNO, (uint64 *) b->nulls,
								  b->nnulls, dedup);
	}
	else
	{
		if (b->nvalues > 0)
			flush_tree(index, heap, GBT_ROOT_BLKNO, b->values, b->nvalues, dedup);
		if (b->nnulls > 0)
			flush_tree(index, NULL, GBT_NULLROOT_BLKNO, b->nulls, b->nnulls, dedup);
	}
	if (heap != NULL)
		table_close(heap, RowExclusiveLock);
	batch_free_entries(b);		/* the flush ended: partial no more */
	relation_close(index, RowExclusiveLock);
}

/*
 * Flush the batches that match (all when indexoid and heapoid are invalid;
 * only unique indexes' when unique_only).
 */
static void
batch_flush_matching(Oid indexoid, List *heapoids, bool unique_only)
{
	int			i;

	if (nbatches == 0 || batch_flushing)
		return;
	batch_flushing = true;
	PG_TRY();
	{
		for (i = 0; i < nbatches; i++)
		{
			GbtBatch   *b = &batches[i];

			if (OidIsValid(indexoid) && b->indexoid != indexoid)
				continue;
			if (heapoids != NIL && !list_member_oid(heapoids, b->heapoid))
				continue;
			if (unique_only && !b->unique)
				continue;
			batch_flush(b);
		}
	}
	PG_FINALLY();
	{
		batch_flushing = false;
	}
	PG_END_TRY();

	/* drop the emptied batches, keeping the others in place */
	{
		int			kept = 0;

		for (i = 0; i < nbatches; i++)
		{
			if (batches[i].nvalues == 0 && batches[i].nnulls == 0 && !batches[i].partial)
			{
				batch_free_entries(&batches[i]);
				continue;
			}
			batches[kept++] = batches[i];
		}
		nbatches = kept;
	}
}

void
gbt_batch_flush_all(void)
{
	batch_flush_matching(InvalidOid, NIL, false);
}

/*
 * A statement's end (ExecutorFinish, COPY): unique indexes' entries go in,
 * so that its duplicates fail it and other backends' checks meet its
 * entries (and wait for its transaction) from then on, as nbtree's would.
 */
static void
batch_flush_unique(bool executor_finish)
{
	uint64		finishing = unique_stmt;

	unique_stmt++;
	if (unique_pending)
	{
		/*
		 * The finishing statement's executor still has open the indexes it
		 * inserted into, if it began nothing since (held_stmt).
		 */
		held_stmt = executor_finish ? finishing : 0;
		PG_TRY();
		{
			batch_flush_matching(InvalidOid, NIL, true);
		}
		PG_FINALLY();
		{
			held_stmt = 0;
		}
		PG_END_TRY();
		unique_pending = false;
		for (int i = 0; i < nbatches; i++)
			if (batches[i].unique && batches[i].nvalues > 0)
				unique_pending = true;
	}
}

void
gbt_batch_flush_index(Oid indexoid)
{
	if (nbatches > 0)
		batch_flush_matching(indexoid, NIL, false);
}

/*
 * The same at the end of the statement that inserted into index (17+), which
 * holds it open: that reference does not keep the flush from fitting a new
 * index's words.
 */
void
gbt_batch_flush_inserted(Relation index)
{
	if (nbatches == 0)
		return;
	held_index = RelationGetRelid(index);
	PG_TRY();
	{
		batch_flush_matching(held_index, NIL, false);
	}
	PG_FINALLY();
	{
		held_index = InvalidOid;
	}
	PG_END_TRY();
}

/*
 * The index is being built afresh by this backend: its pending entries go.
 * A utility statement that rebuilds it (REINDEX, TRUNCATE, ...) flushed
 * them first, so this only meets a rebuild that bypasses the hook: a
 * second TRUNCATE replayed by logical replication in one transaction
 * truncates the index in place (no new relfilenode to notice), and the
 * entries pending from before it are of tuples that are gone.  A rebuild
 * that kept those tuples would have indexed them itself.
 */
void
gbt_batch_forget_index(Oid indexoid)
{
	for (int i = 0; i < nbatches; i++)
		if (batches[i].indexoid == indexoid)
			batch_free_entries(&batches[i]);
}

/*
 * Should a unique index's entry wait in the batch?  Only where any entry
 * may (gbt_batch_accepts), and not the statement's first: it goes in at once, checked, as
 * nbtree's would, so a one-row statement descends once, as before.  The
 * later ones wait, each checked as it comes (so the statement fails at
 * the same row as btree's, before later rows change what the check sees:
 * an UPDATE that moves keys onto each other's) and again at the flush.
 * (Checking the first at the flush alone would let UPDATE t SET k = k + 1
 * through where btree fails at its first row.)  The cost: in an empty
 * index the first entry may lie right of the rest, whose run then makes
 * merge splits rather than append splits.
 */
bool
gbt_batch_unique_defers(Relation index, Relation heap, IndexInfo *indexInfo)
{
	GbtBatch   *b;

	if (!gbt_batch_accepts(index, indexInfo))
		return false;
	b = batch_for(index, heap);
	if (b->unique_stmt == unique_stmt)
		return true;
	b->unique_stmt = unique_stmt;
	return false;
}

/*
 * May this insert wait in the batch?  Not in a transaction without an xid:
 * that is an index build's validation pass (CREATE INDEX / REINDEX
 * CONCURRENTLY's validate_index inserts the entries the build missed and
 * writes no heap tuple), whose flush at commit would come after its
 * snapshot is gone, with nothing holding back the horizon that lets
 * VACUUM recycle deleted pages under its descents.  Its entries go in at
 * once, while the snapshot is held.
 */
bool
gbt_batch_accepts(Relation index, IndexInfo *indexInfo)
{
	return gbt_insert_batch_memory > 0 &&
		TransactionIdIsValid(GetTopTransactionIdIfAny()) &&
		!batch_closed &&
		batch_paused == 0 &&
		indexInfo != NULL &&
		indexInfo->ii_ExclusionOps == NULL &&
		!IsInParallelMode() &&
		IsTransactionState();
}

static GbtBatch *
batch_for(Relation index, Relation heap)
{
	Oid			indexoid = RelationGetRelid(index);
	GbtBatch   *b;

	for (int i = nbatches - 1; i >= 0; i--)
	{
		b = &batches[i];
		if (b->indexoid != indexoid)
			continue;
		if (!gbt_storage_equals(b->node, gbt_rel_storage(index)) &&
			!batch_follows_storage(b, index, heap))
		{
			/* their tuples are gone with the table's old storage */
			batch_free_entries(b);
			b->node = gbt_rel_storage(index);
			b->heapnode = table_storage(b->heapoid, heap);
		}
		return b;
	}

	if (batch_cxt == NULL)
		batch_cxt = AllocSetContextCreate(TopMemoryContext, "gbtree insert batch",
										  ALLOCSET_DEFAULT_SIZES);
	if (nbatches >= maxbatches)
	{
		int			newmax = Max(4, maxbatches * 2);

		if (batches == NULL)
			batches = MemoryContextAlloc(batch_cxt, sizeof(GbtBatch) * newmax);
		else
			batches = repalloc(batches, sizeof(GbtBatch) * newmax);
		maxbatches = newmax;
	}
	b = &batches[nbatches++];
	memset(b, 0, sizeof(GbtBatch));
	b->indexoid = indexoid;
	b->epoch = ++batch_epochs;
	b->heapoid = heap ? RelationGetRelid(heap) : index->rd_index->indrelid;
	b->unique = index->rd_index->indisunique;
	b->node = gbt_rel_storage(index);
	b->heapnode = table_storage(b->heapoid, heap);
	return b;
}

/*
 * Make room for slots more entries of the tree isnull says (a multi-word
 * entry takes several, gbt_wide_batch_slots); false: over the limit.
 */
static bool
batch_grow(GbtBatch *b, bool isnull, Size slots)
{
	GbtEntry  **arr = isnull ? &b->nulls : &b->values;
	Size		n = isnull ? b->nnulls : b->nvalues;
	Size	   *max = isnull ? &b->maxnulls : &b->maxvalues;
	Size		newmax;

	if (n + slots <= *max)
		return true;
	newmax = Max(GBT_BATCH_MIN_ENTRIES, *max * 2);
	if (batch_bytes + (newmax - *max) * sizeof(GbtEntry) > batch_limit_bytes())
	{
		/* what the limit still allows, if that is more than we have */
		Size		room = batch_limit_bytes() > batch_bytes ?
			(batch_limit_bytes() - batch_bytes) / sizeof(GbtEntry) : 0;

		if (n + slots > *max + room)
			return false;
		newmax = *max + room;
	}
	if (*arr == NULL)
		*arr = MemoryContextAllocHuge(batch_cxt, newmax * sizeof(GbtEntry));
	else
		*arr = repalloc_huge(*arr, newmax * sizeof(GbtEntry));
	batch_bytes += (newmax - *max) * sizeof(GbtEntry);
	*max = newmax;
	return true;
}

/* Keep an entry for later (gbt_batch_accepts said yes). */
void
gbt_batch_add(Relation index, Relation heap, bool isnull, uint64 key, uint64 tid)
{
	GbtBatch   *b;
	GbtEntry   *slot;

	b = batch_for(index, heap);
	if (!batch_grow(b, isnull, 1))
	{
		/* full: everything pending goes in, and the batch starts afresh */
		gbt_batch_flush_all();
		b = batch_for(index, heap);
		if (!batch_grow(b, isnull, 1))
		{
			/* a limit below one chunk: no batching */
			GbtEntry	one;

			one.key = key;
			one.tid = tid;
			if (b->unique)
				gbt_insert_unique(index, heap, UNIQUE_CHECK_YES, GBT_ROOT_BLKNO, key, tid, NULL,
								  NULL);
			else
				gbt_insert_sorted(index, NULL, isnull ? GBT_NULLROOT_BLKNO : GBT_ROOT_BLKNO,
								  &one, 1, false, NULL, NULL, NULL);
			return;
		}
	}
	slot = isnull ? &b->nulls[b->nnulls++] : &b->values[b->nvalues++];
	slot->key = key;
	slot->tid = tid;
	unique_pending |= b->unique;
}

/*
 * The same for an entry of a multi-word index: its nw words, TID, tail
 * length and tail fill gbt_wide_batch_slots(nw, tail.len) consecutive
 * slots of the arrays, so the counts (and the subtransactions' marks) stay
 * in slots and every cut falls between entries.  isnull: the tree of NULLs
 * (one-column indexes).
 */
void
gbt_batch_add_words(Relation index, Relation heap, bool isnull, const uint64 *words, int nw,
					GbtTail tail, uint64 tid)
{
	Size		slots = gbt_wide_batch_slots(nw, tail.len);
	GbtBatch   *b;
	uint64	   *at;
	uint64		refit[GBT_MAX_KEY_WORDS];

	b = batch_for(index, heap);
	if (!batch_grow(b, isnull, slots))
	{
		GbtIndexInfo *info;

		held_index = RelationGetRelid(index);
		adding_words = words;
		adding_tlen = tail.len;
		adding_null = isnull;
		PG_TRY();
		{
			gbt_batch_flush_all();
		}
		PG_FINALLY();
		{
			held_index = InvalidOid;
			adding_words = NULL;
		}
		PG_END_TRY();
		info = gbt_index_info(index);
		if (info->nwords != nw)
		{
			/* the flush fitted the index to fewer words, this entry too */
			GbtIndexInfo old;

			memcpy(&old, info, sizeof(GbtIndexInfo));
			gbt_wide_info_init(index, &old, nw);
			gbt_wide_reshape_key(&old, info, words, refit);
			words = refit;
			nw = info->nwords;
			slots = gbt_wide_batch_slots(nw, tail.len);
		}
		b = batch_for(index, heap);
		if (!batch_grow(b, isnull, slots))
		{
			if (b->unique)
				gbt_wide_insert_unique(index, heap, UNIQUE_CHECK_YES, GBT_ROOT_BLKNO, words, tail,
									   tid, NULL, NULL);
			else
				gbt_wide_insert(index, isnull ? GBT_NULLROOT_BLKNO : GBT_ROOT_BLKNO, words,
								tail, tid);
			return;
		}
	}
	at = (uint64 *) (isnull ? &b->nulls[b->nnulls] : &b->values[b->nvalues]);
	memset(at, 0, sizeof(GbtEntry) * slots);
	memcpy(at, words, sizeof(uint64) * nw);
	at[nw] = tid;
	at[nw + 1] = tail.len;
	if (tail.len > 0)
		memcpy(&at[nw + 2], tail.data, tail.len);
	if (isnull)
		b->nnulls += slots;
	else
		b->nvalues += slots;
	unique_pending |= b->unique;
}

static void
batch_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			gbt_batch_flush_all();
			/* later inserts of this commit (other callbacks) go straight in */
			batch_closed = true;
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			batch_discard_all();
			batch_closed = false;
			subxact_marks = NULL;	/* in TopTransactionContext, gone */
			batch_paused = 0;
			break;
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			break;
	}
}

/* Remember where every batch stands as a subtransaction begins. */
static void
push_subxact_mark(SubTransactionId subid)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	GbtSubxactMark *m = palloc(sizeof(GbtSubxactMark));

	m->subid = subid;
	m->nmarks = nbatches;
	m->marks = nbatches > 0 ? palloc(sizeof(GbtBatchMark) * nbatches) : NULL;
	for (int i = 0; i < nbatches; i++)
	{
		m->marks[i].indexoid = batches[i].indexoid;
		m->marks[i].epoch = batches[i].epoch;
		m->marks[i].nvalues = batches[i].nvalues;
		m->marks[i].nnulls = batches[i].nnulls;
	}
	m->next = subxact_marks;
	subxact_marks = m;
	MemoryContextSwitchTo(old);
}

/* Drop what the aborted subtransaction added: the tails after its mark. */
static void
rollback_to_mark(const GbtSubxactMark *m)
{
	for (int i = 0; i < nbatches; i++)
	{
		GbtBatch   *b = &batches[i];
		const GbtBatchMark *bm = NULL;

		for (int j = 0; j < m->nmarks; j++)
			if (m->marks[j].indexoid == b->indexoid)
				bm = &m->marks[j];
		if (bm == NULL || bm->epoch != b->epoch)
		{
			/* made, or emptied and refilled, since the mark */
			b->nvalues = 0;
			b->nnulls = 0;
		}
		else
		{
			b->nvalues = Min(b->nvalues, bm->nvalues);
			b->nnulls = Min(b->nnulls, bm->nnulls);
		}
	}
}

/*
 * Subtransactions: no flush at their start (an error there cannot be
 * rolled back cleanly), a mark instead, which ROLLBACK TO goes back to.
 */
static void
batch_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	switch (event)
	{
		case SUBXACT_EVENT_START_SUB:
			push_subxact_mark(mySubid);
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
		case SUBXACT_EVENT_ABORT_SUB:
			/* marks of subtransactions that never got here go too */
			while (subxact_marks != NULL && subxact_marks->subid >= mySubid)
			{
				GbtSubxactMark *m = subxact_marks;

				subxact_marks = m->next;
				if (event == SUBXACT_EVENT_ABORT_SUB && m->subid == mySubid)
					rollback_to_mark(m);
			}
			break;
		case SUBXACT_EVENT_PRE_COMMIT_SUB:
			break;
	}
}

/* Does the plan insert with ON CONFLICT (a speculative insertion)? */
static bool
plan_has_on_conflict(PlannedStmt *stmt)
{
	ListCell   *lc;

	if (stmt->planTree && IsA(stmt->planTree, ModifyTable) &&
		((ModifyTable *) stmt->planTree)->onConflictAction != ONCONFLICT_NONE)
		return true;
	foreach(lc, stmt->subplans)
	{
		Plan	   *p = (Plan *) lfirst(lc);

		if (p && IsA(p, ModifyTable) &&
			((ModifyTable *) p)->onConflictAction != ONCONFLICT_NONE)
			return true;
	}
	return false;
}

/*
 * Before a query runs: flush the batches of the tables it reads.  An
 * INSERT's target is not read by the INSERT (a self-referencing INSERT ...
 * SELECT names the table a second time), so a run of single-row INSERTs
 * in one transaction stays one batch.
 */
static void
batch_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (nbatches > 0)
	{
		PlannedStmt *stmt = queryDesc->plannedstmt;
		List	   *read = NIL;
		Index		rti = 0;
		ListCell   *lc;

		foreach(lc, stmt->rtable)
		{
			RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

			rti++;
			if (rte->rtekind != RTE_RELATION)
				continue;
			if (stmt->commandType == CMD_INSERT &&
				list_member_int(stmt->resultRelations, (int) rti))
				continue;
			read = lappend_oid(read, rte->relid);
		}
		if (read != NIL)
			batch_flush_matching(InvalidOid, read, false);
		list_free(read);
	}

	unique_stmt++;

	/*
	 * A speculative insertion that loses its race kills its heap tuple at
	 * once, while the transaction goes on: VACUUM may remove it and reuse
	 * its TID before a pending entry for it would reach the pages.  Such
	 * statements insert their entries at once (ExecutorEnd resumes, an
	 * error leaves batching off until the transaction ends).
	 */
	if (plan_has_on_conflict(queryDesc->plannedstmt))
	{
		gbt_refuse_on_conflict(queryDesc->plannedstmt);
		batch_paused++;
	}

	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* Before the statement's AFTER triggers: its unique entries go in */
static void
batch_executor_finish(QueryDesc *queryDesc)
{
	batch_flush_unique(true);
	if (prev_executor_finish)
		prev_executor_finish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
}

static void
batch_executor_end(QueryDesc *queryDesc)
{
	if (batch_paused > 0 && plan_has_on_conflict(queryDesc->plannedstmt))
		batch_paused--;
	if (prev_executor_end)
		prev_executor_end(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

static void
run_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			ProcessUtilityContext context, ParamListInfo params,
			QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
}

static void
batch_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					  ProcessUtilityContext context, ParamListInfo params,
					  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (nbatches > 0 && !IsA(pstmt->utilityStmt, TransactionStmt))
		gbt_batch_flush_all();
	unique_stmt++;

#if GBT_FK_BTREE_ONLY
	/* a foreign key on a gbtree index: 0A000, not the core's XX000 */
	PG_TRY();
	{
		run_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	}
	PG_CATCH();
	{
		gbt_refuse_fk_index();
	}
	PG_END_TRY();
#else
	run_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
#endif
	/* COPY FROM's end (its AFTER triggers have run) */
	batch_flush_unique(false);
}

void
gbt_batch_init(void)
{
	DefineCustomIntVariable("gbtree.insert_batch_memory",
							"Memory for the index entries a transaction gathers before it merges them into gbtree indexes.",
							"0 inserts every entry at once, as it is made.",
							&gbt_insert_batch_memory,
							65536, 0, MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	RegisterXactCallback(batch_xact_callback, NULL);
	RegisterSubXactCallback(batch_subxact_callback, NULL);
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = batch_executor_start;
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = batch_executor_end;
	prev_executor_finish = ExecutorFinish_hook;
	ExecutorFinish_hook = batch_executor_finish;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = batch_process_utility;
}
