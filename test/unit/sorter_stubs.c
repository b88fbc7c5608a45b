/*-------------------------------------------------------------------------
 *
 * sorter_stubs.c
 *	  What sorter.c calls below it, faked for sorter_test: memory contexts,
 *	  slots, sort support and interrupts of the server, and the spill,
 *	  merge and store layers of compspill.
 *
 * Memory contexts are empty headers: palloc and friends (pgstubs.c)
 * ignore them, and they say they hold nothing, so that the sorter's
 * measures see only its writer reservation.  Slots are virtual slots with
 * their own arrays of values.  Sort support compares int8 values (the
 * sorter's inlined comparator for signed values).
 *
 * The spill layers keep the datum path's values in memory: a run is the
 * array of the values put into it, and the final merge sorts the values
 * of all its runs with the sort's comparator and hands them out in the
 * virtual slot.  Enough for the sorter's own bookkeeping to be checked;
 * the row paths, merges during input and random access are not faked
 * (they abort).
 *
 * IDENTIFICATION
 *	  test/unit/sorter_stubs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdio.h>
#include <stdlib.h>

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"

#include "base/spillstats.h"
#include "shared/activity.h"
#include "shared/stats.h"
#include "sort/merge.h"
#include "sort/store.h"
#include "sort/tupleform.h"
#include "spill/run.h"

#undef fprintf
#undef qsort

/* a run's values, indexed by CompSpillRun.serial */
typedef struct FakeRun
{
	Datum	   *values;
	bool	   *isnull;
	int64		n;
	int64		cap;
	bool		released;
} FakeRun;

#define FAKE_MAX_RUNS	1024

struct CompSpillSpiller
{
	FakeRun		runs[FAKE_MAX_RUNS];
	int			nruns;
	FakeRun    *current;		/* the run being written */
};

struct CompSpillMerge
{
	Datum	   *values;
	bool	   *isnull;
	int64		n;
	int64		next;
};

volatile sig_atomic_t InterruptPending = false;

/* Stop at a call the fakes do not support */
static void
fake_unsupported(const char *what)
{
	fprintf(stderr, "sorter_stubs: %s is not faked\n", what);
	abort();
}

/* Process interrupts: there are none */
void
ProcessInterrupts(void)
{
}

/* Make an empty memory context header */
static MemoryContext
fake_context(void)
{
	return (MemoryContext) calloc(1, sizeof(MemoryContextData));
}

/* Make an allocation-set context: an empty header */
MemoryContext
AllocSetContextCreateInternal(MemoryContext parent pg_attribute_unused(),
							  const char *name pg_attribute_unused(),
							  Size minContextSize pg_attribute_unused(),
							  Size initBlockSize pg_attribute_unused(),
							  Size maxBlockSize pg_attribute_unused())
{
	return fake_context();
}

/* Make a generation context: an empty header */
MemoryContext
GenerationContextCreate(MemoryContext parent pg_attribute_unused(),
						const char *name pg_attribute_unused(),
						Size minContextSize pg_attribute_unused(),
						Size initBlockSize pg_attribute_unused(),
						Size maxBlockSize pg_attribute_unused())
{
	return fake_context();
}

#if PG_VERSION_NUM >= 170000
/* Make a bump context (the sort's tuples on 17 and later): a fake one */
MemoryContext
BumpContextCreate(MemoryContext parent pg_attribute_unused(),
				  const char *name pg_attribute_unused(),
				  Size minContextSize pg_attribute_unused(),
				  Size initBlockSize pg_attribute_unused(),
				  Size maxBlockSize pg_attribute_unused())
{
	return fake_context();
}
#endif

/* Reset a context: its chunks stay until pgstubs_free_all */
void
MemoryContextReset(MemoryContext context pg_attribute_unused())
{
}

/* Delete a context: its header goes, its chunks stay until pgstubs_free_all */
void
MemoryContextDelete(MemoryContext context)
{
	free(context);
}

/* Say what a context holds: nothing */
Size
MemoryContextMemAllocated(MemoryContext context pg_attribute_unused(),
						  bool recurse pg_attribute_unused())
{
	return 0;
}

/* Say what a chunk takes: a small chunk */
Size
GetMemoryChunkSpace(void *pointer pg_attribute_unused())
{
	return 1024;
}

/* Resize a chunk */
void *
repalloc(void *pointer, Size size)
{
	return repalloc_huge(pointer, size);
}

/* Mark a virtual slot empty */
static void
fake_slot_clear(TupleTableSlot *slot)
{
	slot->tts_flags |= TTS_FLAG_EMPTY;
	slot->tts_nvalid = 0;
}

/* Deform a slot: a virtual slot's values are all there */
static void
fake_slot_getsomeattrs(TupleTableSlot *slot, int natts)
{
	slot->tts_nvalid = natts;
}

const TupleTableSlotOps TTSOpsVirtual = {
	.base_slot_size = sizeof(VirtualTupleTableSlot),
	.clear = fake_slot_clear,
	.getsomeattrs = fake_slot_getsomeattrs,
};

const TupleTableSlotOps TTSOpsMinimalTuple = {
	.base_slot_size = sizeof(MinimalTupleTableSlot),
	.clear = fake_slot_clear,
	.getsomeattrs = fake_slot_getsomeattrs,
};

/* Make a slot of tupdesc with its own arrays of values */
TupleTableSlot *
MakeSingleTupleTableSlot(TupleDesc tupdesc, const TupleTableSlotOps *tts_ops)
{
	TupleTableSlot *slot = calloc(1, tts_ops->base_slot_size);

	*((const TupleTableSlotOps **) &slot->tts_ops) = tts_ops;
	slot->tts_flags = TTS_FLAG_EMPTY | TTS_FLAG_FIXED;
	slot->tts_tupleDescriptor = tupdesc;
	slot->tts_values = calloc(Max(tupdesc->natts, 1), sizeof(Datum));
	slot->tts_isnull = calloc(Max(tupdesc->natts, 1), sizeof(bool));
	return slot;
}

/* Free a slot made by MakeSingleTupleTableSlot */
void
ExecDropSingleTupleTableSlot(TupleTableSlot *slot)
{
	free(slot->tts_values);
	free(slot->tts_isnull);
	free(slot);
}

/* Mark a virtual slot's values as its row */
TupleTableSlot *
ExecStoreVirtualTuple(TupleTableSlot *slot)
{
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_nvalid = slot->tts_tupleDescriptor->natts;
	return slot;
}

/* Store a minimal tuple: only the row path does, which is not faked */
TupleTableSlot *
ExecStoreMinimalTuple(MinimalTuple mtup pg_attribute_unused(),
					  TupleTableSlot *slot pg_attribute_unused(),
					  bool shouldFree pg_attribute_unused())
{
	fake_unsupported("ExecStoreMinimalTuple");
	return NULL;
}

/* Deform a slot past its valid values: the test's slots are all valid */
void
slot_getsomeattrs_int(TupleTableSlot *slot, int attnum)
{
	slot->tts_nvalid = attnum;
}

/* Read an attribute of a heap tuple: only the row path does */
Datum
nocachegetattr(HeapTuple tup pg_attribute_unused(),
			   int attnum pg_attribute_unused(),
			   TupleDesc tupleDesc pg_attribute_unused())
{
	fake_unsupported("nocachegetattr");
	return (Datum) 0;
}

/* Read a missing attribute: only the row path does */
Datum
getmissingattr(TupleDesc tupleDesc pg_attribute_unused(),
			   int attnum pg_attribute_unused(),
			   bool *isnull pg_attribute_unused())
{
	fake_unsupported("getmissingattr");
	return (Datum) 0;
}

/* Read a system attribute: only the row path does */
Datum
heap_getsysattr(HeapTuple tup pg_attribute_unused(),
				int attnum pg_attribute_unused(),
				TupleDesc tupleDesc pg_attribute_unused(),
				bool *isnull pg_attribute_unused())
{
	fake_unsupported("heap_getsysattr");
	return (Datum) 0;
}

/* Read how to form rows of tupdesc: nothing, the row path is not faked */
CompSpillTupleForm *
CompSpillTupleFormCreate(TupleDesc tupdesc pg_attribute_unused())
{
	return NULL;
}

/* Copy a row into a minimal tuple: only the row path does */
MinimalTuple
CompSpillCopySlotMinimal(const CompSpillTupleForm *form pg_attribute_unused(),
						 TupleTableSlot *slot pg_attribute_unused())
{
	fake_unsupported("CompSpillCopySlotMinimal");
	return NULL;
}

/* The same into memory the caller gives: only the row path does */
MinimalTuple
CompSpillCopySlotMinimalWith(const CompSpillTupleForm *form pg_attribute_unused(),
							 TupleTableSlot *slot pg_attribute_unused(),
							 CompSpillTupleAlloc alloc pg_attribute_unused(),
							 void *arg pg_attribute_unused())
{
	fake_unsupported("CompSpillCopySlotMinimalWith");
	return NULL;
}

#if PG_VERSION_NUM < 160000
/* Check a tuple's datum version (15's heap_getattr): only the row path does */
void
heap_datum_check(HeapTupleHeader tup pg_attribute_unused(),
				 TupleDesc tupleDesc pg_attribute_unused())
{
	fake_unsupported("heap_datum_check");
}
#endif

#if PG_VERSION_NUM >= 180000
/* Check a compact attribute against its attribute: the test's agree */
void
verify_compact_attribute(TupleDesc tupdesc pg_attribute_unused(),
						 int attnum pg_attribute_unused())
{
}
#endif

/* Compare two int8 values */
int
ssup_datum_signed_cmp(Datum x, Datum y, SortSupport ssup pg_attribute_unused())
{
	int64		a = DatumGetInt64(x);
	int64		b = DatumGetInt64(y);

	return a < b ? -1 : a > b ? 1 : 0;
}

/* Compare two unsigned values (not chosen by the fake sort support) */
int
ssup_datum_unsigned_cmp(Datum x, Datum y, SortSupport ssup pg_attribute_unused())
{
	return x < y ? -1 : x > y ? 1 : 0;
}

/* Compare two int4 values (not chosen by the fake sort support) */
int
ssup_datum_int32_cmp(Datum x, Datum y, SortSupport ssup pg_attribute_unused())
{
	int32		a = DatumGetInt32(x);
	int32		b = DatumGetInt32(y);

	return a < b ? -1 : a > b ? 1 : 0;
}

/* Set up sort support for any ordering operator: int8 ascending */
void
PrepareSortSupportFromOrderingOp(Oid orderingOp pg_attribute_unused(),
								 SortSupport ssup)
{
	ssup->comparator = ssup_datum_signed_cmp;
	ssup->ssup_reverse = false;
	ssup->abbrev_converter = NULL;
}

/* Step a read position forward (the test reads forward only) */
int64
CompSpillPosStep(CompSpillStorePos *pos, int64 nrows, bool forward)
{
	if (!forward)
		fake_unsupported("backward reads");
	if (pos->eof_reached)
		return -1;
	if (pos->current < nrows)
		return pos->current++;
	pos->eof_reached = true;
	return -1;
}

/* Choose sizes as for a small work_mem */
void
CompSpillChooseSizes(const CompSpillSettings *set pg_attribute_unused(),
					 int64 allowed_mem pg_attribute_unused(),
					 Size *block_size, Size *write_size, Size *extent_size)
{
	if (block_size)
		*block_size = COMPSPILL_MIN_BLOCK_SIZE;
	if (write_size)
		*write_size = COMPSPILL_MIN_WRITE_SIZE;
	if (extent_size)
		*extent_size = 64 * 1024;
}

/* A writer's memory: its block and its write buffer */
Size
CompSpillWriterMemory(Size block_size, Size write_size)
{
	return block_size + write_size;
}

/* A writer's memory at most: the same */
Size
CompSpillWriterMemoryBound(Size block_size, Size write_size)
{
	return CompSpillWriterMemory(block_size, write_size);
}

/* What the writer holds once made: nothing, as after the final merge */
int64
CompSpillWriterHeld(CompSpillSpiller *sp pg_attribute_unused())
{
	return 0;
}

/* Memory outside the contexts: none */
int64
CompSpillMallocHeld(CompSpillSpiller *sp pg_attribute_unused())
{
	return 0;
}

/* Of it, what reading keeps: none */
int64
CompSpillMallocReadHeld(CompSpillSpiller *sp pg_attribute_unused())
{
	return 0;
}

/* Growth of it for reading: none */
int64
CompSpillReadGrowth(CompSpillSpiller *sp pg_attribute_unused())
{
	return 0;
}

/* Memory outside the contexts a spill would take: none */
int64
CompSpillMallocEstimate(const CompSpillSettings *set pg_attribute_unused(),
						Size block pg_attribute_unused())
{
	return 0;
}

/* Growth of memory outside the contexts: none */
int64
CompSpillMallocGrowth(CompSpillSpiller *sp pg_attribute_unused(),
					   bool compressing pg_attribute_unused())
{
	return 0;
}

/* Extent maps: none */
int64
CompSpillRunMapReserve(CompSpillSpiller *sp pg_attribute_unused(),
					   int64 bytes pg_attribute_unused())
{
	return 0;
}

/* A reader of frames of any size: more than any merge input has */
Size
CompSpillReaderEstimateAt(CompSpillSpiller *sp pg_attribute_unused(),
						  bool rows pg_attribute_unused(),
						  Size block pg_attribute_unused())
{
	return (Size) 1 << 40;
}

/* A merge input reading a run: more than any merge input has */
int64
CompSpillMergeProbeRun(CompSpillSpiller *sp pg_attribute_unused(),
					   CompSpillRun *run pg_attribute_unused(),
					   int64 *frame_part)
{
	*frame_part = (int64) 1 << 40;
	return (int64) 1 << 40;
}

/* No frame is stored, so a reader needs no buffers */
int64
CompSpillRunBufferMemory(CompSpillSpiller *sp pg_attribute_unused(),
						 const CompSpillRun *run pg_attribute_unused(),
						 bool as_written pg_attribute_unused())
{
	return 0;
}

/* Make the in-memory spill */
CompSpillSpiller *
CompSpillSpillerCreate(TupleDesc tupdesc pg_attribute_unused(),
				const char *what pg_attribute_unused(),
				const CompSpillSettings *set pg_attribute_unused(),
				CompSpillStats *stats pg_attribute_unused(),
				Size block_size pg_attribute_unused(),
				Size write_size pg_attribute_unused(),
				Size extent_size pg_attribute_unused())
{
	return calloc(1, sizeof(CompSpillSpiller));
}

/* Free the in-memory spill and its runs */
void
CompSpillSpillerEnd(CompSpillSpiller *sp)
{
	for (int i = 0; i < sp->nruns; i++)
	{
		free(sp->runs[i].values);
		free(sp->runs[i].isnull);
	}
	free(sp);
}

/* Say what a spill does: nothing to say */
void
CompSpillSpillerSetPhase(CompSpillSpiller *sp pg_attribute_unused(),
				  CompSpillPhase phase pg_attribute_unused(),
				  int pass pg_attribute_unused(),
				  int npasses pg_attribute_unused())
{
}

/* Hold the spill to light codecs: the in-memory runs have none */
void
CompSpillSpillerSetLightCodec(CompSpillSpiller *sp pg_attribute_unused(),
							  bool light pg_attribute_unused())
{
}

/* The settings with light codecs: the same, as no codec is used */
CompSpillSettings
CompSpillLightSettings(const CompSpillSettings *set)
{
	return *set;
}

/* Change the block size: the in-memory runs have none */
void
CompSpillSpillerSetBlockSize(CompSpillSpiller *sp pg_attribute_unused(),
					  Size block_size pg_attribute_unused())
{
}

void
CompSpillSpillerSetExpectedRows(CompSpillSpiller *sp pg_attribute_unused(),
						 double rows pg_attribute_unused(),
						 int width pg_attribute_unused())
{
}

/* Start a run of column frames: a new array of values */
void
CompSpillRunBegin(CompSpillSpiller *sp, CompSpillRun *run)
{
	if (sp->nruns >= FAKE_MAX_RUNS)
		fake_unsupported("more runs");
	memset(run, 0, sizeof(CompSpillRun));
	run->serial = sp->nruns;
	sp->current = &sp->runs[sp->nruns++];
	memset(sp->current, 0, sizeof(FakeRun));
}

/* Start a run of row frames: only the row path does */
void
CompSpillRunBeginRows(CompSpillSpiller *sp pg_attribute_unused(),
					  CompSpillRun *run pg_attribute_unused())
{
	fake_unsupported("row frames");
}

/* Are row frames wanted: never, the datum path writes column frames */
bool
CompSpillWantRowFrames(CompSpillSpiller *sp pg_attribute_unused())
{
	return false;
}

/* And for a store: never either */
bool
CompSpillWantStoreRowFrames(CompSpillSpiller *sp pg_attribute_unused())
{
	return false;
}

/* Add the first column of a row to the run being written */
void
CompSpillRunPutValues(CompSpillSpiller *sp, Datum *values, bool *isnull)
{
	FakeRun    *r = sp->current;

	if (r->n >= r->cap)
	{
		r->cap = Max(r->cap * 2, 1024);
		r->values = realloc(r->values, sizeof(Datum) * r->cap);
		r->isnull = realloc(r->isnull, sizeof(bool) * r->cap);
	}
	r->values[r->n] = values[0];
	r->isnull[r->n] = isnull[0];
	r->n++;
}

/* Add a tuple to a run of row frames: only the row path does */
void
CompSpillRunPutTuple(CompSpillSpiller *sp pg_attribute_unused(),
					 MinimalTuple tup pg_attribute_unused())
{
	fake_unsupported("row frames");
}

/* Add a tuple to a run of either kind: only the tuple path does */
void
CompSpillRunPutMinimal(CompSpillSpiller *sp pg_attribute_unused(),
					   MinimalTuple tup pg_attribute_unused())
{
	fake_unsupported("tuple runs");
}

/* End the run being written */
void
CompSpillRunEnd(CompSpillSpiller *sp)
{
	sp->current = NULL;
}

/* Give back a run that will not be read again */
void
CompSpillRunRelease(CompSpillSpiller *sp, CompSpillRun *run)
{
	sp->runs[run->serial].released = true;
}

/* Merge runs while the input is read: not faked */
int
CompSpillMergeRuns(CompSpillSpiller *sp pg_attribute_unused(),
				   CompSpillStats *stats pg_attribute_unused(),
				   TupleDesc tupdesc pg_attribute_unused(),
				   SortSupport ssup pg_attribute_unused(),
				   int nkeys pg_attribute_unused(),
				   CompSpillRun *runs pg_attribute_unused(),
				   int nruns pg_attribute_unused(),
				   int64 allowed_mem pg_attribute_unused(),
				   int64 (*used_mem) (void *) pg_attribute_unused(),
				   void *arg pg_attribute_unused(),
				   CompSpillRun *out pg_attribute_unused())
{
	fake_unsupported("merges during input");
	return 0;
}

/* a row of the final merge */
typedef struct FakeRow
{
	Datum		value;
	bool		isnull;
} FakeRow;

/* the sort support of the merge being begun, for qsort */
static SortSupport fake_merge_ssup;

/* Compare two rows of the final merge with its sort support */
static int
fake_row_cmp(const void *a, const void *b)
{
	const FakeRow *ra = a;
	const FakeRow *rb = b;

	return ApplySortComparator(ra->value, ra->isnull, rb->value, rb->isnull,
							   fake_merge_ssup);
}

/* Begin the final merge: all the runs' values, sorted */
CompSpillMerge *
CompSpillMergeBegin(CompSpillSpiller *sp,
					CompSpillStats *stats,
					TupleDesc tupdesc pg_attribute_unused(),
					SortSupport ssup, int nkeys pg_attribute_unused(),
					CompSpillRun *runs, int nruns,
					int64 allowed_mem pg_attribute_unused(),
					bool last_writes pg_attribute_unused(),
					int64 (*used_mem) (void *) pg_attribute_unused(),
					void *arg pg_attribute_unused())
{
	CompSpillMerge *m = calloc(1, sizeof(CompSpillMerge));
	FakeRow    *rows;
	int64		n = 0;

	for (int i = 0; i < nruns; i++)
		n += sp->runs[runs[i].serial].n;
	rows = calloc(Max(n, 1), sizeof(FakeRow));
	n = 0;
	for (int i = 0; i < nruns; i++)
	{
		FakeRun    *r = &sp->runs[runs[i].serial];

		for (int64 j = 0; j < r->n; j++)
		{
			rows[n].value = r->values[j];
			rows[n].isnull = r->isnull[j];
			n++;
		}
	}
	fake_merge_ssup = ssup;
	qsort(rows, n, sizeof(FakeRow), fake_row_cmp);

	m->values = calloc(Max(n, 1), sizeof(Datum));
	m->isnull = calloc(Max(n, 1), sizeof(bool));
	for (int64 j = 0; j < n; j++)
	{
		m->values[j] = rows[j].value;
		m->isnull[j] = rows[j].isnull;
	}
	m->n = n;
	free(rows);
	stats->merge_passes++;
	return m;
}

/* Return the next row of the final merge in the virtual slot, or NULL */
TupleTableSlot *
CompSpillMergeNext(CompSpillMerge *m, TupleTableSlot *virtslot,
				   TupleTableSlot *minslot pg_attribute_unused())
{
	ExecClearTuple(virtslot);
	if (m->next >= m->n)
		return NULL;
	virtslot->tts_values[0] = m->values[m->next];
	virtslot->tts_isnull[0] = m->isnull[m->next];
	m->next++;
	return ExecStoreVirtualTuple(virtslot);
}

/* Start the final merge again */
void
CompSpillMergeRewind(CompSpillMerge *m)
{
	m->next = 0;
}

/* End the final merge */
void
CompSpillMergeEnd(CompSpillMerge *m)
{
	free(m->values);
	free(m->isnull);
	free(m);
}

/* Report a finished spill: nowhere to report it */
void
CompSpillReportSpill(const char *what pg_attribute_unused(),
					 const CompSpillStats *st pg_attribute_unused())
{
}

/* The store of a random-access sort: not faked */
CompSpillStore *
CompSpillStoreBeginOnSpill(struct CompSpillSpiller *sp pg_attribute_unused(),
						   TupleDesc tupdesc pg_attribute_unused(),
						   CompSpillStats *stats pg_attribute_unused(),
						   int npos pg_attribute_unused(),
						   bool rows pg_attribute_unused())
{
	fake_unsupported("random access");
	return NULL;
}

/* The store of a random-access sort: not faked */
void
CompSpillStorePutSlot(CompSpillStore *st pg_attribute_unused(),
					  TupleTableSlot *slot pg_attribute_unused())
{
	fake_unsupported("random access");
}

/* The store of a random-access sort: not faked */
void
CompSpillStoreEndWrites(CompSpillStore *st pg_attribute_unused())
{
	fake_unsupported("random access");
}

/* The store of a random-access sort: not faked */
bool
CompSpillStoreGet(CompSpillStore *st pg_attribute_unused(),
				  int ptr pg_attribute_unused(),
				  bool forward pg_attribute_unused(),
				  TupleTableSlot *slot pg_attribute_unused(),
				  bool copy pg_attribute_unused())
{
	fake_unsupported("random access");
	return false;
}

/* The store of a random-access sort: not faked */
void
CompSpillStoreRewind(CompSpillStore *st pg_attribute_unused(),
					 int ptr pg_attribute_unused())
{
	fake_unsupported("random access");
}

/* The store of a random-access sort: not faked */
void
CompSpillStoreCopyPos(CompSpillStore *st pg_attribute_unused(),
					  int from pg_attribute_unused(),
					  int to pg_attribute_unused())
{
	fake_unsupported("random access");
}

/* The store of a random-access sort: not faked */
void
CompSpillStoreEnd(CompSpillStore *st pg_attribute_unused())
{
	fake_unsupported("random access");
}
