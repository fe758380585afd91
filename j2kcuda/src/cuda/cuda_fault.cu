/*
 * Fault injection for the GPU reliability tests: the counters of cuda_fault.h, the device
 * allocation every CUDA stage makes through, and the launch of the trapping kernel (fault_kern.cu).
 */
#include "cuda/cuda_fault.h"
#include "cuda/cuda_launch.h"
#include "cuda/cuda_util.h"
#include "cuda/fault_kern.h"

static int fault_at[J2KI_NB_FAULTS];      /* 0: disarmed; n: the n-th event fails (cuda_fault.h) */
static int fault_events[J2KI_NB_FAULTS];

extern "C" void j2ki_cuda_fault_arm(int kind, int n)
{
    __atomic_store_n(&fault_events[kind], 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fault_at[kind], n, __ATOMIC_SEQ_CST);
}

extern "C" int j2ki_cuda_fault_events(int kind)
{
    return __atomic_load_n(&fault_events[kind], __ATOMIC_SEQ_CST);
}

extern "C" int j2ki_cuda_fault_hit(int kind)
{
    int at = __atomic_load_n(&fault_at[kind], __ATOMIC_RELAXED);
    int k = __atomic_add_fetch(&fault_events[kind], 1, __ATOMIC_RELAXED);
    return at > 0 && (k == at || (k > at && kind == J2KI_FAULT_CODE_LOAD));
}

/*
 * Device memory starts zeroed, as calloc's does. Some kernels read whole 32-bit words of byte
 * lists (tier-1's symbol lists) or read a record before the write that makes it count (rate
 * control's per-layer sizing record, whose first comparison in a frame is overridden), so a
 * few bytes they read were never written. Those values never reach a result; zeroing once at
 * creation makes every read defined (compute-sanitizer initcheck) and a run independent of
 * what the memory held before. Allocations happen at creation only, so the synchronisation
 * (the slots' streams do not wait on the default stream) costs nothing per frame.
 */
CUresult j2ki_cuda_malloc(void **p, size_t n)
{
    CUdeviceptr d = 0;
    CUresult e;
    *p = NULL;
    if (j2ki_cuda_fault_hit(J2KI_FAULT_DEV_ALLOC))
        return CUDA_ERROR_OUT_OF_MEMORY;
    n = n ? n : 1;
    if ((e = J2KI_CUFN(cuMemAlloc)(&d, n)) != CUDA_SUCCESS)
        return e;
    /* cuMemsetD8 on the legacy default stream, then that stream's end: done before any use */
    if ((e = J2KI_CUFN(cuMemsetD8)(d, 0, n)) != CUDA_SUCCESS ||
        (e = J2KI_CUFN(cuStreamSynchronize)(CU_STREAM_LEGACY)) != CUDA_SUCCESS) {
        J2KI_CUFN(cuMemFree)(d);
        return e;
    }
    *p = (void *)(uintptr_t)d;
    return CUDA_SUCCESS;
}

void j2ki_cuda_free(void *p)
{
    if (p)
        J2KI_CUFN(cuMemFree)(j2ki_dptr(p));
}

/* Portable: usable from any context, as the runtime's page-locked memory is. */
CUresult j2ki_cuda_malloc_host(void **p, size_t n)
{
    *p = NULL;
    if (j2ki_cuda_fault_hit(J2KI_FAULT_HOST_ALLOC))
        return CUDA_ERROR_OUT_OF_MEMORY;
    return J2KI_CUFN(cuMemHostAlloc)(p, n ? n : 1, CU_MEMHOSTALLOC_PORTABLE);
}

void j2ki_cuda_free_host(void *p)
{
    if (p)
        J2KI_CUFN(cuMemFreeHost)(p);
}

CUresult j2ki_cuda_fault_enqueue(CUstream st)
{
    if (j2ki_cuda_fault_hit(J2KI_FAULT_TRAP)) {
        const J2kiFaultTrapParams p = { 0 };
        return j2ki_launch(j2ki_kernel<J2KI_K_FAULT_TRAP>, 1, 1, 0, st, p);
    }
    return j2ki_cuda_fault_hit(J2KI_FAULT_SUBMIT) ? CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES : CUDA_SUCCESS;
}
