/*
 * j2kpsnr: decodes a JPEG 2000 codestream with OpenJPEG's library (libopenjp2.so.7, the Debian
 * package that tools/fetch-peers.sh carries) and compares the decoded samples with the source
 * frame. Unlike opj_decompress, the library hands back the decoded component samples as they
 * are: no sYCC->RGB conversion and no chroma up-sampling, so 4:2:2 frames compare exactly.
 *
 * PSNR is over every sample of every component:
 *   10*log10((2^depth-1)^2 * nb_samples / sum of squared errors)
 * (the same formula as bench/nvj2k_bench.c).
 *
 * Usage: j2kpsnr SRC [-f yuv422p10le -s WxH] CODESTREAM [THREADS]
 * Prints "PSNR psnr=P mse=M maxerr=E lossless=0|1 psnr_c0=... psnr_c1=...".
 *
 * The few OpenJPEG 2.x declarations used are written out here (the -dev package with
 * openjpeg.h is not carried); their layout is that of openjpeg.h 2.1 to 2.5.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frameio.h"

typedef struct opj_image_comp {
    uint32_t dx, dy, w, h, x0, y0, prec, bpp, sgnd, resno_decoded, factor;
    int32_t *data;
    uint16_t alpha;
} opj_image_comp_t;

typedef struct opj_image {
    uint32_t x0, y0, x1, y1, numcomps;
    int color_space;
    opj_image_comp_t *comps;
    uint8_t *icc_profile_buf;
    uint32_t icc_profile_len;
} opj_image_t;

typedef void *opj_stream_t;
typedef void *opj_codec_t;
enum { OPJ_CODEC_J2K = 0, OPJ_CODEC_JP2 = 2 };

opj_stream_t *opj_stream_create_default_file_stream(const char *fname, int is_read_stream);
void opj_stream_destroy(opj_stream_t *stream);
opj_codec_t *opj_create_decompress(int format);
void opj_destroy_codec(opj_codec_t *codec);
void opj_set_default_decoder_parameters(void *parameters);
int opj_setup_decoder(opj_codec_t *codec, void *parameters);
int opj_codec_set_threads(opj_codec_t *codec, int num_threads);
int opj_read_header(opj_stream_t *stream, opj_codec_t *codec, opj_image_t **image);
int opj_decode(opj_codec_t *codec, opj_stream_t *stream, opj_image_t *image);
int opj_end_decompress(opj_codec_t *codec, opj_stream_t *stream);
void opj_image_destroy(opj_image_t *image);

/* opj_dparameters_t is about 10 KB in 2.5 (two OPJ_PATH_LEN=4096 paths and small fields) */
static union { char bytes[1 << 16]; double align; } g_dparams;

int main(int argc, char **argv)
{
    const char *src = NULL, *cs = NULL, *fmt = NULL;
    uint32_t w = 0, h = 0;
    int threads = 1, args = 0;
    unsigned char magic[2] = { 0, 0 };
    BenchFrame fr;
    FILE *fp;
    opj_stream_t *st;
    opj_codec_t *codec;
    opj_image_t *img = NULL;
    double sse = 0.0, cnt = 0.0, peak, psnr_c[4];
    long maxerr = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-f") && i + 1 < argc) fmt = argv[++i];
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) bench_parse_size(argv[++i], &w, &h);
        else if (args == 0) { src = argv[i]; args++; }
        else if (args == 1) { cs = argv[i]; args++; }
        else threads = atoi(argv[i]);
    }
    if (!src || !cs) {
        fprintf(stderr, "usage: j2kpsnr SRC [-f yuv422p10le -s WxH] CODESTREAM [THREADS]\n");
        return 2;
    }
    if (bench_frame_load(&fr, src, fmt, w, h))
        return 1;
    if (!(fp = fopen(cs, "rb")) || fread(magic, 1, 2, fp) != 2) {
        fprintf(stderr, "cannot read %s\n", cs);
        return 1;
    }
    fclose(fp);

    st = opj_stream_create_default_file_stream(cs, 1);
    codec = opj_create_decompress(magic[0] == 0xFF && magic[1] == 0x4F ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
    opj_set_default_decoder_parameters(g_dparams.bytes);
    if (!st || !codec || !opj_setup_decoder(codec, g_dparams.bytes) ||
        (threads > 1 && !opj_codec_set_threads(codec, threads)) ||
        !opj_read_header(st, codec, &img) || !opj_decode(codec, st, img) ||
        !opj_end_decompress(codec, st)) {
        fprintf(stderr, "%s: OpenJPEG cannot decode it\n", cs);
        printf("PSNR psnr=nan decode=failed\n");
        return 1;
    }
    if ((int)img->numcomps != fr.nb_comps) {
        fprintf(stderr, "%s: %u components, the source has %d\n", cs, img->numcomps, fr.nb_comps);
        return 1;
    }
    peak = (double)((1 << fr.depth) - 1);
    for (int c = 0; c < fr.nb_comps; c++) {
        const opj_image_comp_t *ic = &img->comps[c];
        double sse_c = 0.0;
        if (ic->w != fr.comp_w[c] || ic->h != fr.comp_h[c] || (int)ic->prec != fr.depth) {
            fprintf(stderr, "%s: component %d is %ux%u %u-bit, the source %ux%u %d-bit\n", cs, c,
                    ic->w, ic->h, ic->prec, fr.comp_w[c], fr.comp_h[c], fr.depth);
            return 1;
        }
        for (size_t i = 0; i < (size_t)ic->w * ic->h; i++) {
            long e = (long)ic->data[i] - (long)fr.plane[c][i];
            if (labs(e) > maxerr)
                maxerr = labs(e);
            sse_c += (double)(e * e);
        }
        psnr_c[c] = sse_c == 0.0 ? INFINITY : 10.0 * log10(peak * peak * ic->w * ic->h / sse_c);
        sse += sse_c;
        cnt += (double)ic->w * ic->h;
    }
    printf("PSNR psnr=%.4f mse=%.6f maxerr=%ld lossless=%d", sse == 0.0 ? INFINITY : 10.0 * log10(peak * peak * cnt / sse),
           sse / cnt, maxerr, sse == 0.0);
    for (int c = 0; c < fr.nb_comps; c++)
        printf(" psnr_c%d=%.4f", c, psnr_c[c]);
    printf("\n");
    opj_image_destroy(img);
    opj_destroy_codec(codec);
    opj_stream_destroy(st);
    bench_frame_free(&fr);
    return 0;
}
