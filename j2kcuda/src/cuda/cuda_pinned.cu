/* Page-locked host memory detection (cuda_pinned.h). */
#include <cuda_runtime_api.h>

#include "cuda/cuda_pinned.h"

extern "C" int j2ki_cuda_host_pinned(const void *p)
{
    cudaPointerAttributes a;
    if (!p)
        return 0;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();                   /* not an error: plain pageable memory */
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}
