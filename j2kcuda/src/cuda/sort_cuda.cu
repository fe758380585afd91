/*
 * Device-wide stable descending radix sort of pairs from CUB's block primitives: see
 * sort_cuda.h for the design.
 */
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_rank.cuh>

#include "cuda/scan_cuda.h"
#include "cuda/sort_cuda.h"

/* 256 threads of 16 keys: a tile of 4096 keys, one digit counter per thread per digit of 8 bits */
#define SORT_THREADS    256
#define SORT_ITEMS      16
#define SORT_TILE       (SORT_THREADS * SORT_ITEMS)
#define SORT_RADIX_BITS 8
#define SORT_DIGITS     (1 << SORT_RADIX_BITS)
#define SORT_WARP_ITEMS (32 * SORT_ITEMS)      /* a warp's contiguous share of a tile */

static_assert(SORT_DIGITS == SORT_THREADS, "one digit per thread (BINS_TRACKED_PER_THREAD 1)");

typedef struct SortParams {
    const uint32_t *keys_in, *vals_in;
    uint32_t       *keys_out, *vals_out;
    uint32_t       *counts;        /* SORT_DIGITS x nb_tiles, digit-major; after the scan, offsets */
    uint32_t        n, nb_tiles;
    uint32_t        bit, mask;     /* this pass's digit: (~key >> bit) & mask */
} SortParams;

/* the digit of a complemented key, for cub::BlockRadixRankMatch */
struct SortDigit {
    uint32_t bit, mask;
    __device__ __forceinline__ uint32_t Digit(uint32_t k) const { return (k >> bit) & mask; }
};

__global__ void __launch_bounds__(SORT_THREADS) sort_hist_kernel(SortParams p)
{
    __shared__ uint32_t h[SORT_DIGITS];
    const size_t base = (size_t)blockIdx.x * SORT_TILE;
    h[threadIdx.x] = 0;
    __syncthreads();
    /* one shared atomic per digit per warp and item (the early stop's keys are mostly 0: a
     * per-key atomic would serialise on that digit's counter) */
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        const size_t k = base + (size_t)i * SORT_THREADS + threadIdx.x;
        const uint32_t d = k < p.n ? (~p.keys_in[k] >> p.bit) & p.mask : 0xFFFFFFFFu;
        const uint32_t peers = __match_any_sync(0xFFFFFFFFu, d);
        if (d != 0xFFFFFFFFu && (threadIdx.x & 31) == (uint32_t)(__ffs(peers) - 1))
            atomicAdd(&h[d], (uint32_t)__popc(peers));
    }
    __syncthreads();
    p.counts[(size_t)threadIdx.x * p.nb_tiles + blockIdx.x] = h[threadIdx.x];
}

__global__ void __launch_bounds__(SORT_THREADS) sort_scatter_kernel(SortParams p)
{
    typedef cub::BlockRadixRankMatch<SORT_THREADS, SORT_RADIX_BITS, false> Rank;
    __shared__ typename Rank::TempStorage tmp;
    __shared__ uint32_t s_base[SORT_DIGITS];
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const size_t base = (size_t)blockIdx.x * SORT_TILE + (size_t)warp * SORT_WARP_ITEMS + lane;
    uint32_t keys[SORT_ITEMS];
    int ranks[SORT_ITEMS], excl[1];
    /* warp-striped: item i of lane l of warp w is tile element w * 32 * ITEMS + i * 32 + l, the
     * order the ranks keep; the tail past n ranks last (all ones: the largest digit) */
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        const size_t k = base + (size_t)i * 32;
        keys[i] = k < p.n ? ~p.keys_in[k] : 0xFFFFFFFFu;
    }
    const SortDigit dig = { p.bit, p.mask };
    Rank(tmp).RankKeys(keys, ranks, dig, excl);
    /* the tile's first key of digit d goes to counts[d][tile] (the exclusive sum); one tile: 0 */
    s_base[threadIdx.x] = (p.nb_tiles > 1 ? p.counts[(size_t)threadIdx.x * p.nb_tiles + blockIdx.x] : 0u) -
                          (uint32_t)excl[0];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        const size_t k = base + (size_t)i * 32;
        if (k < p.n) {
            const uint32_t pos = s_base[dig.Digit(keys[i])] + (uint32_t)ranks[i];
            p.keys_out[pos] = ~keys[i];
            p.vals_out[pos] = p.vals_in[k];
        }
    }
}

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

static size_t sort_tiles(size_t n) { return (n + SORT_TILE - 1) / SORT_TILE; }

/* temporary storage: the other key and value buffers of the passes, the counts, the scan's */
extern "C" size_t j2ki_sort_cuda_temp_size(size_t max_n)
{
    const size_t nc = sort_tiles(max_n) * SORT_DIGITS;
    return 2 * align256(max_n * 4) + align256(nc * 4) + j2ki_scan_cuda_temp_size(nc, 4);
}

extern "C" cudaError_t j2ki_sort_cuda(const J2kiSortArgs *a, cudaStream_t st)
{
    if (a->n >= ((size_t)1 << 31) || a->end_bit < 1 || a->end_bit > 32)
        return cudaErrorInvalidValue;
    if (!a->n)
        return cudaSuccess;
    if (!a->d_keys_in || !a->d_vals_in || !a->d_keys_out || !a->d_vals_out || !a->d_temp ||
        a->temp_bytes < j2ki_sort_cuda_temp_size(a->n))
        return cudaErrorInvalidValue;
    const uint32_t tiles = (uint32_t)sort_tiles(a->n);
    const size_t nc = (size_t)tiles * SORT_DIGITS;
    uint8_t *t = (uint8_t *)a->d_temp;
    uint32_t *alt_k = (uint32_t *)t, *alt_v = (uint32_t *)(t + align256(a->n * 4));
    uint32_t *counts = (uint32_t *)(t + 2 * align256(a->n * 4));
    void *scan_tmp = t + 2 * align256(a->n * 4) + align256(nc * 4);
    const int passes = (a->end_bit + SORT_RADIX_BITS - 1) / SORT_RADIX_BITS;
    const uint32_t *src_k = a->d_keys_in, *src_v = a->d_vals_in;
    cudaError_t e;
    /* the passes alternate between the output and the other buffers, the last into the output */
    for (int pass = 0; pass < passes; pass++) {
        const int bit = pass * SORT_RADIX_BITS;
        const int bits = a->end_bit - bit < SORT_RADIX_BITS ? a->end_bit - bit : SORT_RADIX_BITS;
        const int to_out = ((passes - 1 - pass) & 1) == 0;
        SortParams p = { src_k, src_v, to_out ? a->d_keys_out : alt_k, to_out ? a->d_vals_out : alt_v, counts,
                         (uint32_t)a->n, tiles, (uint32_t)bit, (1u << bits) - 1 };
        if (tiles > 1) {
            sort_hist_kernel<<<tiles, SORT_THREADS, 0, st>>>(p);
            if ((e = cudaPeekAtLastError()) != cudaSuccess)
                return e;
            J2kiScanArgs s = { counts, counts, nc, 4, 1, scan_tmp, j2ki_scan_cuda_temp_size(nc, 4) };
            if ((e = j2ki_scan_cuda(&s, st)) != cudaSuccess)
                return e;
        }
        sort_scatter_kernel<<<tiles, SORT_THREADS, 0, st>>>(p);
        if ((e = cudaPeekAtLastError()) != cudaSuccess)
            return e;
        src_k = p.keys_out;
        src_v = p.vals_out;
    }
    return cudaSuccess;
}
