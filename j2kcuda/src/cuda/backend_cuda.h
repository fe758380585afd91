/*
 * The CUDA backend: per frame slot, one stream that uploads the frame, runs load + MCT
 * (Annex G), the DWT (Annex F), quantisation (Annex E), tier-1 (Annex D), PCRD-opt rate
 * control (rc_cuda.cu) and packetisation (t2_cuda.cu) on the device, and brings back the
 * finished codestream, the reference backend's bytes.
 *
 * Page-locked host memory is detected by cuda_pinned.cu; the hardware queues the backend
 * recommends (CUDA_DEVICE_MAX_CONNECTIONS, set by the application) are logged by cuda_env.cu;
 * the driver and the context are made ahead, during creation, by cuda_warm.cu; the device's
 * primary context is kept for the life of the process by cu_primary.cu.
 *
 * Memory: everything is sized from the plan and allocated once: the shared tables in init(),
 * which checks that the slots will fit, the slots' by the preparer thread while the first frames
 * are coded (backend_cuda.cu, slot_init_device); nothing is allocated per frame. Per slot (device): the frame's samples (4 bytes each, int32 or float in place), DWT
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
 *
 * This header: the state the backend's files share (CudaSlot, CudaBackend) and the functions
 * one file calls in another.
 */
#ifndef J2KI_BACKEND_CUDA_H
#define J2KI_BACKEND_CUDA_H

extern "C" {
#include "core/backend.h"
#include "core/clock.h"
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
#include "cuda/ht_cuda.h"
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
    CUstream  st;
    CUevent   ev[NB_EV];
    CUevent   ev_ext;          /* recorded on a caller's stream, waited on by st */
    /* a device frame of another context, copied in (cuda_peer.cu): made at its first such frame */
    uint8_t      *d_peer;
    size_t        peer_size;
    CUevent       ev_peer;         /* of ev_peer_ctx, the frame's context: recorded on its stream */
    CUcontext     ev_peer_ctx;
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
    /* graphs (slot_graphs, on the submitting thread): tier-1 and tier-2 .. download per plan
     * (index d); want_graphs: bit d, a frame took plan d before its graphs were made */
    CUgraphExec g_t1[NB_TRY_MAX], g_fin[NB_TRY_MAX];
    unsigned      want_graphs;
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

typedef struct CudaBackend {
    J2kiLog       log;
    const J2kiCodingParams *cp;
    const J2kiPlan *plan;
    int           dev;
    CUcontext     ctx;             /* the caller's context, or dev's primary context (kept for the
                                      process, cu_primary.h): neither released by the backend */
    int           broken;          /* sticky J2KC_ERR_* of the first CUDA failure */
    int           dev_ready;       /* the device (or caller context) was entered once */
    int           nb_slots;
    CudaSlot     *slots;
    size_t        max_out;
    J2kiCblkDev  *d_cblks;         /* read-only, shared by the slots */
    double       *d_weight;        /* every block's band dist_weight (early stop, ht=1's plane
                                      chooser), shared */
    int64_t       ht_target32[NB_TRY_MAX]; /* ht=1: the bytes the planes may fill, per plan
                                      (j2ki_ht_plane_target32) */
    J2kiCblkDev  *h_cblks;         /* host copy (byte and pass offsets) */
    double       *h_weight;        /* d_weight's host image until it is uploaded */
    double       *h_weight_try[NB_TRY_MAX];
    uint8_t      *h_dmax;          /* d_dmax's host image until it is uploaded */
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
    size_t        slot_plan_bytes; /* a slot's device memory as the fit check plans it (slots_fit) */
    /* staging copy helpers (stage_frame): NULL when the frame is small or threads cannot be made */
    J2kiStager   *stager;
    /* the slots after the first, both parts (slot_preparer): slots 0 .. prep_ready - 1 are
     * ready; prep_done once the thread has ended, prep_err its error; all under prep_mtx */
    pthread_t     prep_thread;
    int           prep_started;
    int           prep_sync_ready;
    pthread_mutex_t prep_mtx;
    pthread_cond_t  prep_cond;
    int           prep_ready, prep_done, prep_err, prep_quit;
} CudaBackend;

/* A driver call by name, CUDRV(cuStreamSynchronize, s->st), and a CUresult expression,
 * CUR(j2ki_cuda_malloc(&p, n)) or CUR(j2ki_quant_cuda(...)) (a stage's launches). */
#define CUDRV(fn, ...) J2KI_CU(&b->log, &b->broken, fn, __VA_ARGS__)
#define CUR(call) J2KI_CUDRV(&b->log, &b->broken, call)

/* ---- shared between the backend's files: the context (cuda_context.cu), the slot states
 * and the entry points (cuda_slot.cu), the workers (cuda_worker.cu), upload and staging
 * (cuda_upload.cu), the launches and graphs (cuda_graph.cu), creation (backend_cuda.cu) ---- */
/* C++ linkage in a namespace of the library's own: no name of these can meet an application's
 * when the library is linked statically. */
namespace j2ki_cuda {

int enter(CudaBackend *b);
void leave(CudaBackend *b);
double ms_since(const struct timespec *t0);
void slot_set_state(CudaSlot *s, int state, int err);
void *slot_worker(void *arg);
void slot_stop_worker(CudaSlot *s);
int slot_init_device(CudaBackend *b, CudaSlot *s);
int slot_init_host(CudaBackend *b, CudaSlot *s);
void *slot_preparer(void *arg);
int slot_wait_prepared(CudaBackend *b, int slot);
void copiers_start(CudaBackend *b);
void copiers_stop(CudaBackend *b);
int busy_slots(CudaBackend *b, const CudaSlot *self);
int slot_graphs(CudaBackend *b, CudaSlot *s);
int enqueue_code(CudaBackend *b, CudaSlot *s, int again);
int slot_predict(CudaBackend *b, CudaSlot *s);
int enqueue_frame(CudaBackend *b, CudaSlot *s, const J2kcFrame *f);
/* device frame f of another context (f->cu_ctx) copied into s->d_peer on s's stream, after
 * its producer; *out: the frame as it lies there (cuda_peer.cu) */
int peer_frame(CudaBackend *b, CudaSlot *s, const J2kcFrame *f, J2kcFrame *out);
int cuda_submit(void *priv, int slot, const J2kcFrame *f);
void slot_timings(CudaBackend *b, CudaSlot *s, int again);
int slot_fills(CudaBackend *b, CudaSlot *s);
int finish_slot(CudaBackend *b, CudaSlot *s);
int cuda_wait(void *priv, int slot, int block, const uint8_t **data, size_t *size);
void cuda_stats(void *priv, int slot, J2kcStats *st);

}  // namespace j2ki_cuda

#endif
