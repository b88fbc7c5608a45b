/*-------------------------------------------------------------------------
 *
 * ctenode.h
 *	  The "CompSpill CTE Scan" CustomScan: its registration, and the
 *	  node the plan rewrite puts in place of the native one (ctenode.c).
 *
 * IDENTIFICATION
 *	  src/nodes/ctenode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_CTENODE_H
#define COMPSPILL_CTENODE_H

#include "nodes/plannodes.h"

/* ctenode.c */
extern void CompSpillRegisterCteNode(void);
extern Plan *CompSpillMakeCteNode(CteScan *cte, PlannedStmt *stmt);

#endif							/* COMPSPILL_CTENODE_H */
