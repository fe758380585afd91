/*
 * CUDA rate control, see rc_cuda.h: the host side here, the kernels in rc_kern.cu. The
 * control code is rc_core.h's j2ki_rc_decide, the same the host runs; rc_kern.cu supplies its
 * operations as grid-wide device functions
 * (j2ki_rc_dev_*), called by every thread of the cooperative decide grid, each with its own
 * copy of the context, in lockstep: every thread sees the same op results, so every thread
 * takes the same path and reaches every grid.sync() the same number of times (no op returns
 * early in some threads only).
 *
 * Reductions (hull, dist_sum, next_slope, can_split, tie_span, size's sums): each thread folds its
 * code-blocks / packets into registers, a warp combines them with shuffles, warp leaders add
 * into the block's shared accumulators, one thread per value flushes the block's result with
 * one global atomic into a grid-wide accumulator set, grid.sync(), every thread reads the set.
 * Only integers are combined (int64 sums, bit patterns of positive doubles, whose integer
 * order is their value order, by min/max; a minimum is kept as the maximum of the complement
 * so that every accumulator's identity is 0), so the result does not depend on the order.
 *
 * Accumulator sets (global, RC_NB_ACC = 3): publishing phase n of a frame uses set n % 3 and
 * block 0 zeroes set (n + 1) % 3 before phase n's grid.sync. That set was last read in phase
 * n - 2, by threads that all reached phase n - 1's grid.sync after reading it, and block 0
 * only zeroes it after passing that sync; it is next added to in phase n + 1, after phase n's
 * sync. With two sets the zeroing would race with the slowest reader or the fastest writer,
 * unless each phase paid a second sync. j2ki_rc_cuda_run zeroes every set before the launch.
 *
 * apply and fill_apply are deferred: they only record what to write (RcDev.pend), and the next
 * op writes a code-block's layer_passes just before it reads them, in the thread that handles
 * that code-block (or, for size, in the warp of its precinct: every code-block lies in exactly
 * one precinct, B.6/B.7), so writing costs no grid.sync. A deferred apply uses the context as
 * the next op sees it; the control code only changes cfg/floor between an apply and the next
 * op when another apply follows before any op (decide's NONE/SLOPE/PSNR into lower_layers), so
 * this writes what an immediate apply would. The kernel's end writes anything still deferred.
 *
 * grid.sync() per op (the sizing probe of a BYTES search is apply + size = 2, a bisection step
 * adds can_split's 1, a fill probe is fill_apply + size = 2):
 *   hull, dist_sum, next_slope, can_split   1
 *   tie_span                                1
 *   hist                                    1 (the search guide: one per narrowing level,
 *                                           about 2 to 8 per guided probe)
 *   apply, fill_apply                       0 (deferred)
 *   size                                    2: one warp per precinct whose code-blocks'
 *                                           layer_passes changed since its last sizing codes
 *                                           its headers (j2ki_t2_dev_prec; a precinct of many
 *                                           code-blocks: a block's warps), sync, one
 *                                           warp per tile-part adds its packets and header (PLT
 *                                           with t2_core.h's rule), sync, totals as j2ki_t2_size
 *   size_multi                              2: one warp (or block) per precinct, each of its distinct
 *                                           selections over the probes sized, sync, one warp
 *                                           per (tile-part, probe), sync
 *   fill_prepare                            collect 1, then with n2 <= C candidates block 0
 *                                           sorts and picks: 1; else sort 1 + (log2(n2/C))
 *                                           merges each of (log2(k/C) global + 1 shared-memory)
 *                                           stages, pick 1 (C = RC_SORT_CHUNK)
 * Sizing: most probes of a search and every probe of the fill change few code-blocks, so a
 * precinct sized before in the frame (RcArgs.prec_done) keeps its hdr_len / body_len unless
 * one of its code-blocks' layer_passes differ from those it was last sized with
 * (RcArgs.sized), which saves a third of the sizing time of a DCI frame (measured: see
 * bench/results/history.md#rate-control-sizings). A precinct without code-blocks still has
 * its packets (empty, one byte each, B.10): it is sized once per frame.
 * fill_prepare: only the candidates whose cost fits the slacks as they are (j2ki_rc_fill_fits;
 * none other can be kept) are collected, with one atomic per warp, and each component's
 * cheapest cost (the bench's 4K DCI frame: 10,717 of its 26,292 code-blocks fit the 16 bytes
 * the search left, and the pick keeps 2 of them).
 * They are bitonic-sorted on the total order j2ki_rc_fill_before (slope desc, index asc, the
 * host's qsort order): stages whose partner distance is below C run inside a block on chunks
 * of C candidates in shared memory, only the wider ones are grid-wide. The last chunk pass also
 * computes each candidate's estimated cost and component, then one warp makes the host's
 * greedy pick 32 candidates at a time: the first lane in order that fits the current slacks is
 * kept and the lanes before it are dropped (the slacks only shrink, so they would not fit later
 * either); the kept ones are compacted in order. The pick ends once no component's cheapest
 * candidate fits what is left.
 *
 * Grid: RC_THREADS-thread blocks (256: eight warps of sizing scratch share 16 KiB of shared
 * memory with the sort chunk, and small blocks keep the per-block reductions short), as many
 * as give one warp per precinct and a block per team precinct (sizing is the longest step of
 * a probe) and a few code-blocks per thread, but never more than cudaOccupancyMaxActiveBlocksPerMultiprocessor * SMs /
 * nb_busy, nb_busy the frames whose device work is queued when this one is enqueued (itself
 * included; the backend counts its slots): the decide grids of all of them can then be
 * resident together, so none waits at a grid.sync for blocks that cannot be scheduled (a
 * cooperative launch starts when all of its blocks fit); the other kernels that share the
 * device (tier-1, tier-2 writing) never wait on anything and always finish, freeing their
 * SMs. A frame alone gets the whole work cap (4K DCI: 77 blocks, one warp per precinct),
 * 8 in flight 1/8 of the device each. A larger share lets the waiting grids hold registers
 * that tier-1 would use; a smaller one lengthens the frame's rate control, which is part of
 * how long its slot stays busy: both measured slower than the fair share (see
 * bench/results/history.md#rate-control-grid-share). The launch
 * fails (cudaErrorCooperativeLaunchTooLarge) rather than hangs if the grid cannot fit an
 * otherwise idle device.
 *
 * Device memory (sized at init, one allocation): the prepared context, per-band distortion
 * scales, the accumulator sets, the fill's candidates (a power of two >= the code-blocks) with
 * their costs and components, each code-block's rank among the kept candidates.
 */
extern "C" {
#include "ref/rc_ref.h"
}
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_launch.h"
#include "cuda/cuda_util.h"
#include "cuda/rc_kern.h"

struct J2kiRcCuda {
    const J2kiLog *log;
    int           *sticky;
    J2kiT2Cuda    *t2;
    uint8_t       *d_mem;
    J2kiRcCtx     *d_ctx0;
    RcArgs         args;                    /* device pointers; v is refreshed per frame */
    uint32_t       nb_precs;
    int            max_blocks;              /* the grid's work cap */
    int            dev_blocks;              /* decide blocks resident on the whole device */
    size_t         acc_bytes;               /* the accumulator, histogram and size_multi sets */
};

/* ---- host API --------------------------------------------------------------------------- */


static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/** Blocks of the decide grid of a frame enqueued while nb_busy frames (itself included) have
 *  device work queued: its share of the device, at most the work cap. */
static int rc_blocks(const J2kiRcCuda *rc, int nb_busy)
{
    int share = rc->dev_blocks / (nb_busy > 1 ? nb_busy : 1);
    share = share > 1 ? share : 1;
    return share < rc->max_blocks ? share : rc->max_blocks;
}

int *j2ki_rc_cuda_sticky(J2kiRcCuda *rc, int *sticky)
{
    int *prev = rc->sticky;
    rc->sticky = sticky;
    return prev;
}

void j2ki_rc_cuda_free(J2kiRcCuda **prc)
{
    J2kiRcCuda *rc = *prc;
    if (!rc)
        return;
    j2ki_cuda_free(rc->d_mem);
    free(rc);
    *prc = NULL;
}

/** The decide grid's work cap in blocks (see the file comment) and rc->dev_blocks, or < 0. */
static int rc_grid_size(J2kiRcCuda *rc, const J2kiPlan *plan, const J2kiT2DevView *v)
{
    CUdevice dev;
    int coop = 0, nb_sm = 0, per_sm = 0, ret;
    long long cap, fit;
    if ((ret = J2KI_CU(rc->log, rc->sticky, cuCtxGetDevice, &dev)) < 0 ||
        (ret = J2KI_CU(rc->log, rc->sticky, cuDeviceGetAttribute, &coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                       dev)) < 0 ||
        (ret = J2KI_CU(rc->log, rc->sticky, cuDeviceGetAttribute, &nb_sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                       dev)) < 0 ||
        (ret = J2KI_CUDRV(rc->log, rc->sticky,
                         j2ki_cuda_kernel_occupancy(J2KI_K_RC_DECIDE, RC_THREADS, 0, &per_sm))) < 0)
        return ret;
    if (!coop || per_sm < 1) {
        j2ki_log(rc->log, J2KC_LOG_ERROR, "CUDA rate control: the device cannot run a cooperative grid "
                 "(cooperative launch %d, %d blocks per SM)", coop, per_sm);
        return J2KC_ERR_UNSUPPORTED;
    }
    cap = ((long long)v->nb_precs + RC_WARPS - 1) / RC_WARPS;
    fit = ((long long)plan->nb_cblks + RC_THREADS * RC_CBLKS_PER_THREAD - 1) / (RC_THREADS * RC_CBLKS_PER_THREAD);
    cap = fit > cap ? fit : cap;
    fit = ((long long)v->nb_tps + RC_WARPS - 1) / RC_WARPS;
    cap = fit > cap ? fit : cap;
    cap = (long long)v->nb_team > cap ? (long long)v->nb_team : cap;   /* a block per team precinct */
    fit = (long long)per_sm * nb_sm;
    rc->dev_blocks = fit < INT_MAX ? (int)fit : INT_MAX;
    cap = fit < cap ? fit : cap;
    return cap > 1 ? (int)cap : 1;
}

int j2ki_rc_cuda_init(J2kiRcCuda **out, const J2kiPlan *plan, J2kiT2Cuda *t2, int nb_slots, const J2kiLog *log,
                      int *sticky)
{
    J2kiRcCuda *rc = (J2kiRcCuda *)calloc(1, sizeof(*rc));
    J2kiRcCtx ctx;
    double *scale = NULL;
    uint32_t cand_cap, nb_cblks = plan->nb_cblks ? plan->nb_cblks : 1;
    size_t o_scale, o_acc, o_cand, o_est, o_comp, o_rank, o_sized, o_done, o_mlen, total, nb_mprobes;
    int ret;

    *out = NULL;
    if (!rc)
        return J2KC_ERR_NOMEM;
    rc->log = log;
    rc->sticky = sticky;
    rc->t2 = t2;
    if ((ret = j2ki_rc_ctx_init(&ctx, plan)) < 0) {
        j2ki_log(log, J2KC_LOG_ERROR, "CUDA rate control: unsupported mode %d or %d layers",
                 plan->cp->rc_mode, plan->cp->nb_layers);
        goto fail;
    }
    if ((ret = rc_grid_size(rc, plan, j2ki_t2_cuda_view(t2))) < 0)
        goto fail;
    rc->max_blocks = ret;
    for (cand_cap = 1; cand_cap < nb_cblks; cand_cap <<= 1)
        ;
    o_scale = align256(sizeof(J2kiRcCtx));
    o_acc = o_scale + align256((size_t)(plan->nb_bands ? plan->nb_bands : 1) * sizeof(double));
    /* size_multi's sets and lengths where a byte search can run it: BYTES, and the layers
     * below the last of the other modes (j2ki_rc_lower_layers) */
    nb_mprobes = ctx.multi > 1 && (ctx.rc_mode == J2KI_RC_BYTES || ctx.nb_layers > 1) ? J2KI_RC_MULTI_MAX : 0;
    rc->args.multi_stride = (uint32_t)(RC_M_LAYER + plan->cp->nb_layers);
    rc->acc_bytes = RC_NB_ACC * (sizeof(RcAcc) + sizeof(RcHist)) +
                    RC_NB_ACC * nb_mprobes * rc->args.multi_stride * sizeof(unsigned long long);
    o_cand = o_acc + align256(rc->acc_bytes);
    o_est = o_cand + align256((size_t)cand_cap * sizeof(J2kiRcFillCand));
    o_comp = o_est + align256((size_t)cand_cap * sizeof(int64_t));
    o_rank = o_comp + align256((size_t)cand_cap);
    o_sized = o_rank + align256((size_t)nb_cblks * sizeof(uint32_t));
    o_done = o_sized + align256((size_t)nb_cblks * plan->cp->nb_layers * sizeof(uint16_t));
    rc->nb_precs = j2ki_t2_cuda_view(t2)->nb_precs;
    o_mlen = o_done + align256(rc->nb_precs ? rc->nb_precs : 1);
    total = o_mlen + align256(nb_mprobes * rc->nb_precs * plan->cp->nb_layers * sizeof(uint32_t) + 1);
    if ((ret = J2KI_CUDRV(log, sticky, j2ki_cuda_malloc((void **)&rc->d_mem, total))) < 0)
        goto fail;
    rc->d_ctx0 = (J2kiRcCtx *)rc->d_mem;
    rc->args.scale = (const double *)(rc->d_mem + o_scale);
    rc->args.acc = (RcAcc *)(rc->d_mem + o_acc);
    rc->args.hist = (RcHist *)(rc->d_mem + o_acc + RC_NB_ACC * sizeof(RcAcc));
    rc->args.multi = (unsigned long long *)(rc->d_mem + o_acc + RC_NB_ACC * (sizeof(RcAcc) + sizeof(RcHist)));
    rc->args.mlen = (uint32_t *)(rc->d_mem + o_mlen);
    rc->args.cand = (J2kiRcFillCand *)(rc->d_mem + o_cand);
    rc->args.est = (int64_t *)(rc->d_mem + o_est);
    rc->args.est_comp = rc->d_mem + o_comp;
    rc->args.rank = (uint32_t *)(rc->d_mem + o_rank);
    rc->args.sized = (uint16_t *)(rc->d_mem + o_sized);
    rc->args.prec_done = rc->d_mem + o_done;
    if (!(scale = (double *)calloc(plan->nb_bands ? plan->nb_bands : 1, sizeof(double)))) {
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    for (uint32_t b = 0; b < plan->nb_bands; b++)
        scale[b] = j2ki_rc_dist_scale(plan, &plan->bands[b]);
    if ((ret = J2KI_CU(log, sticky, cuMemcpyHtoD, j2ki_dptr(rc->d_ctx0), &ctx, sizeof(ctx))) < 0 ||
        (ret = J2KI_CU(log, sticky, cuMemcpyHtoD, j2ki_dptr(rc->args.scale), scale,
                       plan->nb_bands * sizeof(double))) < 0)
        goto fail;
    free(scale);
    j2ki_log(log, J2KC_LOG_VERBOSE, "CUDA rate control: decide grid of %d x %d threads for a frame alone, %d with "
             "%d in flight", rc->max_blocks, RC_THREADS, rc_blocks(rc, nb_slots), nb_slots);
    *out = rc;
    return 0;
fail:
    free(scale);
    j2ki_rc_cuda_free(&rc);
    return ret;
}

int j2ki_rc_cuda_run(J2kiRcCuda *rc, const J2kiCblkRes *d_res, int nb_busy, int hull_mask, CUstream st)
{
    const J2kiT2DevView *v = j2ki_t2_cuda_view(rc->t2);
    const J2kiRcHullParams hull = { *v };
    J2kiRcDecideParams decide;
    int ret;

    if ((ret = j2ki_t2_cuda_import(rc->t2, d_res, st)) < 0)
        return ret;
    if ((ret = J2KI_CUDRV(rc->log, rc->sticky,
                         j2ki_launch(j2ki_kernel<J2KI_K_RC_HULL>, v->nb_cblks ? (v->nb_cblks + 127) / 128 : 1, 128,
                                     0, st, hull))) < 0)
        return ret;
    rc->args.v = *v;
    rc->args.hull_mask = hull_mask;
    if ((ret = J2KI_CU(rc->log, rc->sticky, cuMemsetD8Async, j2ki_dptr(rc->args.acc), 0, rc->acc_bytes, st)) < 0 ||
        (ret = J2KI_CU(rc->log, rc->sticky, cuMemsetD8Async, j2ki_dptr(rc->args.prec_done), 0, rc->nb_precs,
                       st)) < 0)
        return ret;
    decide.a = rc->args;
    decide.ctx0 = rc->d_ctx0;
    return J2KI_CUDRV(rc->log, rc->sticky, j2ki_launch(j2ki_kernel<J2KI_K_RC_DECIDE>,
                                                      dim3((unsigned)rc_blocks(rc, nb_busy)), dim3(RC_THREADS), 0,
                                                      st, decide));
}
