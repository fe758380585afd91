/*
 * The HT block coder's kernels (device code only, ISO/IEC 15444-15 clause 7), see ht_cuda.h:
 * the steps of ref/ht_plane.c and ref/ht_ref.c, calling the same J2KI_HD functions
 * (hd/ht_plane.h, hd/ht_core.h) one thread per code-block, and the slope search in one
 * thread block whose byte sums are integers (atomic adds in any order give the same sum).
 */
#include "cuda/ht_kern.h"

/* The code-block's samples and geometry. */
#define HT_BLOCK(p, i) const J2kiCblkDev cb = (p).cblks[i]; \
                       const int32_t *coefs = (p).samples + cb.buf

/* STATS: the model's statistics of every block (ref/ht_plane.c stat_item). */
__device__ __forceinline__ void ht_stats(const J2kiHtParams &p)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= p.threads)
        return;
    if (t == 0)
        for (int r = 0; r < J2KI_HT_PLANE_ROUNDS; r++)
            p.stale[r] = 0;
    for (uint32_t i = t; i < p.nb_cblks; i += p.threads) {
        HT_BLOCK(p, i);
        j2ki_ht_plane_stats(&p.st[i], coefs, cb.stride, cb.w, cb.h, cb.frac_bits, p.refine);
    }
}

/* Whether the blocks' picks at slope lambda are over the target: every thread of the block
 * sums its share, the shares are added atomically (integers: exact in any order). Called by
 * every thread of the block alike. */
__device__ int ht_over_at(const J2kiHtParams &p, double lambda, unsigned long long *sum)
{
    unsigned long long part = 0;
    int over;
    if (threadIdx.x == 0)
        *sum = 0;
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < p.nb_cblks; i += blockDim.x) {
        uint64_t bytes;
        j2ki_ht_plane_point(&p.st[i], p.weight[i], lambda, &bytes);
        part += bytes;
    }
    if (part)
        atomicAdd(sum, part);
    __syncthreads();
    over = j2ki_ht_plane_over(*sum, p.target32);
    __syncthreads();
    return over;
}

/* SLOPE: ref/ht_plane.c's fill_slope, the bisection every thread follows alike. After a later
 * measuring round that measured no block again the points are those of the last search, and
 * so is its slope. */
__device__ __forceinline__ void ht_slope(const J2kiHtParams &p)
{
    __shared__ unsigned long long sum;
    uint64_t lo = J2KI_HT_SLOPE_BITS_MIN, hi = J2KI_HT_SLOPE_BITS_MAX;
    if (p.round && !p.stale[p.round])
        return;
    if (!ht_over_at(p, 0.0, &sum)) {
        if (threadIdx.x == 0)
            *p.lambda = 0.0;
        return;
    }
    while (hi - lo > 1) {
        uint64_t mid = j2ki_ht_slope_mid(lo, hi);
        if (ht_over_at(p, j2ki_ht_slope(mid), &sum))
            lo = mid;
        else
            hi = mid;
    }
    if (threadIdx.x == 0)
        *p.lambda = j2ki_ht_slope(hi);
}

/* MEASURE: the sets around the pick at the last slope coded into the block's own buffer; in
 * a later round only for the blocks whose pick lies outside their measured planes
 * (ref/ht_plane.c measure_item). */
__device__ __forceinline__ void ht_measure(const J2kiHtParams &p)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= p.threads)
        return;
    const double lambda = *p.lambda;
    for (uint32_t i = t; i < p.nb_cblks; i += p.threads) {
        HT_BLOCK(p, i);
        if (p.round) {
            if (!j2ki_ht_plane_stale(&p.st[i], p.weight[i], lambda))
                continue;
            atomicOr(&p.stale[p.round], 1u);
        }
        j2ki_ht_plane_measure(&p.st[i], coefs, cb.stride, cb.w, cb.h, cb.frac_bits, p.weight[i], lambda,
                              &p.scratch[t], p.data + cb.data_off, cb.data_cap);
    }
}

/* CODE: each block's set at its plane (ref/ht_plane.c's final picks, ref/ht_ref.c's coding)
 * and its result, as tier-1's kernels store it (t1_kern.cu t1_code_loaded). */
__device__ __forceinline__ void ht_code(const J2kiHtParams &p)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= p.threads)
        return;
    const double lambda = p.budget ? *p.lambda : 0.0;
    for (uint32_t i = t; i < p.nb_cblks; i += p.threads) {
        HT_BLOCK(p, i);
        J2kiCblkRes r;
        int plane = p.budget ? j2ki_ht_plane_final(&p.st[i], p.weight[i], lambda) : 0;
        r.err = j2ki_ht_encode_set(coefs, cb.stride, cb.w, cb.h, cb.nb_mag_bits, cb.frac_bits, plane, p.refine,
                                   &p.scratch[t], p.data + cb.data_off, cb.data_cap, p.passes + cb.pass_off,
                                   cb.max_passes, &r.nb_passes, &r.numbps, &r.len);
        if (r.err) {
            r.nb_passes = 0;
            atomicOr(p.flag, 1u);
        }
        p.res[i] = r;
    }
}

extern "C" __global__ void __launch_bounds__(HT_THREADS) j2ki_k_ht_stats(const __grid_constant__ J2kiHtParams p)
{
    ht_stats(p);
}

extern "C" __global__ void __launch_bounds__(HT_SLOPE_THREADS) j2ki_k_ht_slope(const __grid_constant__ J2kiHtParams p)
{
    ht_slope(p);
}

extern "C" __global__ void __launch_bounds__(HT_THREADS) j2ki_k_ht_measure(const __grid_constant__ J2kiHtParams p)
{
    ht_measure(p);
}

extern "C" __global__ void __launch_bounds__(HT_THREADS) j2ki_k_ht_code(const __grid_constant__ J2kiHtParams p)
{
    ht_code(p);
}
