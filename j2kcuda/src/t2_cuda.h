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
 * Per frame: one thread per precinct codes its headers layer by layer (counting) -> header and
 * body bytes per (precinct, layer); one thread per tile-part turns them into cell lengths (PLT
 * sized with t2_core.h's rule); an exclusive CUB scan gives every cell's offset; then the cells
 * are written in parallel: tile-part headers (Psot, PLT, TLM entries from the offsets) by one
 * thread per tile-part, packet headers by one thread per precinct (the header coder again,
 * writing), code-block bodies by one warp per code-block, the main header by a device copy of
 * the template made at init.
 */
#ifndef J2KI_T2_CUDA_H
#define J2KI_T2_CUDA_H

#include <cuda_runtime_api.h>

#include "j2ki.h"
#include "plan.h"
#include "t2_core.h"
#include "t1_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One precinct on the device: the plan's J2kiPrec (tag trees aimed at device copies) and the
 *  index in the device band array of its resolution's first band. */
typedef struct J2kiT2PrecDev {
    J2kiPrec prec;
    uint32_t first_band;
    uint32_t pad_;
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
    int32_t  nb_probes;      /**< tier-2 sizings rate control made */
    int64_t  rc_total;       /**< rate control's last measured size */
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
    J2kiT2CudaResult *result;
    uint32_t nb_cblks, nb_bands, nb_precs, nb_pkts, nb_tps, nb_cells;
    int      nb_layers, nb_comps;
    int      sop, eph, plt, tlm, scan;
    int      comp_res_e;           /**< cp->comp_bytes_res_e: 0, or comp_len counts only the
                                        packets of lower resolutions and the tile-parts they start */
    uint64_t main_len;             /**< main header bytes (cell 0) */
    uint64_t tlm_start;            /**< offset of the first TLM segment in the main header */
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

/** The device view (for rc_cuda.cu) and the device result of the slot's frames. */
const J2kiT2DevView *j2ki_t2_cuda_view(const J2kiT2Cuda *t);
J2kiT2CudaResult    *j2ki_t2_cuda_result(const J2kiT2Cuda *t);

/** Enqueues on st: takes nb_passes and numbps of every code-block from tier-1's d_res and
 *  clears the frame's result. The first step of a frame (j2ki_rc_cuda_run calls it). */
int  j2ki_t2_cuda_import(J2kiT2Cuda *t, const J2kiCblkRes *d_res, cudaStream_t st);

/**
 * Enqueues on st the writing of the codestream (SOC ... EOC) for the code-blocks' current
 * layer_passes (set by j2ki_rc_cuda_run) into d_out (cap bytes, device memory). The result
 * (j2ki_t2_cuda_result) receives the length, or err = J2KC_ERR_BUFSIZE when cap is too small,
 * or rate control's error (then nothing is written). Returns < 0 only for enqueue failures.
 */
int  j2ki_t2_cuda_write(J2kiT2Cuda *t, cudaStream_t st, uint8_t *d_out, size_t cap);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* ---- device pieces shared by t2_cuda.cu and rc_cuda.cu (one precinct / one tile-part) ---- */

/** Counts the headers of every layer of precinct p: v->hdr_len, v->body_len. Returns 0 or < 0. */
static __device__ int j2ki_t2_dev_prec_size(const J2kiT2DevView *v, uint32_t p)
{
    J2kiT2PrecDev *pd = &v->precs[p];
    int L = v->nb_layers, ret;
    uint32_t extra = (v->sop ? J2KI_T2_SOP_BYTES : 0) + (v->eph ? J2KI_T2_EPH_BYTES : 0);
    if ((ret = j2ki_t2_prec_load(v->cblks, v->bands, pd->first_band, &pd->prec, L)) < 0)
        return ret;
    for (int l = 0; l < L; l++) {
        J2kiBytes cnt;
        J2kiBits bw;
        j2ki_bytes_init(&cnt, NULL, 0);
        j2ki_bits_init(&bw, &cnt);
        int64_t body = j2ki_t2_prec_header(&bw, v->cblks, v->bands, pd->first_band, &pd->prec, l, v->scan);
        if (body < 0)
            return (int)body;
        v->hdr_len[(size_t)p * L + l] = (uint32_t)cnt.pos + extra;
        v->body_len[(size_t)p * L + l] = (uint32_t)body;
        j2ki_t2_prec_commit(v->cblks, v->bands, pd->first_band, &pd->prec, l);
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
#endif /* __CUDACC__ */

#endif /* J2KI_T2_CUDA_H */
