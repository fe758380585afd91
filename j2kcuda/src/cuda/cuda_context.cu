/*
 * The CUDA backend's context and devices: every entry point runs between enter() and leave(),
 * which make the encoder's device (or the caller's context) current and restore the calling
 * thread's own afterwards; the device count backend=auto and j2kc_cuda_devices() ask for.
 */
#include "cuda/backend_cuda.h"

namespace j2ki_cuda {

/* The calling thread's current device is saved in *prev and restored by leave(), so the
 * caller's own CUDA state is left as it was; with a caller context, it is pushed and popped. */
int enter(CudaBackend *b, int *prev)
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

void leave(CudaBackend *b, int prev)
{
    if (b->ctx) {
        CUcontext c;
        J2KI_CUDRV(&b->log, &b->broken, b->ctx_pop(&c));
    } else if (prev != b->dev) {
        CU(cudaSetDevice(prev));
    }
}

double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

}  // namespace j2ki_cuda

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
