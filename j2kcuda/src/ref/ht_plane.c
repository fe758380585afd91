/*
 * The HT set's bit-plane of every code-block under a byte budget (hd/ht_plane.h): the model's
 * statistics and the measured sets per block on the worker pool, the slope searches serial
 * (integer sums: the same whatever the thread count, and the same as the device's).
 */
#include "ref/ht_plane.h"
#include "hd/t2_core.h"
#include "ref/t2_ref.h"

typedef struct PlaneJob {
    const J2kiPlan  *plan;
    const int32_t   *samples;
    J2kiHtPlaneStat *st;
    double           lambda;    /* measure_item's slope */
    int              round;     /* measure_item: 0, every block; later, the stale ones */
} PlaneJob;

size_t j2ki_ht_planes_scratch_size(const J2kiPlan *plan)
{
    return (size_t)(plan->nb_cblks ? plan->nb_cblks : 1) * sizeof(J2kiHtPlaneStat);
}

static void stat_item(void *opaque, uint32_t i, int worker)
{
    const PlaneJob *job = opaque;
    const J2kiCblk *cb = &job->plan->cblks[i];
    const J2kiBand *band = &job->plan->bands[cb->band_idx];
    (void)worker;
    j2ki_ht_plane_stats(&job->st[i], job->samples + j2ki_cblk_offset(job->plan, cb), j2ki_cblk_tc(job->plan, cb)->w,
                        (int)(cb->x1 - cb->x0), (int)(cb->y1 - cb->y0), band->frac_bits, job->plan->cp->ht_refine);
}

/* The sets are measured as they would be coded into the block's buffer. */
static void measure_item(void *opaque, uint32_t i, int worker)
{
    const PlaneJob *job = opaque;
    const J2kiCblk *cb = &job->plan->cblks[i];
    const J2kiBand *band = &job->plan->bands[cb->band_idx];
    (void)worker;
    if (job->round && !j2ki_ht_plane_stale(&job->st[i], band->dist_weight, job->lambda))
        return;
    j2ki_ht_plane_measure(&job->st[i], job->samples + j2ki_cblk_offset(job->plan, cb),
                          j2ki_cblk_tc(job->plan, cb)->w, (int)(cb->x1 - cb->x0), (int)(cb->y1 - cb->y0),
                          band->frac_bits, band->dist_weight, job->lambda, cb->data_cap);
}

int64_t j2ki_ht_plane_fixed_bytes(const J2kiPlan *plan)
{
    const J2kiCodingParams *cp = plan->cp;
    int64_t n = j2ki_main_header_size(plan) + 2 + (int64_t)J2KI_T2_TP_FIXED_BYTES * plan->nb_tile_parts;
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < cp->img.nb_comps; c++)
            for (int r = 0; r < plan->tiles[t].comps[c].nb_res; r++) {
                const J2kiRes *res = &plan->tiles[t].comps[c].res[r];
                n += (int64_t)res->nb_prec_w * res->nb_prec_h * cp->nb_layers;
            }
    return n;
}

/* The blocks' picks at slope lambda, in 1/32 bytes. */
static uint64_t bytes_at(const J2kiPlan *plan, const J2kiHtPlaneStat *st, double lambda)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        uint64_t bytes;
        j2ki_ht_plane_point(&st[i], plan->bands[plan->cblks[i].band_idx].dist_weight, lambda, &bytes);
        sum += bytes;
    }
    return sum;
}

/* The smallest slope in range whose picks fit target32 (hd/ht_plane.h's search): 0 when every
 * pick at slope 0 fits. */
static double fill_slope(const J2kiPlan *plan, const J2kiHtPlaneStat *st, int64_t target32)
{
    uint64_t lo = J2KI_HT_SLOPE_BITS_MIN, hi = J2KI_HT_SLOPE_BITS_MAX;
    if (!j2ki_ht_plane_over(bytes_at(plan, st, 0.0), target32))
        return 0.0;
    while (hi - lo > 1) {
        uint64_t mid = j2ki_ht_slope_mid(lo, hi);
        if (j2ki_ht_plane_over(bytes_at(plan, st, j2ki_ht_slope(mid)), target32))
            lo = mid;
        else
            hi = mid;
    }
    return j2ki_ht_slope(hi);
}

void j2ki_ht_planes_ref(const J2kiPlan *plan, const int32_t *samples, J2kiPool *pool,
                        void *scratch, uint8_t *p)
{
    const J2kiCodingParams *cp = plan->cp;
    PlaneJob job = { .plan = plan, .samples = samples, .st = scratch };
    int64_t target32;
    double lambda;

    if (cp->rc_mode != J2KI_RC_BYTES || !cp->frame_bytes) {
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            p[i] = 0;
        return;
    }
    j2ki_pool_run(pool, plan->nb_cblks, stat_item, &job);
    target32 = j2ki_ht_plane_target32(cp->frame_bytes, j2ki_ht_plane_fixed_bytes(plan), plan->nb_cblks);
    /* the model's slope, then the measured sets around its picks; where the slope found
     * over them picks a plane the model alone priced, the sets around that pick */
    job.lambda = fill_slope(plan, job.st, target32);
    for (job.round = 0; job.round < J2KI_HT_PLANE_ROUNDS; job.round++) {
        j2ki_pool_run(pool, plan->nb_cblks, measure_item, &job);
        job.lambda = fill_slope(plan, job.st, target32);
    }
    lambda = job.lambda;
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        p[i] = (uint8_t)j2ki_ht_plane_final(&job.st[i], plan->bands[plan->cblks[i].band_idx].dist_weight, lambda);
}
