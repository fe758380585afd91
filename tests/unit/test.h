/*
 * Minimal unit-test helpers: every test binary prints one line per check group
 * ("ok NAME" / "FAIL NAME: why") and exits non-zero when any failed. Random inputs come from
 * a seeded xorshift generator whose seed is printed, so any failure can be replayed with
 * J2KC_TEST_SEED=N.
 */
#ifndef J2KC_TEST_H
#define J2KC_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;

#define CHECK(cond, ...) do {                                                       \
        test_checks++;                                                              \
        if (!(cond)) {                                                              \
            test_failures++;                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
        }                                                                           \
    } while (0)

static uint64_t test_rng_state;

/** Seeds the generator from J2KC_TEST_SEED or the given default and prints the seed. */
static inline void test_seed(const char *name, uint64_t dflt)
{
    const char *e = getenv("J2KC_TEST_SEED");
    test_rng_state = e ? strtoull(e, NULL, 0) : dflt;
    if (!test_rng_state)
        test_rng_state = 1;
    printf("# %s: seed %llu\n", name, (unsigned long long)test_rng_state);
}

static inline uint32_t test_rand(void)
{
    uint64_t x = test_rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    test_rng_state = x;
    return (uint32_t)(x >> 16);
}

/** Prints the summary line and returns the process exit status. */
static inline int test_done(const char *name)
{
    printf("%s %s: %d checks, %d failed\n", test_failures ? "FAIL" : "ok", name, test_checks, test_failures);
    return test_failures ? 1 : 0;
}

#endif
