/*
 * Tier-2 sizing by precincts on worker threads (t2_sizer.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/markers.h"
#include "ref/t2_ref.h"
#include "hd/t2_core.h"
#include "ref/t2_sizer.h"

/* TPsot is 8 bits (A.4.2): at most this many tile-parts per tile (t2_ref.c refuses more) */
#define SIZER_MAX_TILE_PARTS 255

typedef struct SizerPrec {
    J2kiPrec *prec;
    uint32_t  first_band;
} SizerPrec;

/** One packet in codestream order. layer -1: the empty tile-part of a tile without packets. */
typedef struct SizerPkt {
    uint32_t prec;           /* index in precs */
    int16_t  layer;
    uint8_t  comp, res;
    uint8_t  new_tp;
    uint8_t  tile_start;     /* the tile's first packet (its tile-parts are counted from 0) */
} SizerPkt;

struct J2kiT2Sizer {
    J2kiPlan  *plan;
    J2kiPool  *pool;
    SizerPrec *precs;
    uint32_t   nb_precs;
    uint32_t  *res_first;    /* per (tile, comp, res): its first precinct in precs */
    SizerPkt  *pkts;
    size_t     nb_pkts, cap_pkts;
    uint32_t   walk_tile;    /* creation: the tile of the last recorded packet */
    uint64_t  *len;          /* per (precinct, layer): packet bytes of the current sizing */
    int       *err;          /* per precinct: the sizing's error, or 0 */
    int64_t    main_len;     /* main header + EOC */
};

static uint32_t res_slot(const J2kiPlan *plan, uint32_t t, int c, int r)
{
    return (t * (uint32_t)plan->cp->img.nb_comps + (uint32_t)c) * (uint32_t)(plan->cp->nb_levels + 1) + (uint32_t)r;
}

static int on_walk(void *opaque, const J2kiTile *tile, int c, int r, uint32_t p, int l, int new_tp)
{
    J2kiT2Sizer *s = opaque;
    uint32_t t = (uint32_t)(tile - s->plan->tiles);
    SizerPkt *k;

    if (s->nb_pkts == s->cap_pkts) {
        size_t n = s->cap_pkts ? 2 * s->cap_pkts : 1024;
        SizerPkt *np = realloc(s->pkts, n * sizeof(*np));
        if (!np)
            return J2KC_ERR_NOMEM;
        s->pkts = np;
        s->cap_pkts = n;
    }
    k = &s->pkts[s->nb_pkts++];
    k->prec = l < 0 ? 0 : s->res_first[res_slot(s->plan, t, c, r)] + p;
    k->layer = (int16_t)l;
    k->comp = (uint8_t)c;
    k->res = (uint8_t)r;
    k->new_tp = (uint8_t)new_tp;
    k->tile_start = (uint8_t)(s->nb_pkts == 1 || t != s->walk_tile);
    s->walk_tile = t;
    return 0;
}

void j2ki_t2_sizer_free(J2kiT2Sizer **ps)
{
    J2kiT2Sizer *s = ps ? *ps : NULL;
    if (!s)
        return;
    free(s->precs);
    free(s->res_first);
    free(s->pkts);
    free(s->len);
    free(s->err);
    free(s);
    *ps = NULL;
}

int j2ki_t2_sizer_new(J2kiT2Sizer **out, J2kiPlan *plan)
{
    const J2kiCodingParams *cp = plan->cp;
    const int nc = cp->img.nb_comps, nr = cp->nb_levels + 1;
    J2kiT2Sizer *s = calloc(1, sizeof(*s));
    uint32_t n = 0;
    int ret = J2KC_ERR_NOMEM;

    *out = NULL;
    if (!s)
        return J2KC_ERR_NOMEM;
    s->plan = plan;
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < nc; c++)
            for (int r = 0; r < plan->tiles[t].comps[c].nb_res; r++)
                n += plan->tiles[t].comps[c].res[r].nb_prec_w * plan->tiles[t].comps[c].res[r].nb_prec_h;
    s->nb_precs = n;
    if (!(s->precs = malloc((n ? n : 1) * sizeof(*s->precs))) ||
        !(s->err = malloc((n ? n : 1) * sizeof(*s->err))) ||
        !(s->len = malloc((n ? (size_t)n * (size_t)cp->nb_layers : 1) * sizeof(*s->len))) ||
        !(s->res_first = calloc((size_t)plan->nb_tiles * (size_t)nc * (size_t)nr, sizeof(*s->res_first))))
        goto fail;
    n = 0;
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < nc; c++) {
            J2kiTileComp *tc = &plan->tiles[t].comps[c];
            for (int r = 0; r < tc->nb_res; r++) {
                J2kiRes *res = &tc->res[r];
                s->res_first[res_slot(plan, t, c, r)] = n;
                for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++, n++) {
                    s->precs[n].prec = &res->precs[p];
                    s->precs[n].first_band = res->first_band;
                }
            }
        }
    if ((ret = j2ki_t2_walk_packets(plan, on_walk, s)) < 0)
        goto fail;
    s->main_len = j2ki_main_header_size(plan) + 2;    /* + EOC */
    *out = s;
    return 0;
fail:
    j2ki_t2_sizer_free(&s);
    return ret;
}

void j2ki_t2_sizer_set_pool(J2kiT2Sizer *s, J2kiPool *pool)
{
    s->pool = pool;
}

/* Every layer's packet of one precinct: j2ki_t2_size's code_packet in MODE_SIZE. */
static void size_prec(void *opaque, uint32_t i, int worker)
{
    J2kiT2Sizer *s = opaque;
    J2kiPlan *plan = s->plan;
    const J2kiCodingParams *cp = plan->cp;
    const SizerPrec *sp = &s->precs[i];
    const int scan = (cp->cblk_style & (J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL)) != 0;
    int ret;

    (void)worker;
    s->err[i] = 0;
    if ((ret = j2ki_t2_prec_load(plan->cblks, plan->bands, sp->first_band, sp->prec, cp->nb_layers)) < 0) {
        s->err[i] = ret;
        return;
    }
    for (int l = 0; l < cp->nb_layers; l++) {
        J2kiBytes counter;
        J2kiBits bw;
        int64_t body;

        j2ki_bytes_init(&counter, NULL, 0);
        if (cp->sop)
            j2ki_mk_sop(&counter, 0);
        j2ki_bits_init(&bw, &counter);
        body = j2ki_t2_prec_header(&bw, plan->cblks, plan->bands, sp->first_band, sp->prec, l, scan);
        if (body < 0) {
            s->err[i] = (int)body;
            return;
        }
        if (cp->eph)
            j2ki_mk_eph(&counter);
        j2ki_t2_prec_commit(plan->cblks, plan->bands, sp->first_band, sp->prec, l);
        s->len[(size_t)i * (size_t)cp->nb_layers + (size_t)l] = (uint64_t)counter.pos + (uint64_t)body;
    }
}

/* The tile-part accounting of t2_ref.c's sizing walk (on_packet, tp_open, tp_close, j2ki_t2_size)
 * over the recorded packet order. */
int64_t j2ki_t2_sizer_size(void *sizer, J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len)
{
    J2kiT2Sizer *s = sizer;
    const J2kiCodingParams *cp = plan->cp;
    const int res_e = cp->comp_bytes_res_e, L = cp->nb_layers;
    uint64_t comp_bytes[J2KC_MAX_COMPS] = { 0 }, layer_bytes[J2KI_MAX_LAYERS] = { 0 };
    uint64_t total = (uint64_t)s->main_len;
    /* the open tile-part: t2_ref.c keeps the per-tile-part table across tiles, and the empty
     * tile-part of a tile without packets keeps the resolution its slot held before */
    int tp_res[SIZER_MAX_TILE_PARTS] = { 0 };
    int tp = -1, tp_comp = 0;
    uint64_t tp_packets = 0;
    J2kiT2PltCount plt = { 0, -1, 0 };

    if (plan != s->plan)
        return J2KC_ERR_INTERNAL;
    j2ki_pool_run(s->pool, s->nb_precs, size_prec, s);
    for (uint32_t i = 0; i < s->nb_precs; i++)
        if (s->err[i] < 0)
            return s->err[i];

    for (size_t k = 0; k <= s->nb_pkts; k++) {
        const SizerPkt *pk = k < s->nb_pkts ? &s->pkts[k] : NULL;
        if (tp >= 0 && (!pk || pk->new_tp)) {
            /* tp_close, then j2ki_t2_size's sum over the tile's tile-parts */
            uint64_t hdr = 12 + (cp->plt ? plt.bytes : 0) + 2;     /* SOT, PLT, SOD */
            total += hdr + tp_packets;
            if (!res_e || tp_res[tp] < res_e)
                comp_bytes[tp_comp] += hdr;
        }
        if (!pk)
            break;
        if (pk->new_tp) {
            /* a tile's first packet opens its first tile-part (t2_walk starts at tp = -1) */
            tp = pk->tile_start ? 0 : tp + 1;
            if (tp >= SIZER_MAX_TILE_PARTS)
                return J2KC_ERR_UNSUPPORTED;
            tp_comp = pk->comp;
            if (pk->layer >= 0)
                tp_res[tp] = pk->res;
            tp_packets = 0;
            plt = (J2kiT2PltCount){ 0, -1, 0 };
        }
        if (pk->layer < 0)
            continue;
        {
            uint64_t len = s->len[(size_t)pk->prec * (size_t)L + (size_t)pk->layer];
            if (cp->plt)
                j2ki_t2_plt_count_add(&plt, len);
            tp_packets += len;
            if (!res_e || pk->res < res_e)
                comp_bytes[pk->comp] += len;
            layer_bytes[pk->layer] += len;
        }
    }
    if (comp_len)
        for (int c = 0; c < cp->img.nb_comps; c++)
            comp_len[c] = comp_bytes[c];
    if (layer_len) {
        uint64_t above = 0;
        for (int l = L - 1; l >= 0; l--) {
            layer_len[l] = total - above;
            above += layer_bytes[l];
        }
    }
    return (int64_t)total;
}
