/*-------------------------------------------------------------------------
 *
 * gbtree.c
 *	  Access method handler, reloptions and GUCs of gbtree.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/nbtree.h"
#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "optimizer/plancat.h"
#include "utils/guc.h"

#include "miscadmin.h"

#include "gbtree.h"
#include "gbtree_gpu.h"
#include "gbtree_simd.h"
#include "gbtree_xlog.h"

#if PG_VERSION_NUM >= 180000
PG_MODULE_MAGIC_EXT(.name = "gbtree", .version = GBT_EXTENSION_VERSION);
#else
PG_MODULE_MAGIC;
#endif

PG_FUNCTION_INFO_V1(gbtree_handler);

static relopt_kind gbt_relopt_kind;

/* deduplicate_items: btree's booleans, and auto (the default) */
static relopt_enum_elt_def gbt_dedup_values[] = {
	{"auto", GBT_DEDUP_AUTO},
	{"on", GBT_DEDUP_ON}, {"true", GBT_DEDUP_ON}, {"yes", GBT_DEDUP_ON}, {"1", GBT_DEDUP_ON},
	{"off", GBT_DEDUP_OFF}, {"false", GBT_DEDUP_OFF}, {"no", GBT_DEDUP_OFF}, {"0", GBT_DEDUP_OFF},
	{(const char *) NULL}
};

/* gbtree.simd: -1 = auto, else a GbtSimdLevel */
int			gbt_simd_guc = -1;
int			gbt_build_run_size = 0;
int			gbt_fit_min_rows = 10000;

static const struct config_enum_entry gbt_simd_options[] = {
	{"auto", -1, false},
	{"avx512", GBT_SIMD_AVX512, false},
	{"avx2", GBT_SIMD_AVX2, false},
	{"scalar", GBT_SIMD_SCALAR, false},
	{NULL, 0, false}
};

static bool
gbt_simd_check(int *newval, void **extra, GucSource source)
{
	if (*newval >= 0 && *newval > (int) gbt_simd_best())
	{
		GUC_check_errdetail("This CPU does not support %s; the best available is %s.",
							gbt_simd_name((GbtSimdLevel) *newval),
							gbt_simd_name(gbt_simd_best()));
		return false;
	}
	return true;
}

static void
gbt_simd_assign(int newval, void *extra)
{
	(void) gbt_simd_set(newval < 0 ? gbt_simd_best() : (GbtSimdLevel) newval);
}

/*
 * Multi-word indexes (wide_scan.c) run a parallel scan in one participant;
 * a partial path over one would be a serial scan costed as a parallel one.
 * So the planner is told they cannot scan in parallel.
 */
static get_relation_info_hook_type prev_relation_info_hook = NULL;

static void
gbt_relation_info(PlannerInfo *root, Oid relid, bool inhparent, RelOptInfo *rel)
{
	ListCell   *lc;

	if (prev_relation_info_hook)
		prev_relation_info_hook(root, relid, inhparent, rel);
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(lc);

		if (index->amcostestimate == (void (*) ()) gbtcostestimate &&
			(index->ncolumns != 1 || !gbt_type_supported(index->opcintype[0])))
			index->amcanparallel = false;
	}
}

void
_PG_init(void)
{
	gbt_simd_set(gbt_simd_best());

	/*
	 * ALTER TABLE picks its lock level by reloption name across every kind,
	 * so this must be btree's level for fillfactor: a stronger one would
	 * make ALTER TABLE any_table SET (fillfactor) block readers wherever
	 * gbtree is loaded.  It only steers later splits and builds.
	 */
	gbt_relopt_kind = add_reloption_kind();
	add_int_reloption(gbt_relopt_kind, "fillfactor",
					  "Packs gbtree leaf pages only to this percentage",
					  GBT_DEFAULT_FILLFACTOR, GBT_MIN_FILLFACTOR, 100,
					  ShareUpdateExclusiveLock);
	/*
	 * btree's name and lock level, for the same reason.  auto: on, except
	 * while a GPU serves this server (the kernels read plain leaves only).
	 */
	add_enum_reloption(gbt_relopt_kind, "deduplicate_items",
					   "Enables posting-form leaves for duplicate keys in this gbtree index",
					   gbt_dedup_values, GBT_DEDUP_AUTO,
					   "Valid values are \"on\", \"off\" and \"auto\".",
					   ShareUpdateExclusiveLock);

	DefineCustomEnumVariable("gbtree.simd",
							 "Selects the in-page search implementation.",
							 "auto picks the best one the CPU supports.",
							 &gbt_simd_guc,
							 -1,
							 gbt_simd_options,
							 PGC_USERSET,
							 0,
							 gbt_simd_check,
							 gbt_simd_assign,
							 NULL);

	DefineCustomIntVariable("gbtree.build_run_size",
							"Testing: entries each CREATE INDEX participant holds before it spills a sorted run (0: what maintenance_work_mem holds).",
							NULL,
							&gbt_build_run_size,
							0, 0, INT_MAX,
							PGC_USERSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gbtree.dir32_pages",
							 "Testing: format multi-word pages as gbtree did before GBT_F_DIRFIT, with 32 directory entries a word.",
							 "Indexes may still hold such pages; tests make them to check that they are read and written as they are.",
							 &gbt_format_dir32,
							 false,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gbtree.fit_min_rows",
							"Testing: the fewest rows a build fits text keys' words to.",
							NULL,
							&gbt_fit_min_rows,
							10000, 0, INT_MAX,
							PGC_USERSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	gbt_gpu_define_gucs();
	gbt_count_init();
	gbt_join_init();
	gbt_array_scan_init();
	gbt_keys_init();
	gbt_batch_init();
	gbt_unique_hooks_init();
	prev_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = gbt_relation_info;
	MarkGUCPrefixReserved("gbtree");

	/*
	 * The GPU service exists only when preloaded (it needs shared memory);
	 * so does gbtree's WAL resource manager, which recovery and standbys
	 * need before any gbtree record.
	 */
	if (process_shared_preload_libraries_in_progress)
	{
		gbt_wal_register_rmgr();
		gbt_gpu_register();
		gbt_gpu_install_hooks();
	}
}

bytea *
gbtoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fillfactor", RELOPT_TYPE_INT, offsetof(GbtOptions, fillfactor)},
		{"deduplicate_items", RELOPT_TYPE_ENUM, offsetof(GbtOptions, deduplicate_items)},
	};

	return (bytea *) build_reloptions(reloptions, validate, gbt_relopt_kind,
									  sizeof(GbtOptions), tab, lengthof(tab));
}

int
gbt_get_fillfactor(Relation index)
{
	GbtOptions *opts = (GbtOptions *) index->rd_options;

	return opts ? opts->fillfactor : GBT_DEFAULT_FILLFACTOR;
}

/*
 * Whether leaves of duplicate keys take the posting form (src/README,
 * "Deduplication"); auto: unless a GPU serves this server, whose kernels
 * would leave an index with posting leaves to the CPU.
 */
bool
gbt_get_dedup(Relation index)
{
	GbtOptions *opts = (GbtOptions *) index->rd_options;
	int			mode = opts ? opts->deduplicate_items : GBT_DEDUP_AUTO;

	if (mode == GBT_DEDUP_AUTO)
		return !gbt_gpu_serving();
	return mode == GBT_DEDUP_ON;
}

Datum
gbtree_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = GBT_NSTRATEGIES;
	amroutine->amsupport = GBT_NPROCS;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = true;
	amroutine->amcanunique = true;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = true;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = true;	/* CLUSTER reads the heap in index order */
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = true;
	amroutine->amcaninclude = true;	/* as multi-word keys (wide.c) */
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions =
		VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_COND_CLEANUP;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = gbtbuild;
	amroutine->ambuildempty = gbtbuildempty;
	amroutine->aminsert = gbtinsert;
	amroutine->ambulkdelete = gbtbulkdelete;
	amroutine->amvacuumcleanup = gbtvacuumcleanup;
	amroutine->amcanreturn = gbtcanreturn;
	amroutine->amcostestimate = gbtcostestimate;
	amroutine->amoptions = gbtoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = gbtbuildphasename;
	amroutine->amvalidate = gbtvalidate;
	amroutine->amadjustmembers = gbtadjustmembers;
	amroutine->ambeginscan = gbtbeginscan;
	amroutine->amrescan = gbtrescan;
	amroutine->amgettuple = gbtgettuple;
	amroutine->amgetbitmap = gbtgetbitmap;
	amroutine->amendscan = gbtendscan;
	amroutine->ammarkpos = gbtmarkpos;
	amroutine->amrestrpos = gbtrestrpos;
	amroutine->amestimateparallelscan = gbtestimateparallelscan;
	amroutine->aminitparallelscan = gbtinitparallelscan;
	amroutine->amparallelrescan = gbtparallelrescan;

	/*
	 * What later majors ask of an AM.  17: the core plans parallel builds
	 * for AMs that say they can, and calls aminsertcleanup when an
	 * inserting statement ends.  18: the planner maps "<" to a sort order
	 * through amtranslatecmptype (without it, no ordered paths and no
	 * correlation); gbtree's strategies are btree's, so btree's mappings
	 * and opfamily properties hold.
	 */
#if PG_VERSION_NUM >= 170000
	amroutine->amcanbuildparallel = true;
	amroutine->aminsertcleanup = gbtinsertcleanup;
#endif
#if PG_VERSION_NUM >= 180000
	amroutine->amcanhash = false;
	amroutine->amconsistentequality = true;
	amroutine->amconsistentordering = true;
	amroutine->amgettreeheight = gbt_tree_height;
	amroutine->amtranslatestrategy = bttranslatestrategy;
	amroutine->amtranslatecmptype = bttranslatecmptype;
#endif

	PG_RETURN_POINTER(amroutine);
}
