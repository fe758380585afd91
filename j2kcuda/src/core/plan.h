/*
 * Geometry of one codestream (ISO/IEC 15444-1 Annex B): tiles -> tile-components ->
 * resolutions -> sub-bands -> precincts -> code-blocks, computed once per encoder by
 * j2ki_plan_create() and reused for every frame. Every code-block of the frame also sits in
 * one flat array (plan->cblks, ordered tile, component, band, row-major code-block) so that
 * a GPU kernel or a loop can address it by a single index.
 *
 * All rectangles are half-open: [x0, x1) x [y0, y1).
 */
#ifndef J2KI_PLAN_H
#define J2KI_PLAN_H

#include "core/j2ki.h"

/** One coding pass of a code-block as tier-1 produced it. */
typedef struct J2kiPass {
    uint32_t rate;     /**< bytes of the code-block's data up to the end of this pass: a valid
                            truncation length (D.4.1); non-decreasing over the passes */
    uint32_t est;      /**< causal estimate of rate, known when the pass ends (the exact rate
                            of a pass that does not end a segment needs the bytes coded after
                            it): the end of a terminated pass, else the bytes completed so far
                            plus the byte being formed (a lower bound of rate). Tier-1's early
                            stop (t1_stop.h) decides on it, so that a decision never depends
                            on passes coded later */
    double   dist;     /**< distortion decrease of this pass, in tier-1 units (squared
                            quantisation indices, see t1_ref.h); band weight applied by rc */
    double   slope;    /**< rate control: convex-hull slope (dist per byte, weighted), 0 when
                            the pass is not on the hull */
    uint8_t  term;     /**< 1: a codeword segment ends with this pass (TERMALL, BYPASS, last) */
} J2kiPass;

/** One code-block: geometry, tier-1 output, and what rate control kept of it. */
typedef struct J2kiCblk {
    uint32_t x0, y0, x1, y1;      /**< in band coordinates (B.7) */
    uint32_t band_idx;            /**< index into plan->bands */
    /* tier-1 output */
    uint8_t  *data;               /**< coded bytes, capacity data_cap */
    uint32_t  data_cap;
    J2kiPass *passes;             /**< capacity max_passes */
    int       max_passes;
    int       nb_passes;          /**< passes coded (0 when every coefficient is 0) */
    int       numbps;             /**< magnitude bit-planes coded: Mb - (zero bit-planes) */
    /* rate control output: passes included up to and including layer l (cumulative,
     * non-decreasing in l); layer_passes[nb_layers-1] <= nb_passes */
    uint16_t *layer_passes;
    /* tier-2 state (per frame) */
    int       lblock;             /**< Lblock, B.10.7.1 */
    int       included;           /**< passes already sent in earlier layers */
} J2kiCblk;

/** One sub-band of one tile-component. */
typedef struct J2kiBand {
    int      orient;              /**< 0 LL, 1 HL, 2 LH, 3 HH */
    int      level;               /**< decomposition level nb (B.5): LL and level-NL bands of r=0/1 have nb = NL */
    int      res;                 /**< resolution r this band belongs to */
    int      comp, tile;
    uint32_t x0, y0, x1, y1;      /**< band coordinates, equation B-15 */
    uint32_t buf_x0, buf_y0;      /**< top-left of the band in the tile-component buffer
                                       after the forward DWT (Mallat layout, see dwt.h) */
    /* quantisation (Annex E) */
    int      expn, mant;          /**< epsilon_b, mu_b as written in QCD */
    int      nb_mag_bits;         /**< M_b = guard_bits + epsilon_b - 1 (E-2) */
    int      frac_bits;           /**< fractional bits below the index (0 when reversible) */
    float    step;                /**< Delta_b relative to the dynamic range (1 when reversible) */
    float    inv_step;            /**< 2^frac_bits / Delta_b as used by the quantiser */
    double   dist_weight;         /**< tier-1 distortion units -> squared error in the image,
                                       (Delta_b^2 * synthesis gain * MCT gain), for rc */
    /* code-blocks of this band (B.7), row-major */
    uint32_t nb_cblks_w, nb_cblks_h;
    uint32_t first_cblk;          /**< index of the first one in plan->cblks */
} J2kiBand;

/** One precinct's share of one band: the code-blocks it holds (B.7), and tag trees. */
typedef struct J2kiPrecBand {
    uint32_t cbx0, cby0, cbx1, cby1;  /**< code-block index range inside the band's grid */
    struct J2kiTagTree *incl, *zbp;   /**< inclusion and zero-bit-plane tag trees (tgt.h) */
} J2kiPrecBand;

typedef struct J2kiPrec {
    uint32_t x0, y0, x1, y1;      /**< precinct area in resolution coordinates, clipped */
    J2kiPrecBand bands[3];
    int nb_bands;
    /* tier-2 state (per pass over the tile): layers whose packet was already emitted; POC
     * entries never repeat a packet, and a precinct's layers always go out in order (B.12.2) */
    int nb_layers_sent;
} J2kiPrec;

/** One precinct of a tile placed on the reference grid for the position-driven progressions
 *  (B.12.1.3-5): (y, x) is where the standard's loop over the tile's grid reaches it. */
typedef struct J2kiPrecPos {
    uint64_t y, x;                /**< reference-grid position of the precinct's packet */
    uint32_t prec;                /**< precinct index in its resolution */
    uint8_t  comp, res;
} J2kiPrecPos;

typedef struct J2kiRes {
    int      r;                   /**< resolution level, 0 = lowest */
    uint32_t x0, y0, x1, y1;      /**< equation B-14 */
    int      log2_prec_w, log2_prec_h;  /**< PPx, PPy */
    int      log2_cbw, log2_cbh;  /**< xcb', ycb' (B-17, B-18) */
    uint32_t nb_prec_w, nb_prec_h;
    J2kiPrec *precs;              /**< nb_prec_w * nb_prec_h, row-major */
    int      nb_bands;            /**< 1 for r = 0, else 3 */
    uint32_t first_band;          /**< index into plan->bands of its first band */
} J2kiRes;

typedef struct J2kiTileComp {
    int      comp;
    uint32_t x0, y0, x1, y1;      /**< equation B-12 */
    uint32_t w, h;
    int      nb_res;              /**< nb_levels + 1 */
    J2kiRes  res[J2KI_MAX_RES];
    size_t   buf_offset;          /**< offset (in samples) of this tile-component in the frame's
                                       sample buffer; rows are w samples long */
} J2kiTileComp;

typedef struct J2kiTile {
    int      index;               /**< Isot */
    uint32_t x0, y0, x1, y1;      /**< B-7 .. B-10 */
    J2kiTileComp comps[J2KC_MAX_COMPS];
    /* tier-2 packet order (t2_ref.c) */
    uint32_t nb_precs;            /**< precincts of all components and resolutions */
    J2kiPrecPos *prec_order[3];   /**< sorted for RPCL, PCRL, CPRL (index order - J2KI_RPCL);
                                       NULL for the orders neither COD nor POC uses */
    int      nb_tile_parts;       /**< TNsot: tile-parts this tile's packets form (1..255) */
} J2kiTile;

typedef struct J2kiPlan {
    const J2kiCodingParams *cp;   /**< owned by the encoder; lives as long as the plan */
    uint32_t  nb_tiles_w, nb_tiles_h, nb_tiles;
    J2kiTile *tiles;
    uint32_t  nb_bands;
    J2kiBand *bands;              /**< every band of every tile-component: tile, comp, res, (HL, LH, HH) */
    uint32_t  nb_cblks;
    J2kiCblk *cblks;              /**< every code-block of the frame */
    size_t    nb_samples;         /**< total samples of all tile-components (the sample buffer) */
    int       max_cblk_w, max_cblk_h;
    uint32_t  tile_w, tile_h;     /**< XTsiz, YTsiz actually used (cp's 0 resolved) */
    uint32_t  nb_tile_parts;      /**< tile-parts of all tiles (TLM entries) */
    /* storage owned by the plan (allocated once) */
    void     *arena;
    size_t    arena_size;
    void     *rc_scratch;             /**< rate control's per-code-block scratch, allocated on
                                           first use and kept (freed with the plan) */
} J2kiPlan;

/**
 * Builds the whole geometry for the coding parameters, with quantisation parameters per
 * band, and allocates every code-block's pass table, layer table and data buffer.
 * Returns 0 or a negative J2KC_ERR_*; on failure *out is NULL.
 */
int  j2ki_plan_create(J2kiPlan **out, const J2kiCodingParams *cp, const J2kiLog *log);
void j2ki_plan_free(J2kiPlan **plan);
/** A lower bound of the workspace (arena) bytes the plan of cp needs, given pl's tile grid
 *  (nb_tiles*, tile_w, tile_h); j2ki_plan_create refuses a plan whose bound exceeds the host's
 *  memory before walking its code-blocks. */
uint64_t j2ki_plan_min_size(const J2kiCodingParams *cp, const J2kiPlan *pl);

/** Upper bound of the data bytes one code-block of w x h with M_b magnitude bits can produce:
 *  2 bits per sample and bit-plane for the coded symbols, plus up to 5 bytes per terminated
 *  segment (TERMALL ends one after every pass), plus slack. */
J2KI_HD uint32_t j2ki_cblk_data_cap(int w, int h, int nb_mag_bits)
{
    return (uint32_t)w * (uint32_t)h * (uint32_t)(nb_mag_bits + 1) / 4u + 15u * (uint32_t)nb_mag_bits + 64u;
}

/** The same bound for the HT block coder (ISO/IEC 15444-15) at p = 0, one HT set: per sample at
 *  most M_b + 1 MagSgn bits, 19 / 4 VLC bits (codeword and U-VLC per quad), 9 / 4 MEL bits,
 *  2 SigProp and 1 MagRef bits: M_b + 11, times 8 / 7 for the bit stuffing, plus slack. */
J2KI_HD uint32_t j2ki_cblk_data_cap_ht(int w, int h, int nb_mag_bits)
{
    return (uint32_t)w * (uint32_t)h * (uint32_t)(nb_mag_bits + 12) / 7u + 64u;
}

/** The tile-component code-block cb lies in. */
J2KI_HD const J2kiTileComp *j2ki_cblk_tc(const J2kiPlan *plan, const J2kiCblk *cb)
{
    const J2kiBand *band = &plan->bands[cb->band_idx];
    return &plan->tiles[band->tile].comps[band->comp];
}

/** Offset (in samples) of code-block cb's first coefficient in the frame's sample buffer: its
 *  tile-component's buffer, the band's place in it, the block's place in the band; rows are
 *  j2ki_cblk_tc(plan, cb)->w samples apart. */
J2KI_HD size_t j2ki_cblk_offset(const J2kiPlan *plan, const J2kiCblk *cb)
{
    const J2kiBand *band = &plan->bands[cb->band_idx];
    const J2kiTileComp *tc = j2ki_cblk_tc(plan, cb);
    return tc->buf_offset + (size_t)(band->buf_y0 + cb->y0 - band->y0) * tc->w + band->buf_x0 +
           (cb->x0 - band->x0);
}

/** Most coding passes a code-block with M_b magnitude bits can have (D.3: 3 per plane, the first has 1). */
J2KI_HD int j2ki_max_passes(int nb_mag_bits) { return nb_mag_bits > 0 ? 3 * nb_mag_bits - 2 : 0; }

#endif /* J2KI_PLAN_H */
