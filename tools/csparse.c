/*
 * Independent codestream header parser and generic Part-1 syntax checks (ISO/IEC 15444-1
 * Annex A). Deliberately written without the library's headers or code.
 */
#include "csparse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ctx {
    CsStream  *cs;
    CsReportFn report;
    void      *opaque;
} Ctx;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void fail(Ctx *x, const char *rule, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    x->cs->nb_errors++;
    if (x->report)
        x->report(x->opaque, rule, msg);
}

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) << 16 | rd16(p + 2); }

const char *cs_marker_name(uint16_t code, char *buf)
{
    static const struct { uint16_t code; const char *name; } names[] = {
        { CS_SOC, "SOC" }, { CS_CAP, "CAP" }, { CS_SIZ, "SIZ" }, { CS_COD, "COD" },
        { CS_COC, "COC" }, { CS_TLM, "TLM" }, { CS_PRF, "PRF" }, { CS_PLM, "PLM" },
        { CS_PLT, "PLT" }, { CS_CPF, "CPF" }, { CS_QCD, "QCD" }, { CS_QCC, "QCC" },
        { CS_RGN, "RGN" }, { CS_POC, "POC" }, { CS_PPM, "PPM" }, { CS_PPT, "PPT" },
        { CS_CRG, "CRG" }, { CS_COM, "COM" }, { CS_SOT, "SOT" }, { CS_SOP, "SOP" },
        { CS_EPH, "EPH" }, { CS_SOD, "SOD" }, { CS_EOC, "EOC" },
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].code == code)
            return names[i].name;
    snprintf(buf, 8, "0x%04X", code);
    return buf;
}

int cs_has_marker(const uint16_t *list, int n, uint16_t code)
{
    for (int i = 0; i < n; i++)
        if (list[i] == code)
            return 1;
    return 0;
}

static void remember(uint16_t *list, int *n, uint16_t code)
{
    if (*n < CS_MAX_MARKERS)
        list[(*n)++] = code;
}

const CsCodStyle *cs_cod_for(const CsStream *cs, int c)
{
    if (c >= 0 && c < CS_MAX_COMPS && cs->coc[c].present)
        return &cs->coc[c];
    return &cs->cod;
}

const CsQuant *cs_quant_for(const CsStream *cs, int c)
{
    if (c >= 0 && c < CS_MAX_COMPS && cs->qcc[c].present)
        return &cs->qcc[c];
    return &cs->qcd;
}

/* ---- SIZ (A.5.1, Table A.9) ---------------------------------------------------------- */
static int parse_siz(Ctx *x, const uint8_t *p, uint32_t len)
{
    CsStream *cs = x->cs;
    if (len < 41) {
        fail(x, "SIZ.length", "Lsiz = %u is shorter than the 41 bytes of one component", len);
        return -1;
    }
    cs->have_siz = 1;
    cs->rsiz   = (uint16_t)rd16(p + 2);
    cs->xsiz   = rd32(p + 4);  cs->ysiz   = rd32(p + 8);
    cs->xosiz  = rd32(p + 12); cs->yosiz  = rd32(p + 16);
    cs->xtsiz  = rd32(p + 20); cs->ytsiz  = rd32(p + 24);
    cs->xtosiz = rd32(p + 28); cs->ytosiz = rd32(p + 32);
    cs->csiz   = (int)rd16(p + 36);
    if (len != 38u + 3u * (uint32_t)cs->csiz) {
        fail(x, "SIZ.length", "Lsiz = %u but Csiz = %d needs %d", len, cs->csiz, 38 + 3 * cs->csiz);
        return -1;
    }
    if (cs->csiz < 1 || cs->csiz > 16384)
        fail(x, "SIZ.Csiz", "Csiz = %d outside 1..16384", cs->csiz);
    for (int c = 0; c < cs->csiz && c < CS_MAX_COMPS; c++) {
        cs->ssiz[c]  = p[38 + 3 * c];
        cs->xrsiz[c] = p[39 + 3 * c];
        cs->yrsiz[c] = p[40 + 3 * c];
        if ((cs->ssiz[c] & 0x7F) > 37)
            fail(x, "SIZ.Ssiz", "component %d: Ssiz = 0x%02X (depth %d > 38)", c, cs->ssiz[c],
                 (cs->ssiz[c] & 0x7F) + 1);
        if (!cs->xrsiz[c] || !cs->yrsiz[c])
            fail(x, "SIZ.XRsiz", "component %d: XRsiz = %d, YRsiz = %d (must be 1..255)", c,
                 cs->xrsiz[c], cs->yrsiz[c]);
    }
    if (cs->xsiz <= cs->xosiz || cs->ysiz <= cs->yosiz) {
        fail(x, "SIZ.size", "empty image: Xsiz = %u, XOsiz = %u, Ysiz = %u, YOsiz = %u",
             cs->xsiz, cs->xosiz, cs->ysiz, cs->yosiz);
        return -1;
    }
    if (!cs->xtsiz || !cs->ytsiz) {
        fail(x, "SIZ.tile", "XTsiz = %u, YTsiz = %u (must be > 0)", cs->xtsiz, cs->ytsiz);
        return -1;
    }
    if (cs->xtosiz > cs->xosiz || cs->ytosiz > cs->yosiz ||
        (uint64_t)cs->xtosiz + cs->xtsiz <= cs->xosiz || (uint64_t)cs->ytosiz + cs->ytsiz <= cs->yosiz)
        fail(x, "SIZ.tile_origin", "tile origin (%u,%u) size %ux%u does not cover image origin (%u,%u) (B.3)",
             cs->xtosiz, cs->ytosiz, cs->xtsiz, cs->ytsiz, cs->xosiz, cs->yosiz);
    cs->nb_tiles_x = (uint32_t)(((uint64_t)cs->xsiz - cs->xtosiz + cs->xtsiz - 1) / cs->xtsiz);
    cs->nb_tiles_y = (uint32_t)(((uint64_t)cs->ysiz - cs->ytosiz + cs->ytsiz - 1) / cs->ytsiz);
    if ((uint64_t)cs->nb_tiles_x * cs->nb_tiles_y > 65535)
        fail(x, "SIZ.tiles", "%u x %u tiles exceeds the 65535 Isot allows",
             cs->nb_tiles_x, cs->nb_tiles_y);
    return 0;
}

/* ---- COD / COC SPcod (Table A.15) ------------------------------------------------------ */
static int parse_spcod(Ctx *x, const char *what, const uint8_t *p, uint32_t avail, int scod,
                       CsCodStyle *st)
{
    if (avail < 5) {
        fail(x, "COD.length", "%s: segment too short for SPcod", what);
        return -1;
    }
    st->present = 1;
    st->user_precincts = scod & 1;
    st->nb_levels  = p[0];
    st->xcb        = p[1] + 2;
    st->ycb        = p[2] + 2;
    st->cblk_style = p[3];
    st->transform  = p[4];
    if (st->nb_levels > 32)
        fail(x, "COD.levels", "%s: %d decomposition levels (max 32)", what, st->nb_levels);
    if (st->xcb > 10 || st->ycb > 10 || st->xcb + st->ycb > 12)
        fail(x, "COD.cblk", "%s: code-block 2^%d x 2^%d (exponents 2..10, sum <= 12)", what,
             st->xcb, st->ycb);
    if (st->cblk_style & 0x80)
        fail(x, "COD.cblk_style", "%s: code-block style 0x%02X uses reserved bit 7", what,
             st->cblk_style);
    if (st->transform > 1)
        fail(x, "COD.transform", "%s: transform %d (Part 1: 0 = 9/7, 1 = 5/3)", what, st->transform);
    uint32_t need = 5 + (st->user_precincts ? (uint32_t)st->nb_levels + 1 : 0);
    if (avail != need) {
        fail(x, "COD.length", "%s: SPcod has %u bytes, %u expected for %d levels%s", what, avail,
             need, st->nb_levels, st->user_precincts ? " with precincts" : "");
        if (avail < need)
            return -1;
    }
    for (int r = 0; r <= st->nb_levels && r < CS_MAX_RES; r++) {
        st->prec[r] = st->user_precincts ? p[5 + r] : 0xFF;
        if (st->user_precincts && r > 0 && (!(st->prec[r] & 0x0F) || !(st->prec[r] >> 4)))
            fail(x, "COD.precinct", "%s: resolution %d precinct byte 0x%02X (PPx/PPy = 0 only at resolution 0)",
                 what, r, st->prec[r]);
    }
    return 0;
}

/* Ccoc / Cqcc (Tables A.14, A.26): one byte when Csiz < 257, two bytes otherwise. The segment
 * must hold the index and at least `after` more bytes: checked before anything is read, since
 * p[0..1] (the length) is all the caller has verified. Returns the index size, or 0 when the
 * segment is too short. */
static uint32_t comp_index(const CsStream *cs, const uint8_t *p, uint32_t len, uint32_t after,
                           int *c)
{
    uint32_t n = cs->csiz < 257 ? 1 : 2;
    if (len < 2 + n + after)
        return 0;
    *c = n == 1 ? p[2] : (int)rd16(p + 2);
    return n;
}

static void parse_cod(Ctx *x, const uint8_t *p, uint32_t len, CsCodStyle *st, int main_hdr)
{
    CsStream *cs = x->cs;
    if (len < 12) {
        fail(x, "COD.length", "Lcod = %u < 12", len);
        return;
    }
    int scod = p[2];
    if (scod & ~0x07)
        fail(x, "COD.Scod", "Scod = 0x%02X uses reserved bits", scod);
    if (main_hdr) {
        cs->have_cod  = 1;
        cs->scod      = scod;
        cs->order     = p[3];
        cs->nb_layers = (int)rd16(p + 4);
        cs->mct       = p[6];
        if (cs->order > 4)
            fail(x, "COD.order", "progression order %d (0..4)", cs->order);
        if (cs->nb_layers < 1)
            fail(x, "COD.layers", "0 layers");
        if (cs->mct > 1)
            fail(x, "COD.mct", "multiple component transform %d (Part 1: 0 or 1)", cs->mct);
        if (cs->mct == 1 && cs->csiz < 3)
            fail(x, "COD.mct", "MCT with %d components (needs 3)", cs->csiz);
    }
    parse_spcod(x, "COD", p + 7, len - 7, scod, st);
}

static void parse_coc(Ctx *x, const uint8_t *p, uint32_t len, CsCodStyle *coc_tab)
{
    CsStream *cs = x->cs;
    int c;
    uint32_t n = comp_index(cs, p, len, 1 + 5, &c);
    if (!n) {
        fail(x, "COC.length", "Lcoc = %u too short", len);
        return;
    }
    if (c >= cs->csiz) {
        fail(x, "COC.Ccoc", "COC for component %d of %d", c, cs->csiz);
        return;
    }
    int scoc = p[2 + n];
    CsCodStyle tmp;
    memset(&tmp, 0, sizeof(tmp));
    parse_spcod(x, "COC", p + 3 + n, len - 3 - n, scoc, &tmp);
    if (coc_tab && c < CS_MAX_COMPS)
        coc_tab[c] = tmp;
}

/* ---- QCD / QCC (A.6.4, A.6.5) ---------------------------------------------------------- */
static void parse_quant(Ctx *x, const char *what, const uint8_t *p, uint32_t avail, CsQuant *q)
{
    if (avail < 1) {
        fail(x, "QCD.length", "%s: no Sqcd", what);
        return;
    }
    q->present    = 1;
    q->guard_bits = p[0] >> 5;
    q->style      = p[0] & 0x1F;
    uint32_t body = avail - 1;
    q->len_ok = 1;
    switch (q->style) {
    case 0: q->nb_steps = (int)body; break;
    case 1: q->nb_steps = (int)(body / 2); q->len_ok = body == 2; break;
    case 2: q->nb_steps = (int)(body / 2); q->len_ok = !(body & 1); break;
    default:
        fail(x, "QCD.style", "%s: quantization style %d (0, 1 or 2)", what, q->style);
        q->len_ok = 0;
    }
    if (!q->len_ok && q->style <= 2)
        fail(x, "QCD.length", "%s: %u bytes of step sizes do not fit style %d", what, body, q->style);
    q->max_expn = 0;
    for (int i = 0; q->style <= 2 && i < q->nb_steps; i++) {
        int e = q->style == 0 ? p[1 + i] >> 3 : p[1 + 2 * i] >> 3;
        if (e > q->max_expn)
            q->max_expn = e;
    }
}

/*
 * CAP (ISO/IEC 15444-15 A.3, Table A.2): Pcap, then one Ccap per Pcap bit set, in bit order
 * from the most significant (Pcap bit i, 1-based from the MSB, is Part i). Part 15's is
 * Ccap15.
 */
static void parse_cap(Ctx *x, const uint8_t *p, uint32_t len)
{
    CsStream *cs = x->cs;
    uint32_t n = 0, idx = 0;
    cs->have_cap = 1;
    if (len < 6) {
        fail(x, "CAP.length", "Lcap = %u < 6", len);
        return;
    }
    cs->pcap = rd32(p + 2);
    for (int i = 31; i >= 0; i--)
        n += (cs->pcap >> i) & 1;
    if (len != 6 + 2 * n) {
        fail(x, "CAP.length", "Lcap = %u, %u expected for %u Ccap entries", len, 6 + 2 * n, n);
        return;
    }
    for (int i = 31; i >= 0; i--) {
        if (!((cs->pcap >> i) & 1))
            continue;
        if (i == 31 - 14) {
            cs->have_ccap15 = 1;
            cs->ccap15 = (uint16_t)rd16(p + 6 + 2 * idx);
        }
        idx++;
    }
}

/*
 * The Part-15 rules a codestream's marker segments can be checked against (T.814 A.2, A.3):
 * HT code-blocks (COD/COC style bit 6) need Rsiz bit 14 and CAP with Pcap bit 15 (which
 * come together: profcheck.c); Ccap15 bits 15-14 = 2 is reserved; HTONLY (0) needs every code-block style
 * HT; HTREV (bit 5 clear) needs the 5/3 everywhere; MAGB (bits 4-0, Table A.6) must cover
 * every band's M_b and B must not pass 74. SINGLEHT/MULTIHT, RGNFREE and HOMOGENEOUS need the
 * packets or the tile-part headers and are left to decoders.
 */
static void check_ht(Ctx *x)
{
    CsStream *cs = x->cs;
    int any_ht = 0, all_ht = 1, all_rev = 1, mb = 0;
    for (int c = 0; c < cs->csiz; c++) {
        const CsCodStyle *st = cs->coc[c].present ? &cs->coc[c] : &cs->cod;
        const CsQuant *q = cs->qcc[c].present ? &cs->qcc[c] : &cs->qcd;
        int ht = (st->cblk_style & 0x40) != 0;
        any_ht |= ht;
        all_ht &= ht;
        all_rev &= st->transform == 1;
        if (q->present && q->guard_bits + q->max_expn - 1 > mb)
            mb = q->guard_bits + q->max_expn - 1;
    }
    int rsiz_ht = (cs->rsiz & 0x4000) != 0;
    if (any_ht && !rsiz_ht)
        fail(x, "HT.Rsiz", "HT code-blocks (style bit 6) without Rsiz bit 14 (Rsiz = 0x%04X)", cs->rsiz);
    /* Rsiz bit 14 without CAP Part 15, and the converse, are profcheck.c's (check_ht) */
    if (any_ht && !rsiz_ht && !cs->have_ccap15)
        fail(x, "HT.CAP", "HT code-blocks without a CAP marker with Pcap bit 15 (Part 15)");
    if (!cs->have_ccap15)
        return;
    int type = cs->ccap15 >> 14;
    if (type == 2)
        fail(x, "HT.Ccap15", "Ccap15 bits 15-14 = 2 (reserved)");
    if (type == 0 && !all_ht)
        fail(x, "HT.Ccap15", "Ccap15 says HTONLY but a component's code-block style lacks bit 6");
    if (!(cs->ccap15 & 0x20) && !all_rev)
        fail(x, "HT.Ccap15", "Ccap15 bit 5 clear (HTREV: reversible only) with the 9/7 transform");
    int p = cs->ccap15 & 0x1F;
    int b = p == 0 ? 8 : p < 20 ? p + 8 : p < 31 ? 4 * (p - 19) + 27 : 74;
    if (mb > b)
        fail(x, "HT.MAGB", "Ccap15 MAGB %d (B = %d) below the largest M_b %d of the quantisation", p, b, mb);
}

static void parse_qcc(Ctx *x, const uint8_t *p, uint32_t len, CsQuant *qcc_tab)
{
    CsStream *cs = x->cs;
    int c;
    uint32_t n = comp_index(cs, p, len, 1, &c);
    if (!n) {
        fail(x, "QCC.length", "Lqcc = %u too short", len);
        return;
    }
    if (c >= cs->csiz) {
        fail(x, "QCC.Cqcc", "QCC for component %d of %d", c, cs->csiz);
        return;
    }
    CsQuant tmp;
    memset(&tmp, 0, sizeof(tmp));
    parse_quant(x, "QCC", p + 2 + n, len - 2 - n, &tmp);
    if (qcc_tab && c < CS_MAX_COMPS)
        qcc_tab[c] = tmp;
}

/* ---- POC (A.6.6, Table A.32) ----------------------------------------------------------- */
static int parse_poc(Ctx *x, const uint8_t *p, uint32_t len, int store)
{
    CsStream *cs = x->cs;
    uint32_t esz = cs->csiz < 257 ? 7 : 9;
    uint32_t body = len - 2;
    if (body == 0 || body % esz) {
        fail(x, "POC.length", "Lpoc = %u is not 2 + n * %u", len, esz);
        return 0;
    }
    int n = (int)(body / esz);
    for (int i = 0; i < n; i++) {
        const uint8_t *e = p + 2 + i * esz;
        CsPoc poc;
        int k = 0;
        poc.rs = e[k++];
        if (esz == 7) { poc.cs = e[k++]; } else { poc.cs = (int)rd16(e + k); k += 2; }
        poc.lye = (int)rd16(e + k); k += 2;
        poc.re = e[k++];
        if (esz == 7) { poc.ce = e[k++]; } else { poc.ce = (int)rd16(e + k); k += 2; }
        if (poc.ce == 0)
            poc.ce = esz == 7 ? 256 : 16384;
        poc.order = e[k];
        if (poc.re <= poc.rs || poc.ce <= poc.cs || poc.lye < 1 || poc.order > 4)
            fail(x, "POC.entry", "POC entry %d: RS %d RE %d CS %d CE %d LYE %d order %d is empty or invalid",
                 i, poc.rs, poc.re, poc.cs, poc.ce, poc.lye, poc.order);
        if (store && cs->nb_poc < CS_MAX_POC)
            cs->poc[cs->nb_poc++] = poc;
    }
    return n;
}

/* ---- TLM (A.7.1, Table A.35) ----------------------------------------------------------- */
static void parse_tlm(Ctx *x, const uint8_t *p, uint32_t len)
{
    CsStream *cs = x->cs;
    if (len < 4) {
        fail(x, "TLM.length", "Ltlm = %u < 4", len);
        return;
    }
    int z = p[2], stlm = p[3];
    int st = (stlm >> 4) & 3, sp = (stlm >> 6) & 1;
    if (st == 3 || (stlm & 0x8F))
        fail(x, "TLM.Stlm", "Stlm = 0x%02X (ST %d, reserved bits)", stlm, st);
    if (st == 3)
        return;
    uint32_t esz = (uint32_t)st + (sp ? 4 : 2);
    if ((len - 4) % esz)
        fail(x, "TLM.length", "Ltlm = %u: %u bytes of entries not a multiple of %u", len, len - 4, esz);
    if (z != cs->nb_tlm_seg)
        fail(x, "TLM.Ztlm", "TLM segment with Ztlm = %d where %d was expected", z, cs->nb_tlm_seg);
    if (cs->nb_tlm_seg < 256) {
        cs->tlm_st[cs->nb_tlm_seg] = st;
        cs->tlm_sp[cs->nb_tlm_seg] = sp;
    }
    uint32_t n = (len - 4) / esz;
    CsTlmEntry *t = realloc(cs->tlm, (size_t)(cs->nb_tlm + n + 1) * sizeof(*t));
    if (!t)
        return;
    cs->tlm = t;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = p + 4 + i * esz;
        CsTlmEntry *ent = &cs->tlm[cs->nb_tlm++];
        ent->ztlm = z;
        ent->ttlm = st == 0 ? -1 : st == 1 ? e[0] : (int)rd16(e);
        ent->ptlm = sp ? rd32(e + st) : rd16(e + st);
    }
    cs->nb_tlm_seg++;
}

/* PLT (A.7.3): Zplt, then packet lengths as 7-bit groups, bit 7 = more groups follow. */
static void parse_plt(Ctx *x, const uint8_t *p, uint32_t len, CsTilePart *tp, int idx)
{
    if (len < 3) {
        fail(x, "PLT.length", "tile-part %d: Lplt = %u < 3", idx, len);
        return;
    }
    uint64_t v = 0;
    int open_len = 0;
    for (uint32_t i = 3; i < len; i++) {
        v = (v << 7) | (p[i] & 0x7F);
        open_len = p[i] & 0x80;
        if (!open_len) {
            tp->plt_sum += v;
            v = 0;
        }
    }
    if (open_len)
        fail(x, "PLT.length", "tile-part %d: last packet length of a PLT segment is unfinished", idx);
    tp->nb_plt++;
}

static void parse_com(Ctx *x, const uint8_t *p, uint32_t len)
{
    CsStream *cs = x->cs;
    if (len < 4) {
        fail(x, "COM.length", "Lcom = %u < 4", len);
        return;
    }
    uint32_t rcom = rd16(p + 2);
    if (rcom > 1)
        fail(x, "COM.Rcom", "Rcom = %u (0 binary, 1 Latin-1)", rcom);
    if (rcom == 1 && !cs->com_text[0]) {
        size_t n = len - 4 < sizeof(cs->com_text) - 1 ? len - 4 : sizeof(cs->com_text) - 1;
        for (size_t i = 0; i < n; i++)   /* printable ASCII only: the text is echoed */
            cs->com_text[i] = (p[4 + i] >= 0x20 && p[4 + i] < 0x7F) ? (char)p[4 + i] : '?';
        cs->com_text[n] = 0;
    }
    cs->nb_com++;
}

/* ---- JP2 wrapper (15444-1 Annex I): find the contiguous codestream box ------------------ */
static int find_jp2c(const uint8_t *buf, size_t size, size_t *off, size_t *len)
{
    static const uint8_t sig[12] = { 0, 0, 0, 12, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A };
    if (size < 12 || memcmp(buf, sig, 12))
        return 0;
    size_t pos = 0;
    while (pos + 8 <= size) {
        uint64_t lbox = rd32(buf + pos);
        size_t hdr = 8;
        if (lbox == 1) {
            if (pos + 16 > size)
                return -1;
            lbox = (uint64_t)rd32(buf + pos + 8) << 32 | rd32(buf + pos + 12);
            hdr = 16;
        } else if (lbox == 0) {
            lbox = size - pos;
        }
        if (lbox < hdr || lbox > size - pos)
            return -1;
        if (!memcmp(buf + pos + 4, "jp2c", 4)) {
            *off = pos + hdr;
            *len = (size_t)lbox - hdr;
            return 1;
        }
        pos += (size_t)lbox;
    }
    return -1;
}

static int main_marker_allowed(uint16_t m)
{
    switch (m) {
    case CS_CAP: case CS_COD: case CS_COC: case CS_QCD: case CS_QCC: case CS_RGN: case CS_POC:
    case CS_PPM: case CS_TLM: case CS_PLM: case CS_CRG: case CS_COM: case CS_PRF: case CS_CPF:
        return 1;
    }
    return 0;
}

static int tp_marker_allowed(uint16_t m)
{
    switch (m) {
    case CS_COD: case CS_COC: case CS_QCD: case CS_QCC: case CS_RGN: case CS_POC:
    case CS_PPT: case CS_PLT: case CS_COM:
        return 1;
    }
    return 0;
}

/* After all headers: QCD/QCC length against the decomposition levels that apply (A.6.4). */
static void check_quant_len(Ctx *x, const char *what, const CsQuant *q, const CsCodStyle *st, int c)
{
    if (!q->present || !st->present || !q->len_ok)
        return;
    int need = 3 * st->nb_levels + 1;
    if (q->style != 1 && q->nb_steps != need)
        fail(x, "QCD.length", "%s (component %d): %d step sizes for %d levels, %d expected",
             what, c, q->nb_steps, st->nb_levels, need);
    if (st->transform == 1 && q->style != 0)
        fail(x, "QCD.style", "%s (component %d): 5/3 reversible with quantization style %d (must be 0)",
             what, c, q->style);
    if (st->transform == 0 && q->style == 0)
        fail(x, "QCD.style", "%s (component %d): 9/7 irreversible without quantization", what, c);
}

int cs_parse(CsStream *cs, const uint8_t *buf, size_t size, CsReportFn report, void *opaque)
{
    Ctx ctx = { cs, report, opaque }, *x = &ctx;
    char nb[8];
    memset(cs, 0, sizeof(*cs));
    size_t off = 0, len = size;
    int j = find_jp2c(buf, size, &off, &len);
    if (j < 0) {
        fail(x, "JP2.box", "JP2 signature found but no valid jp2c box");
        return -1;
    }
    cs->jp2 = j;
    buf += off;
    size = len;
    cs->buf = buf;
    cs->size = size;

    if (size < 2 || rd16(buf) != CS_SOC) {
        fail(x, "SOC", "codestream does not start with SOC (FF4F)");
        return -1;
    }
    size_t pos = 2;
    int first = 1;
    /* Main header (A.4.1): SOC, SIZ, then marker segments in any order until the first SOT. */
    for (;;) {
        if (pos + 2 > size) {
            fail(x, "SOT.missing", "main header runs to the end of the file without SOT");
            return -1;
        }
        uint16_t m = (uint16_t)rd16(buf + pos);
        if (m == CS_SOT)
            break;
        if (m < 0xFF30) {
            fail(x, "marker", "0x%04X at offset %zu is not a marker (main header)", m, pos);
            return -1;
        }
        if (pos + 4 > size) {
            fail(x, "marker.length", "%s at offset %zu truncated", cs_marker_name(m, nb), pos);
            return -1;
        }
        uint32_t l = rd16(buf + pos + 2);
        if (l < 2 || pos + 2 + l > size) {
            fail(x, "marker.length", "%s at offset %zu: length %u runs past the end (%zu bytes)",
                 cs_marker_name(m, nb), pos, l, size);
            return -1;
        }
        const uint8_t *p = buf + pos + 2; /* p[0..1] = length */
        if (first && m != CS_SIZ) {
            fail(x, "SIZ.order", "%s follows SOC; SIZ must come first", cs_marker_name(m, nb));
            return -1;
        }
        if (!first && m == CS_SIZ)
            fail(x, "SIZ.dup", "second SIZ at offset %zu", pos);
        else if (m != CS_SIZ && !main_marker_allowed(m))
            fail(x, "marker.main", "%s not allowed in the main header (offset %zu)",
                 cs_marker_name(m, nb), pos);
        remember(cs->main_markers, &cs->nb_main_markers, m);
        switch (m) {
        case CS_SIZ:
            if (first && parse_siz(x, p, l) < 0)
                return -1;
            break;
        case CS_CAP:
            if (cs->have_cap)
                fail(x, "CAP.dup", "second CAP in the main header");
            parse_cap(x, p, l);
            break;
        case CS_COD:
            if (cs->have_cod)
                fail(x, "COD.dup", "second COD in the main header");
            parse_cod(x, p, l, &cs->cod, 1);
            break;
        case CS_COC: parse_coc(x, p, l, cs->coc); break;
        case CS_QCD:
            if (cs->qcd.present)
                fail(x, "QCD.dup", "second QCD in the main header");
            parse_quant(x, "QCD", p + 2, l - 2, &cs->qcd);
            break;
        case CS_QCC: parse_qcc(x, p, l, cs->qcc); break;
        case CS_POC: parse_poc(x, p, l, 1); break;
        case CS_TLM: parse_tlm(x, p, l); break;
        case CS_PLM: cs->nb_plm++; break;
        case CS_PPM: cs->nb_ppm++; break;
        case CS_RGN: cs->nb_rgn++; break;
        case CS_CRG: cs->nb_crg++; break;
        case CS_COM: parse_com(x, p, l); break;
        default: break;
        }
        first = 0;
        pos += 2 + l;
    }
    cs->main_header_len = pos;
    if (!cs->have_cod)
        fail(x, "COD.missing", "no COD in the main header");
    if (!cs->qcd.present)
        fail(x, "QCD.missing", "no QCD in the main header");
    if (cs->have_cod && cs->qcd.present)
        check_ht(x);

    /* Tile-parts (A.4.2): SOT, tile-part header, SOD, Psot - header bytes of data. */
    size_t cap_tp = 16;
    cs->tp = calloc(cap_tp, sizeof(*cs->tp));
    if (!cs->tp)
        return -1;
    uint32_t nb_tiles = cs->nb_tiles_x * cs->nb_tiles_y;
    uint32_t *sop_next = nb_tiles <= 65535 ? calloc(nb_tiles + 1, sizeof(uint32_t)) : NULL;
    int sop_reported = 0;
    for (;;) {
        if (pos + 2 > size) {
            fail(x, "EOC.missing", "codestream ends at offset %zu without EOC", pos);
            break;
        }
        uint16_t m = (uint16_t)rd16(buf + pos);
        if (m == CS_EOC) {
            cs->have_eoc = 1;
            if (pos + 2 != size)
                fail(x, "EOC.trailing", "%zu bytes after EOC", size - pos - 2);
            break;
        }
        if (m != CS_SOT) {
            fail(x, "SOT.expected", "%s at offset %zu where SOT or EOC was expected (Psot of the previous tile-part wrong?)",
                 cs_marker_name(m, nb), pos);
            goto broken;
        }
        if (pos + 12 > size || rd16(buf + pos + 2) != 10) {
            fail(x, "SOT.length", "SOT at offset %zu: truncated or Lsot != 10", pos);
            goto broken;
        }
        if ((size_t)cs->nb_tp == cap_tp) {
            CsTilePart *t = realloc(cs->tp, cap_tp * 2 * sizeof(*t));
            if (!t)
                goto broken;
            cs->tp = t;
            cap_tp *= 2;
        }
        CsTilePart *tp = &cs->tp[cs->nb_tp++];
        memset(tp, 0, sizeof(*tp));
        tp->offset = pos;
        tp->isot   = (int)rd16(buf + pos + 4);
        tp->psot   = rd32(buf + pos + 6);
        tp->tpsot  = buf[pos + 10];
        tp->tnsot  = buf[pos + 11];
        if ((uint32_t)tp->isot >= nb_tiles)
            fail(x, "SOT.Isot", "tile-part %d: Isot = %d but there are %u tiles", cs->nb_tp - 1,
                 tp->isot, nb_tiles);
        size_t end;
        if (tp->psot == 0) {
            /* Psot = 0: runs to the EOC; only allowed for the last tile-part (A.4.2). */
            if (size < 2 || rd16(buf + size - 2) != CS_EOC) {
                fail(x, "SOT.Psot", "tile-part %d: Psot = 0 but the file does not end with EOC",
                     cs->nb_tp - 1);
                end = size;
            } else {
                end = size - 2;
            }
        } else {
            if (tp->psot < 14 || pos + tp->psot > size) {
                fail(x, "SOT.Psot", "tile-part %d at offset %zu: Psot = %u runs past the end (%zu bytes)",
                     cs->nb_tp - 1, pos, tp->psot, size);
                goto broken;
            }
            end = pos + tp->psot;
        }
        tp->length = end - pos;
        size_t hp = pos + 12;
        int have_sod = 0;
        while (hp + 2 <= end) {
            uint16_t hm = (uint16_t)rd16(buf + hp);
            if (hm == CS_SOD) {
                have_sod = 1;
                hp += 2;
                break;
            }
            if (hm < 0xFF30 || hp + 4 > end) {
                fail(x, "marker", "tile-part %d: 0x%04X at offset %zu is not a marker segment",
                     cs->nb_tp - 1, hm, hp);
                break;
            }
            uint32_t l = rd16(buf + hp + 2);
            if (l < 2 || hp + 2 + l > end) {
                fail(x, "marker.length", "tile-part %d: %s at offset %zu length %u runs past the tile-part",
                     cs->nb_tp - 1, cs_marker_name(hm, nb), hp, l);
                break;
            }
            const uint8_t *p = buf + hp + 2;
            remember(tp->markers, &tp->nb_markers, hm);
            if (!tp_marker_allowed(hm))
                fail(x, "marker.tile", "tile-part %d: %s not allowed in a tile-part header",
                     cs->nb_tp - 1, cs_marker_name(hm, nb));
            if (tp->tpsot != 0 && (hm == CS_COD || hm == CS_COC || hm == CS_QCD || hm == CS_QCC || hm == CS_RGN))
                fail(x, "marker.tile", "tile-part %d (TPsot %d): %s only allowed in a tile's first tile-part",
                     cs->nb_tp - 1, tp->tpsot, cs_marker_name(hm, nb));
            switch (hm) {
            case CS_COD: {
                CsCodStyle tmp;
                memset(&tmp, 0, sizeof(tmp));
                parse_cod(x, p, l, &tmp, 0);
                cs->nb_tp_cod++;
                break;
            }
            case CS_COC: parse_coc(x, p, l, NULL); cs->nb_tp_coc++; break;
            case CS_QCD: {
                CsQuant tmp;
                memset(&tmp, 0, sizeof(tmp));
                parse_quant(x, "QCD", p + 2, l - 2, &tmp);
                cs->nb_tp_qcd++;
                break;
            }
            case CS_QCC: parse_qcc(x, p, l, NULL); cs->nb_tp_qcc++; break;
            case CS_POC: tp->nb_poc += parse_poc(x, p, l, 0); cs->nb_tp_poc++; break;
            case CS_RGN: cs->nb_tp_rgn++; break;
            case CS_PPT: cs->nb_tp_ppt++; break;
            case CS_PLT: cs->nb_tp_plt++; parse_plt(x, p, l, tp, cs->nb_tp - 1); break;
            case CS_COM: parse_com(x, p, l); break;
            default: break;
            }
            hp += 2 + l;
        }
        if (!have_sod)
            fail(x, "SOD.missing", "tile-part %d at offset %zu: no SOD before its end", cs->nb_tp - 1, pos);
        tp->header_len = hp - pos;
        if (have_sod && tp->nb_plt && tp->plt_sum != end - hp)
            fail(x, "PLT.sum", "tile-part %d: PLT packet lengths add up to %llu, its data is %zu bytes",
                 cs->nb_tp - 1, (unsigned long long)tp->plt_sum, end - hp);
        /* SOP (A.8.1): entropy-coded data never holds 0xFF followed by a byte > 0x8F (bit
         * stuffing), so every 0xFF91 in the body is an SOP; Nsop counts packets per tile. */
        if (have_sod && (cs->scod & 2) && !cs_has_marker(tp->markers, tp->nb_markers, CS_COD) &&
            (uint32_t)tp->isot < nb_tiles && sop_next) {
            for (size_t q = hp; q + 6 <= end; q++) {
                if (buf[q] != 0xFF || buf[q + 1] != 0x91)
                    continue;
                uint32_t lsop = rd16(buf + q + 2), nsop = rd16(buf + q + 4);
                if (lsop != 4)
                    fail(x, "SOP.length", "tile-part %d: SOP at offset %zu with Lsop = %u", cs->nb_tp - 1, q, lsop);
                else if (nsop != (sop_next[tp->isot] & 0xFFFF) && !sop_reported) {
                    fail(x, "SOP.Nsop", "tile %d: SOP at offset %zu has Nsop = %u, %u expected (packet count)",
                         tp->isot, q, nsop, sop_next[tp->isot] & 0xFFFF);
                    sop_reported = 1;
                }
                sop_next[tp->isot] = nsop + 1;
                tp->nb_sop++;
                q += 5;
            }
            if (end - hp >= 2 && !(buf[hp] == 0xFF && buf[hp + 1] == 0x91))
                fail(x, "SOP.missing", "tile-part %d: Scod enables SOP but its data does not start with one",
                     cs->nb_tp - 1);
        }
        pos = end;
    }

    free(sop_next);
    sop_next = NULL;

    /* Cross checks. */
    if (cs->have_siz && cs->have_cod) {
        check_quant_len(x, "QCD", &cs->qcd, &cs->cod, -1);
        for (int c = 0; c < cs->csiz && c < CS_MAX_COMPS; c++) {
            if (cs->coc[c].present || cs->qcc[c].present)
                check_quant_len(x, cs->qcc[c].present ? "QCC" : "QCD", cs_quant_for(cs, c),
                                cs_cod_for(cs, c), c);
        }
        for (int i = 0; i < cs->nb_poc; i++)
            if (cs->poc[i].lye > cs->nb_layers)
                fail(x, "POC.entry", "POC entry %d: LYEpoc %d > %d layers", i, cs->poc[i].lye,
                     cs->nb_layers);
    }
    if (cs->nb_ppm && cs->nb_tp_ppt)
        fail(x, "PPM.PPT", "both PPM and PPT are present (A.7.4, A.7.5)");

    /* TPsot sequential per tile, TNsot consistent (A.4.2, Table A.6). */
    if (nb_tiles && nb_tiles <= 65535) {
        int *count = calloc(nb_tiles, sizeof(int));
        int *tn = calloc(nb_tiles, sizeof(int));
        if (count && tn) {
            for (int i = 0; i < cs->nb_tp; i++) {
                CsTilePart *tp = &cs->tp[i];
                if ((uint32_t)tp->isot >= nb_tiles)
                    continue;
                if (tp->tpsot != count[tp->isot])
                    fail(x, "SOT.TPsot", "tile-part %d of tile %d has TPsot %d, %d expected", i,
                         tp->isot, tp->tpsot, count[tp->isot]);
                count[tp->isot]++;
                if (tp->tnsot) {
                    if (tn[tp->isot] && tn[tp->isot] != tp->tnsot)
                        fail(x, "SOT.TNsot", "tile %d: TNsot changes from %d to %d", tp->isot,
                             tn[tp->isot], tp->tnsot);
                    tn[tp->isot] = tp->tnsot;
                }
                if (tp->psot == 0 && i != cs->nb_tp - 1)
                    fail(x, "SOT.Psot", "tile-part %d has Psot = 0 but is not the last", i);
            }
            for (uint32_t t = 0; t < nb_tiles; t++) {
                if (!count[t])
                    fail(x, "SOT.tile_missing", "tile %u has no tile-part", t);
                else if (tn[t] && tn[t] != count[t])
                    fail(x, "SOT.TNsot", "tile %u: TNsot = %d but %d tile-parts present", t, tn[t],
                         count[t]);
            }
        }
        free(count);
        free(tn);
    }

    /* TLM entries match the tile-parts (A.7.1). */
    if (cs->nb_tlm_seg) {
        if (cs->nb_tlm != cs->nb_tp)
            fail(x, "TLM.count", "TLM lists %d tile-parts, the codestream has %d", cs->nb_tlm, cs->nb_tp);
        for (int i = 0; i < cs->nb_tlm && i < cs->nb_tp; i++) {
            const CsTlmEntry *e = &cs->tlm[i];
            int want_tile = e->ttlm >= 0 ? e->ttlm : i;
            if (want_tile != cs->tp[i].isot)
                fail(x, "TLM.Ttlm", "TLM entry %d names tile %d, tile-part is of tile %d%s", i,
                     want_tile, cs->tp[i].isot, e->ttlm < 0 ? " (ST = 0: one tile-part per tile in order)" : "");
            if (e->ptlm != cs->tp[i].length)
                fail(x, "TLM.Ptlm", "TLM entry %d: Ptlm = %u, tile-part length is %llu", i, e->ptlm,
                     (unsigned long long)cs->tp[i].length);
        }
    }
    return 0;

broken:
    free(sop_next);
    return -1;
}

void cs_free(CsStream *cs)
{
    free(cs->tp);
    free(cs->tlm);
    cs->tp = NULL;
    cs->tlm = NULL;
}
