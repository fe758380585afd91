/*
 * DWT (Annex F): the lifting implementation checked against an independent direct
 * implementation (periodic symmetric extension of F.3.7 / F-4 written out, 5/3 by its defining
 * equations on the extended signal, 9/7 by convolution with the analysis filter taps of the
 * standard's 9/7 pair, band sizes from B-15), perfect 5/3 reconstruction, 9/7 reconstruction
 * error, degenerate sizes and levels, and the synthesis norms (impulse responses of the
 * inverse transform, and the autocorrelation recursion).
 */
#include <math.h>
#include <time.h>

#include "test.h"
#include "hd/dwt.h"

/* ---- independent 1-D reference ---- */

/* 9/7 analysis taps (low-pass DC gain 1, high-pass Nyquist gain 2), centre first. */
static const double h0_97[5] = { 0.602949018236360, 0.266864118442875, -0.078223266528990,
                                 -0.016864118442875, 0.026748757410810 };
static const double h1_97[4] = { 1.115087052457000, -0.591271763114250, -0.057543526228500,
                                 0.091271763114250 };

/* F-4: index of the sample that extended position i reads, signal [i0, i1), i1 - i0 >= 2 */
static long pse(long i, long i0, long i1)
{
    long per = 2 * (i1 - i0 - 1), m = (i - i0) % per;
    if (m < 0)
        m += per;
    return i0 + (m < per - m ? m : per - m);
}

static double floordiv(double a, double b) { return floor(a / b); }

/* X(i0..i1-1) -> low (even coordinates) then high (odd coordinates), in out[]. */
static void ref1d(const double *x, long i0, long i1, int rev, double *out)
{
    long n = i1 - i0, i, nl = 0, nh = 0;
    double lo[4096], hi[4096];

    if (n == 1) {
        out[0] = (i0 & 1) ? 2 * x[0] : x[0];
        return;
    }
#define XE(j) x[pse((j), i0, i1) - i0]
    for (i = i0; i < i1; i++) {
        if (rev) {
            /* F.4.8.1 on the extended signal: Y(2n+1) first, then Y(2n) */
            if (i & 1) {
                hi[nh++] = XE(i) - floordiv(XE(i - 1) + XE(i + 1), 2);
            } else {
                double ha = XE(i - 1) - floordiv(XE(i - 2) + XE(i), 2);
                double hb = XE(i + 1) - floordiv(XE(i) + XE(i + 2), 2);
                lo[nl++] = XE(i) + floordiv(ha + hb + 2, 4);
            }
        } else {
            int k;
            if (i & 1) {
                double s = h1_97[0] * XE(i);
                for (k = 1; k < 4; k++)
                    s += h1_97[k] * (XE(i - k) + XE(i + k));
                hi[nh++] = s;
            } else {
                double s = h0_97[0] * XE(i);
                for (k = 1; k < 5; k++)
                    s += h0_97[k] * (XE(i - k) + XE(i + k));
                lo[nl++] = s;
            }
        }
    }
#undef XE
    memcpy(out, lo, nl * sizeof(*out));
    memcpy(out + nl, hi, nh * sizeof(*out));
}

static uint32_t cdiv(uint64_t a, int l) { return (uint32_t)((a + ((uint64_t)1 << l) - 1) >> l); }

/*
 * Independent 2-D multi-level analysis: each level cuts its LL into four bands whose sizes come
 * from B-15 and places them in the Mallat layout of dwt.h (HL at x = width of resolution NL-d).
 */
static void ref2d(double *buf, long stride, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                  int levels, int rev, int *layout_ok)
{
    double col[4096], tmp[4096];
    int d;

    for (d = 1; d <= levels; d++) {
        uint32_t u0 = cdiv(x0, d - 1), u1 = cdiv(x1, d - 1), v0 = cdiv(y0, d - 1), v1 = cdiv(y1, d - 1);
        uint32_t w = u1 - u0, h = v1 - v0, x, y;
        /* B-15 band extents at level d: low-pass ceil(x/2^d), high-pass ceil((x - 2^(d-1))/2^d) */
        uint32_t lw = cdiv(x1, d) - cdiv(x0, d), lh = cdiv(y1, d) - cdiv(y0, d);
        if (!w || !h)
            break;
        for (x = 0; x < w; x++) {
            for (y = 0; y < h; y++)
                col[y] = buf[y * stride + x];
            ref1d(col, v0, v1, rev, tmp);
            for (y = 0; y < h; y++)
                buf[y * stride + x] = tmp[y];
        }
        for (y = 0; y < h; y++) {
            ref1d(buf + y * stride, u0, u1, rev, tmp);
            memcpy(buf + y * stride, tmp, w * sizeof(double));
        }
        /* the low-pass count of the level's split must be the LL size of B-15 */
        *layout_ok &= (lw == (u1 + 1) / 2 - (u0 + 1) / 2) && (lh == (v1 + 1) / 2 - (v0 + 1) / 2);
    }
}

/* prints "ok NAME" or "FAIL NAME" for a group of checks that started at failure count f0 */
static void group(const char *name, int f0)
{
    printf("%s %s\n", test_failures == f0 ? "ok" : "FAIL", name);
}

static int rand_range(int lo, int hi) { return lo + (int)(test_rand() % (uint32_t)(hi - lo + 1)); }

static int max_levels_for(uint32_t w, uint32_t h)
{
    int l = 0;
    while ((w >> l) > 1 || (h >> l) > 1)
        l++;
    return l;
}

/* ---- checks ---- */

static void check_against_direct(void)
{
    int f0 = test_failures;
    int it;

    for (it = 0; it < 400; it++) {
        uint32_t w = (uint32_t)rand_range(1, 45), h = (uint32_t)rand_range(1, 45);
        uint32_t x0 = (uint32_t)rand_range(0, 70), y0 = (uint32_t)rand_range(0, 70);
        int levels = rand_range(0, max_levels_for(w, h) + 2), rev = it & 1, layout_ok = 1;
        long stride = (long)w + rand_range(0, 3);
        size_t n = (size_t)stride * h, i;
        double *ref = malloc(n * sizeof(*ref)), maxabs = 1, maxerr = 0;
        int32_t *bi = malloc(n * sizeof(*bi));
        float *bf = malloc(n * sizeof(*bf));
        void *scratch = malloc(j2ki_dwt_scratch_size(w, h));
        int depth = rand_range(8, 16), bad = 0;

        for (i = 0; i < n; i++) {
            int32_t v = (int32_t)(test_rand() % (1u << depth)) - (1 << (depth - 1));
            bi[i] = v;
            bf[i] = (float)v;
            ref[i] = v;
        }
        ref2d(ref, stride, x0, y0, x0 + w, y0 + h, levels, rev, &layout_ok);
        if (rev)
            j2ki_dwt53_fwd_ref(bi, stride, x0, y0, x0 + w, y0 + h, levels, scratch);
        else
            j2ki_dwt97_fwd_ref(bf, stride, x0, y0, x0 + w, y0 + h, levels, scratch);
        for (i = 0; i < n; i++) {
            if (i % (size_t)stride >= w)
                continue;
            if (rev) {
                bad += (double)bi[i] != ref[i];
            } else {
                double e = fabs((double)bf[i] - ref[i]);
                maxerr = e > maxerr ? e : maxerr;
            }
        }
        maxabs = (double)(1 << (depth - 1));
        CHECK(!bad, "5/3 %ux%u at (%u,%u) levels %d: %d coefficients differ from the direct transform",
              w, h, x0, y0, levels, bad);
        CHECK(maxerr <= 2e-5 * maxabs, "9/7 %ux%u at (%u,%u) levels %d: error %g vs direct convolution",
              w, h, x0, y0, levels, maxerr);
        CHECK(layout_ok, "band sizes of B-15 differ from the Mallat split at %ux%u (%u,%u)", w, h, x0, y0);
        free(ref); free(bi); free(bf); free(scratch);
    }
    group("lifting == direct transform (5/3 exact, 9/7 conv), random sizes/offsets/levels", f0);
}

/* the signal outside [0,w) of each row (stride padding) must be untouched */
static void check_reconstruction(uint32_t w, uint32_t h, uint32_t x0, uint32_t y0, int levels, int rev)
{
    long stride = (long)w + 5;
    size_t n = (size_t)stride * (h ? h : 1), i;
    int32_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
    float *f = malloc(n * sizeof(*f));
    void *scratch = malloc(j2ki_dwt_scratch_size(w, h));
    double maxerr = 0, range = 32768;
    int bad = 0;

    for (i = 0; i < n; i++) {
        a[i] = (int32_t)(test_rand() % 65536) - 32768;
        b[i] = a[i];
        f[i] = (float)a[i];
    }
    if (rev) {
        j2ki_dwt53_fwd_ref(b, stride, x0, y0, x0 + w, y0 + h, levels, scratch);
        j2ki_dwt53_inv_ref(b, stride, x0, y0, x0 + w, y0 + h, levels, scratch);
        for (i = 0; i < n; i++)
            bad += a[i] != b[i];
        CHECK(!bad, "5/3 %ux%u at (%u,%u) levels %d: %d samples not reconstructed", w, h, x0, y0, levels, bad);
    } else {
        j2ki_dwt97_fwd_ref(f, stride, x0, y0, x0 + w, y0 + h, levels, scratch);
        j2ki_dwt97_inv_ref(f, stride, x0, y0, x0 + w, y0 + h, levels, scratch);
        for (i = 0; i < n; i++) {
            double e = fabs((double)f[i] - a[i]);
            maxerr = e > maxerr ? e : maxerr;
        }
        CHECK(maxerr < 1e-3 * range * 1e-2, "9/7 %ux%u at (%u,%u) levels %d: reconstruction error %g",
              w, h, x0, y0, levels, maxerr);
    }
    free(a); free(b); free(f); free(scratch);
}

static void check_reconstruction_all(void)
{
    int f0 = test_failures;
    static const uint32_t sizes[][2] = { {1,1}, {1,2}, {2,1}, {1,17}, {23,1}, {2,2}, {3,3}, {5,7},
                                         {16,16}, {17,31}, {64,1}, {1,64}, {33,65}, {130,67} };
    size_t s;
    int rev, lv, it;

    for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        for (rev = 0; rev < 2; rev++)
            for (lv = 0; lv <= max_levels_for(sizes[s][0], sizes[s][1]) + 2; lv++) {
                check_reconstruction(sizes[s][0], sizes[s][1], 0, 0, lv, rev);
                check_reconstruction(sizes[s][0], sizes[s][1], 1, 1, lv, rev);
                check_reconstruction(sizes[s][0], sizes[s][1], 3, 0, lv, rev);
                check_reconstruction(sizes[s][0], sizes[s][1], 0, 5, lv, rev);
            }
    for (it = 0; it < 200; it++)
        check_reconstruction((uint32_t)rand_range(1, 90), (uint32_t)rand_range(1, 90),
                             (uint32_t)rand_range(0, 1000), (uint32_t)rand_range(0, 1000),
                             rand_range(0, 9), it & 1);
    /* every level count up to 32, including coordinates near 2^32 */
    for (lv = 0; lv <= 32; lv++) {
        check_reconstruction(37, 21, 5, 3, lv, lv & 1);
        check_reconstruction(7, 9, 4294967000u, 4294960001u, lv, !(lv & 1));
    }
    group("5/3 perfect reconstruction, 9/7 reconstruction error (sizes 1x1..130x67, odd offsets, levels 0..32)", f0);
}

static void check_empty(void)
{
    int f0 = test_failures;
    int32_t v = 7;
    float f = 7.0f;
    int32_t scratch[1024];   /* >= j2ki_dwt_scratch_size(1, 4) */
    int lv;

    CHECK(j2ki_dwt_scratch_size(1, 4) <= sizeof(scratch), "scratch size");
    for (lv = 0; lv <= 32; lv++) {
        j2ki_dwt53_fwd_ref(&v, 1, 5, 5, 5, 9, lv, scratch);
        j2ki_dwt53_inv_ref(&v, 1, 5, 5, 9, 5, lv, scratch);
        j2ki_dwt97_fwd_ref(&f, 1, 4, 4, 4, 4, lv, scratch);
        j2ki_dwt97_inv_ref(&f, 1, 0, 0, 0, 3, lv, scratch);
    }
    CHECK(v == 7 && f == 7.0f, "empty extents modified the buffer");
    /* one sample: kept at even coordinates, doubled at odd ones (F.4.8), both filters */
    v = 5;
    j2ki_dwt53_fwd_ref(&v, 1, 3, 2, 4, 3, 1, scratch);
    CHECK(v == 10, "5/3 lone sample at odd x: %d, expected 10", v);
    v = 5;
    j2ki_dwt53_fwd_ref(&v, 1, 3, 3, 4, 4, 1, scratch);
    CHECK(v == 20, "5/3 lone sample at odd x and y: %d, expected 20", v);
    f = 5.0f;
    j2ki_dwt97_fwd_ref(&f, 1, 2, 1, 3, 2, 1, scratch);
    CHECK(f == 10.0f, "9/7 lone sample at odd y: %g, expected 10", f);
    f = 5.0f;
    j2ki_dwt97_fwd_ref(&f, 1, 2, 2, 3, 3, 1, scratch);
    CHECK(f == 5.0f, "9/7 lone sample at even coordinates: %g, expected 5", f);
    /* (2,2): level 1 keeps it (even), level 2 sees it at ceil(2/2) = 1 (odd: doubled in both
     * directions, it becomes HH of level 2), level 3 is empty (ceil(2/4) = ceil(3/4)) */
    f = 5.0f;
    j2ki_dwt97_fwd_ref(&f, 1, 2, 2, 3, 3, 3, scratch);
    CHECK(f == 20.0f, "9/7 lone sample at (2,2), 3 levels: %g, expected 20", f);
    j2ki_dwt97_inv_ref(&f, 1, 2, 2, 3, 3, 3, scratch);
    CHECK(f == 5.0f, "9/7 lone sample at (2,2), 3 levels, inverse: %g, expected 5", f);
    group("empty extents and one-sample signals", f0);
}

/* ---- synthesis norms ---- */

/* norm of the image an impulse in band (level, orient) of a 9/7 or 5/3 decomposition makes */
static double impulse_norm(int rev, int levels, int level, int orient)
{
    const uint32_t n = 512;
    int32_t *bi = calloc((size_t)n * n, sizeof(*bi));
    float *bf = calloc((size_t)n * n, sizeof(*bf));
    void *scratch = malloc(j2ki_dwt_scratch_size(n, n));
    /* band origin in the Mallat layout (x0 = y0 = 0): HL of level d at x = n >> d */
    uint32_t bx = (orient & 1) ? n >> level : 0, by = (orient & 2) ? n >> level : 0;
    uint32_t cx = bx + (n >> level) / 2, cy = by + (n >> level) / 2;
    double s = 0, amp = 1 << 20;
    size_t i;

    (void)levels;
    if (rev) {
        bi[(size_t)cy * n + cx] = (int32_t)amp;
        j2ki_dwt53_inv_ref(bi, n, 0, 0, n, n, level, scratch);
        for (i = 0; i < (size_t)n * n; i++)
            s += (double)bi[i] * bi[i];
    } else {
        bf[(size_t)cy * n + cx] = 1.0f;
        amp = 1;
        j2ki_dwt97_inv_ref(bf, n, 0, 0, n, n, level, scratch);
        for (i = 0; i < (size_t)n * n; i++)
            s += (double)bf[i] * bf[i];
    }
    free(bi); free(bf); free(scratch);
    return sqrt(s) / amp;
}

/* 1-D synthesis responses from the analysis taps: g0[n] = (-1)^n h1[n], g1[n] = (-1)^n h0[n] */
static void norm_recursion(int rev, double lo[33], double hi[33])
{
    double g0[9] = {0}, g1[9] = {0}, a0[17], rl[17], rh[17], t[17];
    int n, m, d, k;

    /* taps indexed -4..4 at [n+4] */
    for (n = -4; n <= 4; n++) {
        int an = n < 0 ? -n : n;
        double t0 = rev ? (an == 0 ? 6 / 8. : an == 1 ? 2 / 8. : an == 2 ? -1 / 8. : 0) : h0_97[an];
        double t1 = rev ? (an == 0 ? 1 : an == 1 ? -0.5 : 0) : (an < 4 ? h1_97[an] : 0);
        g0[n + 4] = (an & 1 ? -1 : 1) * t1;
        g1[n + 4] = (an & 1 ? -1 : 1) * t0;
    }
    for (n = -8; n <= 8; n++) {
        double s0 = 0, s1 = 0;
        for (m = -4; m <= 4; m++)
            if (m + n >= -4 && m + n <= 4) {
                s0 += g0[m + 4] * g0[m + n + 4];
                s1 += g1[m + 4] * g1[m + n + 4];
            }
        a0[n + 8] = rl[n + 8] = s0;
        rh[n + 8] = s1;
    }
    for (d = 1; d <= 32; d++) {
        lo[d] = sqrt(rl[8]);
        hi[d] = sqrt(rh[8]);
        for (k = 0; k < 2; k++) {
            double *r = k ? rh : rl;
            for (n = -8; n <= 8; n++) {
                double s = 0;
                for (m = -8; m <= 8; m++)
                    if (n - 2 * m >= -8 && n - 2 * m <= 8)
                        s += a0[n - 2 * m + 8] * r[m + 8];
                t[n + 8] = s;
            }
            memcpy(r, t, sizeof(t));
        }
    }
}

static void check_norms(void)
{
    int f0 = test_failures;
    int rev, level, orient;

    for (rev = 0; rev < 2; rev++) {
        double lo[33], hi[33];
        for (level = 1; level <= 5; level++)
            for (orient = level == 5 ? 0 : 1; orient < 4; orient++) {
                double want = impulse_norm(rev, 5, level, orient);
                double got = j2ki_dwt_synthesis_norm(rev, level, orient);
                CHECK(fabs(got - want) <= (rev ? 2e-3 : 1e-4) * want,
                      "%s norm level %d orient %d: %.9g, impulse response %.9g", rev ? "5/3" : "9/7",
                      level, orient, got, want);
            }
        norm_recursion(rev, lo, hi);
        for (level = 1; level <= 32; level++)
            for (orient = 0; orient < 4; orient++) {
                double want = ((orient & 1) ? hi[level] : lo[level]) * ((orient & 2) ? hi[level] : lo[level]);
                double got = j2ki_dwt_synthesis_norm(rev, level, orient);
                CHECK(fabs(got - want) <= 1e-6 * want, "%s norm level %d orient %d: %.12g, recursion %.12g",
                      rev ? "5/3" : "9/7", level, orient, got, want);
            }
        CHECK(j2ki_dwt_synthesis_norm(rev, 0, 0) == 1.0, "level 0 norm");
    }
    /* hand-worked: the 5/3 LL1 basis is g0 (x) g0, g0 = (1/2, 1, 1/2): norm (3/2)^(1/2)^2 = 1.5;
     * LL2: g0(z) g0(z^2) = (1/4, 1/2, 3/4, 1, 3/4, 1/2, 1/4), squared sum 2.75 per dimension
     * -> 2-D norm 2.75 */
    CHECK(fabs(j2ki_dwt_synthesis_norm(1, 1, 0) - 1.5) < 1e-12, "5/3 LL1");
    CHECK(fabs(j2ki_dwt_synthesis_norm(1, 2, 0) - 2.75) < 1e-12, "5/3 LL2");
    group("synthesis norms (impulse responses, levels 1..5; recursion from filter taps, levels 1..32)", f0);
}

/* rough speed figure of the CPU path (not a check) */
static void bench(void)
{
    const uint32_t w = 2048, h = 1080;
    float *f = malloc((size_t)w * h * sizeof(*f));
    void *scratch = malloc(j2ki_dwt_scratch_size(w, h));
    size_t i;
    clock_t t0;

    for (i = 0; i < (size_t)w * h; i++)
        f[i] = (float)(test_rand() % 4096) - 2048;
    t0 = clock();
    j2ki_dwt97_fwd_ref(f, w, 0, 0, w, h, 5, scratch);
    printf("# 9/7 forward 2048x1080, 5 levels: %.1f ms\n", 1000.0 * (double)(clock() - t0) / CLOCKS_PER_SEC);
    free(f); free(scratch);
}

int main(void)
{
    test_seed("test_dwt", 0x9e3779b97f4a7c15ull);
    check_against_direct();
    check_reconstruction_all();
    check_empty();
    check_norms();
    bench();
    return test_done("test_dwt");
}
