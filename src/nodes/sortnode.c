/*-------------------------------------------------------------------------
 *
 * sortnode.c
 *	  The "CompSpill Sort" CustomScan: plan node construction, executor
 *	  callbacks and EXPLAIN output.
 *
 * The node stands where a Sort stood.  It keeps the Sort's whole Plan
 * header (costs, node id, parameter sets, targetlist of OUTER_VAR
 * references), its child on lefttree, and the sort keys in custom_private
 * as plain lists so that the node survives copyObject and nodeToString
 * (customscan.c, sortkeys.c).
 *
 * At run time the node drains its child into a CompSpillSorter and returns
 * the sorted rows, forward, or in any direction with mark and restore when
 * the parent asked for them (merge join inners, scrollable cursors).  Only
 * when compspill.enabled was turned off after the plan was made (a cached
 * plan keeps the node) does it sort with PostgreSQL's own tuplesort.
 *
 * A rescan behaves as native Sort's: the sorted rows are read again only
 * when the parent said it would rescan (EXEC_FLAG_REWIND) or may move
 * backward or restore; otherwise the child is read and sorted again, so
 * that a volatile child gives fresh rows.
 *
 * Under Gather or Gather Merge, each parallel worker's node publishes its
 * sort's figures when its execution ends (customscan.c), and the
 * leader's EXPLAIN ANALYZE prints them per worker, where native Sort
 * prints its per-worker "Sort Method" lines; the node's own lines are the
 * leader's sort only, as native Sort's are.
 *
 * The sorter hands out rows either in a minimal-tuple slot (in-memory sort)
 * or in a virtual slot whose values point into a decoded block (merge), so
 * the node declares its result slot type as not fixed.
 *
 * IDENTIFICATION
 *	  src/nodes/sortnode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "base/spillstats.h"
#include "nodes/customscan.h"
#include "nodes/explain.h"
#include "nodes/extensible.h"
#include "nodes/nodenames.h"
#include "nodes/sortkeys.h"
#include "nodes/sortnode.h"
#include "shared/workers.h"
#include "sort/sorter.h"
#include "utils/tuplesort.h"

/*
 * What EXPLAIN ANALYZE prints of the node's sort; what a parallel worker's
 * node publishes for the leader.
 */
typedef struct CompSpillSortFigures
{
	bool		use_tuplesort;	/* the tuplesort fallback sorted */
	TuplesortInstrumentation ts;	/* its figures */
	bool		spilled;		/* else the compspill sorter's */
	int64		space;
	CompSpillMergedFrames merged;	/* random access: the merged rows' frames */
	CompSpillStats stats;
} CompSpillSortFigures;

StaticAssertDecl(sizeof(CompSpillSortFigures) <= COMPSPILL_WORKER_FIGURES_SIZE,
				 "sort figures do not fit in a worker entry");

typedef struct CompSpillSortState
{
	CustomScanState css;		/* must be first */
	CompSpillSortSpec spec;		/* sort keys, from custom_private */
	CompSpillSettings settings; /* captured at executor start */
	bool		use_tuplesort;	/* sort with PostgreSQL's tuplesort */
	bool		random_access;	/* rewind, backward, mark: keep the rows */
	bool		sort_done;		/* input consumed and sorted */
	CompSpillSorter *sorter;	/* compspill path */
	Tuplesortstate *tuplesort;	/* tuplesort path */
	TupleTableSlot *ts_slot;	/* result slot of the tuplesort path */

	/* figures of the last finished sort, kept for EXPLAIN after a rescan */
	bool		have_last;
	CompSpillSortFigures last;

	/* EXPLAIN ANALYZE's figures, the leader's and its workers' */
	CompSpillNodeFigures figures;
} CompSpillSortState;

static Node *compspill_create_state(CustomScan *cscan);
static void compspill_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *compspill_exec(CustomScanState *node);
static void compspill_end(CustomScanState *node);
static void compspill_shutdown(CustomScanState *node);
static void compspill_rescan(CustomScanState *node);
static void compspill_mark(CustomScanState *node);
static void compspill_restore(CustomScanState *node);
static void compspill_explain(CustomScanState *node, List *ancestors,
							  ExplainState *es);
static bool compspill_figures(CustomScanState *node, void *figures);
static void compspill_explain_figures(const void *figures, ExplainState *es);

static const CustomScanMethods compspill_scan_methods = {
	.CustomName = COMPSPILL_SORT_NAME,
	.CreateCustomScanState = compspill_create_state,
};

static const CustomExecMethods compspill_exec_methods = {
	.CustomName = COMPSPILL_SORT_NAME,
	.BeginCustomScan = compspill_begin,
	.ExecCustomScan = compspill_exec,
	.EndCustomScan = compspill_end,
	.ReScanCustomScan = compspill_rescan,
	.MarkPosCustomScan = compspill_mark,
	.RestrPosCustomScan = compspill_restore,
	.ExplainCustomScan = compspill_explain,
	.ShutdownCustomScan = compspill_shutdown,
};

/*
 * Register the node's methods, so plans naming it can be read back.
 */
void
CompSpillRegisterSortNode(void)
{
	RegisterCustomScanMethods(&compspill_scan_methods);
}

/*
 * Build a CustomScan that does the work of the given Sort.
 */
Plan *
CompSpillMakeSortNode(Sort *sort)
{
	return (Plan *) CompSpillMakeCustomScan(&sort->plan,
											CUSTOMPATH_SUPPORT_BACKWARD_SCAN |
											CUSTOMPATH_SUPPORT_MARK_RESTORE,
											CompSpillSortKeysPlan(sort),
											&compspill_scan_methods);
}

/*
 * Allocate the node's executor state.
 */
static Node *
compspill_create_state(CustomScan *cscan pg_attribute_unused())
{
	return CompSpillNewScanState(sizeof(CompSpillSortState),
								 &compspill_exec_methods);
}

/*
 * Start the node: initialise the child and choose the sort path.
 */
static void
compspill_begin(CustomScanState *node, EState *estate, int eflags)
{
	CompSpillSortState *state = (CompSpillSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	CompSpillSortKeysRead(cscan, 0, &state->spec);
	CompSpillCaptureSettings(&state->settings, estate);

	/*
	 * A cached plan may outlive a change of compspill.enabled, which is
	 * honoured here.  Backward scans and mark/restore need the sorted rows
	 * by position; a rewind only needs them kept.
	 */
	state->use_tuplesort = !compspill_enabled;
	state->random_access =
		(eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
	state->spec.random_access =
		(eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;

	/* the child is read once, forward, as under a native Sort */
	eflags &= ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	outerPlanState(node) = ExecInitNode(outerPlan(cscan), estate, eflags);

	/*
	 * Rows are returned as they are, never projected; and the slot they come
	 * in is a minimal-tuple slot or a virtual one, so parents must not
	 * assume its type.
	 */
	node->ss.ps.ps_ProjInfo = NULL;
	node->ss.ps.resultops = &TTSOpsMinimalTuple;
	node->ss.ps.resultopsfixed = false;
	node->ss.ps.resultopsset = true;

	if (state->use_tuplesort)
		state->ts_slot = ExecAllocTableSlot(&estate->es_tupleTable,
											ExecGetResultType(&node->ss.ps),
											&TTSOpsMinimalTuple);

	CompSpillNodeFiguresBegin(&state->figures, node,
							  sizeof(CompSpillSortFigures),
							  compspill_figures, compspill_explain_figures);
}

/*
 * Drain the child into the chosen sorter and finish the sort.
 */
static void
compspill_do_sort(CompSpillSortState *state)
{
	PlanState  *outer = outerPlanState(state);
	EState	   *estate = state->css.ss.ps.state;
	TupleDesc	tupdesc = ExecGetResultType(outer);
	CompSpillSortSpec *spec = &state->spec;
	ScanDirection dir = estate->es_direction;

	/* whatever direction we are asked for, the child is read forward */
	estate->es_direction = ForwardScanDirection;

	if (state->use_tuplesort)
	{
		state->tuplesort = tuplesort_begin_heap(tupdesc, spec->nkeys,
												spec->attnums, spec->sortops,
												spec->collations,
												spec->nulls_first, work_mem,
												NULL,
												state->random_access ?
												TUPLESORT_RANDOMACCESS :
												TUPLESORT_NONE);
		for (;;)
		{
			TupleTableSlot *slot = ExecProcNode(outer);

			if (TupIsNull(slot))
				break;
			tuplesort_puttupleslot(state->tuplesort, slot);
		}
		tuplesort_performsort(state->tuplesort);
	}
	else
	{
		state->sorter = CompSpillSorterBegin(tupdesc, spec, work_mem,
											 &state->settings);
		for (;;)
		{
			TupleTableSlot *slot = ExecProcNode(outer);

			if (TupIsNull(slot))
				break;
			CompSpillSorterPut(state->sorter, slot);
		}
		CompSpillSorterFinish(state->sorter);
	}

	estate->es_direction = dir;
	state->sort_done = true;
}

/*
 * Return the next sorted row, sorting first if not done yet.
 */
static TupleTableSlot *
compspill_exec(CustomScanState *node)
{
	CompSpillSortState *state = (CompSpillSortState *) node;
	TupleTableSlot *slot;

	if (!state->sort_done)
		compspill_do_sort(state);

	if (state->use_tuplesort)
	{
		bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);

		(void) tuplesort_gettupleslot(state->tuplesort, forward, false,
									  state->ts_slot, NULL);
		return state->ts_slot;
	}

	slot = CompSpillSorterGet(state->sorter,
							  ScanDirectionIsForward(node->ss.ps.state->es_direction));
	if (slot == NULL)
		return ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
	return slot;
}

/*
 * Fill figures with those of the current or the last sort; return false
 * if the node has not sorted.
 */
static bool
compspill_figures(CustomScanState *node, void *figures)
{
	CompSpillSortState *state = (CompSpillSortState *) node;
	CompSpillSortFigures *f = figures;

	if (state->tuplesort == NULL && state->sorter == NULL)
	{
		if (state->have_last)
			*f = state->last;
		return state->have_last;
	}
	memset(f, 0, sizeof(*f));
	f->use_tuplesort = state->use_tuplesort;
	if (state->tuplesort)
		tuplesort_get_stats(state->tuplesort, &f->ts);
	else
	{
		f->spilled = CompSpillSorterSpilled(state->sorter);
		f->space = CompSpillSorterSpaceUsed(state->sorter);
		f->merged = CompSpillSorterMergedFrames(state->sorter);
		f->stats = *CompSpillSorterStats(state->sorter);
	}
	return true;
}

/*
 * Remember the figures of the current sort, then release it.
 */
static void
compspill_release(CompSpillSortState *state)
{
	if (state->sorter || state->tuplesort)
		state->have_last = compspill_figures(&state->css, &state->last);
	if (state->sorter)
	{
		CompSpillSorterEnd(state->sorter);
		state->sorter = NULL;
	}
	if (state->tuplesort)
	{
		tuplesort_end(state->tuplesort);
		state->tuplesort = NULL;
	}
	state->sort_done = false;
}

/*
 * The execution ends (in a parallel worker, before the leader is told the
 * worker is done): publish the worker's figures.
 */
static void
compspill_shutdown(CustomScanState *node)
{
	CompSpillNodeFiguresPublish(&((CompSpillSortState *) node)->figures, node);
}

/*
 * Shut the node down.
 */
static void
compspill_end(CustomScanState *node)
{
	CompSpillSortState *state = (CompSpillSortState *) node;

	/* a worker whose execution did not reach shutdown publishes here */
	CompSpillNodeFiguresEnd(&state->figures, node);
	if (state->ts_slot)
		ExecClearTuple(state->ts_slot);
	compspill_release(state);
	ExecEndNode(outerPlanState(node));
}

/*
 * Rescan: rewind the sorted output if the parent said it would rescan or
 * move around in it, else sort again, as native Sort does; sort again
 * whenever the child's parameters changed.
 */
static void
compspill_rescan(CustomScanState *node)
{
	CompSpillSortState *state = (CompSpillSortState *) node;
	PlanState  *outer = outerPlanState(node);

	/* nothing read yet: the child will rescan itself if it must */
	if (!state->sort_done)
		return;

	if (state->ts_slot)
		ExecClearTuple(state->ts_slot);

	if (outer->chgParam != NULL || !state->random_access)
	{
		compspill_release(state);
		/* with new parameters, the child rescans itself on its next call */
		if (outer->chgParam == NULL)
			ExecReScan(outer);
	}
	else if (state->use_tuplesort)
		tuplesort_rescan(state->tuplesort);
	else
		CompSpillSorterRewind(state->sorter);
}

/*
 * Mark the current position.
 */
static void
compspill_mark(CustomScanState *node)
{
	CompSpillSortState *state = (CompSpillSortState *) node;

	if (state->tuplesort)
		tuplesort_markpos(state->tuplesort);
	else if (state->sorter)
		CompSpillSorterMarkPos(state->sorter);
}

/*
 * Return to the marked position.
 */
static void
compspill_restore(CustomScanState *node)
{
	CompSpillSortState *state = (CompSpillSortState *) node;

	if (state->tuplesort)
		tuplesort_restorepos(state->tuplesort);
	else if (state->sorter)
		CompSpillSorterRestorePos(state->sorter);
}

/*
 * Print how the tuplesort fallback sorted, as a native Sort does.
 */
static void
compspill_explain_tuplesort(TuplesortInstrumentation *ts, ExplainState *es)
{
	const char *method = tuplesort_method_name(ts->sortMethod);
	const char *spacetype = tuplesort_space_type_name(ts->spaceType);

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		CompSpillExplainIndent(es);
		appendStringInfo(es->str, "Sort Method: %s  %s: " INT64_FORMAT "kB  (tuplesort)\n",
						 method, spacetype, ts->spaceUsed);
	}
	else
	{
		ExplainPropertyText("Sort Method", method, es);
		ExplainPropertyInteger("Sort Space Used", "kB", ts->spaceUsed, es);
		ExplainPropertyText("Sort Space Type", spacetype, es);
		ExplainPropertyBool("Tuplesort Fallback", true, es);
	}
}

/*
 * Print the compspill sorter's method and memory, then its spill figures.
 */
static void
compspill_explain_sorter(bool spilled, int64 space, CompSpillStats *st,
						 ExplainState *es)
{
	int64		mem_kb = (space + 1023) / 1024;
	int64		written_kb = (st->bytes_written + 1023) / 1024;

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		CompSpillExplainIndent(es);
		if (!spilled)
			appendStringInfo(es->str, "Sort Method: quicksort  Memory: " INT64_FORMAT "kB\n",
							 mem_kb);
		else
			appendStringInfo(es->str,
							 "Sort Method: external merge  Memory: " INT64_FORMAT "kB  Disk: " INT64_FORMAT "kB\n",
							 mem_kb, written_kb);
	}
	else
	{
		ExplainPropertyText("Sort Method", spilled ? "external merge" : "quicksort",
							es);
		ExplainPropertyInteger("Sort Space Used", "kB",
							   spilled ? written_kb : mem_kb, es);
		ExplainPropertyText("Sort Space Type", spilled ? "Disk" : "Memory", es);
		ExplainPropertyInteger("Peak Memory Used", "kB", mem_kb, es);
	}
	if (spilled)
		CompSpillExplainSpill(st, es);
}

/*
 * Print how the leader's or one parallel worker's sort went.
 */
static void
compspill_explain_figures(const void *figures, ExplainState *es)
{
	CompSpillSortFigures f = *(const CompSpillSortFigures *) figures;

	if (f.use_tuplesort)
		compspill_explain_tuplesort(&f.ts, es);
	else
		compspill_explain_sorter(f.spilled, f.space, &f.stats, es);

	/* VERBOSE: a sort with random access, the frames its merged rows took */
	if (es->verbose && f.merged != COMPSPILL_MERGED_NONE)
		ExplainPropertyText("Random Access Frames",
							f.merged == COMPSPILL_MERGED_ROW_FRAMES ?
							"row" : "column", es);
}

/*
 * EXPLAIN: the sort keys, and with ANALYZE how the sort went, in the
 * leader and in each parallel worker.
 */
static void
compspill_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	CompSpillSortState *state = (CompSpillSortState *) node;

	CompSpillSortKeysExplain("Sort Key", node->ss.ps.plan, &state->spec,
							 state->spec.nkeys, true, ancestors, es);
	CompSpillNodeFiguresExplain(&state->figures, node, es);
}
