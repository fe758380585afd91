/*
 * Packet headers of one precinct coded in parallel, one code-block per lane, with exactly the
 * bits the serial coder of t2_core.h writes (j2ki_t2_prec_header). Used by the device tier-2
 * and rate control (t2_cuda.h: a warp, or a thread block's warps, per precinct), checked against the serial coder on the
 * host (tests/unit/test_t2_core.c).
 *
 * Why it can be parallel. The serial coder's only state is the two tag trees of each band
 * (B.10.2), Lblock (B.10.7.1) and the passes already sent. Lblock and the passes sent belong to
 * one code-block. A tag-tree node's contribution can be computed from values alone:
 *
 *  - Inclusion tree, packet of layer l (threshold t = l + 1), node n with value vi (the first
 *    layer that includes a leaf below it), parent value vp. The node is visited in every
 *    non-empty packet while a leaf below it is still to be included, and a visit at threshold
 *    T leaves low = min(vi, T), known = (vi < T). With P = 1 + the last non-empty layer before
 *    l (0 if none), the first visit of n in layer l therefore sends
 *        nothing                                   if vi < P (known),
 *        min(vi, t) - max(P, min(vp, t)) zeros     (root: - P), then
 *        a 1                                       if vi < t;
 *    later visits in the same packet send nothing.
 *  - Zero bit-plane tree (sent in full when a leaf is first included): node n with value vz is
 *    visited first in layer vi(n), sends vz - vz(parent) zeros (root: vz) and a 1, and nothing
 *    afterwards.
 *  - Where those bits go: a node's bits are sent by the first leaf, in packet order, whose path
 *    visits it: for the inclusion tree the first leaf below n not included before l (smallest
 *    raster index among them: fvi), for the zero bit-plane tree the first leaf below n included
 *    in layer vi(n) (smallest (first layer, raster index): fvz). The nodes a leaf sends are a
 *    chain from the leaf up to the highest ancestor whose first visitor it is; they go out root
 *    side first, before the leaf's own fields.
 *
 * So, per (precinct, layer): node values are minima over the leaves (an up-sweep per tree
 * level), each code-block's bits are computed on their own (j2ki_t2p_cblk_bits), counted
 * first, placed by a prefix sum of the counts and ORed into a shared bit buffer; the buffer is
 * then cut into header bytes by one lane (j2ki_t2p_emit), which is where the 0xFF bit stuffing
 * (B.10.1) happens, the only part that depends on the bits before it. Zero bits need no
 * writing: the buffer starts cleared.
 */
#ifndef J2KI_T2_PAR_H
#define J2KI_T2_PAR_H

#include "hd/t2_core.h"

/** Scratch of one tag-tree node position (both trees of a band have the same shape). */
typedef struct J2kiT2pNode {
    int32_t  vi;                 /**< inclusion tree: smallest first layer below (nb_layers: none) */
    int32_t  vz;                 /**< zero bit-plane tree value (B.10.5; 0 for leaves never included) */
    uint32_t fvi;                /**< layer being coded: smallest raster index below of a leaf not
                                      included before it (UINT32_MAX: none) */
    uint32_t pad_;
    unsigned long long fvz;      /**< smallest (first layer << 32 | raster index) below */
} J2kiT2pNode;

#if defined(__CUDA_ARCH__)
#define J2KI_T2P_OR(p, v)    atomicOr((p), (v))
#define J2KI_T2P_MIN(p, v)   atomicMin((p), (v))
#else
#define J2KI_T2P_OR(p, v)    (*(p) |= (v))
#define J2KI_T2P_MIN(p, v)   (*(p) = (v) < *(p) ? (v) : *(p))
#endif

/** First layer that includes the code-block (nb_layers: none); 0 after setting *err for
 *  tier-1 / rate-control results j2ki_t2_prec_load or j2ki_t2_prec_header would refuse
 *  (passes decreasing over the layers, more than 164 new passes, too many bit-planes). Sets
 *  *mask bit l for each layer that adds passes (those packets are not empty). */
J2KI_HD int j2ki_t2p_first(const J2kiCblk *cb, const J2kiBand *band, int L, unsigned long long *mask, int *err)
{
    int first = L, prev = 0;
    for (int l = 0; l < L; l++) {
        int e = cb->layer_passes[l];
        if (e < prev || e - prev > 164)
            *err = 1;
        if (e > prev) {
            *mask |= 1ull << l;
            if (first == L)
                first = l;
        }
        prev = e;
    }
    if (first < L && (cb->numbps > band->nb_mag_bits || cb->numbps < 0 || cb->layer_passes[L - 1] > cb->nb_passes))
        *err = 1;
    return first;
}

/** Sets leaf r's scratch for a code-block whose first layer is first (j2ki_t2_prec_load's values). */
J2KI_HD void j2ki_t2p_leaf(J2kiT2pNode *nd, uint32_t r, const J2kiCblk *cb, const J2kiBand *band, int first, int L)
{
    nd[r].vi = first;
    nd[r].vz = first < L ? band->nb_mag_bits - cb->numbps : 0;
    nd[r].fvz = ((unsigned long long)(uint32_t)first << 32) | r;
}

/** Clears the scratch of an inner node before an up-sweep. */
J2KI_HD void j2ki_t2p_inner(J2kiT2pNode *nd, uint32_t n)
{
    nd[n].vi = INT32_MAX;
    nd[n].vz = INT32_MAX;
    nd[n].fvi = UINT32_MAX;
    nd[n].fvz = ~0ull;
}

/** Bit writer into a cleared word buffer (bits most significant first), or a counter (w NULL). */
typedef struct J2kiT2pBits {
    uint32_t *w;
    uint32_t  pos;
} J2kiT2pBits;

/** Puts the n (0..32) low bits of v. */
J2KI_HD void j2ki_t2p_put(J2kiT2pBits *b, uint32_t v, int n)
{
    if (n <= 0)
        return;
    if (b->w) {
        uint32_t off = b->pos & 31, wi = b->pos >> 5;
        unsigned long long x = (unsigned long long)(n < 32 ? v & ((1u << n) - 1) : v) << (64 - n - off);
        uint32_t hi = (uint32_t)(x >> 32), lo = (uint32_t)x;
        if (hi)
            J2KI_T2P_OR(&b->w[wi], hi);
        if (lo)
            J2KI_T2P_OR(&b->w[wi + 1], lo);
    }
    b->pos += (uint32_t)n;
}

/** Puts n one bits followed by a zero (the Lblock increment, B.10.7.1). */
J2KI_HD void j2ki_t2p_comma(J2kiT2pBits *b, int n)
{
    for (; n >= 32; n -= 32)
        j2ki_t2p_put(b, 0xFFFFFFFFu, 32);
    j2ki_t2p_put(b, ((1u << n) - 1) << 1, n + 1);
}

/** Puts the n low bits of v for n possibly above 32 (the bits above 32 are 0). */
J2KI_HD void j2ki_t2p_putw(J2kiT2pBits *b, uint32_t v, int n)
{
    if (n > 32) {
        b->pos += (uint32_t)(n - 32);
        n = 32;
    }
    j2ki_t2p_put(b, v, n);
}

/**
 * The bits code-block cb (leaf r of its band's trees: parent links in tn, scratch in nd with
 * this layer's fvi) adds to the header of the packet of layer l, with P as in the file comment
 * and lblock its Lblock before this packet; returns its Lblock after it. Same bits as
 * j2ki_t2_prec_header writes for it (the packet must be non-empty).
 */
J2KI_HD int j2ki_t2p_cblk_bits(J2kiT2pBits *b, const J2kiCblk *cb, const J2kiTgtNode *tn, const J2kiT2pNode *nd,
                               uint32_t r, int l, int P, int lblock, int scan)
{
    int s = l ? cb->layer_passes[l - 1] : 0, e = cb->layer_passes[l];
    if (!s) {
        uint32_t chain[J2KI_TGT_MAX_DEPTH];
        int d = 0, t = l + 1;
        uint32_t i = r;
        chain[d++] = i;
        while (tn[i].parent != i && nd[tn[i].parent].fvi == r && d < J2KI_TGT_MAX_DEPTH) {
            i = tn[i].parent;
            chain[d++] = i;
        }
        while (d > 0) {
            uint32_t n = chain[--d];
            int32_t vn = nd[n].vi, start = P;
            if (vn < P)
                continue;                             /* known since an earlier packet */
            if (tn[n].parent != n) {
                int32_t vp = nd[tn[n].parent].vi;
                vp = vp < t ? vp : t;
                start = vp > start ? vp : start;
            }
            b->pos += (uint32_t)((vn < t ? vn : t) - start);
            if (vn < t)
                j2ki_t2p_put(b, 1, 1);
        }
        if (e == s)
            return lblock;
        unsigned long long key = ((unsigned long long)(uint32_t)l << 32) | r;
        d = 0;
        i = r;
        chain[d++] = i;
        while (tn[i].parent != i && nd[tn[i].parent].fvz == key && d < J2KI_TGT_MAX_DEPTH) {
            i = tn[i].parent;
            chain[d++] = i;
        }
        while (d > 0) {
            uint32_t n = chain[--d];
            int32_t zp = tn[n].parent != n ? nd[tn[n].parent].vz : 0;
            b->pos += (uint32_t)(nd[n].vz - zp);
            j2ki_t2p_put(b, 1, 1);
        }
    } else {
        j2ki_t2p_put(b, e > s, 1);
        if (e == s)
            return lblock;
    }
    /* number of passes, Table B.4 (j2ki_t2_put_nb_passes) */
    int np = e - s;
    if (np == 1)
        j2ki_t2p_put(b, 0, 1);
    else if (np == 2)
        j2ki_t2p_put(b, 2, 2);
    else if (np <= 5)
        j2ki_t2p_put(b, 0xC | (uint32_t)(np - 3), 4);
    else if (np <= 36)
        j2ki_t2p_put(b, 0x1E0 | (uint32_t)(np - 6), 9);
    else
        j2ki_t2p_put(b, 0xFF80 | (uint32_t)(np - 37), 16);
    /* Lblock and lengths (j2ki_t2_put_lengths) */
    int inc = 0;
    for (int k = s; k < e;) {
        int j = j2ki_t2_seg_last(cb, k, e, scan);
        uint32_t len = cb->passes[j].rate - j2ki_t2_pass_end(cb, k);
        int need = j2ki_t2_floor_log2(len) + 1 - j2ki_t2_floor_log2((uint32_t)(j - k + 1)) - lblock;
        if (need > inc)
            inc = need;
        k = j + 1;
    }
    j2ki_t2p_comma(b, inc);
    lblock += inc;
    for (int k = s; k < e;) {
        int j = j2ki_t2_seg_last(cb, k, e, scan);
        j2ki_t2p_putw(b, cb->passes[j].rate - j2ki_t2_pass_end(cb, k), lblock + j2ki_t2_floor_log2((uint32_t)(j - k + 1)));
        k = j + 1;
    }
    return lblock;
}

/** Code-block bytes the packet of layer l carries for cb. */
J2KI_HD uint32_t j2ki_t2p_cblk_body(const J2kiCblk *cb, int l)
{
    int s = l ? cb->layer_passes[l - 1] : 0, e = cb->layer_passes[l];
    return e > s ? cb->passes[e - 1].rate - j2ki_t2_pass_end(cb, s) : 0;
}

/** 1 + the last layer before l whose packet is not empty (mask bit set), 0 if none. */
J2KI_HD int j2ki_t2p_prev(unsigned long long mask, int l)
{
    int P = 0;
    for (int m = 0; m < l; m++)
        if (mask >> m & 1)
            P = m + 1;
    return P;
}

/** Byte cutter of a header (the stuffing of B.10.1, as bitio.h's j2ki_bits_*): units of 8 bits,
 *  7 after a 0xFF; the last unit is padded with 0 bits, and a final 0xFF gets a 0x00. */
typedef struct J2kiT2pEmit {
    uint8_t *out;                /**< NULL: count only */
    uint32_t bytes;
    int      cap;                /**< bits of the next unit: 8, or 7 after 0xFF */
    int      last_ff;
} J2kiT2pEmit;

J2KI_HD void j2ki_t2p_emit_init(J2kiT2pEmit *em, uint8_t *out)
{
    em->out = out;
    em->bytes = 0;
    em->cap = 8;
    em->last_ff = 0;
}

/** n (<= 8) bits of the buffer at bit pos (the buffer has a cleared word after its data). */
J2KI_HD uint32_t j2ki_t2p_get(const uint32_t *w, uint32_t pos, int n)
{
    uint32_t wi = pos >> 5, off = pos & 31;
    unsigned long long x = ((unsigned long long)w[wi] << 32) | w[wi + 1];
    return (uint32_t)(x >> (64 - off - n)) & ((1u << n) - 1);
}

/**
 * Cuts bits [pos, end) of w into bytes while a whole unit is there; returns the position of the
 * bits left (fewer than a unit). With final, also the padded last unit and the 0x00 after a
 * final 0xFF: the header is then complete (em->bytes).
 */
J2KI_HD uint32_t j2ki_t2p_emit(J2kiT2pEmit *em, const uint32_t *w, uint32_t pos, uint32_t end, int final)
{
    while (end - pos >= (uint32_t)em->cap) {
        uint32_t u = j2ki_t2p_get(w, pos, em->cap);
        if (em->out)
            em->out[em->bytes] = (uint8_t)u;
        em->bytes++;
        pos += (uint32_t)em->cap;
        em->last_ff = em->cap == 8 && u == 0xFF;
        em->cap = em->last_ff ? 7 : 8;
    }
    if (final) {
        int rest = (int)(end - pos);
        if (rest > 0) {
            uint32_t u = j2ki_t2p_get(w, pos, rest) << (em->cap - rest);
            if (em->out)
                em->out[em->bytes] = (uint8_t)u;
            em->bytes++;
            em->last_ff = 0;                          /* padded: never 0xFF */
            pos = end;
        }
        if (em->last_ff) {
            if (em->out)
                em->out[em->bytes] = 0;
            em->bytes++;
        }
    }
    return pos;
}

#endif /* J2KI_T2_PAR_H */
