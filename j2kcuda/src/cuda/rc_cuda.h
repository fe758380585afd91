/*
 * CUDA rate control: PCRD-opt on the device, deciding exactly what rc_ref.c decides on the host.
 *
 *   hull_kernel    one thread per code-block: j2ki_rc_hull_passes (rc_core.h), as rc_ref.c
 *   decide_kernel  a cooperative grid runs j2ki_rc_decide (rc_core.h), the host's own search
 *                  code: every thread of every block runs the control flow on its own copy of
 *                  the context, in lockstep, and the operations it asks for (apply a threshold,
 *                  size the codestream, sums, maxima, the final fill) are grid-wide loops over
 *                  the code-blocks / precincts (one warp each) / tile-parts (one warp each) with
 *                  integer or order-independent reductions, separated by grid.sync(): two per
 *                  sizing probe (precinct headers | tile-parts | totals), one per other
 *                  reduction. Sizing uses the same per-precinct header coder (t2_core.h) as the
 *                  host's j2ki_t2_size, so every probe measures the same bytes.
 * Each launch's grid is the frame's share of the device (occupancy x SMs / the frames whose
 * device work is queued), at most one warp per precinct: a frame alone gets a larger grid
 * than one of 8 in flight. A cooperative grid starts only once all of its blocks are
 * resident, and the other kernels never wait, so a grid that does not fit beside the others
 * waits for room and cannot deadlock (rc_cuda.cu's file comment says more).
 * No host round trip: the frame's decision is left in the device mirror's layer_passes, where
 * j2ki_t2_cuda_write reads it.
 */
#ifndef J2KI_RC_CUDA_H
#define J2KI_RC_CUDA_H

#include <cuda.h>

#include "core/j2ki.h"
#include "core/plan.h"
#include "cuda/t1_cuda.h"
#include "cuda/t2_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct J2kiRcCuda J2kiRcCuda;

/**
 * Prepares rate control for the slot whose tier-2 mirror is t2 (j2ki_t2_cuda_init): the search
 * context of the coding parameters (j2ki_rc_ctx_init), per-band distortion scales, the fill's
 * candidate buffers, the decide grid's work cap. nb_slots: the backend's slots (for the log
 * line). Fails with
 * J2KC_ERR_UNSUPPORTED on a device without cooperative launch. Synchronous (init time only);
 * returns 0 or < 0 (logged, *sticky set for CUDA errors).
 */
int  j2ki_rc_cuda_init(J2kiRcCuda **out, const J2kiPlan *plan, J2kiT2Cuda *t2, int nb_slots, const J2kiLog *log,
                       int *sticky);
void j2ki_rc_cuda_free(J2kiRcCuda **rc);

/** Where rc's later CUDA errors are stored (NULL: nowhere); returns the previous target (as
 *  j2ki_t2_cuda_sticky). */
int *j2ki_rc_cuda_sticky(J2kiRcCuda *rc, int *sticky);

/**
 * Enqueues on st the rate control of the frame whose tier-1 results are in the slot's d_data /
 * d_passes and d_res: imports nb_passes/numbps, computes the hulls, decides layer_passes.
 * A failure (e.g. J2KC_ERR_BUFSIZE: budget below the headers) lands in the slot's
 * J2kiT2CudaResult (err, rc_why, rc_why_arg), and j2ki_t2_cuda_write then writes nothing.
 * nb_busy: the frames with device work queued, this one included (the decide grid takes its
 * share of the device; the bytes do not depend on it). hull_mask: also qstep_try's test, the
 * OR of j2ki_rc_cblk_hull_bits (rc_core.h) over the code-blocks after the decision, into the
 * slot's J2kiT2CudaResult.hull_mask (as j2ki_rc_hull_mask), by the decide kernel's last phase.
 * Returns < 0 only for enqueue failures.
 */
int  j2ki_rc_cuda_run(J2kiRcCuda *rc, const J2kiCblkRes *d_res, int nb_busy, int hull_mask, CUstream st);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_RC_CUDA_H */
