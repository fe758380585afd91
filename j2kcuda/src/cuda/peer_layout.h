/*
 * Where a device frame of another context goes when it is copied into a slot's buffer
 * (cuda_peer.cu): plain arithmetic, no CUDA, so that it is tested on any machine
 * (tests/unit/test_peer_layout.c).
 *
 * Each component plane is a run of rows; components interleaved in one plane (one step > 1, one
 * stride, one height, their first samples within one pixel of each other: packed RGB in either
 * order, the UV plane of NV12/P010) share one run, copied once. A run's rows go to the buffer
 * back to back, each padded to a multiple of J2KI_PEER_PITCH_ALIGN bytes; a component keeps its
 * step and its offset inside the run.
 */
#ifndef J2KI_PEER_LAYOUT_H
#define J2KI_PEER_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "j2kcuda.h"

#define J2KI_PEER_PITCH_ALIGN 256   /* the buffer's row pitch: a multiple of this many bytes */

typedef struct J2kiPeerPlane {
    uintptr_t src;          /* the run's first byte in the frame */
    ptrdiff_t src_pitch;
    size_t    row_bytes;    /* bytes of each row the components read */
    size_t    rows;
    size_t    dst_off;      /* where the run starts in the buffer */
    size_t    dst_pitch;
} J2kiPeerPlane;

typedef struct J2kiPeerComp {
    const void *data;       /* the component's first sample */
    ptrdiff_t   stride;     /* bytes from row to row */
    int         step;       /* samples from column to column (0 or 1: planar) */
    int         bytes;      /* 1 or 2 bytes per sample */
    uint32_t    w, h;       /* the component's samples */
} J2kiPeerComp;

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The runs of the nb_comps components of comp[] (at most J2KC_MAX_COMPS) into pl[], the run of
 * each component into plane_of[], the buffer's size into *size; returns the number of runs, or
 * J2KC_ERR_UNSUPPORTED for a component whose rows overlap or go backwards (stride below its
 * row's bytes, as a negative stride is), which a pitched copy cannot take, or J2KC_ERR_INVAL
 * for an empty component.
 */
int j2ki_peer_layout(const J2kiPeerComp *comp, int nb_comps, J2kiPeerPlane *pl, int *plane_of,
                     size_t *size);

#ifdef __cplusplus
}
#endif

/** Where component comp's first sample is in the buffer, given its run pl. */
static inline size_t j2ki_peer_comp_offset(const J2kiPeerComp *comp, const J2kiPeerPlane *pl)
{
    return pl->dst_off + (size_t)((uintptr_t)comp->data - pl->src);
}

#endif
