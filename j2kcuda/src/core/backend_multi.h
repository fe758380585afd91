/*
 * One encoder over several devices (gpu=0,1 / gpu=all): a backend made of one child backend
 * per device, each with the slots of a one-device encoder. The front end (encoder.c) keeps its
 * ring of nb_children * slots_per_child slots and its in-order delivery; this layer maps each
 * ring slot, when a frame is submitted into it, to the least busy child (fewest frames in
 * flight; ties to the lowest device in the list) and one of that child's slots. Frames sent to
 * one child reach it in submission order and are received in that order too, so each child
 * sees the slot ring it expects (its frame k in its slot k % slots_per_child). A codestream
 * depends only on the frame and the coding parameters, never on the device, so the bytes are
 * those of one device. A child's failure fails the frames it holds, each with an error naming
 * its device; the others' frames are still delivered (nothing waits on a failed child).
 *
 * Frames in CUDA memory (J2KC_MEM_CUDA) belong to a context: the caller's
 * (j2kc_params_set_cuda) or the frame's cu_ctx. The child of the device that holds the
 * caller's context codes in that context, so it reads such frames in place; any other child
 * copies a frame device to device first (the CUDA backend, cuda_peer.cu). Among the least busy
 * children the one holding the frame is picked, so a frame moves only when that evens the load:
 * one frame at a time stays on its device, a full pipeline spreads over every device.
 */
#ifndef J2KI_BACKEND_MULTI_H
#define J2KI_BACKEND_MULTI_H

#include "core/backend.h"

/** The multi-device backend's operations (submit, wait, stats, uninit); its init is
 *  j2ki_multi_init. Its name is the children's. */
extern const J2kiBackendOps j2ki_backend_multi;

/** How the children are made (j2ki_multi_init). */
typedef struct J2kiMultiSetup {
    const int *devices;     /* the devices, 2..J2KI_MAX_GPUS of them */
    int        nb_devices;
    int        slots_per_child;
    int        ctx_device;  /* the device of the caller's context (cp->cu_ctx), -1: none */
    int        fail_device; /* test hook J2KC_MULTI_FAIL, -1: none: the child of that device
                               fails every frame at its wait, as a device lost mid-stream does */
    int        standin;     /* test hook J2KC_MULTI_STANDIN: the children are reference backends,
                               which read frames marked J2KC_MEM_CUDA as host memory */
} J2kiMultiSetup;

/**
 * Creates the children: child->init for each device of su->devices, with a copy of cp whose
 * gpu is that device and su->slots_per_child slots; only the child of su->ctx_device keeps
 * the caller's context and stream. Returns 0 or the first child's error (logged with its
 * device); *priv is then freed.
 */
int j2ki_multi_init(void **priv, const J2kiBackendOps *child, const J2kiCodingParams *cp,
                    const J2kiMultiSetup *su, const J2kiPlan *plan, const J2kiLog *log,
                    size_t max_out);

/**
 * The child a frame goes to: among those with a free slot (busy[i] < slots), the least busy;
 * ties to the one that holds the frame (holds[i] != 0), then to the first. -1: none is free.
 */
int j2ki_multi_pick(const uint64_t *busy, const int *holds, int n, int slots);

/** Frames each device has coded (received successfully) so far: fills up to max entries of
 *  devices[] and frames[], returns the number of devices. */
int j2ki_multi_frames(void *priv, int *devices, uint64_t *frames, int max);

#endif
