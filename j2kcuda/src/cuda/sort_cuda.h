/*
 * Device-wide stable radix sort of (uint32_t key, uint32_t value) pairs, largest key first,
 * made of CUB's block primitives (no CUB device-wide call): a least-significant-digit radix
 * sort, 8 bits a pass over the key bits [0, end_bit) only, each pass
 *
 *   j2ki_k_sort_hist     one thread block per tile: the tile's digit counts, digit-major
 *                        (counts[d * nb_tiles + tile]), skipped when the input is one tile
 *   j2ki_scan_cuda       exclusive sum of the counts (scan_cuda.h): where each tile's keys of
 *                        each digit start in the output
 *   j2ki_k_sort_scatter  one thread block per tile: each key's rank among the tile's keys by
 *                        digit, stable (cub::BlockRadixRankMatch, keys warp-striped), then the
 *                        key and its value written at its tile's offset plus that rank
 *
 * (kernels in sort_kern.cu, device code only): the count / prefix-sum / scatter split of the
 * parallel radix sort (Satish, Harris & Garland, "Designing Efficient Sorting Algorithms for
 * Manycore GPUs", IPDPS 2009; Vorontsov, Preobrazhensky & Choporov's study in
 * ../shared/papers/gpu-radix-sort-ru.md has the same three steps). Keys are
 * ranked complemented (~key ascending is key descending), so equal keys keep their input order,
 * as CUB's SortPairsDescending does. Launches on the caller's stream, graph-capturable,
 * temporary storage sized once at creation.
 */
#ifndef J2KI_SORT_CUDA_H
#define J2KI_SORT_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One sort: d_keys_out / d_vals_out get the pairs of d_keys_in / d_vals_in by decreasing
 *  key, equal keys in input order; the inputs are left as they were. Keys must be below
 *  2^end_bit (the bits above are not looked at). */
typedef struct J2kiSortArgs {
    const uint32_t *d_keys_in;
    const uint32_t *d_vals_in;
    uint32_t       *d_keys_out;
    uint32_t       *d_vals_out;
    size_t          n;          /**< pairs, < 2^31 */
    int             end_bit;    /**< 1 .. 32 */
    void           *d_temp;     /**< j2ki_sort_cuda_temp_size(n or more) bytes */
    size_t          temp_bytes;
} J2kiSortArgs;

/** Bytes of temporary storage a sort of up to max_n pairs needs (> 0). */
size_t j2ki_sort_cuda_temp_size(size_t max_n);

/** Enqueues the sort on st; returns the launch error (CUDA_ERROR_INVALID_VALUE for arguments out
 *  of range or temporary storage too small). n == 0 enqueues nothing. */
CUresult j2ki_sort_cuda(const J2kiSortArgs *a, CUstream st);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_SORT_CUDA_H */
