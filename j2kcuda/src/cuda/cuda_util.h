/*
 * The one wrapper around every CUDA runtime and driver call of the library.
 *
 *   ret = J2KI_CUDA(log, &broken, cudaStreamCreate(&st));
 *
 * evaluates the call once; on failure it logs the call's text, file:line and the CUDA error's
 * name and text, maps the error to a J2KC_ERR_* code and, when `sticky` is not NULL, stores
 * that code there (the first one only), which is how a backend marks itself broken:
 *   cudaErrorMemoryAllocation                         -> J2KC_ERR_DEVMEM
 *   no device, no/old driver, invalid device ordinal  -> J2KC_ERR_NODEV
 *   anything else                                     -> J2KC_ERR_CUDA
 * Driver-API calls (CUresult) go through J2KI_CUDRV with the same rules.
 * Only CUDA sources include this header.
 */
#ifndef J2KI_CUDA_UTIL_H
#define J2KI_CUDA_UTIL_H

#include <cuda.h>
#include <cuda_runtime.h>

#include "core/j2ki.h"

static inline int j2ki_cuda_map(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:                    return 0;
    case cudaErrorMemoryAllocation:      return J2KC_ERR_DEVMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorStubLibrary:
    case cudaErrorNoKernelImageForDevice: return J2KC_ERR_NODEV;
    default:                             return J2KC_ERR_CUDA;
    }
}

static inline int j2ki_cuda_check(const J2kiLog *log, int *sticky, cudaError_t e,
                                  const char *text, const char *file, int line)
{
    int ret;
    if (e == cudaSuccess)
        return 0;
    ret = j2ki_cuda_map(e);
    j2ki_log(log, J2KC_LOG_ERROR, "CUDA: %s failed at %s:%d: %s (%s)", text, file, line,
             cudaGetErrorName(e), cudaGetErrorString(e));
    if (sticky && !*sticky)
        *sticky = ret;
    return ret;
}

static inline int j2ki_cudrv_check(const J2kiLog *log, int *sticky, CUresult e,
                                   const char *text, const char *file, int line)
{
    int ret;
    if (e == CUDA_SUCCESS)
        return 0;
    switch (e) {
    case CUDA_ERROR_OUT_OF_MEMORY:      ret = J2KC_ERR_DEVMEM; break;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED: ret = J2KC_ERR_NODEV; break;
    default:                            ret = J2KC_ERR_CUDA; break;
    }
    j2ki_log(log, J2KC_LOG_ERROR, "CUDA driver: %s failed at %s:%d: error %d", text, file, line, (int)e);
    if (sticky && !*sticky)
        *sticky = ret;
    return ret;
}

#define J2KI_CUDA(log, sticky, call)  j2ki_cuda_check((log), (sticky), (call), #call, __FILE__, __LINE__)
#define J2KI_CUDRV(log, sticky, call) j2ki_cudrv_check((log), (sticky), (call), #call, __FILE__, __LINE__)

/** cudaMalloc (of at least one byte) through the fault injection of cuda_fault.h: every device
 *  allocation of the library goes through it. */
cudaError_t j2ki_cuda_malloc(void **p, size_t n);

/** cudaMallocHost (of at least one byte) through the fault injection of cuda_fault.h: every
 *  page-locked host allocation of the library goes through it. */
cudaError_t j2ki_cuda_malloc_host(void **p, size_t n);

/** The faults cuda_fault.h injects into a frame's enqueue on stream st; cudaSuccess when none is
 *  armed. */
cudaError_t j2ki_cuda_fault_enqueue(cudaStream_t st);

#endif /* J2KI_CUDA_UTIL_H */
