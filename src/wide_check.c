/*-------------------------------------------------------------------------
 *
 * wide_check.c
 *	  Checks of trees of multi-word keys (gbtree_wide.h): gbtree_check's
 *	  walk (gbt_wide_verify, for verify.c), and the page range test it
 *	  shares with assert builds' check of every page a writer wrote
 *	  (GBT_CHECK_WRITTEN).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/rel.h"

#include "gbtree_wide.h"
#include "gbtree_wpost.h"

/*
 * What is wrong with the key range of the page node views, or NULL: a
 * high key not above the low key (but on a level's first or last page),
 * an entry below the low key (but a level's minus infinity, the first
 * entry of its first inner page) or at or above the high key.
 * gbtree_check's test of every page, and assert builds' of every page
 * the structure change, the batch write and page deletion
 * (GBT_CHECK_WRITTEN).
 */
const char *
gbt_wide_page_range_problem(const GbtNode *node)
{
	int			nw = node->nwords;
	bool		leftmost = node->opaque->leftlink == GBT_NO_BLOCK;
	bool		rightmost = (node->opaque->flags & GBT_F_RIGHTMOST) != 0;
	uint64		lk[GBT_MAX_KEY_WORDS],
				hk[GBT_MAX_KEY_WORDS],
				k[GBT_MAX_KEY_WORDS],
				lt,
				ht;
	GbtTail		ltail,
				htail;
	int			first = gbt_node_first_used(node);

	gbt_walk_bound_tail(node, false, lk, &ltail, &lt);
	gbt_walk_bound_tail(node, true, hk, &htail, &ht);
	if (!leftmost && !rightmost && gbt_tentry_cmp(lk, ltail, lt, hk, htail, ht, nw) >= 0)
		return "high key not above the low key (an empty key range)";
	for (int s = first; s < node->nslots; s = gbt_node_next_used(node, s + 1))
	{
		GbtTail		t = gbt_node_slot_tail(node, s);

		gbt_walk_slot_words(node, s, k);
		if (!(node->opaque->level > 0 && leftmost && s == first) &&
			gbt_tentry_cmp(k, t, node->tids[s], lk, ltail, lt, nw) < 0)
			return "entry below the page's low key";
		if (!rightmost && gbt_tentry_cmp(k, t, node->tids[s], hk, htail, ht, nw) >= 0)
			return "entry at or above the page's high key";
	}
	return NULL;
}

#ifdef USE_ASSERT_CHECKING
/* where names the writer */
void
gbt_wide_check_written(Relation index, Buffer buf, const char *where)
{
	GbtNode		node;
	const char *bad;

	gbt_node_view((char *) BufferGetPage(buf), &node);
	if (gbt_page_is_posting((char *) BufferGetPage(buf)))
		bad = gbt_wpost_check((char *) BufferGetPage(buf));
	else
	{
		bad = gbt_node_check(&node);
		if (bad == NULL)
			bad = gbt_wide_page_range_problem(&node);
	}
	if (bad)
		elog(ERROR, "gbtree: index \"%s\": %s wrote block %u (level %d, %d entries) with %s",
			 RelationGetRelationName(index), where, BufferGetBlockNumber(buf),
			 node.opaque->level, node.opaque->nused, bad);
}
#endif

/*
 * gbtree_check of a multi-word tree (verify.c): each level left to right,
 * holding a page while its right sibling and its children are read (left
 * to right and parent to child, as writers lock): page checks, entries in
 * order within [low key, high key), each page's low key its left
 * sibling's high key and its left-link that sibling, each child one level
 * down with the downlink's key as its low key.  With heapallindexed,
 * every leaf entry is appended to *entries (stride nw + 2: the words,
 * the TID and gbt_wide_tail_hash of its tail).
 */
static void
verify_fail(Relation index, BlockNumber blk, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" block %u: %s", RelationGetRelationName(index), blk, what)));
}

void
gbt_wide_verify(Relation index, BlockNumber root, uint64 **entries, Size *n, Size *cap)
{
	int			nw = gbt_index_info(index)->nwords;
	BlockNumber first = root;
	int			level = -1;
	/* a leaf in posting form holds more entries than any plain page */
	uint64	   *keys = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES * GBT_MAX_KEY_WORDS);
	uint64	   *tids = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES);
	uint32	   *child = palloc(sizeof(uint32) * GBT_MAX_SLOTS);
	GbtTail    *tails = palloc0(sizeof(GbtTail) * GBT_LEAF_MAX_ENTRIES);
	uint64	   *pe = palloc(sizeof(uint64) * GBT_LEAF_MAX_ENTRIES * GBT_WIDE_MAX_STRIDE);

	for (;;)
	{
		BlockNumber blk = first,
					prev = GBT_NO_BLOCK;
		BlockNumber nextfirst = GBT_NO_BLOCK;
		uint64		prevhk[GBT_MAX_KEY_WORDS] = {0},
					prevht = 0;
		unsigned char *prevhtail = palloc(GBT_TAIL_HIGHEST_LEN);
		int			prevhtlen = 0;
		Buffer		buf = ReadBuffer(index, blk);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		for (;;)
		{
			Page		page;
			GbtNode		node;
			const char *err;
			uint64		lk[GBT_MAX_KEY_WORDS],
						lt,
						hk[GBT_MAX_KEY_WORDS],
						ht;
			GbtTail		ltail,
						htail;
			bool		rightmost;
			int			k;
			Buffer		rbuf;

			CHECK_FOR_INTERRUPTS();
			gbt_wide_check_page(index, buf, nw);
			gbt_check_in_tree(index, buf, root);
			page = BufferGetPage(buf);
			gbt_node_view((char *) page, &node);
			if ((err = gbt_page_is_posting((char *) page) ? gbt_wpost_check((char *) page) :
				 gbt_node_check(&node)) != NULL)
				verify_fail(index, blk, err);
			if (level < 0)
				level = node.opaque->level;
			if (node.opaque->level != level)
				verify_fail(index, blk, "page on a level it is not linked from");
			rightmost = (node.opaque->flags & GBT_F_RIGHTMOST) != 0;
			gbt_walk_bound_tail(&node, false, lk, &ltail, &lt);
			gbt_walk_bound_tail(&node, true, hk, &htail, &ht);
			if (node.opaque->leftlink != prev)
				verify_fail(index, blk, "left-link is not the left sibling");
			if (prev != GBT_NO_BLOCK &&
				gbt_tentry_cmp(lk, ltail, lt, prevhk, (GbtTail) {prevhtail, prevhtlen}, prevht,
							   nw) != 0)
				verify_fail(index, blk, "low key is not the left sibling's high key");
			if (gbt_page_is_posting((char *) page))
			{
				/* entries in [low key, high key): the range test of a posting leaf */
				k = gbt_wpost_decode((char *) page, pe);
				for (int i = 0; i < k; i++)
				{
					memcpy(&keys[i * nw], &pe[i * (nw + 1)], sizeof(uint64) * nw);
					tids[i] = pe[i * (nw + 1) + nw];
					tails[i] = GBT_NO_TAIL;
					if (gbt_tentry_cmp(&keys[i * nw], GBT_NO_TAIL, tids[i], lk, ltail, lt, nw) < 0)
						verify_fail(index, blk, "entry below the page's low key");
					if (!rightmost &&
						gbt_tentry_cmp(&keys[i * nw], GBT_NO_TAIL, tids[i], hk, htail, ht, nw) >= 0)
						verify_fail(index, blk, "entry at or above the page's high key");
				}
				if (node.opaque->leftlink != GBT_NO_BLOCK && !rightmost &&
					gbt_tentry_cmp(lk, ltail, lt, hk, htail, ht, nw) >= 0)
					verify_fail(index, blk, "high key not above the low key (an empty key range)");
			}
			else
			{
				if ((err = gbt_wide_page_range_problem(&node)) != NULL)
					verify_fail(index, blk, err);
				k = gbt_node_extract_tails(&node, keys, tids, node.child ? child : NULL, tails);
			}
			for (int i = 0; i < k; i++)
			{
				const uint64 *key = &keys[i * nw];

				if (i > 0 && gbt_tentry_cmp(&keys[(i - 1) * nw], tails[i - 1], tids[i - 1], key,
											tails[i], tids[i], nw) >= 0)
					verify_fail(index, blk, "entries out of order");
				if (level == 0 && entries)
				{
					if (*n == *cap)
					{
						*cap *= 2;
						*entries = repalloc_huge(*entries, *cap * (nw + 2) * sizeof(uint64));
					}
					memcpy(*entries + *n * (nw + 2), key, sizeof(uint64) * nw);
					(*entries)[*n * (nw + 2) + nw] = tids[i];
					(*entries)[*n * (nw + 2) + nw + 1] = gbt_wide_tail_hash(tails[i]);
					(*n)++;
				}
				if (level > 0)
				{
					Buffer		cbuf;
					GbtNode		cnode;
					uint64		ck[GBT_MAX_KEY_WORDS],
								ct;
					GbtTail		ctail;

					if (child[i] < GBT_FIRST_FREE_BLKNO ||
						child[i] >= RelationGetNumberOfBlocks(index))
						verify_fail(index, blk, "an invalid downlink");
					cbuf = ReadBuffer(index, child[i]);
					LockBuffer(cbuf, BUFFER_LOCK_SHARE);
					gbt_wide_check_page(index, cbuf, nw);
					gbt_node_view((char *) BufferGetPage(cbuf), &cnode);
					gbt_walk_bound_tail(&cnode, false, ck, &ctail, &ct);
					if (cnode.opaque->level != level - 1)
						verify_fail(index, child[i], "child not one level below its parent");
					/* a level's first downlink is minus infinity, {0} on a tailed page */
					if (gbt_words_cmp(ck, key, nw) != 0 || ct != tids[i] ||
						(gbt_tail_cmp(ctail.data, ctail.len, tails[i].data, tails[i].len) != 0 &&
						 !(prev == GBT_NO_BLOCK && i == 0)))
						verify_fail(index, child[i], "low key is not its downlink's key");
					UnlockReleaseBuffer(cbuf);
					if (nextfirst == GBT_NO_BLOCK)
						nextfirst = child[i];
				}
			}
			if (rightmost)
			{
				if (node.opaque->rightlink != GBT_NO_BLOCK)
					verify_fail(index, blk, "rightmost page with a right-link");
				UnlockReleaseBuffer(buf);
				break;
			}
			memcpy(prevhk, hk, sizeof(uint64) * nw);
			prevht = ht;
			memcpy(prevhtail, htail.data, htail.len);
			prevhtlen = htail.len;
			prev = blk;
			rbuf = gbt_wide_lock_right_sibling(index, buf, nw, BUFFER_LOCK_SHARE);
			UnlockReleaseBuffer(buf);
			buf = rbuf;
			blk = BufferGetBlockNumber(buf);
		}
		pfree(prevhtail);
		if (level == 0)
			break;
		if (nextfirst == GBT_NO_BLOCK)
			verify_fail(index, first, "inner level with no downlink");
		first = nextfirst;
		level--;
	}
	pfree(keys);
	pfree(tids);
	pfree(child);
	pfree(tails);
	pfree(pe);
}
