/*
 * GPU faults survived (needs a CUDA device; run by tests/check-cuda.sh).
 *
 *   cuda_faults alloc     every device allocation of an encoder with 4 frames in flight made to
 *                         fail in turn (cuda_fault.h): the creation's (the shared tables) fail
 *                         it with J2KC_ERR_DEVMEM and a message naming device memory; the
 *                         preparer thread's (slots 0..) fail the submits to those slots with
 *                         J2KC_ERR_DEVMEM and that message while every frame that comes back is
 *                         right; no device or host memory is left behind, another encoder keeps
 *                         working
 *   cuda_faults pinned    the same with every page-locked host allocation (J2KC_ERR_NOMEM, a
 *                         message naming page-locked host memory), all of them the preparer's
 *   cuda_faults submit    a CUDA error in the third frame's enqueue (context still usable): the
 *                         submit fails, the frames before it come back right, the encoder
 *                         answers J2KC_ERR_BROKEN from then on, and a new encoder works
 *   cuda_faults threads   8 encoders of mixed profiles in 8 threads at once: each one's bytes
 *                         equal its bytes coded alone
 *   cuda_faults devfull   another process (cuda_faults hold) holds all but 2 GiB of the device:
 *                         a 4K encoder's creation fails cleanly, and succeeds once that process
 *                         has gone
 *   cuda_faults trap      a kernel of the second frame traps (a sticky error): receive reports
 *                         the affected frames, the encoder can be freed, the process survives,
 *                         and a new encoder either works or fails with an error
 *   cuda_faults syncrace  an application that synchronises the device (cudaDeviceSynchronize)
 *                         and launches work on the legacy default stream between its calls,
 *                         with another thread launching and synchronising legacy-stream work all
 *                         the while, as encoders with 16 frames in flight are created and code
 *                         4K and small frames: no CUDA call of the application fails, every
 *                         frame is the reference's (the slots' graphs are never captured off the
 *                         application's calls)
 *
 *   cuda_faults codeload  the embedded code's load fails once (out of device memory at its
 *                         second image): that creation fails with J2KC_ERR_DEVMEM, the next
 *                         loads the code again and codes the reference's bytes, a third loads
 *                         nothing
 *   cuda_faults smemrace  encoders of 64x64 and 64x32 code-blocks on the shared-memory tier-1
 *                         kernel (above the 48 KiB default, different sizes) code at once,
 *                         four rounds: every frame equals the one coded alone
 *
 * trap leaves the context unusable, so each mode runs in a process of its own. Every mode prints ok/FAIL lines and exits 1 on
 * a failure, 77 without a device.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "j2kcuda.h"
#include "cuda/cuda_fault.h"

static int nb_fail;

static void report(int ok, const char *fmt, ...)
{
    va_list ap;
    printf(ok ? "ok   " : "FAIL ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    nb_fail += !ok;
}

/* ---- cases, frames and encodes ---- */

typedef struct Case {
    const char *name;
    int         w, h, nb_comps, depth, dx1;   /* dx1: components 1.. subsampled 2x horizontally */
    const char *params;
} Case;

static const Case SMALL = { "small", 256, 200, 3, 12, 0, "bytes=20000 async_depth=2" };
static const Case DCI4K = { "dci4k", 4096, 2160, 3, 12, 0, "profile=dci4k fps=24 async_depth=8" };

static void image_desc(const Case *c, J2kcImageDesc *img)
{
    memset(img, 0, sizeof(*img));
    img->nb_comps = c->nb_comps;
    img->width = (uint32_t)c->w;
    img->height = (uint32_t)c->h;
    for (int k = 0; k < c->nb_comps; k++) {
        img->depth[k] = c->depth;
        img->dx[k] = k && c->dx1 ? 2 : 1;
        img->dy[k] = 1;
    }
}

/** Frame planes of a case: smooth structure plus seeded noise (never constant). */
typedef struct Frame {
    uint16_t *plane[J2KC_MAX_COMPS];
    J2kcFrame f;
} Frame;

static int frame_make(Frame *fr, const Case *c, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 1u;
    const int max = (1 << c->depth) - 1;
    memset(fr, 0, sizeof(*fr));
    for (int k = 0; k < c->nb_comps; k++) {
        const int w = k && c->dx1 ? (c->w + 1) / 2 : c->w;
        if (!(fr->plane[k] = (uint16_t *)malloc((size_t)w * c->h * 2)))
            return -1;
        for (int y = 0; y < c->h; y++)
            for (int x = 0; x < w; x++) {
                s = s * 1664525u + 1013904223u;
                int v = ((x * 37 + y * 23 + k * 511) % 1024) * max / 1024 + (int)(s >> 26) - 32;
                fr->plane[k][(size_t)y * w + x] = (uint16_t)(v < 0 ? 0 : v > max ? max : v);
            }
        fr->f.data[k] = fr->plane[k];
        fr->f.stride[k] = (ptrdiff_t)w * 2;
    }
    return 0;
}

static void frame_free(Frame *fr)
{
    for (int k = 0; k < J2KC_MAX_COMPS; k++)
        free(fr->plane[k]);
}

typedef struct Bytes {
    uint8_t *p;
    size_t   n;
} Bytes;

static int bytes_set(Bytes *b, const J2kcPacket *pkt)
{
    free(b->p);
    b->n = pkt->size;
    b->p = (uint8_t *)malloc(pkt->size);
    if (!b->p)
        return -1;
    memcpy(b->p, pkt->data, pkt->size);
    return 0;
}

static int bytes_eq(const Bytes *a, const Bytes *b)
{
    return a->p && b->p && a->n == b->n && !memcmp(a->p, b->p, a->n);
}

/** An encoder's log: the last error line, for checking what a failure says. */
typedef struct Log {
    char last[1024];
    char all[4096];     /* every error line, as far as they fit */
} Log;

static void log_cb(void *opaque, int level, const char *msg)
{
    Log *l = (Log *)opaque;
    if (level <= J2KC_LOG_ERROR) {
        size_t n = strlen(l->all);
        snprintf(l->last, sizeof(l->last), "%s", msg);
        snprintf(l->all + n, sizeof(l->all) - n, "%s\n", msg);
    }
}

static int create(J2kcEncoder **enc, const Case *c, const char *backend, Log *log)
{
    J2kcParams *p = j2kc_params_alloc();
    J2kcImageDesc img;
    char buf[512];
    int ret = J2KC_ERR_NOMEM;
    *enc = NULL;
    if (!p)
        return ret;
    if (log) {
        log->last[0] = log->all[0] = 0;
        j2kc_params_set_log(p, log_cb, log, J2KC_LOG_ERROR);
    }
    snprintf(buf, sizeof(buf), "%s", c->params);
    ret = j2kc_params_set(p, "backend", backend);
    for (char *save = NULL, *kv = strtok_r(buf, " ", &save); ret == 0 && kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        *eq = 0;
        ret = j2kc_params_set(p, kv, eq + 1);
    }
    image_desc(c, &img);
    if (ret == 0)
        ret = j2kc_encoder_create(enc, &img, p);
    j2kc_params_free(&p);
    return ret;
}

/** Codes frames[0..n) on one encoder, keeping as many in flight as it takes. */
static int encode_on(J2kcEncoder *enc, Frame *frames, int n, Bytes *out)
{
    int sub = 0, rec = 0, ret;
    while (rec < n) {
        if (sub < n) {
            ret = j2kc_encoder_submit(enc, &frames[sub].f);
            if (ret == 0) {
                sub++;
                continue;
            }
            if (ret != J2KC_ERR_AGAIN)
                return ret;
        }
        J2kcPacket pkt;
        if ((ret = j2kc_encoder_receive(enc, &pkt, 1)) < 0)
            return ret;
        if (bytes_set(&out[rec++], &pkt) < 0)
            return J2KC_ERR_NOMEM;
    }
    return 0;
}

static int encode(const Case *c, const char *backend, Frame *frames, int n, Bytes *out)
{
    J2kcEncoder *enc;
    int ret = create(&enc, c, backend, NULL);
    if (ret == 0)
        ret = encode_on(enc, frames, n, out);
    j2kc_encoder_free(&enc);
    return ret;
}

static size_t dev_free(void)
{
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    return f;
}

static long rss_kib(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (fp && fgets(line, sizeof(line), fp))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (fp)
        fclose(fp);
    return kib;
}

/* device memory the driver may round by: an allocation granule */
#define DEV_SLACK ((size_t)2 << 20)

/* ---- modes ---- */

/* Receives a frame of enc into got and compares it with ref; on a difference or an error the
 * first one of the run is printed (allocation k, frame rec) and counted in *bad: -1. */
static int receive_ref(J2kcEncoder *enc, Bytes *got, const Bytes *ref, int k, int rec, const char *where, int *bad)
{
    J2kcPacket pkt;
    int ret;
    if ((ret = j2kc_encoder_receive(enc, &pkt, 1)) < 0 || bytes_set(got, &pkt) < 0 || !bytes_eq(got, ref)) {
        if (!(*bad)++)
            printf("     allocation %d: frame %d%s: %s\n", k, rec, where, ret < 0 ? j2kc_strerror(ret) : "differs");
        return -1;
    }
    return 0;
}

/* Creation makes the shared tables (device memory only); the preparer thread makes slots 0..
 * (device memory, page-locked memory) while the first frames are coded, and each slot's
 * graphs are captured at its first submit. */
static const Case PIN4 = { "pin4", 256, 200, 3, 12, 0, "bytes=20000 async_depth=4" };

/** One kind of allocation failing in turn (alloc: the device's, pinned: page-locked host
 *  memory). The creation's own allocations fail the creation with err and an error line that
 *  names msg; the other slots' (made on the preparer thread) fail the submits to their slot with
 *  err, and again when retried, while every frame that comes back is the reference's; no
 *  device or host memory is left behind and another encoder keeps working. */
typedef struct Sweep {
    const char *mode;   /* the report lines' prefix */
    int         kind;   /* J2KI_FAULT_* */
    int         err;    /* J2KC_ERR_* expected */
    const char *msg;    /* what the last error line names */
    const char *what;   /* the allocations, in words */
    int         in_create; /* creation makes some of them itself */
} Sweep;

static int sweep(const Sweep *w)
{
    enum { N = 8 };
    Frame fr[N];
    Bytes ref[N] = { { 0 } }, got[N] = { { 0 } };
    J2kcEncoder *other, *enc;
    Log log;
    int ret, n;

    for (int i = 0; i < N; i++)
        frame_make(&fr[i], &PIN4, 300 + i);
    /* the other encoder's slots are all made (its frames went through every slot) before the
     * allocations are counted: its preparer thread would count too */
    if ((ret = encode(&PIN4, "ref", fr, N, ref)) < 0 || (ret = create(&other, &PIN4, "cuda", NULL)) < 0 ||
        (ret = encode_on(other, fr, N, got)) < 0) {
        report(0, "%s: setup: %s", w->mode, j2kc_strerror(ret));
        return 1;
    }
    /* the allocations of a creation and of the slots made while its frames are coded, in a fixed
     * order: the creation's, then slots 1, 2 and 3's on the preparer thread; the first frames
     * also warm up what the driver keeps for the process (module data, the kernels' local
     * memory) */
    j2ki_cuda_fault_arm(w->kind, 0);
    ret = create(&enc, &PIN4, "cuda", NULL);
    if (ret == 0)
        ret = encode_on(enc, fr, N, got);
    n = j2ki_cuda_fault_events(w->kind);
    j2kc_encoder_free(&enc);
    report(ret == 0 && n > 0, "%s: an encoder with 4 frames in flight makes %d %s", w->mode, n, w->what);

    const size_t free0 = dev_free();
    const long rss0 = rss_kib();
    int bad_create = 0, bad_msg = 0, bad_submit = 0, bad_frame = 0, bad_mem = 0, bad_other = 0;
    int nb_create_fail = 0, nb_refused = 0;
    char msg[1024] = "";
    for (int k = 1; k <= n; k++) {
        const size_t before = dev_free();
        j2ki_cuda_fault_arm(w->kind, k);
        ret = create(&enc, &PIN4, "cuda", &log);
        if (ret < 0) {
            /* the creation's own memory: it fails */
            nb_create_fail++;
            if ((ret != w->err || enc) && !bad_create++)
                printf("     allocation %d: creation returned %d (%s)\n", k, ret, j2kc_strerror(ret));
            if (!strstr(log.last, w->msg)) {
                if (!bad_msg++)
                    printf("     allocation %d: last error line \"%s\"\n", k, log.last);
            } else {
                snprintf(msg, sizeof(msg), "%s", log.last);
            }
        } else {
            /* a later slot's memory, made on the preparer thread: frames are coded until the
             * submit to that slot fails with err (and again when retried); every frame that
             * comes back, those in flight included, is the reference's */
            int sub = 0, rec = 0, refused = 0;
            while (rec < N && !refused) {
                ret = sub < N ? j2kc_encoder_submit(enc, &fr[sub].f) : J2KC_ERR_AGAIN;
                if (ret == 0) {
                    sub++;
                    continue;
                }
                if (ret != J2KC_ERR_AGAIN) {
                    int again = j2kc_encoder_submit(enc, &fr[sub].f);
                    refused = 1;
                    if ((ret != w->err || again != w->err) && !bad_submit++)
                        printf("     allocation %d: submit %d returned %d then %d\n", k, sub, ret, again);
                    if (!strstr(log.last, w->msg) && !bad_msg++)
                        printf("     allocation %d: submit %d: last error line \"%s\"\n", k, sub, log.last);
                    break;
                }
                if (receive_ref(enc, &got[rec], &ref[rec], k, rec, "", &bad_frame) < 0)
                    break;
                rec++;
            }
            while (refused && rec < sub && receive_ref(enc, &got[rec], &ref[rec], k, rec, " in flight",
                                                       &bad_frame) == 0)
                rec++;
            nb_refused += refused;
            if (!refused && !bad_submit++)
                printf("     allocation %d: every frame was coded although an allocation failed\n", k);
        }
        j2kc_encoder_free(&enc);
        j2ki_cuda_fault_arm(w->kind, 0);
        if (dev_free() + DEV_SLACK < before && !bad_mem++)
            printf("     allocation %d: %zu bytes of device memory left behind\n", k, before - dev_free());
        if ((ret = encode_on(other, fr, 2, got)) < 0 || !bytes_eq(&got[0], &ref[0]) || !bytes_eq(&got[1], &ref[1]))
            if (!bad_other++)
                printf("     allocation %d: the other encoder's frames differ (%s)\n", k, j2kc_strerror(ret));
    }
    report(!bad_create && (w->in_create ? nb_create_fail > 0 : nb_create_fail == 0), "%s: %d allocations "
           "failing fail the creation (%s), each with %s", w->mode, nb_create_fail,
           w->in_create ? "the shared tables'" : "it makes none", j2kc_strerror(w->err));
    report(!bad_msg && nb_create_fail + nb_refused > 0, "%s: the error names %s (\"%s\")", w->mode, w->msg,
           msg[0] ? msg : log.last);
    report(!bad_submit && nb_refused > 0 && nb_create_fail + nb_refused == n, "%s: the other %d (the "
           "preparer's) refuse the submits to their slot with %s", w->mode, nb_refused, j2kc_strerror(w->err));
    report(!bad_frame, "%s: every frame that came back is the reference's", w->mode);
    report(!bad_mem && dev_free() + DEV_SLACK >= free0, "%s: no device memory left behind (%.1f MiB free "
           "before, %.1f after)", w->mode, free0 / 1048576.0, dev_free() / 1048576.0);
    report(rss_kib() - rss0 < 16384, "%s: host memory %ld -> %ld KiB over %d failed allocations", w->mode, rss0,
           rss_kib(), n);
    report(!bad_other, "%s: an encoder created before kept coding the reference's bytes", w->mode);
    ret = encode(&PIN4, "cuda", fr, N, got);
    int same = ret == 0;
    for (int i = 0; same && i < N; i++)
        same = bytes_eq(&got[i], &ref[i]);
    report(same, "%s: a new encoder afterwards codes the reference's bytes", w->mode);
    j2kc_encoder_free(&other);
    for (int i = 0; i < N; i++) {
        frame_free(&fr[i]);
        free(ref[i].p);
        free(got[i].p);
    }
    return nb_fail != 0;
}

static int mode_alloc(void)
{
    static const Sweep w = { "alloc", J2KI_FAULT_DEV_ALLOC, J2KC_ERR_DEVMEM, "out of device memory",
                             "device allocations", 1 };
    return sweep(&w);
}

static int mode_pinned(void)
{
    static const Sweep w = { "pinned", J2KI_FAULT_HOST_ALLOC, J2KC_ERR_NOMEM, "page-locked host memory",
                             "page-locked allocations", 0 };
    return sweep(&w);
}

static int mode_submit(void)
{
    enum { N = 6 };
    Frame fr[N];
    Bytes ref[N] = { { 0 } }, got[N] = { { 0 } };
    J2kcEncoder *enc;
    J2kcPacket pkt;
    int ret, sub_err = 0, ok_frames = 0;

    for (int i = 0; i < N; i++)
        frame_make(&fr[i], &SMALL, 200 + i);
    if ((ret = encode(&SMALL, "ref", fr, N, ref)) < 0 || (ret = create(&enc, &SMALL, "cuda", NULL)) < 0) {
        report(0, "submit: setup: %s", j2kc_strerror(ret));
        return 1;
    }
    j2ki_cuda_fault_arm(J2KI_FAULT_SUBMIT, 3);
    for (int i = 0; i < N; i++) {
        ret = j2kc_encoder_submit(enc, &fr[i].f);
        if (ret == J2KC_ERR_AGAIN) {
            if ((ret = j2kc_encoder_receive(enc, &pkt, 1)) == 0 && bytes_set(&got[ok_frames], &pkt) == 0 &&
                bytes_eq(&got[ok_frames], &ref[ok_frames]))
                ok_frames++;
            i--;
            continue;
        }
        if (ret < 0) {
            sub_err = i + 1;
            break;
        }
    }
    j2ki_cuda_fault_arm(J2KI_FAULT_SUBMIT, 0);
    report(sub_err == 3 && ret == J2KC_ERR_CUDA, "submit: the injected fault fails submit %d with %s", sub_err,
           j2kc_strerror(ret));
    while (j2kc_encoder_receive(enc, &pkt, 1) == 0)
        if (bytes_set(&got[ok_frames], &pkt) == 0 && bytes_eq(&got[ok_frames], &ref[ok_frames]))
            ok_frames++;
    report(ok_frames == 2, "submit: the %d frames submitted before it came back with the reference's bytes",
           ok_frames);
    ret = j2kc_encoder_submit(enc, &fr[0].f);
    report(ret == J2KC_ERR_BROKEN, "submit: the encoder then answers %s", j2kc_strerror(ret));
    j2kc_encoder_free(&enc);
    ret = encode(&SMALL, "cuda", fr, N, got);
    int same = ret == 0;
    for (int i = 0; i < N; i++)
        same &= bytes_eq(&got[i], &ref[i]);
    report(same, "submit: a new encoder codes %d frames with the reference's bytes", N);
    for (int i = 0; i < N; i++) {
        frame_free(&fr[i]);
        free(ref[i].p);
        free(got[i].p);
    }
    return nb_fail != 0;
}

/* ---- several encoders in several threads ---- */

enum { NB_THREADS = 8, NB_THREAD_FRAMES = 3 };

static const Case MIXED[NB_THREADS] = {
    { "dci4k-a", 4096, 2160, 3, 12, 0, "profile=dci4k fps=24 async_depth=2" },
    { "dci4k-b", 4096, 2160, 3, 12, 0, "profile=dci4k fps=24 async_depth=3" },
    { "dci2k-a", 2048, 1080, 3, 12, 0, "profile=dci2k fps=24 async_depth=2" },
    { "dci2k-b", 2048, 1080, 3, 12, 0, "profile=dci2k fps=48 async_depth=4" },
    { "lossless-422", 1920, 1080, 3, 10, 1, "lossless=1 async_depth=2" },
    { "bytes-64x64", 1920, 1080, 3, 8, 0, "bytes=400000 async_depth=3" },
    { "layers-rpcl", 1280, 720, 3, 12, 0, "bytes=300000 layers=3 order=rpcl bypass=1 async_depth=2" },
    { "quality", 1920, 1080, 3, 12, 0, "quality=45 async_depth=2" },
};

typedef struct Job {
    const Case *c;
    Frame       fr[NB_THREAD_FRAMES];
    Bytes       alone[NB_THREAD_FRAMES], together[NB_THREAD_FRAMES];
    int         ret;
    pthread_barrier_t *start;
} Job;

static void *job_run(void *arg)
{
    Job *j = (Job *)arg;
    pthread_barrier_wait(j->start);
    j->ret = encode(j->c, "cuda", j->fr, NB_THREAD_FRAMES, j->together);
    return NULL;
}

static int mode_threads(void)
{
    static Job jobs[NB_THREADS];
    pthread_t th[NB_THREADS];
    pthread_barrier_t start;
    int ret;

    pthread_barrier_init(&start, NULL, NB_THREADS);
    for (int t = 0; t < NB_THREADS; t++) {
        Job *j = &jobs[t];
        j->c = &MIXED[t];
        j->start = &start;
        for (int i = 0; i < NB_THREAD_FRAMES; i++)
            frame_make(&j->fr[i], j->c, 300 + 10 * t + i);
        if ((ret = encode(j->c, "cuda", j->fr, NB_THREAD_FRAMES, j->alone)) < 0) {
            report(0, "threads: %s alone: %s", j->c->name, j2kc_strerror(ret));
            return 1;
        }
    }
    for (int t = 0; t < NB_THREADS; t++)
        pthread_create(&th[t], NULL, job_run, &jobs[t]);
    for (int t = 0; t < NB_THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NB_THREADS; t++) {
        Job *j = &jobs[t];
        int same = j->ret == 0;
        for (int i = 0; i < NB_THREAD_FRAMES; i++)
            same &= bytes_eq(&j->alone[i], &j->together[i]);
        report(same, "threads: %s, %d frames coded beside 7 other encoders equal its frames coded alone (%s)",
               j->c->name, NB_THREAD_FRAMES, j2kc_strerror(j->ret));
        for (int i = 0; i < NB_THREAD_FRAMES; i++) {
            frame_free(&j->fr[i]);
            free(j->alone[i].p);
            free(j->together[i].p);
        }
    }
    pthread_barrier_destroy(&start);
    return nb_fail != 0;
}

/* ---- the shared-memory limit of kernels shared by encoders ---- */

/** Encoders of different code-block sizes on the shared-memory tier-1 kernel (8 lanes,
 *  J2KC_CUDA_T1_VARIANT=72): 64x64 blocks launch it with 135,168 bytes of dynamic shared
 *  memory, 64x32 blocks with 67,584, both above the 48 KiB default. The limit is the kernel's
 *  on the device (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): set per launch to the
 *  encoder's own size, a 64x32 encoder could lower it between a 64x64 one's set and launch.
 *  Each encoder's frames coded beside the others must equal its frames coded alone. */
static const Case SMEMRACE[4] = {
    { "smem-64x64-a", 1920, 1080, 3, 12, 0, "cblk=64x64 bytes=600000 async_depth=4" },
    { "smem-64x32-a", 1920, 1080, 3, 12, 0, "cblk=64x32 bytes=600000 async_depth=4" },
    { "smem-64x64-b", 1280, 720, 3, 12, 0, "cblk=64x64 bytes=300000 async_depth=3" },
    { "smem-64x32-b", 1280, 720, 3, 12, 0, "cblk=64x32 bytes=300000 async_depth=3" },
};

static int mode_smemrace(void)
{
    enum { NJ = 4, ROUNDS = 4 };
    static Job jobs[NJ];
    pthread_t th[NJ];
    pthread_barrier_t start;
    int ret;

    /* read at each creation (hooks.h): every encoder of this process runs the variant */
    setenv("J2KC_CUDA_T1_VARIANT", "72", 1);
    pthread_barrier_init(&start, NULL, NJ);
    for (int t = 0; t < NJ; t++) {
        Job *j = &jobs[t];
        j->c = &SMEMRACE[t];
        j->start = &start;
        for (int i = 0; i < NB_THREAD_FRAMES; i++)
            frame_make(&j->fr[i], j->c, 500 + 10 * t + i);
        if ((ret = encode(j->c, "cuda", j->fr, NB_THREAD_FRAMES, j->alone)) < 0) {
            report(0, "smemrace: %s alone: %s", j->c->name, j2kc_strerror(ret));
            return 1;
        }
    }
    /* several rounds: the race needs one encoder's attribute set to fall between another's
     * set and launch */
    for (int r = 0; r < ROUNDS; r++) {
        for (int t = 0; t < NJ; t++)
            pthread_create(&th[t], NULL, job_run, &jobs[t]);
        for (int t = 0; t < NJ; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < NJ; t++) {
            Job *j = &jobs[t];
            int same = j->ret == 0;
            for (int i = 0; i < NB_THREAD_FRAMES; i++) {
                same &= bytes_eq(&j->alone[i], &j->together[i]);
                free(j->together[i].p);
                j->together[i].p = NULL;
                j->together[i].n = 0;
            }
            report(same, "smemrace: round %d: %s, %d frames coded beside 3 encoders of other block sizes equal "
                   "its frames coded alone (%s)", r, j->c->name, NB_THREAD_FRAMES, j2kc_strerror(j->ret));
        }
    }
    for (int t = 0; t < NJ; t++)
        for (int i = 0; i < NB_THREAD_FRAMES; i++) {
            frame_free(&jobs[t].fr[i]);
            free(jobs[t].alone[i].p);
        }
    pthread_barrier_destroy(&start);
    unsetenv("J2KC_CUDA_T1_VARIANT");
    return nb_fail != 0;
}

/* ---- the device taken by another process ---- */

/** The other process of devfull: holds all but HOLD_LEFT of the device's free memory, says so
 *  on stdout, and keeps it until its stdin closes. */
#define HOLD_LEFT ((size_t)2 << 30)

static int mode_hold(void)
{
    size_t f = 0, t = 0, chunk = (size_t)1 << 30;
    void *p;
    char c;
    if (cudaMemGetInfo(&f, &t) != cudaSuccess)
        return 1;
    while (f > HOLD_LEFT + ((size_t)16 << 20)) {
        size_t n = f - HOLD_LEFT < chunk ? f - HOLD_LEFT : chunk;
        if (cudaMalloc(&p, n) != cudaSuccess) {
            if (chunk <= ((size_t)16 << 20))
                break;
            chunk /= 2;
        }
        if (cudaMemGetInfo(&f, &t) != cudaSuccess)
            return 1;
    }
    printf("%zu\n", f);
    fflush(stdout);
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}

static int mode_devfull(const char *self)
{
    int up[2], down[2];
    char line[64] = "";
    Frame fr;
    Bytes ref = { 0 }, got = { 0 };
    J2kcEncoder *enc;
    Log log;
    int ret, st = 0;

    frame_make(&fr, &DCI4K, 400);
    if ((ret = encode(&DCI4K, "ref", &fr, 1, &ref)) < 0 || cudaFree(0) != cudaSuccess || pipe(up) < 0 ||
        pipe(down) < 0) {
        report(0, "devfull: setup");
        return 1;
    }
    /* the holder is a new program (fork then exec): a forked copy of a process that uses CUDA
     * may not use it */
    pid_t pid = fork();
    if (pid == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        close(down[1]);
        close(up[0]);
        execl(self, self, "hold", (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    ssize_t n = pid > 0 ? read(up[0], line, sizeof(line) - 1) : -1;
    if (n <= 0) {
        report(0, "devfull: the other process could not take the device");
        return 1;
    }
    /* twice: the first attempt also loads the modules of the kernels it queries, which the
     * process keeps */
    size_t free0 = 0;
    for (int i = 0; i < 2; i++) {
        free0 = dev_free();
        ret = create(&enc, &DCI4K, "cuda", &log);
        report(ret == J2KC_ERR_DEVMEM && !enc && strstr(log.last, "out of device memory"),
               "devfull: a 4K encoder with 8 frames in flight beside a process holding all but %.0f MiB: %s "
               "(\"%s\"; %s)", free0 / 1048576.0, j2kc_strerror(ret), log.last,
               strstr(log.all, "MiB are free") ? "the slots found not to fit before any was made"
                                               : "an allocation failed");
        j2kc_encoder_free(&enc);
    }
    report(dev_free() + DEV_SLACK >= free0, "devfull: no device memory left behind (%.1f -> %.1f MiB free)",
           free0 / 1048576.0, dev_free() / 1048576.0);
    close(down[1]);
    waitpid(pid, &st, 0);
    ret = encode(&DCI4K, "cuda", &fr, 1, &got);
    report(ret == 0 && bytes_eq(&ref, &got), "devfull: once that process has gone, the encoder is created and "
           "codes the reference's bytes (%s)", j2kc_strerror(ret));
    frame_free(&fr);
    free(ref.p);
    free(got.p);
    return nb_fail != 0;
}

/* ---- the application synchronising the device while the slots are made ---- */

/*
 * CUDA forbids synchronising a context (cudaDeviceSynchronize, cuCtxSynchronize) while any of
 * its streams is capturing a graph: the call fails with cudaErrorStreamCaptureUnsupported and the
 * capture may be invalidated. The backend captures each slot's graphs; where it did so on a
 * thread of its own (the slot preparer, after creation had returned) an application that
 * synchronises its device between its calls, the first thing many do after creating anything,
 * met it whenever a sync fell inside one of the preparer's captures. With 16 slots the preparer
 * captures 32 graphs in the fraction of a second after creation, and the application here
 * synchronises in a tight loop over that whole time (SYNC_AFTER_CREATE_MS), so on such a build
 * nearly every round meets it; the small frames make the captures the larger part of the
 * preparer's work. The legacy-stream thread runs beside everything, as a producer of device
 * frames (FFmpeg's CUDA uploads go to stream 0) does; the slots' streams are non-blocking, so its
 * work never joins a capture.
 */
enum { SYNC_ROUNDS = 6, SYNC_AFTER_CREATE_MS = 600, SYNC_FRAMES = 2 };

static const Case SYNC4K = { "sync4k", 4096, 2160, 3, 12, 0, "profile=dci4k fps=24 async_depth=16" };
static const Case SYNCSMALL = { "syncsmall", 256, 200, 3, 12, 0, "bytes=20000 async_depth=16" };

static __global__ void legacy_work(unsigned *counter)
{
    atomicAdd(counter, 1u);
}

typedef struct Legacy {
    unsigned   *d_counter;
    volatile int stop;
    long        nb_launch, nb_err;
    cudaError_t first_err;
} Legacy;

/** The other thread: work on the legacy default stream (stream 0), synchronised, in a loop. */
static void *legacy_loop(void *arg)
{
    Legacy *l = (Legacy *)arg;
    while (!l->stop) {
        legacy_work<<<1, 32, 0, 0>>>(l->d_counter);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(0);
        l->nb_launch++;
        if (e != cudaSuccess && !l->nb_err++)
            l->first_err = e;
    }
    return NULL;
}

/** The application's own device work between its calls: a legacy-stream launch, then a
 *  synchronisation of the whole device; failures counted in *nb_err, the first kept. */
static void app_sync(unsigned *d_counter, int *nb_err, cudaError_t *first)
{
    cudaError_t e;
    legacy_work<<<1, 32, 0, 0>>>(d_counter);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (!(*nb_err)++)
            *first = e;
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int mode_syncrace(void)
{
    const Case *cases[2] = { &SYNCSMALL, &SYNC4K };
    Frame fr[2][SYNC_FRAMES];
    Bytes ref[2][SYNC_FRAMES] = { { { 0 } } }, got = { 0 };
    Legacy leg;
    pthread_t th;
    int ret, nb_sync = 0, nb_sync_err = 0, nb_frames = 0, nb_frame_err = 0, nb_wrong = 0;
    cudaError_t first_sync = cudaSuccess;
    int first_frame = 0;

    memset(&leg, 0, sizeof(leg));
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < SYNC_FRAMES; i++) {
            /* fixed seeds, printed: frame i of case c is frame_make(seed 700 + 10 c + i) */
            frame_make(&fr[c][i], cases[c], 700 + 10 * c + i);
        }
    printf("# syncrace: frame seeds 700-%d, %d rounds, %d ms of syncs after each creation\n",
           700 + 10 + SYNC_FRAMES - 1, SYNC_ROUNDS, SYNC_AFTER_CREATE_MS);
    for (int c = 0; c < 2; c++)
        if ((ret = encode(cases[c], "ref", fr[c], SYNC_FRAMES, ref[c])) < 0) {
            report(0, "syncrace: reference encode of %s: %s", cases[c]->name, j2kc_strerror(ret));
            return 1;
        }
    if (cudaMalloc((void **)&leg.d_counter, sizeof(unsigned)) != cudaSuccess ||
        pthread_create(&th, NULL, legacy_loop, &leg)) {
        report(0, "syncrace: setup");
        return 1;
    }
    for (int r = 0; r < SYNC_ROUNDS; r++) {
        const int c = r % 2;       /* small, 4K, small, ... */
        const Case *cs = cases[c];
        J2kcEncoder *enc;
        J2kcPacket pkt;
        Log log;
        int sub = 0, rec = 0;
        app_sync(leg.d_counter, &nb_sync_err, &first_sync);
        if ((ret = create(&enc, cs, "cuda", &log)) < 0) {
            if (!nb_frame_err++)
                first_frame = ret;
            printf("     round %d (%s): creation: %s (\"%s\")\n", r, cs->name, j2kc_strerror(ret), log.last);
            continue;
        }
        /* right after creation: the application's own device work, over and over */
        for (double t0 = now_ms(); now_ms() - t0 < SYNC_AFTER_CREATE_MS; nb_sync++)
            app_sync(leg.d_counter, &nb_sync_err, &first_sync);
        /* every slot's first frame and more (twice the frames in flight), a sync between calls */
        const int n = 32;
        while (rec < n) {
            ret = sub < n ? j2kc_encoder_submit(enc, &fr[c][sub % SYNC_FRAMES].f) : J2KC_ERR_AGAIN;
            app_sync(leg.d_counter, &nb_sync_err, &first_sync);
            nb_sync++;
            if (ret == 0) {
                sub++;
                continue;
            }
            if (ret != J2KC_ERR_AGAIN) {
                if (!nb_frame_err++)
                    first_frame = ret;
                printf("     round %d (%s): submit %d: %s (\"%s\")\n", r, cs->name, sub, j2kc_strerror(ret),
                       log.last);
                break;
            }
            ret = j2kc_encoder_receive(enc, &pkt, 1);
            app_sync(leg.d_counter, &nb_sync_err, &first_sync);
            nb_sync++;
            if (ret < 0) {
                if (!nb_frame_err++)
                    first_frame = ret;
                printf("     round %d (%s): frame %d: %s (\"%s\")\n", r, cs->name, rec, j2kc_strerror(ret),
                       log.last);
            } else if (bytes_set(&got, &pkt) < 0 || !bytes_eq(&got, &ref[c][rec % SYNC_FRAMES])) {
                if (!nb_wrong++)
                    printf("     round %d (%s): frame %d differs from the reference's\n", r, cs->name, rec);
            } else {
                nb_frames++;
            }
            rec++;
        }
        while (rec < sub && j2kc_encoder_receive(enc, &pkt, 1) != J2KC_ERR_EOF)
            rec++;
        j2kc_encoder_free(&enc);
    }
    leg.stop = 1;
    pthread_join(th, NULL);
    report(nb_sync_err == 0, "syncrace: %d device synchronisations of the application between its calls, %d "
           "failed (first: %s)", nb_sync, nb_sync_err, cudaGetErrorName(first_sync));
    report(leg.nb_err == 0 && leg.nb_launch > 0, "syncrace: %ld synchronised legacy-stream launches on another "
           "thread, %ld failed (first: %s)", leg.nb_launch, leg.nb_err, cudaGetErrorName(leg.first_err));
    report(nb_frame_err == 0 && nb_wrong == 0 && nb_frames == SYNC_ROUNDS * 32, "syncrace: %d of %d frames "
           "(4K and small, 16 in flight) coded with the reference's bytes; %d errors (first: %s), %d wrong",
           nb_frames, SYNC_ROUNDS * 32, nb_frame_err, j2kc_strerror(first_frame), nb_wrong);
    cudaFree(leg.d_counter);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < SYNC_FRAMES; i++) {
            frame_free(&fr[c][i]);
            free(ref[c][i].p);
        }
    free(got.p);
    return nb_fail != 0;
}

/* ---- a sticky error ---- */

static int mode_trap(void)
{
    enum { N = 4 };
    Frame fr[N];
    Bytes ref[N] = { { 0 } }, got = { 0 };
    J2kcEncoder *enc;
    J2kcPacket pkt;
    Log log;
    int ret, nb_err = 0, nb_wrong = 0, nb_sub = 0;

    alarm(300);   /* a hang is a failure: SIGALRM ends the process */
    for (int i = 0; i < N; i++)
        frame_make(&fr[i], &SMALL, 500 + i);
    if ((ret = encode(&SMALL, "ref", fr, N, ref)) < 0 || (ret = create(&enc, &SMALL, "cuda", &log)) < 0) {
        report(0, "trap: setup: %s", j2kc_strerror(ret));
        return 1;
    }
    j2ki_cuda_fault_arm(J2KI_FAULT_TRAP, 2);
    int received = 0;
    for (int i = 0; i < N; i++) {
        ret = j2kc_encoder_submit(enc, &fr[i].f);
        if (ret == J2KC_ERR_AGAIN) {
            ret = j2kc_encoder_receive(enc, &pkt, 1);
            if (ret < 0)
                nb_err++;
            else if (bytes_set(&got, &pkt) < 0 || !bytes_eq(&got, &ref[received]))
                nb_wrong++;
            received++;
            i--;
            continue;
        }
        if (ret < 0)
            break;
        nb_sub++;
    }
    j2ki_cuda_fault_arm(J2KI_FAULT_TRAP, 0);
    while (received < nb_sub) {
        ret = j2kc_encoder_receive(enc, &pkt, 1);
        if (ret < 0)
            nb_err++;
        else if (bytes_set(&got, &pkt) < 0 || !bytes_eq(&got, &ref[received]))
            nb_wrong++;
        received++;
    }
    report(nb_err > 0 && !nb_wrong, "trap: %d of %d frames submitted reported an error, none came back wrong "
           "(last error \"%s\")", nb_err, nb_sub, log.last);
    ret = j2kc_encoder_submit(enc, &fr[0].f);
    report(ret == J2KC_ERR_BROKEN || ret == J2KC_ERR_CUDA, "trap: the encoder then answers %s",
           j2kc_strerror(ret));
    j2kc_encoder_free(&enc);
    report(1, "trap: the encoder was freed");
    ret = create(&enc, &SMALL, "cuda", &log);
    if (ret == 0) {
        ret = encode_on(enc, fr, 1, &got);
        report(ret == 0 && bytes_eq(&got, &ref[0]), "trap: a new encoder works and codes the reference's bytes");
    } else {
        report(log.last[0] != 0, "trap: a new encoder in the same process fails as the driver refuses the "
               "context: %s (\"%s\")", j2kc_strerror(ret), log.last);
    }
    j2kc_encoder_free(&enc);
    for (int i = 0; i < N; i++) {
        frame_free(&fr[i]);
        free(ref[i].p);
    }
    free(got.p);
    return nb_fail != 0;
}

/** The embedded code's load failing (J2KI_FAULT_CODE_LOAD: from the second image on out of
 *  device memory, the first one loaded; the context thread's load and the creation's own both
 *  fail): the creation fails with J2KC_ERR_DEVMEM, naming the load;
 *  the next creation loads the code again (every image asked for) and codes the reference's
 *  bytes; a third loads nothing (a success stays). Runs first in its process: no CUDA encoder
 *  has loaded the code before. */
static int mode_codeload(void)
{
    enum { N = 3 };
    Frame fr[N];
    Bytes ref[N] = { { 0 } }, got[N] = { { 0 } };
    J2kcEncoder *enc = NULL;
    Log log;
    int ret, images, again, same = 1;

    for (int i = 0; i < N; i++)
        frame_make(&fr[i], &SMALL, 400 + i);
    if ((ret = encode(&SMALL, "ref", fr, N, ref)) < 0) {
        report(0, "codeload: setup: %s", j2kc_strerror(ret));
        return 1;
    }
    j2ki_cuda_fault_arm(J2KI_FAULT_CODE_LOAD, 2);
    ret = create(&enc, &SMALL, "cuda", &log);
    report(ret == J2KC_ERR_DEVMEM && strstr(log.all, "cannot load the library's GPU code") != NULL &&
           strstr(log.all, "frame slot") == NULL,
           "codeload: the failed load fails the creation with %s (\"%s\")", j2kc_strerror(ret), log.last);
    j2kc_encoder_free(&enc);
    j2ki_cuda_fault_arm(J2KI_FAULT_CODE_LOAD, 0);
    ret = create(&enc, &SMALL, "cuda", &log);
    images = j2ki_cuda_fault_events(J2KI_FAULT_CODE_LOAD);
    if (ret == 0)
        ret = encode_on(enc, fr, N, got);
    for (int i = 0; ret == 0 && i < N; i++)
        same &= bytes_eq(&got[i], &ref[i]);
    report(ret == 0 && images >= 2 && same, "codeload: the next creation loads the %d images again and codes the "
           "reference's bytes (%s)", images, ret < 0 ? j2kc_strerror(ret) : same ? "same" : "differ");
    j2kc_encoder_free(&enc);
    ret = create(&enc, &SMALL, "cuda", NULL);
    again = j2ki_cuda_fault_events(J2KI_FAULT_CODE_LOAD) - images;
    report(ret == 0 && again == 0, "codeload: a third creation loads nothing (%d images asked for, %s)", again,
           j2kc_strerror(ret));
    j2kc_encoder_free(&enc);
    for (int i = 0; i < N; i++) {
        frame_free(&fr[i]);
        free(ref[i].p);
        free(got[i].p);
    }
    return nb_fail != 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("skip cuda_faults: no CUDA device\n");
        return 77;
    }
    if (!strcmp(mode, "alloc"))
        return mode_alloc();
    if (!strcmp(mode, "pinned"))
        return mode_pinned();
    if (!strcmp(mode, "submit"))
        return mode_submit();
    if (!strcmp(mode, "threads"))
        return mode_threads();
    if (!strcmp(mode, "devfull"))
        return mode_devfull(argv[0]);
    if (!strcmp(mode, "hold"))
        return mode_hold();
    if (!strcmp(mode, "trap"))
        return mode_trap();
    if (!strcmp(mode, "syncrace"))
        return mode_syncrace();
    if (!strcmp(mode, "codeload"))
        return mode_codeload();
    if (!strcmp(mode, "smemrace"))
        return mode_smemrace();
    fprintf(stderr, "usage: cuda_faults alloc|pinned|submit|threads|devfull|trap|syncrace|codeload|smemrace\n");
    return 2;
}
