/*
 * Fault injection for the GPU reliability tests (tests/cuda_faults.cu).
 *
 * A test arms one kind of fault for the n-th event of that kind from now on; the library's
 * call sites ask j2ki_cuda_fault_hit() and fail there as the real fault would. Nothing in the
 * library or its tools arms a fault; in use each hook costs two relaxed atomic operations (a
 * load and the count).
 *
 *   J2KI_FAULT_DEV_ALLOC  the n-th device allocation (j2ki_cuda_malloc) fails with
 *                         CUDA_ERROR_OUT_OF_MEMORY, as on a full device;
 *   J2KI_FAULT_SUBMIT     the n-th frame submitted fails its enqueue with a CUDA error that
 *                         leaves the context usable (cudaErrorLaunchOutOfResources);
 *   J2KI_FAULT_TRAP       the n-th frame submitted launches a kernel that traps: a sticky
 *                         error, after which the driver refuses every call of the context;
 *   J2KI_FAULT_HOST_ALLOC the n-th page-locked host allocation (j2ki_cuda_malloc_host) fails
 *                         with CUDA_ERROR_OUT_OF_MEMORY, as when the host cannot lock more
 *                         memory (every slot's on the preparer thread);
 *   J2KI_FAULT_CODE_LOAD  the n-th image of the embedded device code that a load asks the
 *                         driver for (cu_code.cu), and every later one until the kind is
 *                         disarmed, fails with CUDA_ERROR_OUT_OF_MEMORY, the images before it
 *                         loaded: the load unloads them and fails, and the next load tries
 *                         again. The fault stays, as a full device's does: the context thread
 *                         (cuda_warm.cu) and the creation after it both load, and both fail.
 *
 * The counters are process-wide (a test arms them between encoders' calls); every access is
 * atomic, so encoders of other threads may run meanwhile.
 */
#ifndef J2KI_CUDA_FAULT_H
#define J2KI_CUDA_FAULT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { J2KI_FAULT_DEV_ALLOC, J2KI_FAULT_SUBMIT, J2KI_FAULT_TRAP, J2KI_FAULT_HOST_ALLOC, J2KI_FAULT_CODE_LOAD,
       J2KI_NB_FAULTS };

/** Arms fault kind for its n-th event from now (n >= 1), or disarms it (n = 0); either way the
 *  kind's event count restarts at 0. */
void j2ki_cuda_fault_arm(int kind, int n);

/** The events of kind counted since it was last armed or disarmed. */
int j2ki_cuda_fault_events(int kind);

/** Counts one event of kind; 1 when it is the armed one (the caller fails there). */
int j2ki_cuda_fault_hit(int kind);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_CUDA_FAULT_H */
