/*
 * The HT block coder's kernels (device code only, ISO/IEC 15444-15 clause 7), see ht_cuda.h:
 * the steps of ref/ht_plane.c and ref/ht_ref.c, calling the same J2KI_HD functions
 * (hd/ht_plane.h, hd/ht_core.h): the statistics a warp per code-block (a lane per plane), the
 * measured sets and the final set a warp each (ht_warp.cuh), and each step of the slope
 * searches over the whole device, its byte sums integers (atomic adds in any order give the
 * same sum).
 */
#include "cuda/ht_kern.h"
#include "cuda/ht_warp.cuh"

/* The code-block's samples and geometry. */
#define HT_BLOCK(p, i) const J2kiCblkDev cb = (p).cblks[i]; \
                       const int32_t *coefs = (p).samples + cb.buf

/* STATS: the model's statistics of every block (ref/ht_plane.c stat_item), a warp per block:
 * the lanes find its top plane together, then, plane by plane, lane l sums the quads l, l + 32,
 * ... in scan order (j2ki_ht_plane_stats_at's partial l), the byte model's integers are added
 * in any order and the distortions' partials by lane 0 in lane order, as the reference adds
 * them. */
__device__ __forceinline__ void ht_stats(const J2kiHtParams &p)
{
    __shared__ double part[HT_WIDE_THREADS];
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31u;
    const uint32_t nb_warps = (gridDim.x * blockDim.x) >> 5;
    double *wpart = &part[threadIdx.x & ~31u];
    static_assert(J2KI_HT_DIST_LANES == 32, "a lane per partial sum");
    if (t == 0) {
        for (int r = 0; r < J2KI_HT_PLANE_ROUNDS; r++)
            p.stale[r] = 0;
        for (int k = 0; k < HT_SEARCHES * HT_SLOPE_SLOTS; k++)
            p.sums[k] = 0;
    }
    for (uint32_t i = t >> 5; i < p.nb_cblks; i += nb_warps) {   /* the same i across the warp */
        HT_BLOCK(p, i);
        const int qw = (cb.w + 1) / 2, nq = qw * ((cb.h + 1) / 2);
        uint32_t acc = 0;
        int top;
        for (int k = (int)lane; k < cb.w * cb.h; k += 32) {
            int32_t v = coefs[(ptrdiff_t)(k / cb.w) * cb.stride + k % cb.w];
            acc |= (v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v) >> cb.frac_bits;
        }
        for (int o = 16; o; o >>= 1)
            acc |= __shfl_xor_sync(0xffffffffu, acc, o);
        top = j2ki_ht_bits32(acc);
        if (lane == 0)
            j2ki_ht_plane_stats_head(&p.st[i], top, p.refine);
        for (int b = 0; b < top; b++) {
            double unit, step, dist = 0.0;
            unsigned long long q4 = 0;
            j2ki_ht_dist_scale(cb.frac_bits, b, &unit, &step);
            for (int q = (int)lane, qx = (int)lane, qy = 0; q < nq; q += 32, qx += 32) {
                while (qx >= qw) {
                    qx -= qw;
                    qy++;
                }
                uint64_t q4q = 0;
                j2ki_ht_plane_stats_quad(coefs, cb.stride, cb.w, cb.h, cb.frac_bits, b, unit, step, qx, qy, &q4q,
                                         &dist);
                q4 += q4q;
            }
            for (int o = 16; o; o >>= 1)
                q4 += __shfl_xor_sync(0xffffffffu, q4, o);
            wpart[lane] = dist;
            __syncwarp();
            if (lane == 0) {
                double sum = 0.0;
                for (int l = 0; l < 32; l++)
                    sum += wpart[l];
                p.st[i].q4[b] = q4;
                p.st[i].dist[b] = sum;
            }
            __syncwarp();
        }
    }
}

/* The slope searches (ref/ht_plane.c's fill_slope) spread over the device: each bisection step
 * is a launch of SLOPE_STEP whose threads sum their blocks' picks at the step's slope into the
 * step's own slot (integers: exact in any order); a launch finds its step's slope by replaying
 * the earlier steps' decisions from their sums, so every launch and SLOPE_END follow the
 * reference's bisection, step for step. Steps after the range has closed do nothing. After a
 * later measuring round that measured no block again the points are those of the last
 * search, and so is its slope: the search does nothing. */

/* Whether search p.search is left out (no block measured again in its round). */
__device__ __forceinline__ int ht_search_idle(const J2kiHtParams &p)
{
    return p.search >= 2 && !p.stale[p.search - 1];
}

/* The bisection range after the first n steps of a search whose sums are sum[]. */
__device__ void ht_slope_replay(const J2kiHtParams &p, const unsigned long long *sum, int n, uint64_t *lo,
                                uint64_t *hi)
{
    *lo = J2KI_HT_SLOPE_BITS_MIN;
    *hi = J2KI_HT_SLOPE_BITS_MAX;
    for (int j = 1; j <= n && *hi - *lo > 1; j++) {
        uint64_t mid = j2ki_ht_slope_mid(*lo, *hi);
        if (j2ki_ht_plane_over(sum[j], p.target32))
            *lo = mid;
        else
            *hi = mid;
    }
}

/* SLOPE_STEP: the blocks' picks at step p.step's slope, summed into its slot. */
__device__ __forceinline__ void ht_slope_step(const J2kiHtParams &p)
{
    __shared__ unsigned long long part_sum;
    unsigned long long *sum = p.sums + (size_t)p.search * HT_SLOPE_SLOTS;
    const uint32_t nb_threads = gridDim.x * blockDim.x;
    unsigned long long part = 0;
    double lambda = 0.0;
    if (ht_search_idle(p))
        return;
    if (p.step) {
        uint64_t lo, hi;
        if (!j2ki_ht_plane_over(sum[0], p.target32))
            return;
        ht_slope_replay(p, sum, p.step - 1, &lo, &hi);
        if (hi - lo <= 1)
            return;
        lambda = j2ki_ht_slope(j2ki_ht_slope_mid(lo, hi));
    }
    /* every thread of the block reaches the barriers (the returns above are the block's alike) */
    if (threadIdx.x == 0)
        part_sum = 0;
    __syncthreads();
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.nb_cblks; i += nb_threads) {
        uint64_t bytes;
        j2ki_ht_plane_point(&p.st[i], p.weight[i], lambda, &bytes);
        part += bytes;
    }
    if (part)
        atomicAdd(&part_sum, part);
    __syncthreads();
    if (threadIdx.x == 0 && part_sum)
        atomicAdd(&sum[p.step], part_sum);
}

/* SLOPE_END: the search's slope from its sums: 0 when the picks at 0 fit, else the end of the
 * bisection (the smallest slope in range whose picks fit). */
__device__ __forceinline__ void ht_slope_end(const J2kiHtParams &p)
{
    const unsigned long long *sum = p.sums + (size_t)p.search * HT_SLOPE_SLOTS;
    uint64_t lo, hi;
    if (ht_search_idle(p))
        return;
    if (!j2ki_ht_plane_over(sum[0], p.target32)) {
        *p.lambda = 0.0;
        return;
    }
    ht_slope_replay(p, sum, HT_SLOPE_STEPS, &lo, &hi);
    if (hi - lo > 1)
        atomicOr(p.flag, 1u);   /* cannot happen: HT_SLOPE_STEPS close the range */
    *p.lambda = j2ki_ht_slope(hi);
}

/* MEASURE: the sets around each block's pick at the last slope, a warp per set (warp k of the
 * block's HT_SET_WARPS: plane lo + k; ht_warp.cuh), counted without storing a byte, into the
 * block's staging points; in a later round only for the blocks whose pick lies outside their
 * measured planes (ref/ht_plane.c measure_item). Warp 0's lane 0 records the planes, or none.
 * Every warp reads the block's points and writes only staging fields and its own set's. */
__device__ __forceinline__ void ht_measure(const J2kiHtParams &p)
{
    __shared__ HtWarpSmem sm[HT_WIDE_THREADS / 32];
    const uint64_t nb_warps = (gridDim.x * blockDim.x) >> 5;
    const uint32_t lane = threadIdx.x & 31u;
    const double lambda = *p.lambda;
    for (uint64_t t = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; t < (uint64_t)p.nb_cblks * HT_SET_WARPS;
         t += nb_warps) {
        const uint32_t i = (uint32_t)(t / HT_SET_WARPS);
        const int k = (int)(t % HT_SET_WARPS);
        HT_BLOCK(p, i);
        J2kiHtPlaneStat *st = &p.st[i];
        int measured = st->top > 0, b0, lo, hi;
        if (measured && p.round)
            measured = j2ki_ht_plane_stale(st, p.weight[i], lambda);
        if (!measured) {
            if (k == 0 && lane == 0) {
                st->mlo = 1;
                st->mhi = 0;
            }
            continue;
        }
        b0 = j2ki_ht_plane_span(st, p.weight[i], lambda, &lo, &hi);
        if (k == 0 && lane == 0) {
            if (p.round)
                atomicOr(&p.stale[p.round], 1u);
            st->mb0 = b0;
            st->mlo = lo;
            st->mhi = hi;
        }
        if (lo + k <= hi) {
            uint32_t rate[3];
            double sdist[3];
            const int fail = ht_warp_measure_set(coefs, cb.stride, cb.w, cb.h, cb.frac_bits, lo + k, st->refine,
                                                 cb.data_cap, &sm[threadIdx.x >> 5], rate, sdist);
            if (lane == 0) {
                st->mfail[k] = (uint8_t)(fail < 0);
                if (!fail)
                    for (int m = 0; m < 3; m++) {
                        st->mrate[k][m] = rate[m];
                        st->msdist[k][m] = sdist[m];
                    }
            }
        }
    }
}

/* COMMIT: a block's measured sets become its points once every one of them fitted
 * (j2ki_ht_plane_measure's rule). */
__device__ __forceinline__ void ht_commit(const J2kiHtParams &p)
{
    const uint32_t nb_threads = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.nb_cblks; i += nb_threads) {
        J2kiHtPlaneStat *st = &p.st[i];
        int ok = st->mlo <= st->mhi;
        for (int k = 0; ok && k <= st->mhi - st->mlo; k++)
            ok = !st->mfail[k];
        if (ok)
            j2ki_ht_plane_commit(st, st->mb0, st->mlo, st->mhi, (const uint32_t (*)[3])st->mrate,
                                 (const double (*)[3])st->msdist);
    }
}

/* CODE: each block's set at its plane (ref/ht_plane.c's final picks, ref/ht_ref.c's coding),
 * a warp per block (ht_warp.cuh), and its result, as tier-1's kernels store it (t1_kern.cu
 * t1_code_loaded). */
__device__ __forceinline__ void ht_code(const J2kiHtParams &p)
{
    __shared__ HtWarpSmem sm[HT_CODE_WARPS];
    const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31u;
    if (warp >= p.code_warps)
        return;
    const double lambda = p.budget ? *p.lambda : 0.0;
    for (uint32_t i = warp; i < p.nb_cblks; i += p.code_warps) {
        HT_BLOCK(p, i);
        J2kiCblkRes r;
        int plane = p.budget ? j2ki_ht_plane_final(&p.st[i], p.weight[i], lambda) : 0;
        r.err = ht_warp_encode_set(coefs, cb.stride, cb.w, cb.h, cb.nb_mag_bits, cb.frac_bits, plane, p.refine,
                                   &p.scratch[warp], &sm[threadIdx.x >> 5], p.data + cb.data_off, cb.data_cap,
                                   p.passes + cb.pass_off, cb.max_passes, &r.nb_passes, &r.numbps, &r.len);
        if (lane == 0) {
            if (r.err) {
                r.nb_passes = 0;
                atomicOr(p.flag, 1u);
            }
            p.res[i] = r;
        }
    }
}

extern "C" __global__ void __launch_bounds__(HT_WIDE_THREADS) j2ki_k_ht_stats(const __grid_constant__ J2kiHtParams p)
{
    ht_stats(p);
}

extern "C" __global__ void __launch_bounds__(HT_WIDE_THREADS) j2ki_k_ht_slope_step(const __grid_constant__ J2kiHtParams p)
{
    ht_slope_step(p);
}

extern "C" __global__ void __launch_bounds__(1) j2ki_k_ht_slope_end(const __grid_constant__ J2kiHtParams p)
{
    ht_slope_end(p);
}

extern "C" __global__ void __launch_bounds__(HT_WIDE_THREADS) j2ki_k_ht_measure(const __grid_constant__ J2kiHtParams p)
{
    ht_measure(p);
}

extern "C" __global__ void __launch_bounds__(HT_THREADS) j2ki_k_ht_commit(const __grid_constant__ J2kiHtParams p)
{
    ht_commit(p);
}

extern "C" __global__ void __launch_bounds__(32 * HT_CODE_WARPS) j2ki_k_ht_code(const __grid_constant__ J2kiHtParams p)
{
    ht_code(p);
}
