/*-------------------------------------------------------------------------
 *
 * pages.c
 *	  Page initialization, sanity checks, allocation and tree descent.
 *
 * Descent follows Lehman and Yao: one buffer lock at a time, moving right
 * through high keys when a concurrent split moved the target range.  The
 * roots sit at fixed blocks (1 for values, 2 for NULLs) because a root
 * split rewrites the root in place, so readers never consult the metapage.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gbtree.h"
#include "gbtree_wide.h"

/* Format an empty gbtree page (standard header + node + special space). */
void
gbt_init_page(Page page, bool leaf, uint16 level, uint16 flags)
{
	PageInit(page, BLCKSZ, GBT_OPAQUE_SIZE);
	gbt_node_format((char *) page, leaf, level, flags);
	((PageHeader) page)->pd_lower = leaf ? GBT_LEAF_END : GBT_INNER_END;
}

void
gbt_init_metapage(Page page, Relation index, uint64 entries)
{
	GbtMetaPage meta;
	GbtPageOpaque op;
	GbtIndexInfo *info = gbt_index_info(index);

	PageInit(page, BLCKSZ, GBT_OPAQUE_SIZE);
	op = gbt_page_opaque((char *) page);
	memset(op, 0, sizeof(GbtPageOpaqueData));
	op->flags = GBT_F_META;
	op->rightlink = GBT_NO_BLOCK;
	op->leftlink = GBT_NO_BLOCK;
	op->page_id = GBT_PAGE_ID;

	meta = GbtPageGetMeta(page);
	memset(meta, 0, sizeof(GbtMetaPageData));
	meta->magic = GBT_MAGIC;
	meta->version = info->wide ? GBT_FORMAT_VERSION_WIDE : GBT_FORMAT_VERSION;
	if (info->wide)
	{
		meta->keywords = (uint16) info->nwords;
		meta->ncols = (uint16) info->shape.ncols;
	}
	meta->root = GBT_ROOT_BLKNO;
	meta->nullroot = GBT_NULLROOT_BLKNO;
	meta->keytype = info->keytype;
	meta->indoption = (uint16) index->rd_indoption[0];
	meta->fillfactor = (uint16) gbt_get_fillfactor(index);
	meta->build_entries = entries;
	((PageHeader) page)->pd_lower =
		((char *) meta + sizeof(GbtMetaPageData)) - (char *) page;
}

/*
 * Cheap structural check of a page we are about to trust.  Anything odd is
 * reported as index corruption rather than followed.
 */
void
gbt_check_page(Relation index, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	GbtPageOpaque op;

	if (PageIsNew(page))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains unexpected zero page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
	if (PageGetSpecialSize(page) != GBT_OPAQUE_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno),
				 errdetail("Special space size is %u, expected %u.",
						   (unsigned) PageGetSpecialSize(page), GBT_OPAQUE_SIZE),
				 errhint("Please REINDEX it.")));
	op = gbt_page_opaque((char *) page);
	/* no index has multi-word keys yet: a page that says so is damaged */
	if (op->page_id != GBT_PAGE_ID || op->keywords != 0 ||
		(blkno == GBT_META_BLKNO) != ((op->flags & GBT_F_META) != 0) ||
		(!(op->flags & GBT_F_META) &&
		 (((op->flags & GBT_F_POSTING) ?
		   (!(op->flags & GBT_F_LEAF) || op->nslots != 0 ||
			op->nused > GBT_POST_MAX_ENTRIES) :
		   (op->nslots != ((op->flags & GBT_F_LEAF) ? GBT_LEAF_SLOTS : GBT_INNER_SLOTS) ||
			op->nused > op->nslots)) ||
		  ((op->flags & GBT_F_LEAF) != 0) != (op->level == 0))))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
}

/* Verify the metapage; used where a full check is cheap enough. */
void
gbt_check_meta(Relation index)
{
	Buffer		buf = ReadBuffer(index, GBT_META_BLKNO);
	GbtMetaPage meta;
	GbtIndexInfo *info = gbt_index_info(index);
	uint32		version = info->wide ? GBT_FORMAT_VERSION_WIDE : GBT_FORMAT_VERSION;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	gbt_check_page(index, buf);
	meta = GbtPageGetMeta(BufferGetPage(buf));
	if (meta->magic != GBT_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a gbtree index",
						RelationGetRelationName(index))));
	if (meta->version != version || (info->wide && meta->keywords != info->nwords))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has format version %u, this gbtree supports %u for its columns",
						RelationGetRelationName(index), meta->version, version),
				 errhint("REINDEX it.")));
	UnlockReleaseBuffer(buf);
}

/*
 * Levels above the leaves in the value tree (its root is fixed at block 1):
 * what PostgreSQL 18's planner asks through amgettreeheight, as for btree.
 */
int
gbt_tree_height(Relation index)
{
	Buffer		buf = ReadBuffer(index, GBT_ROOT_BLKNO);
	int			level;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	gbt_wide_check_page(index, buf, gbt_index_info(index)->nwords);
	level = gbt_page_opaque((char *) BufferGetPage(buf))->level;
	UnlockReleaseBuffer(buf);
	return level;
}

/*
 * Get a new, exclusively locked buffer: a recycled page from the FSM if
 * there is one and the caller may recycle (see gbt_lock_recycling), else
 * by extending the relation.  The caller initializes it
 * inside its generic WAL record (GENERIC_XLOG_FULL_IMAGE).
 */
Buffer
gbt_new_buffer(Relation index, bool may_recycle)
{
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(index);

	for (; may_recycle;)
	{
		BlockNumber blkno = GetFreeIndexPage(index);
		Page		page;

		if (blkno == InvalidBlockNumber)
			break;
		buf = ReadBuffer(index, blkno);
		if (ConditionalLockBuffer(buf))
		{
			page = BufferGetPage(buf);
			if (PageIsNew(page))
				return buf;
			if (PageGetSpecialSize(page) == GBT_OPAQUE_SIZE &&
				(gbt_page_opaque((char *) page)->flags & GBT_F_DELETED) &&
				!(gbt_page_opaque((char *) page)->flags & GBT_F_META))
			{
				/*
				 * The horizon that let it be recycled says nothing of a
				 * standby's snapshots: there, queries that may still reach
				 * the page through an old link must end first (nbtree
				 * logs the same conflict).
				 */
				gbt_log_recovery_conflict(index, blkno,
										  FullTransactionIdFromU64(gbt_page_opaque((char *) page)->xact));
				return buf;
			}
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}

	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/* (hikey, hitid) <= (key, tid): everything on the page is below (key, tid) */
bool
gbt_hikey_le(GbtPageOpaque op, uint64 key, uint64 tid)
{
	return !gbt_entry_lt(key, tid, op->hikey, op->hitid);
}

/* (hikey, hitid) < (key, tid) */
bool
gbt_hikey_lt(GbtPageOpaque op, uint64 key, uint64 tid)
{
	return gbt_entry_lt(op->hikey, op->hitid, key, tid);
}

/* A descent cannot go on from buf's page: XX002, naming what is wrong. */
static gbt_noreturn void
report_bad_link(Relation index, Buffer buf, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" has %s at block %u",
					RelationGetRelationName(index), what, BufferGetBlockNumber(buf))));
}

/* Is the page one of the tree under root (value or NULL tree)? */
bool
gbt_page_in_tree(GbtPageOpaque op, BlockNumber root)
{
	return ((op->flags & GBT_F_NULLTREE) != 0) == (root == GBT_NULLROOT_BLKNO);
}

/*
 * A descent from root reached buf's page: it must be of that tree, else
 * it is a recycled page reached late, or damage.
 */
void
gbt_check_in_tree(Relation index, Buffer buf, BlockNumber root)
{
	if (!gbt_page_in_tree(gbt_page_opaque((char *) BufferGetPage(buf)), root))
		report_bad_link(index, buf, "a page of the other tree");
}

/*
 * Whether a descent for (key, tid) must leave the page for its right
 * sibling: the page was deleted (its key range went to the right), or the
 * target is at or above its high key (above, for a backward descent, which
 * wants the last page holding entries below the target).
 */
bool
gbt_must_move_right(GbtPageOpaque op, uint64 key, uint64 tid, bool backward)
{
	return (op->flags & GBT_F_DELETED) ||
		(!(op->flags & GBT_F_RIGHTMOST) &&
		 (backward ? gbt_hikey_lt(op, key, tid) : gbt_hikey_le(op, key, tid)));
}

/* The right sibling of buf's page, which must have one (XX002 if not). */
BlockNumber
gbt_checked_rightlink(Relation index, Buffer buf)
{
	BlockNumber next = gbt_page_opaque((char *) BufferGetPage(buf))->rightlink;

	if (next == GBT_NO_BLOCK || next == BufferGetBlockNumber(buf))
		report_bad_link(index, buf, "a broken right-link");
	return next;
}

/*
 * The right sibling of the locked page in buf, read, locked in mode and
 * checked; buf stays locked (lock coupling, always left to right).
 */
Buffer
gbt_lock_right_sibling(Relation index, Buffer buf, int mode)
{
	Buffer		next = ReadBuffer(index, gbt_checked_rightlink(index, buf));

	LockBuffer(next, mode);
	gbt_check_page(index, next);
	return next;
}

/*
 * The child of the locked inner page in buf to descend to for (key, tid):
 * that of the last used slot below it, or of the first one (XX002 for an
 * empty page or a bad downlink).
 */
BlockNumber
gbt_inner_child(Relation index, Buffer buf, uint64 key, uint64 tid)
{
	GbtNode		node;
	int			s;
	BlockNumber child;

	gbt_page_view(BufferGetPage(buf), &node);
	s = gbt_node_prev_used(&node, gbt_node_lower_bound_entry(&node, key, tid));
	if (s < 0)
		s = gbt_node_first_used(&node);
	if (s >= node.nslots)
		report_bad_link(index, buf, "an empty inner page");
	child = node.child[s];
	if (child == GBT_NO_BLOCK || child < GBT_FIRST_FREE_BLKNO)
		report_bad_link(index, buf, "an invalid downlink");
	return child;
}

/*
 * Descend from root to the leaf that holds the first entry >= (key, tid)
 * (forward) or the last entry < (key, tid) (backward).  Returns the leaf
 * pinned and locked in leaflock mode.
 */
Buffer
gbt_descend(Relation index, BlockNumber root, uint64 key, uint64 tid,
			bool backward, int leaflock)
{
	Buffer		buf;
	int			mode = BUFFER_LOCK_SHARE;
	int			expect_level = -1;
	int			hops = 0;

	buf = ReadBuffer(index, root);
	LockBuffer(buf, mode);
	for (;;)
	{
		Page		page;
		GbtPageOpaque op;
		BlockNumber child;

		CHECK_FOR_INTERRUPTS();
		gbt_check_page(index, buf);
		page = BufferGetPage(buf);
		op = gbt_page_opaque((char *) page);

		gbt_check_in_tree(index, buf, root);
		if ((op->flags & GBT_F_META) ||
			(expect_level >= 0 && op->level != expect_level) ||
			++hops > 1000000)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has an inconsistent tree at block %u",
							RelationGetRelationName(index), BufferGetBlockNumber(buf)),
					 errhint("Please REINDEX it.")));

		if (gbt_must_move_right(op, key, tid, backward))
		{
			BlockNumber next = gbt_checked_rightlink(index, buf);

			expect_level = op->level;
			UnlockReleaseBuffer(buf);
			buf = ReadBuffer(index, next);
			LockBuffer(buf, mode);
			continue;
		}

		/*
		 * Every page we reach (by downlink or right-link) starts at or below
		 * the target; one that starts above it means a damaged link, and
		 * following it could skip entries silently.
		 */
		if (gbt_entry_lt(key, tid, op->lowkey, op->lowtid))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" block %u: reached by a search for a key below its low key",
							RelationGetRelationName(index), BufferGetBlockNumber(buf)),
					 errhint("Please REINDEX it.")));

		if (op->flags & GBT_F_LEAF)
		{
			if (mode != leaflock)
			{
				/* root was a leaf: relock and look again, it may have split */
				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
				LockBuffer(buf, leaflock);
				mode = leaflock;
				continue;
			}
			return buf;
		}
		if (mode != BUFFER_LOCK_SHARE)
		{
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			mode = BUFFER_LOCK_SHARE;
			continue;
		}

		child = gbt_inner_child(index, buf, key, tid);
		expect_level = op->level - 1;
		mode = (op->level == 1) ? leaflock : BUFFER_LOCK_SHARE;
		UnlockReleaseBuffer(buf);
		buf = ReadBuffer(index, child);
		LockBuffer(buf, mode);
	}
}

/*
 * Recycling a page at a low block number while VACUUM's physical-order
 * pass is running could move entries behind the pass.  VACUUM holds a
 * share lock on the value root's block number (a heavyweight page lock,
 * unrelated to the buffer) for its pass; a split may take recycled pages
 * only if it gets that lock exclusively without waiting.
 */
bool
gbt_lock_recycling(Relation index)
{
	return ConditionalLockPage(index, GBT_ROOT_BLKNO, ExclusiveLock);
}

void
gbt_unlock_recycling(Relation index)
{
	UnlockPage(index, GBT_ROOT_BLKNO, ExclusiveLock);
}

/*
 * Ask for transparent huge pages on a large array.  Fresh memory taken in
 * 4 kB page faults costs about 2.5 us per page on the GPU machine: a
 * second per 1.6 GB array of a 100M-entry build, tens of milliseconds for
 * the keys and results of a million-key = ANY scan.
 */
void
gbt_advise_huge(void *p, Size len)
{
#if defined(MADV_HUGEPAGE)
	uintptr_t	start = TYPEALIGN((uintptr_t) 2 * 1024 * 1024, (uintptr_t) p);
	uintptr_t	end = TYPEALIGN_DOWN((uintptr_t) 2 * 1024 * 1024, (uintptr_t) p + len);

	if (len >= (Size) 4 * 1024 * 1024 && end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
}
