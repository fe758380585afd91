/*
 * CUDA tier-1 (Annex D), see t1_cuda.h: the host side here, the kernels named below in
 * t1_kern.cu (entries j2ki_k_t1*, kernels.def).
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

#include "cuda/cuda_launch.h"
#include "cuda/cu_driver.h"
#include "cuda/scan_cuda.h"
#include "cuda/sort_cuda.h"
#include "cuda/t1_kern.cuh"

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
    CUdevice dev = 0;
    int v = J2KI_CUDA_SMEM_DEFAULT;
    if (J2KI_CUFN(cuCtxGetDevice)(&dev) != CUDA_SUCCESS ||
        J2KI_CUFN(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev) != CUDA_SUCCESS ||
        v < J2KI_CUDA_SMEM_DEFAULT)
        v = J2KI_CUDA_SMEM_DEFAULT;
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

/* One decision step: keys, radix sort by key (largest first) with the bytes (sort_cuda.h),
 * inclusive sum of the bytes (scan_cuda.h), decisions. The sums are integers, so ties among equal keys
 * cannot change the threshold (t1_stop.c's host search gives the same key). */
static CUresult t1s_step(const J2kiT1StopDev *stop, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                         const uint32_t *nbps, const J2kiCblkRes *res, J2kiPass *d_passes, int s,
                         CUstream st)
{
    T1sScratch t = t1s_scratch(stop, nb_cblks);
    const unsigned blocks = (nb_cblks + 127) / 128;
    const uint32_t e = (uint32_t)j2ki_t1s_chunk_end(s);
    const int n = (int)(nb_cblks * e);
    const J2kiSortArgs so = { t.key, t.bytes, t.key_s, t.bytes_s, (size_t)n, T1S_KEY_BITS, t.temp, t.temp_bytes };
    const J2kiScanArgs sc = { t.bytes_s, t.cum, (size_t)n, 4, 0, t.temp, t.temp_bytes };
    CUresult e2;
    const J2kiT1sKeysParams keys = { d_cblks, nb_cblks, nbps, res, d_passes, stop->d_weight, t.lim, s, e,
                                     t.key, t.bytes };
    const J2kiT1sDecideParams decide = { d_cblks, nb_cblks, nbps, res, t.key, t.key_s, t.cum, (uint32_t)n, e,
                                         d_passes, stop->d_weight, stop->budget, s, t.lim };
    if ((e2 = j2ki_launch(j2ki_kernel<J2KI_K_T1S_KEYS>, blocks, 128, 0, st, keys)) != CUDA_SUCCESS ||
        (e2 = j2ki_sort_cuda(&so, st)) != CUDA_SUCCESS || (e2 = j2ki_scan_cuda(&sc, st)) != CUDA_SUCCESS)
        return e2;
    return j2ki_launch(j2ki_kernel<J2KI_K_T1S_DECIDE>, blocks, 128, 0, st, decide);
}

/* The serial kernels (every variant but J2KI_T1_CUDA_PAR) over the sorted blocks (order);
 * lim: NULL, or the early stop's second run (only the blocks with lim[i] != 0, up to it). */
static CUresult t1_serial(const void *d_samples, const J2kiCblkDev *d_cblks, const uint32_t *idx_out,
                          uint32_t nb_cblks, int cblk_style, int bypass_start, int max_w, int max_h,
                          uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res, uint32_t *d_flag, uint8_t *p,
                          int variant, int smem_optin, const uint32_t *lim, CUstream st)
{
    size_t per = (size_t)(max_w + 2) * (size_t)(max_h + 2);
    size_t flags_bytes = (per * 2 + 15) & ~(size_t)15, mag_bytes = per * 4;
    size_t smem = sizeof(J2kiT1State) + flags_bytes + mag_bytes;
    variant = t1_fit_variant(variant, smem_optin, max_w, max_h);
    if (variant & J2KI_T1_CUDA_SMEM) {
        uint32_t workers = nb_workers(nb_cblks), cols_bytes;
        uint32_t lanes = t1_smem_lanes((uint32_t)(variant & 63), max_w, max_h, t1_smem_optin(smem_optin),
                                       &cols_bytes);
        size_t fb = align256(per * 2), wb = fb + align256(per * 4);
        size_t dyn = (size_t)4 * lanes * cols_bytes;
        uint32_t warps = (workers + lanes - 1) / lanes, blocks = (warps + 3) / 4;
        const J2kiT1SmemParams k = { (const int32_t *)d_samples, d_cblks, idx_out, nb_cblks, cblk_style,
                                     bypass_start, d_data, d_passes, d_res, d_flag, p, fb, wb, workers,
                                     cols_bytes, lim };
        const J2kiKernelOf<J2kiT1SmemParams> id = lanes == 8 ? j2ki_kernel<J2KI_K_T1_SMEM8> : lanes == 4 ? j2ki_kernel<J2KI_K_T1_SMEM4>
                                               : j2ki_kernel<J2KI_K_T1_SMEM1>;
        return j2ki_launch(id, blocks, 128, dyn, st, k);
    }
    if (variant > 0) {
        uint32_t workers = nb_workers(nb_cblks);
        size_t fb = align256(per * 2), wb = fb + align256(per * 4);
        uint32_t lanes = variant >= 32 ? 32 : variant >= 16 ? 16 : variant >= 8 ? 8 : variant >= 4 ? 4 : 1;
        uint32_t warps = (workers + lanes - 1) / lanes, blocks = (warps + 3) / 4;
        const J2kiT1LanesParams k = { (const int32_t *)d_samples, d_cblks, idx_out, nb_cblks, cblk_style,
                                      bypass_start, d_data, d_passes, d_res, d_flag, p, fb, wb, workers, lim };
        const J2kiKernelOf<J2kiT1LanesParams> id = lanes == 1 ? j2ki_kernel<J2KI_K_T1_LANES1> : lanes == 4 ? j2ki_kernel<J2KI_K_T1_LANES4>
                                                 : lanes == 8 ? j2ki_kernel<J2KI_K_T1_LANES8> : lanes == 16 ? j2ki_kernel<J2KI_K_T1_LANES16>
                                                 : j2ki_kernel<J2KI_K_T1_LANES32>;
        return j2ki_launch(id, blocks, 128, 0, st, k);
    }
    const J2kiT1CodeParams k = { (const int32_t *)d_samples, d_cblks, idx_out, cblk_style, bypass_start, d_data,
                                 d_passes, d_res, d_flag, (uint32_t)flags_bytes, lim };
    return j2ki_launch(j2ki_kernel<J2KI_K_T1_CODE>, nb_cblks, 32, smem, st, k);
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
static CUresult t1_prepare(const void *d_samples, const J2kiT1StopDev *stop, T1pScratch t,
                           const J2kiCblkDev *d_cblks, uint32_t nb_cblks, int par, CUstream st)
{
    const size_t n = nb_cblks;
    CUresult e;
    const J2kiT1PrepParams k = { (const int32_t *)d_samples, d_cblks, nb_cblks, t.keys_in, t.idx_in,
                                 par ? t.nbps : NULL, par ? t.stat : NULL };
    if ((e = j2ki_launch(j2ki_kernel<J2KI_K_T1_PREP>, (unsigned)((n * 32 + 255) / 256), 256, 0, st, k)) != CUDA_SUCCESS)
        return e;
    const J2kiSortArgs so = { t.keys_in, t.idx_in, t.keys_out, t.idx_out, n, T1_WORK_KEY_BITS, t.temp,
                              t.temp_bytes };
    if ((e = j2ki_sort_cuda(&so, st)) != CUDA_SUCCESS)
        return e;
    if (stop && (e = J2KI_CUFN(cuMemsetD8Async)(j2ki_dptr(t1s_lim(stop)), 0, n * sizeof(uint32_t), st)) != CUDA_SUCCESS)
        return e;
    return CUDA_SUCCESS;
}

/* J2KI_T1_CUDA_PAR's coding of the prepared frame F (t1_prepare) on st, with the early stop's
 * decisions between its launches when stop is not NULL. */
static CUresult t1p_code(const T1pFrameDev &F, const J2kiT1StopDev *stop, const J2kiCblkDev *d_cblks,
                         uint32_t nb_cblks, int cblk_style, int bypass_start, int max_w, int max_h,
                         CUstream st)
{
    const T1pLayout lay = t1p_layout(max_w, max_h);
    const size_t dyn = t1p_smem(&lay);
    const size_t n = nb_cblks;
    const unsigned mblocks = (unsigned)((n + 3) / 4), qblocks = (unsigned)((n + 127) / 128);
    const int stops = stop != NULL;
    CUresult e;
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
            (e = t1s_step(stop, d_cblks, nb_cblks, F.nbps, NULL, F.passes, step, st)) != CUDA_SUCCESS)
            return e;
        /* groups of 64 columns for blocks wider than 64, else 1 or 2 columns per lane */
        const J2kiKernelOf<J2kiT1pChunkParams> id = lay.gr ? j2ki_kernel<J2KI_K_T1P_CHUNK2_GR>
                                                 : lay.nc == 2 ? j2ki_kernel<J2KI_K_T1P_CHUNK2> : j2ki_kernel<J2KI_K_T1P_CHUNK1>;
        const J2kiT1pChunkParams prm = { F, d_cblks, nb_cblks, cblk_style, bypass_start, lay, c, q };
        if ((e = j2ki_launch(id, q + m, 128, dyn, st, prm)) != CUDA_SUCCESS)
            return e;
    }
    return CUDA_SUCCESS;
}

extern "C" CUresult j2ki_t1_cuda_variant(const void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                         int cblk_style, int bypass_start, int max_w, int max_h,
                                         uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res,
                                         uint32_t *d_flag, void *d_scratch, size_t scratch_size, int variant,
                                         int smem_optin, const J2kiT1StopDev *stop, CUstream st)
{
    CUresult e;

    if (!nb_cblks)
        return CUDA_SUCCESS;
    variant = t1_resolve_variant(variant, max_w, max_h);
    if (scratch_size < j2ki_t1_cuda_scratch_size_variant(nb_cblks, max_w, max_h, variant) ||
        (stop && stop->scratch_size < j2ki_t1s_cuda_scratch_size(nb_cblks)))
        return CUDA_ERROR_INVALID_VALUE;
    const T1pScratch t = t1_scratch_parts(d_scratch, nb_cblks);
    if ((e = t1_prepare(d_samples, stop, t, d_cblks, nb_cblks, variant == J2KI_T1_CUDA_PAR, st)) != CUDA_SUCCESS)
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
                       d_passes, d_res, d_flag, p, variant, smem_optin, NULL, st)) != CUDA_SUCCESS || !lim)
        return e;
    for (int s1 = 1; s1 <= J2KI_T1S_STEPS; s1++)
        if ((e = t1s_step(stop, d_cblks, nb_cblks, NULL, d_res, d_passes, s1, st)) != CUDA_SUCCESS)
            return e;
    return t1_serial(d_samples, d_cblks, idx_out, nb_cblks, cblk_style, bypass_start, max_w, max_h, d_data,
                     d_passes, d_res, d_flag, p, variant, smem_optin, lim, st);
}
