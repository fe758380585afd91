/*
 * Tier-2 core (t2_core.h) and the device tier-2's cell table, checked on the host.
 *
 * 1. PLT sizing rule (j2ki_t2_plt_count_add) against hand-worked segment sizes (A.7.3: 5 bytes
 *    of FF58/Lplt/Zplt per segment, at most 65532 bytes of entries, 7 bits per entry byte).
 * 2. Random plans (geometry, progression, POC, tiles, tile-parts, SOP/EPH/PLT/TLM, layers,
 *    code-block styles) with random valid tier-1 results, truncated by the host rate control:
 *    the codestream is rebuilt here the way t2_cuda.cu builds it -- packets in the order of
 *    j2ki_t2_walk_packets, every precinct's headers coded by j2ki_t2_prec_header (counted
 *    first, then written), cells laid out by an exclusive prefix sum over their lengths,
 *    SOT/PLT/SOD and TLM entries written here from Annex A's layouts -- and must equal
 *    j2ki_codestream_write byte for byte; j2ki_t2_size must equal its length. The packet
 *    headers themselves are decoded independently in test_t2.c (t2_ref.c codes them with this core).
 */
#include "test.h"
#include "core/j2ki.h"
#include "core/params.h"
#include "core/plan.h"
#include "ref/rc_ref.h"
#include "ref/t2_ref.h"
#include "hd/t2_core.h"
#include "hd/t2_par.h"

/* the device buffer per warp (t2_cuda.h J2KI_T2_WARP_WORDS; that header needs CUDA) */
#define J2KI_T2_WARP_WORDS_HOST 512
#include "core/markers.h"

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }

static void test_plt_rule(void)
{
    J2kiT2PltCount p = { 0, -1, 0 };
    CHECK(j2ki_t2_plt_entry_bytes(0) == 1 && j2ki_t2_plt_entry_bytes(127) == 1 && j2ki_t2_plt_entry_bytes(128) == 2 &&
          j2ki_t2_plt_entry_bytes(16383) == 2 && j2ki_t2_plt_entry_bytes(16384) == 3, "entry sizes");
    for (int i = 0; i < 65532; i++)
        j2ki_t2_plt_count_add(&p, 5);
    CHECK(p.bytes == 5 + 65532 && p.nb_segs == 1, "one full segment: %llu", (unsigned long long)p.bytes);
    j2ki_t2_plt_count_add(&p, 200);
    CHECK(p.bytes == 5 + 65532 + 5 + 2 && p.nb_segs == 2, "second segment: %llu", (unsigned long long)p.bytes);
    for (uint64_t v = 1; v < ((uint64_t)1 << 40); v = v * 3 + 1)
        CHECK(j2ki_t2_plt_entry_bytes(v) == j2ki_plt_entry_bytes(v), "entry bytes of %llu", (unsigned long long)v);
}

/* ---- random plans ---- */

typedef struct Pkt { uint32_t tile, prec; int c, r, l, tp; uint32_t nsop; } Pkt;
typedef struct Tp { uint32_t first, nb, isot; int tpsot, tnsot; } Tp;

typedef struct Walk {
    J2kiPlan *plan;
    Pkt  *pkts;
    Tp   *tps;
    uint32_t nb_pkts, nb_tps, nsop, tpsot;
    const J2kiTile *tile;
} Walk;

static int visit(void *opaque, const J2kiTile *tile, int c, int r, uint32_t p, int l, int new_tp)
{
    Walk *w = opaque;
    if (tile != w->tile) {
        w->tile = tile;
        w->nsop = 0;
        w->tpsot = 0;
    }
    if (new_tp) {
        Tp *t = &w->tps[w->nb_tps++];
        t->first = w->nb_pkts;
        t->nb = 0;
        t->isot = (uint32_t)tile->index;
        t->tpsot = (int)w->tpsot++;
        t->tnsot = tile->nb_tile_parts;
    }
    if (l < 0)
        return 0;
    Pkt *k = &w->pkts[w->nb_pkts++];
    k->tile = (uint32_t)(tile - w->plan->tiles);
    k->prec = p;
    k->c = c;
    k->r = r;
    k->l = l;
    k->tp = (int)w->nb_tps - 1;
    k->nsop = w->nsop++;
    w->tps[w->nb_tps - 1].nb++;
    return 0;
}

static void fabricate(J2kiPlan *plan, int style)
{
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        const J2kiBand *band = &plan->bands[cb->band_idx];
        uint32_t n = (cb->x1 - cb->x0) * (cb->y1 - cb->y0);
        cb->nb_passes = cb->numbps = 0;
        if (!n || band->nb_mag_bits < 1 || test_rand() % 8 == 0)
            continue;
        cb->numbps = 1 + (int)(test_rand() % (uint32_t)band->nb_mag_bits);
        int np = 3 * cb->numbps - 2;
        if (np > cb->max_passes)
            np = cb->max_passes;
        cb->nb_passes = np;
        uint32_t rate = 0;
        for (int k = 0; k < np; k++) {
            uint32_t inc = test_rand() % 6 == 0 ? 0 : test_rand() % (2 + n / 8);
            rate = rate + inc > cb->data_cap ? cb->data_cap : rate + inc;
            cb->passes[k].rate = rate;
            cb->passes[k].dist = (double)n * (double)(1u << (2 * (cb->numbps - k / 3) % 30)) *
                                 (0.05 + (test_rand() % 1000) / 1000.0);
            cb->passes[k].term = (style & J2KI_CBLK_TERMALL) ? 1 : (style & J2KI_CBLK_BYPASS) ? (test_rand() & 1) : 0;
        }
        cb->passes[np - 1].term = 1;
        for (uint32_t b = 0; b < rate; b++)
            cb->data[b] = (uint8_t)test_rand();
    }
}

/* The codestream as t2_cuda.cu lays it out; returns its length or < 0. */
static int64_t cells_write(J2kiPlan *plan, uint8_t *out, size_t cap)
{
    const J2kiCodingParams *cp = plan->cp;
    int L = cp->nb_layers, scan = (cp->cblk_style & (J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL)) != 0;
    uint32_t nb_precs = 0;
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < cp->img.nb_comps; c++)
            for (int r = 0; r < plan->tiles[t].comps[c].nb_res; r++)
                nb_precs += plan->tiles[t].comps[c].res[r].nb_prec_w * plan->tiles[t].comps[c].res[r].nb_prec_h;
    Walk w;
    memset(&w, 0, sizeof(w));
    w.plan = plan;
    w.pkts = calloc((size_t)nb_precs * L + 1, sizeof(Pkt));
    w.tps = calloc(plan->nb_tile_parts + 1, sizeof(Tp));
    int64_t ret = j2ki_t2_walk_packets(plan, visit, &w);
    CHECK(ret == 0 && w.nb_pkts == nb_precs * (uint32_t)L && w.nb_tps == plan->nb_tile_parts,
          "walk: %d, %u packets, %u tile-parts", (int)ret, w.nb_pkts, w.nb_tps);
    uint32_t nb_cells = w.nb_pkts + w.nb_tps + 2;
    uint64_t *len = calloc(nb_cells, 8), *off = calloc(nb_cells, 8);
    uint8_t **pkt_bytes = calloc(w.nb_pkts + 1, sizeof(*pkt_bytes));
    J2kiBytes mh;
    size_t tlm_start;

    /* packets in order: a precinct's layers come in increasing order, so coding each as it
     * comes is the per-precinct sequence the device thread runs */
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < cp->img.nb_comps; c++)
            for (int r = 0; r < plan->tiles[t].comps[c].nb_res; r++) {
                J2kiRes *res = &plan->tiles[t].comps[c].res[r];
                for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++)
                    if (j2ki_t2_prec_load(plan->cblks, plan->bands, res->first_band, &res->precs[p], L) < 0)
                        ret = -1;
            }
    for (uint32_t j = 0; j < w.nb_pkts && !ret; j++) {
        Pkt *k = &w.pkts[j];
        J2kiRes *res = &plan->tiles[k->tile].comps[k->c].res[k->r];
        J2kiPrec *prec = &res->precs[k->prec];
        /* count, then write: the two passes must agree (the device sizes first) */
        J2kiPrec saved = *prec;
        J2kiBytes cnt, b;
        J2kiBits bw;
        j2ki_bytes_init(&cnt, NULL, 0);
        j2ki_bits_init(&bw, &cnt);
        /* counting changes the tag-tree state: copy the trees' nodes and restore them */
        J2kiTgtNode *save_nodes[6] = { 0 };
        uint32_t lb[4096];
        int inc[4096], nb_cb = 0;
        for (int q = 0; q < prec->nb_bands; q++) {
            J2kiTagTree *tr[2] = { prec->bands[q].incl, prec->bands[q].zbp };
            for (int z = 0; z < 2; z++)
                if (tr[z] && tr[z]->nb_nodes) {
                    save_nodes[q * 2 + z] = malloc(tr[z]->nb_nodes * sizeof(J2kiTgtNode));
                    memcpy(save_nodes[q * 2 + z], tr[z]->nodes, tr[z]->nb_nodes * sizeof(J2kiTgtNode));
                }
        }
        J2KI_T2_FOR_CBLKS(plan->cblks, plan->bands, res->first_band, prec, q, pb, band, x, y, cb) {
            if (nb_cb < 4096) {
                lb[nb_cb] = (uint32_t)cb->lblock;
                inc[nb_cb] = cb->included;
            }
            nb_cb++;
        }
        int64_t body = j2ki_t2_prec_header(&bw, plan->cblks, plan->bands, res->first_band, prec, k->l, scan);
        size_t hdr = cnt.pos + (cp->sop ? 6 : 0) + (cp->eph ? 2 : 0);
        for (int q = 0; q < prec->nb_bands; q++) {
            J2kiTagTree *tr[2] = { prec->bands[q].incl, prec->bands[q].zbp };
            for (int z = 0; z < 2; z++)
                if (save_nodes[q * 2 + z]) {
                    memcpy(tr[z]->nodes, save_nodes[q * 2 + z], tr[z]->nb_nodes * sizeof(J2kiTgtNode));
                    free(save_nodes[q * 2 + z]);
                }
        }
        nb_cb = 0;
        J2KI_T2_FOR_CBLKS(plan->cblks, plan->bands, res->first_band, prec, q, pb, band, x, y, cb) {
            if (nb_cb < 4096) {
                cb->lblock = (int)lb[nb_cb];
                cb->included = inc[nb_cb];
            }
            nb_cb++;
        }
        CHECK(nb_cb <= 4096 && body >= 0, "precinct of %d code-blocks", nb_cb);
        *prec = saved;
        pkt_bytes[j] = malloc(hdr + (size_t)body + 1);
        j2ki_bytes_init(&b, pkt_bytes[j], hdr);
        if (cp->sop) {
            j2ki_put16(&b, 0xFF91);
            j2ki_put16(&b, 4);
            j2ki_put16(&b, k->nsop & 0xFFFF);
        }
        j2ki_bits_init(&bw, &b);
        int64_t body2 = j2ki_t2_prec_header(&bw, plan->cblks, plan->bands, res->first_band, prec, k->l, scan);
        if (cp->eph)
            j2ki_put16(&b, 0xFF92);
        CHECK(body2 == body && b.pos == hdr && !b.overflow, "counted %zu bytes, wrote %zu", hdr, b.pos);
        size_t at = hdr;
        J2KI_T2_FOR_CBLKS(plan->cblks, plan->bands, res->first_band, prec, q, pb, band, x, y, cb) {
            int s = cb->included, e = cb->layer_passes[k->l];
            if (e > s) {
                uint32_t from = j2ki_t2_pass_end(cb, s);
                memcpy(pkt_bytes[j] + at, cb->data + from, cb->passes[e - 1].rate - from);
                at += cb->passes[e - 1].rate - from;
            }
        }
        j2ki_t2_prec_commit(plan->cblks, plan->bands, res->first_band, prec, k->l);
        len[j + (uint32_t)k->tp + 2] = at;
    }
    /* tile-part headers: SOT (12) + PLT + SOD (2) */
    for (uint32_t t = 0; t < w.nb_tps; t++) {
        J2kiT2PltCount plt = { 0, -1, 0 };
        for (uint32_t j = w.tps[t].first; j < w.tps[t].first + w.tps[t].nb; j++)
            if (cp->plt)
                j2ki_t2_plt_count_add(&plt, len[j + t + 2]);
        len[w.tps[t].first + t + 1] = 14 + plt.bytes;
    }
    j2ki_bytes_init(&mh, NULL, 0);
    j2ki_main_header(&mh, plan, &tlm_start);
    len[0] = mh.pos;
    len[nb_cells - 1] = 2;
    for (uint32_t i = 1; i < nb_cells; i++)
        off[i] = off[i - 1] + len[i - 1];
    uint64_t total = off[nb_cells - 1] + 2;
    if (ret || total > cap) {
        ret = ret ? ret : J2KC_ERR_BUFSIZE;
        goto done;
    }
    j2ki_bytes_init(&mh, out, cap);
    j2ki_main_header(&mh, plan, &tlm_start);
    for (uint32_t t = 0; t < w.nb_tps; t++) {
        const Tp *tp = &w.tps[t];
        uint64_t o = off[tp->first + t + 1], psot = off[tp->first + tp->nb + t + 2] - o;
        uint8_t *q = out + o;
        put16(q, 0xFF90);                       /* SOT, A.4.2 */
        put16(q + 2, 10);
        put16(q + 4, tp->isot);
        put32(q + 6, (uint32_t)psot);
        q[10] = (uint8_t)tp->tpsot;
        q[11] = (uint8_t)tp->tnsot;
        q += 12;
        if (cp->plt) {                          /* PLT, A.7.3 */
            uint8_t *seg = NULL;
            uint32_t payload = 0, z = 0;
            for (uint32_t j = tp->first; j < tp->first + tp->nb; j++) {
                uint64_t v = len[j + t + 2];
                int n = j2ki_plt_entry_bytes(v);
                if (seg && payload + (uint32_t)n > 65532) {
                    put16(seg + 2, 3 + payload);
                    seg = NULL;
                }
                if (!seg) {
                    seg = q;
                    put16(q, 0xFF58);
                    q[4] = (uint8_t)z++;
                    q += 5;
                    payload = 0;
                }
                payload += (uint32_t)n;
                for (int i = n - 1; i >= 0; i--)
                    *q++ = (uint8_t)(((v >> (7 * i)) & 0x7F) | (i ? 0x80 : 0));
            }
            if (seg)
                put16(seg + 2, 3 + payload);
        }
        put16(q, 0xFF93);                       /* SOD */
        CHECK(q + 2 == out + off[tp->first + t + 2], "tile-part %u header length", t);
        if (cp->tlm) {                          /* TLM entry t: Ttlm(16), Ptlm(32) */
            size_t at = j2ki_tlm_entry_offset(tlm_start, t);
            put16(out + at, tp->isot);
            put32(out + at + 2, (uint32_t)psot);
        }
        for (uint32_t j = tp->first; j < tp->first + tp->nb; j++)
            memcpy(out + off[j + t + 2], pkt_bytes[j], len[j + t + 2]);
    }
    put16(out + off[nb_cells - 1], 0xFFD9);     /* EOC */
    ret = (int64_t)total;
done:
    for (uint32_t j = 0; j < w.nb_pkts; j++)
        free(pkt_bytes[j]);
    free(pkt_bytes);
    free(len);
    free(off);
    free(w.pkts);
    free(w.tps);
    return ret;
}


/* ---- the parallel header coder (t2_par.h), modelled as t2_cuda.h's warp runs it ---- */

/* One precinct, every layer, as the warp driver does it: leaves, up-sweeps, then per layer
 * groups of G code-blocks counted, placed by a prefix sum in a W-word buffer, cut into bytes.
 * hdr[l] receives the header bytes (without SOP/EPH) when not NULL; returns 0 or -1. */
static int par_prec(J2kiPlan *plan, J2kiPrec *prec, uint32_t first_band, int scan, int G, uint32_t W,
                    uint32_t *hdr_len, uint32_t *body_len, uint8_t (*hdr)[16384])
{
    int L = plan->cp->nb_layers, err = 0, ret = 0;
    unsigned long long mask = 0;
    uint32_t nk[3], N = 0;
    J2kiT2pNode *nd[3] = { NULL, NULL, NULL };
    uint32_t *w = calloc(W, 4);
    uint32_t cnt[64];
    int lbn[64];

    for (int k = 0; k < prec->nb_bands; k++) {
        J2kiPrecBand *pb = &prec->bands[k];
        nk[k] = (pb->cbx1 - pb->cbx0) * (pb->cby1 - pb->cby0);
        N += nk[k];
        if (nk[k])
            nd[k] = calloc(pb->incl->nb_nodes, sizeof(J2kiT2pNode));
    }
#define PAR_CBLK(j_, k_, r_, cb_)                                                                   \
    int k_ = 0;                                                                                     \
    uint32_t r_ = j_;                                                                               \
    while (r_ >= nk[k_]) r_ -= nk[k_++];                                                            \
    J2kiPrecBand *pb_##k_ = &prec->bands[k_];                                                        \
    const J2kiBand *band_##k_ = &plan->bands[first_band + k_];                                       \
    uint32_t w_##k_ = pb_##k_->cbx1 - pb_##k_->cbx0;                                                  \
    J2kiCblk *cb_ = &plan->cblks[band_##k_->first_cblk + (pb_##k_->cby0 + r_ / w_##k_) * band_##k_->nb_cblks_w + \
                                 pb_##k_->cbx0 + r_ % w_##k_];
    for (uint32_t j = 0; j < N; j++) {
        PAR_CBLK(j, k, r, cb)
        int first = j2ki_t2p_first(cb, band_k, L, &mask, &err);
        j2ki_t2p_leaf(nd[k], r, cb, band_k, first, L);
        cb->lblock = 3;
    }
    for (int k = 0; k < prec->nb_bands; k++)
        for (uint32_t n = nk[k]; nk[k] && n < prec->bands[k].incl->nb_nodes; n++)
            j2ki_t2p_inner(nd[k], n);
    if (err) {
        ret = -1;
        goto end;
    }
    for (int k = 0; k < prec->nb_bands; k++) {
        const J2kiTgtNode *tn = nk[k] ? prec->bands[k].incl->nodes : NULL;
        for (uint32_t n = 0; nk[k] && n + 1 < prec->bands[k].incl->nb_nodes; n++) {
            J2kiT2pNode *pa = &nd[k][tn[n].parent];
            J2KI_T2P_MIN(&pa->vi, nd[k][n].vi);
            J2KI_T2P_MIN(&pa->vz, nd[k][n].vz);
            J2KI_T2P_MIN(&pa->fvz, nd[k][n].fvz);
        }
    }
    for (int l = 0; l < L; l++) {
        int P = j2ki_t2p_prev(mask, l), nonempty = (int)(mask >> l & 1);
        uint32_t body = 0, carry = 1;
        J2kiT2pEmit em;
        for (int k = 0; k < prec->nb_bands; k++) {
            const J2kiTgtNode *tn = nk[k] ? prec->bands[k].incl->nodes : NULL;
            for (uint32_t n = 0; nk[k] && n < prec->bands[k].incl->nb_nodes; n++)
                nd[k][n].fvi = n < nk[k] && nd[k][n].vi >= l ? n : UINT32_MAX;
            for (uint32_t n = 0; nk[k] && n + 1 < prec->bands[k].incl->nb_nodes; n++)
                J2KI_T2P_MIN(&nd[k][tn[n].parent].fvi, nd[k][n].fvi);
        }
        memset(w, 0, W * 4);
        w[0] = (uint32_t)nonempty << 31;
        j2ki_t2p_emit_init(&em, hdr ? hdr[l] : NULL);
        for (uint32_t g = 0; nonempty && g < N;) {
            uint32_t use = 0, at = carry, total = 0;
            /* count (every "lane" of the group), then keep the prefix that fits */
            for (int q = 0; q < G && g + (uint32_t)q < N; q++) {
                PAR_CBLK(g + (uint32_t)q, k, r, cb)
                J2kiT2pBits b = { NULL, 0 };
                lbn[q] = j2ki_t2p_cblk_bits(&b, cb, pb_k->incl->nodes, nd[k], r, l, P, cb->lblock, scan);
                cnt[q] = b.pos;
                if (carry + total + cnt[q] > (W - 1) * 32)
                    break;
                total += cnt[q];
                use++;
            }
            if (!use) {
                ret = -1;
                goto end;
            }
            for (uint32_t q = 0; q < use; q++) {
                PAR_CBLK(g + q, k, r, cb)
                J2kiT2pBits b = { w, at };
                j2ki_t2p_cblk_bits(&b, cb, pb_k->incl->nodes, nd[k], r, l, P, cb->lblock, scan);
                CHECK(b.pos == at + cnt[q], "count and write agree");
                at = b.pos;
                cb->lblock = lbn[q];
                body += j2ki_t2p_cblk_body(cb, l);
            }
            uint32_t pos = j2ki_t2p_emit(&em, w, 0, at, 0), rest = at - pos;
            uint32_t keep = rest ? j2ki_t2p_get(w, pos, (int)rest) : 0;
            memset(w, 0, W * 4);
            w[0] = rest ? keep << (32 - rest) : 0;
            carry = rest;
            g += use;
        }
        j2ki_t2p_emit(&em, w, 0, carry, 1);
        hdr_len[l] = em.bytes;
        body_len[l] = body;
    }
#undef PAR_CBLK
end:
    for (int k = 0; k < 3; k++)
        free(nd[k]);
    free(w);
    return ret;
}

/* Every precinct of the plan: the serial coder (t2_core.h) against par_prec, header bytes and
 * body lengths of every layer. Returns the number of (precinct, layer) packets compared. */
static int par_compare(J2kiPlan *plan, int G, uint32_t W, const char *what)
{
    int L = plan->cp->nb_layers, n = 0, scan = (plan->cp->cblk_style & (J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL)) != 0;
    static uint8_t ser[64][16384], par[64][16384];
    uint32_t ser_len[64], par_len[64], ser_body[64], par_body[64];
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < plan->cp->img.nb_comps; c++)
            for (int r = 0; r < plan->tiles[t].comps[c].nb_res; r++) {
                J2kiRes *res = &plan->tiles[t].comps[c].res[r];
                for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++) {
                    J2kiPrec *prec = &res->precs[p];
                    int e1 = j2ki_t2_prec_load(plan->cblks, plan->bands, res->first_band, prec, L), e2 = e1;
                    for (int l = 0; l < L && !e1; l++) {
                        J2kiBytes bb;
                        J2kiBits bw;
                        j2ki_bytes_init(&bb, ser[l], sizeof(ser[l]));
                        j2ki_bits_init(&bw, &bb);
                        int64_t body = j2ki_t2_prec_header(&bw, plan->cblks, plan->bands, res->first_band, prec, l, scan);
                        if (body < 0 || bb.overflow) {
                            e1 = -1;
                            break;
                        }
                        ser_len[l] = (uint32_t)bb.pos;
                        ser_body[l] = (uint32_t)body;
                        j2ki_t2_prec_commit(plan->cblks, plan->bands, res->first_band, prec, l);
                    }
                    e2 = par_prec(plan, prec, res->first_band, scan, G, W, par_len, par_body, par);
                    CHECK((e1 < 0) == (e2 < 0), "%s: tile %u comp %d res %d prec %u: serial %d, parallel %d", what, t,
                          c, r, p, e1, e2);
                    for (int l = 0; l < L && !e1 && !e2; l++) {
                        CHECK(ser_len[l] == par_len[l] && ser_body[l] == par_body[l] &&
                                  !memcmp(ser[l], par[l], ser_len[l]),
                              "%s: tile %u comp %d res %d prec %u layer %d: serial %u+%u bytes, parallel %u+%u", what, t,
                              c, r, p, l, ser_len[l], ser_body[l], par_len[l], par_body[l]);
                        n++;
                    }
                }
            }
    return n;
}

/* Random monotone layer_passes (empty layers, code-blocks never included, all passes at once). */
static void random_layers(J2kiPlan *plan)
{
    int L = plan->cp->nb_layers;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        int n = 0;
        for (int l = 0; l < L; l++) {
            if (cb->nb_passes && test_rand() % 3 == 0)
                n += (int)(test_rand() % (uint32_t)(cb->nb_passes - n + 1));
            cb->layer_passes[l] = (uint16_t)n;
        }
    }
}

static const char *const orders[] = { "lrcp", "rlcp", "rpcl", "pcrl", "cprl" };

static void test_random_plans(int nb)
{
    int compared = 0, with_plt = 0, multi_tp = 0, packets = 0;
    for (int it = 0; it < nb; it++) {
        J2kcParams *p = j2kc_params_alloc();
        J2kcImageDesc img;
        J2kiCodingParams cp;
        J2kiPlan *plan = NULL;
        J2kiLog log = { NULL, NULL, J2KC_LOG_ERROR };
        char v[64];
        int lossless = test_rand() % 3 == 0, layers = 1 + (int)(test_rand() % 4), ret;

        memset(&img, 0, sizeof(img));
        img.nb_comps = test_rand() % 3 ? 3 : 1;
        img.width = 16 + test_rand() % 300;
        img.height = 16 + test_rand() % 200;
        for (int c = 0; c < img.nb_comps; c++) {
            img.depth[c] = 8 + (int)(test_rand() % 5);
            img.dx[c] = img.dy[c] = 1;
        }
        if (img.nb_comps == 3)
            img.depth[1] = img.depth[2] = img.depth[0];
        j2kc_params_set(p, "order", orders[test_rand() % 5]);
        snprintf(v, sizeof(v), "%d", layers);
        j2kc_params_set(p, "layers", v);
        snprintf(v, sizeof(v), "%d", (int)(test_rand() % 6));
        j2kc_params_set(p, "levels", v);
        snprintf(v, sizeof(v), "%dx%d", 4 << (test_rand() % 4), 4 << (test_rand() % 4));
        j2kc_params_set(p, "cblk", v);
        if (test_rand() & 1) {
            snprintf(v, sizeof(v), "%dx%d,%dx%d", 16 << (test_rand() % 3), 16 << (test_rand() % 3),
                     32 << (test_rand() % 3), 32 << (test_rand() % 3));
            j2kc_params_set(p, "prec", v);
        }
        if (test_rand() % 3 == 0) {
            snprintf(v, sizeof(v), "%ux%u", 32 + test_rand() % 100, 32 + test_rand() % 100);
            j2kc_params_set(p, "tiles", v);
        }
        j2kc_params_set(p, "tile_parts", (const char *[]){ "none", "R", "C" }[test_rand() % 3]);
        j2kc_params_set(p, "sop", test_rand() & 1 ? "1" : "0");
        j2kc_params_set(p, "eph", test_rand() & 1 ? "1" : "0");
        j2kc_params_set(p, "plt", test_rand() & 1 ? "1" : "0");
        j2kc_params_set(p, "tlm", test_rand() & 1 ? "1" : "0");
        j2kc_params_set(p, "bypass", test_rand() % 3 == 0 ? "1" : "0");
        j2kc_params_set(p, "termall", test_rand() % 3 == 0 ? "1" : "0");
        if (test_rand() % 4 == 0 && layers > 1)
            j2kc_params_set(p, "poc", "0,0,1,2,3,rpcl/0,0,64,33,3,lrcp");
        if (lossless) {
            j2kc_params_set(p, "lossless", "1");
        } else {
            snprintf(v, sizeof(v), "%u", 2000 + test_rand() % 40000);
            j2kc_params_set(p, "bytes", v);
        }
        memset(&cp, 0, sizeof(cp));
        if ((ret = j2ki_params_finalize(&cp, p, &img, &log)) < 0 || (ret = j2ki_plan_create(&plan, &cp, &log)) < 0) {
            j2kc_params_free(&p);
            it--;                               /* a combination the encoder refuses: draw again */
            continue;
        }
        fabricate(plan, cp.cblk_style);
        ret = j2ki_rc_run(plan, &log);
        if (ret == J2KC_ERR_BUFSIZE) {          /* budget below the headers: nothing to write */
            j2ki_plan_free(&plan);
            j2kc_params_free(&p);
            continue;
        }
        CHECK(ret == 0, "plan %d: rc %d", it, ret);
        size_t cap = (size_t)64 << 20;
        uint8_t *a = malloc(cap), *b = malloc(cap);
        int64_t size = j2ki_t2_size(plan, NULL, NULL);
        int64_t na = j2ki_codestream_write(plan, a, cap);
        int64_t nb2 = cells_write(plan, b, cap);
        CHECK(na > 0 && na == nb2 && na == size && !memcmp(a, b, (size_t)na),
              "plan %d (%ux%u, %d comps, %d layers, %s): t2_ref.c %lld, size %lld, cells %lld", it, img.width,
              img.height, img.nb_comps, layers, orders[cp.order], (long long)na, (long long)size, (long long)nb2);
        compared++;
        packets += par_compare(plan, 32, J2KI_T2_WARP_WORDS_HOST, "rate-controlled");
        random_layers(plan);
        packets += par_compare(plan, 1 + (int)(test_rand() % 32), 300 + test_rand() % 300, "random layers");
        with_plt += cp.plt;
        multi_tp += plan->nb_tile_parts > 1;
        free(a);
        free(b);
        j2ki_plan_free(&plan);
        j2kc_params_free(&p);
    }
    printf("# %d plans compared (%d with PLT, %d with several tile-parts); parallel header coder: %d packets\n",
           compared, with_plt, multi_tp, packets);
    CHECK(compared >= nb / 2, "only %d of %d random plans could be compared", compared, nb);
}

int main(void)
{
    test_seed("t2_core", 20261122);
    test_plt_rule();
    test_random_plans(60);
    return test_done("test_t2_core");
}
