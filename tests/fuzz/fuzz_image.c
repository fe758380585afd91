/*
 * Fuzz target: the image readers of tools/imageio.c (PNM, PGX single and multi-component,
 * raw frames described by "WxH:FMT"). The readers take file names, so each input is written
 * to files in a private scratch directory first. The first byte chooses the reader:
 *   0: one file, PNM or PGX by its magic;
 *   1: PGX components img_0.pgx, img_1.pgx... (the parts of the input split at "#next#");
 *   2: raw: the text up to the first newline is the "WxH:FMT" spec, the rest the frame.
 * A successful read must give a sane image (1..4 components, depth 1..16, every sample within
 * its depth), and that image written back (PGX; PNM when it can hold it; raw in the same
 * format) must read back identical. The range check is the known defect
 * "imageio_out_of_range" (tests/fuzz/known-defects.txt); J2KC_FUZZ_SKIP_KNOWN=1 leaves it
 * out for long campaigns.
 */
#define _GNU_SOURCE  /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imageio.h"

#define SEPARATOR "#next#"
#define DIR_PREFIX "j2kc-fuzz-image-"   /* + the process id */
#define MAX_SPEC  64

static char dir[256];
static int skip_known;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void remove_dir(void);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_image: %s\n", what);
    remove_dir();
    abort();
}

/* Removes the scratch files of directory d. */
static void cleanup_in(const char *d)
{
    static const char *names[] = { "in.img", "img_0.pgx", "img_1.pgx", "img_2.pgx", "img_3.pgx",
                                   "in.raw", "rt_0.pgx", "rt_1.pgx", "rt_2.pgx", "rt_3.pgx",
                                   "rt.pnm", "rt.raw" };
    char p[1024];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", d, names[i]);
        unlink(p);
    }
}

static void cleanup(void)
{
    cleanup_in(dir);
}

static void remove_dir(void)
{
    cleanup();
    rmdir(dir);
}

/* A crash (a sanitizer report, a signal) ends the process without atexit handlers: the next
 * run removes the directories of processes that no longer exist. */
static void remove_stale(const char *base)
{
    DIR *dp = opendir(base);
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        long pid;
        char *end;
        if (strncmp(e->d_name, DIR_PREFIX, strlen(DIR_PREFIX)))
            continue;
        pid = strtol(e->d_name + strlen(DIR_PREFIX), &end, 10);
        if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", base, e->d_name);
        cleanup_in(p);
        rmdir(p);
    }
    if (dp)
        closedir(dp);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *s = getenv("J2KC_FUZZ_SKIP_KNOWN");
    skip_known = s && *s == '1';
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    if (!base)
        base = "/tmp";
    remove_stale(base);
    snprintf(dir, sizeof(dir), "%s/" DIR_PREFIX "%ld", base, (long)getpid());
    if (mkdir(dir, 0700) && errno != EEXIST)
        fail("cannot create a scratch directory");
    atexit(remove_dir);
    return 0;
}

static void write_part(const char *name, const uint8_t *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f))
        fail("cannot write the scratch file");
}

static void check_sane(const Image *img)
{
    const J2kcImageDesc *d = &img->desc;
    if (d->nb_comps < 1 || d->nb_comps > J2KC_MAX_COMPS || !d->width || !d->height)
        fail("image read with no components or an empty size");
    for (int c = 0; c < d->nb_comps; c++) {
        if (d->depth[c] < 1 || d->depth[c] > 16 || d->dx[c] < 1 || d->dy[c] < 1)
            fail("component with a depth outside 1..16 or no subsampling factor");
        if (skip_known)
            continue;
        int32_t lo = d->is_signed[c] ? -(1 << (d->depth[c] - 1)) : 0;
        int32_t hi = d->is_signed[c] ? (1 << (d->depth[c] - 1)) - 1 : (1 << d->depth[c]) - 1;
        for (uint32_t y = 0; y < img->h[c]; y++)
            for (uint32_t x = 0; x < img->w[c]; x++) {
                int32_t v = img_get(img, c, x, y);
                if (v < lo || v > hi) {
                    fprintf(stderr, "fuzz_image: component %d (%d-bit %s) sample (%u,%u) = %d\n", c,
                            d->depth[c], d->is_signed[c] ? "signed" : "unsigned", x, y, v);
                    fail("sample outside the range of its depth");
                }
            }
    }
}

static void check_same(const Image *a, const Image *b, const char *what)
{
    if (a->desc.nb_comps != b->desc.nb_comps)
        fail(what);
    for (int c = 0; c < a->desc.nb_comps; c++) {
        if (a->w[c] != b->w[c] || a->h[c] != b->h[c] || a->desc.depth[c] != b->desc.depth[c] ||
            a->desc.is_signed[c] != b->desc.is_signed[c])
            fail(what);
        for (uint32_t y = 0; y < a->h[c]; y++)
            for (uint32_t x = 0; x < a->w[c]; x++)
                if (img_get(a, c, x, y) != img_get(b, c, x, y))
                    fail(what);
    }
}

/* Writes img with the writers, reads it back and compares. */
static void round_trip(const Image *img, const RawFormat *rf)
{
    char path[512], err[512];
    Image back;
    const J2kcImageDesc *d = &img->desc;
    int plain = 1;
    for (int c = 0; c < d->nb_comps; c++)
        plain &= d->dx[c] == 1 && d->dy[c] == 1;
    if (plain) {
        snprintf(path, sizeof(path), "%s/rt_%%d.pgx", dir);
        if (img_write_pgx(path, img, err, sizeof(err)))
            fail("PGX writer refused an image the readers accepted");
        snprintf(path, sizeof(path), "%s/rt_0.pgx", dir);
        if (img_read(path, NULL, &back, err, sizeof(err)))
            fail("PGX written by img_write_pgx does not read back");
        check_same(img, &back, "PGX round trip changed the image");
        img_free(&back);
    }
    snprintf(path, sizeof(path), "%s/rt.pnm", dir);
    if (plain && img_write_pnm(path, img, err, sizeof(err)) == 0) {
        if (img_read(path, NULL, &back, err, sizeof(err)))
            fail("PNM written by img_write_pnm does not read back");
        check_same(img, &back, "PNM round trip changed the image");
        img_free(&back);
    }
    if (rf) {
        snprintf(path, sizeof(path), "%s/rt.raw", dir);
        if (img_write_raw(path, img, rf, err, sizeof(err)))
            fail("raw writer refused an image the raw reader accepted");
        if (img_read(path, rf, &back, err, sizeof(err)))
            fail("raw frame written by img_write_raw does not read back");
        check_same(img, &back, "raw round trip changed the image");
        img_free(&back);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[512], err[512], spec[MAX_SPEC + 1];
    RawFormat rf, *prf = NULL;
    Image img;
    if (size < 1)
        return 0;
    int mode = data[0] % 3;
    data++;
    size--;
    cleanup();
    if (mode == 0) {
        write_part("in.img", data, size);
        snprintf(path, sizeof(path), "%s/in.img", dir);
    } else if (mode == 1) {
        int c = 0;
        while (c < J2KC_MAX_COMPS) {
            const uint8_t *sep = memmem(data, size, SEPARATOR, strlen(SEPARATOR));
            size_t n = sep ? (size_t)(sep - data) : size;
            char name[32];
            snprintf(name, sizeof(name), "img_%d.pgx", c++);
            write_part(name, data, n);
            if (!sep)
                break;
            data += n + strlen(SEPARATOR);
            size -= n + strlen(SEPARATOR);
        }
        snprintf(path, sizeof(path), "%s/img_0.pgx", dir);
    } else {
        const uint8_t *nl = memchr(data, '\n', size < MAX_SPEC ? size : MAX_SPEC);
        if (!nl)
            return 0;
        size_t n = (size_t)(nl - data);
        memcpy(spec, data, n);
        spec[n] = 0;
        if (strlen(spec) != n || img_parse_raw(spec, &rf, err, sizeof(err)))
            return 0;
        prf = &rf;
        write_part("in.raw", nl + 1, size - n - 1);
        snprintf(path, sizeof(path), "%s/in.raw", dir);
    }
    err[0] = 0;
    if (img_read(path, prf, &img, err, sizeof(err)) == 0) {
        check_sane(&img);
        round_trip(&img, prf);
        img_free(&img);
    } else if (!err[0]) {
        fail("reader failed without a reason");
    }
    return 0;
}
