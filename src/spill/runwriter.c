/*-------------------------------------------------------------------------
 *
 * runwriter.c
 *	  Writing runs: rows into blocks or row frames, framed, compressed and
 *	  encrypted in the spill file, one run at a time.
 *
 * Rows go to a CompSpillEncoder (or, as minimal tuples, to the row
 * writer); when it reports full, the block is framed (the frame format is
 * frame.c's).  Without compression the encoder or row writer finishes
 * straight into space reserved in the spill file's write buffer.  With
 * compression it finishes into a scratch buffer and the compressor writes
 * straight into the reserved space behind the header, so compressed bytes
 * are never copied.  The codec of each frame, and the kind of frames of
 * each run, are codecchoice.c's.
 *
 * IDENTIFICATION
 *	  src/spill/runwriter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
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
#include "spill/run_private.h"
#include "spill/spillfile.h"

/* an indexed run's index takes at most this share of work_mem */
#define COMPSPILL_INDEX_SHARE	64

static void compspill_emit_frame(CompSpillSpiller *sp);
static void compspill_time_probe_again(CompSpillSpiller *sp,
									   CompSpillCodec codec, const char *src,
									   Size rawlen, char *payload, Size bound,
									   Size clen, bool dict,
									   instr_time *start, instr_time *end);

/* Free the writer's encoder and scratch buffer; the next run makes them */
void
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

/*
 * Use blocks of about block_size bytes from the next frame of the run
 * being written on; called between frames, when the writer holds no rows.
 * The encoder (or the row writer) is made anew for the new size, and an
 * encoder chooses its encodings again: every frame stands alone.  For a
 * store, whose one run begins with small blocks while the rows it spills
 * still fill the memory.
 */
void
CompSpillRunSetBlockSize(CompSpillSpiller *sp, Size block_size)
{
	MemoryContext oldcxt;

	Assert(sp->run != NULL);
	Assert(sp->run->rows ? sp->rows.nrows == 0 :
		   CompSpillEncoderRows(sp->enc) == 0);
	if (block_size == sp->block_size)
		return;
	sp->block_size = block_size;
	sp->stats->block_size = block_size;
	compspill_free_writer(sp);
	sp->writecxt = AllocSetContextCreate(sp->cxt, "CompSpill writer",
										 COMPSPILL_SMALL_CONTEXT_SIZES);
	if (sp->run->rows)
	{
		CompSpillRowWriterInit(&sp->rows, sp->writecxt, sp->block_size);
		sp->rows_ready = true;
		return;
	}
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
											 COMPSPILL_SMALL_CONTEXT_SIZES);
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
		sp->block_in += tup->t_len;
		sp->block_in_rows++;
		CompSpillEncoderAddMinimal(sp->enc, tup);
		if (unlikely(CompSpillEncoderIsFull(sp->enc)))
			compspill_emit_frame(sp);
	}
}

/*
 * Start writing a new run, of row frames (rows) or column frames, that
 * keeps an index of its frames, so that a reader can go straight to the
 * frame holding a given row.
 */
void
CompSpillRunBeginIndexed(CompSpillSpiller *sp, CompSpillRun *run, bool rows)
{
	compspill_run_begin(sp, run, rows);
	run->index_max = Max(sp->set.mem_limit / COMPSPILL_INDEX_SHARE /
						 (int64) sizeof(CompSpillFrameRef), 64);
	run->index_stride = 1;
	run->index_n = 0;
	run->index_cap = 64;
	run->index = MemoryContextAlloc(sp->cxt,
									sizeof(CompSpillFrameRef) * run->index_cap);
}

/*
 * Note a frame just written of an indexed run, at offset, its first row
 * first_row, in the index when its number falls on the stride; a full
 * index keeps every other entry and doubles its stride.
 */
static void
compspill_index_frame(CompSpillRun *run, off_t offset, int64 first_row)
{
	if (run->nframes % run->index_stride != 0)
		return;
	if (run->index_n >= run->index_max)
	{
		for (int64 i = 0; 2 * i < run->index_n; i++)
			run->index[i] = run->index[2 * i];
		run->index_n = (run->index_n + 1) / 2;
		run->index_stride *= 2;
		if (run->nframes % run->index_stride != 0)
			return;
	}
	if (run->index_n >= run->index_cap)
	{
		run->index_cap = Min(run->index_cap * 2, run->index_max);
		run->index = repalloc_huge(run->index,
								   sizeof(CompSpillFrameRef) * run->index_cap);
	}
	run->index[run->index_n].offset = (int64) offset;
	run->index[run->index_n].first_row = first_row;
	run->index_n++;
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
	{
		/* auto: the first run's writes held none of the sort's reading */
		if (sp->rows_formed == 0 && sp->set.codec == COMPSPILL_CODEC_AUTO)
			CompSpillAutoFirstRunDone(sp->ac);
		sp->rows_formed += sp->run->nrows;
	}
	sp->run = NULL;
}

/*
 * codec = auto probes a codec on a block now and then (autocodec.c), and
 * its first compression in a while runs with cold caches: on lineitem's
 * column frames 1.3x what lz4 costs block after block, 2.6x for zstd,
 * enough to keep auto storing raw on a disk where lz4 pays.  So a probe's
 * block is compressed once more, into the same place and to the same bytes
 * (with the dictionary only if the first used it, so nothing is added to
 * one being filled; clen is what the first gave), and *start and *end are
 * set to time that one.
 */
static void
compspill_time_probe_again(CompSpillSpiller *sp, CompSpillCodec codec,
						   const char *src, Size rawlen, char *payload,
						   Size bound, Size clen, bool dict,
						   instr_time *start, instr_time *end)
{
	bool		dict_again;
	Size		again;

	INSTR_TIME_SET_CURRENT(*start);
	again = CompSpillCompress(sp->comp, codec, src, rawlen, payload, bound,
							  dict ? &dict_again : NULL);
	INSTR_TIME_SET_CURRENT(*end);
	INSTR_TIME_ACCUM_DIFF(sp->stats->compress_time, *end, *start);
	if (again != clen)
		elog(ERROR, "compressing a block of %zu bytes again gave %zu bytes, not %zu",
			 rawlen, again, clen);
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
	uint8		flags = 0;
	bool		dict = false;
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
	if (!rows)
	{
		bool		light = sp->set.codec == COMPSPILL_CODEC_AUTO &&
			compspill_io_is_cheap(sp, codec);

		CompSpillEncoderSetLight(sp->enc, light);
		CompSpillEncoderSetCompressed(sp->enc, codec != COMPSPILL_CODEC_NONE);
		if (!light)
			sp->run->costly = true;
	}
	rawlen = rows ? sp->rows.len : CompSpillEncoderSize(sp->enc);

	/* codec = auto: what the column frame saves over the rows it holds */
	if (!rows && sp->set.codec == COMPSPILL_CODEC_AUTO &&
		sp->block_in_rows == nrows)
		CompSpillAutoRecordColumns(sp->ac, (Size) sp->block_in, rawlen);
	sp->block_in = sp->block_in_rows = 0;
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
		if (sp->set.codec == COMPSPILL_CODEC_AUTO)
			CompSpillAutoRecordStoredRaw(sp->ac, rawlen);
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
								 payload, bound, &dict);
		INSTR_TIME_SET_CURRENT(end);
		INSTR_TIME_ACCUM_DIFF(sp->stats->compress_time, end, start);
		if (sp->set.codec == COMPSPILL_CODEC_AUTO)
		{
			if (clen > 0 && CompSpillAutoProbing(sp->ac))
				compspill_time_probe_again(sp, codec, src, rawlen, payload,
										   bound, clen, dict, &start, &end);
			INSTR_TIME_SUBTRACT(end, start);
			CompSpillAutoRecordCompress(sp->ac, codec, rawlen,
										clen > 0 ? clen : rawlen,
										INSTR_TIME_GET_DOUBLE(end));
		}

		if (clen > 0 && clen < rawlen &&
			sp->set.codec == COMPSPILL_CODEC_AUTO &&
			CompSpillAutoStoresRaw(sp->ac))
		{
			/* auto stores raw: the probe was only timed */
			memcpy(payload, src, rawlen);
			stored_len = rawlen;
			stored_codec = COMPSPILL_CODEC_NONE;
		}
		else if (clen > 0 && clen < rawlen)
		{
			stored_len = clen;
			stored_codec = codec;
			if (dict)
			{
				flags |= COMPSPILL_FRAME_DICT;
				sp->stats->frames_dict++;
			}
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
	hdr.flags = flags | (rows ? COMPSPILL_FRAME_ROWS : 0);
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
		compspill_index_frame(sp->run, offset, sp->run->nrows - nrows);
	sp->run->nframes++;

	sp->max_raw = Max(sp->max_raw, rawlen);
	sp->max_stored = Max(sp->max_stored, stored_len);
	sp->run->max_stored = Max(sp->run->max_stored, stored_len);
	if (stored_codec != COMPSPILL_CODEC_NONE)
	{
		sp->max_compressed_raw = Max(sp->max_compressed_raw, rawlen);
		sp->run->max_compressed_raw = Max(sp->run->max_compressed_raw,
										  rawlen);
	}
	if (stored_codec == COMPSPILL_CODEC_ZSTD)
		sp->zstd_frames = sp->run->zstd_frames = true;

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
