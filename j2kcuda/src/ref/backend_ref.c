/*
 * The reference backend: the whole pipeline on the CPU, one frame at a time, in the order
 * of the standard: sample load and DC level shift (G.1.2), component transform (Annex G),
 * DWT (Annex F), quantisation (Annex E), tier-1 (Annexes C, D), then rate control and
 * tier-2 shared with the CUDA backend (j2ki_finish_codestream). It encodes during submit;
 * wait only hands the slot's codestream back. This is the oracle the CUDA backend matches.
 * With qstep_try (quant.h) the quantiser's integers give the planes d the frame is coded with
 * first (j2ki_quant_predict); with d > 0 it is coded with that plan's steps and, when it does
 * not fill its budget there, from tier-1 on again with the plan of qstep_rate's steps (the
 * quantised samples are the same integers for every plan).
 *
 * Threads: the sample stages and tier-1 run on the encoder's pool (threadpool.h, "threads"
 * workers), as jobs of independent items:
 *   - load, level shift and component transform: chunks of REF_ROWS rows of a tile-component
 *     (of the three transformed components together when the MCT is on);
 *   - DWT, per level: the vertical pass by strips of J2KI_DWT_STRIP columns, then the
 *     horizontal pass by chunks of REF_ROWS rows, over every tile-component at once;
 *   - quantisation (and qstep_try's histogram, per worker, summed after) and tier-1: one
 *     code-block per item (code-blocks partition the bands);
 *   - the early stop's decisions (t1_stop.h, j2ki_t1s_plan_pool): code-blocks' keys and
 *     limits by chunks of code-blocks, the threshold by histograms of chunks of pass slots;
 *   - rate control: its hulls, thresholds' application and histograms by chunks of
 *     code-blocks (j2ki_rc_run_pool), its tier-2 sizings (about ten per frame) one precinct
 *     per item (t2_sizer.h).
 * Every item writes its own samples, code-block or precinct and reads nothing another item of
 * the same job writes, and each is computed by the same operations whatever the split, so the
 * bytes do not depend on the thread count. Rate control's search and the writing of the
 * codestream stay on the calling thread.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/backend.h"
#include "hd/dwt.h"
#include "hd/mct.h"
#include "hd/quant.h"
#include "ref/rc_ref.h"
#include "hd/rc_core.h"
#include "ref/t1_ref.h"
#include "hd/t1_stop.h"
#include "ref/ht_plane.h"
#include "ref/ht_ref.h"
#include "ref/t2_sizer.h"
#include "core/threadpool.h"
#include "core/tuning.h"

/* Rows of one item of the load / component transform job and of the horizontal DWT pass */
#define REF_ROWS J2KI_TUNE_REF_ROWS

typedef struct RefSlot {
    uint8_t  *out;
    size_t    len;
    int       status;        /* result of the frame's encode */
    J2kcStats stats;
} RefSlot;

typedef struct RefBackend {
    const J2kiCodingParams *cp;
    J2kiLog    log;
    J2kiPlan  *plan;
    /* qstep_try: nb_try plans, plan_try[d] with d planes more (cp_try[d]: cp with qstep_extra
     * d), d = 1..nb_try (0 when off); each band's most planes (band_dmax), the histogram of
     * the quantised integers per worker (hist, J2KI_QPRED_HIST each) */
    int        nb_try;
    J2kiCodingParams cp_try[J2KI_QPRED_MAX_D + 1];
    J2kiPlan  *plan_try[J2KI_QPRED_MAX_D + 1];
    J2kiT2Sizer *sizer_try[J2KI_QPRED_MAX_D + 1];
    uint8_t   *band_dmax;
    uint64_t  *hist;
    J2kiT2Sizer *sizer;      /* rate control's tier-2 sizing of plan on the pool */
    void      *rc_scratch;   /* rate control's per-worker partials (j2ki_rc_pool_scratch_size) */
    int32_t   *samples;      /* every tile-component, plan layout; float in place on the 9/7 path */
    J2kiPool  *pool;
    int        nb_workers;   /* j2ki_pool_threads(pool) */
    void     **dwt_scratch;  /* per worker */
    J2kiT1   **t1;           /* per worker */
    J2kiHt   **ht;           /* per worker, with ht=1 (the HT block coder, ht_ref.h) */
    uint8_t   *ht_p;         /* per code-block: the HT set's bit-plane (ht_plane.h) */
    void      *ht_work;      /* j2ki_ht_planes_ref's work area */
    int       *cblk_ret;     /* per code-block: tier-1's result in the current job */
    uint32_t  *first;        /* nb_tiles * nb_comps + 1: a job's first item of each tile-component */
    uint32_t  *stop_lim;     /* per code-block pass limit of the early stop; NULL when off */
    void      *stop_work;    /* its decisions' work area (j2ki_t1s_pool_scratch_size) */
    int        nb_slots;
    size_t     max_out;
    RefSlot   *slots;
} RefBackend;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void ref_uninit(void *priv)
{
    RefBackend *rb = priv;
    if (!rb)
        return;
    j2ki_pool_free(&rb->pool);
    j2ki_t2_sizer_free(&rb->sizer);
    for (int d = 1; d <= J2KI_QPRED_MAX_D; d++) {
        j2ki_t2_sizer_free(&rb->sizer_try[d]);
        j2ki_plan_free(&rb->plan_try[d]);
    }
    free(rb->band_dmax);
    free(rb->hist);
    if (rb->slots)
        for (int i = 0; i < rb->nb_slots; i++)
            free(rb->slots[i].out);
    free(rb->slots);
    for (int w = 0; w < rb->nb_workers; w++) {
        if (rb->t1)
            j2ki_t1_free(&rb->t1[w]);
        if (rb->ht)
            j2ki_ht_free(&rb->ht[w]);
        if (rb->dwt_scratch)
            free(rb->dwt_scratch[w]);
    }
    free(rb->t1);
    free(rb->ht);
    free(rb->ht_p);
    free(rb->ht_work);
    free(rb->dwt_scratch);
    free(rb->cblk_ret);
    free(rb->first);
    free(rb->rc_scratch);
    free(rb->stop_lim);
    free(rb->stop_work);
    free(rb->samples);
    j2ki_plan_free(&rb->plan);
    free(rb);
}

static int ref_init(void **priv, const J2kiCodingParams *cp, const J2kiPlan *plan_in,
                    const J2kiLog *log, int nb_slots, size_t max_out)
{
    RefBackend *rb = calloc(1, sizeof(*rb));
    int ret = J2KC_ERR_NOMEM;
    uint32_t max_w = 1, max_h = 1;
    size_t nb_tc;

    (void)plan_in;
    *priv = NULL;
    if (!rb)
        return J2KC_ERR_NOMEM;
    rb->cp = cp;
    rb->log = *log;
    rb->nb_slots = nb_slots;
    rb->max_out = max_out;
    if ((ret = j2ki_plan_create(&rb->plan, cp, log)) < 0)
        goto fail;
    rb->nb_try = j2ki_quant_try_planes(cp);
    for (int d = 1; d <= rb->nb_try; d++) {
        j2ki_quant_try_params(&rb->cp_try[d], cp, d);
        if ((ret = j2ki_plan_create(&rb->plan_try[d], &rb->cp_try[d], log)) < 0)
            goto fail;
    }
    ret = J2KC_ERR_NOMEM;
    if (rb->plan->nb_samples > SIZE_MAX / sizeof(int32_t) ||
        !(rb->samples = malloc((rb->plan->nb_samples ? rb->plan->nb_samples : 1) * sizeof(int32_t)))) {
        j2ki_log(log, J2KC_LOG_ERROR, "reference backend: cannot allocate %zu samples", rb->plan->nb_samples);
        goto fail;
    }
    for (uint32_t t = 0; t < rb->plan->nb_tiles; t++)
        for (int c = 0; c < cp->img.nb_comps; c++) {
            const J2kiTileComp *tc = &rb->plan->tiles[t].comps[c];
            if (tc->w > max_w) max_w = tc->w;
            if (tc->h > max_h) max_h = tc->h;
        }
    nb_tc = (size_t)rb->plan->nb_tiles * (size_t)cp->img.nb_comps;
    if (!(rb->first = malloc((nb_tc + 1) * sizeof(*rb->first))) ||
        !(rb->cblk_ret = malloc((rb->plan->nb_cblks ? rb->plan->nb_cblks : 1) * sizeof(*rb->cblk_ret))))
        goto fail;
    if (!(rb->pool = j2ki_pool_new(cp->threads ? cp->threads : j2ki_pool_auto_threads())))
        goto fail;
    if (!(rb->dwt_scratch = calloc((size_t)j2ki_pool_threads(rb->pool), sizeof(*rb->dwt_scratch))) ||
        !(rb->t1 = calloc((size_t)j2ki_pool_threads(rb->pool), sizeof(*rb->t1))))
        goto fail;
    rb->nb_workers = j2ki_pool_threads(rb->pool);
    if (rb->nb_try) {
        if (!(rb->band_dmax = malloc(rb->plan->nb_bands ? rb->plan->nb_bands : 1)) ||
            !(rb->hist = malloc((size_t)rb->nb_workers * J2KI_QPRED_HIST * sizeof(*rb->hist))))
            goto fail;
        for (uint32_t i = 0; i < rb->plan->nb_bands; i++)
            rb->band_dmax[i] = (uint8_t)j2ki_quant_band_try_max(&rb->plan->bands[i], cp);
    }
    for (int w = 0; w < rb->nb_workers; w++)
        if (!(rb->dwt_scratch[w] = malloc(j2ki_dwt_scratch_size(max_w, max_h))) ||
            !(rb->t1[w] = j2ki_t1_alloc(rb->plan->max_cblk_w, rb->plan->max_cblk_h)))
            goto fail;
    if (cp->cblk_style & J2KI_CBLK_HT) {
        if (!(rb->ht = calloc((size_t)rb->nb_workers, sizeof(*rb->ht))))
            goto fail;
        for (int w = 0; w < rb->nb_workers; w++)
            if (!(rb->ht[w] = j2ki_ht_alloc()))
                goto fail;
        if (!(rb->ht_p = calloc(rb->plan->nb_cblks ? rb->plan->nb_cblks : 1, 1)) ||
            !(rb->ht_work = malloc(j2ki_ht_planes_scratch_size(rb->plan))))
            goto fail;
    }
    if (j2ki_t1s_enabled(cp)) {
        size_t sz = j2ki_t1s_pool_scratch_size(rb->plan, rb->nb_workers);
        for (int d = 1; d <= rb->nb_try; d++)
            if (j2ki_t1s_pool_scratch_size(rb->plan_try[d], rb->nb_workers) > sz)
                sz = j2ki_t1s_pool_scratch_size(rb->plan_try[d], rb->nb_workers);
        if (!(rb->stop_lim = calloc(rb->plan->nb_cblks ? rb->plan->nb_cblks : 1, sizeof(*rb->stop_lim))) ||
            !(rb->stop_work = malloc(sz)))
            goto fail;
    }
    if (!(rb->slots = calloc((size_t)nb_slots, sizeof(*rb->slots))))
        goto fail;
    for (int i = 0; i < nb_slots; i++)
        if (!(rb->slots[i].out = malloc(max_out)))
            goto fail;
    if (j2ki_rc_pool_scratch_size(rb->nb_workers) &&
        !(rb->rc_scratch = malloc(j2ki_rc_pool_scratch_size(rb->nb_workers))))
        goto fail;
    if ((ret = j2ki_t2_sizer_new(&rb->sizer, rb->plan)) < 0)
        goto fail;
    j2ki_t2_sizer_set_pool(rb->sizer, rb->pool);
    for (int d = 1; d <= rb->nb_try; d++) {
        if ((ret = j2ki_t2_sizer_new(&rb->sizer_try[d], rb->plan_try[d])) < 0)
            goto fail;
        j2ki_t2_sizer_set_pool(rb->sizer_try[d], rb->pool);
    }
    if (cp->threads && rb->nb_workers < cp->threads)
        j2ki_log(log, J2KC_LOG_WARNING, "reference backend: %d of the %d threads asked for could be started",
                 rb->nb_workers, cp->threads);
    j2ki_log(log, J2KC_LOG_VERBOSE, "reference backend: %d thread%s", rb->nb_workers,
             rb->nb_workers > 1 ? "s" : "");
    *priv = rb;
    return 0;
fail:
    ref_uninit(rb);
    return ret;
}

/* ---- jobs over tile-components ----
 * A job whose items are chunks of every tile-component (tile t, component c: index
 * t * nb_comps + c) fills rb->first with the prefix sums of the chunk counts; an item finds its
 * tile-component by binary search. */

typedef struct TcJob {
    RefBackend      *rb;
    const J2kcFrame *f;        /* load job */
    int              d;        /* DWT jobs: the level */
} TcJob;

/** Prefix sums of count(tc) into rb->first; returns the job's number of items. */
static uint32_t tc_items(RefBackend *rb, uint32_t (*count)(const RefBackend *, const J2kiTileComp *, int, int), int arg)
{
    const int nc = rb->cp->img.nb_comps;
    uint32_t n = 0, k = 0;
    for (uint32_t t = 0; t < rb->plan->nb_tiles; t++)
        for (int c = 0; c < nc; c++) {
            rb->first[k++] = n;
            n += count(rb, &rb->plan->tiles[t].comps[c], c, arg);
        }
    rb->first[k] = n;
    return n;
}

/** The tile-component of item i (the last k with first[k] <= i) and the chunk's number in it. */
static uint32_t tc_find(const RefBackend *rb, uint32_t i, uint32_t *chunk)
{
    uint32_t lo = 0, hi = rb->plan->nb_tiles * (uint32_t)rb->cp->img.nb_comps;   /* first[hi] > i */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (rb->first[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    *chunk = i - rb->first[lo];
    return lo;
}

static const J2kiTileComp *tc_of(const RefBackend *rb, uint32_t k, int *c)
{
    const int nc = rb->cp->img.nb_comps;
    *c = (int)(k % (uint32_t)nc);
    return &rb->plan->tiles[k / (uint32_t)nc].comps[*c];
}

/* Load, level shift, component transform and the 9/7 path's conversion to float: components
 * 1 and 2 of an MCT tile are done by component 0's items (the MCT mixes the three). */
static uint32_t load_count(const RefBackend *rb, const J2kiTileComp *tc, int c, int arg)
{
    (void)arg;
    if (rb->cp->mct && (c == 1 || c == 2))
        return 0;
    return (uint32_t)j2ki_ceil_div(tc->h, REF_ROWS);
}

static void load_item(void *opaque, uint32_t i, int worker)
{
    const TcJob *job = opaque;
    const RefBackend *rb = job->rb;
    const J2kiCodingParams *cp = rb->cp;
    const J2kcImageDesc *img = &cp->img;
    uint32_t chunk, k = tc_find(rb, i, &chunk);
    int c0, nc;
    const J2kiTileComp *tc = tc_of(rb, k, &c0);
    const J2kiTileComp *tcs = tc - c0;          /* the tile's components */
    uint32_t y0 = chunk * REF_ROWS, y1 = y0 + REF_ROWS < tc->h ? y0 + REF_ROWS : tc->h;
    size_t off = (size_t)y0 * tc->w, n = (size_t)(y1 - y0) * tc->w;

    (void)worker;
    nc = cp->mct && c0 == 0 ? 3 : 1;
    for (int c = c0; c < c0 + nc; c++) {
        uint32_t cx0 = j2ki_ceil_div(img->x0, (uint32_t)img->dx[c]);
        uint32_t cy0 = j2ki_ceil_div(img->y0, (uint32_t)img->dy[c]);
        j2ki_load_comp_ref(rb->samples + tcs[c].buf_offset + off, tcs[c].w, y1 - y0, job->f, c,
                           tcs[c].x0 - cx0, tcs[c].y0 - cy0 + y0, img->depth[c], img->is_signed[c]);
    }
    if (nc == 3) {
        int32_t *s0 = rb->samples + tcs[0].buf_offset + off;
        int32_t *s1 = rb->samples + tcs[1].buf_offset + off;
        int32_t *s2 = rb->samples + tcs[2].buf_offset + off;
        if (cp->reversible) {
            j2ki_rct_fwd_ref(s0, s1, s2, n);
        } else {
            j2ki_int_to_float_ref(s0, n);
            j2ki_int_to_float_ref(s1, n);
            j2ki_int_to_float_ref(s2, n);
            j2ki_ict_fwd_ref((float *)s0, (float *)s1, (float *)s2, n);
        }
    } else if (!cp->reversible) {
        j2ki_int_to_float_ref(rb->samples + tc->buf_offset + off, n);
    }
}

/* DWT level d: the vertical pass's strips, then the horizontal pass's row chunks. */
static uint32_t ver_count(const RefBackend *rb, const J2kiTileComp *tc, int c, int d)
{
    uint32_t w, h;
    (void)rb; (void)c;
    j2ki_dwt_level_size(tc->x0, tc->y0, tc->x1, tc->y1, d, &w, &h);
    return w && h ? (uint32_t)j2ki_ceil_div(w, J2KI_DWT_STRIP) : 0;
}

static uint32_t hor_count(const RefBackend *rb, const J2kiTileComp *tc, int c, int d)
{
    uint32_t w, h;
    (void)rb; (void)c;
    j2ki_dwt_level_size(tc->x0, tc->y0, tc->x1, tc->y1, d, &w, &h);
    return w && h ? (uint32_t)j2ki_ceil_div(h, REF_ROWS) : 0;
}

static void ver_item(void *opaque, uint32_t i, int worker)
{
    const TcJob *job = opaque;
    const RefBackend *rb = job->rb;
    uint32_t chunk, k = tc_find(rb, i, &chunk);
    int c;
    const J2kiTileComp *tc = tc_of(rb, k, &c);
    j2ki_dwt_fwd_ver_ref(rb->samples + tc->buf_offset, tc->w, tc->x0, tc->y0, tc->x1, tc->y1, job->d,
                         chunk * J2KI_DWT_STRIP, (chunk + 1) * J2KI_DWT_STRIP, rb->cp->reversible,
                         rb->dwt_scratch[worker]);
}

static void hor_item(void *opaque, uint32_t i, int worker)
{
    const TcJob *job = opaque;
    const RefBackend *rb = job->rb;
    uint32_t chunk, k = tc_find(rb, i, &chunk);
    int c;
    const J2kiTileComp *tc = tc_of(rb, k, &c);
    j2ki_dwt_fwd_hor_ref(rb->samples + tc->buf_offset, tc->w, tc->x0, tc->y0, tc->x1, tc->y1, job->d,
                         chunk * REF_ROWS, (chunk + 1) * REF_ROWS, rb->cp->reversible, rb->dwt_scratch[worker]);
}

/* Sample stages of every tile: load, MCT, DWT, all in rb->samples. */
static void encode_samples(RefBackend *rb, const J2kcFrame *f)
{
    TcJob job = { .rb = rb, .f = f };
    uint32_t n;

    n = tc_items(rb, load_count, 0);
    j2ki_pool_run(rb->pool, n, load_item, &job);
    for (int d = 1; d <= rb->cp->nb_levels && d <= J2KI_MAX_LEVELS; d++) {
        job.d = d;
        if (!(n = tc_items(rb, ver_count, d)))
            break;
        j2ki_pool_run(rb->pool, n, ver_item, &job);
        n = tc_items(rb, hor_count, d);
        j2ki_pool_run(rb->pool, n, hor_item, &job);
    }
}

/* ---- jobs over code-blocks ---- */

typedef struct CblkJob {
    RefBackend *rb;
    J2kiPlan   *plan;
    int         stopped;       /* tier-1: 0 = every block fully, 1 = the stopped ones again */
} CblkJob;

/* Quantisation (9/7) of one code-block's samples of rb->plan, in place, and with qstep_try
 * their histogram (quant.h) into the worker's. */
static void quant_item(void *opaque, uint32_t i, int worker)
{
    const CblkJob *job = opaque;
    const RefBackend *rb = job->rb;
    const J2kiPlan *plan = job->plan;
    const J2kiCblk *cb = &plan->cblks[i];
    const J2kiBand *band = &plan->bands[cb->band_idx];
    const J2kiTileComp *tc = j2ki_cblk_tc(plan, cb);
    uint32_t w = cb->x1 - cb->x0, h = cb->y1 - cb->y0;
    int32_t *q = rb->samples + j2ki_cblk_offset(plan, cb);

    if (!w || !h)
        return;
    j2ki_quant_fwd_ref(q, tc->w, w, h, band->inv_step, band->nb_mag_bits, band->frac_bits);
    if (rb->hist)
        j2ki_quant_hist_ref(q, tc->w, w, h, band->frac_bits, rb->band_dmax[cb->band_idx],
                            rb->hist + (size_t)worker * J2KI_QPRED_HIST);
}

/* qstep_try's d for the quantised frame: the workers' histograms summed (integers: the same
 * whatever the split), then j2ki_quant_predict. */
static int predict_try(RefBackend *rb)
{
    uint64_t *h = rb->hist;
    for (int w = 1; w < rb->nb_workers; w++)
        for (int k = 0; k < J2KI_QPRED_HIST; k++)
            h[k] += rb->hist[(size_t)w * J2KI_QPRED_HIST + k];
    return j2ki_quant_predict(rb->cp, h);
}

static void tier1_item(void *opaque, uint32_t i, int worker)
{
    const CblkJob *job = opaque;
    RefBackend *rb = job->rb;
    const J2kiCodingParams *cp = rb->cp;
    J2kiCblk *cb = &job->plan->cblks[i];
    const J2kiBand *band = &job->plan->bands[cb->band_idx];
    const J2kiTileComp *tc = j2ki_cblk_tc(job->plan, cb);
    const int32_t *coefs = rb->samples + j2ki_cblk_offset(job->plan, cb);
    int lim = job->stopped ? (int)rb->stop_lim[i] : 0;

    if (job->stopped && !lim) {
        rb->cblk_ret[i] = 0;
        return;
    }
    if (cp->cblk_style & J2KI_CBLK_HT) {
        rb->cblk_ret[i] = j2ki_ht_encode_cblk_ref(rb->ht[worker], coefs, tc->w, (int)(cb->x1 - cb->x0),
                                                  (int)(cb->y1 - cb->y0), band->nb_mag_bits, band->frac_bits,
                                                  rb->ht_p[i], cp->ht_refine, cb);
        return;
    }
    rb->cblk_ret[i] = j2ki_t1_encode_cblk_ref_lim(rb->t1[worker], coefs, tc->w, (int)(cb->x1 - cb->x0),
                                                  (int)(cb->y1 - cb->y0), band->orient, cp->cblk_style,
                                                  cp->bypass_start, band->nb_mag_bits, band->frac_bits, cb, lim);
}

/** Tier-1 over every code-block of the plan (or the stopped ones again); the first failure
 *  in code-block order is logged and returned. */
static int tier1_run(RefBackend *rb, J2kiPlan *plan, int stopped)
{
    CblkJob job = { .rb = rb, .plan = plan, .stopped = stopped };
    j2ki_pool_run(rb->pool, plan->nb_cblks, tier1_item, &job);
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        if (rb->cblk_ret[i] < 0) {
            const J2kiBand *band = &plan->bands[plan->cblks[i].band_idx];
            j2ki_log(&rb->log, J2KC_LOG_ERROR,
                     "tier-1 failed on code-block %u (tile %d comp %d res %d band %d): %s",
                     i, band->tile, band->comp, band->res, band->orient, j2kc_strerror(rb->cblk_ret[i]));
            return rb->cblk_ret[i];
        }
    return 0;
}

/* Every code-block fully, then, with the early stop (t1_stop.h), the decisions the CUDA coder
 * takes between its chunks, replayed on the causal estimates, and the stopped blocks again up
 * to their limit. */
static int tier1_all(RefBackend *rb, J2kiPlan *plan)
{
    int ret;
    if (rb->ht) {
        /* the HT set's plane per code-block; the tried plans share the geometry */
        if (plan->nb_cblks != rb->plan->nb_cblks)
            return J2KC_ERR_INTERNAL;
        j2ki_ht_planes_ref(plan, rb->samples, rb->pool, rb->ht_work, rb->ht_p);
    }
    if ((ret = tier1_run(rb, plan, 0)) < 0)
        return ret;
    if (!rb->stop_lim)
        return 0;
    if ((ret = j2ki_t1s_plan_pool(plan, rb->cp->frame_bytes, rb->stop_lim, rb->stop_work, rb->pool)) < 0)
        return ret;
    {
        /* what the stop saves (the CUDA coder's work; here the passes are coded anyway) */
        uint64_t passes = 0, skipped = 0;
        uint32_t stopped = 0;
        for (uint32_t i = 0; i < plan->nb_cblks; i++) {
            passes += (uint64_t)plan->cblks[i].nb_passes;
            if (rb->stop_lim[i]) {
                stopped++;
                skipped += (uint64_t)plan->cblks[i].nb_passes - rb->stop_lim[i];
            }
        }
        j2ki_log(&rb->log, J2KC_LOG_DEBUG, "t1_stop: %u of %u code-blocks stop early, %llu of %llu passes not coded",
                 stopped, plan->nb_cblks, (unsigned long long)skipped, (unsigned long long)passes);
    }
    return tier1_run(rb, plan, 1);
}

static int ref_submit(void *priv, int slot_idx, const J2kcFrame *f)
{
    RefBackend *rb = priv;
    RefSlot *slot = &rb->slots[slot_idx];
    double t0 = now_ms(), t1, t2, t3;
    int64_t n;
    int d = 0;

    memset(&slot->stats, 0, sizeof(slot->stats));
    encode_samples(rb, f);
    if (!rb->cp->reversible) {
        CblkJob job = { .rb = rb, .plan = rb->plan };
        if (rb->hist)
            memset(rb->hist, 0, (size_t)rb->nb_workers * J2KI_QPRED_HIST * sizeof(*rb->hist));
        j2ki_pool_run(rb->pool, rb->plan->nb_cblks, quant_item, &job);
        if (rb->hist) {
            d = predict_try(rb);
            j2ki_quant_predict_log(&rb->log, rb->cp, rb->hist, d);
        }
    }
    t1 = now_ms();
    slot->stats.ms_mct_dwt = t1 - t0;
    /* qstep_try: the predicted steps first; kept when the frame fills its budget with them */
    for (int pass = d ? 0 : 1; pass < 2; pass++) {
        J2kiPlan *plan = pass ? rb->plan : rb->plan_try[d];
        t1 = now_ms();
        slot->status = tier1_all(rb, plan);
        t2 = now_ms();
        if (slot->status >= 0) {
            n = j2ki_finish_codestream_with(plan, &rb->log, slot->out, rb->max_out, j2ki_t2_sizer_size,
                                            pass ? rb->sizer : rb->sizer_try[d], rb->pool, rb->rc_scratch);
            if (n < 0)
                slot->status = (int)n;
            else
                slot->len = (size_t)n;
        }
        t3 = now_ms();
        slot->stats.ms_t1 += t2 - t1;
        slot->stats.ms_rc += t3 - t2;   /* rate control and tier-2 together */
        if (slot->status < 0 || pass || j2ki_rc_mask_fills(j2ki_rc_hull_mask(plan), rb->cp->img.nb_comps))
            break;
        slot->stats.nb_recoded++;
        j2ki_log(&rb->log, J2KC_LOG_DEBUG, "qstep_try: the frame does not fill its budget with %d bit-plane%s "
                 "more: coded again with qstep_rate's steps", d, d > 1 ? "s" : "");
    }
    slot->stats.ms_total = t3 - t0;
    return 0;   /* the frame's own status is reported by wait, in order */
}

static int ref_wait(void *priv, int slot_idx, int block, const uint8_t **data, size_t *size)
{
    RefBackend *rb = priv;
    RefSlot *slot = &rb->slots[slot_idx];
    (void)block;
    if (slot->status < 0)
        return slot->status;
    *data = slot->out;
    *size = slot->len;
    return 0;
}

static void ref_stats(void *priv, int slot_idx, J2kcStats *st)
{
    RefBackend *rb = priv;
    *st = rb->slots[slot_idx].stats;
}

const J2kiBackendOps j2ki_backend_ref = {
    .name   = "ref",
    .init   = ref_init,
    .submit = ref_submit,
    .wait   = ref_wait,
    .stats  = ref_stats,
    .uninit = ref_uninit,
};
