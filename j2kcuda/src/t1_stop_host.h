/*
 * Host side of tier-1's early stop (t1_stop.h, t1_stop.c).
 */
#ifndef J2KI_T1_STOP_HOST_H
#define J2KI_T1_STOP_HOST_H

#include "j2ki.h"
#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/** 1 when the coding parameters use the early stop (t1_stop on, a byte budget). */
int j2ki_t1s_enabled(const J2kiCodingParams *cp);

/**
 * Step 2 of t1_stop.h on the host: the key at which the bytes of the entries, taken in
 * decreasing key order, first exceed budget (0 when they never do; key 0 entries are not
 * vertices). scratch: n uint64_t. Ties in key give the same answer in any order.
 */
uint32_t j2ki_t1s_threshold(const uint32_t *key, const uint32_t *bytes, size_t n, uint64_t budget,
                            uint64_t *scratch);

/** Bytes of the work area j2ki_t1s_plan_host needs for the plan. */
size_t j2ki_t1s_host_scratch_size(const J2kiPlan *plan);

/**
 * The decisions of every step over the plan's code-blocks, coded fully (cb->nb_passes,
 * passes[].est, .dist): lim[i] = the pass limit of block i, or 0 when it is not stopped.
 * passes[].slope is overwritten. work: j2ki_t1s_host_scratch_size bytes (8-aligned), or NULL
 * to allocate them for this call. Returns 0 or J2KC_ERR_NOMEM.
 */
int j2ki_t1s_plan_host(J2kiPlan *plan, uint64_t budget, uint32_t *lim, void *work);

#ifdef __cplusplus
}
#endif

#endif
