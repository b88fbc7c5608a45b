/*-------------------------------------------------------------------------
 *
 * customscan.h
 *	  What every CompSpill CustomScan shares: its plan node made from the
 *	  native node's, its executor state, and the figures a parallel
 *	  worker's node publishes for the leader's EXPLAIN (customscan.c).
 *
 * IDENTIFICATION
 *	  src/nodes/customscan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_CUSTOMSCAN_H
#define COMPSPILL_CUSTOMSCAN_H

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#include "nodes/explain.h"

struct CompSpillWorkersWatch;

/* fills figures with what the node prints; false if it has none yet */
typedef bool (*CompSpillFiguresFn) (CustomScanState *node, void *figures);

/*
 * A node's figures for EXPLAIN ANALYZE, its own and its parallel workers':
 * how to fill and print them, the leader's watch for the workers', and
 * whether a worker has published its own.
 */
typedef struct CompSpillNodeFigures
{
	Size		size;			/* of the node's figures struct */
	CompSpillFiguresFn fill;
	CompSpillExplainWorkerFn print;
	struct CompSpillWorkersWatch *watch;	/* the leader's */
	bool		published;		/* a worker's, once */
} CompSpillNodeFigures;

/* customscan.c */
extern CustomScan *CompSpillMakeCustomScan(const Plan *native, uint32 flags,
										   List *custom_private,
										   const CustomScanMethods *methods);
extern Node *CompSpillNewScanState(Size size,
								   const CustomExecMethods *methods);
extern void CompSpillNodeFiguresBegin(CompSpillNodeFigures *nf,
									  CustomScanState *node, Size size,
									  CompSpillFiguresFn fill,
									  CompSpillExplainWorkerFn print);
extern void CompSpillNodeFiguresPublish(CompSpillNodeFigures *nf,
										CustomScanState *node);
extern void CompSpillNodeFiguresEnd(CompSpillNodeFigures *nf,
									CustomScanState *node);
extern void CompSpillNodeFiguresExplain(CompSpillNodeFigures *nf,
										CustomScanState *node,
										struct ExplainState *es);

#endif							/* COMPSPILL_CUSTOMSCAN_H */
