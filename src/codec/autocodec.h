/*-------------------------------------------------------------------------
 *
 * autocodec.h
 *	  compspill.codec = auto: the codec of each frame from the costs
 *	  measured so far (autocodec.c).
 *
 * The state is a struct its owner embeds by value (the spill object of
 * spill/run.c, or the unit test, which reads its fields); only the
 * functions below write it.  No allocation, no errors, no I/O.
 *
 * IDENTIFICATION
 *	  src/codec/autocodec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_AUTOCODEC_H
#define COMPSPILL_AUTOCODEC_H

#include "base/settings.h"

/* autocodec.c */

/* What one codec costs, per raw byte, as CompSpillAutoDecide weighs it */
typedef struct CompSpillCodecCost
{
	double		compress_ns_per_byte;	/* per raw byte */
	double		decompress_ns_per_byte; /* per raw byte */
	double		ratio;			/* raw / stored, >= 1 */
	bool		known;			/* false: not a candidate */
} CompSpillCodecCost;

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
 * The online state of compspill.codec = auto for one operation, embedded
 * by value in its run writer.  Read the fields, write them only through
 * the functions below.
 */
typedef struct CompSpillAutoCodec
{
	int			zstd_level;		/* the level zstd is measured at */
	double		reads_per_write;	/* times each written byte is read: 1,
									 * the next merge or the store's reader;
									 * a Material read again by each outer
									 * row of a nested loop is mostly
									 * written before its first rescan (in
									 * full, but for semi and anti joins),
									 * so a count of its rescans would come
									 * too late to weigh its frames' codecs */
	CompSpillCodec choice;		/* the current choice */
	int64		nblocks;		/* blocks handed out */
	int64		nprobes;		/* of which probes of another codec */
	int64		nswitches;		/* changes of choice */
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
	CompSpillAutoCodecState codec[COMPSPILL_NUM_STORED_CODECS];
} CompSpillAutoCodec;

extern double CompSpillAutoModelTime(const CompSpillCodecCost *cost,
									 double write_ns_per_byte,
									 double read_ns_per_byte,
									 double reads_per_write);
extern CompSpillCodec CompSpillAutoDecide(const CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
										  double write_ns_per_byte,
										  double read_ns_per_byte,
										  double reads_per_write);
extern CompSpillCodec CompSpillAutoDecideRoom(const CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
											  double write_ns_per_byte,
											  double read_ns_per_byte,
											  double reads_per_write,
											  double room_fraction);
extern void CompSpillAutoInit(CompSpillAutoCodec *ac, int zstd_level);
extern CompSpillCodec CompSpillAutoNext(CompSpillAutoCodec *ac);
extern void CompSpillAutoRecordCompress(CompSpillAutoCodec *ac,
										CompSpillCodec codec, Size rawlen,
										Size storedlen, double seconds);
extern void CompSpillAutoRecordWrite(CompSpillAutoCodec *ac, Size bytes,
									 double seconds);
extern void CompSpillAutoSetRoom(CompSpillAutoCodec *ac, double room_fraction);
extern bool CompSpillAutoRoomShort(const CompSpillAutoCodec *ac);
extern void CompSpillAutoSetDirect(CompSpillAutoCodec *ac, bool direct);
extern void CompSpillAutoRecordRead(CompSpillAutoCodec *ac, Size bytes,
									double seconds);
extern void CompSpillAutoRecordDecompress(CompSpillAutoCodec *ac,
										  CompSpillCodec codec, Size rawlen,
										  double seconds);
extern void CompSpillAutoCurrentCosts(const CompSpillAutoCodec *ac,
									  CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
									  double *write_ns_per_byte,
									  double *read_ns_per_byte);
extern bool CompSpillAutoRowFrames(const CompSpillAutoCodec *ac);

#endif							/* COMPSPILL_AUTOCODEC_H */
