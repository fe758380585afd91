/*
 * The CUDA driver and the device's context made ahead (start-up time, issue 26). The process's
 * first CUDA call initialises the driver, and the first call that needs the device makes its
 * primary context; together they are most of an encoder's creation. Both depend on nothing the
 * encoder plans, so a thread of its own makes them (cudaGetDeviceCount, then cudaSetDevice and
 * cudaFree(0) on the encoder's device) while the creating thread plans and builds the host
 * tables; the backend joins it before its first call on the device, and creation costs the
 * longer of the two instead of their sum.
 *
 * The thread only warms up what the runtime keeps for the process: the primary context is the
 * device's one context, which any thread then finds made. Its errors are not reported: the
 * backend makes the same calls after the join and reports what they return, with the messages
 * and codes of a creation without this thread (and a thread that could not be started changes
 * nothing but the time).
 */
extern "C" {
#include "core/backend.h"
#include "core/clock.h"
}
#include <pthread.h>
#include <stdlib.h>

#include <cuda_runtime.h>

struct J2kiCudaWarm {
    pthread_t       thread;
    pthread_mutex_t mtx;
    pthread_cond_t  cond;
    int             gpu;
    int             driver_done;    /* under mtx: the driver has answered the device count */
    double          t_start, ms_driver, ms_context;
};

static void *warm_run(void *arg)
{
    J2kiCudaWarm *w = (J2kiCudaWarm *)arg;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);

    w->ms_driver = j2ki_now_ms() - w->t_start;
    pthread_mutex_lock(&w->mtx);
    w->driver_done = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mtx);
    if (e == cudaSuccess && w->gpu < n && cudaSetDevice(w->gpu) == cudaSuccess)
        (void)cudaFree(0);
    (void)cudaGetLastError();           /* this thread's own error state, which ends with it */
    w->ms_context = j2ki_now_ms() - w->t_start - w->ms_driver;
    return NULL;
}

extern "C" J2kiCudaWarm *j2ki_cuda_warm_start(int gpu)
{
    J2kiCudaWarm *w = (J2kiCudaWarm *)calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->gpu = gpu < 0 ? 0 : gpu;
    w->t_start = j2ki_now_ms();
    if (pthread_mutex_init(&w->mtx, NULL)) {
        free(w);
        return NULL;
    }
    if (pthread_cond_init(&w->cond, NULL)) {
        pthread_mutex_destroy(&w->mtx);
        free(w);
        return NULL;
    }
    if (pthread_create(&w->thread, NULL, warm_run, w)) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->mtx);
        free(w);
        return NULL;
    }
    return w;
}

extern "C" double j2ki_cuda_warm_driver(J2kiCudaWarm *w)
{
    double t0 = j2ki_now_ms();
    if (!w)
        return 0.0;
    pthread_mutex_lock(&w->mtx);
    while (!w->driver_done)
        pthread_cond_wait(&w->cond, &w->mtx);
    pthread_mutex_unlock(&w->mtx);
    return j2ki_now_ms() - t0;
}

extern "C" void j2ki_cuda_warm_join(J2kiCudaWarm **pw, J2kiCudaWarmTimes *t)
{
    J2kiCudaWarm *w = pw ? *pw : NULL;
    double t0 = j2ki_now_ms();
    if (!w)
        return;
    pthread_join(w->thread, NULL);
    if (t) {
        t->waited = j2ki_now_ms() - t0;
        t->driver = w->ms_driver;
        t->context = w->ms_context;
    }
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mtx);
    free(w);
    *pw = NULL;
}
