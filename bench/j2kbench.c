/*
 * j2kbench: host-to-host speed of the j2kcuda encoder through its public API.
 *
 * One frame is loaded into host memory; the encoder is created once; then
 *   warm-up  : W frames (module load, first-touch, clocks) - not counted;
 *   latency  : L times submit + blocking receive of one frame alone (median and minimum, and
 *              the median time spent in submit: with pageable input, the host staging copy),
 *              each codestream compared with the first (identical input -> identical bytes);
 *   throughput: N frames (or until -t seconds), keeping async_depth frames in flight, timed
 *              from the first submit to the last receive.
 * "Host to host": the frame starts in host memory (malloc, or pinned with --pinned) and the
 * codestream ends in host memory (J2kcPacket.data); nothing else is copied. With -p gpu=all
 * or a list, devices=D:N,... says how many frames each device coded (all phases).
 *
 * Prints one "RESULT key=value ..." line (bench/run.sh parses it) and writes the first
 * codestream with -o. Start-up: create_ms, the encoder's creation; first_ms, the first warm-up
 * frame's submit to its packet (module loading, first-touch and, on the CUDA backend, the
 * slots still being prepared after creation).
 *
 * A sequence: -i given several times (frames of one size and format, at most MAX_FRAMES).
 * Every phase then submits the frames in turn (frame i % nb), so the encoder sees distinct
 * content, and a sequence pass before the latency phase codes each frame once alone:
 * recoded=R counts the frames of the sequence that the encoder coded twice (J2kcStats
 * nb_recoded: qstep_try), recoded_frames lists them, latency_max_ms is the slowest of them
 * alone; load_recoded counts the throughput run's. -o then takes a pattern with one %d (the
 * frame's index) and writes every frame's codestream. Each frame's codestreams must equal its
 * first (identical=1).
 *
 * Usage: j2kbench -i FILE [-i FILE2 ...] [-f yuv422p10le -s 4096x2160] [-p key=value]...
 *                 [-n N] [-t SEC] [-l L] [-w W] [-o OUT.j2k|OUT%d.j2k] [--pinned] [--held] [--packed]
 *                 [-v]
 * --held: the frames are submitted with J2KC_FRAME_HELD (their planes never change here), so a
 * page-locked frame's submit does not wait for its upload.
 * --packed: the components interleaved in one plane, as FFmpeg's rgb48 / xyz12 frames are
 * (three components of one size; step 3).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "j2kcuda.h"
#include "frameio.h"
#include "timing.h"
#include "../tools/cuda_queues.h"

#ifdef J2KB_CUDA
/* --pinned's own buffer, page-locked as an application's would be, through the library's
 * driver table (the library loads the driver at run time and links no CUDA library, and nor
 * does this tool): built with -Ij2kcuda/src and the CUDA headers (bench/run.sh) */
#include "cuda/cu_primary.h"

/* size bytes of page-locked host memory (cuMemHostAlloc, no flags, as cudaHostAlloc's default)
 * in device 0's primary context, the one the encoder works in (and the CUDA runtime's); NULL
 * when it cannot be had */
static void *pinned_alloc(size_t size)
{
    CUcontext ctx, prev;
    void *ptr = NULL;
    if (j2ki_cu_load(NULL, 0) < 0 || j2ki_cu_primary(0, &ctx) != CUDA_SUCCESS ||
        J2KI_CUFN(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS)
        return NULL;
    if (J2KI_CUFN(cuMemHostAlloc)(&ptr, size, 0) != CUDA_SUCCESS)
        ptr = NULL;
    J2KI_CUFN(cuCtxPopCurrent)(&prev);
    return ptr;
}

/* a buffer of pinned_alloc's, freed in its context */
static void pinned_free(void *ptr)
{
    CUcontext ctx, prev;
    if (!ptr || j2ki_cu_primary(0, &ctx) != CUDA_SUCCESS || J2KI_CUFN(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS)
        return;
    J2KI_CUFN(cuMemFreeHost)(ptr);
    J2KI_CUFN(cuCtxPopCurrent)(&prev);
}
#endif

#define MAX_REPS 1000
#define MAX_FRAMES 64

/* CPU time of the whole process (every thread: the library's workers and copy helpers too) */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int g_verbose;

static void log_cb(void *opaque, int level, const char *msg)
{
    (void)opaque;
    fprintf(stderr, "j2kc[%d]: %s\n", level, msg);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: j2kbench -i FILE [-i FILE2 ...] [-f yuv422p10le -s WxH] [-p key=value]... [-n N]\n"
            "                [-t SEC] [-l L] [-w W] [-o OUT.j2k|OUT%%d.j2k] [--pinned] [--held] [--packed]\n"
            "                [-v]\n");
}

/* The codestream of frame k of a sequence for -o: the pattern's one %d replaced by k
 * (a single frame: the name as given). Returns 0, or -1 when it does not fit. */
static int out_name(char *dst, size_t cap, const char *pattern, int k, int nb)
{
    const char *d = strstr(pattern, "%d");
    int r;
    if (nb == 1 || !d)
        r = snprintf(dst, cap, "%s", pattern);
    else
        r = snprintf(dst, cap, "%.*s%d%s", (int)(d - pattern), pattern, k, d + 2);
    return r < 0 || (size_t)r >= cap ? -1 : 0;
}

/* Remembers frame k's first codestream, or compares with it: 0 when it differs. */
static int same_as_first(uint8_t **first, size_t *first_size, const J2kcPacket *pkt)
{
    if (!*first) {
        if (!(*first = malloc(pkt->size ? pkt->size : 1)))
            return 0;
        memcpy(*first, pkt->data, pkt->size);
        *first_size = pkt->size;
        return 1;
    }
    return pkt->size == *first_size && !memcmp(pkt->data, *first, pkt->size);
}

int main(int argc, char **argv)
{
    const char *in[MAX_FRAMES], *fmt = NULL, *out = NULL;
    const char *keys[64], *vals[64];
    char *kv_copy[64];
    int nb_in = 0, nb_kv = 0, n = 100, reps = 11, warmup = 3, pinned = 0, held = 0, packed = 0, ret = 1, err;
    double tmax = 30.0;
    uint32_t w = 0, h = 0;
    BenchFrame fr[MAX_FRAMES];
    J2kcParams *p = NULL;
    J2kcEncoder *enc = NULL;
    J2kcImageDesc img;
    J2kcFrame jf[MAX_FRAMES];
    J2kcPacket pkt;
    J2kcStats st, st_sum;
    uint8_t *first[MAX_FRAMES] = { NULL };
    size_t first_size[MAX_FRAMES] = { 0 };
    void *pinned_buf = NULL; /* --pinned: one page-locked block for every plane of every frame */
    uint8_t *packed_buf = NULL; /* --packed: the interleaved planes (malloc), frame after frame */
    double lat[MAX_REPS], lat_sub[MAX_REPS], t0, t1, t_phase, c0, c1, lat_max = 0;
    double create_ms = 0, first_ms = 0;   /* start-up: creation, then the first frame alone */
    int nb_stats = 0, same = 1, sub, rec, nb_load = 0, nb_recoded = 0, load_recoded = 0;
    char name[4096], list[MAX_FRAMES * 4 + 2] = "";
    /* stage times of the frames of the throughput run (under load: their kernels share the
     * device with the other frames in flight) */
    double ld_up = 0, ld_mct_dwt = 0, ld_t1 = 0, ld_rc = 0, ld_t2 = 0, ld_down = 0, ld_total = 0;

    memset(fr, 0, sizeof(fr));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--pinned")) { pinned = 1; continue; }
        if (!strcmp(a, "--held")) { held = 1; continue; }
        if (!strcmp(a, "--packed")) { packed = 1; continue; }
        if (!strcmp(a, "-v")) { g_verbose = 1; continue; }
        if (!v) { usage(); return 2; }
        i++;
        if (!strcmp(a, "-i")) {
            if (nb_in == MAX_FRAMES) { fprintf(stderr, "at most %d frames\n", MAX_FRAMES); return 2; }
            in[nb_in++] = v;
        }
        else if (!strcmp(a, "-f")) fmt = v;
        else if (!strcmp(a, "-s")) { if (bench_parse_size(v, &w, &h)) { usage(); return 2; } }
        else if (!strcmp(a, "-o")) out = v;
        else if (!strcmp(a, "-n")) n = atoi(v);
        else if (!strcmp(a, "-t")) tmax = atof(v);
        else if (!strcmp(a, "-l")) reps = atoi(v);
        else if (!strcmp(a, "-w")) warmup = atoi(v);
        else if (!strcmp(a, "-p") && nb_kv < 64) {
            char *eq;
            kv_copy[nb_kv] = strdup(v);
            if (!kv_copy[nb_kv] || !(eq = strchr(kv_copy[nb_kv], '='))) { usage(); return 2; }
            *eq = 0;
            keys[nb_kv] = kv_copy[nb_kv];
            vals[nb_kv] = eq + 1;
            nb_kv++;
        } else { usage(); return 2; }
    }
    if (!nb_in || n < 0 || reps < 1 || reps > MAX_REPS || warmup < 0) { usage(); return 2; }
    if (out && nb_in > 1 && !strstr(out, "%d")) {
        fprintf(stderr, "-o with several frames needs a %%d in the name\n");
        ret = 2;
        goto end;
    }
    for (int k = 0; k < nb_in; k++) {
        if (bench_frame_load(&fr[k], in[k], fmt, w, h))
            goto end;
        if (k && (fr[k].nb_comps != fr[0].nb_comps || fr[k].width != fr[0].width ||
                  fr[k].height != fr[0].height || fr[k].depth != fr[0].depth ||
                  memcmp(fr[k].dx, fr[0].dx, sizeof(fr[0].dx)) || memcmp(fr[k].dy, fr[0].dy, sizeof(fr[0].dy)))) {
            fprintf(stderr, "%s: not the size and format of %s (one sequence, one format)\n", in[k], in[0]);
            goto end;
        }
    }

    memset(&img, 0, sizeof(img));
    img.nb_comps = fr[0].nb_comps;
    img.width = fr[0].width;
    img.height = fr[0].height;
    memset(jf, 0, sizeof(jf));
    for (int k = 0; k < nb_in; k++) {
        jf[k].mem = J2KC_MEM_HOST;
        jf[k].flags = held ? J2KC_FRAME_HELD : 0;
        for (int c = 0; c < fr[k].nb_comps; c++) {
            img.depth[c] = fr[k].depth;
            img.dx[c] = fr[k].dx[c];
            img.dy[c] = fr[k].dy[c];
            jf[k].data[c] = fr[k].plane[c];
            jf[k].stride[c] = (ptrdiff_t)fr[k].comp_w[c] * 2;
            jf[k].step[c] = 1;
        }
    }
    if (packed) {
        size_t px = (size_t)fr[0].comp_w[0] * fr[0].comp_h[0];
        if (fr[0].nb_comps != 3 || fr[0].comp_w[1] != fr[0].comp_w[0] || fr[0].comp_w[2] != fr[0].comp_w[0] ||
            fr[0].comp_h[1] != fr[0].comp_h[0] || fr[0].comp_h[2] != fr[0].comp_h[0]) {
            fprintf(stderr, "--packed needs three components of one size\n");
            goto end;
        }
        if (!(packed_buf = (uint8_t *)malloc(px * 6 * nb_in))) { fprintf(stderr, "out of memory\n"); goto end; }
        for (int k = 0; k < nb_in; k++) {
            uint8_t *pb = packed_buf + px * 6 * k;
            for (size_t i = 0; i < px; i++)
                for (int c = 0; c < 3; c++)
                    memcpy(pb + i * 6 + c * 2, (const uint8_t *)fr[k].plane[c] + i * 2, 2);
            for (int c = 0; c < 3; c++) {
                jf[k].data[c] = pb + c * 2;
                jf[k].stride[c] = (ptrdiff_t)fr[0].comp_w[0] * 6;
                jf[k].step[c] = 3;
            }
        }
    }

    if (!(p = j2kc_params_alloc())) { fprintf(stderr, "out of memory\n"); goto end; }
    j2kc_params_set_log(p, log_cb, NULL, g_verbose ? J2KC_LOG_VERBOSE : J2KC_LOG_WARNING);
    for (int k = 0; k < nb_kv; k++)
        if ((err = j2kc_params_set(p, keys[k], vals[k])) < 0) {
            fprintf(stderr, "parameter %s=%s: %s\n", keys[k], vals[k], j2kc_strerror(err));
            goto end;
        }
    /* the hardware queues for the frames in flight, before the first CUDA call (creating the
     * encoder makes it; a -p async_depth=N sets the frames in flight) */
    {
        int depth = 0;
        for (int k = 0; k < nb_kv; k++)
            if (!strcmp(keys[k], "async_depth"))
                depth = atoi(vals[k]);
        j2kc_app_cuda_queues(depth);
    }
    t0 = now_ms();
    if ((err = j2kc_encoder_create(&enc, &img, p)) < 0) {
        fprintf(stderr, "j2kc_encoder_create: %s\n", j2kc_strerror(err));
        goto end;
    }
    t1 = now_ms();
    create_ms = t1 - t0;
    /* page-locked input after the encoder exists: CUDA starts in the library, as it would
     * in an application */
    if (pinned) {
#ifdef J2KB_CUDA
        size_t total = 0, off = 0;
        for (int c = 0; c < fr[0].nb_comps; c++)
            total += (size_t)fr[0].comp_w[c] * fr[0].comp_h[c] * 2;
        if (!(pinned_buf = pinned_alloc(total * nb_in))) {
            fprintf(stderr, "cannot page-lock %zu bytes (cuMemHostAlloc)\n", total * nb_in);
            goto end;
        }
        for (int k = 0; k < nb_in; k++) {
            uint8_t *pb = (uint8_t *)pinned_buf + total * k;
            if (packed) {
                memcpy(pb, packed_buf + total * k, total);
                for (int c = 0; c < 3; c++)
                    jf[k].data[c] = pb + c * 2;
            } else {
                off = 0;
                for (int c = 0; c < fr[k].nb_comps; c++) {
                    size_t sz = (size_t)fr[k].comp_w[c] * fr[k].comp_h[c] * 2;
                    memcpy(pb + off, fr[k].plane[c], sz);
                    jf[k].data[c] = pb + off;
                    off += sz;
                }
            }
        }
#else
        fprintf(stderr, "--pinned needs a CUDA build of j2kbench\n");
        goto end;
#endif
    }
    fprintf(stderr, "j2kbench: %s%s backend=%s %ux%u comps=%d depth=%d frames=%d create=%.1f ms\n", in[0],
            nb_in > 1 ? "..." : "", j2kc_encoder_backend(enc), fr[0].width, fr[0].height, fr[0].nb_comps,
            fr[0].depth, nb_in, t1 - t0);

    /* warm-up; its first frame, submitted right after creation, times the first packet */
    for (int i = 0; i < warmup; i++) {
        jf[i % nb_in].tag = (uint64_t)i;
        t0 = now_ms();
        if ((err = j2kc_encoder_submit(enc, &jf[i % nb_in])) < 0 ||
            (err = j2kc_encoder_receive(enc, &pkt, 1)) < 0) {
            fprintf(stderr, "warm-up frame %d: %s\n", i, j2kc_strerror(err));
            goto end;
        }
        if (i == 0)
            first_ms = now_ms() - t0;
        if (!same_as_first(&first[i % nb_in], &first_size[i % nb_in], &pkt))
            same = 0;
    }

    /* a sequence: every frame once, alone (which were coded twice, the slowest) */
    for (int k = 0; nb_in > 1 && k < nb_in; k++) {
        jf[k].tag = (uint64_t)k;
        t0 = now_ms();
        if ((err = j2kc_encoder_submit(enc, &jf[k])) < 0 || (err = j2kc_encoder_receive(enc, &pkt, 1)) < 0) {
            fprintf(stderr, "sequence frame %d: %s\n", k, j2kc_strerror(err));
            goto end;
        }
        t1 = now_ms() - t0;
        lat_max = t1 > lat_max ? t1 : lat_max;
        if (!same_as_first(&first[k], &first_size[k], &pkt))
            same = 0;
        if (j2kc_encoder_stats(enc, &st) == 0 && st.nb_recoded) {
            nb_recoded++;
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d", nb_recoded > 1 ? "," : "", k);
        }
    }

    /* latency: one frame alone, submit to codestream in host memory */
    memset(&st_sum, 0, sizeof(st_sum));
    t_phase = now_ms();
    for (int i = 0; i < reps; i++) {
        J2kcFrame *f = &jf[i % nb_in];
        f->tag = (uint64_t)i;
        t0 = now_ms();
        if ((err = j2kc_encoder_submit(enc, f)) < 0) {
            fprintf(stderr, "latency frame %d: %s\n", i, j2kc_strerror(err));
            goto end;
        }
        lat_sub[i] = now_ms() - t0;
        if ((err = j2kc_encoder_receive(enc, &pkt, 1)) < 0) {
            fprintf(stderr, "latency frame %d: %s\n", i, j2kc_strerror(err));
            goto end;
        }
        lat[i] = now_ms() - t0;
        lat_max = lat[i] > lat_max ? lat[i] : lat_max;
        if (!same_as_first(&first[i % nb_in], &first_size[i % nb_in], &pkt))
            same = 0;
        if (j2kc_encoder_stats(enc, &st) == 0) {
            st_sum.ms_upload += st.ms_upload;
            st_sum.ms_mct_dwt += st.ms_mct_dwt;
            st_sum.ms_t1 += st.ms_t1;
            st_sum.ms_rc += st.ms_rc;
            st_sum.ms_t2 += st.ms_t2;
            st_sum.ms_download += st.ms_download;
            st_sum.ms_total += st.ms_total;
            st_sum.device_bytes_per_slot = st.device_bytes_per_slot;
            nb_stats++;
            if (nb_in == 1 && i == 0 && st.nb_recoded) {
                nb_recoded = 1;
                snprintf(list, sizeof(list), "0");
            }
        }
        if (now_ms() - t_phase > tmax * 1e3 / 2) { /* slow backend: fewer repetitions */
            reps = i + 1;
            break;
        }
    }
    for (int k = 0; out && k < nb_in; k++) {
        FILE *fp;
        if (!first[k])
            continue;
        if (out_name(name, sizeof(name), out, k, nb_in)) {
            fprintf(stderr, "-o %s: name too long\n", out);
            goto end;
        }
        fp = fopen(name, "wb");
        if (!fp || fwrite(first[k], 1, first_size[k], fp) != first_size[k] || fclose(fp)) {
            fprintf(stderr, "cannot write %s\n", name);
            goto end;
        }
    }

    /* throughput: keep the encoder's slots full */
    sub = rec = 0;
    c0 = cpu_ms();
    t0 = now_ms();
    while (rec < n) {
        if (sub < n) {
            jf[sub % nb_in].tag = (uint64_t)sub;
            err = j2kc_encoder_submit(enc, &jf[sub % nb_in]);
            if (err == 0) {
                sub++;
                if (now_ms() - t0 > tmax * 1e3)
                    n = sub; /* time limit: drain what is in flight */
                continue;
            }
            if (err != J2KC_ERR_AGAIN) {
                fprintf(stderr, "submit %d: %s\n", sub, j2kc_strerror(err));
                goto end;
            }
        }
        if ((err = j2kc_encoder_receive(enc, &pkt, 1)) < 0) {
            fprintf(stderr, "receive %d: %s\n", rec, j2kc_strerror(err));
            goto end;
        }
        /* sizes here (a compare of every packet would load the loop), the last one's bytes
         * after it */
        if (pkt.tag != (uint64_t)rec || (first[rec % nb_in] && pkt.size != first_size[rec % nb_in]))
            same = 0;
        if (j2kc_encoder_stats(enc, &st) == 0) {
            load_recoded += st.nb_recoded;
            if (st.ms_total > 0) {
                ld_up += st.ms_upload;
                ld_mct_dwt += st.ms_mct_dwt;
                ld_t1 += st.ms_t1;
                ld_rc += st.ms_rc;
                ld_t2 += st.ms_t2;
                ld_down += st.ms_download;
                ld_total += st.ms_total;
                nb_load++;
            }
        }
        rec++;
    }
    t1 = now_ms();
    c1 = cpu_ms();
    if (n > 0 && !same_as_first(&first[(n - 1) % nb_in], &first_size[(n - 1) % nb_in], &pkt))
        same = 0;

    qsort(lat, (size_t)reps, sizeof(double), cmp_double);
    qsort(lat_sub, (size_t)reps, sizeof(double), cmp_double);
    printf("RESULT backend=%s width=%u height=%u comps=%d depth=%d bytes=%zu frames=%d fps=%.3f "
           "ms_per_frame=%.4f latency_ms=%.4f latency_min_ms=%.4f latency_max_ms=%.4f latency_submit_ms=%.4f "
           "latency_reps=%d identical=%d pinned=%d held=%d packed=%d cpu_cores=%.2f seq_frames=%d recoded=%d "
           "recoded_frames=%s load_recoded=%d create_ms=%.1f first_ms=%.1f",
           j2kc_encoder_backend(enc), fr[0].width, fr[0].height, fr[0].nb_comps, fr[0].depth, first_size[0], n,
           n > 0 ? n * 1e3 / (t1 - t0) : 0.0, n > 0 ? (t1 - t0) / n : 0.0, lat[reps / 2], lat[0], lat_max,
           lat_sub[reps / 2], reps, same, pinned, held, packed, t1 > t0 ? (c1 - c0) / (t1 - t0) : 0.0, nb_in,
           nb_recoded, nb_recoded ? list : "-", load_recoded, create_ms, first_ms);
    if (nb_in > 1) {
        size_t tot = 0;
        for (int k = 0; k < nb_in; k++)
            tot += first_size[k];
        printf(" seq_bytes_mean=%.0f", (double)tot / nb_in);
    }
    if (nb_stats)
        printf(" st_upload=%.4f st_mct_dwt=%.4f st_t1=%.4f st_rc=%.4f st_t2=%.4f st_download=%.4f "
               "st_total=%.4f devmem_mb=%.1f",
               st_sum.ms_upload / nb_stats, st_sum.ms_mct_dwt / nb_stats, st_sum.ms_t1 / nb_stats,
               st_sum.ms_rc / nb_stats, st_sum.ms_t2 / nb_stats, st_sum.ms_download / nb_stats,
               st_sum.ms_total / nb_stats, st_sum.device_bytes_per_slot / 1048576.0);
    if (nb_load)
        printf(" load_upload=%.4f load_mct_dwt=%.4f load_t1=%.4f load_rc=%.4f load_t2=%.4f "
               "load_download=%.4f load_total=%.4f", ld_up / nb_load, ld_mct_dwt / nb_load, ld_t1 / nb_load,
               ld_rc / nb_load, ld_t2 / nb_load, ld_down / nb_load, ld_total / nb_load);
    {   /* frames each device coded (gpu=all or a list: several) */
        int devs[16];
        uint64_t nf[16];
        int nd = j2kc_encoder_device_frames(enc, devs, nf, 16);
        printf(" devices=");
        for (int k = 0; k < nd && k < 16; k++)
            printf("%s%d:%llu", k ? "," : "", devs[k], (unsigned long long)nf[k]);
    }
    printf("\n");
    ret = same ? 0 : 3;
    if (!same)
        fprintf(stderr, "j2kbench: WARNING: codestreams of the same frame differ between runs\n");
end:
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
#ifdef J2KB_CUDA
    pinned_free(pinned_buf);
#endif
    (void)pinned_buf;
    free(packed_buf);
    for (int k = 0; k < MAX_FRAMES; k++) {
        free(first[k]);
        bench_frame_free(&fr[k]);
    }
    for (int k = 0; k < nb_kv; k++)
        free(kv_copy[k]);
    return ret;
}
