/*
 * A pool of worker threads for the reference backend's stages (backend_ref.c): a job is a
 * range of independent items [0, n) and a function called once per item. The calling thread
 * works on the job too (worker 0); the helpers are workers 1..nb_threads-1. Items are claimed
 * one at a time from a shared atomic counter, not handed out in fixed shares, so a helper that
 * wakes late or meets costlier items simply takes fewer of them.
 *
 * What a worker computes must not depend on which worker runs an item or in which order the
 * items run (the codestream's bytes are the same for every thread count): per-worker scratch
 * is indexed by the worker number, results go to per-item places, and any reduction over
 * items is done by the caller after j2ki_pool_run returns, in item order.
 *
 * One job runs at a time per pool (the pool belongs to one encoder, whose frames are encoded
 * one after the other); two pools in two threads are independent. The threads are created once,
 * with the pool, and sleep on a condition variable between jobs.
 */
#ifndef J2KI_THREADPOOL_H
#define J2KI_THREADPOOL_H

#include <stdint.h>

/** Largest thread count the pool (and the "threads" key) accepts. */
#define J2KI_POOL_MAX_THREADS 256

typedef struct J2kiPool J2kiPool;

/** Called for item i of a job, on worker `worker` (0 = the thread that called j2ki_pool_run). */
typedef void (*J2kiPoolFn)(void *opaque, uint32_t i, int worker);

/** The number of online CPUs (at least 1, at most J2KI_POOL_MAX_THREADS): threads = 0 (auto). */
int j2ki_pool_auto_threads(void);

/**
 * A pool of nb_threads workers (1..J2KI_POOL_MAX_THREADS): the caller plus nb_threads - 1
 * helper threads. When the system refuses to create a thread, the pool keeps those it has
 * (j2ki_pool_threads says how many workers there are; 1 = the caller alone). NULL when out
 * of memory.
 */
J2kiPool *j2ki_pool_new(int nb_threads);

/** The workers of the pool, caller included (worker numbers are 0..this-1); 1 for NULL. */
int j2ki_pool_threads(const J2kiPool *pool);

/** Calls fn(opaque, i, worker) for every i in [0, n) and returns when all calls have returned
 *  and no helper touches the job any more. pool may be NULL: the caller does every item. */
void j2ki_pool_run(J2kiPool *pool, uint32_t n, J2kiPoolFn fn, void *opaque);

/** Stops and joins the helpers, frees the pool and sets *pool to NULL; accepts NULL. */
void j2ki_pool_free(J2kiPool **pool);

#endif
