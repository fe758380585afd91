/*
 * The process environment the CUDA backend needs before CUDA starts: the hardware work queues
 * of the context an encoder creates (CUDA_DEVICE_MAX_CONNECTIONS). The only place the library
 * changes the environment.
 */
extern "C" {
#include "backend.h"
#include "tuning.h"
}
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * CUDA_DEVICE_MAX_CONNECTIONS: the hardware work queues of a context, which its streams share
 * round-robin; kernels of two streams on one queue run one after the other. With the driver's
 * default the slots' streams queue behind each other, so one queue per slot (at least
 * J2KI_TUNE_CUDA_QUEUES_MIN, at most J2KI_TUNE_CUDA_QUEUES_MAX: tuning.h) is asked for. Read
 * when the context is created, so this must run before the encoder's first CUDA call; the
 * caller's own setting is kept. setenv is not thread-safe against other threads' getenv: the
 * mutex covers the library's own calls.
 * Measured: see bench/results/history.md#hardware-queues
 */
extern "C" void j2ki_cuda_connections(const J2kiLog *log, int nb_slots, int caller_ctx)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    const int want = nb_slots < J2KI_TUNE_CUDA_QUEUES_MIN ? J2KI_TUNE_CUDA_QUEUES_MIN
                     : nb_slots > J2KI_TUNE_CUDA_QUEUES_MAX ? J2KI_TUNE_CUDA_QUEUES_MAX : nb_slots;
    const char *e;
    pthread_mutex_lock(&mu);
    e = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    if (e) {
        if (atoi(e) < want)
            j2ki_log(log, J2KC_LOG_VERBOSE, "CUDA_DEVICE_MAX_CONNECTIONS=%s (the caller's) is below the %d frame slots: "
                     "their streams share hardware queues", e, nb_slots);
    } else if (caller_ctx) {
        j2ki_log(log, J2KC_LOG_VERBOSE, "the caller's CUDA context was made with the driver's default number of "
                 "hardware queues; CUDA_DEVICE_MAX_CONNECTIONS=%d set before CUDA starts is faster (1.1x to 1.6x "
                 "measured)", want);
    } else {
        char v[16];
        snprintf(v, sizeof(v), "%d", want);
        if (setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 0) == 0)
            j2ki_log(log, J2KC_LOG_VERBOSE, "CUDA_DEVICE_MAX_CONNECTIONS=%s: one hardware queue per frame slot", v);
    }
    pthread_mutex_unlock(&mu);
}
