/*-------------------------------------------------------------------------
 *
 * frame.h
 *	  The frame, the unit on disk: its header (see spill/frame.c's banner).
 *
 * Private to the spill layer: runwriter.c writes frames, frame.c reads
 * them back; test/fuzz builds frames of its own with it.  No other layer
 * includes it.
 *
 * IDENTIFICATION
 *	  src/spill/frame.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_FRAME_H
#define COMPSPILL_FRAME_H

/* frame.c: the frame header */

/* "CSBK" when the bytes are read in order on a little-endian machine */
#define COMPSPILL_FRAME_MAGIC	0x4B425343

typedef struct CompSpillFrameHeader
{
	uint32		magic;
	uint8		codec;			/* CompSpillCodec of the payload */
	uint8		flags;
	uint8		reserved[2];
	uint32		nrows;
	uint32		raw_len;		/* encoded size */
	uint32		stored_len;		/* payload size, with the tag if encrypted */
	uint32		crc;			/* CRC-32C of header (crc = 0) and payload;
								 * 0 and unused in an encrypted frame, which
								 * its authentication tag covers */
} CompSpillFrameHeader;

#define COMPSPILL_FRAME_HEADER_SIZE sizeof(CompSpillFrameHeader)

/* flags of a frame header */
#define COMPSPILL_FRAME_ENCRYPTED	0x01
#define COMPSPILL_FRAME_ROWS		0x02	/* payload is a row frame
											 * (codec/rowframe.c), not a
											 * column block */
#define COMPSPILL_FRAME_DICT		0x04	/* zstd payload compressed
											 * against the spill's
											 * dictionary (codec/compress.c) */

StaticAssertDecl(sizeof(CompSpillFrameHeader) == 24,
				 "compspill frame header must have no padding");

#endif							/* COMPSPILL_FRAME_H */
