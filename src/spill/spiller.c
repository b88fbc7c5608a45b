/*-------------------------------------------------------------------------
 *
 * spiller.c
 *	  The spill object of one operation: its creation and end, its phase,
 *	  the space of its runs and the memory it holds.
 *
 * Everything an operation needs to spill belongs to one CompSpill: the
 * settings captured at executor start, the temp file, the compressor, the
 * writer's encoder and buffers, and a memory context holding all of it, so
 * that what the spill holds can be measured (MemoryContextMemAllocated) and
 * is freed in one go.  The sorter uses it, and any other operation that
 * spills rows can.  One run is written at a time; any number of readers
 * can read finished runs.
 *
 * The spill layer is a file per concern.  The layers above see spill/run.h
 * only; the spill object and the run reader, and what the files call in
 * one another, are in spill/run_private.h:
 *
 *		spiller.c		the spill object (this file)
 *		runwriter.c		writing runs: rows into frames in the spill file
 *		frame.c			the frame format: checksum, checks and decoding of
 *						a frame read back
 *		runreader.c		the readers of runs and their read window
 *		codecchoice.c	each run's frame kind and each frame's codec; with
 *						codec = auto, what the chooser is fed
 *		spillsizing.c	block, write and extent sizes; memory estimates
 *		spillfile.c		the temporary file the runs are streams of
 *
 * IDENTIFICATION
 *	  src/spill/spiller.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "base/buffer.h"
#include "codec/autocodec.h"
#include "codec/cipher.h"
#include "codec/compress.h"
#include "shared/activity.h"
#include "spill/run.h"
#include "spill/run_private.h"
#include "spill/spillfile.h"

/*
 * Create the spill object of an operation whose rows are of tupdesc, a node
 * called what in compspill_activity: open its temp file, with extents of
 * extent_size bytes and a write buffer of write_size bytes, and prepare to
 * write blocks of about block_size bytes.  Everything lives in a new memory
 * context under CurrentMemoryContext.
 */
CompSpillSpiller *
CompSpillSpillerCreate(TupleDesc tupdesc, const char *what,
				const CompSpillSettings *set, CompSpillStats *stats,
				Size block_size, Size write_size, Size extent_size)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	CompSpillSpiller *sp;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "CompSpill spill",
								COMPSPILL_SMALL_CONTEXT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	/*
	 * The auto codec's state, opaque here, follows the spill object in the
	 * same chunk: one allocation, zeroed whatever the codec, set up below
	 * for codec = auto only.
	 */
	sp = palloc0(MAXALIGN(sizeof(CompSpillSpiller)) + CompSpillAutoSize());
	sp->ac = (CompSpillAutoCodec *) ((char *) sp +
									 MAXALIGN(sizeof(CompSpillSpiller)));
	sp->cxt = cxt;
	sp->tupdesc = tupdesc;
	sp->set = *set;
	sp->stats = stats;
	sp->block_size = block_size;
	sp->comp = CompSpillCompressorCreate(set->level);
	CompSpillCompressorSetMemLimit(sp->comp, compspill_largest_block(set),
								   set->mem_limit);
	if (compspill_zstd_dict_size(set) > 0)
		CompSpillCompressorSetDictionary(sp->comp,
										 compspill_zstd_dict_size(set),
										 block_size);
	if (set->codec == COMPSPILL_CODEC_AUTO)
	{
		CompSpillAutoInit(sp->ac, set->level);
		/* the first run's sort comes before its first write: count it */
		INSTR_TIME_SET_CURRENT(sp->ac_write_wall);
	}
	sp->dev_mark = -1;
	sp->dev_base = -1;
	stats->queryid = set->queryid;
	stats->codec = set->codec;
	stats->dio_requested = set->dio;
	stats->encrypted = set->encrypt;
	stats->block_size = block_size;
	if (set->encrypt)
		sp->cipher = CompSpillCipherCreate();

	/* the file last, so that nothing above can leak it */
	sp->file = CompSpillFileCreate(set->dio, write_size, extent_size, stats);

	/* freed with the context, like the file's claim on temp space */
	sp->activity = CompSpillActivityBegin(what, stats);

	MemoryContextSwitchTo(oldcxt);
	return sp;
}

/*
 * Say what the spill does now, for compspill_activity: a phase, and for
 * COMPSPILL_PHASE_MERGING the pass and the passes planned.
 */
void
CompSpillSpillerSetPhase(CompSpillSpiller *sp, CompSpillPhase phase, int pass,
						 int npasses)
{
	sp->phase = phase;
	sp->pass = pass;
	sp->npasses = npasses;
	CompSpillActivityPublish(sp->activity, phase, pass, npasses);
}

/* Use blocks of about block_size bytes from the next run on */
void
CompSpillSpillerSetBlockSize(CompSpillSpiller *sp, Size block_size)
{
	Assert(sp->run == NULL);
	if (block_size == sp->block_size)
		return;
	sp->block_size = block_size;
	compspill_free_writer(sp);
}

/*
 * Compress with lz4 the frames that zstd would take (codec = zstd, or
 * auto's choice), or stop: for a spill written while the memory zstd's
 * state needs is still the rows' (a store's rows held when it spilled).
 * Frames are self-describing, so a run may mix the two; with codec = zstd,
 * lz4's state goes when the light codecs do.
 */
void
CompSpillSpillerSetLightCodec(CompSpillSpiller *sp, bool light)
{
	/* with codec = zstd, lz4 had no other use */
	if (sp->light_codec && !light && sp->set.codec == COMPSPILL_CODEC_ZSTD)
		CompSpillCompressorEndLz4(sp->comp);
	sp->light_codec = light;
}

/*
 * Return the settings of a spill whose frames take no codec state heavier
 * than lz4's (see CompSpillSpillerSetLightCodec), for what its writer
 * holds meanwhile: codec = zstd and auto are lz4 there.
 */
CompSpillSettings
CompSpillLightSettings(const CompSpillSettings *set)
{
	CompSpillSettings light = *set;

	if (light.codec == COMPSPILL_CODEC_ZSTD ||
		light.codec == COMPSPILL_CODEC_AUTO)
		light.codec = COMPSPILL_CODEC_LZ4;
	return light;
}

/* Give back the space of a run that will not be read again */
void
CompSpillRunRelease(CompSpillSpiller *sp, CompSpillRun *run)
{
	CompSpillFileRelease(sp->file, &run->extents, PG_INT64_MAX);
}

/*
 * Give back the extents of a run that lie wholly before the given offset
 * of its stream: its frames there will not be read again.  The run may be
 * the one being written, synced (CompSpillRunSync) past that offset.
 */
void
CompSpillRunReleaseBefore(CompSpillSpiller *sp, CompSpillRun *run, int64 offset)
{
	CompSpillFileRelease(sp->file, &run->extents, (off_t) offset);
}

/*
 * Free the writer's encoder and buffers, the file's write buffer and the
 * codec's compression state, for a phase that only reads; a later run
 * creates them again.
 */
void
CompSpillSpillerEndWrites(CompSpillSpiller *sp)
{
	Assert(sp->run == NULL);
	compspill_free_writer(sp);
	CompSpillFileEndWrites(sp->file);
	CompSpillCompressorEndWrites(sp->comp);
}

/*
 * Free the codec's decompression state, for a phase that only writes (a
 * sort's runs after a probe of its first): a later read creates it again.
 */
void
CompSpillSpillerEndReads(CompSpillSpiller *sp)
{
	CompSpillCompressorEndReads(sp->comp);
}

/* Close and delete the temp file and free everything the spill holds */
void
CompSpillSpillerEnd(CompSpillSpiller *sp)
{
	compspill_remember_device(sp);
	CompSpillFileClose(sp->file);
	MemoryContextDelete(sp->cxt);
}

/*
 * Return what the spill holds outside its memory contexts: the codec's
 * malloc'd contexts and the cipher's.  Its owner adds it to what it
 * measures.
 */
int64
CompSpillMallocHeld(CompSpillSpiller *sp)
{
	int64		held = (int64) CompSpillCompressorMemory(sp->comp);

	if (sp->cipher != NULL)
		held += (int64) CompSpillCipherMemory();
	return held;
}

/*
 * Return what of CompSpillMallocHeld a merge that writes nothing keeps:
 * the codec's decompression state and the cipher's contexts, not its
 * compression state.
 */
int64
CompSpillMallocReadHeld(CompSpillSpiller *sp)
{
	int64		held = (int64) CompSpillCompressorReadMemory(sp->comp);

	if (sp->cipher != NULL)
		held += (int64) CompSpillCipherMemory();
	return held;
}

/*
 * Return the memory the writer holds now: its encoder and scratch buffer,
 * the file's write buffer and the codec's compression state.
 */
int64
CompSpillWriterHeld(CompSpillSpiller *sp)
{
	int64		held = CompSpillFileBufferSize(sp->file) +
		(int64) CompSpillCompressorWriteMemory(sp->comp);

	if (sp->writecxt != NULL)
		held += MemoryContextMemAllocated(sp->writecxt, true);
	return held;
}
