/*
 * Rate control: PCRD-opt (convex hull of each code-block's rate-distortion points, then one
 * slope threshold per layer, refined per component where a per-component budget applies),
 * sizing with the exact tier-2 header cost so that byte budgets are never exceeded.
 */
#ifndef J2KI_RC_H
#define J2KI_RC_H

#include "j2ki.h"
#include "plan.h"

/**
 * Decides cblk->layer_passes for every code-block of the plan according to cp->rc_mode.
 * Returns 0, or J2KC_ERR_BUFSIZE when even empty packets exceed a budget.
 */
int j2ki_rc_run(J2kiPlan *plan, const J2kiLog *log);

/** Computes every pass's convex-hull slope (pass->slope) for one code-block. */
void j2ki_rc_hull(J2kiCblk *cb, double weight);

#endif
