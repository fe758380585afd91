/*
 * Kernels of the reduce-then-scan of scan_cuda.h, from CUB's block primitives (device code
 * only; scan_cuda.cu launches them).
 */
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

#include "cuda/scan_kern.h"

template <typename T> struct ScanShape {
    static constexpr int ITEMS = J2KI_SCAN_TILE_BYTES / (J2KI_SCAN_THREADS * (int)sizeof(T));
    static constexpr uint32_t TILE = (uint32_t)(J2KI_SCAN_THREADS * ITEMS);
};

/* the tile's sum (order-free: striped loads) */
template <typename T> __device__ __forceinline__ void scan_reduce(const J2kiScanParams &p)
{
    typedef ScanShape<T> S;
    typedef cub::BlockReduce<T, J2KI_SCAN_THREADS> Reduce;
    __shared__ typename Reduce::TempStorage tmp;
    const size_t base = (size_t)blockIdx.x * S::TILE;
    const int valid = (int)(p.n - base < S::TILE ? p.n - base : S::TILE);
    T items[S::ITEMS];
    cub::LoadDirectStriped<J2KI_SCAN_THREADS>((int)threadIdx.x, (const T *)p.in + base, items, valid, (T)0);
    T s = 0;
#pragma unroll
    for (int i = 0; i < S::ITEMS; i++)
        s += items[i];
    s = Reduce(tmp).Sum(s);
    if (threadIdx.x == 0)
        ((T *)p.sums)[blockIdx.x] = s;
}

/* the sum of the tiles before this one (each block reduces them itself: a few hundred at
 * most, cheaper than a launch of its own), then the tile's scan offset by it */
template <typename T> __device__ __forceinline__ void scan_tile(const J2kiScanParams &p)
{
    typedef ScanShape<T> S;
    typedef cub::BlockLoad<T, J2KI_SCAN_THREADS, S::ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE> Load;
    typedef cub::BlockStore<T, J2KI_SCAN_THREADS, S::ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE> Store;
    typedef cub::BlockScan<T, J2KI_SCAN_THREADS> Scan;
    typedef cub::BlockReduce<T, J2KI_SCAN_THREADS> Reduce;
    __shared__ union {
        typename Load::TempStorage load;
        typename Store::TempStorage store;
        typename Scan::TempStorage scan;
        typename Reduce::TempStorage reduce;
    } tmp;
    __shared__ T s_prefix;
    const size_t base = (size_t)blockIdx.x * S::TILE;
    const int valid = (int)(p.n - base < S::TILE ? p.n - base : S::TILE);
    T prefix = 0, items[S::ITEMS];

    if (blockIdx.x) {
        const T *sums = (const T *)p.sums;
        for (uint32_t i = threadIdx.x; i < blockIdx.x; i += J2KI_SCAN_THREADS)
            prefix += sums[i];
        prefix = Reduce(tmp.reduce).Sum(prefix);
        if (threadIdx.x == 0)
            s_prefix = prefix;
        __syncthreads();
        prefix = s_prefix;
    }
    Load(tmp.load).Load((const T *)p.in + base, items, valid, (T)0);
    __syncthreads();
    if (p.exclusive)
        Scan(tmp.scan).ExclusiveSum(items, items);
    else
        Scan(tmp.scan).InclusiveSum(items, items);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < S::ITEMS; i++)
        items[i] += prefix;
    Store(tmp.store).Store((T *)p.out + base, items, valid);
}

extern "C" __global__ void __launch_bounds__(J2KI_SCAN_THREADS) j2ki_k_scan32_reduce(J2kiScanParams p)
{
    scan_reduce<uint32_t>(p);
}

extern "C" __global__ void __launch_bounds__(J2KI_SCAN_THREADS) j2ki_k_scan64_reduce(J2kiScanParams p)
{
    scan_reduce<uint64_t>(p);
}

extern "C" __global__ void __launch_bounds__(J2KI_SCAN_THREADS) j2ki_k_scan32_tile(J2kiScanParams p)
{
    scan_tile<uint32_t>(p);
}

extern "C" __global__ void __launch_bounds__(J2KI_SCAN_THREADS) j2ki_k_scan64_tile(J2kiScanParams p)
{
    scan_tile<uint64_t>(p);
}
