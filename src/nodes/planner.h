/*-------------------------------------------------------------------------
 *
 * planner.h
 *	  Plan rewrite: the planner hook that puts the CompSpill nodes in
 *	  finished plans (planner.c).
 *
 * IDENTIFICATION
 *	  src/nodes/planner.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_PLANNER_H
#define COMPSPILL_PLANNER_H

/* planner.c */
extern void CompSpillInstallPlannerHook(void);

#endif							/* COMPSPILL_PLANNER_H */
