/*-------------------------------------------------------------------------
 *
 * validate.c
 *	  amvalidate for gbtree operator classes.
 *
 * An operator family must hold, for each pair of types it covers, the
 * five btree comparison operators (strategies 1-5, returning bool) and
 * the btree comparison function as support function 1; every type must
 * be one gbtree can normalize, and cross-type pairs must stay within one
 * key space (the integer family or the float family).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "gbtree.h"

static int
key_space(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return 1;
		case FLOAT4OID:
		case FLOAT8OID:
			return 2;
		default:
			return gbt_wide_type_supported(typid) ? 100 + (int) typid : -1;
	}
}

char *
gbt_opfamily_name(Oid opfamilyoid)
{
	HeapTuple	tup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	char	   *name;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator family %u", opfamilyoid);
	name = pstrdup(NameStr(((Form_pg_opfamily) GETSTRUCT(tup))->opfname));
	ReleaseSysCache(tup);
	return name;
}

bool
gbtvalidate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	char	   *opfamilyname;
	CatCList   *proclist,
			   *oprlist;
	List	   *grouplist;
	ListCell   *lc;
	bool		own_group_found = false;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);
	opfamilyname = gbt_opfamily_name(opfamilyoid);

	if (key_space(opcintype) < 0)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("gbtree operator class \"%s\" is for unsupported type %s",
						opclassname, format_type_be(opcintype))));
		result = false;
	}

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	for (int i = 0; i < proclist->n_members; i++)
	{
		HeapTuple	proctup = &proclist->members[i]->tuple;
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(proctup);

		if (procform->amprocnum != 1)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gbtree operator family \"%s\" contains function %s with invalid support number %d",
							opfamilyname, format_procedure(procform->amproc),
							procform->amprocnum)));
			result = false;
			continue;
		}
		if (!check_amproc_signature(procform->amproc, INT4OID, true, 2, 2,
									procform->amproclefttype,
									procform->amprocrighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gbtree operator family \"%s\" contains function %s with wrong signature for support number %d",
							opfamilyname, format_procedure(procform->amproc), 1)));
			result = false;
		}
	}

	for (int i = 0; i < oprlist->n_members; i++)
	{
		HeapTuple	oprtup = &oprlist->members[i]->tuple;
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(oprtup);

		if (oprform->amopstrategy < 1 || oprform->amopstrategy > GBT_NSTRATEGIES ||
			oprform->amoppurpose != AMOP_SEARCH)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gbtree operator family \"%s\" contains operator %s with invalid strategy number or purpose",
							opfamilyname, format_operator(oprform->amopopr))));
			result = false;
			continue;
		}
		if (!check_amop_signature(oprform->amopopr, BOOLOID,
								  oprform->amoplefttype, oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gbtree operator family \"%s\" contains operator %s with wrong signature",
							opfamilyname, format_operator(oprform->amopopr))));
			result = false;
		}
		if (!gbt_amop_is_btrees(oprform))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gbtree operator family \"%s\" contains operator %s, which is not btree's operator for its types and strategy",
							opfamilyname, format_operator(oprform->amopopr))));
			result = false;
		}
		if (key_space(oprform->amoplefttype) < 0 ||
			key_space(oprform->amoplefttype) != key_space(oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gbtree operator family \"%s\" contains operator %s comparing types gbtree cannot compare",
							opfamilyname, format_operator(oprform->amopopr))));
			result = false;
		}
	}

	grouplist = identify_opfamily_groups(oprlist, proclist);
	foreach(lc, grouplist)
	{
		OpFamilyOpFuncGroup *g = (OpFamilyOpFuncGroup *) lfirst(lc);

		if (g->lefttype == opcintype && g->righttype == opcintype)
			own_group_found = true;
		if (g->operatorset != ((1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5)))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gbtree operator family \"%s\" is missing operator(s) for types %s and %s",
							opfamilyname, format_type_be(g->lefttype),
							format_type_be(g->righttype))));
			result = false;
		}
		if ((g->functionset & (1 << 1)) == 0)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gbtree operator family \"%s\" is missing support function for types %s and %s",
							opfamilyname, format_type_be(g->lefttype),
							format_type_be(g->righttype))));
			result = false;
		}
	}
	if (!own_group_found)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("gbtree operator class \"%s\" is missing operators for its own type",
						opclassname)));
		result = false;
	}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}

/*
 * The family's name, or NULL: the family and class CREATE OPERATOR CLASS
 * is making are not in the catalog caches yet.
 */
static const char *
new_member_family_name(Oid opfamilyoid, Oid opclassoid)
{
	HeapTuple	tup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	const char *name;

	if (HeapTupleIsValid(tup))
	{
		name = pstrdup(NameStr(((Form_pg_opfamily) GETSTRUCT(tup))->opfname));
		ReleaseSysCache(tup);
		return name;
	}
	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (HeapTupleIsValid(tup))
	{
		name = pstrdup(NameStr(((Form_pg_opclass) GETSTRUCT(tup))->opcname));
		ReleaseSysCache(tup);
		return name;
	}
	return NULL;
}

/*
 * CREATE OPERATOR CLASS and ALTER OPERATOR FAMILY ... ADD: refuse an
 * operator gbtree would misread (keys.c, "Operator families") before it
 * enters the catalog, so that scans need not look for one.  Functions are
 * not checked here: gbtree never calls them (amvalidate checks their
 * signatures).
 */
void
gbtadjustmembers(Oid opfamilyoid, Oid opclassoid, List *operators, List *functions)
{
	ListCell   *lc;

	foreach(lc, operators)
	{
		OpFamilyMember *op = (OpFamilyMember *) lfirst(lc);
		FormData_pg_amop amop;
		const char *famname;

		memset(&amop, 0, sizeof(amop));
		amop.amopfamily = opfamilyoid;
		amop.amoplefttype = op->lefttype;
		amop.amoprighttype = op->righttype;
		amop.amopstrategy = op->number;
		amop.amoppurpose = OidIsValid(op->sortfamily) ? AMOP_ORDER : AMOP_SEARCH;
		amop.amopopr = op->object;

		if (op->number >= 1 && op->number <= GBT_NSTRATEGIES &&
			key_space(op->lefttype) >= 0 && key_space(op->lefttype) == key_space(op->righttype) &&
			gbt_amop_is_btrees(&amop))
			continue;
		famname = new_member_family_name(opfamilyoid, opclassoid);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 famname ?
				 errmsg("gbtree operator family \"%s\" cannot contain operator %s for strategy %d",
						famname, format_operator(op->object), op->number) :
				 errmsg("a gbtree operator class cannot contain operator %s for strategy %d",
						format_operator(op->object), op->number),
				 errdetail("gbtree orders each type by its built-in btree order, so each operator of a gbtree operator family must be the one in the type's default btree operator family."),
				 errhint("Use gbtree's own operator classes, or btree's operators for the same types and strategies.")));
	}
}
