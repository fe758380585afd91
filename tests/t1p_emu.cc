/*
 * J2KI_T1_CUDA_PAR's kernels (j2kcuda/src/cuda/t1_par_cuda.cuh, this very source) run on the host:
 * every warp is 32 std::threads, the warp intrinsics exchange through a per-warp array
 * between two barriers (so a lane that leaves early, or a collective some lanes skip,
 * deadlocks instead of passing), the launches of j2ki_t1_cuda_variant as loops (all chunk
 * pairs, sorted order replaced by a permutation), leaving out the thread blocks that
 * t1p_chunk_kernel leaves out (t1p_may_work). Every code-block is compared with the
 * serial coder (j2ki_t1_load + j2ki_t1_code): result, data bytes, nothing written past the
 * capacity, every pass's rate, distortion (bit for bit), term and slope, the error flag.
 * Blocks of 13 sizes up to 64 wide (odd seeds: up to 32 wide and 128 high), so both kernels
 * (1 and 2 columns per lane), then every legal code-block shape from 1024 x 4 to 4 x 1024 with
 * its edge blocks (column groups, many stripes), four magnitude
 * classes, frac_bits 0 and 5, capacity overflows and too many bit-planes, 14 code-block
 * styles. First, the BYPASS raw packer t1p_pack_raw alone against j2ki_mqc_raw_put (test_pack).
 * Not a GPU: memory ordering, timing and the device compiler are not tested here
 * (check_cuda does that on a device: the variant is the default for every code-block shape).
 * Build and run: make B=build check-t1p-emu (g++ with C++20, the CUDA headers; no GPU).
 * Usage: t1p_emu [blocks style bypass_start seed [max_bits [stops [shape_w shape_h]]]] (one
 * configuration; none: all of them).
 */
#include "cuda/t1_cuda.h"      /* first: the CUDA headers' qualifiers, redefined below */

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __noinline__
#undef __shared__
#undef __launch_bounds__
#undef __align__
#undef __grid_constant__
#define __grid_constant__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __shared__
#define __launch_bounds__(...)
#define __align__(x) __attribute__((aligned(x)))

#include "hd/t1_core.h"
#include "hd/t1_par.h"
#include "hd/t1_stop.h"

struct Dim { unsigned x; };
thread_local Dim threadIdx, blockIdx;
static Dim blockDim = { 128 };
alignas(16) static uint8_t t1p_smem_words[1 << 17];
static std::barrier<> *g_bar;
static uint64_t g_x[32];
thread_local unsigned t_lane;
static std::mutex g_mu;
static long g_exchanges;

static void wsync() { g_bar->arrive_and_wait(); }
template <class T> static T xchg(T v, int src, bool valid)
{
    g_x[t_lane] = (uint64_t)v;
    wsync();
    T r = valid ? (T)g_x[src] : v;
    wsync();
    if (t_lane == 0)
        g_exchanges++;
    return r;
}
static unsigned __shfl_up_sync(unsigned, unsigned v, int d) { int s = (int)t_lane - d; return xchg(v, s, s >= 0); }
static unsigned __shfl_down_sync(unsigned, unsigned v, int d) { int s = (int)t_lane + d; return xchg(v, s, s < 32); }
static unsigned __shfl_sync(unsigned, unsigned v, int s) { return xchg(v, s, true); }
static long long __shfl_xor_sync(unsigned, long long v, int d) { return xchg(v, (int)(t_lane ^ (unsigned)d), true); }
static unsigned __ballot_sync(unsigned, int p)
{
    unsigned r = 0;
    g_x[t_lane] = p != 0;
    wsync();
    for (int i = 0; i < 32; i++)
        r |= (unsigned)g_x[i] << i;
    wsync();
    return r;
}
static int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
static void __syncwarp() { wsync(); }
static void t1_tables_load(bool = false) {}
/* t1p_chunk_kernel itself is compiled here but not run (the launches call its warp and thread
 * parts, t1p_model_warp and t1p_mq_thread, directly); its block-wide test is not emulated */
static int __syncthreads_or(int)
{
    printf("FAIL t1p_emu: __syncthreads_or is not emulated\n");
    exit(1);
}
static unsigned __brev(unsigned v) { unsigned r = 0; for (int i = 0; i < 32; i++) r |= ((v >> i) & 1u) << (31 - i); return r; }
static int __popc(unsigned v) { return __builtin_popcount(v); }
template <class T> static T __ldg(const T *p) { return *p; }
static unsigned atomicOr(uint32_t *p, uint32_t v) { std::lock_guard<std::mutex> l(g_mu); unsigned o = *p; *p |= v; return o; }
static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }
/* stripe-passes the model warp skipped (SPP, MRP) or coded by the quiet-cleanup shortcut */
static std::atomic<long> g_quiet[3];
static long g_cta_skipped;    /* thread blocks left out by t1p_may_work, as the kernel leaves them */
#define T1P_QUIET_HOOK(type, lane) do { if ((lane) == 0) g_quiet[type]++; } while (0)

#include "cuda/t1_par_cuda.cuh"

/* ---- driver ---- */
static uint32_t rnd_state = 12345;
static uint32_t rnd() { rnd_state ^= rnd_state << 13; rnd_state ^= rnd_state >> 17; rnd_state ^= rnd_state << 5; return rnd_state; }

/* stops: the early stop's path (t1_stop.h) too: about half of the blocks get a pass limit at
 * the end of chunk s - 1 (s = 1 .. J2KI_T1S_STEPS, where they have passes beyond), set before
 * launch s + 1 as the decision step does; the reference codes them with j2ki_t1_code_lim. */

/* shape_w x shape_h: every block of the run is a code-block of that nominal size (Part 1
 * A.6.1: widths and heights 4..1024, at most 4,096 samples) or an edge block of it (narrower,
 * shorter or both, as at a band's edge), so that the layout is the one t1_cuda.cu gives a
 * frame of that code-block size; 0 x 0: the 13 mixed sizes of the tables below */
static int g_shape_w = 0, g_shape_h = 0;

static int run_cfg(int nblk, int style, int bps, uint32_t seed, int max_bits, int stops)
{
    rnd_state = seed ? seed : 1;
    g_exchanges = 0;
    int max_w = 0, max_h = 0;
    std::vector<J2kiCblkDev> cb(nblk);
    std::vector<int32_t> samples;
    size_t data = 0, npass = 0;
    /* wide: up to 64 columns, t1p_model_kernel<2>; narrow: up to 32, t1p_model_kernel<1> */
    static const int wide[][2] = { {32,32}, {64,64}, {33,17}, {1,1}, {5,3}, {64,16}, {16,64}, {7,1}, {1,7}, {63,64}, {40,40}, {32,4}, {64,5} };
    static const int narrow[][2] = { {32,32}, {31,32}, {17,33}, {1,1}, {5,3}, {32,16}, {16,64}, {7,1}, {1,7}, {32,128}, {20,20}, {32,4}, {8,5} };
    const int (*sz)[2] = (seed & 1) ? narrow : wide;
    for (int i = 0; i < nblk; i++) {
        int w = sz[i % 13][0], h = sz[i % 13][1], mb = 1 + rnd() % (uint32_t)max_bits, cls = rnd() % 4;
        if (g_shape_w) {
            const int e = i % 5;   /* 0, 1, 4: full; 2: narrower and shorter; 3: narrower or shorter */
            w = g_shape_w;
            h = g_shape_h;
            if (e == 2 || (e == 3 && rnd() % 2))
                w = 1 + (int)(rnd() % (uint32_t)g_shape_w);
            if (e == 2 || (e == 3 && w == g_shape_w))
                h = 1 + (int)(rnd() % (uint32_t)g_shape_h);
        }
        cb[i].w = (uint16_t)w; cb[i].h = (uint16_t)h; cb[i].stride = (uint32_t)w + 3;
        cb[i].buf = samples.size();
        cb[i].orient = (uint8_t)(rnd() % 4);
        cb[i].frac_bits = (uint8_t)(rnd() % 3 == 0 && mb <= 26 ? 5 : 0);
        cb[i].nb_mag_bits = 31;
        cb[i].max_passes = 3 * 31 - 2;
        cb[i].data_cap = (uint32_t)(w * h * 5 + 64);
        if (i % 17 == 16) cb[i].data_cap = 3;                /* overflow */
        if (i % 19 == 18) cb[i].nb_mag_bits = 1;             /* numbps too large (unless 0/1) */
        cb[i].data_off = data; data += cb[i].data_cap + 16;
        cb[i].pass_off = (uint32_t)npass; npass += cb[i].max_passes;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < (int)cb[i].stride; x++) {
                uint32_t q;
                const uint32_t lim = (uint32_t)((1ull << mb) - 1);
                if (cls == 0) q = rnd() % 13 == 0 ? rnd() & lim : 0;
                else if (cls == 1) q = rnd() & lim;
                else if (cls == 2) { double u = (rnd() + 0.5) / 4294967296.0; q = (uint32_t)(-log(u) * (double)(1u << (mb > 3 ? mb - 3 : 0))); q &= lim; }
                else q = (x < w / 2 && y < h / 2) ? rnd() & lim : 0;
                int32_t v = (int32_t)((q << cb[i].frac_bits) | (cb[i].frac_bits ? rnd() & 31 : 0));
                samples.push_back(rnd() & 1 ? -v : v);
            }
        max_w = w > max_w ? w : max_w; max_h = h > max_h ? h : max_h;
    }
    uint32_t n = (uint32_t)nblk;
    if (n % 7 == 0) { printf("FAIL t1p_emu: the block count must not be a multiple of 7\n"); return 1; }
    std::vector<uint32_t> nbps(n), stat(n), order(n), lim(n, 0), lim_at(n, 0);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t acc = 0;
        for (int y = 0; y < cb[i].h; y++)
            for (int x = 0; x < cb[i].w; x++) {
                int32_t v = samples[cb[i].buf + (size_t)y * cb[i].stride + x];
                acc |= v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
            }
        nbps[i] = (uint32_t)j2ki_t1_nbits(acc >> cb[i].frac_bits);
        stat[i] = 0;
        order[i] = (i * 7) % n;   /* a permutation: n is not a multiple of 7 (checked) */
        if (stops && rnd() % 2) {
            int s = 1 + (int)(rnd() % J2KI_T1S_STEPS);
            if (j2ki_t1s_chunk_end(s) < 3 * (int)nbps[i] - 2)
                lim_at[i] = (uint32_t)s;
        }
    }
    int nstop = 0;
    T1pLayout lay = t1p_layout(max_w, max_h);
    if (!t1p_usable(max_w, max_h)) { printf("FAIL not usable\n"); return 1; }
    std::vector<uint8_t> slots(n * lay.slot, 0xCD), dbuf(data, 0xA5);
    std::vector<J2kiPass> passes(npass);
    std::vector<J2kiCblkRes> res(n);
    uint32_t flag = 0;
    /* the launches of t1p_chunk_kernel: launch c models chunk c and MQ-codes chunk c - 1
     * (here the model first, so that a wrong copy of the counts or symbols shows) */
    std::vector<uint32_t> wbuf(4 * (size_t)lay.ns * lay.ws);
    uint32_t *words[4] = { &wbuf[0], &wbuf[(size_t)lay.ns * lay.ws], &wbuf[2 * (size_t)lay.ns * lay.ws],
                           &wbuf[3 * (size_t)lay.ns * lay.ws] };
    uint16_t mq_ctx[T1P_CTX_STEP];
    for (int c = 0; c <= T1P_CHUNKS; c++) {
        for (uint32_t i = 0; i < n; i++)           /* decision step c - 1 */
            if (lim_at[i] && (int)lim_at[i] == c - 1) {
                lim[i] = (uint32_t)j2ki_t1s_chunk_end(c - 1);
                nstop++;
            }
        for (unsigned b = 0; c < T1P_CHUNKS && b < (n + 3) / 4; b++) {
            /* the kernel's thread block of these 4 model warps leaves when none may work */
            int any = 0;
            for (unsigned wb = 0; wb < 4; wb++)
                any |= t1p_may_work(0, c, b * 4 + wb, n, order.data(), nbps.data());
            if (!any) {
                g_cta_skipped++;
                continue;
            }
            for (unsigned wb = 0; wb < 4; wb++) {
                std::barrier<> bar(32);
                g_bar = &bar;
                std::vector<std::thread> th;
                for (unsigned l = 0; l < 32; l++)
                    th.emplace_back([&, l, wb, b] {
                        t_lane = l;
                        if (lay.gr)
                            t1p_model_warp<2, true>(b * 4 + wb, l, words[wb], samples.data(), cb.data(), order.data(),
                                                    n, style, bps, passes.data(), nbps.data(), stat.data(),
                                                    slots.data(), lay, c, stops ? lim.data() : NULL);
                        else if (lay.nc == 2)
                            t1p_model_warp<2, false>(b * 4 + wb, l, words[wb], samples.data(), cb.data(), order.data(), n,
                                              style, bps, passes.data(), nbps.data(), stat.data(), slots.data(),
                                              lay, c, stops ? lim.data() : NULL);
                        else
                            t1p_model_warp<1, false>(b * 4 + wb, l, words[wb], samples.data(), cb.data(), order.data(), n,
                                              style, bps, passes.data(), nbps.data(), stat.data(), slots.data(),
                                              lay, c, stops ? lim.data() : NULL);
                    });
                for (auto &t : th) t.join();
            }
        }
        for (unsigned q = 0; c > 0 && q < (n + 127) / 128; q++) {
            /* the same for the thread block of 128 MQ threads */
            int any = 0;
            for (unsigned j = q * 128; j < q * 128 + 128; j++)
                any |= t1p_may_work(1, c, j, n, order.data(), nbps.data());
            if (!any) {
                g_cta_skipped++;
                continue;
            }
            for (unsigned j = q * 128; j < q * 128 + 128 && j < n; j++)
                t1p_mq_thread(j, mq_ctx, cb.data(), order.data(), n, style, bps, dbuf.data(), passes.data(),
                              res.data(), &flag, nbps.data(), stat.data(), slots.data(), lay, c - 1,
                              stops ? lim.data() : NULL);
        }
    }
    /* reference */
    static uint16_t fl[1 << 15]; static uint32_t mg[1 << 15];   /* (w + 2)(h + 2) <= 6156 */
    static J2kiT1State st; static uint8_t rbuf[1 << 16]; static J2kiPass rp[J2KI_T1_MAX_PASSES];
    int bad = 0, nerr = 0; uint32_t rflag = 0; size_t bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        st.flags = fl; st.mag = mg;
        uint32_t acc = j2ki_t1_load(&st, samples.data() + cb[i].buf, cb[i].stride, cb[i].w, cb[i].h, cb[i].orient, style);
        int numbps = j2ki_t1_nbits(acc >> cb[i].frac_bits);
        J2kiCblkRes r = { 0, numbps, 0, 0 };
        if (numbps > cb[i].nb_mag_bits || numbps > J2KI_T1_MAX_PLANES) r.err = J2KC_ERR_INTERNAL;
        else if (numbps > 0) {
            r.err = j2ki_t1_code_lim(&st, numbps, style, bps, cb[i].frac_bits, rbuf, cb[i].data_cap, rp, cb[i].max_passes,
                                     &r.len, (int)lim[i]);
            r.nb_passes = r.err ? 0 : lim[i] ? (int)lim[i] : 3 * numbps - 2;
        }
        if (r.err) { rflag = 1; nerr++; }
        const J2kiCblkRes &g = res[i];
        int ok = g.err == r.err && g.numbps == r.numbps && g.nb_passes == r.nb_passes && g.len == r.len;
        if (ok && !r.err) {
            ok &= memcmp(dbuf.data() + cb[i].data_off, rbuf, r.len) == 0;
            for (int k = 0; k < r.nb_passes; k++) {
                const J2kiPass &a = passes[cb[i].pass_off + k];
                ok &= a.rate == rp[k].rate && a.term == rp[k].term && memcmp(&a.dist, &rp[k].dist, 8) == 0 && a.slope == 0;
                /* est: causal, the same, except on the pass a stopped block ends on: the GPU keeps
                 * the value its decisions saw (the block went on), the reference has the end */
                ok &= a.est == rp[k].est || (lim[i] && k == r.nb_passes - 1);
            }
            bytes += r.len;
        }
        for (int k = 0; k < 16; k++)      /* nothing past the capacity */
            ok &= dbuf[cb[i].data_off + cb[i].data_cap + k] == 0xA5;
        if (!ok) {
            bad++;
            printf("FAIL block %u %dx%d: err %d/%d numbps %d/%d passes %d/%d len %u/%u\n", i, cb[i].w, cb[i].h,
                   g.err, r.err, g.numbps, r.numbps, g.nb_passes, r.nb_passes, g.len, r.len);
        }
    }
    if (flag != rflag) { bad++; printf("FAIL flag %u vs %u\n", flag, rflag); }
    int maxnb = 0;
    for (uint32_t i = 0; i < n; i++)
        maxnb = (int)nbps[i] > maxnb ? (int)nbps[i] : maxnb;
    printf("%s t1p_emu: %u blocks (%s, up to %d bit-planes, style %#x bypass_start %d seed %u), %d failing as the reference, %d stopped "
           "early, %zu bytes identical, %ld warp exchanges\n", bad ? "FAIL" : "ok", n,
           lay.gr ? "NC 2, groups" : lay.nc == 2 ? "NC 2" : "NC 1", maxnb, style, bps, seed,
           nerr, nstop, bytes, g_exchanges);
    return bad != 0;
}

/* t1p_pack_raw (32 lanes as threads) against j2ki_mqc_raw_put, bit by bit: random bits, runs of
 * ones (every other byte 0xFF, then 0x7F after the stuffed 0: the longest chains of stuffing
 * decisions), mostly ones, from the states the packer is left in by a prefix of 0 to 40 bits. */
static int test_pack(void)
{
    static uint8_t syms[4096], ref[8192];
    static uint32_t bits[(2 * 4096 + 7 + 31) / 32 + 1];
    int fails = 0, trials = 0, ffs = 0;
    for (int t = 0; t < 600; t++) {
        const int kind = t % 4, np = (int)(rnd() % 41);
        const uint32_t n = t < 8 ? (uint32_t)t : rnd() % 4096;
        J2kiMqc m;
        j2ki_mqc_raw_init(&m, ref, sizeof(ref), 0);
        for (int i = 0; i < np; i++)
            j2ki_mqc_raw_put(&m, kind == 0 ? (int)(rnd() & 1) : kind == 3 ? (int)(rnd() % 64 != 0) : 1);
        const uint32_t c0 = m.c, ct0 = (uint32_t)m.ct, b0 = (uint32_t)m.b;
        const int32_t bp0 = m.bp;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t bit = kind == 0 ? rnd() & 1 : kind == 1 ? 1 : kind == 2 ? (i / 37) & 1 ^ 1 : rnd() % 64 != 0;
            syms[i] = J2KI_T1P_SYM(J2KI_T1P_CX_RAW, bit);
            j2ki_mqc_raw_put(&m, (int)bit);
        }
        for (int32_t i = bp0; i < m.bp; i++)
            ffs += ref[i] == 0xFF;
        uint32_t K[32], c[32], ct[32], b[32];
        std::barrier<> bar(32);
        g_bar = &bar;
        std::vector<std::thread> th;
        for (unsigned l = 0; l < 32; l++)
            th.emplace_back([&, l] {
                t_lane = l;
                c[l] = c0; ct[l] = ct0; b[l] = b0;
                K[l] = t1p_pack_raw(syms, syms, n, c[l], ct[l], b[l], bits, l);
            });
        for (auto &x : th) x.join();
        int ok = K[0] == (uint32_t)(m.bp - bp0) && memcmp(syms, ref + bp0, K[0]) == 0 && c[0] == m.c &&
                 ct[0] == (uint32_t)m.ct && b[0] == (uint32_t)m.b;
        for (int l = 1; l < 32; l++)
            ok &= K[l] == K[0] && c[l] == c[0] && ct[l] == ct[0] && b[l] == b[0];
        trials++;
        if (!ok && fails++ < 5)
            printf("FAIL pack: trial %d kind %d prefix %d n %u: %u bytes (ref %d), c %x/%x ct %u/%d b %x/%x\n", t, kind, np,
                   n, K[0], (int)(m.bp - bp0), c[0], m.c, ct[0], m.ct, b[0], m.b);
    }
    printf("%s t1p_emu: raw packing, %d trials (%d bytes 0xFF), %d failed\n", fails ? "FAIL" : "ok", trials, ffs, fails);
    return fails != 0;
}

int main(int argc, char **argv)
{
    static const int cfgs[][3] = { { 0x00, 1, 1 }, { 0x3f, 1, 2 }, { 0x01, 1, 3 }, { 0x01, 3, 4 }, { 0x05, 2, 5 },
                                   { 0x08, 1, 6 }, { 0x10, 1, 7 }, { 0x20, 1, 8 }, { 0x02, 1, 9 }, { 0x19, 2, 10 },
                                   { 0x2e, 1, 11 }, { 0x11, 4, 12 }, { 0x3f, 3, 13 }, { 0x0c, 1, 14 } };
    int fails = argc > 4 ? 0 : test_pack();      /* one configuration: not the packer's trials */
    if (argc > 8) {                 /* ... stops shape_w shape_h */
        g_shape_w = atoi(argv[7]);
        g_shape_h = atoi(argv[8]);
    }
    if (argc > 4)
        return run_cfg(atoi(argv[1]), (int)strtol(argv[2], 0, 0), atoi(argv[3]), (uint32_t)atoi(argv[4]),
                       argc > 5 ? atoi(argv[5]) : 14, argc > 6 ? atoi(argv[6]) : 0);
    for (const auto &c : cfgs)
        fails += run_cfg(40, c[0], c[1], 12345u * (uint32_t)c[2], 14, 0);
    fails += run_cfg(20, 0x00, 1, 7, 31, 0);      /* up to 31 bit-planes: all 8 chunks */
    fails += run_cfg(20, 0x3f, 2, 8, 31, 0);
    /* the early stop's ends: plain, BYPASS (a cleanup that ends its segment, or not: bypass_start
     * 1 and 4), TERMALL, PTERM, RESET + SEGMARK, every style; up to 31 bit-planes */
    static const int scfgs[][3] = { { 0x00, 1, 21 }, { 0x01, 1, 22 }, { 0x01, 4, 23 }, { 0x04, 1, 24 },
                                    { 0x10, 1, 25 }, { 0x22, 1, 26 }, { 0x3f, 2, 27 } };
    for (const auto &c : scfgs)
        fails += run_cfg(40, c[0], c[1], 12345u * (uint32_t)c[2], 20, 1);
    fails += run_cfg(20, 0x00, 1, 28, 31, 1);
    /* the flat loop (j2ki_t1p_code_run, its states read a decision ahead) on more seeds: plain,
     * VCAUSAL, PTERM with stops, and 64 x 64 blocks */
    fails += run_cfg(40, 0x00, 1, 12345u * 31, 14, 0);
    fails += run_cfg(40, 0x08, 1, 12345u * 32, 16, 0);
    fails += run_cfg(40, 0x10, 1, 12345u * 33, 20, 1);
    g_shape_w = g_shape_h = 64;
    fails += run_cfg(11, 0x00, 1, 12345u * 34, 16, 1);
    g_shape_w = g_shape_h = 0;
    /* every style at 31 bit-planes without stops */
    fails += run_cfg(20, 0x3f, 2, 8, 31, 0);
    /* every legal code-block shape (Part 1 A.6.1: 4..1024, at most 4,096 samples) with its edge
     * blocks: the column groups of blocks wider than 64 (t1p_model_warp), the many stripes of
     * the tall ones, the words at ws = max_w; styles in turn, and the
     * early stop on every other shape */
    static const int shapes[][2] = { { 64, 64 }, { 128, 32 }, { 32, 128 }, { 64, 32 }, { 32, 64 }, { 256, 16 },
                                     { 16, 256 }, { 512, 8 }, { 8, 512 }, { 1024, 4 }, { 4, 1024 }, { 4, 4 },
                                     { 128, 16 }, { 16, 16 } };
    static const int sstyles[] = { 0x00, 0x3f, 0x01, 0x08, 0x2e, 0x11, 0x04, 0x20, 0x19, 0x10, 0x02, 0x3f, 0x0c,
                                   0x01 };
    int nshape = 0;
    for (int si = 0; si < (int)(sizeof(shapes) / sizeof(shapes[0])); si++) {
        g_shape_w = shapes[si][0];
        g_shape_h = shapes[si][1];
        /* the tall shapes' stripes cost the emulation most: fewer planes there */
        const int area = g_shape_w * g_shape_h, mb = g_shape_h >= 256 ? 8 : area >= 2048 ? 12 : 16;
        fails += run_cfg(area >= 2048 ? 6 : 11, sstyles[si], 1 + si % 4, 777u + 31u * (uint32_t)si, mb, si % 2);
        nshape++;
    }
    g_shape_w = g_shape_h = 0;
    /* the quiet-stripe shortcuts of the model warp must have run (sparse and half-empty blocks) */
    const int quiet_ok = g_quiet[0] > 0 && g_quiet[1] > 0 && g_quiet[2] > 0;
    printf("%s t1p_emu: quiet stripe-passes skipped: SPP %ld, MRP %ld; cleanups by the run-length shortcut %ld\n",
           quiet_ok ? "ok" : "FAIL", g_quiet[0].load(), g_quiet[1].load(), g_quiet[2].load());
    fails += !quiet_ok;
    /* and the kernel's thread blocks without work left out (t1p_may_work) */
    printf("%s t1p_emu: thread blocks left out as the kernel leaves them (no bit-plane in their chunk): %ld\n",
           g_cta_skipped > 0 ? "ok" : "FAIL", g_cta_skipped);
    fails += g_cta_skipped == 0;
    printf("%s t1p_emu: %d of %d configurations failed\n", fails ? "FAIL" : "ok", fails,
           (int)(sizeof(cfgs) / sizeof(cfgs[0])) + 2 + (int)(sizeof(scfgs) / sizeof(scfgs[0])) + 8 + nshape);
    return fails != 0;
}
