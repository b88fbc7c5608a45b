/*-------------------------------------------------------------------------
 *
 * merge.c
 *	  K-way merge of sorted runs, and the planning of merge passes.
 *
 * A merge reads one run per input through a run reader and keeps the
 * inputs in a binary heap.  A heap entry carries its input's first key
 * inline (taken from the decoded block, or from the tuple as readtup_heap
 * takes datum1), compared with the comparator the in-memory sort inlines
 * for it (unsigned, signed or int32, else the generic one); the other keys
 * are compared only on a tie, on the inputs' current rows.
 *
 * When every run is of row frames the merge works on tuples: an
 * intermediate pass copies the winning tuple into a new run of row frames
 * without re-encoding it, and the final merge hands it out in the caller's
 * minimal tuple slot without copying.  Otherwise it works on the datums of
 * the readers' decoded blocks: an intermediate pass hands them to the
 * column writer, and the final merge copies them into a virtual slot.
 *
 * An input costs what its reader holds.  For column frames that is
 * measured on a reader of the first run through its first frames (the
 * most its contexts held, an eighth more for larger frames), never less
 * than the frames' average sizes say; a reader of row frames has its
 * buffers from the start, plus room for the largest row.  The fan-in is
 * what fits in the memory left to the merge, measured on the memory
 * contexts when the merge starts (the writer's buffers and the extent
 * maps the pass will write included for an intermediate pass), divided by
 * that cost, and never less than six (COMPSPILL_MIN_FANIN).  A final
 * merge that reads every run at once and writes nothing knows the largest
 * frame it will read: its inputs cost what the readers' buffers may still
 * grow by to hold that frame instead of the eighth, and the memory of the
 * writer and of the codec's compression state (which it frees) and of the
 * extent maps (which no pass writes) goes to its inputs.  While there
 * are more runs than the final merge can read at once, runs are merged
 * into new, longer runs: when one merge can bring the count down to the
 * final fan-in, it merges only as many runs as that takes, so that the
 * fewest bytes are written again; otherwise everything is merged in groups
 * of the fan-in.  A sort whose list of runs would outgrow its memory
 * merges some of them while it still takes input (CompSpillMergeRuns).
 * The inputs of an intermediate merge are consumed: their readers give
 * their extents back to the spill file as they go, and the output run
 * takes them, so the file holds one copy of the data.
 *
 * The final merge streams its rows to the caller; the winning input moves
 * on only when the next row is asked for, so the row handed out stays
 * valid as long as the slot's contents must.  It does not consume its
 * inputs, so it can be restarted from the start (rewind).
 *
 * IDENTIFICATION
 *	  src/sort/merge.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "base/spillstats.h"
#include "shared/activity.h"
#include "sort/merge.h"
#include "spill/run.h"

/*
 * Fewest inputs a merge reads, whatever the memory, as native sort's merges
 * read at least six tapes (MINORDER): at the smallest work_mem its inputs'
 * buffers pass work_mem by a few dozen kB, where merges of two would write
 * every row again some log2(runs) times instead of log6(runs).
 */
#define COMPSPILL_MIN_FANIN		6

/* which comparator the first key has: the in-memory sort's variants */
typedef enum CompSpillMergeCmp
{
	COMPSPILL_MERGE_CMP_GENERIC,
	COMPSPILL_MERGE_CMP_UNSIGNED,
	COMPSPILL_MERGE_CMP_SIGNED,
	COMPSPILL_MERGE_CMP_INT32
} CompSpillMergeCmp;

/* A heap entry: an input and its current row's first key */
typedef struct CompSpillMergeEntry
{
	Datum		datum1;
	bool		isnull1;
	int			input;
} CompSpillMergeEntry;

struct CompSpillMerge
{
	CompSpillSpiller *sp;
	CompSpillStats *stats;
	MemoryContext cxt;			/* the caller's; readers live below it */
	TupleDesc	tupdesc;
	int			natts;
	int			nkeys;
	SortSupport ssup;
	CompSpillMergeCmp cmpkind;	/* of the first key */
	int			col1;			/* its column */

	CompSpillRun *runs;			/* runs left to merge */
	int			nruns;
	bool		rows;			/* all are runs of row frames */

	/* merge inputs */
	int64		reader_mem;		/* memory one input takes, but for its
								 * buffers (CompSpillRunBufferMemory) */
	int64		only_reader_mem;	/* the same in a merge that writes
									 * nothing: all frames are written */
	int64		buf_bound;		/* the most an input's buffers take, and an
								 * eighth */
	int			nreaders;		/* readers created so far */
	int			maxreaders;
	CompSpillRunReader **readers;
	Datum	  **cur_values;		/* current row of each input (columns) */
	bool	  **cur_isnull;
	MinimalTuple *cur_tuple;	/* current row of each input (rows) */
	bool	   *in_rows;		/* is the input's run of row frames? */
	Datum	   *out_values;		/* a row input's row deformed, to be written
								 * into column frames */
	bool	   *out_isnull;

	/* inputs by their current row, smallest first */
	CompSpillMergeEntry *heap;
	int			heapsize;
	int			last_input;		/* input of the last row returned, or -1 */

	/* measures what the caller's memory holds (and keeps its peak) */
	int64		(*used_mem) (void *);
	void	   *used_arg;
};

/* Point htup at the minimal tuple tup, for heap_getattr */
static inline void
compspill_wrap_tuple(HeapTupleData *htup, MinimalTuple tup)
{
	htup->t_len = tup->t_len + MINIMAL_TUPLE_OFFSET;
	htup->t_data = (HeapTupleHeader) ((char *) tup - MINIMAL_TUPLE_OFFSET);
}

/*
 * Return column attno of input i's current row, a tuple (an input of row
 * frames) or values decoded from column frames.
 */
static inline Datum
compspill_input_attr(CompSpillMerge *m, int i, int attno, bool *isnull)
{
	if (m->in_rows[i])
	{
		HeapTupleData htup;

		compspill_wrap_tuple(&htup, m->cur_tuple[i]);
		return heap_getattr(&htup, attno, m->tupdesc, isnull);
	}
	*isnull = m->cur_isnull[i][attno - 1];
	return m->cur_values[i][attno - 1];
}

/*
 * Compare the current rows of inputs ia and ib on the keys after the
 * first.  The inputs may be of either kind of frames.
 */
static int
compspill_merge_tiebreak(CompSpillMerge *m, int ia, int ib)
{
	for (int k = 1; k < m->nkeys; k++)
	{
		SortSupport ssup = &m->ssup[k];
		bool		na;
		bool		nb;
		Datum		da = compspill_input_attr(m, ia, ssup->ssup_attno, &na);
		Datum		db = compspill_input_attr(m, ib, ssup->ssup_attno, &nb);
		int			cmp = ApplySortComparator(da, na, db, nb, ssup);

		if (cmp != 0)
			return cmp;
	}
	return 0;
}

/*
 * Compare two heap entries: the first keys with the comparator the
 * in-memory sort inlines for them, the other keys only on a tie.
 */
static inline int
compspill_merge_cmp(CompSpillMerge *m, const CompSpillMergeEntry *a,
					const CompSpillMergeEntry *b)
{
	int			cmp;

	if (unlikely(m->nkeys == 0))
		return 0;
	switch (m->cmpkind)
	{
		case COMPSPILL_MERGE_CMP_UNSIGNED:
			cmp = ApplyUnsignedSortComparator(a->datum1, a->isnull1,
											  b->datum1, b->isnull1, m->ssup);
			break;
#if SIZEOF_DATUM >= 8
		case COMPSPILL_MERGE_CMP_SIGNED:
			cmp = ApplySignedSortComparator(a->datum1, a->isnull1,
											b->datum1, b->isnull1, m->ssup);
			break;
#endif
		case COMPSPILL_MERGE_CMP_INT32:
			cmp = ApplyInt32SortComparator(a->datum1, a->isnull1,
										   b->datum1, b->isnull1, m->ssup);
			break;
		default:
			cmp = ApplySortComparator(a->datum1, a->isnull1,
									  b->datum1, b->isnull1, m->ssup);
			break;
	}
	if (cmp != 0 || m->nkeys == 1)
		return cmp;
	return compspill_merge_tiebreak(m, a->input, b->input);
}

/* Move the entry at position i of the heap down to its place */
static inline void
compspill_sift_down(CompSpillMerge *m, int i)
{
	CompSpillMergeEntry *h = m->heap;
	int			n = m->heapsize;
	CompSpillMergeEntry e = h[i];

	for (;;)
	{
		int			c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && compspill_merge_cmp(m, &h[c + 1], &h[c]) < 0)
			c++;
		if (compspill_merge_cmp(m, &e, &h[c]) <= 0)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
}

/*
 * Read the next row of input i into *e, taking its first key as
 * readtup_heap does; return false at the end of the input's run.
 */
static inline bool
compspill_fetch(CompSpillMerge *m, int i, CompSpillMergeEntry *e)
{
	e->input = i;
	if (m->in_rows[i])
	{
		MinimalTuple tup = CompSpillReaderNextTuple(m->readers[i]);
		HeapTupleData htup;

		if (tup == NULL)
			return false;
		m->cur_tuple[i] = tup;
		if (m->nkeys > 0)
		{
			compspill_wrap_tuple(&htup, tup);
			e->datum1 = heap_getattr(&htup, m->col1 + 1, m->tupdesc,
									 &e->isnull1);
		}
	}
	else
	{
		if (!CompSpillReaderNext(m->readers[i], &m->cur_values[i],
								 &m->cur_isnull[i]))
			return false;
		if (m->nkeys > 0)
		{
			e->datum1 = m->cur_values[i][m->col1];
			e->isnull1 = m->cur_isnull[i][m->col1];
		}
	}
	return true;
}

/*
 * Make sure n readers exist.
 */
static void
compspill_ensure_readers(CompSpillMerge *m, int n)
{
	Assert(n <= m->maxreaders);
	while (m->nreaders < n)
		m->readers[m->nreaders++] = CompSpillReaderCreate(m->sp);
}

/*
 * Open readers on runs[0..n) and fill the heap with their first rows.
 */
static void
compspill_start_merge(CompSpillMerge *m, CompSpillRun *runs, int n,
					  bool consume)
{
	int			i;

	compspill_ensure_readers(m, n);
	m->heapsize = 0;
	for (i = 0; i < n; i++)
	{
		CompSpillReaderOpen(m->readers[i], &runs[i], consume);
		m->in_rows[i] = runs[i].rows;
		if (compspill_fetch(m, i, &m->heap[m->heapsize]))
			m->heapsize++;
	}
	for (i = m->heapsize / 2 - 1; i >= 0; i--)
		compspill_sift_down(m, i);
	m->last_input = -1;
}

/*
 * Move the input at the top of the heap to its next row; return the input
 * that now has the smallest row, or -1 when all are done.
 */
static inline int
compspill_advance_top(CompSpillMerge *m)
{
	int			top = m->heap[0].input;

	if (!compspill_fetch(m, top, &m->heap[0]))
	{
		if (--m->heapsize == 0)
			return -1;
		m->heap[0] = m->heap[m->heapsize];
	}
	compspill_sift_down(m, 0);
	return m->heap[0].input;
}

/*
 * Merge runs[0..n) into the new run *out, consuming them.  Runs of row
 * frames merge into a run of row frames, their rows copied as they are;
 * runs of column frames, or of both kinds, into a run of column frames,
 * the rows of row frames deformed into it.
 */
static void
compspill_merge_into_run(CompSpillMerge *m, CompSpillRun *runs, int n,
						 CompSpillRun *out)
{
	int			top;
	int64		nput = 0;
	bool		rows = true;

	for (int i = 0; i < n; i++)
		rows = rows && runs[i].rows;
	compspill_start_merge(m, runs, n, true);
	if (rows)
		CompSpillRunBeginRows(m->sp, out);
	else
		CompSpillRunBegin(m->sp, out);
	out->level = runs[0].level + 1;
	top = m->heapsize == 0 ? -1 : m->heap[0].input;
	while (top >= 0)
	{
		CHECK_FOR_INTERRUPTS();
		if (rows)
			CompSpillRunPutTuple(m->sp, m->cur_tuple[top]);
		else if (m->in_rows[top])
		{
			HeapTupleData htup;

			compspill_wrap_tuple(&htup, m->cur_tuple[top]);
			heap_deform_tuple(&htup, m->tupdesc, m->out_values, m->out_isnull);
			CompSpillRunPutValues(m->sp, m->out_values, m->out_isnull);
		}
		else
			CompSpillRunPutValues(m->sp, m->cur_values[top], m->cur_isnull[top]);
		top = compspill_advance_top(m);

		/* now and then, measure the inputs and the writer together */
		if ((++nput & 0xFFFF) == 0)
			(void) m->used_mem(m->used_arg);
	}
	(void) m->used_mem(m->used_arg);
	CompSpillRunEnd(m->sp);

	/* an input that ended early has given back everything already */
	for (int i = 0; i < n; i++)
		CompSpillRunRelease(m->sp, &runs[i]);
}

/*
 * Work out what one merge input costs from the frames written so far (see
 * CompSpillReaderEstimate).
 */
static void
compspill_size_input(CompSpillMerge *m)
{
	bool		any_rows = false;

	for (int i = 0; i < m->nruns; i++)
		any_rows = any_rows || m->runs[i].rows;
	m->reader_mem = Max(CompSpillReaderEstimate(m->sp, m->rows), 1);
	if (any_rows && !m->rows)
		m->reader_mem = Max(m->reader_mem,
							CompSpillReaderEstimate(m->sp, true));
}

/*
 * Measure what one merge input really holds: a reader on the first run of
 * each kind (row frames; column frames that took only the light encodings,
 * which decode in place; column frames that took the costly ones, which
 * rebuild columns into arrays of their own), through its first
 * COMPSPILL_PROBE_FRAMES frames, the most its memory contexts held after
 * any of them (with codec = auto, a run's first frames try the codecs in
 * turn, so its first few frames are not typical).  An input costs that,
 * and what the reader's row buffer may still grow by to hold the largest
 * row written so far (CompSpillReaderGrowth), with an eighth more for
 * larger ones; the estimate from the frames' average sizes is the floor.
 * In a merge that writes nothing (m->only_reader_mem) no frame is larger
 * than those: the eighth is kept for what decoding a frame holds only.
 * The buffers are left out: an input's window and decompression buffer
 * are sized to its run (one buffer for both when the run is decompressed
 * in place), and the fan-in counts them so (compspill_all_fit), or at
 * their largest (m->buf_bound).  Return the reader, which becomes the
 * merge's first.
 */
#define COMPSPILL_PROBE_FRAMES	16

/*
 * A probe's frames are read again when the merge starts: fewer, down to
 * COMPSPILL_PROBE_MIN_FRAMES, where COMPSPILL_PROBE_FRAMES would read more
 * than COMPSPILL_PROBE_BYTES.  An 80,000-row sort at 2MB, 15 runs of 56kB
 * frames stored raw, read 8% of its temp blocks twice in its two probes
 * (sql/reads.sql allows 5%); lineitem's frames at 4MB, 2-5kB stored, are
 * probed through 16 as before.
 */
#define COMPSPILL_PROBE_MIN_FRAMES	4
#define COMPSPILL_PROBE_BYTES		(128 * 1024)

/*
 * Read run's first COMPSPILL_PROBE_FRAMES frames (fewer where they are
 * large, see above) with reader r, as a merge reads them, and return the
 * most r held after any of them, its buffers left out (at least most, the
 * figure so far).
 */
static int64
compspill_probe_run(CompSpillRunReader *r, CompSpillRun *run, int64 most)
{
	int64		per_frame = run->nrows / Max(run->nframes, 1) + 1;
	int64		frame_len = run->len / Max(run->nframes, 1);
	int64		frames = COMPSPILL_PROBE_FRAMES;

	if (frame_len > 0)
		frames = Max(Min(frames, COMPSPILL_PROBE_BYTES / frame_len),
					 COMPSPILL_PROBE_MIN_FRAMES);
	CompSpillReaderOpen(r, run, false);
	for (int64 rows = 0; rows < per_frame * frames; rows++)
	{
		Datum	   *values;
		bool	   *isnull;

		if (run->rows ? CompSpillReaderNextTuple(r) == NULL :
			!CompSpillReaderNext(r, &values, &isnull))
			break;
		if (rows % per_frame == 0)
			most = Max(most, CompSpillReaderHeld(r) -
					   CompSpillReaderBufferHeld(r));
	}
	return Max(most, CompSpillReaderHeld(r) - CompSpillReaderBufferHeld(r));
}

/*
 * Measure what a merge input reading run would hold, its buffers left out
 * (CompSpillRunBufferMemory): a reader's memory through
 * the run's first frames, and in *frame_part what of it grows with the
 * frames' size (CompSpillReaderFrameHeld).  For a sort choosing the block
 * size of its later runs from its first: the codec's decompression state
 * the reader made is freed, so that the later runs do not hold it.
 */
int64
CompSpillMergeProbeRun(CompSpillSpiller *sp, CompSpillRun *run,
					   int64 *frame_part)
{
	CompSpillRunReader *r = CompSpillReaderCreate(sp);
	int64		most = compspill_probe_run(r, run, CompSpillReaderHeld(r) -
										   CompSpillReaderBufferHeld(r));

	*frame_part = CompSpillReaderFrameHeld(r);
	CompSpillReaderFree(r);
	CompSpillSpillerEndReads(sp);
	return most;
}

static CompSpillRunReader *
compspill_measure_input(CompSpillMerge *m)
{
	CompSpillRunReader *r = CompSpillReaderCreate(m->sp);
	int64		fresh = CompSpillReaderHeld(r) - CompSpillReaderBufferHeld(r);
	CompSpillRun *probe[3] = {NULL, NULL, NULL};
	int64		most = fresh;
	int64		growth;

	/* the first run of each kind: row frames, light, costly */
	for (int i = 0; i < m->nruns; i++)
	{
		CompSpillRun *run = &m->runs[i];
		int			kind = run->rows ? 0 : run->costly ? 2 : 1;

		if (probe[kind] == NULL)
			probe[kind] = run;
	}

	/* about the rows of the first few frames, read as the merge will */
	for (int k = 0; k < 3; k++)
	{
		if (probe[k] != NULL)
			most = compspill_probe_run(r, probe[k], most);
	}

	growth = CompSpillReaderGrowth(r);
	m->reader_mem = Max(m->reader_mem, most + most / 8 + growth);
	m->only_reader_mem = Max(m->only_reader_mem,
							 most + (most - fresh) / 8 + growth);
	/* the passes before the last write frames, a little larger at times */
	m->buf_bound = CompSpillReaderBufferBound(m->sp);
	m->buf_bound += m->buf_bound / 8;
	return r;
}

/*
 * Say whether one merge can read all the runs at once in room bytes, each
 * input taking per_input and the buffers its run needs: a window and a
 * decompression buffer (none for a run without frames stored compressed),
 * or one buffer for both when the run is decompressed in place.  With
 * codec = auto a few runs may hold compressed frames among raw ones: the
 * others' inputs need no decompression buffer.
 */
static bool
compspill_all_fit(CompSpillMerge *m, int64 room, int64 per_input)
{
	int64		need = 0;

	for (int i = 0; i < m->nruns; i++)
		need += per_input + CompSpillRunBufferMemory(m->sp, &m->runs[i], true);
	return m->nruns >= 1 && need <= room;
}

/*
 * Return how many inputs fit in what is left of allowed_mem, given the
 * memory the caller's context holds now (used_mem), of which held is the
 * readers that already exist.
 */
static int
compspill_fanin(CompSpillMerge *m, int64 allowed_mem, int64 used_mem,
				int64 held, int64 reader_mem)
{
	int64		fanin = (allowed_mem - used_mem + held) / reader_mem;

	return (int) Min(Max(fanin, COMPSPILL_MIN_FANIN), (int64) m->nruns);
}

/*
 * Count the passes the merge of nruns runs will make, the final one
 * included, with the given fan-ins: as the loop of CompSpillMergeBegin
 * does them.
 */
static int
compspill_count_passes(int nruns, int fanin, int final_fanin)
{
	int			npasses = 1;

	while (nruns > final_fanin)
	{
		if (nruns - final_fanin < fanin)
			nruns = final_fanin;
		else
			nruns = (nruns + fanin - 1) / fanin;
		npasses++;
	}
	return npasses;
}

/*
 * Set up a merge of runs[0..nruns) within allowed_mem: measure what one
 * input costs, then work out how many inputs an intermediate pass (which
 * has the writer as well) can read at once, *fanin, and how many the last
 * merge can, *last_fanin: more when the last merge streams to the caller
 * and the writer's memory goes to the readers; not when last_writes, the
 * last merge writing its output (into a store, or into a new run) and so
 * keeping the writer.  The runs array becomes the merge's.
 */
static CompSpillMerge *
compspill_merge_create(CompSpillSpiller *sp, CompSpillStats *stats,
					   TupleDesc tupdesc, SortSupport ssup, int nkeys,
					   CompSpillRun *runs, int nruns, int64 allowed_mem,
					   bool last_writes, int64 (*used_mem) (void *), void *arg,
					   int *fanin, int *last_fanin)
{
	CompSpillMerge *m;
	CompSpillRunReader *first = NULL;
	int64		held = 0;
	int64		used;
	int64		growth;
	int64		map_reserve = 0;

	m = palloc0(sizeof(CompSpillMerge));
	m->sp = sp;
	m->stats = stats;
	m->cxt = CurrentMemoryContext;
	m->tupdesc = tupdesc;
	m->natts = tupdesc->natts;
	m->nkeys = nkeys;
	m->ssup = ssup;
	m->cmpkind = COMPSPILL_MERGE_CMP_GENERIC;
	if (nkeys > 0)
	{
		m->col1 = ssup[0].ssup_attno - 1;
		if (ssup[0].comparator == ssup_datum_unsigned_cmp)
			m->cmpkind = COMPSPILL_MERGE_CMP_UNSIGNED;
#if SIZEOF_DATUM >= 8
		else if (ssup[0].comparator == ssup_datum_signed_cmp)
			m->cmpkind = COMPSPILL_MERGE_CMP_SIGNED;
#endif
		else if (ssup[0].comparator == ssup_datum_int32_cmp)
			m->cmpkind = COMPSPILL_MERGE_CMP_INT32;
	}
	m->runs = runs;
	m->nruns = nruns;
	m->rows = true;
	for (int i = 0; i < nruns; i++)
		m->rows = m->rows && runs[i].rows;
	m->last_input = -1;
	m->used_mem = used_mem;
	m->used_arg = arg;

	compspill_size_input(m);
	first = compspill_measure_input(m);
	held = CompSpillReaderHeld(first);

	/*
	 * The extent maps of the runs an intermediate pass writes grow as they
	 * are written, into the space its inputs leave scattered over the file:
	 * in the worst case a range per extent.  That is reserved up front.
	 */
	for (int i = 0; i < nruns; i++)
		map_reserve += runs[i].len;
	map_reserve = CompSpillRunMapReserve(sp, map_reserve);

	/*
	 * So is the zstd decompression context until it exists: with codec =
	 * auto, the first zstd frame read makes it, after the fan-in is set.
	 * An input's buffers are its run's: where the runs are known (all of
	 * them read at once) each counts its own, otherwise every input counts
	 * the largest.  The first reader's are in used, and are remade when it
	 * opens a run.
	 */
	used = used_mem(arg);
	growth = CompSpillMallocGrowth(sp, false);
	if (compspill_all_fit(m, allowed_mem - (used + growth + map_reserve) + held,
						  m->reader_mem))
		*fanin = m->nruns;
	else
		*fanin = compspill_fanin(m, allowed_mem, used + growth + map_reserve,
								 held, m->reader_mem + m->buf_bound);
	*last_fanin = *fanin;
	if (m->nruns > *fanin && !last_writes)
	{
		/*
		 * Without the writer and the codec's compression state, the final
		 * merge can take a few more inputs.  If it can take all the runs,
		 * no pass writes: no map grows, no frame is larger than those
		 * written so far, and the codec state reads those only.
		 */
		int64		only_used = used + CompSpillReadGrowth(sp) -
			CompSpillWriterHeld(sp);

		if (compspill_all_fit(m, allowed_mem - only_used + held,
							  m->only_reader_mem))
			*last_fanin = m->nruns;
		else
			*last_fanin = Max(*fanin,
							  compspill_fanin(m, allowed_mem,
											  used + growth + map_reserve -
											  CompSpillWriterHeld(sp),
											  held,
											  m->reader_mem + m->buf_bound));
	}

	/* the last merge has the most inputs */
	m->maxreaders = Max(*last_fanin, 2);
	m->readers = palloc0(sizeof(CompSpillRunReader *) * m->maxreaders);
	if (first != NULL)
		m->readers[m->nreaders++] = first;
	m->cur_values = palloc0(sizeof(Datum *) * m->maxreaders);
	m->cur_isnull = palloc0(sizeof(bool *) * m->maxreaders);
	m->cur_tuple = palloc0(sizeof(MinimalTuple) * m->maxreaders);
	m->in_rows = palloc0(sizeof(bool) * m->maxreaders);
	m->out_values = palloc(sizeof(Datum) * m->natts);
	m->out_isnull = palloc(sizeof(bool) * m->natts);
	m->heap = palloc(sizeof(CompSpillMergeEntry) * m->maxreaders);
	return m;
}

/*
 * Merge the merge's runs into new, longer ones, fanin at a time, until at
 * most target are left; *pass numbers the passes for the live view.
 */
static void
compspill_merge_passes(CompSpillMerge *m, int fanin, int target, int *pass,
					   int npasses)
{
	while (m->nruns > target)
	{
		int			nnext = 0;
		int			i = 0;
		int			excess = m->nruns - target;

		CompSpillSpillerSetPhase(m->sp, COMPSPILL_PHASE_MERGING, (*pass)++, npasses);

		/*
		 * Each merge of k runs removes k - 1 of them.  If one merge can bring
		 * the count down to the target, merge only as many runs as that takes
		 * (runs are of about one size, so the first ones do); otherwise merge
		 * everything in groups of the fan-in.  The list is rewritten in
		 * place: the output of a merge goes where its first input was, which
		 * has been consumed.
		 */
		if (excess < fanin)
		{
			CompSpillRun out;

			compspill_merge_into_run(m, m->runs, excess + 1, &out);
			m->runs[nnext++] = out;
			for (i = excess + 1; i < m->nruns; i++)
				m->runs[nnext++] = m->runs[i];
		}
		else
		{
			while (i < m->nruns)
			{
				int			n = Min(fanin, m->nruns - i);

				if (n == 1)
					m->runs[nnext++] = m->runs[i];
				else
				{
					CompSpillRun out;

					compspill_merge_into_run(m, &m->runs[i], n, &out);
					m->runs[nnext++] = out;
				}
				i += n;
			}
		}

		m->nruns = nnext;
		m->stats->merge_passes++;
	}
}

/* Free a merge's readers and its own arrays */
static void
compspill_merge_free(CompSpillMerge *m)
{
	for (int i = 0; i < m->nreaders; i++)
		CompSpillReaderFree(m->readers[i]);
	pfree(m->heap);
	pfree(m->readers);
	pfree(m->cur_values);
	pfree(m->cur_isnull);
	pfree(m->cur_tuple);
	pfree(m->in_rows);
	pfree(m->out_values);
	pfree(m->out_isnull);
	pfree(m);
}

/*
 * Merge the runs of a sort until at most as many are left as the final
 * merge can read at once within allowed_mem, then start the final merge.
 * The runs array becomes the merge's.  last_writes: the caller writes the
 * final merge out, into a store, so the writer stays.  used_mem() measures
 * what the caller's memory holds; it is called as readers come and go.
 */
CompSpillMerge *
CompSpillMergeBegin(CompSpillSpiller *sp, CompSpillStats *stats,
					TupleDesc tupdesc,
					SortSupport ssup, int nkeys, CompSpillRun *runs,
					int nruns, int64 allowed_mem, bool last_writes,
					int64 (*used_mem) (void *), void *arg)
{
	CompSpillMerge *m;
	int			fanin;
	int			final_fanin;
	int			pass = 1;
	int			npasses;

	m = compspill_merge_create(sp, stats, tupdesc, ssup, nkeys, runs, nruns,
							   allowed_mem, last_writes, used_mem, arg,
							   &fanin, &final_fanin);
	npasses = compspill_count_passes(m->nruns, fanin, final_fanin);
	compspill_merge_passes(m, fanin, final_fanin, &pass, npasses);

	/*
	 * The final merge streams to the caller.  Unless the caller writes it
	 * to a store, nothing is written from here on and the writer's memory
	 * goes to the readers, which do not consume their runs so that the
	 * merge can start again; a merge into a store consumes them.
	 */
	if (!last_writes)
		CompSpillSpillerEndWrites(sp);
	stats->merge_passes++;
	if (last_writes)
		CompSpillSpillerSetPhase(sp, COMPSPILL_PHASE_MERGING, pass, npasses);
	else
		CompSpillSpillerSetPhase(sp, COMPSPILL_PHASE_RETURNING, 0, 0);
	compspill_start_merge(m, m->runs, m->nruns, last_writes);
	return m;
}

/*
 * Merge as many of runs[0..nruns) as one merge can read at once within
 * allowed_mem (the writer's buffers included) into the new run *out,
 * consuming them, and return how many that was; for a sort whose list of
 * runs would otherwise outgrow its memory while it still takes input.
 * runs[] stays the caller's.
 */
int
CompSpillMergeRuns(CompSpillSpiller *sp, CompSpillStats *stats,
				   TupleDesc tupdesc,
				   SortSupport ssup, int nkeys, CompSpillRun *runs,
				   int nruns, int64 allowed_mem,
				   int64 (*used_mem) (void *), void *arg, CompSpillRun *out)
{
	CompSpillMerge *m;
	int			fanin;			/* at most nruns: see compspill_fanin */
	int			last_fanin;
	int64		written;

	Assert(nruns >= 2);
	m = compspill_merge_create(sp, stats, tupdesc, ssup, nkeys, runs, nruns,
							   allowed_mem, true, used_mem, arg,
							   &fanin, &last_fanin);
	written = stats->bytes_written;
	compspill_merge_into_run(m, runs, fanin, out);
	stats->early_merges++;
	stats->bytes_written_early += stats->bytes_written - written;
	compspill_merge_free(m);
	return fanin;
}

/*
 * Free the merge's readers, once the final merge has been read to its end
 * and its runs are not needed any more.
 */
void
CompSpillMergeEnd(CompSpillMerge *m)
{
	CompSpillSpiller *sp = m->sp;
	CompSpillRun *runs = m->runs;
	int			nruns = m->nruns;

	compspill_merge_free(m);
	for (int i = 0; i < nruns; i++)
		CompSpillRunRelease(sp, &runs[i]);
}

/*
 * Return the next row of the final merge, in minslot when its input's run
 * is of row frames (the input's tuple, not copied) and in virtslot
 * otherwise; NULL at the end.  The slot's contents stay valid until the next call.
 */
TupleTableSlot *
CompSpillMergeNext(CompSpillMerge *m, TupleTableSlot *virtslot,
				   TupleTableSlot *minslot)
{
	int			top;

	if (m->heapsize == 0)
		return NULL;

	/* the previous winner moves on only now, its row no longer needed */
	if (m->last_input >= 0)
	{
		top = compspill_advance_top(m);
		if (top < 0)
		{
			m->last_input = -1;
			return NULL;
		}
	}
	else
		top = m->heap[0].input;
	m->last_input = top;

	if (m->in_rows[top])
		return ExecStoreMinimalTuple(m->cur_tuple[top], minslot, false);

	ExecClearTuple(virtslot);
	memcpy(virtslot->tts_values, m->cur_values[top], sizeof(Datum) * m->natts);
	memcpy(virtslot->tts_isnull, m->cur_isnull[top], sizeof(bool) * m->natts);
	return ExecStoreVirtualTuple(virtslot);
}

/*
 * Restart the final merge from the first row.
 */
void
CompSpillMergeRewind(CompSpillMerge *m)
{
	compspill_start_merge(m, m->runs, m->nruns, false);
}
