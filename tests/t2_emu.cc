/*
 * The CUDA tier-2 (j2kcuda/src/cuda/t2_kern.cu, t2_cuda.cu and the device pieces of t2_cuda.h,
 * these very sources) runs on the host, blocks and warps emulated by tests/warp_emu.h, and writes whole
 * codestreams that must equal the reference writer's (j2ki_codestream_write) byte for byte,
 * on the random cases of tests/emu_random.h: random geometries (1 to 3 components, subsampling, tiles, 0 to 5 levels, code-block and
 * precinct sizes), 1 to 5 layers, the five progression orders and POC lists, tile-part splits,
 * SOP / EPH / PLT / TLM, BYPASS / TERMALL pass tables, and random code-block states (zero
 * bit-planes, pass counts, rates, data bytes with many 0xFF, layer_passes). Every launch of the
 * frame runs: import, the per-precinct header coder counting (what rate control's sizing runs)
 * and writing, the tile-part cells, the scan (done here serially), the bodies. The header bytes
 * are cut by a warp 32 units at a time (j2ki_t2_warp_emit); the run fails unless some of those
 * steps met a 0xFF. Precincts are coded by a warp or by a team of warps (the threshold varies
 * per case: emu_team_min), with a smaller header buffer than the device's; the run fails
 * unless some team needed more than one round and some rounds of teams and of warps were cut
 * short by the buffer. A buffer one byte short must give J2KC_ERR_BUFSIZE.
 * Not a GPU: memory ordering, timing and the device compiler are check_cuda's (make check-cuda).
 * Build and run: make B=build check-t2-emu (g++ with C++20, the CUDA headers, and the host
 * sources plan.c, quant_ref.c, dwt_ref.c, mct_ref.c, t2_ref.c, markers.c, tgt.c; no GPU).
 */
#include <cuda.h>              /* first: the CUDA headers' types and qualifiers, redefined below */
#include <cuda_runtime.h>

#define EMU_NAME "t2_emu"
#include "warp_emu.h"

#include <algorithm>

#include "emu_cuda_host.h"

static long g_steps, g_ff_steps, g_launches;
#define J2KI_T2_EMIT_HOOK(n, ff) (t_lane == 0 ? (void)(g_steps++, g_ff_steps += (ff) != 0) : (void)0)
/* rounds of a team of warps; those after a precinct's first; rounds of a team / of a warp
 * that took fewer code-blocks than they had, their bits over the buffer */
static long g_team_rounds, g_team_later, g_short_team, g_short_warp;
#define J2KI_T2_SHORT(nw, g, used, n) ((used) < ((n) - (g) < 32u * (nw) ? (n) - (g) : 32u * (nw)))
#define J2KI_T2_ROUND_HOOK(nw, g, used, n)                                                   \
    ((nw) > 1 ? (void)(g_team_rounds++, g_team_later += (g) > 0,                               \
                       g_short_team += J2KI_T2_SHORT(nw, g, used, n))                          \
              : (void)(g_short_warp += J2KI_T2_SHORT(nw, g, used, n)))
/* A header buffer of 34 words a warp instead of the device's 512: 25 x 32 bits for a warp's
 * code-blocks, above one code-block's bits in the random states, 115 x 32 for a team of 4
 * warps, so that rounds whose code-blocks' bits pass it are cut short and the rest taken in
 * the next round (on the device: long TERMALL lists in many code-blocks of a precinct). */
#define J2KI_T2_WARP_WORDS 34
#define J2KI_T2_EMU 1
#include "cuda/cuda_launch.h"
#include "cuda/t2_kern.cu"

/* the launch module's part here: t2_cuda.cu's launches run on the host, counted */
extern "C" CUresult j2ki_cuda_launch(J2kiKernelId id, dim3 grid, dim3 block, size_t smem, CUstream st,
                                     const void *params)
{
    (void)smem;
    (void)st;
    g_launches++;
    switch (id) {
    EMU_KERNEL_CASE(J2KI_K_T2_IMPORT, j2ki_k_t2_import, J2kiT2ImportParams)
    EMU_KERNEL_CASE(J2KI_K_T2_PREC_WARP, j2ki_k_t2_prec_warp, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_T2_TP_SIZE, j2ki_k_t2_tp_size, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_T2_FINAL, j2ki_k_t2_final, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_T2_TP_WRITE, j2ki_k_t2_tp_write, J2kiT2OutParams)
    EMU_KERNEL_CASE(J2KI_K_T2_BODY, j2ki_k_t2_body, J2kiT2OutParams)
    default:
        printf("FAIL t2_emu: launch of kernel %d, not tier-2's\n", (int)id);
        exit(1);
    }
}

#include "cuda/t2_cuda.cu"

#define EMU_CUDA_HOST_AFTER
#include "emu_cuda_host.h"

#include "emu_random.h"

/* One configuration: the reference codestream, then the emulated device's, which must match;
 * then a buffer one byte short. Returns 1 on a failure, 0 otherwise (-1: plan refused). */
static int run(int iter, long *bytes)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    random_cp(&cp);
    cp.hooks.t2_team_min = emu_team_min(iter, 0);
    int ret = j2ki_plan_create(&pl, &cp, NULL);
    if (ret == J2KC_ERR_UNSUPPORTED)
        return -1;                         /* > 255 tile-parts */
    if (ret < 0) {
        printf("FAIL t2_emu: iteration %d: plan %d\n", iter, ret);
        return 1;
    }
    random_states(pl);
    std::vector<uint8_t> ref((size_t)1 << 23);
    int64_t n = j2ki_codestream_write(pl, ref.data(), ref.size());
    if (n <= 0) {
        printf("FAIL t2_emu: iteration %d: reference writer %lld\n", iter, (long long)n);
        j2ki_plan_free(&pl);
        return 1;
    }

    EmuSlot slot;
    emu_slot_fill(pl, &slot);
    J2kiT2Cuda *t = NULL;
    int sticky = 0, fail = 0;
    if ((ret = j2ki_t2_cuda_init(&t, pl, slot.hc.data(), slot.data.data(), slot.passes.data(), NULL, &sticky)) < 0) {
        printf("FAIL t2_emu: iteration %d: j2ki_t2_cuda_init %d\n", iter, ret);
        j2ki_plan_free(&pl);
        return 1;
    }
    const J2kiT2DevView *v = j2ki_t2_cuda_view(t);
    std::vector<uint8_t> out((size_t)n + 64, 0x5A);
    for (int round = 0; round < 2 && !fail; round++) {
        /* rate control's decision, as rc_cuda.cu leaves it in the mirror */
        for (uint32_t i = 0; i < pl->nb_cblks; i++)
            for (int l = 0; l < cp.nb_layers; l++)
                v->cblks[i].layer_passes[l] = pl->cblks[i].layer_passes[l];
        const size_t cap = round ? (size_t)n - 1 : out.size();
        std::fill(out.begin(), out.end(), 0x5A);
        if ((ret = j2ki_t2_cuda_import(t, slot.res.data(), 0)) < 0 || (ret = j2ki_t2_cuda_write(t, 0, out.data(), cap)) < 0) {
            printf("FAIL t2_emu: iteration %d: enqueue %d\n", iter, ret);
            fail = 1;
            break;
        }
        const J2kiT2CudaResult *r = j2ki_t2_cuda_result(t);
        if (round == 0) {
            if (r->err || r->len != (uint64_t)n || memcmp(out.data(), ref.data(), (size_t)n)) {
                size_t k = 0;
                while (k < (size_t)n && out[k] == ref[k])
                    k++;
                printf("FAIL t2_emu: iteration %d (%d comps %ux%u, %d levels, %d layers, order %d, style %d, "
                       "sop %d eph %d plt %d tlm %d): err %d, %llu bytes against %lld, first difference at "
                       "byte %zu\n", iter, cp.img.nb_comps, cp.img.width, cp.img.height, cp.nb_levels,
                       cp.nb_layers, cp.order, cp.cblk_style, cp.sop, cp.eph, cp.plt, cp.tlm, r->err,
                       (unsigned long long)r->len, (long long)n, k);
                fail = 1;
            }
            *bytes += n;
        } else if (r->err != J2KC_ERR_BUFSIZE || r->len != 0 ||
                   std::any_of(out.begin() + (ptrdiff_t)cap, out.end(), [](uint8_t b) { return b != 0x5A; })) {
            printf("FAIL t2_emu: iteration %d: a buffer of %lld bytes for %lld gave err %d, len %llu, or a "
                   "byte written past it\n", iter, (long long)cap, (long long)n, r->err, (unsigned long long)r->len);
            fail = 1;
        }
    }
    j2ki_t2_cuda_free(&t);
    j2ki_plan_free(&pl);
    return fail;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 100, fails = 0, done = 0;
    long bytes = 0;
    for (int it = 0; it < iters; it++) {
        int r = run(it, &bytes);
        if (r >= 0) {
            fails += r;
            done++;
        }
    }
    const int ff_ok = g_ff_steps > 0, team_ok = g_team_later > 0 && g_short_team > 0 && g_short_warp > 0;
    printf("%s t2_emu: %d codestreams (%ld bytes), %d differ from the reference; %ld launches, header "
           "emission %ld warp steps, %ld of them met a 0xFF%s; %ld rounds of teams of warps, %ld of them "
           "after a precinct's first; rounds cut short by the buffer: %ld of teams, %ld of warps%s\n",
           fails || !ff_ok || !team_ok ? "FAIL" : "ok", done, bytes, fails, g_launches, g_steps, g_ff_steps,
           ff_ok ? "" : " (none: the 0xFF path untested)", g_team_rounds, g_team_later, g_short_team,
           g_short_warp, team_ok ? "" : " (a kind of round untested)");
    return fails || !ff_ok || !team_ok;
}
