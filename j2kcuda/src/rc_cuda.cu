/*
 * CUDA rate control, see rc_cuda.h. The control code is rc_core.h's j2ki_rc_decide, the same
 * the host runs; this file supplies its operations as block-wide device functions
 * (j2ki_rc_dev_*, called by every thread of the one decide block with its own context copy).
 *
 * Each op: thread 0 clears the shared accumulators, the block syncs, every thread works on a
 * strided share of the code-blocks / precincts / tile-parts and adds into shared memory with
 * atomics (integers, or bit patterns of non-negative doubles, whose order is the value order:
 * order-independent), the block syncs, every thread copies the result into its own context,
 * the block syncs again (so the next op may clear the accumulators). Sizing: one thread per
 * precinct codes its headers (t2_core.h via j2ki_t2_dev_prec_size), then one thread per
 * tile-part adds up its cells (j2ki_t2_dev_tp_size), exactly as j2ki_t2_size accounts them.
 * The final fill sorts its candidates with a block-wide bitonic sort on the total order
 * (slope desc, index asc) that the host's qsort uses, so the kept prefix is the same.
 *
 * Device memory (sized at init): the prepared context, per-band distortion scales, the fill's
 * candidates (a power of two >= the code-blocks).
 */
extern "C" {
#include "rc.h"
#include "rc_core.h"
}
#include <stdlib.h>
#include <string.h>

#include "cuda_util.h"
#include "rc_cuda.h"

#define RC_THREADS 512

struct J2kiRcCuda {
    const J2kiLog *log;
    int           *sticky;
    J2kiT2Cuda    *t2;
    uint8_t       *d_mem;
    J2kiRcCtx     *d_ctx0;
    double        *d_scale;
    J2kiRcFillCand *d_cand;
    uint32_t       cand_cap;
};

typedef struct RcShared {
    unsigned long long comp[J2KC_MAX_COMPS];
    unsigned long long layer[J2KI_MAX_LAYERS];
    unsigned long long sum, umin, umax;
    int                err;
    uint32_t           nb;
} RcShared;

/** What the decide block's ops reach through c->opaque (one copy per thread). */
typedef struct RcDev {
    J2kiT2DevView   v;
    const double   *scale;
    J2kiRcFillCand *cand;
    uint32_t        cand_cap;
    uint32_t        nb_kept;
    RcShared       *sh;
} RcDev;

static __device__ int cblk_comp(const RcDev *d, const J2kiCblk *cb) { return d->v.bands[cb->band_idx].comp; }

static __device__ void set_min_max(RcShared *sh, unsigned long long mn, unsigned long long mx)
{
    if (mn != ~0ull)
        atomicMin(&sh->umin, mn);
    if (mx)
        atomicMax(&sh->umax, mx);
}

extern "C" {

__device__ void j2ki_rc_dev_hull(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    RcShared *sh = d->sh;
    unsigned long long mn = ~0ull, mx = 0;
    if (threadIdx.x == 0) {
        sh->umin = ~0ull;
        sh->umax = 0;
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < d->v.nb_cblks; i += blockDim.x) {
        const J2kiCblk *cb = &d->v.cblks[i];
        for (int k = 0; k < cb->nb_passes; k++) {
            double s = cb->passes[k].slope;
            if (s > 0.0) {
                unsigned long long b = j2ki_rc_bits(s);
                mn = b < mn ? b : mn;
                mx = b > mx ? b : mx;
            }
        }
    }
    set_min_max(sh, mn, mx);
    __syncthreads();
    c->smin = sh->umin == ~0ull ? 0.0 : j2ki_rc_from_bits(sh->umin);
    c->smax = sh->umax ? j2ki_rc_from_bits(sh->umax) : 0.0;
    __syncthreads();
}

__device__ void j2ki_rc_dev_apply(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    for (uint32_t i = threadIdx.x; i < d->v.nb_cblks; i += blockDim.x)
        j2ki_rc_cblk_apply(c, &d->v.cblks[i], i, cblk_comp(d, &d->v.cblks[i]));
    __syncthreads();
}

__device__ int j2ki_rc_dev_size(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    RcShared *sh = d->sh;
    const J2kiT2DevView *v = &d->v;
    int ret;
    if (threadIdx.x == 0) {
        for (int i = 0; i < J2KC_MAX_COMPS; i++)
            sh->comp[i] = 0;
        for (int l = 0; l < J2KI_MAX_LAYERS; l++)
            sh->layer[l] = 0;
        sh->sum = 0;
        sh->err = 0;
    }
    __syncthreads();
    for (uint32_t p = threadIdx.x; p < v->nb_precs; p += blockDim.x)
        if ((ret = j2ki_t2_dev_prec_size(v, p)) < 0)
            atomicMin(&sh->err, ret);
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < v->nb_tps; k += blockDim.x)
        atomicAdd(&sh->sum, (unsigned long long)j2ki_t2_dev_tp_size(v, k, NULL, sh->comp, sh->layer));
    __syncthreads();
    ret = sh->err;
    if (!ret) {
        uint64_t total = v->main_len + 2 + sh->sum, above = 0;
        c->total = (int64_t)total;
        for (int cc = 0; cc < v->nb_comps && cc < J2KC_MAX_COMPS; cc++)
            c->comp_len[cc] = sh->comp[cc];
        for (int l = c->nb_layers - 1; l >= 0; l--) {
            c->layer_len[l] = total - above;
            above += sh->layer[l];
        }
    } else {
        c->total = ret;
    }
    __syncthreads();
    return ret;
}

__device__ int64_t j2ki_rc_dev_dist_sum(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    RcShared *sh = d->sh;
    int last = c->nb_layers - 1;
    int64_t acc = 0, sum;
    if (threadIdx.x == 0)
        sh->sum = 0;
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < d->v.nb_cblks; i += blockDim.x) {
        const J2kiCblk *cb = &d->v.cblks[i];
        acc += j2ki_rc_cblk_residual(cb->passes, cb->nb_passes, cb->layer_passes[last], d->scale[cb->band_idx]);
    }
    /* two's complement sums are exact in any order while the total fits (|residual| <= 2^46) */
    atomicAdd(&sh->sum, (unsigned long long)acc);
    __syncthreads();
    sum = (int64_t)sh->sum;
    __syncthreads();
    return sum > 0 ? sum : 0;
}

__device__ double j2ki_rc_dev_next_slope(J2kiRcCtx *c, int l)
{
    RcDev *d = (RcDev *)c->opaque;
    RcShared *sh = d->sh;
    unsigned long long mx = 0;
    double s;
    if (threadIdx.x == 0)
        sh->umax = 0;
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < d->v.nb_cblks; i += blockDim.x) {
        const J2kiCblk *cb = &d->v.cblks[i];
        double g = j2ki_rc_cblk_growth(c, cb, cblk_comp(d, cb), l);
        if (g > 0.0 && j2ki_rc_bits(g) > mx)
            mx = j2ki_rc_bits(g);
    }
    set_min_max(sh, ~0ull, mx);
    __syncthreads();
    s = sh->umax ? j2ki_rc_from_bits(sh->umax) : 0.0;
    __syncthreads();
    return s;
}

__device__ int j2ki_rc_dev_can_split(J2kiRcCtx *c, int l, double lo, double hi)
{
    RcDev *d = (RcDev *)c->opaque;
    RcShared *sh = d->sh;
    unsigned long long mn = ~0ull, mx = 0;
    int split;
    if (threadIdx.x == 0) {
        sh->umin = ~0ull;
        sh->umax = 0;
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < d->v.nb_cblks; i += blockDim.x) {
        const J2kiCblk *cb = &d->v.cblks[i];
        double a, b;
        j2ki_rc_cblk_range(c, cb, cblk_comp(d, cb), l, lo, hi, &a, &b);
        if (b > 0.0) {
            mn = j2ki_rc_bits(a) < mn ? j2ki_rc_bits(a) : mn;
            mx = j2ki_rc_bits(b) > mx ? j2ki_rc_bits(b) : mx;
        }
    }
    set_min_max(sh, mn, mx);
    __syncthreads();
    split = sh->umax != 0 && sh->umin != sh->umax;
    __syncthreads();
    return split;
}

__device__ int64_t j2ki_rc_dev_fill_prepare(J2kiRcCtx *c)
{
    RcDev *d = (RcDev *)c->opaque;
    RcShared *sh = d->sh;
    J2kiRcFillCand *cand = d->cand;
    uint32_t nb, n2;
    if (threadIdx.x == 0)
        sh->nb = 0;
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < d->v.nb_cblks; i += blockDim.x) {
        J2kiRcFillCand x;
        if (j2ki_rc_fill_cand(c, &d->v.cblks[i], i, cblk_comp(d, &d->v.cblks[i]), &x))
            cand[atomicAdd(&sh->nb, 1u)] = x;
    }
    __syncthreads();
    nb = sh->nb;
    for (n2 = 1; n2 < nb; n2 <<= 1)
        ;
    /* pad to a power of two with entries that sort last */
    for (uint32_t i = nb + threadIdx.x; i < n2; i += blockDim.x) {
        cand[i].s = -1.0;
        cand[i].i = UINT32_MAX;
        cand[i].n_old = cand[i].n_new = 0;
    }
    __syncthreads();
    /* bitonic sort into j2ki_rc_fill_before order (a total order on distinct indices) */
    for (uint32_t k = 2; nb > 1 && k <= n2; k <<= 1)
        for (uint32_t j = k >> 1; j > 0; j >>= 1) {
            for (uint32_t i = threadIdx.x; i < n2; i += blockDim.x) {
                uint32_t q = i ^ j;
                if (q > i) {
                    J2kiRcFillCand a = cand[i], b = cand[q];
                    int swap = (i & k) == 0 ? j2ki_rc_fill_before(&b, &a) : j2ki_rc_fill_before(&a, &b);
                    if (swap) {
                        cand[i] = b;
                        cand[q] = a;
                    }
                }
            }
            __syncthreads();
        }
    /* greedy pick, in order, by one thread (rc.c host_fill_prepare) */
    if (threadIdx.x == 0) {
        int last = c->nb_layers - 1;
        uint32_t kept = 0;
        int64_t slack = c->frame_budget ? (int64_t)c->frame_budget - c->total : INT64_MAX;
        int64_t cslack[J2KC_MAX_COMPS];
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            cslack[cc] = c->comp_budget && cc < c->nb_comps ? (int64_t)c->comp_budget - (int64_t)c->comp_len[cc]
                                                            : INT64_MAX;
        for (uint32_t j = 0; j < nb; j++) {
            J2kiCblk *cb = &d->v.cblks[cand[j].i];
            int comp = cblk_comp(d, cb);
            int64_t est = j2ki_rc_fill_est(cb, &cand[j]);
            if (est <= slack && est <= cslack[comp]) {
                slack -= est;
                cslack[comp] -= est;
                cand[kept++] = cand[j];
            } else {
                cb->layer_passes[last] = cand[j].n_old;
            }
        }
        sh->nb = kept;
    }
    __syncthreads();
    d->nb_kept = sh->nb;
    __syncthreads();
    return d->nb_kept;
}

__device__ void j2ki_rc_dev_fill_apply(J2kiRcCtx *c, uint32_t p)
{
    RcDev *d = (RcDev *)c->opaque;
    int last = c->nb_layers - 1;
    for (uint32_t j = threadIdx.x; j < d->nb_kept; j += blockDim.x)
        d->v.cblks[d->cand[j].i].layer_passes[last] = j < p ? d->cand[j].n_new : d->cand[j].n_old;
    __syncthreads();
}

} /* extern "C" */

/* ---- kernels ---------------------------------------------------------------------------- */

__global__ void hull_kernel(J2kiT2DevView v)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.nb_cblks)
        return;
    J2kiCblk *cb = &v.cblks[i];
    j2ki_rc_hull_passes(cb->passes, cb->nb_passes, v.bands[cb->band_idx].dist_weight);
}

__global__ void __launch_bounds__(RC_THREADS) decide_kernel(RcDev d0, const J2kiRcCtx *ctx0)
{
    __shared__ RcShared sh;
    RcDev d = d0;
    J2kiRcCtx c = *ctx0;
    int ret;
    d.sh = &sh;
    d.nb_kept = 0;
    c.ops = NULL;
    c.opaque = &d;
    c.log = NULL;
    ret = j2ki_rc_decide(&c);
    if (threadIdx.x == 0) {
        J2kiT2CudaResult *r = d.v.result;
        if (ret < 0)
            atomicCAS(&r->err, 0, ret);
        r->rc_why = c.why;
        r->rc_why_arg = c.why_arg;
        r->nb_probes = c.nb_probes;
        r->rc_total = c.total;
    }
}

/* ---- host API --------------------------------------------------------------------------- */

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

void j2ki_rc_cuda_free(J2kiRcCuda **prc)
{
    J2kiRcCuda *rc = *prc;
    if (!rc)
        return;
    cudaFree(rc->d_mem);
    free(rc);
    *prc = NULL;
}

int j2ki_rc_cuda_init(J2kiRcCuda **out, const J2kiPlan *plan, J2kiT2Cuda *t2, const J2kiLog *log, int *sticky)
{
    J2kiRcCuda *rc = (J2kiRcCuda *)calloc(1, sizeof(*rc));
    J2kiRcCtx ctx;
    double *scale = NULL;
    size_t o_scale, o_cand, total;
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
    for (rc->cand_cap = 1; rc->cand_cap < plan->nb_cblks; rc->cand_cap <<= 1)
        ;
    o_scale = align256(sizeof(J2kiRcCtx));
    o_cand = o_scale + align256((size_t)(plan->nb_bands ? plan->nb_bands : 1) * sizeof(double));
    total = o_cand + align256((size_t)rc->cand_cap * sizeof(J2kiRcFillCand));
    if ((ret = J2KI_CUDA(log, sticky, cudaMalloc((void **)&rc->d_mem, total))) < 0)
        goto fail;
    rc->d_ctx0 = (J2kiRcCtx *)rc->d_mem;
    rc->d_scale = (double *)(rc->d_mem + o_scale);
    rc->d_cand = (J2kiRcFillCand *)(rc->d_mem + o_cand);
    if (!(scale = (double *)calloc(plan->nb_bands ? plan->nb_bands : 1, sizeof(double)))) {
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    for (uint32_t b = 0; b < plan->nb_bands; b++)
        scale[b] = j2ki_rc_dist_scale(plan, &plan->bands[b]);
    if ((ret = J2KI_CUDA(log, sticky, cudaMemcpy(rc->d_ctx0, &ctx, sizeof(ctx), cudaMemcpyHostToDevice))) < 0 ||
        (ret = J2KI_CUDA(log, sticky, cudaMemcpy(rc->d_scale, scale, plan->nb_bands * sizeof(double),
                                                 cudaMemcpyHostToDevice))) < 0)
        goto fail;
    free(scale);
    *out = rc;
    return 0;
fail:
    free(scale);
    j2ki_rc_cuda_free(&rc);
    return ret;
}

int j2ki_rc_cuda_run(J2kiRcCuda *rc, const J2kiCblkRes *d_res, cudaStream_t st)
{
    const J2kiT2DevView *v = j2ki_t2_cuda_view(rc->t2);
    RcDev d;
    int ret;

    if ((ret = j2ki_t2_cuda_import(rc->t2, d_res, st)) < 0)
        return ret;
    hull_kernel<<<v->nb_cblks ? (v->nb_cblks + 127) / 128 : 1, 128, 0, st>>>(*v);
    if ((ret = J2KI_CUDA_LAUNCHED(rc->log, rc->sticky)) < 0)
        return ret;
    memset(&d, 0, sizeof(d));
    d.v = *v;
    d.scale = rc->d_scale;
    d.cand = rc->d_cand;
    d.cand_cap = rc->cand_cap;
    decide_kernel<<<1, RC_THREADS, 0, st>>>(d, rc->d_ctx0);
    return J2KI_CUDA_LAUNCHED(rc->log, rc->sticky);
}
