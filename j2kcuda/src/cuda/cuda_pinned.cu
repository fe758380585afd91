/* Page-locked host memory detection (cuda_pinned.h). */
#include "cuda/cu_driver.h"
#include "cuda/cuda_pinned.h"

/* CU_POINTER_ATTRIBUTE_MEMORY_TYPE is CU_MEMORYTYPE_HOST for page-locked memory (cuMemHostAlloc,
 * cuMemHostRegister, the runtime's cudaHostAlloc and cudaHostRegister). Asked of plain pageable
 * memory, cuPointerGetAttribute fails with CUDA_ERROR_INVALID_VALUE, an API error that tools
 * such as compute-sanitizer report on every frame; cuPointerGetAttributes answers it with
 * CUDA_SUCCESS and the attribute's null value (0, no memory type) instead. */
extern "C" int j2ki_cuda_host_pinned(const void *p)
{
    unsigned int type = 0;
    CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    void *data = &type;
    if (!p || j2ki_cu_load(NULL, 0) < 0)
        return 0;
    if (J2KI_CUFN(cuPointerGetAttributes)(1, &attr, &data, j2ki_dptr(p)) != CUDA_SUCCESS)
        return 0;
    return type == CU_MEMORYTYPE_HOST;
}
