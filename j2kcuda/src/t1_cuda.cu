/*
 * CUDA tier-1 (Annex D), see t1_cuda.h.
 *
 * 1. t1_prep_kernel: one warp per code-block ORs the magnitudes (the same OR j2ki_t1_load
 *    returns) and derives a work key, w*h*numbps: the number of sample visits of its passes.
 * 2. CUB radix sort of (key, index), largest first: the longest code-blocks start first
 *    (longest-processing-time-first), so the frame does not end waiting on a heavy block
 *    that happened to start late.
 * 3. Coding, by one of three kernels that run j2ki_t1_code (t1_core.h) per code-block
 *    exactly as t1_ref.c does, after j2ki_t1_load or an equivalent:
 *    - t1_lanes_kernel<N> (N = 1, 4, 8, 16, 32; 8 is the default for 32x32 blocks): N lanes
 *      of each warp code one block each (neighbours in sorted order), flags and magnitudes
 *      in a per-worker slice of the scratch, coder state in local memory; a grid-stride loop
 *      bounds the workers (one per code-block up to T1_MAX_WORKERS);
 *    - t1_smem_kernel<N> (N = 1, 4, 8; 4 is the default for larger blocks): the same with
 *      the stripe-column words in shared memory, built straight from the coefficients
 *      (t1_load_cols);
 *    - t1_code_kernel (variant 0): one single-warp thread block per block, the warp loads it
 *      into shared memory and lane 0 codes it with all of its state in shared memory.
 *    The MQ coder is one serial chain per block, so the speed is set by how many chains the
 *    SMs interleave and how much divergence N lanes cost (see J2KI_T1_CUDA_DEFAULT).
 *    Every kernel first copies the coder's tables to shared memory (t1_tables_load).
 * 4. Or (J2KI_T1_CUDA_PAR, not the default, blocks at most 64 wide) the context modelling
 *    column-parallel, one warp per block (t1_par.h: t1p_model_kernel), separated from the
 *    MQ coding of its symbol lists, one thread per block (t1p_mq_kernel through
 *    j2ki_t1p_code_pass, the driver the host's j2ki_t1p_code runs), in chunks of 4
 *    bit-planes; see the comment at T1P_PLANES.
 *
 * Scratch layout (bytes, each part 256-aligned): keys in/out and indices in/out (u32 x n
 * each), CUB's temporary storage, then either per worker (at most T1_MAX_WORKERS) flags (u16)
 * and magnitudes (u32) of (max_w + 2) x (max_h + 2) samples, or (J2KI_T1_CUDA_PAR, the same
 * bytes, sized for the larger of the two) numbps (u32 x n), status (u32 x n) and one
 * T1pLayout slot per code-block. Shared memory per block of
 * t1_code_kernel: the J2kiT1State, then its flags and magnitudes; of t1_smem_kernel: each
 * worker's ceil(max_h / 4) x (max_w + 2) stripe-column words; of t1p_model_kernel: each
 * warp's ceil(max_h / 4) x (32 or 64) stripe-column words.
 */
#include <cub/device/device_radix_sort.cuh>
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

extern "C" {
#include "t1_core.h"
#include "t1_par.h"
}

static_assert(sizeof(j2ki_mqc_tab_s) == J2KI_MQC_NB_STATES * sizeof(uint32_t), "MQ table size");

/* All threads of the block, before any of them returns. */
__device__ __forceinline__ void t1_tables_load()
{
    for (int i = threadIdx.x; i < J2KI_MQC_NB_STATES; i += blockDim.x)
        j2ki_mqc_tab_s[i] = j2ki_mqc_tab_d[i];
    for (int i = threadIdx.x; i < 3 * 512; i += blockDim.x)
        j2ki_t1_zc_s[i] = j2ki_t1_zc_d[i];
    for (int i = threadIdx.x; i < 32; i += blockDim.x)
        j2ki_t1_rows_s[i] = j2ki_t1_rows_d[i];
    __syncthreads();
}
#include "t1_cuda.h"

/* OR over the 32 lanes (shuffles: __reduce_or_sync needs sm_80, the build starts at sm_75). */
__device__ __forceinline__ uint32_t warp_or(uint32_t v)
{
    for (int o = 16; o > 0; o >>= 1)
        v |= __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* One worker per code-block up to this many (4K DCI has 26,292 code-blocks): with 8,192 a 4K
 * frame's tier-1 took 28 ms on an H200 and 16.4 ms with one per block, for 128 MB more scratch
 * per slot (about 7 KB per worker with 32x32 blocks). */
#define T1_MAX_WORKERS 32768u

static uint32_t nb_workers(uint32_t nb_cblks)
{
    /* J2KC_CUDA_T1_WORKERS: a measuring aid (the same value must hold from init on) */
    const char *e = getenv("J2KC_CUDA_T1_WORKERS");
    uint32_t cap = e && atoi(e) > 0 ? (uint32_t)atoi(e) : T1_MAX_WORKERS;
    return nb_cblks < cap ? (nb_cblks ? nb_cblks : 1) : cap;
}

static size_t sort_temp_size(uint32_t n)
{
    size_t bytes = 0;
    cub::DeviceRadixSort::SortPairsDescending((void *)NULL, bytes, (const uint32_t *)NULL, (uint32_t *)NULL,
                                              (const uint32_t *)NULL, (uint32_t *)NULL, (int)n);
    return bytes;
}

static size_t t1p_scratch(uint32_t nb_cblks, int max_w, int max_h);

/* The per-worker slices of the serial variants and the per-block state of J2KI_T1_CUDA_PAR
 * share the scratch after the sort: one variant runs at a time. */
extern "C" size_t j2ki_t1_cuda_scratch_size(uint32_t nb_cblks, int max_w, int max_h)
{
    size_t n = nb_cblks ? nb_cblks : 1;
    size_t per = (size_t)(max_w + 2) * (size_t)(max_h + 2);
    size_t workers = (size_t)nb_workers(nb_cblks) * (align256(per * 2) + align256(per * 4));
    size_t par = t1p_scratch(nb_cblks, max_w, max_h);
    return 4 * align256(n * 4) + align256(sort_temp_size((uint32_t)n)) + (workers > par ? workers : par);
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
                                               J2kiPass *passes, J2kiCblkRes *res, uint32_t *flag)
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
        r.err = cols ? j2ki_t1_code_cols(st, numbps, cblk_style, bypass_start, cb->frac_bits, data + cb->data_off,
                                         cb->data_cap, passes + cb->pass_off, cb->max_passes, &r.len)
                     : j2ki_t1_code(st, numbps, cblk_style, bypass_start, cb->frac_bits, data + cb->data_off,
                                    cb->data_cap, passes + cb->pass_off, cb->max_passes, &r.len);
        r.nb_passes = r.err ? 0 : 3 * numbps - 2;
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
                                                     uint32_t *flag, uint32_t flags_bytes)
{
    extern __shared__ __align__(16) uint8_t t1_smem[];
    const int lane = threadIdx.x;
    const uint32_t i = order[blockIdx.x];
    const J2kiCblkDev cb = cblks[i];
    J2kiT1State *st = (J2kiT1State *)t1_smem;
    t1_tables_load();
    if (lane == 0) {
        st->flags = (uint16_t *)(t1_smem + sizeof(J2kiT1State));
        st->mag = (uint32_t *)(t1_smem + sizeof(J2kiT1State) + flags_bytes);
    }
    __syncwarp();
    uint32_t acc = load_warp(st, samples + cb.buf, cb.stride, cb.w, cb.h, cb.orient, cblk_style, lane);
    if (lane != 0)
        return;
    t1_code_loaded(st, acc, 0, &cb, i, cblk_style, bypass_start, data, passes, res, flag);
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
                                                       size_t flags_bytes, size_t work_bytes, uint32_t nb_workers)
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
        const J2kiCblkDev cb = cblks[i];
        uint32_t acc = j2ki_t1_load(&st, samples + cb.buf, cb.stride, cb.w, cb.h, cb.orient, cblk_style);
        t1_code_loaded(&st, acc, 0, &cb, i, cblk_style, bypass_start, data, passes, res, flag);
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
                                                      uint32_t cols_bytes)
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
        const J2kiCblkDev cb = cblks[i];
        uint32_t acc = t1_load_cols(&st, samples + cb.buf, cb.stride, cb.w, cb.h, cb.orient, cblk_style);
        t1_code_loaded(&st, acc, 1, &cb, i, cblk_style, bypass_start, data, passes, res, flag);
    }
}

/*
 * ---- J2KI_T1_CUDA_PAR: column-parallel context modelling (t1_par.h), then MQ coding ----
 *
 * Tier-1 in two kernels per chunk of bit-planes (T1P_PLANES planes per chunk, every code-block
 * of the frame at once; the host launches the T1P_CHUNKS chunk pairs without knowing the
 * frame's bit-planes, a warp or thread whose block has none left in the chunk leaves at once):
 *   t1p_model_kernel<NC>: one warp per code-block (lane x codes column x, and x + 32 when
 *     NC = 2), stripe by stripe, pass by pass, the phases of t1_par.h: the pass's symbols
 *     (cx << 1 | d, raw bits as J2KI_T1P_CX_RAW << 1 | bit) go to the block's symbol buffer,
 *     the per-pass counts to its count array, the distortion (an integer warp sum, so
 *     exactly the serial sum) to passes[].dist;
 *   t1p_mq_kernel: one thread per code-block (sorted order, so a warp holds blocks of similar
 *     work) feeds the chunk's symbol lists to the MQ coder through j2ki_t1p_code_pass (the
 *     driver j2ki_t1p_code runs on the host), writing the data bytes, passes[].rate / term /
 *     slope and, after the last pass or an error, J2kiCblkRes.
 * What persists between chunks, per code-block (a slot of T1pLayout in the scratch): the
 * stripe-column words, the MQ coder with its contexts and marks (J2kiT1State) and the segment
 * bookkeeping (J2kiT1pCoder); per block also numbps (from t1_prep_kernel) and a status word.
 *
 * Why chunks: the symbols of a whole block are bounded by numbps (n + 2 c) + n (n samples,
 * c full stripe columns; proof at t1p_syms_cap), and numbps is only bounded by the band's
 * nb_mag_bits, which the scratch size does not know: 31 planes of 32 x 32 blocks would be
 * 48 KB per block, 1.3 GB for a 4K DCI frame. A chunk of 4 planes needs 7 KB per block
 * (t1p_layout: 10.2 KB per slot with the words and the coder, 268 MB for 4K DCI's 26,292
 * blocks), at the price of 2 x 8 launches per frame, most of them nearly empty.
 *
 * Warp discipline: every lane of the model kernel's warp takes part in every shuffle and
 * ballot (lanes whose columns lie beyond w carry zero words, masks and counts); the only
 * early exits are whole-warp (a block index or a block state the 32 lanes read alike). Each
 * lane reads and writes only the words of its own columns (the neighbours' chi bits and new
 * significance masks come by shuffles), the __syncwarp() calls mark the phase boundaries.
 *
 * NOT YET RUN ON A GPU (written on a machine without one; the host model of its driver,
 * chunks and symbol bound included, is test_t1_par's code_chunked). A device run must show:
 *   1. J2KC_CUDA_T1_VARIANT=128 tests/check-cuda.sh build: every per-stage tier-1 line "ok
 *      ... (kernel variant -1, J2KC_CUDA_T1_VARIANT=128) ... bytes identical" (the
 *      variable reaches the per-stage check, its capacity-overflow check and the end-to-end
 *      encodes, which all ask for the default), every end-to-end codestream identical;
 *   2. the same under compute-sanitizer --tool memcheck, racecheck and synccheck
 *      (CHECK_CUDA_SANITIZE=1 runs memcheck and racecheck on three configurations);
 *   3. check-cuda.sh build --bench: "ok ... kernel variant 128" on both bench frames (2K
 *      32x32 9/7, 2K 64x64 5/3: NC = 2) and its tier-1 ms against variants 8 and 64 + 8;
 *   4. bench/j2kbench at 4K DCI (BENCH_CASES=dci4k) with J2KC_CUDA_T1_VARIANT=128: st_t1
 *      against the default's 16 ms on an H200, and identical=1.
 */
#define T1P_PLANES 4
#define T1P_CHUNKS ((J2KI_T1_MAX_PLANES + T1P_PLANES - 1) / T1P_PLANES)
#define T1P_ALL 0xFFFFFFFFu
#define T1P_ERR_MODEL 1u      /* status: a chunk's symbols did not fit (never, by the bound) */
#define T1P_ERR_DONE  2u      /* status: the block failed and its result is written */

/*
 * Symbols of one chunk of a w x h block, at most: T1P_PLANES (n + 2 c) + n. In one bit-plane
 * every sample gets at most one symbol other than a sign: insignificant, it is coded by the
 * SPP or by the cleanup (not both: the cleanup skips what the SPP coded) and not by the MRP
 * (which codes what was significant before the plane); significant, by the MRP alone. A
 * run-length column of the cleanup (a full stripe column) spends 1 symbol on 4 rows without
 * a 1, or RL + 2 uniform symbols on rows 0..r (r + 1 >= 1 samples), at most 2 more than one
 * per sample. A sign follows each sample that becomes significant, once per block. Raw
 * (BYPASS) passes emit the same bits without contexts. n = max_w max_h and c = (max_h / 4)
 * max_w bound every block of the frame.
 */
static uint32_t t1p_syms_cap(int max_w, int max_h)
{
    uint32_t n = (uint32_t)max_w * (uint32_t)max_h, c = (uint32_t)(max_h / 4) * (uint32_t)max_w;
    return T1P_PLANES * (n + 2 * c) + n;
}

/* What persists of the MQ side between chunks. */
typedef struct T1pBlock {
    J2kiT1State  st;          /* mqc, ctx, marks (flags, mag, geometry unused) */
    J2kiT1pCoder cd;
} T1pBlock;

/* Per code-block slot (byte offsets, each 16-aligned): words (ns x ws u32, column x of
 * stripe k at k * ws + x, ws = 32 NC), T1pBlock, per-pass counts of a chunk, symbols. */
typedef struct T1pLayout {
    size_t   words, block, cnt, syms, slot;
    uint32_t syms_cap, ws, ns;
} T1pLayout;

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

static T1pLayout t1p_layout(int max_w, int max_h)
{
    T1pLayout l;
    l.ws = max_w > 32 ? 64 : 32;
    l.ns = (uint32_t)(max_h + 3) >> 2;
    l.syms_cap = t1p_syms_cap(max_w, max_h);
    l.words = 0;
    l.block = align16((size_t)l.ns * l.ws * 4);
    l.cnt = l.block + align16(sizeof(T1pBlock));
    l.syms = l.cnt + align16(3 * T1P_PLANES * sizeof(uint32_t));
    l.slot = l.syms + align16(l.syms_cap);
    return l;
}

/* Dynamic shared memory of t1p_model_kernel (4 warps, each its block's words). */
static size_t t1p_smem(const T1pLayout *l) { return (size_t)4 * l->ns * l->ws * 4; }

/* The variant applies: blocks at most 64 wide, words of 4 warps within 48 KB. */
static int t1p_usable(int max_w, int max_h)
{
    T1pLayout l = t1p_layout(max_w, max_h);
    return max_w <= 64 && t1p_smem(&l) <= 48 * 1024;
}

/* Scratch of the variant beyond the keys, indices and sort storage: numbps and status per
 * block, then the slots. */
static size_t t1p_scratch(uint32_t nb_cblks, int max_w, int max_h)
{
    size_t n = nb_cblks ? nb_cblks : 1;
    if (!t1p_usable(max_w, max_h))
        return 0;
    return 2 * align256(n * 4) + n * t1p_layout(max_w, max_h).slot;
}

/* A block the variant codes: numbps as the other kernels accept it (else they report). */
__device__ __forceinline__ int t1p_valid(const J2kiCblkDev &cb, int numbps)
{
    return numbps > 0 && numbps <= cb.nb_mag_bits && numbps <= J2KI_T1_MAX_PLANES &&
           3 * numbps - 2 <= cb.max_passes;
}

/* Values of the columns left (x - 1) and right (x + 1) of each of the lane's NC columns
 * (x = lane + 32 c; column 32's left is lane 31's first column), 0 beyond the block: every
 * lane must call it, with v = 0 for columns >= w. */
template <int NC>
__device__ __forceinline__ void t1p_nbrs(const uint32_t (&v)[NC], uint32_t (&l)[NC], uint32_t (&r)[NC],
                                         uint32_t lane)
{
    uint32_t up0 = __shfl_up_sync(T1P_ALL, v[0], 1), dn0 = __shfl_down_sync(T1P_ALL, v[0], 1);
    if constexpr (NC == 1) {
        l[0] = lane ? up0 : 0;
        r[0] = lane < 31 ? dn0 : 0;
    } else {
        uint32_t up1 = __shfl_up_sync(T1P_ALL, v[NC - 1], 1), dn1 = __shfl_down_sync(T1P_ALL, v[NC - 1], 1);
        uint32_t last0 = __shfl_sync(T1P_ALL, v[0], 31), first1 = __shfl_sync(T1P_ALL, v[NC - 1], 0);
        l[0] = lane ? up0 : 0;
        r[0] = lane < 31 ? dn0 : first1;
        l[NC - 1] = lane ? up1 : last0;
        r[NC - 1] = lane < 31 ? dn1 : 0;
    }
}

/*
 * Context modelling of chunk `chunk` of every code-block (see above). order: blocks in
 * decreasing work; nbps: numbps per block (t1_prep_kernel); stat: status per block. Words
 * in shared memory for the chunk (built from the coefficients in chunk 0, else loaded from
 * the slot; stored back when planes remain).
 */
template <int NC>
__global__ void __launch_bounds__(128) t1p_model_kernel(const int32_t *samples, const J2kiCblkDev *cblks,
                                                        const uint32_t *order, uint32_t nb_cblks, int cblk_style,
                                                        int bypass_start, J2kiPass *passes, const uint32_t *nbps,
                                                        uint32_t *stat, uint8_t *slots, T1pLayout lay, int chunk)
{
    extern __shared__ __align__(16) uint8_t t1p_smem_words[];
    const uint32_t lane = threadIdx.x & 31, j = blockIdx.x * 4 + (threadIdx.x >> 5);
    t1_tables_load();
    if (j >= nb_cblks)                                  /* whole warp */
        return;
    const uint32_t i = order[j];
    const J2kiCblkDev cb = cblks[i];
    const int numbps = (int)nbps[i], k0 = chunk * T1P_PLANES, k1 = j2ki_imin(k0 + T1P_PLANES, numbps);
    if (!t1p_valid(cb, numbps) || k0 >= k1 || stat[i])  /* whole warp: the same loads */
        return;
    const int w = cb.w, h = cb.h, ns = (h + 3) >> 2, ws = (int)lay.ws, nb_passes = 3 * numbps - 2;
    const int32_t *coefs = samples + cb.buf;
    uint8_t *slot = slots + (size_t)i * lay.slot;
    uint32_t *gwords = (uint32_t *)(slot + lay.words), *cnt = (uint32_t *)(slot + lay.cnt);
    uint8_t *syms = slot + lay.syms;
    uint32_t *words = (uint32_t *)t1p_smem_words + (threadIdx.x >> 5) * lay.ns * lay.ws;
    int x[NC], act[NC];
    for (int c = 0; c < NC; c++) {
        x[c] = (int)lane + 32 * c;
        act[c] = x[c] < w;
    }

    /* words of the lane's columns: chi bits (signs of rows 4k - 1 .. 4k + 4, as
     * t1_load_cols) in chunk 0, else as the previous chunk left them */
    for (int c = 0; c < NC; c++) {
        for (int k = 0; k < ns; k++) {
            uint32_t wd = 0;
            if (chunk == 0) {
                const int j0 = k ? 0 : 1, j1 = j2ki_imin(5, h - 4 * k);
                for (int jj = j0; act[c] && jj <= j1; jj++)
                    wd |= ((uint32_t)coefs[(size_t)(4 * k + jj - 1) * cb.stride + x[c]] >> 31) << jj;
                wd <<= 18;
            } else {
                wd = gwords[k * ws + x[c]];
            }
            words[k * ws + x[c]] = wd;
        }
    }
    __syncwarp();

    const int i0 = k0 ? 3 * k0 - 2 : 0, i1 = j2ki_imin(3 * k1 - 2, nb_passes);
    const uint8_t *zc = J2KI_T1_ZC + 512 * j2ki_t1_zc_class(cb.orient);
    uint32_t pos = 0;   /* symbols of the chunk's passes so far */
    for (int pi = i0; pi < i1; pi++) {
        const int kp = (pi + 2) / 3, type = (pi + 2) % 3;
        const int s = numbps - 1 - kp + cb.frac_bits, g = j2ki_t1_dist_shift(s);
        J2kiT1pPass p;
        p.zc = zc;
        p.cols = NULL;
        p.mag = NULL;
        p.stride = 0;
        p.w = w;
        p.h = h;
        p.nb_stripes = ns;
        p.vcw = (cblk_style & J2KI_CBLK_VCAUSAL) ? J2KI_T1_VC_WORD : 0xFFFFFFFFu;
        p.s = s;
        p.g = g;
        p.raw = j2ki_t1_pass_raw(pi, cblk_style, bypass_start);
        p.lmask = (1u << (s - g)) - 1u;
        p.base = p.lmask + 2u + (g > 0);
        uint32_t base = 0, bad = 0;
        int64_t sum = 0;
        for (int k = 0; k < ns; k++) {
            const int nr = j2ki_imin(4, h - 4 * k);
            uint32_t word[NC], bits[NC], mg[NC][4], sig[NC], left[NC], cl[NC], cr[NC];
            /* phase 0: the column's word and magnitudes (coalesced along x) */
            for (int c = 0; c < NC; c++) {
                word[c] = act[c] ? words[k * ws + x[c]] : 0;
                bits[c] = 0;
                for (int r = 0; r < 4; r++) {
                    int32_t v = act[c] && r < nr ? coefs[(size_t)(4 * k + r) * cb.stride + x[c]] : 0;
                    mg[c][r] = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
                    bits[c] |= ((mg[c][r] >> s) & 1) << r;
                }
            }
            t1p_nbrs<NC>(word, cl, cr, lane);     /* only their chi bits are read */
            /* phase 1: new-significance masks (t1_par.h): cleanup from the word; SPP by rounds
             * until no lane's assumed left mask changed (the ballot); MRP none */
            for (int c = 0; c < NC; c++) {
                left[c] = 0;
                sig[c] = type == 2 && act[c] ? j2ki_t1p_cup_sig(&p, word[c], bits[c]) : 0;
            }
            if (type == 0) {
                uint32_t changed;
                do {
                    uint32_t nl[NC], dummy[NC];
                    for (int c = 0; c < NC; c++)
                        sig[c] = act[c] ? j2ki_t1p_spp_sig(&p, word[c], left[c], bits[c], nr) : 0;
                    t1p_nbrs<NC>(sig, nl, dummy, lane);
                    changed = 0;
                    for (int c = 0; c < NC; c++) {
                        changed |= nl[c] != left[c];
                        left[c] = nl[c];
                    }
                } while (__ballot_sync(T1P_ALL, changed));
            } else {
                uint32_t dummy[NC];
                t1p_nbrs<NC>(sig, left, dummy, lane);
            }
            __syncwarp();
            /* phase 2: each lane codes its columns with the final left masks */
            J2kiT1pCol o[NC];
            uint32_t n[NC], osig[NC], incl[NC];
            for (int c = 0; c < NC; c++) {
                o[c].n = 0;
                o[c].sig = 0;
                o[c].set = 0;
                o[c].sum = 0;
                if (act[c]) {
                    if (type == 0)
                        j2ki_t1p_spp_col(&p, &o[c], word[c], left[c], cl[c], cr[c], mg[c], nr);
                    else if (type == 1)
                        j2ki_t1p_mrp_col(&p, &o[c], word[c], mg[c], nr);
                    else
                        j2ki_t1p_cup_col(&p, &o[c], word[c], left[c], cl[c], cr[c], mg[c], nr);
                }
                n[c] = (uint32_t)o[c].n;
                osig[c] = o[c].sig;
            }
            /* phase 3: inclusive prefix sum of the counts in column order (lane's first
             * columns, then its second ones), and the stripe's total */
            uint32_t tot = 0;
            for (int c = 0; c < NC; c++) {
                uint32_t v = n[c];
                for (int d = 1; d < 32; d <<= 1) {
                    uint32_t t = __shfl_up_sync(T1P_ALL, v, d);
                    if (lane >= (uint32_t)d)
                        v += t;
                }
                incl[c] = tot + v;
                tot += __shfl_sync(T1P_ALL, v, 31);
            }
            /* phase 4: emit at base + exclusive offset; distortion terms (integers) */
            for (int c = 0; c < NC; c++) {
                uint32_t off = pos + base + incl[c] - n[c];
                if (off + n[c] <= lay.syms_cap) {
                    for (uint32_t q = 0; q < n[c]; q++)
                        syms[off + q] = o[c].sym[q];
                } else {
                    bad = 1;
                }
                sum += o[c].sum;
            }
            base += tot;
            /* phase 5: the words of the lane's columns (t1_par.h, j2ki_t1p_update): sigma of
             * rows 1..4 from the masks of x - 1, x, x + 1, pi / mu, pi cleared by the cleanup,
             * row 5 of the stripe above, row 0 of the stripe below */
            uint32_t nw[NC], ne[NC];
            t1p_nbrs<NC>(osig, nw, ne, lane);
            for (int c = 0; c < NC; c++) {
                if (!act[c])
                    continue;
                uint32_t *cp = words + k * ws + x[c];
                uint32_t wd = word[c] | j2ki_t1p_spread(nw[c]) << 3 | j2ki_t1p_spread(osig[c]) << 4 |
                              j2ki_t1p_spread(ne[c]) << 5 | o[c].set;
                if (type == 2)
                    wd &= ~J2KI_T1_PI_ALL;
                *cp = wd;
                if (k > 0)
                    cp[-ws] |= ((nw[c] & 1) | (osig[c] & 1) << 1 | (ne[c] & 1) << 2) << 15;
                if (k + 1 < ns)
                    cp[ws] |= ((nw[c] >> 3) & 1) | ((osig[c] >> 3) & 1) << 1 | ((ne[c] >> 3) & 1) << 2;
            }
            __syncwarp();
        }
        /* the pass's distortion: warp sum of the lanes' integer sums, scaled as j2ki_t1p_pass */
        for (int d = 16; d > 0; d >>= 1)
            sum += __shfl_xor_sync(T1P_ALL, (long long)sum, d);
        if (lane == 0) {
            int64_t dd = type == 1 ? ((int64_t)1 << (s - g)) * sum : j2ki_t1_sig_scale(s, g) * sum;
            passes[cb.pass_off + pi].dist = ldexp((double)dd, 2 * g - 2 * cb.frac_bits - 2);
            cnt[pi - i0] = base;
        }
        pos += base;
        if (__any_sync(T1P_ALL, bad)) {
            if (lane == 0)
                stat[i] = T1P_ERR_MODEL;
            return;                                     /* whole warp */
        }
    }
    __syncwarp();
    if (k1 < numbps) {                                  /* planes remain: keep the words */
        for (int c = 0; c < NC; c++)
            for (int k = 0; k < ns; k++)
                gwords[k * ws + x[c]] = words[k * ws + x[c]];
    }
}

/*
 * MQ coding of chunk `chunk` of every code-block, one thread each (sorted order): the symbol
 * lists of the chunk's passes through j2ki_t1p_code_pass, the state in the block's slot.
 * Chunk 0 also reports the blocks with nothing to code or a numbps the others reject, exactly
 * as t1_lanes_kernel does; the last pass, or an error, writes the result.
 */
__global__ void __launch_bounds__(128) t1p_mq_kernel(const J2kiCblkDev *cblks, const uint32_t *order,
                                                     uint32_t nb_cblks, int cblk_style, int bypass_start,
                                                     uint8_t *data, J2kiPass *passes, J2kiCblkRes *res,
                                                     uint32_t *flag, const uint32_t *nbps, uint32_t *stat,
                                                     uint8_t *slots, T1pLayout lay, int chunk)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    t1_tables_load();
    if (j >= nb_cblks)
        return;
    const uint32_t i = order[j];
    const J2kiCblkDev cb = cblks[i];
    const int numbps = (int)nbps[i], k0 = chunk * T1P_PLANES, nb_passes = 3 * numbps - 2;
    uint8_t *slot = slots + (size_t)i * lay.slot;
    T1pBlock *b = (T1pBlock *)(void *)(slot + lay.block);
    J2kiCblkRes r;
    r.numbps = numbps;
    r.nb_passes = 0;
    r.err = 0;
    r.len = 0;
    if (chunk == 0 && !t1p_valid(cb, numbps)) {
        if (numbps > cb.nb_mag_bits || numbps > J2KI_T1_MAX_PLANES)
            r.err = J2KC_ERR_INTERNAL;
        else if (numbps > 0)
            r.err = J2KC_ERR_BUFSIZE;                   /* 3 numbps - 2 > max_passes */
        if (r.err)
            atomicOr(flag, 1u);
        res[i] = r;
        return;
    }
    if (!t1p_valid(cb, numbps) || k0 >= numbps || (stat[i] & T1P_ERR_DONE))
        return;
    if (stat[i] & T1P_ERR_MODEL) {
        r.err = J2KC_ERR_INTERNAL;
    } else {
        const int i0 = k0 ? 3 * k0 - 2 : 0, i1 = j2ki_imin(3 * j2ki_imin(k0 + T1P_PLANES, numbps) - 2, nb_passes);
        const uint32_t *cnt = (const uint32_t *)(slot + lay.cnt);
        const uint8_t *syms = slot + lay.syms;
        uint32_t pos = 0;
        if (chunk == 0)
            j2ki_t1p_coder_init(&b->st, &b->cd);
        for (int pi = i0; pi < i1 && !r.err; pi++) {
            uint32_t n = cnt[pi - i0];
            r.err = j2ki_t1p_code_pass(&b->st, &b->cd, pi, nb_passes, cblk_style, bypass_start, syms + pos, n,
                                       data + cb.data_off, cb.data_cap, passes + cb.pass_off);
            pos += n;
        }
        if (!r.err && i1 < nb_passes)
            return;                                     /* more chunks follow */
        if (!r.err) {
            r.nb_passes = nb_passes;
            r.len = (uint32_t)b->cd.seg_start;
        }
    }
    if (r.err) {
        stat[i] = T1P_ERR_DONE;
        atomicOr(flag, 1u);
    }
    res[i] = r;
}

extern "C" cudaError_t j2ki_t1_cuda(const void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                    int cblk_style, int bypass_start, int max_w, int max_h,
                                    uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res,
                                    uint32_t *d_flag, void *d_scratch, size_t scratch_size, cudaStream_t st)
{
    return j2ki_t1_cuda_variant(d_samples, d_cblks, nb_cblks, cblk_style, bypass_start, max_w, max_h, d_data,
                                d_passes, d_res, d_flag, d_scratch, scratch_size, J2KI_T1_CUDA_DEFAULT, st);
}

extern "C" cudaError_t j2ki_t1_cuda_variant(const void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                            int cblk_style, int bypass_start, int max_w, int max_h,
                                            uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res,
                                            uint32_t *d_flag, void *d_scratch, size_t scratch_size, int variant,
                                            cudaStream_t st)
{
    uint8_t *p = (uint8_t *)d_scratch;
    size_t n = nb_cblks, per = (size_t)(max_w + 2) * (size_t)(max_h + 2);
    size_t temp_bytes = sort_temp_size(nb_cblks);
    uint32_t *keys_in, *keys_out, *idx_in, *idx_out;
    size_t flags_bytes = (per * 2 + 15) & ~(size_t)15, mag_bytes = per * 4;
    size_t smem = sizeof(J2kiT1State) + flags_bytes + mag_bytes;
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
    temp = p;
    p += align256(temp_bytes);

    const char *env = getenv("J2KC_CUDA_T1_VARIANT");   /* a measuring aid, as check_cuda --bench */
    if (variant < 0 && env && *env >= '0' && *env <= '9')
        variant = atoi(env);
    /* measured on an H200 (t1_cuda.h, J2KI_T1_CUDA_DEFAULT); also J2KI_T1_CUDA_PAR's fallback
     * for blocks wider than 64 (or whose words do not fit its shared memory) */
    if (variant < 0 || (variant == J2KI_T1_CUDA_PAR && !t1p_usable(max_w, max_h)))
        variant = (size_t)max_w * (size_t)max_h <= 1024 ? 8 : J2KI_T1_CUDA_SMEM + 4;
    uint32_t *t1p_nbps = NULL, *t1p_stat = NULL;
    if (variant == J2KI_T1_CUDA_PAR) {
        t1p_nbps = (uint32_t *)p;
        t1p_stat = (uint32_t *)(p + align256(n * 4));
    }

    t1_prep_kernel<<<(unsigned)((n * 32 + 255) / 256), 256, 0, st>>>((const int32_t *)d_samples, d_cblks,
                                                                      nb_cblks, keys_in, idx_in, t1p_nbps,
                                                                      t1p_stat);
    if ((e = cudaPeekAtLastError()) != cudaSuccess)
        return e;
    if ((e = cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out, idx_in, idx_out,
                                                       (int)nb_cblks, 0, 32, st)) != cudaSuccess)
        return e;
    if (variant == J2KI_T1_CUDA_PAR) {
        const T1pLayout lay = t1p_layout(max_w, max_h);
        uint8_t *slots = p + 2 * align256(n * 4);
        const size_t dyn = t1p_smem(&lay);
        const unsigned mblocks = (unsigned)((n + 3) / 4), qblocks = (unsigned)((n + 127) / 128);
        for (int c = 0; c < T1P_CHUNKS; c++) {
            if (lay.ws == 64)
                t1p_model_kernel<2><<<mblocks, 128, dyn, st>>>((const int32_t *)d_samples, d_cblks, idx_out,
                                                               nb_cblks, cblk_style, bypass_start, d_passes,
                                                               t1p_nbps, t1p_stat, slots, lay, c);
            else
                t1p_model_kernel<1><<<mblocks, 128, dyn, st>>>((const int32_t *)d_samples, d_cblks, idx_out,
                                                               nb_cblks, cblk_style, bypass_start, d_passes,
                                                               t1p_nbps, t1p_stat, slots, lay, c);
            if ((e = cudaPeekAtLastError()) != cudaSuccess)
                return e;
            t1p_mq_kernel<<<qblocks, 128, 0, st>>>(d_cblks, idx_out, nb_cblks, cblk_style, bypass_start, d_data,
                                                   d_passes, d_res, d_flag, t1p_nbps, t1p_stat, slots, lay, c);
            if ((e = cudaPeekAtLastError()) != cudaSuccess)
                return e;
        }
        return cudaSuccess;
    }
    if (variant & J2KI_T1_CUDA_SMEM) {
        uint32_t workers = nb_workers(nb_cblks), lanes = variant & 63;
        size_t fb = align256(per * 2), wb = fb + align256(per * 4);
        uint32_t cols_bytes = (uint32_t)(((size_t)((max_h + 3) >> 2) * (size_t)(max_w + 2) * 4 + 15) & ~(size_t)15);
        lanes = lanes >= 8 ? 8 : lanes >= 4 ? 4 : 1;
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
                                                         cols_bytes);                                   \
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
                                                   fb, wb, workers)
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
                                               (uint32_t)flags_bytes);
    return cudaPeekAtLastError();
}
