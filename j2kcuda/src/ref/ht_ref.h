/*
 * HT block coder, reference backend (ISO/IEC 15444-15 clause 7): one code-block's HT set
 * (cleanup at bit-plane p, SigProp and MagRef at p - 1) through hd/ht_core.h, as tier-1
 * passes that rate control and tier-2 take like Part 1's.
 *
 * Pass layout in J2kiCblk: passes[0] the cleanup (term = 1: its segment is Lcup bytes),
 * passes[1] SigProp and passes[2] MagRef, which share the refinement segment (MagRef ends
 * it); rates are exact, so est = rate. cb->numbps = p + 1, so that tier-2's zero bit-planes
 * field, M_b - numbps, is the S_blk = M_b - 1 - p of a set without placeholder passes (B.10.5
 * as T.814 Annex B changes it).
 */
#ifndef J2KI_HT_REF_H
#define J2KI_HT_REF_H

#include "core/j2ki.h"
#include "core/plan.h"

typedef struct J2kiHt J2kiHt;

J2kiHt *j2ki_ht_alloc(void);
void    j2ki_ht_free(J2kiHt **ht);

/**
 * Codes the w x h block (values as t1_ref.h describes) as one HT set at bit-plane
 * min(p, top) where top is the block's most significant index bit-plane: 1 pass when that is
 * 0 or without refine (ht_refine=0), else 3. A block of zeros gets no pass. Returns 0, J2KC_ERR_BUFSIZE when cb->data_cap or
 * cb->max_passes is too small, J2KC_ERR_INVAL for a shape HT does not allow (Table A.18) or an
 * index of more than nb_mag_bits bits.
 */
int j2ki_ht_encode_cblk_ref(J2kiHt *ht, const int32_t *coefs, ptrdiff_t stride, int w, int h,
                            int nb_mag_bits, int frac_bits, int p, int refine, J2kiCblk *cb);

#endif
