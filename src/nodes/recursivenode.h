/*-------------------------------------------------------------------------
 *
 * recursivenode.h
 *	  The "CompSpill Recursive Union" and "CompSpill WorkTable Scan"
 *	  CustomScans: their registration, and the nodes the plan rewrite puts
 *	  in place of the native pair (recursivenode.c).
 *
 * IDENTIFICATION
 *	  src/nodes/recursivenode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_RECURSIVENODE_H
#define COMPSPILL_RECURSIVENODE_H

#include "nodes/plannodes.h"

/* recursivenode.c */
extern void CompSpillRegisterRecursiveNodes(void);
extern Plan *CompSpillMakeRecursiveUnionNode(RecursiveUnion *ru);
extern Plan *CompSpillMakeWorkTableNode(WorkTableScan *wts,
										RecursiveUnion *ru);

#endif							/* COMPSPILL_RECURSIVENODE_H */
