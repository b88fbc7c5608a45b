/*-------------------------------------------------------------------------
 *
 * workers.c
 *	  Per-worker figures of parallel workers, in shared memory: what a
 *	  CompSpill node did in each parallel worker, published by the worker
 *	  and read back by the leader's EXPLAIN ANALYZE.
 *
 * PostgreSQL hands a CustomScan dynamic shared memory only when the node is
 * parallel-aware (which EXPLAIN shows as "Parallel Custom Scan" and which
 * is meant for nodes that divide a scan), and collects per-worker details
 * only for its own node types.  So compspill keeps a table of its own in
 * the shared memory it asks for when loaded from shared_preload_libraries;
 * without it, there are no per-worker figures, and EXPLAIN says so.
 *
 * The table is compspill.max_worker_figures entries under one lock, taken
 * once when the leader's node starts and ends, once per worker when its
 * node's execution ends, and once per worker when the leader prints the
 * node: never per row.  An entry is one of two kinds:
 *
 * - A watch, made by the leader's node when it starts (ExecutorStart, in
 *   the leader, before any worker is launched), only for EXPLAIN ANALYZE
 *   (the query is instrumented) of a parallel plan, and only for a node
 *   that may run in a worker (its plan is parallel-safe).  It holds the
 *   leader's pid, an execution number the leader counts per backend, the
 *   plan node's id and a hash of the statement's text.
 * - A worker's figures: the leader's pid, the execution number, the plan
 *   node's id and ParallelWorkerNumber, and an opaque blob of the node's.
 *
 * A worker knows its leader (MyProc->lockGroupLeader), the plan node's id
 * and the statement's text (the leader sends it), not the execution
 * number: it finds the leader's watch for the same node and text and
 * takes the number from there.  Executions of one leader that follow each
 * other never meet, since a watch goes away when its node ends; two that
 * run at once in one backend (a statement run again by a function called
 * above its own Gather) could not be told apart by their workers, so their
 * watches are marked ambiguous, their workers publish nothing, and EXPLAIN
 * says why.
 *
 * A worker's node publishes its figures when its execution ends
 * (ShutdownCustomScan, at the end of the worker's ExecutorRun, before the
 * worker's tuple queue is detached; the node's End if shutdown was not
 * reached).  The leader's EXPLAIN runs after ExecutorFinish, when Gather
 * and Gather Merge have waited for their workers, and its node's End
 * comes after EXPLAIN has printed: there the leader removes its watch and
 * every worker entry of it.  After an error, the reset callback of the
 * watch's memory context (the query's) removes them, and a backend that
 * exits removes all of its own.  A Gather that rescans relaunches its
 * workers with the same numbers: a worker's new figures replace its old
 * ones, as native Sort's per-worker figures do.
 *
 * When the table is full, a watch is not made, or a worker's figures are
 * dropped, and the leader's EXPLAIN says that figures were lost.
 *
 * IDENTIFICATION
 *	  src/shared/workers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "shared/workers.h"

/* the worker number of a watch */
#define COMPSPILL_WATCH		(-1)

/* One watch or one worker's figures */
typedef struct CompSpillWorkerEntry
{
	int			leader_pid;		/* 0: the entry is free */
	uint32		exec_id;		/* the leader's execution number */
	int			plan_node_id;
	int			worker;			/* ParallelWorkerNumber, or COMPSPILL_WATCH */
	uint32		text_hash;		/* a watch's: hash of the statement's text */
	bool		ambiguous;		/* a watch's: see the file's header */
	bool		lost;			/* a watch's: a worker found no room */
	Size		size;			/* bytes of figures used */
	char		figures[COMPSPILL_WORKER_FIGURES_SIZE];
} CompSpillWorkerEntry;

typedef struct CompSpillWorkersShared
{
	LWLock	   *lock;			/* protects the entries */
	int			nentries;
	CompSpillWorkerEntry entries[FLEXIBLE_ARRAY_MEMBER];
} CompSpillWorkersShared;

/* The leader's node's hold on its watch, in the query's memory context */
struct CompSpillWorkersWatch
{
	uint32		exec_id;
	int			plan_node_id;
	bool		registered;		/* its watch entry is in the table */
	MemoryContextCallback cb;
};

int			compspill_max_worker_figures = COMPSPILL_WORKER_FIGURES_DEFAULT;

static CompSpillWorkersShared *compspill_workers = NULL;
static uint32 compspill_next_exec = 0;
static bool compspill_workers_exit_registered = false;

/*
 * Size of the table in shared memory.
 */
static Size
compspill_workers_size(void)
{
	return add_size(offsetof(CompSpillWorkersShared, entries),
					mul_size(compspill_max_worker_figures,
							 sizeof(CompSpillWorkerEntry)));
}

/*
 * Ask for the table's shared memory and its lock; from the shared memory
 * request hook.
 */
void
CompSpillWorkersShmemRequest(void)
{
	RequestAddinShmemSpace(compspill_workers_size());
	RequestNamedLWLockTranche("compspill workers", 1);
}

/*
 * Attach to the table, creating it in the postmaster.  The caller holds
 * AddinShmemInitLock.
 */
void
CompSpillWorkersShmemInit(void)
{
	bool		found;

	compspill_workers = ShmemInitStruct("compspill workers",
										compspill_workers_size(), &found);
	if (!found)
	{
		memset(compspill_workers, 0, compspill_workers_size());
		compspill_workers->lock =
			&(GetNamedLWLockTranche("compspill workers"))->lock;
		compspill_workers->nentries = compspill_max_worker_figures;
	}
}

/* Hash the statement's text, which the leader sends its workers */
static uint32
compspill_text_hash(EState *estate)
{
	const char *text = estate->es_sourceText;

	if (text == NULL)
		return 0;
	return hash_bytes((const unsigned char *) text, (int) strlen(text));
}

/* Remove the entries of one execution of this leader, or all of its own */
static void
compspill_workers_forget(uint32 exec_id, bool all)
{
	if (compspill_workers == NULL)
		return;
	LWLockAcquire(compspill_workers->lock, LW_EXCLUSIVE);
	for (int i = 0; i < compspill_workers->nentries; i++)
	{
		CompSpillWorkerEntry *e = &compspill_workers->entries[i];

		if (e->leader_pid == MyProcPid && (all || e->exec_id == exec_id))
			e->leader_pid = 0;
	}
	LWLockRelease(compspill_workers->lock);
}

/* The backend exits: remove whatever it still has in the table */
static void
compspill_workers_at_exit(int code pg_attribute_unused(),
						  Datum arg pg_attribute_unused())
{
	compspill_workers_forget(0, true);
}

/* The watch's memory context goes away (an error): remove its entries */
static void
compspill_watch_reset(void *arg)
{
	CompSpillWorkersWatch *watch = (CompSpillWorkersWatch *) arg;

	CompSpillWorkersWatchEnd(watch);
}

/*
 * In the leader, start watching for the figures the workers will publish
 * for the node ps, when that can be of use: under EXPLAIN ANALYZE, in a
 * parallel plan, for a node that may run in a worker.  Return NULL when
 * not of use; otherwise a watch, made in CurrentMemoryContext (which must
 * be the query's), even when there is no table or no room in it, so that
 * EXPLAIN can say so.
 */
CompSpillWorkersWatch *
CompSpillWorkersWatchBegin(PlanState *ps)
{
	EState	   *estate = ps->state;
	CompSpillWorkersWatch *watch;
	CompSpillWorkerEntry *free_entry = NULL;
	uint32		hash;
	bool		ambiguous = false;

	if (IsParallelWorker() || estate->es_instrument == 0 ||
		!ps->plan->parallel_safe || estate->es_plannedstmt == NULL ||
		!estate->es_plannedstmt->parallelModeNeeded)
		return NULL;

	watch = palloc0(sizeof(CompSpillWorkersWatch));
	watch->plan_node_id = ps->plan->plan_node_id;
	watch->exec_id = ++compspill_next_exec;
	if (compspill_workers == NULL)
		return watch;

	if (!compspill_workers_exit_registered)
	{
		before_shmem_exit(compspill_workers_at_exit, (Datum) 0);
		compspill_workers_exit_registered = true;
	}
	watch->cb.func = compspill_watch_reset;
	watch->cb.arg = watch;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &watch->cb);

	hash = compspill_text_hash(estate);
	LWLockAcquire(compspill_workers->lock, LW_EXCLUSIVE);
	for (int i = 0; i < compspill_workers->nentries; i++)
	{
		CompSpillWorkerEntry *e = &compspill_workers->entries[i];

		if (e->leader_pid == 0)
		{
			if (free_entry == NULL)
				free_entry = e;
		}
		else if (e->leader_pid == MyProcPid && e->worker == COMPSPILL_WATCH &&
				 e->plan_node_id == watch->plan_node_id &&
				 e->text_hash == hash)
		{
			/* the same node of the same statement, still running */
			e->ambiguous = true;
			ambiguous = true;
		}
	}
	if (free_entry != NULL)
	{
		free_entry->leader_pid = MyProcPid;
		free_entry->exec_id = watch->exec_id;
		free_entry->plan_node_id = watch->plan_node_id;
		free_entry->worker = COMPSPILL_WATCH;
		free_entry->text_hash = hash;
		free_entry->ambiguous = ambiguous;
		free_entry->lost = false;
		free_entry->size = 0;
		watch->registered = true;
	}
	LWLockRelease(compspill_workers->lock);
	return watch;
}

/*
 * In the leader, stop watching: remove the watch and the figures of its
 * workers.  watch may be NULL.
 */
void
CompSpillWorkersWatchEnd(CompSpillWorkersWatch *watch)
{
	if (watch == NULL || !watch->registered)
		return;
	watch->registered = false;
	compspill_workers_forget(watch->exec_id, false);
}

/* Find the entry of a leader's execution, node and worker; lock held */
static CompSpillWorkerEntry *
compspill_workers_find(int leader_pid, uint32 exec_id, int plan_node_id,
					   int worker)
{
	for (int i = 0; i < compspill_workers->nentries; i++)
	{
		CompSpillWorkerEntry *e = &compspill_workers->entries[i];

		if (e->leader_pid == leader_pid && e->exec_id == exec_id &&
			e->plan_node_id == plan_node_id && e->worker == worker)
			return e;
	}
	return NULL;
}

/*
 * In a parallel worker, publish the figures of the node ps for the
 * leader, replacing any this worker number published before (a Gather
 * that rescans relaunches its workers).  Nothing happens when the leader
 * does not watch the node.
 */
void
CompSpillWorkersPublish(PlanState *ps, const void *figures, Size size)
{
	PGPROC	   *leader = MyProc ? MyProc->lockGroupLeader : NULL;
	int			leader_pid;
	int			node_id = ps->plan->plan_node_id;
	uint32		hash;
	CompSpillWorkerEntry *watch = NULL;
	CompSpillWorkerEntry *entry;

	if (compspill_workers == NULL || !IsParallelWorker() ||
		ps->state->es_instrument == 0 || leader == NULL)
		return;
	Assert(size <= COMPSPILL_WORKER_FIGURES_SIZE);
	leader_pid = leader->pid;
	hash = compspill_text_hash(ps->state);

	LWLockAcquire(compspill_workers->lock, LW_EXCLUSIVE);
	for (int i = 0; i < compspill_workers->nentries; i++)
	{
		CompSpillWorkerEntry *e = &compspill_workers->entries[i];

		if (e->leader_pid == leader_pid && e->worker == COMPSPILL_WATCH &&
			e->plan_node_id == node_id && e->text_hash == hash)
		{
			watch = e;
			break;
		}
	}
	if (watch == NULL || watch->ambiguous)
	{
		LWLockRelease(compspill_workers->lock);
		return;
	}

	entry = compspill_workers_find(leader_pid, watch->exec_id, node_id,
								   ParallelWorkerNumber);
	if (entry == NULL)
	{
		for (int i = 0; i < compspill_workers->nentries; i++)
		{
			if (compspill_workers->entries[i].leader_pid == 0)
			{
				entry = &compspill_workers->entries[i];
				break;
			}
		}
	}
	if (entry == NULL)
		watch->lost = true;
	else
	{
		entry->leader_pid = leader_pid;
		entry->exec_id = watch->exec_id;
		entry->plan_node_id = node_id;
		entry->worker = ParallelWorkerNumber;
		entry->text_hash = hash;
		entry->ambiguous = false;
		entry->lost = false;
		entry->size = size;
		memcpy(entry->figures, figures, size);
	}
	LWLockRelease(compspill_workers->lock);
}

/*
 * In the leader, copy the figures worker published for the watched node
 * into figures (size bytes; what the worker did not set is zeroed).
 * Return false if there are none.
 */
bool
CompSpillWorkersFetch(CompSpillWorkersWatch *watch, int worker,
					  void *figures, Size size)
{
	CompSpillWorkerEntry *e;
	bool		found = false;

	if (watch == NULL || !watch->registered || compspill_workers == NULL)
		return false;
	LWLockAcquire(compspill_workers->lock, LW_SHARED);
	e = compspill_workers_find(MyProcPid, watch->exec_id, watch->plan_node_id,
							   worker);
	if (e != NULL)
	{
		memset(figures, 0, size);
		memcpy(figures, e->figures, Min(size, e->size));
		found = true;
	}
	LWLockRelease(compspill_workers->lock);
	return found;
}

/*
 * In the leader, say whether some workers' figures are missing, and why.
 */
CompSpillWorkersProblem
CompSpillWorkersCheck(CompSpillWorkersWatch *watch)
{
	CompSpillWorkersProblem problem = COMPSPILL_WORKERS_OK;
	CompSpillWorkerEntry *e;

	if (compspill_workers == NULL)
		return COMPSPILL_WORKERS_NOT_PRELOADED;
	if (watch == NULL || !watch->registered)
		return COMPSPILL_WORKERS_FULL;
	LWLockAcquire(compspill_workers->lock, LW_SHARED);
	e = compspill_workers_find(MyProcPid, watch->exec_id, watch->plan_node_id,
							   COMPSPILL_WATCH);
	if (e == NULL || e->lost)
		problem = COMPSPILL_WORKERS_FULL;
	else if (e->ambiguous)
		problem = COMPSPILL_WORKERS_AMBIGUOUS;
	LWLockRelease(compspill_workers->lock);
	return problem;
}
