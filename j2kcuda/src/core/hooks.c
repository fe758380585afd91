/* The test hooks' one reading of the environment (hooks.h). */
#include <stdlib.h>

#include "core/hooks.h"
#include "core/tuning.h"

/* The decimal value of variable name, or def when it is unset or does not start with a digit. */
static int env_int(const char *name, int def)
{
    const char *e = getenv(name);
    return e && *e >= '0' && *e <= '9' ? atoi(e) : def;
}

void j2ki_hooks_read(J2kiHooks *h)
{
    h->t1_variant = env_int("J2KC_CUDA_T1_VARIANT", -1);
    h->smem_optin = env_int("J2KC_CUDA_SMEM_OPTIN", 0);
    h->rc_probes = env_int("J2KC_RC_PROBES", J2KI_TUNE_RC_PROBES);
    h->multi_standin = env_int("J2KC_MULTI_STANDIN", 0);
    h->multi_fail = env_int("J2KC_MULTI_FAIL", -1);
    h->t2_team_min = env_int("J2KC_T2_TEAM_MIN", J2KI_TUNE_T2_TEAM_MIN_CBLKS);
}

const char *j2ki_hooks_cuda_driver(void)
{
    const char *e = getenv("J2KC_CUDA_DRIVER");
    return e && *e ? e : NULL;
}
