/*
 * Host staging (stage.c): seeded random frames (1..4 components, 1x1 up to rows of several
 * KB, 8- and 16-bit samples, planar with padded strides or packed with a sample step, area
 * offsets aligned or not) copied by stagers of 0..7 helper threads in 1..16 parts. Checked
 * against a copy made here sample by sample:
 *   - the area's bytes, the gaps between components and the bytes past the area untouched;
 *   - every part handed on in order, each once, contiguous, together exactly the area, and
 *     already complete (its bytes and all before it) when it is handed on;
 *   - an error returned by the part callback stops the calls and is returned, the copy done;
 *   - 3,000 small jobs in a row through one pool (helpers waking late into later jobs);
 *   - which layouts count as one interleaved plane (staged as they are, j2ki_stage_interleaved).
 */
#include "test.h"
#include "cuda/stage.h"

typedef struct Frame {
    J2kiStageJob job;
    uint8_t *planes[J2KC_MAX_COMPS], *packed;
    uint8_t *want;        /* the expected area, gaps as the sentinel */
    size_t   area;        /* off[nb_comps] */
} Frame;

#define SENTINEL 0xA5
#define GUARD    64

typedef struct Calls {
    const Frame *f;
    size_t next_off;
    int    nb, fail_at, bad;
} Calls;

static uint32_t rnd(uint32_t n) { return n ? test_rand() % n : 0; }

static void frame_free(Frame *f)
{
    for (int c = 0; c < J2KC_MAX_COMPS; c++)
        free(f->planes[c]);
    free(f->packed);
    free(f->want);
    free(f->job.dst);
    memset(f, 0, sizeof(*f));
}

/** A random frame: planar (each component its own plane, padded stride, maybe a step) or
 *  packed (the components interleaved in one plane). max_w, max_h bound the size. */
static int frame_make(Frame *f, uint32_t max_w, uint32_t max_h)
{
    J2kiStageJob *j = &f->job;
    int packed, bytes = rnd(2) ? 2 : 1;
    memset(f, 0, sizeof(*f));
    j->nb_comps = 1 + (int)rnd(4);
    packed = j->nb_comps > 1 && rnd(3) == 0;
    uint32_t w0 = 1 + rnd(max_w), h0 = 1 + rnd(max_h);
    size_t off = rnd(2) ? 0 : rnd(40);
    for (int c = 0; c < j->nb_comps; c++) {
        /* packed planes share one size; planar ones may differ (subsampled chroma) */
        j->w[c] = packed || c == 0 ? w0 : 1 + rnd(w0);
        j->h[c] = packed || c == 0 ? h0 : 1 + rnd(h0);
        j->bytes[c] = bytes;
        j->step[c] = packed ? j->nb_comps : (rnd(4) == 0 ? 2 + (int)rnd(2) : (int)rnd(2));
        j->off[c] = off;
        off += (size_t)j->w[c] * j->h[c] * (size_t)bytes;
        off += rnd(2) ? (256 - off % 256) % 256 : rnd(20);   /* the backend's 256-byte alignment, or none */
    }
    j->off[j->nb_comps] = off;
    f->area = off;
    if (packed) {
        size_t stride = (size_t)w0 * (size_t)j->nb_comps * (size_t)bytes + rnd(3) * (size_t)rnd(50);
        if (!(f->packed = (uint8_t *)malloc(stride * h0 + 1)))
            return -1;
        for (size_t i = 0; i < stride * h0; i++)
            f->packed[i] = (uint8_t)test_rand();
        for (int c = 0; c < j->nb_comps; c++) {
            j->src[c] = f->packed + (size_t)c * (size_t)bytes;
            j->stride[c] = (ptrdiff_t)stride;
        }
    } else {
        for (int c = 0; c < j->nb_comps; c++) {
            int step = j->step[c] > 1 ? j->step[c] : 1;
            size_t stride = (size_t)j->w[c] * (size_t)step * (size_t)bytes + (rnd(2) ? 0 : rnd(70));
            if (!(f->planes[c] = (uint8_t *)malloc(stride * j->h[c] + 1)))
                return -1;
            for (size_t i = 0; i < stride * j->h[c]; i++)
                f->planes[c][i] = (uint8_t)test_rand();
            j->src[c] = f->planes[c];
            j->stride[c] = (ptrdiff_t)stride;
        }
    }
    if (!(f->want = (uint8_t *)malloc(off + GUARD)) || !(j->dst = (uint8_t *)malloc(off + GUARD)))
        return -1;
    memset(f->want, SENTINEL, off + GUARD);
    memset(j->dst, SENTINEL, off + GUARD);
    for (int c = 0; c < j->nb_comps; c++) {
        int step = j->step[c] > 1 ? j->step[c] : 1;
        for (uint32_t y = 0; y < j->h[c]; y++)
            for (uint32_t x = 0; x < j->w[c]; x++)
                memcpy(f->want + j->off[c] + ((size_t)y * j->w[c] + x) * (size_t)bytes,
                       j->src[c] + (ptrdiff_t)y * j->stride[c] + (size_t)x * (size_t)step * (size_t)bytes,
                       (size_t)bytes);
    }
    return 0;
}

static int on_part(void *opaque, size_t off, size_t len)
{
    Calls *k = (Calls *)opaque;
    if (off != k->next_off || len == 0 || off + len > k->f->area) {
        k->bad = 1;
        fprintf(stderr, "part %d: [%zu, +%zu) after %zu of %zu\n", k->nb, off, len, k->next_off, k->f->area);
    } else if (memcmp(k->f->job.dst, k->f->want, off + len)) {
        k->bad = 1;
        fprintf(stderr, "part %d: [%zu, +%zu) handed on before it was complete\n", k->nb, off, len);
    }
    k->next_off = off + len;
    k->nb++;
    return k->nb == k->fail_at ? -7 : 0;
}

/** Stages f with stager s (may be NULL) in parts; returns 0 when every check holds. */
static int stage_and_check(J2kiStager *s, Frame *f, int nb_parts, int fail_at, const char *what)
{
    Calls k = { f, 0, 0, fail_at, 0 };
    int ret, ok = 1;
    f->job.nb_parts = nb_parts;
    f->job.part_done = on_part;
    f->job.opaque = &k;
    ret = j2ki_stage(s, &f->job);
    if (fail_at) {
        CHECK(ret == -7 && k.nb == fail_at, "%s: error at part %d: returned %d after %d calls", what, fail_at, ret, k.nb);
        ok &= ret == -7 && k.nb == fail_at;
    } else {
        CHECK(ret == 0 && k.next_off == f->area && k.nb >= 1 && k.nb <= nb_parts,
              "%s: returned %d, %d parts ending at %zu of %zu (asked for %d)", what, ret, k.nb, k.next_off, f->area,
              nb_parts);
        ok &= ret == 0 && k.next_off == f->area;
    }
    CHECK(!k.bad, "%s: a part was out of order or incomplete", what);
    ok &= !k.bad;
    int same = !memcmp(f->job.dst, f->want, f->area + GUARD);
    CHECK(same, "%s: area differs (%d comps, %ux%u, %d bytes, step %d, %zu bytes)", what, f->job.nb_comps,
          f->job.w[0], f->job.h[0], f->job.bytes[0], f->job.step[0], f->area);
    return ok && same ? 0 : -1;
}

/** j2ki_stage_interleaved on the layouts FFmpeg hands over and on ones that are not a plane. */
static void check_interleaved(void)
{
    static uint8_t buf[64 * 1024];
    J2kiStageJob j;
    int first = -1;
    size_t span = 0;
    /* n comps of w x h, bytes each, at offsets off[c] of buf in a step of step, stride */
#define LAYOUT(n, w_, h_, bytes_, step_, stride_, o0, o1, o2) do {                  \
        memset(&j, 0, sizeof(j));                                                  \
        j.nb_comps = n;                                                            \
        const int o_[3] = { o0, o1, o2 };                                          \
        for (int c = 0; c < n; c++) {                                              \
            j.src[c] = buf + 16 + o_[c]; j.w[c] = w_; j.h[c] = h_;                 \
            j.bytes[c] = bytes_; j.step[c] = step_; j.stride[c] = stride_;         \
        }                                                                          \
        first = -1; span = 0;                                                      \
    } while (0)
    LAYOUT(3, 100, 10, 2, 3, 600, 0, 2, 4);          /* rgb48 */
    CHECK(j2ki_stage_interleaved(&j, &first, &span) && first == 0 && span == 600, "rgb48: %d %zu", first, span);
    LAYOUT(3, 100, 10, 2, 3, 640, 4, 2, 0);          /* bgr48, padded rows */
    CHECK(j2ki_stage_interleaved(&j, &first, &span) && first == 2 && span == 600, "bgr48: %d %zu", first, span);
    LAYOUT(3, 100, 10, 1, 4, 400, 1, 2, 3);          /* 0rgb32: the pixel's first byte unused */
    CHECK(j2ki_stage_interleaved(&j, &first, &span) && first == 0 && span == 99 * 4 + 3, "0rgb32: %d %zu", first,
          span);
    LAYOUT(3, 100, 10, 2, 3, -600, 0, 2, 4);         /* bottom-up rows */
    CHECK(j2ki_stage_interleaved(&j, &first, &span) && span == 600, "negative stride: %zu", span);
    LAYOUT(3, 1, 1, 2, 3, 6, 0, 2, 4);               /* 1x1 */
    CHECK(j2ki_stage_interleaved(&j, &first, &span) && span == 6, "1x1: %zu", span);
    LAYOUT(3, 100, 10, 2, 1, 200, 0, 2000, 4000);    /* planar */
    CHECK(!j2ki_stage_interleaved(&j, &first, &span), "planar taken as packed");
    LAYOUT(1, 100, 10, 2, 3, 600, 0, 0, 0);          /* one component of a packed plane */
    CHECK(!j2ki_stage_interleaved(&j, &first, &span), "one component taken as packed");
    LAYOUT(3, 100, 10, 2, 2, 400, 0, 2, 4);          /* step shorter than the components */
    CHECK(!j2ki_stage_interleaved(&j, &first, &span), "step 2 of 3 components taken as packed");
    LAYOUT(3, 100, 10, 2, 3, 600, 0, 2, 6);          /* a sample outside the pixel */
    CHECK(!j2ki_stage_interleaved(&j, &first, &span), "sample outside the pixel taken as packed");
    LAYOUT(3, 100, 10, 2, 3, 500, 0, 2, 4);          /* rows that overlap */
    CHECK(!j2ki_stage_interleaved(&j, &first, &span), "overlapping rows taken as packed");
    LAYOUT(3, 100, 10, 2, 3, 600, 0, 2, 4);
    j.h[2] = 9;                                      /* sizes differ */
    CHECK(!j2ki_stage_interleaved(&j, &first, &span), "different heights taken as packed");
    LAYOUT(3, 100, 10, 2, 3, 600, 0, 2, 4);
    j.stride[1] = 602;                               /* strides differ */
    CHECK(!j2ki_stage_interleaved(&j, &first, &span), "different strides taken as packed");
    LAYOUT(3, 100, 10, 2, 3, 600, 0, 2, 4);
    j.bytes[1] = 1;                                  /* sample sizes differ */
    CHECK(!j2ki_stage_interleaved(&j, &first, &span), "different sample sizes taken as packed");
#undef LAYOUT
}

int main(void)
{
    static const int threads[] = { -1, 0, 1, 3, 7 };   /* -1: no stager (NULL) */
    int fails = 0;
    test_seed("test_stage", 20261126);
    check_interleaved();

    CHECK(j2ki_stage_parts(0) == 1 && j2ki_stage_parts((size_t)3 << 20) == 1 &&
          j2ki_stage_parts(2048u * 1080 * 6) == 6 && j2ki_stage_parts(4096u * 2160 * 6) == 8,
          "parts: %d %d %d %d", j2ki_stage_parts(0), j2ki_stage_parts((size_t)3 << 20),
          j2ki_stage_parts(2048u * 1080 * 6), j2ki_stage_parts(4096u * 2160 * 6));

    for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
        J2kiStager *s = threads[t] < 0 ? NULL : j2ki_stager_new(threads[t]);
        char what[96];
        CHECK(threads[t] < 0 || (s && j2ki_stager_threads(s) == threads[t]), "stager of %d threads", threads[t]);
        for (int i = 0; i < 150; i++) {
            Frame f;
            /* mostly small frames, some with rows of several KB and many rows */
            int big = i % 10 == 0;
            if (frame_make(&f, big ? 3000 : 70, big ? 400 : 40)) {
                CHECK(0, "out of memory");
                frame_free(&f);
                break;
            }
            snprintf(what, sizeof(what), "threads %d frame %d", threads[t], i);
            fails += stage_and_check(s, &f, 1 + (int)rnd(16), 0, what) < 0;
            frame_free(&f);
        }
        /* an upload that fails: later parts are not handed on, the copy is still complete */
        for (int i = 0; i < 10; i++) {
            Frame f;
            if (frame_make(&f, 500, 200)) {
                frame_free(&f);
                break;
            }
            snprintf(what, sizeof(what), "threads %d error frame %d", threads[t], i);
            /* two or more parts, each with a row (so each is handed on) */
            uint32_t rows = 0;
            for (int c = 0; c < f.job.nb_comps; c++)
                rows += f.job.h[c];
            int parts = 2 + (int)rnd(4);
            if ((uint32_t)parts > rows)
                parts = (int)rows;
            if (parts >= 2)
                fails += stage_and_check(s, &f, parts, 1 + (int)rnd((uint32_t)parts - 1), what) < 0;
            frame_free(&f);
        }
        j2ki_stager_free(s);
    }

    /* many small jobs through one pool: helpers that wake late must not touch the next job */
    {
        J2kiStager *s = j2ki_stager_new(7);
        for (int i = 0; i < 3000 && fails < 5; i++) {
            Frame f;
            if (frame_make(&f, 16, 8)) {
                frame_free(&f);
                break;
            }
            fails += stage_and_check(s, &f, 1 + (int)rnd(4), 0, "3000 small jobs") < 0;
            frame_free(&f);
        }
        j2ki_stager_free(s);
    }
    if (fails)
        fprintf(stderr, "%d frame(s) failed\n", fails);
    return test_done("test_stage");
}
