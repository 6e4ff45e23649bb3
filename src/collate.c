/*-------------------------------------------------------------------------
 *
 * collate.c
 *	  Text keys under a collation that does not order by bytes: the bytes a
 *	  value's key orders by are its order key K(s), built from the
 *	  collation's sort key (src/README, "Text keys", "Collations").
 *
 * A deterministic collation orders as varstr_cmp does: the collation's
 * comparison, then the bytes where it ties.  ICU's sort key X(s) compares,
 * byte by byte, as ucol_strcoll by definition, so
 *
 *	  K(s) = E(X(s)) 0x01 0x01 s
 *
 * orders as varstr_cmp.  E escapes X's 0x01 bytes (its level separators) as
 * 0x01 0x02, so that the separator 0x01 0x01 sorts below whatever an E(X)
 * that goes on has next, and K, like text, holds no zero byte: the field,
 * zero-padded, and the tail's end byte keep working as for "C".  K's
 * equality is s's (a deterministic collation's equal values are equal
 * bytes), and s is read back from K for index-only scans and messages.
 *
 * Whose sort keys: PostgreSQL 16 and later give them for the collations
 * whose strxfrm they trust (pg_strxfrm_enabled: ICU's, not libc's, whose
 * strxfrm has disagreed with its strcoll); 15 has no such call, so ICU's
 * ucol_getSortKey is called on the collator PostgreSQL opened, found in
 * the server's own ICU library by name (its symbols carry the library's
 * version, which need not be that of the headers gbtree was built with,
 * nor need those headers be there at all: src/icu_types).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dlfcn.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "gbtree.h"
#include "gbtree_wide.h"

static char *
catalog_text(int cacheid, HeapTuple tup, AttrNumber att)
{
	bool		isnull;
	Datum		d = SysCacheGetAttr(cacheid, tup, att, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

static int
cstring_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* "C.UTF-8", "C.utf8" and the like: the C locale with UTF-8 characters */
static bool
is_c_utf8_name(const char *loc)
{
	return pg_strncasecmp(loc, "C.", 2) == 0 &&
		(pg_strcasecmp(loc + 2, "UTF-8") == 0 || pg_strcasecmp(loc + 2, "utf8") == 0);
}

/*
 * Whether the C library's C.UTF-8 compares text of this UTF-8 database as
 * its bytes do.  glibc's does from 2.35 ("codepoint_collation": code point
 * order, which is UTF-8's byte order), so btree's order there, strcoll's
 * then strcmp's on ties, is the bytes'.  Not taken on trust: the library
 * must be glibc 2.35 or later, and its comparison must order these probes
 * (ASCII case and punctuation, Latin accents precomposed and combining,
 * ligatures, other scripts, characters beyond the BMP) exactly as their
 * bytes do, each below the next; once a backend for each collation.  Elsewhere C.UTF-8 stays
 * refused, as a libc locale whose order is its own.
 */
static bool
c_utf8_orders_by_bytes(Oid collid)
{
	static const char *const probes[] = {
		"", " ", "!", "0", "9", "A", "B", "Z", "_", "a", "a b", "a-b", "ab", "b",
		"z", "~", "\xc2\xa0", "\xc3\x80", "\xc3\x9f", "\xc3\xa1", "\xc3\xa4",
		"a\xcc\x81", "e\xcc\x81", "\xc3\xa9", "ss", "\xc4\xb1", "I", "i",
		"\xc7\x85", "\xce\xa9", "\xcf\x89", "\xd0\xaf", "\xe4\xb8\xad",
		"\xe6\x97\xa5", "\xef\xbb\xbf", "\xef\xbf\xbd", "\xf0\x9f\x98\x80",
		"\xf4\x8f\xbf\xbf", "AB", "Ab", "aB", "\xef\xac\x81", "fi"
	};
	static Oid	checked[8];
	static bool verdict[8];
	static int	nchecked = 0;
	bool		ok = true;
	const char *sorted[lengthof(probes)];

#ifdef __GLIBC__
	int			major = 0,
				minor = 0;

	if (GetDatabaseEncoding() != PG_UTF8 ||
		sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 ||
		major < 2 || (major == 2 && minor < 35))
		return false;
#else
	return false;
#endif
	for (int i = 0; i < nchecked; i++)
		if (checked[i] == collid)
			return verdict[i];
	/* in byte order (strcmp: no zero bytes), each below the next for it too */
	memcpy(sorted, probes, sizeof(probes));
	qsort(sorted, lengthof(sorted), sizeof(char *), cstring_cmp);
	for (int i = 0; i + 1 < lengthof(sorted) && ok; i++)
		ok = varstr_cmp(sorted[i], strlen(sorted[i]), sorted[i + 1], strlen(sorted[i + 1]),
						collid) < 0 &&
			varstr_cmp(sorted[i + 1], strlen(sorted[i + 1]), sorted[i], strlen(sorted[i]),
					   collid) > 0;
	if (nchecked < lengthof(checked))
	{
		checked[nchecked] = collid;
		verdict[nchecked++] = ok;
	}
	return ok;
}

/*
 * Whether text under this collation orders by its bytes, so that a
 * zero-padded prefix of them is an order key: the libc locales "C" and
 * "POSIX", and PostgreSQL 17's builtin provider (code point order, which
 * is UTF-8's byte order), as PostgreSQL's own collate_is_c has it; and
 * the C library's C.UTF-8 where it is checked to compare as the bytes do
 * (c_utf8_orders_by_bytes).  Read from the catalogs, which every major
 * keeps alike (pg_locale_t's fields differ).
 */
static bool
locale_is_bytewise(char provider, HeapTuple tup, int cacheid, AttrNumber collcollate,
				   Oid collid, bool *c_utf8)
{
	char	   *loc;

	if (provider == 'b')
		return true;			/* COLLPROVIDER_BUILTIN (PostgreSQL 17) */
	if (provider != COLLPROVIDER_LIBC)
		return false;
	loc = catalog_text(cacheid, tup, collcollate);
	if (loc == NULL)
		return false;
	if (strcmp(loc, "C") == 0 || strcmp(loc, "POSIX") == 0)
		return true;
	*c_utf8 = is_c_utf8_name(loc);
	return *c_utf8 && c_utf8_orders_by_bytes(collid);
}

/* the database's LC_COLLATE, for messages */
static char *
database_collate(void)
{
	HeapTuple	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
	char	   *result = NULL;

	if (HeapTupleIsValid(tup))
	{
		result = catalog_text(DATABASEOID, tup, Anum_pg_database_datcollate);
		ReleaseSysCache(tup);
	}
	return result ? result : "?";
}

/* ... and *c_utf8 whether it is a libc C.UTF-8 (for the refusal's reason) */
static bool
collation_is_bytewise(Oid collid, bool *c_utf8)
{
	HeapTuple	tup;
	bool		result;

	*c_utf8 = false;
	if (collid == C_COLLATION_OID)
		return true;
	if (!OidIsValid(collid))
		return false;
	if (collid == DEFAULT_COLLATION_OID)
	{
		tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
		result = locale_is_bytewise(((Form_pg_database) GETSTRUCT(tup))->datlocprovider,
									tup, DATABASEOID, Anum_pg_database_datcollate, collid,
									c_utf8);
	}
	else
	{
		tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collid));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for collation %u", collid);
		result = locale_is_bytewise(((Form_pg_collation) GETSTRUCT(tup))->collprovider,
									tup, COLLOID, Anum_pg_collation_collcollate, collid,
									c_utf8);
	}
	ReleaseSysCache(tup);
	return result;
}

/* whether text under collid keys by its bytes, with no sort keys (costs) */
bool
gbt_collation_orders_by_bytes(Oid collid)
{
	bool		c_utf8;

	return collation_is_bytewise(collid, &c_utf8);
}

/* E's escape byte and K's separator, 0x01 0x01 */
#define SK_ESC		0x01
#define SK_ESCAPED	0x02

#if PG_VERSION_NUM < 160000 && defined(USE_ICU)
typedef int32_t (*GetSortKeyFn) (const UCollator *coll, const UChar *source,
								 int32_t sourceLength, uint8_t *result,
								 int32_t resultLength);

/*
 * ucol_getSortKey of the ICU library the server loaded: its name carries
 * the library's major version (ucol_getSortKey_72), or none in a build
 * made without renaming.
 */
static GetSortKeyFn
icu_get_sort_key(void)
{
	static GetSortKeyFn fn = NULL;
	static bool looked = false;

	if (!looked)
	{
		char		name[64];

		fn = (GetSortKeyFn) dlsym(RTLD_DEFAULT, "ucol_getSortKey");
		for (int v = 200; fn == NULL && v >= 40; v--)
		{
			snprintf(name, sizeof(name), "ucol_getSortKey_%d", v);
			fn = (GetSortKeyFn) dlsym(RTLD_DEFAULT, name);
		}
		looked = true;
	}
	return fn;
}
#endif

/* why a collation's sort keys cannot order a gbtree text key */
typedef enum SortKeyRefusal
{
	SORTKEY_OK,
	SORTKEY_UNTRUSTED,			/* libc's strxfrm, or no sort keys at all */
	SORTKEY_NONDETERMINISTIC,
	SORTKEY_NO_ICU_CALL			/* 15: the server's ICU lacks ucol_getSortKey */
} SortKeyRefusal;

/*
 * Whether collation collid's sort keys can order a gbtree text key.  The
 * "C"-like collations (bytes) are the caller's.
 */
static SortKeyRefusal
sortkey_refusal(Oid collid)
{
#if PG_VERSION_NUM >= 160000
	pg_locale_t locale = pg_newlocale_from_collation(collid);

	if (locale && !locale->deterministic)
		return SORTKEY_NONDETERMINISTIC;
	if (!pg_strxfrm_enabled(locale))
		return SORTKEY_UNTRUSTED;
	return SORTKEY_OK;
#elif defined(USE_ICU)
	pg_locale_t locale = pg_newlocale_from_collation(collid);

	if (!locale || locale->provider != COLLPROVIDER_ICU)
		return SORTKEY_UNTRUSTED;
	if (!locale->deterministic)
		return SORTKEY_NONDETERMINISTIC;
	if (icu_get_sort_key() == NULL)
		return SORTKEY_NO_ICU_CALL;
	return SORTKEY_OK;
#else
	return SORTKEY_UNTRUSTED;
#endif
}

/*
 * Check that text key column a of index (shape column s) can be ordered
 * under its collation, and note the collation in info when it takes sort
 * keys; 0A000 when it cannot.
 */
void
gbt_collate_column(Relation index, GbtIndexInfo *info, int a, int s)
{
	Oid			collid = index->rd_indcollation[a];
	SortKeyRefusal why;
	bool		c_utf8;

	info->sortkey_coll[s] = InvalidOid;
	if (collation_is_bytewise(collid, &c_utf8))
		return;
	why = OidIsValid(collid) ? sortkey_refusal(collid) : SORTKEY_UNTRUSTED;
	if (why == SORTKEY_OK)
	{
		info->sortkey_coll[s] = collid;
		return;
	}
	if (why == SORTKEY_NONDETERMINISTIC)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gbtree does not support nondeterministic collations such as \"%s\"",
						get_collation_name(collid)),
				 errhint("Use btree for this column, or index it under a deterministic collation.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("gbtree supports text keys only under the \"C\", \"POSIX\" or C.UTF-8 collation or a deterministic ICU collation, not \"%s\"",
					OidIsValid(collid) ? get_collation_name(collid) : "?"),
			 collid == DEFAULT_COLLATION_OID ?
			 errdetail("The column takes the database's default collation (LC_COLLATE \"%s\").",
					   database_collate()) :
			 why == SORTKEY_NO_ICU_CALL ?
			 errdetail("The server's ICU library gives no sort keys here.") :
			 c_utf8 ?
			 errdetail("C.UTF-8 is taken as byte order only in a UTF8 database, with glibc 2.35 or later, whose C.UTF-8 compares by code point.") :
			 errdetail("Its order comes from the C library, whose sort keys (strxfrm) are not trusted to order as its comparison does."),
			 errhint("Give the column COLLATE \"C\" or an ICU collation such as \"und-x-icu\" in the table or in CREATE INDEX, or use btree.")));
}

/* X(s): the collation's sort key of len bytes at src, without its end zero */
static unsigned char *
sort_key(Oid collid, const char *src, int len, int *xlen)
{
	size_t		cap = (size_t) len * 3 + 32;
	unsigned char *x = palloc(cap);
#if PG_VERSION_NUM >= 160000
	pg_locale_t locale = pg_newlocale_from_collation(collid);
	size_t		n = pg_strnxfrm((char *) x, cap, src, len, locale);

	if (n >= cap)
	{
		cap = n + 1;
		x = repalloc(x, cap);
		n = pg_strnxfrm((char *) x, cap, src, len, locale);
		if (n >= cap)
			elog(ERROR, "sort key of collation %u changed length", collid);
	}
	*xlen = (int) strnlen((char *) x, n);
#elif defined(USE_ICU)
	pg_locale_t locale = pg_newlocale_from_collation(collid);
	GetSortKeyFn get = icu_get_sort_key();
	UChar	   *u = NULL;
	int32_t		ulen;
	int32_t		n;

	if (get == NULL)
		elog(ERROR, "ICU's ucol_getSortKey not found");
	ulen = icu_to_uchar(&u, src, len);
	n = get(locale->info.icu.ucol, u, ulen, x, (int32_t) cap);
	if (n <= 0)
		elog(ERROR, "ICU gave no sort key");
	if ((size_t) n > cap)
	{
		cap = n;
		x = repalloc(x, cap);
		n = get(locale->info.icu.ucol, u, ulen, x, (int32_t) cap);
	}
	pfree(u);
	*xlen = (int) strnlen((char *) x, Min((size_t) n, cap));
#else
	elog(ERROR, "collation %u has no sort keys in this build", collid);
#endif
	return x;
}

/*
 * The bytes text t's key under shape column s orders by: t's own bytes
 * (*alloc false) or, under a sort-key collation, K(t) palloc'd.
 */
const unsigned char *
gbt_text_key(const GbtIndexInfo *info, int s, const text *t, int *len, bool *alloc)
{
	const char *src = VARDATA_ANY(t);
	int			slen = VARSIZE_ANY_EXHDR(t);
	unsigned char *x;
	unsigned char *k;
	int			xlen;
	int			n = 0;

	*alloc = false;
	*len = slen;
	if (info->coltypes[s] == NUMERICOID)
	{
		/* a numeric's order-preserving bytes (keys.c) */
		*alloc = true;
		return gbt_numeric_key(src, slen, len);
	}
	if (!OidIsValid(info->sortkey_coll[s]))
		return (const unsigned char *) src;
	x = sort_key(info->sortkey_coll[s], src, slen, &xlen);
	k = palloc(2 * xlen + 2 + slen);
	for (int i = 0; i < xlen; i++)
	{
		k[n++] = x[i];
		if (x[i] == SK_ESC)
			k[n++] = SK_ESCAPED;
	}
	k[n++] = SK_ESC;
	k[n++] = SK_ESC;
	memcpy(k + n, src, slen);
	pfree(x);
	*len = n + slen;
	*alloc = true;
	return k;
}

/*
 * Where s starts in an order key K of len bytes, or -1 if K has no
 * separator (a corrupted entry).
 */
int
gbt_text_key_value_start(const unsigned char *k, int len)
{
	for (int i = 0; i + 1 < len; i++)
	{
		if (k[i] != SK_ESC)
			continue;
		if (k[i + 1] == SK_ESC)
			return i + 2;
		i++;					/* an escaped 0x01 */
	}
	return -1;
}
