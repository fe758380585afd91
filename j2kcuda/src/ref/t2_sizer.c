/*
 * Tier-2 sizing by precincts on worker threads (t2_sizer.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ref/t2_ref.h"
#include "hd/t2_core.h"
#include "ref/t2_sizer.h"

typedef struct SizerPrec {
    J2kiPrec *prec;
    uint32_t  first_band;
} SizerPrec;

/** One packet in codestream order. layer -1: the empty tile-part of a tile without packets
 *  (component 0, resolution 0). */
typedef struct SizerPkt {
    uint32_t prec;           /* index in precs */
    int16_t  layer;
    uint8_t  comp, res;
    uint8_t  new_tp;
} SizerPkt;

struct J2kiT2Sizer {
    J2kiPlan  *plan;
    J2kiPool  *pool;
    SizerPrec *precs;
    uint32_t   nb_precs;
    uint32_t  *res_first;    /* per (tile, comp, res): its first precinct in precs */
    SizerPkt  *pkts;
    size_t     nb_pkts, cap_pkts;
    uint64_t  *len;          /* per (precinct, layer): packet bytes of the current sizing */
    int       *err;          /* per precinct: the sizing's error, or 0 */
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

/* Every layer's packet of one precinct, as j2ki_t2_size codes them (j2ki_t2_packet_head). */
static void size_prec(void *opaque, uint32_t i, int worker)
{
    J2kiT2Sizer *s = opaque;
    J2kiPlan *plan = s->plan;
    const J2kiCodingParams *cp = plan->cp;
    const SizerPrec *sp = &s->precs[i];
    int ret;

    (void)worker;
    s->err[i] = 0;
    if ((ret = j2ki_t2_prec_load(plan->cblks, plan->bands, sp->first_band, sp->prec, cp->nb_layers)) < 0) {
        s->err[i] = ret;
        return;
    }
    for (int l = 0; l < cp->nb_layers; l++) {
        J2kiBytes counter;
        int64_t body;

        j2ki_bytes_init(&counter, NULL, 0);
        body = j2ki_t2_packet_head(&counter, plan, sp->first_band, sp->prec, l, 0);
        if (body < 0) {
            s->err[i] = (int)body;
            return;
        }
        j2ki_t2_prec_commit(plan->cblks, plan->bands, sp->first_band, sp->prec, l);
        s->len[(size_t)i * (size_t)cp->nb_layers + (size_t)l] = (uint64_t)counter.pos + (uint64_t)body;
    }
}

/* The packet lengths summed in codestream order with j2ki_t2_size's tally (t2_ref.h): each
 * tile-part closed at the next one's first packet, or at the end. */
int64_t j2ki_t2_sizer_size(void *sizer, J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len)
{
    J2kiT2Sizer *s = sizer;
    const J2kiCodingParams *cp = plan->cp;
    const size_t L = (size_t)cp->nb_layers;
    J2kiT2Tally tally;
    const SizerPkt *tp = NULL;           /* the open tile-part's first packet */
    uint64_t tp_packets = 0;
    J2kiT2PltCount plt = { 0, -1, 0 };

    if (plan != s->plan)
        return J2KC_ERR_INTERNAL;
    j2ki_pool_run(s->pool, s->nb_precs, size_prec, s);
    for (uint32_t i = 0; i < s->nb_precs; i++)
        if (s->err[i] < 0)
            return s->err[i];

    j2ki_t2_tally_init(&tally, plan);
    for (size_t k = 0; k <= s->nb_pkts; k++) {
        const SizerPkt *pk = k < s->nb_pkts ? &s->pkts[k] : NULL;
        if (tp && (!pk || pk->new_tp))
            j2ki_t2_tally_tile_part(&tally, tp->comp, tp->res, cp->plt ? plt.bytes : 0, tp_packets);
        if (!pk)
            break;
        if (pk->new_tp) {
            tp = pk;
            tp_packets = 0;
            plt = (J2kiT2PltCount){ 0, -1, 0 };
        }
        if (pk->layer >= 0) {
            uint64_t len = s->len[(size_t)pk->prec * L + (size_t)pk->layer];
            if (cp->plt)
                j2ki_t2_plt_count_add(&plt, len);
            tp_packets += len;
            j2ki_t2_tally_packet(&tally, pk->comp, pk->res, pk->layer, len);
        }
    }
    return j2ki_t2_tally_end(&tally, comp_len, layer_len);
}
