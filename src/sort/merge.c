/*-------------------------------------------------------------------------
 *
 * merge.c
 *	  K-way merge of sorted runs, and the planning of merge passes.
 *
 * A merge reads one run per input through a run reader and keeps the
 * inputs in a binary heap ordered by their current rows, which are datums
 * in the reader's decoded block, compared with the sort's SortSupport.  No
 * row is rebuilt as a tuple: the heap compares datums, an intermediate
 * pass hands the winning row's datums straight to the run writer, and the
 * final merge copies them into the caller's virtual slot.
 *
 * An input costs what its reader holds: a read buffer of about one stored
 * frame, the decompressed block, the arrays and buffers its decoding needs
 * and one decoded row.  That cost is measured on a reader with its first
 * frame decoded (a quarter more for larger frames, and never less than
 * what the frames' average sizes say).  The fan-in is what fits in the
 * memory left to the merge, measured on the memory contexts when the merge
 * starts (the writer's buffers included for an intermediate pass), divided
 * by that cost.  While there are more
 * runs than the final merge can read at once, runs are merged into new,
 * longer runs: when one merge can bring the count down to the final fan-in,
 * it merges only as many runs as that takes, so that the fewest bytes are
 * written again; otherwise everything is merged in groups of the fan-in.
 * The inputs of an intermediate merge are consumed: their readers give
 * their extents back to the spill file as they go, and the output run
 * takes them, so the file holds one copy of the data.
 *
 * The final merge streams its rows to the caller; the winning input moves
 * on only when the next row is asked for, so the datums handed out stay
 * valid as long as the slot's contents must.  It does not consume its
 * inputs, so it can be restarted from the start (rewind).
 *
 * IDENTIFICATION
 *	  src/sort/merge.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/binaryheap.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "compspill.h"
#include "sort/merge.h"
#include "spill/run.h"

/* fewest inputs a merge can have */
#define COMPSPILL_MIN_FANIN		2

struct CompSpillMerge
{
	CompSpill  *sp;
	CompSpillStats *stats;
	MemoryContext cxt;			/* the caller's; readers live below it */
	int			natts;
	int			nkeys;
	SortSupport ssup;

	CompSpillRun *runs;			/* runs left to merge */
	int			nruns;

	/* merge inputs */
	int64		reader_mem;		/* memory one input takes */
	int			nreaders;		/* readers created so far */
	int			maxreaders;
	CompSpillRunReader **readers;
	Datum	  **cur_values;		/* current row of each input */
	bool	  **cur_isnull;
	binaryheap *heap;			/* inputs by their current row */
	int			last_input;		/* input of the last row returned, or -1 */

	/* measures what the caller's memory holds (and keeps its peak) */
	int64		(*used_mem) (void *);
	void	   *used_arg;
};

/*
 * Compare the current rows of two merge inputs; binaryheap keeps the
 * largest first, so the order is reversed.
 */
static int
compspill_heap_cmp(Datum a, Datum b, void *arg)
{
	CompSpillMerge *m = (CompSpillMerge *) arg;
	int			ia = DatumGetInt32(a);
	int			ib = DatumGetInt32(b);
	Datum	   *va = m->cur_values[ia];
	Datum	   *vb = m->cur_values[ib];
	bool	   *na = m->cur_isnull[ia];
	bool	   *nb = m->cur_isnull[ib];
	int			k;

	for (k = 0; k < m->nkeys; k++)
	{
		SortSupport ssup = &m->ssup[k];
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
	binaryheap_reset(m->heap);
	for (i = 0; i < n; i++)
	{
		CompSpillReaderOpen(m->readers[i], &runs[i], consume);
		if (CompSpillReaderNext(m->readers[i], &m->cur_values[i],
								&m->cur_isnull[i]))
			binaryheap_add_unordered(m->heap, Int32GetDatum(i));
	}
	binaryheap_build(m->heap);
	m->last_input = -1;
}

/*
 * Move the input at the top of the heap to its next row; return the input
 * that now has the smallest row, or -1 when all are done.
 */
static inline int
compspill_advance_top(CompSpillMerge *m)
{
	int			top = DatumGetInt32(binaryheap_first(m->heap));

	if (CompSpillReaderNext(m->readers[top], &m->cur_values[top],
							&m->cur_isnull[top]))
		binaryheap_replace_first(m->heap, Int32GetDatum(top));
	else
		(void) binaryheap_remove_first(m->heap);

	if (binaryheap_empty(m->heap))
		return -1;
	return DatumGetInt32(binaryheap_first(m->heap));
}

/*
 * Merge runs[0..n) into the new run *out, consuming them.
 */
static void
compspill_merge_into_run(CompSpillMerge *m, CompSpillRun *runs, int n,
						 CompSpillRun *out)
{
	int			top;

	int64		nput = 0;

	compspill_start_merge(m, runs, n, true);
	CompSpillRunBegin(m->sp, out);
	out->level = runs[0].level + 1;
	top = binaryheap_empty(m->heap) ? -1 :
		DatumGetInt32(binaryheap_first(m->heap));
	while (top >= 0)
	{
		CHECK_FOR_INTERRUPTS();
		CompSpillRunPut(m->sp, m->cur_values[top], m->cur_isnull[top]);
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
	m->reader_mem = Max(CompSpillReaderEstimate(m->sp), 1);
}

/*
 * Measure what one merge input really holds: a reader on the first run,
 * through its first COMPSPILL_PROBE_FRAMES frames, the most its memory
 * contexts held after any of them (with codec = auto, a run's first frames
 * try the codecs in turn, so its first few frames are not typical).  The estimate from the frames' average
 * sizes is the floor; a quarter more than the measurement covers frames
 * larger than those.  Return the reader, which becomes the merge's first.
 */
#define COMPSPILL_PROBE_FRAMES	16

static CompSpillRunReader *
compspill_measure_input(CompSpillMerge *m)
{
	CompSpillRunReader *r = CompSpillReaderCreate(m->sp);
	Datum	   *values;
	bool	   *isnull;
	int64		most = 0;
	int64		rows;
	int64		per_frame;

	/* about the rows of the first few frames */
	per_frame = m->runs[0].nrows / Max(m->runs[0].nframes, 1) + 1;
	CompSpillReaderOpen(r, &m->runs[0], false);
	for (rows = 0; rows < per_frame * COMPSPILL_PROBE_FRAMES; rows++)
	{
		if (!CompSpillReaderNext(r, &values, &isnull))
			break;
		if (rows % per_frame == 0)
			most = Max(most, CompSpillReaderHeld(r));
	}
	most = Max(most, CompSpillReaderHeld(r));

	m->reader_mem = Max(m->reader_mem, most + most / 4);
	return r;
}

/*
 * Return how many inputs fit in what is left of allowed_mem, given the
 * memory the caller's context holds now (used_mem), of which held is the
 * readers that already exist.
 */
static int
compspill_fanin(CompSpillMerge *m, int64 allowed_mem, int64 used_mem,
				int64 held)
{
	int64		fanin = (allowed_mem - used_mem + held) / m->reader_mem;

	return (int) Max(Min(fanin, (int64) m->nruns), COMPSPILL_MIN_FANIN);
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
compspill_merge_create(CompSpill *sp, CompSpillStats *stats,
					   TupleDesc tupdesc, SortSupport ssup, int nkeys,
					   CompSpillRun *runs, int nruns, int64 allowed_mem,
					   bool last_writes, int64 (*used_mem) (void *), void *arg,
					   int *fanin, int *last_fanin)
{
	CompSpillMerge *m;
	CompSpillRunReader *first;
	int64		held;
	int64		used;
	int64		map_reserve = 0;

	m = palloc0(sizeof(CompSpillMerge));
	m->sp = sp;
	m->stats = stats;
	m->cxt = CurrentMemoryContext;
	m->natts = tupdesc->natts;
	m->nkeys = nkeys;
	m->ssup = ssup;
	m->runs = runs;
	m->nruns = nruns;
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

	used = used_mem(arg) + map_reserve;
	*fanin = compspill_fanin(m, allowed_mem, used, held);
	*last_fanin = *fanin;
	if (m->nruns > *fanin && !last_writes)
	{
		/* without the writer, the final merge can take a few more inputs */
		*last_fanin = Max(*fanin,
						  compspill_fanin(m, allowed_mem,
										  used - CompSpillWriterHeld(sp),
										  held));
	}

	/* the last merge has the most inputs */
	m->maxreaders = Max(*last_fanin, 2);
	m->readers = palloc0(sizeof(CompSpillRunReader *) * m->maxreaders);
	m->readers[m->nreaders++] = first;
	m->cur_values = palloc0(sizeof(Datum *) * m->maxreaders);
	m->cur_isnull = palloc0(sizeof(bool *) * m->maxreaders);
	m->heap = binaryheap_allocate(m->maxreaders, compspill_heap_cmp, m);
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

		CompSpillSetPhase(m->sp, COMPSPILL_PHASE_MERGING, (*pass)++, npasses);

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
	binaryheap_free(m->heap);
	pfree(m->readers);
	pfree(m->cur_values);
	pfree(m->cur_isnull);
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
CompSpillMergeBegin(CompSpill *sp, CompSpillStats *stats, TupleDesc tupdesc,
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
		CompSpillEndWrites(sp);
	stats->merge_passes++;
	if (last_writes)
		CompSpillSetPhase(sp, COMPSPILL_PHASE_MERGING, pass, npasses);
	else
		CompSpillSetPhase(sp, COMPSPILL_PHASE_RETURNING, 0, 0);
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
CompSpillMergeRuns(CompSpill *sp, CompSpillStats *stats, TupleDesc tupdesc,
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
	CompSpill  *sp = m->sp;
	CompSpillRun *runs = m->runs;
	int			nruns = m->nruns;

	compspill_merge_free(m);
	for (int i = 0; i < nruns; i++)
		CompSpillRunRelease(sp, &runs[i]);
}

/*
 * Store the next row of the final merge in the virtual slot, or return
 * false at the end.  The slot's contents stay valid until the next call.
 */
bool
CompSpillMergeNext(CompSpillMerge *m, TupleTableSlot *slot)
{
	int			top;

	if (binaryheap_empty(m->heap))
		return false;

	/* the previous winner moves on only now, its row no longer needed */
	if (m->last_input >= 0)
	{
		top = compspill_advance_top(m);
		if (top < 0)
		{
			m->last_input = -1;
			return false;
		}
	}
	else
		top = DatumGetInt32(binaryheap_first(m->heap));

	ExecClearTuple(slot);
	memcpy(slot->tts_values, m->cur_values[top], sizeof(Datum) * m->natts);
	memcpy(slot->tts_isnull, m->cur_isnull[top], sizeof(bool) * m->natts);
	ExecStoreVirtualTuple(slot);
	m->last_input = top;
	return true;
}

/*
 * Restart the final merge from the first row.
 */
void
CompSpillMergeRewind(CompSpillMerge *m)
{
	compspill_start_merge(m, m->runs, m->nruns, false);
}
