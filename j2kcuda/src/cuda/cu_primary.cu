/* A device's primary context, retained once per process and kept (cu_primary.h): host code. */
#include <pthread.h>

#include "cuda/cu_primary.h"

/* The devices whose context is remembered here: more than a host has. A device beyond them
 * gets a reference of its own at each call, never released either: the same context for the
 * life of the process, only counted more than once by the driver. */
#define PRIMARY_DEVICES 64

static pthread_mutex_t primary_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t primary_cond = PTHREAD_COND_INITIALIZER;
static CUcontext primary_ctx[PRIMARY_DEVICES];          /* under primary_mtx */
static unsigned char primary_making[PRIMARY_DEVICES];   /* under primary_mtx: a call is retaining */

static CUresult primary_retain(int dev, CUcontext *ctx)
{
    CUdevice d;
    CUresult e = J2KI_CUFN(cuDeviceGet)(&d, dev);
    if (e == CUDA_SUCCESS)
        e = J2KI_CUFN(cuDevicePrimaryCtxRetain)(ctx, d);
    if (e != CUDA_SUCCESS)
        *ctx = NULL;
    return e;
}

extern "C" CUresult j2ki_cu_primary(int dev, CUcontext *ctx)
{
    CUcontext c = NULL;
    CUresult e;

    *ctx = NULL;
    if (dev < 0 || dev >= PRIMARY_DEVICES)
        return primary_retain(dev, ctx);
    /* the retain itself outside the lock: making one device's context (most of a creation) holds
     * up no other device's; a second caller for the same device waits for its answer */
    pthread_mutex_lock(&primary_mtx);
    while (primary_making[dev])
        pthread_cond_wait(&primary_cond, &primary_mtx);
    if (primary_ctx[dev]) {
        *ctx = primary_ctx[dev];
        pthread_mutex_unlock(&primary_mtx);
        return CUDA_SUCCESS;
    }
    primary_making[dev] = 1;
    pthread_mutex_unlock(&primary_mtx);

    e = primary_retain(dev, &c);

    pthread_mutex_lock(&primary_mtx);
    primary_ctx[dev] = c;
    primary_making[dev] = 0;
    pthread_cond_broadcast(&primary_cond);
    pthread_mutex_unlock(&primary_mtx);
    *ctx = c;
    return e;
}
