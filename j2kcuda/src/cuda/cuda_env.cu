/*
 * What the CUDA backend recommends of the process environment: the hardware work queues of
 * the context an encoder creates (CUDA_DEVICE_MAX_CONNECTIONS). The library only reads the
 * environment; the applications set the variable (tools/cuda_queues.h, doc/ffmpeg.md).
 */
extern "C" {
#include "core/backend.h"
#include "core/tuning.h"
}
#include <stdlib.h>

/*
 * CUDA_DEVICE_MAX_CONNECTIONS: the hardware work queues of a context, which its streams share
 * round-robin; kernels of two streams on one queue run one after the other. With the driver's
 * default the slots' streams queue behind each other, so one queue per slot (at least
 * J2KI_TUNE_CUDA_QUEUES_MIN, at most J2KI_TUNE_CUDA_QUEUES_MAX: tuning.h) is what the backend
 * recommends. CUDA reads it when it creates the context, so only the application can set it
 * in time; this logs the advice once per encoder when the variable is unset or lower.
 * Measured: see bench/results/history.md#hardware-queues
 */
extern "C" void j2ki_cuda_connections(const J2kiLog *log, int nb_slots, int caller_ctx)
{
    const int want = nb_slots < J2KI_TUNE_CUDA_QUEUES_MIN ? J2KI_TUNE_CUDA_QUEUES_MIN
                     : nb_slots > J2KI_TUNE_CUDA_QUEUES_MAX ? J2KI_TUNE_CUDA_QUEUES_MAX : nb_slots;
    const char *e = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    if (e && atoi(e) >= want)
        return;
    j2ki_log(log, J2KC_LOG_VERBOSE, "CUDA_DEVICE_MAX_CONNECTIONS %s%s: %d frame slot(s) run faster with one "
             "hardware queue each, at least %d: set CUDA_DEVICE_MAX_CONNECTIONS=%d before %s", e ? "is " : "is unset",
             e ? e : "", nb_slots, J2KI_TUNE_CUDA_QUEUES_MIN, want,
             caller_ctx ? "the caller creates its CUDA context" : "the process's first CUDA call");
}
