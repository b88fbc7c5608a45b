/*-------------------------------------------------------------------------
 *
 * autocodec.c
 *	  compspill.codec = auto: choose each spill's codec, and its runs' frame
 *	  kind, from the costs measured while it runs.
 *
 * Whether compressing a spill pays depends on where the bytes go.  In the
 * page cache a byte costs a fraction of a nanosecond to write and to read
 * back, less than any codec spends on it, and the fastest spill stores
 * blocks raw.  On a disk that writes 50-250 MB/s a byte costs 4-20 ns each
 * way and zstd, which costs more CPU than lz4 but stores fewer bytes, wins.
 * The same machine can be either, from one spill to the next and within
 * one spill (the page cache fills, dirty pages start being throttled).  So
 * auto measures, as the spill runs, what each candidate costs and what the
 * temp device costs, and picks the codec that minimises the time.
 *
 * The model.  For a codec c, with per raw byte compression cost C_c and
 * decompression cost D_c (ns), compression ratio R_c (raw / stored bytes),
 * per file byte write and read costs W and Rd (ns), and k the number of
 * times each written byte is read back (1: the next merge reads it once),
 * the time per raw byte spilled is
 *
 *		T_c = C_c + k * D_c + (W + k * Rd) / R_c
 *
 * "none" is the codec with C = D = 0 and R = 1, so T_none = W + k * Rd.
 * CompSpillAutoDecide returns the codec of least T; codecs whose T is equal
 * (within a relative 1e-9) go to the one of least CPU cost, C + k * D.
 * The model ignores what does not depend on the codec (encoding, CRC) and
 * assumes I/O and CPU do not overlap, which holds for compspill: writes
 * and reads are synchronous FileWrite / FileRead calls.
 *
 * The measurements.  The run writer asks CompSpillAutoNext for the codec
 * of each block, times the compression and reports it with
 * CompSpillAutoRecordCompress (the raw size, the stored size, the
 * seconds); the spill file's writes and reads, each a coalesced buffer of
 * about write_size bytes holding many blocks, come through
 * CompSpillAutoRecordWrite / RecordRead as the bytes and time since the
 * last report; readers report decompression through
 * CompSpillAutoRecordDecompress.  Every figure is a per-byte cost
 * computed from totals: samples are summed until they add up to at least
 * COMPSPILL_AUTO_MIN_SAMPLE_NS of work (or COMPSPILL_AUTO_MAX_PENDING
 * bytes, for work that takes no measurable time), so a coarse clock, a
 * zero or negative duration (clamped to zero) or a small block never
 * makes a figure on its own, and a write is never charged to the block
 * that happened to trigger it.
 *
 * The figures are exponentially weighted averages, aged by data rather
 * than by samples: when a figure is updated, the weight of the new sample
 * is a / (a + H), where a is the number of bytes that have gone through
 * its stream (compression, decompression, writes, reads) since its last
 * update and H a horizon (COMPSPILL_AUTO_CPU_HORIZON, _IO_HORIZON,
 * _WRITE_HORIZON), capped at COMPSPILL_AUTO_MAX_WEIGHT.  The chosen
 * codec's figures, updated every block, move slowly (a 64 kB block weighs
 * 6%); a probed codec's figures, updated rarely, follow each probe more
 * closely; reads follow the device quickly (a 1 MB read weighs 50%),
 * writes slowly (see below); no sample weighs more than half, so that one
 * outlier (the backend descheduled for a while) does not take over.
 *
 * Writes and the page cache.  A buffered write costs a memory copy until
 * the device's dirty pages reach the kernel's limit; then the kernel
 * makes the writer wait for the device, in bursts: a write that finds the
 * cache full waits for a good part of it to drain, the next ones, while
 * the device works, do not.  A byte's real cost is the average over the
 * cache's size, so the write figure is aged over
 * COMPSPILL_AUTO_WRITE_HORIZON (32 MB, the order of a device's dirty cap):
 * a 1 MB write weighs 3%, the bursts average out, and once a slow device
 * has shown, the choice does not fall back to storing raw as soon as the
 * cache has room again (compressed frames are written at a fraction of
 * the rate, so their figure moves slowly too).  With a 1 MB horizon the
 * figure followed each burst and the cheap writes after it, and on the
 * throttled 50 MB/s device auto stored about half its frames raw.  A
 * device as fast as the spill produces bytes makes no writer wait and
 * costs nothing, which is right: compression's CPU would not be repaid.
 * (A writeback measurement with sync_file_range, handing each written MB
 * to the device and timing the wait for it, was tried to see the device
 * before the dirty limit: on the throttled 50 MB/s device it stored more
 * frames raw, not fewer, and took 1.5-2x the time; it is gone.)
 *
 * The device's pace.  That write figure is what the writes waited, per
 * byte, and it undercounts a device that holds the spill back: the kernel
 * lets a writer dirty pages freely until the device's dirty limit, then
 * stalls it (balance_dirty_pages) while the device drains them, and the
 * writer's work between the stalls goes on while the device writes.  On
 * the throttled 50 MB/s device, with lineitem's column frames stored raw,
 * the writes stalled 100-200 ms every 15 MB or so and waited a fifth of
 * the spill's time: 3 ns per byte, where the device takes 20, and auto kept
 * storing raw at 1.1-1.3x lz4's time.  So the writes are also seen as
 * spans from one stall (a write of COMPSPILL_AUTO_STALL_NS, 20 ms, or more)
 * to the next: a span starts and ends with the dirty pages at the limit,
 * so its bytes are what the device wrote in its wall time, and the span's
 * wall time per byte is the device's pace; and where the kernel's block
 * statistics can be read, the caller also watches what the device writes
 * in the second after a stall and passes it to
 * CompSpillAutoRecordDevice (spill/codecchoice.c), which sees the pace a
 * span earlier.  A span counts when it holds 4
 * MB or more and its writes waited a quarter of it (on the throttled
 * device, 30-60%).  The wall time between writes, less what the blocks
 * compressed in between took to compress, per raw byte of those blocks,
 * is the spill's own work (a run's writes come back to back, and the
 * sort's work for the next run lies between its last and the next run's
 * first).  With both known, a spill goes at the slower of its work and
 * the device, the two overlapping:
 *
 *		T_c = ||B + C_c + P / R_c, s_c V / R_c||_4 + k * (D_c + Rd / R_c)
 *
 * with V the device's ns per byte, P the cheapest write (the page cache's
 * copy), B the spill's work per raw byte outside the codec and the
 * writes (measured as above, whatever the codecs of the blocks, from a
 * sort's second run on), and s_c the share of the spill's file the device
 * must write: all of it but the page cache's room, the bytes written
 * before the first stall, which are read back and dropped with the file
 * before the kernel writes them (of the file at the size the plan
 * expects).  The slower of the two is their 4-norm, not their maximum:
 * the writes come in bursts between the reading of the runs' rows and get
 * through the dirty limit in bursts, so the writer waits now and then
 * where the device keeps up on average (storing raw took 1.08-1.10x lz4's
 * time on the throttled 50 MB/s disk where the maximum found them equal).
 * Compression pays where the device is the slower, and only as far as it
 * brings the bytes under the device's pace: lz4 at 50 MB/s, raw at 250
 * (the spill's work is slower than the device there).  A stray stall (the
 * backend descheduled in a write) would make a span the spill's own pace,
 * which then looks like a device the current choice just keeps up with;
 * such spans wait little, and the share they must wait keeps them out.
 * Spills that never stall (the page cache, a device that keeps up) keep
 * the linear model above.  What a spill stores raw before its first stall
 * is the price of learning the device; a pace a spill measured is handed
 * on (CompSpillAutoMeasuredDevice) to later spills on the same device
 * (spill/codecchoice.c, shared/devices.c), which start from it
 * (CompSpillAutoRecallDevice) until their own measurements take over.
 *
 * Reads.  In a sort every run is written before any is read, so the reads
 * of the final merge come too late to weigh anything; they count for the
 * writes that follow them (an intermediate merge pass, a store written
 * and read in turns).  Until a read is timed, a buffered spill's bytes
 * are assumed to come back from the page cache, at the cost of the
 * cheapest write measured (the copy, before the device showed): a
 * spill's file is read soon after it is written, and on the machines this
 * was measured on the kernel keeps it cached when it holds a small share
 * of memory.  Under direct I/O a read costs what a write does.
 *
 * What is not measured yet is estimated:
 *	- decompression, before a block of that codec has been read, costs a
 *	  fixed fraction of its compression: COMPSPILL_AUTO_LZ4_DECOMPRESS
 *	  (0.2: lz4 decodes about five times faster than it encodes) and
 *	  COMPSPILL_AUTO_ZSTD_DECOMPRESS (0.35 at levels up to 3; 0.1 above,
 *	  where compression slows down and decompression does not);
 *	- writes, before the first is timed, cost COMPSPILL_AUTO_PRIOR_WRITE_NS
 *	  (2.5 ns/byte, 400 MB/s, between the page cache and a disk);
 *	- reads, before the first is timed, cost the cheapest write (buffered)
 *	  or what writes cost (direct I/O);
 *	- "none" costs no CPU and stores as many bytes as it is given.
 *
 * Probing.  A codec is only measured when blocks are compressed with it,
 * so the first blocks of a spill probe lz4 and zstd (until each has a
 * figure, at most COMPSPILL_AUTO_INITIAL_PROBES blocks each), and later one
 * block now and then is compressed with a codec that is not the current
 * choice: every 48 blocks for a codec within 1.5 times the choice's time,
 * every 128 within 3 times, every 512 beyond.  Probes are never more than
 * COMPSPILL_AUTO_MAX_PROBE_PCT percent of the blocks.  While the choice
 * compresses, a probe block is stored with the probed codec like any
 * other block: nothing is compressed twice.  While it stores raw, a probe
 * block is compressed to be timed and stored raw all the same
 * (CompSpillAutoStoresRaw): a frame stored compressed would make every
 * reader of the spill keep a decompression buffer (and zstd's context),
 * and a merge of raw runs would read fewer of them at once for the sake
 * of a probe in a few hundred blocks.  Decompression then keeps its
 * estimate (below) until a frame of that codec is read; in a sort, whose
 * runs are all written before any is read, that is what it had anyway.
 * The compression of a probe's block is timed on a second pass over it
 * (spill/runwriter.c): the first, with a codec not used for many blocks,
 * runs with cold caches and measured 1.3x (lz4) to 2.6x (zstd) what the
 * same codec costs block after block, which kept auto from a codec that
 * paid.  "none" is never probed; its costs are known.  The choice changes only
 * when another codec is better by COMPSPILL_AUTO_HYSTERESIS (2%), so that
 * noise in the measurements does not make it flap; switching itself costs
 * nothing (each frame names its codec), so the margin is small.
 *
 * Room.  The spill can say that room is short (CompSpillAutoSetRoom):
 * the rest of the spill may store at most a given number of bytes per raw
 * byte, or it would pass temp_file_limit, compspill.max_temp_space or the
 * free space of the file system (spill/codecchoice.c works the fraction out).
 * Then the candidates are the codecs whose stored fraction is within it,
 * and of those the one of least time as above
 * (CompSpillAutoDecideRoom); when none is, the one that stores least.  A
 * choice that no longer fits is left at once, without the hysteresis; and
 * the runs are written in column frames, which store fewer bytes.
 *
 * Frame kind.  The same measurements decide, at the start of each run of
 * a sort, whether it is written in row frames, which cost a memcpy a row,
 * or in column frames, which cost the block codec's CPU and save bytes:
 * row frames while the I/O of the bytes column frames would save, as
 * measured on the column frames written (CompSpillAutoRecordColumns),
 * costs less than their CPU (CompSpillAutoRowFrames).
 *
 * Nothing here allocates, raises errors or reads the clock: callers time
 * their own work with instr_time and pass seconds, which keeps this file a
 * pure computation that test/unit runs outside the server.
 *
 * IDENTIFICATION
 *	  src/codec/autocodec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "base/settings.h"
#include "codec/autocodec.h"
#include "codec/autocodec_private.h"

/* decompression cost as a fraction of compression cost, until measured */
#define COMPSPILL_AUTO_LZ4_DECOMPRESS		0.2
#define COMPSPILL_AUTO_ZSTD_DECOMPRESS		0.35	/* levels <= 3 */
#define COMPSPILL_AUTO_ZSTD_DECOMPRESS_SLOW 0.1 /* levels > 3 */

/* write cost per file byte assumed until a write has been timed */
#define COMPSPILL_AUTO_PRIOR_WRITE_NS		2.5

/* a sample is folded in once it holds this much work ... */
#define COMPSPILL_AUTO_MIN_SAMPLE_NS		20000.0
/* ... or this many bytes, whatever their time */
#define COMPSPILL_AUTO_MAX_PENDING			(4.0 * 1024 * 1024)

/* smoothing horizons in bytes, and the most one sample may weigh */
#define COMPSPILL_AUTO_CPU_HORIZON			(1.0 * 1024 * 1024)
#define COMPSPILL_AUTO_IO_HORIZON			(1.0 * 1024 * 1024)
#define COMPSPILL_AUTO_WRITE_HORIZON		(32.0 * 1024 * 1024)
#define COMPSPILL_AUTO_PACE_HORIZON		(8.0 * 1024 * 1024)
#define COMPSPILL_AUTO_MAX_WEIGHT			0.5

/*
 * A write that waits this long has met the dirty limit; the device is
 * measured over at least this many bytes from one such stall to the next,
 * when the writes waited this share of the time in between
 */
#define COMPSPILL_AUTO_STALL_NS				20e6
#define COMPSPILL_AUTO_MIN_SPAN				(4.0 * 1024 * 1024)
#define COMPSPILL_AUTO_SPAN_WAIT_SHARE		0.15

/* the least stored fraction believed: a ratio of at most a million */
#define COMPSPILL_AUTO_MIN_STORED_FRACTION	1e-6

/* probing */
#define COMPSPILL_AUTO_INITIAL_PROBES		4
#define COMPSPILL_AUTO_PROBE_NEAR			48	/* within 1.5 times */
#define COMPSPILL_AUTO_PROBE_MID			128 /* within 3 times */
#define COMPSPILL_AUTO_PROBE_FAR			512
#define COMPSPILL_AUTO_MAX_PROBE_PCT		5

/* a better codec must save this fraction of the time to be switched to */
#define COMPSPILL_AUTO_HYSTERESIS			0.02

/* relative difference under which two times are equal */
#define COMPSPILL_AUTO_TIE					1e-9

static bool compspill_auto_usable(const CompSpillCodecCost *cost);
static void compspill_auto_estimate_init(CompSpillAutoEstimate *est);
static void compspill_auto_estimate_set(CompSpillAutoEstimate *est,
										double value);
static double compspill_auto_estimate_add(CompSpillAutoEstimate *est,
										  double units, double amount,
										  double stream, double horizon,
										  double min_amount);
static double compspill_auto_ns(double seconds);
static bool compspill_auto_stored_codec(CompSpillCodec codec);
static int64 compspill_auto_probe_interval(double t_codec, double t_choice);
static CompSpillCodec compspill_auto_hand_out(CompSpillAutoCodec *ac,
											  CompSpillCodec codec,
											  bool probe);

/*
 * The share of a spill's file, stored at ratio, that the device must write:
 * what the page cache cannot hold.  The spill's last cache_bytes are read
 * back and dropped with the file before they reach the device, so a spill
 * that a codec shrinks to little more than the cache's room costs the
 * device little more than nothing.
 */
static double
compspill_auto_device_share(const CompSpillDevicePace *pace, double ratio)
{
	if (pace->spill_raw_bytes > 0.0 && pace->cache_bytes > 0.0)
		return Max(1.0 - pace->cache_bytes * ratio / pace->spill_raw_bytes,
				   0.0);
	return 1.0;
}

/*
 * The time of two stages that overlap imperfectly, each taking a and b
 * alone: their p-norm, 1.19 times either where they are equal (p = 4), the
 * slower alone where one is far the slower (see the file header)
 */
#define COMPSPILL_AUTO_OVERLAP_NORM		4.0

static double
compspill_auto_overlap(double a, double b)
{
	double		hi = Max(a, b);

	if (!(hi > 0.0))
		return 0.0;
	return hi * pow(pow(a / hi, COMPSPILL_AUTO_OVERLAP_NORM) +
					pow(b / hi, COMPSPILL_AUTO_OVERLAP_NORM),
					1.0 / COMPSPILL_AUTO_OVERLAP_NORM);
}

/*
 * Return the model's time per raw byte for a codec with the given costs;
 * with pace (not NULL), writes go at a device's pace behind the page cache,
 * overlapped with the spill's work (see the file header).
 */
double
CompSpillAutoModelTime(const CompSpillCodecCost *cost,
					   double write_ns_per_byte, double read_ns_per_byte,
					   double reads_per_write, const CompSpillDevicePace *pace)
{
	double		reading = reads_per_write *
		(cost->decompress_ns_per_byte + read_ns_per_byte / cost->ratio);

	if (pace != NULL)
	{
		double		work = cost->compress_ns_per_byte +
			pace->copy_ns_per_byte / cost->ratio;
		double		device = pace->device_ns_per_byte / cost->ratio *
			compspill_auto_device_share(pace, cost->ratio);

		/*
		 * The spill and the device overlap imperfectly (see the file
		 * header).  The base is every codec's: only what exceeds it is
		 * counted.
		 */
		return compspill_auto_overlap(pace->base_ns_per_byte + work, device) -
			pace->base_ns_per_byte + reading;
	}
	return cost->compress_ns_per_byte + write_ns_per_byte / cost->ratio +
		reading;
}

/* Say whether a cost can be weighed: known, with sane figures */
static bool
compspill_auto_usable(const CompSpillCodecCost *cost)
{
	return cost->known &&
		isfinite(cost->compress_ns_per_byte) &&
		isfinite(cost->decompress_ns_per_byte) &&
		isfinite(cost->ratio) && cost->ratio > 0.0;
}

/*
 * Return the codec (NONE, LZ4 or ZSTD) of least modelled time; equal times
 * go to the codec of least CPU cost, then to the lower codec number.
 * Codecs whose cost is not known are not candidates; with none known,
 * return NONE.
 */
CompSpillCodec
CompSpillAutoDecide(const CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
					double write_ns_per_byte, double read_ns_per_byte,
					double reads_per_write, const CompSpillDevicePace *pace)
{
	double		t[COMPSPILL_NUM_STORED_CODECS];
	double		best_t = INFINITY;
	double		best_cpu = INFINITY;
	CompSpillCodec best = COMPSPILL_CODEC_NONE;

	for (int c = 0; c < COMPSPILL_NUM_STORED_CODECS; c++)
	{
		t[c] = INFINITY;
		if (!compspill_auto_usable(&cost[c]))
			continue;
		t[c] = CompSpillAutoModelTime(&cost[c], write_ns_per_byte,
									  read_ns_per_byte, reads_per_write,
									  pace);
		if (isnan(t[c]))
			t[c] = INFINITY;
		if (t[c] < best_t)
			best_t = t[c];
	}

	if (!isfinite(best_t))
		return COMPSPILL_CODEC_NONE;

	for (int c = 0; c < COMPSPILL_NUM_STORED_CODECS; c++)
	{
		double		cpu;

		if (t[c] > best_t + fabs(best_t) * COMPSPILL_AUTO_TIE)
			continue;
		cpu = cost[c].compress_ns_per_byte +
			reads_per_write * cost[c].decompress_ns_per_byte;
		if (cpu < best_cpu)
		{
			best_cpu = cpu;
			best = (CompSpillCodec) c;
		}
	}

	return best;
}

/*
 * Return the codec of least modelled time (as CompSpillAutoDecide) among
 * those whose stored fraction, 1 / ratio, is within room_fraction; when
 * none is, the known codec that stores least (equal fractions go to the
 * lower CPU cost).  room_fraction INFINITY (or NaN): no limit, the same as
 * CompSpillAutoDecide.
 */
CompSpillCodec
CompSpillAutoDecideRoom(const CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
						double write_ns_per_byte, double read_ns_per_byte,
						double reads_per_write,
						const CompSpillDevicePace *pace, double room_fraction)
{
	CompSpillCodecCost fit[COMPSPILL_NUM_STORED_CODECS];
	bool		any = false;
	CompSpillCodec least = COMPSPILL_CODEC_NONE;
	double		least_stored = INFINITY;
	double		least_cpu = INFINITY;

	if (!(room_fraction < INFINITY))
		return CompSpillAutoDecide(cost, write_ns_per_byte, read_ns_per_byte,
								   reads_per_write, pace);

	for (int c = 0; c < COMPSPILL_NUM_STORED_CODECS; c++)
	{
		double		stored;
		double		cpu;

		fit[c] = cost[c];
		if (!compspill_auto_usable(&cost[c]))
			continue;
		stored = 1.0 / cost[c].ratio;
		cpu = cost[c].compress_ns_per_byte +
			reads_per_write * cost[c].decompress_ns_per_byte;
		if (stored <= room_fraction)
			any = true;
		else
			fit[c].known = false;
		if (stored < least_stored * (1.0 - COMPSPILL_AUTO_TIE) ||
			(stored <= least_stored * (1.0 + COMPSPILL_AUTO_TIE) &&
			 cpu < least_cpu))
		{
			least = (CompSpillCodec) c;
			least_stored = Min(stored, least_stored);
			least_cpu = cpu;
		}
	}

	if (!any)
		return least;
	return CompSpillAutoDecide(fit, write_ns_per_byte, read_ns_per_byte,
							   reads_per_write, pace);
}

/*
 * Say how many stored bytes per raw byte the rest of the spill may take
 * for lack of room; INFINITY: as many as it likes.
 */
void
CompSpillAutoSetRoom(CompSpillAutoCodec *ac, double room_fraction)
{
	if (isnan(room_fraction))
		room_fraction = INFINITY;
	ac->room_fraction = Max(room_fraction, 0.0);
}

/* Say whether room is short: CompSpillAutoSetRoom set a limit */
bool
CompSpillAutoRoomShort(const CompSpillAutoCodec *ac)
{
	return ac->room_fraction < INFINITY;
}

/*
 * Say whether the current choice stores blocks raw, room not being short:
 * then a probe's block is compressed only to be timed, and stored raw (see
 * the file header).
 */
bool
CompSpillAutoStoresRaw(const CompSpillAutoCodec *ac)
{
	return ac->choice == COMPSPILL_CODEC_NONE && !CompSpillAutoRoomShort(ac);
}

/* Make an estimate with no sample */
static void
compspill_auto_estimate_init(CompSpillAutoEstimate *est)
{
	memset(est, 0, sizeof(CompSpillAutoEstimate));
}

/* Make an estimate that is known a priori */
static void
compspill_auto_estimate_set(CompSpillAutoEstimate *est, double value)
{
	compspill_auto_estimate_init(est);
	est->value = value;
	est->known = true;
}

/*
 * Add units (bytes) costing amount to an estimate, folding what is pending
 * into the average once it holds min_amount or COMPSPILL_AUTO_MAX_PENDING
 * bytes; stream is the position of the estimate's stream after these
 * bytes, and the sample's weight grows with the bytes the stream moved
 * since the last fold.  Return the sample folded in, or -1 if none was.
 */
static double
compspill_auto_estimate_add(CompSpillAutoEstimate *est, double units,
							double amount, double stream, double horizon,
							double min_amount)
{
	double		sample;

	est->pending_units += units;
	est->pending_amount += amount;

	if (est->pending_units <= 0.0)
		return -1.0;
	if (est->pending_amount < min_amount &&
		est->pending_units < COMPSPILL_AUTO_MAX_PENDING)
		return -1.0;

	sample = est->pending_amount / est->pending_units;
	if (!est->known)
	{
		est->value = sample;
		est->known = true;
	}
	else
	{
		double		aged = Max(stream - est->stamp, est->pending_units);
		double		weight = Min(aged / (aged + horizon),
								 COMPSPILL_AUTO_MAX_WEIGHT);

		est->value += weight * (sample - est->value);
	}

	est->stamp = stream;
	est->pending_units = 0.0;
	est->pending_amount = 0.0;
	return sample;
}

/* Convert a measured duration to nanoseconds, zero if it is not positive */
static double
compspill_auto_ns(double seconds)
{
	if (!(seconds > 0.0))		/* also catches NaN */
		return 0.0;
	return seconds * 1e9;
}

/* Say whether codec is one a block can be stored with */
static bool
compspill_auto_stored_codec(CompSpillCodec codec)
{
	return codec == COMPSPILL_CODEC_NONE ||
		codec == COMPSPILL_CODEC_LZ4 ||
		codec == COMPSPILL_CODEC_ZSTD;
}

/* Return the bytes of an auto codec state, for its owner to allocate */
Size
CompSpillAutoSize(void)
{
	return sizeof(CompSpillAutoCodec);
}

/*
 * Initialise the auto codec state of one operation; zstd_level is the
 * level its compressor uses for zstd.
 */
void
CompSpillAutoInit(CompSpillAutoCodec *ac, int zstd_level)
{
	memset(ac, 0, sizeof(CompSpillAutoCodec));
	ac->zstd_level = zstd_level;
	ac->reads_per_write = 1.0;
	ac->choice = COMPSPILL_CODEC_NONE;
	ac->write_floor = -1.0;
	ac->room_fraction = INFINITY;

	compspill_auto_estimate_init(&ac->write);
	compspill_auto_estimate_init(&ac->read);
	compspill_auto_estimate_init(&ac->work);
	compspill_auto_estimate_init(&ac->device);
	compspill_auto_estimate_init(&ac->columns);

	for (int c = 0; c < COMPSPILL_NUM_STORED_CODECS; c++)
	{
		CompSpillAutoCodecState *cs = &ac->codec[c];

		compspill_auto_estimate_init(&cs->compress);
		compspill_auto_estimate_init(&cs->decompress);
		compspill_auto_estimate_init(&cs->stored);
		cs->last_block = -1;
	}

	/* storing raw costs no CPU and saves nothing, until measured otherwise */
	compspill_auto_estimate_set(&ac->codec[COMPSPILL_CODEC_NONE].compress, 0.0);
	compspill_auto_estimate_set(&ac->codec[COMPSPILL_CODEC_NONE].decompress,
								0.0);
	compspill_auto_estimate_set(&ac->codec[COMPSPILL_CODEC_NONE].stored, 1.0);
}

/*
 * Fill in the model's inputs as they stand: each stored codec's cost, with
 * estimates where nothing is measured yet, and the I/O costs.
 */
void
CompSpillAutoCurrentCosts(const CompSpillAutoCodec *ac,
						  CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS],
						  double *write_ns_per_byte, double *read_ns_per_byte)
{
	for (int c = 0; c < COMPSPILL_NUM_STORED_CODECS; c++)
	{
		const CompSpillAutoCodecState *cs = &ac->codec[c];
		CompSpillCodecCost *cc = &cost[c];

		cc->known = cs->compress.known && cs->stored.known;
		cc->compress_ns_per_byte = cs->compress.value;
		cc->ratio = 1.0 / Max(cs->stored.value,
							  COMPSPILL_AUTO_MIN_STORED_FRACTION);
		if (cs->decompress.known)
			cc->decompress_ns_per_byte = cs->decompress.value;
		else if (c == COMPSPILL_CODEC_LZ4)
			cc->decompress_ns_per_byte =
				cs->compress.value * COMPSPILL_AUTO_LZ4_DECOMPRESS;
		else if (c == COMPSPILL_CODEC_ZSTD)
			cc->decompress_ns_per_byte = cs->compress.value *
				(ac->zstd_level <= 3 ? COMPSPILL_AUTO_ZSTD_DECOMPRESS :
				 COMPSPILL_AUTO_ZSTD_DECOMPRESS_SLOW);
		else
			cc->decompress_ns_per_byte = 0.0;
	}

	*write_ns_per_byte = ac->write.known ? ac->write.value :
		COMPSPILL_AUTO_PRIOR_WRITE_NS;
	if (ac->read.known)
		*read_ns_per_byte = ac->read.value;
	else if (!ac->direct && ac->write_floor >= 0.0)
		*read_ns_per_byte = Min(ac->write_floor, *write_ns_per_byte);
	else
		*read_ns_per_byte = *write_ns_per_byte;
}

/*
 * Return how many blocks apart to probe a codec whose modelled time is
 * t_codec when the choice's is t_choice.
 */
static int64
compspill_auto_probe_interval(double t_codec, double t_choice)
{
	if (!(t_choice > 0.0) || !isfinite(t_codec))
		return COMPSPILL_AUTO_PROBE_NEAR;
	if (t_codec <= 1.5 * t_choice)
		return COMPSPILL_AUTO_PROBE_NEAR;
	if (t_codec <= 3.0 * t_choice)
		return COMPSPILL_AUTO_PROBE_MID;
	return COMPSPILL_AUTO_PROBE_FAR;
}

/* Count a block handed out with codec, a probe or not, and return codec */
static CompSpillCodec
compspill_auto_hand_out(CompSpillAutoCodec *ac, CompSpillCodec codec,
						bool probe)
{
	CompSpillAutoCodecState *cs = &ac->codec[codec];

	cs->last_block = ac->nblocks;
	cs->blocks++;
	ac->probing = probe;
	if (probe)
	{
		cs->probes++;
		ac->nprobes++;
	}
	ac->nblocks++;
	return codec;
}

/*
 * Return the codec for the next block: the current choice, revised from
 * the latest figures, or now and then a probe of another codec.
 */
CompSpillCodec
CompSpillAutoNext(CompSpillAutoCodec *ac)
{
	CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS];
	double		w;
	double		r;
	double		k = ac->reads_per_write;
	double		t_choice;
	CompSpillCodec best;
	CompSpillCodec probe = COMPSPILL_CODEC_NONE;
	int64		most_overdue = 0;
	CompSpillDevicePace pace_buf;
	const CompSpillDevicePace *pace = NULL;

	CompSpillAutoCurrentCosts(ac, cost, &w, &r);

	/* the first blocks measure each codec */
	for (int c = COMPSPILL_CODEC_LZ4; c <= COMPSPILL_CODEC_ZSTD; c++)
	{
		if (!cost[c].known &&
			ac->codec[c].probes < COMPSPILL_AUTO_INITIAL_PROBES)
			return compspill_auto_hand_out(ac, (CompSpillCodec) c, true);
	}

	/*
	 * Revise the choice, if another codec is clearly better; but not before
	 * a write is timed (room aside): the prior write cost would decide
	 * alone, and the first megabytes of a spill nearly always go to the
	 * page cache, where storing raw is fastest.
	 */
	if (CompSpillAutoCurrentPace(ac, &pace_buf))
		pace = &pace_buf;
	best = CompSpillAutoDecideRoom(cost, w, r, k, pace, ac->room_fraction);
	if (!ac->write.known && !CompSpillAutoRoomShort(ac))
		best = ac->choice;
	if (best != ac->choice)
	{
		bool		change = true;
		bool		fits = !CompSpillAutoRoomShort(ac) ||
			(compspill_auto_usable(&cost[ac->choice]) &&
			 1.0 / cost[ac->choice].ratio <= ac->room_fraction);

		if (fits && compspill_auto_usable(&cost[ac->choice]))
		{
			double		t_best = CompSpillAutoModelTime(&cost[best], w, r, k,
														 pace);
			double		t_cur = CompSpillAutoModelTime(&cost[ac->choice],
													   w, r, k, pace);

			change = t_best < t_cur * (1.0 - COMPSPILL_AUTO_HYSTERESIS);
		}
		if (change)
		{
			if (ac->nblocks > ac->nprobes)
				ac->nswitches++;	/* not the first choice */
			ac->choice = best;
		}
	}

	/* probe another codec now and then, within the probe budget */
	if ((ac->nprobes + 1) * 100 <= (ac->nblocks + 1) * COMPSPILL_AUTO_MAX_PROBE_PCT)
	{
		t_choice = CompSpillAutoModelTime(&cost[ac->choice], w, r, k, pace);

		for (int c = COMPSPILL_CODEC_LZ4; c <= COMPSPILL_CODEC_ZSTD; c++)
		{
			int64		interval;
			int64		overdue;

			if (c == (int) ac->choice)
				continue;
			if (compspill_auto_usable(&cost[c]))
				interval = compspill_auto_probe_interval(CompSpillAutoModelTime(&cost[c], w, r, k, pace),
														 t_choice);
			else
				interval = COMPSPILL_AUTO_PROBE_NEAR;

			overdue = ac->nblocks - ac->codec[c].last_block - interval + 1;
			if (overdue > most_overdue)
			{
				most_overdue = overdue;
				probe = (CompSpillCodec) c;
			}
		}
		if (most_overdue > 0)
			return compspill_auto_hand_out(ac, probe, true);
	}

	return compspill_auto_hand_out(ac, ac->choice, false);
}

/*
 * Say whether the last block handed out is a probe of a codec that is not
 * the choice (its compression is timed warm: spill/runwriter.c)
 */
bool
CompSpillAutoProbing(const CompSpillAutoCodec *ac)
{
	return ac->probing;
}

/*
 * Record that rawlen bytes were compressed with codec into storedlen bytes
 * (rawlen when it did not pay, or for none) in the given seconds.
 */
void
CompSpillAutoRecordCompress(CompSpillAutoCodec *ac, CompSpillCodec codec,
							Size rawlen, Size storedlen, double seconds)
{
	CompSpillAutoCodecState *cs;
	double		raw = (double) rawlen;

	if (!compspill_auto_stored_codec(codec) || rawlen == 0)
		return;
	cs = &ac->codec[codec];

	ac->compressed_bytes += raw;
	ac->raw_bytes += raw;
	ac->work_raw += raw;
	ac->work_codec_ns += compspill_auto_ns(seconds);
	compspill_auto_estimate_add(&cs->compress, raw,
								compspill_auto_ns(seconds),
								ac->compressed_bytes,
								COMPSPILL_AUTO_CPU_HORIZON,
								COMPSPILL_AUTO_MIN_SAMPLE_NS);
	compspill_auto_estimate_add(&cs->stored, raw,
								(double) Max(storedlen, (Size) 1),
								ac->compressed_bytes,
								COMPSPILL_AUTO_CPU_HORIZON, 0.0);
}

/*
 * Record a block of rawlen bytes stored raw without a codec tried on it:
 * no codec's figures change, but the block is part of the spill's work
 * between two writes (see CompSpillAutoRecordWrite).
 */
void
CompSpillAutoRecordStoredRaw(CompSpillAutoCodec *ac, Size rawlen)
{
	ac->raw_bytes += (double) rawlen;
	ac->work_raw += (double) rawlen;
}

/*
 * Record one physical write of bytes to the spill file taking seconds;
 * elapsed is the wall time since the end of the write before it, this one
 * included (0 when unknown).  Return true if it was a buffered write that
 * stalled on the device (see the file header).
 */
bool
CompSpillAutoRecordWrite(CompSpillAutoCodec *ac, Size bytes, double seconds,
						 double elapsed)
{
	double		sample;
	double		wait_ns = compspill_auto_ns(seconds);
	double		wall_ns = compspill_auto_ns(elapsed);

	if (bytes == 0)
		return false;
	ac->written_bytes += (double) bytes;

	/*
	 * Until the horizon is passed the write figure is the plain average of
	 * the writes so far (the horizon is what has been written before the
	 * pending bytes), as the spill's work is below: a new file's first
	 * write costs several times the ones after it (9 ns a byte for 4 kB
	 * where the next megabyte took 1), and as the first sample it would
	 * otherwise set the figure, weighing 1 against 4 kB / 32 MB for each
	 * sample after it, for the next 30 MB or so.
	 */
	sample = compspill_auto_estimate_add(&ac->write, (double) bytes,
										 wait_ns, ac->written_bytes,
										 Min(COMPSPILL_AUTO_WRITE_HORIZON,
											 ac->write.stamp),
										 COMPSPILL_AUTO_MIN_SAMPLE_NS);
	if (sample >= 0.0 && (ac->write_floor < 0.0 || sample < ac->write_floor))
		ac->write_floor = sample;

	/*
	 * The spill's own work since the last write: the wall time outside the
	 * writes and the compression of the blocks in between, per raw byte of
	 * them.  Until the horizon is passed the figure is the plain average
	 * of what was measured (the horizon is what has been), not weighted
	 * towards the first writes, which come back to back.
	 */
	if (!ac->direct && wall_ns > 0.0 && ac->work_raw > 0.0)
	{
		ac->work_bytes += ac->work_raw;
		compspill_auto_estimate_add(&ac->work, ac->work_raw,
									Max(wall_ns - wait_ns - ac->work_codec_ns,
										0.0),
									ac->work_bytes,
									Min(COMPSPILL_AUTO_PACE_HORIZON,
										ac->work_bytes - ac->work_raw),
									COMPSPILL_AUTO_MIN_SAMPLE_NS);
	}
	ac->work_raw = 0.0;
	ac->work_codec_ns = 0.0;

	if (ac->direct || !(wall_ns > 0.0))
		return false;
	wall_ns = Max(wall_ns, wait_ns);

	/* the device's: the bytes written from one stall to the next */
	ac->span_bytes += (double) bytes;
	ac->span_ns += wall_ns;
	ac->span_wait_ns += wait_ns;
	if (wait_ns >= COMPSPILL_AUTO_STALL_NS)
	{
		if (ac->stalled && ac->span_bytes >= COMPSPILL_AUTO_MIN_SPAN &&
			ac->span_wait_ns >= ac->span_ns * COMPSPILL_AUTO_SPAN_WAIT_SHARE)
		{
			ac->device_bytes += ac->span_bytes;
			compspill_auto_estimate_add(&ac->device, ac->span_bytes,
										ac->span_ns, ac->device_bytes,
										COMPSPILL_AUTO_PACE_HORIZON, 0.0);
		}
		if (!ac->stalled && !ac->device_recalled)
			ac->cache_room = ac->written_bytes;
		ac->stalled = true;
		ac->span_bytes = 0.0;
		ac->span_ns = 0.0;
		ac->span_wait_ns = 0.0;
		return true;
	}
	return false;
}

/*
 * Record that the device under the spill file wrote bytes in the given
 * seconds while it was holding the spill back (the caller reads the
 * kernel's statistics for it after a stall): its pace, seen directly.
 */
void
CompSpillAutoRecordDevice(CompSpillAutoCodec *ac, double bytes,
						  double seconds)
{
	if (!(bytes > 0.0) || !(seconds > 0.0))
		return;
	ac->device_bytes += bytes;
	compspill_auto_estimate_add(&ac->device, bytes, compspill_auto_ns(seconds),
								ac->device_bytes,
								COMPSPILL_AUTO_PACE_HORIZON, 0.0);
}

/*
 * Start from a device pace an earlier spill measured on the same device
 * (shared/devices.c): the choice weighs the device as if this spill had
 * seen it, until its own spans and watches replace the figure.
 */
void
CompSpillAutoRecallDevice(CompSpillAutoCodec *ac, double ns_per_byte,
						  double headroom)
{
	if (!(ns_per_byte > 0.0) || ac->device.known)
		return;
	compspill_auto_estimate_set(&ac->device, ns_per_byte);
	ac->cache_room = Max(headroom, 0.0);
	ac->device_recalled = true;
}

/*
 * Say that a sort's first run is written.  Its writes came after the sort
 * of rows read before the spill began, so they hold little of the spill's
 * work per byte (2-3 ns where the later runs' hold 13-15, with the reading
 * of their rows between one run's last write and the next one's first):
 * the spill's work is measured from the next run on.
 */
void
CompSpillAutoFirstRunDone(CompSpillAutoCodec *ac)
{
	compspill_auto_estimate_init(&ac->work);
	ac->work_bytes = 0.0;
}

/*
 * Say how many raw bytes the whole spill is expected to hold (0: not
 * known): with the device's pace known, the last of them stay in the page
 * cache (CompSpillAutoModelTime).
 */
void
CompSpillAutoSetExpectedRaw(CompSpillAutoCodec *ac, double raw_bytes)
{
	ac->expected_raw = Max(raw_bytes, 0.0);
}

/*
 * Say how many times each byte written is expected to be read back: 1 for
 * a sort's runs and most stores, the outer rows of a nested loop for the
 * Material on its inner side, which is written in full before its first
 * rescan, so the count must come from the plan.  Each codec's reading
 * (its decompression and the read of its bytes) is weighed that many times
 * (CompSpillAutoModelTime).
 */
void
CompSpillAutoSetReadsPerWrite(CompSpillAutoCodec *ac, double reads)
{
	ac->reads_per_write = Max(reads, 1.0);
}

/*
 * Fill in the device's pace as this spill measured it, and the file bytes
 * written before its first stall, and return true, when it measured one
 * over COMPSPILL_AUTO_REMEMBER_BYTES or more of the device's writes, after
 * a first stall that came COMPSPILL_AUTO_REMEMBER_ROOM or more into the
 * spill.  The kernel holds a writer at a device's dirty limit, which is
 * tens of MB or more (30 MB on the throttled 50 MB/s device); a stall
 * sooner is something else (a backend descheduled in a write, a journal
 * commit), and so may be what the device wrote after it, which later
 * spills should not take for its pace.  A recalled pace that nothing
 * confirmed is not this spill's to pass on either.
 */
#define COMPSPILL_AUTO_REMEMBER_BYTES		(2.0 * 1024 * 1024)
#define COMPSPILL_AUTO_REMEMBER_ROOM		(8.0 * 1024 * 1024)

bool
CompSpillAutoMeasuredDevice(const CompSpillAutoCodec *ac, double *ns_per_byte,
							double *headroom)
{
	if (!ac->device.known ||
		ac->device_bytes < COMPSPILL_AUTO_REMEMBER_BYTES ||
		ac->cache_room < COMPSPILL_AUTO_REMEMBER_ROOM)
		return false;
	*ns_per_byte = ac->device.value;
	*headroom = ac->cache_room;
	return true;
}

/*
 * Fill in *pace, and return true, when buffered writes have been held back
 * by the device (see the file header); false otherwise.
 */
bool
CompSpillAutoCurrentPace(const CompSpillAutoCodec *ac,
						 CompSpillDevicePace *pace)
{
	if (ac->direct || !ac->device.known || !ac->work.known)
		return false;

	/*
	 * A pace recalled from an earlier spill is known from the first block,
	 * the spill's own work once a few writes have measured it: 4 MB of
	 * them, a sort's second run (see CompSpillAutoFirstRunDone).  (A spill
	 * that sees the device itself sees it 20-30 MB in.)
	 */
	if (ac->written_bytes < COMPSPILL_AUTO_MIN_SPAN)
		return false;

	pace->device_ns_per_byte = ac->device.value;
	pace->base_ns_per_byte = ac->work.value;
	pace->copy_ns_per_byte = Max(ac->write_floor, 0.0);
	pace->cache_bytes = ac->cache_room;
	pace->spill_raw_bytes = ac->expected_raw > 0.0 ?
		Max(ac->expected_raw, ac->raw_bytes) : 0.0;
	return true;
}

/*
 * Say whether the spill file does direct I/O: then a byte read back comes
 * from the device, and until reads are measured it costs what a write
 * does; buffered, it costs what the cheapest write did (see the file
 * header).
 */
void
CompSpillAutoSetDirect(CompSpillAutoCodec *ac, bool direct)
{
	ac->direct = direct;
}

/*
 * Record one physical read of bytes from the spill file taking seconds.
 */
void
CompSpillAutoRecordRead(CompSpillAutoCodec *ac, Size bytes, double seconds)
{
	if (bytes == 0)
		return;
	ac->read_bytes += (double) bytes;
	compspill_auto_estimate_add(&ac->read, (double) bytes,
								compspill_auto_ns(seconds),
								ac->read_bytes,
								COMPSPILL_AUTO_IO_HORIZON,
								COMPSPILL_AUTO_MIN_SAMPLE_NS);
}

/*
 * Record that a block stored with codec was decompressed back to rawlen
 * bytes in the given seconds.
 */
void
CompSpillAutoRecordDecompress(CompSpillAutoCodec *ac, CompSpillCodec codec,
							  Size rawlen, double seconds)
{
	if (!compspill_auto_stored_codec(codec) || rawlen == 0)
		return;
	ac->decompressed_bytes += (double) rawlen;
	compspill_auto_estimate_add(&ac->codec[codec].decompress, (double) rawlen,
								compspill_auto_ns(seconds),
								ac->decompressed_bytes,
								COMPSPILL_AUTO_CPU_HORIZON,
								COMPSPILL_AUTO_MIN_SAMPLE_NS);
}

/*
 * Record that rows of row_bytes bytes (as minimal tuples) were encoded into
 * a column frame of encoded bytes (before any compression): what column
 * frames save over row frames, for CompSpillAutoRowFrames.
 */
void
CompSpillAutoRecordColumns(CompSpillAutoCodec *ac, Size row_bytes,
						   Size encoded)
{
	if (row_bytes == 0)
		return;
	ac->column_bytes += (double) row_bytes;
	compspill_auto_estimate_add(&ac->columns, (double) row_bytes,
								(double) encoded, ac->column_bytes,
								COMPSPILL_AUTO_CPU_HORIZON, 0.0);
}

/*
 * The frame kind where bytes matter: false (column frames) when room is
 * short, or behind a device that holds the spill back while the choice
 * compresses or the device is the slower even for raw frames; true (row
 * frames) behind a device slower than the spill's own work (at 250 MB/s,
 * where column frames only add their CPU).  *decided says whether either
 * applies.
 */
static bool
compspill_auto_io_row_frames(const CompSpillAutoCodec *ac, bool *decided)
{
	CompSpillDevicePace pace;

	*decided = true;
	if (CompSpillAutoRoomShort(ac))
		return false;
	if (CompSpillAutoCurrentPace(ac, &pace))
	{
		if (!CompSpillAutoStoresRaw(ac))
			return false;
		return pace.device_ns_per_byte *
			compspill_auto_device_share(&pace, 1.0) <=
			pace.base_ns_per_byte + pace.copy_ns_per_byte;
	}
	*decided = false;
	return true;
}

/*
 * Should the next run be written in row frames, rows laid out as native sort
 * does, rather than in the block codec's column frames?  Column frames cost
 * CPU to encode and decode, COMPSPILL_AUTO_COLUMN_NS more per byte of rows
 * than row frames' memcpy (perf on lineitem; the strings of the benchmark
 * measure 1.5), and save bytes: what they save is measured on the column
 * frames written (CompSpillAutoRecordColumns), and assumed to be
 * COMPSPILL_AUTO_COLUMN_SHRINK until then (lineitem's rows shrink to a
 * third).  They pay when the I/O of the bytes they save costs more than
 * their CPU: so row frames when a byte written and read back, times the
 * share of bytes column frames save, costs less than that, or when I/O has
 * not been measured yet (a sort's first run, which the temp files' page
 * cache nearly always takes: its writes are timed and decide the next
 * runs); never when room is short.  Behind a device that holds the
 * writes back, column frames while the choice compresses or the device is
 * the slower, row frames while the spill's own work is.
 * While the choice compresses, what the
 * codec makes of either kind decides the bytes, not the encodings alone,
 * and the assumed saving holds.  The codec of each frame is chosen as
 * ever.  Rows of long strings that the encodings hardly shrink (URLs:
 * column frames of 0.9 of the rows) so stay in row frames up to about 14
 * ns per byte of I/O, where lineitem's switch at 2.
 */
#define COMPSPILL_AUTO_COLUMN_NS		1.4
#define COMPSPILL_AUTO_COLUMN_SHRINK	0.7

bool
CompSpillAutoRowFrames(const CompSpillAutoCodec *ac)
{
	CompSpillCodecCost cost[COMPSPILL_NUM_STORED_CODECS];
	double		write_ns;
	double		read_ns;
	double		saved = COMPSPILL_AUTO_COLUMN_SHRINK;
	bool		decided;
	bool		rows = compspill_auto_io_row_frames(ac, &decided);

	if (decided)
		return rows;
	if (!ac->write.known)
		return true;
	CompSpillAutoCurrentCosts(ac, cost, &write_ns, &read_ns);
	if (ac->columns.known && CompSpillAutoStoresRaw(ac))
		saved = Max(1.0 - ac->columns.value, 0.0);
	return (write_ns + read_ns) * saved < COMPSPILL_AUTO_COLUMN_NS;
}

/*
 * Should rows read back as minimal tuples (a store's: a Material's, a CTE's,
 * a random-access sort's merged rows) be written in row frames?  Column
 * frames cost more there than in a sort's runs: every row is formed again
 * from its columns each time its frame is loaded, once per rescan or
 * backward walk, where row frames hand their tuples on as they are.  So
 * row frames unless bytes matter as CompSpillAutoRowFrames sees them (room
 * short, a device that holds the spill back), whatever the page cache's
 * writes measure.
 */
bool
CompSpillAutoStoreRowFrames(const CompSpillAutoCodec *ac)
{
	bool		decided;
	bool		rows = compspill_auto_io_row_frames(ac, &decided);

	return decided ? rows : true;
}
