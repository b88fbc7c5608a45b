/*-------------------------------------------------------------------------
 *
 * sorter_test.c
 *	  Unit tests of the sorter.
 *
 * The array growth (CompSpillGrowArraySize): it doubles, stops at INT_MAX
 * entries and below MaxAllocHugeSize bytes, and never shrinks, at sizes no
 * test machine can hold in memory.
 *
 * The reset of a sort on the datum path (CompSpillSorterReset): after a
 * batch sorted in memory and after one that spilled, the next batch gives
 * back its own values and NULLs, no more.  sorter.c is linked with the
 * layers under it faked (sorter_stubs.c): its runs are arrays in memory.
 *
 * IDENTIFICATION
 *	  test/unit/sorter_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdio.h>
#include <string.h>

#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "utils/memutils.h"

#include "base/settings.h"
#include "pgstubs.h"
#include "sort/sorter.h"

/* the libc printf, not the server's (there is no server here) */
#undef printf
#undef snprintf

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
		/* before a later check may crash */
		fflush(stdout);
	}
}

/*
 * Start a sort of one int8 column on itself, ascending, NULLs last: the
 * datum path.  The plan expects est_rows rows.
 */
static CompSpillSorter *
datum_sorter_begin(TupleDesc desc, double est_rows)
{
	static AttrNumber attnums[1] = {1};
	static Oid	sortops[1] = {1};	/* the fake sort support takes any */
	static Oid	collations[1] = {InvalidOid};
	static bool nulls_first[1] = {false};
	CompSpillSortSpec spec;
	CompSpillSettings set;

	memset(&spec, 0, sizeof(spec));
	spec.nkeys = 1;
	spec.attnums = attnums;
	spec.sortops = sortops;
	spec.collations = collations;
	spec.nulls_first = nulls_first;
	spec.est_rows = est_rows;
	spec.est_width = 8;
	memset(&set, 0, sizeof(set));
	set.codec = COMPSPILL_CODEC_NONE;
	return CompSpillSorterBegin(desc, &spec, 64, &set);
}

/*
 * Put n values, the i-th (first + i * step) % mod (a permutation of 0 to
 * n - 1 when step and mod = n are coprime), then nnulls NULLs.
 */
static void
datum_put(CompSpillSorter *s, TupleTableSlot *in, int64 n, int64 first,
		  int64 step, int64 mod, int nnulls)
{
	for (int64 i = 0; i < n + nnulls; i++)
	{
		ExecClearTuple(in);
		in->tts_isnull[0] = i >= n;
		in->tts_values[0] = Int64GetDatum(i >= n ? 0 : (first + i * step) % mod);
		ExecStoreVirtualTuple(in);
		CompSpillSorterPut(s, in);
	}
}

/*
 * Read the sorted batch back and check it: nvalues values in ascending
 * order from lo to hi, then nnulls NULLs, and no more rows.
 */
static void
datum_check(CompSpillSorter *s, const char *name, int64 nvalues, int64 lo,
			int64 hi, int64 nnulls)
{
	TupleTableSlot *slot;
	int64		rows = 0;
	int64		values = 0;
	int64		nulls = 0;
	int64		prev = PG_INT64_MIN;
	int64		first = 0;
	int64		last = 0;
	bool		ordered = true;
	bool		nulls_last = true;
	char		what[128];

	CompSpillSorterFinish(s);
	while ((slot = CompSpillSorterGet(s, true)) != NULL)
	{
		rows++;
		if (slot->tts_isnull[0])
		{
			nulls++;
			continue;
		}
		if (nulls > 0)
			nulls_last = false;
		last = DatumGetInt64(slot->tts_values[0]);
		if (values == 0)
			first = last;
		if (last < prev)
			ordered = false;
		prev = last;
		values++;
	}
	snprintf(what, sizeof(what), "%s: rows", name);
	check(rows == nvalues + nnulls, what, rows, nvalues + nnulls);
	snprintf(what, sizeof(what), "%s: values", name);
	check(values == nvalues, what, values, nvalues);
	snprintf(what, sizeof(what), "%s: NULLs", name);
	check(nulls == nnulls, what, nulls, nnulls);
	snprintf(what, sizeof(what), "%s: ascending", name);
	check(ordered, what, ordered, true);
	snprintf(what, sizeof(what), "%s: NULLs last", name);
	check(nulls_last, what, nulls_last, true);
	snprintf(what, sizeof(what), "%s: smallest value", name);
	check(values == 0 || first == lo, what, first, lo);
	snprintf(what, sizeof(what), "%s: largest value", name);
	check(values == 0 || last == hi, what, last, hi);
}

/*
 * Sort batches on the datum path in one sorter, reset between them, as an
 * incremental sort does with its groups: each batch must give back only
 * its own rows, whether the batch before it was sorted in memory or
 * spilled (and so freed the array of values).
 */
static void
test_datum_reset(void)
{
	TupleDesc	desc = calloc(1, CompSpillTupleDescSize(1));
	Form_pg_attribute attr;
	TupleTableSlot *in;
	CompSpillSorter *s;

	desc->natts = 1;
	attr = TupleDescAttr(desc, 0);
	attr->attnum = 1;
	attr->attlen = 8;
	attr->attbyval = true;
	attr->attalign = TYPALIGN_DOUBLE;
	attr->attstorage = TYPSTORAGE_PLAIN;
	attr->atttypid = INT8OID;
	in = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);

	/* in memory, then in memory (0..99 and 3 NULLs, 0..49 and one NULL) */
	s = datum_sorter_begin(desc, 100);
	datum_put(s, in, 100, 0, 37, 100, 3);
	datum_check(s, "in memory", 100, 0, 99, 3);
	check(!CompSpillSorterSpilled(s), "in memory: did not spill", 1, 0);
	CompSpillSorterReset(s);
	datum_put(s, in, 50, 0, 7, 50, 1);
	datum_check(s, "in memory after in memory", 50, 0, 49, 1);
	CompSpillSorterReset(s);
	datum_put(s, in, 20, 0, 3, 20, 0);
	datum_check(s, "in memory after NULLs", 20, 0, 19, 0);
	CompSpillSorterEnd(s);

	/* spilled, then in memory, then spilled, then in memory */
	s = datum_sorter_begin(desc, 20000);
	datum_put(s, in, 20000, 0, 7919, 20000, 5);
	datum_check(s, "spilled", 20000, 0, 19999, 5);
	check(CompSpillSorterSpilled(s), "spilled: spilled", 0, 1);
	CompSpillSorterReset(s);
	datum_put(s, in, 30, 0, 7, 30, 2);
	datum_check(s, "in memory after spilled", 30, 0, 29, 2);
	CompSpillSorterReset(s);
	datum_put(s, in, 10000, 0, 7919, 10000, 0);
	datum_check(s, "spilled after in memory", 10000, 0, 9999, 0);
	CompSpillSorterReset(s);
	datum_put(s, in, 10000, 0, 7919, 10000, 4);
	datum_check(s, "spilled after spilled", 10000, 0, 9999, 4);
	CompSpillSorterReset(s);
	datum_put(s, in, 10, 0, 3, 10, 0);
	datum_check(s, "in memory after spilled twice", 10, 0, 9, 0);
	CompSpillSorterEnd(s);

	ExecDropSingleTupleTableSlot(in);
	free(desc);
	pgstubs_free_all();
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

	test_datum_reset();

	printf("sorter unit: %d passed, %d failed\n", npassed, nfailed);
	return nfailed == 0 ? 0 : 1;
}
