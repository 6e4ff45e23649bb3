/*-------------------------------------------------------------------------
 *
 * wide_itup.c
 *	  Index tuples of multi-word entries, for index-only scans
 *	  (gbtree_wide.h): a plan a scan, then each entry's columns written
 *	  straight into the tuple's data area.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/float.h"


#include "gbtree_keys.h"
#include "gbtree_wide.h"


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
			case NUMERICOID:
				/*
				 * Laid out from the digits in the key at the declared scale
				 * (keys.c); a negative one goes through numeric_in, by
				 * decoding (and without one there is no index-only scan)
				 */
				plan->decode |= !gbt_numeric_lays_out(info->typmod[s]);
				st->kind = GBT_ITUP_NUMERIC;
				st->typmod = info->typmod[s];
				plan->varwidth = true;
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
		else if (st->kind == GBT_ITUP_NUMERIC)
			maxoff += VARHDRSZ_SHORT + 4 + 8 * ((st->bits + 63) / 64);
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
		case GBT_ITUP_NUMERIC:
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
			/* (a short varlena is not aligned) */
			Size		aligned = st->kind == GBT_ITUP_TEXT || st->kind == GBT_ITUP_NUMERIC ? off :
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
		else if (st->kind == GBT_ITUP_NUMERIC)
		{
			/*
			 * The key's bytes (no zero among them, as a text's), the numeric
			 * they key laid out in num, then copied as a short varlena: at
			 * most 36 bytes from a 32-byte field.
			 */
			unsigned char key[GBT_MAX_KEY_WORDS * 8];
			char		num[VARHDRSZ + 4 + GBT_MAX_KEY_WORDS * 8];
			int			len = 0;
			Size		nsize;

			for (int k = 0; k * 64 < st->bits; k++)
			{
				int			n = Min(64, st->bits - 64 * k);
				uint64		x = field_bits(words, st->pos + 64 * k, 64) ^ st->inv;

				x = (x >> (64 - n)) << (64 - n);
				itup_text_word(x, k, (char *) key, &len);
			}

			/*
			 * No numeric's key is empty: these are the zero words of an
			 * entry of the NULL tree, which a GPU batch's items put after
			 * the value tree's in one array (a chunk may hold both); its
			 * tuple is build_itup's.
			 */
			if (len == 0)
				return false;
			(void) gbt_numeric_from_key(key, len, st->typmod, num, sizeof(num));
			nsize = VARSIZE(num) - VARHDRSZ;
			SET_VARSIZE_SHORT(dst, VARHDRSZ_SHORT + nsize);
			memcpy(dst + VARHDRSZ_SHORT, VARDATA(num), nsize);
			off += VARHDRSZ_SHORT + nsize;
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
			case GBT_ITUP_NUMERIC:
				pg_unreachable();	/* varwidth, above */
		}
#undef FILL_ALL
	}
	return nulls;
}
