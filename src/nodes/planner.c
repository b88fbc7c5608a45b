/*-------------------------------------------------------------------------
 *
 * planner.c
 *	  Plan rewrite: replace each Sort of a finished plan with a
 *	  "CompSpill Sort" CustomScan, each Incremental Sort with a "CompSpill
 *	  Incremental Sort", each Material with a "CompSpill Material" and each
 *	  CTE Scan with a "CompSpill CTE Scan".
 *
 * PostgreSQL offers no hook inside tuplesort, so compspill works on the
 * plan.  Its planner hook lets the previous hook (or the standard planner)
 * build the whole PlannedStmt, then walks the main plan tree and every
 * entry of the subplan list, replacing Sort, Material and CTE Scan nodes.
 * All the CTE Scans of a CTE share one store, so they are all replaced;
 * recursive CTEs' work table scans stay native.
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

#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"

#include "compspill.h"
#include "nodes/ctenode.h"
#include "nodes/incsortnode.h"
#include "nodes/materialnode.h"
#include "nodes/planner.h"
#include "nodes/sortnode.h"

static planner_hook_type prev_planner_hook = NULL;

static Plan *compspill_rewrite(PlannedStmt *stmt, Plan *plan, bool bounded);
static Plan *compspill_count_disabled(Plan *cnode);
static List *compspill_rewrite_list(PlannedStmt *stmt, List *plans,
									 bool bounded);

/*
 * Plan the query as usual, then rewrite the sorts of the finished plan.
 */
static PlannedStmt *
compspill_planner(Query *parse, const char *query_string, int cursorOptions,
				  ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	ListCell   *lc;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions,
								 boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions,
								boundParams);

	if (!compspill_enabled)
		return stmt;

	stmt->planTree = compspill_rewrite(stmt, stmt->planTree, false);
	foreach(lc, stmt->subplans)
		lfirst(lc) = compspill_rewrite(stmt, (Plan *) lfirst(lc), false);

	return stmt;
}

/*
 * Rewrite each plan of a list in place and return the list.
 */
static List *
compspill_rewrite_list(PlannedStmt *stmt, List *plans, bool bounded)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = compspill_rewrite(stmt, (Plan *) lfirst(lc), bounded);
	return plans;
}

/*
 * Rewrite the sorts below plan and return the (possibly replaced) node.
 *
 * "bounded" says whether a Limit above may hand this node a tuple bound
 * at run time.
 */
static Plan *
compspill_rewrite(PlannedStmt *stmt, Plan *plan, bool bounded)
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
					compspill_rewrite_list(stmt, append->appendplans, bounded);
				break;
			}
		case T_MergeAppend:
			{
				MergeAppend *mappend = (MergeAppend *) plan;

				mappend->mergeplans =
					compspill_rewrite_list(stmt, mappend->mergeplans, bounded);
				break;
			}
		case T_SubqueryScan:
			{
				SubqueryScan *sscan = (SubqueryScan *) plan;

				sscan->subplan = compspill_rewrite(stmt, sscan->subplan,
												   bounded &&
												   plan->qual == NIL);
				break;
			}
		case T_BitmapAnd:
			{
				BitmapAnd  *band = (BitmapAnd *) plan;

				band->bitmapplans = compspill_rewrite_list(stmt, band->bitmapplans,
														   false);
				break;
			}
		case T_BitmapOr:
			{
				BitmapOr   *bor = (BitmapOr *) plan;

				bor->bitmapplans = compspill_rewrite_list(stmt, bor->bitmapplans,
														  false);
				break;
			}
		case T_CustomScan:
			{
				CustomScan *cscan = (CustomScan *) plan;

				cscan->custom_plans = compspill_rewrite_list(stmt, cscan->custom_plans,
															 false);
				break;
			}
		default:
			break;
	}

	plan->lefttree = compspill_rewrite(stmt, plan->lefttree, child_bounded);
	plan->righttree = compspill_rewrite(stmt, plan->righttree, false);

	if (IsA(plan, Sort) && !bounded)
		return compspill_count_disabled(CompSpillMakeSortNode((Sort *) plan));
	if (IsA(plan, IncrementalSort) && !bounded)
		return compspill_count_disabled(CompSpillMakeIncSortNode((IncrementalSort *) plan,
																 stmt));
	if (IsA(plan, Material))
		return compspill_count_disabled(CompSpillMakeMaterialNode((Material *) plan));
	if (IsA(plan, CteScan))
	{
		Plan	   *cte = CompSpillMakeCteNode((CteScan *) plan, stmt);

		return cte ? cte : plan;
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

	if (child != NULL && child->disabled_nodes > 0)
	{
		Result	   *count = makeNode(Result);

		count->plan.disabled_nodes = child->disabled_nodes;
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
