/*
 * j2kc-check: judges JPEG 2000 codestreams against the DCI, IMF and broadcast profile rules
 * of doc profiles.md (DCI: ISO 15444-1 Amd1 + SMPTE 429-2 / RDD 52; IMF: Amd8 / ST 2067-21;
 * broadcast: Amd3; IMF HT: ST 2067-21:2023 Annex I with --profile imf_ht|imf_ht_r) and the generic Part-1 syntax (through csparse, which knows nothing of
 * the encoder). Prints one line per violation: "FILE: RULE: explanation with the values".
 *
 *   j2kc-check FILE... [--fps N[/D]] [--profile NAME] [-v] [-q]
 *
 * Exit status: 0 clean, 1 a violation in some file, 2 usage or I/O error.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profcheck.h"

static int check_file(Checker *k, const char *path, int forced)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "j2kc-check: %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? cap * 2 : 1 << 20;
            uint8_t *nbuf = realloc(buf, cap);
            if (!nbuf) {
                free(buf);
                fclose(f);
                fprintf(stderr, "j2kc-check: %s: out of memory\n", path);
                return -1;
            }
            buf = nbuf;
        }
        size_t n = fread(buf + size, 1, cap - size, f);
        size += n;
        if (!n)
            break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        fprintf(stderr, "j2kc-check: %s: read error\n", path);
        return -1;
    }
    /* Exactly the file's bytes: a parser read past its end then lands outside the allocation,
     * where AddressSanitizer sees it, instead of in the unused rest of the read buffer. */
    uint8_t *exact = realloc(buf, size ? size : 1);
    if (exact)
        buf = exact;
    k->file = path;
    int r = pc_check(k, buf, size, forced);
    free(buf);
    return r;
}


/* Largest frame rate --fps accepts: far above any real one, and small enough that every
 * rate computed from it (num * 1000 for decimals, bytes per frame) stays in range. */
#define MAX_FPS 1000000

/* --fps N, N/D or a decimal (23.976: kept to 1/1000 as num/1000). */
static int parse_fps(const char *s, int *num, int *den)
{
    char *end;
    long n = strtol(s, &end, 10), d = 1;
    if (end == s || n < 0 || n > MAX_FPS)
        return -1;
    if (*end == '/') {
        const char *s2 = end + 1;
        d = strtol(s2, &end, 10);
        if (end == s2 || d <= 0 || d > MAX_FPS)
            return -1;
    } else if (*end == '.') {
        double v = strtod(s, &end);
        /* the bound comes before the conversion: (int) of an out-of-range double is UB */
        if (*end || !(v > 0 && v <= MAX_FPS))
            return -1;
        long milli = lround(v * 1000);
        if (milli < 1)
            return -1;
        *num = (int)milli;
        *den = 1000;
        return 0;
    }
    if (*end || n == 0)
        return -1;
    *num = (int)n;
    *den = (int)d;
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: j2kc-check FILE... [--fps N[/D]] [--profile NAME] [-v] [-q]\n"
            "  checks the Part-1 syntax and the rules of the profile Rsiz declares (or NAME:\n"
            "  none dci2k dci4k imf2k imf4k imf8k imf2k_r imf4k_r imf8k_r broadcast\n"
            "  broadcast_multi broadcast_multi_r imf_ht imf_ht_r; the IMF HT profiles, Rsiz 0x4000,\n"
            "  are checked only when named). --fps enables the frame-rate dependent limits\n"
            "  (DCI frame/component sizes (24 fps assumed without it), IMF mainlevel/sublevel rates).\n"
            "  exit 0: clean, 1: violations, 2: usage or I/O error\n");
}

int main(int argc, char **argv)
{
    Checker k;
    memset(&k, 0, sizeof(k));
    int forced = 0, nb_files = 0, io_err = 0, any = 0;
    const char **files = calloc((size_t)argc, sizeof(*files));
    if (!files)
        return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--fps") && i + 1 < argc) {
            if (parse_fps(argv[++i], &k.fps_num, &k.fps_den) < 0) {
                fprintf(stderr, "j2kc-check: bad --fps '%s'\n", argv[i]);
                free(files);
                return 2;
            }
        } else if (!strcmp(a, "--profile") && i + 1 < argc) {
            const char *n = argv[++i];
            forced = pc_profile_id(n);
            if (forced < 0) {
                fprintf(stderr, "j2kc-check: unknown profile '%s'\n", n);
                usage();
                free(files);
                return 2;
            }
        } else if (!strcmp(a, "-v")) {
            k.verbose = 1;
        } else if (!strcmp(a, "-q")) {
            k.quiet = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            free(files);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "j2kc-check: unknown option '%s'\n", a);
            usage();
            free(files);
            return 2;
        } else {
            files[nb_files++] = a;
        }
    }
    if (!nb_files) {
        usage();
        free(files);
        return 2;
    }
    for (int i = 0; i < nb_files; i++) {
        int r = check_file(&k, files[i], forced);
        if (r < 0)
            io_err = 1;
        else if (r > 0)
            any = 1;
    }
    free(files);
    return any ? 1 : io_err ? 2 : 0;
}
