/*
 * Tier-1 coding, reference backend (ISO/IEC 15444-1 Annex D): one code-block at a time on
 * the host, through the same J2KI_HD functions as the CUDA coder (t1_core.h, mqc.h).
 */
#include <stdlib.h>

#include "ref/t1_ref.h"
#include "hd/t1_core.h"

struct J2kiT1 {
    J2kiT1State st;
    size_t      nb_alloc;   /* samples in flags / mag: (max_w + 2) * (max_h + 2) */
    int         max_w, max_h;
};

J2kiT1 *j2ki_t1_alloc(int max_w, int max_h)
{
    J2kiT1 *t1;
    if (max_w <= 0 || max_h <= 0)
        return NULL;
    t1 = calloc(1, sizeof(*t1));
    if (!t1)
        return NULL;
    t1->max_w = max_w;
    t1->max_h = max_h;
    t1->nb_alloc = (size_t)(max_w + 2) * (size_t)(max_h + 2);
    t1->st.flags = malloc(t1->nb_alloc * sizeof(*t1->st.flags));
    t1->st.mag = malloc(t1->nb_alloc * sizeof(*t1->st.mag));
    if (!t1->st.flags || !t1->st.mag)
        goto fail;
    return t1;
fail:
    j2ki_t1_free(&t1);
    return NULL;
}

void j2ki_t1_free(J2kiT1 **pt1)
{
    J2kiT1 *t1 = pt1 ? *pt1 : NULL;
    if (!t1)
        return;
    free(t1->st.flags);
    free(t1->st.mag);
    free(t1);
    *pt1 = NULL;
}

int j2ki_t1_encode_cblk_ref(J2kiT1 *t1, const int32_t *coefs, ptrdiff_t stride,
                            int w, int h, int orient, int cblk_style, int bypass_start,
                            int nb_mag_bits, int frac_bits, J2kiCblk *cb)
{
    return j2ki_t1_encode_cblk_ref_lim(t1, coefs, stride, w, h, orient, cblk_style, bypass_start, nb_mag_bits,
                                       frac_bits, cb, 0);
}

int j2ki_t1_encode_cblk_ref_lim(J2kiT1 *t1, const int32_t *coefs, ptrdiff_t stride,
                                int w, int h, int orient, int cblk_style, int bypass_start,
                                int nb_mag_bits, int frac_bits, J2kiCblk *cb, int lim)
{
    uint32_t acc, len = 0;
    int numbps, ret;

    cb->nb_passes = 0;
    cb->numbps = 0;
    if (w <= 0 || h <= 0 || w > t1->max_w || h > t1->max_h || frac_bits < 0 || frac_bits > 31)
        return J2KC_ERR_INVAL;
    acc = j2ki_t1_load(&t1->st, coefs, stride, w, h, orient, cblk_style);
    numbps = j2ki_t1_nbits(acc >> frac_bits);
    cb->numbps = numbps;
    if (!numbps)
        return 0;
    if (numbps > nb_mag_bits || numbps > J2KI_T1_MAX_PLANES)
        return J2KC_ERR_INTERNAL;
    ret = j2ki_t1_code_lim(&t1->st, numbps, cblk_style, bypass_start, frac_bits, cb->data,
                           cb->data_cap, cb->passes, cb->max_passes, &len, lim);
    if (ret < 0)
        return ret;
    cb->nb_passes = lim > 0 && lim < 3 * numbps - 2 ? lim : 3 * numbps - 2;
    return 0;
}

int j2ki_t1_layer_segments(const J2kiCblk *cb, int first_pass, int end_pass,
                           uint32_t *lens, int max_lens)
{
    uint32_t start;
    int i, n = 0;
    if (first_pass < 0 || end_pass > cb->nb_passes || first_pass > end_pass)
        return J2KC_ERR_INVAL;
    start = first_pass > 0 ? cb->passes[first_pass - 1].rate : 0;
    for (i = first_pass; i < end_pass; i++) {
        if (!cb->passes[i].term && i != end_pass - 1)
            continue;
        if (n == max_lens)
            return J2KC_ERR_BUFSIZE;
        lens[n++] = cb->passes[i].rate - start;
        start = cb->passes[i].rate;
    }
    return n;
}
