/*
 * Device-wide stable descending radix sort of pairs from CUB's block primitives: the host side
 * (see sort_cuda.h for the design; the kernels are in sort_kern.cu).
 */
#include "cuda/cuda_launch.h"
#include "cuda/scan_cuda.h"
#include "cuda/sort_cuda.h"
#include "cuda/sort_kern.h"

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

static size_t sort_tiles(size_t n) { return (n + J2KI_SORT_TILE - 1) / J2KI_SORT_TILE; }

/* temporary storage: the other key and value buffers of the passes, the counts, the scan's */
extern "C" size_t j2ki_sort_cuda_temp_size(size_t max_n)
{
    const size_t nc = sort_tiles(max_n) * J2KI_SORT_DIGITS;
    return 2 * align256(max_n * 4) + align256(nc * 4) + j2ki_scan_cuda_temp_size(nc, 4);
}

extern "C" CUresult j2ki_sort_cuda(const J2kiSortArgs *a, CUstream st)
{
    if (a->n >= ((size_t)1 << 31) || a->end_bit < 1 || a->end_bit > 32)
        return CUDA_ERROR_INVALID_VALUE;
    if (!a->n)
        return CUDA_SUCCESS;
    if (!a->d_keys_in || !a->d_vals_in || !a->d_keys_out || !a->d_vals_out || !a->d_temp ||
        a->temp_bytes < j2ki_sort_cuda_temp_size(a->n))
        return CUDA_ERROR_INVALID_VALUE;
    const uint32_t tiles = (uint32_t)sort_tiles(a->n);
    const size_t nc = (size_t)tiles * J2KI_SORT_DIGITS;
    uint8_t *t = (uint8_t *)a->d_temp;
    uint32_t *alt_k = (uint32_t *)t, *alt_v = (uint32_t *)(t + align256(a->n * 4));
    uint32_t *counts = (uint32_t *)(t + 2 * align256(a->n * 4));
    void *scan_tmp = t + 2 * align256(a->n * 4) + align256(nc * 4);
    const int passes = (a->end_bit + J2KI_SORT_RADIX_BITS - 1) / J2KI_SORT_RADIX_BITS;
    const uint32_t *src_k = a->d_keys_in, *src_v = a->d_vals_in;
    CUresult e;
    /* the passes alternate between the output and the other buffers, the last into the output
     * (the inputs are only read) */
    for (int pass = 0; pass < passes; pass++) {
        const int bit = pass * J2KI_SORT_RADIX_BITS;
        const int bits = a->end_bit - bit < J2KI_SORT_RADIX_BITS ? a->end_bit - bit : J2KI_SORT_RADIX_BITS;
        const int to_out = ((passes - 1 - pass) & 1) == 0;
        J2kiSortParams p = { src_k, src_v, to_out ? a->d_keys_out : alt_k, to_out ? a->d_vals_out : alt_v, counts,
                             (uint32_t)a->n, tiles, (uint32_t)bit, (1u << bits) - 1 };
        if (tiles > 1) {
            if ((e = j2ki_launch(j2ki_kernel<J2KI_K_SORT_HIST>, tiles, J2KI_SORT_THREADS, 0, st, p)) != CUDA_SUCCESS)
                return e;
            J2kiScanArgs s = { counts, counts, nc, 4, 1, scan_tmp, j2ki_scan_cuda_temp_size(nc, 4) };
            if ((e = j2ki_scan_cuda(&s, st)) != CUDA_SUCCESS)
                return e;
        }
        if ((e = j2ki_launch(j2ki_kernel<J2KI_K_SORT_SCATTER>, tiles, J2KI_SORT_THREADS, 0, st, p)) != CUDA_SUCCESS)
            return e;
        src_k = p.keys_out;
        src_v = p.vals_out;
    }
    return CUDA_SUCCESS;
}
