/*
 * j2kc: command-line JPEG 2000 encoder on top of the j2kcuda library.
 *
 *   j2kc -i IN -o OUT.j2c [options]      (j2kc --help lists them)
 *
 * Input: PNM (P5/P6, up to 16 bits), PGX (name_0.pgx + name_1.pgx... as components), raw
 * frames (--raw WxH:FMT). Every coding option is passed to j2kc_params_set() as text; the
 * library validates them all and explains refusals through the log callback. The output is
 * written by out_write (outfile.h): a regular file through a temporary file and a rename, so a
 * failed run never leaves a partial file behind; a device or FIFO in place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "imageio.h"
#include "outfile.h"
#include "j2kcuda.h"
#include "cuda_queues.h"

typedef struct Cli {
    int quiet, verbose;
    int async_depth;          /* frames in flight asked for (async_depth), 0: the default */
    char info[2048];          /* info-level library messages, appended to the summary */
} Cli;

/* j2kc_params_set, noting the frames in flight for the hardware queues (cuda_queues.h) */
static int cli_set(Cli *cli, J2kcParams *par, const char *key, const char *val)
{
    int r = j2kc_params_set(par, key, val);
    if (r >= 0 && !strcmp(key, "async_depth"))
        cli->async_depth = atoi(val);
    return r;
}

static void on_log(void *opaque, int level, const char *msg)
{
    Cli *cli = opaque;
    if (level <= J2KC_LOG_WARNING) {
        if (!cli->quiet || level <= J2KC_LOG_ERROR)
            fprintf(stderr, "j2kc: %s: %s\n", level <= J2KC_LOG_ERROR ? "error" : "warning", msg);
    } else if (level <= J2KC_LOG_INFO) {
        size_t n = strlen(cli->info);
        if (n + 4 < sizeof(cli->info))
            snprintf(cli->info + n, sizeof(cli->info) - n, "%s%s", n ? "; " : "", msg);
        if (cli->verbose)
            fprintf(stderr, "j2kc: %s\n", msg);
    } else if (cli->verbose) {
        fprintf(stderr, "j2kc: %s\n", msg);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: j2kc -i IN -o OUT.j2c [options]\n"
        "input:   PNM (P5/P6), PGX (NAME_0.pgx reads NAME_1.pgx.. too), or --raw WxH:FMT\n"
        "         (gray, gray10le, gray16le, yuv420p, yuv422p10le, yuv444p12le, rgbp, gbrp12le, rgb24, rgb48le, xyz12le ...)\n"
        "profile: --profile dci2k|dci4k|imf2k|imf4k|imf8k|imf2k_r|imf4k_r|imf8k_r|broadcast|broadcast_multi\n"
        "         |broadcast_multi_r|imf_ht|imf_ht_r (IMF App 2E HTJ2K, imply --ht)  --fps N[/D]\n"
        "         --mainlevel N --sublevel N\n"
        "rate:    --bytes N | --bitrate MBPS | --comp-bytes N | --quality DB | --lossless\n"
        "         --layers N --layer-bytes a,b,c   (reversible profiles without a rate: lossless)\n"
        "coding:  --levels N --cblk WxH --prec WxH[,WxH..] --order lrcp|rlcp|rpcl|pcrl|cprl --poc SPEC\n"
        "         --tiles WxH[+X+Y] --tile-parts R|C --bypass[=N] --reset --termall --vcausal --pterm\n"
        "         --segmark --guard N --sop --eph --tlm --plt --jp2 --comment TEXT --set KEY=VALUE\n"
        "         --ht (HTJ2K block coder, ISO/IEC 15444-15) --ht-refine 0|1 (0: cleanup passes only)\n"
        "run:     --backend ref|cuda|auto --gpu N|all|N,M,.. (frames spread over several GPUs)\n"
        "         --threads N (CPU threads of the ref backend,\n"
        "         0 = one per available CPU [0]) --bench N -q -v --help-params\n");
}

/* Long options that map one-to-one onto a library key and take a value. */
static const struct { const char *opt, *key; } value_opts[] = {
    { "--profile", "profile" },   { "--fps", "fps" },           { "--bytes", "bytes" },
    { "--bitrate", "bitrate" },   { "--comp-bytes", "comp_bytes" }, { "--quality", "quality" },
    { "--levels", "levels" },     { "--cblk", "cblk" },         { "--prec", "prec" },
    { "--order", "order" },       { "--poc", "poc" },           { "--tiles", "tiles" },
    { "--tile-parts", "tile_parts" }, { "--layers", "layers" }, { "--layer-bytes", "layer_bytes" },
    { "--guard", "guard_bits" },  { "--mainlevel", "mainlevel" }, { "--sublevel", "sublevel" },
    { "--backend", "backend" },   { "--gpu", "gpu" },           { "--comment", "comment" },
    { "--transform", "transform" }, { "--mct", "mct" },         { "--async", "async_depth" },
    { "--threads", "threads" },   { "--ht-refine", "ht_refine" },
};

/* Flags that set a library key to "1". */
static const struct { const char *opt, *key; } flag_opts[] = {
    { "--lossless", "lossless" }, { "--reset", "reset" },     { "--termall", "termall" },
    { "--vcausal", "vcausal" },   { "--pterm", "pterm" },     { "--segmark", "segmark" },
    { "--sop", "sop" },           { "--eph", "eph" },         { "--tlm", "tlm" },
    { "--plt", "plt" },           { "--ht", "ht" },
};

int main(int argc, char **argv)
{
    Cli cli;
    memset(&cli, 0, sizeof(cli));
    const char *in = NULL, *out = NULL, *raw = NULL;
    int bench = 0, jp2 = 0, ret = 1;
    J2kcParams *par = NULL;
    J2kcEncoder *enc = NULL;
    Image img;
    memset(&img, 0, sizeof(img));
    char err[512];

    par = j2kc_params_alloc();
    if (!par) {
        fprintf(stderr, "j2kc: out of memory\n");
        return 1;
    }
    /* First pass for -q/-v so that the log level is right while options are applied. */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q")) cli.quiet = 1;
        if (!strcmp(argv[i], "-v")) cli.verbose = 1;
    }
    j2kc_params_set_log(par, on_log, &cli, cli.verbose ? J2KC_LOG_DEBUG : J2KC_LOG_INFO);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char *key = NULL, *val = NULL;
        int handled = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            ret = 0;
            goto done;
        }
        if (!strcmp(a, "--help-params")) {
            fputs(j2kc_params_help(), stdout);
            ret = 0;
            goto done;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "-v"))
            continue;
        for (size_t k = 0; k < sizeof(value_opts) / sizeof(value_opts[0]) && !handled; k++) {
            size_t ol = strlen(value_opts[k].opt);
            if (!strcmp(a, value_opts[k].opt)) {
                /* "--levels -o x": the value is missing, not "-o". */
                if (!v || !strncmp(v, "--", 2) || !strcmp(v, "-i") || !strcmp(v, "-o") ||
                    !strcmp(v, "-q") || !strcmp(v, "-v")) {
                    fprintf(stderr, "j2kc: %s needs a value\n", a);
                    goto done;
                }
                key = value_opts[k].key;
                val = v;
                i++;
                handled = 1;
            } else if (!strncmp(a, value_opts[k].opt, ol) && a[ol] == '=') {
                key = value_opts[k].key;
                val = a + ol + 1;
                handled = 1;
            }
        }
        for (size_t k = 0; k < sizeof(flag_opts) / sizeof(flag_opts[0]) && !handled; k++)
            if (!strcmp(a, flag_opts[k].opt)) {
                key = flag_opts[k].key;
                val = "1";
                handled = 1;
            }
        if (handled) {
            if (cli_set(&cli, par, key, val) < 0) {
                fprintf(stderr, "j2kc: invalid value '%s' for %s\n", val, a);
                goto done;
            }
            continue;
        }
        if (!strcmp(a, "--bypass")) {
            key = "bypass"; val = "1";
        } else if (!strncmp(a, "--bypass=", 9)) {
            key = "bypass"; val = a + 9;
        } else if (!strcmp(a, "--jp2")) {
            jp2 = 1;
            continue;
        } else if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6)) {
            const char *kv = a[5] == '=' ? a + 6 : v;
            if (!kv) {
                fprintf(stderr, "j2kc: --set needs KEY=VALUE\n");
                goto done;
            }
            if (a[5] != '=')
                i++;
            const char *eq = strchr(kv, '=');
            if (!eq || eq == kv) {
                fprintf(stderr, "j2kc: --set '%s': expected KEY=VALUE\n", kv);
                goto done;
            }
            char k2[64];
            snprintf(k2, sizeof(k2), "%.*s", (int)(eq - kv), kv);
            if (cli_set(&cli, par, k2, eq + 1) < 0) {
                fprintf(stderr, "j2kc: --set %s: rejected\n", kv);
                goto done;
            }
            continue;
        } else if ((!strcmp(a, "-i") || !strcmp(a, "-o") || !strcmp(a, "--raw") || !strcmp(a, "--bench")) && !v) {
            fprintf(stderr, "j2kc: %s needs a value\n", a);
            goto done;
        } else if (!strcmp(a, "-i")) {
            in = v; i++;
            continue;
        } else if (!strcmp(a, "-o")) {
            out = v; i++;
            continue;
        } else if (!strcmp(a, "--raw")) {
            raw = v; i++;
            continue;
        } else if (!strcmp(a, "--bench")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 1000000) {
                fprintf(stderr, "j2kc: --bench '%s': expected a frame count 1..1000000\n", v);
                goto done;
            }
            bench = (int)n;
            i++;
            continue;
        } else {
            fprintf(stderr, "j2kc: unknown option '%s' (see --help)\n", a);
            ret = 2;
            goto done;
        }
        if (cli_set(&cli, par, key, val) < 0) {
            fprintf(stderr, "j2kc: invalid value '%s' for %s\n", val, a);
            goto done;
        }
    }
    if (!in || !out) {
        usage(stderr);
        ret = 2;
        goto done;
    }
    size_t ol = strlen(out);
    if (jp2 || (ol > 4 && !strcmp(out + ol - 4, ".jp2")))
        if (j2kc_params_set(par, "format", "jp2") < 0) {
            fprintf(stderr, "j2kc: JP2 output rejected by the library\n");
            goto done;
        }

    RawFormat rf;
    if (raw && img_parse_raw(raw, &rf, err, sizeof(err))) {
        fprintf(stderr, "j2kc: --raw: %s\n", err);
        goto done;
    }
    if (raw && (!rf.width || !rf.height)) {
        fprintf(stderr, "j2kc: --raw needs WxH:FMT\n");
        goto done;
    }
    if (img_read(in, raw ? &rf : NULL, &img, err, sizeof(err))) {
        fprintf(stderr, "j2kc: %s\n", err);
        goto done;
    }

    /* before the first CUDA call, which creating the encoder makes */
    j2kc_app_cuda_queues(cli.async_depth);
    double t0 = now_s();
    int r = j2kc_encoder_create(&enc, &img.desc, par);
    if (r < 0) {
        fprintf(stderr, "j2kc: cannot create the encoder for %ux%u, %d components, %d-bit: %s\n",
                img.desc.width, img.desc.height, img.desc.nb_comps, img.desc.depth[0], j2kc_strerror(r));
        goto done;
    }
    double t1 = now_s();
    J2kcFrame frame;
    memset(&frame, 0, sizeof(frame));
    for (int c = 0; c < img.desc.nb_comps; c++) {
        frame.data[c] = img.plane[c];
        frame.stride[c] = (ptrdiff_t)img.w[c] * (img.desc.depth[c] > 8 ? 2 : 1);
        frame.step[c] = 1;
    }
    frame.mem = J2KC_MEM_HOST;

    int nb_frames = bench ? bench : 1;
    int submitted = 0, received = 0;
    uint8_t *first = NULL;
    size_t first_size = 0;
    J2kcPacket pkt;
    while (received < nb_frames) {
        if (submitted < nb_frames) {
            frame.tag = (uint64_t)submitted;
            r = j2kc_encoder_submit(enc, &frame);
            if (r == 0) {
                submitted++;
                continue;
            }
            if (r != J2KC_ERR_AGAIN) {
                fprintf(stderr, "j2kc: encoding failed: %s\n", j2kc_strerror(r));
                goto done;
            }
        }
        r = j2kc_encoder_receive(enc, &pkt, 1);
        if (r < 0) {
            fprintf(stderr, "j2kc: encoding failed: %s\n", j2kc_strerror(r));
            goto done;
        }
        if (pkt.tag != (uint64_t)received) {
            fprintf(stderr, "j2kc: packets out of order: got frame %llu, expected %d\n",
                    (unsigned long long)pkt.tag, received);
            goto done;
        }
        if (!first) {
            if (!pkt.size) {
                fprintf(stderr, "j2kc: the encoder returned an empty codestream\n");
                goto done;
            }
            first = malloc(pkt.size);
            if (!first) {
                fprintf(stderr, "j2kc: out of memory\n");
                goto done;
            }
            memcpy(first, pkt.data, pkt.size);
            first_size = pkt.size;
        }
        received++;
    }
    double t2 = now_s();
    char werr[512];
    int wret = out_write(out, first, first_size, werr, sizeof(werr));
    free(first);
    if (wret) {
        fprintf(stderr, "j2kc: %s\n", werr);
        goto done;
    }
    if (!cli.quiet) {
        printf("%s: %zu bytes, %ux%u %dx%d-bit, backend %s, %.1f ms%s", out, first_size,
               img.desc.width, img.desc.height, img.desc.nb_comps, img.desc.depth[0],
               j2kc_encoder_backend(enc), (t2 - t1) * 1e3 / nb_frames, bench ? " per frame" : "");
        if (bench)
            printf(", %.2f frames/s (%d frames, create %.1f ms)", nb_frames / (t2 - t1), nb_frames,
                   (t1 - t0) * 1e3);
        {
            int devs[16];
            uint64_t nf[16];
            int nd = j2kc_encoder_device_frames(enc, devs, nf, 16);
            for (int k = 0; nd > 1 && k < nd && k < 16; k++)
                printf("%s%d:%llu", k ? "," : ", frames per GPU ", devs[k], (unsigned long long)nf[k]);
        }
        if (cli.info[0])
            printf(" | %s", cli.info);
        printf("\n");
    }
    if (cli.verbose) {
        J2kcStats st;
        if (j2kc_encoder_stats(enc, &st) == 0)
            fprintf(stderr, "j2kc: stages ms: upload %.2f mct+dwt %.2f t1 %.2f rc %.2f t2 %.2f download %.2f total %.2f\n",
                    st.ms_upload, st.ms_mct_dwt, st.ms_t1, st.ms_rc, st.ms_t2, st.ms_download, st.ms_total);
    }
    ret = 0;
done:
    j2kc_encoder_free(&enc);
    j2kc_params_free(&par);
    img_free(&img);
    return ret;
}
