/*
 * CUDA tier-1 with ht=1, see ht_cuda.h; the kernels are ht_kern.cu's. With a byte budget:
 * STATS, a slope search (the model's slope), then J2KI_HT_PLANE_ROUNDS times MEASURE, COMMIT
 * and a search (the measured points'), CODE; without, CODE alone at plane 0 (ref/ht_plane.c's
 * order). A search is HT_SLOPE_STEPS + 1 launches of SLOPE_STEP and one of SLOPE_END.
 *
 * Scratch: the slope (a double) and the rounds' stale flags in 256 bytes, the searches' byte
 * sums, then a J2kiHtPlaneStat per code-block, then a J2kiHtScratch per CODE warp.
 */
#include "cuda/cuda_launch.h"
#include "cuda/ht_kern.h"

static size_t ht_align(size_t n) { return (n + 255u) & ~(size_t)255u; }

/* The slope and the stale flags fit the first 256 bytes. */
static_assert(sizeof(double) + J2KI_HT_PLANE_ROUNDS * sizeof(uint32_t) <= 256, "HT scratch head");

/* The searches' byte sums, after the first 256 bytes. */
static size_t ht_sums_size(void) { return ht_align((size_t)HT_SEARCHES * HT_SLOPE_SLOTS * sizeof(unsigned long long)); }

/* The J2kiHtPlaneStat array's offset. */
static size_t ht_stats_off(void) { return 256 + ht_sums_size(); }

/* CODE's warps: one per code-block, at most HT_MAX_CODE_WARPS. */
static uint32_t ht_code_warps(uint32_t nb_cblks)
{
    return nb_cblks < HT_MAX_CODE_WARPS ? nb_cblks : HT_MAX_CODE_WARPS;
}

/* Thread blocks of n threads of bs each, n capped at HT_MAX_WIDE. */
static uint32_t ht_wide_grid(uint64_t n, uint32_t bs)
{
    if (n > HT_MAX_WIDE)
        n = HT_MAX_WIDE;
    return (uint32_t)((n + bs - 1) / bs);
}

/* One slope search: its bisection's steps, then its end (ht_kern.cu). */
static CUresult ht_search(J2kiHtParams *p, int search, uint32_t grid, CUstream st)
{
    CUresult e;
    p->search = search;
    for (p->step = 0; p->step <= HT_SLOPE_STEPS; p->step++)
        if ((e = j2ki_launch(j2ki_kernel<J2KI_K_HT_SLOPE_STEP>, grid, HT_WIDE_THREADS, 0, st, *p)) != CUDA_SUCCESS)
            return e;
    return j2ki_launch(j2ki_kernel<J2KI_K_HT_SLOPE_END>, 1, 1, 0, st, *p);
}

extern "C" size_t j2ki_ht_cuda_scratch_size(uint32_t nb_cblks)
{
    return ht_stats_off() + ht_align((size_t)(nb_cblks ? nb_cblks : 1) * sizeof(J2kiHtPlaneStat)) +
           (size_t)(ht_code_warps(nb_cblks) ? ht_code_warps(nb_cblks) : 1) * sizeof(J2kiHtScratch);
}

extern "C" void *j2ki_ht_cuda_stats(void *d_scratch)
{
    return (uint8_t *)d_scratch + ht_stats_off();
}

extern "C" CUresult j2ki_ht_cuda(const void *d_samples, const J2kiCblkDev *d_cblks, const double *d_weight,
                                 uint32_t nb_cblks, int budget, int64_t target32, int refine, uint8_t *d_data,
                                 J2kiPass *d_passes, J2kiCblkRes *d_res, uint32_t *d_flag, void *d_scratch,
                                 size_t scratch_size, CUstream st)
{
    uint8_t *s = (uint8_t *)d_scratch;
    J2kiHtParams p;
    uint32_t grid;
    CUresult e;
    if (!nb_cblks)
        return CUDA_SUCCESS;
    if (scratch_size < j2ki_ht_cuda_scratch_size(nb_cblks) || (budget && !d_weight))
        return CUDA_ERROR_INVALID_VALUE;
    p.samples = (const int32_t *)d_samples;
    p.cblks = d_cblks;
    p.weight = d_weight;
    p.lambda = (double *)s;
    p.stale = (uint32_t *)(s + sizeof(double));
    p.sums = (unsigned long long *)(s + 256);
    p.round = 0;
    p.search = 0;
    p.step = 0;
    p.st = (J2kiHtPlaneStat *)j2ki_ht_cuda_stats(d_scratch);
    p.scratch = (J2kiHtScratch *)(s + ht_stats_off() + ht_align((size_t)nb_cblks * sizeof(J2kiHtPlaneStat)));
    p.data = d_data;
    p.passes = d_passes;
    p.res = d_res;
    p.flag = d_flag;
    p.target32 = target32;
    p.nb_cblks = nb_cblks;
    p.code_warps = ht_code_warps(nb_cblks);
    p.budget = budget;
    p.refine = refine;
    grid = (p.code_warps + HT_CODE_WARPS - 1) / HT_CODE_WARPS;
    if (budget) {
        const uint32_t g_stats = ht_wide_grid((uint64_t)nb_cblks * 32u, HT_WIDE_THREADS);
        const uint32_t g_measure = ht_wide_grid((uint64_t)nb_cblks * HT_SET_WARPS * 32u, HT_WIDE_THREADS);
        const uint32_t g_commit = ht_wide_grid(nb_cblks, HT_THREADS);
        const uint32_t g_slope = ht_wide_grid(nb_cblks, HT_WIDE_THREADS);
        if ((e = j2ki_launch(j2ki_kernel<J2KI_K_HT_STATS>, g_stats, HT_WIDE_THREADS, 0, st, p)) != CUDA_SUCCESS ||
            (e = ht_search(&p, 0, g_slope, st)) != CUDA_SUCCESS)
            return e;
        for (p.round = 0; p.round < J2KI_HT_PLANE_ROUNDS; p.round++)
            if ((e = j2ki_launch(j2ki_kernel<J2KI_K_HT_MEASURE>, g_measure, HT_WIDE_THREADS, 0, st, p)) != CUDA_SUCCESS ||
                (e = j2ki_launch(j2ki_kernel<J2KI_K_HT_COMMIT>, g_commit, HT_THREADS, 0, st, p)) != CUDA_SUCCESS ||
                (e = ht_search(&p, p.round + 1, g_slope, st)) != CUDA_SUCCESS)
                return e;
    }
    return j2ki_launch(j2ki_kernel<J2KI_K_HT_CODE>, grid, 32 * HT_CODE_WARPS, 0, st, p);
}
