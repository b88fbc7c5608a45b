/*-------------------------------------------------------------------------
 *
 * rowscan.h
 *	  A scan node over rows a compspill node keeps: the CTE Scan's and the
 *	  WorkTable Scan's scan tuple, slots and EvalPlanQual rechecks
 *	  (rowscan.c).
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

/*
 * A scan's rows as kept (rowslot: minimal tuples of the scanned entry's
 * columns), and whether its scan tuple adds the whole row as a value.
 */
typedef struct CompSpillRowScan
{
	Index		rti;			/* the range table entry scanned */
	TupleTableSlot *rowslot;	/* a row as kept */
	bool		wholerow;		/* scan tuple: the columns, then the row */
} CompSpillRowScan;

/* rowscan.c */
extern void CompSpillRowScanPlan(CustomScan *cscan, Index rti, List *columns);
extern void CompSpillRowScanBegin(CompSpillRowScan *rs, ScanState *ss,
								  EState *estate, Index rti);
extern TupleTableSlot *CompSpillRowScanStore(CompSpillRowScan *rs,
											 ScanState *ss,
											 TupleTableSlot *row);
extern bool CompSpillRowScanRecheck(CompSpillRowScan *rs, ScanState *ss,
									ExecScanAccessMtd next_row);

#endif							/* COMPSPILL_ROWSCAN_H */
