/*-------------------------------------------------------------------------
 *
 * sortkeys.h
 *	  The sort keys of the CompSpill Sort and Incremental Sort nodes: kept
 *	  in the plan, read back, printed by EXPLAIN (sortkeys.c).
 *
 * IDENTIFICATION
 *	  src/nodes/sortkeys.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_SORTKEYS_H
#define COMPSPILL_SORTKEYS_H

#include "nodes/pg_list.h"
#include "nodes/plannodes.h"

#include "sort/sorter.h"

struct ExplainState;

/* the sort keys' lists at the head of custom_private */
#define COMPSPILL_SORTKEYS_NLISTS	4

/* sortkeys.c */
extern List *CompSpillSortKeysPlan(Sort *sort);
extern void CompSpillSortKeysRead(CustomScan *cscan, int first,
								  CompSpillSortSpec *spec);
extern void CompSpillSortKeysExplain(const char *label, Plan *plan,
									 const CompSpillSortSpec *spec, int nkeys,
									 bool order, List *ancestors,
									 struct ExplainState *es);

#endif							/* COMPSPILL_SORTKEYS_H */
