/*
 * Compares a source image with a decoded one: per-component maximum difference and PSNR
 * (peak 2^depth - 1 of the source). Decoded images with deeper containers (FFmpeg writes
 * 12-bit samples MSB-aligned in rgb48le) are shifted back first.
 *
 *   cmp SRC DEC [--raw-src WxH:FMT] [--raw-dec WxH:FMT] [--exact] [--psnr MIN] [--psnr-all MIN]
 *       [--tol N]
 * --psnr: floor for the worst component; --psnr-all: floor for the PSNR of the mean
 * normalised MSE over all components (what a "quality" target aims at).
 * Prints one line; exit 0 when the criterion holds, 1 when not, 2 on errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imageio.h"

int main(int argc, char **argv)
{
    const char *a = NULL, *b = NULL, *ra = NULL, *rb = NULL;
    int exact = 0, tol = -1;
    double min_psnr = -1, min_all = -1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--raw-src") && v) { ra = v; i++; }
        else if (!strcmp(argv[i], "--raw-dec") && v) { rb = v; i++; }
        else if (!strcmp(argv[i], "--exact")) exact = 1;
        else if (!strcmp(argv[i], "--psnr") && v) { min_psnr = atof(v); i++; }
        else if (!strcmp(argv[i], "--tol") && v) { tol = atoi(v); i++; }
        else if (!strcmp(argv[i], "--psnr-all") && v) { min_all = atof(v); i++; }
        else if (!a) a = argv[i];
        else if (!b) b = argv[i];
        else { fprintf(stderr, "cmp: bad argument '%s'\n", argv[i]); return 2; }
    }
    if (!a || !b) {
        fprintf(stderr, "usage: cmp SRC DEC [--raw-src WxH:FMT] [--raw-dec WxH:FMT] [--exact] [--psnr MIN] [--tol N]\n");
        return 2;
    }
    char err[512];
    RawFormat rfa, rfb;
    Image ia, ib;
    if (ra && img_parse_raw(ra, &rfa, err, sizeof(err))) { fprintf(stderr, "cmp: %s\n", err); return 2; }
    if (rb && img_parse_raw(rb, &rfb, err, sizeof(err))) { fprintf(stderr, "cmp: %s\n", err); return 2; }
    if (img_read(a, ra ? &rfa : NULL, &ia, err, sizeof(err))) { fprintf(stderr, "cmp: %s\n", err); return 2; }
    if (img_read(b, rb ? &rfb : NULL, &ib, err, sizeof(err))) { fprintf(stderr, "cmp: %s\n", err); img_free(&ia); return 2; }
    int ret = 0;
    if (ia.desc.nb_comps != ib.desc.nb_comps) {
        printf("component count differs: %d vs %d\n", ia.desc.nb_comps, ib.desc.nb_comps);
        ret = 1;
        goto done;
    }
    double worst = INFINITY, nmse_sum = 0;   /* mean of per-component MSE / peak^2 */
    int32_t maxdiff = 0;
    printf("PSNR");
    for (int c = 0; c < ia.desc.nb_comps; c++) {
        if (ia.w[c] != ib.w[c] || ia.h[c] != ib.h[c]) {
            printf("\ncomponent %d: size %ux%u vs %ux%u\n", c, ia.w[c], ia.h[c], ib.w[c], ib.h[c]);
            ret = 1;
            goto done;
        }
        /* A deeper decoded container may hold the samples MSB-aligned (FFmpeg's rgb48le
         * for 12-bit) or as they are (FFmpeg's yuv422p12le for 11-bit): both hypotheses are
         * measured and the closer one is kept (the wrong one is off by a factor of 2^shift). */
        int shift_max = ib.desc.depth[c] - ia.desc.depth[c];
        if (shift_max < 0) shift_max = 0;
        double se = 0;
        int32_t md = 0;
        for (int shift = 0; shift <= shift_max; shift += shift_max ? shift_max : 1) {
            double se_s = 0;
            int32_t md_s = 0;
            for (uint32_t y = 0; y < ia.h[c]; y++)
                for (uint32_t x = 0; x < ia.w[c]; x++) {
                    int32_t va = img_get(&ia, c, x, y);
                    int32_t vb = img_get(&ib, c, x, y);
                    if (shift)
                        vb = (vb + (1 << (shift - 1))) >> shift;
                    if (ia.desc.is_signed[c] && !ib.desc.is_signed[c])
                        vb -= 1 << (ia.desc.depth[c] - 1);
                    int32_t d = va > vb ? va - vb : vb - va;
                    if (d > md_s) md_s = d;
                    se_s += (double)d * d;
                }
            if (shift == 0 || se_s < se) {
                se = se_s;
                md = md_s;
            }
            if (!shift_max)
                break;
        }
        double mse = se / ((double)ia.w[c] * ia.h[c]);
        double peak = (double)((1u << ia.desc.depth[c]) - 1);
        double psnr = mse > 0 ? 10 * log10(peak * peak / mse) : INFINITY;
        if (psnr < worst) worst = psnr;
        nmse_sum += mse / (peak * peak);
        if (md > maxdiff) maxdiff = md;
        if (isinf(psnr)) printf(" c%d inf", c); else printf(" c%d %.2f", c, psnr);
    }
    double all = nmse_sum > 0 ? -10 * log10(nmse_sum / ia.desc.nb_comps) : INFINITY;
    if (isinf(worst)) printf(" min inf all inf maxdiff %d", maxdiff);
    else printf(" min %.2f all %.2f maxdiff %d", worst, all, maxdiff);
    if (exact && maxdiff) { printf(" NOT bit-exact"); ret = 1; }
    if (tol >= 0 && maxdiff > tol) { printf(" > tol %d", tol); ret = 1; }
    if (min_psnr >= 0 && worst < min_psnr) { printf(" < floor %.2f", min_psnr); ret = 1; }
    if (min_all >= 0 && all < min_all) { printf(" overall < floor %.2f", min_all); ret = 1; }
    printf("\n");
done:
    img_free(&ia);
    img_free(&ib);
    return ret;
}
