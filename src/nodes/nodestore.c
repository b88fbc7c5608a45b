/*-------------------------------------------------------------------------
 *
 * nodestore.c
 *	  The rows a CompSpill Material, CTE Scan or Recursive Union keeps, and
 *	  reading them through to their source.
 *
 * Both nodes keep every row they read from their source (a Material's
 * child, a CTE's subplan) in a store, and serve rescans, backward reads,
 * and several read positions (a mark; the other scans of a CTE) from it;
 * a reader that reaches the end of what is stored pulls the source's next
 * row and stores it, so the source runs only as far as some reader needs.
 * The store is compspill's CompSpillStore (store.c), or, when
 * compspill.enabled was off at executor start (a cached plan keeps the
 * node), PostgreSQL's tuplestore; this file hides which, so the nodes hold
 * only what is their own (who owns the store, their source, their read
 * position) and EXPLAIN prints the same lines for both.  A released store
 * leaves its figures behind, for EXPLAIN ANALYZE after a rescan.
 *
 * The Recursive Union keeps its rows in a node store too, compspill's
 * only (on the native path it has two tuplestores of its own), and reads
 * its working table with the store's own calls on ns.store.
 *
 * IDENTIFICATION
 *	  src/nodes/nodestore.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/tuplestore.h"

#include "base/spillstats.h"
#include "nodes/explain.h"
#include "nodes/nodestore.h"
#include "sort/store.h"
#include "sort/tupleform.h"

/*
 * Set up an empty node store: native says whether it will be PostgreSQL's
 * tuplestore, eflags what the node's parent asked for (REWIND, BACKWARD,
 * MARK).
 */
void
CompSpillNodeStoreInit(CompSpillNodeStore *ns, bool native, int eflags)
{
	memset(ns, 0, sizeof(*ns));
	ns->native = native;
	ns->eflags = eflags;
}

/*
 * Make the store, with npos read positions; a native tuplestore's
 * positions after the first are made with extra_eflags.
 */
void
CompSpillNodeStoreMake(CompSpillNodeStore *ns, TupleDesc tupdesc,
					   CompSpillSettings *settings, int npos, int extra_eflags,
					   const char *what)
{
	Assert(!CompSpillNodeStoreMade(ns));
	if (ns->native)
	{
		ns->tstore = tuplestore_begin_heap(true, false, work_mem);
		tuplestore_set_eflags(ns->tstore, ns->eflags);
		for (int i = 1; i < npos; i++)
			if (tuplestore_alloc_read_pointer(ns->tstore, extra_eflags) != i)
				elog(ERROR, "unexpected tuplestore read pointer");
	}
	else
	{
		ns->store = CompSpillStoreBegin(tupdesc, work_mem, settings, npos,
										what);
		CompSpillStoreExpect(ns->store, ns->est_rows, ns->est_width,
							 ns->est_reads);
	}
}

/*
 * Say which plan's rows the store will hold, for what the plan expects of
 * their number and width, and how many times the plan expects them read
 * (see CompSpillStoreExpect).
 */
void
CompSpillNodeStoreExpect(CompSpillNodeStore *ns, Plan *source, double reads)
{
	ns->est_rows = source->plan_rows;
	ns->est_width = source->plan_width;
	ns->est_reads = Max(reads, 1.0);
}

/*
 * Add a read position, at the first row, to a store already made; it gets
 * the number the caller has counted to (the store's positions so far).
 */
void
CompSpillNodeStoreAddPos(CompSpillNodeStore *ns, int ptr, int extra_eflags)
{
	int			got;

	Assert(CompSpillNodeStoreMade(ns));
	if (ns->store)
		got = CompSpillStoreAddPos(ns->store);
	else
	{
		got = tuplestore_alloc_read_pointer(ns->tstore, extra_eflags);
		tuplestore_select_read_pointer(ns->tstore, got);
		tuplestore_rescan(ns->tstore);
	}
	if (got != ptr)
		elog(ERROR, "unexpected compspill store read position %d, expected %d",
			 got, ptr);
}

/* Has read position ptr found the store's end going forward? */
static bool
compspill_ns_at_eof(CompSpillNodeStore *ns, int ptr)
{
	if (ns->store)
		return CompSpillStoreAtEOF(ns->store, ptr);
	tuplestore_select_read_pointer(ns->tstore, ptr);
	return tuplestore_ateof(ns->tstore);
}

/* Move read position ptr one row without reading it */
static bool
compspill_ns_advance(CompSpillNodeStore *ns, int ptr, bool forward)
{
	if (ns->store)
		return CompSpillStoreAdvance(ns->store, ptr, forward);
	tuplestore_select_read_pointer(ns->tstore, ptr);
	return tuplestore_advance(ns->tstore, forward);
}

/* Read the row at read position ptr into slot, a copy if asked */
static bool
compspill_ns_get(CompSpillNodeStore *ns, int ptr, bool forward, bool copy,
				 TupleTableSlot *slot)
{
	if (ns->store)
		return CompSpillStoreGet(ns->store, ptr, forward, slot, copy);
	tuplestore_select_read_pointer(ns->tstore, ptr);
	return tuplestore_gettupleslot(ns->tstore, forward, copy, slot);
}

/*
 * Copy a row of the source into slot, leaving out the columns after the
 * slot's (a CTE plan's resjunk columns): the copy outlives the source's
 * next row.  A virtual row (a CompSpill Sort's from column frames, a
 * projection's) becomes the minimal tuple the slot holds through
 * tupleform.c, as ExecCopySlot would make it, faster.
 */
static void
compspill_ns_copy_row(CompSpillNodeStore *ns, TupleTableSlot *dst,
					  TupleTableSlot *src)
{
	int			natts = dst->tts_tupleDescriptor->natts;

	if (src->tts_tupleDescriptor->natts == natts)
	{
		if (TTS_IS_VIRTUAL(src) && TTS_IS_MINIMALTUPLE(dst))
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(dst->tts_mcxt);
			MinimalTuple tup;

			if (ns->form == NULL)
				ns->form = CompSpillTupleFormCreate(dst->tts_tupleDescriptor);
			slot_getallattrs(src);
			tup = CompSpillFormMinimal(ns->form, src->tts_values,
									   src->tts_isnull);
			MemoryContextSwitchTo(oldcxt);
			ExecStoreMinimalTuple(tup, dst, true);
			return;
		}
		ExecCopySlot(dst, src);
		return;
	}
	ExecClearTuple(dst);
	slot_getsomeattrs(src, natts);
	memcpy(dst->tts_values, src->tts_values, natts * sizeof(Datum));
	memcpy(dst->tts_isnull, src->tts_isnull, natts * sizeof(bool));
	ExecStoreVirtualTuple(dst);
	ExecMaterializeSlot(dst);
}

/*
 * Return, in slot, the next row in the given direction for read position
 * ptr: from the store while the position is inside it, else the source's
 * next row, stored on the way (when there is a store: a node whose parent
 * asked for no rescan, backward read or mark only passes its rows on).
 * copy asks for a row the other read positions cannot move from under the
 * caller.  Returns NULL, or an empty slot, past either end.
 */
TupleTableSlot *
CompSpillNodeStoreNext(CompSpillNodeStore *ns, int ptr, bool forward,
					   bool copy, TupleTableSlot *slot,
					   CompSpillNodeSource source, void *arg)
{
	bool		made = CompSpillNodeStoreMade(ns);
	bool		at_end = !made || compspill_ns_at_eof(ns, ptr);
	TupleTableSlot *srcslot;

	if (!forward && at_end)
	{
		/*
		 * Turning back at the end of the store: the first backward read
		 * would return the row returned last, unless the source had ended;
		 * the row wanted is the one before it.
		 */
		if (!ns->eof_source && !compspill_ns_advance(ns, ptr, false))
			return NULL;
		at_end = false;
	}

	if (!at_end)
	{
		if (compspill_ns_get(ns, ptr, forward, copy, slot))
			return slot;
		if (forward)
			at_end = true;
	}

	if (!at_end || ns->eof_source)
		return ExecClearTuple(slot);

	srcslot = source(arg);
	if (TupIsNull(srcslot))
	{
		ns->eof_source = true;
		return NULL;
	}
	compspill_ns_copy_row(ns, slot, srcslot);
	if (ns->store)
		CompSpillStorePut(ns->store, slot, ptr);
	else if (ns->tstore)
	{
		/* the source may have used the store: select ours again */
		tuplestore_select_read_pointer(ns->tstore, ptr);
		tuplestore_puttupleslot(ns->tstore, slot);
	}
	return slot;
}

/* Move read position ptr back to the first row */
void
CompSpillNodeStoreRewind(CompSpillNodeStore *ns, int ptr)
{
	if (ns->store)
		CompSpillStoreRewind(ns->store, ptr);
	else if (ns->tstore)
	{
		tuplestore_select_read_pointer(ns->tstore, ptr);
		tuplestore_rescan(ns->tstore);
	}
}

/* Put read position to where read position from is (a mark, a restore) */
void
CompSpillNodeStoreCopyPos(CompSpillNodeStore *ns, int from, int to)
{
	if (ns->store)
		CompSpillStoreCopyPos(ns->store, from, to);
	else if (ns->tstore)
		tuplestore_copy_read_pointer(ns->tstore, from, to);
}

/*
 * Free the rows no read position can reach again, when the parent asked
 * for no rewind and no backward read (a merge join marks as it goes).
 */
void
CompSpillNodeStoreTrim(CompSpillNodeStore *ns)
{
	if (ns->store)
	{
		if ((ns->eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD)) == 0)
			CompSpillStoreTrim(ns->store);
	}
	else if (ns->tstore)
		tuplestore_trim(ns->tstore);	/* which looks at the eflags itself */
}

/*
 * Release the store, keeping its figures for EXPLAIN; the source must be
 * read again.
 */
void
CompSpillNodeStoreRelease(CompSpillNodeStore *ns)
{
	if (ns->store)
	{
		ns->have_last = true;
		ns->last_spilled = CompSpillStoreSpilled(ns->store);
		ns->last_stats = *CompSpillStoreStats(ns->store);
		CompSpillStoreEnd(ns->store);
		ns->store = NULL;
	}
	if (ns->tstore)
	{
		tuplestore_end(ns->tstore);
		ns->tstore = NULL;
	}
	ns->eof_source = false;
}

/*
 * EXPLAIN ANALYZE: how the store kept its rows (the storage line), and,
 * when figures is set, the memory it held and its spill figures; for a
 * native tuplestore what native nodes print.
 */
void
CompSpillNodeStoreExplain(CompSpillNodeStore *ns, bool figures,
						  ExplainState *es)
{
	bool		spilled;
	CompSpillStats *stats;

	if (ns->native)
	{
		CompSpillExplainTuplestores(&ns->tstore, 1, es);
		return;
	}
	if (ns->store)
	{
		spilled = CompSpillStoreSpilled(ns->store);
		stats = CompSpillStoreStats(ns->store);
	}
	else if (ns->have_last)
	{
		spilled = ns->last_spilled;
		stats = &ns->last_stats;
	}
	else
		return;

	if (figures)
		CompSpillExplainStore(spilled, stats, es);
	else
		CompSpillExplainStorage(spilled, stats, es);
}
