/*
 * The HT set's bit-plane of every code-block under a byte budget, reference backend
 * (hd/ht_plane.h has the model).
 */
#ifndef J2KI_HT_PLANE_REF_H
#define J2KI_HT_PLANE_REF_H

#include "core/j2ki.h"
#include "core/plan.h"
#include "core/threadpool.h"
#include "hd/ht_plane.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Work area of j2ki_ht_planes_ref in bytes: the J2kiHtPlaneStat of every code-block, which a
 *  run leaves there (check_cuda compares them). */
size_t j2ki_ht_planes_scratch_size(const J2kiPlan *plan);

/** The bytes of a codestream of plan that no code-block's choice changes: the main header,
 *  EOC, the tile-parts' SOT and SOD, and a byte per packet (an empty one's whole header; the
 *  code-blocks' own header bytes are J2KI_HT_PLANE_HDR_BYTES each). Both backends' target. */
int64_t j2ki_ht_plane_fixed_bytes(const J2kiPlan *plan);

/**
 * Fills p[i] for every code-block of plan: 0 without a byte budget (every bit coded), else
 * the plane of the set holding the block's best truncation point at the slope that fills
 * cp->frame_bytes (exact points near each block's pick, hd/ht_plane.h).
 * samples: the quantised tile-components in the plan's layout; scratch of
 * j2ki_ht_planes_scratch_size bytes.
 */
void j2ki_ht_planes_ref(const J2kiPlan *plan, const int32_t *samples, J2kiPool *pool,
                        void *scratch, uint8_t *p);

#ifdef __cplusplus
}
#endif

#endif
