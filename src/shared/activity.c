/*-------------------------------------------------------------------------
 *
 * activity.c
 *	  compspill_activity: the spills in progress in the cluster, one row
 *	  per spilling node of every backend, parallel workers included.
 *
 * Loaded from shared_preload_libraries, compspill keeps a few slots in
 * shared memory for every process (indexed by the PGPROC number, as the
 * server's own backend status array is).  A spill takes one of its
 * backend's free slots when it starts and gives it back when its memory
 * context goes away: at the end of the operation, or when an error resets
 * it.  A backend that exits clears its slots.
 *
 * Only the owning backend writes a slot, so writing takes no lock: the
 * slot's change count is odd while it is being written, and a reader
 * copies the slot until it sees the same even count before and after the
 * copy, as pg_stat_activity's readers do.  The spill publishes its figures
 * when it starts, when its phase changes and after each frame it writes,
 * never per row, so the view costs nothing that can be measured.
 *
 * A backend with more spilling nodes at once than it has slots (a plan with
 * many sorts under one merge join tree) shows the first ones only.
 *
 * IDENTIFICATION
 *	  src/shared/activity.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/twophase.h"
#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/settings.h"
#include "base/spillstats.h"
#include "shared/activity.h"

/* slots per process: spilling nodes a backend shows at once */
#define COMPSPILL_ACTIVITY_SLOTS	4

/* room for the longest node name, "incremental sort", and its NUL */
#define COMPSPILL_NODE_NAME_LEN		24

/* One spill in progress, as shared memory holds it */
typedef struct CompSpillActivitySlot
{
	uint32		changecount;	/* odd while the owner writes the slot */
	int			pid;			/* 0: the slot is free */
	Oid			dbid;
	Oid			userid;
	uint64		queryid;
	char		node[COMPSPILL_NODE_NAME_LEN];
	TimestampTz started;
	CompSpillPhase phase;
	int			pass;			/* merge pass, counted from 1 */
	int			npasses;		/* passes planned, final merge included */
	CompSpillCodec codec;
	bool		dio;
	int			runs;
	int64		rows;
	int64		bytes_written;
	int64		bytes_read;
	int64		file_size;
} CompSpillActivitySlot;

/* A spill's hold on its slot, in the spill's memory context */
struct CompSpillActivity
{
	CompSpillActivitySlot *slot;
	const CompSpillStats *st;
	MemoryContextCallback cb;
};

static CompSpillActivitySlot *compspill_slots = NULL;
static bool compspill_slots_owned = false;

PG_FUNCTION_INFO_V1(compspill_activity);

/* Processes that can have a PGPROC, as InitProcGlobal counts them */
static int
compspill_activity_procs(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

/*
 * Size of the slots in shared memory.
 */
static Size
compspill_activity_size(void)
{
	return mul_size(mul_size(compspill_activity_procs(),
							 COMPSPILL_ACTIVITY_SLOTS),
					sizeof(CompSpillActivitySlot));
}

/*
 * Ask for the slots' shared memory; from the shared memory request hook.
 */
void
CompSpillActivityShmemRequest(void)
{
	RequestAddinShmemSpace(compspill_activity_size());
}

/*
 * Attach to the slots, creating them in the postmaster.  The caller holds
 * AddinShmemInitLock.
 */
void
CompSpillActivityShmemInit(void)
{
	bool		found;

	compspill_slots = ShmemInitStruct("compspill activity",
									  compspill_activity_size(), &found);
	if (!found)
		memset(compspill_slots, 0, compspill_activity_size());
}

/* Start writing a slot: readers retry until it is done */
static inline void
compspill_slot_begin_write(volatile CompSpillActivitySlot *slot)
{
	slot->changecount++;
	pg_write_barrier();
}

/* Done writing a slot */
static inline void
compspill_slot_end_write(volatile CompSpillActivitySlot *slot)
{
	pg_write_barrier();
	slot->changecount++;
}

/* This backend's first slot */
static CompSpillActivitySlot *
compspill_own_slots(void)
{
	return &compspill_slots[CompSpillMyProcNumber() * COMPSPILL_ACTIVITY_SLOTS];
}

/* Free all of this backend's slots */
static void
compspill_clear_slots(int code pg_attribute_unused(),
					  Datum arg pg_attribute_unused())
{
	CompSpillActivitySlot *slots = compspill_own_slots();

	for (int i = 0; i < COMPSPILL_ACTIVITY_SLOTS; i++)
	{
		if (slots[i].pid == 0)
			continue;
		compspill_slot_begin_write(&slots[i]);
		slots[i].pid = 0;
		compspill_slot_end_write(&slots[i]);
	}
}

/* The spill's memory context goes away: free its slot */
static void
compspill_activity_reset(void *arg)
{
	CompSpillActivity *act = (CompSpillActivity *) arg;

	if (act->slot == NULL)
		return;
	compspill_slot_begin_write(act->slot);
	act->slot->pid = 0;
	compspill_slot_end_write(act->slot);
	act->slot = NULL;
}

/*
 * Show a spill that starts, of the node named what and with the figures
 * st, in a free slot of this backend.  The hold lives in
 * CurrentMemoryContext, which must be the spill's: the slot is freed when
 * that context is reset or deleted.  Return NULL when there is nowhere to
 * show it (not preloaded, or every slot taken).
 */
CompSpillActivity *
CompSpillActivityBegin(const char *what, const CompSpillStats *st)
{
	CompSpillActivitySlot *slots;
	CompSpillActivitySlot *slot = NULL;
	CompSpillActivity *act;

	if (compspill_slots == NULL || MyProc == NULL)
		return NULL;

	slots = compspill_own_slots();
	if (!compspill_slots_owned)
	{
		/* a process that had this PGPROC before may have died uncleanly */
		compspill_clear_slots(0, (Datum) 0);
		before_shmem_exit(compspill_clear_slots, (Datum) 0);
		compspill_slots_owned = true;
	}
	for (int i = 0; i < COMPSPILL_ACTIVITY_SLOTS; i++)
	{
		if (slots[i].pid == 0)
		{
			slot = &slots[i];
			break;
		}
	}
	if (slot == NULL)
		return NULL;

	act = palloc0(sizeof(CompSpillActivity));
	act->st = st;
	act->cb.func = compspill_activity_reset;
	act->cb.arg = act;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &act->cb);

	compspill_slot_begin_write(slot);
	slot->pid = MyProcPid;
	slot->dbid = MyDatabaseId;
	slot->userid = GetUserId();
	slot->queryid = st->queryid;
	snprintf(slot->node, sizeof(slot->node), "%s", what);
	slot->started = GetCurrentTimestamp();
	slot->phase = COMPSPILL_PHASE_READING_INPUT;
	slot->pass = 0;
	slot->npasses = 0;
	slot->codec = st->codec;
	slot->dio = st->dio_active;
	slot->runs = 0;
	slot->rows = 0;
	slot->bytes_written = 0;
	slot->bytes_read = 0;
	slot->file_size = 0;
	compspill_slot_end_write(slot);

	act->slot = slot;
	return act;
}

/*
 * Publish a spill's phase and its figures as they are now.  For pass and
 * npasses, see CompSpillActivitySlot.  act may be NULL.
 */
void
CompSpillActivityPublish(CompSpillActivity *act, CompSpillPhase phase,
						 int pass, int npasses)
{
	CompSpillActivitySlot *slot;
	const CompSpillStats *st;

	if (act == NULL || act->slot == NULL)
		return;
	slot = act->slot;
	st = act->st;

	compspill_slot_begin_write(slot);
	slot->phase = phase;
	slot->pass = pass;
	slot->npasses = npasses;
	slot->dio = st->dio_active;
	slot->runs = st->nruns;
	slot->rows = st->rows_spilled;
	slot->bytes_written = st->bytes_written;
	slot->bytes_read = st->bytes_read;
	slot->file_size = st->file_size;
	compspill_slot_end_write(slot);
}

/*
 * Copy a slot that its owner may be writing: retry until the copy is of
 * one consistent state.
 */
static void
compspill_slot_read(volatile CompSpillActivitySlot *slot,
					CompSpillActivitySlot *copy)
{
	for (;;)
	{
		uint32		before = slot->changecount;
		uint32		after;

		pg_read_barrier();
		memcpy(copy, (const void *) slot, sizeof(CompSpillActivitySlot));
		pg_read_barrier();
		after = slot->changecount;
		if (before == after && (before & 1) == 0)
			return;
		CHECK_FOR_INTERRUPTS();
	}
}

/* Describe a phase in words */
static char *
compspill_phase_name(const CompSpillActivitySlot *slot)
{
	switch (slot->phase)
	{
		case COMPSPILL_PHASE_READING_INPUT:
			return pstrdup("reading input");
		case COMPSPILL_PHASE_WRITING_RUN:
			return pstrdup("writing runs");
		case COMPSPILL_PHASE_MERGING:
			return psprintf("merging pass %d of %d", slot->pass,
							slot->npasses);
		case COMPSPILL_PHASE_RETURNING:
			return pstrdup("returning rows");
		case COMPSPILL_PHASE_STORING:
			return pstrdup("storing rows");
	}
	return pstrdup("unknown");
}

/*
 * SQL: one row per spill in progress in the cluster.  The query
 * identifier of another user's statement is shown only to roles with the
 * privileges of pg_read_all_stats, as pg_stat_activity does.
 */
Datum
compspill_activity(PG_FUNCTION_ARGS)
{
#define COMPSPILL_ACTIVITY_COLS 14
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		all_stats;
	int			nslots;

	CompSpillCheckPreloaded(compspill_slots);
	InitMaterializedSRF(fcinfo, 0);
	all_stats = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	nslots = compspill_activity_procs() * COMPSPILL_ACTIVITY_SLOTS;

	for (int i = 0; i < nslots; i++)
	{
		CompSpillActivitySlot slot;
		Datum		values[COMPSPILL_ACTIVITY_COLS];
		bool		nulls[COMPSPILL_ACTIVITY_COLS];
		int			c = 0;

		if (compspill_slots[i].pid == 0)
			continue;
		compspill_slot_read(&compspill_slots[i], &slot);
		if (slot.pid == 0)
			continue;

		memset(nulls, 0, sizeof(nulls));
		values[c++] = Int32GetDatum(slot.pid);
		values[c++] = ObjectIdGetDatum(slot.dbid);
		values[c++] = ObjectIdGetDatum(slot.userid);
		if (all_stats || slot.userid == GetUserId())
			values[c++] = Int64GetDatum((int64) slot.queryid);
		else
			nulls[c++] = true;
		values[c++] = CStringGetTextDatum(slot.node);
		values[c++] = CStringGetTextDatum(compspill_phase_name(&slot));
		values[c++] = TimestampTzGetDatum(slot.started);
		values[c++] = Int64GetDatum(slot.rows);
		values[c++] = Int32GetDatum(slot.runs);
		values[c++] = Int64GetDatum(slot.bytes_written);
		values[c++] = Int64GetDatum(slot.bytes_read);
		values[c++] = Int64GetDatum(slot.file_size);
		values[c++] = CStringGetTextDatum(CompSpillCodecName(slot.codec));
		values[c++] = BoolGetDatum(slot.dio);
		Assert(c == COMPSPILL_ACTIVITY_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	return (Datum) 0;
}
