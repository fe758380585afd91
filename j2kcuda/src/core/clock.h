/*
 * The library's one clock: milliseconds on the monotonic clock (POSIX CLOCK_MONOTONIC, never
 * set back), for the phase times the verbose log reports. The tools have their own
 * (bench/timing.h); the library does not include tool headers.
 */
#ifndef J2KI_CLOCK_H
#define J2KI_CLOCK_H

#include <time.h>

static inline double j2ki_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#endif /* J2KI_CLOCK_H */
