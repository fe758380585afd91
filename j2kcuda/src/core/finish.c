/*
 * The host part of the pipeline after tier-1 that both backends share, so that they write the
 * same bytes (backend.h): rate control (PCRD-opt, ISO/IEC 15444-1 J.14), tier-2 and the
 * markers (Annex A, B.9-B.12), the profile's level fields, and the byte budget checked last.
 */
#include "core/backend.h"
#include "core/params.h"

int64_t j2ki_finish_codestream(J2kiPlan *plan, const J2kiLog *log, uint8_t *out, size_t cap)
{
    return j2ki_finish_codestream_with(plan, log, out, cap, NULL, NULL, NULL, NULL);
}

int64_t j2ki_finish_codestream_with(J2kiPlan *plan, const J2kiLog *log, uint8_t *out, size_t cap,
                                    J2kiRcSizeFn size_fn, void *opaque, struct J2kiPool *pool, void *rc_scratch)
{
    int ret = size_fn ? j2ki_rc_run_pool(plan, log, size_fn, opaque, pool, rc_scratch) : j2ki_rc_run(plan, log);
    if (ret < 0)
        return ret;
    int64_t n = j2ki_codestream_write(plan, out, cap);
    if (n < 0) {
        j2ki_log(log, J2KC_LOG_ERROR, "tier-2: codestream does not fit in %zu bytes", cap);
        return n;
    }
    if ((ret = j2ki_finish_checks(plan->cp, out, (size_t)n, log)) < 0)
        return ret;
    return n;
}

int j2ki_finish_checks(const J2kiCodingParams *cp, uint8_t *cs, size_t len, const J2kiLog *log)
{
    int ret;
    if ((ret = j2ki_profile_finish_levels(cp, cs, len, log)) < 0)
        return ret;
    if (cp->rc_mode == J2KI_RC_BYTES && (uint64_t)len > cp->frame_bytes) {
        /* rate control guarantees this never happens; refuse to hand out a codestream that breaks the budget */
        j2ki_log(log, J2KC_LOG_ERROR, "internal: codestream of %llu bytes exceeds the budget of %llu",
                 (unsigned long long)len, (unsigned long long)cp->frame_bytes);
        return J2KC_ERR_INTERNAL;
    }
    return 0;
}
