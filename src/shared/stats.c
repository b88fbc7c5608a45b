/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  What compspill shares and reports about spills outside EXPLAIN: its
 *	  shared memory, the cumulative statistics per database and per
 *	  statement, the cluster-wide cap on its temporary space, and the log
 *	  line of compspill.log_spills.  The live view is in activity.c.
 *
 * Cumulative statistics
 * ---------------------
 *
 * Every operation that spilled (a sort, a Material's or a CTE's store)
 * reports its figures here once, when it ends: the same CompSpillStats
 * EXPLAIN ANALYZE prints.  Loaded from shared_preload_libraries, compspill
 * adds them to two hash tables in shared memory under one lock: one entry
 * per database (compspill_stats) and one per (user, database, query
 * identifier) (compspill_statements, joined to pg_stat_statements on those
 * columns; only statements with a query identifier, so compute_query_id
 * must be on, or auto with pg_stat_statements loaded).  The statements
 * table holds compspill.max_statements entries (at most a million); when
 * it is full, the twentieth of them that spilled least often (the least
 * recently among equals), and at least ten, is evicted, as
 * pg_stat_statements does, so that the sort this takes under the lock is
 * paid once per so many new statements.  A spill reports once per operation, so the lock is
 * taken once per spill, never per row.  Parallel workers report their own
 * spills, under the leader's statement.  A spill that fails is not counted.
 * compspill_stats_reset() empties both tables.  The figures live as long
 * as the server: a restart starts them again.
 *
 * The cap
 * -------
 *
 * temp_file_limit bounds one process; compspill.max_temp_space bounds all
 * of compspill's temporary files in the cluster at once.  compspill keeps
 * the total size of its files in one atomic counter in shared memory.  A
 * spill file claims each extent it adds at its end before writing it
 * (extents reused inside the file claim nothing), and the claim fails with
 * SQLSTATE 53400, as temp_file_limit does, when the total would pass the
 * cap.  A claim is a compare-and-swap of the total to a value within the
 * cap, never an add that is taken back: the total never passes the cap,
 * and of two spills near it the one that fits gets its claim.  (Not
 * tested: the race needs two backends to claim between each other's read
 * and write of the counter, which no test can time without an injection
 * point in the middle of the claim.)  A file gives its claim back when
 * it is closed, and, when the query fails instead, when the memory context it lives in is reset (every error
 * path of the executor resets it); a backend that exits gives back
 * whatever it still holds.  The total is readable with
 * compspill_temp_space().
 *
 * The log line
 * ------------
 *
 * compspill.log_spills works as log_temp_files does: -1 logs nothing, 0
 * every spill, a size in kB only the spills that wrote at least that much.
 * The line is a LOG message, so PostgreSQL adds the statement under it as
 * it does for log_temp_files.
 *
 * IDENTIFICATION
 *	  src/shared/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "base/settings.h"
#include "base/spillstats.h"
#include "shared/stats.h"

/* entries of the per-database table */
#define COMPSPILL_MAX_DATABASES		256

/* fewest entries evicted at once from a full table, as pg_stat_statements */
#define COMPSPILL_MIN_EVICT			10

/* Cumulative figures of the spills of a database or of a statement */
typedef struct CompSpillCounters
{
	int64		spills;			/* operations that spilled */
	int64		runs;
	int64		merge_passes;
	int64		rows_spilled;
	int64		raw_bytes;		/* in-memory size of the spilled rows */
	int64		written_bytes;
	int64		read_bytes;
	double		write_time_ms;
	double		read_time_ms;
	int64		peak_file_bytes;	/* largest file of any one spill */
} CompSpillCounters;

/*
 * Key of both tables: a statement's, or a database's with userid and
 * queryid 0.  No padding, so it hashes as bytes.
 */
typedef struct CompSpillStatKey
{
	Oid			userid;
	Oid			dbid;
	uint64		queryid;
} CompSpillStatKey;

typedef struct CompSpillStatEntry
{
	CompSpillStatKey key;		/* must be first */
	CompSpillCounters c;
	uint64		last_used;		/* the shared clock at its last spill */
} CompSpillStatEntry;

/* What compspill keeps in shared memory, besides the tables */
typedef struct CompSpillShared
{
	pg_atomic_uint64 temp_space;	/* bytes of compspill temp files */
	LWLock	   *lock;			/* protects the rest and both tables */
	uint64		clock;			/* advances at every spill counted */
	TimestampTz stats_reset;	/* when the tables were last emptied */
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

int			compspill_max_statements = 5000;

static CompSpillShared *compspill_shared = NULL;
static HTAB *compspill_db_table = NULL;
static HTAB *compspill_stmt_table = NULL;

/* bytes this backend holds claimed, given back at exit */
static int64 compspill_backend_space = 0;
static bool compspill_exit_registered = false;
static bool compspill_cap_warned = false;

PG_FUNCTION_INFO_V1(compspill_temp_space);
PG_FUNCTION_INFO_V1(compspill_stats);
PG_FUNCTION_INFO_V1(compspill_statements);
PG_FUNCTION_INFO_V1(compspill_stats_reset);

/*
 * Ask for the statistics' shared memory and its lock; from the shared
 * memory request hook.
 */
void
CompSpillStatsShmemRequest(void)
{
	Size		size = MAXALIGN(sizeof(CompSpillShared));

	size = add_size(size, hash_estimate_size(COMPSPILL_MAX_DATABASES,
											 sizeof(CompSpillStatEntry)));
	size = add_size(size, hash_estimate_size(compspill_max_statements,
											 sizeof(CompSpillStatEntry)));
	RequestAddinShmemSpace(size);
	RequestNamedLWLockTranche("compspill", 1);
}

/* Attach to one of the statistics tables, creating it in the postmaster */
static HTAB *
compspill_table_init(const char *name, int nentries)
{
	HASHCTL		info;

	info.keysize = sizeof(CompSpillStatKey);
	info.entrysize = sizeof(CompSpillStatEntry);
	return ShmemInitHash(name, nentries, nentries, &info,
						 HASH_ELEM | HASH_BLOBS);
}

/*
 * Attach to the statistics' shared memory, creating it in the postmaster.
 * The caller holds AddinShmemInitLock.
 */
void
CompSpillStatsShmemInit(void)
{
	bool		found;

	compspill_shared = ShmemInitStruct("compspill", sizeof(CompSpillShared),
									   &found);
	if (!found)
	{
		pg_atomic_init_u64(&compspill_shared->temp_space, 0);
		compspill_shared->lock = &(GetNamedLWLockTranche("compspill"))->lock;
		compspill_shared->clock = 0;
		compspill_shared->stats_reset = GetCurrentTimestamp();
	}
	compspill_db_table = compspill_table_init("compspill databases",
											  COMPSPILL_MAX_DATABASES);
	compspill_stmt_table = compspill_table_init("compspill statements",
												compspill_max_statements);
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
	uint64		old;

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

	/*
	 * Claim with compare-and-swap: the total only ever moves to a value
	 * within the cap, so two spills near the cap cannot both fail where
	 * one would fit, and the total never passes the cap, not even for a
	 * moment.  A failed exchange leaves the current total in old.
	 */
	old = pg_atomic_read_u64(&compspill_shared->temp_space);
	for (;;)
	{
		uint64		total = old + (uint64) bytes;

		if (compspill_max_temp_space >= 0 &&
			total > (uint64) compspill_max_temp_space * 1024)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("compspill temporary files would exceed compspill.max_temp_space (%dkB)",
							compspill_max_temp_space),
					 errdetail("compspill temporary files in the cluster hold %llukB, and this one needs %zukB more.",
							   (unsigned long long) (old / 1024),
							   (bytes + 1023) / 1024)));
		if (pg_atomic_compare_exchange_u64(&compspill_shared->temp_space,
										   &old, total))
			break;
	}
	claim->bytes += bytes;
	compspill_backend_space += bytes;
}

/*
 * Set *backend to the bytes of compspill temp files this backend holds and
 * *cluster to those of the whole cluster; false (both zero) when compspill
 * is not in shared_preload_libraries, where nothing is counted.
 */
bool
CompSpillSpaceHeld(int64 *backend, int64 *cluster)
{
	*backend = 0;
	*cluster = 0;
	if (compspill_shared == NULL)
		return false;
	*backend = compspill_backend_space;
	*cluster = (int64) pg_atomic_read_u64(&compspill_shared->temp_space);
	return true;
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
	CompSpillCheckPreloaded(compspill_shared);
	PG_RETURN_INT64((int64) pg_atomic_read_u64(&compspill_shared->temp_space));
}

/* Order entries by how often they spilled, then by when they last did */
static int
compspill_entry_cmp(const void *a, const void *b)
{
	const CompSpillStatEntry *ea = *(CompSpillStatEntry *const *) a;
	const CompSpillStatEntry *eb = *(CompSpillStatEntry *const *) b;

	if (ea->c.spills != eb->c.spills)
		return ea->c.spills < eb->c.spills ? -1 : 1;
	if (ea->last_used != eb->last_used)
		return ea->last_used < eb->last_used ? -1 : 1;
	return 0;
}

/*
 * Make room in a full table: evict the twentieth of its entries that
 * spilled least often, and at least COMPSPILL_MIN_EVICT, as
 * pg_stat_statements' entry_dealloc does, so that the work below, a pass
 * over the table and a sort of pointers to its entries, is done once per
 * that many new statements rather than at each.  The caller holds the
 * lock exclusively.  The table has at most COMPSPILL_MAX_STATEMENTS
 * entries (compspill.max_statements' maximum), so the array stays a few
 * megabytes; if even that cannot be had, entries are evicted in the
 * table's own order rather than failing a query that has already run.
 */
static void
compspill_table_evict(HTAB *table, int nentries)
{
	HASH_SEQ_STATUS seq;
	CompSpillStatEntry **entries;
	CompSpillStatEntry *entry;
	long		total = hash_get_num_entries(table);
	int			n = 0;
	int			nevict;

	Assert(total <= COMPSPILL_MAX_STATEMENTS);
	nevict = Min(Max(nentries / 20, COMPSPILL_MIN_EVICT), (int) total);

	entries = palloc_extended(sizeof(CompSpillStatEntry *) * Max(total, 1),
							  MCXT_ALLOC_NO_OOM);
	if (entries == NULL)
	{
		/* no memory to choose: take the first ones the scan meets */
		hash_seq_init(&seq, table);
		while ((entry = hash_seq_search(&seq)) != NULL)
		{
			hash_search(table, &entry->key, HASH_REMOVE, NULL);
			if (++n >= nevict)
			{
				hash_seq_term(&seq);
				break;
			}
		}
		return;
	}

	hash_seq_init(&seq, table);
	while ((entry = hash_seq_search(&seq)) != NULL)
		entries[n++] = entry;
	qsort(entries, n, sizeof(CompSpillStatEntry *), compspill_entry_cmp);

	nevict = Min(nevict, n);
	for (int i = 0; i < nevict; i++)
		hash_search(table, &entries[i]->key, HASH_REMOVE, NULL);
	pfree(entries);
}

/*
 * Add the figures of a spill to the entry of key in table, which holds at
 * most nentries.  The caller holds the lock exclusively.
 */
static void
compspill_table_count(HTAB *table, int nentries, const CompSpillStatKey *key,
					  const CompSpillStats *st)
{
	CompSpillStatEntry *entry;
	bool		found;

	entry = hash_search(table, key, HASH_FIND, NULL);
	if (entry == NULL)
	{
		if (hash_get_num_entries(table) >= nentries)
			compspill_table_evict(table, nentries);
		entry = hash_search(table, key, HASH_ENTER, &found);
		Assert(!found);
		memset(&entry->c, 0, sizeof(entry->c));
	}

	entry->c.spills++;
	entry->c.runs += st->nruns;
	entry->c.merge_passes += st->merge_passes;
	entry->c.rows_spilled += st->rows_spilled;
	entry->c.raw_bytes += st->bytes_in;
	entry->c.written_bytes += st->bytes_written;
	entry->c.read_bytes += st->bytes_read;
	entry->c.write_time_ms += INSTR_TIME_GET_MILLISEC(st->write_time);
	entry->c.read_time_ms += INSTR_TIME_GET_MILLISEC(st->read_time);
	entry->c.peak_file_bytes = Max(entry->c.peak_file_bytes, st->file_size);
	entry->last_used = ++compspill_shared->clock;
}

/*
 * Add the figures of a spill that ends to its database's and its
 * statement's entries.
 */
static void
compspill_count_spill(const CompSpillStats *st)
{
	CompSpillStatKey key;

	if (compspill_shared == NULL)
		return;

	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;

	LWLockAcquire(compspill_shared->lock, LW_EXCLUSIVE);
	compspill_table_count(compspill_db_table, COMPSPILL_MAX_DATABASES,
						  &key, st);
	if (st->queryid != UINT64CONST(0))
	{
		key.userid = GetUserId();
		key.queryid = st->queryid;
		compspill_table_count(compspill_stmt_table, compspill_max_statements,
							  &key, st);
	}
	LWLockRelease(compspill_shared->lock);
}

/* Number of columns of CompSpillCounters in the SQL functions */
#define COMPSPILL_COUNTER_COLS	10

/* Put the counters in values, from index c on; return the next index */
static int
compspill_counters_values(const CompSpillCounters *cnt, Datum *values, int c)
{
	values[c++] = Int64GetDatum(cnt->spills);
	values[c++] = Int64GetDatum(cnt->runs);
	values[c++] = Int64GetDatum(cnt->merge_passes);
	values[c++] = Int64GetDatum(cnt->rows_spilled);
	values[c++] = Int64GetDatum(cnt->raw_bytes);
	values[c++] = Int64GetDatum(cnt->written_bytes);
	values[c++] = Int64GetDatum(cnt->read_bytes);
	values[c++] = Float8GetDatum(cnt->write_time_ms);
	values[c++] = Float8GetDatum(cnt->read_time_ms);
	values[c++] = Int64GetDatum(cnt->peak_file_bytes);
	return c;
}

/*
 * SQL: the cumulative figures of each database's spills.
 */
Datum
compspill_stats(PG_FUNCTION_ARGS)
{
#define COMPSPILL_STATS_COLS (COMPSPILL_COUNTER_COLS + 2)
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	CompSpillStatEntry *entry;
	TimestampTz reset;

	CompSpillCheckPreloaded(compspill_shared);
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(compspill_shared->lock, LW_SHARED);
	reset = compspill_shared->stats_reset;
	hash_seq_init(&seq, compspill_db_table);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[COMPSPILL_STATS_COLS];
		bool		nulls[COMPSPILL_STATS_COLS] = {0};
		int			c = 0;

		values[c++] = ObjectIdGetDatum(entry->key.dbid);
		c = compspill_counters_values(&entry->c, values, c);
		values[c++] = TimestampTzGetDatum(reset);
		Assert(c == COMPSPILL_STATS_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	LWLockRelease(compspill_shared->lock);
	return (Datum) 0;
}

/*
 * SQL: the cumulative figures of each statement's spills.  The query
 * identifier of another user's statements is shown only to roles with the
 * privileges of pg_read_all_stats, as pg_stat_statements does.
 */
Datum
compspill_statements(PG_FUNCTION_ARGS)
{
#define COMPSPILL_STATEMENTS_COLS (COMPSPILL_COUNTER_COLS + 3)
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	CompSpillStatEntry *entry;
	Oid			userid = GetUserId();
	bool		all_stats;

	CompSpillCheckPreloaded(compspill_shared);
	InitMaterializedSRF(fcinfo, 0);
	all_stats = has_privs_of_role(userid, ROLE_PG_READ_ALL_STATS);

	LWLockAcquire(compspill_shared->lock, LW_SHARED);
	hash_seq_init(&seq, compspill_stmt_table);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[COMPSPILL_STATEMENTS_COLS];
		bool		nulls[COMPSPILL_STATEMENTS_COLS] = {0};
		int			c = 0;

		values[c++] = ObjectIdGetDatum(entry->key.userid);
		values[c++] = ObjectIdGetDatum(entry->key.dbid);
		if (all_stats || entry->key.userid == userid)
			values[c++] = Int64GetDatum((int64) entry->key.queryid);
		else
			nulls[c++] = true;
		c = compspill_counters_values(&entry->c, values, c);
		Assert(c == COMPSPILL_STATEMENTS_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	LWLockRelease(compspill_shared->lock);
	return (Datum) 0;
}

/* Remove every entry of a table; the caller holds the lock exclusively */
static void
compspill_table_clear(HTAB *table)
{
	HASH_SEQ_STATUS seq;
	CompSpillStatEntry *entry;

	hash_seq_init(&seq, table);
	while ((entry = hash_seq_search(&seq)) != NULL)
		hash_search(table, &entry->key, HASH_REMOVE, NULL);
}

/*
 * SQL: empty both statistics tables and note the time.
 */
Datum
compspill_stats_reset(PG_FUNCTION_ARGS)
{
	CompSpillCheckPreloaded(compspill_shared);

	LWLockAcquire(compspill_shared->lock, LW_EXCLUSIVE);
	compspill_table_clear(compspill_db_table);
	compspill_table_clear(compspill_stmt_table);
	compspill_shared->stats_reset = GetCurrentTimestamp();
	LWLockRelease(compspill_shared->lock);
	PG_RETURN_VOID();
}

/* Round a byte count up to kB */
static inline long long
compspill_stats_kb(int64 bytes)
{
	return (long long) ((bytes + 1023) / 1024);
}

/*
 * Report the figures of an operation that spilled, now that it ends: count
 * them, and log them if asked to; what names the node ("sort",
 * "incremental sort", "material", "CTE", "recursive union").
 */
void
CompSpillReportSpill(const char *what, const CompSpillStats *st)
{
	double		ratio;

	compspill_count_spill(st);

	/* in the whole kB the line shows (runs' last pages are not padded) */
	if (compspill_log_spills < 0 ||
		compspill_stats_kb(st->bytes_written) < compspill_log_spills)
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
			 errdetail("Codec %s: frames none=" INT64_FORMAT ", lz4=" INT64_FORMAT ", zstd=" INT64_FORMAT ", stored raw=" INT64_FORMAT "; direct I/O %s; encryption %s; write %.3f ms, read %.3f ms.",
					   CompSpillCodecName(st->codec),
					   st->frames_by_codec[COMPSPILL_CODEC_NONE],
					   st->frames_by_codec[COMPSPILL_CODEC_LZ4],
					   st->frames_by_codec[COMPSPILL_CODEC_ZSTD],
					   st->frames_raw,
					   CompSpillDirectIOName(st),
					   CompSpillEncryptionName(st->encrypted),
					   INSTR_TIME_GET_MILLISEC(st->write_time),
					   INSTR_TIME_GET_MILLISEC(st->read_time))));
}
