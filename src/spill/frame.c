/*-------------------------------------------------------------------------
 *
 * frame.c
 *	  The frame, the unit on disk: its checksum, and the checks,
 *	  decryption, decompression and decoding of a frame read back.
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
 *			uint8	flags		COMPSPILL_FRAME_ENCRYPTED, COMPSPILL_FRAME_ROWS,
 *								COMPSPILL_FRAME_DICT
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
 * The writer frames blocks (runwriter.c's compspill_emit_frame); a reader
 * (runreader.c) has each frame read back here: it is checked (magic,
 * codec, sizes against the run's known length, CRC) before it is
 * decompressed and decoded (a row frame: its row lengths and headers
 * checked, CompSpillRowFrameCheck), so a corrupt or truncated file yields
 * an ERROR and never a wrong row.
 *
 * IDENTIFICATION
 *	  src/spill/frame.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_crc32c.h"

#include "base/buffer.h"
#include "base/crc32c.h"
#include "base/spillstats.h"
#include "codec/autocodec.h"
#include "codec/blockcodec.h"
#include "codec/cipher.h"
#include "codec/compress.h"
#include "codec/rowframe.h"
#include "spill/frame.h"
#include "spill/run.h"
#include "spill/run_private.h"
#include "spill/spillfile.h"

pg_noreturn static void compspill_corrupt_frame(CompSpillRunReader *r,
												off_t pos,
												const char *detail);

/* Compute the checksum of a frame: the header with crc zeroed, then payload */
pg_crc32c
compspill_frame_crc(const CompSpillFrameHeader *hdr, const char *payload)
{
	CompSpillFrameHeader h = *hdr;
	pg_crc32c	crc;

	h.crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &h, sizeof(h));
	crc = CompSpillCrc32c(crc, payload, hdr->stored_len);
	FIN_CRC32C(crc);

	return crc;
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
 * Read the header of the frame at pos of the reader's run into *hdr, and
 * check it against the run: its magic number, codec, row count, flags and
 * length; a header that fails is reported as a corrupt block.
 */
void
compspill_read_frame_header(CompSpillRunReader *r, off_t pos,
							CompSpillFrameHeader *hdr_out)
{
	CompSpillFrameHeader hdr;
	const char *frame;

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
		(hdr.flags & ~(COMPSPILL_FRAME_ENCRYPTED | COMPSPILL_FRAME_ROWS |
					   COMPSPILL_FRAME_DICT)) != 0 ||
		((hdr.flags & COMPSPILL_FRAME_DICT) != 0 &&
		 hdr.codec != COMPSPILL_CODEC_ZSTD))
		compspill_corrupt_frame(r, pos,
								psprintf("Frame flags %02X do not match the run, which is %s and of %s frames.",
										 hdr.flags,
										 r->sp->cipher ? "encrypted" : "not encrypted",
										 r->run->rows ? "row" : "column"));
	*hdr_out = hdr;
}

/*
 * Read, check, decompress and decode the next block of the run; return
 * false at the run's end.
 */
bool
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

	compspill_read_frame_header(r, pos, &hdr);
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
		/*
		 * The header passed its checksum, so the size is genuine.  In place,
		 * the block is written over the frame, which must end lz4's margin
		 * past it (as the reader sized its buffer for the run's blocks), and
		 * the window's copy of the frame is gone.
		 */
		if (r->in_place)
		{
			Size		end = (Size) (payload - r->dbuf) + payload_len;
			Size		margin = CompSpillInPlaceMargin((CompSpillCodec) hdr.codec,
														hdr.raw_len);

			if (margin == 0 || end < hdr.raw_len + margin)
				elog(ERROR, "compspill frame at offset %lld of a run read in place has a block of %u bytes its buffer cannot decompress in place",
					 (long long) pos, hdr.raw_len);
			r->plain_end = pos + (off_t) (COMPSPILL_FRAME_HEADER_SIZE +
										  hdr.stored_len);
		}
		else
			CompSpillGrowBuffer(r->cxt, &r->dbuf, &r->dbuf_cap, hdr.raw_len,
								0, false);

		INSTR_TIME_SET_CURRENT(start);
		if (!CompSpillDecompress(r->sp->comp, (CompSpillCodec) hdr.codec,
								 (hdr.flags & COMPSPILL_FRAME_DICT) != 0,
								 payload, payload_len,
								 r->dbuf, hdr.raw_len, &detail))
			compspill_corrupt_frame(r, pos, detail ? detail :
									"The block could not be decompressed.");
		INSTR_TIME_SET_CURRENT(end);
		INSTR_TIME_ACCUM_DIFF(r->sp->stats->decompress_time, end, start);
		if (r->sp->set.codec == COMPSPILL_CODEC_AUTO)
		{
			INSTR_TIME_SUBTRACT(end, start);
			CompSpillAutoRecordDecompress(r->sp->ac,
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
