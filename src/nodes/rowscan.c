/*-------------------------------------------------------------------------
 *
 * rowscan.c
 *	  A scan node over rows a compspill node keeps: what the CTE Scan and
 *	  the WorkTable Scan share, their plan's scan tuple, their start, scan,
 *	  EvalPlanQual rechecks and EXPLAIN.
 *
 * A native CTE Scan or WorkTable Scan names its range table entry in
 * scanrelid.  Its compspill replacement cannot (ExecInitCustomScan would
 * open the entry as a table), so it is a CustomScan with scanrelid 0 whose
 * custom_scan_tlist lists the entry's columns as Vars of the entry, and
 * whose targetlist and quals refer to those as INDEX_VAR, as setrefs.c
 * makes any CustomScan's.  EXPLAIN VERBOSE deparses them through
 * custom_scan_tlist to the entry's column names, as it does native's.  A
 * whole-row Var of the entry (the row an UPDATE's rowmark keeps of a CTE,
 * a CTE passed as a record) has no column there, so when the expressions
 * use one, custom_scan_tlist ends with a whole-row Var of the entry, and
 * the node makes that column of each scan tuple from the row it read.
 *
 * EvalPlanQual.  When a row an UPDATE, DELETE, MERGE or SELECT FOR
 * UPDATE/SHARE wants was changed by a transaction that committed
 * meanwhile, the executor runs the plan below the ModifyTable or LockRows
 * once more over the new version of that row and the rows the other
 * relations of the join had contributed.  Each scan of a range table entry
 * then returns, once, the row it is given in place of scanning: the test
 * row the recheck's caller sets for the entry, else the copy its rowmark
 * kept (a CTE's rows are kept as whole-row values in the plan's junk
 * columns).  ExecScanFetch does that for scans that name their entry; for
 * a scan with scanrelid 0 it leaves the whole recheck to the node's
 * recheck method, which must put the substitute row in the scan slot
 * itself.  compspill_rowscan_recheck does for the node's entry what
 * ExecScanFetch does for a scan naming it; where the recheck has no row
 * for the entry (a scan in a SubPlan: its entry has no rowmark), the scan
 * reads on as it would outside a recheck.
 *
 * IDENTIFICATION
 *	  src/nodes/rowscan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"

#include "base/compat.h"
#include "nodes/rowscan.h"

/* What the rewrite of a scan's expressions needs */
typedef struct CompSpillRowScanRefs
{
	Index		rti;
	AttrNumber	wholerow_attno; /* the whole row's column, once it has one */
	List	   *columns;		/* custom_scan_tlist being made */
} CompSpillRowScanRefs;

/*
 * Refer to the entry's columns as INDEX_VAR, giving a whole-row Var a
 * column of its own at the end of the scan tuple.
 */
static Node *
compspill_rowscan_refs(Node *node, CompSpillRowScanRefs *refs)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;
		Var		   *newvar;

		if (var->varno != (int) refs->rti || var->varlevelsup != 0)
			elog(ERROR, "unexpected Var %d.%d in a compspill scan of entry %u",
				 var->varno, var->varattno, refs->rti);
		if (var->varattno < 0)
			elog(ERROR, "system column in a compspill scan of entry %u",
				 refs->rti);
		newvar = copyObject(var);
		newvar->varno = INDEX_VAR;
		if (var->varattno == 0)
		{
			if (refs->wholerow_attno == InvalidAttrNumber)
			{
				Var		   *row = copyObject(var);

				refs->wholerow_attno = list_length(refs->columns) + 1;
				refs->columns = lappend(refs->columns,
										makeTargetEntry((Expr *) row,
														refs->wholerow_attno,
														NULL, false));
			}
			newvar->varattno = refs->wholerow_attno;
		}
		return (Node *) newvar;
	}
	return expression_tree_mutator(node, compspill_rowscan_refs, refs);
}

/*
 * Make cscan, which takes the place of a native scan of range table entry
 * rti, a scan of the columns source_tlist (the targetlist of the plan
 * whose rows it reads) returns, leaving out its resjunk columns at the
 * end: a Var of the entry for each, numbered from 1, become its
 * custom_scan_tlist, with the whole row after them where the scan's
 * expressions use it, and its targetlist and quals refer to them.  Return
 * false, leaving cscan as it is, if a resjunk column comes before a column
 * the plan returns.
 */
bool
CompSpillRowScanPlan(CustomScan *cscan, Index rti, List *source_tlist)
{
	CompSpillRowScanRefs refs;
	List	   *columns = NIL;
	bool		seen_junk = false;
	ListCell   *lc;

	foreach(lc, source_tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Node	   *expr = (Node *) tle->expr;
		Var		   *var;

		if (tle->resjunk)
		{
			seen_junk = true;
			continue;
		}
		if (seen_junk)
			return false;
		var = makeVar(rti, tle->resno, exprType(expr), exprTypmod(expr),
					  exprCollation(expr), 0);
		columns = lappend(columns,
						  makeTargetEntry((Expr *) var, tle->resno, NULL,
										  false));
	}

	refs.rti = rti;
	refs.wholerow_attno = InvalidAttrNumber;
	refs.columns = columns;
	cscan->scan.plan.targetlist = (List *)
		compspill_rowscan_refs((Node *) cscan->scan.plan.targetlist, &refs);
	cscan->scan.plan.qual = (List *)
		compspill_rowscan_refs((Node *) cscan->scan.plan.qual, &refs);
	cscan->custom_scan_tlist = refs.columns;
	cscan->custom_relids = bms_make_singleton(rti);
	return true;
}

/*
 * Start a scan made by CompSpillRowScanPlan, of range table entry rti,
 * whose rows next_row reads.  The rows come as minimal tuples of the
 * entry's columns, and are the scan tuples themselves unless these add
 * the whole row.  That scan slot is not the virtual one ExecInitCustomScan
 * compiled the quals and the projection for: they are compiled again, in
 * its order, dropping the SubPlans the first compilation registered.
 *
 * With projection_later (the WorkTable Scan), the projection is compiled
 * on the first read, as native's is, so that EXPLAIN lists the SubPlans of
 * the targetlist only once it has run; whether there is a projection
 * decides what kind of slot the scan returns, which the parent reads when
 * it starts, after this, so the projection is set up here for that
 * decision, then dropped with the SubPlans registered by it.
 */
void
CompSpillRowScanBegin(CompSpillRowScan *rs, EState *estate, Index rti,
					  ExecScanAccessMtd next_row, bool projection_later)
{
	ScanState  *ss = &rs->css.ss;
	CustomScan *cscan = (CustomScan *) ss->ps.plan;
	TargetEntry *last = llast_node(TargetEntry, cscan->custom_scan_tlist);
	TupleDesc	rowdesc;

	rs->rti = rti;
	rs->next_row = next_row;
	rs->wholerow = IsA(last->expr, Var) &&
		((Var *) last->expr)->varattno == InvalidAttrNumber;

	if (!rs->wholerow)
	{
		rowdesc = ss->ss_ScanTupleSlot->tts_tupleDescriptor;
		rs->rowslot = ExecAllocTableSlot(&estate->es_tupleTable, rowdesc,
										 &TTSOpsMinimalTuple);
		ss->ss_ScanTupleSlot = rs->rowslot;
		ss->ps.scanops = &TTSOpsMinimalTuple;
	}
	else
	{
		/* the columns without the row; its values are made of them */
		rowdesc = ExecTypeFromTL(list_copy_head(cscan->custom_scan_tlist,
												list_length(cscan->custom_scan_tlist) - 1));
		BlessTupleDesc(rowdesc);
		rs->rowslot = ExecAllocTableSlot(&estate->es_tupleTable, rowdesc,
										 &TTSOpsMinimalTuple);
		ss->ps.scanops = &TTSOpsVirtual;
	}
	ss->ps.scanopsfixed = true;
	ss->ps.scanopsset = true;

	if (!projection_later)
	{
		ss->ps.subPlan = NIL;
		ExecAssignScanProjectionInfoWithVarno(ss, INDEX_VAR);
	}
	else
	{
		ExecAssignScanProjectionInfoWithVarno(ss, INDEX_VAR);
		ss->ps.ps_ProjInfo = NULL;
		ss->ps.subPlan = NIL;
	}
	ss->ps.qual = ExecInitQual(cscan->scan.plan.qual, &ss->ps);
	rs->projection_ready = !projection_later;
}

/*
 * Return the scan tuple of row (a row as kept, in the rowslot, or NULL or
 * empty past the end): the row itself, or its columns and the whole row
 * made of them, in the scan slot.
 */
static TupleTableSlot *
compspill_rowscan_store(CompSpillRowScan *rs, TupleTableSlot *row)
{
	ScanState  *ss = &rs->css.ss;
	TupleTableSlot *scan = ss->ss_ScanTupleSlot;
	int			ncols;
	MemoryContext oldcxt;

	if (!rs->wholerow)
		return row;

	ExecClearTuple(scan);
	if (TupIsNull(row))
		return scan;

	ncols = row->tts_tupleDescriptor->natts;
	slot_getallattrs(row);
	memcpy(scan->tts_values, row->tts_values, ncols * sizeof(Datum));
	memcpy(scan->tts_isnull, row->tts_isnull, ncols * sizeof(bool));
	/* the row as a value, good until the scan's next tuple, as native's */
	oldcxt = MemoryContextSwitchTo(ss->ps.ps_ExprContext->ecxt_per_tuple_memory);
	scan->tts_values[ncols] = ExecFetchSlotHeapTupleDatum(row);
	MemoryContextSwitchTo(oldcxt);
	scan->tts_isnull[ncols] = false;
	return ExecStoreVirtualTuple(scan);
}

/* Return the scan tuple of the scan's next row */
static TupleTableSlot *
compspill_rowscan_next(ScanState *ss)
{
	CompSpillRowScan *rs = (CompSpillRowScan *) ss;

	return compspill_rowscan_store(rs, rs->next_row(ss));
}

/*
 * Under an EvalPlanQual recheck, put in the scan slot the row that a scan
 * naming the entry returns there, reading the next row where the recheck
 * has none for the entry; return false where it returns none.
 */
static bool
compspill_rowscan_recheck(ScanState *ss,
						  TupleTableSlot *slot pg_attribute_unused())
{
	CompSpillRowScan *rs = (CompSpillRowScan *) ss;
	EPQState   *epq = ss->ps.state->es_epq_active;
	Index		rti = rs->rti;
	TupleTableSlot *row;

	Assert(epq != NULL);

	if (epq->relsubs_done[rti - 1])
		return false;

	if (epq->relsubs_slot[rti - 1] != NULL)
	{
		/* the test row the recheck's caller gives for this entry */
		epq->relsubs_done[rti - 1] = true;
		if (TupIsNull(epq->relsubs_slot[rti - 1]))
			return false;
		row = ExecCopySlot(rs->rowslot, epq->relsubs_slot[rti - 1]);
	}
	else if (epq->relsubs_rowmark[rti - 1] != NULL)
	{
		/* the copy of the row the scan returned, kept by the rowmark */
		epq->relsubs_done[rti - 1] = true;
		if (!EvalPlanQualFetchRowMark(epq, rti, rs->rowslot))
			return false;
		row = rs->rowslot;
	}
	else
	{
		/* nothing in place of this entry: scan it */
		row = rs->next_row(ss);
	}
	return !TupIsNull(compspill_rowscan_store(rs, row));
}

/*
 * Return the scan's next row that passes its quals, projected: the node's
 * ExecCustomScan.
 */
TupleTableSlot *
CompSpillRowScanExec(CustomScanState *node)
{
	CompSpillRowScan *rs = (CompSpillRowScan *) node;

	if (!rs->projection_ready)
	{
		ExecAssignScanProjectionInfoWithVarno(&node->ss, INDEX_VAR);
		rs->projection_ready = true;
	}
	return ExecScan(&node->ss, compspill_rowscan_next,
					compspill_rowscan_recheck);
}

/*
 * Rescan: forget the row the scan holds; the node moves its read
 * position back.
 */
void
CompSpillRowScanReScan(CompSpillRowScan *rs)
{
	ExecClearTuple(rs->rowslot);
	ExecScanReScan(&rs->css.ss);
}

/*
 * EXPLAIN: the CTE scanned, under the names native prints after "CTE Scan
 * on" or "WorkTable Scan on", the alias made unique as for a native scan.
 */
void
CompSpillRowScanExplain(CompSpillRowScan *rs, ExplainState *es)
{
	RangeTblEntry *rte = rt_fetch(rs->rti, es->rtable);
	char	   *refname = list_nth(es->rtable_names, rs->rti - 1);

	if (refname == NULL)
		refname = rte->eref->aliasname;
	if (rte->ctename != NULL)
		ExplainPropertyText("CTE Name", rte->ctename, es);
	if (refname != NULL &&
		(rte->ctename == NULL || strcmp(refname, rte->ctename) != 0))
		ExplainPropertyText("CTE Alias", refname, es);
}
