/*-------------------------------------------------------------------------
 *
 * activity.h
 *	  compspill_activity: the spills in progress, one slot per backend
 *	  (activity.c).
 *
 * The spill object publishes its figures and phase through it.
 *
 * IDENTIFICATION
 *	  src/shared/activity.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_ACTIVITY_H
#define COMPSPILL_ACTIVITY_H

#include "base/spillstats.h"

/*
 * What a spill is doing, as compspill_activity shows it.  The sorter reads
 * its input and writes runs in turns, then merges; a store takes rows and
 * gives them back in turns.
 */
typedef enum CompSpillPhase
{
	COMPSPILL_PHASE_READING_INPUT,
	COMPSPILL_PHASE_WRITING_RUN,
	COMPSPILL_PHASE_MERGING,	/* an intermediate pass, or the final merge
								 * into a store */
	COMPSPILL_PHASE_RETURNING,	/* the final merge, streamed to the caller */
	COMPSPILL_PHASE_STORING		/* a Material's or CTE's store */
} CompSpillPhase;

typedef struct CompSpillActivity CompSpillActivity;

extern void CompSpillActivityShmemRequest(void);
extern void CompSpillActivityShmemInit(void);
extern CompSpillActivity *CompSpillActivityBegin(const char *what,
												 const CompSpillStats *st);
extern void CompSpillActivityPublish(CompSpillActivity *act,
									 CompSpillPhase phase, int pass,
									 int npasses);

#endif							/* COMPSPILL_ACTIVITY_H */
