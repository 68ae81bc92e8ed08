/*  xxl_test.h -- the few helpers the C unit tests share.

    XXL_CHECK records a pass or a failure with its line; xxl_test_done
    prints the closing line "N passed, M failed" that CI reads and returns
    the exit status.
*/

#ifndef XXL_TEST_H_INCLUDED
#define XXL_TEST_H_INCLUDED

#include <stdio.h>

static int xxl_test_passed = 0;
static int xxl_test_failed = 0;

#define XXL_CHECK(cond) do { \
    if (cond) xxl_test_passed++; \
    else { xxl_test_failed++; \
           fprintf (stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

static inline int
xxl_test_done (void)
{
    printf ("%d passed, %d failed\n", xxl_test_passed, xxl_test_failed);
    return xxl_test_failed? 1: 0;
}

#endif
