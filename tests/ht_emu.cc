/*
 * The CUDA HT block coder (j2kcuda/src/cuda/ht_kern.cu and ht_cuda.cu, these very sources) runs
 * on the host, thread blocks emulated by tests/warp_emu.h, and must give every code-block the
 * passes, results and bytes of the reference (ref/ht_plane.c's plane choice, ref/ht_ref.c's
 * coding) on random plans: 1 to 3 components, subsampling, tiles, 0 to 5 levels, every legal
 * code-block shape from 4x4, both wavelets, random budgets (from nearly nothing to more than
 * everything) or none, random samples whose magnitudes reach every band's M_b, with and
 * without the refinement passes (ht_refine; without: one pass per block). The code-block
 * descriptors are laid out as backend_cuda.cu lays them out (j2ki_cblk_offset, 16-byte
 * aligned buffers), and the kernels run with few threads (HT_MAX_CODE_WARPS, HT_MAX_WIDE),
 * so each thread (or warp) takes several blocks, CODE's warps with one scratch each. A run
 * fails unless some case chose planes above 0, measured sets and coded refinement passes.
 * Not a GPU: the device compiler (no contraction: --fmad=false) and memory are check_cuda's.
 * Build and run: make B=build check-ht-emu (g++ with C++20, the CUDA headers; no GPU).
 *   J2KC_TEST_SEED=N replays a run; HT_EMU_DUMP=1 prints a differing block's passes and bytes.
 */
#include <cuda.h>              /* first: the CUDA headers' types and qualifiers, redefined below */
#include <cuda_runtime.h>

#define EMU_NAME "ht_emu"
#include "warp_emu.h"

#include <algorithm>
#include <ctime>
#include <vector>

#include "emu_cuda_host.h"

extern "C" {
#include "core/plan.h"          /* the C library's: its declarations with C linkage */
}

#define HT_MAX_CODE_WARPS 5
#define HT_MAX_WIDE 160
#include "cuda/cuda_launch.h"
#include "cuda/ht_kern.cu"

static long g_launches;

extern "C" CUresult j2ki_cuda_launch(J2kiKernelId id, dim3 grid, dim3 block, size_t smem, CUstream st,
                                     const void *params)
{
    (void)smem;
    (void)st;
    g_launches++;
    switch (id) {
    EMU_KERNEL_CASE(J2KI_K_HT_STATS, j2ki_k_ht_stats, J2kiHtParams)
    EMU_KERNEL_CASE(J2KI_K_HT_SLOPE_STEP, j2ki_k_ht_slope_step, J2kiHtParams)
    EMU_KERNEL_CASE(J2KI_K_HT_SLOPE_END, j2ki_k_ht_slope_end, J2kiHtParams)
    EMU_KERNEL_CASE(J2KI_K_HT_MEASURE, j2ki_k_ht_measure, J2kiHtParams)
    EMU_KERNEL_CASE(J2KI_K_HT_COMMIT, j2ki_k_ht_commit, J2kiHtParams)
    EMU_KERNEL_CASE(J2KI_K_HT_CODE, j2ki_k_ht_code, J2kiHtParams)
    default:
        printf("FAIL ht_emu: launch of kernel %d, not the HT coder's\n", (int)id);
        exit(1);
    }
}

#include "cuda/ht_cuda.cu"

#define EMU_CUDA_HOST_AFTER
#include "emu_cuda_host.h"

extern "C" {
#include "core/threadpool.h"
#include "ref/ht_plane.h"
#include "ref/ht_ref.h"
#include "ref/t2_ref.h"
}

static uint32_t rnd_state = 2463534242u;
static uint32_t rnd() { rnd_state ^= rnd_state << 13; rnd_state ^= rnd_state >> 17; rnd_state ^= rnd_state << 5; return rnd_state; }

static long g_planes_above0, g_measured_blocks, g_refined, g_cleanup_only, g_remeasured;

static void random_cp(J2kiCodingParams *cp)
{
    memset(cp, 0, sizeof(*cp));
    cp->img.nb_comps = 1 + (int)(rnd() % 3);
    cp->img.width = 1 + rnd() % 200;
    cp->img.height = 1 + rnd() % 200;
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        cp->img.dx[c] = c < cp->img.nb_comps ? 1 + (int)(rnd() % 2) * (int)(rnd() % 2) : 1;
        cp->img.dy[c] = c < cp->img.nb_comps ? 1 + (int)(rnd() % 2) * (int)(rnd() % 2) : 1;
        cp->img.depth[c] = rnd() % 4 == 0 ? 1 + (int)(rnd() % 16) : 8 + (int)(rnd() % 5);
    }
    if (rnd() % 4 == 0) {
        cp->tile_w = 16 + rnd() % 80;
        cp->tile_h = 16 + rnd() % 80;
    }
    cp->nb_levels = (int)(rnd() % 6);
    do {
        cp->log2_cblk_w = 2 + (int)(rnd() % 5);
        cp->log2_cblk_h = 2 + (int)(rnd() % 5);
    } while (cp->log2_cblk_w + cp->log2_cblk_h > 12);
    cp->reversible = (int)(rnd() % 2);
    cp->guard_bits = 1 + (int)(rnd() % 3);
    cp->nb_layers = 1 + (int)(rnd() % 3);
    cp->cblk_style = J2KI_CBLK_HT;
    cp->ht_refine = rnd() % 4 != 0;
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp->prec_log2_w[r] = cp->prec_log2_h[r] = 15;
}

/* Random indices of every block under its band's M_b (t1_ref.h's convention: frac_bits
 * fractional bits): most small, some reaching the top, some blocks all zero. */
static void random_samples(const J2kiPlan *pl, std::vector<int32_t> &s)
{
    s.assign(pl->nb_samples ? pl->nb_samples : 1, 0);
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        const J2kiCblk *cb = &pl->cblks[i];
        const J2kiBand *band = &pl->bands[cb->band_idx];
        const uint32_t w = cb->x1 - cb->x0, h = cb->y1 - cb->y0, stride = j2ki_cblk_tc(pl, cb)->w;
        const int mb = std::min(band->nb_mag_bits, 30 - band->frac_bits);
        const int top = rnd() % 8 == 0 ? 0 : 1 + (int)(rnd() % (uint32_t)mb);
        const int zero_pct = (int)(rnd() % 100);
        int32_t *c = s.data() + j2ki_cblk_offset(pl, cb);
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                int32_t v = 0;
                if (top && (int)(rnd() % 100) >= zero_pct) {
                    int bits = (int)(rnd() % (uint32_t)(top + 1));
                    uint32_t mag = bits ? (1u << (bits - 1)) | (rnd() & ((1u << (bits - 1)) - 1)) : 0;
                    v = (int32_t)((mag << band->frac_bits) | (rnd() & ((1u << band->frac_bits) - 1)));
                    if (rnd() % 2)
                        v = -v;
                }
                c[(size_t)y * stride + x] = v;
            }
    }
}

/* One configuration. Returns 1 on a failure, 0 otherwise, -1 when the plan is refused. */
static int run(int iter, J2kiPool *pool)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    random_cp(&cp);
    if (j2ki_plan_create(&pl, &cp, NULL) < 0)
        return -1;
    std::vector<int32_t> samples;
    random_samples(pl, samples);
    /* a budget from a few bytes a block to more than everything, or none */
    uint64_t full = 0;
    for (uint32_t i = 0; i < pl->nb_cblks; i++)
        full += (uint64_t)(pl->cblks[i].x1 - pl->cblks[i].x0) * (pl->cblks[i].y1 - pl->cblks[i].y0);
    if (rnd() % 5) {
        cp.rc_mode = J2KI_RC_BYTES;
        cp.frame_bytes = (uint64_t)j2ki_main_header_size(pl) + 1 + (full * 2 * (rnd() % 1000)) / 1000 +
                         (rnd() % 2 ? 3 * pl->nb_cblks : 0);
    }
    /* the plan keeps a pointer to cp: the budget is seen by both */
    const int budget = cp.rc_mode == J2KI_RC_BYTES && cp.frame_bytes != 0;

    /* the reference */
    std::vector<uint8_t> p(pl->nb_cblks + 1);
    std::vector<uint8_t> work(j2ki_ht_planes_scratch_size(pl));
    j2ki_ht_planes_ref(pl, samples.data(), pool, work.data(), p.data());
    J2kiHt *ht = j2ki_ht_alloc();
    std::vector<int> ref_ret(pl->nb_cblks + 1);
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        J2kiCblk *cb = &pl->cblks[i];
        const J2kiBand *band = &pl->bands[cb->band_idx];
        ref_ret[i] = j2ki_ht_encode_cblk_ref(ht, samples.data() + j2ki_cblk_offset(pl, cb), j2ki_cblk_tc(pl, cb)->w,
                                             (int)(cb->x1 - cb->x0), (int)(cb->y1 - cb->y0), band->nb_mag_bits,
                                             band->frac_bits, p[i], cp.ht_refine, cb);
        g_planes_above0 += p[i] > 0 && cb->nb_passes;
        g_refined += cb->nb_passes == 3 && cb->passes[2].rate > cb->passes[0].rate;
        g_cleanup_only += !cp.ht_refine && cb->numbps > 1;
        if (!cp.ht_refine && cb->nb_passes > 1) {
            printf("FAIL ht_emu: iteration %d: ht_refine=0 and code-block %u has %d passes\n", iter, i,
                   cb->nb_passes);
            j2ki_ht_free(&ht);
            j2ki_plan_free(&pl);
            return 1;
        }
    }
    j2ki_ht_free(&ht);

    /* the device's, with backend_cuda.cu's layout */
    std::vector<J2kiCblkDev> hc(pl->nb_cblks + 1);
    std::vector<double> weight(pl->nb_cblks + 1);
    size_t data_off = 0, pass_off = 0;
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        const J2kiCblk *cb = &pl->cblks[i];
        const J2kiBand *band = &pl->bands[cb->band_idx];
        J2kiCblkDev *d = &hc[i];
        d->buf = j2ki_cblk_offset(pl, cb);
        d->stride = j2ki_cblk_tc(pl, cb)->w;
        d->w = (uint16_t)(cb->x1 - cb->x0);
        d->h = (uint16_t)(cb->y1 - cb->y0);
        d->orient = (uint8_t)band->orient;
        d->nb_mag_bits = (uint8_t)band->nb_mag_bits;
        d->frac_bits = (uint8_t)band->frac_bits;
        d->data_off = data_off;
        d->data_cap = cb->data_cap;
        d->pass_off = (uint32_t)pass_off;
        d->max_passes = (uint16_t)cb->max_passes;
        data_off += (cb->data_cap + 15u) & ~(size_t)15;
        pass_off += (size_t)cb->max_passes;
        weight[i] = band->dist_weight;
    }
    std::vector<uint8_t> data(data_off + 1, 0xA5);
    std::vector<J2kiPass> passes(pass_off + 1);
    std::vector<J2kiCblkRes> res(pl->nb_cblks + 1);
    std::vector<uint8_t> scratch(j2ki_ht_cuda_scratch_size(pl->nb_cblks));
    uint32_t flag = 0;
    CUresult e = j2ki_ht_cuda(samples.data(), hc.data(), weight.data(), pl->nb_cblks, budget,
                              j2ki_ht_plane_target32(cp.frame_bytes, j2ki_ht_plane_fixed_bytes(pl), pl->nb_cblks),
                              cp.ht_refine,
                              data.data(), passes.data(), res.data(), &flag, scratch.data(), scratch.size(), 0);
    int fail = 0;
    if (e != CUDA_SUCCESS) {
        printf("FAIL ht_emu: iteration %d: j2ki_ht_cuda %d\n", iter, (int)e);
        fail = 1;
    }
    /* the chooser's per-block state, which check_cuda compares the same way on a GPU */
    if (budget) {
        const J2kiHtPlaneStat *a = (const J2kiHtPlaneStat *)j2ki_ht_cuda_stats(scratch.data());
        const J2kiHtPlaneStat *r = (const J2kiHtPlaneStat *)work.data();
        for (uint32_t i = 0; i < pl->nb_cblks && !fail; i++) {
            int same = a[i].top == r[i].top && a[i].lo == r[i].lo && a[i].hi == r[i].hi && a[i].refine == r[i].refine &&
                       a[i].exact == r[i].exact;
            for (int b = 0; same && b < r[i].top; b++)
                same = a[i].q4[b] == r[i].q4[b] && !memcmp(&a[i].dist[b], &r[i].dist[b], sizeof(double));
            for (int b = r[i].lo; same && b <= r[i].hi; b++)
                same = !memcmp(a[i].rate[b - r[i].lo], r[i].rate[b - r[i].lo], sizeof(a[i].rate[0])) &&
                       !memcmp(a[i].sdist[b - r[i].lo], r[i].sdist[b - r[i].lo], sizeof(a[i].sdist[0]));
            if (!same) {
                printf("FAIL ht_emu: iteration %d: code-block %u's plane chooser state differs\n", iter, i);
                fail = 1;
            }
        }
    }
    for (uint32_t i = 0; i < pl->nb_cblks && !fail; i++) {
        const J2kiCblk *cb = &pl->cblks[i];
        const J2kiCblkRes *r = &res[i];
        const uint32_t len = cb->nb_passes ? cb->passes[cb->nb_passes - 1].rate : 0;
        int bad = r->err != ref_ret[i] || (!r->err && (r->nb_passes != cb->nb_passes || r->numbps != cb->numbps ||
                                                       r->len != len));
        for (int k = 0; !bad && !r->err && k < cb->nb_passes; k++) {
            const J2kiPass *a = &passes[hc[i].pass_off + k], *b = &cb->passes[k];
            bad = a->rate != b->rate || a->est != b->est || a->term != b->term ||
                  memcmp(&a->dist, &b->dist, sizeof(double)) || memcmp(&a->slope, &b->slope, sizeof(double));
        }
        if (!bad && !r->err && len && memcmp(&data[hc[i].data_off], cb->data, len))
            bad = 2;
        if (bad && getenv("HT_EMU_DUMP")) {   /* the passes' rates and the first bytes, '*' where they differ */
            for (int k = 0; k < cb->nb_passes; k++)
                printf("  pass %d: device rate %u, ref %u\n", k, passes[hc[i].pass_off + k].rate, cb->passes[k].rate);
            printf("  device:");
            for (uint32_t k = 0; k < len && k < 80; k++)
                printf(" %02x%s", data[hc[i].data_off + k], data[hc[i].data_off + k] != cb->data[k] ? "*" : "");
            printf("\n  ref:   ");
            for (uint32_t k = 0; k < len && k < 80; k++)
                printf(" %02x", cb->data[k]);
            printf("\n");
        }
        if (bad) {
            printf("FAIL ht_emu: iteration %d: code-block %u (%ux%u, plane %d, budget %llu): device %s "
                   "(err %d passes %d numbps %d len %u) vs ref (ret %d passes %d numbps %d len %u)\n",
                   iter, i, cb->x1 - cb->x0, cb->y1 - cb->y0, p[i], (unsigned long long)cp.frame_bytes,
                   bad == 2 ? "bytes differ" : "result differs", r->err, r->nb_passes, r->numbps, r->len,
                   ref_ret[i], cb->nb_passes, cb->numbps, len);
            fail = 1;
        }
    }
    if (!fail && (flag != 0) != std::any_of(ref_ret.begin(), ref_ret.begin() + pl->nb_cblks, [](int v) { return v < 0; })) {
        printf("FAIL ht_emu: iteration %d: error flag %u\n", iter, flag);
        fail = 1;
    }
    if (budget) {
        /* ht_cuda.cu's scratch head: the slope, then the rounds' stale flags (round r >= 1
         * measured some block again) */
        uint32_t stale[J2KI_HT_PLANE_ROUNDS];
        memcpy(stale, scratch.data() + sizeof(double), sizeof(stale));
        g_measured_blocks += pl->nb_cblks;
        for (int r = 1; r < J2KI_HT_PLANE_ROUNDS; r++)
            g_remeasured += stale[r] != 0;
    }
    j2ki_plan_free(&pl);
    return fail;
}

int main(int argc, char **argv)
{
    const char *env = getenv("J2KC_TEST_SEED");
    uint32_t seed = env ? (uint32_t)strtoul(env, NULL, 10) : (uint32_t)time(NULL) % 100000u;
    int iters = argc > 1 ? atoi(argv[1]) : 60, done = 0, failed = 0;
    J2kiPool *pool = j2ki_pool_new(2);
    printf("# ht_emu: seed %u (J2KC_TEST_SEED=%u replays it)\n", seed, seed);
    rnd_state = seed * 2654435761u + 1u;
    for (int it = 0; it < iters; it++) {
        int r = run(it, pool);
        if (r < 0)
            continue;
        done++;
        failed += r;
    }
    j2ki_pool_free(&pool);
    if (!failed && (!g_planes_above0 || !g_refined || !g_measured_blocks || !g_cleanup_only || !g_remeasured)) {
        printf("FAIL ht_emu: the cases never reached a plane above 0 (%ld), a refinement (%ld), a budget (%ld), "
               "a cleanup-only set above plane 0 (%ld) or a second measuring round (%ld)\n", g_planes_above0,
               g_refined, g_measured_blocks, g_cleanup_only, g_remeasured);
        failed = 1;
    }
    if (failed) {
        printf("FAIL ht_emu: %d of %d configurations differ\n", failed, done);
        return 1;
    }
    printf("ok ht_emu: %d configurations, %ld launches, %ld blocks at planes above 0, %ld refined, %ld cleanup-only "
           "above plane 0, %ld with a second measuring round, equal to ref\n", done, g_launches, g_planes_above0,
           g_refined, g_cleanup_only, g_remeasured);
    return 0;
}
