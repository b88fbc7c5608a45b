/*-------------------------------------------------------------------------
 *
 * sortnode.c
 *	  The "CompSpill Sort" CustomScan: plan node construction, executor
 *	  callbacks and EXPLAIN output.
 *
 * The node stands where a Sort stood.  It keeps the Sort's whole Plan
 * header (costs, node id, parameter sets, targetlist of OUTER_VAR
 * references), its child on lefttree, and the sort keys in custom_private
 * as plain lists so that the node survives copyObject and nodeToString.
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
 * sort's figures when its execution ends (shared/workers.c), and the
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

#include "access/parallel.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "base/spillstats.h"
#include "nodes/explain.h"
#include "nodes/nodenames.h"
#include "nodes/sortnode.h"
#include "shared/workers.h"
#include "sort/sorter.h"

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
	bool		last_spilled;
	int64		last_space;
	CompSpillStats last_stats;
	TuplesortInstrumentation last_ts;

	/* parallel workers: the leader's watch, the worker's publication */
	CompSpillWorkersWatch *watch;
	bool		published;
} CompSpillSortState;

/*
 * What a parallel worker's node publishes for the leader's EXPLAIN: its
 * last sort's figures, as the node prints its own.
 */
typedef struct CompSpillSortFigures
{
	bool		use_tuplesort;	/* the tuplesort fallback sorted */
	TuplesortInstrumentation ts;	/* its figures */
	bool		spilled;		/* else the compspill sorter's */
	int64		space;
	CompSpillStats stats;
} CompSpillSortFigures;

StaticAssertDecl(sizeof(CompSpillSortFigures) <= COMPSPILL_WORKER_FIGURES_SIZE,
				 "sort figures do not fit in a worker entry");

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
	CustomScan *cscan = makeNode(CustomScan);
	List	   *colidx = NIL;
	List	   *sortops = NIL;
	List	   *collations = NIL;
	List	   *nullsfirst = NIL;
	int			i;

	/* the whole Plan header, then make it a CustomScan again */
	cscan->scan.plan = sort->plan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN |
		CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_scan_tlist = NIL;
	cscan->custom_relids = NULL;
	cscan->methods = &compspill_scan_methods;

	for (i = 0; i < sort->numCols; i++)
	{
		colidx = lappend_int(colidx, sort->sortColIdx[i]);
		sortops = lappend_oid(sortops, sort->sortOperators[i]);
		collations = lappend_oid(collations, sort->collations[i]);
		nullsfirst = lappend_int(nullsfirst, sort->nullsFirst[i] ? 1 : 0);
	}
	cscan->custom_private = list_make4(colidx, sortops, collations,
									   nullsfirst);

	return (Plan *) cscan;
}

/*
 * Allocate the node's executor state.
 */
static Node *
compspill_create_state(CustomScan *cscan pg_attribute_unused())
{
	CompSpillSortState *state = palloc0(sizeof(CompSpillSortState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &compspill_exec_methods;
	return (Node *) state;
}

/*
 * Read the sort keys back out of custom_private.
 */
static void
compspill_read_spec(CustomScan *cscan, CompSpillSortSpec *spec)
{
	List	   *colidx = linitial(cscan->custom_private);
	List	   *sortops = lsecond(cscan->custom_private);
	List	   *collations = lthird(cscan->custom_private);
	List	   *nullsfirst = lfourth(cscan->custom_private);
	int			n = list_length(colidx);
	int			i;

	spec->nkeys = n;
	spec->attnums = palloc(sizeof(AttrNumber) * n);
	spec->sortops = palloc(sizeof(Oid) * n);
	spec->collations = palloc(sizeof(Oid) * n);
	spec->nulls_first = palloc(sizeof(bool) * n);
	for (i = 0; i < n; i++)
	{
		spec->attnums[i] = (AttrNumber) list_nth_int(colidx, i);
		spec->sortops[i] = list_nth_oid(sortops, i);
		spec->collations[i] = list_nth_oid(collations, i);
		spec->nulls_first[i] = list_nth_int(nullsfirst, i) != 0;
	}
}

/*
 * Start the node: initialise the child and choose the sort path.
 */
static void
compspill_begin(CustomScanState *node, EState *estate, int eflags)
{
	CompSpillSortState *state = (CompSpillSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	compspill_read_spec(cscan, &state->spec);
	state->spec.est_rows = outerPlan(cscan)->plan_rows;
	state->spec.est_width = outerPlan(cscan)->plan_width;
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

	/* in the leader of EXPLAIN ANALYZE, watch for the workers' figures */
	state->watch = CompSpillWorkersWatchBegin(&node->ss.ps);
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
 * Remember the figures of the current sort, then release it.
 */
static void
compspill_release(CompSpillSortState *state)
{
	if (state->sorter)
	{
		state->have_last = true;
		state->last_spilled = CompSpillSorterSpilled(state->sorter);
		state->last_space = CompSpillSorterSpaceUsed(state->sorter);
		state->last_stats = *CompSpillSorterStats(state->sorter);
		CompSpillSorterEnd(state->sorter);
		state->sorter = NULL;
	}
	if (state->tuplesort)
	{
		state->have_last = true;
		tuplesort_get_stats(state->tuplesort, &state->last_ts);
		tuplesort_end(state->tuplesort);
		state->tuplesort = NULL;
	}
	state->sort_done = false;
}

/*
 * Fill f with the figures of the current or the last sort; return false
 * if the node has not sorted.
 */
static bool
compspill_figures(CompSpillSortState *state, CompSpillSortFigures *f)
{
	memset(f, 0, sizeof(*f));
	f->use_tuplesort = state->use_tuplesort;
	if (state->tuplesort)
		tuplesort_get_stats(state->tuplesort, &f->ts);
	else if (state->sorter)
	{
		f->spilled = CompSpillSorterSpilled(state->sorter);
		f->space = CompSpillSorterSpaceUsed(state->sorter);
		f->stats = *CompSpillSorterStats(state->sorter);
	}
	else if (!state->have_last)
		return false;
	else if (state->use_tuplesort)
		f->ts = state->last_ts;
	else
	{
		f->spilled = state->last_spilled;
		f->space = state->last_space;
		f->stats = state->last_stats;
	}
	return true;
}

/*
 * In a parallel worker, publish the sort's figures for the leader's
 * EXPLAIN, once.
 */
static void
compspill_publish(CompSpillSortState *state)
{
	CompSpillSortFigures f;

	if (!IsParallelWorker() || state->published)
		return;
	state->published = true;
	if (compspill_figures(state, &f))
		CompSpillWorkersPublish(&state->css.ss.ps, &f, sizeof(f));
}

/*
 * The execution ends (in a parallel worker, before the leader is told the
 * worker is done): publish the worker's figures.
 */
static void
compspill_shutdown(CustomScanState *node)
{
	compspill_publish((CompSpillSortState *) node);
}

/*
 * Shut the node down.
 */
static void
compspill_end(CustomScanState *node)
{
	CompSpillSortState *state = (CompSpillSortState *) node;

	/* a worker whose execution did not reach shutdown */
	compspill_publish(state);
	CompSpillWorkersWatchEnd(state->watch);
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
 * Deparse the sort keys the way EXPLAIN prints a native Sort's keys.
 */
static void
compspill_explain_keys(CompSpillSortState *state, List *ancestors,
					   ExplainState *es)
{
	Plan	   *plan = state->css.ss.ps.plan;
	CompSpillSortSpec *spec = &state->spec;
	List	   *context;
	List	   *keys = NIL;
	bool		useprefix;
	StringInfoData buf;
	int			i;

	if (spec->nkeys <= 0)
		return;

	initStringInfo(&buf);
	context = set_deparse_context_plan(es->deparse_cxt, plan, ancestors);
	useprefix = (CompSpillExplainRtableSize(es) > 1 || es->verbose);

	for (i = 0; i < spec->nkeys; i++)
	{
		TargetEntry *tle = get_tle_by_resno(plan->targetlist,
											spec->attnums[i]);
		Oid			keytype;
		Oid			collation = spec->collations[i];
		Oid			sortop = spec->sortops[i];
		TypeCacheEntry *typentry;
		bool		reverse = false;

		if (tle == NULL)
			elog(ERROR, "no tlist entry for sort key %d", spec->attnums[i]);

		resetStringInfo(&buf);
		appendStringInfoString(&buf,
							   deparse_expression((Node *) tle->expr, context,
												  useprefix, true));

		/* a collation other than the type's own is shown */
		keytype = exprType((Node *) tle->expr);
		if (OidIsValid(collation) && collation != get_typcollation(keytype))
		{
			char	   *collname = get_collation_name(collation);

			if (collname == NULL)
				elog(ERROR, "cache lookup failed for collation %u", collation);
			appendStringInfo(&buf, " COLLATE %s", quote_identifier(collname));
		}

		/* then the direction, or the operator when it is not < or > */
		typentry = lookup_type_cache(keytype,
									 TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
		if (sortop == typentry->gt_opr)
		{
			appendStringInfoString(&buf, " DESC");
			reverse = true;
		}
		else if (sortop != typentry->lt_opr)
		{
			char	   *opname = get_opname(sortop);

			if (opname == NULL)
				elog(ERROR, "cache lookup failed for operator %u", sortop);
			appendStringInfo(&buf, " USING %s", opname);
			(void) get_equality_op_for_ordering_op(sortop, &reverse);
		}

		/* and the null placement when it is not the default for that order */
		if (spec->nulls_first[i] && !reverse)
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!spec->nulls_first[i] && reverse)
			appendStringInfoString(&buf, " NULLS LAST");

		keys = lappend(keys, pstrdup(buf.data));
	}

	ExplainPropertyList("Sort Key", keys, es);
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
 * Print what one parallel worker's sort did, as the node prints its own.
 */
static void
compspill_explain_worker(const void *figures, ExplainState *es)
{
	const CompSpillSortFigures *f = figures;
	CompSpillSortFigures copy = *f;

	if (f->use_tuplesort)
		compspill_explain_tuplesort(&copy.ts, es);
	else
		compspill_explain_sorter(f->spilled, f->space, &copy.stats, es);
}

/*
 * EXPLAIN: the sort keys, and with ANALYZE how the sort went, in the
 * leader and in each parallel worker.
 */
static void
compspill_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	CompSpillSortState *state = (CompSpillSortState *) node;
	CompSpillSortFigures f;

	compspill_explain_keys(state, ancestors, es);

	if (!es->analyze)
		return;

	if (state->tuplesort)
	{
		TuplesortInstrumentation ts;

		tuplesort_get_stats(state->tuplesort, &ts);
		compspill_explain_tuplesort(&ts, es);
	}
	else if (state->sorter)
		compspill_explain_sorter(CompSpillSorterSpilled(state->sorter),
								 CompSpillSorterSpaceUsed(state->sorter),
								 CompSpillSorterStats(state->sorter), es);
	else if (state->have_last && state->use_tuplesort)
		compspill_explain_tuplesort(&state->last_ts, es);
	else if (state->have_last)
		compspill_explain_sorter(state->last_spilled, state->last_space,
								 &state->last_stats, es);

	CompSpillExplainWorkers(&node->ss.ps, state->watch, &f, sizeof(f),
							compspill_explain_worker, es);
}
