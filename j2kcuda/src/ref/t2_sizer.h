/*
 * Tier-2 sizing on the reference backend's worker threads: the same answer as j2ki_t2_size
 * (t2_ref.h), which rate control asks for about ten times per frame, computed by precincts in
 * parallel.
 *
 * Why it can be split: a packet's bytes ([SOP] header [EPH] body, B.9-B.10) depend only on its
 * precinct's state (its bands' tag trees, its code-blocks' Lblock and passes sent), which the
 * precinct's earlier layers alone change, and every progression order emits a precinct's
 * layers in order (B.12). So each precinct's packets are sized by one worker, layer after layer,
 * with j2ki_t2_packet_head (t2_ref.h: t2_core.h's header coder, which the device runs too) into
 * a table of packet lengths; then the caller walks the packets in codestream order (recorded
 * once, at creation, by j2ki_t2_walk_packets) and adds them up, with the tile-part headers and
 * PLT segments (j2ki_t2_plt_count_add), in j2ki_t2_size's tally (J2kiT2Tally). The sums are of
 * integers in a fixed order: the result does not depend on the thread count.
 */
#ifndef J2KI_T2_SIZER_H
#define J2KI_T2_SIZER_H

#include "core/j2ki.h"
#include "core/plan.h"
#include "core/threadpool.h"

typedef struct J2kiT2Sizer J2kiT2Sizer;

/** Records the plan's precincts and packet order. Returns 0, J2KC_ERR_NOMEM, or the walk's
 *  error. The plan must outlive the sizer. */
int j2ki_t2_sizer_new(J2kiT2Sizer **out, J2kiPlan *plan);
void j2ki_t2_sizer_free(J2kiT2Sizer **s);

/** Uses pool (may be NULL: the calling thread alone) for the next sizings. */
void j2ki_t2_sizer_set_pool(J2kiT2Sizer *s, J2kiPool *pool);

/**
 * j2ki_t2_size(plan, comp_len, layer_len) for the sizer's plan (plan must be that plan), with the
 * same side effects on the plan's tier-2 state. The signature is rate control's J2kiRcSizeFn
 * (rc_ref.h), opaque being the sizer.
 */
int64_t j2ki_t2_sizer_size(void *sizer, J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len);

#endif
