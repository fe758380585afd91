/*
 * Fuzz target: whole encodes on the reference backend. The input picks a tiny image (1..3
 * components of up to 32x32, depth 1..16, signed or not, chroma subsampling), the coding
 * parameters and the samples:
 *   byte 0  components, profile        byte 6  code-block exponents (4..32 each side)
 *   byte 1  width  (1..32)             byte 7  budget: 0 none, else a byte budget
 *   byte 2  height (1..32)             byte 8  layers (1..3), progression order
 *   byte 3  depth 1..16, 0x80 signed   byte 9  code-block style switches, SOP/EPH
 *   byte 4  subsampling, origin        byte 10 TLM/PLT, tiles, tile-parts, format
 *   byte 5  levels 0..5, lossless      byte 11 precincts, guard bits
 *   then the samples (repeated when short). Byte 0's bits 2-4 may pick a profile (IMF 2K,
 *   IMF 2K_R, broadcast, broadcast multi_r, at 24 fps); the profile then fixes the coding
 *   parameters, and only the levels and the budget come from the input. Byte 6's bit 4 picks
 *   the HT block coder (ht=1, ISO/IEC 15444-15: one layer, as OpenJPEG 2.5.0 reads none
 *   other of ours, and none of Part 1's code-block style switches), bit 6 its cleanup passes
 *   alone (ht_refine=0); with byte 0's bit 5 (and no Part 1 profile) the IMF App 2E HT
 *   profile instead (imf_ht_r when lossless, else imf_ht).
 * Properties asserted, beyond no crash and no sanitizer report:
 *   - create/encode fail only with an ordinary refusal (never J2KC_ERR_INTERNAL/NOMEM);
 *   - a codestream (in JP2: the jp2c box's contents) never exceeds the byte budget, and the
 *     output never exceeds j2kc_encoder_max_size();
 *   - OpenJPEG's library decodes it to the same geometry;
 *   - lossless (lossless=1, or a reversible profile without a budget): the decoded samples
 *     are the input samples exactly;
 *   - j2kc-check's rules (tools/profcheck.c, csparse.c) find no violation: Part-1 syntax,
 *     and the rules of the profile the codestream declares.
 * IMF with levels = 0 fails the last one: the known defect "imf_levels0"
 * (tests/fuzz/known-defects.txt); J2KC_FUZZ_SKIP_KNOWN=1 leaves that case out.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openjpeg.h>

#include "j2kcuda.h"
#include "profcheck.h"

#define MAX_SIDE   32
#define HEADER     12

static int skip_known;
static int verbose;     /* J2KC_FUZZ_VERBOSE=1: each input's outcome on stderr */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *s = getenv("J2KC_FUZZ_SKIP_KNOWN");
    skip_known = s && *s == '1';
    s = getenv("J2KC_FUZZ_VERBOSE");
    verbose = s && *s == '1';
    return 0;
}

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_encode: %s\n", what);
    abort();
}

static void quiet_log(void *opaque, int level, const char *msg)
{
    (void)opaque;
    (void)level;
    (void)msg;
}

static void opj_quiet(const char *msg, void *client)
{
    (void)msg;
    (void)client;
}

static void opj_error_print(const char *msg, void *client)
{
    (void)client;
    fprintf(stderr, "fuzz_encode: OpenJPEG: %s", msg);
}

/* ---- OpenJPEG input from memory -------------------------------------------------------- */
typedef struct MemStream {
    const uint8_t *data;
    size_t size, pos;
} MemStream;

static OPJ_SIZE_T mem_read(void *buf, OPJ_SIZE_T n, void *user)
{
    MemStream *m = user;
    if (m->pos >= m->size)
        return (OPJ_SIZE_T)-1;
    if (n > m->size - m->pos)
        n = m->size - m->pos;
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return n;
}

static OPJ_OFF_T mem_skip(OPJ_OFF_T n, void *user)
{
    MemStream *m = user;
    if (n < 0 ? (size_t)-n > m->pos : (size_t)n > m->size - m->pos)
        return -1;
    m->pos = (size_t)((OPJ_OFF_T)m->pos + n);
    return n;
}

static OPJ_BOOL mem_seek(OPJ_OFF_T n, void *user)
{
    MemStream *m = user;
    if (n < 0 || (size_t)n > m->size)
        return OPJ_FALSE;
    m->pos = (size_t)n;
    return OPJ_TRUE;
}

/* Decodes a codestream (or JP2 file) with libopenjp2; NULL when it cannot. */
static opj_image_t *opj_decode_mem(const uint8_t *cs, size_t size, int jp2)
{
    MemStream m = { cs, size, 0 };
    opj_image_t *img = NULL;
    opj_dparameters_t dp;
    opj_stream_t *s = opj_stream_create(4096, OPJ_TRUE);
    opj_codec_t *c = opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
    if (!s || !c)
        fail("OpenJPEG setup failed");
    opj_stream_set_user_data(s, &m, NULL);
    opj_stream_set_user_data_length(s, size);
    opj_stream_set_read_function(s, mem_read);
    opj_stream_set_skip_function(s, mem_skip);
    opj_stream_set_seek_function(s, mem_seek);
    opj_set_error_handler(c, opj_error_print, NULL);
    opj_set_warning_handler(c, opj_quiet, NULL);
    opj_set_info_handler(c, opj_quiet, NULL);
    opj_set_default_decoder_parameters(&dp);
    if (!opj_setup_decoder(c, &dp) || !opj_read_header(s, c, &img) || !opj_decode(c, s, img) ||
        !opj_end_decompress(c, s)) {
        opj_image_destroy(img);
        img = NULL;
    }
    opj_destroy_codec(c);
    opj_stream_destroy(s);
    return img;
}

static uint32_t plane_size(uint32_t origin, uint32_t len, int d)
{
    return (origin + len + (uint32_t)d - 1) / (uint32_t)d - (origin + (uint32_t)d - 1) / (uint32_t)d;
}

/* Length of the codestream in a JP2 file: the contents of its jp2c box (ISO/IEC 15444-1
 * I.5.4; box header: LBox, TBox, XLBox when LBox = 1; LBox = 0: to the end of the file). The
 * budget is the codestream's, as README says; the JP2 boxes come on top. */
static size_t jp2c_size(const uint8_t *b, size_t n)
{
    size_t pos = 0;
    while (n - pos >= 8) {
        uint64_t len = (uint64_t)b[pos] << 24 | b[pos + 1] << 16 | b[pos + 2] << 8 | b[pos + 3];
        size_t hdr = 8;
        if (len == 1) {
            if (n - pos < 16)
                break;
            len = 0;
            for (int i = 0; i < 8; i++)
                len = len << 8 | b[pos + 8 + i];
            hdr = 16;
        } else if (len == 0) {
            len = n - pos;
        }
        if (len < hdr || len > n - pos)
            break;
        if (!memcmp(b + pos + 4, "jp2c", 4))
            return (size_t)len - hdr;
        pos += (size_t)len;
    }
    fail("JP2 file without a well-formed jp2c box");
    return 0;
}

static int set(J2kcParams *p, const char *key, const char *fmt, unsigned v)
{
    char value[32];
    snprintf(value, sizeof(value), fmt, v, v);
    if (j2kc_params_set(p, key, value)) {
        fprintf(stderr, "fuzz_encode: %s=%s refused\n", key, value);
        fail("a well-formed parameter value was refused");
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *orders[] = { "lrcp", "rlcp", "rpcl", "pcrl", "cprl" };
    static const char *tile_parts[] = { "none", "R", "C", "none" };
    static const char *profiles[8] = { NULL, NULL, NULL, NULL, "imf2k", "imf2k_r", "broadcast",
                                       "broadcast_multi_r" };
    if (size < HEADER + 1)
        return 0;
    const uint8_t *h = data, *smp = data + HEADER;
    size_t nsmp = size - HEADER;

    J2kcImageDesc d;
    memset(&d, 0, sizeof(d));
    d.nb_comps = 1 + (h[0] & 3) % 3;
    const char *profile = profiles[(h[0] >> 2) & 7];
    d.width = 1 + h[1] % MAX_SIDE;
    d.height = 1 + h[2] % MAX_SIDE;
    d.x0 = (h[4] >> 2) & 3;
    d.y0 = (h[4] >> 4) & 3;
    for (int c = 0; c < d.nb_comps; c++) {
        d.depth[c] = 1 + (h[3] & 15);
        d.is_signed[c] = h[3] >> 7;
        d.dx[c] = c ? 1 + (h[4] & 1) : 1;
        d.dy[c] = c ? 1 + ((h[4] >> 1) & 1) : 1;
    }
    int lossless = h[5] & 0x80;
    unsigned budget = h[7] ? 40u + 8u * h[7] : 0;
    int jp2 = (h[10] >> 6) & 1;
    const int ht = (h[6] >> 4) & 1;
    if (!profile && ht && (h[0] & 0x20))
        profile = lossless ? "imf_ht_r" : "imf_ht";

    J2kcParams *p = j2kc_params_alloc();
    if (!p)
        fail("j2kc_params_alloc failed");
    j2kc_params_set_log(p, quiet_log, NULL, J2KC_LOG_DEBUG);
    set(p, "backend", "ref", 0);
    /* one worker: the automatic count (every CPU) would start and join a thread per CPU on
     * each input while the campaign's jobs run side by side; thread counts are test_threads' */
    set(p, "threads", "1", 0);
    set(p, "levels", "%u", h[5] % 6);
    if (profile) {
        if (j2kc_params_set(p, "profile", profile))
            fail("profile refused");
        set(p, "fps", "%u", 24);
        /* the reversible profiles code losslessly without a budget (their lossless default) */
        lossless = !budget && strlen(profile) > 2 && !strcmp(profile + strlen(profile) - 2, "_r");
        jp2 = 0;
        if (budget)
            set(p, "bytes", "%u", budget);
        goto coding_set;
    }
    set(p, lossless ? "lossless" : "transform", "%u", lossless ? 1 : (h[5] & 0x40) ? 53 : 97);
    {
        char v[32];
        snprintf(v, sizeof(v), "%ux%u", 4u << (h[6] & 3), 4u << ((h[6] >> 2) & 3));
        if (j2kc_params_set(p, "cblk", v))
            fail("cblk refused");
    }
    if (budget && !lossless)
        set(p, "bytes", "%u", budget);
    set(p, "layers", "%u", ht ? 1 : 1 + h[8] % 3);
    if (j2kc_params_set(p, "order", orders[(h[8] >> 2) % 5]))
        fail("order refused");
    if (ht) {
        set(p, "ht", "%u", 1);
        set(p, "ht_refine", "%u", !((h[6] >> 6) & 1));
    } else {
        set(p, "bypass", "%u", h[9] & 1);
        set(p, "reset", "%u", (h[9] >> 1) & 1);
        set(p, "termall", "%u", (h[9] >> 2) & 1);
        set(p, "vcausal", "%u", (h[9] >> 3) & 1);
        set(p, "pterm", "%u", (h[9] >> 4) & 1);
        set(p, "segmark", "%u", (h[9] >> 5) & 1);
    }
    set(p, "sop", "%u", (h[9] >> 6) & 1);
    set(p, "eph", "%u", h[9] >> 7);
    set(p, "tlm", "%u", h[10] & 1);
    set(p, "plt", "%u", (h[10] >> 1) & 1);
    if (h[10] & 4) {
        char v[32];
        snprintf(v, sizeof(v), "%ux%u", 8u << ((h[10] >> 3) & 1), 8u << ((h[10] >> 4) & 1));
        if (j2kc_params_set(p, "tiles", v))
            fail("tiles refused");
    }
    if (j2kc_params_set(p, "tile_parts", tile_parts[(h[10] >> 5) & 1 ? 1 + (h[10] >> 7) : 0]))
        fail("tile_parts refused");
    if (jp2 && j2kc_params_set(p, "format", "jp2"))
        fail("format refused");
    if (h[11] & 1) {
        char v[32];
        snprintf(v, sizeof(v), "%ux%u", 4u << ((h[11] >> 1) & 3), 4u << ((h[11] >> 3) & 3));
        if (j2kc_params_set(p, "prec", v))
            fail("prec refused");
    }
    set(p, "guard_bits", "%u", (h[11] >> 5) & 7);
coding_set:;

    /* The samples, within each component's range. */
    static uint8_t plane[3][MAX_SIDE * MAX_SIDE * 2];
    uint32_t pw[3], ph[3];
    J2kcFrame f;
    memset(&f, 0, sizeof(f));
    size_t pos = 0;
    for (int c = 0; c < d.nb_comps; c++) {
        int bytes = d.depth[c] > 8 ? 2 : 1;
        uint32_t mask = (1u << d.depth[c]) - 1;
        pw[c] = plane_size(d.x0, d.width, d.dx[c]);
        ph[c] = plane_size(d.y0, d.height, d.dy[c]);
        for (uint32_t i = 0; i < pw[c] * ph[c]; i++) {
            uint32_t v = smp[pos++ % nsmp];
            if (bytes == 2)
                v = v << 8 | smp[pos++ % nsmp];
            v &= mask;
            int32_t s = d.is_signed[c] ? (int32_t)v - (int32_t)(1u << (d.depth[c] - 1)) : (int32_t)v;
            if (bytes == 1)
                plane[c][i] = (uint8_t)s;
            else
                ((uint16_t *)plane[c])[i] = (uint16_t)s;
        }
        f.data[c] = plane[c];
        f.stride[c] = (ptrdiff_t)pw[c] * bytes;
        f.step[c] = 1;
    }

    J2kcEncoder *enc = NULL;
    J2kcPacket pkt;
    int r = j2kc_encoder_create(&enc, &d, p);
    if (!r)
        r = j2kc_encoder_submit(enc, &f);
    if (!r)
        r = j2kc_encoder_receive(enc, &pkt, 1);
    if (verbose)
        fprintf(stderr, "fuzz_encode: %s%s: %s, %zu bytes\n", profile ? "profile " : "", profile ? profile : "no profile",
                j2kc_strerror(r), r ? (size_t)0 : pkt.size);
    if (r == J2KC_ERR_INTERNAL || r == J2KC_ERR_NOMEM || r == J2KC_ERR_AGAIN || r == J2KC_ERR_EOF) {
        fprintf(stderr, "fuzz_encode: %s\n", j2kc_strerror(r));
        fail("create/encode failed other than by refusing the parameters");
    }
    if (!r) {
        size_t cs_size = jp2 ? jp2c_size(pkt.data, pkt.size) : pkt.size;
        if (budget && !lossless && cs_size > budget) {
            fprintf(stderr, "fuzz_encode: codestream of %zu bytes, budget %u\n", cs_size, budget);
            fail("codestream over its byte budget");
        }
        if (pkt.size > j2kc_encoder_max_size(enc))
            fail("codestream larger than j2kc_encoder_max_size()");
        /* The rules of the declared profile (none: Part 1 only), at the frame rate coded for. */
        Checker k = { .file = "fuzz_encode", .quiet = 1, .fps_num = profile ? 24 : 0, .fps_den = 1 };
        int imf_levels0 = profile && !strncmp(profile, "imf", 3) && h[5] % 6 == 0;
        if (!(skip_known && imf_levels0) && pc_check(&k, pkt.data, pkt.size, 0)) {
            k.quiet = 0;    /* again, printing the violations */
            pc_check(&k, pkt.data, pkt.size, 0);
            fflush(stdout);
            fail("j2kc-check finds a violation of Part 1 or of the declared profile in the output");
        }
        opj_image_t *img = opj_decode_mem(pkt.data, pkt.size, jp2);
        if (!img)
            fail("OpenJPEG cannot decode the codestream");
        if ((int)img->numcomps != d.nb_comps)
            fail("OpenJPEG decodes another number of components");
        for (int c = 0; c < d.nb_comps; c++) {
            const opj_image_comp_t *oc = &img->comps[c];
            if (oc->w != pw[c] || oc->h != ph[c] || (int)oc->prec != d.depth[c] ||
                (int)oc->sgnd != d.is_signed[c])
                fail("OpenJPEG decodes another component geometry or depth");
            if (!lossless)
                continue;
            for (uint32_t i = 0; i < pw[c] * ph[c]; i++) {
                int32_t want = d.depth[c] > 8 ? (d.is_signed[c] ? ((int16_t *)plane[c])[i] : ((uint16_t *)plane[c])[i])
                                              : (d.is_signed[c] ? ((int8_t *)plane[c])[i] : plane[c][i]);
                if (oc->data[i] != want) {
                    fprintf(stderr, "fuzz_encode: component %d sample %u: %d decoded, %d coded\n", c, i,
                            oc->data[i], want);
                    fail("lossless encode does not decode to its input");
                }
            }
        }
        opj_image_destroy(img);
    }
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
    return 0;
}
