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

struct J2kiPool;

/**
 * j2ki_t1s_threshold's answer on a worker pool (threadpool.h; NULL: the calling thread), without
 * sorting: the threshold is the largest key v whose entries of key >= v hold more than budget
 * bytes, found one digit at a time (11, 11 and 10 bits of the key) from per-worker histograms
 * of byte sums over the entries that match the digits found so far. Sums of integers: the
 * same answer for any thread count. scratch: j2ki_t1s_pool_threshold_scratch_size bytes
 * (8-aligned).
 */
uint32_t j2ki_t1s_threshold_pool(const uint32_t *key, const uint32_t *bytes, size_t n, uint64_t budget,
                                 struct J2kiPool *pool, void *scratch);
size_t j2ki_t1s_pool_threshold_scratch_size(int nb_threads);

/** Bytes of the work area of j2ki_t1s_plan_pool for the plan and the pool's thread count. */
size_t j2ki_t1s_pool_scratch_size(const J2kiPlan *plan, int nb_threads);

/** j2ki_t1s_plan_host with every per code-block part (keys, decisions) and the threshold on
 *  the pool: the same limits. work: j2ki_t1s_pool_scratch_size bytes (8-aligned). */
int j2ki_t1s_plan_pool(J2kiPlan *plan, uint64_t budget, uint32_t *lim, void *work, struct J2kiPool *pool);

#ifdef __cplusplus
}
#endif

#endif
