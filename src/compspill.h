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
 *	planner.c		plan rewrite: Sort -> Custom Scan (CompSpill Sort)
 *	sortnode.c		CustomScan callbacks and EXPLAIN output
 *	sorter.c		in-memory sort, run formation, k-way merge
 *	run.c			a run as a sequence of framed, checksummed blocks
 *	blockcodec.c	N rows <-> column streams (bitmaps, arrays, lengths)
 *	compress.c		none / lz4 / zstd on byte buffers
 *	spillfile.c		the temp file: aligned, coalesced writes, O_DIRECT
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

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 160000
#error "compspill supports PostgreSQL 15 only"
#endif

/* I/O alignment for direct I/O: buffers, file offsets and lengths */
#define COMPSPILL_ALIGN			4096
#define COMPSPILL_ALIGN_UP(x)	TYPEALIGN(COMPSPILL_ALIGN, (x))
#define COMPSPILL_ALIGN_DOWN(x) TYPEALIGN_DOWN(COMPSPILL_ALIGN, (x))

/* Name under which the CustomScan methods are registered */
#define COMPSPILL_SORT_NAME		"CompSpill Sort"

typedef enum CompSpillCodec
{
	COMPSPILL_CODEC_NONE = 0,
	COMPSPILL_CODEC_LZ4 = 1,
	COMPSPILL_CODEC_ZSTD = 2
} CompSpillCodec;

/* settings (compspill.c) */
extern bool compspill_enabled;
extern int	compspill_codec;
extern int	compspill_compression_level;
extern bool compspill_enable_dio;
extern int	compspill_block_size;	/* kB */
extern int	compspill_write_size;	/* kB */

/*
 * Spill figures of one operation, filled in by every layer and printed by
 * EXPLAIN ANALYZE.  One struct per sort; the layers get a pointer to it.
 */
typedef struct CompSpillStats
{
	CompSpillCodec codec;		/* codec asked for */
	bool		dio_requested;	/* compspill.enable_dio at start */
	bool		dio_active;		/* direct I/O actually in use */
	int			nruns;			/* runs written by run formation */
	int			merge_passes;	/* passes over the data, final merge
								 * included */
	int64		rows_spilled;	/* rows written by run formation */
	int64		bytes_in;		/* in-memory size of the spilled tuples */
	int64		bytes_raw;		/* encoded size before compression, all
								 * passes */
	int64		bytes_written_runs; /* file bytes written by run formation */
	int64		bytes_written;	/* file bytes written, all passes */
	int64		bytes_read;		/* file bytes read, all passes */
	int64		blocks_written; /* blocks written, all passes */
	int64		blocks_raw;		/* blocks stored uncompressed */
	instr_time	write_time;		/* time in FileWrite */
	instr_time	read_time;		/* time in FileRead */
} CompSpillStats;

/* compress.c */
typedef struct CompSpillCompressor CompSpillCompressor;

extern const char *CompSpillCodecName(CompSpillCodec codec);
extern CompSpillCompressor *CompSpillCompressorCreate(CompSpillCodec codec,
													  int level);
extern Size CompSpillCompressBound(CompSpillCompressor *comp, Size srclen);
extern Size CompSpillCompress(CompSpillCompressor *comp, const char *src,
							  Size srclen, char *dst, Size dstcap);
extern bool CompSpillDecompress(CompSpillCompressor *comp,
								CompSpillCodec codec,
								const char *src, Size srclen,
								char *dst, Size rawlen,
								const char **errdetail);

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

extern char *CompSpillAllocAligned(Size size);
extern void CompSpillFreeAligned(char *ptr);
extern CompSpillFile *CompSpillFileCreate(bool dio, Size write_size,
										  CompSpillStats *stats);
extern char *CompSpillFileReserve(CompSpillFile *file, Size len);
extern off_t CompSpillFileCommit(CompSpillFile *file, Size len);
extern void CompSpillFileFlush(CompSpillFile *file);
extern void CompSpillFileEndWrites(CompSpillFile *file);
extern Size CompSpillFileRead(CompSpillFile *file, off_t offset, char *buf,
							  Size len, Size need);
extern const char *CompSpillFileName(CompSpillFile *file);
extern void CompSpillFileClose(CompSpillFile *file);

/* run.c */

/* Where a run lies in the spill file */
typedef struct CompSpillRun
{
	off_t		start;			/* offset of the first block */
	off_t		end;			/* offset just past the last block */
	int64		nrows;
	int64		nblocks;
} CompSpillRun;

typedef struct CompSpillRunWriter CompSpillRunWriter;
typedef struct CompSpillRunReader CompSpillRunReader;

extern CompSpillRunWriter *CompSpillRunWriterCreate(CompSpillFile *file,
													TupleDesc tupdesc,
													CompSpillCompressor *comp,
													CompSpillCodec codec,
													Size block_size,
													CompSpillStats *stats);
extern void CompSpillRunBegin(CompSpillRunWriter *w);
extern void CompSpillRunPut(CompSpillRunWriter *w, Datum *values,
							bool *isnull);
extern void CompSpillRunEnd(CompSpillRunWriter *w, CompSpillRun *run);
extern void CompSpillRunWriterFree(CompSpillRunWriter *w);
extern Size CompSpillRunWriterMemory(Size block_size, Size write_size);

extern CompSpillRunReader *CompSpillRunReaderCreate(CompSpillFile *file,
													TupleDesc tupdesc,
													CompSpillCompressor *comp,
													Size block_size,
													CompSpillStats *stats);
extern void CompSpillRunReaderOpen(CompSpillRunReader *r,
								   const CompSpillRun *run);
extern bool CompSpillRunReaderNext(CompSpillRunReader *r, Datum **values,
								   bool **isnull);
extern void CompSpillRunReaderFree(CompSpillRunReader *r);
extern Size CompSpillRunReaderMemory(Size raw_size, Size stored_size,
									 Size fixed_size);

/* sorter.c */
typedef struct CompSpillSorter CompSpillSorter;

typedef struct CompSpillSortSpec
{
	int			nkeys;
	AttrNumber *attnums;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nulls_first;
} CompSpillSortSpec;

extern CompSpillSorter *CompSpillSorterBegin(TupleDesc tupdesc,
											 const CompSpillSortSpec *spec,
											 int work_mem_kb);
extern void CompSpillSorterPut(CompSpillSorter *sorter,
							   TupleTableSlot *slot);
extern void CompSpillSorterFinish(CompSpillSorter *sorter);
extern TupleTableSlot *CompSpillSorterGet(CompSpillSorter *sorter);
extern void CompSpillSorterRewind(CompSpillSorter *sorter);
extern void CompSpillSorterEnd(CompSpillSorter *sorter);
extern bool CompSpillSorterSpilled(CompSpillSorter *sorter);
extern int64 CompSpillSorterSpaceUsed(CompSpillSorter *sorter);
extern CompSpillStats *CompSpillSorterStats(CompSpillSorter *sorter);

/* planner.c */
extern void CompSpillInstallPlannerHook(void);

/* sortnode.c */
extern void CompSpillRegisterSortNode(void);
extern Plan *CompSpillMakeSortNode(Sort *sort);

#endif							/* COMPSPILL_H */
