/*
 * Internal definitions shared by every file of the library: limits, the coding parameters
 * (one field per codestream parameter, grouped by the marker segment that writes it) and
 * small integer helpers; logging is log.h's.
 */
#ifndef J2KI_H
#define J2KI_H

#include <stddef.h>
#include <stdint.h>

#include "j2kcuda.h"
#include "core/hooks.h"
#include "core/log.h"

#if defined(__CUDACC__)
#define J2KI_HD __host__ __device__ __forceinline__
#else
#define J2KI_HD static inline
#endif

#define J2KI_MAX_LEVELS     32
#define J2KI_MAX_RES        (J2KI_MAX_LEVELS + 1)
#define J2KI_MAX_LAYERS     64
#define J2KI_MAX_POC        32
#define J2KI_MAX_GPUS       16      /* devices of one encoder's gpu list (backend_multi.h) */
#define J2KI_GPUS_ALL       (-1)    /* nb_gpus: gpu=all */
#define J2KI_MAX_BANDS      (1 + 3 * J2KI_MAX_LEVELS)

/* Fractional bits kept below the integer quantisation index for distortion estimation
 * (irreversible path only; bit-planes below them are never coded). Clamped per band so that
 * magnitude bits + fractional bits <= 30. */
#define J2KI_FRACBITS       6

/* ---- progression orders (COD SGcod byte 0, Table A.16) ---- */
enum { J2KI_LRCP = 0, J2KI_RLCP = 1, J2KI_RPCL = 2, J2KI_PCRL = 3, J2KI_CPRL = 4 };

/* ---- code-block style bits (COD SPcod byte 3, Table A.19) ---- */
#define J2KI_CBLK_BYPASS   0x01
#define J2KI_CBLK_RESET    0x02
#define J2KI_CBLK_TERMALL  0x04
#define J2KI_CBLK_VCAUSAL  0x08
#define J2KI_CBLK_PTERM    0x10
#define J2KI_CBLK_SEGMARK  0x20
/* HT block coder (ISO/IEC 15444-15 A.2, Table A.4): every code-block is HT coded */
#define J2KI_CBLK_HT       0x40
/* Rsiz bit 14: the codestream uses Part 15 capabilities (T.814 A.2) */
#define J2KI_RSIZ_HT       0x4000

/* ---- rate-control modes ---- */
enum { J2KI_RC_NONE = 0,      /* keep every pass (lossless, or lossy at full rate) */
       J2KI_RC_BYTES,         /* exact byte budget(s) */
       J2KI_RC_SLOPE,         /* fixed distortion-rate slope threshold */
       J2KI_RC_PSNR };        /* smallest codestream reaching a PSNR target */

/* ---- tile-part split ---- */
enum { J2KI_TP_NONE = 0, J2KI_TP_RES = 'R', J2KI_TP_COMP = 'C' };

/* ---- profiles ---- */
enum { J2KI_PROFILE_NONE = 0, J2KI_PROFILE_DCI2K, J2KI_PROFILE_DCI4K,
       J2KI_PROFILE_IMF2K, J2KI_PROFILE_IMF4K, J2KI_PROFILE_IMF8K,
       J2KI_PROFILE_IMF2K_R, J2KI_PROFILE_IMF4K_R, J2KI_PROFILE_IMF8K_R,
       J2KI_PROFILE_BC_SINGLE, J2KI_PROFILE_BC_MULTI, J2KI_PROFILE_BC_MULTI_R,
       J2KI_PROFILE_IMF_HT, J2KI_PROFILE_IMF_HT_R };

enum { J2KI_COLOR_AUTO = 0, J2KI_COLOR_SRGB, J2KI_COLOR_GRAY, J2KI_COLOR_SYCC };

enum { J2KI_BACKEND_AUTO = 0, J2KI_BACKEND_REF, J2KI_BACKEND_CUDA };

/** One progression order change (POC marker, Table A.32); ranges half-open like the marker. */
typedef struct J2kiPoc {
    int res_s, comp_s, layer_e, res_e, comp_e, order;
} J2kiPoc;

/** The coding parameters after defaults, profile and validation: what the markers say. */
typedef struct J2kiCodingParams {
    /* SIZ */
    J2kcImageDesc img;
    uint16_t rsiz;
    uint32_t tile_w, tile_h;          /* XTsiz, YTsiz (0 before planning = one tile) */
    uint32_t tile_x0, tile_y0;        /* XTOsiz, YTOsiz */
    /* COD */
    int order;                        /* J2KI_LRCP.. */
    int nb_layers;
    int mct;                          /* 0 or 1 (RCT with 5/3, ICT with 9/7) */
    int nb_levels;
    int log2_cblk_w, log2_cblk_h;     /* 2..10 */
    int cblk_style;                   /* J2KI_CBLK_* bits */
    int ht_refine;                    /* with J2KI_CBLK_HT: 1, SigProp and MagRef after the
                                         cleanup; 0, the cleanup pass alone (hd/ht_core.h) */
    int bypass_start;                 /* significant bit-planes coded fully before raw (4 = Part 1) */
    int reversible;                   /* 1: 5/3 (no quantisation); 0: 9/7 */
    uint8_t prec_log2_w[J2KI_MAX_RES];/* PPx per resolution (15 = no precinct partition) */
    uint8_t prec_log2_h[J2KI_MAX_RES];
    int user_precincts;               /* Scod bit 0 */
    int sop, eph;
    /* QCD */
    int guard_bits;
    int max_mag_bits;                 /* 9/7: cap on M_b, so on Ccap15's B (IMF HT profiles); 0: none */
    /* POC */
    int nb_poc;
    J2kiPoc poc[J2KI_MAX_POC];
    /* tile-parts and pointer markers */
    int tp_split;                     /* J2KI_TP_* ; with POC a new tile-part also starts at each POC entry */
    int tlm, plt;
    /* rate control */
    int lossless;                     /* reversible, every pass kept */
    int rc_mode;
    double bitrate_mbps;              /* as set; turned into frame_bytes with fps */
    int nb_layer_bytes;               /* how many layer_bytes were given */
    uint64_t frame_bytes;             /* J2KI_RC_BYTES: whole codestream, every marker included */
    uint64_t comp_bytes;              /* 0 = none; else per component, its tile-parts incl. headers */
    int comp_bytes_res_e;             /* 0: comp_bytes covers every resolution; else only the
                                         packets of resolutions < this (DCI 4K: the 2K part) */
    uint64_t layer_bytes[J2KI_MAX_LAYERS]; /* cumulative budgets; last = frame_bytes */
    double slope;                     /* J2KI_RC_SLOPE: log2 slope threshold */
    double psnr;                      /* J2KI_RC_PSNR target, dB */
    int t1_stop;                      /* tier-1 early stop with J2KI_RC_BYTES (t1_stop.h) */
    int qstep_rate;                   /* 9/7 steps coarsened for the byte budget (quant_ref.c,
                                         j2ki_quant_rate_planes) */
    int qstep_try;                    /* bit-planes more tried per frame (j2ki_quant_try_planes) */
    int qstep_extra;                  /* internal: the planes of qstep_try in this cp's plan (0 in
                                         the encoder's own cp; set in the backends' copy for the
                                         plan of the tried steps) */
    /* profile bookkeeping */
    int profile;
    int fps_num, fps_den;
    int mainlevel, sublevel;
    int mainlevel_fixed;              /* the user set mainlevel (IMF lossless may not raise it) */
    int levels_after_coding;          /* IMF lossless: 2 = pick the sublevel (and main level) from
                                         the coded size, 1 = check the user's sublevel against it */
    /* output */
    int jp2;
    int color;                        /* J2KI_COLOR_*: JP2 colr box enumeration */
    char comment[256];                /* empty: no COM marker */
    /* execution */
    int backend;
    int gpu;                          /* -1 = any; with a list, its first device */
    int nb_gpus;                      /* 0: one device (gpu); J2KI_GPUS_ALL: every device;
                                         >= 2: the devices in gpus[] (backend_multi.h) */
    int gpus[J2KI_MAX_GPUS];
    int async_depth;
    int threads;                      /* CPU worker threads of the reference backend; 0 = one per
                                         online CPU (threadpool.h) */
    void *cu_ctx, *cu_stream;
    J2kiHooks hooks;                  /* test hooks, read at encoder creation (hooks.h) */
} J2kiCodingParams;

/** The public parameter object: the coding parameters as set, plus what was explicitly set. */
struct J2kcParams {
    J2kiCodingParams cp;
    uint32_t set_mask[4];             /* bit per key index: explicitly set by the user */
    J2kcLogFn log_fn;
    void *log_opaque;
    int log_level;
};

/* ---- small integer helpers (B.2 uses ceil divisions everywhere) ---- */
J2KI_HD uint32_t j2ki_ceil_div(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a + b - 1) / b); }
/** Samples of all components of an image, each ceil(width / dx) x ceil(height / dy) (what the
 *  bits-per-sample figures of rate decisions and profile levels count). */
static inline uint64_t j2ki_image_samples(const J2kcImageDesc *img)
{
    uint64_t n = 0;
    for (int c = 0; c < img->nb_comps; c++)
        n += (uint64_t)j2ki_ceil_div(img->width, (uint32_t)img->dx[c]) * j2ki_ceil_div(img->height, (uint32_t)img->dy[c]);
    return n;
}
J2KI_HD uint32_t j2ki_ceil_div_pow2(uint32_t a, int log2_b)
{
    return (uint32_t)(((uint64_t)a + (((uint64_t)1 << log2_b) - 1)) >> log2_b);
}
J2KI_HD uint32_t j2ki_floor_div_pow2(uint32_t a, int log2_b) { return log2_b >= 32 ? 0 : a >> log2_b; }
J2KI_HD int j2ki_imin(int a, int b) { return a < b ? a : b; }
J2KI_HD int j2ki_imax(int a, int b) { return a > b ? a : b; }

#endif /* J2KI_H */
