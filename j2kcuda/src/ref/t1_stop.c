/*
 * Tier-1 early stop on the host (t1_stop.h): the decisions replayed over code-blocks that were
 * coded fully, on a worker pool (or the calling thread alone). The reference backend calls it,
 * then codes the stopped blocks again up to their limit; check_cuda compares the CUDA coder's
 * in-flight decisions with it.
 */
#include <string.h>

#include "hd/t1_stop.h"
#include "core/threadpool.h"

int j2ki_t1s_enabled(const J2kiCodingParams *cp)
{
    if (!cp->t1_stop || cp->rc_mode != J2KI_RC_BYTES || !cp->frame_bytes)
        return 0;
    return cp->frame_bytes * 8 < (uint64_t)J2KI_T1S_MAX_BPS * j2ki_image_samples(&cp->img);
}

/* Entries of the search: every pass slot of every block. */
static size_t plan_slots(const J2kiPlan *plan)
{
    size_t n = 0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        n += (size_t)plan->cblks[i].max_passes;
    return n ? n : 1;
}

/* The threshold's digits, most significant first: key bits [21, 32), [10, 21), [0, 10). */
#define T1S_BINS       2048
#define T1S_ITEM_SLOTS 8192   /* entries per item of the histogram jobs */
#define T1S_ITEM_CBLKS 64     /* code-blocks per item of the key and decision jobs */

static const int digit_shift[3] = { 21, 10, 0 };

typedef struct T1sHistJob {
    const uint32_t *key, *bytes;
    size_t          n;
    uint64_t       *bins;      /* per worker: T1S_BINS byte sums */
    uint32_t       *stamp;     /* per worker: job number of its bins' contents */
    uint32_t        job;
    int             level;
    uint32_t        prefix;    /* the digits found so far (key >> (digit_shift[level - 1])) */
} T1sHistJob;

static void hist_item(void *opaque, uint32_t j, int worker)
{
    T1sHistJob *h = opaque;
    uint64_t *bins = h->bins + (size_t)worker * T1S_BINS;
    size_t i0 = (size_t)j * T1S_ITEM_SLOTS, i1 = i0 + T1S_ITEM_SLOTS < h->n ? i0 + T1S_ITEM_SLOTS : h->n;
    const int sh = digit_shift[h->level], up = h->level ? digit_shift[h->level - 1] : 32;
    const uint32_t mask = (1u << ((h->level ? up : 32) - sh)) - 1;
    if (h->stamp[worker] != h->job) {
        memset(bins, 0, T1S_BINS * sizeof(*bins));
        h->stamp[worker] = h->job;
    }
    for (size_t i = i0; i < i1; i++) {
        uint32_t k = h->key[i];
        if (!k || (up < 32 && (k >> up) != h->prefix))
            continue;
        bins[(k >> sh) & mask] += h->bytes[i];
    }
}

size_t j2ki_t1s_pool_threshold_scratch_size(int nb_threads)
{
    if (nb_threads < 1)
        nb_threads = 1;
    return (size_t)nb_threads * (T1S_BINS * sizeof(uint64_t) + sizeof(uint32_t)) + T1S_BINS * sizeof(uint64_t);
}

uint32_t j2ki_t1s_threshold_pool(const uint32_t *key, const uint32_t *bytes, size_t n, uint64_t budget,
                                 struct J2kiPool *pool, void *scratch)
{
    const int nw = j2ki_pool_threads(pool);
    T1sHistJob h = { key, bytes, n, (uint64_t *)scratch, NULL, 0, 0, 0 };
    uint64_t *sum = h.bins + (size_t)nw * T1S_BINS;
    uint64_t left = budget;
    uint32_t t = 0;

    h.stamp = (uint32_t *)(void *)(sum + T1S_BINS);
    for (int w = 0; w < nw; w++)
        h.stamp[w] = 0;
    for (int level = 0; level < 3; level++) {
        int b, found = -1;
        h.job = (uint32_t)level + 1;
        h.level = level;
        h.prefix = t;
        j2ki_pool_run(pool, (uint32_t)((n + T1S_ITEM_SLOTS - 1) / T1S_ITEM_SLOTS), hist_item, &h);
        memset(sum, 0, T1S_BINS * sizeof(*sum));
        for (int w = 0; w < nw; w++)
            if (h.stamp[w] == h.job)
                for (b = 0; b < T1S_BINS; b++)
                    sum[b] += h.bins[(size_t)w * T1S_BINS + b];
        /* from the largest digit down: the first bin whose bytes, with those above it, exceed
         * what is left of the budget holds the threshold */
        for (b = T1S_BINS - 1; b >= 0; b--) {
            if (sum[b] > left) {
                found = b;
                break;
            }
            left -= sum[b];
        }
        if (found < 0)
            return 0;   /* the entries of every key (under the digits found) fit */
        t = t << (level == 2 ? 10 : 11) | (uint32_t)found;
    }
    return t;
}

typedef struct T1sPlanJob {
    J2kiPlan *plan;
    uint32_t *lim, *key, *bytes, t;
    size_t   *off;
    int       s;
} T1sPlanJob;

static void keys_item(void *opaque, uint32_t j, int worker)
{
    T1sPlanJob *p = opaque;
    uint32_t i1 = (j + 1) * T1S_ITEM_CBLKS < p->plan->nb_cblks ? (j + 1) * T1S_ITEM_CBLKS : p->plan->nb_cblks;
    (void)worker;
    for (uint32_t i = j * T1S_ITEM_CBLKS; i < i1; i++) {
        J2kiCblk *cb = &p->plan->cblks[i];
        j2ki_t1s_block_keys(cb->passes, j2ki_t1s_known(p->s, cb->nb_passes, p->lim[i]), cb->max_passes,
                            p->plan->bands[cb->band_idx].dist_weight, p->key + p->off[i], p->bytes + p->off[i]);
    }
}

static void decide_item(void *opaque, uint32_t j, int worker)
{
    T1sPlanJob *p = opaque;
    uint32_t i1 = (j + 1) * T1S_ITEM_CBLKS < p->plan->nb_cblks ? (j + 1) * T1S_ITEM_CBLKS : p->plan->nb_cblks;
    (void)worker;
    for (uint32_t i = j * T1S_ITEM_CBLKS; i < i1; i++) {
        const J2kiCblk *cb = &p->plan->cblks[i];
        if (!p->lim[i])
            p->lim[i] = j2ki_t1s_decide(p->key + p->off[i], cb->passes, j2ki_t1s_known(p->s, cb->nb_passes, 0),
                                        cb->nb_passes, p->plan->bands[cb->band_idx].dist_weight, p->t);
    }
}

size_t j2ki_t1s_pool_scratch_size(const J2kiPlan *plan, int nb_threads)
{
    /* keys and bytes per pass slot, each block's first slot, the threshold's histograms */
    return plan_slots(plan) * 2 * sizeof(uint32_t) + (plan->nb_cblks + 1) * sizeof(size_t) + 8 +
           j2ki_t1s_pool_threshold_scratch_size(nb_threads);
}

int j2ki_t1s_plan_pool(J2kiPlan *plan, uint64_t budget, uint32_t *lim, void *work, struct J2kiPool *pool)
{
    const size_t n = plan_slots(plan);
    const uint32_t nb_items = (plan->nb_cblks + T1S_ITEM_CBLKS - 1) / T1S_ITEM_CBLKS;
    uint8_t *p = work;
    T1sPlanJob job;
    size_t o = 0;

    if (!p)
        return J2KC_ERR_NOMEM;
    job.plan = plan;
    job.lim = lim;
    job.off = (size_t *)(void *)p;
    job.key = (uint32_t *)(void *)(p + (plan->nb_cblks + 1) * sizeof(size_t));
    job.bytes = job.key + n;
    void *hist = (void *)(p + (((plan->nb_cblks + 1) * sizeof(size_t) + n * 2 * sizeof(uint32_t) + 7) & ~(size_t)7));
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        job.off[i] = o;
        o += (size_t)plan->cblks[i].max_passes;
        lim[i] = 0;
    }
    for (int s = 1; s <= J2KI_T1S_STEPS; s++) {
        job.s = s;
        j2ki_pool_run(pool, nb_items, keys_item, &job);
        /* blocks without pass slots leave their (single) slot of plan_slots' minimum untouched */
        if (o < n)
            for (size_t k = o; k < n; k++)
                job.key[k] = job.bytes[k] = 0;
        job.t = j2ki_t1s_threshold_pool(job.key, job.bytes, n, budget, pool, hist);
        j2ki_pool_run(pool, nb_items, decide_item, &job);
    }
    return 0;
}
