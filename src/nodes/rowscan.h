/*-------------------------------------------------------------------------
 *
 * rowscan.h
 *	  A scan node over rows a compspill node keeps: what the CTE Scan and
 *	  the WorkTable Scan share, their plan's scan tuple, their start, scan,
 *	  EvalPlanQual rechecks and EXPLAIN (rowscan.c).
 *
 * IDENTIFICATION
 *	  src/nodes/rowscan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_ROWSCAN_H
#define COMPSPILL_ROWSCAN_H

#include "nodes/execnodes.h"
#include "nodes/plannodes.h"

struct ExplainState;

/*
 * The executor state a CTE Scan or WorkTable Scan node starts with: the
 * node's rows as kept (rowslot: minimal tuples of the scanned entry's
 * columns), read by the node's next_row, and whether its scan tuple adds
 * the whole row as a value.
 */
typedef struct CompSpillRowScan
{
	CustomScanState css;		/* must be first */
	Index		rti;			/* the range table entry scanned */
	TupleTableSlot *rowslot;	/* a row as kept */
	bool		wholerow;		/* scan tuple: the columns, then the row */
	bool		projection_ready;	/* the projection compiled */
	ExecScanAccessMtd next_row; /* the node's next row, in rowslot */
} CompSpillRowScan;

/* rowscan.c */
extern bool CompSpillRowScanPlan(CustomScan *cscan, Index rti,
								 List *source_tlist);
extern void CompSpillRowScanBegin(CompSpillRowScan *rs, EState *estate,
								  Index rti, ExecScanAccessMtd next_row,
								  bool projection_later);
extern TupleTableSlot *CompSpillRowScanExec(CustomScanState *node);
extern void CompSpillRowScanReScan(CompSpillRowScan *rs);
extern void CompSpillRowScanExplain(CompSpillRowScan *rs,
									struct ExplainState *es);

#endif							/* COMPSPILL_ROWSCAN_H */
