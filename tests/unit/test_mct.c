/*
 * Input load + DC level shift (G.1.2), RCT (G.2) and ICT (G.3): the load against hand-worked
 * values for every container layout, the RCT against G-1 evaluated with floor division and its
 * exact inverse G-2, the ICT against G-5 in double and its inverse within float error, the
 * component synthesis weights against the inverse transforms applied to unit vectors.
 */
#include <math.h>

#include "test.h"
#include "hd/mct.h"

static void group(const char *name, int f0) { printf("%s %s\n", test_failures == f0 ? "ok" : "FAIL", name); }

static void check_load(void)
{
    int f0 = test_failures;
    uint8_t u8[4][6];          /* packed rgb, 2 pixels per row + padding, 4 rows */
    uint16_t u16[3][5];
    int8_t s8[2][3];
    int16_t s16[2][2];
    int32_t out[8];
    J2kcFrame f;
    int x, y;

    memset(&f, 0, sizeof(f));
    for (y = 0; y < 4; y++)
        for (x = 0; x < 6; x++)
            u8[y][x] = (uint8_t)(40 * y + 7 * x);
    /* component 1 of packed rgb (G), 8-bit unsigned: (x0, y0) = (1, 2), 1 x 2 samples */
    f.data[1] = &u8[0][1];
    f.stride[1] = 6;
    f.step[1] = 3;
    j2ki_load_comp_ref(out, 1, 2, &f, 1, 1, 2, 8, 0);
    CHECK(out[0] == 40 * 2 + 7 * 4 - 128 && out[1] == 40 * 3 + 7 * 4 - 128,
          "packed rgb load: %d %d", out[0], out[1]);
    /* planar (step 0) 8-bit, 2 x 2 from (0, 1) */
    f.data[0] = u8;
    f.step[0] = 0;
    f.stride[0] = 6;
    j2ki_load_comp_ref(out, 2, 2, &f, 0, 0, 1, 8, 0);
    CHECK(out[0] == 40 - 128 && out[1] == 47 - 128 && out[2] == 80 - 128 && out[3] == 87 - 128,
          "planar 8-bit load: %d %d %d %d", out[0], out[1], out[2], out[3]);
    /* 12-bit MSB-aligned in 16-bit containers (shift 4), clamp of out-of-range 10-bit values */
    for (y = 0; y < 3; y++)
        for (x = 0; x < 5; x++)
            u16[y][x] = (uint16_t)((y * 1000 + x * 3) << 4 | 0xf);
    f.data[2] = u16;
    f.stride[2] = sizeof(u16[0]);
    f.step[2] = 1;
    f.shift[2] = 4;
    j2ki_load_comp_ref(out, 3, 2, &f, 2, 2, 1, 12, 0);
    CHECK(out[0] == 1006 - 2048 && out[2] == 1012 - 2048 && out[3] == 2006 - 2048 && out[5] == 2012 - 2048,
          "12-bit shifted load: %d %d %d %d", out[0], out[2], out[3], out[5]);
    f.shift[2] = 0;
    u16[0][0] = 1500;          /* above 2^10 - 1 */
    j2ki_load_comp_ref(out, 1, 1, &f, 2, 0, 0, 10, 0);
    CHECK(out[0] == 1023 - 512, "clamp to depth: %d", out[0]);
    /* signed 8 and 16 bit: no level shift */
    s8[1][0] = -100; s8[1][1] = 5; s8[1][2] = 127;
    f.data[3] = s8;
    f.stride[3] = 3;
    f.step[3] = 1;
    j2ki_load_comp_ref(out, 3, 1, &f, 3, 0, 1, 8, 1);
    CHECK(out[0] == -100 && out[1] == 5 && out[2] == 127, "int8 load: %d %d %d", out[0], out[1], out[2]);
    j2ki_load_comp_ref(out, 1, 1, &f, 3, 0, 1, 6, 1);
    CHECK(out[0] == -32, "signed clamp to 6 bits: %d", out[0]);
    s16[0][1] = -30000; s16[1][1] = (int16_t)(-1234 * 16);
    f.data[0] = s16;
    f.stride[0] = 4;
    f.step[0] = 1;
    f.shift[0] = 0;
    j2ki_load_comp_ref(out, 1, 1, &f, 0, 1, 0, 16, 1);
    CHECK(out[0] == -30000, "int16 load: %d", out[0]);
    f.shift[0] = 4;
    j2ki_load_comp_ref(out, 1, 1, &f, 0, 1, 1, 12, 1);
    CHECK(out[0] == -1234, "int16 arithmetic shift: %d", out[0]);
    group("input load: packed/planar, 8/16-bit, shift, signed, clamp, offsets", f0);
}

static int32_t floor_div4(int32_t a) { return (int32_t)floor(a / 4.0); }

static void check_rct(void)
{
    int f0 = test_failures, depth, i;

    for (depth = 1; depth <= 16; depth++) {
        int32_t c0[256], c1[256], c2[256], r[256], g[256], b[256];
        int bad = 0;
        for (i = 0; i < 256; i++) {
            uint32_t m = (1u << depth) - 1;
            /* extremes first, then random */
            r[i] = (int32_t)(i < 8 ? ((i & 1) ? m : 0) : test_rand() & m) - (1 << (depth - 1));
            g[i] = (int32_t)(i < 8 ? ((i & 2) ? m : 0) : test_rand() & m) - (1 << (depth - 1));
            b[i] = (int32_t)(i < 8 ? ((i & 4) ? m : 0) : test_rand() & m) - (1 << (depth - 1));
            c0[i] = r[i]; c1[i] = g[i]; c2[i] = b[i];
        }
        j2ki_rct_fwd_ref(c0, c1, c2, 256);
        for (i = 0; i < 256; i++) {
            int32_t rr, gg, bb;
            bad += c0[i] != floor_div4(r[i] + 2 * g[i] + b[i]) || c1[i] != b[i] - g[i] || c2[i] != r[i] - g[i];
            j2ki_rct_inv_sample(c0[i], c1[i], c2[i], &rr, &gg, &bb);
            bad += rr != r[i] || gg != g[i] || bb != b[i];
        }
        CHECK(!bad, "RCT depth %d: %d mismatches (G-1 or exact inverse)", depth, bad);
    }
    group("RCT equals G-1 and inverts exactly (depths 1..16)", f0);
}

static void check_ict(void)
{
    int f0 = test_failures, depth, i;

    for (depth = 8; depth <= 16; depth++) {
        float c0[512], c1[512], c2[512];
        double r[512], g[512], b[512], half = ldexp(1, depth - 1), efwd = 0, einv = 0;
        for (i = 0; i < 512; i++) {
            uint32_t m = (1u << depth) - 1;
            r[i] = (double)(test_rand() & m) - half;
            g[i] = (double)(test_rand() & m) - half;
            b[i] = (double)(test_rand() & m) - half;
            c0[i] = (float)r[i]; c1[i] = (float)g[i]; c2[i] = (float)b[i];
        }
        j2ki_ict_fwd_ref(c0, c1, c2, 512);
        for (i = 0; i < 512; i++) {
            double y = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
            double cb = -0.16875 * r[i] - 0.33126 * g[i] + 0.5 * b[i];
            double cr = 0.5 * r[i] - 0.41869 * g[i] - 0.08131 * b[i];
            float rr, gg, bb;
            efwd = fmax(efwd, fmax(fabs(c0[i] - y), fmax(fabs(c1[i] - cb), fabs(c2[i] - cr))));
            j2ki_ict_inv_sample(c0[i], c1[i], c2[i], &rr, &gg, &bb);
            einv = fmax(einv, fmax(fabs(rr - r[i]), fmax(fabs(gg - g[i]), fabs(bb - b[i]))));
        }
        /* float32: a few ulps of 2^(depth-1); the inverse: G-5/G-6 constants are rounded to 5
         * digits, so their product is the identity within about 2e-5 */
        CHECK(efwd <= 4e-7 * half, "ICT depth %d: error %g vs G-5 in double", depth, efwd);
        CHECK(einv <= 1e-4 * half, "ICT depth %d: inverse error %g", depth, einv);
    }
    group("ICT equals G-5, inverse G-6 within float/constant error (depths 8..16)", f0);
}

static void check_weights(void)
{
    int f0 = test_failures, c;

    for (c = 0; c < 3; c++) {
        double a = 1 << 20, s = 0;
        float in[3] = { 0, 0, 0 }, fr, fg, fb;
        int32_t ii[3] = { 0, 0, 0 }, r, g, b;
        /* ICT: the inverse applied to a unit vector of component c */
        in[c] = 1;
        j2ki_ict_inv_sample(in[0], in[1], in[2], &fr, &fg, &fb);
        s = (double)fr * fr + (double)fg * fg + (double)fb * fb;
        CHECK(fabs(s - j2ki_mct_synthesis_weight2(0, c)) < 1e-5, "ICT weight %d: %g vs %g", c, j2ki_mct_synthesis_weight2(0, c), s);
        /* RCT: large vector, floor negligible */
        ii[c] = (int32_t)a;
        j2ki_rct_inv_sample(ii[0], ii[1], ii[2], &r, &g, &b);
        s = ((double)r * r + (double)g * g + (double)b * b) / (a * a);
        CHECK(fabs(s - j2ki_mct_synthesis_weight2(1, c)) < 1e-5, "RCT weight %d: %g vs %g", c, j2ki_mct_synthesis_weight2(1, c), s);
    }
    CHECK(j2ki_mct_synthesis_weight2(0, 3) == 1.0 && j2ki_mct_synthesis_weight2(1, 3) == 1.0, "component 3 weight");
    group("component synthesis weights (inverse transforms of unit vectors)", f0);
}

static void check_int_to_float(void)
{
    int f0 = test_failures, i;
    int32_t v[64];
    float f[64];

    for (i = 0; i < 64; i++)
        v[i] = (int32_t)(test_rand() % 262144) - 131072;
    memcpy(f, v, sizeof(v));
    j2ki_int_to_float_ref(f, 64);
    for (i = 0; i < 64; i++)
        CHECK(f[i] == (float)v[i], "int_to_float[%d]: %g vs %d", i, f[i], v[i]);
    group("int to float in place", f0);
}

int main(void)
{
    test_seed("test_mct", 12345);
    check_load();
    check_rct();
    check_ict();
    check_weights();
    check_int_to_float();
    return test_done("test_mct");
}
