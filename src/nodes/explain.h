/*-------------------------------------------------------------------------
 *
 * explain.h
 *	  EXPLAIN ANALYZE output shared by the CompSpill nodes (explain.c).
 *
 * IDENTIFICATION
 *	  src/nodes/explain.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_EXPLAIN_H
#define COMPSPILL_EXPLAIN_H

#include "nodes/pg_list.h"

#include "base/spillstats.h"

/*
 * What EXPLAIN shows of the groups of one kind (full-sort, pre-sorted) of
 * an incremental sort: how many, the sort methods used (TuplesortMethod
 * bits, so that compspill's and tuplesort's share their names), and the
 * memory of the groups sorted in memory, the disk of those that spilled.
 */
typedef struct CompSpillGroupInfo
{
	int64		groups;
	int			methods;
	int64		mem_total_kb;
	int64		mem_peak_kb;
	int64		disk_total_kb;
	int64		disk_peak_kb;
} CompSpillGroupInfo;

/* explain.c */
struct ExplainState;
struct Tuplestorestate;
struct PlanState;
struct CompSpillWorkersWatch;

/* prints the figures one parallel worker published for a node */
typedef void (*CompSpillExplainWorkerFn) (const void *figures,
										  struct ExplainState *es);

extern void CompSpillExplainIndent(struct ExplainState *es);
extern void CompSpillExplainSpill(CompSpillStats *st, struct ExplainState *es);
extern void CompSpillExplainStore(bool spilled, CompSpillStats *st,
								  struct ExplainState *es);
extern void CompSpillExplainStorage(bool spilled, CompSpillStats *st,
									struct ExplainState *es);
extern void CompSpillExplainTuplestores(struct Tuplestorestate *const *stores,
										int n, struct ExplainState *es);
extern void CompSpillExplainGroups(const char *label,
								   const CompSpillGroupInfo *g,
								   struct ExplainState *es);
extern void CompSpillExplainWorkers(struct PlanState *ps,
									struct CompSpillWorkersWatch *watch,
									void *figures, Size size,
									CompSpillExplainWorkerFn print,
									struct ExplainState *es);

#endif							/* COMPSPILL_EXPLAIN_H */
