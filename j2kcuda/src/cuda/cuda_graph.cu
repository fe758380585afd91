/*
 * The CUDA backend's launches after quantisation: tier-1 with its result copies, then rate
 * control and tier-2 with the download, captured once per slot (and per qstep_try plan) into
 * CUDA graphs and replayed per frame; qstep_try's prediction on the worker.
 */
#include "cuda/backend_cuda.h"

namespace j2ki_cuda {

/* An event record inside a graph capture (the ops below run only so): an event-record node,
 * external, so that the host waits on it and times with it as on any record. */
static cudaError_t ev_record(CudaSlot *s, int e)
{
    return cudaEventRecordWithFlags(s->ev[e], s->st, cudaEventRecordExternal);
}

/** The slot's tier-1 early stop for the plan (d > 0: plan_try[d]'s), NULL when off. */
static const J2kiT1StopDev *slot_t1_stop(const CudaSlot *s, int d)
{
    return s->t1s.d_scratch ? (d ? &s->t1s_try[d] : &s->t1s) : NULL;
}

/** enqueue_code's first part on s->st, captured: tier-1 with plan_try[d]'s tables (d > 0) or
 *  the plan's, then EV_T1, and its error flag and block results to the host. */
static int code_t1_ops(CudaBackend *b, CudaSlot *s, int d)
{
    const J2kiCodingParams *cp = b->cp;
    const J2kiPlan *plan = b->plan;
    int ret;
    /* the kernel variant and shared-memory limit of the test hooks (J2KI_T1_CUDA_DEFAULT and
     * the device's unless a test sets them) */
    if ((ret = CU(cudaMemsetAsync(s->d_flag, 0, sizeof(uint32_t), s->st))) < 0 ||
        (ret = CU(j2ki_t1_cuda_variant(s->d_samples, d ? b->d_cblks_try[d] : b->d_cblks, plan->nb_cblks,
                                       cp->cblk_style, cp->bypass_start, plan->max_cblk_w, plan->max_cblk_h,
                                       s->d_data, s->d_passes, s->d_res, s->d_flag, s->d_t1_scratch,
                                       s->t1_scratch_size, cp->hooks.t1_variant, cp->hooks.smem_optin,
                                       slot_t1_stop(s, d), s->st))) < 0 ||
        (ret = CU(ev_record(s, EV_T1))) < 0 ||
        (ret = CU(cudaMemcpyAsync(s->h_flag, s->d_flag, sizeof(uint32_t), cudaMemcpyDeviceToHost, s->st))) < 0 ||
        (ret = CU(cudaMemcpyAsync(s->h_res, s->d_res, plan->nb_cblks * sizeof(J2kiCblkRes),
                                  cudaMemcpyDeviceToHost, s->st))) < 0)
        return ret;
    return 0;
}

/** enqueue_code's last part on s->st, captured, after rate control: tier-2 and the download. */
static int code_fin_ops(CudaBackend *b, CudaSlot *s, int d)
{
    const J2kiCodingParams *cp = b->cp;
    /* back come the result record and, with a byte budget (the codestream cannot be longer),
     * the budget's worth of bytes in the same stream, so the slot's last event stays the only
     * sync point */
    J2kiT2Cuda *t2 = d ? s->t2_try[d] : s->t2;
    int ret;
    if ((ret = j2ki_t2_cuda_write(t2, s->st, s->d_cs, b->max_out)) < 0 ||
        (ret = CU(cudaMemcpyAsync(s->h_t2res, j2ki_t2_cuda_result(t2), sizeof(*s->h_t2res),
                                  cudaMemcpyDeviceToHost, s->st))) < 0)
        return ret;
    if (cp->rc_mode == J2KI_RC_BYTES &&
        (ret = CU(cudaMemcpyAsync(s->h_cs, s->d_cs, cp->frame_bytes < b->max_out ? cp->frame_bytes : b->max_out,
                                  cudaMemcpyDeviceToHost, s->st))) < 0)
        return ret;
    return CU(ev_record(s, EV_DONE));
}

/*
 * CUDA graphs: code_t1_ops and code_fin_ops of each plan are captured once per slot
 * (slot_graph: the plan's at init, each of qstep_try's on its first use; a capture runs
 * nothing) and launched whole per frame; rate control
 * between them is launched directly, since its decide grid takes a share of the device that
 * depends on the frames busy at the time. A frame's tier-1 to download is about 50 launches,
 * copies and event records; for small frames the submitting thread issuing them one by one
 * was the bound. Measured: see bench/results/history.md#cuda-graphs
 */
static int capture(CudaBackend *b, CudaSlot *s, int d, int fin, cudaGraphExec_t *out)
{
    cudaGraph_t g = NULL;
    cudaError_t e;
    int ret;
    if ((ret = CU(cudaStreamBeginCapture(s->st, cudaStreamCaptureModeRelaxed))) < 0)
        return ret;
    ret = fin ? code_fin_ops(b, s, d) : code_t1_ops(b, s, d);
    e = cudaStreamEndCapture(s->st, &g);              /* always, so the stream leaves capture */
    if (ret == 0 && (ret = CU(e)) == 0)
        ret = CU(cudaGraphInstantiate(out, g, 0));
    if (g)
        cudaGraphDestroy(g);
    /* a failed capture (e.g. out of memory) leaves the thread's last error set (the capture
     * invalidated); it is reported by ret, and must not surface at a later launch check */
    if (ret < 0)
        (void)cudaGetLastError();
    return ret;
}

/** The graph pair of plan d on the slot, captured when missing: the plan's (d = 0) at init,
 *  qstep_try's (d > 0) on the slot's worker when a frame is first predicted d there (its stream
 *  is idle then: slot_predict waited for its last event), so that creating the encoder
 *  captures one pair per slot whatever qstep_try is, and d values no frame takes cost none. */
static int slot_graph(CudaBackend *b, CudaSlot *s, int d)
{
    int ret;
    if ((!s->g_t1[d] && (ret = capture(b, s, d, 0, &s->g_t1[d])) < 0) ||
        (!s->g_fin[d] && (ret = capture(b, s, d, 1, &s->g_fin[d])) < 0))
        return ret;
    return 0;
}

int slot_graphs(CudaBackend *b, CudaSlot *s)
{
    return slot_graph(b, s, 0);
}

/** Enqueues rate control to the download of a frame whose tier-1 is enqueued (s->d > 0: with
 *  plan_try[d]'s tables; qstep_try's hull mask then comes back too). */
static int enqueue_rest(CudaBackend *b, CudaSlot *s)
{
    const int d = s->d;
    int ret;
    /* PCRD-opt on the device, its grid sized for the frames busy now */
    if ((ret = j2ki_rc_cuda_run(d ? s->rc_try[d] : s->rc, s->d_res, 1 + busy_slots(b, s), d != 0, s->st)) < 0 ||
        (ret = CU(cudaEventRecord(s->ev[EV_RC], s->st))) < 0)
        return ret;
    return CU(cudaGraphLaunch(s->g_fin[d], s->st));
}

/** Enqueues tier-1 to the download of a quantised frame in the slot, with plan_try[s->d]'s
 *  tables (s->d > 0), else the plan's; again: the frame's second coding (qstep_try), timed
 *  from EV_AGAIN. */
int enqueue_code(CudaBackend *b, CudaSlot *s, int again)
{
    const int d = s->d;
    int ret;
    if (again && (ret = CU(cudaEventRecord(s->ev[EV_AGAIN], s->st))) < 0)
        return ret;
    if ((ret = CU(cudaGraphLaunch(s->g_t1[d], s->st))) < 0)
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
    if ((ret = CU(cudaEventSynchronize(s->ev[EV_HIST]))) < 0)
        return ret;
    s->d = j2ki_quant_predict(b->cp, s->h_hist);
    j2ki_quant_predict_log(&b->log, b->cp, s->h_hist, s->d);
    if ((ret = slot_graph(b, s, s->d)) < 0)
        return ret;
    return enqueue_code(b, s, 0);
}

}  // namespace j2ki_cuda
