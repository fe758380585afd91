/*
 * CUDA tier-2, see t2_cuda.h for the cell table. Kernels (t2_kern.cu), in frame order:
 *   T2_IMPORT    one thread per code-block: nb_passes, numbps from tier-1's results
 *   T2_PREC_WARP one warp per precinct (t2_par.h), a block per precinct of many code-blocks
 *                (t2_cuda.h's teams): header and body bytes of each layer's packet, counted
 *   T2_TP_SIZE   one thread per tile-part: its cells' lengths
 *   (j2ki_scan_cuda, exclusive, over the cell lengths: offsets; scan_cuda.h)
 *   T2_FINAL     length, capacity check, EOC
 *   T2_TP_WRITE  one thread per tile-part: SOT (Psot), PLT segments, SOD, TLM entry
 *   T2_PREC_WARP again, writing: SOP, header, EPH of each layer's packet, and where each
 *                code-block's new bytes go
 *   T2_BODY      one warp per code-block: copies its bytes of every layer
 * Device memory (all sized at init): the mirror of the plan (code-blocks, layer tables, bands,
 * precincts, tag trees), the packet and tile-part tables, per (precinct, layer) lengths and cell
 * indices, cell lengths and offsets, per (code-block, layer) destinations, the scan's temporary
 * storage, the main-header template and the result.
 */
extern "C" {
#include "core/markers.h"
#include "core/tuning.h"
#include "ref/t2_ref.h"
}
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_launch.h"
#include "cuda/cuda_util.h"
#include "cuda/scan_cuda.h"
#include "cuda/t2_kern.h"

struct J2kiT2Cuda {
    const J2kiLog   *log;
    int             *sticky;
    J2kiT2DevView    v;
    uint8_t         *d_mem;        /* one allocation, carved */
    uint8_t         *d_mh;         /* main header template */
    void            *d_scan_tmp;
    size_t           scan_tmp_size;
};

#define T2CU(t, call) J2KI_CUDRV((t)->log, (t)->sticky, call)
#define T2DRV(t, fn, ...) J2KI_CU((t)->log, (t)->sticky, fn, __VA_ARGS__)

/* a launch of kernel id with parameters *p, checked (tests/t2_emu.cc runs them on the host) */
#define T2_LAUNCH(t, id, grid, block, st, p) T2CU(t, j2ki_launch(j2ki_kernel<id>, (grid), (block), 0, (st), (p)))

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* ---- init ------------------------------------------------------------------------------- */

typedef struct Order {
    J2kiPlan     *plan;
    const uint32_t *prec_base;     /* per (tile, comp, res): first global precinct index */
    J2kiT2PktDev *pkts;
    J2kiT2TpDev  *tps;
    uint32_t     *pkt_of;
    uint32_t      nb_pkts, nb_tps, cap_pkts, cap_tps;
    uint32_t      nsop, tpsot;
    const J2kiTile *tile;
} Order;

static int order_visit(void *opaque, const J2kiTile *tile, int c, int r, uint32_t p, int l, int new_tp)
{
    Order *o = (Order *)opaque;
    int L = o->plan->cp->nb_layers;
    if (tile != o->tile) {
        o->tile = tile;
        o->nsop = 0;
        o->tpsot = 0;
    }
    if (new_tp) {
        if (o->nb_tps >= o->cap_tps)
            return J2KC_ERR_INTERNAL;
        J2kiT2TpDev *tp = &o->tps[o->nb_tps++];
        tp->first_pkt = o->nb_pkts;
        tp->nb_pkts = 0;
        tp->isot = (uint32_t)tile->index;
        tp->tpsot = (uint8_t)o->tpsot++;
        tp->tnsot = (uint8_t)tile->nb_tile_parts;
        tp->comp = (uint8_t)c;
        tp->res = (uint8_t)r;
    }
    if (l < 0)
        return 0;
    if (o->nb_pkts >= o->cap_pkts || !o->nb_tps)
        return J2KC_ERR_INTERNAL;
    uint32_t t = (uint32_t)(tile - o->plan->tiles);
    uint32_t prec = o->prec_base[((size_t)t * o->plan->cp->img.nb_comps + c) * J2KI_MAX_RES + r] + p;
    J2kiT2PktDev *pk = &o->pkts[o->nb_pkts];
    pk->prec = prec;
    pk->nsop = o->nsop++;
    pk->tp = o->nb_tps - 1;
    pk->layer = (uint16_t)l;
    pk->comp = (uint8_t)c;
    pk->res = (uint8_t)r;
    o->pkt_of[(size_t)prec * L + l] = o->nb_pkts;
    o->tps[o->nb_tps - 1].nb_pkts++;
    o->nb_pkts++;
    return 0;
}

int *j2ki_t2_cuda_sticky(J2kiT2Cuda *t, int *sticky)
{
    int *prev = t->sticky;
    t->sticky = sticky;
    return prev;
}

void j2ki_t2_cuda_free(J2kiT2Cuda **pt)
{
    J2kiT2Cuda *t = *pt;
    if (!t)
        return;
    j2ki_cuda_free(t->d_mem);
    free(t);
    *pt = NULL;
}

/** Code-blocks of a precinct in the bands its header coder visits (those with tag trees,
 *  j2ki_t2_dev_prec's count). */
static uint32_t prec_cblks(const J2kiPrec *pr)
{
    uint32_t n = 0;
    for (int k = 0; k < pr->nb_bands && k < 3; k++)
        if (pr->bands[k].incl)
            n += (pr->bands[k].cbx1 - pr->bands[k].cbx0) * (pr->bands[k].cby1 - pr->bands[k].cby0);
    return n;
}

int j2ki_t2_cuda_init(J2kiT2Cuda **out, J2kiPlan *plan, const J2kiCblkDev *h_cblks, uint8_t *d_data,
                      J2kiPass *d_passes, const J2kiLog *log, int *sticky)
{
    const J2kiCodingParams *cp = plan->cp;
    int L = cp->nb_layers, nb_comps = cp->img.nb_comps, ret = 0;
    uint32_t nb_precs = 0, nb_trees = 0;
    uint64_t nb_nodes = 0;
    uint32_t *prec_base = NULL;
    uint8_t *h = NULL;
    J2kiT2Cuda *t = (J2kiT2Cuda *)calloc(1, sizeof(*t));
    Order ord;
    J2kiBytes mh;
    size_t tlm_start = 0;

    *out = NULL;
    memset(&ord, 0, sizeof(ord));
    if (!t)
        return J2KC_ERR_NOMEM;
    t->log = log;
    t->sticky = sticky;

    /* global precinct numbering: tile, component, resolution, precinct */
    prec_base = (uint32_t *)calloc((size_t)plan->nb_tiles * nb_comps * J2KI_MAX_RES, sizeof(*prec_base));
    if (!prec_base) {
        ret = J2KC_ERR_NOMEM;
        goto fail;
    }
    for (uint32_t ti = 0; ti < plan->nb_tiles; ti++)
        for (int c = 0; c < nb_comps; c++)
            for (int r = 0; r < plan->tiles[ti].comps[c].nb_res; r++) {
                const J2kiRes *res = &plan->tiles[ti].comps[c].res[r];
                uint32_t n = res->nb_prec_w * res->nb_prec_h;
                prec_base[((size_t)ti * nb_comps + c) * J2KI_MAX_RES + r] = nb_precs;
                nb_precs += n;
                for (uint32_t p = 0; p < n; p++)
                    for (int k = 0; k < res->precs[p].nb_bands; k++)
                        if (res->precs[p].bands[k].incl && res->precs[p].bands[k].incl->nb_nodes) {
                            nb_trees += 2;
                            nb_nodes += 2 * (uint64_t)res->precs[p].bands[k].incl->nb_nodes;
                        }
            }

    {
        J2kiT2DevView *v = &t->v;
        size_t nb_pkts = (size_t)nb_precs * L, nb_tps = plan->nb_tile_parts;
        size_t nb_cells = nb_pkts + nb_tps + 2;
        size_t off[18], sz[18], total = 0;
        int n = 0;

        j2ki_bytes_init(&mh, NULL, 0);
        j2ki_main_header(&mh, plan, &tlm_start);
        t->scan_tmp_size = j2ki_scan_cuda_temp_size(nb_cells, 8);
        /* carve: 0 cblks, 1 layer tables, 2 bands, 3 precs, 4 trees, 5 pkts, 6 tps, 7 pkt_of,
         * 8 hdr_len, 9 body_len, 10 cell_len, 11 cell_off, 12 dst, 13 scan tmp, 14 mh, 15 result,
         * 16 parallel header coder's node scratch (one per inclusion-tree node), 17 precinct
         * order (teams first) */
        sz[0] = (size_t)plan->nb_cblks * sizeof(J2kiCblk);
        sz[1] = (size_t)plan->nb_cblks * L * sizeof(uint16_t);
        sz[2] = (size_t)plan->nb_bands * sizeof(J2kiBand);
        sz[3] = (size_t)nb_precs * sizeof(J2kiT2PrecDev);
        sz[4] = (size_t)nb_trees * ((sizeof(J2kiTagTree) + 7) & ~(size_t)7) + (size_t)nb_nodes * sizeof(J2kiTgtNode);
        sz[5] = nb_pkts * sizeof(J2kiT2PktDev);
        sz[6] = nb_tps * sizeof(J2kiT2TpDev);
        sz[7] = nb_pkts * sizeof(uint32_t);
        sz[8] = nb_pkts * sizeof(uint32_t);
        sz[9] = nb_pkts * sizeof(uint32_t);
        sz[10] = nb_cells * sizeof(uint64_t);
        sz[11] = nb_cells * sizeof(uint64_t);
        sz[12] = (size_t)plan->nb_cblks * L * sizeof(uint64_t);
        sz[13] = t->scan_tmp_size;
        sz[14] = mh.pos;
        sz[15] = sizeof(J2kiT2CudaResult);
        sz[16] = (size_t)(nb_nodes / 2) * sizeof(J2kiT2pNode);
        sz[17] = (size_t)nb_precs * sizeof(uint32_t);
        for (n = 0; n < 18; n++) {
            off[n] = total;
            total += align256(sz[n] ? sz[n] : 1);
        }
        if ((ret = J2KI_CUDRV(t->log, t->sticky, j2ki_cuda_malloc((void **)&t->d_mem, total))) < 0)
            goto fail;
        if (!(h = (uint8_t *)calloc(1, total))) {
            ret = J2KC_ERR_NOMEM;
            goto fail;
        }
        uint8_t *d = t->d_mem;
        v->cblks = (J2kiCblk *)(d + off[0]);
        v->bands = (const J2kiBand *)(d + off[2]);
        v->precs = (J2kiT2PrecDev *)(d + off[3]);
        v->pkts = (const J2kiT2PktDev *)(d + off[5]);
        v->tps = (const J2kiT2TpDev *)(d + off[6]);
        v->pkt_of = (const uint32_t *)(d + off[7]);
        v->hdr_len = (uint32_t *)(d + off[8]);
        v->body_len = (uint32_t *)(d + off[9]);
        v->cell_len = (uint64_t *)(d + off[10]);
        v->cell_off = (uint64_t *)(d + off[11]);
        v->dst = (uint64_t *)(d + off[12]);
        t->d_scan_tmp = d + off[13];
        t->d_mh = d + off[14];
        v->result = (J2kiT2CudaResult *)(d + off[15]);
        v->pnodes = (J2kiT2pNode *)(d + off[16]);
        v->prec_order = (const uint32_t *)(d + off[17]);
        v->nb_cblks = plan->nb_cblks;
        v->nb_bands = plan->nb_bands;
        v->nb_precs = nb_precs;
        v->nb_pkts = (uint32_t)nb_pkts;
        v->nb_tps = (uint32_t)nb_tps;
        v->nb_cells = (uint32_t)nb_cells;
        v->nb_layers = L;
        v->nb_comps = nb_comps;
        v->sop = cp->sop;
        v->eph = cp->eph;
        v->plt = cp->plt;
        v->tlm = cp->tlm;
        v->scan = (cp->cblk_style & (J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL | J2KI_CBLK_HT)) != 0;
        v->comp_res_e = cp->comp_bytes_res_e;
        v->main_len = mh.pos;
        v->tlm_start = tlm_start;

        /* host image of the carved area, with device pointers */
        J2kiCblk *hc = (J2kiCblk *)(h + off[0]);
        for (uint32_t i = 0; i < plan->nb_cblks; i++) {
            hc[i] = plan->cblks[i];
            hc[i].data = d_data + h_cblks[i].data_off;
            hc[i].passes = d_passes + h_cblks[i].pass_off;
            hc[i].layer_passes = (uint16_t *)(d + off[1]) + (size_t)i * L;
            hc[i].nb_passes = 0;
            hc[i].numbps = 0;
        }
        memcpy(h + off[2], plan->bands, sz[2]);
        J2kiT2PrecDev *hp = (J2kiT2PrecDev *)(h + off[3]);
        size_t tree_at = off[4];
        uint32_t node_base = 0;
        for (uint32_t ti = 0; ti < plan->nb_tiles; ti++)
            for (int c = 0; c < nb_comps; c++)
                for (int r = 0; r < plan->tiles[ti].comps[c].nb_res; r++) {
                    const J2kiRes *res = &plan->tiles[ti].comps[c].res[r];
                    uint32_t base = prec_base[((size_t)ti * nb_comps + c) * J2KI_MAX_RES + r];
                    for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++) {
                        J2kiT2PrecDev *pd = &hp[base + p];
                        pd->prec = res->precs[p];
                        pd->first_band = res->first_band;
                        pd->node_base = node_base;
                        for (int k = 0; k < pd->prec.nb_bands; k++)
                            if (pd->prec.bands[k].incl)
                                node_base += pd->prec.bands[k].incl->nb_nodes;
                        for (int k = 0; k < pd->prec.nb_bands; k++) {
                            J2kiPrecBand *pb = &pd->prec.bands[k];
                            J2kiTagTree *src[2] = { pb->incl, pb->zbp };
                            J2kiTagTree **dstp[2] = { &pb->incl, &pb->zbp };
                            for (int q = 0; q < 2; q++) {
                                if (!src[q] || !src[q]->nb_nodes) {
                                    *dstp[q] = NULL;
                                    continue;
                                }
                                J2kiTagTree *ht = (J2kiTagTree *)(h + tree_at);
                                size_t head = (sizeof(J2kiTagTree) + 7) & ~(size_t)7;
                                *ht = *src[q];
                                ht->nodes = (J2kiTgtNode *)(d + tree_at + head);
                                memcpy(h + tree_at + head, src[q]->nodes, src[q]->nb_nodes * sizeof(J2kiTgtNode));
                                *dstp[q] = (J2kiTagTree *)(d + tree_at);
                                tree_at += head + src[q]->nb_nodes * sizeof(J2kiTgtNode);
                            }
                        }
                    }
                }

        /* the precincts a team codes first, then the others (each in index order) */
        {
            const int hook = cp->hooks.t2_team_min;
            const uint32_t team_min = hook > 0 ? (uint32_t)hook : J2KI_TUNE_T2_TEAM_MIN_CBLKS;
            uint32_t *order = (uint32_t *)(h + off[17]), at = 0;
            for (int pass = 0; pass < 2; pass++) {
                for (uint32_t p = 0; p < nb_precs; p++)
                    if ((prec_cblks(&hp[p].prec) >= team_min) == !pass)
                        order[at++] = p;
                if (!pass)
                    v->nb_team = at;
            }
        }

        ord.plan = plan;
        ord.prec_base = prec_base;
        ord.pkts = (J2kiT2PktDev *)(h + off[5]);
        ord.tps = (J2kiT2TpDev *)(h + off[6]);
        ord.pkt_of = (uint32_t *)(h + off[7]);
        ord.cap_pkts = (uint32_t)nb_pkts;
        ord.cap_tps = (uint32_t)nb_tps;
        if ((ret = j2ki_t2_walk_packets(plan, order_visit, &ord)) < 0)
            goto fail;
        if (ord.nb_pkts != nb_pkts || ord.nb_tps != nb_tps) {
            j2ki_log(log, J2KC_LOG_ERROR, "internal: CUDA tier-2 found %u packets in %u tile-parts, "
                     "expected %zu in %zu", ord.nb_pkts, ord.nb_tps, nb_pkts, nb_tps);
            ret = J2KC_ERR_INTERNAL;
            goto fail;
        }
        /* fixed cells: main header and EOC */
        ((uint64_t *)(h + off[10]))[0] = mh.pos;
        ((uint64_t *)(h + off[10]))[nb_cells - 1] = 2;
        j2ki_bytes_init(&mh, h + off[14], sz[14]);
        j2ki_main_header(&mh, plan, &tlm_start);
        if ((ret = T2DRV(t, cuMemcpyHtoD, j2ki_dptr(t->d_mem), h, total)) < 0)
            goto fail;
    }
    free(h);
    free(prec_base);
    *out = t;
    return 0;
fail:
    free(h);
    free(prec_base);
    j2ki_t2_cuda_free(&t);
    return ret;
}

const J2kiT2DevView *j2ki_t2_cuda_view(const J2kiT2Cuda *t) { return &t->v; }
J2kiT2CudaResult *j2ki_t2_cuda_result(const J2kiT2Cuda *t) { return t->v.result; }

/* ---- per frame -------------------------------------------------------------------------- */

static unsigned grid(uint32_t n, unsigned threads) { return n ? (unsigned)((n + threads - 1) / threads) : 1u; }

/** The precinct kernel's blocks: one per team precinct, then one per PREC_WARPS others. */
static unsigned prec_grid(const J2kiT2DevView *v)
{
    return v->nb_team + (v->nb_precs > v->nb_team ? grid(v->nb_precs - v->nb_team, PREC_WARPS) : 0);
}

int j2ki_t2_cuda_import(J2kiT2Cuda *t, const J2kiCblkRes *d_res, CUstream st)
{
    const J2kiT2ImportParams p = { t->v, d_res };
    return T2_LAUNCH(t, J2KI_K_T2_IMPORT, grid(t->v.nb_cblks, 256), 256, st, p);
}

int j2ki_t2_cuda_write(J2kiT2Cuda *t, CUstream st, uint8_t *d_out, size_t cap)
{
    const J2kiT2DevView *v = &t->v;
    const J2kiT2OutParams count = { *v, NULL, 0 }, write = { *v, d_out, cap };
    int ret;

    if ((ret = T2_LAUNCH(t, J2KI_K_T2_PREC_WARP, prec_grid(v), PREC_WARPS * 32, st, count)) < 0 ||
        (ret = T2_LAUNCH(t, J2KI_K_T2_TP_SIZE, grid(v->nb_tps, 64), 64, st, count)) < 0)
        return ret;
    /* tests/t2_emu.cc runs this source on the host with its own j2ki_scan_cuda */
    const J2kiScanArgs sc = { v->cell_len, v->cell_off, (size_t)v->nb_cells, 8, 1, t->d_scan_tmp,
                              t->scan_tmp_size };
    if ((ret = T2CU(t, j2ki_scan_cuda(&sc, st))) < 0)
        return ret;
    if ((ret = T2_LAUNCH(t, J2KI_K_T2_FINAL, 1, 1, st, write)) < 0)
        return ret;
    if (cap >= v->main_len &&
        (ret = T2DRV(t, cuMemcpyDtoDAsync, j2ki_dptr(d_out), j2ki_dptr(t->d_mh), v->main_len, st)) < 0)
        return ret;
    if ((ret = T2_LAUNCH(t, J2KI_K_T2_TP_WRITE, grid(v->nb_tps, 64), 64, st, write)) < 0 ||
        (ret = T2_LAUNCH(t, J2KI_K_T2_PREC_WARP, prec_grid(v), PREC_WARPS * 32, st, write)) < 0)
        return ret;
    return T2_LAUNCH(t, J2KI_K_T2_BODY, grid(v->nb_cblks, 8), 256, st, write);
}
