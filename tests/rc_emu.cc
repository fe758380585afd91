/*
 * The CUDA rate control (j2kcuda/src/cuda/rc_kern.cu and rc_cuda.cu: the hulls and the
 * cooperative decide kernel, with tier-2's import and writing after it, these very sources)
 * runs on the host, blocks and warps emulated by tests/warp_emu.h, and must decide what
 * rc_ref.c decides on the host:
 * every code-block's layer_passes, the same error when a budget is below the headers, and the
 * same codestream. The emulated device has one SM that holds one decide block, so the grid is
 * one block of 256 threads and grid.sync() is that block's barrier: every op runs its grid-wide
 * loops, reductions (through the global accumulators), the sizing of changed precincts, the
 * guide's histograms and the fill (sort and pick, the grid-wide sort stages included once there
 * are more candidates than a chunk) in one block. What several blocks add (global atomics from
 * several blocks, a grid barrier between SMs) is check_cuda's, on a GPU (make check-cuda).
 * Cases: random geometries and code-block states (tests/emu_random.h), byte budgets from below
 * the empty codestream to above the full one, per-component limits, 1 to 5 layers with
 * explicit or derived layer budgets, and the SLOPE and PSNR modes.
 * Build and run: make B=build check-rc-emu (g++ with C++20, the CUDA headers, and the host
 * sources of the plan, tier-2 and rate control; no GPU).
 */
#include <cuda.h>              /* first: the CUDA headers' types and qualifiers, redefined below */
#include <cuda_runtime.h>

#define EMU_NAME "rc_emu"
#include "warp_emu.h"

#include <algorithm>
#include <cmath>

#include "emu_cuda_host.h"
#undef __grid_constant__
#define __grid_constant__
template <class T> static T __ldcg(const T *p) { return *p; }
namespace cooperative_groups {
struct EmuGrid {
    void sync() { __syncthreads(); }     /* a grid of one block */
};
static EmuGrid this_grid() { return EmuGrid(); }
} /* namespace cooperative_groups */

static long g_launches, g_decides, g_sorts, g_wide_sorts;
#define RC_SORT_HOOK(nb, wide) \
    (threadIdx.x == 0 && blockIdx.x == 0 ? (void)(g_sorts++, g_wide_sorts += (wide) != 0) : (void)0)
#define J2KI_T2_EMU 1
#define J2KI_RC_EMU 1
#include "cuda/cuda_launch.h"
#include "cuda/t2_kern.cu"
#include "cuda/rc_kern.cu"

/* the launch module's part here: t2_cuda.cu's and rc_cuda.cu's launches run on the host,
 * counted; the cooperative decide grid must be the one block the emulated device holds */
extern "C" CUresult j2ki_cuda_launch(J2kiKernelId id, dim3 grid, dim3 block, size_t smem, CUstream st,
                                     const void *params)
{
    (void)smem;
    (void)st;
    g_launches++;
    if (id == J2KI_K_RC_DECIDE) {
        if (grid.x != 1 || block.x != RC_THREADS) {
            printf("FAIL rc_emu: decide grid of %u x %u threads, expected one block of %d\n", grid.x, block.x,
                   RC_THREADS);
            exit(1);
        }
        g_decides++;
    }
    switch (id) {
    EMU_KERNEL_CASE(J2KI_K_T2_IMPORT, j2ki_k_t2_import, J2kiT2ImportParams)
    EMU_KERNEL_CASE(J2KI_K_T2_PREC_WARP, j2ki_k_t2_prec_warp, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_T2_TP_SIZE, j2ki_k_t2_tp_size, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_T2_FINAL, j2ki_k_t2_final, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_T2_TP_WRITE, j2ki_k_t2_tp_write, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_T2_BODY, j2ki_k_t2_body, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_RC_HULL, j2ki_k_rc_hull, J2kiRcHullParams)
    EMU_KERNEL_CASE(J2KI_K_RC_DECIDE, j2ki_k_rc_decide, J2kiRcDecideParams)
    default:
        printf("FAIL rc_emu: launch of kernel %d, not tier-2's or rate control's\n", (int)id);
        exit(1);
    }
}

/* a device of one SM that holds one decide block */
extern "C" CUresult j2ki_cuda_kernel_occupancy(J2kiKernelId id, int threads, size_t smem, int *per_sm)
{
    (void)id;
    (void)threads;
    (void)smem;
    *per_sm = 1;
    return CUDA_SUCCESS;
}

#include "cuda/t2_cuda.cu"
#define align256 rc_align256       /* both sources have their own */
#include "cuda/rc_cuda.cu"
#undef align256

#define EMU_CUDA_HOST_AFTER
#include "emu_cuda_host.h"

#include "emu_random.h"

/* Sizes with every code-block at n passes per layer rule: 0 = none, 1 = all its passes. */
static int64_t size_with(J2kiPlan *pl, int all)
{
    for (uint32_t i = 0; i < pl->nb_cblks; i++)
        for (int l = 0; l < pl->cp->nb_layers; l++)
            pl->cblks[i].layer_passes[l] = (uint16_t)(all ? pl->cblks[i].nb_passes : 0);
    return j2ki_t2_size(pl, NULL, NULL);
}

static const char *const mode_names[] = { "none", "bytes", "slope", "psnr" };

/* the library's test hooks (hooks.h), read once as an encoder reads them (the Makefile runs
 * this again with J2KC_RC_PROBES set) */
static J2kiHooks g_hooks;

/* One configuration. Returns 1 on a failure, 0 otherwise, -1 when the plan is refused. */
static int run(int iter, long *stats)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    random_cp(&cp);
    cp.hooks = g_hooks;
    cp.hooks.t2_team_min = emu_team_min(iter, 1);
    int ret = j2ki_plan_create(&pl, &cp, NULL);
    if (ret == J2KC_ERR_UNSUPPORTED)
        return -1;
    if (ret < 0) {
        printf("FAIL rc_emu: iteration %d: plan %d\n", iter, ret);
        return 1;
    }
    random_states(pl);
    const int64_t empty = size_with(pl, 0), full = size_with(pl, 1);
    const int L = cp.nb_layers;
    /* the rate-control mode and budgets (the plan keeps a pointer to cp) */
    const uint32_t m = rnd() % 10;
    if (m < 7) {
        cp.rc_mode = J2KI_RC_BYTES;
        int64_t lo = empty - 8, hi = full + 8;
        cp.frame_bytes = (uint64_t)std::max<int64_t>(1, lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)));
        if (rnd() % 4 == 0)
            cp.comp_bytes = (uint64_t)(cp.frame_bytes / (uint64_t)cp.img.nb_comps * (60 + rnd() % 60) / 100);
        cp.nb_layer_bytes = rnd() % 2 ? L : 0;
        for (int l = 0; l < L; l++)
            cp.layer_bytes[l] = (uint64_t)((double)cp.frame_bytes / pow(2.0, 0.5 * (L - 1 - l)));
    } else if (m < 9) {
        cp.rc_mode = J2KI_RC_SLOPE;
        cp.slope = (double)(rnd() % 40) - 10.0;
    } else {
        cp.rc_mode = J2KI_RC_PSNR;
        cp.psnr = 20.0 + (double)(rnd() % 500) / 10.0;
    }

    EmuSlot slot;
    emu_slot_fill(pl, &slot);

    /* the host's decision and codestream */
    for (uint32_t i = 0; i < pl->nb_cblks; i++)
        for (int l = 0; l < L; l++)
            pl->cblks[i].layer_passes[l] = 0;
    const int ref_ret = j2ki_rc_run(pl, NULL);
    std::vector<uint8_t> ref((size_t)std::max<int64_t>(full, empty) + 64);
    int64_t n = ref_ret < 0 ? 0 : j2ki_codestream_write(pl, ref.data(), ref.size());

    /* the emulated device's */
    J2kiT2Cuda *t = NULL;
    J2kiRcCuda *rc = NULL;
    int sticky = 0, fail = 0;
    if ((ret = j2ki_t2_cuda_init(&t, pl, slot.hc.data(), slot.data.data(), slot.passes.data(), NULL, &sticky)) < 0 ||
        (ret = j2ki_rc_cuda_init(&rc, pl, t, 1, NULL, &sticky)) < 0) {
        printf("FAIL rc_emu: iteration %d: init %d\n", iter, ret);
        j2ki_rc_cuda_free(&rc);
        j2ki_t2_cuda_free(&t);
        j2ki_plan_free(&pl);
        return 1;
    }
    const J2kiT2DevView *v = j2ki_t2_cuda_view(t);
    std::vector<uint8_t> out(ref.size(), 0x5A);
    if ((ret = j2ki_rc_cuda_run(rc, slot.res.data(), 1, 1, 0)) < 0 ||
        (ret = j2ki_t2_cuda_write(t, 0, out.data(), out.size())) < 0) {
        printf("FAIL rc_emu: iteration %d: enqueue %d\n", iter, ret);
        fail = 1;
    }
    const J2kiT2CudaResult *r = j2ki_t2_cuda_result(t);
    const char *what = NULL;
    char buf[200];
    if (fail) {
        what = "enqueue";
    } else if (ref_ret < 0 || r->err) {
        if (r->err != ref_ret) {
            snprintf(buf, sizeof(buf), "host %d, device %d", ref_ret, r->err);
            what = buf;
        }
        stats[1]++;
    } else {
        uint32_t bad = UINT32_MAX;
        int bl = 0;
        for (uint32_t i = 0; i < pl->nb_cblks && bad == UINT32_MAX; i++)
            for (int l = 0; l < L && bad == UINT32_MAX; l++)
                if (v->cblks[i].layer_passes[l] != pl->cblks[i].layer_passes[l]) {
                    bad = i;
                    bl = l;
                }
        if (bad != UINT32_MAX) {
            snprintf(buf, sizeof(buf), "code-block %u: layer_passes[%d] %u on the device, %u on the host", bad,
                     bl, v->cblks[bad].layer_passes[bl], pl->cblks[bad].layer_passes[bl]);
            what = buf;
        } else if (r->len != (uint64_t)n || memcmp(out.data(), ref.data(), (size_t)n)) {
            snprintf(buf, sizeof(buf), "codestreams differ (%llu bytes against %lld)", (unsigned long long)r->len,
                     (long long)n);
            what = buf;
        } else if (r->hull_mask != j2ki_rc_hull_mask(pl)) {
            /* qstep_try's test after the decision (the decide kernel's last phase) */
            snprintf(buf, sizeof(buf), "hull mask %#x on the device, %#x on the host", r->hull_mask,
                     j2ki_rc_hull_mask(pl));
            what = buf;
        } else {
            stats[j2ki_rc_mask_fills(r->hull_mask, cp.img.nb_comps) ? 3 : 4]++;
        }
        stats[0]++;
        stats[2] += r->nb_probes;
        stats[5] += r->nb_rounds;
    }
    if (what) {
        printf("FAIL rc_emu: iteration %d (%s, %u code-blocks, %d layers, budget %llu of %lld..%lld, comp_bytes "
               "%llu): %s\n", iter, mode_names[cp.rc_mode], pl->nb_cblks, L, (unsigned long long)cp.frame_bytes,
               (long long)empty, (long long)full, (unsigned long long)cp.comp_bytes, what);
        fail = 1;
    }
    j2ki_rc_cuda_free(&rc);
    j2ki_t2_cuda_free(&t);
    j2ki_plan_free(&pl);
    return fail;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 30, fails = 0, done = 0;
    long stats[6] = { 0, 0, 0, 0, 0, 0 }; /* decided, refused (same error on both), thresholds sized,
                                            filled (qstep_try's test), not filled, sizing rounds */
    J2kiCodingParams hooks_cp;
    j2ki_hooks_read(&g_hooks);
    memset(&hooks_cp, 0, sizeof(hooks_cp));
    hooks_cp.hooks = g_hooks;
    for (int it = 0; it < iters; it++) {
        int r = run(it, stats);
        if (r >= 0) {
            fails += r;
            done++;
        }
    }
    printf("%s rc_emu: %d frames, %d differ from the host's decision; %ld decided (%ld thresholds sized on the "
           "device in %ld rounds, %d at most per round), %ld refused alike; fill sorts %ld, %ld of them beyond "
           "one chunk; hull masks alike, %ld filling, %ld not; %ld launches\n", fails ? "FAIL" : "ok", done,
           fails, stats[0], stats[2], stats[5], j2ki_rc_multi_probes(&hooks_cp), stats[1], g_sorts, g_wide_sorts, stats[3],
           stats[4], g_launches);
    return fails != 0;
}
