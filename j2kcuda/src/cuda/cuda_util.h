/*
 * The one wrapper around every CUDA driver call of the library (cu_driver.h):
 *
 *   ret = J2KI_CUDRV(log, &broken, J2KI_CUFN(cuStreamCreate)(&st, CU_STREAM_NON_BLOCKING));
 *
 * evaluates the call once; on failure it logs the call's text, file:line and the CUDA error's
 * name and text (cuGetErrorName, cuGetErrorString), maps the error to a J2KC_ERR_* code and,
 * when `sticky` is not NULL, stores that code there (the first one only), which is how a
 * backend marks itself broken:
 *   CUDA_ERROR_OUT_OF_MEMORY                                   -> J2KC_ERR_DEVMEM
 *   no device, no/old driver, invalid device, no code for the GPU -> J2KC_ERR_NODEV
 *   anything else                                              -> J2KC_ERR_CUDA
 * J2KI_CU(log, sticky, cuStreamCreate, &st, CU_STREAM_NON_BLOCKING) is the same call by name.
 * Kernel launches (cuda_launch.h) and the stages' launchers return CUresult too: the library
 * makes no CUDA runtime call (issue 31).
 * Only CUDA sources include this header.
 */
#ifndef J2KI_CUDA_UTIL_H
#define J2KI_CUDA_UTIL_H

#include <cuda.h>

#include "core/j2ki.h"
#include "cuda/cu_driver.h"

static inline int j2ki_cudrv_map(CUresult e)
{
    switch (e) {
    case CUDA_SUCCESS:                          return 0;
    case CUDA_ERROR_OUT_OF_MEMORY:              return J2KC_ERR_DEVMEM;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:          return J2KC_ERR_NODEV;
    default:                                    return J2KC_ERR_CUDA;
    }
}

/** The driver's name and text of e ("?" when the driver is not loaded). */
static inline void j2ki_cudrv_names(CUresult e, const char **name, const char **text)
{
    *name = *text = NULL;
    if (J2KI_CUFN(cuGetErrorName)) {
        J2KI_CUFN(cuGetErrorName)(e, name);
        J2KI_CUFN(cuGetErrorString)(e, text);
    }
    if (!*name)
        *name = "?";
    if (!*text)
        *text = "?";
}

static inline int j2ki_cudrv_check(const J2kiLog *log, int *sticky, CUresult e,
                                   const char *text, const char *file, int line)
{
    const char *ename, *etext;
    int ret;
    if (e == CUDA_SUCCESS)
        return 0;
    ret = j2ki_cudrv_map(e);
    j2ki_cudrv_names(e, &ename, &etext);
    j2ki_log(log, J2KC_LOG_ERROR, "CUDA: %s failed at %s:%d: %s (%s)", text, file, line, ename, etext);
    if (sticky && !*sticky)
        *sticky = ret;
    return ret;
}

#define J2KI_CUDRV(log, sticky, call) j2ki_cudrv_check((log), (sticky), (call), #call, __FILE__, __LINE__)
/* A driver function of the table by name: J2KI_CU(log, sticky, cuMemsetD8Async, p, 0, n, st). */
#define J2KI_CU(log, sticky, fn, ...)                                                          \
    j2ki_cudrv_check((log), (sticky), J2KI_CUFN(fn)(__VA_ARGS__), #fn "(" #__VA_ARGS__ ")", \
                     __FILE__, __LINE__)

/** cuMemAlloc (of at least one byte, zeroed) through the fault injection of cuda_fault.h:
 *  every device allocation of the library goes through it. */
CUresult j2ki_cuda_malloc(void **p, size_t n);

/** cuMemFree of a pointer of j2ki_cuda_malloc's; NULL: nothing. */
void j2ki_cuda_free(void *p);

/** Page-locked host memory (of at least one byte; cuMemHostAlloc, portable) through the fault
 *  injection of cuda_fault.h: every page-locked host allocation of the library goes through
 *  it. */
CUresult j2ki_cuda_malloc_host(void **p, size_t n);

/** cuMemFreeHost of a pointer of j2ki_cuda_malloc_host's; NULL: nothing. */
void j2ki_cuda_free_host(void *p);

/** The faults cuda_fault.h injects into a frame's enqueue on stream st: a launch error (the
 *  trap is a kernel launch), CUDA_SUCCESS when none is armed. */
CUresult j2ki_cuda_fault_enqueue(CUstream st);

#endif /* J2KI_CUDA_UTIL_H */
