/*
 * CUDA tier-1's kernels (device code only, Annex D): see t1_cuda.cu for the design, the
 * scratch and the launches. Each body below is a device function; the entries at the end
 * (kernels.def) take its parameter struct (t1_kern.cuh) and keep its launch bounds.
 */
#include "cuda/t1_kern.cuh"

__device__ __forceinline__ void t1_prep_kernel(const int32_t *samples, const J2kiCblkDev *cblks, uint32_t nb_cblks,
                                               uint32_t *keys, uint32_t *idx, uint32_t *nbps, uint32_t *stat)
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
    acc = warp_or(acc);
    if (lane == 0) {
        int numbps = j2ki_t1_nbits(acc >> cb.frac_bits);
        keys[warp] = n * (uint32_t)numbps;
        idx[warp] = warp;
        if (nbps) {                  /* J2KI_T1_CUDA_PAR: numbps and a clear status per block */
            nbps[warp] = (uint32_t)numbps;
            stat[warp] = 0;
        }
    }
}

/*
 * The state j2ki_t1_load() leaves, built by the 32 lanes of a warp together (the serial loop
 * would wait on one global load per sample): geometry fields, every flag cleared (border
 * included), NEG and magnitude per sample, and the OR of the magnitudes. check_cuda compares
 * every pass and byte with t1_ref.c, so a change to j2ki_t1_load that this misses shows there.
 */
__device__ uint32_t load_warp(J2kiT1State *st, const int32_t *coefs, uint32_t stride, int w, int h, int orient,
                              int cblk_style, int lane)
{
    const int ps = w + 2, n = (w + 2) * (h + 2);
    uint32_t acc = 0;
    if (lane == 0) {
        st->w = w;
        st->h = h;
        st->stride = ps;
        st->zc_off = 256 * j2ki_t1_zc_class(orient);
        st->vc_mask = (cblk_style & J2KI_CBLK_VCAUSAL) ? J2KI_T1_VC_MASK : 0xFFFFu;
    }
    for (int i = lane; i < n; i += 32)
        st->flags[i] = 0;
    __syncwarp();
    for (int i = lane; i < w * h; i += 32) {
        int y = i / w, x = i - y * w;
        int32_t v = coefs[(size_t)y * stride + x];
        uint32_t neg = (uint32_t)v >> 31;
        uint32_t m = neg ? 0u - (uint32_t)v : (uint32_t)v;
        int idx = (y + 1) * ps + x + 1;
        st->mag[idx] = m;
        st->flags[idx] = (uint16_t)(neg << 15);
        acc |= m;
    }
    acc = warp_or(acc);
    __syncwarp();
    return acc;
}

/*
 * Codes block i once loaded (acc: the OR of its magnitudes; cols: its flags already hold the
 * stripe-column words, as t1_load_cols leaves them) and stores its result, as t1_ref.c does:
 * numbps, pass count, error (also raised in the frame's flag), length.
 */
__device__ __forceinline__ void t1_code_loaded(J2kiT1State *st, uint32_t acc, int cols, const J2kiCblkDev *cb,
                                               uint32_t i, int cblk_style, int bypass_start, uint8_t *data,
                                               J2kiPass *passes, J2kiCblkRes *res, uint32_t *flag, int lim)
{
    J2kiCblkRes r;
    int numbps = j2ki_t1_nbits(acc >> cb->frac_bits);
    r.numbps = numbps;
    r.nb_passes = 0;
    r.err = 0;
    r.len = 0;
    if (numbps > cb->nb_mag_bits || numbps > J2KI_T1_MAX_PLANES) {
        r.err = J2KC_ERR_INTERNAL;
    } else if (numbps > 0) {
        r.err = cols ? j2ki_t1_code_cols_lim(st, numbps, cblk_style, bypass_start, cb->frac_bits,
                                             data + cb->data_off, cb->data_cap, passes + cb->pass_off,
                                             cb->max_passes, &r.len, lim)
                     : j2ki_t1_code_lim(st, numbps, cblk_style, bypass_start, cb->frac_bits, data + cb->data_off,
                                        cb->data_cap, passes + cb->pass_off, cb->max_passes, &r.len, lim);
        r.nb_passes = r.err ? 0 : lim > 0 && lim < 3 * numbps - 2 ? lim : 3 * numbps - 2;
    }
    if (r.err)
        atomicOr(flag, 1u);
    res[i] = r;
}

/*
 * One code-block per thread block of one warp: the warp loads the block into shared memory,
 * then lane 0 alone codes it (the MQ coder is a serial chain; lanes coding different blocks
 * would diverge on nearly every branch). Everything the coder touches -- flags, magnitudes and
 * the coder state itself -- sits in shared memory, so the serial chain never waits on L2.
 * Blocks are launched in sorted order (heaviest first); the SMs take as many as fit.
 */
__device__ __forceinline__ void t1_code_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
                                                     const uint32_t *order, int cblk_style, int bypass_start,
                                                     uint8_t *data, J2kiPass *passes, J2kiCblkRes *res,
                                                     uint32_t *flag, uint32_t flags_bytes, const uint32_t *lim)
{
    extern __shared__ __align__(16) uint8_t t1_smem[];
    const int lane = threadIdx.x;
    const uint32_t i = order[blockIdx.x];
    const J2kiCblkDev cb = cblks[i];
    J2kiT1State *st = (J2kiT1State *)t1_smem;
    t1_tables_load();
    if (lim && !lim[i])                 /* the early stop's second run: stopped blocks only */
        return;
    if (lane == 0) {
        st->flags = (uint16_t *)(t1_smem + sizeof(J2kiT1State));
        st->mag = (uint32_t *)(t1_smem + sizeof(J2kiT1State) + flags_bytes);
    }
    __syncwarp();
    uint32_t acc = load_warp(st, samples + cb.buf, cb.stride, cb.w, cb.h, cb.orient, cblk_style, lane);
    if (lane != 0)
        return;
    t1_code_loaded(st, acc, 0, &cb, i, cblk_style, bypass_start, data, passes, res, flag, lim ? (int)lim[i] : 0);
}

/*
 * Variant with LANES lanes of each warp coding LANES different code-blocks (neighbours in the
 * sorted order, so of similar work): more blocks per issued instruction where their control
 * flow agrees, serialised where it diverges. Flags and magnitudes in a per-worker slice of
 * the global scratch, coder state in local memory.
 */
template <int LANES>
__device__ __forceinline__ void t1_lanes_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
                                                       const uint32_t *order, uint32_t nb_cblks, int cblk_style,
                                                       int bypass_start, uint8_t *data, J2kiPass *passes,
                                                       J2kiCblkRes *res, uint32_t *flag, uint8_t *work,
                                                       size_t flags_bytes, size_t work_bytes, uint32_t nb_workers,
                                                       const uint32_t *lim)
{
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t worker = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * LANES + lane;
    J2kiT1State st;
    t1_tables_load();
    if (lane >= LANES || worker >= nb_workers)
        return;
    st.flags = (uint16_t *)(work + (size_t)worker * work_bytes);
    st.mag = (uint32_t *)(work + (size_t)worker * work_bytes + flags_bytes);
    for (uint32_t j = worker; j < nb_cblks; j += nb_workers) {
        const uint32_t i = order[j];
        if (lim && !lim[i])             /* the early stop's second run: stopped blocks only */
            continue;
        const J2kiCblkDev cb = cblks[i];
        uint32_t acc = j2ki_t1_load(&st, samples + cb.buf, cb.stride, cb.w, cb.h, cb.orient, cblk_style);
        t1_code_loaded(&st, acc, 0, &cb, i, cblk_style, bypass_start, data, passes, res, flag, lim ? (int)lim[i] : 0);
    }
}

/*
 * What j2ki_t1_load() then j2ki_t1_build_cols() leave, built straight from the coefficients:
 * the magnitudes of the interior samples (the border is never read) and the stripe-column
 * words with their chi bits (signs of rows 4k - 1 .. 4k + 4 of column x; 0 outside the
 * block), at st->flags, which t1_smem_kernel points into shared memory. Returns the OR of the
 * magnitudes. check_cuda compares every pass and byte with t1_ref.c.
 */
__device__ uint32_t t1_load_cols(J2kiT1State *st, const int32_t *coefs, uint32_t stride, int w, int h, int orient,
                                 int cblk_style)
{
    const int ws = w + 2, ns = (h + 3) >> 2;
    uint32_t *cols = (uint32_t *)(void *)st->flags, acc = 0;
    st->w = w;
    st->h = h;
    st->stride = ws;
    st->zc_off = 256 * j2ki_t1_zc_class(orient);
    st->vc_mask = (cblk_style & J2KI_CBLK_VCAUSAL) ? J2KI_T1_VC_MASK : 0xFFFFu;
    for (int k = 0; k < ns; k++) {
        const int j0 = k ? 0 : 1, j1 = j2ki_imin(5, h - 4 * k);
        uint32_t *row = cols + k * ws;
        row[0] = 0;
        row[w + 1] = 0;
        for (int x = 0; x < w; x++) {
            uint32_t chi = 0;
            for (int j = j0; j <= j1; j++) {
                int y = 4 * k + j - 1;
                int32_t v = coefs[(size_t)y * stride + x];
                chi |= ((uint32_t)v >> 31) << j;
                if (j >= 1 && j <= 4) {
                    uint32_t m = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
                    st->mag[(y + 1) * ws + x + 1] = m;
                    acc |= m;
                }
            }
            row[x + 1] = chi << 18;
        }
    }
    return acc;
}

/*
 * t1_lanes_kernel with the stripe-column words in shared memory (J2KI_T1_CUDA_SMEM): the
 * words are read and updated on every sample a pass visits (a significant sample updates up
 * to nine), so with thousands of coders per frame in flight their global scratch misses L1
 * and every visit waits on L2; in shared memory it does not. Magnitudes (read once per coded
 * sample) stay in the worker's global slice. cols_bytes per worker of the block.
 */
template <int LANES>
__device__ __forceinline__ void t1_smem_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
                                                      const uint32_t *order, uint32_t nb_cblks, int cblk_style,
                                                      int bypass_start, uint8_t *data, J2kiPass *passes,
                                                      J2kiCblkRes *res, uint32_t *flag, uint8_t *work,
                                                      size_t mag_at, size_t work_bytes, uint32_t nb_workers,
                                                      uint32_t cols_bytes, const uint32_t *lim)
{
    extern __shared__ __align__(16) uint8_t t1_cols_smem[];
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t worker = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * LANES + lane;
    J2kiT1State st;
    t1_tables_load();
    if (lane >= LANES || worker >= nb_workers)
        return;
    st.flags = (uint16_t *)(t1_cols_smem + (size_t)((threadIdx.x >> 5) * LANES + lane) * cols_bytes);
    st.mag = (uint32_t *)(work + (size_t)worker * work_bytes + mag_at);
    for (uint32_t j = worker; j < nb_cblks; j += nb_workers) {
        const uint32_t i = order[j];
        if (lim && !lim[i])             /* the early stop's second run: stopped blocks only */
            continue;
        const J2kiCblkDev cb = cblks[i];
        uint32_t acc = t1_load_cols(&st, samples + cb.buf, cb.stride, cb.w, cb.h, cb.orient, cblk_style);
        t1_code_loaded(&st, acc, 1, &cb, i, cblk_style, bypass_start, data, passes, res, flag, lim ? (int)lim[i] : 0);
    }
}

/* ---- tier-1's early stop (t1_stop.h) ---- */

/* Passes block i has in all: from numbps (column-parallel coder, nbps) or its result. */
__device__ __forceinline__ int t1s_nb_passes(const J2kiCblkDev &cb, uint32_t i, const uint32_t *nbps,
                                             const J2kiCblkRes *res)
{
    if (nbps)
        return t1p_valid(cb, (int)nbps[i]) ? 3 * (int)nbps[i] - 2 : 0;
    return res[i].err ? 0 : res[i].nb_passes;
}

/* Step 1 of decision step s, one thread per block (j2ki_t1s_block_keys), E keys each. */
__device__ __forceinline__ void t1s_keys_kernel(const J2kiCblkDev *cblks, uint32_t nb_cblks,
                                                       const uint32_t *nbps, const J2kiCblkRes *res,
                                                       J2kiPass *passes, const double *weight, const uint32_t *lim,
                                                       int s, uint32_t e, uint32_t *key, uint32_t *bytes)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nb_cblks)
        return;
    const J2kiCblkDev cb = cblks[i];
    const int known = j2ki_t1s_known(s, t1s_nb_passes(cb, i, nbps, res), lim[i]);
    j2ki_t1s_block_keys(passes + cb.pass_off, known, (int)e, weight[i], key + (size_t)i * e, bytes + (size_t)i * e);
}

/* Steps 2 and 3, one thread per block: the threshold is the sorted key at the first running
 * byte sum above the budget (each thread finds it by bisection: the same loads for all), then
 * j2ki_t1s_decide for the blocks not stopped yet. */
__device__ __forceinline__ void t1s_decide_kernel(const J2kiCblkDev *cblks, uint32_t nb_cblks,
                                                         const uint32_t *nbps, const J2kiCblkRes *res,
                                                         const uint32_t *key, const uint32_t *key_s,
                                                         const uint32_t *cum, uint32_t n, uint32_t e,
                                                         const J2kiPass *passes, const double *weight,
                                                         uint64_t budget, int s, uint32_t *lim)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nb_cblks || lim[i])
        return;
    uint32_t t = 0;
    if (n && cum[n - 1] > budget) {
        uint32_t lo = 0, hi = n - 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (cum[mid] > budget)
                hi = mid;
            else
                lo = mid + 1;
        }
        t = key_s[lo];
    }
    const J2kiCblkDev cb = cblks[i];
    const int nbp = t1s_nb_passes(cb, i, nbps, res);
    lim[i] = j2ki_t1s_decide(key + (size_t)i * e, passes + cb.pass_off, j2ki_t1s_known(s, nbp, 0), nbp, weight[i], t);
}

/* ---- entries ---------------------------------------------------------------------------- */

extern "C" __global__ void __launch_bounds__(256) j2ki_k_t1_prep(const __grid_constant__ J2kiT1PrepParams p)
{
    t1_prep_kernel(p.samples, p.cblks, p.nb_cblks, p.keys, p.idx, p.nbps, p.stat);
}

extern "C" __global__ void __launch_bounds__(32) j2ki_k_t1_code(const __grid_constant__ J2kiT1CodeParams p)
{
    t1_code_kernel(p.samples, p.cblks, p.order, p.cblk_style, p.bypass_start, p.data, p.passes, p.res, p.flag,
                   p.flags_bytes, p.lim);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1_lanes1(const __grid_constant__ J2kiT1LanesParams p)
{
    t1_lanes_kernel<1>(p.samples, p.cblks, p.order, p.nb_cblks, p.cblk_style, p.bypass_start, p.data, p.passes,
                       p.res, p.flag, p.work, p.flags_bytes, p.work_bytes, p.nb_workers, p.lim);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1_lanes4(const __grid_constant__ J2kiT1LanesParams p)
{
    t1_lanes_kernel<4>(p.samples, p.cblks, p.order, p.nb_cblks, p.cblk_style, p.bypass_start, p.data, p.passes,
                       p.res, p.flag, p.work, p.flags_bytes, p.work_bytes, p.nb_workers, p.lim);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1_lanes8(const __grid_constant__ J2kiT1LanesParams p)
{
    t1_lanes_kernel<8>(p.samples, p.cblks, p.order, p.nb_cblks, p.cblk_style, p.bypass_start, p.data, p.passes,
                       p.res, p.flag, p.work, p.flags_bytes, p.work_bytes, p.nb_workers, p.lim);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1_lanes16(const __grid_constant__ J2kiT1LanesParams p)
{
    t1_lanes_kernel<16>(p.samples, p.cblks, p.order, p.nb_cblks, p.cblk_style, p.bypass_start, p.data, p.passes,
                        p.res, p.flag, p.work, p.flags_bytes, p.work_bytes, p.nb_workers, p.lim);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1_lanes32(const __grid_constant__ J2kiT1LanesParams p)
{
    t1_lanes_kernel<32>(p.samples, p.cblks, p.order, p.nb_cblks, p.cblk_style, p.bypass_start, p.data, p.passes,
                        p.res, p.flag, p.work, p.flags_bytes, p.work_bytes, p.nb_workers, p.lim);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1_smem1(const __grid_constant__ J2kiT1SmemParams p)
{
    t1_smem_kernel<1>(p.samples, p.cblks, p.order, p.nb_cblks, p.cblk_style, p.bypass_start, p.data, p.passes,
                      p.res, p.flag, p.work, p.mag_at, p.work_bytes, p.nb_workers, p.cols_bytes, p.lim);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1_smem4(const __grid_constant__ J2kiT1SmemParams p)
{
    t1_smem_kernel<4>(p.samples, p.cblks, p.order, p.nb_cblks, p.cblk_style, p.bypass_start, p.data, p.passes,
                      p.res, p.flag, p.work, p.mag_at, p.work_bytes, p.nb_workers, p.cols_bytes, p.lim);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1_smem8(const __grid_constant__ J2kiT1SmemParams p)
{
    t1_smem_kernel<8>(p.samples, p.cblks, p.order, p.nb_cblks, p.cblk_style, p.bypass_start, p.data, p.passes,
                      p.res, p.flag, p.work, p.mag_at, p.work_bytes, p.nb_workers, p.cols_bytes, p.lim);
}

/* The column-parallel coder's launches: the frame's pointers stay in parameter space, read in
 * place (no per-thread copy); the bounds are t1p_chunk_kernel's (t1_par_cuda.cuh). */
extern "C" __global__ void __launch_bounds__(128, T1P_MIN_BLOCKS_NC1)
j2ki_k_t1p_chunk1(const __grid_constant__ J2kiT1pChunkParams p)
{
    t1p_chunk_kernel<1, false>(p.F, p.cblks, p.nb_cblks, p.cblk_style, p.bypass_start, p.lay, p.c, p.qblocks);
}

extern "C" __global__ void __launch_bounds__(128, T1P_MIN_BLOCKS_NC2)
j2ki_k_t1p_chunk2(const __grid_constant__ J2kiT1pChunkParams p)
{
    t1p_chunk_kernel<2, false>(p.F, p.cblks, p.nb_cblks, p.cblk_style, p.bypass_start, p.lay, p.c, p.qblocks);
}

extern "C" __global__ void __launch_bounds__(128, T1P_MIN_BLOCKS_NC2)
j2ki_k_t1p_chunk2_gr(const __grid_constant__ J2kiT1pChunkParams p)
{
    t1p_chunk_kernel<2, true>(p.F, p.cblks, p.nb_cblks, p.cblk_style, p.bypass_start, p.lay, p.c, p.qblocks);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1s_keys(const J2kiT1sKeysParams p)
{
    t1s_keys_kernel(p.cblks, p.nb_cblks, p.nbps, p.res, p.passes, p.weight, p.lim, p.s, p.e, p.key, p.bytes);
}

extern "C" __global__ void __launch_bounds__(128) j2ki_k_t1s_decide(const __grid_constant__ J2kiT1sDecideParams p)
{
    t1s_decide_kernel(p.cblks, p.nb_cblks, p.nbps, p.res, p.key, p.key_s, p.cum, p.n, p.e, p.passes, p.weight,
                      p.budget, p.s, p.lim);
}
