/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  What compspill shares and reports about spills outside EXPLAIN: the
 *	  cluster-wide cap on its temporary space, and the log line of
 *	  compspill.log_spills.
 *
 * The cap
 * -------
 *
 * temp_file_limit bounds one process; compspill.max_temp_space bounds all
 * of compspill's temporary files in the cluster at once.  Loaded from
 * shared_preload_libraries, compspill keeps the total size of its files in
 * one atomic counter in shared memory.  A spill file claims each extent it
 * adds at its end before writing it (extents reused inside the file claim
 * nothing), and the claim fails with SQLSTATE 53400, as temp_file_limit
 * does, when the total would pass the cap.  A file gives its claim back
 * when it is closed, and, when the query fails instead, when the memory
 * context it lives in is reset (every error path of the executor resets
 * it); a backend that exits gives back whatever it still holds.  The total
 * is readable with compspill_temp_space().
 *
 * Every operation that spilled (a sort, a Material's or a CTE's store)
 * reports its figures here once, when it ends: the same CompSpillStats
 * EXPLAIN ANALYZE prints.  compspill.log_spills works as log_temp_files
 * does: -1 logs nothing, 0 every spill, a size in kB only the spills that
 * wrote at least that much.  The line is a LOG message, so PostgreSQL adds
 * the statement under it as it does for log_temp_files.
 *
 * IDENTIFICATION
 *	  src/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "compspill.h"

/* What compspill keeps in shared memory */
typedef struct CompSpillShared
{
	pg_atomic_uint64 temp_space;	/* bytes of compspill temp files */
} CompSpillShared;

/*
 * What one spill file has claimed: allocated in the file's memory context,
 * apart from the file, so that the context's reset callback can give the
 * claim back after an error, when the file itself is long gone.
 */
struct CompSpillSpaceClaim
{
	int64		bytes;
	MemoryContextCallback cb;
};

static CompSpillShared *compspill_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* bytes this backend holds claimed, given back at exit */
static int64 compspill_backend_space = 0;
static bool compspill_exit_registered = false;
static bool compspill_cap_warned = false;

PG_FUNCTION_INFO_V1(compspill_temp_space);

/* Ask for compspill's shared memory */
static void
compspill_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(CompSpillShared)));
}

/* Attach to compspill's shared memory, creating it in the postmaster */
static void
compspill_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	compspill_shared = ShmemInitStruct("compspill", sizeof(CompSpillShared),
									   &found);
	if (!found)
		pg_atomic_init_u64(&compspill_shared->temp_space, 0);
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Install the shared memory hooks; only when loaded from
 * shared_preload_libraries.
 */
void
CompSpillInstallSharedHooks(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = compspill_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = compspill_shmem_startup;
}

/*
 * Give back bytes claimed.  Never more than the backend holds: at exit,
 * compspill_space_at_exit gives everything back before the transaction's
 * abort resets the files' memory contexts, whose callbacks then find
 * nothing left to give.
 */
static void
compspill_space_release(int64 bytes)
{
	bytes = Min(bytes, compspill_backend_space);
	if (bytes <= 0 || compspill_shared == NULL)
		return;
	pg_atomic_sub_fetch_u64(&compspill_shared->temp_space, (uint64) bytes);
	compspill_backend_space -= bytes;
}

/* Give back what the backend still holds, at exit */
static void
compspill_space_at_exit(int code pg_attribute_unused(),
						Datum arg pg_attribute_unused())
{
	compspill_space_release(compspill_backend_space);
}

/* A spill file's memory context is reset: give its claim back */
static void
compspill_claim_reset(void *arg)
{
	CompSpillSpaceClaim *claim = (CompSpillSpaceClaim *) arg;

	compspill_space_release(claim->bytes);
	claim->bytes = 0;
}

/*
 * Make the claim of a new spill file, in CurrentMemoryContext, which must
 * be the file's.
 */
CompSpillSpaceClaim *
CompSpillSpaceClaimCreate(void)
{
	CompSpillSpaceClaim *claim = palloc0(sizeof(CompSpillSpaceClaim));

	claim->cb.func = compspill_claim_reset;
	claim->cb.arg = claim;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &claim->cb);
	return claim;
}

/*
 * Claim bytes more for a spill file that grows, or fail if that would take
 * compspill's temporary files in the cluster past compspill.max_temp_space.
 */
void
CompSpillSpaceGrow(CompSpillSpaceClaim *claim, Size bytes)
{
	uint64		total;

	if (compspill_shared == NULL)
	{
		if (compspill_max_temp_space >= 0 && !compspill_cap_warned)
		{
			compspill_cap_warned = true;
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("compspill.max_temp_space is not enforced"),
					 errhint("Add compspill to shared_preload_libraries.")));
		}
		return;
	}

	if (!compspill_exit_registered)
	{
		before_shmem_exit(compspill_space_at_exit, (Datum) 0);
		compspill_exit_registered = true;
	}

	total = pg_atomic_add_fetch_u64(&compspill_shared->temp_space,
									(uint64) bytes);
	if (compspill_max_temp_space >= 0 &&
		total > (uint64) compspill_max_temp_space * 1024)
	{
		pg_atomic_sub_fetch_u64(&compspill_shared->temp_space, (uint64) bytes);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("compspill temporary files would exceed compspill.max_temp_space (%dkB)",
						compspill_max_temp_space),
				 errdetail("compspill temporary files in the cluster hold %llukB, and this one needs %zukB more.",
						   (unsigned long long) ((total - bytes) / 1024),
						   (bytes + 1023) / 1024)));
	}
	claim->bytes += bytes;
	compspill_backend_space += bytes;
}

/*
 * Give back everything a spill file claimed: it is closed.
 */
void
CompSpillSpaceDone(CompSpillSpaceClaim *claim)
{
	compspill_space_release(claim->bytes);
	claim->bytes = 0;
}

/*
 * SQL: the bytes of compspill temporary files in the cluster now.
 */
Datum
compspill_temp_space(PG_FUNCTION_ARGS)
{
	if (compspill_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("compspill is not loaded from shared_preload_libraries"),
				 errhint("Add compspill to shared_preload_libraries and restart the server.")));
	PG_RETURN_INT64((int64) pg_atomic_read_u64(&compspill_shared->temp_space));
}

/* Round a byte count up to kB */
static inline long long
compspill_stats_kb(int64 bytes)
{
	return (long long) ((bytes + 1023) / 1024);
}

/*
 * Report the figures of an operation that spilled, now that it ends; what
 * names the node ("sort", "material", "CTE").
 */
void
CompSpillReportSpill(const char *what, const CompSpillStats *st)
{
	double		ratio;

	if (compspill_log_spills < 0 ||
		st->bytes_written < (int64) compspill_log_spills * 1024)
		return;

	ratio = st->bytes_written_runs > 0 ?
		(double) st->bytes_in / (double) st->bytes_written_runs : 0.0;
	ereport(LOG,
			(errmsg("compspill %s spill: " INT64_FORMAT " rows, %d runs, %d merge passes, %lld kB before encoding, %lld kB written (ratio %.2f), file peak %lld kB, memory peak %lld kB",
					what, st->rows_spilled, st->nruns, st->merge_passes,
					compspill_stats_kb(st->bytes_in),
					compspill_stats_kb(st->bytes_written), ratio,
					compspill_stats_kb(st->file_size),
					compspill_stats_kb(st->peak_mem)),
			 errdetail("Codec %s: frames none=" INT64_FORMAT ", lz4=" INT64_FORMAT ", zstd=" INT64_FORMAT ", stored raw=" INT64_FORMAT "; direct I/O %s; write %.3f ms, read %.3f ms.",
					   CompSpillCodecName(st->codec),
					   st->frames_by_codec[COMPSPILL_CODEC_NONE],
					   st->frames_by_codec[COMPSPILL_CODEC_LZ4],
					   st->frames_by_codec[COMPSPILL_CODEC_ZSTD],
					   st->frames_raw,
					   st->dio_active ? "on" : "off",
					   INSTR_TIME_GET_MILLISEC(st->write_time),
					   INSTR_TIME_GET_MILLISEC(st->read_time))));
}
