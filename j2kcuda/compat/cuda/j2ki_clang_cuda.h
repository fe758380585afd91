/*
 * The CUDA language as the kernels use it, for clang without NVIDIA's SDK (./configure
 * --cuda-compiler=clang; doc/ffmpeg.md). clang compiles the device-only files (j2kcuda/src/cuda,
 * *_kern.cu) to PTX with -nocudainc -nocudalib and this header pre-included (-include): the
 * execution-space attributes, the built-in index variables (clang's own
 * __clang_cuda_builtin_vars.h) and the device intrinsics the kernels and CUB's block primitives
 * call, each written on clang's NVPTX builtins or one PTX instruction (PTX ISA manual), so
 * neither the toolkit's headers nor libdevice are read. FFmpeg's --enable-cuda-llvm does the
 * same (its compat/cuda).
 *
 * Semantics follow the CUDA C++ Programming Guide's definitions of each intrinsic (warp
 * shuffles' width and lane rules, __clz(0) = 32, __ffs(0) = 0, __funnelshift_r's shift taken
 * mod 32); only what the kernels and CUB's headers reach is here. Floating point: the 9/7 DWT
 * is multiplies and adds (built with -ffp-contract=off like nvcc's --fmad=false), and the one
 * maths function the kernels call, ldexp, is exact and written here.
 */
#ifndef J2KI_CLANG_CUDA_H
#define J2KI_CLANG_CUDA_H

#if !defined(__clang__) || !defined(__CUDA__)
#error "j2ki_clang_cuda.h is for clang's CUDA mode (-x cuda -nocudainc)"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h> /* malloc/free: clang's cuda_wrappers/<new> names them */
#include <string.h> /* memcpy: CCCL's PTX helpers */
#include <assert.h>
#include <math.h>   /* the host's declarations; the device overloads below */

#define __host__        __attribute__((host))
#define __device__      __attribute__((device))
#define __global__      __attribute__((global))
#define __shared__      __attribute__((shared))
#define __constant__    __attribute__((constant))
#define __managed__     __attribute__((managed))
#define __grid_constant__ __attribute__((grid_constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__    __attribute__((noinline))
#define __align__(n)    __attribute__((aligned(n)))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __CUDACC__ 1

/* The CUDA version the build targets (the PTX ISA clang is told to emit, -Xclang -target-feature
 * +ptxNN, from the Makefile): CCCL reads it as CUDA_VERSION (clang's CUDA mode takes it from the
 * toolkit's cuda.h, not read here) and as CUDART_VERSION (compat/cuda/cuda_runtime_api.h). */
#ifndef J2KI_CLANG_CUDA_VERSION
#error "J2KI_CLANG_CUDA_VERSION must be defined (Makefile: the clang build of the kernels)"
#endif
#define CUDA_VERSION   J2KI_CLANG_CUDA_VERSION
#define CUDART_VERSION J2KI_CLANG_CUDA_VERSION

#include <__clang_cuda_builtin_vars.h>

#define J2KI_DEV static __device__ __forceinline__

/* vector types CCCL names (cuda/std's tuple interface for them, CUB's vectorised loads): the
 * CUDA C++ Programming Guide's built-in vector types, 1 to 4 components, aligned to their
 * size rounded up to a power of two (at most 16) */
#define J2KI_VEC(T, N, A1, A2, A4) \
    struct __align__(A1) N##1 { T x; }; \
    struct __align__(A2) N##2 { T x, y; }; \
    struct N##3 { T x, y, z; }; \
    struct __align__(A4) N##4 { T x, y, z, w; };
J2KI_VEC(signed char, char, 1, 2, 4)
J2KI_VEC(unsigned char, uchar, 1, 2, 4)
J2KI_VEC(short, short, 2, 4, 8)
J2KI_VEC(unsigned short, ushort, 2, 4, 8)
J2KI_VEC(int, int, 4, 8, 16)
J2KI_VEC(unsigned int, uint, 4, 8, 16)
J2KI_VEC(long, long, 8, 16, 16)
J2KI_VEC(unsigned long, ulong, 8, 16, 16)
J2KI_VEC(long long, longlong, 8, 16, 16)
J2KI_VEC(unsigned long long, ulonglong, 8, 16, 16)
J2KI_VEC(float, float, 4, 8, 16)
J2KI_VEC(double, double, 8, 16, 16)
#undef J2KI_VEC
struct dim3 {
    unsigned int x, y, z;
    __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1,
                                       unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
};

/* barriers and fences */
J2KI_DEV void __syncwarp(unsigned int mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }
J2KI_DEV int __syncthreads_count(int p) { return __nvvm_bar0_popc(p); }
J2KI_DEV int __syncthreads_and(int p) { return __nvvm_bar0_and(p); }
J2KI_DEV int __syncthreads_or(int p) { return __nvvm_bar0_or(p); }
J2KI_DEV void __threadfence_block(void) { __nvvm_membar_cta(); }
J2KI_DEV void __threadfence(void) { __nvvm_membar_gl(); }
J2KI_DEV void __threadfence_system(void) { __nvvm_membar_sys(); }
J2KI_DEV void __trap(void) { __asm__ __volatile__("trap;"); }
J2KI_DEV void __nanosleep(unsigned int ns) { __nvvm_nanosleep(ns); }
J2KI_DEV unsigned int __activemask(void)
{
    unsigned int m;
    __asm__ __volatile__("activemask.b32 %0;" : "=r"(m));
    return m;
}
J2KI_DEV int __isShared(const void *p) { return __nvvm_isspacep_shared(p); }
J2KI_DEV int __isGlobal(const void *p) { return __nvvm_isspacep_global(p); }
J2KI_DEV int __isConstant(const void *p) { return __nvvm_isspacep_const(p); }
J2KI_DEV int __isLocal(const void *p) { return __nvvm_isspacep_local(p); }

/* integer bit operations */
J2KI_DEV int __popc(unsigned int x) { return __builtin_popcount(x); }
J2KI_DEV int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
J2KI_DEV int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
J2KI_DEV int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
J2KI_DEV int __ffs(int x) { return __builtin_ffs(x); }
J2KI_DEV int __ffsll(long long x) { return __builtin_ffsll(x); }
J2KI_DEV unsigned int __brev(unsigned int x) { return __builtin_bitreverse32(x); }
J2KI_DEV unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
J2KI_DEV unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s)
{
    unsigned int r;
    __asm__("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(s));
    return r;
}
J2KI_DEV unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s)
{
    unsigned int r;
    __asm__("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(s));
    return r;
}
J2KI_DEV unsigned int __umulhi(unsigned int a, unsigned int b)
{
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
J2KI_DEV unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}

/* SIMD minimum and maximum of two 16-bit halves (CUB's thread operators name them) */
#define J2KI_SIMD2(NAME, T, OP)                                                                 \
    J2KI_DEV unsigned int NAME(unsigned int a, unsigned int b)                                  \
    {                                                                                           \
        T a0 = (T)a, a1 = (T)(a >> 16), b0 = (T)b, b1 = (T)(b >> 16);                          \
        unsigned short r0 = (unsigned short)(a0 OP b0 ? a0 : b0);                               \
        unsigned short r1 = (unsigned short)(a1 OP b1 ? a1 : b1);                               \
        return (unsigned int)r0 | ((unsigned int)r1 << 16);                                     \
    }
J2KI_SIMD2(__vmins2, short, <)
J2KI_SIMD2(__vminu2, unsigned short, <)
J2KI_SIMD2(__vmaxs2, short, >)
J2KI_SIMD2(__vmaxu2, unsigned short, >)
#undef J2KI_SIMD2

/* a failed assert() in device code (CUB's never-taken branches): the kernel traps, which the
 * host sees as a launch failure, as with nvcc's device assert */
__device__ __attribute__((noreturn)) static __inline__ void
__assert_fail(const char *expr, const char *file, unsigned int line, const char *func)
{
    __asm__ __volatile__("trap;");
    __builtin_unreachable();
}

/* ldexp(x, n) = x 2^n, exact (one rounding only where the result is subnormal): multiplies by
 * powers of two built from their IEEE 754 bits, the exponent brought into the normal range in
 * steps first. The kernels use it for distortion estimates (hd/t1_core.h), where it must match
 * the host's ldexp bit for bit; j2ki_ldexp is also host code so that tests/clang-cuda.sh
 * checks it against the C library's. */
static __host__ __device__ __inline__ double j2ki_pow2(int e)  /* 2^e, -1022 <= e <= 1023 */
{
    return __builtin_bit_cast(double, (unsigned long long)(e + 1023) << 52);
}
static __host__ __device__ __inline__ double j2ki_ldexp(double x, int n)
{
    if (n > 1023) {
        x *= j2ki_pow2(1023);
        n -= 1023;
        if (n > 1023) {
            x *= j2ki_pow2(1023);
            n -= 1023;
            if (n > 1023)
                n = 1023;
        }
    } else if (n < -1022) {
        /* scale by 2^-1022 2^53 so that a subnormal result is rounded once, at the end */
        x *= j2ki_pow2(-1022) * j2ki_pow2(53);
        n += 1022 - 53;
        if (n < -1022) {
            x *= j2ki_pow2(-1022) * j2ki_pow2(53);
            n += 1022 - 53;
            if (n < -1022)
                n = -1022;
        }
    }
    return x * j2ki_pow2(n);
}
static __device__ __inline__ double ldexp(double x, int n) { return j2ki_ldexp(x, n); }

/* reinterpretation */
J2KI_DEV float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }
J2KI_DEV float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
J2KI_DEV unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }
J2KI_DEV int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
J2KI_DEV double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
J2KI_DEV long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }

/* address spaces */
J2KI_DEV size_t __cvta_generic_to_shared(const void *p)
{
    return (size_t)(const void __attribute__((address_space(3))) *)p;
}
J2KI_DEV size_t __cvta_generic_to_global(const void *p)
{
    return (size_t)(const void __attribute__((address_space(1))) *)p;
}
J2KI_DEV void *__cvta_shared_to_generic(size_t a)
{
    return (void *)(void __attribute__((address_space(3))) *)a;
}
J2KI_DEV void *__cvta_global_to_generic(size_t a)
{
    return (void *)(void __attribute__((address_space(1))) *)a;
}

/* warp votes, matches and shuffles: a shuffle's c operand packs the segment mask
 * ((32 - width) << 8) and the clamp lane (31 for idx/down/xor, 0 for up) */
J2KI_DEV unsigned int __ballot_sync(unsigned int m, int p) { return __nvvm_vote_ballot_sync(m, p); }
J2KI_DEV int __any_sync(unsigned int m, int p) { return __nvvm_vote_any_sync(m, p); }
J2KI_DEV int __all_sync(unsigned int m, int p) { return __nvvm_vote_all_sync(m, p); }
J2KI_DEV unsigned int __match_any_sync(unsigned int m, unsigned int v)
{
    return __nvvm_match_any_sync_i32(m, v);
}
J2KI_DEV unsigned int __match_any_sync(unsigned int m, int v)
{
    return __nvvm_match_any_sync_i32(m, (unsigned int)v);
}
J2KI_DEV unsigned int __match_any_sync(unsigned int m, unsigned long long v)
{
    return __nvvm_match_any_sync_i64(m, (long long)v);
}
#define J2KI_MATCH_ALL(T, B, CT)                                                                \
    J2KI_DEV unsigned int __match_all_sync(unsigned int m, T v, int *pred)                      \
    {                                                                                           \
        return __nvvm_match_all_sync_##B##p(m, (CT)v, pred);                                    \
    }
J2KI_MATCH_ALL(unsigned int, i32, unsigned int)
J2KI_MATCH_ALL(int, i32, unsigned int)
J2KI_MATCH_ALL(unsigned long long, i64, long long)
J2KI_MATCH_ALL(long long, i64, long long)
#undef J2KI_MATCH_ALL

#define J2KI_SHFL(NAME, OP, CLAMP)                                                              \
    J2KI_DEV int NAME(unsigned int m, int v, int l, int w = 32)                                 \
    {                                                                                           \
        return __nvvm_shfl_sync_##OP##_i32(m, v, l, ((32 - w) << 8) | (CLAMP));                 \
    }                                                                                           \
    J2KI_DEV unsigned int NAME(unsigned int m, unsigned int v, int l, int w = 32)               \
    {                                                                                           \
        return (unsigned int)NAME(m, (int)v, l, w);                                             \
    }                                                                                           \
    J2KI_DEV float NAME(unsigned int m, float v, int l, int w = 32)                             \
    {                                                                                           \
        return __nvvm_shfl_sync_##OP##_f32(m, v, l, ((32 - w) << 8) | (CLAMP));                 \
    }                                                                                           \
    J2KI_DEV long long NAME(unsigned int m, long long v, int l, int w = 32)                     \
    {                                                                                           \
        unsigned int lo = NAME(m, (unsigned int)v, l, w);                                       \
        unsigned int hi = NAME(m, (unsigned int)((unsigned long long)v >> 32), l, w);           \
        return (long long)(((unsigned long long)hi << 32) | lo);                                \
    }                                                                                           \
    J2KI_DEV unsigned long long NAME(unsigned int m, unsigned long long v, int l, int w = 32)   \
    {                                                                                           \
        return (unsigned long long)NAME(m, (long long)v, l, w);                                 \
    }                                                                                           \
    J2KI_DEV long NAME(unsigned int m, long v, int l, int w = 32)                               \
    {                                                                                           \
        return (long)NAME(m, (long long)v, l, w);                                               \
    }                                                                                           \
    J2KI_DEV unsigned long NAME(unsigned int m, unsigned long v, int l, int w = 32)             \
    {                                                                                           \
        return (unsigned long)NAME(m, (long long)v, l, w);                                      \
    }                                                                                           \
    J2KI_DEV double NAME(unsigned int m, double v, int l, int w = 32)                           \
    {                                                                                           \
        return __longlong_as_double(NAME(m, __double_as_longlong(v), l, w));                    \
    }
J2KI_SHFL(__shfl_sync, idx, 0x1f)
J2KI_SHFL(__shfl_up_sync, up, 0)
J2KI_SHFL(__shfl_down_sync, down, 0x1f)
J2KI_SHFL(__shfl_xor_sync, bfly, 0x1f)
#undef J2KI_SHFL

/* loads through the read-only path (__ldg) and caching at L2 only (__ldcg, coherent across
 * the blocks of a grid): ld.global.nc / ld.global.cg */
#define J2KI_LD(T, PT, C)                                                                       \
    J2KI_DEV T __ldg(const T *p)                                                                \
    {                                                                                           \
        T r;                                                                                    \
        __asm__("ld.global.nc." PT " %0, [%1];" : "=" C(r) : "l"(p));                            \
        return r;                                                                               \
    }                                                                                           \
    J2KI_DEV T __ldcg(const T *p)                                                               \
    {                                                                                           \
        T r;                                                                                    \
        __asm__ __volatile__("ld.global.cg." PT " %0, [%1];" : "=" C(r) : "l"(p) : "memory");  \
        return r;                                                                               \
    }
J2KI_LD(int, "s32", "r")
J2KI_LD(unsigned int, "u32", "r")
J2KI_LD(long long, "s64", "l")
J2KI_LD(unsigned long long, "u64", "l")
J2KI_LD(float, "f32", "f")
#undef J2KI_LD

/* atomics: relaxed read-modify-writes at device scope (PTX atom without .sem/.scope), as
 * CUDA's atomic functions */
#define J2KI_ATOM(T)                                                                            \
    J2KI_DEV T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }      \
    J2KI_DEV T atomicSub(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }      \
    J2KI_DEV T atomicMax(T *p, T v) { return __atomic_fetch_max(p, v, __ATOMIC_RELAXED); }      \
    J2KI_DEV T atomicMin(T *p, T v) { return __atomic_fetch_min(p, v, __ATOMIC_RELAXED); }      \
    J2KI_DEV T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }        \
    J2KI_DEV T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }      \
    J2KI_DEV T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }      \
    J2KI_DEV T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }    \
    J2KI_DEV T atomicCAS(T *p, T cmp, T v)                                                      \
    {                                                                                           \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);     \
        return cmp;                                                                             \
    }
J2KI_ATOM(int)
J2KI_ATOM(unsigned int)
J2KI_ATOM(long long)
J2KI_ATOM(unsigned long long)
#undef J2KI_ATOM
J2KI_DEV float atomicAdd(float *p, float v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

#undef J2KI_DEV

/* the runtime API's types, which a CUDA compiler makes visible before any source line (CCCL
 * relies on it) */
#include "cuda_runtime_api.h"

#endif /* J2KI_CLANG_CUDA_H */
