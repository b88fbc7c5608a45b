/*-------------------------------------------------------------------------
 *
 * explain.h
 *	  EXPLAIN ANALYZE output shared by the CompSpill nodes (explain.c).
 *
 * IDENTIFICATION
 *	  src/nodes/explain.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_EXPLAIN_H
#define COMPSPILL_EXPLAIN_H

#include "compspill.h"

/* explain.c */
struct ExplainState;
struct Tuplestorestate;
extern void CompSpillExplainIndent(struct ExplainState *es);
extern void CompSpillExplainSpill(CompSpillStats *st, struct ExplainState *es);
extern void CompSpillExplainStore(bool spilled, CompSpillStats *st,
								  struct ExplainState *es);
extern void CompSpillExplainStorage(bool spilled, CompSpillStats *st,
									struct ExplainState *es);
extern void CompSpillExplainTuplestore(struct Tuplestorestate *ts,
									   struct ExplainState *es);

#endif							/* COMPSPILL_EXPLAIN_H */
