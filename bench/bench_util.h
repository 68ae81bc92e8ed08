/*  bench_util.h -- small helpers shared by the bench programs (xxl_bench,
    xxl_bare): the wall clock and percentiles of sorted samples.
*/

#ifndef BENCH_UTIL_H_INCLUDED
#define BENCH_UTIL_H_INCLUDED

#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

//  CLOCK_REALTIME in microseconds: comparable across processes
static inline int64_t
bench_wall_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

//  qsort comparator of int64_t
static inline int
bench_compare_int64 (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y? -1: x > y? 1: 0;
}

//  Percentile p (0..100) of sorted values (nearest rank); -1 when none
static inline int64_t
bench_percentile (const int64_t *sorted, size_t count, double p)
{
    if (count == 0)
        return -1;
    size_t rank = (size_t) ceil (p / 100.0 * (double) count);
    return sorted [rank? rank - 1: 0];
}

#endif
