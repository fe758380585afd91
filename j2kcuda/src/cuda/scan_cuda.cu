/*
 * Device-wide prefix sums from CUB's block primitives: see scan_cuda.h for the design.
 */
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

#include "cuda/scan_cuda.h"

/* A tile is SCAN_THREADS x items elements: 16 KB of input either way (4096 uint32_t, 2048
 * uint64_t), enough work per block to hide the reduction of the tile sums before it. */
#define SCAN_THREADS 256
#define SCAN_TILE_BYTES (16 * 1024)

typedef struct ScanParams {
    const void *in;
    void       *out;
    void       *sums;       /* one per tile */
    uint32_t    n;
    int         exclusive;
} ScanParams;

template <typename T> struct ScanShape {
    static constexpr int ITEMS = SCAN_TILE_BYTES / (SCAN_THREADS * (int)sizeof(T));
    static constexpr uint32_t TILE = (uint32_t)(SCAN_THREADS * ITEMS);
};

template <typename T>
__global__ void __launch_bounds__(SCAN_THREADS) scan_reduce_kernel(ScanParams p)
{
    typedef ScanShape<T> S;
    typedef cub::BlockReduce<T, SCAN_THREADS> Reduce;
    __shared__ typename Reduce::TempStorage tmp;
    const size_t base = (size_t)blockIdx.x * S::TILE;
    const int valid = (int)(p.n - base < S::TILE ? p.n - base : S::TILE);
    T items[S::ITEMS];
    cub::LoadDirectStriped<SCAN_THREADS>((int)threadIdx.x, (const T *)p.in + base, items, valid, (T)0);
    T s = 0;
#pragma unroll
    for (int i = 0; i < S::ITEMS; i++)
        s += items[i];
    s = Reduce(tmp).Sum(s);
    if (threadIdx.x == 0)
        ((T *)p.sums)[blockIdx.x] = s;
}

template <typename T>
__global__ void __launch_bounds__(SCAN_THREADS) scan_tile_kernel(ScanParams p)
{
    typedef ScanShape<T> S;
    typedef cub::BlockLoad<T, SCAN_THREADS, S::ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE> Load;
    typedef cub::BlockStore<T, SCAN_THREADS, S::ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE> Store;
    typedef cub::BlockScan<T, SCAN_THREADS> Scan;
    typedef cub::BlockReduce<T, SCAN_THREADS> Reduce;
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

    if (blockIdx.x) {                       /* the sum of the tiles before this one */
        const T *sums = (const T *)p.sums;
        for (uint32_t i = threadIdx.x; i < blockIdx.x; i += SCAN_THREADS)
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

static size_t scan_tiles(size_t n, int elem_bytes)
{
    const size_t tile = (size_t)SCAN_TILE_BYTES / (size_t)elem_bytes;
    return (n + tile - 1) / tile;
}

extern "C" size_t j2ki_scan_cuda_temp_size(size_t max_n, int elem_bytes)
{
    const size_t b = scan_tiles(max_n, elem_bytes) * 8;
    return b ? (b + 255) & ~(size_t)255 : 256;
}

template <typename T> static cudaError_t scan_launch(const ScanParams &p, uint32_t tiles, cudaStream_t st)
{
    if (tiles > 1) {
        scan_reduce_kernel<T><<<tiles, SCAN_THREADS, 0, st>>>(p);
        cudaError_t e = cudaPeekAtLastError();
        if (e != cudaSuccess)
            return e;
    }
    scan_tile_kernel<T><<<tiles, SCAN_THREADS, 0, st>>>(p);
    return cudaPeekAtLastError();
}

extern "C" cudaError_t j2ki_scan_cuda(const J2kiScanArgs *a, cudaStream_t st)
{
    if ((a->elem_bytes != 4 && a->elem_bytes != 8) || a->n >= ((size_t)1 << 31))
        return cudaErrorInvalidValue;
    if (!a->n)
        return cudaSuccess;
    if (!a->d_in || !a->d_out || !a->d_temp || a->temp_bytes < j2ki_scan_cuda_temp_size(a->n, a->elem_bytes))
        return cudaErrorInvalidValue;
    const uint32_t tiles = (uint32_t)scan_tiles(a->n, a->elem_bytes);
    ScanParams p = { a->d_in, a->d_out, a->d_temp, (uint32_t)a->n, a->exclusive };
    return a->elem_bytes == 4 ? scan_launch<uint32_t>(p, tiles, st) : scan_launch<uint64_t>(p, tiles, st);
}
