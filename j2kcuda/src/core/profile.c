/*
 * Profiles: DCI 2K/4K (Rsiz 3/4, ISO/IEC 15444-1 Amd 1, SMPTE 429-2, RDD 52), IMF
 * (15444-1 Amd 8 as referenced by SMPTE ST 2067-21), broadcast (Amd 3) and IMF App 2E's
 * HTJ2K profiles (SMPTE ST 2067-21:2023 Annex I, ISO/IEC 15444-15). A profile fills in
 * the parameters it fixes, refuses explicit parameters that contradict it, checks the image,
 * and derives byte budgets and levels. Rules as listed in the project's profiles notes.
 */
#include <math.h>
#include <string.h>

#include "core/j2ki.h"
#include "core/params.h"

#define FAIL(code, ...) do { j2ki_log(log, J2KC_LOG_ERROR, __VA_ARGS__); return J2KC_ERR_PROFILE; } while (0)

typedef struct ProfileDesc {
    int id;
    const char *name;
    uint32_t max_w, max_h;
    int max_levels;
} ProfileDesc;

static const ProfileDesc profiles[] = {
    { J2KI_PROFILE_DCI2K,     "DCI 2K",               2048, 1080, 5 },
    { J2KI_PROFILE_DCI4K,     "DCI 4K",               4096, 2160, 6 },
    { J2KI_PROFILE_IMF2K,     "IMF 2K",               2048, 1556, 5 },
    { J2KI_PROFILE_IMF4K,     "IMF 4K",               4096, 3112, 6 },
    { J2KI_PROFILE_IMF8K,     "IMF 8K",               8192, 6224, 7 },
    { J2KI_PROFILE_IMF2K_R,   "IMF 2K reversible",    2048, 1556, 5 },
    { J2KI_PROFILE_IMF4K_R,   "IMF 4K reversible",    4096, 3112, 6 },
    { J2KI_PROFILE_IMF8K_R,   "IMF 8K reversible",    8192, 6224, 7 },
    { J2KI_PROFILE_BC_SINGLE, "broadcast single-tile", 65535, 65535, 5 },
    { J2KI_PROFILE_BC_MULTI,  "broadcast multi-tile",  65535, 65535, 5 },
    { J2KI_PROFILE_BC_MULTI_R,"broadcast multi-tile reversible", 65535, 65535, 5 },
    /* APP2.HT.IRV / APP2.HT.REV: up to the 8K image characteristics of ST 2067-21:2023
     * (8192x6224 RGB, 7680x4320 YCbCr); the level cap depends on the size (apply_imf_ht) */
    { J2KI_PROFILE_IMF_HT,    "IMF HT (APP2.HT.IRV)", 8192, 8192, 7 },
    { J2KI_PROFILE_IMF_HT_R,  "IMF HT reversible (APP2.HT.REV)", 8192, 8192, 7 },
};

/* IMF/broadcast main levels: maximum sample rate in Msamples/s for levels 1..11. */
static const double mainlevel_msps[12] = { 0, 65, 130, 195, 260, 520, 1200, 2400, 4800, 9600, 19200, 38400 };
/* The highest IMF sublevel (Amd 8: 200 * 2^(9-1) = 51200 Mbit/s). */
#define IMF_MAX_SUBLEVEL 9
/* Highest sublevel allowed per main level 0..11. */
static const int max_sublevel[12] = { 15, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9 };

/* Refuse an explicit key whose value differs from what the profile needs. */
#define REQUIRE(key, cond, ...) do {                                                 \
        if (j2ki_params_is_set(p, J2KI_KEY_##key) && !(cond))                       \
            FAIL(J2KC_ERR_PROFILE, __VA_ARGS__);                                    \
    } while (0)

static void set_dci_precincts(J2kiCodingParams *cp)
{
    /* 128x128 at the lowest resolution (NLLL), 256x256 at every other one */
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp->prec_log2_w[r] = cp->prec_log2_h[r] = r ? 8 : 7;
    cp->user_precincts = 1;
}

static int common_fixed(J2kiCodingParams *cp, const J2kcParams *p, const J2kiLog *log, const char *name)
{
    REQUIRE(CBLK, (cp->log2_cblk_w == 5 && cp->log2_cblk_h == 5) ||
                  (cp->profile >= J2KI_PROFILE_BC_SINGLE && cp->log2_cblk_w == cp->log2_cblk_h &&
                   cp->log2_cblk_w >= 5 && cp->log2_cblk_w <= 6),
            "%s: code-blocks must be %s (cblk given %dx%d)", name,
            cp->profile >= J2KI_PROFILE_BC_SINGLE ? "square 32x32 or 64x64" : "32x32",
            1 << cp->log2_cblk_w, 1 << cp->log2_cblk_h);
    if (cp->cblk_style)
        FAIL(J2KC_ERR_PROFILE, "%s: code-block style must be 0 (no bypass/reset/termall/vcausal/pterm/segmark); style 0x%02x requested",
             name, cp->cblk_style);
    REQUIRE(LAYERS, cp->nb_layers == 1, "%s: exactly 1 quality layer (layers=%d)", name, cp->nb_layers);
    REQUIRE(ORDER, cp->order == J2KI_CPRL, "%s: progression order must be CPRL", name);
    REQUIRE(PREC, 0, "%s: precincts are fixed by the profile (128x128 at the lowest resolution, 256x256 above)", name);
    if (cp->nb_poc && cp->profile != J2KI_PROFILE_DCI4K)
        FAIL(J2KC_ERR_PROFILE, "%s: POC markers are not allowed", name);
    if (cp->profile < J2KI_PROFILE_BC_SINGLE || !j2ki_params_is_set(p, J2KI_KEY_CBLK))
        cp->log2_cblk_w = cp->log2_cblk_h = 5;
    cp->nb_layers = 1;
    cp->order = J2KI_CPRL;
    set_dci_precincts(cp);
    return 0;
}

static int fps_needed(J2kiCodingParams *cp, const J2kiLog *log, const char *name)
{
    if (!cp->fps_num) {
        cp->fps_num = 24;
        cp->fps_den = 1;
        j2ki_log(log, J2KC_LOG_INFO, "%s: no fps given, assuming 24", name);
    }
    return 0;
}

static int apply_dci(J2kiCodingParams *cp, const J2kcParams *p, const J2kiLog *log, const ProfileDesc *d)
{
    const J2kcImageDesc *img = &cp->img;
    int is4k = d->id == J2KI_PROFILE_DCI4K;
    int ret;

    if (img->nb_comps != 3)
        FAIL(0, "%s: 3 components (X'Y'Z') required, image has %d", d->name, img->nb_comps);
    for (int c = 0; c < 3; c++) {
        if (img->depth[c] != 12 || img->is_signed[c])
            FAIL(0, "%s: components must be 12-bit unsigned (Ssiz 0x0B); component %d is %d-bit%s",
                 d->name, c, img->depth[c], img->is_signed[c] ? " signed" : "");
        if (img->dx[c] != 1 || img->dy[c] != 1)
            FAIL(0, "%s: no subsampling (XRsiz = YRsiz = 1); component %d is %dx%d", d->name, c, img->dx[c], img->dy[c]);
    }
    if (img->x0 || img->y0)
        FAIL(0, "%s: image origin must be 0,0 (got %u,%u)", d->name, img->x0, img->y0);
    if (img->width > d->max_w || img->height > d->max_h)
        FAIL(0, "%s: image %ux%u exceeds the maximum %ux%u (DCI containers: %s)", d->name, img->width, img->height,
             d->max_w, d->max_h, is4k ? "4096x2160, 3996x2160, 4096x1716" : "2048x1080, 1998x1080, 2048x858");
    if (!(img->width == d->max_w || img->width == (is4k ? 3996u : 1998u)) ||
        !(img->height == d->max_h || img->height == (is4k ? 1716u : 858u) || img->height + 1 == (is4k ? 1716u : 858u)))
        j2ki_log(log, J2KC_LOG_WARNING, "%s: %ux%u is not a DCI container size (%s)", d->name, img->width, img->height,
                 is4k ? "4096x2160, 3996x2160, 4096x1716" : "2048x1080, 1998x1080, 2048x858");

    REQUIRE(TILES, 0, "%s: one tile covering the image is required (tiles given)", d->name);
    REQUIRE(LEVELS, cp->nb_levels == d->max_levels, "%s: exactly %d decomposition levels (levels=%d)",
            d->name, d->max_levels, cp->nb_levels);
    REQUIRE(TRANSFORM, !cp->reversible, "%s: the irreversible 9/7 transform is required", d->name);
    if (cp->lossless)
        FAIL(0, "%s: lossless coding is not allowed (9/7 irreversible required)", d->name);
    REQUIRE(MCT, cp->mct != 0, "%s: the ICT (mct=1) is required", d->name);
    REQUIRE(GUARD_BITS, cp->guard_bits == (is4k ? 2 : 1), "%s: guard bits must be %d%s (guard_bits=%d)",
            d->name, is4k ? 2 : 1, is4k ? "" : " (SMPTE RDD 52)", cp->guard_bits);
    REQUIRE(TILE_PARTS, cp->tp_split == J2KI_TP_COMP, "%s: one tile-part per component (tile_parts=C) is required", d->name);
    REQUIRE(TLM, cp->tlm, "%s: the TLM marker is required", d->name);
    REQUIRE(POC, 0, "%s: the POC is fixed by the profile%s", d->name, is4k ? "" : " (none allowed in 2K)");
    if ((ret = common_fixed(cp, p, log, d->name)) < 0)
        return ret;

    if ((ret = fps_needed(cp, log, d->name)) < 0)
        return ret;
    double fps = (double)cp->fps_num / cp->fps_den;
    int ok;
    if (is4k)
        ok = cp->fps_den == 1 && (cp->fps_num == 24 || cp->fps_num == 25 || cp->fps_num == 30);
    else
        ok = cp->fps_den == 1 && (cp->fps_num == 24 || cp->fps_num == 25 || cp->fps_num == 30 ||
                                  cp->fps_num == 48 || cp->fps_num == 50 || cp->fps_num == 60);
    if (!ok)
        FAIL(0, "%s: frame rate %d/%d not allowed (%s)", d->name, cp->fps_num, cp->fps_den,
             is4k ? "24, 25 or 30 fps" : "24, 25, 30, 48, 50 or 60 fps");
    /* 250 Mbit/s for the frame and 200 Mbit/s per component; 2K at 60 fps and more is HFR, 500 Mbit/s */
    double scale = (!is4k && fps >= 60) ? 2.0 : 1.0;
    uint64_t max_frame = (uint64_t)floor(250e6 * scale / 8.0 / fps);
    uint64_t max_comp  = (uint64_t)floor(200e6 * scale / 8.0 / fps);
    uint64_t req = cp->frame_bytes;
    if (cp->bitrate_mbps > 0)
        req = j2ki_rate_bytes(cp->bitrate_mbps, cp->fps_num, cp->fps_den);
    if (req > J2KI_MAX_BUDGET_BYTES)
        FAIL(0, "%s: bitrate %g Mbit/s at %g fps is more than 2^53 bytes per frame", d->name, cp->bitrate_mbps, fps);
    if (req > max_frame)
        FAIL(0, "%s at %g fps: at most %llu bytes per frame (%g Mbit/s); %llu requested", d->name, fps,
             (unsigned long long)max_frame, 250 * scale, (unsigned long long)req);
    if (cp->comp_bytes > max_comp)
        FAIL(0, "%s at %g fps: at most %llu bytes per component (%g Mbit/s); comp_bytes=%llu", d->name, fps,
             (unsigned long long)max_comp, 200 * scale, (unsigned long long)cp->comp_bytes);
    if (!cp->frame_bytes && cp->bitrate_mbps <= 0)
        cp->frame_bytes = max_frame;
    if (!cp->comp_bytes)
        cp->comp_bytes = max_comp;

    cp->rsiz = is4k ? 4 : 3;
    cp->tile_w = cp->tile_h = 0;
    cp->nb_levels = d->max_levels;
    cp->reversible = 0;
    cp->mct = 1;
    cp->guard_bits = is4k ? 2 : 1;
    cp->tp_split = J2KI_TP_COMP;
    cp->tlm = 1;
    cp->nb_poc = 0;
    if (is4k) {
        /* the 2K part (resolutions 0..NL-1) of every component first, then the 4K level:
         * with CPRL inside each entry this gives 6 tile-parts */
        cp->nb_poc = 2;
        cp->poc[0] = (J2kiPoc){ 0, 0, 1, d->max_levels, 3, J2KI_CPRL };
        cp->poc[1] = (J2kiPoc){ d->max_levels, 0, 1, d->max_levels + 1, 3, J2KI_CPRL };
        /* the per-component limit applies to the 2K part of each component (its first tile-part) */
        cp->comp_bytes_res_e = d->max_levels;
    }
    return 0;
}

/* Smallest IMF/broadcast main level whose sample rate covers the image at fps. */
static int pick_mainlevel(const J2kiCodingParams *cp, double fps)
{
    double msps = (double)j2ki_image_samples(&cp->img) * fps / 1e6;
    for (int l = 1; l <= 11; l++)
        if (msps <= mainlevel_msps[l])
            return l;
    return -1;
}

static int apply_imf(J2kiCodingParams *cp, const J2kcParams *p, const J2kiLog *log, const ProfileDesc *d)
{
    const J2kcImageDesc *img = &cp->img;
    int rev = d->id >= J2KI_PROFILE_IMF2K_R;
    int ret;

    if (img->nb_comps > 3)
        FAIL(0, "%s: at most 3 components, image has %d", d->name, img->nb_comps);
    for (int c = 0; c < img->nb_comps; c++) {
        if (img->depth[c] < 8 || img->depth[c] > 16 || img->is_signed[c])
            FAIL(0, "%s: components must be 8 to 16-bit unsigned; component %d is %d-bit%s", d->name, c,
                 img->depth[c], img->is_signed[c] ? " signed" : "");
        if (img->dy[c] != 1 || (c == 0 && img->dx[c] != 1) || img->dx[c] > 2)
            FAIL(0, "%s: YRsiz must be 1, XRsiz 1 for component 0 and 1 or 2 for the others; component %d is %dx%d",
                 d->name, c, img->dx[c], img->dy[c]);
    }
    if (img->x0 || img->y0)
        FAIL(0, "%s: image origin must be 0,0", d->name);
    if (img->width > d->max_w || img->height > d->max_h)
        FAIL(0, "%s: image %ux%u exceeds the maximum %ux%u", d->name, img->width, img->height, d->max_w, d->max_h);
    if (rev) {
        REQUIRE(TRANSFORM, cp->reversible, "%s: the reversible 5/3 transform is required", d->name);
        cp->reversible = 1;
        if (cp->tile_w) {
            int ok = cp->tile_w == cp->tile_h && !cp->tile_x0 && !cp->tile_y0 &&
                     (cp->tile_w == 1024 || (cp->tile_w == 2048 && d->id != J2KI_PROFILE_IMF2K_R) ||
                      (cp->tile_w == 4096 && d->id == J2KI_PROFILE_IMF8K_R));
            if (!ok)
                FAIL(0, "%s: tiles must be one tile or %s", d->name,
                     d->id == J2KI_PROFILE_IMF2K_R ? "1024x1024" :
                     d->id == J2KI_PROFILE_IMF4K_R ? "1024x1024 or 2048x2048" : "1024x1024, 2048x2048 or 4096x4096");
        }
    } else {
        REQUIRE(TRANSFORM, !cp->reversible, "%s: the irreversible 9/7 transform is required", d->name);
        if (cp->lossless)
            FAIL(0, "%s: lossless needs the reversible profile (%s_r)", d->name,
                 d->id == J2KI_PROFILE_IMF2K ? "imf2k" : d->id == J2KI_PROFILE_IMF4K ? "imf4k" : "imf8k");
        REQUIRE(TILES, 0, "%s: single tile only", d->name);
        cp->tile_w = cp->tile_h = 0;
    }
    /* level cap: the profile's, and for reversible tiles 4 at 1024 wide, 5 at 2048, ... */
    int cap = d->max_levels;
    uint32_t tw = cp->tile_w ? cp->tile_w : img->width;
    if (rev && tw >= 1024) {
        int c2 = 4;
        for (uint32_t w = tw; w >= 2048 && c2 < 7; w >>= 1)
            c2++;
        if (c2 < cap)
            cap = c2;
    }
    /* at least one level: the IMF profiles of Amd 8 bound NL to 1..5/6/7 (ST 2067-21 Annex I and
     * its validators likewise), as broadcast's 1..5; levels=0 would label a non-IMF stream IMF */
    REQUIRE(LEVELS, cp->nb_levels >= 1 && cp->nb_levels <= cap,
            "%s: 1 to %d decomposition levels here (levels=%d)", d->name, cap, cp->nb_levels);
    if (!j2ki_params_is_set(p, J2KI_KEY_LEVELS))
        cp->nb_levels = cap;
    if ((ret = common_fixed(cp, p, log, d->name)) < 0)
        return ret;
    cp->tlm = 1;
    if (!j2ki_params_is_set(p, J2KI_KEY_TILE_PARTS))
        cp->tp_split = J2KI_TP_COMP;

    /* levels: main level from the sample rate, sublevel from the bit rate */
    if ((ret = fps_needed(cp, log, d->name)) < 0)
        return ret;
    double fps = (double)cp->fps_num / cp->fps_den;
    int ml = cp->mainlevel, sl = cp->sublevel;
    int need = pick_mainlevel(cp, fps);
    if (need < 0)
        FAIL(0, "%s: the sample rate at %g fps exceeds main level 11", d->name, fps);
    if (!ml)
        ml = need;
    else if (ml < need)
        FAIL(0, "%s: main level %d allows %g Msamples/s; the image at %g fps needs main level %d",
             d->name, ml, mainlevel_msps[ml], fps, need);
    /* Amd 8 table, and Grok's stricter sublevel <= max(mainlevel - 2, 1) */
#define IMF_SMAX(m) j2ki_imin(max_sublevel[m], j2ki_imax((m) - 2, 1))
    int smax = IMF_SMAX(ml);
    uint64_t req = cp->frame_bytes;
    if (cp->bitrate_mbps > 0)
        req = j2ki_rate_bytes(cp->bitrate_mbps, cp->fps_num, cp->fps_den);
    if (req > J2KI_MAX_BUDGET_BYTES)
        FAIL(0, "%s: bitrate %g Mbit/s at %g fps is more than 2^53 bytes per frame", d->name, cp->bitrate_mbps, fps);
    if (!sl) {
        if (req) {
            double mbps = (double)req * 8.0 * fps / 1e6;
            for (sl = 1; sl <= IMF_MAX_SUBLEVEL && 200.0 * (1 << (sl - 1)) < mbps; sl++)
                ;
        } else {
            sl = smax;
        }
    }
    if (!cp->mainlevel)
        while (ml < 11 && IMF_SMAX(ml) < sl)   /* automatic: the main level that allows the rate */
            ml++;
    smax = IMF_SMAX(ml);
    if (sl > smax)
        FAIL(0, "%s: sublevel %d exceeds the maximum %d for main level %d", d->name, sl, smax, ml);
    uint64_t max_frame = (uint64_t)floor(200e6 * (1 << (sl - 1)) / 8.0 / fps);
    if (req > max_frame)
        FAIL(0, "%s: sublevel %d allows %d Mbit/s = %llu bytes per frame at %g fps; %llu requested", d->name, sl,
             200 << (sl - 1), (unsigned long long)max_frame, fps, (unsigned long long)req);
    if (!req && !cp->lossless)
        cp->frame_bytes = max_frame;
    else if (!req)
        /* lossless: the bit rate is known only after coding; j2ki_profile_finish_levels picks
         * (or checks, when the user fixed it) the sublevel from the frame's size */
        cp->levels_after_coding = cp->sublevel ? 1 : 2;
    cp->mainlevel_fixed = cp->mainlevel != 0;
    cp->mainlevel = ml;
    cp->sublevel = sl;
    int base = d->id == J2KI_PROFILE_IMF2K ? 0x0400 : d->id == J2KI_PROFILE_IMF4K ? 0x0500 :
               d->id == J2KI_PROFILE_IMF8K ? 0x0600 : d->id == J2KI_PROFILE_IMF2K_R ? 0x0700 :
               d->id == J2KI_PROFILE_IMF4K_R ? 0x0800 : 0x0900;
    cp->rsiz = (uint16_t)(base | (sl << 4) | ml);
    return 0;
}

static int apply_broadcast(J2kiCodingParams *cp, const J2kcParams *p, const J2kiLog *log, const ProfileDesc *d)
{
    const J2kcImageDesc *img = &cp->img;
    int ret;
    if (img->nb_comps > 4)
        FAIL(0, "%s: at most 4 components", d->name);
    for (int c = 0; c < img->nb_comps; c++) {
        if (img->depth[c] < 8 || img->depth[c] > 12 || img->is_signed[c])
            FAIL(0, "%s: components must be 8 to 12-bit unsigned; component %d is %d-bit", d->name, c, img->depth[c]);
        if (img->dx[c] > 2 || img->dy[c] > 2)
            FAIL(0, "%s: chroma subsampling of at most 2; component %d is %dx%d", d->name, c, img->dx[c], img->dy[c]);
    }
    if (img->nb_comps >= 3 && (img->dx[1] != img->dx[2] || img->dy[1] != img->dy[2]))
        FAIL(0, "%s: components 1 and 2 must have the same subsampling", d->name);
    if (d->id == J2KI_PROFILE_BC_SINGLE) {
        REQUIRE(TILES, 0, "%s: single tile only", d->name);
        cp->tile_w = cp->tile_h = 0;
    } else {
        /* 2x2 or 1x4 tile layout */
        uint32_t tw = cp->tile_w, th = cp->tile_h;
        if (!tw) {
            tw = j2ki_ceil_div(img->width, 2);
            th = j2ki_ceil_div(img->height, 2);
        }
        uint32_t nx = j2ki_ceil_div(img->width, tw), ny = j2ki_ceil_div(img->height, th);
        if (!((nx == 2 && ny == 2) || (nx == 1 && ny == 4) || (nx == 1 && ny == 1)))
            FAIL(0, "%s: the tile layout must be 1x1, 2x2 or 1x4 (tiles give %ux%u)", d->name, nx, ny);
        if (cp->tile_x0 || cp->tile_y0)
            FAIL(0, "%s: the tile grid origin must be 0,0 (tiles given +%u+%u)", d->name, cp->tile_x0, cp->tile_y0);
        cp->tile_w = tw; cp->tile_h = th;
    }
    int rev = d->id == J2KI_PROFILE_BC_MULTI_R;
    REQUIRE(TRANSFORM, cp->reversible == rev, "%s: the %s transform is required", d->name, rev ? "5/3" : "9/7");
    if (cp->lossless && !rev)
        FAIL(0, "%s: lossless needs broadcast_multi_r", d->name);
    cp->reversible = rev;
    REQUIRE(LEVELS, cp->nb_levels >= 1 && cp->nb_levels <= 5, "%s: 1 to 5 decomposition levels (levels=%d)", d->name, cp->nb_levels);
    if (img->x0 || img->y0)
        FAIL(0, "%s: image origin must be 0,0", d->name);
    if ((ret = common_fixed(cp, p, log, d->name)) < 0)
        return ret;
    if (cp->sublevel)
        FAIL(0, "%s: broadcast profiles have no sublevel (Rsiz carries the main level only)", d->name);
    int ml = cp->mainlevel;
    if (cp->fps_num) {
        int need = pick_mainlevel(cp, (double)cp->fps_num / cp->fps_den);
        if (need < 0)
            FAIL(0, "%s: the sample rate exceeds main level 11", d->name);
        if (ml && ml < need)
            FAIL(0, "%s: main level %d allows %g Msamples/s; the image at %d/%d fps needs main level %d",
                 d->name, ml, mainlevel_msps[ml], cp->fps_num, cp->fps_den, need);
        if (!ml)
            ml = need;
    }
    cp->mainlevel = ml;
    int base = d->id == J2KI_PROFILE_BC_SINGLE ? 0x0100 : d->id == J2KI_PROFILE_BC_MULTI ? 0x0200 : 0x0300;
    cp->rsiz = (uint16_t)(base | ml);
    return 0;
}

/*
 * IMF App 2E with HTJ2K (SMPTE ST 2067-21:2023 Annex I), APP2.HT.IRV (9/7) and APP2.HT.REV
 * (5/3), with the codestream rules of the validators that check it (Netflix photon's
 * ST 2067-21 checks, as listed in the project's profiles notes):
 * - every code-block HT coded, code-block style exactly 0x40 (T.814 A.2, Table A.4), with a
 *   CAP marker of Pcap = 2^17 (Part 15 only) and one Ccap15 whose bits 12-15 are 0 (HTONLY,
 *   SINGLEHT, RGNFREE, HOMOGENEOUS); bit 5 (HTIRV) clear for APP2.HT.REV, which then needs
 *   the 5/3 filter; Ccap15's MAGB within depth + 1 (+1 for 9/7 with the ICT above 10 bits,
 *   +2 + MCT and +1 above 5 levels for 5/3): markers.c writes the CAP, this file checks
 *   the bound once the planes are known (j2ki_profile_check_magb);
 * - one tile, image and tile origins 0; 1 to 4 components of one depth, 8 to 16 bits
 *   unsigned; YRsiz = 1, XRsiz = 1 but for components 1 and 2 together at 2 (4:2:2);
 * - one layer, RPCL (other orders are fatal in the 5th edition's checks), precincts 128x128
 *   at the lowest resolution and 256x256 above;
 * - code-blocks 32 to 128 wide (xcb 5..7) and 32 to 64 high (ycb 5..6);
 * - 1 to 5, 6 or 7 decomposition levels for images up to 2048, 4096 or 8192 (the larger of
 *   width and height, as photon's 5th-edition check reads it);
 * - TLM and one tile-part per resolution, so a decoder can stop at any resolution.
 * Rsiz is 0x4000: bit 14 (T.814 A.2) with no Part 1 profile, since RPCL and 64-high
 * blocks break every Part 1 profile's rules (Amd 8 requires CPRL and 32x32). There is no
 * main level or sublevel and no byte cap from the profile; APP2.HT.REV codes losslessly
 * without a rate target, like imf*_r.
 */
#define HT_MAX_LOG2_CBLK_W 7
#define HT_MAX_LOG2_CBLK_H 6
#define HT_MIN_LOG2_CBLK   5

/* The level cap of APP2.HT for an image whose larger side is m: 5, 6, 7 up to 2K, 4K, 8K. */
static int imf_ht_max_levels(uint32_t m)
{
    return m <= 2048 ? 5 : m <= 4096 ? 6 : 7;
}

static int apply_imf_ht(J2kiCodingParams *cp, const J2kcParams *p, const J2kiLog *log, const ProfileDesc *d)
{
    const J2kcImageDesc *img = &cp->img;
    int rev = d->id == J2KI_PROFILE_IMF_HT_R;

    if (img->nb_comps > 4)
        FAIL(0, "%s: 1 to 4 components, image has %d", d->name, img->nb_comps);
    for (int c = 0; c < img->nb_comps; c++) {
        if (img->depth[c] < 8 || img->depth[c] > 16 || img->is_signed[c])
            FAIL(0, "%s: components must be 8 to 16-bit unsigned; component %d is %d-bit%s", d->name, c,
                 img->depth[c], img->is_signed[c] ? " signed" : "");
        if (img->depth[c] != img->depth[0])
            FAIL(0, "%s: all components must have the same depth; component %d is %d-bit, component 0 %d-bit",
                 d->name, c, img->depth[c], img->depth[0]);
        int xr_ok = img->dx[c] == 1 || ((c == 1 || c == 2) && img->nb_comps >= 3 && img->dx[1] == 2 && img->dx[2] == 2);
        if (img->dy[c] != 1 || !xr_ok)
            FAIL(0, "%s: YRsiz must be 1 and XRsiz 1, or 2 for components 1 and 2 together (4:2:2); "
                 "component %d is %dx%d", d->name, c, img->dx[c], img->dy[c]);
    }
    if (img->x0 || img->y0)
        FAIL(0, "%s: image origin must be 0,0 (got %u,%u)", d->name, img->x0, img->y0);
    if (img->width > d->max_w || img->height > d->max_h)
        FAIL(0, "%s: image %ux%u exceeds the maximum %ux%u", d->name, img->width, img->height, d->max_w, d->max_h);

    /* the HT block coder with no other style switch */
    if (j2ki_params_is_set(p, J2KI_KEY_HT) && !(cp->cblk_style & J2KI_CBLK_HT))
        FAIL(0, "%s: the HT block coder is required (ht=0 given)", d->name);
    if (cp->cblk_style & ~J2KI_CBLK_HT)
        FAIL(0, "%s: code-block style must be exactly 0x40 (HT only: no bypass/reset/termall/vcausal/pterm/"
             "segmark); style 0x%02x requested", d->name, cp->cblk_style | J2KI_CBLK_HT);
    cp->cblk_style = J2KI_CBLK_HT;
    if (cp->log2_cblk_w < HT_MIN_LOG2_CBLK || cp->log2_cblk_w > HT_MAX_LOG2_CBLK_W ||
        cp->log2_cblk_h < HT_MIN_LOG2_CBLK || cp->log2_cblk_h > HT_MAX_LOG2_CBLK_H)
        FAIL(0, "%s: code-blocks must be 32 to 128 wide and 32 to 64 high (cblk %dx%d)", d->name,
             1 << cp->log2_cblk_w, 1 << cp->log2_cblk_h);

    REQUIRE(TILES, 0, "%s: single tile only", d->name);
    cp->tile_w = cp->tile_h = 0;
    if (rev) {
        REQUIRE(TRANSFORM, cp->reversible, "%s: the reversible 5/3 transform is required", d->name);
        cp->reversible = 1;
    } else {
        REQUIRE(TRANSFORM, !cp->reversible, "%s: the irreversible 9/7 transform is required", d->name);
        if (cp->lossless)
            FAIL(0, "%s: lossless needs the reversible profile (imf_ht_r)", d->name);
        /* B = G + epsilon_b - 1 is bounded (j2ki_profile_ht_max_magb): one guard bit, as
         * DCI 2K's RDD 52 uses with 9/7, leaves one more bit-plane to the finest steps */
        if (!j2ki_params_is_set(p, J2KI_KEY_GUARD_BITS))
            cp->guard_bits = 1;
    }
    int cap = imf_ht_max_levels(img->width > img->height ? img->width : img->height);
    REQUIRE(LEVELS, cp->nb_levels >= 1 && cp->nb_levels <= cap,
            "%s: 1 to %d decomposition levels for a %ux%u image (levels=%d)", d->name, cap,
            img->width, img->height, cp->nb_levels);
    if (!j2ki_params_is_set(p, J2KI_KEY_LEVELS))
        cp->nb_levels = cap;
    REQUIRE(LAYERS, cp->nb_layers == 1, "%s: exactly 1 quality layer (layers=%d)", d->name, cp->nb_layers);
    REQUIRE(ORDER, cp->order == J2KI_RPCL, "%s: progression order must be RPCL", d->name);
    REQUIRE(PREC, 0, "%s: precincts are fixed by the profile (128x128 at the lowest resolution, 256x256 above)",
            d->name);
    REQUIRE(POC, 0, "%s: POC markers are not allowed", d->name);
    REQUIRE(TILE_PARTS, cp->tp_split == J2KI_TP_RES, "%s: one tile-part per resolution (tile_parts=R) is required",
            d->name);
    REQUIRE(TLM, cp->tlm, "%s: the TLM marker is required", d->name);
    if (cp->mainlevel || cp->sublevel)
        FAIL(0, "%s: the HT profiles have no main level or sublevel (Rsiz 0x4000)", d->name);
    cp->nb_layers = 1;
    cp->order = J2KI_RPCL;
    cp->nb_poc = 0;
    cp->tp_split = J2KI_TP_RES;
    cp->tlm = 1;
    set_dci_precincts(cp);
    cp->rsiz = J2KI_RSIZ_HT;
    return 0;
}

/* photon's bound on Ccap15's B for APP2.HT (ST 2067-21:2023 Annex I): depth + 1, plus 2 + MCT
 * and 1 more above 5 levels for 5/3, or 1 for 9/7 with the ICT above 10 bits. */
int j2ki_profile_ht_max_magb(const J2kiCodingParams *cp)
{
    int b = cp->img.depth[0] + 1;
    if (cp->reversible)
        b += 2 + (cp->mct ? 1 : 0) + (cp->nb_levels > 5 ? 1 : 0);
    else if (cp->mct && cp->img.depth[0] > 10)
        b += 1;
    return b;
}

int j2ki_profile_apply(J2kiCodingParams *cp, const J2kcParams *p, const J2kiLog *log)
{
    if (cp->profile == J2KI_PROFILE_NONE) {
        cp->rsiz = 0;
        return 0;
    }
    const ProfileDesc *d = NULL;
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
        if (profiles[i].id == cp->profile)
            d = &profiles[i];
    if (!d)
        return J2KC_ERR_INTERNAL;
    if (cp->profile <= J2KI_PROFILE_DCI4K)
        return apply_dci(cp, p, log, d);
    if (cp->profile <= J2KI_PROFILE_IMF8K_R)
        return apply_imf(cp, p, log, d);
    if (j2ki_profile_is_ht(cp->profile))
        return apply_imf_ht(cp, p, log, d);
    return apply_broadcast(cp, p, log, d);
}

int j2ki_profile_is_ht(int profile)
{
    return profile == J2KI_PROFILE_IMF_HT || profile == J2KI_PROFILE_IMF_HT_R;
}

int j2ki_profile_is_reversible(int profile)
{
    return profile == J2KI_PROFILE_IMF2K_R || profile == J2KI_PROFILE_IMF4K_R ||
           profile == J2KI_PROFILE_IMF8K_R || profile == J2KI_PROFILE_BC_MULTI_R ||
           profile == J2KI_PROFILE_IMF_HT_R;
}

/* Mbit/s allowed by an IMF sublevel (15444-1 Amd 8: 200 * 2^(sublevel - 1)). */
static int sublevel_mbps(int sl)
{
    return 200 << (sl - 1);
}

int j2ki_profile_finish_levels(const J2kiCodingParams *cp, uint8_t *cs, size_t len, const J2kiLog *log)
{
    if (!cp->levels_after_coding)
        return 0;
    double fps = (double)cp->fps_num / cp->fps_den;
    double mbps = (double)len * 8.0 * fps / 1e6;
    int sl, ml = cp->mainlevel;
    for (sl = 1; sl <= IMF_MAX_SUBLEVEL && 200.0 * (1 << (sl - 1)) < mbps; sl++)
        ;
    /* the highest sublevel this stream may use: the one the user fixed, else Amd 8's highest */
    int cap = cp->levels_after_coding == 1 ? cp->sublevel : IMF_MAX_SUBLEVEL;
    if (sl > cap) {
        j2ki_log(log, J2KC_LOG_ERROR, "IMF: the lossless frame is %zu bytes, %.0f Mbit/s at %g fps, above the cap "
                 "of sublevel %d (%d Mbit/s); a rate target of at most %d Mbit/s (bytes=%llu) codes it "
                 "reversible but lossy within that sublevel", len, mbps, fps, cap, sublevel_mbps(cap),
                 sublevel_mbps(cap), (unsigned long long)floor(sublevel_mbps(cap) * 1e6 / 8.0 / fps));
        return J2KC_ERR_PROFILE;
    }
    if (cp->levels_after_coding == 1)
        return 0;
    /* the smallest main level (not below the one the sample rate needs) that allows sublevel sl;
     * a main level the user fixed is not raised */
    while (ml <= 11 && j2ki_imin(max_sublevel[ml], j2ki_imax(ml - 2, 1)) < sl) {
        if (cp->mainlevel_fixed) {
            j2ki_log(log, J2KC_LOG_ERROR, "IMF: the lossless frame is %.0f Mbit/s at %g fps: sublevel %d, "
                     "which main level %d does not allow", mbps, fps, sl, ml);
            return J2KC_ERR_PROFILE;
        }
        ml++;
    }
    if (ml > 11 || len < 8 || cs[2] != 0xFF || cs[3] != 0x51) {
        j2ki_log(log, J2KC_LOG_ERROR, "IMF: no main level allows sublevel %d", sl);
        return J2KC_ERR_PROFILE;
    }
    /* Rsiz sits right after SOC, SIZ and Lsiz (A.5.1) */
    uint16_t rsiz = (uint16_t)((cp->rsiz & 0xFF00) | (sl << 4) | ml);
    cs[6] = (uint8_t)(rsiz >> 8);
    cs[7] = (uint8_t)rsiz;
    return 0;
}
