/*
 * pcie_floor: host-to-device copy time of one frame's bytes, the floor that the bench's stage
 * table sets each stage against (issue 26, point 4).
 *
 * A frame reaches the encoder in host memory and has to cross the bus once: no encoder can be
 * faster host to host than that copy. This tool times cudaMemcpy of BYTES from page-locked
 * (cudaHostAlloc) and from pageable (malloc'ed, every page touched first) memory into one
 * device buffer, W copies of warm-up then R timed copies each, and prints the medians:
 *
 *   PCIE bytes=N reps=R pinned_ms=.. pinned_gbs=.. pageable_ms=.. pageable_gbs=..
 *
 * Each copy is followed by cudaDeviceSynchronize: a copy from pageable memory may return
 * once its data sits in the driver's staging buffer, before it reached the device.
 *
 * Usage: pcie_floor BYTES [REPS]     (exit 1 with a message when CUDA is not usable)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "timing.h"

#define WARMUP 3          /* untimed copies of each kind (first touch, clocks) */
#define DEFAULT_REPS 20
#define MAX_REPS 1000

/* median time of REPS copies of BYTES from SRC to DST, or a negative value on a CUDA error */
static double time_copies(void *dst, const void *src, size_t bytes, int reps, const char *what)
{
    double t[MAX_REPS];
    cudaError_t e;
    for (int i = 0; i < WARMUP + reps; i++) {
        double t0 = now_ms();
        if ((e = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)) != cudaSuccess ||
            (e = cudaDeviceSynchronize()) != cudaSuccess) {
            fprintf(stderr, "pcie_floor: %s copy: %s\n", what, cudaGetErrorString(e));
            return -1;
        }
        if (i >= WARMUP)
            t[i - WARMUP] = now_ms() - t0;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    return t[reps / 2];
}

int main(int argc, char **argv)
{
    char *end = NULL;
    unsigned long long b;
    size_t bytes;
    int reps = DEFAULT_REPS, ret = 1;
    void *dev = NULL, *pinned = NULL;
    unsigned char *pageable = NULL;
    double t_pin, t_page;
    cudaError_t e;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: pcie_floor BYTES [REPS]\n");
        return 2;
    }
    b = strtoull(argv[1], &end, 10);
    if (!end || *end || !b || argv[1][0] == '-' || b > (1ull << 36)) {
        fprintf(stderr, "pcie_floor: BYTES must be 1..2^36, not '%s'\n", argv[1]);
        return 2;
    }
    bytes = (size_t)b;
    if (argc == 3) {
        reps = (int)strtol(argv[2], &end, 10);
        if (!end || *end || reps < 1 || reps > MAX_REPS) {
            fprintf(stderr, "pcie_floor: REPS must be 1..%d, not '%s'\n", MAX_REPS, argv[2]);
            return 2;
        }
    }
    if ((e = cudaMalloc(&dev, bytes)) != cudaSuccess) {
        fprintf(stderr, "pcie_floor: cudaMalloc of %zu bytes: %s\n", bytes, cudaGetErrorString(e));
        return 1;
    }
    if ((e = cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault)) != cudaSuccess) {
        fprintf(stderr, "pcie_floor: cudaHostAlloc of %zu bytes: %s\n", bytes, cudaGetErrorString(e));
        goto end;
    }
    if (!(pageable = malloc(bytes))) {
        fprintf(stderr, "pcie_floor: out of memory\n");
        goto end;
    }
    /* touched, so that the copies do not time the kernel's first mapping of the pages */
    memset(pinned, 0x5a, bytes);
    memset(pageable, 0x5a, bytes);
    if ((t_pin = time_copies(dev, pinned, bytes, reps, "pinned")) < 0 ||
        (t_page = time_copies(dev, pageable, bytes, reps, "pageable")) < 0)
        goto end;
    printf("PCIE bytes=%zu reps=%d pinned_ms=%.4f pinned_gbs=%.2f pageable_ms=%.4f pageable_gbs=%.2f\n",
           bytes, reps, t_pin, bytes / (t_pin * 1e6), t_page, bytes / (t_page * 1e6));
    ret = 0;
end:
    free(pageable);
    if (pinned)
        cudaFreeHost(pinned);
    cudaFree(dev);
    return ret;
}
