/*
 * The hardware work queues an application gives the CUDA backend: CUDA_DEVICE_MAX_CONNECTIONS,
 * read by CUDA when it creates a context, so set before the process's first CUDA call. With the
 * driver's default the encoder's frame slots (async_depth) share queues and their kernels wait
 * behind each other; one queue per slot, within the library's bounds (tuning.h), is what it
 * recommends (bench/results/history.md#hardware-queues). The library itself never
 * changes the environment; a value the user set is kept.
 */
#ifndef J2KC_TOOLS_CUDA_QUEUES_H
#define J2KC_TOOLS_CUDA_QUEUES_H

#include <stdio.h>
#include <stdlib.h>

/* the bounds the library's advice uses (J2KI_TUNE_CUDA_QUEUES_MIN/MAX), from its one tuning file */
#include "../j2kcuda/src/core/tuning.h"

/* Sets CUDA_DEVICE_MAX_CONNECTIONS for frames_in_flight slots unless the user has set it. */
static inline void j2kc_app_cuda_queues(int frames_in_flight)
{
    int n = frames_in_flight < J2KI_TUNE_CUDA_QUEUES_MIN ? J2KI_TUNE_CUDA_QUEUES_MIN : frames_in_flight;
    char v[16];
    if (n > J2KI_TUNE_CUDA_QUEUES_MAX)
        n = J2KI_TUNE_CUDA_QUEUES_MAX;
    if (getenv("CUDA_DEVICE_MAX_CONNECTIONS"))
        return;
    snprintf(v, sizeof(v), "%d", n);
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 0);
}

#endif
