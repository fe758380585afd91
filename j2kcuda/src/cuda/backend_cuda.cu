/*
 * The CUDA backend: per frame slot, one stream that uploads the frame, runs load + MCT
 * (Annex G), the DWT (Annex F), quantisation (Annex E), tier-1 (Annex D), PCRD-opt rate
 * control (rc_cuda.cu) and packetisation (t2_cuda.cu) on the device, and brings back the
 * finished codestream, the reference backend's bytes.
 *
 * Page-locked host memory is detected by cuda_pinned.cu; the hardware queues the backend
 * recommends (CUDA_DEVICE_MAX_CONNECTIONS, set by the application) are logged by cuda_env.cu.
 *
 * Memory: everything is sized from the plan and allocated in init(); nothing is allocated per
 * frame. Per slot (device): the frame's samples (4 bytes each, int32 or float in place), DWT
 * scratch, the upload staging area, the code-blocks' byte and pass areas, per-block results,
 * the error flag, the sort buffers, and the rate-control and tier-2 mirrors. Per slot (pinned
 * host): the upload staging area, tier-1's error flag and block results, the tier-2 result
 * record and the codestream.
 *
 * Upload: host planes are copied into the pinned staging area by submit (the caller may reuse
 * them once submit returns; from 4 MB on, up to STAGE_COPIERS helper threads claim chunks of
 * the rows beside the submitting thread, stage.c), in parts of about 2 MB (at most 8), each
 * part's upload enqueued as soon as it is in place; components interleaved in one plane
 * (packed RGB / XYZ) are staged as rows, the load reading them with their step (host_layout).
 * Page-locked planes (one sample per step, or one interleaved plane) are copied up straight
 * from the caller's memory, and submit waits for that copy (the only sync in submit). Device
 * planes (J2KC_MEM_CUDA) are read in place after an event on the caller's stream.
 *
 * The one sync point per frame after submit is in the slot's host worker thread:
 * cudaEventSynchronize on the slot's last event (after sleeping until rate control is done, see
 * slot_init), then the host checks on that thread, so frames in flight are finished on several
 * cores at once; wait() only waits for the worker's result. The log callback may therefore be
 * called from these threads.
 */
extern "C" {
#include "core/backend.h"
#include "core/params.h"
#include "core/plan.h"
#include "hd/quant.h"
#include "ref/rc_ref.h"
#include "cuda/stage.h"
#include "core/tuning.h"
}
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/cuda_pinned.h"
#include "cuda/cuda_util.h"
#include "cuda/dwt_cuda.h"
#include "cuda/mct_cuda.h"
#include "cuda/quant_cuda.h"
#include "hd/rc_core.h"
#include "cuda/rc_cuda.h"
#include "cuda/t1_cuda.h"
#include "hd/t1_stop.h"
#include "cuda/t2_cuda.h"

/* EV_HIST: qstep_try's histogram is on the host (the worker decides the frame's plan there) */
enum { EV_START, EV_UPLOADED, EV_DWT, EV_T1, EV_RC, EV_DONE, EV_AGAIN, EV_HIST, NB_EV };

#define NB_TRY_MAX (J2KI_QPRED_MAX_D + 1)   /* qstep_try's plans, by d (0: the plan itself) */

typedef struct CudaSlot {
    J2kiPlan     *plan;            /* the backend's plan_t2, shared by the slots */
    J2kiPlan     *plan_try[NB_TRY_MAX]; /* qstep_try: plan_try[d], d = 1..b->nb_try, shared */
    int           d;               /* the frame in flight is coded with plan_try[d] (0: plan) */
    int           predict;         /* its d is still to be chosen (EV_HIST, slot_worker) */
    unsigned long long *d_hist;    /* qstep_try's histogram (J2KI_QPRED_HIST counters) */
    uint64_t     *h_hist;          /* its copy on the host (pinned) */
    cudaStream_t  st;
    cudaEvent_t   ev[NB_EV];
    cudaEvent_t   ev_ext;          /* recorded on a caller's stream, waited on by st */
    /* device */
    void         *d_samples;
    void         *d_tmp;
    uint8_t      *d_stage;
    uint8_t      *d_data;
    J2kiPass     *d_passes;
    J2kiCblkRes  *d_res;
    uint32_t     *d_flag;
    void         *d_t1_scratch;
    J2kiT1StopDev t1s;             /* tier-1's early stop: its scratch (t1s.d_scratch NULL: off) */
    J2kiT1StopDev t1s_try[NB_TRY_MAX]; /* the same scratch, with plan_try[d]'s weights */
    size_t        t1_scratch_size;
    /* pinned host */
    uint8_t      *h_stage;
    J2kiCblkRes  *h_res;
    uint32_t     *h_flag;
    /* device rate control and tier-2: only the codestream comes back */
    J2kiT2Cuda   *t2, *t2_try[NB_TRY_MAX]; /* of plan, and of plan_try[d] */
    J2kiRcCuda   *rc, *rc_try[NB_TRY_MAX];
    uint8_t      *d_cs;
    J2kiT2CudaResult *h_t2res;     /* pinned */
    /* host */
    uint8_t      *h_cs;            /* pinned */
    const uint8_t *cs;
    size_t        cs_len;
    int           cs_err;
    J2kcStats     stats;
    size_t        device_bytes;
    /* graphs (slot_graph): tier-1 and tier-2 .. download per plan (index d) */
    cudaGraphExec_t g_t1[NB_TRY_MAX], g_fin[NB_TRY_MAX];
    /* host worker: waits for the slot's device work, then checks its results and takes the
     * codestream, so the host part of several frames runs on several cores; state and quit
     * under mtx */
    struct CudaBackend *b;
    pthread_t     thread;
    int           thread_started;
    pthread_mutex_t mtx;
    pthread_cond_t  cond;
    int           sync_ready;      /* mtx and cond initialised */
    int           state;           /* SLOT_IDLE, SLOT_QUEUED (device work enqueued), SLOT_DONE */
    int           quit;
} CudaSlot;

enum { SLOT_IDLE = 0, SLOT_QUEUED, SLOT_DONE };

/* Threads that help the submitting thread copy a pageable host frame into the pinned staging
 * area (at most one fewer than the cores), and the frame size from which they are used. One
 * thread's copy is bound by its core's memory traffic, several times slower than the upload
 * it feeds; the helpers claim chunks of rows (stage.c), so more of them shorten the copy
 * without waiting for the slowest (tuning.h). */
#define STAGE_COPIERS   J2KI_TUNE_STAGE_COPIERS
#define STAGE_PAR_BYTES J2KI_TUNE_STAGE_PAR_BYTES

typedef CUresult (*CtxPushFn)(CUcontext);
typedef CUresult (*CtxPopFn)(CUcontext *);

typedef struct CudaBackend {
    J2kiLog       log;
    const J2kiCodingParams *cp;
    const J2kiPlan *plan;
    int           dev;
    CUcontext     ctx;             /* caller's context, or NULL */
    CtxPushFn     ctx_push;
    CtxPopFn      ctx_pop;
    int           broken;          /* sticky J2KC_ERR_* of the first CUDA failure */
    int           dev_ready;       /* the device (or caller context) was entered once */
    int           nb_slots;
    CudaSlot     *slots;
    size_t        max_out;
    J2kiCblkDev  *d_cblks;         /* read-only, shared by the slots */
    double       *d_weight;        /* every block's band dist_weight (early stop), shared */
    J2kiCblkDev  *h_cblks;         /* host copy (byte and pass offsets) */
    /* qstep_try (quant.h): the quantiser's histogram gives the frame's d (j2ki_quant_predict,
     * by the slot's worker after EV_HIST); with d > 0 it is coded first with plan_try[d]'s
     * steps (cp_try[d]), and again from tier-1 on with the plan's when it does not fill its
     * budget with them; the quantised samples are the same integers for every plan. nb_try:
     * the plans, d = 1..nb_try (0: off); d_dmax: every code-block's band's most planes. */
    int           nb_try;
    J2kiCodingParams cp_try[NB_TRY_MAX];
    J2kiPlan     *plan_try[NB_TRY_MAX];
    J2kiCblkDev  *d_cblks_try[NB_TRY_MAX], *h_cblks_try[NB_TRY_MAX];
    double       *d_weight_try[NB_TRY_MAX];
    uint8_t      *d_dmax;
    J2kiPlan     *plan_t2;         /* a copy of plan that the slots' tier-2 tables are built from
                                      (j2ki_t2_cuda_init walks its packets, which resets its
                                      coding state) */
    size_t        data_size;       /* bytes of the code-blocks' byte area (the larger plan's) */
    size_t        nb_pass_total;
    /* per component: plane size and origin on the component grid, staging layout */
    uint32_t      comp_w[J2KC_MAX_COMPS], comp_h[J2KC_MAX_COMPS];
    uint32_t      comp_x0[J2KC_MAX_COMPS], comp_y0[J2KC_MAX_COMPS];
    int           comp_bytes[J2KC_MAX_COMPS];
    size_t        stage_off[J2KC_MAX_COMPS + 1];
    size_t        tmp_size;
    /* staging copy helpers (stage_frame): NULL when the frame is small or threads cannot be made */
    J2kiStager   *stager;
    /* the slots' host parts after the first (slot_preparer): slots 0 .. prep_ready - 1 are
     * ready; prep_done once the thread has ended, prep_err its error; all under prep_mtx */
    pthread_t     prep_thread;
    int           prep_started;
    int           prep_sync_ready;
    pthread_mutex_t prep_mtx;
    pthread_cond_t  prep_cond;
    int           prep_ready, prep_done, prep_err, prep_quit;
} CudaBackend;

#define CU(call) J2KI_CUDA(&b->log, &b->broken, call)

/* ---- context handling: every entry point runs between enter() and leave() ---- */

/* The calling thread's current device is saved in *prev and restored by leave(), so the
 * caller's own CUDA state is left as it was; with a caller context, it is pushed and popped. */
static int enter(CudaBackend *b, int *prev)
{
    int ret;
    if (b->ctx)
        return J2KI_CUDRV(&b->log, &b->broken, b->ctx_push(b->ctx));
    if ((ret = CU(cudaGetDevice(prev))) < 0)
        return ret;
    if (*prev != b->dev && (ret = CU(cudaSetDevice(b->dev))) < 0)
        return ret;
    return 0;
}

static void leave(CudaBackend *b, int prev)
{
    if (b->ctx) {
        CUcontext c;
        J2KI_CUDRV(&b->log, &b->broken, b->ctx_pop(&c));
    } else if (prev != b->dev) {
        CU(cudaSetDevice(prev));
    }
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

extern "C" int j2ki_cuda_device_count(const J2kiLog *log, int verbose)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        /* not an error by itself: backend=auto falls back to the reference backend */
        int ret = j2ki_cuda_map(e);
        j2ki_log(log, verbose ? J2KC_LOG_INFO : J2KC_LOG_VERBOSE, "no usable CUDA device: %s (%s)",
                 cudaGetErrorName(e), cudaGetErrorString(e));
        return ret == J2KC_ERR_NODEV ? ret : J2KC_ERR_CUDA;
    }
    for (int i = 0; verbose && i < n; i++) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, i) == cudaSuccess)
            j2ki_log(log, J2KC_LOG_INFO, "CUDA device %d: %s, compute %d.%d, %d SMs, %zu MiB", i, p.name,
                     p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem >> 20);
    }
    return n;
}

/* ---- init / uninit ---- */

static int finish_slot(CudaBackend *b, CudaSlot *s);
static void slot_timings(CudaBackend *b, CudaSlot *s, int again);
static int slot_fills(CudaBackend *b, CudaSlot *s);
static int slot_predict(CudaBackend *b, CudaSlot *s);
static int enqueue_code(CudaBackend *b, CudaSlot *s, int again);
static int slot_graphs(CudaBackend *b, CudaSlot *s);
static void copiers_start(CudaBackend *b);
static void copiers_stop(CudaBackend *b);

/** The slots' states under their locks. */
static void slot_set_state(CudaSlot *s, int state, int err)
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

/** Host worker of one slot: for each queued frame, the one sync point (the slot's last event),
 *  then the host part; the result is handed to wait() through state. */
static void *slot_worker(void *arg)
{
    CudaSlot *s = (CudaSlot *)arg;
    CudaBackend *b = s->b;
    for (;;) {
        int ret, prev = 0;
        pthread_mutex_lock(&s->mtx);
        while (!s->quit && s->state != SLOT_QUEUED)
            pthread_cond_wait(&s->cond, &s->mtx);
        if (s->quit && s->state != SLOT_QUEUED) {
            pthread_mutex_unlock(&s->mtx);
            return NULL;
        }
        pthread_mutex_unlock(&s->mtx);

        /* the frame's coding (enqueued by submit, from tier-1 on by slot_predict with qstep_try),
         * then at most once more: qstep_try, a frame that does not fill its budget with the
         * predicted steps is coded again from tier-1 on with the plan's (the quantised samples
         * are still in the slot) */
        for (int again = 0;; again = 1) {
            if ((ret = enter(b, &prev)) == 0) {
                if (again)
                    ret = enqueue_code(b, s, 1);
                else if (s->predict)
                    ret = slot_predict(b, s);
                if (ret == 0)      /* asleep until rate control is done (slot_init), then spinning */
                    ret = CU(cudaEventSynchronize(s->ev[EV_RC]));
                if (ret == 0)
                    ret = CU(cudaEventSynchronize(s->ev[EV_DONE]));
                if (ret == 0)
                    slot_timings(b, s, again);
                leave(b, prev);
            }
            if (ret == 0)
                ret = finish_slot(b, s);
            if (ret < 0 || !s->d || slot_fills(b, s))
                break;
            j2ki_log(&b->log, J2KC_LOG_DEBUG, "qstep_try: the frame does not fill its budget with %d "
                     "bit-plane%s more: coded again with qstep_rate's steps", s->d, s->d > 1 ? "s" : "");
            s->d = 0;
        }

        slot_set_state(s, SLOT_DONE, ret);
    }
}

static void slot_stop_worker(CudaSlot *s)
{
    if (!s->thread_started)
        return;
    pthread_mutex_lock(&s->mtx);
    s->quit = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->mtx);
    pthread_join(s->thread, NULL);
    s->thread_started = 0;
}

static void slot_free(CudaBackend *b, CudaSlot *s)
{
    if (s->st)
        cudaStreamSynchronize(s->st);
    cudaFree(s->d_samples);
    cudaFree(s->d_tmp);
    cudaFree(s->d_stage);
    cudaFree(s->d_data);
    cudaFree(s->d_passes);
    cudaFree(s->d_res);
    cudaFree(s->d_flag);
    cudaFree(s->d_t1_scratch);
    cudaFree(s->t1s.d_scratch);
    cudaFree(s->d_hist);
    cudaFreeHost(s->h_hist);
    cudaFreeHost(s->h_stage);
    cudaFreeHost(s->h_res);
    cudaFreeHost(s->h_flag);
    for (int i = 0; i < NB_EV; i++)
        if (s->ev[i])
            cudaEventDestroy(s->ev[i]);
    if (s->ev_ext)
        cudaEventDestroy(s->ev_ext);
    for (int k = 0; k < NB_TRY_MAX; k++) {
        if (s->g_t1[k])
            cudaGraphExecDestroy(s->g_t1[k]);
        if (s->g_fin[k])
            cudaGraphExecDestroy(s->g_fin[k]);
        s->g_t1[k] = s->g_fin[k] = NULL;
    }
    if (s->st)
        cudaStreamDestroy(s->st);
    j2ki_rc_cuda_free(&s->rc);
    j2ki_t2_cuda_free(&s->t2);
    for (int d = 1; d < NB_TRY_MAX; d++) {
        j2ki_rc_cuda_free(&s->rc_try[d]);
        j2ki_t2_cuda_free(&s->t2_try[d]);
    }
    cudaFree(s->d_cs);
    cudaFreeHost(s->h_t2res);
    cudaFreeHost(s->h_cs);
    if (s->sync_ready) {
        pthread_mutex_destroy(&s->mtx);
        pthread_cond_destroy(&s->cond);
    }
    memset(s, 0, sizeof(*s));
}

static void cuda_uninit(void *priv)
{
    CudaBackend *b = (CudaBackend *)priv;
    int entered, prev = 0;
    if (!b)
        return;
    if (b->prep_started) {
        pthread_mutex_lock(&b->prep_mtx);
        b->prep_quit = 1;
        pthread_mutex_unlock(&b->prep_mtx);
        pthread_join(b->prep_thread, NULL);
    }
    if (b->prep_sync_ready) {
        pthread_mutex_destroy(&b->prep_mtx);
        pthread_cond_destroy(&b->prep_cond);
    }
    copiers_stop(b);
    for (int i = 0; b->slots && i < b->nb_slots; i++)
        slot_stop_worker(&b->slots[i]);
    entered = b->dev_ready && enter(b, &prev) == 0;
    for (int i = 0; b->slots && i < b->nb_slots; i++)
        if (b->slots[i].st)
            cudaStreamSynchronize(b->slots[i].st);
    for (int i = 0; b->slots && i < b->nb_slots; i++)
        slot_free(b, &b->slots[i]);
    free(b->slots);
    cudaFree(b->d_cblks);
    cudaFree(b->d_weight);
    free(b->h_cblks);
    for (int d = 1; d < NB_TRY_MAX; d++) {
        cudaFree(b->d_cblks_try[d]);
        cudaFree(b->d_weight_try[d]);
        free(b->h_cblks_try[d]);
        j2ki_plan_free(&b->plan_try[d]);
    }
    cudaFree(b->d_dmax);
    j2ki_plan_free(&b->plan_t2);
    if (entered)
        leave(b, prev);
    free(b);
}

static int dev_alloc(CudaBackend *b, CudaSlot *s, void **p, size_t n)
{
    int ret = CU(j2ki_cuda_malloc(p, n));
    if (ret == 0)
        s->device_bytes += n;
    return ret;
}

/** Builds the device descriptor of every code-block of plan (in plan order) and the layout of
 *  the byte and pass areas: each block's bytes 16-aligned, its passes max_passes long (the
 *  slots' areas are sized for the larger of the two plans). */
static int build_cblks(CudaBackend *b, const J2kiPlan *plan, J2kiCblkDev **d_cblks, double **d_weight,
                       J2kiCblkDev **h_cblks)
{
    J2kiCblkDev *h = (J2kiCblkDev *)calloc(plan->nb_cblks ? plan->nb_cblks : 1, sizeof(*h));
    size_t data_off = 0, pass_off = 0;
    int ret;
    if (!h)
        return J2KC_ERR_NOMEM;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        const J2kiBand *band = &plan->bands[cb->band_idx];
        const J2kiTileComp *tc = &plan->tiles[band->tile].comps[band->comp];
        J2kiCblkDev *d = &h[i];
        d->buf = tc->buf_offset + (uint64_t)(band->buf_y0 + cb->y0 - band->y0) * tc->w +
                 (band->buf_x0 + cb->x0 - band->x0);
        d->stride = tc->w;
        d->w = (uint16_t)(cb->x1 - cb->x0);
        d->h = (uint16_t)(cb->y1 - cb->y0);
        d->orient = (uint8_t)band->orient;
        d->nb_mag_bits = (uint8_t)band->nb_mag_bits;
        d->frac_bits = (uint8_t)band->frac_bits;
        d->inv_step = b->cp->reversible ? 0.0f : band->inv_step;
        d->data_off = data_off;
        d->data_cap = cb->data_cap;
        d->pass_off = (uint32_t)pass_off;
        d->max_passes = (uint16_t)cb->max_passes;
        data_off += (cb->data_cap + 15u) & ~(size_t)15;
        pass_off += (size_t)cb->max_passes;
    }
    b->data_size = data_off > b->data_size ? data_off : b->data_size;
    b->nb_pass_total = pass_off > b->nb_pass_total ? pass_off : b->nb_pass_total;
    *h_cblks = h;
    ret = CU(j2ki_cuda_malloc((void **)d_cblks, (size_t)plan->nb_cblks * sizeof(*h)));
    if (ret == 0)
        ret = CU(cudaMemcpy(*d_cblks, h, (size_t)plan->nb_cblks * sizeof(*h), cudaMemcpyHostToDevice));
    if (ret == 0 && j2ki_t1s_enabled(b->cp)) {
        double *w = (double *)malloc((plan->nb_cblks ? plan->nb_cblks : 1) * sizeof(double));
        if (!w)
            return J2KC_ERR_NOMEM;
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            w[i] = plan->bands[plan->cblks[i].band_idx].dist_weight;
        ret = CU(j2ki_cuda_malloc((void **)d_weight, plan->nb_cblks * sizeof(double)));
        if (ret == 0)
            ret = CU(cudaMemcpy(*d_weight, w, plan->nb_cblks * sizeof(double), cudaMemcpyHostToDevice));
        free(w);
    }
    return ret;
}

/** qstep_try's histogram keys: every code-block's band's most planes (j2ki_quant_band_try_max,
 *  plan order), on the device for the quantiser (j2ki_quant_hist_cuda). */
static int build_dmax(CudaBackend *b, const J2kiPlan *plan)
{
    const size_t n = plan->nb_cblks ? plan->nb_cblks : 1;
    uint8_t *h = (uint8_t *)calloc(n, 1);
    int ret;
    if (!h)
        return J2KC_ERR_NOMEM;
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        h[i] = (uint8_t)j2ki_quant_band_try_max(&plan->bands[plan->cblks[i].band_idx], b->cp);
    ret = CU(j2ki_cuda_malloc((void **)&b->d_dmax, n));
    if (ret == 0)
        ret = CU(cudaMemcpy(b->d_dmax, h, n, cudaMemcpyHostToDevice));
    free(h);
    return ret;
}

/*
 * A slot is made in two parts (start-up time, issue 26). slot_init_device, for every slot at
 * creation: its device memory, the tier-2 and rate-control tables, its lock and its worker
 * thread, so that creation fails, with the device memory named, when the device cannot hold
 * every slot. slot_init_host: its page-locked host memory (the staging area, the results, the
 * codestream), its stream and events, then its graphs (slot_graphs). Page-locking is most of a
 * slot's cost (the device-checks log has the phases), so only slot 0's host part is made at
 * creation; the others are made by slot_preparer on a thread of their own while the first
 * frames are coded, and a submit to a slot not ready yet waits for it (slot_wait_prepared).
 * The slots share the encoder's plans: the device finish reads them only.
 */
static int slot_init_device(CudaBackend *b, CudaSlot *s)
{
    const J2kiPlan *plan = b->plan;
    size_t nb_samples = plan->nb_samples ? plan->nb_samples : 1;
    size_t stage = b->stage_off[b->cp->img.nb_comps];
    size_t nb_cblks = plan->nb_cblks ? plan->nb_cblks : 1;
    int ret;

    s->plan = b->plan_t2;
    for (int d = 1; d <= b->nb_try; d++)
        s->plan_try[d] = b->plan_try[d];
    s->t1_scratch_size = j2ki_t1_cuda_scratch_size_variant((uint32_t)plan->nb_cblks, plan->max_cblk_w,
                                                         plan->max_cblk_h, b->cp->hooks.t1_variant);
    if ((ret = dev_alloc(b, s, &s->d_samples, nb_samples * 4)) < 0 ||
        (ret = dev_alloc(b, s, &s->d_tmp, b->tmp_size)) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_stage, stage)) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_data, b->data_size)) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_passes, b->nb_pass_total * sizeof(J2kiPass))) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_res, nb_cblks * sizeof(J2kiCblkRes))) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_flag, sizeof(uint32_t))) < 0 ||
        (ret = dev_alloc(b, s, &s->d_t1_scratch, s->t1_scratch_size)) < 0)
        return ret;
    if (b->d_weight) {
        s->t1s.budget = b->cp->frame_bytes;
        s->t1s.d_weight = b->d_weight;
        s->t1s.scratch_size = j2ki_t1s_cuda_scratch_size((uint32_t)plan->nb_cblks);
        if ((ret = dev_alloc(b, s, &s->t1s.d_scratch, s->t1s.scratch_size)) < 0)
            return ret;
        for (int d = 1; d <= b->nb_try; d++) {
            s->t1s_try[d] = s->t1s;
            s->t1s_try[d].d_weight = b->d_weight_try[d];
        }
    }
    if (b->nb_try &&
        ((ret = dev_alloc(b, s, (void **)&s->d_hist, J2KI_QPRED_HIST * sizeof(*s->d_hist))) < 0 ||
         (ret = CU(cudaMallocHost((void **)&s->h_hist, J2KI_QPRED_HIST * sizeof(*s->h_hist)))) < 0))
        return ret;
    if ((ret = dev_alloc(b, s, (void **)&s->d_cs, b->max_out)) < 0 ||
        (ret = j2ki_t2_cuda_init(&s->t2, s->plan, b->h_cblks, s->d_data, s->d_passes, &b->log, &b->broken)) < 0 ||
        (ret = j2ki_rc_cuda_init(&s->rc, s->plan, s->t2, b->nb_slots, &b->log, &b->broken)) < 0)
        return ret;
    for (int d = 1; d <= b->nb_try; d++)
        if ((ret = j2ki_t2_cuda_init(&s->t2_try[d], s->plan_try[d], b->h_cblks_try[d], s->d_data, s->d_passes,
                                     &b->log, &b->broken)) < 0 ||
            (ret = j2ki_rc_cuda_init(&s->rc_try[d], s->plan_try[d], s->t2_try[d], b->nb_slots, &b->log,
                                     &b->broken)) < 0)
            return ret;

    s->b = b;
    if (pthread_mutex_init(&s->mtx, NULL))
        return J2KC_ERR_NOMEM;
    if (pthread_cond_init(&s->cond, NULL)) {
        pthread_mutex_destroy(&s->mtx);
        return J2KC_ERR_NOMEM;
    }
    s->sync_ready = 1;
    if (pthread_create(&s->thread, NULL, slot_worker, s)) {
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: cannot start a host worker thread");
        return J2KC_ERR_NOMEM;
    }
    s->thread_started = 1;
    return 0;
}

static int slot_init_host(CudaBackend *b, CudaSlot *s)
{
    size_t stage = b->stage_off[b->cp->img.nb_comps];
    size_t nb_cblks = b->plan->nb_cblks ? b->plan->nb_cblks : 1;
    int ret;

    if ((ret = CU(cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking))) < 0)
        return ret;
    /* The slot's worker sleeps until its frame's rate control is done (EV_RC is a blocking-sync
     * event), then spins for the rest (tier-2 and the download, a short tail; EV_DONE keeps
     * the driver's default schedule). Spinning for the whole frame, as the driver's default
     * does with one context, keeps a core busy per frame in flight, and with many frames in
     * flight the spinning threads outnumber the cores; sleeping until EV_DONE instead adds a
     * thread wake-up to every frame's latency, hence the split.
     * Measured: see bench/results/history.md#slot-workers-sleep */
    for (int i = 0; i < NB_EV; i++)
        if ((ret = CU(cudaEventCreateWithFlags(&s->ev[i], i == EV_RC || i == EV_HIST ? cudaEventBlockingSync
                                                                                     : cudaEventDefault))) < 0)
            return ret;
    if ((ret = CU(cudaEventCreateWithFlags(&s->ev_ext, cudaEventDisableTiming))) < 0 ||
        (ret = CU(cudaMallocHost((void **)&s->h_cs, b->max_out ? b->max_out : 1))) < 0 ||
        (ret = CU(cudaMallocHost((void **)&s->h_stage, stage ? stage : 1))) < 0 ||
        (ret = CU(cudaMallocHost((void **)&s->h_res, nb_cblks * sizeof(J2kiCblkRes)))) < 0 ||
        (ret = CU(cudaMallocHost((void **)&s->h_flag, sizeof(uint32_t)))) < 0 ||
        (ret = CU(cudaMallocHost((void **)&s->h_t2res, sizeof(*s->h_t2res)))) < 0)
        return ret;
    return slot_graphs(b, s);
}

/** Makes the host parts of slots 1 .. nb_slots - 1 in turn (slot_init_device's note), on its own
 *  thread; stops early when the backend is freed. */
static void *slot_preparer(void *arg)
{
    CudaBackend *b = (CudaBackend *)arg;
    struct timespec t0;
    int ret, prev = 0, i = 1, quit = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((ret = enter(b, &prev)) == 0) {
        for (; i < b->nb_slots && !quit; i++) {
            if ((ret = slot_init_host(b, &b->slots[i])) < 0)
                break;
            pthread_mutex_lock(&b->prep_mtx);
            b->prep_ready = i + 1;
            quit = b->prep_quit;
            pthread_cond_broadcast(&b->prep_cond);
            pthread_mutex_unlock(&b->prep_mtx);
        }
        leave(b, prev);
    }
    if (ret < 0)
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: slot %d's page-locked host memory, stream or graphs "
                 "could not be made (%s): frames for it fail", i, j2kc_strerror(ret));
    else if (!quit)
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend: slots 1 to %d prepared %.1f ms after slot 0",
                 b->nb_slots - 1, ms_since(&t0));
    pthread_mutex_lock(&b->prep_mtx);
    b->prep_err = ret;
    b->prep_done = 1;
    pthread_cond_broadcast(&b->prep_cond);
    pthread_mutex_unlock(&b->prep_mtx);
    return NULL;
}

/** Waits until the slot's host part is made (slot_preparer); its error when it cannot be. */
static int slot_wait_prepared(CudaBackend *b, int slot)
{
    int ret = 0;
    pthread_mutex_lock(&b->prep_mtx);
    while (slot >= b->prep_ready && !b->prep_done)
        pthread_cond_wait(&b->prep_cond, &b->prep_mtx);
    if (slot >= b->prep_ready)
        ret = b->prep_err < 0 ? b->prep_err : J2KC_ERR_INTERNAL;
    pthread_mutex_unlock(&b->prep_mtx);
    return ret;
}

static int cuda_init(void **priv, const J2kiCodingParams *cp, const J2kiPlan *plan,
                     const J2kiLog *log, int nb_slots, size_t max_out)
{
    CudaBackend *b = (CudaBackend *)calloc(1, sizeof(*b));
    int ret, n = 0, entered = 0, prev = 0;
    size_t stage = 0;
    /* creation's phases, for the verbose log (start-up time, issue 26): the device and its
     * context, the code-block tables, the slots' device parts, slot 0's host part */
    struct timespec t0;
    double ms_dev = 0.0, ms_tables = 0.0, ms_slots = 0.0, ms_slot0 = 0.0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    *priv = NULL;
    if (!b)
        return J2KC_ERR_NOMEM;
    b->log = *log;
    b->cp = cp;
    b->plan = plan;
    b->nb_slots = nb_slots;
    b->max_out = max_out;
    if (pthread_mutex_init(&b->prep_mtx, NULL)) {
        free(b);
        return J2KC_ERR_NOMEM;
    }
    if (pthread_cond_init(&b->prep_cond, NULL)) {
        pthread_mutex_destroy(&b->prep_mtx);
        free(b);
        return J2KC_ERR_NOMEM;
    }
    b->prep_sync_ready = 1;

    if (cp->cu_ctx) {
        cudaDriverEntryPointQueryResult q1, q2;
        b->ctx = (CUcontext)cp->cu_ctx;
        if ((ret = CU(cudaGetDriverEntryPointByVersion("cuCtxPushCurrent", (void **)&b->ctx_push, 12000,
                                                      cudaEnableDefault, &q1))) < 0 ||
            (ret = CU(cudaGetDriverEntryPointByVersion("cuCtxPopCurrent", (void **)&b->ctx_pop, 12000,
                                                      cudaEnableDefault, &q2))) < 0)
            goto fail;
        if (q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess) {
            j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA: the driver has no cuCtxPushCurrent/cuCtxPopCurrent");
            ret = J2KC_ERR_NODEV;
            goto fail;
        }
        if ((ret = enter(b, &prev)) < 0)
            goto fail;
        entered = b->dev_ready = 1;
        if ((ret = CU(cudaGetDevice(&b->dev))) < 0)
            goto fail;
    } else {
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) {
            ret = j2ki_cuda_map(e) == J2KC_ERR_NODEV ? J2KC_ERR_NODEV : J2KC_ERR_CUDA;
            j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: no usable GPU (no device, or no or too old NVIDIA "
                     "driver): %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
            goto fail;
        }
        b->dev = cp->gpu < 0 ? 0 : cp->gpu;
        if (n == 0 || b->dev >= n) {
            j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA: %s (%d device(s) found)",
                     n ? "the requested GPU index does not exist" : "no CUDA device", n);
            ret = J2KC_ERR_NODEV;
            goto fail;
        }
        if ((ret = enter(b, &prev)) < 0)
            goto fail;
        entered = b->dev_ready = 1;
    }
    {
        cudaDeviceProp p;
        if ((ret = CU(cudaGetDeviceProperties(&p, b->dev))) < 0)
            goto fail;
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend on device %d: %s (compute %d.%d)", b->dev, p.name,
                 p.major, p.minor);
    }
    ms_dev = ms_since(&t0);

    /* component planes (B.2: a component spans ceil(x/dx) on the reference grid) and staging */
    for (int c = 0; c < cp->img.nb_comps; c++) {
        uint32_t dx = (uint32_t)cp->img.dx[c], dy = (uint32_t)cp->img.dy[c];
        b->comp_x0[c] = j2ki_ceil_div(cp->img.x0, dx);
        b->comp_y0[c] = j2ki_ceil_div(cp->img.y0, dy);
        b->comp_w[c] = j2ki_ceil_div(cp->img.x0 + cp->img.width, dx) - b->comp_x0[c];
        b->comp_h[c] = j2ki_ceil_div(cp->img.y0 + cp->img.height, dy) - b->comp_y0[c];
        b->comp_bytes[c] = cp->img.depth[c] <= 8 ? 1 : 2;
        b->stage_off[c] = stage;
        stage += ((size_t)b->comp_w[c] * b->comp_h[c] * (size_t)b->comp_bytes[c] + 255) & ~(size_t)255;
    }
    b->stage_off[cp->img.nb_comps] = stage;
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < cp->img.nb_comps; c++) {
            const J2kiTileComp *tc = &plan->tiles[t].comps[c];
            size_t sz = j2ki_dwt_cuda_tmp_size(tc->w, tc->h);
            if (sz > b->tmp_size)
                b->tmp_size = sz;
        }

    if ((ret = j2ki_plan_create(&b->plan_t2, cp, &b->log)) < 0)
        goto fail;
    b->nb_try = j2ki_quant_try_planes(cp);
    for (int d = 1; d <= b->nb_try; d++) {
        j2ki_quant_try_params(&b->cp_try[d], cp, d);
        if ((ret = j2ki_plan_create(&b->plan_try[d], &b->cp_try[d], &b->log)) < 0)
            goto fail;
    }
    if ((ret = build_cblks(b, plan, &b->d_cblks, &b->d_weight, &b->h_cblks)) < 0)
        goto fail;
    for (int d = 1; d <= b->nb_try; d++)
        if ((ret = build_cblks(b, b->plan_try[d], &b->d_cblks_try[d], &b->d_weight_try[d], &b->h_cblks_try[d])) < 0)
            goto fail;
    if (b->nb_try && (ret = build_dmax(b, plan)) < 0)
        goto fail;
    ms_tables = ms_since(&t0) - ms_dev;
    if (!(b->slots = (CudaSlot *)calloc((size_t)nb_slots, sizeof(*b->slots)))) {
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < nb_slots; i++)
        if ((ret = slot_init_device(b, &b->slots[i])) < 0)
            goto fail;
    ms_slots = ms_since(&t0) - ms_dev - ms_tables;
    if ((ret = slot_init_host(b, &b->slots[0])) < 0)
        goto fail;
    ms_slot0 = ms_since(&t0) - ms_dev - ms_tables - ms_slots;
    b->prep_ready = 1;
    if (nb_slots > 1) {
        if (pthread_create(&b->prep_thread, NULL, slot_preparer, b)) {
            j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: cannot start a thread");
            ret = J2KC_ERR_NOMEM;
            goto fail;
        }
        b->prep_started = 1;
    }
    copiers_start(b);
    {
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend: %d slot(s) of %.1f MiB device memory each, %d staging "
                 "copy thread(s), tier-1 by %s; tier-1 and tier-2 launched as CUDA graphs", nb_slots,
                 (double)b->slots[0].device_bytes / 1048576.0, j2ki_stager_threads(b->stager),
                 j2ki_t1_cuda_kernel_name(cp->hooks.t1_variant, cp->hooks.smem_optin, plan->max_cblk_w,
                                          plan->max_cblk_h));
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend created in %.1f ms: device and context %.1f, "
                 "code-block tables %.1f, the slots' device memory %.1f, slot 0's page-locked memory and graphs "
                 "%.1f%s", ms_since(&t0), ms_dev, ms_tables, ms_slots, ms_slot0,
                 nb_slots > 1 ? " (the other slots' on a thread of their own)" : "");
    }
    leave(b, prev);
    *priv = b;
    return 0;
fail:
    if (ret == J2KC_ERR_DEVMEM) {
        size_t mem_free = 0, mem_total = 0;
        (void)cudaMemGetInfo(&mem_free, &mem_total);
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA: out of device memory while allocating %d frame slot(s) on "
                 "device %d (%.0f of %.0f MiB free): fewer frames in flight (async_depth) need less", nb_slots,
                 b->dev, (double)mem_free / 1048576.0, (double)mem_total / 1048576.0);
    }
    /* reported: the thread's last error must not surface at a later encoder's launch checks */
    if (entered) {
        (void)cudaGetLastError();
        leave(b, prev);
    }
    cuda_uninit(b);
    return ret;
}

/* ---- submit ---- */

/** Starts the staging helpers (none for frames under STAGE_PAR_BYTES or on one core; fewer
 *  when threads cannot be made: the submitting thread then copies alone). */
static void copiers_start(CudaBackend *b)
{
    size_t bytes = b->stage_off[b->cp->img.nb_comps];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cores > 1 ? (int)(cores - 1 < STAGE_COPIERS ? cores - 1 : STAGE_COPIERS) : 0;
    if (bytes >= STAGE_PAR_BYTES && want > 0)
        b->stager = j2ki_stager_new(want);
}

static void copiers_stop(CudaBackend *b)
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
    return CU(cudaMemcpyAsync(u->s->d_stage + off, u->s->h_stage + off, len, cudaMemcpyHostToDevice, u->s->st));
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
        size_t row = (size_t)job->w[c] * (size_t)job->bytes[c];
        if ((ret = CU(cudaMemcpy2DAsync(s->d_stage + job->off[c], row, job->src[c], (size_t)job->stride[c], row,
                                        job->h[c], cudaMemcpyHostToDevice, s->st))) < 0)
            return ret;
    }
    return 0;
}

/** The other slots whose device work is queued (their decide grids may run beside this one's). */
static int busy_slots(CudaBackend *b, const CudaSlot *self)
{
    int n = 0;
    for (int i = 0; i < b->nb_slots; i++) {
        CudaSlot *o = &b->slots[i];
        if (o != self)
            n += slot_state(o) == SLOT_QUEUED;
    }
    return n;
}

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

static int slot_graphs(CudaBackend *b, CudaSlot *s)
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
static int enqueue_code(CudaBackend *b, CudaSlot *s, int again)
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
static int slot_predict(CudaBackend *b, CudaSlot *s)
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

static int enqueue_frame(CudaBackend *b, CudaSlot *s, const J2kcFrame *f)
{
    const J2kiCodingParams *cp = b->cp;
    const J2kiPlan *plan = b->plan;
    int nb_comps = cp->img.nb_comps, ret, direct = 0;
    HostLayout hl;
    /* page-locked host planes are copied up straight from the caller's memory (saving a
     * host copy of the whole frame, about 5 ms for 4K 4:4:4 12-bit); submit then waits for
     * that copy, since the caller may reuse its planes once submit returns */
    if (f->mem != J2KC_MEM_CUDA) {
        host_layout(b, f, &hl);
        direct = frame_pinned(&hl);
    } else {
        memset(&hl, 0, sizeof(hl));
    }

    if ((ret = CU(cudaEventRecord(s->ev[EV_START], s->st))) < 0 ||
        (ret = CU(j2ki_cuda_fault_enqueue(s->st))) < 0)
        return ret;
    if (cp->cu_stream) {
        if ((ret = CU(cudaEventRecord(s->ev_ext, (cudaStream_t)cp->cu_stream))) < 0 ||
            (ret = CU(cudaStreamWaitEvent(s->st, s->ev_ext, 0))) < 0)
            return ret;
    }
    if (f->mem == J2KC_MEM_CUDA) {
        /* the frame's producer: its stream, or without one the context's legacy default stream
         * (FFmpeg's CUDA uploads are asynchronous on hwctx->stream, NULL by default), which
         * the slots' non-blocking streams would not wait for by themselves */
        cudaStream_t prod = f->cu_stream ? (cudaStream_t)f->cu_stream : cudaStreamLegacy;
        if ((ret = CU(cudaEventRecord(s->ev_ext, prod))) < 0 ||
            (ret = CU(cudaStreamWaitEvent(s->st, s->ev_ext, 0))) < 0)
            return ret;
    } else if (direct) {
        if ((ret = upload_direct(b, s, &hl)) < 0)
            return ret;
    } else if ((ret = stage_frame(b, s, &hl)) < 0) {   /* pageable: staged, uploaded part by part */
        return ret;
    }
    if ((ret = CU(cudaEventRecord(s->ev[EV_UPLOADED], s->st))) < 0)
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
            if ((ret = CU(j2ki_load_mct_cuda(dst, src, 3, tile->comps[0].w, tile->comps[0].h,
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
            if ((ret = CU(j2ki_load_mct_cuda(dst, src, 1, tc->w, tc->h,
                                             cp->reversible ? J2KI_LOAD_INT : J2KI_LOAD_FLOAT, s->st))) < 0)
                return ret;
        }
        for (c = 0; c < nb_comps; c++) {
            const J2kiTileComp *tc = &tile->comps[c];
            void *buf = (uint8_t *)s->d_samples + tc->buf_offset * 4;
            if (cp->reversible)
                ret = CU(j2ki_dwt53_fwd_cuda((int32_t *)buf, tc->w, tc->x0, tc->y0, tc->x1, tc->y1,
                                             cp->nb_levels, s->d_tmp, s->st));
            else
                ret = CU(j2ki_dwt97_fwd_cuda((float *)buf, tc->w, tc->x0, tc->y0, tc->x1, tc->y1,
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
        ((ret = CU(cudaMemsetAsync(s->d_hist, 0, J2KI_QPRED_HIST * sizeof(*s->d_hist), s->st))) < 0 ||
         (ret = CU(j2ki_quant_hist_cuda(s->d_samples, b->d_cblks, plan->nb_cblks, b->d_dmax, s->d_hist,
                                        s->st))) < 0))
        return ret;
    if (!s->predict && !cp->reversible &&
        (ret = CU(j2ki_quant_cuda(s->d_samples, b->d_cblks, plan->nb_cblks, s->st))) < 0)
        return ret;
    if ((ret = CU(cudaEventRecord(s->ev[EV_DWT], s->st))) < 0)
        return ret;
    /* the histogram to the host, the stream's last work until slot_predict enqueues the rest */
    if (s->predict &&
        ((ret = CU(cudaMemcpyAsync(s->h_hist, s->d_hist, J2KI_QPRED_HIST * sizeof(*s->d_hist),
                                   cudaMemcpyDeviceToHost, s->st))) < 0 ||
         (ret = CU(cudaEventRecord(s->ev[EV_HIST], s->st))) < 0))
        return ret;
    if (!s->predict && (ret = enqueue_code(b, s, 0)) < 0)
        return ret;
    if (direct && (ret = CU(cudaEventSynchronize(s->ev[EV_UPLOADED]))) < 0)
        return ret;
    return 0;
}

static int cuda_submit(void *priv, int slot, const J2kcFrame *f)
{
    CudaBackend *b = (CudaBackend *)priv;
    CudaSlot *s = &b->slots[slot];
    int ret, prev = 0;
    if (b->broken)
        return J2KC_ERR_BROKEN;
    if ((ret = slot_wait_prepared(b, slot)) < 0)
        return ret;
    pthread_mutex_lock(&s->mtx);
    /* the front end waits before reusing a slot */
    ret = s->state == SLOT_QUEUED ? J2KC_ERR_INTERNAL : 0;
    s->state = SLOT_IDLE;
    pthread_mutex_unlock(&s->mtx);
    if (ret < 0)
        return ret;
    if ((ret = enter(b, &prev)) < 0)
        return ret;
    ret = enqueue_frame(b, s, f);
    leave(b, prev);
    if (ret < 0)
        return ret;
    slot_set_state(s, SLOT_QUEUED, 0);
    return 0;
}

/* ---- wait ---- */

static float ev_ms(CudaBackend *b, CudaSlot *s, int e0, int e1)
{
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, s->ev[e0], s->ev[e1]) != cudaSuccess)
        ms = 0.0f;
    return ms;
}

/** Device stage times of the slot's finished frame (inside enter/leave: events are CUDA calls);
 *  again: after its second coding (qstep_try), whose stage times are added. */
static void slot_timings(CudaBackend *b, CudaSlot *s, int again)
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
    int ret, prev = 0;
    if (r->err < 0) {
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA rate control / tier-2: %s (reason %d, layer %d)",
                 j2kc_strerror(r->err), r->rc_why, r->rc_why_arg);
        return r->err;
    }
    if (r->len > b->max_out)
        return J2KC_ERR_INTERNAL;
    if (cp->rc_mode != J2KI_RC_BYTES) {
        if ((ret = enter(b, &prev)) < 0)
            return ret;
        ret = CU(cudaMemcpyAsync(s->h_cs, s->d_cs, r->len, cudaMemcpyDeviceToHost, s->st));
        if (ret == 0)
            ret = CU(cudaStreamSynchronize(s->st));     /* a short copy: spinning */
        leave(b, prev);
        if (ret < 0)
            return ret;
    }
    if ((ret = j2ki_profile_finish_levels(cp, s->h_cs, (size_t)r->len, &b->log)) < 0)
        return ret;
    if (cp->rc_mode == J2KI_RC_BYTES && r->len > cp->frame_bytes) {
        j2ki_log(&b->log, J2KC_LOG_ERROR, "internal: codestream of %llu bytes exceeds the budget of %llu",
                 (unsigned long long)r->len, (unsigned long long)cp->frame_bytes);
        return J2KC_ERR_INTERNAL;
    }
    if (cp->rc_mode == J2KI_RC_BYTES)
        j2ki_log(&b->log, J2KC_LOG_DEBUG, "CUDA rate control: %llu bytes for a budget of %llu, %d thresholds "
                 "sized in %d rounds", (unsigned long long)r->len, (unsigned long long)cp->frame_bytes,
                 (int)r->nb_probes, (int)r->nb_rounds);
    s->cs = s->h_cs;
    s->cs_len = (size_t)r->len;
    return 0;
}

/** qstep_try: whether the frame coded with plan_try[s->d] filled its budget (j2ki_rc_mask_fills). */
static int slot_fills(CudaBackend *b, CudaSlot *s)
{
    return j2ki_rc_mask_fills(s->h_t2res->hull_mask, b->cp->img.nb_comps);
}

/** Host part of a finished slot: checks tier-1's results, then takes the codestream. */
static int finish_slot(CudaBackend *b, CudaSlot *s)
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

static int cuda_wait(void *priv, int slot, int block, const uint8_t **data, size_t *size)
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

static void cuda_stats(void *priv, int slot, J2kcStats *st)
{
    CudaBackend *b = (CudaBackend *)priv;
    *st = b->slots[slot].stats;
}

extern "C" const J2kiBackendOps j2ki_backend_cuda = {
    "cuda", cuda_init, cuda_submit, cuda_wait, cuda_stats, cuda_uninit,
};
