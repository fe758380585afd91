/*
 * timing.h: the wall clock and the median sort shared by the bench tools (j2kbench.c,
 * nvj2k_bench.c, pcie_floor.c; header-only, static functions).
 */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <time.h>

/* monotonic wall time in milliseconds */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* qsort comparison of doubles, ascending (medians of timed runs) */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif /* BENCH_TIMING_H */
