/* Page-locked host memory detection for the CUDA backend's upload (cuda_pinned.cu). */
#ifndef J2KI_CUDA_PINNED_H
#define J2KI_CUDA_PINNED_H

#ifdef __cplusplus
extern "C" {
#endif

/** Whether host memory at p is page-locked (cudaHostAlloc, cudaHostRegister, cuMemHostAlloc,
 *  cuMemHostRegister): such memory is uploaded straight from the caller's rows, without the staging copy. NULL: 0; no driver: 0. */
int j2ki_cuda_host_pinned(const void *p);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_CUDA_PINNED_H */
