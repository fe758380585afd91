/*
 * The embedded device code loaded and launched through the driver (cuda/cu_code.h; issue 31),
 * on a GPU: a probe kernel (tests/cu_code_probe_kern.cu) compiled to a fatbin and embedded by
 * tools/embed-fatbin.sh into this program's own j2ki_cuda_images (linked before the library,
 * so the library's table is not), then j2ki_cu_code_load, the kernel found by name (and
 * a name that is not there refused), checked in the device's primary context (the library's,
 * cu_primary.h) and launched with cuLaunchKernel; its output compared with the host's. No CUDA
 * runtime call.
 * Prints ok/FAIL lines; exit 1 on a failure, 77 without a driver or device.
 *   built and run by tests/check-cuda.sh, or by hand:
 *   nvcc -fatbin GENCODE -o probe.fatbin tests/cu_code_probe_kern.cu
 *   sh tools/embed-fatbin.sh probe.S probe.fatbin && cc -c probe.S
 *   cc -std=c99 -Ij2kcuda/include -Ij2kcuda/src -I$CUDA_HOME/include tests/cu_code_probe.c probe.o \
 *      build/lib/libj2kcuda.a -ldl -lrt -lstdc++ -lpthread -lm
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cu_code.h"
#include "cuda/cu_primary.h"

static int failed;

static void say(void *opaque, int level, const char *msg)
{
    (void)opaque;
    (void)level;
    fprintf(stderr, "log: %s\n", msg);
}

static void check(int cond, const char *what)
{
    printf("%s cu_code_probe: %s\n", cond ? "ok" : "FAIL", what);
    failed += !cond;
}

int main(void)
{
    J2kiLog log = { say, NULL, J2KC_LOG_VERBOSE };
    enum { N = 100000 };
    unsigned *host = malloc(N * sizeof(unsigned));
    unsigned n = N;
    CUkernel k = NULL, missing = NULL;
    CUcontext ctx = NULL, popped;
    CUdeviceptr d = 0;
    int count = 0, bad = 0;
    void *args[2];

    if (!host || j2ki_cu_load(&log, J2KC_LOG_ERROR) < 0 || J2KI_CUFN(cuDeviceGetCount)(&count) != CUDA_SUCCESS ||
        !count) {
        printf("skip cu_code_probe: no CUDA driver or device\n");
        return 77;
    }
    check(j2ki_cu_code_load(&log, J2KC_LOG_ERROR) == 0, "the embedded images load (cuLibraryLoadData)");
    check(j2ki_cu_code_kernel("j2ki_test_probe", &k) == CUDA_SUCCESS && k, "the probe kernel found by name");
    check(j2ki_cu_code_kernel("j2ki_no_such_kernel", &missing) == CUDA_ERROR_NOT_FOUND && !missing,
          "an unknown entry name refused");
    if (failed)
        return 1;
    if (j2ki_cu_primary(0, &ctx) != CUDA_SUCCESS || J2KI_CUFN(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS) {
        check(0, "device 0's primary context");
        return 1;
    }
    check(j2ki_cu_code_check(&log, k) == 0, "the code runs on device 0 (cuKernelGetFunction)");
    check(J2KI_CUFN(cuMemAlloc)(&d, N * sizeof(unsigned)) == CUDA_SUCCESS, "cuMemAlloc");
    args[0] = &d;
    args[1] = &n;
    check(J2KI_CUFN(cuLaunchKernel)((CUfunction)k, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL) ==
              CUDA_SUCCESS, "cuLaunchKernel of the CUkernel");
    if (J2KI_CUFN(cuMemcpyDtoHAsync)(host, d, N * sizeof(unsigned), NULL) != CUDA_SUCCESS ||
        J2KI_CUFN(cuStreamSynchronize)(NULL) != CUDA_SUCCESS)
        bad = -1;
    for (unsigned i = 0; bad >= 0 && i < N; i++)
        bad += host[i] != i * 2654435761u + 12345u;
    check(bad == 0, "the kernel's output equals the host's");
    J2KI_CUFN(cuMemFree)(d);
    J2KI_CUFN(cuCtxPopCurrent)(&popped);
    free(host);
    return failed ? 1 : 0;
}
