/*
 * Stand-in for the CUDA toolkit's <cuda_runtime_api.h> in the clang build of the kernels
 * (./configure --cuda-compiler=clang; doc/ffmpeg.md): clang compiles the device-only files
 * (j2kcuda/src/cuda, *_kern.cu) with -nocudainc -nocudalib, so no header or library of NVIDIA's
 * SDK is read. CCCL's headers (CUB's block primitives) include this name unconditionally for
 * the toolkit's version and a few host-side types; their device code needs none of the
 * runtime's functions. The kernels themselves make no runtime call (tests/layering.sh).
 *
 * The names and values below are the runtime API's documented interface (types, error codes,
 * the attribute enum values CCCL names), declared here from that documentation.
 */
#ifndef J2KI_COMPAT_CUDA_RUNTIME_API_H
#define J2KI_COMPAT_CUDA_RUNTIME_API_H

#include <stddef.h>

/* CUDA_VERSION and CUDART_VERSION: j2ki_clang_cuda.h (pre-included) */
#include "j2ki_clang_cuda.h"

typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999
} cudaError_t;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

/* shared-memory bank size (CUB's BlockRadixRank takes one as a template parameter) */
enum cudaSharedMemConfig {
    cudaSharedMemBankSizeDefault = 0,
    cudaSharedMemBankSizeFourByte = 1,
    cudaSharedMemBankSizeEightByte = 2
};

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};

#endif /* J2KI_COMPAT_CUDA_RUNTIME_API_H */
