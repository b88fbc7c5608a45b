/*-------------------------------------------------------------------------
 *
 * materialnode.c
 *	  The "CompSpill Material" CustomScan: plan node construction, executor
 *	  callbacks and EXPLAIN output.
 *
 * The node stands where a Material stood (under nested loops that rescan
 * their inner side, on a merge join's inner side, under scrollable
 * cursors) and behaves as it does: it reads its child lazily, one row each
 * time its reader reaches the end of what is stored, so a nested loop that
 * stops early reads no more of the child than native Material would; it
 * keeps every row read in a store (store.c) that stays in memory within
 * work_mem and beyond it becomes a compressed, indexed run; and it serves
 * rescans, backward reads and mark/restore from that store.  When the
 * parent asked for none of those (no REWIND, BACKWARD or MARK), it only
 * passes the child's rows on, as native Material does.
 *
 * When compspill.enabled was turned off after the plan was made (a cached
 * plan keeps the node), the rows go to PostgreSQL's tuplestore instead.
 *
 * IDENTIFICATION
 *	  src/nodes/materialnode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "base/settings.h"
#include "nodes/customscan.h"
#include "nodes/extensible.h"
#include "nodes/materialnode.h"
#include "nodes/nodenames.h"
#include "nodes/nodestore.h"

/* read positions: where the node reads, and the mark */
#define COMPSPILL_READ_POS		0
#define COMPSPILL_MARK_POS		1

typedef struct CompSpillMaterialState
{
	CustomScanState css;		/* must be first */
	CompSpillSettings settings; /* captured at executor start */
	int			eflags;			/* REWIND, BACKWARD, MARK asked for */
	CompSpillNodeStore ns;		/* the rows kept, once a reader needs them */
	TupleTableSlot *slot;		/* the rows returned: minimal tuples */
} CompSpillMaterialState;

static Node *compspill_material_create_state(CustomScan *cscan);
static void compspill_material_begin(CustomScanState *node, EState *estate,
									 int eflags);
static TupleTableSlot *compspill_material_exec(CustomScanState *node);
static void compspill_material_end(CustomScanState *node);
static void compspill_material_rescan(CustomScanState *node);
static void compspill_material_mark(CustomScanState *node);
static void compspill_material_restore(CustomScanState *node);
static void compspill_material_explain(CustomScanState *node, List *ancestors,
									   ExplainState *es);

static const CustomScanMethods compspill_material_scan_methods = {
	.CustomName = COMPSPILL_MATERIAL_NAME,
	.CreateCustomScanState = compspill_material_create_state,
};

static const CustomExecMethods compspill_material_exec_methods = {
	.CustomName = COMPSPILL_MATERIAL_NAME,
	.BeginCustomScan = compspill_material_begin,
	.ExecCustomScan = compspill_material_exec,
	.EndCustomScan = compspill_material_end,
	.ReScanCustomScan = compspill_material_rescan,
	.MarkPosCustomScan = compspill_material_mark,
	.RestrPosCustomScan = compspill_material_restore,
	.ExplainCustomScan = compspill_material_explain,
};

/*
 * Register the node's methods, so plans naming it can be read back.
 */
void
CompSpillRegisterMaterialNode(void)
{
	RegisterCustomScanMethods(&compspill_material_scan_methods);
}

/*
 * Build a CustomScan that does the work of the given Material.
 */
Plan *
CompSpillMakeMaterialNode(Material *mat)
{
	return (Plan *) CompSpillMakeCustomScan(&mat->plan,
											CUSTOMPATH_SUPPORT_BACKWARD_SCAN |
											CUSTOMPATH_SUPPORT_MARK_RESTORE,
											NIL,
											&compspill_material_scan_methods);
}

/*
 * Note on a CompSpill Material that the plan expects its rows read the
 * given number of times: once per row of a nested loop's outer side, when
 * the Material is the loop's inner side.  A no-op for any other node.
 */
void
CompSpillMaterialSetReads(Plan *plan, double reads)
{
	CustomScan *cscan;

	if (plan == NULL || !IsA(plan, CustomScan))
		return;
	cscan = (CustomScan *) plan;
	if (cscan->methods != &compspill_material_scan_methods)
		return;
	/* with a decimal point, so that a plan read back keeps it a Float */
	cscan->custom_private = list_make1(makeFloat(psprintf("%.1f",
														  Max(reads, 1.0))));
}

/* The times the plan expects the node's rows read (1 if it did not say) */
static double
compspill_material_reads(CustomScan *cscan)
{
	Node	   *reads;

	if (cscan->custom_private == NIL)
		return 1.0;
	reads = linitial(cscan->custom_private);
	if (IsA(reads, Float))
		return floatVal(reads);
	if (IsA(reads, Integer))
		return (double) intVal(reads);
	return 1.0;
}

/*
 * Allocate the node's executor state.
 */
static Node *
compspill_material_create_state(CustomScan *cscan pg_attribute_unused())
{
	return CompSpillNewScanState(sizeof(CompSpillMaterialState),
								 &compspill_material_exec_methods);
}

/*
 * Start the node: note what the parent asked for and initialise the child.
 */
static void
compspill_material_begin(CustomScanState *node, EState *estate, int eflags)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	CompSpillCaptureSettings(&state->settings, estate);

	/*
	 * Backward reads may go back to the very first row, which needs the
	 * rows kept as a rewind does.
	 */
	state->eflags = eflags &
		(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	if (eflags & EXEC_FLAG_BACKWARD)
		state->eflags |= EXEC_FLAG_REWIND;
	CompSpillNodeStoreInit(&state->ns, !compspill_enabled, state->eflags);
	CompSpillNodeStoreExpect(&state->ns, outerPlan(cscan),
							 compspill_material_reads(cscan));

	/* the child is read once, forward */
	eflags &= ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	outerPlanState(node) = ExecInitNode(outerPlan(cscan), estate, eflags);

	/* rows are returned as they are, always as minimal tuples */
	node->ss.ps.ps_ProjInfo = NULL;
	state->slot = ExecAllocTableSlot(&estate->es_tupleTable,
									 ExecGetResultType(&node->ss.ps),
									 &TTSOpsMinimalTuple);
	node->ss.ps.resultops = &TTSOpsMinimalTuple;
	node->ss.ps.resultopsfixed = true;
	node->ss.ps.resultopsset = true;
}

/* The child's next row, for the node store */
static TupleTableSlot *
compspill_material_source(void *arg)
{
	return ExecProcNode(outerPlanState((CustomScanState *) arg));
}

/*
 * Return the next row in the direction the executor goes: from the store
 * while the read position is inside it, else the child's next row, which
 * is stored on the way.  The store, with a second read position for the
 * mark, is made on first use, unless the parent asked for nothing it is
 * needed for.
 */
static TupleTableSlot *
compspill_material_exec(CustomScanState *node)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);

	if (!CompSpillNodeStoreMade(&state->ns) && state->eflags != 0)
		CompSpillNodeStoreMake(&state->ns, ExecGetResultType(&node->ss.ps),
							   &state->settings,
							   (state->eflags & EXEC_FLAG_MARK) ? 2 : 1,
							   state->eflags, "material");
	return CompSpillNodeStoreNext(&state->ns, COMPSPILL_READ_POS, forward,
								  false, state->slot,
								  compspill_material_source, node);
}

/*
 * Shut the node down.
 */
static void
compspill_material_end(CustomScanState *node)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;

	ExecClearTuple(state->slot);
	CompSpillNodeStoreRelease(&state->ns);
	ExecEndNode(outerPlanState(node));
}

/*
 * Rescan: read the stored rows again if the parent said it would rescan,
 * else (or when the child's parameters changed) start from an empty store
 * and read the child again, as native Material does.
 */
static void
compspill_material_rescan(CustomScanState *node)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;
	PlanState  *outer = outerPlanState(node);

	ExecClearTuple(state->slot);

	if (state->eflags != 0)
	{
		/* nothing read yet: the child will rescan itself if it must */
		if (!CompSpillNodeStoreMade(&state->ns))
			return;

		if (outer->chgParam != NULL ||
			(state->eflags & EXEC_FLAG_REWIND) == 0)
		{
			CompSpillNodeStoreRelease(&state->ns);
			if (outer->chgParam == NULL)
				ExecReScan(outer);
		}
		else
			CompSpillNodeStoreRewind(&state->ns, COMPSPILL_READ_POS);
	}
	else
	{
		/* the rows were only passed on */
		if (outer->chgParam == NULL)
			ExecReScan(outer);
		state->ns.eof_source = false;
	}
}

/*
 * Mark the current position.
 */
static void
compspill_material_mark(CustomScanState *node)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;

	CompSpillNodeStoreCopyPos(&state->ns, COMPSPILL_READ_POS,
							  COMPSPILL_MARK_POS);
	/* rows before the mark are not needed again unless rewound */
	CompSpillNodeStoreTrim(&state->ns);
}

/*
 * Return to the marked position.
 */
static void
compspill_material_restore(CustomScanState *node)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;

	CompSpillNodeStoreCopyPos(&state->ns, COMPSPILL_MARK_POS,
							  COMPSPILL_READ_POS);
}

/*
 * EXPLAIN VERBOSE: how many times the plan expects the rows read, when a
 * nested loop rescans the node (what codec = auto weighs its codecs' reads
 * by).  EXPLAIN ANALYZE: how the rows were kept (the tuplestore path prints
 * nothing, as native Material does not).
 */
static void
compspill_material_explain(CustomScanState *node,
						   List *ancestors pg_attribute_unused(),
						   ExplainState *es)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;

	if (es->verbose && state->ns.est_reads > 1.0)
		ExplainPropertyFloat("Planned Reads", NULL, state->ns.est_reads, 0, es);
	if (es->analyze)
		CompSpillNodeStoreExplain(&state->ns, true, es);
}
