/*-------------------------------------------------------------------------
 *
 * compress_test.c
 *	  Standalone unit test of the compressor (src/codec/compress.c): one
 *	  compressor, any codec per call.
 *
 * Checks that one compressor compresses and decompresses blocks with none,
 * lz4 and zstd in any order, creating each codec's state only when first
 * used; that the memory-context reset callback frees the zstd contexts,
each once however often it runs; that a compressor never asked for zstd
makes no zstd context (libzstd's context makers and freers are wrapped at
link time, -Wl,--wrap, to count them);
 * that a block which does not fit or does not shrink gives 0; that lz4,
 * and only lz4, decompresses a block in place within its margin; and that
 * auto is refused as a codec to compress with or to decompress.  The few
 * backend functions compress.c calls are stubbed below; an ereport or elog
 * of level ERROR longjmps back to the test.
 *
 * IDENTIFICATION
 *	  test/unit/compress_test.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include "postgres.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <zstd.h>

#include "base/spillstats.h"
#include "codec/compress.h"
#include "pgstubs.h"
#include "unitcheck.h"

/* use libc's printf family, not libpgport's, which is not linked in */
#undef printf
#undef fprintf
#undef vfprintf

/* ----------------------------------------------------------------
 * Backend stubs
 * ----------------------------------------------------------------
 */
static MemoryContextCallback *registered_cb = NULL;

void
MemoryContextRegisterResetCallback(MemoryContext context,
								   MemoryContextCallback *cb)
{
	(void) context;
	registered_cb = cb;
}

/* ----------------------------------------------------------------
 * zstd contexts, counted: compress.c's calls reach these wrappers (the
 * Makefile links with -Wl,--wrap=ZSTD_createCCtx and the others), which
 * keep the live contexts and refuse to free one that is not live, so that a
 * double free is counted instead of crashing the test
 * ----------------------------------------------------------------
 */
#define MAX_LIVE_CONTEXTS 16

extern ZSTD_CCtx *__real_ZSTD_createCCtx(void);
extern size_t __real_ZSTD_freeCCtx(ZSTD_CCtx *cctx);
extern ZSTD_DCtx *__real_ZSTD_createDCtx(void);
extern size_t __real_ZSTD_freeDCtx(ZSTD_DCtx *dctx);
extern ZSTD_CCtx *__wrap_ZSTD_createCCtx(void);
extern size_t __wrap_ZSTD_freeCCtx(ZSTD_CCtx *cctx);
extern ZSTD_DCtx *__wrap_ZSTD_createDCtx(void);
extern size_t __wrap_ZSTD_freeDCtx(ZSTD_DCtx *dctx);

static void *live_contexts[MAX_LIVE_CONTEXTS];
static int	zstd_created = 0;	/* contexts made */
static int	zstd_freed = 0;		/* contexts freed */
static int	zstd_bad_frees = 0; /* frees of a context not live */

/* Note a context made */
static void *
context_made(void *ctx)
{
	if (ctx == NULL)
		return NULL;
	zstd_created++;
	for (int i = 0; i < MAX_LIVE_CONTEXTS; i++)
		if (live_contexts[i] == NULL)
		{
			live_contexts[i] = ctx;
			return ctx;
		}
	printf("FAIL: more than %d live zstd contexts\n", MAX_LIVE_CONTEXTS);
	exit(1);
}

/* Say whether ctx may be freed (it is live), forgetting it if so */
static bool
context_freeable(void *ctx)
{
	if (ctx == NULL)
		return false;			/* freeing NULL is allowed and does nothing */
	for (int i = 0; i < MAX_LIVE_CONTEXTS; i++)
		if (live_contexts[i] == ctx)
		{
			live_contexts[i] = NULL;
			zstd_freed++;
			return true;
		}
	zstd_bad_frees++;
	return false;
}

ZSTD_CCtx *
__wrap_ZSTD_createCCtx(void)
{
	return context_made(__real_ZSTD_createCCtx());
}

size_t
__wrap_ZSTD_freeCCtx(ZSTD_CCtx *cctx)
{
	return context_freeable(cctx) ? __real_ZSTD_freeCCtx(cctx) : 0;
}

ZSTD_DCtx *
__wrap_ZSTD_createDCtx(void)
{
	return context_made(__real_ZSTD_createDCtx());
}

size_t
__wrap_ZSTD_freeDCtx(ZSTD_DCtx *dctx)
{
	return context_freeable(dctx) ? __real_ZSTD_freeDCtx(dctx) : 0;
}

/* ----------------------------------------------------------------
 * The test
 * ----------------------------------------------------------------
 */
/* Fill a block with compressible, text-like bytes */
static void
fill_text(char *buf, Size len, unsigned seed)
{
	static const char *words[] = {"quickly ", "final ", "deposits ",
	"sleep ", "carefully ", "regular ", "pending ", "accounts "};

	for (Size i = 0; i < len;)
	{
		const char *w = words[(seed = seed * 1103515245 + 12345) >> 16 & 7];

		for (; *w && i < len; w++)
			buf[i++] = *w;
	}
}

/* Fill a block with incompressible bytes */
static void
fill_random(char *buf, Size len, unsigned seed)
{
	for (Size i = 0; i < len; i++)
		buf[i] = (char) ((seed = seed * 1103515245 + 12345) >> 16);
}

/* Return whether compressing with codec raises an error */
static bool
compress_errors(CompSpillCompressor *comp, CompSpillCodec codec,
				const char *src, Size len, char *dst, Size cap)
{
	sigjmp_buf	jb;
	bool		errored = false;

	pgstubs_error_jmp = &jb;
	if (sigsetjmp(jb, 0) == 0)
		(void) CompSpillCompress(comp, codec, src, len, dst, cap, NULL);
	else
		errored = true;
	pgstubs_error_jmp = NULL;
	return errored;
}

int
main(void)
{
	const Size	len = 64 * 1024;
	char	   *src = malloc(len);
	char	   *dst = malloc(2 * len);
	char	   *back = malloc(len);
	const char *detail;
	CompSpillCompressor *comp;
	static const CompSpillCodec order[] = {
		COMPSPILL_CODEC_ZSTD, COMPSPILL_CODEC_NONE, COMPSPILL_CODEC_LZ4,
		COMPSPILL_CODEC_ZSTD, COMPSPILL_CODEC_LZ4, COMPSPILL_CODEC_NONE
	};

	comp = CompSpillCompressorCreate(1);
	check(registered_cb != NULL, "reset callback registered at creation");

	check(strcmp(CompSpillCodecName(COMPSPILL_CODEC_AUTO), "auto") == 0,
		  "auto is named auto");

	/* every codec through the same compressor, in any order */
	for (int i = 0; i < (int) lengthof(order); i++)
	{
		CompSpillCodec codec = order[i];
		Size		bound;
		Size		clen;

		fill_text(src, len, i + 1);
		bound = CompSpillCompressBound(comp, codec, len);
		check(bound >= len, "bound covers the raw size");
		clen = CompSpillCompress(comp, codec, src, len, dst, bound, NULL);
		if (codec == COMPSPILL_CODEC_NONE)
		{
			check(clen == 0, "none never compresses");
			continue;
		}
		check(clen > 0 && clen < len / 2, "text compresses");
		memset(back, 0, len);
		check(CompSpillDecompress(comp, codec, false, dst, clen, back, len, &detail),
			  "round trip decompresses");
		check(memcmp(src, back, len) == 0, "round trip is exact");
	}

	/*
	 * lz4 decompresses in place: the compressed block at the end of a
	 * buffer of the block and its margin, the block written from its start,
	 * for text-like and nearly incompressible blocks of several sizes; zstd
	 * does not offer it
	 */
	check(CompSpillInPlaceMargin(COMPSPILL_CODEC_ZSTD, len) == 0 &&
		  CompSpillInPlaceMargin(COMPSPILL_CODEC_NONE, len) == 0,
		  "only lz4 decompresses in place");
	for (int i = 0; i < 8; i++)
	{
		Size		raw = (i % 4 + 1) * len / 4 - i;
		Size		margin = CompSpillInPlaceMargin(COMPSPILL_CODEC_LZ4, raw);
		Size		clen;
		char	   *buf = malloc(raw + margin);

		check(margin > 0 && margin <= raw / 128 + 64,
			  "lz4's in-place margin is small");
		if (i < 4)
			fill_text(src, raw, i + 11);
		else
		{
			/* random bytes with a few compressible runs: barely shrinks */
			fill_random(src, raw, i + 11);
			memset(src + raw / 2, 'x', raw / 16);
		}
		clen = CompSpillCompress(comp, COMPSPILL_CODEC_LZ4, src, raw, dst,
								 CompSpillCompressBound(comp, COMPSPILL_CODEC_LZ4, raw),
								 NULL);
		check(clen > 0 && clen < raw, "the block compresses");
		memset(buf, 0, raw + margin);
		memcpy(buf + raw + margin - clen, dst, clen);
		check(CompSpillDecompress(comp, COMPSPILL_CODEC_LZ4, false,
								  buf + raw + margin - clen, clen, buf, raw,
								  &detail),
			  "lz4 decompresses in place");
		check(memcmp(src, buf, raw) == 0, "in place is exact");
		free(buf);
	}

	/* incompressible data and a too small output give 0 */
	fill_random(src, len, 7);
	check(CompSpillCompress(comp, COMPSPILL_CODEC_LZ4, src, len, dst,
							CompSpillCompressBound(comp, COMPSPILL_CODEC_LZ4, len), NULL) == 0,
		  "lz4 on random bytes does not pay");
	check(CompSpillCompress(comp, COMPSPILL_CODEC_ZSTD, src, len, dst,
							CompSpillCompressBound(comp, COMPSPILL_CODEC_ZSTD, len), NULL) == 0,
		  "zstd on random bytes does not pay");
	fill_text(src, len, 3);
	check(CompSpillCompress(comp, COMPSPILL_CODEC_ZSTD, src, len, dst, 16, NULL) == 0,
		  "zstd into 16 bytes does not fit");
	check(CompSpillCompress(comp, COMPSPILL_CODEC_LZ4, src, len, dst, 16, NULL) == 0,
		  "lz4 into 16 bytes does not fit");

	/* auto is a setting, not a codec */
	check(compress_errors(comp, COMPSPILL_CODEC_AUTO, src, len, dst, 2 * len),
		  "compressing with auto is an error");
	check(!CompSpillDecompress(comp, COMPSPILL_CODEC_AUTO, false, src, 10, back, 10,
							   &detail) && detail != NULL,
		  "a block claiming auto does not decompress");

	/* zstd was used both ways: one compression and one decompression context */
	check(zstd_created == 2 && zstd_freed == 0,
		  "one zstd context each way, kept for the compressor");

	/* the reset callback frees the zstd contexts, each once however often it runs */
	registered_cb->func(registered_cb->arg);
	check(zstd_freed == 2 && zstd_bad_frees == 0,
		  "reset callback frees both zstd contexts");
	registered_cb->func(registered_cb->arg);
	check(zstd_freed == 2 && zstd_bad_frees == 0,
		  "reset callback run again frees nothing twice");

	/* lazily: a compressor never asked for zstd makes no zstd context */
	registered_cb = NULL;
	zstd_created = zstd_freed = zstd_bad_frees = 0;
	comp = CompSpillCompressorCreate(1);
	check(zstd_created == 0, "a new compressor makes no zstd context");
	fill_text(src, len, 5);
	{
		Size		clen = CompSpillCompress(comp, COMPSPILL_CODEC_LZ4, src, len,
											 dst, 2 * len, NULL);

		check(clen > 0, "lz4 alone works");
		check(CompSpillDecompress(comp, COMPSPILL_CODEC_LZ4, false, dst, clen,
								  back, len, &detail) &&
			  memcmp(src, back, len) == 0, "lz4 alone round-trips");
	}
	check(zstd_created == 0, "lz4 alone makes no zstd context");
	registered_cb->func(registered_cb->arg);
	check(zstd_freed == 0 && zstd_bad_frees == 0,
		  "nothing to free for lz4 alone");

	/* zstd clamps a level beyond its range rather than failing */
	registered_cb = NULL;
	comp = CompSpillCompressorCreate(1000);
	check(!compress_errors(comp, COMPSPILL_CODEC_ZSTD, src, len, dst, 2 * len),
		  "zstd level 1000 is clamped, not an error");
	registered_cb->func(registered_cb->arg);

	/*
	 * A dictionary: the first 16kB compressed with zstd fill it, the blocks
	 * after are compressed against it, smaller, and decompress only with it
	 */
	registered_cb = NULL;
	comp = CompSpillCompressorCreate(1);
	CompSpillCompressorSetDictionary(comp, 16 * 1024, 4096);
	{
		const Size	blk = 4096;
		Size		before;
		Size		alone;
		Size		with = 0;
		bool		dict = true;
		CompSpillCompressor *other = CompSpillCompressorCreate(1);

		for (int i = 0; i < 4; i++)
		{
			fill_text(src, blk, 100 + i);
			(void) CompSpillCompress(comp, COMPSPILL_CODEC_ZSTD, src, blk,
									 dst, 2 * blk, &dict);
			check(!dict, "the blocks that fill the dictionary do without it");
		}
		before = CompSpillCompressorMemory(comp);
		fill_text(src, blk, 200);
		alone = CompSpillCompress(other, COMPSPILL_CODEC_ZSTD, src, blk, dst,
								  2 * blk, NULL);
		with = CompSpillCompress(comp, COMPSPILL_CODEC_ZSTD, src, blk, dst,
								 2 * blk, &dict);
		check(dict && with > 0, "the next block is compressed against it");
		check(with < alone, "and is smaller than without it");
		check(CompSpillCompressorMemory(comp) > before,
			  "its digested form, made when first used, is counted");
		memset(back, 0, blk);
		check(CompSpillDecompress(comp, COMPSPILL_CODEC_ZSTD, true, dst, with,
								  back, blk, &detail) &&
			  memcmp(src, back, blk) == 0,
			  "it round-trips with the dictionary");
		detail = NULL;
		check(!CompSpillDecompress(other, COMPSPILL_CODEC_ZSTD, true, dst,
								   with, back, blk, &detail) && detail != NULL,
			  "a compressor without the dictionary reports the block");
		detail = NULL;
		check(!CompSpillDecompress(comp, COMPSPILL_CODEC_LZ4, true, dst, with,
								   back, blk, &detail) && detail != NULL,
			  "only zstd blocks have a dictionary");
		(void) CompSpillCompress(comp, COMPSPILL_CODEC_LZ4, src, blk, dst,
								 2 * blk, &dict);
		check(!dict, "lz4 does not use it");
		(void) CompSpillCompress(comp, COMPSPILL_CODEC_ZSTD, src, blk, dst,
								 2 * blk, NULL);
		(void) CompSpillCompress(other, COMPSPILL_CODEC_ZSTD, src, blk, dst,
								 2 * blk, &dict);
		check(!dict, "a compressor not asked for one has none");
	}

	return unit_report("compress");
}
