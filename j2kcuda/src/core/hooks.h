/*
 * Test hooks: the environment variables the library reads, all of them here, once per
 * encoder (j2kc_encoder_create), into the J2kiHooks of its coding parameters. They exist so
 * that tests reach code that real users hit only on other GPUs (the serial tier-1 kernels,
 * the shared-memory fallbacks of smaller GPUs) and so that both backends can be checked with
 * another rate-control search; none changes the bytes of a codestream. doc/testing.md lists
 * them with the checks that use them. Tuning defaults are not hooks: see tuning.h.
 */
#ifndef J2KI_HOOKS_H
#define J2KI_HOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct J2kiHooks {
    /** J2KC_CUDA_T1_VARIANT: the CUDA tier-1 kernel variant (t1_cuda.h), -1 for the default
     *  (the column-parallel coder); e.g. 8 runs the 8-lane serial kernel. */
    int t1_variant;
    /** J2KC_CUDA_SMEM_OPTIN: the dynamic shared memory per thread block the CUDA tier-1 may
     *  use, lowered from the device's (never raised), to run the fallbacks of GPUs with less;
     *  0: the device's. */
    int smem_optin;
    /** J2KC_RC_PROBES: thresholds sized per guided step of a byte-budget search (rc_ref.h), 1 by
     *  default (J2KI_TUNE_RC_PROBES); both backends read this field, so they decide alike. */
    int rc_probes;
    /** J2KC_MULTI_STANDIN=N: N reference backends stand in for N CUDA devices when gpu is a
     *  list or all (core/backend_multi.h), so that the multi-device layer (dispatch, order,
     *  per-device counts, a device's failure) is tested without GPUs; 0: off. The stand-ins
     *  read frames marked J2KC_MEM_CUDA as host memory, and the caller's context
     *  (j2kc_params_set_cuda, never used) is taken to be on the last listed device. */
    int multi_standin;
    /** J2KC_MULTI_FAIL=D: in a multi-device encoder, device D fails every frame at its wait,
     *  as a device lost mid-stream does; -1: none. */
    int multi_fail;
    /** J2KC_T2_TEAM_MIN=N: the CUDA tier-2 and rate control code the headers of precincts of
     *  at least N code-blocks by a thread block, the others by a warp (t2_cuda.h), so that
     *  tests run both coders on the same frames; J2KI_TUNE_T2_TEAM_MIN_CBLKS by default. */
    int t2_team_min;
} J2kiHooks;

/** Fills every field of *h from the environment (the defaults where a variable is unset or
 *  not a number). The only place the library calls getenv for its own settings. */
void j2ki_hooks_read(J2kiHooks *h);

/** J2KC_CUDA_DRIVER: the file the CUDA backend opens instead of the NVIDIA driver
 *  (libcuda.so.1), or NULL when unset or empty; so that tests without a GPU reach the
 *  loader's failures (cuda/cu_driver.h): a path that does not exist is a machine without a
 *  driver, a stub library an old driver. Read once per process, by the loader. */
const char *j2ki_hooks_cuda_driver(void);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_HOOKS_H */
