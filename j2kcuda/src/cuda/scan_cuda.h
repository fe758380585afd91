/*
 * Device-wide prefix sums over uint32_t or uint64_t, made of CUB's block primitives (no CUB
 * device-wide call, hence nothing of the CUDA runtime's but the launches): a reduce-then-scan
 * in at most two launches on the caller's stream, graph-capturable (no host sync, no
 * allocation per call), temporary storage sized once at creation.
 *
 *   j2ki_k_scan{32,64}_reduce  one thread block per tile: the tile's sum (cub::BlockReduce),
 *                              skipped when the input is one tile
 *   j2ki_k_scan{32,64}_tile    one thread block per tile: the sum of the tiles before it (each
 *                              block reduces the tile sums itself: a few hundred at most,
 *                              cheaper than a third launch), then the tile's scan
 *                              (cub::BlockScan) offset by it
 * (scan_kern.cu, device code only; this header's functions launch them).
 *
 * Reduce-then-scan reads the input twice where a single-pass scan with decoupled look-back
 * (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA
 * NVR-2016-002; CUB's ScanTileState + TilePrefixCallbackOp) reads it once, but the inputs here
 * are at most a few MB that sit in L2, and the look-back's status words need an init launch of
 * their own: the launch count is the same (two) and there is no inter-block spinning.
 */
#ifndef J2KI_SCAN_CUDA_H
#define J2KI_SCAN_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One scan: d_out[i] = d_in[0] + ... + d_in[i] (inclusive) or + d_in[i - 1] (exclusive, 0
 *  first). d_out may be d_in. */
typedef struct J2kiScanArgs {
    const void *d_in;
    void       *d_out;
    size_t      n;            /**< elements, < 2^31 */
    int         elem_bytes;   /**< 4: uint32_t, 8: uint64_t (sums wrap modulo 2^32 / 2^64) */
    int         exclusive;
    void       *d_temp;       /**< j2ki_scan_cuda_temp_size(n or more, elem_bytes) bytes */
    size_t      temp_bytes;
} J2kiScanArgs;

/** Bytes of temporary storage a scan of up to max_n elements of elem_bytes needs (> 0). */
size_t j2ki_scan_cuda_temp_size(size_t max_n, int elem_bytes);

/** Enqueues the scan on st; returns the launch error (CUDA_ERROR_INVALID_VALUE for arguments out
 *  of range or temporary storage too small). n == 0 enqueues nothing. */
CUresult j2ki_scan_cuda(const J2kiScanArgs *a, CUstream st);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_SCAN_CUDA_H */
