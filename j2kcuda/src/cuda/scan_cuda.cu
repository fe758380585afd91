/*
 * Device-wide prefix sums from CUB's block primitives: the host side (see scan_cuda.h for the
 * design; the kernels are in scan_kern.cu).
 */
#include "cuda/cuda_launch.h"
#include "cuda/scan_cuda.h"
#include "cuda/scan_kern.h"

static size_t scan_tiles(size_t n, int elem_bytes)
{
    const size_t tile = (size_t)J2KI_SCAN_TILE_BYTES / (size_t)elem_bytes;
    return (n + tile - 1) / tile;
}

/* one 8-byte sum per tile (either element type) */
extern "C" size_t j2ki_scan_cuda_temp_size(size_t max_n, int elem_bytes)
{
    const size_t b = scan_tiles(max_n, elem_bytes) * 8;
    return b ? (b + 255) & ~(size_t)255 : 256;
}

extern "C" CUresult j2ki_scan_cuda(const J2kiScanArgs *a, CUstream st)
{
    if ((a->elem_bytes != 4 && a->elem_bytes != 8) || a->n >= ((size_t)1 << 31))
        return CUDA_ERROR_INVALID_VALUE;
    if (!a->n)
        return CUDA_SUCCESS;
    if (!a->d_in || !a->d_out || !a->d_temp || a->temp_bytes < j2ki_scan_cuda_temp_size(a->n, a->elem_bytes))
        return CUDA_ERROR_INVALID_VALUE;
    const uint32_t tiles = (uint32_t)scan_tiles(a->n, a->elem_bytes);
    const int wide = a->elem_bytes == 8;
    J2kiScanParams p = { a->d_in, a->d_out, a->d_temp, (uint32_t)a->n, a->exclusive };
    if (tiles > 1) {
        CUresult e = j2ki_launch(wide ? j2ki_kernel<J2KI_K_SCAN64_REDUCE> : j2ki_kernel<J2KI_K_SCAN32_REDUCE>, tiles,
                                 J2KI_SCAN_THREADS, 0, st, p);
        if (e != CUDA_SUCCESS)
            return e;
    }
    return j2ki_launch(wide ? j2ki_kernel<J2KI_K_SCAN64_TILE> : j2ki_kernel<J2KI_K_SCAN32_TILE>, tiles, J2KI_SCAN_THREADS, 0,
                       st, p);
}
