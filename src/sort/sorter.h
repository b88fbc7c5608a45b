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
#include "utils/memutils.h"

#include "base/spillstats.h"

/* sorter.c */
typedef struct CompSpillSorter CompSpillSorter;

/* where a sort with random access kept its merged rows (EXPLAIN VERBOSE) */
typedef enum CompSpillMergedFrames
{
	COMPSPILL_MERGED_NONE = 0,	/* in memory, or no merge yet */
	COMPSPILL_MERGED_ROW_FRAMES,
	COMPSPILL_MERGED_COLUMN_FRAMES,
} CompSpillMergedFrames;

/*
 * The next size of an array of entries of entry_size bytes indexed by an
 * int and allocated in one huge chunk, that has size entries now: double,
 * but never past INT_MAX entries nor MaxAllocHugeSize bytes.  A result that is not larger means the
 * array is at its limit.  The sorter's SortTuple array grows by it; a pure
 * function, so that test/unit checks the limits no machine can reach.
 */
static inline int64
CompSpillGrowArraySize(int size, Size entry_size)
{
	int64		limit = Min((int64) INT_MAX,
							(int64) ((MaxAllocHugeSize - 1) / entry_size));

	return Max(Min((int64) size * 2, limit), (int64) size);
}

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
	const char *what;			/* the node, for the log line and
								 * compspill_activity; NULL: "sort" */
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
extern void CompSpillSorterReset(CompSpillSorter *sorter);
extern void CompSpillSorterEnd(CompSpillSorter *sorter);
extern bool CompSpillSorterSpilled(CompSpillSorter *sorter);
extern CompSpillMergedFrames CompSpillSorterMergedFrames(CompSpillSorter *sorter);
extern int64 CompSpillSorterSpaceUsed(CompSpillSorter *sorter);
extern CompSpillStats *CompSpillSorterStats(CompSpillSorter *sorter);

#endif							/* COMPSPILL_SORTER_H */
