/*-------------------------------------------------------------------------
 *
 * devices.c
 *	  What compspill remembers of the devices under its temporary files:
 *	  the pace at which a device wrote a spill's bytes while it held the
 *	  spill back, for the spills that follow.
 *
 * With compspill.codec = auto a spill on a slow device writes raw until
 * the kernel's dirty pages reach their limit and a write stalls: only then
 * does the device's pace show (codec/autocodec.c), and what went before,
 * some 20-30 MB behind a 50 MB/s device, was stored raw for nothing.  A
 * spill that measured the pace leaves it here, with the bytes it wrote
 * before its first stall (the room the page cache gave it); a later spill
 * on the same device, within COMPSPILL_DEVICE_MEMORY_SECS, whose plan
 * expects more bytes than that room, starts from the pace instead of
 * learning it again (spill/codecchoice.c).  A spill the page cache would
 * hold whole is left to learn for itself: its bytes never reach the device
 * if the file is gone before the kernel writes it back.  A minute is long
 * enough for the next sort of a batch, and short because nothing tells a
 * spill that compresses under the device's pace that the device has since
 * become faster: it never stalls, so it never measures the device again.
 * A spill that does stall measures the pace afresh and leaves it anew.
 *
 * Loaded from shared_preload_libraries, the table is in shared memory and
 * every backend learns from every other; loaded otherwise, each backend
 * keeps its own.  COMPSPILL_DEVICES entries, keyed by the device and the
 * file system on it (CompSpillFileDevice); a new device takes the oldest
 * entry.  A spinlock covers the few assignments of a look-up or an update,
 * nothing that can fail.
 *
 * IDENTIFICATION
 *	  src/shared/devices.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "shared/devices.h"

/* devices remembered at once, and for how long after their measurement */
#define COMPSPILL_DEVICES				16
#define COMPSPILL_DEVICE_MEMORY_SECS	60

typedef struct CompSpillDeviceEntry
{
	uint64		dev;			/* device key; 0: a free entry */
	TimestampTz measured;		/* when its pace was last measured */
	double		ns_per_byte;	/* its pace */
	double		headroom;		/* bytes written before the first stall */
} CompSpillDeviceEntry;

typedef struct CompSpillDeviceTable
{
	slock_t		mutex;			/* protects the entries */
	CompSpillDeviceEntry entries[COMPSPILL_DEVICES];
} CompSpillDeviceTable;

/* the shared table once attached, else this backend's own */
static CompSpillDeviceTable *compspill_devices = NULL;
static CompSpillDeviceTable compspill_local_devices;

/*
 * Ask for the table's shared memory; from the shared memory request hook.
 */
void
CompSpillDevicesShmemRequest(void)
{
	RequestAddinShmemSpace(sizeof(CompSpillDeviceTable));
}

/*
 * Attach to the table, creating it in the postmaster.  The caller holds
 * AddinShmemInitLock.
 */
void
CompSpillDevicesShmemInit(void)
{
	bool		found;

	compspill_devices = ShmemInitStruct("compspill devices",
										sizeof(CompSpillDeviceTable), &found);
	if (!found)
	{
		memset(compspill_devices, 0, sizeof(CompSpillDeviceTable));
		SpinLockInit(&compspill_devices->mutex);
	}
}

/* The table this backend uses: the shared one, or its own */
static CompSpillDeviceTable *
compspill_device_table(void)
{
	if (compspill_devices == NULL)
	{
		SpinLockInit(&compspill_local_devices.mutex);
		compspill_devices = &compspill_local_devices;
	}
	return compspill_devices;
}

/*
 * Fill in the pace of the device of key dev and the room its page cache
 * gave the spill that measured it, and return true, when a spill measured
 * them in the last COMPSPILL_DEVICE_MEMORY_SECS; else return false.
 */
bool
CompSpillDeviceRecall(uint64 dev, double *ns_per_byte, double *headroom)
{
	CompSpillDeviceTable *t = compspill_device_table();
	TimestampTz since;
	bool		found = false;

	if (dev == 0)
		return false;
	since = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
										-COMPSPILL_DEVICE_MEMORY_SECS * 1000);
	SpinLockAcquire(&t->mutex);
	for (int i = 0; i < COMPSPILL_DEVICES; i++)
	{
		CompSpillDeviceEntry *e = &t->entries[i];

		if (e->dev == dev && e->measured >= since)
		{
			*ns_per_byte = e->ns_per_byte;
			*headroom = e->headroom;
			found = true;
			break;
		}
	}
	SpinLockRelease(&t->mutex);
	return found;
}

/*
 * Remember that the device of key dev wrote at ns_per_byte while it held a
 * spill back, after letting headroom bytes into the page cache first.
 */
void
CompSpillDeviceRemember(uint64 dev, double ns_per_byte, double headroom)
{
	CompSpillDeviceTable *t = compspill_device_table();
	TimestampTz now = GetCurrentTimestamp();
	CompSpillDeviceEntry *slot = NULL;

	if (dev == 0 || !(ns_per_byte > 0.0))
		return;
	SpinLockAcquire(&t->mutex);
	for (int i = 0; i < COMPSPILL_DEVICES; i++)
	{
		CompSpillDeviceEntry *e = &t->entries[i];

		if (e->dev == dev)
		{
			slot = e;
			break;
		}
		if (slot == NULL || e->measured < slot->measured)
			slot = e;
	}
	slot->dev = dev;
	slot->measured = now;
	slot->ns_per_byte = ns_per_byte;
	slot->headroom = headroom;
	SpinLockRelease(&t->mutex);
}
