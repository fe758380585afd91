/*
 * The reference backend's worker threads (threadpool.c, backend_ref.c):
 *  - the pool calls every item of a job exactly once, on a worker number in range, job after
 *    job, with items of uneven cost, and two pools run side by side from two threads;
 *  - the early stop's threshold found by digit histograms (j2ki_t1s_threshold_pool) on no pool,
 *    2 and 5 threads equals a sorting search written here over random keys with ties, zeros,
 *    keys across the whole 32-bit range and budgets from 0 to above the total;
 *  - the "threads" key takes 0 (auto) and 1..256 and refuses negative, huge and malformed
 *    values with a message that names it;
 *  - the codestream is byte-identical for 1, 2, 3 and 7 threads (and auto) over seeded random
 *    images and coding set-ups that reach every threaded job: 9/7 and 5/3, with and without
 *    the component transform, four components, subsampled components, tiles with an odd
 *    origin, an image offset, small code-blocks, every rate-control mode, the early stop and
 *    qstep_try; several frames in flight; two encoders encoding at once in two threads; and
 *    rate control sizes the same thresholds in the same rounds (its verbose log: the slope
 *    histograms that guide it are summed by the workers, and would only cost sizings if wrong).
 *  - the automatic thread count follows the process's CPU affinity (one CPU: one worker).
 * The sanitizer build runs this with AddressSanitizer and UBSan (make check).
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE                   /* sched_setaffinity, CPU_SET */
#endif
#include <pthread.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <string.h>

#include "j2kcuda.h"
#include "test.h"
#include "hd/t1_stop.h"
#include "core/threadpool.h"

/* ---- the pool ---- */

typedef struct CountJob {
    uint32_t *calls;          /* per item, atomic */
    int       nb_threads;
    int       bad_worker;     /* atomic: a worker number out of range was seen */
} CountJob;

static void count_item(void *opaque, uint32_t i, int worker)
{
    CountJob *job = opaque;
    volatile uint32_t spin = (i * 2654435761u) % 2000;   /* uneven cost */
    while (spin)
        spin--;
    __atomic_fetch_add(&job->calls[i], 1, __ATOMIC_RELAXED);
    if (worker < 0 || worker >= job->nb_threads)
        __atomic_store_n(&job->bad_worker, 1, __ATOMIC_RELAXED);
}

static int pool_jobs(J2kiPool *pool, int rounds)
{
    static const uint32_t sizes[] = { 0, 1, 2, 3, 17, 1000 };
    uint32_t calls[1000];
    int bad = 0;
    for (int r = 0; r < rounds; r++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            CountJob job = { calls, j2ki_pool_threads(pool), 0 };
            memset(calls, 0, sizeof(calls));
            j2ki_pool_run(pool, sizes[s], count_item, &job);
            for (uint32_t i = 0; i < sizes[s]; i++)
                bad += calls[i] != 1;
            for (uint32_t i = sizes[s]; i < 1000; i++)
                bad += calls[i] != 0;
            bad += job.bad_worker;
        }
    return bad;
}

static void *pool_thread(void *arg)
{
    int *bad = arg;
    J2kiPool *pool = j2ki_pool_new(3);
    *bad = pool ? pool_jobs(pool, 50) : 1;
    j2ki_pool_free(&pool);
    return NULL;
}

static void test_pool(void)
{
    static const int counts[] = { 1, 2, 3, 7, 16 };
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        J2kiPool *pool = j2ki_pool_new(counts[k]);
        CHECK(pool, "pool of %d threads", counts[k]);
        if (!pool)
            continue;
        CHECK(j2ki_pool_threads(pool) >= 1 && j2ki_pool_threads(pool) <= counts[k], "%d workers for %d",
              j2ki_pool_threads(pool), counts[k]);
        CHECK(!pool_jobs(pool, 30), "every item once, %d threads", counts[k]);
        j2ki_pool_free(&pool);
        CHECK(!pool, "freed pool set to NULL");
    }
    CHECK(!pool_jobs(NULL, 2), "NULL pool runs on the caller");
    CHECK(j2ki_pool_threads(NULL) == 1, "NULL pool has one worker");
    j2ki_pool_free(NULL);
    CHECK(j2ki_pool_auto_threads() >= 1 && j2ki_pool_auto_threads() <= J2KI_POOL_MAX_THREADS, "auto %d",
          j2ki_pool_auto_threads());

    pthread_t th[2];
    int bad[2] = { 1, 1 };
    for (int i = 0; i < 2; i++)
        CHECK(!pthread_create(&th[i], NULL, pool_thread, &bad[i]), "thread %d", i);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CHECK(!bad[i], "pool in thread %d: %d bad", i, bad[i]);
    }
    printf("ok threads/pool\n");
}

/* The automatic count under an affinity of one, then two CPUs of the process's own set. */
static void test_affinity(void)
{
#ifdef __linux__
    cpu_set_t all, one;
    int cpus[2], k = 0;
    if (sched_getaffinity(0, sizeof(all), &all) != 0) {
        printf("skip threads/affinity: sched_getaffinity failed\n");
        return;
    }
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &all))
            cpus[k++] = c;
    CPU_ZERO(&one);
    CPU_SET(cpus[0], &one);
    CHECK(!sched_setaffinity(0, sizeof(one), &one), "pinned to CPU %d", cpus[0]);
    CHECK(j2ki_pool_auto_threads() == 1, "auto %d on one CPU", j2ki_pool_auto_threads());
    if (k == 2) {
        CPU_SET(cpus[1], &one);
        CHECK(!sched_setaffinity(0, sizeof(one), &one), "pinned to CPUs %d, %d", cpus[0], cpus[1]);
        CHECK(j2ki_pool_auto_threads() == 2, "auto %d on two CPUs", j2ki_pool_auto_threads());
    }
    CHECK(!sched_setaffinity(0, sizeof(all), &all), "affinity restored");
    CHECK(j2ki_pool_auto_threads() == (CPU_COUNT(&all) > J2KI_POOL_MAX_THREADS ? J2KI_POOL_MAX_THREADS
                                                                               : CPU_COUNT(&all)),
          "auto %d on the process's %d CPUs", j2ki_pool_auto_threads(), CPU_COUNT(&all));
    printf("ok threads/affinity (%d CPUs)\n", CPU_COUNT(&all));
#else
    printf("skip threads/affinity: no affinity mask on this system\n");
#endif
}

/* ---- the early stop's threshold ---- */

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The threshold by its definition's walk (t1_stop.h, step 2): the entries sorted by key (ties
 * in any order), from the largest, to the one whose bytes first take the sum over budget. */
static uint32_t threshold_sorted(const uint32_t *key, const uint32_t *bytes, size_t n, uint64_t budget,
                                 uint64_t *scratch)
{
    size_t m = 0, i;
    uint64_t cum = 0;
    for (i = 0; i < n; i++)
        if (key[i])
            scratch[m++] = (uint64_t)key[i] << 32 | bytes[i];
    qsort(scratch, m, sizeof(*scratch), cmp_desc);
    for (i = 0; i < m; i++) {
        cum += (uint32_t)scratch[i];
        if (cum > budget)
            return (uint32_t)(scratch[i] >> 32);
    }
    return 0;
}

static void test_t1s_threshold(void)
{
    enum { N = 40000 };
    static uint32_t key[N], bytes[N];
    static uint64_t sorted[N];
    J2kiPool *pools[3] = { NULL, j2ki_pool_new(2), j2ki_pool_new(5) };
    void *scratch = malloc(j2ki_t1s_pool_threshold_scratch_size(5));
    int bad = 0;
    for (int t = 0; t < 300 && scratch; t++) {
        size_t n = t < 3 ? (size_t)t : 1 + test_rand() % (t % 7 ? 300 : N);
        uint64_t total = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t r = test_rand();
            /* ties when t % 3 == 0; else keys over 16 or 32 bits (every digit of the search) */
            key[i] = test_rand() % 4 == 0 ? 0 : t % 3 == 0 ? 1 + r % 8 : t % 3 == 1 ? 1 + (r & 0xFFFF)
                                                                                  : r | test_rand() << 16;
            bytes[i] = key[i] || test_rand() % 2 ? test_rand() % 300 : 0;
            total += key[i] ? bytes[i] : 0;
        }
        uint64_t budget = t % 5 == 0 ? total + (t % 10 ? 1 : 0) : total ? test_rand() % (total + 1) : 0;
        uint32_t a = threshold_sorted(key, bytes, n, budget, sorted);
        for (int k = 0; k < 3; k++) {
            uint32_t b = j2ki_t1s_threshold_pool(key, bytes, n, budget, pools[k], scratch);
            if (a != b && bad++ < 5)
                fprintf(stderr, "threshold trial %d pool %d: n %zu budget %llu: %u, sorting search %u\n", t, k, n,
                        (unsigned long long)budget, b, a);
        }
    }
    CHECK(scratch && bad == 0, "%d threshold searches differ", bad);
    free(scratch);
    for (int k = 0; k < 3; k++)
        j2ki_pool_free(&pools[k]);
    printf("ok threads/t1s-threshold\n");
}

/* ---- the key ---- */

static char last_log[1024];
static void log_cb(void *opaque, int level, const char *msg)
{
    (void)opaque;
    if (level <= J2KC_LOG_WARNING)
        snprintf(last_log, sizeof(last_log), "%s", msg);
}

/* Collects rate control's verbose lines of one encoder (opaque: a 4 KB buffer). */
static void rc_log_cb(void *opaque, int level, const char *msg)
{
    char *buf = opaque;
    size_t n = strlen(buf);
    log_cb(NULL, level, msg);
    if (strstr(msg, "rate control") && n + strlen(msg) + 2 < 4096)
        snprintf(buf + n, 4096 - n, "%s\n", msg);
}

static void test_key(void)
{
    static const char *const bad[] = { "-1", "257", "100000", "99999999999999999999", "two", "", "2x", "1.5" };
    static const char *const good[] = { "0", "1", "7", "256" };
    J2kcParams *p = j2kc_params_alloc();
    j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_INFO);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        last_log[0] = 0;
        CHECK(j2kc_params_set(p, "threads", bad[i]) == J2KC_ERR_INVAL, "threads=%s accepted", bad[i]);
        CHECK(strstr(last_log, "threads") && strstr(last_log, "256"), "threads=%s message: %s", bad[i], last_log);
    }
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        CHECK(j2kc_params_set(p, "threads", good[i]) == 0, "threads=%s refused: %s", good[i], last_log);
    CHECK(strstr(j2kc_params_help(), "threads"), "help lists threads");
    j2kc_params_free(&p);
    printf("ok threads/key\n");
}

/* ---- byte identity ---- */

typedef struct Setup {
    const char *name;
    int         nb_comps, depth, sub;     /* sub: components 1 and 2 subsampled 2x2 */
    uint32_t    w, h, x0, y0;
    const char *kv[16];
} Setup;

static const Setup setups[] = {
    { "97-bytes", 3, 12, 0, 203, 157, 0, 0, { "bytes", "12000", NULL } },
    { "97-bytes-notry", 3, 12, 0, 160, 96, 0, 0, { "bytes", "9000", "qstep_try", "0", "t1_stop", "0", NULL } },
    { "97-lowrate-stop", 3, 10, 0, 256, 130, 0, 0, { "bytes", "3000", NULL } },
    { "53-lossless", 3, 12, 0, 203, 157, 0, 0, { "lossless", "1", NULL } },
    { "53-nomct-tiles", 3, 8, 0, 150, 99, 3, 5,
      { "transform", "53", "mct", "0", "tiles", "64x48+1+2", "cblk", "16x32", NULL } },
    { "97-4comps-quality", 4, 8, 0, 131, 77, 0, 0, { "quality", "38", "cblk", "32x32", "levels", "4", NULL } },
    { "97-sub420-slope", 3, 10, 1, 118, 90, 1, 0, { "slope", "12", "cblk", "8x8", NULL } },
    { "97-tiles-layers", 3, 12, 0, 190, 140, 7, 3,
      { "tiles", "50x70+3+1", "layers", "3", "bytes", "20000", "order", "rpcl", "levels", "7", NULL } },
    { "53-gray-1row", 1, 16, 0, 77, 1, 0, 0, { "lossless", "1", NULL } },
    { "97-gray-1col", 1, 8, 0, 1, 65, 0, 1, { "bytes", "200", NULL } },
};

/* Random planes of the setup, 16-bit containers (uint8 for depth <= 8). */
static void *make_frame(const Setup *s, J2kcImageDesc *d, J2kcFrame *f)
{
    size_t total = 0, off[J2KC_MAX_COMPS];
    uint32_t cw[J2KC_MAX_COMPS], ch[J2KC_MAX_COMPS];
    int bps = s->depth <= 8 ? 1 : 2;
    unsigned char *buf;

    memset(d, 0, sizeof(*d));
    memset(f, 0, sizeof(*f));
    d->nb_comps = s->nb_comps;
    d->width = s->w;
    d->height = s->h;
    d->x0 = s->x0;
    d->y0 = s->y0;
    for (int c = 0; c < s->nb_comps; c++) {
        d->depth[c] = s->depth;
        d->dx[c] = d->dy[c] = s->sub && (c == 1 || c == 2) ? 2 : 1;
        cw[c] = (s->x0 + s->w + d->dx[c] - 1) / d->dx[c] - (s->x0 + d->dx[c] - 1) / d->dx[c];
        ch[c] = (s->y0 + s->h + d->dy[c] - 1) / d->dy[c] - (s->y0 + d->dy[c] - 1) / d->dy[c];
        off[c] = total;
        total += (size_t)cw[c] * ch[c] * bps;
    }
    buf = malloc(total);
    if (!buf)
        return NULL;
    for (int c = 0; c < s->nb_comps; c++) {
        uint32_t maxv = (1u << s->depth) - 1;
        for (uint32_t y = 0; y < ch[c]; y++)
            for (uint32_t x = 0; x < cw[c]; x++) {
                uint32_t v = ((x * 13 + y * 7 + (uint32_t)c * 500) * (maxv / 255 + 1) + (test_rand() % 64)) & maxv;
                size_t i = off[c] + ((size_t)y * cw[c] + x) * bps;
                if (bps == 1) {
                    buf[i] = (unsigned char)v;
                } else {
                    uint16_t v16 = (uint16_t)v;
                    memcpy(buf + i, &v16, 2);
                }
            }
        f->data[c] = buf + off[c];
        f->stride[c] = (ptrdiff_t)cw[c] * bps;
    }
    return buf;
}

/* Encodes nb_frames copies of the frame with the given thread count (NULL: the default) and
 * returns the concatenated codestreams (NULL on failure). */
static uint8_t *encode(const Setup *s, const J2kcImageDesc *d, const J2kcFrame *f, const char *threads,
                       int nb_frames, size_t *len, char *rc_log)
{
    J2kcParams *p = j2kc_params_alloc();
    J2kcEncoder *enc = NULL;
    uint8_t *out = NULL;
    int ret = 0, got = 0;

    *len = 0;
    if (rc_log) {
        rc_log[0] = 0;
        j2kc_params_set_log(p, rc_log_cb, rc_log, J2KC_LOG_DEBUG);
    } else {
        j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_INFO);
    }
    for (int i = 0; s->kv[i]; i += 2)
        ret |= j2kc_params_set(p, s->kv[i], s->kv[i + 1]);
    j2kc_params_set(p, "backend", "ref");
    j2kc_params_set(p, "async_depth", "2");
    if (threads)
        ret |= j2kc_params_set(p, "threads", threads);
    if (ret || j2kc_encoder_create(&enc, d, p) < 0)
        goto done;
    for (int sub = 0; got < nb_frames;) {
        J2kcPacket pkt;
        if (sub < nb_frames && j2kc_encoder_submit(enc, f) == 0) {
            sub++;
            continue;
        }
        if (j2kc_encoder_receive(enc, &pkt, 1) < 0)
            goto done;
        uint8_t *n = realloc(out, *len + pkt.size);
        if (!n)
            goto done;
        out = n;
        memcpy(out + *len, pkt.data, pkt.size);
        *len += pkt.size;
        got++;
    }
done:
    if (got < nb_frames) {
        free(out);
        out = NULL;
    }
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
    return out;
}

typedef struct EncArgs {
    const Setup *s;
    const J2kcImageDesc *d;
    const J2kcFrame *f;
    uint8_t *out;
    size_t len;
} EncArgs;

static void *encode_thread(void *arg)
{
    EncArgs *a = arg;
    a->out = encode(a->s, a->d, a->f, "3", 2, &a->len, NULL);
    return NULL;
}

static void test_identity(void)
{
    static const char *const counts[] = { "2", "3", "7", NULL };
    int nb_searches = 0;
    for (size_t k = 0; k < sizeof(setups) / sizeof(setups[0]); k++) {
        const Setup *s = &setups[k];
        J2kcImageDesc d;
        J2kcFrame f;
        size_t len1, len;
        void *planes = make_frame(s, &d, &f);
        static char log1[4096], logn[4096];
        uint8_t *ref = planes ? encode(s, &d, &f, "1", 3, &len1, log1) : NULL;
        int fails = test_failures;

        CHECK(ref && len1, "%s: threads=1 encode failed: %s", s->name, last_log);
        nb_searches += strstr(log1, "sized in") != NULL;
        if (!ref) {
            free(planes);
            continue;
        }
        for (int i = 0; i < 4; i++) {
            uint8_t *o = encode(s, &d, &f, counts[i], 3, &len, logn);
            CHECK(o && len == len1 && !memcmp(o, ref, len), "%s: threads=%s gives other bytes (%zu vs %zu)",
                  s->name, counts[i] ? counts[i] : "auto", len, len1);
            CHECK(!strcmp(log1, logn), "%s: threads=%s: rate control's log differs:\n%s---\n%s", s->name,
                  counts[i] ? counts[i] : "auto", log1, logn);
            free(o);
        }
        /* two encoders at once, three threads each, two frames in flight */
        EncArgs a[2] = { { s, &d, &f, NULL, 0 }, { s, &d, &f, NULL, 0 } };
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            CHECK(!pthread_create(&th[i], NULL, encode_thread, &a[i]), "thread");
        for (int i = 0; i < 2; i++) {
            pthread_join(th[i], NULL);
            CHECK(a[i].out && a[i].len == len1 * 2 / 3 && !memcmp(a[i].out, ref, a[i].len),
                  "%s: encoder %d of two concurrent ones gives other bytes", s->name, i);
            free(a[i].out);
        }
        printf("%s threads/identity/%s (%zu bytes a frame)\n", test_failures == fails ? "ok" : "FAIL", s->name,
               len1 / 3);
        free(ref);
        free(planes);
    }
    CHECK(nb_searches >= 4, "only %d set-ups ran a byte-budget search", nb_searches);
}

int main(void)
{
    test_seed("test_threads", 24);
    test_pool();
    test_affinity();
    test_t1s_threshold();
    test_key();
    test_identity();
    return test_done("test_threads");
}
