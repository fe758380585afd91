/* The embedded device code, loaded through the driver (cu_code.h): host code only. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda/cu_code.h"
#include "cuda/cuda_util.h"

/* The code the build embedded, for the messages ("sm_75 sm_90 compute_90"): set by the
 * Makefile from the configured architectures. */
#ifndef J2KI_CODE_ARCHS
#define J2KI_CODE_ARCHS "?"
#endif

/* the images, ending with NULL (tools/embed-fatbin.sh) */
extern "C" const void *const j2ki_cuda_images[];

/* At most this many kernels in all the images. */
#define MAX_KERNELS 128

static pthread_once_t code_once = PTHREAD_ONCE_INIT;
/* Every kernel of the loaded images with its entry name (the driver's string, valid while the
 * library is loaded: for the process). Enumerated once at load, so that a lookup by name never
 * asks a library for a kernel it does not have (a failed cuLibraryGetKernel is an API error
 * that tools such as compute-sanitizer report). */
static CUkernel kernels[MAX_KERNELS];
static const char *kernel_names[MAX_KERNELS];
static int nb_kernels;
static int code_err;
static char code_msg[256];

/* The failure of a driver call while loading: the message and J2KC_ERR_DEVMEM or _NODEV (a
 * kernel table too small for the images is J2KC_ERR_INTERNAL, set by code_enumerate). */
static void code_fail(CUresult e, const char *what)
{
    const char *ename, *etext;
    j2ki_cudrv_names(e, &ename, &etext);
    snprintf(code_msg, sizeof(code_msg), "%s the library's GPU code (built for %s) with this NVIDIA driver "
             "(CUDA %d.%d; the code needs CUDA %d.%d or newer): %s (%s)", what, J2KI_CODE_ARCHS,
             j2ki_cu_tab.version / 1000, j2ki_cu_tab.version % 1000 / 10, J2KI_CU_DRIVER_NEEDED / 1000,
             J2KI_CU_DRIVER_NEEDED % 1000 / 10, ename, etext);
    code_err = j2ki_cudrv_map(e) == J2KC_ERR_DEVMEM ? J2KC_ERR_DEVMEM : J2KC_ERR_NODEV;
}

/* Appends image lib's kernels to the table: 0, or the failure recorded. */
static int code_enumerate(CUlibrary lib)
{
    unsigned int n = 0;
    CUresult e = J2KI_CUFN(cuLibraryGetKernelCount)(&n, lib);
    if (e == CUDA_SUCCESS && n > (unsigned)(MAX_KERNELS - nb_kernels)) {
        snprintf(code_msg, sizeof(code_msg), "more than %d kernels in the embedded images", MAX_KERNELS);
        return code_err = J2KC_ERR_INTERNAL;
    }
    if (e == CUDA_SUCCESS && n)
        e = J2KI_CUFN(cuLibraryEnumerateKernels)(&kernels[nb_kernels], n, lib);
    for (unsigned int i = 0; e == CUDA_SUCCESS && i < n; i++)
        e = J2KI_CUFN(cuKernelGetName)(&kernel_names[nb_kernels + i], kernels[nb_kernels + i]);
    if (e != CUDA_SUCCESS) {
        code_fail(e, "cannot list the kernels of");
        return code_err;
    }
    nb_kernels += (int)n;
    return 0;
}

static void code_load_once(void)
{
    for (int i = 0; j2ki_cuda_images[i]; i++) {
        CUlibrary lib;
        CUresult e = J2KI_CUFN(cuLibraryLoadData)(&lib, j2ki_cuda_images[i], NULL, NULL, 0, NULL, NULL, 0);
        if (e != CUDA_SUCCESS) {
            code_fail(e, "cannot load");
            return;
        }
        if (code_enumerate(lib))
            return;
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
    for (int i = 0; i < nb_kernels; i++)
        if (!strcmp(kernel_names[i], entry)) {
            *k = kernels[i];
            return CUDA_SUCCESS;
        }
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
        return j2ki_cudrv_check(log, NULL, e, "cuKernelGetFunction(&f, k)", __FILE__, __LINE__);
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
