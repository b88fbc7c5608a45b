/*-------------------------------------------------------------------------
 *
 * spillstats.c
 *	  The sum of two operations' spill figures, and the names of what the
 *	  figures hold.
 *
 * IDENTIFICATION
 *	  src/base/spillstats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/spillstats.h"

/*
 * Add the figures of one operation (add) to those of another (sum), for a
 * node that reports two spills as one (an incremental sort's two sorts).
 *
 * Counters (runs, passes, merges, rows, bytes, frames of each codec and
 * kind, I/O time) add up.  Peaks take the larger: memory, the file's size
 * (one file's peak, as compspill_stats counts it) and the block size.  The
 * direct I/O and encryption flags say whether either did.  The statement
 * and the codec asked for are the sum's own (both operations have the same
 * ones): start the sum as a copy of the first operation's figures, not as
 * zeroes.
 */
void
CompSpillStatsAdd(CompSpillStats *sum, const CompSpillStats *add)
{
	sum->dio_requested |= add->dio_requested;
	sum->dio_active |= add->dio_active;
	sum->dio_fallback |= add->dio_fallback;
	sum->encrypted |= add->encrypted;
	if (sum->room == COMPSPILL_ROOM_NONE)
		sum->room = add->room;
	if (sum->device_mbps == 0)
		sum->device_mbps = add->device_mbps;
	sum->nruns += add->nruns;
	sum->merge_passes += add->merge_passes;
	sum->early_merges += add->early_merges;
	sum->bytes_written_early += add->bytes_written_early;
	sum->rows_spilled += add->rows_spilled;
	sum->bytes_in += add->bytes_in;
	sum->bytes_encoded += add->bytes_encoded;
	sum->bytes_written_runs += add->bytes_written_runs;
	sum->bytes_written += add->bytes_written;
	sum->bytes_read += add->bytes_read;
	sum->file_size = Max(sum->file_size, add->file_size);
	sum->frames_written += add->frames_written;
	sum->frames_raw += add->frames_raw;
	sum->frames_dict += add->frames_dict;
	sum->frames_rows += add->frames_rows;
	sum->frames_columns += add->frames_columns;
	for (int c = 0; c < COMPSPILL_NUM_STORED_CODECS; c++)
		sum->frames_by_codec[c] += add->frames_by_codec[c];
	sum->peak_mem = Max(sum->peak_mem, add->peak_mem);
	sum->block_size = Max(sum->block_size, add->block_size);
	INSTR_TIME_ADD(sum->write_time, add->write_time);
	INSTR_TIME_ADD(sum->read_time, add->read_time);
	INSTR_TIME_ADD(sum->encode_time, add->encode_time);
	INSTR_TIME_ADD(sum->compress_time, add->compress_time);
	INSTR_TIME_ADD(sum->decompress_time, add->decompress_time);
	INSTR_TIME_ADD(sum->decode_time, add->decode_time);
}


/*
 * Return the name of a codec, as used in settings and messages.
 */
const char *
CompSpillCodecName(CompSpillCodec codec)
{
	switch (codec)
	{
		case COMPSPILL_CODEC_NONE:
			return "none";
		case COMPSPILL_CODEC_LZ4:
			return "lz4";
		case COMPSPILL_CODEC_ZSTD:
			return "zstd";
		case COMPSPILL_CODEC_AUTO:
			return "auto";
	}
	return "unknown";
}


/*
 * Name the encryption of a spill, as compspill.encryption does.
 */
const char *
CompSpillEncryptionName(bool encrypted)
{
	return encrypted ? "aes-256-gcm" : "off";
}


/*
 * Name the file's direct I/O as EXPLAIN, the log line and the view show
 * it: on; off (not asked for); fallback (asked for, refused by the file
 * system, buffered instead).
 */
const char *
CompSpillDirectIOName(const CompSpillStats *st)
{
	if (st->dio_active)
		return "on";
	return st->dio_fallback ? "fallback" : "off";
}

/* Name the limit that made codec = auto compress for lack of room */
const char *
CompSpillRoomName(CompSpillRoomLimit room)
{
	switch (room)
	{
		case COMPSPILL_ROOM_NONE:
			break;
		case COMPSPILL_ROOM_TEMP_FILE_LIMIT:
			return "temp_file_limit";
		case COMPSPILL_ROOM_MAX_TEMP_SPACE:
			return "compspill.max_temp_space";
		case COMPSPILL_ROOM_FILE_SYSTEM:
			return "file system";
	}
	return "none";
}
