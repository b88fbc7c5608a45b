/*-------------------------------------------------------------------------
 *
 * epq.h
 *	  EvalPlanQual rechecks for compspill's scans of a range table entry
 *	  (epq.c).
 *
 * IDENTIFICATION
 *	  src/nodes/epq.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_EPQ_H
#define COMPSPILL_EPQ_H

#include "nodes/execnodes.h"

/* epq.c */
extern bool CompSpillEpqScanFetch(ScanState *ss, Index rti,
								  TupleTableSlot *slot,
								  ExecScanAccessMtd next);
extern void CompSpillScanSlotInit(ScanState *ss, EState *estate);

#endif							/* COMPSPILL_EPQ_H */
