/*
 * The kernels of sort_cuda.h's radix sort (sort_kern.cu, device code only) and their one
 * parameter struct, shared by the kernels and the host code that fills it.
 */
#ifndef J2KI_SORT_KERN_H
#define J2KI_SORT_KERN_H

#include <stdint.h>

/* 256 threads of 16 keys: a tile of 4096 keys; 8-bit digits, one digit per thread for the
 * counts and the rank's digit prefix */
#define J2KI_SORT_THREADS    256
#define J2KI_SORT_ITEMS      16
#define J2KI_SORT_TILE       (J2KI_SORT_THREADS * J2KI_SORT_ITEMS)
#define J2KI_SORT_RADIX_BITS 8
#define J2KI_SORT_DIGITS     (1 << J2KI_SORT_RADIX_BITS)

typedef struct J2kiSortParams {
    const uint32_t *keys_in, *vals_in;
    uint32_t       *keys_out, *vals_out;
    uint32_t       *counts;        /* DIGITS x nb_tiles, digit-major; after the scan, offsets */
    uint32_t        n, nb_tiles;
    uint32_t        bit, mask;     /* this pass's digit: (~key >> bit) & mask */
} J2kiSortParams;

/* The kernels (kernels.def): j2ki_k_sort_hist: each tile's digit counts into counts; j2ki_k_sort_scatter: each key and value to its place (the
 * tile's offset for its digit from the scanned counts plus its stable rank among the tile's
 * keys of that digit; with one tile, its stable rank in the tile) */

#endif /* J2KI_SORT_KERN_H */
