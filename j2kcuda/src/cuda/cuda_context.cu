/*
 * The CUDA backend's context and devices: every entry point runs between enter() and leave(),
 * which push the encoder's context (the caller's, or the device's primary context, kept for
 * the process, cu_primary.h) on the calling thread and pop it afterwards, so the thread's own
 * CUDA state is left as it was; the device count backend=auto and j2kc_cuda_devices() ask for,
 * through the driver (cu_driver.h).
 */
#include "cuda/backend_cuda.h"

namespace j2ki_cuda {

int enter(CudaBackend *b)
{
    return CUDRV(cuCtxPushCurrent, b->ctx);
}

void leave(CudaBackend *b)
{
    CUcontext c;
    CUDRV(cuCtxPopCurrent, &c);
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
    const int level = verbose ? J2KC_LOG_INFO : J2KC_LOG_VERBOSE;
    const char *ename, *etext;
    CUresult e;
    int n = 0, ret;

    /* not an error by itself: backend=auto falls back to the reference backend */
    if ((ret = j2ki_cu_load(log, level)) < 0)
        return ret;
    if ((e = J2KI_CUFN(cuDeviceGetCount)(&n)) != CUDA_SUCCESS) {
        ret = j2ki_cudrv_map(e);
        j2ki_cudrv_names(e, &ename, &etext);
        j2ki_log(log, level, "no usable CUDA device: %s (%s)", ename, etext);
        return ret == J2KC_ERR_NODEV ? ret : J2KC_ERR_CUDA;
    }
    for (int i = 0; verbose && i < n; i++) {
        CUdevice d;
        char name[256] = "";
        int major = 0, minor = 0, sms = 0;
        size_t mem = 0;
        if (J2KI_CUFN(cuDeviceGet)(&d, i) != CUDA_SUCCESS ||
            J2KI_CUFN(cuDeviceGetName)(name, (int)sizeof(name), d) != CUDA_SUCCESS ||
            J2KI_CUFN(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) != CUDA_SUCCESS ||
            J2KI_CUFN(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) != CUDA_SUCCESS ||
            J2KI_CUFN(cuDeviceGetAttribute)(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d) != CUDA_SUCCESS ||
            J2KI_CUFN(cuDeviceTotalMem)(&mem, d) != CUDA_SUCCESS)
            continue;
        j2ki_log(log, J2KC_LOG_INFO, "CUDA device %d: %s, compute %d.%d, %d SMs, %zu MiB", i, name, major, minor,
                 sms, mem >> 20);
    }
    return n;
}

extern "C" int j2ki_cuda_ctx_device(const J2kiLog *log, void *cu_ctx)
{
    CUcontext popped;
    CUdevice d;
    CUresult e;
    int ret;

    if ((ret = j2ki_cu_load(log, J2KC_LOG_ERROR)) < 0)
        return ret;
    if ((e = J2KI_CUFN(cuCtxPushCurrent)((CUcontext)cu_ctx)) == CUDA_SUCCESS) {
        e = J2KI_CUFN(cuCtxGetDevice)(&d);
        J2KI_CUFN(cuCtxPopCurrent)(&popped);
    }
    if (e != CUDA_SUCCESS) {
        const char *ename, *etext;
        j2ki_cudrv_names(e, &ename, &etext);
        j2ki_log(log, J2KC_LOG_ERROR, "CUDA: the device of the caller's context: %s (%s)", ename, etext);
        return J2KC_ERR_CUDA;
    }
    /* a CUdevice is the device's ordinal (cuDeviceGet(&d, i) gives d == i) */
    return (int)d;
}
