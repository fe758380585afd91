/*
 * The interface between the encoder front end (encoder.c: parameters, plan, slot ring, in-order
 * delivery) and a backend that turns one frame into one codestream. Each backend owns
 * nb_slots frame slots; the front end submits frame k into slot k % nb_slots and later waits
 * for that slot, so at most nb_slots frames are in flight and they finish in submission order.
 */
#ifndef J2KI_BACKEND_H
#define J2KI_BACKEND_H

#include "core/j2ki.h"
#include "core/plan.h"
#include "ref/rc_ref.h"
#include "ref/t2_ref.h"

typedef struct J2kiBackendOps {
    const char *name;
    /** Creates the backend state for a finished plan; allocates every per-slot buffer now.
     *  max_out is the codestream capacity each slot must provide (JP2 boxes included). */
    int  (*init)(void **priv, const J2kiCodingParams *cp, const J2kiPlan *plan,
                 const J2kiLog *log, int nb_slots, size_t max_out);
    /** Starts encoding frame f in slot (synchronous backends encode here). The frame's host
     *  planes must not be read after this returns. */
    int  (*submit)(void *priv, int slot, const J2kcFrame *f);
    /** Waits (block = 1) or polls (block = 0: J2KC_ERR_AGAIN if not done) for the slot's
     *  codestream; *data stays valid until the slot is submitted again. */
    int  (*wait)(void *priv, int slot, int block, const uint8_t **data, size_t *size);
    /** Optional per-stage timings of the slot's last frame. */
    void (*stats)(void *priv, int slot, J2kcStats *st);
    /** Frees everything; accepts a half-built state; must not fail. */
    void (*uninit)(void *priv);
} J2kiBackendOps;

extern const J2kiBackendOps j2ki_backend_ref;
#if J2KC_HAVE_CUDA
extern const J2kiBackendOps j2ki_backend_cuda;
/** Number of CUDA devices, logging one line per device; <0 on error (J2KC_ERR_NODEV when the
 *  driver is missing). Used by backend=auto and j2kc_cuda_devices(). */
int j2ki_cuda_device_count(const J2kiLog *log, int verbose);
/** The device index of CUDA context cu_ctx (a CUcontext), or a negative error (logged). */
int j2ki_cuda_ctx_device(const J2kiLog *log, void *cu_ctx);
/** Once per encoder, before its first CUDA call: where CUDA_DEVICE_MAX_CONNECTIONS is unset
 *  or below one hardware work queue per frame slot (nb_slots, at least 8, at most 32), logs
 *  (J2KC_LOG_VERBOSE) the value that keeps the slots' streams from queueing behind each
 *  other. The library never sets it (caller_ctx: the caller's context, made already). */
void j2ki_cuda_connections(const J2kiLog *log, int nb_slots, int caller_ctx);

/** The driver's initialisation and device gpu's context, made on a thread of their own while
 *  creation plans (cuda_warm.cu); NULL when the thread cannot be started (nothing changes but
 *  the time). */
typedef struct J2kiCudaWarm J2kiCudaWarm;
typedef struct J2kiCudaWarmTimes {
    double driver;      /* ms the thread's first CUDA call took (the driver's initialisation) */
    double context;     /* ms it then took to make the device's context */
    double waited;      /* ms the joining thread waited for it */
} J2kiCudaWarmTimes;
J2kiCudaWarm *j2ki_cuda_warm_start(int gpu);
/** Waits until the thread's driver initialisation is done (w NULL: returns at once); the ms
 *  waited. */
double j2ki_cuda_warm_driver(J2kiCudaWarm *w);
/** Waits for the thread, frees it and sets *w to NULL; t (optional) gets its times; a NULL
 *  *w is accepted. */
void j2ki_cuda_warm_join(J2kiCudaWarm **w, J2kiCudaWarmTimes *t);
/** The CUDA backend's init (j2ki_backend_cuda.init) with the context thread of the creation
 *  (*warm, may be NULL), which it joins before its first CUDA call, after its host tables. */
int j2ki_cuda_init_warm(void **priv, const J2kiCodingParams *cp, const J2kiPlan *plan,
                        const J2kiLog *log, int nb_slots, size_t max_out, J2kiCudaWarm **warm);
#endif

/**
 * The host part of the pipeline after tier-1, shared by both backends so that they write the
 * same bytes: rate control, tier-2, markers, optional JP2 wrapping. Reads the tier-1 results
 * in plan->cblks; writes into out (cap bytes); returns the length or a negative error.
 * The plan is not const: tier-2 keeps per-frame state in it (one plan per slot).
 */
int64_t j2ki_finish_codestream(J2kiPlan *plan, const J2kiLog *log, uint8_t *out, size_t cap);

/** j2ki_finish_codestream with rate control's sizings done by size_fn(opaque, ...) (rc_ref.h), which
 *  must give j2ki_t2_size's answers (the reference backend's t2_sizer.h), and its per code-block
 *  work on pool with rc_scratch (j2ki_rc_run_pool); size_fn NULL: j2ki_rc_run, on the calling
 *  thread. */
int64_t j2ki_finish_codestream_with(J2kiPlan *plan, const J2kiLog *log, uint8_t *out, size_t cap,
                                    J2kiRcSizeFn size_fn, void *opaque, struct J2kiPool *pool,
                                    void *rc_scratch);

/** The checks of a finished codestream of len bytes at cs, the same for both backends (the CUDA
 *  backend writes its codestream on the device): the profile's level fields (written in
 *  place), then the byte budget. Returns 0 or a negative error, logged. */
int j2ki_finish_checks(const J2kiCodingParams *cp, uint8_t *cs, size_t len, const J2kiLog *log);

#endif
