/*-------------------------------------------------------------------------
 *
 * merge.h
 *	  Binary-heap merge of runs and the planning of merge passes (merge.c).
 *
 * Knows runs (spill/run.h); its caller is the sorter.
 *
 * IDENTIFICATION
 *	  src/sort/merge.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_MERGE_H
#define COMPSPILL_MERGE_H

#include "executor/tuptable.h"
#include "utils/sortsupport.h"

#include "base/spillstats.h"
#include "spill/run.h"

/* merge.c */
typedef struct CompSpillMerge CompSpillMerge;

extern int	CompSpillMergeRuns(CompSpillSpiller *sp, CompSpillStats *stats,
							   TupleDesc tupdesc, SortSupport ssup, int nkeys,
							   CompSpillRun *runs, int nruns,
							   int64 allowed_mem,
							   int64 (*used_mem) (void *), void *arg,
							   CompSpillRun *out);
extern CompSpillMerge *CompSpillMergeBegin(CompSpillSpiller *sp,
										   CompSpillStats *stats,
										   TupleDesc tupdesc,
										   SortSupport ssup, int nkeys,
										   CompSpillRun *runs, int nruns,
										   int64 allowed_mem, bool last_writes,
										   int64 (*used_mem) (void *),
										   void *arg);
extern TupleTableSlot *CompSpillMergeNext(CompSpillMerge *m,
										  TupleTableSlot *virtslot,
										  TupleTableSlot *minslot);
extern int64 CompSpillMergeProbeRun(CompSpillSpiller *sp, CompSpillRun *run,
									int64 *frame_part);
extern void CompSpillMergeRewind(CompSpillMerge *m);
extern void CompSpillMergeEnd(CompSpillMerge *m);

#endif							/* COMPSPILL_MERGE_H */
