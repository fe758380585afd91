/*
 * Stand-in for the driver API's <cuda.h> in the clang build of the kernels (j2ki_clang_cuda.h):
 * the stage headers the device-only files share with the host code (cuda/dwt_cuda.h ...)
 * declare their host functions with the driver's CUresult and CUstream; the device code uses
 * neither. The host files are compiled against the driver API's real header (Makefile).
 */
#ifndef J2KI_COMPAT_CUDA_H
#define J2KI_COMPAT_CUDA_H

#include "j2ki_clang_cuda.h"

typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

#endif /* J2KI_COMPAT_CUDA_H */
