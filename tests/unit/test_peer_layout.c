/*
 * The layout of a device frame copied from another context (cuda/peer_layout.h), checked on the
 * host: frames of seeded random sizes and row paddings in the layouts FFmpeg's CUDA frames take
 * (planar 8- and 16-bit, 4:2:0 with the chroma interleaved as NV12 and P010, packed RGB in both
 * component orders) are "copied" run by run as cuMemcpy3DPeerAsync would copy them (row_bytes of
 * each of rows rows, from src_pitch to dst_pitch), and every sample of every component is read
 * back where the layout says it is. Also: interleaved components share one run, the runs do not
 * overlap in the buffer, the pitch is aligned, and rows that go backwards or overlap are refused.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cuda/peer_layout.h"
#include "test.h"

/* A frame in host memory standing in for device memory: nb components over one arena. */
typedef struct Frame {
    uint8_t *arena;
    size_t size;
    J2kiPeerComp comp[J2KC_MAX_COMPS];
    int nb;
} Frame;

static size_t pad(void)
{
    return test_rand() % 3 == 0 ? 0 : test_rand() % 300;
}

/* One plane of w pixels of pix bytes and h rows at arena offset *off; returns its start. */
static size_t plane(size_t *off, size_t w, size_t pix, size_t h, ptrdiff_t *stride)
{
    size_t start = *off + pad();
    *stride = (ptrdiff_t)(w * pix + pad());
    *off = start + (size_t)*stride * h;
    return start;
}

enum { PLANAR8, PLANAR16, NV12, P010, BGRA, RGB0, NB_KINDS };
static const char *kind_name[] = { "yuv420p", "yuv444p16", "nv12", "p010", "bgra", "rgb0" };
static const int kind_runs[] = { 3, 3, 2, 2, 1, 1 };

static void make(Frame *fr, int kind, uint32_t w, uint32_t h)
{
    size_t off = 0, start[3];
    ptrdiff_t stride[3];
    uint32_t cw = (w + 1) / 2, ch = (h + 1) / 2;
    memset(fr, 0, sizeof(*fr));
    fr->nb = 3;
    switch (kind) {
    case PLANAR8:
    case PLANAR16: {
        int bytes = kind == PLANAR8 ? 1 : 2;
        for (int c = 0; c < 3; c++) {
            uint32_t pw = kind == PLANAR8 && c ? cw : w, ph = kind == PLANAR8 && c ? ch : h;
            start[c] = plane(&off, pw, (size_t)bytes, ph, &stride[c]);
            fr->comp[c] = (J2kiPeerComp){ NULL, stride[c], c & 1 ? 0 : 1, bytes, pw, ph };
        }
        break;
    }
    case NV12:
    case P010: {
        int bytes = kind == NV12 ? 1 : 2;
        start[0] = plane(&off, w, (size_t)bytes, h, &stride[0]);
        start[1] = plane(&off, cw, 2u * (size_t)bytes, ch, &stride[1]);
        start[2] = start[1] + (size_t)bytes;
        stride[2] = stride[1];
        fr->comp[0] = (J2kiPeerComp){ NULL, stride[0], 1, bytes, w, h };
        fr->comp[1] = (J2kiPeerComp){ NULL, stride[1], 2, bytes, cw, ch };
        fr->comp[2] = (J2kiPeerComp){ NULL, stride[2], 2, bytes, cw, ch };
        break;
    }
    default: {
        size_t base = plane(&off, w, 4, h, &stride[0]);
        for (int c = 0; c < 3; c++) {   /* R, G, B: bgra stores B first, rgb0 R first */
            start[c] = base + (size_t)(kind == BGRA ? 2 - c : c);
            fr->comp[c] = (J2kiPeerComp){ NULL, stride[0], 4, 1, w, h };
        }
        break;
    }
    }
    fr->size = off + 8;
    fr->arena = malloc(fr->size);
    for (size_t i = 0; i < fr->size; i++)
        fr->arena[i] = (uint8_t)test_rand();
    for (int c = 0; c < 3; c++)
        fr->comp[c].data = fr->arena + start[c];
}

static void check_kind(int kind, uint32_t w, uint32_t h)
{
    Frame fr;
    J2kiPeerPlane pl[J2KC_MAX_COMPS];
    int plane_of[J2KC_MAX_COMPS], bad = 0;
    size_t size = 0, sum = 0;
    make(&fr, kind, w, h);
    int n = j2ki_peer_layout(fr.comp, fr.nb, pl, plane_of, &size);
    CHECK(n == kind_runs[kind], "%s %ux%u: %d runs, want %d", kind_name[kind], w, h, n, kind_runs[kind]);
    if (n < 1) {
        free(fr.arena);
        return;
    }
    for (int r = 0; r < n; r++) {
        CHECK(pl[r].dst_pitch % J2KI_PEER_PITCH_ALIGN == 0 && pl[r].dst_pitch >= pl[r].row_bytes &&
              pl[r].row_bytes <= (size_t)pl[r].src_pitch, "%s: run %d pitch %zu for %zu bytes (source %td)",
              kind_name[kind], r, pl[r].dst_pitch, pl[r].row_bytes, pl[r].src_pitch);
        CHECK(pl[r].dst_off == sum, "%s: run %d at %zu, want %zu (back to back)", kind_name[kind], r,
              pl[r].dst_off, sum);
        sum += pl[r].dst_pitch * pl[r].rows;
    }
    CHECK(size == sum, "%s: size %zu, runs %zu", kind_name[kind], size, sum);
    /* the copy, as the driver makes it; the buffer starts with garbage */
    uint8_t *dst = malloc(size);
    for (size_t i = 0; i < size; i++)
        dst[i] = (uint8_t)test_rand();
    for (int r = 0; r < n; r++)
        for (size_t y = 0; y < pl[r].rows; y++)
            memcpy(dst + pl[r].dst_off + y * pl[r].dst_pitch,
                   (const uint8_t *)pl[r].src + (ptrdiff_t)y * pl[r].src_pitch, pl[r].row_bytes);
    for (int c = 0; c < fr.nb && !bad; c++) {
        const J2kiPeerComp *k = &fr.comp[c];
        const uint8_t *s0 = k->data, *d0 = dst + j2ki_peer_comp_offset(k, &pl[plane_of[c]]);
        size_t pix = (size_t)(k->step > 1 ? k->step : 1) * (size_t)k->bytes;
        for (uint32_t y = 0; y < k->h && !bad; y++)
            for (uint32_t x = 0; x < k->w && !bad; x++) {
                const uint8_t *s = s0 + (ptrdiff_t)y * k->stride + x * pix;
                const uint8_t *d = d0 + (size_t)y * pl[plane_of[c]].dst_pitch + x * pix;
                if (d < dst || d + k->bytes > dst + size || memcmp(s, d, (size_t)k->bytes))
                    bad = 1;
                CHECK(!bad, "%s %ux%u: component %d sample (%u,%u) not where the layout says", kind_name[kind],
                      w, h, c, x, y);
            }
    }
    free(dst);
    free(fr.arena);
}

int main(void)
{
    test_seed("test_peer_layout", 0x9ee7);
    for (int t = 0; t < 60; t++)
        for (int kind = 0; kind < NB_KINDS; kind++)
            check_kind(kind, 1 + test_rand() % 97, 1 + test_rand() % 41);
    printf("ok peer_layout/copies (60 seeded sizes x %d layouts: every sample found)\n", NB_KINDS);

    /* rows a pitched copy cannot take */
    uint8_t buf[4096];
    J2kiPeerComp c[3] = {
        { buf + 2048, -64, 1, 1, 32, 8 }, { buf, 64, 1, 1, 32, 8 }, { buf + 1024, 64, 1, 1, 32, 8 },
    };
    J2kiPeerPlane pl[J2KC_MAX_COMPS];
    int po[J2KC_MAX_COMPS];
    size_t size;
    CHECK(j2ki_peer_layout(c, 3, pl, po, &size) == J2KC_ERR_UNSUPPORTED, "negative stride accepted");
    c[0].stride = 16;
    CHECK(j2ki_peer_layout(c, 3, pl, po, &size) == J2KC_ERR_UNSUPPORTED, "stride 16 for 32-sample rows accepted");
    c[0].stride = 64;
    c[0].w = 0;
    CHECK(j2ki_peer_layout(c, 3, pl, po, &size) == J2KC_ERR_INVAL, "an empty component accepted");
    c[0].w = 32;
    CHECK(j2ki_peer_layout(c, 3, pl, po, &size) == 3, "three planes");
    printf("ok peer_layout/refused (negative and short strides, empty component)\n");
    return test_done("test_peer_layout");
}
