/* One encoder over several devices: slot mapping and dispatch (backend_multi.h). */
#include <stdlib.h>
#include <string.h>

#include "core/backend_multi.h"
#include "core/log.h"

typedef struct MultiChild {
    void    *priv;
    int      device;
    uint64_t submitted, received;   /* frames given to it, frames taken back (failed ones too) */
    uint64_t coded;                 /* frames it returned a codestream for */
    uint64_t copied;                /* CUDA frames it took from another context */
    J2kiCodingParams cp;            /* its copy of the parameters (gpu = device; the caller's
                                       context only for the device that holds it) */
} MultiChild;

typedef struct Multi {
    const J2kiBackendOps *ops;      /* the children's */
    const J2kiLog *log;
    MultiChild ch[J2KI_MAX_GPUS];
    void    *caller_ctx;            /* the caller's CUDA context, NULL: none */
    int      nb_children, slots_per_child, fail_device, standin;
    int     *slot_child, *slot_cslot;   /* per ring slot: the child and its slot */
} Multi;

static void multi_uninit(void *priv)
{
    Multi *m = priv;
    if (!m)
        return;
    for (int i = 0; i < m->nb_children; i++) {
        MultiChild *c = &m->ch[i];
        if (c->priv)
            m->ops->uninit(c->priv);
        if (c->submitted)
            j2ki_log(m->log, J2KC_LOG_VERBOSE, "gpu %d: %llu frame(s) coded, %llu of them copied "
                     "from another device", c->device, (unsigned long long)c->coded,
                     (unsigned long long)c->copied);
    }
    free(m->slot_child);
    free(m->slot_cslot);
    free(m);
}

int j2ki_multi_init(void **priv, const J2kiBackendOps *child, const J2kiCodingParams *cp,
                    const J2kiMultiSetup *su, const J2kiPlan *plan, const J2kiLog *log,
                    size_t max_out)
{
    Multi *m;
    const int n = su->nb_devices, slots_per_child = su->slots_per_child;
    const int *devices = su->devices;
    int ret, nb_slots = n * slots_per_child;
    *priv = NULL;
    if (n < 2 || n > J2KI_MAX_GPUS || slots_per_child < 1)
        return J2KC_ERR_INVAL;
    if (!(m = calloc(1, sizeof(*m))))
        return J2KC_ERR_NOMEM;
    m->ops = child;
    m->log = log;
    m->slots_per_child = slots_per_child;
    m->fail_device = su->fail_device;
    m->standin = su->standin;
    m->caller_ctx = cp->cu_ctx;
    m->slot_child = calloc((size_t)nb_slots, sizeof(int));
    m->slot_cslot = calloc((size_t)nb_slots, sizeof(int));
    if (!m->slot_child || !m->slot_cslot) {
        multi_uninit(m);
        return J2KC_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        MultiChild *c = &m->ch[i];
        c->cp = *cp;
        c->cp.gpu = devices[i];
        c->cp.nb_gpus = 0;
        if (devices[i] != su->ctx_device)
            c->cp.cu_ctx = c->cp.cu_stream = NULL;      /* its device's primary context */
        c->device = devices[i];
        ret = child->init(&c->priv, &c->cp, plan, log, slots_per_child, max_out);
        m->nb_children = i + 1;
        if (ret < 0) {
            j2ki_log(log, J2KC_LOG_ERROR, "gpu %d (device %d of %d listed): %s", devices[i],
                     i + 1, n, j2kc_strerror(ret));
            c->priv = NULL;
            multi_uninit(m);
            return ret;
        }
    }
    *priv = m;
    return 0;
}

int j2ki_multi_pick(const uint64_t *busy, const int *holds, int n, int slots)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (busy[i] >= (uint64_t)slots)
            continue;
        if (best < 0 || busy[i] < busy[best] || (busy[i] == busy[best] && holds[i] && !holds[best]))
            best = i;
    }
    return best;
}

static int multi_submit(void *priv, int slot, const J2kcFrame *f)
{
    Multi *m = priv;
    uint64_t busy[J2KI_MAX_GPUS];
    int holds[J2KI_MAX_GPUS];
    J2kcFrame local = *f;
    /* a device frame's context: its own, else the caller's */
    void *fctx = f->mem == J2KC_MEM_CUDA ? (f->cu_ctx ? f->cu_ctx : m->caller_ctx) : NULL;
    for (int i = 0; i < m->nb_children; i++) {
        busy[i] = m->ch[i].submitted - m->ch[i].received;
        holds[i] = fctx && m->ch[i].cp.cu_ctx == fctx;
    }
    int k = j2ki_multi_pick(busy, holds, m->nb_children, m->slots_per_child);
    if (k < 0)      /* the ring has nb_children * slots_per_child slots: cannot happen */
        return J2KC_ERR_INTERNAL;
    MultiChild *best = &m->ch[k];
    local.cu_ctx = fctx;        /* the child compares it with its own context */
    if (m->standin && f->mem == J2KC_MEM_CUDA)
        local.mem = J2KC_MEM_HOST;
    int cslot = (int)(best->submitted % (uint64_t)m->slots_per_child);
    int ret = m->ops->submit(best->priv, cslot, &local);
    if (ret < 0) {
        j2ki_log(m->log, J2KC_LOG_ERROR, "gpu %d: frame not submitted: %s", best->device,
                 j2kc_strerror(ret));
        return ret;
    }
    best->submitted++;
    best->copied += fctx && !holds[k];
    m->slot_child[slot] = k;
    m->slot_cslot[slot] = cslot;
    return 0;
}

static int multi_wait(void *priv, int slot, int block, const uint8_t **data, size_t *size)
{
    Multi *m = priv;
    MultiChild *c = &m->ch[m->slot_child[slot]];
    int ret = m->ops->wait(c->priv, m->slot_cslot[slot], block, data, size);
    if (ret == J2KC_ERR_AGAIN)
        return ret;
    c->received++;
    if (ret >= 0 && c->device == m->fail_device) {
        j2ki_log(m->log, J2KC_LOG_ERROR, "gpu %d: device failed (test hook J2KC_MULTI_FAIL)",
                 c->device);
        return J2KC_ERR_CUDA;
    }
    if (ret < 0) {
        j2ki_log(m->log, J2KC_LOG_ERROR, "gpu %d: frame failed: %s", c->device, j2kc_strerror(ret));
        return ret;
    }
    c->coded++;
    return ret;
}

static void multi_stats(void *priv, int slot, J2kcStats *st)
{
    Multi *m = priv;
    MultiChild *c = &m->ch[m->slot_child[slot]];
    if (m->ops->stats)
        m->ops->stats(c->priv, m->slot_cslot[slot], st);
}

int j2ki_multi_frames(void *priv, int *devices, uint64_t *frames, int max)
{
    Multi *m = priv;
    for (int i = 0; i < m->nb_children && i < max; i++) {
        devices[i] = m->ch[i].device;
        frames[i] = m->ch[i].coded;
    }
    return m->nb_children;
}

const J2kiBackendOps j2ki_backend_multi = {
    .name   = "multi",
    .init   = NULL,
    .submit = multi_submit,
    .wait   = multi_wait,
    .stats  = multi_stats,
    .uninit = multi_uninit,
};
