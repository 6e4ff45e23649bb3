/*
 * tree_model.h
 *	  Host-side model of a gbtree index for the CUDA tests and benchmark:
 *	  page images built bottom-up as src/build.c does, mutators that make
 *	  realistic non-packed trees (inserts with gaps at random places, uneven
 *	  leaf splits, deleted leaves), and the reference lookup of
 *	  src/gbtree_walk.h (the same descent as gbt_descend in src/pages.c and
 *	  the same leaf scan as the CPU path) over them.
 *
 *	  Header-only C++ (host code); link with src/node.c and src/simd.c.
 */
#ifndef GBT_TREE_MODEL_H
#define GBT_TREE_MODEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

extern "C"
{
#include "gbtree_node.h"
#include "gbtree_walk.h"
}

struct TmEntry
{
	uint64_t	key;
	uint64_t	tid;
	bool operator<(const TmEntry &o) const
	{
		return key < o.key || (key == o.key && tid < o.tid);
	}
	bool operator==(const TmEntry &o) const
	{
		return key == o.key && tid == o.tid;
	}
};

static inline uint64_t
tm_splitmix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

struct TmRng
{
	uint64_t	s;
	explicit TmRng(uint64_t seed) : s(seed) {}
	uint64_t next() { s += 1; return tm_splitmix(s * 0x2545F4914F6CDD1DULL); }
	uint64_t below(uint64_t n) { return n ? next() % n : 0; }
};

struct TmIndex
{
	std::vector<char> img;		/* nblocks * 8 KB */
	uint32_t	nblocks = 0;

	char *page(uint32_t b) { return img.data() + (size_t) b * GBT_PAGE_SIZE; }
	const char *page(uint32_t b) const { return img.data() + (size_t) b * GBT_PAGE_SIZE; }
	GbtPageOpaque op(uint32_t b) { return gbt_page_opaque(page(b)); }
	uint32_t alloc()
	{
		img.resize((size_t) (nblocks + 1) * GBT_PAGE_SIZE, 0);
		return nblocks++;
	}
	void reserve(uint32_t n) { img.reserve((size_t) n * GBT_PAGE_SIZE); }
};

static inline void
tm_init_page(char *page, bool leaf, uint16_t level, uint16_t flags)
{
	memset(page, 0, GBT_PAGE_SIZE);
	gbt_node_format(page, leaf, level, flags);
}

/*
 * Build bottom-up like build.c's build_tree: leaves at fillfactor percent
 * of 480 slots, inner pages at inner_ff percent of 384 (build.c: 70), gaps
 * spread evenly, the first separator of each level's leftmost page (0, 0),
 * separators = first entry of each child, high keys, low keys, links.
 * Block GBT_META_BLKNO the metapage, GBT_ROOT_BLKNO the value root,
 * GBT_NULLROOT_BLKNO an empty NULL root, the rest from GBT_FIRST_FREE_BLKNO.
 */
static inline void
tm_build(TmIndex &ix, const std::vector<TmEntry> &entries, int fillfactor, int inner_ff = 70)
{
	int			leafcap = std::max(1, GBT_LEAF_SLOTS * fillfactor / 100);
	int			innercap = std::max(2, GBT_INNER_SLOTS * inner_ff / 100);
	size_t		n = entries.size();
	size_t		npages[40];
	int			nlevels;
	std::vector<TmEntry> seps;
	std::vector<uint32_t> sepblk;
	uint32_t	nextblk = GBT_FIRST_FREE_BLKNO;

	npages[0] = std::max((size_t) 1, (n + leafcap - 1) / leafcap);
	nlevels = 1;
	while (npages[nlevels - 1] > 1)
	{
		npages[nlevels] = (npages[nlevels - 1] + innercap - 1) / innercap;
		nlevels++;
	}
	{
		size_t		total = GBT_FIRST_FREE_BLKNO;

		for (int l = 0; l < nlevels - 1; l++)
			total += npages[l];
		ix.img.assign(total * GBT_PAGE_SIZE, 0);
		ix.nblocks = (uint32_t) total;
	}
	/* metapage and NULL root */
	{
		GbtPageOpaque op = gbt_page_opaque(ix.page(GBT_META_BLKNO));

		memset(ix.page(GBT_META_BLKNO), 0, GBT_PAGE_SIZE);
		op->flags = GBT_F_META;
		op->rightlink = GBT_NO_BLOCK;
		op->leftlink = GBT_NO_BLOCK;
		op->page_id = GBT_PAGE_ID;
		tm_init_page(ix.page(GBT_NULLROOT_BLKNO), true, 0,
					 GBT_F_ROOT | GBT_F_RIGHTMOST | GBT_F_NULLTREE);
	}

	for (int level = 0; level < nlevels; level++)
	{
		size_t		np = npages[level];
		size_t		nin = level == 0 ? n : seps.size();
		bool		top = level == nlevels - 1;
		uint32_t	first = top ? GBT_ROOT_BLKNO : nextblk;
		std::vector<TmEntry> nseps(top ? 0 : np);
		std::vector<uint32_t> nsepblk(top ? 0 : np);

		if (!top)
			nextblk += (uint32_t) np;
		/* pages of one level are independent (OpenMP where compiled with it) */
#pragma omp parallel for schedule(static)
		for (long pl = 0; pl < (long) np; pl++)
		{
			size_t		p = (size_t) pl;
			uint64_t	kbuf[GBT_MAX_SLOTS],
						tbuf[GBT_MAX_SLOTS];
			uint32_t	cbuf[GBT_MAX_SLOTS];
			size_t		from = nin * p / np,
						to = nin * (p + 1) / np;
			uint32_t	blk = top ? GBT_ROOT_BLKNO : first + (uint32_t) p;
			char	   *page = ix.page(blk);
			GbtNode		node;
			int			cnt = (int) (to - from);

			tm_init_page(page, level == 0, (uint16_t) level, top ? GBT_F_ROOT : 0);
			gbt_node_view(page, &node);
			for (int i = 0; i < cnt; i++)
			{
				const TmEntry &e = level == 0 ? entries[from + i] : seps[from + i];

				kbuf[i] = e.key;
				tbuf[i] = e.tid;
				if (level > 0)
					cbuf[i] = sepblk[from + i];
			}
			if (level > 0 && p == 0 && cnt > 0)
				kbuf[0] = tbuf[0] = 0;
			gbt_node_load(&node, cnt, kbuf, tbuf, level == 0 ? NULL : cbuf);
			node.opaque->leftlink = p == 0 ? GBT_NO_BLOCK : blk - 1;
			if (p > 0)
			{
				const TmEntry &e = level == 0 ? entries[from] : seps[from];

				node.opaque->lowkey = e.key;
				node.opaque->lowtid = e.tid;
			}
			if (p + 1 < np)
			{
				const TmEntry &e = level == 0 ? entries[to] : seps[to];

				node.opaque->rightlink = blk + 1;
				node.opaque->hikey = e.key;
				node.opaque->hitid = e.tid;
			}
			else
				node.opaque->flags |= GBT_F_RIGHTMOST;
			if (!top)
			{
				nseps[p].key = cnt > 0 ? kbuf[0] : 0;
				nseps[p].tid = cnt > 0 ? tbuf[0] : 0;
				nsepblk[p] = blk;
			}
		}
		seps.swap(nseps);
		sepblk.swap(nsepblk);
	}
}

/* ------------------------------------------------------------------------
 * Reference lookup (CPU): src/gbtree_walk.h, which the CPU stand-in of the
 * library (test/gpu/emu) answers lookups with.  -1 on an inconsistency.
 * ------------------------------------------------------------------------
 */
static inline int
tm_descend(const TmIndex &ix, uint32_t root, uint64_t key, uint64_t tid, uint32_t *leaf,
		   uint32_t *parent = NULL)
{
	return gbt_walk_descend(ix.img.data(), ix.nblocks, root, key, tid, leaf, parent);
}

static inline void
tm_append_match(void *arg, uint64_t key, uint64_t tid)
{
	((std::vector<TmEntry> *) arg)->push_back(TmEntry{key, tid});
}

/* matches of [lo, hi) appended to out; -1 on inconsistency */
static inline int
tm_lookup(const TmIndex &ix, uint32_t root, uint64_t lk, uint64_t lt, uint64_t hk, uint64_t ht,
		  std::vector<TmEntry> &out)
{
	return gbt_walk_range(ix.img.data(), ix.nblocks, root, lk, lt, hk, ht, tm_append_match,
						  &out) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * Mutators
 * ------------------------------------------------------------------------
 */

/* reload a page with new entries, keeping its opaque fields */
static inline void
tm_reload(char *page, const std::vector<TmEntry> &e, const std::vector<uint32_t> *child, bool spread)
{
	GbtPageOpaqueData save = *gbt_page_opaque(page);
	bool		leaf = save.flags & GBT_F_LEAF;
	GbtNode		node;
	std::vector<uint64_t> k(e.size()), t(e.size());

	for (size_t i = 0; i < e.size(); i++)
	{
		k[i] = e[i].key;
		t[i] = e[i].tid;
	}
	tm_init_page(page, leaf, save.level, save.flags);
	gbt_node_view(page, &node);
	gbt_node_load_spread(&node, (int) e.size(), k.data(), t.data(), child ? child->data() : NULL, spread);
	{
		uint16_t	nused = gbt_page_opaque(page)->nused;

		*gbt_page_opaque(page) = save;
		gbt_page_opaque(page)->nused = nused;
	}
}

static inline void
tm_extract(char *page, std::vector<TmEntry> &e, std::vector<uint32_t> *child)
{
	GbtNode		node;
	uint64_t	k[GBT_MAX_SLOTS],
				t[GBT_MAX_SLOTS];
	uint32_t	c[GBT_MAX_SLOTS];
	int			n;

	gbt_node_view(page, &node);
	n = gbt_node_extract(&node, k, t, c);
	e.resize(n);
	if (child)
		child->resize(n);
	for (int i = 0; i < n; i++)
	{
		e[i].key = k[i];
		e[i].tid = t[i];
		if (child)
			(*child)[i] = c[i];
	}
}

/*
 * Insert an entry (not yet present).  A full leaf is split unevenly at a
 * random point, its right half going to a new page, with a downlink in the
 * parent (if the parent is full too, the insert is skipped).  Returns true
 * if inserted.
 */
static inline bool
tm_insert(TmIndex &ix, TmEntry e, TmRng &rng)
{
	uint32_t	leaf,
				parent;

	if (tm_descend(ix, GBT_ROOT_BLKNO, e.key, e.tid, &leaf, &parent) != 0)
		return false;

	GbtNode		node;

	gbt_node_view(ix.page(leaf), &node);
	if (gbt_node_insert(&node, e.key, e.tid, 0) >= 0)
		return true;
	if (parent == GBT_NO_BLOCK)
		return false;			/* root leaf: no split here */

	/* split the leaf */
	GbtNode		pnode;

	gbt_node_view(ix.page(parent), &pnode);
	if (pnode.opaque->nused >= pnode.nslots)
		return false;

	std::vector<TmEntry> all;

	tm_extract(ix.page(leaf), all, NULL);
	all.push_back(e);
	std::sort(all.begin(), all.end());

	size_t		k = 1 + rng.below(all.size() - 1);
	std::vector<TmEntry> left(all.begin(), all.begin() + k), right(all.begin() + k, all.end());
	uint32_t	rblk = ix.alloc();
	GbtPageOpaqueData lop = *ix.op(leaf);

	tm_init_page(ix.page(rblk), true, 0, 0);
	{
		GbtPageOpaque r = ix.op(rblk);

		r->lowkey = right[0].key;
		r->lowtid = right[0].tid;
		r->hikey = lop.hikey;
		r->hitid = lop.hitid;
		r->rightlink = lop.rightlink;
		r->leftlink = leaf;
		r->flags |= lop.flags & GBT_F_RIGHTMOST;
	}
	tm_reload(ix.page(rblk), right, NULL, rng.below(2));
	{
		GbtPageOpaque l = ix.op(leaf);

		l->hikey = right[0].key;
		l->hitid = right[0].tid;
		l->rightlink = rblk;
		l->flags &= ~GBT_F_RIGHTMOST;
	}
	tm_reload(ix.page(leaf), left, NULL, rng.below(2));
	if (lop.rightlink != GBT_NO_BLOCK && !(lop.flags & GBT_F_RIGHTMOST))
		ix.op(lop.rightlink)->leftlink = rblk;
	gbt_node_view(ix.page(parent), &pnode);
	gbt_node_insert(&pnode, right[0].key, right[0].tid, rblk);
	return true;
}

/* delete used slot number i (in slot order) of a random non-empty leaf */
static inline bool
tm_delete_random(TmIndex &ix, TmRng &rng, TmEntry *gone)
{
	for (int tries = 0; tries < 100; tries++)
	{
		uint32_t	b = GBT_FIRST_FREE_BLKNO +
			(uint32_t) rng.below(ix.nblocks - GBT_FIRST_FREE_BLKNO);
		GbtPageOpaque op = ix.op(b);
		GbtNode		node;

		if (!(op->flags & GBT_F_LEAF) || (op->flags & GBT_F_DELETED) || op->nused == 0)
			continue;
		gbt_node_view(ix.page(b), &node);

		int			want = (int) rng.below(op->nused);
		int			s = gbt_node_next_used(&node, 0);

		while (want-- > 0)
			s = gbt_node_next_used(&node, s + 1);
		gone->key = node.keys[s];
		gone->tid = node.tids[s];
		gbt_node_delete_slot(&node, s);
		return true;
	}
	return false;
}

/*
 * Delete a leaf as vacuum does: its entries removed (returned in gone),
 * the parent's downlink for it now leads to its right sibling, whose own
 * downlink goes; the left sibling's right-link skips it (mode 0) or still
 * points to it (mode 1, "deleted leaf in the chain"); mode 2 also leaves
 * the parent untouched (a stale parent).  The right sibling takes over the
 * deleted leaf's low key.  Returns false if no suitable leaf was found.
 */
static inline bool
tm_delete_leaf(TmIndex &ix, TmRng &rng, int mode, std::vector<TmEntry> &gone)
{
	for (int tries = 0; tries < 200; tries++)
	{
		uint32_t	d = GBT_FIRST_FREE_BLKNO +
			(uint32_t) rng.below(ix.nblocks - GBT_FIRST_FREE_BLKNO);
		GbtPageOpaque dop = ix.op(d);

		if (!(dop->flags & GBT_F_LEAF) || (dop->flags & (GBT_F_DELETED | GBT_F_RIGHTMOST | GBT_F_ROOT)) ||
			dop->leftlink == GBT_NO_BLOCK)
			continue;

		uint32_t	l = dop->leftlink,
					r = dop->rightlink;

		if (r == GBT_NO_BLOCK || r >= ix.nblocks || (ix.op(r)->flags & GBT_F_DELETED))
			continue;			/* the right sibling must be a live leaf */
		uint32_t	leaf,
					parent;

		/* find the parent through a descent to the leaf's first entry */
		if (tm_descend(ix, GBT_ROOT_BLKNO, dop->lowkey, dop->lowtid, &leaf, &parent) != 0 ||
			leaf != d || parent == GBT_NO_BLOCK)
			continue;

		std::vector<TmEntry> pe;
		std::vector<uint32_t> pc;
		int			id = -1,
					ir = -1;

		tm_extract(ix.page(parent), pe, &pc);
		for (size_t i = 0; i < pc.size(); i++)
		{
			if (pc[i] == d)
				id = (int) i;
			if (pc[i] == r)
				ir = (int) i;
		}
		if (id < 0 || ir != id + 1)
			continue;			/* last child of its parent: kept */

		std::vector<TmEntry> de;

		tm_extract(ix.page(d), de, NULL);
		gone.insert(gone.end(), de.begin(), de.end());
		tm_reload(ix.page(d), std::vector<TmEntry>(), NULL, true);
		dop = ix.op(d);
		if (mode != 2)
		{
			pc[id] = r;
			pe.erase(pe.begin() + ir);
			pc.erase(pc.begin() + ir);
			tm_reload(ix.page(parent), pe, &pc, rng.below(2));
		}
		ix.op(r)->lowkey = dop->lowkey;
		ix.op(r)->lowtid = dop->lowtid;
		ix.op(r)->leftlink = l;
		if (mode == 0)
			ix.op(l)->rightlink = r;
		dop->flags |= GBT_F_DELETED;
		return true;
	}
	return false;
}

#endif							/* GBT_TREE_MODEL_H */
