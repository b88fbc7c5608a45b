/*-------------------------------------------------------------------------
 *
 * workers.h
 *	  Per-worker figures of parallel workers, in shared memory
 *	  (workers.c).
 *
 * A node run by parallel workers publishes what it did in each worker, and
 * the leader's node reads it back for EXPLAIN ANALYZE.  The figures are an
 * opaque blob of at most COMPSPILL_WORKER_FIGURES_SIZE bytes to this
 * layer; each node says what it keeps in them.
 *
 * IDENTIFICATION
 *	  src/shared/workers.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_WORKERS_H
#define COMPSPILL_WORKERS_H

/* room for one node's figures in one worker */
#define COMPSPILL_WORKER_FIGURES_SIZE	512

/* compspill.max_worker_figures: its default and its largest value */
#define COMPSPILL_WORKER_FIGURES_DEFAULT	256
#define COMPSPILL_MAX_WORKER_FIGURES		100000

extern int	compspill_max_worker_figures;

/* Why the leader has no figures, or not all, for its workers */
typedef enum CompSpillWorkersProblem
{
	COMPSPILL_WORKERS_OK,		/* every worker's figures are there */
	COMPSPILL_WORKERS_NOT_PRELOADED,	/* no shared memory */
	COMPSPILL_WORKERS_FULL,		/* the table had no room for some */
	COMPSPILL_WORKERS_AMBIGUOUS /* the same statement runs twice at once in
								 * this backend: the workers cannot tell
								 * which execution they belong to */
} CompSpillWorkersProblem;

/* workers.c */
typedef struct CompSpillWorkersWatch CompSpillWorkersWatch;
struct PlanState;

extern void CompSpillWorkersShmemRequest(void);
extern void CompSpillWorkersShmemInit(void);
extern CompSpillWorkersWatch *CompSpillWorkersWatchBegin(struct PlanState *ps);
extern void CompSpillWorkersWatchEnd(CompSpillWorkersWatch *watch);
extern void CompSpillWorkersPublish(struct PlanState *ps, const void *figures,
									Size size);
extern bool CompSpillWorkersFetch(CompSpillWorkersWatch *watch, int worker,
								  void *figures, Size size);
extern CompSpillWorkersProblem CompSpillWorkersCheck(CompSpillWorkersWatch *watch);

#endif							/* COMPSPILL_WORKERS_H */
