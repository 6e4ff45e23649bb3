/*-------------------------------------------------------------------------
 *
 * wide.c
 *	  Indexes with multi-word keys (gbtree_wide.h): their key shape, the
 *	  conversion of values to and from fields, their pages, their build.
 *
 * The shape is gbtree_keyshape.h's: one field a column, in the column's
 * own width, with a null bit where the index has several columns.  A
 * one-column uuid index keeps its NULLs in the tree of NULLs, as one-word
 * indexes do, so its keys are exactly two words.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/tableam.h"
#include "access/tupmacs.h"
#include "catalog/index.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/uuid.h"


/* gbt_tail_build's level arrays from the build's memory context */
#define GBT_TAILWALK_ALLOC(size) MemoryContextAllocHuge(CurrentMemoryContext, (size))
#define GBT_TAILWALK_FREE(ptr) pfree(ptr)

#include "gbtree_build.h"
#include "gbtree_keys.h"
#include "gbtree_wide.h"
#include "gbtree_tail.h"
#include "gbtree_wsort.h"


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
		info->coltypes[s] = TupleDescAttr(RelationGetDescr(index), a)->atttypid;
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
			if (c != info->tidcol && gbt_type_is_text(info->coltypes[c]))
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
	if (gbt_type_is_text(coltype))
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
		if (bits > 64 || gbt_type_is_text(t))
		{
			GbtColValue v;
			GbtColBuf  *buf = bufs ? &bufs[c] : palloc(sizeof(GbtColBuf));

			gbt_field_get(words, pos, &shape->col[s], &v);
			if (t == UUIDOID)
				gbt_uuid_from_field(&v, (unsigned char *) buf->bytes);
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
 * Index-only scans write an entry's columns straight into the tuple's data
 * area: gbt_wide_decode's per-column type switch and Datums, fixed once a
 * scan, cost a third of an ORDER BY over a two-column index.  The layout
 * is heap_fill_tuple's for a tuple without NULLs: each fixed-width column
 * at its alignment, a text column as a short varlena (a key's text is at
 * most 32 bytes) with no alignment; after a text column the offsets depend
 * on its length, so such plans find them as they go.
 */
void
gbt_wide_itup_plan(GbtIndexInfo *info, TupleDesc desc, GbtItupPlan *plan)
{
	const GbtKeyShape *shape = &info->shape;
	int			pos = 0;
	Size		off = 0;

	Size		maxoff = 0;

	plan->nsteps = 0;
	plan->varwidth = false;
	plan->decode = false;
	for (int s = 0; s < shape->ncols; s++)
	{
		int			c = info->tidcol >= 0 && s > info->tidcol ? s - 1 : s;
		Oid			t = info->coltypes[s];
		Form_pg_attribute att;
		GbtItupStep *st;

		if (s == info->tidcol)
		{
			pos += (shape->nullbits ? 1 : 0) + shape->col[s].bits;
			continue;
		}
		att = TupleDescAttr(desc, c);
		st = &plan->step[plan->nsteps++];
		st->nullpos = shape->nullbits ? pos : -1;
		st->nulls_first = shape->col[s].nulls_first;
		pos += shape->nullbits ? 1 : 0;
		st->pos = pos;
		st->bits = shape->col[s].bits;
		st->inv = shape->col[s].desc ? UINT64_MAX : 0;
		st->negzero = GBT_WIDE_NEGZERO(c);
		st->align = att->attalign;
		st->len = att->attlen;
		if (!plan->varwidth)
			off = att_align_nominal(off, att->attalign);
		st->off = off;
		switch (t)
		{
			case INT2OID:
				st->kind = GBT_ITUP_INT16;
				break;
			case INT4OID:
			case DATEOID:
				st->kind = GBT_ITUP_INT32;
				break;
			case OIDOID:
				st->kind = GBT_ITUP_OID;
				break;
			case BOOLOID:
				st->kind = GBT_ITUP_BOOL;
				break;
			case FLOAT4OID:
				st->kind = GBT_ITUP_FLOAT4;
				break;
			case FLOAT8OID:
				st->kind = GBT_ITUP_FLOAT8;
				break;
			case UUIDOID:
				st->kind = GBT_ITUP_UUID;
				break;
			case TEXTOID:
			case VARCHAROID:
				Assert(st->bits / 8 + VARHDRSZ_SHORT <= VARATT_SHORT_MAX);
				plan->decode |= OidIsValid(info->sortkey_coll[s]);
				st->kind = GBT_ITUP_TEXT;
				plan->varwidth = true;
				break;
			default:
				/* int8, time, timestamp(tz), money: the one-word key */
				Assert(st->bits == 64);
				st->kind = GBT_ITUP_INT64;
				break;
		}
		if (!plan->varwidth)
			off += att->attlen;
		/*
		 * Alignment is monotone: the largest offset aligns to the largest.
		 * A text is written a whole word at a time (itup_fill).
		 */
		if (st->kind == GBT_ITUP_TEXT)
			maxoff += VARHDRSZ_SHORT + 8 * ((st->bits + 63) / 64);
		else
			maxoff = att_align_nominal(maxoff, att->attalign) + att->attlen;
		pos += st->bits;
	}
	Assert(plan->varwidth || maxoff == off);
	plan->maxsize = maxoff;
	/* an ASC text last, after columns that have no tail form to decode */
	plan->tail_last = !plan->decode && info->tidcol < 0 && plan->nsteps == shape->ncols &&
		plan->step[plan->nsteps - 1].kind == GBT_ITUP_TEXT &&
		!shape->col[shape->ncols - 1].desc;
	plan->tail_byte = 255 - (shape->ncols - 1);
	plan->text_alone = !plan->decode && plan->nsteps == 1 && plan->step[0].kind == GBT_ITUP_TEXT &&
		plan->step[0].nullpos < 0 && plan->step[0].pos == 0 &&
		plan->step[0].bits % 64 == 0;
}

/*
 * gbt_words_get without its branch, for a field of up to 64 bits: the 64
 * bits from pos of the word pair, then the field's top bits.  The pair's
 * second word may be the entry's TID, which follows its words.
 */
static inline uint64
field_bits(const uint64 *words, int pos, int nbits)
{
	int			i = pos >> 6;
	int			o = pos & 63;
	uint64		x = (words[i] << o) | ((words[i + 1] >> 1) >> (63 - o));

	return x >> (64 - nbits);
}

/*
 * A fixed-width column's value from its field into dst; kind is a
 * constant where the callers can make it one, so that the switch folds.
 */
static inline pg_attribute_always_inline void
put_fixed(GbtItupKind kind, const GbtItupStep *st, const uint64 *words, uint64 tid, char *dst)
{
	uint16		flags = gbt_tid_flags(tid);
	uint64		f = kind == GBT_ITUP_UUID ? 0 :
		(field_bits(words, st->pos, st->bits) ^ st->inv) & gbt_field_mask(st->bits);

	switch (kind)
	{
		case GBT_ITUP_UUID:
			{
				/* the two halves, big-endian (gbt_uuid_from_field's bytes) */
				uint64		hi = pg_hton64(gbt_words_get(words, st->pos, 64) ^ st->inv);
				uint64		lo = pg_hton64(gbt_words_get(words, st->pos + 64, 64) ^ st->inv);

				memcpy(dst, &hi, sizeof(hi));
				memcpy(dst + sizeof(hi), &lo, sizeof(lo));
			}
			break;
		case GBT_ITUP_INT16:
			*(int16 *) dst = (int16) gbt_int_from_field(f, st->bits);
			break;
		case GBT_ITUP_INT32:
			*(int32 *) dst = (int32) gbt_int_from_field(f, st->bits);
			break;
		case GBT_ITUP_INT64:
			*(int64 *) dst = gbt_key_to_int64(f);
			break;
		case GBT_ITUP_OID:
			*(Oid *) dst = (Oid) f;
			break;
		case GBT_ITUP_BOOL:
			*(bool *) dst = f != 0;
			break;
		case GBT_ITUP_FLOAT4:
			*(float4 *) dst = f == GBT_NAN_KEY ? get_float4_nan() :
				(float4) gbt_key_to_double(f, (flags & st->negzero) != 0);
			break;
		case GBT_ITUP_FLOAT8:
			*(float8 *) dst = f == GBT_NAN_KEY ? get_float8_nan() :
				gbt_key_to_double(f, (flags & st->negzero) != 0);
			break;
		case GBT_ITUP_TEXT:
			pg_unreachable();
	}
}

/*
 * Word k of a text field (its bytes from the top, the padding zero) into
 * an index-only tuple's value bytes, stored whole; *len becomes the
 * value's length where the word holds its last byte (text has no zero
 * byte).
 */
static inline void
itup_text_word(uint64 x, int k, char *bytes, int *len)
{
	if (x != 0)
		*len = 8 * k + 8 - pg_rightmost_one_pos64(x) / 8;
	x = pg_hton64(x);
	memcpy(bytes + 8 * k, &x, sizeof(x));
}

/*
 * itup_fill for an index of one text column and nothing else
 * (plan->text_alone), the common text index, without the plan's loop: the
 * key's words, byte-swapped, after a one-byte header; their bytes past the
 * value are zeros.  Returns the data's size.
 */
static inline Size
itup_fill_text_alone(const GbtItupPlan *plan, const uint64 *words, char *data)
{
	uint64		inv = plan->step[0].inv;
	int			len = 0;

	for (int k = 0; k < plan->step[0].bits / 64; k++)
		itup_text_word(words[k] ^ inv, k, data + VARHDRSZ_SHORT, &len);
	SET_VARSIZE_SHORT(data, VARHDRSZ_SHORT + len);
	return VARHDRSZ_SHORT + len;
}

/* whether the entry's column of step st is NULL */
static inline bool
step_is_null(const GbtItupStep *st, const uint64 *words)
{
	return st->nullpos >= 0 &&
		((words[st->nullpos >> 6] >> (63 - (st->nullpos & 63))) & 1) !=
		(uint64) st->nulls_first;
}

/*
 * The entry's columns into data, and their size into *size; false (data
 * partly written) when a column is NULL, whose tuple has a null bitmap and
 * other offsets.  Alignment padding is written as zeros, as
 * heap_fill_tuple leaves it.  words is an entry's: its TID follows them.
 */
static inline pg_attribute_always_inline bool
itup_fill(const GbtItupPlan *plan, const uint64 *words, uint64 tid, const unsigned char *rest,
		  int restlen, char *data, Size *size, bool varwidth)
{
	Size		off = 0;

	for (int i = 0; i < plan->nsteps; i++)
	{
		const GbtItupStep *st = &plan->step[i];
		char	   *dst;

		if (step_is_null(st, words))
			return false;
		if (varwidth)
		{
			Size		aligned = st->kind == GBT_ITUP_TEXT ? off :
				att_align_nominal(off, st->align);

			memset(data + off, 0, aligned - off);
			off = aligned;
		}
		else
			off = st->off;
		dst = data + off;
		if (st->kind == GBT_ITUP_TEXT)
		{
			/*
			 * The bytes, a word at a time, stored whole: past the value they
			 * are the field's zero padding, and a later column or the
			 * caller's zeroing of the tuple's tail goes over them (the
			 * caller's buffer holds every column's full width).  Text has no
			 * zero byte, so its length ends at the last non-zero byte.
			 */
			int			len = 0;
			int			hdr = VARHDRSZ_SHORT;

			/*
			 * A cut text (the last column's, rest its bytes past the field):
			 * too long for a short header, heap_fill_tuple aligns it and
			 * gives it a 4-byte one.
			 */
			if (rest && VARHDRSZ_SHORT + st->bits / 8 + restlen > VARATT_SHORT_MAX)
			{
				Size		aligned = att_align_nominal(off, st->align);

				memset(data + off, 0, aligned - off);
				off = aligned;
				dst = data + off;
				hdr = VARHDRSZ;
			}
			for (int k = 0; k * 64 < st->bits; k++)
			{
				int			n = Min(64, st->bits - 64 * k);

				/* the field's next 64 bits, its own n of them kept */
				uint64		x = field_bits(words, st->pos + 64 * k, 64) ^ st->inv;

				x = (x >> (64 - n)) << (64 - n);

				itup_text_word(x, k, dst + hdr, &len);
			}
			if (rest)
			{
				/* a cut value fills its field */
				if (len != st->bits / 8)
					return false;
				memcpy(dst + hdr + len, rest, restlen);
				len += restlen;
			}
			if (hdr == VARHDRSZ_SHORT)
				SET_VARSIZE_SHORT(dst, VARHDRSZ_SHORT + len);
			else
				SET_VARSIZE(dst, VARHDRSZ + len);
			off += hdr + len;
		}
		else
		{
			put_fixed((GbtItupKind) st->kind, st, words, tid, dst);
			off += st->len;
		}
	}
	*size = varwidth ? off : plan->maxsize;
	return true;
}

/*
 * itup_fill for an entry with a tail, where the plan can
 * (plan->tail_last: the tail then holds the last column's bytes past its
 * field, between the column's byte and the end byte, gbtree_tail.h).  The
 * caller's buffer holds the plan's maxsize, 8 and the tail's length.
 * False, the data partly written, for anything else: a NULL, a tail of
 * another form.
 */
bool
gbt_wide_itup_fill_tail(const GbtItupPlan *plan, const uint64 *words, uint64 tid,
						const unsigned char *tail, int tlen, char *data, Size *size)
{
	if (!plan->tail_last || tlen < 2 || tail[0] != plan->tail_byte || tail[tlen - 1] != 0 ||
		memchr(tail + 1, 0, tlen - 2) != NULL)
		return false;
	return itup_fill(plan, words, tid, tail + 1, tlen - 2, data, size, true);
}

/*
 * The index-only tuples of n (at most 64) consecutive entries of items
 * (nwords words and the TID each), for a plan whose words hold the values
 * (gbt_wide_itup_batch): tuple i at out + i * stride, stride that of the
 * largest tuple.  Fixed-width columns go a column at a time, so that each
 * loop is one kind's: a leaf's tuples cost a fraction of one itup_fill
 * each.  Returns a mask of the entries with a NULL column, whose tuples
 * are not made.
 */
uint64
gbt_wide_itup_fill_many(const GbtItupPlan *plan, const uint64 *items, int nwords, int n,
						char *out, Size stride)
{
	Size		hoff = IndexInfoFindDataOffset(0);
	int			step = nwords + 1;
	uint64		nulls = 0;

	Assert(gbt_wide_itup_batch(plan) && n <= 64 && stride == MAXALIGN(hoff + plan->maxsize));
	/* padding is zeros, as heap_fill_tuple leaves it */
	memset(out, 0, n * stride);
	if (plan->varwidth)
	{
		/* texts: their bytes decide the later columns' offsets */
		for (int i = 0; i < n; i++)
		{
			IndexTuple	itup = (IndexTuple) (out + i * stride);
			Size		size;

			if (plan->text_alone)
				size = itup_fill_text_alone(plan, &items[i * step], (char *) itup + hoff);
			else if (!itup_fill(plan, &items[i * step], items[i * step + nwords], NULL, 0,
								(char *) itup + hoff, &size, true))
			{
				nulls |= UINT64CONST(1) << i;
				continue;
			}
			itup->t_info = (unsigned short) MAXALIGN(hoff + size) | INDEX_VAR_MASK;
		}
		return nulls;
	}
	for (int i = 0; i < n; i++)
		((IndexTuple) (out + i * stride))->t_info = (unsigned short) stride;
	for (int s = 0; s < plan->nsteps; s++)
	{
		/* a copy, which the stores below cannot alias: kept in registers */
		const GbtItupStep stc = plan->step[s];
		const GbtItupStep *st = &stc;
		char	   *dst = out + hoff + st->off;

		if (st->nullpos >= 0)
			for (int i = 0; i < n; i++)
				nulls |= (uint64) step_is_null(st, &items[i * step]) << i;
#define FILL_ALL(kind) \
		for (int i = 0; i < n; i++) \
			put_fixed(kind, st, &items[i * step], items[i * step + nwords], dst + i * stride)
		switch ((GbtItupKind) st->kind)
		{
			case GBT_ITUP_INT16:
				FILL_ALL(GBT_ITUP_INT16);
				break;
			case GBT_ITUP_INT32:
				FILL_ALL(GBT_ITUP_INT32);
				break;
			case GBT_ITUP_INT64:
				FILL_ALL(GBT_ITUP_INT64);
				break;
			case GBT_ITUP_OID:
				FILL_ALL(GBT_ITUP_OID);
				break;
			case GBT_ITUP_BOOL:
				FILL_ALL(GBT_ITUP_BOOL);
				break;
			case GBT_ITUP_FLOAT4:
				FILL_ALL(GBT_ITUP_FLOAT4);
				break;
			case GBT_ITUP_FLOAT8:
				FILL_ALL(GBT_ITUP_FLOAT8);
				break;
			case GBT_ITUP_UUID:
				FILL_ALL(GBT_ITUP_UUID);
				break;
			case GBT_ITUP_TEXT:
				pg_unreachable();
		}
#undef FILL_ALL
	}
	return nulls;
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
	if (node.nwords == 1)
		((PageHeader) page)->pd_lower = (node.opaque->flags & GBT_F_LEAF) ?
			GBT_LEAF_END : GBT_INNER_END;
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

void
gbt_wide_init_page(Page page, bool leaf, uint16 level, uint16 flags, int nwords)
{
	PageInit(page, BLCKSZ, GBT_OPAQUE_SIZE);
	gbt_node_format_words((char *) page, leaf, level, flags, nwords);
	gbt_wide_set_lower(page);
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
		(!(op->flags & GBT_F_META) &&
		 (op->keywords != nwords || (op->flags & GBT_F_POSTING) ||
		  op->nslots != gbt_words_slots_of(leaf, nwords, op->flags) ||
		  ((op->flags & GBT_F_TAILS) && (op->flags & GBT_F_DIRFIT)) ||
		  ((op->flags & (GBT_F_TAILS | GBT_F_TAILS_FEW)) == GBT_F_TAILS_FEW) ||
		  ((op->flags & GBT_F_TAILS) &&
		   (op->taillow < gbt_tail_start_few(leaf, nwords, (op->flags & GBT_F_TAILS_FEW) != 0) ||
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

/*
 * The build
 * ---------
 * Every entry is collected in memory, sorted by gbtree_wsort.h's radix
 * sort and laid out level by level through build.c's page writer, the
 * top level of each tree at its fixed root block.  Entries whose value is
 * cut (a text longer than its field) are collected apart with their
 * tails; a tree that has any is sorted by (words, tail, TID) and laid out
 * by gbt_tail_build, tailed pages only where tails are.
 */

/* entries with tails of one tree: words, TID, tail index << 16 */
typedef struct GbtTailedEntries
{
	uint64	   *e;				/* stride nwords + 2 */
	Size		n;
	Size		cap;
	GbtTail    *tails;			/* by index; index 0: no tail */
	Size		captails;
	char	   *chunk;			/* the tails' bytes, in chunks */
	Size		chunkfree;
} GbtTailedEntries;

#define GBT_TAIL_CHUNK	(1024 * 1024)

typedef struct GbtWideBuild
{
	GbtIndexInfo *info;
	int			stride;
	uint64	   *vals;			/* entries of the tree of values */
	Size		nvals;
	Size		capvals;
	uint64	   *nulls;			/* and of the tree of NULLs */
	Size		nnulls;
	Size		capnulls;
	GbtTailedEntries tvals;		/* their entries with tails */
	GbtTailedEntries tnulls;
	int			keylen;			/* the longest order key of a text column */
	double		nkeyed;			/* rows with a text column not NULL */
	double		indtuples;
} GbtWideBuild;

static void
append_entry(uint64 **arr, Size *n, Size *cap, int stride, const uint64 *e)
{
	if (*n == *cap)
	{
		Size		newcap = Max(*cap * 2, 1024);

		if (*arr == NULL)
			*arr = MemoryContextAllocHuge(CurrentMemoryContext,
										  newcap * stride * sizeof(uint64));
		else
			*arr = repalloc_huge(*arr, newcap * stride * sizeof(uint64));
		*cap = newcap;
	}
	memcpy(*arr + *n * stride, e, stride * sizeof(uint64));
	(*n)++;
}

/* keep an entry with a tail: e holds its words and TID */
static void
append_tailed(GbtTailedEntries *te, uint64 *e, int nw, const unsigned char *tail, int tlen)
{
	Size		idx = te->n + 1;
	unsigned char *bytes;

	if (idx >= te->captails)
	{
		Size		newcap = Max(te->captails * 2, 1024);

		if (te->tails == NULL)
			te->tails = MemoryContextAllocHuge(CurrentMemoryContext, newcap * sizeof(GbtTail));
		else
			te->tails = repalloc_huge(te->tails, newcap * sizeof(GbtTail));
		te->captails = newcap;
		te->tails[0].data = NULL;
		te->tails[0].len = 0;
	}
	if (te->chunkfree < (Size) tlen)
	{
		te->chunk = palloc(GBT_TAIL_CHUNK);
		te->chunkfree = GBT_TAIL_CHUNK;
	}
	bytes = (unsigned char *) te->chunk + (GBT_TAIL_CHUNK - te->chunkfree);
	memcpy(bytes, tail, tlen);
	te->chunkfree -= tlen;
	te->tails[idx].data = bytes;
	te->tails[idx].len = tlen;
	e[nw + 1] = (uint64) idx << 16;
	append_entry(&te->e, &te->n, &te->cap, nw + 2, e);
}

static void
wide_build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					bool tupleIsAlive, void *state)
{
	GbtWideBuild *wb = (GbtWideBuild *) state;
	uint64		e[GBT_WIDE_MAX_STRIDE + 1];
	uint16		flags;
	int			nw = wb->info->nwords;
	unsigned char tail[GBT_TAIL_HIGHEST_LEN];
	int			tlen;
	int			keylen = -1;
	bool		notnull = gbt_wide_encode_tail(wb->info, values, isnull, tid, e, &flags, tail,
											   &tlen, &keylen);

	if (keylen >= 0)
	{
		wb->keylen = Max(wb->keylen, keylen);
		wb->nkeyed += 1;
	}

	e[nw] = gbt_tid_from_itemptr(tid, flags);
	if (tlen > 0)
		append_tailed(notnull ? &wb->tvals : &wb->tnulls, e, nw, tail, tlen);
	else if (notnull)
		append_entry(&wb->vals, &wb->nvals, &wb->capvals, wb->stride, e);
	else
		append_entry(&wb->nulls, &wb->nnulls, &wb->capnulls, wb->stride, e);
	wb->indtuples += 1;
}

void
gbt_wide_sort_entries(uint64 *e, Size n, int nw)
{
	uint64	   *scratch;
	size_t	   *hist;

	if (n < 2)
		return;
	scratch = MemoryContextAllocHuge(CurrentMemoryContext, n * (nw + 1) * sizeof(uint64));
	hist = palloc(gbt_wsort_hist_size(nw) * sizeof(size_t));
	gbt_wsort(e, scratch, n, nw, hist, NULL);
	pfree(hist);
	pfree(scratch);
}

/*
 * Lay out a tree of n sorted entries, its top page at rootblk: each level's
 * pages take an even share of its entries, up to the fill factor, and give
 * the level above their first entries and blocks.
 */
static void
build_wide_tree(GbtPageWriter *w, const uint64 *entries, Size n, int nw,
				BlockNumber rootblk, uint16 treeflag, int fillfactor)
{
	const int	stride = nw + 1;
	const uint64 *level = entries;
	uint64	   *owned = NULL;
	BlockNumber *child = NULL;
	uint16		lev = 0;
	uint64	   *keys = palloc(sizeof(uint64) * GBT_MAX_SLOT_WORDS);
	uint64	   *tids = palloc(sizeof(uint64) * GBT_MAX_SLOTS);
	uint32	   *ch = palloc(sizeof(uint32) * GBT_MAX_SLOTS);

	for (;;)
	{
		bool		leaf = lev == 0;
		int			slots = leaf ? gbt_leaf_slots_for(nw) : gbt_inner_slots_for(nw);
		Size		cap = Max(2, (Size) slots * (leaf ? fillfactor : GBT_INNER_FILLFACTOR) / 100);
		Size		npages = n == 0 ? 1 : (n + cap - 1) / cap;
		BlockNumber first = npages == 1 ? rootblk : w->nextblk;
		uint64	   *up = NULL;
		BlockNumber *upchild = NULL;

		if (npages > 1)
		{
			up = MemoryContextAllocHuge(CurrentMemoryContext, npages * stride * sizeof(uint64));
			upchild = MemoryContextAllocHuge(CurrentMemoryContext, npages * sizeof(BlockNumber));
			w->nextblk += npages;
		}
		for (Size p = 0; p < npages; p++)
		{
			Size		from = p * n / npages;
			Size		to = (p + 1) * n / npages;
			int			k = (int) (to - from);
			BlockNumber blk = first + (BlockNumber) p;
			Page		page = gbt_writer_page(w, blk);
			GbtNode		node;
			GbtPageOpaque op;

			CHECK_FOR_INTERRUPTS();
			for (int i = 0; i < k; i++)
			{
				memcpy(&keys[i * nw], &level[(from + i) * stride], sizeof(uint64) * nw);
				tids[i] = level[(from + i) * stride + nw];
				ch[i] = leaf ? 0 : child[from + i];
			}
			/* a level's first downlink covers everything below its key */
			if (!leaf && p == 0 && k > 0)
			{
				memset(keys, 0, sizeof(uint64) * nw);
				tids[0] = 0;
			}
			gbt_wide_init_page(page, leaf, lev, treeflag, nw);
			gbt_node_view((char *) page, &node);
			gbt_node_load_spread(&node, k, keys, tids, leaf ? NULL : ch, true);
			op = node.opaque;
			op->leftlink = p == 0 ? GBT_NO_BLOCK : blk - 1;
			if (p > 0)
			{
				op->lowkey = level[from * stride];
				op->lowtid = level[from * stride + nw];
				for (int i = 1; i < nw; i++)
					node.xbounds[nw - 1 + i - 1] = level[from * stride + i];
			}
			if (p + 1 < npages)
			{
				op->rightlink = blk + 1;
				op->hikey = level[to * stride];
				op->hitid = level[to * stride + nw];
				for (int i = 1; i < nw; i++)
					node.xbounds[i - 1] = level[to * stride + i];
			}
			else
			{
				op->rightlink = GBT_NO_BLOCK;
				op->flags |= GBT_F_RIGHTMOST;
			}
			if (npages == 1)
				op->flags |= GBT_F_ROOT;
			if (up)
			{
				memcpy(&up[p * stride], &level[from * stride], sizeof(uint64) * stride);
				upchild[p] = blk;
			}
		}
		if (owned)
			pfree(owned);
		if (child)
			pfree(child);
		if (npages == 1)
			break;
		owned = up;
		level = up;
		child = upchild;
		n = npages;
		lev++;
	}
	pfree(keys);
	pfree(tids);
	pfree(ch);
}

/* gbt_tail_build's pages: build.c's writer, PostgreSQL's page header */
static char *
tail_build_page(void *arg, uint32 blk)
{
	return (char *) gbt_writer_page((GbtPageWriter *) arg, blk);
}

static void
tail_build_format(void *arg, char *page, bool leaf, uint16 level, uint16 flags, int nw)
{
	gbt_wide_init_page((Page) page, leaf, level, flags, nw);
}

static void
tail_build_finish(void *arg, char *page)
{
	CHECK_FOR_INTERRUPTS();
	gbt_wide_set_lower((Page) page);
}

/*
 * Lay out a tree whose entries include some with tails: the plain ones
 * (sorted, stride nw + 1) and those of te merged in (words, tail, TID)
 * order, then gbt_tail_build.  Frees the plain entries.
 */
static void
build_tailed_tree(GbtPageWriter *w, uint64 *plain, Size nplain, GbtTailedEntries *te, int nw,
				  BlockNumber rootblk, uint16 treeflag, int fillfactor)
{
	const int	stride = nw + 1;
	const int	tstride = nw + 2;
	Size		n = nplain + te->n;
	uint64	   *merged;
	GbtTail    *mtails;
	Size		i = 0,
				j = 0;
	GbtTailBuildOps ops = {tail_build_page, tail_build_format, tail_build_finish, w};
	uint32		next = w->nextblk;

	{
		uint64	   *scratch = MemoryContextAllocHuge(CurrentMemoryContext,
													 te->n * tstride * sizeof(uint64));
		size_t	   *hist = palloc(gbt_wsort_hist_size(nw + 1) * sizeof(size_t));

		gbt_tail_sort(te->e, scratch, te->n, nw, te->tails, hist);
		pfree(hist);
		pfree(scratch);
	}
	merged = MemoryContextAllocHuge(CurrentMemoryContext, n * stride * sizeof(uint64));
	mtails = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(GbtTail));
	for (Size k = 0; k < n; k++)
	{
		static const GbtTail none = {NULL, 0};
		bool		take_plain;

		if ((k & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (i == nplain)
			take_plain = false;
		else if (j == te->n)
			take_plain = true;
		else
		{
			const uint64 *t = &te->e[j * tstride];

			take_plain = gbt_tentry_cmp(&plain[i * stride], none, plain[i * stride + nw],
										t, te->tails[t[nw + 1] >> 16], t[nw], nw) < 0;
		}
		if (take_plain)
		{
			memcpy(&merged[k * stride], &plain[i * stride], sizeof(uint64) * stride);
			mtails[k] = none;
			i++;
		}
		else
		{
			memcpy(&merged[k * stride], &te->e[j * tstride], sizeof(uint64) * stride);
			mtails[k] = te->tails[te->e[j * tstride + nw + 1] >> 16];
			j++;
		}
	}
	if (plain)
		pfree(plain);
	if (gbt_tail_build(&ops, &next, rootblk, treeflag, merged, mtails, n, nw, fillfactor,
					   GBT_INNER_FILLFACTOR) == GBT_NO_BLOCK)
		elog(ERROR, "gbtree build of index \"%s\": an inner page took one entry",
			 RelationGetRelationName(w->index));
	w->nextblk = next;
	pfree(merged);
	pfree(mtails);
}

/*
 * The fewest key words, two or more and below info->nwords, whose text
 * fields hold order keys of keylen bytes whole; info->nwords if none does.  Only a count
 * whose shape comes out at exactly that many words qualifies, so that the
 * metapage's count gives the same shape back (gbt_index_info).
 */
int
gbt_wide_fit_words(const GbtIndexInfo *info, int keylen)
{
	const GbtKeyShape *shape = &info->shape;
	int			ntext = 0;
	int			nullcount = shape->nullbits ? shape->ncols : 0;
	int			fixed;

	for (int c = 0; c < shape->ncols; c++)
		if (info->is_text[c])
			ntext++;
	if (ntext == 0)
		return info->nwords;
	fixed = shape->nbits - nullcount - ntext * 8 * info->text_bytes;
	/* from two: one-word pages have no tails for the longer values to come */
	for (int k = 2; k < info->nwords; k++)
	{
		int			bytes = (k * 64 - fixed - nullcount) / 8 / ntext;

		if (bytes >= Max(keylen, 1) &&
			(fixed + nullcount + ntext * 8 * bytes + 63) / 64 == k)
			return k;
	}
	return info->nwords;
}

/*
 * n entries of shape from rewritten in place in shape to, of fewer words;
 * each text field's bytes fit both (gbt_wide_fit_words).  The order of the
 * entries does not change: a text field only loses zero bytes at its end.
 */
static void
reshape_entries(const GbtIndexInfo *from, const GbtIndexInfo *to, uint64 *e, Size n)
{
	const int	ow = from->nwords;
	const int	nw = to->nwords;
	/* one column: its field is the words from bit 0, narrowed by dropping */
	const bool	drop = from->shape.ncols == 1;

	Assert(nw < ow);
	for (Size i = 0; i < n; i++)
	{
		const uint64 *src = &e[i * (ow + 1)];
		uint64	   *dst = &e[i * (nw + 1)];
		uint64		tid = src[ow];
		uint64		w[GBT_MAX_KEY_WORDS];

		if (drop)
			memcpy(w, src, sizeof(uint64) * nw);
		else
		{
			GbtColValue vals[GBT_MAX_KEY_COLS];

			gbt_shape_decode(&from->shape, src, vals);
			for (int c = 0; c < from->shape.ncols; c++)
			{
				unsigned char bytes[GBT_MAX_KEY_WORDS * 8];
				int			len;

				if (!from->is_text[c] || vals[c].isnull)
					continue;
				len = gbt_bytes_from_field(&vals[c], from->text_bytes, bytes);
				Assert(len <= to->text_bytes);
				gbt_bytes_field(bytes, len, to->text_bytes, &vals[c]);
			}
			memset(w, 0, sizeof(w));
			gbt_shape_encode(&to->shape, vals, w);
		}
		memcpy(dst, w, sizeof(uint64) * nw);
		dst[nw] = tid;
	}
}

IndexBuildResult *
gbt_wide_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	GbtWideBuild wb;
	GbtPageWriter *w;
	IndexBuildResult *result;
	MemoryContext cxt,
				old;
	Page		meta;
	int			nw;
	int			fitted;
	int			fillfactor = gbt_get_fillfactor(index);

	memset(&wb, 0, sizeof(wb));
	wb.info = gbt_index_info_copy(index);
	nw = wb.info->nwords;
	wb.stride = nw + 1;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "gbtree wide build",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_TABLESCAN);
	table_index_build_scan(heap, index, indexInfo, true, true,
						   wide_build_callback, &wb, NULL);

	/*
	 * Text keys all shorter than their fields: the fewest words that hold
	 * them whole (src/README, "Text keys"), when there are enough of them
	 * (rows with a text value) to say what later ones will be.  Longer values inserted later take
	 * tails.
	 */
	fitted = wb.info->text_bytes > 0 && wb.tvals.n == 0 && wb.tnulls.n == 0 &&
		wb.nkeyed >= gbt_fit_min_rows ? gbt_wide_fit_words(wb.info, wb.keylen) : nw;
	if (fitted < nw)
	{
		GbtIndexInfo *fit = palloc(sizeof(GbtIndexInfo));

		memcpy(fit, wb.info, sizeof(GbtIndexInfo));
		gbt_wide_info_init(index, fit, fitted);
		reshape_entries(wb.info, fit, wb.vals, wb.nvals);
		reshape_entries(wb.info, fit, wb.nulls, wb.nnulls);
		wb.info = fit;
		nw = fit->nwords;
		wb.stride = nw + 1;
	}
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_SORT);
	gbt_wide_sort_entries(wb.vals, wb.nvals, nw);
	gbt_wide_sort_entries(wb.nulls, wb.nnulls, nw);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, GBT_PHASE_LOAD);
	w = palloc0(sizeof(GbtPageWriter));
	w->index = index;
	w->use_wal = RelationNeedsWAL(index);
	w->nextblk = GBT_FIRST_FREE_BLKNO;
	w->extended = RelationGetNumberOfBlocks(index);
	for (int i = 0; i < GBT_WRITE_BATCH; i++)
		w->pages[i] = palloc(BLCKSZ);
	if (wb.tvals.n > 0)
		build_tailed_tree(w, wb.vals, wb.nvals, &wb.tvals, nw, GBT_ROOT_BLKNO, 0, fillfactor);
	else
		build_wide_tree(w, wb.vals, wb.nvals, nw, GBT_ROOT_BLKNO, 0, fillfactor);
	if (wb.tnulls.n > 0)
		build_tailed_tree(w, wb.nulls, wb.nnulls, &wb.tnulls, nw, GBT_NULLROOT_BLKNO,
						  GBT_F_NULLTREE, fillfactor);
	else
		build_wide_tree(w, wb.nulls, wb.nnulls, nw, GBT_NULLROOT_BLKNO, GBT_F_NULLTREE,
						fillfactor);
	/* from here on, the index's cached shape is the one its pages have */
	memcpy(gbt_index_info(index), wb.info, sizeof(GbtIndexInfo));
	meta = gbt_writer_page(w, GBT_META_BLKNO);
	gbt_init_metapage(meta, index, (uint64) wb.indtuples);
	gbt_writer_flush(w);
	if (w->use_wal)
		smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);

	MemoryContextSwitchTo(old);
	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = wb.indtuples;
	result->index_tuples = wb.indtuples;
	MemoryContextDelete(cxt);
	return result;
}
