/*
 * The encoder front end: validates and plans once, picks the backend, runs the ring of frame
 * slots (frame k lives in slot k % nb_slots, so frames finish in submission order), wraps JP2
 * when asked, and hands codestreams back; the version string. (Logging and the error strings:
 * log.c; the codestream finish both backends share: finish.c.)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_multi.h"
#include "core/clock.h"
#include "core/markers.h"
#include "core/j2ki.h"
#include "core/params.h"
#include "core/plan.h"

struct J2kcEncoder {
    J2kiCodingParams cp;
    J2kiLog          log;
    J2kiPlan        *plan;          /* geometry for sizing and JP2 boxes (backends own their own) */
    const J2kiBackendOps *ops;
    const J2kiBackendOps *child_ops;    /* gpu list: the devices' backend (ops: multi) */
    void            *priv;
    int              nb_slots;
    uint64_t         nb_submitted, nb_received;
    uint64_t         nb_frames_ok;  /* codestreams handed back (j2kc_encoder_device_frames) */
    uint64_t        *tags;          /* per slot */
    uint8_t         *jp2_buf;       /* JP2 wrapping of the last received codestream */
    size_t           max_cs, max_out;
    int              broken;
#if J2KC_HAVE_CUDA
    J2kiCudaWarm    *warm;          /* the driver and context made ahead (creation only) */
#endif
};

/* ------------------------------------------------------------------------------------- */

const char *j2kc_version(void) { return "0.1.0"; }

/* ------------------------------------------------------------------------------------- */

/* Upper bound of a codestream's size for this plan with every pass kept: code-block data
 * capacities plus, per code-block and layer, a generous packet-header share, plus per
 * precinct/layer SOP+EPH and empty-packet bytes, tile-part headers and the main header. */
static size_t codestream_bound(const J2kiPlan *plan)
{
    const J2kiCodingParams *cp = plan->cp;
    uint64_t n = (uint64_t)j2ki_main_header_size(plan) + 2;
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        n += plan->cblks[i].data_cap + 8 + (uint64_t)(cp->nb_layers) * 8 +
             (uint64_t)plan->cblks[i].max_passes * 5;
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < cp->img.nb_comps; c++) {
            const J2kiTileComp *tc = &plan->tiles[t].comps[c];
            for (int r = 0; r < tc->nb_res; r++)
                n += (uint64_t)tc->res[r].nb_prec_w * tc->res[r].nb_prec_h * cp->nb_layers * 16 + 64;
        }
    n += (uint64_t)plan->nb_tiles * 64;
    return n > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)n;
}

/* gpu=all or a list (cp->nb_gpus != 0) for the backend picked (enc->ops): the devices of a
 * multi-device encoder into devs, their number into *n (0: one device, cp->gpu; a one-device
 * result is made that), and into *ctx_dev the device of the caller's context (-1: none; with
 * stand-ins, the last listed). The reference backend has no devices (the list is ignored)
 * unless J2KC_MULTI_STANDIN gives it stand-ins. Indices past the devices present are refused;
 * a one-device result with the caller's context is that context's device. */
static int resolve_devices(J2kcEncoder *enc, int *devs, int *n, int *ctx_dev)
{
    J2kiCodingParams *cp = &enc->cp;
    int count = 0;
    *n = 0;
    *ctx_dev = -1;
    if (cp->nb_gpus == 0)
        return 0;
    if (cp->hooks.multi_standin > 0) {
        enc->ops = &j2ki_backend_ref;
        count = cp->hooks.multi_standin;
        j2ki_log(&enc->log, J2KC_LOG_INFO, "J2KC_MULTI_STANDIN: %d reference backends stand in "
                 "for CUDA devices", count);
    } else if (enc->ops == &j2ki_backend_ref) {
        j2ki_log(&enc->log, J2KC_LOG_VERBOSE, "gpu: the reference backend uses no device");
        return 0;
    } else {
#if J2KC_HAVE_CUDA
        count = j2ki_cuda_device_count(&enc->log, 0);
        if (count < 0)
            count = 0;
        if (count > 0 && cp->cu_ctx) {
            int ret = j2ki_cuda_ctx_device(&enc->log, cp->cu_ctx);
            if (ret < 0)
                return ret;
            *ctx_dev = ret;
        }
#endif
    }
    if (count == 0)
        return 0;       /* no driver or no device: the backend's own error says which */
    if (cp->nb_gpus == J2KI_GPUS_ALL) {
        *n = count < J2KI_MAX_GPUS ? count : J2KI_MAX_GPUS;
        for (int i = 0; i < *n; i++)
            devs[i] = i;
    } else {
        for (int i = 0; i < cp->nb_gpus; i++)
            if (cp->gpus[i] >= count) {
                j2ki_log(&enc->log, J2KC_LOG_ERROR, "gpu: device %d does not exist (%d CUDA "
                         "device%s: 0..%d)", cp->gpus[i], count, count == 1 ? "" : "s", count - 1);
                return J2KC_ERR_NODEV;
            }
        *n = cp->nb_gpus;
        memcpy(devs, cp->gpus, sizeof(*devs) * (size_t)*n);
    }
    if (cp->hooks.multi_standin > 0 && cp->cu_ctx)
        *ctx_dev = devs[*n - 1];
    if (*n == 1) {
        if (cp->cu_ctx && *ctx_dev != devs[0]) {
            j2ki_log(&enc->log, J2KC_LOG_ERROR, "gpu: the only device is %d, but the caller's CUDA "
                     "context (j2kc_params_set_cuda) is on device %d", devs[0], *ctx_dev);
            return J2KC_ERR_INVAL;
        }
        cp->gpu = devs[0];
        *n = 0;
    } else if (cp->cu_ctx) {
        int listed = 0;
        for (int i = 0; i < *n; i++)
            listed |= devs[i] == *ctx_dev;
        j2ki_log(&enc->log, J2KC_LOG_VERBOSE, "gpu: the caller's CUDA context is on device %d%s",
                 *ctx_dev, listed ? ", which codes in it" : ", not listed: its frames are copied to "
                 "the listed devices");
    }
    return 0;
}

int j2kc_encoder_create(J2kcEncoder **out, const J2kcImageDesc *img, const J2kcParams *p)
{
    int devs[J2KI_MAX_GPUS], nb_devs = 0, ctx_dev = -1;
    J2kcEncoder *enc;
    int ret;
    /* creation's steps, for the verbose log: parameters and plan, waiting for the CUDA
     * driver (backend=auto's device count), the backend */
    const double t0 = j2ki_now_ms();
    double ms_plan, t_backend;
#if J2KC_HAVE_CUDA
    double ms_driver = 0.0;
#endif

    if (!out)
        return J2KC_ERR_INVAL;
    *out = NULL;
    if (!img || !p)
        return J2KC_ERR_INVAL;
    enc = calloc(1, sizeof(*enc));
    if (!enc)
        return J2KC_ERR_NOMEM;
    j2ki_params_log(p, &enc->log);

    if ((ret = j2ki_params_finalize(&enc->cp, p, img, &enc->log)) < 0)
        goto fail;
#if J2KC_HAVE_CUDA
    /* the driver and the device's context are made on a thread of their own while this one
     * plans (cuda_warm.cu); a caller's context is made already */
    if (enc->cp.backend != J2KI_BACKEND_REF && !enc->cp.cu_ctx)
        enc->warm = j2ki_cuda_warm_start(enc->cp.gpu);
#endif
    j2ki_hooks_read(&enc->cp.hooks);
    if ((ret = j2ki_plan_create(&enc->plan, &enc->cp, &enc->log)) < 0)
        goto fail;

    if (enc->cp.tlm && enc->plan->nb_tile_parts > 256u * J2KI_TLM_MAX_ENTRIES) {
        /* Ztlm is 8 bits: at most 256 TLM segments */
        j2ki_log(&enc->log, J2KC_LOG_ERROR, "tlm=1 with %u tile-parts: TLM can index at most %u",
                 enc->plan->nb_tile_parts, 256u * J2KI_TLM_MAX_ENTRIES);
        ret = J2KC_ERR_UNSUPPORTED;
        goto fail;
    }
    enc->max_cs = codestream_bound(enc->plan);
    if (enc->cp.rc_mode == J2KI_RC_BYTES && enc->cp.frame_bytes < enc->max_cs)
        enc->max_cs = (size_t)enc->cp.frame_bytes;
    {
        int64_t hdr = j2ki_main_header_size(enc->plan);
        if (enc->cp.rc_mode == J2KI_RC_BYTES && (uint64_t)hdr + 2 > enc->cp.frame_bytes) {
            j2ki_log(&enc->log, J2KC_LOG_ERROR,
                     "byte budget %llu is smaller than the main header and EOC (%lld bytes)",
                     (unsigned long long)enc->cp.frame_bytes, (long long)hdr + 2);
            ret = J2KC_ERR_BUFSIZE;
            goto fail;
        }
    }
    enc->max_out = enc->max_cs + (enc->cp.jp2 ? j2ki_jp2_overhead(enc->plan) : 0);

    ms_plan = j2ki_now_ms() - t0;

    /* backend */
#if J2KC_HAVE_CUDA
    if (enc->cp.backend != J2KI_BACKEND_REF)
        j2ki_cuda_connections(&enc->log, enc->cp.async_depth, enc->cp.cu_ctx != NULL);
#endif
    switch (enc->cp.backend) {
    case J2KI_BACKEND_REF:
        enc->ops = &j2ki_backend_ref;
        break;
    case J2KI_BACKEND_CUDA:
#if J2KC_HAVE_CUDA
        enc->ops = &j2ki_backend_cuda;
#else
        j2ki_log(&enc->log, J2KC_LOG_ERROR,
                 "backend=cuda: this library was built without CUDA (configure found no nvcc or had --disable-cuda)");
        ret = J2KC_ERR_NOTBUILT;
        goto fail;
#endif
        break;
    default:
#if J2KC_HAVE_CUDA
        ms_driver = j2ki_cuda_warm_driver(enc->warm);
        if (j2ki_cuda_device_count(&enc->log, 0) > 0) {
            enc->ops = &j2ki_backend_cuda;
        } else {
            j2ki_log(&enc->log, J2KC_LOG_WARNING, "no usable CUDA device: encoding on the reference (CPU) backend");
            enc->ops = &j2ki_backend_ref;
        }
#else
        j2ki_log(&enc->log, J2KC_LOG_INFO, "built without CUDA: encoding on the reference (CPU) backend");
        enc->ops = &j2ki_backend_ref;
#endif
        break;
    }
    if ((ret = resolve_devices(enc, devs, &nb_devs, &ctx_dev)) < 0)
        goto fail;
    enc->nb_slots = enc->cp.async_depth * (nb_devs ? nb_devs : 1);
    enc->tags = calloc((size_t)enc->nb_slots, sizeof(*enc->tags));
    if (!enc->tags) {
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    if (enc->cp.jp2 && !(enc->jp2_buf = malloc(enc->max_out))) {
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    t_backend = j2ki_now_ms();
    if (nb_devs) {
        /* one backend per device, async_depth slots each (backend_multi.h) */
        const J2kiMultiSetup su = {
            .devices = devs, .nb_devices = nb_devs, .slots_per_child = enc->cp.async_depth,
            .ctx_device = ctx_dev, .fail_device = enc->cp.hooks.multi_fail,
            .standin = enc->cp.hooks.multi_standin > 0,
        };
        enc->child_ops = enc->ops;
        enc->ops = &j2ki_backend_multi;
        ret = j2ki_multi_init(&enc->priv, enc->child_ops, &enc->cp, &su, enc->plan, &enc->log,
                              enc->max_cs);
    } else
#if J2KC_HAVE_CUDA
    if (enc->ops == &j2ki_backend_cuda)
        ret = j2ki_cuda_init_warm(&enc->priv, &enc->cp, enc->plan, &enc->log, enc->nb_slots, enc->max_cs,
                                  &enc->warm);
    else
#endif
        ret = enc->ops->init(&enc->priv, &enc->cp, enc->plan, &enc->log, enc->nb_slots, enc->max_cs);
#if J2KC_HAVE_CUDA
    j2ki_cuda_warm_join(&enc->warm, NULL);  /* not joined by a backend: the reference, or a failed CUDA init */
    if (ret < 0 && enc->cp.backend == J2KI_BACKEND_AUTO && enc->ops == &j2ki_backend_cuda &&
        ret != J2KC_ERR_NOMEM) {
        j2ki_log(&enc->log, J2KC_LOG_WARNING, "CUDA backend unavailable (%s): encoding on the reference (CPU) backend",
                 j2kc_strerror(ret));
        enc->priv = NULL;
        enc->ops = &j2ki_backend_ref;
        ret = enc->ops->init(&enc->priv, &enc->cp, enc->plan, &enc->log, enc->nb_slots, enc->max_cs);
    }
#endif
    if (ret < 0) {
        enc->priv = NULL;
        goto fail;
    }
    j2ki_log(&enc->log, J2KC_LOG_VERBOSE, "encoder ready: backend %s%s, %u tiles, %u code-blocks, %d slot(s)",
             j2kc_encoder_backend(enc), nb_devs ? " on several devices" : "", enc->plan->nb_tiles, enc->plan->nb_cblks, enc->nb_slots);
    {
        char drv[64] = "";
#if J2KC_HAVE_CUDA
        if (enc->cp.backend == J2KI_BACKEND_AUTO)
            snprintf(drv, sizeof(drv), ", waiting for the CUDA driver %.1f", ms_driver);
#endif
        j2ki_log(&enc->log, J2KC_LOG_VERBOSE, "encoder created in %.1f ms: parameters and plan %.1f%s, the %s "
                 "backend %.1f", j2ki_now_ms() - t0, ms_plan, drv, enc->ops->name, j2ki_now_ms() - t_backend);
    }
    *out = enc;
    return 0;
fail:
    j2kc_encoder_free(&enc);
    return ret;
}

void j2kc_encoder_free(J2kcEncoder **penc)
{
    J2kcEncoder *enc;
    if (!penc || !*penc)
        return;
    enc = *penc;
#if J2KC_HAVE_CUDA
    j2ki_cuda_warm_join(&enc->warm, NULL);
#endif
    if (enc->ops && enc->priv)
        enc->ops->uninit(enc->priv);
    j2ki_plan_free(&enc->plan);
    free(enc->tags);
    free(enc->jp2_buf);
    free(enc);
    *penc = NULL;
}

int j2kc_encoder_submit(J2kcEncoder *enc, const J2kcFrame *f)
{
    int ret;
    if (!enc || !f)
        return J2KC_ERR_INVAL;
    if (enc->broken)
        return J2KC_ERR_BROKEN;
    if (enc->nb_submitted - enc->nb_received >= (uint64_t)enc->nb_slots)
        return J2KC_ERR_AGAIN;
    for (int c = 0; c < enc->cp.img.nb_comps; c++)
        if (!f->data[c] || (f->step[c] < 0) || f->shift[c] < 0 || f->shift[c] > 15) {
            j2ki_log(&enc->log, J2KC_LOG_ERROR, "frame: component %d has no data or a bad step/shift", c);
            return J2KC_ERR_INVAL;
        }
    if (f->mem == J2KC_MEM_CUDA && !(enc->cp.hooks.multi_standin > 0 && enc->child_ops) &&
        strcmp(j2kc_encoder_backend(enc), "cuda")) {
        j2ki_log(&enc->log, J2KC_LOG_ERROR, "frame in CUDA memory given to the %s backend",
                 j2kc_encoder_backend(enc));
        return J2KC_ERR_INVAL;
    }
    if (f->mem == J2KC_MEM_CUDA && enc->child_ops && !f->cu_ctx && !enc->cp.cu_ctx) {
        j2ki_log(&enc->log, J2KC_LOG_ERROR, "frame in CUDA memory given to an encoder over several "
                 "devices without its context: set J2kcFrame.cu_ctx or j2kc_params_set_cuda");
        return J2KC_ERR_INVAL;
    }
    int slot = (int)(enc->nb_submitted % (uint64_t)enc->nb_slots);
    ret = enc->ops->submit(enc->priv, slot, f);
    if (ret < 0) {
        if (ret == J2KC_ERR_CUDA || ret == J2KC_ERR_INTERNAL)
            enc->broken = 1;
        return ret;
    }
    enc->tags[slot] = f->tag;
    enc->nb_submitted++;
    return 0;
}

int j2kc_encoder_receive(J2kcEncoder *enc, J2kcPacket *pkt, int block)
{
    const uint8_t *data;
    size_t size;
    int ret;
    if (!enc || !pkt)
        return J2KC_ERR_INVAL;
    if (enc->nb_received == enc->nb_submitted)
        return J2KC_ERR_EOF;
    int slot = (int)(enc->nb_received % (uint64_t)enc->nb_slots);
    ret = enc->ops->wait(enc->priv, slot, block, &data, &size);
    if (ret == J2KC_ERR_AGAIN)
        return ret;
    enc->nb_received++;   /* a failed frame is consumed too: the next receive moves on */
    if (ret < 0) {
        if (ret == J2KC_ERR_CUDA || ret == J2KC_ERR_INTERNAL)
            enc->broken = 1;
        return ret;
    }
    pkt->tag = enc->tags[slot];
    enc->nb_frames_ok++;
    if (enc->cp.jp2) {
        int64_t n = j2ki_jp2_write(enc->plan, data, size, enc->jp2_buf, enc->max_out);
        if (n < 0)
            return (int)n;
        pkt->data = enc->jp2_buf;
        pkt->size = (size_t)n;
    } else {
        pkt->data = data;
        pkt->size = size;
    }
    return 0;
}

int j2kc_encoder_in_flight(const J2kcEncoder *enc)
{
    return enc ? (int)(enc->nb_submitted - enc->nb_received) : 0;
}

int j2kc_encoder_reset(J2kcEncoder *enc)
{
    if (!enc)
        return J2KC_ERR_INVAL;
    while (enc->nb_received < enc->nb_submitted) {
        const uint8_t *d;
        size_t s;
        int slot = (int)(enc->nb_received % (uint64_t)enc->nb_slots);
        enc->ops->wait(enc->priv, slot, 1, &d, &s);
        enc->nb_received++;
    }
    return enc->broken ? J2KC_ERR_BROKEN : 0;
}

const char *j2kc_encoder_backend(const J2kcEncoder *enc)
{
    if (enc && enc->child_ops)
        return enc->child_ops->name;
    return enc && enc->ops ? enc->ops->name : "none";
}

int j2kc_encoder_device_frames(const J2kcEncoder *enc, int *devices, uint64_t *frames, int max)
{
    if (!enc || max < 0 || (max && (!devices || !frames)))
        return J2KC_ERR_INVAL;
    if (enc->child_ops)
        return j2ki_multi_frames(enc->priv, devices, frames, max);
    if (max) {
        /* the reference backend uses no device (but stand-ins do) */
        devices[0] = enc->ops == &j2ki_backend_ref && enc->cp.hooks.multi_standin <= 0 ? -1 : enc->cp.gpu;
        frames[0] = enc->nb_frames_ok;
    }
    return 1;
}

size_t j2kc_encoder_max_size(const J2kcEncoder *enc)
{
    return enc ? enc->max_out : 0;
}

int j2kc_encoder_stats(const J2kcEncoder *enc, J2kcStats *st)
{
    if (!enc || !st)
        return J2KC_ERR_INVAL;
    memset(st, 0, sizeof(*st));
    if (enc->nb_received && enc->ops->stats)
        enc->ops->stats(enc->priv, (int)((enc->nb_received - 1) % (uint64_t)enc->nb_slots), st);
    return 0;
}

int j2kc_cuda_devices(const J2kcParams *p)
{
#if J2KC_HAVE_CUDA
    J2kiLog log;
    j2ki_params_log(p, &log);
    int n = j2ki_cuda_device_count(&log, 1);
    return n == J2KC_ERR_NODEV ? 0 : n;   /* no driver: no device, as documented */
#else
    (void)p;
    return J2KC_ERR_NOTBUILT;
#endif
}
