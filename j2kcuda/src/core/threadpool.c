/*
 * The reference backend's pool of worker threads (threadpool.h).
 *
 * Life of a job: j2ki_pool_run publishes fn, opaque and n under the mutex with a new job
 * number, resets the claim counter and wakes every helper; each worker claims items with an
 * atomic fetch-and-add until the counter passes n. A helper copies the job under the mutex and
 * counts itself in `busy` there, so the caller, which waits for busy == 0 both after its own
 * claims and before publishing the next job, never returns (or resets the counter) while a
 * helper may still claim an item of the job. A helper that wakes only after the job is over
 * finds the counter past n and calls nothing.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE                   /* sched_getaffinity, CPU_COUNT */
#endif
#include "core/threadpool.h"

#include <pthread.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <stdlib.h>
#include <unistd.h>

typedef struct PoolHelper {
    J2kiPool *pool;
    int       worker;                 /* 1..nb_threads-1 */
} PoolHelper;

struct J2kiPool {
    pthread_mutex_t mtx;
    pthread_cond_t  go;               /* a new job, or quit */
    pthread_cond_t  idle;             /* busy dropped to 0 */
    int             nb_threads;       /* workers: the caller + the helpers started */
    pthread_t       th[J2KI_POOL_MAX_THREADS];
    PoolHelper      helper[J2KI_POOL_MAX_THREADS];
    int             quit;             /* under mtx */
    uint64_t        job;              /* under mtx: number of the current job */
    J2kiPoolFn      fn;               /* under mtx: the current job */
    void           *opaque;
    uint32_t        n;
    int             busy;             /* under mtx: helpers inside the current job */
    uint64_t        next;             /* atomic: the next item to claim */
};

/* The CPUs this process may run on: its affinity mask where the system has one (taskset, the
 * cpusets of containers and batch schedulers, as FFmpeg's av_cpu_count counts them), else the
 * CPUs online. More workers than CPUs would only time-slice. */
int j2ki_pool_auto_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        n = CPU_COUNT(&set);
#endif
    if (n < 1)
        return 1;
    return n > J2KI_POOL_MAX_THREADS ? J2KI_POOL_MAX_THREADS : (int)n;
}

/** Claims and runs items of the job (fn, opaque, n) until none is left. */
static void work(J2kiPool *pool, J2kiPoolFn fn, void *opaque, uint32_t n, int worker)
{
    for (;;) {
        uint64_t i = __atomic_fetch_add(&pool->next, 1, __ATOMIC_RELAXED);
        if (i >= n)
            break;
        fn(opaque, (uint32_t)i, worker);
    }
}

static void *helper_main(void *arg)
{
    PoolHelper *h = arg;
    J2kiPool *pool = h->pool;
    uint64_t seen = 0;

    pthread_mutex_lock(&pool->mtx);
    for (;;) {
        while (!pool->quit && pool->job == seen)
            pthread_cond_wait(&pool->go, &pool->mtx);
        if (pool->quit)
            break;
        seen = pool->job;
        J2kiPoolFn fn = pool->fn;
        void *opaque = pool->opaque;
        uint32_t n = pool->n;
        pool->busy++;
        pthread_mutex_unlock(&pool->mtx);
        work(pool, fn, opaque, n, h->worker);
        pthread_mutex_lock(&pool->mtx);
        if (!--pool->busy)
            pthread_cond_signal(&pool->idle);
    }
    pthread_mutex_unlock(&pool->mtx);
    return NULL;
}

J2kiPool *j2ki_pool_new(int nb_threads)
{
    J2kiPool *pool;

    if (nb_threads < 1)
        nb_threads = 1;
    if (nb_threads > J2KI_POOL_MAX_THREADS)
        nb_threads = J2KI_POOL_MAX_THREADS;
    pool = calloc(1, sizeof(*pool));
    if (!pool)
        return NULL;
    if (pthread_mutex_init(&pool->mtx, NULL)) {
        free(pool);
        return NULL;
    }
    if (pthread_cond_init(&pool->go, NULL)) {
        pthread_mutex_destroy(&pool->mtx);
        free(pool);
        return NULL;
    }
    if (pthread_cond_init(&pool->idle, NULL)) {
        pthread_cond_destroy(&pool->go);
        pthread_mutex_destroy(&pool->mtx);
        free(pool);
        return NULL;
    }
    pool->nb_threads = 1;
    for (int w = 1; w < nb_threads; w++) {
        pool->helper[w].pool = pool;
        pool->helper[w].worker = w;
        if (pthread_create(&pool->th[w], NULL, helper_main, &pool->helper[w]))
            break;              /* keep the helpers we have */
        pool->nb_threads = w + 1;
    }
    return pool;
}

int j2ki_pool_threads(const J2kiPool *pool)
{
    return pool ? pool->nb_threads : 1;
}

void j2ki_pool_run(J2kiPool *pool, uint32_t n, J2kiPoolFn fn, void *opaque)
{
    if (!n)
        return;
    if (!pool || pool->nb_threads == 1 || n == 1) {
        for (uint32_t i = 0; i < n; i++)
            fn(opaque, i, 0);
        return;
    }
    pthread_mutex_lock(&pool->mtx);
    while (pool->busy)          /* a late helper still inside the previous job */
        pthread_cond_wait(&pool->idle, &pool->mtx);
    pool->fn = fn;
    pool->opaque = opaque;
    pool->n = n;
    __atomic_store_n(&pool->next, 0, __ATOMIC_RELAXED);
    pool->job++;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mtx);

    work(pool, fn, opaque, n, 0);

    pthread_mutex_lock(&pool->mtx);
    while (pool->busy)
        pthread_cond_wait(&pool->idle, &pool->mtx);
    pthread_mutex_unlock(&pool->mtx);
}

void j2ki_pool_free(J2kiPool **ppool)
{
    J2kiPool *pool = ppool ? *ppool : NULL;
    if (!pool)
        return;
    pthread_mutex_lock(&pool->mtx);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mtx);
    for (int w = 1; w < pool->nb_threads; w++)
        pthread_join(pool->th[w], NULL);
    pthread_cond_destroy(&pool->idle);
    pthread_cond_destroy(&pool->go);
    pthread_mutex_destroy(&pool->mtx);
    free(pool);
    *ppool = NULL;
}
