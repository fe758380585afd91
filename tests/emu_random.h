/*
 * Random coding parameters and code-block states for the emulated CUDA tier-2 and rate control
 * (tests/t2_emu.cc, tests/rc_emu.cc): random geometries (1 to 3 components, subsampling,
 * tiles, 0 to 5 levels, code-block and precinct sizes), 1 to 5 layers, the five progression
 * orders and POC lists, tile-part splits, SOP / EPH / PLT / TLM, BYPASS / TERMALL pass tables;
 * code-blocks with zero bit-planes, pass counts, rates, distortions, data bytes with many 0xFF,
 * and layer_passes growing over the layers.
 */
#ifndef J2KI_EMU_RANDOM_H
#define J2KI_EMU_RANDOM_H

static uint32_t rnd_state = 2463534242u;
static uint32_t rnd() { rnd_state ^= rnd_state << 13; rnd_state ^= rnd_state >> 17; rnd_state ^= rnd_state << 5; return rnd_state; }

/* The CUDA tier-2's team threshold (hooks.h J2KC_T2_TEAM_MIN) for iteration iter: the
 * default, every precinct with code-blocks by a team, and a few in between, so that both
 * header coders and their mixes run on the random cases. light: only one iteration in five
 * by teams everywhere and one with a mix (a team's barriers are a block's, each a switch of
 * 256 fibers here; bench/results/precinct-teams.md has the times). */
static int emu_team_min(int iter, int light)
{
    static const int m[] = { 0, 1, 2, 9, 40 }, l[] = { 0, 1, 0, 16, 0 };
    return light ? l[iter % 5] : m[iter % 5];
}

static void random_cp(J2kiCodingParams *cp)
{
    static const int styles[] = { 0, 0, J2KI_CBLK_BYPASS, J2KI_CBLK_TERMALL, J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL };
    static const int splits[] = { J2KI_TP_NONE, J2KI_TP_RES, J2KI_TP_COMP };
    memset(cp, 0, sizeof(*cp));
    cp->img.nb_comps = 1 + (int)(rnd() % 3);
    cp->img.width = 1 + rnd() % 160;
    cp->img.height = 1 + rnd() % 160;
    cp->img.x0 = rnd() % 3 ? 0 : rnd() % 9;
    cp->img.y0 = rnd() % 3 ? 0 : rnd() % 9;
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        cp->img.dx[c] = c < cp->img.nb_comps ? 1 + (int)(rnd() % 3) * (int)(rnd() % 2) : 1;
        cp->img.dy[c] = c < cp->img.nb_comps ? 1 + (int)(rnd() % 3) * (int)(rnd() % 2) : 1;
        cp->img.depth[c] = 4 + (int)(rnd() % 13);
    }
    if (rnd() % 3 == 0) {
        cp->tile_w = 10 + rnd() % 60;
        cp->tile_h = 10 + rnd() % 60;
        cp->tile_x0 = cp->img.x0 ? rnd() % (cp->img.x0 + 1) : 0;
        cp->tile_y0 = cp->img.y0 ? rnd() % (cp->img.y0 + 1) : 0;
    }
    cp->nb_levels = (int)(rnd() % 6);
    cp->log2_cblk_w = 2 + (int)(rnd() % 5);
    cp->log2_cblk_h = 2 + (int)(rnd() % 5);
    cp->reversible = (int)(rnd() % 2);
    cp->guard_bits = 1 + (int)(rnd() % 3);
    cp->bypass_start = 4;
    cp->nb_layers = 1 + (int)(rnd() % 5);
    cp->order = (int)(rnd() % 5);
    cp->sop = (int)(rnd() % 2);
    cp->eph = (int)(rnd() % 2);
    cp->plt = (int)(rnd() % 2);
    cp->tlm = (int)(rnd() % 2);
    cp->cblk_style = styles[rnd() % 5];
    cp->tp_split = splits[rnd() % 3];
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp->prec_log2_w[r] = cp->prec_log2_h[r] = 15;
    if (rnd() % 2) {
        cp->user_precincts = 1;
        for (int r = 0; r <= cp->nb_levels; r++) {
            cp->prec_log2_w[r] = (uint8_t)((r ? 1 : 0) + rnd() % 6);
            cp->prec_log2_h[r] = (uint8_t)((r ? 1 : 0) + rnd() % 6);
        }
    }
    if (rnd() % 3 == 0) {
        /* a partial first entry, then one covering everything in another order */
        cp->nb_poc = 2;
        cp->poc[0].res_s = (int)(rnd() % (uint32_t)(cp->nb_levels + 1));
        cp->poc[0].res_e = cp->poc[0].res_s + 1 + (int)(rnd() % 2);
        cp->poc[0].comp_s = (int)(rnd() % (uint32_t)cp->img.nb_comps);
        cp->poc[0].comp_e = cp->poc[0].comp_s + 1;
        cp->poc[0].layer_e = 1 + (int)(rnd() % (uint32_t)cp->nb_layers);
        cp->poc[0].order = (int)(rnd() % 5);
        cp->poc[1] = (J2kiPoc){ 0, 0, cp->nb_layers, cp->nb_levels + 1, cp->img.nb_comps, (int)(rnd() % 5) };
    }
}

/* Tier-1 results and rate control's choice, at random: passes with growing rates (ends of
 * segments where the style says), bytes with many 0xFF, layer_passes growing over the layers. */
static void random_states(J2kiPlan *pl)
{
    const J2kiCodingParams *cp = pl->cp;
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        J2kiCblk *cb = &pl->cblks[i];
        int mb = pl->bands[cb->band_idx].nb_mag_bits;
        int maxp, n;
        uint32_t rate = 0;
        cb->numbps = rnd() % 4 ? (int)(rnd() % (uint32_t)(mb + 1)) : 0;
        maxp = cb->numbps ? std::min(3 * cb->numbps - 2, cb->max_passes) : 0;
        n = maxp ? (int)(rnd() % (uint32_t)(maxp + 1)) : 0;
        if (n && rnd() % 3 == 0)
            n = maxp;
        cb->nb_passes = n;
        double dist = (double)(1u << (rnd() % 20));
        for (int k = 0; k < n; k++) {
            uint32_t room = (cb->data_cap - rate) / (uint32_t)(n - k + 1);
            rate += rnd() % 8 == 0 ? 0 : rnd() % (room + 1);
            cb->passes[k].rate = rate;
            /* distortion decreases: mostly shrinking, sometimes 0 or growing (the hull sorts it out) */
            cb->passes[k].dist = rnd() % 10 == 0 ? 0.0 : dist * (0.25 + (double)(rnd() % 1000) / 1000.0);
            dist *= rnd() % 6 == 0 ? 1.5 : 0.6;
            cb->passes[k].est = rate;
            cb->passes[k].slope = 0.0;
            cb->passes[k].term = (uint8_t)(k == n - 1 || (cp->cblk_style & J2KI_CBLK_TERMALL) ||
                                           ((cp->cblk_style & J2KI_CBLK_BYPASS) && rnd() % 3 == 0));
        }
        for (uint32_t b = 0; b < rate; b++)
            cb->data[b] = (uint8_t)(rnd() % 5 == 0 ? 0xFF : rnd());
        int prev = 0;
        for (int l = 0; l < cp->nb_layers; l++) {
            int v = prev + (n > prev ? (int)(rnd() % (uint32_t)(n - prev + 1)) : 0);
            if (rnd() % 3 == 0)
                v = prev;
            if (l == cp->nb_layers - 1 && rnd() % 2)
                v = n;
            cb->layer_passes[l] = (uint16_t)v;
            prev = v;
        }
    }
}

#endif /* J2KI_EMU_RANDOM_H */
