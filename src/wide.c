/*-------------------------------------------------------------------------
 *
 * wide.c
 *	  Indexes with multi-word keys (gbtree_wide.h): their key shape, the
 *	  conversion of values to and from fields, their pages.  Index tuples
 *	  for index-only scans are wide_itup.c's, the build wide_build.c's.
 *
 * The shape is gbtree_keyshape.h's: one field a column, in the column's
 * own width, with a null bit where the index has several columns.  A
 * one-column uuid index keeps its NULLs in the tree of NULLs, as one-word
 * indexes do, so its keys are exactly two words.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"


#include "gbtree_keys.h"
#include "gbtree_wide.h"
#include "gbtree_wpost.h"
#include "gbtree_tail.h"


/* a column's field width */
static int
type_bits(Oid typid)
{
	switch (typid)
	{
		case BOOLOID:
			return 1;
		case INT2OID:
			return 16;
		case INT4OID:
		case DATEOID:
		case OIDOID:
			return 32;
		case UUIDOID:
			return 128;
		case TEXTOID:
		case VARCHAROID:
		case NUMERICOID:
			return 0;			/* the bytes left over: gbt_wide_info_init */
		default:
			return 64;
	}
}

bool
gbt_type_is_text(Oid typid)
{
	return typid == TEXTOID || typid == VARCHAROID;
}

/* keyed by bytes (a field and a tail): text, and numeric (keys.c) */
bool
gbt_type_is_bytes(Oid typid)
{
	return gbt_type_is_text(typid) || typid == NUMERICOID;
}

/* a catalog row's text column, or NULL */
/* signed types narrower than a word: the field is the value's low bits */
static bool
type_is_narrow_signed(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == DATEOID;
}

/*
 * The index's key shape.  Text columns share the bytes the other fields
 * leave of keywords words (0: GBT_MAX_KEY_WORDS, the default); a build
 * may fit them to fewer (gbt_wide_fit_words), recorded in the metapage.
 */
void
gbt_wide_info_init(Relation index, GbtIndexInfo *info, int keywords)
{
	int			natts = RelationGetDescr(index)->natts;
	GbtKeyShape *shape = &info->shape;
	int			s = 0;
	int			fixed_bits = 0;
	int			ntext = 0;

	memset(shape, 0, sizeof(GbtKeyShape));
	memset(info->is_text, 0, sizeof(info->is_text));
	memset(info->sortkey_coll, 0, sizeof(info->sortkey_coll));
	info->nkeycols = IndexRelationGetNumberOfKeyAttributes(index);
	info->tidcol = natts > info->nkeycols ? info->nkeycols : -1;
	if (natts + (info->tidcol >= 0 ? 1 : 0) > GBT_MAX_KEY_COLS)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gbtree indexes support at most %d columns, INCLUDE columns counted, and %d with INCLUDE columns",
						GBT_MAX_KEY_COLS, GBT_MAX_KEY_COLS - 1)));
	shape->nullbits = natts > 1;
	for (int a = 0; a < natts; a++)
	{
		/* INCLUDE columns follow the keys, ascending, NULLS LAST */
		int16		opt = a < info->nkeycols ? index->rd_indoption[a] : 0;

		/*
		 * With INCLUDE columns, the heap TID's 48 bits come between them and
		 * the keys: entries of equal keys stay in TID order, btree's.
		 */
		if (s == info->tidcol)
		{
			info->coltypes[s] = InvalidOid;
			shape->col[s].bits = 48;
			fixed_bits += 48;
			s++;
		}
		info->coltypes[s] = gbt_column_type(index, a, &info->typmod[s]);
		shape->col[s].bits = type_bits(info->coltypes[s]);
		shape->col[s].desc = (opt & INDOPTION_DESC) != 0;
		shape->col[s].nulls_first = (opt & INDOPTION_NULLS_FIRST) != 0;
		if (gbt_type_is_text(info->coltypes[s]))
		{
			/*
			 * A key's bytes are its order under "C"; other collations take
			 * sort keys (collate.c).  An INCLUDE column is not ordered by,
			 * only stored.
			 */
			if (a < info->nkeycols)
				gbt_collate_column(index, info, a, s);
			ntext++;
			info->is_text[s] = true;
		}
		else if (info->coltypes[s] == NUMERICOID)
		{
			/*
			 * Keyed by bytes as a text is; a declared scale gives back the
			 * stored value (keys.c, "numeric"), without one there are no
			 * index-only scans of it (gbtcanreturn)
			 */
			ntext++;
			info->is_text[s] = true;
		}
		fixed_bits += shape->col[s].bits;
		s++;
	}
	shape->ncols = s;

	/*
	 * Text columns share the bytes the other fields leave of the key's
	 * words (src/README, "Text keys").
	 */
	info->text_bytes = 0;
	if (ntext > 0)
	{
		int			room = (keywords > 0 ? keywords : GBT_MAX_KEY_WORDS) * 64 - fixed_bits -
			(shape->nullbits ? shape->ncols : 0);

		info->text_bytes = room > 0 ? room / 8 / ntext : 0;
		for (int c = 0; c < s; c++)
			if (c != info->tidcol && info->is_text[c])
				shape->col[c].bits = 8 * info->text_bytes;
	}
	if (!gbt_shape_init(shape))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gbtree index keys are at most %d bits", GBT_MAX_KEY_WORDS * 64),
				 errdetail("Each column, INCLUDE columns too, takes its type's width (bool 1 bit, int2 16, int4, date and oid 32, uuid 128, the other types 64, text at least 8), plus one bit for NULL in an index of several columns, and INCLUDE columns 49 bits more.")));
	info->wide = true;
	info->nwords = shape->nwords;
	info->keybits = 0;
	for (int c = 0; c < info->nkeycols; c++)
		info->keybits += shape->col[c].bits + (shape->nullbits ? 1 : 0);
}

/*
 * A non-null value of type typid as column col's field.  A value outside
 * the column's type (a cross-type comparison: int4 column, int8 value) is
 * clamped to the field's end and reported.
 */
GbtClamp
gbt_wide_field(GbtIndexInfo *info, int col, Datum value, Oid typid, GbtColValue *v,
			   uint16 *flags)
{
	Oid			coltype = info->coltypes[col];
	int			bits = info->shape.col[col].bits;
	uint64		key;

	v->isnull = false;
	memset(v->v, 0, sizeof(v->v));
	*flags = 0;
	if (coltype == UUIDOID)
	{
		gbt_uuid_field(((pg_uuid_t *) DatumGetPointer(value))->data, v);
		return GBT_CLAMP_NONE;
	}
	if (info->is_text[col])
	{
		text	   *t = DatumGetTextPP(value);
		int			len;
		bool		alloc;
		const unsigned char *k = gbt_text_key(info, col, t, &len, &alloc);

		gbt_bytes_field(k, len, bits / 8, v);
		if (alloc)
			pfree((void *) k);
		if ((Pointer) t != DatumGetPointer(value))
			pfree(t);
		/* longer than the field: above its first bytes, below what follows */
		return len > bits / 8 ? GBT_CLAMP_PAST : GBT_CLAMP_NONE;
	}
	/* the one-word key: a family's types share its key space */
	key = gbt_datum_to_key(value, typid, flags);
	if (type_is_narrow_signed(coltype))
	{
		int64		x = gbt_key_to_int64(key);
		int64		lo = -((int64) 1 << (bits - 1));
		int64		hi = ((int64) 1 << (bits - 1)) - 1;

		if (x < lo)
		{
			v->v[0] = 0;
			return GBT_CLAMP_BELOW;
		}
		if (x > hi)
		{
			v->v[0] = gbt_field_mask(bits);
			return GBT_CLAMP_ABOVE;
		}
		v->v[0] = gbt_int_field(x, bits);
	}
	else
		v->v[0] = key;			/* 64-bit keys, oid's 32 bits, bool's 1 */
	return GBT_CLAMP_NONE;
}

/*
 * The key words of an index row of heap TID htid; false when it belongs in
 * the tree of NULLs (a one-column index's NULL), with the words zero.
 * Shape column c is index attribute c, or c - 1 past the TID's column.
 */
bool
gbt_wide_encode(GbtIndexInfo *info, Datum *values, bool *isnull, ItemPointer htid,
				uint64 *words, uint16 *tidflags)
{
	GbtColValue vals[GBT_MAX_KEY_COLS];
	const GbtKeyShape *shape = &info->shape;
	uint16		flags;

	*tidflags = 0;
	if (!shape->nullbits && isnull[0])
	{
		memset(words, 0, sizeof(uint64) * shape->nwords);
		return false;
	}
	for (int s = 0; s < shape->ncols; s++)
	{
		int			c = info->tidcol >= 0 && s > info->tidcol ? s - 1 : s;

		if (s == info->tidcol)
		{
			memset(&vals[s], 0, sizeof(GbtColValue));
			vals[s].v[0] = ((uint64) ItemPointerGetBlockNumberNoCheck(htid) << 16) |
				ItemPointerGetOffsetNumberNoCheck(htid);
			continue;
		}
		if (isnull[c])
		{
			memset(&vals[s], 0, sizeof(GbtColValue));
			vals[s].isnull = true;
			continue;
		}
		/* text goes through gbt_wide_encode_tail, which cuts it */
		if (gbt_wide_field(info, s, values[c], info->coltypes[s], &vals[s], &flags) ==
			GBT_CLAMP_PAST)
			elog(ERROR, "gbtree index \"%s\": a value longer than its field was not cut",
				 get_rel_name(info->indexrelid));
		if (flags & GBT_TID_FLAG_NEGZERO)
			*tidflags |= GBT_WIDE_NEGZERO(c);
	}
	gbt_shape_encode(shape, vals, words);
	return true;
}

/*
 * gbt_wide_encode for an entry that may have a tail (src/README, "Text
 * keys"): a text longer than its field is cut (gbtree_tail.h), its tail
 * into tail[GBT_TAIL_HIGHEST_LEN] and its length into *tlen (0: none).
 * keylen, if not NULL, is raised to the longest order key of its text
 * columns (what gbt_wide_fit_words fits).
 * A tail longer than gbt_tail_max is 54000.
 */
bool
gbt_wide_encode_tail(GbtIndexInfo *info, Datum *values, bool *isnull, ItemPointer htid,
					 uint64 *words, uint16 *tidflags, unsigned char *tail, int *tlen,
					 int *keylen)
{
	const GbtKeyShape *shape = &info->shape;
	GbtColInput in[GBT_MAX_KEY_COLS];
	text	   *detoasted[GBT_MAX_KEY_COLS];
	const unsigned char *keys[GBT_MAX_KEY_COLS];	/* order keys palloc'd */
	uint16		flags;

	*tlen = 0;
	if (info->text_bytes == 0)
		return gbt_wide_encode(info, values, isnull, htid, words, tidflags);
	*tidflags = 0;
	if (!shape->nullbits && isnull[0])
	{
		memset(words, 0, sizeof(uint64) * shape->nwords);
		return false;
	}
	memset(in, 0, sizeof(in));
	memset(detoasted, 0, sizeof(detoasted));
	memset(keys, 0, sizeof(keys));
	for (int s = 0; s < shape->ncols; s++)
	{
		int			c = info->tidcol >= 0 && s > info->tidcol ? s - 1 : s;

		if (s == info->tidcol)
		{
			in[s].val.v[0] = ((uint64) ItemPointerGetBlockNumberNoCheck(htid) << 16) |
				ItemPointerGetOffsetNumberNoCheck(htid);
			continue;
		}
		if (isnull[c])
		{
			in[s].val.isnull = true;
			continue;
		}
		if (info->is_text[s])
		{
			text	   *t = DatumGetTextPP(values[c]);

			bool		alloc;

			if ((Pointer) t != DatumGetPointer(values[c]))
				detoasted[s] = t;
			in[s].bytes = gbt_text_key(info, s, t, &in[s].len, &alloc);
			if (alloc)
				keys[s] = in[s].bytes;
			gbt_bytes_field(in[s].bytes, in[s].len, shape->col[s].bits / 8, &in[s].val);
			if (keylen && in[s].len > *keylen)
				*keylen = in[s].len;
			continue;
		}
		(void) gbt_wide_field(info, s, values[c], info->coltypes[s], &in[s].val, &flags);
		if (flags & GBT_TID_FLAG_NEGZERO)
			*tidflags |= GBT_WIDE_NEGZERO(c);
	}
	/* the values once encoded: words alone when no text is cut (tail 0) */
	*tlen = gbt_shape_encode_cut(shape, info->is_text, in, words, tail,
								 gbt_tail_max(shape->nwords));
	if (*tlen < 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index row too long for gbtree index \"%s\"",
						get_rel_name(info->indexrelid)),
				 errdetail("The index row needs %lld bytes beyond its key words; at most %d fit.",
						   (long long) gbt_tail_bytes_needed(shape, info->is_text, in),
						   gbt_tail_max(shape->nwords)),
				 errhint("Use btree for such values, or index an MD5 hash of the value.")));
	for (int s = 0; s < shape->ncols; s++)
	{
		if (detoasted[s])
			pfree(detoasted[s]);
		if (keys[s])
			pfree((void *) keys[s]);
	}
	return true;
}

/* a tail the index wrote that does not decode */
void
gbt_tail_corrupted(Oid indexrelid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" contains an entry whose tail does not decode",
					get_rel_name(indexrelid)),
			 errhint("Please REINDEX it.")));
}

/*
 * Where a value's bytes start in its order key of len bytes at k
 * (collate.c)
 */
static int
text_in_key(GbtIndexInfo *info, const unsigned char *k, int len)
{
	int			start = gbt_text_key_value_start(k, len);

	if (start < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains a text key without its value",
						get_rel_name(info->indexrelid)),
				 errhint("Please REINDEX it.")));
	return start;
}

/*
 * The inverse, for index-only scans; a uuid or a text value goes to
 * bufs[its column], or is palloc'd when bufs is NULL.
 */
void
gbt_wide_decode(GbtIndexInfo *info, const uint64 *words, uint64 tid, Datum *values,
				bool *isnull, GbtColBuf *bufs)
{
	const GbtKeyShape *shape = &info->shape;
	uint16		flags = gbt_tid_flags(tid);
	int			pos = 0;

	for (int s = 0; s < shape->ncols; s++)
	{
		int			c = info->tidcol >= 0 && s > info->tidcol ? s - 1 : s;
		Oid			t = info->coltypes[s];
		int			bits = shape->col[s].bits;
		uint64		inv = shape->col[s].desc ? UINT64_MAX : 0;
		uint64		f;

		if (shape->nullbits)
		{
			bool		null = gbt_words_get(words, pos, 1) != (uint64) shape->col[s].nulls_first;

			pos++;
			if (s != info->tidcol)
			{
				isnull[c] = null;
				if (null)
				{
					values[c] = (Datum) 0;
					pos += bits;
					continue;
				}
			}
		}
		else
			isnull[c] = false;
		if (s == info->tidcol)
		{
			pos += bits;
			continue;
		}
		if (bits > 64 || info->is_text[s])
		{
			GbtColValue v;
			GbtColBuf  *buf = bufs ? &bufs[c] : palloc(sizeof(GbtColBuf));

			gbt_field_get(words, pos, &shape->col[s], &v);
			if (t == UUIDOID)
				gbt_uuid_from_field(&v, (unsigned char *) buf->bytes);
			else if (t == NUMERICOID)
			{
				unsigned char b[GBT_MAX_KEY_WORDS * 8];
				int			len = gbt_bytes_from_field(&v, bits / 8, b);

				values[c] = gbt_numeric_from_key(b, len, info->typmod[s], buf->bytes,
												 sizeof(buf->bytes));
				pos += bits;
				continue;
			}
			else
			{
				unsigned char *b = (unsigned char *) VARDATA(buf->bytes);
				int			len = gbt_bytes_from_field(&v, bits / 8, b);

				if (OidIsValid(info->sortkey_coll[s]))
				{
					int			start = text_in_key(info, b, len);

					len -= start;
					memmove(b, b + start, len);
				}
				SET_VARSIZE(buf->bytes, VARHDRSZ + len);
			}
			values[c] = PointerGetDatum(buf->bytes);
			pos += bits;
			continue;
		}
		f = (gbt_words_get(words, pos, bits) ^ inv) & gbt_field_mask(bits);
		pos += bits;
		/* a narrow signed field back to the one-word key of its family */
		if (type_is_narrow_signed(t))
			f = gbt_key_from_int64(gbt_int_from_field(f, bits));
		values[c] = gbt_key_to_datum(f, (flags & GBT_WIDE_NEGZERO(c)) ?
									 GBT_TID_FLAG_NEGZERO : 0, t);
	}
}

/*
 * gbt_wide_decode for an entry with a tail (tlen > 0): the values in full
 * (gbt_shape_decode_cut), text and uuid palloc'd or, with scratch (of
 * GBT_DECODE_SCRATCH bytes), laid out there, valid until its next use.
 */
void
gbt_wide_decode_tail(GbtIndexInfo *info, const uint64 *words, const unsigned char *tail,
					 int tlen, uint64 tid, Datum *values, bool *isnull, char *scratch)
{
	const GbtKeyShape *shape = &info->shape;
	uint16		flags = gbt_tid_flags(tid);
	GbtColInput in[GBT_MAX_KEY_COLS];
	unsigned char buf[GBT_TAIL_HIGHEST_LEN + GBT_MAX_KEY_WORDS * 8];

	if (tlen == 0)
	{
		gbt_wide_decode(info, words, tid, values, isnull, NULL);
		return;
	}
	if (gbt_shape_decode_cut(shape, info->is_text, words, tail, tlen, in, buf, sizeof(buf)) < 0)
		gbt_tail_corrupted(info->indexrelid);
	for (int s = 0; s < shape->ncols; s++)
	{
		int			c = info->tidcol >= 0 && s > info->tidcol ? s - 1 : s;
		Oid			t = info->coltypes[s];
		uint64		f;

		if (s == info->tidcol)
			continue;
		isnull[c] = in[s].val.isnull;
		values[c] = (Datum) 0;
		if (isnull[c])
			continue;
		if (t == NUMERICOID)
		{
			/* as a text's, at most its bytes and the headers (gbtree_wide.h) */
			Size		room = VARHDRSZ + 4 + in[s].len;

			values[c] = gbt_numeric_from_key(in[s].bytes, in[s].len, info->typmod[s], scratch,
											 scratch ? room : 0);
			if (scratch)
				scratch += INTALIGN(room);
			continue;
		}
		if (info->is_text[s])
		{
			int			start = OidIsValid(info->sortkey_coll[s]) ?
				text_in_key(info, in[s].bytes, in[s].len) : 0;

			if (scratch)
			{
				/* the decoded bytes of all values fit buf, so all fit scratch */
				SET_VARSIZE(scratch, VARHDRSZ + in[s].len - start);
				memcpy(VARDATA(scratch), in[s].bytes + start, in[s].len - start);
				values[c] = PointerGetDatum(scratch);
				scratch += INTALIGN(VARHDRSZ + in[s].len - start);
			}
			else
				values[c] = PointerGetDatum(cstring_to_text_with_len((const char *) in[s].bytes + start,
																	 in[s].len - start));
			continue;
		}
		if (t == UUIDOID)
		{
			pg_uuid_t  *u = scratch ? (pg_uuid_t *) scratch : palloc(sizeof(pg_uuid_t));

			if (scratch)
				scratch += MAXALIGN(sizeof(pg_uuid_t));
			gbt_uuid_from_field(&in[s].val, u->data);
			values[c] = UUIDPGetDatum(u);
			continue;
		}
		f = in[s].val.v[0];
		if (type_is_narrow_signed(t))
			f = gbt_key_from_int64(gbt_int_from_field(f, shape->col[s].bits));
		values[c] = gbt_key_to_datum(f, (flags & GBT_WIDE_NEGZERO(c)) ? GBT_TID_FLAG_NEGZERO : 0, t);
	}
}

/*
 * Pages
 * -----
 */

/*
 * Where a page's arrays end: pd_lower, so that images keep them all; on a
 * tailed page pd_upper where its tails start, so that they keep those too
 * (generic WAL and full-page images leave out pd_lower..pd_upper).
 */
void
gbt_wide_set_lower(Page page)
{
	GbtNode		node;

	gbt_node_view((char *) page, &node);
	/* a page of words alone may have been tailed (the left half of a split) */
	if (!node.toff)
		((PageHeader) page)->pd_upper = ((PageHeader) page)->pd_special;
	if (node.nwords == 1 && (node.opaque->flags & GBT_F_LEAF))
		gbt_leaf_set_lower(page);	/* a posting body fills the page */
	else if (node.nwords == 1)
		((PageHeader) page)->pd_lower = GBT_INNER_END;
	else if (!node.toff)
		((PageHeader) page)->pd_lower =
			(char *) (node.xbounds + 2 * (node.nwords - 1)) - (char *) page;
	else
	{
		/* the tail offsets too, and pd_upper at the tails (the dead marks between) */
		((PageHeader) page)->pd_lower = (char *) (node.btoff + 4) - (char *) page;
		((PageHeader) page)->pd_upper = node.opaque->taillow;
	}
}

/*
 * Whether leaves of this multi-word tree take the posting form where keys
 * repeat (src/README, "Deduplication"): deduplicate_items, no INCLUDE
 * columns (the TID among the key makes every key distinct), not unique
 * (btree's unique indexes deduplicate versions only).  Text and numeric
 * keys too: the form holds their entries without tails, and one with a
 * tail goes into a plain leaf (wide_post.c, posting_images).  A key that fits one word takes
 * node_post.c's form, whose TIDs keep no flag of a float column's -0: it
 * has none (a float takes 64 bits).
 */
bool
gbt_wide_dedup(Relation index, const GbtIndexInfo *info)
{
	return info->wide && info->tidcol < 0 && !index->rd_index->indisunique &&
		gbt_get_dedup(index);
}

void
gbt_wide_init_page(Page page, bool leaf, uint16 level, uint16 flags, int nwords)
{
	PageInit(page, BLCKSZ, GBT_OPAQUE_SIZE);
	gbt_node_format_words((char *) page, leaf, level, flags, nwords);
	gbt_wide_set_lower(page);
}

/*
 * A leaf in posting form (node_wpost.c) whose special space and header
 * agree; its body is checked in full by gbtree_check (gbt_wpost_check).
 */
static bool
wide_posting_leaf_sound(Page page, GbtPageOpaque op, int nwords)
{
	GbtWPostHeader *h = (GbtWPostHeader *) ((char *) page + GBT_BODY_OFFSET);

	return (op->flags & GBT_F_POSTING) && (op->flags & GBT_F_LEAF) && op->level == 0 &&
		!(op->flags & (GBT_F_TAILS | GBT_F_TAILS_FEW)) && nwords >= 2 &&
		op->keywords == nwords && op->nslots == 0 && h->nwords == nwords &&
		h->nentries == op->nused && h->ngroups <= h->nentries && h->nentries > 0 &&
		h->nentries <= GBT_LEAF_MAX_ENTRIES &&
		gbt_wpost_size(nwords, h->ngroups, h->nentries, (h->flags & GBT_WPOST_WIDEBLK) != 0,
					   (h->flags & GBT_WPOST_TFLAGS) != 0) <=
		(size_t) gbt_wpost_limit(nwords, op->flags);
}

/* gbt_check_page for a tree of nwords-word keys */
void
gbt_wide_check_page(Relation index, Buffer buf, int nwords)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	GbtPageOpaque op;
	bool		leaf;

	if (nwords == 1)
	{
		gbt_check_page(index, buf);
		return;
	}
	if (PageIsNew(page) || PageGetSpecialSize(page) != GBT_OPAQUE_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
	op = gbt_page_opaque((char *) page);
	leaf = (op->flags & GBT_F_LEAF) != 0;
	if (op->page_id != GBT_PAGE_ID ||
		(blkno == GBT_META_BLKNO) != ((op->flags & GBT_F_META) != 0) ||
		(!(op->flags & GBT_F_META) && !wide_posting_leaf_sound(page, op, nwords) &&
		 (op->keywords != nwords || (op->flags & GBT_F_POSTING) ||
		  op->nslots != gbt_words_slots_of(leaf, nwords, op->flags) ||
		  ((op->flags & (GBT_F_TAILS | GBT_F_TAILS_FEW)) == GBT_F_TAILS_FEW) ||
		  ((op->flags & GBT_F_TAILS) &&
		   (op->taillow < gbt_tail_start_as(leaf, nwords, op->flags) ||
			op->taillow > GBT_OPAQUE_OFFSET ||
			op->tailfree > GBT_OPAQUE_OFFSET - op->taillow)) ||
		  op->nused > op->nslots || leaf != (op->level == 0))))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
	/* readers copy the bounds' tails into buffers of the longest a key has */
	if (op->flags & GBT_F_TAILS)
	{
		GbtNode		node;

		gbt_node_view((char *) page, &node);
		for (int b = 0; b < 2; b++)
		{
			uint16		off = node.btoff[b];
			uint16		len;

			if (off == 0)
				continue;
			if (off < op->taillow || off > GBT_OPAQUE_OFFSET - 2)
				len = 0;
			else
				memcpy(&len, (char *) page + off, sizeof(len));
			if (len == 0 || len > gbt_tail_max(nwords) || off + 2 + len > GBT_OPAQUE_OFFSET)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" contains corrupted page at block %u",
								RelationGetRelationName(index), blkno),
						 errdetail("A bound's tail lies outside the page's tail area."),
						 errhint("Please REINDEX it.")));
		}
	}
}
