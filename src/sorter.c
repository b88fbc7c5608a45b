/*-------------------------------------------------------------------------
 *
 * sorter.c
 *	  In-memory sort, run formation and k-way merge of compspill.
 *
 * How a sort goes
 * ---------------
 *
 * Rows arrive as slots and are copied into minimal tuples in a generation
 * context, each described by a SortTuple that also holds the first key
 * (abbreviated when the opclass offers it).  Memory is charged as
 * PostgreSQL's tuplesort charges it: the chunk space of every tuple plus
 * the SortTuple array, against work_mem.
 *
 * If every row fits, the array is quicksorted with SortSupport and the rows
 * are handed out in place: no disk, the same work native sort does.
 *
 * When memory runs out, the array is sorted and written out as a run: the
 * rows are deformed and passed, column values and all, to the run writer,
 * which encodes them column-wise into compressed blocks (run.c,
 * blockcodec.c).  The tuple memory is then reset and the next run begins.
 * All runs go to one temp file, one after another.
 *
 * At the end the runs are merged with a binary heap over one reader per
 * run.  A reader costs a read buffer, a decompression buffer and one
 * decoded block, so the fan-in is what work_mem allows after the writer's
 * share.  While there are more runs than the fan-in, groups of runs are
 * merged into new, longer runs appended to the same file (one merge pass
 * each round, the first one merging only as many runs as needed to bring
 * the count down to the fan-in).  The last merge streams its rows to the
 * caller: each row is copied, as Datums pointing into the reader's decoded
 * block, into a virtual slot; the reader only moves on when the next row
 * is asked for, so those pointers stay valid as long as the slot's contents
 * must.
 *
 * Merges compare the full values: abbreviated keys are not stored in the
 * runs, so abbreviation is switched off once the runs are written, as
 * tuplesort does.
 *
 * Rewinding is always possible: the in-memory array stays, and the final
 * merge can be restarted from the start of its runs.
 *
 * IDENTIFICATION
 *	  src/sorter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "compspill.h"
#include "executor/tuptable.h"
#include "lib/binaryheap.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"

/* initial size of the SortTuple array, as tuplesort's */
#define COMPSPILL_INITIAL_MEMTUPSIZE \
	Max(1024, ALLOCSET_SEPARATE_THRESHOLD / sizeof(CompSpillSortTuple) + 1)

/* fewest runs a merge reads at once, whatever work_mem says, as tuplesort */
#define COMPSPILL_MIN_FANIN			6

/* smallest block and write buffer the sorter will use */
#define COMPSPILL_MIN_BLOCK_SIZE	(8 * 1024)
#define COMPSPILL_MIN_WRITE_SIZE	(16 * 1024)

typedef struct CompSpillSortTuple
{
	MinimalTuple tuple;			/* the row */
	Datum		datum1;			/* first key, possibly abbreviated */
	bool		isnull1;		/* is the first key NULL? */
} CompSpillSortTuple;

typedef enum CompSpillSorterStatus
{
	COMPSPILL_LOADING,			/* accepting rows */
	COMPSPILL_SORTED_IN_MEMORY, /* all rows sorted in the array */
	COMPSPILL_FINAL_MERGE		/* streaming the final merge */
} CompSpillSorterStatus;

struct CompSpillSorter
{
	CompSpillSorterStatus status;
	MemoryContext maincxt;		/* everything this sort owns */
	MemoryContext tuplecxt;		/* tuples of the run being loaded */
	TupleDesc	tupdesc;
	int			natts;

	/* sort keys */
	int			nkeys;
	SortSupport ssup;			/* nkeys entries */
	AttrNumber	attno1;			/* first key's attribute number */

	/* memory accounting, in bytes */
	int64		allowed_mem;
	int64		avail_mem;
	int64		tuple_mem;		/* charged for the tuples now loaded */
	int64		peak_mem;

	/* rows in memory */
	CompSpillSortTuple *memtuples;
	int			memtupcount;
	int			memtupsize;
	bool		growmemtuples;
	int64		abbrev_next;	/* when to consider aborting abbreviation */
	int			current;		/* next row to return when in memory */

	/* spilling */
	bool		spilled;
	Size		block_size;
	Size		write_size;
	CompSpillFile *file;
	CompSpillCompressor *comp;
	CompSpillRunWriter *writer;
	CompSpillRun *runs;
	int			nruns;
	int			runs_cap;
	CompSpillStats stats;

	/* merging */
	Size		read_size;		/* a reader's initial read buffer */
	int64		writer_charge;	/* memory charged for the run writer */
	int64		reader_mem;		/* memory one merge input takes */
	int			fanin;			/* inputs of an intermediate merge */
	int			final_fanin;	/* inputs of the final merge */
	int			nreaders;		/* readers created so far */
	CompSpillRunReader **readers;
	Datum	  **cur_values;		/* current row of each input */
	bool	  **cur_isnull;
	binaryheap *heap;			/* inputs by their current row */
	int			final_nruns;	/* runs feeding the final merge */
	int			last_input;		/* input of the last row returned, or -1 */

	TupleTableSlot *minslot;	/* rows of the in-memory sort */
	TupleTableSlot *virtslot;	/* rows of the final merge */
};

/*
 * Compare two rows of the array on the keys after the first datum: the
 * full first key if it was abbreviated, then the other keys.
 */
static int
compspill_cmp_tail(const CompSpillSortTuple *a, const CompSpillSortTuple *b,
				   CompSpillSorter *s)
{
	HeapTupleData ha;
	HeapTupleData hb;
	SortSupport ssup = s->ssup;
	Datum		da;
	Datum		db;
	bool		na;
	bool		nb;
	int			cmp;
	int			k;

	ha.t_len = a->tuple->t_len + MINIMAL_TUPLE_OFFSET;
	ha.t_data = (HeapTupleHeader) ((char *) a->tuple - MINIMAL_TUPLE_OFFSET);
	hb.t_len = b->tuple->t_len + MINIMAL_TUPLE_OFFSET;
	hb.t_data = (HeapTupleHeader) ((char *) b->tuple - MINIMAL_TUPLE_OFFSET);

	if (ssup->abbrev_converter)
	{
		da = heap_getattr(&ha, s->attno1, s->tupdesc, &na);
		db = heap_getattr(&hb, s->attno1, s->tupdesc, &nb);
		cmp = ApplySortAbbrevFullComparator(da, na, db, nb, ssup);
		if (cmp != 0)
			return cmp;
	}

	for (k = 1; k < s->nkeys; k++)
	{
		AttrNumber	attno = ssup[k].ssup_attno;

		da = heap_getattr(&ha, attno, s->tupdesc, &na);
		db = heap_getattr(&hb, attno, s->tupdesc, &nb);
		cmp = ApplySortComparator(da, na, db, nb, &ssup[k]);
		if (cmp != 0)
			return cmp;
	}
	return 0;
}

/*
 * Define a comparison of two rows of the array that compares the first
 * datums with the given comparator (ApplySortComparator, or one of its
 * variants that inline a common comparator), then the rest of the keys.
 */
#define COMPSPILL_DEFINE_CMP(name, apply) \
static inline int \
name(const CompSpillSortTuple *a, const CompSpillSortTuple *b, \
	 CompSpillSorter *s) \
{ \
	int			cmp = apply(a->datum1, a->isnull1, b->datum1, b->isnull1, \
							s->ssup); \
\
	return cmp != 0 ? cmp : compspill_cmp_tail(a, b, s); \
}

COMPSPILL_DEFINE_CMP(compspill_cmp_generic, ApplySortComparator)
COMPSPILL_DEFINE_CMP(compspill_cmp_unsigned, ApplyUnsignedSortComparator)
COMPSPILL_DEFINE_CMP(compspill_cmp_signed, ApplySignedSortComparator)
COMPSPILL_DEFINE_CMP(compspill_cmp_int32, ApplyInt32SortComparator)

#define ST_SORT compspill_qsort_generic
#define ST_ELEMENT_TYPE CompSpillSortTuple
#define ST_COMPARE(a, b, arg) compspill_cmp_generic(a, b, arg)
#define ST_COMPARE_ARG_TYPE CompSpillSorter
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT compspill_qsort_unsigned
#define ST_ELEMENT_TYPE CompSpillSortTuple
#define ST_COMPARE(a, b, arg) compspill_cmp_unsigned(a, b, arg)
#define ST_COMPARE_ARG_TYPE CompSpillSorter
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT compspill_qsort_signed
#define ST_ELEMENT_TYPE CompSpillSortTuple
#define ST_COMPARE(a, b, arg) compspill_cmp_signed(a, b, arg)
#define ST_COMPARE_ARG_TYPE CompSpillSorter
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT compspill_qsort_int32
#define ST_ELEMENT_TYPE CompSpillSortTuple
#define ST_COMPARE(a, b, arg) compspill_cmp_int32(a, b, arg)
#define ST_COMPARE_ARG_TYPE CompSpillSorter
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Sort the rows in memory, with the variant that inlines the first key's
 * comparator when there is one.
 */
static void
compspill_sort_memtuples(CompSpillSorter *s)
{
	SortSupport ssup = s->ssup;

	if (s->memtupcount <= 1)
		return;

	if (ssup->comparator == ssup_datum_unsigned_cmp)
		compspill_qsort_unsigned(s->memtuples, s->memtupcount, s);
#if SIZEOF_DATUM >= 8
	else if (ssup->comparator == ssup_datum_signed_cmp)
		compspill_qsort_signed(s->memtuples, s->memtupcount, s);
#endif
	else if (ssup->comparator == ssup_datum_int32_cmp)
		compspill_qsort_int32(s->memtuples, s->memtupcount, s);
	else
		compspill_qsort_generic(s->memtuples, s->memtupcount, s);
}

/*
 * Charge memory, keeping track of the peak.
 */
static inline void
compspill_use_mem(CompSpillSorter *s, int64 amount)
{
	s->avail_mem -= amount;
	if (s->allowed_mem - s->avail_mem > s->peak_mem)
		s->peak_mem = s->allowed_mem - s->avail_mem;
}

/*
 * Extract (and abbreviate) the first key of a stored row.
 */
static inline void
compspill_set_datum1(CompSpillSorter *s, CompSpillSortTuple *stup)
{
	HeapTupleData htup;

	htup.t_len = stup->tuple->t_len + MINIMAL_TUPLE_OFFSET;
	htup.t_data = (HeapTupleHeader) ((char *) stup->tuple - MINIMAL_TUPLE_OFFSET);
	stup->datum1 = heap_getattr(&htup, s->attno1, s->tupdesc, &stup->isnull1);
	if (s->ssup->abbrev_converter && !stup->isnull1)
		stup->datum1 = s->ssup->abbrev_converter(stup->datum1, s->ssup);
}

/*
 * Give up abbreviated keys if the opclass says they do not pay, before any
 * run is written; the first datums are then extracted again.
 */
static void
compspill_consider_abort(CompSpillSorter *s)
{
	SortSupport ssup = s->ssup;
	int			i;

	if (ssup->abbrev_converter == NULL || s->spilled ||
		s->memtupcount < s->abbrev_next)
		return;

	s->abbrev_next *= 2;
	if (!ssup->abbrev_abort(s->memtupcount, ssup))
		return;

	ssup->comparator = ssup->abbrev_full_comparator;
	ssup->abbrev_converter = NULL;
	ssup->abbrev_abort = NULL;
	ssup->abbrev_full_comparator = NULL;
	for (i = 0; i < s->memtupcount; i++)
		compspill_set_datum1(s, &s->memtuples[i]);
}

/*
 * Stop using abbreviated keys: merges compare full values.
 */
static void
compspill_disable_abbrev(CompSpillSorter *s)
{
	SortSupport ssup = s->ssup;

	if (ssup->abbrev_converter == NULL)
		return;
	ssup->comparator = ssup->abbrev_full_comparator;
	ssup->abbrev_converter = NULL;
	ssup->abbrev_abort = NULL;
	ssup->abbrev_full_comparator = NULL;
}

/*
 * Start a sort of rows of tupdesc on the given keys within work_mem_kb.
 */
CompSpillSorter *
CompSpillSorterBegin(TupleDesc tupdesc, const CompSpillSortSpec *spec,
					 int work_mem_kb)
{
	MemoryContext maincxt;
	MemoryContext oldcxt;
	CompSpillSorter *s;
	int			k;

	maincxt = AllocSetContextCreate(CurrentMemoryContext, "CompSpill sort",
									ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(maincxt);

	s = palloc0(sizeof(CompSpillSorter));
	s->status = COMPSPILL_LOADING;
	s->maincxt = maincxt;
	s->tuplecxt = GenerationContextCreate(maincxt, "CompSpill sort tuples",
										  ALLOCSET_DEFAULT_SIZES);
	s->tupdesc = tupdesc;
	s->natts = tupdesc->natts;
	s->last_input = -1;

	s->allowed_mem = Max((int64) work_mem_kb, 64) * (int64) 1024;
	s->avail_mem = s->allowed_mem;

	s->nkeys = spec->nkeys;
	s->ssup = palloc0(sizeof(SortSupportData) * spec->nkeys);
	for (k = 0; k < spec->nkeys; k++)
	{
		SortSupport ssup = &s->ssup[k];

		ssup->ssup_cxt = maincxt;
		ssup->ssup_collation = spec->collations[k];
		ssup->ssup_nulls_first = spec->nulls_first[k];
		ssup->ssup_attno = spec->attnums[k];
		ssup->abbreviate = (k == 0);
		PrepareSortSupportFromOrderingOp(spec->sortops[k], ssup);
	}
	s->attno1 = spec->nkeys > 0 ? spec->attnums[0] : 1;
	s->abbrev_next = 10;

	s->memtupsize = COMPSPILL_INITIAL_MEMTUPSIZE;
	s->growmemtuples = true;
	s->memtuples = palloc(sizeof(CompSpillSortTuple) * s->memtupsize);
	compspill_use_mem(s, GetMemoryChunkSpace(s->memtuples));

	/* block and write sizes shrink with a small work_mem */
	s->block_size = Min((Size) compspill_block_size * 1024,
						(Size) s->allowed_mem / 16);
	s->block_size = Max(s->block_size, COMPSPILL_MIN_BLOCK_SIZE);
	s->write_size = Min((Size) compspill_write_size * 1024,
						(Size) s->allowed_mem / 16);
	s->write_size = COMPSPILL_ALIGN_UP(Max(s->write_size,
										   COMPSPILL_MIN_WRITE_SIZE));

	s->stats.codec = (CompSpillCodec) compspill_codec;
	s->stats.dio_requested = compspill_enable_dio;

	s->minslot = MakeSingleTupleTableSlot(tupdesc, &TTSOpsMinimalTuple);
	s->virtslot = MakeSingleTupleTableSlot(tupdesc, &TTSOpsVirtual);

	MemoryContextSwitchTo(oldcxt);
	return s;
}

/*
 * Double the SortTuple array if memory allows; return whether it grew.
 */
static bool
compspill_grow_memtuples(CompSpillSorter *s)
{
	int64		oldspace;
	int64		newsize;

	if (!s->growmemtuples)
		return false;

	newsize = (int64) s->memtupsize * 2;
	oldspace = GetMemoryChunkSpace(s->memtuples);

	/* the new array must fit in what is left, with room for some tuples */
	if (s->avail_mem < oldspace * 2 ||
		newsize * sizeof(CompSpillSortTuple) >= MaxAllocHugeSize)
	{
		s->growmemtuples = false;
		return false;
	}

	s->memtuples = repalloc_huge(s->memtuples,
								 newsize * sizeof(CompSpillSortTuple));
	s->memtupsize = (int) newsize;
	compspill_use_mem(s, GetMemoryChunkSpace(s->memtuples) - oldspace);
	return true;
}

/*
 * Open the spill file and the run writer, charging their buffers.
 */
static void
compspill_start_spill(CompSpillSorter *s)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(s->maincxt);
	int64		writer_mem;

	s->file = CompSpillFileCreate(compspill_enable_dio, s->write_size,
								  &s->stats);
	s->comp = CompSpillCompressorCreate(s->stats.codec,
										compspill_compression_level);
	s->writer = CompSpillRunWriterCreate(s->file, s->tupdesc, s->comp,
										 s->stats.codec, s->block_size,
										 &s->stats);
	s->runs_cap = 16;
	s->runs = palloc(sizeof(CompSpillRun) * s->runs_cap);
	s->spilled = true;

	/*
	 * Charge the writer's buffers, unless with the SortTuple array they
	 * would take all of work_mem (a tiny work_mem), as tuplesort does with
	 * its tape buffers.
	 */
	writer_mem = CompSpillRunWriterMemory(s->block_size, s->write_size);
	if (writer_mem + (int64) GetMemoryChunkSpace(s->memtuples) < s->allowed_mem)
	{
		s->writer_charge = writer_mem;
		compspill_use_mem(s, writer_mem);
	}

	MemoryContextSwitchTo(oldcxt);
}

/*
 * Append a finished run to the list of runs.
 */
static void
compspill_add_run(CompSpillSorter *s, const CompSpillRun *run)
{
	if (s->nruns >= s->runs_cap)
	{
		s->runs_cap *= 2;
		s->runs = repalloc(s->runs, sizeof(CompSpillRun) * s->runs_cap);
	}
	s->runs[s->nruns++] = *run;
}

/*
 * Sort the rows in memory and write them out as one run.
 */
static void
compspill_dump_run(CompSpillSorter *s)
{
	CompSpillRun run;
	int			i;

	if (!s->spilled)
		compspill_start_spill(s);

	compspill_sort_memtuples(s);

	CompSpillRunBegin(s->writer);
	for (i = 0; i < s->memtupcount; i++)
	{
		MinimalTuple tup = s->memtuples[i].tuple;

		CHECK_FOR_INTERRUPTS();
		ExecStoreMinimalTuple(tup, s->minslot, false);
		slot_getallattrs(s->minslot);
		CompSpillRunPut(s->writer, s->minslot->tts_values,
						s->minslot->tts_isnull);
		s->stats.bytes_in += tup->t_len;
	}
	ExecClearTuple(s->minslot);
	CompSpillRunEnd(s->writer, &run);

	s->stats.rows_spilled += s->memtupcount;
	compspill_add_run(s, &run);
	s->stats.nruns = s->nruns;

	s->memtupcount = 0;
	MemoryContextReset(s->tuplecxt);
	s->avail_mem += s->tuple_mem;
	s->tuple_mem = 0;
}

/*
 * Add one row to the sort.
 */
void
CompSpillSorterPut(CompSpillSorter *s, TupleTableSlot *slot)
{
	MemoryContext oldcxt;
	CompSpillSortTuple *stup;
	int64		space;

	Assert(s->status == COMPSPILL_LOADING);

	if (s->memtupcount >= s->memtupsize && !compspill_grow_memtuples(s))
		compspill_dump_run(s);

	stup = &s->memtuples[s->memtupcount];
	oldcxt = MemoryContextSwitchTo(s->tuplecxt);
	stup->tuple = ExecCopySlotMinimalTuple(slot);
	MemoryContextSwitchTo(oldcxt);
	space = GetMemoryChunkSpace(stup->tuple);
	s->tuple_mem += space;
	compspill_use_mem(s, space);
	compspill_set_datum1(s, stup);
	s->memtupcount++;

	compspill_consider_abort(s);

	if (s->avail_mem < 0)
		compspill_dump_run(s);
}

/*
 * Compare the current rows of two merge inputs; binaryheap keeps the
 * largest first, so the order is reversed.
 */
static int
compspill_heap_cmp(Datum a, Datum b, void *arg)
{
	CompSpillSorter *s = (CompSpillSorter *) arg;
	int			ia = DatumGetInt32(a);
	int			ib = DatumGetInt32(b);
	Datum	   *va = s->cur_values[ia];
	Datum	   *vb = s->cur_values[ib];
	bool	   *na = s->cur_isnull[ia];
	bool	   *nb = s->cur_isnull[ib];
	int			k;

	for (k = 0; k < s->nkeys; k++)
	{
		SortSupport ssup = &s->ssup[k];
		int			col = ssup->ssup_attno - 1;
		int			cmp = ApplySortComparator(va[col], na[col],
											  vb[col], nb[col], ssup);

		if (cmp != 0)
			return -cmp;
	}
	return 0;
}

/*
 * Make sure n readers exist.
 */
static void
compspill_ensure_readers(CompSpillSorter *s, int n)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(s->maincxt);

	while (s->nreaders < n)
		s->readers[s->nreaders++] =
			CompSpillRunReaderCreate(s->file, s->tupdesc, s->comp,
									 s->read_size, &s->stats);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Open readers on runs[0..n) and fill the heap with their first rows.
 */
static void
compspill_start_merge(CompSpillSorter *s, CompSpillRun *runs, int n)
{
	int			i;

	compspill_ensure_readers(s, n);
	binaryheap_reset(s->heap);
	for (i = 0; i < n; i++)
	{
		CompSpillRunReaderOpen(s->readers[i], &runs[i]);
		if (CompSpillRunReaderNext(s->readers[i], &s->cur_values[i],
								   &s->cur_isnull[i]))
			binaryheap_add_unordered(s->heap, Int32GetDatum(i));
	}
	binaryheap_build(s->heap);
	s->last_input = -1;
}

/*
 * Move the input at the top of the heap to its next row; return the input
 * that now has the smallest row, or -1 when all are done.
 */
static inline int
compspill_advance_top(CompSpillSorter *s)
{
	int			top = DatumGetInt32(binaryheap_first(s->heap));

	if (CompSpillRunReaderNext(s->readers[top], &s->cur_values[top],
							   &s->cur_isnull[top]))
		binaryheap_replace_first(s->heap, Int32GetDatum(top));
	else
		(void) binaryheap_remove_first(s->heap);

	if (binaryheap_empty(s->heap))
		return -1;
	return DatumGetInt32(binaryheap_first(s->heap));
}

/*
 * Merge runs[0..n) into one new run appended to the file.
 */
static void
compspill_merge_into_run(CompSpillSorter *s, CompSpillRun *runs, int n,
						 CompSpillRun *out)
{
	int			top;

	compspill_start_merge(s, runs, n);
	CompSpillRunBegin(s->writer);
	top = binaryheap_empty(s->heap) ? -1 :
		DatumGetInt32(binaryheap_first(s->heap));
	while (top >= 0)
	{
		CHECK_FOR_INTERRUPTS();
		CompSpillRunPut(s->writer, s->cur_values[top], s->cur_isnull[top]);
		top = compspill_advance_top(s);
	}
	CompSpillRunEnd(s->writer, out);
}

/*
 * Size the merges: how many inputs fit in work_mem, next to the writer for
 * an intermediate merge, and on their own for the final one, which writes
 * nothing.
 *
 * An input holds one stored block, its decompressed form and its
 * fixed-width columns' arrays, so its cost follows from the blocks actually
 * written: their average raw and stored sizes and rows, with an eighth more
 * for the blocks above average.
 */
static void
compspill_plan_merge(CompSpillSorter *s)
{
	int64		nblocks = Max(s->stats.blocks_written, 1);
	Size		raw_size = s->stats.bytes_raw / nblocks;
	Size		stored_size = s->stats.bytes_written_runs / nblocks;
	int64		writer_mem = CompSpillRunWriterMemory(s->block_size,
													  s->write_size);
	Size		fixed_size = 0;
	int			maxinputs = Max(s->nruns, 2);

	/* fixed-width columns are rebuilt from byte planes into their own array */
	for (int a = 0; a < s->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(s->tupdesc, a);

		if (attr->attlen > 1)
			fixed_size += attr->attlen;
	}
	fixed_size *= s->stats.rows_spilled / nblocks + 1;

	raw_size += raw_size / 8;
	stored_size += stored_size / 8;
	s->read_size = stored_size;
	s->reader_mem = Max(CompSpillRunReaderMemory(raw_size, stored_size,
												 fixed_size), 1);

	s->fanin = (int) Max((s->allowed_mem - writer_mem) / s->reader_mem,
						 COMPSPILL_MIN_FANIN);
	s->fanin = Min(s->fanin, maxinputs);
	s->final_fanin = (int) Max(s->allowed_mem / s->reader_mem,
							   COMPSPILL_MIN_FANIN);
	s->final_fanin = Min(Max(s->final_fanin, s->fanin), maxinputs);

	s->readers = palloc0(sizeof(CompSpillRunReader *) * s->final_fanin);
	s->cur_values = palloc0(sizeof(Datum *) * s->final_fanin);
	s->cur_isnull = palloc0(sizeof(bool *) * s->final_fanin);
	s->heap = binaryheap_allocate(s->final_fanin, compspill_heap_cmp, s);
}

/*
 * Merge runs in passes until the final merge can read all of them at once.
 */
static void
compspill_merge_passes(CompSpillSorter *s)
{
	if (s->nruns > s->final_fanin)
		compspill_use_mem(s, (int64) s->fanin * s->reader_mem);

	while (s->nruns > s->final_fanin)
	{
		CompSpillRun *next;
		int			nnext = 0;
		int			i = 0;
		int			excess = s->nruns - s->final_fanin;

		next = palloc(sizeof(CompSpillRun) * s->nruns);

		/*
		 * Each merge of k runs removes k - 1 of them.  If one merge can bring
		 * the count down to the final fan-in, merge only as many runs as that
		 * takes; otherwise merge everything in groups of the fan-in.
		 */
		if (excess < s->fanin)
		{
			compspill_merge_into_run(s, s->runs, excess + 1, &next[nnext++]);
			for (i = excess + 1; i < s->nruns; i++)
				next[nnext++] = s->runs[i];
		}
		else
		{
			while (i < s->nruns)
			{
				int			n = Min(s->fanin, s->nruns - i);

				if (n == 1)
					next[nnext++] = s->runs[i];
				else
					compspill_merge_into_run(s, &s->runs[i], n,
											 &next[nnext++]);
				i += n;
			}
		}

		CompSpillFileFlush(s->file);
		pfree(s->runs);
		s->runs = next;
		s->nruns = nnext;
		s->runs_cap = s->nruns;
		s->stats.merge_passes++;
	}

	if (s->stats.merge_passes > 0)
		s->avail_mem += (int64) s->fanin * s->reader_mem;
}

/*
 * All rows are in: sort them in memory, or write the last run and prepare
 * the final merge.
 */
void
CompSpillSorterFinish(CompSpillSorter *s)
{
	MemoryContext oldcxt;

	Assert(s->status == COMPSPILL_LOADING);

	if (!s->spilled)
	{
		compspill_sort_memtuples(s);
		s->current = 0;
		s->status = COMPSPILL_SORTED_IN_MEMORY;
		return;
	}

	if (s->memtupcount > 0)
		compspill_dump_run(s);
	CompSpillFileFlush(s->file);
	s->stats.bytes_written_runs = s->stats.bytes_written;

	/* the array is not needed any more; its memory goes to the readers */
	s->avail_mem += GetMemoryChunkSpace(s->memtuples);
	pfree(s->memtuples);
	s->memtuples = NULL;
	s->memtupsize = 0;
	MemoryContextReset(s->tuplecxt);

	compspill_disable_abbrev(s);

	oldcxt = MemoryContextSwitchTo(s->maincxt);
	compspill_plan_merge(s);
	compspill_merge_passes(s);
	MemoryContextSwitchTo(oldcxt);

	/* nothing is written from here on: the writer's memory goes to readers */
	CompSpillRunWriterFree(s->writer);
	s->writer = NULL;
	CompSpillFileEndWrites(s->file);
	s->avail_mem += s->writer_charge;
	s->writer_charge = 0;

	/* the final merge streams to the caller */
	s->stats.merge_passes++;
	s->final_nruns = s->nruns;
	compspill_use_mem(s, (int64) s->final_nruns * s->reader_mem);
	compspill_start_merge(s, s->runs, s->final_nruns);
	s->status = COMPSPILL_FINAL_MERGE;
}

/*
 * Return the next row in sort order, or NULL at the end.  The slot's
 * contents stay valid until the next call.
 */
TupleTableSlot *
CompSpillSorterGet(CompSpillSorter *s)
{
	TupleTableSlot *slot;
	int			top;

	if (s->status == COMPSPILL_SORTED_IN_MEMORY)
	{
		if (s->current >= s->memtupcount)
			return NULL;
		return ExecStoreMinimalTuple(s->memtuples[s->current++].tuple,
									 s->minslot, false);
	}

	Assert(s->status == COMPSPILL_FINAL_MERGE);

	if (binaryheap_empty(s->heap))
		return NULL;

	/* the previous winner moves on only now, its row no longer needed */
	if (s->last_input >= 0)
	{
		top = compspill_advance_top(s);
		if (top < 0)
		{
			s->last_input = -1;
			return NULL;
		}
	}
	else
		top = DatumGetInt32(binaryheap_first(s->heap));

	slot = s->virtslot;
	ExecClearTuple(slot);
	memcpy(slot->tts_values, s->cur_values[top], sizeof(Datum) * s->natts);
	memcpy(slot->tts_isnull, s->cur_isnull[top], sizeof(bool) * s->natts);
	ExecStoreVirtualTuple(slot);
	s->last_input = top;
	return slot;
}

/*
 * Start returning the sorted rows from the first one again.
 */
void
CompSpillSorterRewind(CompSpillSorter *s)
{
	if (s->status == COMPSPILL_SORTED_IN_MEMORY)
		s->current = 0;
	else if (s->status == COMPSPILL_FINAL_MERGE)
	{
		ExecClearTuple(s->virtslot);
		compspill_start_merge(s, s->runs, s->final_nruns);
	}
}

/*
 * Release everything: the temp file, buffers, codec contexts and memory.
 */
void
CompSpillSorterEnd(CompSpillSorter *s)
{
	ExecDropSingleTupleTableSlot(s->minslot);
	ExecDropSingleTupleTableSlot(s->virtslot);
	if (s->file)
		CompSpillFileClose(s->file);
	MemoryContextDelete(s->maincxt);
}

/*
 * Did the sort go to disk?
 */
bool
CompSpillSorterSpilled(CompSpillSorter *s)
{
	return s->spilled;
}

/*
 * Peak memory charged, in bytes.
 */
int64
CompSpillSorterSpaceUsed(CompSpillSorter *s)
{
	return s->peak_mem;
}

/*
 * The spill figures of this sort.
 */
CompSpillStats *
CompSpillSorterStats(CompSpillSorter *s)
{
	return &s->stats;
}
