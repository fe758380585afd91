/*
 * The CUDA backend (backend.h): creation and destruction. Everything a slot needs is sized
 * from the plan and allocated here, nothing per frame; the design of the whole backend is in
 * backend_cuda.h, its parts in the files it names.
 */
#include "cuda/backend_cuda.h"
#include "cuda/cu_code.h"
#include "cuda/cu_primary.h"
#include "cuda/cuda_launch.h"
#include "ref/ht_plane.h"

namespace j2ki_cuda {

static void slot_free(CudaBackend *b, CudaSlot *s)
{
    if (s->st)
        J2KI_CUFN(cuStreamSynchronize)(s->st);
    j2ki_cuda_free(s->d_samples);
    j2ki_cuda_free(s->d_tmp);
    j2ki_cuda_free(s->d_stage);
    j2ki_cuda_free(s->d_peer);
    j2ki_cuda_free(s->d_data);
    j2ki_cuda_free(s->d_passes);
    j2ki_cuda_free(s->d_res);
    j2ki_cuda_free(s->d_flag);
    j2ki_cuda_free(s->d_t1_scratch);
    j2ki_cuda_free(s->t1s.d_scratch);
    j2ki_cuda_free(s->d_hist);
    j2ki_cuda_free_host(s->h_hist);
    j2ki_cuda_free_host(s->h_stage);
    j2ki_cuda_free_host(s->h_res);
    j2ki_cuda_free_host(s->h_flag);
    for (int i = 0; i < NB_EV; i++)
        if (s->ev[i])
            J2KI_CUFN(cuEventDestroy)(s->ev[i]);
    if (s->ev_ext)
        J2KI_CUFN(cuEventDestroy)(s->ev_ext);
    if (s->ev_peer)
        J2KI_CUFN(cuEventDestroy)(s->ev_peer);
    for (int k = 0; k < NB_TRY_MAX; k++) {
        if (s->g_t1[k])
            J2KI_CUFN(cuGraphExecDestroy)(s->g_t1[k]);
        if (s->g_fin[k])
            J2KI_CUFN(cuGraphExecDestroy)(s->g_fin[k]);
        s->g_t1[k] = s->g_fin[k] = NULL;
    }
    if (s->st)
        J2KI_CUFN(cuStreamDestroy)(s->st);
    j2ki_rc_cuda_free(&s->rc);
    j2ki_t2_cuda_free(&s->t2);
    for (int d = 1; d < NB_TRY_MAX; d++) {
        j2ki_rc_cuda_free(&s->rc_try[d]);
        j2ki_t2_cuda_free(&s->t2_try[d]);
    }
    j2ki_cuda_free(s->d_cs);
    j2ki_cuda_free_host(s->h_t2res);
    j2ki_cuda_free_host(s->h_cs);
    if (s->sync_ready) {
        pthread_mutex_destroy(&s->mtx);
        pthread_cond_destroy(&s->cond);
    }
    memset(s, 0, sizeof(*s));
}

static void cuda_uninit(void *priv)
{
    CudaBackend *b = (CudaBackend *)priv;
    int entered;
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
    entered = b->dev_ready && enter(b) == 0;
    for (int i = 0; b->slots && i < b->nb_slots; i++)
        if (b->slots[i].st)
            J2KI_CUFN(cuStreamSynchronize)(b->slots[i].st);
    for (int i = 0; b->slots && i < b->nb_slots; i++)
        slot_free(b, &b->slots[i]);
    free(b->slots);
    j2ki_cuda_free(b->d_cblks);
    j2ki_cuda_free(b->d_weight);
    free(b->h_cblks);
    free(b->h_weight);
    free(b->h_dmax);
    for (int d = 1; d < NB_TRY_MAX; d++) {
        j2ki_cuda_free(b->d_cblks_try[d]);
        j2ki_cuda_free(b->d_weight_try[d]);
        free(b->h_cblks_try[d]);
        free(b->h_weight_try[d]);
        j2ki_plan_free(&b->plan_try[d]);
    }
    j2ki_cuda_free(b->d_dmax);
    j2ki_plan_free(&b->plan_t2);
    if (entered)
        leave(b);
    free(b);
}

/* A CUDA call of a slot's making: logged, never stored in the backend's sticky `broken`,
 * which is the frame path's (a slot that cannot be made answers its own frames; its making
 * leaves nothing enqueued). */
#define SLOT_CUR(call) J2KI_CUDRV(&b->log, NULL, call)
#define SLOT_CUDRV(fn, ...) J2KI_CU(&b->log, NULL, fn, __VA_ARGS__)

static int dev_alloc(CudaBackend *b, CudaSlot *s, void **p, size_t n)
{
    int ret = SLOT_CUR(j2ki_cuda_malloc(p, n));
    if (ret == 0)
        s->device_bytes += n;
    return ret;
}

/** Page-locked host memory of a slot. The driver reports a refusal as CUDA_ERROR_OUT_OF_MEMORY,
 *  the code of a full device; it is the host's memory here, so the error is J2KC_ERR_NOMEM and
 *  the message names page-locked host memory (not the device's). */
static int host_alloc(CudaBackend *b, void **p, size_t n)
{
    CUresult e = j2ki_cuda_malloc_host(p, n);
    if (e == CUDA_SUCCESS)
        return 0;
    *p = NULL;
    if (e != CUDA_ERROR_OUT_OF_MEMORY)
        return SLOT_CUR(e);
    j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: cannot allocate %zu bytes of page-locked host memory "
             "(cuMemHostAlloc): the host's locked-memory limit or its free memory; fewer frames in flight "
             "(async_depth) need less", n);
    return J2KC_ERR_NOMEM;
}

/** The host image of every code-block's device descriptor (plan order) and the layout of the
 *  byte and pass areas: each block's bytes 16-aligned, its passes max_passes long (the slots'
 *  areas are sized for the larger of the two plans); with tier-1's early stop, every block's
 *  band dist_weight in *h_weight. No CUDA call: made while the context is (cuda_warm.cu). */
static int cblks_host(CudaBackend *b, const J2kiPlan *plan, J2kiCblkDev **h_cblks, double **h_weight)
{
    J2kiCblkDev *h = (J2kiCblkDev *)calloc(plan->nb_cblks ? plan->nb_cblks : 1, sizeof(*h));
    size_t data_off = 0, pass_off = 0;
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
    if (j2ki_t1s_enabled(b->cp) || (b->cp->cblk_style & J2KI_CBLK_HT)) {
        double *w = (double *)malloc((plan->nb_cblks ? plan->nb_cblks : 1) * sizeof(double));
        if (!w)
            return J2KC_ERR_NOMEM;
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            w[i] = plan->bands[plan->cblks[i].band_idx].dist_weight;
        *h_weight = w;
    }
    return 0;
}

/** The code-block descriptors (and the weights, *h_weight, freed here) on the device. */
static int cblks_upload(CudaBackend *b, const J2kiPlan *plan, const J2kiCblkDev *h, double **h_weight,
                        J2kiCblkDev **d_cblks, double **d_weight)
{
    int ret = CUR(j2ki_cuda_malloc((void **)d_cblks, (size_t)plan->nb_cblks * sizeof(*h)));
    if (ret == 0)
        ret = CUDRV(cuMemcpyHtoD, j2ki_dptr(*d_cblks), h, (size_t)plan->nb_cblks * sizeof(*h));
    if (ret == 0 && *h_weight) {
        ret = CUR(j2ki_cuda_malloc((void **)d_weight, plan->nb_cblks * sizeof(double)));
        if (ret == 0)
            ret = CUDRV(cuMemcpyHtoD, j2ki_dptr(*d_weight), *h_weight, plan->nb_cblks * sizeof(double));
    }
    free(*h_weight);
    *h_weight = NULL;
    return ret;
}

/** qstep_try's histogram keys: every code-block's band's most planes (j2ki_quant_band_try_max,
 *  plan order), for the quantiser (j2ki_quant_hist_cuda); on the host first (b->h_dmax). */
static int dmax_host(CudaBackend *b, const J2kiPlan *plan)
{
    b->h_dmax = (uint8_t *)calloc(plan->nb_cblks ? plan->nb_cblks : 1, 1);
    if (!b->h_dmax)
        return J2KC_ERR_NOMEM;
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        b->h_dmax[i] = (uint8_t)j2ki_quant_band_try_max(&plan->bands[plan->cblks[i].band_idx], b->cp);
    return 0;
}

static int dmax_upload(CudaBackend *b, const J2kiPlan *plan)
{
    const size_t n = plan->nb_cblks ? plan->nb_cblks : 1;
    int ret = CUR(j2ki_cuda_malloc((void **)&b->d_dmax, n));
    if (ret == 0)
        ret = CUDRV(cuMemcpyHtoD, j2ki_dptr(b->d_dmax), b->h_dmax, n);
    free(b->h_dmax);
    b->h_dmax = NULL;
    return ret;
}

/*
 * A slot is made in two parts (start-up time, issue 26). slot_init_device: its device memory,
 * the tier-2 and rate-control tables and its worker thread; slot_init_host: its page-locked
 * host memory (the staging area, the results, the codestream), its stream and events. Its
 * graphs are captured on the thread that submits its first frame (cuda_graph.cu). Creation
 * makes no slot: slot_preparer, on a thread of its own, makes slot 0, then slots 1.., both
 * parts, while the first frames are coded, and a submit to a slot not ready yet waits for it
 * (slot_wait_prepared). So that a device too small for every slot still fails creation, with
 * the device memory named, creation checks the device's free memory against the slots' planned
 * sizes first (slots_fit); a slot that does not fit after all, or a host that cannot page-lock
 * a slot's memory, fails the frames of that slot and the later ones (J2KC_ERR_DEVMEM or
 * J2KC_ERR_NOMEM, the memory named), and the slots made keep coding: a slot's making reports
 * its errors without marking the backend broken (SLOT_CUR, SLOT_CUDRV). Every slot's lock is made at
 * creation (slot_init_sync): the slots look at each other's states. The slots share the
 * encoder's plans: the device finish reads them only.
 */
static int slot_init_sync(CudaBackend *b, CudaSlot *s)
{
    s->b = b;
    if (pthread_mutex_init(&s->mtx, NULL))
        return J2KC_ERR_NOMEM;
    if (pthread_cond_init(&s->cond, NULL)) {
        pthread_mutex_destroy(&s->mtx);
        return J2KC_ERR_NOMEM;
    }
    s->sync_ready = 1;
    return 0;
}

static size_t slot_t1_scratch_size(const CudaBackend *b);

int slot_init_device(CudaBackend *b, CudaSlot *s)
{
    const J2kiPlan *plan = b->plan;
    size_t nb_samples = plan->nb_samples ? plan->nb_samples : 1;
    size_t stage = b->stage_off[b->cp->img.nb_comps];
    size_t nb_cblks = plan->nb_cblks ? plan->nb_cblks : 1;
    int ret;

    s->plan = b->plan_t2;
    for (int d = 1; d <= b->nb_try; d++)
        s->plan_try[d] = b->plan_try[d];
    s->t1_scratch_size = slot_t1_scratch_size(b);
    if ((ret = dev_alloc(b, s, &s->d_samples, nb_samples * 4)) < 0 ||
        (ret = dev_alloc(b, s, &s->d_tmp, b->tmp_size)) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_stage, stage)) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_data, b->data_size)) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_passes, b->nb_pass_total * sizeof(J2kiPass))) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_res, nb_cblks * sizeof(J2kiCblkRes))) < 0 ||
        (ret = dev_alloc(b, s, (void **)&s->d_flag, sizeof(uint32_t))) < 0 ||
        (ret = dev_alloc(b, s, &s->d_t1_scratch, s->t1_scratch_size)) < 0)
        return ret;
    if (j2ki_t1s_enabled(b->cp)) {
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
         (ret = host_alloc(b, (void **)&s->h_hist, J2KI_QPRED_HIST * sizeof(*s->h_hist))) < 0))
        return ret;
    /* the tables are made without a sticky target (SLOT_CUR's note), then take broken for the
     * frames */
    if ((ret = dev_alloc(b, s, (void **)&s->d_cs, b->max_out)) < 0 ||
        (ret = j2ki_t2_cuda_init(&s->t2, s->plan, b->h_cblks, s->d_data, s->d_passes, &b->log, NULL)) < 0 ||
        (ret = j2ki_rc_cuda_init(&s->rc, s->plan, s->t2, b->nb_slots, &b->log, NULL)) < 0)
        return ret;
    j2ki_t2_cuda_sticky(s->t2, &b->broken);
    j2ki_rc_cuda_sticky(s->rc, &b->broken);
    for (int d = 1; d <= b->nb_try; d++) {
        if ((ret = j2ki_t2_cuda_init(&s->t2_try[d], s->plan_try[d], b->h_cblks_try[d], s->d_data, s->d_passes,
                                     &b->log, NULL)) < 0 ||
            (ret = j2ki_rc_cuda_init(&s->rc_try[d], s->plan_try[d], s->t2_try[d], b->nb_slots, &b->log,
                                     NULL)) < 0)
            return ret;
        j2ki_t2_cuda_sticky(s->t2_try[d], &b->broken);
        j2ki_rc_cuda_sticky(s->rc_try[d], &b->broken);
    }

    if (pthread_create(&s->thread, NULL, slot_worker, s)) {
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: cannot start a host worker thread");
        return J2KC_ERR_NOMEM;
    }
    s->thread_started = 1;
    return 0;
}

int slot_init_host(CudaBackend *b, CudaSlot *s)
{
    size_t stage = b->stage_off[b->cp->img.nb_comps];
    size_t nb_cblks = b->plan->nb_cblks ? b->plan->nb_cblks : 1;
    int ret;

    /* non-blocking: the slot's work neither waits for nor holds up the application's work on the
     * legacy default stream (a device frame on it is waited for explicitly, cuda_upload.cu) */
    if ((ret = SLOT_CUDRV(cuStreamCreate, &s->st, CU_STREAM_NON_BLOCKING)) < 0)
        return ret;
    /* The slot's worker sleeps until its frame's rate control is done (EV_RC is a blocking-sync
     * event), then spins for the rest (tier-2 and the download, a short tail; EV_DONE keeps
     * the driver's default schedule). Spinning for the whole frame, as the driver's default
     * does with one context, keeps a core busy per frame in flight, and with many frames in
     * flight the spinning threads outnumber the cores; sleeping until EV_DONE instead adds a
     * thread wake-up to every frame's latency, hence the split.
     * Measured: see bench/results/history.md#slot-workers-sleep */
    for (int i = 0; i < NB_EV; i++)
        if ((ret = SLOT_CUDRV(cuEventCreate, &s->ev[i], i == EV_RC || i == EV_HIST ? CU_EVENT_BLOCKING_SYNC
                                                                                  : CU_EVENT_DEFAULT)) < 0)
            return ret;
    if ((ret = SLOT_CUDRV(cuEventCreate, &s->ev_ext, CU_EVENT_DISABLE_TIMING)) < 0 ||
        (ret = host_alloc(b, (void **)&s->h_cs, b->max_out ? b->max_out : 1)) < 0 ||
        (ret = host_alloc(b, (void **)&s->h_stage, stage ? stage : 1)) < 0 ||
        (ret = host_alloc(b, (void **)&s->h_res, nb_cblks * sizeof(J2kiCblkRes))) < 0 ||
        (ret = host_alloc(b, (void **)&s->h_flag, sizeof(uint32_t))) < 0 ||
        (ret = host_alloc(b, (void **)&s->h_t2res, sizeof(*s->h_t2res))) < 0)
        return ret;
    return 0;
}

/* Device memory left free beyond the slots' when creation checks that they will fit
 * (slots_fit): what the first frames may still take (kernels' local memory, modules loaded
 * on first launch), so that a device that just fits does not fail the first frames instead. */
#define SLOTS_FIT_SLACK ((size_t)64 << 20)

/* Per slot, beyond its planned buffers (slot_plan_bytes): the tier-2 and rate-control tables
 * (j2ki_t2_cuda_init, j2ki_rc_cuda_init, sized inside those files) and the allocator's rounding
 * of each buffer to its page size (2 MiB for large allocations). */
#define SLOT_FIT_TABLES ((size_t)32 << 20)

/** The slot's tier-1 scratch (slot_init_device, slot_plan_bytes): Part 1's coder's, or with
 *  ht=1 the HT coder's (ht_cuda.h). */
static size_t slot_t1_scratch_size(const CudaBackend *b)
{
    const J2kiPlan *plan = b->plan;
    if (b->cp->cblk_style & J2KI_CBLK_HT)
        return j2ki_ht_cuda_scratch_size((uint32_t)plan->nb_cblks);
    return j2ki_t1_cuda_scratch_size_variant((uint32_t)plan->nb_cblks, plan->max_cblk_w, plan->max_cblk_h,
                                             b->cp->hooks.t1_variant);
}

/** The device bytes slot_init_device allocates for a slot's own buffers, from the plan. */
static size_t slot_plan_bytes(const CudaBackend *b)
{
    const J2kiPlan *plan = b->plan;
    size_t nb_samples = plan->nb_samples ? plan->nb_samples : 1;
    size_t nb_cblks = plan->nb_cblks ? plan->nb_cblks : 1;
    size_t n = nb_samples * 4 + b->tmp_size + b->stage_off[b->cp->img.nb_comps] + b->data_size +
               b->nb_pass_total * sizeof(J2kiPass) + nb_cblks * sizeof(J2kiCblkRes) + sizeof(uint32_t) +
               slot_t1_scratch_size(b) + b->max_out;
    if (j2ki_t1s_enabled(b->cp))
        n += j2ki_t1s_cuda_scratch_size((uint32_t)plan->nb_cblks);
    if (b->nb_try)
        n += J2KI_QPRED_HIST * sizeof(unsigned long long);
    return n;
}

/** Whether every slot will fit on the device, checked at creation before any is made (the
 *  preparer makes them): the slots' planned sizes (slot_plan_bytes + SLOT_FIT_TABLES each) and
 *  SLOTS_FIT_SLACK against the free memory. J2KC_ERR_DEVMEM, logged, when they will not. */
static int slots_fit(CudaBackend *b)
{
    size_t mem_free = 0, mem_total = 0, per_slot = slot_plan_bytes(b) + SLOT_FIT_TABLES, need;
    int ret;
    if ((ret = CUDRV(cuMemGetInfo, &mem_free, &mem_total)) < 0)
        return ret;
    need = per_slot * (size_t)b->nb_slots + SLOTS_FIT_SLACK;
    b->slot_plan_bytes = per_slot;
    if (mem_free >= need)
        return 0;
    j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: %d slot(s) of %.0f MiB device memory each need %.0f MiB "
             "and %.0f MiB are free", b->nb_slots, (double)per_slot / 1048576.0, (double)need / 1048576.0,
             (double)mem_free / 1048576.0);
    return J2KC_ERR_DEVMEM;
}

/** What creation needs of the plan with no CUDA call, built while the context thread
 *  (cuda_warm.cu) makes the context: the component planes and staging layout, the tier-2 plan
 *  and qstep_try's, the code-block tables on the host, the slots' locks. */
static int cuda_init_host(CudaBackend *b)
{
    const J2kiCodingParams *cp = b->cp;
    const J2kiPlan *plan = b->plan;
    size_t stage = 0;
    int ret;

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
        return ret;
    b->nb_try = j2ki_quant_try_planes(cp);
    for (int d = 1; d <= b->nb_try; d++) {
        j2ki_quant_try_params(&b->cp_try[d], cp, d);
        if ((ret = j2ki_plan_create(&b->plan_try[d], &b->cp_try[d], &b->log)) < 0)
            return ret;
    }
    if ((ret = cblks_host(b, plan, &b->h_cblks, &b->h_weight)) < 0)
        return ret;
    for (int d = 1; d <= b->nb_try; d++)
        if ((ret = cblks_host(b, b->plan_try[d], &b->h_cblks_try[d], &b->h_weight_try[d])) < 0)
            return ret;
    if ((cp->cblk_style & J2KI_CBLK_HT) && cp->rc_mode == J2KI_RC_BYTES)
        for (int d = 0; d <= b->nb_try; d++)
            b->ht_target32[d] = j2ki_ht_plane_target32(cp->frame_bytes,
                                                       j2ki_ht_plane_fixed_bytes(d ? b->plan_try[d] : plan),
                                                       plan->nb_cblks);
    if (b->nb_try && (ret = dmax_host(b, plan)) < 0)
        return ret;
    if (!(b->slots = (CudaSlot *)calloc((size_t)b->nb_slots, sizeof(*b->slots))))
        return J2KC_ERR_NOMEM;
    for (int i = 0; i < b->nb_slots; i++)
        if ((ret = slot_init_sync(b, &b->slots[i])) < 0)
            return ret;
    return 0;
}

static int cuda_init_with(void **priv, const J2kiCodingParams *cp, const J2kiPlan *plan, const J2kiLog *log,
                          int nb_slots, size_t max_out, J2kiCudaWarm **warm)
{
    CudaBackend *b = (CudaBackend *)calloc(1, sizeof(*b));
    int ret, n = 0, entered = 0;
    size_t mem_total = 0;
    /* creation's steps, for the verbose log (start-up time, issue 26): the host tables, the
     * wait for the context thread, the device and its context, the tables' upload, the slots'
     * fit check, the threads' start */
    J2kiCudaWarmTimes wt = { 0.0, 0.0, 0.0 };
    double t = j2ki_now_ms(), t0 = t, ms_host = 0.0, ms_dev = 0.0, ms_upload = 0.0, ms_fit = 0.0;
    double ms_threads = 0.0;

    *priv = NULL;
    if (!b) {
        j2ki_cuda_warm_join(warm, NULL);
        return J2KC_ERR_NOMEM;
    }
    b->log = *log;
    b->cp = cp;
    b->plan = plan;
    b->nb_slots = nb_slots;
    b->max_out = max_out;
    if (pthread_mutex_init(&b->prep_mtx, NULL)) {
        free(b);
        j2ki_cuda_warm_join(warm, NULL);
        return J2KC_ERR_NOMEM;
    }
    if (pthread_cond_init(&b->prep_cond, NULL)) {
        pthread_mutex_destroy(&b->prep_mtx);
        free(b);
        j2ki_cuda_warm_join(warm, NULL);
        return J2KC_ERR_NOMEM;
    }
    b->prep_sync_ready = 1;

    ret = cuda_init_host(b);
    ms_host = j2ki_now_ms() - t;
    /* the context thread has made the context meanwhile, or is making it: this thread's first
     * CUDA call comes after it */
    j2ki_cuda_warm_join(warm, &wt);
    if (ret < 0)
        goto fail;
    t = j2ki_now_ms();

    /* the driver (cu_driver.h) and the embedded device code (cu_code.h): loaded by the context
     * thread, or now; the loaders' messages say what is missing */
    if ((ret = j2ki_cu_load(&b->log, J2KC_LOG_ERROR)) < 0 ||
        (ret = j2ki_cu_code_load(&b->log, J2KC_LOG_ERROR)) < 0)
        goto fail;
    if (cp->cu_ctx) {
        CUdevice d;
        b->ctx = (CUcontext)cp->cu_ctx;
        if ((ret = enter(b)) < 0)
            goto fail;
        entered = b->dev_ready = 1;
        if ((ret = CUDRV(cuCtxGetDevice, &d)) < 0)
            goto fail;
        b->dev = (int)d;
    } else {
        CUresult e = J2KI_CUFN(cuDeviceGetCount)(&n);
        if (e != CUDA_SUCCESS) {
            const char *ename, *etext;
            ret = j2ki_cudrv_map(e) == J2KC_ERR_NODEV ? J2KC_ERR_NODEV : J2KC_ERR_CUDA;
            j2ki_cudrv_names(e, &ename, &etext);
            j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: no usable GPU (no device, or no or too old NVIDIA "
                     "driver): %s (%s)", ename, etext);
            goto fail;
        }
        b->dev = cp->gpu < 0 ? 0 : cp->gpu;
        if (n == 0 || b->dev >= n) {
            j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA: %s (%d device(s) found)",
                     n ? "the requested GPU index does not exist" : "no CUDA device", n);
            ret = J2KC_ERR_NODEV;
            goto fail;
        }
        /* the device's primary context, the runtime's too, kept for the process (cu_primary.h):
         * made by the context thread already, or now */
        if ((ret = CUR(j2ki_cu_primary(b->dev, &b->ctx))) < 0)
            goto fail;
        if ((ret = enter(b)) < 0)
            goto fail;
        entered = b->dev_ready = 1;
    }
    {
        CUdevice d;
        char name[256] = "";
        int major = 0, minor = 0;
        if ((ret = CUDRV(cuDeviceGet, &d, b->dev)) < 0 ||
            (ret = CUDRV(cuDeviceGetName, name, (int)sizeof(name), d)) < 0 ||
            (ret = CUDRV(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d)) < 0 ||
            (ret = CUDRV(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d)) < 0)
            goto fail;
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend on device %d: %s (compute %d.%d)", b->dev, name,
                 major, minor);
    }
    /* every kernel found in the embedded code and its code loaded into this context: a GPU or
     * driver that cannot run it is refused here, naming the driver version (cuda_launch.h) */
    if ((ret = j2ki_cuda_kernels_ready(&b->log)) < 0)
        goto fail;
    ms_dev = j2ki_now_ms() - t;
    t = j2ki_now_ms();

    if ((ret = cblks_upload(b, plan, b->h_cblks, &b->h_weight, &b->d_cblks, &b->d_weight)) < 0)
        goto fail;
    for (int d = 1; d <= b->nb_try; d++)
        if ((ret = cblks_upload(b, b->plan_try[d], b->h_cblks_try[d], &b->h_weight_try[d], &b->d_cblks_try[d],
                                &b->d_weight_try[d])) < 0)
            goto fail;
    if (b->nb_try && (ret = dmax_upload(b, plan)) < 0)
        goto fail;
    ms_upload = j2ki_now_ms() - t;
    t = j2ki_now_ms();
    if ((ret = slots_fit(b)) < 0)
        goto fail;
    ms_fit = j2ki_now_ms() - t;
    t = j2ki_now_ms();
    /* the staging helpers before the preparer: page-locking on the preparer holds the process's
     * address space, and the helpers' stacks are mapped */
    copiers_start(b);
    if (pthread_create(&b->prep_thread, NULL, slot_preparer, b)) {
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: cannot start a thread");
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    b->prep_started = 1;
    ms_threads = j2ki_now_ms() - t;
    {
        char ctx[160] = "";
        if (cp->cu_ctx)
            snprintf(ctx, sizeof(ctx), "the caller's context");
        else
            snprintf(ctx, sizeof(ctx), "waiting for the context thread %.1f (its driver initialisation %.1f, "
                     "context %.1f)", wt.waited, wt.driver, wt.context);
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend: %d slot(s) of %.1f MiB device memory each (planned), "
                 "%d staging copy thread(s), tier-1 by %s; tier-1 and tier-2 launched as CUDA graphs", nb_slots,
                 (double)b->slot_plan_bytes / 1048576.0, j2ki_stager_threads(b->stager),
                 (cp->cblk_style & J2KI_CBLK_HT)
                     ? "the HT block coder (ht_kern.cu)"
                     : j2ki_t1_cuda_kernel_name(cp->hooks.t1_variant, cp->hooks.smem_optin, plan->max_cblk_w,
                                                plan->max_cblk_h));
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend created in %.1f ms: host tables %.1f, %s, device "
                 "%.1f, tables' upload %.1f, the slots' fit check %.1f, starting the staging and preparer "
                 "threads %.1f (slot%s device and page-locked memory on the preparer, each slot's graphs at "
                 "its first submit)", j2ki_now_ms() - t0, ms_host, ctx, ms_dev, ms_upload, ms_fit, ms_threads,
                 nb_slots > 1 ? "s'" : " 0's");
    }
    leave(b);
    *priv = b;
    return 0;
fail:
    /* device memory ran out in the context, making the tables or the slots (the code load's
     * own failure, before the context is entered, has said what it could not load) */
    if (ret == J2KC_ERR_DEVMEM && entered) {
        size_t mem_free = 0;
        (void)J2KI_CUFN(cuMemGetInfo)(&mem_free, &mem_total);
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA: out of device memory while allocating %d frame slot(s) on "
                 "device %d (%.0f of %.0f MiB free): fewer frames in flight (async_depth) need less", nb_slots,
                 b->dev, (double)mem_free / 1048576.0, (double)mem_total / 1048576.0);
    }
    if (entered)
        leave(b);
    cuda_uninit(b);
    return ret;
}

static int cuda_init(void **priv, const J2kiCodingParams *cp, const J2kiPlan *plan, const J2kiLog *log,
                     int nb_slots, size_t max_out)
{
    return cuda_init_with(priv, cp, plan, log, nb_slots, max_out, NULL);
}

}  // namespace j2ki_cuda

extern "C" int j2ki_cuda_init_warm(void **priv, const J2kiCodingParams *cp, const J2kiPlan *plan,
                                   const J2kiLog *log, int nb_slots, size_t max_out, J2kiCudaWarm **warm)
{
    return j2ki_cuda::cuda_init_with(priv, cp, plan, log, nb_slots, max_out, warm);
}

extern "C" const J2kiBackendOps j2ki_backend_cuda = {
    "cuda", j2ki_cuda::cuda_init, j2ki_cuda::cuda_submit, j2ki_cuda::cuda_wait, j2ki_cuda::cuda_stats,
    j2ki_cuda::cuda_uninit,
};
