/*
 * CUDA stage 4: tier-1 coding (Annex D) of every code-block of the frame. Each code-block is
 * coded by the inline coder of t1_core.h / mqc.h, the same code t1_ref.c runs, so passes,
 * rates, distortions and bytes are identical by construction. Code-blocks are started in
 * decreasing order of estimated work (radix sort of w*h*bit-planes, sort_cuda.h) for load balance.
 */
#ifndef J2KI_T1_CUDA_H
#define J2KI_T1_CUDA_H

#include <cuda.h>

#include "core/j2ki.h"
#include "core/plan.h"

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

/**
 * Tier-1's early stop on the device (t1_stop.h). The caller owns d_weight (every code-block's
 * band dist_weight, plan order) and d_scratch (j2ki_t1s_cuda_scratch_size bytes). Passed as
 * NULL, every pass of every block is coded.
 */
typedef struct J2kiT1StopDev {
    uint64_t      budget;        /**< frame budget in bytes (J2KI_RC_BYTES) */
    const double *d_weight;
    void         *d_scratch;
    size_t        scratch_size;
} J2kiT1StopDev;

/** Device scratch of the early stop for nb_cblks code-blocks. */
size_t j2ki_t1s_cuda_scratch_size(uint32_t nb_cblks);

/** The early stop's per-block pass limits in its scratch (u32 per code-block, 0: not stopped),
 *  valid after j2ki_t1_cuda_variant returns (in stream order), for check_cuda. */
const uint32_t *j2ki_t1s_cuda_limits(const J2kiT1StopDev *stop);

/** Device scratch bytes j2ki_t1_cuda_variant needs for nb_cblks code-blocks of at most
 *  max_w x max_h with `variant`; j2ki_t1_cuda_scratch_size: enough for every variant. */
size_t j2ki_t1_cuda_scratch_size_variant(uint32_t nb_cblks, int max_w, int max_h, int variant);
size_t j2ki_t1_cuda_scratch_size(uint32_t nb_cblks, int max_w, int max_h);

/** Kernel variants (check_cuda --bench times them; the test hook J2KC_CUDA_T1_VARIANT,
 *  hooks.h, makes the backend run one): 0 = one code-block per single-warp thread block,
 *  all coder state in shared memory; N = 1, 4, 8, 16 or 32: N lanes of each warp code one
 *  block each, stripe-column words in global scratch; J2KI_T1_CUDA_SMEM + N (N = 1, 4, 8): the
 *  same with the stripe-column words in shared memory; J2KI_T1_CUDA_PAR: the column-parallel
 *  context modelling of t1_par.h (one warp per block) and the MQ coding of its symbol lists
 *  (one thread per block), in chunks of 4 bit-planes, the MQ coding of one chunk beside the
 *  modelling of the next, for every legal code-block shape (1024 x 4 to 4 x 1024; blocks
 *  wider than 64 in groups of 64 columns, t1_par_cuda.cuh). J2KI_T1_CUDA_DEFAULT (-1) is
 *  J2KI_T1_CUDA_PAR for every shape; the serial kernels remain for tests (the code that
 *  J2KC_CUDA_T1_VARIANT reaches) and for sizes the column-parallel coder refuses (none
 *  legal: t1_resolve_variant). Measured: bench/results/history.md#column-parallel-tier-1 and
 *  #64x64-code-blocks. */
#define J2KI_T1_CUDA_DEFAULT (-1)
/** Added to 1, 4 or 8 lanes: the stripe-column words in shared memory (t1_smem_kernel). */
#define J2KI_T1_CUDA_SMEM 64
/** Column-parallel context modelling + MQ coding of the symbol lists (t1_cuda.cu, t1p_*). */
#define J2KI_T1_CUDA_PAR 128
/** The kernel that j2ki_t1_cuda_variant(variant, smem_optin) launches for blocks of up to
 *  max_w x max_h on the current device (e.g. "t1_smem_kernel<1>" where 4 lanes' shared memory
 *  exceeds the device's limit per thread block), for logs and check_cuda. */
const char *j2ki_t1_cuda_kernel_name(int variant, int smem_optin, int max_w, int max_h);

/**
 * Codes every code-block: reads d_samples (int32, see t1_ref.h's convention), writes each block's
 * bytes at d_data + data_off, its passes at d_passes + pass_off and its result in d_res.
 * *d_flag receives a non-zero value when any block failed (checked by the host at wait).
 * variant: J2KI_T1_CUDA_DEFAULT or one of the kernel variants above; smem_optin: 0, or a
 * lower limit of dynamic shared memory per thread block than the device's (the fallbacks of
 * smaller GPUs); the backend passes its test hooks' values (hooks.h). With BYPASS the
 * column-parallel coder packs the raw passes in its modelling warp (the one-kernel strategy
 * of ebcot-fast-mode-sample-parallel.md, section 4; t1_par_cuda.cuh).
 */
CUresult j2ki_t1_cuda_variant(const void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                              int cblk_style, int bypass_start, int max_w, int max_h,
                              uint8_t *d_data, J2kiPass *d_passes, J2kiCblkRes *d_res,
                              uint32_t *d_flag, void *d_scratch, size_t scratch_size, int variant,
                              int smem_optin, const J2kiT1StopDev *stop, CUstream st);

#ifdef __cplusplus
}
#endif

#endif
