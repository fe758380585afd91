/* The CUDA driver loaded at run time (cu_driver.h): host code only. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda/cu_driver.h"
extern "C" {
#include "core/hooks.h"
}

/* The library opened when no test hook names another: the driver's ABI name (soname), never
 * the unversioned development link, which only the SDK installs. */
#define CU_DRIVER_LIB "libcuda.so.1"

J2kiCuDriver j2ki_cu_tab;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static int cu_err;                      /* 0, or J2KC_ERR_NODEV */
static char cu_msg[512];                /* why, when cu_err */
static const char *cu_path;            /* the file opened: libcuda.so.1 or the test hook's */

/* The two signatures of the entry point: cuGetProcAddress_v2 (CUDA 12.0 on, reporting whether
 * the symbol was found) and cuGetProcAddress (CUDA 11.3 to 12.x). */
static PFN_cuGetProcAddress_v12000 gpa_v2;
static PFN_cuGetProcAddress_v11030 gpa_v1;

static int get_proc(const char *name, int ver, void **fn)
{
    CUresult e;
    *fn = NULL;
    if (gpa_v2) {
        CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        e = gpa_v2(name, fn, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
        if (e == CUDA_SUCCESS && q != CU_GET_PROC_ADDRESS_SUCCESS)
            e = CUDA_ERROR_NOT_FOUND;
    } else {
        e = gpa_v1(name, fn, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
    }
    if (e != CUDA_SUCCESS || !*fn) {
        *fn = NULL;
        snprintf(cu_msg, sizeof(cu_msg), "the NVIDIA driver (%s) has no %s of CUDA %d.%d (error %d)",
                 cu_path, name, ver / 1000, ver % 1000 / 10, (int)e);
        return J2KC_ERR_NODEV;
    }
    return 0;
}

static void cu_load_once(void)
{
    const char *path = j2ki_hooks_cuda_driver();
    void *lib;
    CUresult e;
    int ver = 0;

    if (!path)
        path = CU_DRIVER_LIB;
    cu_path = path;
    cu_err = J2KC_ERR_NODEV;
    /* RTLD_LOCAL: the driver's symbols stay out of the process's namespace; never closed, as
     * the driver's own threads and the contexts live as long as the process */
    if (!(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        const char *why = dlerror();
        snprintf(cu_msg, sizeof(cu_msg), "no NVIDIA driver: cannot load %s (%s)", path, why ? why : "?");
        return;
    }
    gpa_v2 = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
    if (!gpa_v2)
        gpa_v1 = (PFN_cuGetProcAddress_v11030)dlsym(lib, "cuGetProcAddress");
    if (!gpa_v2 && !gpa_v1) {
        snprintf(cu_msg, sizeof(cu_msg), "%s has no cuGetProcAddress: not an NVIDIA driver of CUDA 11.3 or "
                 "newer; this build needs CUDA %d.%d or newer", path, J2KI_CU_DRIVER_NEEDED / 1000,
                 J2KI_CU_DRIVER_NEEDED % 1000 / 10);
        return;
    }
    /* the version first: an old driver lacks the later functions of the table, and the message
     * that helps is the versions */
    if (get_proc("cuDriverGetVersion", 2020, (void **)&j2ki_cu_tab.cuDriverGetVersion) < 0)
        return;
    if ((e = j2ki_cu_tab.cuDriverGetVersion(&ver)) != CUDA_SUCCESS) {
        snprintf(cu_msg, sizeof(cu_msg), "the NVIDIA driver (%s) does not tell its version (error %d)", path,
                 (int)e);
        return;
    }
    if (ver < J2KI_CU_DRIVER_NEEDED) {
        snprintf(cu_msg, sizeof(cu_msg), "the NVIDIA driver supports CUDA %d.%d; this build needs CUDA %d.%d or "
                 "newer (update the NVIDIA driver)", ver / 1000, ver % 1000 / 10, J2KI_CU_DRIVER_NEEDED / 1000,
                 J2KI_CU_DRIVER_NEEDED % 1000 / 10);
        return;
    }
    if (get_proc("cuInit", 2000, (void **)&j2ki_cu_tab.cuInit) < 0)
        return;
#define J2KI_CU_GET(name, v)                                        \
    if (get_proc(#name, v, (void **)&j2ki_cu_tab.name) < 0)         \
        return;
    J2KI_CU_FUNCS(J2KI_CU_GET)
#undef J2KI_CU_GET
    if ((e = j2ki_cu_tab.cuInit(0)) != CUDA_SUCCESS) {
        const char *name = NULL, *text = NULL;
        j2ki_cu_tab.cuGetErrorName(e, &name);
        j2ki_cu_tab.cuGetErrorString(e, &text);
        snprintf(cu_msg, sizeof(cu_msg), "the NVIDIA driver found no usable GPU: cuInit: %s (%s)",
                 name ? name : "?", text ? text : "?");
        return;
    }
    j2ki_cu_tab.version = ver;
    cu_err = 0;
}

extern "C" int j2ki_cu_load(const J2kiLog *log, int level)
{
    pthread_once(&cu_once, cu_load_once);
    if (cu_err)
        j2ki_log(log, level, "CUDA: %s", cu_msg);
    return cu_err;
}
