/*-------------------------------------------------------------------------
 *
 * tupleform.h
 *	  Forming minimal tuples from datums, for the rows a sort or a store
 *	  keeps in memory.
 *
 * IDENTIFICATION
 *	  src/sort/tupleform.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_TUPLEFORM_H
#define COMPSPILL_TUPLEFORM_H

#include "access/htup_details.h"
#include "access/tupdesc.h"
#include "executor/tuptable.h"

/* what forming needs of one attribute, read once from the descriptor */
typedef struct CompSpillFormAtt
{
	int16		attlen;
	uint8		alignby;		/* 1, 2, 4 or 8 */
	bool		byval;
	bool		packable;		/* varlena whose storage allows a short
								 * header */
} CompSpillFormAtt;

typedef struct CompSpillTupleForm
{
	TupleDesc	tupdesc;
	int			natts;
	CompSpillFormAtt atts[FLEXIBLE_ARRAY_MEMBER];
} CompSpillTupleForm;

/* gives len bytes for a tuple, MAXALIGNed, that the caller owns */
typedef void *(*CompSpillTupleAlloc) (Size len, void *arg);

extern CompSpillTupleForm *CompSpillTupleFormCreate(TupleDesc tupdesc);
extern MinimalTuple CompSpillFormMinimal(const CompSpillTupleForm *form,
										 const Datum *values,
										 const bool *isnull);
extern MinimalTuple CompSpillFormMinimalWith(const CompSpillTupleForm *form,
											 const Datum *values,
											 const bool *isnull,
											 CompSpillTupleAlloc alloc,
											 void *arg);
extern MinimalTuple CompSpillCopySlotMinimal(const CompSpillTupleForm *form,
											 TupleTableSlot *slot);
extern MinimalTuple CompSpillCopySlotMinimalWith(const CompSpillTupleForm *form,
												 TupleTableSlot *slot,
												 CompSpillTupleAlloc alloc,
												 void *arg);

#endif							/* COMPSPILL_TUPLEFORM_H */
