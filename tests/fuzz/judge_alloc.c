/*
 * The allocator of fuzz_encode's judge: OpenJPEG's malloc, calloc, realloc, free and
 * posix_memalign, renamed j2kf_judge_* in the static copy of libopenjp2 that the target links
 * (tests/fuzz/fuzz.mk), go to the C library's allocator instead of AddressSanitizer's.
 * OpenJPEG is not under test and is built without the sanitizers; through ASan's allocator
 * each of its hundreds of allocations per decode recorded a stack and went through the
 * quarantine. Its blocks never meet ours: OpenJPEG frees only what it allocated, and the
 * target frees the decoded image with opj_image_destroy.
 * Compiled without sanitizers. The C library's functions are found with dlsym(RTLD_NEXT):
 * the names malloc etc. (and __libc_memalign) are ASan's interceptors in the target.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

void *j2kf_judge_malloc(size_t n);
void *j2kf_judge_calloc(size_t n, size_t size);
void *j2kf_judge_realloc(void *p, size_t n);
void j2kf_judge_free(void *p);
int j2kf_judge_posix_memalign(void **p, size_t align, size_t n);

static void *(*libc_malloc)(size_t);
static void *(*libc_calloc)(size_t, size_t);
static void *(*libc_realloc)(void *, size_t);
static void (*libc_free)(void *);
static int (*libc_posix_memalign)(void **, size_t, size_t);

/* Run at start-up, before any decode (a constructor: no lazy set-up for OpenJPEG's threads to
 * race on, should OPJ_NUM_THREADS give it some). */
__attribute__((constructor)) static void judge_alloc_init(void)
{
    *(void **)&libc_malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&libc_calloc = dlsym(RTLD_NEXT, "calloc");
    *(void **)&libc_realloc = dlsym(RTLD_NEXT, "realloc");
    *(void **)&libc_free = dlsym(RTLD_NEXT, "free");
    *(void **)&libc_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    if (!libc_malloc || !libc_calloc || !libc_realloc || !libc_free || !libc_posix_memalign) {
        fprintf(stderr, "judge_alloc: the C library's allocator not found\n");
        abort();
    }
}

void *j2kf_judge_malloc(size_t n)
{
    return libc_malloc(n);
}

void *j2kf_judge_calloc(size_t n, size_t size)
{
    return libc_calloc(n, size);
}

void *j2kf_judge_realloc(void *p, size_t n)
{
    return libc_realloc(p, n);
}

void j2kf_judge_free(void *p)
{
    libc_free(p);
}

int j2kf_judge_posix_memalign(void **p, size_t align, size_t n)
{
    return libc_posix_memalign(p, align, n);
}
