/*
 * The part of cooperative groups the kernels use, for the clang build without NVIDIA's SDK
 * (compat/cuda/j2ki_clang_cuda.h): this_grid().sync(), the grid-wide barrier of a cooperative
 * launch (cuLaunchCooperativeKernel; rc_kern.cu's decision kernel, kernels.def coop = 1).
 *
 * The barrier lives in the workspace the driver gives every cooperative launch; its address is
 * the driver's ABI with device code, as the toolkit's headers state it: the 64-bit address is
 * split over the special registers %envreg1 (high half) and %envreg2 (low half), and the
 * workspace starts with two 32-bit words, its size and the barrier counter.
 *
 * The counter is a phase barrier: one thread per block arrives by adding to it, every block
 * but one adding 1 and the first block adding 2^31 - (blocks - 1), so the arrivals of all the
 * blocks add exactly 2^31: bit 31 flips once everyone has arrived, and the low 31 bits are back
 * where they were, ready for the next barrier (no reset between barriers or launches). A block
 * waits until bit 31 differs from the value it saw when it arrived. The add releases and the
 * polling load acquires at GPU scope (PTX ISA memory model, sm_70 and newer), so the writes of
 * every block before the barrier are seen by every block after it; __syncthreads on each side
 * extends that to the block's other threads.
 */
#ifndef J2KI_COMPAT_COOPERATIVE_GROUPS_H
#define J2KI_COMPAT_COOPERATIVE_GROUPS_H

#include "j2ki_clang_cuda.h"

namespace cooperative_groups {

class grid_group {
public:
    __device__ void sync() const
    {
        __syncthreads();
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
            bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
            unsigned int add = first ? 0x80000000u - (blocks - 1) : 1u;
            unsigned int *ctr = barrier();
            unsigned int seen, now;
            __asm__ __volatile__("atom.add.release.gpu.u32 %0, [%1], %2;"
                                 : "=r"(seen) : "l"(ctr), "r"(add) : "memory");
            do {
                __asm__ __volatile__("ld.acquire.gpu.u32 %0, [%1];"
                                     : "=r"(now) : "l"(ctr) : "memory");
            } while (((seen ^ now) & 0x80000000u) == 0);
        }
        __syncthreads();
    }

private:
    static __device__ unsigned int *barrier()
    {
        unsigned int hi, lo;
        __asm__("mov.u32 %0, %%envreg1;" : "=r"(hi));
        __asm__("mov.u32 %0, %%envreg2;" : "=r"(lo));
        unsigned long long ws = ((unsigned long long)hi << 32) | lo;
        return (unsigned int *)ws + 1;      /* word 0: the workspace's size; word 1: the counter */
    }
};

static __device__ __forceinline__ grid_group this_grid() { return grid_group(); }

} /* namespace cooperative_groups */

#endif /* J2KI_COMPAT_COOPERATIVE_GROUPS_H */
