/*-------------------------------------------------------------------------
 *
 * ctenode.c
 *	  The "CompSpill CTE Scan" CustomScan: the scans of a materialized CTE
 *	  sharing one compressed store.
 *
 * A materialized CTE is computed once by its own subplan and read by any
 * number of CTE Scan nodes.  PostgreSQL lets the first of them to start (the
 * leader) create a tuplestore and publish itself in the executor parameter
 * slot the plan reserves for the CTE; the others find it there and add a
 * read pointer of their own.  Whichever scan reads past the end of what is
 * stored pulls the next row from the CTE's subplan and stores it, so the
 * subplan runs only as far as some scan needs.
 *
 * This node does the same with a CompSpillStore: every CTE Scan of the plan
 * is replaced, the first to start keeps the store and its own read
 * position, the others add theirs, and rows beyond work_mem go to one
 * compressed run.  Since every scan of a CTE reads the same store, all of
 * them must be replaced together, which the plan rewrite does (the main
 * plan and every subplan).  With compspill.enabled off at executor start,
 * the leader makes a PostgreSQL tuplestore instead and the scans read that.
 *
 * A CTE Scan is a scan node of the CTE's range table entry: rowscan.c
 * makes its scan tuple (the columns the CTE returns, without the resjunk
 * columns, sort keys say, its plan may carry at the end), refers its
 * quals and targetlist to it, and answers EvalPlanQual rechecks as a
 * native scan does.  Rows are stored without the junk columns, so that a
 * whole-row Var of the CTE is what native's junk filter makes of it.
 *
 * IDENTIFICATION
 *	  src/nodes/ctenode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "base/settings.h"
#include "nodes/ctenode.h"
#include "nodes/customscan.h"
#include "nodes/explain.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodenames.h"
#include "nodes/nodestore.h"
#include "nodes/rowscan.h"

/* how the read positions of a CTE's other scans may move */
#define COMPSPILL_CTE_POS_EFLAGS	(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD)

typedef struct CompSpillCteState
{
	CompSpillRowScan rs;		/* must be first: its rows and scan tuples */
	int			eflags;
	int			cte_plan_id;	/* the CTE's subplan, 1-based */
	int			cte_param;		/* the executor parameter it is known by */
	PlanState  *cteplanstate;	/* the CTE's subplan */
	struct CompSpillCteState *leader;	/* the scan holding the store */
	int			readptr;		/* this scan's read position */

	/* the leader's */
	CompSpillSettings settings;
	CompSpillNodeStore ns;		/* the CTE's rows, a position per scan */
	int			npos;			/* read positions handed out */
} CompSpillCteState;

static Node *compspill_cte_create_state(CustomScan *cscan);
static void compspill_cte_begin(CustomScanState *node, EState *estate,
								int eflags);
static void compspill_cte_end(CustomScanState *node);
static void compspill_cte_rescan(CustomScanState *node);
static void compspill_cte_explain(CustomScanState *node, List *ancestors,
								  ExplainState *es);
static TupleTableSlot *compspill_cte_next_row(ScanState *ss);

static const CustomScanMethods compspill_cte_scan_methods = {
	.CustomName = COMPSPILL_CTE_NAME,
	.CreateCustomScanState = compspill_cte_create_state,
};

static const CustomExecMethods compspill_cte_exec_methods = {
	.CustomName = COMPSPILL_CTE_NAME,
	.BeginCustomScan = compspill_cte_begin,
	.ExecCustomScan = CompSpillRowScanExec,
	.EndCustomScan = compspill_cte_end,
	.ReScanCustomScan = compspill_cte_rescan,
	.ExplainCustomScan = compspill_cte_explain,
};

/*
 * Register the node's methods, so plans naming it can be read back.
 */
void
CompSpillRegisterCteNode(void)
{
	RegisterCustomScanMethods(&compspill_cte_scan_methods);
}

/*
 * Build a CustomScan that does the work of the given CTE Scan of stmt, or
 * return NULL if the CTE's plan puts a resjunk column before a column it
 * returns (the planner never does): the scan then stays native.
 */
Plan *
CompSpillMakeCteNode(CteScan *cte, PlannedStmt *stmt)
{
	Plan	   *cteplan = list_nth(stmt->subplans, cte->ctePlanId - 1);
	Index		rti = cte->scan.scanrelid;
	CustomScan *cscan;

	cscan = CompSpillMakeCustomScan(&cte->scan.plan,
									CUSTOMPATH_SUPPORT_BACKWARD_SCAN,
									list_make3(makeInteger(cte->ctePlanId),
											   makeInteger(cte->cteParam),
											   makeInteger((int) rti)),
									&compspill_cte_scan_methods);
	/* one column per column the CTE returns, leaving out its junk */
	if (!CompSpillRowScanPlan(cscan, rti, cteplan->targetlist))
		return NULL;
	return (Plan *) cscan;
}

/*
 * Allocate the node's executor state.
 */
static Node *
compspill_cte_create_state(CustomScan *cscan pg_attribute_unused())
{
	return CompSpillNewScanState(sizeof(CompSpillCteState),
								 &compspill_cte_exec_methods);
}

/*
 * Start the scan: find the CTE's subplan, then become the leader holding
 * the store, or take a read position in the leader's.
 */
static void
compspill_cte_begin(CustomScanState *node, EState *estate, int eflags)
{
	CompSpillCteState *state = (CompSpillCteState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	ParamExecData *prm;

	state->cte_plan_id = intVal(linitial(cscan->custom_private));
	state->cte_param = intVal(lsecond(cscan->custom_private));
	state->eflags = eflags;

	if (eflags & EXEC_FLAG_MARK)
		elog(ERROR, "compspill CTE scan does not support mark/restore");

	state->cteplanstate = list_nth(estate->es_subplanstates,
								   state->cte_plan_id - 1);

	/* the scan slot, quals and projection (rowscan.c) */
	CompSpillRowScanBegin(&state->rs, estate,
						  (Index) intVal(lthird(cscan->custom_private)),
						  compspill_cte_next_row, false);

	prm = &estate->es_param_exec_vals[state->cte_param];
	if (prm->execPlan != NULL)
		elog(ERROR, "unexpected execPlan for compspill CTE scan");
	if (prm->value == 0)
	{
		/* the first scan of this CTE: it keeps the store, made on first use */
		prm->value = PointerGetDatum(state);
		prm->isnull = false;
		state->leader = state;
		CompSpillCaptureSettings(&state->settings, estate);
		CompSpillNodeStoreInit(&state->ns, !compspill_enabled, eflags);
		CompSpillNodeStoreExpect(&state->ns, state->cteplanstate->plan, 1.0);
		state->readptr = 0;
		state->npos = 1;
	}
	else
	{
		/*
		 * Another scan of the CTE holds the store.  In an EvalPlanQual
		 * recheck that is the scan of the plan being rechecked, whose store
		 * may be made already: this scan's position is added to it then,
		 * at its first row, as native's read pointer is.
		 */
		state->leader = (CompSpillCteState *) DatumGetPointer(prm->value);
		if (!IsA(state->leader, CustomScanState) ||
			state->leader->rs.css.methods != &compspill_cte_exec_methods)
			elog(ERROR, "CTE scans of one CTE are not all compspill scans");
		state->readptr = state->leader->npos++;
		if (CompSpillNodeStoreMade(&state->leader->ns))
			CompSpillNodeStoreAddPos(&state->leader->ns, state->readptr,
									 COMPSPILL_CTE_POS_EFLAGS);
	}
}

/* The CTE subplan's next row, for the node store */
static TupleTableSlot *
compspill_cte_source(void *arg)
{
	return ExecProcNode(((CompSpillCteState *) arg)->cteplanstate);
}

/*
 * Return the scan's next row: from the store while the read position is
 * inside it, else the next row of the CTE's subplan, stored on the way.
 * The leader's store is made, with a read position for every scan, the
 * first time one of them reads.  Rows are copies: the other scans of the
 * CTE move the store's block on.
 */
static TupleTableSlot *
compspill_cte_next_row(ScanState *ss)
{
	CompSpillCteState *state = (CompSpillCteState *) ss;
	CompSpillCteState *leader = state->leader;
	bool		forward = ScanDirectionIsForward(ss->ps.state->es_direction);

	if (!CompSpillNodeStoreMade(&leader->ns))
		CompSpillNodeStoreMake(&leader->ns,
							   leader->rs.rowslot->tts_tupleDescriptor,
							   &leader->settings, leader->npos,
							   COMPSPILL_CTE_POS_EFLAGS, "CTE");
	return CompSpillNodeStoreNext(&leader->ns, state->readptr, forward, true,
								  state->rs.rowslot, compspill_cte_source,
								  leader);
}

/*
 * Shut the scan down; the leader releases the store.
 */
static void
compspill_cte_end(CustomScanState *node)
{
	CompSpillCteState *state = (CompSpillCteState *) node;

	ExecClearTuple(state->rs.rowslot);
	if (state->leader == state)
		CompSpillNodeStoreRelease(&state->ns);
}

/*
 * Rescan: if the CTE's subplan must run again (its parameters changed),
 * empty the store, which puts every scan back at the start; otherwise move
 * this scan's read position back to the first row.
 */
static void
compspill_cte_rescan(CustomScanState *node)
{
	CompSpillCteState *state = (CompSpillCteState *) node;
	CompSpillCteState *leader = state->leader;

	CompSpillRowScanReScan(&state->rs);
	if (leader->cteplanstate->chgParam != NULL)
		CompSpillNodeStoreRelease(&leader->ns);
	else
		CompSpillNodeStoreRewind(&leader->ns, state->readptr);
}

/*
 * EXPLAIN: which CTE is scanned; with ANALYZE, on the scan that holds the
 * store, how the rows were kept.
 */
static void
compspill_cte_explain(CustomScanState *node, List *ancestors pg_attribute_unused(),
					  ExplainState *es)
{
	CompSpillCteState *state = (CompSpillCteState *) node;
	CompSpillCteState *leader;

	CompSpillRowScanExplain(&state->rs, es);

	if (!es->analyze || (leader = state->leader) == NULL)
		return;

	/*
	 * Every scan says how the shared store held its rows, as native's do;
	 * the scan holding it prints its figures.
	 */
	if (!leader->ns.native)
		ExplainPropertyText("CTE Store", leader == state ? "own" : "shared",
							es);
	CompSpillNodeStoreExplain(&leader->ns, leader == state, es);
}
