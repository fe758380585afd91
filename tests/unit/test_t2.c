/*
 * Tier-2: a packet header worked out by hand bit by bit, then random code-block states
 * (passes, rates, terminations, zero bit-planes, layers) written as whole codestreams for
 * random geometries, progression orders, POC lists, tile-part splits, SOP/EPH/PLT/TLM, and
 * read back by a decoder written here from Annex A and B: its own packet order (the literal
 * loops of B.12 over the reference grid, with POC and "never repeat a packet"), its own tag-tree
 * decoder, bit unstuffing, Table B.4 and Lblock parsing. Every decoded pass count, zero
 * bit-plane count, length and byte must match, and j2ki_t2_size must equal what was written.
 */
#include "test.h"
#include "core/plan.h"
#include "ref/t2_ref.h"
#include "core/markers.h"

static void default_cp(J2kiCodingParams *cp)
{
    memset(cp, 0, sizeof(*cp));
    cp->img.nb_comps = 1;
    cp->img.width = cp->img.height = 8;
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        cp->img.depth[c] = 8;
        cp->img.dx[c] = cp->img.dy[c] = 1;
    }
    cp->nb_layers = 1;
    cp->nb_levels = 0;
    cp->log2_cblk_w = cp->log2_cblk_h = 6;
    cp->reversible = 1;
    cp->guard_bits = 2;
    cp->bypass_start = 4;
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp->prec_log2_w[r] = cp->prec_log2_h[r] = 15;
}

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) << 16 | rd16(p + 2); }

/* ---- header bit reader (B.10.1) ---- */
typedef struct { const uint8_t *p; size_t pos, end; int ct; uint32_t cur; int bad; } Rd;

static void rd_init(Rd *r, const uint8_t *p, size_t pos, size_t end) { r->p = p; r->pos = pos; r->end = end; r->ct = 0; r->cur = 0; r->bad = 0; }
static int rd_bit(Rd *r)
{
    if (r->ct == 0) {
        int stuffed = r->cur == 0xFF;
        if (r->pos >= r->end) { r->bad = 1; return 0; }
        r->cur = r->p[r->pos++];
        r->ct = stuffed ? 7 : 8;
        if (stuffed && (r->cur & 0x80)) r->bad = 1;
    }
    r->ct--;
    return (int)(r->cur >> r->ct) & 1;
}
static uint32_t rd_bits(Rd *r, int n) { uint32_t v = 0; while (n-- > 0) v = v << 1 | (uint32_t)rd_bit(r); return v; }
static size_t rd_align(Rd *r) { if (r->cur == 0xFF) { if (r->pos >= r->end || r->p[r->pos] != 0) r->bad = 1; r->pos++; } r->ct = 0; r->cur = 0; return r->pos; }

/* ---- tag-tree decoder ---- */
typedef struct { int lv, w[40], off[40]; int *low, *val, *known; } Dec;

static void dec_init(Dec *d, int w, int h)
{
    int n = 0;
    d->lv = 0;
    for (;;) {
        d->w[d->lv] = w; d->off[d->lv] = n;
        n += w * h; d->lv++;
        if (w == 1 && h == 1) break;
        w = (w + 1) / 2; h = (h + 1) / 2;
    }
    d->low = calloc((size_t)n, sizeof(int)); d->val = calloc((size_t)n, sizeof(int)); d->known = calloc((size_t)n, sizeof(int));
}
static void dec_free(Dec *d) { free(d->low); free(d->val); free(d->known); }
static int dec_leaf(Dec *d, Rd *r, int x, int y, int thr, int *v)
{
    int low = 0, idx = 0;
    for (int k = d->lv - 1; k >= 0; k--) {
        idx = d->off[k] + (y >> k) * d->w[k] + (x >> k);
        if (d->low[idx] > low) low = d->low[idx];
        if (!d->known[idx])
            while (low < thr) {
                if (rd_bit(r)) { d->known[idx] = 1; d->val[idx] = low; break; }
                low++;
            }
        d->low[idx] = low;
    }
    if (d->known[idx]) { *v = d->val[idx]; return 1; }
    return 0;
}

/* ---- the packet order, literally (B.12) ---- */
typedef struct { int c, r, l; uint32_t p; int entry; } Pkt;

static int prec_at(const J2kiCodingParams *cp, const J2kiTile *tile, int c, int r, uint32_t x, uint32_t y, uint32_t *k)
{
    int NL = cp->nb_levels;
    const J2kiRes *res = &tile->comps[c].res[r];
    uint64_t sx = (uint64_t)cp->img.dx[c] << (NL - r), sy = (uint64_t)cp->img.dy[c] << (NL - r);
    int ppx = res->log2_prec_w, ppy = res->log2_prec_h;
    int cy = (y % (sy << ppy) == 0) || (y == tile->y0 && (((uint64_t)res->y0 << (NL - r)) % ((uint64_t)1 << (ppy + NL - r))) != 0);
    int cx = (x % (sx << ppx) == 0) || (x == tile->x0 && (((uint64_t)res->x0 << (NL - r)) % ((uint64_t)1 << (ppx + NL - r))) != 0);
    uint64_t rx = (x + sx - 1) / sx, ry = (y + sy - 1) / sy;
    if (!res->nb_prec_w || !res->nb_prec_h || !cx || !cy) return 0;
    *k = (uint32_t)(((rx >> ppx) - (res->x0 >> ppx)) + res->nb_prec_w * ((ry >> ppy) - (res->y0 >> ppy)));
    return 1;
}

static int brute_packets(const J2kiCodingParams *cp, const J2kiTile *tile, Pkt *out, int max)
{
    int n = 0, NL = cp->nb_levels, ne = cp->nb_poc ? cp->nb_poc : 1;
    static uint8_t done[4][8][8192][8];
    memset(done, 0, sizeof(done));
#define EMIT(C, R, P, L) do { if (!done[C][R][P][L]) { done[C][R][P][L] = 1; if (n < max) { out[n].c = C; out[n].r = R; out[n].p = P; out[n].l = L; out[n].entry = e; } n++; } } while (0)
    for (int e = 0; e < ne; e++) {
        J2kiPoc q = { 0, 0, cp->nb_layers, NL + 1, cp->img.nb_comps, cp->order };
        if (cp->nb_poc) q = cp->poc[e];
        if (q.layer_e > cp->nb_layers) q.layer_e = cp->nb_layers;
        if (q.res_e > NL + 1) q.res_e = NL + 1;
        if (q.comp_e > cp->img.nb_comps) q.comp_e = cp->img.nb_comps;
        if (q.order == J2KI_LRCP || q.order == J2KI_RLCP) {
            for (int a = 0; a < (q.order == J2KI_LRCP ? q.layer_e : q.res_e); a++)
                for (int b = (q.order == J2KI_LRCP ? q.res_s : 0); b < (q.order == J2KI_LRCP ? q.res_e : q.layer_e); b++)
                    for (int c = q.comp_s; c < q.comp_e; c++) {
                        int l = q.order == J2KI_LRCP ? a : b, r = q.order == J2KI_LRCP ? b : a;
                        const J2kiRes *res = &tile->comps[c].res[r];
                        if (q.order == J2KI_RLCP && r < q.res_s) continue;
                        for (uint32_t p = 0; p < res->nb_prec_w * res->nb_prec_h; p++) EMIT(c, r, p, l);
                    }
            continue;
        }
        for (int o = 0; o < (q.order == J2KI_RPCL ? NL + 1 : q.order == J2KI_CPRL ? cp->img.nb_comps : 1); o++)
            for (uint32_t y = tile->y0; y < tile->y1; y++)
                for (uint32_t x = tile->x0; x < tile->x1; x++)
                    for (int i = 0; i < (q.order == J2KI_RPCL ? cp->img.nb_comps : q.order == J2KI_PCRL ? cp->img.nb_comps : NL + 1); i++)
                        for (int m = 0; m < (q.order == J2KI_PCRL ? NL + 1 : 1); m++) {
                            int r = q.order == J2KI_RPCL ? o : q.order == J2KI_PCRL ? m : i;
                            int c = q.order == J2KI_RPCL ? i : q.order == J2KI_PCRL ? i : o;
                            uint32_t k;
                            if (r < q.res_s || r >= q.res_e || c < q.comp_s || c >= q.comp_e) continue;
                            if (!prec_at(cp, tile, c, r, x, y, &k)) continue;
                            for (int l = 0; l < q.layer_e; l++) EMIT(c, r, k, l);
                        }
    }
#undef EMIT
    return n;
}

/* ---- decoder state per code-block ---- */
typedef struct { int included, zbp, lblock; } CbState;

static J2kiCblk *cblk_at(J2kiPlan *pl, const J2kiRes *res, int k, uint32_t x, uint32_t y)
{
    const J2kiBand *band = &pl->bands[res->first_band + (uint32_t)k];
    return &pl->cblks[band->first_cblk + y * band->nb_cblks_w + x];
}

/* decodes one packet at *pos; returns 0 on success */
static int read_packet(J2kiPlan *pl, J2kiTile *tile, const Pkt *pk, const uint8_t *cs, size_t *pos, size_t end,
                       CbState *st, Dec *incl, Dec *zbp, uint32_t nsop)
{
    const J2kiCodingParams *cp = pl->cp;
    const J2kiRes *res = &tile->comps[pk->c].res[pk->r];
    const J2kiPrec *prec = &res->precs[pk->p];
    size_t body;
    Rd r;
    int nonempty;
    int newp[4096];
    uint32_t seglen[4096][64];
    int nseg[4096];
    int ncb = 0;

    if (cp->sop) {
        if (*pos + 6 > end || rd16(cs + *pos) != 0xFF91 || rd16(cs + *pos + 2) != 4 || rd16(cs + *pos + 4) != (nsop & 0xFFFF)) return 1;
        *pos += 6;
    }
    rd_init(&r, cs, *pos, end);
    nonempty = rd_bit(&r);
    for (int k = 0; k < prec->nb_bands; k++) {
        const J2kiPrecBand *pb = &prec->bands[k];
        const J2kiBand *band = &pl->bands[res->first_band + (uint32_t)k];
        for (uint32_t y = pb->cby0; y < pb->cby1; y++)
            for (uint32_t x = pb->cbx0; x < pb->cbx1; x++, ncb++) {
                J2kiCblk *cb = cblk_at(pl, res, k, x, y);
                CbState *s = &st[cb - pl->cblks];
                int lx = (int)(x - pb->cbx0), ly = (int)(y - pb->cby0), v, np;
                newp[ncb] = 0;
                nseg[ncb] = 0;
                if (!nonempty) continue;
                if (!s->included) {
                    if (!dec_leaf(&incl[k], &r, lx, ly, pk->l + 1, &v)) continue;
                    if (v != pk->l) return 2;
                    dec_leaf(&zbp[k], &r, lx, ly, 1 << 30, &v);
                    s->zbp = v;
                    if (v != band->nb_mag_bits - cb->numbps) return 3;
                } else if (!rd_bit(&r)) {
                    continue;
                }
                /* Table B.4 */
                if (!rd_bit(&r)) np = 1;
                else if (!rd_bit(&r)) np = 2;
                else {
                    uint32_t t = rd_bits(&r, 2);
                    if (t < 3) np = 3 + (int)t;
                    else {
                        t = rd_bits(&r, 5);
                        if (t < 31) np = 6 + (int)t;
                        else np = 37 + (int)rd_bits(&r, 7);
                    }
                }
                while (rd_bit(&r)) s->lblock++;
                {
                    int a = s->included, e = s->included + np;
                    for (int q = a; q < e;) {
                        int j = q, n = 0;
                        while (j < e - 1 && !cb->passes[j].term) j++;
                        for (n = j - q + 1, v = 0; n > 1; n >>= 1) v++;
                        uint32_t len = rd_bits(&r, s->lblock + v);
                        if (nseg[ncb] < 64) seglen[ncb][nseg[ncb]] = len;
                        nseg[ncb]++;
                        q = j + 1;
                    }
                }
                newp[ncb] = np;
            }
    }
    if (r.bad) return 4;
    *pos = rd_align(&r);
    if (r.bad) return 5;
    if (cp->eph) {
        if (*pos + 2 > end || rd16(cs + *pos) != 0xFF92) return 6;
        *pos += 2;
    }
    /* body, checked against what each code-block was given */
    body = *pos;
    ncb = 0;
    for (int k = 0; k < prec->nb_bands; k++) {
        const J2kiPrecBand *pb = &prec->bands[k];
        for (uint32_t y = pb->cby0; y < pb->cby1; y++)
            for (uint32_t x = pb->cbx0; x < pb->cbx1; x++, ncb++) {
                J2kiCblk *cb = cblk_at(pl, res, k, x, y);
                CbState *s = &st[cb - pl->cblks];
                int want = cb->layer_passes[pk->l] - (pk->l ? cb->layer_passes[pk->l - 1] : 0);
                uint32_t from, to, sum = 0;
                if (newp[ncb] != want) return 7;
                if (!want) continue;
                from = s->included ? cb->passes[s->included - 1].rate : 0;
                to = cb->passes[s->included + want - 1].rate;
                for (int i = 0; i < nseg[ncb] && i < 64; i++) sum += seglen[ncb][i];
                if (nseg[ncb] <= 64 && sum != to - from) return 8;
                if (body + (to - from) > end || memcmp(cs + body, cb->data + from, to - from)) return 9;
                body += to - from;
                s->included += want;
            }
    }
    *pos = body;
    return 0;
}

/* ---- the hand-worked packet ---- */
static void test_hand(void)
{
    J2kiCodingParams cp;
    J2kiPlan *pl = NULL;
    J2kiCblk *cb;
    static uint8_t out[4096];
    int64_t n, sz;
    size_t pos;
    int mb;

    default_cp(&cp);
    if (j2ki_plan_create(&pl, &cp, NULL) < 0) { CHECK(0, "plan"); return; }
    CHECK(pl->nb_cblks == 1, "one code-block");
    cb = &pl->cblks[0];
    mb = pl->bands[0].nb_mag_bits;
    /* 3 passes (rates 5, 9, 12; only the last terminated), 2 zero bit-planes, one layer */
    cb->nb_passes = 3;
    cb->numbps = mb - 2;
    cb->passes[0].rate = 5; cb->passes[1].rate = 9; cb->passes[2].rate = 12;
    cb->passes[2].term = 1;
    for (int i = 0; i < 12; i++) cb->data[i] = (uint8_t)(0xA0 + i);
    cb->layer_passes[0] = 3;
    n = j2ki_codestream_write(pl, out, sizeof(out));
    sz = j2ki_t2_size(pl, NULL, NULL);
    CHECK(n > 0 && n == sz, "size %lld vs %lld", (long long)n, (long long)sz);
    /* SOT (12) SOD (2) after the main header */
    pos = (size_t)j2ki_main_header_size(pl);
    CHECK(rd16(out + pos) == 0xFF90 && rd32(out + pos + 6) == 12 + 2 + 2 + 12, "Psot %u", rd32(out + pos + 6));
    pos += 14;
    /* 1 | inclusion 1 | zero bit-planes 001 | passes 1100 | Lblock 0 | length 12 in 3+1 bits 1100
     * = 1100 1110 0011 00(00) */
    CHECK(out[pos] == 0xCE && out[pos + 1] == 0x30, "header %02x %02x", out[pos], out[pos + 1]);
    CHECK(out[pos + 2] == 0xA0 && out[pos + 13] == 0xAB && rd16(out + pos + 14) == 0xFFD9, "body and EOC");

    /* the same block in two layers: 1 pass, then 2; layer 1 uses the single inclusion bit */
    cp.nb_layers = 2;
    j2ki_plan_free(&pl);
    if (j2ki_plan_create(&pl, &cp, NULL) < 0) { CHECK(0, "plan"); return; }
    cb = &pl->cblks[0];
    cb->nb_passes = 3;
    cb->numbps = mb - 2;
    cb->passes[0].rate = 5; cb->passes[1].rate = 9; cb->passes[2].rate = 12;
    cb->passes[2].term = 1;
    cb->layer_passes[0] = 1; cb->layer_passes[1] = 3;
    n = j2ki_codestream_write(pl, out, sizeof(out));
    pos = (size_t)j2ki_main_header_size(pl) + 14;
    /* layer 0: 1 1 001 0 (1 pass) 0 (Lblock) 101 (5 in 3 bits) = 1100 1001 01(00 0000) */
    CHECK(out[pos] == 0xC9 && out[pos + 1] == 0x40, "layer 0 %02x %02x", out[pos], out[pos + 1]);
    pos += 2 + 5;
    /* layer 1: 1 | included 1 | 2 passes 10 | Lblock 0 | 7 in 3+1 bits 0111 = 1110 0011 1(000 0000) */
    CHECK(out[pos] == 0xE3 && out[pos + 1] == 0x80, "layer 1 %02x %02x", out[pos], out[pos + 1]);
    CHECK(n == j2ki_t2_size(pl, NULL, NULL), "size 2 layers");
    j2ki_plan_free(&pl);
    printf("ok t2 hand-worked headers\n");
}

static uint8_t cs[1 << 22];
static Pkt pkts[1 << 18];

static void random_cp(J2kiCodingParams *cp, int iter)
{
    default_cp(cp);
    cp->img.nb_comps = 1 + (int)(test_rand() % 3);
    cp->img.width = 1 + test_rand() % 80;
    cp->img.height = 1 + test_rand() % 80;
    cp->img.x0 = test_rand() % 3 ? 0 : test_rand() % 9;
    cp->img.y0 = test_rand() % 3 ? 0 : test_rand() % 9;
    for (int c = 0; c < cp->img.nb_comps; c++) {
        cp->img.dx[c] = 1 + (int)(test_rand() % 3) * (test_rand() % 2);
        cp->img.dy[c] = 1 + (int)(test_rand() % 3) * (test_rand() % 2);
        cp->img.depth[c] = 4 + (int)(test_rand() % 13);
    }
    if (test_rand() % 3 == 0) {
        cp->tile_w = 10 + test_rand() % 40;
        cp->tile_h = 10 + test_rand() % 40;
        cp->tile_x0 = cp->img.x0 ? test_rand() % (cp->img.x0 + 1) : 0;
        cp->tile_y0 = cp->img.y0 ? test_rand() % (cp->img.y0 + 1) : 0;
    }
    cp->nb_levels = (int)(test_rand() % 5);
    cp->log2_cblk_w = 2 + (int)(test_rand() % 5);
    cp->log2_cblk_h = 2 + (int)(test_rand() % 5);
    cp->reversible = (int)(test_rand() % 2);
    cp->guard_bits = 1 + (int)(test_rand() % 3);
    cp->nb_layers = 1 + (int)(test_rand() % 5);
    cp->order = (int)(test_rand() % 5);
    cp->sop = (int)(test_rand() % 2);
    cp->eph = (int)(test_rand() % 2);
    cp->plt = (int)(test_rand() % 2);
    cp->tlm = (int)(test_rand() % 2);
    /* terminations inside a block only come with BYPASS (a pattern tier-2 takes from the pass
     * table) or TERMALL (every pass) */
    cp->cblk_style = (int[]){ 0, 0, J2KI_CBLK_BYPASS, J2KI_CBLK_TERMALL, J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL }[test_rand() % 5];
    cp->tp_split = (int[]){ J2KI_TP_NONE, J2KI_TP_RES, J2KI_TP_COMP }[test_rand() % 3];
    if (test_rand() % 2) {
        cp->user_precincts = 1;
        for (int r = 0; r <= cp->nb_levels; r++) {
            cp->prec_log2_w[r] = (uint8_t)((r ? 1 : 0) + test_rand() % 6);
            cp->prec_log2_h[r] = (uint8_t)((r ? 1 : 0) + test_rand() % 6);
        }
    }
    if (test_rand() % 3 == 0) {
        /* a partial first entry, then one covering everything in another order */
        cp->nb_poc = 2;
        cp->poc[0].res_s = (int)(test_rand() % (uint32_t)(cp->nb_levels + 1));
        cp->poc[0].res_e = cp->poc[0].res_s + 1 + (int)(test_rand() % 2);
        cp->poc[0].comp_s = (int)(test_rand() % (uint32_t)cp->img.nb_comps);
        cp->poc[0].comp_e = cp->poc[0].comp_s + 1;
        cp->poc[0].layer_e = 1 + (int)(test_rand() % (uint32_t)cp->nb_layers);
        cp->poc[0].order = (int)(test_rand() % 5);
        cp->poc[1] = (J2kiPoc){ 0, 0, cp->nb_layers, cp->nb_levels + 1, cp->img.nb_comps, (int)(test_rand() % 5) };
    }
    (void)iter;
}

static void random_states(J2kiPlan *pl)
{
    const J2kiCodingParams *cp = pl->cp;
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        J2kiCblk *cb = &pl->cblks[i];
        int mb = pl->bands[cb->band_idx].nb_mag_bits;
        int maxp, n;
        uint32_t rate = 0;
        cb->numbps = test_rand() % 4 ? (int)(test_rand() % (uint32_t)(mb + 1)) : 0;
        maxp = cb->numbps ? 3 * cb->numbps - 2 : 0;
        n = maxp ? (int)(test_rand() % (uint32_t)(maxp + 1)) : 0;
        if (n && test_rand() % 3 == 0) n = maxp;
        cb->nb_passes = n;
        for (int k = 0; k < n; k++) {
            uint32_t room = (cb->data_cap - rate) / (uint32_t)(n - k + 1);
            rate += test_rand() % 8 == 0 ? 0 : test_rand() % (room + 1);
            cb->passes[k].rate = rate;
            cb->passes[k].term = (uint8_t)(k == n - 1 || (cp->cblk_style & J2KI_CBLK_TERMALL) ||
                                           ((cp->cblk_style & J2KI_CBLK_BYPASS) && test_rand() % 3 == 0));
        }
        for (uint32_t b = 0; b < rate; b++) cb->data[b] = (uint8_t)(test_rand() % 5 == 0 ? 0xFF : test_rand());
        {
            int prev = 0;
            for (int l = 0; l < cp->nb_layers; l++) {
                int v = prev + (n > prev ? (int)(test_rand() % (uint32_t)(n - prev + 1)) : 0);
                if (test_rand() % 3 == 0) v = prev;
                cb->layer_passes[l] = (uint16_t)v;
                prev = v;
            }
        }
    }
}

static void test_random(void)
{
    int nb_packets = 0, nb_nonempty = 0, nb_ff = 0;
    for (int iter = 0; iter < 250; iter++) {
        J2kiCodingParams cp;
        J2kiPlan *pl = NULL;
        uint64_t comp_len[J2KC_MAX_COMPS], layer_len[J2KI_MAX_LAYERS];
        int64_t n, sz, sz2;
        size_t pos, tlm_pos = 0;
        uint32_t tlm_k = 0;
        int ret, fail = 0, ntlm = 0;
        CbState *st;

        random_cp(&cp, iter);
        ret = j2ki_plan_create(&pl, &cp, NULL);
        if (ret == J2KC_ERR_UNSUPPORTED) continue;   /* > 255 tile-parts */
        CHECK(ret == 0, "iter %d: plan %d", iter, ret);
        if (ret) continue;
        random_states(pl);
        memset(comp_len, 0, sizeof(comp_len));
        sz = j2ki_t2_size(pl, comp_len, layer_len);
        sz2 = j2ki_t2_size(pl, NULL, NULL);
        n = j2ki_codestream_write(pl, cs, sizeof(cs));
        CHECK(n > 0 && n == sz && sz == sz2, "iter %d: wrote %lld, size %lld / %lld", iter, (long long)n, (long long)sz, (long long)sz2);
        if (n <= 0) { j2ki_plan_free(&pl); continue; }
        {
            uint64_t s = 0;
            for (int c = 0; c < cp.img.nb_comps; c++) s += comp_len[c];
            CHECK(s + (uint64_t)j2ki_main_header_size(pl) + 2 == (uint64_t)n, "iter %d: comp_len sum", iter);
            CHECK(layer_len[cp.nb_layers - 1] == (uint64_t)n, "layer_len last");
            for (int l = 1; l < cp.nb_layers; l++) CHECK(layer_len[l - 1] <= layer_len[l], "layer_len order");
        }
        /* too small a buffer: BUFSIZE, nothing written past the end */
        cs[n - 1] = 0x5A;
        CHECK(j2ki_codestream_write(pl, cs, (size_t)n - 1) == J2KC_ERR_BUFSIZE && cs[n - 1] == 0x5A, "bufsize");
        n = j2ki_codestream_write(pl, cs, sizeof(cs));

        /* main header: TLM */
        pos = 2;
        while (rd16(cs + pos) != 0xFF90) {
            if (rd16(cs + pos) == 0xFF55) { if (!tlm_pos) tlm_pos = pos; ntlm += (rd16(cs + pos + 2) - 4) / 6; }
            pos += 2 + rd16(cs + pos + 2);
        }
        CHECK(pos == (size_t)j2ki_main_header_size(pl), "main header");
        CHECK(cp.tlm ? ntlm == (int)pl->nb_tile_parts : ntlm == 0, "iter %d: TLM entries %d", iter, ntlm);
        st = calloc(pl->nb_cblks, sizeof(*st));
        for (uint32_t i = 0; i < pl->nb_cblks; i++) st[i].lblock = 3;
        for (uint32_t t = 0; t < pl->nb_tiles && !fail; t++) {
            J2kiTile *tile = &pl->tiles[t];
            int np = brute_packets(&cp, tile, pkts, 1 << 18), next = 0, tp = 0, expect_tp = 0;
            uint32_t nsop = 0, prec_base[J2KC_MAX_COMPS][J2KI_MAX_RES], nprec = 0;
            Dec *ti, *tz;
            uint8_t *have;
            for (int c = 0; c < cp.img.nb_comps; c++)
                for (int r = 0; r <= cp.nb_levels; r++) {
                    prec_base[c][r] = nprec;
                    nprec += tile->comps[c].res[r].nb_prec_w * tile->comps[c].res[r].nb_prec_h;
                }
            ti = calloc((size_t)nprec * 3 + 1, sizeof(Dec));
            tz = calloc((size_t)nprec * 3 + 1, sizeof(Dec));
            have = calloc((size_t)nprec + 1, 1);
            /* how many tile-parts: new one at each POC entry, and at R / C changes */
            for (int i = 0; i < np; i++)
                expect_tp += i == 0 || pkts[i].entry != pkts[i - 1].entry ||
                             (cp.tp_split == J2KI_TP_RES && pkts[i].r != pkts[i - 1].r) ||
                             (cp.tp_split == J2KI_TP_COMP && pkts[i].c != pkts[i - 1].c);
            if (!expect_tp) expect_tp = 1;
            CHECK(expect_tp == tile->nb_tile_parts, "iter %d: %d tile-parts, expected %d", iter, tile->nb_tile_parts, expect_tp);
            while (!fail && (next < np || tp < expect_tp)) {
                size_t sot = pos, end, plt_pos = 0;
                uint32_t psot;
                static uint64_t plt_len[1 << 16];
                int nplt = 0, iplt = 0;
                if (rd16(cs + pos) != 0xFF90 || rd16(cs + pos + 2) != 10) { fail = 1; break; }
                psot = rd32(cs + pos + 6);
                CHECK(rd16(cs + pos + 4) == t && cs[pos + 10] == tp && cs[pos + 11] == expect_tp, "iter %d: SOT fields", iter);
                if (cp.tlm) {
                    size_t e = tlm_pos + 6 * (tlm_k / J2KI_TLM_MAX_ENTRIES + 1) + 6 * (size_t)tlm_k;
                    CHECK(rd16(cs + e) == t && rd32(cs + e + 2) == psot, "iter %d: TLM entry %u", iter, tlm_k);
                    tlm_k++;
                }
                end = sot + psot;
                pos += 12;
                while (rd16(cs + pos) != 0xFF93) {
                    if (rd16(cs + pos) == 0xFF58) {
                        size_t q = pos + 5, qe = pos + 2 + rd16(cs + pos + 2);
                        plt_pos = pos;
                        while (q < qe) {
                            uint64_t v = 0;
                            do v = v << 7 | (cs[q] & 0x7F); while (cs[q++] & 0x80);
                            if (nplt < (1 << 16)) plt_len[nplt++] = v;
                        }
                    }
                    pos += 2 + rd16(cs + pos + 2);
                }
                CHECK(cp.plt || !plt_pos, "PLT only when asked");
                pos += 2;
                /* packets up to the end of the tile-part */
                while (pos < end && next < np) {
                    const Pkt *pk = &pkts[next];
                    size_t start = pos;
                    size_t g = (size_t)(prec_base[pk->c][pk->r] + pk->p) * 3;
                    int e;
                    /* a precinct's trees persist over its layers: made at its first packet */
                    if (!have[g / 3]) {
                        const J2kiPrec *prec = &tile->comps[pk->c].res[pk->r].precs[pk->p];
                        for (int k = 0; k < prec->nb_bands; k++) {
                            const J2kiPrecBand *pb = &prec->bands[k];
                            int w = (int)(pb->cbx1 - pb->cbx0), h = (int)(pb->cby1 - pb->cby0);
                            if (w && h) { dec_init(&ti[g + (size_t)k], w, h); dec_init(&tz[g + (size_t)k], w, h); }
                        }
                        have[g / 3] = 1;
                    }
                    e = read_packet(pl, tile, pk, cs, &pos, end, st, &ti[g], &tz[g], nsop);
                    CHECK(e == 0, "iter %d tile %u packet %d (c%d r%d p%u l%d): error %d", iter, t, next, pk->c, pk->r, pk->p, pk->l, e);
                    if (e) { fail = 1; break; }
                    for (size_t i = start; i < pos; i++) nb_ff += cs[i] == 0xFF;
                    nb_packets++;
                    nb_nonempty += (cs[start + (cp.sop ? 6 : 0)] & 0x80) != 0;
                    if (cp.plt) {
                        CHECK(iplt < nplt && plt_len[iplt] == pos - start, "iter %d: PLT entry %d", iter, iplt);
                        iplt++;
                    }
                    nsop++;
                    next++;
                    if (next < np && (pkts[next].entry != pk->entry || (cp.tp_split == J2KI_TP_RES && pkts[next].r != pk->r) ||
                                      (cp.tp_split == J2KI_TP_COMP && pkts[next].c != pk->c)))
                        break;
                }
                CHECK(pos == end, "iter %d: tile-part %d ends at %zu, Psot says %zu", iter, tp, pos, end);
                CHECK(!cp.plt || iplt == nplt, "iter %d: PLT count", iter);
                pos = end;
                tp++;
            }
            CHECK(next == np && tp == expect_tp, "iter %d: %d/%d packets, %d/%d tile-parts", iter, next, np, tp, expect_tp);
            for (size_t i = 0; i < (size_t)nprec * 3; i++) { dec_free(&ti[i]); dec_free(&tz[i]); }
            free(ti); free(tz); free(have);
        }
        CHECK(fail || (rd16(cs + pos) == 0xFFD9 && pos + 2 == (size_t)n), "iter %d: EOC", iter);
        /* every code-block got all the passes its layers promised */
        for (uint32_t i = 0; i < pl->nb_cblks && !fail; i++)
            CHECK(st[i].included == pl->cblks[i].layer_passes[cp.nb_layers - 1], "iter %d: cblk %u passes", iter, i);
        free(st);
        j2ki_plan_free(&pl);
    }
    CHECK(nb_ff > 100 && nb_nonempty > 100, "coverage");
    printf("ok t2 random codestreams (%d packets, %d non-empty, %d 0xFF bytes)\n", nb_packets, nb_nonempty, nb_ff);
}

int main(void)
{
    test_seed("test_t2", 0x7432u);
    test_hand();
    test_random();
    return test_done("test_t2");
}
