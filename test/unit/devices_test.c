/*-------------------------------------------------------------------------
 *
 * devices_test.c
 *	  Unit test of the table of devices' paces (src/shared/devices.c).
 *
 * A pace left for a device is recalled for that device only, for a minute
 * after it was measured, and a newer measurement replaces it; a device
 * beyond the table's sixteen takes the entry measured longest ago; key 0
 * (no block device) and a pace of 0 are never kept.  devices.c is linked
 * alone, with the clock given by the test and shared memory never asked
 * for (the table is then the process's own, as in a backend that loaded
 * compspill without shared_preload_libraries).
 *
 * IDENTIFICATION
 *	  test/unit/devices_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdio.h>

#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "shared/devices.h"
#include "unitcheck.h"

/* the clock devices.c reads */
static TimestampTz now = 800000000000000;

TimestampTz
GetCurrentTimestamp(void)
{
	return now;
}

/* never called: the test does not ask for shared memory */
void
RequestAddinShmemSpace(Size size)
{
	(void) size;
}

void *
ShmemInitStruct(const char *name, Size size, bool *foundPtr)
{
	(void) name;
	(void) size;
	*foundPtr = false;
	return NULL;
}

/* an uncontended spinlock never waits */
int
s_lock(volatile slock_t *lock, const char *file, int line, const char *func)
{
	(void) lock;
	(void) file;
	(void) line;
	(void) func;
	return 0;
}

/* Is device dev's pace recalled as ns_per_byte with headroom? */
static bool
recalls(uint64 dev, double ns_per_byte, double headroom)
{
	double		ns = -1.0;
	double		room = -1.0;

	return CompSpillDeviceRecall(dev, &ns, &room) &&
		ns == ns_per_byte && room == headroom;
}

/* Is nothing recalled for device dev? */
static bool
forgotten(uint64 dev)
{
	double		ns;
	double		room;

	return !CompSpillDeviceRecall(dev, &ns, &room);
}

int
main(void)
{
	const int64 SEC = 1000000;

	check(forgotten(7), "nothing before a pace is left");

	CompSpillDeviceRemember(7, 20.0, 30e6);
	check(recalls(7, 20.0, 30e6), "a pace left is recalled");
	check(forgotten(8), "for its own device only");

	now += 30 * SEC;
	CompSpillDeviceRemember(7, 25.0, 28e6);
	check(recalls(7, 25.0, 28e6), "a newer measurement replaces it");
	now += 59 * SEC;
	check(recalls(7, 25.0, 28e6), "recalled 59 s after it was measured");
	now += 2 * SEC;
	check(forgotten(7), "forgotten a minute after it was measured");

	CompSpillDeviceRemember(0, 20.0, 30e6);
	check(forgotten(0), "no device, nothing kept");
	CompSpillDeviceRemember(9, 0.0, 30e6);
	check(forgotten(9), "no pace, nothing kept");

	/* sixteen devices fill the table; a seventeenth takes the oldest */
	for (uint64 dev = 100; dev < 116; dev++)
	{
		now += SEC;
		CompSpillDeviceRemember(dev, (double) dev, 1e6);
	}
	check(recalls(100, 100.0, 1e6) && recalls(115, 115.0, 1e6),
		  "sixteen devices kept");
	now += SEC;
	CompSpillDeviceRemember(200, 5.0, 2e6);
	check(recalls(200, 5.0, 2e6) && forgotten(100) &&
		  recalls(101, 101.0, 1e6), "a new device takes the oldest entry");

	return unit_report("devices");
}
