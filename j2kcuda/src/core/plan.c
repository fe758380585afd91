/*
 * Geometry planning, ISO/IEC 15444-1 Annex B: tiles (B.3), tile-components (B-12),
 * resolutions (B-14), sub-bands (B-15), precincts (B.6) and code-blocks (B.7), plus the packet
 * order of the position-driven progressions (B.12.1.3-5) and the tile-part count (t2_ref.c).
 *
 * Memory: the builder runs twice over the same code. The first run (dry) only counts: bands,
 * code-blocks, and the bytes of every piece; then one arena is allocated (metadata first, the
 * code-blocks' data buffers after it) and the second run fills it. Nothing else is allocated.
 * All size arithmetic is 64-bit and checked against limits before anything is allocated.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/sysinfo.h>
#endif

#include "core/plan.h"
#include "hd/quant.h"
#include "core/backend.h"
#include "hd/tgt.h"

/* Largest frame we plan: 2^32 samples over all tile-components (a 65535 x 65535 x 4 image,
 * 17 G samples, is refused with J2KC_ERR_UNSUPPORTED instead of overflowing buffers). */
#define PLAN_MAX_SAMPLES ((uint64_t)1 << 32)
/* Isot is 16 bits and 65535 is reserved (A.4.2). */
#define PLAN_MAX_TILES   65535u

typedef struct Builder {
    const J2kiCodingParams *cp;
    J2kiPlan *pl;
    int       dry;               /* 1: count only */
    uint8_t  *meta;              /* arena start (second run) */
    uint64_t  meta_pos;
    uint64_t  data_pos;          /* bytes of code-block data so far (placed after the metadata) */
    uint64_t  meta_size;         /* second run: where data starts */
    uint64_t  nb_bands, nb_cblks;
    int       order_used[3];     /* RPCL, PCRL, CPRL */
} Builder;

static void *carve(Builder *b, uint64_t n)
{
    void *p = b->dry ? NULL : b->meta + b->meta_pos;
    b->meta_pos += (n + 7) & ~(uint64_t)7;
    return p;
}

static uint8_t *carve_data(Builder *b, uint64_t n)
{
    uint8_t *p = b->dry ? NULL : b->meta + b->meta_size + b->data_pos;
    b->data_pos += n;
    return p;
}

/* ceil(a / 2^n) for a >= 0 in 64 bits, n <= 63 */
static uint64_t cdiv2(uint64_t a, int n)
{
    return (a + (((uint64_t)1 << n) - 1)) >> n;
}

/* Band coordinate of B-15: ceil((tc - 2^(nb-1) * o) / 2^nb), never negative. */
static uint32_t band_coord(uint32_t tc, int nb, int o)
{
    uint64_t off = (o && nb > 0) ? (uint64_t)1 << (nb - 1) : 0;
    if (tc < off)
        return 0;
    return (uint32_t)cdiv2(tc - off, nb);
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

/* B.12.1.3: r, y, x, c */
static int cmp_rpcl(const void *pa, const void *pb)
{
    const J2kiPrecPos *a = pa, *b = pb;
    int d;
    if ((d = (int)a->res - (int)b->res)) return d;
    if ((d = cmp_u64(a->y, b->y))) return d;
    if ((d = cmp_u64(a->x, b->x))) return d;
    return (int)a->comp - (int)b->comp;
}

/* B.12.1.4: y, x, c, r */
static int cmp_pcrl(const void *pa, const void *pb)
{
    const J2kiPrecPos *a = pa, *b = pb;
    int d;
    if ((d = cmp_u64(a->y, b->y))) return d;
    if ((d = cmp_u64(a->x, b->x))) return d;
    if ((d = (int)a->comp - (int)b->comp)) return d;
    return (int)a->res - (int)b->res;
}

/* B.12.1.5: c, y, x, r */
static int cmp_cprl(const void *pa, const void *pb)
{
    const J2kiPrecPos *a = pa, *b = pb;
    int d;
    if ((d = (int)a->comp - (int)b->comp)) return d;
    if ((d = cmp_u64(a->y, b->y))) return d;
    if ((d = cmp_u64(a->x, b->x))) return d;
    return (int)a->res - (int)b->res;
}

/*
 * Where the loop "for y in [ty0, ty1), for x in [tx0, tx1)" of B.12.1.3 reaches precinct
 * column i of a resolution: at x a multiple of XRsiz * 2^(PPx + NL - r), which is the precinct's
 * own start (m * 2^PPx in resolution coordinates, m = floor(trx0 / 2^PPx) + i) scaled to the
 * reference grid, or at x = tx0 for the first column when trx0 is not a multiple of 2^PPx.
 */
static uint64_t prec_grid_pos(uint32_t t0, uint32_t r0, int log2_prec, int sub, int shift, uint32_t i)
{
    uint64_t m = ((uint64_t)r0 >> log2_prec) + i;
    if (i == 0 && (r0 & (((uint32_t)1 << log2_prec) - 1)))
        return t0;
    return ((uint64_t)sub << shift) * (m << log2_prec);
}

/* Resolution r of a tile-component: B-14, its precinct partition (B.6) and the code-block
 * size inside it (B-17, B-18). Shared by the builder and j2ki_plan_min_size. */
static void res_geometry(const J2kiCodingParams *cp, const J2kiTileComp *tc, int r, J2kiRes *res)
{
    int shift = cp->nb_levels - r;

    res->r = r;
    res->x0 = (uint32_t)cdiv2(tc->x0, shift);
    res->y0 = (uint32_t)cdiv2(tc->y0, shift);
    res->x1 = (uint32_t)cdiv2(tc->x1, shift);
    res->y1 = (uint32_t)cdiv2(tc->y1, shift);
    res->log2_prec_w = cp->user_precincts ? cp->prec_log2_w[r] : 15;
    res->log2_prec_h = cp->user_precincts ? cp->prec_log2_h[r] : 15;
    /* B-17, B-18: a code-block never straddles a precinct */
    res->log2_cbw = j2ki_imin(cp->log2_cblk_w, r ? res->log2_prec_w - 1 : res->log2_prec_w);
    res->log2_cbh = j2ki_imin(cp->log2_cblk_h, r ? res->log2_prec_h - 1 : res->log2_prec_h);
    if (res->x1 > res->x0 && res->y1 > res->y0) {
        res->nb_prec_w = (uint32_t)(cdiv2(res->x1, res->log2_prec_w) - (res->x0 >> res->log2_prec_w));
        res->nb_prec_h = (uint32_t)(cdiv2(res->y1, res->log2_prec_h) - (res->y0 >> res->log2_prec_h));
    } else {
        res->nb_prec_w = res->nb_prec_h = 0;
    }
    res->nb_bands = r ? 3 : 1;
}

static void build_res(Builder *b, J2kiTile *tile, J2kiTileComp *tc, int r, J2kiBand *bands_out)
{
    const J2kiCodingParams *cp = b->cp;
    J2kiPlan *pl = b->pl;
    int nl = cp->nb_levels;
    J2kiRes *res = &tc->res[r];
    int depth = cp->img.depth[tc->comp];

    res_geometry(cp, tc, r, res);
    res->first_band = (uint32_t)b->nb_bands;

    /* sub-bands (B-15) and their code-blocks (B.7) */
    for (int k = 0; k < res->nb_bands; k++) {
        J2kiBand tmp, *band = b->dry ? &tmp : &bands_out[b->nb_bands];
        int orient = r ? k + 1 : 0;
        int xo = orient & 1, yo = orient >> 1;
        int nb = r ? nl - r + 1 : nl;
        int cbw = res->log2_cbw, cbh = res->log2_cbh;

        memset(band, 0, sizeof(*band));
        band->orient = orient;
        band->level = nb;
        band->res = r;
        band->comp = tc->comp;
        band->tile = tile->index;
        band->x0 = band_coord(tc->x0, nb, xo);
        band->x1 = band_coord(tc->x1, nb, xo);
        band->y0 = band_coord(tc->y0, nb, yo);
        band->y1 = band_coord(tc->y1, nb, yo);
        /* Mallat layout (dwt.h): high-pass halves follow the low-pass ones of resolution r-1 */
        band->buf_x0 = xo ? tc->res[r - 1].x1 - tc->res[r - 1].x0 : 0;
        band->buf_y0 = yo ? tc->res[r - 1].y1 - tc->res[r - 1].y0 : 0;
        j2ki_quant_band_setup(band, cp, depth);
        if (band->x1 > band->x0 && band->y1 > band->y0) {
            band->nb_cblks_w = (uint32_t)(cdiv2(band->x1, cbw) - (band->x0 >> cbw));
            band->nb_cblks_h = (uint32_t)(cdiv2(band->y1, cbh) - (band->y0 >> cbh));
        }
        band->first_cblk = (uint32_t)b->nb_cblks;
        for (uint32_t j = 0; j < band->nb_cblks_h; j++) {
            for (uint32_t i = 0; i < band->nb_cblks_w; i++) {
                uint64_t gx = ((uint64_t)(band->x0 >> cbw) + i) << cbw;
                uint64_t gy = ((uint64_t)(band->y0 >> cbh) + j) << cbh;
                uint32_t x0 = (uint32_t)(gx > band->x0 ? gx : band->x0);
                uint32_t y0 = (uint32_t)(gy > band->y0 ? gy : band->y0);
                uint32_t x1 = (uint32_t)(gx + ((uint64_t)1 << cbw) < band->x1 ? gx + ((uint64_t)1 << cbw) : band->x1);
                uint32_t y1 = (uint32_t)(gy + ((uint64_t)1 << cbh) < band->y1 ? gy + ((uint64_t)1 << cbh) : band->y1);
                int mp = j2ki_max_passes(band->nb_mag_bits);
                uint32_t cap = j2ki_cblk_data_cap((int)(x1 - x0), (int)(y1 - y0), band->nb_mag_bits);
                if ((cp->cblk_style & J2KI_CBLK_HT) &&
                    j2ki_cblk_data_cap_ht((int)(x1 - x0), (int)(y1 - y0), band->nb_mag_bits) > cap)
                    cap = j2ki_cblk_data_cap_ht((int)(x1 - x0), (int)(y1 - y0), band->nb_mag_bits);
                J2kiPass *passes = carve(b, (uint64_t)mp * sizeof(J2kiPass));
                uint16_t *lp = carve(b, (uint64_t)cp->nb_layers * sizeof(uint16_t));
                uint8_t *data = carve_data(b, cap);
                if (!b->dry) {
                    J2kiCblk *cb = &pl->cblks[b->nb_cblks];
                    cb->x0 = x0; cb->y0 = y0; cb->x1 = x1; cb->y1 = y1;
                    cb->band_idx = (uint32_t)b->nb_bands;
                    cb->data = data;
                    cb->data_cap = cap;
                    cb->passes = passes;
                    cb->max_passes = mp;
                    cb->layer_passes = lp;
                    cb->lblock = 3;
                    if ((int)(x1 - x0) > pl->max_cblk_w) pl->max_cblk_w = (int)(x1 - x0);
                    if ((int)(y1 - y0) > pl->max_cblk_h) pl->max_cblk_h = (int)(y1 - y0);
                }
                b->nb_cblks++;
            }
        }
        b->nb_bands++;
    }

    /* precincts (B.6) and each one's code-blocks in every band (B.7) */
    {
        uint64_t nb_precs = (uint64_t)res->nb_prec_w * res->nb_prec_h;
        int ppx = res->log2_prec_w, ppy = res->log2_prec_h;
        J2kiPrec *precs = carve(b, nb_precs * sizeof(J2kiPrec));
        res->precs = precs;
        tile->nb_precs += (uint32_t)nb_precs;
        for (uint32_t j = 0; j < res->nb_prec_h; j++) {
            for (uint32_t i = 0; i < res->nb_prec_w; i++) {
                uint64_t mx = ((uint64_t)(res->x0 >> ppx) + i), my = ((uint64_t)(res->y0 >> ppy) + j);
                J2kiPrec tmp, *prec = b->dry ? &tmp : &precs[j * res->nb_prec_w + i];
                memset(prec, 0, sizeof(*prec));
                prec->x0 = (uint32_t)((mx << ppx) > res->x0 ? (mx << ppx) : res->x0);
                prec->y0 = (uint32_t)((my << ppy) > res->y0 ? (my << ppy) : res->y0);
                prec->x1 = (uint32_t)(((mx + 1) << ppx) < res->x1 ? ((mx + 1) << ppx) : res->x1);
                prec->y1 = (uint32_t)(((my + 1) << ppy) < res->y1 ? ((my + 1) << ppy) : res->y1);
                prec->nb_bands = res->nb_bands;
                for (int k = 0; k < res->nb_bands; k++) {
                    J2kiPrecBand *pb = &prec->bands[k];
                    const J2kiBand *band;
                    J2kiBand bt;
                    /* the precinct partition induced in a band of r > 0 has half the size (B.6) */
                    int qx = r ? ppx - 1 : ppx, qy = r ? ppy - 1 : ppy;
                    int cbw = res->log2_cbw, cbh = res->log2_cbh;
                    uint64_t sx = mx << qx, sy = my << qy;
                    uint64_t ex = sx + ((uint64_t)1 << qx), ey = sy + ((uint64_t)1 << qy);
                    uint64_t bx0, by0, bx1, by1;
                    if (b->dry) {
                        int orient = r ? k + 1 : 0, nb = r ? nl - r + 1 : nl;
                        bt.x0 = band_coord(tc->x0, nb, orient & 1);
                        bt.x1 = band_coord(tc->x1, nb, orient & 1);
                        bt.y0 = band_coord(tc->y0, nb, orient >> 1);
                        bt.y1 = band_coord(tc->y1, nb, orient >> 1);
                        band = &bt;
                    } else {
                        band = &bands_out[res->first_band + k];
                    }
                    bx0 = sx > band->x0 ? sx : band->x0;
                    by0 = sy > band->y0 ? sy : band->y0;
                    bx1 = ex < band->x1 ? ex : band->x1;
                    by1 = ey < band->y1 ? ey : band->y1;
                    if (bx1 > bx0 && by1 > by0) {
                        pb->cbx0 = (uint32_t)((bx0 >> cbw) - (band->x0 >> cbw));
                        pb->cby0 = (uint32_t)((by0 >> cbh) - (band->y0 >> cbh));
                        pb->cbx1 = (uint32_t)(cdiv2(bx1, cbw) - (band->x0 >> cbw));
                        pb->cby1 = (uint32_t)(cdiv2(by1, cbh) - (band->y0 >> cbh));
                    }
                    {
                        uint32_t tw = pb->cbx1 - pb->cbx0, th = pb->cby1 - pb->cby0;
                        void *m1 = carve(b, j2ki_tgt_mem_size(tw, th));
                        void *m2 = carve(b, j2ki_tgt_mem_size(tw, th));
                        if (!b->dry) {
                            pb->incl = j2ki_tgt_init(m1, tw, th);
                            pb->zbp = j2ki_tgt_init(m2, tw, th);
                        }
                    }
                }
            }
        }
    }
}

static void build_prec_order(Builder *b, J2kiTile *tile)
{
    const J2kiCodingParams *cp = b->cp;
    static int (*const cmp[3])(const void *, const void *) = { cmp_rpcl, cmp_pcrl, cmp_cprl };

    for (int o = 0; o < 3; o++) {
        J2kiPrecPos *arr;
        uint32_t n = 0;
        if (!b->order_used[o])
            continue;
        arr = carve(b, (uint64_t)tile->nb_precs * sizeof(J2kiPrecPos));
        tile->prec_order[o] = arr;
        if (b->dry)
            continue;
        for (int c = 0; c < cp->img.nb_comps; c++) {
            const J2kiTileComp *tc = &tile->comps[c];
            for (int r = 0; r < tc->nb_res; r++) {
                const J2kiRes *res = &tc->res[r];
                int shift = cp->nb_levels - r;
                for (uint32_t j = 0; j < res->nb_prec_h; j++) {
                    uint64_t y = prec_grid_pos(tile->y0, res->y0, res->log2_prec_h, cp->img.dy[c], shift, j);
                    for (uint32_t i = 0; i < res->nb_prec_w; i++) {
                        J2kiPrecPos *e = &arr[n++];
                        e->y = y;
                        e->x = prec_grid_pos(tile->x0, res->x0, res->log2_prec_w, cp->img.dx[c], shift, i);
                        e->prec = j * res->nb_prec_w + i;
                        e->comp = (uint8_t)c;
                        e->res = (uint8_t)r;
                    }
                }
            }
        }
        qsort(arr, n, sizeof(*arr), cmp[o]);
    }
}

/* One run of the builder over every tile (dry: count; else fill). */
static void build(Builder *b)
{
    const J2kiCodingParams *cp = b->cp;
    J2kiPlan *pl = b->pl;
    J2kiBand *bands = NULL;
    uint64_t samples = 0;
    uint32_t xsiz = cp->img.x0 + cp->img.width, ysiz = cp->img.y0 + cp->img.height;

    b->meta_pos = b->data_pos = 0;
    b->nb_bands = b->nb_cblks = 0;
    if (!b->dry) {
        pl->tiles = carve(b, (uint64_t)pl->nb_tiles * sizeof(J2kiTile));
        pl->bands = bands = carve(b, (uint64_t)pl->nb_bands * sizeof(J2kiBand));
        pl->cblks = carve(b, (uint64_t)pl->nb_cblks * sizeof(J2kiCblk));
    } else {
        carve(b, (uint64_t)pl->nb_tiles * sizeof(J2kiTile));
    }
    for (uint32_t t = 0; t < pl->nb_tiles; t++) {
        J2kiTile tmp, *tile = b->dry ? &tmp : &pl->tiles[t];
        uint32_t p = t % pl->nb_tiles_w, q = t / pl->nb_tiles_w;
        uint64_t tx0 = (uint64_t)cp->tile_x0 + (uint64_t)p * pl->tile_w;
        uint64_t ty0 = (uint64_t)cp->tile_y0 + (uint64_t)q * pl->tile_h;
        uint64_t tx1 = tx0 + pl->tile_w, ty1 = ty0 + pl->tile_h;

        memset(tile, 0, sizeof(*tile));
        tile->index = (int)t;
        /* B-7..B-10 */
        tile->x0 = (uint32_t)(tx0 > cp->img.x0 ? tx0 : cp->img.x0);
        tile->y0 = (uint32_t)(ty0 > cp->img.y0 ? ty0 : cp->img.y0);
        tile->x1 = (uint32_t)(tx1 < xsiz ? tx1 : xsiz);
        tile->y1 = (uint32_t)(ty1 < ysiz ? ty1 : ysiz);
        for (int c = 0; c < cp->img.nb_comps; c++) {
            J2kiTileComp *tc = &tile->comps[c];
            /* B-12 */
            tc->comp = c;
            tc->x0 = j2ki_ceil_div(tile->x0, (uint32_t)cp->img.dx[c]);
            tc->y0 = j2ki_ceil_div(tile->y0, (uint32_t)cp->img.dy[c]);
            tc->x1 = j2ki_ceil_div(tile->x1, (uint32_t)cp->img.dx[c]);
            tc->y1 = j2ki_ceil_div(tile->y1, (uint32_t)cp->img.dy[c]);
            tc->w = tc->x1 - tc->x0;
            tc->h = tc->y1 - tc->y0;
            tc->nb_res = cp->nb_levels + 1;
            tc->buf_offset = (size_t)samples;
            samples += (uint64_t)tc->w * tc->h;
            for (int r = 0; r < tc->nb_res; r++)
                build_res(b, tile, tc, r, bands);
        }
        build_prec_order(b, tile);
    }
    pl->nb_samples = (size_t)samples;
}

/* Tile t's area on the reference grid (B-7..B-10). */
static void tile_rect(const J2kiCodingParams *cp, const J2kiPlan *pl, uint32_t t, uint32_t r[4])
{
    uint32_t xsiz = cp->img.x0 + cp->img.width, ysiz = cp->img.y0 + cp->img.height;
    uint64_t tx0 = (uint64_t)cp->tile_x0 + (uint64_t)(t % pl->nb_tiles_w) * pl->tile_w;
    uint64_t ty0 = (uint64_t)cp->tile_y0 + (uint64_t)(t / pl->nb_tiles_w) * pl->tile_h;
    uint64_t tx1 = tx0 + pl->tile_w < xsiz ? tx0 + pl->tile_w : xsiz;
    uint64_t ty1 = ty0 + pl->tile_h < ysiz ? ty0 + pl->tile_h : ysiz;
    r[0] = (uint32_t)(tx0 > cp->img.x0 ? tx0 : cp->img.x0);
    r[1] = (uint32_t)(ty0 > cp->img.y0 ? ty0 : cp->img.y0);
    r[2] = (uint32_t)tx1;
    r[3] = (uint32_t)ty1;
}

/*
 * A lower bound of the workspace the builder will ask for, in closed form per sub-band: every
 * code-block's J2kiCblk, pass and layer tables and data buffer (j2ki_cblk_data_cap summed over
 * a band is at least area * (M_b + 1) / 4 - 1 per code-block, plus the per-block constant),
 * every precinct's J2kiPrec and every band's J2kiBand. Tag trees and packet-order tables are
 * left out, so the bound never exceeds the true size. It costs O(tiles x components x
 * resolutions), where the builder's dry run walks every code-block and precinct: a plan of
 * billions of 1x1 code-blocks is refused in milliseconds instead of minutes.
 */
uint64_t j2ki_plan_min_size(const J2kiCodingParams *cp, const J2kiPlan *pl)
{
    int nl = cp->nb_levels, nb_comps = cp->img.nb_comps;
    /* per component and band (they do not depend on the tile): magnitude bits and the bytes
     * a code-block takes besides the area-proportional part of its data buffer */
    int mag_bits[J2KC_MAX_COMPS][J2KI_MAX_BANDS];
    uint64_t per_cblk[J2KC_MAX_COMPS][J2KI_MAX_BANDS];
    for (int c = 0; c < nb_comps; c++) {
        for (int i = 0; i < 1 + 3 * nl; i++) {
            J2kiBand band;
            memset(&band, 0, sizeof(band));
            band.orient = i ? (i - 1) % 3 + 1 : 0;
            band.level = i ? nl - (i - 1) / 3 : nl;
            band.res = i ? (i - 1) / 3 + 1 : 0;
            band.comp = c;
            j2ki_quant_band_setup(&band, cp, cp->img.depth[c]);
            int bits = band.nb_mag_bits;
            mag_bits[c][i] = bits;
            per_cblk[c][i] = sizeof(J2kiCblk) +
                             (((uint64_t)j2ki_max_passes(bits) * sizeof(J2kiPass) + 7) & ~(uint64_t)7) +
                             (((uint64_t)cp->nb_layers * sizeof(uint16_t) + 7) & ~(uint64_t)7) +
                             15u * (uint64_t)bits + 64u - 1u;
        }
    }
    uint64_t total = (uint64_t)pl->nb_tiles * sizeof(J2kiTile);
    for (uint32_t t = 0; t < pl->nb_tiles; t++) {
        uint32_t rect[4];
        tile_rect(cp, pl, t, rect);
        for (int c = 0; c < nb_comps; c++) {
            J2kiTileComp tc;
            tc.comp = c;
            tc.x0 = j2ki_ceil_div(rect[0], (uint32_t)cp->img.dx[c]);
            tc.y0 = j2ki_ceil_div(rect[1], (uint32_t)cp->img.dy[c]);
            tc.x1 = j2ki_ceil_div(rect[2], (uint32_t)cp->img.dx[c]);
            tc.y1 = j2ki_ceil_div(rect[3], (uint32_t)cp->img.dy[c]);
            for (int r = 0; r <= nl; r++) {
                J2kiRes res;
                res_geometry(cp, &tc, r, &res);
                total += (uint64_t)res.nb_prec_w * res.nb_prec_h * sizeof(J2kiPrec);
                for (int k = 0; k < res.nb_bands; k++) {
                    int orient = r ? k + 1 : 0, nb = r ? nl - r + 1 : nl, i = r ? 3 * (r - 1) + 1 + k : 0;
                    uint64_t x0 = band_coord(tc.x0, nb, orient & 1), x1 = band_coord(tc.x1, nb, orient & 1);
                    uint64_t y0 = band_coord(tc.y0, nb, orient >> 1), y1 = band_coord(tc.y1, nb, orient >> 1);
                    total += sizeof(J2kiBand);
                    if (x1 <= x0 || y1 <= y0)
                        continue;
                    uint64_t n = (cdiv2(x1, res.log2_cbw) - (x0 >> res.log2_cbw)) *
                                 (cdiv2(y1, res.log2_cbh) - (y0 >> res.log2_cbh));
                    total += n * per_cblk[c][i] + (x1 - x0) * (y1 - y0) * (uint64_t)(mag_bits[c][i] + 1) / 4;
                }
            }
        }
    }
    return total;
}

/* Most workspace memory planned, whatever the host has: 2^40 bytes (1 TiB) holds the plan of
 * the largest frame (2^32 samples) many times over, so only an absurd layout (billions of
 * tiny code-blocks or precincts) reaches it. */
#define PLAN_MAX_WORKSPACE ((uint64_t)1 << 40)

/* The workspace limit on this host: PLAN_MAX_WORKSPACE, or less where the host's memory (RAM
 * and swap) is known, since the arena is one calloc whose metadata the builder writes in full:
 * a larger one either fails (Linux refuses an allocation above RAM + swap unless overcommit is
 * forced) or is killed for memory while being filled. */
static uint64_t plan_workspace_limit(void)
{
    uint64_t lim = PLAN_MAX_WORKSPACE;
#ifdef __linux__
    struct sysinfo si;
    if (!sysinfo(&si) && si.mem_unit) {
        uint64_t host = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
        if (host && host < lim)
            lim = host;
    }
#endif
    return lim;
}

static int check_params(const J2kiCodingParams *cp, const J2kiLog *log)
{
    const J2kcImageDesc *img = &cp->img;
    if (img->nb_comps < 1 || img->nb_comps > J2KC_MAX_COMPS || !img->width || !img->height ||
        (uint64_t)img->x0 + img->width > UINT32_MAX || (uint64_t)img->y0 + img->height > UINT32_MAX) {
        j2ki_log(log, J2KC_LOG_ERROR, "plan: invalid image size or component count");
        return J2KC_ERR_INVAL;
    }
    for (int c = 0; c < img->nb_comps; c++) {
        if (img->dx[c] < 1 || img->dx[c] > 255 || img->dy[c] < 1 || img->dy[c] > 255 ||
            img->depth[c] < 1 || img->depth[c] > 38) {
            j2ki_log(log, J2KC_LOG_ERROR, "plan: component %d: invalid depth or subsampling", c);
            return J2KC_ERR_INVAL;
        }
    }
    if (cp->nb_levels < 0 || cp->nb_levels > J2KI_MAX_LEVELS || cp->nb_layers < 1 ||
        cp->nb_layers > J2KI_MAX_LAYERS || cp->log2_cblk_w < 2 || cp->log2_cblk_h < 2 ||
        cp->log2_cblk_w + cp->log2_cblk_h > 12 || cp->order < J2KI_LRCP || cp->order > J2KI_CPRL ||
        cp->nb_poc < 0 || cp->nb_poc > J2KI_MAX_POC) {
        j2ki_log(log, J2KC_LOG_ERROR, "plan: invalid COD parameters");
        return J2KC_ERR_INVAL;
    }
    if (cp->user_precincts) {
        for (int r = 0; r <= cp->nb_levels; r++) {
            /* Table A.21: 4-bit exponents; only the lowest resolution may have 2^0 */
            if (cp->prec_log2_w[r] > 15 || cp->prec_log2_h[r] > 15 ||
                (r > 0 && (cp->prec_log2_w[r] < 1 || cp->prec_log2_h[r] < 1))) {
                j2ki_log(log, J2KC_LOG_ERROR, "plan: invalid precinct size at resolution %d", r);
                return J2KC_ERR_INVAL;
            }
        }
    }
    for (int i = 0; i < cp->nb_poc; i++) {
        const J2kiPoc *e = &cp->poc[i];
        if (e->order < J2KI_LRCP || e->order > J2KI_CPRL || e->res_s < 0 || e->res_s >= e->res_e ||
            e->comp_s < 0 || e->comp_s >= e->comp_e || e->layer_e < 1 || e->res_s > J2KI_MAX_LEVELS ||
            e->comp_s >= img->nb_comps) {
            j2ki_log(log, J2KC_LOG_ERROR, "plan: invalid POC entry %d", i);
            return J2KC_ERR_INVAL;
        }
    }
    /* B.3: the tile grid origin is at or before the image origin, and the first tile is not empty */
    if (cp->tile_x0 > img->x0 || cp->tile_y0 > img->y0 ||
        (cp->tile_w && (uint64_t)cp->tile_x0 + cp->tile_w <= img->x0) ||
        (cp->tile_h && (uint64_t)cp->tile_y0 + cp->tile_h <= img->y0)) {
        j2ki_log(log, J2KC_LOG_ERROR, "plan: tile origin must satisfy XTOsiz <= XOsiz < XTOsiz + XTsiz");
        return J2KC_ERR_INVAL;
    }
    return 0;
}

int j2ki_plan_create(J2kiPlan **out, const J2kiCodingParams *cp, const J2kiLog *log)
{
    J2kiPlan *pl = NULL;
    Builder b;
    uint64_t total, samples = 0;
    uint32_t xsiz, ysiz;
    int ret;

    *out = NULL;
    if ((ret = check_params(cp, log)) < 0)
        return ret;
    pl = calloc(1, sizeof(*pl));
    if (!pl)
        return J2KC_ERR_NOMEM;
    pl->cp = cp;
    xsiz = cp->img.x0 + cp->img.width;
    ysiz = cp->img.y0 + cp->img.height;
    pl->tile_w = cp->tile_w ? cp->tile_w : xsiz - cp->tile_x0;
    pl->tile_h = cp->tile_h ? cp->tile_h : ysiz - cp->tile_y0;
    {
        uint64_t ntw = ((uint64_t)xsiz - cp->tile_x0 + pl->tile_w - 1) / pl->tile_w;
        uint64_t nth = ((uint64_t)ysiz - cp->tile_y0 + pl->tile_h - 1) / pl->tile_h;
        if (ntw * nth > PLAN_MAX_TILES) {
            j2ki_log(log, J2KC_LOG_ERROR, "plan: %llu tiles (at most 65535)", (unsigned long long)(ntw * nth));
            ret = J2KC_ERR_INVAL;
            goto fail;
        }
        pl->nb_tiles_w = (uint32_t)ntw;
        pl->nb_tiles_h = (uint32_t)nth;
        pl->nb_tiles = (uint32_t)(ntw * nth);
    }
    /* samples first, from B-7..B-12 alone, so an absurd frame is refused before any loop over it */
    for (uint32_t t = 0; t < pl->nb_tiles; t++) {
        uint64_t tx0 = (uint64_t)cp->tile_x0 + (uint64_t)(t % pl->nb_tiles_w) * pl->tile_w;
        uint64_t ty0 = (uint64_t)cp->tile_y0 + (uint64_t)(t / pl->nb_tiles_w) * pl->tile_h;
        uint64_t tx1 = tx0 + pl->tile_w < xsiz ? tx0 + pl->tile_w : xsiz;
        uint64_t ty1 = ty0 + pl->tile_h < ysiz ? ty0 + pl->tile_h : ysiz;
        if (tx0 < cp->img.x0) tx0 = cp->img.x0;
        if (ty0 < cp->img.y0) ty0 = cp->img.y0;
        for (int c = 0; c < cp->img.nb_comps; c++) {
            uint64_t w = j2ki_ceil_div((uint32_t)tx1, (uint32_t)cp->img.dx[c]) - j2ki_ceil_div((uint32_t)tx0, (uint32_t)cp->img.dx[c]);
            uint64_t h = j2ki_ceil_div((uint32_t)ty1, (uint32_t)cp->img.dy[c]) - j2ki_ceil_div((uint32_t)ty0, (uint32_t)cp->img.dy[c]);
            samples += w * h;
        }
    }
    if (samples > PLAN_MAX_SAMPLES) {
        j2ki_log(log, J2KC_LOG_ERROR, "plan: %llu samples per frame is more than this encoder supports (2^32)",
                 (unsigned long long)samples);
        ret = J2KC_ERR_UNSUPPORTED;
        goto fail;
    }
    {
        uint64_t need = j2ki_plan_min_size(cp, pl), lim = plan_workspace_limit();
        if (need > lim) {
            j2ki_log(log, J2KC_LOG_ERROR, "plan: this layout needs at least %llu bytes of workspace, more than the "
                     "%llu this host can give (use larger code-blocks or precincts, or fewer layers)",
                     (unsigned long long)need, (unsigned long long)lim);
            ret = J2KC_ERR_NOMEM;
            goto fail;
        }
    }

    memset(&b, 0, sizeof(b));
    b.cp = cp;
    b.pl = pl;
    b.dry = 1;
    if (cp->order >= J2KI_RPCL)
        b.order_used[cp->order - J2KI_RPCL] = 1;
    for (int i = 0; i < cp->nb_poc; i++)
        if (cp->poc[i].order >= J2KI_RPCL)
            b.order_used[cp->poc[i].order - J2KI_RPCL] = 1;
    build(&b);
    if (b.nb_cblks > UINT32_MAX || b.nb_bands > UINT32_MAX) {
        ret = J2KC_ERR_UNSUPPORTED;
        goto fail;
    }
    pl->nb_bands = (uint32_t)b.nb_bands;
    pl->nb_cblks = (uint32_t)b.nb_cblks;
    /* the filling run also carves the flat band and code-block arrays */
    b.meta_size = b.meta_pos + ((pl->nb_bands * (uint64_t)sizeof(J2kiBand) + 7) & ~(uint64_t)7) +
                  ((pl->nb_cblks * (uint64_t)sizeof(J2kiCblk) + 7) & ~(uint64_t)7);
    total = b.meta_size + b.data_pos;
    if (total > (uint64_t)(SIZE_MAX / 2)) {
        j2ki_log(log, J2KC_LOG_ERROR, "plan: %llu bytes of workspace", (unsigned long long)total);
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    pl->arena_size = (size_t)total;
    pl->arena = calloc(1, pl->arena_size ? pl->arena_size : 1);
    if (!pl->arena) {
        j2ki_log(log, J2KC_LOG_ERROR, "plan: cannot allocate %llu bytes of workspace", (unsigned long long)total);
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    b.dry = 0;
    b.meta = pl->arena;
    build(&b);
    if (b.meta_pos != b.meta_size) {
        j2ki_log(log, J2KC_LOG_ERROR, "plan: internal error: workspace layout mismatch");
        ret = J2KC_ERR_INTERNAL;
        goto fail;
    }

    pl->nb_tile_parts = 0;
    for (uint32_t t = 0; t < pl->nb_tiles; t++) {
        ret = j2ki_t2_count_tile_parts(pl, &pl->tiles[t], log);
        if (ret < 0)
            goto fail;
        pl->tiles[t].nb_tile_parts = ret;
        pl->nb_tile_parts += (uint32_t)ret;
    }
    *out = pl;
    return 0;
fail:
    j2ki_plan_free(&pl);
    return ret;
}

void j2ki_plan_free(J2kiPlan **plan)
{
    if (!plan || !*plan)
        return;
    free((*plan)->arena);
    free((*plan)->rc_scratch);
    free(*plan);
    *plan = NULL;
}
