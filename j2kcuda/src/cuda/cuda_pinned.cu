/* Page-locked host memory detection (cuda_pinned.h). */
#include "cuda/cu_driver.h"
#include "cuda/cuda_pinned.h"

/* CU_POINTER_ATTRIBUTE_MEMORY_TYPE answers CU_MEMORYTYPE_HOST for page-locked memory
 * (cuMemHostAlloc, cuMemHostRegister, the runtime's cudaHostAlloc and cudaHostRegister) and
 * fails with CUDA_ERROR_INVALID_VALUE for plain pageable memory, which is no error here; the
 * driver keeps no error state of it. */
extern "C" int j2ki_cuda_host_pinned(const void *p)
{
    unsigned int type = 0;
    if (!p || j2ki_cu_load(NULL, 0) < 0)
        return 0;
    if (J2KI_CUFN(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, j2ki_dptr(p)) != CUDA_SUCCESS)
        return 0;
    return type == CU_MEMORYTYPE_HOST;
}
