/* The embedded device code, loaded through the driver (cu_code.h): host code only. */
#include <pthread.h>
#include <stdio.h>

#include "cuda/cu_code.h"
#include "cuda/cuda_util.h"

/* The code the build embedded, for the messages ("sm_75 sm_90 compute_90"): set by the
 * Makefile from the configured architectures. */
#ifndef J2KI_CODE_ARCHS
#define J2KI_CODE_ARCHS "?"
#endif

/* the images, ending with NULL (tools/embed-fatbin.sh) */
extern "C" const void *const j2ki_cuda_images[];

/* At most this many images (one per device-only source file). */
#define MAX_IMAGES 32

static pthread_once_t code_once = PTHREAD_ONCE_INIT;
static CUlibrary libs[MAX_IMAGES];
static int nb_libs;
static int code_err;
static char code_msg[256];

static void code_load_once(void)
{
    for (int i = 0; j2ki_cuda_images[i]; i++) {
        CUresult e;
        const char *ename, *etext;
        if (i == MAX_IMAGES) {
            snprintf(code_msg, sizeof(code_msg), "more than %d embedded images", MAX_IMAGES);
            code_err = J2KC_ERR_INTERNAL;
            return;
        }
        e = J2KI_CUFN(cuLibraryLoadData)(&libs[i], j2ki_cuda_images[i], NULL, NULL, 0, NULL, NULL, 0);
        if (e != CUDA_SUCCESS) {
            j2ki_cudrv_names(e, &ename, &etext);
            snprintf(code_msg, sizeof(code_msg), "cannot load the library's GPU code (built for %s) with this "
                     "NVIDIA driver (CUDA %d.%d; the code needs CUDA %d.%d or newer): %s (%s)", J2KI_CODE_ARCHS,
                     j2ki_cu_tab.version / 1000, j2ki_cu_tab.version % 1000 / 10, J2KI_CU_DRIVER_NEEDED / 1000,
                     J2KI_CU_DRIVER_NEEDED % 1000 / 10, ename, etext);
            code_err = j2ki_cudrv_map(e) == J2KC_ERR_DEVMEM ? J2KC_ERR_DEVMEM : J2KC_ERR_NODEV;
            return;
        }
        nb_libs = i + 1;
    }
}

extern "C" int j2ki_cu_code_load(const J2kiLog *log, int level)
{
    int ret;
    if ((ret = j2ki_cu_load(log, level)) < 0)
        return ret;
    pthread_once(&code_once, code_load_once);
    if (code_err)
        j2ki_log(log, level, "CUDA: %s", code_msg);
    return code_err;
}

extern "C" CUresult j2ki_cu_code_kernel(const char *entry, CUkernel *k)
{
    for (int i = 0; i < nb_libs; i++)
        if (J2KI_CUFN(cuLibraryGetKernel)(k, libs[i], entry) == CUDA_SUCCESS)
            return CUDA_SUCCESS;
    *k = NULL;
    return CUDA_ERROR_NOT_FOUND;
}

extern "C" int j2ki_cu_code_check(const J2kiLog *log, CUkernel k)
{
    CUfunction f;
    CUdevice dev = 0;
    CUresult e = J2KI_CUFN(cuKernelGetFunction)(&f, k);
    const char *ename, *etext;
    char name[128] = "?";
    int major = 0, minor = 0, ret;
    if (e == CUDA_SUCCESS)
        return 0;
    ret = j2ki_cudrv_map(e);
    if (ret != J2KC_ERR_NODEV && e != CUDA_ERROR_INVALID_PTX && e != CUDA_ERROR_INVALID_IMAGE)
        return J2KI_CUDRV(log, NULL, e);
    j2ki_cudrv_names(e, &ename, &etext);
    if (J2KI_CUFN(cuCtxGetDevice)(&dev) == CUDA_SUCCESS) {
        J2KI_CUFN(cuDeviceGetName)(name, (int)sizeof(name), dev);
        J2KI_CUFN(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        J2KI_CUFN(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    }
    j2ki_log(log, J2KC_LOG_ERROR, "CUDA: the library's GPU code (built for %s) cannot run on device %d (%s, "
             "compute %d.%d) with this NVIDIA driver (CUDA %d.%d): %s (%s); it needs a GPU of the architectures "
             "built or newer and a driver of CUDA %d.%d or newer", J2KI_CODE_ARCHS, (int)dev, name, major, minor,
             j2ki_cu_tab.version / 1000, j2ki_cu_tab.version % 1000 / 10, ename, etext,
             J2KI_CU_DRIVER_NEEDED / 1000, J2KI_CU_DRIVER_NEEDED % 1000 / 10);
    return J2KC_ERR_NODEV;
}
