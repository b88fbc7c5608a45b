/*-------------------------------------------------------------------------
 *
 * sortkeys.c
 *	  The sort keys of the CompSpill Sort and Incremental Sort nodes: kept
 *	  in the plan, read back, printed by EXPLAIN.
 *
 * A native Sort (and the Sort an IncrementalSort starts with) holds its
 * keys in four arrays: the output columns, the ordering operators, the
 * collations and the null placements.  The CompSpill nodes keep them in
 * custom_private as four lists at its head (a node adds its own items
 * after them), so that they survive copyObject and nodeToString, and read
 * them back at executor start into the CompSpillSortSpec their sorter is
 * made with.  EXPLAIN prints them from that spec as native prints a sort
 * node's keys.
 *
 * IDENTIFICATION
 *	  src/nodes/sortkeys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"

#include "base/compat.h"
#include "nodes/sortkeys.h"

/*
 * Return the sort's keys as the lists custom_private starts with.
 */
List *
CompSpillSortKeysPlan(Sort *sort)
{
	List	   *colidx = NIL;
	List	   *sortops = NIL;
	List	   *collations = NIL;
	List	   *nullsfirst = NIL;

	for (int i = 0; i < sort->numCols; i++)
	{
		colidx = lappend_int(colidx, sort->sortColIdx[i]);
		sortops = lappend_oid(sortops, sort->sortOperators[i]);
		collations = lappend_oid(collations, sort->collations[i]);
		nullsfirst = lappend_int(nullsfirst, sort->nullsFirst[i] ? 1 : 0);
	}
	return list_make4(colidx, sortops, collations, nullsfirst);
}

/*
 * Fill spec with keys first .. n-1 of the lists at the head of the node's
 * custom_private, and with the estimates of its child; no random access.
 */
void
CompSpillSortKeysRead(CustomScan *cscan, int first, CompSpillSortSpec *spec)
{
	List	   *colidx = linitial(cscan->custom_private);
	List	   *sortops = lsecond(cscan->custom_private);
	List	   *collations = lthird(cscan->custom_private);
	List	   *nullsfirst = lfourth(cscan->custom_private);
	int			n = list_length(colidx) - first;

	spec->nkeys = n;
	spec->attnums = palloc(sizeof(AttrNumber) * Max(n, 1));
	spec->sortops = palloc(sizeof(Oid) * Max(n, 1));
	spec->collations = palloc(sizeof(Oid) * Max(n, 1));
	spec->nulls_first = palloc(sizeof(bool) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		spec->attnums[i] = (AttrNumber) list_nth_int(colidx, first + i);
		spec->sortops[i] = list_nth_oid(sortops, first + i);
		spec->collations[i] = list_nth_oid(collations, first + i);
		spec->nulls_first[i] = list_nth_int(nullsfirst, first + i) != 0;
	}
	spec->est_rows = outerPlan(cscan)->plan_rows;
	spec->est_width = outerPlan(cscan)->plan_width;
	spec->random_access = false;
	spec->what = NULL;
}

/*
 * Print the first nkeys keys of spec under the given label ("Sort Key",
 * "Presorted Key") the way EXPLAIN prints a native sort node's: each key
 * deparsed against the node's targetlist, then, with order, its collation
 * when it is not the type's own, its direction or operator, and its null
 * placement when it is not the default for that direction.  Without order
 * (the presorted keys of an incremental sort), the expressions only, as
 * native prints them.
 */
void
CompSpillSortKeysExplain(const char *label, Plan *plan,
						 const CompSpillSortSpec *spec, int nkeys, bool order,
						 List *ancestors, ExplainState *es)
{
	List	   *context;
	List	   *keys = NIL;
	bool		useprefix;
	StringInfoData buf;

	if (nkeys <= 0)
		return;

	initStringInfo(&buf);
	context = set_deparse_context_plan(es->deparse_cxt, plan, ancestors);
	useprefix = (CompSpillExplainRtableSize(es) > 1 || es->verbose);

	for (int i = 0; i < nkeys; i++)
	{
		TargetEntry *tle = get_tle_by_resno(plan->targetlist,
											spec->attnums[i]);
		Oid			keytype;
		Oid			collation = spec->collations[i];
		Oid			sortop = spec->sortops[i];
		TypeCacheEntry *typentry;
		bool		reverse = false;

		if (tle == NULL)
			elog(ERROR, "no tlist entry for sort key %d", spec->attnums[i]);

		resetStringInfo(&buf);
		appendStringInfoString(&buf,
							   deparse_expression((Node *) tle->expr, context,
												  useprefix, true));

		if (!order)
		{
			keys = lappend(keys, pstrdup(buf.data));
			continue;
		}

		/* a collation other than the type's own is shown */
		keytype = exprType((Node *) tle->expr);
		if (OidIsValid(collation) && collation != get_typcollation(keytype))
		{
			char	   *collname = get_collation_name(collation);

			if (collname == NULL)
				elog(ERROR, "cache lookup failed for collation %u", collation);
			appendStringInfo(&buf, " COLLATE %s", quote_identifier(collname));
		}

		/* then the direction, or the operator when it is not < or > */
		typentry = lookup_type_cache(keytype,
									 TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
		if (sortop == typentry->gt_opr)
		{
			appendStringInfoString(&buf, " DESC");
			reverse = true;
		}
		else if (sortop != typentry->lt_opr)
		{
			char	   *opname = get_opname(sortop);

			if (opname == NULL)
				elog(ERROR, "cache lookup failed for operator %u", sortop);
			appendStringInfo(&buf, " USING %s", opname);
			(void) get_equality_op_for_ordering_op(sortop, &reverse);
		}

		/* and the null placement when it is not the default for that order */
		if (spec->nulls_first[i] && !reverse)
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!spec->nulls_first[i] && reverse)
			appendStringInfoString(&buf, " NULLS LAST");

		keys = lappend(keys, pstrdup(buf.data));
	}

	ExplainPropertyList(label, keys, es);
}
