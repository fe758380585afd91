/*
 * Tier-1 coding (Annex D): the three coding passes over bit-planes of a code-block, the 19
 * contexts, the MQ coder (Annex C, mqc.h), raw (bypass) segments, and the code-block style
 * switches BYPASS, RESET, TERMALL, VCAUSAL, PTERM, SEGMARK.
 *
 * Input convention: int32 two's complement values v; |v| >> frac_bits is the quantisation
 * index, and bit-plane p (0 = least significant integer bit) of the index is bit p+frac_bits
 * of |v|. The fractional bits are never coded; they only refine distortion estimates.
 *
 * Distortion convention: J2kiPass.dist is the decrease of squared error, in units of the
 * squared quantisation step (index units), that the pass buys when the decoder reconstructs at
 * the midpoint. It is computed from integer table sums per bit-plane, converted exactly
 * (ldexp) to double, so the CUDA coder reproduces it bit for bit.
 */
#ifndef J2KI_T1_H
#define J2KI_T1_H

#include "core/j2ki.h"
#include "core/plan.h"

/** Scratch state for coding one code-block (state flags, ...); one per thread. */
typedef struct J2kiT1 J2kiT1;

J2kiT1 *j2ki_t1_alloc(int max_w, int max_h);
void    j2ki_t1_free(J2kiT1 **t1);

/**
 * Codes one code-block of w x h values (row stride `stride` values) of band orientation
 * `orient` into cb->data / cb->passes; sets cb->nb_passes, cb->numbps, every pass's rate,
 * dist and term. nb_mag_bits is M_b; a block whose index needs more bits is an internal error.
 * Returns 0, or J2KC_ERR_BUFSIZE when cb->data_cap or cb->max_passes is too small.
 */
int j2ki_t1_encode_cblk_ref(J2kiT1 *t1, const int32_t *coefs, ptrdiff_t stride,
                            int w, int h, int orient, int cblk_style, int bypass_start,
                            int nb_mag_bits, int frac_bits, J2kiCblk *cb);

/** j2ki_t1_encode_cblk_ref coding only the first lim passes when 0 < lim < 3 numbps - 2 (the
 *  last of them terminated, as at the end of a block): tier-1's early stop, t1_stop.h. */
int j2ki_t1_encode_cblk_ref_lim(J2kiT1 *t1, const int32_t *coefs, ptrdiff_t stride,
                                int w, int h, int orient, int cblk_style, int bypass_start,
                                int nb_mag_bits, int frac_bits, J2kiCblk *cb, int lim);

/**
 * Codeword segments a layer sends (B.10.7, D.4): for the passes [first_pass, end_pass) of cb
 * that one layer adds, writes the length in bytes of each piece of codeword segment to
 * lens[] and returns their number (0 for an empty range), or J2KC_ERR_BUFSIZE when more
 * than max_lens. A piece ends at every pass with term = 1 and at end_pass - 1; it starts
 * where the previous piece (or the previous layer, at passes[first_pass - 1].rate) ended.
 * The packet header codes one length per piece (B.10.7.2: with BYPASS or TERMALL, several).
 */
int j2ki_t1_layer_segments(const J2kiCblk *cb, int first_pass, int end_pass,
                           uint32_t *lens, int max_lens);

#endif
