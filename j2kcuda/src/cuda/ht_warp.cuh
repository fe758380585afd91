/*
 * One HT set (Rec. ITU-T T.814 | ISO/IEC 15444-15, clause 7) coded by the 32 lanes of a warp,
 * for ht_kern.cu's CODE (the final set of a code-block) and MEASURE (a counted set): the bytes,
 * points and errors of hd/ht_core.h's j2ki_ht_encode_set and hd/ht_plane.h's
 * j2ki_ht_measure_set, which the reference backend runs on one thread.
 *
 * The cleanup (7.3): everything a quad codes is a function of the samples: its context and
 * exponent floor read the row above and the quad to its left (7.3.5, 7.3.7), so the lanes take
 * consecutive quad pairs (raster order over the block, across row ends) and each forms its
 * pair's CxtVLC and U-VLC bits (j2ki_ht_quad_vlc, j2ki_ht_u_pair_bits), its MagSgn bits and its
 * MEL symbols at once. What is serial is kept small:
 *  - the bit positions: warp prefix sums of the pairs' bit counts place each pair's MagSgn and
 *    VLC bits in a ring of unstuffed bits in shared memory;
 *  - the stuffing (7.1), which makes a byte's width depend on the bytes before it: the lanes
 *    form 32 bytes at once assuming no stuffed byte among them, the first byte that calls for
 *    stuffing is found by a ballot (forward: a 0xFF, after which the next byte carries 7 bits;
 *    backward: 7 low bits of 1s after a byte above 0x8F, which ends that byte at 7 bits), the
 *    bytes up to it are kept, and the next window starts after it;
 *  - the MEL coder (7.3.3), adaptive run lengths over a few symbols per quad pair at most: one
 *    lane, symbols in pair order.
 * The streams' ends, the layout of the segment and Scup are j2ki_ht_cleanup's own functions on
 * one lane. SigProp and MagRef (7.4, 7.5): ht_warp_refine; the distortions: ht_warp_dist.
 */
#ifndef J2KI_HT_WARP_CUH
#define J2KI_HT_WARP_CUH

extern "C" {
#include "hd/ht_core.h"
}

/** Words of a ring of unstuffed bits: a batch of 32 quad pairs adds at most 8 x 32 MagSgn bits a
 *  pair (8,192 a batch) or 2 x 7 + 2 x 12 VLC bits a pair (1,216), to fewer than 8 bits left
 *  over; SigProp and MagRef reuse them (at most 256 and 128 bits a batch of 32 columns). */
#define HT_WARP_MS_WORDS  512
#define HT_WARP_VLC_WORDS 64

/** A warp's shared memory while it codes one block. */
typedef struct HtWarpSmem {
    uint32_t ms[HT_WARP_MS_WORDS];
    uint32_t vlc[HT_WARP_VLC_WORDS];
    J2kiHtSig sg;
    double   dpart[32][3];              /* the lanes' partial distortion sums (ht_warp_dist) */
    uint8_t  mel_n[32], mel_b[32];      /* each lane's MEL symbols of the batch: count, bits */
} HtWarpSmem;

/** A stream's unstuffed bits [rpos, wpos) in a ring, and its written bytes (all lanes hold the
 *  same values). */
typedef struct HtWarpStream {
    uint32_t rpos, wpos, pos;
    int      room;          /* forward: the next byte's bits, 8 or 7 after 0xFF */
    int      last;          /* forward: the last byte was 0xFF; backward: it was above 0x8F */
    int      overflow;
} HtWarpStream;

/** Bits [q, q + n) of a ring of mask + 1 words, least significant first (n <= 8). */
__device__ __forceinline__ uint32_t ht_ring_read(const uint32_t *ring, uint32_t mask, uint32_t q, int n)
{
    const uint32_t s = q & 31u;
    uint64_t v = ring[(q >> 5) & mask];
    if (s + (uint32_t)n > 32u)
        v |= (uint64_t)ring[((q >> 5) + 1u) & mask] << 32;
    return (uint32_t)(v >> s) & ((1u << n) - 1u);
}

/** Ors the n low bits of v (n <= 32) into a ring at bit q. */
__device__ __forceinline__ void ht_ring_put(uint32_t *ring, uint32_t mask, uint32_t q, uint32_t v, int n)
{
    const uint32_t s = q & 31u;
    if (!n)
        return;
    v &= (uint32_t)((1ull << n) - 1u);
    atomicOr(&ring[(q >> 5) & mask], v << s);
    if (s + (uint32_t)n > 32u)
        atomicOr(&ring[((q >> 5) + 1u) & mask], v >> (32u - s));
}

/** Clears the ring's words wholly below the new read position (after every lane has read). */
__device__ __forceinline__ void ht_ring_free(uint32_t *ring, uint32_t mask, uint32_t old_rpos, uint32_t new_rpos,
                                             uint32_t lane)
{
    for (uint32_t k = (old_rpos >> 5) + lane; k < (new_rpos >> 5); k += 32)
        ring[k & mask] = 0;
}

/** Exclusive prefix sum over the warp; *total gets the sum. */
__device__ __forceinline__ uint32_t ht_warp_scan(uint32_t v, uint32_t lane, uint32_t *total)
{
    uint32_t x = v;
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= (uint32_t)o)
            x += y;
    }
    *total = __shfl_sync(0xffffffffu, x, 31);
    return x - v;
}

/** Forward bytes (MagSgn: 7.1's rule, a byte after 0xFF carries 7 bits) from a ring, as many
 *  as are complete, into buf[0..cap) (buf NULL: counted). */
__device__ void ht_warp_fwd_bytes(HtWarpStream *st, const uint32_t *ring, uint32_t mask, uint8_t *buf, uint32_t cap,
                                  uint32_t lane)
{
    for (;;) {
        const uint32_t q = st->rpos + (lane ? (uint32_t)st->room + 8u * (lane - 1u) : 0u);
        const int n = lane ? 8 : st->room;
        const int valid = q + (uint32_t)n <= st->wpos;
        const uint32_t byte = valid ? ht_ring_read(ring, mask, q, n) : 0u;
        const uint32_t vmask = __ballot_sync(0xffffffffu, valid);
        const uint32_t ffmask = __ballot_sync(0xffffffffu, valid && byte == 0xffu);
        if (!vmask)
            return;
        const int k = ffmask ? __ffs((int)ffmask) - 1 : __popc(vmask) - 1;
        if ((int)lane <= k) {
            if (st->pos + lane < cap) {
                if (buf)
                    buf[st->pos + lane] = (uint8_t)byte;
            } else {
                st->overflow = 1;
            }
        }
        st->overflow = __any_sync(0xffffffffu, st->overflow);
        const uint32_t end = __shfl_sync(0xffffffffu, q + (uint32_t)n, k);
        const uint32_t last = __shfl_sync(0xffffffffu, byte, k);
        st->rpos = end;
        st->pos += (uint32_t)k + 1u;
        st->last = last == 0xffu;
        st->room = st->last ? 7 : 8;
        if (!ffmask && k < 31)
            return;
    }
}

/** Backward bytes (VLC: a byte whose 7 low bits are 1s after one above 0x8F ends at 7 bits)
 *  from a ring, as many as are complete, into buf[0..cap) in the order written. */
__device__ void ht_warp_bwd_bytes(HtWarpStream *st, const uint32_t *ring, uint32_t mask, uint8_t *buf, uint32_t cap,
                                  uint32_t lane)
{
    for (;;) {
        const uint32_t q = st->rpos + 8u * lane;
        const int v7 = q + 7u <= st->wpos, v8 = q + 8u <= st->wpos;
        const uint32_t c = v8 ? ht_ring_read(ring, mask, q, 8) : v7 ? ht_ring_read(ring, mask, q, 7) : 0u;
        const uint32_t prev = __shfl_up_sync(0xffffffffu, c, 1);
        const int prev_gt = lane ? prev > 0x8fu : st->last;
        const int stuff = v7 && prev_gt && (c & 0x7fu) == 0x7fu;
        const uint32_t okmask = __ballot_sync(0xffffffffu, stuff || v8);
        const uint32_t stmask = __ballot_sync(0xffffffffu, stuff);
        const int nok = ~okmask ? __ffs((int)~okmask) - 1 : 32;
        const int s = stmask ? __ffs((int)stmask) - 1 : 32;
        const int k = s < nok ? s : nok - 1;
        if (k < 0)
            return;
        const uint32_t byte = stuff ? 0x7fu : c;
        if ((int)lane <= k) {
            if (st->pos + lane < cap) {
                if (buf)
                    buf[st->pos + lane] = (uint8_t)byte;
            } else {
                st->overflow = 1;
            }
        }
        st->overflow = __any_sync(0xffffffffu, st->overflow);
        const uint32_t last = __shfl_sync(0xffffffffu, byte, k);
        st->rpos += 8u * (uint32_t)k + (k == s ? 7u : 8u);
        st->pos += (uint32_t)k + 1u;
        st->last = last > 0x8fu;
        if (k != s && k < 31)
            return;
    }
}

/** Quad (qx, qy) at bit-plane p with its context *c and exponent floor *kappa, from the samples
 *  (j2ki_ht_cleanup's carried values: the row above's exponents at x - 1 .. x + 2, the left
 *  quad's significance). */
__device__ __forceinline__ void ht_warp_quad(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits,
                                             int p, int qx, int qy, J2kiHtQuad *q, int *c, int *kappa)
{
    const int x = 2 * qx;
    j2ki_ht_load_quad(coefs, stride, w, h, frac_bits, p, qx, qy, q);
    *kappa = 1;
    if (qy == 0) {
        /* 7.3.5: (sigma_TL | sigma_BL) + 2 sigma_TR + 4 sigma_BR of the left quad */
        *c = 0;
        if (qx) {
            J2kiHtQuad l;
            j2ki_ht_load_quad(coefs, stride, w, h, frac_bits, p, qx - 1, qy, &l);
            *c = ((l.rho & 1) | ((l.rho >> 1) & 1)) | (((l.rho >> 2) & 1) << 1) | (((l.rho >> 3) & 1) << 2);
        }
    } else {
        const int y = 2 * qy - 1;
        const int ea0 = j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, x - 1, y);
        const int ea1 = j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, x, y);
        const int ea2 = j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, x + 1, y);
        const int ea3 = j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, x + 2, y);
        int sw = 0;
        if (qx) {
            /* the left quad's right column (bits 2 and 3 of its rho) */
            sw = j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, x - 1, 2 * qy) > 0 ||
                 (2 * qy + 1 < h && j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, x - 1, 2 * qy + 1) > 0);
        }
        *c = ((ea1 > 0) | (ea0 > 0)) | (sw << 1) | (((ea2 > 0) | (ea3 > 0)) << 2);
        if (q->rho & (q->rho - 1))
            *kappa = j2ki_imax(1, j2ki_imax(j2ki_imax(ea0, ea1), j2ki_imax(ea2, ea3)) - 1);
    }
}

/**
 * j2ki_ht_cleanup by the 32 lanes of a warp (all of them call it, with the same arguments):
 * the cleanup of a w x h block at bit-plane p into out[0..cap) (NULL: counted), *lcup, and the
 * cleanup significance in sm->sg.sig. s holds the MEL and VLC bytes before they are laid out
 * (NULL when out is). Returns what j2ki_ht_cleanup returns, in every lane.
 */
__device__ int ht_warp_cleanup(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits, int p,
                               J2kiHtScratch *s, HtWarpSmem *sm, uint8_t *out, uint32_t cap, uint32_t *lcup)
{
    const uint32_t lane = threadIdx.x & 31u;
    const int qw = (w + 1) >> 1, qh = (h + 1) >> 1, np = (qw + 1) >> 1;
    const uint32_t npairs = (uint32_t)np * (uint32_t)qh;
    HtWarpStream ms = { 0, 0, 0, 8, 0, 0 }, vl = { 0, 4, 1, 8, 1, 0 };
    J2kiHtFwd melw;
    J2kiHtMel mel = { 0, 0 };
    int err = 0;

    *lcup = 0;
    if (w <= 0 || h <= 0 || w > J2KI_HT_MAX_W || w * h > J2KI_HT_MAX_AREA || p < 0 || p > 30 || (out && !s))
        return J2KC_ERR_INVAL;
    __syncwarp();   /* the last set's reads of sm are done (a set that failed returns early) */
    for (int k = (int)lane; k < (w * h + 31) / 32; k += 32)
        sm->sg.sig[k] = 0;
    for (int k = (int)lane; k < HT_WARP_MS_WORDS; k += 32)
        sm->ms[k] = 0;
    for (int k = (int)lane; k < HT_WARP_VLC_WORDS; k += 32)
        sm->vlc[k] = 0;
    j2ki_ht_fwd_init(&melw, out ? s->mel : NULL, sizeof(s->mel));
    __syncwarp();
    /* the VLC stream's first byte is Scup's high byte (a 0xFF for the stuffing rule), the next
     * one starts with Scup's low 4 bits (1s until laid out) */
    if (lane == 0) {
        if (out)
            s->vlc[0] = 0xff;
        sm->vlc[0] = 0xfu;
    }
    __syncwarp();

    for (uint32_t base = 0; base < npairs; base += 32) {
        const uint32_t j = base + lane;
        J2kiHtQuad q[2];
        J2kiHtBits vb = { 0, 0 };
        uint32_t ms_n = 0, mel_n = 0, mel_b = 0;
        int nq = 0, qy = 0, qx = 0;
        if (j < npairs) {
            qy = (int)(j / (uint32_t)np);
            qx = 2 * (int)(j % (uint32_t)np);
            nq = qx + 1 < qw ? 2 : 1;
            const int initial = qy == 0;
            for (int k = 0; k < nq; k++) {
                int c, kappa;
                J2kiHtQuad *cq = &q[k];
                ht_warp_quad(coefs, stride, w, h, frac_bits, p, qx + k, qy, cq, &c, &kappa);
                cq->U = 0; cq->u = 0; cq->uoff = 0; cq->ek = 0;
                if (c == 0) {
                    mel_b |= (uint32_t)(cq->rho != 0) << mel_n;
                    mel_n++;
                }
                if (c != 0 || cq->rho) {
                    const uint16_t ent = j2ki_ht_quad_vlc(cq, c, kappa, initial);
                    if (!ent)
                        err = 1;
                    j2ki_ht_bits_put(&vb, J2KI_HT_VLC_CWD(ent), J2KI_HT_VLC_LEN(ent));
                }
                for (int n = 0; n < 4; n++)
                    if (cq->mu[n]) {
                        ms_n += (uint32_t)(cq->U - ((cq->ek >> n) & 1));
                        const int sx = 2 * (qx + k) + (n >> 1), sy = 2 * qy + (n & 1);
                        atomicOr(&sm->sg.sig[(sy * w + sx) >> 5], 1u << ((sy * w + sx) & 31));
                    }
            }
            const int sym = j2ki_ht_u_pair_bits(&q[0], nq == 2 ? &q[1] : NULL, initial, &vb);
            if (sym >= 0) {
                mel_b |= (uint32_t)sym << mel_n;
                mel_n++;
            }
        }
        sm->mel_n[lane] = (uint8_t)mel_n;
        sm->mel_b[lane] = (uint8_t)mel_b;
        /* the pairs' bits placed by prefix sums after what the streams hold */
        uint32_t ms_tot, vl_tot;
        const uint32_t ms_off = ht_warp_scan(ms_n, lane, &ms_tot);
        const uint32_t vl_off = ht_warp_scan((uint32_t)vb.n, lane, &vl_tot);
        {
            uint32_t at = ms.wpos + ms_off;
            for (int k = 0; k < nq; k++)
                for (int n = 0; n < 4; n++)
                    if (q[k].mu[n]) {
                        const int m = q[k].U - ((q[k].ek >> n) & 1);
                        ht_ring_put(sm->ms, HT_WARP_MS_WORDS - 1, at, 2u * (q[k].mu[n] - 1u) + (uint32_t)q[k].sgn[n], m);
                        at += (uint32_t)m;
                    }
            at = vl.wpos + vl_off;
            if (vb.n > 32) {
                ht_ring_put(sm->vlc, HT_WARP_VLC_WORDS - 1, at, (uint32_t)vb.v, 32);
                ht_ring_put(sm->vlc, HT_WARP_VLC_WORDS - 1, at + 32u, (uint32_t)(vb.v >> 32), vb.n - 32);
            } else {
                ht_ring_put(sm->vlc, HT_WARP_VLC_WORDS - 1, at, (uint32_t)vb.v, vb.n);
            }
        }
        __syncwarp();
        const uint32_t with_mel = __ballot_sync(0xffffffffu, mel_n != 0);
        if (lane == 0)
            for (uint32_t m = with_mel; m; m &= m - 1) {
                const int l = __ffs((int)m) - 1;
                for (int t = 0; t < sm->mel_n[l]; t++)
                    j2ki_ht_mel_sym(&mel, &melw, (sm->mel_b[l] >> t) & 1);
            }
        ms.wpos += ms_tot;
        vl.wpos += vl_tot;
        {
            const uint32_t ms_r = ms.rpos, vl_r = vl.rpos;
            ht_warp_fwd_bytes(&ms, sm->ms, HT_WARP_MS_WORDS - 1, out, cap, lane);
            ht_warp_bwd_bytes(&vl, sm->vlc, HT_WARP_VLC_WORDS - 1, out ? s->vlc : NULL, sizeof(s->vlc), lane);
            __syncwarp();
            ht_ring_free(sm->ms, HT_WARP_MS_WORDS - 1, ms_r, ms.rpos, lane);
            ht_ring_free(sm->vlc, HT_WARP_VLC_WORDS - 1, vl_r, vl.rpos, lane);
            __syncwarp();
        }
    }
    if (__any_sync(0xffffffffu, err))
        return J2KC_ERR_INTERNAL;

    /* the ends of the three streams and the layout, as j2ki_ht_cleanup makes them */
    uint32_t ms_pos = 0, mel_pos = 0, vlc_pos = 0, bad = 0;
    const uint32_t ms_left = ms.wpos - ms.rpos, vl_left = vl.wpos - vl.rpos;
    const uint32_t ms_cur = ms_left ? ht_ring_read(sm->ms, HT_WARP_MS_WORDS - 1, ms.rpos, (int)ms_left) : 0u;
    const uint32_t vl_cur = vl_left ? ht_ring_read(sm->vlc, HT_WARP_VLC_WORDS - 1, vl.rpos, (int)vl_left) : 0u;
    if (lane == 0) {
        J2kiHtFwd msw;
        J2kiHtBwd vlw;
        j2ki_ht_fwd_init(&msw, out, cap);
        msw.pos = ms.pos < cap ? ms.pos : cap;
        msw.cur = ms_cur;
        msw.nb = (int)ms_left;
        msw.room = ms.room;
        msw.ff_run = (uint32_t)ms.last;
        msw.overflow = ms.overflow;
        j2ki_ht_bwd_init(&vlw, out ? s->vlc : NULL, sizeof(s->vlc));
        vlw.pos = vl.pos < vlw.cap ? vl.pos : vlw.cap;
        vlw.cur = vl_cur;
        vlw.nb = (int)vl_left;
        vlw.gt8f = vl.last;
        vlw.overflow = vl.overflow;
        j2ki_ht_fwd_flush_magsgn(&msw);
        j2ki_ht_mel_end(&mel, &melw);
        j2ki_ht_fwd_no_ff_end(&melw);
        j2ki_ht_bwd_flush(&vlw);
        bad = msw.overflow || melw.overflow || vlw.overflow;
        ms_pos = msw.pos;
        mel_pos = melw.pos;
        vlc_pos = vlw.pos;
    }
    bad = __shfl_sync(0xffffffffu, bad, 0);
    ms_pos = __shfl_sync(0xffffffffu, ms_pos, 0);
    mel_pos = __shfl_sync(0xffffffffu, mel_pos, 0);
    vlc_pos = __shfl_sync(0xffffffffu, vlc_pos, 0);
    if (bad)
        return J2KC_ERR_BUFSIZE;
    const uint32_t scup = mel_pos + vlc_pos, len = ms_pos + scup;
    if (scup > J2KI_HT_MAX_SCUP || len > cap)
        return J2KC_ERR_BUFSIZE;
    if (out) {
        __syncwarp();   /* lane 0's MEL and VLC bytes */
        for (uint32_t i = lane; i < mel_pos; i += 32)
            out[ms_pos + i] = s->mel[i];
        for (uint32_t i = lane; i < vlc_pos; i += 32)
            out[len - 1 - i] = s->vlc[i];
        __syncwarp();
        if (lane == 0) {
            out[len - 1] = (uint8_t)(scup >> 4);
            out[len - 2] = (uint8_t)((out[len - 2] & 0xf0) | (scup & 0xf));
            s->pcup = ms_pos;
            s->mel_len = mel_pos;
        }
    }
    *lcup = len;
    return 0;
}

/** Clears a ring (before a pass reuses it). */
__device__ __forceinline__ void ht_ring_clear(uint32_t *ring, int words, uint32_t lane)
{
    for (int k = (int)lane; k < words; k += 32)
        ring[k] = 0;
}

/** Bits of row y (0 <= y < h) of a bitmap at column x, 0 outside the block. */
__device__ __forceinline__ uint32_t ht_map_bit(const uint32_t *m, int w, int x, int y)
{
    return x >= 0 && x < w ? (uint32_t)j2ki_ht_sig_get(m, y * w + x) : 0u;
}

/** The n low bits of v whose bits in keep are set, packed in order (n <= 4). */
__device__ __forceinline__ uint32_t ht_pack4(uint32_t v, uint32_t keep, int *count)
{
    uint32_t r = 0;
    int c = 0;
    for (int k = 0; k < 4; k++)
        if (keep >> k & 1u)
            r |= (v >> k & 1u) << c++;
    *count = c;
    return r;
}

/**
 * j2ki_ht_refine by the warp: SigProp and MagRef at bit-plane p - 1 into out[0..cap) (NULL:
 * counted); sm->sg.sig is the cleanup's significance, sm->sg.any becomes it and SigProp's new
 * samples. A stripe (4 rows) is taken 32 columns at a time, a column a lane:
 *  - SigProp (7.4) visits a stripe column by column, each top to bottom, and codes a sample
 *    that has a significant neighbour, counting those it made significant before. What the
 *    lanes cannot see at once is the chain through the column to the left: each lane
 *    recomputes its column from its left neighbour's new samples until no lane changes (a
 *    chain moves one column a round; the neighbours outside the 32 columns are final, or
 *    not yet visited, which the any bitmap holds as the cleanup left them). The bits go in
 *    groups of 4 columns: their significance bits column by column, then their new samples'
 *    signs, placed by prefix sums;
 *  - MagRef (7.5): bit p - 1 of every sample significant in the cleanup, stripe by stripe,
 *    column by column, backwards with the VLC's stuffing, its bytes reversed at the end.
 * Returns what j2ki_ht_refine returns, in every lane.
 */
__device__ int ht_warp_refine(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits, int p,
                              HtWarpSmem *sm, uint8_t *out, uint32_t cap, uint32_t *lsp, uint32_t *lmr)
{
    const uint32_t lane = threadIdx.x & 31u;
    const int b = p - 1;
    uint32_t *sig = sm->sg.sig, *any = sm->sg.any;
    HtWarpStream sp = { 0, 0, 0, 8, 0, 0 }, mr = { 0, 0, 0, 8, 1, 0 };

    *lsp = *lmr = 0;
    if (p < 1)
        return J2KC_ERR_INVAL;
    __syncwarp();   /* the cleanup's last reads of the rings and the bitmap are done */
    for (int k = (int)lane; k < (w * h + 31) / 32; k += 32)
        any[k] = sig[k];
    ht_ring_clear(sm->ms, HT_WARP_MS_WORDS, lane);
    ht_ring_clear(sm->vlc, HT_WARP_VLC_WORDS, lane);
    __syncwarp();

    /* SigProp */
    for (int y0 = 0; y0 < h; y0 += 4) {
        const int n = j2ki_imin(4, h - y0);
        for (int cx = 0; cx < w; cx += 32) {
            const int x = cx + (int)lane;
            uint32_t sigc = 0, bitc = 0, sgnc = 0, stat = 0, newc = 0, coded = 0;
            if (x < w) {
                for (int r = 0; r < n; r++) {
                    const int32_t v = coefs[(ptrdiff_t)(y0 + r) * stride + x];
                    const uint32_t a = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
                    sigc |= ht_map_bit(sig, w, x, y0 + r) << r;
                    bitc |= ((a >> frac_bits) >> b & 1u) << r;
                    sgnc |= (uint32_t)(v < 0) << r;
                }
                /* the neighbours as the any bitmap holds them now: final to the left of these
                 * columns and above the stripe, the cleanup's elsewhere (the sample's own bit
                 * counts too, as in j2ki_ht_sp_nbr: 0 where it is tested) */
                const int xa = x > 0 ? x - 1 : 0, xb = x + 1 < w ? x + 1 : w - 1;
                uint32_t rows = 0;     /* bit k: row y0 - 1 + k has a bit in columns x - 1 .. x + 1 */
                for (int k = 0; k < n + 2; k++) {
                    const int yy = y0 - 1 + k;
                    if (yy >= 0 && yy < h)
                        rows |= (uint32_t)(j2ki_ht_sig_run(any, w, yy, xa, xb) != 0) << k;
                }
                for (int r = 0; r < n; r++)
                    stat |= (uint32_t)((rows >> r & 7u) != 0) << r;
            }
            for (;;) {
                const uint32_t left = __shfl_up_sync(0xffffffffu, newc, 1);
                const uint32_t l = lane ? left : 0u;
                uint32_t nc = 0, cd = 0;
                for (int r = 0; x < w && r < n; r++) {
                    /* rows r - 1 .. r + 1 of the column to the left, row r - 1 of this one */
                    const uint32_t near = (l >> r & 1u) | (r ? (l >> (r - 1) & 1u) | (nc >> (r - 1) & 1u) : 0u) |
                                          (l >> (r + 1) & 1u);
                    if (!(sigc >> r & 1u) && ((stat >> r & 1u) | near)) {
                        cd |= 1u << r;
                        nc |= (bitc >> r & 1u) << r;
                    }
                }
                const int changed = __any_sync(0xffffffffu, nc != newc);
                newc = nc;
                coded = cd;
                if (!changed)
                    break;
            }
            /* the stripe's new samples, for the columns to the right and the next stripe (after
             * every lane has read its neighbours) */
            __syncwarp();
            for (int r = 0; r < n; r++)
                if (newc >> r & 1u)
                    atomicOr(&any[((y0 + r) * w + x) >> 5], 1u << (((y0 + r) * w + x) & 31));
            /* a group of 4 columns: its lanes' significance bits, then their signs */
            int cc, nn;
            const uint32_t sbits = ht_pack4(bitc, coded, &cc), gbits = ht_pack4(sgnc, newc, &nn);
            uint32_t tot, pc = (uint32_t)cc, pn = (uint32_t)nn;
            const uint32_t start = ht_warp_scan((uint32_t)(cc + nn), lane, &tot);
            const uint32_t gstart = __shfl_sync(0xffffffffu, start, (int)(lane & ~3u));
            for (int o = 1; o < 4; o <<= 1) {     /* inclusive scans inside the group */
                const uint32_t a = __shfl_up_sync(0xffffffffu, pc, o), c = __shfl_up_sync(0xffffffffu, pn, o);
                if ((lane & 3u) >= (uint32_t)o) {
                    pc += a;
                    pn += c;
                }
            }
            const uint32_t gcc = __shfl_sync(0xffffffffu, pc, (int)(lane | 3u));
            ht_ring_put(sm->ms, HT_WARP_MS_WORDS - 1, sp.wpos + gstart + pc - (uint32_t)cc, sbits, cc);
            ht_ring_put(sm->ms, HT_WARP_MS_WORDS - 1, sp.wpos + gstart + gcc + pn - (uint32_t)nn, gbits, nn);
            __syncwarp();
            sp.wpos += tot;
            const uint32_t r0 = sp.rpos;
            ht_warp_fwd_bytes(&sp, sm->ms, HT_WARP_MS_WORDS - 1, out, cap, lane);
            __syncwarp();
            ht_ring_free(sm->ms, HT_WARP_MS_WORDS - 1, r0, sp.rpos, lane);
            __syncwarp();
        }
    }
    uint32_t sp_pos = 0, bad = 0;
    {
        const uint32_t left = sp.wpos - sp.rpos;
        const uint32_t cur = left ? ht_ring_read(sm->ms, HT_WARP_MS_WORDS - 1, sp.rpos, (int)left) : 0u;
        if (lane == 0) {
            J2kiHtFwd f;
            j2ki_ht_fwd_init(&f, out, cap);
            f.pos = sp.pos < cap ? sp.pos : cap;
            f.cur = cur;
            f.nb = (int)left;
            f.room = sp.room;
            f.ff_run = (uint32_t)sp.last;
            f.overflow = sp.overflow;
            j2ki_ht_fwd_flush_lsb0(&f);
            j2ki_ht_fwd_no_ff_end(&f);
            bad = f.overflow;
            sp_pos = f.pos;
        }
    }
    bad = __shfl_sync(0xffffffffu, bad, 0);
    sp_pos = __shfl_sync(0xffffffffu, sp_pos, 0);
    if (bad)
        return J2KC_ERR_BUFSIZE;

    /* MagRef, its bytes in the order written from out + sp_pos */
    uint8_t *mo = out ? out + sp_pos : NULL;
    const uint32_t mcap = cap - sp_pos;
    for (int y0 = 0; y0 < h; y0 += 4) {
        const int n = j2ki_imin(4, h - y0);
        for (int cx = 0; cx < w; cx += 32) {
            const int x = cx + (int)lane;
            uint32_t sigc = 0, bitc = 0, tot;
            int cnt = 0;
            if (x < w)
                for (int r = 0; r < n; r++) {
                    const int32_t v = coefs[(ptrdiff_t)(y0 + r) * stride + x];
                    const uint32_t a = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
                    sigc |= ht_map_bit(sig, w, x, y0 + r) << r;
                    bitc |= ((a >> frac_bits) >> b & 1u) << r;
                }
            const uint32_t bits = ht_pack4(bitc, sigc, &cnt);
            const uint32_t off = ht_warp_scan((uint32_t)cnt, lane, &tot);
            ht_ring_put(sm->vlc, HT_WARP_VLC_WORDS - 1, mr.wpos + off, bits, cnt);
            __syncwarp();
            mr.wpos += tot;
            const uint32_t r0 = mr.rpos;
            ht_warp_bwd_bytes(&mr, sm->vlc, HT_WARP_VLC_WORDS - 1, mo, mcap, lane);
            __syncwarp();
            ht_ring_free(sm->vlc, HT_WARP_VLC_WORDS - 1, r0, mr.rpos, lane);
            __syncwarp();
        }
    }
    uint32_t mr_pos = 0;
    {
        const uint32_t left = mr.wpos - mr.rpos;
        const uint32_t cur = left ? ht_ring_read(sm->vlc, HT_WARP_VLC_WORDS - 1, mr.rpos, (int)left) : 0u;
        if (lane == 0) {
            J2kiHtBwd f;
            j2ki_ht_bwd_init(&f, mo, mcap);
            f.pos = mr.pos < mcap ? mr.pos : mcap;
            f.cur = cur;
            f.nb = (int)left;
            f.gt8f = mr.last;
            f.overflow = mr.overflow;
            j2ki_ht_bwd_flush(&f);
            bad = f.overflow;
            mr_pos = f.pos;
        }
    }
    bad = __shfl_sync(0xffffffffu, bad, 0);
    mr_pos = __shfl_sync(0xffffffffu, mr_pos, 0);
    if (bad)
        return J2KC_ERR_BUFSIZE;
    if (mo) {
        __syncwarp();
        for (uint32_t i = lane; i < mr_pos / 2; i += 32) {
            const uint8_t t = mo[i];
            mo[i] = mo[mr_pos - 1 - i];
            mo[mr_pos - 1 - i] = t;
        }
        __syncwarp();
    }
    *lsp = sp_pos;
    *lmr = mr_pos;
    return 0;
}

/** j2ki_ht_dist by the warp: lane l sums partial l (j2ki_ht_dist_lane), lane 0 adds the
 *  partials in lane order (J2KI_HT_DIST_LANES == 32). Lane 0's d[] is the result. */
__device__ void ht_warp_dist(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits, int p,
                             const uint32_t *any, HtWarpSmem *sm, double d[3])
{
    const uint32_t lane = threadIdx.x & 31u;
    static_assert(J2KI_HT_DIST_LANES == 32, "a lane per partial sum");
    j2ki_ht_dist_lane(coefs, stride, w, h, frac_bits, p, any, (int)lane, sm->dpart[lane]);
    __syncwarp();
    d[0] = d[1] = d[2] = 0.0;
    if (lane == 0)
        for (int l = 0; l < 32; l++)
            for (int k = 0; k < 3; k++)
                d[k] += sm->dpart[l][k];
    __syncwarp();
}

/**
 * j2ki_ht_encode_set by the warp (ht_warp_cleanup, ht_warp_refine, ht_warp_dist). Every lane
 * returns the result; lane 0's outputs are the ones written.
 */
__device__ int ht_warp_encode_set(const int32_t *coefs, ptrdiff_t stride, int w, int h, int nb_mag_bits,
                                  int frac_bits, int p, int refine, J2kiHtScratch *s, HtWarpSmem *sm,
                                  uint8_t *data, uint32_t cap, J2kiPass *passes, int max_passes, int *nb_passes,
                                  int *numbps, uint32_t *len)
{
    const uint32_t lane = threadIdx.x & 31u;
    uint32_t lcup, lsp = 0, lmr = 0, acc = 0;
    double d[3];
    int top, ret = 0;

    *nb_passes = 0;
    *numbps = 0;
    *len = 0;
    if (w <= 0 || h <= 0 || w > J2KI_HT_MAX_W || w * h > J2KI_HT_MAX_AREA || frac_bits < 0 ||
        frac_bits > 31 || p < 0)
        return J2KC_ERR_INVAL;
    for (int i = (int)lane, y = 0, x = (int)lane; i < w * h; i += 32, x += 32) {   /* i = y w + x */
        while (x >= w) {
            x -= w;
            y++;
        }
        const int32_t v = coefs[(ptrdiff_t)y * stride + x];
        acc |= (v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v) >> frac_bits;
    }
    for (int o = 16; o; o >>= 1)
        acc |= __shfl_xor_sync(0xffffffffu, acc, o);
    top = j2ki_ht_bits32(acc);
    if (!top)
        return 0;
    if (top > nb_mag_bits || top > 31)
        return J2KC_ERR_INTERNAL;
    p = j2ki_imin(p, top - 1);
    refine = refine && p > 0;
    if (max_passes < (refine ? 3 : 1))
        return J2KC_ERR_BUFSIZE;
    ret = ht_warp_cleanup(coefs, stride, w, h, frac_bits, p, s, sm, data, cap, &lcup);
    if (ret < 0)
        return ret;
    if (refine) {
        ret = ht_warp_refine(coefs, stride, w, h, frac_bits, p, sm, data + lcup, cap - lcup, &lsp, &lmr);
        if (ret < 0)
            return ret;
    }
    ht_warp_dist(coefs, stride, w, h, frac_bits, p, refine ? sm->sg.any : NULL, sm, d);   /* d[0] alone without refine */
    if (lane == 0) {
        *numbps = p + 1;
        *nb_passes = refine ? 3 : 1;
        *len = lcup + lsp + lmr;
        j2ki_ht_pass(&passes[0], lcup, d[0], 1);
        if (refine) {
            j2ki_ht_pass(&passes[1], lcup + lsp, d[1], 0);
            j2ki_ht_pass(&passes[2], lcup + lsp + lmr, d[2], 1);
        }
    }
    __syncwarp();   /* sm is the next block's after this */
    return 0;
}

/** j2ki_ht_measure_set by the warp: the set at plane b counted (nothing stored), its rates and
 *  summed distortions in lane 0's rate[] and sdist[]. Returns 0, or -1 when it does not fit
 *  cap (every lane). */
__device__ int ht_warp_measure_set(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits, int b,
                                   int refine, uint32_t cap, HtWarpSmem *sm, uint32_t rate[3], double sdist[3])
{
    uint32_t lcup, lsp = 0, lmr = 0;
    double d[3];
    refine = refine && b > 0;
    if (ht_warp_cleanup(coefs, stride, w, h, frac_bits, b, NULL, sm, NULL, cap, &lcup) < 0 ||
        (refine && ht_warp_refine(coefs, stride, w, h, frac_bits, b, sm, NULL, cap - lcup, &lsp, &lmr) < 0)) {
        __syncwarp();
        return -1;
    }
    ht_warp_dist(coefs, stride, w, h, frac_bits, b, refine ? sm->sg.any : NULL, sm, d);
    rate[0] = lcup;
    rate[1] = lcup + lsp;
    rate[2] = lcup + lsp + lmr;
    sdist[0] = d[0];
    sdist[1] = d[0] + d[1];
    sdist[2] = d[0] + d[1] + d[2];
    __syncwarp();   /* sm is the next set's after this */
    return 0;
}

#endif /* J2KI_HT_WARP_CUH */
