/*-------------------------------------------------------------------------
 *
 * keys.c
 *	  Datum <-> normalized key conversion for the supported types.
 *
 * The arithmetic lives in gbtree_keys.h (plain C, unit tested); this file
 * maps PostgreSQL types onto it and applies the index column's DESC
 * option (a DESC column stores the bitwise complement of the key, so the
 * page order is the index order and scans need no special case).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_index.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "utils/builtins.h"
#include "utils/cash.h"
#include "utils/catcache.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "gbtree.h"
#include "gbtree_keys.h"
#include "gbtree_wide.h"

bool
gbt_type_supported(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case FLOAT4OID:
		case FLOAT8OID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case CASHOID:
		case BOOLOID:
			return true;
		default:
			return false;
	}
}

/* The types of multi-word keys (wide.c): the one-word types, uuid, text, numeric */
bool
gbt_wide_type_supported(Oid typid)
{
	return gbt_type_supported(typid) || typid == UUIDOID || gbt_type_is_bytes(typid);
}

/*
 * numeric
 * -------
 *
 * A numeric key column is keyed by bytes, as a text under "C" is (its
 * field, tails, fitted words: wide.c), the bytes of an order-preserving
 * encoding with no zero byte, so that a value orders before every longer
 * one it is a prefix of, as the zero padding of the field has it:
 *
 *	 class		 1 -Infinity, 2 negative, 3 zero, 4 positive, 5 +Infinity,
 *				 6 NaN (btree: NaN above everything, equal to itself)
 *	 exponent	 (finite, non-zero) the weight of the first base-10000 digit
 *				 plus 8192, two bytes of base 255 each plus 1; complemented
 *				 (65024 - it) for a negative value
 *	 digits		 each base-10000 digit d as d / 100 + 1 and d % 100 + 1
 *				 (1..100), complemented (101 - it) for a negative value,
 *				 with neither leading nor trailing zero digits
 *	 terminator	 255 after a negative value's digits: -1.5 > -1.5001
 *
 * Equal values (1.0 and 1.00) have the same bytes: the display scale is
 * not in them.  It comes back from the column's declared scale, which
 * every stored value has (numeric(p, s) rounds to it), so index-only scans
 * and messages give the stored value; a column without one has no
 * index-only scans (gbtcanreturn), and its messages name a value at its
 * shortest scale.  The varlena's layout is PostgreSQL's
 * on-disk numeric format (short and long headers, NaN and infinities),
 * read here directly.
 */
#define GBT_NUM_NINF	1
#define GBT_NUM_NEG		2
#define GBT_NUM_ZERO	3
#define GBT_NUM_POS		4
#define GBT_NUM_PINF	5
#define GBT_NUM_NAN		6
#define GBT_NUM_EXP_BIAS 8192
#define GBT_NUM_EXP_MAX 65024	/* 255 * 255 - 1 */

typedef struct GbtNumeric
{
	int			cls;
	int			weight;
	int			ndigits;
	const char *digits;			/* ndigits int16s, maybe unaligned */
} GbtNumeric;

static void
numeric_parse(const char *data, int len, GbtNumeric *n)
{
	uint16		h;
	int			hdr;
	int16		d;

	if (len < 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid numeric value of %d bytes", len)));
	memcpy(&h, data, sizeof(h));
	n->weight = 0;
	n->ndigits = 0;
	n->digits = NULL;
	if ((h & 0xC000) == 0xC000)
	{
		/* NaN 0xC000, +Infinity 0xD000, -Infinity 0xF000 */
		n->cls = (h & 0xF000) == 0xD000 ? GBT_NUM_PINF :
			(h & 0xF000) == 0xF000 ? GBT_NUM_NINF : GBT_NUM_NAN;
		return;
	}
	if (h & 0x8000)
	{
		/* short: sign 0x2000, weight's sign 0x0040 and 6 bits */
		hdr = 2;
		n->cls = (h & 0x2000) ? GBT_NUM_NEG : GBT_NUM_POS;
		n->weight = (h & 0x0040) ? (int) (h & 0x003F) - 64 : (int) (h & 0x003F);
	}
	else
	{
		int16		w;

		if (len < 4)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("invalid numeric value of %d bytes", len)));
		hdr = 4;
		n->cls = (h & 0xC000) == 0x4000 ? GBT_NUM_NEG : GBT_NUM_POS;
		memcpy(&w, data + 2, sizeof(w));
		n->weight = w;
	}
	n->ndigits = (len - hdr) / 2;
	n->digits = data + hdr;
	/* no leading or trailing zero digits (make_result strips them too) */
	while (n->ndigits > 0 && (memcpy(&d, n->digits, 2), d == 0))
	{
		n->digits += 2;
		n->ndigits--;
		n->weight--;
	}
	while (n->ndigits > 0 && (memcpy(&d, n->digits + 2 * (n->ndigits - 1), 2), d == 0))
		n->ndigits--;
	if (n->ndigits == 0)
		n->cls = GBT_NUM_ZERO;
	else if (n->weight + GBT_NUM_EXP_BIAS < 0 || n->weight + GBT_NUM_EXP_BIAS > GBT_NUM_EXP_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("numeric value's weight %d is out of gbtree's range", n->weight)));
}

/* the key (palloc'd) of the numeric whose varlena data is data[len] */
unsigned char *
gbt_numeric_key(const char *data, int len, int *keylen)
{
	GbtNumeric	n;
	unsigned char *k;
	int			o = 0;
	bool		neg;
	int			e;

	numeric_parse(data, len, &n);
	k = palloc(4 + 2 * Max(n.ndigits, 0));
	k[o++] = (unsigned char) n.cls;
	if (n.cls == GBT_NUM_POS || n.cls == GBT_NUM_NEG)
	{
		neg = n.cls == GBT_NUM_NEG;
		e = n.weight + GBT_NUM_EXP_BIAS;
		if (neg)
			e = GBT_NUM_EXP_MAX - e;
		k[o++] = (unsigned char) (e / 255 + 1);
		k[o++] = (unsigned char) (e % 255 + 1);
		for (int i = 0; i < n.ndigits; i++)
		{
			int16		d;
			int			hi,
						lo;

			memcpy(&d, n.digits + 2 * i, 2);
			if (d < 0 || d > 9999)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
						 errmsg("invalid numeric digit %d", d)));
			hi = d / 100 + 1;
			lo = d % 100 + 1;
			k[o++] = (unsigned char) (neg ? 101 - hi : hi);
			k[o++] = (unsigned char) (neg ? 101 - lo : lo);
		}
		if (neg)
			k[o++] = 255;
	}
	*keylen = o;
	return k;
}

/*
 * A numeric key's parts: class, weight and base-10000 digits (at most
 * (len - 3) / 2 of them, in digits[]); a key that is no numeric's is
 * damage (XX002).
 */
static void
numeric_key_parts(const unsigned char *k, int len, GbtNumeric *n, int16 *digits)
{
	int			cls = len > 0 ? k[0] : 0;
	bool		neg = cls == GBT_NUM_NEG;

	n->cls = cls;
	n->weight = 0;
	n->ndigits = 0;
	if (len == 1 && cls >= GBT_NUM_NINF && cls <= GBT_NUM_NAN && cls != GBT_NUM_NEG &&
		cls != GBT_NUM_POS)
		return;
	if ((cls == GBT_NUM_POS || cls == GBT_NUM_NEG) && len >= 5 &&
		(len - (neg ? 4 : 3)) % 2 == 0 && (!neg || k[len - 1] == 255))
	{
		int			e = (k[1] - 1) * 255 + (k[2] - 1);
		int			i;

		n->ndigits = (len - (neg ? 4 : 3)) / 2;
		n->weight = (neg ? GBT_NUM_EXP_MAX - e : e) - GBT_NUM_EXP_BIAS;
		for (i = 0; i < n->ndigits; i++)
		{
			int			hi = neg ? 101 - k[3 + 2 * i] : k[3 + 2 * i],
						lo = neg ? 101 - k[4 + 2 * i] : k[4 + 2 * i];

			if (hi < 1 || hi > 100 || lo < 1 || lo > 100)
				break;
			digits[i] = (int16) ((hi - 1) * 100 + (lo - 1));
		}
		/* every digit valid, none leading or trailing zero */
		if (i == n->ndigits && digits[0] != 0 && digits[i - 1] != 0)
			return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("gbtree numeric key of %d bytes is no numeric's", len)));
}

/* The value by numeric_in from its decimal digits, at typmod's scale. */
static Datum
numeric_by_text(const GbtNumeric *n, const int16 *digits, int32 typmod)
{
	StringInfoData s;
	Datum		d;

	initStringInfo(&s);
	if (n->cls == GBT_NUM_NAN)
		appendStringInfoString(&s, "NaN");
	else if (n->cls == GBT_NUM_PINF)
		appendStringInfoString(&s, "Infinity");
	else if (n->cls == GBT_NUM_NINF)
		appendStringInfoString(&s, "-Infinity");
	else if (n->cls == GBT_NUM_ZERO)
		appendStringInfoChar(&s, '0');
	else
	{
		int			weight = n->weight,
					nd = n->ndigits;

		if (n->cls == GBT_NUM_NEG)
			appendStringInfoChar(&s, '-');
		/* the integer part: digits of weight >= 0 */
		if (weight < 0)
			appendStringInfoChar(&s, '0');
		for (int w = weight; w >= 0; w--)
		{
			int			i = weight - w;

			appendStringInfo(&s, w == weight ? "%d" : "%04d", i < nd ? digits[i] : 0);
		}
		/* the fraction: digits of weight < 0 */
		if (weight - (nd - 1) < 0)
		{
			appendStringInfoChar(&s, '.');
			for (int w = -1; w >= weight - (nd - 1); w--)
			{
				int			i = weight - w;

				appendStringInfo(&s, "%04d", i >= 0 && i < nd ? digits[i] : 0);
			}
			/* no declared scale: the value's own digits, none past them */
			if (typmod < 0)
			{
				while (s.data[s.len - 1] == '0')
					s.data[--s.len] = '\0';
				if (s.data[s.len - 1] == '.')
					s.data[--s.len] = '\0';
			}
		}
	}
	d = DirectFunctionCall3(numeric_in, CStringGetDatum(s.data), ObjectIdGetDatum(InvalidOid),
							Int32GetDatum(typmod));
	pfree(s.data);
	return d;
}

/*
 * The value laid out as make_result lays it out (PostgreSQL's on-disk
 * numeric: a short header where the display scale and weight fit it),
 * at display scale dscale, into out, which holds VARHDRSZ + 4 bytes and
 * two a digit; returns its size.
 */
static Size
numeric_layout(const GbtNumeric *n, const int16 *digits, int dscale, char *out)
{
	bool		shorthdr = dscale <= 63 && n->weight <= 63 && n->weight >= -64;
	Size		size;
	uint16		h;

	if (n->cls == GBT_NUM_NAN || n->cls == GBT_NUM_PINF || n->cls == GBT_NUM_NINF)
	{
		size = VARHDRSZ + sizeof(uint16);
		h = n->cls == GBT_NUM_NAN ? 0xC000 : n->cls == GBT_NUM_PINF ? 0xD000 : 0xF000;
		SET_VARSIZE(out, size);
		memcpy(VARDATA(out), &h, sizeof(h));
		return size;
	}
	size = VARHDRSZ + (shorthdr ? 2 : 4) + 2 * n->ndigits;
	SET_VARSIZE(out, size);
	if (shorthdr)
	{
		/* short: 0x8000, sign 0x2000, scale << 7, weight's sign 0x0040 and 6 bits */
		h = 0x8000 | (n->cls == GBT_NUM_NEG ? 0x2000 : 0) | (uint16) (dscale << 7) |
			(n->weight < 0 ? 0x0040 : 0) | (uint16) (n->weight & 0x003F);
		memcpy(VARDATA(out), &h, sizeof(h));
	}
	else
	{
		int16		w = (int16) n->weight;

		h = (n->cls == GBT_NUM_NEG ? 0x4000 : 0) | (uint16) (dscale & 0x3FFF);
		memcpy(VARDATA(out), &h, sizeof(h));
		memcpy(VARDATA(out) + 2, &w, sizeof(w));
	}
	memcpy(VARDATA(out) + (shorthdr ? 2 : 4), digits, 2 * n->ndigits);
	return size;
}

/*
 * Whether typmod declares a scale of zero or more: every stored value has
 * it as its display scale, and gbt_numeric_from_key lays values out at
 * it (numeric(p, s); not a bare numeric, nor PostgreSQL 15's negative
 * scales, whose values display none).  The scale is typmod's low 11 bits,
 * signed.
 */
static int
numeric_typmod_scale(int32 typmod)
{
	return typmod >= (int32) VARHDRSZ ? ((((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024) : -1;
}

bool
gbt_numeric_lays_out(int32 typmod)
{
	return numeric_typmod_scale(typmod) >= 0;
}

/*
 * The numeric of key k[len] at typmod's scale, into dst if it fits room
 * bytes, else palloc'd.  A declared scale of zero or more is every stored
 * value's display scale, so the value is laid out directly (the assertion
 * build checks it against numeric_in's); a negative one goes through
 * numeric_in.
 */
Datum
gbt_numeric_from_key(const unsigned char *k, int len, int32 typmod, char *dst, Size room)
{
	GbtNumeric	n;
	int16		dbuf[64];
	int16	   *digits = len / 2 <= lengthof(dbuf) ? dbuf : palloc(sizeof(int16) * (len / 2));
	int			scale = numeric_typmod_scale(typmod);
	Datum		d;

	numeric_key_parts(k, len, &n, digits);
	if (scale >= 0)
	{
		Size		need = VARHDRSZ + 4 + 2 * n.ndigits;
		char	   *out = dst && room >= need ? dst : palloc(need);

		(void) numeric_layout(&n, digits, scale, out);
		d = PointerGetDatum(out);
#ifdef USE_ASSERT_CHECKING
		{
			Datum		t = numeric_by_text(&n, digits, typmod);

			if (VARSIZE(DatumGetPointer(t)) != VARSIZE(out) ||
				memcmp(DatumGetPointer(t), out, VARSIZE(out)) != 0)
				elog(ERROR, "gbtree numeric key laid out otherwise than numeric_in lays it out");
			pfree(DatumGetPointer(t));
		}
#endif
	}
	else
	{
		d = numeric_by_text(&n, digits, typmod);
		if (dst && VARSIZE(DatumGetPointer(d)) <= room)
		{
			memcpy(dst, DatumGetPointer(d), VARSIZE(DatumGetPointer(d)));
			pfree(DatumGetPointer(d));
			d = PointerGetDatum(dst);
		}
	}
	if (digits != dbuf)
		pfree(digits);
	return d;
}

/*
 * Operator families
 * -----------------
 *
 * gbtree orders every type by its normalized key, which is the type's
 * built-in btree order; it never calls an operator class's operators or
 * support function.  So an operator family is sound only if each of its
 * operators is the one btree's default family of its left type has for
 * the same types and strategy: then every condition and ORDER BY the
 * planner hands gbtree means what the keys mean.  A family that a user
 * made or altered (a reversed order, an operator of another meaning, a
 * type pair gbtree cannot compare) would give wrong rows; an index on one
 * is refused with 0A000, where it would enter the catalog: CREATE OPERATOR
 * CLASS and ALTER OPERATOR FAMILY ... ADD call gbtadjustmembers
 * (validate.c).  So a scan trusts its index's family as btree trusts its
 * own; CREATE INDEX still checks the whole family (a family made before
 * this check existed), and amvalidate reports what it finds.
 */

/*
 * Each type's default btree operator family, as the checks met them: a
 * backend's few key types and their cross-type partners.  Looking one up
 * scanned all of pg_opclass's btree classes (GetDefaultOpClass) once per
 * operator before: up to 45 of them in a family (the date and time
 * types).  Any change to pg_opclass or pg_amop forgets them.
 */
#define GBT_BTFAMILY_CACHE	32
static Oid	btfamily_types[GBT_BTFAMILY_CACHE];
static Oid	btfamily_oids[GBT_BTFAMILY_CACHE];
static int	btfamily_n = 0;

static void
opfamily_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	btfamily_n = 0;
}

void
gbt_keys_init(void)
{
	CacheRegisterSyscacheCallback(AMOPSTRATEGY, opfamily_changed, (Datum) 0);
	CacheRegisterSyscacheCallback(CLAOID, opfamily_changed, (Datum) 0);
}

/* type's default btree operator family, or InvalidOid */
static Oid
btree_default_family(Oid type)
{
	Oid			btclass;
	Oid			family;
	CatCList   *classes;

	for (int i = 0; i < btfamily_n; i++)
		if (btfamily_types[i] == type)
			return btfamily_oids[i];

	/*
	 * btree's operator classes as one cached list: GetDefaultOpClass scans
	 * them all on each call.  It still decides for a type without a
	 * default class of its own (one binary-coercible to another's).
	 */
	family = InvalidOid;
	classes = SearchSysCacheList1(CLAAMNAMENSP, ObjectIdGetDatum(BTREE_AM_OID));
	for (int i = 0; i < classes->n_members; i++)
	{
		Form_pg_opclass opc = (Form_pg_opclass) GETSTRUCT(&classes->members[i]->tuple);

		if (opc->opcdefault && opc->opcintype == type)
		{
			family = opc->opcfamily;
			break;
		}
	}
	ReleaseCatCacheList(classes);
	if (!OidIsValid(family))
	{
		btclass = GetDefaultOpClass(type, BTREE_AM_OID);
		family = OidIsValid(btclass) ? get_opclass_family(btclass) : InvalidOid;
	}
	if (btfamily_n < GBT_BTFAMILY_CACHE)
	{
		btfamily_types[btfamily_n] = type;
		btfamily_oids[btfamily_n++] = family;
	}
	return family;
}

/*
 * Whether amop is the operator btree's default family has in its place.
 * The btree family's operators come as one cached list (one catalog scan
 * a family and session): looking each up alone (get_opfamily_member) was
 * a catalog scan per operator on first use, 90 of them for an index on
 * (int4, timestamptz).
 */
bool
gbt_amop_is_btrees(Form_pg_amop amop)
{
	Oid			btfamily;
	CatCList   *btlist;
	bool		same = false;

	if (amop->amoppurpose != AMOP_SEARCH)
		return false;
	btfamily = btree_default_family(amop->amoplefttype);
	if (!OidIsValid(btfamily))
		return false;
	btlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(btfamily));
	for (int i = 0; i < btlist->n_members; i++)
	{
		Form_pg_amop bt = (Form_pg_amop) GETSTRUCT(&btlist->members[i]->tuple);

		if (bt->amoplefttype == amop->amoplefttype &&
			bt->amoprighttype == amop->amoprighttype &&
			bt->amopstrategy == amop->amopstrategy)
		{
			same = bt->amopopr == amop->amopopr;
			break;
		}
	}
	ReleaseCatCacheList(btlist);
	return same;
}

static void
check_opfamily(Relation index, int col)
{
	Oid			opfamily = index->rd_opfamily[col];
	CatCList   *oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamily));

	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop amop = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);

		if (!gbt_amop_is_btrees(amop) || !gbt_wide_type_supported(amop->amoplefttype) ||
			!gbt_wide_type_supported(amop->amoprighttype))
		{
			char	   *opname = format_operator(amop->amopopr);
			char	   *famname = gbt_opfamily_name(opfamily);

			ReleaseCatCacheList(oprlist);
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gbtree index \"%s\" uses operator family \"%s\", whose operator %s for strategy %d is not btree's",
							RelationGetRelationName(index), famname, opname,
							(int) amop->amopstrategy),
					 errdetail("gbtree orders each type by its built-in btree order, so each operator of a gbtree operator family must be the one in the type's default btree operator family."),
					 errhint("Use gbtree's own operator classes, unaltered.")));
		}
	}
	ReleaseCatCacheList(oprlist);
}

/* Refuse an index whose operator families are not all btree's (0A000). */
void
gbt_check_opfamilies(Relation index)
{
	for (int c = 0; c < IndexRelationGetNumberOfKeyAttributes(index); c++)
		check_opfamily(index, c);
}

/*
 * A build may have fitted the text fields to fewer words than the default
 * (gbt_wide_fit_words): the metapage says how many.  No metapage yet (a
 * build under way) means the default.
 */
static void
fit_text_words(Relation index, GbtIndexInfo *info)
{
	Buffer		buf;
	Page		page;
	int			keywords = 0;

	if (RelationGetNumberOfBlocks(index) == 0)
		return;
	buf = ReadBuffer(index, GBT_META_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (!PageIsNew(page) && GbtPageGetMeta(page)->magic == GBT_MAGIC &&
		GbtPageGetMeta(page)->version == GBT_FORMAT_VERSION_WIDE)
		keywords = GbtPageGetMeta(page)->keywords;
	UnlockReleaseBuffer(buf);
	if (keywords < 2 || keywords >= info->nwords)
		return;					/* the default, or gbt_check_meta's to report */
	gbt_wide_info_init(index, info, keywords);
	if (info->nwords != keywords)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has keys of %d words, which its columns cannot take",
						RelationGetRelationName(index), keywords),
				 errhint("REINDEX it.")));
}

/*
 * The type whose keys an index column holds (and its typmod): a domain's
 * base type, whose values the domain's are, as btree's opclass lookup
 * takes the base type's operator class.
 */
Oid
gbt_column_type(Relation index, int attno0, int32 *typmod)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), attno0);
	int32		mod = att->atttypmod;
	Oid			type = getBaseTypeAndTypmod(att->atttypid, &mod);

	if (typmod)
		*typmod = mod;
	return type;
}

GbtIndexInfo *
gbt_index_info(Relation index)
{
	GbtIndexInfo *info = (GbtIndexInfo *) index->rd_amcache;

	if (info == NULL)
	{
		int16		opt;
		int			ncols = RelationGetDescr(index)->natts;	/* INCLUDE too */

		if (ncols > GBT_MAX_KEY_COLS)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gbtree indexes support at most %d columns, INCLUDE columns counted",
							GBT_MAX_KEY_COLS)));
		for (int c = 0; c < ncols; c++)
		{
			Oid			t = gbt_column_type(index, c, NULL);

			if (!gbt_wide_type_supported(t))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 c < IndexRelationGetNumberOfKeyAttributes(index) ?
						 errmsg("gbtree does not support indexes on type %s",
								format_type_be(t)) :
						 errmsg("gbtree does not support INCLUDE columns of type %s",
								format_type_be(t))));
		}
		info = MemoryContextAllocZero(index->rd_indexcxt, sizeof(GbtIndexInfo));
		info->keytype = gbt_column_type(index, 0, NULL);
		opt = index->rd_indoption[0];
		info->desc = (opt & INDOPTION_DESC) != 0;
		info->nulls_first = (opt & INDOPTION_NULLS_FIRST) != 0;
		info->nwords = 1;
		info->indexrelid = RelationGetRelid(index);
		if (ncols > 1 || !gbt_type_supported(info->keytype))
		{
			/* several columns (or INCLUDE ones), or a uuid: multi-word keys */
			gbt_wide_info_init(index, info, 0);
			if (info->text_bytes > 0)
				fit_text_words(index, info);
		}
		index->rd_amcache = info;
	}
	return info;
}

/*
 * A copy of the index's info in the current memory context, for state that
 * outlives the next relcache flush: RelationReloadIndexInfo frees
 * rd_amcache under an open scan (a VACUUM or ANALYZE elsewhere is enough).
 */
GbtIndexInfo *
gbt_index_info_copy(Relation index)
{
	GbtIndexInfo *copy = palloc(sizeof(GbtIndexInfo));

	memcpy(copy, gbt_index_info(index), sizeof(GbtIndexInfo));
	return copy;
}

/*
 * Normalize a non-null value of type typid.  *tidflags receives the bits to
 * keep beside the TID so that decoding is exact (-0.0).
 */
uint64
gbt_datum_to_key(Datum value, Oid typid, uint16 *tidflags)
{
	int			negzero = 0;
	uint64		key;

	switch (typid)
	{
		case INT2OID:
			key = gbt_key_from_int64(DatumGetInt16(value));
			break;
		case INT4OID:
			key = gbt_key_from_int64(DatumGetInt32(value));
			break;
		case DATEOID:
			key = gbt_key_from_int64(DatumGetDateADT(value));
			break;
		case INT8OID:
			key = gbt_key_from_int64(DatumGetInt64(value));
			break;
		case TIMEOID:
			key = gbt_key_from_int64(DatumGetTimeADT(value));
			break;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			key = gbt_key_from_int64(DatumGetTimestamp(value));
			break;
		case CASHOID:
			key = gbt_key_from_int64(DatumGetCash(value));
			break;
		case OIDOID:
			key = gbt_key_from_uint32(DatumGetObjectId(value));
			break;
		case BOOLOID:
			key = DatumGetBool(value) ? 1 : 0;
			break;
		case FLOAT4OID:
			key = gbt_key_from_double((double) DatumGetFloat4(value), &negzero);
			break;
		case FLOAT8OID:
			key = gbt_key_from_double(DatumGetFloat8(value), &negzero);
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gbtree cannot compare values of type %s",
							format_type_be(typid))));
			key = 0;			/* keep compiler quiet */
	}
	if (tidflags)
		*tidflags = negzero ? GBT_TID_FLAG_NEGZERO : 0;
	return key;
}

Datum
gbt_key_to_datum(uint64 key, uint16 tidflags, Oid typid)
{
	int			negzero = (tidflags & GBT_TID_FLAG_NEGZERO) != 0;

	switch (typid)
	{
		case INT2OID:
			return Int16GetDatum((int16) gbt_key_to_int64(key));
		case INT4OID:
			return Int32GetDatum((int32) gbt_key_to_int64(key));
		case DATEOID:
			return DateADTGetDatum((DateADT) gbt_key_to_int64(key));
		case INT8OID:
			return Int64GetDatum(gbt_key_to_int64(key));
		case TIMEOID:
			return TimeADTGetDatum(gbt_key_to_int64(key));
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return TimestampGetDatum(gbt_key_to_int64(key));
		case CASHOID:
			return CashGetDatum(gbt_key_to_int64(key));
		case OIDOID:
			return ObjectIdGetDatum((Oid) key);
		case BOOLOID:
			return BoolGetDatum(key != 0);
		case FLOAT4OID:
			if (key == GBT_NAN_KEY)
				return Float4GetDatum(get_float4_nan());
			return Float4GetDatum((float4) gbt_key_to_double(key, negzero));
		case FLOAT8OID:
			if (key == GBT_NAN_KEY)
				return Float8GetDatum(get_float8_nan());
			return Float8GetDatum(gbt_key_to_double(key, negzero));
		default:
			elog(ERROR, "gbtree: unsupported type %u", typid);
	}
	return (Datum) 0;
}

/* key as stored in this index (complemented for a DESC column) */
uint64
gbt_index_key(GbtIndexInfo *info, Datum value, uint16 *tidflags)
{
	uint64		key = gbt_datum_to_key(value, info->keytype, tidflags);

	return info->desc ? ~key : key;
}

Datum
gbt_index_datum(GbtIndexInfo *info, uint64 ikey, uint64 tid)
{
	return gbt_key_to_datum(info->desc ? ~ikey : ikey, gbt_tid_flags(tid),
							info->keytype);
}
