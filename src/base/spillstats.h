/*-------------------------------------------------------------------------
 *
 * spillstats.h
 *	  The spill figures of one operation, their sum, and the names of what
 *	  they hold.
 *
 * One struct per operation (a sort, a store), filled in by the layers it
 * spills through, each through the pointer it is given: the sorter and the
 * merge count runs, rows and passes, the run layer frames and bytes, the
 * spill file its I/O.  EXPLAIN ANALYZE prints it (nodes/explain.c), the
 * cumulative statistics and the log line count it (shared/stats.c).
 * CompSpillStatsAdd is the one place that knows how each field adds up.
 *
 * IDENTIFICATION
 *	  src/base/spillstats.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_SPILLSTATS_H
#define COMPSPILL_SPILLSTATS_H

#include "portability/instr_time.h"

#include "base/settings.h"

/*
 * The limit that made codec = auto compress for lack of room (see
 * spill/codecchoice.c), for EXPLAIN
 */
typedef enum CompSpillRoomLimit
{
	COMPSPILL_ROOM_NONE = 0,	/* room enough, or not codec = auto */
	COMPSPILL_ROOM_TEMP_FILE_LIMIT,
	COMPSPILL_ROOM_MAX_TEMP_SPACE,
	COMPSPILL_ROOM_FILE_SYSTEM	/* the temp directory's free space */
} CompSpillRoomLimit;

typedef struct CompSpillStats
{
	uint64		queryid;		/* statement the operation belongs to */
	CompSpillCodec codec;		/* codec asked for */
	bool		dio_requested;	/* compspill.enable_dio at start */
	bool		dio_active;		/* direct I/O actually in use */
	bool		dio_fallback;	/* asked for, refused by the file system:
								 * buffered I/O instead */
	bool		encrypted;		/* frames encrypted with AES-256-GCM */
	CompSpillRoomLimit room;	/* codec = auto compressed for lack of room
								 * under this limit */
	float4		device_mbps;	/* codec = auto started from the device's
								 * pace an earlier spill measured, in MB/s;
								 * 0 if it did not */
	int			nruns;			/* runs written by run formation */
	int			merge_passes;	/* passes over the data, final merge
								 * included */
	int			early_merges;	/* merges of a few runs while the input
								 * was read (a sort with very many runs) */
	int64		bytes_written_early;	/* file bytes those merges wrote */
	int64		rows_spilled;	/* rows written by run formation */
	int64		bytes_in;		/* in-memory size of the spilled tuples */
	int64		bytes_encoded;	/* encoded size before compression, all
								 * passes */
	int64		bytes_written_runs; /* file bytes written by run formation */
	int64		bytes_written;	/* file bytes written, all passes */
	int64		bytes_read;		/* file bytes read, all passes */
	int64		file_size;		/* largest size the file reached */
	int64		frames_written; /* frames written, all passes */
	int64		frames_raw;		/* frames stored uncompressed */
	int64		frames_dict;	/* zstd frames compressed against the
								 * spill's dictionary */
	int64		frames_rows;	/* row frames written, all passes */
	int64		frames_columns; /* column frames written, all passes */
	int64		frames_by_codec[COMPSPILL_NUM_STORED_CODECS];	/* frames each
																 * codec was
																 * chosen for */
	int64		peak_mem;		/* most memory the operation's contexts held */
	Size		block_size;		/* block size run formation used */
	instr_time	write_time;		/* time in FileWrite */
	instr_time	read_time;		/* time in FileRead */
	/* where the spill's CPU went, measured per block (Spill CPU) */
	instr_time	encode_time;	/* rows into blocks or row frames */
	instr_time	compress_time;	/* the compressor */
	instr_time	decompress_time;	/* the decompressor */
	instr_time	decode_time;	/* blocks and row frames checked and
								 * made ready to read */
} CompSpillStats;

extern void CompSpillStatsAdd(CompSpillStats *sum, const CompSpillStats *add);

/* names of what the figures hold, for EXPLAIN, the views and the log line */
extern const char *CompSpillCodecName(CompSpillCodec codec);
extern const char *CompSpillEncryptionName(bool encrypted);
extern const char *CompSpillDirectIOName(const CompSpillStats *st);
extern const char *CompSpillRoomName(CompSpillRoomLimit room);

#endif							/* COMPSPILL_SPILLSTATS_H */
