/*
 * Host staging of a frame by a pool of threads, handed on in parts (stage.h).
 *
 * Why it is built this way:
 *  - The copy is bound by each core's memory traffic, and a helper woken by a condition
 *    variable may start late; with fixed shares of the rows the frame waits for the slowest
 *    share and the latest wake-up. So work is claimed in chunks from a shared counter.
 *  - The staging area is read next by the GPU's copy engine, not by the CPU: non-temporal
 *    stores skip reading the lines they replace.
 *  - The upload of the area would otherwise wait for the whole copy: parts are handed on as
 *    soon as they are complete, so the next part is copied while the previous one goes up.
 *    (Parts alone, with fixed shares, gained nothing: every part then waits for its slowest
 *    share, which chunks avoid.)
 * Measured: see bench/results/history.md#staging-in-parts
 */
#include "cuda/stage.h"
#include "core/tuning.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#include <emmintrin.h>
#define STAGE_NT 1
#else
#define STAGE_NT 0
#endif

#define STAGE_CHUNKS J2KI_TUNE_STAGE_CHUNKS   /* chunks per job */

struct J2kiStager {
    pthread_mutex_t mtx;
    pthread_cond_t  go;
    int             nb_threads;
    pthread_t       th[J2KI_STAGE_MAX_THREADS];
    int             quit;                     /* under mtx */
    uint32_t        gen;                      /* under mtx: the current job's number */
    J2kiStageJob    job;                      /* under mtx: the current job */
    uint32_t        nb_chunks, per_part;      /* under mtx: the current job's chunks */
    uint64_t        claim;                    /* atomic: gen << 32 | next chunk to claim */
    uint32_t        done[J2KI_STAGE_MAX_PARTS]; /* atomic: chunks of each part in place */
};

/* ---- copying ---- */

/** n bytes from s to d; runs of 256 bytes and more by non-temporal stores (copy_fence after). */
static void copy_run(uint8_t *d, const uint8_t *s, size_t n)
{
#if STAGE_NT
    if (n >= 256) {
        size_t head = (16 - ((uintptr_t)d & 15)) & 15;
        memcpy(d, s, head);
        d += head; s += head; n -= head;
        for (; n >= 64; n -= 64, d += 64, s += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
            _mm_stream_si128((__m128i *)d, a);
            _mm_stream_si128((__m128i *)(d + 16), b);
            _mm_stream_si128((__m128i *)(d + 32), c);
            _mm_stream_si128((__m128i *)(d + 48), e);
        }
    }
#endif
    memcpy(d, s, n);
}

/** Orders this thread's non-temporal stores before what it publishes next. */
static void copy_fence(void)
{
#if STAGE_NT
    _mm_sfence();
#endif
}

static uint64_t job_rows(const J2kiStageJob *j)
{
    uint64_t n = 0;
    for (int c = 0; c < j->nb_comps; c++)
        n += j->h[c];
    return n;
}

/** Byte offset in the area of row r, counted over the components in order (a component's
 *  first row: its offset, so the parts cover the gaps between components too). */
static size_t row_offset(const J2kiStageJob *j, uint64_t r)
{
    for (int c = 0; c < j->nb_comps; c++) {
        if (r < j->h[c])
            return j->off[c] + (size_t)r * j->w[c] * (size_t)j->bytes[c];
        r -= j->h[c];
    }
    return j->off[j->nb_comps];
}

/** Copies rows [r0, r1), counted over the components in order. */
static void copy_rows(const J2kiStageJob *j, uint64_t r0, uint64_t r1)
{
    uint64_t first = 0;
    for (int c = 0; c < j->nb_comps && r0 < r1; c++) {
        uint64_t h = j->h[c];
        if (r0 < first + h) {
            size_t bps = (size_t)j->bytes[c], row = (size_t)j->w[c] * bps;
            int step = j->step[c] > 1 ? j->step[c] : 1;
            uint64_t y0 = r0 - first, y1 = (r1 < first + h ? r1 : first + h) - first;
            uint8_t *dst = j->dst + j->off[c] + y0 * row;
            const uint8_t *src = j->src[c] + (ptrdiff_t)y0 * j->stride[c];
            if (step == 1 && j->stride[c] == (ptrdiff_t)row) {
                copy_run(dst, src, (size_t)(y1 - y0) * row);      /* rows back to back */
            } else {
                for (uint64_t y = y0; y < y1; y++, dst += row, src += j->stride[c]) {
                    if (step == 1) {
                        copy_run(dst, src, row);
                    } else if (bps == 1) {
                        for (uint32_t x = 0; x < j->w[c]; x++)
                            dst[x] = src[(size_t)x * step];
                    } else {
                        for (uint32_t x = 0; x < j->w[c]; x++)
                            memcpy(dst + 2 * x, src + 2 * (size_t)x * step, 2);
                    }
                }
            }
            r0 = first + y1;
        }
        first += h;
    }
}

/** Rows of chunk i: chunk k of part p is the k-th of per_part slices of the part's rows. */
static void chunk_rows(const J2kiStageJob *j, uint64_t rows, uint32_t per_part, uint32_t i,
                       uint64_t *r0, uint64_t *r1)
{
    uint32_t p = i / per_part, k = i % per_part;
    uint64_t p0 = rows * p / (uint64_t)j->nb_parts, p1 = rows * (p + 1) / (uint64_t)j->nb_parts;
    *r0 = p0 + (p1 - p0) * k / per_part;
    *r1 = p0 + (p1 - p0) * (k + 1) / per_part;
}

/** Hands on, in order, the parts from *next_part on that are complete (caller's thread). */
static void hand_on(J2kiStager *s, const J2kiStageJob *j, uint64_t rows, uint32_t per_part, int *next_part,
                    int *err)
{
    while (*next_part < j->nb_parts && __atomic_load_n(&s->done[*next_part], __ATOMIC_ACQUIRE) == per_part) {
        size_t o0 = *next_part ? row_offset(j, rows * (uint64_t)*next_part / (uint64_t)j->nb_parts) : 0;
        size_t o1 = row_offset(j, rows * (uint64_t)(*next_part + 1) / (uint64_t)j->nb_parts);
        if (!*err && o1 > o0 && j->part_done)
            *err = j->part_done(j->opaque, o0, o1 - o0);
        ++*next_part;
    }
}

/** Claims chunk after chunk of job gen and copies it; returns when none is left (or the job
 *  is no longer gen). */
static void run_chunks(J2kiStager *s, const J2kiStageJob *j, uint32_t gen, uint32_t nb_chunks,
                       uint32_t per_part, uint64_t rows, int caller, int *next_part, int *err)
{
    for (;;) {
        uint64_t v = __atomic_load_n(&s->claim, __ATOMIC_ACQUIRE), r0, r1;
        do {
            if ((uint32_t)(v >> 32) != gen || (uint32_t)v >= nb_chunks)
                return;
        } while (!__atomic_compare_exchange_n(&s->claim, &v, v + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
        uint32_t i = (uint32_t)v;
        chunk_rows(j, rows, per_part, i, &r0, &r1);
        copy_rows(j, r0, r1);
        copy_fence();
        __atomic_fetch_add(&s->done[i / per_part], 1, __ATOMIC_RELEASE);
        if (caller)
            hand_on(s, j, rows, per_part, next_part, err);
    }
}

static void *helper_main(void *arg)
{
    J2kiStager *s = (J2kiStager *)arg;
    uint32_t seen = 0;
    pthread_mutex_lock(&s->mtx);
    seen = s->gen;
    for (;;) {
        while (!s->quit && s->gen == seen)
            pthread_cond_wait(&s->go, &s->mtx);
        if (s->quit)
            break;
        seen = s->gen;
        J2kiStageJob j = s->job;
        uint32_t nb_chunks = s->nb_chunks, per_part = s->per_part;
        pthread_mutex_unlock(&s->mtx);
        run_chunks(s, &j, seen, nb_chunks, per_part, job_rows(&j), 0, NULL, NULL);
        pthread_mutex_lock(&s->mtx);
    }
    pthread_mutex_unlock(&s->mtx);
    return NULL;
}

/* ---- public ---- */

J2kiStager *j2ki_stager_new(int nb_threads)
{
    J2kiStager *s = (J2kiStager *)calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (pthread_mutex_init(&s->mtx, NULL)) {
        free(s);
        return NULL;
    }
    if (pthread_cond_init(&s->go, NULL)) {
        pthread_mutex_destroy(&s->mtx);
        free(s);
        return NULL;
    }
    if (nb_threads > J2KI_STAGE_MAX_THREADS)
        nb_threads = J2KI_STAGE_MAX_THREADS;
    for (int k = 0; k < nb_threads; k++) {
        if (pthread_create(&s->th[k], NULL, helper_main, s))
            break;
        s->nb_threads++;
    }
    return s;
}

int j2ki_stager_threads(const J2kiStager *s)
{
    return s ? s->nb_threads : 0;
}

void j2ki_stager_free(J2kiStager *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mtx);
    s->quit = 1;
    pthread_cond_broadcast(&s->go);
    pthread_mutex_unlock(&s->mtx);
    for (int k = 0; k < s->nb_threads; k++)
        pthread_join(s->th[k], NULL);
    pthread_cond_destroy(&s->go);
    pthread_mutex_destroy(&s->mtx);
    free(s);
}

int j2ki_stage_interleaved(const J2kiStageJob *j, int *first, size_t *span)
{
    int n = j->nb_comps, step = j->step[0], f = 0;
    uintptr_t lo, hi;
    if (n < 2 || step < n)
        return 0;
    for (int c = 1; c < n; c++)
        if (j->step[c] != step || j->w[c] != j->w[0] || j->h[c] != j->h[0] || j->bytes[c] != j->bytes[0] ||
            j->stride[c] != j->stride[0])
            return 0;
    lo = hi = (uintptr_t)j->src[0];
    for (int c = 1; c < n; c++) {
        uintptr_t a = (uintptr_t)j->src[c];
        if (a < lo) {
            lo = a;
            f = c;
        }
        hi = a > hi ? a : hi;
    }
    /* every component's sample inside the first pixel's step */
    size_t pixel = (size_t)step * (size_t)j->bytes[0], last = (size_t)(hi - lo) + (size_t)j->bytes[0];
    if (last > pixel || !j->w[0])
        return 0;
    size_t row = (size_t)(j->w[0] - 1) * pixel + last;
    ptrdiff_t st = j->stride[0] < 0 ? -j->stride[0] : j->stride[0];
    if (j->h[0] > 1 && (size_t)st < row)
        return 0;                                   /* rows that overlap: not a plane */
    *first = f;
    *span = row;
    return 1;
}

int j2ki_stage_parts(size_t bytes)
{
    size_t p = bytes / J2KI_TUNE_STAGE_PART_BYTES;
    return p < 1 ? 1 : p > J2KI_TUNE_STAGE_MAX_PARTS ? J2KI_TUNE_STAGE_MAX_PARTS : (int)p;
}

int j2ki_stage(J2kiStager *s, const J2kiStageJob *job)
{
    J2kiStager alone;
    J2kiStageJob j = *job;
    uint64_t rows = job_rows(&j);
    uint32_t per_part, nb_chunks, gen;
    int next_part = 0, err = 0;

    if (j.nb_parts < 1)
        j.nb_parts = 1;
    if (j.nb_parts > J2KI_STAGE_MAX_PARTS)
        j.nb_parts = J2KI_STAGE_MAX_PARTS;
    per_part = (STAGE_CHUNKS + (uint32_t)j.nb_parts - 1) / (uint32_t)j.nb_parts;
    if (!s || !s->nb_threads)
        per_part = 1;   /* the caller alone: chunks are only the parts */
    nb_chunks = per_part * (uint32_t)j.nb_parts;
    if (!s || !s->nb_threads) {   /* the counters of a stager of one thread, the caller */
        memset(&alone, 0, sizeof(alone));
        run_chunks(&alone, &j, 0, nb_chunks, per_part, rows, 1, &next_part, &err);
        return err;
    }

    pthread_mutex_lock(&s->mtx);
    gen = ++s->gen;
    s->job = j;
    s->nb_chunks = nb_chunks;
    s->per_part = per_part;
    for (int p = 0; p < J2KI_STAGE_MAX_PARTS; p++)
        __atomic_store_n(&s->done[p], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->claim, (uint64_t)gen << 32, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&s->go);
    pthread_mutex_unlock(&s->mtx);

    run_chunks(s, &j, gen, nb_chunks, per_part, rows, 1, &next_part, &err);
    /* every chunk is claimed: wait for the helpers' last ones, handing on parts meanwhile */
    for (;;) {
        hand_on(s, &j, rows, per_part, &next_part, &err);
        if (next_part == j.nb_parts)
            break;
        sched_yield();
    }
    return err;
}
