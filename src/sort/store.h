/*-------------------------------------------------------------------------
 *
 * store.h
 *	  The tuplestore path: rows in memory, then in one growing indexed run,
 *	  read by position (store.c).
 *
 * Used by the Material, CTE and recursive union nodes, and by the sorter
 * for a final merge that must give random access (on the sorter's spill object).
 *
 * IDENTIFICATION
 *	  src/sort/store.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_STORE_H
#define COMPSPILL_STORE_H

#include "executor/tuptable.h"

#include "base/spillstats.h"

/* store.c */
struct CompSpillSpiller;

typedef struct CompSpillStore CompSpillStore;

/* A read position in a store or a sorted result, as tuplestore's */
typedef struct CompSpillStorePos
{
	int64		current;		/* rows before the position */
	bool		eof_reached;	/* a forward read found no more rows */
} CompSpillStorePos;

extern int64 CompSpillPosStep(CompSpillStorePos *pos, int64 nrows,
							  bool forward);
extern CompSpillStore *CompSpillStoreBegin(TupleDesc tupdesc, int work_mem_kb,
										   const CompSpillSettings *set,
										   int npos, const char *what);
extern void CompSpillStoreExpect(CompSpillStore *st, double rows, int width,
								 double reads);
extern CompSpillStore *CompSpillStoreBeginOnSpill(struct CompSpillSpiller *sp,
												  TupleDesc tupdesc,
												  CompSpillStats *stats,
												  int npos, bool rows);
extern void CompSpillStorePut(CompSpillStore *st, TupleTableSlot *slot,
							  int active);
extern int	CompSpillStoreAddPos(CompSpillStore *st);
extern void CompSpillStorePutSlot(CompSpillStore *st, TupleTableSlot *slot);
extern void CompSpillStoreEndWrites(CompSpillStore *st);
extern bool CompSpillStoreGet(CompSpillStore *st, int ptr, bool forward,
							  TupleTableSlot *slot, bool copy);
extern bool CompSpillStoreAdvance(CompSpillStore *st, int ptr, bool forward);
extern bool CompSpillStoreAtEOF(CompSpillStore *st, int ptr);
extern void CompSpillStoreTrim(CompSpillStore *st);
extern void CompSpillStoreRewind(CompSpillStore *st, int ptr);
extern void CompSpillStoreCopyPos(CompSpillStore *st, int from, int to);
extern void CompSpillStoreForget(CompSpillStore *st, int64 row);
extern int64 CompSpillStoreTell(CompSpillStore *st, int ptr);
extern void CompSpillStoreSeek(CompSpillStore *st, int ptr, int64 row);
extern bool CompSpillStoreSpilled(CompSpillStore *st);
extern CompSpillStats *CompSpillStoreStats(CompSpillStore *st);
extern void CompSpillStoreEnd(CompSpillStore *st);

#endif							/* COMPSPILL_STORE_H */
