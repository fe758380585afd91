/*
 * The CUDA backend's launches after quantisation: tier-1 with its result copies, then rate
 * control and tier-2 with the download, captured per slot (and per qstep_try plan) into CUDA
 * graphs on the application's submitting thread and replayed per frame; qstep_try's
 * prediction on the worker.
 */
#include "cuda/backend_cuda.h"

namespace j2ki_cuda {

/* An event record of the ops below (errors to *sticky): inside a graph capture (cap) an
 * event-record node, external, so that the host waits on it and times with it as on any record;
 * enqueued directly, a plain record (the external flag is refused outside a capture:
 * CUDA_ERROR_ILLEGAL_STATE). */
static int ev_record(CudaBackend *b, CudaSlot *s, int e, int cap, int *sticky)
{
    if (!cap)
        return J2KI_CU(&b->log, sticky, cuEventRecord, s->ev[e], s->st);
    return J2KI_CU(&b->log, sticky, cuEventRecordWithFlags, s->ev[e], s->st, CU_EVENT_RECORD_EXTERNAL);
}

/** The slot's tier-1 early stop for the plan (d > 0: plan_try[d]'s), NULL when off. */
static const J2kiT1StopDev *slot_t1_stop(const CudaSlot *s, int d)
{
    return s->t1s.d_scratch ? (d ? &s->t1s_try[d] : &s->t1s) : NULL;
}

/* A call of the ops below: its error logged and stored in *sticky (NULL: nowhere). The ops are
 * captured into a graph (sticky: the capturing caller's) or enqueued directly (sticky: broken);
 * cap says which. */
#define SCU(call) J2KI_CUDRV(&b->log, sticky, call)   /* a CUresult expression */
/* the same for a driver call by name */
#define SDRV(fn, ...) J2KI_CU(&b->log, sticky, fn, __VA_ARGS__)

/** enqueue_code's first part on s->st, captured or (a qstep_try plan without its graph yet)
 *  enqueued directly: tier-1 with plan_try[d]'s tables (d > 0) or the plan's, then EV_T1, and
 *  its error flag and block results to the host; errors stored in *sticky. */
static int code_t1_ops(CudaBackend *b, CudaSlot *s, int d, int cap, int *sticky)
{
    const J2kiCodingParams *cp = b->cp;
    const J2kiPlan *plan = b->plan;
    int ret;
    /* the kernel variant and shared-memory limit of the test hooks (J2KI_T1_CUDA_DEFAULT and
     * the device's unless a test sets them) */
    if ((ret = SDRV(cuMemsetD8Async, j2ki_dptr(s->d_flag), 0, sizeof(uint32_t), s->st)) < 0)
        return ret;
    if (cp->cblk_style & J2KI_CBLK_HT)
        /* the HT block coder, its planes chosen under the budget as ref's (ht_cuda.h) */
        ret = SCU(j2ki_ht_cuda(s->d_samples, d ? b->d_cblks_try[d] : b->d_cblks, d ? b->d_weight_try[d] : b->d_weight,
                               plan->nb_cblks, cp->rc_mode == J2KI_RC_BYTES && cp->frame_bytes != 0,
                               b->ht_target32[d], cp->ht_refine, s->d_data, s->d_passes, s->d_res, s->d_flag, s->d_t1_scratch,
                               s->t1_scratch_size, s->st));
    else
        ret = SCU(j2ki_t1_cuda_variant(s->d_samples, d ? b->d_cblks_try[d] : b->d_cblks, plan->nb_cblks,
                                       cp->cblk_style, cp->bypass_start, plan->max_cblk_w, plan->max_cblk_h,
                                       s->d_data, s->d_passes, s->d_res, s->d_flag, s->d_t1_scratch,
                                       s->t1_scratch_size, cp->hooks.t1_variant, cp->hooks.smem_optin,
                                       slot_t1_stop(s, d), s->st));
    if (ret < 0 ||
        (ret = ev_record(b, s, EV_T1, cap, sticky)) < 0 ||
        (ret = SDRV(cuMemcpyDtoHAsync, s->h_flag, j2ki_dptr(s->d_flag), sizeof(uint32_t), s->st)) < 0 ||
        (ret = SDRV(cuMemcpyDtoHAsync, s->h_res, j2ki_dptr(s->d_res), plan->nb_cblks * sizeof(J2kiCblkRes),
                             s->st)) < 0)
        return ret;
    return 0;
}

/** enqueue_code's last part on s->st, captured or enqueued directly (as code_t1_ops), after
 *  rate control: tier-2 and the download; errors stored in *sticky. */
static int code_fin_ops(CudaBackend *b, CudaSlot *s, int d, int cap, int *sticky)
{
    const J2kiCodingParams *cp = b->cp;
    /* back come the result record and, with a byte budget (the codestream cannot be longer),
     * the budget's worth of bytes in the same stream, so the slot's last event stays the only
     * sync point */
    J2kiT2Cuda *t2 = d ? s->t2_try[d] : s->t2;
    int *t2_sticky = j2ki_t2_cuda_sticky(t2, sticky);      /* the slot's tables: its thread alone */
    int ret = j2ki_t2_cuda_write(t2, s->st, s->d_cs, b->max_out);
    j2ki_t2_cuda_sticky(t2, t2_sticky);
    if (ret < 0 ||
        (ret = SDRV(cuMemcpyDtoHAsync, s->h_t2res, j2ki_dptr(j2ki_t2_cuda_result(t2)), sizeof(*s->h_t2res),
                             s->st)) < 0)
        return ret;
    if (cp->rc_mode == J2KI_RC_BYTES &&
        (ret = SDRV(cuMemcpyDtoHAsync, s->h_cs, j2ki_dptr(s->d_cs),
                             cp->frame_bytes < b->max_out ? cp->frame_bytes : b->max_out, s->st)) < 0)
        return ret;
    return ev_record(b, s, EV_DONE, cap, sticky);
}

/*
 * CUDA graphs: code_t1_ops and code_fin_ops of each plan are captured once per slot and
 * launched whole per frame; rate control between them is launched directly, since its decide
 * grid takes a share of the device that depends on the frames busy at the time. A frame's
 * tier-1 to download is about 50 launches, copies and event records; for small frames the
 * submitting thread issuing them one by one was the bound.
 * Measured: see bench/results/history.md#cuda-graphs
 *
 * Where the captures run. While any stream of a context is capturing, CUDA refuses to
 * synchronise anything that encompasses it: an application's cudaDeviceSynchronize or
 * cuCtxSynchronize on the same context fails with cudaErrorStreamCaptureUnsupported (and may
 * invalidate the capture). A capture on a thread of the library's own (the preparer, the slot
 * workers) would therefore race every application that synchronises its device between its
 * calls into the library, which is legal and common. So every capture runs on the application's
 * thread, inside its call (j2kc_encoder_submit): a slot's plan pair just before its first
 * frame is enqueued (slot_graphs), with nothing of the slot in flight; a qstep_try plan that a
 * frame is first predicted to take (on the worker, slot_predict) is enqueued directly that time,
 * op by op as code_t1_ops / code_fin_ops issue them (no capture), and captured at the slot's
 * next submit (want_graphs). An application that synchronises the device from another thread
 * while one of its threads is inside submit can still meet a capture, as it can meet any
 * library that uses stream capture; one that does so between its calls cannot. The price is
 * one capture and instantiation per slot on its first frame's submit (the first frames'
 * latency, not creation's). The alternatives: cloning slot 0's graph for the other slots with
 * their buffers swapped needs every kernel parameter that points into a slot rewritten by hand,
 * and slot 0's capture remains; building the graphs node by node (a kernel node per
 * j2ki_cuda_launch, memset and copy nodes) avoids capture altogether, which the device-wide CUB
 * calls of tier-2 once prevented (they recorded only under capture) and which is open now that
 * every kernel is the library's own, launched through one function (doc/open-work.md).
 *
 * A capture runs nothing: a failed one leaves no work half-enqueued, so its errors go to the
 * caller's sticky target (NULL from submit: the frame fails, the backend stays usable, the next
 * submit to the slot captures again), never to the backend's `broken`.
 */
static int capture(CudaBackend *b, CudaSlot *s, int d, int fin, CUgraphExec *out, int *sticky)
{
    CUgraph g = NULL;
    CUresult e;
    int ret;
    if ((ret = SDRV(cuStreamBeginCapture, s->st, CU_STREAM_CAPTURE_MODE_RELAXED)) < 0)
        return ret;
    ret = fin ? code_fin_ops(b, s, d, 1, sticky) : code_t1_ops(b, s, d, 1, sticky);
    e = J2KI_CUFN(cuStreamEndCapture)(s->st, &g);     /* always, so the stream leaves capture */
    if (ret == 0 && (ret = j2ki_cudrv_check(&b->log, sticky, e, "cuStreamEndCapture(s->st, &g)", __FILE__, __LINE__)) == 0)
        ret = SDRV(cuGraphInstantiateWithFlags, out, g, 0);
    if (g)
        J2KI_CUFN(cuGraphDestroy)(g);
    /* a failed capture is reported by ret alone: driver launches return their own error and
     * leave no per-thread error behind for a later launch to find */
    return ret;
}

/** The graph pair of plan d on the slot, captured when missing (errors to *sticky). */
static int slot_graph(CudaBackend *b, CudaSlot *s, int d, int *sticky)
{
    int ret;
    if ((!s->g_t1[d] && (ret = capture(b, s, d, 0, &s->g_t1[d], sticky)) < 0) ||
        (!s->g_fin[d] && (ret = capture(b, s, d, 1, &s->g_fin[d], sticky)) < 0))
        return ret;
    return 0;
}

/** On the submitting thread (inside enter/leave, the slot idle): the plan's graph pair when the
 *  slot has none yet (its first frame), and those of the qstep_try plans its frames have taken
 *  since (want_graphs). A failure is the frame's (logged, returned), not the backend's. */
int slot_graphs(CudaBackend *b, CudaSlot *s)
{
    const int first = !s->g_t1[0] || !s->g_fin[0];
    double t0;
    int ret;
    if (!first && !s->want_graphs)
        return 0;
    t0 = j2ki_now_ms();
    if ((ret = slot_graph(b, s, 0, NULL)) < 0)
        return ret;
    for (int d = 1; d <= b->nb_try; d++)
        if ((s->want_graphs >> d) & 1u) {
            if ((ret = slot_graph(b, s, d, NULL)) < 0)
                return ret;
            s->want_graphs &= ~(1u << d);
        }
    /* what the capture adds to this submit (the slot's first frame's latency) */
    j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend: slot %d's graphs%s captured in %.2f ms at its %s submit",
             (int)(s - b->slots), first ? "" : " of a qstep_try plan", j2ki_now_ms() - t0, first ? "first" : "next");
    return 0;
}

/** Enqueues rate control to the download of a frame whose tier-1 is enqueued (s->d > 0: with
 *  plan_try[d]'s tables; qstep_try's hull mask then comes back too). */
static int enqueue_rest(CudaBackend *b, CudaSlot *s)
{
    const int d = s->d;
    int ret;
    /* PCRD-opt on the device, its grid sized for the frames busy now */
    if ((ret = j2ki_rc_cuda_run(d ? s->rc_try[d] : s->rc, s->d_res, 1 + busy_slots(b, s), d != 0, s->st)) < 0 ||
        (ret = CUDRV(cuEventRecord, s->ev[EV_RC], s->st)) < 0)
        return ret;
    if (!s->g_fin[d])
        return code_fin_ops(b, s, d, 0, &b->broken);
    return CUDRV(cuGraphLaunch, s->g_fin[d], s->st);
}

/** Enqueues tier-1 to the download of a quantised frame in the slot, with plan_try[s->d]'s
 *  tables (s->d > 0), else the plan's; again: the frame's second coding (qstep_try), timed
 *  from EV_AGAIN. A plan without its graphs yet (a qstep_try plan on the worker) is enqueued
 *  op by op: no capture off the application's thread (capture's note). */
int enqueue_code(CudaBackend *b, CudaSlot *s, int again)
{
    const int d = s->d;
    int ret;
    if (again && (ret = CUDRV(cuEventRecord, s->ev[EV_AGAIN], s->st)) < 0)
        return ret;
    if (!s->g_t1[d])
        ret = code_t1_ops(b, s, d, 0, &b->broken);
    else
        ret = CUDRV(cuGraphLaunch, s->g_t1[d], s->st);
    if (ret < 0)
        return ret;
    return enqueue_rest(b, s);
}

/** qstep_try, on the slot's worker (inside enter/leave): once the frame's histogram is on the
 *  host (EV_HIST, the one sync before its tier-1), its d by the reference backend's rule
 *  (j2ki_quant_predict: integer sums, the same d), then its coding from tier-1 on. */
int slot_predict(CudaBackend *b, CudaSlot *s)
{
    int ret;
    s->predict = 0;
    if ((ret = CUDRV(cuEventSynchronize, s->ev[EV_HIST])) < 0)
        return ret;
    s->d = j2ki_quant_predict(b->cp, s->h_hist);
    j2ki_quant_predict_log(&b->log, b->cp, s->h_hist, s->d);
    if (!s->g_t1[s->d] || !s->g_fin[s->d])
        s->want_graphs |= 1u << s->d;     /* captured at the slot's next submit (slot_graphs) */
    return enqueue_code(b, s, 0);
}

}  // namespace j2ki_cuda
