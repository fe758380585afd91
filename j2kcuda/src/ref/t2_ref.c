/*
 * Tier-2 coding, ISO/IEC 15444-1 B.9-B.12 and A.4: packets in progression order, packet
 * headers, tile-parts, and the codestream around them.
 *
 * One walk over a tile's packets (t2_walk) serves three purposes: counting tile-parts when the
 * plan is built, sizing (j2ki_t2_size: headers coded into a counting writer, code-block data
 * only counted, PLT by t2_core.h's counting rule, the sums by J2kiT2Tally, which the threaded
 * sizer of t2_sizer.c shares), and writing. Writing a tile takes two walks: the first sizes its tile-parts
 * (Psot and the PLT bytes must precede the packets), the second writes them; TLM entries in the
 * main header are patched as each tile-part starts. The per-tile tier-2 state (tag trees,
 * Lblock, passes sent, layers sent per precinct) lives in the plan and is reset at the start of
 * every walk, so nothing is allocated here.
 */
#include <string.h>

#include "ref/t2_ref.h"
#include "hd/t2_core.h"
#include "hd/tgt.h"
#include "core/markers.h"

/* TPsot is 8 bits (A.4.2) */
#define T2_MAX_TILE_PARTS 255

enum { MODE_COUNT = 0, MODE_SIZE, MODE_WRITE };

/* PLT segments (A.7.3) of one tile-part, written one packet length at a time; a segment is
 * closed, and its Lplt patched, when the next entry would not fit (the rule that
 * j2ki_t2_plt_count_add counts, and tp_close checks, by). */
typedef struct Plt {
    J2kiBytes b;
    size_t    seg_start;
    uint32_t  payload;
    uint32_t  z;
    int       open;
} Plt;

typedef struct TilePartInfo {
    uint64_t packet_bytes;
    uint64_t plt_bytes;
    int      comp;                 /* component of its first packet (0 when it has none) */
    int      res;                  /* resolution of its first packet (0 when it has none) */
} TilePartInfo;

typedef struct T2 {
    J2kiPlan *pl;
    const J2kiCodingParams *cp;
    int       mode;
    J2kiBytes *out;                /* MODE_WRITE: the codestream; MODE_SIZE: a counter */
    uint32_t  nsop;                /* SOP Nsop, per tile (A.8.1) */
    int       tp;                  /* current tile-part of the tile, -1 before the first */
    TilePartInfo tps[T2_MAX_TILE_PARTS];
    Plt       plt;                 /* MODE_WRITE */
    J2kiT2PltCount plt_count;      /* MODE_SIZE */
    /* MODE_WRITE */
    size_t    tp_start;
    uint64_t  tp_psot;
    size_t    tlm_start;
    uint32_t  tlm_k;
    /* MODE_COUNT: optional visitor (j2ki_t2_walk_packets) */
    J2kiT2PacketFn visit;
    void     *visit_opaque;
    /* MODE_SIZE of j2ki_t2_size: the sums (packets as they are sized, tile-parts per tile) */
    J2kiT2Tally *tally;
    int       err;
} T2;

/* ---- PLT ------------------------------------------------------------------------------ */

static void plt_begin(Plt *p, uint8_t *buf, size_t cap)
{
    j2ki_bytes_init(&p->b, buf, cap);
    p->payload = 0;
    p->z = 0;
    p->open = 0;
}

static void plt_close(Plt *p)
{
    if (p->open)
        j2ki_patch16(&p->b, p->seg_start + 2, 3 + p->payload);
    p->open = 0;
}

static void plt_add(Plt *p, uint64_t len)
{
    int n = j2ki_plt_entry_bytes(len);

    if (p->open && p->payload + (uint32_t)n > J2KI_T2_PLT_MAX_PAYLOAD)
        plt_close(p);
    if (!p->open) {
        p->seg_start = p->b.pos;
        j2ki_put16(&p->b, J2KI_MS_PLT);
        j2ki_put16(&p->b, 0);                 /* Lplt, patched by plt_close */
        j2ki_put8(&p->b, p->z++ & 0xFF);      /* Zplt */
        p->payload = 0;
        p->open = 1;
    }
    j2ki_put_plt_entry(&p->b, len);
    p->payload += (uint32_t)n;
}

/* ---- per-tile state --------------------------------------------------------------------- */

/* Resets what the decoder would know of every code-block of the tile, and loads the tag trees
 * with this frame's values (t2_core.h, j2ki_t2_prec_load). */
static int tile_reset(J2kiPlan *pl, J2kiTile *tile, int load_trees)
{
    const J2kiCodingParams *cp = pl->cp;
    int ret;

    for (int c = 0; c < cp->img.nb_comps; c++) {
        J2kiTileComp *tc = &tile->comps[c];
        for (int r = 0; r < tc->nb_res; r++) {
            J2kiRes *res = &tc->res[r];
            uint32_t nb_precs = res->nb_prec_w * res->nb_prec_h;
            for (uint32_t p = 0; p < nb_precs; p++) {
                J2kiPrec *prec = &res->precs[p];
                prec->nb_layers_sent = 0;
                if (load_trees &&
                    (ret = j2ki_t2_prec_load(pl->cblks, pl->bands, res->first_band, prec, cp->nb_layers)) < 0)
                    return ret;
            }
        }
    }
    return 0;
}

/* ---- packets ---------------------------------------------------------------------------- */

int64_t j2ki_t2_packet_head(J2kiBytes *o, J2kiPlan *plan, uint32_t first_band, J2kiPrec *prec, int l,
                            uint32_t nsop)
{
    const J2kiCodingParams *cp = plan->cp;
    const int scan = (cp->cblk_style & (J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL | J2KI_CBLK_HT)) != 0;
    int64_t body;
    J2kiBits bw;

    if (cp->sop)
        j2ki_mk_sop(o, nsop);
    j2ki_bits_init(&bw, o);
    body = j2ki_t2_prec_header(&bw, plan->cblks, plan->bands, first_band, prec, l, scan);
    if (body >= 0 && cp->eph)
        j2ki_mk_eph(o);
    return body;
}

/*
 * One packet (B.9, B.10): [SOP] header [EPH] body; the header is coded by t2_core.h, the code
 * the device tier-2 runs too. Returns its length in bytes, or < 0.
 */
static int64_t code_packet(T2 *t2, J2kiTile *tile, int c, int r, uint32_t p, int l)
{
    J2kiPlan *pl = t2->pl;
    J2kiRes *res = &tile->comps[c].res[r];
    J2kiPrec *prec = &res->precs[p];
    J2kiBytes *o = t2->out;
    size_t start = o->pos;
    int64_t body = j2ki_t2_packet_head(o, pl, res->first_band, prec, l, t2->nsop++);

    if (body < 0)
        return body;
    /* B.9: the code-blocks' new bytes, in the order of the header */
    if (t2->mode == MODE_WRITE) {
        J2KI_T2_FOR_CBLKS(pl->cblks, pl->bands, res->first_band, prec, k, pb, band, x, y, cb) {
            int s = cb->included, e = cb->layer_passes[l];
            if (e > s) {
                uint32_t from = j2ki_t2_pass_end(cb, s);
                j2ki_put_bytes(o, cb->data + from, cb->passes[e - 1].rate - from);
            }
        }
    } else {
        o->pos += (uint64_t)body;
    }
    j2ki_t2_prec_commit(pl->cblks, pl->bands, res->first_band, prec, l);
    return (int64_t)(o->pos - start);
}

/* ---- tile-parts ------------------------------------------------------------------------- */

static void tp_close(T2 *t2)
{
    if (t2->tp < 0)
        return;
    if (t2->mode == MODE_SIZE) {
        t2->tps[t2->tp].plt_bytes = t2->cp->plt ? t2->plt_count.bytes : 0;
    } else if (t2->mode == MODE_WRITE) {
        if (t2->cp->plt)
            plt_close(&t2->plt);
        /* the tile-part as sized: Psot, and the PLT bytes reserved for it */
        if (!t2->out->overflow &&
            (t2->plt.b.pos != t2->tps[t2->tp].plt_bytes || t2->out->pos - t2->tp_start != t2->tp_psot))
            t2->err = J2KC_ERR_INTERNAL;
    }
}

/* Opens the tile-part that starts with a packet of component c, resolution r (an empty
 * tile-part: 0, 0). */
static int tp_open(T2 *t2, J2kiTile *tile, int c, int r)
{
    TilePartInfo *tp;

    tp_close(t2);
    if (++t2->tp >= T2_MAX_TILE_PARTS)
        return J2KC_ERR_UNSUPPORTED;
    tp = &t2->tps[t2->tp];
    if (t2->mode == MODE_SIZE || t2->mode == MODE_COUNT) {
        tp->packet_bytes = 0;
        tp->plt_bytes = 0;
        tp->comp = c;
        tp->res = r;
        t2->plt_count = (J2kiT2PltCount){ 0, -1, 0 };
    } else {
        J2kiBytes *o = t2->out;
        uint64_t psot = J2KI_T2_TP_FIXED_BYTES + tp->plt_bytes + tp->packet_bytes;
        if (psot > UINT32_MAX)
            return J2KC_ERR_UNSUPPORTED;
        t2->tp_start = o->pos;
        t2->tp_psot = psot;
        if (t2->cp->tlm) {
            size_t at = j2ki_tlm_entry_offset(t2->tlm_start, t2->tlm_k++);
            j2ki_patch16(o, at, (uint32_t)tile->index);
            j2ki_patch32(o, at + 2, (uint32_t)psot);
        }
        j2ki_mk_sot(o, (uint32_t)tile->index, (uint32_t)psot, t2->tp, tile->nb_tile_parts);
        /* the PLT segments are filled in place while the packets go out */
        if (tp->plt_bytes > o->cap - o->pos) {
            o->overflow = 1;
            plt_begin(&t2->plt, NULL, 0);
        } else {
            plt_begin(&t2->plt, o->buf ? o->buf + o->pos : NULL, (size_t)tp->plt_bytes);
            o->pos += (size_t)tp->plt_bytes;
        }
        j2ki_mk_sod(o);
    }
    return 0;
}

static int on_packet(T2 *t2, J2kiTile *tile, int c, int r, uint32_t p, int l, int new_tp)
{
    int64_t len;
    int ret;

    if (new_tp && (ret = tp_open(t2, tile, c, r)) < 0)
        return ret;
    if (t2->mode == MODE_COUNT)
        return t2->visit ? t2->visit(t2->visit_opaque, tile, c, r, p, l, new_tp) : 0;
    len = code_packet(t2, tile, c, r, p, l);
    if (len < 0)
        return (int)len;
    if (t2->mode == MODE_SIZE) {
        if (t2->cp->plt)
            j2ki_t2_plt_count_add(&t2->plt_count, (uint64_t)len);
        t2->tps[t2->tp].packet_bytes += (uint64_t)len;
        if (t2->tally)
            j2ki_t2_tally_packet(t2->tally, c, r, l, (uint64_t)len);
    } else if (t2->cp->plt) {
        plt_add(&t2->plt, (uint64_t)len);
    }
    return 0;
}

/* ---- progression (B.12) ----------------------------------------------------------------- */

typedef struct Walk {
    T2   *t2;
    J2kiTile *tile;
    int   first, entry_start, prev_c, prev_r;
} Walk;

/* Emits packet (c, r, p, l) unless an earlier POC entry already did (B.12.2); a precinct's
 * layers always go out in order, so "already emitted" is "l < layers sent". */
static int emit(Walk *w, int c, int r, uint32_t p, int l)
{
    const J2kiCodingParams *cp = w->t2->cp;
    J2kiPrec *prec = &w->tile->comps[c].res[r].precs[p];
    int new_tp;

    if (l != prec->nb_layers_sent)
        return 0;
    prec->nb_layers_sent++;
    new_tp = w->first || w->entry_start ||
             (cp->tp_split == J2KI_TP_RES && r != w->prev_r) ||
             (cp->tp_split == J2KI_TP_COMP && c != w->prev_c);
    w->first = w->entry_start = 0;
    w->prev_c = c;
    w->prev_r = r;
    return on_packet(w->t2, w->tile, c, r, p, l, new_tp);
}

static int t2_walk(T2 *t2, J2kiTile *tile)
{
    const J2kiCodingParams *cp = t2->cp;
    int nb_comps = cp->img.nb_comps, nb_res = cp->nb_levels + 1;
    int nb_entries = cp->nb_poc > 0 ? cp->nb_poc : 1;
    Walk w = { t2, tile, 1, 0, -1, -1 };
    int ret;

    t2->nsop = 0;
    t2->tp = -1;
    for (int i = 0; i < nb_entries; i++) {
        J2kiPoc e = { 0, 0, cp->nb_layers, nb_res, nb_comps, cp->order };
        if (cp->nb_poc > 0) {
            e = cp->poc[i];
            /* B.12.2: a new tile-part starts with each POC entry */
            w.entry_start = 1;
        }
        e.layer_e = j2ki_imin(e.layer_e, cp->nb_layers);
        e.res_e = j2ki_imin(e.res_e, nb_res);
        e.comp_e = j2ki_imin(e.comp_e, nb_comps);
        switch (e.order) {
        case J2KI_LRCP:
            for (int l = 0; l < e.layer_e; l++)
                for (int r = e.res_s; r < e.res_e; r++)
                    for (int c = e.comp_s; c < e.comp_e; c++) {
                        const J2kiRes *res = &tile->comps[c].res[r];
                        for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++)
                            if ((ret = emit(&w, c, r, p, l)) < 0)
                                return ret;
                    }
            break;
        case J2KI_RLCP:
            for (int r = e.res_s; r < e.res_e; r++)
                for (int l = 0; l < e.layer_e; l++)
                    for (int c = e.comp_s; c < e.comp_e; c++) {
                        const J2kiRes *res = &tile->comps[c].res[r];
                        for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++)
                            if ((ret = emit(&w, c, r, p, l)) < 0)
                                return ret;
                    }
            break;
        default: {
            /* RPCL, PCRL, CPRL: the precincts sorted by their reference-grid position at plan time */
            const J2kiPrecPos *ord = tile->prec_order[e.order - J2KI_RPCL];
            if (!ord && tile->nb_precs)
                return J2KC_ERR_INTERNAL;
            for (uint32_t i2 = 0; i2 < tile->nb_precs; i2++) {
                int c = ord[i2].comp, r = ord[i2].res;
                if (c < e.comp_s || c >= e.comp_e || r < e.res_s || r >= e.res_e)
                    continue;
                for (int l = 0; l < e.layer_e; l++)
                    if ((ret = emit(&w, c, r, ord[i2].prec, l)) < 0)
                        return ret;
            }
            break;
        }
        }
    }
    /* a tile without any packet still has its tile-part (A.4.2) */
    if (t2->tp < 0) {
        if ((ret = tp_open(t2, tile, 0, 0)) < 0)
            return ret;
        if (t2->mode == MODE_COUNT && t2->visit && (ret = t2->visit(t2->visit_opaque, tile, 0, 0, 0, -1, 1)) < 0)
            return ret;
    }
    tp_close(t2);
    return t2->err;
}

/* ---- entry points ----------------------------------------------------------------------- */

int j2ki_t2_count_tile_parts(J2kiPlan *plan, J2kiTile *tile, const J2kiLog *log)
{
    T2 t2;
    int ret;

    memset(&t2, 0, sizeof(t2));
    t2.pl = plan;
    t2.cp = plan->cp;
    t2.mode = MODE_COUNT;
    tile_reset(plan, tile, 0);
    ret = t2_walk(&t2, tile);
    if (ret == J2KC_ERR_UNSUPPORTED) {
        j2ki_log(log, J2KC_LOG_ERROR, "tile %d: more than 255 tile-parts", tile->index);
        return ret;
    }
    if (ret < 0)
        return ret;
    for (int c = 0; c < plan->cp->img.nb_comps; c++) {
        const J2kiTileComp *tc = &tile->comps[c];
        for (int r = 0; r < tc->nb_res; r++) {
            const J2kiRes *res = &tc->res[r];
            for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++) {
                if (res->precs[p].nb_layers_sent != plan->cp->nb_layers) {
                    j2ki_log(log, J2KC_LOG_ERROR,
                             "tile %d: the progression order changes leave packets out "
                             "(component %d, resolution %d, precinct %u)", tile->index, c, r, p);
                    return J2KC_ERR_INVAL;
                }
            }
        }
    }
    return t2.tp + 1;
}

int j2ki_t2_walk_packets(J2kiPlan *plan, J2kiT2PacketFn fn, void *opaque)
{
    T2 t2;
    int ret;

    memset(&t2, 0, sizeof(t2));
    t2.pl = plan;
    t2.cp = plan->cp;
    t2.mode = MODE_COUNT;
    t2.visit = fn;
    t2.visit_opaque = opaque;
    for (uint32_t t = 0; t < plan->nb_tiles; t++) {
        tile_reset(plan, &plan->tiles[t], 0);
        if ((ret = t2_walk(&t2, &plan->tiles[t])) < 0)
            return ret;
    }
    return 0;
}

int64_t j2ki_main_header_size(const J2kiPlan *plan)
{
    J2kiBytes b;
    size_t tlm;

    j2ki_bytes_init(&b, NULL, 0);
    j2ki_main_header(&b, plan, &tlm);
    return (int64_t)b.pos;
}

void j2ki_t2_tally_init(J2kiT2Tally *t, const J2kiPlan *plan)
{
    memset(t, 0, sizeof(*t));
    t->cp = plan->cp;
    t->total = (uint64_t)j2ki_main_header_size(plan) + 2;    /* + EOC */
}

void j2ki_t2_tally_tile_part(J2kiT2Tally *t, int c, int r, uint64_t plt_bytes, uint64_t packet_bytes)
{
    const uint64_t hdr = J2KI_T2_TP_FIXED_BYTES + plt_bytes;     /* SOT, PLT, SOD */
    t->total += hdr + packet_bytes;
    if (j2ki_t2_tally_counts(t, r))
        t->comp[c] += hdr;
}

int64_t j2ki_t2_tally_end(const J2kiT2Tally *t, uint64_t *comp_len, uint64_t *layer_len)
{
    if (comp_len)
        for (int c = 0; c < t->cp->img.nb_comps; c++)
            comp_len[c] = t->comp[c];
    if (layer_len) {
        /* truncated after layer l: everything but the packets of the layers above it */
        uint64_t above = 0;
        for (int l = t->cp->nb_layers - 1; l >= 0; l--) {
            layer_len[l] = t->total - above;
            above += t->layer[l];
        }
    }
    return (int64_t)t->total;
}

int64_t j2ki_t2_size(J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len)
{
    T2 t2;
    J2kiBytes counter;
    J2kiT2Tally tally;
    int ret;

    memset(&t2, 0, sizeof(t2));
    t2.pl = plan;
    t2.cp = plan->cp;
    t2.mode = MODE_SIZE;
    t2.out = &counter;
    t2.tally = &tally;
    j2ki_t2_tally_init(&tally, plan);
    for (uint32_t t = 0; t < plan->nb_tiles; t++) {
        J2kiTile *tile = &plan->tiles[t];
        j2ki_bytes_init(&counter, NULL, 0);
        if ((ret = tile_reset(plan, tile, 1)) < 0 || (ret = t2_walk(&t2, tile)) < 0)
            return ret;
        for (int k = 0; k <= t2.tp; k++)
            j2ki_t2_tally_tile_part(&tally, t2.tps[k].comp, t2.tps[k].res, t2.tps[k].plt_bytes,
                                    t2.tps[k].packet_bytes);
    }
    return j2ki_t2_tally_end(&tally, comp_len, layer_len);
}

int64_t j2ki_codestream_write(J2kiPlan *plan, uint8_t *out, size_t cap)
{
    T2 t2;
    J2kiBytes o, counter;
    int ret;

    memset(&t2, 0, sizeof(t2));
    t2.pl = plan;
    t2.cp = plan->cp;
    j2ki_bytes_init(&o, out, cap);
    j2ki_main_header(&o, plan, &t2.tlm_start);
    for (uint32_t t = 0; t < plan->nb_tiles; t++) {
        J2kiTile *tile = &plan->tiles[t];
        /* walk 1: sizes of this tile's tile-parts */
        t2.mode = MODE_SIZE;
        t2.out = &counter;
        j2ki_bytes_init(&counter, NULL, 0);
        if ((ret = tile_reset(plan, tile, 1)) < 0 || (ret = t2_walk(&t2, tile)) < 0)
            return ret;
        /* walk 2: the same packets, written */
        t2.mode = MODE_WRITE;
        t2.out = &o;
        if ((ret = tile_reset(plan, tile, 1)) < 0 || (ret = t2_walk(&t2, tile)) < 0)
            return ret;
        if (o.overflow)
            return J2KC_ERR_BUFSIZE;
    }
    j2ki_mk_eoc(&o);
    if (o.overflow)
        return J2KC_ERR_BUFSIZE;
    return (int64_t)o.pos;
}
