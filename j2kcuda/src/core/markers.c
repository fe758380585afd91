/*
 * Marker segment writers, ISO/IEC 15444-1 Annex A (layouts in markers.h).
 */
#include <string.h>

#include "core/markers.h"

void j2ki_mk_soc(J2kiBytes *b) { j2ki_put16(b, J2KI_MS_SOC); }
void j2ki_mk_sod(J2kiBytes *b) { j2ki_put16(b, J2KI_MS_SOD); }
void j2ki_mk_eoc(J2kiBytes *b) { j2ki_put16(b, J2KI_MS_EOC); }
void j2ki_mk_eph(J2kiBytes *b) { j2ki_put16(b, J2KI_MS_EPH); }

void j2ki_mk_siz(J2kiBytes *b, const J2kiPlan *pl)
{
    const J2kiCodingParams *cp = pl->cp;
    const J2kcImageDesc *img = &cp->img;

    j2ki_put16(b, J2KI_MS_SIZ);
    j2ki_put16(b, 38 + 3 * (uint32_t)img->nb_comps);
    j2ki_put16(b, cp->rsiz);
    j2ki_put32(b, img->x0 + img->width);
    j2ki_put32(b, img->y0 + img->height);
    j2ki_put32(b, img->x0);
    j2ki_put32(b, img->y0);
    j2ki_put32(b, pl->tile_w);
    j2ki_put32(b, pl->tile_h);
    j2ki_put32(b, cp->tile_x0);
    j2ki_put32(b, cp->tile_y0);
    j2ki_put16(b, (uint32_t)img->nb_comps);
    for (int c = 0; c < img->nb_comps; c++) {
        j2ki_put8(b, (uint32_t)(img->depth[c] - 1) | (img->is_signed[c] ? 0x80u : 0u));
        j2ki_put8(b, (uint32_t)img->dx[c]);
        j2ki_put8(b, (uint32_t)img->dy[c]);
    }
}

uint32_t j2ki_ht_ccap15(const J2kiPlan *pl)
{
    int b = 0;
    uint32_t magb;
    for (uint32_t i = 0; i < pl->nb_bands; i++)
        b = j2ki_imax(b, pl->bands[i].nb_mag_bits);
    /* B <= 8: 0; B in 9..27: B - 8; above, the coarser steps of Table A.6 */
    if (b <= 8)
        magb = 0;
    else if (b < 28)
        magb = (uint32_t)b - 8;
    else
        magb = (uint32_t)j2ki_imin(19 + (b - 27 + 3) / 4, 31);
    /* bits 15-14 = 0 HTONLY, 13 = 0 SINGLEHT, 12 = 0 RGNFREE, 11 = 0 HOMOGENEOUS, 5: 0 HTREV
     * (reversible only) / 1 HTIRV */
    return (pl->cp->reversible ? 0u : 0x20u) | magb;
}

void j2ki_mk_cap(J2kiBytes *b, const J2kiPlan *pl)
{
    j2ki_put16(b, J2KI_MS_CAP);
    j2ki_put16(b, 8);
    j2ki_put32(b, 0x00020000u); /* Pcap: bit 15 from the MSB, Part 15 */
    j2ki_put16(b, j2ki_ht_ccap15(pl));
}

void j2ki_mk_cod(J2kiBytes *b, const J2kiCodingParams *cp)
{
    int nb_res = cp->nb_levels + 1;

    j2ki_put16(b, J2KI_MS_COD);
    j2ki_put16(b, 12 + (cp->user_precincts ? (uint32_t)nb_res : 0));
    j2ki_put8(b, (cp->user_precincts ? 1u : 0u) | (cp->sop ? 2u : 0u) | (cp->eph ? 4u : 0u));
    j2ki_put8(b, (uint32_t)cp->order);
    j2ki_put16(b, (uint32_t)cp->nb_layers);
    j2ki_put8(b, cp->mct ? 1 : 0);
    j2ki_put8(b, (uint32_t)cp->nb_levels);
    j2ki_put8(b, (uint32_t)cp->log2_cblk_w - 2);
    j2ki_put8(b, (uint32_t)cp->log2_cblk_h - 2);
    j2ki_put8(b, (uint32_t)cp->cblk_style & 0x7F);
    j2ki_put8(b, cp->reversible ? 1 : 0);
    if (cp->user_precincts)
        for (int r = 0; r < nb_res; r++)
            j2ki_put8(b, (uint32_t)(cp->prec_log2_w[r] & 15) | (uint32_t)(cp->prec_log2_h[r] & 15) << 4);
}

/* Sqcd/Sqcc and the step sizes of component c (bands of tile 0, in QCD order = plan order) */
static void put_quant_body(J2kiBytes *b, const J2kiPlan *pl, int c)
{
    const J2kiCodingParams *cp = pl->cp;
    const J2kiTileComp *tc = &pl->tiles[0].comps[c];
    uint32_t first = tc->res[0].first_band;
    uint32_t nb = 1 + 3 * (uint32_t)cp->nb_levels;

    j2ki_put8(b, (uint32_t)cp->guard_bits << 5 | (cp->reversible ? 0u : 2u));
    for (uint32_t i = 0; i < nb; i++) {
        const J2kiBand *band = &pl->bands[first + i];
        if (cp->reversible)
            j2ki_put8(b, (uint32_t)band->expn << 3);
        else
            j2ki_put16(b, (uint32_t)band->expn << 11 | ((uint32_t)band->mant & 0x7FF));
    }
}

static uint32_t quant_body_len(const J2kiCodingParams *cp)
{
    return 1 + (1 + 3 * (uint32_t)cp->nb_levels) * (cp->reversible ? 1u : 2u);
}

void j2ki_mk_qcd(J2kiBytes *b, const J2kiPlan *pl)
{
    j2ki_put16(b, J2KI_MS_QCD);
    j2ki_put16(b, 2 + quant_body_len(pl->cp));
    put_quant_body(b, pl, 0);
}

int j2ki_qcc_needed(const J2kiPlan *pl, int c)
{
    const J2kiTileComp *t0 = &pl->tiles[0].comps[0], *tc = &pl->tiles[0].comps[c];
    uint32_t nb = 1 + 3 * (uint32_t)pl->cp->nb_levels;

    for (uint32_t i = 0; i < nb; i++) {
        const J2kiBand *a = &pl->bands[t0->res[0].first_band + i];
        const J2kiBand *d = &pl->bands[tc->res[0].first_band + i];
        if (a->expn != d->expn || (!pl->cp->reversible && a->mant != d->mant))
            return 1;
    }
    return 0;
}

void j2ki_mk_qcc(J2kiBytes *b, const J2kiPlan *pl, int c)
{
    int wide = pl->cp->img.nb_comps >= 257;

    j2ki_put16(b, J2KI_MS_QCC);
    j2ki_put16(b, 2 + (wide ? 2u : 1u) + quant_body_len(pl->cp));
    if (wide)
        j2ki_put16(b, (uint32_t)c);
    else
        j2ki_put8(b, (uint32_t)c);
    put_quant_body(b, pl, c);
}

void j2ki_mk_poc(J2kiBytes *b, const J2kiCodingParams *cp)
{
    int wide = cp->img.nb_comps >= 257;

    j2ki_put16(b, J2KI_MS_POC);
    j2ki_put16(b, 2 + (uint32_t)cp->nb_poc * (wide ? 9u : 7u));
    for (int i = 0; i < cp->nb_poc; i++) {
        const J2kiPoc *e = &cp->poc[i];
        j2ki_put8(b, (uint32_t)e->res_s);
        if (wide) j2ki_put16(b, (uint32_t)e->comp_s); else j2ki_put8(b, (uint32_t)e->comp_s);
        j2ki_put16(b, (uint32_t)e->layer_e);
        j2ki_put8(b, (uint32_t)e->res_e);
        /* CEpoc 8-bit: 0 stands for 256 (Table A.32) */
        if (wide) j2ki_put16(b, (uint32_t)e->comp_e); else j2ki_put8(b, (uint32_t)e->comp_e & 0xFF);
        j2ki_put8(b, (uint32_t)e->order);
    }
}

void j2ki_mk_com(J2kiBytes *b, const char *text)
{
    size_t n = strlen(text);

    if (n > 65535 - 4)
        n = 65535 - 4;
    j2ki_put16(b, J2KI_MS_COM);
    j2ki_put16(b, 4 + (uint32_t)n);
    j2ki_put16(b, 1);
    j2ki_put_bytes(b, (const uint8_t *)text, n);
}

size_t j2ki_mk_tlm(J2kiBytes *b, uint32_t nb_entries)
{
    size_t start = b->pos;
    uint32_t z = 0;

    while (nb_entries > 0) {
        uint32_t n = nb_entries < J2KI_TLM_MAX_ENTRIES ? nb_entries : J2KI_TLM_MAX_ENTRIES;
        j2ki_put16(b, J2KI_MS_TLM);
        j2ki_put16(b, 4 + J2KI_TLM_ENTRY_BYTES * n);
        j2ki_put8(b, z++);
        j2ki_put8(b, 0x60);
        for (uint32_t k = 0; k < n; k++) {
            j2ki_put16(b, 0);
            j2ki_put32(b, 0);
        }
        nb_entries -= n;
    }
    return start;
}

size_t j2ki_tlm_entry_offset(size_t tlm_start, uint32_t k)
{
    /* each segment: marker, Ltlm, Ztlm, Stlm = 6 bytes, then its entries */
    return tlm_start + (size_t)(k / J2KI_TLM_MAX_ENTRIES + 1) * 6 + (size_t)k * J2KI_TLM_ENTRY_BYTES;
}

void j2ki_mk_sot(J2kiBytes *b, uint32_t isot, uint32_t psot, int tpsot, int tnsot)
{
    j2ki_put16(b, J2KI_MS_SOT);
    j2ki_put16(b, 10);
    j2ki_put16(b, isot);
    j2ki_put32(b, psot);
    j2ki_put8(b, (uint32_t)tpsot);
    j2ki_put8(b, (uint32_t)tnsot);
}

void j2ki_mk_sop(J2kiBytes *b, uint32_t nsop)
{
    j2ki_put16(b, J2KI_MS_SOP);
    j2ki_put16(b, 4);
    j2ki_put16(b, nsop & 0xFFFF);
}

int j2ki_plt_entry_bytes(uint64_t len)
{
    int n = 1;
    while (len >>= 7)
        n++;
    return n;
}

void j2ki_put_plt_entry(J2kiBytes *b, uint64_t len)
{
    int n = j2ki_plt_entry_bytes(len);
    while (n-- > 0)
        j2ki_put8(b, (uint32_t)((len >> (7 * n)) & 0x7F) | (n ? 0x80u : 0u));
}

void j2ki_main_header(J2kiBytes *b, const J2kiPlan *pl, size_t *tlm_start)
{
    const J2kiCodingParams *cp = pl->cp;

    j2ki_mk_soc(b);
    j2ki_mk_siz(b, pl);
    if (cp->cblk_style & J2KI_CBLK_HT)
        j2ki_mk_cap(b, pl);
    j2ki_mk_cod(b, cp);
    j2ki_mk_qcd(b, pl);
    for (int c = 1; c < cp->img.nb_comps; c++)
        if (j2ki_qcc_needed(pl, c))
            j2ki_mk_qcc(b, pl, c);
    if (cp->nb_poc > 0)
        j2ki_mk_poc(b, cp);
    if (cp->comment[0])
        j2ki_mk_com(b, cp->comment);
    *tlm_start = 0;
    if (cp->tlm)
        *tlm_start = j2ki_mk_tlm(b, pl->nb_tile_parts);
}
