/*
 * Column-parallel tier-1 context modelling (t1_par.h) against the serial coder (t1_core.h):
 * every block is loaded twice (j2ki_t1_load), coded by j2ki_t1_code and by j2ki_t1_build_cols
 * + j2ki_t1p_code, and everything is compared: return code, data bytes, length, every pass's
 * rate, distortion (bit for bit) and term flag, the final stripe-column words (padding
 * columns included) and the final MQ context states.
 *  - sizes 1x1, 1xN, Nx1, 5x3, 32x32, 64x64, 16x64, 64x16 and others, every legal code-block
 *    shape (widths and heights 4..1024, at most 4,096 samples: 1024x4 ... 4x1024) and edge
 *    blocks of them;
 *  - magnitudes: very sparse, sparse, Laplacian-like, uniform, mixed dense, and the subbands
 *    of a synthetic image after a 2-level 5/3 DWT, coded in blocks of every legal shape;
 *    1..20 bit-planes, frac_bits 0 and 6;
 *  - all 64 combinations of BYPASS, RESET, TERMALL, VCAUSAL, PTERM, SEGMARK, bypass_start
 *    1..6, all four orientations;
 *  - buffers too small: both coders fail the same way;
 *  - when /work/shared/corpus holds the bar_interior picture (and xz is installed), the
 *    subbands of a 3-level 5/3 DWT of a 1024x1024 crop of its green channel (reversible
 *    indices and indices / 8), coded as 64x64 blocks (skipped otherwise).
 *  - the driver of the CUDA variant J2KI_T1_CUDA_PAR (chunks of 4 bit-planes, symbol buffer of
 *    the kernel's bound, MQ coding pass by pass through j2ki_t1p_code_pass) against the serial
 *    coder too, and the bound checked on every chunk.
 * Prints the symbols per pass and the rounds the fixed point of phase 1 (t1_par.h) needed
 * per stripe-pass (mean, max, histogram), by data class.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "hd/t1_core.h"
#include "hd/t1_par.h"

#define MAXN 4096
#define CAP  (1u << 20)
#define MAXP J2KI_T1_MAX_PASSES

static int32_t coefs[MAXN];
static uint16_t fl1[(1024 + 2) * (64 + 2) + 4096 * 4], fl2[(1024 + 2) * (64 + 2) + 4096 * 4];
static uint32_t mg1[(1024 + 2) * (64 + 2) + 4096 * 4], mg2[(1024 + 2) * (64 + 2) + 4096 * 4];
static uint8_t buf1[CAP], buf2[CAP];
static J2kiPass ps1[MAXP], ps2[MAXP];
static J2kiT1State st1, st2;

enum { D_VSPARSE, D_SPARSE, D_LAPLACE, D_UNIFORM, D_DENSE, D_DWT, D_CORPUS, NB_CLASSES };
static const char *const class_name[NB_CLASSES] = {
    "very sparse", "sparse", "laplacian", "uniform", "dense mix", "synthetic dwt", "corpus dwt"
};
static J2kiT1pStats stats[NB_CLASSES];
static int nb_blocks, nb_mismatch_blocks;

static uint32_t rand_bits(int bits) { return bits >= 32 ? test_rand() : test_rand() & ((1u << bits) - 1); }

/* magnitude below 2^mb, Laplacian-like: geometric with mean about 2^(mb - 3) */
static uint32_t laplace(int mb)
{
    double u = (test_rand() + 0.5) / 4294967296.0;
    double scale = ldexp(1.0, mb > 3 ? mb - 3 : 0) * 0.7;
    double m = -log(u) * scale;
    double lim = ldexp(1.0, mb) - 1;
    return (uint32_t)(m > lim ? lim : m);
}

static void gen(int cls, int w, int h, int mb, int frac)
{
    int i, n = w * h;
    for (i = 0; i < n; i++) {
        uint32_t q = 0, f = frac ? rand_bits(frac) : 0;
        switch (cls) {
        case D_VSPARSE: q = test_rand() % 97 == 0 ? rand_bits(mb) : 0; break;
        case D_SPARSE:  q = test_rand() % 16 == 0 ? rand_bits(mb) : 0; break;
        case D_LAPLACE: q = laplace(mb); break;
        case D_UNIFORM: q = rand_bits(mb); break;
        default:        q = (test_rand() | 0x80000000u) >> (32 - (1 + test_rand() % mb));
                        if (test_rand() % 3 == 0)
                            q >>= test_rand() % mb;
                        break;
        }
        coefs[i] = (int32_t)((q << frac) | f);
        if (test_rand() & 1)
            coefs[i] = -coefs[i];
    }
    if (mb > 1) {   /* use the top plane */
        i = (int)(test_rand() % (uint32_t)n);
        coefs[i] = (int32_t)(((1u << (mb - 1)) << frac) | (frac ? 1u : 0u));
    }
}

/*
 * The driver of the CUDA variant J2KI_T1_CUDA_PAR (t1_cuda.cu) on the host: the passes in
 * chunks of CHUNK_PLANES bit-planes, first the context modelling of the chunk's passes into
 * one symbol buffer (per-pass counts, distortions), then their MQ coding one pass at a time
 * through j2ki_t1p_code_pass. The symbols of a chunk must stay within the bound the kernel's
 * buffer is sized by, CHUNK_PLANES (n + 2 c) + n (t1_cuda.cu, t1p_syms_cap): *fill gets the
 * largest ratio seen. Same outputs as j2ki_t1p_code.
 */
#define CHUNK_PLANES 4   /* T1P_PLANES of t1_cuda.cu */
static uint8_t chunk_syms[3 * CHUNK_PLANES * J2KI_T1P_MAX_SYMS];
static J2kiT1pStripe chunk_sc;
static double max_fill;

/* when set, code_chunked stores each chunk's symbol count there (mq_chains) */
#define MQ_CHUNKS 8
static uint32_t *chunk_count;

static int code_chunked(J2kiT1State *st, int numbps, int style, int bps, int frac, uint8_t *buf,
                        uint32_t cap, J2kiPass *passes, uint32_t *len)
{
    const uint32_t n = (uint32_t)(st->w * st->h), c = (uint32_t)((st->h / 4) * st->w);
    const uint32_t bound = CHUNK_PLANES * (n + 2 * c) + n;
    const int nb_passes = 3 * numbps - 2;
    uint32_t cnt[3 * CHUNK_PLANES], pos, nsym;
    J2kiT1Seg cd;
    int k0, i, ret;
    if (nb_passes > MAXP)
        return J2KC_ERR_BUFSIZE;
    j2ki_t1p_coder_init(st->ctx, &cd);
    for (k0 = 0; k0 < numbps; k0 += CHUNK_PLANES) {
        int k1 = j2ki_imin(k0 + CHUNK_PLANES, numbps), i0 = k0 ? 3 * k0 - 2 : 0, i1 = 3 * k1 - 2;
        for (pos = 0, i = i0; i < i1; i++) {
            int k = (i + 2) / 3, type = (i + 2) % 3;
            int s = numbps - 1 - k + frac, g = j2ki_t1_dist_shift(s);
            int64_t d = j2ki_t1p_pass(st, &chunk_sc, type, s, g, j2ki_t1_pass_raw(i, style, bps),
                                      chunk_syms + pos, &nsym, NULL);
            passes[i].dist = ldexp((double)d, 2 * g - 2 * frac - 2);
            cnt[i - i0] = nsym;
            pos += nsym;
        }
        CHECK(pos <= bound, "%dx%d chunk at plane %d: %u symbols > bound %u", st->w, st->h, k0,
              pos, bound);
        if (chunk_count && k0 / CHUNK_PLANES < MQ_CHUNKS)
            chunk_count[k0 / CHUNK_PLANES] = pos;
        if ((double)pos / bound > max_fill)
            max_fill = (double)pos / bound;
        for (pos = 0, i = i0; i < i1; i++) {
            if ((ret = j2ki_t1p_code_pass(j2ki_t1p_mq(st), &cd, i, nb_passes, style, bps, chunk_syms + pos,
                                          cnt[i - i0], buf, cap, passes)) != 0)
                return ret;
            pos += cnt[i - i0];
        }
    }
    *len = (uint32_t)cd.seg_start;
    return 0;
}

/* codes coefs (w x h, stride ws) three ways (serial, column-parallel, column-parallel in
 * chunks as the CUDA variant) and compares; returns 1 when equal */
static int run_block(int cls, const int32_t *c, ptrdiff_t ws, int w, int h, int orient,
                     int style, int bps, int frac, uint32_t cap)
{
    uint32_t acc, len1 = 0, len2 = 0;
    int numbps, rc1, rc2, np, i, ok = 1, nw;
    st1.flags = fl1;
    st1.mag = mg1;
    st2.flags = fl2;
    st2.mag = mg2;
    acc = j2ki_t1_load(&st1, c, ws, w, h, orient, style);
    j2ki_t1_load(&st2, c, ws, w, h, orient, style);
    numbps = j2ki_t1_nbits(acc >> frac);
    if (numbps == 0)
        return 1;
    np = 3 * numbps - 2;
    memset(buf1, 0xA5, cap < CAP ? cap + 16 : CAP);
    memset(buf2, 0xA5, cap < CAP ? cap + 16 : CAP);
    rc1 = j2ki_t1_code(&st1, numbps, style, bps, frac, buf1, cap, ps1, MAXP, &len1);
    j2ki_t1_build_cols(&st2);
    rc2 = j2ki_t1p_code_stats(&st2, numbps, style, bps, frac, buf2, cap, ps2, MAXP, &len2,
                              cap == CAP ? &stats[cls] : NULL);
    nb_blocks++;
    CHECK(rc1 == rc2, "%dx%d style %#x bps %d: rc %d vs %d", w, h, style, bps, rc1, rc2);
    if (rc1 != rc2)
        return 0;
    if (rc1 == 0) {
        ok &= len1 == len2;
        ok &= memcmp(buf1, buf2, len1) == 0;
        for (i = 0; i < np; i++) {
            ok &= ps1[i].rate == ps2[i].rate && ps1[i].term == ps2[i].term;
            ok &= memcmp(&ps1[i].dist, &ps2[i].dist, sizeof(double)) == 0;
        }
        nw = ((h + 3) >> 2) * (w + 2);
        ok &= memcmp(fl1, fl2, (size_t)nw * 4) == 0;
        ok &= memcmp(st1.ctx, st2.ctx, sizeof(st1.ctx)) == 0;
        CHECK(ok, "%s %dx%d orient %d style %#x bps %d frac %d numbps %d: len %u vs %u",
              class_name[cls], w, h, orient, style, bps, frac, numbps, len1, len2);
    }
    /* the CUDA variant's chunked driver */
    j2ki_t1_load(&st2, c, ws, w, h, orient, style);
    j2ki_t1_build_cols(&st2);
    memset(buf2, 0xA5, cap < CAP ? cap + 16 : CAP);
    len2 = 0;
    rc2 = code_chunked(&st2, numbps, style, bps, frac, buf2, cap, ps2, &len2);
    CHECK(rc1 == rc2, "chunked %dx%d style %#x bps %d: rc %d vs %d", w, h, style, bps, rc1, rc2);
    if (rc1 != rc2) {
        ok = 0;
    } else if (rc1 == 0) {
        int okc = len1 == len2 && memcmp(buf1, buf2, len1) == 0;
        for (i = 0; i < np; i++) {
            okc &= ps1[i].rate == ps2[i].rate && ps1[i].term == ps2[i].term;
            okc &= memcmp(&ps1[i].dist, &ps2[i].dist, sizeof(double)) == 0;
        }
        okc &= memcmp(st1.ctx, st2.ctx, sizeof(st1.ctx)) == 0;
        CHECK(okc, "chunked %s %dx%d orient %d style %#x bps %d frac %d numbps %d: len %u vs %u",
              class_name[cls], w, h, orient, style, bps, frac, numbps, len1, len2);
        ok &= okc;
    }
    if (rc1 == J2KC_ERR_BUFSIZE && cap < CAP)   /* nothing written past the capacity */
        CHECK(buf2[cap] == 0xA5, "chunked %dx%d: byte written past the capacity %u", w, h, cap);
    if (!ok)
        nb_mismatch_blocks++;
    return ok;
}

/* one level of the reversible 5/3 (F.3.8) along n samples at step `step`, low half first */
static void dwt53_1d(int32_t *x, int n, ptrdiff_t step, int32_t *tmp)
{
    int i, nl = (n + 1) / 2, nh = n / 2;
    if (n < 2)
        return;
    for (i = 0; i < n; i++)
        tmp[i] = x[i * step];
    for (i = 0; i < nh; i++) {
        int32_t a = tmp[2 * i], b = 2 * i + 2 < n ? tmp[2 * i + 2] : tmp[2 * i];
        tmp[2 * i + 1] -= (a + b) >> 1;
    }
    for (i = 0; i < nl; i++) {
        int32_t a = i > 0 ? tmp[2 * i - 1] : tmp[1], b = 2 * i + 1 < n ? tmp[2 * i + 1] : tmp[2 * i - 1];
        tmp[2 * i] += (a + b + 2) >> 2;
    }
    for (i = 0; i < nl; i++)
        x[i * step] = tmp[2 * i];
    for (i = 0; i < nh; i++)
        x[(nl + i) * step] = tmp[2 * i + 1];
}

/* `levels` levels of the 2-D 5/3 on img (nw x nh, powers of 2, in place, Mallat layout) */
static void dwt53_2d(int32_t *img, int nw, int nh, int levels)
{
    static int32_t tmp[4096];
    int l, i, mw = nw, mh = nh;
    for (l = 0; l < levels; l++, mw >>= 1, mh >>= 1) {
        for (i = 0; i < mh; i++)
            dwt53_1d(img + (ptrdiff_t)i * nw, mw, 1, tmp);
        for (i = 0; i < mw; i++)
            dwt53_1d(img + i, mh, nw, tmp);
    }
}

/* codes every cw x ch block of the subbands of a DWT'd nw x nh picture, indices >> q */
static void code_subbands(int cls, int32_t *img, int nw, int nh, int levels, int q, int style, int bps,
                          int cw, int ch)
{
    static int32_t blk[MAXN];
    int l, b, x0, y0, x, y;
    for (l = 1; l <= levels; l++) {
        int mw = nw >> l, mh = nh >> l;
        for (b = 1; b <= 3; b++) {          /* HL, LH, HH */
            int bx = b & 1 ? mw : 0, by = b & 2 ? mh : 0;
            int orient = b;
            for (y0 = 0; y0 < mh; y0 += ch)
                for (x0 = 0; x0 < mw; x0 += cw) {
                    int bw = j2ki_imin(cw, mw - x0), bh = j2ki_imin(ch, mh - y0);
                    for (y = 0; y < bh; y++)
                        for (x = 0; x < bw; x++) {
                            int32_t v = img[(ptrdiff_t)(by + y0 + y) * nw + bx + x0 + x];
                            blk[y * bw + x] = v < 0 ? -((-v) >> q) : v >> q;
                        }
                    run_block(cls, blk, bw, bw, bh, orient, style, bps, 0, CAP);
                }
        }
    }
}

/* synthetic nw x nh picture: gradient, sharp rectangles, a texture, noise; 12 bits */
static void synth_picture(int32_t *img, int nw, int nh)
{
    int x, y, i;
    int rx[4], ry[4], rw[4], rh[4], rv[4];
    for (i = 0; i < 4; i++) {
        rx[i] = (int)(test_rand() % (uint32_t)nw);
        ry[i] = (int)(test_rand() % (uint32_t)nh);
        rw[i] = 4 + (int)(test_rand() % 40u);
        rh[i] = 4 + (int)(test_rand() % 40u);
        rv[i] = (int)(test_rand() % 1500u);
    }
    for (y = 0; y < nh; y++)
        for (x = 0; x < nw; x++) {
            double v = 1500 + 6 * x - 4 * y + 200 * sin(x * 0.31) * cos(y * 0.17);
            for (i = 0; i < 4; i++)
                if (x >= rx[i] && x < rx[i] + rw[i] && y >= ry[i] && y < ry[i] + rh[i])
                    v += rv[i];
            v += (int)(test_rand() % 17u) + (int)(test_rand() % 17u) - 16;
            img[y * nw + x] = (int32_t)(v < 0 ? 0 : v > 4095 ? 4095 : v);
        }
}

static void mq_chains(const char *name, int32_t *img, int nw, int nh, int levels, int q, int cw, int ch);

static void test_corpus(void)
{
    static int32_t img[1024 * 1024];
    static uint8_t row[1998 * 6];
    const char *path = "/work/shared/corpus/bar_interior_1998x1080_xyz12.ppm.xz";
    char cmd[256];
    FILE *f;
    int w = 0, h = 0, maxv = 0, c, y, x, fields = 0;
    int before = nb_mismatch_blocks;
    f = fopen(path, "rb");
    if (!f) {
        printf("# corpus picture absent: skipped\n");
        return;
    }
    fclose(f);
    snprintf(cmd, sizeof(cmd), "xz -dc %s 2>/dev/null", path);
    f = popen(cmd, "r");
    if (!f || fgetc(f) != 'P' || fgetc(f) != '6') {
        printf("# corpus picture unreadable: skipped\n");
        if (f)
            pclose(f);
        return;
    }
    while (fields < 3 && (c = fgetc(f)) != EOF) {      /* header: w h maxval, # comments */
        if (c == '#') {
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
        } else if (c >= '0' && c <= '9') {
            int v = c - '0';
            while ((c = fgetc(f)) >= '0' && c <= '9')
                v = 10 * v + c - '0';
            if (fields == 0) w = v; else if (fields == 1) h = v; else maxv = v;
            fields++;
        }
    }
    if (w != 1998 || h < 1024 || maxv < 256) {
        printf("# corpus picture: unexpected header %d %d %d: skipped\n", w, h, maxv);
        pclose(f);
        return;
    }
    for (y = 0; y < 1024; y++) {
        if (fread(row, 6, (size_t)w, f) != (size_t)w)
            break;
        for (x = 0; x < 1024; x++)                       /* green, big-endian 16 bits */
            img[y * 1024 + x] = (row[(x + 400) * 6 + 2] << 8 | row[(x + 400) * 6 + 3]) - 2048;
    }
    pclose(f);
    if (y < 1024) {
        printf("# corpus picture short: skipped\n");
        return;
    }
    dwt53_2d(img, 1024, 1024, 3);
    code_subbands(D_CORPUS, img, 1024, 1024, 3, 0, 0, 1, 64, 64);
    code_subbands(D_CORPUS, img, 1024, 1024, 3, 3, J2KI_CBLK_VCAUSAL | J2KI_CBLK_SEGMARK, 1, 64, 64);
    code_subbands(D_CORPUS, img, 1024, 1024, 3, 1, J2KI_CBLK_BYPASS | J2KI_CBLK_TERMALL, 4, 64, 64);
    code_subbands(D_CORPUS, img, 1024, 1024, 3, 2, J2KI_CBLK_RESET | J2KI_CBLK_PTERM, 1, 256, 16);
    code_subbands(D_CORPUS, img, 1024, 1024, 3, 2, 0, 1, 16, 256);
    printf("%s corpus dwt blocks\n", nb_mismatch_blocks == before ? "ok" : "FAIL");
    /* the MQ chains of its 3-level subbands as 32x32 and 64x64 blocks, lossless and >> 3 */
    mq_chains("corpus q0", img, 1024, 1024, 3, 0, 32, 32);
    mq_chains("corpus q0", img, 1024, 1024, 3, 0, 64, 64);
    mq_chains("corpus q3", img, 1024, 1024, 3, 3, 32, 32);
    mq_chains("corpus q3", img, 1024, 1024, 3, 3, 64, 64);
}

/*
 * What the MQ threads of J2KI_T1_CUDA_PAR face (t1_par_cuda.cuh: one thread per code-block,
 * 32 blocks per warp in the order of the key w h numbps, the chunk's symbols of a block in
 * one loop): the subbands of a DWT'd picture (nw x nh, `levels`, indices >> q) coded in cw x
 * ch blocks by the chunked driver, and per chunk of 4 bit-planes: the symbols, the longest
 * block (its MQ chain), the warps' iterations (the sum over warps of their longest block:
 * what the SMs run) and the longest warp. Printed as comment lines; the design comment of
 * t1_par_cuda.cuh quotes them.
 */
typedef struct MqBlock {
    uint32_t key, cnt[MQ_CHUNKS];
} MqBlock;

static int mq_key_cmp(const void *a, const void *b)
{
    const MqBlock *x = a, *y = b;
    return x->key < y->key ? 1 : x->key > y->key ? -1 : 0;
}

static void mq_chains(const char *name, int32_t *img, int nw, int nh, int levels, int q, int cw, int ch)
{
    static int32_t blk[MAXN];
    static MqBlock bl[16384];
    uint64_t tot[MQ_CHUNKS] = { 0 }, iters[MQ_CHUNKS] = { 0 }, all = 0, all_iters = 0;
    uint32_t lmax[MQ_CHUNKS] = { 0 }, bmax = 0, wmax = 0;
    int n = 0, l, b, x0, y0, x, y, c, i;
    for (l = 1; l <= levels; l++) {
        int mw = nw >> l, mh = nh >> l;
        for (b = 1; b <= 3; b++) {
            int bx = b & 1 ? mw : 0, by = b & 2 ? mh : 0;
            for (y0 = 0; y0 < mh; y0 += ch)
                for (x0 = 0; x0 < mw && n < 16384; x0 += cw) {
                    int bw = j2ki_imin(cw, mw - x0), bh = j2ki_imin(ch, mh - y0), numbps;
                    uint32_t len = 0, acc;
                    for (y = 0; y < bh; y++)
                        for (x = 0; x < bw; x++) {
                            int32_t v = img[(ptrdiff_t)(by + y0 + y) * nw + bx + x0 + x];
                            blk[y * bw + x] = v < 0 ? -((-v) >> q) : v >> q;
                        }
                    st2.flags = fl2;
                    st2.mag = mg2;
                    acc = j2ki_t1_load(&st2, blk, bw, bw, bh, b, 0);
                    numbps = j2ki_t1_nbits(acc);
                    memset(&bl[n], 0, sizeof(bl[n]));
                    bl[n].key = (uint32_t)(bw * bh * numbps);
                    if (numbps) {
                        j2ki_t1_build_cols(&st2);
                        chunk_count = bl[n].cnt;
                        code_chunked(&st2, numbps, 0, 1, 0, buf2, CAP, ps2, &len);
                        chunk_count = NULL;
                    }
                    n++;
                }
        }
    }
    qsort(bl, (size_t)n, sizeof(bl[0]), mq_key_cmp);
    for (i = 0; i < n; i++) {
        uint32_t t = 0;
        for (c = 0; c < MQ_CHUNKS; c++) {
            tot[c] += bl[i].cnt[c];
            t += bl[i].cnt[c];
            if (bl[i].cnt[c] > lmax[c])
                lmax[c] = bl[i].cnt[c];
        }
        all += t;
        if (t > bmax)
            bmax = t;
    }
    for (i = 0; i < n; i += 32) {          /* warps of 32 sorted blocks */
        uint32_t wt = 0;
        for (c = 0; c < MQ_CHUNKS; c++) {
            uint32_t m = 0;
            int k;
            for (k = i; k < n && k < i + 32; k++)
                m = bl[k].cnt[c] > m ? bl[k].cnt[c] : m;
            iters[c] += m;
            wt += m;
        }
        all_iters += wt;
        if (wt > wmax)
            wmax = wt;
    }
    printf("# mq %s %dx%d blocks: %d blocks, %d warps, %llu symbols, longest block %u, "
           "warp iterations %llu (longest warp %u)\n", name, cw, ch, n, (n + 31) / 32,
           (unsigned long long)all, bmax, (unsigned long long)all_iters, wmax);
    for (c = 0; c < MQ_CHUNKS && tot[c]; c++)
        printf("#   chunk %d: %llu symbols, %.0f per block, longest block %u, warp iterations %llu\n", c,
               (unsigned long long)tot[c], (double)tot[c] / n, lmax[c], (unsigned long long)iters[c]);
}

static void print_stats(void)
{
    static const char *const tn[3] = { "SPP", "MRP", "CUP" };
    int c, t, i;
    printf("# class            pass  passes  syms/pass  stripe-passes  rounds mean  max  "
           "hist 1 2 3 4 5 6 7 8 9+\n");
    for (c = 0; c < NB_CLASSES; c++)
        for (t = 0; t < 3; t++) {
            const J2kiT1pStats *s = &stats[c];
            if (!s->nb_passes[t])
                continue;
            printf("# %-16s %s %8llu %10.1f %14llu %12.3f %4d  ", class_name[c], tn[t],
                   (unsigned long long)s->nb_passes[t], (double)s->nb_syms[t] / s->nb_passes[t],
                   (unsigned long long)s->nb_stripes[t],
                   (double)s->rounds[t] / (double)s->nb_stripes[t], s->max_rounds[t]);
            for (i = 0; i < 9; i++)
                printf(" %llu", (unsigned long long)s->hist[t][i]);
            printf("\n");
        }
}

int main(void)
{
    static const int sizes[][2] = {
        { 1, 1 }, { 1, 7 }, { 1, 64 }, { 7, 1 }, { 64, 1 }, { 5, 3 }, { 3, 5 }, { 4, 4 },
        { 8, 3 }, { 13, 9 }, { 32, 32 }, { 64, 64 }, { 16, 64 }, { 64, 16 }, { 33, 17 },
        { 64, 63 }, { 256, 16 }, { 1024, 4 }, { 4, 1024 }, { 128, 32 },
        /* the rest of the legal shapes (Part 1 A.6.1: 4..1024, at most 4,096 samples) */
        { 32, 128 }, { 64, 32 }, { 32, 64 }, { 16, 256 }, { 512, 8 }, { 8, 512 }, { 128, 16 },
        { 4, 4 }, { 1000, 4 }, { 5, 700 }, { 100, 40 }
    };
    /* the code-block shapes of the synthetic DWT pictures: every legal shape of 32 x 32 or more
     * samples, and 16 x 16, 4 x 4 */
    static const int cshapes[][2] = {
        { 64, 64 }, { 128, 32 }, { 32, 128 }, { 64, 32 }, { 32, 64 }, { 256, 16 }, { 16, 256 },
        { 512, 8 }, { 8, 512 }, { 1024, 4 }, { 4, 1024 }, { 32, 32 }, { 16, 16 }, { 4, 4 },
        { 128, 16 }, { 16, 128 }
    };
    const int nb_sizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    static int32_t pic[128 * 128 + 4 * 4096 * 16];
    int si, cls, style, it, before, nb_dwt;
    test_seed("t1_par", 0x7131A2u);

    /* random blocks: every size x class x style */
    before = nb_mismatch_blocks;
    for (si = 0; si < nb_sizes; si++)
        for (cls = D_VSPARSE; cls <= D_DENSE; cls++)
            for (style = 0; style < 64; style++) {
                int w = sizes[si][0], h = sizes[si][1];
                int frac = test_rand() % 3 == 0 ? 6 : 0;
                int mb = 1 + (int)(test_rand() % 20u);
                int bps = 1 + (int)(test_rand() % 6u);
                if ((w * h > 1024 || w > 64) && test_rand() % 4)
                    continue;                               /* keep the run short */
                gen(cls, w, h, mb, frac);
                run_block(cls, coefs, w, w, h, (int)(test_rand() % 4u), style, bps, frac, CAP);
            }
    printf("%s random blocks: %d blocks\n", nb_mismatch_blocks == before ? "ok" : "FAIL", nb_blocks);

    /* synthetic picture, 2-level 5/3, various quantisations and styles */
    before = nb_mismatch_blocks;
    for (it = 0; it < 24; it++) {
        synth_picture(pic, 128, 128);
        dwt53_2d(pic, 128, 128, 2);
        code_subbands(D_DWT, pic, 128, 128, 2, (int)(test_rand() % 4u), (int)(test_rand() % 64u),
                      1 + (int)(test_rand() % 6u), 64, 64);
    }
    /* a picture of 4 x 4 code-blocks of each shape, 2 levels: the level-1 subbands hold 2 x 2
     * full blocks, the level-2 ones one */
    nb_dwt = nb_blocks;
    for (si = 0; si < (int)(sizeof(cshapes) / sizeof(cshapes[0])); si++)
        for (it = 0; it < 2; it++) {
            const int cw = cshapes[si][0], ch = cshapes[si][1];
            synth_picture(pic, 4 * cw, 4 * ch);
            dwt53_2d(pic, 4 * cw, 4 * ch, 2);
            code_subbands(D_DWT, pic, 4 * cw, 4 * ch, 2, (int)(test_rand() % 4u), (int)(test_rand() % 64u),
                          1 + (int)(test_rand() % 6u), cw, ch);
        }
    printf("%s synthetic dwt blocks (%d of every legal shape from 4 x 4 to 1024 x 4 and 4 x 1024)\n",
           nb_mismatch_blocks == before ? "ok" : "FAIL", nb_blocks - nb_dwt);

    /* too small buffers: the same error from both */
    before = nb_mismatch_blocks;
    for (it = 0; it < 300; it++) {
        int w = 1 + (int)(test_rand() % 64u), h = 1 + (int)(test_rand() % 64u);
        gen(D_DENSE, w, h, 1 + (int)(test_rand() % 12u), 0);
        run_block(D_DENSE, coefs, w, w, h, (int)(test_rand() % 4u), (int)(test_rand() % 64u),
                  1 + (int)(test_rand() % 6u), 0, test_rand() % (uint32_t)(w * h + 1));
    }
    printf("%s small buffers\n", nb_mismatch_blocks == before ? "ok" : "FAIL");

    test_corpus();
    printf("# %d blocks compared, %d differed; chunks of %d planes filled their symbol bound to "
           "at most %.3f\n", nb_blocks, nb_mismatch_blocks, CHUNK_PLANES, max_fill);
    print_stats();
    return test_done("t1_par");
}
