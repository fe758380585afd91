/*
 * The CUDA driver, loaded at run time: the CUDA backend's one way to the GPU.
 *
 * Why (issue 31): a library linked with NVIDIA's CUDA runtime, or with libcuda, carries NVIDIA's
 * terms into every program built with it, and a GPL build of FFmpeg with such a library cannot
 * be redistributed. The driver itself (libcuda.so.1) is part of the NVIDIA display driver that
 * every machine with a GPU has; a program that opens it at run time needs nothing of NVIDIA's
 * at link time, and on a machine without it the library still loads and the encoder runs on the
 * reference backend. FFmpeg's own GPU code does the same through nv-codec-headers (ffnvcodec:
 * cuda_load_functions fills a CudaFunctions table with dlsym); this loader follows that model,
 * written for this library (no code copied), with two differences:
 *  - every function but the entry point comes from cuGetProcAddress_v2 at the ABI version the
 *    toolkit's <cudaTypedefs.h> names for it (PFN_cuMemAlloc_v3020: version 3020), so that a
 *    newer driver hands out the ABI this code was written against, never a later one whose
 *    arguments differ (cuGetProcAddress, without _v2, for drivers before CUDA 12.0);
 *  - the legacy default stream is asked for explicitly (CU_GET_PROC_ADDRESS_LEGACY_STREAM):
 *    stream 0 means what it meant to the runtime build.
 * The SDK's headers (cuda.h, cudaTypedefs.h) are needed at build time only; nothing links
 * libcuda.
 *
 * The driver is loaded once per process (pthread_once): dlopen("libcuda.so.1"), the table,
 * cuDriverGetVersion, cuInit(0). It fails, J2KC_ERR_NODEV, when there is no driver (the message
 * names the library and dlerror()), when the driver is older than the CUDA version this build
 * needs (J2KI_CU_DRIVER_NEEDED, the building toolkit's CUDA_VERSION: its code objects and the
 * ABI versions of the table; the message names both versions), or when cuInit fails (no GPU).
 * The test hook J2KC_CUDA_DRIVER (core/hooks.h) opens another file instead of libcuda.so.1.
 *
 * Use: j2ki_cu_load(log) == 0 first (it logs the failure each time it is asked), then
 * J2KI_CUFN(cuMemAlloc)(...): the table is written once, inside pthread_once, and only read
 * after it.
 */
#ifndef J2KI_CU_DRIVER_H
#define J2KI_CU_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "core/j2ki.h"

/** The oldest driver this build runs on, as cuDriverGetVersion reports it (1000 * major + 10 *
 *  minor): the CUDA version of the toolkit that compiled the library's code objects. */
#define J2KI_CU_DRIVER_NEEDED CUDA_VERSION

/* Every driver function the library calls, with the ABI version of its <cudaTypedefs.h>
 * typedef (PFN_<name>_v<version>). The last group is the embedded code's: its library loaded
 * once per process (cuLibraryLoadData, context-independent, CUDA 12.0), the kernels looked up
 * by entry name, configured, queried and launched. */
#define J2KI_CU_FUNCS(X)                                                                           \
    X(cuGetErrorName, 6000)             X(cuGetErrorString, 6000)                                 \
    X(cuDeviceGetCount, 2000)           X(cuDeviceGet, 2000)                                      \
    X(cuDeviceGetName, 2000)            X(cuDeviceGetAttribute, 2000)                             \
    X(cuDeviceTotalMem, 3020)                                                                      \
    X(cuDevicePrimaryCtxRetain, 7000)                                                              \
    X(cuCtxPushCurrent, 4000)           X(cuCtxPopCurrent, 4000)                                  \
    X(cuCtxGetDevice, 2000)                                                                        \
    X(cuMemAlloc, 3020)                 X(cuMemFree, 3020)                                        \
    X(cuMemHostAlloc, 2020)             X(cuMemFreeHost, 2000)                                    \
    X(cuMemGetInfo, 3020)               X(cuPointerGetAttributes, 7000)                           \
    X(cuMemcpyHtoD, 3020)               X(cuMemcpyHtoDAsync, 3020)                                \
    X(cuMemcpyDtoHAsync, 3020)          X(cuMemcpyDtoDAsync, 3020)                                \
    X(cuMemcpy2DAsync, 3020)            X(cuMemsetD8, 3020)                                       \
    X(cuMemsetD8Async, 3020)            X(cuMemcpy3DPeerAsync, 4000)                              \
    X(cuStreamCreate, 2000)             X(cuStreamDestroy, 4000)                                  \
    X(cuStreamSynchronize, 2000)        X(cuStreamWaitEvent, 3020)                                \
    X(cuStreamBeginCapture, 10010)      X(cuStreamEndCapture, 10000)                              \
    X(cuEventCreate, 2000)              X(cuEventDestroy, 4000)                                   \
    X(cuEventRecord, 2000)              X(cuEventRecordWithFlags, 11010)                          \
    X(cuEventSynchronize, 2000)         X(cuEventElapsedTime, 12080)                              \
    X(cuGraphInstantiateWithFlags, 11040) X(cuGraphDestroy, 10000)                                \
    X(cuGraphExecDestroy, 10000)        X(cuGraphLaunch, 10000)                                   \
    X(cuLibraryLoadData, 12000)         X(cuLibraryUnload, 12000)                                 \
    X(cuLibraryGetKernelCount, 12040)   X(cuLibraryEnumerateKernels, 12040)                       \
    X(cuKernelGetName, 12030)           X(cuKernelGetFunction, 12000)                             \
    X(cuKernelSetAttribute, 12000)      X(cuKernelGetAttribute, 12000)                            \
    X(cuLaunchKernel, 4000)                                                                        \
    X(cuLaunchCooperativeKernel, 9000)                                                             \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050)

#define J2KI_CU_FIELD(name, ver) PFN_##name##_v##ver name;
typedef struct J2kiCuDriver {
    int version;                        /* cuDriverGetVersion */
    PFN_cuInit_v2000 cuInit;
    PFN_cuDriverGetVersion_v2020 cuDriverGetVersion;
    J2KI_CU_FUNCS(J2KI_CU_FIELD)
} J2kiCuDriver;
#undef J2KI_CU_FIELD

#ifdef __cplusplus
extern "C" {
#endif

/** Loads the driver once per process; 0 when it is usable, else J2KC_ERR_NODEV, logged on log
 *  (may be NULL) at level (J2KC_LOG_ERROR for a backend asked for, lower for backend=auto's
 *  probe). Thread-safe; later calls only return (and log) the first one's result. */
int j2ki_cu_load(const J2kiLog *log, int level);

/** The table, filled by a successful j2ki_cu_load (read only after one). */
extern J2kiCuDriver j2ki_cu_tab;

#ifdef __cplusplus
}
#endif

#define J2KI_CUFN(name) (j2ki_cu_tab.name)

/** A device pointer of the library's (void *, as the kernels take them) as the driver's. */
static inline CUdeviceptr j2ki_dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

#endif /* J2KI_CU_DRIVER_H */
