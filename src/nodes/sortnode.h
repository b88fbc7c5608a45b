/*-------------------------------------------------------------------------
 *
 * sortnode.h
 *	  The "CompSpill Sort" CustomScan: its registration, and the
 *	  node the plan rewrite puts in place of the native one (sortnode.c).
 *
 * IDENTIFICATION
 *	  src/nodes/sortnode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_SORTNODE_H
#define COMPSPILL_SORTNODE_H

#include "nodes/plannodes.h"

/* sortnode.c */
extern void CompSpillRegisterSortNode(void);
extern Plan *CompSpillMakeSortNode(Sort *sort);

#endif							/* COMPSPILL_SORTNODE_H */
