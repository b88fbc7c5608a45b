/*-------------------------------------------------------------------------
 *
 * codecchoice.c
 *	  What a spill writes: the kind of frames of each run and the codec of
 *	  each frame; with codec = auto, what its chooser is told.
 *
 * The explicit codecs and frame kinds are the settings'.  With
 * compspill.codec = auto the choice is codec/autocodec.c's, from the costs
 * measured as the spill goes: the writer and frame.c record what each
 * frame took to compress and to decompress; this file passes on the file's
 * I/O since the last frame (compspill_feed_io) and, every few frames, the
 * room the temp file has left for the rest of the input the plan expects
 * (compspill_room_check), and, at a sort's start and a spill's end, the
 * device's pace that earlier spills measured (compspill_recall_device,
 * compspill_remember_device).  Everything here runs once per frame or
 * run, never per row.
 *
 * IDENTIFICATION
 *	  src/spill/codecchoice.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "base/settings.h"
#include "base/spillstats.h"
#include "codec/autocodec.h"
#include "shared/devices.h"
#include "spill/run.h"
#include "spill/run_private.h"
#include "spill/spillfile.h"

/* what the plan's width leaves out of a spilled row: its header */
#define COMPSPILL_ROW_HEADER	8

static void compspill_room_check(CompSpillSpiller *sp);
static void compspill_recall_device(CompSpillSpiller *sp);

/*
 * Should the next run of a sort be written in row frames?  As
 * compspill.frame_kind says; with auto, only codec = auto ever chooses
 * them, from the costs it has measured (CompSpillAutoRowFrames): the
 * explicit codecs were asked for to save bytes, which column frames do.
 */
bool
CompSpillWantRowFrames(CompSpillSpiller *sp)
{
	switch (sp->set.frame_kind)
	{
		case COMPSPILL_FRAME_KIND_ROW:
			return true;
		case COMPSPILL_FRAME_KIND_COLUMN:
			return false;
		case COMPSPILL_FRAME_KIND_ALTERNATE:
			return (sp->kind_turn++ % 2) == 0;
		case COMPSPILL_FRAME_KIND_AUTO:
			break;
	}
	if (sp->set.codec != COMPSPILL_CODEC_AUTO)
		return false;
	return CompSpillAutoRowFrames(sp->ac);
}

/*
 * Should a store's run be written in row frames: rows read back as minimal
 * tuples, by a Material, a CTE or a random-access sort's readers?  As for
 * a sort's run (CompSpillWantRowFrames), but with codec = auto row frames
 * unless bytes matter (CompSpillAutoStoreRowFrames): whatever the page
 * cache's writes measure, column frames would form every row again each
 * time its frame is read.
 */
bool
CompSpillWantStoreRowFrames(CompSpillSpiller *sp)
{
	if (sp->set.frame_kind != COMPSPILL_FRAME_KIND_AUTO ||
		sp->set.codec != COMPSPILL_CODEC_AUTO)
		return CompSpillWantRowFrames(sp);
	return CompSpillAutoStoreRowFrames(sp->ac);
}

/*
 * Choose the codec of the next frame: the one asked for, or with codec =
 * auto the one the costs measured so far favour, within the room left
 * (looked at every COMPSPILL_ROOM_CHECK_FRAMES frames); lz4 for zstd while
 * the spill is held to light codecs (CompSpillSpillerSetLightCodec).
 */
#define COMPSPILL_ROOM_CHECK_FRAMES	16

CompSpillCodec
compspill_frame_codec(CompSpillSpiller *sp)
{
	CompSpillCodec codec = sp->set.codec;

	if (codec == COMPSPILL_CODEC_AUTO)
	{
		if (++sp->room_frames >= COMPSPILL_ROOM_CHECK_FRAMES)
			compspill_room_check(sp);
		codec = CompSpillAutoNext(sp->ac);
	}
	if (sp->light_codec && codec == COMPSPILL_CODEC_ZSTD)
		codec = COMPSPILL_CODEC_LZ4;
	return codec;
}

/*
 * Tell the spill how many rows of what width the plan expects its input to
 * hold, so that codec = auto can compress from the first run when they
 * would not fit in the room left (compspill_room_check).
 */
void
CompSpillSpillerSetExpectedRows(CompSpillSpiller *sp, double rows, int width)
{
	sp->expected_rows = rows > 0 ? rows : 0;
	sp->expected_width = Max(width, 0);
	if (sp->set.codec == COMPSPILL_CODEC_AUTO)
	{
		compspill_recall_device(sp);
		compspill_room_check(sp);
	}
}

/*
 * Tell the spill how many times the plan expects each of its bytes read
 * back (a nested loop's inner Material: once per outer row; otherwise 1),
 * so that codec = auto weighs a codec's reading costs that many times
 * against what it saves when writing.
 */
void
CompSpillSpillerSetExpectedReads(CompSpillSpiller *sp, double reads)
{
	if (sp->set.codec == COMPSPILL_CODEC_AUTO)
		CompSpillAutoSetReadsPerWrite(sp->ac, reads);
}

/*
 * codec = auto: start from the pace an earlier spill measured on the temp
 * file's device (shared/devices.c), when the plan expects this spill to
 * write more than the page cache let that spill write before the device
 * held it back.  A smaller spill may never reach the device, and learns
 * for itself.
 */
static void
compspill_recall_device(CompSpillSpiller *sp)
{
	double		ns_per_byte;
	double		headroom;
	double		expected;

	if (sp->recall_tried)
		return;
	sp->recall_tried = true;
	expected = sp->expected_rows * (sp->expected_width + COMPSPILL_ROW_HEADER);
	if (CompSpillDeviceRecall(CompSpillFileDevice(sp->file), &ns_per_byte,
							  &headroom) &&
		expected > headroom)
	{
		CompSpillAutoRecallDevice(sp->ac, ns_per_byte, headroom);
		sp->stats->device_mbps = (float4) (1e3 / ns_per_byte);
	}
}

/*
 * codec = auto, as the spill ends: leave the pace at which the device held
 * it back, if it did, for the spills that follow.
 */
void
compspill_remember_device(CompSpillSpiller *sp)
{
	double		ns_per_byte;
	double		headroom;

	if (sp->set.codec == COMPSPILL_CODEC_AUTO &&
		CompSpillAutoMeasuredDevice(sp->ac, &ns_per_byte, &headroom))
		CompSpillDeviceRemember(CompSpillFileDevice(sp->file), ns_per_byte,
								headroom);
}

/*
 * codec = auto: is room short?  The rest of the input, at the size the
 * plan expects (its rows not yet written, at least a tenth of those
 * written when the estimate is passed; at the encoded bytes per row
 * measured so far, or the plan's width and a row header before the first
 * frame), is weighed against what the temp file may still grow by
 * (CompSpillFileRoom: temp_file_limit, compspill.max_temp_space, the file
 * system's free space), less COMPSPILL_ROOM_MARGIN of it and the write
 * buffer.  When it does not fit, the chooser is told the stored fraction
 * that would (CompSpillAutoSetRoom), and EXPLAIN the limit.  Only while
 * runs are formed: a merge pass writes into the space its inputs leave,
 * and keeps the last figure.
 */
#define COMPSPILL_ROOM_MARGIN	0.25

static void
compspill_room_check(CompSpillSpiller *sp)
{
	CompSpillRoomLimit limit;
	double		done;
	double		left;
	double		per_row;
	double		need;
	double		budget;
	int64		room;

	sp->room_frames = 0;
	if (sp->expected_rows <= 0 || (sp->run != NULL && sp->run->level > 0))
		return;

	done = (double) sp->rows_formed + (sp->run ? (double) sp->run->nrows : 0);
	left = Max(sp->expected_rows - done, 0.1 * done);
	if (sp->raw_written > 0 && done > 0)
		per_row = (double) sp->raw_written / done;
	else
		per_row = sp->expected_width + COMPSPILL_ROW_HEADER;
	need = left * per_row;

	/* the spill's size as the plan expects it, for the device's share */
	CompSpillAutoSetExpectedRaw(sp->ac, (done + left) * per_row);

	room = CompSpillFileRoom(sp->file, &limit);
	if (limit == COMPSPILL_ROOM_NONE)
		return;
	budget = (double) room * (1.0 - COMPSPILL_ROOM_MARGIN) -
		(double) CompSpillFileBufferSize(sp->file);

	if (need <= budget)
	{
		CompSpillAutoSetRoom(sp->ac, INFINITY);
		return;
	}
	CompSpillAutoSetRoom(sp->ac, Max(budget, 0.0) / need);
	if (sp->stats->room == COMPSPILL_ROOM_NONE)
		sp->stats->room = limit;
}

/*
 * With codec = auto, is the next frame going out uncompressed because I/O
 * costs next to nothing (the temp files sit in the page cache)?  Then the
 * block codec's sort-aware encodings, which save bytes at a CPU cost, are
 * not worth finding either: a byte written and read back costs less than
 * COMPSPILL_CHEAP_IO_NS nanoseconds.  The encodings shrink lineitem's
 * blocks about threefold and cost about 1.4 ns per byte of rows to find
 * (perf, scale 0.3): they pay from about 2 ns per byte written and read.
 */
#define COMPSPILL_CHEAP_IO_NS	2.0

bool
compspill_io_is_cheap(CompSpillSpiller *sp, CompSpillCodec codec)
{
	CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS];
	double		write_ns;
	double		read_ns;

	if (codec != COMPSPILL_CODEC_NONE || CompSpillAutoRoomShort(sp->ac))
		return false;
	CompSpillAutoCurrentCosts(sp->ac, cost, &write_ns, &read_ns);
	return write_ns + read_ns < COMPSPILL_CHEAP_IO_NS;
}

/*
 * Has I/O been done since the figures *bytes_seen and *time_seen?  If so,
 * set *secs to the time it took.
 */
static inline bool
compspill_io_since(int64 bytes, instr_time time, const int64 *bytes_seen,
				   const instr_time *time_seen, double *secs)
{
	if (bytes <= *bytes_seen)
		return false;
	INSTR_TIME_SUBTRACT(time, *time_seen);
	*secs = INSTR_TIME_GET_DOUBLE(time);
	return true;
}

/* Return the seconds from one clock reading to a later one */
static double
compspill_seconds_between(instr_time from, instr_time to)
{
	INSTR_TIME_SUBTRACT(to, from);
	return INSTR_TIME_GET_DOUBLE(to);
}

/*
 * After a write stalled on the device, read how much the device writes in
 * the next COMPSPILL_DEVICE_WATCH_SECS, the dirty pages keeping it busy:
 * its pace, for codec = auto (where the kernel's block statistics can be
 * read; the writes' own spans measure it otherwise).  A device that wrote
 * less than COMPSPILL_DEVICE_WATCH_MIN meanwhile was idle, not slow: the
 * stall was something else (the backend descheduled in the write), and
 * nothing is recorded.  The statistics' busy time is no help: a device
 * throttled by a cgroup is idle while its requests wait to be let through,
 * and the throttle lets them through in bursts (the device wrote nothing
 * in the 50 ms after some stalls, twice its pace in others).
 *
 * The watch covers a second, and counts only if the spill's bytes kept
 * the device busy to its end: what the spill has written, less what the
 * device has written since the spill's first write, is still at least
 * COMPSPILL_DEVICE_WATCH_MIN when it ends.  With a quarter of a second,
 * on the benchmark's 250 MB/s device, watches read 1.5-2.6 MB written
 * while the spill wrote 7-12 MB (100-160 ns a byte), where one-second
 * watches and the spans between stalls read 15-26 ns, and auto took zstd
 * for the rest of the spill, at 1.35x lz4's time.  And a device that
 * catches up within the watch idles for the rest of it: a stall on the
 * file system's own reads (its block bitmaps, the page cache dropped),
 * with 5 MB of the spill's pages dirty, made a 6 MB/s device of a 250
 * MB/s one.  The device's other writers make the spill's backlog look
 * smaller, never larger: a watch may be lost, none is counted that
 * should not be.
 */
#define COMPSPILL_DEVICE_WATCH_SECS		1.0
#define COMPSPILL_DEVICE_WATCH_MIN		(256 * 1024)

static void
compspill_watch_device(CompSpillSpiller *sp, bool stalled, instr_time now)
{
	if (sp->dev_mark < 0 && stalled)
	{
		int64		written = CompSpillFileDeviceWritten(sp->file);

		if (written >= 0)
		{
			sp->dev_mark = written;
			sp->dev_mark_time = now;
		}
	}
	else if (sp->dev_mark >= 0)
	{
		double		secs = compspill_seconds_between(sp->dev_mark_time, now);

		if (secs >= COMPSPILL_DEVICE_WATCH_SECS)
		{
			int64		written = CompSpillFileDeviceWritten(sp->file);
			int64		backlog = sp->stats->bytes_written -
				(written - sp->dev_base);

			if (written - sp->dev_mark >= COMPSPILL_DEVICE_WATCH_MIN &&
				sp->dev_base >= 0 && backlog >= COMPSPILL_DEVICE_WATCH_MIN)
				CompSpillAutoRecordDevice(sp->ac,
										  (double) (written - sp->dev_mark),
										  secs);
			sp->dev_mark = -1;
		}
	}
}

/*
 * With codec = auto, pass the file I/O done since the last call to the
 * codec chooser, as totals: a write or a read covers many frames.  Called
 * after each frame written and each compressed frame read, so the reads of
 * a merge (an intermediate pass, or a store's reader) weigh the codecs of
 * the frames written after them.
 */
void
compspill_feed_io(CompSpillSpiller *sp)
{
	CompSpillStats *st = sp->stats;
	double		secs;

	CompSpillAutoSetDirect(sp->ac, st->dio_active);

	/* what the device had written when the spill's first write was seen */
	if (!sp->dev_base_read && !st->dio_active)
	{
		sp->dev_base_read = true;
		sp->dev_base = CompSpillFileDeviceWritten(sp->file);
	}
	if (compspill_io_since(st->bytes_written, st->write_time,
						   &sp->ac_written, &sp->ac_write_time, &secs))
	{
		instr_time	now;
		double		elapsed = 0.0;
		bool		stalled;

		/* the wall time since the last write, for the device's pace */
		INSTR_TIME_SET_CURRENT(now);
		if (!INSTR_TIME_IS_ZERO(sp->ac_write_wall))
			elapsed = compspill_seconds_between(sp->ac_write_wall, now);
		stalled = CompSpillAutoRecordWrite(sp->ac,
										   st->bytes_written - sp->ac_written,
										   secs, elapsed);
		sp->ac_written = st->bytes_written;
		sp->ac_write_time = st->write_time;
		sp->ac_write_wall = now;
		compspill_watch_device(sp, stalled, now);
	}
	if (compspill_io_since(st->bytes_read, st->read_time,
						   &sp->ac_read, &sp->ac_read_time, &secs))
	{
		CompSpillAutoRecordRead(sp->ac, st->bytes_read - sp->ac_read, secs);
		sp->ac_read = st->bytes_read;
		sp->ac_read_time = st->read_time;
	}
}
