/*
 * HT block coder (ISO/IEC 15444-15 clause 7): random code-blocks coded by hd/ht_core.h and
 * decoded again by a small decoder written here from the standard's decoding procedures
 * (7.3: MEL, VLC, U-VLC, MagSgn with their stuffing; 7.4 SigProp; 7.5 MagRef), for every
 * shape class (odd sizes, 1-wide, 4096 samples), sparse and dense content, and bit-planes.
 * The codeword tables themselves are checked by outside decoders (tests/ht.sh); here they are
 * checked to be prefix-free and to decode to one meaning per codeword.
 */
#include "test.h"

#include "hd/ht_core.h"
#include "hd/ht_plane.h"

/* ---- readers ---- */

typedef struct Fwd {            /* MagSgn and SigProp: LSB first; MEL: MSB first */
    const uint8_t *d;
    uint32_t pos, end;
    uint32_t cur;
    int nb, last_ff, pad;
} Fwd;

static int fwd_byte(Fwd *r)
{
    int room = r->last_ff ? 7 : 8;
    uint32_t b = r->pos < r->end ? r->d[r->pos++] : (uint32_t)r->pad;
    r->last_ff = b == 0xff;
    r->cur = b;
    r->nb = room;
    return room;
}

static int fwd_lsb(Fwd *r)
{
    int bit;
    if (!r->nb) {
        int room = fwd_byte(r);
        r->nb = room;
        r->cur &= (1u << room) - 1;   /* a stuffed MSB must be 0; dropped */
    }
    bit = r->cur & 1;
    r->cur >>= 1;
    r->nb--;
    return bit;
}

static int fwd_msb(Fwd *r)
{
    if (!r->nb)
        fwd_byte(r);
    r->nb--;
    return (r->cur >> r->nb) & 1;
}

typedef struct Bwd {            /* VLC and MagRef: LSB first, from the end backwards */
    const uint8_t *d;
    int64_t pos, start;
    uint32_t cur;
    int nb, prev_gt8f;
} Bwd;

static int bwd_bit(Bwd *r)
{
    int bit;
    if (!r->nb) {
        uint32_t b = r->pos >= r->start ? r->d[r->pos--] : 0;
        r->nb = (r->prev_gt8f && (b & 0x7f) == 0x7f) ? 7 : 8;
        r->prev_gt8f = b > 0x8f;
        r->cur = b;
    }
    bit = r->cur & 1;
    r->cur >>= 1;
    r->nb--;
    return bit;
}

static uint32_t bwd_bits(Bwd *r, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint32_t)bwd_bit(r) << i;
    return v;
}

/* ---- CxtVLC decode lists built from the encoder tables ---- */

typedef struct Cw { uint8_t cwd, len, rho, uoff, ek, e1; } Cw;
static Cw cws[2][8][512];
static int nb_cws[2][8];

static int add_cw(int t, int c, uint16_t e, int rho, int uoff, int tset)
{
    Cw n = { (uint8_t)J2KI_HT_VLC_CWD(e), (uint8_t)J2KI_HT_VLC_LEN(e), (uint8_t)rho, (uint8_t)uoff,
             (uint8_t)J2KI_HT_VLC_EK(e), (uint8_t)(J2KI_HT_VLC_EK(e) & tset) };
    for (int i = 0; i < nb_cws[t][c]; i++) {
        Cw *o = &cws[t][c][i];
        int l = o->len < n.len ? o->len : n.len;
        if (((o->cwd ^ n.cwd) & ((1u << l) - 1)) == 0) {
            /* the same codeword must mean the same thing; a proper prefix is a clash */
            if (o->len != n.len || o->rho != n.rho || o->uoff != n.uoff || o->ek != n.ek || o->e1 != n.e1)
                return -1;
            return 0;
        }
    }
    cws[t][c][nb_cws[t][c]++] = n;
    return 0;
}

static int build_tables(void)
{
    for (int t = 0; t < 2; t++)
        for (int c = 0; c < 8; c++)
            for (int rho = 0; rho < 16; rho++) {
                uint16_t e = t ? J2KI_HT_VLC(j2ki_ht_vlc1_u0)[(c << 4) | rho] : J2KI_HT_VLC(j2ki_ht_vlc0_u0)[(c << 4) | rho];
                if (e && add_cw(t, c, e, rho, 0, 0) < 0)
                    return -1;
                if (!e && !(c == 0 && rho == 0))
                    return -2;
                for (int ts = 1; ts < 16; ts++) {
                    if (ts & ~rho)
                        continue;
                    e = t ? J2KI_HT_VLC(j2ki_ht_vlc1_u1)[(c << 8) | (rho << 4) | ts] : J2KI_HT_VLC(j2ki_ht_vlc0_u1)[(c << 8) | (rho << 4) | ts];
                    if (!e)
                        return -3;
                    if (J2KI_HT_VLC_EK(e) & ~rho)
                        return -4;
                    if (add_cw(t, c, e, rho, 1, ts) < 0)
                        return -1;
                }
            }
    return 0;
}

static const Cw *vlc_decode(Bwd *r, int t, int c)
{
    uint32_t v = 0;
    for (int len = 1; len <= 7; len++) {
        v |= (uint32_t)bwd_bit(r) << (len - 1);
        for (int i = 0; i < nb_cws[t][c]; i++)
            if (cws[t][c][i].len == len && cws[t][c][i].cwd == v)
                return &cws[t][c][i];
    }
    return NULL;
}

/* ---- MEL ---- */
typedef struct Mel { int k, run, one; } Mel;

static int mel_sym(Mel *m, Fwd *r)
{
    static const int E[13] = { 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5 };
    if (m->run == 0 && !m->one) {
        int e = E[m->k];
        if (fwd_msb(r)) {
            m->run = 1 << e;
            m->k = m->k < 12 ? m->k + 1 : 12;
        } else {
            m->run = 0;
            for (int i = 0; i < e; i++)
                m->run = 2 * m->run + fwd_msb(r);
            m->k = m->k > 0 ? m->k - 1 : 0;
            m->one = 1;
        }
    }
    if (m->run > 0) {
        m->run--;
        return 0;
    }
    m->one = 0;
    return 1;
}

/* ---- U-VLC ---- */
static int u_prefix(Bwd *r)
{
    if (bwd_bit(r)) return 1;
    if (bwd_bit(r)) return 2;
    if (bwd_bit(r)) return 3;
    return 5;
}
static int u_suffix(Bwd *r, int pfx)
{
    if (pfx < 3) return 0;
    if (pfx == 3) return (int)bwd_bits(r, 1);
    return (int)bwd_bits(r, 5);
}
static int u_ext(Bwd *r, int sfx) { return sfx >= 28 ? (int)bwd_bits(r, 4) : 0; }

/*
 * Decodes a cleanup segment (and the refinement one when passes > 1) of a w x h block at
 * bit-plane p: out[] gets signed index values with the decoded bits (the cleanup's mu << p,
 * plus SigProp / MagRef bit p - 1). Returns 0 or a negative step number on a syntax error.
 */
static int ht_decode(const uint8_t *seg, uint32_t lcup, uint32_t lref, int passes, int w, int h,
                     int p, int32_t *out)
{
    uint8_t d[J2KI_HT_CUP_CAP + 8];
    uint32_t scup, pcup;
    int qw = (w + 1) / 2, qh = (h + 1) / 2;
    static uint8_t E[J2KI_HT_MAX_AREA], sig[J2KI_HT_MAX_AREA];
    static uint32_t mu[J2KI_HT_MAX_AREA];
    static int sg[J2KI_HT_MAX_AREA];
    Fwd ms = { 0 }, melr = { 0 };
    Bwd vlc = { 0 };
    Mel mel = { 0, 0, 0 };

    if (lcup < 2 || lcup > sizeof(d))
        return -1;
    memcpy(d, seg, lcup);
    scup = ((uint32_t)d[lcup - 1] << 4) | (d[lcup - 2] & 15);
    if (scup < 2 || scup > lcup || scup > 4079)
        return -2;
    pcup = lcup - scup;
    d[lcup - 1] = 0xff;
    d[lcup - 2] |= 0x0f;
    ms.d = d; ms.pos = 0; ms.end = pcup; ms.pad = 0xff;
    melr.d = d; melr.pos = pcup; melr.end = lcup; melr.pad = 0xff;
    vlc.d = d; vlc.pos = lcup - 1; vlc.start = pcup; vlc.prev_gt8f = 0;
    /* the byte Lcup-1 (0xFF) is read and dropped: its 8 bits, then the 4 low bits of Lcup-2 */
    bwd_bits(&vlc, 8);
    bwd_bits(&vlc, 4);
    memset(E, 0, sizeof(E));
    memset(sig, 0, sizeof(sig));
    memset(mu, 0, sizeof(mu));
    memset(sg, 0, sizeof(sg));

    for (int qy = 0; qy < qh; qy++) {
        int init = qy == 0;
        for (int qx = 0; qx < qw; qx += 2) {
            int nq = qx + 1 < qw ? 2 : 1, U[2] = { 0, 0 }, u[2] = { 0, 0 };
            const Cw *cw[2] = { NULL, NULL };
            int rho[2] = { 0, 0 }, uoff[2] = { 0, 0 }, ek[2] = { 0, 0 }, e1[2] = { 0, 0 };
            for (int k = 0; k < nq; k++) {
                int x = 2 * (qx + k), y = 2 * qy, c;
#define SIG(xx, yy) ((xx) >= 0 && (xx) < w && (yy) >= 0 && (yy) < h ? sig[(yy) * w + (xx)] : 0)
                if (init) {
                    c = (SIG(x - 2, y) | SIG(x - 2, y + 1)) + 2 * SIG(x - 1, y) + 4 * SIG(x - 1, y + 1);
                } else {
                    int n = SIG(x, y - 1), nw = SIG(x - 1, y - 1), ne = SIG(x + 1, y - 1), nf = SIG(x + 2, y - 1);
                    int wv = SIG(x - 1, y) | SIG(x - 1, y + 1);
                    c = (n | nw) | (wv << 1) | ((ne | nf) << 2);
                }
                if (c == 0 && !mel_sym(&mel, &melr))
                    continue;
                cw[k] = vlc_decode(&vlc, init ? 0 : 1, c);
                if (!cw[k])
                    return -3;
                rho[k] = cw[k]->rho; uoff[k] = cw[k]->uoff; ek[k] = cw[k]->ek; e1[k] = cw[k]->e1;
                for (int n = 0; n < 4; n++) {
                    int sx = x + (n >> 1), sy = y + (n & 1);
                    if ((rho[k] >> n) & 1) {
                        if (sx >= w || sy >= h)
                            return -4;
                        sig[sy * w + sx] = 1;
                    }
                }
            }
            /* u values */
            if (nq == 2 && uoff[0] && uoff[1]) {
                if (init && mel_sym(&mel, &melr)) {
                    int p0 = u_prefix(&vlc), p1 = u_prefix(&vlc);
                    int s0 = u_suffix(&vlc, p0), s1 = u_suffix(&vlc, p1);
                    int x0 = u_ext(&vlc, s0), x1 = u_ext(&vlc, s1);
                    u[0] = 2 + p0 + s0 + 4 * x0;
                    u[1] = 2 + p1 + s1 + 4 * x1;
                } else {
                    int p0 = u_prefix(&vlc);
                    if (init && p0 > 2) {
                        u[1] = (int)bwd_bits(&vlc, 1) + 1;
                        int s0 = u_suffix(&vlc, p0);
                        u[0] = p0 + s0 + 4 * u_ext(&vlc, s0);
                    } else {
                        int p1 = u_prefix(&vlc);
                        int s0 = u_suffix(&vlc, p0), s1 = u_suffix(&vlc, p1);
                        int x0 = u_ext(&vlc, s0), x1 = u_ext(&vlc, s1);
                        u[0] = p0 + s0 + 4 * x0;
                        u[1] = p1 + s1 + 4 * x1;
                    }
                }
            } else {
                for (int k = 0; k < nq; k++)
                    if (uoff[k]) {
                        int pf = u_prefix(&vlc), sf = u_suffix(&vlc, pf);
                        u[k] = pf + sf + 4 * u_ext(&vlc, sf);
                    }
            }
            for (int k = 0; k < nq; k++) {
                int x = 2 * (qx + k), y = 2 * qy, kappa = 1;
                if (!init && (rho[k] & (rho[k] - 1))) {
                    int m = 0;
                    for (int dx = -1; dx <= 2; dx++) {
                        int xx = x + dx, yy = y - 1;
                        if (xx >= 0 && xx < w)
                            m = E[yy * w + xx] > m ? E[yy * w + xx] : m;
                    }
                    kappa = m - 1 > 1 ? m - 1 : 1;
                }
                U[k] = kappa + u[k];
                if (U[k] > 31)
                    return -5;
                for (int n = 0; n < 4; n++) {
                    int sx = x + (n >> 1), sy = y + (n & 1), m;
                    uint32_t v = 0;
                    if (!((rho[k] >> n) & 1))
                        continue;
                    m = U[k] - ((ek[k] >> n) & 1);
                    for (int i = 0; i < m; i++)
                        v |= (uint32_t)fwd_lsb(&ms) << i;
                    v |= (uint32_t)((e1[k] >> n) & 1) << m;
                    mu[sy * w + sx] = (v >> 1) + 1;
                    sg[sy * w + sx] = (int)(v & 1);
                    {
                        uint32_t t = v | 1;
                        int e = 0;
                        while (t) { e++; t >>= 1; }
                        E[sy * w + sx] = (uint8_t)e;
                    }
                }
            }
        }
    }
    for (int i = 0; i < w * h; i++)
        out[i] = (int32_t)(mu[i] << p) * (sg[i] ? -1 : 1);
    if (passes > 1) {
        const uint8_t *ref = seg + lcup;
        Fwd sp = { 0 };
        static uint8_t st[J2KI_HT_MAX_AREA];   /* 1 cleanup sig, 2 new, 3 visited */
        sp.d = ref; sp.pos = 0; sp.end = lref; sp.pad = 0;
        for (int i = 0; i < w * h; i++)
            st[i] = sig[i];
        for (int y0 = 0; y0 < h; y0 += 4)
            for (int x0 = 0; x0 < w; x0 += 4) {
                for (int x = x0; x < x0 + 4 && x < w; x++)
                    for (int y = y0; y < y0 + 4 && y < h; y++) {
                        int nbr = 0;
                        if (st[y * w + x] == 1)
                            continue;
                        for (int dy = -1; dy <= 1; dy++)
                            for (int dx = -1; dx <= 1; dx++) {
                                int xx = x + dx, yy = y + dy;
                                if ((dx || dy) && xx >= 0 && yy >= 0 && xx < w && yy < h &&
                                    (st[yy * w + xx] == 1 || st[yy * w + xx] == 2))
                                    nbr = 1;
                            }
                        st[y * w + x] = 3;
                        if (nbr && fwd_lsb(&sp))
                            st[y * w + x] = 2;
                    }
                for (int x = x0; x < x0 + 4 && x < w; x++)
                    for (int y = y0; y < y0 + 4 && y < h; y++)
                        if (st[y * w + x] == 2)
                            out[y * w + x] = (fwd_lsb(&sp) ? -1 : 1) * (int32_t)(1u << (p - 1));
            }
        if (passes > 2) {
            Bwd mr = { 0 };
            mr.d = ref; mr.pos = (int64_t)lref - 1; mr.start = 0; mr.prev_gt8f = 1;
            for (int y0 = 0; y0 < h; y0 += 4)
                for (int x = 0; x < w; x++)
                    for (int y = y0; y < y0 + 4 && y < h; y++)
                        if (st[y * w + x] == 1 && bwd_bit(&mr)) {
                            int32_t v = out[y * w + x];
                            out[y * w + x] = v < 0 ? v - (int32_t)(1u << (p - 1)) : v + (int32_t)(1u << (p - 1));
                        }
        }
    }
    return 0;
}

/* ---- the test ---- */

static J2kiHtScratch scratch;
static J2kiHtSig sig;
static uint8_t buf[J2KI_HT_CUP_CAP + J2KI_HT_REF_CAP], buf2[J2KI_HT_CUP_CAP + J2KI_HT_REF_CAP];
static long sp_coded, sp_skipped;
static long cap_fail, measured;       /* counted runs that did not fit; sets measured */     /* SigProp's samples with bit p-1 set: coded / not */
static int32_t coefs[J2KI_HT_MAX_AREA], dec[J2KI_HT_MAX_AREA];

/* the expected decoded value: bits >= p after the cleanup; bit p-1 after the refinements
 * (SigProp only where a significant neighbour let it be coded) */
static int32_t expect_val(int32_t v, int keep)
{
    uint32_t a = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
    a = (a >> keep) << keep;
    return v < 0 ? -(int32_t)a : (int32_t)a;
}

static void one_block(int w, int h, int maxbits, int density, int frac)
{
    int top = 0, p, ret;
    uint32_t lcup, lsp, lmr;
    for (int i = 0; i < w * h; i++) {
        int32_t v = 0;
        if ((int)(test_rand() % 100) < density) {
            int bits = 1 + (int)(test_rand() % (uint32_t)maxbits);
            v = (int32_t)(test_rand() & ((1u << bits) - 1));
            if (test_rand() & 1)
                v = -v;
        }
        coefs[i] = (int32_t)((uint32_t)v << frac) | (int32_t)(test_rand() & ((1u << frac) - 1));
        if (v < 0)
            coefs[i] = -(int32_t)(((uint32_t)-v << frac) | (test_rand() & ((1u << frac) - 1)));
    }
    for (int i = 0; i < w * h; i++) {
        uint32_t a = coefs[i] < 0 ? (uint32_t)0 - (uint32_t)coefs[i] : (uint32_t)coefs[i];
        a >>= frac;
        while (a >> top)
            top++;
    }
    if (!top)
        return;
    p = (int)(test_rand() % (uint32_t)top);
    ret = j2ki_ht_cleanup(coefs, w, w, h, frac, p, &scratch, &sig, buf, sizeof(buf), &lcup);
    CHECK(ret == 0, "cleanup %dx%d p=%d: %d", w, h, p, ret);
    if (ret)
        return;
    /* no stream that another follows ends in 0xFF (a reader looking ahead would unstuff the
     * next stream's first byte; OpenJPEG asserts on it) */
    CHECK(scratch.pcup == 0 || buf[scratch.pcup - 1] != 0xff, "%dx%d p=%d: MagSgn ends in 0xFF", w, h, p);
    CHECK(scratch.mel_len == 0 || buf[scratch.pcup + scratch.mel_len - 1] != 0xff,
          "%dx%d p=%d: MEL ends in 0xFF", w, h, p);
    lsp = lmr = 0;
    if (p > 0) {
        ret = j2ki_ht_refine(coefs, w, w, h, frac, p, &sig, buf + lcup, sizeof(buf) - lcup, &lsp, &lmr);
        CHECK(ret == 0, "refine %dx%d p=%d: %d", w, h, p, ret);
        CHECK(lsp == 0 || buf[lcup + lsp - 1] != 0xff, "%dx%d p=%d: SigProp ends in 0xFF", w, h, p);
    }
    /* counted without storing (the plane chooser's measured sets): the same lengths, and the
     * same failures where the segment does not fit a smaller buffer */
    {
        uint32_t c_lcup, c_lsp = 0, c_lmr = 0, small = 1 + test_rand() % (lcup + lsp + lmr + 1);
        uint32_t s_lcup, s_lsp = 0, s_lmr = 0;
        int rc = j2ki_ht_cleanup(coefs, w, w, h, frac, p, NULL, &sig, NULL, sizeof(buf), &c_lcup);
        if (!rc && p > 0)
            rc = j2ki_ht_refine(coefs, w, w, h, frac, p, &sig, NULL, sizeof(buf) - c_lcup, &c_lsp, &c_lmr);
        CHECK(rc == 0 && c_lcup == lcup && c_lsp == lsp && c_lmr == lmr,
              "%dx%d p=%d: counted %u %u %u bytes, coded %u %u %u (%d)", w, h, p, c_lcup, c_lsp, c_lmr, lcup, lsp,
              lmr, rc);
        rc = j2ki_ht_cleanup(coefs, w, w, h, frac, p, NULL, &sig, NULL, small, &c_lcup);
        int rs = j2ki_ht_cleanup(coefs, w, w, h, frac, p, &scratch, &sig, buf2, small, &s_lcup);
        if (!rc && !rs && p > 0) {
            rc = j2ki_ht_refine(coefs, w, w, h, frac, p, &sig, NULL, small - c_lcup, &c_lsp, &c_lmr);
            rs = j2ki_ht_refine(coefs, w, w, h, frac, p, &sig, buf2 + s_lcup, small - s_lcup, &s_lsp, &s_lmr);
        }
        CHECK(rc == rs && (rc || (c_lcup == s_lcup && c_lsp == s_lsp && c_lmr == s_lmr)),
              "%dx%d p=%d in %u bytes: counted %d, coded %d", w, h, p, small, rc, rs);
        /* the plane chooser's measured set (its parts joined) fails in that buffer exactly
         * when the coded set does */
        {
            uint32_t mr[3];
            double md[3];
            int rm = j2ki_ht_measure_set(coefs, w, w, h, frac, p, 1, small, mr, md);
            CHECK((rm != 0) == (rs != 0) && (rm || (mr[0] == s_lcup && mr[2] == s_lcup + s_lsp + s_lmr)),
                  "%dx%d p=%d in %u bytes: measured %d, coded %d", w, h, p, small, rm, rs);
        }
        cap_fail += rs != 0;
        /* the stored bytes of the full run are needed below: code them again */
        j2ki_ht_cleanup(coefs, w, w, h, frac, p, &scratch, &sig, buf, sizeof(buf), &lcup);
        if (p > 0)
            j2ki_ht_refine(coefs, w, w, h, frac, p, &sig, buf + lcup, sizeof(buf) - lcup, &lsp, &lmr);
    }
    /* cleanup alone */
    ret = ht_decode(buf, lcup, 0, 1, w, h, p, dec);
    CHECK(ret == 0, "decode cleanup %dx%d p=%d: %d", w, h, p, ret);
    if (!ret) {
        int bad = 0;
        for (int i = 0; i < w * h && !bad; i++) {
            int32_t q = coefs[i] < 0 ? -(int32_t)(((uint32_t)-coefs[i]) >> frac)
                                     : (int32_t)((uint32_t)coefs[i] >> frac);
            if (dec[i] != expect_val(q, p))
                bad = i + 1;
        }
        CHECK(!bad, "cleanup %dx%d p=%d top=%d: sample %d differs", w, h, p, top, bad - 1);
    }
    if (p > 0) {
        ret = ht_decode(buf, lcup, lsp + lmr, 3, w, h, p, dec);
        CHECK(ret == 0, "decode all %dx%d p=%d: %d", w, h, p, ret);
        if (!ret) {
            int bad = 0, why = 0;
            for (int i = 0; i < w * h && !bad; i++) {
                int32_t q = coefs[i] < 0 ? -(int32_t)(((uint32_t)-coefs[i]) >> frac)
                                         : (int32_t)((uint32_t)coefs[i] >> frac);
                int32_t full = expect_val(q, p - 1), hi = expect_val(q, p);
                if (dec[i] == full) {
                    sp_coded += hi == 0 && full != 0;
                    continue;
                }
                /* a sample SigProp skipped keeps its cleanup value (0); T.814 7.4 codes every
                 * sample insignificant in the cleanup with one of its 8 neighbours significant
                 * there, whatever else it adds, so such a sample must not be skipped */
                if (hi != 0 || dec[i] != 0) {
                    bad = i + 1;
                    why = 1;
                    break;
                }
                sp_skipped++;
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        int x = i % w + dx, y = i / w + dy;
                        if ((dx || dy) && x >= 0 && x < w && y >= 0 && y < h &&
                            (uint32_t)(coefs[y * w + x] < 0 ? -coefs[y * w + x] : coefs[y * w + x]) >> frac >> p)
                            bad = i + 1, why = 2;
                    }
            }
            CHECK(!bad, "all passes %dx%d p=%d: sample %d %s", w, h, p, bad - 1,
                  why == 2 ? "skipped by SigProp with a neighbour significant in the cleanup" : "differs");
        }
    }
    /* the set as both backends code it (j2ki_ht_encode_set), with and without the refinement
     * passes (ht_refine): the same cleanup segment, one pass without */
    {
        J2kiPass pr[3], pc[3];
        int npr, npc, nbr, nbc;
        uint32_t lenr, lenc;
        int r1 = j2ki_ht_encode_set(coefs, w, w, h, 31, frac, p, 1, &scratch, buf, sizeof(buf), pr, 3, &npr, &nbr, &lenr);
        int r2 = j2ki_ht_encode_set(coefs, w, w, h, 31, frac, p, 0, &scratch, buf2, sizeof(buf2), pc, 3, &npc, &nbc, &lenc);
        CHECK(r1 == 0 && r2 == 0, "encode_set %dx%d p=%d: %d %d", w, h, p, r1, r2);
        if (!r1 && !r2) {
            CHECK(npr == (p ? 3 : 1) && npc == 1 && nbr == p + 1 && nbc == p + 1,
                  "encode_set %dx%d p=%d: %d / %d passes, numbps %d / %d", w, h, p, npr, npc, nbr, nbc);
            CHECK(pc[0].rate == lcup && pr[0].rate == lcup && lenc == lcup && pc[0].term &&
                  !memcmp(buf2, buf, lcup) && !memcmp(&pc[0].dist, &pr[0].dist, sizeof(double)),
                  "encode_set %dx%d p=%d: the cleanup-only set is not the cleanup (%u / %u bytes)", w, h, p,
                  pc[0].rate, lcup);
            CHECK(npr == 1 || (pr[1].rate == lcup + lsp && pr[2].rate == lcup + lsp + lmr && !pr[1].term &&
                               pr[2].term && lenr == pr[2].rate),
                  "encode_set %dx%d p=%d: refinement passes %u %u", w, h, p, npr > 1 ? pr[1].rate : 0,
                  npr > 1 ? pr[2].rate : 0);
        }
        /* the plane chooser's measured set: the coded set's rates and distortions, bit for bit
         * (its passes' cumulative decreases), with and without the refinement passes */
        for (int rf = 0; rf < 2 && !r1 && !r2; rf++) {
            uint32_t mr[3];
            double md[3], cum = 0.0;
            int np = rf ? npr : npc, same;
            int rm = j2ki_ht_measure_set(coefs, w, w, h, frac, p, rf, sizeof(buf), mr, md);
            same = rm == 0;
            for (int k = 0; same && k < np; k++) {
                const J2kiPass *q = rf ? &pr[k] : &pc[k];
                cum += q->dist;
                same = mr[k] == q->rate && !memcmp(&md[k], &cum, sizeof(double));
            }
            measured++;
            CHECK(same, "measure_set %dx%d p=%d refine=%d: differs from the coded set (%d)", w, h, p, rf, rm);
        }
    }
}

int main(void)
{
    static const int shapes[][2] = { { 64, 64 }, { 32, 32 }, { 4, 4 }, { 1, 1 }, { 1, 64 }, { 64, 1 },
                                     { 3, 5 }, { 67 % 64, 45 }, { 1024, 4 }, { 4, 1024 }, { 128, 32 },
                                     { 33, 17 }, { 2, 2 }, { 63, 63 } };
    int r;
    test_seed("ht", 20261127);
    r = build_tables();
    CHECK(r == 0, "CxtVLC tables: %d (-1 clash, -2/-3 missing entry, -4 e_k outside rho)", r);
    for (int it = 0; it < 600; it++) {
        const int *s = shapes[it % (int)(sizeof(shapes) / sizeof(shapes[0]))];
        int density = (int)(test_rand() % 4) == 0 ? 100 : (int)(test_rand() % 40);
        int maxbits = 1 + (int)(test_rand() % 20);
        int frac = (int)(test_rand() % 3) == 0 ? 6 : 0;
        one_block(s[0], s[1], maxbits, density, frac);
    }
    /* the SigProp check above saw both kinds of samples */
    CHECK(sp_coded > 0 && sp_skipped > 0, "SigProp: %ld samples coded, %ld skipped with bit p-1 set", sp_coded,
          sp_skipped);
    CHECK(cap_fail > 0 && measured > 0, "counted runs: %ld did not fit their buffer, %ld sets measured", cap_fail,
          measured);
    return test_done("ht");
}
