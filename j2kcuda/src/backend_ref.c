/*
 * The reference backend: the whole pipeline on the CPU, one frame at a time, in the order
 * of the standard: sample load and DC level shift (G.1.2), component transform (Annex G),
 * DWT (Annex F), quantisation (Annex E), tier-1 (Annexes C, D), then rate control and
 * tier-2 shared with the CUDA backend (j2ki_finish_codestream). It encodes during submit;
 * wait only hands the slot's codestream back. This is the oracle the CUDA backend matches.
 * With qstep_try (quant.h) a frame is coded with the tried steps' plan first and, when it does
 * not fill its budget there, from tier-1 on again with the plan of qstep_rate's steps (the
 * quantised samples are the same integers for both).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "dwt.h"
#include "mct.h"
#include "quant.h"
#include "rc.h"
#include "rc_core.h"
#include "t1.h"
#include "t1_stop_host.h"

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
    J2kiCodingParams cp_try; /* qstep_try: cp with qstep_extra set, for plan_try */
    J2kiPlan  *plan_try;     /* qstep_try's plan (the tried steps), or NULL */
    int32_t   *samples;      /* every tile-component, plan layout; float in place on the 9/7 path */
    void      *dwt_scratch;
    J2kiT1    *t1;
    uint32_t  *stop_lim;     /* per code-block pass limit of the early stop; NULL when off */
    void      *stop_work;    /* its decisions' work area (j2ki_t1s_host_scratch_size) */
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
    if (rb->slots)
        for (int i = 0; i < rb->nb_slots; i++)
            free(rb->slots[i].out);
    free(rb->slots);
    j2ki_t1_free(&rb->t1);
    free(rb->stop_lim);
    free(rb->stop_work);
    free(rb->dwt_scratch);
    free(rb->samples);
    j2ki_plan_free(&rb->plan);
    j2ki_plan_free(&rb->plan_try);
    free(rb);
}

static int ref_init(void **priv, const J2kiCodingParams *cp, const J2kiPlan *plan_in,
                    const J2kiLog *log, int nb_slots, size_t max_out)
{
    RefBackend *rb = calloc(1, sizeof(*rb));
    int ret = J2KC_ERR_NOMEM;
    uint32_t max_w = 1, max_h = 1;

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
    if (j2ki_quant_try_params(&rb->cp_try, cp)) {
        if ((ret = j2ki_plan_create(&rb->plan_try, &rb->cp_try, log)) < 0)
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
    if (!(rb->dwt_scratch = malloc(j2ki_dwt_scratch_size(max_w, max_h))))
        goto fail;
    if (!(rb->t1 = j2ki_t1_alloc(rb->plan->max_cblk_w, rb->plan->max_cblk_h)))
        goto fail;
    if (j2ki_t1s_enabled(cp) &&
        (!(rb->stop_lim = calloc(rb->plan->nb_cblks ? rb->plan->nb_cblks : 1, sizeof(*rb->stop_lim))) ||
         !(rb->stop_work = malloc(j2ki_t1s_host_scratch_size(rb->plan) +
                                  (rb->plan_try ? j2ki_t1s_host_scratch_size(rb->plan_try) : 0)))))
        goto fail;
    if (!(rb->slots = calloc((size_t)nb_slots, sizeof(*rb->slots))))
        goto fail;
    for (int i = 0; i < nb_slots; i++)
        if (!(rb->slots[i].out = malloc(max_out)))
            goto fail;
    *priv = rb;
    return 0;
fail:
    ref_uninit(rb);
    return ret;
}

/* Sample stages for one tile: load, MCT, DWT, quantisation, all in rb->samples. */
static void encode_tile_samples(RefBackend *rb, const J2kiTile *tile, const J2kcFrame *f)
{
    const J2kiCodingParams *cp = rb->cp;
    const J2kcImageDesc *img = &cp->img;
    int nc = img->nb_comps;

    for (int c = 0; c < nc; c++) {
        const J2kiTileComp *tc = &tile->comps[c];
        uint32_t cx0 = j2ki_ceil_div(img->x0, (uint32_t)img->dx[c]);
        uint32_t cy0 = j2ki_ceil_div(img->y0, (uint32_t)img->dy[c]);
        j2ki_load_comp_ref(rb->samples + tc->buf_offset, tc->w, tc->h, f, c,
                           tc->x0 - cx0, tc->y0 - cy0, img->depth[c], img->is_signed[c]);
    }
    if (cp->mct) {
        const J2kiTileComp *t0 = &tile->comps[0];
        size_t n = (size_t)t0->w * t0->h;
        int32_t *c0 = rb->samples + t0->buf_offset;
        int32_t *c1 = rb->samples + tile->comps[1].buf_offset;
        int32_t *c2 = rb->samples + tile->comps[2].buf_offset;
        if (cp->reversible) {
            j2ki_rct_fwd_ref(c0, c1, c2, n);
        } else {
            j2ki_int_to_float_ref(c0, n);
            j2ki_int_to_float_ref(c1, n);
            j2ki_int_to_float_ref(c2, n);
            j2ki_ict_fwd_ref((float *)c0, (float *)c1, (float *)c2, n);
        }
    }
    for (int c = 0; c < nc; c++) {
        const J2kiTileComp *tc = &tile->comps[c];
        int32_t *buf = rb->samples + tc->buf_offset;
        if (cp->reversible) {
            j2ki_dwt53_fwd_ref(buf, tc->w, tc->x0, tc->y0, tc->x1, tc->y1, cp->nb_levels, rb->dwt_scratch);
        } else {
            if (!(cp->mct && c < 3))
                j2ki_int_to_float_ref(buf, (size_t)tc->w * tc->h);
            j2ki_dwt97_fwd_ref((float *)buf, tc->w, tc->x0, tc->y0, tc->x1, tc->y1, cp->nb_levels,
                               rb->dwt_scratch);
        }
    }
}

static void quantise_all(RefBackend *rb)
{
    const J2kiPlan *plan = rb->plan;
    if (rb->cp->reversible)
        return;
    for (uint32_t b = 0; b < plan->nb_bands; b++) {
        const J2kiBand *band = &plan->bands[b];
        const J2kiTileComp *tc = &plan->tiles[band->tile].comps[band->comp];
        uint32_t w = band->x1 - band->x0, h = band->y1 - band->y0;
        if (!w || !h)
            continue;
        j2ki_quant_fwd_ref(rb->samples + tc->buf_offset + (size_t)band->buf_y0 * tc->w + band->buf_x0,
                           tc->w, w, h, band->inv_step, band->nb_mag_bits, band->frac_bits);
    }
}

static int tier1_block(RefBackend *rb, J2kiPlan *plan, uint32_t i, int lim)
{
    const J2kiCodingParams *cp = rb->cp;
    J2kiCblk *cb = &plan->cblks[i];
    const J2kiBand *band = &plan->bands[cb->band_idx];
    const J2kiTileComp *tc = &plan->tiles[band->tile].comps[band->comp];
    const int32_t *coefs = rb->samples + tc->buf_offset +
                           (size_t)(band->buf_y0 + cb->y0 - band->y0) * tc->w +
                           band->buf_x0 + (cb->x0 - band->x0);
    int ret = j2ki_t1_encode_cblk_ref_lim(rb->t1, coefs, tc->w, (int)(cb->x1 - cb->x0), (int)(cb->y1 - cb->y0),
                                          band->orient, cp->cblk_style, cp->bypass_start,
                                          band->nb_mag_bits, band->frac_bits, cb, lim);
    if (ret < 0)
        j2ki_log(&rb->log, J2KC_LOG_ERROR, "tier-1 failed on code-block %u (tile %d comp %d res %d band %d): %s",
                 i, band->tile, band->comp, band->res, band->orient, j2kc_strerror(ret));
    return ret;
}

/* Every code-block fully, then, with the early stop (t1_stop.h), the decisions the CUDA coder
 * takes between its chunks, replayed on the causal estimates, and the stopped blocks again up
 * to their limit. */
static int tier1_all(RefBackend *rb, J2kiPlan *plan)
{
    int ret;
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        if ((ret = tier1_block(rb, plan, i, 0)) < 0)
            return ret;
    if (!rb->stop_lim)
        return 0;
    if ((ret = j2ki_t1s_plan_host(plan, rb->cp->frame_bytes, rb->stop_lim, rb->stop_work)) < 0)
        return ret;
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        if (rb->stop_lim[i] && (ret = tier1_block(rb, plan, i, (int)rb->stop_lim[i])) < 0)
            return ret;
    return 0;
}

static int ref_submit(void *priv, int slot_idx, const J2kcFrame *f)
{
    RefBackend *rb = priv;
    RefSlot *slot = &rb->slots[slot_idx];
    double t0 = now_ms(), t1, t2, t3;
    int64_t n;

    memset(&slot->stats, 0, sizeof(slot->stats));
    slot->stats.t1_batch = 1;
    for (uint32_t t = 0; t < rb->plan->nb_tiles; t++)
        encode_tile_samples(rb, &rb->plan->tiles[t], f);
    quantise_all(rb);
    t1 = now_ms();
    slot->stats.ms_mct_dwt = t1 - t0;
    /* qstep_try: the tried steps first; kept when the frame fills its budget with them */
    for (int pass = rb->plan_try ? 0 : 1; pass < 2; pass++) {
        J2kiPlan *plan = pass ? rb->plan : rb->plan_try;
        t1 = now_ms();
        slot->status = tier1_all(rb, plan);
        t2 = now_ms();
        if (slot->status >= 0) {
            n = j2ki_finish_codestream(plan, &rb->log, slot->out, rb->max_out);
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
                 "more: coded again with qstep_rate's steps", rb->cp_try.qstep_extra,
                 rb->cp_try.qstep_extra > 1 ? "s" : "");
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
