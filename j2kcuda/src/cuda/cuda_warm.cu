/*
 * The CUDA driver and the device's context made ahead (start-up time, issue 26). Loading and
 * initialising the driver (cu_driver.h: dlopen, cuInit) and making the device's primary
 * context are most of an encoder's creation. Both depend on nothing the encoder plans, so a
 * thread of its own makes them (the loader and cuDeviceGetCount, then the encoder's device's
 * primary context, cu_primary.h, and the embedded device code's loading, cu_code.h) while the
 * creating thread plans and builds the host tables; the backend joins it before its first call
 * on the device, and creation costs the longer of the two instead of their sum.
 *
 * The thread only makes them early and hands nothing over: the driver, the primary context
 * and the code are each kept once per process, and the backend asks for them again after the
 * join and gets the same ones at once. Its errors are not reported: the backend's own calls
 * report what they return, with the messages and codes of a creation without this thread (and
 * a thread that could not be started changes nothing but the time).
 */
extern "C" {
#include "core/backend.h"
#include "core/clock.h"
}
#include <pthread.h>
#include <stdlib.h>

#include "cuda/cu_code.h"
#include "cuda/cu_primary.h"

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
    int n = 0, ok = j2ki_cu_load(NULL, 0) == 0 && J2KI_CUFN(cuDeviceGetCount)(&n) == CUDA_SUCCESS;
    CUcontext ctx;

    w->ms_driver = j2ki_now_ms() - w->t_start;
    pthread_mutex_lock(&w->mtx);
    w->driver_done = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mtx);
    if (ok && w->gpu < n)
        (void)j2ki_cu_primary(w->gpu, &ctx);
    /* the embedded device code too (cu_code.h), loaded once per process */
    if (ok)
        (void)j2ki_cu_code_load(NULL, 0);
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
