/*
 * A device frame of another CUDA context (J2kcFrame.cu_ctx, not the backend's): an encoder over
 * several devices may code a frame on a device other than the one that holds it
 * (core/backend_multi.h). A kernel of one context cannot read another context's memory, so the
 * frame's planes are first copied, device to device, into a buffer of the slot's
 * (cuMemcpy3DPeerAsync on the slot's stream: over NVLink or PCIe peer-to-peer where the devices
 * allow it, through the host otherwise; the driver decides). The copy waits for the frame's
 * producer through an event of the frame's context; the slot's later work follows it on the slot's
 * stream, and the frame's planes are not read after it.
 *
 * Components interleaved in one plane (packed RGB, the UV plane of NV12/P010) are copied once, as
 * the rows they share (peer_layout.h).
 */
#include "cuda/backend_cuda.h"
#include "cuda/peer_layout.h"

namespace j2ki_cuda {

int peer_frame(CudaBackend *b, CudaSlot *s, const J2kcFrame *f, J2kcFrame *out)
{
    CUcontext fctx = (CUcontext)f->cu_ctx, popped;
    J2kiPeerComp comp[J2KC_MAX_COMPS];
    J2kiPeerPlane pl[J2KC_MAX_COMPS];
    int plane_of[J2KC_MAX_COMPS], n, ret;
    const int nb_comps = b->cp->img.nb_comps;
    size_t size;

    for (int c = 0; c < nb_comps; c++) {
        comp[c].data = f->data[c];
        comp[c].stride = f->stride[c];
        comp[c].step = f->step[c];
        comp[c].bytes = b->comp_bytes[c];
        comp[c].w = b->comp_w[c];
        comp[c].h = b->comp_h[c];
    }
    if ((n = j2ki_peer_layout(comp, nb_comps, pl, plane_of, &size)) < 0) {
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA: a device frame of another context with overlapping or "
                 "upward rows (a negative or short stride) cannot be copied to device %d", b->dev);
        return n;
    }
    if (size > s->peer_size) {
        /* the first frame from another context, or a layout needing more: on the submitting
         * thread, once (a frame's layout is that of the frames before it) */
        j2ki_cuda_free(s->d_peer);
        s->d_peer = NULL;
        s->peer_size = 0;
        if ((ret = CUR(j2ki_cuda_malloc((void **)&s->d_peer, size))) < 0)
            return ret;
        s->peer_size = size;
        s->device_bytes += size;
    }
    /* the producer's event belongs to the frame's context (cuEventRecord wants the stream's) */
    if (s->ev_peer && s->ev_peer_ctx != fctx) {
        J2KI_CUFN(cuEventDestroy)(s->ev_peer);
        s->ev_peer = NULL;
    }
    if ((ret = CUDRV(cuCtxPushCurrent, fctx)) < 0)
        return ret;
    if (!s->ev_peer) {
        ret = CUDRV(cuEventCreate, &s->ev_peer, CU_EVENT_DISABLE_TIMING);
        s->ev_peer_ctx = fctx;
    }
    if (ret >= 0)
        ret = CUDRV(cuEventRecord, s->ev_peer, f->cu_stream ? (CUstream)f->cu_stream : CU_STREAM_LEGACY);
    J2KI_CUFN(cuCtxPopCurrent)(&popped);
    if (ret < 0 || (ret = CUDRV(cuStreamWaitEvent, s->st, s->ev_peer, 0)) < 0)
        return ret;
    for (int k = 0; k < n; k++) {
        CUDA_MEMCPY3D_PEER m;
        memset(&m, 0, sizeof(m));
        m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        m.srcDevice = (CUdeviceptr)pl[k].src;
        m.srcContext = fctx;
        m.srcPitch = (size_t)pl[k].src_pitch;
        m.srcHeight = pl[k].rows;
        m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        m.dstDevice = j2ki_dptr(s->d_peer + pl[k].dst_off);
        m.dstContext = b->ctx;
        m.dstPitch = pl[k].dst_pitch;
        m.dstHeight = pl[k].rows;
        m.WidthInBytes = pl[k].row_bytes;
        m.Height = pl[k].rows;
        m.Depth = 1;
        if ((ret = CUDRV(cuMemcpy3DPeerAsync, &m, s->st)) < 0)
            return ret;
    }
    *out = *f;
    for (int c = 0; c < nb_comps; c++) {
        out->data[c] = s->d_peer + j2ki_peer_comp_offset(&comp[c], &pl[plane_of[c]]);
        out->stride[c] = (ptrdiff_t)pl[plane_of[c]].dst_pitch;
    }
    out->cu_ctx = b->ctx;
    out->cu_stream = s->st;
    return 0;
}

}  // namespace j2ki_cuda
