/* Shared main() for the Check test programs: one suite per program. */
#ifndef AVI_CHECK_MAIN_H
#define AVI_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#include "output/hdf5_init.h"

/* AVI_TEST_QUICK=1 (set by the sanitizer and valgrind runs) asks long
 * loops to shorten themselves. */
static inline int avi_test_quick(void) { const char *q = getenv("AVI_TEST_QUICK"); return q && *q == '1'; }
static inline int avi_test_long(void) { const char *q = getenv("AVI_TEST_LONG"); return q && *q == '1'; }

/* HDF5 set up as the library does before the tests' own HDF5 calls. */
#define AVI_CHECK_MAIN(make_suite)                                 \
    int main(void)                                                 \
    {                                                              \
        avi_hdf5_init();                                           \
        SRunner *sr = srunner_create(make_suite());                \
        srunner_run_all(sr, CK_NORMAL);                            \
        int failed = srunner_ntests_failed(sr);                    \
        srunner_free(sr);                                          \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;          \
    }

#endif
