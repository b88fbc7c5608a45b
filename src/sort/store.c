/*-------------------------------------------------------------------------
 *
 * store.c
 *	  The tuplestore path: rows kept in memory while they fit in work_mem,
 *	  then in one growing, compressed, indexed run, read back by position.
 *
 * A CompSpillStore keeps rows in the order they are put and gives any of
 * them back by row number.  Readers move through it with read positions
 * that behave as tuplestore's read pointers: a position lies between rows,
 * a forward read returns the row after it, a backward read the row before
 * the one returned last, and a position that found the end going forward
 * returns the last row going backward.  Material nodes read their store
 * while they are still filling it (the child is read lazily), so writes
 * and reads interleave freely.
 *
 * In memory the rows are minimal tuples in a generation context, as
 * tuplestore keeps them.  When they outgrow work_mem, all of them are
 * encoded into one run of the store's spill object (spill/run.h), in blocks,
 * and freed; from then on every row put goes to the run's encoder.  The
 * run keeps an index of its frames (where each starts, and its first row),
 * so that a row number leads to one frame: reading any row decodes at most
 * one block, which is kept as minimal tuples for the rows around it
 * (backward scans, mark and restore, nested-loop rescans all read blocks
 * in turn).  Rows put since the last frame was cut are still in the
 * encoder, unreadable, so the store keeps those few in memory as well (the
 * tail), and also the rows of the frame cut last: a merge join restores
 * to a mark a little behind the rows it reads, which is then served from
 * memory.  Older frames the writer still buffers are written out before
 * they are read (CompSpillRunSync), the partial page included; it is
 * written again, completed, later.
 *
 * A sort that must give random access (merge join inners, scrollable
 * cursors) writes its final merge into a store built on the sort's own
 * spill object (CompSpillStoreBeginOnSpill): the rows go straight to an
 * indexed run in the space the merge inputs give back, and are read back
 * by position once all are in.
 *
 * IDENTIFICATION
 *	  src/sort/store.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "base/buffer.h"
#include "base/spillstats.h"
#include "shared/activity.h"
#include "shared/stats.h"
#include "sort/store.h"
#include "sort/tupleform.h"
#include "spill/run.h"

/* initial size of the in-memory row array */
#define COMPSPILL_STORE_INITIAL_ROWS	1024

/* Rows kept in memory in a context of their own */
typedef struct CompSpillRowList
{
	MemoryContext cxt;
	MinimalTuple *rows;
	int64		n;
	int64		cap;
} CompSpillRowList;

struct CompSpillStore
{
	MemoryContext cxt;			/* owns everything of the store */
	TupleDesc	tupdesc;
	CompSpillTupleForm *form;	/* for forming its rows */
	int64		allowed_mem;	/* work_mem, bytes */
	int64		spill_reserve;	/* what the writer of the rows held takes */
	int64		tuple_block;	/* the tuples' context's largest block */
	const char *what;			/* the node, for the log line */
	double		est_rows;		/* the plan's rows and width, 0 if unknown */
	int			est_width;
	double		est_reads;		/* times the plan expects them read, >= 1 */
	CompSpillSettings set;
	CompSpillStats own_stats;	/* when the store spills on its own */
	CompSpillStats *stats;		/* the figures it adds to */
	int64		nrows;			/* rows put */
	bool		writing;		/* rows may still be put */

	/* read positions */
	CompSpillStorePos *pos;
	int			npos;

	/* in memory: rows [0, nrows) */
	MemoryContext tuplecxt;
	MinimalTuple *memtuples;	/* NULL once spilled; row r at r - mem_base */
	int64		memtupsize;
	bool		array_full;		/* the array grew for the last time */
	int64		mem_base;		/* rows removed from the array's front */
	int64		mem_trimmed;	/* rows freed by trimming, >= mem_base */
	int64		run_base;		/* rows trimmed before the run began */

	/*
	 * Spilled: rows [0, nframed) in frames of run, the rest in the tail;
	 * the rows of the frame cut last, from prev_first on, kept as well.
	 */
	CompSpillSpiller *sp;
	bool		own_sp;			/* created here, ended here */
	CompSpillRun run;
	int64		nframed;
	int64		synced_frames;	/* frames made readable */
	int64		synced_rows;	/* the rows before those frames' end */
	Size		block_size;		/* in-memory bytes of rows per frame */
	Size		later_block_size;	/* the same, once the rows held are
									 * written, if larger */
	Size		frame_bytes;	/* of the rows since the last frame cut */
	CompSpillRowList tail;
	CompSpillRowList prev;
	int64		prev_first;
	TupleTableSlot *putslot;	/* deforms rows put as minimal tuples */

	/* the block loaded for reading, as minimal tuples */
	CompSpillRunReader *reader;
	MemoryContext blkcxt;
	int64		blk_first;		/* its first row, or -1 */
	int			blk_nrows;
	MinimalTuple *blk_rows;
	int			blk_cap;
};

/*
 * Move a read position one row forward or backward over nrows rows and
 * return the number of the row it passes, or -1 when there is none; the
 * semantics of tuplestore's and tuplesort's read positions.
 */
int64
CompSpillPosStep(CompSpillStorePos *pos, int64 nrows, bool forward)
{
	if (forward)
	{
		if (pos->eof_reached)
			return -1;
		if (pos->current < nrows)
			return pos->current++;
		pos->eof_reached = true;
		return -1;
	}

	/* at the end, backward returns the last row, else the one before */
	if (pos->eof_reached)
	{
		pos->current = nrows;
		pos->eof_reached = false;
	}
	else
	{
		if (pos->current <= 0)
			return -1;
		pos->current--;
	}
	if (pos->current <= 0)
		return -1;
	return pos->current - 1;
}

static void compspill_store_free_before(CompSpillStore *st, int64 oldest);

/*
 * Create the parts common to both kinds of store, in a new context under
 * CurrentMemoryContext.
 */
static CompSpillStore *
compspill_store_create(TupleDesc tupdesc, int npos)
{
	MemoryContext cxt;
	CompSpillStore *st;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "CompSpill store",
								COMPSPILL_SMALL_CONTEXT_SIZES);
	st = MemoryContextAllocZero(cxt, sizeof(CompSpillStore));
	st->cxt = cxt;
	st->tupdesc = tupdesc;
	st->form = CompSpillTupleFormCreate(tupdesc);
	st->writing = true;
	st->npos = Max(npos, 1);
	st->pos = MemoryContextAllocZero(cxt, sizeof(CompSpillStorePos) * st->npos);
	st->blk_first = -1;
	st->est_reads = 1.0;
	return st;
}

/*
 * Is the writer reserved for the rows held one of row frames?  With codec =
 * auto and frame_kind = auto: the kind auto gives a store (see
 * CompSpillStoreBegin).
 */
static bool
compspill_store_rows_reserved(CompSpillStore *st)
{
	return st->set.codec == COMPSPILL_CODEC_AUTO &&
		st->set.frame_kind == COMPSPILL_FRAME_KIND_AUTO;
}

/*
 * What the writer of the rows held takes when the store spills, in row
 * frames (rows) or column frames: the smallest blocks and writes, and lz4's
 * state where it compresses (see CompSpillStoreBegin).
 */
static int64
compspill_store_held_writer(CompSpillStore *st, bool rows)
{
	CompSpillSettings light = CompSpillLightSettings(&st->set);
	Size		writer;

	if (rows)
		writer = CompSpillRowWriterMemoryBound(COMPSPILL_MIN_BLOCK_SIZE,
											   COMPSPILL_MIN_WRITE_SIZE);
	else
		writer = CompSpillWriterMemoryBound(COMPSPILL_MIN_BLOCK_SIZE,
											COMPSPILL_MIN_WRITE_SIZE);
	return (int64) (writer +
					CompSpillMallocEstimate(&light, COMPSPILL_MIN_BLOCK_SIZE));
}

/*
 * What of the rows' memory that writer needs reserved: what it takes
 * beyond a 50th of work_mem, and a block of the tuples' context.
 */
static int64
compspill_store_held_reserve(CompSpillStore *st, bool rows)
{
	return Max(compspill_store_held_writer(st, rows) + st->tuple_block -
			   st->allowed_mem / 50, 0);
}

/*
 * Start a store of rows of tupdesc with npos read positions, holding rows
 * in memory within work_mem_kb and spilling with the given settings; what
 * names the node in the log line of a spill.
 */
CompSpillStore *
CompSpillStoreBegin(TupleDesc tupdesc, int work_mem_kb,
					const CompSpillSettings *set, int npos, const char *what)
{
	CompSpillStore *st = compspill_store_create(tupdesc, npos);
	Size		block;
	Size		write;
	bool		rows;
	int64		small;

	st->what = what;
	st->allowed_mem = Max((int64) work_mem_kb, 64) * (int64) 1024;
	st->set = *set;
	st->set.mem_limit = st->allowed_mem;
	st->stats = &st->own_stats;
	st->stats->codec = set->codec;
	st->stats->dio_requested = set->dio;
	st->tuple_block = Min(Max(st->allowed_mem / 256, 8192),
						  (int64) ALLOCSET_DEFAULT_MAXSIZE);
	st->tuplecxt = GenerationContextCreate(st->cxt, "CompSpill store rows",
										   0, 8192, st->tuple_block);

	/*
	 * The rows are kept in memory until they alone would pass work_mem, as
	 * native tuplestore keeps them, and the writer that writes them when
	 * they do comes on top, as native's file buffer does, within a 50th of
	 * work_mem (a spilling sort's bound): only what the writer takes beyond
	 * that is reserved from the rows' memory, with a block of the tuples'
	 * context (the rows pass the check by the block they last took, up to
	 * one block: 8kB at 1MB).  The writer of the rows held uses the
	 * smallest blocks and writes, and the rows are freed as their frames
	 * are cut, so that the memory they held makes room for the larger
	 * blocks that follow (compspill_store_spill).  The tuples'
	 * context grows in 256ths of work_mem, so that what it holds is close
	 * to what its rows take.  Under a few hundred kB of work_mem the
	 * writer would be most of it: there the store reserves, as before, the
	 * estimate of its writer and three blocks at the sizes the policy gives
	 * it, and a 32nd of work_mem, smaller still, as a spill's fixed costs
	 * pass so small a work_mem anyway (and native's 8kB file buffer is an
	 * eighth of 64kB).  The rows held are written with lz4 where zstd would
	 * be chosen (codec = zstd or auto), whose state (90-250kB with its
	 * dictionary) has no room beside them: zstd's comes once their memory
	 * is free (compspill_store_spill).  With codec = auto and frame_kind =
	 * auto the writer reserved is one of row frames, the kind auto gives a
	 * store unless bytes matter (CompSpillWantStoreRowFrames): at 1MB a
	 * writer of column frames reserves 62kB of the rows' memory, one of row
	 * frames 29kB.  Where auto then wants column frames and their writer
	 * would pass what was reserved, the store keeps row frames, whose codec
	 * is still auto's, frame by frame.
	 */
	CompSpillChooseSizes(&st->set, st->allowed_mem, &block, &write, NULL);
	rows = compspill_store_rows_reserved(st);
	small = (int64) (CompSpillWriterMemory(block, write) + 3 * block) +
		st->allowed_mem / 32;
	if (compspill_store_held_writer(st, rows) <= small)
		st->spill_reserve = compspill_store_held_reserve(st, rows);
	else
		st->spill_reserve = small;
	st->memtupsize = COMPSPILL_STORE_INITIAL_ROWS;
	st->memtuples = MemoryContextAlloc(st->cxt,
									   sizeof(MinimalTuple) * st->memtupsize);
	return st;
}

/*
 * Tell the store how many rows of what width the plan expects it to hold,
 * so that codec = auto can compress from its first frame when they would
 * not fit in the room left, and start from a device's remembered pace, as
 * a sort does (codecchoice.c); and how many times the plan expects them
 * read, which weighs what auto's codecs cost to read back against what
 * they save when written (a nested loop's inner Material: once per outer
 * row).
 */
void
CompSpillStoreExpect(CompSpillStore *st, double rows, int width, double reads)
{
	st->est_rows = Max(rows, 0);
	st->est_width = Max(width, 0);
	st->est_reads = Max(reads, 1.0);
}

/*
 * Start a store whose rows go straight to a new indexed run of an existing
 * spill object, adding to its figures: the output of a sort's final merge
 * when the sort must give random access, in row frames (rows) or column
 * frames.  The spill stays the caller's.
 */
CompSpillStore *
CompSpillStoreBeginOnSpill(CompSpillSpiller *sp, TupleDesc tupdesc,
						   CompSpillStats *stats, int npos, bool rows)
{
	CompSpillStore *st = compspill_store_create(tupdesc, npos);

	st->stats = stats;
	st->sp = sp;
	st->own_sp = false;
	CompSpillRunBeginIndexed(sp, &st->run, rows);
	return st;
}

/*
 * Keep the most the store's contexts hold as its peak, when the store's
 * figures are its own (a sort's store is measured by the sort).
 */
static void
compspill_store_measure(CompSpillStore *st)
{
	int64		held;

	if (st->stats != &st->own_stats)
		return;
	held = MemoryContextMemAllocated(st->cxt, true);
	if (st->sp != NULL && st->own_sp)
		held += CompSpillMallocHeld(st->sp);
	if (held > st->stats->peak_mem)
		st->stats->peak_mem = held;
}

/*
 * Give the read positions other than active that stood at the end a
 * place before the row about to be put, as tuplestore does: they will
 * read it next.
 */
static void
compspill_store_reopen_positions(CompSpillStore *st, int active)
{
	for (int i = 0; i < st->npos; i++)
	{
		if (i != active && st->pos[i].eof_reached)
		{
			st->pos[i].eof_reached = false;
			st->pos[i].current = st->nrows;
		}
	}
}

/*
 * Make an empty row list in a new context under cxt.
 */
static void
compspill_rowlist_init(CompSpillRowList *list, MemoryContext cxt)
{
	list->cxt = AllocSetContextCreate(cxt, "CompSpill store tail",
									  COMPSPILL_DEFAULT_CONTEXT_SIZES);
	list->cap = 256;
	list->rows = MemoryContextAlloc(cxt, sizeof(MinimalTuple) * list->cap);
	list->n = 0;
}

/*
 * Append a copy of tup, made in the list's context, to the list.
 */
static void
compspill_rowlist_add(CompSpillRowList *list, MinimalTuple tup)
{
	MemoryContext oldcxt;

	if (list->n >= list->cap)
	{
		list->cap *= 2;
		list->rows = repalloc_huge(list->rows, sizeof(MinimalTuple) * list->cap);
	}
	oldcxt = MemoryContextSwitchTo(list->cxt);
	list->rows[list->n++] = CompSpillCopyMinimalTuple(tup);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Add a row, rowsize bytes in memory, to the run: as the minimal tuple tup
 * to a run of row frames, as its values to a run of column frames.  Cut a
 * frame once the rows since the last one take a block in memory (the
 * encoder alone would let them take several times that: it counts encoded
 * bytes, and the store keeps a frame's rows in memory, in its tail and in
 * the block read back).  When a frame is cut, every row put so far is in
 * a frame: the tail's rows become the rows of the frame cut last, and the
 * ones kept before are freed.  Return whether a frame was cut.
 */
static bool
compspill_store_put_run(CompSpillStore *st, MinimalTuple tup, Datum *values,
						bool *isnull, Size rowsize)
{
	int64		frames = st->run.nframes;
	CompSpillRowList swap;

	if (st->run.rows)
		CompSpillRunPutTuple(st->sp, tup);
	else
		CompSpillRunPutValues(st->sp, values, isnull);
	st->stats->rows_spilled++;
	st->frame_bytes += rowsize;
	if (st->run.nframes == frames && st->frame_bytes >= st->block_size)
		CompSpillRunCutFrame(st->sp);
	if (st->run.nframes == frames)
		return false;
	st->frame_bytes = 0;

	if (st->tail.cxt != NULL)
	{
		MemoryContextReset(st->prev.cxt);
		st->prev.n = 0;
		swap = st->prev;
		st->prev = st->tail;
		st->tail = swap;
		st->prev_first = st->nframed;
	}
	st->nframed = st->run_base + st->run.nrows;
	st->stats->bytes_written_runs = CompSpillRunWritten(st->sp);

	/* the rows held are written and freed: larger blocks from now on */
	if (st->later_block_size > 0 && st->tuplecxt == NULL)
	{
		CompSpillRunSetBlockSize(st->sp, st->later_block_size);
		st->block_size = st->later_block_size;
		st->later_block_size = 0;
	}
	compspill_store_measure(st);
	return true;
}

/*
 * The rows outgrew memory: create the spill object, write every row held
 * into the store's run, and free them.  Rows after the last frame cut stay
 * in memory as the tail.  The rows held are written in the smallest
 * blocks, in the memory reserved for them (see CompSpillStoreBegin); the
 * frames after them take the size of the spill sizing policy.
 *
 * The run is of row frames where the spill wants them
 * (CompSpillWantStoreRowFrames: with codec = auto, unless room is short or
 * a device's remembered pace says the bytes matter): a store is read back
 * as minimal tuples, which a row frame holds as they are, so a Material
 * rescanned many times copies its rows where column frames would decode
 * and form them again on every pass.  Otherwise column frames, unless
 * only a writer of row frames was reserved and one of column frames would
 * not fit (CompSpillStoreBegin).
 */
static void
compspill_store_spill(CompSpillStore *st)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(st->cxt);
	CompSpillSettings light = CompSpillLightSettings(&st->set);
	Size		block_size;
	Size		extent_size;
	int64		i;
	int64		freed = 0;
	int64		heavy;
	bool		rows;

	CompSpillChooseSizes(&st->set, st->allowed_mem, &block_size, NULL,
						 &extent_size);
	st->sp = CompSpillSpillerCreate(st->tupdesc, st->what, &st->set, st->stats,
									COMPSPILL_MIN_BLOCK_SIZE,
									COMPSPILL_MIN_WRITE_SIZE, extent_size);
	st->own_sp = true;
	st->block_size = COMPSPILL_MIN_BLOCK_SIZE;
	if (block_size > st->block_size)
		st->later_block_size = block_size;
	st->putslot = MakeSingleTupleTableSlot(st->tupdesc, &TTSOpsMinimalTuple);
	if (st->est_rows > 0)
		CompSpillSpillerSetExpectedRows(st->sp, st->est_rows, st->est_width);
	CompSpillSpillerSetExpectedReads(st->sp, st->est_reads);
	rows = CompSpillWantStoreRowFrames(st->sp);
	if (!rows && compspill_store_rows_reserved(st) &&
		compspill_store_held_reserve(st, false) > st->spill_reserve)
		rows = true;
	CompSpillRunBeginIndexed(st->sp, &st->run, rows);
	st->stats->nruns = 1;
	CompSpillSpillerSetPhase(st->sp, COMPSPILL_PHASE_STORING, 0, 0);
	MemoryContextSwitchTo(oldcxt);

	/* rows trimmed away are not in the run; its row 0 is the store's run_base */
	st->run_base = st->mem_trimmed;
	st->nframed = st->prev_first = freed = st->run_base;

	/*
	 * Rows in frames are freed as they go, so memory does not double; zstd's
	 * state, which the store did not reserve, waits until the rows freed
	 * make room for it (lz4 meanwhile, see CompSpillSpillerSetLightCodec).
	 */
	heavy = CompSpillMallocEstimate(&st->set, COMPSPILL_MIN_BLOCK_SIZE) -
		CompSpillMallocEstimate(&light, COMPSPILL_MIN_BLOCK_SIZE);
	CompSpillSpillerSetLightCodec(st->sp, heavy > 0);
	for (i = st->run_base; i < st->nrows; i++)
	{
		MinimalTuple tup = st->memtuples[i - st->mem_base];

		CHECK_FOR_INTERRUPTS();
		if (!st->run.rows)
		{
			ExecStoreMinimalTuple(tup, st->putslot, false);
			slot_getallattrs(st->putslot);
		}
		st->stats->bytes_in += tup->t_len;
		if (compspill_store_put_run(st, tup, st->putslot->tts_values,
									st->putslot->tts_isnull,
									GetMemoryChunkSpace(tup)))
		{
			ExecClearTuple(st->putslot);
			for (int64 j = freed; j < st->nframed; j++)
			{
				MinimalTuple done = st->memtuples[j - st->mem_base];

				heavy -= (int64) GetMemoryChunkSpace(done);
				pfree(done);
			}
			freed = st->nframed;
			if (heavy <= 0)
				CompSpillSpillerSetLightCodec(st->sp, false);
		}
	}
	ExecClearTuple(st->putslot);
	CompSpillSpillerSetLightCodec(st->sp, false);

	/* the rows not in a frame yet are kept; from now on, every row put */
	compspill_rowlist_init(&st->tail, st->cxt);
	compspill_rowlist_init(&st->prev, st->cxt);
	st->prev_first = st->nframed;
	for (i = st->nframed; i < st->nrows; i++)
		compspill_rowlist_add(&st->tail, st->memtuples[i - st->mem_base]);

	compspill_store_measure(st);
	pfree(st->memtuples);
	st->memtuples = NULL;
	st->memtupsize = 0;
	MemoryContextDelete(st->tuplecxt);
	st->tuplecxt = NULL;
	compspill_store_measure(st);
}

/*
 * Grow the full array of the rows in memory; return whether it grew.  It
 * doubles while what is left of work_mem holds that many more rows at
 * their average size so far, and then grows once more, for the last time,
 * to as many rows as it holds, as native tuplestore's array does: a
 * doubling too many would leave the room of rows empty at its end.
 */
static bool
compspill_store_grow(CompSpillStore *st)
{
	int64		rows = st->nrows - st->mem_base;
	int64		per_row;
	int64		room;
	int64		newsize = st->memtupsize * 2;

	per_row = (int64) st->tuplecxt->mem_allocated / Max(rows, 1) +
		(int64) sizeof(MinimalTuple);
	room = st->allowed_mem - st->spill_reserve -
		(int64) st->tuplecxt->mem_allocated -
		(int64) sizeof(MinimalTuple) * st->memtupsize;
	if (st->array_full)
		return false;
	if (newsize > rows + room / Max(per_row, 1))
	{
		/* the last growth */
		st->array_full = true;
		newsize = rows + room / Max(per_row, 1);
		if (newsize <= st->memtupsize)
			return false;
	}
	if (newsize * (int64) sizeof(MinimalTuple) > (int64) MaxAllocHugeSize)
		return false;
	st->memtuples = repalloc_huge(st->memtuples,
								  sizeof(MinimalTuple) * newsize);
	st->memtupsize = newsize;
	return true;
}

/*
 * Add the row in slot to the store.  Read positions other than active
 * that stood at the end will read it next.
 */
void
CompSpillStorePut(CompSpillStore *st, TupleTableSlot *slot, int active)
{
	MemoryContext oldcxt;
	MinimalTuple copy;
	Size		rowsize;

	Assert(st->writing);
	compspill_store_reopen_positions(st, active);

	if (st->memtuples != NULL)
	{
		if (st->nrows - st->mem_base >= st->memtupsize &&
			!compspill_store_grow(st))
			compspill_store_spill(st);
	}
	if (st->memtuples != NULL)
	{
		int64		held;

		oldcxt = MemoryContextSwitchTo(st->tuplecxt);
		st->memtuples[st->nrows++ - st->mem_base] =
			CompSpillCopySlotMinimal(st->form, slot);
		MemoryContextSwitchTo(oldcxt);

		held = (int64) st->tuplecxt->mem_allocated +
			(int64) (sizeof(MinimalTuple) * st->memtupsize);
		if (held > st->stats->peak_mem && st->stats == &st->own_stats)
			st->stats->peak_mem = held;
		if (held + st->spill_reserve > st->allowed_mem)
			compspill_store_spill(st);
		return;
	}

	/* spilled: the tail keeps a copy, the run takes the row */
	{
		bool		shouldfree;
		MinimalTuple tup = ExecFetchSlotMinimalTuple(slot, &shouldfree);

		compspill_rowlist_add(&st->tail, tup);
		st->stats->bytes_in += tup->t_len;
		if (shouldfree)
			pfree(tup);
	}
	copy = st->tail.rows[st->tail.n - 1];
	rowsize = GetMemoryChunkSpace(copy);
	if (!st->run.rows)
		slot_getallattrs(slot);
	st->nrows++;
	(void) compspill_store_put_run(st, copy, slot->tts_values,
								   slot->tts_isnull, rowsize);
}

/*
 * Add the row in slot to a store built on a sort's spill: as a minimal
 * tuple to a run of row frames (formed from the slot's values if it holds
 * none), as its values to a run of column frames.
 */
void
CompSpillStorePutSlot(CompSpillStore *st, TupleTableSlot *slot)
{
	Assert(st->writing && !st->own_sp && st->memtuples == NULL);
	st->nrows++;
	if (st->run.rows)
	{
		bool		shouldfree;
		MinimalTuple tup = ExecFetchSlotMinimalTuple(slot, &shouldfree);

		CompSpillRunPutTuple(st->sp, tup);
		if (shouldfree)
			pfree(tup);
		return;
	}
	slot_getallattrs(slot);
	CompSpillRunPutValues(st->sp, slot->tts_values, slot->tts_isnull);
}

/*
 * No more rows will be put: cut the last frame and free the writer.  Only
 * for a store built on a sort's spill, whose rows are all put before any
 * is read.
 */
void
CompSpillStoreEndWrites(CompSpillStore *st)
{
	Assert(st->writing && !st->own_sp);
	CompSpillRunEnd(st->sp);
	st->nframed = st->run.nrows;
	st->writing = false;
	CompSpillSpillerEndWrites(st->sp);
}

/*
 * Decode the frame holding the given row (which is in a frame) into the
 * block of minimal tuples read back.
 */
static void
compspill_store_load(CompSpillStore *st, int64 row)
{
	CompSpillRun *run = &st->run;
	int64		first;
	int64		end;
	int			n;
	MemoryContext oldcxt;

	Assert(row >= st->run_base && row < st->nframed && run->nframes > 0);

	/* a frame the writer still buffers goes to the file first */
	if (st->writing && row >= st->synced_rows)
	{
		CompSpillRunSync(st->sp);
		st->synced_frames = run->nframes;
		st->synced_rows = st->nframed;
	}

	/* the reader and the block's context: made by the first read */
	if (st->reader == NULL)
	{
		oldcxt = MemoryContextSwitchTo(st->cxt);
		st->reader = CompSpillReaderCreate(st->sp);
		st->blkcxt = AllocSetContextCreate(st->cxt, "CompSpill store block",
										   COMPSPILL_DEFAULT_CONTEXT_SIZES);
		MemoryContextSwitchTo(oldcxt);
	}
	CompSpillReaderSeekRow(st->reader, run,
						   st->writing ? st->synced_frames : run->nframes,
						   row - st->run_base, &first, &end);
	first += st->run_base;
	end += st->run_base;
	n = (int) (end - first);

	MemoryContextReset(st->blkcxt);
	st->blk_first = -1;
	oldcxt = MemoryContextSwitchTo(st->blkcxt);
	st->blk_rows = palloc(sizeof(MinimalTuple) * n);
	for (int i = 0; i < n; i++)
	{
		Datum	   *values;
		bool	   *isnull;

		if (run->rows)
		{
			/* a row frame holds the minimal tuples: a copy each */
			MinimalTuple tup = CompSpillReaderNextTuple(st->reader);

			if (tup == NULL)
				elog(ERROR, "compspill store frame at row %lld ended after %d of %d rows",
					 (long long) first, i, n);
			st->blk_rows[i] = CompSpillCopyMinimalTuple(tup);
			continue;
		}
		if (!CompSpillReaderNext(st->reader, &values, &isnull))
			elog(ERROR, "compspill store frame at row %lld ended after %d of %d rows",
				 (long long) first, i, n);
		st->blk_rows[i] = CompSpillFormMinimal(st->form, values, isnull);
	}
	MemoryContextSwitchTo(oldcxt);
	st->blk_first = first;
	st->blk_nrows = n;
	compspill_store_measure(st);
}

/*
 * Return the given row as a minimal tuple owned by the store, valid until
 * the store is next used.
 */
static MinimalTuple
compspill_store_row(CompSpillStore *st, int64 row)
{
	Assert(row >= 0 && row < st->nrows);

	if (row < st->mem_trimmed)
		elog(ERROR, "compspill store row " INT64_FORMAT " was trimmed away", row);
	if (st->memtuples != NULL)
		return st->memtuples[row - st->mem_base];
	if (row >= st->nframed)
		return st->tail.rows[row - st->nframed];
	if (row >= st->prev_first && row < st->prev_first + st->prev.n)
		return st->prev.rows[row - st->prev_first];
	if (st->blk_first < 0 || row < st->blk_first ||
		row >= st->blk_first + st->blk_nrows)
		compspill_store_load(st, row);
	return st->blk_rows[row - st->blk_first];
}

/*
 * Move read position ptr one row forward or backward and put the row it
 * passes in slot (a minimal-tuple slot), copied when copy is set, else
 * valid until the store is next used; return false, with the slot
 * cleared, when there is no such row.
 */
bool
CompSpillStoreGet(CompSpillStore *st, int ptr, bool forward,
				  TupleTableSlot *slot, bool copy)
{
	int64		row = CompSpillPosStep(&st->pos[ptr], st->nrows, forward);
	MinimalTuple tup;

	if (row < 0)
	{
		ExecClearTuple(slot);
		return false;
	}
	tup = compspill_store_row(st, row);
	if (copy)
		ExecStoreMinimalTuple(CompSpillCopyMinimalTuple(tup), slot, true);
	else
		ExecStoreMinimalTuple(tup, slot, false);
	return true;
}

/*
 * Move read position ptr one row without reading it; return false when
 * there is no such row.
 */
bool
CompSpillStoreAdvance(CompSpillStore *st, int ptr, bool forward)
{
	return CompSpillPosStep(&st->pos[ptr], st->nrows, forward) >= 0;
}

/*
 * Free the rows in memory that no read position can reach any more, those
 * before the earliest position, as tuplestore_trim does: a merge join's
 * Material marks as it goes, so its store then holds only the rows from
 * the mark on and mostly never spills.  Only for stores read forward with
 * mark and restore (no rewind, no backward reads); a spilled store keeps
 * its rows.
 */
void
CompSpillStoreTrim(CompSpillStore *st)
{
	int64		oldest = st->nrows;

	if (st->memtuples == NULL)
		return;
	/* a position at the end is past every row, whatever its count says */
	for (int i = 0; i < st->npos; i++)
		if (!st->pos[i].eof_reached)
			oldest = Min(oldest, st->pos[i].current);
	/* a position may still go back to the row it returned last */
	compspill_store_free_before(st, oldest - 1);
}

/*
 * Free the rows in memory before row oldest (those already freed aside).
 */
static void
compspill_store_free_before(CompSpillStore *st, int64 oldest)
{
	int64		live;

	Assert(st->memtuples != NULL);
	oldest = Max(Min(oldest, st->nrows), st->mem_trimmed);
	for (int64 r = st->mem_trimmed; r < oldest; r++)
	{
		pfree(st->memtuples[r - st->mem_base]);
		st->memtuples[r - st->mem_base] = NULL;
	}
	st->mem_trimmed = oldest;

	/* move the live rows down once the dead ones are half of the array */
	live = st->nrows - st->mem_trimmed;
	if (st->mem_trimmed - st->mem_base > Max(live, 64))
	{
		memmove(st->memtuples, st->memtuples + (st->mem_trimmed - st->mem_base),
				sizeof(MinimalTuple) * live);
		st->mem_base = st->mem_trimmed;
	}
}

/*
 * Forget the rows before row: no read position will go back to them (a
 * recursive union's working table once the next iteration's rows replace
 * it).  Rows in memory are freed; a spilled store gives back to its file
 * the extents that hold only frames before the one holding row, so that
 * the file keeps about the rows still wanted.
 */
void
CompSpillStoreForget(CompSpillStore *st, int64 row)
{
	CompSpillRun *run = &st->run;
	int64		lo;

	if (st->memtuples != NULL)
	{
		compspill_store_free_before(st, row);
		return;
	}
	if (!st->own_sp || run->nframes < 2 || row <= st->run_base)
		return;

	/* the last indexed frame whose first row is at most row */
	lo = CompSpillFrameRefFind(run->index, run->index_n, row - st->run_base);
	if (lo == 0)
		return;

	/* what the writer still buffers goes out before its extents are reused */
	CompSpillRunSync(st->sp);
	st->synced_frames = run->nframes;
	st->synced_rows = st->nframed;
	run->floor = run->index[lo];
	run->floor_frame = lo * run->index_stride;
	CompSpillRunReleaseBefore(st->sp, run, run->index[lo].offset);
}

/*
 * Return the row the next forward read of read position ptr returns (the
 * row count when it is at the end).
 */
int64
CompSpillStoreTell(CompSpillStore *st, int ptr)
{
	return st->pos[ptr].eof_reached ? st->nrows : st->pos[ptr].current;
}

/*
 * Put read position ptr just before the given row, which must not have
 * been forgotten.
 */
void
CompSpillStoreSeek(CompSpillStore *st, int ptr, int64 row)
{
	Assert(row >= 0 && row <= st->nrows);
	st->pos[ptr].current = row;
	st->pos[ptr].eof_reached = false;
}

/* Has read position ptr found the end going forward? */
bool
CompSpillStoreAtEOF(CompSpillStore *st, int ptr)
{
	return st->pos[ptr].eof_reached;
}

/* Move read position ptr back to the first row */
void
CompSpillStoreRewind(CompSpillStore *st, int ptr)
{
	st->pos[ptr].current = 0;
	st->pos[ptr].eof_reached = false;
}

/* Set read position to to where read position from is */
void
CompSpillStoreCopyPos(CompSpillStore *st, int from, int to)
{
	st->pos[to] = st->pos[from];
}

/*
 * Add a read position at the first row and return its number (a scan of a
 * CTE that starts after the store was made: an EvalPlanQual recheck's).
 * Only for stores that still hold their first row.
 */
int
CompSpillStoreAddPos(CompSpillStore *st)
{
	if (st->mem_trimmed > 0 || st->run_base > 0)
		elog(ERROR, "compspill store has forgotten rows a new read position needs");
	st->pos = repalloc(st->pos, sizeof(CompSpillStorePos) * (st->npos + 1));
	st->pos[st->npos].current = 0;
	st->pos[st->npos].eof_reached = false;
	return st->npos++;
}

/* Has the store gone to disk? */
bool
CompSpillStoreSpilled(CompSpillStore *st)
{
	return st->sp != NULL && st->own_sp;
}

/* Return the store's figures */
CompSpillStats *
CompSpillStoreStats(CompSpillStore *st)
{
	compspill_store_measure(st);
	return st->stats;
}

/*
 * Release everything: the temp file if the store made one, its buffers and
 * rows.
 */
void
CompSpillStoreEnd(CompSpillStore *st)
{
	if (st->putslot)
		ExecDropSingleTupleTableSlot(st->putslot);
	if (st->reader)
		CompSpillReaderFree(st->reader);
	if (st->own_sp)
	{
		compspill_store_measure(st);
		CompSpillReportSpill(st->what, st->stats);
		CompSpillSpillerEnd(st->sp);
	}
	MemoryContextDelete(st->cxt);
}
