/*-------------------------------------------------------------------------
 *
 * gbtree_wpost.h
 *	  The posting form of a multi-word leaf (node_wpost.c, src/README
 *	  "Deduplication").  Plain C.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GBTREE_WPOST_H
#define GBTREE_WPOST_H

#include "gbtree_node.h"

#define GBT_WPOST_WIDEBLK	0x0001	/* blocks stored whole */
#define GBT_WPOST_TFLAGS	0x0002	/* TID flags stored */

typedef struct GbtWPostHeader
{
	uint16_t	ngroups;		/* distinct keys */
	uint16_t	nentries;		/* TIDs */
	uint16_t	nwords;			/* words a key: the page's keywords */
	uint16_t	flags;			/* GBT_WPOST_* */
	uint32_t	baseblk;		/* least block, the base of 16-bit deltas */
	uint32_t	pad;
} GbtWPostHeader;

typedef struct GbtWPost
{
	GbtWPostHeader *hdr;
	uint64_t   *keys;			/* [ngroups * nwords] */
	uint16_t   *start;			/* [ngroups + 1] */
	uint16_t   *blocks16;		/* narrow, else NULL */
	uint32_t   *blocks32;		/* wide, else NULL */
	uint16_t   *offs;
	uint16_t   *tflags;			/* or NULL: all zero */
} GbtWPost;

extern int	gbt_wpost_limit(int nwords, uint16_t flags);
extern size_t gbt_wpost_size(int nwords, int ngroups, int nentries, bool wideblk, bool tflags);
extern bool gbt_wpost_fits(int n, int nw, const uint64_t *e, uint16_t flags);
extern void gbt_wpost_view(char *page, GbtWPost *p);
extern uint64_t gbt_wpost_tid(const GbtWPost *p, int i);
extern void gbt_wpost_encode(char *page, int n, int nw, const uint64_t *e);
extern int	gbt_wpost_decode(char *page, uint64_t *e);
extern int	gbt_wpost_lower_bound_group(const GbtWPost *p, const uint64_t *key);
extern int	gbt_wpost_lower_bound_entry(const GbtWPost *p, const uint64_t *key, uint64_t tid);
extern bool gbt_wpost_insert_inplace(char *page, const uint64_t *key, uint64_t tid, bool apply);
extern const char *gbt_wpost_check(char *page);

#endif							/* GBTREE_WPOST_H */
