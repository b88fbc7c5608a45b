/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  compspill's settings (compspill.*) and the copy of them an operation
 *	  spills with.
 *
 * The variables are the GUCs' own; CompSpillDefineSettings defines them
 * (from _PG_init).  An operation reads them once, at executor start,
 * through CompSpillCaptureSettings, so that a SET in the middle of a
 * cursor's life does not change the format of what it already wrote.
 *
 * IDENTIFICATION
 *	  src/base/settings.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_SETTINGS_H
#define COMPSPILL_SETTINGS_H

#include "base/compat.h"

/* compspill.codec; a frame is stored with NONE, LZ4 or ZSTD */
typedef enum CompSpillCodec
{
	COMPSPILL_CODEC_NONE = 0,
	COMPSPILL_CODEC_LZ4 = 1,
	COMPSPILL_CODEC_ZSTD = 2,
	COMPSPILL_CODEC_AUTO = 3	/* a setting only: chosen per frame */
} CompSpillCodec;

/* codecs a frame can be stored with: NONE, LZ4, ZSTD */
#define COMPSPILL_NUM_STORED_CODECS	3

/* compspill.frame_kind */
typedef enum CompSpillFrameKind
{
	COMPSPILL_FRAME_KIND_AUTO = 0,	/* as the codec decides */
	COMPSPILL_FRAME_KIND_ROW = 1,
	COMPSPILL_FRAME_KIND_COLUMN = 2,
	COMPSPILL_FRAME_KIND_ALTERNATE = 3	/* tests: a run of each in turn */
} CompSpillFrameKind;

/* compspill.encryption */
typedef enum CompSpillEncryption
{
	COMPSPILL_ENCRYPTION_OFF = 0,
	COMPSPILL_ENCRYPTION_AES_256_GCM = 1
} CompSpillEncryption;

/* the settings' variables */
extern bool compspill_enabled;
extern int	compspill_codec;
extern int	compspill_compression_level;
extern bool compspill_enable_dio;
extern int	compspill_block_size;	/* kB */
extern int	compspill_write_size;	/* kB */
extern int	compspill_zstd_dictionary;	/* kB */
extern int	compspill_log_spills;	/* kB, -1: off */
extern int	compspill_max_temp_space;	/* kB, -1: off */
extern int	compspill_encryption;
extern int	compspill_frame_kind;

/*
 * The settings an operation spills with, captured once at executor start.
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
	Size		zstd_dict;		/* compspill.zstd_dictionary, bytes */
	uint64		queryid;		/* the statement's query identifier, or 0 */
	int64		mem_limit;		/* the operation's work_mem in bytes, set by
								 * the operation; 0 if not known */
} CompSpillSettings;

struct EState;
extern void CompSpillDefineSettings(void);
extern void CompSpillCaptureSettings(CompSpillSettings *set,
									 struct EState *estate);
extern void CompSpillCheckPreloaded(const void *shared);

#endif							/* COMPSPILL_SETTINGS_H */
