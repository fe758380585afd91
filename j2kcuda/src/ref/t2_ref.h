/*
 * Tier-2 coding (Annex B.9-B.12): packets in progression order (with POC), packet headers
 * (tag trees, comma code for the number of passes, Lblock lengths), tile-parts, and the
 * codestream around them (markers.h writes the marker segments).
 */
#ifndef J2KI_T2_H
#define J2KI_T2_H

#include "core/j2ki.h"
#include "core/plan.h"
#include "hd/bitio.h"

/**
 * Exact size of the codestream that j2ki_codestream_write would write for the current
 * cblk->layer_passes, every marker included (JP2 boxes excluded). When comp_len is not NULL it
 * receives, per component, the bytes of the tile-parts that carry that component's packets
 * (tile-part headers included; only meaningful with tile_parts = C; with cp->comp_bytes_res_e
 * only the packets of lower resolutions and the tile-parts they start). When layer_len is not NULL
 * it receives, per layer, the cumulative codestream size if it were truncated after that layer.
 * Cheap enough to call a few dozen times per frame: it simulates headers, copies no data.
 */
int64_t j2ki_t2_size(J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len);

/**
 * Writes the codestream (SOC ... EOC) into out. Returns the number of bytes written or
 * J2KC_ERR_BUFSIZE when cap is too small.
 */
int64_t j2ki_codestream_write(J2kiPlan *plan, uint8_t *out, size_t cap);

/** Bytes of the main header (SOC + markers) for this plan: the floor of any budget. */
int64_t j2ki_main_header_size(const J2kiPlan *plan);

/**
 * Walks the packets of one tile in progression order (COD order or the POC entries) without
 * coding them and returns the number of tile-parts they form (B.12, A.4.2 TNsot), or
 * J2KC_ERR_INVAL when the POC entries leave a packet out, J2KC_ERR_UNSUPPORTED past 255
 * tile-parts. Called by j2ki_plan_create.
 */
int j2ki_t2_count_tile_parts(J2kiPlan *plan, J2kiTile *tile, const J2kiLog *log);

/**
 * Called by j2ki_t2_walk_packets for each packet in codestream order: tile, component c,
 * resolution r, precinct p (index in its resolution), layer l; new_tp is 1 when the packet
 * starts a new tile-part. A tile without any packet gives one call with l = -1 (its empty
 * tile-part). Returns 0 or a negative error that stops the walk.
 */
typedef int (*J2kiT2PacketFn)(void *opaque, const J2kiTile *tile, int c, int r, uint32_t p, int l, int new_tp);

/* ---- the pieces of a sizing, shared by j2ki_t2_size and the threaded sizer (t2_sizer.h) ---- */

/**
 * One packet's [SOP] header [EPH] (A.8.1, B.10, A.8.2) for precinct prec (of the resolution
 * whose first band is first_band), layer l, coded into o (a counter when o has no buffer) with
 * t2_core.h's header coder; nsop: SOP's Nsop. Returns the bytes of code-block data that follow
 * (the body, B.9), or < 0. Does not mark the layer's passes sent: the caller does that with
 * j2ki_t2_prec_commit after the body.
 */
int64_t j2ki_t2_packet_head(J2kiBytes *o, J2kiPlan *plan, uint32_t first_band, J2kiPrec *prec, int l,
                            uint32_t nsop);

/**
 * What a sizing adds up (j2ki_t2_size's total, comp_len and layer_len), fed with the lengths
 * of the packets and of the tile-parts. A tile-part's bytes are its SOT, PLT and SOD and its
 * packets'; it counts towards the component of its first packet (a tile without packets: its
 * empty tile-part, component 0, resolution 0). With cp->comp_bytes_res_e, only packets of
 * lower resolutions, and the headers of tile-parts that start with one, count per component.
 */
typedef struct J2kiT2Tally {
    const J2kiCodingParams *cp;
    uint64_t total;                          /* main header, EOC, the tile-parts so far */
    uint64_t comp[J2KC_MAX_COMPS];
    uint64_t layer[J2KI_MAX_LAYERS];         /* packets of each layer */
} J2kiT2Tally;

/** Starts a sizing of the plan's codestream: its main header and EOC. */
void j2ki_t2_tally_init(J2kiT2Tally *t, const J2kiPlan *plan);

/** Whether resolution r's bytes count towards their component (comp_bytes_res_e). */
static inline int j2ki_t2_tally_counts(const J2kiT2Tally *t, int r)
{
    return !t->cp->comp_bytes_res_e || r < t->cp->comp_bytes_res_e;
}

/** A packet of component c, resolution r, layer l: len bytes (SOP and EPH included). */
static inline void j2ki_t2_tally_packet(J2kiT2Tally *t, int c, int r, int l, uint64_t len)
{
    if (j2ki_t2_tally_counts(t, r))
        t->comp[c] += len;
    t->layer[l] += len;
}

/** A tile-part whose first packet is of component c, resolution r, with plt_bytes of PLT
 *  segments (0 without PLT) and packet_bytes of packets (already given one by one). */
void j2ki_t2_tally_tile_part(J2kiT2Tally *t, int c, int r, uint64_t plt_bytes, uint64_t packet_bytes);

/** The sizing's result, as j2ki_t2_size returns it (comp_len, layer_len may be NULL). */
int64_t j2ki_t2_tally_end(const J2kiT2Tally *t, uint64_t *comp_len, uint64_t *layer_len);

/** Walks every tile's packets in codestream order (progression order and POC, B.12) without
 *  coding them, which is the layout of a codestream for this plan in any frame (the device
 *  tier-2 builds its table of codestream cells from it). Returns 0 or < 0. */
int j2ki_t2_walk_packets(J2kiPlan *plan, J2kiT2PacketFn fn, void *opaque);

#endif
