/*-------------------------------------------------------------------------
 *
 * blockcodec.h
 *	  The block codec: N rows to column streams and back (blockcodec.c).
 *
 * Knows tuple descriptors and Datums, not frames, compression or files.
 * Its caller is the spill layer: spill/runwriter.c encodes, and each run
 * reader (spill/run_private.h) embeds a decoded block that spill/frame.c
 * decodes into.  The fields marked private are the codec's; they stay in
 * the struct, which its owner embeds by value, because the column
 * encodings (enc/) use the arena for each value and test/fuzz checks that
 * by-reference values lie within it.
 *
 * IDENTIFICATION
 *	  src/codec/blockcodec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_BLOCKCODEC_H
#define COMPSPILL_BLOCKCODEC_H

#include "access/htup.h"
#include "access/tupdesc.h"

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
	char	   *fixed;			/* fixed-width columns with their planes
								 * undone; dictionaries and their codes */
	Size		fixed_cap;
	MemoryContext cxt;
} CompSpillDecodedBlock;

extern CompSpillEncoder *CompSpillEncoderCreate(TupleDesc tupdesc,
												Size target_size);
extern void CompSpillEncoderAdd(CompSpillEncoder *enc, Datum *values,
								bool *isnull);
extern void CompSpillEncoderAddMinimal(CompSpillEncoder *enc,
									   MinimalTuple tup);
extern bool CompSpillEncoderIsFull(CompSpillEncoder *enc);
extern void CompSpillEncoderSetLight(CompSpillEncoder *enc, bool light);
extern void CompSpillEncoderSetCompressed(CompSpillEncoder *enc,
										  bool compressed);
extern void CompSpillEncoderNewRun(CompSpillEncoder *enc);
extern void CompSpillEncoderSetRecheck(CompSpillEncoder *enc, int blocks);
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

#endif							/* COMPSPILL_BLOCKCODEC_H */
