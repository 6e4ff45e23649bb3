/*-------------------------------------------------------------------------
 *
 * unique.c
 *	  Unique indexes: the check at insert time, the check after a build,
 *	  and the refusal of ON CONFLICT where the server cannot use them.
 *
 * The check follows nbtree's (_bt_check_unique), with gbtree's order of
 * entries, (key, heap TID):
 *
 * Every inserter of key K first locks exclusively the leaf F where (K, 0)
 * belongs, the first leaf that can hold K.  Holding F, it reads the
 * entries equal to K there and in the right siblings that can hold more
 * of them (each share-locked in turn, left to right), and looks up each
 * one's heap tuple under a dirty snapshot:
 *	- a live tuple that another transaction is inserting or deleting: let
 *	  go of everything, wait for that transaction, and start over;
 *	- a live tuple otherwise (committed, or our own): 23505, unless the
 *	  tuple being inserted is itself dead by now;
 *	- dead: no conflict.
 * Then it puts (K, TID) where it belongs, still holding F, or moving
 * right with lock coupling (the next leaf locked before the last one is
 * let go) when equal keys fill leaves beyond F.  A second inserter of K
 * therefore waits for F, and its check, which moves right the same way,
 * never overtakes the first one's insertion: it sees that entry.
 *
 * When the leaf that takes the entry must split, everything is let go
 * and the work is done again under the SMO lock (insert.c, smo_run), with
 * the leaf's parent locked: the check at the leaf when it is F, else a
 * split that only makes room, and a new start.
 *
 * Unique indexes batch their entries within a statement after its first,
 * each checked as it comes and again where the flush puts it in
 * (gbt_unique_fits_leaf, gbt_wide_unique_fits_leaf).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "gbtree.h"
#include "gbtree_wide.h"
#include "gbtree_tail.h"

typedef enum GbtUniqueVerdict
{
	GBT_UNIQUE_OK,				/* no live duplicate */
	GBT_UNIQUE_WAIT,			/* wait for xwait, then start over */
	GBT_UNIQUE_CONFLICT			/* a live duplicate: 23505 */
} GbtUniqueVerdict;

typedef struct GbtUniqueInsert
{
	Relation	index;
	Relation	heap;
	IndexUniqueCheck mode;
	uint64		key;
	uint64		tid;
	const uint64 *words;		/* multi-word keys: the entry's words, */
	uint64		kmin[GBT_MAX_KEY_WORDS];	/* its key columns' (INCLUDE
											 * columns' bits zero), */
	int			keybits;		/* and their number of bits */
	GbtTail		tail;			/* the entry's tail (gbtree_tail.h), */
	int			tkeylen;		/* its bytes of key columns */
	GbtIndexInfo *info;
	int			nw;
	ItemPointerData htid;		/* tid as a heap TID */
	bool		is_unique;		/* UNIQUE_CHECK_PARTIAL: no possible duplicate */
	TransactionId xwait;
	uint32		spec_token;
	/* what the SMO action did */
	GbtUniqueVerdict verdict;
	bool		inserted;
} GbtUniqueInsert;

/* backend-local scratch of every check: a leaf's equal entries */
static uint64 eq_tids[GBT_LEAF_MAX_ENTRIES];
static int	eq_slots[GBT_LEAF_MAX_ENTRIES];

/*
 * The heap TIDs of the entries equal to key on a locked leaf, skipping
 * those marked dead, with their slots (-1 in the posting form, which
 * carries no marks); returns their number.
 */
static int
leaf_equal_tids(Page page, uint64 key, uint64 *tids, int *slots)
{
	int			n = 0;

	if (gbt_page_is_posting((char *) page))
	{
		GbtPost		p;
		GbtNode		kn;
		int			g;

		gbt_post_view((char *) page, &p);
		gbt_post_key_node(&p, &kn);
		g = gbt_node_lower_bound(&kn, key);
		if (g < p.hdr->ngroups && p.keys[g] == key)
			for (int i = p.start[g]; i < p.start[g + 1]; i++)
			{
				slots[n] = -1;
				tids[n++] = gbt_post_tid(&p, i);
			}
	}
	else
	{
		GbtNode		node;
		const uint64 *dead = gbt_leaf_dead((char *) page);

		gbt_page_view(page, &node);
		for (int s = gbt_node_next_used(&node, gbt_node_lower_bound(&node, key));
			 s < node.nslots && node.keys[s] == key;
			 s = gbt_node_next_used(&node, s + 1))
			if (!((dead[s >> 6] >> (s & 63)) & 1))
			{
				slots[n] = s;
				tids[n++] = node.tids[s];
			}
	}
	return n;
}

/*
 * Look up the heap tuples of tids, the entries of the leaf in buf: the
 * verdict they give, as nbtree's.  Entries whose tuples are dead to every
 * transaction get the leaf's dead mark, as nbtree sets LP_DEAD there, so
 * that later checks skip them and inserts may reclaim their slots.
 */
static GbtUniqueVerdict
check_tids(GbtUniqueInsert *u, Buffer buf, const uint64 *tids, const int *slots, int n)
{
	SnapshotData dirty;
	uint64	   *dead = BufferIsValid(buf) ? gbt_leaf_dead((char *) BufferGetPage(buf)) : NULL;
	bool		marked = false;
	GbtUniqueVerdict verdict = GBT_UNIQUE_OK;

	InitDirtySnapshot(dirty);
	for (int i = 0; i < n; i++)
	{
		ItemPointerData htid;
		bool		all_dead = false;

		gbt_tid_to_itemptr(tids[i], &htid);
		/* a recheck of an entry already in the index finds that entry */
		if (ItemPointerEquals(&htid, &u->htid))
			continue;
		if (!table_index_fetch_tuple_check(u->heap, &htid, &dirty, &all_dead))
		{
			if (all_dead && dead != NULL && slots[i] >= 0)
			{
				dead[slots[i] >> 6] |= UINT64CONST(1) << (slots[i] & 63);
				marked = true;
			}
			continue;
		}

		/* a possible duplicate: a deferred check settles it later */
		if (u->mode == UNIQUE_CHECK_PARTIAL)
		{
			u->is_unique = false;
			break;
		}
		if (TransactionIdIsValid(dirty.xmin) || TransactionIdIsValid(dirty.xmax))
		{
			u->xwait = TransactionIdIsValid(dirty.xmin) ? dirty.xmin : dirty.xmax;
			u->spec_token = dirty.speculativeToken;
			verdict = GBT_UNIQUE_WAIT;
			break;
		}

		/*
		 * A live duplicate, unless the tuple being inserted is already dead
		 * (its inserting command deleted it, for instance), as nbtree says.
		 */
		if (table_index_fetch_tuple_check(u->heap, &u->htid, SnapshotSelf, NULL))
			verdict = GBT_UNIQUE_CONFLICT;
		break;
	}
	if (marked)
		MarkBufferDirtyHint(buf, true);
	return verdict;
}

/*
 * The check, holding first (the first leaf that can hold the key) locked:
 * its entries equal to the key and those of the right siblings that can
 * hold more, share-locked in turn (lock coupling, left to right) while
 * first stays locked.
 */
static GbtUniqueVerdict
check_from_first_leaf(GbtUniqueInsert *u, Buffer first)
{
	uint64	   *tids = eq_tids;
	int		   *slots = eq_slots;
	Buffer		buf = first;
	GbtUniqueVerdict verdict = GBT_UNIQUE_OK;

	for (;;)
	{
		Page		page = BufferGetPage(buf);
		GbtPageOpaque op = gbt_page_opaque((char *) page);
		Buffer		next;

		if (!(op->flags & GBT_F_DELETED))
		{
			verdict = check_tids(u, buf, tids, slots, leaf_equal_tids(page, u->key, tids, slots));
			if (verdict != GBT_UNIQUE_OK || !u->is_unique)
				break;
			/* entries right of the high key are above it: are they above K? */
			if ((op->flags & GBT_F_RIGHTMOST) || op->hikey > u->key)
				break;
		}
		next = gbt_lock_right_sibling(u->index, buf, BUFFER_LOCK_SHARE);
		if (buf != first)
			UnlockReleaseBuffer(buf);
		buf = next;
		CHECK_FOR_INTERRUPTS();
	}
	if (buf != first)
		UnlockReleaseBuffer(buf);
	return verdict;
}

/*
 * After the check passed, holding first: insert where the entry belongs,
 * moving right with lock coupling.  Returns false, having let go of
 * everything, if that leaf must split.
 */
static bool
insert_from_first_leaf(GbtUniqueInsert *u, Buffer first)
{
	Buffer		buf = first;

	bool		inserted;

	while (gbt_must_move_right(gbt_page_opaque((char *) BufferGetPage(buf)),
							   u->key, u->tid, false))
	{
		Buffer		next = gbt_lock_right_sibling(u->index, buf, BUFFER_LOCK_EXCLUSIVE);

		UnlockReleaseBuffer(buf);
		buf = next;
	}
	inserted = gbt_leaf_insert_if_room(u->index, buf, u->key, u->tid);
	UnlockReleaseBuffer(buf);
	return inserted;
}

/*
 * The SMO action: at (key, tid)'s leaf, with its parent, under the SMO
 * lock.  If that leaf is also the first that can hold the key, check and
 * insert (splitting); otherwise only make room there and start over.
 */
static bool
unique_at_leaf(Relation index, Buffer pbuf, Buffer buf, bool may_recycle, void *arg)
{
	GbtUniqueInsert *u = (GbtUniqueInsert *) arg;
	GbtPageOpaque op = gbt_page_opaque((char *) BufferGetPage(buf));

	u->inserted = false;
	u->verdict = GBT_UNIQUE_OK;
	/* the leaf's low bound is at or below (key, TID 0) */
	if (!gbt_entry_lt(u->key, 0, op->lowkey, op->lowtid))
	{
		u->verdict = check_from_first_leaf(u, buf);
		if (u->verdict == GBT_UNIQUE_OK && u->mode != UNIQUE_CHECK_EXISTING)
		{
			gbt_leaf_insert_or_split(index, pbuf, buf, true, u->key, u->tid, may_recycle);
			u->inserted = true;
		}
	}
	else
		gbt_leaf_insert_or_split(index, pbuf, buf, false, u->key, u->tid, may_recycle);
	return true;
}

/*
 * Multi-word keys (wide_tree.c): the same check and insert over the key's
 * words, and the same dead marks (every change of a multi-word leaf's
 * slots clears them too).
 */
/*
 * A key's bytes in a tail (gbt_tail_key_len), or an error: a tail the
 * index wrote always has them.
 */
static int
tail_key_len(GbtUniqueInsert *u, GbtTail t)
{
	int			len = gbt_tail_key_len(&u->info->shape, u->info->is_text, t.data, t.len,
									   u->info->nkeycols);

	if (len < 0)
		gbt_tail_corrupted(RelationGetRelid(u->index));
	return len;
}

/*
 * Where the entries of the new entry's key start: for a key cut at a key
 * column (tkeylen > 0), at the entry's own words and its tail's key bytes,
 * which every entry of that key has (the cut words fill the later fields
 * alike, and the forms end themselves, so no other key's tail starts with
 * them); they end before those bytes followed by +infinity.  Other keys
 * start at their key columns' bits and run through the INCLUDE columns'.
 * Without this, a key that shares its words with many others (URLs under
 * ICU, whose common prefix fills the words) was checked against all of
 * them, at every insert.
 */
static const uint64 *
run_words(GbtUniqueInsert *u)
{
	return u->tkeylen > 0 ? u->words : u->kmin;
}

static GbtTail
run_tail(GbtUniqueInsert *u)
{
	return u->tkeylen > 0 ? (GbtTail) {u->tail.data, u->tkeylen} : GBT_TAIL_LOWEST;
}

/* whether (words, tail) lies past the run of the key's entries */
static bool
past_run(GbtUniqueInsert *u, const uint64 *words, GbtTail tail)
{
	int			c;

	if (u->tkeylen == 0)
		return gbt_words_prefix_cmp(words, u->kmin, u->keybits) > 0;
	c = gbt_words_cmp(words, u->words, u->nw);
	return c > 0 ||
		(c == 0 && gbt_tail_cmp_bound(tail.data, tail.len, u->tail.data, u->tkeylen, true) > 0);
}

/*
 * The entries whose key columns equal the new entry's: the same bits of
 * the words, and the same key bytes of the tail (none for a key that is
 * not cut, tailed page or not).
 */
static int
wide_leaf_equal_tids(Page page, GbtUniqueInsert *u, uint64 *tids, int *slots)
{
	GbtNode		node;
	const uint64 *dead = gbt_leaf_dead((char *) page);
	int			n = 0;
	GbtTail		rt = run_tail(u);
	int			start;

	gbt_node_view((char *) page, &node);
	start = u->tkeylen > 0 && node.toff ?
		gbt_node_lower_bound_tail(&node, u->words, rt.data, rt.len, 0) :
		gbt_node_lower_bound_words(&node, u->kmin);
	for (int s = gbt_node_next_used(&node, start);
		 s < node.nslots; s = gbt_node_next_used(&node, s + 1))
	{
		uint64		k[GBT_MAX_KEY_WORDS];
		GbtTail		t = node.toff ? gbt_node_slot_tail(&node, s) : GBT_NO_TAIL;

		/* the slots start at or after the run's start, so past it is the end */
		gbt_walk_slot_words(&node, s, k);
		if (past_run(u, k, t))
			break;
		if ((dead[s >> 6] >> (s & 63)) & 1)
			continue;
		if (node.toff || u->tkeylen > 0)
		{
			int			len = tail_key_len(u, t);

			if (len != u->tkeylen || memcmp(t.data, u->tail.data, len) != 0)
				continue;
		}
		slots[n] = s;
		tids[n++] = node.tids[s];
	}
	return n;
}

static GbtUniqueVerdict
wide_check_from_first_leaf(GbtUniqueInsert *u, Buffer first)
{
	uint64	   *tids = eq_tids;
	int		   *slots = eq_slots;
	Buffer		buf = first;
	GbtUniqueVerdict verdict = GBT_UNIQUE_OK;

	for (;;)
	{
		Page		page = BufferGetPage(buf);
		GbtPageOpaque op = gbt_page_opaque((char *) page);
		uint64		hk[GBT_MAX_KEY_WORDS],
					ht;
		Buffer		next;

		verdict = check_tids(u, buf, tids, slots,
							 wide_leaf_equal_tids(page, u, tids, slots));
		if (verdict != GBT_UNIQUE_OK || !u->is_unique)
			break;
		if (op->flags & GBT_F_RIGHTMOST)
			break;
		{
			GbtNode		node;
			GbtTail		htail;

			gbt_node_view((char *) page, &node);
			gbt_walk_bound_tail(&node, true, hk, &htail, &ht);
			if (past_run(u, hk, htail))
				break;
		}
		next = gbt_wide_lock_right_sibling(u->index, buf, u->nw, BUFFER_LOCK_SHARE);
		if (buf != first)
			UnlockReleaseBuffer(buf);
		buf = next;
		CHECK_FOR_INTERRUPTS();
	}
	if (buf != first)
		UnlockReleaseBuffer(buf);
	return verdict;
}

static bool
wide_insert_from_first_leaf(GbtUniqueInsert *u, Buffer first)
{
	Buffer		buf = first;
	bool		inserted;

	while (gbt_wide_move_right(BufferGetPage(buf), u->nw, u->words, u->tail, u->tid, false))
	{
		Buffer		next = gbt_wide_lock_right_sibling(u->index, buf, u->nw,
													   BUFFER_LOCK_EXCLUSIVE);

		UnlockReleaseBuffer(buf);
		buf = next;
	}
	inserted = gbt_wide_leaf_insert_if_room(u->index, buf, u->words, u->tail, u->tid);
	UnlockReleaseBuffer(buf);
	return inserted;
}

/* gbt_wide_smo's action: as unique_at_leaf */
static GbtWideLeafDo
wide_unique_at_leaf(Relation index, Buffer buf, void *arg)
{
	GbtUniqueInsert *u = (GbtUniqueInsert *) arg;
	uint64		lk[GBT_MAX_KEY_WORDS],
				lt;
	GbtTail		ltail;
	GbtNode		node;

	u->inserted = false;
	u->verdict = GBT_UNIQUE_OK;
	/* entries of the key may lie left of this leaf: below its low key */
	gbt_node_view((char *) BufferGetPage(buf), &node);
	gbt_walk_bound_tail(&node, false, lk, &ltail, &lt);
	if (node.opaque->leftlink != GBT_NO_BLOCK &&
		gbt_tentry_cmp(run_words(u), run_tail(u), 0, lk, ltail, lt, u->nw) < 0)
		return GBT_WIDE_MAKE_ROOM;
	u->verdict = wide_check_from_first_leaf(u, buf);
	if (u->verdict != GBT_UNIQUE_OK || u->mode == UNIQUE_CHECK_EXISTING)
		return GBT_WIDE_NOTHING;
	u->inserted = true;
	return GBT_WIDE_INSERT;
}

static void
report_duplicate(GbtUniqueInsert *u, Datum *values, bool *isnull)
{
	char	   *key_desc;
	Datum		dvalues[INDEX_MAX_KEYS];
	bool		disnull[INDEX_MAX_KEYS];

	if (values == NULL && u->words == NULL)
	{
		/* a batched entry of a one-word index: its value from its key */
		dvalues[0] = gbt_index_datum(gbt_index_info(u->index), u->key, u->tid);
		disnull[0] = false;
		values = dvalues;
		isnull = disnull;
	}
	else if (values == NULL)
	{
		/* a batched entry's: the values from its words and tail */
		gbt_wide_decode_tail(u->info, u->words, u->tail.data, u->tail.len, u->tid, dvalues,
							 disnull, NULL);
		values = dvalues;
		isnull = disnull;
	}

	/*
	 * Under SERIALIZABLE, a conflict with the transaction that inserted
	 * the duplicate (committed while we waited, perhaps) is the error to
	 * report, as nbtree does: index_insert checked before that commit.
	 */
	CheckForSerializableConflictIn(u->index, NULL, InvalidBlockNumber);
	key_desc = BuildIndexValueDescription(u->index, values, isnull);

	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates unique constraint \"%s\"",
					RelationGetRelationName(u->index)),
			 key_desc ? errdetail("Key %s already exists.", key_desc) : 0,
			 errtableconstraint(u->heap, RelationGetRelationName(u->index))));
}

static void
wait_for_inserter(GbtUniqueInsert *u)
{
	if (u->spec_token)
		SpeculativeInsertionWait(u->xwait, u->spec_token);
	else
		XactLockTableWait(u->xwait, u->heap, &u->htid, XLTW_InsertIndex);
}

/*
 * The insert-time check's steps for one kind of tree: descend to the first
 * leaf that can hold the key, check from it, insert from it, and the SMO
 * that splits the leaf that must take the entry.
 */
typedef struct GbtUniqueSteps
{
	BlockNumber root;
	Buffer		(*first_leaf) (GbtUniqueInsert *u, BlockNumber root);
	GbtUniqueVerdict (*check) (GbtUniqueInsert *u, Buffer first);
	bool		(*insert) (GbtUniqueInsert *u, Buffer first);
	void		(*smo) (GbtUniqueInsert *u, BlockNumber root);
} GbtUniqueSteps;

/*
 * Check, then insert unless mode is UNIQUE_CHECK_EXISTING (the entry is
 * there: check only); wait for an in-progress inserter and start over.
 * Returns false only under UNIQUE_CHECK_PARTIAL when a duplicate may exist.
 */
static bool
insert_unique(GbtUniqueInsert *u, const GbtUniqueSteps *steps, Datum *values, bool *isnull)
{
	for (;;)
	{
		Buffer		first;
		GbtUniqueVerdict verdict;

		u->is_unique = true;
		first = steps->first_leaf(u, steps->root);
		verdict = steps->check(u, first);
		if (verdict == GBT_UNIQUE_OK && u->mode != UNIQUE_CHECK_EXISTING)
		{
			if (steps->insert(u, first))
				return u->is_unique;

			/* the leaf must split: again, under the SMO lock */
			u->is_unique = true;
			steps->smo(u, steps->root);
			verdict = u->verdict;
			if (verdict == GBT_UNIQUE_OK && u->inserted)
				return u->is_unique;
			if (verdict == GBT_UNIQUE_OK)
				continue;		/* room made beyond the first leaf */
		}
		else
			UnlockReleaseBuffer(first);

		if (verdict == GBT_UNIQUE_OK)
			return u->is_unique;	/* UNIQUE_CHECK_EXISTING */
		if (verdict == GBT_UNIQUE_CONFLICT)
			report_duplicate(u, values, isnull);
		wait_for_inserter(u);
	}
}

static Buffer
first_leaf(GbtUniqueInsert *u, BlockNumber root)
{
	return gbt_descend(u->index, root, u->key, 0, false, BUFFER_LOCK_EXCLUSIVE);
}

static void
smo(GbtUniqueInsert *u, BlockNumber root)
{
	gbt_smo_at_leaf(u->index, root, u->key, u->tid, unique_at_leaf, u);
}

static Buffer
wide_first_leaf(GbtUniqueInsert *u, BlockNumber root)
{
	return gbt_wide_descend(u->index, root, u->nw, run_words(u), run_tail(u), 0, false,
							BUFFER_LOCK_EXCLUSIVE);
}

static void
wide_smo(GbtUniqueInsert *u, BlockNumber root)
{
	gbt_wide_smo(u->index, root, u->words, u->tail, u->tid, wide_unique_at_leaf, u);
}

static void
setup(GbtUniqueInsert *u, Relation index, Relation heap, IndexUniqueCheck mode, uint64 key,
	  uint64 tid)
{
	memset(u, 0, sizeof(*u));
	u->index = index;
	u->heap = heap;
	u->mode = mode;
	u->key = key;
	u->tid = tid;
	gbt_tid_to_itemptr(tid, &u->htid);
}

/*
 * aminsert for a unique index (mode is not UNIQUE_CHECK_NO): check, then
 * insert (key, tid) into the tree at root, unless mode is
 * UNIQUE_CHECK_EXISTING.  values NULL: a batched entry's, decoded from the
 * key should the check fail (the same for gbt_wide_insert_unique).
 */
bool
gbt_insert_unique(Relation index, Relation heap, IndexUniqueCheck mode,
				  BlockNumber root, uint64 key,
				  uint64 tid, Datum *values, bool *isnull)
{
	GbtUniqueInsert u;
	GbtUniqueSteps steps = {root, first_leaf, check_from_first_leaf,
	insert_from_first_leaf, smo};

	setup(&u, index, heap, mode, key, tid);
	return insert_unique(&u, &steps, values, isnull);
}

static void
wide_setup(GbtUniqueInsert *u, Relation index, Relation heap, IndexUniqueCheck mode,
		   const uint64 *words, GbtTail tail, uint64 tid)
{
	memset(u, 0, sizeof(*u));
	u->index = index;
	u->heap = heap;
	u->mode = mode;
	u->words = words;
	u->nw = gbt_index_info(index)->nwords;
	u->keybits = gbt_index_info(index)->keybits;
	u->info = gbt_index_info(index);
	u->tail = tail;
	u->tkeylen = tail_key_len(u, tail);
	memcpy(u->kmin, words, sizeof(uint64) * u->nw);
	gbt_words_clear_after(u->kmin, u->nw, u->keybits);
	u->tid = tid;
	gbt_tid_to_itemptr(tid, &u->htid);
}

/*
 * The flush's check over the n entries of the key found on a leaf (in
 * eq_tids): true when none is live.  The page may be a working copy, so no
 * dead marks are set (check_tids without a buffer).
 */
static bool
none_live(GbtUniqueInsert *u, int n)
{
	u->is_unique = true;
	return n == 0 || check_tids(u, InvalidBuffer, eq_tids, eq_slots, n) == GBT_UNIQUE_OK;
}

/* The same for multi-word keys: words and tid into the tree at root */
bool
gbt_wide_insert_unique(Relation index, Relation heap, IndexUniqueCheck mode,
					   BlockNumber root, const uint64 *words, GbtTail tail, uint64 tid,
					   Datum *values, bool *isnull)
{
	GbtUniqueInsert u;
	GbtUniqueSteps steps = {root, wide_first_leaf, wide_check_from_first_leaf,
	wide_insert_from_first_leaf, wide_smo};

	wide_setup(&u, index, heap, mode, words, tail, tid);
	return insert_unique(&u, &steps, values, isnull);
}

/*
 * Batched entries of a unique index (batch.c, wide_tree.c).  aminsert
 * checks an entry as it comes (gbt_wide_insert_unique, UNIQUE_CHECK_EXISTING:
 * a duplicate of a stored row fails at its row, after waiting for an
 * inserter in progress, as nbtree's would) and leaves it in the batch;
 * the batch is flushed when the statement ends.  Between the two, another
 * backend may have stored the key, and the statement may have made it
 * twice, so the flush checks every entry again where it goes in, holding
 * that leaf exclusively: gbt_wide_unique_fits_leaf, the check of the
 * single-entry path over that leaf alone.  It settles the entry when the
 * leaf holds every entry its key can have (the leaf is the first that can
 * hold the key, and its high bound is past the key's last entry), so
 * that an inserter of the same key, which locks that leaf as the first
 * one, is serialized with it; and when none of those entries is live.
 * Anything else (the key's entries may reach a neighbour; a live entry,
 * committed or in progress) sends the entry the single-entry way,
 * gbt_wide_insert_unique under UNIQUE_CHECK_YES with no values, which
 * waits and reports as nbtree does.
 * page is the leaf as the flush has changed it so far (a working copy,
 * perhaps: no dead marks are set on it).
 */
bool
gbt_wide_unique_fits_leaf(Relation index, Relation heap, Page page, const uint64 *words,
						  GbtTail tail, uint64 tid)
{
	GbtUniqueInsert u;
	GbtNode		node;
	uint64		bk[GBT_MAX_KEY_WORDS],
				bt;
	GbtTail		btail;

	wide_setup(&u, index, heap, UNIQUE_CHECK_YES, words, tail, tid);
	gbt_node_view((char *) page, &node);
	if (node.opaque->leftlink != GBT_NO_BLOCK)
	{
		gbt_walk_bound_tail(&node, false, bk, &btail, &bt);
		if (gbt_tentry_cmp(run_words(&u), run_tail(&u), 0, bk, btail, bt, u.nw) < 0)
			return false;
	}
	if (!(node.opaque->flags & GBT_F_RIGHTMOST))
	{
		gbt_walk_bound_tail(&node, true, bk, &btail, &bt);
		if (!past_run(&u, bk, btail))
			return false;
	}
	return none_live(&u, wide_leaf_equal_tids(page, &u, eq_tids, eq_slots));
}

/*
 * The same for a one-word index's batched entry (insert_merge.c), on the
 * leaf page it goes into, before the flush's entries for that leaf are
 * put in (the caller cuts a run at a second entry of one key).
 */
bool
gbt_unique_fits_leaf(Relation index, Relation heap, Page page, uint64 key, uint64 tid)
{
	GbtPageOpaque op = gbt_page_opaque((char *) page);
	GbtUniqueInsert u;

	/* the first leaf that can hold the key, and its high key above it */
	if (gbt_entry_lt(key, 0, op->lowkey, op->lowtid) ||
		(!(op->flags & GBT_F_RIGHTMOST) && op->hikey <= key))
		return false;
	setup(&u, index, heap, UNIQUE_CHECK_YES, key, tid);
	return none_live(&u, leaf_equal_tids(page, key, eq_tids, eq_slots));
}

/*
 * After CREATE UNIQUE INDEX has built the index: each run of equal keys
 * (and the NULLs, for NULLS NOT DISTINCT: all key 0) may have at most one
 * entry whose heap tuple is live.  Equal keys are rare in a unique index,
 * so this costs one pass over the leaves, and heap reads only for runs.
 * The build scan waited for the transactions inserting or deleting the
 * table's tuples (it does for unique indexes), so a dirty snapshot tells
 * live from dead here as the build scan did.
 */
typedef struct GbtRunCheck
{
	Relation	heap;
	Relation	index;
	bool		nulls;
	uint64		key;
	uint64	   *tids;
	int			n;
	int			max;
} GbtRunCheck;

/* The run in rc is complete: fail if two of its entries are live. */
static void
check_run(GbtRunCheck *rc, Buffer buf)
{
	SnapshotData dirty;
	int			nlive = 0;

	if (rc->n < 2)
		return;
	InitDirtySnapshot(dirty);
	for (int i = 0; i < rc->n; i++)
	{
		ItemPointerData htid;

		gbt_tid_to_itemptr(rc->tids[i], &htid);
		if (table_index_fetch_tuple_check(rc->heap, &htid, &dirty, NULL) && ++nlive == 2)
		{
			Datum		value = rc->nulls ? (Datum) 0 :
				gbt_index_datum(gbt_index_info(rc->index), rc->key, rc->tids[i]);
			bool		isnull = rc->nulls;
			char	   *key_desc;

			UnlockReleaseBuffer(buf);
			key_desc = BuildIndexValueDescription(rc->index, &value, &isnull);
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("could not create unique index \"%s\"",
							RelationGetRelationName(rc->index)),
					 key_desc ? errdetail("Key %s is duplicated.", key_desc) :
					 errdetail("Duplicate keys exist."),
					 errtableconstraint(rc->heap, RelationGetRelationName(rc->index))));
		}
	}
}

static void
check_tree_unique(Relation heap, Relation index, BlockNumber root, bool nulls)
{
	uint64	   *keys = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
	uint64	   *tids = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
	GbtRunCheck rc = {heap, index, nulls, 0, NULL, 0, 64};
	Buffer		buf;

	rc.tids = palloc(sizeof(uint64) * rc.max);
	buf = gbt_descend(index, root, 0, 0, false, BUFFER_LOCK_SHARE);
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		GbtPageOpaque op = gbt_page_opaque((char *) page);
		int			n = (op->flags & GBT_F_DELETED) ? 0 :
			gbt_leaf_extract((char *) page, keys, tids);
		Buffer		next;

		for (int i = 0; i < n; i++)
		{
			if (rc.n > 0 && keys[i] != rc.key)
			{
				check_run(&rc, buf);
				rc.n = 0;
			}
			if (rc.n == rc.max)
			{
				rc.max *= 2;
				rc.tids = repalloc_huge(rc.tids, sizeof(uint64) * rc.max);
			}
			rc.key = keys[i];
			rc.tids[rc.n++] = tids[i];
		}
		if (op->flags & GBT_F_RIGHTMOST)
			break;
		next = gbt_lock_right_sibling(index, buf, BUFFER_LOCK_SHARE);
		UnlockReleaseBuffer(buf);
		buf = next;
		CHECK_FOR_INTERRUPTS();
	}
	check_run(&rc, buf);
	UnlockReleaseBuffer(buf);
	pfree(rc.tids);
	pfree(keys);
	pfree(tids);
}

/*
 * check_tree_unique for multi-word keys: runs of equal words, each with at
 * most one live entry, unless a column of the run's key is NULL and NULLs
 * are distinct.
 */
static void
wide_check_tree_unique(Relation heap, Relation index, BlockNumber root, bool nulls_equal)
{
	GbtIndexInfo *info = gbt_index_info_copy(index);
	int			nw = info->nwords;
	uint64	   *keys = palloc(sizeof(uint64) * GBT_MAX_SLOT_WORDS);
	uint64	   *tids = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint64		run[GBT_MAX_KEY_WORDS] = {0};
	uint64		zero[GBT_MAX_KEY_WORDS] = {0};
	GbtTail    *tails = palloc(sizeof(GbtTail) * GBT_MAX_SLOTS);
	unsigned char *runtail = palloc(GBT_TAIL_HIGHEST_LEN);
	int			runtlen = 0,
				runklen = 0;
	uint64	   *rtids;
	int			n = 0,
				max = 64;
	Buffer		buf;

	rtids = palloc(sizeof(uint64) * max);
	buf = gbt_wide_descend(index, root, nw, zero, GBT_TAIL_LOWEST, 0, false, BUFFER_LOCK_SHARE);
	for (;;)
	{
		GbtNode		node;
		int			k;
		bool		last;

		gbt_node_view((char *) BufferGetPage(buf), &node);
		k = gbt_node_extract_tails(&node, keys, tids, NULL, tails);
		last = (node.opaque->flags & GBT_F_RIGHTMOST) != 0;
		for (int i = 0; i <= k; i++)
		{
			bool		end = i == k;
			int			klen = 0;

			if (end && !last)
				break;
			/* equal keys: the key columns' bits, and their bytes in a tail */
			if (!end)
			{
				klen = gbt_tail_key_len(&info->shape, info->is_text, tails[i].data, tails[i].len,
										info->nkeycols);
				if (klen < 0)
					gbt_tail_corrupted(RelationGetRelid(index));
			}
			if (n > 0 && (end || gbt_words_prefix_cmp(&keys[i * nw], run, info->keybits) != 0 ||
						  klen != runklen || memcmp(tails[i].data, runtail, klen) != 0))
			{
				Datum		values[INDEX_MAX_KEYS];
				bool		isnull[INDEX_MAX_KEYS];
				bool		anynull = false;

				if (root == GBT_NULLROOT_BLKNO)
				{
					values[0] = (Datum) 0;
					isnull[0] = true;
				}
				else
					gbt_wide_decode_tail(info, run, runtail, runtlen, rtids[0], values, isnull,
										 NULL);
				for (int c = 0; c < info->nkeycols; c++)
					anynull |= isnull[c];
				if (n > 1 && (nulls_equal || !anynull))
				{
					SnapshotData dirty;
					int			nlive = 0;

					InitDirtySnapshot(dirty);
					for (int j = 0; j < n; j++)
					{
						ItemPointerData htid;

						gbt_tid_to_itemptr(rtids[j], &htid);
						if (table_index_fetch_tuple_check(heap, &htid, &dirty, NULL) &&
							++nlive == 2)
						{
							char	   *key_desc;

							UnlockReleaseBuffer(buf);
							key_desc = BuildIndexValueDescription(index, values, isnull);
							ereport(ERROR,
									(errcode(ERRCODE_UNIQUE_VIOLATION),
									 errmsg("could not create unique index \"%s\"",
											RelationGetRelationName(index)),
									 key_desc ? errdetail("Key %s is duplicated.", key_desc) :
									 errdetail("Duplicate keys exist."),
									 errtableconstraint(heap, RelationGetRelationName(index))));
						}
					}
				}
				n = 0;
			}
			if (end)
				break;
			if (n == max)
			{
				max *= 2;
				rtids = repalloc_huge(rtids, sizeof(uint64) * max);
			}
			if (n == 0)
			{
				memcpy(run, &keys[i * nw], sizeof(uint64) * nw);
				memcpy(runtail, tails[i].data, tails[i].len);
				runtlen = tails[i].len;
				runklen = klen;
			}
			rtids[n++] = tids[i];
		}
		if (last)
			break;
		{
			Buffer		next = gbt_wide_lock_right_sibling(index, buf, nw, BUFFER_LOCK_SHARE);

			UnlockReleaseBuffer(buf);
			buf = next;
		}
		CHECK_FOR_INTERRUPTS();
	}
	UnlockReleaseBuffer(buf);
	pfree(rtids);
	pfree(keys);
	pfree(tids);
}

void
gbt_check_unique_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	if (!indexInfo->ii_Unique)
		return;
	if (gbt_index_info(index)->wide)
	{
		wide_check_tree_unique(heap, index, GBT_ROOT_BLKNO, indexInfo->ii_NullsNotDistinct);
		if (indexInfo->ii_NullsNotDistinct && !gbt_index_info(index)->shape.nullbits)
			wide_check_tree_unique(heap, index, GBT_NULLROOT_BLKNO, true);
		return;
	}
	check_tree_unique(heap, index, GBT_ROOT_BLKNO, false);
	if (indexInfo->ii_NullsNotDistinct)
		check_tree_unique(heap, index, GBT_NULLROOT_BLKNO, true);
}

#if GBT_ON_CONFLICT_BTREE_ONLY
static Oid
index_am_of(Oid indexoid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	Oid			am;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	am = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
	return am;
}

/* Does the table, or any partition below it, have a unique gbtree index? */
static Oid
unique_gbtree_index_of(Oid relid)
{
	Oid			amoid = get_index_am_oid("gbtree", false);
	List	   *rels = list_make1_oid(relid);
	ListCell   *lc;
	Oid			found = InvalidOid;

	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		rels = find_all_inheritors(relid, RowExclusiveLock, NULL);
	foreach(lc, rels)
	{
		Relation	rel = table_open(lfirst_oid(lc), RowExclusiveLock);
		List	   *indexes = RelationGetIndexList(rel);
		ListCell   *li;

		foreach(li, indexes)
		{
			Oid			indexoid = lfirst_oid(li);
			HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
			bool		unique;

			if (!HeapTupleIsValid(tup))
				continue;
			unique = ((Form_pg_index) GETSTRUCT(tup))->indisunique;
			ReleaseSysCache(tup);
			if (unique && index_am_of(indexoid) == amoid)
			{
				found = indexoid;
				break;
			}
		}
		list_free(indexes);
		table_close(rel, NoLock);
		if (OidIsValid(found))
			break;
	}
	return found;
}
#endif

/*
 * Called in a PG_CATCH around a utility statement: before PostgreSQL 18 a
 * foreign key's referenced columns are checked through a btree unique
 * index only.  The core takes the first unique index on those columns (in
 * OID order), and where that is not btree (a gbtree one, even beside a
 * btree primary key created after it) fails with an internal error
 * (XX000).  That error becomes 0A000, with what to do; any other is
 * thrown again as it is.  From 18 on such a key works.
 */
#if GBT_FK_BTREE_ONLY
void
gbt_refuse_fk_index(void)
{
	MemoryContext caller = MemoryContextSwitchTo(TopMemoryContext);
	ErrorData  *edata = CopyErrorData();
	bool		btree_only;

	MemoryContextSwitchTo(caller);
	btree_only = edata->sqlerrcode == ERRCODE_INTERNAL_ERROR && edata->message != NULL &&
		strcmp(edata->message, "only b-tree indexes are supported for foreign keys") == 0;
	FreeErrorData(edata);
	if (btree_only)
	{
		FlushErrorState();
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a foreign key needs a btree unique index on the referenced columns before PostgreSQL 18"),
				 errdetail("The first unique index on those columns is not a btree index (a gbtree index, say)."),
				 errhint("Reference the primary key (REFERENCES table without columns), or make the btree unique index the first: create it before the gbtree one, or drop and create the gbtree one again.")));
	}
	PG_RE_THROW();
}
#endif

/*
 * PostgreSQL 17's logical replication apply finds the rows an UPDATE or
 * DELETE names through the table's replica identity index with scan keys
 * of btree's or hash's equality strategy only, and stops with an internal
 * error on any other index: a subscriber whose replica identity is a
 * gbtree index would stop at its first UPDATE.  So on 17 a gbtree index
 * is refused as a replica identity (0A000).  The check is an object access
 * hook on the index's pg_index row, which ALTER TABLE ... REPLICA IDENTITY
 * USING INDEX changes after opening the index, so gbtree is loaded by then
 * even in a session that had not loaded it (a utility hook would not be
 * called yet).  15, 16 and 18 apply through such an index (TAP 010).
 */
#if GBT_REPLICA_IDENTITY_BTREE_ONLY
static object_access_hook_type prev_object_access = NULL;

/* indisreplident of the index, as this command has just written it */
static bool
index_is_replident_now(Oid indexoid)
{
	Relation	pg_index = table_open(IndexRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		replident = false;

	ScanKeyInit(&key, Anum_pg_index_indexrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(indexoid));
	scan = systable_beginscan(pg_index, IndexRelidIndexId, true, SnapshotSelf, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		replident = ((Form_pg_index) GETSTRUCT(tup))->indisreplident;
	systable_endscan(scan);
	table_close(pg_index, AccessShareLock);
	return replident;
}

static void
replica_identity_access(ObjectAccessType access, Oid classId, Oid objectId,
						int subId, void *arg)
{
	if (prev_object_access)
		prev_object_access(access, classId, objectId, subId, arg);
	if (access == OAT_POST_ALTER && classId == IndexRelationId &&
		index_am_of(objectId) == get_index_am_oid("gbtree", true) &&
		index_is_replident_now(objectId))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gbtree index \"%s\" cannot be a replica identity on PostgreSQL 17",
						get_rel_name(objectId)),
				 errdetail("PostgreSQL 17's logical replication finds a replica identity's rows through btree and hash indexes only: a subscriber would stop at the first UPDATE or DELETE."),
				 errhint("Use a btree unique index on the same columns as the replica identity.")));
}
#endif

#if GBT_ON_CONFLICT_BTREE_ONLY
static emit_log_hook_type prev_emit_log = NULL;

/*
 * A session that has not loaded gbtree yet plans an INSERT ... ON CONFLICT
 * without a conflict target without opening the table's indexes, so
 * gbtree's ExecutorStart hook (gbt_refuse_on_conflict) is not in place
 * when the executor opens them; that loads gbtree, and the core stops at
 * once with an internal error (BuildSpeculativeIndexInfo).  That error, as
 * reported, says why instead, with gbt_refuse_on_conflict's SQLSTATE.
 */
static void
on_conflict_error_report(ErrorData *edata)
{
	if (edata->elevel == ERROR && edata->sqlerrcode == ERRCODE_INTERNAL_ERROR &&
		edata->message != NULL &&
		strcmp(edata->message, "unexpected non-btree speculative unique index") == 0)
	{
		edata->sqlerrcode = ERRCODE_FEATURE_NOT_SUPPORTED;
		edata->message = pstrdup("INSERT ... ON CONFLICT is not supported on a table with a unique gbtree index");
		edata->detail = pstrdup("Before PostgreSQL 18, only btree unique indexes can take part in ON CONFLICT.");
	}
	if (prev_emit_log)
		prev_emit_log(edata);
}
#endif

/* the hooks above, where this major needs them (_PG_init) */
void
gbt_unique_hooks_init(void)
{
#if GBT_REPLICA_IDENTITY_BTREE_ONLY
	prev_object_access = object_access_hook;
	object_access_hook = replica_identity_access;
#endif
#if GBT_ON_CONFLICT_BTREE_ONLY
	prev_emit_log = emit_log_hook;
	emit_log_hook = on_conflict_error_report;
#endif
}

/*
 * Before PostgreSQL 18 the executor can use only btree unique indexes for
 * a speculative insertion, and it opens every unique index of the table
 * for one: INSERT ... ON CONFLICT on a table with a unique gbtree index
 * would fail with an internal error.  Say why, with SQLSTATE 0A000, before
 * the executor starts.
 */
void
gbt_refuse_on_conflict(PlannedStmt *stmt)
{
#if GBT_ON_CONFLICT_BTREE_ONLY
	List	   *plans = list_copy(stmt->subplans);
	ListCell   *lc;

	plans = lappend(plans, stmt->planTree);
	foreach(lc, plans)
	{
		ModifyTable *mt = (ModifyTable *) lfirst(lc);
		ListCell   *lr;

		if (mt == NULL || !IsA(mt, ModifyTable) || mt->onConflictAction == ONCONFLICT_NONE)
			continue;
		foreach(lr, mt->resultRelations)
		{
			Oid			relid = rt_fetch(lfirst_int(lr), stmt->rtable)->relid;
			Oid			indexoid = unique_gbtree_index_of(relid);

			if (OidIsValid(indexoid))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("INSERT ... ON CONFLICT is not supported on table \"%s\", which has the unique gbtree index \"%s\"",
								get_rel_name(relid), get_rel_name(indexoid)),
						 errdetail("Before PostgreSQL 18, only btree unique indexes can take part in ON CONFLICT.")));
		}
	}
	list_free(plans);
#endif
}
