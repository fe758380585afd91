/*
 * HT block coder, reference backend: ht_ref.h.
 */
#include <stdlib.h>

#include "ref/ht_ref.h"
#include "hd/ht_core.h"

struct J2kiHt {
    J2kiHtScratch s;
};

J2kiHt *j2ki_ht_alloc(void)
{
    return calloc(1, sizeof(J2kiHt));
}

void j2ki_ht_free(J2kiHt **ht)
{
    if (!ht)
        return;
    free(*ht);
    *ht = NULL;
}

int j2ki_ht_top_planes(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits)
{
    uint32_t acc = 0;
    int n = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int32_t v = coefs[(ptrdiff_t)y * stride + x];
            acc |= (v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v) >> frac_bits;
        }
    while (acc) {
        n++;
        acc >>= 1;
    }
    return n;
}

int j2ki_ht_encode_cblk_ref(J2kiHt *ht, const int32_t *coefs, ptrdiff_t stride, int w, int h,
                            int nb_mag_bits, int frac_bits, int p, J2kiCblk *cb)
{
    uint32_t lcup, lsp = 0, lmr = 0;
    double d[3];
    int top, ret;

    cb->nb_passes = 0;
    cb->numbps = 0;
    if (w <= 0 || h <= 0 || w > J2KI_HT_MAX_W || w * h > J2KI_HT_MAX_AREA || frac_bits < 0 ||
        frac_bits > 31 || p < 0)
        return J2KC_ERR_INVAL;
    top = j2ki_ht_top_planes(coefs, stride, w, h, frac_bits);
    if (!top)
        return 0;
    if (top > nb_mag_bits || top > 31)
        return J2KC_ERR_INTERNAL;
    p = j2ki_imin(p, top - 1);
    if (cb->max_passes < (p ? 3 : 1))
        return J2KC_ERR_BUFSIZE;
    ret = j2ki_ht_cleanup(coefs, stride, w, h, frac_bits, p, &ht->s, cb->data, cb->data_cap, &lcup);
    if (ret < 0)
        return ret;
    if (p > 0) {
        ret = j2ki_ht_refine(coefs, stride, w, h, frac_bits, p, &ht->s, cb->data + lcup,
                             cb->data_cap - lcup, &lsp, &lmr);
        if (ret < 0)
            return ret;
    }
    j2ki_ht_dist(coefs, stride, w, h, frac_bits, p, ht->s.sig, d);
    cb->numbps = p + 1;
    cb->nb_passes = p ? 3 : 1;
    cb->passes[0] = (J2kiPass){ .rate = lcup, .est = lcup, .dist = d[0], .term = 1 };
    if (p) {
        cb->passes[1] = (J2kiPass){ .rate = lcup + lsp, .est = lcup + lsp, .dist = d[1], .term = 0 };
        cb->passes[2] = (J2kiPass){ .rate = lcup + lsp + lmr, .est = lcup + lsp + lmr, .dist = d[2],
                                    .term = 1 };
    }
    return 0;
}
