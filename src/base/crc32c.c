/*-------------------------------------------------------------------------
 *
 * crc32c.c
 *	  CRC-32C of a frame's payload, three streams at a time where the
 *	  server's own routine takes one.
 *
 * Every frame compspill writes carries a CRC-32C of its header and
 * payload, computed once when it is written and once when it is read: a
 * lineitem sort at 4MB checksums its 0.3-0.5 GB of frames twice.  The
 * server's routine (COMP_CRC32C) feeds the SSE 4.2 crc32 instruction one
 * 8-byte word at a time, each word waiting for the last one's result, so it
 * runs at the instruction's latency (about 8 GB/s on the machines this was
 * measured on), and on PostgreSQL before 18 that is the routine every
 * x86-64 server has.  PostgreSQL 18 uses AVX-512 where the CPU has it, and
 * then compspill leaves it the work.
 *
 * Here the payload is cut into stripes of three equal lengths, computed as
 * three independent streams whose instructions overlap, and joined: the
 * CRC register is linear in its input, so the register after A then B is
 * the register after A advanced over len(B) zero bytes, xor the register of
 * B alone started from zero.  Advancing over a fixed number of zero bytes
 * is a linear map of the register's 32 bits, kept as four tables of 256
 * entries (one per byte of the register) for each stripe length, computed
 * once per backend from the instruction itself.  The value is the same
 * CRC-32C, bit for bit, as the server's routine gives: frames written one
 * way read back the other.  In cache this runs at 2.3 times the one-stream
 * loop (21 against 9 GB/s on 4-16kB frames).
 *
 * Other CPUs and compilers use COMP_CRC32C.
 *
 * IDENTIFICATION
 *	  src/base/crc32c.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/compat.h"
#include "base/crc32c.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COMPSPILL_CRC_STRIPES 1
#include <nmmintrin.h>
#endif

#ifdef COMPSPILL_CRC_STRIPES

/*
 * The stripe lengths, longest first: a payload takes stripes of the first
 * length while three of them fit, then of the next; what is left is
 * computed as one stream.  Joining costs two table look-ups of four bytes
 * per stripe, so the long stripes carry most of a frame and the short ones
 * keep the one-stream tail under 768 bytes.
 */
#define COMPSPILL_CRC_NLENGTHS	2
static const size_t compspill_crc_stripe[COMPSPILL_CRC_NLENGTHS] = {2048, 256};

/* advancing the register over one stripe of zeroes, by register byte */
static uint32 compspill_crc_advance[COMPSPILL_CRC_NLENGTHS][4][256];

/* 0 not yet decided, 1 striped, -1 the server's routine */
static int	compspill_crc_striped = 0;

/*
 * The register after len bytes (a multiple of 8) of zeroes from crc.
 */
pg_attribute_target("sse4.2")
static uint32
compspill_crc_zeroes(uint32 crc, size_t len)
{
	uint64		c = crc;

	for (size_t i = 0; i < len; i += 8)
		c = _mm_crc32_u64(c, 0);
	return (uint32) c;
}

/*
 * Fill the tables that advance the register over each stripe length: the
 * map is linear, so it is known from where each of the 32 single bits goes.
 */
static void
compspill_crc_build(void)
{
	for (int s = 0; s < COMPSPILL_CRC_NLENGTHS; s++)
	{
		uint32		bit[32];

		for (int k = 0; k < 32; k++)
			bit[k] = compspill_crc_zeroes((uint32) 1 << k,
										  compspill_crc_stripe[s]);
		for (int byte = 0; byte < 4; byte++)
			for (int v = 0; v < 256; v++)
			{
				uint32		out = 0;

				for (int k = 0; k < 8; k++)
					if (v & (1 << k))
						out ^= bit[8 * byte + k];
				compspill_crc_advance[s][byte][v] = out;
			}
	}
}

/* The register crc advanced over one stripe of length number s of zeroes */
static inline uint32
compspill_crc_shift(int s, uint32 crc)
{
	return compspill_crc_advance[s][0][crc & 0xFF] ^
		compspill_crc_advance[s][1][(crc >> 8) & 0xFF] ^
		compspill_crc_advance[s][2][(crc >> 16) & 0xFF] ^
		compspill_crc_advance[s][3][crc >> 24];
}

/*
 * CRC-32C of data from register crc (no initial or final inversion, as
 * COMP_CRC32C), three stripes at a time, the rest as one stream.  Words are
 * read with memcpy: a payload has no alignment.
 */
pg_attribute_target("sse4.2")
static uint32
compspill_crc32c_striped(uint32 crc, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64		c;

	for (int s = 0; s < COMPSPILL_CRC_NLENGTHS; s++)
	{
		size_t		stripe = compspill_crc_stripe[s];

		while (len >= 3 * stripe)
		{
			const unsigned char *end = p + stripe;
			uint64		c0 = crc;
			uint64		c1 = 0;
			uint64		c2 = 0;

			for (; p < end; p += 8)
			{
				uint64		w0;
				uint64		w1;
				uint64		w2;

				memcpy(&w0, p, 8);
				memcpy(&w1, p + stripe, 8);
				memcpy(&w2, p + 2 * stripe, 8);
				c0 = _mm_crc32_u64(c0, w0);
				c1 = _mm_crc32_u64(c1, w1);
				c2 = _mm_crc32_u64(c2, w2);
			}
			crc = compspill_crc_shift(s, compspill_crc_shift(s, (uint32) c0) ^
									  (uint32) c1) ^ (uint32) c2;
			p += 2 * stripe;
			len -= 3 * stripe;
		}
	}

	c = crc;
	for (; len >= 8; p += 8, len -= 8)
	{
		uint64		w;

		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
	}
	crc = (uint32) c;
	for (; len > 0; p++, len--)
		crc = _mm_crc32_u8(crc, *p);
	return crc;
}

/*
 * Decide, once, whether to use the stripes: the CPU must have SSE 4.2, and
 * the server must not have a faster routine of its own (AVX-512, 18 on).
 */
static void
compspill_crc_decide(void)
{
	bool		striped;

	__builtin_cpu_init();
	striped = __builtin_cpu_supports("sse4.2");

#ifdef USE_AVX512_CRC32C_WITH_RUNTIME_CHECK
	if (striped)
	{
		pg_crc32c	probe;
		char		zero[64] = {0};

		/* the server picks its routine on its first call; make sure of it */
		INIT_CRC32C(probe);
		COMP_CRC32C(probe, zero, sizeof(zero));
		(void) probe;
		if (pg_comp_crc32c == pg_comp_crc32c_avx512)
			striped = false;
	}
#endif

	if (striped)
		compspill_crc_build();
	compspill_crc_striped = striped ? 1 : -1;
}

#endif							/* COMPSPILL_CRC_STRIPES */

/*
 * Add len bytes of data to a CRC-32C register, as COMP_CRC32C does (same
 * value), in stripes where that is faster.
 */
pg_crc32c
CompSpillCrc32c(pg_crc32c crc, const void *data, size_t len)
{
#ifdef COMPSPILL_CRC_STRIPES
	if (unlikely(compspill_crc_striped == 0))
		compspill_crc_decide();
	if (compspill_crc_striped > 0 &&
		len >= 3 * compspill_crc_stripe[COMPSPILL_CRC_NLENGTHS - 1])
		return compspill_crc32c_striped(crc, data, len);
#endif
	COMP_CRC32C(crc, data, len);
	return crc;
}
