/*-------------------------------------------------------------------------
 *
 * epq.c
 *	  EvalPlanQual rechecks for compspill's scans of a range table entry:
 *	  the CTE Scan and the WorkTable Scan.
 *
 * When a row that UPDATE, DELETE, MERGE or SELECT FOR UPDATE/SHARE wants
 * was changed by a transaction that committed meanwhile, the executor
 * runs the plan below the ModifyTable or LockRows once more over the new
 * version of that row and the rows the other relations of the join had
 * contributed (EvalPlanQual).  Every scan node of a range table entry
 * then returns, once, the row it is given in place of scanning: the new
 * row version for the relation updated, a copy of the row it had returned
 * for the others (the rowmark: a CTE's rows are kept as whole-row values
 * in the plan's junk columns).  ExecScanFetch does that for a scan whose
 * plan names its entry in scanrelid.
 *
 * compspill's scans of a CTE or of a work table cannot name their entry
 * there (ExecInitCustomScan would open it as a table), so their scanrelid
 * is 0, and for such a scan ExecScanFetch leaves the whole recheck to the
 * node's recheck method: it must put the substitute row in the scan slot
 * itself.  CompSpillEpqScanFetch does what ExecScanFetch does for a scan
 * that names its entry, for the entry the node scans: the caller's test
 * row, else the rowmark's copy, each returned once; with neither (a scan
 * in a SubPlan, whose relation has no rowmark) the scan reads on as it
 * would outside a recheck.
 *
 * The substitute is stored in the node's scan slot, which must therefore
 * be the minimal-tuple slot the node's quals and projection were compiled
 * for: CompSpillScanSlotInit makes it so.
 *
 * IDENTIFICATION
 *	  src/nodes/epq.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"

#include "nodes/epq.h"

/*
 * Under an EvalPlanQual recheck, put in slot (the node's scan slot) the
 * row that a scan of range table entry rti returns there, reading it with
 * next where the recheck gives none; return false where it returns none.
 */
bool
CompSpillEpqScanFetch(ScanState *ss, Index rti, TupleTableSlot *slot,
					  ExecScanAccessMtd next)
{
	EPQState   *epq = ss->ps.state->es_epq_active;
	TupleTableSlot *row;

	Assert(epq != NULL);
	Assert(slot == ss->ss_ScanTupleSlot);
	Assert(rti > 0);

	if (epq->relsubs_done[rti - 1])
		return false;

	if (epq->relsubs_slot[rti - 1] != NULL)
	{
		/* the test row the recheck's caller gives for this relation */
		row = epq->relsubs_slot[rti - 1];
		epq->relsubs_done[rti - 1] = true;
		if (TupIsNull(row))
			return false;
		ExecCopySlot(slot, row);
		return true;
	}

	if (epq->relsubs_rowmark[rti - 1] != NULL)
	{
		/* the copy of the row the scan returned, kept by the rowmark */
		epq->relsubs_done[rti - 1] = true;
		if (!EvalPlanQualFetchRowMark(epq, rti, slot))
			return false;
		return !TupIsNull(slot);
	}

	/* nothing in place of this relation: scan it */
	row = next(ss);
	if (TupIsNull(row))
		return false;
	if (row != slot)
		ExecCopySlot(slot, row);
	return true;
}

/*
 * Make the scan slot of a scan node a minimal-tuple slot of its own
 * descriptor: the slot its rows are read into, and the one an
 * EvalPlanQual recheck stores its substitute row in.  Its quals and
 * projection are then to be compiled for it.
 */
void
CompSpillScanSlotInit(ScanState *ss, EState *estate)
{
	TupleDesc	desc = ss->ss_ScanTupleSlot->tts_tupleDescriptor;

	ss->ss_ScanTupleSlot = ExecAllocTableSlot(&estate->es_tupleTable, desc,
											  &TTSOpsMinimalTuple);
	ss->ps.scanops = &TTSOpsMinimalTuple;
	ss->ps.scanopsfixed = true;
	ss->ps.scanopsset = true;
}
