/*
 * CUDA tier-1 with ht=1: the HT block coder (ISO/IEC 15444-15 clause 7) of every code-block,
 * with the set's bit-plane chosen under the byte budget as the reference backend chooses it
 * (hd/ht_plane.h, ref/ht_plane.c): the same per-block functions (a thread per code-block,
 * per measured set, or a warp per block and a lane per plane for the statistics), and the
 * slope searches over integer byte sums, so the passes and bytes equal ref's.
 */
#ifndef J2KI_HT_CUDA_H
#define J2KI_HT_CUDA_H

#include <cuda.h>

#include "cuda/t1_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Device scratch bytes of j2ki_ht_cuda for nb_cblks code-blocks. */
size_t j2ki_ht_cuda_scratch_size(uint32_t nb_cblks);

/** Where in d_scratch j2ki_ht_cuda leaves every code-block's J2kiHtPlaneStat (hd/ht_plane.h)
 *  after a budgeted run, for check_cuda's comparison with the reference's. */
void *j2ki_ht_cuda_stats(void *d_scratch);

/**
 * Codes every code-block of d_cblks as one HT set: reads d_samples (int32, t1_ref.h's
 * convention), writes each block's bytes at d_data + data_off, its passes at d_passes +
 * pass_off and its result in d_res, and raises *d_flag when a block fails, as
 * j2ki_t1_cuda_variant does. With budget (a byte budget, J2KI_RC_BYTES) the set's plane of each
 * block is chosen at the slope that fills target32 (j2ki_ht_plane_target32) with its band's
 * weight d_weight[i]; without, every block codes plane 0. refine: SigProp and MagRef after
 * each cleanup (ht_refine). d_scratch: j2ki_ht_cuda_scratch_size bytes.
 */
CUresult j2ki_ht_cuda(const void *d_samples, const J2kiCblkDev *d_cblks, const double *d_weight,
                      uint32_t nb_cblks, int budget, int64_t target32, int refine, uint8_t *d_data,
                      J2kiPass *d_passes, J2kiCblkRes *d_res, uint32_t *d_flag, void *d_scratch,
                      size_t scratch_size, CUstream st);

#ifdef __cplusplus
}
#endif

#endif
