/*
 * The profile rules of j2kc-check (see profcheck.h): one function per profile family, each
 * printing one line per violation, "FILE: RULE: explanation with the values".
 */
#include "profcheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csparse.h"

enum { P_NONE = 0, P_DCI2K, P_DCI4K, P_IMF2K, P_IMF4K, P_IMF8K, P_IMF2K_R, P_IMF4K_R, P_IMF8K_R,
       P_BC_SINGLE, P_BC_MULTI, P_BC_MULTI_R, P_PART1, P_IMF_HT, P_IMF_HT_R };

static const struct { const char *name; int id; uint16_t rsiz; } profiles[] = {
    { "none", P_PART1, 0x0000 },
    { "dci2k", P_DCI2K, 0x0003 }, { "dci4k", P_DCI4K, 0x0004 },
    { "imf2k", P_IMF2K, 0x0400 }, { "imf4k", P_IMF4K, 0x0500 }, { "imf8k", P_IMF8K, 0x0600 },
    { "imf2k_r", P_IMF2K_R, 0x0700 }, { "imf4k_r", P_IMF4K_R, 0x0800 },
    { "imf8k_r", P_IMF8K_R, 0x0900 },
    { "broadcast", P_BC_SINGLE, 0x0100 }, { "broadcast_multi", P_BC_MULTI, 0x0200 },
    { "broadcast_multi_r", P_BC_MULTI_R, 0x0300 },
    { "imf_ht", P_IMF_HT, 0x4000 }, { "imf_ht_r", P_IMF_HT_R, 0x4000 },
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void viol(Checker *k, const char *rule, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    k->nb_viol++;
    if (!k->quiet)
        printf("%s: %s: %s\n", k->file, rule, msg);
}

static void on_syntax(void *opaque, const char *rule, const char *msg)
{
    Checker *k = opaque;
    viol(k, rule, "%s", msg);
}

static const char *profile_name(int id)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
        if (profiles[i].id == id)
            return profiles[i].name;
    return "?";
}

/* Which profile Rsiz declares (Table A.10 + Amd1/3/8); bit 14 (HT) is handled separately. */
static int profile_of_rsiz(uint16_t rsiz)
{
    uint16_t r = rsiz & 0x3FFF;
    if (r == 3) return P_DCI2K;
    if (r == 4) return P_DCI4K;
    switch (r & 0xFF00) {
    case 0x0100: return P_BC_SINGLE;
    case 0x0200: return P_BC_MULTI;
    case 0x0300: return P_BC_MULTI_R;
    case 0x0400: return P_IMF2K;
    case 0x0500: return P_IMF4K;
    case 0x0600: return P_IMF8K;
    case 0x0700: return P_IMF2K_R;
    case 0x0800: return P_IMF4K_R;
    case 0x0900: return P_IMF8K_R;
    }
    return P_PART1;
}

static const char *order_name(int o)
{
    static const char *n[] = { "LRCP", "RLCP", "RPCL", "PCRL", "CPRL" };
    return o >= 0 && o <= 4 ? n[o] : "?";
}

/* 2^e for printing sizes from header exponents (garbage exponents print as 0). */
static int pw2(int e) { return e >= 0 && e < 31 ? 1 << e : 0; }

static int has_anywhere(const CsStream *cs, uint16_t m)
{
    if (cs_has_marker(cs->main_markers, cs->nb_main_markers, m))
        return 1;
    for (int i = 0; i < cs->nb_tp; i++)
        if (cs_has_marker(cs->tp[i].markers, cs->tp[i].nb_markers, m))
            return 1;
    return 0;
}

/* Every component's coding style (main COD or COC) must satisfy these; COC is judged too. */
static void check_precincts(Checker *k, const char *pfx, const CsCodStyle *st, int c)
{
    if (!st->user_precincts) {
        viol(k, "precincts", "%s component %d: no precinct sizes in COD (Scod bit 0 clear): 128x128 at NLLL and 256x256 elsewhere required",
             pfx, c);
        return;
    }
    for (int r = 0; r <= st->nb_levels && r < CS_MAX_RES; r++) {
        int want = r == 0 ? 0x77 : 0x88;
        if (st->prec[r] != want)
            viol(k, "precincts", "%s component %d resolution %d: precinct byte 0x%02X (%dx%d), 0x%02X (%dx%d) required",
                 pfx, c, r, st->prec[r], 1 << (st->prec[r] & 15), 1 << (st->prec[r] >> 4), want,
                 1 << (want & 15), 1 << (want >> 4));
    }
}

static int nb_comps_kept(const CsStream *cs)
{
    return cs->csiz < CS_MAX_COMPS ? cs->csiz : CS_MAX_COMPS;
}

/* floor(mbps * 1e6 / 8 / fps) bytes per frame. */
static uint64_t bytes_per_frame(double mbps, int num, int den)
{
    return (uint64_t)((mbps * 1e6 * den) / (8.0 * num));
}

/* ---- DCI (Amd1 profiles 3/4, SMPTE 429-2, RDD 52) ------------------------------------- */
static void check_dci(Checker *k, const CsStream *cs, int p)
{
    const int is4k = p == P_DCI4K;
    const char *pfx = is4k ? "DCI 4K" : "DCI 2K";
    const int want_levels = is4k ? 6 : 5;
    const int want_guard = is4k ? 2 : 1;
    const int want_tp = is4k ? 6 : 3;
    const uint32_t max_w = is4k ? 4096 : 2048, max_h = is4k ? 2160 : 1080;
    int nc = nb_comps_kept(cs);

    if (cs->rsiz != (is4k ? 4 : 3))
        viol(k, "DCI.Rsiz", "%s: Rsiz = 0x%04X, 0x%04X required", pfx, cs->rsiz, is4k ? 4 : 3);
    if (cs->csiz != 3)
        viol(k, "DCI.components", "%s: Csiz = %d, 3 required", pfx, cs->csiz);
    for (int c = 0; c < nc; c++) {
        if (cs->ssiz[c] != 0x0B)
            viol(k, "DCI.depth", "%s component %d: Ssiz = 0x%02X (%d-bit %s), 0x0B (12-bit unsigned) required",
                 pfx, c, cs->ssiz[c], (cs->ssiz[c] & 0x7F) + 1, cs->ssiz[c] & 0x80 ? "signed" : "unsigned");
        if (cs->xrsiz[c] != 1 || cs->yrsiz[c] != 1)
            viol(k, "DCI.subsampling", "%s component %d: XRsiz = %d, YRsiz = %d, 1 required", pfx, c,
                 cs->xrsiz[c], cs->yrsiz[c]);
    }
    uint32_t w = cs->xsiz - cs->xosiz, h = cs->ysiz - cs->yosiz;
    if (w > max_w || h > max_h)
        viol(k, "DCI.size", "%s: image %ux%u exceeds %ux%u", pfx, w, h, max_w, max_h);
    if (k->verbose) {
        static const uint32_t sizes[2][3][2] = { { { 2048, 1080 }, { 1998, 1080 }, { 2048, 858 } },
                                                 { { 4096, 2160 }, { 3996, 2160 }, { 4096, 1716 } } };
        int dci = 0;
        for (int i = 0; i < 3; i++)
            dci |= sizes[is4k][i][0] == w && sizes[is4k][i][1] == h;
        if (!dci)
            printf("%s: note: %ux%u is not a DCI container size (full, flat, scope)\n", k->file, w, h);
    }
    if (cs->xosiz || cs->yosiz || cs->xtosiz || cs->ytosiz)
        viol(k, "DCI.origin", "%s: XOsiz %u YOsiz %u XTOsiz %u YTOsiz %u, all 0 required", pfx,
             cs->xosiz, cs->yosiz, cs->xtosiz, cs->ytosiz);
    if (cs->nb_tiles_x * cs->nb_tiles_y != 1)
        viol(k, "DCI.tiles", "%s: %ux%u tiles (XTsiz %u YTsiz %u), one tile required", pfx,
             cs->nb_tiles_x, cs->nb_tiles_y, cs->xtsiz, cs->ytsiz);

    for (int c = 0; c < nc; c++) {
        const CsCodStyle *st = cs_cod_for(cs, c);
        if (c > 0 && st == &cs->cod)
            continue;   /* judged once for the COD */
        if (st->nb_levels != want_levels)
            viol(k, "DCI.levels", "%s component %d: %d decomposition levels, %d required", pfx, c,
                 st->nb_levels, want_levels);
        if (st->xcb != 5 || st->ycb != 5)
            viol(k, "DCI.cblk", "%s component %d: code-block %dx%d, 32x32 required", pfx, c,
                 pw2(st->xcb), pw2(st->ycb));
        if (st->cblk_style)
            viol(k, "DCI.cblk_style", "%s component %d: code-block style 0x%02X, 0 (no mode switches) required",
                 pfx, c, st->cblk_style);
        if (st->transform != 0)
            viol(k, "DCI.transform", "%s component %d: 5/3 reversible, 9/7 irreversible required", pfx, c);
        check_precincts(k, pfx, st, c);
    }
    if (cs->mct != 1)
        viol(k, "DCI.mct", "%s: MCT = %d, 1 (ICT) required", pfx, cs->mct);
    if (cs->nb_layers != 1)
        viol(k, "DCI.layers", "%s: %d layers, 1 required", pfx, cs->nb_layers);
    if (cs->order != 4)
        viol(k, "DCI.order", "%s: progression %s, CPRL required", pfx, order_name(cs->order));

    /* POC: none for 2K; for 4K (r0..NL-1, c0..3) then (rNL..NL+1, c0..3), both CPRL, 1 layer. */
    int nb_poc_tp = 0;
    for (int i = 0; i < cs->nb_tp; i++)
        nb_poc_tp += cs->tp[i].nb_poc;
    if (!is4k) {
        if (cs->nb_poc || nb_poc_tp)
            viol(k, "DCI.POC", "%s: %d POC entries, POC not allowed in 2K", pfx, cs->nb_poc + nb_poc_tp);
    } else {
        int nl = cs->cod.nb_levels;
        int ok = cs->nb_poc == 2 &&
                 cs->poc[0].rs == 0 && cs->poc[0].cs == 0 && cs->poc[0].lye == 1 &&
                 cs->poc[0].re == nl && cs->poc[0].ce == 3 && cs->poc[0].order == 4 &&
                 cs->poc[1].rs == nl && cs->poc[1].cs == 0 && cs->poc[1].lye == 1 &&
                 cs->poc[1].re == nl + 1 && cs->poc[1].ce == 3 && cs->poc[1].order == 4;
        if (!ok) {
            char buf[256] = "";
            for (int i = 0; i < cs->nb_poc && i < 4; i++) {
                char e[64];
                snprintf(e, sizeof(e), " (r%d..%d c%d..%d l%d %s)", cs->poc[i].rs, cs->poc[i].re,
                         cs->poc[i].cs, cs->poc[i].ce, cs->poc[i].lye, order_name(cs->poc[i].order));
                strncat(buf, e, sizeof(buf) - strlen(buf) - 1);
            }
            viol(k, "DCI.POC", "%s: main-header POC has %d entries%s; (r0..%d c0..3 CPRL) then (r%d..%d c0..3 CPRL) required",
                 pfx, cs->nb_poc, buf, nl, nl, nl + 1);
        }
        if (nb_poc_tp)
            viol(k, "DCI.POC", "%s: POC in tile-part headers (%d entries), main header only", pfx, nb_poc_tp);
    }
    if (cs->nb_tp != want_tp)
        viol(k, "DCI.tile_parts", "%s: %d tile-parts, %d required (%s)", pfx, cs->nb_tp, want_tp,
             is4k ? "3 for the 2K part, 3 for the 4K level" : "one per component");
    if (!cs->nb_tlm_seg)
        viol(k, "DCI.TLM", "%s: no TLM marker in the main header", pfx);
    if (!cs->qcd.present || cs->qcd.style != 2)
        viol(k, "DCI.QCD", "%s: quantization style %d, 2 (scalar expounded) required", pfx, cs->qcd.style);
    if (cs->qcd.guard_bits != want_guard)
        viol(k, "DCI.guard_bits", "%s: %d guard bits, %d required%s", pfx, cs->qcd.guard_bits,
             want_guard, is4k ? "" : " (SMPTE RDD 52)");
    static const uint16_t banned[] = { CS_COC, CS_QCC, CS_RGN, CS_PPM, CS_PPT, CS_CRG };
    for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++) {
        char nb[8];
        if (has_anywhere(cs, banned[i]))
            viol(k, "DCI.markers", "%s: %s marker present, not allowed", pfx, cs_marker_name(banned[i], nb));
    }

    /* Frame and component sizes (SMPTE 429-2: 250 Mb/s, 200 Mb/s per component; 2K HFR
     * >= 60 fps: 500 / 400). Without --fps the 24 fps limits apply: no DCI rate allows more. */
    int num = k->fps_num, den = k->fps_den;
    if (!num) {
        num = 24;
        den = 1;
    }
    double fps = (double)num / den;
    if (is4k && fps > 30.0 + 1e-9)
        viol(k, "DCI.fps", "%s: %g fps, DCI 4K allows 24, 25 or 30 only", pfx, fps);
    double mbps = (!is4k && fps >= 60.0 - 1e-9) ? 500 : 250;
    uint64_t max_frame = bytes_per_frame(mbps, num, den);
    uint64_t max_comp = bytes_per_frame(mbps * 0.8, num, den);
    if ((uint64_t)cs->size > max_frame)
        viol(k, "DCI.frame_size", "%s: codestream is %zu bytes, %llu allowed at %g fps (%g Mb/s)%s", pfx,
             cs->size, (unsigned long long)max_frame, fps, mbps, k->fps_num ? "" : " (24 fps assumed)");
    for (int i = 0; i < 3 && i < cs->nb_tp; i++)
        if (cs->tp[i].length > max_comp)
            viol(k, "DCI.comp_size", "%s: component %d%s is %llu bytes (tile-part %d incl. header), %llu allowed at %g fps%s",
                 pfx, i, is4k ? " 2K portion" : "", (unsigned long long)cs->tp[i].length, i,
                 (unsigned long long)max_comp, fps, k->fps_num ? "" : " (24 fps assumed)");
}

/* ---- IMF (Amd8, ST 2067-21) ------------------------------------------------------------- */
static const int imf_msamples[12] = { 0, 65, 130, 195, 260, 520, 1200, 2400, 4800, 9600, 19200, 38400 };
static const int imf_max_sub[12] = { 15, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9 };

/* Samples of component c (B.2: ceil(Xsiz / XRsiz) - ceil(XOsiz / XRsiz), same vertically).
 * XRsiz / YRsiz = 0 is a SIZ violation csparse has reported already; such a component has no
 * defined size and counts as 0 samples here rather than dividing by zero. */
static uint64_t comp_samples(const CsStream *cs, int c)
{
    uint64_t dx = cs->xrsiz[c], dy = cs->yrsiz[c];
    if (!dx || !dy)
        return 0;
    uint64_t w = (cs->xsiz + dx - 1) / dx - (cs->xosiz + dx - 1) / dx;
    uint64_t h = (cs->ysiz + dy - 1) / dy - (cs->yosiz + dy - 1) / dy;
    return w * h;
}

static void check_mainlevel_rate(Checker *k, const CsStream *cs, const char *pfx, int mainlevel)
{
    if (!k->fps_num || mainlevel < 1 || mainlevel > 11)
        return;
    uint64_t samples = 0;
    for (int c = 0; c < nb_comps_kept(cs); c++)
        samples += comp_samples(cs, c);
    double rate = (double)samples * k->fps_num / k->fps_den;
    if (rate > imf_msamples[mainlevel] * 1e6)
        viol(k, "level.mainlevel_rate", "%s: %.2f Msamples/s (all components at %g fps) exceeds mainlevel %d's %d",
             pfx, rate / 1e6, (double)k->fps_num / k->fps_den, mainlevel, imf_msamples[mainlevel]);
}

static void check_imf(Checker *k, const CsStream *cs, int p)
{
    static const char *names[] = { "IMF 2K", "IMF 4K", "IMF 8K", "IMF 2K_R", "IMF 4K_R", "IMF 8K_R" };
    int idx = p - P_IMF2K;
    const char *pfx = names[idx];
    int rev = idx >= 3;
    int size_class = idx % 3;     /* 0: 2K, 1: 4K, 2: 8K */
    static const uint32_t max_w[3] = { 2048, 4096, 8192 }, max_h[3] = { 1556, 3112, 6224 };
    int nc = nb_comps_kept(cs);
    uint16_t r = cs->rsiz & 0x3FFF;
    int mainlevel = r & 0xF, sublevel = (r >> 4) & 0xF;

    if ((r & 0xFF00) != 0x0400 + 0x0100 * idx)
        viol(k, "IMF.Rsiz", "%s: Rsiz = 0x%04X does not declare this profile (0x%04X | sublevel << 4 | mainlevel)",
             pfx, cs->rsiz, 0x0400 + 0x0100 * idx);
    if (mainlevel > 11)
        viol(k, "IMF.mainlevel", "%s: mainlevel %d > 11", pfx, mainlevel);
    else if (sublevel > imf_max_sub[mainlevel] || sublevel > 9)
        viol(k, "IMF.sublevel", "%s: sublevel %d > %d allowed with mainlevel %d", pfx, sublevel,
             imf_max_sub[mainlevel] > 9 ? 9 : imf_max_sub[mainlevel], mainlevel);
    if (cs->csiz > 3)
        viol(k, "IMF.components", "%s: Csiz = %d, at most 3", pfx, cs->csiz);
    for (int c = 0; c < nc; c++) {
        int d = (cs->ssiz[c] & 0x7F) + 1;
        if (d < 8 || d > 16 || (cs->ssiz[c] & 0x80))
            viol(k, "IMF.depth", "%s component %d: %d-bit %s, 8..16-bit unsigned required", pfx, c, d,
                 cs->ssiz[c] & 0x80 ? "signed" : "unsigned");
        if ((c == 0 && cs->xrsiz[c] != 1) || cs->xrsiz[c] > 2 || cs->yrsiz[c] != 1)
            viol(k, "IMF.subsampling", "%s component %d: XRsiz %d YRsiz %d (component 0: 1x1; others XRsiz 1 or 2, YRsiz 1)",
                 pfx, c, cs->xrsiz[c], cs->yrsiz[c]);
    }
    if (cs->xosiz || cs->yosiz || cs->xtosiz || cs->ytosiz)
        viol(k, "IMF.origin", "%s: XOsiz %u YOsiz %u XTOsiz %u YTOsiz %u, all 0 required", pfx,
             cs->xosiz, cs->yosiz, cs->xtosiz, cs->ytosiz);
    uint32_t w = cs->xsiz - cs->xosiz, h = cs->ysiz - cs->yosiz;
    if (w > max_w[size_class] || h > max_h[size_class])
        viol(k, "IMF.size", "%s: image %ux%u exceeds %ux%u", pfx, w, h, max_w[size_class], max_h[size_class]);
    int single = cs->nb_tiles_x * cs->nb_tiles_y == 1;
    if (!rev && !single)
        viol(k, "IMF.tiles", "%s: %ux%u tiles, one tile required", pfx, cs->nb_tiles_x, cs->nb_tiles_y);
    if (rev && !single) {
        int ok = cs->xtsiz == cs->ytsiz &&
                 (cs->xtsiz == 1024 || (cs->xtsiz == 2048 && size_class >= 1) ||
                  (cs->xtsiz == 4096 && size_class == 2));
        if (!ok)
            viol(k, "IMF.tiles", "%s: tiles %ux%u; one tile or square tiles of 1024%s required", pfx,
                 cs->xtsiz, cs->ytsiz, size_class == 0 ? "" : size_class == 1 ? " or 2048" : ", 2048 or 4096");
    }
    /* Decomposition levels: lossy <= 5/6/7; _R by tile width (XTsiz >= 1024: 4, 2048: 5...). */
    uint32_t xt = cs->xtsiz < cs->xsiz - cs->xtosiz ? cs->xtsiz : cs->xsiz - cs->xtosiz;
    int max_nl = 5 + size_class;
    if (rev) {
        if (xt >= 8192) max_nl = 7;
        else if (xt >= 4096) max_nl = 6;
        else if (xt >= 2048) max_nl = 5;
        else if (xt >= 1024) max_nl = 4;
        if (max_nl > 5 + size_class)
            max_nl = 5 + size_class;
    }
    for (int c = 0; c < nc; c++) {
        const CsCodStyle *st = cs_cod_for(cs, c);
        if (c > 0 && st == &cs->cod)
            continue;
        if (st->nb_levels < 1 || st->nb_levels > max_nl)
            viol(k, "IMF.levels", "%s component %d: %d decomposition levels, 1..%d allowed%s", pfx, c,
                 st->nb_levels, max_nl, rev ? " for this tile width" : "");
        if (st->xcb != 5 || st->ycb != 5)
            viol(k, "IMF.cblk", "%s component %d: code-block %dx%d, 32x32 required", pfx, c,
                 pw2(st->xcb), pw2(st->ycb));
        if (st->cblk_style)
            viol(k, "IMF.cblk_style", "%s component %d: code-block style 0x%02X, 0 required", pfx, c,
                 st->cblk_style);
        if (st->transform != (rev ? 1 : 0))
            viol(k, "IMF.transform", "%s component %d: %s, %s required", pfx, c,
                 st->transform ? "5/3 reversible" : "9/7 irreversible", rev ? "5/3 reversible" : "9/7 irreversible");
        check_precincts(k, pfx, st, c);
    }
    if (cs->nb_layers != 1)
        viol(k, "IMF.layers", "%s: %d layers, 1 required", pfx, cs->nb_layers);
    if (cs->order != 4)
        viol(k, "IMF.order", "%s: progression %s, CPRL required", pfx, order_name(cs->order));
    if (has_anywhere(cs, CS_POC))
        viol(k, "IMF.POC", "%s: POC marker present, not allowed", pfx);
    if (has_anywhere(cs, CS_RGN))
        viol(k, "IMF.RGN", "%s: RGN marker present, not allowed", pfx);

    check_mainlevel_rate(k, cs, pfx, mainlevel);
    if (k->fps_num && sublevel >= 1 && sublevel <= 9) {
        double mbps = 200.0 * (1 << (sublevel - 1));
        double got = (double)cs->size * 8 * k->fps_num / k->fps_den / 1e6;
        if (got > mbps)
            viol(k, "level.sublevel_rate", "%s: %zu bytes at %g fps = %.2f Mb/s exceeds sublevel %d's %g Mb/s",
                 pfx, cs->size, (double)k->fps_num / k->fps_den, got, sublevel, mbps);
    }
}

/* ---- Broadcast (Amd3) ------------------------------------------------------------------- */
static void check_broadcast(Checker *k, const CsStream *cs, int p)
{
    static const char *names[] = { "broadcast single", "broadcast multi", "broadcast multi_r" };
    const char *pfx = names[p - P_BC_SINGLE];
    int nc = nb_comps_kept(cs);
    uint16_t r = cs->rsiz & 0x3FFF;
    int mainlevel = r & 0xF;
    if ((r & 0xFFF0) != 0x0100 * (1 + p - P_BC_SINGLE))
        viol(k, "BC.Rsiz", "%s: Rsiz = 0x%04X, 0x%04X | mainlevel required", pfx, cs->rsiz,
             0x0100 * (1 + p - P_BC_SINGLE));
    if (mainlevel > 11)
        viol(k, "BC.mainlevel", "%s: mainlevel %d > 11", pfx, mainlevel);
    if (cs->csiz > 4)
        viol(k, "BC.components", "%s: Csiz = %d, at most 4", pfx, cs->csiz);
    for (int c = 0; c < nc; c++) {
        int d = (cs->ssiz[c] & 0x7F) + 1;
        if (d < 8 || d > 12 || (cs->ssiz[c] & 0x80))
            viol(k, "BC.depth", "%s component %d: %d-bit %s, 8..12-bit unsigned required", pfx, c, d,
                 cs->ssiz[c] & 0x80 ? "signed" : "unsigned");
        int lim = (c == 0 || c == 3) ? 1 : 2;
        if (cs->xrsiz[c] > lim || cs->yrsiz[c] > lim)
            viol(k, "BC.subsampling", "%s component %d: XRsiz %d YRsiz %d, at most %d", pfx, c,
                 cs->xrsiz[c], cs->yrsiz[c], lim);
    }
    if (nc >= 3 && (cs->xrsiz[1] != cs->xrsiz[2] || cs->yrsiz[1] != cs->yrsiz[2]))
        viol(k, "BC.subsampling", "%s: components 1 and 2 subsampled differently (%dx%d vs %dx%d)", pfx,
             cs->xrsiz[1], cs->yrsiz[1], cs->xrsiz[2], cs->yrsiz[2]);
    if (cs->xosiz || cs->yosiz || cs->xtosiz || cs->ytosiz)
        viol(k, "BC.origin", "%s: XOsiz %u YOsiz %u XTOsiz %u YTOsiz %u, all 0 required", pfx,
             cs->xosiz, cs->yosiz, cs->xtosiz, cs->ytosiz);
    uint32_t tx = cs->nb_tiles_x, ty = cs->nb_tiles_y;
    if (p == P_BC_SINGLE) {
        if (tx * ty != 1)
            viol(k, "BC.tiles", "%s: %ux%u tiles, one tile required", pfx, tx, ty);
    } else if (!((tx == 1 && ty == 1) || (tx == 2 && ty == 2) || (tx == 1 && ty == 4))) {
        viol(k, "BC.tiles", "%s: %ux%u tile grid, 1x1, 2x2 or 1x4 required", pfx, tx, ty);
    }
    for (int c = 0; c < nc; c++) {
        const CsCodStyle *st = cs_cod_for(cs, c);
        if (c > 0 && st == &cs->cod)
            continue;
        if (st->nb_levels < 1 || st->nb_levels > 5)
            viol(k, "BC.levels", "%s component %d: %d decomposition levels, 1..5 allowed", pfx, c, st->nb_levels);
        if (st->xcb != st->ycb || st->xcb < 5 || st->xcb > 7)
            viol(k, "BC.cblk", "%s component %d: code-block %dx%d, 32x32, 64x64 or 128x128 required", pfx, c,
                 pw2(st->xcb), pw2(st->ycb));
        if (st->cblk_style)
            viol(k, "BC.cblk_style", "%s component %d: code-block style 0x%02X, 0 required", pfx, c, st->cblk_style);
        int want_t = p == P_BC_MULTI_R ? 1 : 0;
        if (st->transform != want_t)
            viol(k, "BC.transform", "%s component %d: %s, %s required", pfx, c,
                 st->transform ? "5/3" : "9/7", want_t ? "5/3" : "9/7");
        check_precincts(k, pfx, st, c);
    }
    if (cs->nb_layers != 1)
        viol(k, "BC.layers", "%s: %d layers, 1 required", pfx, cs->nb_layers);
    if (cs->order != 4)
        viol(k, "BC.order", "%s: progression %s, CPRL required", pfx, order_name(cs->order));
    if (has_anywhere(cs, CS_POC))
        viol(k, "BC.POC", "%s: POC marker present, not allowed", pfx);
    check_mainlevel_rate(k, cs, pfx, mainlevel);
}

/* ---- HTJ2K (Rsiz bit 14; IMF with HT per ST 2067-21 Annex I) ---------------------------- */
static void check_ht(Checker *k, const CsStream *cs, int imf)
{
    if (!cs->have_cap)
        viol(k, "HT.CAP", "Rsiz bit 14 (HTJ2K) set but no CAP marker");
    else if (!(cs->pcap & 0x00020000))
        viol(k, "HT.CAP", "CAP Pcap = 0x%08X lacks the Part-15 bit (0x00020000)", cs->pcap);
    if (!imf)
        return;
    int nc = nb_comps_kept(cs);
    uint32_t w = cs->xsiz - cs->xosiz;
    int max_nl = w <= 2048 ? 5 : w <= 4096 ? 6 : 7;
    for (int c = 0; c < nc; c++) {
        const CsCodStyle *st = cs_cod_for(cs, c);
        if ((cs->ssiz[c] & 0x7F) != (cs->ssiz[0] & 0x7F))
            viol(k, "HT.depth", "component %d depth differs from component 0", c);
        if (cs->yrsiz[c] != 1)
            viol(k, "HT.subsampling", "component %d: YRsiz %d, 1 required", c, cs->yrsiz[c]);
        if (c > 0 && st == &cs->cod)
            continue;
        if (st->cblk_style != 0x40)
            viol(k, "HT.cblk_style", "component %d: code-block style 0x%02X, 0x40 (all HT) required", c, st->cblk_style);
        if (st->xcb < 5 || st->xcb > 7 || st->ycb < 5 || st->ycb > 6)
            viol(k, "HT.cblk", "component %d: code-block %dx%d (width 32..128, height 32..64)", c,
                 pw2(st->xcb), pw2(st->ycb));
        if (st->nb_levels < 1 || st->nb_levels > max_nl)
            viol(k, "HT.levels", "component %d: %d levels, 1..%d allowed for width %u", c, st->nb_levels, max_nl, w);
        check_precincts(k, "IMF HT", st, c);
    }
    if (cs->nb_layers != 1)
        viol(k, "HT.layers", "%d layers, 1 required", cs->nb_layers);
    if (k->verbose && cs->order != 2)
        printf("%s: note: IMF HT prefers RPCL (progression is %s)\n", k->file, order_name(cs->order));
}

/*
 * ---- IMF App 2E HTJ2K: APP2.HT.IRV / APP2.HT.REV (SMPTE ST 2067-21:2023 Annex I) ----------
 * Only with --profile imf_ht / imf_ht_r: Rsiz 0x4000 does not tell plain HTJ2K from the IMF
 * profiles. The rules are those Netflix photon's ST 2067-21 checks apply to the codestream
 * (doc profiles.md), plus TLM and one tile-part per resolution as the encoder writes them.
 */
static int imf_ht_max_magb(int depth, int rev, int mct, int nl)
{
    int b = depth + 1;
    if (rev)
        b += 2 + (mct ? 1 : 0) + (nl > 5 ? 1 : 0);
    else if (mct && depth > 10)
        b += 1;
    return b;
}

static void check_imf_ht(Checker *k, const CsStream *cs, int p)
{
    const int rev = p == P_IMF_HT_R;
    const char *pfx = rev ? "IMF HT (APP2.HT.REV)" : "IMF HT (APP2.HT.IRV)";
    int nc = nb_comps_kept(cs);
    uint32_t w = cs->xsiz - cs->xosiz, h = cs->ysiz - cs->yosiz;
    uint32_t m = w > h ? w : h;
    int max_nl = m <= 2048 ? 5 : m <= 4096 ? 6 : 7;

    if (!(cs->rsiz & 0x4000))
        viol(k, "IMFHT.Rsiz", "%s: Rsiz = 0x%04X lacks bit 14 (HTJ2K, 0x4000)", pfx, cs->rsiz);
    else if ((cs->rsiz & 0x3FFF) && k->verbose)
        printf("%s: note: Rsiz 0x%04X also declares a Part 1 profile\n", k->file, cs->rsiz);
    if (!cs->have_cap || cs->pcap != 0x00020000 || !cs->have_ccap15)
        viol(k, "IMFHT.CAP", "%s: CAP %s Pcap 0x%08X; Pcap = 0x00020000 (Part 15 only) with one Ccap15 required",
             pfx, cs->have_cap ? "with" : "missing,", cs->pcap);
    if (cs->have_ccap15 && (cs->ccap15 & 0xF000))
        viol(k, "IMFHT.Ccap15", "%s: Ccap15 = 0x%04X, bits 12-15 must be 0 (HTONLY, SINGLEHT, RGNFREE, HOMOGENEOUS)",
             pfx, cs->ccap15);
    if (cs->have_ccap15 && rev && (cs->ccap15 & 0x20))
        viol(k, "IMFHT.Ccap15", "%s: Ccap15 bit 5 set (HTIRV), clear (HTREV) required", pfx);
    if (cs->xosiz || cs->yosiz || cs->xtosiz || cs->ytosiz)
        viol(k, "IMFHT.origin", "%s: XOsiz %u YOsiz %u XTOsiz %u YTOsiz %u, all 0 required", pfx,
             cs->xosiz, cs->yosiz, cs->xtosiz, cs->ytosiz);
    if (cs->xtsiz < cs->xsiz || cs->ytsiz < cs->ysiz)
        viol(k, "IMFHT.tiles", "%s: %ux%u tiles (XTsiz %u YTsiz %u), one tile required", pfx,
             cs->nb_tiles_x, cs->nb_tiles_y, cs->xtsiz, cs->ytsiz);
    if (cs->csiz < 1 || cs->csiz > 4)
        viol(k, "IMFHT.components", "%s: Csiz = %d, 1 to 4 required", pfx, cs->csiz);
    if (m > 8192)
        viol(k, "IMFHT.size", "%s: image %ux%u, at most 8192 wide and high", pfx, w, h);
    for (int c = 0; c < nc; c++) {
        if ((cs->ssiz[c] & 0x80) || cs->ssiz[c] < 7 || cs->ssiz[c] > 15)
            viol(k, "IMFHT.depth", "%s component %d: Ssiz = 0x%02X, 8 to 16-bit unsigned required", pfx, c,
                 cs->ssiz[c]);
        else if (cs->ssiz[c] != cs->ssiz[0])
            viol(k, "IMFHT.depth", "%s component %d: %d-bit, component 0 %d-bit; one depth required", pfx, c,
                 cs->ssiz[c] + 1, (cs->ssiz[0] & 0x7F) + 1);
        int x422 = (c == 1 || c == 2) && cs->csiz >= 3 && cs->xrsiz[1] == 2 && cs->xrsiz[2] == 2;
        if (cs->yrsiz[c] != 1 || (cs->xrsiz[c] != 1 && !x422))
            viol(k, "IMFHT.subsampling", "%s component %d: XRsiz %d YRsiz %d; YRsiz 1, XRsiz 1 or 2 for components 1 and 2 together",
                 pfx, c, cs->xrsiz[c], cs->yrsiz[c]);
    }
    int max_nl_seen = 0;
    for (int c = 0; c < nc; c++) {
        const CsCodStyle *st = cs_cod_for(cs, c);
        if (st->nb_levels > max_nl_seen)
            max_nl_seen = st->nb_levels;
        if (c > 0 && st == &cs->cod)
            continue;   /* judged once for the COD */
        if (st->cblk_style != 0x40)
            viol(k, "IMFHT.cblk_style", "%s component %d: code-block style 0x%02X, exactly 0x40 (HT only) required",
                 pfx, c, st->cblk_style);
        if (st->xcb < 5 || st->xcb > 7 || st->ycb < 5 || st->ycb > 6)
            viol(k, "IMFHT.cblk", "%s component %d: code-block %dx%d; 32 to 128 wide, 32 to 64 high required",
                 pfx, c, pw2(st->xcb), pw2(st->ycb));
        if (st->nb_levels < 1 || st->nb_levels > max_nl)
            viol(k, "IMFHT.levels", "%s component %d: %d decomposition levels, 1 to %d for %ux%u", pfx, c,
                 st->nb_levels, max_nl, w, h);
        if (st->transform != (rev ? 1 : 0))
            viol(k, "IMFHT.transform", "%s component %d: %s filter, %s required", pfx, c,
                 st->transform ? "5/3" : "9/7", rev ? "5/3 reversible" : "9/7 irreversible");
        check_precincts(k, pfx, st, c);
    }
    if (cs->nb_layers != 1)
        viol(k, "IMFHT.layers", "%s: %d layers, 1 required", pfx, cs->nb_layers);
    if (cs->order != 2)
        viol(k, "IMFHT.order", "%s: progression %s, RPCL required", pfx, order_name(cs->order));
    int nb_poc_tp = 0;
    for (int i = 0; i < cs->nb_tp; i++)
        nb_poc_tp += cs->tp[i].nb_poc;
    if (cs->nb_poc || nb_poc_tp)
        viol(k, "IMFHT.POC", "%s: %d POC entries, none allowed", pfx, cs->nb_poc + nb_poc_tp);
    if (!cs->nb_tlm_seg)
        viol(k, "IMFHT.TLM", "%s: no TLM marker in the main header", pfx);
    /* RPCL in one tile: a tile-part per resolution is NL + 1 of them, in order */
    if (cs->nb_tp != max_nl_seen + 1)
        viol(k, "IMFHT.tile_parts", "%s: %d tile-parts, %d required (one per resolution)", pfx, cs->nb_tp,
             max_nl_seen + 1);
    if (cs->have_ccap15) {
        int pm = cs->ccap15 & 0x1F, b = pm + 8;
        int depth = (cs->ssiz[0] & 0x7F) + 1;
        int maxb = imf_ht_max_magb(depth, cs->cod.transform == 1, cs->mct, cs->cod.nb_levels);
        if (b > 31)
            viol(k, "IMFHT.MAGB", "%s: Ccap15 MAGB %d gives B = %d, above 31", pfx, pm, b);
        else if (b > maxb)
            viol(k, "IMFHT.MAGB", "%s: Ccap15 MAGB %d gives B = %d, above the %d of ST 2067-21 Annex I for %d-bit %s%s",
                 pfx, pm, b, maxb, depth, cs->cod.transform == 1 ? "5/3" : "9/7", cs->mct ? " with MCT" : "");
    }
}

static void print_summary(const Checker *k, const CsStream *cs)
{
    printf("%s: %zu bytes%s, Rsiz 0x%04X (%s), %ux%u+%u+%u, %d comps", k->file, cs->size,
           cs->jp2 ? " (JP2)" : "", cs->rsiz, profile_name(profile_of_rsiz(cs->rsiz)),
           cs->xsiz - cs->xosiz, cs->ysiz - cs->yosiz, cs->xosiz, cs->yosiz, cs->csiz);
    for (int c = 0; c < nb_comps_kept(cs) && c < 4; c++)
        printf(" %d%s/%dx%d", (cs->ssiz[c] & 0x7F) + 1, cs->ssiz[c] & 0x80 ? "s" : "", cs->xrsiz[c], cs->yrsiz[c]);
    printf(", tiles %ux%u (%ux%u), %s %d layers, NL %d, cblk %dx%d style 0x%02X, %s, mct %d, guard %d, QCD style %d, %d tile-parts, TLM %d, POC %d",
           cs->nb_tiles_x, cs->nb_tiles_y, cs->xtsiz, cs->ytsiz, order_name(cs->order), cs->nb_layers,
           cs->cod.nb_levels, pw2(cs->cod.xcb), pw2(cs->cod.ycb), cs->cod.cblk_style,
           cs->cod.transform ? "5/3" : "9/7", cs->mct, cs->qcd.guard_bits, cs->qcd.style, cs->nb_tp,
           cs->nb_tlm_seg, cs->nb_poc);
    if (cs->com_text[0])
        printf(", COM \"%s\"", cs->com_text);
    printf("\n");
    for (int i = 0; i < cs->nb_tp; i++)
        printf("%s:   tile-part %d: tile %d TPsot %d TNsot %d, %llu bytes (header %zu)\n", k->file, i,
               cs->tp[i].isot, cs->tp[i].tpsot, cs->tp[i].tnsot, (unsigned long long)cs->tp[i].length,
               cs->tp[i].header_len);
}

int pc_profile_id(const char *name)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
        if (!strcmp(profiles[i].name, name))
            return profiles[i].id;
    if (!strcmp(name, "broadcast_single"))
        return P_BC_SINGLE;
    return -1;
}

int pc_check(Checker *k, const uint8_t *buf, size_t size, int forced)
{
    int before = k->nb_viol;
    CsStream cs;
    int r = cs_parse(&cs, buf, size, on_syntax, k);
    if (r == 0 && cs.have_siz && cs.have_cod) {
        int declared = profile_of_rsiz(cs.rsiz);
        int p = forced ? forced : declared;
        int forced_ht = forced == P_IMF_HT || forced == P_IMF_HT_R;
        if (forced && forced != declared && !forced_ht)
            viol(k, "profile.Rsiz", "--profile %s but Rsiz = 0x%04X declares %s", profile_name(forced),
                 cs.rsiz, profile_name(declared));
        if (k->verbose)
            print_summary(k, &cs);
        if (p == P_DCI2K || p == P_DCI4K)
            check_dci(k, &cs, p);
        else if (p >= P_IMF2K && p <= P_IMF8K_R)
            check_imf(k, &cs, p);
        else if (p >= P_BC_SINGLE && p <= P_BC_MULTI_R)
            check_broadcast(k, &cs, p);
        if (forced_ht)
            check_imf_ht(k, &cs, p);
        if (cs.rsiz & 0x4000) {
            if (!forced_ht)
                check_ht(k, &cs, p >= P_IMF2K && p <= P_IMF8K_R);
        } else if (cs.have_cap && (cs.pcap & 0x00020000))
            viol(k, "HT.Rsiz", "CAP declares Part 15 but Rsiz bit 14 is clear");
        if (!k->quiet && k->nb_viol == before)
            printf("%s: ok (%s, %zu bytes%s)\n", k->file, profile_name(p), cs.size,
                   k->fps_num ? "" : ((p == P_DCI2K || p == P_DCI4K) ? ", 24 fps limits" : ""));
    } else if (k->nb_viol == before) {
        viol(k, "structure", "no usable SIZ/COD");
    }
    cs_free(&cs);
    return k->nb_viol != before;
}
