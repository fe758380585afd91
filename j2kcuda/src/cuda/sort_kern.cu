/*
 * Kernels of one pass of sort_cuda.h's radix sort, from CUB's block primitives (device code
 * only; sort_cuda.cu launches them).
 */
#include <cub/block/block_radix_rank.cuh>

#include "cuda/sort_kern.h"

#define SORT_WARP_ITEMS (32 * J2KI_SORT_ITEMS)     /* a warp's contiguous share of a tile */

static_assert(J2KI_SORT_DIGITS == J2KI_SORT_THREADS, "one digit per thread (BINS_TRACKED_PER_THREAD 1)");

/* the digit of a complemented key, for cub::BlockRadixRankMatch */
struct SortDigit {
    uint32_t bit, mask;
    __device__ __forceinline__ uint32_t Digit(uint32_t k) const { return (k >> bit) & mask; }
};

extern "C" __global__ void __launch_bounds__(J2KI_SORT_THREADS) j2ki_k_sort_hist(J2kiSortParams p)
{
    __shared__ uint32_t h[J2KI_SORT_DIGITS];
    const size_t base = (size_t)blockIdx.x * J2KI_SORT_TILE;
    h[threadIdx.x] = 0;
    __syncthreads();
    /* one shared atomic per digit per warp and item (the early stop's keys are mostly 0: a
     * per-key atomic would serialise on that digit's counter) */
#pragma unroll
    for (int i = 0; i < J2KI_SORT_ITEMS; i++) {
        const size_t k = base + (size_t)i * J2KI_SORT_THREADS + threadIdx.x;
        const uint32_t d = k < p.n ? (~p.keys_in[k] >> p.bit) & p.mask : 0xFFFFFFFFu;
        const uint32_t peers = __match_any_sync(0xFFFFFFFFu, d);
        if (d != 0xFFFFFFFFu && (threadIdx.x & 31) == (uint32_t)(__ffs(peers) - 1))
            atomicAdd(&h[d], (uint32_t)__popc(peers));
    }
    __syncthreads();
    p.counts[(size_t)threadIdx.x * p.nb_tiles + blockIdx.x] = h[threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(J2KI_SORT_THREADS) j2ki_k_sort_scatter(J2kiSortParams p)
{
    typedef cub::BlockRadixRankMatch<J2KI_SORT_THREADS, J2KI_SORT_RADIX_BITS, false> Rank;
    __shared__ typename Rank::TempStorage tmp;
    __shared__ uint32_t s_base[J2KI_SORT_DIGITS];
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const size_t base = (size_t)blockIdx.x * J2KI_SORT_TILE + (size_t)warp * SORT_WARP_ITEMS + lane;
    uint32_t keys[J2KI_SORT_ITEMS];
    int ranks[J2KI_SORT_ITEMS], excl[1];
    /* warp-striped: item i of lane l of warp w is tile element w * 32 * ITEMS + i * 32 + l, the
     * order the ranks keep; the tail past n ranks last (all ones: the largest digit) */
#pragma unroll
    for (int i = 0; i < J2KI_SORT_ITEMS; i++) {
        const size_t k = base + (size_t)i * 32;
        keys[i] = k < p.n ? ~p.keys_in[k] : 0xFFFFFFFFu;
    }
    const SortDigit dig = { p.bit, p.mask };
    Rank(tmp).RankKeys(keys, ranks, dig, excl);
    /* ranks count from the tile's start, where excl[0] keys have a digit below d; the tile's
     * first key of digit d goes to the scanned counts[d][tile], or with one tile to its rank */
    s_base[threadIdx.x] =
        p.nb_tiles > 1 ? p.counts[(size_t)threadIdx.x * p.nb_tiles + blockIdx.x] - (uint32_t)excl[0] : 0u;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < J2KI_SORT_ITEMS; i++) {
        const size_t k = base + (size_t)i * 32;
        if (k < p.n) {
            const uint32_t pos = s_base[dig.Digit(keys[i])] + (uint32_t)ranks[i];
            p.keys_out[pos] = ~keys[i];
            p.vals_out[pos] = p.vals_in[k];
        }
    }
}
