/*
 * Test hooks (hooks.c): j2ki_hooks_read fills every field from the environment, with the
 * defaults where a variable is unset, empty, negative or not a number; rate control's
 * probes per step come from the field, clamped to 1 .. J2KI_RC_MULTI_MAX.
 */
#define _POSIX_C_SOURCE 200809L     /* setenv */
#include "test.h"
#include "core/hooks.h"
#include "ref/rc_ref.h"
#include "hd/rc_core.h"
#include "core/tuning.h"

static const char *const names[] = { "J2KC_CUDA_T1_VARIANT", "J2KC_CUDA_SMEM_OPTIN", "J2KC_RC_PROBES" };

static void unset_all(void)
{
    for (int i = 0; i < 3; i++)
        unsetenv(names[i]);
}

static void check_defaults(const char *how)
{
    J2kiHooks h;
    memset(&h, 0x5A, sizeof(h));     /* every field must be written */
    j2ki_hooks_read(&h);
    CHECK(h.t1_variant == -1, "%s: t1_variant %d", how, h.t1_variant);
    CHECK(h.smem_optin == 0, "%s: smem_optin %d", how, h.smem_optin);
    CHECK(h.rc_probes == J2KI_TUNE_RC_PROBES, "%s: rc_probes %d", how, h.rc_probes);
}

int main(void)
{
    static const char *const bad[] = { "", "x", "-3", " 7" };
    J2kiHooks h;
    J2kiCodingParams cp;

    unset_all();
    check_defaults("unset");
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        for (int i = 0; i < 3; i++)
            setenv(names[i], bad[k], 1);
        check_defaults(bad[k]);
    }

    setenv("J2KC_CUDA_T1_VARIANT", "68", 1);
    setenv("J2KC_CUDA_SMEM_OPTIN", "16384", 1);
    setenv("J2KC_RC_PROBES", "32", 1);
    j2ki_hooks_read(&h);
    CHECK(h.t1_variant == 68 && h.smem_optin == 16384 && h.rc_probes == 32, "set: %d %d %d", h.t1_variant,
          h.smem_optin, h.rc_probes);
    setenv("J2KC_CUDA_T1_VARIANT", "0", 1);            /* variant 0 is a kernel, not the default */
    j2ki_hooks_read(&h);
    CHECK(h.t1_variant == 0, "variant 0: %d", h.t1_variant);
    unset_all();

    /* rate control takes the field, clamped (0: a zeroed cp, as tests build them) */
    memset(&cp, 0, sizeof(cp));
    const int in[] = { 0, 1, 3, 32, 33, 1000 }, out[] = { 1, 1, 3, 32, J2KI_RC_MULTI_MAX, J2KI_RC_MULTI_MAX };
    for (int i = 0; i < 6; i++) {
        cp.hooks.rc_probes = in[i];
        CHECK(j2ki_rc_multi_probes(&cp) == out[i], "rc_probes %d: %d probes", in[i], j2ki_rc_multi_probes(&cp));
    }
    return test_done("hooks");
}
