/*
 * The CUDA backend's frame slots: their states (SLOT_IDLE -> SLOT_QUEUED by submit ->
 * SLOT_DONE by the slot's worker -> SLOT_IDLE by wait) and the transitions, under each slot's
 * lock, with the entry points that drive them (submit, wait, stats) and what the worker does
 * once the frame's last event has fired (timings, the host checks of finish_slot).
 */
#include "cuda/backend_cuda.h"

namespace j2ki_cuda {

/** The slots' states under their locks. */
void slot_set_state(CudaSlot *s, int state, int err)
{
    pthread_mutex_lock(&s->mtx);
    s->state = state;
    s->cs_err = err;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->mtx);
}

static int slot_state(CudaSlot *s)
{
    int st;
    pthread_mutex_lock(&s->mtx);
    st = s->state;
    pthread_mutex_unlock(&s->mtx);
    return st;
}

/** The other slots whose device work is queued (their decide grids may run beside this one's). */
int busy_slots(CudaBackend *b, const CudaSlot *self)
{
    int n = 0;
    for (int i = 0; i < b->nb_slots; i++) {
        CudaSlot *o = &b->slots[i];
        if (o != self)
            n += slot_state(o) == SLOT_QUEUED;
    }
    return n;
}

int cuda_submit(void *priv, int slot, const J2kcFrame *f)
{
    CudaBackend *b = (CudaBackend *)priv;
    CudaSlot *s = &b->slots[slot];
    int ret;
    /* the slot first (slot_preparer): a slot that could not be made answers its own error
     * (its making stores none in broken, which only the frame path sets) */
    if ((ret = slot_wait_prepared(b, slot)) < 0)
        return ret;
    if (__atomic_load_n(&b->broken, __ATOMIC_SEQ_CST) < 0)
        return J2KC_ERR_BROKEN;
    pthread_mutex_lock(&s->mtx);
    /* the front end waits before reusing a slot */
    ret = s->state == SLOT_QUEUED ? J2KC_ERR_INTERNAL : 0;
    s->state = SLOT_IDLE;
    pthread_mutex_unlock(&s->mtx);
    if (ret < 0)
        return ret;
    if ((ret = enter(b)) < 0)
        return ret;
    /* the slot's graphs on this thread, inside the application's call (cuda_graph.cu) */
    if ((ret = slot_graphs(b, s)) == 0)
        ret = enqueue_frame(b, s, f);
    leave(b);
    if (ret < 0)
        return ret;
    slot_set_state(s, SLOT_QUEUED, 0);
    return 0;
}

static float ev_ms(CudaBackend *b, CudaSlot *s, int e0, int e1)
{
    float ms = 0.0f;
    if (J2KI_CUFN(cuEventElapsedTime)(&ms, s->ev[e0], s->ev[e1]) != CUDA_SUCCESS)
        ms = 0.0f;
    return ms;
}

/** Device stage times of the slot's finished frame (inside enter/leave: events are CUDA calls);
 *  again: after its second coding (qstep_try), whose stage times are added. */
void slot_timings(CudaBackend *b, CudaSlot *s, int again)
{
    if (again) {
        s->stats.ms_t1 += ev_ms(b, s, EV_AGAIN, EV_T1);
        s->stats.ms_rc += ev_ms(b, s, EV_T1, EV_RC);
        s->stats.ms_t2 += ev_ms(b, s, EV_RC, EV_DONE);
        s->stats.ms_total = ev_ms(b, s, EV_START, EV_DONE);
        s->stats.nb_recoded = 1;
        return;
    }
    memset(&s->stats, 0, sizeof(s->stats));
    s->stats.ms_upload = ev_ms(b, s, EV_START, EV_UPLOADED);
    s->stats.ms_mct_dwt = ev_ms(b, s, EV_UPLOADED, EV_DWT);
    s->stats.ms_t1 = ev_ms(b, s, EV_DWT, EV_T1);
    s->stats.ms_rc = ev_ms(b, s, EV_T1, EV_RC);
    s->stats.ms_t2 = ev_ms(b, s, EV_RC, EV_DONE);        /* tier-2 + download */
    s->stats.ms_total = ev_ms(b, s, EV_START, EV_DONE);
    s->stats.device_bytes_per_slot = s->device_bytes;
}

/** The device wrote the codestream: take its length (fetching the bytes when no budget bounded
 *  the copy made in the stream), then the host-side checks j2ki_finish_codestream makes. */
static int finish_slot_gpu(CudaBackend *b, CudaSlot *s)
{
    const J2kiCodingParams *cp = b->cp;
    const J2kiT2CudaResult *r = s->h_t2res;
    int ret;
    if (r->err < 0) {
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA rate control / tier-2: %s (reason %d, layer %d)",
                 j2kc_strerror(r->err), r->rc_why, r->rc_why_arg);
        return r->err;
    }
    if (r->len > b->max_out)
        return J2KC_ERR_INTERNAL;
    if (cp->rc_mode != J2KI_RC_BYTES) {
        if ((ret = enter(b)) < 0)
            return ret;
        ret = CUDRV(cuMemcpyDtoHAsync, s->h_cs, j2ki_dptr(s->d_cs), r->len, s->st);
        if (ret == 0)
            ret = CUDRV(cuStreamSynchronize, s->st);    /* a short copy: spinning */
        leave(b);
        if (ret < 0)
            return ret;
    }
    if ((ret = j2ki_finish_checks(cp, s->h_cs, (size_t)r->len, &b->log)) < 0)
        return ret;
    if (cp->rc_mode == J2KI_RC_BYTES)
        j2ki_log(&b->log, J2KC_LOG_DEBUG, "CUDA rate control: %llu bytes for a budget of %llu, %d thresholds "
                 "sized in %d rounds", (unsigned long long)r->len, (unsigned long long)cp->frame_bytes,
                 (int)r->nb_probes, (int)r->nb_rounds);
    s->cs = s->h_cs;
    s->cs_len = (size_t)r->len;
    return 0;
}

/** qstep_try: whether the frame coded with plan_try[s->d] filled its budget (j2ki_rc_mask_fills). */
int slot_fills(CudaBackend *b, CudaSlot *s)
{
    return j2ki_rc_mask_fills(s->h_t2res->hull_mask, b->cp->img.nb_comps);
}

/** Host part of a finished slot: checks tier-1's results, then takes the codestream. */
int finish_slot(CudaBackend *b, CudaSlot *s)
{
    const J2kiPlan *plan = b->plan;

    if (*s->h_flag) {
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            if (s->h_res[i].err) {
                j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA tier-1: code-block %u failed (%s)", i,
                         j2kc_strerror(s->h_res[i].err));
                return s->h_res[i].err == J2KC_ERR_BUFSIZE ? J2KC_ERR_INTERNAL : s->h_res[i].err;
            }
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA tier-1: error flag set without a failing code-block");
        return J2KC_ERR_INTERNAL;
    }
    return finish_slot_gpu(b, s);
}

int cuda_wait(void *priv, int slot, int block, const uint8_t **data, size_t *size)
{
    CudaBackend *b = (CudaBackend *)priv;
    CudaSlot *s = &b->slots[slot];
    int ret;

    pthread_mutex_lock(&s->mtx);
    if (s->state == SLOT_IDLE) {
        pthread_mutex_unlock(&s->mtx);
        return J2KC_ERR_EOF;
    }
    if (!block && s->state != SLOT_DONE) {
        pthread_mutex_unlock(&s->mtx);
        return J2KC_ERR_AGAIN;
    }
    while (s->state != SLOT_DONE)
        pthread_cond_wait(&s->cond, &s->mtx);
    ret = s->cs_err;
    pthread_mutex_unlock(&s->mtx);
    if (ret < 0)
        return ret;
    *data = s->cs;
    *size = s->cs_len;
    return 0;
}

void cuda_stats(void *priv, int slot, J2kcStats *st)
{
    CudaBackend *b = (CudaBackend *)priv;
    *st = b->slots[slot].stats;
}

}  // namespace j2ki_cuda
