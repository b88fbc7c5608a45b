/*-------------------------------------------------------------------------
 *
 * run.h
 *	  The spill layer's public face: the spill object of one operation,
 *	  runs of framed blocks in its file, and the readers of runs.
 *
 * The layers above (sorter, merge, store) spill rows through this and
 * nothing else: the codec, compression, cipher and file are the spill
 * object's.  Nothing in it is sort-specific.  The functions live in the
 * spill layer's files, one concern each (see spiller.c's banner), named
 * above each group below; what those files share is spill/run_private.h.
 *
 * IDENTIFICATION
 *	  src/spill/run.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_RUN_H
#define COMPSPILL_RUN_H

#include "access/htup.h"
#include "access/tupdesc.h"

#include "base/spillstats.h"
#include "shared/activity.h"
#include "spill/spillfile.h"

/* spiller.c and runreader.c; their fields are run_private.h's */
typedef struct CompSpillSpiller CompSpillSpiller;
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
	bool		rows;			/* its frames are row frames */
	bool		costly;			/* some column frame took the encodings
								 * that cost CPU (not light, see
								 * codecchoice.c's compspill_io_is_cheap) */
	Size		max_compressed_raw; /* the largest block of its frames stored
									 * compressed, raw; 0 when none is */
	Size		max_stored;		/* the largest payload of its frames */
	bool		zstd_frames;	/* some frame of it was stored with zstd */
	/*
	 * With CompSpillRunBeginIndexed: an entry for every index_stride-th
	 * frame (frames 0, stride, 2 * stride...), for seeks.  The stride
	 * doubles, and every other entry goes, when index_max entries are
	 * reached: the index stays within a 64th of work_mem however many
	 * frames the run has (a reader finds a frame between two entries by
	 * their headers, CompSpillReaderSeekRow).
	 */
	CompSpillFrameRef *index;
	int64		index_n;
	int64		index_cap;
	int64		index_max;
	int64		index_stride;

	/*
	 * The first frame still readable when the frames before it were given
	 * back (CompSpillRunReleaseBefore of an index entry's offset), and its
	 * number: the index entry it was may go when the index is thinned, and
	 * a reader must not look for frames from an entry before it.
	 */
	CompSpillFrameRef floor;
	int64		floor_frame;
} CompSpillRun;

/*
 * What a chunk too large for its context's blocks costs beyond its size
 * and chunk header: the block of its own it takes (aset.c), rounded up.
 */
#define COMPSPILL_CHUNK_BLOCK_OVERHEAD	64

/* the smallest block and write buffer a spill uses */
#define COMPSPILL_MIN_BLOCK_SIZE	(4 * 1024)
#define COMPSPILL_MIN_WRITE_SIZE	(8 * 1024)

/* spiller.c */
extern CompSpillSpiller *CompSpillSpillerCreate(TupleDesc tupdesc,
												 const char *what,
												 const CompSpillSettings *set,
												 CompSpillStats *stats,
												 Size block_size, Size write_size,
												 Size extent_size);
extern void CompSpillSpillerSetPhase(CompSpillSpiller *sp,
									 CompSpillPhase phase, int pass,
									 int npasses);
extern void CompSpillSpillerSetBlockSize(CompSpillSpiller *sp, Size block_size);
extern void CompSpillSpillerSetLightCodec(CompSpillSpiller *sp, bool light);
extern CompSpillSettings CompSpillLightSettings(const CompSpillSettings *set);
extern void CompSpillRunRelease(CompSpillSpiller *sp, CompSpillRun *run);
extern void CompSpillRunReleaseBefore(CompSpillSpiller *sp, CompSpillRun *run,
									  int64 offset);
extern void CompSpillSpillerEndWrites(CompSpillSpiller *sp);
extern void CompSpillSpillerEnd(CompSpillSpiller *sp);
extern int64 CompSpillMallocHeld(CompSpillSpiller *sp);
extern int64 CompSpillMallocReadHeld(CompSpillSpiller *sp);
extern void CompSpillSpillerEndReads(CompSpillSpiller *sp);
extern int64 CompSpillWriterHeld(CompSpillSpiller *sp);

/* runwriter.c */
extern void CompSpillRunSetBlockSize(CompSpillSpiller *sp, Size block_size);
extern void CompSpillRunBegin(CompSpillSpiller *sp, CompSpillRun *run);
extern void CompSpillRunBeginRows(CompSpillSpiller *sp, CompSpillRun *run);
extern void CompSpillRunPutTuple(CompSpillSpiller *sp, MinimalTuple tup);
extern void CompSpillRunPutMinimal(CompSpillSpiller *sp, MinimalTuple tup);
extern void CompSpillRunBeginIndexed(CompSpillSpiller *sp, CompSpillRun *run,
									 bool rows);
extern void CompSpillRunSync(CompSpillSpiller *sp);
extern int64 CompSpillRunWritten(CompSpillSpiller *sp);
extern void CompSpillRunPutValues(CompSpillSpiller *sp, Datum *values,
								  bool *isnull);
extern void CompSpillRunCutFrame(CompSpillSpiller *sp);
extern void CompSpillRunEnd(CompSpillSpiller *sp);

/* codecchoice.c */
extern bool CompSpillWantRowFrames(CompSpillSpiller *sp);
extern bool CompSpillWantStoreRowFrames(CompSpillSpiller *sp);
extern void CompSpillSpillerSetExpectedReads(CompSpillSpiller *sp, double reads);
extern void CompSpillSpillerSetExpectedRows(CompSpillSpiller *sp, double rows,
											int width);

/* runreader.c */
extern CompSpillRunReader *CompSpillReaderCreate(CompSpillSpiller *sp);
extern void CompSpillReaderOpen(CompSpillRunReader *r, CompSpillRun *run,
								bool consume);
extern int64 CompSpillFrameRefFind(const CompSpillFrameRef *refs, int64 n,
								   int64 row);
extern void CompSpillReaderSeekRow(CompSpillRunReader *r, CompSpillRun *run,
								   int64 nframes, int64 row, int64 *first,
								   int64 *end);
extern bool CompSpillReaderNext(CompSpillRunReader *r, Datum **values,
								bool **isnull);
extern MinimalTuple CompSpillReaderNextTuple(CompSpillRunReader *r);
extern int64 CompSpillReaderHeld(CompSpillRunReader *r);
extern int64 CompSpillReaderGrowth(CompSpillRunReader *r);
extern int64 CompSpillReaderBufferHeld(CompSpillRunReader *r);
extern int64 CompSpillReaderFrameHeld(CompSpillRunReader *r);
extern int64 CompSpillRunBufferMemory(CompSpillSpiller *sp,
									  const CompSpillRun *run,
									  bool as_written);
extern int64 CompSpillReaderBufferBound(CompSpillSpiller *sp);
extern void CompSpillReaderFree(CompSpillRunReader *r);

/* spillsizing.c */
extern int64 CompSpillMallocGrowth(CompSpillSpiller *sp, bool compressing);
extern int64 CompSpillReadGrowth(CompSpillSpiller *sp);
extern int64 CompSpillMallocEstimate(const CompSpillSettings *set,
									 Size block);
extern void CompSpillChooseSizes(const CompSpillSettings *set,
								 int64 allowed_mem, Size *block_size,
								 Size *write_size, Size *extent_size);
extern Size CompSpillWriterMemory(Size block_size, Size write_size);
extern Size CompSpillWriterMemoryBound(Size block_size, Size write_size);
extern Size CompSpillRowWriterMemoryBound(Size block_size, Size write_size);
extern Size CompSpillReaderEstimate(CompSpillSpiller *sp, bool rows);
extern Size CompSpillReaderEstimateAt(CompSpillSpiller *sp, bool rows,
									  Size block);
extern int64 CompSpillRunMapReserve(CompSpillSpiller *sp, int64 bytes);

#endif							/* COMPSPILL_RUN_H */
