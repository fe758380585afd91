/* The embedded device code, loaded through the driver (cu_code.h): host code only. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda/cu_code.h"
#include "cuda/cuda_fault.h"
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

/* At most this many images (tools/embed-fatbin.sh makes one per *_kern.cu file). */
#define MAX_IMAGES 32

/*
 * The load's state, under code_lock. A load that succeeds stays for the process: loaded is set
 * last, after the table, and is never cleared, so that the kernel table and its names (the
 * driver's strings, valid while the libraries are loaded) are read without the lock once
 * j2ki_cu_code_load has returned 0 (the mutex orders the writes before that return). A load
 * that fails unloads every image it had loaded and empties the table, keeping no error: the
 * next call tries again (a device out of memory now may have room later).
 *
 * Every kernel of the loaded images with its entry name, enumerated at load, so that a lookup
 * by name never asks a library for a kernel it does not have (a failed cuLibraryGetKernel is
 * an API error that tools such as compute-sanitizer report).
 */
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;
static CUlibrary libs[MAX_IMAGES];
static int nb_libs;
static CUkernel kernels[MAX_KERNELS];
static const char *kernel_names[MAX_KERNELS];
static int nb_kernels;

/* The failure of a driver call while loading: the message in msg, and J2KC_ERR_DEVMEM or
 * J2KC_ERR_NODEV. The driver's and the code's CUDA versions are named where they can be the
 * cause (not for a device out of memory). */
static int code_fail(CUresult e, const char *what, char *msg, size_t size)
{
    const char *ename, *etext;
    const int devmem = j2ki_cudrv_map(e) == J2KC_ERR_DEVMEM;
    j2ki_cudrv_names(e, &ename, &etext);
    if (devmem)
        snprintf(msg, size, "%s the library's GPU code (built for %s): %s (%s)", what, J2KI_CODE_ARCHS,
                 ename, etext);
    else
        snprintf(msg, size, "%s the library's GPU code (built for %s) with this NVIDIA driver "
                 "(CUDA %d.%d; the code needs CUDA %d.%d or newer): %s (%s)", what, J2KI_CODE_ARCHS,
                 j2ki_cu_tab.version / 1000, j2ki_cu_tab.version % 1000 / 10, J2KI_CU_DRIVER_NEEDED / 1000,
                 J2KI_CU_DRIVER_NEEDED % 1000 / 10, ename, etext);
    return devmem ? J2KC_ERR_DEVMEM : J2KC_ERR_NODEV;
}

/* Appends image lib's kernels to the table: 0, or the failure (message in msg). */
static int code_enumerate(CUlibrary lib, char *msg, size_t size)
{
    unsigned int n = 0;
    CUresult e = J2KI_CUFN(cuLibraryGetKernelCount)(&n, lib);
    if (e == CUDA_SUCCESS && n > (unsigned)(MAX_KERNELS - nb_kernels)) {
        snprintf(msg, size, "more than %d kernels in the embedded images", MAX_KERNELS);
        return J2KC_ERR_INTERNAL;
    }
    if (e == CUDA_SUCCESS && n)
        e = J2KI_CUFN(cuLibraryEnumerateKernels)(&kernels[nb_kernels], n, lib);
    for (unsigned int i = 0; e == CUDA_SUCCESS && i < n; i++)
        e = J2KI_CUFN(cuKernelGetName)(&kernel_names[nb_kernels + i], kernels[nb_kernels + i]);
    if (e != CUDA_SUCCESS)
        return code_fail(e, "cannot list the kernels of", msg, size);
    nb_kernels += (int)n;
    return 0;
}

/* Unloads every image loaded and empties the kernel table (a failed load's undoing). */
static void code_unload(void)
{
    while (nb_libs > 0)
        J2KI_CUFN(cuLibraryUnload)(libs[--nb_libs]);
    memset(kernels, 0, sizeof(kernels));
    memset(kernel_names, 0, sizeof(kernel_names));
    nb_kernels = 0;
}

/* Loads every image and lists its kernels (under code_lock): 0, or the failure with nothing
 * left loaded. The fault hook J2KI_FAULT_CODE_LOAD fails the load of an image as a device out
 * of memory would, after the images before it were loaded (tests/cuda_faults.cu). */
static int code_load_locked(char *msg, size_t size)
{
    int ret = 0;
    for (int i = 0; !ret && j2ki_cuda_images[i]; i++) {
        CUlibrary lib;
        CUresult e;
        if (nb_libs == MAX_IMAGES) {
            snprintf(msg, size, "more than %d embedded images", MAX_IMAGES);
            ret = J2KC_ERR_INTERNAL;
            break;
        }
        e = j2ki_cuda_fault_hit(J2KI_FAULT_CODE_LOAD) ? CUDA_ERROR_OUT_OF_MEMORY
          : J2KI_CUFN(cuLibraryLoadData)(&lib, j2ki_cuda_images[i], NULL, NULL, 0, NULL, NULL, 0);
        if (e != CUDA_SUCCESS) {
            ret = code_fail(e, "cannot load", msg, size);
            break;
        }
        libs[nb_libs++] = lib;
        ret = code_enumerate(lib, msg, size);
    }
    if (ret)
        code_unload();
    return ret;
}

extern "C" int j2ki_cu_code_load(const J2kiLog *log, int level)
{
    char msg[256] = "";
    int ret;
    if ((ret = j2ki_cu_load(log, level)) < 0)
        return ret;
    pthread_mutex_lock(&code_lock);
    if (!loaded && !(ret = code_load_locked(msg, sizeof(msg))))
        loaded = 1;
    pthread_mutex_unlock(&code_lock);
    if (ret)
        j2ki_log(log, level, "CUDA: %s", msg);
    return ret;
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
