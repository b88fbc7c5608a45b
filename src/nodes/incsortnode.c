/*-------------------------------------------------------------------------
 *
 * incsortnode.c
 *	  The "CompSpill Incremental Sort" CustomScan: plan node construction,
 *	  executor callbacks and EXPLAIN output.
 *
 * An incremental sort reads input already ordered on the first keys (the
 * presorted prefix) and sorts it one group at a time.  The node stands
 * where an IncrementalSort stood, keeps its whole Plan header, its child on
 * lefttree and its keys (sortkeys.c) and prefix length in custom_private
 * as lists, and
 * makes the same groups as PostgreSQL's node, so that EXPLAIN counts the
 * same groups of each kind:
 *
 * - Full-sort groups.  Rows are gathered into a sort on all the keys
 *   without looking at the prefix until there are 32 of them; from then on
 *   each row is compared with the 32nd, and the group ends at the first
 *   row whose prefix differs (that row is carried over to the next group)
 *   or at the end of the input.
 * - Pre-sorted groups.  When a full-sort group grows past 64 rows, it is
 *   probably one large prefix group.  The full sort is finished, and its
 *   rows move in order to a second sort on the remaining keys only, one
 *   prefix group at a time (the full sort may hold a few small groups
 *   before the large one); once the rows held all belong to the large
 *   group, the rest of it is read from the child straight into that sort.
 *
 * Both sorts are compspill sorters, made once and reset for each group
 * (CompSpillSorterReset): a sorter that spilled keeps its spill object, so
 * that however many groups spill, each sorter is one operation with one
 * temp file, one entry in compspill_activity and compspill_stats, one log
 * line and one charge against compspill.max_temp_space, and its figures
 * add up over its groups.  Only when compspill.enabled was turned off after
 * the plan was made (a cached plan keeps the node) are the groups sorted
 * with PostgreSQL's tuplesort, which EXPLAIN says.
 *
 * The sorter sizes its blocks from the rows it expects (sorter.c): the
 * full sort expects at most one more row than makes it a pre-sorted group,
 * and the pre-sorted sort one prefix group, the rows the planner costs each
 * group of an incremental sort with: the input's rows over the distinct
 * values of the prefix columns, from their statistics.  Taking the whole
 * input's estimate instead would make it expect as many runs in one group
 * as the whole input would make, and choose blocks as small as for a merge
 * of all of them.  Where the prefix is not a plain table column with
 * statistics, it has no estimate, as a sort the plan expects to fit.
 *
 * Under Gather Merge, each parallel worker's node publishes its groups and
 * spill figures when its execution ends (customscan.c), and the
 * leader's EXPLAIN ANALYZE prints them per worker, where native prints
 * its per-worker group lines; the node's own lines are the leader's.
 *
 * PostgreSQL's incremental sort supports neither backward scans nor mark
 * and restore, so the planner never asks them of this node (a scrollable
 * cursor gets a Material above it).  A rescan starts from the first group
 * again, reading the child again, as native does.  An IncrementalSort
 * that a Limit above will bound is left native by the plan rewrite.
 *
 * IDENTIFICATION
 *	  src/nodes/incsortnode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "base/spillstats.h"
#include "nodes/customscan.h"
#include "nodes/explain.h"
#include "nodes/extensible.h"
#include "nodes/incsortnode.h"
#include "nodes/makefuncs.h"
#include "nodes/sortkeys.h"
#include "parser/parsetree.h"
#include "shared/workers.h"
#include "sort/sorter.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/tuplesort.h"

/* the node's name in the log line and compspill_activity */
#define COMPSPILL_INCSORT_WHAT			"incremental sort"
/* rows a full-sort group takes before its prefix is looked at */
#define COMPSPILL_INCSORT_MIN_GROUP		32
/* past this many rows, a full-sort group becomes a pre-sorted group */
#define COMPSPILL_INCSORT_MAX_FULL		(2 * COMPSPILL_INCSORT_MIN_GROUP)

/* What the node is doing between calls */
typedef enum CompSpillIncSortStatus
{
	INCSORT_LOAD_FULL,			/* gather the next full-sort group */
	INCSORT_LOAD_PREFIX,		/* read the rest of a large prefix group */
	INCSORT_READ_FULL,			/* return the full-sort group's rows */
	INCSORT_READ_PREFIX			/* return the pre-sorted group's rows */
} CompSpillIncSortStatus;

/*
 * One of the node's two sorts: a compspill sorter, or PostgreSQL's
 * tuplesort on the fallback path, with what EXPLAIN says of its groups.
 */
typedef struct CompSpillIncBatch
{
	CompSpillSortSpec spec;		/* its keys */
	CompSpillSorter *sorter;	/* compspill path */
	Tuplesortstate *tuplesort;	/* tuplesort path */
	TupleTableSlot *ts_slot;	/* rows of the tuplesort path */
	int64		written_before; /* sorter's file bytes before this group */
	int64		rows_before;	/* sorter's spilled rows before this group */
	int64		early_before;	/* sorter's early-merge bytes before it */
	int64		runs_written;	/* run formation's file bytes, all groups */
	int64		peak_mem;		/* largest group peak of the sorter */
	CompSpillGroupInfo groups;	/* for EXPLAIN */
} CompSpillIncBatch;

/* equality of one presorted key, to find where a group ends */
typedef struct CompSpillPrefixKey
{
	AttrNumber	attno;
	FmgrInfo	flinfo;
	Oid			collation;
} CompSpillPrefixKey;

typedef struct CompSpillIncSortState
{
	CustomScanState css;		/* must be first */
	int			npresorted;		/* keys the input is ordered on */
	CompSpillSettings settings; /* captured at executor start */
	bool		use_tuplesort;	/* sort with PostgreSQL's tuplesort */
	CompSpillIncSortStatus status;
	bool		outer_done;		/* the child returned its last row */
	int64		full_remaining; /* rows of the full sort not yet moved to
								 * the pre-sorted sort */
	CompSpillPrefixKey *prefix; /* npresorted entries */
	TupleTableSlot *pivot;		/* the row a group's rows are compared with,
								 * or the row carried over to the next group */
	TupleTableSlot *transfer;	/* a row on its way from the full sort */
	CompSpillIncBatch full;		/* sort on all keys */
	CompSpillIncBatch presorted;	/* sort on the keys after the prefix */

	/* EXPLAIN ANALYZE's figures, the leader's and its workers' */
	CompSpillNodeFigures figures;
} CompSpillIncSortState;

/*
 * What EXPLAIN ANALYZE prints of the node: its groups of each kind, its
 * memory peak and the spill figures of its two sorts together; what a
 * parallel worker's node publishes for the leader.
 */
typedef struct CompSpillIncSortFigures
{
	bool		use_tuplesort;	/* the tuplesort fallback sorted */
	CompSpillGroupInfo full;
	CompSpillGroupInfo presorted;
	int64		peak_mem;
	bool		spilled;
	CompSpillStats spill;
} CompSpillIncSortFigures;

StaticAssertDecl(sizeof(CompSpillIncSortFigures) <= COMPSPILL_WORKER_FIGURES_SIZE,
				 "incremental sort figures do not fit in a worker entry");

static Node *compspill_incsort_create_state(CustomScan *cscan);
static void compspill_incsort_begin(CustomScanState *node, EState *estate,
									int eflags);
static TupleTableSlot *compspill_incsort_exec(CustomScanState *node);
static void compspill_incsort_end(CustomScanState *node);
static void compspill_incsort_shutdown(CustomScanState *node);
static void compspill_incsort_rescan(CustomScanState *node);
static void compspill_incsort_explain(CustomScanState *node, List *ancestors,
									  ExplainState *es);
static bool compspill_incsort_figures(CustomScanState *node, void *figures);
static void compspill_incsort_explain_figures(const void *figures,
											  ExplainState *es);

static const CustomScanMethods compspill_incsort_scan_methods = {
	.CustomName = COMPSPILL_INCSORT_NAME,
	.CreateCustomScanState = compspill_incsort_create_state,
};

static const CustomExecMethods compspill_incsort_exec_methods = {
	.CustomName = COMPSPILL_INCSORT_NAME,
	.BeginCustomScan = compspill_incsort_begin,
	.ExecCustomScan = compspill_incsort_exec,
	.EndCustomScan = compspill_incsort_end,
	.ReScanCustomScan = compspill_incsort_rescan,
	.ExplainCustomScan = compspill_incsort_explain,
	.ShutdownCustomScan = compspill_incsort_shutdown,
};

/*
 * Register the node's methods, so plans naming it can be read back.
 */
void
CompSpillRegisterIncSortNode(void)
{
	RegisterCustomScanMethods(&compspill_incsort_scan_methods);
}

/*
 * Follow output column resno of plan down to the table column it is, through
 * the plans that pass a child's column on; return that Var, or NULL if the
 * column is computed somewhere.
 */
static Var *
compspill_incsort_table_column(Plan *plan, AttrNumber resno)
{
	for (;;)
	{
		TargetEntry *tle;
		Var		   *var;

		if (plan == NULL || resno < 1 || resno > list_length(plan->targetlist))
			return NULL;
		tle = list_nth(plan->targetlist, resno - 1);
		if (!IsA(tle->expr, Var))
			return NULL;
		var = (Var *) tle->expr;
		if (var->varlevelsup != 0)
			return NULL;
		if (var->varno == OUTER_VAR)
			plan = outerPlan(plan);
		else if (var->varno == INNER_VAR)
			plan = innerPlan(plan);
		else if (var->varno == INDEX_VAR)
		{
			/* an index-only scan's column: the index's entry names it */
			List	   *itlist;

			if (!IsA(plan, IndexOnlyScan))
				return NULL;
			itlist = ((IndexOnlyScan *) plan)->indextlist;
			if (var->varattno < 1 || var->varattno > list_length(itlist))
				return NULL;
			tle = list_nth(itlist, var->varattno - 1);
			return IsA(tle->expr, Var) ? (Var *) tle->expr : NULL;
		}
		else
			return var;
		resno = var->varattno;
	}
}

/*
 * Return the distinct values of a table column that its statistics give,
 * or 0 if they give none.
 */
static double
compspill_incsort_ndistinct(PlannedStmt *stmt, Var *var)
{
	RangeTblEntry *rte;
	HeapTuple	tup;
	double		stadistinct;
	double		ndistinct = 0;

	if (var == NULL || var->varattno < 1 || IS_SPECIAL_VARNO(var->varno) ||
		var->varno > list_length(stmt->rtable))
		return 0;
	rte = rt_fetch(var->varno, stmt->rtable);
	if (rte->rtekind != RTE_RELATION)
		return 0;

	tup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(rte->relid),
						  Int16GetDatum(var->varattno),
						  BoolGetDatum(rte->inh));
	if (!HeapTupleIsValid(tup))
		return 0;
	stadistinct = ((Form_pg_statistic) GETSTRUCT(tup))->stadistinct;
	ReleaseSysCache(tup);

	if (stadistinct > 0)
		ndistinct = stadistinct;
	else if (stadistinct < 0)
	{
		/* a fraction of the table's rows */
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rte->relid));
		if (HeapTupleIsValid(tup))
		{
			double		reltuples = ((Form_pg_class) GETSTRUCT(tup))->reltuples;

			if (reltuples > 0)
				ndistinct = -stadistinct * reltuples;
			ReleaseSysCache(tup);
		}
	}
	return ndistinct;
}

/*
 * Estimate the rows of one prefix group of the IncrementalSort: its input's
 * rows over the distinct values of the prefix columns (their product, at
 * most one group a row), or 0 if some prefix column has no statistics.
 */
static double
compspill_incsort_group_rows(IncrementalSort *isort, PlannedStmt *stmt)
{
	Plan	   *plan = &isort->sort.plan;
	double		rows = outerPlan(plan)->plan_rows;
	double		groups = 1;

	for (int i = 0; i < isort->nPresortedCols; i++)
	{
		Var		   *var = compspill_incsort_table_column(plan,
														 isort->sort.sortColIdx[i]);
		double		nd = compspill_incsort_ndistinct(stmt, var);

		if (nd <= 0)
			return 0;
		groups *= nd;
	}
	groups = Max(Min(groups, rows), 1);
	return ceil(rows / groups);
}

/*
 * Build a CustomScan that does the work of the given IncrementalSort of
 * stmt.
 */
Plan *
CompSpillMakeIncSortNode(IncrementalSort *isort, PlannedStmt *stmt)
{
	List	   *private = CompSpillSortKeysPlan(&isort->sort);

	private = lappend(private, makeInteger(isort->nPresortedCols));
	/* an Integer: a Float's text without a point reads back as one */
	private = lappend(private,
					  makeInteger((int) Min(compspill_incsort_group_rows(isort, stmt),
											(double) PG_INT32_MAX)));

	/* as native: no backward scan, no mark and restore */
	return (Plan *) CompSpillMakeCustomScan(&isort->sort.plan, 0, private,
											&compspill_incsort_scan_methods);
}

/*
 * Allocate the node's executor state.
 */
static Node *
compspill_incsort_create_state(CustomScan *cscan pg_attribute_unused())
{
	return CompSpillNewScanState(sizeof(CompSpillIncSortState),
								 &compspill_incsort_exec_methods);
}

/*
 * Look up the equality function of each presorted key, from its ordering
 * operator.
 */
static void
compspill_incsort_prepare_prefix(CompSpillIncSortState *state)
{
	CompSpillSortSpec *spec = &state->full.spec;

	state->prefix = palloc0(sizeof(CompSpillPrefixKey) * state->npresorted);
	for (int i = 0; i < state->npresorted; i++)
	{
		CompSpillPrefixKey *key = &state->prefix[i];
		Oid			eqop = get_equality_op_for_ordering_op(spec->sortops[i],
														   NULL);

		if (!OidIsValid(eqop))
			elog(ERROR, "missing equality operator for ordering operator %u",
				 spec->sortops[i]);
		key->attno = spec->attnums[i];
		key->collation = spec->collations[i];
		fmgr_info(get_opcode(eqop), &key->flinfo);
	}
}

/*
 * Start the node: read the keys, initialise the child, choose the sort path.
 */
static void
compspill_incsort_begin(CustomScanState *node, EState *estate, int eflags)
{
	CompSpillIncSortState *state = (CompSpillIncSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	TupleDesc	tupdesc;

	/* PostgreSQL never asks an incremental sort for these */
	if (eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK))
		elog(ERROR, "compspill incremental sort does not support backward scans or mark and restore");

	state->npresorted = intVal(list_nth(cscan->custom_private,
										COMPSPILL_SORTKEYS_NLISTS));
	CompSpillSortKeysRead(cscan, 0, &state->full.spec);
	/* a full-sort group never holds more rows than this */
	state->full.spec.est_rows = COMPSPILL_INCSORT_MAX_FULL + 1;
	CompSpillSortKeysRead(cscan, state->npresorted, &state->presorted.spec);
	/* one prefix group, as the planner estimates it (0: no estimate) */
	state->presorted.spec.est_rows =
		intVal(list_nth(cscan->custom_private, COMPSPILL_SORTKEYS_NLISTS + 1));
	state->full.spec.what = COMPSPILL_INCSORT_WHAT;
	state->presorted.spec.what = COMPSPILL_INCSORT_WHAT;
	CompSpillCaptureSettings(&state->settings, estate);
	compspill_incsort_prepare_prefix(state);

	/* a cached plan may outlive a change of compspill.enabled */
	state->use_tuplesort = !compspill_enabled;
	state->status = INCSORT_LOAD_FULL;

	/* the child may make use of a rewind; this node cannot */
	outerPlanState(node) = ExecInitNode(outerPlan(cscan), estate, eflags);
	tupdesc = ExecGetResultType(outerPlanState(node));

	/* rows come in the sorts' slots, minimal or virtual: not fixed */
	node->ss.ps.ps_ProjInfo = NULL;
	node->ss.ps.resultops = &TTSOpsMinimalTuple;
	node->ss.ps.resultopsfixed = false;
	node->ss.ps.resultopsset = true;

	state->pivot = MakeSingleTupleTableSlot(tupdesc, &TTSOpsMinimalTuple);
	state->transfer = MakeSingleTupleTableSlot(tupdesc, &TTSOpsMinimalTuple);
	if (state->use_tuplesort)
	{
		state->full.ts_slot = MakeSingleTupleTableSlot(tupdesc,
													   &TTSOpsMinimalTuple);
		state->presorted.ts_slot = MakeSingleTupleTableSlot(tupdesc,
															&TTSOpsMinimalTuple);
	}

	CompSpillNodeFiguresBegin(&state->figures, node,
							  sizeof(CompSpillIncSortFigures),
							  compspill_incsort_figures,
							  compspill_incsort_explain_figures);
}

/*
 * Does the row in slot have the same prefix as the pivot?  The keys are
 * compared from the last, which changes most often.
 */
static bool
compspill_incsort_same_group(CompSpillIncSortState *state,
							 TupleTableSlot *slot)
{
	for (int i = state->npresorted - 1; i >= 0; i--)
	{
		CompSpillPrefixKey *key = &state->prefix[i];
		Datum		a;
		Datum		b;
		bool		anull;
		bool		bnull;

		a = slot_getattr(state->pivot, key->attno, &anull);
		b = slot_getattr(slot, key->attno, &bnull);
		if (anull || bnull)
		{
			if (anull != bnull)
				return false;
			continue;
		}
		if (!DatumGetBool(FunctionCall2Coll(&key->flinfo, key->collation,
											a, b)))
			return false;
	}
	return true;
}

/*
 * Make the batch empty for a new group: create its sort the first time,
 * reset it afterwards.
 */
static void
compspill_incsort_batch_start(CompSpillIncSortState *state,
							  CompSpillIncBatch *batch)
{
	TupleDesc	tupdesc = ExecGetResultType(outerPlanState(state));
	CompSpillSortSpec *spec = &batch->spec;

	if (state->use_tuplesort)
	{
		if (batch->tuplesort == NULL)
			batch->tuplesort = tuplesort_begin_heap(tupdesc, spec->nkeys,
													spec->attnums,
													spec->sortops,
													spec->collations,
													spec->nulls_first,
													work_mem, NULL,
													TUPLESORT_NONE);
		else
			tuplesort_reset(batch->tuplesort);
		return;
	}

	if (batch->sorter == NULL)
		batch->sorter = CompSpillSorterBegin(tupdesc, spec, work_mem,
											 &state->settings);
	else
		CompSpillSorterReset(batch->sorter);
	batch->written_before = CompSpillSorterStats(batch->sorter)->bytes_written;
	batch->rows_before = CompSpillSorterStats(batch->sorter)->rows_spilled;
	batch->early_before =
		CompSpillSorterStats(batch->sorter)->bytes_written_early;
}

/*
 * Add a row to the batch's group.
 */
static inline void
compspill_incsort_batch_put(CompSpillIncBatch *batch, TupleTableSlot *slot)
{
	if (batch->tuplesort)
		tuplesort_puttupleslot(batch->tuplesort, slot);
	else
		CompSpillSorterPut(batch->sorter, slot);
}

/*
 * The group is complete: sort it, and count it for EXPLAIN.
 */
static void
compspill_incsort_batch_finish(CompSpillIncBatch *batch)
{
	CompSpillGroupInfo *g = &batch->groups;
	bool		disk;
	int64		kb;

	if (batch->tuplesort)
	{
		TuplesortInstrumentation ts;

		tuplesort_performsort(batch->tuplesort);
		tuplesort_get_stats(batch->tuplesort, &ts);
		disk = ts.spaceType == SORT_SPACE_TYPE_DISK;
		kb = ts.spaceUsed;
		g->methods |= ts.sortMethod;
	}
	else
	{
		CompSpillStats *st;

		CompSpillSorterFinish(batch->sorter);
		st = CompSpillSorterStats(batch->sorter);
		disk = st->rows_spilled > batch->rows_before;
		if (disk)
		{
			kb = (st->bytes_written - batch->written_before + 1023) / 1024;

			/*
			 * The sorter sets what run formation wrote as all it wrote
			 * before the final merge, but early merges: this group's part
			 * of that is what it wrote since the group began, and the
			 * node's figure their sum over the groups.
			 */
			batch->runs_written += st->bytes_written_runs -
				batch->written_before + batch->early_before;
			st->bytes_written_runs = batch->runs_written;
		}
		else
			kb = (st->peak_mem + 1023) / 1024;
		batch->peak_mem = Max(batch->peak_mem, st->peak_mem);
		g->methods |= disk ? SORT_TYPE_EXTERNAL_MERGE : SORT_TYPE_QUICKSORT;
	}

	g->groups++;
	if (disk)
	{
		g->disk_total_kb += kb;
		g->disk_peak_kb = Max(g->disk_peak_kb, kb);
	}
	else
	{
		g->mem_total_kb += kb;
		g->mem_peak_kb = Max(g->mem_peak_kb, kb);
	}
}

/*
 * Return the batch's next sorted row, or NULL when the group is done.
 */
static inline TupleTableSlot *
compspill_incsort_batch_get(CompSpillIncBatch *batch)
{
	if (batch->tuplesort)
		return tuplesort_gettupleslot(batch->tuplesort, true, false,
									  batch->ts_slot, NULL) ?
			batch->ts_slot : NULL;
	return CompSpillSorterGet(batch->sorter, true);
}

/*
 * Move the rows of the full sort, in order, into the pre-sorted sort, one
 * prefix group at a time: the group of the row carried over from the last
 * call if there is one, else of the next row.  If every remaining row is
 * of that group, go on loading it from the child; else sort the group and
 * return it, and come back for the next one.
 */
static void
compspill_incsort_to_presorted(CompSpillIncSortState *state)
{
	int64		moved = 0;

	compspill_incsort_batch_start(state, &state->presorted);

	if (!TupIsNull(state->transfer))
	{
		/* the first row of this group, read by the last call */
		compspill_incsort_batch_put(&state->presorted, state->transfer);
		ExecCopySlot(state->pivot, state->transfer);
		moved++;
	}
	while (moved < state->full_remaining)
	{
		TupleTableSlot *slot = compspill_incsort_batch_get(&state->full);

		if (slot == NULL)
			elog(ERROR, "compspill incremental sort lost rows of a group");
		ExecCopySlot(state->transfer, slot);
		if (TupIsNull(state->pivot))
			ExecCopySlot(state->pivot, state->transfer);
		if (!compspill_incsort_same_group(state, state->transfer))
		{
			/* the first row of the next group: kept in transfer */
			ExecClearTuple(state->pivot);
			break;
		}
		compspill_incsort_batch_put(&state->presorted, state->transfer);
		moved++;
	}
	state->full_remaining -= moved;

	if (state->full_remaining == 0)
	{
		/* the rest of the group comes from the child */
		ExecCopySlot(state->pivot, state->transfer);
		ExecClearTuple(state->transfer);
		state->status = INCSORT_LOAD_PREFIX;
	}
	else
	{
		compspill_incsort_batch_finish(&state->presorted);
		state->status = INCSORT_READ_PREFIX;
	}
}

/*
 * Gather the next full-sort group from the child (starting with the row
 * carried over from the last group), sort it and start returning it; or,
 * if it grows large, move on to pre-sorted groups.
 */
static void
compspill_incsort_load_full(CompSpillIncSortState *state)
{
	PlanState  *outer = outerPlanState(state);
	int64		n = 0;

	compspill_incsort_batch_start(state, &state->full);

	if (!TupIsNull(state->pivot))
	{
		compspill_incsort_batch_put(&state->full, state->pivot);
		ExecClearTuple(state->pivot);
		n++;
	}

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(outer);

		if (TupIsNull(slot))
		{
			state->outer_done = true;
			compspill_incsort_batch_finish(&state->full);
			state->status = INCSORT_READ_FULL;
			return;
		}

		if (n < COMPSPILL_INCSORT_MIN_GROUP)
		{
			compspill_incsort_batch_put(&state->full, slot);
			if (++n == COMPSPILL_INCSORT_MIN_GROUP)
				ExecCopySlot(state->pivot, slot);
		}
		else if (compspill_incsort_same_group(state, slot))
		{
			compspill_incsort_batch_put(&state->full, slot);
			n++;
		}
		else
		{
			/* carried over to the next group */
			ExecCopySlot(state->pivot, slot);
			compspill_incsort_batch_finish(&state->full);
			state->status = INCSORT_READ_FULL;
			return;
		}

		if (n > COMPSPILL_INCSORT_MAX_FULL)
		{
			/* probably one large group: move its rows to a pre-sorted sort */
			ExecClearTuple(state->pivot);
			compspill_incsort_batch_finish(&state->full);
			state->full_remaining = n;
			compspill_incsort_to_presorted(state);
			return;
		}
	}
}

/*
 * Read the rest of a large prefix group from the child into the pre-sorted
 * sort, up to the first row of another prefix (carried over), then sort it.
 */
static void
compspill_incsort_load_prefix(CompSpillIncSortState *state)
{
	PlanState  *outer = outerPlanState(state);

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(outer);

		if (TupIsNull(slot))
		{
			state->outer_done = true;
			break;
		}
		if (!compspill_incsort_same_group(state, slot))
		{
			ExecCopySlot(state->pivot, slot);
			break;
		}
		compspill_incsort_batch_put(&state->presorted, slot);
	}
	compspill_incsort_batch_finish(&state->presorted);
	state->status = INCSORT_READ_PREFIX;
}

/*
 * Return the next row in sort order: from the group being returned, or
 * from the next group, loaded and sorted first.
 */
static TupleTableSlot *
compspill_incsort_exec(CustomScanState *node)
{
	CompSpillIncSortState *state = (CompSpillIncSortState *) node;
	EState	   *estate = node->ss.ps.state;
	ScanDirection dir = estate->es_direction;
	TupleTableSlot *slot;

	CHECK_FOR_INTERRUPTS();

	/* whatever direction we are asked for, the child is read forward */
	estate->es_direction = ForwardScanDirection;

	for (;;)
	{
		switch (state->status)
		{
			case INCSORT_LOAD_FULL:
				compspill_incsort_load_full(state);
				continue;
			case INCSORT_LOAD_PREFIX:
				compspill_incsort_load_prefix(state);
				continue;
			case INCSORT_READ_FULL:
			case INCSORT_READ_PREFIX:
				slot = compspill_incsort_batch_get(state->status == INCSORT_READ_FULL ?
												   &state->full :
												   &state->presorted);
				if (slot != NULL)
					break;
				if (state->full_remaining > 0)
					compspill_incsort_to_presorted(state);
				else if (state->outer_done)
					slot = ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
				else
					state->status = INCSORT_LOAD_FULL;
				if (slot == NULL)
					continue;
				break;
		}
		break;
	}

	estate->es_direction = dir;
	return slot;
}

/*
 * Remember the largest memory peak of a batch's sorter in its figures, so
 * that the spill's report and EXPLAIN give the node's peak.
 */
static void
compspill_incsort_keep_peak(CompSpillIncBatch *batch)
{
	if (batch->sorter)
	{
		CompSpillStats *st = CompSpillSorterStats(batch->sorter);

		st->peak_mem = Max(st->peak_mem, batch->peak_mem);
	}
}

/*
 * Fill f with what EXPLAIN prints of the node; return false if it sorted
 * no group.
 */
static bool
compspill_incsort_figures(CustomScanState *node, void *figures)
{
	CompSpillIncSortState *state = (CompSpillIncSortState *) node;
	CompSpillIncSortFigures *f = figures;
	CompSpillIncBatch *batches[2] = {&state->full, &state->presorted};

	memset(f, 0, sizeof(*f));
	f->use_tuplesort = state->use_tuplesort;
	f->full = state->full.groups;
	f->presorted = state->presorted.groups;
	if (f->full.groups == 0)
		return false;

	for (int i = 0; i < 2; i++)
	{
		CompSpillIncBatch *batch = batches[i];

		if (batch->sorter == NULL)
			continue;
		compspill_incsort_keep_peak(batch);
		f->peak_mem = Max(f->peak_mem, batch->peak_mem);
		if (CompSpillSorterSpilled(batch->sorter))
		{
			if (!f->spilled)
				f->spill = *CompSpillSorterStats(batch->sorter);
			else
				CompSpillStatsAdd(&f->spill,
								  CompSpillSorterStats(batch->sorter));
			f->spilled = true;
		}
	}
	return true;
}

/*
 * The execution ends (in a parallel worker, before the leader is told the
 * worker is done): publish the worker's figures.
 */
static void
compspill_incsort_shutdown(CustomScanState *node)
{
	CompSpillNodeFiguresPublish(&((CompSpillIncSortState *) node)->figures,
								node);
}

/*
 * Shut the node down: release both sorts and the child.
 */
static void
compspill_incsort_end(CustomScanState *node)
{
	CompSpillIncSortState *state = (CompSpillIncSortState *) node;
	CompSpillIncBatch *batches[2] = {&state->full, &state->presorted};

	/* a worker whose execution did not reach shutdown publishes here */
	CompSpillNodeFiguresEnd(&state->figures, node);
	for (int i = 0; i < 2; i++)
	{
		CompSpillIncBatch *batch = batches[i];

		if (batch->sorter)
		{
			compspill_incsort_keep_peak(batch);
			CompSpillSorterEnd(batch->sorter);
			batch->sorter = NULL;
		}
		if (batch->tuplesort)
		{
			tuplesort_end(batch->tuplesort);
			batch->tuplesort = NULL;
		}
		if (batch->ts_slot)
			ExecDropSingleTupleTableSlot(batch->ts_slot);
	}
	ExecDropSingleTupleTableSlot(state->pivot);
	ExecDropSingleTupleTableSlot(state->transfer);
	ExecEndNode(outerPlanState(node));
}

/*
 * Rescan: start again from the first group, reading the child again, as
 * native incremental sort does even when asked to rewind.  The sorts are
 * kept, reset when their next group starts.
 */
static void
compspill_incsort_rescan(CustomScanState *node)
{
	CompSpillIncSortState *state = (CompSpillIncSortState *) node;
	PlanState  *outer = outerPlanState(node);

	ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
	ExecClearTuple(state->pivot);
	ExecClearTuple(state->transfer);
	if (state->full.ts_slot)
		ExecClearTuple(state->full.ts_slot);
	if (state->presorted.ts_slot)
		ExecClearTuple(state->presorted.ts_slot);
	state->outer_done = false;
	state->full_remaining = 0;
	state->status = INCSORT_LOAD_FULL;

	/* with new parameters, the child rescans itself on its next call */
	if (outer->chgParam == NULL)
		ExecReScan(outer);
}

/*
 * Print the groups of each kind as native prints them, then the memory
 * peak and, if a group spilled, the spill figures of the node's sorts
 * together: the leader's, or one parallel worker's.
 */
static void
compspill_incsort_explain_figures(const void *figures, ExplainState *es)
{
	const CompSpillIncSortFigures *f = figures;
	CompSpillStats spill = f->spill;

	CompSpillExplainGroups("Full-sort", &f->full, es);
	if (f->presorted.groups > 0)
		CompSpillExplainGroups("Pre-sorted", &f->presorted, es);

	if (f->use_tuplesort)
	{
		ExplainPropertyBool("Tuplesort Fallback", true, es);
		return;
	}

	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyInteger("Peak Memory Used", "kB",
							   (f->peak_mem + 1023) / 1024, es);
	else if (f->spilled)
	{
		CompSpillExplainIndent(es);
		appendStringInfo(es->str, "Peak Memory: " INT64_FORMAT "kB\n",
						 (f->peak_mem + 1023) / 1024);
	}
	if (f->spilled)
		CompSpillExplainSpill(&spill, es);
}

/*
 * EXPLAIN: the sort and presorted keys, and with ANALYZE what the leader's
 * node and each parallel worker's did.
 */
static void
compspill_incsort_explain(CustomScanState *node, List *ancestors,
						  ExplainState *es)
{
	CompSpillIncSortState *state = (CompSpillIncSortState *) node;
	CompSpillSortSpec *spec = &state->full.spec;

	CompSpillSortKeysExplain("Sort Key", node->ss.ps.plan, spec, spec->nkeys,
							 true, ancestors, es);
	CompSpillSortKeysExplain("Presorted Key", node->ss.ps.plan, spec,
							 state->npresorted, false, ancestors, es);
	CompSpillNodeFiguresExplain(&state->figures, node, es);
}
