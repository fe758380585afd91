/*
 * Parameters: the key/value front door (j2kc_params_set), and j2ki_params_finalize(), which
 * applies a profile (DCI, IMF, broadcast: see profile.c), fills derived values and rejects
 * conflicting or unsupported combinations with a message naming the rule.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/j2ki.h"
#include "core/params.h"
#include "hd/quant.h"
#include "core/markers.h"
#include "core/threadpool.h"

/* Keys in the order of their bit in J2kcParams.set_mask. */
static const char *const key_names[J2KI_KEY_NB] = {
#define X(id, name) name,
    J2KI_KEYS(X)
#undef X
};

static const char help_text[] =
    "j2kcuda parameters (j2kc_params_set key value):\n"
    "  profile     none|dci2k|dci4k|imf2k|imf4k|imf8k|imf2k_r|imf4k_r|imf8k_r|broadcast|broadcast_multi|broadcast_multi_r\n"
    "              |imf_ht|imf_ht_r (IMF App 2E HTJ2K: APP2.HT.IRV, APP2.HT.REV; imply ht=1) [none]\n"
    "  fps         frame rate, N or N/D (profiles, bitrate) [unset]\n"
    "  bytes       exact byte budget per frame, markers (and JP2 boxes) included, 1..2^53 [none]\n"
    "  bitrate     Mbit/s; needs fps; gives bytes = floor(bitrate*1e6/8/fps) [none]\n"
    "  comp_bytes  byte budget per component's tile-parts (needs tile_parts=C) [none]\n"
    "  quality     target PSNR in dB [none]\n"
    "  slope       fixed log2 distortion-rate slope threshold [none]\n"
    "  lossless    0|1: reversible 5/3, RCT, every pass kept [0; 1 for imf*_r, imf_ht_r and broadcast_multi_r\n"
    "              without bytes/bitrate/comp_bytes/quality/slope/layer_bytes]\n"
    "  transform   97|53 [97]\n"
    "  mct         auto|0|1 [auto: on for 3+ components of equal size and depth]\n"
    "  levels      0..32 decomposition levels [5, fewer for small images]\n"
    "  cblk        WxH code-block size, powers of two 4..1024, W*H <= 4096 [64x64]\n"
    "  prec        WxH[,WxH...] precinct sizes from the lowest resolution up, last repeats [none]\n"
    "  order       lrcp|rlcp|rpcl|pcrl|cprl [lrcp]\n"
    "  poc         RS,CS,LYE,RE,CE,ORDER[/...] progression order changes [none]\n"
    "  tiles       WxH[+X0+Y0] tile size and tile grid origin [one tile]\n"
    "  tile_parts  none|R|C split of each tile into tile-parts [none]\n"
    "  layers      1..64 quality layers [1]\n"
    "  layer_bytes b1,b2,... cumulative byte budgets per layer (last may be the frame budget) [none]\n"
    "  bypass      0|1|N selective arithmetic-coding bypass; N = significant bit-planes before raw\n"
    "              (1 = 4, the Part 1 rule; any other N needs a decoder that follows the style bits literally) [0]\n"
    "  reset termall vcausal pterm segmark   0|1 code-block style switches [0]\n"
    "  guard_bits  0..7 [2; 1 for DCI 2K]\n"
    "  sop eph tlm plt   0|1 [0]\n"
    "  mainlevel sublevel   IMF/broadcast level numbers [computed]\n"
    "  format      j2k|jp2 [j2k]\n"
    "  color       auto|srgb|gray|sycc: JP2 colour box [auto: sRGB for 3-4 components, grey for 1-2]\n"
    "  comment     text of a COM marker [none]\n"
    "  backend     auto|ref|cuda [auto]\n"
    "  gpu         CUDA device index, any, all, or a list (0,1): frames spread over them [any]\n"
    "  async_depth frames in flight 1..32 [2]\n"
    "  threads     0..256 CPU threads of the reference backend (0 = one per CPU the process\n"
    "              may run on); the bytes are the same for every count [0]\n"
    "  ht          0|1: the HT block coder (ISO/IEC 15444-15, HTJ2K: code-block style 0x40,\n"
    "              CAP marker, Rsiz bit 14) instead of Part 1's MQ coder; with a profile,\n"
    "              imf_ht or imf_ht_r only [0; 1 with those]\n"
    "  ht_refine   0|1: with ht=1, each code-block's HT set has its SigProp and MagRef\n"
    "              passes after the cleanup (1), or the cleanup pass alone (0: one pass and\n"
    "              one segment per code-block, what nvJPEG2000's decoder reads; lower PSNR\n"
    "              at equal bytes) [1]\n"
    "  t1_stop     0|1: with a byte budget under 1 bit per sample, tier-1 stops coding a\n"
    "              code-block once rate control cannot keep its remaining passes (nearly\n"
    "              always the bytes of 0; faster with qstep_rate=0; with qstep_rate's steps\n"
    "              nothing is left to save, hence off) [0]\n"
    "  qstep_rate  0|1: with a byte budget (9/7), the quantisation steps are coarsened by the\n"
    "              bit-planes that budget cannot reach (at most 5; none above 1.11 bit per\n"
    "              sample at 12 bits, 0.22 at 8 bits), and tier-1 does not code them (0: the\n"
    "              steps of the full-rate quantiser) [1]\n"
    "  qstep_try   0..5: with qstep_rate, every frame is first coded with steps coarser by up\n"
    "              to this many bit-planes more (at most 5 in all): as many as its quantised\n"
    "              coefficients predict it still fills its budget with, none when too few\n"
    "              do; when the frame does not fill its budget at those steps (rate control\n"
    "              kept every useful pass), it is coded again with qstep_rate's steps, so the\n"
    "              coarser steps are kept only where the budget could not reach the planes\n"
    "              they drop (0: off) [3]\n";

const char *j2kc_params_help(void) { return help_text; }

static void set_defaults(J2kiCodingParams *cp)
{
    memset(cp, 0, sizeof(*cp));
    cp->order        = J2KI_LRCP;
    cp->nb_layers    = 1;
    cp->mct          = -1;
    cp->nb_levels    = 5;
    cp->log2_cblk_w  = 6;
    cp->log2_cblk_h  = 6;
    cp->bypass_start = 4;
    cp->guard_bits   = 2;
    for (int r = 0; r < J2KI_MAX_RES; r++)
        cp->prec_log2_w[r] = cp->prec_log2_h[r] = 15;
    cp->rc_mode      = J2KI_RC_NONE;
    cp->backend      = J2KI_BACKEND_AUTO;
    cp->gpu          = -1;
    cp->async_depth  = 2;
    /* off by default: with qstep_rate's steps (the default) tier-1 codes few passes that rate
     * control drops, so the early stop (t1_stop.h) saves nothing measurable there
     * (bench/results/history.md#tier-1-early-stop) */
    cp->t1_stop      = 0;
    cp->ht_refine    = 1;
    cp->qstep_rate   = 1;
    cp->qstep_try    = 3;
}

J2kcParams *j2kc_params_alloc(void)
{
    J2kcParams *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    set_defaults(&p->cp);
    p->log_level = J2KC_LOG_INFO;
    return p;
}

void j2kc_params_free(J2kcParams **p)
{
    if (!p || !*p)
        return;
    free(*p);
    *p = NULL;
}

void j2kc_params_set_log(J2kcParams *p, J2kcLogFn fn, void *opaque, int max_level)
{
    if (!p)
        return;
    p->log_fn     = fn;
    p->log_opaque = opaque;
    p->log_level  = max_level;
}

void j2kc_params_set_cuda(J2kcParams *p, void *cu_ctx, void *cu_stream)
{
    if (!p)
        return;
    p->cp.cu_ctx    = cu_ctx;
    p->cp.cu_stream = cu_stream;
}

void j2ki_params_log(const J2kcParams *p, J2kiLog *log)
{
    log->fn        = p ? p->log_fn : NULL;
    log->opaque    = p ? p->log_opaque : NULL;
    log->max_level = p ? p->log_level : J2KC_LOG_INFO;
}

int j2ki_params_is_set(const J2kcParams *p, int key)
{
    return (p->set_mask[key / 32] >> (key % 32)) & 1;
}

/* ---- value parsers: each returns 0 or J2KC_ERR_INVAL ---- */

uint64_t j2ki_rate_bytes(double mbps, int fps_num, int fps_den)
{
    double b = floor(mbps * 1e6 / 8.0 * fps_den / fps_num);
    /* compared as doubles before the conversion: an out-of-range one is undefined (C11 6.3.1.4) */
    if (!(b <= (double)J2KI_MAX_BUDGET_BYTES))
        return UINT64_MAX;
    return b > 0 ? (uint64_t)b : 0;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return J2KC_ERR_INVAL;
    *out = v;
    return 0;
}

/* The gpu key: "any" (the single device CUDA picks), "all" (every device), an index, or a
 * comma-separated list of distinct indices (one encoder over several devices,
 * core/backend_multi.h). Returns 0, J2KC_ERR_INVAL for malformed text or an index out of
 * 0..1023, J2KC_ERR_UNSUPPORTED for a duplicate, J2KC_ERR_NOMEM for too many; cp is changed
 * only on success. */
static int parse_gpu(const char *value, J2kiCodingParams *cp)
{
    int gpus[J2KI_MAX_GPUS], n = 0;
    const char *s = value;
    if (!strcmp(value, "any") || !strcmp(value, "all")) {
        cp->gpu = -1;
        cp->nb_gpus = value[1] == 'n' ? 0 : J2KI_GPUS_ALL;
        return 0;
    }
    for (;;) {
        char item[8];
        long v;
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= sizeof(item))
            return J2KC_ERR_INVAL;
        memcpy(item, s, len);
        item[len] = 0;
        if (parse_int(item, 0, 1023, &v) < 0)
            return J2KC_ERR_INVAL;
        for (int i = 0; i < n; i++)
            if (gpus[i] == (int)v)
                return J2KC_ERR_UNSUPPORTED;
        if (n == J2KI_MAX_GPUS)
            return J2KC_ERR_NOMEM;
        gpus[n++] = (int)v;
        if (!s[len])
            break;
        s += len + 1;
    }
    cp->gpu = gpus[0];
    cp->nb_gpus = n > 1 ? n : 0;
    memcpy(cp->gpus, gpus, sizeof(gpus[0]) * (size_t)n);
    return 0;
}

/* A byte budget: 1..J2KI_MAX_BUDGET_BYTES. */
static int parse_budget(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s == '-')
        return J2KC_ERR_INVAL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || !v || v > J2KI_MAX_BUDGET_BYTES)
        return J2KC_ERR_INVAL;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return J2KC_ERR_INVAL;
    *out = v;
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "true"))
        *out = 1;
    else if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "false"))
        *out = 0;
    else
        return J2KC_ERR_INVAL;
    return 0;
}

/** "WxH" with both powers of two in [lo, hi]; returns log2 values. */
static int parse_pow2_size(const char *s, int lo, int hi, int *lw, int *lh)
{
    unsigned long w, h;
    char *end;
    w = strtoul(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X'))
        return J2KC_ERR_INVAL;
    const char *s2 = end + 1;
    h = strtoul(s2, &end, 10);
    if (end == s2 || *end)
        return J2KC_ERR_INVAL;
    if (w < (unsigned long)lo || w > (unsigned long)hi || h < (unsigned long)lo || h > (unsigned long)hi ||
        (w & (w - 1)) || (h & (h - 1)))
        return J2KC_ERR_INVAL;
    int a = 0, b = 0;
    while ((1ul << a) < w) a++;
    while ((1ul << b) < h) b++;
    *lw = a;
    *lh = b;
    return 0;
}

static int parse_order(const char *s, int *out)
{
    static const char *const names[] = { "lrcp", "rlcp", "rpcl", "pcrl", "cprl" };
    for (int i = 0; i < 5; i++) {
        char up[5];
        for (int k = 0; k < 5; k++)
            up[k] = (char)toupper((unsigned char)names[i][k]);
        if (!strcmp(s, names[i]) || !strncmp(s, up, 5)) {
            if (strlen(s) != 4)
                return J2KC_ERR_INVAL;
            *out = i;
            return 0;
        }
    }
    return J2KC_ERR_INVAL;
}

static int parse_profile(const char *s, int *out)
{
    static const struct { const char *name; int id; } t[] = {
        { "none", J2KI_PROFILE_NONE }, { "dci2k", J2KI_PROFILE_DCI2K }, { "dci4k", J2KI_PROFILE_DCI4K },
        { "imf2k", J2KI_PROFILE_IMF2K }, { "imf4k", J2KI_PROFILE_IMF4K }, { "imf8k", J2KI_PROFILE_IMF8K },
        { "imf2k_r", J2KI_PROFILE_IMF2K_R }, { "imf4k_r", J2KI_PROFILE_IMF4K_R },
        { "imf8k_r", J2KI_PROFILE_IMF8K_R }, { "broadcast", J2KI_PROFILE_BC_SINGLE },
        { "broadcast_multi", J2KI_PROFILE_BC_MULTI }, { "broadcast_multi_r", J2KI_PROFILE_BC_MULTI_R },
        { "imf_ht", J2KI_PROFILE_IMF_HT }, { "imf_ht_r", J2KI_PROFILE_IMF_HT_R },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (!strcmp(s, t[i].name)) {
            *out = t[i].id;
            return 0;
        }
    return J2KC_ERR_INVAL;
}

static int parse_fps(const char *s, int *num, int *den)
{
    char *end;
    errno = 0;
    long n = strtol(s, &end, 10), d = 1;
    if (errno || end == s || n < 0 || n > 1000000 || (n == 0 && *end != '.'))
        return J2KC_ERR_INVAL;
    if (*end == '/') {
        const char *s2 = end + 1;
        d = strtol(s2, &end, 10);
        if (end == s2 || d <= 0 || d > 1000000)
            return J2KC_ERR_INVAL;
    } else if (*end == '.') {
        /* decimal rates such as 23.976 are taken as N*1000/1000 */
        double v = strtod(s, &end);
        if (*end || v <= 0)
            return J2KC_ERR_INVAL;
        n = lround(v * 1000.0);
        d = 1000;
        if (n <= 0 || n > 1000000000L)
            return J2KC_ERR_INVAL;
    }
    if (*end)
        return J2KC_ERR_INVAL;
    *num = (int)n;
    *den = (int)d;
    return 0;
}

/* "WxH[,WxH...]": log2 sizes per resolution from the lowest; the last repeats. */
static int parse_prec(const char *s, J2kiCodingParams *cp)
{
    char buf[512];
    int r = 0, lw = 15, lh = 15;
    if (strlen(s) >= sizeof(buf))
        return J2KC_ERR_INVAL;
    strcpy(buf, s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (r >= J2KI_MAX_RES || parse_pow2_size(tok, 1, 32768, &lw, &lh) < 0)
            return J2KC_ERR_INVAL;
        cp->prec_log2_w[r] = (uint8_t)lw;
        cp->prec_log2_h[r] = (uint8_t)lh;
        r++;
    }
    if (!r)
        return J2KC_ERR_INVAL;
    for (; r < J2KI_MAX_RES; r++) {
        cp->prec_log2_w[r] = (uint8_t)lw;
        cp->prec_log2_h[r] = (uint8_t)lh;
    }
    cp->user_precincts = 1;
    return 0;
}

/* "RS,CS,LYE,RE,CE,ORDER[/...]" (Table A.32, end values exclusive). */
static int parse_poc(const char *s, J2kiCodingParams *cp)
{
    char buf[1024];
    int n = 0;
    if (strlen(s) >= sizeof(buf))
        return J2KC_ERR_INVAL;
    strcpy(buf, s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        int rs, cs, lye, re, ce;
        char ord[8];
        if (n >= J2KI_MAX_POC ||
            sscanf(tok, "%d,%d,%d,%d,%d,%7s", &rs, &cs, &lye, &re, &ce, ord) != 6)
            return J2KC_ERR_INVAL;
        J2kiPoc *p = &cp->poc[n];
        p->res_s = rs; p->comp_s = cs; p->layer_e = lye; p->res_e = re; p->comp_e = ce;
        if (parse_order(ord, &p->order) < 0 || rs < 0 || cs < 0 || lye < 1 || re <= rs || ce <= cs ||
            re > J2KI_MAX_RES || ce > 16384 || lye > 65535)
            return J2KC_ERR_INVAL;
        n++;
    }
    if (!n)
        return J2KC_ERR_INVAL;
    cp->nb_poc = n;
    return 0;
}

static int parse_tiles(const char *s, J2kiCodingParams *cp)
{
    unsigned long w, h, x0 = 0, y0 = 0;
    char *end;
    w = strtoul(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X'))
        return J2KC_ERR_INVAL;
    const char *s2 = end + 1;
    h = strtoul(s2, &end, 10);
    if (end == s2)
        return J2KC_ERR_INVAL;
    if (*end == '+') {
        const char *s3 = end + 1;
        x0 = strtoul(s3, &end, 10);
        if (end == s3 || *end != '+')
            return J2KC_ERR_INVAL;
        const char *s4 = end + 1;
        y0 = strtoul(s4, &end, 10);
        if (end == s4)
            return J2KC_ERR_INVAL;
    }
    if (*end || !w || !h || w > UINT32_MAX || h > UINT32_MAX || x0 > UINT32_MAX || y0 > UINT32_MAX)
        return J2KC_ERR_INVAL;
    cp->tile_w = (uint32_t)w; cp->tile_h = (uint32_t)h;
    cp->tile_x0 = (uint32_t)x0; cp->tile_y0 = (uint32_t)y0;
    return 0;
}

static int parse_layer_bytes(const char *s, J2kiCodingParams *cp)
{
    char buf[2048];
    int n = 0;
    if (strlen(s) >= sizeof(buf))
        return J2KC_ERR_INVAL;
    strcpy(buf, s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (n >= J2KI_MAX_LAYERS || parse_budget(tok, &v) < 0 || (n && v < cp->layer_bytes[n - 1]))
            return J2KC_ERR_INVAL;
        cp->layer_bytes[n++] = v;
    }
    if (!n)
        return J2KC_ERR_INVAL;
    cp->nb_layer_bytes = n;
    return 0;
}

int j2kc_params_set(J2kcParams *p, const char *key, const char *value)
{
    J2kiLog log;
    J2kiCodingParams *cp, saved;
    long v;
    int b, ret = J2KC_ERR_INVAL, k;

    if (!p || !key || !value)
        return J2KC_ERR_INVAL;
    j2ki_params_log(p, &log);
    cp = &p->cp;
    for (k = 0; k < J2KI_KEY_NB; k++)
        if (!strcmp(key, key_names[k]))
            break;
    if (k == J2KI_KEY_NB) {
        j2ki_log(&log, J2KC_LOG_ERROR, "unknown parameter '%s' (j2kc_params_help() lists them)", key);
        return J2KC_ERR_INVAL;
    }

    /* Parsers of list values (cblk, prec, poc, layer_bytes) write as they go; a rejected value
     * must leave the set as it was, so the whole set is restored on failure. */
    memcpy(&saved, cp, sizeof(saved));
    switch (k) {
    case J2KI_KEY_PROFILE:   ret = parse_profile(value, &cp->profile); break;
    case J2KI_KEY_FPS:       ret = parse_fps(value, &cp->fps_num, &cp->fps_den); break;
    case J2KI_KEY_BYTES:     ret = parse_budget(value, &cp->frame_bytes); break;
    case J2KI_KEY_BITRATE:   ret = parse_double(value, &cp->bitrate_mbps);
                             if (!ret && cp->bitrate_mbps <= 0) ret = J2KC_ERR_INVAL;
                             break;
    case J2KI_KEY_COMP_BYTES:ret = parse_budget(value, &cp->comp_bytes); break;
    case J2KI_KEY_QUALITY:   ret = parse_double(value, &cp->psnr);
                             if (!ret && (cp->psnr <= 0 || cp->psnr > 200)) ret = J2KC_ERR_INVAL;
                             break;
    case J2KI_KEY_SLOPE:     ret = parse_double(value, &cp->slope); break;
    case J2KI_KEY_LOSSLESS:  ret = parse_bool(value, &cp->lossless); break;
    case J2KI_KEY_TRANSFORM:
        if (!strcmp(value, "97") || !strcmp(value, "9/7")) { cp->reversible = 0; ret = 0; }
        else if (!strcmp(value, "53") || !strcmp(value, "5/3")) { cp->reversible = 1; ret = 0; }
        break;
    case J2KI_KEY_MCT:
        if (!strcmp(value, "auto")) { cp->mct = -1; ret = 0; }
        else { ret = parse_bool(value, &b); if (!ret) cp->mct = b; }
        break;
    case J2KI_KEY_LEVELS:
        ret = parse_int(value, 0, J2KI_MAX_LEVELS, &v);
        if (!ret) cp->nb_levels = (int)v;
        break;
    case J2KI_KEY_CBLK:      ret = parse_pow2_size(value, 4, 1024, &cp->log2_cblk_w, &cp->log2_cblk_h);
                             if (!ret && cp->log2_cblk_w + cp->log2_cblk_h > 12) ret = J2KC_ERR_INVAL;
                             break;
    case J2KI_KEY_PREC:      ret = parse_prec(value, cp); break;
    case J2KI_KEY_ORDER:     ret = parse_order(value, &cp->order); break;
    case J2KI_KEY_POC:       ret = parse_poc(value, cp); break;
    case J2KI_KEY_TILES:     ret = parse_tiles(value, cp); break;
    case J2KI_KEY_TILE_PARTS:
        if (!strcmp(value, "none") || !strcmp(value, "0")) { cp->tp_split = J2KI_TP_NONE; ret = 0; }
        else if (!strcmp(value, "R") || !strcmp(value, "r")) { cp->tp_split = J2KI_TP_RES; ret = 0; }
        else if (!strcmp(value, "C") || !strcmp(value, "c")) { cp->tp_split = J2KI_TP_COMP; ret = 0; }
        break;
    case J2KI_KEY_LAYERS:
        ret = parse_int(value, 1, J2KI_MAX_LAYERS, &v);
        if (!ret) cp->nb_layers = (int)v;
        break;
    case J2KI_KEY_LAYER_BYTES: ret = parse_layer_bytes(value, cp); break;
    case J2KI_KEY_BYPASS:
        ret = parse_int(value, 0, 64, &v);
        if (!ret) {
            if (v) cp->cblk_style |= J2KI_CBLK_BYPASS; else cp->cblk_style &= ~J2KI_CBLK_BYPASS;
            cp->bypass_start = v <= 1 ? 4 : (int)v;
        }
        break;
    case J2KI_KEY_RESET: case J2KI_KEY_TERMALL: case J2KI_KEY_VCAUSAL: case J2KI_KEY_PTERM: case J2KI_KEY_SEGMARK: {
        static const int bits[] = { J2KI_CBLK_RESET, J2KI_CBLK_TERMALL, J2KI_CBLK_VCAUSAL, J2KI_CBLK_PTERM, J2KI_CBLK_SEGMARK };
        ret = parse_bool(value, &b);
        if (!ret) {
            int bit = bits[k - J2KI_KEY_RESET];
            cp->cblk_style = b ? (cp->cblk_style | bit) : (cp->cblk_style & ~bit);
        }
        break;
    }
    case J2KI_KEY_GUARD_BITS:
        ret = parse_int(value, 0, 7, &v);
        if (!ret) cp->guard_bits = (int)v;
        break;
    case J2KI_KEY_SOP: ret = parse_bool(value, &cp->sop); break;
    case J2KI_KEY_EPH: ret = parse_bool(value, &cp->eph); break;
    case J2KI_KEY_TLM: ret = parse_bool(value, &cp->tlm); break;
    case J2KI_KEY_PLT: ret = parse_bool(value, &cp->plt); break;
    case J2KI_KEY_T1_STOP: ret = parse_bool(value, &cp->t1_stop); break;
    case J2KI_KEY_HT:
        ret = parse_bool(value, &b);
        if (!ret)
            cp->cblk_style = b ? (cp->cblk_style | J2KI_CBLK_HT) : (cp->cblk_style & ~J2KI_CBLK_HT);
        break;
    case J2KI_KEY_HT_REFINE: ret = parse_bool(value, &cp->ht_refine); break;
    case J2KI_KEY_QSTEP_RATE: ret = parse_bool(value, &cp->qstep_rate); break;
    case J2KI_KEY_QSTEP_TRY:
        ret = parse_int(value, 0, 5, &v);
        if (!ret) cp->qstep_try = (int)v;
        break;
    case J2KI_KEY_MAINLEVEL:
        ret = parse_int(value, 0, 11, &v);
        if (!ret) cp->mainlevel = (int)v;
        break;
    case J2KI_KEY_SUBLEVEL:
        ret = parse_int(value, 0, 9, &v);
        if (!ret) cp->sublevel = (int)v;
        break;
    case J2KI_KEY_FORMAT:
        if (!strcmp(value, "j2k") || !strcmp(value, "j2c")) { cp->jp2 = 0; ret = 0; }
        else if (!strcmp(value, "jp2")) { cp->jp2 = 1; ret = 0; }
        break;
    case J2KI_KEY_COMMENT:
        if (strlen(value) < sizeof(cp->comment)) { strcpy(cp->comment, value); ret = 0; }
        break;
    case J2KI_KEY_BACKEND:
        if (!strcmp(value, "auto")) { cp->backend = J2KI_BACKEND_AUTO; ret = 0; }
        else if (!strcmp(value, "ref")) { cp->backend = J2KI_BACKEND_REF; ret = 0; }
        else if (!strcmp(value, "cuda")) { cp->backend = J2KI_BACKEND_CUDA; ret = 0; }
        break;
    case J2KI_KEY_GPU:
        if ((ret = parse_gpu(value, cp)) < 0) {
            if (ret == J2KC_ERR_UNSUPPORTED)
                j2ki_log(&log, J2KC_LOG_ERROR, "invalid value '%s' for parameter 'gpu': a device "
                         "listed twice", value);
            else if (ret == J2KC_ERR_NOMEM)
                j2ki_log(&log, J2KC_LOG_ERROR, "invalid value '%s' for parameter 'gpu': more than "
                         "%d devices", value, J2KI_MAX_GPUS);
            else
                j2ki_log(&log, J2KC_LOG_ERROR, "invalid value '%s' for parameter 'gpu': any, all, "
                         "a device index 0..1023, or a list of distinct ones (0,1)", value);
            return J2KC_ERR_INVAL;
        }
        break;
    case J2KI_KEY_ASYNC_DEPTH:
        ret = parse_int(value, 1, 32, &v);
        if (!ret) cp->async_depth = (int)v;
        break;
    case J2KI_KEY_THREADS:
        ret = parse_int(value, 0, J2KI_POOL_MAX_THREADS, &v);
        if (ret < 0) {
            j2ki_log(&log, J2KC_LOG_ERROR, "invalid value '%s' for parameter 'threads': 0 (one per available CPU) "
                     "or 1..%d", value, J2KI_POOL_MAX_THREADS);
            return ret;
        }
        cp->threads = (int)v;
        break;
    case J2KI_KEY_COLOR:
        if (!strcmp(value, "auto")) { cp->color = J2KI_COLOR_AUTO; ret = 0; }
        else if (!strcmp(value, "srgb")) { cp->color = J2KI_COLOR_SRGB; ret = 0; }
        else if (!strcmp(value, "gray")) { cp->color = J2KI_COLOR_GRAY; ret = 0; }
        else if (!strcmp(value, "sycc")) { cp->color = J2KI_COLOR_SYCC; ret = 0; }
        break;
    }
    if (ret < 0) {
        memcpy(cp, &saved, sizeof(saved));
        j2ki_log(&log, J2KC_LOG_ERROR, "invalid value '%s' for parameter '%s'", value, key);
        return ret;
    }
    p->set_mask[k / 32] |= 1u << (k % 32);
    return 0;
}

/* ------------------------------------------------------------------------------------- */
/* Finalisation                                                                           */
/* ------------------------------------------------------------------------------------- */

#define FAIL(code, ...) do { j2ki_log(log, J2KC_LOG_ERROR, __VA_ARGS__); return code; } while (0)

static int image_check(const J2kcImageDesc *img, const J2kiLog *log)
{
    if (img->nb_comps < 1 || img->nb_comps > J2KC_MAX_COMPS)
        FAIL(J2KC_ERR_UNSUPPORTED, "%d components: 1 to %d are supported", img->nb_comps, J2KC_MAX_COMPS);
    if (!img->width || !img->height || img->width > 65535 || img->height > 65535)
        FAIL(J2KC_ERR_UNSUPPORTED, "image size %ux%u: 1x1 to 65535x65535 are supported",
             img->width, img->height);
    if ((uint64_t)img->x0 + img->width > UINT32_MAX || (uint64_t)img->y0 + img->height > UINT32_MAX)
        FAIL(J2KC_ERR_INVAL, "image offset %u,%u plus size exceeds 2^32-1", img->x0, img->y0);
    for (int c = 0; c < img->nb_comps; c++) {
        int d = img->depth[c];
        if (d < 1 || d > 16)
            FAIL(J2KC_ERR_UNSUPPORTED, "component %d: depth %d: 1 to 16 bits are supported", c, d);
        if (img->dx[c] < 1 || img->dx[c] > 255 || img->dy[c] < 1 || img->dy[c] > 255)
            FAIL(J2KC_ERR_INVAL, "component %d: subsampling %dx%d outside 1..255", c, img->dx[c], img->dy[c]);
        /* a flag, written as Ssiz bit 7 (A.5.1): any other value is a caller's mistake */
        if (img->is_signed[c] != 0 && img->is_signed[c] != 1)
            FAIL(J2KC_ERR_INVAL, "component %d: is_signed = %d (0 or 1)", c, img->is_signed[c]);
        /* B.2 (B-1): the component spans ceil((x0 + width) / dx) - ceil(x0 / dx) columns, likewise
         * rows. An origin and a subsampling can leave it none (one row at y0 = 3 with YRsiz = 2);
         * OpenJPEG and FFmpeg refuse to decode such a codestream. */
        uint32_t cw = j2ki_ceil_div(img->x0 + img->width, (uint32_t)img->dx[c]) - j2ki_ceil_div(img->x0, (uint32_t)img->dx[c]);
        uint32_t ch = j2ki_ceil_div(img->y0 + img->height, (uint32_t)img->dy[c]) - j2ki_ceil_div(img->y0, (uint32_t)img->dy[c]);
        if (!cw || !ch)
            FAIL(J2KC_ERR_UNSUPPORTED, "component %d has no samples (%ux%u): image %ux%u at %u,%u, subsampling %dx%d",
                 c, cw, ch, img->width, img->height, img->x0, img->y0, img->dx[c], img->dy[c]);
    }
    return 0;
}

/** Largest number of levels such that the smallest tile-component still has 1 sample in its LL. */
static int max_useful_levels(const J2kiCodingParams *cp)
{
    uint32_t w = cp->tile_w ? cp->tile_w : cp->img.width;
    uint32_t h = cp->tile_h ? cp->tile_h : cp->img.height;
    uint32_t m = w < h ? w : h;
    int l = 0;
    while (l < J2KI_MAX_LEVELS && (m >> l) >= 2)   /* m >> (l + 1) >= 1, without a shift by 32 */
        l++;
    return l;
}

/** Whether any rate or quality target key was given. */
static int rate_target_set(const J2kcParams *p)
{
    static const int keys[] = { J2KI_KEY_BYTES, J2KI_KEY_BITRATE, J2KI_KEY_COMP_BYTES, J2KI_KEY_QUALITY,
                                J2KI_KEY_SLOPE, J2KI_KEY_LAYER_BYTES };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (j2ki_params_is_set(p, keys[i]))
            return 1;
    return 0;
}

int j2ki_params_finalize(J2kiCodingParams *cp, const J2kcParams *p, const J2kcImageDesc *img,
                         const J2kiLog *log)
{
    int ret;
    *cp = p->cp;
    cp->img = *img;
    if (img->nb_comps < 1 || img->nb_comps > J2KC_MAX_COMPS)
        FAIL(J2KC_ERR_UNSUPPORTED, "%d components: 1 to %d are supported", img->nb_comps, J2KC_MAX_COMPS);
    for (int c = 0; c < img->nb_comps; c++) {   /* 0 subsampling means 1 */
        if (!cp->img.dx[c]) cp->img.dx[c] = 1;
        if (!cp->img.dy[c]) cp->img.dy[c] = 1;
    }
    if ((ret = image_check(&cp->img, log)) < 0)
        return ret;

    /* A reversible profile (IMF *_r, broadcast_multi_r: 15444-1 Amd 8 and Amd 3 with the 5/3
     * transform) without a rate or quality target is coded losslessly: every pass is kept and
     * the IMF levels are derived from the coded size (j2ki_profile_finish_levels). A rate
     * target makes it reversible-transform lossy under that target. */
    if (!cp->lossless && j2ki_profile_is_reversible(cp->profile) && !rate_target_set(p))
        cp->lossless = 1;

    if (cp->lossless) {
        if (j2ki_params_is_set(p, J2KI_KEY_TRANSFORM) && !cp->reversible && !j2ki_params_is_set(p, J2KI_KEY_LOSSLESS) &&
            j2ki_profile_is_reversible(cp->profile))
            FAIL(J2KC_ERR_PROFILE, "transform=97 with a reversible profile: it requires the 5/3 transform");
        if (j2ki_params_is_set(p, J2KI_KEY_TRANSFORM) && !cp->reversible)
            FAIL(J2KC_ERR_INVAL, "lossless=1 conflicts with transform=97: lossless needs the reversible 5/3");
        if (rate_target_set(p))
            FAIL(J2KC_ERR_INVAL, "lossless=1 conflicts with a rate or quality target (bytes, bitrate, comp_bytes, quality, slope)");
        cp->reversible = 1;
    }

    if ((cp->mainlevel || cp->sublevel) && !(cp->profile >= J2KI_PROFILE_IMF2K && !j2ki_profile_is_ht(cp->profile)))
        FAIL(J2KC_ERR_INVAL, "mainlevel/sublevel apply to the Part 1 IMF and broadcast profiles only (imf_ht and imf_ht_r have none)");

    /* HT (ISO/IEC 15444-15): DCI allows Part 1 only (SMPTE 429-4), as do the IMF profiles of
     * 15444-1 Amd 8 and broadcast's Amd 3 (Rsiz 0x0100-0x0900 with code-block style 0); IMF
     * App 2E's HT profiles (imf_ht, imf_ht_r, SMPTE ST 2067-21:2023 Annex I) imply ht=1 */
    if (j2ki_profile_is_ht(cp->profile) && !j2ki_params_is_set(p, J2KI_KEY_HT))
        cp->cblk_style |= J2KI_CBLK_HT;
    if ((cp->cblk_style & J2KI_CBLK_HT) && cp->profile != J2KI_PROFILE_NONE && !j2ki_profile_is_ht(cp->profile))
        FAIL(J2KC_ERR_PROFILE, cp->profile <= J2KI_PROFILE_DCI4K
             ? "ht=1 with a DCI profile: DCI codestreams are Part 1 only (the HT block coder is ISO/IEC 15444-15)"
             : cp->profile <= J2KI_PROFILE_IMF8K_R
             ? "ht=1 with an IMF Part 1 profile (imf2k..imf8k_r, 15444-1 Amd 8): use profile=imf_ht or imf_ht_r, "
               "IMF App 2E's HT profiles"
             : "ht=1 with a broadcast profile: the broadcast profiles (15444-1 Amd 3) are Part 1 only");
    if (!(cp->cblk_style & J2KI_CBLK_HT) && !cp->ht_refine)
        FAIL(J2KC_ERR_INVAL, "ht_refine=0 needs ht=1 (it drops the HT block coder's refinement passes)");
    if ((cp->cblk_style & J2KI_CBLK_HT) && (cp->cblk_style & ~J2KI_CBLK_HT) && !j2ki_profile_is_ht(cp->profile))
        FAIL(J2KC_ERR_INVAL, "ht=1 with bypass, reset, termall, vcausal, pterm or segmark: the HT block coder "
             "takes no other code-block style (T.814 A.2)");

    /* the profile decides most coding parameters and checks the rest */
    if ((ret = j2ki_profile_apply(cp, p, log)) < 0)
        return ret;
    if ((cp->cblk_style & J2KI_CBLK_HT) && (j2ki_params_is_set(p, J2KI_KEY_QUALITY) || j2ki_params_is_set(p, J2KI_KEY_SLOPE)))
        FAIL(J2KC_ERR_UNSUPPORTED, "ht=1 with quality or slope: the HT coder's planes are chosen for a byte "
             "budget only so far; give bytes or bitrate, or no target");
    if (cp->cblk_style & J2KI_CBLK_HT) {
        cp->rsiz |= J2KI_RSIZ_HT;
        cp->t1_stop = 0;  /* the early stop replays Part 1's passes */
    }

    if (cp->bitrate_mbps > 0) {
        if (!cp->fps_num)
            FAIL(J2KC_ERR_INVAL, "bitrate needs fps (bytes per frame = bitrate / fps)");
        uint64_t b = j2ki_rate_bytes(cp->bitrate_mbps, cp->fps_num, cp->fps_den);
        if (b > J2KI_MAX_BUDGET_BYTES)
            FAIL(J2KC_ERR_INVAL, "bitrate %g Mbit/s at %d/%d fps is more than 2^53 bytes per frame",
                 cp->bitrate_mbps, cp->fps_num, cp->fps_den);
        if (!b)
            FAIL(J2KC_ERR_BUFSIZE, "bitrate %g Mbit/s at %d/%d fps is less than one byte per frame",
                 cp->bitrate_mbps, cp->fps_num, cp->fps_den);
        if (cp->frame_bytes && j2ki_params_is_set(p, J2KI_KEY_BYTES) && b != cp->frame_bytes)
            FAIL(J2KC_ERR_INVAL, "bitrate (%g Mbit/s at %d/%d fps = %llu bytes) conflicts with bytes=%llu",
                 cp->bitrate_mbps, cp->fps_num, cp->fps_den, (unsigned long long)b,
                 (unsigned long long)cp->frame_bytes);
        if (!cp->frame_bytes || b < cp->frame_bytes)
            cp->frame_bytes = b;
    }

    /* component transform */
    if (cp->mct < 0) {
        cp->mct = 0;
        if (cp->img.nb_comps >= 3) {
            int same = 1;
            for (int c = 1; c < 3; c++)
                if (cp->img.dx[c] != cp->img.dx[0] || cp->img.dy[c] != cp->img.dy[0] ||
                    cp->img.depth[c] != cp->img.depth[0])
                    same = 0;
            cp->mct = same;
        }
    } else if (cp->mct) {
        if (cp->img.nb_comps < 3)
            FAIL(J2KC_ERR_INVAL, "mct=1 needs at least 3 components (image has %d)", cp->img.nb_comps);
        for (int c = 1; c < 3; c++) {
            if (cp->img.dx[c] != cp->img.dx[0] || cp->img.dy[c] != cp->img.dy[0])
                FAIL(J2KC_ERR_INVAL, "mct=1 needs components 0-2 of the same size (G.2/G.3); component %d is subsampled %dx%d",
                     c, cp->img.dx[c], cp->img.dy[c]);
            if (cp->img.depth[c] != cp->img.depth[0] || cp->img.is_signed[c] != cp->img.is_signed[0])
                FAIL(J2KC_ERR_INVAL, "mct=1 needs components 0-2 of the same depth and signedness; component %d is %d-bit, component 0 %d-bit",
                     c, cp->img.depth[c], cp->img.depth[0]);
        }
    }

    /* IMF HT: Ccap15's B within ST 2067-21:2023 Annex I's bound (j2ki_profile_ht_max_magb).
     * 9/7: the quantiser caps M_b; 5/3: M_b = G + depth + gain + RCT bit - 1 plus the guard
     * the 5/3 worst case needs (quant_ref.c), so only the guard bits can break it */
    if (j2ki_profile_is_ht(cp->profile)) {
        int maxb = j2ki_profile_ht_max_magb(cp);
        if (!cp->reversible) {
            cp->max_mag_bits = maxb;
        } else {
            int b = cp->img.depth[0] + (cp->mct ? 1 : 0) + j2ki_imax(cp->guard_bits, 2) + 1;
            if (b > maxb)
                FAIL(J2KC_ERR_PROFILE, "IMF HT reversible: guard_bits=%d gives B = %d magnitude bit-planes, above "
                     "the %d of ST 2067-21 Annex I for %d-bit%s at %d levels; at most guard_bits=%d",
                     cp->guard_bits, b, maxb, cp->img.depth[0], cp->mct ? " with the RCT" : "",
                     cp->nb_levels, cp->guard_bits - (b - maxb));
        }
    }

    /* A tile larger than the image reference grid right of / below the tile origin is clamped
     * to it: the tile grid is the same (one tile in that direction, B.3), and XTsiz / YTsiz
     * then stay within what decoders handle (OpenJPEG's tile count wraps when XTsiz reaches
     * 2^32 - 1, and it refuses the stream as having billions of tiles). */
    if (cp->tile_w && cp->tile_x0 <= cp->img.x0 && cp->tile_y0 <= cp->img.y0) {
        uint32_t span_w = cp->img.x0 + cp->img.width - cp->tile_x0;
        uint32_t span_h = cp->img.y0 + cp->img.height - cp->tile_y0;
        if (cp->tile_w > span_w)
            cp->tile_w = span_w;
        if (cp->tile_h > span_h)
            cp->tile_h = span_h;
    }

    /* levels: clamp the default to what the size allows; an explicit value is honoured (empty
     * resolutions are legal) up to 32 */
    if (!j2ki_params_is_set(p, J2KI_KEY_LEVELS) && cp->profile == J2KI_PROFILE_NONE) {
        int m = max_useful_levels(cp);
        if (cp->nb_levels > m)
            cp->nb_levels = m;
    }

    /* rate control mode */
    int user_bytes = j2ki_params_is_set(p, J2KI_KEY_BYTES) || j2ki_params_is_set(p, J2KI_KEY_BITRATE) ||
                     j2ki_params_is_set(p, J2KI_KEY_LAYER_BYTES);
    int nb_targets = user_bytes + (cp->psnr > 0) + j2ki_params_is_set(p, J2KI_KEY_SLOPE);
    if (nb_targets > 1)
        FAIL(J2KC_ERR_INVAL, "choose one rate target: bytes/bitrate/layer_bytes, quality, or slope");
    if (!user_bytes && cp->frame_bytes && nb_targets)
        /* the profile set a byte cap; rate control does not combine a quality or slope target
         * with a byte ceiling */
        FAIL(J2KC_ERR_PROFILE, "this profile fixes a byte budget per frame (%llu bytes); quality and slope targets "
             "are not supported with it: give bytes or bitrate (at most the profile's) instead",
             (unsigned long long)cp->frame_bytes);
    if (cp->frame_bytes || cp->nb_layer_bytes) {
        cp->rc_mode = J2KI_RC_BYTES;
        if (cp->nb_layer_bytes) {
            if (cp->nb_layer_bytes != cp->nb_layers &&
                !(cp->nb_layer_bytes == cp->nb_layers - 1 && cp->frame_bytes))
                FAIL(J2KC_ERR_INVAL, "layer_bytes has %d values for %d layers", cp->nb_layer_bytes, cp->nb_layers);
            if (cp->nb_layer_bytes < cp->nb_layers)
                cp->layer_bytes[cp->nb_layers - 1] = cp->frame_bytes;
            if (cp->frame_bytes && cp->layer_bytes[cp->nb_layers - 1] > cp->frame_bytes)
                FAIL(J2KC_ERR_INVAL, "last layer budget %llu exceeds bytes=%llu",
                     (unsigned long long)cp->layer_bytes[cp->nb_layers - 1], (unsigned long long)cp->frame_bytes);
            if (!cp->frame_bytes)
                cp->frame_bytes = cp->layer_bytes[cp->nb_layers - 1];
        } else {
            /* layers without explicit budgets: geometric spacing up to the frame budget */
            for (int l = 0; l < cp->nb_layers; l++)
                cp->layer_bytes[l] = (uint64_t)((double)cp->frame_bytes /
                                                pow(2.0, 0.5 * (cp->nb_layers - 1 - l)));
            cp->layer_bytes[cp->nb_layers - 1] = cp->frame_bytes;
        }
    } else if (cp->psnr > 0) {
        cp->rc_mode = J2KI_RC_PSNR;
    } else if (j2ki_params_is_set(p, J2KI_KEY_SLOPE)) {
        cp->rc_mode = J2KI_RC_SLOPE;
    } else {
        cp->rc_mode = J2KI_RC_NONE;
    }
    /* format=jp2: the budgets bound the file, so the JP2 boxes around the codestream (Annex I)
     * come out of them and the codestream is coded to the rest */
    if (cp->jp2 && cp->rc_mode == J2KI_RC_BYTES) {
        uint64_t boxes = j2ki_jp2_boxes_size(&cp->img, cp->frame_bytes);
        for (int l = 0; l < cp->nb_layers; l++) {
            if (cp->layer_bytes[l] <= boxes)
                FAIL(J2KC_ERR_BUFSIZE, "byte budget %llu%s does not cover the %llu bytes of JP2 boxes",
                     (unsigned long long)cp->layer_bytes[l], l < cp->nb_layers - 1 ? " (a layer's)" : "",
                     (unsigned long long)boxes);
            cp->layer_bytes[l] -= boxes;
        }
        cp->frame_bytes -= boxes;
    }
    if (cp->comp_bytes && cp->tp_split != J2KI_TP_COMP)
        FAIL(J2KC_ERR_INVAL, "comp_bytes needs tile_parts=C (a component's bytes are its tile-parts)");
    if (cp->comp_bytes && !cp->frame_bytes)
        FAIL(J2KC_ERR_INVAL, "comp_bytes needs a frame budget too (bytes or bitrate)");
    if (cp->comp_bytes && cp->rc_mode != J2KI_RC_BYTES)
        cp->rc_mode = J2KI_RC_BYTES;

    /* code-block style */
    if ((cp->cblk_style & J2KI_CBLK_BYPASS) && cp->bypass_start != 4)
        j2ki_log(log, J2KC_LOG_WARNING,
                 "bypass=%d: raw coding starts after %d significant bit-planes instead of Part 1's 4; "
                 "only a decoder that applies the lazy-mode rule literally per bit-plane count (Part 2 capable) can read it",
                 cp->bypass_start, cp->bypass_start);

    /* POC sanity */
    for (int i = 0; i < cp->nb_poc; i++) {
        J2kiPoc *q = &cp->poc[i];
        if (q->res_s > cp->nb_levels || q->comp_s >= cp->img.nb_comps)
            FAIL(J2KC_ERR_INVAL, "poc entry %d starts beyond the last resolution (%d) or component (%d)",
                 i + 1, cp->nb_levels, cp->img.nb_comps - 1);
        if (q->res_e > cp->nb_levels + 1) q->res_e = cp->nb_levels + 1;
        if (q->comp_e > cp->img.nb_comps) q->comp_e = cp->img.nb_comps;
        if (q->layer_e > cp->nb_layers) q->layer_e = cp->nb_layers;
    }

    /* tiles */
    if (cp->tile_w) {
        if (cp->tile_x0 > cp->img.x0 || cp->tile_y0 > cp->img.y0)
            FAIL(J2KC_ERR_INVAL, "tile origin %u,%u must not exceed the image origin %u,%u (B-3)",
                 cp->tile_x0, cp->tile_y0, cp->img.x0, cp->img.y0);
        if ((uint64_t)cp->tile_x0 + cp->tile_w <= cp->img.x0 || (uint64_t)cp->tile_y0 + cp->tile_h <= cp->img.y0)
            FAIL(J2KC_ERR_INVAL, "the first tile must intersect the image (B-3)");
        uint64_t ntx = ((uint64_t)cp->img.x0 + cp->img.width - cp->tile_x0 + cp->tile_w - 1) / cp->tile_w;
        uint64_t nty = ((uint64_t)cp->img.y0 + cp->img.height - cp->tile_y0 + cp->tile_h - 1) / cp->tile_h;
        if (ntx * nty > 65535)
            FAIL(J2KC_ERR_INVAL, "%llu tiles: at most 65535 (Isot is 16-bit)", (unsigned long long)(ntx * nty));
    } else {
        cp->tile_x0 = cp->tile_y0 = 0;
    }
    if (cp->async_depth < 1)
        cp->async_depth = 1;
    {
        const int k = j2ki_quant_rate_planes(cp, cp->img.depth[0]);
        if (k)
            j2ki_log(log, J2KC_LOG_VERBOSE, "qstep_rate: 9/7 steps coarsened by %d bit-plane%s for %llu bytes a frame",
                     k, k > 1 ? "s" : "", (unsigned long long)cp->frame_bytes);
        if (j2ki_quant_try_planes(cp))
            j2ki_log(log, J2KC_LOG_VERBOSE, "qstep_try: each frame tried with %d bit-plane%s more at most, as "
                     "many as its coefficients predict it fills its budget with, kept where it does",
                     j2ki_quant_try_planes(cp), j2ki_quant_try_planes(cp) > 1 ? "s" : "");
    }
    return 0;
}
