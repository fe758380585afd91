/*
 * Tier-2 sizing on worker threads (t2_sizer.c) against the serial sizing walk (j2ki_t2_size):
 * random geometries (components, subsampling, tiles with odd origins, levels, code-block and
 * precinct sizes), progression orders and POC lists, tile-part splits, SOP/EPH/PLT, layers,
 * BYPASS/TERMALL pass tables, the per-component accounting of DCI 4K (comp_bytes_res_e), and
 * random code-block states; total, per-component and per-layer sizes must be equal with the
 * calling thread alone and with pools of 2 and 5 threads, also when sized again (the state the
 * sizing leaves behind must not matter); and the empty tile-part of a tile without samples.
 */
#include "test.h"
#include "core/plan.h"
#include "ref/t2_ref.h"
#include "ref/t2_sizer.h"
#include "core/threadpool.h"

static void random_cp(J2kiCodingParams *cp)
{
    memset(cp, 0, sizeof(*cp));
    cp->img.nb_comps = 1 + (int)(test_rand() % 3);
    cp->img.width = 1 + test_rand() % 90;
    cp->img.height = 1 + test_rand() % 90;
    cp->img.x0 = test_rand() % 3 ? 0 : test_rand() % 9;
    cp->img.y0 = test_rand() % 3 ? 0 : test_rand() % 9;
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        cp->img.dx[c] = c < cp->img.nb_comps ? 1 + (int)(test_rand() % 3) * (int)(test_rand() % 2) : 1;
        cp->img.dy[c] = c < cp->img.nb_comps ? 1 + (int)(test_rand() % 3) * (int)(test_rand() % 2) : 1;
        cp->img.depth[c] = 4 + (int)(test_rand() % 13);
    }
    if (test_rand() % 3 == 0) {
        cp->tile_w = 12 + test_rand() % 40;
        cp->tile_h = 12 + test_rand() % 40;
        cp->tile_x0 = cp->img.x0 ? test_rand() % (cp->img.x0 + 1) : 0;
        cp->tile_y0 = cp->img.y0 ? test_rand() % (cp->img.y0 + 1) : 0;
    }
    cp->nb_levels = (int)(test_rand() % 5);
    cp->log2_cblk_w = 2 + (int)(test_rand() % 5);
    cp->log2_cblk_h = 2 + (int)(test_rand() % 5);
    cp->reversible = (int)(test_rand() % 2);
    cp->guard_bits = 1 + (int)(test_rand() % 3);
    cp->bypass_start = 4;
    cp->nb_layers = 1 + (int)(test_rand() % 5);
    cp->order = (int)(test_rand() % 5);
    cp->sop = (int)(test_rand() % 2);
    cp->eph = (int)(test_rand() % 2);
    cp->plt = (int)(test_rand() % 2);
    cp->tlm = (int)(test_rand() % 2);
    cp->cblk_style = (int[]){ 0, 0, J2KI_CBLK_BYPASS, J2KI_CBLK_TERMALL }[test_rand() % 4];
    cp->tp_split = (int[]){ J2KI_TP_NONE, J2KI_TP_RES, J2KI_TP_COMP }[test_rand() % 3];
    cp->comp_bytes_res_e = test_rand() % 3 ? 0 : 1 + (int)(test_rand() % (uint32_t)(cp->nb_levels + 1));
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp->prec_log2_w[r] = cp->prec_log2_h[r] = 15;
    if (test_rand() % 2) {
        cp->user_precincts = 1;
        for (int r = 0; r <= cp->nb_levels; r++) {
            cp->prec_log2_w[r] = (uint8_t)((r ? 1 : 0) + test_rand() % 6);
            cp->prec_log2_h[r] = (uint8_t)((r ? 1 : 0) + test_rand() % 6);
        }
    }
    if (test_rand() % 3 == 0) {
        cp->nb_poc = 2;
        cp->poc[0].res_s = (int)(test_rand() % (uint32_t)(cp->nb_levels + 1));
        cp->poc[0].res_e = cp->poc[0].res_s + 1 + (int)(test_rand() % 2);
        cp->poc[0].comp_s = (int)(test_rand() % (uint32_t)cp->img.nb_comps);
        cp->poc[0].comp_e = cp->poc[0].comp_s + 1;
        cp->poc[0].layer_e = 1 + (int)(test_rand() % (uint32_t)cp->nb_layers);
        cp->poc[0].order = (int)(test_rand() % 5);
        cp->poc[1] = (J2kiPoc){ 0, 0, cp->nb_layers, cp->nb_levels + 1, cp->img.nb_comps, (int)(test_rand() % 5) };
    }
}

/* Tier-1 results and a rate-control selection, at random (rates only: sizing reads no data). */
static void random_states(J2kiPlan *pl)
{
    const J2kiCodingParams *cp = pl->cp;
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        J2kiCblk *cb = &pl->cblks[i];
        int mb = pl->bands[cb->band_idx].nb_mag_bits, maxp, n, prev = 0;
        uint32_t rate = 0;
        cb->numbps = test_rand() % 4 ? (int)(test_rand() % (uint32_t)(mb + 1)) : 0;
        maxp = cb->numbps ? 3 * cb->numbps - 2 : 0;
        n = maxp ? (int)(test_rand() % (uint32_t)(maxp + 1)) : 0;
        cb->nb_passes = n;
        for (int k = 0; k < n; k++) {
            uint32_t room = (cb->data_cap - rate) / (uint32_t)(n - k + 1);
            rate += test_rand() % 8 == 0 ? 0 : test_rand() % (room + 1);
            cb->passes[k].rate = rate;
            cb->passes[k].term = (uint8_t)(k == n - 1 || (cp->cblk_style & J2KI_CBLK_TERMALL) ||
                                           ((cp->cblk_style & J2KI_CBLK_BYPASS) && test_rand() % 3 == 0));
        }
        for (int l = 0; l < cp->nb_layers; l++) {
            int v = prev + (n > prev ? (int)(test_rand() % (uint32_t)(n - prev + 1)) : 0);
            if (test_rand() % 3 == 0)
                v = prev;
            cb->layer_passes[l] = (uint16_t)v;
            prev = v;
        }
    }
}

/*
 * The empty tile-part of a tile without packets counts towards component 0 as resolution 0
 * (t2_ref.h, J2kiT2Tally): one component subsampled by 2 across, tiles 13 wide, the second
 * tile one sample wide at an odd column and so without samples; a POC whose first entry starts
 * at resolution 1, so the first tile's first tile-part is not of resolution 0; only resolution
 * 0 counts per component (comp_bytes_res_e = 1). Its comp_len must be the first tile's alone
 * (the same plan 13 samples wide) plus that tile-part's SOT and SOD, from both sizings, and
 * the total the bytes written.
 */
static void test_empty_tile(void)
{
    uint64_t comp[2][J2KC_MAX_COMPS], comp_sz[J2KC_MAX_COMPS];
    int64_t total = 0, total_sz = 0, written = 0;
    static uint8_t buf[1 << 16];

    for (int k = 0; k < 2; k++) {
        J2kiCodingParams cp;
        J2kiPlan *pl = NULL;
        J2kiT2Sizer *sz = NULL;
        memset(&cp, 0, sizeof(cp));
        cp.img.nb_comps = 1;
        cp.img.width = k ? 14 : 13;
        cp.img.height = 8;
        for (int c = 0; c < J2KC_MAX_COMPS; c++) {
            cp.img.dx[c] = cp.img.dy[c] = 1;
            cp.img.depth[c] = 8;
        }
        cp.img.dx[0] = 2;
        cp.tile_w = 13;
        cp.tile_h = 8;
        cp.nb_levels = 1;
        cp.log2_cblk_w = cp.log2_cblk_h = 2;
        cp.guard_bits = 1;
        cp.bypass_start = 4;
        cp.nb_layers = 1;
        cp.comp_bytes_res_e = 1;
        cp.nb_poc = 2;
        cp.poc[0] = (J2kiPoc){ 1, 0, 1, 2, 1, J2KI_LRCP };
        cp.poc[1] = (J2kiPoc){ 0, 0, 1, 1, 1, J2KI_LRCP };
        for (int r = 0; r < J2KI_MAX_RES; r++)
            cp.prec_log2_w[r] = cp.prec_log2_h[r] = 15;
        CHECK(j2ki_plan_create(&pl, &cp, NULL) == 0, "empty tile: plan %d", k);
        if (!pl)
            return;
        CHECK(pl->nb_tiles == (uint32_t)(k + 1) && (!k || pl->tiles[1].comps[0].w == 0), "empty tile: geometry");
        /* the same code-block states in both plans (the second tile has none) */
        for (uint32_t i = 0; i < pl->nb_cblks; i++) {
            J2kiCblk *cb = &pl->cblks[i];
            cb->numbps = 2;
            cb->nb_passes = 4;
            for (int p = 0; p < 4; p++) {
                cb->passes[p].rate = 3u * (uint32_t)(p + 1) + i;
                cb->passes[p].term = p == 3;
            }
            cb->layer_passes[0] = (uint16_t)(i % 5);
        }
        total = j2ki_t2_size(pl, comp[k], NULL);
        if (k) {
            CHECK(j2ki_t2_sizer_new(&sz, pl) == 0, "empty tile: sizer");
            total_sz = sz ? j2ki_t2_sizer_size(sz, pl, comp_sz, NULL) : -1;
            written = j2ki_codestream_write(pl, buf, sizeof(buf));
        }
        j2ki_t2_sizer_free(&sz);
        j2ki_plan_free(&pl);
    }
    CHECK(comp[1][0] == comp[0][0] + 14, "empty tile: comp_len %llu, first tile's %llu + 14",
          (unsigned long long)comp[1][0], (unsigned long long)comp[0][0]);
    CHECK(total_sz == total && comp_sz[0] == comp[1][0] && written == total,
          "empty tile: sizer %lld / %llu, j2ki_t2_size %lld / %llu, written %lld", (long long)total_sz,
          (unsigned long long)comp_sz[0], (long long)total, (unsigned long long)comp[1][0], (long long)written);
    printf("ok t2_sizer empty tile: %llu bytes for component 0, %lld in all\n", (unsigned long long)comp[1][0],
           (long long)total);
}

int main(void)
{
    J2kiPool *pools[3] = { NULL, j2ki_pool_new(2), j2ki_pool_new(5) };
    int nb_plans = 0, nb_tp_split = 0, nb_res_e = 0;

    test_seed("test_t2_sizer", 0x512e);
    for (int iter = 0; iter < 300; iter++) {
        J2kiCodingParams cp;
        J2kiPlan *pl = NULL;
        J2kiT2Sizer *sz = NULL;
        uint64_t comp0[J2KC_MAX_COMPS], layer0[J2KI_MAX_LAYERS], comp1[J2KC_MAX_COMPS], layer1[J2KI_MAX_LAYERS];
        int64_t n0, n1;

        random_cp(&cp);
        if (j2ki_plan_create(&pl, &cp, NULL) < 0)
            continue;   /* > 255 tile-parts, or a POC this geometry refuses */
        nb_plans++;
        nb_tp_split += cp.tp_split != J2KI_TP_NONE || cp.nb_poc;
        nb_res_e += cp.comp_bytes_res_e != 0;
        CHECK(j2ki_t2_sizer_new(&sz, pl) == 0, "iter %d: sizer", iter);
        for (int round = 0; sz && round < 2; round++) {
            random_states(pl);
            n0 = j2ki_t2_size(pl, comp0, layer0);
            CHECK(n0 > 0, "iter %d: j2ki_t2_size %lld", iter, (long long)n0);
            for (int k = 0; k < 3; k++) {
                j2ki_t2_sizer_set_pool(sz, pools[k]);
                for (int again = 0; again < 2; again++) {
                    memset(comp1, 0xAA, sizeof(comp1));
                    memset(layer1, 0xAA, sizeof(layer1));
                    n1 = j2ki_t2_sizer_size(sz, pl, comp1, layer1);
                    CHECK(n1 == n0, "iter %d pool %d: total %lld vs %lld", iter, k, (long long)n1, (long long)n0);
                    CHECK(!memcmp(comp1, comp0, sizeof(comp0[0]) * (size_t)cp.img.nb_comps),
                          "iter %d pool %d: per-component sizes", iter, k);
                    CHECK(!memcmp(layer1, layer0, sizeof(layer0[0]) * (size_t)cp.nb_layers),
                          "iter %d pool %d: per-layer sizes", iter, k);
                }
            }
        }
        j2ki_t2_sizer_free(&sz);
        j2ki_plan_free(&pl);
    }
    CHECK(nb_plans > 200 && nb_tp_split > 50 && nb_res_e > 30, "coverage: %d plans, %d split, %d res_e", nb_plans,
          nb_tp_split, nb_res_e);
    printf("ok t2_sizer: %d plans (%d with tile-part splits or POC, %d with comp_bytes_res_e)\n", nb_plans,
           nb_tp_split, nb_res_e);
    for (int k = 0; k < 3; k++)
        j2ki_pool_free(&pools[k]);
    test_empty_tile();
    return test_done("test_t2_sizer");
}
