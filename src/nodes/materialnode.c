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
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "utils/tuplestore.h"

#include "compspill.h"
#include "nodes/explain.h"
#include "nodes/materialnode.h"
#include "sort/store.h"

/* read positions: where the node reads, and the mark */
#define COMPSPILL_READ_POS		0
#define COMPSPILL_MARK_POS		1

typedef struct CompSpillMaterialState
{
	CustomScanState css;		/* must be first */
	CompSpillSettings settings; /* captured at executor start */
	int			eflags;			/* REWIND, BACKWARD, MARK asked for */
	bool		use_tuplestore; /* compspill.enabled was off at start */
	bool		eof_underlying; /* the child has returned its last row */
	CompSpillStore *store;		/* compspill path, once made */
	Tuplestorestate *tstore;	/* tuplestore path, once made */
	TupleTableSlot *slot;		/* the rows returned: minimal tuples */

	/* figures of the last store, kept for EXPLAIN after a rescan */
	bool		have_last;
	bool		last_spilled;
	CompSpillStats last_stats;
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
	CustomScan *cscan = makeNode(CustomScan);

	/* the whole Plan header, then make it a CustomScan again */
	cscan->scan.plan = mat->plan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN |
		CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private = NIL;
	cscan->custom_scan_tlist = NIL;
	cscan->custom_relids = NULL;
	cscan->methods = &compspill_material_scan_methods;

	return (Plan *) cscan;
}

/*
 * Allocate the node's executor state.
 */
static Node *
compspill_material_create_state(CustomScan *cscan pg_attribute_unused())
{
	CompSpillMaterialState *state = palloc0(sizeof(CompSpillMaterialState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &compspill_material_exec_methods;
	return (Node *) state;
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
	state->use_tuplestore = !compspill_enabled;

	/*
	 * Backward reads may go back to the very first row, which needs the
	 * rows kept as a rewind does.
	 */
	state->eflags = eflags &
		(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	if (eflags & EXEC_FLAG_BACKWARD)
		state->eflags |= EXEC_FLAG_REWIND;

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

/*
 * Create the store on first use, with a second read position for the mark.
 */
static void
compspill_material_make_store(CompSpillMaterialState *state)
{
	int			npos = (state->eflags & EXEC_FLAG_MARK) ? 2 : 1;

	if (state->use_tuplestore)
	{
		state->tstore = tuplestore_begin_heap(true, false, work_mem);
		tuplestore_set_eflags(state->tstore, state->eflags);
		if (npos == 2 &&
			tuplestore_alloc_read_pointer(state->tstore,
										  state->eflags) != COMPSPILL_MARK_POS)
			elog(ERROR, "unexpected tuplestore read pointer");
	}
	else
		state->store = CompSpillStoreBegin(ExecGetResultType(&state->css.ss.ps),
										   work_mem, &state->settings, npos,
										   "material");
}

/* Is there a store? */
static inline bool
compspill_material_has_store(CompSpillMaterialState *state)
{
	return state->store != NULL || state->tstore != NULL;
}

/* Has the read position found the store's end going forward? */
static bool
compspill_material_at_eof(CompSpillMaterialState *state)
{
	if (state->store)
		return CompSpillStoreAtEOF(state->store, COMPSPILL_READ_POS);
	return tuplestore_ateof(state->tstore);
}

/* Move the read position one row without reading it */
static bool
compspill_material_advance(CompSpillMaterialState *state, bool forward)
{
	if (state->store)
		return CompSpillStoreAdvance(state->store, COMPSPILL_READ_POS,
									 forward);
	return tuplestore_advance(state->tstore, forward);
}

/* Read the next row from the store in the given direction */
static bool
compspill_material_get(CompSpillMaterialState *state, bool forward)
{
	if (state->store)
		return CompSpillStoreGet(state->store, COMPSPILL_READ_POS, forward,
								 state->slot, false);
	return tuplestore_gettupleslot(state->tstore, forward, false, state->slot);
}

/*
 * Return the next row in the direction the executor goes: from the store
 * while the read position is inside it, else the child's next row, which
 * is stored on the way.
 */
static TupleTableSlot *
compspill_material_exec(CustomScanState *node)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	bool		at_end;
	TupleTableSlot *outerslot;

	if (!compspill_material_has_store(state) && state->eflags != 0)
		compspill_material_make_store(state);

	at_end = !compspill_material_has_store(state) ||
		compspill_material_at_eof(state);

	if (!forward && at_end)
	{
		/*
		 * Turning back at the end of the store: the first backward read
		 * would return the row returned last, unless the child had ended;
		 * the row wanted is the one before it.
		 */
		if (!state->eof_underlying &&
			!compspill_material_advance(state, false))
			return NULL;
		at_end = false;
	}

	if (!at_end)
	{
		if (compspill_material_get(state, forward))
			return state->slot;
		if (forward)
			at_end = true;
	}

	if (at_end && !state->eof_underlying)
	{
		outerslot = ExecProcNode(outerPlanState(node));
		if (TupIsNull(outerslot))
		{
			state->eof_underlying = true;
			return NULL;
		}
		if (state->store)
			CompSpillStorePut(state->store, outerslot, COMPSPILL_READ_POS);
		else if (state->tstore)
			tuplestore_puttupleslot(state->tstore, outerslot);
		ExecCopySlot(state->slot, outerslot);
		return state->slot;
	}

	return ExecClearTuple(state->slot);
}

/*
 * Remember the figures of the store, then release it.
 */
static void
compspill_material_release(CompSpillMaterialState *state)
{
	ExecClearTuple(state->slot);
	if (state->store)
	{
		state->have_last = true;
		state->last_spilled = CompSpillStoreSpilled(state->store);
		state->last_stats = *CompSpillStoreStats(state->store);
		CompSpillStoreEnd(state->store);
		state->store = NULL;
	}
	if (state->tstore)
	{
		tuplestore_end(state->tstore);
		state->tstore = NULL;
	}
}

/*
 * Shut the node down.
 */
static void
compspill_material_end(CustomScanState *node)
{
	compspill_material_release((CompSpillMaterialState *) node);
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
		if (!compspill_material_has_store(state))
			return;

		if (outer->chgParam != NULL ||
			(state->eflags & EXEC_FLAG_REWIND) == 0)
		{
			compspill_material_release(state);
			if (outer->chgParam == NULL)
				ExecReScan(outer);
			state->eof_underlying = false;
		}
		else if (state->store)
			CompSpillStoreRewind(state->store, COMPSPILL_READ_POS);
		else
			tuplestore_rescan(state->tstore);
	}
	else
	{
		/* the rows were only passed on */
		if (outer->chgParam == NULL)
			ExecReScan(outer);
		state->eof_underlying = false;
	}
}

/*
 * Mark the current position.
 */
static void
compspill_material_mark(CustomScanState *node)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;

	if (state->store)
	{
		CompSpillStoreCopyPos(state->store, COMPSPILL_READ_POS,
							  COMPSPILL_MARK_POS);
		/* rows before the mark are not needed again unless rewound */
		if ((state->eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD)) == 0)
			CompSpillStoreTrim(state->store);
	}
	else if (state->tstore)
	{
		tuplestore_copy_read_pointer(state->tstore, COMPSPILL_READ_POS,
									 COMPSPILL_MARK_POS);
		tuplestore_trim(state->tstore);
	}
}

/*
 * Return to the marked position.
 */
static void
compspill_material_restore(CustomScanState *node)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;

	if (state->store)
		CompSpillStoreCopyPos(state->store, COMPSPILL_MARK_POS,
							  COMPSPILL_READ_POS);
	else if (state->tstore)
		tuplestore_copy_read_pointer(state->tstore, COMPSPILL_MARK_POS,
									 COMPSPILL_READ_POS);
}

/*
 * EXPLAIN ANALYZE: how the rows were kept (the tuplestore path prints
 * nothing, as native Material does not).
 */
static void
compspill_material_explain(CustomScanState *node,
						   List *ancestors pg_attribute_unused(),
						   ExplainState *es)
{
	CompSpillMaterialState *state = (CompSpillMaterialState *) node;

	if (!es->analyze)
		return;

	if (state->use_tuplestore)
	{
		if (es->format != EXPLAIN_FORMAT_TEXT)
			ExplainPropertyBool("Tuplestore Fallback", true, es);
		CompSpillExplainTuplestore(state->tstore, es);
		return;
	}
	if (state->store)
		CompSpillExplainStore(CompSpillStoreSpilled(state->store),
							  CompSpillStoreStats(state->store), es);
	else if (state->have_last)
		CompSpillExplainStore(state->last_spilled, &state->last_stats, es);
}
