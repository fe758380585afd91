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
 * Components interleaved in one plane (packed RGB, the UV plane of NV12/P010: one step > 1 and one
 * stride, their first samples within one pixel) are copied once, as the rows they share.
 */
#include "cuda/backend_cuda.h"

namespace j2ki_cuda {

/* A run of rows to copy: the components whose samples it holds. */
typedef struct PeerPlane {
    const uint8_t *src;     /* its first byte */
    ptrdiff_t      stride;
    size_t         row_bytes, rows, dst_off, dst_pitch;
} PeerPlane;

/* The planes of frame f (at most one per component) and where each goes in the slot's buffer
 * (rows of 256-byte multiples); fills plane_of[c]; returns the number of planes and the bytes
 * the buffer needs in *size. */
static int peer_layout(const CudaBackend *b, const J2kcFrame *f, PeerPlane *pl, int *plane_of, size_t *size)
{
    int n = 0, nb_comps = b->cp->img.nb_comps;
    size_t off = 0;
    for (int c = 0; c < nb_comps; c++) {
        const uint8_t *p = (const uint8_t *)f->data[c];
        int step = f->step[c] > 1 ? f->step[c] : 1, bytes = b->comp_bytes[c];
        size_t row = ((size_t)(b->comp_w[c] - 1) * (size_t)step + 1) * (size_t)bytes;
        const ptrdiff_t pix = (ptrdiff_t)step * bytes;
        int k;
        for (k = 0; k < n; k++)     /* interleaved with an earlier component? */
            if (step > 1 && pl[k].stride == f->stride[c] && pl[k].rows == b->comp_h[c] &&
                (uintptr_t)p + (uintptr_t)pix > (uintptr_t)pl[k].src &&
                (uintptr_t)p < (uintptr_t)pl[k].src + (uintptr_t)pix)
                break;
        if (k < n) {
            const uint8_t *lo = p < pl[k].src ? p : pl[k].src;
            const uint8_t *hi = pl[k].src + pl[k].row_bytes > p + row ? pl[k].src + pl[k].row_bytes : p + row;
            pl[k].src = lo;
            pl[k].row_bytes = (size_t)(hi - lo);
        } else {
            pl[n].src = p;
            pl[n].stride = f->stride[c];
            pl[n].row_bytes = row;
            pl[n].rows = b->comp_h[c];
            n++;
        }
        plane_of[c] = k;
    }
    for (int k = 0; k < n; k++) {
        pl[k].dst_pitch = (pl[k].row_bytes + 255) & ~(size_t)255;
        pl[k].dst_off = off;
        off += pl[k].dst_pitch * pl[k].rows;
    }
    *size = off;
    return n;
}

int peer_frame(CudaBackend *b, CudaSlot *s, const J2kcFrame *f, J2kcFrame *out)
{
    CUcontext fctx = (CUcontext)f->cu_ctx, popped;
    PeerPlane pl[J2KC_MAX_COMPS];
    int plane_of[J2KC_MAX_COMPS], n, ret;
    size_t size;

    n = peer_layout(b, f, pl, plane_of, &size);
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
        m.srcDevice = j2ki_dptr(pl[k].src);
        m.srcContext = fctx;
        m.srcPitch = (size_t)pl[k].stride;
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
    for (int c = 0; c < b->cp->img.nb_comps; c++) {
        const PeerPlane *p = &pl[plane_of[c]];
        out->data[c] = s->d_peer + p->dst_off + ((const uint8_t *)f->data[c] - p->src);
        out->stride[c] = (ptrdiff_t)p->dst_pitch;
    }
    out->cu_ctx = b->ctx;
    out->cu_stream = s->st;
    return 0;
}

}  // namespace j2ki_cuda
