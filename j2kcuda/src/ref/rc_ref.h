/*
 * Rate control: PCRD-opt (convex hull of each code-block's rate-distortion points, then one
 * slope threshold per layer, refined per component where a per-component budget applies),
 * sizing with the exact tier-2 header cost so that byte budgets are never exceeded.
 */
#ifndef J2KI_RC_H
#define J2KI_RC_H

#include "core/j2ki.h"
#include "core/plan.h"

/**
 * Decides cblk->layer_passes for every code-block of the plan according to cp->rc_mode.
 * Returns 0, or J2KC_ERR_BUFSIZE when even empty packets exceed a budget.
 */
int j2ki_rc_run(J2kiPlan *plan, const J2kiLog *log);

/** Computes every pass's convex-hull slope (pass->slope) for one code-block. */
void j2ki_rc_hull(J2kiCblk *cb, double weight);

/**
 * How rate control measures a candidate truncation: same contract as j2ki_t2_size (t2_ref.h),
 * which j2ki_rc_run uses; tests pass a model whose answer they know.
 */
typedef int64_t (*J2kiRcSizeFn)(void *opaque, J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len);

/** j2ki_rc_run with the size of a truncation measured by size_fn(opaque, ...). */
int j2ki_rc_run_with(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque);

struct J2kiPool;
/** j2ki_rc_run_with, the code-blocks' hulls, the application of each threshold and the slope
 *  histograms done on the worker pool (threadpool.h; NULL: the calling thread). Each
 *  code-block's result does not depend on the worker, slope extremes are minima and maxima and
 *  histogram bins integer sums: the same decisions. scratch: j2ki_rc_pool_scratch_size bytes
 *  for the pool's thread count (8-aligned; NULL: the histograms on the calling thread). */
int j2ki_rc_run_pool(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque,
                     struct J2kiPool *pool, void *scratch);
size_t j2ki_rc_pool_scratch_size(int nb_threads);

/** j2ki_rc_run_with, with plain = 1: the search without the shortcuts that only skip sizings
 *  (its histogram guide and the narrowing of tie indices), for tests that compare the two. */
int j2ki_rc_run_opts(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque, int plain);

/**
 * Estimated PSNR in dB of the truncation in cblk->layer_passes[nb_layers - 1]: the weighted
 * distortion of the passes left out (fixed-point, summed as integers), over all samples of all
 * components, each component against its own peak 2^depth - 1. The quantisation error of the
 * finest coded bit-plane is not counted, so keeping every pass gives INFINITY.
 */
double j2ki_rc_estimate_psnr(const J2kiPlan *plan);

/** Fixed-point scale of a band's residual distortions (j2ki_rc_cblk_residual):
 *  dist_weight / (2^depth - 1)^2 * 2^32. The device rate control uses the same values. */
double j2ki_rc_dist_scale(const J2kiPlan *plan, const J2kiBand *band);

/** qstep_try's test after rate control: the OR of j2ki_rc_cblk_hull_bits (rc_core.h) over the
 *  plan's code-blocks; j2ki_rc_mask_fills(mask, nb_comps) tells whether the frame filled. */
uint32_t j2ki_rc_hull_mask(const J2kiPlan *plan);

struct J2kiRcCtx;
/**
 * Prepares the context of j2ki_rc_decide (rc_core.h) for the plan's coding parameters: modes,
 * budgets, and the values that need libm (SLOPE's threshold, PSNR's limit, the geometric layer
 * divisors), so that the device, which gets a copy of it, needs none. ops/opaque/log are left
 * NULL. Returns 0 or J2KC_ERR_INVAL.
 */
int j2ki_rc_ctx_init(struct J2kiRcCtx *c, const J2kiPlan *plan);
/** Thresholds a BYTES search sizes at once per guided step (rc_core.h, j2ki_rc_multi_round):
 *  cp's hooks.rc_probes (J2KC_RC_PROBES, read at encoder creation; J2KI_TUNE_RC_PROBES by
 *  default, 0 counts as 1) clamped to 1 .. J2KI_RC_MULTI_MAX. Both backends take it from
 *  their plan's parameters, so they decide alike and write the same bytes with any setting
 *  (tuning.h says why one is the default). */
int j2ki_rc_multi_probes(const J2kiCodingParams *cp);

#endif
