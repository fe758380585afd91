/*
 * The one way the library launches a kernel (issue 31): every kernel is an extern "C"
 * __global__ entry in a device-only file (*_kern.cu) taking one parameter struct by value
 * (the stage's *_kern.h, shared by the kernel and the host code that fills it), named once
 * in kernels.def, and launched here by id. Call sites never name a kernel's symbol, so the
 * way kernels are found (today the runtime's registered host stubs; next, a module of
 * embedded code looked up by entry name and launched through the driver API) changes in
 * this module alone.
 *
 * Launches are enqueued on the given stream like <<<>>> (stream capture records them the same
 * way). The returned error is the launch's own (configuration, resources); execution errors
 * surface at the stream's next synchronisation, as before. Call sites pass it to J2KI_CUDA.
 */
#ifndef J2KI_CUDA_LAUNCH_H
#define J2KI_CUDA_LAUNCH_H

#include <cuda_runtime_api.h>

/** The library's kernels: J2KI_K_<ID> for each line of kernels.def. */
typedef enum J2kiKernelId {
#define J2KI_KERNEL(id, entry, params, coop) J2KI_K_##id,
#include "cuda/kernels.def"
#undef J2KI_KERNEL
    J2KI_K_COUNT
} J2kiKernelId;

#ifdef __cplusplus
extern "C" {
#endif

/** Launches kernel id over grid x block threads with smem bytes of dynamic shared memory on
 *  stream st; params points to its parameter struct (copied at the call). Cooperative
 *  kernels (kernels.def) go through a cooperative launch. */
cudaError_t j2ki_cuda_launch(J2kiKernelId id, dim3 grid, dim3 block, size_t smem, cudaStream_t st,
                             const void *params);

/** Allows kernel id up to smem bytes of dynamic shared memory (the opt-in above 48 KiB). */
cudaError_t j2ki_cuda_kernel_max_smem(J2kiKernelId id, int smem);

/** Thread blocks of kernel id, of `threads` threads and smem bytes of dynamic shared memory,
 *  that one SM holds at once (*per_sm). */
cudaError_t j2ki_cuda_kernel_occupancy(J2kiKernelId id, int threads, size_t smem, int *per_sm);

/** The entry name of kernel id (kernels.def). */
const char *j2ki_cuda_kernel_entry(J2kiKernelId id);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_CUDA_LAUNCH_H */
