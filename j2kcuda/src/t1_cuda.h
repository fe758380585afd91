/*
 * CUDA stage 4: tier-1 coding (Annex D) of every code-block of the frame. Each code-block is
 * coded by the inline coder of t1_core.h / mqc.h, the same code t1_ref.c runs, so passes,
 * rates, distortions and bytes are identical by construction. Code-blocks are started in
 * decreasing order of estimated work (CUB radix sort of w*h*bit-planes) for load balance.
 */
#ifndef J2KI_T1_CUDA_H
#define J2KI_T1_CUDA_H

#include <cuda_runtime_api.h>

#include "j2ki.h"
#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the kernels need of one code-block (built once per encoder from the plan). */
typedef struct J2kiCblkDev {
    uint64_t buf;            /**< sample offset of its top-left in the frame's sample buffer */
    uint64_t data_off;       /**< offset of its byte buffer in the slot's data area */
    uint32_t stride;         /**< samples per row of its tile-component buffer */
    uint32_t data_cap;       /**< capacity of its byte buffer */
    uint32_t pass_off;       /**< index of its first pass in the slot's pass area */
    uint16_t w, h;
    uint16_t max_passes;
    uint8_t  orient, nb_mag_bits, frac_bits, pad_;
    float    inv_step;       /**< band's quantiser (0: reversible band, no quantisation) */
} J2kiCblkDev;

/** Tier-1 result of one code-block (goes back to the host). */
typedef struct J2kiCblkRes {
    int32_t nb_passes;
    int32_t numbps;
    int32_t err;             /**< 0 or J2KC_ERR_* of the coder (BUFSIZE: capacity exceeded) */
    uint32_t len;            /**< bytes written */
} J2kiCblkRes;

/** Device scratch bytes j2ki_t1_cuda needs for nb_cblks code-blocks of at most max_w x max_h. */
size_t j2ki_t1_cuda_scratch_size(uint32_t nb_cblks, int max_w, int max_h);

/**
 * Codes every code-block: reads d_samples (int32, see t1.h's convention), writes each block's
 * bytes at d_data + data_off, its passes at d_passes + pass_off and its result in d_res.
 * *d_flag receives a non-zero value when any block failed (checked by the host at wait).
 */
cudaError_t j2ki_t1_cuda(const void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                         int cblk_style, int bypass_start, int max_w, int max_h,
                         uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res,
                         uint32_t *d_flag, void *d_scratch, size_t scratch_size, cudaStream_t st);

/** Kernel variants (check_cuda --bench times them; J2KC_CUDA_T1_VARIANT in the environment
 *  overrides the default, a measuring aid): 0 = one code-block per single-warp thread block,
 *  all coder state in shared memory; N = 1, 4, 8, 16 or 32: N lanes of each warp code one
 *  block each, stripe-column words in global scratch; J2KI_T1_CUDA_SMEM + N (N = 1, 4, 8): the
 *  same with the stripe-column words in shared memory; J2KI_T1_CUDA_PAR: the column-parallel
 *  context modelling of t1_par.h (one warp per block) then the MQ coding of its symbol lists
 *  (one thread per block), in chunks of 4 bit-planes, for blocks at most 64 wide (else the
 *  default; not yet run on a GPU). J2KI_T1_CUDA_DEFAULT (-1) chooses from
 *  the code-block size, as measured on an H200 (bench frames, one worker per code-block):
 *  32x32 blocks, 4K DCI: 8 lanes 16.4 ms per frame (73.8 frames/s with 8 in flight), shared
 *  words 15.9 ms (75.7) but 2K DCI 12.8 ms against 11.3, 4 or 16 lanes slower; 64x64 blocks,
 *  4K 4:2:2 10-bit lossless: shared words with 4 lanes 9.5 ms (125 frames/s) against 1 lane
 *  18.5 ms (54). */
#define J2KI_T1_CUDA_DEFAULT (-1)
/** Added to 1, 4 or 8 lanes: the stripe-column words in shared memory (t1_smem_kernel). */
#define J2KI_T1_CUDA_SMEM 64
/** Column-parallel context modelling + MQ coding of the symbol lists (t1_cuda.cu, t1p_*). */
#define J2KI_T1_CUDA_PAR 128
cudaError_t j2ki_t1_cuda_variant(const void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                 int cblk_style, int bypass_start, int max_w, int max_h,
                                 uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res,
                                 uint32_t *d_flag, void *d_scratch, size_t scratch_size, int variant,
                                 cudaStream_t st);

#ifdef __cplusplus
}
#endif

#endif
