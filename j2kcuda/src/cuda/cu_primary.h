/*
 * A device's primary context, kept for the life of the process (issue 31): the one function
 * through which the CUDA backend and its context thread (cuda_warm.cu) get the context of an
 * encoder that is not given an application's (j2kc_params_set_cuda). An application's
 * own context is never retained or released by the library.
 */
#ifndef J2KI_CU_PRIMARY_H
#define J2KI_CU_PRIMARY_H

#include "cuda/cu_driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Device dev's (ordinal) primary context in *ctx, the one the CUDA runtime uses too: retained
 *  (cuDevicePrimaryCtxRetain) at the first successful call for that device, and the same
 *  context returned by every later one. CUDA_SUCCESS, or the driver's error (*ctx NULL; a later
 *  call tries again). After a successful j2ki_cu_load; thread-safe: a caller asking for a
 *  device that another is retaining waits for its answer.
 *
 *  The reference is never released: as the runtime kept the primary context when the library
 *  linked it, so that encoders created one after another, or side by side, share one context
 *  and the device code loaded into it, instead of the driver destroying both when the last
 *  encoder goes and making them again for the next one (the context and the code's loading are
 *  most of a creation's time). The driver frees the context when the process ends. The context
 *  thread of a creation (cuda_warm.cu) asks first, so that the context is made while the
 *  creating thread plans; the backend (backend_cuda.cu) asks again and gets the same context;
 *  neither holds a reference of its own. */
CUresult j2ki_cu_primary(int dev, CUcontext *ctx);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_CU_PRIMARY_H */
