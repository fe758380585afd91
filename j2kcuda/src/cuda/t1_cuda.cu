/*
 * CUDA tier-1 (Annex D), see t1_cuda.h.
 *
 * 1. t1_prep_kernel: one warp per code-block ORs the magnitudes (the same OR j2ki_t1_load
 *    returns) and derives a work key, w*h*numbps: the number of sample visits of its passes.
 * 2. radix sort of (key, index), largest first (sort_cuda.h): the longest code-blocks start first
 *    (longest-processing-time-first), so the frame does not end waiting on a heavy block
 *    that happened to start late.
 * 3. Coding, by the default for every code-block shape (J2KI_T1_CUDA_PAR, see
 *    t1_par_cuda.cuh): the context modelling column-parallel, one warp per block (t1_par.h,
 *    lane x codes column x of each stripe), separated from the MQ coding of its symbol lists,
 *    one thread per block (j2ki_t1p_code_pass, the driver the host's j2ki_t1p_code runs), in
 *    chunks of 4 bit-planes, one launch of t1p_chunk_kernel per chunk running the MQ coding
 *    of the previous chunk beside the modelling of this one.
 * 4. Or by one of three kernels that run j2ki_t1_code (t1_core.h) per code-block exactly as
 *    t1_ref.c does, after j2ki_t1_load or an equivalent:
 *    - t1_lanes_kernel<N> (N = 1, 4, 8, 16, 32): N lanes of each warp code one block each
 *      (neighbours in sorted order), flags and magnitudes in a per-worker slice of the
 *      scratch, coder state in local memory; a grid-stride loop bounds the workers (one per
 *      code-block up to T1_MAX_WORKERS);
 *    - t1_smem_kernel<N> (N = 1, 4, 8; 4 is the default for larger blocks): the same with
 *      the stripe-column words in shared memory, built straight from the coefficients
 *      (t1_load_cols);
 *    - t1_code_kernel (variant 0): one single-warp thread block per block, the warp loads it
 *      into shared memory and lane 0 codes it with all of its state in shared memory.
 *    The MQ coder is one serial chain per block, so the speed is set by how many chains the
 *    SMs interleave and how much divergence N lanes cost (see J2KI_T1_CUDA_DEFAULT).
 *    Every kernel first copies the coder's tables to shared memory (t1_tables_load).
 *
 * Scratch layout (bytes, each part 256-aligned): keys in/out and indices in/out (u32 x n
 * each), the sort's temporary storage, then either per worker (at most T1_MAX_WORKERS) flags (u16)
 * and magnitudes (u32) of (max_w + 2) x (max_h + 2) samples, or (J2KI_T1_CUDA_PAR) numbps
 * (u32 x n), status (u32 x n) and one T1pLayout slot per code-block; the frame's scratch is
 * sized for the variant it runs (j2ki_t1_cuda_scratch_size_variant). Shared memory per block
 * of t1_code_kernel: the J2kiT1State, then its flags and magnitudes; of t1_smem_kernel: each
 * worker's ceil(max_h / 4) x (max_w + 2) stripe-column words; of t1p_chunk_kernel: each
 * warp's ceil(max_h / 4) x (32 or 64) stripe-column words.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The coder's tables (MQ states, zero-coding contexts, row gathers) in shared memory: lanes
 * of a warp coding different code-blocks look up different entries at once, which the
 * constant cache serves one address at a time and shared memory in one access (bank
 * conflicts aside). Every kernel that codes calls t1_tables_load() first; t1_core.h and
 * mqc.h read these names when J2KI_T1_SMEM_TABLES is defined.
 */
#define J2KI_T1_SMEM_TABLES 1
static __shared__ uint32_t j2ki_mqc_tab_s[94];
static __shared__ uint8_t j2ki_t1_zc_s[3 * 512];
static __shared__ uint8_t j2ki_t1_rows_s[32];
static __shared__ uint8_t j2ki_t1_sc_s[256];
/* at most this much static shared memory per kernel (the tables above): what the dynamic
 * shared memory must leave of a thread block's limit */
#define T1_SMEM_STATIC 2304
static_assert(sizeof(j2ki_mqc_tab_s) + sizeof(j2ki_t1_zc_s) + sizeof(j2ki_t1_rows_s) + sizeof(j2ki_t1_sc_s) <=
              T1_SMEM_STATIC, "T1_SMEM_STATIC");

extern "C" {
#include "hd/t1_core.h"
#include "hd/t1_par.h"
#include "hd/t1_stop.h"
#include "core/tuning.h"
}

static_assert(sizeof(j2ki_mqc_tab_s) == J2KI_MQC_NB_STATES * sizeof(uint32_t), "MQ table size");

/* All threads of the block, before any of them returns. sc: also the sign table, which only
 * the column-parallel coder reads (t1p_chunk_kernel). */
__device__ __forceinline__ void t1_tables_load(bool sc = false)
{
    for (int i = threadIdx.x; i < J2KI_MQC_NB_STATES; i += blockDim.x)
        j2ki_mqc_tab_s[i] = j2ki_mqc_tab_d[i];
    for (int i = threadIdx.x; i < 3 * 512; i += blockDim.x)
        j2ki_t1_zc_s[i] = j2ki_t1_zc_d[i];
    for (int i = threadIdx.x; i < 32; i += blockDim.x)
        j2ki_t1_rows_s[i] = j2ki_t1_rows_d[i];
    for (int i = threadIdx.x; sc && i < 256; i += blockDim.x)
        j2ki_t1_sc_s[i] = j2ki_t1_sc_d[i];
    __syncthreads();
}
#include "cuda/scan_cuda.h"
#include "cuda/sort_cuda.h"
#include "cuda/t1_cuda.h"

/* OR over the 32 lanes (shuffles: __reduce_or_sync needs sm_80, the build starts at sm_75). */
__device__ __forceinline__ uint32_t warp_or(uint32_t v)
{
    for (int o = 16; o > 0; o >>= 1)
        v |= __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* One worker per code-block up to this many (4K DCI has 26,292 code-blocks; tuning.h) */
#define T1_MAX_WORKERS J2KI_TUNE_T1_MAX_WORKERS

static uint32_t nb_workers(uint32_t nb_cblks)
{
    return nb_cblks < T1_MAX_WORKERS ? (nb_cblks ? nb_cblks : 1) : T1_MAX_WORKERS;
}

static size_t sort_temp_size(uint32_t n)
{
    return j2ki_sort_cuda_temp_size(n);
}

/* Bits of the work keys w * h * numbps: a code-block has at most 2^12 samples (xcb + ycb <= 12,
 * ISO/IEC 15444-1 A.6.1; plan.c refuses more) and numbps <= 32, so keys are below 2^18 and
 * the sort looks at those bits only. */
#define T1_WORK_KEY_BITS 18

static size_t t1p_scratch(uint32_t nb_cblks, int max_w, int max_h);

/* With the early stop, the column-parallel coder's launch schedule (t1p_code): split then
 * fused. Since thread blocks without work leave before loading the tables (t1p_chunk_kernel),
 * the tail's launches cost only their blocks' work, and split then fused overlaps the
 * modelling of chunks 3 and 4 with the MQ chains of chunks 2 and 3 (tuning.h). */
#define T1P_SPLIT_DEFAULT J2KI_TUNE_T1P_SPLIT
static int t1p_usable(int max_w, int max_h);

/*
 * The dynamic shared memory a thread block of this device may opt into (Turing 64 KB, sm_86
 * and sm_89 99 KB, A100 163 KB, Hopper 227 KB, less the kernel's static shared memory, which
 * the caller subtracts). cap > 0 lowers it to cap bytes (never raises it): the test hook
 * J2KC_CUDA_SMEM_OPTIN (hooks.h) runs the fallbacks of the smaller GPUs on a large one.
 */
static size_t t1_smem_optin(int cap)
{
    int dev = 0, v = 48 * 1024;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess || v < 48 * 1024)
        v = 48 * 1024;
    if (cap > 0 && cap < v)
        v = cap;
    return (size_t)v;
}

/*
 * Lanes of t1_smem_kernel for blocks of up to max_w x max_h on a device allowing `optin`
 * bytes of dynamic shared memory per thread block: the lanes asked for (8, 4 or 1) while 4
 * warps of that many workers' words fit, else fewer, else 0: the words do not fit even one
 * worker per warp and t1_lanes_kernel (words in global memory) codes the blocks. A 64 x 64
 * block's words take 4,224 bytes, so the default of 4 lanes needs 67,584 bytes: more than a
 * Turing GPU gives a thread block.
 */
static uint32_t t1_smem_lanes(uint32_t lanes, int max_w, int max_h, size_t optin, uint32_t *cols_bytes)
{
    const uint32_t cb = (uint32_t)(((size_t)((max_h + 3) >> 2) * (size_t)(max_w + 2) * 4 + 15) & ~(size_t)15);
    lanes = lanes >= 8 ? 8 : lanes >= 4 ? 4 : 1;
    while (lanes && (size_t)4 * lanes * cb + T1_SMEM_STATIC > optin)
        lanes = lanes == 8 ? 4 : lanes == 4 ? 1 : 0;
    *cols_bytes = cb;
    return lanes;
}

/* The variant a call with `variant` runs: J2KI_T1_CUDA_DEFAULT is J2KI_T1_CUDA_PAR, the
 * column-parallel coder, for every code-block shape. J2KI_T1_CUDA_PAR where it does not apply
 * falls back to the serial default for the size: t1p_usable refuses only blocks wider than
 * J2KI_T1P_MAX_W or whose stripe-column words exceed a launch's shared memory, and neither
 * happens for a legal code-block (Part 1 A.6.1: xcb, ycb <= 10, xcb + ycb <= 12, so at most
 * 1024 wide and 4,096 samples, 4 KB of words per warp); the fallback stays for callers that
 * pass other sizes. */
static int t1_resolve_variant(int variant, int max_w, int max_h)
{
    const size_t area = (size_t)max_w * (size_t)max_h;
    if (variant < 0)
        variant = J2KI_T1_CUDA_PAR;
    if (variant == J2KI_T1_CUDA_PAR && !t1p_usable(max_w, max_h))
        variant = area <= 1024 ? 8 : J2KI_T1_CUDA_SMEM + 4;
    return variant;
}

/* The variant of t1_resolve_variant that this device runs: J2KI_T1_CUDA_SMEM + N with fewer
 * lanes where N workers' words per warp exceed the device's shared memory, or N lanes with the
 * words in global memory where not even one worker's fit (t1_smem_lanes). Scratch sizes do not
 * change: both keep the same per-worker slices. */
static int t1_fit_variant(int variant, int smem_optin, int max_w, int max_h)
{
    uint32_t cols_bytes, lanes;
    if (variant == J2KI_T1_CUDA_PAR || !(variant & J2KI_T1_CUDA_SMEM))
        return variant;
    lanes = t1_smem_lanes((uint32_t)(variant & 63), max_w, max_h, t1_smem_optin(smem_optin), &cols_bytes);
    if (lanes)
        return J2KI_T1_CUDA_SMEM + (int)lanes;
    return (variant & 63) >= 8 ? 8 : (variant & 63) >= 4 ? 4 : 1;
}

extern "C" const char *j2ki_t1_cuda_kernel_name(int variant, int smem_optin, int max_w, int max_h)
{
    variant = t1_fit_variant(t1_resolve_variant(variant, max_w, max_h), smem_optin, max_w, max_h);
    if (variant == J2KI_T1_CUDA_PAR)
        return max_w > 64 ? "t1p_chunk_kernel<2, groups>"                    /* t1p_layout().nc, gr */
               : max_w > 32 ? "t1p_chunk_kernel<2>" : "t1p_chunk_kernel<1>";
    switch (variant) {
    case J2KI_T1_CUDA_SMEM + 8: return "t1_smem_kernel<8>";
    case J2KI_T1_CUDA_SMEM + 4: return "t1_smem_kernel<4>";
    case J2KI_T1_CUDA_SMEM + 1: return "t1_smem_kernel<1>";
    case 0:                     return "t1_code_kernel";
    default:
        return variant >= 32 ? "t1_lanes_kernel<32>" : variant >= 16 ? "t1_lanes_kernel<16>" :
               variant >= 8 ? "t1_lanes_kernel<8>" : variant >= 4 ? "t1_lanes_kernel<4>" : "t1_lanes_kernel<1>";
    }
}

/* Scratch after the keys, indices and sort storage: per worker slices for the serial
 * variants, per code-block state for J2KI_T1_CUDA_PAR (t1p_scratch). */
static size_t t1_scratch_head(uint32_t nb_cblks)
{
    size_t n = nb_cblks ? nb_cblks : 1;
    return 4 * align256(n * 4) + align256(sort_temp_size((uint32_t)n));
}

static size_t t1_scratch_workers(uint32_t nb_cblks, int max_w, int max_h)
{
    size_t per = (size_t)(max_w + 2) * (size_t)(max_h + 2);
    return (size_t)nb_workers(nb_cblks) * (align256(per * 2) + align256(per * 4));
}

extern "C" size_t j2ki_t1_cuda_scratch_size_variant(uint32_t nb_cblks, int max_w, int max_h, int variant)
{
    variant = t1_resolve_variant(variant, max_w, max_h);
    return t1_scratch_head(nb_cblks) + (variant == J2KI_T1_CUDA_PAR ? t1p_scratch(nb_cblks, max_w, max_h)
                                                                    : t1_scratch_workers(nb_cblks, max_w, max_h));
}

extern "C" size_t j2ki_t1_cuda_scratch_size(uint32_t nb_cblks, int max_w, int max_h)
{
    size_t a = t1_scratch_workers(nb_cblks, max_w, max_h), b = t1p_scratch(nb_cblks, max_w, max_h);
    return t1_scratch_head(nb_cblks) + (a > b ? a : b);
}

__global__ void __launch_bounds__(256) t1_prep_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
                                                      uint32_t nb_cblks, uint32_t *keys, uint32_t *idx,
                                                      uint32_t *nbps, uint32_t *stat)
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
__global__ void __launch_bounds__(32) t1_code_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
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
__global__ void __launch_bounds__(128) t1_lanes_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
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
__global__ void __launch_bounds__(128) t1_smem_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
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

/* J2KI_T1_CUDA_PAR: t1p_chunk_kernel and its layout (see there) */
#include "cuda/t1_par_cuda.cuh"
static_assert(T1P_PLANES == J2KI_T1S_PLANES && J2KI_T1S_FIRST >= 1 && J2KI_T1S_FIRST <= T1P_PLANES,
              "the early stop decides between the coder's chunks, of at most T1P_PLANES planes");
static_assert(sizeof(j2ki_mqc_tab_s) + sizeof(j2ki_t1_zc_s) + sizeof(j2ki_t1_rows_s) + sizeof(j2ki_t1_sc_s) <=
                  T1P_SMEM_TABLES,
              "t1p_usable counts the tables' shared memory");

/* ---- tier-1's early stop (t1_stop.h) ---- */

/* Keys per block at decision step s: its known passes, at most j2ki_t1s_chunk_end(s) (a block
 * stopped earlier has fewer, one that ends sooner too), so block i's keys sit at i * E. */
#define T1S_MAX_E ((uint32_t)(3 * J2KI_T1S_PLANES * J2KI_T1S_STEPS - 2))

/* Scratch of J2kiT1StopDev, each part 256-aligned: the limits (u32 per block), then, for
 * nb_cblks * T1S_MAX_E entries, the keys and bytes (in and sorted), the running byte sums,
 * and the sort's and scan's storage. */
typedef struct T1sScratch {
    uint32_t *lim, *key, *key_s, *bytes, *bytes_s, *cum;
    void *temp;
    size_t temp_bytes;
} T1sScratch;

static size_t t1s_temp_size(size_t n)
{
    size_t a = j2ki_sort_cuda_temp_size(n), b = j2ki_scan_cuda_temp_size(n, 4);
    return a > b ? a : b;
}

/* Bits of the early stop's keys (j2ki_t1s_key): those of a positive float, sign bit clear. */
#define T1S_KEY_BITS 31

static T1sScratch t1s_scratch(const J2kiT1StopDev *stop, uint32_t nb_cblks)
{
    T1sScratch t;
    uint8_t *p = (uint8_t *)stop->d_scratch;
    const size_t n = (size_t)nb_cblks * T1S_MAX_E, m = align256(n * 4);
    t.lim = (uint32_t *)p;      p += align256((size_t)nb_cblks * 4);
    t.key = (uint32_t *)p;      p += m;
    t.key_s = (uint32_t *)p;    p += m;
    t.bytes = (uint32_t *)p;    p += m;
    t.bytes_s = (uint32_t *)p;  p += m;
    t.cum = (uint32_t *)p;      p += m;
    t.temp = p;
    t.temp_bytes = t1s_temp_size(n);
    return t;
}

extern "C" size_t j2ki_t1s_cuda_scratch_size(uint32_t nb_cblks)
{
    const size_t n = (size_t)nb_cblks * T1S_MAX_E;
    return align256((size_t)nb_cblks * 4) + 5 * align256(n * 4) + align256(t1s_temp_size(n));
}

static uint32_t *t1s_lim(const J2kiT1StopDev *stop)
{
    return (uint32_t *)stop->d_scratch;
}

extern "C" const uint32_t *j2ki_t1s_cuda_limits(const J2kiT1StopDev *stop)
{
    return t1s_lim(stop);
}

/* Passes block i has in all: from numbps (column-parallel coder, nbps) or its result. */
__device__ __forceinline__ int t1s_nb_passes(const J2kiCblkDev &cb, uint32_t i, const uint32_t *nbps,
                                             const J2kiCblkRes *res)
{
    if (nbps)
        return t1p_valid(cb, (int)nbps[i]) ? 3 * (int)nbps[i] - 2 : 0;
    return res[i].err ? 0 : res[i].nb_passes;
}

/* Step 1 of decision step s, one thread per block (j2ki_t1s_block_keys), E keys each. */
__global__ void __launch_bounds__(128) t1s_keys_kernel(const J2kiCblkDev *cblks, uint32_t nb_cblks,
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
__global__ void __launch_bounds__(128) t1s_decide_kernel(const J2kiCblkDev *cblks, uint32_t nb_cblks,
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

/* One decision step: keys, radix sort by key (largest first) with the bytes (sort_cuda.h),
 * inclusive sum of the bytes (scan_cuda.h), decisions. The sums are integers, so ties among equal keys
 * cannot change the threshold (t1_stop.c's host search gives the same key). */
static cudaError_t t1s_step(const J2kiT1StopDev *stop, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                            const uint32_t *nbps, const J2kiCblkRes *res, J2kiPass *d_passes, int s,
                            cudaStream_t st)
{
    T1sScratch t = t1s_scratch(stop, nb_cblks);
    const unsigned blocks = (nb_cblks + 127) / 128;
    const uint32_t e = (uint32_t)j2ki_t1s_chunk_end(s);
    const int n = (int)(nb_cblks * e);
    const J2kiSortArgs so = { t.key, t.bytes, t.key_s, t.bytes_s, (size_t)n, T1S_KEY_BITS, t.temp, t.temp_bytes };
    const J2kiScanArgs sc = { t.bytes_s, t.cum, (size_t)n, 4, 0, t.temp, t.temp_bytes };
    cudaError_t e2;
    t1s_keys_kernel<<<blocks, 128, 0, st>>>(d_cblks, nb_cblks, nbps, res, d_passes, stop->d_weight, t.lim, s, e,
                                             t.key, t.bytes);
    if ((e2 = cudaPeekAtLastError()) != cudaSuccess ||
        (e2 = j2ki_sort_cuda(&so, st)) != cudaSuccess || (e2 = j2ki_scan_cuda(&sc, st)) != cudaSuccess)
        return e2;
    t1s_decide_kernel<<<blocks, 128, 0, st>>>(d_cblks, nb_cblks, nbps, res, t.key, t.key_s, t.cum, (uint32_t)n, e,
                                               d_passes, stop->d_weight, stop->budget, s, t.lim);
    return cudaPeekAtLastError();
}

/* The serial kernels (every variant but J2KI_T1_CUDA_PAR) over the sorted blocks (order);
 * lim: NULL, or the early stop's second run (only the blocks with lim[i] != 0, up to it). */
static cudaError_t t1_serial(const void *d_samples, const J2kiCblkDev *d_cblks, const uint32_t *idx_out,
                             uint32_t nb_cblks, int cblk_style, int bypass_start, int max_w, int max_h,
                             uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res, uint32_t *d_flag, uint8_t *p,
                             int variant, int smem_optin, const uint32_t *lim, cudaStream_t st)
{
    size_t per = (size_t)(max_w + 2) * (size_t)(max_h + 2);
    size_t flags_bytes = (per * 2 + 15) & ~(size_t)15, mag_bytes = per * 4;
    size_t smem = sizeof(J2kiT1State) + flags_bytes + mag_bytes;
    cudaError_t e;
    variant = t1_fit_variant(variant, smem_optin, max_w, max_h);
    if (variant & J2KI_T1_CUDA_SMEM) {
        uint32_t workers = nb_workers(nb_cblks), cols_bytes;
        uint32_t lanes = t1_smem_lanes((uint32_t)(variant & 63), max_w, max_h, t1_smem_optin(smem_optin),
                                       &cols_bytes);
        size_t fb = align256(per * 2), wb = fb + align256(per * 4);
        size_t dyn = (size_t)4 * lanes * cols_bytes;
        uint32_t warps = (workers + lanes - 1) / lanes, blocks = (warps + 3) / 4;
#define T1_SMEM(n)                                                                                     \
        do {                                                                                           \
            if (dyn > 48 * 1024 && (e = cudaFuncSetAttribute(t1_smem_kernel<n>,                        \
                                                             cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                                             (int)dyn)) != cudaSuccess)                \
                return e;                                                                              \
            t1_smem_kernel<n><<<blocks, 128, dyn, st>>>((const int32_t *)d_samples, d_cblks, idx_out,   \
                                                         nb_cblks, cblk_style, bypass_start, d_data,    \
                                                         d_passes, d_res, d_flag, p, fb, wb, workers,   \
                                                         cols_bytes, lim);                              \
        } while (0)
        if (lanes == 8)
            T1_SMEM(8);
        else if (lanes == 4)
            T1_SMEM(4);
        else
            T1_SMEM(1);
#undef T1_SMEM
        return cudaPeekAtLastError();
    }
    if (variant > 0) {
        uint32_t workers = nb_workers(nb_cblks);
        size_t fb = align256(per * 2), wb = fb + align256(per * 4);
        uint32_t lanes = variant >= 32 ? 32 : variant >= 16 ? 16 : variant >= 8 ? 8 : variant >= 4 ? 4 : 1;
        uint32_t warps = (workers + lanes - 1) / lanes, blocks = (warps + 3) / 4;
#define T1_LANES(n)                                                                                   \
        t1_lanes_kernel<n><<<blocks, 128, 0, st>>>((const int32_t *)d_samples, d_cblks, idx_out, nb_cblks, \
                                                   cblk_style, bypass_start, d_data, d_passes, d_res, d_flag, p, \
                                                   fb, wb, workers, lim)
        switch (lanes) {
        case 1:  T1_LANES(1); break;
        case 4:  T1_LANES(4); break;
        case 8:  T1_LANES(8); break;
        case 16: T1_LANES(16); break;
        default: T1_LANES(32); break;
        }
#undef T1_LANES
        return cudaPeekAtLastError();
    }
    if (smem > 48 * 1024 &&
        (e = cudaFuncSetAttribute(t1_code_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) != cudaSuccess)
        return e;
    t1_code_kernel<<<nb_cblks, 32, smem, st>>>((const int32_t *)d_samples, d_cblks, idx_out, cblk_style,
                                               bypass_start, d_data, d_passes, d_res, d_flag,
                                               (uint32_t)flags_bytes, lim);
    return cudaPeekAtLastError();
}

/* A frame's part of the column-parallel coder's scratch (after its keys and indices). */
typedef struct T1pScratch {
    uint32_t *keys_in, *keys_out, *idx_in, *idx_out, *nbps, *stat;
    uint8_t  *slots;
    void     *temp;
    size_t    temp_bytes;
} T1pScratch;

static T1pScratch t1_scratch_parts(void *d_scratch, uint32_t nb_cblks)
{
    T1pScratch t;
    uint8_t *p = (uint8_t *)d_scratch;
    const size_t n = nb_cblks;
    t.temp_bytes = sort_temp_size(nb_cblks);
    t.keys_in = (uint32_t *)p;  p += align256(n * 4);
    t.keys_out = (uint32_t *)p; p += align256(n * 4);
    t.idx_in = (uint32_t *)p;   p += align256(n * 4);
    t.idx_out = (uint32_t *)p;  p += align256(n * 4);
    t.temp = p;                 p += align256(t.temp_bytes);
    t.nbps = (uint32_t *)p;                      /* J2KI_T1_CUDA_PAR only */
    t.stat = (uint32_t *)(p + align256(n * 4));
    t.slots = p + 2 * align256(n * 4);
    return t;
}

/* Steps 1 and 2 on st: the work keys (and, par, numbps and a clear status per block), the
 * sort, and the early stop's limits cleared; t: the frame's scratch (t1_scratch_parts). */
static cudaError_t t1_prepare(const void *d_samples, const J2kiT1StopDev *stop, T1pScratch t,
                              const J2kiCblkDev *d_cblks, uint32_t nb_cblks, int par, cudaStream_t st)
{
    const size_t n = nb_cblks;
    cudaError_t e;
    t1_prep_kernel<<<(unsigned)((n * 32 + 255) / 256), 256, 0, st>>>((const int32_t *)d_samples, d_cblks,
                                                                      nb_cblks, t.keys_in, t.idx_in,
                                                                      par ? t.nbps : NULL, par ? t.stat : NULL);
    if ((e = cudaPeekAtLastError()) != cudaSuccess)
        return e;
    const J2kiSortArgs so = { t.keys_in, t.idx_in, t.keys_out, t.idx_out, n, T1_WORK_KEY_BITS, t.temp,
                              t.temp_bytes };
    if ((e = j2ki_sort_cuda(&so, st)) != cudaSuccess)
        return e;
    if (stop && (e = cudaMemsetAsync(t1s_lim(stop), 0, n * sizeof(uint32_t), st)) != cudaSuccess)
        return e;
    return cudaSuccess;
}

/* J2KI_T1_CUDA_PAR's coding of the prepared frame F (t1_prepare) on st, with the early stop's
 * decisions between its launches when stop is not NULL. */
static cudaError_t t1p_code(const T1pFrameDev &F, const J2kiT1StopDev *stop, const J2kiCblkDev *d_cblks,
                            uint32_t nb_cblks, int cblk_style, int bypass_start, int max_w, int max_h,
                            cudaStream_t st)
{
    const T1pLayout lay = t1p_layout(max_w, max_h);
    const size_t dyn = t1p_smem(&lay);
    const size_t n = nb_cblks;
    const unsigned mblocks = (unsigned)((n + 3) / 4), qblocks = (unsigned)((n + 127) / 128);
    const int stops = stop != NULL;
    cudaError_t e;
    /* The launches of t1p_chunk_kernel as (chunk c, MQ part: chunk c - 1, model part: chunk
     * c) and the decision step before each. Fused (mode 0, the only one without the early
     * stop): launch c runs the MQ coding of chunk c - 1 beside the modelling of chunk c, for
     * c = 0 .. T1P_CHUNKS, and decision step s comes before launch s + 1, so a block it
     * stops has had chunk s modelled for nothing. Split (1): the modelling of chunk c alone,
     * then its MQ coding alone, decision step c before the modelling of chunk c. Split then
     * fused (2, T1P_SPLIT_DEFAULT with the early stop): split up to the modelling of chunk
     * J2KI_T1S_STEPS, fused after, where only the blocks with the most bit-planes are left
     * and the overlap of their MQ chains with the modelling shortens the frame's tail. The
     * decisions, hence the bytes, are the same in every mode. With BYPASS the modelling warp
     * packs the raw passes (the paper's one-kernel strategy, t1_par_cuda.cuh). */
    const int mode = !stops ? 0 : T1P_SPLIT_DEFAULT;
    const int ssplit = mode == 1 ? T1P_CHUNKS : mode == 2 ? J2KI_T1S_STEPS : -1;
    int plan_c[2 * T1P_CHUNKS + 2], plan_q[2 * T1P_CHUNKS + 2], plan_m[2 * T1P_CHUNKS + 2];
    int plan_s[2 * T1P_CHUNKS + 2], nl = 0;
    for (int c = 0; c <= T1P_CHUNKS; c++) {
        if (c <= ssplit) {          /* split: [MQ c - 1], then [model c] after step c */
            if (c > 0) {
                plan_c[nl] = c; plan_q[nl] = 1; plan_m[nl] = 0; plan_s[nl++] = 0;
            }
            if (c < T1P_CHUNKS) {
                plan_c[nl] = c; plan_q[nl] = 0; plan_m[nl] = 1; plan_s[nl++] = c;
            }
        } else {                    /* fused: [MQ c - 1 + model c] after step c - 1 */
            plan_c[nl] = c; plan_q[nl] = c > 0; plan_m[nl] = c < T1P_CHUNKS;
            plan_s[nl++] = c - 1 > ssplit ? c - 1 : 0;     /* not again after the split part */
        }
    }
    for (int k = 0; k < nl; k++) {
        const int c = plan_c[k];
        const unsigned q = plan_q[k] ? qblocks : 0, m = plan_m[k] ? mblocks : 0;
        /* decision step s once chunks 0 .. s - 1 are MQ-coded, against the frame's budget */
        const int step = plan_s[k];
        if (stops && step >= 1 && step <= J2KI_T1S_STEPS &&
            (e = t1s_step(stop, d_cblks, nb_cblks, F.nbps, NULL, F.passes, step, st)) != cudaSuccess)
            return e;
        if (lay.gr)                 /* blocks wider than 64: groups of 64 columns */
            t1p_chunk_kernel<2, true><<<q + m, 128, dyn, st>>>(F, d_cblks, nb_cblks, cblk_style, bypass_start, lay,
                                                               c, q);
        else if (lay.nc == 2)
            t1p_chunk_kernel<2><<<q + m, 128, dyn, st>>>(F, d_cblks, nb_cblks, cblk_style, bypass_start, lay, c, q);
        else
            t1p_chunk_kernel<1><<<q + m, 128, dyn, st>>>(F, d_cblks, nb_cblks, cblk_style, bypass_start, lay, c, q);
        if ((e = cudaPeekAtLastError()) != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

extern "C" cudaError_t j2ki_t1_cuda_variant(const void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                            int cblk_style, int bypass_start, int max_w, int max_h,
                                            uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res,
                                            uint32_t *d_flag, void *d_scratch, size_t scratch_size, int variant,
                                            int smem_optin, const J2kiT1StopDev *stop, cudaStream_t st)
{
    cudaError_t e;

    if (!nb_cblks)
        return cudaSuccess;
    variant = t1_resolve_variant(variant, max_w, max_h);
    if (scratch_size < j2ki_t1_cuda_scratch_size_variant(nb_cblks, max_w, max_h, variant) ||
        (stop && stop->scratch_size < j2ki_t1s_cuda_scratch_size(nb_cblks)))
        return cudaErrorInvalidValue;
    const T1pScratch t = t1_scratch_parts(d_scratch, nb_cblks);
    if ((e = t1_prepare(d_samples, stop, t, d_cblks, nb_cblks, variant == J2KI_T1_CUDA_PAR, st)) != cudaSuccess)
        return e;
    if (variant == J2KI_T1_CUDA_PAR) {
        T1pFrameDev F;
        F.samples = (const int32_t *)d_samples;
        F.order = t.idx_out;
        F.data = d_data;
        F.passes = d_passes;
        F.res = d_res;
        F.flag = d_flag;
        F.nbps = t.nbps;
        F.stat = t.stat;
        F.slots = t.slots;
        F.lim = stop ? t1s_lim(stop) : NULL;
        return t1p_code(F, stop, d_cblks, nb_cblks, cblk_style, bypass_start, max_w, max_h, st);
    }
    uint8_t *p = (uint8_t *)t.nbps;     /* the serial variants' worker slices */
    uint32_t *lim = stop ? t1s_lim(stop) : NULL;
    uint32_t *idx_out = t.idx_out;
    /* The serial kernels code every block fully; with the early stop, the decisions follow on
     * the finished passes (the estimates are causal: the same the column-parallel coder has at
     * each step, and the reference backend replays) and a second run codes the stopped blocks
     * up to their limit. */
    if ((e = t1_serial(d_samples, d_cblks, idx_out, nb_cblks, cblk_style, bypass_start, max_w, max_h, d_data,
                       d_passes, d_res, d_flag, p, variant, smem_optin, NULL, st)) != cudaSuccess || !lim)
        return e;
    for (int s1 = 1; s1 <= J2KI_T1S_STEPS; s1++)
        if ((e = t1s_step(stop, d_cblks, nb_cblks, NULL, d_res, d_passes, s1, st)) != cudaSuccess)
            return e;
    return t1_serial(d_samples, d_cblks, idx_out, nb_cblks, cblk_style, bypass_start, max_w, max_h, d_data,
                     d_passes, d_res, d_flag, p, variant, smem_optin, lim, st);
}
