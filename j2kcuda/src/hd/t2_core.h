/*
 * Packet-header coding of one precinct (ISO/IEC 15444-1 B.9, B.10), serially, by the host
 * tier-2 (t2_ref.c): the precinct's tag trees loaded with a frame's values, then, layer after
 * layer, the header bits of its packet written into a bit writer (bitio.h: 0xFF stuffing, byte
 * padding; counting mode when its byte writer has no buffer). The device codes the same bits
 * with a warp per precinct (t2_par.h, t2_cuda.h), checked against these functions by
 * tests/unit/test_t2_core.c; the pass-length helpers below are shared by both.
 *
 * Header of the packet of layer l (B.10.3-B.10.8), after the first bit (1: not empty):
 *   per code-block of the precinct in packet order (bands HL, LH, HH, each in raster order):
 *     not included before: inclusion tag tree bits (value = first layer, threshold l + 1);
 *                          if included now, the zero bit-plane tag tree bits (sent in full)
 *     included before:     1 bit (new passes in this layer or not)
 *     if included now:     number of new passes (comma code, Table B.4), Lblock increment
 *                          (a run of 1 bits closed by 0), then one length per codeword segment
 *                          in Lblock + floor(log2(passes in the segment)) bits
 *
 * Per-frame state of one precinct: its two tag trees per band and, per code-block, lblock and
 * included. It is reset by j2ki_t2_prec_load and only ever touched by the one caller that codes
 * the precinct's layers in order, so precincts are independent of each other.
 */
#ifndef J2KI_T2_CORE_H
#define J2KI_T2_CORE_H

#include "core/j2ki.h"
#include "core/plan.h"
#include "hd/bitio.h"
#include "hd/tgt.h"

/** Bytes of SOP (A.8.1: FF91, Lsop = 4, Nsop(16)) and EPH (A.8.2: FF92). */
#define J2KI_T2_SOP_BYTES 6
#define J2KI_T2_EPH_BYTES 2
/** Bytes of a tile-part header without PLT: SOT (12) and SOD (2). */
#define J2KI_T2_TP_FIXED_BYTES 14

/** Visits the code-blocks of precinct prec_ (of the resolution whose first band is
 *  first_band_) in packet order (B.9): its bands in order, then each band's code-blocks of the
 *  precinct in raster order; gives the body k (band in the precinct), pb, band, x, y (position
 *  in the band's code-block grid) and cb. */
#define J2KI_T2_FOR_CBLKS(cblks_, bands_, first_band_, prec_, k, pb, band, x, y, cb)                 \
    for (int k = 0; k < (prec_)->nb_bands; k++)                                                      \
        for (J2kiPrecBand *pb = &(prec_)->bands[k]; pb; pb = NULL)                                   \
            for (const J2kiBand *band = &(bands_)[(first_band_) + k]; band; band = NULL)             \
                for (uint32_t y = pb->cby0; y < pb->cby1; y++)                                       \
                    for (uint32_t x = pb->cbx0; x < pb->cbx1; x++)                                   \
                        for (J2kiCblk *cb = &(cblks_)[band->first_cblk + y * band->nb_cblks_w + x]; \
                             cb; cb = NULL)

/** Leaf of code-block (x, y) of the band's grid in the precinct's tag trees (row-major). */
J2KI_HD uint32_t j2ki_t2_leaf(const J2kiPrecBand *pb, uint32_t x, uint32_t y)
{
    return (y - pb->cby0) * (pb->cbx1 - pb->cbx0) + (x - pb->cbx0);
}

J2KI_HD int j2ki_t2_floor_log2(uint32_t v)
{
    int n = -1;
    while (v) {
        v >>= 1;
        n++;
    }
    return n;
}

/** Bytes of the code-block's data up to the end of its first k passes. */
J2KI_HD uint32_t j2ki_t2_pass_end(const J2kiCblk *cb, int k) { return k > 0 ? cb->passes[k - 1].rate : 0; }

/** Number of coding passes n (1..164), Table B.4: 0 | 10 | 1100..1110 (3-5) |
 *  1111 0 0000..1111 1 1110 (6-36, 9 bits) | 1111 1111 1 + 7 bits (37-164, 16 bits). */
J2KI_HD int j2ki_t2_put_nb_passes(J2kiBits *bw, int n)
{
    if (n == 1)
        j2ki_bits_put(bw, 0);
    else if (n == 2)
        j2ki_bits_putn(bw, 2, 2);
    else if (n <= 5)
        j2ki_bits_putn(bw, 0xC | (uint32_t)(n - 3), 4);
    else if (n <= 36)
        j2ki_bits_putn(bw, 0x1E0 | (uint32_t)(n - 6), 9);
    else if (n <= 164)
        j2ki_bits_putn(bw, 0xFF80 | (uint32_t)(n - 37), 16);
    else
        return J2KC_ERR_INTERNAL;
    return 0;
}

/** Last pass of the codeword segment that starts at pass k, within the passes [k, e) sent now:
 *  the first terminated pass, or e - 1. Only BYPASS, TERMALL and the HT block coder (its
 *  cleanup ends a segment before SigProp / MagRef's, ht_ref.h) terminate passes before the
 *  last one (t1_ref.h), so without them (scan = 0) the scan over the passes is skipped. */
J2KI_HD int j2ki_t2_seg_last(const J2kiCblk *cb, int k, int e, int scan)
{
    int j = k;
    if (!scan)
        return e - 1;
    while (j < e - 1 && !cb->passes[j].term)
        j++;
    return j;
}

/** Lblock and the codeword segment lengths of passes [s, e) (B.10.7.1, B.10.7.2). */
J2KI_HD void j2ki_t2_put_lengths(J2kiBits *bw, J2kiCblk *cb, int s, int e, int scan)
{
    int inc = 0;

    for (int k = s; k < e;) {
        int j = j2ki_t2_seg_last(cb, k, e, scan);
        uint32_t len = cb->passes[j].rate - j2ki_t2_pass_end(cb, k);
        int need = j2ki_t2_floor_log2(len) + 1 - j2ki_t2_floor_log2((uint32_t)(j - k + 1)) - cb->lblock;
        if (need > inc)
            inc = need;
        k = j + 1;
    }
    j2ki_bits_putn(bw, ((1u << inc) - 1) << 1, inc + 1);
    cb->lblock += inc;
    for (int k = s; k < e;) {
        int j = j2ki_t2_seg_last(cb, k, e, scan);
        j2ki_bits_putn(bw, cb->passes[j].rate - j2ki_t2_pass_end(cb, k),
                       cb->lblock + j2ki_t2_floor_log2((uint32_t)(j - k + 1)));
        k = j + 1;
    }
}

/**
 * Starts a frame for one precinct: resets its tag trees and loads them with this frame's values
 * (inclusion: the first layer that includes the code-block, nb_layers when none does; zero
 * bit-planes: M_b - numbps, B.10.5), and sets every code-block's Lblock to 3 (B.10.7.1) and
 * passes sent to 0. Returns J2KC_ERR_INTERNAL for inconsistent tier-1 / rate-control results.
 */
J2KI_HD int j2ki_t2_prec_load(J2kiCblk *cblks, const J2kiBand *bands, uint32_t first_band,
                              J2kiPrec *prec, int nb_layers)
{
    for (int k = 0; k < prec->nb_bands; k++) {
        J2kiPrecBand *pb = &prec->bands[k];
        if (!pb->incl || !pb->incl->nb_nodes)
            continue;
        j2ki_tgt_reset(pb->incl);
        j2ki_tgt_reset(pb->zbp);
    }
    J2KI_T2_FOR_CBLKS(cblks, bands, first_band, prec, k, pb, band, x, y, cb) {
        int first = nb_layers;
        for (int l = 0; l < nb_layers; l++) {
            if (cb->layer_passes[l] > 0) {
                first = l;
                break;
            }
        }
        if (first < nb_layers &&
            (cb->numbps > band->nb_mag_bits || cb->numbps < 0 || cb->layer_passes[nb_layers - 1] > cb->nb_passes))
            return J2KC_ERR_INTERNAL;
        j2ki_tgt_set_value(pb->incl, j2ki_t2_leaf(pb, x, y), first);
        j2ki_tgt_set_value(pb->zbp, j2ki_t2_leaf(pb, x, y), first < nb_layers ? band->nb_mag_bits - cb->numbps : 0);
        cb->lblock = 3;
        cb->included = 0;
    }
    return 0;
}

/**
 * Codes the header of the precinct's packet of layer l into bw and flushes it (B.10.1 padding),
 * without SOP/EPH. The precinct's earlier layers must have been coded before (their state is
 * the tag trees, lblock and included). Returns the bytes of code-block data the packet carries
 * (its body), or J2KC_ERR_INTERNAL. Does not advance cb->included: the caller does that with
 * j2ki_t2_prec_commit once it has used the old value (the body starts at pass_end(included)).
 * scan: the code-block style has BYPASS, TERMALL or HT (segments end before the last pass).
 */
J2KI_HD int64_t j2ki_t2_prec_header(J2kiBits *bw, J2kiCblk *cblks, const J2kiBand *bands,
                                    uint32_t first_band, J2kiPrec *prec, int l, int scan)
{
    uint64_t body = 0;
    int nonempty = 0;

    J2KI_T2_FOR_CBLKS(cblks, bands, first_band, prec, k, pb, band, x, y, cb) {
        if (cb->layer_passes[l] < cb->included)
            return J2KC_ERR_INTERNAL;
        if (cb->layer_passes[l] > cb->included)
            nonempty = 1;
    }
    /* B.10.3: a first bit 0 says the packet is empty */
    j2ki_bits_put(bw, nonempty);
    if (nonempty) {
        J2KI_T2_FOR_CBLKS(cblks, bands, first_band, prec, k, pb, band, x, y, cb) {
            int s = cb->included, e = cb->layer_passes[l];
            uint32_t leaf = j2ki_t2_leaf(pb, x, y);
            if (!s) {
                /* B.10.4: first inclusion through the tag tree (value = first layer) */
                j2ki_tgt_encode(pb->incl, bw, leaf, l + 1);
                if (e == s)
                    continue;
                /* B.10.5: zero bit-planes, sent in full */
                j2ki_tgt_encode(pb->zbp, bw, leaf, INT32_MAX);
            } else {
                j2ki_bits_put(bw, e > s);
                if (e == s)
                    continue;
            }
            if (j2ki_t2_put_nb_passes(bw, e - s) < 0)
                return J2KC_ERR_INTERNAL;
            j2ki_t2_put_lengths(bw, cb, s, e, scan);
            body += cb->passes[e - 1].rate - j2ki_t2_pass_end(cb, s);
        }
    }
    j2ki_bits_flush(bw);
    return (int64_t)body;
}

/** Marks the passes of layer l as sent (after its header and body). */
J2KI_HD void j2ki_t2_prec_commit(J2kiCblk *cblks, const J2kiBand *bands, uint32_t first_band,
                                 J2kiPrec *prec, int l)
{
    J2KI_T2_FOR_CBLKS(cblks, bands, first_band, prec, k, pb, band, x, y, cb)
        cb->included = cb->layer_passes[l];
}

/** Bytes of one Iplt entry (A.7.3): 7 bits per byte, bit 7 set on all but the last. */
J2KI_HD int j2ki_t2_plt_entry_bytes(uint64_t len)
{
    int n = 1;
    while (len >= 128) {
        len >>= 7;
        n++;
    }
    return n;
}

/**
 * PLT segments (A.7.3: FF58, Lplt(16), Zplt(8), Iplt...) of a tile-part as a running count:
 * a segment holds at most J2KI_T2_PLT_MAX_PAYLOAD bytes of entries and a new one is opened
 * when the next entry would not fit. bytes: all segments so far; payload: Iplt bytes of the
 * open one (-1 before the first). The device sizes a tile-part's PLT with the same rule as the
 * host writer (t2_ref.c plt_add).
 */
#define J2KI_T2_PLT_MAX_PAYLOAD 65532
typedef struct J2kiT2PltCount {
    uint64_t bytes;
    int32_t  payload;
    uint32_t nb_segs;
} J2kiT2PltCount;

J2KI_HD void j2ki_t2_plt_count_add(J2kiT2PltCount *p, uint64_t packet_len)
{
    int n = j2ki_t2_plt_entry_bytes(packet_len);
    if (p->payload < 0 || p->payload + n > J2KI_T2_PLT_MAX_PAYLOAD) {
        p->bytes += 5;                      /* FF58, Lplt, Zplt */
        p->payload = 0;
        p->nb_segs++;
    }
    p->bytes += (uint64_t)n;
    p->payload += n;
}

#endif /* J2KI_T2_CORE_H */
