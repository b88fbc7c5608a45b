/*-------------------------------------------------------------------------
 *
 * planner.c
 *	  Plan rewrite: replace each Sort of a finished plan with a
 *	  "CompSpill Sort" CustomScan, each Incremental Sort with a "CompSpill
 *	  Incremental Sort", each Material with a "CompSpill Material" and each
 *	  CTE Scan with a "CompSpill CTE Scan", and each RecursiveUnion with its
 *	  WorkTableScans with a "CompSpill Recursive Union" and "CompSpill
 *	  WorkTable Scan" pair.
 *
 * PostgreSQL offers no hook inside tuplesort, so compspill works on the
 * plan.  Its planner hook lets the previous hook (or the standard planner)
 * build the whole PlannedStmt, then walks the main plan tree and every
 * entry of the subplan list, replacing Sort, Material and CTE Scan nodes.
 * All the CTE Scans of a CTE share one store, so they are all replaced;
 * likewise a recursive union and its work table scans, which find it
 * through an executor parameter: the unions of the statement are noted
 * first, so that each scan met is replaced together with its union.
 *
 * CTEs and recursive CTEs that return a column of type record stay native
 * (see compspill_has_record_column).
 *
 * One kind of Sort is left alone: a Sort that will be told a tuple bound
 * at run time.  A Limit node passes its bound down through a fixed set of
 * node types (see ExecSetTupleBound in execProcnode.c), and only a native
 * Sort can use it, for a top-N heapsort.  The walk below follows the same
 * path the bound would take and keeps such a Sort native; likewise an
 * Incremental Sort, which the bound reaches too (it stops loading groups
 * once the bound is met, and sorts a large group top-N).
 *
 * IDENTIFICATION
 *	  src/nodes/planner.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"

#include "base/settings.h"
#include "nodes/ctenode.h"
#include "nodes/incsortnode.h"
#include "nodes/materialnode.h"
#include "nodes/planner.h"
#include "nodes/recursivenode.h"
#include "nodes/sortnode.h"

static planner_hook_type prev_planner_hook = NULL;

/* What the rewrite of one statement needs to know */
typedef struct CompSpillRewrite
{
	PlannedStmt *stmt;
	List	   *unions;			/* its RecursiveUnion nodes */
} CompSpillRewrite;

static Plan *compspill_rewrite(CompSpillRewrite *cx, Plan *plan, bool bounded);
static Plan *compspill_count_disabled(Plan *cnode);
static List *compspill_rewrite_list(CompSpillRewrite *cx, List *plans,
									 bool bounded);
static void compspill_find_unions(CompSpillRewrite *cx, Plan *plan);

/*
 * Plan the query as usual, then rewrite the sorts of the finished plan.
 */
static PlannedStmt *
compspill_planner(Query *parse, const char *query_string, int cursorOptions,
				  ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	CompSpillRewrite cx;
	ListCell   *lc;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions,
								 boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions,
								boundParams);

	if (!compspill_enabled)
		return stmt;

	/* the recursive unions first: their work table scans go with them */
	cx.stmt = stmt;
	cx.unions = NIL;
	compspill_find_unions(&cx, stmt->planTree);
	foreach(lc, stmt->subplans)
		compspill_find_unions(&cx, (Plan *) lfirst(lc));

	stmt->planTree = compspill_rewrite(&cx, stmt->planTree, false);
	foreach(lc, stmt->subplans)
		lfirst(lc) = compspill_rewrite(&cx, (Plan *) lfirst(lc), false);
	list_free(cx.unions);

	return stmt;
}

/*
 * Rewrite each plan of a list in place and return the list.
 */
static List *
compspill_rewrite_list(CompSpillRewrite *cx, List *plans, bool bounded)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = compspill_rewrite(cx, (Plan *) lfirst(lc), bounded);
	return plans;
}

/*
 * Note every RecursiveUnion below plan, through every kind of child the
 * rewrite visits, so that each of its work table scans, wherever the
 * rewrite meets it, is replaced along with it.
 */
static void
compspill_find_unions(CompSpillRewrite *cx, Plan *plan)
{
	List	   *children = NIL;
	ListCell   *lc;

	if (plan == NULL)
		return;
	check_stack_depth();

	if (IsA(plan, RecursiveUnion))
		cx->unions = lappend(cx->unions, plan);
	else if (IsA(plan, Append))
		children = ((Append *) plan)->appendplans;
	else if (IsA(plan, MergeAppend))
		children = ((MergeAppend *) plan)->mergeplans;
	else if (IsA(plan, SubqueryScan))
		children = list_make1(((SubqueryScan *) plan)->subplan);
	else if (IsA(plan, BitmapAnd))
		children = ((BitmapAnd *) plan)->bitmapplans;
	else if (IsA(plan, BitmapOr))
		children = ((BitmapOr *) plan)->bitmapplans;
	else if (IsA(plan, CustomScan))
		children = ((CustomScan *) plan)->custom_plans;

	foreach(lc, children)
		compspill_find_unions(cx, (Plan *) lfirst(lc));
	compspill_find_unions(cx, plan->lefttree);
	compspill_find_unions(cx, plan->righttree);
}

/*
 * The RecursiveUnion whose work table is the given executor parameter, or
 * NULL.
 */
static RecursiveUnion *
compspill_union_of(CompSpillRewrite *cx, int wt_param)
{
	ListCell   *lc;

	foreach(lc, cx->unions)
	{
		RecursiveUnion *ru = (RecursiveUnion *) lfirst(lc);

		if (ru->wtParam == wt_param)
			return ru;
	}
	return NULL;
}

/*
 * Does a CTE's or a recursive union's targetlist return a column of type
 * record?  Such a CTE's scans stay native: EXPLAIN VERBOSE names a field
 * of a record column of a CTE from the plan of a native CTE or WorkTable
 * Scan only (ruleutils.c's get_name_for_var_field, which asserts as much).
 */
static bool
compspill_has_record_column(List *targetlist)
{
	ListCell   *lc;

	foreach(lc, targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (!tle->resjunk && exprType((Node *) tle->expr) == RECORDOID)
			return true;
	}
	return false;
}

/*
 * Rewrite the sorts below plan and return the (possibly replaced) node.
 *
 * "bounded" says whether a Limit above may hand this node a tuple bound
 * at run time.
 */
static Plan *
compspill_rewrite(CompSpillRewrite *cx, Plan *plan, bool bounded)
{
	bool		child_bounded = false;

	if (plan == NULL)
		return NULL;

	check_stack_depth();

	switch (nodeTag(plan))
	{
		case T_Limit:
			{
				Limit	   *limit = (Limit *) plan;

				child_bounded = limit->limitCount != NULL &&
					limit->limitOption != LIMIT_OPTION_WITH_TIES;
				break;
			}
		case T_Result:
		case T_Gather:
		case T_GatherMerge:
			child_bounded = bounded;
			break;
		case T_Append:
			{
				Append	   *append = (Append *) plan;

				append->appendplans =
					compspill_rewrite_list(cx, append->appendplans, bounded);
				break;
			}
		case T_MergeAppend:
			{
				MergeAppend *mappend = (MergeAppend *) plan;

				mappend->mergeplans =
					compspill_rewrite_list(cx, mappend->mergeplans, bounded);
				break;
			}
		case T_SubqueryScan:
			{
				SubqueryScan *sscan = (SubqueryScan *) plan;

				sscan->subplan = compspill_rewrite(cx, sscan->subplan,
												   bounded &&
												   plan->qual == NIL);
				break;
			}
		case T_BitmapAnd:
			{
				BitmapAnd  *band = (BitmapAnd *) plan;

				band->bitmapplans = compspill_rewrite_list(cx, band->bitmapplans,
														   false);
				break;
			}
		case T_BitmapOr:
			{
				BitmapOr   *bor = (BitmapOr *) plan;

				bor->bitmapplans = compspill_rewrite_list(cx, bor->bitmapplans,
														  false);
				break;
			}
		case T_CustomScan:
			{
				CustomScan *cscan = (CustomScan *) plan;

				cscan->custom_plans = compspill_rewrite_list(cx, cscan->custom_plans,
															 false);
				break;
			}
		default:
			break;
	}

	plan->lefttree = compspill_rewrite(cx, plan->lefttree, child_bounded);
	plan->righttree = compspill_rewrite(cx, plan->righttree, false);

	/* a nested loop reads its inner Material once per outer row */
	if (IsA(plan, NestLoop) && plan->lefttree != NULL)
		CompSpillMaterialSetReads(plan->righttree, plan->lefttree->plan_rows);

	if (IsA(plan, Sort) && !bounded)
		return compspill_count_disabled(CompSpillMakeSortNode((Sort *) plan));
	if (IsA(plan, IncrementalSort) && !bounded)
		return compspill_count_disabled(CompSpillMakeIncSortNode((IncrementalSort *) plan,
																 cx->stmt));
	if (IsA(plan, Material))
		return compspill_count_disabled(CompSpillMakeMaterialNode((Material *) plan));
	if (IsA(plan, CteScan))
	{
		CteScan    *cscan = (CteScan *) plan;
		Plan	   *cteplan = list_nth(cx->stmt->subplans, cscan->ctePlanId - 1);
		Plan	   *cte;

		if (compspill_has_record_column(cteplan->targetlist))
			return plan;
		cte = CompSpillMakeCteNode(cscan, cx->stmt);
		return cte ? cte : plan;
	}

	/*
	 * A recursive union and its work table scans together: every union of
	 * the statement was noted by a walk that reaches every node this one
	 * does, so each scan met finds its union, and each union is replaced,
	 * or with its scans left native.
	 */
	if (IsA(plan, RecursiveUnion))
	{
		if (compspill_has_record_column(plan->targetlist))
			return plan;
		return compspill_count_disabled(CompSpillMakeRecursiveUnionNode((RecursiveUnion *) plan));
	}
	if (IsA(plan, WorkTableScan))
	{
		WorkTableScan *wts = (WorkTableScan *) plan;
		RecursiveUnion *ru = compspill_union_of(cx, wts->wtParam);

		if (ru == NULL)
			elog(ERROR, "no recursive union for work table parameter %d",
				 wts->wtParam);	/* the planner never makes one */
		if (compspill_has_record_column(ru->plan.targetlist))
			return plan;
		return CompSpillMakeWorkTableNode(wts, ru);
	}

	return plan;
}

/*
 * Let EXPLAIN see the disabled nodes below a CompSpill node that has its
 * child on lefttree, and return the node.
 *
 * From 18 each plan node counts the nodes enable_* settings disabled in
 * its subtree, and EXPLAIN marks a node "Disabled" when its count exceeds
 * its children's; for a CustomScan it adds up custom_plans only, so a
 * CompSpill Sort over a disabled Seq Scan would be marked too.  The count
 * of the child is handed over in custom_plans, on a Result node that is
 * never executed nor shown (EXPLAIN shows a CustomScan's custom_ps, which
 * compspill leaves empty): the child itself there would be copied twice
 * with every copy of the plan.
 */
static Plan *
compspill_count_disabled(Plan *cnode)
{
#ifdef COMPSPILL_HAS_DISABLED_NODES
	CustomScan *cscan = castNode(CustomScan, cnode);
	Plan	   *child = outerPlan(cnode);

	int			disabled = child != NULL ? child->disabled_nodes : 0;

	/* a recursive union's recursive term too */
	if (innerPlan(cnode) != NULL)
		disabled += innerPlan(cnode)->disabled_nodes;
	if (disabled > 0)
	{
		Result	   *count = makeNode(Result);

		count->plan.disabled_nodes = disabled;
		cscan->custom_plans = list_make1(count);
	}
#endif
	return cnode;
}

/*
 * Install the planner hook, keeping the previous one to chain to.
 */
void
CompSpillInstallPlannerHook(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = compspill_planner;
}
