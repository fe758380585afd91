/*
 * CUDA tier-2, see t2_cuda.h for the cell table. Kernels, in frame order:
 *   import_kernel    one thread per code-block: nb_passes, numbps from tier-1's results
 *   prec_warp_kernel one warp per precinct (t2_par.h): header and body bytes of each layer's
 *                    packet, counted
 *   tp_size_kernel   one thread per tile-part: its cells' lengths
 *   (j2ki_scan_cuda, exclusive, over the cell lengths: offsets; scan_cuda.h)
 *   final_kernel     length, capacity check, EOC
 *   tp_write_kernel  one thread per tile-part: SOT (Psot), PLT segments, SOD, TLM entry
 *   prec_warp_kernel again, writing: SOP, header, EPH of each layer's packet, and where each
 *                    code-block's new bytes go
 *   body_kernel      one warp per code-block: copies its bytes of every layer
 * Device memory (all sized at init): the mirror of the plan (code-blocks, layer tables, bands,
 * precincts, tag trees), the packet and tile-part tables, per (precinct, layer) lengths and cell
 * indices, cell lengths and offsets, per (code-block, layer) destinations, the scan's temporary
 * storage, the main-header template and the result.
 */
extern "C" {
#include "core/markers.h"
#include "ref/t2_ref.h"
}
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_util.h"
#include "cuda/scan_cuda.h"
#include "cuda/t2_cuda.h"

struct J2kiT2Cuda {
    const J2kiLog   *log;
    int             *sticky;
    J2kiT2DevView    v;
    uint8_t         *d_mem;        /* one allocation, carved */
    uint8_t         *d_mh;         /* main header template */
    void            *d_scan_tmp;
    size_t           scan_tmp_size;
};

#define T2CU(t, call) J2KI_CUDA((t)->log, (t)->sticky, call)

/* a launch of kernel k (tests/t2_emu.cc runs them on the host) */
#ifndef T2_LAUNCH
#define T2_LAUNCH(k, grid, block, st, ...) k<<<(grid), (block), 0, (st)>>>(__VA_ARGS__)
#endif

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* ---- kernels ---------------------------------------------------------------------------- */

__global__ void import_kernel(J2kiT2DevView v, const J2kiCblkRes *res)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        v.result->len = 0;
        v.result->err = 0;
        v.result->rc_why = 0;
        v.result->rc_why_arg = 0;
        v.result->nb_probes = 0;
        v.result->nb_rounds = 0;
        v.result->rc_total = 0;
        v.result->hull_mask = 0;
    }
    if (i >= v.nb_cblks)
        return;
    v.cblks[i].nb_passes = res[i].nb_passes;
    v.cblks[i].numbps = res[i].numbps;
}

static __device__ void set_err(J2kiT2CudaResult *r, int err)
{
    atomicCAS(&r->err, 0, err);
}

/* Warps per block of the precinct kernels, each with its J2KI_T2_WARP_WORDS of shared memory. */
#define PREC_WARPS 4

/* One warp per precinct (t2_par.h through j2ki_t2_dev_prec_warp): out NULL counts, else writes. */
__global__ void __launch_bounds__(PREC_WARPS * 32) prec_warp_kernel(J2kiT2DevView v, uint8_t *out)
{
    __shared__ uint32_t smem[PREC_WARPS][J2KI_T2_WARP_WORDS];
    const uint32_t wi = threadIdx.x >> 5, p = blockIdx.x * PREC_WARPS + wi;
    int ret;
    if (p >= v.nb_precs || v.result->err || (out && !v.result->len))
        return;                                  /* warp-uniform */
    if ((ret = j2ki_t2_dev_prec_warp(&v, p, smem[wi], out)) < 0 && (threadIdx.x & 31) == 0)
        set_err(v.result, ret);
}

__global__ void tp_size_kernel(J2kiT2DevView v)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= v.nb_tps)
        return;
    j2ki_t2_dev_tp_size(&v, k, v.cell_len, NULL, NULL);
}

__global__ void final_kernel(J2kiT2DevView v, uint8_t *out, size_t cap)
{
    uint64_t at = v.cell_off[v.nb_cells - 1];
    if (v.result->err)
        return;
    /* A.4.2: Psot is 32 bits */
    for (uint32_t k = 0; k < v.nb_tps; k++)
        if (v.cell_len[v.tps[k].first_pkt + k + 1] > UINT32_MAX) {
            set_err(v.result, J2KC_ERR_UNSUPPORTED);
            return;
        }
    if (at + 2 > cap) {
        set_err(v.result, J2KC_ERR_BUFSIZE);
        return;
    }
    out[at] = 0xFF;                       /* EOC, A.4.4 */
    out[at + 1] = 0xD9;
    v.result->len = at + 2;
}

static __device__ void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static __device__ void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v);
}

/* SOT (A.4.2): FF90, Lsot = 10, Isot(16), Psot(32), TPsot(8), TNsot(8); the PLT segments
 * (A.7.3): FF58, Lplt(16) = 3 + Iplt bytes, Zplt(8) counting from 0 in each tile-part, Iplt
 * entries of 7 bits per byte, bit 7 set on all but the last; SOD (A.4.3): FF93; and the
 * tile-part's TLM entry (A.7.1, ST = 2, SP = 1): Ttlm(16), Ptlm(32). */
__global__ void tp_write_kernel(J2kiT2DevView v, uint8_t *out)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= v.nb_tps || v.result->err || !v.result->len)
        return;
    const J2kiT2TpDev tp = v.tps[k];
    uint64_t off = v.cell_off[tp.first_pkt + k + 1];
    uint64_t psot = v.cell_off[tp.first_pkt + tp.nb_pkts + k + 2] - off;
    uint8_t *o = out + off;
    put16(o, 0xFF90);
    put16(o + 2, 10);
    put16(o + 4, tp.isot);
    put32(o + 6, (uint32_t)psot);
    o[10] = tp.tpsot;
    o[11] = tp.tnsot;
    o += 12;
    if (v.plt) {
        uint8_t *seg = NULL;
        uint32_t payload = 0, z = 0;
        for (uint32_t j = tp.first_pkt; j < tp.first_pkt + tp.nb_pkts; j++) {
            uint64_t len = v.cell_len[j + k + 2];
            int n = j2ki_t2_plt_entry_bytes(len), nb = n;
            if (seg && payload + (uint32_t)n > J2KI_T2_PLT_MAX_PAYLOAD) {
                put16(seg + 2, 3 + payload);
                seg = NULL;
            }
            if (!seg) {
                seg = o;
                put16(o, 0xFF58);
                o[4] = (uint8_t)(z++ & 0xFF);
                o += 5;
                payload = 0;
            }
            while (n-- > 0)
                *o++ = (uint8_t)(((len >> (7 * n)) & 0x7F) | (n ? 0x80u : 0u));
            payload += (uint32_t)nb;
        }
        if (seg)
            put16(seg + 2, 3 + payload);
    }
    put16(o, 0xFF93);
    if (v.tlm) {
        uint64_t at = v.tlm_start + (uint64_t)(k / J2KI_TLM_MAX_ENTRIES + 1) * 6 + (uint64_t)k * J2KI_TLM_ENTRY_BYTES;
        put16(out + at, tp.isot);
        put32(out + at + 2, (uint32_t)psot);
    }
}

/* B.9: a code-block's new bytes of each layer, one warp per code-block. */
__global__ void body_kernel(J2kiT2DevView v, uint8_t *out)
{
    uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (i >= v.nb_cblks || v.result->err || !v.result->len)
        return;
    const J2kiCblk *cb = &v.cblks[i];
    int L = v.nb_layers, s = 0;
    for (int l = 0; l < L; l++) {
        int e = cb->layer_passes[l];
        if (e > s) {
            uint32_t from = j2ki_t2_pass_end(cb, s), n = cb->passes[e - 1].rate - from;
            const uint8_t *src = cb->data + from;
            uint8_t *d = out + v.dst[(size_t)i * L + l];
            for (uint32_t b = lane; b < n; b += 32)
                d[b] = src[b];
            s = e;
        }
    }
}

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

void j2ki_t2_cuda_free(J2kiT2Cuda **pt)
{
    J2kiT2Cuda *t = *pt;
    if (!t)
        return;
    cudaFree(t->d_mem);
    free(t);
    *pt = NULL;
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
        size_t off[17], sz[17], total = 0;
        int n = 0;

        j2ki_bytes_init(&mh, NULL, 0);
        j2ki_main_header(&mh, plan, &tlm_start);
        t->scan_tmp_size = j2ki_scan_cuda_temp_size(nb_cells, 8);
        /* carve: 0 cblks, 1 layer tables, 2 bands, 3 precs, 4 trees, 5 pkts, 6 tps, 7 pkt_of,
         * 8 hdr_len, 9 body_len, 10 cell_len, 11 cell_off, 12 dst, 13 scan tmp, 14 mh, 15 result,
         * 16 parallel header coder's node scratch (one per inclusion-tree node) */
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
        for (n = 0; n < 17; n++) {
            off[n] = total;
            total += align256(sz[n] ? sz[n] : 1);
        }
        if ((ret = T2CU(t, j2ki_cuda_malloc((void **)&t->d_mem, total))) < 0)
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
        v->scan = (cp->cblk_style & (J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL)) != 0;
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
        if ((ret = T2CU(t, cudaMemcpy(t->d_mem, h, total, cudaMemcpyHostToDevice))) < 0)
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

int j2ki_t2_cuda_import(J2kiT2Cuda *t, const J2kiCblkRes *d_res, cudaStream_t st)
{
    T2_LAUNCH(import_kernel, grid(t->v.nb_cblks, 256), 256, st, t->v, d_res);
    return J2KI_CUDA_LAUNCHED(t->log, t->sticky);
}

int j2ki_t2_cuda_write(J2kiT2Cuda *t, cudaStream_t st, uint8_t *d_out, size_t cap)
{
    const J2kiT2DevView *v = &t->v;
    int ret;

    T2_LAUNCH(prec_warp_kernel, grid(v->nb_precs, PREC_WARPS), PREC_WARPS * 32, st, *v, NULL);
    if ((ret = J2KI_CUDA_LAUNCHED(t->log, t->sticky)) < 0)
        return ret;
    T2_LAUNCH(tp_size_kernel, grid(v->nb_tps, 64), 64, st, *v);
    if ((ret = J2KI_CUDA_LAUNCHED(t->log, t->sticky)) < 0)
        return ret;
    /* tests/t2_emu.cc runs this source on the host with its own j2ki_scan_cuda */
    const J2kiScanArgs sc = { v->cell_len, v->cell_off, (size_t)v->nb_cells, 8, 1, t->d_scan_tmp,
                              t->scan_tmp_size };
    if ((ret = T2CU(t, j2ki_scan_cuda(&sc, st))) < 0)
        return ret;
    T2_LAUNCH(final_kernel, 1, 1, st, *v, d_out, cap);
    if ((ret = J2KI_CUDA_LAUNCHED(t->log, t->sticky)) < 0)
        return ret;
    if (cap >= v->main_len &&
        (ret = T2CU(t, cudaMemcpyAsync(d_out, t->d_mh, v->main_len, cudaMemcpyDeviceToDevice, st))) < 0)
        return ret;
    T2_LAUNCH(tp_write_kernel, grid(v->nb_tps, 64), 64, st, *v, d_out);
    if ((ret = J2KI_CUDA_LAUNCHED(t->log, t->sticky)) < 0)
        return ret;
    T2_LAUNCH(prec_warp_kernel, grid(v->nb_precs, PREC_WARPS), PREC_WARPS * 32, st, *v, d_out);
    if ((ret = J2KI_CUDA_LAUNCHED(t->log, t->sticky)) < 0)
        return ret;
    T2_LAUNCH(body_kernel, grid(v->nb_cblks, 8), 256, st, *v, d_out);
    return J2KI_CUDA_LAUNCHED(t->log, t->sticky);
}
