/*-------------------------------------------------------------------------
 *
 * autocodec_test.c
 *	  Standalone unit test of compspill.codec = auto (src/codec/autocodec.c).
 *
 * Two parts.  The decision: CompSpillAutoDecide against the model
 * computed here independently, on the costs of the page cache, of slow
 * disks and of incompressible data.  The online state: a simulated spill
 * (blocks compressed at given per-byte costs, coalesced 1 MB writes at a
 * given device speed, with noise) fed through CompSpillAutoNext and the
 * Record functions, checking that the choice converges to the model's,
 * that probes stay a few percent of the blocks, and that the choice
 * follows the device when it changes speed midway; and, fed the merge's
 * reads and decompression too, that measured read costs and decompression
 * times move the choice where the model T_c = C_c + k D_c + (W + k Rd) / R_c
 * of autocodec.c says, away from what its estimates (reads cost what
 * writes cost, decompression a fraction of compression) would pick.
 *
 * src/codec/autocodec.c is linked alone: it allocates nothing, raises no error
 * and reads no clock, so no backend function needs a stub.
 *
 * Usage: autocodec_test [-v]
 *
 * IDENTIFICATION
 *	  test/unit/autocodec_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/settings.h"
#include "codec/autocodec.h"
#include "codec/autocodec_private.h"

/* use libc's printf family, not libpgport's, which is not linked in */
#undef printf
#undef fprintf
#undef vprintf
#undef snprintf

#define NONE	COMPSPILL_CODEC_NONE
#define LZ4		COMPSPILL_CODEC_LZ4
#define ZSTD	COMPSPILL_CODEC_ZSTD

static int	npassed = 0;
static int	nfailed = 0;
static bool verbose = false;

/* Count one check, printing it when it fails or when verbose */
static void
check(bool ok, const char *name, const char *fmt,...)
	pg_attribute_printf(3, 4);

static void
check(bool ok, const char *name, const char *fmt,...)
{
	va_list		ap;

	if (ok)
		npassed++;
	else
		nfailed++;
	if (ok && !verbose)
		return;
	printf("%s: %s: ", ok ? "ok  " : "FAIL", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static const char *
name(CompSpillCodec c)
{
	switch (c)
	{
		case NONE:
			return "none";
		case LZ4:
			return "lz4";
		case ZSTD:
			return "zstd";
		default:
			return "?";
	}
}

/* ----------------------------------------------------------------
 * The decision
 * ----------------------------------------------------------------
 */

/* Realistic costs: lz4 1.5 ns/B, zstd level 1 3 ns/B, from the brief */
static void
realistic(CompSpillCodecCost cost[3], double lz4_ratio, double zstd_ratio)
{
	memset(cost, 0, sizeof(CompSpillCodecCost) * 3);
	cost[NONE] = (CompSpillCodecCost) {0.0, 0.0, 1.0, true};
	cost[LZ4] = (CompSpillCodecCost) {1.5, 0.3, lz4_ratio, true};
	cost[ZSTD] = (CompSpillCodecCost) {3.0, 1.05, zstd_ratio, true};
}

/* The model, written out again here: time per raw byte */
static double
model(const CompSpillCodecCost *c, double w, double r, double k)
{
	return c->compress_ns_per_byte + k * c->decompress_ns_per_byte +
		(w + k * r) / c->ratio;
}

/* The model's pick by brute force (strictly least time, lowest CPU first) */
static CompSpillCodec
model_pick(const CompSpillCodecCost cost[3], double w, double r, double k)
{
	CompSpillCodec best = NONE;
	double		best_t = INFINITY;

	for (int c = 0; c < 3; c++)
	{
		double		t;

		if (!cost[c].known)
			continue;
		t = model(&cost[c], w, r, k);
		if (t < best_t)
		{
			best_t = t;
			best = (CompSpillCodec) c;
		}
	}
	return best;
}

/*
 * Check that CompSpillAutoDecide gives expect, that this is the model's
 * pick, and that CompSpillAutoModelTime agrees with the model.
 */
static void
check_decide(const char *test, const CompSpillCodecCost cost[3], double w,
			 double r, double k, CompSpillCodec expect)
{
	CompSpillCodec got = CompSpillAutoDecide(cost, w, r, k, NULL);
	CompSpillCodec pick = model_pick(cost, w, r, k);
	bool		times_ok = true;
	double		t[3];

	for (int c = 0; c < 3; c++)
	{
		t[c] = model(&cost[c], w, r, k);
		if (fabs(CompSpillAutoModelTime(&cost[c], w, r, k, NULL) - t[c]) >
			1e-12 * Max(1.0, t[c]))
			times_ok = false;
	}
	check(times_ok, test, "CompSpillAutoModelTime matches the model");
	check(got == expect && pick == expect, test,
		  "T(none)=%.3f T(lz4)=%.3f T(zstd)=%.3f ns/B at write %.2f read %.2f x%.1f: "
		  "decided %s, model %s, expected %s",
		  t[NONE], t[LZ4], t[ZSTD], w, r, k, name(got), name(pick),
		  name(expect));
}

static void
test_decide(void)
{
	CompSpillCodecCost cost[3];

	/* page cache: I/O cheaper than any codec, store raw */
	realistic(cost, 3.0, 4.0);
	check_decide("page cache 0.3 ns/B", cost, 0.3, 0.3, 1.0, NONE);

	/* the brief's case: lz4 1.5 / 0.3 / ratio 3 at write 0.25 ns/B */
	realistic(cost, 3.0, 4.0);
	cost[ZSTD].known = false;
	check_decide("lz4 vs none at 0.25 ns/B", cost, 0.25, 0.25, 1.0, NONE);

	/* page cache with data lz4 squeezes very cheaply: lz4 pays */
	memset(cost, 0, sizeof(cost));
	cost[NONE] = (CompSpillCodecCost) {0.0, 0.0, 1.0, true};
	cost[LZ4] = (CompSpillCodecCost) {0.15, 0.03, 12.0, true};
	cost[ZSTD] = (CompSpillCodecCost) {0.6, 0.2, 20.0, true};
	check_decide("page cache, cheap lz4", cost, 0.3, 0.3, 1.0, LZ4);

	/* slow disk, 50 MB/s = 20 ns/B: zstd */
	realistic(cost, 3.0, 4.0);
	check_decide("disk 50 MB/s", cost, 20.0, 20.0, 1.0, ZSTD);

	/*
	 * 250 MB/s = 4 ns/B: the model picks lz4 with these costs.  zstd saves
	 * (4+4) * (1/3 - 1/4) = 0.67 ns/B of I/O but costs 2.25 ns/B more CPU;
	 * it wins only below about 74 MB/s (13.5 ns/B each way).
	 */
	realistic(cost, 3.0, 4.0);
	check_decide("disk 250 MB/s", cost, 4.0, 4.0, 1.0, LZ4);
	check_decide("disk 100 MB/s", cost, 10.0, 10.0, 1.0, LZ4);
	check_decide("disk 70 MB/s", cost, 1000.0 / 70, 1000.0 / 70, 1.0, ZSTD);

	/* read back three times (multi-pass merge): zstd wins earlier */
	check_decide("disk 83 MB/s", cost, 12.0, 12.0, 1.0, LZ4);
	check_decide("disk 83 MB/s, 3 reads", cost, 12.0, 12.0, 3.0, ZSTD);

	/* reads slower than writes count as such */
	check_decide("write 4, read 40 ns/B", cost, 4.0, 40.0, 1.0, ZSTD);

	/* incompressible: compression only costs, at any device speed */
	memset(cost, 0, sizeof(cost));
	cost[NONE] = (CompSpillCodecCost) {0.0, 0.0, 1.0, true};
	cost[LZ4] = (CompSpillCodecCost) {0.5, 0.1, 1.0, true};
	cost[ZSTD] = (CompSpillCodecCost) {1.5, 0.3, 1.0, true};
	check_decide("incompressible, page cache", cost, 0.3, 0.3, 1.0, NONE);
	check_decide("incompressible, 50 MB/s", cost, 20.0, 20.0, 1.0, NONE);

	/* equal times go to the cheaper CPU: 1 + 2/2 = 2 = T(none) */
	memset(cost, 0, sizeof(cost));
	cost[NONE] = (CompSpillCodecCost) {0.0, 0.0, 1.0, true};
	cost[LZ4] = (CompSpillCodecCost) {1.0, 0.0, 2.0, true};
	check(CompSpillAutoDecide(cost, 1.0, 1.0, 1.0, NULL) == NONE, "tie",
		  "lz4 and none both 2 ns/B: none");
	cost[NONE].known = false;
	cost[ZSTD] = (CompSpillCodecCost) {0.5, 0.25, 4.0, true};	/* T = 1.25 */
	cost[LZ4] = (CompSpillCodecCost) {0.75, 0.0, 4.0, true};	/* T = 1.25 */
	check(CompSpillAutoDecide(cost, 1.0, 1.0, 1.0, NULL) == LZ4, "tie",
		  "lz4 and zstd both 1.25 ns/B with 0.75 ns/B of CPU: lz4, the lower codec");
	cost[ZSTD] = (CompSpillCodecCost) {0.2, 0.2, 4.0, true};	/* T = 0.9 */
	cost[LZ4] = (CompSpillCodecCost) {0.5, 0.0, 5.0, true};	/* T = 0.9 */
	check(CompSpillAutoDecide(cost, 1.0, 1.0, 1.0, NULL) == ZSTD, "tie",
		  "lz4 and zstd both 0.9 ns/B, zstd CPU 0.4 < lz4 0.5: zstd");

	/* unknown or absurd costs are not candidates */
	realistic(cost, 3.0, 4.0);
	cost[ZSTD].known = false;
	check(CompSpillAutoDecide(cost, 20.0, 20.0, 1.0, NULL) == LZ4, "unknown",
		  "zstd unknown at 20 ns/B: lz4");
	cost[LZ4].ratio = NAN;
	check(CompSpillAutoDecide(cost, 20.0, 20.0, 1.0, NULL) == NONE, "unknown",
		  "lz4 ratio NaN: none");
	memset(cost, 0, sizeof(cost));
	check(CompSpillAutoDecide(cost, 20.0, 20.0, 1.0, NULL) == NONE, "unknown",
		  "nothing known: none");
}

/* ----------------------------------------------------------------
 * The online state
 * ----------------------------------------------------------------
 */

/* A simulated device and codec costs */
typedef struct Sim
{
	double		compress_ns[3];
	double		decompress_ns[3];
	double		ratio[3];
	double		write_ns;		/* per file byte */
	double		read_ns;		/* per file byte read back; 0: not fed */
	bool		feed_decompress;	/* report each block's decompression */
	Size		block;			/* raw bytes per block */
	Size		write_size;		/* coalesced write */
	Size		pending;		/* bytes in the write buffer */
	uint64		rng;
	int64		used[3];		/* blocks per codec in the last window */
	int64		window_blocks;
	int64		window_probes;
} Sim;

/* Return a factor of 1 +/- 10% (xorshift) */
static double
noise(Sim *sim)
{
	sim->rng ^= sim->rng << 13;
	sim->rng ^= sim->rng >> 7;
	sim->rng ^= sim->rng << 17;
	return 0.9 + 0.2 * (double) (sim->rng % 1000001) / 1000000.0;
}

static void
sim_init(Sim *sim, double w)
{
	memset(sim, 0, sizeof(Sim));
	sim->compress_ns[LZ4] = 1.5;
	sim->compress_ns[ZSTD] = 3.0;
	sim->decompress_ns[LZ4] = 0.3;
	sim->decompress_ns[ZSTD] = 1.05;
	sim->ratio[NONE] = 1.0;
	sim->ratio[LZ4] = 3.0;
	sim->ratio[ZSTD] = 4.0;
	sim->write_ns = w;
	sim->block = 64 * 1024;
	sim->write_size = 1024 * 1024;
	sim->rng = 88172645463325252ULL;
}

/* Spill nblocks blocks through ac, counting codecs used in this window */
static void
sim_run(Sim *sim, CompSpillAutoCodec *ac, int nblocks)
{
	int64		probes0 = ac->nprobes;

	memset(sim->used, 0, sizeof(sim->used));
	for (int i = 0; i < nblocks; i++)
	{
		CompSpillCodec c = CompSpillAutoNext(ac);
		Size		stored = (Size) (sim->block / sim->ratio[c]);
		double		secs = sim->block * sim->compress_ns[c] * 1e-9 * noise(sim);

		sim->used[c]++;
		CompSpillAutoRecordCompress(ac, c, sim->block,
									c == NONE ? sim->block : stored, secs);
		sim->pending += 24 + stored;
		if (sim->feed_decompress)
			CompSpillAutoRecordDecompress(ac, c, sim->block,
										  sim->block * sim->decompress_ns[c] *
										  1e-9 * noise(sim));
		while (sim->pending >= sim->write_size)
		{
			CompSpillAutoRecordWrite(ac, sim->write_size,
									 sim->write_size * sim->write_ns * 1e-9 *
									 noise(sim), 0.0);
			/* the merge reads each written byte back once */
			if (sim->read_ns > 0.0)
				CompSpillAutoRecordRead(ac, sim->write_size,
										sim->write_size * sim->read_ns * 1e-9 *
										noise(sim));
			sim->pending -= sim->write_size;
		}
	}
	sim->window_blocks = nblocks;
	sim->window_probes = ac->nprobes - probes0;
}

/*
 * Spill blocks one at a time until the choice is target, at most max
 * blocks; return how many it took, or -1.
 */
static int
sim_until(Sim *sim, CompSpillAutoCodec *ac, CompSpillCodec target, int max)
{
	for (int i = 0; i < max; i++)
	{
		if (ac->choice == target)
			return i;
		sim_run(sim, ac, 1);
	}
	return ac->choice == target ? max : -1;
}

/* The model's pick for the simulated costs */
static CompSpillCodec
sim_pick(const Sim *sim)
{
	CompSpillCodecCost cost[3];

	for (int c = 0; c < 3; c++)
		cost[c] = (CompSpillCodecCost) {sim->compress_ns[c],
			sim->decompress_ns[c], sim->ratio[c], true};
	return model_pick(cost, sim->write_ns, sim->write_ns, 1.0);
}

/* Run a stable spill and check convergence and the probe budget */
static void
check_online(const char *test, Sim *sim, CompSpillCodec expect)
{
	CompSpillAutoCodec ac;
	CompSpillCodec pick = sim_pick(sim);
	double		share;
	double		probe_pct;

	CompSpillAutoInit(&ac, 1);
	sim_run(sim, &ac, 200);		/* warm up */
	sim_run(sim, &ac, 3000);
	share = (double) sim->used[expect] / sim->window_blocks;
	probe_pct = 100.0 * ac.nprobes / ac.nblocks;

	check(pick == expect, test, "model picks %s, expected %s",
		  name(pick), name(expect));
	check(ac.choice == expect && share >= 0.95, test,
		  "choice %s, %.1f%% of the last %lld blocks with %s",
		  name(ac.choice), 100.0 * share, (long long) sim->window_blocks,
		  name(expect));
	check(probe_pct <= 5.0, test, "%lld probes in %lld blocks (%.2f%%)",
		  (long long) ac.nprobes, (long long) ac.nblocks, probe_pct);
	check(ac.nswitches <= 1, test, "%lld changes of choice",
		  (long long) ac.nswitches);
}

static void
test_online(void)
{
	Sim			sim;
	CompSpillAutoCodec ac;
	int			n;

	sim_init(&sim, 0.3);
	check_online("online page cache 0.3 ns/B", &sim, NONE);

	sim_init(&sim, 0.3);
	sim.compress_ns[LZ4] = 0.15;
	sim.decompress_ns[LZ4] = 0.03;
	sim.ratio[LZ4] = 12.0;
	check_online("online page cache, cheap lz4", &sim, LZ4);

	sim_init(&sim, 20.0);
	check_online("online disk 50 MB/s", &sim, ZSTD);

	sim_init(&sim, 4.0);
	check_online("online disk 250 MB/s", &sim, LZ4);

	sim_init(&sim, 20.0);
	sim.ratio[LZ4] = 1.0;
	sim.ratio[ZSTD] = 1.01;
	sim.compress_ns[LZ4] = 0.5;
	sim.compress_ns[ZSTD] = 1.5;
	check_online("online incompressible 50 MB/s", &sim, NONE);

	/*
	 * The disk gets slow midway, then fast again.  Reads are not fed: they
	 * are assumed to come from the page cache at the cheapest write's cost
	 * (0.3 ns/B), so the slow disk costs T_lz4 = 1.8 + 20.3 / 3 = 8.57
	 * against T_zstd = 4.05 + 20.3 / 4 = 9.13.
	 */
	sim_init(&sim, 0.3);
	CompSpillAutoInit(&ac, 1);
	sim_run(&sim, &ac, 1000);
	check(ac.choice == NONE, "online disk gets slow",
		  "page cache first: %s", name(ac.choice));
	sim.write_ns = 20.0;
	n = sim_until(&sim, &ac, LZ4, 600);
	check(n >= 0 && n <= 300, "online disk gets slow",
		  "lz4 chosen %d blocks (%.1f MB) after the disk went to 20 ns/B",
		  n, n * 64.0 / 1024);
	sim_run(&sim, &ac, 500);
	check(ac.choice == LZ4 && sim.used[LZ4] >= 475, "online disk gets slow",
		  "then %lld of 500 blocks with lz4",
		  (long long) sim.used[LZ4]);
	/*
	 * Back to the page cache: writes average over 32 MB, and lz4 writes a
	 * third of the bytes, so it takes about 100 MB of raw rows.
	 */
	sim.write_ns = 0.3;
	n = sim_until(&sim, &ac, NONE, 3000);
	check(n >= 0 && n <= 2000, "online disk gets fast",
		  "none chosen %d blocks (%.1f MB) after the disk went to 0.3 ns/B",
		  n, n * 64.0 / 1024);
	sim_run(&sim, &ac, 500);
	check(ac.choice == NONE && sim.used[NONE] >= 475, "online disk gets fast",
		  "then %lld of 500 blocks with none",
		  (long long) sim.used[NONE]);
	check(100.0 * ac.nprobes / ac.nblocks <= 5.0, "online disk gets slow",
		  "%lld probes in %lld blocks, %lld changes of choice",
		  (long long) ac.nprobes, (long long) ac.nblocks,
		  (long long) ac.nswitches);

	/* the data gets incompressible midway on a slow disk */
	sim_init(&sim, 20.0);
	CompSpillAutoInit(&ac, 1);
	sim_run(&sim, &ac, 500);
	check(ac.choice == ZSTD, "online data gets incompressible",
		  "compressible first: %s", name(ac.choice));
	sim.ratio[LZ4] = 1.0;
	sim.ratio[ZSTD] = 1.0;
	n = sim_until(&sim, &ac, NONE, 600);
	check(n >= 0 && n <= 300, "online data gets incompressible",
		  "none chosen %d blocks after the data became incompressible", n);
}

/* The measurements: totals, guards, estimates */
static void
test_measurements(void)
{
	CompSpillAutoCodec ac;
	CompSpillCodecCost cost[3];
	double		w;
	double		r;

	/* before anything: the priors */
	CompSpillAutoInit(&ac, 1);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(cost[NONE].known && !cost[LZ4].known && !cost[ZSTD].known &&
		  w == 2.5 && r == w, "priors",
		  "none known, write %.2f, read %.2f ns/B", w, r);

	/* the first blocks probe lz4 and zstd */
	check(CompSpillAutoNext(&ac) == LZ4, "first blocks", "block 0 is lz4");
	CompSpillAutoRecordCompress(&ac, LZ4, 65536, 21845, 65536 * 1.5e-9);
	check(CompSpillAutoNext(&ac) == ZSTD, "first blocks", "block 1 is zstd");
	CompSpillAutoRecordCompress(&ac, ZSTD, 65536, 16384, 65536 * 3e-9);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(fabs(cost[LZ4].compress_ns_per_byte - 1.5) < 1e-9 &&
		  fabs(cost[LZ4].ratio - 65536.0 / 21845) < 1e-9 &&
		  fabs(cost[LZ4].decompress_ns_per_byte - 0.3) < 1e-9 &&
		  fabs(cost[ZSTD].decompress_ns_per_byte - 1.05) < 1e-9,
		  "estimates", "lz4 %.3f/%.3f x%.2f, zstd %.3f/%.3f x%.2f",
		  cost[LZ4].compress_ns_per_byte, cost[LZ4].decompress_ns_per_byte,
		  cost[LZ4].ratio, cost[ZSTD].compress_ns_per_byte,
		  cost[ZSTD].decompress_ns_per_byte, cost[ZSTD].ratio);

	/* measured decompression replaces the estimate */
	CompSpillAutoRecordDecompress(&ac, ZSTD, 65536, 65536 * 0.8e-9);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(fabs(cost[ZSTD].decompress_ns_per_byte - 0.8) < 1e-9, "estimates",
		  "zstd decompression measured at %.3f ns/B",
		  cost[ZSTD].decompress_ns_per_byte);

	/* one coalesced write gives the per-byte cost from its totals */
	CompSpillAutoRecordWrite(&ac, 1024 * 1024, 1024 * 1024 * 20e-9, 0.0);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(fabs(w - 20.0) < 1e-9 && fabs(r - 20.0) < 1e-9, "write totals",
		  "1 MB in 20.97 ms: write %.3f, read (assumed) %.3f ns/B", w, r);
	CompSpillAutoRecordRead(&ac, 1024 * 1024, 1024 * 1024 * 5e-9);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(fabs(w - 20.0) < 1e-9 && fabs(r - 5.0) < 1e-9, "read measured",
		  "write %.3f, read %.3f ns/B", w, r);

	/*
	 * Writes too short to time (a coarse clock reads 0, then one tick) are
	 * summed: 9 x 4 kB in 0 s then one 4 kB write in 0.1 ms = 40 kB in
	 * 0.1 ms, 2.44 ns/B.
	 */
	CompSpillAutoInit(&ac, 1);
	for (int i = 0; i < 9; i++)
		CompSpillAutoRecordWrite(&ac, 4096, 0.0, 0.0);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(!ac.write.known && w == 2.5, "timer resolution",
		  "zero-time writes not folded alone");
	CompSpillAutoRecordWrite(&ac, 4096, 1e-4, 0.0);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(fabs(w - 1e5 / 40960) < 1e-9, "timer resolution",
		  "summed: %.4f ns/B, expected %.4f", w, 1e5 / 40960);

	/*
	 * A new file's first write, slow (4 kB at 9 ns/B: the file system
	 * allocating), then 4 MB at 1 ns/B: until the horizon the figure is the
	 * average of the writes, 1.01 ns/B, not the first one's 9 (which it
	 * stayed near, weighted against the horizon, for 30 MB).
	 */
	CompSpillAutoInit(&ac, 1);
	CompSpillAutoRecordWrite(&ac, 4096, 4096 * 9e-9, 0.0);
	for (int i = 0; i < 256; i++)
		CompSpillAutoRecordWrite(&ac, 16384, 16384 * 1e-9 * 1.25, 0.0);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(w < 1.4, "first write",
		  "after a slow first write and 4 MB at 1.25 ns/B: %.3f ns/B", w);

	/* negative, NaN and infinite durations never make negative costs */
	CompSpillAutoInit(&ac, 1);
	CompSpillAutoRecordWrite(&ac, 8 * 1024 * 1024, -1.0, 0.0);
	CompSpillAutoRecordWrite(&ac, 8 * 1024 * 1024, NAN, 0.0);
	CompSpillAutoRecordCompress(&ac, LZ4, 8 * 1024 * 1024, 1024, -5.0);
	CompSpillAutoRecordCompress(&ac, ZSTD, 65536, 0, 1e-3);
	CompSpillAutoRecordCompress(&ac, COMPSPILL_CODEC_AUTO, 65536, 10, 1.0);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(w == 0.0 && cost[LZ4].compress_ns_per_byte == 0.0 &&
		  isfinite(cost[ZSTD].ratio) && cost[ZSTD].ratio > 0,
		  "bad durations", "write %.3f, lz4 %.3f ns/B, zstd ratio %.0f",
		  w, cost[LZ4].compress_ns_per_byte, cost[ZSTD].ratio);

	/* reads per write: each written byte is read back once */
	CompSpillAutoInit(&ac, 1);
	check(ac.reads_per_write == 1.0, "reads per write", "is 1");

	/*
	 * unless the plan says more (a nested loop's inner Material): a codec
	 * that pays read once (lz4 at 3x, compressing at 1 ns/B, against
	 * writes and reads of 2.5 ns/B) does not when its decompression is
	 * paid on each of 60 rescans, where raw reads cost 0.2 ns/B
	 */
	CompSpillAutoSetReadsPerWrite(&ac, 60.0);
	check(ac.reads_per_write == 60.0, "reads per write", "60 as set");
	CompSpillAutoSetReadsPerWrite(&ac, 0.0);
	check(ac.reads_per_write == 1.0, "reads per write", "at least 1");
	{
		CompSpillCodecCost rc[COMPSPILL_NUM_STORED_CODECS] = {0};

		rc[COMPSPILL_CODEC_NONE] = (CompSpillCodecCost) {0.0, 0.0, 1.0, true};
		rc[LZ4] = (CompSpillCodecCost) {1.0, 0.3, 3.0, true};
		rc[ZSTD] = (CompSpillCodecCost) {4.0, 1.0, 4.0, true};
		check(CompSpillAutoDecide(rc, 2.5, 2.5, 1.0, NULL) == LZ4,
			  "read once", "lz4 pays");
		check(CompSpillAutoDecide(rc, 2.5, 0.2, 60.0, NULL) ==
			  COMPSPILL_CODEC_NONE, "read 60 times", "raw pays");
	}

	/* a level above 3 makes zstd's decompression estimate smaller */
	CompSpillAutoInit(&ac, 9);
	CompSpillAutoRecordCompress(&ac, ZSTD, 65536, 16384, 65536 * 10e-9);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(fabs(cost[ZSTD].decompress_ns_per_byte - 1.0) < 1e-9, "zstd level 9",
		  "decompression estimate %.3f ns/B",
		  cost[ZSTD].decompress_ns_per_byte);
}

/*
 * Spill with writes only (the choice follows autocodec.c's estimates:
 * reads cost what writes cost, decompression a fixed fraction of
 * compression), check the choice is before; then feed the merge's reads
 * and decompression as sim says and check the choice moves to after,
 * which must be the model's pick for the measured costs, and stays there.
 */
static void
check_fed(const char *test, Sim *sim, double read_ns, bool feed_decompress,
		  CompSpillCodec before, CompSpillCodec after)
{
	CompSpillAutoCodec ac;
	CompSpillCodecCost cost[3];
	double		w;
	double		r;
	int			n;

	CompSpillAutoInit(&ac, 1);
	sim_run(sim, &ac, 500);
	check(ac.choice == before, test, "writes only: %s, expected %s",
		  name(ac.choice), name(before));

	for (int c = 0; c < 3; c++)
		cost[c] = (CompSpillCodecCost) {sim->compress_ns[c],
			sim->decompress_ns[c], sim->ratio[c], true};
	check(model_pick(cost, sim->write_ns, read_ns > 0.0 ? read_ns : sim->write_ns,
					 1.0) == after, test, "the model picks %s for the measured costs",
		  name(after));

	sim->read_ns = read_ns;
	sim->feed_decompress = feed_decompress;
	n = sim_until(sim, &ac, after, 600);
	check(n >= 0 && n <= 100, test,
		  "%s chosen %d blocks after reads and decompression were fed",
		  name(after), n);
	sim_run(sim, &ac, 500);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(ac.choice == after && sim->used[after] >= 475, test,
		  "then %lld of 500 blocks with %s (read %.2f ns/B, zstd decompression %.2f ns/B)",
		  (long long) sim->used[after], name(after), r,
		  cost[ZSTD].decompress_ns_per_byte);
}

/* The online state fed the merge's reads and decompression */
static void
test_reads(void)
{
	Sim			sim;

	/*
	 * Writes land in the page cache (0.3 ns/B), but reads come back from a
	 * 50 MB/s disk (20 ns/B): T_none = 0.3 + 20 = 20.3, T_lz4 = 1.5 + 0.3 +
	 * 20.3 / 3 = 8.57, T_zstd = 3 + 1.05 + 20.3 / 4 = 9.13.  Reads assumed
	 * as cheap as writes pick none.
	 */
	sim_init(&sim, 0.3);
	check_fed("fed slow reads", &sim, 20.0, false, NONE, LZ4);

	/*
	 * Writes go to a 50 MB/s disk (20 ns/B) and reads hit the page cache
	 * (0.3 ns/B): T_lz4 = 1.8 + 20.3 / 3 = 8.57, T_zstd = 4.05 + 20.3 / 4 =
	 * 9.13, where reads assumed at 20 ns/B make zstd's 14.05 beat lz4's
	 * 15.13.
	 */
	sim_init(&sim, 20.0);
	check_fed("fed fast reads", &sim, 0.3, false, ZSTD, LZ4);

	/*
	 * On the same slow disk both ways, zstd's decompression turns out 8
	 * ns/B, not the 1.05 estimated from its compression: T_zstd = 3 + 8 +
	 * 40 / 4 = 21 against T_lz4 = 1.8 + 40 / 3 = 15.13.
	 */
	sim_init(&sim, 20.0);
	sim.decompress_ns[ZSTD] = 8.0;
	check_fed("fed slow zstd decompression", &sim, 20.0, true, ZSTD, LZ4);

	/*
	 * And the other way: lz4 compresses fast but decompresses slowly (4
	 * ns/B; estimated 0.3) on a 250 MB/s disk: T_lz4 = 1.5 + 4 + 8 / 3 =
	 * 8.17 against T_zstd = 3 + 1.05 + 8 / 4 = 6.05; estimated, lz4's 4.47
	 * beat zstd.
	 */
	sim_init(&sim, 4.0);
	sim.decompress_ns[LZ4] = 4.0;
	check_fed("fed slow lz4 decompression", &sim, 4.0, true, LZ4, ZSTD);
}

/* ----------------------------------------------------------------
 * Writes: a page cache in front of a slow device
 * ----------------------------------------------------------------
 */

/*
 * A spill in time, as the server does it: each raw byte costs the sort's
 * own work (base_ns) plus its compression; the run writer's coalesced 1 MB
 * writes cost a page cache copy (copy_ns per byte) while the dirty pages
 * are under the kernel's limit (dirty_limit) and block until the device
 * has written enough of them otherwise; the device writes at device_ns
 * per byte, FIFO, and writes back only what exceeds the dirty limit, as
 * the kernel does for a file nobody syncs (a device's strict dirty cap),
 * in bursts: a write that finds more than the limit dirty waits until
 * half of it is written.
 */
typedef struct WbSim
{
	double		now;			/* ns */
	double		base_ns;		/* per raw byte, the sort's own work */
	double		copy_ns;		/* per file byte, write() into the cache */
	double		device_ns;		/* per file byte, the device */
	double		dirty_limit;	/* bytes */
	double		written;		/* file bytes written */
	double		device_done;	/* time the device finishes what it has */
	double		handed;			/* file bytes handed to the device */
	double		throttled;		/* ns write() blocked on the dirty limit */
	double		last_write;		/* when the last write returned */
	bool		device_stats;	/* the device's statistics can be read */
	double		watch_from;		/* device bytes when a stall was seen, or
								 * -1 */
	double		watch_time;		/* and when */
} WbSim;

static void
wbsim_init(WbSim *ws, double device_ns)
{
	memset(ws, 0, sizeof(WbSim));
	ws->base_ns = 3.0;
	ws->copy_ns = 0.3;
	ws->device_ns = device_ns;
	ws->dirty_limit = 32.0 * 1024 * 1024;
	ws->device_stats = true;
	ws->watch_from = -1.0;
}

/*
 * One 1 MB write at ws->now: the device is handed what is over the limit
 * (it works on it while the writer goes on), and write() waits until
 * what it holds is under the limit again.
 */
static void
wbsim_write(WbSim *ws, CompSpillAutoCodec *ac, double bytes)
{
	double		start = ws->now;
	double		dirty;
	double		device_written;
	bool		stalled;

	ws->now += bytes * ws->copy_ns;
	ws->written += bytes;
	ws->device_done = Max(ws->device_done, start) +
		(ws->written - ws->handed) * ws->device_ns;
	ws->handed = ws->written;
	/* what the device has not written by now is dirty */
	dirty = Max(ws->device_done - ws->now, 0.0) / ws->device_ns;
	if (dirty > ws->dirty_limit)
	{
		/* in a burst: until the device has drained half the cache */
		double		wait = (dirty - ws->dirty_limit / 2) * ws->device_ns;

		ws->throttled += wait;
		ws->now += wait;
	}
	stalled = CompSpillAutoRecordWrite(ac, (Size) bytes,
									   (ws->now - start) * 1e-9,
									   (ws->now - ws->last_write) * 1e-9);
	ws->last_write = ws->now;

	/* what the device has written by now, watched after a stall */
	device_written = ws->handed -
		Max(ws->device_done - ws->now, 0.0) / ws->device_ns;
	if (ws->watch_from < 0.0 && stalled && ws->device_stats)
	{
		ws->watch_from = device_written;
		ws->watch_time = ws->now;
	}
	else if (ws->watch_from >= 0.0 && ws->now - ws->watch_time >= 50e6)
	{
		CompSpillAutoRecordDevice(ac, device_written - ws->watch_from,
								  (ws->now - ws->watch_time) * 1e-9);
		ws->watch_from = -1.0;
	}
}

/*
 * Spill raw bytes in 64 kB blocks through ac with sim's codec costs;
 * count blocks per codec into used[].  fixed: every block stored with that
 * codec; -1: as auto chooses.
 */
static void
wbsim_run(WbSim *ws, Sim *sim, CompSpillAutoCodec *ac, double raw,
		  int fixed, int64 used[3])
{
	double		done = 0.0;

	while (done < raw)
	{
		CompSpillCodec c = fixed >= 0 ? (CompSpillCodec) fixed :
			CompSpillAutoNext(ac);
		Size		stored = (Size) (sim->block / sim->ratio[c]);
		double		cns = sim->block * sim->compress_ns[c];

		used[c]++;
		ws->now += sim->block * ws->base_ns + cns;
		CompSpillAutoRecordCompress(ac, c, sim->block,
									c == NONE ? sim->block : stored,
									cns * 1e-9);
		sim->pending += 24 + stored;
		while (sim->pending >= sim->write_size)
		{
			wbsim_write(ws, ac, (double) sim->write_size);
			sim->pending -= sim->write_size;
		}
		done += sim->block;
	}
}

/*
 * Behind a 32 MB dirty cap, a slow device shows only once the cache is
 * full, and then in bursts; once shown, the spill stays compressed (the
 * write figure averages the bursts), and it is faster than storing raw;
 * a device that keeps up, or the page cache, leaves the blocks raw.
 */
static void
test_writes(void)
{
	static const struct
	{
		const char *name;
		double		device_ns;
		bool		compress;	/* expected after the first 40 MB */
	}			cases[] = {
		{"50 MB/s behind the page cache", 20.0, true},
		{"250 MB/s, CPU-bound", 4.0, false},
		{"page cache, fast device", 0.5, false},
	};
	const double MB = 1024.0 * 1024.0;

	for (int i = 0; i < (int) lengthof(cases); i++)
	{
		WbSim		ws;
		WbSim		raw_ws;
		Sim			sim;
		CompSpillAutoCodec ac;
		CompSpillAutoCodec raw_ac;
		int64		first[3] = {0, 0, 0};
		int64		rest[3] = {0, 0, 0};
		int64		ignored[3] = {0, 0, 0};
		double		share_rest;
		char		test[128];

		snprintf(test, sizeof(test), "writes %s", cases[i].name);
		sim_init(&sim, 0.0);
		wbsim_init(&ws, cases[i].device_ns);
		CompSpillAutoInit(&ac, 1);

		/* the first 40 MB of raw rows: the dirty cap and a few MB */
		wbsim_run(&ws, &sim, &ac, 40 * MB, -1, first);
		wbsim_run(&ws, &sim, &ac, 200 * MB, -1, rest);
		share_rest = (double) (rest[LZ4] + rest[ZSTD]) /
			(rest[NONE] + rest[LZ4] + rest[ZSTD]);

		/* the same spill stored raw throughout */
		sim_init(&sim, 0.0);
		wbsim_init(&raw_ws, cases[i].device_ns);
		CompSpillAutoInit(&raw_ac, 1);
		wbsim_run(&raw_ws, &sim, &raw_ac, 240 * MB, NONE, ignored);

		if (verbose)
			printf("     %s: compressed %lld%% of the blocks after the first "
				   "40 MB (none %lld, lz4 %lld, zstd %lld); %.0f ms "
				   "throttled, %.0f ms in all; stored raw %.0f ms\n", test,
				   (long long) (100 * share_rest), (long long) rest[NONE],
				   (long long) rest[LZ4], (long long) rest[ZSTD],
				   ws.throttled / 1e6, ws.now / 1e6, raw_ws.now / 1e6);
		if (cases[i].compress)
		{
			check(share_rest >= 0.9, test,
				  "%.0f%% of the blocks after the first 40 MB compressed",
				  100 * share_rest);
			check(ws.now < 0.8 * raw_ws.now, test,
				  "%.0f ms, stored raw %.0f ms", ws.now / 1e6,
				  raw_ws.now / 1e6);
		}
		else
			check(share_rest <= 0.1, test,
				  "%.0f%% of the blocks after the first 40 MB compressed",
				  100 * share_rest);
	}
}

/*
 * Set up a spill whose own work (12 ns a raw byte) is nearly as slow as a
 * 50 MB/s device, with lz4 (1.5 ns, 1.7x) and zstd (5 ns, 2x), for the
 * tests of a device's pace
 */
static void
paced_sim_init(Sim *sim, WbSim *ws, CompSpillAutoCodec *ac, double device_ns)
{
	sim_init(sim, 0.0);
	sim->compress_ns[LZ4] = 1.5;
	sim->ratio[LZ4] = 1.7;
	sim->compress_ns[ZSTD] = 5.0;
	sim->ratio[ZSTD] = 2.0;
	wbsim_init(ws, device_ns);
	ws->base_ns = 12.0;
	CompSpillAutoInit(ac, 1);
}

/*
 * A spill whose own work nearly keeps up with the device (lineitem's column
 * frames stored raw on the throttled 50 MB/s device: 15 ns of work per
 * byte, the device 20): its writes wait only a fifth of its time, a few ns
 * per byte, and the linear model stored raw; from stall to stall they go at
 * the device's pace, and with it lz4 is chosen, within 5% of lz4's time
 * throughout.  The same spill on a device that keeps up (250 MB/s) stays
 * raw, and so does a page cache whose writes now and then stall (a
 * descheduled backend): a stall there measures the spill's own pace.
 */
static void
test_device_pace(void)
{
	static const struct
	{
		const char *name;
		double		device_ns;
		double		stall_every_mb; /* 0: no stray stalls */
		bool		device_stats;	/* the kernel's statistics read */
		bool		compress;
		double		slack;		/* of the best of raw and lz4's times */
	}			cases[] = {
		{"pace 50 MB/s, work nearly as slow", 20.0, 0.0, true, true, 1.05},
		{"pace 50 MB/s, stall to stall", 20.0, 0.0, false, true, 1.15},
		{"pace 250 MB/s", 4.0, 0.0, true, false, 1.05},
		{"pace page cache, stray stalls", 0.5, 6.0, true, false, 1.05},
	};
	const double MB = 1024.0 * 1024.0;

	for (int i = 0; i < (int) lengthof(cases); i++)
	{
		double		t[3];
		int64		used[3] = {0, 0, 0};
		int64		ignored[3] = {0, 0, 0};
		double		share;
		CompSpillDevicePace pace = {0};
		bool		paced = false;
		char		test[128];

		/* auto, then every block stored raw, then every block with lz4 */
		for (int run = 0; run < 3; run++)
		{
			WbSim		ws;
			Sim			sim;
			CompSpillAutoCodec ac;
			double		next_stall = cases[i].stall_every_mb * MB;

			paced_sim_init(&sim, &ws, &ac, cases[i].device_ns);
			ws.device_stats = cases[i].device_stats;
			for (double raw = 0.0; raw < 320 * MB; raw += 4 * MB)
			{
				wbsim_run(&ws, &sim, &ac, 4 * MB,
						  run == 0 ? -1 : run == 1 ? NONE : LZ4,
						  run == 0 ? used : ignored);
				if (next_stall > 0.0 && ws.written >= next_stall)
				{
					/* the backend descheduled for 15 ms in a write */
					ws.now += 15e6;
					CompSpillAutoRecordWrite(&ac, 4096, 15e-3, 15e-3);
					next_stall += cases[i].stall_every_mb * MB;
				}
			}
			t[run] = ws.now;
			if (run == 0)
			{
				paced = CompSpillAutoCurrentPace(&ac, &pace);
			}
		}
		share = (double) (used[LZ4] + used[ZSTD]) /
			(used[NONE] + used[LZ4] + used[ZSTD]);

		snprintf(test, sizeof(test), "device %s", cases[i].name);
		if (verbose)
			printf("     %s: compressed %.0f%% (none %lld, lz4 %lld, zstd "
				   "%lld); %.0f ms, raw %.0f ms, lz4 %.0f ms; pace %s "
				   "(device %.1f, base %.1f ns/B)\n", test, 100 * share,
				   (long long) used[NONE], (long long) used[LZ4],
				   (long long) used[ZSTD], t[0] / 1e6, t[1] / 1e6,
				   t[2] / 1e6, paced ? "known" : "unknown",
				   paced ? pace.device_ns_per_byte : 0.0,
				   paced ? pace.base_ns_per_byte : 0.0);
		check((cases[i].compress ? share >= 0.5 : share <= 0.1) &&
			  t[0] <= cases[i].slack * Min(t[1], t[2]), test,
			  "%.0f%% compressed, %.0f ms, raw %.0f, lz4 %.0f",
			  100 * share, t[0] / 1e6, t[1] / 1e6, t[2] / 1e6);
	}
}

/*
 * The device writes only what the page cache cannot hold: a spill's last
 * bytes, as many as the cache took before the first stall, are dropped
 * with the file before they reach it (CompSpillAutoModelTime).  With 90
 * MB expected, a 50 MB/s device and 30 MB of room, raw waits on the device
 * for 60 MB and lz4 (ratio 2) for 15, under its CPU; with 60 MB of room
 * raw's 30 MB take the device about as long as the spill's own work, and
 * raw wins.  Without the
 * expected size the device is charged for every byte, as before.
 */
/* two overlapping stages of a and b alone: their 4-norm (autocodec.c) */
static double
overlap4(double a, double b)
{
	return pow(pow(a, 4.0) + pow(b, 4.0), 0.25);
}

static void
test_cache_room(void)
{
	const double MB = 1024.0 * 1024.0;
	CompSpillCodecCost raw = {0.0, 0.0, 1.0, true};
	CompSpillCodecCost lz4 = {2.0, 0.4, 2.0, true};
	CompSpillDevicePace pace = {20.0, 6.0, 0.3, 30 * MB, 90 * MB};
	double		t_raw;
	double		t_lz4;

	/*
	 * Less the base, plus the reads: raw (6.3, 20 * 60/90), lz4 (6 + 2.15,
	 * 10 * 15/45)
	 */
	t_raw = CompSpillAutoModelTime(&raw, 0.3, 0.3, 1.0, &pace);
	t_lz4 = CompSpillAutoModelTime(&lz4, 0.3, 0.3, 1.0, &pace);
	check(fabs(t_raw - (overlap4(6.3, 20.0 * 60 / 90) - 6.0 + 0.3)) < 1e-9 &&
		  fabs(t_lz4 - (overlap4(8.15, 10.0 * 15 / 45) - 6.0 + 0.55)) < 1e-9 &&
		  t_lz4 < t_raw,
		  "cache room 30 MB", "raw %.3f, lz4 %.3f", t_raw, t_lz4);

	pace.cache_bytes = 60 * MB;
	t_raw = CompSpillAutoModelTime(&raw, 0.3, 0.3, 1.0, &pace);
	t_lz4 = CompSpillAutoModelTime(&lz4, 0.3, 0.3, 1.0, &pace);
	check(fabs(t_raw - (overlap4(6.3, 20.0 * 30 / 90) - 6.0 + 0.3)) < 1e-9 &&
		  fabs(t_lz4 - (8.15 - 6.0 + 0.55)) < 1e-9 && t_raw < t_lz4,
		  "cache room 60 MB", "raw %.3f, lz4 %.3f", t_raw, t_lz4);

	pace.spill_raw_bytes = 0.0;
	t_raw = CompSpillAutoModelTime(&raw, 0.3, 0.3, 1.0, &pace);
	check(fabs(t_raw - (overlap4(6.3, 20.0) - 6.0 + 0.3)) < 1e-9,
		  "cache room, size unknown", "raw %.3f", t_raw);
}

/*
 * Where the spill's work and the device take about as long, they overlap
 * imperfectly (the writes come in bursts): the model takes 1.19 times the
 * slower of them, not the slower alone, so that a codec that brings the
 * device's share well under the spill's work wins the tie (on the
 * throttled 50 MB/s disk lz4 took 0.91-0.93x the time of storing raw
 * where a plain maximum found them equal).  Far apart, the slower alone.
 */
static void
test_overlap(void)
{
	CompSpillCodecCost raw = {0.0, 0.0, 1.0, true};
	CompSpillCodecCost lz4 = {1.79, 0.0, 1.4, true};
	CompSpillDevicePace pace = {16.0, 14.0, 0.3, 0.0, 0.0};
	double		t_raw;
	double		t_lz4;

	/*
	 * raw: work 14.3 against the device's 16; lz4: work 16.0 against the
	 * device's 11.4.  The slower alone is 16 for both.
	 */
	t_raw = CompSpillAutoModelTime(&raw, 0.3, 0.0, 1.0, &pace);
	t_lz4 = CompSpillAutoModelTime(&lz4, 0.3, 0.0, 1.0, &pace);
	check(fabs(Max(14.3, 16.0) - Max(14.0 + 1.79 + 0.3 / 1.4, 16.0 / 1.4)) < 0.01 &&
		  t_lz4 < t_raw - 1.0, "overlap near a tie",
		  "raw %.3f, lz4 %.3f", t_raw, t_lz4);

	/* a device far faster than the work costs nearly nothing */
	pace.device_ns_per_byte = 2.0;
	t_raw = CompSpillAutoModelTime(&raw, 0.3, 0.3, 1.0, &pace);
	check(t_raw < 0.3 + 0.3 + 0.01, "overlap, device far faster",
		  "raw %.3f", t_raw);
}

/*
 * A spill that starts from the pace an earlier spill measured on its device
 * (CompSpillAutoRecallDevice) compresses once its own work is measured (4
 * MB into it) instead of storing the page cache's room raw: on the 50 MB/s
 * device, most of its first 32 MB are compressed (a spill that learns
 * stores them raw), in column frames, and it takes no longer than lz4
 * throughout; a recalled pace as fast as its own work leaves it raw, in
 * row frames (column frames would only add their CPU).  Stray stalls of a
 * descheduled backend from the start (a device's dirty limit is no 4 MB)
 * leave no pace for later spills, although the device wrote meanwhile.  A
 * spill passes on only a pace it measured (CompSpillAutoMeasuredDevice),
 * with the bytes it wrote before its first stall: more than the 32 MB
 * dirty limit, since the device drains the cache while the spill fills it.
 */
static void
test_recalled_pace(void)
{
	static const struct
	{
		const char *name;
		double		device_ns;
		bool		stray;			/* 30 ms stalls every 6 MB */
		bool		compress;
	}			cases[] = {
		{"50 MB/s", 20.0, false, true},
		{"250 MB/s", 4.0, false, false},
		{"page cache, stray stalls", 0.5, true, false},
	};
	const double MB = 1024.0 * 1024.0;

	for (int i = 0; i < (int) lengthof(cases); i++)
	{
		double		t[3];
		double		early[3] = {0.0, 0.0, 0.0};
		double		ns_per_byte = 0.0;
		double		headroom = 0.0;
		bool		measured = false;
		bool		recalled_measured = true;
		bool		row_frames = false;
		char		test[128];

		/* learning, then recalling the pace learnt, then lz4 throughout */
		for (int run = 0; run < 3; run++)
		{
			WbSim		ws;
			Sim			sim;
			CompSpillAutoCodec ac;
			int64		used[3] = {0, 0, 0};

			paced_sim_init(&sim, &ws, &ac, cases[i].device_ns);
			/* a device that keeps up shows no pace: recall its own */
			if (run == 1)
				CompSpillAutoRecallDevice(&ac, measured ? ns_per_byte :
										  cases[i].device_ns, headroom);
			for (double raw = 0.0; raw < 320 * MB; raw += 4 * MB)
			{
				wbsim_run(&ws, &sim, &ac, 4 * MB, run == 2 ? LZ4 : -1, used);
				if (cases[i].stray && fmod(raw, 6 * MB) < 4 * MB)
				{
					/* the backend descheduled for 30 ms in a write */
					ws.now += 30e6;
					CompSpillAutoRecordWrite(&ac, 4096, 30e-3, 30e-3);
				}
				if (raw + 4 * MB == 32 * MB)
					early[run] = (double) (used[LZ4] + used[ZSTD]) /
						(used[NONE] + used[LZ4] + used[ZSTD]);
			}
			t[run] = ws.now;
			if (run == 1)
				row_frames = CompSpillAutoRowFrames(&ac);
			if (run == 0)
			{
				measured = CompSpillAutoMeasuredDevice(&ac, &ns_per_byte,
													   &headroom);
				if (verbose)
					printf("     first stall after %.0f MB, device bytes %.0f MB\n",
						   ac.cache_room / MB, ac.device_bytes / MB);
			}
		}

		/* a recalled pace alone is not passed on */
		{
			CompSpillAutoCodec ac;
			double		ns;
			double		room;

			CompSpillAutoInit(&ac, 1);
			CompSpillAutoRecallDevice(&ac, 20.0, 32.0 * MB);
			recalled_measured = CompSpillAutoMeasuredDevice(&ac, &ns, &room);
		}

		snprintf(test, sizeof(test), "recalled pace %s", cases[i].name);
		if (verbose)
			printf("     %s: measured %s (%.1f ns/B after %.0f MB); first "
				   "32 MB compressed %.0f%% learning, %.0f%% recalled; "
				   "%.0f ms learning, %.0f ms recalled, lz4 %.0f ms\n",
				   test, measured ? "yes" : "no", ns_per_byte,
				   headroom / MB, 100 * early[0], 100 * early[1],
				   t[0] / 1e6, t[1] / 1e6, t[2] / 1e6);
		if (cases[i].compress)
			check(measured && headroom >= 32 * MB && headroom <= 160 * MB &&
				  early[0] <= 0.5 && early[1] >= 0.8 &&
				  t[1] < t[0] && t[1] <= 1.02 * t[2] && !recalled_measured &&
				  !row_frames,
				  test, "measured %d after %.0f MB, early %.0f%% / %.0f%%, "
				  "%.0f / %.0f / lz4 %.0f ms", (int) measured, headroom / MB,
				  100 * early[0], 100 * early[1], t[0] / 1e6, t[1] / 1e6,
				  t[2] / 1e6);
		else if (cases[i].stray)
			check(!measured, test, "measured %d, %.1f ns/B", (int) measured,
				  ns_per_byte);
		else
			check(early[1] <= 0.1 && !recalled_measured && row_frames, test,
				  "early %.0f%% compressed, row frames %d", 100 * early[1],
				  (int) row_frames);
	}
}

/*
 * Before a write is timed the choice stays raw, however cheap a codec
 * measures: the prior write cost alone would otherwise decide (a cheap lz4
 * probe made the first run's frames compressed in the page cache, and a
 * merge of runs with compressed frames fits fewer of them).  Once writes
 * cost what a slow disk's do, the codec is chosen.
 */
static void
test_no_choice_before_writes(void)
{
	CompSpillAutoCodec ac;
	int			compressed = 0;

	CompSpillAutoInit(&ac, 1);
	for (int i = 0; i < 200; i++)
	{
		CompSpillCodec c = CompSpillAutoNext(&ac);

		if (c != NONE && !CompSpillAutoProbing(&ac))
			compressed++;
		CompSpillAutoRecordCompress(&ac, c, 65536,
									c == NONE ? 65536 : c == LZ4 ? 16384 : 12000,
									65536 * (c == NONE ? 0.0 : c == LZ4 ? 0.5e-9 : 2e-9));
	}
	check(compressed == 0 && ac.choice == NONE, "no choice before writes",
		  "%d blocks compressed outside probes, choice %s", compressed,
		  name(ac.choice));

	CompSpillAutoRecordWrite(&ac, 8 * 1024 * 1024, 8 * 1024 * 1024 * 20e-9,
							 0.0);
	for (int i = 0; i < 10; i++)
		(void) CompSpillAutoNext(&ac);
	check(ac.choice != NONE, "choice once writes are timed", "%s",
		  name(ac.choice));
}

/*
 * Reads not timed yet: buffered, they cost the cheapest write measured
 * (the page cache); under direct I/O, what writes cost.
 */
static void
test_read_prior(void)
{
	CompSpillAutoCodec ac;
	CompSpillCodecCost cost[3];
	double		w;
	double		r;

	CompSpillAutoInit(&ac, 1);
	CompSpillAutoRecordWrite(&ac, 1024 * 1024, 1024 * 1024 * 0.3e-9, 0.0);
	for (int i = 0; i < 100; i++)
		CompSpillAutoRecordWrite(&ac, 1024 * 1024, 1024 * 1024 * 20e-9, 0.0);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(w > 15.0 && fabs(r - 0.3) < 1e-6, "read prior buffered",
		  "write %.2f ns/B, read %.2f ns/B", w, r);

	CompSpillAutoSetDirect(&ac, true);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(r == w, "read prior direct", "write %.2f ns/B, read %.2f ns/B",
		  w, r);

	/* measured reads win over the prior */
	CompSpillAutoSetDirect(&ac, false);
	CompSpillAutoRecordRead(&ac, 1024 * 1024, 1024 * 1024 * 5e-9);
	CompSpillAutoCurrentCosts(&ac, cost, &w, &r);
	check(fabs(r - 5.0) < 1e-6, "read measured", "read %.2f ns/B", r);
}

/* ----------------------------------------------------------------
 * Frame kind: row frames while the bytes column frames save cost less
 * to write and read than the column encodings' CPU
 * ----------------------------------------------------------------
 */
static void
test_frame_kind(void)
{
	CompSpillAutoCodec ac;

	CompSpillAutoInit(&ac, 1);
	check(CompSpillAutoRowFrames(&ac), "kind, nothing measured",
		  "row frames");

	/* a write and read of 2.4 ns per byte: columns, at the assumed saving */
	CompSpillAutoRecordWrite(&ac, 64 * 1024 * 1024,
							 64 * 1024 * 1024 * 1.2e-9, 0.0);
	check(ac.choice == NONE && !CompSpillAutoRowFrames(&ac),
		  "kind, 2.4 ns/B, assumed saving", "column frames");

	/* rows of long strings, which column frames save a tenth of: rows */
	CompSpillAutoRecordColumns(&ac, 64 * 1024 * 1024, 58 * 1024 * 1024);
	check(ac.columns.known && CompSpillAutoRowFrames(&ac),
		  "kind, 2.4 ns/B, columns 0.9 of the rows",
		  "row frames (columns %.2f)", ac.columns.value);

	/* lineitem's rows, which column frames shrink to a third: columns */
	CompSpillAutoInit(&ac, 1);
	CompSpillAutoRecordWrite(&ac, 64 * 1024 * 1024,
							 64 * 1024 * 1024 * 1.2e-9, 0.0);
	CompSpillAutoRecordColumns(&ac, 64 * 1024 * 1024, 21 * 1024 * 1024);
	check(!CompSpillAutoRowFrames(&ac), "kind, 2.4 ns/B, columns 0.33",
		  "column frames (columns %.2f)", ac.columns.value);

	/*
	 * rows read back as tuples (a store's): row frames all the same, where
	 * the writes measured say nothing of the bytes mattering; column frames
	 * once room is short
	 */
	check(CompSpillAutoStoreRowFrames(&ac), "store kind, 2.4 ns/B, columns 0.33",
		  "row frames");
	CompSpillAutoSetRoom(&ac, 0.5);
	check(!CompSpillAutoStoreRowFrames(&ac), "store kind, room short",
		  "column frames");

	/* cheap I/O: rows whatever the columns save */
	CompSpillAutoInit(&ac, 1);
	CompSpillAutoRecordWrite(&ac, 64 * 1024 * 1024,
							 64 * 1024 * 1024 * 0.3e-9, 0.0);
	CompSpillAutoRecordColumns(&ac, 64 * 1024 * 1024, 16 * 1024 * 1024);
	check(CompSpillAutoRowFrames(&ac), "kind, 0.6 ns/B", "row frames");

	/* a zero-byte record is nothing */
	CompSpillAutoInit(&ac, 1);
	CompSpillAutoRecordColumns(&ac, 0, 100);
	check(!ac.columns.known, "kind, empty record", "no figure");
}

/* ----------------------------------------------------------------
 * Room: a limit on the stored bytes per raw byte
 * ----------------------------------------------------------------
 */
static void
test_room(void)
{
	CompSpillCodecCost cost[3];
	CompSpillAutoCodec ac;
	Sim			sim;
	CompSpillCodec c;

	/* lz4 stores 1/3, zstd 1/4; in the page cache none is fastest */
	realistic(cost, 3.0, 4.0);
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, INFINITY);
	check(c == NONE && c == CompSpillAutoDecide(cost, 0.3, 0.3, 1.0, NULL),
		  "room unlimited", "%s, as CompSpillAutoDecide", name(c));
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, NAN);
	check(c == NONE, "room NaN", "%s: no limit", name(c));
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, 0.5);
	check(c == LZ4, "room 0.5", "%s: both fit, lz4 costs less", name(c));
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, 1.0 / 3.0);
	check(c == LZ4, "room exactly lz4's", "%s", name(c));
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, 0.3);
	check(c == ZSTD, "room 0.3", "%s: only zstd fits", name(c));
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, 0.1);
	check(c == ZSTD, "room 0.1", "%s: nothing fits, zstd stores least",
		  name(c));
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, 0.0);
	check(c == ZSTD, "room none left", "%s", name(c));
	/* room wide enough for none: the time decides, as without a limit */
	c = CompSpillAutoDecideRoom(cost, 20.0, 20.0, 1.0, NULL, 1.0);
	check(c == CompSpillAutoDecide(cost, 20.0, 20.0, 1.0, NULL), "room 1.0",
		  "%s, as CompSpillAutoDecide", name(c));
	/* an unknown codec is no candidate, even when it would fit */
	cost[ZSTD].known = false;
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, 0.3);
	check(c == LZ4, "room, zstd unknown", "%s: lz4 stores least of the known",
		  name(c));
	/* equal fractions: the lower CPU cost */
	realistic(cost, 4.0, 4.0);
	c = CompSpillAutoDecideRoom(cost, 0.3, 0.3, 1.0, NULL, 0.1);
	check(c == LZ4, "room, equal fractions", "%s", name(c));

	/* online, in the page cache: compressed from the first blocks */
	sim_init(&sim, 0.3);
	CompSpillAutoInit(&ac, 1);
	check(!CompSpillAutoRoomShort(&ac) && CompSpillAutoRowFrames(&ac),
		  "room online", "no limit at first, row frames");
	CompSpillAutoSetRoom(&ac, 0.5);
	check(CompSpillAutoRoomShort(&ac) && !CompSpillAutoRowFrames(&ac),
		  "room online", "room short: column frames");
	sim_run(&sim, &ac, 500);
	check(ac.choice == LZ4 && sim.used[NONE] == 0, "room online 0.5",
		  "choice %s, %lld of 500 blocks raw", name(ac.choice),
		  (long long) sim.used[NONE]);
	/* a compressing choice stores its probes compressed */
	check(!CompSpillAutoStoresRaw(&ac), "stores raw, lz4", "%s",
		  CompSpillAutoStoresRaw(&ac) ? "raw" : "compressed");
	/* a choice that no longer fits is left at the next block */
	CompSpillAutoSetRoom(&ac, 0.3);
	sim_run(&sim, &ac, 1);
	check(ac.choice == ZSTD, "room online 0.3", "choice %s at once",
		  name(ac.choice));
	sim_run(&sim, &ac, 500);
	check(sim.used[ZSTD] >= 475 && sim.used[NONE] == 0, "room online 0.3",
		  "%lld of 500 blocks zstd, %lld raw", (long long) sim.used[ZSTD],
		  (long long) sim.used[NONE]);
	/* room again: back to storing raw */
	CompSpillAutoSetRoom(&ac, INFINITY);
	sim_run(&sim, &ac, 500);
	check(ac.choice == NONE && CompSpillAutoRowFrames(&ac),
		  "room again", "choice %s, row frames", name(ac.choice));
	/* storing raw, a probe is only timed: its block is stored raw too */
	check(CompSpillAutoStoresRaw(&ac), "stores raw, none", "%s",
		  CompSpillAutoStoresRaw(&ac) ? "raw" : "compressed");
	/* unless room is short, whatever the choice */
	CompSpillAutoSetRoom(&ac, 2.0);
	check(!CompSpillAutoStoresRaw(&ac), "stores raw, room short", "%s",
		  CompSpillAutoStoresRaw(&ac) ? "raw" : "compressed");
	CompSpillAutoSetRoom(&ac, INFINITY);
	/* a negative fraction is none at all */
	CompSpillAutoSetRoom(&ac, -1.0);
	check(ac.room_fraction == 0.0, "room negative", "%.2f",
		  ac.room_fraction);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "-v") == 0)
		verbose = true;

	test_decide();
	test_measurements();
	test_online();
	test_reads();
	test_writes();
	test_no_choice_before_writes();
	test_device_pace();
	test_recalled_pace();
	test_cache_room();
	test_overlap();
	test_read_prior();
	test_frame_kind();
	test_room();

	printf("autocodec unit: %d passed, %d failed\n", npassed, nfailed);
	return nfailed == 0 ? 0 : 1;
}
