/*-------------------------------------------------------------------------
 *
 * customscan.c
 *	  What every CompSpill CustomScan shares: its plan node made from the
 *	  native node's, its executor state, and the figures a parallel
 *	  worker's node publishes for the leader's EXPLAIN.
 *
 * Each CompSpill node stands where a native node stood.  It keeps the
 * native node's whole Plan header (costs, node id, parameter sets,
 * targetlist, quals, children on lefttree and righttree), so that the
 * executor and EXPLAIN see the same plan, and carries what its executor
 * needs in custom_private as plain lists and Integers, so that the node
 * survives copyObject and nodeToString (a cached plan, a parallel
 * worker's copy).
 *
 * The sort nodes print in their leader's EXPLAIN ANALYZE what each
 * parallel worker's node did: the worker publishes its figures, once,
 * when its execution ends (shared/workers.c), and the leader reads them
 * back and prints them per worker after its own (explain.c).
 *
 * IDENTIFICATION
 *	  src/nodes/customscan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "commands/explain.h"

#include "nodes/customscan.h"
#include "nodes/explain.h"
#include "shared/workers.h"

/* room for any node's figures, aligned for the structs they are */
typedef union CompSpillFiguresBuffer
{
	char		data[COMPSPILL_WORKER_FIGURES_SIZE];
	int64		align_int;
	double		align_double;
} CompSpillFiguresBuffer;

/*
 * Make the CustomScan that takes the place of the native plan node: its
 * whole Plan header, made a CustomScan again, with the node's flags,
 * custom_private and methods.
 */
CustomScan *
CompSpillMakeCustomScan(const Plan *native, uint32 flags,
						List *custom_private,
						const CustomScanMethods *methods)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan = *native;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.scanrelid = 0;
	cscan->flags = flags;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private = custom_private;
	cscan->custom_scan_tlist = NIL;
	cscan->custom_relids = NULL;
	cscan->methods = methods;
	return cscan;
}

/*
 * Allocate a node's executor state (size bytes, zeroed, a CustomScanState
 * first) with its executor methods.
 */
Node *
CompSpillNewScanState(Size size, const CustomExecMethods *methods)
{
	CustomScanState *css;

	Assert(size >= sizeof(CustomScanState));
	css = palloc0(size);
	NodeSetTag(css, T_CustomScanState);
	css->methods = methods;
	return (Node *) css;
}

/*
 * At the node's start: remember how its figures are filled and printed,
 * and, in the leader of EXPLAIN ANALYZE, watch for the workers'.
 */
void
CompSpillNodeFiguresBegin(CompSpillNodeFigures *nf, CustomScanState *node,
						  Size size, CompSpillFiguresFn fill,
						  CompSpillExplainWorkerFn print)
{
	StaticAssertStmt(sizeof(CompSpillFiguresBuffer) ==
					 COMPSPILL_WORKER_FIGURES_SIZE,
					 "figures buffer is not a worker entry's size");
	Assert(size <= COMPSPILL_WORKER_FIGURES_SIZE);
	nf->size = size;
	nf->fill = fill;
	nf->print = print;
	nf->published = false;
	nf->watch = CompSpillWorkersWatchBegin(&node->ss.ps);
}

/*
 * In a parallel worker, publish the node's figures for the leader's
 * EXPLAIN, once: when its execution ends, before the leader is told the
 * worker is done, or at the node's end if it did not get there.
 */
void
CompSpillNodeFiguresPublish(CompSpillNodeFigures *nf, CustomScanState *node)
{
	CompSpillFiguresBuffer f;

	if (!IsParallelWorker() || nf->published)
		return;
	nf->published = true;
	if (nf->fill(node, f.data))
		CompSpillWorkersPublish(&node->ss.ps, f.data, nf->size);
}

/*
 * At the node's end: a worker publishes what it did not yet, the leader
 * stops watching.
 */
void
CompSpillNodeFiguresEnd(CompSpillNodeFigures *nf, CustomScanState *node)
{
	CompSpillNodeFiguresPublish(nf, node);
	CompSpillWorkersWatchEnd(nf->watch);
}

/*
 * EXPLAIN ANALYZE: print the node's own figures, if it has any, then each
 * parallel worker's.
 */
void
CompSpillNodeFiguresExplain(CompSpillNodeFigures *nf, CustomScanState *node,
							ExplainState *es)
{
	CompSpillFiguresBuffer f;

	if (!es->analyze)
		return;
	if (nf->fill(node, f.data))
		nf->print(f.data, es);
	CompSpillExplainWorkers(&node->ss.ps, nf->watch, f.data, nf->size,
							nf->print, es);
}
