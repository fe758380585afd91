/*
 * The parameters of the HT block coder's kernels (ht_kern.cu), filled by ht_cuda.cu: one
 * struct per launch, the kernel's only argument (cuda_launch.h).
 */
#ifndef J2KI_HT_KERN_H
#define J2KI_HT_KERN_H

#include "cuda/ht_cuda.h"
extern "C" {
#include "hd/ht_plane.h"
}

/** Every HT kernel's parameters. STATS and CODE run a warp per code-block (STATS: lane b,
 *  plane b; CODE: ht_warp.cuh, with scratch[warp]), MEASURE a warp per code-block and set
 *  (HT_SET_WARPS warps a block; ht_warp.cuh), COMMIT and SLOPE_STEP a thread per code-block;
 *  each takes further code-blocks by a grid stride. SLOPE_END is one thread. */
typedef struct J2kiHtParams {
    const int32_t     *samples;
    const J2kiCblkDev *cblks;
    const double      *weight;      /* per code-block: its band's dist_weight */
    J2kiHtPlaneStat   *st;          /* per code-block */
    J2kiHtScratch     *scratch;     /* per CODE warp */
    double            *lambda;      /* the slope the last search found (0: every pick fits) */
    uint32_t          *stale;       /* per measuring round r >= 1: whether a block was measured
                                       again (stale[0] unused: round 0 measures every block) */
    unsigned long long *sums;       /* per search, HT_SLOPE_SLOTS byte sums (1/32 units): the
                                       picks at slope 0, then at each bisection step's slope */
    uint8_t           *data;
    J2kiPass          *passes;
    J2kiCblkRes       *res;
    uint32_t          *flag;
    int64_t            target32;    /* j2ki_ht_plane_target32 */
    uint32_t           nb_cblks;
    uint32_t           code_warps;  /* CODE's warps (each with its scratch) */
    int                round;       /* MEASURE, COMMIT: the measuring round */
    int                search;      /* SLOPE_*: 0 the model's, r + 1 after measuring round r */
    int                step;        /* SLOPE_STEP: 0 slope 0, else the bisection step */
    int                budget;      /* CODE: 0, plane 0 everywhere; 1, the pick at *lambda */
    int                refine;      /* the sets have SigProp and MagRef (ht_refine) */
} J2kiHtParams;

/** Threads per thread block of COMMIT: one warp, so that a frame's few thousand code-blocks (a
 *  4K 4:4:4 frame has about 6,500 of 64x64) spread over every SM rather than filling some (64
 *  threads a block would leave 30 of an H100's 132 idle). */
#define HT_THREADS 32
/** Warps per thread block of CODE (a code-block each, with HtWarpSmem, about 4.6 KB, in shared
 *  memory). */
#define HT_CODE_WARPS 4
/** Threads per thread block of STATS and MEASURE (4 warps: 4 code-blocks, or 4 sets). */
#define HT_WIDE_THREADS 128
/** MEASURE's warps per code-block: one per set (J2KI_HT_PLANE_SETS), rounded up to a power of
 *  two. */
#define HT_SET_WARPS 8
/** Bisection steps of a slope search: J2KI_HT_SLOPE_BITS_MAX - MIN is 10 x 2^56 < 2^60, and
 *  each step halves the range (rounding up) until it is 1. */
#define HT_SLOPE_STEPS 60
/** Byte sums of a search: slope 0, then one per step. */
#define HT_SLOPE_SLOTS (1 + HT_SLOPE_STEPS)
/** Slope searches of a frame: the model's, then one per measuring round. */
#define HT_SEARCHES (1 + J2KI_HT_PLANE_ROUNDS)
/** Warps of CODE at most (each owns a J2kiHtScratch of about 4.6 KB in global memory: 8192 of
 *  them take 38 MB a slot). */
#ifndef HT_MAX_CODE_WARPS     /* tests/ht_emu.cc sets a few, so that warps take several blocks */
#define HT_MAX_CODE_WARPS 8192
#endif
/** STATS's warps and MEASURE's and COMMIT's threads at most (no scratch: a grid-stride bound). */
#ifndef HT_MAX_WIDE
#define HT_MAX_WIDE (1u << 20)
#endif

#endif /* J2KI_HT_KERN_H */
