/*
 * Plan geometry (Annex B) against brute force: every coordinate is re-derived from its
 * definition as a set of integer positions (B-7..B-15 are the ceil formulas of those sets),
 * code-blocks must tile each band exactly once, each code-block must lie in exactly the
 * precinct that lists it, and the packet order of RPCL/PCRL/CPRL must equal the literal loop
 * of B.12.1.3-5 over every position of the tile's reference grid. Random sizes, offsets, tile
 * origins, subsampling, levels (with empty resolutions), precincts and code-block sizes.
 */
#include <time.h>

#include "test.h"
#include "core/plan.h"
#include "hd/tgt.h"

static void default_cp(J2kiCodingParams *cp)
{
    memset(cp, 0, sizeof(*cp));
    cp->img.nb_comps = 1;
    cp->img.width = cp->img.height = 16;
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        cp->img.depth[c] = 8;
        cp->img.dx[c] = cp->img.dy[c] = 1;
    }
    cp->nb_layers = 1;
    cp->nb_levels = 2;
    cp->log2_cblk_w = cp->log2_cblk_h = 6;
    cp->reversible = 1;
    cp->guard_bits = 2;
    cp->bypass_start = 4;
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp->prec_log2_w[r] = cp->prec_log2_h[r] = 15;
}

/* smallest / one past the largest integer u with lo <= a*u + b < hi (a > 0), by search */
static void set_range(uint64_t lo, uint64_t hi, uint64_t a, uint64_t b, uint64_t *u0, uint64_t *u1)
{
    uint64_t u = 0;
    while (a * u + b < lo) u++;
    *u0 = u;
    while (a * u + b < hi) u++;
    *u1 = u;
    if (*u1 == *u0) { *u0 = *u1 = 0; }
}

static int brute_count_tiles(const J2kiCodingParams *cp, const J2kiPlan *pl)
{
    /* every reference-grid point of the image is in exactly one tile */
    uint32_t X = cp->img.x0 + cp->img.width, Y = cp->img.y0 + cp->img.height;
    for (uint32_t y = cp->img.y0; y < Y; y++)
        for (uint32_t x = cp->img.x0; x < X; x++) {
            int n = 0;
            for (uint32_t t = 0; t < pl->nb_tiles; t++) {
                const J2kiTile *tl = &pl->tiles[t];
                n += x >= tl->x0 && x < tl->x1 && y >= tl->y0 && y < tl->y1;
            }
            if (n != 1) return 0;
        }
    return 1;
}

/* the literal B.12.1.3-5 loops; returns the number of (c, r, p) visits written to seq */
static int brute_order(const J2kiCodingParams *cp, const J2kiTile *tile, int order, uint32_t *seq, int max)
{
    int n = 0, NL = cp->nb_levels;
    int outer_n = order == J2KI_RPCL ? NL + 1 : order == J2KI_CPRL ? cp->img.nb_comps : 1;
    for (int o = 0; o < outer_n; o++)
        for (uint32_t y = tile->y0; y < tile->y1; y++)
            for (uint32_t x = tile->x0; x < tile->x1; x++) {
                int in_n = order == J2KI_RPCL ? cp->img.nb_comps : order == J2KI_PCRL ? cp->img.nb_comps : NL + 1;
                for (int i = 0; i < in_n; i++) {
                    int mid_n = order == J2KI_PCRL ? NL + 1 : 1;
                    for (int m = 0; m < mid_n; m++) {
                        int r, c;
                        if (order == J2KI_RPCL) { r = o; c = i; }
                        else if (order == J2KI_PCRL) { c = i; r = m; }
                        else { c = o; r = i; }
                        {
                            const J2kiRes *res = &tile->comps[c].res[r];
                            uint64_t sx = (uint64_t)cp->img.dx[c] << (NL - r), sy = (uint64_t)cp->img.dy[c] << (NL - r);
                            int ppx = res->log2_prec_w, ppy = res->log2_prec_h;
                            uint64_t trx0 = res->x0, try0 = res->y0;
                            int cy = (y % (sy << ppy) == 0) || (y == tile->y0 && ((try0 << (NL - r)) % ((uint64_t)1 << (ppy + NL - r))) != 0);
                            int cx = (x % (sx << ppx) == 0) || (x == tile->x0 && ((trx0 << (NL - r)) % ((uint64_t)1 << (ppx + NL - r))) != 0);
                            if (!res->nb_prec_w || !res->nb_prec_h || !cx || !cy)
                                continue;
                            {
                                uint64_t rx = (x + sx - 1) / sx, ry = (y + sy - 1) / sy;
                                uint64_t k = ((rx >> ppx) - (trx0 >> ppx)) + res->nb_prec_w * ((ry >> ppy) - (try0 >> ppy));
                                if (n < max) seq[n] = (uint32_t)c << 28 | (uint32_t)r << 22 | (uint32_t)k;
                                n++;
                            }
                        }
                    }
                }
            }
    return n;
}

static uint32_t seq_a[1 << 16], seq_b[1 << 16];
static uint8_t cover[1 << 16];

static void check_plan(const J2kiCodingParams *cp, const J2kiPlan *pl, int iter)
{
    int ok = 1, NL = cp->nb_levels;
    uint64_t samples = 0;
    uint32_t cblk_seen = 0;
    int maxw = 0, maxh = 0;

    CHECK(brute_count_tiles(cp, pl), "iter %d: tiles do not partition the image", iter);
    for (uint32_t t = 0; t < pl->nb_tiles; t++) {
        const J2kiTile *tile = &pl->tiles[t];
        for (int c = 0; c < cp->img.nb_comps; c++) {
            const J2kiTileComp *tc = &tile->comps[c];
            uint64_t u0, u1, v0, v1;
            set_range(tile->x0, tile->x1, (uint64_t)cp->img.dx[c], 0, &u0, &u1);
            set_range(tile->y0, tile->y1, (uint64_t)cp->img.dy[c], 0, &v0, &v1);
            if (u1 > u0 && v1 > v0 && (tc->x0 != u0 || tc->x1 != u1 || tc->y0 != v0 || tc->y1 != v1)) ok = 0;
            if (tc->w != tc->x1 - tc->x0 || tc->h != tc->y1 - tc->y0) ok = 0;
            if (tc->buf_offset != samples) ok = 0;
            samples += (uint64_t)tc->w * tc->h;
            CHECK(ok, "iter %d tile %u comp %d: tile-component", iter, t, c);
            for (int r = 0; r <= NL; r++) {
                const J2kiRes *res = &tc->res[r];
                uint64_t a = (uint64_t)1 << (NL - r);
                int ppx = res->log2_prec_w, ppy = res->log2_prec_h;
                set_range(tc->x0, tc->x1, a, 0, &u0, &u1);
                set_range(tc->y0, tc->y1, a, 0, &v0, &v1);
                if (tc->w && tc->h && u1 > u0 && v1 > v0 && (res->x0 != u0 || res->x1 != u1 || res->y0 != v0 || res->y1 != v1)) ok = 0;
                CHECK(ok, "iter %d: resolution %d", iter, r);
                /* precinct count: distinct floor(u / 2^PP) over the resolution */
                if (res->x1 > res->x0 && res->y1 > res->y0) {
                    uint32_t nw = 0, nh = 0;
                    for (uint64_t u = res->x0; u < res->x1; u++) if (u == res->x0 || (u >> ppx) != ((u - 1) >> ppx)) nw++;
                    for (uint64_t v = res->y0; v < res->y1; v++) if (v == res->y0 || (v >> ppy) != ((v - 1) >> ppy)) nh++;
                    CHECK(nw == res->nb_prec_w && nh == res->nb_prec_h, "iter %d r %d: precincts %ux%u vs %ux%u", iter, r, res->nb_prec_w, res->nb_prec_h, nw, nh);
                } else {
                    CHECK(res->nb_prec_w * res->nb_prec_h == 0, "iter %d: empty resolution with precincts", iter);
                }
                CHECK(res->log2_cbw == (cp->log2_cblk_w < (r ? ppx - 1 : ppx) ? cp->log2_cblk_w : (r ? ppx - 1 : ppx)), "xcb'");
                for (int k = 0; k < res->nb_bands; k++) {
                    const J2kiBand *band = &pl->bands[res->first_band + k];
                    int orient = r ? k + 1 : 0, nb = r ? NL - r + 1 : NL;
                    uint64_t A = (uint64_t)1 << nb, bx = (orient & 1) ? A / 2 : 0, by = (orient >> 1) ? A / 2 : 0;
                    int cbw = res->log2_cbw, cbh = res->log2_cbh;
                    CHECK(band->orient == orient && band->res == r && band->comp == c && band->level == nb, "band ids");
                    set_range(tc->x0, tc->x1, A, bx, &u0, &u1);
                    set_range(tc->y0, tc->y1, A, by, &v0, &v1);
                    if (u1 > u0 && v1 > v0)
                        CHECK(band->x0 == u0 && band->x1 == u1 && band->y0 == v0 && band->y1 == v1,
                              "iter %d r %d band %d: [%u,%u)x[%u,%u) vs [%llu,%llu)x[%llu,%llu)", iter, r, k,
                              band->x0, band->x1, band->y0, band->y1, (unsigned long long)u0, (unsigned long long)u1,
                              (unsigned long long)v0, (unsigned long long)v1);
                    else
                        CHECK(band->x0 == band->x1 || band->y0 == band->y1, "iter %d: empty band not empty", iter);
                    /* Mallat layout: high-pass parts start after the low-pass part of res r-1,
                     * and low + high widths make the resolution's width */
                    if (r > 0) {
                        const J2kiRes *lo = &tc->res[r - 1];
                        uint32_t lw = lo->x1 - lo->x0, lh = lo->y1 - lo->y0;
                        CHECK(band->buf_x0 == ((orient & 1) ? lw : 0) && band->buf_y0 == ((orient >> 1) ? lh : 0), "buf offset");
                        if (orient == 3)
                            CHECK(lw + (band->x1 - band->x0) == res->x1 - res->x0 && lh + (band->y1 - band->y0) == res->y1 - res->y0,
                                  "iter %d: band sizes do not add up", iter);
                    } else {
                        CHECK(band->buf_x0 == 0 && band->buf_y0 == 0, "LL offset");
                    }
                    CHECK(band->nb_mag_bits > 0, "quant setup");
                    /* code-blocks cover the band once, are aligned on the 2^xcb' grid */
                    {
                        uint32_t bw = band->x1 - band->x0, bh = band->y1 - band->y0;
                        uint32_t ncb = band->nb_cblks_w * band->nb_cblks_h;
                        int covered_ok = 1;
                        if ((uint64_t)bw * bh <= sizeof(cover)) {
                            memset(cover, 0, (size_t)bw * bh);
                            for (uint32_t i = 0; i < ncb; i++) {
                                const J2kiCblk *cb = &pl->cblks[band->first_cblk + i];
                                if (cb->band_idx != res->first_band + (uint32_t)k) covered_ok = 0;
                                if (cb->x0 < band->x0 || cb->x1 > band->x1 || cb->y0 < band->y0 || cb->y1 > band->y1 ||
                                    cb->x1 <= cb->x0 || cb->y1 <= cb->y0) { covered_ok = 0; continue; }
                                if ((cb->x0 >> cbw) != ((cb->x1 - 1) >> cbw) || (cb->y0 >> cbh) != ((cb->y1 - 1) >> cbh)) covered_ok = 0;
                                if (cb->max_passes != (band->nb_mag_bits > 0 ? 3 * band->nb_mag_bits - 2 : 0)) covered_ok = 0;
                                if (cb->data_cap != j2ki_cblk_data_cap((int)(cb->x1 - cb->x0), (int)(cb->y1 - cb->y0), band->nb_mag_bits)) covered_ok = 0;
                                if ((int)(cb->x1 - cb->x0) > maxw) maxw = (int)(cb->x1 - cb->x0);
                                if ((int)(cb->y1 - cb->y0) > maxh) maxh = (int)(cb->y1 - cb->y0);
                                for (uint32_t y = cb->y0; y < cb->y1; y++)
                                    for (uint32_t x = cb->x0; x < cb->x1; x++)
                                        cover[(y - band->y0) * bw + (x - band->x0)]++;
                            }
                            for (uint32_t i = 0; i < bw * bh; i++) if (cover[i] != 1) covered_ok = 0;
                            CHECK(covered_ok, "iter %d r %d band %d: code-blocks do not tile the band", iter, r, k);
                        }
                        cblk_seen += ncb;
                        /* each code-block in exactly one precinct, the one its position says */
                        memset(cover, 0, ncb < sizeof(cover) ? ncb : sizeof(cover));
                        for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++) {
                            const J2kiPrecBand *pb = &res->precs[p].bands[k];
                            uint64_t mx = (res->x0 >> ppx) + p % res->nb_prec_w, my = (res->y0 >> ppy) + p / res->nb_prec_w;
                            int qx = r ? ppx - 1 : ppx, qy = r ? ppy - 1 : ppy;
                            for (uint32_t y = pb->cby0; y < pb->cby1; y++)
                                for (uint32_t x = pb->cbx0; x < pb->cbx1; x++) {
                                    const J2kiCblk *cb;
                                    if (x >= band->nb_cblks_w || y >= band->nb_cblks_h) { covered_ok = 0; continue; }
                                    cb = &pl->cblks[band->first_cblk + y * band->nb_cblks_w + x];
                                    if ((cb->x0 >> qx) != mx || (cb->y0 >> qy) != my) covered_ok = 0;
                                    if (y * band->nb_cblks_w + x < sizeof(cover)) cover[y * band->nb_cblks_w + x]++;
                                }
                            if (pb->cbx1 > pb->cbx0 && (!pb->incl || pb->incl->w != pb->cbx1 - pb->cbx0 || pb->incl->h != pb->cby1 - pb->cby0)) covered_ok = 0;
                        }
                        for (uint32_t i = 0; i < ncb && i < sizeof(cover); i++) if (cover[i] != 1) covered_ok = 0;
                        CHECK(covered_ok, "iter %d r %d band %d: precinct code-block ranges", iter, r, k);
                    }
                }
            }
        }
        /* packet order of the position-driven progressions */
        for (int o = J2KI_RPCL; o <= J2KI_CPRL; o++) {
            const J2kiPrecPos *ord = tile->prec_order[o - J2KI_RPCL];
            int n;
            if (!ord || (uint64_t)(tile->x1 - tile->x0) * (tile->y1 - tile->y0) > 20000) continue;
            n = brute_order(cp, tile, o, seq_a, 1 << 16);
            for (uint32_t i = 0; i < tile->nb_precs && i < (1 << 16); i++)
                seq_b[i] = (uint32_t)ord[i].comp << 28 | (uint32_t)ord[i].res << 22 | ord[i].prec;
            CHECK((uint32_t)n == tile->nb_precs && !memcmp(seq_a, seq_b, sizeof(uint32_t) * (size_t)n),
                  "iter %d tile %u: order %d differs from B.12 (%d vs %u)", iter, t, o, n, tile->nb_precs);
        }
    }
    CHECK(samples == pl->nb_samples, "nb_samples");
    CHECK(cblk_seen == pl->nb_cblks, "nb_cblks %u vs %u", cblk_seen, pl->nb_cblks);
    CHECK(maxw == pl->max_cblk_w && maxh == pl->max_cblk_h, "max cblk size");
    /* the data buffers lie inside the arena, one after another */
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        const J2kiCblk *cb = &pl->cblks[i];
        const uint8_t *a = pl->arena;
        if (cb->data < a || cb->data + cb->data_cap > a + pl->arena_size) { ok = 0; break; }
        if (i + 1 < pl->nb_cblks && cb->data + cb->data_cap != pl->cblks[i + 1].data) { ok = 0; break; }
    }
    CHECK(ok, "iter %d: data buffers", iter);
}

static void test_random(void)
{
    for (int iter = 0; iter < 300; iter++) {
        J2kiCodingParams cp;
        J2kiPlan *pl = NULL;
        int ret;
        default_cp(&cp);
        cp.img.nb_comps = 1 + (int)(test_rand() % 4);
        cp.img.width = 1 + test_rand() % (iter % 5 == 0 ? 4 : 70);
        cp.img.height = 1 + test_rand() % (iter % 7 == 0 ? 4 : 70);
        cp.img.x0 = test_rand() % 2 ? test_rand() % 23 : 0;
        cp.img.y0 = test_rand() % 2 ? test_rand() % 23 : 0;
        for (int c = 0; c < cp.img.nb_comps; c++) {
            cp.img.dx[c] = 1 + (int)(test_rand() % 4);
            cp.img.dy[c] = 1 + (int)(test_rand() % 4);
            cp.img.depth[c] = 1 + (int)(test_rand() % 16);
        }
        if (test_rand() % 3) {
            cp.tile_w = 1 + test_rand() % 40;
            cp.tile_h = 1 + test_rand() % 40;
            cp.tile_x0 = cp.img.x0 - (cp.img.x0 ? test_rand() % (cp.img.x0 < cp.tile_w ? cp.img.x0 + 1 : cp.tile_w) : 0);
            cp.tile_y0 = cp.img.y0 - (cp.img.y0 ? test_rand() % (cp.img.y0 < cp.tile_h ? cp.img.y0 + 1 : cp.tile_h) : 0);
            if (cp.tile_x0 + cp.tile_w <= cp.img.x0) cp.tile_x0 = cp.img.x0;
            if (cp.tile_y0 + cp.tile_h <= cp.img.y0) cp.tile_y0 = cp.img.y0;
        }
        cp.nb_levels = (int)(test_rand() % 7);
        cp.log2_cblk_w = 2 + (int)(test_rand() % 5);
        cp.log2_cblk_h = 2 + (int)(test_rand() % 5);
        cp.reversible = (int)(test_rand() % 2);
        cp.order = (int)(test_rand() % 5);
        if (test_rand() % 3) {
            cp.user_precincts = 1;
            for (int r = 0; r <= cp.nb_levels; r++) {
                cp.prec_log2_w[r] = (uint8_t)((r ? 1 : 0) + test_rand() % 5);
                cp.prec_log2_h[r] = (uint8_t)((r ? 1 : 0) + test_rand() % 5);
            }
        }
        /* all three position orders get built through POC entries covering everything */
        cp.nb_poc = 3;
        for (int i = 0; i < 3; i++) {
            J2kiPoc e = { 0, 0, 1, cp.nb_levels + 1, cp.img.nb_comps, J2KI_RPCL + i };
            cp.poc[i] = e;
        }
        ret = j2ki_plan_create(&pl, &cp, NULL);
        CHECK(ret == 0, "iter %d: plan_create %d", iter, ret);
        if (ret == 0) {
            check_plan(&cp, pl, iter);
            /* the size estimate that refuses huge plans is a true lower bound */
            uint64_t mn = j2ki_plan_min_size(&cp, pl);
            CHECK(mn <= pl->arena_size, "iter %d: size bound %llu > arena %zu", iter,
                  (unsigned long long)mn, pl->arena_size);
        }
        j2ki_plan_free(&pl);
        CHECK(pl == NULL, "free");
    }
    printf("ok plan random geometry\n");
}

static void test_limits(void)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    int ret;

    /* 65535 x 65535 x 4: 17 G samples */
    default_cp(&cp);
    cp.img.nb_comps = 4;
    cp.img.width = cp.img.height = 65535;
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK((ret == J2KC_ERR_UNSUPPORTED || ret == J2KC_ERR_NOMEM) && !pl, "huge image %d", ret);
    /* 65535 x 65535, 2x2 precincts (1x1 code-blocks), 64 layers: about 9 TB of workspace,
     * refused from the size bound before the builder walks its 4 billion code-blocks */
    default_cp(&cp);
    cp.img.width = cp.img.height = 65535;
    cp.img.depth[0] = 16;
    cp.nb_layers = 64;
    cp.nb_levels = 5;
    cp.log2_cblk_w = cp.log2_cblk_h = 2;
    cp.user_precincts = 1;
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp.prec_log2_w[r] = cp.prec_log2_h[r] = 1;
    {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ret = j2ki_plan_create(&pl, &cp, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        CHECK(ret == J2KC_ERR_NOMEM && !pl, "huge layout: %d", ret);
        CHECK(ms < 1000, "huge layout refused after %.0f ms", ms);
        printf("# huge layout refused in %.1f ms\n", ms);
    }
    /* the bound is close for a real layout: 1920x1080x3, 5 levels, 64x64 code-blocks */
    default_cp(&cp);
    cp.img.nb_comps = 3;
    cp.img.width = 1920; cp.img.height = 1080;
    cp.nb_levels = 5;
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == 0, "1080p plan %d", ret);
    if (pl) {
        uint64_t mn = j2ki_plan_min_size(&cp, pl);
        CHECK(mn <= pl->arena_size && mn >= pl->arena_size / 10 * 9, "1080p bound %llu, arena %zu",
              (unsigned long long)mn, pl->arena_size);
        printf("# 1080p size bound %llu of %zu bytes\n", (unsigned long long)mn, pl->arena_size);
    }
    j2ki_plan_free(&pl);
    /* image at the end of the 32-bit grid */
    default_cp(&cp);
    cp.img.x0 = 0xFFFFFFF0u;
    cp.img.width = 0x20;
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == J2KC_ERR_INVAL && !pl, "grid overflow %d", ret);
    /* too many tiles */
    default_cp(&cp);
    cp.img.width = cp.img.height = 1000;
    cp.tile_w = cp.tile_h = 3;
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == J2KC_ERR_INVAL && !pl, "tiles %d", ret);
    /* tile origin after the image origin */
    default_cp(&cp);
    cp.img.x0 = 5;
    cp.tile_x0 = 6;
    cp.tile_w = 8;
    CHECK(j2ki_plan_create(&pl, &cp, NULL) == J2KC_ERR_INVAL, "tile origin");
    /* POC leaving packets out */
    default_cp(&cp);
    cp.nb_poc = 1;
    cp.poc[0] = (J2kiPoc){ 0, 0, 1, 2, 1, J2KI_LRCP };
    CHECK(j2ki_plan_create(&pl, &cp, NULL) == J2KC_ERR_INVAL && !pl, "POC coverage");
    /* more than 255 tile-parts */
    default_cp(&cp);
    cp.img.nb_comps = 3;
    cp.nb_layers = 64;
    cp.order = J2KI_LRCP;
    cp.tp_split = J2KI_TP_COMP;
    CHECK(j2ki_plan_create(&pl, &cp, NULL) == J2KC_ERR_UNSUPPORTED && !pl, "tile-parts");
    /* 1x1 image, 5 levels, code-blocks larger than every band */
    default_cp(&cp);
    cp.img.width = cp.img.height = 1;
    cp.img.x0 = 3; cp.img.y0 = 7;
    cp.nb_levels = 5;
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == 0 && pl && pl->nb_cblks == 1 && pl->nb_samples == 1, "1x1 %d", ret);
    if (pl) check_plan(&cp, pl, -1);
    j2ki_plan_free(&pl);
    /* 32 levels on a small image with an offset: most resolutions and bands are empty */
    default_cp(&cp);
    cp.img.width = 37; cp.img.height = 5; cp.img.x0 = 1000; cp.img.y0 = 77;
    cp.nb_levels = 32;
    cp.order = J2KI_RPCL;
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == 0, "32 levels %d", ret);
    if (pl) check_plan(&cp, pl, -2);
    j2ki_plan_free(&pl);
    printf("ok plan limits\n");
}

static void test_profiles(void)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    int ret;

    /* DCI 2K: CPRL, one tile-part per component */
    default_cp(&cp);
    cp.img.nb_comps = 3;
    cp.img.width = 2048; cp.img.height = 1080;
    for (int c = 0; c < 3; c++) cp.img.depth[c] = 12;
    cp.nb_levels = 5; cp.log2_cblk_w = cp.log2_cblk_h = 5; cp.reversible = 0; cp.mct = 1;
    cp.order = J2KI_CPRL; cp.tp_split = J2KI_TP_COMP; cp.user_precincts = 1;
    for (int r = 0; r <= 6; r++) cp.prec_log2_w[r] = cp.prec_log2_h[r] = r ? 8 : 7;
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == 0 && pl->nb_tile_parts == 3, "DCI 2K tile-parts");
    if (!ret) {
        /* 32x32 blocks: 2048x1080 has 64 x 34 in the full image -> bands total */
        CHECK(pl->tiles[0].comps[0].res[0].log2_cbw == 5 && pl->tiles[0].comps[0].res[5].nb_prec_w == 8 && pl->tiles[0].comps[0].res[0].nb_prec_w == 1, "DCI 2K precincts");
    }
    j2ki_plan_free(&pl);
    /* DCI 4K: CPRL with the two-entry POC -> 6 tile-parts */
    cp.img.width = 4096; cp.img.height = 2160; cp.nb_levels = 6;
    cp.nb_poc = 2;
    cp.poc[0] = (J2kiPoc){ 0, 0, 1, 6, 3, J2KI_CPRL };
    cp.poc[1] = (J2kiPoc){ 6, 0, 1, 7, 3, J2KI_CPRL };
    ret = j2ki_plan_create(&pl, &cp, NULL);
    CHECK(ret == 0 && pl->nb_tile_parts == 6, "DCI 4K tile-parts %d %u", ret, pl ? pl->nb_tile_parts : 0);
    j2ki_plan_free(&pl);
    printf("ok plan profiles\n");
}

int main(void)
{
    test_seed("test_plan", 0x706c616eu);
    test_limits();
    test_profiles();
    test_random();
    return test_done("test_plan");
}
