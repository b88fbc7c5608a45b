/*-------------------------------------------------------------------------
 *
 * recursivenode.c
 *	  The "CompSpill Recursive Union" and "CompSpill WorkTable Scan"
 *	  CustomScans: a WITH RECURSIVE query's working and intermediate
 *	  tables in one compressed store.
 *
 * A recursive CTE runs its non-recursive term once, then its recursive
 * term again and again, each time over the rows the previous time
 * produced (the working table), until a time produces none.  PostgreSQL's
 * RecursiveUnion keeps two tuplestores, the working table being read by
 * the WorkTableScan of the recursive term and the intermediate table
 * collecting what the term returns, and swaps them between iterations.
 * The WorkTableScan finds its RecursiveUnion through the executor
 * parameter the plan reserves for the pair (wtParam).
 *
 * The pair here does the same with a single CompSpillStore (store.c):
 * every row the union returns is appended to it, and the working table
 * is the stretch of rows [work_start, work_end) the previous iteration
 * appended.  The scan reads that stretch with the store's one read
 * position, stopping at work_end while the current iteration appends
 * after it; a rescan of the scan (the recursive term's nested loop, say)
 * seeks back to work_start.  When an iteration ends, the stretch it
 * appended becomes the working table and the rows before it are
 * forgotten: freed while the store is in memory, their file extents given
 * back for reuse once it has spilled, so that the store holds about what
 * native's two tuplestores hold, in one temp file, as one spill (one line
 * of compspill_stats, one log line, one claim on the temp-space cap).
 * Rows read by the scan are copies: the union appends to the same store
 * while the recursive term still holds the row it read.
 *
 * UNION (without ALL) drops rows already seen through a hash table, as
 * native does, built the same way; it stays in memory, as native's.
 *
 * Both nodes of a pair must be compspill's or neither (the scan reads the
 * union's state through the parameter), which the plan rewrite sees to.
 * When compspill.enabled is off at executor start (a cached plan), the
 * union keeps native's two tuplestores and the scan reads them.
 *
 * The scan is a scan node of the CTE's range table entry, as the CTE
 * Scan node is (ctenode.c): rowscan.c makes its scan tuple, refers its
 * quals and targetlist to it, and answers EvalPlanQual rechecks as a
 * native scan does.  A recursive CTE with a
 * column of type record (the "*DEPTH*" of SEARCH BREADTH FIRST) stays
 * native: EXPLAIN VERBOSE names a field of such a column from the plan of
 * the native node only (see CompSpillHasRecordColumn).
 *
 * IDENTIFICATION
 *	  src/nodes/recursivenode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "base/spillstats.h"
#include "nodes/explain.h"
#include "nodes/nodenames.h"
#include "nodes/recursivenode.h"
#include "nodes/rowscan.h"
#include "sort/store.h"

/* the store's one read position: the work table scan's */
#define COMPSPILL_WT_POS	0

typedef struct CompSpillRecursiveState
{
	CustomScanState css;		/* must be first */
	int			wt_param;		/* the pair's executor parameter */
	int			num_cols;		/* UNION: columns compared, else 0 */
	AttrNumber *dup_cols;
	Oid		   *dup_ops;
	Oid		   *dup_colls;
	long		num_groups;
	bool		native;			/* compspill.enabled was off at start */
	bool		recursing;		/* the non-recursive term is done */
	bool		intermediate_empty; /* this iteration returned no row */

	/* compspill's: the store, and where the working table is in it */
	CompSpillSettings settings;
	CompSpillStore *store;		/* made on first use */
	int64		nput;			/* rows put */
	int64		work_start;
	int64		work_end;
	bool		have_last;		/* figures of the store a rescan ended */
	bool		last_spilled;
	CompSpillStats last_stats;

	/* native's */
	Tuplestorestate *working_table;
	Tuplestorestate *intermediate_table;

	/* UNION */
	Oid		   *eqfuncoids;
	FmgrInfo   *hashfunctions;
	TupleHashTable hashtable;
	MemoryContext temp_cxt;
	MemoryContext table_cxt;
} CompSpillRecursiveState;

typedef struct CompSpillWorkTableState
{
	CustomScanState css;		/* must be first */
	int			wt_param;
	Index		rti;			/* the CTE's range table entry */
	CompSpillRecursiveState *ru;	/* found on first read */
	CompSpillRowScan rs;		/* its rows and scan tuples */
	bool		projection_ready;	/* the projection compiled */
} CompSpillWorkTableState;

static Node *compspill_ru_create_state(CustomScan *cscan);
static void compspill_ru_begin(CustomScanState *node, EState *estate,
							   int eflags);
static TupleTableSlot *compspill_ru_exec(CustomScanState *node);
static void compspill_ru_end(CustomScanState *node);
static void compspill_ru_rescan(CustomScanState *node);
static void compspill_ru_explain(CustomScanState *node, List *ancestors,
								 ExplainState *es);
static Node *compspill_wt_create_state(CustomScan *cscan);
static void compspill_wt_begin(CustomScanState *node, EState *estate,
							   int eflags);
static TupleTableSlot *compspill_wt_exec(CustomScanState *node);
static void compspill_wt_end(CustomScanState *node);
static void compspill_wt_rescan(CustomScanState *node);
static void compspill_wt_explain(CustomScanState *node, List *ancestors,
								 ExplainState *es);

static const CustomScanMethods compspill_ru_scan_methods = {
	.CustomName = COMPSPILL_RECURSIVE_UNION_NAME,
	.CreateCustomScanState = compspill_ru_create_state,
};

static const CustomExecMethods compspill_ru_exec_methods = {
	.CustomName = COMPSPILL_RECURSIVE_UNION_NAME,
	.BeginCustomScan = compspill_ru_begin,
	.ExecCustomScan = compspill_ru_exec,
	.EndCustomScan = compspill_ru_end,
	.ReScanCustomScan = compspill_ru_rescan,
	.ExplainCustomScan = compspill_ru_explain,
};

static const CustomScanMethods compspill_wt_scan_methods = {
	.CustomName = COMPSPILL_WORKTABLE_NAME,
	.CreateCustomScanState = compspill_wt_create_state,
};

static const CustomExecMethods compspill_wt_exec_methods = {
	.CustomName = COMPSPILL_WORKTABLE_NAME,
	.BeginCustomScan = compspill_wt_begin,
	.ExecCustomScan = compspill_wt_exec,
	.EndCustomScan = compspill_wt_end,
	.ReScanCustomScan = compspill_wt_rescan,
	.ExplainCustomScan = compspill_wt_explain,
};

/*
 * Register both nodes' methods, so plans naming them can be read back.
 */
void
CompSpillRegisterRecursiveNodes(void)
{
	RegisterCustomScanMethods(&compspill_ru_scan_methods);
	RegisterCustomScanMethods(&compspill_wt_scan_methods);
}

/*
 * Build a CustomScan that does the work of the given RecursiveUnion; its
 * two terms stay on lefttree and righttree.
 */
Plan *
CompSpillMakeRecursiveUnionNode(RecursiveUnion *ru)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *cols = NIL;
	List	   *ops = NIL;
	List	   *colls = NIL;

	for (int i = 0; i < ru->numCols; i++)
	{
		cols = lappend_int(cols, ru->dupColIdx[i]);
		ops = lappend_oid(ops, ru->dupOperators[i]);
		colls = lappend_oid(colls, ru->dupCollations[i]);
	}

	/* the whole Plan header, then make it a CustomScan again */
	cscan->scan.plan = ru->plan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private = list_make5(makeInteger(ru->wtParam),
									   makeInteger((int) Min(ru->numGroups,
															 (long) INT_MAX)),
									   cols, ops, colls);
	cscan->custom_scan_tlist = NIL;
	cscan->custom_relids = NULL;
	cscan->methods = &compspill_ru_scan_methods;

	return (Plan *) cscan;
}

/*
 * Build a CustomScan that does the work of the given WorkTableScan of the
 * recursive union ru (not yet replaced).
 */
Plan *
CompSpillMakeWorkTableNode(WorkTableScan *wts, RecursiveUnion *ru)
{
	CustomScan *cscan = makeNode(CustomScan);
	Index		rti = wts->scan.scanrelid;
	List	   *scan_tlist = NIL;
	ListCell   *lc;

	/* one entry per column of the work table, the union's output */
	foreach(lc, ru->plan.targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Node	   *expr = (Node *) tle->expr;
		Var		   *var;

		var = makeVar(rti, tle->resno, exprType(expr), exprTypmod(expr),
					  exprCollation(expr), 0);
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) var, tle->resno, NULL,
											 false));
	}

	cscan->scan.plan = wts->scan.plan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private = list_make2(makeInteger(wts->wtParam),
									   makeInteger((int) rti));
	cscan->methods = &compspill_wt_scan_methods;
	CompSpillRowScanPlan(cscan, rti, scan_tlist);

	return (Plan *) cscan;
}

/*
 * Allocate the union's executor state.
 */
static Node *
compspill_ru_create_state(CustomScan *cscan pg_attribute_unused())
{
	CompSpillRecursiveState *state = palloc0(sizeof(CompSpillRecursiveState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &compspill_ru_exec_methods;
	return (Node *) state;
}

/*
 * The slot type both of a node's children return, or NULL when they may
 * differ.
 */
static const TupleTableSlotOps *
compspill_ru_child_ops(PlanState *ps)
{
	bool		outer_fixed;
	bool		inner_fixed;
	const TupleTableSlotOps *outer_ops;
	const TupleTableSlotOps *inner_ops;

	outer_ops = ExecGetResultSlotOps(outerPlanState(ps), &outer_fixed);
	inner_ops = ExecGetResultSlotOps(innerPlanState(ps), &inner_fixed);
	if (outer_fixed && inner_fixed && outer_ops == inner_ops)
		return outer_ops;
	return NULL;
}

/*
 * Start the union: publish it to its scan, start both terms and, for
 * UNION, build the hash table of the rows seen.
 */
static void
compspill_ru_begin(CustomScanState *node, EState *estate, int eflags)
{
	CompSpillRecursiveState *state = (CompSpillRecursiveState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *cols = (List *) lthird(cscan->custom_private);
	List	   *ops = (List *) lfourth(cscan->custom_private);
	List	   *colls = (List *) list_nth(cscan->custom_private, 4);
	ParamExecData *prm;
	const TupleTableSlotOps *child_ops;
	int			i;

	Assert(!(eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)));

	state->wt_param = intVal(linitial(cscan->custom_private));
	state->num_groups = intVal(lsecond(cscan->custom_private));
	state->num_cols = list_length(cols);
	state->native = !compspill_enabled;
	state->intermediate_empty = true;
	if (state->native)
	{
		state->working_table = tuplestore_begin_heap(false, false, work_mem);
		state->intermediate_table = tuplestore_begin_heap(false, false,
														  work_mem);
	}
	else
		CompSpillCaptureSettings(&state->settings, estate);

	if (state->num_cols > 0)
	{
		state->dup_cols = palloc(sizeof(AttrNumber) * state->num_cols);
		state->dup_ops = palloc(sizeof(Oid) * state->num_cols);
		state->dup_colls = palloc(sizeof(Oid) * state->num_cols);
		for (i = 0; i < state->num_cols; i++)
		{
			state->dup_cols[i] = (AttrNumber) list_nth_int(cols, i);
			state->dup_ops[i] = list_nth_oid(ops, i);
			state->dup_colls[i] = list_nth_oid(colls, i);
		}
		state->temp_cxt = AllocSetContextCreate(CurrentMemoryContext,
												"CompSpill recursive union",
												ALLOCSET_DEFAULT_SIZES);
		state->table_cxt = AllocSetContextCreate(CurrentMemoryContext,
												 "CompSpill recursive union hash table",
												 ALLOCSET_DEFAULT_SIZES);
	}

	/* the scan of the recursive term finds the union here */
	prm = &estate->es_param_exec_vals[state->wt_param];
	Assert(prm->execPlan == NULL);
	prm->value = PointerGetDatum(state);
	prm->isnull = false;

	/* rows are returned as the terms return them, no projection */
	node->ss.ps.ps_ProjInfo = NULL;
	outerPlanState(node) = ExecInitNode(outerPlan(cscan), estate, eflags);
	innerPlanState(node) = ExecInitNode(innerPlan(cscan), estate, eflags);

	child_ops = compspill_ru_child_ops(&node->ss.ps);
	node->ss.ps.resultops = child_ops ? child_ops : &TTSOpsVirtual;
	node->ss.ps.resultopsfixed = child_ops != NULL;
	node->ss.ps.resultopsset = true;

	if (state->num_cols > 0)
	{
		execTuplesHashPrepare(state->num_cols, state->dup_ops,
							  &state->eqfuncoids, &state->hashfunctions);
		state->hashtable =
			CompSpillBuildTupleHashTable(&node->ss.ps,
										 ExecGetResultType(outerPlanState(node)),
										 child_ops, state->num_cols,
										 state->dup_cols, state->eqfuncoids,
										 state->hashfunctions,
										 state->dup_colls, state->num_groups,
										 estate->es_query_cxt,
										 state->table_cxt, state->temp_cxt);
	}
}

/*
 * For UNION, whether the row was seen before (it is remembered if not).
 */
static bool
compspill_ru_seen(CompSpillRecursiveState *state, TupleTableSlot *slot)
{
	bool		isnew;

	if (state->num_cols == 0)
		return false;
	LookupTupleHashEntry(state->hashtable, slot, &isnew, NULL);
	MemoryContextReset(state->temp_cxt);
	return !isnew;
}

/*
 * Keep a row the union returns: in the working table while the
 * non-recursive term runs, then in the intermediate table.
 */
static void
compspill_ru_put(CompSpillRecursiveState *state, TupleTableSlot *slot)
{
	if (state->native)
	{
		tuplestore_puttupleslot(state->recursing ? state->intermediate_table :
								state->working_table, slot);
		return;
	}
	if (state->store == NULL)
		state->store = CompSpillStoreBegin(ExecGetResultType(&state->css.ss.ps),
										   work_mem, &state->settings, 1,
										   "recursive union");
	CompSpillStorePut(state->store, slot, COMPSPILL_WT_POS);
	state->nput++;
}

/*
 * Make the rows the last iteration (or the non-recursive term) returned
 * the working table, and start an empty intermediate table.
 */
static void
compspill_ru_swap(CompSpillRecursiveState *state)
{
	if (state->native)
	{
		Tuplestorestate *swap;

		tuplestore_clear(state->working_table);
		swap = state->working_table;
		state->working_table = state->intermediate_table;
		state->intermediate_table = swap;
		return;
	}
	state->work_start = state->work_end;
	state->work_end = state->nput;
	if (state->store != NULL)
	{
		CompSpillStoreForget(state->store, state->work_start);
		CompSpillStoreSeek(state->store, COMPSPILL_WT_POS, state->work_start);
	}
}

/*
 * Return the union's next row: the non-recursive term's rows, then the
 * recursive term's, iteration after iteration, until one returns none;
 * with UNION, rows seen before are skipped.
 */
static TupleTableSlot *
compspill_ru_exec(CustomScanState *node)
{
	CompSpillRecursiveState *state = (CompSpillRecursiveState *) node;
	PlanState  *outer = outerPlanState(node);
	PlanState  *inner = innerPlanState(node);
	TupleTableSlot *slot;

	CHECK_FOR_INTERRUPTS();

	if (!state->recursing)
	{
		for (;;)
		{
			slot = ExecProcNode(outer);
			if (TupIsNull(slot))
				break;
			if (compspill_ru_seen(state, slot))
				continue;
			compspill_ru_put(state, slot);
			return slot;
		}
		state->recursing = true;
		/* the working table is all the non-recursive term returned */
		if (!state->native)
			compspill_ru_swap(state);
	}

	for (;;)
	{
		slot = ExecProcNode(inner);
		if (TupIsNull(slot))
		{
			if (state->intermediate_empty)
				break;
			compspill_ru_swap(state);
			state->intermediate_empty = true;
			/* the recursive term runs again, over the new working table */
			inner->chgParam = bms_add_member(inner->chgParam,
											 state->wt_param);
			continue;
		}
		if (compspill_ru_seen(state, slot))
			continue;
		state->intermediate_empty = false;
		compspill_ru_put(state, slot);
		return slot;
	}
	return NULL;
}

/*
 * End the store, keeping its figures for EXPLAIN.
 */
static void
compspill_ru_release(CompSpillRecursiveState *state)
{
	if (state->store != NULL)
	{
		state->have_last = true;
		state->last_spilled = CompSpillStoreSpilled(state->store);
		state->last_stats = *CompSpillStoreStats(state->store);
		CompSpillStoreEnd(state->store);
		state->store = NULL;
	}
	state->nput = state->work_start = state->work_end = 0;
}

/*
 * Shut the union down.
 */
static void
compspill_ru_end(CustomScanState *node)
{
	CompSpillRecursiveState *state = (CompSpillRecursiveState *) node;

	compspill_ru_release(state);
	if (state->working_table)
		tuplestore_end(state->working_table);
	if (state->intermediate_table)
		tuplestore_end(state->intermediate_table);
	if (state->temp_cxt)
		MemoryContextDelete(state->temp_cxt);
	if (state->table_cxt)
		MemoryContextDelete(state->table_cxt);
	ExecEndNode(outerPlanState(node));
	ExecEndNode(innerPlanState(node));
}

/*
 * Rescan: start again from the non-recursive term, with empty tables and
 * no rows seen.
 */
static void
compspill_ru_rescan(CustomScanState *node)
{
	CompSpillRecursiveState *state = (CompSpillRecursiveState *) node;
	PlanState  *outer = outerPlanState(node);
	PlanState  *inner = innerPlanState(node);

	/* the work table changes: the recursive term must rescan */
	inner->chgParam = bms_add_member(inner->chgParam, state->wt_param);
	if (outer->chgParam == NULL)
		ExecReScan(outer);

	if (state->table_cxt)
		MemoryContextReset(state->table_cxt);
	if (state->num_cols > 0)
		ResetTupleHashTable(state->hashtable);

	state->recursing = false;
	state->intermediate_empty = true;
	if (state->native)
	{
		tuplestore_clear(state->working_table);
		tuplestore_clear(state->intermediate_table);
	}
	else
		compspill_ru_release(state);
}

/*
 * EXPLAIN ANALYZE: how the working and intermediate tables were kept, the
 * storage line native prints on 18 and, when they spilled, the spill
 * figures; with native's tuplestores, what native prints.
 */
static void
compspill_ru_explain(CustomScanState *node,
					 List *ancestors pg_attribute_unused(),
					 ExplainState *es)
{
	CompSpillRecursiveState *state = (CompSpillRecursiveState *) node;

	if (!es->analyze)
		return;
	if (state->native)
	{
		if (es->format != EXPLAIN_FORMAT_TEXT)
			ExplainPropertyBool("Tuplestore Fallback", true, es);
		CompSpillExplainTuplestorePair(state->working_table,
									   state->intermediate_table, es);
		return;
	}
	if (state->store != NULL)
		CompSpillExplainStore(CompSpillStoreSpilled(state->store),
							  CompSpillStoreStats(state->store), es);
	else if (state->have_last)
		CompSpillExplainStore(state->last_spilled, &state->last_stats, es);
}

/*
 * Allocate the scan's executor state.
 */
static Node *
compspill_wt_create_state(CustomScan *cscan pg_attribute_unused())
{
	CompSpillWorkTableState *state = palloc0(sizeof(CompSpillWorkTableState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &compspill_wt_exec_methods;
	return (Node *) state;
}

/*
 * Start the scan; its union is found on the first read, as native's is.
 */
static void
compspill_wt_begin(CustomScanState *node, EState *estate,
				   int eflags pg_attribute_unused())
{
	CompSpillWorkTableState *state = (CompSpillWorkTableState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	Assert(!(eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)));
	state->wt_param = intVal(linitial(cscan->custom_private));
	state->rti = (Index) intVal(lsecond(cscan->custom_private));

	/*
	 * Rows come in a minimal-tuple scan slot and the Vars are the CTE's,
	 * as in the CTE Scan node.  The quals are compiled for that here and
	 * the projection on the first read, as native's are, so that EXPLAIN
	 * lists the SubPlans of the quals under the scan, and those of the
	 * targetlist only once it has run.  Whether there is a projection
	 * decides what kind of slot the scan returns, which the parent reads
	 * when it starts, after this: the projection is set up here for that
	 * decision, then dropped with the SubPlans registered by it and by
	 * ExecInitCustomScan's compilation for a virtual slot.
	 */
	CompSpillRowScanBegin(&state->rs, &node->ss, estate, state->rti);
	ExecAssignScanProjectionInfoWithVarno(&node->ss, INDEX_VAR);
	node->ss.ps.ps_ProjInfo = NULL;
	node->ss.ps.subPlan = NIL;
	node->ss.ps.qual = ExecInitQual(cscan->scan.plan.qual, &node->ss.ps);
	state->projection_ready = false;
}

/*
 * Return the next row of the working table: native's tuplestore, or the
 * store's stretch of it, read up to its end (the rows after it are the
 * iteration now running).
 */
static TupleTableSlot *
compspill_wt_next_row(ScanState *ss)
{
	CompSpillWorkTableState *state = (CompSpillWorkTableState *) ss;
	CompSpillRecursiveState *ru = state->ru;

	Assert(ScanDirectionIsForward(ss->ps.state->es_direction));
	if (ru == NULL)
	{
		ParamExecData *prm;

		prm = &ss->ps.state->es_param_exec_vals[state->wt_param];
		ru = (CompSpillRecursiveState *) DatumGetPointer(prm->value);
		if (prm->isnull || ru == NULL || !IsA(ru, CustomScanState) ||
			ru->css.methods != &compspill_ru_exec_methods)
			elog(ERROR, "compspill work table scan without its recursive union");
		state->ru = ru;
	}

	if (ru->native)
	{
		(void) tuplestore_gettupleslot(ru->working_table, true, false,
									   state->rs.rowslot);
		return state->rs.rowslot;
	}
	if (ru->store == NULL ||
		CompSpillStoreTell(ru->store, COMPSPILL_WT_POS) >= ru->work_end)
		return ExecClearTuple(state->rs.rowslot);
	(void) CompSpillStoreGet(ru->store, COMPSPILL_WT_POS, true, state->rs.rowslot,
							 true);
	return state->rs.rowslot;
}

/*
 * Under an EvalPlanQual recheck, put the row the recheck has for the work
 * table in the scan slot, as native's scan returns it (rowscan.c).
 */
static bool
compspill_wt_recheck(ScanState *ss, TupleTableSlot *slot pg_attribute_unused())
{
	CompSpillWorkTableState *state = (CompSpillWorkTableState *) ss;

	return CompSpillRowScanRecheck(&state->rs, ss, compspill_wt_next_row);
}

/* Return the scan tuple of the scan's next row */
static TupleTableSlot *
compspill_wt_next(ScanState *ss)
{
	CompSpillWorkTableState *state = (CompSpillWorkTableState *) ss;

	return CompSpillRowScanStore(&state->rs, ss, compspill_wt_next_row(ss));
}

/*
 * Return the next row of the working table that passes the quals,
 * projected.
 */
static TupleTableSlot *
compspill_wt_exec(CustomScanState *node)
{
	CompSpillWorkTableState *state = (CompSpillWorkTableState *) node;

	if (!state->projection_ready)
	{
		ExecAssignScanProjectionInfoWithVarno(&node->ss, INDEX_VAR);
		state->projection_ready = true;
	}
	return ExecScan(&node->ss, compspill_wt_next, compspill_wt_recheck);
}

/*
 * Shut the scan down (the union owns the rows).
 */
static void
compspill_wt_end(CustomScanState *node)
{
	ExecClearTuple(((CompSpillWorkTableState *) node)->rs.rowslot);
}

/*
 * Rescan: read the working table again from its first row.
 */
static void
compspill_wt_rescan(CustomScanState *node)
{
	CompSpillWorkTableState *state = (CompSpillWorkTableState *) node;
	CompSpillRecursiveState *ru = state->ru;

	ExecClearTuple(state->rs.rowslot);
	ExecScanReScan(&node->ss);
	if (ru == NULL)
		return;
	if (ru->native)
		tuplestore_rescan(ru->working_table);
	else if (ru->store != NULL)
		CompSpillStoreSeek(ru->store, COMPSPILL_WT_POS, ru->work_start);
}

/*
 * EXPLAIN: the CTE scanned, under the names native prints after
 * "WorkTable Scan on".
 */
static void
compspill_wt_explain(CustomScanState *node,
					 List *ancestors pg_attribute_unused(),
					 ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Index		rti = (Index) intVal(lsecond(cscan->custom_private));
	RangeTblEntry *rte = rt_fetch(rti, es->rtable);
	char	   *refname = list_nth(es->rtable_names, rti - 1);

	if (refname == NULL)
		refname = rte->eref->aliasname;
	if (rte->ctename != NULL)
		ExplainPropertyText("CTE Name", rte->ctename, es);
	if (refname != NULL &&
		(rte->ctename == NULL || strcmp(refname, rte->ctename) != 0))
		ExplainPropertyText("CTE Alias", refname, es);
}
