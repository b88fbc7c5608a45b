/*-------------------------------------------------------------------------
 *
 * incsortnode.h
 *	  The "CompSpill Incremental Sort" CustomScan (incsortnode.c).
 *
 * IDENTIFICATION
 *	  src/nodes/incsortnode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_INCSORTNODE_H
#define COMPSPILL_INCSORTNODE_H

#include "nodes/plannodes.h"

/* Name under which the node's methods are registered */
#define COMPSPILL_INCSORT_NAME	"CompSpill Incremental Sort"

/* incsortnode.c */
extern void CompSpillRegisterIncSortNode(void);
extern Plan *CompSpillMakeIncSortNode(IncrementalSort *isort,
									  PlannedStmt *stmt);

#endif							/* COMPSPILL_INCSORTNODE_H */
