/*
 * The one way the library launches a kernel (issue 31): every kernel is an extern "C"
 * __global__ entry in a device-only file (*_kern.cu) taking one parameter struct by value
 * (the stage's *_kern.h, shared by the kernel and the host code that fills it), named once
 * in kernels.def, and launched here by id through the CUDA driver (cu_driver.h). Call sites
 * never name a kernel's symbol: the kernels are found by entry name in the library's
 * embedded device code (cu_code.h), once per process.
 *
 * Launches are enqueued on the given stream (cuLaunchKernel, or cuLaunchCooperativeKernel for
 * the kernels.def lines marked so); stream capture records them as kernel nodes the same way.
 * The returned CUresult is the launch's own (configuration, resources); execution errors
 * surface at the stream's next synchronisation. Call sites pass it to J2KI_CUDRV. The driver
 * keeps no "last error" of a thread, so a failed launch leaves nothing behind to clear.
 *
 * dim3 is the vector type of the CUDA headers (vector_types.h: a struct, no runtime call).
 */
#ifndef J2KI_CUDA_LAUNCH_H
#define J2KI_CUDA_LAUNCH_H

#include <stddef.h>
#include <cuda.h>
#include <vector_types.h>

#include "core/j2ki.h"

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

/** Loads the embedded device code and finds every kernel of kernels.def in it (once per
 *  process), then checks that the code runs on the current context's device (its code loaded
 *  into the context now): 0, else J2KC_ERR_NODEV (no code this GPU and driver can run: the
 *  message names the driver version, the device and the code built), J2KC_ERR_INTERNAL (an
 *  entry missing from the code) or J2KC_ERR_CUDA, logged on log. Then allows every kernel
 *  the device's opt-in maximum of dynamic shared memory (cuda_launch.cu says why once here),
 *  so that a launch may pass any size up to it. Called at the backend's creation, inside its
 *  context, before any launch. */
int j2ki_cuda_kernels_ready(const J2kiLog *log);

/** Launches kernel id over grid x block threads with smem bytes of dynamic shared memory on
 *  stream st; params points to its parameter struct (copied at the call). Call sites use the
 *  typed j2ki_launch below, which checks the struct at compile time. Cooperative
 *  kernels (kernels.def) go through a cooperative launch. CUDA_ERROR_INVALID_HANDLE before
 *  j2ki_cuda_kernels_ready. */
CUresult j2ki_cuda_launch(J2kiKernelId id, dim3 grid, dim3 block, size_t smem, CUstream st, const void *params);

/** Thread blocks of kernel id, of `threads` threads and smem bytes of dynamic shared memory,
 *  that one SM of the current context's device holds at once (*per_sm). */
CUresult j2ki_cuda_kernel_occupancy(J2kiKernelId id, int threads, size_t smem, int *per_sm);

/** The entry name of kernel id (kernels.def). */
const char *j2ki_cuda_kernel_entry(J2kiKernelId id);

#ifdef __cplusplus
}

/*
 * Typed launches: the launch call sites use (j2ki_launch), generated from kernels.def's params
 * column so that a kernel launched with another parameter struct than its own does not
 * compile. j2ki_kernel<J2KI_K_X> is kernel X's id carrying the type of its parameter struct
 * (J2kiKernelOf<P>); j2ki_launch takes it with a P, so a wrong struct is a deduction conflict.
 * A call site that picks among kernels at run time (a ternary of j2ki_kernel<...>) can only
 * mix kernels of one struct. The untyped j2ki_cuda_launch stays the one implementation (and
 * what the host emulators, tests/ *_emu.cc, provide); tests/layering.sh checks that nothing
 * else calls it.
 */
template <class P> struct J2kiKernelOf {
    J2kiKernelId id;
};

/* The parameter struct of each kernel id (declared here by name only: the stage's *_kern.h
 * defines it). */
template <J2kiKernelId id> struct J2kiKernelParams;
#define J2KI_KERNEL(id, entry, params, coop)                                                        \
    struct params;                                                                                 \
    template <> struct J2kiKernelParams<J2KI_K_##id> { typedef params type; };
#include "cuda/kernels.def"
#undef J2KI_KERNEL

template <J2kiKernelId id>
constexpr J2kiKernelOf<typename J2kiKernelParams<id>::type> j2ki_kernel = { id };

/** j2ki_cuda_launch of kernel k with its own parameter struct. */
template <class P>
static inline CUresult j2ki_launch(J2kiKernelOf<P> k, dim3 grid, dim3 block, size_t smem, CUstream st,
                                   const P &params)
{
    return j2ki_cuda_launch(k.id, grid, block, smem, st, &params);
}
#endif

#endif /* J2KI_CUDA_LAUNCH_H */
