/*
 * The launch module (cuda_launch.h) on the CUDA driver: the table of kernels.def, each entry
 * looked up by name in the embedded device code (cu_code.h) once per process. The handles
 * are CUkernel (listed by cuLibraryEnumerateKernels at load): context-independent, so one table serves every encoder
 * and device of the process; the driver loads a kernel's code into a context when it is
 * first used there (j2ki_cuda_kernels_ready does it at creation, so that a GPU the code cannot
 * run on is refused then, not at the first frame). cuLaunchKernel and
 * cuLaunchCooperativeKernel take a CUkernel where they take a CUfunction (CUDA 12.0); the
 * per-device shared-memory limit goes through cuKernelSetAttribute (once per creation, at
 * j2ki_cuda_kernels_ready), the occupancy query through the
 * context's CUfunction (cuKernelGetFunction). The parameter struct travels as the single
 * kernel argument, so its layout is the kernel header's alone and this module needs none of
 * the stages' types. Host code only.
 */
#include <pthread.h>

#include "core/tuning.h"

#include "cuda/cu_code.h"
#include "cuda/cuda_launch.h"
#include "cuda/cuda_util.h"

typedef struct KernelEntry {
    const char *name;       /* the entry name */
    int         coop;       /* launched cooperatively */
} KernelEntry;

static const KernelEntry kernels[J2KI_K_COUNT] = {
#define J2KI_KERNEL(id, entry, params, coop) { #entry, coop },
#include "cuda/kernels.def"
#undef J2KI_KERNEL
};

/* written once inside find_once, read after it (pthread_once orders them) */
static CUkernel handles[J2KI_K_COUNT];
static pthread_once_t find_once_ctl = PTHREAD_ONCE_INIT;
static int missing = -1;                  /* the first entry not found, or -1 */

static void find_once(void)
{
    CUkernel k[J2KI_K_COUNT];
    for (int i = 0; i < J2KI_K_COUNT; i++)
        if (j2ki_cu_code_kernel(kernels[i].name, &k[i]) != CUDA_SUCCESS) {
            missing = i;
            return;
        }
    /* all or none: a launch before a successful lookup fails cleanly */
    for (int i = 0; i < J2KI_K_COUNT; i++)
        handles[i] = k[i];
}

/*
 * Lets every kernel use, on the current context's device, all the dynamic shared memory that
 * a thread block of the device may opt into (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_
 * OPTIN less the kernel's static shared memory), above the J2KI_CUDA_SMEM_DEFAULT a launch
 * gets without opting in.
 *
 * Why once here and not per launch: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES belongs
 * to the kernel on the device, for the whole process, so an encoder that set it to its own
 * launch's size could lower it under another encoder's launch (other code-block sizes)
 * between that one's set and its launch. The attribute is a permission, not a reservation:
 * what a launch occupies is the size it passes (cuLaunchKernel's sharedMemBytes, and the
 * occupancy queries take it too), so allowing the device's maximum costs nothing, and the
 * callers already size their launches within it (t1_smem_optin). One value per kernel and
 * device that no one changes afterwards needs no lock and no per-launch driver call, and
 * holds for graphs replayed later. Every creation on a device sets the same values again,
 * so concurrent creations agree. A device that allows no more than the default is left as
 * it is.
 */
static int allow_optin_smem(const J2kiLog *log)
{
    CUdevice dev;
    CUresult e;
    int optin = 0;
    if ((e = J2KI_CUFN(cuCtxGetDevice)(&dev)) != CUDA_SUCCESS ||
        (e = J2KI_CUFN(cuDeviceGetAttribute)(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                             dev)) != CUDA_SUCCESS)
        return j2ki_cudrv_check(log, NULL, e, "the device's opt-in shared memory", __FILE__, __LINE__);
    if (optin <= J2KI_CUDA_SMEM_DEFAULT)
        return 0;
    for (int i = 0; i < J2KI_K_COUNT; i++) {
        int stat = 0;
        if ((e = J2KI_CUFN(cuKernelGetAttribute)(&stat, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, handles[i], dev)) !=
            CUDA_SUCCESS)
            return j2ki_cudrv_check(log, NULL, e, kernels[i].name, __FILE__, __LINE__);
        if ((e = J2KI_CUFN(cuKernelSetAttribute)(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - stat,
                                                 handles[i], dev)) != CUDA_SUCCESS)
            return j2ki_cudrv_check(log, NULL, e, kernels[i].name, __FILE__, __LINE__);
    }
    return 0;
}

extern "C" int j2ki_cuda_kernels_ready(const J2kiLog *log)
{
    int ret;
    if ((ret = j2ki_cu_code_load(log, J2KC_LOG_ERROR)) < 0)
        return ret;
    pthread_once(&find_once_ctl, find_once);
    if (missing >= 0) {
        j2ki_log(log, J2KC_LOG_ERROR, "CUDA: the library's embedded GPU code has no kernel %s",
                 kernels[missing].name);
        return J2KC_ERR_INTERNAL;
    }
    /* every image is checked: each kernel file is its own image, and a GPU may have SASS in
     * none of them while the PTX of one is too new for the driver */
    for (int i = 0; i < J2KI_K_COUNT; i++)
        if ((ret = j2ki_cu_code_check(log, handles[i])) < 0)
            return ret;
    return allow_optin_smem(log);
}

extern "C" CUresult j2ki_cuda_launch(J2kiKernelId id, dim3 grid, dim3 block, size_t smem, CUstream st,
                                     const void *params)
{
    void *args[1] = { (void *)params };
    if ((unsigned)id >= J2KI_K_COUNT || !handles[id])
        return CUDA_ERROR_INVALID_HANDLE;
    if (kernels[id].coop)
        return J2KI_CUFN(cuLaunchCooperativeKernel)((CUfunction)handles[id], grid.x, grid.y, grid.z, block.x,
                                                    block.y, block.z, (unsigned)smem, st, args);
    return J2KI_CUFN(cuLaunchKernel)((CUfunction)handles[id], grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                     (unsigned)smem, st, args, NULL);
}

extern "C" CUresult j2ki_cuda_kernel_occupancy(J2kiKernelId id, int threads, size_t smem, int *per_sm)
{
    CUfunction f;
    CUresult e;
    if ((unsigned)id >= J2KI_K_COUNT || !handles[id])
        return CUDA_ERROR_INVALID_HANDLE;
    if ((e = J2KI_CUFN(cuKernelGetFunction)(&f, handles[id])) != CUDA_SUCCESS)
        return e;
    return J2KI_CUFN(cuOccupancyMaxActiveBlocksPerMultiprocessor)(per_sm, f, threads, smem);
}

extern "C" const char *j2ki_cuda_kernel_entry(J2kiKernelId id)
{
    return (unsigned)id < J2KI_K_COUNT ? kernels[id].name : "?";
}
