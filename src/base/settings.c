/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  compspill's settings: their variables and definitions, the copy an
 *	  operation spills with, and the check of functions that need the
 *	  library preloaded.
 *
 * The two settings that size shared memory (compspill.max_statements,
 * compspill.max_worker_figures) belong to the modules whose memory they
 * size, and are defined by _PG_init only when there is shared memory.
 *
 * IDENTIFICATION
 *	  src/base/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/guc.h"

#include "base/settings.h"

/* the settings' variables */
bool		compspill_enabled = true;
int			compspill_codec = COMPSPILL_CODEC_AUTO;
int			compspill_compression_level = 1;
bool		compspill_enable_dio = false;
int			compspill_block_size = 64;
int			compspill_write_size = 1024;
int			compspill_zstd_dictionary = 16;
int			compspill_log_spills = -1;
int			compspill_max_temp_space = -1;
int			compspill_encryption = COMPSPILL_ENCRYPTION_OFF;
int			compspill_frame_kind = COMPSPILL_FRAME_KIND_AUTO;

static const struct config_enum_entry codec_options[] = {
	{"none", COMPSPILL_CODEC_NONE, false},
	{"lz4", COMPSPILL_CODEC_LZ4, false},
	{"zstd", COMPSPILL_CODEC_ZSTD, false},
	{"auto", COMPSPILL_CODEC_AUTO, false},
	{NULL, 0, false}
};

static const struct config_enum_entry frame_kind_options[] = {
	{"auto", COMPSPILL_FRAME_KIND_AUTO, false},
	{"row", COMPSPILL_FRAME_KIND_ROW, false},
	{"column", COMPSPILL_FRAME_KIND_COLUMN, false},
	/* COLUMN is an SQL keyword: SET takes this without quotes */
	{"columns", COMPSPILL_FRAME_KIND_COLUMN, true},
	/* for tests: runs alternate, so that merges mix the kinds */
	{"alternate", COMPSPILL_FRAME_KIND_ALTERNATE, true},
	{NULL, 0, false}
};

static const struct config_enum_entry encryption_options[] = {
	{"off", COMPSPILL_ENCRYPTION_OFF, false},
	{"aes-256-gcm", COMPSPILL_ENCRYPTION_AES_256_GCM, false},
	{NULL, 0, false}
};

/*
 * Define the settings (from _PG_init).
 */
void
CompSpillDefineSettings(void)
{
	DefineCustomBoolVariable("compspill.enabled",
							 "Replaces plan sorts with compspill's compressed external sort.",
							 "Checked when a plan is made and again when a sort starts.",
							 &compspill_enabled,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("compspill.codec",
							 "Compression codec for spilled blocks.",
							 NULL,
							 &compspill_codec,
							 COMPSPILL_CODEC_AUTO,
							 codec_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("compspill.compression_level",
							"Compression level used with the zstd codec.",
							NULL,
							&compspill_compression_level,
							1,
							1, 22,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("compspill.enable_dio",
							 "Reads and writes spill files with direct I/O (O_DIRECT).",
							 "Falls back to buffered I/O where the file system refuses it.",
							 &compspill_enable_dio,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("compspill.frame_kind",
							 "Layout of the frames a sort's runs are written in.",
							 "row writes rows as native sort does, column the block codec's "
							 "column streams; auto lets the codec decide.",
							 &compspill_frame_kind,
							 COMPSPILL_FRAME_KIND_AUTO,
							 frame_kind_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("compspill.block_size",
							"Target size of an encoded block before compression.",
							"Larger blocks compress better but take more memory per merge input.",
							&compspill_block_size,
							64,
							8, 16 * 1024,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("compspill.write_size",
							"Size of the buffer that coalesces blocks into one write.",
							"Capped by a sixteenth of work_mem.",
							&compspill_write_size,
							1024,
							16, 64 * 1024,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("compspill.zstd_dictionary",
							"Size of the dictionary zstd compresses a spill's blocks against.",
							"Made of the spill's first blocks; at most a 256th of work_mem, "
							"none under 8kB. 0 turns it off.",
							&compspill_zstd_dictionary,
							16,
							0, 1024,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("compspill.log_spills",
							"Logs each spill that writes at least this amount of data.",
							"-1 turns this logging off; 0 logs every spill.",
							&compspill_log_spills,
							-1,
							-1, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("compspill.max_temp_space",
							"Caps the total size of compspill's temporary files in the cluster.",
							"-1 means no cap. Needs compspill in shared_preload_libraries.",
							&compspill_max_temp_space,
							-1,
							-1, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("compspill.encryption",
							 "Encrypts spilled blocks with a key only the backend holds.",
							 "off or aes-256-gcm.",
							 &compspill_encryption,
							 COMPSPILL_ENCRYPTION_OFF,
							 encryption_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
}

/*
 * Capture the settings an operation of estate's statement spills with, at
 * executor start.
 */
void
CompSpillCaptureSettings(CompSpillSettings *set, EState *estate)
{
	set->codec = (CompSpillCodec) compspill_codec;
	set->level = compspill_compression_level;
	set->dio = compspill_enable_dio;
	set->encrypt = compspill_encryption != COMPSPILL_ENCRYPTION_OFF;
	set->frame_kind = (CompSpillFrameKind) compspill_frame_kind;
	set->block_size = (Size) compspill_block_size * 1024;
	set->write_size = (Size) compspill_write_size * 1024;
	set->zstd_dict = (Size) compspill_zstd_dictionary * 1024;
	set->queryid = estate->es_plannedstmt ?
		CompSpillQueryId(estate->es_plannedstmt) : UINT64CONST(0);
}
/*
 * Fail unless the shared memory an SQL function reads (shared, a module's
 * pointer to it) is there: it exists only with compspill in
 * shared_preload_libraries, and without it the function must not show
 * zeros.
 */
void
CompSpillCheckPreloaded(const void *shared)
{
	if (shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("compspill is not loaded from shared_preload_libraries"),
				 errhint("Add compspill to shared_preload_libraries and restart the server.")));
}
