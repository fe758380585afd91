/*
 * The CUDA backend's device code, embedded in the library and loaded through the driver
 * (issue 31): the kernels are compiled ahead of time from the device-only files (*_kern.cu)
 * into fatbins, SASS for every architecture configured and PTX for the newest (or, built by
 * clang, PTX alone for the oldest: doc/ffmpeg.md), which
 * tools/embed-fatbin.sh puts in the library's read-only data (j2ki_cuda_images). They are
 * loaded once per process (a failed load is undone and tried again at the next creation)
 * with cuLibraryLoadData, the driver's context-independent loading
 * (CUDA 12.0), which makes them available in every context, each kernel's code loaded into a
 * context when it is first used there; kernels are found by their extern "C" entry names.
 *
 * No CUDA runtime is involved: nothing registers the code at program start, and a process that
 * never creates a CUDA encoder never loads it. A driver too old for the embedded PTX, or a GPU
 * for which there is neither SASS nor PTX it can compile, fails j2ki_cu_code_check with a
 * message naming the device, the code built and the driver's version.
 */
#ifndef J2KI_CU_CODE_H
#define J2KI_CU_CODE_H

#include "cuda/cu_driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Loads the embedded images (after j2ki_cu_load); 0, or J2KC_ERR_NODEV (the driver cannot
 *  load the code), J2KC_ERR_DEVMEM (out of memory while loading it) or J2KC_ERR_INTERNAL (more
 *  images or kernels than the tables hold), logged on log at level, as j2ki_cu_load does. A
 *  success stays for the process (later calls only return 0); a failure leaves nothing loaded
 *  and no state behind, and the next call tries again. Thread-safe. */
int j2ki_cu_code_load(const J2kiLog *log, int level);

/** The kernel of the embedded code whose entry is named entry: CUDA_SUCCESS, or
 *  CUDA_ERROR_NOT_FOUND when no image has it (after a successful j2ki_cu_code_load). */
CUresult j2ki_cu_code_kernel(const char *entry, CUkernel *k);

/** Whether the code of kernel k runs on the device of the calling thread's current context
 *  (its code is loaded into the context now): 0, or J2KC_ERR_NODEV when there is no code this
 *  GPU and driver can run (logged, naming them and the code built), J2KC_ERR_CUDA else. */
int j2ki_cu_code_check(const J2kiLog *log, CUkernel k);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_CU_CODE_H */
