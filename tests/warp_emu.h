/*
 * Host emulation of CUDA thread blocks and warps, for running the library's own kernel source
 * on a machine without a GPU (tests/dwt_emu.cc, tests/t2_emu.cc). Include it after the CUDA
 * headers (for dim3, CUresult and the qualifiers, which it redefines) and before the kernel
 * source. Each launch is a loop over the grid's blocks; the threads of a block are fibers
 * (ucontext) on one OS thread that run until they wait at __syncthreads() (all threads of the
 * block), __syncwarp() (all lanes of the warp) or leave the kernel. A warp collective (shuffle,
 * ballot) is a per-warp exchange between two __syncwarp(): as on a GPU every lane must take
 * part, and a collective that some lane skips, or a lane that left early, deadlocks, which the
 * launch reports as a failure. Fibers switch only at barriers, so a plain read-modify-write is
 * atomic between them (the atomics below). Not a GPU: memory ordering, timing and the device
 * compiler are check_cuda's (make check-cuda).
 * The including file defines EMU_NAME (the name its FAIL lines carry).
 */
#ifndef J2KI_WARP_EMU_H
#define J2KI_WARP_EMU_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ucontext.h>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#undef __grid_constant__
#define __grid_constant__
#undef __noinline__
#define __noinline__ __attribute__((noinline))

struct Dim3 { unsigned x, y, z; };
static Dim3 threadIdx, blockIdx, blockDim, gridDim;   /* those of the running thread (fiber) */
static unsigned t_warp, t_lane;
static long g_shuffles;

enum { FB_RUN, FB_WARP, FB_BLOCK, FB_DONE };
struct Fiber {
    ucontext_t ctx;
    std::vector<char> stack;
    unsigned state;
    Dim3 idx;
};
static ucontext_t g_sched;
static std::vector<Fiber> g_fibers;
static Fiber *g_cur;
static const char *g_kernel;
static std::vector<uint64_t> g_xchg;      /* the collectives' exchange: 32 words per warp */

static void fiber_wait(unsigned state)
{
    g_cur->state = state;
    swapcontext(&g_cur->ctx, &g_sched);
}
static void __syncthreads() { fiber_wait(FB_BLOCK); }
static void __syncwarp(unsigned = 0xffffffffu) { fiber_wait(FB_WARP); }

static void emu_full_mask(unsigned mask, const char *what)
{
    if (mask != 0xffffffffu) {
        printf("FAIL %s: %s: %s with a partial mask %08x\n", EMU_NAME, g_kernel, what, mask);
        exit(1);
    }
}

/* A shuffle: every lane of the warp posts its value, all wait, each reads its source lane's,
 * all wait again (so the words are not overwritten before everyone read). */
template <class T>
static T shfl(unsigned mask, T v, int src, bool valid)
{
    static_assert(sizeof(T) <= sizeof(uint64_t), "shuffled type");
    emu_full_mask(mask, "shuffle");
    uint64_t *x = &g_xchg[32 * (size_t)t_warp], word = 0;
    memcpy(&word, &v, sizeof(T));
    x[t_lane] = word;
    __syncwarp();
    T r = v;
    if (valid)
        memcpy(&r, &x[src], sizeof(T));
    __syncwarp();
    if (t_lane == 0)
        g_shuffles++;
    return r;
}
template <class T> static T __shfl_sync(unsigned m, T v, int s) { return shfl(m, v, s & 31, true); }
template <class T> static T __shfl_xor_sync(unsigned m, T v, int s) { return shfl(m, v, (int)(t_lane ^ (unsigned)s) & 31, true); }
template <class T> static T __shfl_up_sync(unsigned m, T v, unsigned d)
{
    return shfl(m, v, (int)t_lane - (int)d, (int)t_lane >= (int)d);
}
template <class T> static T __shfl_down_sync(unsigned m, T v, unsigned d)
{
    return shfl(m, v, (int)(t_lane + d), t_lane + d < 32);
}
static unsigned __ballot_sync(unsigned m, int p)
{
    emu_full_mask(m, "ballot");
    uint64_t *x = &g_xchg[32 * (size_t)t_warp];
    x[t_lane] = p != 0;
    __syncwarp();
    unsigned r = 0;
    for (unsigned l = 0; l < 32; l++)
        r |= (unsigned)x[l] << l;
    __syncwarp();
    return r;
}
static int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
static int __all_sync(unsigned m, int p) { return __ballot_sync(m, p) == 0xffffffffu; }
static int __popc(unsigned x) { return __builtin_popcount(x); }
static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static int __ffs(int x) { return __builtin_ffs(x); }
static int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
template <class T> static T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }
template <class T> static T atomicMin(T *p, T v) { T o = *p; *p = v < o ? v : o; return o; }
template <class T> static T atomicMax(T *p, T v) { T o = *p; *p = v > o ? v : o; return o; }
template <class T> static T atomicOr(T *p, T v) { T o = *p; *p = o | v; return o; }
template <class T> static T atomicCAS(T *p, T cmp, T v) { T o = *p; *p = o == cmp ? v : o; return o; }

static std::function<void()> g_body;

static void fiber_main()
{
    g_body();
    g_cur->state = FB_DONE;      /* uc_link returns to the scheduler */
}

/* One block: runs every runnable fiber up to its next wait, then releases the warps whose
 * lanes all wait at __syncwarp and the block when all its threads wait at __syncthreads.
 * Anything else with threads still waiting is a deadlock. */
static void run_block(unsigned nt)
{
    for (unsigned t = 0; t < nt; t++) {
        Fiber &f = g_fibers[t];
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack.data();
        f.ctx.uc_stack.ss_size = f.stack.size();
        f.ctx.uc_link = &g_sched;
        makecontext(&f.ctx, fiber_main, 0);
        f.state = FB_RUN;
    }
    for (;;) {
        for (unsigned t = 0; t < nt; t++) {
            Fiber &f = g_fibers[t];
            if (f.state != FB_RUN)
                continue;
            g_cur = &f;
            threadIdx = f.idx;
            t_warp = t / 32;
            t_lane = t % 32;
            swapcontext(&g_sched, &f.ctx);
        }
        unsigned done = 0, block = 0, released = 0;
        for (unsigned t = 0; t < nt; t++)
            done += g_fibers[t].state == FB_DONE, block += g_fibers[t].state == FB_BLOCK;
        if (done == nt)
            return;
        if (block == nt) {
            for (unsigned t = 0; t < nt; t++)
                g_fibers[t].state = FB_RUN;
            continue;
        }
        for (unsigned w = 0; 32 * w < nt; w++) {
            const unsigned e = nt < 32 * w + 32 ? nt : 32 * w + 32;
            unsigned waiting = 0;
            for (unsigned t = 32 * w; t < e; t++)
                waiting += g_fibers[t].state == FB_WARP;
            if (waiting == e - 32 * w) {
                for (unsigned t = 32 * w; t < e; t++)
                    g_fibers[t].state = FB_RUN;
                released++;
            }
        }
        if (!released) {
            printf("FAIL %s: %s: deadlock in block (%u,%u): %u threads done, %u at __syncthreads, "
                   "the others at a warp barrier that some lane of theirs skipped\n",
                   EMU_NAME, g_kernel, blockIdx.x, blockIdx.y, done, block);
            exit(1);
        }
    }
}

/* One launch: the grid's blocks one after the other. */
template <class F>
static void emu_launch(const char *name, dim3 grid, dim3 block, F body)
{
    const unsigned nt = block.x * block.y * block.z;
    g_kernel = name;
    blockDim = { block.x, block.y, block.z };
    gridDim = { grid.x, grid.y, grid.z };
    if (g_fibers.size() < nt)
        g_fibers.resize(nt);
    for (unsigned t = 0; t < nt; t++) {
        g_fibers[t].stack.resize(1 << 17);
        g_fibers[t].idx = { t % block.x, t / block.x % block.y, t / (block.x * block.y) };
    }
    g_xchg.assign(32 * (size_t)((nt + 31) / 32), 0);
    g_body = body;
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                blockIdx = { bx, by, bz };
                run_block(nt);
            }
}

/* A case of an emulator's j2ki_cuda_launch (cuda_launch.h), whose arguments are in scope:
 * kernel ID's entry run by emu_launch on the parameter struct the host code filled. */
#define EMU_KERNEL_CASE(ID, entry, Params)                                          \
    case ID:                                                                       \
        emu_launch(#entry, grid, block, [&] { entry(*(const Params *)params); });  \
        return CUDA_SUCCESS;

#endif /* J2KI_WARP_EMU_H */
