/*
 * The CUDA backend's host threads: one worker per slot that waits for the frame's last event
 * (the one sync point per frame) and finishes it, so frames in flight finish on several cores;
 * and the preparer that makes the slots while the first frames are coded.
 */
#include "cuda/backend_cuda.h"

namespace j2ki_cuda {

/** Host worker of one slot: for each queued frame, the one sync point (the slot's last event),
 *  then the host part; the result is handed to wait() through state. */
void *slot_worker(void *arg)
{
    CudaSlot *s = (CudaSlot *)arg;
    CudaBackend *b = s->b;
    for (;;) {
        int ret;
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
            if ((ret = enter(b)) == 0) {
                if (again)
                    ret = enqueue_code(b, s, 1);
                else if (s->predict)
                    ret = slot_predict(b, s);
                if (ret == 0)      /* asleep until rate control is done (slot_init), then spinning */
                    ret = CUDRV(cuEventSynchronize, s->ev[EV_RC]);
                if (ret == 0)
                    ret = CUDRV(cuEventSynchronize, s->ev[EV_DONE]);
                if (ret == 0)
                    slot_timings(b, s, again);
                leave(b);
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

void slot_stop_worker(CudaSlot *s)
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

/** Makes slots 0 .. nb_slots - 1 in turn, device and host parts (slot_init_device's note), on
 *  its own thread; stops early when the backend is freed. A slot that cannot be made fails the
 *  frames submitted to it and to the slots after it (slot_wait_prepared) with its error; the
 *  slots made keep coding: its making leaves `broken` alone (SLOT_CUR), and what it made is
 *  freed with the backend. No graph is captured here (cuda_graph.cu, capture). */
void *slot_preparer(void *arg)
{
    CudaBackend *b = (CudaBackend *)arg;
    struct timespec t0;
    size_t mem_free = 0, mem_total = 0;
    double ms_slot0 = 0.0;
    int ret, i = 0, quit = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((ret = enter(b)) == 0) {
        for (; i < b->nb_slots && !quit; i++) {
            if ((ret = slot_init_device(b, &b->slots[i])) < 0 || (ret = slot_init_host(b, &b->slots[i])) < 0)
                break;
            if (i == 0)
                ms_slot0 = ms_since(&t0);
            pthread_mutex_lock(&b->prep_mtx);
            b->prep_ready = i + 1;
            quit = b->prep_quit;
            pthread_cond_broadcast(&b->prep_cond);
            pthread_mutex_unlock(&b->prep_mtx);
        }
        if (ret == J2KC_ERR_DEVMEM)
            (void)J2KI_CUFN(cuMemGetInfo)(&mem_free, &mem_total);
        leave(b);
    }
    if (ret == J2KC_ERR_DEVMEM)
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA: out of device memory while allocating frame slot %d on device %d "
                 "(%.0f of %.0f MiB free): frames for it fail; fewer frames in flight (async_depth) need less", i,
                 b->dev, (double)mem_free / 1048576.0, (double)mem_total / 1048576.0);
    else if (ret < 0)
        j2ki_log(&b->log, J2KC_LOG_ERROR, "CUDA backend: slot %d's device memory, page-locked host memory, stream "
                 "or events could not be made (%s): frames for it fail", i, j2kc_strerror(ret));
    else if (!quit && b->nb_slots > 1)
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend: slot 0's device and page-locked memory made %.1f ms "
                 "after creation, slots 1 to %d %.1f ms after creation", ms_slot0, b->nb_slots - 1,
                 ms_since(&t0));
    else if (!quit)
        j2ki_log(&b->log, J2KC_LOG_VERBOSE, "CUDA backend: slot 0's device and page-locked memory made %.1f ms "
                 "after creation", ms_slot0);
    pthread_mutex_lock(&b->prep_mtx);
    b->prep_err = ret;
    b->prep_done = 1;
    pthread_cond_broadcast(&b->prep_cond);
    pthread_mutex_unlock(&b->prep_mtx);
    return NULL;
}

/** Waits until the slot is made (slot_preparer); its error when it cannot be. */
int slot_wait_prepared(CudaBackend *b, int slot)
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

}  // namespace j2ki_cuda
