/*-------------------------------------------------------------------------
 *
 * run.c
 *	  The spill object of one operation, runs as sequences of framed,
 *	  checksummed blocks or row frames, and the readers of runs.
 *
 * The spill object
 * ----------------
 *
 * Everything an operation needs to spill belongs to one CompSpill: the
 * settings captured at executor start, the temp file, the compressor, the
 * writer's encoder and buffers, and a memory context holding all of it, so
 * that what the spill holds can be measured (MemoryContextMemAllocated) and
 * is freed in one go.  The sorter uses it, and any other operation that
 * spills rows can.  One run is written at a time; any number of readers
 * can read finished runs.
 *
 * Words: a *frame* is the unit on disk (header, CRC, payload); a *block*
 * is the block codec's group of rows in column streams, which a column
 * frame carries, compressed or not; a *row frame* carries rows as native
 * sort writes them instead (codec/rowframe.c); a *page* is the 4kB unit
 * of alignment of the spill file; an *extent* is the spill file's unit of
 * space.
 *
 * A run is a stream of the spill file (see spillfile.c) holding frames back
 * to back, with no alignment between them:
 *
 *		CompSpillFrameHeader (24 bytes)
 *			uint32	magic		COMPSPILL_FRAME_MAGIC
 *			uint8	codec		how the payload is stored (CompSpillCodec)
 *			uint8	flags		COMPSPILL_FRAME_ENCRYPTED, COMPSPILL_FRAME_ROWS
 *			uint8	reserved[2]	zero
 *			uint32	nrows		rows in the payload, > 0
 *			uint32	raw_len		size of the payload before compression
 *			uint32	stored_len	size of the payload that follows
 *			uint32	crc			CRC-32C of the header (crc zeroed) and payload;
 *								0, unused, when encrypted: the tag covers both
 *		payload				stored_len bytes
 *
 * The payload is the block codec's encoding of nrows rows, or with the
 * ROWS flag a row frame of nrows rows (all the frames of a run are of one
 * kind, chosen when the run begins: CompSpillWantRowFrames), compressed with
 * the codec chosen for that frame, or stored as it is (codec NONE) when
 * compression did not make it smaller.  Headers are in host byte order: the
 * file never leaves the backend that wrote it.  With compspill.encryption,
 * the payload is then encrypted (see cipher.c) and followed by its 16-byte
 * authentication tag, counted in stored_len; a spill's frames are all
 * encrypted or none are, and a reader refuses a frame whose flag says
 * otherwise.
 *
 * Writing: rows go to a CompSpillEncoder (or, as minimal tuples, to the
 * row writer); when it reports full, the block is framed.  Without
 * compression the encoder or row writer finishes straight into space
 * reserved in the spill file's write buffer.  With compression it
 * finishes into a scratch buffer and the compressor writes straight into
 * the reserved space behind the header, so compressed bytes are never
 * copied.
 *
 * Reading: a reader keeps an aligned read buffer holding a window of the
 * run, sized by the caller to about one stored frame (a merge keeps one
 * reader per input, so their buffers are what bounds the fan-in) and
 * refilled with aligned reads that run ahead as far as it holds.  A frame is
 * checked (magic, codec, sizes against the run's known length, CRC) before
 * it is decompressed and decoded (a row frame: its row lengths and headers
 * checked, CompSpillRowFrameCheck), so a corrupt or truncated file yields
 * an ERROR and never a wrong row.  Rows are rebuilt one at a time and
 * handed out as datums, or as minimal tuples from row frames; the per-row
 * path does no allocation and no I/O.  A reader opened to consume its run
 * gives the run's extents back to the file as it moves past them, so that
 * a merge pass writes into the space its inputs leave.
 *
 * IDENTIFICATION
 *	  src/spill/run.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "port/pg_crc32c.h"
#include "utils/memutils.h"

#include "base/buffer.h"
#include "base/spillstats.h"
#include "codec/autocodec.h"
#include "codec/blockcodec.h"
#include "codec/cipher.h"
#include "codec/compress.h"
#include "codec/rowframe.h"
#include "shared/activity.h"
#include "spill/frame.h"
#include "spill/run.h"
#include "spill/spillfile.h"

/* The read buffer is never smaller than this */
#define COMPSPILL_MIN_READ_BUFFER	((Size) 4 * 1024)

struct CompSpillSpiller
{
	MemoryContext cxt;			/* owns everything of the spill */
	TupleDesc	tupdesc;
	CompSpillSettings set;
	CompSpillStats *stats;
	CompSpillFile *file;
	CompSpillCompressor *comp;
	CompSpillCipher *cipher;	/* NULL unless encrypting */

	/* the writer: encoder and scratch live in writecxt */
	MemoryContext writecxt;
	Size		block_size;
	CompSpillEncoder *enc;
	CompSpillRowWriter rows;	/* row frames' rows, once rows_ready */
	bool		rows_ready;
	char	   *scratch;		/* encoded block before compression */
	Size		scratch_cap;

	/* the run being written, or NULL */
	CompSpillRun *run;

	/* what compspill_activity shows of the spill */
	CompSpillActivity *activity;
	CompSpillPhase phase;
	int			pass;
	int			npasses;

	/* the largest frame written so far: raw and stored bytes */
	Size		max_raw;
	Size		max_stored;
	Size		max_compressed_raw; /* of frames stored compressed */
	Size		max_row;		/* the largest row put in a row frame */
	int64		kind_turn;		/* frame_kind = alternate: runs asked for */

	/* what the frames written so far hold, for sizing readers */
	int64		frames_written; /* frames, all passes */
	int64		raw_written;	/* their encoded bytes */
	int64		rows_formed;	/* rows of the runs of level 0 finished */

	/* codec = auto: the costs measured so far, and the I/O already fed */
	CompSpillAutoCodec ac;
	int64		ac_written;
	instr_time	ac_write_time;
	int64		ac_read;
	instr_time	ac_read_time;

	/*
	 * Spill CPU: when the pending block's first row was put by
	 * CompSpillRunPutMinimal (rows put back to back), so that its encoding
	 * is timed from there; otherwise only the block's finishing is.
	 */
	bool		block_timed;
	instr_time	block_start;

	/* codec = auto: the input the plan expects, for the room it needs */
	double		expected_rows;	/* 0: not known, no room policy */
	int			expected_width;
	int64		room_frames;	/* frames since the last look at the room */
};

struct CompSpillRunReader
{
	CompSpillSpiller *sp;
	MemoryContext cxt;			/* owns the reader and all its buffers */

	/* window of the run: rbuf[0 .. rbuf_len) holds bytes at rbuf_off */
	char	   *rbuf;			/* aligned under direct I/O */
	Size		rbuf_cap;		/* whole pages under direct I/O */
	Size		rbuf_len;
	off_t		rbuf_off;		/* aligned under direct I/O */

	char	   *dbuf;			/* decompressed block */
	Size		dbuf_cap;

	/* the run being read */
	CompSpillRun *run;
	bool		consume;		/* give extents back as they are passed */
	off_t		pos;			/* next frame */
	int64		frame;			/* its number in the run */

	/* bytes of the window below this were decrypted in place */
	off_t		plain_end;

	/* current block, read row by row */
	CompSpillDecodedBlock blk;

	/* current row frame, read row by row; a row deformed for Next */
	CompSpillRowCursor rc;
	Datum	   *values;
	bool	   *isnull;
};

static void compspill_emit_frame(CompSpillSpiller *sp);
static void compspill_room_check(CompSpillSpiller *sp);
static pg_crc32c compspill_frame_crc(const CompSpillFrameHeader *hdr,
									 const char *payload);
static void compspill_grow_window(CompSpillRunReader *r, Size need,
								  Size keep);
static const char *compspill_read_window(CompSpillRunReader *r, off_t pos,
										 Size len);
static bool compspill_load_frame(CompSpillRunReader *r);
pg_noreturn static void compspill_corrupt_frame(CompSpillRunReader *r,
												off_t pos,
												const char *detail);

/* Compute the checksum of a frame: the header with crc zeroed, then payload */
static pg_crc32c
compspill_frame_crc(const CompSpillFrameHeader *hdr, const char *payload)
{
	CompSpillFrameHeader h = *hdr;
	pg_crc32c	crc;

	h.crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &h, sizeof(h));
	COMP_CRC32C(crc, payload, hdr->stored_len);
	FIN_CRC32C(crc);

	return crc;
}

/*
 * Return the largest block a spill with the given settings writes (see
 * CompSpillChooseSizes), for its codec's memory.
 */
static Size
compspill_largest_block(const CompSpillSettings *set)
{
	Size		block;

	CompSpillChooseSizes(set, Max(set->mem_limit, (int64) 64 * 1024), &block,
						 NULL, NULL);
	return block;
}

/*
 * Create the spill object of an operation whose rows are of tupdesc, a node
 * called what in compspill_activity: open its temp file, with extents of
 * extent_size bytes and a write buffer of write_size bytes, and prepare to
 * write blocks of about block_size bytes.  Everything lives in a new memory
 * context under CurrentMemoryContext.
 */
CompSpillSpiller *
CompSpillSpillerCreate(TupleDesc tupdesc, const char *what,
				const CompSpillSettings *set, CompSpillStats *stats,
				Size block_size, Size write_size, Size extent_size)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	CompSpillSpiller *sp;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "CompSpill spill",
								ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	sp = palloc0(sizeof(CompSpillSpiller));
	sp->cxt = cxt;
	sp->tupdesc = tupdesc;
	sp->set = *set;
	sp->stats = stats;
	sp->block_size = block_size;
	sp->comp = CompSpillCompressorCreate(set->level);
	CompSpillCompressorSetMemLimit(sp->comp, compspill_largest_block(set),
								   set->mem_limit);
	if (set->codec == COMPSPILL_CODEC_AUTO)
		CompSpillAutoInit(&sp->ac, set->level);
	stats->queryid = set->queryid;
	stats->codec = set->codec;
	stats->dio_requested = set->dio;
	stats->encrypted = set->encrypt;
	stats->block_size = block_size;
	if (set->encrypt)
		sp->cipher = CompSpillCipherCreate();

	/* the file last, so that nothing above can leak it */
	sp->file = CompSpillFileCreate(set->dio, write_size, extent_size, stats);

	/* freed with the context, like the file's claim on temp space */
	sp->activity = CompSpillActivityBegin(what, stats);

	MemoryContextSwitchTo(oldcxt);
	return sp;
}

/*
 * Say what the spill does now, for compspill_activity: a phase, and for
 * COMPSPILL_PHASE_MERGING the pass and the passes planned.
 */
void
CompSpillSpillerSetPhase(CompSpillSpiller *sp, CompSpillPhase phase, int pass,
						 int npasses)
{
	sp->phase = phase;
	sp->pass = pass;
	sp->npasses = npasses;
	CompSpillActivityPublish(sp->activity, phase, pass, npasses);
}

/* Free the writer's encoder and scratch buffer; the next run makes them */
static void
compspill_free_writer(CompSpillSpiller *sp)
{
	if (sp->writecxt == NULL)
		return;
	MemoryContextDelete(sp->writecxt);
	sp->writecxt = NULL;
	sp->enc = NULL;
	sp->rows_ready = false;
	sp->scratch = NULL;
	sp->scratch_cap = 0;
}

/* Use blocks of about block_size bytes from the next run on */
void
CompSpillSpillerSetBlockSize(CompSpillSpiller *sp, Size block_size)
{
	Assert(sp->run == NULL);
	if (block_size == sp->block_size)
		return;
	sp->block_size = block_size;
	compspill_free_writer(sp);
}

/*
 * Use blocks of about block_size bytes from the next frame of the run of
 * column frames being written on; called between frames, when the encoder
 * holds no rows.  The encoder is made anew for the new size, and chooses
 * its encodings again: every frame stands alone.  For a store, whose one
 * run begins with small blocks while the rows it spills still fill the
 * memory.
 */
void
CompSpillRunSetBlockSize(CompSpillSpiller *sp, Size block_size)
{
	MemoryContext oldcxt;

	Assert(sp->run != NULL && !sp->run->rows);
	Assert(CompSpillEncoderRows(sp->enc) == 0);
	if (block_size == sp->block_size)
		return;
	sp->block_size = block_size;
	sp->stats->block_size = block_size;
	compspill_free_writer(sp);
	sp->writecxt = AllocSetContextCreate(sp->cxt, "CompSpill writer",
										 ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(sp->writecxt);
	sp->enc = CompSpillEncoderCreate(sp->tupdesc, sp->block_size);
	MemoryContextSwitchTo(oldcxt);
	CompSpillEncoderNewRun(sp->enc);
}

/*
 * Start writing a new run of row frames (rows) or column frames, described
 * into *run as it is written.
 */
static void
compspill_run_begin(CompSpillSpiller *sp, CompSpillRun *run, bool rows)
{
	Assert(sp->run == NULL);

	if (sp->writecxt == NULL)
	{
		MemoryContext oldcxt;

		sp->writecxt = AllocSetContextCreate(sp->cxt, "CompSpill writer",
											 ALLOCSET_SMALL_SIZES);
		oldcxt = MemoryContextSwitchTo(sp->writecxt);
		if (!rows)
			sp->enc = CompSpillEncoderCreate(sp->tupdesc, sp->block_size);
		MemoryContextSwitchTo(oldcxt);
	}
	if (!rows && sp->enc == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(sp->writecxt);

		sp->enc = CompSpillEncoderCreate(sp->tupdesc, sp->block_size);
		MemoryContextSwitchTo(oldcxt);
	}
	if (rows && !sp->rows_ready)
	{
		CompSpillRowWriterInit(&sp->rows, sp->writecxt, sp->block_size);
		sp->rows_ready = true;
	}
	Assert(rows ? sp->rows.nrows == 0 : CompSpillEncoderRows(sp->enc) == 0);
	if (!rows)
		CompSpillEncoderNewRun(sp->enc);

	memset(run, 0, sizeof(CompSpillRun));
	run->serial = CompSpillCipherRunSerial();
	run->rows = rows;
	sp->run = run;
	CompSpillFileBeginStream(sp->file, &run->extents);
}

/* Start writing a new run of column frames, described into *run */
void
CompSpillRunBegin(CompSpillSpiller *sp, CompSpillRun *run)
{
	compspill_run_begin(sp, run, false);
}

/*
 * Start writing a new run of row frames, described into *run: its rows are
 * put as minimal tuples (CompSpillRunPutTuple) and read back as such.
 */
void
CompSpillRunBeginRows(CompSpillSpiller *sp, CompSpillRun *run)
{
	compspill_run_begin(sp, run, true);
}

/*
 * Should the next run of a sort be written in row frames?  As
 * compspill.frame_kind says; with auto, only codec = auto ever chooses
 * them, from the costs it has measured (CompSpillAutoRowFrames): the
 * explicit codecs were asked for to save bytes, which column frames do.
 */
bool
CompSpillWantRowFrames(CompSpillSpiller *sp)
{
	switch (sp->set.frame_kind)
	{
		case COMPSPILL_FRAME_KIND_ROW:
			return true;
		case COMPSPILL_FRAME_KIND_COLUMN:
			return false;
		case COMPSPILL_FRAME_KIND_ALTERNATE:
			return (sp->kind_turn++ % 2) == 0;
		case COMPSPILL_FRAME_KIND_AUTO:
			break;
	}
	if (sp->set.codec != COMPSPILL_CODEC_AUTO)
		return false;
	return CompSpillAutoRowFrames(&sp->ac);
}

/* Append one row, a minimal tuple, to the run of row frames being written */
void
CompSpillRunPutTuple(CompSpillSpiller *sp, MinimalTuple tup)
{
	Assert(sp->run != NULL && sp->run->rows);

	sp->run->nrows++;
	if (unlikely(tup->t_len > sp->max_row))
		sp->max_row = tup->t_len;
	if (unlikely(CompSpillRowWriterAdd(&sp->rows, tup)))
		compspill_emit_frame(sp);
}

/*
 * Append one row, a minimal tuple, to the run being written, whatever its
 * kind of frames: a row frame takes it as it is, a block gets its values
 * deformed straight into the column streams.  For a caller that puts the
 * rows of a run back to back, as the sorter does from memory: the encoding
 * of a block is timed (Spill CPU) from its first row on.
 */
void
CompSpillRunPutMinimal(CompSpillSpiller *sp, MinimalTuple tup)
{
	Assert(sp->run != NULL);

	if (unlikely(!sp->block_timed))
	{
		INSTR_TIME_SET_CURRENT(sp->block_start);
		sp->block_timed = true;
	}
	sp->run->nrows++;
	if (sp->run->rows)
	{
		if (unlikely(tup->t_len > sp->max_row))
			sp->max_row = tup->t_len;
		if (unlikely(CompSpillRowWriterAdd(&sp->rows, tup)))
			compspill_emit_frame(sp);
	}
	else
	{
		CompSpillEncoderAddMinimal(sp->enc, tup);
		if (unlikely(CompSpillEncoderIsFull(sp->enc)))
			compspill_emit_frame(sp);
	}
}

/*
 * Start writing a new run that keeps an index of its frames, so that a
 * reader can go straight to the frame holding a given row.
 */
void
CompSpillRunBeginIndexed(CompSpillSpiller *sp, CompSpillRun *run)
{
	CompSpillRunBegin(sp, run);
	run->index_cap = 64;
	run->index = MemoryContextAlloc(sp->cxt,
									sizeof(CompSpillFrameRef) * run->index_cap);
}

/*
 * Make every frame of the run being written so far readable: write out
 * what the file buffers and set the run's length to it.  Rows still in the
 * encoder are not in a frame yet.
 */
void
CompSpillRunSync(CompSpillSpiller *sp)
{
	Assert(sp->run != NULL);
	sp->run->len = CompSpillFileFlush(sp->file);
}

/*
 * Return the bytes of frames the run being written holds so far.
 */
int64
CompSpillRunWritten(CompSpillSpiller *sp)
{
	Assert(sp->run != NULL);
	return (int64) CompSpillFileStreamLength(sp->file);
}

/* Append one row to the run being written */
void
CompSpillRunPutValues(CompSpillSpiller *sp, Datum *values, bool *isnull)
{
	Assert(sp->run != NULL && !sp->run->rows);

	CompSpillEncoderAdd(sp->enc, values, isnull);
	sp->run->nrows++;

	if (unlikely(CompSpillEncoderIsFull(sp->enc)))
		compspill_emit_frame(sp);
}

/*
 * Cut a frame of the rows put since the last one, if any, before the
 * encoder would: a store keeps those rows in memory as well, and bounds
 * them by their size in memory rather than by their encoded size.
 */
void
CompSpillRunCutFrame(CompSpillSpiller *sp)
{
	Assert(sp->run != NULL);
	compspill_emit_frame(sp);
}

/* Finish the run being written */
void
CompSpillRunEnd(CompSpillSpiller *sp)
{
	Assert(sp->run != NULL);

	compspill_emit_frame(sp);
	sp->run->len = CompSpillFileEndStream(sp->file);
	if (sp->run->level == 0)
		sp->rows_formed += sp->run->nrows;
	sp->run = NULL;
}

/*
 * Choose the codec of the next frame: the one asked for, or with codec =
 * auto the one the costs measured so far favour, within the room left
 * (looked at every COMPSPILL_ROOM_CHECK_FRAMES frames).
 */
#define COMPSPILL_ROOM_CHECK_FRAMES	16

static inline CompSpillCodec
compspill_frame_codec(CompSpillSpiller *sp)
{
	if (sp->set.codec == COMPSPILL_CODEC_AUTO)
	{
		if (++sp->room_frames >= COMPSPILL_ROOM_CHECK_FRAMES)
			compspill_room_check(sp);
		return CompSpillAutoNext(&sp->ac);
	}
	return sp->set.codec;
}

/*
 * Tell the spill how many rows of what width the plan expects its input to
 * hold, so that codec = auto can compress from the first run when they
 * would not fit in the room left (compspill_room_check).
 */
void
CompSpillSpillerSetExpectedRows(CompSpillSpiller *sp, double rows, int width)
{
	sp->expected_rows = rows > 0 ? rows : 0;
	sp->expected_width = Max(width, 0);
	if (sp->set.codec == COMPSPILL_CODEC_AUTO)
		compspill_room_check(sp);
}

/*
 * codec = auto: is room short?  The rest of the input, at the size the
 * plan expects (its rows not yet written, at least a tenth of those
 * written when the estimate is passed; at the encoded bytes per row
 * measured so far, or the plan's width and a row header before the first
 * frame), is weighed against what the temp file may still grow by
 * (CompSpillFileRoom: temp_file_limit, compspill.max_temp_space, the file
 * system's free space), less COMPSPILL_ROOM_MARGIN of it and the write
 * buffer.  When it does not fit, the chooser is told the stored fraction
 * that would (CompSpillAutoSetRoom), and EXPLAIN the limit.  Only while
 * runs are formed: a merge pass writes into the space its inputs leave,
 * and keeps the last figure.
 */
#define COMPSPILL_ROOM_MARGIN	0.25
#define COMPSPILL_ROW_HEADER	8

static void
compspill_room_check(CompSpillSpiller *sp)
{
	CompSpillRoomLimit limit;
	double		done;
	double		left;
	double		per_row;
	double		need;
	double		budget;
	int64		room;

	sp->room_frames = 0;
	if (sp->expected_rows <= 0 || (sp->run != NULL && sp->run->level > 0))
		return;

	done = (double) sp->rows_formed + (sp->run ? (double) sp->run->nrows : 0);
	left = Max(sp->expected_rows - done, 0.1 * done);
	if (sp->raw_written > 0 && done > 0)
		per_row = (double) sp->raw_written / done;
	else
		per_row = sp->expected_width + COMPSPILL_ROW_HEADER;
	need = left * per_row;

	room = CompSpillFileRoom(sp->file, &limit);
	if (limit == COMPSPILL_ROOM_NONE)
		return;
	budget = (double) room * (1.0 - COMPSPILL_ROOM_MARGIN) -
		(double) CompSpillFileBufferSize(sp->file);

	if (need <= budget)
	{
		CompSpillAutoSetRoom(&sp->ac, INFINITY);
		return;
	}
	CompSpillAutoSetRoom(&sp->ac, Max(budget, 0.0) / need);
	if (sp->stats->room == COMPSPILL_ROOM_NONE)
		sp->stats->room = limit;
}

/*
 * With codec = auto, is the next frame going out uncompressed because I/O
 * costs next to nothing (the temp files sit in the page cache)?  Then the
 * block codec's sort-aware encodings, which save bytes at a CPU cost, are
 * not worth finding either: a byte written and read back costs less than
 * COMPSPILL_CHEAP_IO_NS nanoseconds.  The encodings shrink lineitem's
 * blocks about threefold and cost about 1.4 ns per byte of rows to find
 * (perf, scale 0.3): they pay from about 2 ns per byte written and read.
 */
#define COMPSPILL_CHEAP_IO_NS	2.0

static bool
compspill_io_is_cheap(CompSpillSpiller *sp, CompSpillCodec codec)
{
	CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS];
	double		write_ns;
	double		read_ns;

	if (codec != COMPSPILL_CODEC_NONE || CompSpillAutoRoomShort(&sp->ac))
		return false;
	CompSpillAutoCurrentCosts(&sp->ac, cost, &write_ns, &read_ns);
	return write_ns + read_ns < COMPSPILL_CHEAP_IO_NS;
}

/*
 * Has I/O been done since the figures *bytes_seen and *time_seen?  If so,
 * set *secs to the time it took.
 */
static inline bool
compspill_io_since(int64 bytes, instr_time time, const int64 *bytes_seen,
				   const instr_time *time_seen, double *secs)
{
	if (bytes <= *bytes_seen)
		return false;
	INSTR_TIME_SUBTRACT(time, *time_seen);
	*secs = INSTR_TIME_GET_DOUBLE(time);
	return true;
}

/*
 * With codec = auto, pass the file I/O done since the last call to the
 * codec chooser, as totals: a write or a read covers many frames.  Called
 * after each frame written and each compressed frame read, so the reads of
 * a merge (an intermediate pass, or a store's reader) weigh the codecs of
 * the frames written after them.
 */
static void
compspill_feed_io(CompSpillSpiller *sp)
{
	CompSpillStats *st = sp->stats;
	double		secs;

	CompSpillAutoSetDirect(&sp->ac, st->dio_active);
	if (compspill_io_since(st->bytes_written, st->write_time,
						   &sp->ac_written, &sp->ac_write_time, &secs))
	{
		CompSpillAutoRecordWrite(&sp->ac, st->bytes_written - sp->ac_written,
								 secs);
		sp->ac_written = st->bytes_written;
		sp->ac_write_time = st->write_time;
	}
	if (compspill_io_since(st->bytes_read, st->read_time,
						   &sp->ac_read, &sp->ac_read_time, &secs))
	{
		CompSpillAutoRecordRead(&sp->ac, st->bytes_read - sp->ac_read, secs);
		sp->ac_read = st->bytes_read;
		sp->ac_read_time = st->read_time;
	}
}

/*
 * Frame the encoder's pending rows in the spill file's write buffer,
 * compressed if that pays.
 */
static void
compspill_emit_frame(CompSpillSpiller *sp)
{
	bool		rows = sp->run->rows;
	int			nrows = rows ? sp->rows.nrows : CompSpillEncoderRows(sp->enc);
	CompSpillCodec codec;
	Size		rawlen;
	Size		stored_len;
	CompSpillCodec stored_codec;
	CompSpillFrameHeader hdr;
	char	   *frame;
	char	   *payload;
	off_t		offset;
	Size		tag = sp->cipher ? COMPSPILL_CIPHER_TAG_SIZE : 0;
	instr_time	start;
	instr_time	end;

	if (nrows == 0)
		return;

	/* Spill CPU: from the block's first row, or from here */
	if (sp->block_timed)
		start = sp->block_start;
	else
		INSTR_TIME_SET_CURRENT(start);
	sp->block_timed = false;

	codec = compspill_frame_codec(sp);
	if (sp->set.codec == COMPSPILL_CODEC_AUTO && !rows)
		CompSpillEncoderSetLight(sp->enc, compspill_io_is_cheap(sp, codec));
	if (!rows)
		CompSpillEncoderSetCompressed(sp->enc, codec != COMPSPILL_CODEC_NONE);
	rawlen = rows ? sp->rows.len : CompSpillEncoderSize(sp->enc);
	if (rawlen > PG_UINT32_MAX - COMPSPILL_FRAME_HEADER_SIZE)
		elog(ERROR, "compspill block of %zu bytes is too large", rawlen);

	if (codec == COMPSPILL_CODEC_NONE)
	{
		frame = CompSpillFileReserve(sp->file,
									 COMPSPILL_FRAME_HEADER_SIZE + rawlen + tag);
		payload = frame + COMPSPILL_FRAME_HEADER_SIZE;
		if (rows)
			CompSpillRowWriterFinish(&sp->rows, payload);
		else
			CompSpillEncoderFinish(sp->enc, payload);
		INSTR_TIME_SET_CURRENT(end);
		INSTR_TIME_ACCUM_DIFF(sp->stats->encode_time, end, start);
		stored_len = rawlen;
		stored_codec = COMPSPILL_CODEC_NONE;
	}
	else
	{
		Size		bound;
		Size		clen;
		const char *src;

		if (rows)
		{
			/* the row writer's buffer is the scratch buffer */
			src = sp->rows.buf;
		}
		else
		{
			CompSpillGrowBuffer(sp->writecxt, &sp->scratch, &sp->scratch_cap,
								rawlen, 0, false);
			CompSpillEncoderFinish(sp->enc, sp->scratch);
			src = sp->scratch;
		}

		/* compress straight into the write buffer, behind the header */
		bound = CompSpillCompressBound(sp->comp, codec, rawlen);
		frame = CompSpillFileReserve(sp->file,
									 COMPSPILL_FRAME_HEADER_SIZE +
									 Max(bound, rawlen) + tag);
		payload = frame + COMPSPILL_FRAME_HEADER_SIZE;

		/* the block is encoded; the compressor's time starts here */
		INSTR_TIME_SET_CURRENT(end);
		INSTR_TIME_ACCUM_DIFF(sp->stats->encode_time, end, start);
		start = end;
		clen = CompSpillCompress(sp->comp, codec, src, rawlen,
								 payload, bound);
		INSTR_TIME_SET_CURRENT(end);
		INSTR_TIME_ACCUM_DIFF(sp->stats->compress_time, end, start);
		if (sp->set.codec == COMPSPILL_CODEC_AUTO)
		{
			INSTR_TIME_SUBTRACT(end, start);
			CompSpillAutoRecordCompress(&sp->ac, codec, rawlen,
										clen > 0 ? clen : rawlen,
										INSTR_TIME_GET_DOUBLE(end));
		}

		if (clen > 0 && clen < rawlen)
		{
			stored_len = clen;
			stored_codec = codec;
		}
		else
		{
			/* compression did not pay: store the block as it is */
			memcpy(payload, src, rawlen);
			stored_len = rawlen;
			stored_codec = COMPSPILL_CODEC_NONE;
			sp->stats->frames_raw++;
		}
		if (rows)
		{
			sp->rows.len = 0;
			sp->rows.nrows = 0;
		}
	}

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = COMPSPILL_FRAME_MAGIC;
	hdr.codec = (uint8) stored_codec;
	hdr.nrows = (uint32) nrows;
	hdr.raw_len = (uint32) rawlen;
	hdr.flags = rows ? COMPSPILL_FRAME_ROWS : 0;
	if (sp->cipher)
	{
		/* the header, crc still zero, is authenticated with the payload */
		hdr.flags |= COMPSPILL_FRAME_ENCRYPTED;
		hdr.stored_len = (uint32) (stored_len + tag);
		CompSpillEncrypt(sp->cipher, sp->run->serial, sp->run->nframes,
						 &hdr, sizeof(hdr), payload, stored_len);
		stored_len += tag;
	}
	hdr.stored_len = (uint32) stored_len;
	/* the tag authenticates an encrypted frame: it needs no checksum */
	if (!sp->cipher)
		hdr.crc = compspill_frame_crc(&hdr, payload);
	memcpy(frame, &hdr, sizeof(hdr));

	offset = CompSpillFileCommit(sp->file,
								 COMPSPILL_FRAME_HEADER_SIZE + stored_len);
	if (sp->run->index != NULL)
	{
		CompSpillRun *run = sp->run;

		if (run->nframes >= run->index_cap)
		{
			run->index_cap *= 2;
			run->index = repalloc_huge(run->index,
									   sizeof(CompSpillFrameRef) * run->index_cap);
		}
		run->index[run->nframes].offset = (int64) offset;
		run->index[run->nframes].first_row = run->nrows - nrows;
	}
	sp->run->nframes++;

	sp->max_raw = Max(sp->max_raw, rawlen);
	sp->max_stored = Max(sp->max_stored, stored_len);
	if (stored_codec != COMPSPILL_CODEC_NONE)
		sp->max_compressed_raw = Max(sp->max_compressed_raw, rawlen);

	sp->stats->bytes_encoded += rawlen;
	sp->stats->frames_written++;
	sp->stats->frames_by_codec[stored_codec]++;
	if (rows)
		sp->stats->frames_rows++;
	else
		sp->stats->frames_columns++;
	sp->frames_written++;
	sp->raw_written += rawlen;

	if (sp->set.codec == COMPSPILL_CODEC_AUTO)
		compspill_feed_io(sp);

	CompSpillActivityPublish(sp->activity, sp->phase, sp->pass, sp->npasses);
}

/* Give back the space of a run that will not be read again */
void
CompSpillRunRelease(CompSpillSpiller *sp, CompSpillRun *run)
{
	CompSpillFileRelease(sp->file, &run->extents, PG_INT64_MAX);
}

/*
 * Give back the extents of a run that lie wholly before the given offset
 * of its stream: its frames there will not be read again.  The run may be
 * the one being written, synced (CompSpillRunSync) past that offset.
 */
void
CompSpillRunReleaseBefore(CompSpillSpiller *sp, CompSpillRun *run, int64 offset)
{
	CompSpillFileRelease(sp->file, &run->extents, (off_t) offset);
}

/*
 * Free the writer's encoder and buffers and the file's write buffer, for a
 * phase that only reads; a later run creates them again.
 */
void
CompSpillSpillerEndWrites(CompSpillSpiller *sp)
{
	Assert(sp->run == NULL);
	compspill_free_writer(sp);
	CompSpillFileEndWrites(sp->file);
}

/* Close and delete the temp file and free everything the spill holds */
void
CompSpillSpillerEnd(CompSpillSpiller *sp)
{
	CompSpillFileClose(sp->file);
	MemoryContextDelete(sp->cxt);
}

/*
 * Return what the spill holds outside its memory contexts: the codec's
 * malloc'd contexts and the cipher's.  Its owner adds it to what it
 * measures.
 */
int64
CompSpillMallocHeld(CompSpillSpiller *sp)
{
	int64		held = (int64) CompSpillCompressorMemory(sp->comp);

	if (sp->cipher != NULL)
		held += (int64) CompSpillCipherMemory();
	return held;
}

/*
 * Return what the spill's codec state may still grow by (see
 * CompSpillCompressorGrowth), for writing and reading when compressing,
 * else for reading only: memory that runs about to be written, or a merge
 * about to read, must leave room for, since it comes with the first frame
 * that needs it.
 */
int64
CompSpillMallocGrowth(CompSpillSpiller *sp, bool compressing)
{
	return (int64) CompSpillCompressorGrowth(sp->comp, sp->set.codec,
											 compressing);
}

/*
 * Estimate what the writer of a spill with the given settings will hold
 * outside its memory contexts, and its lz4 state, while it writes its
 * first run with blocks of about block bytes (0: the largest the settings
 * allow): for a reservation made before the spill exists.  What later
 * runs' larger blocks and reading add (zstd's decompression context) is
 * CompSpillMallocGrowth's, after.
 */
int64
CompSpillMallocEstimate(const CompSpillSettings *set, Size block)
{
	int64		held;

	/* a block may pass its size by a row: count blocks of twice it */
	held = (int64) CompSpillCodecMemoryEstimate(set->codec, set->level,
												compspill_largest_block(set),
												block * 2, set->mem_limit,
												false);

	if (set->encrypt)
		held += (int64) CompSpillCipherMemory();
	return held;
}

/*
 * Return the memory the writer holds now: its encoder and scratch buffer,
 * and the file's write buffer.
 */
int64
CompSpillWriterHeld(CompSpillSpiller *sp)
{
	int64		held = CompSpillFileBufferSize(sp->file);

	if (sp->writecxt != NULL)
		held += MemoryContextMemAllocated(sp->writecxt, true);
	return held;
}

/*
 * The spill sizing policy of every operation that spills (sorts and
 * stores): blocks and writes of the sizes the settings ask for, capped at
 * a sixteenth of work_mem each, at least the smallest sizes, blocks in
 * whole kB and writes in whole pages; and extents of a 64th of work_mem,
 * at most 256kB and at least a page.  A run holds a work_mem of rows,
 * compressed to a third or so: such an extent wastes a few percent at each
 * run's end, keeps what consuming readers have not given back yet small,
 * and keeps the extent maps (a range per extent at worst, after merge
 * passes) a small part of work_mem.  Any of the outputs may be NULL.
 */
void
CompSpillChooseSizes(const CompSpillSettings *set, int64 allowed_mem,
					 Size *block_size, Size *write_size, Size *extent_size)
{
	Size		cap = (Size) (allowed_mem / 16);
	Size		extent;

	if (block_size)
		*block_size = TYPEALIGN(1024, Max(Min(set->block_size, cap),
										  (Size) COMPSPILL_MIN_BLOCK_SIZE));
	if (write_size)
		*write_size = COMPSPILL_ALIGN_UP(Max(Min(set->write_size, cap),
											 (Size) COMPSPILL_MIN_WRITE_SIZE));
	extent = COMPSPILL_ALIGN_DOWN(Min((Size) (allowed_mem / 64),
									  (Size) 256 * 1024));
	if (extent_size)
		*extent_size = Max(extent, COMPSPILL_ALIGN);
}

/*
 * Estimate the memory a writer holds for blocks of block_size and writes
 * of write_size: the encoder's streams, the scratch buffer and the file's
 * aligned write buffer.
 */
Size
CompSpillWriterMemory(Size block_size, Size write_size)
{
	Size		encoder = block_size + block_size / 2;
	Size		scratch = block_size + block_size / 4;
	Size		wbuf = COMPSPILL_ALIGN_UP(Max(write_size, COMPSPILL_ALIGN));

	return encoder + scratch + wbuf + 2048;
}

/*
 * Bound the memory a writer of column frames may reach for blocks of
 * block_size: the encoder's streams double as they grow, and the column
 * encodings keep buffers of their own, about 30kB whatever the block
 * size.  Measured on rows of 2 to 7 columns, 4kB to 256kB blocks, lz4:
 * 44kB at 4kB blocks, 166kB-248kB at 48kB-64kB, 862kB at 256kB, where
 * CompSpillWriterMemory says 22kB, 145kB-190kB and 731kB.  For a
 * reservation that the writer must stay within (the sort's later runs).
 */
Size
CompSpillWriterMemoryBound(Size block_size, Size write_size)
{
	return CompSpillWriterMemory(block_size, write_size) + block_size +
		32 * 1024;
}

/*
 * Work out the average raw and stored size of the frames written so far,
 * all passes.
 */
static void
compspill_average_frame(CompSpillSpiller *sp, Size *raw, Size *stored)
{
	int64		nframes = Max(sp->frames_written, 1);

	*raw = sp->raw_written / nframes;
	*stored = CompSpillFileBytesWritten(sp->file) / nframes;
}

/*
 * Create a reader of runs of the spill, in a memory context of its own so
 * that freeing it releases the decoded block's memory as well.  Its read
 * and decompression buffers are made large enough at once for the largest
 * frames written so far, up to twice the average frame: a merge input
 * then holds from the start about what it will hold at most, which is what
 * the merge measures to size its fan-in.  Larger frames grow the buffers.
 */
CompSpillRunReader *
CompSpillReaderCreate(CompSpillSpiller *sp)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	CompSpillRunReader *r;
	Size		avg_raw;
	Size		avg_stored;
	Size		rbuf;
	Size		dbuf;

	compspill_average_frame(sp, &avg_raw, &avg_stored);

	/*
	 * Buffered, the window holds exactly the largest frame written (its
	 * header included): reads start where the frame does, and a window
	 * that ends inside the next frame keeps those bytes.  Under direct I/O
	 * reads are of whole pages, and a frame straddles at most two more
	 * pages than its own.  The decompression buffer exists only when some
	 * frame was stored compressed, sized to those frames.
	 */
	if (CompSpillFileAligned(sp->file))
	{
		rbuf = Min(sp->max_stored, 2 * avg_stored + COMPSPILL_FRAME_HEADER_SIZE);
		rbuf = COMPSPILL_ALIGN_UP(Max(rbuf, COMPSPILL_MIN_READ_BUFFER)) +
			2 * COMPSPILL_ALIGN;
	}
	else
		rbuf = MAXALIGN(Max(sp->max_stored, avg_stored) +
						COMPSPILL_FRAME_HEADER_SIZE);
	dbuf = Min(sp->max_compressed_raw, 2 * avg_raw);

	/*
	 * A small context: its first block holds the reader and the decoded
	 * block's small arrays; the buffers are chunks of their own.
	 */
	cxt = AllocSetContextCreate(sp->cxt, "CompSpill run reader",
								0, 2048, 8 * 1024);
	oldcxt = MemoryContextSwitchTo(cxt);

	r = palloc0(sizeof(CompSpillRunReader));
	r->sp = sp;
	r->cxt = cxt;

	compspill_grow_window(r, rbuf, 0);
	if (dbuf > 0)
		CompSpillGrowBuffer(cxt, &r->dbuf, &r->dbuf_cap, dbuf, 0, false);

	CompSpillDecodedBlockInit(&r->blk, sp->tupdesc);
	CompSpillRowCursorInit(&r->rc, cxt);

	MemoryContextSwitchTo(oldcxt);

	return r;
}

/*
 * Position the reader at the start of run; with consume, the run's extents
 * are given back as the reader moves past them, and the run cannot be read
 * again.
 */
void
CompSpillReaderOpen(CompSpillRunReader *r, CompSpillRun *run, bool consume)
{
	r->run = run;
	r->consume = consume;
	r->pos = 0;
	r->frame = 0;
	r->blk.nrows = r->blk.row = 0;
	r->rc.left = 0;
	r->rbuf_len = 0;
	r->rbuf_off = 0;
	r->plain_end = 0;
}

/*
 * Position the reader at the given frame of an indexed run, which may still
 * be growing (CompSpillRunSync must have made the frame readable), without
 * consuming it.  The read window is kept when the run is the same: bytes
 * of a run below its length do not change.
 */
void
CompSpillReaderSeek(CompSpillRunReader *r, CompSpillRun *run, int64 frame)
{
	Assert(run->index != NULL && frame >= 0 && frame < run->nframes);
	if (r->run != run)
	{
		r->rbuf_len = 0;
		r->rbuf_off = 0;
		r->plain_end = 0;
	}
	r->run = run;
	r->consume = false;
	r->pos = (off_t) run->index[frame].offset;
	r->frame = frame;
	r->blk.nrows = r->blk.row = 0;
	r->rc.left = 0;
}

/*
 * Return the next row of the run as pointers into the decoded block, valid
 * until the next call; return false at the end of the run.
 */
bool
CompSpillReaderNext(CompSpillRunReader *r, Datum **values, bool **isnull)
{
	if (r->run->rows)
	{
		/* a run of row frames read by a merge of mixed runs: deform */
		MinimalTuple tup = CompSpillReaderNextTuple(r);
		HeapTupleData htup;

		if (tup == NULL)
			return false;
		if (r->values == NULL)
		{
			r->values = MemoryContextAlloc(r->cxt, sizeof(Datum) *
										   Max(r->sp->tupdesc->natts, 1));
			r->isnull = MemoryContextAlloc(r->cxt, sizeof(bool) *
										   Max(r->sp->tupdesc->natts, 1));
		}
		htup.t_len = tup->t_len + MINIMAL_TUPLE_OFFSET;
		htup.t_data = (HeapTupleHeader) ((char *) tup - MINIMAL_TUPLE_OFFSET);
		heap_deform_tuple(&htup, r->sp->tupdesc, r->values, r->isnull);
		*values = r->values;
		*isnull = r->isnull;
		return true;
	}

	if (unlikely(!CompSpillDecodeNextRow(&r->blk)))
	{
		if (!compspill_load_frame(r) || !CompSpillDecodeNextRow(&r->blk))
			return false;
	}

	*values = r->blk.values;
	*isnull = r->blk.isnull;
	return true;
}

/*
 * Return the next row of a run of row frames as a minimal tuple in the
 * reader's buffer, valid until the next call; NULL at the end of the run.
 */
MinimalTuple
CompSpillReaderNextTuple(CompSpillRunReader *r)
{
	MinimalTuple tup;

	Assert(r->run->rows);
	tup = CompSpillRowCursorNext(&r->rc);
	if (unlikely(tup == NULL))
	{
		if (!compspill_load_frame(r))
			return NULL;
		tup = CompSpillRowCursorNext(&r->rc);
	}
	return tup;
}

/* Return the memory the reader holds: its buffers and decoded block */
int64
CompSpillReaderHeld(CompSpillRunReader *r)
{
	return MemoryContextMemAllocated(r->cxt, true);
}

/* Release the reader, its buffers and its decoded block */
void
CompSpillReaderFree(CompSpillRunReader *r)
{
	MemoryContextDelete(r->cxt);
}

/*
 * Estimate one reader's memory for blocks of raw_size bytes stored in
 * stored_size bytes, fixed_size of which are fixed-width values: a read
 * buffer holding one frame and the pages it straddles, the decompression
 * buffer when blocks are compressed, the fixed-width arrays rebuilt from
 * their byte planes, one decoded row and the contexts' own overhead.
 */
static Size
compspill_reader_memory(CompSpillSpiller *sp, Size raw_size, Size stored_size,
						Size fixed_size)
{
	Size		rbuf;
	Size		dbuf = sp->max_compressed_raw > 0 ? raw_size : 0;

	if (CompSpillFileAligned(sp->file))
		rbuf = COMPSPILL_ALIGN_UP(Max(stored_size, COMPSPILL_MIN_READ_BUFFER)) +
			COMPSPILL_ALIGN;
	else
		rbuf = MAXALIGN(Max(sp->max_stored, stored_size) +
						COMPSPILL_FRAME_HEADER_SIZE);
	return rbuf + dbuf + fixed_size + 2048;
}

/*
 * Estimate what one reader of the spill's runs will hold, from the frames
 * written so far: their average raw and stored sizes and rows (the read
 * buffer holds the largest frame already).  A reader of runs of row
 * frames (rows) needs no arrays for the columns, only a buffer for the
 * largest row.
 */
Size
CompSpillReaderEstimate(CompSpillSpiller *sp, bool rows)
{
	int64		nframes = Max(sp->frames_written, 1);
	Size		raw_size;
	Size		stored_size;
	Size		fixed_size = 0;

	compspill_average_frame(sp, &raw_size, &stored_size);

	if (rows)
	{
		return compspill_reader_memory(sp, raw_size, stored_size,
									   MAXALIGN(sp->max_row) + 256);
	}

	/* fixed-width columns are rebuilt from byte planes into their own array */
	for (int a = 0; a < sp->tupdesc->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(sp->tupdesc, a);

		if (attr->attlen > 1)
			fixed_size += attr->attlen;
	}
	fixed_size *= sp->rows_formed / nframes + 1;

	return compspill_reader_memory(sp, raw_size, stored_size, fixed_size);
}

/* Return the size of the largest row put in a row frame so far */
Size
CompSpillMaxRow(CompSpillSpiller *sp)
{
	return MAXALIGN(sp->max_row);
}

/*
 * Return the most memory the extent maps of runs holding bytes bytes in all
 * can take (see CompSpillFileMapReserve).
 */
int64
CompSpillRunMapReserve(CompSpillSpiller *sp, int64 bytes)
{
	return CompSpillFileMapReserve(sp->file, bytes);
}

/*
 * Grow the read buffer so that it holds at least need bytes, a multiple of
 * the page, keeping its first keep bytes, and count only its whole pages as
 * the window's capacity.  Under buffered I/O the buffer is not aligned and
 * its size is not rounded to the page (CompSpillGrowBuffer), but every read
 * into the window must be whole pages: CompSpillFileRead takes nothing
 * else, and only a window of whole pages can carry its last pages over to
 * the next refill.  What the buffer holds beyond its last whole page is
 * allocated, and counted as the reader's memory, all the same.
 */
static void
compspill_grow_window(CompSpillRunReader *r, Size need, Size keep)
{
	bool		aligned = CompSpillFileAligned(r->sp->file);

	Assert(!aligned || (need % COMPSPILL_ALIGN) == 0);
	CompSpillGrowBuffer(r->cxt, &r->rbuf, &r->rbuf_cap, need, keep, aligned);
	if (aligned)
		r->rbuf_cap = COMPSPILL_ALIGN_DOWN(r->rbuf_cap);
	Assert(r->rbuf_cap >= need);
}

/* The length of a read covering len bytes: whole pages under direct I/O */
static inline Size
compspill_io_len(bool aligned, Size len)
{
	return aligned ? COMPSPILL_ALIGN_UP(len) : len;
}

/*
 * Make the file bytes [pos, pos + len) available in the read window and
 * return a pointer to them.  A refill reads as much as the buffer holds, up
 * to the end of the run, so consecutive small frames come from one read;
 * the whole pages at the window's end that the new range starts in are
 * moved down rather than read again, so that each page of a run read
 * forward is read once; the read fails if the file ends before pos + len.
 */
static const char *
compspill_read_window(CompSpillRunReader *r, off_t pos, Size len)
{
	off_t		start;
	off_t		whole;
	Size		span;
	Size		keep = 0;
	Size		want;
	Size		need;
	Size		got;
	bool		aligned;

	/*
	 * Frames below plain_end were decrypted in place: going back to one
	 * reads it from the file again.
	 */
	if (unlikely(pos < r->plain_end))
	{
		r->rbuf_len = 0;
		r->rbuf_off = 0;
		r->plain_end = 0;
	}

	if (likely(pos >= r->rbuf_off &&
			   (Size) (pos - r->rbuf_off) + len <= r->rbuf_len))
		return r->rbuf + (pos - r->rbuf_off);

	/*
	 * Under direct I/O, reads are of whole pages; buffered, they start
	 * where the bytes asked for do and end where the buffer or the run
	 * does, so that no byte is read twice.
	 */
	aligned = CompSpillFileAligned(r->sp->file);
	start = aligned ? (off_t) COMPSPILL_ALIGN_DOWN(pos) : pos;
	span = (Size) (pos - start) + len;

	/*
	 * Read as far as the buffer allows but no further than the run's end,
	 * always covering the whole span asked for.
	 */
	want = Max(r->rbuf_cap, compspill_io_len(aligned, span));
	if (r->run->len > start)
		want = Min(want, compspill_io_len(aligned,
										  (Size) (r->run->len - start)));
	want = Max(want, compspill_io_len(aligned, span));

	/*
	 * If the new range starts inside the window, what it holds from there
	 * can be moved down instead of being read again: all of it buffered
	 * (it lies below the run's length, so it is final), its whole pages
	 * under direct I/O (a window that ends inside a page, at the end of a
	 * run still being written, keeps those only).
	 */
	whole = r->rbuf_off + (off_t) (aligned ? COMPSPILL_ALIGN_DOWN(r->rbuf_len) :
								   r->rbuf_len);
	if (start >= r->rbuf_off && start < whole)
		keep = (Size) (whole - start);

	if (keep > 0 && start > r->rbuf_off)
		memmove(r->rbuf, r->rbuf + (start - r->rbuf_off), keep);

	/* a frame bigger than the buffer: grow it */
	compspill_grow_window(r, want, keep);

	Assert(keep < want);
	need = span > keep ? span - keep : 0;
	got = CompSpillFileRead(r->sp->file, &r->run->extents,
							start + (off_t) keep, r->rbuf + keep,
							want - keep, need);

	/*
	 * Past the run's end lies zero padding, or, in a run still being
	 * written, bytes that may not be final: they are not kept.
	 */
	r->rbuf_off = start;
	r->rbuf_len = Min(keep + got, (Size) Max(r->run->len - start, 0));

	/* nothing below the window is read again */
	if (r->consume)
		CompSpillFileRelease(r->sp->file, &r->run->extents, start);

	return r->rbuf + (pos - start);
}

/* Report the block at pos as corrupt, detail saying how */
static void
compspill_corrupt_frame(CompSpillRunReader *r, off_t pos, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupt block in compspill temporary file \"%s\" at offset %lld",
					CompSpillFileName(r->sp->file), (long long) pos),
			 errdetail("%s", detail)));
	pg_unreachable();
}

/*
 * Read, check, decompress and decode the next block of the run; return
 * false at the run's end.
 */
static bool
compspill_load_frame(CompSpillRunReader *r)
{
	CompSpillFrameHeader hdr;
	const char *frame;
	char	   *payload;
	const char *raw;
	const char *detail = NULL;
	pg_crc32c	crc;
	off_t		pos = r->pos;
	Size		payload_len;
	instr_time	start;
	instr_time	end;

	if (pos >= r->run->len)
	{
		if (r->consume)
			CompSpillFileRelease(r->sp->file, &r->run->extents, PG_INT64_MAX);
		return false;
	}

	if ((Size) (r->run->len - pos) < COMPSPILL_FRAME_HEADER_SIZE)
		compspill_corrupt_frame(r, pos,
								psprintf("Only %lld bytes remain in the run, fewer than a frame header.",
										 (long long) (r->run->len - pos)));

	frame = compspill_read_window(r, pos, COMPSPILL_FRAME_HEADER_SIZE);
	memcpy(&hdr, frame, sizeof(hdr));

	if (hdr.magic != COMPSPILL_FRAME_MAGIC)
		compspill_corrupt_frame(r, pos,
								psprintf("Bad block magic number %08X, expected %08X.",
										 hdr.magic, COMPSPILL_FRAME_MAGIC));
	if (hdr.codec != COMPSPILL_CODEC_NONE &&
		hdr.codec != COMPSPILL_CODEC_LZ4 &&
		hdr.codec != COMPSPILL_CODEC_ZSTD)
		compspill_corrupt_frame(r, pos,
								psprintf("Unknown codec %u in frame header.",
										 hdr.codec));
	if (hdr.nrows == 0 || hdr.nrows > (uint32) PG_INT32_MAX)
		compspill_corrupt_frame(r, pos,
								psprintf("Invalid row count %u in frame header.",
										 hdr.nrows));
	if (hdr.stored_len > (Size) (r->run->len - pos) - COMPSPILL_FRAME_HEADER_SIZE)
		compspill_corrupt_frame(r, pos,
								psprintf("Block payload of %u bytes runs past the end of the run at offset %lld.",
										 hdr.stored_len, (long long) r->run->len));
	if (((hdr.flags & COMPSPILL_FRAME_ENCRYPTED) != 0) != (r->sp->cipher != NULL) ||
		((hdr.flags & COMPSPILL_FRAME_ROWS) != 0) != r->run->rows ||
		(hdr.flags & ~(COMPSPILL_FRAME_ENCRYPTED | COMPSPILL_FRAME_ROWS)) != 0)
		compspill_corrupt_frame(r, pos,
								psprintf("Frame flags %02X do not match the run, which is %s and of %s frames.",
										 hdr.flags,
										 r->sp->cipher ? "encrypted" : "not encrypted",
										 r->run->rows ? "row" : "column"));
	payload_len = hdr.stored_len;
	if (r->sp->cipher)
	{
		if (payload_len < COMPSPILL_CIPHER_TAG_SIZE)
			compspill_corrupt_frame(r, pos,
									psprintf("Encrypted payload of %u bytes is shorter than its tag.",
											 hdr.stored_len));
		payload_len -= COMPSPILL_CIPHER_TAG_SIZE;
	}
	if (hdr.codec == COMPSPILL_CODEC_NONE && hdr.raw_len != payload_len)
		compspill_corrupt_frame(r, pos,
								psprintf("Uncompressed block has raw size %u but stored size %zu.",
										 hdr.raw_len, payload_len));

	/* the whole frame; the header may have been read on its own */
	frame = compspill_read_window(r, pos,
								  COMPSPILL_FRAME_HEADER_SIZE + hdr.stored_len);
	payload = (char *) frame + COMPSPILL_FRAME_HEADER_SIZE;

	if (r->sp->cipher == NULL)
	{
		crc = compspill_frame_crc(&hdr, payload);
		if (!EQ_CRC32C(crc, hdr.crc))
			compspill_corrupt_frame(r, pos,
									psprintf("Block checksum mismatch: stored %08X, computed %08X.",
											 hdr.crc, crc));
	}
	else
	{
		/*
		 * The tag covers the header (crc field zeroed, which the writer
		 * leaves so, unused) and the payload: no checksum over either.
		 */
		CompSpillFrameHeader aad = hdr;

		/* in place: the window's copy of this frame is plaintext from now */
		aad.crc = 0;
		r->plain_end = pos + (off_t) (COMPSPILL_FRAME_HEADER_SIZE +
									  hdr.stored_len);
		if (!CompSpillDecrypt(r->sp->cipher, r->run->serial, r->frame,
							  &aad, sizeof(aad), payload, hdr.stored_len))
			compspill_corrupt_frame(r, pos,
									psprintf("Frame %lld of the run failed authentication: it is not the block written there.",
											 (long long) r->frame));
	}

	if (hdr.codec == COMPSPILL_CODEC_NONE)
		raw = payload;
	else
	{
		/* the header passed its checksum, so the size is genuine */
		CompSpillGrowBuffer(r->cxt, &r->dbuf, &r->dbuf_cap, hdr.raw_len, 0,
							false);

		INSTR_TIME_SET_CURRENT(start);
		if (!CompSpillDecompress(r->sp->comp, (CompSpillCodec) hdr.codec,
								 payload, payload_len,
								 r->dbuf, hdr.raw_len, &detail))
			compspill_corrupt_frame(r, pos, detail ? detail :
									"The block could not be decompressed.");
		INSTR_TIME_SET_CURRENT(end);
		INSTR_TIME_ACCUM_DIFF(r->sp->stats->decompress_time, end, start);
		if (r->sp->set.codec == COMPSPILL_CODEC_AUTO)
		{
			INSTR_TIME_SUBTRACT(end, start);
			CompSpillAutoRecordDecompress(&r->sp->ac,
										  (CompSpillCodec) hdr.codec,
										  hdr.raw_len,
										  INSTR_TIME_GET_DOUBLE(end));
			compspill_feed_io(r->sp);
		}
		raw = r->dbuf;
	}

	detail = NULL;
	INSTR_TIME_SET_CURRENT(start);
	if (r->run->rows)
	{
		if (!CompSpillRowFrameCheck(&r->rc, r->sp->tupdesc, raw, hdr.raw_len,
									(int) hdr.nrows, &detail))
			compspill_corrupt_frame(r, pos, detail ? detail :
									"The row frame could not be read.");
	}
	else if (!CompSpillDecodeBlock(&r->blk, r->sp->tupdesc, raw, hdr.raw_len,
								   (int) hdr.nrows, &detail))
		compspill_corrupt_frame(r, pos, detail ? detail :
								"The block could not be decoded.");

	if (!r->run->rows && r->blk.nrows != (int) hdr.nrows)
		elog(ERROR, "compspill block decoder returned %d rows, expected %u",
			 r->blk.nrows, hdr.nrows);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_ACCUM_DIFF(r->sp->stats->decode_time, end, start);

	r->pos = pos + (off_t) (COMPSPILL_FRAME_HEADER_SIZE + hdr.stored_len);
	r->frame++;

	return true;
}
