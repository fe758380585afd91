/*
 * Deterministic test-image generator: smooth gradients + seeded noise + hard edges (a
 * rectangle, a checkerboard patch and a diagonal), at any size, depth, component count and
 * subsampling. Built by the test scripts against tools/imageio.c.
 *
 *   gen -o OUT --size WxH [--depth D] [--comps N] [--sub 444|422|420|440|411] [--seed S]
 *       [--signed] [--raw FMT] [--noise AMP] [--flat V]
 * --flat V: every sample V, plus the noise only when --noise is given (a near-black noisy frame).
 * OUT: NAME.pgm or NAME.ppm (PNM), NAME_0.pgx (one PGX per component), anything else with --raw FMT.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imageio.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *raw = NULL, *sub = "444";
    unsigned w = 0, h = 0;
    int depth = 8, comps = 3, sgn = 0, flat = -1;
    double noise = -1;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-o") && v) { out = v; i++; }
        else if (!strcmp(a, "--size") && v) { if (sscanf(v, "%ux%u", &w, &h) != 2) return 2; i++; }
        else if (!strcmp(a, "--depth") && v) { depth = atoi(v); i++; }
        else if (!strcmp(a, "--comps") && v) { comps = atoi(v); i++; }
        else if (!strcmp(a, "--sub") && v) { sub = v; i++; }
        else if (!strcmp(a, "--seed") && v) { seed = strtoull(v, NULL, 0); i++; }
        else if (!strcmp(a, "--raw") && v) { raw = v; i++; }
        else if (!strcmp(a, "--noise") && v) { noise = atof(v); i++; }
        else if (!strcmp(a, "--flat") && v) { flat = atoi(v); i++; }
        else if (!strcmp(a, "--signed")) { sgn = 1; }
        else { fprintf(stderr, "gen: bad argument '%s'\n", a); return 2; }
    }
    if (!out || !w || !h || depth < 1 || depth > 16 || comps < 1 || comps > 4) {
        fprintf(stderr, "usage: gen -o OUT --size WxH [--depth D] [--comps N] [--sub 444|422|420] [--seed S] [--signed] [--raw FMT]\n");
        return 2;
    }
    rng ^= seed * 0x9E3779B97F4A7C15ull;
    if (!rng)
        rng = 1;
    Image img;
    memset(&img, 0, sizeof(img));
    img.desc.nb_comps = comps;
    img.desc.width = w;
    img.desc.height = h;
    int sdx = 1, sdy = 1;
    if (!strcmp(sub, "422")) sdx = 2;
    else if (!strcmp(sub, "420")) sdx = sdy = 2;
    else if (!strcmp(sub, "440")) sdy = 2;
    else if (!strcmp(sub, "411")) sdx = 4;
    else if (strcmp(sub, "444")) { fprintf(stderr, "gen: bad --sub %s\n", sub); return 2; }
    for (int c = 0; c < comps; c++) {
        img.desc.depth[c] = depth;
        img.desc.is_signed[c] = sgn;
        img.desc.dx[c] = (c == 1 || c == 2) ? sdx : 1;
        img.desc.dy[c] = (c == 1 || c == 2) ? sdy : 1;
    }
    if (img_alloc(&img)) {
        fprintf(stderr, "gen: out of memory\n");
        return 1;
    }
    double maxv = (double)((1u << depth) - 1);
    double amp_noise = noise >= 0 ? noise : (depth > 1 ? 0.03 : 0.0);
    for (int c = 0; c < comps; c++) {
        double ph = 0.7 * c;
        for (uint32_t y = 0; y < img.h[c]; y++)
            for (uint32_t x = 0; x < img.w[c]; x++) {
                double u = (double)x * img.desc.dx[c] / (w > 1 ? w - 1 : 1);
                double v = (double)y * img.desc.dy[c] / (h > 1 ? h - 1 : 1);
                double s = 0.5 + 0.25 * sin(6.0 * u + ph) * cos(4.0 * v - ph) + 0.15 * (u - v);
                uint32_t X = x * (uint32_t)img.desc.dx[c], Y = y * (uint32_t)img.desc.dy[c];
                if (X > w / 4 && X < w / 2 && Y > h / 5 && Y < h / 2)            /* rectangle */
                    s = c == 1 ? 0.1 : 0.9;
                if (X > w / 2 && Y > h / 2 && ((X / 4 + Y / 4) & 1))           /* checkerboard */
                    s = 0.2 + 0.6 * ((c & 1) ? 0 : 1);
                if (X + Y == (w + h) / 2 || X + Y == (w + h) / 2 + 1)          /* diagonal line */
                    s = 1.0;
                double nz = amp_noise * (((double)(rnd() & 0xFFFF) / 65535.0) - 0.5) * 2;
                s += nz;
                if (flat >= 0)
                    s = flat / maxv + (noise >= 0 ? nz : 0.0);   /* --flat V [--noise AMP] */
                double q = floor(s * maxv + 0.5);
                if (q < 0) q = 0;
                if (q > maxv) q = maxv;
                int32_t val = (int32_t)q;
                if (sgn)
                    val -= 1 << (depth - 1);
                img_set(&img, c, x, y, val);
            }
    }
    char err[512];
    int r;
    size_t ol = strlen(out);
    if (raw) {
        RawFormat rf;
        char spec[256];
        snprintf(spec, sizeof(spec), "%ux%u:%s", w, h, raw);
        r = img_parse_raw(spec, &rf, err, sizeof(err));
        if (!r && (rf.depth != depth || rf.nb_comps != comps)) {
            snprintf(err, sizeof(err), "raw format %s does not match depth %d / %d comps", raw, depth, comps);
            r = -1;
        }
        if (!r)
            r = img_write_raw(out, &img, &rf, err, sizeof(err));
    } else if (ol > 6 && !strcmp(out + ol - 6, "_0.pgx")) {
        char pat[4096];
        snprintf(pat, sizeof(pat), "%.*s_%%d.pgx", (int)(ol - 6), out);
        r = img_write_pgx(pat, &img, err, sizeof(err));
    } else {
        r = img_write_pnm(out, &img, err, sizeof(err));
    }
    img_free(&img);
    if (r) {
        fprintf(stderr, "gen: %s\n", err);
        return 1;
    }
    return 0;
}
