/*-------------------------------------------------------------------------
 *
 * autocodec_private.h
 *	  The fields of compspill.codec = auto's state (autocodec.c).
 *
 * Private to autocodec.c, and to the unit test (test/unit/autocodec_test.c),
 * which declares the state by value and reads its fields.  Its owner, the
 * spill object, sees the opaque type of codec/autocodec.h only
 * (test/include-graph.py --check fails if a file outside src/codec/
 * includes this).  It does not include codec/autocodec.h: autocodec.c
 * includes both, and the include graph would have a circle.
 *
 * IDENTIFICATION
 *	  src/codec/autocodec_private.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_AUTOCODEC_PRIVATE_H
#define COMPSPILL_AUTOCODEC_PRIVATE_H

#include "base/settings.h"

/*
 * A smoothed figure (a per-byte cost or the stored fraction); written by
 * autocodec.c only.  Samples are summed in pending_* until they are long
 * enough to be timed reliably, then folded into value.
 */
typedef struct CompSpillAutoEstimate
{
	double		value;			/* smoothed amount per unit */
	bool		known;			/* value holds at least one sample */
	double		stamp;			/* stream position at the last fold */
	double		pending_units;	/* units (bytes) not yet folded in */
	double		pending_amount; /* their amount (ns or bytes) */
} CompSpillAutoEstimate;

/* Per stored codec measurements; written by autocodec.c only */
typedef struct CompSpillAutoCodecState
{
	CompSpillAutoEstimate compress; /* ns per raw byte */
	CompSpillAutoEstimate decompress;	/* ns per raw byte */
	CompSpillAutoEstimate stored;	/* stored bytes per raw byte */
	int64		last_block;		/* last block handed out with it, or -1 */
	int64		blocks;			/* blocks handed out with it */
	int64		probes;			/* of which probes */
} CompSpillAutoCodecState;

/*
 * The online state of compspill.codec = auto for one operation, in memory
 * its owner allocates (CompSpillAutoSize bytes).  The unit test reads the
 * fields; only autocodec.c writes them.
 */
struct CompSpillAutoCodec
{
	int			zstd_level;		/* the level zstd is measured at */
	double		reads_per_write;	/* times each written byte is read: 1,
									 * the next merge or the store's reader;
									 * a nested loop's inner Material, read
									 * again for each outer row and written
									 * in full before its first rescan,
									 * takes the plan's count of outer rows
									 * (CompSpillAutoSetReadsPerWrite) */
	CompSpillCodec choice;		/* the current choice */
	int64		nblocks;		/* blocks handed out */
	int64		nprobes;		/* of which probes of another codec */
	int64		nswitches;		/* changes of choice */
	bool		probing;		/* the last block handed out is a probe */
	/* stream positions, in bytes, that age the estimates */
	double		compressed_bytes;	/* raw bytes through RecordCompress */
	double		decompressed_bytes; /* raw bytes through RecordDecompress */
	double		written_bytes;	/* file bytes through RecordWrite */
	double		read_bytes;		/* file bytes through RecordRead */
	CompSpillAutoEstimate write;	/* ns per file byte written */
	double		write_floor;	/* the cheapest write sample, ns per byte,
								 * or -1 */
	bool		direct;			/* the file does direct I/O */
	double		room_fraction;	/* the most stored bytes per raw byte the
								 * rest of the spill may take for lack of
								 * room, or INFINITY: no limit */
	CompSpillAutoEstimate read; /* ns per file byte read */
	/* the device, when it holds buffered writes back (autocodec.c) */
	double		raw_bytes;		/* raw bytes of all blocks so far */
	double		work_raw;		/* raw bytes compressed since the last write */
	double		work_codec_ns;	/* and the ns their compression took */
	double		work_bytes;		/* raw bytes of the work samples */
	CompSpillAutoEstimate work; /* the spill's own wall ns per raw byte,
								 * outside the codec and the writes */
	bool		stalled;		/* a write has stalled */
	double		cache_room;		/* file bytes the page cache took before the
								 * first stall: this spill's, or recalled
								 * with the device's pace */
	double		expected_raw;	/* raw bytes the spill is expected to
								 * hold, 0 if unknown */
	bool		device_recalled;	/* device's value is an earlier spill's */
	double		span_bytes;		/* file bytes written since that stall */
	double		span_ns;		/* wall ns since then */
	double		span_wait_ns;	/* of which the writes waited */
	double		device_bytes;	/* file bytes of the spans measured */
	CompSpillAutoEstimate device;	/* wall ns per file byte, stall to stall */
	double		column_bytes;	/* row bytes through RecordColumns */
	CompSpillAutoEstimate columns;	/* bytes of column frames (before
									 * compression) per byte of the rows
									 * they hold */
	CompSpillAutoCodecState codec[COMPSPILL_NUM_STORED_CODECS];
};

#endif							/* COMPSPILL_AUTOCODEC_PRIVATE_H */
