/*
 * The CUDA backend's upload: a host frame staged into the slot's page-locked area (stage.c,
 * the copier threads) and uploaded in parts as they are in place, a page-locked one uploaded
 * straight, a device one read in place; then the frame's launches up to quantisation.
 */
#include "cuda/backend_cuda.h"

namespace j2ki_cuda {

/** Starts the staging helpers (none for frames under STAGE_PAR_BYTES or on one core; fewer
 *  when threads cannot be made: the submitting thread then copies alone). */
void copiers_start(CudaBackend *b)
{
    size_t bytes = b->stage_off[b->cp->img.nb_comps];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cores > 1 ? (int)(cores - 1 < STAGE_COPIERS ? cores - 1 : STAGE_COPIERS) : 0;
    if (bytes >= STAGE_PAR_BYTES && want > 0)
        b->stager = j2ki_stager_new(want);
}

void copiers_stop(CudaBackend *b)
{
    j2ki_stager_free(b->stager);
    b->stager = NULL;
}

typedef struct StageUpload {
    CudaBackend *b;
    CudaSlot    *s;
} StageUpload;

/** A part of the staging area is in place: its upload goes on the slot's stream. */
static int stage_part_up(void *opaque, size_t off, size_t len)
{
    StageUpload *u = (StageUpload *)opaque;
    CudaBackend *b = u->b;
    return CUDRV(cuMemcpyHtoDAsync, j2ki_dptr(u->s->d_stage + off), u->s->h_stage + off, len, u->s->st);
}

/** How a host frame sits in the staging area: each component's compact rows at stage_off[c],
 *  or (packed) the rows of components interleaved in one plane as they are, span bytes each,
 *  component c at delta[c] in a row, its samples step samples apart. */
typedef struct HostLayout {
    int       packed, step;
    size_t    span;
    ptrdiff_t delta[J2KC_MAX_COMPS];
    J2kiStageJob job;          /* the staging copy (dst and parts set by stage_frame) */
} HostLayout;

/** The layout of host frame f. Interleaved components (FFmpeg's rgb48, xyz12, rgb24) are
 *  staged as they are when their rows fit the staging area, and the GPU's load reads them with
 *  their step, as it reads device frames: copying whole rows costs the host what a planar frame
 *  does, where splitting the samples on the host went sample by sample. */
static void host_layout(CudaBackend *b, const J2kcFrame *f, HostLayout *hl)
{
    J2kiStageJob *job = &hl->job;
    int nb = b->cp->img.nb_comps, first;
    size_t span;
    memset(hl, 0, sizeof(*hl));
    job->nb_comps = nb;
    for (int c = 0; c < nb; c++) {
        job->src[c] = (const uint8_t *)f->data[c];
        job->stride[c] = f->stride[c];
        job->step[c] = f->step[c];
        job->w[c] = b->comp_w[c];
        job->h[c] = b->comp_h[c];
        job->bytes[c] = b->comp_bytes[c];
        job->off[c] = b->stage_off[c];
    }
    job->off[nb] = b->stage_off[nb];
    if (j2ki_stage_interleaved(job, &first, &span) && span <= UINT32_MAX &&
        (uint64_t)job->h[0] * span <= (uint64_t)b->stage_off[nb]) {
        hl->packed = 1;
        hl->step = job->step[0];
        hl->span = span;
        for (int c = 0; c < nb; c++)
            hl->delta[c] = (const uint8_t *)f->data[c] - (const uint8_t *)f->data[first];
        job->nb_comps = 1;
        job->src[0] = (const uint8_t *)f->data[first];
        job->stride[0] = f->stride[first];
        job->step[0] = 1;
        job->w[0] = (uint32_t)span;
        job->bytes[0] = 1;
        job->off[0] = 0;
        job->off[1] = (size_t)job->h[0] * span;
    }
}

/** Copies a host frame into the slot's pinned staging area and enqueues its upload on the
 *  slot's stream, part by part (stage.c); returns once the caller's planes are no longer read. */
static int stage_frame(CudaBackend *b, CudaSlot *s, HostLayout *hl)
{
    StageUpload u = { b, s };
    J2kiStageJob *job = &hl->job;
    job->dst = s->h_stage;
    job->nb_parts = j2ki_stage_parts(job->off[job->nb_comps]);
    job->part_done = stage_part_up;
    job->opaque = &u;
    return j2ki_stage(b->stager, job);
}

/** The load source of tile-component tc of component c. */
static J2kiLoadSrc load_src(CudaBackend *b, CudaSlot *s, const J2kcFrame *f, const HostLayout *hl, int c,
                            const J2kiTileComp *tc)
{
    J2kiLoadSrc l;
    uint32_t ox = tc->x0 - b->comp_x0[c], oy = tc->y0 - b->comp_y0[c];
    l.bytes = b->comp_bytes[c];
    l.shift = f->shift[c];
    l.depth = b->cp->img.depth[c];
    l.is_signed = b->cp->img.is_signed[c];
    if (f->mem == J2KC_MEM_CUDA) {
        l.step = f->step[c] > 1 ? f->step[c] : 1;
        l.stride = f->stride[c];
        l.d_data = (const uint8_t *)f->data[c] + (ptrdiff_t)oy * f->stride[c] + (ptrdiff_t)ox * l.step * l.bytes;
    } else if (hl->packed) {
        l.step = hl->step;
        l.stride = (ptrdiff_t)hl->span;
        l.d_data = s->d_stage + hl->delta[c] + (size_t)oy * hl->span + (size_t)ox * (size_t)l.step * l.bytes;
    } else {
        l.step = 1;
        l.stride = (ptrdiff_t)b->comp_w[c] * l.bytes;
        l.d_data = s->d_stage + b->stage_off[c] + (size_t)oy * l.stride + (size_t)ox * l.bytes;
    }
    return l;
}

/** Whether every component of the staging job of host frame f (its planes, or its one
 *  interleaved plane) is page-locked with one sample per step: then the upload reads the
 *  caller's memory directly (upload_direct), with no staging copy. */
static int frame_pinned(const HostLayout *hl)
{
    const J2kiStageJob *job = &hl->job;
    for (int c = 0; c < job->nb_comps; c++)
        if (job->step[c] > 1 || job->stride[c] < (ptrdiff_t)job->w[c] * job->bytes[c] || !j2ki_cuda_host_pinned(job->src[c]))
            return 0;
    return 1;
}

/** The upload of a page-locked host frame: each component of its staging job, planes or the
 *  one interleaved plane, from the caller's rows to where the staging copy would put it. */
static int upload_direct(CudaBackend *b, CudaSlot *s, const HostLayout *hl)
{
    const J2kiStageJob *job = &hl->job;
    int ret;
    for (int c = 0; c < job->nb_comps; c++) {
        CUDA_MEMCPY2D m;
        memset(&m, 0, sizeof(m));
        m.srcMemoryType = CU_MEMORYTYPE_HOST;
        m.srcHost = job->src[c];
        m.srcPitch = (size_t)job->stride[c];
        m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        m.dstDevice = j2ki_dptr(s->d_stage + job->off[c]);
        m.dstPitch = m.WidthInBytes = (size_t)job->w[c] * (size_t)job->bytes[c];
        m.Height = job->h[c];
        if ((ret = CUDRV(cuMemcpy2DAsync, &m, s->st)) < 0)
            return ret;
    }
    return 0;
}

int enqueue_frame(CudaBackend *b, CudaSlot *s, const J2kcFrame *f)
{
    const J2kiCodingParams *cp = b->cp;
    const J2kiPlan *plan = b->plan;
    int nb_comps = cp->img.nb_comps, ret, direct = 0;
    /* a device frame of another context (an encoder over several devices): copied in first */
    const int peer = f->mem == J2KC_MEM_CUDA && f->cu_ctx && (CUcontext)f->cu_ctx != b->ctx;
    J2kcFrame pf;
    HostLayout hl;
    /* page-locked host planes are copied up straight from the caller's memory (saving a
     * host copy of the whole frame, about 5 ms for 4K 4:4:4 12-bit); submit then waits for
     * that copy, since the caller may reuse its planes once submit returns, unless the caller
     * holds them until the packet is received (J2KC_FRAME_HELD): the slot's worker waits for
     * the frame's last event, which comes after the upload, before the packet is returned */
    const int held = (f->flags & J2KC_FRAME_HELD) != 0;
    if (f->mem != J2KC_MEM_CUDA) {
        host_layout(b, f, &hl);
        direct = frame_pinned(&hl);
    } else {
        memset(&hl, 0, sizeof(hl));
    }

    if ((ret = CUDRV(cuEventRecord, s->ev[EV_START], s->st)) < 0 ||
        (ret = CUR(j2ki_cuda_fault_enqueue(s->st))) < 0)
        return ret;
    if (cp->cu_stream) {
        if ((ret = CUDRV(cuEventRecord, s->ev_ext, (CUstream)cp->cu_stream)) < 0 ||
            (ret = CUDRV(cuStreamWaitEvent, s->st, s->ev_ext, 0)) < 0)
            return ret;
    }
    if (peer) {
        if ((ret = peer_frame(b, s, f, &pf)) < 0)
            return ret;
        f = &pf;
    } else if (f->mem == J2KC_MEM_CUDA) {
        /* the frame's producer: its stream, or without one the context's legacy default stream
         * (FFmpeg's CUDA uploads are asynchronous on hwctx->stream, NULL by default), which
         * the slots' non-blocking streams would not wait for by themselves */
        CUstream prod = f->cu_stream ? (CUstream)f->cu_stream : CU_STREAM_LEGACY;
        if ((ret = CUDRV(cuEventRecord, s->ev_ext, prod)) < 0 ||
            (ret = CUDRV(cuStreamWaitEvent, s->st, s->ev_ext, 0)) < 0)
            return ret;
    } else if (direct) {
        if ((ret = upload_direct(b, s, &hl)) < 0)
            return ret;
    } else if ((ret = stage_frame(b, s, &hl)) < 0) {   /* pageable: staged, uploaded part by part */
        return ret;
    }
    if ((ret = CUDRV(cuEventRecord, s->ev[EV_UPLOADED], s->st)) < 0)
        return ret;

    for (uint32_t t = 0; t < plan->nb_tiles; t++) {
        const J2kiTile *tile = &plan->tiles[t];
        int c = 0;
        if (cp->mct && nb_comps >= 3) {
            J2kiLoadSrc src[3];
            void *dst[3];
            for (int k = 0; k < 3; k++) {
                src[k] = load_src(b, s, f, &hl, k, &tile->comps[k]);
                dst[k] = (uint8_t *)s->d_samples + tile->comps[k].buf_offset * 4;
            }
            if ((ret = CUR(j2ki_load_mct_cuda(dst, src, 3, tile->comps[0].w, tile->comps[0].h,
                                             cp->reversible ? J2KI_LOAD_RCT : J2KI_LOAD_ICT, s->st))) < 0)
                return ret;
            c = 3;
        }
        for (; c < nb_comps; c++) {
            const J2kiTileComp *tc = &tile->comps[c];
            J2kiLoadSrc src[3];
            void *dst[3];
            src[0] = load_src(b, s, f, &hl, c, tc);
            dst[0] = (uint8_t *)s->d_samples + tc->buf_offset * 4;
            if ((ret = CUR(j2ki_load_mct_cuda(dst, src, 1, tc->w, tc->h,
                                             cp->reversible ? J2KI_LOAD_INT : J2KI_LOAD_FLOAT, s->st))) < 0)
                return ret;
        }
        for (c = 0; c < nb_comps; c++) {
            const J2kiTileComp *tc = &tile->comps[c];
            void *buf = (uint8_t *)s->d_samples + tc->buf_offset * 4;
            if (cp->reversible)
                ret = CUR(j2ki_dwt53_fwd_cuda((int32_t *)buf, tc->w, tc->x0, tc->y0, tc->x1, tc->y1,
                                             cp->nb_levels, s->d_tmp, s->st));
            else
                ret = CUR(j2ki_dwt97_fwd_cuda((float *)buf, tc->w, tc->x0, tc->y0, tc->x1, tc->y1,
                                             cp->nb_levels, s->d_tmp, s->st));
            if (ret < 0)
                return ret;
        }
    }
    /* qstep_try: the quantiser's histogram too, brought back for the slot's worker, which
     * chooses the frame's d (slot_predict) and enqueues the rest */
    s->d = 0;
    s->predict = b->nb_try > 0;
    if (s->predict &&
        ((ret = CUDRV(cuMemsetD8Async, j2ki_dptr(s->d_hist), 0, J2KI_QPRED_HIST * sizeof(*s->d_hist), s->st)) < 0 ||
         (ret = CUR(j2ki_quant_hist_cuda(s->d_samples, b->d_cblks, plan->nb_cblks, b->d_dmax, s->d_hist,
                                        s->st))) < 0))
        return ret;
    if (!s->predict && !cp->reversible &&
        (ret = CUR(j2ki_quant_cuda(s->d_samples, b->d_cblks, plan->nb_cblks, s->st))) < 0)
        return ret;
    if ((ret = CUDRV(cuEventRecord, s->ev[EV_DWT], s->st)) < 0)
        return ret;
    /* the histogram to the host, the stream's last work until slot_predict enqueues the rest */
    if (s->predict &&
        ((ret = CUDRV(cuMemcpyDtoHAsync, s->h_hist, j2ki_dptr(s->d_hist), J2KI_QPRED_HIST * sizeof(*s->d_hist),
                      s->st)) < 0 ||
         (ret = CUDRV(cuEventRecord, s->ev[EV_HIST], s->st)) < 0))
        return ret;
    if (!s->predict && (ret = enqueue_code(b, s, 0)) < 0)
        return ret;
    if (direct && !held && (ret = CUDRV(cuEventSynchronize, s->ev[EV_UPLOADED])) < 0)
        return ret;
    return 0;
}

}  // namespace j2ki_cuda
