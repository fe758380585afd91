/*
 * CUDA tier-2 (ISO/IEC 15444-1 B.9-B.12, A.4, A.7): packetisation on the device, so that only
 * the finished codestream crosses PCIe. The plan's tier-2 data (code-blocks, bands, precincts
 * with their tag trees) are mirrored in device memory once per slot, with the same structs and
 * device pointers, so that the J2KI_HD packet-header coder of t2_core.h runs on them unchanged.
 *
 * The codestream is a fixed table of cells (Bruns et al., "Evaluation of GPU/CPU co-processing
 * models for JPEG 2000 packetization"), built once from the progression order (and POC):
 *   cell 0                      main header (SOC ... TLM with zero entries), fixed
 *   per tile-part k:  one cell  SOT + PLT segments + SOD
 *                     then one cell per packet of it: [SOP] header [EPH] body
 *   last cell                   EOC
 * Per frame: one warp per precinct codes its headers layer by layer (counting; t2_par.h: a lane
 * per code-block, the same bits as t2_core.h's serial coder; a precinct of many code-blocks,
 * as every resolution's without a precinct partition, is coded by a team: the warps of a
 * thread block, j2ki_t2_dev_prec) -> header and body bytes per
 * (precinct, layer); one thread per tile-part turns them into cell lengths (PLT sized with
 * t2_core.h's rule); an exclusive scan (scan_cuda.h) gives every cell's offset; then the cells are
 * written in parallel: tile-part headers (Psot, PLT, TLM entries from the offsets) by one
 * thread per tile-part, packet headers by one warp or team per precinct (the header coder
 * again, writing), code-block bodies by one warp per code-block, the main header by a device copy of
 * the template made at init.
 */
#ifndef J2KI_T2_CUDA_H
#define J2KI_T2_CUDA_H

#include <cuda.h>

#include "core/j2ki.h"
#include "core/plan.h"
#include "hd/t2_core.h"
#include "hd/t2_par.h"
#include "cuda/t1_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One precinct on the device: the plan's J2kiPrec (tag trees aimed at device copies) and the
 *  index in the device band array of its resolution's first band. */
typedef struct J2kiT2PrecDev {
    J2kiPrec prec;
    uint32_t first_band;
    uint32_t node_base;      /**< its first node in pnodes (its bands' inclusion-tree nodes follow) */
} J2kiT2PrecDev;

/** One packet in codestream order. */
typedef struct J2kiT2PktDev {
    uint32_t prec;           /**< global precinct index (tile, comp, res, precinct order) */
    uint32_t nsop;           /**< Nsop: packet index in its tile (A.8.1), before & 0xFFFF */
    uint32_t tp;             /**< global tile-part index (TLM order) */
    uint16_t layer;
    uint8_t  comp, res;
} J2kiT2PktDev;

/** One tile-part in codestream order: its packets are pkts[first_pkt, first_pkt + nb_pkts). */
typedef struct J2kiT2TpDev {
    uint32_t first_pkt, nb_pkts;
    uint32_t isot;           /**< Isot */
    uint8_t  tpsot, tnsot;   /**< TPsot, TNsot */
    uint8_t  comp, res;      /**< component and resolution of its first packet (comp_bytes accounting) */
} J2kiT2TpDev;

/** What a frame's device result says (device memory; the backend downloads it). */
typedef struct J2kiT2CudaResult {
    uint64_t len;            /**< codestream bytes written at d_out (0 on error) */
    int32_t  err;            /**< 0 or the first J2KC_ERR_* of rate control or tier-2 */
    int32_t  rc_why, rc_why_arg; /**< rate control's J2KI_RC_WHY_* and its layer */
    int32_t  nb_probes;      /**< thresholds rate control sized */
    int32_t  nb_rounds;      /**< sizing steps they took (several thresholds at once are one) */
    int64_t  rc_total;       /**< rate control's last measured size */
    uint32_t hull_mask;      /**< j2ki_rc_cuda_run's OR of j2ki_rc_cblk_hull_bits (qstep_try) */
} J2kiT2CudaResult;

/** Every device pointer and count the tier-2 kernels use (passed by value). */
typedef struct J2kiT2DevView {
    J2kiCblk         *cblks;       /**< plan order; data/passes/layer_passes are device pointers */
    const J2kiBand   *bands;
    J2kiT2PrecDev    *precs;
    const J2kiT2PktDev *pkts;
    const J2kiT2TpDev  *tps;
    const uint32_t   *pkt_of;      /**< per (precinct, layer): index of its packet in pkts */
    uint32_t         *hdr_len;     /**< per (precinct, layer): SOP + header + EPH bytes */
    uint32_t         *body_len;    /**< per (precinct, layer): code-block bytes */
    uint64_t         *cell_len, *cell_off;
    uint64_t         *dst;         /**< per (code-block, layer): where its new bytes go */
    J2kiT2pNode      *pnodes;      /**< scratch of the parallel header coder, one per tree node
                                        position (t2_par.h), precincts at their node_base */
    J2kiT2CudaResult *result;
    uint32_t nb_cblks, nb_bands, nb_precs, nb_pkts, nb_tps, nb_cells;
    int      nb_layers, nb_comps;
    int      sop, eph, plt, tlm, scan;
    int      comp_res_e;           /**< cp->comp_bytes_res_e: 0, or comp_len counts only the
                                        packets of lower resolutions and the tile-parts they start */
    uint64_t main_len;             /**< main header bytes (cell 0) */
    uint64_t tlm_start;            /**< offset of the first TLM segment in the main header */
    const uint32_t *prec_order;    /**< every precinct once: those a team codes first (nb_team of
                                        them, a thread block each), then the others */
    uint32_t nb_team;
} J2kiT2DevView;

typedef struct J2kiT2Cuda J2kiT2Cuda;

/**
 * Builds the device mirror of plan (one per backend slot: it holds per-frame state) and every
 * buffer tier-2 needs; nothing is allocated later. h_cblks gives each code-block's offsets in
 * the slot's tier-1 areas d_data / d_passes (t1_cuda.h). Synchronous (init time only).
 * Errors are logged and stored in *sticky (cuda_util.h); returns 0 or < 0.
 */
int  j2ki_t2_cuda_init(J2kiT2Cuda **out, J2kiPlan *plan, const J2kiCblkDev *h_cblks, uint8_t *d_data,
                       J2kiPass *d_passes, const J2kiLog *log, int *sticky);
void j2ki_t2_cuda_free(J2kiT2Cuda **t);

/** Where t's later CUDA errors are stored (cuda_util.h; NULL: nowhere); returns the previous
 *  target. The backend makes a slot's tables without a sticky target, then gives them its own
 *  for the frames, and a graph capture the capturing caller's. */
int *j2ki_t2_cuda_sticky(J2kiT2Cuda *t, int *sticky);

/** The device view (for rc_cuda.cu) and the device result of the slot's frames. */
const J2kiT2DevView *j2ki_t2_cuda_view(const J2kiT2Cuda *t);
J2kiT2CudaResult    *j2ki_t2_cuda_result(const J2kiT2Cuda *t);

/** Enqueues on st: takes nb_passes and numbps of every code-block from tier-1's d_res and
 *  clears the frame's result. The first step of a frame (j2ki_rc_cuda_run calls it). */
int  j2ki_t2_cuda_import(J2kiT2Cuda *t, const J2kiCblkRes *d_res, CUstream st);

/**
 * Enqueues on st the writing of the codestream (SOC ... EOC) for the code-blocks' current
 * layer_passes (set by j2ki_rc_cuda_run) into d_out (cap bytes, device memory). The result
 * (j2ki_t2_cuda_result) receives the length, or err = J2KC_ERR_BUFSIZE when cap is too small,
 * or rate control's error (then nothing is written). Returns < 0 only for enqueue failures.
 */
int  j2ki_t2_cuda_write(J2kiT2Cuda *t, CUstream st, uint8_t *d_out, size_t cap);

#ifdef __cplusplus
}
#endif

/** Per-warp shared-memory scratch of the header coder (j2ki_t2_dev_prec), in 32-bit words; a
 *  team of n warps has n times as many, contiguous. Its end holds the team's exchange
 *  (J2KI_T2_TEAM_SLOTS), the rest is the bit buffer of t2_par.h (its last word stays 0:
 *  j2ki_t2p_get reads one word ahead). A code-block's bits must fit one warp's buffer: 503 x 32
 *  bits is far above one code-block's header bits (at most about 34 tag-tree levels x 2 trees,
 *  16 + 33 for the pass count and Lblock, and 164 lengths of at most 32 + 7 bits with
 *  TERMALL). */
#ifndef J2KI_T2_WARP_WORDS     /* tests/t2_emu.cc takes fewer, so that rounds are cut short */
#define J2KI_T2_WARP_WORDS 512
#endif

/** Words at the end of the scratch of a team of nw warps for its exchange: four per warp and
 *  three more. A team is the thread block that codes the headers of a precinct of many
 *  code-blocks (at least J2KI_TUNE_T2_TEAM_MIN_CBLKS, tuning.h), 32 code-blocks a warp at a
 *  time: the precinct kernel's blocks (PREC_WARPS, t2_kern.h) and rate control's (RC_WARPS,
 *  rc_kern.h). */
#define J2KI_T2_TEAM_SLOTS(nw) (4 * (nw) + 4)

#if defined(__CUDACC__) || defined(J2KI_T2_EMU)
/* ---- device pieces shared by t2_cuda.cu and rc_cuda.cu (one precinct / one tile-part); ----
 * ---- tests/t2_emu.cc runs them on the host                                                 ---- */

/** The code-blocks of a precinct in packet order (J2KI_T2_FOR_CBLKS), for the warp or team that
 *  codes its headers. */
typedef struct J2kiT2TeamPrec {
    uint32_t           nk[3];        /* code-blocks of each band in the precinct */
    uint32_t           nn[3];        /* tag-tree nodes of each band */
    const J2kiTgtNode *tn[3];        /* parent links (the inclusion tree; both trees have its shape) */
    J2kiT2pNode       *nd[3];        /* the coder's scratch of each band's nodes */
    uint32_t           n;            /* code-blocks in all */
} J2kiT2TeamPrec;

static __device__ J2kiCblk *j2ki_t2_team_cblk(const J2kiT2DevView *v, const J2kiT2PrecDev *pd,
                                              const J2kiT2TeamPrec *wp, uint32_t j, int *k, uint32_t *r)
{
    int b = 0;
    while (j >= wp->nk[b])
        j -= wp->nk[b++];
    const J2kiPrecBand *pb = &pd->prec.bands[b];
    const J2kiBand *band = &v->bands[pd->first_band + b];
    uint32_t w = pb->cbx1 - pb->cbx0;
    *k = b;
    *r = j;
    return &v->cblks[band->first_cblk + (pb->cby0 + j / w) * band->nb_cblks_w + pb->cbx0 + j % w];
}

static __device__ uint32_t j2ki_t2_warp_scan(uint32_t x)
{
    const uint32_t lane = threadIdx.x & 31;
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t y = __shfl_up_sync(0xFFFFFFFFu, x, o);
        if (lane >= (uint32_t)o)
            x += y;
    }
    return x;
}

/** Barrier of a team of NW warps: the warp itself, or the whole thread block (a team of more
 *  than one warp is its block). */
template <int NW> static __device__ __forceinline__ void j2ki_t2_team_sync()
{
    if (NW == 1)
        __syncwarp();
    else
        __syncthreads();
}

/* Node minima of one band's trees, a level at a time, each parent gathering its (up to four)
 * children: plain loads and stores by the one team (one SM), so no atomics are needed.
 * fvi_only: this layer's fvi (the leaves' fvi set by the caller); else vi, vz and fvz. */
template <int NW>
static __device__ void j2ki_t2_team_sweep(const J2kiT2TeamPrec *wp, int k, const J2kiPrecBand *pb, int fvi_only)
{
    const uint32_t tid = threadIdx.x % (32 * NW);
    J2kiT2pNode *nd = wp->nd[k];
    uint32_t lw = pb->cbx1 - pb->cbx0, lh = pb->cby1 - pb->cby0, base = 0;
    while (lw > 1 || lh > 1) {
        uint32_t pw = (lw + 1) >> 1, ph = (lh + 1) >> 1, pbase = base + lw * lh;
        for (uint32_t i = tid; i < pw * ph; i += 32 * NW) {
            uint32_t X = i % pw, Y = i / pw;
            J2kiT2pNode m;
            m.vi = INT32_MAX;
            m.vz = INT32_MAX;
            m.fvi = UINT32_MAX;
            m.fvz = ~0ull;
            for (uint32_t y = 2 * Y; y < 2 * Y + 2 && y < lh; y++)
                for (uint32_t x = 2 * X; x < 2 * X + 2 && x < lw; x++) {
                    const J2kiT2pNode *c = &nd[base + y * lw + x];
                    if (fvi_only) {
                        m.fvi = c->fvi < m.fvi ? c->fvi : m.fvi;
                    } else {
                        m.vi = c->vi < m.vi ? c->vi : m.vi;
                        m.vz = c->vz < m.vz ? c->vz : m.vz;
                        m.fvz = c->fvz < m.fvz ? c->fvz : m.fvz;
                    }
                }
            if (fvi_only) {
                nd[pbase + i].fvi = m.fvi;
            } else {
                nd[pbase + i].vi = m.vi;
                nd[pbase + i].vz = m.vz;
                nd[pbase + i].fvz = m.fvz;
            }
        }
        j2ki_t2_team_sync<NW>();
        base = pbase;
        lw = pw;
        lh = ph;
    }
}

/**
 * j2ki_t2p_emit without final, by the 32 lanes of a warp, 32 units per step: lane i takes the
 * unit that starts where the i units before it end when none of them is 0xFF (the first of
 * width em->cap, the others 8 bits), and the step keeps the units up to the first 0xFF among
 * them (the one after it is 7 bits) or up to the last whole unit. Every lane calls it with the
 * same em, and returns with the same em and position; the units kept are written by their lanes.
 */
#ifndef J2KI_T2_EMIT_HOOK
#define J2KI_T2_EMIT_HOOK(n, ff) ((void)0)   /* tests/t2_emu.cc counts the steps and their 0xFF */
#endif
#ifndef J2KI_T2_ROUND_HOOK
#define J2KI_T2_ROUND_HOOK(nw, g, used, n) ((void)0)  /* tests/t2_emu.cc counts the rounds (thread 0) */
#endif
static __device__ uint32_t j2ki_t2_warp_emit(J2kiT2pEmit *em, const uint32_t *w, uint32_t pos, uint32_t end)
{
    const unsigned FULL = 0xFFFFFFFFu;
    const uint32_t lane = threadIdx.x & 31;
    while (end - pos >= (uint32_t)em->cap) {
        const uint32_t cap0 = (uint32_t)em->cap;
        const uint32_t st = pos + (lane ? cap0 + 8 * (lane - 1) : 0), wd = lane ? 8 : cap0;
        const int whole = end - pos >= st - pos + wd;  /* positions stay far below 2^32 */
        const uint32_t u = whole ? j2ki_t2p_get(w, st, (int)wd) : 0;
        const unsigned wm = __ballot_sync(FULL, whole);               /* lanes 0 .. n-1 */
        const unsigned ff = __ballot_sync(FULL, whole && wd == 8 && u == 0xFF);
        int n = __popc(wm);
        if (ff && __ffs((int)ff) < n)
            n = __ffs((int)ff);
        if (em->out && (int)lane < n)
            em->out[em->bytes + lane] = (uint8_t)u;
        em->bytes += (uint32_t)n;
        J2KI_T2_EMIT_HOOK(n, ff);
        pos += cap0 + 8 * (uint32_t)(n - 1);
        em->last_ff = (ff >> (n - 1)) & 1;
        em->cap = em->last_ff ? 7 : 8;
    }
    return pos;
}

/**
 * The headers of every layer of precinct p, by a team of NW warps (t2_par.h): one warp, or the
 * NW warps of a thread block of 32 * NW threads, with the bits of j2ki_t2_prec_header. out
 * NULL: counts them into v->hdr_len / v->body_len (SOP, header and EPH bytes; code-block
 * bytes). out set: writes SOP, header and EPH of each packet at its cell (cell_off) and each
 * code-block's body destination (dst), as prec_write_kernel did; the lengths must be the
 * counted ones. Every thread of the team calls it with the same p; w is the team's
 * NW * J2KI_T2_WARP_WORDS words of shared memory. Returns the same 0 or < 0 in every thread,
 * after a barrier of the team (w may then be used again).
 *
 * A round takes the next 32 * NW code-blocks in packet order, warp i the i-th 32: each lane
 * counts its code-block's bits, a warp scan and the warps' totals (exchanged in w's slots)
 * place them, the code-blocks whose bits fit the buffer write them, and warp 0 cuts the
 * buffer into bytes (j2ki_t2_warp_emit) while the others wait; the bits of an unfinished byte
 * move to the buffer's start for the next round.
 */
template <int NW>
static __device__ int j2ki_t2_dev_prec(const J2kiT2DevView *v, uint32_t p, uint32_t *w, uint8_t *out)
{
    const unsigned FULL = 0xFFFFFFFFu;
    const uint32_t T = 32 * NW, tid = threadIdx.x % T, lane = tid & 31, wid = tid >> 5;
    const uint32_t nwords = NW * J2KI_T2_WARP_WORDS - J2KI_T2_TEAM_SLOTS(NW);
    const uint32_t cap = (nwords - 1) * 32;           /* bits; the last word stays 0 */
    uint32_t *const s_tot = w + nwords, *const s_use = s_tot + NW, *const s_end = s_use + NW,
             *const s_body = s_end + NW, *const s_misc = s_body + NW;
    const J2kiT2PrecDev *pd = &v->precs[p];
    const int L = v->nb_layers;
    const uint32_t extra = (v->sop ? J2KI_T2_SOP_BYTES : 0) + (v->eph ? J2KI_T2_EPH_BYTES : 0);
    J2kiT2TeamPrec wp;
    uint32_t base = pd->node_base;
    unsigned long long mask = 0;
    int err = 0;

    wp.n = 0;
    for (int k = 0; k < 3; k++) {
        const J2kiPrecBand *pb = &pd->prec.bands[k];
        int has = k < pd->prec.nb_bands && pb->incl && pb->incl->nb_nodes;
        wp.nk[k] = has ? (pb->cbx1 - pb->cbx0) * (pb->cby1 - pb->cby0) : 0;
        wp.nn[k] = has ? pb->incl->nb_nodes : 0;
        wp.tn[k] = has ? pb->incl->nodes : NULL;
        wp.nd[k] = v->pnodes + base;
        base += wp.nn[k];
        wp.n += wp.nk[k];
    }

    /* leaves: first layer, tree values, refusals (j2ki_t2_prec_load / _header), Lblock = 3 */
    for (uint32_t j = tid; j < wp.n; j += T) {
        int k;
        uint32_t r;
        J2kiCblk *cb = j2ki_t2_team_cblk(v, pd, &wp, j, &k, &r);
        const J2kiBand *band = &v->bands[pd->first_band + k];
        int first = j2ki_t2p_first(cb, band, L, &mask, &err);
        j2ki_t2p_leaf(wp.nd[k], r, cb, band, first, L);
        cb->lblock = 3;
    }
    err = __any_sync(FULL, err);
    for (int o = 16; o > 0; o >>= 1)
        mask |= __shfl_xor_sync(FULL, mask, o);
    if (NW > 1) {                                      /* a warp alone is done: shuffles */
        if (lane == 0) {
            s_tot[wid] = (uint32_t)err;
            s_use[wid] = (uint32_t)mask;
            s_end[wid] = (uint32_t)(mask >> 32);
        }
        j2ki_t2_team_sync<NW>();
        for (int q = 0; q < NW; q++) {
            err |= (int)s_tot[q];
            mask |= s_use[q] | (unsigned long long)s_end[q] << 32;
        }
    }
    j2ki_t2_team_sync<NW>();              /* the leaves before the sweeps, the slots before reuse */
    if (err)
        return J2KC_ERR_INTERNAL;
    for (int k = 0; k < pd->prec.nb_bands && k < 3; k++)
        if (wp.nk[k])
            j2ki_t2_team_sweep<NW>(&wp, k, &pd->prec.bands[k], 0);

    for (int l = 0; l < L; l++) {
        const size_t i = (size_t)p * L + l;
        const int P = j2ki_t2p_prev(mask, l), nonempty = (int)(mask >> l & 1);
        uint8_t *hout = NULL;
        uint64_t off = 0, body_run = 0;
        uint32_t carry = 1, bytes;
        J2kiT2pEmit em;

        for (int k = 0; k < pd->prec.nb_bands && k < 3; k++) {
            if (!wp.nk[k])
                continue;
            for (uint32_t n = tid; n < wp.nk[k]; n += T)
                wp.nd[k][n].fvi = wp.nd[k][n].vi >= l ? n : UINT32_MAX;
            j2ki_t2_team_sync<NW>();
            j2ki_t2_team_sweep<NW>(&wp, k, &pd->prec.bands[k], 1);
        }
        if (out) {
            uint32_t pj = v->pkt_of[i];
            off = v->cell_off[pj + v->pkts[pj].tp + 2];
            hout = out + off + (v->sop ? J2KI_T2_SOP_BYTES : 0);
            if (tid == 0 && v->sop) {
                uint32_t nsop = v->pkts[pj].nsop & 0xFFFF;
                uint8_t *o = out + off;
                o[0] = 0xFF;
                o[1] = 0x91;
                o[2] = 0;
                o[3] = 4;
                o[4] = (uint8_t)(nsop >> 8);
                o[5] = (uint8_t)nsop;
            }
        }
        for (uint32_t q = tid; q < nwords; q += T)
            w[q] = 0;
        j2ki_t2_team_sync<NW>();
        if (tid == 0)
            w[0] = (uint32_t)nonempty << 31;           /* B.10.3: 0 = empty packet */
        j2ki_t2p_emit_init(&em, hout);                 /* the same in every thread; warp 0 cuts */
        j2ki_t2_team_sync<NW>();
        for (uint32_t g = 0; nonempty && g < wp.n;) {
            const uint32_t j = g + tid;
            J2kiCblk *cb = NULL;
            int k = 0, lbn = 0;
            uint32_t r = 0, cnt = 0, bd = 0, at = carry, used = 0, end = carry, bbase = 0, btot = 0;
            if (j < wp.n) {
                J2kiT2pBits b = { NULL, 0 };
                cb = j2ki_t2_team_cblk(v, pd, &wp, j, &k, &r);
                lbn = j2ki_t2p_cblk_bits(&b, cb, wp.tn[k], wp.nd[k], r, l, P, cb->lblock, v->scan);
                cnt = b.pos;
            }
            const uint32_t incl = j2ki_t2_warp_scan(cnt);
            if (NW > 1) {
                if (lane == 31)
                    s_tot[wid] = incl;
                j2ki_t2_team_sync<NW>();
                for (int q = 0; q < (int)wid; q++)
                    at += s_tot[q];
            }
            /* the code-blocks that fit are a prefix in packet order (the ends only grow) */
            const int fits = j < wp.n && at + incl <= cap;
            const uint32_t use = __popc(__ballot_sync(FULL, fits));
            if (fits) {
                J2kiT2pBits b = { w, at + incl - cnt };
                j2ki_t2p_cblk_bits(&b, cb, wp.tn[k], wp.nd[k], r, l, P, cb->lblock, v->scan);
                cb->lblock = lbn;
                bd = j2ki_t2p_cblk_body(cb, l);
            }
            const uint32_t wend = at + __shfl_sync(FULL, incl, use ? use - 1 : 0);
            const uint32_t bsum = j2ki_t2_warp_scan(bd);
            if (NW > 1) {
                if (lane == 31) {
                    s_use[wid] = use;
                    s_end[wid] = use ? wend : 0;
                    s_body[wid] = bsum;
                }
                j2ki_t2_team_sync<NW>();               /* every bit written, the slots filled */
                for (int q = 0; q < NW; q++) {
                    used += s_use[q];
                    end = s_end[q] > end ? s_end[q] : end;
                    bbase += q < (int)wid ? s_body[q] : 0;
                    btot += s_body[q];
                }
            } else {
                used = use;
                end = use ? wend : end;
                btot = __shfl_sync(FULL, bsum, 31);
                __syncwarp();                          /* every bit written */
            }
            if (!used)
                return J2KC_ERR_INTERNAL;              /* one code-block over the buffer: cannot happen */
            if (out && fits && cb->layer_passes[l] > (l ? cb->layer_passes[l - 1] : 0))
                v->dst[(size_t)(cb - v->cblks) * L + l] = off + v->hdr_len[i] + body_run + bbase + bsum - bd;
            body_run += btot;
            uint32_t keep = 0, rest = 0;
            if (wid == 0) {
                uint32_t pos = j2ki_t2_warp_emit(&em, w, 0, end);
                rest = end - pos;
                keep = rest ? j2ki_t2p_get(w, pos, (int)rest) : 0;
                if (NW > 1 && lane == 0) {
                    s_misc[0] = keep;
                    s_misc[1] = rest;
                }
            }
            j2ki_t2_team_sync<NW>();                   /* warp 0's reads of w before the clearing */
            if (NW > 1) {
                keep = s_misc[0];
                rest = s_misc[1];
            }
            for (uint32_t q = tid; q <= (end >> 5) + 1 && q < nwords; q += T)
                w[q] = 0;
            if (tid == 0)                              /* it cleared word 0 itself */
                w[0] = rest ? keep << (32 - rest) : 0;
            carry = rest;
            if (tid == 0)
                J2KI_T2_ROUND_HOOK(NW, g, used, wp.n);
            g += used;
            j2ki_t2_team_sync<NW>();
        }
        if (tid == 0) {
            j2ki_t2p_emit(&em, w, 0, carry, 1);
            if (NW > 1)
                s_misc[2] = em.bytes;
        }
        j2ki_t2_team_sync<NW>();
        bytes = NW > 1 ? s_misc[2] : __shfl_sync(FULL, em.bytes, 0);
        if (!out) {
            if (tid == 0) {
                v->hdr_len[i] = bytes + extra;
                v->body_len[i] = (uint32_t)body_run;
            }
        } else {
            if (bytes + extra != v->hdr_len[i] || body_run != v->body_len[i])
                return J2KC_ERR_INTERNAL;
            if (tid == 0 && v->eph) {
                hout[bytes] = 0xFF;                    /* EPH, A.8.2 */
                hout[bytes + 1] = 0x92;
            }
        }
        j2ki_t2_team_sync<NW>();                       /* s_misc read before its next use */
    }
    return 0;
}

/**
 * Bytes of tile-part k (header with PLT, and packets) from hdr_len/body_len. When cell_len is
 * not NULL, stores its cells' lengths; when comp_acc is not NULL, adds (atomically) its packets
 * to comp_acc[comp] and layer_acc[layer] and its header to comp_acc[its component], as
 * j2ki_t2_size accounts them (with comp_res_e: only packets, and tile-parts starting with
 * packets, of resolutions below it count towards comp_acc).
 */
static __device__ uint64_t j2ki_t2_dev_tp_size(const J2kiT2DevView *v, uint32_t k, uint64_t *cell_len,
                                               unsigned long long *comp_acc, unsigned long long *layer_acc)
{
    const J2kiT2TpDev tp = v->tps[k];
    J2kiT2PltCount plt = { 0, -1, 0 };
    uint64_t pk = 0, hdr;
    for (uint32_t j = tp.first_pkt; j < tp.first_pkt + tp.nb_pkts; j++) {
        const J2kiT2PktDev pkt = v->pkts[j];
        size_t i = (size_t)pkt.prec * v->nb_layers + pkt.layer;
        uint64_t len = (uint64_t)v->hdr_len[i] + v->body_len[i];
        if (v->plt)
            j2ki_t2_plt_count_add(&plt, len);
        pk += len;
        if (cell_len)
            cell_len[j + k + 2] = len;
        if (comp_acc) {
            if (!v->comp_res_e || pkt.res < v->comp_res_e)
                atomicAdd(&comp_acc[pkt.comp], (unsigned long long)len);
            atomicAdd(&layer_acc[pkt.layer], (unsigned long long)len);
        }
    }
    hdr = J2KI_T2_TP_FIXED_BYTES + plt.bytes;
    if (cell_len)
        cell_len[tp.first_pkt + k + 1] = hdr;
    if (comp_acc && (!v->comp_res_e || tp.res < v->comp_res_e))
        atomicAdd(&comp_acc[tp.comp], (unsigned long long)hdr);
    return hdr + pk;
}
#endif /* __CUDACC__ || J2KI_T2_EMU */

#endif /* J2KI_T2_CUDA_H */
