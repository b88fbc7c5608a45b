/*-------------------------------------------------------------------------
 *
 * unitcheck.h
 *	  The checks of a unit test that need nothing but a yes or no: counted,
 *	  each failure printed, and the line run-tests.sh reads at the end.
 *
 * Included once, by the test's own .c file (the functions are static).
 *
 * IDENTIFICATION
 *	  test/common/unitcheck.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_UNITCHECK_H
#define COMPSPILL_UNITCHECK_H

#include <stdio.h>

/* the libc printf, not the server's (there is no server here) */
#undef printf

static int	unit_passed = 0;
static int	unit_failed = 0;

/* Count one check, printing it when it fails */
static void
check(bool ok, const char *what)
{
	if (ok)
		unit_passed++;
	else
	{
		unit_failed++;
		printf("FAIL: %s\n", what);
	}
}

/*
 * Print "<name> unit: N passed, M failed" and return the test's exit
 * status.
 */
static int
unit_report(const char *name)
{
	printf("%s unit: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed == 0 ? 0 : 1;
}

#endif							/* COMPSPILL_UNITCHECK_H */
