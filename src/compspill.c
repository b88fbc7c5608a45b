/*-------------------------------------------------------------------------
 *
 * compspill.c
 *	  Module entry point: settings, the planner hook and the CustomScan
 *	  methods are set up here.
 *
 * Nothing in this file knows how a sort spills; it only wires the other
 * layers into the server.  The library can be loaded through
 * shared_preload_libraries, session_preload_libraries or LOAD; in every
 * case _PG_init runs once per backend (parallel workers included, since
 * they load the leader's libraries before reading the plan).
 *
 * IDENTIFICATION
 *	  src/compspill.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <lz4.h>
#include <zstd.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "base/settings.h"
#include "nodes/ctenode.h"
#include "nodes/incsortnode.h"
#include "nodes/materialnode.h"
#include "nodes/planner.h"
#include "nodes/recursivenode.h"
#include "nodes/sortnode.h"
#include "shared/activity.h"
#include "shared/devices.h"
#include "shared/stats.h"
#include "shared/workers.h"

COMPSPILL_MODULE_MAGIC(COMPSPILL_VERSION);

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

PG_FUNCTION_INFO_V1(compspill_version);

/*
 * Ask for the shared memory of the statistics, the live view, the
 * workers' figures and the devices' pace.
 */
static void
compspill_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	CompSpillStatsShmemRequest();
	CompSpillActivityShmemRequest();
	CompSpillWorkersShmemRequest();
	CompSpillDevicesShmemRequest();
}

/* Attach to that shared memory, creating it in the postmaster */
static void
compspill_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	CompSpillStatsShmemInit();
	CompSpillActivityShmemInit();
	CompSpillWorkersShmemInit();
	CompSpillDevicesShmemInit();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Define the settings, install the shared memory and planner hooks and
 * register the nodes.
 */
void
_PG_init(void)
{
	CompSpillDefineSettings();

	/* sizes shared memory: exists only where there is shared memory */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("compspill.max_statements",
								"Sets the number of statements compspill_statements keeps.",
								"The statements that spilled least often are evicted first.",
								&compspill_max_statements,
								5000,
								100, COMPSPILL_MAX_STATEMENTS,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("compspill.max_worker_figures",
								"Sets the number of parallel workers' node figures kept for EXPLAIN ANALYZE.",
								"Each node a leader's EXPLAIN ANALYZE watches takes one, and one per worker that ran it.",
								&compspill_max_worker_figures,
								COMPSPILL_WORKER_FIGURES_DEFAULT,
								1, COMPSPILL_MAX_WORKER_FIGURES,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);

	MarkGUCPrefixReserved("compspill");

	/* shared memory exists only when preloaded */
	if (process_shared_preload_libraries_in_progress)
	{
		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = compspill_shmem_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = compspill_shmem_startup;
	}

	CompSpillRegisterSortNode();
	CompSpillRegisterIncSortNode();
	CompSpillRegisterMaterialNode();
	CompSpillRegisterCteNode();
	CompSpillRegisterRecursiveNodes();
	CompSpillInstallPlannerHook();
}

/*
 * Return the library's version and the codec libraries it runs with.
 */
Datum
compspill_version(PG_FUNCTION_ARGS)
{
	char		buf[128];

	snprintf(buf, sizeof(buf), "compspill %s (lz4 %s, zstd %s)",
			 COMPSPILL_VERSION, LZ4_versionString(), ZSTD_versionString());
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}
