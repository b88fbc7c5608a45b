/*-------------------------------------------------------------------------
 *
 * compress.h
 *	  The compression layer: none / lz4 / zstd on byte buffers, with the
 *	  codec's contexts kept for the operation (compress.c).
 *
 * Bytes only: it knows no rows, frames or files.  Its one caller is the
 * spill layer (spill/runwriter.c frames what it returns, spill/frame.c
 * reads it back).
 *
 * IDENTIFICATION
 *	  src/codec/compress.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_COMPRESS_H
#define COMPSPILL_COMPRESS_H

#include "base/settings.h"

/* compress.c */
typedef struct CompSpillCompressor CompSpillCompressor;

extern CompSpillCompressor *CompSpillCompressorCreate(int zstd_level);
extern void CompSpillCompressorSetMemLimit(CompSpillCompressor *comp,
										   Size largest_block,
										   int64 mem_limit);
extern void CompSpillCompressorSetDictionary(CompSpillCompressor *comp,
											 Size dict_size, Size block);
extern Size CompSpillCompressorMemory(CompSpillCompressor *comp);
extern Size CompSpillCompressorWriteMemory(CompSpillCompressor *comp);
extern Size CompSpillCompressorReadMemory(CompSpillCompressor *comp);
extern void CompSpillCompressorEndReads(CompSpillCompressor *comp);
extern void CompSpillCompressorEndWrites(CompSpillCompressor *comp);
extern void CompSpillCompressorEndLz4(CompSpillCompressor *comp);
extern Size CompSpillCompressorGrowth(CompSpillCompressor *comp,
									  CompSpillCodec codec, bool compressing);
extern Size CompSpillCodecMemoryEstimate(CompSpillCodec codec, int zstd_level,
										 Size largest_block, Size block,
										 int64 mem_limit, Size dict_size,
										 bool reading);
extern Size CompSpillCompressBound(CompSpillCompressor *comp,
								   CompSpillCodec codec, Size srclen);
extern Size CompSpillCompress(CompSpillCompressor *comp, CompSpillCodec codec,
							  const char *src, Size srclen,
							  char *dst, Size dstcap, bool *dict);
extern Size CompSpillInPlaceMargin(CompSpillCodec codec, Size rawlen);
extern bool CompSpillDecompress(CompSpillCompressor *comp,
								CompSpillCodec codec, bool dict,
								const char *src, Size srclen,
								char *dst, Size rawlen,
								const char **errdetail);

#endif							/* COMPSPILL_COMPRESS_H */
