/*
 * The fault injection's kernel (device code only, cuda_fault.h): one thread that traps, the
 * device fault J2KI_FAULT_TRAP enqueues into a frame.
 */
#include "cuda/fault_kern.h"

extern "C" __global__ void j2ki_k_fault_trap(const __grid_constant__ J2kiFaultTrapParams p)
{
    (void)p;
    __trap();
}
