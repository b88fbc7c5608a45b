/*-------------------------------------------------------------------------
 *
 * materialnode.h
 *	  The "CompSpill Material" CustomScan: its registration, and the
 *	  node the plan rewrite puts in place of the native one (materialnode.c).
 *
 * IDENTIFICATION
 *	  src/nodes/materialnode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_MATERIALNODE_H
#define COMPSPILL_MATERIALNODE_H

#include "nodes/plannodes.h"

/* materialnode.c */
extern void CompSpillRegisterMaterialNode(void);
extern Plan *CompSpillMakeMaterialNode(Material *mat);
extern void CompSpillMaterialSetReads(Plan *plan, double reads);

#endif							/* COMPSPILL_MATERIALNODE_H */
