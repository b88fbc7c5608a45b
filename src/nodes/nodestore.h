/*-------------------------------------------------------------------------
 *
 * nodestore.h
 *	  The rows a CompSpill Material, CTE Scan or Recursive Union keeps, and
 *	  reading them through to their source (nodestore.c).
 *
 * IDENTIFICATION
 *	  src/nodes/nodestore.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_NODESTORE_H
#define COMPSPILL_NODESTORE_H

#include "access/tupdesc.h"
#include "executor/tuptable.h"

#include "base/spillstats.h"
#include "sort/store.h"

struct ExplainState;
struct Tuplestorestate;

/*
 * The store of a node that keeps the rows it has read: compspill's
 * (CompSpillStore), or PostgreSQL's tuplestore when compspill.enabled was
 * off at executor start.  Made on first use, with a number of read
 * positions; released on rescans that must read the source again, keeping
 * its figures for EXPLAIN.
 */
typedef struct CompSpillNodeStore
{
	bool		native;			/* PostgreSQL's tuplestore */
	int			eflags;			/* REWIND, BACKWARD, MARK asked for */
	CompSpillStore *store;		/* compspill's, once made */
	struct Tuplestorestate *tstore; /* or native's, once made */
	bool		eof_source;		/* the source has returned its last row */
	struct CompSpillTupleForm *form;	/* forms the source's virtual rows */
	double		est_rows;		/* the plan's rows and width of the source */
	int			est_width;
	double		est_reads;		/* times the plan expects it read, >= 1 */

	/* figures of the last store released, for EXPLAIN */
	bool		have_last;
	bool		last_spilled;
	CompSpillStats last_stats;
} CompSpillNodeStore;

/* the next row of a node's source, or NULL at its end */
typedef TupleTableSlot *(*CompSpillNodeSource) (void *arg);

extern void CompSpillNodeStoreInit(CompSpillNodeStore *ns, bool native,
								   int eflags);
extern void CompSpillNodeStoreExpect(CompSpillNodeStore *ns, Plan *source,
									 double reads);
extern void CompSpillNodeStoreMake(CompSpillNodeStore *ns, TupleDesc tupdesc,
								   CompSpillSettings *settings, int npos,
								   int extra_eflags, const char *what);
extern void CompSpillNodeStoreAddPos(CompSpillNodeStore *ns, int ptr,
									 int extra_eflags);
extern TupleTableSlot *CompSpillNodeStoreNext(CompSpillNodeStore *ns, int ptr,
											  bool forward, bool copy,
											  TupleTableSlot *slot,
											  CompSpillNodeSource source,
											  void *arg);
extern void CompSpillNodeStoreRewind(CompSpillNodeStore *ns, int ptr);
extern void CompSpillNodeStoreCopyPos(CompSpillNodeStore *ns, int from,
									  int to);
extern void CompSpillNodeStoreTrim(CompSpillNodeStore *ns);
extern void CompSpillNodeStoreRelease(CompSpillNodeStore *ns);
extern void CompSpillNodeStoreExplain(CompSpillNodeStore *ns, bool figures,
									  struct ExplainState *es);

/* Is there a store? */
static inline bool
CompSpillNodeStoreMade(CompSpillNodeStore *ns)
{
	return ns->store != NULL || ns->tstore != NULL;
}

#endif							/* COMPSPILL_NODESTORE_H */
