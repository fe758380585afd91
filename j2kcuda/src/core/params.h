/* Parameter keys and the finalisation of coding parameters (params.c, profile.c). */
#ifndef J2KI_PARAMS_H
#define J2KI_PARAMS_H

#include "core/j2ki.h"

/* Every key of j2kc_params_set, in set_mask bit order. */
#define J2KI_KEYS(X) \
    X(PROFILE, "profile") X(FPS, "fps") X(BYTES, "bytes") X(BITRATE, "bitrate") \
    X(COMP_BYTES, "comp_bytes") X(QUALITY, "quality") X(SLOPE, "slope") X(LOSSLESS, "lossless") \
    X(TRANSFORM, "transform") X(MCT, "mct") X(LEVELS, "levels") X(CBLK, "cblk") X(PREC, "prec") \
    X(ORDER, "order") X(POC, "poc") X(TILES, "tiles") X(TILE_PARTS, "tile_parts") \
    X(LAYERS, "layers") X(LAYER_BYTES, "layer_bytes") X(BYPASS, "bypass") X(RESET, "reset") \
    X(TERMALL, "termall") X(VCAUSAL, "vcausal") X(PTERM, "pterm") X(SEGMARK, "segmark") \
    X(GUARD_BITS, "guard_bits") X(SOP, "sop") X(EPH, "eph") X(TLM, "tlm") X(PLT, "plt") \
    X(MAINLEVEL, "mainlevel") X(SUBLEVEL, "sublevel") X(FORMAT, "format") X(COMMENT, "comment") \
    X(BACKEND, "backend") X(GPU, "gpu") X(ASYNC_DEPTH, "async_depth") X(COLOR, "color") \
    X(T1_STOP, "t1_stop") X(QSTEP_RATE, "qstep_rate") X(QSTEP_TRY, "qstep_try") \
    X(THREADS, "threads") X(HT, "ht") X(HT_REFINE, "ht_refine")

enum {
#define X(id, name) J2KI_KEY_##id,
    J2KI_KEYS(X)
#undef X
    J2KI_KEY_NB
};

/** 1 when the user set the key explicitly. */
int j2ki_params_is_set(const J2kcParams *p, int key);
/** The log target of a parameter set. */
void j2ki_params_log(const J2kcParams *p, J2kiLog *log);
/** Copies p's parameters into cp for image img, applies the profile, fills derived values,
 *  and rejects conflicts. */
int j2ki_params_finalize(J2kiCodingParams *cp, const J2kcParams *p, const J2kcImageDesc *img,
                         const J2kiLog *log);
/** Applies cp->profile (profile.c): fills its parameters, rejects conflicting explicit ones and
 *  non-conforming images, each with a message naming the rule. */
int j2ki_profile_apply(J2kiCodingParams *cp, const J2kcParams *p, const J2kiLog *log);

/* Largest byte budget accepted (bytes, comp_bytes, layer_bytes, or one derived from bitrate):
 * 2^53, the largest range in which a double holds every integer, so budgets go through the
 * rate control's double arithmetic (layer spacing, bytes per frame) exactly and never out of
 * uint64_t's range. It is far above any codestream the encoder can produce. */
#define J2KI_MAX_BUDGET_BYTES (UINT64_C(1) << 53)

/** floor(mbps * 1e6 / 8 / fps) bytes per frame; UINT64_MAX when that exceeds the largest
 *  budget accepted (2^53), so that no conversion goes out of range. */
uint64_t j2ki_rate_bytes(double mbps, int fps_num, int fps_den);

/** Whether the profile mandates the reversible 5/3 transform (IMF *_r, broadcast_multi_r,
 *  imf_ht_r). */
int j2ki_profile_is_reversible(int profile);

/** Whether the profile is one of IMF App 2E's HTJ2K profiles (imf_ht, imf_ht_r). */
int j2ki_profile_is_ht(int profile);

/** The largest Ccap15 B an IMF HT profile allows for these parameters (profile.c). */
int j2ki_profile_ht_max_magb(const J2kiCodingParams *cp);

/** IMF lossless: sets (or checks) the levels in Rsiz from the coded size (profile.c). */
int j2ki_profile_finish_levels(const J2kiCodingParams *cp, uint8_t *cs, size_t len, const J2kiLog *log);

#endif
