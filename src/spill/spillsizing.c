/*-------------------------------------------------------------------------
 *
 * spillsizing.c
 *	  The sizes a spill uses and the memory they take: blocks, writes and
 *	  extents, and the estimates and bounds of what writers and readers hold.
 *
 * The operations that spill (sorts and stores) size their memory with
 * these: before the spill exists, from the settings and work_mem
 * (CompSpillChooseSizes, CompSpillWriterMemory, CompSpillMallocEstimate),
 * and as it goes, from the frames written so far (CompSpillReaderEstimate,
 * CompSpillMallocGrowth, CompSpillRunMapReserve).  What a spill holds now
 * is measured, not estimated: spiller.c's CompSpillWriterHeld and
 * CompSpillMallocHeld, runreader.c's CompSpillReaderHeld.
 *
 * IDENTIFICATION
 *	  src/spill/spillsizing.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/buffer.h"
#include "codec/cipher.h"
#include "codec/compress.h"
#include "spill/frame.h"
#include "spill/run.h"
#include "spill/run_private.h"
#include "spill/spillfile.h"

/*
 * Return the largest block a spill with the given settings writes (see
 * CompSpillChooseSizes), for its codec's memory.
 */
Size
compspill_largest_block(const CompSpillSettings *set)
{
	Size		block;

	CompSpillChooseSizes(set, Max(set->mem_limit, (int64) 64 * 1024), &block,
						 NULL, NULL);
	return block;
}

/*
 * Return the size of the zstd dictionary a spill with the given settings
 * compresses against (see compress.c), or 0 for none: with codec = zstd,
 * compspill.zstd_dictionary, at most a 256th of work_mem, and none under
 * 8kB: the dictionary's digested forms take some 60kB whatever its size
 * (3% of a 2MB work_mem).
 */
Size
compspill_zstd_dict_size(const CompSpillSettings *set)
{
	Size		size;

	if (set->codec != COMPSPILL_CODEC_ZSTD)
		return 0;
	size = set->zstd_dict;
	if (set->mem_limit > 0)
		size = Min(size, (Size) (set->mem_limit / 256));
	return size >= 8192 ? size : 0;
}

/*
 * Return what the spill's codec state may still grow by (see
 * CompSpillCompressorGrowth), for writing and reading when compressing,
 * else for reading only: memory that runs about to be written, or a merge
 * about to read, must leave room for, since it comes with the first frame
 * that needs it.
 */
int64
CompSpillMallocGrowth(CompSpillSpiller *sp, bool compressing)
{
	return (int64) CompSpillCompressorGrowth(sp->comp, sp->set.codec,
											 compressing);
}

/*
 * Return what the spill's codec state may still grow by to read the frames
 * written so far: zstd's decompression context, until it exists, if some
 * frame was stored with zstd.  For a merge that writes nothing.
 */
int64
CompSpillReadGrowth(CompSpillSpiller *sp)
{
	return (int64) CompSpillCompressorGrowth(sp->comp, sp->zstd_frames ?
											 COMPSPILL_CODEC_ZSTD :
											 COMPSPILL_CODEC_NONE, false);
}

/*
 * Estimate what the writer of a spill with the given settings will hold
 * outside its memory contexts, and its lz4 state, while it writes its
 * first run with blocks of about block bytes (0: the largest the settings
 * allow): for a reservation made before the spill exists.  What later
 * runs' larger blocks and reading add (zstd's decompression context) is
 * CompSpillMallocGrowth's, after.
 */
int64
CompSpillMallocEstimate(const CompSpillSettings *set, Size block)
{
	int64		held;

	/* a block may pass its size by a row: count blocks of twice it */
	held = (int64) CompSpillCodecMemoryEstimate(set->codec, set->level,
												compspill_largest_block(set),
												block * 2, set->mem_limit,
												compspill_zstd_dict_size(set),
												false);

	if (set->encrypt)
		held += (int64) CompSpillCipherMemory();
	return held;
}

/*
 * The spill sizing policy of every operation that spills (sorts and
 * stores): blocks and writes of the sizes the settings ask for, capped at
 * a sixteenth of work_mem each, at least the smallest sizes, blocks in
 * whole kB and writes in whole pages; and extents of a 64th of work_mem,
 * at most 256kB and at least a page.  A run holds a work_mem of rows,
 * compressed to a third or so: such an extent wastes a few percent at each
 * run's end, keeps what consuming readers have not given back yet small,
 * and keeps the extent maps (a range per extent at worst, after merge
 * passes) a small part of work_mem.  Any of the outputs may be NULL.
 */
void
CompSpillChooseSizes(const CompSpillSettings *set, int64 allowed_mem,
					 Size *block_size, Size *write_size, Size *extent_size)
{
	Size		cap = (Size) (allowed_mem / 16);
	Size		extent;

	if (block_size)
		*block_size = TYPEALIGN(1024, Max(Min(set->block_size, cap),
										  (Size) COMPSPILL_MIN_BLOCK_SIZE));
	if (write_size)
		*write_size = COMPSPILL_ALIGN_UP(Max(Min(set->write_size, cap),
											 (Size) COMPSPILL_MIN_WRITE_SIZE));
	extent = COMPSPILL_ALIGN_DOWN(Min((Size) (allowed_mem / 64),
									  (Size) 256 * 1024));
	if (extent_size)
		*extent_size = Max(extent, COMPSPILL_ALIGN);
}

/*
 * Estimate the memory a writer holds for blocks of block_size and writes
 * of write_size: the encoder's streams, the scratch buffer and the file's
 * aligned write buffer.
 */
Size
CompSpillWriterMemory(Size block_size, Size write_size)
{
	Size		encoder = block_size + block_size / 2;
	Size		scratch = block_size + block_size / 4;
	Size		wbuf = COMPSPILL_ALIGN_UP(Max(write_size, COMPSPILL_ALIGN));

	return encoder + scratch + wbuf + 2048;
}

/*
 * Bound the memory a writer of column frames may reach for blocks of
 * block_size: the encoder's streams double as they grow, and the column
 * encodings keep buffers of their own, about 30kB whatever the block
 * size.  Measured on rows of 2 to 7 columns, 4kB to 256kB blocks, lz4:
 * 44kB at 4kB blocks, 166kB-248kB at 48kB-64kB, 862kB at 256kB, where
 * CompSpillWriterMemory says 22kB, 145kB-190kB and 731kB.  For a
 * reservation that the writer must stay within (the sort's later runs).
 */
Size
CompSpillWriterMemoryBound(Size block_size, Size write_size)
{
	return CompSpillWriterMemory(block_size, write_size) + block_size +
		32 * 1024;
}

/*
 * Bound the memory a writer of row frames may reach for blocks of
 * block_size: the rows of the frame being written, in a buffer an eighth
 * over the block that grows to take the row passing it (counted as a
 * block more), the file's aligned write buffer, and 8kB for the spill's
 * own state (its object, the codec chooser's, the file's, the run's
 * index).  No encoder and no scratch buffer: the rows are compressed from
 * their own buffer.  A store spilling at 1MB held 29kB in its spill's
 * context at its peak, with 4kB blocks and 8kB writes (lz4's state, not
 * made yet, apart).
 */
Size
CompSpillRowWriterMemoryBound(Size block_size, Size write_size)
{
	Size		wbuf = COMPSPILL_ALIGN_UP(Max(write_size, COMPSPILL_ALIGN));

	return 2 * block_size + block_size / 8 + wbuf + 8192;
}

/*
 * Work out the average raw and stored size of the frames written so far,
 * all passes.
 */
void
compspill_average_frame(CompSpillSpiller *sp, Size *raw, Size *stored)
{
	int64		nframes = Max(sp->frames_written, 1);

	*raw = sp->raw_written / nframes;
	*stored = CompSpillFileBytesWritten(sp->file) / nframes;
}

/*
 * Estimate what one reader of the spill's runs will hold, its buffers
 * apart (a merge counts them per run, CompSpillRunBufferMemory), from the
 * frames written so far: the fixed-width arrays rebuilt from their byte
 * planes for a frame of the average rows, one decoded row and the
 * contexts' own overhead.  A reader of runs of row frames (rows) needs no
 * arrays for the columns, only a buffer for the largest row.
 */
Size
CompSpillReaderEstimate(CompSpillSpiller *sp, bool rows)
{
	int64		nframes = Max(sp->frames_written, 1);
	Size		fixed_size = 0;

	if (rows)
		return MAXALIGN(sp->max_row) + 256 + 2048;

	/* fixed-width columns are rebuilt from byte planes into their own array */
	for (int a = 0; a < sp->tupdesc->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(sp->tupdesc, a);

		if (attr->attlen > 1)
			fixed_size += attr->attlen;
	}
	fixed_size *= sp->rows_formed / nframes + 1;

	return fixed_size + 2048;
}

/*
 * Estimate what one reader will hold once frames are cut at block bytes
 * instead of the spill's present block size, buffers included: what
 * CompSpillReaderEstimate says and its buffers for the frames written so
 * far (a window holding the largest frame and the pages it straddles, a
 * decompression buffer for the average block when some frame was stored
 * compressed), scaled to that size, plus the rows' values a reader of
 * column frames rebuilds for the frame it decodes, about a frame's worth
 * of the rows as they came in (the arena of blockcodec.c's decoded block).
 * For choosing the block size of a spill's later runs from its first
 * run's frames.
 */
Size
CompSpillReaderEstimateAt(CompSpillSpiller *sp, bool rows, Size block)
{
	double		scale = (double) block / Max(sp->block_size, 1);
	Size		now = CompSpillReaderEstimate(sp, rows);
	Size		rebuilt = 0;
	Size		raw_size;
	Size		stored_size;

	compspill_average_frame(sp, &raw_size, &stored_size);
	if (CompSpillFileAligned(sp->file))
		now += COMPSPILL_ALIGN_UP(Max(stored_size, COMPSPILL_MIN_READ_BUFFER)) +
			COMPSPILL_ALIGN;
	else
		now += MAXALIGN(Max(sp->max_stored, stored_size) +
						COMPSPILL_FRAME_HEADER_SIZE);
	if (sp->max_compressed_raw > 0)
		now += raw_size;
	if (!rows && sp->frames_written > 0)
		rebuilt = (Size) (sp->stats->bytes_in / sp->frames_written);

	/* everything but the reader's fixed 2kB grows with its frames */
	return 2048 + (Size) ((double) (now - 2048 + rebuilt) * Max(scale, 1.0));
}

/*
 * Return the most memory the extent maps of runs holding bytes bytes in all
 * can take (see CompSpillFileMapReserve).
 */
int64
CompSpillRunMapReserve(CompSpillSpiller *sp, int64 bytes)
{
	return CompSpillFileMapReserve(sp->file, bytes);
}
