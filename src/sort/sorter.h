/*-------------------------------------------------------------------------
 *
 * sorter.h
 *	  The sorter: tuples within work_mem, sorted in memory, runs cut and
 *	  merged when they do not fit (sorter.c).
 *
 * Its caller is the sort node; it spills through the run layer and
 * merges through merge.c, and knows no files or codecs.
 *
 * IDENTIFICATION
 *	  src/sort/sorter.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_SORTER_H
#define COMPSPILL_SORTER_H

#include "executor/tuptable.h"

#include "compspill.h"

/* sorter.c */
typedef struct CompSpillSorter CompSpillSorter;

typedef struct CompSpillSortSpec
{
	int			nkeys;
	AttrNumber *attnums;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nulls_first;
	double		est_rows;		/* the plan's estimate of the input */
	int			est_width;
	bool		random_access;	/* backward reads, mark and restore */
} CompSpillSortSpec;

extern CompSpillSorter *CompSpillSorterBegin(TupleDesc tupdesc,
											 const CompSpillSortSpec *spec,
											 int work_mem_kb,
											 const CompSpillSettings *set);
extern void CompSpillSorterPut(CompSpillSorter *sorter,
							   TupleTableSlot *slot);
extern void CompSpillSorterFinish(CompSpillSorter *sorter);
extern TupleTableSlot *CompSpillSorterGet(CompSpillSorter *sorter,
										  bool forward);
extern void CompSpillSorterRewind(CompSpillSorter *sorter);
extern void CompSpillSorterMarkPos(CompSpillSorter *sorter);
extern void CompSpillSorterRestorePos(CompSpillSorter *sorter);
extern void CompSpillSorterEnd(CompSpillSorter *sorter);
extern bool CompSpillSorterSpilled(CompSpillSorter *sorter);
extern int64 CompSpillSorterSpaceUsed(CompSpillSorter *sorter);
extern CompSpillStats *CompSpillSorterStats(CompSpillSorter *sorter);

#endif							/* COMPSPILL_SORTER_H */
