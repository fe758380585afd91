/*
 * The launch module (cuda_launch.h): the table of kernels.def and the runtime calls that
 * launch, configure and query a kernel by id. The kernels' entries are defined in the
 * device-only files (*_kern.cu); here each is only declared, by name, to take the address of
 * the host stub the runtime registered for it. The parameter struct travels as the single
 * kernel argument, so its layout is the kernel header's alone and this module needs none of
 * the stages' types.
 */
#include "cuda/cuda_launch.h"

/* The entries' host stubs (C linkage: the symbol is the entry name, whatever the parameter). */
extern "C" {
#define J2KI_KERNEL(id, entry, params, coop) void entry(void);
#include "cuda/kernels.def"
#undef J2KI_KERNEL
}

typedef struct KernelEntry {
    const void *stub;       /* the runtime's handle of the kernel: its host stub */
    const char *name;       /* the entry name */
    int         coop;       /* launched cooperatively */
} KernelEntry;

static const KernelEntry kernels[J2KI_K_COUNT] = {
#define J2KI_KERNEL(id, entry, params, coop) { (const void *)entry, #entry, coop },
#include "cuda/kernels.def"
#undef J2KI_KERNEL
};

extern "C" cudaError_t j2ki_cuda_launch(J2kiKernelId id, dim3 grid, dim3 block, size_t smem, cudaStream_t st,
                                        const void *params)
{
    void *args[1] = { (void *)params };
    if ((unsigned)id >= J2KI_K_COUNT)
        return cudaErrorInvalidDeviceFunction;
    if (kernels[id].coop)
        return cudaLaunchCooperativeKernel(kernels[id].stub, grid, block, args, smem, st);
    return cudaLaunchKernel(kernels[id].stub, grid, block, args, smem, st);
}

extern "C" cudaError_t j2ki_cuda_kernel_max_smem(J2kiKernelId id, int smem)
{
    if ((unsigned)id >= J2KI_K_COUNT)
        return cudaErrorInvalidDeviceFunction;
    return cudaFuncSetAttribute(kernels[id].stub, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
}

extern "C" cudaError_t j2ki_cuda_kernel_occupancy(J2kiKernelId id, int threads, size_t smem, int *per_sm)
{
    if ((unsigned)id >= J2KI_K_COUNT)
        return cudaErrorInvalidDeviceFunction;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernels[id].stub, threads, smem);
}

extern "C" const char *j2ki_cuda_kernel_entry(J2kiKernelId id)
{
    return (unsigned)id < J2KI_K_COUNT ? kernels[id].name : "?";
}
