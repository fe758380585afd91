/*
 * The kernels of scan_cuda.h's prefix sums (scan_kern.cu, device code only) and their one
 * parameter struct, shared by the kernels and the host code that fills it.
 */
#ifndef J2KI_SCAN_KERN_H
#define J2KI_SCAN_KERN_H

#include <stdint.h>

/* Threads per block; a tile is SCAN_THREADS x items elements, 16 KB of input either way (4096
 * uint32_t, 2048 uint64_t): enough work per block to hide the reduction of the tile sums
 * before it. */
#define J2KI_SCAN_THREADS    256
#define J2KI_SCAN_TILE_BYTES (16 * 1024)

typedef struct J2kiScanParams {
    const void *in;
    void       *out;         /* may be in */
    void       *sums;        /* one per tile, of the element type */
    uint32_t    n;
    int         exclusive;
} J2kiScanParams;

/* The kernels (kernels.def), per element type (32: uint32_t, 64: uint64_t):
 * j2ki_k_scan{32,64}_reduce writes each tile's sum; j2ki_k_scan{32,64}_tile scans each tile
 * offset by the sum of the tiles before it (sums unread when there is one tile). */

#endif /* J2KI_SCAN_KERN_H */
