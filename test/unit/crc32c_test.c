/*-------------------------------------------------------------------------
 *
 * crc32c_test.c
 *	  Unit test of the frames' checksum (src/base/crc32c.c).
 *
 * CompSpillCrc32c must give the CRC-32C the server's COMP_CRC32C gives,
 * bit for bit, over every length (the stripes of each length, the joins,
 * the one-stream tail), every alignment and any starting register.  The
 * server's routine is replaced here by a bit-at-a-time CRC-32C written from
 * the polynomial, so the striped routine is checked against the
 * definition, not against another fast routine; crc32c.c is included
 * whole so that its striped routine can be called for every length, also
 * those CompSpillCrc32c hands to the server's routine.
 *
 * IDENTIFICATION
 *	  test/unit/crc32c_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "../../src/base/crc32c.c"

#include <stdio.h>
#include <stdlib.h>
#include "unitcheck.h"

/*
 * CRC-32C from its definition: the reflected polynomial 0x82F63B78, one
 * bit at a time, from register crc (no inversions, as COMP_CRC32C).
 */
static pg_crc32c
reference_crc(pg_crc32c crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len-- > 0)
	{
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78 & (0 - (crc & 1)));
	}
	return crc;
}

/* the server's routines, as COMP_CRC32C reaches them on 15 and 18 */
pg_crc32c	(*pg_comp_crc32c) (pg_crc32c crc, const void *data, size_t len) = reference_crc;

#ifdef USE_AVX512_CRC32C_WITH_RUNTIME_CHECK
pg_crc32c
pg_comp_crc32c_avx512(pg_crc32c crc, const void *data, size_t len)
{
	return reference_crc(crc, data, len);
}
#endif

int
main(void)
{
	size_t		size = 40000;
	unsigned char *buf = malloc(size + 64);
	bool		all_lengths = true;
	bool		random_cases = true;
	uint32		seed = 12345;
	pg_crc32c	crc;

	for (size_t i = 0; i < size + 64; i++)
	{
		seed = seed * 1103515245 + 12345;
		buf[i] = (unsigned char) (seed >> 16);
	}

	/* the standard check value: "123456789" gives E3069283 */
	INIT_CRC32C(crc);
	crc = CompSpillCrc32c(crc, "123456789", 9);
	FIN_CRC32C(crc);
	check(crc == 0xE3069283, "check value of \"123456789\"");

	/* the definition itself, so that agreeing with it means something */
	INIT_CRC32C(crc);
	crc = reference_crc(crc, "123456789", 9);
	FIN_CRC32C(crc);
	check(crc == 0xE3069283, "reference check value");

#ifdef COMPSPILL_CRC_STRIPES
	(void) CompSpillCrc32c(0, buf, 1);
	check(compspill_crc_striped != 0, "the routine is decided on first use");
	if (__builtin_cpu_supports("sse4.2"))
	{
		check(compspill_crc_striped > 0, "stripes used on a CPU with SSE 4.2");

		/* every length up to past three long stripes, at every alignment */
		for (size_t len = 0; len <= 3 * 2048 + 800 && all_lengths; len++)
			for (size_t off = 0; off < 8; off++)
				if (compspill_crc32c_striped(0xFFFFFFFF, buf + off, len) !=
					reference_crc(0xFFFFFFFF, buf + off, len))
				{
					printf("length %zu offset %zu differs\n", len, off);
					all_lengths = false;
					break;
				}
		check(all_lengths, "striped CRC equals the definition, every length");

		/* longer payloads, random lengths, offsets and registers */
		for (int t = 0; t < 2000 && random_cases; t++)
		{
			size_t		len;
			size_t		off;
			pg_crc32c	start;

			seed = seed * 1103515245 + 12345;
			len = (seed >> 8) % size;
			seed = seed * 1103515245 + 12345;
			off = (seed >> 8) % 64;
			seed = seed * 1103515245 + 12345;
			start = seed;
			if (CompSpillCrc32c(start, buf + off, len) !=
				reference_crc(start, buf + off, len))
			{
				printf("length %zu offset %zu register %08X differs\n",
					   len, off, start);
				random_cases = false;
			}
		}
		check(random_cases, "CompSpillCrc32c equals the definition, random cases");

		/* a payload checksummed in two pieces gives the whole's value */
		crc = CompSpillCrc32c(0xFFFFFFFF, buf, 5000);
		crc = CompSpillCrc32c(crc, buf + 5000, 9000);
		check(crc == reference_crc(0xFFFFFFFF, buf, 14000),
			  "two pieces give the whole's CRC");
	}
#endif

	free(buf);
	return unit_report("crc32c");
}
