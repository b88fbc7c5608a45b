/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Shared memory: cumulative statistics per statement, the cluster-wide
 *	  cap on spill space, the log line (stats.c).
 *
 * Knows the spill figures (CompSpillStats).  The spill file claims
 * space through it; the sorter and store report finished spills.
 *
 * IDENTIFICATION
 *	  src/shared/stats.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_STATS_H
#define COMPSPILL_STATS_H

#include "base/spillstats.h"

/* stats.c */

/*
 * compspill.max_statements' maximum: a million statements take some 150MB
 * of shared memory, and evicting from a full table sorts pointers to all
 * of them (8MB) under the lock; more would be absurd.
 */
#define COMPSPILL_MAX_STATEMENTS	1000000

typedef struct CompSpillSpaceClaim CompSpillSpaceClaim;

extern int	compspill_max_statements;

extern void CompSpillStatsShmemRequest(void);
extern void CompSpillStatsShmemInit(void);
extern CompSpillSpaceClaim *CompSpillSpaceClaimCreate(void);
extern void CompSpillSpaceGrow(CompSpillSpaceClaim *claim, Size bytes);
extern void CompSpillSpaceDone(CompSpillSpaceClaim *claim);
extern bool CompSpillSpaceHeld(int64 *backend, int64 *cluster);
extern void CompSpillReportSpill(const char *what, const CompSpillStats *st);

#endif							/* COMPSPILL_STATS_H */
