/*-------------------------------------------------------------------------
 *
 * autocodec.h
 *	  compspill.codec = auto: the codec of each frame from the costs
 *	  measured so far (autocodec.c).
 *
 * The state is opaque to its owner (the spill object, spill/spiller.c),
 * which allocates CompSpillAutoSize bytes for it; only the functions below
 * read or write it.  Its fields are in codec/autocodec_private.h, for
 * autocodec.c and the unit test, which reads them.  No allocation, no
 * errors, no I/O.
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
 * A device that holds a buffered spill back: once the dirty pages reach
 * the kernel's limit, writes wait for it, and the spill goes at the slower
 * of its own work and the device (CompSpillAutoModelTime)
 */
typedef struct CompSpillDevicePace
{
	double		device_ns_per_byte; /* wall ns per file byte, stall to stall */
	double		base_ns_per_byte;	/* the spill's own work per raw byte,
									 * outside the codec and the writes */
	double		copy_ns_per_byte;	/* a write's own cost per file byte
									 * (the page cache's copy) */
	double		cache_bytes;	/* file bytes the page cache took before
								 * the device held the spill back: the
								 * spill's last ones never reach it */
	double		spill_raw_bytes;	/* raw bytes the whole spill is
									 * expected to hold, 0 if unknown */
} CompSpillDevicePace;

/*
 * The online state of compspill.codec = auto for one operation: opaque,
 * CompSpillAutoSize bytes its owner allocates and CompSpillAutoInit sets
 * up (its fields are codec/autocodec_private.h's)
 */
typedef struct CompSpillAutoCodec CompSpillAutoCodec;

extern double CompSpillAutoModelTime(const CompSpillCodecCost *cost,
									 double write_ns_per_byte,
									 double read_ns_per_byte,
									 double reads_per_write,
									 const CompSpillDevicePace *pace);
extern CompSpillCodec CompSpillAutoDecide(const CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
										  double write_ns_per_byte,
										  double read_ns_per_byte,
										  double reads_per_write,
										  const CompSpillDevicePace *pace);
extern CompSpillCodec CompSpillAutoDecideRoom(const CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
											  double write_ns_per_byte,
											  double read_ns_per_byte,
											  double reads_per_write,
											  const CompSpillDevicePace *pace,
											  double room_fraction);
extern Size CompSpillAutoSize(void);
extern void CompSpillAutoInit(CompSpillAutoCodec *ac, int zstd_level);
extern CompSpillCodec CompSpillAutoNext(CompSpillAutoCodec *ac);
extern bool CompSpillAutoProbing(const CompSpillAutoCodec *ac);
extern void CompSpillAutoRecordCompress(CompSpillAutoCodec *ac,
										CompSpillCodec codec, Size rawlen,
										Size storedlen, double seconds);
extern void CompSpillAutoRecordStoredRaw(CompSpillAutoCodec *ac, Size rawlen);
extern void CompSpillAutoFirstRunDone(CompSpillAutoCodec *ac);
extern void CompSpillAutoSetReadsPerWrite(CompSpillAutoCodec *ac, double reads);
extern void CompSpillAutoSetExpectedRaw(CompSpillAutoCodec *ac,
										double raw_bytes);
extern bool CompSpillAutoRecordWrite(CompSpillAutoCodec *ac, Size bytes,
									 double seconds, double elapsed);
extern void CompSpillAutoRecordDevice(CompSpillAutoCodec *ac, double bytes,
									  double seconds);
extern void CompSpillAutoSetRoom(CompSpillAutoCodec *ac, double room_fraction);
extern bool CompSpillAutoRoomShort(const CompSpillAutoCodec *ac);
extern bool CompSpillAutoStoresRaw(const CompSpillAutoCodec *ac);
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
extern bool CompSpillAutoCurrentPace(const CompSpillAutoCodec *ac,
									 CompSpillDevicePace *pace);
extern void CompSpillAutoRecallDevice(CompSpillAutoCodec *ac,
									  double ns_per_byte, double headroom);
extern bool CompSpillAutoMeasuredDevice(const CompSpillAutoCodec *ac,
										double *ns_per_byte,
										double *headroom);
extern void CompSpillAutoRecordColumns(CompSpillAutoCodec *ac,
									   Size row_bytes, Size encoded);
extern bool CompSpillAutoRowFrames(const CompSpillAutoCodec *ac);
extern bool CompSpillAutoStoreRowFrames(const CompSpillAutoCodec *ac);

#endif							/* COMPSPILL_AUTOCODEC_H */
