/*
 * The parameters of the rate control's kernels (rc_kern.cu), filled by rc_cuda.cu: one struct
 * per launch, the kernel's only argument (cuda_launch.h), with the grid's geometry and the
 * device memory layout both sides use (see rc_cuda.cu).
 */
#ifndef J2KI_RC_KERN_H
#define J2KI_RC_KERN_H

extern "C" {
#include "hd/rc_core.h"
}
#include "cuda/rc_cuda.h"

#define RC_THREADS          256
#define RC_WARPS            (RC_THREADS / 32)
#define RC_CBLKS_PER_THREAD 4       /* code-blocks per thread that size the grid's work cap */
#define RC_SORT_CHUNK       1024    /* candidates a block sorts in shared memory (power of 2) */
#define RC_NB_ACC           3
#define RC_FULL             0xFFFFFFFFu
#define RC_NO_RANK          UINT32_MAX

/* the block flush uses one thread per layer */
static_assert(RC_THREADS >= J2KI_MAX_LAYERS && RC_THREADS >= J2KC_MAX_COMPS, "block too small");
static_assert((RC_SORT_CHUNK & (RC_SORT_CHUNK - 1)) == 0, "sort chunk not a power of two");

/** One set of grid-wide accumulators (global memory); every identity is 0. */
typedef struct RcAcc {
    unsigned long long comp[J2KC_MAX_COMPS];
    unsigned long long layer[J2KI_MAX_LAYERS];
    unsigned long long sum;
    unsigned long long nmin;                /* ~(bits of the minimum), by atomicMax */
    unsigned long long umax;
    int                err;                 /* most negative error, by atomicMin */
    uint32_t           nb;
    unsigned long long cmin[J2KC_MAX_COMPS]; /* fill_prepare: ~(smallest cost) per component */
} RcAcc;
/* zeroed as 64-bit words (phase_begin) */
static_assert(sizeof(RcAcc) % sizeof(unsigned long long) == 0, "RcAcc not a whole number of words");

/** One histogram of the search guide (j2ki_rc_dev_hist): hull bytes per component and bin,
 *  each bin's smallest slope bits as ~bits by maximum and largest by maximum (identity 0). */
typedef struct RcHist {
    unsigned long long bytes[J2KC_MAX_COMPS][J2KI_RC_HIST_BINS];
    unsigned long long nmin[J2KI_RC_HIST_BINS];
    unsigned long long mx[J2KI_RC_HIST_BINS];
} RcHist;
#define RC_HIST_WORDS (sizeof(RcHist) / sizeof(unsigned long long))
#define RC_HIST_ADD_WORDS (J2KC_MAX_COMPS * J2KI_RC_HIST_BINS)   /* the bytes: added; the rest: maxima */

/* a probe's words in a size_multi set (RcArgs.multi) */
#define RC_M_SUM   0
#define RC_M_COMP  1
#define RC_M_LAYER (1 + J2KC_MAX_COMPS)

/** The block's accumulators and scratch (shared memory). */
typedef struct RcBlock {
    unsigned long long comp[J2KC_MAX_COMPS];
    unsigned long long layer[J2KI_MAX_LAYERS];
    unsigned long long sum, nmin, umax;
    int                err;
    uint32_t           t_any[RC_WARPS];         /* team_any's exchange (rc_kern.cu) */
    union {
        uint32_t       warp[RC_WARPS][J2KI_T2_WARP_WORDS]; /* size: each warp's sizing scratch */
        J2kiRcFillCand sort[RC_SORT_CHUNK];                 /* fill_prepare: one chunk */
        RcHist         hist;                                /* hist: the block's bins */
    } u;
    /* hist: the level's outcome, from the block's first warp to the others */
    unsigned long long h_L, h_H, h_up[J2KC_MAX_COMPS], h_d[J2KC_MAX_COMPS];
    int                h_ret;
    int                h_nb_near;               /* hist with p->collect: the level's probes */
    unsigned long long h_near[2 * J2KI_RC_NEAR_BINS + 1];
} RcBlock;

/** Everything the decide grid reads, the same for every thread (a __grid_constant__ kernel
 *  parameter: its address is taken without a per-thread copy). */
typedef struct RcArgs {
    J2kiT2DevView   v;
    const double   *scale;
    J2kiRcFillCand *cand;
    int64_t        *est;                    /* per sorted candidate: j2ki_rc_fill_est */
    uint8_t        *est_comp;               /* per sorted candidate: its component */
    uint32_t       *rank;                   /* per code-block: index among the kept, or RC_NO_RANK */
    uint16_t       *sized;                  /* per (code-block, layer): layer_passes at the last
                                               sizing of its precinct */
    uint8_t        *prec_done;              /* per precinct: sized in this frame */
    RcAcc          *acc;                    /* RC_NB_ACC sets */
    RcHist         *hist;                   /* RC_NB_ACC sets, rotated as acc's (per hist op) */
    unsigned long long *multi;              /* size_multi: RC_NB_ACC sets (rotated per op) of
                                               J2KI_RC_MULTI_MAX probes x multi_stride words:
                                               packet and tile-part bytes, per component, per
                                               layer (RC_M_*) */
    uint32_t        multi_stride;           /* 1 + J2KC_MAX_COMPS + layers */
    uint32_t       *mlen;                   /* size_multi: per probe, per (precinct, layer):
                                               hdr_len + body_len */
    int             hull_mask;              /* qstep_try: OR j2ki_rc_cblk_hull_bits into the result */
} RcArgs;

/** J2KI_K_RC_HULL: the frame's view, one thread per code-block. */
typedef struct J2kiRcHullParams {
    J2kiT2DevView v;
} J2kiRcHullParams;

/** J2KI_K_RC_DECIDE (cooperative): everything the grid reads, and the prepared context. */
typedef struct J2kiRcDecideParams {
    RcArgs           a;
    const J2kiRcCtx *ctx0;
} J2kiRcDecideParams;

#endif /* J2KI_RC_KERN_H */
