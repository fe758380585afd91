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
    J2kiCodingParams cp;            /* its copy of the parameters (gpu = device) */
} MultiChild;

typedef struct Multi {
    const J2kiBackendOps *ops;      /* the children's */
    const J2kiLog *log;
    MultiChild ch[J2KI_MAX_GPUS];
    int      nb_children, slots_per_child, fail_device;
    int     *slot_child, *slot_cslot;   /* per ring slot: the child and its slot */
} Multi;

static void multi_uninit(void *priv)
{
    Multi *m = priv;
    if (!m)
        return;
    for (int i = 0; i < m->nb_children; i++)
        if (m->ch[i].priv)
            m->ops->uninit(m->ch[i].priv);
    free(m->slot_child);
    free(m->slot_cslot);
    free(m);
}

int j2ki_multi_init(void **priv, const J2kiBackendOps *child, const J2kiCodingParams *cp,
                    const int *devices, int n, const J2kiPlan *plan, const J2kiLog *log,
                    int slots_per_child, size_t max_out, int fail_device)
{
    Multi *m;
    int ret, nb_slots = n * slots_per_child;
    *priv = NULL;
    if (n < 2 || n > J2KI_MAX_GPUS || slots_per_child < 1)
        return J2KC_ERR_INVAL;
    if (!(m = calloc(1, sizeof(*m))))
        return J2KC_ERR_NOMEM;
    m->ops = child;
    m->log = log;
    m->slots_per_child = slots_per_child;
    m->fail_device = fail_device;
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

static int multi_submit(void *priv, int slot, const J2kcFrame *f)
{
    Multi *m = priv;
    MultiChild *best = NULL;
    for (int i = 0; i < m->nb_children; i++) {
        MultiChild *c = &m->ch[i];
        uint64_t busy = c->submitted - c->received;
        if (busy < (uint64_t)m->slots_per_child && (!best || busy < best->submitted - best->received))
            best = c;
    }
    if (!best)      /* the ring has nb_children * slots_per_child slots: cannot happen */
        return J2KC_ERR_INTERNAL;
    int cslot = (int)(best->submitted % (uint64_t)m->slots_per_child);
    int ret = m->ops->submit(best->priv, cslot, f);
    if (ret < 0) {
        j2ki_log(m->log, J2KC_LOG_ERROR, "gpu %d: frame not submitted: %s", best->device,
                 j2kc_strerror(ret));
        return ret;
    }
    best->submitted++;
    m->slot_child[slot] = (int)(best - m->ch);
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
