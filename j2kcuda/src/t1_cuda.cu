/*
 * CUDA tier-1 (Annex D), see t1_cuda.h.
 *
 * 1. t1_prep_kernel: one warp per code-block ORs the magnitudes (the same OR j2ki_t1_load
 *    returns) and derives a work key, w*h*numbps: the number of sample visits of its passes.
 * 2. CUB radix sort of (key, index), largest first: the longest code-blocks start first
 *    (longest-processing-time-first), so the frame does not end waiting on a heavy block
 *    that happened to start late.
 * 3. t1_code_kernel: one warp per code-block, whose lane 0 runs j2ki_t1_load + j2ki_t1_code
 *    (t1_core.h) exactly as t1_ref.c does, with its flags in shared memory and magnitudes in
 *    a per-warp slice of the scratch area (a grid-stride loop over the sorted blocks bounds it).
 *
 * Scratch layout (bytes, each part 256-aligned): keys in/out (u32 x n x 2), indices in/out
 * (u32 x n x 2), CUB temporary storage, then per worker: magnitudes (u32) of
 * (max_w + 2) x (max_h + 2) samples.
 */
#include <cub/device/device_radix_sort.cuh>

extern "C" {
#include "t1_core.h"
}
#include "t1_cuda.h"

#define T1_MAX_WORKERS 8192u
#define T1_WARPS       4      /* code-blocks (warps) per thread block */

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* Workers (warps) of the coding kernel: a multiple of T1_WARPS, at most T1_MAX_WORKERS. */
static uint32_t nb_workers(uint32_t nb_cblks)
{
    uint32_t n = nb_cblks < T1_MAX_WORKERS ? (nb_cblks ? nb_cblks : 1) : T1_MAX_WORKERS;
    return (n + T1_WARPS - 1) / T1_WARPS * T1_WARPS;
}

static size_t sort_temp_size(uint32_t n)
{
    size_t bytes = 0;
    cub::DeviceRadixSort::SortPairsDescending((void *)NULL, bytes, (const uint32_t *)NULL, (uint32_t *)NULL,
                                              (const uint32_t *)NULL, (uint32_t *)NULL, (int)n);
    return bytes;
}

extern "C" size_t j2ki_t1_cuda_scratch_size(uint32_t nb_cblks, int max_w, int max_h)
{
    size_t n = nb_cblks ? nb_cblks : 1;
    size_t per = (size_t)(max_w + 2) * (size_t)(max_h + 2);
    return 4 * align256(n * 4) + align256(sort_temp_size((uint32_t)n)) +
           (size_t)nb_workers(nb_cblks) * align256(per * 4);
}

__global__ void __launch_bounds__(256) t1_prep_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
                                                      uint32_t nb_cblks, uint32_t *keys, uint32_t *idx)
{
    const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (warp >= nb_cblks)
        return;
    const J2kiCblkDev cb = cblks[warp];
    const uint32_t n = (uint32_t)cb.w * cb.h;
    uint32_t acc = 0;
    for (uint32_t i = lane; i < n; i += 32) {
        uint32_t y = i / cb.w, x = i - y * cb.w;
        int32_t v = samples[cb.buf + (size_t)y * cb.stride + x];
        acc |= v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    }
    acc = __reduce_or_sync(0xFFFFFFFFu, acc);
    if (lane == 0) {
        int numbps = j2ki_t1_nbits(acc >> cb.frac_bits);
        keys[warp] = n * (uint32_t)numbps;
        idx[warp] = warp;
    }
}

/*
 * One code-block per warp, coded by lane 0 alone: the MQ coder is a serial chain, and lanes of
 * one warp coding different blocks would diverge on nearly every branch (the warp would run
 * each lane's path in turn). Warps interleave on the SM to hide each other's latencies.
 * Flags live in shared memory (each warp its own slice), magnitudes in the global scratch.
 */
__global__ void __launch_bounds__(32 * T1_WARPS) t1_code_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
                                                                const uint32_t *order, uint32_t nb_cblks,
                                                                int cblk_style, int bypass_start, uint8_t *data,
                                                                J2kiPass *passes, J2kiCblkRes *res, uint32_t *flag,
                                                                uint8_t *work, size_t flags_bytes, size_t mag_bytes)
{
    extern __shared__ __align__(16) uint8_t t1_smem[];
    const uint32_t warp = threadIdx.x >> 5;
    const uint32_t worker = blockIdx.x * T1_WARPS + warp;
    const uint32_t nb = gridDim.x * T1_WARPS;
    J2kiT1State st;
    if ((threadIdx.x & 31) != 0)
        return;
    st.flags = (uint16_t *)(t1_smem + (size_t)warp * flags_bytes);
    st.mag = (uint32_t *)(work + (size_t)worker * mag_bytes);
    for (uint32_t j = worker; j < nb_cblks; j += nb) {
        const uint32_t i = order[j];
        const J2kiCblkDev cb = cblks[i];
        J2kiCblkRes r;
        uint32_t acc = j2ki_t1_load(&st, samples + cb.buf, cb.stride, cb.w, cb.h, cb.orient, cblk_style);
        int numbps = j2ki_t1_nbits(acc >> cb.frac_bits);
        r.numbps = numbps;
        r.nb_passes = 0;
        r.err = 0;
        r.len = 0;
        if (numbps > cb.nb_mag_bits || numbps > J2KI_T1_MAX_PLANES) {
            r.err = J2KC_ERR_INTERNAL;
        } else if (numbps > 0) {
            r.err = j2ki_t1_code(&st, numbps, cblk_style, bypass_start, cb.frac_bits, data + cb.data_off,
                                 cb.data_cap, passes + cb.pass_off, cb.max_passes, &r.len);
            r.nb_passes = r.err ? 0 : 3 * numbps - 2;
        }
        if (r.err)
            atomicOr(flag, 1u);
        res[i] = r;
    }
}

extern "C" cudaError_t j2ki_t1_cuda(const void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                    int cblk_style, int bypass_start, int max_w, int max_h,
                                    uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res,
                                    uint32_t *d_flag, void *d_scratch, size_t scratch_size, cudaStream_t st)
{
    uint8_t *p = (uint8_t *)d_scratch;
    size_t n = nb_cblks, per = (size_t)(max_w + 2) * (size_t)(max_h + 2);
    size_t temp_bytes = sort_temp_size(nb_cblks);
    uint32_t *keys_in, *keys_out, *idx_in, *idx_out;
    uint32_t workers = nb_workers(nb_cblks);
    size_t flags_bytes = (per * 2 + 15) & ~(size_t)15, mag_bytes = align256(per * 4);
    size_t smem = T1_WARPS * flags_bytes;
    void *temp;
    cudaError_t e;

    if (!nb_cblks)
        return cudaSuccess;
    if (scratch_size < j2ki_t1_cuda_scratch_size(nb_cblks, max_w, max_h))
        return cudaErrorInvalidValue;
    keys_in = (uint32_t *)p;  p += align256(n * 4);
    keys_out = (uint32_t *)p; p += align256(n * 4);
    idx_in = (uint32_t *)p;   p += align256(n * 4);
    idx_out = (uint32_t *)p;  p += align256(n * 4);
    temp = p;                 p += align256(temp_bytes);

    t1_prep_kernel<<<(unsigned)((n * 32 + 255) / 256), 256, 0, st>>>((const int32_t *)d_samples, d_cblks,
                                                                      nb_cblks, keys_in, idx_in);
    if ((e = cudaPeekAtLastError()) != cudaSuccess)
        return e;
    if ((e = cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out, idx_in, idx_out,
                                                       (int)nb_cblks, 0, 32, st)) != cudaSuccess)
        return e;
    if (smem > 48 * 1024 &&
        (e = cudaFuncSetAttribute(t1_code_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) != cudaSuccess)
        return e;
    t1_code_kernel<<<workers / T1_WARPS, 32 * T1_WARPS, smem, st>>>(
        (const int32_t *)d_samples, d_cblks, idx_out, nb_cblks, cblk_style, bypass_start, d_data, d_passes,
        d_res, d_flag, p, flags_bytes, mag_bytes);
    return cudaPeekAtLastError();
}
