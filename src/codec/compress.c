/*-------------------------------------------------------------------------
 *
 * compress.c
 *	  Compress and decompress spill blocks with none, lz4 or zstd.
 *
 * A compressor is created once per operation and reused for every block.
 * It is not tied to one codec: each call names the codec to use, so that
 * compspill.codec = auto (autocodec.c) can change its choice from block to
 * block.  The state each codec needs (the lz4 state, the zstd compression
 * and decompression contexts) is created the first time that codec is
 * used and kept until the operation ends, so an operation that never
 * touches zstd never allocates a zstd context.  The zstd contexts come
 * from malloc inside libzstd; a reset callback on the memory context the
 * compressor lives in frees them, so that an error, which deletes that
 * context, does not leak them.
 *
 * Memory
 * ------
 *
 * Being malloc'd, the zstd contexts are not in any memory context, so
 * MemoryContextMemAllocated does not see them: CompSpillCompressorMemory
 * reports what they hold (ZSTD_sizeof_CCtx, ZSTD_sizeof_DCtx), and the
 * spill's owners add it to what they measure.  The lz4 state is palloc'd
 * in the compressor's context and measured with it.  What zstd takes
 * grows with the block size (its window, hash tables and block buffers):
 * at level 1, a compression context takes 74kB for blocks of 4kB and
 * 304kB for 64kB; a decompression context always takes 96kB.  Given the
 * operation's memory limit, the compressor keeps both within a quarter of
 * it (COMPSPILL_ZSTD_SHARE) by lowering the window, and with it the hash
 * and chain tables, from what the level would use for the largest block
 * the spill sizing policy allows; CompSpillCodecMemoryEstimate says beforehand what the
 * contexts will take, for the owner's reservation.  The estimates use
 * zstd's ZSTD_getCParams and ZSTD_estimate*Size, of its static-linking
 * API (exported by the shared library since zstd 1.3, and exact: what
 * ZSTD_sizeof_CCtx reports afterwards, at most).
 *
 * Dictionary
 * ----------
 *
 * zstd compresses a spill's small blocks (4-6kB at 4MB, where a one-pass
 * merge of some 250 runs keeps the blocks small) far better against a
 * dictionary: the first blocks' bytes, whose rows are like the later ones.
 * A compressor asked for one (CompSpillCompressorSetDictionary) keeps the
 * first dict_size bytes of the blocks it compresses with zstd, and from
 * then on compresses with zstd against them, in raw-content mode (no
 * training: the bytes are the dictionary), reporting so to the caller,
 * which marks the frame; decompression of such a frame needs the same
 * dictionary, which lives as long as the compressor.  The digested forms
 * (ZSTD_CDict for compressing, ZSTD_DDict for decompressing) reference the
 * bytes, are malloc'd like the contexts and counted with them.  On
 * lineitem rows in 5kB blocks a 16kB dictionary stores 18-21% fewer bytes
 * for 12% more compression time (test/codec/codecbench, CODECBENCH_DICT_KB).
 *
 * COMPSPILL_CODEC_AUTO is a setting value only: it must be resolved to a
 * real codec before a block is compressed, and it is never stored in a
 * frame.
 *
 * Compression is a bet: a block whose compressed form is not strictly
 * smaller than its raw form is reported as "did not pay" (a zero result)
 * and the caller stores it raw.  Decompression works for any codec,
 * because a run may mix compressed and raw blocks, and with auto several
 * codecs.  It never raises an error about the data: it
 * returns false with a sentence describing the failure, and the caller,
 * which knows the file and the offset, reports the corruption.
 *
 * IDENTIFICATION
 *	  src/codec/compress.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

/*
 * For LZ4_DECOMPRESS_INPLACE_MARGIN only, a macro (lz4 1.9.3 and later); no
 * function of lz4's static-linking section is used.
 */
#define LZ4_STATIC_LINKING_ONLY
#include <lz4.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_getCParams, ZSTD_estimate*Size */
#include <zstd.h>
#include <zstd_errors.h>

#include "utils/memutils.h"

#include "base/spillstats.h"
#include "codec/compress.h"

/* The zstd contexts take at most this fraction of the memory limit */
#define COMPSPILL_ZSTD_SHARE		4

/* What the palloc'd lz4 state takes, with its chunk's header */
#define COMPSPILL_LZ4_STATE_MEM		((Size) LZ4_sizeofState() + 64)

struct CompSpillCompressor
{
	int			zstd_level;		/* zstd compression level */
	int64		mem_limit;		/* the operation's memory, 0 if unknown */
	Size		largest_block;	/* the largest block it may compress */
	MemoryContext cxt;			/* context holding this struct */
	ZSTD_CCtx  *zcctx;			/* zstd compression context, or NULL */
	ZSTD_DCtx  *zdctx;			/* zstd decompression context, or NULL */
	void	   *lz4state;		/* lz4 compression state, or NULL */

	/* zstd's dictionary: the first dict_size bytes compressed with zstd */
	Size		dict_size;		/* 0: none asked for */
	Size		dict_block;		/* the blocks it is for, to size its tables */
	char	   *dict;			/* palloc'd with the first zstd block */
	Size		dict_len;		/* bytes of it filled */
	ZSTD_CDict *zcdict;			/* digested for compressing, or NULL */
	ZSTD_DDict *zddict;			/* digested for decompressing, or NULL */
	MemoryContextCallback cb;	/* frees the zstd contexts */
};

static void compspill_compressor_free(void *arg);
static void compspill_free_zstd_cctx(CompSpillCompressor *comp);
static ZSTD_CCtx *compspill_get_zstd_cctx(CompSpillCompressor *comp);
static ZSTD_DCtx *compspill_get_zstd_dctx(CompSpillCompressor *comp);

/*
 * Free the malloc'd zstd contexts of a compressor; a memory-context reset
 * callback.
 */
static void
compspill_compressor_free(void *arg)
{
	CompSpillCompressor *comp = (CompSpillCompressor *) arg;

	compspill_free_zstd_cctx(comp);
	CompSpillCompressorEndReads(comp);
}

/*
 * Create a compressor in CurrentMemoryContext; codec state comes later,
 * with the first block that needs it.
 */
CompSpillCompressor *
CompSpillCompressorCreate(int zstd_level)
{
	CompSpillCompressor *comp;

	comp = (CompSpillCompressor *) palloc0(sizeof(CompSpillCompressor));
	comp->zstd_level = zstd_level;
	comp->cxt = CurrentMemoryContext;

	/* register the callback first, so that whatever follows is covered */
	comp->cb.func = compspill_compressor_free;
	comp->cb.arg = comp;
	MemoryContextRegisterResetCallback(comp->cxt, &comp->cb);

	return comp;
}

/*
 * Tell the compressor the memory limit of its operation, in bytes, and the
 * largest block it may be given, before its first block: its zstd contexts
 * are then kept within a COMPSPILL_ZSTD_SHARE-th of the limit.
 */
void
CompSpillCompressorSetMemLimit(CompSpillCompressor *comp, Size largest_block,
							   int64 mem_limit)
{
	Assert(comp->zcctx == NULL);
	comp->largest_block = largest_block;
	comp->mem_limit = mem_limit;
}

/*
 * Ask the compressor for a zstd dictionary of dict_size bytes, made of the
 * first bytes it compresses with zstd, for blocks of about block bytes
 * (see the banner); before its first block.
 */
void
CompSpillCompressorSetDictionary(CompSpillCompressor *comp, Size dict_size,
								 Size block)
{
	Assert(comp->dict == NULL);
	comp->dict_size = dict_size;
	comp->dict_block = Max(block, (Size) 1024);
}

/*
 * The compression parameters of the dictionary's digested form: the
 * level's own for a block of dict_block bytes against it, with a hash
 * table of at most 8192 entries and a chain table of 4096 (32kB and 16kB),
 * plenty for the few tens of kB a block and its dictionary hold, where the
 * level's own for such small inputs would take up to 211kB.  (A hash table
 * of 4096 entries stores 1.5-2% more bytes on lineitem.)
 */
static ZSTD_compressionParameters
compspill_zstd_dict_params(int level, Size dict_size, Size dict_block)
{
	ZSTD_compressionParameters cp;

	cp = ZSTD_getCParams(level, (unsigned long long) dict_block, dict_size);
	cp.hashLog = Min(cp.hashLog, 13);
	cp.chainLog = Min(cp.chainLog, 12);
	return cp;
}

/* What the dictionary's own bytes take, palloc'd, with their chunk */
#define COMPSPILL_DICT_MEM(size)	(MAXALIGN(size) + 64)

/* Estimate the dictionary's digested form for compressing */
static Size
compspill_zstd_cdict_estimate(int level, Size dict_size, Size dict_block)
{
	return ZSTD_estimateCDictSize_advanced(dict_size,
										   compspill_zstd_dict_params(level,
																	  dict_size,
																	  dict_block),
										   ZSTD_dlm_byRef);
}

/*
 * Estimate what the dictionary of dict_size bytes takes when complete: its
 * bytes, its digested form for compressing, and for reading the one for
 * decompressing.
 */
static Size
compspill_zstd_dict_estimate(int level, Size dict_size, Size dict_block,
							 bool reading)
{
	Size		total;

	if (dict_size == 0)
		return 0;
	total = COMPSPILL_DICT_MEM(dict_size) +
		compspill_zstd_cdict_estimate(level, dict_size, dict_block);
	if (reading)
		total += ZSTD_estimateDDictSize(dict_size, ZSTD_dlm_byRef);
	return total;
}

/*
 * Work out the zstd compression parameters for level within mem_limit
 * (none if 0): the level's own for blocks of largest_block bytes,
 * with a smaller window (and hash and chain tables no larger than it)
 * until the compression context and a decompression context fit a
 * COMPSPILL_ZSTD_SHARE-th of the limit, or the window is zstd's smallest.
 * Return whether they were lowered.
 */
static bool
compspill_zstd_params(int level, Size largest_block, int64 mem_limit,
					  ZSTD_compressionParameters *cp)
{
	int64		budget;
	bool		lowered = false;

	*cp = ZSTD_getCParams(level, (unsigned long long) largest_block, 0);
	if (mem_limit <= 0)
		return false;
	budget = mem_limit / COMPSPILL_ZSTD_SHARE - (int64) ZSTD_estimateDCtxSize();
	while (cp->windowLog > ZSTD_WINDOWLOG_MIN &&
		   (int64) ZSTD_estimateCCtxSize_usingCParams(*cp) > budget)
	{
		cp->windowLog--;
		cp->hashLog = Min(cp->hashLog, cp->windowLog + 1);
		cp->chainLog = Min(cp->chainLog, cp->windowLog + 1);
		lowered = true;
	}
	return lowered;
}

/*
 * Estimate what a zstd compression context takes at level, set up for
 * blocks of up to largest_block bytes within mem_limit (see
 * compspill_zstd_params), while it compresses blocks of at most block
 * bytes (0: largest_block): zstd fits its tables to a smaller input, and
 * allocates no more than they take until a larger block comes.
 */
static Size
compspill_zstd_cctx_estimate(int level, Size largest_block, Size block,
							 int64 mem_limit)
{
	ZSTD_compressionParameters cp;

	(void) compspill_zstd_params(level, largest_block, mem_limit, &cp);
	if (block > 0 && block < largest_block)
		cp = ZSTD_adjustCParams(cp, (unsigned long long) block, 0);
	return ZSTD_estimateCCtxSize_usingCParams(cp);
}

/*
 * Estimate what the state of codec takes for an operation whose memory
 * limit is mem_limit and whose blocks are of up to largest_block bytes,
 * while it compresses blocks of at most block bytes (0: largest_block):
 * with zstd its compression context, and its decompression context if
 * reading too, and the dictionary of dict_size bytes if one is asked for
 * (0: none), with lz4 its state, with auto both.  The owner of a spill
 * reserves it before the spill exists.
 */
Size
CompSpillCodecMemoryEstimate(CompSpillCodec codec, int zstd_level,
							 Size largest_block, Size block,
							 int64 mem_limit, Size dict_size, bool reading)
{
	Size		total = 0;

	if (codec == COMPSPILL_CODEC_LZ4 || codec == COMPSPILL_CODEC_AUTO)
		total += COMPSPILL_LZ4_STATE_MEM;
	if (codec == COMPSPILL_CODEC_ZSTD || codec == COMPSPILL_CODEC_AUTO)
	{
		total += compspill_zstd_cctx_estimate(zstd_level, largest_block,
											  block, mem_limit);
		if (reading)
			total += ZSTD_estimateDCtxSize();
		total += compspill_zstd_dict_estimate(zstd_level, dict_size,
											  block > 0 ? block : largest_block,
											  reading);
	}
	return total;
}

/*
 * Return what the compressor's malloc'd zstd contexts and digested
 * dictionaries hold now, in bytes: memory no memory context sees.
 */
Size
CompSpillCompressorMemory(CompSpillCompressor *comp)
{
	Size		total = 0;

	if (comp->zcctx != NULL)
		total += ZSTD_sizeof_CCtx(comp->zcctx);
	if (comp->zdctx != NULL)
		total += ZSTD_sizeof_DCtx(comp->zdctx);
	if (comp->zcdict != NULL)
		total += ZSTD_sizeof_CDict(comp->zcdict);
	if (comp->zddict != NULL)
		total += ZSTD_sizeof_DDict(comp->zddict);
	return total;
}

/*
 * Return what the compressor holds only for compressing, in bytes: the zstd
 * compression context and dictionary, and the lz4 state.
 */
Size
CompSpillCompressorWriteMemory(CompSpillCompressor *comp)
{
	Size		total = 0;

	if (comp->zcctx != NULL)
		total += ZSTD_sizeof_CCtx(comp->zcctx);
	if (comp->zcdict != NULL)
		total += ZSTD_sizeof_CDict(comp->zcdict);
	if (comp->lz4state != NULL)
		total += COMPSPILL_LZ4_STATE_MEM;
	return total;
}

/*
 * Return what of the compressor's malloc'd memory only reading needs, in
 * bytes: the zstd decompression context and dictionary.
 */
Size
CompSpillCompressorReadMemory(CompSpillCompressor *comp)
{
	Size		total = 0;

	if (comp->zdctx != NULL)
		total += ZSTD_sizeof_DCtx(comp->zdctx);
	if (comp->zddict != NULL)
		total += ZSTD_sizeof_DDict(comp->zddict);
	return total;
}

/*
 * Free the compressor's zstd compression context and its dictionary's
 * digested form for compressing, if it has them.
 */
static void
compspill_free_zstd_cctx(CompSpillCompressor *comp)
{
	if (comp->zcctx != NULL)
	{
		ZSTD_freeCCtx(comp->zcctx);
		comp->zcctx = NULL;
	}
	if (comp->zcdict != NULL)
	{
		ZSTD_freeCDict(comp->zcdict);
		comp->zcdict = NULL;
	}
}

/*
 * Free lz4's state, for a spill that goes on with zstd only; the next block
 * compressed with lz4 makes it again.
 */
void
CompSpillCompressorEndLz4(CompSpillCompressor *comp)
{
	if (comp->lz4state != NULL)
	{
		pfree(comp->lz4state);
		comp->lz4state = NULL;
	}
}

/*
 * Free what the compressor holds only for compressing, for a phase that
 * only reads; the next block compressed makes it again.
 */
void
CompSpillCompressorEndWrites(CompSpillCompressor *comp)
{
	compspill_free_zstd_cctx(comp);
	CompSpillCompressorEndLz4(comp);
}

/*
 * Free what the compressor holds only for decompressing, for a phase that
 * only writes; the next block decompressed makes it again.
 */
void
CompSpillCompressorEndReads(CompSpillCompressor *comp)
{
	if (comp->zdctx != NULL)
	{
		ZSTD_freeDCtx(comp->zdctx);
		comp->zdctx = NULL;
	}
	if (comp->zddict != NULL)
	{
		ZSTD_freeDDict(comp->zddict);
		comp->zddict = NULL;
	}
}

/*
 * Return what the compressor's state for codec may still grow by, in
 * bytes, up to what CompSpillCodecMemoryEstimate gives for it: the zstd
 * decompression context until the first zstd frame read makes it, and
 * when compressing the lz4 state until it exists and the zstd compression
 * context, which grows with the blocks.  What is already held is measured,
 * and not counted here.
 */
Size
CompSpillCompressorGrowth(CompSpillCompressor *comp, CompSpillCodec codec,
						  bool compressing)
{
	Size		total = 0;
	bool		zstd = (codec == COMPSPILL_CODEC_ZSTD ||
						codec == COMPSPILL_CODEC_AUTO);

	if (zstd && comp->zdctx == NULL)
		total += ZSTD_estimateDCtxSize();
	if (zstd && comp->dict_size > 0 && comp->zddict == NULL)
		total += ZSTD_estimateDDictSize(comp->dict_size, ZSTD_dlm_byRef);
	if (!compressing)
		return total;

	if (zstd && comp->dict_size > 0)
	{
		if (comp->dict == NULL)
			total += COMPSPILL_DICT_MEM(comp->dict_size);
		if (comp->zcdict == NULL)
			total += compspill_zstd_cdict_estimate(comp->zstd_level,
												   comp->dict_size,
												   comp->dict_block);
	}

	if ((codec == COMPSPILL_CODEC_LZ4 || codec == COMPSPILL_CODEC_AUTO) &&
		comp->lz4state == NULL)
		total += COMPSPILL_LZ4_STATE_MEM;
	if (zstd)
	{
		Size		cctx = compspill_zstd_cctx_estimate(comp->zstd_level,
														comp->largest_block,
														0, comp->mem_limit);
		Size		held = comp->zcctx != NULL ?
			ZSTD_sizeof_CCtx(comp->zcctx) : 0;

		if (cctx > held)
			total += cctx - held;
	}
	return total;
}

/*
 * Return the worst-case compressed size of srclen bytes with codec.
 */
Size
CompSpillCompressBound(CompSpillCompressor *comp, CompSpillCodec codec,
					   Size srclen)
{
	(void) comp;

	switch (codec)
	{
		case COMPSPILL_CODEC_NONE:
			return srclen;
		case COMPSPILL_CODEC_LZ4:
			/* larger inputs are never compressed, see CompSpillCompress */
			if (srclen > LZ4_MAX_INPUT_SIZE)
				return srclen;
			return (Size) LZ4_compressBound((int) srclen);
		case COMPSPILL_CODEC_ZSTD:
			{
				size_t		bound = ZSTD_compressBound(srclen);

				if (ZSTD_isError(bound))
					return srclen;
				return bound;
			}
		case COMPSPILL_CODEC_AUTO:
			break;
	}
	elog(ERROR, "compspill codec %d cannot compress a block", (int) codec);
	return srclen;				/* keep the compiler quiet */
}

/*
 * Keep what the dictionary still lacks of a block about to be compressed
 * with zstd; once it is complete, digest it for compressing.
 */
static void
compspill_fill_dictionary(CompSpillCompressor *comp, const char *src,
						  Size srclen)
{
	Size		take;

	if (comp->dict == NULL)
		comp->dict = MemoryContextAlloc(comp->cxt, comp->dict_size);
	take = Min(srclen, comp->dict_size - comp->dict_len);
	memcpy(comp->dict + comp->dict_len, src, take);
	comp->dict_len += take;
}

/*
 * Return the dictionary's digested form for compressing, making it if
 * needed; NULL while the dictionary is not complete.
 */
static ZSTD_CDict *
compspill_get_zstd_cdict(CompSpillCompressor *comp)
{
	if (comp->dict_size == 0 || comp->dict_len < comp->dict_size)
		return NULL;
	if (comp->zcdict == NULL)
	{
		comp->zcdict =
			ZSTD_createCDict_advanced(comp->dict, comp->dict_len,
									  ZSTD_dlm_byRef, ZSTD_dct_rawContent,
									  compspill_zstd_dict_params(comp->zstd_level,
																 comp->dict_size,
																 comp->dict_block),
									  ZSTD_defaultCMem);
		if (comp->zcdict == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a zstd compression dictionary.")));
	}
	return comp->zcdict;
}

/*
 * Compress src into dst with codec; return the compressed size, or 0 if it
 * did not fit in dstcap or does not make the block strictly smaller (and
 * always 0 for COMPSPILL_CODEC_NONE): the caller then stores it raw.  With
 * dict not NULL, a compressor with a complete zstd dictionary compresses
 * with zstd against it, and *dict says whether it did: the frame must say
 * so, for CompSpillDecompress.  With dict NULL no dictionary is used nor
 * filled.
 */
Size
CompSpillCompress(CompSpillCompressor *comp, CompSpillCodec codec,
				  const char *src, Size srclen, char *dst, Size dstcap,
				  bool *dict)
{
	Size		result = 0;

	if (dict != NULL)
		*dict = false;
	if (srclen == 0)
		return 0;

	switch (codec)
	{
		case COMPSPILL_CODEC_NONE:
			return 0;

		case COMPSPILL_CODEC_LZ4:
			{
				int			cap;
				int			ret;

				if (srclen > LZ4_MAX_INPUT_SIZE)
					return 0;
				cap = (int) Min(dstcap, (Size) INT_MAX);
				if (comp->lz4state == NULL)
					comp->lz4state = MemoryContextAlloc(comp->cxt,
														LZ4_sizeofState());
				ret = LZ4_compress_fast_extState(comp->lz4state, src, dst,
												 (int) srclen, cap, 1);
				if (ret <= 0)
				{
					/* lz4 fails only when the output does not fit */
					if (cap < LZ4_compressBound((int) srclen))
						return 0;
					ereport(ERROR,
							(errcode(ERRCODE_INTERNAL_ERROR),
							 errmsg("could not compress spill block with %s",
									CompSpillCodecName(codec)),
							 errdetail("LZ4_compress_fast_extState returned %d.",
									   ret)));
				}
				result = (Size) ret;
				break;
			}

		case COMPSPILL_CODEC_ZSTD:
			{
				size_t		ret;
				ZSTD_CDict *cdict = NULL;

				if (dict != NULL && comp->dict_size > 0)
				{
					cdict = compspill_get_zstd_cdict(comp);
					if (cdict == NULL)
						compspill_fill_dictionary(comp, src, srclen);
				}
				if (cdict != NULL)
				{
					ret = ZSTD_compress_usingCDict(compspill_get_zstd_cctx(comp),
												   dst, dstcap, src, srclen,
												   cdict);
					*dict = true;
				}
				else
					ret = ZSTD_compress2(compspill_get_zstd_cctx(comp),
										 dst, dstcap, src, srclen);
				if (ZSTD_isError(ret))
				{
					if (ZSTD_getErrorCode(ret) == ZSTD_error_dstSize_tooSmall)
						return 0;
					ereport(ERROR,
							(errcode(ERRCODE_INTERNAL_ERROR),
							 errmsg("could not compress spill block with %s",
									CompSpillCodecName(codec)),
							 errdetail("zstd reported: %s.",
									   ZSTD_getErrorName(ret))));
				}
				result = ret;
				break;
			}

		default:
			elog(ERROR, "compspill codec %d cannot compress a block",
				 (int) codec);
	}

	return result < srclen ? result : 0;
}

/*
 * Return the compressor's zstd compression context, creating it and setting
 * its level if needed.
 */
static ZSTD_CCtx *
compspill_get_zstd_cctx(CompSpillCompressor *comp)
{
	if (comp->zcctx == NULL)
	{
		size_t		ret;

		comp->zcctx = ZSTD_createCCtx();
		if (comp->zcctx == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a zstd compression context.")));
		ret = ZSTD_CCtx_setParameter(comp->zcctx, ZSTD_c_compressionLevel,
									 comp->zstd_level);
		if (!ZSTD_isError(ret))
		{
			ZSTD_compressionParameters cp;

			/* a smaller window where the memory limit asks for it */
			if (compspill_zstd_params(comp->zstd_level, comp->largest_block,
									  comp->mem_limit, &cp))
			{
				ret = ZSTD_CCtx_setParameter(comp->zcctx, ZSTD_c_windowLog,
											 (int) cp.windowLog);
				if (!ZSTD_isError(ret))
					ret = ZSTD_CCtx_setParameter(comp->zcctx, ZSTD_c_hashLog,
												 (int) cp.hashLog);
				if (!ZSTD_isError(ret))
					ret = ZSTD_CCtx_setParameter(comp->zcctx, ZSTD_c_chainLog,
												 (int) cp.chainLog);
			}
		}
		if (ZSTD_isError(ret))
		{
			/* do not keep a context without its level */
			ZSTD_freeCCtx(comp->zcctx);
			comp->zcctx = NULL;
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("could not set zstd compression level %d",
							comp->zstd_level),
					 errdetail("zstd reported: %s.",
							   ZSTD_getErrorName(ret))));
		}
	}
	return comp->zcctx;
}

/*
 * Return the compressor's zstd decompression context, creating it if needed.
 */
static ZSTD_DCtx *
compspill_get_zstd_dctx(CompSpillCompressor *comp)
{
	if (comp->zdctx == NULL)
	{
		comp->zdctx = ZSTD_createDCtx();
		if (comp->zdctx == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a zstd decompression context.")));
	}
	return comp->zdctx;
}

/*
 * Return the dictionary's digested form for decompressing, making it if
 * needed: the dictionary must be complete.
 */
static ZSTD_DDict *
compspill_get_zstd_ddict(CompSpillCompressor *comp)
{
	if (comp->zddict == NULL)
	{
		comp->zddict = ZSTD_createDDict_advanced(comp->dict, comp->dict_len,
												 ZSTD_dlm_byRef,
												 ZSTD_dct_rawContent,
												 ZSTD_defaultCMem);
		if (comp->zddict == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a zstd decompression dictionary.")));
	}
	return comp->zddict;
}

/*
 * Return the margin with which codec can decompress a block of rawlen bytes
 * in place, its compressed form lying in the same buffer as its output and
 * ending at least that many bytes past the output's end; 0 if the codec
 * cannot.  lz4 can, with the margin lz4.h gives; zstd's would be a whole
 * block, which saves nothing.  (CompSpillDecompress reads src before it
 * writes over it when the two overlap so.)
 */
Size
CompSpillInPlaceMargin(CompSpillCodec codec, Size rawlen)
{
#ifdef LZ4_DECOMPRESS_INPLACE_MARGIN
	if (codec == COMPSPILL_CODEC_LZ4)
		return LZ4_DECOMPRESS_INPLACE_MARGIN(rawlen);
#endif
	return 0;
}

/*
 * Decompress src into exactly rawlen bytes at dst, against the compressor's
 * zstd dictionary if dict (a frame compressed so); on failure return false
 * with a sentence in *errdetail.
 */
bool
CompSpillDecompress(CompSpillCompressor *comp, CompSpillCodec codec,
					bool dict, const char *src, Size srclen, char *dst,
					Size rawlen, const char **errdetail)
{
	*errdetail = NULL;

	if (dict && (codec != COMPSPILL_CODEC_ZSTD || comp == NULL ||
				 comp->dict_size == 0 || comp->dict_len < comp->dict_size))
	{
		*errdetail = psprintf("The block was compressed with a dictionary that the spill does not have.");
		return false;
	}

	switch (codec)
	{
		case COMPSPILL_CODEC_NONE:
			if (srclen != rawlen)
			{
				*errdetail = psprintf("Stored block is %zu bytes, expected %zu.",
									  srclen, rawlen);
				return false;
			}
			memcpy(dst, src, rawlen);
			return true;

		case COMPSPILL_CODEC_LZ4:
			{
				int			ret;

				if (srclen > INT_MAX || rawlen > INT_MAX)
				{
					*errdetail = psprintf("lz4 block of %zu bytes decompressing to %zu bytes exceeds the lz4 size limit.",
										  srclen, rawlen);
					return false;
				}
				ret = LZ4_decompress_safe(src, dst, (int) srclen, (int) rawlen);
				if (ret < 0)
				{
					*errdetail = psprintf("LZ4_decompress_safe returned %d.",
										  ret);
					return false;
				}
				if ((Size) ret != rawlen)
				{
					*errdetail = psprintf("lz4 produced %d bytes, expected %zu.",
										  ret, rawlen);
					return false;
				}
				return true;
			}

		case COMPSPILL_CODEC_ZSTD:
			{
				size_t		ret;

				if (dict)
					ret = ZSTD_decompress_usingDDict(compspill_get_zstd_dctx(comp),
													 dst, rawlen, src, srclen,
													 compspill_get_zstd_ddict(comp));
				else if (comp != NULL)
					ret = ZSTD_decompressDCtx(compspill_get_zstd_dctx(comp),
											  dst, rawlen, src, srclen);
				else
					ret = ZSTD_decompress(dst, rawlen, src, srclen);
				if (ZSTD_isError(ret))
				{
					*errdetail = psprintf("zstd reported: %s.",
										  ZSTD_getErrorName(ret));
					return false;
				}
				if (ret != rawlen)
				{
					*errdetail = psprintf("zstd produced %zu bytes, expected %zu.",
										  ret, rawlen);
					return false;
				}
				return true;
			}

		case COMPSPILL_CODEC_AUTO:
			/* a setting value, never the codec of a stored block */
			break;
	}

	*errdetail = psprintf("Unknown compression codec %d.", (int) codec);
	return false;
}
