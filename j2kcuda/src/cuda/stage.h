/*
 * Host staging of a frame: the component planes of a host frame (any row stride, planar or
 * packed) are copied into one compact area (each component's rows back to back from its own
 * offset), by the calling thread and a pool of helper threads, and handed on in parts as they
 * complete, so that the caller can start each part's upload while the next ones are copied.
 *
 * Work is claimed in chunks of rows (a shared counter), not split in fixed shares: a helper that
 * wakes late (a sleeping thread's wake-up can take a sizeable part of the copy) takes fewer
 * chunks instead of holding up the frame. Parts are handed on in order, each once, by the
 * calling thread only; j2ki_stage returns when every row is in place and no helper touches the
 * frame or the area any more, so the caller may reuse its planes at once.
 *
 * Contiguous rows are copied with non-temporal stores where the CPU has them (SSE2): the area is
 * read next by the GPU's copy engine, not by the CPU, and the stores skip reading the lines
 * they replace. Why this way: j2kcuda/src/cuda/stage.c; the measurements:
 * bench/results/history.md#staging-in-parts.
 */
#ifndef J2KI_STAGE_H
#define J2KI_STAGE_H

#include <stddef.h>
#include <stdint.h>
#include "j2kcuda.h"

#define J2KI_STAGE_MAX_PARTS   16
#define J2KI_STAGE_MAX_THREADS 15

typedef struct J2kiStageJob {
    int            nb_comps;
    const uint8_t *src[J2KC_MAX_COMPS];    /* first sample of each component plane */
    ptrdiff_t      stride[J2KC_MAX_COMPS]; /* bytes from one source row to the next */
    int            step[J2KC_MAX_COMPS];   /* samples from one source column to the next (<= 1: adjacent) */
    uint32_t       w[J2KC_MAX_COMPS], h[J2KC_MAX_COMPS];
    int            bytes[J2KC_MAX_COMPS];  /* bytes per sample: 1 or 2 */
    size_t         off[J2KC_MAX_COMPS + 1];/* component c's compact rows (w[c] * bytes[c] each) start at
                                              dst + off[c]; off[nb_comps] is the area's size, and
                                              off[c] + h[c] * w[c] * bytes[c] <= off[c + 1] */
    uint8_t       *dst;
    int            nb_parts;               /* 1..J2KI_STAGE_MAX_PARTS: parts of the rows, in order */
    /* called by the calling thread, in order, once per non-empty part when all its bytes
     * [off, off + len) of the area are in place (the parts cover [0, off[nb_comps]), gaps
     * between components included); a negative return stops further calls and is returned by
     * j2ki_stage once the copy is over. NULL: no calls. */
    int          (*part_done)(void *opaque, size_t off, size_t len);
    void          *opaque;
} J2kiStageJob;

typedef struct J2kiStager J2kiStager;

/** A pool of up to nb_threads helper threads (fewer, or none, when threads cannot be made).
 *  NULL when out of memory: j2ki_stage(NULL, ...) then copies on the calling thread alone. */
J2kiStager *j2ki_stager_new(int nb_threads);
int j2ki_stager_threads(const J2kiStager *s);
void j2ki_stager_free(J2kiStager *s);

/** Copies job's planes into its area (see above); the stager runs one job at a time. Returns
 *  0 or the first negative return of part_done. */
int j2ki_stage(J2kiStager *s, const J2kiStageJob *job);

/** Whether the job's components are interleaved in one plane (packed RGB / XYZ such as FFmpeg's
 *  rgb48, xyz12, rgb24): two or more components of one size, sample size, stride and step, the
 *  step spanning every component's sample of a pixel. Then each row can be staged as it is:
 *  *span bytes from src[*first] (the component whose sample comes first in memory), component
 *  c's sample x at (src[c] - src[*first]) + x * step * bytes of the staged row. */
int j2ki_stage_interleaved(const J2kiStageJob *job, int *first, size_t *span);

/** The parts a frame of the given bytes is staged in: one per J2KI_TUNE_STAGE_PART_BYTES
 *  (2 MB), at most J2KI_TUNE_STAGE_MAX_PARTS (8; tuning.h). */
int j2ki_stage_parts(size_t bytes);

#endif
