/*
 * Fuzz target: the codestream parser (tools/csparse.c) and every profile rule of j2kc-check
 * (tools/profcheck.c). Each input is judged once as the profile its Rsiz declares (verbose:
 * the summary printer runs too) and once forced to each profile j2kc-check knows, with frame
 * rates from ordinary to extreme so the rate limits' arithmetic (DCI frame and component
 * sizes, IMF mainlevel/sublevel rates) meets its edges. Violations are expected; memory
 * errors, undefined behaviour and crashes are what the sanitizers report.
 */
#include <stdint.h>
#include <stdio.h>

#include "profcheck.h"

static const char *const profile_names[] = {
    "none", "dci2k", "dci4k", "imf2k", "imf4k", "imf8k", "imf2k_r", "imf4k_r", "imf8k_r",
    "broadcast", "broadcast_multi", "broadcast_multi_r", "imf_ht", "imf_ht_r",
};

/* fps_num / fps_den pairs (0/0: no --fps); j2kc-check accepts 1..1000000 for each. */
static const int fps_list[][2] = {
    { 0, 0 }, { 24, 1 }, { 60, 1 }, { 24000, 1001 }, { 1000000, 1 }, { 1, 1000000 },
};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* The checker prints its findings on stdout: keep them out of the fuzzer's log. */
    if (!freopen("/dev/null", "w", stdout))
        return 0;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Checker k = { .file = "fuzz", .verbose = 1 };
    pc_check(&k, data, size, 0);
    k.verbose = 0;
    k.quiet = 1;
    for (size_t i = 0; i < sizeof(profile_names) / sizeof(profile_names[0]); i++) {
        size_t f = i % (sizeof(fps_list) / sizeof(fps_list[0]));
        k.fps_num = fps_list[f][0];
        k.fps_den = fps_list[f][1];
        pc_check(&k, data, size, pc_profile_id(profile_names[i]));
    }
    return 0;
}
