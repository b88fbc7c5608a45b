/*-------------------------------------------------------------------------
 *
 * sorter.c
 *	  In-memory sort and run formation of compspill.
 *
 * How a sort goes
 * ---------------
 *
 * Rows arrive as slots and are copied into minimal tuples in a generation
 * context, each described by a SortTuple that also holds the first key
 * (abbreviated when the opclass offers it).  A sort of a single by-value
 * column on itself takes the datum path instead, as native's datum sort
 * does: it keeps only the values in an array of Datums and counts its
 * NULLs, so that a narrow row costs a Datum, not a tuple.
 *
 * If every row fits, the array is quicksorted with SortSupport (with the
 * variant that inlines the first key's comparator, when there is one) and
 * the rows are handed out in place: no disk, the same work native sort
 * does.
 *
 * Memory is measured, not estimated: what counts against work_mem is what
 * the sort's memory contexts hold (MemoryContextMemAllocated) beyond the
 * empty sort's own state, array, spill buffers and merge inputs alike,
 * except that the tuples count as native sort counts them, by their
 * chunks' space: a run ends with the row that passes work_mem, as native's
 * does, so that a sort native keeps in memory stays in memory.  The
 * measured peak shows all the sort holds, the empty state and the tuple
 * context's block headers and unused ends included; those blocks grow to
 * about the square root of 64 times work_mem (16kB at 4MB), which keeps
 * that overhead within 1-2% of work_mem.  What writing a run adds besides
 * (its entry in the list of runs, its extent map) is made room for between
 * runs, before the tuples come.  From the
 * second run on, the tuples live in one keeper block that a reset keeps,
 * as large as a run's tuples may be, so that each run reuses the last
 * one's memory instead of handing it back to malloc and faulting it in
 * again (compspill_keep_tuple_memory).
 * The first run's writer does not come on top of a full work_mem: a sort
 * of tuples makes it, when it first spills, in the memory that compacting
 * its sorted array to the tuples' pointers frees, as native sort takes its
 * tape buffers then (with lz4 for that run where zstd's state has no room
 * there); a sort of single values reserves it from the start, in full
 * when the plan expects a spill.  The later runs' writer is reserved from
 * their tuples' memory.
 *
 * When memory runs out, the array is sorted and written out as a run
 * through the operation's spill object (spill/run.h), in the frame kind it
 * chooses for the run (CompSpillWantRowFrames): row frames take the
 * tuples as they are, two memcpys a row; column frames take each row
 * deformed once, its datums laid out column by column by the block
 * encoder; the datum path's values always go to column frames.  The tuple
 * memory is then reset and the next run begins.  The block size is chosen
 * at the first spill from the number of runs the sort is expected to make
 * (the plan's row estimate over the rows of the first run), so that the
 * final merge can read all of them at once.  A sort that makes more runs
 * than its list of runs can hold merges the lowest level's runs while it
 * still takes input.
 *
 * At the end the runs are merged (merge.c) and the rows returned in a
 * minimal tuple slot holding the merge input's tuple (runs of row frames),
 * or in a virtual slot whose datums point into the merge inputs' decoded
 * blocks.  Merges compare the full values: abbreviated keys are not stored
 * in the runs, so abbreviation is switched off once the runs are written,
 * as tuplesort does.
 *
 * Rewinding is always possible: the in-memory array stays, and the final
 * merge can be restarted from the start of its runs.  A sort asked for
 * random access (backward reads, mark and restore: merge join inners,
 * scrollable cursors) reads its in-memory array by position, or, once
 * spilled, writes its final merge into a store (store.c) on its own spill
 * and reads that by position: one more write of the compressed rows, as
 * tuplesort's random-access final merge makes.
 *
 * IDENTIFICATION
 *	  src/sort/sorter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"

#include "base/buffer.h"
#include "base/compat.h"
#include "base/spillstats.h"
#include "shared/activity.h"
#include "shared/stats.h"
#include "sort/merge.h"
#include "sort/sorter.h"
#include "sort/store.h"
#include "sort/tupleform.h"
#include "spill/run.h"

/* initial size of the SortTuple array, as tuplesort's */
#define COMPSPILL_INITIAL_MEMTUPSIZE \
	Max(1024, ALLOCSET_SEPARATE_THRESHOLD / sizeof(CompSpillSortTuple) + 1)

/*
 * The datum path: the initial size of its array (the most a small chunk
 * holds, one more), the least share of work_mem its array may take however
 * much the spill's fixed costs leave (at 64kB they take more than
 * work_mem; native's array takes all of it, with a SortTuple of 24 bytes
 * a row where a value takes 8), and the size a value would have as a
 * minimal tuple, which the spill figures count as the bytes of a row.
 */
#define COMPSPILL_INITIAL_DATUMS \
	(ALLOCSET_SEPARATE_THRESHOLD / sizeof(Datum) + 1)
#define COMPSPILL_DATUM_MIN_SHARE	2	/* half of work_mem */
#define COMPSPILL_DATUM_ROW_LEN(attlen) \
	((int) (MAXALIGN(SizeofHeapTupleHeader) - MINIMAL_TUPLE_OFFSET + (attlen)))

/*
 * The tuple context's blocks grow to about the square root of this many
 * times work_mem.  What a run holds beyond work_mem is the unused end of its
 * last block, and on every block its header and the end too small for the
 * next row: about 80 bytes for rows of 100, so that the sum is smallest
 * near that size (8kB at 1MB, 16kB at 4MB, 64kB at 64MB).
 */
#define COMPSPILL_TUPLE_BLOCK_FACTOR	64.0

/*
 * What one run costs in the list of runs: its entry (the array doubles) and
 * its extent map; and the fewest runs the list holds before some are merged.
 */
#define COMPSPILL_RUN_ENTRY_MEM		((int64) (2 * sizeof(CompSpillRun) + 64))
#define COMPSPILL_MIN_MAX_RUNS		8

/*
 * What writing a run adds to the spill's memory besides its writer: the
 * run's extent map, a small chunk of the spill's context, for which that
 * context may take one more block (its blocks grow to ALLOCSET_SMALL_MAXSIZE).
 * It is allocated while the run is written, after the last check of
 * memory, so it is kept free.
 */
#define COMPSPILL_RUN_GROWTH		((int64) ALLOCSET_SMALL_MAXSIZE)

typedef struct CompSpillSortTuple
{
	MinimalTuple tuple;			/* the row */
	Datum		datum1;			/* first key, possibly abbreviated */
	bool		isnull1;		/* is the first key NULL? */
	uint32		key1off;		/* where an abbreviated first key's whole
								 * value starts in the tuple */
} CompSpillSortTuple;

typedef enum CompSpillSorterStatus
{
	COMPSPILL_LOADING,			/* accepting rows */
	COMPSPILL_SORTED_IN_MEMORY, /* all rows sorted in the array */
	COMPSPILL_FINAL_MERGE,		/* streaming the final merge */
	COMPSPILL_SORTED_IN_STORE	/* the final merge written to a store */
} CompSpillSorterStatus;

struct CompSpillSorter
{
	CompSpillSorterStatus status;
	MemoryContext maincxt;		/* everything this sort owns */
	MemoryContext tuplecxt;		/* tuples of the run being loaded */
	int64		tuple_keep;		/* its keeper block, kept across runs, or 0 */
	int64		tuple_bytes;	/* space of the tuples loaded since it was
								 * reset (see compspill_copy_tuple) */
	int64		tuple_later;	/* what they would count in a later run */
#if COMPSPILL_CARVED_TUPLES
	char	   *carve;			/* the free end of the batch the tuples are
								 * carved from (compspill_carve_tuple) */
	Size		carve_left;		/* its bytes */
	Size		carve_batch;	/* a batch's size */
	int64		chunk_header;	/* what a chunk's header adds to its space */
#endif
	TupleDesc	tupdesc;
	CompSpillTupleForm *form;	/* for forming the rows it takes */
	int			natts;
	CompSpillSettings settings; /* captured at executor start */
	double		est_rows;		/* the plan's estimate of the input */
	int			est_width;
	bool		random_access;	/* backward reads, mark and restore */
	const char *what;			/* the node, for the log line and the view */

	/*
	 * The datum path: one by-value column sorted on itself keeps only its
	 * values, in datums[0 .. ndatums), and counts its NULLs (memtuples is
	 * then unused, memtupsize is the capacity of datums).
	 */
	bool		datum_mode;
	Datum	   *datums;
	int			ndatums;
	int			nnulls;
	int			datum_row_len;	/* a value's size as a minimal tuple */

	/* sort keys */
	int			nkeys;
	SortSupport ssup;			/* nkeys entries */
	AttrNumber	attno1;			/* first key's attribute number */

	/* memory, in bytes, measured on the contexts */
	int64		allowed_mem;	/* work_mem */
	int64		base_mem;		/* what the empty sort held, not counted */
	int64		tuple_block;	/* largest block of the tuple context */
	int64		other_mem;		/* all but the tuple context and the empty
								 * sort, with the writer's reservation */
	int64		writer_reserve; /* reserved for a writer not yet created */
	Size		block_size;		/* what the writer will use */
	Size		later_block_size;	/* after the first run, if larger */
	Size		first_block_size;	/* the first run's, once spilled */
	int64		later_per_row;	/* a row's bytes in the later runs, as the
								 * first run's tuples measured them */
	int64		probe_held;		/* a reader of the first run: what it held */
	int64		probe_grows;	/* the part that grows with the frames */
	int64		probe_bufs;		/* its buffers */
	bool		small_writer;	/* a spill was not expected */
	bool		first_light;	/* first run in lz4 where zstd was asked */
	Size		write_size;

	/* rows in memory */
	CompSpillSortTuple *memtuples;
	int			memtupcount;	/* rows held, the datum path's NULLs too */
	int			memtupsize;
	bool		growmemtuples;
	bool		topped_up;		/* the full array's one more growth is done */
	bool		trimmed;		/* its empty end was given back */
	int64		abbrev_next;	/* when to consider aborting abbreviation */
	CompSpillStorePos pos;		/* read position in memory */
	CompSpillStorePos markpos;	/* marked position in memory */

	/* spilling */
	CompSpillSpiller *spill;
	CompSpillRun *runs;
	int			nruns;
	int			runs_cap;
	int			max_runs;		/* runs the list holds before some are merged */
	SortSupport merge_ssup;		/* the keys without abbreviation, to merge */
	CompSpillStats stats;

	/* merging, and with random access the merged rows */
	CompSpillMerge *merge;
	CompSpillStore *store;
	CompSpillMergedFrames merged_frames;	/* the store's frames */

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
		/* the whole first keys, where compspill_set_datum1 found them */
		na = a->isnull1;
		nb = b->isnull1;
		da = na ? (Datum) 0 : PointerGetDatum((char *) a->tuple + a->key1off);
		db = nb ? (Datum) 0 : PointerGetDatum((char *) b->tuple + b->key1off);
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
 * Define a comparison of two values of the datum path, which are never
 * NULL, with the given comparator.
 */
#define COMPSPILL_DEFINE_DATUM_CMP(name, apply) \
static inline int \
name(const Datum *a, const Datum *b, CompSpillSorter *s) \
{ \
	return apply(*a, false, *b, false, s->ssup); \
}

COMPSPILL_DEFINE_DATUM_CMP(compspill_dcmp_generic, ApplySortComparator)
COMPSPILL_DEFINE_DATUM_CMP(compspill_dcmp_signed, ApplySignedSortComparator)
COMPSPILL_DEFINE_DATUM_CMP(compspill_dcmp_int32, ApplyInt32SortComparator)

#define ST_SORT compspill_dsort_generic
#define ST_ELEMENT_TYPE Datum
#define ST_COMPARE(a, b, arg) compspill_dcmp_generic(a, b, arg)
#define ST_COMPARE_ARG_TYPE CompSpillSorter
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT compspill_dsort_signed
#define ST_ELEMENT_TYPE Datum
#define ST_COMPARE(a, b, arg) compspill_dcmp_signed(a, b, arg)
#define ST_COMPARE_ARG_TYPE CompSpillSorter
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT compspill_dsort_int32
#define ST_ELEMENT_TYPE Datum
#define ST_COMPARE(a, b, arg) compspill_dcmp_int32(a, b, arg)
#define ST_COMPARE_ARG_TYPE CompSpillSorter
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Sort the values of the datum path, with the variant that inlines the
 * key's comparator when there is one (by-value types have no abbreviated
 * keys, so no unsigned variant is needed).
 */
static void
compspill_sort_datums(CompSpillSorter *s)
{
	SortSupport ssup = s->ssup;

	if (s->ndatums <= 1)
		return;
#if SIZEOF_DATUM >= 8
	if (ssup->comparator == ssup_datum_signed_cmp)
		compspill_dsort_signed(s->datums, s->ndatums, s);
	else
#endif
	if (ssup->comparator == ssup_datum_int32_cmp)
		compspill_dsort_int32(s->datums, s->ndatums, s);
	else
		compspill_dsort_generic(s->datums, s->ndatums, s);
}

/*
 * Sort the rows in memory, with the variant that inlines the first key's
 * comparator when there is one.
 */
static void
compspill_sort_memtuples(CompSpillSorter *s)
{
	SortSupport ssup = s->ssup;

	if (s->datum_mode)
	{
		compspill_sort_datums(s);
		return;
	}
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
 * Measure what the sort's contexts hold now, and keep the peak.
 */
static int64
compspill_measure(CompSpillSorter *s)
{
	int64		held = MemoryContextMemAllocated(s->maincxt, true);

	/* and the codec's and cipher's contexts, which are malloc'd */
	if (s->spill != NULL)
		held += CompSpillMallocHeld(s->spill);

	if (held > s->stats.peak_mem)
		s->stats.peak_mem = held;
	return held;
}

/* compspill_measure for the merge, which knows the sort only as arg */
static int64
compspill_measure_cb(void *arg)
{
	return compspill_measure((CompSpillSorter *) arg);
}

static void compspill_remeasure(CompSpillSorter *s);

/*
 * What the tuples of the run being loaded count against work_mem: the
 * space of their chunks, as native sort counts them, without the tuple
 * context's block headers nor the unused end of its last block (or of its
 * keeper, see compspill_keep_tuple_memory).  Those are what a sort holds
 * beyond work_mem, as native's do, and the measured peak shows them.
 */
static inline int64
compspill_tuple_mem(CompSpillSorter *s)
{
	return s->tuple_bytes;
}

/*
 * The tuples of the run were freed, their context reset or made anew.
 */
static inline void
compspill_tuples_freed(CompSpillSorter *s)
{
	s->tuple_bytes = 0;
	s->tuple_later = 0;
#if COMPSPILL_CARVED_TUPLES
	s->carve = NULL;
	s->carve_left = 0;
#endif
}

#if COMPSPILL_CARVED_TUPLES
/*
 * Give len bytes for a tuple of the run being loaded, carved from a batch
 * of the tuple context (see compspill_copy_tuple), and add what the tuple
 * counts against work_mem to tuple_bytes.  A tuple of more than a quarter
 * of a batch gets a chunk of its own.
 */
static void *
compspill_carve_tuple(Size len, void *arg)
{
	CompSpillSorter *s = (CompSpillSorter *) arg;
	char	   *tup;

	len = MAXALIGN(len);
	if (len > s->carve_batch / 4)
	{
		int64		space;

		tup = MemoryContextAlloc(s->tuplecxt, len);
		space = (int64) GetMemoryChunkSpace(tup);
		s->tuple_bytes += space;
		s->tuple_later += space;
		return tup;
	}
	if (len > s->carve_left)
	{
		s->carve = MemoryContextAlloc(s->tuplecxt, s->carve_batch);
		s->carve_left = s->carve_batch;
		/* what a chunk's header adds, in native sort's count */
		s->chunk_header = (int64) GetMemoryChunkSpace(s->carve) -
			(int64) s->carve_batch;
	}
	tup = s->carve;
	s->carve += len;
	s->carve_left -= len;
	s->tuple_bytes += (int64) len + (s->nruns == 0 ? s->chunk_header : 0);
	s->tuple_later += (int64) len;
	return tup;
}
#endif

/*
 * Copy the row in slot into the tuple context; return it and add what it
 * counts against work_mem to tuple_bytes.  From 17 on that context is a
 * bump context, which keeps no header per chunk, and a tuple counts its
 * aligned length, as native sort counts it there.  Before 17 it is a
 * generation context, whose chunks have a header of 24 bytes (a quarter of
 * the space of a lineitem row that mj sorts): there the rows are formed,
 * or copied, straight into batches of the tuple block's size allocated in
 * it (compspill_carve_tuple).  The first run counts each as native sort
 * counts it, with the header its chunk would have, so that the same rows
 * stay in memory as natively (the first run of each batch of a sort reset
 * between batches); once the sort spills, the later runs count what the
 * rows take, and hold about a fifth more rows of that size than native's
 * runs (as on 17 and later), in fewer, longer runs whose blocks are
 * larger.  Nothing may pfree, repalloc or ask the space of a carved
 * tuple, as of a chunk of a bump context.
 */
static MinimalTuple
compspill_copy_tuple(CompSpillSorter *s, TupleTableSlot *slot)
{
#if COMPSPILL_CARVED_TUPLES
	return CompSpillCopySlotMinimalWith(s->form, slot, compspill_carve_tuple,
										s);
#else
	MemoryContext oldcxt;
	MinimalTuple tup;
	int64		space;

	oldcxt = MemoryContextSwitchTo(s->tuplecxt);
	tup = CompSpillCopySlotMinimal(s->form, slot);
	MemoryContextSwitchTo(oldcxt);
	space = CompSpillTupleSpace(tup);
	s->tuple_bytes += space;
	s->tuple_later += space;
	return tup;
#endif
}

/*
 * Make the tuple context anew, with a keeper block of keep bytes (none if
 * 0).  Its blocks grow to the tuple block's size, or the keeper's.
 */
static void
compspill_make_tuple_context(CompSpillSorter *s, int64 keep)
{
	Size		init = Min(s->tuple_block, 8192);

	if (s->tuplecxt != NULL)
		MemoryContextDelete(s->tuplecxt);
	keep = keep > 0 ? Max(MAXALIGN_DOWN(keep), 1024) : 0;
	s->tuplecxt = CompSpillTupleContextCreate(s->maincxt,
											  "CompSpill sort tuples",
											  (Size) keep, init,
											  Max((Size) s->tuple_block,
												  (Size) keep));
	s->tuple_keep = keep;
	compspill_tuples_freed(s);

#if COMPSPILL_CARVED_TUPLES

	/*
	 * Batches of tuples (see compspill_copy_tuple) are chunks of the
	 * context's blocks, which take chunks of up to about an eighth of their
	 * largest: of a block's size where a keeper holds them (the unused end
	 * of the last is then what the unused end of a last block was), of an
	 * eighth of it before.
	 */
	if (keep >= 8 * s->tuple_block)
		s->carve_batch = (Size) s->tuple_block - 64;
	else
		s->carve_batch = (Size) s->tuple_block / 8 - 64;
#endif
}

/*
 * Between runs of a spilling sort, keep the tuples' memory for the next
 * run instead of giving it back to malloc: a keeper block as large as the
 * tuples of a run may take now (work_mem less all else the sort holds and
 * a block).  Resetting a context frees its blocks, and malloc gives the
 * top of its heap back to the kernel once more than a little is free
 * there, so every run would otherwise shrink and grow the heap again, a
 * brk and a flush of the other CPUs' TLBs per block, and fault every page
 * in anew.  Native sort escapes that through its larger blocks, which are
 * mmap'd and make malloc keep more free memory; compspill's blocks are
 * small so that a run never passes work_mem by much.  The keeper is made
 * anew only when it must shrink (the rest of the sort grew) or could grow
 * by an eighth.
 */
static void
compspill_keep_tuple_memory(CompSpillSorter *s)
{
	int64		want;

	want = s->allowed_mem - s->other_mem;
	want = MAXALIGN_DOWN(Min(want, (int64) MaxAllocSize));
	if (want < 4 * s->tuple_block)
		want = 0;
	if (s->tuple_keep == 0 && want == 0)
		return;
	if (s->tuple_keep > want || want > s->tuple_keep + s->tuple_keep / 8)
	{
		compspill_make_tuple_context(s, want);
		compspill_remeasure(s);
	}
}

/*
 * Measure again what the sort holds besides its tuples and its empty
 * state, with the writer's reservation while the writer does not exist and
 * the room the next run's extent map may take.
 */
static void
compspill_remeasure(CompSpillSorter *s)
{
	s->other_mem = compspill_measure(s) - (int64) s->tuplecxt->mem_allocated -
		s->base_mem + s->writer_reserve + COMPSPILL_RUN_GROWTH;
}

/*
 * What a writer of blocks of block_size may hold: a bound on a sort of
 * tuples, whose column frames' encoder is most of it, the typical figure
 * on the datum path, whose single column's encoder holds little more.
 */
static Size
compspill_writer_memory(CompSpillSorter *s, Size block_size)
{
	if (s->datum_mode)
		return CompSpillWriterMemory(block_size, s->write_size);
	return CompSpillWriterMemoryBound(block_size, s->write_size);
}

/* what compacting the SortTuple array to pointers frees, per row */
#define COMPSPILL_COMPACT_GAIN \
	((int64) (sizeof(CompSpillSortTuple) - sizeof(MinimalTuple)))

/*
 * Return the part of what writing a run will add (the writer's reservation
 * and the run's extent map) that compacting the array of rows rows would
 * not free (see CompSpillSorterBegin): all of it once a run was written,
 * and on the datum path.
 */
static inline int64
compspill_reserve_due(CompSpillSorter *s, int64 rows)
{
	int64		reserve = s->writer_reserve + COMPSPILL_RUN_GROWTH;

	if (s->spill != NULL || s->datum_mode)
		return reserve;
	return Max(reserve - COMPSPILL_COMPACT_GAIN * rows, 0);
}

/*
 * What the sort counts against work_mem besides its tuples, with rows rows
 * loaded: all it holds but its tuples and its empty state, and what
 * compspill_reserve_due says writing them will add.
 */
static inline int64
compspill_other_due(CompSpillSorter *s, int64 rows)
{
	return s->other_mem - s->writer_reserve - COMPSPILL_RUN_GROWTH +
		compspill_reserve_due(s, rows);
}

/*
 * Have the rows loaded passed work_mem?  As native sort does, the row that
 * passes it is the last of the run.  A run holds at least a quarter of
 * work_mem of tuples whatever the fixed costs, which at the smallest
 * work_mem take most of it, so that runs do not become tiny.
 */
static inline bool
compspill_memory_full(CompSpillSorter *s)
{
	int64		tuples = compspill_tuple_mem(s);
	int64		other = compspill_other_due(s, s->memtupcount);

	return tuples + other > s->allowed_mem &&
		tuples >= s->allowed_mem / 4;
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
	{
		/* an abbreviating type is by reference: the value is in the tuple */
		stup->key1off = (uint32) ((char *) DatumGetPointer(stup->datum1) -
								  (char *) stup->tuple);
		stup->datum1 = s->ssup->abbrev_converter(stup->datum1, s->ssup);
	}
}

/*
 * Make ssup, the first key's SortSupport, compare whole values: runs hold
 * whole values, not abbreviated ones.
 */
static void
compspill_unabbreviate(SortSupport ssup)
{
	if (ssup->abbrev_converter == NULL)
		return;
	ssup->comparator = ssup->abbrev_full_comparator;
	ssup->abbrev_converter = NULL;
	ssup->abbrev_abort = NULL;
	ssup->abbrev_full_comparator = NULL;
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

	if (ssup->abbrev_converter == NULL || s->spill != NULL ||
		s->memtupcount < s->abbrev_next)
		return;

	s->abbrev_next *= 2;
	if (!ssup->abbrev_abort(s->memtupcount, ssup))
		return;

	compspill_unabbreviate(ssup);
	for (i = 0; i < s->memtupcount; i++)
		compspill_set_datum1(s, &s->memtuples[i]);
}

/*
 * Start a sort of rows of tupdesc on the given keys within work_mem_kb,
 * spilling with the given settings.
 */
CompSpillSorter *
CompSpillSorterBegin(TupleDesc tupdesc, const CompSpillSortSpec *spec,
					 int work_mem_kb, const CompSpillSettings *set)
{
	MemoryContext maincxt;
	MemoryContext oldcxt;
	CompSpillSorter *s;
	int64		expected;
	int			k;

	maincxt = AllocSetContextCreate(CurrentMemoryContext, "CompSpill sort",
									COMPSPILL_SMALL_CONTEXT_SIZES);
	oldcxt = MemoryContextSwitchTo(maincxt);

	s = palloc0(sizeof(CompSpillSorter));
	s->status = COMPSPILL_LOADING;
	s->maincxt = maincxt;
	s->tupdesc = tupdesc;
	s->form = CompSpillTupleFormCreate(tupdesc);
	s->natts = tupdesc->natts;
	s->settings = *set;
	s->settings.mem_limit = Max((int64) work_mem_kb, 64) * (int64) 1024;
	s->est_rows = spec->est_rows;
	s->est_width = spec->est_width;
	s->random_access = spec->random_access;
	s->what = spec->what ? spec->what : "sort";

	s->allowed_mem = Max((int64) work_mem_kb, 64) * (int64) 1024;
	s->tuple_block = (int64)
		pg_prevpower2_64((uint64) sqrt(COMPSPILL_TUPLE_BLOCK_FACTOR *
									   (double) s->allowed_mem));
	s->tuple_block = Min(Max(s->tuple_block, 4096),
						 (int64) ALLOCSET_DEFAULT_MAXSIZE);
	compspill_make_tuple_context(s, 0);

	/*
	 * A single by-value column sorted on itself takes the datum path, as
	 * native sort's datum sort does: its value is the whole row.
	 */
	s->datum_mode = tupdesc->natts == 1 && spec->nkeys == 1 &&
		spec->attnums[0] == 1 && TupleDescAttr(tupdesc, 0)->attbyval;

	s->nkeys = spec->nkeys;
	s->ssup = palloc0(sizeof(SortSupportData) * spec->nkeys);
	for (k = 0; k < spec->nkeys; k++)
	{
		SortSupport ssup = &s->ssup[k];

		ssup->ssup_cxt = maincxt;
		ssup->ssup_collation = spec->collations[k];
		ssup->ssup_nulls_first = spec->nulls_first[k];
		ssup->ssup_attno = spec->attnums[k];
		ssup->abbreviate = (k == 0 && !s->datum_mode);
		PrepareSortSupportFromOrderingOp(spec->sortops[k], ssup);
	}
	s->attno1 = spec->nkeys > 0 ? spec->attnums[0] : 1;
	s->abbrev_next = 10;

	/* the initial array takes at most an eighth of work_mem */
	s->growmemtuples = true;
	if (s->datum_mode)
	{
		s->memtupsize = Min(COMPSPILL_INITIAL_DATUMS,
							s->allowed_mem / 8 / (int64) sizeof(Datum));
		s->datums = palloc(sizeof(Datum) * s->memtupsize);
		s->datum_row_len = COMPSPILL_DATUM_ROW_LEN(TupleDescAttr(tupdesc, 0)->attlen);
	}
	else
	{
		s->memtupsize = Min(COMPSPILL_INITIAL_MEMTUPSIZE,
							s->allowed_mem / 8 / (int64) sizeof(CompSpillSortTuple));
		s->memtuples = palloc(sizeof(CompSpillSortTuple) * s->memtupsize);
	}

	/*
	 * Reserve the writer of the first run.  A sort of tuples writes its
	 * first run with a small writer, and the codec's and cipher's
	 * contexts, in memory its SortTuple array gives back: once sorted, the
	 * run needs only its tuples' pointers, so the array is compacted to
	 * them when the sort first spills (compspill_compact_memtuples), as
	 * native sort takes its tape buffers only then.  The reservation is
	 * thus counted only as far as the rows loaded so far would not free it
	 * (compspill_reserve_due): a sort native keeps in memory stays in
	 * memory, within what native holds.  The datum path's array holds
	 * values, not pointers: it reserves its writer from the start, full
	 * size when the plan expects the rows not to fit (a row in memory
	 * costs its width and about 64 bytes of headers and SortTuple).
	 */
	expected = (int64) (s->est_rows * (s->est_width + 64.0));
	if (s->datum_mode && expected > s->allowed_mem)
		CompSpillChooseSizes(set, s->allowed_mem, &s->block_size,
							 &s->write_size, NULL);
	else
	{
		s->block_size = COMPSPILL_MIN_BLOCK_SIZE;
		s->write_size = COMPSPILL_MIN_WRITE_SIZE;
		s->small_writer = true;
	}
	s->writer_reserve = compspill_writer_memory(s, s->block_size);
	if (!s->small_writer)
		s->writer_reserve += CompSpillMallocEstimate(&s->settings, 0);
	else if (!s->datum_mode)
	{
		/*
		 * The first run may be written with lz4 where zstd's state would
		 * not fit in what compacting the array frees (see
		 * compspill_start_spill), so only lz4's is counted before it.
		 */
		CompSpillSettings light = CompSpillLightSettings(&s->settings);

		s->writer_reserve += CompSpillMallocEstimate(&light, s->block_size);
	}

	s->stats.codec = set->codec;
	s->stats.dio_requested = set->dio;

	s->minslot = MakeSingleTupleTableSlot(tupdesc, &TTSOpsMinimalTuple);
	s->virtslot = MakeSingleTupleTableSlot(tupdesc, &TTSOpsVirtual);

	MemoryContextSwitchTo(oldcxt);

	/*
	 * The empty sort's own state is not counted against work_mem, as
	 * native sort counts only its array and tuples; its array is.
	 */
	s->base_mem = compspill_measure(s) -
		(int64) s->tuplecxt->mem_allocated -
		(int64) GetMemoryChunkSpace(s->datum_mode ? (void *) s->datums :
									(void *) s->memtuples);
	compspill_remeasure(s);
	return s;
}

/*
 * Grow the full SortTuple array, after its last growth, by as many rows as
 * the memory left holds at the tuples' average size now; return whether it
 * grew.  The last growth counted rows at the average of those loaded then,
 * which may differ from the average of all: without this, a sort native
 * keeps in memory could spill when its array filled before work_mem did.
 * Once, in the first run: the tuples' keeper block of the later runs is
 * sized to the array they keep.
 */
static bool
compspill_top_up_memtuples(CompSpillSorter *s)
{
	int64		tuples = compspill_tuple_mem(s);
	int64		per_row;
	int64		room;
	int64		extra;

	if (s->topped_up || s->spill != NULL || s->memtupcount == 0)
		return false;
	s->topped_up = true;

	per_row = tuples / s->memtupcount + (int64) sizeof(CompSpillSortTuple);
	room = s->allowed_mem - tuples - compspill_other_due(s, s->memtupcount);
	extra = Min(room / per_row, (int64) (INT_MAX - s->memtupsize));
	if (extra < s->memtupsize / 64 || extra <= 0 ||
		(Size) (s->memtupsize + extra) >=
		MaxAllocHugeSize / sizeof(CompSpillSortTuple))
		return false;

	s->memtuples = repalloc_huge(s->memtuples,
								 (Size) (s->memtupsize + extra) *
								 sizeof(CompSpillSortTuple));
	s->memtupsize += (int) extra;
	compspill_remeasure(s);
	return true;
}

/*
 * work_mem is full while the SortTuple array's end is empty: its last
 * growth counted on rows smaller than those that came.  Give that end back
 * but for the entries of as many rows as its memory holds; return whether
 * the rows loaded fit again.  Once, in the first run, as the top-up: a sort
 * native keeps in memory would otherwise spill for the array's empty end.
 */
static bool
compspill_trim_memtuples(CompSpillSorter *s)
{
	int64		empty = s->memtupsize - s->memtupcount;
	int64		per_row;
	int64		keep;

	if (s->trimmed || s->spill != NULL || s->datum_mode ||
		s->memtupcount == 0)
		return false;
	s->trimmed = true;

	per_row = compspill_tuple_mem(s) / s->memtupcount +
		(int64) sizeof(CompSpillSortTuple);
	keep = empty * (int64) sizeof(CompSpillSortTuple) / per_row;
	if (empty - keep < 16)
		return false;

	s->growmemtuples = false;
	s->memtupsize = s->memtupcount + (int) keep;
	s->memtuples = repalloc_huge(s->memtuples,
								 (Size) s->memtupsize *
								 sizeof(CompSpillSortTuple));
	compspill_remeasure(s);
	return !compspill_memory_full(s);
}

/*
 * Double the SortTuple array if memory allows; return whether it grew.
 *
 * The array is indexed by an int and allocated in one huge chunk, so it
 * never holds more than INT_MAX entries nor takes MaxAllocHugeSize bytes:
 * the last growth goes only up to that limit, and then growing stops.
 * Reaching INT_MAX entries takes about 2^31 rows held at once (48GB of
 * SortTuples, far more with the tuples), which no test machine has, so the
 * limit is CompSpillGrowArraySize's, which test/unit checks.
 */
static bool
compspill_grow_memtuples(CompSpillSorter *s)
{
	int64		oldspace;
	int64		newsize;

	if (!s->growmemtuples)
		return compspill_top_up_memtuples(s);

	newsize = CompSpillGrowArraySize(s->memtupsize,
									 sizeof(CompSpillSortTuple));
	if (newsize <= s->memtupsize)
	{
		s->growmemtuples = false;
		return false;
	}
	oldspace = GetMemoryChunkSpace(s->memtuples);

	/*
	 * Double the array while what is left of work_mem holds that many rows
	 * at the tuples' average size so far, entries included; then grow it
	 * once more, for the last time, to as many rows as it holds, as
	 * tuplesort does.  Without the last growth a run would stop at the
	 * array's size with much of work_mem unused; with a doubling too many
	 * the array's empty end would take the room of rows.
	 */
	if (s->memtupcount > 0)
	{
		int64		per_row;
		int64		room;
		int64		fit;

		per_row = compspill_tuple_mem(s) / s->memtupcount +
			(int64) sizeof(CompSpillSortTuple);
		room = s->allowed_mem - (s->other_mem - s->writer_reserve -
								 COMPSPILL_RUN_GROWTH - oldspace);
		fit = room / Max(per_row, 1);
		if (compspill_reserve_due(s, fit) > 0)
		{
			/* the rows do not free the whole reservation */
			room -= s->writer_reserve + COMPSPILL_RUN_GROWTH;
			if (s->spill == NULL && !s->datum_mode)
				fit = room / Max(per_row - COMPSPILL_COMPACT_GAIN, 1);
			else
				fit = room / Max(per_row, 1);
		}
		if (newsize >= fit)
		{
			s->growmemtuples = false;
			newsize = fit;
			if (newsize < s->memtupsize + s->memtupsize / 8)
				return false;
		}
	}

	/* the array's growth must fit (a large chunk is realloc'd) */
	if (compspill_tuple_mem(s) + compspill_other_due(s, s->memtupcount) +
		(newsize - s->memtupsize) * (int64) sizeof(CompSpillSortTuple) >
		s->allowed_mem)
	{
		s->growmemtuples = false;
		return false;
	}

	s->memtuples = repalloc_huge(s->memtuples,
								 (Size) newsize * sizeof(CompSpillSortTuple));
	s->memtupsize = (int) newsize;
	compspill_remeasure(s);
	return true;
}

/*
 * Grow the datum path's array if memory allows; return whether it grew.
 * It may take all that work_mem leaves, and at least a
 * COMPSPILL_DATUM_MIN_SHARE-th of work_mem; the last growth takes what is
 * left, as tuplesort's does, since the values are all the array holds.
 */
static bool
compspill_grow_datums(CompSpillSorter *s)
{
	int64		oldspace;
	int64		newsize;
	int64		room;

	if (!s->growmemtuples)
		return false;

	newsize = CompSpillGrowArraySize(s->memtupsize, sizeof(Datum));
	if (newsize <= s->memtupsize)
	{
		s->growmemtuples = false;
		return false;
	}
	oldspace = GetMemoryChunkSpace(s->datums);

	/* what the array may take: all but what the rest of the sort holds */
	room = Max(s->allowed_mem - (s->other_mem - oldspace),
			   s->allowed_mem / COMPSPILL_DATUM_MIN_SHARE);
	if (newsize * (int64) sizeof(Datum) + 64 > room)
	{
		/* the last growth: as far as it fits, if that is worth it */
		s->growmemtuples = false;
		newsize = (room - 64) / (int64) sizeof(Datum);
		if (newsize < s->memtupsize + s->memtupsize / 8)
			return false;
	}

	s->datums = repalloc_huge(s->datums, (Size) newsize * sizeof(Datum));
	s->memtupsize = (int) newsize;
	compspill_remeasure(s);
	return true;
}

/*
 * Choose the block size from the number of runs the sort is expected to
 * make, now that the first run's row count is known, and create the spill
 * object in the memory reserved for it.
 */
static void
compspill_start_spill(CompSpillSorter *s)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(s->maincxt);
	double		expected_runs = 0;
	Size		target;
	Size		extent_size;

	/* the largest block, and the extents: the spill sizing policy's */
	CompSpillChooseSizes(&s->settings, s->allowed_mem, &target, NULL,
						 &extent_size);

	if (s->est_rows > 0 && s->memtupcount > 0)
		expected_runs = ceil(s->est_rows / s->memtupcount);
	if (expected_runs > 1)
	{
		/*
		 * A merge input takes up to about five blocks: a read buffer and a
		 * decompression buffer of up to twice the average frame each, and
		 * the decoded block's state; and a few pages of slack.
		 */
		double		per_input = (double) s->allowed_mem / expected_runs;
		double		block = (per_input - 4 * COMPSPILL_ALIGN) / 5;
		Size		b;

		b = (Size) Max(block, (double) COMPSPILL_MIN_BLOCK_SIZE);
		target = TYPEALIGN(1024, Min(b, target));
	}

	/*
	 * With the writer reserved in full, the first run uses the chosen size
	 * already.  With a small writer reserved, the first run is written
	 * with blocks as large as the memory compacting the array freed holds
	 * the writer of (see compspill_compact_memtuples), on the datum path
	 * with small blocks, and the rest with the chosen size, reserved once
	 * the first run's tuples are gone.
	 */
	if (!s->small_writer)
		s->block_size = target;
	else
	{
		Size		first = s->block_size;

		if (!s->datum_mode)
		{
			int64		freed = COMPSPILL_COMPACT_GAIN * s->memtupcount;
			CompSpillSettings light = CompSpillLightSettings(&s->settings);
			const CompSpillSettings *first_set = &s->settings;

			/*
			 * zstd's state (codec = zstd, or auto's choice), with its
			 * dictionary, is several times lz4's: where it does not fit
			 * beside the first run's rows, that run is written with lz4,
			 * as a store writes the rows it held, and zstd's state is
			 * made once the rows are freed (compspill_dump_run).
			 */
			if ((int64) compspill_writer_memory(s, first) +
				CompSpillMallocEstimate(&s->settings, first) > freed)
			{
				s->first_light = true;
				first_set = &light;
			}
			first = target;
			while (first > s->block_size &&
				   (int64) compspill_writer_memory(s, first) +
				   CompSpillMallocEstimate(first_set, first) > freed)
				first = TYPEALIGN(1024, first / 2);
		}
		if (first >= target)
			s->block_size = target;
		else
		{
			s->block_size = Max(first, s->block_size);
			s->later_block_size = target;
		}
	}

	s->spill = CompSpillSpillerCreate(s->tupdesc, s->what, &s->settings, &s->stats,
							   s->block_size, s->write_size, extent_size);
	CompSpillSpillerSetExpectedRows(s->spill, s->est_rows, s->est_width);
	if (s->first_light)
		CompSpillSpillerSetLightCodec(s->spill, true);
	s->runs_cap = 16;
	s->runs = palloc(sizeof(CompSpillRun) * s->runs_cap);
	s->max_runs = (int) Max(s->allowed_mem / 8 / COMPSPILL_RUN_ENTRY_MEM,
							COMPSPILL_MIN_MAX_RUNS);

	MemoryContextSwitchTo(oldcxt);
}

/*
 * After the first run, choose the block size of the later ones from what
 * its frames measure: the largest that lets a merge of every run the sort
 * is expected to make read them all at once within work_mem, with the
 * merge's eighth of margin, up to the spill sizing policy's largest and
 * to a writer of an eighth of work_mem.  The later runs hold fewer rows
 * than the first (per_row bytes each), the fewer the larger their
 * writer's blocks: the first run's writer took only what compacting its
 * rows freed.  A merge input's memory grows with its frames: a first run
 * of column frames is read as a merge input would read it, through its
 * first frames (CompSpillMergeProbeRun), and the part of what the reader
 * held that grows with the frames is scaled to the block size, with the
 * run's buffers (their headers and margins too, a little room that a
 * sort at the edge of one pass needs); a first run of row frames, whose
 * later runs may be of column frames, is estimated as column frames
 * (CompSpillReaderEstimateAt).  Larger blocks encode and compress better
 * and cost less a row; the first run's size, chosen before any frame
 * existed, assumed frames that do not shrink.
 *
 * Called again once the first of the later runs is written (nruns = 2,
 * measured its rows): the later runs' length is then measured, not
 * reckoned from the first run's rows, and only the estimate of the input's
 * rows is left to hedge, so the room kept for runs beyond those reckoned
 * is a 32nd and one, not a 16th and two; the blocks of the runs after it
 * grow if that allows.  rows and nruns are what the runs so far hold,
 * run_len one run's bytes.  Return the size, or 0 to keep the present one.
 */
static Size
compspill_later_block_size(CompSpillSorter *s, int64 rows, int nruns,
						   int64 run_len, int64 measured)
{
	int64		per_row = s->later_per_row;
	double		fit = 1.0;
	int64		fixed;
	int64		held;
	int64		grows;
	int64		bufs;
	Size		largest;
	Size		b;

	if (s->datum_mode || s->est_rows <= 0 || rows <= 0)
		return 0;
	if (s->est_rows <= rows)
		return 0;				/* the estimate was low: no telling */

	/*
	 * What the later runs hold besides their rows: the sort's own state, the
	 * codec's, and the writer, whose blocks' size is being chosen (the first
	 * run's writer took what compacting its rows freed: the later runs hold
	 * fewer rows than it did, the fewer the larger their blocks).
	 */
	fixed = s->base_mem + CompSpillMallocHeld(s->spill) +
		CompSpillMallocGrowth(s->spill, true) + COMPSPILL_RUN_GROWTH;

	/*
	 * A reader of the first run: what it held, and the part of it that grows
	 * with the frames (the arrays it decodes); what one row and the columns'
	 * cursors take does not.  Its buffers apart (the window and the
	 * decompression buffer, or the one buffer of a run decompressed in
	 * place), which grow with the frames too: the merge counts them per run,
	 * without a margin.  Read once, after the first run.
	 */
	if (measured == 0 && !s->runs[0].rows)
	{
		s->probe_held = CompSpillMergeProbeRun(s->spill, &s->runs[0],
											   &s->probe_grows);
		/*
		 * A first run held to light codecs says nothing of how the later
		 * runs' frames are stored: count a decompression buffer for its
		 * largest block, not read in place.
		 */
		s->probe_bufs = CompSpillRunBufferMemory(s->spill, &s->runs[0],
												 !s->first_light);
	}
	held = s->probe_held;
	grows = s->probe_grows;
	bufs = s->probe_bufs;

	/* the later run written, against the rows reckoned for its blocks */
	if (measured > 0)
	{
		int64		reckoned = (s->allowed_mem - fixed -
								compspill_writer_memory(s, s->block_size)) /
			Max(per_row, 1);

		if (reckoned <= 0)
			return 0;
		fit = (double) measured / reckoned;
	}

	/*
	 * From the largest down, by a quarter of a kB: at the 10-30kB blocks of
	 * a sort of a few hundred runs a whole kB is a tenth to a thirtieth of
	 * what an input holds.
	 */
	CompSpillChooseSizes(&s->settings, s->allowed_mem, &largest, NULL, NULL);
	for (b = largest; b > s->block_size; b -= 256)
	{
		double		scale = (double) b / s->first_block_size;
		int64		later_rows;
		double		expected_runs;
		int64		other;
		int64		need;

		/* a writer of more than an eighth of work_mem shortens runs */
		if ((int64) compspill_writer_memory(s, b) > s->allowed_mem / 8)
			continue;
		later_rows = (int64) (fit * (double) ((s->allowed_mem - fixed -
											   compspill_writer_memory(s, b)) /
											  Max(per_row, 1)));
		if (later_rows <= 0)
			continue;
		expected_runs = nruns + ceil((double) (s->est_rows - rows) / later_rows);

		/*
		 * The later runs come out a little shorter than the first run's rows
		 * reckon at times (77 where it said 75, on 600,000 rows at 1MB):
		 * room for a sixteenth more and two, so that a size chosen at the
		 * edge still merges in one pass.  Measured, they leave the plan's
		 * estimate of the rows to hedge.
		 */
		if (measured > 0)
			expected_runs += ceil(expected_runs / 32) + 1;
		else
			expected_runs += ceil(expected_runs / 16) + 2;

		/*
		 * What the final merge holds besides its inputs, as
		 * compspill_merge_create counts it for a merge that writes nothing:
		 * the writer and the compression state are gone.
		 */
		other = s->base_mem + CompSpillMallocReadHeld(s->spill) +
			CompSpillReadGrowth(s->spill) +
			CompSpillRunMapReserve(s->spill,
								   (int64) (run_len * expected_runs)) +
			(int64) expected_runs * (int64) sizeof(CompSpillRun);

		if (held > 0)
		{
			need = held + (int64) ((double) grows * (scale - 1.0));
			need += need / 8 + (int64) ((double) bufs * scale);
		}
		else
		{
			need = CompSpillReaderEstimateAt(s->spill, false, b);
			need += need / 8;
		}
		if (need * expected_runs <= s->allowed_mem - other)
			return b;
	}
	return 0;
}

/*
 * Make sure the list of runs has room for the next run.  Called between
 * runs, so that the list grows before the next run's tuples are loaded and
 * its growth is measured with what the sort holds besides them: growing it
 * once the tuples fill work_mem would take the sort past it.
 */
static void
compspill_reserve_run(CompSpillSorter *s)
{
	if (s->nruns < s->runs_cap)
		return;
	s->runs_cap *= 2;
	s->runs = repalloc(s->runs, sizeof(CompSpillRun) * s->runs_cap);
}

/*
 * Take the entry of the next run in the list of runs, reserved already.
 */
static CompSpillRun *
compspill_new_run(CompSpillSorter *s)
{
	Assert(s->nruns < s->runs_cap);
	return &s->runs[s->nruns++];
}

/*
 * Move the runs of the given level to the front of the list, keeping their
 * order; return how many there are.
 */
static int
compspill_runs_to_front(CompSpillSorter *s, int level)
{
	int			n = 0;

	for (int i = 0; i < s->nruns; i++)
	{
		if (s->runs[i].level == level)
		{
			CompSpillRun run = s->runs[i];

			memmove(&s->runs[n + 1], &s->runs[n],
					sizeof(CompSpillRun) * (i - n));
			s->runs[n++] = run;
		}
	}
	return n;
}

/*
 * Keep the list of runs within an eighth of work_mem.  At the smallest
 * work_mem a large sort makes tens of thousands of runs, whose descriptors
 * would otherwise grow without bound.  Once the list holds max_runs runs,
 * the runs of the lowest level that has several are merged, as many at a
 * time as one merge can read, into runs of the next level, while the input
 * is still being read: as a balanced merge's passes would merge them at
 * the end, so that each row is written again about as often.  Called
 * between runs, when no tuple is held.
 */
static void
compspill_bound_runs(CompSpillSorter *s)
{
	int			level;
	int			maxlevel;
	int			n;
	int			merged;

	if (s->nruns < s->max_runs)
		return;

	if (s->merge_ssup == NULL)
	{
		/* the keys as they are, but comparing whole values */
		s->merge_ssup = MemoryContextAlloc(s->maincxt,
										   sizeof(SortSupportData) * s->nkeys);
		memcpy(s->merge_ssup, s->ssup, sizeof(SortSupportData) * s->nkeys);
		compspill_unabbreviate(s->merge_ssup);
	}

	/*
	 * The lowest level with two runs or more.  There is one in practice:
	 * max_runs distinct levels would take 2^max_runs runs.  The search
	 * stops at the highest level present all the same; with no level to
	 * merge, the list is left to grow (it costs memory, not rows).  Not
	 * tested for that reason: no sort reaches it.
	 */
	maxlevel = 0;
	for (int i = 0; i < s->nruns; i++)
		maxlevel = Max(maxlevel, s->runs[i].level);
	for (level = 0, n = 0; level <= maxlevel; level++)
	{
		CHECK_FOR_INTERRUPTS();
		n = compspill_runs_to_front(s, level);
		if (n >= 2)
			break;
	}
	if (n < 2)
		return;

	/*
	 * Merge them in groups; each output goes after what is left to merge.
	 * Fewer runs than a whole group are left to the next time, when more
	 * runs of their level will have come, unless they are all there is to
	 * merge: a merge of two runs would write their rows once more for
	 * little gain.
	 */
	merged = 0;
	while (n >= 2 && n >= merged)
	{
		CompSpillRun out;

		CHECK_FOR_INTERRUPTS();
		merged = CompSpillMergeRuns(s->spill, &s->stats, s->tupdesc,
									s->merge_ssup, s->nkeys, s->runs, n,
									s->allowed_mem, compspill_measure_cb, s,
									&out);
		memmove(&s->runs[0], &s->runs[merged],
				sizeof(CompSpillRun) * (s->nruns - merged));
		s->nruns -= merged;
		n -= merged;
		s->runs[s->nruns++] = out;
	}
	CompSpillSpillerSetPhase(s->spill, COMPSPILL_PHASE_READING_INPUT, 0, 0);
}

/*
 * Write the datum path's values to the run being written, with its NULLs
 * first or last as the key says, and forget them.
 */
static void
compspill_write_datums(CompSpillSorter *s)
{
	Datum		none = (Datum) 0;
	bool		null = true;
	bool		notnull = false;
	bool		nulls_first = s->ssup->ssup_nulls_first;
	int			i;

	for (i = 0; nulls_first && i < s->nnulls; i++)
		CompSpillRunPutValues(s->spill, &none, &null);
	for (i = 0; i < s->ndatums; i++)
	{
		if ((i & 0x3FF) == 0)
			CHECK_FOR_INTERRUPTS();
		CompSpillRunPutValues(s->spill, &s->datums[i], &notnull);
	}
	for (i = 0; !nulls_first && i < s->nnulls; i++)
		CompSpillRunPutValues(s->spill, &none, &null);

	s->stats.bytes_in += (int64) s->ndatums * s->datum_row_len +
		(int64) s->nnulls * COMPSPILL_DATUM_ROW_LEN(0);
	s->stats.rows_spilled += s->memtupcount;
	s->ndatums = 0;
	s->nnulls = 0;
}

/*
 * Compact the sorted SortTuple array of the first run to its tuples'
 * pointers, in place (entry i moves down to a slot of its own below entry
 * i), and give the rest of the array back: the first run's writer is made
 * in that memory.  The first keys are not needed any more: a run is
 * written in the array's order.
 */
static MinimalTuple *
compspill_compact_memtuples(CompSpillSorter *s)
{
	MinimalTuple *tuples = (MinimalTuple *) s->memtuples;

	for (int i = 0; i < s->memtupcount; i++)
		tuples[i] = s->memtuples[i].tuple;
	tuples = repalloc_huge(tuples,
						   sizeof(MinimalTuple) * Max(s->memtupcount, 1));
	s->memtuples = NULL;
	return tuples;
}

/*
 * Give the sort its SortTuple array back once the first run is written and
 * its tuples freed, sized for the rows the runs to come can hold now that
 * the writer takes its share: as many as the first run's tuples took at
 * most, at their average size (first_tuples for first_rows rows, as the
 * later runs count them), or more where the later runs count less a row
 * than the first (before 17, see compspill_copy_tuple).
 */
static void
compspill_restore_memtuples(CompSpillSorter *s, MinimalTuple *compacted,
							int64 first_tuples, int first_rows, bool may_grow)
{
	int64		per_row = first_tuples / Max(first_rows, 1) +
		(int64) sizeof(CompSpillSortTuple);
	int64		other;
	int64		fit;

	other = compspill_measure(s) - GetMemoryChunkSpace(compacted) -
		s->base_mem + s->writer_reserve + COMPSPILL_RUN_GROWTH;
	fit = (s->allowed_mem - other) / Max(per_row, 1);
	fit = Max(fit, (int64) Min(s->memtupsize, 1024));
	if (!may_grow)
		fit = Min(fit, (int64) s->memtupsize);
	fit = Min(fit, (int64) (MaxAllocHugeSize / sizeof(CompSpillSortTuple)));
	fit = Min(fit, (int64) INT_MAX - 1);
	s->memtupsize = (int) fit;
	s->memtuples = repalloc_huge(compacted,
								 sizeof(CompSpillSortTuple) * s->memtupsize);
}

/*
 * How many rows ahead a run's writing asks for the row it will read, and
 * the cache lines of it asked for: a row's header and its first 192 bytes.
 */
#define COMPSPILL_PREFETCH_ROWS		8

static inline void
compspill_prefetch_row(const void *tup)
{
	CompSpillPrefetch(tup);
	CompSpillPrefetch((const char *) tup + 64);
	CompSpillPrefetch((const char *) tup + 128);
}

/*
 * Sort the rows in memory and write them out as one run.
 */
static void
compspill_dump_run(CompSpillSorter *s)
{
	int			i;
	MinimalTuple *compacted = NULL;
	int64		first_tuples = 0;
	int64		first_counted = 0;
	int			first_rows = 0;
	Size		later;
	int64		run_rows = s->memtupcount;

	compspill_sort_memtuples(s);

	if (s->spill == NULL)
	{
		/* the first run: its writer takes what compacting the array frees */
		if (!s->datum_mode)
		{
			/* what they would count in a later run, and count now */
			first_tuples = s->tuple_later;
			first_counted = compspill_tuple_mem(s);
			first_rows = s->memtupcount;
			compacted = compspill_compact_memtuples(s);
		}
		compspill_start_spill(s);
	}

	s->stats.nruns++;
	CompSpillSpillerSetPhase(s->spill, COMPSPILL_PHASE_WRITING_RUN, 0, 0);
	if (s->datum_mode)
	{
		/* a datum sort: its values, for the block encoder */
		CompSpillRunBegin(s->spill, compspill_new_run(s));
		compspill_write_datums(s);
	}
	else
	{
		/*
		 * Row frames take the tuples as they are; column frames take each
		 * row deformed once, into the block encoder.  Sorted, the rows are
		 * read in an order unrelated to where they lie in memory: each is
		 * asked for COMPSPILL_PREFETCH_ROWS rows ahead, so that it is in
		 * the cache when its turn comes rather than waited for.
		 */
		if (CompSpillWantRowFrames(s->spill))
			CompSpillRunBeginRows(s->spill, compspill_new_run(s));
		else
			CompSpillRunBegin(s->spill, compspill_new_run(s));
		for (i = 0; i < s->memtupcount; i++)
		{
			MinimalTuple tup = compacted ? compacted[i] : s->memtuples[i].tuple;
			int			ahead = i + COMPSPILL_PREFETCH_ROWS;

			if (ahead < s->memtupcount)
				compspill_prefetch_row(compacted ? compacted[ahead] :
									   s->memtuples[ahead].tuple);
			CHECK_FOR_INTERRUPTS();
			CompSpillRunPutMinimal(s->spill, tup);
			s->stats.bytes_in += tup->t_len;
		}
	}
	if (!s->datum_mode)
		s->stats.rows_spilled += s->memtupcount;
	CompSpillRunEnd(s->spill);
	CompSpillSpillerSetPhase(s->spill, COMPSPILL_PHASE_READING_INPUT, 0, 0);

	/* the writer is at its largest with the tuples still in memory */
	s->memtupcount = 0;
	compspill_measure(s);
	s->writer_reserve = CompSpillMallocGrowth(s->spill, true);
	if (s->nruns == 1)
	{
		s->first_block_size = s->block_size;
		s->later_per_row = first_tuples / Max(first_rows, 1) +
			(int64) sizeof(CompSpillSortTuple);
		later = compspill_later_block_size(s, run_rows, 1, s->runs[0].len, 0);
		s->later_block_size = Max(s->later_block_size, later);
	}
	else if (s->nruns == 2)
	{
		/* the first later run: its rows measured (see the function) */
		s->later_block_size =
			compspill_later_block_size(s, s->stats.rows_spilled, 2,
									   s->runs[1].len, run_rows);
	}
	if (s->later_block_size > 0)
	{
		/* see compspill_start_spill: larger blocks from now on */
		s->block_size = s->later_block_size;
		s->later_block_size = 0;
		CompSpillSpillerSetBlockSize(s->spill, s->block_size);
		s->stats.block_size = s->block_size;
		s->writer_reserve += compspill_writer_memory(s, s->block_size);
	}
	MemoryContextReset(s->tuplecxt);
	compspill_tuples_freed(s);
	if (s->first_light)
	{
		/* zstd's state has room now; its growth is in writer_reserve */
		CompSpillSpillerSetLightCodec(s->spill, false);
		s->first_light = false;
	}
	if (compacted != NULL)
		compspill_restore_memtuples(s, compacted, first_tuples, first_rows,
									first_tuples < first_counted);
	compspill_bound_runs(s);
	compspill_reserve_run(s);
	compspill_remeasure(s);
	if (!s->datum_mode)
		compspill_keep_tuple_memory(s);
}

/*
 * Add one row to the sort on the datum path: its value, or one more NULL.
 */
static void
compspill_put_datum(CompSpillSorter *s, TupleTableSlot *slot)
{
	/* a run holds fewer than INT_MAX rows, NULLs included */
	if (unlikely(s->memtupcount >= INT_MAX - 1))
		compspill_dump_run(s);

	slot_getsomeattrs(slot, 1);
	if (slot->tts_isnull[0])
		s->nnulls++;
	else
	{
		if (s->ndatums >= s->memtupsize && !compspill_grow_datums(s))
			compspill_dump_run(s);
		s->datums[s->ndatums++] = slot->tts_values[0];
	}
	s->memtupcount++;
}

/*
 * Add one row to the sort.
 */
void
CompSpillSorterPut(CompSpillSorter *s, TupleTableSlot *slot)
{
	CompSpillSortTuple *stup;

	Assert(s->status == COMPSPILL_LOADING);

	if (s->datum_mode)
	{
		compspill_put_datum(s, slot);
		return;
	}

	if (s->memtupcount >= s->memtupsize && !compspill_grow_memtuples(s))
		compspill_dump_run(s);

	stup = &s->memtuples[s->memtupcount];
	stup->tuple = compspill_copy_tuple(s, slot);
	compspill_set_datum1(s, stup);
	s->memtupcount++;

	compspill_consider_abort(s);

	if (compspill_memory_full(s) && !compspill_trim_memtuples(s))
		compspill_dump_run(s);
}

/*
 * Write the final merge into a store on the sort's spill, for random
 * access: its runs are consumed as it goes, so the file still holds one
 * copy of the rows.
 */
static void
compspill_merge_to_store(CompSpillSorter *s)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(s->maincxt);
	TupleTableSlot *slot;
	int64		n = 0;
	bool		rows;

	/*
	 * The merged rows are read back as minimal tuples, often more than once
	 * (a scroll cursor's backward fetches, a merge join's restored marks):
	 * in row frames, as a store's rows are (CompSpillWantStoreRowFrames),
	 * the merge copies the rows of row frames into them and forms those of
	 * column frames once, and every read hands them on as they are; column
	 * frames would form every row of a frame each time it is loaded.  A
	 * scroll cursor over lineitem at 4MB on 18 (bench.py's cur) took 1.27x
	 * native's time with its merged rows in column frames, 0.83x in row
	 * frames.
	 */
	rows = CompSpillWantStoreRowFrames(s->spill);
	s->store = CompSpillStoreBeginOnSpill(s->spill, s->tupdesc, &s->stats, 2,
										  rows);
	s->merged_frames = rows ? COMPSPILL_MERGED_ROW_FRAMES :
		COMPSPILL_MERGED_COLUMN_FRAMES;
	MemoryContextSwitchTo(oldcxt);

	while ((slot = CompSpillMergeNext(s->merge, s->virtslot,
									  s->minslot)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		CompSpillStorePutSlot(s->store, slot);
		if ((++n & 0xFFFF) == 0)
			(void) compspill_measure(s);
	}
	ExecClearTuple(s->virtslot);
	ExecClearTuple(s->minslot);
	(void) compspill_measure(s);
	CompSpillMergeEnd(s->merge);
	s->merge = NULL;
	CompSpillStoreEndWrites(s->store);
	CompSpillSpillerSetPhase(s->spill, COMPSPILL_PHASE_RETURNING, 0, 0);
	compspill_measure(s);
	s->status = COMPSPILL_SORTED_IN_STORE;
}

/*
 * All rows are in: sort them in memory, or write the last run and merge.
 */
void
CompSpillSorterFinish(CompSpillSorter *s)
{
	MemoryContext oldcxt;

	Assert(s->status == COMPSPILL_LOADING);

	/* no run written (since the last reset): all rows are in memory */
	if (s->nruns == 0)
	{
		compspill_sort_memtuples(s);
		s->pos.current = 0;
		s->pos.eof_reached = false;
		s->status = COMPSPILL_SORTED_IN_MEMORY;
		compspill_measure(s);
		return;
	}

	if (s->memtupcount > 0)
		compspill_dump_run(s);
	s->stats.bytes_written_runs = s->stats.bytes_written -
		s->stats.bytes_written_early;

	/* the array is not needed any more; its memory goes to the readers */
	if (s->memtuples)
		pfree(s->memtuples);
	if (s->datums)
		pfree(s->datums);
	s->memtuples = NULL;
	s->datums = NULL;
	s->memtupsize = 0;
	if (s->tuple_keep > 0)
		compspill_make_tuple_context(s, 0);
	else
	{
		MemoryContextReset(s->tuplecxt);
		compspill_tuples_freed(s);
	}

	compspill_unabbreviate(s->ssup);

	oldcxt = MemoryContextSwitchTo(s->maincxt);
	s->merge = CompSpillMergeBegin(s->spill, &s->stats, s->tupdesc, s->ssup,
								   s->nkeys, s->runs, s->nruns,
								   s->allowed_mem, s->random_access,
								   compspill_measure_cb, s);
	s->runs = NULL;
	MemoryContextSwitchTo(oldcxt);
	compspill_measure(s);
	s->status = COMPSPILL_FINAL_MERGE;

	if (s->random_access)
		compspill_merge_to_store(s);
}

/*
 * Return row number row of the datum path's sorted rows in the virtual
 * slot: the NULLs come before or after the values, as the key says.
 */
static TupleTableSlot *
compspill_datum_row(CompSpillSorter *s, int64 row)
{
	TupleTableSlot *slot = s->virtslot;
	int64		value = s->ssup->ssup_nulls_first ? row - s->nnulls : row;

	ExecClearTuple(slot);
	if (value < 0 || value >= s->ndatums)
	{
		slot->tts_values[0] = (Datum) 0;
		slot->tts_isnull[0] = true;
	}
	else
	{
		slot->tts_values[0] = s->datums[value];
		slot->tts_isnull[0] = false;
	}
	return ExecStoreVirtualTuple(slot);
}

/*
 * Return the next row in sort order, or going backward (only with random
 * access) the one before the row returned last, as tuplesort does; NULL
 * when there is none.  The slot's contents stay valid until the next call.
 */
TupleTableSlot *
CompSpillSorterGet(CompSpillSorter *s, bool forward)
{
	int64		row;
	int64		ahead;

	switch (s->status)
	{
		case COMPSPILL_SORTED_IN_MEMORY:
			row = CompSpillPosStep(&s->pos, s->memtupcount, forward);
			if (row < 0)
				return NULL;
			if (s->datum_mode)
				return compspill_datum_row(s, row);
			/* the row the caller will read a few calls from now, forward */
			ahead = row + COMPSPILL_PREFETCH_ROWS;
			if (forward && ahead < s->memtupcount)
				compspill_prefetch_row(s->memtuples[ahead].tuple);
			return ExecStoreMinimalTuple(s->memtuples[row].tuple,
										 s->minslot, false);
		case COMPSPILL_SORTED_IN_STORE:
			if (!CompSpillStoreGet(s->store, 0, forward, s->minslot, false))
				return NULL;
			return s->minslot;
		case COMPSPILL_FINAL_MERGE:
			if (!forward)
				elog(ERROR, "compspill sort was not started for backward scans");
			return CompSpillMergeNext(s->merge, s->virtslot, s->minslot);
		default:
			elog(ERROR, "compspill sort has not finished loading");
	}
	return NULL;				/* keep compiler quiet */
}

/*
 * Start returning the sorted rows from the first one again.
 */
void
CompSpillSorterRewind(CompSpillSorter *s)
{
	if (s->status == COMPSPILL_SORTED_IN_MEMORY)
	{
		s->pos.current = 0;
		s->pos.eof_reached = false;
	}
	else if (s->status == COMPSPILL_SORTED_IN_STORE)
		CompSpillStoreRewind(s->store, 0);
	else if (s->status == COMPSPILL_FINAL_MERGE)
	{
		ExecClearTuple(s->virtslot);
		ExecClearTuple(s->minslot);
		CompSpillMergeRewind(s->merge);
	}
}

/*
 * Remember the read position (random access only).
 */
void
CompSpillSorterMarkPos(CompSpillSorter *s)
{
	if (s->status == COMPSPILL_SORTED_IN_MEMORY)
		s->markpos = s->pos;
	else if (s->status == COMPSPILL_SORTED_IN_STORE)
		CompSpillStoreCopyPos(s->store, 0, 1);
	else
		elog(ERROR, "compspill sort was not started for mark and restore");
}

/*
 * Go back to the position remembered last (random access only).
 */
void
CompSpillSorterRestorePos(CompSpillSorter *s)
{
	if (s->status == COMPSPILL_SORTED_IN_MEMORY)
		s->pos = s->markpos;
	else if (s->status == COMPSPILL_SORTED_IN_STORE)
		CompSpillStoreCopyPos(s->store, 1, 0);
	else
		elog(ERROR, "compspill sort was not started for mark and restore");
}

/*
 * Release everything: the temp file, buffers, codec contexts and memory.
 */
void
CompSpillSorterEnd(CompSpillSorter *s)
{
	ExecDropSingleTupleTableSlot(s->minslot);
	ExecDropSingleTupleTableSlot(s->virtslot);
	if (s->store)
		CompSpillStoreEnd(s->store);
	if (s->spill)
	{
		CompSpillReportSpill(s->what, &s->stats);
		CompSpillSpillerEnd(s->spill);
	}
	MemoryContextDelete(s->maincxt);
}

/*
 * Did the sort go to disk?
 */
bool
CompSpillSorterSpilled(CompSpillSorter *s)
{
	return s->spill != NULL;
}

/*
 * Where a sort with random access kept its merged rows: in a store of row
 * or column frames, or none (in memory, or not merged yet).
 */
CompSpillMergedFrames
CompSpillSorterMergedFrames(CompSpillSorter *s)
{
	return s->merged_frames;
}

/*
 * Peak memory the sort's contexts held, in bytes.
 */
int64
CompSpillSorterSpaceUsed(CompSpillSorter *s)
{
	return s->stats.peak_mem;
}

/*
 * The spill figures of this sort.
 */
CompSpillStats *
CompSpillSorterStats(CompSpillSorter *s)
{
	return &s->stats;
}

/*
 * Empty the sort to take a new batch of rows on the same keys (the next
 * group of an incremental sort), keeping what can be kept: the sort
 * support, the SortTuple array (on the datum path, the array of values,
 * emptied of its values and NULLs) and, once the sort has spilled, its
 * spill object with the temp file, whose runs are given back to it.  The
 * spill figures add up over the batches, so the spill stays one
 * operation; the memory peak starts again with each batch, and the caller
 * keeps the largest.  Not for a sort started with random access.
 */
void
CompSpillSorterReset(CompSpillSorter *s)
{
	if (s->random_access || s->store != NULL)
		elog(ERROR, "compspill sort with random access cannot be reset");

	ExecClearTuple(s->minslot);
	ExecClearTuple(s->virtslot);

	if (s->merge != NULL)
	{
		/* gives back the runs it read */
		CompSpillMergeEnd(s->merge);
		s->merge = NULL;
	}
	else if (s->spill != NULL)
	{
		for (int i = 0; i < s->nruns; i++)
			CompSpillRunRelease(s->spill, &s->runs[i]);
	}
	s->nruns = 0;

	if (s->tuple_keep > 0)
		compspill_make_tuple_context(s, 0);
	else
		MemoryContextReset(s->tuplecxt);
	compspill_tuples_freed(s);
	s->memtupcount = 0;
	s->ndatums = 0;
	s->nnulls = 0;
	s->pos.current = 0;
	s->pos.eof_reached = false;
	s->growmemtuples = true;

	/* the final merge freed the array: make it again, as Begin does */
	if (s->datum_mode && s->datums == NULL)
	{
		s->memtupsize = Min(COMPSPILL_INITIAL_DATUMS,
							s->allowed_mem / 8 / (int64) sizeof(Datum));
		s->datums = MemoryContextAlloc(s->maincxt,
									   sizeof(Datum) * s->memtupsize);
	}
	else if (!s->datum_mode && s->memtuples == NULL)
	{
		s->memtupsize = Min(COMPSPILL_INITIAL_MEMTUPSIZE,
							s->allowed_mem / 8 / (int64) sizeof(CompSpillSortTuple));
		s->memtuples = MemoryContextAlloc(s->maincxt,
										  sizeof(CompSpillSortTuple) * s->memtupsize);
	}

	if (s->spill != NULL)
	{
		if (s->runs == NULL)
		{
			s->runs_cap = 16;
			s->runs = MemoryContextAlloc(s->maincxt,
										 sizeof(CompSpillRun) * s->runs_cap);
		}
		/* the final merge freed the writer and codec state: reserve them */
		s->writer_reserve = CompSpillWriterHeld(s->spill) > 0 ? 0 :
			compspill_writer_memory(s, s->block_size) +
			CompSpillMallocGrowth(s->spill, true);
		CompSpillSpillerSetPhase(s->spill, COMPSPILL_PHASE_READING_INPUT, 0, 0);
	}

	s->status = COMPSPILL_LOADING;
	s->stats.peak_mem = 0;
	compspill_remeasure(s);
}
