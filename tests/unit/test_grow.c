/* The growable-array helper (src/base/grow.c): capacities double from the
 * first one, contents survive, and sizes past size_t are refused with the
 * array and its capacity untouched. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/grow.h"
#include "check_main.h"

START_TEST(test_grow_doubles)
{
    int *a = NULL;
    size_t cap = 0;
    ck_assert_int_eq(AVI_GROW(a, cap, 0, 8), 0); /* nothing needed: no allocation */
    ck_assert_ptr_null(a);
    ck_assert_uint_eq(cap, 0);
    ck_assert_int_eq(AVI_GROW(a, cap, 1, 8), 0);
    ck_assert_uint_eq(cap, 8);
    for (int i = 0; i < 8; i++) a[i] = i;
    ck_assert_int_eq(AVI_GROW(a, cap, 8, 8), 0); /* fits: unchanged */
    ck_assert_uint_eq(cap, 8);
    ck_assert_int_eq(AVI_GROW(a, cap, 9, 8), 0);
    ck_assert_uint_eq(cap, 16);
    ck_assert_int_eq(AVI_GROW(a, cap, 100, 8), 0); /* several doublings at once */
    ck_assert_uint_eq(cap, 128);
    for (int i = 0; i < 8; i++) ck_assert_int_eq(a[i], i);
    free(a);

    /* first = 0 starts from one element; an existing capacity that is not a
     * power of two doubles from itself. */
    double *d = NULL;
    cap = 0;
    ck_assert_int_eq(AVI_GROW(d, cap, 3, 0), 0);
    ck_assert_uint_eq(cap, 4);
    cap = 3;
    ck_assert_int_eq(AVI_GROW(d, cap, 4, 64), 0);
    ck_assert_uint_eq(cap, 6);
    free(d);
}
END_TEST

START_TEST(test_grow_refuses_overflow)
{
    char *keep = malloc(16);
    ck_assert_ptr_nonnull(keep);
    void *p = keep;
    size_t cap = 16;
    /* Elements times capacity past SIZE_MAX. */
    ck_assert_int_eq(avi_grow(&p, &cap, SIZE_MAX / 8 + 1, 16, 1), -1);
    ck_assert_ptr_eq(p, keep);
    ck_assert_uint_eq(cap, 16);
    /* The capacity itself would wrap on doubling. */
    ck_assert_int_eq(avi_grow(&p, &cap, SIZE_MAX, 1, 1), -1);
    ck_assert_ptr_eq(p, keep);
    ck_assert_uint_eq(cap, 16);
    free(keep);
}
END_TEST

static Suite *grow_suite(void)
{
    Suite *s = suite_create("grow");
    TCase *tc = tcase_create("grow");
    tcase_add_test(tc, test_grow_doubles);
    tcase_add_test(tc, test_grow_refuses_overflow);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(grow_suite)
