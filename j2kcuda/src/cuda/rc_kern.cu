/*
 * The CUDA rate control's kernels (device code only): the hulls, then the cooperative
 * decision (rc_core.h's j2ki_rc_decide with the grid's ops); see rc_cuda.cu for the design.
 */
#ifndef J2KI_RC_EMU            /* tests/rc_emu.cc runs this source on the host with its own grid */
#include <cooperative_groups.h>
#endif

extern "C" {
#include "ref/rc_ref.h"
}
#include "cuda/rc_kern.h"

namespace cg = cooperative_groups;

enum { RC_PEND_NONE, RC_PEND_APPLY, RC_PEND_FILL };

/** What the ops reach through c->opaque (one copy per thread, identical in all of them). */
typedef struct RcDev {
    const RcArgs *a;
    RcBlock      *sh;
    uint32_t      phase;                    /* publishing phases so far */
    uint32_t      nhist;                    /* hist ops so far */
    uint32_t      nmulti;                   /* size_multi ops so far */
    uint32_t      nb_kept;
    int           pend;                     /* deferred write of layer_passes: RC_PEND_* */
    uint32_t      pend_p;                   /* RC_PEND_FILL: the kept prefix */
} RcDev;

static __device__ int cblk_comp(const J2kiT2DevView *v, const J2kiCblk *cb) { return v->bands[cb->band_idx].comp; }

static __device__ unsigned lane_id(void) { return threadIdx.x & 31; }

static __device__ void grid_sync(void) { cg::this_grid().sync(); }

/* ---- reductions ------------------------------------------------------------------------- */

static __device__ unsigned long long warp_sum(unsigned long long x)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(RC_FULL, x, o);
    return x;
}

static __device__ unsigned long long warp_max(unsigned long long x)
{
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long y = __shfl_xor_sync(RC_FULL, x, o);
        x = y > x ? y : x;
    }
    return x;
}

/** Starts a publishing phase: its accumulator set, with the one after it zeroed by block 0
 *  (see the file comment). Called by every thread. */
static __device__ RcAcc *phase_begin(RcDev *d)
{
    RcAcc *cur = &d->a->acc[d->phase % RC_NB_ACC];
    if (blockIdx.x == 0) {
        unsigned long long *w = (unsigned long long *)&d->a->acc[(d->phase + 1) % RC_NB_ACC];
        for (unsigned t = threadIdx.x; t < sizeof(RcAcc) / sizeof(*w); t += blockDim.x)
            w[t] = 0;
    }
    d->phase++;
    return cur;
}

/** Adds the calling warp's values into the block's accumulators (every lane calls it). */
static __device__ void block_add(RcBlock *sh, unsigned long long sum, unsigned long long nmin, unsigned long long mx)
{
    sum = warp_sum(sum);
    nmin = warp_max(nmin);
    mx = warp_max(mx);
    if (lane_id() == 0) {
        if (sum)
            atomicAdd(&sh->sum, sum);
        if (nmin)
            atomicMax(&sh->nmin, nmin);
        if (mx)
            atomicMax(&sh->umax, mx);
    }
}

/**
 * Ends a publishing phase: the block's accumulators go into g (one atomic per value that is
 * not the identity) and back to the identity, then the grid syncs. Afterwards g holds the
 * grid's result; read it with ld_acc.
 */
static __device__ void phase_end(RcBlock *sh, RcAcc *g)
{
    unsigned t = threadIdx.x;
    __syncthreads();
    if (t < J2KI_MAX_LAYERS) {
        if (sh->layer[t])
            atomicAdd(&g->layer[t], sh->layer[t]);
        sh->layer[t] = 0;
    }
    if (t < J2KC_MAX_COMPS) {
        if (sh->comp[t])
            atomicAdd(&g->comp[t], sh->comp[t]);
        sh->comp[t] = 0;
    }
    if (t == 0) {
        if (sh->sum)
            atomicAdd(&g->sum, sh->sum);
        if (sh->nmin)
            atomicMax(&g->nmin, sh->nmin);
        if (sh->umax)
            atomicMax(&g->umax, sh->umax);
        if (sh->err)
            atomicMin(&g->err, sh->err);
        sh->sum = sh->nmin = sh->umax = 0;
        sh->err = 0;
    }
    /* the grid barrier is also the block barrier that orders the reset before the next adds */
    grid_sync();
}

/* Accumulators were written by atomics in L2: read them there, past any stale L1 line. */
static __device__ unsigned long long ld_acc(const unsigned long long *p) { return __ldcg(p); }

/** Whether x is set in any thread of a team of NW warps (t2_cuda.h: a warp, or the block),
 *  in every thread; slots: the block's RC_WARPS words. */
template <int NW> static __device__ int team_any(int x, uint32_t *slots)
{
    x = __any_sync(RC_FULL, x);
    if (NW == 1)
        return x;
    if (lane_id() == 0)
        slots[threadIdx.x / 32] = (uint32_t)x;
    __syncthreads();
    for (int q = 0; q < NW; q++)
        x |= (int)slots[q];
    __syncthreads();                        /* the slots read before their next use */
    return x;
}

/* ---- deferred writes of layer_passes ----------------------------------------------------- */

/** Writes code-block i's layer_passes as the deferred apply / fill_apply would have. */
static __device__ void cblk_settle(const J2kiRcCtx *c, const RcDev *d, uint32_t i)
{
    const RcArgs *a = d->a;
    J2kiCblk *cb = &a->v.cblks[i];
    if (d->pend == RC_PEND_APPLY) {
        j2ki_rc_cblk_apply(c, cb, i, cblk_comp(&a->v, cb));
    } else if (d->pend == RC_PEND_FILL) {
        uint32_t r = a->rank[i];
        if (r != RC_NO_RANK)
            cb->layer_passes[c->nb_layers - 1] = r < d->pend_p ? a->cand[r].n_new : a->cand[r].n_old;
    }
}

/** Every code-block's deferred write, now; with sync, the grid then syncs so any thread may
 *  read any code-block. */
static __device__ void settle_all(const J2kiRcCtx *c, RcDev *d, int sync)
{
    if (d->pend == RC_PEND_NONE)
        return;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < d->a->v.nb_cblks; i += gridDim.x * blockDim.x)
        cblk_settle(c, d, i);
    d->pend = RC_PEND_NONE;
    if (sync)
        grid_sync();
}

/**
 * The deferred writes of precinct p's code-blocks, by the threads of a team of NW warps (one
 * warp, or the block), or with probe,
 * the selection of that threshold instead (layers l0 <= l < l1 at it, j2ki_rc_cblk_apply_x;
 * size_multi), and whether p needs sizing: not sized yet in this frame (a->prec_done, all 0
 * at the frame's start), or some of its code-blocks' layer_passes differ from those of its
 * last sizing (a->sized, which this records). A sizing depends on nothing else that changes
 * during the decision, so the precinct's hdr_len / body_len from that sizing still hold when
 * nothing differs.
 */
template <int NW>
static __device__ int prec_settle_changed(const J2kiRcCtx *c, const RcDev *d, uint32_t p, int l0 = 0, int l1 = 0,
                                          const J2kiRcCfg *probe = NULL)
{
    const uint32_t tid = threadIdx.x % (32 * NW);
    const J2kiT2DevView *v = &d->a->v;
    const J2kiT2PrecDev *pd = &v->precs[p];
    const int L = v->nb_layers;
    uint16_t *sized = d->a->sized;
    int changed = !d->a->prec_done[p];
    for (int k = 0; k < pd->prec.nb_bands; k++) {
        const J2kiPrecBand *pb = &pd->prec.bands[k];
        const J2kiBand *band = &v->bands[pd->first_band + k];
        uint32_t w = pb->cbx1 - pb->cbx0, n = w * (pb->cby1 - pb->cby0);
        for (uint32_t j = tid; j < n; j += 32 * NW) {
            uint32_t i = band->first_cblk + (pb->cby0 + j / w) * band->nb_cblks_w + pb->cbx0 + j % w;
            J2kiCblk *cb = &v->cblks[i];
            const uint16_t *lp = cb->layer_passes;
            if (probe)
                j2ki_rc_cblk_apply_x(c, cb, i, cblk_comp(v, cb), l0, l1, *probe);
            else
                cblk_settle(c, d, i);
            for (int l = 0; l < L; l++) {
                uint16_t x = lp[l];
                if (sized[(size_t)i * L + l] != x) {
                    sized[(size_t)i * L + l] = x;
                    changed = 1;
                }
            }
        }
    }
    changed = team_any<NW>(changed, d->sh->t_any);
    __syncwarp();                           /* every lane has read prec_done[p] (a team: above) */
    if (changed && tid == 0)
        d->a->prec_done[p] = 1;
    return changed;
}

/**
 * Whether precinct p's selection differs between probes lo and hi (layers l0 <= l < l1 at
 * them), by a team of NW warps. Every count of j2ki_rc_cblk_sel_x is monotone in the
 * threshold, so when the lowest and the highest probe select alike, every probe between them
 * does too (size_multi sizes such a precinct once).
 */
template <int NW>
static __device__ int prec_probes_differ(const J2kiRcCtx *c, const RcDev *d, uint32_t p, int l0, int l1,
                                         J2kiRcCfg lo, J2kiRcCfg hi)
{
    const uint32_t tid = threadIdx.x % (32 * NW);
    const J2kiT2DevView *v = &d->a->v;
    const J2kiT2PrecDev *pd = &v->precs[p];
    const int L = v->nb_layers;
    int differ = 0;
    uint16_t a[J2KI_MAX_LAYERS], b[J2KI_MAX_LAYERS];
    for (int k = 0; k < pd->prec.nb_bands && !differ; k++) {
        const J2kiPrecBand *pb = &pd->prec.bands[k];
        const J2kiBand *band = &v->bands[pd->first_band + k];
        uint32_t w = pb->cbx1 - pb->cbx0, n = w * (pb->cby1 - pb->cby0);
        for (uint32_t j = tid; j < n && !differ; j += 32 * NW) {
            uint32_t i = band->first_cblk + (pb->cby0 + j / w) * band->nb_cblks_w + pb->cbx0 + j % w;
            const J2kiCblk *cb = &v->cblks[i];
            j2ki_rc_cblk_sel_x(c, cb, i, cblk_comp(v, cb), l0, l1, lo, a);
            j2ki_rc_cblk_sel_x(c, cb, i, cblk_comp(v, cb), l0, l1, hi, b);
            for (int l = 0; l < L; l++)
                differ |= a[l] != b[l];
        }
    }
    return team_any<NW>(differ, d->sh->t_any);
}

/* ---- sizing ----------------------------------------------------------------------------- */

/**
 * Tile-part k by one warp, into the block's accumulators: the same accounting as
 * j2ki_t2_dev_tp_size (t2_cuda.h) and j2ki_t2_size. PLT (A.7.3): when the entries of the whole
 * tile-part fit one segment's payload, j2ki_t2_plt_count_add opens exactly one segment, so
 * the bytes are 5 + the entry bytes; otherwise lane 0 runs that rule packet by packet.
 */
static __device__ void tp_size_warp(const J2kiT2DevView *v, uint32_t k, const uint32_t *mlen,
                                    unsigned long long *a_sum, unsigned long long *a_comp,
                                    unsigned long long *a_layer)
{
    const J2kiT2TpDev tp = v->tps[k];
    const uint32_t end = tp.first_pkt + tp.nb_pkts;
    unsigned lane = lane_id();
    unsigned long long pk = 0, ent = 0, comp[J2KC_MAX_COMPS];
    uint64_t plt = 0, hdr;

#pragma unroll
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        comp[cc] = 0;
    for (uint32_t j = tp.first_pkt + lane; j < end; j += 32) {
        const J2kiT2PktDev pkt = v->pkts[j];
        size_t i = (size_t)pkt.prec * v->nb_layers + pkt.layer;
        uint64_t len = mlen ? mlen[i] : (uint64_t)v->hdr_len[i] + v->body_len[i];
        ent += (unsigned long long)j2ki_t2_plt_entry_bytes(len);
        pk += len;
        if (!v->comp_res_e || pkt.res < v->comp_res_e) {
#pragma unroll
            for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
                if (pkt.comp == cc)
                    comp[cc] += len;
        }
        atomicAdd(&a_layer[pkt.layer], (unsigned long long)len);
    }
    pk = warp_sum(pk);
    ent = warp_sum(ent);
#pragma unroll
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        comp[cc] = warp_sum(comp[cc]);
    if (v->plt && tp.nb_pkts) {
        if (ent <= J2KI_T2_PLT_MAX_PAYLOAD) {
            plt = 5 + ent;
        } else {
            if (lane == 0) {
                J2kiT2PltCount cnt = { 0, -1, 0 };
                for (uint32_t j = tp.first_pkt; j < end; j++) {
                    size_t i = (size_t)v->pkts[j].prec * v->nb_layers + v->pkts[j].layer;
                    j2ki_t2_plt_count_add(&cnt, mlen ? mlen[i] : (uint64_t)v->hdr_len[i] + v->body_len[i]);
                }
                plt = cnt.bytes;
            }
            plt = __shfl_sync(RC_FULL, plt, 0);
        }
    }
    hdr = J2KI_T2_TP_FIXED_BYTES + plt;
    if (lane == 0)
        atomicAdd(a_sum, (unsigned long long)(hdr + pk));
    if (!v->comp_res_e || tp.res < v->comp_res_e) {
#pragma unroll
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            if (tp.comp == cc)
                comp[cc] += hdr;
    }
    if (lane < J2KC_MAX_COMPS) {
        unsigned long long x = 0;
#pragma unroll
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            if (lane == (unsigned)cc)
                x = comp[cc];
        if (x)
            atomicAdd(&a_comp[lane], x);
    }
}

/**
 * size_multi's phase 1 for precinct p, by a team of NW warps with scratch w (see
 * j2ki_rc_dev_size_multi).
 */
template <int NW>
static __device__ void multi_prec(const J2kiRcCtx *c, const RcDev *d, uint32_t p, int l, int l1, const uint64_t *t,
                                  int n, uint32_t *w)
{
    const RcArgs *a = d->a;
    const J2kiT2DevView *v = &a->v;
    const int L = v->nb_layers;
    const size_t plen = (size_t)v->nb_precs * L;
    const uint32_t tid = threadIdx.x % (32 * NW);
    J2kiRcCfg x0, x1;
    int ret;
    x0.t = j2ki_rc_from_bits(t[0]);
    x1.t = j2ki_rc_from_bits(t[n - 1]);
    x0.k = x1.k = 0;
    const int nj = n > 1 && prec_probes_differ<NW>(c, d, p, l, l1, x0, x1) ? n : 1;
    for (int j = 0; j < nj; j++) {
        J2kiRcCfg x;
        x.t = j2ki_rc_from_bits(t[j]);
        x.k = 0;
        if (prec_settle_changed<NW>(c, d, p, l, l1, &x) && (ret = j2ki_t2_dev_prec<NW>(v, p, w, NULL)) < 0 &&
            tid == 0)
            atomicMin(&d->sh->err, ret);
        j2ki_t2_team_sync<NW>();            /* thread 0 wrote hdr_len / body_len */
        for (int m = (int)tid; m < L; m += 32 * NW) {
            size_t i = (size_t)p * L + m;
            uint32_t len = v->hdr_len[i] + v->body_len[i];
            for (int q = j; q < (nj == n ? j + 1 : n); q++)    /* one selection for all: each probe */
                a->mlen[q * plen + i] = len;
        }
    }
}

extern "C" {

__device__ __noinline__ void j2ki_rc_dev_hull(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    const J2kiT2DevView *v = &d->a->v;
    RcAcc *g = phase_begin(d);
    unsigned long long nmin = 0, mx = 0;
    /* the hulls were computed by hull_kernel; here only their extremes */
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < v->nb_cblks; i += gridDim.x * blockDim.x) {
        const J2kiCblk *cb = &v->cblks[i];
        for (int k = 0; k < cb->nb_passes; k++) {
            double s = cb->passes[k].slope;
            if (s > 0.0) {
                unsigned long long b = j2ki_rc_bits(s);
                nmin = ~b > nmin ? ~b : nmin;
                mx = b > mx ? b : mx;
            }
        }
    }
    block_add(d->sh, 0, nmin, mx);
    phase_end(d->sh, g);
    nmin = ld_acc(&g->nmin);
    mx = ld_acc(&g->umax);
    c->smin = nmin ? j2ki_rc_from_bits(~nmin) : 0.0;
    c->smax = mx ? j2ki_rc_from_bits(mx) : 0.0;
}

__device__ __noinline__ void j2ki_rc_dev_apply(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    /* supersedes a deferred fill_apply: apply rewrites every layer of every code-block */
    d->pend = RC_PEND_APPLY;
}

__device__ __noinline__ int j2ki_rc_dev_size(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    RcBlock *sh = d->sh;
    const J2kiT2DevView *v = &d->a->v;
    RcAcc *g = phase_begin(d);
    uint32_t w = blockIdx.x * RC_WARPS + threadIdx.x / 32, nw = gridDim.x * RC_WARPS;
    unsigned long long sum;
    int ret;

    /* headers of each precinct whose code-blocks changed since its last sizing, all layers:
     * those of many code-blocks a block each, then the others a warp each (block- and
     * warp-uniform loops: the team sizes together) */
    for (uint32_t q = blockIdx.x; q < v->nb_team; q += gridDim.x) {
        const uint32_t p = v->prec_order[q];
        if (prec_settle_changed<RC_WARPS>(c, d, p) &&
            (ret = j2ki_t2_dev_prec<RC_WARPS>(v, p, &sh->u.warp[0][0], NULL)) < 0 && threadIdx.x == 0)
            atomicMin(&sh->err, ret);
    }
    for (uint32_t q = v->nb_team + w; q < v->nb_precs; q += nw) {
        const uint32_t p = v->prec_order[q];
        if (prec_settle_changed<1>(c, d, p) &&
            (ret = j2ki_t2_dev_prec<1>(v, p, sh->u.warp[threadIdx.x / 32], NULL)) < 0 && lane_id() == 0)
            atomicMin(&sh->err, ret);
    }
    d->pend = RC_PEND_NONE;
    grid_sync();
    for (uint32_t k = w; k < v->nb_tps; k += nw)
        tp_size_warp(v, k, NULL, &sh->sum, sh->comp, sh->layer);
    phase_end(sh, g);

    ret = __ldcg(&g->err);
    if (ret < 0) {
        c->total = ret;
        return ret;
    }
    sum = ld_acc(&g->sum);
    {
        uint64_t total = v->main_len + 2 + sum, above = 0;
        c->total = (int64_t)total;
        for (int cc = 0; cc < v->nb_comps && cc < J2KC_MAX_COMPS; cc++)
            c->comp_len[cc] = ld_acc(&g->comp[cc]);
        for (int l = c->nb_layers - 1; l >= 0; l--) {
            c->layer_len[l] = total - above;
            above += ld_acc(&g->layer[l]);
        }
    }
    return 0;
}

/**
 * size_multi (rc_core.h): the n probes' selections sized at once, with the two-level
 * reduction of the paper (code-blocks into packets, packets into tile-parts and totals).
 * Phase 1, one warp per precinct (a block per team precinct: multi_prec): a precinct whose lowest and highest probe select alike
 * (prec_probes_differ) has that selection at every probe and is handled as probe 0 alone;
 * otherwise the probes in order: each lane writes its code-blocks' layer_passes for probe j,
 * and the warp sizes the precinct only when they differ from its last sizing
 * (prec_settle_changed, which records them), so a precinct is sized once per distinct
 * selection, or not at all when its last sizing had it. Each probe's packet lengths go to
 * a->mlen[j]. Sync. Phase 2, one warp per (tile-part, probe): its bytes, PLT and
 * per-component / per-layer shares into that probe's accumulators (a->multi, sets rotated per
 * op as hist's). Sync. Then every thread reads the probes from the top down, as the host
 * sizes them, to the first that does not fit (j2ki_rc_multi_step): the same j* and ends.
 * Leaves layer_passes at the last probe sized (the caller applies again) and a->sized /
 * hdr_len / body_len consistent with each other, as size does.
 */
__device__ __noinline__ int j2ki_rc_dev_size_multi(J2kiRcCtx *c, int l, const uint64_t *t, int n, J2kiRcPred *pr)
{
    RcDev *d = (RcDev *)c->opaque;
    RcBlock *sh = d->sh;
    const RcArgs *a = d->a;
    const J2kiT2DevView *v = &a->v;
    RcAcc *g = phase_begin(d);
    const int L = v->nb_layers, l1 = j2ki_rc_set_end(c, l);
    const size_t ms = a->multi_stride, plen = (size_t)v->nb_precs * L, set = (size_t)J2KI_RC_MULTI_MAX * ms;
    unsigned long long *mg = a->multi + (d->nmulti % RC_NB_ACC) * set;
    uint32_t w = blockIdx.x * RC_WARPS + threadIdx.x / 32, nw = gridDim.x * RC_WARPS;
    int ret, js = n;

    if (blockIdx.x == 0) {
        unsigned long long *z = a->multi + ((d->nmulti + 1) % RC_NB_ACC) * set;
        for (size_t q = threadIdx.x; q < set; q += blockDim.x)
            z[q] = 0;
    }
    d->nmulti++;
    for (uint32_t q = blockIdx.x; q < v->nb_team; q += gridDim.x)
        multi_prec<RC_WARPS>(c, d, v->prec_order[q], l, l1, t, n, &sh->u.warp[0][0]);
    for (uint32_t q = v->nb_team + w; q < v->nb_precs; q += nw)
        multi_prec<1>(c, d, v->prec_order[q], l, l1, t, n, sh->u.warp[threadIdx.x / 32]);
    d->pend = RC_PEND_NONE;
    grid_sync();
    for (uint32_t q = w; q < v->nb_tps * (uint32_t)n; q += nw) {
        uint32_t k = q % v->nb_tps, j = q / v->nb_tps;
        unsigned long long *mj = mg + j * ms;
        tp_size_warp(v, k, a->mlen + j * plen, &mj[RC_M_SUM], &mj[RC_M_COMP], &mj[RC_M_LAYER]);
    }
    phase_end(sh, g);

    ret = __ldcg(&g->err);
    if (ret < 0) {
        c->total = ret;
        return ret;
    }
    for (int j = n - 1; j >= 0; j--) {
        const unsigned long long *mj = mg + j * ms;
        uint64_t total = v->main_len + 2 + ld_acc(&mj[RC_M_SUM]), above = 0;
        c->total = (int64_t)total;
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            c->comp_len[cc] = cc < v->nb_comps ? ld_acc(&mj[RC_M_COMP + cc]) : 0;
        for (int m = J2KI_MAX_LAYERS - 1; m >= 0; m--) {
            if (m >= L) {
                c->layer_len[m] = 0;
                continue;
            }
            c->layer_len[m] = total - above;
            above += ld_acc(&mj[RC_M_LAYER + m]);
        }
        if (!j2ki_rc_multi_step(c, l, j, pr, &js))
            break;
    }
    return js;
}

__device__ __noinline__ int64_t j2ki_rc_dev_dist_sum(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    const J2kiT2DevView *v = &d->a->v;
    RcAcc *g = phase_begin(d);
    int last = c->nb_layers - 1;
    int64_t acc = 0, sum;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < v->nb_cblks; i += gridDim.x * blockDim.x) {
        const J2kiCblk *cb = &v->cblks[i];
        cblk_settle(c, d, i);
        acc += j2ki_rc_cblk_residual(cb->passes, cb->nb_passes, cb->layer_passes[last], d->a->scale[cb->band_idx]);
    }
    d->pend = RC_PEND_NONE;
    /* two's complement sums are exact in any order while the total fits (|residual| <= 2^46) */
    block_add(d->sh, (unsigned long long)acc, 0, 0);
    phase_end(d->sh, g);
    sum = (int64_t)ld_acc(&g->sum);
    return sum > 0 ? sum : 0;
}

__device__ __noinline__ double j2ki_rc_dev_next_slope(J2kiRcCtx *c, int l)
{
    RcDev *d = (RcDev *)c->opaque;
    const J2kiT2DevView *v = &d->a->v;
    RcAcc *g = phase_begin(d);
    unsigned long long mx = 0;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < v->nb_cblks; i += gridDim.x * blockDim.x) {
        const J2kiCblk *cb = &v->cblks[i];
        cblk_settle(c, d, i);
        double s = j2ki_rc_cblk_growth(c, cb, cblk_comp(v, cb), l);
        if (s > 0.0 && j2ki_rc_bits(s) > mx)
            mx = j2ki_rc_bits(s);
    }
    d->pend = RC_PEND_NONE;
    block_add(d->sh, 0, 0, mx);
    phase_end(d->sh, g);
    mx = ld_acc(&g->umax);
    return mx ? j2ki_rc_from_bits(mx) : 0.0;
}

__device__ __noinline__ int j2ki_rc_dev_can_split(J2kiRcCtx *c, int l, double lo, double hi)
{
    RcDev *d = (RcDev *)c->opaque;
    const J2kiT2DevView *v = &d->a->v;
    RcAcc *g = phase_begin(d);
    unsigned long long nmin = 0, mx = 0;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < v->nb_cblks; i += gridDim.x * blockDim.x) {
        const J2kiCblk *cb = &v->cblks[i];
        double a, b;
        cblk_settle(c, d, i);
        j2ki_rc_cblk_range(c, cb, cblk_comp(v, cb), l, lo, hi, &a, &b);
        if (b > 0.0) {
            nmin = ~j2ki_rc_bits(a) > nmin ? ~j2ki_rc_bits(a) : nmin;
            mx = j2ki_rc_bits(b) > mx ? j2ki_rc_bits(b) : mx;
        }
    }
    d->pend = RC_PEND_NONE;
    block_add(d->sh, 0, nmin, mx);
    phase_end(d->sh, g);
    nmin = ld_acc(&g->nmin);
    mx = ld_acc(&g->umax);
    return mx != 0 && ~nmin != mx;
}

__device__ __noinline__ void j2ki_rc_dev_tie_span(J2kiRcCtx *c, double s, uint32_t klo, uint32_t khi,
                                                 uint32_t *first, uint32_t *last)
{
    RcDev *d = (RcDev *)c->opaque;
    const J2kiT2DevView *v = &d->a->v;
    RcAcc *g = phase_begin(d);
    unsigned long long nmin = 0, mx = 0;
    uint32_t end = khi < v->nb_cblks ? khi : v->nb_cblks;
    /* passes' slopes do not depend on layer_passes: nothing deferred to write here */
    for (uint32_t i = klo + blockIdx.x * blockDim.x + threadIdx.x; i < end; i += gridDim.x * blockDim.x)
        if (j2ki_rc_cblk_has_slope(&v->cblks[i], s)) {
            nmin = ~(unsigned long long)i > nmin ? ~(unsigned long long)i : nmin;
            mx = (unsigned long long)i + 1 > mx ? (unsigned long long)i + 1 : mx;
        }
    block_add(d->sh, 0, nmin, mx);
    phase_end(d->sh, g);
    nmin = ld_acc(&g->nmin);
    mx = ld_acc(&g->umax);
    if (!mx) {
        *first = 1;
        *last = 0;
    } else {
        *first = (uint32_t)~nmin;
        *last = (uint32_t)(mx - 1);
    }
}

/**
 * One level of the search guide (rc_core.h, j2ki_rc_hist_level): every thread bins its
 * code-blocks' hull segments into the block's shared histogram, blocks add theirs into the
 * grid's set (sets rotate over hist ops as the accumulator sets over phases, zeroed the same
 * way), grid.sync(), then the first warp of each block makes the level's decision from the
 * set, 8 bins per lane: suffix sums of the bytes across the lanes, the crossing bin by a
 * maximum over the lanes, the same integers and the same j2ki_rc_pred_over as the host's
 * serial walk.
 */
__device__ __noinline__ int j2ki_rc_dev_hist(J2kiRcCtx *c, int l, J2kiRcPred *p, uint64_t *L, uint64_t *H, int first)
{
    RcDev *d = (RcDev *)c->opaque;
    RcBlock *sh = d->sh;
    const J2kiT2DevView *v = &d->a->v;
    RcAcc *g = phase_begin(d);
    RcHist *hg = &d->a->hist[d->nhist % RC_NB_ACC];
    unsigned long long *sw = (unsigned long long *)&sh->u.hist, *gw = (unsigned long long *)hg;
    const uint64_t lo = *L, hi = *H;
    const int shift = j2ki_rc_hist_shift(lo, hi);
    int ret;

    if (blockIdx.x == 0) {
        unsigned long long *w = (unsigned long long *)&d->a->hist[(d->nhist + 1) % RC_NB_ACC];
        for (unsigned t = threadIdx.x; t < RC_HIST_WORDS; t += blockDim.x)
            w[t] = 0;
    }
    d->nhist++;
    __syncthreads();                        /* the union's last users are done */
    for (unsigned t = threadIdx.x; t < RC_HIST_WORDS; t += blockDim.x)
        sw[t] = 0;
    __syncthreads();
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < v->nb_cblks; i += gridDim.x * blockDim.x) {
        const J2kiCblk *cb = &v->cblks[i];
        cblk_settle(c, d, i);
        int comp = cblk_comp(v, cb), end = j2ki_rc_cblk_end(c, cb, comp, l);
        uint32_t prev = 0;
        for (int k = 0; k < end; k++) {
            uint64_t bits;
            uint32_t n = j2ki_rc_hist_seg(cb, k, end, lo, hi, &prev, &bits);
            if (!bits)
                continue;
            unsigned b = (unsigned)((bits - lo - 1) >> shift);
            if (n)
                atomicAdd(&sh->u.hist.bytes[comp][b], (unsigned long long)n);
            atomicMax(&sh->u.hist.nmin[b], ~(unsigned long long)bits);
            atomicMax(&sh->u.hist.mx[b], (unsigned long long)bits);
        }
    }
    d->pend = RC_PEND_NONE;
    __syncthreads();
    for (unsigned t = threadIdx.x; t < RC_HIST_WORDS; t += blockDim.x) {
        unsigned long long x = sw[t];
        if (!x)
            continue;
        if (t < RC_HIST_ADD_WORDS)
            atomicAdd(&gw[t], x);
        else
            atomicMax(&gw[t], x);
    }
    phase_end(sh, g);

    if (threadIdx.x < 32) {
        const unsigned lane = lane_id();
        unsigned long long by[J2KC_MAX_COMPS][8], mxl[8], ls[J2KC_MAX_COMPS], suf[J2KC_MAX_COMPS];
        uint64_t cum[J2KC_MAX_COMPS];
        unsigned best = 0, low = 0;       /* highest bin predicted over + 1; 256 - lowest non-empty bin */
#pragma unroll
        for (int i = 0; i < 8; i++) {
            unsigned b = lane * 8 + i;
#pragma unroll
            for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
                by[cc][i] = __ldcg(&hg->bytes[cc][b]);
            mxl[i] = __ldcg(&hg->mx[b]);
        }
#pragma unroll
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++) {
            unsigned long long x = 0, y;
#pragma unroll
            for (int i = 0; i < 8; i++)
                x += by[cc][i];
            ls[cc] = x;
            if (first)
                p->d[cc] = warp_sum(x);
            for (int o = 1; o < 32; o <<= 1) {
                y = __shfl_down_sync(RC_FULL, x, o);
                if (lane + o < 32)
                    x += y;
            }
            suf[cc] = x - ls[cc];       /* bytes of the lanes above */
            cum[cc] = p->above[cc] + suf[cc];
        }
#pragma unroll
        for (int i = 7; i >= 0; i--) {
            if (!mxl[i])
                continue;
#pragma unroll
            for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
                cum[cc] += by[cc][i];
            if (!best && j2ki_rc_pred_over(c, l, p, cum))
                best = lane * 8 + i + 1;
            low = J2KI_RC_HIST_BINS - (lane * 8 + i);
        }
        for (int o = 16; o > 0; o >>= 1) {     /* maxima over the lanes (no __reduce_max_sync on sm_75) */
            unsigned y = __shfl_xor_sync(RC_FULL, best, o), z = __shfl_xor_sync(RC_FULL, low, o);
            best = y > best ? y : best;
            low = z > low ? z : low;
        }
        if (!low) {
            ret = -1;
        } else {
            unsigned j = best ? best - 1 : J2KI_RC_HIST_BINS - low;
            unsigned long long mn = ~__ldcg(&hg->nmin[j]), mx = __ldcg(&hg->mx[j]);
#pragma unroll
            for (int cc = 0; cc < J2KC_MAX_COMPS; cc++) {
                unsigned long long x = 0;
#pragma unroll
                for (int i = 0; i < 8; i++)
                    if (lane * 8 + i > j)
                        x += by[cc][i];
                x = warp_sum(x);
                if (lane == 0)
                    sh->h_up[cc] = p->above[cc] + x;
            }
            if (lane == 0) {
                sh->h_L = mn - 1;
                sh->h_H = mx;
                if (p->collect) {           /* j2ki_rc_hist_near's rule */
                    int nn = 0, got = 0;
                    sh->h_near[nn++] = mx;
                    for (int b = (int)j - 1; b >= 0 && got < J2KI_RC_NEAR_BINS; b--) {
                        unsigned long long e = __ldcg(&hg->mx[b]);
                        if (e) {
                            sh->h_near[nn++] = e;
                            got++;
                        }
                    }
                    got = 0;
                    for (int b = (int)j + 1; b < J2KI_RC_HIST_BINS && got < J2KI_RC_NEAR_BINS; b++) {
                        unsigned long long e = __ldcg(&hg->mx[b]);
                        if (e) {
                            sh->h_near[nn++] = e;
                            got++;
                        }
                    }
                    sh->h_nb_near = nn;
                }
            }
            ret = mn == mx;
        }
        if (lane == 0) {
            sh->h_ret = ret;
            for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
                sh->h_d[cc] = p->d[cc];
        }
    }
    __syncthreads();
    ret = sh->h_ret;
    if (first)
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            p->d[cc] = sh->h_d[cc];
    if (ret >= 0) {
        *L = sh->h_L;
        *H = sh->h_H;
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            p->above[cc] = sh->h_up[cc];
        if (p->collect)
            for (int q = 0; q < sh->h_nb_near; q++)
                p->near[p->nb_near++] = sh->h_near[q];
    }
    __syncthreads();                        /* every thread has read before a next level writes */
    return ret;
}

} /* extern "C" */

/* ---- the final fill ---------------------------------------------------------------------- */

/** Bitonic stage (k, j) on the candidate pair (x at global position ga, y at ga + j): true
 *  when they must swap so that runs of length k end up in j2ki_rc_fill_before order,
 *  alternating direction (the ascending runs are those with bit k of ga clear). */
static __device__ int sort_swap(uint32_t ga, uint32_t k, const J2kiRcFillCand *x, const J2kiRcFillCand *y)
{
    return (ga & k) == 0 ? j2ki_rc_fill_before(y, x) : j2ki_rc_fill_before(x, y);
}

/** Lower position of pair t of a stage with partner distance j (bit log2(j) of it is 0). */
static __device__ uint32_t sort_pair(uint32_t t, uint32_t j) { return 2 * t - (t & (j - 1)); }

/**
 * The bitonic stages with partner distance < cl, on each chunk of cl candidates in shared
 * memory (blocks loop over the chunks: a block-uniform loop). Runs lengths k = k0 .. k1 (each
 * from distance min(k, cl) / 2 down to 1). first: positions >= nb are padding, loaded as
 * entries that sort last (and written back, for the grid-wide stages). last: the order is
 * final; also stores each real candidate's estimated cost and component.
 */
static __device__ void sort_chunks(const RcDev *d, uint32_t nb, uint32_t n2, uint32_t cl, uint32_t k0, uint32_t k1,
                                   int first, int last)
{
    const RcArgs *a = d->a;
    J2kiRcFillCand *s = d->sh->u.sort;
    for (uint32_t base = blockIdx.x * cl; base < n2; base += gridDim.x * cl) {
        for (uint32_t t = threadIdx.x; t < cl; t += blockDim.x) {
            if (first && base + t >= nb) {
                s[t].s = -1.0;
                s[t].i = UINT32_MAX;
                s[t].n_old = s[t].n_new = 0;
            } else {
                s[t] = a->cand[base + t];
            }
        }
        __syncthreads();
        for (uint32_t k = k0; k <= k1; k <<= 1)
            for (uint32_t j = (k < cl ? k : cl) >> 1; j > 0; j >>= 1) {
                for (uint32_t t = threadIdx.x; t < cl / 2; t += blockDim.x) {
                    uint32_t p = sort_pair(t, j);
                    J2kiRcFillCand x = s[p], y = s[p + j];
                    if (sort_swap(base + p, k, &x, &y)) {
                        s[p] = y;
                        s[p + j] = x;
                    }
                }
                __syncthreads();
            }
        for (uint32_t t = threadIdx.x; t < cl; t += blockDim.x) {
            uint32_t q = base + t;
            a->cand[q] = s[t];
            if (last && q < nb) {
                const J2kiCblk *cb = &a->v.cblks[s[t].i];
                a->est[q] = j2ki_rc_fill_est(cb, &s[t]);
                a->est_comp[q] = (uint8_t)cblk_comp(&a->v, cb);
            }
        }
        __syncthreads();                    /* before the next chunk overwrites s */
    }
}

#ifndef RC_SORT_HOOK
#define RC_SORT_HOOK(nb, wide) ((void)0)     /* tests/rc_emu.cc counts the sorts */
#endif

/** Sorts cand[0, nb) into j2ki_rc_fill_before order (cand holds n2 >= nb entries, a power of
 *  two) and fills est / est_comp; ends with a grid.sync, except when they fit one chunk: then
 *  block 0 alone sorted them, and its own threads read them next (fill_pick). */
static __device__ void fill_sort(const RcDev *d, uint32_t nb)
{
    const RcArgs *a = d->a;
    uint32_t n2 = 1, cl;
    while (n2 < nb)
        n2 <<= 1;
    cl = n2 < RC_SORT_CHUNK ? n2 : RC_SORT_CHUNK;
    RC_SORT_HOOK(nb, n2 > cl);
    sort_chunks(d, nb, n2, cl, 2, cl, 1, n2 == cl);
    if (n2 == cl)
        return;                             /* block 0 sorted them all; it also picks */
    grid_sync();
    for (uint32_t k = 2 * cl; k <= n2; k <<= 1) {
        for (uint32_t j = k >> 1; j >= cl; j >>= 1) {
            for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < n2 / 2; t += gridDim.x * blockDim.x) {
                uint32_t p = sort_pair(t, j);
                J2kiRcFillCand x = a->cand[p], y = a->cand[p + j];
                if (sort_swap(p, k, &x, &y)) {
                    a->cand[p] = y;
                    a->cand[p + j] = x;
                }
            }
            grid_sync();
        }
        sort_chunks(d, nb, n2, cl, k, k, 0, k == n2);
        grid_sync();
    }
}

/** comp's entry of the four slacks (registers: no dynamically indexed local array). */
static __device__ int64_t slack_get(const int64_t *cs, int comp)
{
    int64_t x = INT64_MAX;
#pragma unroll
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        if (comp == cc)
            x = cs[cc];
    return x;
}

/**
 * The host's greedy pick (rc_ref.c host_fill_prepare) over the sorted candidates, by one warp,
 * 32 at a time: keeps a candidate when its cost fits the frame's and its component's slack,
 * and subtracts it; a candidate not kept goes back to n_old. The kept ones are compacted in
 * order at the front of cand (a lane writes at or below its own position, after every lane of
 * the chunk has loaded its entry), with their rank per code-block. Returns how many are kept.
 */
static __device__ uint32_t fill_pick(const J2kiRcCtx *c, const RcDev *d, uint32_t nb, const int64_t *cmin)
{
    const RcArgs *a = d->a;
    unsigned lane = lane_id();
    int last = c->nb_layers - 1;
    uint32_t kept = 0;
    int64_t slack = c->frame_budget ? (int64_t)c->frame_budget - c->total : INT64_MAX;
    int64_t cslack[J2KC_MAX_COMPS];
#pragma unroll
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        cslack[cc] = c->comp_budget && cc < c->nb_comps ? (int64_t)c->comp_budget - (int64_t)c->comp_len[cc]
                                                        : INT64_MAX;
    for (uint32_t base = 0; base < nb; base += 32) {
        uint32_t j = base + lane;
        int valid = j < nb, comp = 0;
        int64_t est = 0;
        J2kiRcFillCand x;
        if (valid) {
            x = a->cand[j];
            est = a->est[j];
            comp = a->est_comp[j];
        }
        /* undecided lanes; every one before the first that fits now would not fit later */
        uint32_t open = __ballot_sync(RC_FULL, valid), keep = 0;
        while (open) {
            int fits = ((open >> lane) & 1) && est <= slack && est <= slack_get(cslack, comp);
            uint32_t fit = __ballot_sync(RC_FULL, fits);
            if (!fit)
                break;
            int f = __ffs((int)fit) - 1;
            int64_t e = __shfl_sync(RC_FULL, est, f);
            int cf = __shfl_sync(RC_FULL, comp, f);
            slack -= e;
#pragma unroll
            for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
                if (cf == cc)
                    cslack[cc] -= e;
            keep |= 1u << f;
            open &= ~((2u << f) - 1u);
        }
        __syncwarp();
        if (valid) {
            if ((keep >> lane) & 1) {
                uint32_t q = kept + (uint32_t)__popc(keep & ((1u << lane) - 1u));
                a->cand[q] = x;
                a->rank[x.i] = q;
            } else {
                a->v.cblks[x.i].layer_passes[last] = x.n_old;
            }
        }
        kept += (uint32_t)__popc(keep);
        __syncwarp();
        /* the rest keep n_old (their layer_passes already) once even the cheapest candidate
         * of each component (cmin) exceeds what is left: the slacks only shrink */
        int open_any = 0;
#pragma unroll
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            open_any |= cmin[cc] <= slack && cmin[cc] <= cslack[cc];
        if (!open_any)
            break;
    }
    return kept;
}

extern "C" {

__device__ __noinline__ int64_t j2ki_rc_dev_fill_prepare(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    const RcArgs *a = d->a;
    const J2kiT2DevView *v = &a->v;
    uint32_t stride = gridDim.x * blockDim.x, nb;
    int64_t cmin[J2KC_MAX_COMPS];
    RcAcc *g;

    /* a deferred fill_apply reads the candidates that the collection below overwrites */
    if (d->pend == RC_PEND_FILL)
        settle_all(c, d, 1);
    g = phase_begin(d);
    /* warp-uniform loop (the ballot): one atomic per warp for its candidates' slots; only the
     * candidates whose cost fits the slacks as they are now (j2ki_rc_fill_fits) */
    for (uint32_t b = blockIdx.x * blockDim.x + (threadIdx.x & ~31u); b < v->nb_cblks; b += stride) {
        uint32_t i = b + lane_id(), slot = 0, m;
        J2kiRcFillCand x;
        int has = 0, comp = 0;
        int64_t est = 0;
        if (i < v->nb_cblks) {
            const J2kiCblk *cb = &v->cblks[i];
            comp = cblk_comp(v, cb);
            cblk_settle(c, d, i);
            a->rank[i] = RC_NO_RANK;
            if ((has = j2ki_rc_fill_cand(c, cb, i, comp, &x))) {
                est = j2ki_rc_fill_est(cb, &x);
                has = j2ki_rc_fill_fits(c, comp, est);
            }
        }
#pragma unroll
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++) {
            unsigned long long e = warp_max(has && comp == cc ? ~(unsigned long long)est : 0);
            if (e && lane_id() == 0)
                atomicMax(&g->cmin[cc], e);
        }
        m = __ballot_sync(RC_FULL, has);
        if (m && lane_id() == 0)
            slot = atomicAdd(&g->nb, (uint32_t)__popc(m));
        slot = __shfl_sync(RC_FULL, slot, 0);
        if (has)
            a->cand[slot + __popc(m & ((1u << lane_id()) - 1u))] = x;
    }
    d->pend = RC_PEND_NONE;
    grid_sync();
    nb = __ldcg(&g->nb);
    d->nb_kept = 0;
    if (!nb)
        return 0;
#pragma unroll
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++) {
        unsigned long long e = ld_acc(&g->cmin[cc]);
        cmin[cc] = e ? (int64_t)~e : INT64_MAX;
    }

    fill_sort(d, nb);
    g = phase_begin(d);
    if (blockIdx.x == 0 && threadIdx.x < 32) {
        uint32_t kept = fill_pick(c, d, nb, cmin);
        if (threadIdx.x == 0)
            g->nb = kept;
    }
    grid_sync();
    d->nb_kept = __ldcg(&g->nb);
    return d->nb_kept;
}

__device__ __noinline__ void j2ki_rc_dev_fill_apply(J2kiRcCtx *c, uint32_t p)
{
    RcDev *d = (RcDev *)c->opaque;
    /* a deferred apply first (never the case in j2ki_rc_fill: a measurement comes between) */
    if (d->pend == RC_PEND_APPLY)
        settle_all(c, d, 1);
    d->pend = RC_PEND_FILL;
    d->pend_p = p;
}

} /* extern "C" */

/* ---- kernels ---------------------------------------------------------------------------- */

__device__ __forceinline__ void hull_kernel(J2kiT2DevView v)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.nb_cblks)
        return;
    J2kiCblk *cb = &v.cblks[i];
    j2ki_rc_hull_passes(cb->passes, cb->nb_passes, v.bands[cb->band_idx].dist_weight);
}

__device__ __forceinline__ void decide_kernel(const RcArgs &a, const J2kiRcCtx *ctx0)
{
    __shared__ RcBlock sh;
    RcDev d;
    J2kiRcCtx c = *ctx0;
    unsigned t = threadIdx.x;
    int ret;

    if (t < J2KI_MAX_LAYERS)
        sh.layer[t] = 0;
    if (t < J2KC_MAX_COMPS)
        sh.comp[t] = 0;
    if (t == 0) {
        sh.sum = sh.nmin = sh.umax = 0;
        sh.err = 0;
    }
    __syncthreads();
    d.a = &a;
    d.sh = &sh;
    d.phase = 0;
    d.nhist = 0;
    d.nmulti = 0;
    d.nb_kept = 0;
    d.pend = RC_PEND_NONE;
    d.pend_p = 0;
    c.ops = NULL;
    c.opaque = &d;
    c.log = NULL;
    ret = j2ki_rc_decide(&c);
    /* what the last op left deferred; tier-2 writing is the next kernel on the stream */
    settle_all(&c, &d, 0);
    /* qstep_try's test after the decision (rc_core.h, j2ki_rc_cblk_hull_bits), OR-ed into the
     * result (zeroed by the import before this kernel): each thread reads the code-blocks whose
     * deferred writes it has just made, or layer_passes written before the last grid barrier
     * (the decision's ops all end with one) */
    if (a.hull_mask && ret >= 0) {
        uint32_t m = 0;
        for (uint32_t i = blockIdx.x * blockDim.x + t; i < a.v.nb_cblks; i += gridDim.x * blockDim.x) {
            const J2kiCblk *cb = &a.v.cblks[i];
            m |= j2ki_rc_cblk_hull_bits(cb->passes, cb->nb_passes, cb->layer_passes[a.v.nb_layers - 1],
                                        cblk_comp(&a.v, cb));
        }
        for (int o = 16; o > 0; o >>= 1)
            m |= __shfl_xor_sync(RC_FULL, m, o);
        if (m && lane_id() == 0)
            atomicOr(&a.v.result->hull_mask, m);
    }
    if (blockIdx.x == 0 && t == 0) {
        J2kiT2CudaResult *r = a.v.result;
        if (ret < 0)
            atomicCAS(&r->err, 0, ret);
        r->rc_why = c.why;
        r->rc_why_arg = c.why_arg;
        r->nb_probes = c.nb_probes;
        r->nb_rounds = c.nb_rounds;
        r->rc_total = c.total;
    }
}

/* ---- entries ---------------------------------------------------------------------------- */

extern "C" __global__ void j2ki_k_rc_hull(const __grid_constant__ J2kiRcHullParams p) { hull_kernel(p.v); }

/* the arguments in parameter space, read in place by every thread (no per-thread copy) */
extern "C" __global__ void __launch_bounds__(RC_THREADS) j2ki_k_rc_decide(const __grid_constant__ J2kiRcDecideParams p)
{
    decide_kernel(p.a, p.ctx0);
}
