/*-------------------------------------------------------------------------
 *
 * run.c
 *	  Sorted runs as sequences of framed, checksummed blocks in the spill
 *	  file: the run writer and the run reader.
 *
 * A run is a contiguous byte range [start, end) of the operation's spill
 * file holding blocks back to back, with no alignment between them (the
 * spill file coalesces them into large aligned writes).  Each block is a
 * frame:
 *
 *		CompSpillBlockHeader (24 bytes)
 *			uint32	magic		COMPSPILL_BLOCK_MAGIC
 *			uint8	codec		how the payload is stored (CompSpillCodec)
 *			uint8	reserved[3]	zero
 *			uint32	nrows		rows in the block, > 0
 *			uint32	raw_len		size of the encoded block
 *			uint32	stored_len	size of the payload that follows
 *			uint32	crc			CRC-32C of the header (crc zeroed) and payload
 *		payload				stored_len bytes
 *
 * The payload is the block codec's encoding of nrows rows, compressed with
 * the operation's codec, or stored as it is (codec NONE) when compression
 * did not make it smaller.  Headers are in host byte order: the file never
 * leaves the backend that wrote it.
 *
 * Writing: rows go to a CompSpillEncoder; when it reports full, the block
 * is emitted.  Without compression the encoder finishes straight into space
 * reserved in the spill file's write buffer.  With compression it finishes
 * into a scratch buffer and the compressor writes straight into the
 * reserved space behind the header, so compressed bytes are never copied.
 *
 * Reading: the reader keeps an aligned read buffer holding a window of the
 * file, sized by the caller to about one stored block (a merge keeps one
 * reader per input, so their buffers are what bounds the fan-in) and
 * refilled with aligned reads that run ahead as far as it holds.  A block
 * is checked (magic, codec, sizes against the run's known end, CRC) before
 * it is decompressed and decoded, so a corrupt or truncated file yields an
 * ERROR and never a wrong row.  Rows are rebuilt one at a time and handed
 * out as pointers into the decoded row; the per-row path does no
 * allocation and no I/O.
 *
 * Nothing here is specific to sorting: a run is just an ordered sequence
 * of rows, for use by any operation that spills through a CompSpillFile.
 *
 * IDENTIFICATION
 *	  src/run.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_crc32c.h"
#include "utils/memutils.h"

#include "compspill.h"

/* "CSBK" when the bytes are read in order on a little-endian machine */
#define COMPSPILL_BLOCK_MAGIC	0x4B425343

/* The read buffer is never smaller than this */
#define COMPSPILL_MIN_READ_BUFFER	((Size) 16 * 1024)

typedef struct CompSpillBlockHeader
{
	uint32		magic;
	uint8		codec;			/* CompSpillCodec of the payload */
	uint8		reserved[3];
	uint32		nrows;
	uint32		raw_len;		/* encoded size */
	uint32		stored_len;		/* payload size */
	pg_crc32c	crc;			/* over header (crc = 0) and payload */
} CompSpillBlockHeader;

#define COMPSPILL_BLOCK_HEADER_SIZE sizeof(CompSpillBlockHeader)

StaticAssertDecl(sizeof(CompSpillBlockHeader) == 24,
				 "compspill block header must have no padding");

struct CompSpillRunWriter
{
	CompSpillFile *file;
	CompSpillCompressor *comp;
	CompSpillCodec codec;
	CompSpillStats *stats;
	MemoryContext cxt;
	CompSpillEncoder *enc;

	char	   *scratch;		/* encoded block before compression */
	Size		scratch_cap;

	/* the run being written */
	bool		in_run;
	off_t		start;
	off_t		end;
	int64		nrows;
	int64		nblocks;
};

struct CompSpillRunReader
{
	CompSpillFile *file;
	TupleDesc	tupdesc;
	CompSpillCompressor *comp;
	CompSpillStats *stats;
	MemoryContext cxt;			/* owns the reader and all its buffers */
	int			natts;

	/* window of the file: rbuf[0 .. rbuf_len) holds bytes at rbuf_off */
	char	   *rbuf;			/* aligned */
	Size		rbuf_cap;		/* a multiple of COMPSPILL_ALIGN */
	Size		rbuf_len;
	off_t		rbuf_off;		/* aligned */

	char	   *dbuf;			/* decompressed block */
	Size		dbuf_cap;

	/* the run being read */
	off_t		pos;			/* next frame */
	off_t		end;			/* end of the run */

	/* current block, read row by row */
	CompSpillDecodedBlock blk;
};

static void compspill_emit_block(CompSpillRunWriter *w);
static pg_crc32c compspill_block_crc(const CompSpillBlockHeader *hdr,
									 const char *payload);
static const char *compspill_read_window(CompSpillRunReader *r, off_t pos,
										 Size len);
static bool compspill_load_block(CompSpillRunReader *r);
static void compspill_corrupt_block(CompSpillRunReader *r, off_t pos,
									const char *detail) pg_attribute_noreturn();

/* Compute the checksum of a frame: the header with crc zeroed, then payload */
static pg_crc32c
compspill_block_crc(const CompSpillBlockHeader *hdr, const char *payload)
{
	CompSpillBlockHeader h = *hdr;
	pg_crc32c	crc;

	h.crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &h, sizeof(h));
	COMP_CRC32C(crc, payload, hdr->stored_len);
	FIN_CRC32C(crc);

	return crc;
}

/* Create a writer of runs into file */
CompSpillRunWriter *
CompSpillRunWriterCreate(CompSpillFile *file, TupleDesc tupdesc,
						 CompSpillCompressor *comp, CompSpillCodec codec,
						 Size block_size, CompSpillStats *stats)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	CompSpillRunWriter *w;

	Assert(codec == COMPSPILL_CODEC_NONE || comp != NULL);

	cxt = AllocSetContextCreate(CurrentMemoryContext,
								"compspill run writer",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	w = palloc0(sizeof(CompSpillRunWriter));
	w->file = file;
	w->comp = comp;
	w->codec = codec;
	w->stats = stats;
	w->cxt = cxt;
	w->enc = CompSpillEncoderCreate(tupdesc, block_size);

	if (codec != COMPSPILL_CODEC_NONE)
	{
		w->scratch_cap = block_size + block_size / 4;
		w->scratch = palloc_extended(w->scratch_cap, MCXT_ALLOC_HUGE);
	}

	MemoryContextSwitchTo(oldcxt);
	return w;
}

/* Start a new run at the file's current write position */
void
CompSpillRunBegin(CompSpillRunWriter *w)
{
	Assert(!w->in_run);
	Assert(CompSpillEncoderRows(w->enc) == 0);

	w->in_run = true;
	w->start = -1;
	w->end = -1;
	w->nrows = 0;
	w->nblocks = 0;
}

/* Append one row to the current run */
void
CompSpillRunPut(CompSpillRunWriter *w, Datum *values, bool *isnull)
{
	Assert(w->in_run);

	CompSpillEncoderAdd(w->enc, values, isnull);
	w->nrows++;

	if (unlikely(CompSpillEncoderIsFull(w->enc)))
		compspill_emit_block(w);
}

/* Finish the current run and describe where it lies */
void
CompSpillRunEnd(CompSpillRunWriter *w, CompSpillRun *run)
{
	Assert(w->in_run);

	compspill_emit_block(w);

	if (w->nblocks == 0)
	{
		/* an empty run: a zero-length range at the write position */
		w->start = w->end = CompSpillFileCommit(w->file, 0);
	}

	run->start = w->start;
	run->end = w->end;
	run->nrows = w->nrows;
	run->nblocks = w->nblocks;

	w->in_run = false;
}

/*
 * Frame the encoder's pending rows as one block in the spill file's write
 * buffer, compressed if that pays.
 */
static void
compspill_emit_block(CompSpillRunWriter *w)
{
	int			nrows = CompSpillEncoderRows(w->enc);
	Size		rawlen;
	Size		stored_len;
	CompSpillCodec stored_codec;
	CompSpillBlockHeader hdr;
	char	   *frame;
	char	   *payload;
	off_t		offset;

	if (nrows == 0)
		return;

	rawlen = CompSpillEncoderSize(w->enc);
	if (rawlen > PG_UINT32_MAX - COMPSPILL_BLOCK_HEADER_SIZE)
		elog(ERROR, "compspill block of %zu bytes is too large", rawlen);

	if (w->codec == COMPSPILL_CODEC_NONE)
	{
		frame = CompSpillFileReserve(w->file,
									 COMPSPILL_BLOCK_HEADER_SIZE + rawlen);
		payload = frame + COMPSPILL_BLOCK_HEADER_SIZE;
		CompSpillEncoderFinish(w->enc, payload);
		stored_len = rawlen;
		stored_codec = COMPSPILL_CODEC_NONE;
	}
	else
	{
		Size		bound;
		Size		clen;

		if (rawlen > w->scratch_cap)
		{
			pfree(w->scratch);
			w->scratch_cap = Max(rawlen, w->scratch_cap * 2);
			w->scratch = MemoryContextAllocExtended(w->cxt, w->scratch_cap,
													MCXT_ALLOC_HUGE);
		}
		CompSpillEncoderFinish(w->enc, w->scratch);

		/* compress straight into the write buffer, behind the header */
		bound = CompSpillCompressBound(w->comp, rawlen);
		frame = CompSpillFileReserve(w->file,
									 COMPSPILL_BLOCK_HEADER_SIZE +
									 Max(bound, rawlen));
		payload = frame + COMPSPILL_BLOCK_HEADER_SIZE;
		clen = CompSpillCompress(w->comp, w->scratch, rawlen, payload, bound);

		if (clen > 0 && clen < rawlen)
		{
			stored_len = clen;
			stored_codec = w->codec;
		}
		else
		{
			/* compression did not pay: store the block as it is */
			memcpy(payload, w->scratch, rawlen);
			stored_len = rawlen;
			stored_codec = COMPSPILL_CODEC_NONE;
			w->stats->blocks_raw++;
		}
	}

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = COMPSPILL_BLOCK_MAGIC;
	hdr.codec = (uint8) stored_codec;
	hdr.nrows = (uint32) nrows;
	hdr.raw_len = (uint32) rawlen;
	hdr.stored_len = (uint32) stored_len;
	hdr.crc = compspill_block_crc(&hdr, payload);
	memcpy(frame, &hdr, sizeof(hdr));

	offset = CompSpillFileCommit(w->file,
								 COMPSPILL_BLOCK_HEADER_SIZE + stored_len);
	if (w->nblocks == 0)
		w->start = offset;
	w->end = offset + (off_t) (COMPSPILL_BLOCK_HEADER_SIZE + stored_len);
	w->nblocks++;

	w->stats->bytes_raw += rawlen;
	w->stats->blocks_written++;
}

/* Release the writer, its encoder and its buffers */
void
CompSpillRunWriterFree(CompSpillRunWriter *w)
{
	Assert(!w->in_run);
	MemoryContextDelete(w->cxt);
}

/*
 * Estimate the memory held by a run writer and its file's write buffer:
 * the encoder's streams, the scratch buffer and the aligned write buffer.
 */
Size
CompSpillRunWriterMemory(Size block_size, Size write_size)
{
	Size		encoder = 2 * block_size;
	Size		scratch = block_size + block_size / 4;
	Size		wbuf = COMPSPILL_ALIGN_UP(Max(write_size, COMPSPILL_ALIGN)) +
		COMPSPILL_ALIGN;

	return encoder + scratch + wbuf + sizeof(CompSpillRunWriter) + 1024;
}

/*
 * Create a reader of runs from file, in a memory context of its own so that
 * freeing it releases the decoded block's memory as well.
 */
CompSpillRunReader *
CompSpillRunReaderCreate(CompSpillFile *file, TupleDesc tupdesc,
						 CompSpillCompressor *comp, Size read_size,
						 CompSpillStats *stats)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	CompSpillRunReader *r;

	cxt = AllocSetContextCreate(CurrentMemoryContext,
								"compspill run reader",
								ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	r = palloc0(sizeof(CompSpillRunReader));
	r->file = file;
	r->tupdesc = tupdesc;
	r->comp = comp;
	r->stats = stats;
	r->cxt = cxt;
	r->natts = tupdesc->natts;

	r->rbuf_cap = COMPSPILL_ALIGN_UP(Max(read_size,
										 COMPSPILL_MIN_READ_BUFFER));
	r->rbuf = CompSpillAllocAligned(r->rbuf_cap);
	r->rbuf_len = 0;
	r->rbuf_off = 0;

	/* the decompression buffer comes with the first compressed block */
	r->dbuf_cap = 0;
	r->dbuf = NULL;

	CompSpillDecodedBlockInit(&r->blk, tupdesc);
	r->pos = r->end = 0;

	MemoryContextSwitchTo(oldcxt);

	return r;
}

/* Position the reader at the start of run */
void
CompSpillRunReaderOpen(CompSpillRunReader *r, const CompSpillRun *run)
{
	Assert(run->start <= run->end);

	r->pos = run->start;
	r->end = run->end;
	r->blk.nrows = r->blk.row = 0;

	/*
	 * The window may still hold bytes of this file region from an earlier
	 * run; the file's pages are written only once, so they remain good, but
	 * start afresh anyway rather than rely on that.
	 */
	r->rbuf_len = 0;
	r->rbuf_off = 0;
}

/*
 * Return the next row of the run as pointers into the decoded block, valid
 * until the next call; return false at the end of the run.
 */
bool
CompSpillRunReaderNext(CompSpillRunReader *r, Datum **values, bool **isnull)
{
	if (unlikely(!CompSpillDecodeNextRow(&r->blk)))
	{
		if (!compspill_load_block(r) || !CompSpillDecodeNextRow(&r->blk))
			return false;
	}

	*values = r->blk.values;
	*isnull = r->blk.isnull;
	return true;
}

/* Release the reader, its buffers and its decoded block */
void
CompSpillRunReaderFree(CompSpillRunReader *r)
{
	MemoryContextDelete(r->cxt);
}

/*
 * Estimate one reader's memory for blocks of raw_size bytes stored in
 * stored_size bytes, fixed_size of which are fixed-width values: a read
 * buffer holding one frame and the pages it straddles, the decompression
 * buffer when blocks are compressed, the fixed-width arrays rebuilt from
 * their byte planes, and one decoded row.
 */
Size
CompSpillRunReaderMemory(Size raw_size, Size stored_size, Size fixed_size)
{
	Size		rbuf = COMPSPILL_ALIGN_UP(Max(stored_size,
											  COMPSPILL_MIN_READ_BUFFER)) +
		2 * COMPSPILL_ALIGN;
	Size		dbuf = stored_size < raw_size ? raw_size : 0;

	return rbuf + dbuf + fixed_size + sizeof(CompSpillRunReader) + 4096;
}

/*
 * Make the file bytes [pos, pos + len) available in the read window and
 * return a pointer to them.  A refill reads as much as the buffer holds, up
 * to the end of the run, so consecutive small frames come from one read;
 * the read fails if the file ends before pos + len.
 */
static const char *
compspill_read_window(CompSpillRunReader *r, off_t pos, Size len)
{
	off_t		start;
	Size		span;
	Size		keep = 0;
	Size		want;
	Size		need;
	Size		got;

	if (likely(pos >= r->rbuf_off &&
			   (Size) (pos - r->rbuf_off) + len <= r->rbuf_len))
		return r->rbuf + (pos - r->rbuf_off);

	start = (off_t) COMPSPILL_ALIGN_DOWN(pos);
	span = (Size) (pos - start) + len;

	/*
	 * Read as far as the buffer allows but no further than the run's end,
	 * always covering the whole span asked for.
	 */
	want = Max(r->rbuf_cap, COMPSPILL_ALIGN_UP(span));
	if (r->end > start)
		want = Min(want, COMPSPILL_ALIGN_UP((Size) (r->end - start)));
	want = Max(want, COMPSPILL_ALIGN_UP(span));

	/*
	 * If the window's aligned end lies inside the new range, its last pages
	 * can be moved down instead of being read again.
	 */
	if (r->rbuf_len > 0 && (r->rbuf_len % COMPSPILL_ALIGN) == 0 &&
		start >= r->rbuf_off &&
		start < r->rbuf_off + (off_t) r->rbuf_len)
		keep = r->rbuf_len - (Size) (start - r->rbuf_off);

	if (want > r->rbuf_cap)
	{
		/* a frame bigger than the buffer: grow it */
		char	   *newbuf;
		MemoryContext oldcxt = MemoryContextSwitchTo(r->cxt);

		newbuf = CompSpillAllocAligned(want);
		MemoryContextSwitchTo(oldcxt);
		if (keep > 0)
			memcpy(newbuf, r->rbuf + (start - r->rbuf_off), keep);
		CompSpillFreeAligned(r->rbuf);
		r->rbuf = newbuf;
		r->rbuf_cap = want;
	}
	else if (keep > 0 && start > r->rbuf_off)
		memmove(r->rbuf, r->rbuf + (start - r->rbuf_off), keep);

	Assert(keep < want);
	need = span > keep ? span - keep : 0;
	got = CompSpillFileRead(r->file, start + (off_t) keep, r->rbuf + keep,
							want - keep, need);

	r->rbuf_off = start;
	r->rbuf_len = keep + got;

	return r->rbuf + (pos - start);
}

/* Report the block at pos as corrupt, detail saying how */
static void
compspill_corrupt_block(CompSpillRunReader *r, off_t pos, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupt block in compspill temporary file \"%s\" at offset %lld",
					CompSpillFileName(r->file), (long long) pos),
			 errdetail("%s", detail)));
	pg_unreachable();
}

/*
 * Read, check, decompress and decode the next block of the run; return
 * false at the run's end.
 */
static bool
compspill_load_block(CompSpillRunReader *r)
{
	CompSpillBlockHeader hdr;
	const char *frame;
	const char *payload;
	const char *raw;
	const char *detail = NULL;
	pg_crc32c	crc;
	off_t		pos = r->pos;

	if (pos >= r->end)
		return false;

	if ((Size) (r->end - pos) < COMPSPILL_BLOCK_HEADER_SIZE)
		compspill_corrupt_block(r, pos,
								psprintf("Only %lld bytes remain in the run, fewer than a block header.",
										 (long long) (r->end - pos)));

	frame = compspill_read_window(r, pos, COMPSPILL_BLOCK_HEADER_SIZE);
	memcpy(&hdr, frame, sizeof(hdr));

	if (hdr.magic != COMPSPILL_BLOCK_MAGIC)
		compspill_corrupt_block(r, pos,
								psprintf("Bad block magic number %08X, expected %08X.",
										 hdr.magic, COMPSPILL_BLOCK_MAGIC));
	if (hdr.codec != COMPSPILL_CODEC_NONE &&
		hdr.codec != COMPSPILL_CODEC_LZ4 &&
		hdr.codec != COMPSPILL_CODEC_ZSTD)
		compspill_corrupt_block(r, pos,
								psprintf("Unknown codec %u in block header.",
										 hdr.codec));
	if (hdr.nrows == 0 || hdr.nrows > (uint32) PG_INT32_MAX)
		compspill_corrupt_block(r, pos,
								psprintf("Invalid row count %u in block header.",
										 hdr.nrows));
	if (hdr.stored_len > (Size) (r->end - pos) - COMPSPILL_BLOCK_HEADER_SIZE)
		compspill_corrupt_block(r, pos,
								psprintf("Block payload of %u bytes runs past the end of the run at offset %lld.",
										 hdr.stored_len, (long long) r->end));
	if (hdr.codec == COMPSPILL_CODEC_NONE && hdr.raw_len != hdr.stored_len)
		compspill_corrupt_block(r, pos,
								psprintf("Uncompressed block has raw size %u but stored size %u.",
										 hdr.raw_len, hdr.stored_len));

	/* the whole frame; the header may have been read on its own */
	frame = compspill_read_window(r, pos,
								  COMPSPILL_BLOCK_HEADER_SIZE + hdr.stored_len);
	payload = frame + COMPSPILL_BLOCK_HEADER_SIZE;

	crc = compspill_block_crc(&hdr, payload);
	if (!EQ_CRC32C(crc, hdr.crc))
		compspill_corrupt_block(r, pos,
								psprintf("Block checksum mismatch: stored %08X, computed %08X.",
										 hdr.crc, crc));

	if (hdr.codec == COMPSPILL_CODEC_NONE)
		raw = payload;
	else
	{
		if (r->comp == NULL)
			elog(ERROR, "compspill run reader has no decompressor for %s block",
				 CompSpillCodecName((CompSpillCodec) hdr.codec));

		if (hdr.raw_len > r->dbuf_cap)
		{
			/* the header passed its checksum, so the size is genuine */
			if (r->dbuf != NULL)
				pfree(r->dbuf);
			r->dbuf = NULL;
			r->dbuf_cap = Max((Size) hdr.raw_len, r->dbuf_cap * 2);
			r->dbuf = MemoryContextAllocExtended(r->cxt, r->dbuf_cap,
												 MCXT_ALLOC_HUGE);
		}

		if (!CompSpillDecompress(r->comp, (CompSpillCodec) hdr.codec,
								 payload, hdr.stored_len,
								 r->dbuf, hdr.raw_len, &detail))
			compspill_corrupt_block(r, pos, detail ? detail :
									"The block could not be decompressed.");
		raw = r->dbuf;
	}

	detail = NULL;
	if (!CompSpillDecodeBlock(&r->blk, r->tupdesc, raw, hdr.raw_len,
							  (int) hdr.nrows, &detail))
		compspill_corrupt_block(r, pos, detail ? detail :
								"The block could not be decoded.");

	if (r->blk.nrows != (int) hdr.nrows)
		elog(ERROR, "compspill block decoder returned %d rows, expected %u",
			 r->blk.nrows, hdr.nrows);

	r->pos = pos + (off_t) (COMPSPILL_BLOCK_HEADER_SIZE + hdr.stored_len);

	return true;
}
