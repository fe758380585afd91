/*
 * Encoder life cycles: params alloc, create, two frames through the submit/receive ring, free,
 * over and over, with a rotation of configurations (lossy under a byte budget, lossless with
 * tiles, 4:2:0 with layers, SOP/EPH/PLT/TLM and JP2, the DCI 2K profile). After a warm-up the
 * process's resident memory (VmRSS) and, when the encoders run on the CUDA backend, the GPU's
 * free memory (cuMemGetInfo) must stay flat: a leak of a few hundred bytes per cycle shows
 * over the long variant's 1,000 cycles, a few KiB over the short one's 100. Where glibc is
 * the allocator, the bytes it has handed out and not had back (mallinfo2: uordblks + hblkhd)
 * are compared too: they show a leak exactly, where resident memory can hide one in the holes
 * the previous cycles left in the heap.
 *   J2KC_TEST_LONG=1: 1,000 cycles (make check-long); J2KC_LIFECYCLE_CYCLES=N overrides;
 *   J2KC_TEST_BACKEND=auto|ref|cuda (default auto: the CUDA backend where a GPU is).
 * Under AddressSanitizer the RSS check is left out (its quarantine holds freed memory on
 * purpose); LeakSanitizer checks every allocation instead, over fewer cycles.
 */
#include <string.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define HAVE_MALLINFO2 1
#else
#define HAVE_MALLINFO2 0
#endif

#include "j2kcuda.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define CYCLES_SHORT    100
#define CYCLES_LONG     1000
#define CYCLES_ASAN     20
#define WARMUP_SHARE    10          /* the first cycles / 10 are warm-up */
#define RSS_TOLERANCE   (512 << 10) /* bytes of VmRSS growth allowed after warm-up */
#define HEAP_TOLERANCE  (16 << 10)  /* bytes of malloc'ed-and-kept growth allowed after warm-up */
#define GPU_TOLERANCE   (4 << 20)   /* bytes of free GPU memory lost after warm-up (2 MiB pages) */

#ifdef J2KC_HAVE_CUDA
#include "cuda/cu_primary.h"

/* Free and total memory of GPU 0 through the library's driver table (the library links no CUDA
 * library; cu_driver.h), in its primary context: the one the encoders of the cycles share, which
 * the library keeps for the life of the process (cu_primary.h). */
static void gpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    CUcontext ctx, prev;
    *free_bytes = *total_bytes = 0;
    if (j2ki_cu_load(NULL, 0) < 0 || j2ki_cu_primary(0, &ctx) != CUDA_SUCCESS)
        return;
    if (J2KI_CUFN(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS)
        return;
    J2KI_CUFN(cuMemGetInfo)(free_bytes, total_bytes);
    J2KI_CUFN(cuCtxPopCurrent)(&prev);
}
#endif

typedef struct Config {
    const char *name;
    int nb_comps, depth, log2_sub;  /* log2_sub: 4:2:0 chroma */
    uint32_t w, h;
    const char *kv[16];
} Config;

static const Config configs[] = {
    { "lossy-budget", 3, 12, 0, 256, 128,
      { "bytes", "20000", "order", "cprl", "prec", "128x128,256x256", "cblk", "32x32", NULL } },
    { "lossless-tiles", 1, 8, 0, 200, 150, { "lossless", "1", "tiles", "64x64", "tile_parts", "R", NULL } },
    { "420-layers-jp2", 3, 10, 1, 176, 144,
      { "layers", "3", "layer_bytes", "2000,5000,9000", "sop", "1", "eph", "1", "plt", "1", "tlm", "1",
        "format", "jp2", NULL } },
    { "dci2k", 3, 12, 0, 256, 128, { "profile", "dci2k", "fps", "24", NULL } },
};

static long vm_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* Bytes malloc has handed out and not had back (-1: unknown). */
static long heap_in_use(void)
{
#if HAVE_MALLINFO2
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
#else
    return -1;
#endif
}

static void quiet_log(void *opaque, int level, const char *msg)
{
    (void)opaque;
    if (level <= J2KC_LOG_ERROR)
        fprintf(stderr, "log: %s\n", msg);
}

static uint16_t planes[3][256 * 150];

/* One life cycle; returns 1 when the encoder ran on the CUDA backend. */
static int cycle(const Config *c, const char *backend, int n)
{
    J2kcParams *p = j2kc_params_alloc();
    J2kcEncoder *enc = NULL;
    J2kcImageDesc d;
    J2kcFrame f;
    int cuda = 0;
    CHECK(p != NULL, "params alloc");
    if (!p)
        return 0;
    j2kc_params_set_log(p, quiet_log, NULL, J2KC_LOG_ERROR);
    CHECK(j2kc_params_set(p, "backend", backend) == 0, "backend=%s", backend);
    for (int i = 0; c->kv[i]; i += 2)
        CHECK(j2kc_params_set(p, c->kv[i], c->kv[i + 1]) == 0, "%s: %s=%s", c->name, c->kv[i], c->kv[i + 1]);
    memset(&d, 0, sizeof(d));
    memset(&f, 0, sizeof(f));
    d.nb_comps = c->nb_comps;
    d.width = c->w;
    d.height = c->h;
    for (int k = 0; k < c->nb_comps; k++) {
        int sub = k ? c->log2_sub : 0;
        d.depth[k] = c->depth;
        d.dx[k] = d.dy[k] = 1 << sub;
        f.data[k] = planes[k];
        f.stride[k] = (ptrdiff_t)(((c->w + (1u << sub) - 1) >> sub) * (c->depth > 8 ? 2 : 1));
        f.step[k] = 1;
    }
    int r = j2kc_encoder_create(&enc, &d, p);
    CHECK(r == 0, "%s: create: %s", c->name, j2kc_strerror(r));
    if (!r) {
        cuda = !strcmp(j2kc_encoder_backend(enc), "cuda");
        for (int i = 0; i < 2; i++) {
            f.tag = (uint64_t)n * 2 + (uint64_t)i;
            r = j2kc_encoder_submit(enc, &f);
            CHECK(r == 0, "%s: submit: %s", c->name, j2kc_strerror(r));
        }
        for (int i = 0; i < 2; i++) {
            J2kcPacket pkt;
            r = j2kc_encoder_receive(enc, &pkt, 1);
            CHECK(r == 0 && pkt.size > 0 && pkt.tag == (uint64_t)n * 2 + (uint64_t)i, "%s: receive: %s",
                  c->name, j2kc_strerror(r));
        }
    }
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
    CHECK(enc == NULL && p == NULL, "free sets the pointers to NULL");
    return cuda;
}

int main(void)
{
    const char *e = getenv("J2KC_LIFECYCLE_CYCLES");
    const char *l = getenv("J2KC_TEST_LONG");
    const char *backend = getenv("J2KC_TEST_BACKEND");
    int cycles = e ? atoi(e) : UNDER_ASAN ? CYCLES_ASAN : (l && *l == '1') ? CYCLES_LONG : CYCLES_SHORT;
    int warm = cycles / WARMUP_SHARE > 4 ? cycles / WARMUP_SHARE : 4;
    if (!backend)
        backend = "auto";
    if (cycles < 2 * warm)
        cycles = 2 * warm;
    test_seed("lifecycle", 28);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof(planes[k]) / sizeof(planes[k][0]); i++)
            planes[k][i] = (uint16_t)(test_rand() & 0x3FF);   /* within 10 bits: fits 8..12 */
    for (size_t i = 0; i < sizeof(planes[0]) / sizeof(planes[0][0]); i++)
        ((uint8_t *)planes[1])[i] &= 0xFF;                     /* (8-bit use reads bytes) */

    /* Resident memory moves within a cycle's pattern (glibc returns big blocks to the system,
     * small ones stay in its heap), so windows are compared: the highest VmRSS of the cycles
     * right after the warm-up against the highest of the last ones, both spanning whole
     * rotations of the configurations. */
    long rss_first = 0, rss_last = 0, heap_warm = 0, heap_end;
    size_t gpu_warm = 0, gpu_end = 0, gpu_total = 0;
    int on_cuda = 0;
    const size_t nconf = sizeof(configs) / sizeof(configs[0]);
    printf("# lifecycle: %d cycles (warm-up %d), backend %s, configurations:", cycles, warm, backend);
    for (size_t i = 0; i < nconf; i++)
        printf(" %s", configs[i].name);
    printf("\n");
    for (int n = 0; n < cycles; n++) {
        on_cuda |= cycle(&configs[(size_t)n % nconf], backend, n);
        long rss = vm_rss();
#ifdef J2KC_HAVE_CUDA
        if (on_cuda && n == warm - 1)
            gpu_mem_info(&gpu_warm, &gpu_total);
#endif
        if (n == warm - 1)
            heap_warm = heap_in_use();
        if (n >= warm && n < 2 * warm && rss > rss_first)
            rss_first = rss;
        if (n >= cycles - warm && rss > rss_last)
            rss_last = rss;
        if ((n + 1) % (cycles / 10 > 0 ? cycles / 10 : 1) == 0)
            printf("# cycle %d: VmRSS %ld KiB\n", n + 1, rss / 1024);
    }
#ifdef J2KC_HAVE_CUDA
    if (on_cuda)
        gpu_mem_info(&gpu_end, &gpu_total);
#endif
    printf("# VmRSS highest in cycles %d..%d: %ld KiB, in the last %d: %ld KiB (growth %+ld KiB, tolerance %d KiB)\n",
           warm + 1, 2 * warm, rss_first / 1024, warm, rss_last / 1024, (rss_last - rss_first) / 1024,
           RSS_TOLERANCE >> 10);
    heap_end = heap_in_use();
    if (heap_end >= 0 && !UNDER_ASAN) {
        printf("# malloc in use after warm-up %ld B, at the end %ld B (growth %+ld B, tolerance %d B)\n",
               heap_warm, heap_end, heap_end - heap_warm, HEAP_TOLERANCE);
        CHECK(heap_end - heap_warm <= HEAP_TOLERANCE, "malloc in use grew by %ld bytes after %d warm-up cycles",
              heap_end - heap_warm, warm);
    }
    if (UNDER_ASAN)
        printf("# AddressSanitizer build: RSS not judged (LeakSanitizer checks every allocation at exit)\n");
    else
        CHECK(rss_last - rss_first <= RSS_TOLERANCE, "VmRSS grew by %ld KiB after %d warm-up cycles",
              (rss_last - rss_first) / 1024, warm);
    if (on_cuda) {
        printf("# GPU free memory after warm-up %zu MiB, end %zu MiB of %zu MiB (lost %+ld KiB, tolerance %d KiB)\n",
               gpu_warm >> 20, gpu_end >> 20, gpu_total >> 20, ((long)gpu_warm - (long)gpu_end) / 1024,
               GPU_TOLERANCE >> 10);
        CHECK(gpu_end + GPU_TOLERANCE >= gpu_warm, "GPU free memory fell by %ld KiB after warm-up",
              ((long)gpu_warm - (long)gpu_end) / 1024);
    } else {
        printf("# encoders ran on the reference backend: no GPU memory to watch\n");
    }
    return test_done("lifecycle");
}
