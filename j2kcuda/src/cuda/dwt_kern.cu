/*
 * The CUDA forward DWT's kernels (device code only; ISO/IEC 15444-1 Annex F), see dwt_cuda.h.
 * One level d (F.4.2 2D_SD), like dwt_ref.c:
 *   VER_SD: d_buf -> d_tmp, columns lifted, rows written de-interleaved (L rows, then H rows);
 *   HOR_SD: d_tmp -> d_buf, rows lifted, samples written de-interleaved (L, then H).
 *
 * Both passes lift in registers: the lifting steps (F.4.8, the per-sample functions of
 * dwt_core.h) are fully unrolled over arrays indexed by compile-time constants only, so the
 * work per sample is the arithmetic of the steps plus about one instruction per load / store.
 *   - Vertical (j2ki_k_dwt*_ver, ver_tile()): a thread lifts one column over a tile of V_ROWS
 *     output rows plus HALO rows above and below (V_ROWS + 2 HALO registers). The lanes of a
 *     warp are 32 consecutive columns, so each row load and store of the warp is one coalesced
 *     128-byte access. One launch covers every row: the column's first tile starts at its
 *     first row, its last tile ends at its last row, and the rows those two need outside
 *     [0, h) are copied register to register as their mirror images (F.3.7).
 *   - Horizontal (j2ki_k_dwt*_hor, hor_segment()): a warp lifts a segment of 32 H_PAIRS
 *     (L, H) pairs of a row; lane l holds the pairs l, l + 32, ..., l + 32 (H_PAIRS - 1), each
 *     read by one 8-byte load where the row's alignment allows (else two 4-byte ones), so a load
 *     instruction of the warp reads 256 consecutive bytes. A lifting step takes the neighbour
 *     pair's sample from the next / previous lane by one shuffle (at the warp's wrap, lane 31 /
 *     lane 0, from the next / previous slot). Outputs go out de-interleaved, L to [0, nl) and
 *     H to [nl, w), 32 consecutive samples per store. The row's first segment starts at its
 *     first sample and its last one ends at its last sample: only their first / last slot
 *     reads samples outside [0, w), through the mirror of F.3.7.
 *   Short signals (a tile that passes both ends) read every sample through mirror() and check
 *   every store.
 *
 * Tiles are placed so that their first sample (register 0) has an even coordinate: register j
 * is low-pass for even j and high-pass for odd j whatever the parity of the origin u0 / v0
 * (F.3.7: even coordinates are low-pass). With p = origin & 1 the first tile so starts one
 * sample before the signal when p = 1; that sample, like every one outside [0, n), is read
 * mirrored and never stored. Neighbouring tiles overlap; where two store the same sample they
 * store the same value.
 *
 * Why the result equals dwt_ref.c's, bit for bit:
 *   - the same per-sample functions on the same operands: j2ki_dwt97_lift x + c * (a + b)
 *     with contraction off (the build passes --fmad=false), the 5/3 integer steps, H *= K and
 *     L *= 1/K as separate multiplications (F.4.8.2), the single-sample rule (F.4.6);
 *   - the signal ends: samples outside [0, n) are the periodic symmetric extension of F.3.7.
 *     A lifting step maps a signal symmetric about an end sample to one symmetric about it
 *     again (x + c * (a + b) with a and b swapped is the same float: + is commutative), so the
 *     end sample's two neighbours stay equal after every step: exactly the reference's rule
 *     that a missing neighbour equals the existing one (j2ki_dwt_h_nbrs / j2ki_dwt_l_nbrs);
 *   - the cuts between tiles: a sample at a tile's end lacks one neighbour and gets a wrong
 *     value (vertical: it is not updated; horizontal: it gets the value of another slot). A
 *     lifting step updates a sample from its two neighbours only, so the wrong values move one
 *     sample inwards per step: after the filter's S steps (4 for the 9/7, 2 for the 5/3) at
 *     most S samples at each end are wrong. HALO = S samples (vertical) and HP = S / 2 pairs
 *     (horizontal) on each side are lifted but never stored, so every stored sample saw only
 *     correct neighbours. By the same argument a stored sample depends on the input samples
 *     within S of it only, which bounds the samples outside [0, n) that must be mirrored exactly.
 */
extern "C" {
#include "hd/dwt_core.h"
}
#include "cuda/dwt_kern.h"

#ifndef DWT_PATH_HOOK /* the emulator counts the paths the threads take */
#define DWT_PATH_HOOK(path)
#endif

#define FULL_MASK 0xffffffffu

/* The paths of the kernels (see ver_tile() and hor_segment()). */
enum DwtPath {
    PATH_VER_INNER, PATH_VER_TOP, PATH_VER_BOTTOM, PATH_VER_EDGE,
    PATH_HOR_VEC, PATH_HOR_VEC_LEFT, PATH_HOR_VEC_RIGHT, PATH_HOR_PAIR, PATH_HOR_PAIR_LEFT,
    PATH_HOR_PAIR_RIGHT, PATH_HOR_EDGE, PATH_COUNT
};

/* The filters (F.4.8). Step s (from 0) updates the high-pass samples (odd coordinates) when s
 * is even, the low-pass ones when s is odd, from their two neighbours a (left) and b (right). */
struct Dwt53 {
    typedef int32_t T;
    typedef int2 T2;
    static constexpr int STEPS = 2;
    static __device__ __forceinline__ T step(int s, T x, T a, T b)
    {
        return s == 0 ? j2ki_dwt53_predict(x, a, b) : j2ki_dwt53_update(x, a, b);
    }
    static __device__ __forceinline__ T scale_l(T v) { return v; }
    static __device__ __forceinline__ T scale_h(T v) { return v; }
    static __device__ __forceinline__ T single(T x, uint32_t i0) { return j2ki_dwt53_single_fwd(x, i0); }
};

struct Dwt97 {
    typedef float T;
    typedef float2 T2;
    static constexpr int STEPS = 4;
    static __device__ __forceinline__ T step(int s, T x, T a, T b)
    {
        const float c = s == 0 ? J2KI_DWT97_ALPHA : s == 1 ? J2KI_DWT97_BETA
                      : s == 2 ? J2KI_DWT97_GAMMA : J2KI_DWT97_DELTA;
        return j2ki_dwt97_lift(x, a, b, c);
    }
    static __device__ __forceinline__ T scale_l(T v) { return v * J2KI_DWT97_INV_K; }
    static __device__ __forceinline__ T scale_h(T v) { return v * J2KI_DWT97_K; }
    static __device__ __forceinline__ T single(T x, uint32_t i0) { return j2ki_dwt97_single_fwd(x, i0); }
};

/*
 * F.3.7: the periodic symmetric extension of a signal of n >= 2 samples (period 2n - 2, mirrored
 * about its first and its last sample): the sample that local coordinate i repeats, for
 * i in [-S, n - 1 + S] (S: the filter's lifting steps), the only coordinates whose samples a
 * stored output depends on (a value moves one sample per step). One reflection about the first
 * or the last sample, min(|i|, 2n - 2 - |i|), reaches [0, n) from there when n > S; S / 2 + 1 of
 * them do for every n >= 2 (checked for S = 2 and 4 and n up to 200 against |i| mod (2n - 2)
 * folded). Any other i gets some sample in [0, n): a safe address for a value never used.
 */
template <int S>
__device__ __forceinline__ int mirror(int i, int n)
{
#pragma unroll
    for (int r = 0; r < S / 2 + 1; r++) {
        const int j = i < 0 ? -i : i;
        i = j < 2 * n - 2 - j ? j : 2 * n - 2 - j;
    }
    return i > 0 ? i : 0;
}

/* All steps and the scaling on v[0..N), v[0] at an even coordinate. v[0] and v[N-1] lack a
 * neighbour and are left as they are (see the halo argument above). */
template <class F, int N>
__device__ __forceinline__ void lift_column(typename F::T (&v)[N])
{
#pragma unroll
    for (int s = 0; s < F::STEPS; s++)
#pragma unroll
        for (int j = (s & 1) ? 2 : 1; j + 1 < N; j += 2)
            v[j] = F::step(s, v[j], v[j - 1], v[j + 1]);
#pragma unroll
    for (int j = 0; j < N; j++)
        v[j] = (j & 1) ? F::scale_h(v[j]) : F::scale_l(v[j]);
}

/*
 * One thread's tile of a column (VER_SD): output rows a .. a + V_ROWS - 1 (coordinate v0 + a
 * even) in v[HALO ..], v[j] holding row lo + j, lo = a - HALO.
 *   PATH_VER_INNER: rows lo .. lo + N - 1 are all in [0, n);
 *   PATH_VER_TOP: the column's first tile, a = -E (E = p): rows lo .. -1 (registers 0 ..
 *     HALO + E - 1) are the mirror images of rows 1 .. HALO + E (F.3.7), copied register to
 *     register; output row -1 (E = 1) is not stored;
 *   PATH_VER_BOTTOM: the column's last tile, a = n - V_ROWS + E (E = (n + p) & 1): row n - 1 in
 *     register J1 - 1 = N - HALO - E - 1, the rows after it the mirror images of those before;
 *     output row n (E = 1) is not stored;
 *   PATH_VER_EDGE: any other tile that passes an end (columns of less than 4 tiles): every
 *     row read through mirror(), every store checked.
 */
template <class F, int PATH, int E>
__device__ __forceinline__ void ver_tile(const typename F::T *__restrict__ src, typename F::T *__restrict__ dst,
                                         uint32_t stride, uint32_t x, int n, int p, int a)
{
    typedef typename F::T T;
    constexpr int HALO = F::STEPS;              /* even: v[0] keeps the parity of row a */
    constexpr int N = V_ROWS + 2 * HALO;
    constexpr bool CHECKED = PATH == PATH_VER_EDGE;
    constexpr int J0 = PATH == PATH_VER_TOP ? HALO + E : 0;             /* registers loaded: */
    constexpr int J1 = PATH == PATH_VER_BOTTOM ? N - HALO - E : N;      /* J0 .. J1 - 1 */
    static_assert(V_ROWS % 2 == 0 && V_ROWS > HALO, "tiles of an even number of rows, above the halo");
    const int lo = a - HALO;
    T v[N];

    DWT_PATH_HOOK(PATH);
    if (!CHECKED) {
        const T *s = src + (size_t)(lo + J0) * stride + x;
#pragma unroll
        for (int j = J0; j < J1; j++, s += stride)
            v[j] = *s;
#pragma unroll
        for (int j = 0; j < J0; j++)
            v[j] = v[2 * J0 - j];
#pragma unroll
        for (int j = J1; j < N; j++)
            v[j] = v[2 * (J1 - 1) - j];
    } else {
#pragma unroll
        for (int j = 0; j < N; j++)
            v[j] = src[(size_t)mirror<F::STEPS>(lo + j, n) * stride + x];
    }
    lift_column<F, N>(v);
    /* row a + j goes to L row (a + j + p) / 2 - p = rl + j / 2 (j even) or to
     * H row nl + (a + j + p - 1) / 2 = rh + j / 2 (j odd) */
    const int nl = (n + 1 - p) / 2;
    const int rl = (a + p) / 2 - p, rh = nl + (a + p) / 2;
    if (!CHECKED) {
        constexpr int JL = PATH == PATH_VER_TOP && E ? 2 : 0;                  /* first L stored */
        constexpr int JH = PATH == PATH_VER_BOTTOM && E ? V_ROWS - 1 : V_ROWS; /* H stored below */
        T *dl = dst + (size_t)(rl + JL / 2) * stride + x, *dh = dst + (size_t)rh * stride + x;
#pragma unroll
        for (int j = JL; j < V_ROWS; j += 2, dl += stride)
            *dl = v[HALO + j];
#pragma unroll
        for (int j = 1; j < JH; j += 2, dh += stride)
            *dh = v[HALO + j];
    } else {
#pragma unroll
        for (int j = 0; j < V_ROWS; j++)
            if ((unsigned)(a + j) < (unsigned)n)
                dst[(size_t)(((j & 1) ? rh : rl) + j / 2) * stride + x] = v[HALO + j];
    }
}

/*
 * VER_SD of the area [0,w) x [0,h) (first row at coordinate v0): src -> dst de-interleaved.
 * Thread: column x, tile t of T = ceil((h + p) / V_ROWS). Tile t stores rows from a = t V_ROWS - p,
 * except that with T >= 4 the last two tiles are placed from the column's end: a = h - (T - t)
 * V_ROWS + E (E = (h + p) & 1 keeps v0 + a even), so the last one reads past the end at fixed
 * registers (PATH_VER_BOTTOM); they overlap tile T - 3 and store the same values there.
 */
template <class F>
__device__ __forceinline__ void dwt_ver(const typename F::T *__restrict__ src, typename F::T *__restrict__ dst,
                                        uint32_t stride, uint32_t w, uint32_t h, uint32_t v0)
{
    const uint32_t x = blockIdx.x * V_THREADS + threadIdx.x;

    if (x >= w)
        return;
    if (h == 1) {
        if (blockIdx.y == 0)
            dst[x] = F::single(src[x], v0);
        return;
    }
    const int n = (int)h, p = (int)(v0 & 1), e = (n + p) & 1;
    const int t = (int)blockIdx.y, nt = (n + p + V_ROWS - 1) / V_ROWS;
    const int a = nt >= 4 && t >= nt - 2 ? n - (nt - t) * V_ROWS + e : t * V_ROWS - p;
    const int lo = a - F::STEPS;
    if (lo >= 0 && lo + V_ROWS + 2 * F::STEPS <= n)
        ver_tile<F, PATH_VER_INNER, 0>(src, dst, stride, x, n, p, a);
    else if (nt >= 4 && t == 0)
        p ? ver_tile<F, PATH_VER_TOP, 1>(src, dst, stride, x, n, p, a)
          : ver_tile<F, PATH_VER_TOP, 0>(src, dst, stride, x, n, p, a);
    else if (nt >= 4 && t == nt - 1)
        e ? ver_tile<F, PATH_VER_BOTTOM, 1>(src, dst, stride, x, n, p, a)
          : ver_tile<F, PATH_VER_BOTTOM, 0>(src, dst, stride, x, n, p, a);
    else
        ver_tile<F, PATH_VER_EDGE, 0>(src, dst, stride, x, n, p, a);
}

/*
 * One warp's segment of a row (HOR_SD): lane l, slot k holds pair q = qs + l + 32 k in
 * (xl[k], xh[k]), pair q = (L at local column 2q - p, H at 2q + 1 - p), so the L of every pair
 * has an even coordinate. The segment stores pairs [qs + HP, qs + 32 H_PAIRS - HP): L(q) to
 * q - p, H(q) to nl + q.
 *   PATH_HOR_VEC*: every pair read by one 8-byte load (the pairs' addresses are 8-byte aligned);
 *   PATH_HOR_PAIR*: by two 4-byte loads (they are not);
 *   *_LEFT: the row's first segment, qs = -HP: slot 0 reaches before the row, its samples are read
 *     one by one through |i| (F.3.7, mirror about column 0); slot 0's L at column -1 (p = 1) is
 *     not stored;
 *   *_RIGHT: the row's last segment, placed so that its last stored pair is the row's last one:
 *     slot H_PAIRS - 1 reaches past the row, its samples are read one by one through
 *     min(i, 2n - 2 - i) (mirror about column n - 1); a last pair without H stores its L only;
 *   PATH_HOR_EDGE: any other segment that passes an end (rows of less than about 64 H_PAIRS
 *     samples): every sample read through mirror(), every store checked.
 * Otherwise every sample of the segment is in the row.
 */
template <class F, int PATH>
__device__ __forceinline__ void hor_segment(const typename F::T *__restrict__ in, typename F::T *__restrict__ out,
                                            int lane, int n, int p, int qs)
{
    typedef typename F::T T;
    typedef typename F::T2 T2;
    constexpr int HP = F::STEPS / 2;
    constexpr bool VEC = PATH == PATH_HOR_VEC || PATH == PATH_HOR_VEC_LEFT || PATH == PATH_HOR_VEC_RIGHT;
    constexpr bool LEFT = PATH == PATH_HOR_VEC_LEFT || PATH == PATH_HOR_PAIR_LEFT;
    constexpr bool RIGHT = PATH == PATH_HOR_VEC_RIGHT || PATH == PATH_HOR_PAIR_RIGHT;
    constexpr bool CHECKED = PATH == PATH_HOR_EDGE;
    constexpr int K0 = LEFT ? 1 : 0, K1 = RIGHT ? H_PAIRS - 1 : H_PAIRS;   /* slots read by pairs */
    static_assert(H_PAIRS >= 2 && 2 * HP < 32, "first and last slot distinct, halo inside them");
    const int i0 = 2 * qs - p;                       /* local column of lane 0's first L */
    const int nl = (n + 1 - p) / 2;
    T xl[H_PAIRS], xh[H_PAIRS];

    DWT_PATH_HOOK(PATH);
    if (!CHECKED) {
        const T *s = in + i0 + 64 * K0 + 2 * lane;
        if (VEC) {
#pragma unroll
            for (int k = K0; k < K1; k++) {
                const T2 t = ((const T2 *)s)[32 * (k - K0)];
                xl[k] = t.x;
                xh[k] = t.y;
            }
        } else {
#pragma unroll
            for (int k = K0; k < K1; k++) {
                xl[k] = s[64 * (k - K0)];
                xh[k] = s[64 * (k - K0) + 1];
            }
        }
        if (LEFT) {
            const int i = i0 + 2 * lane;
            xl[0] = in[i < 0 ? -i : i];
            xh[0] = in[i + 1 < 0 ? -(i + 1) : i + 1];
        }
        if (RIGHT) {
            const int i = i0 + 2 * (lane + 32 * (H_PAIRS - 1));
            xl[H_PAIRS - 1] = in[i < 2 * n - 2 - i ? i : 2 * n - 2 - i];
            xh[H_PAIRS - 1] = in[i + 1 < 2 * n - 3 - i ? i + 1 : 2 * n - 3 - i];
        }
    } else {
#pragma unroll
        for (int k = 0; k < H_PAIRS; k++) {
            const int i = i0 + 2 * (lane + 32 * k);
            xl[k] = in[mirror<F::STEPS>(i, n)];
            xh[k] = in[mirror<F::STEPS>(i + 1, n)];
        }
    }

    /* every lane shuffles, those past the row's end included (they hold mirrored samples) */
    const int nxt = (lane + 1) & 31, prv = (lane + 31) & 31;
#pragma unroll
    for (int s = 0; s < F::STEPS; s++) {
        T r[H_PAIRS];
        if (!(s & 1)) {
            /* H(q) from L(q) and L(q + 1): lane l + 1, same slot; lane 31: lane 0, next slot */
#pragma unroll
            for (int k = 0; k < H_PAIRS; k++)
                r[k] = __shfl_sync(FULL_MASK, xl[k], nxt);
#pragma unroll
            for (int k = 0; k < H_PAIRS; k++)
                xh[k] = F::step(s, xh[k], xl[k], (k + 1 < H_PAIRS && lane == 31) ? r[k + 1] : r[k]);
        } else {
            /* L(q) from H(q - 1) and H(q): lane l - 1, same slot; lane 0: lane 31, previous slot */
#pragma unroll
            for (int k = 0; k < H_PAIRS; k++)
                r[k] = __shfl_sync(FULL_MASK, xh[k], prv);
#pragma unroll
            for (int k = 0; k < H_PAIRS; k++)
                xl[k] = F::step(s, xl[k], (k > 0 && lane == 0) ? r[k - 1] : r[k], xh[k]);
        }
    }

    /* the halo lanes aside; checked: only slot 0 of *_LEFT (a first L before the row) and the
     * last slot of *_RIGHT (a last pair without H), every slot of PATH_HOR_EDGE */
#pragma unroll
    for (int k = 0; k < H_PAIRS; k++) {
        const T l = F::scale_l(xl[k]), h = F::scale_h(xh[k]);
        const int q = qs + lane + 32 * k, i = 2 * q - p;
        if ((k > 0 || lane >= HP) && (k < H_PAIRS - 1 || lane < 32 - HP)) {
            if (CHECKED ? (unsigned)i < (unsigned)n : k >= K0 || i >= 0)
                out[q - p] = l;
            if (CHECKED ? (unsigned)(i + 1) < (unsigned)n : k < K1 || i + 1 < n)
                out[nl + q] = h;
        }
    }
}

/*
 * HOR_SD of the area [0,w) x [0,h) (first column at coordinate u0): src -> dst de-interleaved.
 * Warp: row y, segment s of S = ceil(np / OUT) (np = (w + p + 1) / 2 pairs), pairs from
 * qs = s OUT - HP, except the last one of S >= 2, placed from the row's end
 * (qs = np - 32 H_PAIRS + HP); it overlaps segment S - 2 and stores the same values there.
 */
template <class F>
__device__ __forceinline__ void dwt_hor(const typename F::T *__restrict__ src, typename F::T *__restrict__ dst,
                                        uint32_t stride, uint32_t w, uint32_t h, uint32_t u0)
{
    typedef typename F::T T;
    constexpr int HP = F::STEPS / 2;
    constexpr int OUT = 32 * H_PAIRS - 2 * HP;       /* pairs a segment stores */
    const int lane = (int)(threadIdx.x & 31);
    const uint32_t y = blockIdx.x * H_WARPS + threadIdx.x / 32;

    if (y >= h)                                      /* the whole warp */
        return;
    const T *in = src + (size_t)y * stride;
    T *out = dst + (size_t)y * stride;
    if (w == 1) {
        if (blockIdx.y == 0 && lane == 0)
            out[0] = F::single(in[0], u0);
        return;
    }
    const int n = (int)w, p = (int)(u0 & 1), np = (n + p + 1) / 2;
    const int sg = (int)blockIdx.y, ns = (np + OUT - 1) / OUT;
    const bool last = ns >= 2 && sg == ns - 1;
    const int qs = last ? np - 32 * H_PAIRS + HP : sg * OUT - HP;
    const int i0 = 2 * qs - p, i1 = i0 + 64 * H_PAIRS;          /* the segment's columns */
    const bool vec = (((uintptr_t)in + (uintptr_t)(i0 + 64) * sizeof(T)) & (2 * sizeof(T) - 1)) == 0;
    if (i0 >= 0 && i1 <= n)
        vec ? hor_segment<F, PATH_HOR_VEC>(in, out, lane, n, p, qs)
            : hor_segment<F, PATH_HOR_PAIR>(in, out, lane, n, p, qs);
    else if (sg == 0 && i1 <= n)
        vec ? hor_segment<F, PATH_HOR_VEC_LEFT>(in, out, lane, n, p, qs)
            : hor_segment<F, PATH_HOR_PAIR_LEFT>(in, out, lane, n, p, qs);
    else if (last && i0 >= 0)
        vec ? hor_segment<F, PATH_HOR_VEC_RIGHT>(in, out, lane, n, p, qs)
            : hor_segment<F, PATH_HOR_PAIR_RIGHT>(in, out, lane, n, p, qs);
    else
        hor_segment<F, PATH_HOR_EDGE>(in, out, lane, n, p, qs);
}

/* The entries: one per filter and pass, the bounds of the passes' thread blocks. */
extern "C" __global__ void __launch_bounds__(V_THREADS, 8) j2ki_k_dwt53_ver(const __grid_constant__ J2kiDwtParams p)
{
    dwt_ver<Dwt53>((const int32_t *)p.src, (int32_t *)p.dst, p.stride, p.w, p.h, p.o);
}

extern "C" __global__ void __launch_bounds__(32 * H_WARPS) j2ki_k_dwt53_hor(const __grid_constant__ J2kiDwtParams p)
{
    dwt_hor<Dwt53>((const int32_t *)p.src, (int32_t *)p.dst, p.stride, p.w, p.h, p.o);
}

extern "C" __global__ void __launch_bounds__(V_THREADS, 8) j2ki_k_dwt97_ver(const __grid_constant__ J2kiDwtParams p)
{
    dwt_ver<Dwt97>((const float *)p.src, (float *)p.dst, p.stride, p.w, p.h, p.o);
}

extern "C" __global__ void __launch_bounds__(32 * H_WARPS) j2ki_k_dwt97_hor(const __grid_constant__ J2kiDwtParams p)
{
    dwt_hor<Dwt97>((const float *)p.src, (float *)p.dst, p.stride, p.w, p.h, p.o);
}
