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

#include "compspill.h"

/* activity.c */
typedef struct CompSpillActivity CompSpillActivity;

extern Size CompSpillActivityShmemSize(void);
extern void CompSpillActivityShmemInit(void);
extern CompSpillActivity *CompSpillActivityBegin(const char *what,
												 const CompSpillStats *st);
extern void CompSpillActivityPublish(CompSpillActivity *act,
									 CompSpillPhase phase, int pass,
									 int npasses);

#endif							/* COMPSPILL_ACTIVITY_H */
