/*-------------------------------------------------------------------------
 *
 * sorter_test.c
 *	  Unit test of the sorter's array growth (CompSpillGrowArraySize): it
 *	  doubles, stops at INT_MAX entries and below MaxAllocHugeSize bytes,
 *	  and never shrinks, at sizes no test machine can hold in memory.
 *
 * IDENTIFICATION
 *	  test/unit/sorter_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdio.h>
#include <string.h>

#include "utils/memutils.h"

#include "sort/sorter.h"

/* the libc printf, not the server's (there is no server here) */
#undef printf

static int	npassed = 0;
static int	nfailed = 0;

/* Count one check, printing it when it fails */
static void
check(bool ok, const char *name, int64 got, int64 want)
{
	if (ok)
		npassed++;
	else
	{
		nfailed++;
		printf("FAIL: %s: got " INT64_FORMAT ", want " INT64_FORMAT "\n",
			   name, got, want);
	}
}

int
main(void)
{
	int64		n;

	/* the sorter's own entries: 24 bytes */
	n = CompSpillGrowArraySize(1024, 24);
	check(n == 2048, "doubles", n, 2048);
	n = CompSpillGrowArraySize(INT_MAX / 2, 24);
	check(n == (int64) (INT_MAX / 2) * 2, "doubles up to INT_MAX - 1", n,
		  (int64) (INT_MAX / 2) * 2);
	n = CompSpillGrowArraySize(INT_MAX / 2 + 1, 24);
	check(n == INT_MAX, "clamped at INT_MAX", n, INT_MAX);
	n = CompSpillGrowArraySize(INT_MAX, 24);
	check(n == INT_MAX, "does not grow past INT_MAX", n, INT_MAX);

	/* entries so large that the chunk limit comes first */
	{
		Size		big = MaxAllocHugeSize / 1000;
		int64		lim = (int64) ((MaxAllocHugeSize - 1) / big);

		n = CompSpillGrowArraySize(600, big);
		check(n == lim, "clamped below MaxAllocHugeSize", n, lim);
		check((Size) n * big < MaxAllocHugeSize,
			  "the chunk stays below MaxAllocHugeSize", n, lim);
		n = CompSpillGrowArraySize((int) lim, big);
		check(n == lim, "does not grow past the chunk limit", n, lim);
	}

	printf("sorter unit: %d passed, %d failed\n", npassed, nfailed);
	return nfailed == 0 ? 0 : 1;
}
