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

int j2ki_ht_encode_cblk_ref(J2kiHt *ht, const int32_t *coefs, ptrdiff_t stride, int w, int h,
                            int nb_mag_bits, int frac_bits, int p, int refine, J2kiCblk *cb)
{
    uint32_t len;
    return j2ki_ht_encode_set(coefs, stride, w, h, nb_mag_bits, frac_bits, p, refine, &ht->s, cb->data, cb->data_cap,
                              cb->passes, cb->max_passes, &cb->nb_passes, &cb->numbps, &len);
}
