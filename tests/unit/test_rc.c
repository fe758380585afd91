/*
 * Rate control (rc_ref.c, rc_core.h): convex hulls against a brute-force definition in exact integer
 * arithmetic, and PCRD-opt truncations of hand-built plans measured by a size model whose exact
 * answer this file computes itself: budgets never exceeded and met within 0.5%, per-component
 * budgets, layers, BUFSIZE when the headers alone break a budget, the SLOPE and PSNR modes
 * against independent selections, and the same answer on a second run; the byte searches
 * again with several thresholds sized per step (the rc_probes test hook, J2KC_RC_PROBES).
 */
#include <math.h>
#include <stdlib.h>

#include "test.h"
#include "ref/rc_ref.h"
#include "hd/rc_core.h"

/* ---- brute-force hull --------------------------------------------------------------- */

/* p1/q1 compared with p2/q2 (q > 0), exactly: -1, 0, 1 */
static int frac_cmp(int64_t p1, int64_t q1, int64_t p2, int64_t q2)
{
    int64_t a = p1 * q2, b = p2 * q1;
    return a < b ? -1 : a > b;
}

/*
 * Point k (of 0..n, R/D integer) is a truncation point iff some lambda > 0 makes
 * D_k - lambda R_k strictly larger than at every earlier point and at least as large as at every
 * later one (ties keep the earliest point; collinear interior points are not vertices).
 */
static int brute_vertex(const int64_t *R, const int64_t *D, int n, int k)
{
    int64_t ap = 1, aq = 0;   /* a = +inf: upper bound of lambda (exclusive) */
    int64_t bp = 0, bq = 1;   /* b = max(0, slopes to later points): lambda >= b, lambda > 0 */
    for (int i = 0; i < k; i++) {
        if (R[i] == R[k]) {
            if (D[k] <= D[i])
                return 0;
        } else if (aq == 0 || frac_cmp(D[k] - D[i], R[k] - R[i], ap, aq) < 0) {
            ap = D[k] - D[i];
            aq = R[k] - R[i];
        }
    }
    for (int j = k + 1; j <= n; j++) {
        if (R[j] == R[k]) {
            if (D[j] > D[k])
                return 0;
        } else if (frac_cmp(D[j] - D[k], R[j] - R[k], bp, bq) > 0) {
            bp = D[j] - D[k];
            bq = R[j] - R[k];
        }
    }
    if (aq == 0)
        return 1;                                   /* no earlier point at a lower rate */
    return frac_cmp(ap, aq, bp, bq) > 0;            /* some lambda in [b, a), lambda > 0 */
}

static void test_hull_bruteforce(void)
{
    J2kiPass passes[48];
    int64_t R[49], D[49];
    int bad_vertex = 0, bad_slope = 0, bad_order = 0;
    test_seed("hull", 20261121);
    for (int it = 0; it < 5000; it++) {
        int n = (int)(test_rand() % 41);
        int small = it & 1;                         /* small ranges: many ties and collinear points */
        double w = (test_rand() % 3) ? 1.0 : 0.25 + (test_rand() % 1000) / 100.0;
        R[0] = D[0] = 0;
        for (int k = 1; k <= n; k++) {
            int64_t dr = small ? test_rand() % 4 : test_rand() % 300;
            int64_t dd = small ? (int64_t)(test_rand() % 7) - 1 : (int64_t)(test_rand() % 100000) - 2000;
            R[k] = R[k - 1] + dr;
            D[k] = D[k - 1] + dd;
            passes[k - 1].rate = (uint32_t)R[k];
            passes[k - 1].dist = (double)dd;
            passes[k - 1].slope = -7.0;
            passes[k - 1].term = 0;
        }
        j2ki_rc_hull_passes(passes, n, w);
        int prev = 0;
        double prev_s = INFINITY;
        for (int k = 1; k <= n; k++) {
            int v = brute_vertex(R, D, n, k);
            if (v != (passes[k - 1].slope > 0.0)) {
                if (!bad_vertex++)
                    fprintf(stderr, "iteration %d: point %d of %d: brute force %d, slope %g\n",
                            it, k, n, v, passes[k - 1].slope);
                continue;
            }
            if (!v)
                continue;
            double want = R[k] > R[prev] ? (double)(D[k] - D[prev]) / (double)(R[k] - R[prev]) * w
                                         : J2KI_RC_SLOPE_MAX;
            if (want > J2KI_RC_SLOPE_MAX)
                want = J2KI_RC_SLOPE_MAX;
            if (passes[k - 1].slope != want && !bad_slope++)
                fprintf(stderr, "iteration %d: point %d of %d: slope %.17g, want %.17g (w %g)\n",
                        it, k, n, passes[k - 1].slope, want, w);
            if (!(passes[k - 1].slope < prev_s))
                bad_order++;
            prev_s = passes[k - 1].slope;
            prev = k;
        }
    }
    CHECK(!bad_vertex, "%d points disagree with the brute-force hull", bad_vertex);
    CHECK(!bad_slope, "%d hull slopes differ from (D_k - D_prev) / (R_k - R_prev) * weight", bad_slope);
    CHECK(!bad_order, "%d hull slopes do not strictly decrease", bad_order);

    /* hand-worked: (0,0) (10,100) (20,150) (30,160) (40,200): 10, 5, then 50/20 = 2.5 skipping 160 */
    static const uint32_t r[4] = { 10, 20, 30, 40 };
    static const double d[4] = { 100, 50, 10, 40 };
    for (int k = 0; k < 4; k++) {
        passes[k].rate = r[k];
        passes[k].dist = d[k];
    }
    j2ki_rc_hull_passes(passes, 4, 2.0);
    CHECK(passes[0].slope == 20.0 && passes[1].slope == 10.0 && passes[2].slope == 0.0 &&
          passes[3].slope == 5.0, "hand-worked hull: %g %g %g %g",
          passes[0].slope, passes[1].slope, passes[2].slope, passes[3].slope);
    CHECK(j2ki_rc_cblk_select(passes, 4, 10.0, 1) == 2 && j2ki_rc_cblk_select(passes, 4, 10.0, 0) == 1 &&
          j2ki_rc_cblk_select(passes, 4, 0.0, 1) == 4 && j2ki_rc_cblk_select(passes, 4, 21.0, 1) == 0 &&
          j2ki_rc_cblk_select(passes, 4, -1.0, 0) == 4, "hand-worked selections");
}

/* ---- synthetic plans and an exact size model --------------------------------------- */

#define MAX_CBLKS 4096
#define MAX_P     40

typedef struct TPlan {
    J2kiCodingParams cp;
    J2kiPlan plan;
    J2kiBand bands[64];
    J2kiCblk cblks[MAX_CBLKS];
    J2kiPass passes[MAX_CBLKS][MAX_P];
    uint16_t lp[MAX_CBLKS][J2KI_MAX_LAYERS];
} TPlan;

/*
 * Size model: main header 300 B + EOC 2 B; per component a tile-part header of 14 B; per
 * component and layer a 1-byte packet; per code-block and layer where it gains passes,
 * 2 + added/8 header bytes and the added data bytes.
 */
#define M_MAIN 300
#define M_TP   14

static int64_t model_size(void *opaque, J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len)
{
    int L = plan->cp->nb_layers, C = plan->cp->img.nb_comps;
    uint64_t per[J2KC_MAX_COMPS][J2KI_MAX_LAYERS];
    if (opaque)
        ++*(int *)opaque;
    for (int c = 0; c < C; c++)
        for (int l = 0; l < L; l++)
            per[c][l] = 1;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        int c = plan->bands[cb->band_idx].comp, prev = 0;
        for (int l = 0; l < L; l++) {
            int n = cb->layer_passes[l];
            if (n > prev) {
                uint32_t r0 = prev ? cb->passes[prev - 1].rate : 0;
                per[c][l] += 2 + (uint64_t)(n - prev) / 8 + (cb->passes[n - 1].rate - r0);
            }
            prev = n;
        }
    }
    uint64_t total = M_MAIN + 2;
    for (int l = 0; l < L; l++) {
        uint64_t s = M_MAIN + 2;
        for (int c = 0; c < C; c++) {
            s += M_TP;
            for (int m = 0; m <= l; m++)
                s += per[c][m];
        }
        if (layer_len)
            layer_len[l] = s;
        total = s;
    }
    for (int c = 0; comp_len && c < C; c++) {
        comp_len[c] = M_TP;
        for (int l = 0; l < L; l++)
            comp_len[c] += per[c][l];
    }
    return (int64_t)total;
}

/* Random plan: nb_comps components of nb_bands bands of nb_cblks code-blocks; component c's
 * rates are scaled by rich[c]. Dense convex-ish RD curves with noise, some empty blocks. */
/* thresholds sized per guided step in the plans make_plan builds (hooks.h, rc_probes) */
static int g_rc_probes = 1;

static void make_plan(TPlan *t, int nb_comps, int nb_bands, int nb_cblks, int nb_layers, const int *rich)
{
    free(t->plan.rc_scratch);   /* rate control's scratch, kept by the plan between frames */
    memset(t, 0, sizeof(*t));
    t->cp.hooks.rc_probes = g_rc_probes;
    t->cp.img.nb_comps = nb_comps;
    t->cp.nb_layers = nb_layers;
    t->plan.cp = &t->cp;
    t->plan.bands = t->bands;
    t->plan.cblks = t->cblks;
    for (int c = 0; c < nb_comps; c++)
        t->cp.img.depth[c] = c ? 8 : 12;
    int bi = 0;
    uint32_t ci = 0;
    for (int c = 0; c < nb_comps; c++)
        for (int b = 0; b < nb_bands; b++, bi++) {
            J2kiBand *band = &t->bands[bi];
            band->comp = c;
            band->dist_weight = ldexp(1.0 + (test_rand() % 1000) / 1000.0, (int)(test_rand() % 9) - 2);
            band->first_cblk = ci;
            for (int k = 0; k < nb_cblks; k++, ci++) {
                J2kiCblk *cb = &t->cblks[ci];
                cb->band_idx = (uint32_t)bi;
                cb->passes = t->passes[ci];
                cb->max_passes = MAX_P;
                cb->layer_passes = t->lp[ci];
                cb->nb_passes = test_rand() % 10 ? (int)(test_rand() % (MAX_P + 1)) : 0;
                uint32_t rate = 0;
                double d0 = 1e4 * (1 + test_rand() % 100);
                for (int p = 0; p < cb->nb_passes; p++) {
                    rate += (uint32_t)(rich[c] * (1 + test_rand() % 60) * (p + 3) / 8);
                    cb->passes[p].rate = rate;
                    cb->passes[p].dist = test_rand() % 17 ? d0 * exp(-0.35 * p) * (0.3 + (test_rand() % 1000) / 700.0)
                                                          : -d0 * 0.01 * exp(-0.35 * p);
                    cb->passes[p].term = p == cb->nb_passes - 1;
                }
                for (int l = 0; l < J2KI_MAX_LAYERS; l++)
                    cb->layer_passes[l] = 0xdead;
            }
        }
    t->plan.nb_bands = (uint32_t)bi;
    t->plan.nb_cblks = ci;
    t->plan.nb_samples = (size_t)ci * 1024;
}

/* Every code-block of a band gets the RD curve of the band's first one: many equal slopes, which
 * only splitting ties by code-block index can use to the byte. */
static void clone_bands(TPlan *t)
{
    for (uint32_t b = 0; b < t->plan.nb_bands; b++) {
        const J2kiBand *band = &t->bands[b];
        for (uint32_t i = band->first_cblk + 1; i < t->plan.nb_cblks && t->cblks[i].band_idx == b; i++) {
            t->cblks[i].nb_passes = t->cblks[band->first_cblk].nb_passes;
            memcpy(t->passes[i], t->passes[band->first_cblk], sizeof(t->passes[i]));
        }
    }
}

static int64_t model_now(TPlan *t, uint64_t *comp_len, uint64_t *layer_len)
{
    return model_size(NULL, &t->plan, comp_len, layer_len);
}

static int layers_monotone(const TPlan *t)
{
    for (uint32_t i = 0; i < t->plan.nb_cblks; i++) {
        const J2kiCblk *cb = &t->cblks[i];
        for (int l = 0; l < t->cp.nb_layers; l++)
            if ((l && cb->layer_passes[l] < cb->layer_passes[l - 1]) || cb->layer_passes[l] > cb->nb_passes)
                return 0;
    }
    return 1;
}

static void set_all(TPlan *t, int passes_or_hull)
{
    for (uint32_t i = 0; i < t->plan.nb_cblks; i++) {
        J2kiCblk *cb = &t->cblks[i];
        int n = passes_or_hull ? j2ki_rc_cblk_select(cb->passes, cb->nb_passes, 0.0, 1) : 0;
        for (int l = 0; l < t->cp.nb_layers; l++)
            cb->layer_passes[l] = (uint16_t)n;
    }
}

static void hull_all(TPlan *t)
{
    for (uint32_t i = 0; i < t->plan.nb_cblks; i++)
        j2ki_rc_hull(&t->cblks[i], t->bands[t->cblks[i].band_idx].dist_weight);
}

static TPlan tp, tp2;

/*
 * The search's shortcuts (rc_core.h: the histogram guide of a BYTES search, the narrowing of
 * tie indices) only skip sizings whose outcome is implied: the same run without them
 * (j2ki_rc_run_opts plain) must choose the same passes. Call after a run; counts sizings.
 */
static int plain_differs(TPlan *t, int *plain_calls)
{
    const J2kiPlan *pl = &t->plan;
    int L = pl->cp->nb_layers, diff = 0;
    uint16_t *keep = malloc((size_t)pl->nb_cblks * L * sizeof(*keep));
    if (!keep)
        return 1;
    for (uint32_t i = 0; i < pl->nb_cblks; i++)
        for (int l = 0; l < L; l++)
            keep[i * L + l] = pl->cblks[i].layer_passes[l];
    int ret = j2ki_rc_run_opts(&t->plan, NULL, model_size, plain_calls, 1);
    for (uint32_t i = 0; i < pl->nb_cblks; i++)
        for (int l = 0; l < L; l++)
            diff |= keep[i * L + l] != pl->cblks[i].layer_passes[l];
    free(keep);
    return ret < 0 || diff;
}

static void test_bytes(void)
{
    static const int rich1[4] = { 1, 1, 1, 1 };
    int over = 0, far = 0, fail = 0, nonmono = 0, runs = 0, sizings = 0, max_sizings = 0;
    int differs = 0, plain_sizings = 0;
    double worst = 0;
    test_seed("bytes", 77);
    for (int it = 0; it < 40; it++) {
        make_plan(&tp, 3, 4 + it % 5, 20 + it * 3, 1, rich1);
        if (it % 4 == 3)
            clone_bands(&tp);
        hull_all(&tp);
        set_all(&tp, 1);
        int64_t full = model_now(&tp, NULL, NULL);
        set_all(&tp, 0);
        int64_t empty = model_now(&tp, NULL, NULL);
        uint64_t budget = (uint64_t)empty + 1 + test_rand() % (uint64_t)(full - empty + full / 8);
        tp.cp.rc_mode = J2KI_RC_BYTES;
        tp.cp.frame_bytes = budget;
        tp.cp.layer_bytes[0] = budget;
        int calls = 0;
        int ret = j2ki_rc_run_with(&tp.plan, NULL, model_size, &calls);
        int64_t got = model_now(&tp, NULL, NULL);
        runs++;
        sizings += calls;
        max_sizings = calls > max_sizings ? calls : max_sizings;
        if (ret < 0) {
            fail++;
            continue;
        }
        if ((uint64_t)got > budget)
            over++;
        if ((uint64_t)full > budget) {
            double gap = 1.0 - (double)got / (double)budget;
            if (gap > worst)
                worst = gap;
            if (gap > 0.005) {
                far++;
                fprintf(stderr, "budget %llu: got %lld (%.3f%% below)\n", (unsigned long long)budget,
                        (long long)got, 100 * gap);
            }
        } else if (got != full) {
            far++;
            fprintf(stderr, "budget %llu above the full size %lld: got %lld\n",
                    (unsigned long long)budget, (long long)full, (long long)got);
        }
        if (!layers_monotone(&tp))
            nonmono++;
        if (plain_differs(&tp, &plain_sizings))
            differs++;
    }
    CHECK(!fail, "%d of %d runs failed", fail, runs);
    CHECK(!differs, "%d of %d runs chose other passes than the search without its shortcuts", differs, runs);
    CHECK(!over, "%d of %d runs exceeded their budget", over, runs);
    CHECK(!far, "%d of %d runs more than 0.5%% below the budget (or not everything when it fits)", far, runs);
    CHECK(!nonmono, "%d runs with invalid layer_passes", nonmono);
    printf("# bytes: %d runs, worst %.4f%% below budget, %.1f sizings per run (at most %d; %.1f without "
           "the search's shortcuts)\n", runs, 100 * worst, (double)sizings / runs, max_sizings,
           (double)plain_sizings / runs);
    CHECK(max_sizings <= 80, "a run took %d sizings", max_sizings);
}

/*
 * Budgets that fall inside a group of tied slopes: every code-block of a band has the band's
 * first RD curve (clone_bands), and the budget is the size with the passes of slope > s
 * everywhere plus, in the first n code-blocks of that band, those of slope s. The search
 * must split the tie by index (several tied code-blocks, so the narrowing of tie indices has
 * to keep its bounds right) and choose what the search without shortcuts chooses.
 */
static void test_ties(void)
{
    static const int rich1[4] = { 1, 1, 1, 1 };
    int bad = 0, runs = 0, sizings = 0, plain_sizings = 0;
    test_seed("ties", 5150);
    for (int it = 0; it < 24; it++) {
        make_plan(&tp, 1, 3, 24, 1, rich1);
        clone_bands(&tp);
        hull_all(&tp);
        const J2kiBand *band = &tp.bands[it % 3];
        const J2kiCblk *c0 = &tp.cblks[band->first_cblk];
        double sv[MAX_P];
        int ns = 0;
        for (int p = 0; p < c0->nb_passes; p++)
            if (c0->passes[p].slope > 0.0 && c0->passes[p].slope < J2KI_RC_SLOPE_MAX)
                sv[ns++] = c0->passes[p].slope;
        if (!ns)
            continue;
        double s = sv[test_rand() % ns];
        uint32_t k = band->first_cblk + 1 + test_rand() % 23;   /* up to all but the last */
        for (uint32_t i = 0; i < tp.plan.nb_cblks; i++) {
            J2kiCblk *cb = &tp.cblks[i];
            cb->layer_passes[0] = (uint16_t)j2ki_rc_cblk_select(cb->passes, cb->nb_passes, s, i < k);
        }
        uint64_t budget = (uint64_t)model_now(&tp, NULL, NULL);
        tp.cp.rc_mode = J2KI_RC_BYTES;
        tp.cp.frame_bytes = budget;
        tp.cp.layer_bytes[0] = budget;
        int calls = 0;
        int ret = j2ki_rc_run_with(&tp.plan, NULL, model_size, &calls);
        int64_t got = model_now(&tp, NULL, NULL);
        runs++;
        sizings += calls;
        if (ret < 0 || (uint64_t)got != budget || plain_differs(&tp, &plain_sizings)) {
            bad++;
            fprintf(stderr, "ties: ret %d, got %lld for a budget of %llu\n", ret, (long long)got,
                    (unsigned long long)budget);
        }
    }
    CHECK(runs >= 16 && !bad, "%d of %d budgets inside a tie group missed or chose other passes", bad, runs);
    printf("# ties: %d runs, %.1f sizings per run (%.1f without the search's shortcuts)\n", runs,
           (double)sizings / (runs ? runs : 1), (double)plain_sizings / (runs ? runs : 1));
}

static void test_layers(void)
{
    static const int rich1[4] = { 1, 1, 1, 1 };
    int bad = 0;
    test_seed("layers", 4242);
    for (int it = 0; it < 12; it++) {
        int L = 2 + it % 4;
        make_plan(&tp, 3, 5, 40, L, rich1);
        hull_all(&tp);
        set_all(&tp, 1);
        int64_t full = model_now(&tp, NULL, NULL);
        uint64_t frame = (uint64_t)full * (40 + test_rand() % 50) / 100;
        tp.cp.rc_mode = J2KI_RC_BYTES;
        tp.cp.frame_bytes = frame;
        tp.cp.nb_layer_bytes = (it & 1) ? L : 0;   /* explicit (hard) or derived (targets) */
        for (int l = 0; l < L; l++)
            tp.cp.layer_bytes[l] = (uint64_t)((double)frame / pow(2.0, 0.5 * (L - 1 - l)));
        int ret = j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL);
        uint64_t ll[J2KI_MAX_LAYERS];
        int64_t got = model_now(&tp, NULL, ll);
        if (ret < 0 || (uint64_t)got > frame || (double)got < 0.995 * (double)frame || !layers_monotone(&tp)) {
            bad++;
            fprintf(stderr, "layers %d: ret %d got %lld frame %llu\n", L, ret, (long long)got,
                    (unsigned long long)frame);
            continue;
        }
        if (plain_differs(&tp, NULL)) {
            bad++;
            fprintf(stderr, "layers %d: other passes than the search without its shortcuts\n", L);
        }
        for (int l = 0; l < L; l++) {
            if (ll[l] > tp.cp.layer_bytes[l]) {
                bad++;
                fprintf(stderr, "layers %d: layer %d has %llu bytes over %llu\n", L, l,
                        (unsigned long long)ll[l], (unsigned long long)tp.cp.layer_bytes[l]);
            } else if (l && (double)ll[l - 1] < 0.99 * (double)tp.cp.layer_bytes[l - 1]) {
                bad++;
                fprintf(stderr, "layers %d: layer %d has %llu bytes, far under %llu\n", L, l - 1,
                        (unsigned long long)ll[l - 1], (unsigned long long)tp.cp.layer_bytes[l - 1]);
            }
        }
    }
    CHECK(!bad, "%d layered runs broke a budget, missed it by more than 1%%, or were not monotone", bad);

    /* equal hard budgets: layer 0 leaves room for layer 1's empty packets */
    make_plan(&tp, 1, 3, 30, 2, rich1);
    tp.cp.rc_mode = J2KI_RC_BYTES;
    tp.cp.nb_layer_bytes = 2;
    tp.cp.layer_bytes[0] = tp.cp.layer_bytes[1] = tp.cp.frame_bytes = 5000;
    int ret = j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL);
    uint64_t ll[J2KI_MAX_LAYERS];
    int64_t got = model_now(&tp, NULL, ll);
    CHECK(ret == 0 && ll[0] <= 5000 && got <= 5000 && ll[0] < (uint64_t)got && layers_monotone(&tp),
          "equal layer budgets: ret %d, layers %llu %lld", ret, (unsigned long long)ll[0], (long long)got);

    /* a hard layer-0 budget under the main header */
    tp.cp.layer_bytes[0] = M_MAIN;
    CHECK(j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL) == J2KC_ERR_BUFSIZE,
          "a layer-0 budget under the headers gives BUFSIZE");
}

static void test_comp_caps(void)
{
    static const int rich[4] = { 6, 1, 1, 1 };
    int bad = 0;
    test_seed("comp_bytes", 1041666);
    for (int it = 0; it < 10; it++) {
        make_plan(&tp, 3, 6, 60, 1, rich);
        hull_all(&tp);
        set_all(&tp, 1);
        uint64_t cl_full[J2KC_MAX_COMPS];
        int64_t full = model_now(&tp, cl_full, NULL);
        /* comp 0 is capped well under its full size; the others can absorb the rest */
        uint64_t cap = cl_full[0] / (3 + it % 3);
        uint64_t frame = M_MAIN + 2 + cap + (cl_full[1] + cl_full[2]) * (60 + it * 3) / 100;
        tp.cp.rc_mode = J2KI_RC_BYTES;
        tp.cp.frame_bytes = frame;
        tp.cp.layer_bytes[0] = frame;
        tp.cp.comp_bytes = cap;
        int ret = j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL);
        uint64_t cl[J2KC_MAX_COMPS];
        int64_t got = model_now(&tp, cl, NULL);
        int ok = ret == 0 && (uint64_t)got <= frame && (double)got >= 0.995 * (double)frame;
        for (int c = 0; c < 3; c++)
            ok &= cl[c] <= cap;
        ok &= (double)cl[0] >= 0.99 * (double)cap;
        ok &= !plain_differs(&tp, NULL);
        if (!ok) {
            bad++;
            fprintf(stderr, "comp caps: ret %d total %lld/%llu (full %lld) comps %llu %llu %llu cap %llu\n",
                    ret, (long long)got, (unsigned long long)frame, (long long)full,
                    (unsigned long long)cl[0], (unsigned long long)cl[1], (unsigned long long)cl[2],
                    (unsigned long long)cap);
        }
    }
    CHECK(!bad, "%d runs broke comp_bytes or the frame budget, or missed them", bad);
    tp.cp.comp_bytes = 0;
}

static void test_bufsize_and_determinism(void)
{
    static const int rich1[4] = { 1, 1, 1, 1 };
    test_seed("bufsize", 5);
    make_plan(&tp, 3, 4, 30, 1, rich1);
    set_all(&tp, 0);
    int64_t empty = model_now(&tp, NULL, NULL);
    CHECK(empty == M_MAIN + 2 + 3 * (M_TP + 1), "model: empty codestream is %lld bytes", (long long)empty);
    tp.cp.rc_mode = J2KI_RC_BYTES;
    tp.cp.frame_bytes = tp.cp.layer_bytes[0] = (uint64_t)empty - 1;
    CHECK(j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL) == J2KC_ERR_BUFSIZE,
          "a budget one byte under the headers gives BUFSIZE");
    tp.cp.frame_bytes = tp.cp.layer_bytes[0] = (uint64_t)empty;
    int ret = j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL);
    CHECK(ret == 0 && model_now(&tp, NULL, NULL) == empty, "a budget of exactly the headers: ret %d", ret);
    tp.cp.frame_bytes = tp.cp.layer_bytes[0] = 0;
    tp.cp.comp_bytes = M_TP;
    CHECK(j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL) == J2KC_ERR_BUFSIZE,
          "comp_bytes under a component's empty tile-part gives BUFSIZE");
    tp.cp.comp_bytes = 0;

    test_seed("determinism", 99);
    make_plan(&tp, 3, 6, 80, 3, rich1);
    free(tp2.plan.rc_scratch);
    tp2 = tp;
    tp2.plan.rc_scratch = NULL;   /* its own scratch, not tp's */
    tp2.plan.cp = &tp2.cp;
    tp2.plan.bands = tp2.bands;
    tp2.plan.cblks = tp2.cblks;
    for (uint32_t i = 0; i < tp2.plan.nb_cblks; i++) {
        tp2.cblks[i].passes = tp2.passes[i];
        tp2.cblks[i].layer_passes = tp2.lp[i];
    }
    tp.cp.rc_mode = tp2.cp.rc_mode = J2KI_RC_BYTES;
    tp.cp.frame_bytes = tp2.cp.frame_bytes = 123457;
    tp.cp.layer_bytes[2] = tp2.cp.layer_bytes[2] = 123457;
    tp.cp.layer_bytes[1] = tp2.cp.layer_bytes[1] = 80000;
    tp.cp.layer_bytes[0] = tp2.cp.layer_bytes[0] = 40000;
    int r1 = j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL);
    int r2 = j2ki_rc_run_with(&tp2.plan, NULL, model_size, NULL);
    int r3 = j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL);   /* again on its own output */
    CHECK(r1 == 0 && r2 == 0 && r3 == 0, "runs: %d %d %d", r1, r2, r3);
    CHECK(!memcmp(tp.lp, tp2.lp, sizeof(tp.lp)) && !memcmp(tp.passes, tp2.passes, sizeof(tp.passes)),
          "two runs on the same input decide the same layer_passes and slopes");
}

static void test_slope_none(void)
{
    static const int rich1[4] = { 1, 1, 1, 1 };
    int bad = 0;
    test_seed("slope", 31337);
    make_plan(&tp, 3, 5, 50, 1, rich1);
    tp.cp.rc_mode = J2KI_RC_SLOPE;
    tp.cp.slope = 7.25;
    CHECK(j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL) == 0, "slope run");
    double t = exp2(7.25);
    for (uint32_t i = 0; i < tp.plan.nb_cblks; i++) {
        const J2kiCblk *cb = &tp.cblks[i];
        int want = 0;
        for (int k = 0; k < cb->nb_passes; k++)
            if (cb->passes[k].slope > 0 && cb->passes[k].slope >= t)
                want = k + 1;
        bad += cb->layer_passes[0] != want;
    }
    CHECK(!bad, "%d code-blocks not cut at their last hull vertex with slope >= 2^7.25", bad);

    make_plan(&tp, 2, 4, 30, 1, rich1);
    tp.cp.rc_mode = J2KI_RC_NONE;
    bad = 0;
    CHECK(j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL) == 0, "none run");
    for (uint32_t i = 0; i < tp.plan.nb_cblks; i++)
        bad += tp.cblks[i].layer_passes[0] != tp.cblks[i].nb_passes;
    CHECK(!bad, "RC_NONE: %d code-blocks do not keep every pass", bad);
    CHECK(isinf(j2ki_rc_estimate_psnr(&tp.plan)), "every pass kept: PSNR estimate is infinite");

    make_plan(&tp, 2, 4, 30, 4, rich1);
    tp.cp.rc_mode = J2KI_RC_NONE;
    bad = 0;
    CHECK(j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL) == 0, "none run, 4 layers");
    for (uint32_t i = 0; i < tp.plan.nb_cblks; i++)
        bad += tp.cblks[i].layer_passes[3] != tp.cblks[i].nb_passes;
    uint64_t ll[J2KI_MAX_LAYERS];
    model_now(&tp, NULL, ll);
    CHECK(!bad && layers_monotone(&tp), "RC_NONE, 4 layers: last keeps every pass, layers monotone");
    CHECK(ll[0] < ll[1] && ll[1] < ll[2] && ll[2] < ll[3], "RC_NONE, 4 layers: sizes %llu %llu %llu %llu",
          (unsigned long long)ll[0], (unsigned long long)ll[1], (unsigned long long)ll[2], (unsigned long long)ll[3]);
}

/* Independent PSNR selection: every hull segment of every code-block in one list, by slope
 * (ties: lower code-block index first), included greedily until the double-precision squared
 * error reaches the target. */
typedef struct Seg { double slope; uint32_t cblk; int n; } Seg;

static int seg_cmp(const void *a, const void *b)
{
    const Seg *x = a, *y = b;
    if (x->slope != y->slope)
        return x->slope > y->slope ? -1 : 1;
    if (x->cblk != y->cblk)
        return x->cblk < y->cblk ? -1 : 1;
    return x->n - y->n;
}

static Seg segs[MAX_CBLKS * MAX_P];
static int want_n[MAX_CBLKS];

static double residual_norm(const J2kiPlan *plan, uint32_t i, int n)
{
    const J2kiCblk *cb = &plan->cblks[i];
    const J2kiBand *band = &plan->bands[cb->band_idx];
    double peak = ldexp(1.0, plan->cp->img.depth[band->comp]) - 1, r = 0;
    for (int k = n; k < cb->nb_passes; k++)
        r += cb->passes[k].dist;
    return r * band->dist_weight / (peak * peak);
}

static void test_psnr(void)
{
    static const int rich1[4] = { 1, 1, 1, 1 };
    int bad = 0, close = 0;
    test_seed("psnr", 2718);
    for (int it = 0; it < 8; it++) {
        make_plan(&tp, 3, 4, 40, 1 + it % 2, rich1);
        if (it % 3 == 2)
            clone_bands(&tp);
        hull_all(&tp);
        int nseg = 0;
        double err = 0;
        for (uint32_t i = 0; i < tp.plan.nb_cblks; i++) {
            want_n[i] = 0;
            err += residual_norm(&tp.plan, i, 0);
            for (int k = 0; k < tp.cblks[i].nb_passes; k++)
                if (tp.cblks[i].passes[k].slope > 0)
                    segs[nseg++] = (Seg){ tp.cblks[i].passes[k].slope, i, k + 1 };
        }
        qsort(segs, (size_t)nseg, sizeof(Seg), seg_cmp);
        double target = 30 + it * 4;
        double limit = (double)tp.plan.nb_samples * pow(10.0, -target / 10);
        double margin = INFINITY;
        for (int s = 0; s < nseg && err > limit; s++) {
            uint32_t i = segs[s].cblk;
            err -= residual_norm(&tp.plan, i, want_n[i]) - residual_norm(&tp.plan, i, segs[s].n);
            want_n[i] = segs[s].n;
            margin = fabs(err - limit) / limit;
        }
        tp.cp.rc_mode = J2KI_RC_PSNR;
        tp.cp.psnr = target;
        int ret = j2ki_rc_run_with(&tp.plan, NULL, model_size, NULL);
        double est = j2ki_rc_estimate_psnr(&tp.plan);
        int diff = 0, L = tp.cp.nb_layers;
        for (uint32_t i = 0; i < tp.plan.nb_cblks; i++)
            diff += tp.cblks[i].layer_passes[L - 1] != want_n[i];
        if (ret || est < target - 1e-9 || !layers_monotone(&tp) || (diff && margin > 1e-9)) {
            bad++;
            fprintf(stderr, "psnr %.1f: ret %d estimate %.6f, %d code-blocks differ from greedy\n",
                    target, ret, est, diff);
        }
        close += diff != 0;
    }
    CHECK(!bad, "%d PSNR runs missed the target or differ from the greedy selection", bad);
    printf("# psnr: %d runs decided at a rounding tie\n", close);
}

/* qstep_try's test (rc_core.h): a block's hull bits, the frame's verdict */
static void test_hull_bits(void)
{
    J2kiPass p[4];
    static const double sl[4] = { 5.0, 3.0, 0.0, 1.0 };   /* pass 2 not on the hull */
    memset(p, 0, sizeof(p));
    for (int k = 0; k < 4; k++)
        p[k].slope = sl[k];
    CHECK(j2ki_rc_cblk_hull_bits(p, 4, 4, 1) == 0x2u, "all kept: %#x", j2ki_rc_cblk_hull_bits(p, 4, 4, 1));
    CHECK(j2ki_rc_cblk_hull_bits(p, 4, 3, 1) == 0x20002u, "hull pass 3 left out: %#x",
          j2ki_rc_cblk_hull_bits(p, 4, 3, 1));
    CHECK(j2ki_rc_cblk_hull_bits(p, 3, 2, 2) == 0x4u, "only pass 2 (off the hull) left out: %#x",
          j2ki_rc_cblk_hull_bits(p, 3, 2, 2));
    CHECK(j2ki_rc_cblk_hull_bits(p, 4, 0, 0) == 0x10001u, "nothing kept");
    CHECK(j2ki_rc_cblk_hull_bits(p, 0, 0, 0) == 0, "no passes");
    CHECK(j2ki_rc_mask_fills(0x30003u, 3), "both components with passes cut");
    CHECK(!j2ki_rc_mask_fills(0x10003u, 3), "component 1 kept whole");
    CHECK(j2ki_rc_mask_fills(0x10001u, 3), "components 1, 2 without passes");
    CHECK(!j2ki_rc_mask_fills(0, 3), "no hull at all");
    CHECK(!j2ki_rc_mask_fills(0x7u, 3), "everything kept");
    CHECK(j2ki_rc_mask_fills(0x80008u, 4) && !j2ki_rc_mask_fills(0x80008u, 3), "component 3 counts for 4 only");
}

int main(void)
{
    test_hull_bits();
    test_hull_bruteforce();
    test_bytes();
    test_ties();
    test_layers();
    test_comp_caps();
    test_bufsize_and_determinism();
    test_slope_none();
    test_psnr();
    /* the searches again with several thresholds sized per guided step (rc_core.h,
     * j2ki_rc_multi_round): the same passes as without the shortcuts */
    g_rc_probes = 32;
    test_bytes();
    printf("# rc_probes 32 (j2ki_rc_multi_probes %d)\n", j2ki_rc_multi_probes(&tp.cp));
    test_ties();
    test_layers();
    test_comp_caps();
    g_rc_probes = 3;
    test_bytes();
    printf("# rc_probes 3 (j2ki_rc_multi_probes %d)\n", j2ki_rc_multi_probes(&tp.cp));
    test_ties();
    g_rc_probes = 1;
    free(tp.plan.rc_scratch);
    free(tp2.plan.rc_scratch);
    return test_done("rc");
}
