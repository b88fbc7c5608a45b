/*-------------------------------------------------------------------------
 *
 * explain.c
 *	  EXPLAIN ANALYZE output shared by the CompSpill nodes: the spill
 *	  figures of one operation.
 *
 * Every node that spills through compspill (the sort, the material node,
 * the CTE scan) prints its own first line, the way the native node would
 * (Sort Method, Storage), and then the same spill figures from its CompSpillStats, in
 * text as a few "Spill ..." lines and in the structured formats as
 * properties with the same names in every node.
 *
 * Under Gather and Gather Merge, a sort node prints what each parallel
 * worker did where native prints it: in text a "Worker N:" line after the
 * node's own, in the structured formats a "Workers" group of one object
 * per worker.  EXPLAIN collects those apart, in one buffer per worker, and
 * adds them at the end of the node (after VERBOSE's per-worker rows and
 * BUFFERS' per-worker blocks, which go in the same buffers); the functions
 * that open and close a worker's buffer are explain.c's own, and are
 * written again here, on the same ExplainWorkersState.
 *
 * IDENTIFICATION
 *	  src/nodes/explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"

#include "base/spillstats.h"
#include "nodes/explain.h"
#include "shared/workers.h"

/*
 * Indent a new line of text-format EXPLAIN output to the current level.
 */
void
CompSpillExplainIndent(ExplainState *es)
{
	if (es->str->len == 0 || es->str->data[es->str->len - 1] == '\n')
		appendStringInfoSpaces(es->str, es->indent * 2);
}

/* Round a byte count up to kB */
static inline int64
compspill_kb(int64 bytes)
{
	return (bytes + 1023) / 1024;
}

/*
 * Print the spill figures of an operation that went to disk: codec (and
 * why auto compressed, when it was for lack of room), runs
 * and passes, bytes before and after encoding, frames by codec, the temp
 * file's peak, the time spent in I/O, and where the spill's CPU went:
 * encoding rows, compressing, decompressing and decoding blocks.
 */
void
CompSpillExplainSpill(CompSpillStats *st, ExplainState *es)
{
	int64		in_kb = compspill_kb(st->bytes_in);
	int64		written_kb = compspill_kb(st->bytes_written);
	int64		file_kb = compspill_kb(st->file_size);
	int64		runs_kb = compspill_kb(st->bytes_written_runs);
	double		ratio = st->bytes_written_runs > 0 ?
		(double) st->bytes_in / (double) st->bytes_written_runs : 0.0;
	double		write_ms = INSTR_TIME_GET_MILLISEC(st->write_time);
	double		read_ms = INSTR_TIME_GET_MILLISEC(st->read_time);
	double		encode_ms = INSTR_TIME_GET_MILLISEC(st->encode_time);
	double		compress_ms = INSTR_TIME_GET_MILLISEC(st->compress_time);
	double		decompress_ms = INSTR_TIME_GET_MILLISEC(st->decompress_time);
	double		decode_ms = INSTR_TIME_GET_MILLISEC(st->decode_time);
	const char *codec = CompSpillCodecName(st->codec);
	char	   *reason = NULL;

	/* why codec = auto compressed, when it was for lack of room */
	if (st->room != COMPSPILL_ROOM_NONE)
		reason = psprintf("room: %s", CompSpillRoomName(st->room));

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		CompSpillExplainIndent(es);
		appendStringInfo(es->str, "Spill: codec=%s", codec);
		if (reason)
			appendStringInfo(es->str, " (%s)", reason);
		appendStringInfo(es->str,
						 "  direct I/O=%s  encryption=%s  runs=%d  ",
						 CompSpillDirectIOName(st),
						 CompSpillEncryptionName(st->encrypted), st->nruns);
		if (st->early_merges > 0)
			appendStringInfo(es->str, "early merges=%d  ", st->early_merges);
		appendStringInfo(es->str,
						 "merge passes=%d  rows=" INT64_FORMAT "\n",
						 st->merge_passes, st->rows_spilled);
		CompSpillExplainIndent(es);
		appendStringInfo(es->str,
						 "Spill Bytes: before encoding=" INT64_FORMAT "kB  written=" INT64_FORMAT "kB  ratio=%.2f\n",
						 in_kb, written_kb, ratio);
		CompSpillExplainIndent(es);
		appendStringInfo(es->str,
						 "Spill Frames: none=" INT64_FORMAT "  lz4=" INT64_FORMAT "  zstd=" INT64_FORMAT,
						 st->frames_by_codec[COMPSPILL_CODEC_NONE],
						 st->frames_by_codec[COMPSPILL_CODEC_LZ4],
						 st->frames_by_codec[COMPSPILL_CODEC_ZSTD]);
		/* zstd's dictionary, only where one was used */
		if (st->frames_dict > 0)
			appendStringInfo(es->str, " (dictionary=" INT64_FORMAT ")",
							 st->frames_dict);
		appendStringInfo(es->str,
						 "  stored raw=" INT64_FORMAT "  block size=%zukB\n",
						 st->frames_raw, st->block_size / 1024);
		CompSpillExplainIndent(es);
		appendStringInfo(es->str,
						 "Spill Frame Kinds: row=" INT64_FORMAT "  column=" INT64_FORMAT "\n",
						 st->frames_rows, st->frames_columns);
		CompSpillExplainIndent(es);
		appendStringInfo(es->str,
						 "Spill File: peak=" INT64_FORMAT "kB  run formation wrote=" INT64_FORMAT "kB\n",
						 file_kb, runs_kb);
		CompSpillExplainIndent(es);
		appendStringInfo(es->str,
						 "Spill I/O: write=%.3f ms  read=%.3f ms",
						 write_ms, read_ms);
		/* the pace auto started from, an earlier spill's */
		if (st->device_mbps > 0)
			appendStringInfo(es->str, "  device=%.0f MB/s remembered",
							 st->device_mbps);
		appendStringInfoChar(es->str, '\n');
		CompSpillExplainIndent(es);
		appendStringInfo(es->str,
						 "Spill CPU: encode=%.3f  compress=%.3f  decompress=%.3f  decode=%.3f ms\n",
						 encode_ms, compress_ms, decompress_ms, decode_ms);
		return;
	}

	ExplainPropertyText("Spill Codec", codec, es);
	if (reason)
		ExplainPropertyText("Spill Codec Reason", reason, es);
	ExplainPropertyBool("Direct I/O", st->dio_active, es);
	/* whether it was asked for, and refused (then buffered, with a NOTICE) */
	ExplainPropertyBool("Direct I/O Requested", st->dio_requested, es);
	ExplainPropertyBool("Direct I/O Fallback", st->dio_fallback, es);
	ExplainPropertyText("Spill Encryption",
						CompSpillEncryptionName(st->encrypted), es);
	ExplainPropertyInteger("Spill Runs", NULL, st->nruns, es);
	if (st->early_merges > 0)
		ExplainPropertyInteger("Early Merges", NULL, st->early_merges, es);
	ExplainPropertyInteger("Merge Passes", NULL, st->merge_passes, es);
	ExplainPropertyInteger("Rows Spilled", NULL, st->rows_spilled, es);
	ExplainPropertyInteger("Bytes Before Encoding", "kB", in_kb, es);
	ExplainPropertyInteger("Bytes Written", "kB", written_kb, es);
	ExplainPropertyFloat("Compression Ratio", NULL, ratio, 2, es);
	ExplainPropertyInteger("Frames None", NULL,
						   st->frames_by_codec[COMPSPILL_CODEC_NONE], es);
	ExplainPropertyInteger("Frames LZ4", NULL,
						   st->frames_by_codec[COMPSPILL_CODEC_LZ4], es);
	ExplainPropertyInteger("Frames Zstd", NULL,
						   st->frames_by_codec[COMPSPILL_CODEC_ZSTD], es);
	ExplainPropertyInteger("Frames Zstd Dictionary", NULL, st->frames_dict,
						   es);
	ExplainPropertyInteger("Frames Stored Raw", NULL, st->frames_raw, es);
	ExplainPropertyInteger("Frames Row", NULL, st->frames_rows, es);
	ExplainPropertyInteger("Frames Column", NULL, st->frames_columns, es);
	ExplainPropertyInteger("Block Size", "kB", st->block_size / 1024, es);
	ExplainPropertyInteger("Temp File Peak", "kB", file_kb, es);
	ExplainPropertyInteger("Run Formation Written", "kB", runs_kb, es);
	ExplainPropertyFloat("Write Time", "ms", write_ms, 3, es);
	ExplainPropertyFloat("Read Time", "ms", read_ms, 3, es);
	if (st->device_mbps > 0)
		ExplainPropertyFloat("Device Pace Remembered", "MB/s",
							 st->device_mbps, 0, es);
	ExplainPropertyFloat("Spill Encode Time", "ms", encode_ms, 3, es);
	ExplainPropertyFloat("Spill Compress Time", "ms", compress_ms, 3, es);
	ExplainPropertyFloat("Spill Decompress Time", "ms", decompress_ms, 3, es);
	ExplainPropertyFloat("Spill Decode Time", "ms", decode_ms, 3, es);
}

/*
 * Print where a store kept its rows, the way PostgreSQL 18 prints it for a
 * Material or CTE Scan's tuplestore ("Storage: Memory|Disk  Maximum
 * Storage: NkB": the memory held, or the file's peak once on disk).
 */
static void
compspill_explain_storage(const char *storage, int64 max_kb, ExplainState *es)
{
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		CompSpillExplainIndent(es);
		appendStringInfo(es->str,
						 "Storage: %s  Maximum Storage: " INT64_FORMAT "kB\n",
						 storage, max_kb);
	}
	else
	{
		ExplainPropertyText("Storage", storage, es);
		ExplainPropertyInteger("Maximum Storage", "kB", max_kb, es);
	}
}

/*
 * Print the storage line alone, as every scan of a CTE prints it for the
 * store they share.
 */
void
CompSpillExplainStorage(bool spilled, CompSpillStats *st, ExplainState *es)
{
	compspill_explain_storage(spilled ? "Disk" : "Memory",
							  compspill_kb(spilled ? st->file_size : st->peak_mem),
							  es);
}

/*
 * Print where a store (a Material's, a CTE's) kept its rows and, when they
 * went to disk, the memory it held and the spill figures.  The storage
 * line is the one PostgreSQL 18 prints for these nodes, on every version.
 */
void
CompSpillExplainStore(bool spilled, CompSpillStats *st, ExplainState *es)
{
	int64		mem_kb = compspill_kb(st->peak_mem);

	CompSpillExplainStorage(spilled, st, es);
	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyInteger("Peak Memory Used", "kB", mem_kb, es);
	else if (spilled)
	{
		CompSpillExplainIndent(es);
		appendStringInfo(es->str, "Peak Memory: " INT64_FORMAT "kB\n", mem_kb);
	}
	if (spilled)
		CompSpillExplainSpill(st, es);
}

/*
 * Print what the n native tuplestores of a node (the Material's or CTE's
 * one, the recursive union's two), used when compspill.enabled was off at
 * executor start, held: that the node fell back to them, in the
 * structured formats, and what the native node prints on PostgreSQL 18
 * (no earlier server can say it), the kind of storage of the one that
 * held the most and the sum of all.
 */
void
CompSpillExplainTuplestores(Tuplestorestate *const *stores pg_attribute_unused(),
							int n pg_attribute_unused(), ExplainState *es)
{
#ifdef COMPSPILL_HAS_TUPLESTORE_STATS
	char	   *storage = NULL;
	int64		max_space = -1;
	int64		total = 0;
#endif

	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyBool("Tuplestore Fallback", true, es);
#ifdef COMPSPILL_HAS_TUPLESTORE_STATS
	for (int i = 0; i < n; i++)
	{
		char	   *s;
		int64		space;

		if (stores[i] == NULL)
			return;
		tuplestore_get_stats(stores[i], &s, &space);
		if (space >= max_space)
		{
			storage = s;
			max_space = space;
		}
		total += space;
	}
	compspill_explain_storage(storage, compspill_kb(total), es);
#endif
}

/*
 * Print, in a structured format, the average and peak memory or disk of
 * an incremental sort's groups of one kind.
 */
static void
compspill_explain_group_space(const char *name, int64 total_kb,
							  int64 peak_kb, int64 groups, ExplainState *es)
{
	ExplainOpenGroup("Sort Space", name, true, es);
	ExplainPropertyInteger("Average Sort Space Used", "kB", total_kb / groups,
						   es);
	ExplainPropertyInteger("Peak Sort Space Used", "kB", peak_kb, es);
	ExplainCloseGroup("Sort Space", name, true, es);
}

/*
 * Print the groups of one kind of an incremental sort ("Full-sort",
 * "Pre-sorted") as PostgreSQL prints them: in text one line with the
 * count, the methods and the average and peak memory and disk; in the
 * structured formats a group of the same figures.
 */
void
CompSpillExplainGroups(const char *label, const CompSpillGroupInfo *g,
					   ExplainState *es)
{
	List	   *methods = NIL;
	char	   *name;

	/* the methods in tuplesort's order of them */
	for (int bit = 0; bit < NUM_TUPLESORTMETHODS; bit++)
	{
		if (g->methods & (1 << bit))
			methods = lappend(methods,
							  unconstify(char *, tuplesort_method_name((TuplesortMethod) (1 << bit))));
	}

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		ListCell   *lc;

		CompSpillExplainIndent(es);
		appendStringInfo(es->str, "%s Groups: " INT64_FORMAT "  Sort Method%s",
						 label, g->groups,
						 list_length(methods) > 1 ? "s: " : ": ");
		foreach(lc, methods)
		{
			if (foreach_current_index(lc) > 0)
				appendStringInfoString(es->str, ", ");
			appendStringInfoString(es->str, (char *) lfirst(lc));
		}
		if (g->mem_peak_kb > 0)
			appendStringInfo(es->str,
							 "  Average Memory: " INT64_FORMAT "kB  Peak Memory: " INT64_FORMAT "kB",
							 g->mem_total_kb / g->groups, g->mem_peak_kb);
		if (g->disk_peak_kb > 0)
			appendStringInfo(es->str,
							 "  Average Disk: " INT64_FORMAT "kB  Peak Disk: " INT64_FORMAT "kB",
							 g->disk_total_kb / g->groups, g->disk_peak_kb);
		appendStringInfoChar(es->str, '\n');
		return;
	}

	name = psprintf("%s Groups", label);
	ExplainOpenGroup("Incremental Sort Groups", name, true, es);
	ExplainPropertyInteger("Group Count", NULL, g->groups, es);
	ExplainPropertyList("Sort Methods Used", methods, es);
	if (g->mem_peak_kb > 0)
		compspill_explain_group_space("Sort Space Memory", g->mem_total_kb,
									  g->mem_peak_kb, g->groups, es);
	if (g->disk_peak_kb > 0)
		compspill_explain_group_space("Sort Space Disk", g->disk_total_kb,
									  g->disk_peak_kb, g->groups, es);
	ExplainCloseGroup("Incremental Sort Groups", name, true, es);
}

/*
 * Begin or resume output into the buffer of worker n, as EXPLAIN's own
 * ExplainOpenWorker does: the first time, a "Worker N:" prefix in text or
 * a "Worker Number" field in the other formats.
 */
static void
compspill_explain_open_worker(int n, ExplainState *es)
{
	ExplainWorkersState *wstate = es->workers_state;

	Assert(n >= 0 && n < wstate->num_workers);
	wstate->prev_str = es->str;
	es->str = &wstate->worker_str[n];
	if (!wstate->worker_inited[n])
	{
		initStringInfo(&wstate->worker_str[n]);
		/* one level more: the buffer goes inside a "Workers" group */
		ExplainOpenSetAsideGroup("Worker", NULL, true, 2, es);
		if (es->format != EXPLAIN_FORMAT_TEXT)
			ExplainPropertyInteger("Worker Number", NULL, n, es);
		wstate->worker_inited[n] = true;
	}
	else
		ExplainRestoreGroup(es, 2, &wstate->worker_state_save[n]);

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		if (es->str->len == 0)
		{
			appendStringInfoSpaces(es->str, es->indent * 2);
			appendStringInfo(es->str, "Worker %d:  ", n);
		}
		es->indent++;
	}
}

/*
 * End output into the buffer of worker n, as EXPLAIN's own
 * ExplainCloseWorker does: a text line left unfinished is taken back.
 */
static void
compspill_explain_close_worker(int n, ExplainState *es)
{
	ExplainWorkersState *wstate = es->workers_state;

	ExplainSaveGroup(es, 2, &wstate->worker_state_save[n]);
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		while (es->str->len > 0 && es->str->data[es->str->len - 1] != '\n')
			es->str->data[--(es->str->len)] = '\0';
		es->indent--;
	}
	es->str = wstate->prev_str;
}

/*
 * Print, for each parallel worker that ran the node ps, the figures it
 * published (size bytes read into figures, then print called on them), in
 * the worker's part of the node's output; and if the node ran in workers
 * but some figures cannot be had, say why.  With workers hidden (an
 * invisible Gather of debug_parallel_query), the figures are printed as
 * the node's own, as native does.
 */
void
CompSpillExplainWorkers(PlanState *ps, CompSpillWorkersWatch *watch,
						void *figures, Size size,
						CompSpillExplainWorkerFn print, ExplainState *es)
{
	WorkerInstrumentation *wi = ps->worker_instrument;
	bool		ran = false;
	const char *problem = NULL;

	if (!es->analyze || wi == NULL)
		return;
	for (int n = 0; n < wi->num_workers; n++)
		ran |= wi->instrument[n].nloops > 0;
	if (!ran)
		return;

	switch (CompSpillWorkersCheck(watch))
	{
		case COMPSPILL_WORKERS_OK:
			break;
		case COMPSPILL_WORKERS_NOT_PRELOADED:
			problem = "need compspill in shared_preload_libraries";
			break;
		case COMPSPILL_WORKERS_FULL:
			problem = "some lost, compspill.max_worker_figures is too small";
			break;
		case COMPSPILL_WORKERS_AMBIGUOUS:
			problem = "not known, the statement runs twice at once in this backend";
			break;
	}

	for (int n = 0; n < wi->num_workers; n++)
	{
		if (!CompSpillWorkersFetch(watch, n, figures, size))
			continue;
		if (es->workers_state)
			compspill_explain_open_worker(n, es);
		print(figures, es);
		if (es->workers_state)
			compspill_explain_close_worker(n, es);
	}

	if (problem == NULL)
		return;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		CompSpillExplainIndent(es);
		appendStringInfo(es->str, "Worker Figures: %s\n", problem);
	}
	else
		ExplainPropertyText("Worker Figures", problem, es);
}
