/*
 * A plain main() for the fuzz targets, for compilers without libFuzzer (gcc): runs the target
 * once on every file named on the command line, or on every file of a named directory, and
 * prints one line per input. The libFuzzer binaries do the same when given files.
 *   replay_TARGET FILE|DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Optional in a target, as in libFuzzer: weak, NULL when the target has none. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t size = 0, cap = 0, n;
    do {
        if (size == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
        }
        n = fread(buf + size, 1, cap - size, f);
        size += n;
    } while (n);
    fclose(f);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(buf, size);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int errors = 0;
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            while (d && (e = readdir(d))) {
                if (e->d_name[0] == '.')
                    continue;
                size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
                char *p = malloc(len);
                if (!p)
                    return 2;
                snprintf(p, len, "%s/%s", argv[i], e->d_name);
                errors += run_file(p) < 0;
                free(p);
            }
            if (d)
                closedir(d);
        } else {
            errors += run_file(argv[i]) < 0;
        }
    }
    return errors ? 2 : 0;
}
