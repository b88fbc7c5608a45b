/*-------------------------------------------------------------------------
 *
 * nodenames.h
 *	  The names compspill's CustomScan methods are registered under, as
 *	  EXPLAIN shows them.
 *
 * IDENTIFICATION
 *	  src/nodes/nodenames.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_NODENAMES_H
#define COMPSPILL_NODENAMES_H

#define COMPSPILL_SORT_NAME		"CompSpill Sort"
#define COMPSPILL_MATERIAL_NAME	"CompSpill Material"
#define COMPSPILL_CTE_NAME		"CompSpill CTE Scan"
#define COMPSPILL_RECURSIVE_UNION_NAME	"CompSpill Recursive Union"
#define COMPSPILL_WORKTABLE_NAME	"CompSpill WorkTable Scan"

#endif							/* COMPSPILL_NODENAMES_H */
