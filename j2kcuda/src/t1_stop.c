/*
 * Tier-1 early stop on the host (t1_stop.h): the decisions replayed over code-blocks that were
 * coded fully. The reference backend calls it, then codes the stopped blocks again up to their
 * limit; check_cuda compares the CUDA coder's in-flight decisions with it.
 */
#include <stdlib.h>

#include "t1_stop.h"
#include "t1_stop_host.h"

int j2ki_t1s_enabled(const J2kiCodingParams *cp)
{
    if (!cp->t1_stop || cp->rc_mode != J2KI_RC_BYTES || !cp->frame_bytes)
        return 0;
    return cp->frame_bytes * 8 < (uint64_t)J2KI_T1S_MAX_BPS * j2ki_image_samples(&cp->img);
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

uint32_t j2ki_t1s_threshold(const uint32_t *key, const uint32_t *bytes, size_t n, uint64_t budget,
                            uint64_t *scratch)
{
    size_t m = 0, i;
    uint64_t cum = 0;
    for (i = 0; i < n; i++)
        if (key[i])
            scratch[m++] = (uint64_t)key[i] << 32 | bytes[i];
    qsort(scratch, m, sizeof(*scratch), cmp_desc);
    for (i = 0; i < m; i++) {
        cum += (uint32_t)scratch[i];
        if (cum > budget)
            return (uint32_t)(scratch[i] >> 32);
    }
    return 0;
}

/* Entries of the search: every pass slot of every block. */
static size_t plan_slots(const J2kiPlan *plan)
{
    size_t n = 0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        n += (size_t)plan->cblks[i].max_passes;
    return n ? n : 1;
}

size_t j2ki_t1s_host_scratch_size(const J2kiPlan *plan)
{
    return plan_slots(plan) * (2 * sizeof(uint32_t) + sizeof(uint64_t));
}

int j2ki_t1s_plan_host(J2kiPlan *plan, uint64_t budget, uint32_t *lim, void *work)
{
    const size_t n = plan_slots(plan);
    void *own = work ? NULL : malloc(j2ki_t1s_host_scratch_size(plan));
    uint8_t *p = work ? work : own;
    uint32_t i;
    if (!p)
        return J2KC_ERR_NOMEM;
    uint64_t *scratch = (uint64_t *)(void *)p;
    uint32_t *key = (uint32_t *)(void *)(p + n * sizeof(uint64_t));
    uint32_t *bytes = key + n;
    for (i = 0; i < plan->nb_cblks; i++)
        lim[i] = 0;
    for (int s = 1; s <= J2KI_T1S_STEPS; s++) {
        size_t off = 0;
        for (i = 0; i < plan->nb_cblks; i++) {
            J2kiCblk *cb = &plan->cblks[i];
            int known = j2ki_t1s_known(s, cb->nb_passes, lim[i]);
            j2ki_t1s_block_keys(cb->passes, known, cb->max_passes, plan->bands[cb->band_idx].dist_weight,
                                key + off, bytes + off);
            off += (size_t)cb->max_passes;
        }
        uint32_t t = j2ki_t1s_threshold(key, bytes, n, budget, scratch);
        off = 0;
        for (i = 0; i < plan->nb_cblks; i++) {
            J2kiCblk *cb = &plan->cblks[i];
            if (!lim[i])
                lim[i] = j2ki_t1s_decide(key + off, j2ki_t1s_known(s, cb->nb_passes, 0), cb->nb_passes, t);
            off += (size_t)cb->max_passes;
        }
    }
    free(own);
    return 0;
}
