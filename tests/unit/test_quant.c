/*
 * Quantisation (Annex E): band set-up (E-3 step encoding and its round trip through the
 * 16-bit SPqcd field of A.6.4, M_b = G + epsilon_b - 1, fractional bits, distortion weight,
 * noise balance across bands), the quantiser (hand-worked values, signs, saturation), and
 * M_b covering every coefficient of worst-case inputs (extremes and, per band, the input whose
 * signs follow that band's analysis basis function) at depths 8..16 and guard bits 0..7.
 */
#include <math.h>

#include "test.h"
#include "hd/dwt.h"
#include "hd/mct.h"
#include "hd/quant.h"

static void group(const char *name, int f0) { printf("%s %s\n", test_failures == f0 ? "ok" : "FAIL", name); }

static void setup(J2kiBand *b, int rev, int depth, int g, int mct, int comp, int level, int orient)
{
    J2kiCodingParams cp;

    memset(&cp, 0, sizeof(cp));
    memset(b, 0, sizeof(*b));
    cp.reversible = rev;
    cp.guard_bits = g;
    cp.mct = mct;
    cp.img.nb_comps = 3;
    b->orient = orient;
    b->level = level;
    b->comp = comp;
    j2ki_quant_band_setup(b, &cp, depth);
}

static int gain_log2(int orient) { return orient == 0 ? 0 : orient == 3 ? 2 : 1; }

static void check_setup(void)
{
    int f0 = test_failures, rev, depth, g, mct, comp, level, orient;

    for (rev = 0; rev < 2; rev++)
        for (depth = 8; depth <= 16; depth++)
            for (g = 0; g <= 7; g++)
                for (mct = 0; mct < 2; mct++)
                    for (comp = 0; comp < 3; comp++) {
                        double balance = 0;
                        for (level = 0; level <= 10; level++)
                            for (orient = level ? 0 : 0; orient < (level ? 4 : 1); orient++) {
                                J2kiBand b;
                                int rb = depth + gain_log2(orient);
                                uint16_t spqcd;
                                double step, w2 = mct ? j2ki_mct_synthesis_weight2(rev, comp) : 1.0;
                                double norm = j2ki_dwt_synthesis_norm(rev, level, orient);
                                setup(&b, rev, depth, g, mct, comp, level, orient);
                                CHECK(b.expn >= 0 && b.expn <= 31 && b.mant >= 0 && b.mant <= 2047,
                                      "expn %d mant %d out of field range", b.expn, b.mant);
                                CHECK(b.nb_mag_bits == g + b.expn - 1 && b.nb_mag_bits >= 1 && b.nb_mag_bits <= 30,
                                      "M_b %d (G %d expn %d)", b.nb_mag_bits, g, b.expn);
                                CHECK(b.frac_bits == (rev ? 0 : (30 - b.nb_mag_bits < J2KI_FRACBITS ? 30 - b.nb_mag_bits : J2KI_FRACBITS)),
                                      "frac_bits %d with M_b %d", b.frac_bits, b.nb_mag_bits);
                                /* E-3 decoded from the 16-bit SPqcd value (epsilon << 11 | mu) */
                                spqcd = (uint16_t)(b.expn << 11 | b.mant);
                                step = rev ? 1.0 : ldexp(1.0 + (spqcd & 0x7ff) / 2048.0, rb - (spqcd >> 11));
                                if (rev) {
                                    int want = depth + gain_log2(orient) + (mct && comp < 3) + (g < (level ? 2 : 1) ? (level ? 2 : 1) - g : 0);
                                    CHECK(b.mant == 0 && b.expn == want && b.step == 1.0f && b.inv_step == 1.0f,
                                          "reversible d%d G%d l%d o%d c%d: expn %d (want %d) mant %d",
                                          depth, g, level, orient, comp, b.expn, want, b.mant);
                                } else {
                                    double bal = step * norm;   /* the step is the same for every component (one QCD) */
                                    CHECK((double)b.step == step, "step %.9g != E-3 %.9g", b.step, step);
                                    CHECK(b.inv_step == (float)(ldexp(1, b.frac_bits) / step), "inv_step");
                                    /* same noise from every band of every component: step * norm
                                     * equal within the 11-bit mantissa rounding */
                                    if (level <= 8) {
                                        if (balance == 0)
                                            balance = bal;
                                        CHECK(fabs(bal / balance - 1) <= ldexp(1, -11),
                                              "noise balance d%d l%d o%d c%d: %g vs %g", depth, level, orient, comp, bal, balance);
                                    }
                                }
                                CHECK(fabs(b.dist_weight / (step * step * norm * norm * w2) - 1) < 1e-12,
                                      "dist_weight %g", b.dist_weight);
                            }
                        if (!rev) {
                            /* all passes kept: MSE about balance^2 / 12 -> PSNR */
                            double psnr = 10 * log10(pow(ldexp(1, depth) - 1, 2) * 12 / (balance * balance));
                            CHECK(psnr >= 64.0, "depth %d: full-rate 9/7 quantisation PSNR only %.1f dB", depth, psnr);
                        }
                    }
    group("band set-up: E-3 round trip, M_b, frac bits, dist weight, noise balance", f0);
}

static void check_quantiser(void)
{
    int f0 = test_failures;
    float buf[2][4] = { { 1.5f, -1.5f, 0.0156f, -0.0156f }, { 100.0f, -100.0f, 7.99f, 8.0f } };
    int32_t q[2][4];

    /* inv_step 64 = frac 6 with step 1; M_b = 3: saturation at (8 << 6) - 1 = 511 */
    j2ki_quant_fwd_ref(buf, 4, 4, 2, 64.0f, 3, 6);
    memcpy(q, buf, sizeof(q));
    CHECK(q[0][0] == 96 && q[0][1] == -96, "1.5 -> %d, -1.5 -> %d (want +-96)", q[0][0], q[0][1]);
    CHECK(q[0][2] == 0 && q[0][3] == 0, "0.0156 * 64 truncates to 0: %d %d", q[0][2], q[0][3]);
    CHECK(q[1][0] == 511 && q[1][1] == -511, "saturation: %d %d (want +-511)", q[1][0], q[1][1]);
    CHECK(q[1][2] == 511 && q[1][3] == 511, "7.99 -> %d, 8 -> %d (want 511: integer part 7, fraction full)", q[1][2], q[1][3]);
    /* M_b + frac = 30: the largest magnitude still fits */
    CHECK(j2ki_quant_sample(1e30f, 1.0f, (1 << 30) - 1) == (1 << 30) - 1, "saturation at 2^30-1");
    CHECK(j2ki_quant_sample(-1e30f, 1.0f, (1 << 30) - 1) == -((1 << 30) - 1), "negative saturation");
    CHECK(j2ki_quant_sample((float)((1 << 30) - 64), 1.0f, (1 << 30) - 1) == (1 << 30) - 64, "just below saturation");
    CHECK(j2ki_quant_sample(-2.75f, 4.0f, 1000) == -11, "-2.75 * 4 -> -11");
    group("quantiser: hand values, sign, truncation toward zero, saturation", f0);
}

/* ---- M_b against worst-case inputs ---- */

#define N 256
#define LEVELS 5

/* the Mallat rectangle of band (level, orient) for a tile [0,N)^2 */
static void band_rect(int level, int orient, uint32_t *x0, uint32_t *y0, uint32_t *x1, uint32_t *y1)
{
    uint32_t lo = N >> level, prev = N >> (level - 1);
    *x0 = (orient & 1) ? lo : 0;
    *x1 = (orient & 1) ? prev : lo;
    *y0 = (orient & 2) ? lo : 0;
    *y1 = (orient & 2) ? prev : lo;
}

/* signs of the 1-D analysis basis function of coefficient j (Mallat index, LEVELS levels):
 * the transform applied to every unit impulse gives column j of the analysis matrix */
static void basis_signs(int rev, uint32_t j, int *sgn)
{
    static int32_t vi[N];
    static float vf[N];
    static int32_t scratch[4 * N];   /* >= j2ki_dwt_scratch_size(N, 1) */
    uint32_t i;

    for (i = 0; i < N; i++) {
        memset(vi, 0, sizeof(vi));
        memset(vf, 0, sizeof(vf));
        if (rev) {
            vi[i] = 1 << 16;
            j2ki_dwt53_fwd_ref(vi, N, 0, 0, N, 1, LEVELS, scratch);
            sgn[i] = vi[j] >= 0 ? 1 : -1;
        } else {
            vf[i] = 1.0f;
            j2ki_dwt97_fwd_ref(vf, N, 0, 0, N, 1, LEVELS, scratch);
            sgn[i] = vf[j] >= 0 ? 1 : -1;
        }
    }
}

/* transforms comp (already loaded) and checks every band of every G against M_b;
 * returns the number of violations */
static int check_bands(int rev, int depth, int mct, int comp, int32_t *ibuf, float *fbuf, void *scratch,
                       const char *what)
{
    int level, orient, g, bad = 0;

    if (rev)
        j2ki_dwt53_fwd_ref(ibuf, N, 0, 0, N, N, LEVELS, scratch);
    else
        j2ki_dwt97_fwd_ref(fbuf, N, 0, 0, N, N, LEVELS, scratch);
    for (level = 1; level <= LEVELS; level++)
        for (orient = level == LEVELS ? 0 : 1; orient < 4; orient++) {
            uint32_t x0, y0, x1, y1, x, y;
            double maxmag = 0;
            band_rect(level, orient, &x0, &y0, &x1, &y1);
            for (y = y0; y < y1; y++)
                for (x = x0; x < x1; x++) {
                    double v = rev ? fabs((double)ibuf[y * N + x]) : fabs((double)fbuf[y * N + x]);
                    maxmag = v > maxmag ? v : maxmag;
                }
            for (g = 0; g <= 7; g++) {
                J2kiBand b;
                setup(&b, rev, depth, g, mct, comp, level, orient);
                if (rev) {
                    /* no quantiser: the coefficient itself must fit M_b bits */
                    if (maxmag > ldexp(1, b.nb_mag_bits) - 1) {
                        bad++;
                        fprintf(stderr, "  %s: 5/3 d%d G%d level %d orient %d: |c| %.0f > 2^%d-1\n",
                                what, depth, g, level, orient, maxmag, b.nb_mag_bits);
                    }
                } else {
                    int32_t maxq = (int32_t)(((int64_t)1 << (b.nb_mag_bits + b.frac_bits)) - 1);
                    int32_t q = j2ki_quant_sample((float)maxmag, b.inv_step, maxq);
                    /* the output never exceeds M_b integer bits; with G >= 1 the nominal
                     * range (1.9x at most for 9/7) is never even reached: no saturation */
                    if ((q >> b.frac_bits) > (1 << b.nb_mag_bits) - 1 ||
                        (g >= 1 && (double)maxmag * b.inv_step >= (double)maxq)) {
                        bad++;
                        fprintf(stderr, "  %s: 9/7 d%d G%d level %d orient %d: |c| %g index %g, M_b %d\n",
                                what, depth, g, level, orient, maxmag, maxmag / b.step, b.nb_mag_bits);
                    }
                }
            }
        }
    return bad;
}

static void check_worst_case(void)
{
    int f0 = test_failures, rev, depth, level, orient;
    static int32_t c[3][N * N];
    static float f[3][N * N];
    static int sx[N], sy[N];
    void *scratch = malloc(j2ki_dwt_scratch_size(N, N));

    for (rev = 0; rev < 2; rev++) {
        /* per band: the input whose signs follow the basis function of the band's centre */
        for (level = 1; level <= LEVELS; level++)
            for (orient = level == LEVELS ? 0 : 1; orient < 4; orient++) {
                uint32_t x0, y0, x1, y1, i;
                band_rect(level, orient, &x0, &y0, &x1, &y1);
                basis_signs(rev, (x0 + x1) / 2, sx);
                basis_signs(rev, (y0 + y1) / 2, sy);
                for (depth = 8; depth <= 16; depth++) {
                    int32_t hi = (1 << (depth - 1)) - 1, lo = -(1 << (depth - 1));
                    int bad;
                    /* single component, no MCT */
                    for (i = 0; i < N * N; i++) {
                        c[0][i] = sx[i % N] * sy[i / N] > 0 ? hi : lo;
                        f[0][i] = (float)c[0][i];
                    }
                    bad = check_bands(rev, depth, 0, 0, c[0], f[0], scratch, "basis-sign input");
                    /* MCT chroma: B - G (RCT U) or Cb (ICT) driven to its extremes */
                    for (i = 0; i < N * N; i++) {
                        int s = sx[i % N] * sy[i / N] > 0;
                        c[0][i] = c[1][i] = s ? lo : hi;      /* R, G */
                        c[2][i] = s ? hi : lo;                /* B */
                        f[0][i] = (float)c[0][i]; f[1][i] = (float)c[1][i]; f[2][i] = (float)c[2][i];
                    }
                    if (rev) {
                        j2ki_rct_fwd_ref(c[0], c[1], c[2], N * N);
                    } else {
                        j2ki_ict_fwd_ref(f[0], f[1], f[2], N * N);
                    }
                    bad += check_bands(rev, depth, 1, 1, c[1], f[1], scratch, "basis-sign chroma");
                    CHECK(!bad, "%s depth %d band level %d orient %d: %d violations of M_b",
                          rev ? "5/3" : "9/7", depth, level, orient, bad);
                }
            }
        /* random extremes and a checkerboard, all three components through the MCT */
        for (depth = 8; depth <= 16; depth++) {
            int32_t hi = (1 << (depth - 1)) - 1, lo = -(1 << (depth - 1));
            int k, bad = 0;
            uint32_t i;
            for (k = 0; k < 2; k++) {
                int comp;
                for (comp = 0; comp < 3; comp++)
                    for (i = 0; i < N * N; i++) {
                        int s = k ? (int)((i % N + i / N + (uint32_t)comp) & 1) : (int)(test_rand() & 1);
                        c[comp][i] = s ? hi : lo;
                        f[comp][i] = (float)c[comp][i];
                    }
                if (rev)
                    j2ki_rct_fwd_ref(c[0], c[1], c[2], N * N);
                else
                    j2ki_ict_fwd_ref(f[0], f[1], f[2], N * N);
                for (comp = 0; comp < 3; comp++)
                    bad += check_bands(rev, depth, 1, comp, c[comp], f[comp], scratch, k ? "checkerboard" : "random extremes");
            }
            CHECK(!bad, "%s depth %d: %d violations of M_b on extreme inputs", rev ? "5/3" : "9/7", depth, bad);
        }
    }
    free(scratch);
    group("M_b covers worst-case inputs (depths 8..16, guard bits 0..7, 5/3 + RCT, 9/7 + ICT)", f0);
}

/* qstep_rate (j2ki_quant_rate_planes): K by the budget's bits per sample and the depth, none
 * without a byte budget or when off, and K planes exactly: epsilon_b - K, the same mantissa,
 * M_b - K, the step 2^K times the full-rate one. */
static int rate_k(int nc, uint32_t w, uint32_t h, int dx1, int depth, uint64_t bytes, int rev, int mode, int on)
{
    J2kiCodingParams cp;
    memset(&cp, 0, sizeof(cp));
    cp.img.nb_comps = nc;
    cp.img.width = w;
    cp.img.height = h;
    for (int c = 0; c < nc; c++) {
        cp.img.dx[c] = c && dx1 ? 2 : 1;
        cp.img.dy[c] = 1;
        cp.img.depth[c] = depth;
    }
    cp.reversible = rev;
    cp.rc_mode = mode;
    cp.frame_bytes = bytes;
    cp.qstep_rate = on;
    return j2ki_quant_rate_planes(&cp, depth);
}

static void check_rate_planes(void)
{
    int f0 = test_failures, prev;
    /* 2K DCI at 250 Mb/s, 24 fps: 1,302,083 bytes, 1.61 (1998 wide) and 1.57 bit/sample:
     * above 1.11, none; 4K DCI: 0.39 bit/sample, P = 8 + ceil(log1.5(0.39 / 0.22)) = 10: K = 3 */
    CHECK(rate_k(3, 1998, 1080, 0, 12, 1302083, 0, J2KI_RC_BYTES, 1) == 0, "2K DCI flat: K %d",
          rate_k(3, 1998, 1080, 0, 12, 1302083, 0, J2KI_RC_BYTES, 1));
    CHECK(rate_k(3, 2048, 1080, 0, 12, 1302083, 0, J2KI_RC_BYTES, 1) == 0, "2K DCI full container");
    CHECK(rate_k(3, 4096, 2160, 0, 12, 1302083, 0, J2KI_RC_BYTES, 1) == 3, "4K DCI: K %d",
          rate_k(3, 4096, 2160, 0, 12, 1302083, 0, J2KI_RC_BYTES, 1));
    /* 2K DCI at 125 Mb/s: 0.79 bit/sample, P = 12, K = 1; the steps of the table in quant_ref.c */
    CHECK(rate_k(3, 2048, 1080, 0, 12, 651041, 0, J2KI_RC_BYTES, 1) == 1, "2K DCI at 125 Mb/s");
    CHECK(rate_k(3, 1000, 1000, 0, 12, 3000000 / 8 * 22 / 100, 0, J2KI_RC_BYTES, 1) == 5 &&
          rate_k(3, 1000, 1000, 0, 12, 3000000 / 8 * 23 / 100, 0, J2KI_RC_BYTES, 1) == 4 &&
          rate_k(3, 1000, 1000, 0, 12, 3000000 / 8 * 111 / 100, 0, J2KI_RC_BYTES, 1) == 1 &&
          rate_k(3, 1000, 1000, 0, 12, 3000000 / 8 * 112 / 100, 0, J2KI_RC_BYTES, 1) == 0, "12-bit steps at 0.22 and 1.11");
    /* 8 bits: P0 = 9, so K = 1 up to 0.22 bit/sample only */
    CHECK(rate_k(3, 1280, 720, 0, 8, 1280 * 720 * 3 / 40, 0, J2KI_RC_BYTES, 1) == 1, "8-bit at 0.2 bit/sample");
    CHECK(rate_k(3, 1280, 720, 0, 8, 1280 * 720 * 3 / 16, 0, J2KI_RC_BYTES, 1) == 0, "8-bit at 0.5 bit/sample");
    /* 16 bits: base step 8, P0 = 13 as at 12 bits */
    CHECK(rate_k(3, 676, 449, 0, 16, 676 * 449 * 3 * 3 / 80, 0, J2KI_RC_BYTES, 1) == 4, "16-bit at 0.3 bit/sample");
    /* 4:2:2: the chroma samples count at their own size: 0.5 bit/sample (P = 11, K = 0 at 10
     * bits), where 4:4:4 would be 0.33 (P = 10, K = 1) */
    CHECK(rate_k(3, 1920, 1080, 1, 10, 1920 * 1080 * 2 / 16, 0, J2KI_RC_BYTES, 1) == 0 &&
          rate_k(3, 1920, 1080, 0, 10, 1920 * 1080 * 2 / 16, 0, J2KI_RC_BYTES, 1) == 1, "4:2:2 sample count");
    /* off, reversible, other rate modes, no budget */
    CHECK(!rate_k(3, 4096, 2160, 0, 12, 1302083, 0, J2KI_RC_BYTES, 0), "qstep_rate=0");
    CHECK(!rate_k(3, 4096, 2160, 0, 12, 1302083, 1, J2KI_RC_BYTES, 1), "reversible");
    CHECK(!rate_k(3, 4096, 2160, 0, 12, 1302083, 0, J2KI_RC_PSNR, 1), "PSNR mode");
    CHECK(!rate_k(3, 4096, 2160, 0, 12, 1302083, 0, J2KI_RC_SLOPE, 1), "slope mode");
    CHECK(!rate_k(3, 4096, 2160, 0, 12, 0, 0, J2KI_RC_BYTES, 1), "no budget");
    CHECK(!rate_k(3, 64, 64, 0, 12, 64 * 64 * 3, 0, J2KI_RC_BYTES, 1), "8 bit/sample");
    /* never more planes for more bytes */
    prev = 5;
    for (uint64_t b = 1000; b < 64 * 64 * 3 * 3; b += 97) {
        int k = rate_k(3, 64, 64, 0, 12, b, 0, J2KI_RC_BYTES, 1);
        CHECK(k <= prev && k >= 0, "K %d after %d at %llu bytes", k, prev, (unsigned long long)b);
        prev = k;
    }
    CHECK(prev == 0, "K %d at 3 bit/sample", prev);
    /* K planes exactly, in every band, at 8, 12 and 16 bits (0.125 bit/sample, P = 8: K = 1
     * at 8 bits, 5 at 12 and 16) */
    for (int depth = 8; depth <= 16; depth += 4) {
        for (int level = 1; level <= 5; level++) {
            for (int orient = level == 5 ? 0 : 1; orient < 4; orient++) {
                J2kiCodingParams cp;
                J2kiBand a, b;
                memset(&cp, 0, sizeof(cp));
                cp.guard_bits = 2;
                cp.mct = 1;
                cp.img.nb_comps = 3;
                for (int c = 0; c < 3; c++) {
                    cp.img.dx[c] = cp.img.dy[c] = 1;
                    cp.img.depth[c] = depth;
                }
                cp.img.width = 4096;
                cp.img.height = 2160;
                cp.rc_mode = J2KI_RC_BYTES;
                cp.frame_bytes = 4096 * 2160 * 3 / 64;
                memset(&a, 0, sizeof(a));
                a.orient = orient;
                a.level = level;
                b = a;
                j2ki_quant_band_setup(&a, &cp, depth);
                cp.qstep_rate = 1;
                j2ki_quant_band_setup(&b, &cp, depth);
                int k = j2ki_quant_rate_planes(&cp, depth);
                CHECK(k == (depth == 8 ? 1 : 5) && b.expn == a.expn - k && b.mant == a.mant && b.nb_mag_bits == a.nb_mag_bits - k &&
                      b.step == a.step * (float)(1 << k),
                      "depth %d level %d orient %d: K %d, epsilon %d -> %d, mu %d -> %d, M_b %d -> %d", depth, level,
                      orient, k, a.expn, b.expn, a.mant, b.mant, a.nb_mag_bits, b.nb_mag_bits);
            }
        }
    }
    group("qstep_rate: K by bits per sample and depth, K planes exactly", f0);
}

/* qstep_try (j2ki_quant_try_planes, qstep_extra): when it applies, and its plan's bands are
 * their plan's with d planes fewer (d = qstep_extra, K + d at most 5): epsilon_b - d, the same
 * mantissa, M_b - d, d more fractional bits, the same quantiser (inv_step, M_b + frac_bits: the
 * same integers), the step 2^d and the weight 4^d times theirs. */
static void try_cp(J2kiCodingParams *cp, uint32_t w, uint32_t h, int depth, uint64_t bytes, int try_planes)
{
    memset(cp, 0, sizeof(*cp));
    cp->guard_bits = 2;
    cp->mct = 1;
    cp->img.nb_comps = 3;
    for (int c = 0; c < 3; c++) {
        cp->img.dx[c] = cp->img.dy[c] = 1;
        cp->img.depth[c] = depth;
    }
    cp->img.width = w;
    cp->img.height = h;
    cp->rc_mode = J2KI_RC_BYTES;
    cp->frame_bytes = bytes;
    cp->qstep_rate = 1;
    cp->qstep_try = try_planes;
}

static void check_try_planes(void)
{
    int f0 = test_failures;
    J2kiCodingParams cp;
    try_cp(&cp, 1998, 1080, 12, 1302083, 3);
    CHECK(j2ki_quant_try_planes(&cp) == 3, "2K DCI: %d", j2ki_quant_try_planes(&cp));
    cp.qstep_try = 0;
    CHECK(j2ki_quant_try_planes(&cp) == 0, "qstep_try=0");
    cp.qstep_try = 3;
    cp.qstep_rate = 0;
    CHECK(j2ki_quant_try_planes(&cp) == 0, "qstep_rate=0");
    cp.qstep_rate = 1;
    cp.reversible = 1;
    CHECK(j2ki_quant_try_planes(&cp) == 0, "reversible");
    cp.reversible = 0;
    cp.rc_mode = J2KI_RC_PSNR;
    CHECK(j2ki_quant_try_planes(&cp) == 0, "PSNR mode");
    try_cp(&cp, 64, 64, 12, 64 * 64 * 3, 3);
    CHECK(j2ki_quant_try_planes(&cp) == 0, "8 bit/sample");
    try_cp(&cp, 1000, 1000, 12, 3000000 / 8 * 20 / 100, 3);        /* K = 5 already */
    CHECK(j2ki_quant_try_planes(&cp) == 0, "K = 5 by the rule");
    for (int depth = 8; depth <= 16; depth += 4)
        for (int bpp = 0; bpp < 3; bpp++) {
            /* 1.57 (2K DCI), 0.39 (4K DCI) and 0.16 bit/sample */
            static const uint64_t bytes[3] = { 1302083, 1302083, 1302083 / 2 };
            uint32_t w = bpp ? 4096 : 2048, h = bpp ? 2160 : 1080;
            for (int t = 1; t <= 5; t++)
                for (int level = 1; level <= 5; level++)
                    for (int orient = level == 5 ? 0 : 1; orient < 4; orient++) {
                        J2kiBand a, b;
                        J2kiCodingParams cpt;
                        int k, d, extra;
                        try_cp(&cp, w, h, depth, bytes[bpp], t);
                        memset(&cpt, 0, sizeof(cpt));   /* padding alike for the memcmp */
                        memset(&a, 0, sizeof(a));
                        a.orient = orient;
                        a.level = level;
                        b = a;
                        j2ki_quant_band_setup(&a, &cp, depth);
                        k = j2ki_quant_rate_planes(&cp, depth);
                        extra = j2ki_quant_try_params(&cpt, &cp, t);
                        j2ki_quant_band_setup(&b, &cpt, depth);
                        CHECK(cpt.qstep_extra == (extra ? t : 0), "qstep_extra %d for d = %d", cpt.qstep_extra, t);
                        cpt.qstep_extra = cp.qstep_extra;        /* the rest of cpt is cp */
                        d = extra < 5 - k ? extra : 5 - k;
                        CHECK(!extra || d == (t < j2ki_quant_band_try_max(&a, &cp) ? t : j2ki_quant_band_try_max(&a, &cp)),
                              "band's most planes %d, d %d", j2ki_quant_band_try_max(&a, &cp), d);
                        CHECK(!memcmp(&cpt, &cp, sizeof(cp)) && extra == j2ki_quant_try_planes(&cp) &&
                              extra == (k < 5 ? t : 0) && b.expn == a.expn - d && b.mant == a.mant &&
                              b.nb_mag_bits == a.nb_mag_bits - d && b.frac_bits == a.frac_bits + d &&
                              b.inv_step == a.inv_step && b.step == a.step * (float)(1 << d) &&
                              b.dist_weight == ldexp(a.dist_weight, 2 * d) && b.nb_mag_bits >= 1,
                              "depth %d, %llu bytes for %ux%u, try %d, level %d orient %d: K %d extra %d, epsilon %d "
                              "-> %d, M_b %d -> %d, frac %d -> %d", depth, (unsigned long long)bytes[bpp], w, h, t,
                              level, orient, k, extra, a.expn, b.expn, a.nb_mag_bits, b.nb_mag_bits,
                              a.frac_bits, b.frac_bits);
                    }
        }
    group("qstep_try: when it applies; its plan's bands are the plan's with d planes fewer, same integers", f0);
}

/* qstep_try's prediction (j2ki_quant_predict): the histogram's bins, est(d) against its
 * definition counted coefficient by coefficient on random integers, and d* on histograms
 * whose answer is known: the largest d with C est(d) >= the budget (the boundary taken), none
 * when even d = 1 falls short, at most qstep_try, none where qstep_try does not apply. */
static uint64_t est_direct(const int32_t *q, const int *frac, const int *dmax, int n, int d)
{
    uint64_t bits = 0;
    for (int i = 0; i < n; i++) {
        int db = d < dmax[i] ? d : dmax[i];
        uint32_t m = (uint32_t)(q[i] < 0 ? -q[i] : q[i]) >> (frac[i] + db);
        int len = 0;
        while (m) {
            len++;
            m >>= 1;
        }
        if (len)
            bits += (uint64_t)len + 1;
    }
    return bits;
}

static void check_predict(void)
{
    int f0 = test_failures;
    static uint64_t hist[J2KI_QPRED_HIST];
    enum { NQ = 20000 };
    static int32_t q[NQ];
    static int frac[NQ], dmax[NQ];
    J2kiCodingParams cp;
    uint64_t e[J2KI_QPRED_MAX_D + 2];

    CHECK(j2ki_quant_hist_bin(0, 6, 0) == 0 && j2ki_quant_hist_bin(63, 6, 2) == 2 * J2KI_QPRED_BINS &&
          j2ki_quant_hist_bin(64, 6, 2) == 2 * J2KI_QPRED_BINS + 1 &&
          j2ki_quant_hist_bin(-5 * 64 - 63, 6, 5) == 5 * J2KI_QPRED_BINS + 3 &&
          j2ki_quant_hist_bin((1 << 30) - 1, 0, 1) == J2KI_QPRED_BINS + 30,
          "bins of 0, 63, 64, -383, 2^30 - 1");

    /* est(d) from the histogram = est(d) by its definition (random bands and integers) */
    memset(hist, 0, sizeof(hist));
    for (int i = 0; i < NQ; i++) {
        uint32_t r = test_rand();
        frac[i] = (int)(r % 9);                          /* 0..8 fractional bits */
        dmax[i] = (int)((r >> 4) % (J2KI_QPRED_MAX_D + 1));
        q[i] = (int32_t)((test_rand() & ((1u << (1 + (r >> 8) % 22)) - 1)) * ((r >> 16) & 1 ? -1 : 1));
        j2ki_quant_hist_ref(&q[i], 1, 1, 1, frac[i], dmax[i], hist);
    }
    for (int d = 0; d <= J2KI_QPRED_MAX_D + 1; d++) {
        e[d] = j2ki_quant_pred_bits(hist, d);
        CHECK(e[d] == est_direct(q, frac, dmax, NQ, d), "est(%d): %llu from the histogram, %llu counted", d,
              (unsigned long long)e[d], (unsigned long long)est_direct(q, frac, dmax, NQ, d));
        CHECK(d == 0 || e[d] <= e[d - 1], "est(%d) %llu > est(%d)", d, (unsigned long long)e[d], d - 1);
    }
    CHECK(e[J2KI_QPRED_MAX_D + 1] == e[J2KI_QPRED_MAX_D], "d beyond every band's most planes");

    /* known answers: integer parts of 9 bits in bands that may drop 5 planes and of 4 bits in
     * bands that may drop none, counted in multiples of u = 8 C_DEN 2^5, so that est(d) =
     * u (2^7 (10 - d) + 80) bits and C est(d) is a whole number of bytes, C_NUM 2^5 (2^7 (10 -
     * d) + 80): 0.5 to 1.2 MB here, budgets that leave qstep_try on for 2048x1080x3 12-bit */
    {
        const uint64_t u = 8u * J2KI_QPRED_C_DEN * 32u;
        memset(hist, 0, sizeof(hist));
        hist[5 * J2KI_QPRED_BINS + 9] = u << 7;
        hist[0 * J2KI_QPRED_BINS + 4] = u * 16;
        for (int d = 0; d <= 5; d++)
            CHECK(j2ki_quant_pred_bits(hist, d) == u * (128u * (uint64_t)(10 - d) + 80u), "est(%d) = %llu", d,
                  (unsigned long long)j2ki_quant_pred_bits(hist, d));
        for (int d = 1; d <= 5; d++) {
            /* the budget at C est(d) exactly: d taken (at most qstep_try); one byte more: d - 1 */
            uint64_t at = (uint64_t)J2KI_QPRED_C_NUM * 32u * (128u * (uint64_t)(10 - d) + 80u);
            for (int t = 1; t <= 3; t++) {
                try_cp(&cp, 2048, 1080, 12, at, t);
                CHECK(j2ki_quant_predict(&cp, hist) == (d < t ? d : t), "qstep_try=%d, budget C est(%d) = %llu B: d* %d",
                      t, d, (unsigned long long)at, j2ki_quant_predict(&cp, hist));
                cp.frame_bytes = at + 1;
                CHECK(j2ki_quant_predict(&cp, hist) == (d - 1 < t ? d - 1 : t), "qstep_try=%d, budget %llu B: d* %d",
                      t, (unsigned long long)at + 1, j2ki_quant_predict(&cp, hist));
            }
        }
    }
    /* far under the budget (flat content): coded once; qstep_try off: always 0 */
    try_cp(&cp, 2048, 1080, 12, 1302083, 3);
    hist[5 * J2KI_QPRED_BINS + 9] = 1000;
    hist[0 * J2KI_QPRED_BINS + 4] = 0;
    CHECK(j2ki_quant_predict(&cp, hist) == 0, "10,000 bits for 1,302,083 B: d* %d", j2ki_quant_predict(&cp, hist));
    hist[5 * J2KI_QPRED_BINS + 9] = 10000000;                       /* 10^7 x 9 bits: plenty */
    CHECK(j2ki_quant_predict(&cp, hist) == 3, "plenty: d* %d", j2ki_quant_predict(&cp, hist));
    cp.qstep_try = 0;
    CHECK(j2ki_quant_predict(&cp, hist) == 0, "qstep_try=0: d* %d", j2ki_quant_predict(&cp, hist));
    try_cp(&cp, 2048, 1080, 12, 1302083, 3);
    cp.reversible = 1;
    CHECK(j2ki_quant_predict(&cp, hist) == 0, "reversible: d* %d", j2ki_quant_predict(&cp, hist));
    group("qstep_try's prediction: histogram, est(d), d* at and between the budget's boundaries", f0);
}

int main(void)
{
    test_seed("test_quant", 4242);
    check_setup();
    check_quantiser();
    check_worst_case();
    check_rate_planes();
    check_try_planes();
    check_predict();
    return test_done("test_quant");
}
