/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What differs between the PostgreSQL majors compspill builds on
 *	  (15, 16, 17 and 18), in one place.
 *
 * The rest of the source is written against the newest server's API; each
 * difference gets a name here, defined under PG_VERSION_NUM for the older
 * majors.  Each entry says which major changed what.  CI builds with
 * -Werror against 15 (Debian's packages), 17 (its server headers, syntax
 * only) and 18 (built from source), and runs the whole suite on 15 and 18;
 * no headers of 16 can be had here, so the 16 branches follow its release
 * notes and are the 15 branches wherever 16 changed nothing we use.
 *
 * IDENTIFICATION
 *	  src/base/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_COMPAT_H
#define COMPSPILL_COMPAT_H

#if PG_VERSION_NUM < 150000
#error "compspill needs PostgreSQL 15 or later"
#endif

#include "access/htup_details.h"
#include "storage/proc.h"
#if PG_VERSION_NUM >= 170000 && defined(MEMORY_CONTEXT_CHECKING)
#include "utils/memutils_memorychunk.h"	/* a bump chunk's header */
#endif

/*
 * 18 moved ExplainState to commands/explain_state.h and the
 * ExplainProperty* functions to commands/explain_format.h.
 */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#else
#include "commands/explain.h"
#endif

/*
 * 18 exported the set-aside groups with which EXPLAIN collects each
 * parallel worker's lines apart and adds them under the node's "Workers"
 * group (ExplainOpenSetAsideGroup, ExplainSaveGroup, ExplainRestoreGroup,
 * in explain_format.c); before 18 they were static in explain.c.  Here
 * they are what explain.c does with the grouping stack on 15 to 17 (an
 * int per level in JSON and YAML; only the indentation in XML and text).
 */
#if PG_VERSION_NUM < 180000
static inline void
ExplainOpenSetAsideGroup(const char *objtype pg_attribute_unused(),
						 const char *labelname, bool labeled pg_attribute_unused(),
						 int depth, ExplainState *es)
{
	if (es->format == EXPLAIN_FORMAT_TEXT)
		return;
	if (es->format == EXPLAIN_FORMAT_JSON)
		es->grouping_stack = lcons_int(0, es->grouping_stack);
	else if (es->format == EXPLAIN_FORMAT_YAML)
		es->grouping_stack = lcons_int(labelname ? 1 : 0, es->grouping_stack);
	es->indent += depth;
}

static inline void
ExplainSaveGroup(ExplainState *es, int depth, int *state_save)
{
	if (es->format == EXPLAIN_FORMAT_TEXT)
		return;
	es->indent -= depth;
	if (es->format == EXPLAIN_FORMAT_JSON || es->format == EXPLAIN_FORMAT_YAML)
	{
		*state_save = linitial_int(es->grouping_stack);
		es->grouping_stack = list_delete_first(es->grouping_stack);
	}
}

static inline void
ExplainRestoreGroup(ExplainState *es, int depth, int *state_save)
{
	if (es->format == EXPLAIN_FORMAT_TEXT)
		return;
	if (es->format == EXPLAIN_FORMAT_JSON || es->format == EXPLAIN_FORMAT_YAML)
		es->grouping_stack = lcons_int(*state_save, es->grouping_stack);
	es->indent += depth;
}
#endif

/*
 * 18 replaced pg_attribute_noreturn(), written after a declaration, with
 * pg_noreturn, written before it.  GCC and Clang take the attribute in
 * front too, so older servers get pg_noreturn spelled with the old macro.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * 16 added pg_attribute_target() (a function compiled for more of the CPU
 * than the rest of the build, as SSE 4.2's crc32 for crc32c.c): GCC's and
 * Clang's attribute on older servers.
 */
#if !defined(pg_attribute_target) && (defined(__GNUC__) || defined(__clang__))
#define pg_attribute_target(...) __attribute__((target(__VA_ARGS__)))
#endif

/*
 * 18 put a tuple descriptor's compact attributes in front of its
 * attributes: the bytes a descriptor of natts attributes takes (for the
 * fuzzer, which makes descriptors outside the server).
 */
#if PG_VERSION_NUM >= 180000
#define CompSpillTupleDescSize(natts) \
	(offsetof(struct TupleDescData, compact_attrs) + \
	 (natts) * (sizeof(CompactAttribute) + sizeof(FormData_pg_attribute)))
#else
#define CompSpillTupleDescSize(natts) \
	(offsetof(struct TupleDescData, attrs) + \
	 (natts) * sizeof(FormData_pg_attribute))
#endif

/*
 * 18 gave heap_form_minimal_tuple and heap_copy_minimal_tuple an argument
 * for extra space before the tuple; compspill never wants any.
 */
#if PG_VERSION_NUM >= 180000
#define CompSpillFormMinimalTuple(desc, values, isnull) \
	heap_form_minimal_tuple((desc), (values), (isnull), 0)
#define CompSpillCopyMinimalTuple(tup) \
	heap_copy_minimal_tuple((tup), 0)
#else
#define CompSpillFormMinimalTuple(desc, values, isnull) \
	heap_form_minimal_tuple((desc), (values), (isnull))
#define CompSpillCopyMinimalTuple(tup) \
	heap_copy_minimal_tuple(tup)
#endif

/*
 * The context of a sort's tuples, which are freed all at once when a run is
 * written: 17's bump context, which keeps no header per chunk (tuplesort
 * holds its tuples in one since 17), and a generation context before it.
 * Nothing may pfree, repalloc or ask the space of a chunk of it.  keep is
 * the size of its keeper block, which a reset does not free (0: none).
 */
#if PG_VERSION_NUM >= 170000
#define CompSpillTupleContextCreate(parent, name, keep, init, max) \
	BumpContextCreate((parent), (name), (keep), (init), (max))
#else
#define CompSpillTupleContextCreate(parent, name, keep, init, max) \
	GenerationContextCreate((parent), (name), (keep), (init), (max))
#endif

/*
 * Before 17 that context is a generation context, whose chunks carry a
 * 24-byte header each: there a sort carves its tuples from larger chunks
 * (sorter.c, compspill_carve_tuple) and counts the headers native sort
 * counts only in its first run.
 */
#define COMPSPILL_CARVED_TUPLES		(PG_VERSION_NUM < 170000)

/*
 * From 17 on, the space a minimal tuple copied into that context takes, as
 * native sort counts it against work_mem: its length, aligned (a bump
 * context cannot say the space of a chunk).  A server built with
 * assertions gives a bump chunk a header and a sentinel byte, which
 * native's figure leaves out and this counts.
 */
#if PG_VERSION_NUM >= 170000
#ifdef MEMORY_CONTEXT_CHECKING
#define CompSpillTupleSpace(tup) \
	((int64) (MAXALIGN((tup)->t_len + 1) + sizeof(MemoryChunk)))
#else
#define CompSpillTupleSpace(tup)	((int64) MAXALIGN((tup)->t_len))
#endif
#endif

/*
 * Ask the CPU to bring the cache line at p in, for a read soon: GCC's and
 * Clang's builtin; nothing elsewhere.
 */
#if defined(__GNUC__) || defined(__clang__)
#define CompSpillPrefetch(p)	__builtin_prefetch((p), 0, 3)
#else
#define CompSpillPrefetch(p)	((void) 0)
#endif

/*
 * 17 replaced MyProc->pgprocno with MyProcNumber: this backend's index in
 * the PGPROC array, which compspill uses for its shared-memory slots.
 */
#if PG_VERSION_NUM >= 170000
#define CompSpillMyProcNumber()	((int) MyProcNumber)
#else
#define CompSpillMyProcNumber()	(MyProc->pgprocno)
#endif

/*
 * 18 made queryId signed (int64); compspill keeps it as the bits it is.
 */
#define CompSpillQueryId(stmt)	((uint64) (stmt)->queryId)

/*
 * 18's EXPLAIN qualifies column names when the range table has more than
 * one entry not counting the RTE_GROUP entry of a grouped query
 * (es->rtable_size); before 18 it counted the whole range table.
 */
#if PG_VERSION_NUM >= 180000
#define CompSpillExplainRtableSize(es)	((es)->rtable_size)
#else
#define CompSpillExplainRtableSize(es)	list_length((es)->rtable)
#endif

/*
 * 18 counts the nodes of a plan that enable_* settings disabled
 * (Plan.disabled_nodes, each node's own plus its children's) and EXPLAIN
 * marks a node "Disabled" when its count exceeds its children's; for a
 * CustomScan it sums the children in custom_plans only.
 */
#if PG_VERSION_NUM >= 180000
#define COMPSPILL_HAS_DISABLED_NODES 1
#endif

/*
 * 18 added tuplestore_get_stats, with which EXPLAIN ANALYZE prints how
 * much a Material or CTE Scan's tuplestore held ("Storage", "Maximum
 * Storage"); compspill's stores print the same lines on every version.
 */
#if PG_VERSION_NUM >= 180000
#define COMPSPILL_HAS_TUPLESTORE_STATS 1
#endif

/*
 * 18 folded BuildTupleHashTableExt into BuildTupleHashTable and gave it the
 * slot type of the tuples looked up (NULL: any; older servers take no such
 * argument, and the macro drops it unevaluated); before 18 the metadata
 * context is the Ext variant's.
 */
#if PG_VERSION_NUM >= 180000
#define CompSpillBuildTupleHashTable(parent, desc, ops, ncols, cols, eqfuncs, \
									 hashfuncs, colls, nbuckets, metacxt, \
									 tablecxt, tempcxt) \
	BuildTupleHashTable((parent), (desc), (ops), (ncols), (cols), (eqfuncs), \
						(hashfuncs), (colls), (nbuckets), 0, (metacxt), \
						(tablecxt), (tempcxt), false)
#else
#define CompSpillBuildTupleHashTable(parent, desc, ops, ncols, cols, eqfuncs, \
									 hashfuncs, colls, nbuckets, metacxt, \
									 tablecxt, tempcxt) \
	BuildTupleHashTableExt((parent), (desc), (ncols), (cols), (eqfuncs), \
						   (hashfuncs), (colls), (nbuckets), 0, (metacxt), \
						   (tablecxt), (tempcxt), false)
#endif

/*
 * 18 lets a module say its name and version in its magic block.
 */
#if PG_VERSION_NUM >= 180000
#define COMPSPILL_MODULE_MAGIC(ver) \
	PG_MODULE_MAGIC_EXT(.name = "compspill", .version = (ver))
#else
#define COMPSPILL_MODULE_MAGIC(ver) PG_MODULE_MAGIC
#endif

#endif							/* COMPSPILL_COMPAT_H */
