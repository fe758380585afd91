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
 */
#ifndef J2KI_BACKEND_MULTI_H
#define J2KI_BACKEND_MULTI_H

#include "core/backend.h"

/** The multi-device backend's operations (submit, wait, stats, uninit); its init is
 *  j2ki_multi_init. Its name is the children's. */
extern const J2kiBackendOps j2ki_backend_multi;

/**
 * Creates the children: child->init for each device of devices[0..n-1] (2..J2KI_MAX_GPUS),
 * with a copy of cp whose gpu is that device and slots_per_child slots. fail_device (test
 * hook J2KC_MULTI_FAIL, -1: none): the child of that device fails every frame at its
 * wait, as a device lost mid-stream does. Returns 0 or the first child's error (logged with
 * its device); *priv is then freed.
 */
int j2ki_multi_init(void **priv, const J2kiBackendOps *child, const J2kiCodingParams *cp,
                    const int *devices, int n, const J2kiPlan *plan, const J2kiLog *log,
                    int slots_per_child, size_t max_out, int fail_device);

/** Frames each device has coded (received successfully) so far: fills up to max entries of
 *  devices[] and frames[], returns the number of devices. */
int j2ki_multi_frames(void *priv, int *devices, uint64_t *frames, int max);

#endif
