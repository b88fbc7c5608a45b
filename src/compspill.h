/*-------------------------------------------------------------------------
 *
 * compspill.h
 *	  Shared declarations of the compspill extension.
 *
 * compspill replaces the executor's Sort, Incremental Sort, Material and
 * CTE Scan nodes with CustomScans that spill to one temp file per
 * operation, in frames of compressed column-oriented blocks or of rows as
 * native sort writes them.  The code is layered, one folder per group of
 * layers; each layer is one file with its own header next to it, and
 * knows only the layer below it:
 *
 *	compspill.c			_PG_init: settings, planner hook, registration
 *	nodes/				the plan and the executor
 *	  planner.c			plan rewrite: Sort, Incremental Sort, Material,
 *						CTE Scan, Recursive Union -> CompSpill
 *	  sortnode.c		the CompSpill Sort CustomScan
 *	  incsortnode.c		the CompSpill Incremental Sort CustomScan
 *	  materialnode.c	the CompSpill Material CustomScan
 *	  ctenode.c			the CompSpill CTE Scan CustomScan: shared CTE stores
 *	  recursivenode.c	the CompSpill Recursive Union and WorkTable Scan pair
 *	  nodestore.c		the rows a Material or CTE Scan keeps, read through
 *	  explain.c			EXPLAIN ANALYZE spill figures shared by the nodes
 *	sort/				what the nodes spill through
 *	  sorter.c			in-memory sort (tuples, or the datum path), run
 *						formation
 *	  merge.c			k-way merge of runs on inline first keys, planning
 *						of merge passes
 *	  store.c			rows in memory, then in one indexed run, by position
 *	spill/				runs in the temp file
 *	  run.c				the spill object; runs of framed, checksummed column
 *						blocks or row frames (frame.h: the frame header,
 *						run.c's own)
 *	  spillfile.c		the temp file: extents, aligned writes, O_DIRECT
 *	codec/				what a frame carries
 *	  blockcodec.c		N rows <-> column streams, the choice of encodings
 *	  enc/				the column encodings, one file each behind one ops
 *						table (enc/encoding.h)
 *	  rowframe.c		row frames: rows as native sort writes them
 *	  compress.c		none / lz4 / zstd on byte buffers
 *	  cipher.c			compspill.encryption: AES-256-GCM of frame payloads
 *	  autocodec.c		compspill.codec = auto: the codec (and frame kind)
 *						from measured costs
 *	shared/				shared memory
 *	  stats.c			cumulative statistics, the cap, the log line, the
 *						sum of two operations' spill figures
 *	  activity.c		compspill_activity: the spills in progress
 *	  workers.c			per-worker figures of parallel workers, for the
 *						leader's EXPLAIN ANALYZE
 *
 * This header holds only what several layers share: the settings and
 * their per-operation capture, the codec and phase enums, the spill
 * figures of one operation (CompSpillStats), the node names, and the
 * version differences (compat.h).  Every include of the project's own
 * headers is relative to src/ ("compspill.h", "spill/run.h").
 *
 * Words: a frame is the unit on disk (header, CRC, payload), a block the
 * codec's group of rows in column streams that a column frame carries (a
 * row frame carries rows instead), a page the 4kB alignment unit, an
 * extent the spill file's unit of space.
 *
 * IDENTIFICATION
 *	  src/compspill.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_H
#define COMPSPILL_H

#include "portability/instr_time.h"

#include "compat.h"

/* I/O alignment for direct I/O: buffers, file offsets and lengths */
#define COMPSPILL_ALIGN			4096
#define COMPSPILL_ALIGN_UP(x)	TYPEALIGN(COMPSPILL_ALIGN, (x))
#define COMPSPILL_ALIGN_DOWN(x) TYPEALIGN_DOWN(COMPSPILL_ALIGN, (x))

/*
 * The one growth policy of every buffer compspill keeps (write and read
 * buffers, the codec's streams and arenas): room for need bytes and a
 * quarter more, so that a slowly growing need does not reallocate every
 * time, but never more than a megabyte more, so that a huge value costs
 * what it needs and not twice that.
 */
static inline Size
CompSpillGrowSize(Size need)
{
	return need + Min(need / 4, (Size) 1024 * 1024);
}

/* Names under which the CustomScan methods are registered */
#define COMPSPILL_SORT_NAME		"CompSpill Sort"
#define COMPSPILL_MATERIAL_NAME	"CompSpill Material"
#define COMPSPILL_CTE_NAME		"CompSpill CTE Scan"
#define COMPSPILL_RECURSIVE_UNION_NAME	"CompSpill Recursive Union"
#define COMPSPILL_WORKTABLE_NAME	"CompSpill WorkTable Scan"

typedef enum CompSpillCodec
{
	COMPSPILL_CODEC_NONE = 0,
	COMPSPILL_CODEC_LZ4 = 1,
	COMPSPILL_CODEC_ZSTD = 2,
	COMPSPILL_CODEC_AUTO = 3	/* a setting only: chosen per frame */
} CompSpillCodec;

/* codecs a frame can be stored with: NONE, LZ4, ZSTD */
#define COMPSPILL_NUM_STORED_CODECS	3

/* settings (compspill.c) */
extern bool compspill_enabled;
extern int	compspill_codec;
extern int	compspill_compression_level;
extern bool compspill_enable_dio;
extern int	compspill_block_size;	/* kB */
extern int	compspill_write_size;	/* kB */
extern int	compspill_log_spills;	/* kB, -1: off */
extern int	compspill_max_temp_space;	/* kB, -1: off */
extern int	compspill_max_statements;
extern int	compspill_max_worker_figures;
extern int	compspill_encryption;
extern int	compspill_frame_kind;

/* compspill.frame_kind */
typedef enum CompSpillFrameKind
{
	COMPSPILL_FRAME_KIND_AUTO = 0,	/* as the codec decides */
	COMPSPILL_FRAME_KIND_ROW = 1,
	COMPSPILL_FRAME_KIND_COLUMN = 2,
	COMPSPILL_FRAME_KIND_ALTERNATE = 3	/* tests: a run of each in turn */
} CompSpillFrameKind;

/*
 * The limit that made codec = auto compress for lack of room (see
 * spill/run.c), for EXPLAIN
 */
typedef enum CompSpillRoomLimit
{
	COMPSPILL_ROOM_NONE = 0,	/* room enough, or not codec = auto */
	COMPSPILL_ROOM_TEMP_FILE_LIMIT,
	COMPSPILL_ROOM_MAX_TEMP_SPACE,
	COMPSPILL_ROOM_FILE_SYSTEM	/* the temp directory's free space */
} CompSpillRoomLimit;

/* compspill.encryption */
typedef enum CompSpillEncryption
{
	COMPSPILL_ENCRYPTION_OFF = 0,
	COMPSPILL_ENCRYPTION_AES_256_GCM = 1
} CompSpillEncryption;

/*
 * The settings an operation spills with, captured once at executor start so
 * that a SET in the middle of a cursor's life does not change its format.
 */
typedef struct CompSpillSettings
{
	CompSpillCodec codec;		/* none, lz4, zstd or auto */
	int			level;			/* zstd level */
	bool		dio;			/* compspill.enable_dio */
	bool		encrypt;		/* compspill.encryption is not off */
	CompSpillFrameKind frame_kind;	/* compspill.frame_kind */
	Size		block_size;		/* compspill.block_size, bytes */
	Size		write_size;		/* compspill.write_size, bytes */
	uint64		queryid;		/* the statement's query identifier, or 0 */
	int64		mem_limit;		/* the operation's work_mem in bytes, set by
								 * the operation; 0 if not known */
} CompSpillSettings;

struct EState;
extern void CompSpillCaptureSettings(CompSpillSettings *set,
									 struct EState *estate);

/*
 * Spill figures of one operation, filled in by every layer and printed by
 * EXPLAIN ANALYZE.  One struct per operation; the layers get a pointer.
 */
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
	int64		frames_rows;	/* row frames written, all passes */
	int64		frames_columns; /* column frames written, all passes */
	int64		frames_by_codec[COMPSPILL_NUM_STORED_CODECS];	/* frames each
																 * codec was
																 * chosen for */
	int64		peak_mem;		/* most memory the operation's contexts held */
	Size		block_size;		/* block size run formation used */
	instr_time	write_time;		/* time in FileWrite */
	instr_time	read_time;		/* time in FileRead */
} CompSpillStats;

/* stats.c: add one operation's figures to another's */
extern void CompSpillStatsAdd(CompSpillStats *sum, const CompSpillStats *add);

/*
 * What a spill is doing, as compspill_activity shows it.  The sorter reads
 * its input and writes runs in turns, then merges; a store takes rows and
 * gives them back in turns.
 */
typedef enum CompSpillPhase
{
	COMPSPILL_PHASE_READING_INPUT,
	COMPSPILL_PHASE_WRITING_RUN,
	COMPSPILL_PHASE_MERGING,	/* an intermediate pass, or the final merge
								 * into a store */
	COMPSPILL_PHASE_RETURNING,	/* the final merge, streamed to the caller */
	COMPSPILL_PHASE_STORING		/* a Material's or CTE's store */
} CompSpillPhase;

/*
 * Names of what the figures hold, for EXPLAIN, the views and the log line;
 * defined by the layer that owns each.
 */
/* compress.c */
extern const char *CompSpillCodecName(CompSpillCodec codec);

/* cipher.c */
extern const char *CompSpillEncryptionName(bool encrypted);

/* spillfile.c */
extern const char *CompSpillDirectIOName(const CompSpillStats *st);
extern const char *CompSpillRoomName(CompSpillRoomLimit room);

#endif							/* COMPSPILL_H */
