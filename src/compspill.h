/*-------------------------------------------------------------------------
 *
 * compspill.h
 *	  Shared declarations of the compspill extension.
 *
 * compspill replaces the executor's Sort node with a CustomScan whose
 * external sort writes compressed, column-oriented blocks to one temp file
 * per operation.  The code is layered; each layer lives in one file and
 * knows only the layer below it:
 *
 *	compspill.c		_PG_init: settings, planner hook, method registration
 *	planner.c		plan rewrite: Sort and Material -> CompSpill nodes
 *	sortnode.c		the CompSpill Sort CustomScan
 *	materialnode.c	the CompSpill Material CustomScan
 *	ctenode.c		the CompSpill CTE Scan CustomScan: shared CTE stores
 *	explain.c		EXPLAIN ANALYZE spill figures shared by the nodes
 *	sorter.c		in-memory sort, run formation
 *	merge.c			k-way merge of runs, planning of merge passes
 *	store.c			rows kept in memory, then in one indexed run, by position
 *	run.c			the spill object; runs of framed, checksummed blocks
 *	blockcodec.c	N rows <-> column streams, sort-aware encodings
 *	compress.c		none / lz4 / zstd on byte buffers
 *	cipher.c		compspill.encryption: AES-256-GCM of each frame's payload
 *	autocodec.c		compspill.codec = auto: the codec from measured costs
 *	spillfile.c		the temp file: extents, aligned writes, O_DIRECT
 *	stats.c			shared memory; cumulative statistics, the cap, the log line
 *	activity.c		compspill_activity: the spills in progress, per backend
 *
 * Words: a frame is the unit on disk (header, CRC, payload), a block the
 * codec's group of rows in column streams that a frame carries, a page the
 * 4kB alignment unit, an extent the spill file's unit of space.
 *
 * IDENTIFICATION
 *	  src/compspill.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_H
#define COMPSPILL_H

#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "utils/sortsupport.h"

#include "compat.h"

/* I/O alignment for direct I/O: buffers, file offsets and lengths */
#define COMPSPILL_ALIGN			4096
#define COMPSPILL_ALIGN_UP(x)	TYPEALIGN(COMPSPILL_ALIGN, (x))
#define COMPSPILL_ALIGN_DOWN(x) TYPEALIGN_DOWN(COMPSPILL_ALIGN, (x))

/* Names under which the CustomScan methods are registered */
#define COMPSPILL_SORT_NAME		"CompSpill Sort"
#define COMPSPILL_MATERIAL_NAME	"CompSpill Material"
#define COMPSPILL_CTE_NAME		"CompSpill CTE Scan"

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
extern int	compspill_encryption;

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
	Size		block_size;		/* compspill.block_size, bytes */
	Size		write_size;		/* compspill.write_size, bytes */
	uint64		queryid;		/* the statement's query identifier, or 0 */
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
	bool		encrypted;		/* frames encrypted with AES-256-GCM */
	int			nruns;			/* runs written by run formation */
	int			merge_passes;	/* passes over the data, final merge
								 * included */
	int			early_merges;	/* merges of a few runs while the input
								 * was read (a sort with very many runs) */
	int64		bytes_written_early;	/* file bytes those merges wrote */
	int64		rows_spilled;	/* rows written by run formation */
	int64		bytes_in;		/* in-memory size of the spilled tuples */
	int64		bytes_raw;		/* encoded size before compression, all
								 * passes */
	int64		bytes_written_runs; /* file bytes written by run formation */
	int64		bytes_written;	/* file bytes written, all passes */
	int64		bytes_read;		/* file bytes read, all passes */
	int64		file_size;		/* largest size the file reached */
	int64		frames_written; /* frames written, all passes */
	int64		frames_raw;		/* frames stored uncompressed */
	int64		frames_by_codec[COMPSPILL_NUM_STORED_CODECS];	/* frames each
																 * codec was
																 * chosen for */
	int64		peak_mem;		/* most memory the operation's contexts held */
	Size		block_size;		/* block size run formation used */
	instr_time	write_time;		/* time in FileWrite */
	instr_time	read_time;		/* time in FileRead */
} CompSpillStats;

/* compress.c */
typedef struct CompSpillCompressor CompSpillCompressor;

extern const char *CompSpillCodecName(CompSpillCodec codec);
extern CompSpillCompressor *CompSpillCompressorCreate(int zstd_level);
extern Size CompSpillCompressBound(CompSpillCompressor *comp,
								   CompSpillCodec codec, Size srclen);
extern Size CompSpillCompress(CompSpillCompressor *comp, CompSpillCodec codec,
							  const char *src, Size srclen,
							  char *dst, Size dstcap);
extern bool CompSpillDecompress(CompSpillCompressor *comp,
								CompSpillCodec codec,
								const char *src, Size srclen,
								char *dst, Size rawlen,
								const char **errdetail);

/* run.c: the frame, the unit on disk (see run.c's banner) */

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
	uint32		crc;			/* CRC-32C of header (crc = 0) and payload */
} CompSpillFrameHeader;

#define COMPSPILL_FRAME_HEADER_SIZE sizeof(CompSpillFrameHeader)

/* flags of a frame header */
#define COMPSPILL_FRAME_ENCRYPTED	0x01

StaticAssertDecl(sizeof(CompSpillFrameHeader) == 24,
				 "compspill frame header must have no padding");

/* cipher.c */
typedef struct CompSpillCipher CompSpillCipher;

#define COMPSPILL_CIPHER_TAG_SIZE	16

extern CompSpillCipher *CompSpillCipherCreate(void);
extern uint64 CompSpillCipherRunSerial(void);
extern const char *CompSpillCipherLastError(void);
extern const char *CompSpillEncryptionName(bool encrypted);
extern void CompSpillEncrypt(CompSpillCipher *c, uint64 serial, int64 frame,
							 const void *aad, Size aadlen, char *payload,
							 Size len);
extern bool CompSpillDecrypt(CompSpillCipher *c, uint64 serial, int64 frame,
							 const void *aad, Size aadlen, char *payload,
							 Size len);

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
 * A smoothed figure (a per-byte cost or the stored fraction); private to
 * autocodec.c.  Samples are summed in pending_* until they are long enough
 * to be timed reliably, then folded into value.
 */
typedef struct CompSpillAutoEstimate
{
	double		value;			/* smoothed amount per unit */
	bool		known;			/* value holds at least one sample */
	double		stamp;			/* stream position at the last fold */
	double		pending_units;	/* units (bytes) not yet folded in */
	double		pending_amount; /* their amount (ns or bytes) */
} CompSpillAutoEstimate;

/* Per stored codec measurements; private to autocodec.c */
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
	double		reads_per_write;	/* times each written byte is read */
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
extern void CompSpillAutoInit(CompSpillAutoCodec *ac, int zstd_level);
extern void CompSpillAutoSetReadsPerWrite(CompSpillAutoCodec *ac,
										  double reads_per_write);
extern CompSpillCodec CompSpillAutoNext(CompSpillAutoCodec *ac);
extern void CompSpillAutoRecordCompress(CompSpillAutoCodec *ac,
										CompSpillCodec codec, Size rawlen,
										Size storedlen, double seconds);
extern void CompSpillAutoRecordWrite(CompSpillAutoCodec *ac, Size bytes,
									 double seconds);
extern void CompSpillAutoRecordRead(CompSpillAutoCodec *ac, Size bytes,
									double seconds);
extern void CompSpillAutoRecordDecompress(CompSpillAutoCodec *ac,
										  CompSpillCodec codec, Size rawlen,
										  double seconds);
extern void CompSpillAutoCurrentCosts(const CompSpillAutoCodec *ac,
									  CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
									  double *write_ns_per_byte,
									  double *read_ns_per_byte);

/* blockcodec.c */
typedef struct CompSpillEncoder CompSpillEncoder;

/*
 * A checked raw block being read row by row: after CompSpillDecodeNextRow,
 * values[a] / isnull[a] hold the current row's attribute a.  By-reference
 * values point into the block's one-row arena, or straight into the raw
 * bytes (short varlenas stored with their 1-byte header), and stay valid
 * at least until the next call; the rows are read from the raw bytes,
 * which must stay in place until the block is decoded again.
 */
typedef struct CompSpillDecodedBlock
{
	int			natts;
	int			nrows;
	int			row;			/* rows made current so far */
	Datum	   *values;			/* the current row */
	bool	   *isnull;
	/* private to blockcodec.c */
	struct CompSpillColumnCursor *cols; /* per column: next value */
	char	   *arena;			/* per-column rebuild buffers, then the
								 * current row's by-reference values */
	Size		arena_cap;
	Size		arena_row;		/* where the current row's values start */
	char	   *fixed;			/* fixed-width columns, planes undone or
								 * unpacked; dictionaries and their codes */
	Size		fixed_cap;
	MemoryContext cxt;
} CompSpillDecodedBlock;

extern CompSpillEncoder *CompSpillEncoderCreate(TupleDesc tupdesc,
												Size target_size);
extern void CompSpillEncoderAdd(CompSpillEncoder *enc, Datum *values,
								bool *isnull);
extern bool CompSpillEncoderIsFull(CompSpillEncoder *enc);
extern void CompSpillEncoderSetLight(CompSpillEncoder *enc, bool light);
extern int	CompSpillEncoderRows(CompSpillEncoder *enc);
extern Size CompSpillEncoderSize(CompSpillEncoder *enc);
extern void CompSpillEncoderFinish(CompSpillEncoder *enc, char *dst);
extern void CompSpillDecodedBlockInit(CompSpillDecodedBlock *blk,
									  TupleDesc tupdesc);
extern bool CompSpillDecodeBlock(CompSpillDecodedBlock *blk,
								 TupleDesc tupdesc,
								 const char *raw, Size rawlen, int nrows,
								 const char **errdetail);
extern bool CompSpillDecodeNextRow(CompSpillDecodedBlock *blk);

/* spillfile.c */
typedef struct CompSpillFile CompSpillFile;

/* A range of consecutive extents of the spill file */
typedef struct CompSpillExtentRange
{
	int32		first;			/* extent number */
	int32		count;
} CompSpillExtentRange;

/*
 * The extents of the file one stream (a run) occupies, in stream order, as
 * ranges of consecutive extents: a run written at the end of the file is
 * one range, whatever its size.
 */
typedef struct CompSpillExtents
{
	CompSpillExtentRange *ranges;
	int			nranges;
	int			cap;
	int64		n;				/* extents taken */
	int64		nfreed;			/* leading extents given back */
	/* lookup cursor: ranges[at] holds extents from index at_base on */
	int			at;
	int64		at_base;
} CompSpillExtents;

extern char *CompSpillAllocAligned(Size size);
extern void CompSpillFreeAligned(char *ptr);
extern bool CompSpillGrowBuffer(MemoryContext cxt, char **buf, Size *cap,
								Size need, Size keep, bool aligned);
extern CompSpillFile *CompSpillFileCreate(bool dio, Size write_size,
										  Size extent_size,
										  CompSpillStats *stats);
extern Size CompSpillFileExtentSize(CompSpillFile *file);
extern int64 CompSpillFileBytesWritten(CompSpillFile *file);
extern Size CompSpillFileBufferSize(CompSpillFile *file);
extern bool CompSpillFileAligned(CompSpillFile *file);
extern void CompSpillFileBeginStream(CompSpillFile *file,
									 CompSpillExtents *ext);
extern char *CompSpillFileReserve(CompSpillFile *file, Size len);
extern off_t CompSpillFileCommit(CompSpillFile *file, Size len);
extern off_t CompSpillFileEndStream(CompSpillFile *file);
extern off_t CompSpillFileStreamLength(CompSpillFile *file);
extern off_t CompSpillFileFlush(CompSpillFile *file);
extern void CompSpillFileEndWrites(CompSpillFile *file);
extern void CompSpillFileRelease(CompSpillFile *file, CompSpillExtents *ext,
								 off_t upto);
extern Size CompSpillFileRead(CompSpillFile *file, CompSpillExtents *ext,
							  off_t offset, char *buf, Size len, Size need);
extern const char *CompSpillFileName(CompSpillFile *file);
extern void CompSpillFileClose(CompSpillFile *file);

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

/* run.c: the spill object, runs of frames, run readers */
typedef struct CompSpill CompSpill;
typedef struct CompSpillRunReader CompSpillRunReader;

/* Where a frame of an indexed run starts, and its first row */
typedef struct CompSpillFrameRef
{
	int64		offset;			/* in the run's stream */
	int64		first_row;		/* rows of the run before it */
} CompSpillFrameRef;

/* A run: a sequence of frames in a stream of the spill file */
typedef struct CompSpillRun
{
	uint64		serial;			/* unique in the backend: the cipher's nonce */
	CompSpillExtents extents;	/* where its bytes are */
	int64		len;			/* bytes of frames (flushed, while written) */
	int64		nrows;
	int64		nframes;
	int			level;			/* merges its rows have been through */
	/* with CompSpillRunBeginIndexed: one entry per frame, for seeks */
	CompSpillFrameRef *index;
	int64		index_cap;
} CompSpillRun;

extern CompSpill *CompSpillCreate(TupleDesc tupdesc, const char *what,
								  const CompSpillSettings *set,
								  CompSpillStats *stats,
								  Size block_size, Size write_size,
								  Size extent_size);
extern void CompSpillSetPhase(CompSpill *sp, CompSpillPhase phase, int pass,
							  int npasses);
extern void CompSpillSetBlockSize(CompSpill *sp, Size block_size);
extern void CompSpillRunBegin(CompSpill *sp, CompSpillRun *run);
extern void CompSpillRunBeginIndexed(CompSpill *sp, CompSpillRun *run);
extern void CompSpillRunSync(CompSpill *sp);
extern int64 CompSpillRunWritten(CompSpill *sp);
extern void CompSpillRunPut(CompSpill *sp, Datum *values, bool *isnull);
extern void CompSpillRunCutFrame(CompSpill *sp);
extern void CompSpillRunEnd(CompSpill *sp);
extern void CompSpillRunRelease(CompSpill *sp, CompSpillRun *run);
extern void CompSpillEndWrites(CompSpill *sp);
extern void CompSpillEnd(CompSpill *sp);
extern Size CompSpillWriterMemory(Size block_size, Size write_size);
extern int64 CompSpillWriterHeld(CompSpill *sp);

extern CompSpillRunReader *CompSpillReaderCreate(CompSpill *sp);
extern void CompSpillReaderOpen(CompSpillRunReader *r, CompSpillRun *run,
								bool consume);
extern void CompSpillReaderSeek(CompSpillRunReader *r, CompSpillRun *run,
								int64 frame);
extern bool CompSpillReaderNext(CompSpillRunReader *r, Datum **values,
								bool **isnull);
extern void CompSpillReaderFree(CompSpillRunReader *r);
extern int64 CompSpillReaderHeld(CompSpillRunReader *r);
extern Size CompSpillReaderEstimate(CompSpill *sp);
extern int64 CompSpillRunMapReserve(CompSpill *sp, int64 bytes);

/* store.c */
typedef struct CompSpillStore CompSpillStore;

/* A read position in a store or a sorted result, as tuplestore's */
typedef struct CompSpillStorePos
{
	int64		current;		/* rows before the position */
	bool		eof_reached;	/* a forward read found no more rows */
} CompSpillStorePos;

extern int64 CompSpillPosStep(CompSpillStorePos *pos, int64 nrows,
							  bool forward);
extern CompSpillStore *CompSpillStoreBegin(TupleDesc tupdesc, int work_mem_kb,
										   const CompSpillSettings *set,
										   int npos, const char *what);
extern CompSpillStore *CompSpillStoreBeginOnSpill(CompSpill *sp,
												  TupleDesc tupdesc,
												  CompSpillStats *stats,
												  int npos);
extern void CompSpillStorePut(CompSpillStore *st, TupleTableSlot *slot,
							  int active);
extern void CompSpillStorePutValues(CompSpillStore *st, Datum *values,
									bool *isnull);
extern void CompSpillStoreEndWrites(CompSpillStore *st);
extern bool CompSpillStoreGet(CompSpillStore *st, int ptr, bool forward,
							  TupleTableSlot *slot, bool copy);
extern bool CompSpillStoreAdvance(CompSpillStore *st, int ptr, bool forward);
extern bool CompSpillStoreAtEOF(CompSpillStore *st, int ptr);
extern void CompSpillStoreTrim(CompSpillStore *st);
extern void CompSpillStoreRewind(CompSpillStore *st, int ptr);
extern int	CompSpillStoreAllocPos(CompSpillStore *st);
extern void CompSpillStoreCopyPos(CompSpillStore *st, int from, int to);
extern int	CompSpillStorePositions(CompSpillStore *st);
extern int64 CompSpillStoreRows(CompSpillStore *st);
extern bool CompSpillStoreSpilled(CompSpillStore *st);
extern CompSpillStats *CompSpillStoreStats(CompSpillStore *st);
extern void CompSpillStoreEnd(CompSpillStore *st);

/* merge.c */
typedef struct CompSpillMerge CompSpillMerge;

extern int	CompSpillMergeRuns(CompSpill *sp, CompSpillStats *stats,
							   TupleDesc tupdesc, SortSupport ssup, int nkeys,
							   CompSpillRun *runs, int nruns,
							   int64 allowed_mem,
							   int64 (*used_mem) (void *), void *arg,
							   CompSpillRun *out);
extern CompSpillMerge *CompSpillMergeBegin(CompSpill *sp,
										   CompSpillStats *stats,
										   TupleDesc tupdesc,
										   SortSupport ssup, int nkeys,
										   CompSpillRun *runs, int nruns,
										   int64 allowed_mem, bool to_store,
										   int64 (*used_mem) (void *),
										   void *arg);
extern bool CompSpillMergeNext(CompSpillMerge *m, TupleTableSlot *slot);
extern void CompSpillMergeRewind(CompSpillMerge *m);
extern void CompSpillMergeEnd(CompSpillMerge *m);

/* sorter.c */
typedef struct CompSpillSorter CompSpillSorter;

typedef struct CompSpillSortSpec
{
	int			nkeys;
	AttrNumber *attnums;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nulls_first;
	double		est_rows;		/* the plan's estimate of the input */
	int			est_width;
	bool		random_access;	/* backward reads, mark and restore */
} CompSpillSortSpec;

extern CompSpillSorter *CompSpillSorterBegin(TupleDesc tupdesc,
											 const CompSpillSortSpec *spec,
											 int work_mem_kb,
											 const CompSpillSettings *set);
extern void CompSpillSorterPut(CompSpillSorter *sorter,
							   TupleTableSlot *slot);
extern void CompSpillSorterFinish(CompSpillSorter *sorter);
extern TupleTableSlot *CompSpillSorterGet(CompSpillSorter *sorter,
										  bool forward);
extern void CompSpillSorterRewind(CompSpillSorter *sorter);
extern void CompSpillSorterMarkPos(CompSpillSorter *sorter);
extern void CompSpillSorterRestorePos(CompSpillSorter *sorter);
extern void CompSpillSorterEnd(CompSpillSorter *sorter);
extern bool CompSpillSorterSpilled(CompSpillSorter *sorter);
extern int64 CompSpillSorterSpaceUsed(CompSpillSorter *sorter);
extern CompSpillStats *CompSpillSorterStats(CompSpillSorter *sorter);

/* planner.c */
extern void CompSpillInstallPlannerHook(void);

/* sortnode.c */
extern void CompSpillRegisterSortNode(void);
extern Plan *CompSpillMakeSortNode(Sort *sort);

/* materialnode.c */
extern void CompSpillRegisterMaterialNode(void);
extern Plan *CompSpillMakeMaterialNode(Material *mat);

/* ctenode.c */
extern void CompSpillRegisterCteNode(void);
extern Plan *CompSpillMakeCteNode(CteScan *cte, PlannedStmt *stmt);

/* stats.c */
typedef struct CompSpillSpaceClaim CompSpillSpaceClaim;

extern void CompSpillInstallSharedHooks(void);
extern void CompSpillCheckShared(void);
extern CompSpillSpaceClaim *CompSpillSpaceClaimCreate(void);
extern void CompSpillSpaceGrow(CompSpillSpaceClaim *claim, Size bytes);
extern void CompSpillSpaceDone(CompSpillSpaceClaim *claim);
extern void CompSpillReportSpill(const char *what, const CompSpillStats *st);

/* activity.c */
typedef struct CompSpillActivity CompSpillActivity;

extern Size CompSpillActivityShmemSize(void);
extern void CompSpillActivityShmemInit(void);
extern CompSpillActivity *CompSpillActivityBegin(const char *what,
												 const CompSpillStats *st);
extern void CompSpillActivityPublish(CompSpillActivity *act,
									 CompSpillPhase phase, int pass,
									 int npasses);

/* explain.c */
struct ExplainState;
extern void CompSpillExplainIndent(struct ExplainState *es);
extern void CompSpillExplainSpill(CompSpillStats *st, struct ExplainState *es);
extern void CompSpillExplainStore(bool spilled, CompSpillStats *st,
								  struct ExplainState *es);
extern void CompSpillExplainStorage(bool spilled, CompSpillStats *st,
									struct ExplainState *es);
extern void CompSpillExplainTuplestore(struct Tuplestorestate *ts,
									   struct ExplainState *es);

#endif							/* COMPSPILL_H */
