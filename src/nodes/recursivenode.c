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
 * The pair here does the same with a single CompSpillStore (store.c), the
 * union's node store (nodestore.c): every row the union returns is
 * appended to it, and the working table is the stretch of rows
 * [work_start, work_end) the previous iteration appended.  The scan reads that stretch with the store's one read
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
#include "base/buffer.h"
#include "base/spillstats.h"
#include "nodes/customscan.h"
#include "nodes/explain.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodenames.h"
#include "nodes/nodestore.h"
#include "nodes/recursivenode.h"
#include "nodes/rowscan.h"
#include "sort/store.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

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

	/*
	 * compspill's: the store (made on first use, with the figures of the
	 * last one a rescan ended), and where the working table is in it
	 */
	CompSpillSettings settings;
	CompSpillNodeStore ns;
	int64		nput;			/* rows put */
	int64		work_start;
	int64		work_end;

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
	CompSpillRowScan rs;		/* must be first: its rows and scan tuples */
	int			wt_param;
	CompSpillRecursiveState *ru;	/* found on first read */
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
static void compspill_wt_end(CustomScanState *node);
static void compspill_wt_rescan(CustomScanState *node);
static void compspill_wt_explain(CustomScanState *node, List *ancestors,
								 ExplainState *es);
static TupleTableSlot *compspill_wt_next_row(ScanState *ss);

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
	.ExecCustomScan = CompSpillRowScanExec,
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
	List	   *cols = NIL;
	List	   *ops = NIL;
	List	   *colls = NIL;

	for (int i = 0; i < ru->numCols; i++)
	{
		cols = lappend_int(cols, ru->dupColIdx[i]);
		ops = lappend_oid(ops, ru->dupOperators[i]);
		colls = lappend_oid(colls, ru->dupCollations[i]);
	}
	return (Plan *)
		CompSpillMakeCustomScan(&ru->plan, 0,
								list_make5(makeInteger(ru->wtParam),
										   makeInteger((int) Min(ru->numGroups,
																 (long) INT_MAX)),
										   cols, ops, colls),
								&compspill_ru_scan_methods);
}

/*
 * Build a CustomScan that does the work of the given WorkTableScan of the
 * recursive union ru (not yet replaced).
 */
Plan *
CompSpillMakeWorkTableNode(WorkTableScan *wts, RecursiveUnion *ru)
{
	Index		rti = wts->scan.scanrelid;
	CustomScan *cscan;

	cscan = CompSpillMakeCustomScan(&wts->scan.plan, 0,
									list_make2(makeInteger(wts->wtParam),
											   makeInteger((int) rti)),
									&compspill_wt_scan_methods);
	/* one column per column of the work table, the union's output */
	if (!CompSpillRowScanPlan(cscan, rti, ru->plan.targetlist))
		elog(ERROR, "unexpected resjunk column in a recursive union's targetlist");
	return (Plan *) cscan;
}

/*
 * Allocate the union's executor state.
 */
static Node *
compspill_ru_create_state(CustomScan *cscan pg_attribute_unused())
{
	return CompSpillNewScanState(sizeof(CompSpillRecursiveState),
								 &compspill_ru_exec_methods);
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
	CompSpillNodeStoreInit(&state->ns, false, 0);

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
												COMPSPILL_DEFAULT_CONTEXT_SIZES);
		state->table_cxt = AllocSetContextCreate(CurrentMemoryContext,
												 "CompSpill recursive union hash table",
												 COMPSPILL_DEFAULT_CONTEXT_SIZES);
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
	if (!CompSpillNodeStoreMade(&state->ns))
		CompSpillNodeStoreMake(&state->ns,
							   ExecGetResultType(&state->css.ss.ps),
							   &state->settings, 1, 0, "recursive union");
	CompSpillStorePut(state->ns.store, slot, COMPSPILL_WT_POS);
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
	if (state->ns.store != NULL)
	{
		CompSpillStoreForget(state->ns.store, state->work_start);
		CompSpillStoreSeek(state->ns.store, COMPSPILL_WT_POS,
						   state->work_start);
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
	CompSpillNodeStoreRelease(&state->ns);
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
		Tuplestorestate *tables[2] = {state->working_table,
		state->intermediate_table};

		CompSpillExplainTuplestores(tables, 2, es);
	}
	else
		CompSpillNodeStoreExplain(&state->ns, true, es);
}

/*
 * Allocate the scan's executor state.
 */
static Node *
compspill_wt_create_state(CustomScan *cscan pg_attribute_unused())
{
	return CompSpillNewScanState(sizeof(CompSpillWorkTableState),
								 &compspill_wt_exec_methods);
}

/*
 * Start the scan; its union is found on the first read, as native's is.
 * Rows come in a minimal-tuple scan slot and the Vars are the CTE's, as
 * in the CTE Scan node; the projection is compiled on the first read, as
 * native's is (rowscan.c).
 */
static void
compspill_wt_begin(CustomScanState *node, EState *estate,
				   int eflags pg_attribute_unused())
{
	CompSpillWorkTableState *state = (CompSpillWorkTableState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	Assert(!(eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)));
	state->wt_param = intVal(linitial(cscan->custom_private));
	CompSpillRowScanBegin(&state->rs, estate,
						  (Index) intVal(lsecond(cscan->custom_private)),
						  compspill_wt_next_row, true);
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
	if (ru->ns.store == NULL ||
		CompSpillStoreTell(ru->ns.store, COMPSPILL_WT_POS) >= ru->work_end)
		return ExecClearTuple(state->rs.rowslot);
	(void) CompSpillStoreGet(ru->ns.store, COMPSPILL_WT_POS, true,
							 state->rs.rowslot, true);
	return state->rs.rowslot;
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

	CompSpillRowScanReScan(&state->rs);
	if (ru == NULL)
		return;
	if (ru->native)
		tuplestore_rescan(ru->working_table);
	else if (ru->ns.store != NULL)
		CompSpillStoreSeek(ru->ns.store, COMPSPILL_WT_POS, ru->work_start);
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
	CompSpillRowScanExplain(&((CompSpillWorkTableState *) node)->rs, es);
}
