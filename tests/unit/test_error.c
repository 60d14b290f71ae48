/* The error helpers (src/base/error.c): "WHERE: MESSAGE" and
 * "PATH:LINE: MESSAGE" formatted as the modules' messages read, a detail
 * appended only while it fits, long messages cut at the message's size
 * with the position kept, another message of the same error wrapped, and
 * a NULL error only returning the status. */
#include <check.h>
#include <stdarg.h>
#include <string.h>

#include "base/error.h"
#include "check_main.h"

static int line_fail(avi_error *err, const char *path, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int line_fail(avi_error *err, const char *path, size_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = avi_error_vset_line(err, AVI_ERR_INPUT, path, line, fmt, ap);
    va_end(ap);
    return rc;
}

START_TEST(test_error_format)
{
    avi_error e = {0};
    ck_assert_int_eq(avi_error_set(&e, AVI_ERR_RUN, "out of %s", "memory"), AVI_ERR_RUN);
    ck_assert_str_eq(e.message, "out of memory");
    ck_assert_int_eq(e.status, AVI_ERR_RUN);

    ck_assert_int_eq(avi_error_set_at(&e, AVI_ERR_INPUT, "scene.yaml", "bodies.%d.mesh: no such file", 2),
                     AVI_ERR_INPUT);
    ck_assert_str_eq(e.message, "scene.yaml: bodies.2.mesh: no such file");
    ck_assert_int_eq(e.status, AVI_ERR_INPUT);

    ck_assert_int_eq(line_fail(&e, "m.msh", 17, "bad node tag '%s'", "-2"), AVI_ERR_INPUT);
    ck_assert_str_eq(e.message, "m.msh:17: bad node tag '-2'");

    /* Another module's message, in the same error, wrapped in a position. */
    avi_error_set(&e, AVI_ERR_INPUT, "mesh.msh:7: bad node tag '0'");
    avi_error_set_at(&e, AVI_ERR_INPUT, "scene.yaml:4: bodies.0.mesh", "%s", e.message);
    ck_assert_str_eq(e.message, "scene.yaml:4: bodies.0.mesh: mesh.msh:7: bad node tag '0'");
    avi_error_append(&e, " (%s)", e.message);
    ck_assert_str_eq(e.message, "scene.yaml:4: bodies.0.mesh: mesh.msh:7: bad node tag '0' "
                                "(scene.yaml:4: bodies.0.mesh: mesh.msh:7: bad node tag '0')");

    /* A detail after a message that fits. */
    avi_error_set_at(&e, AVI_ERR_RUN, "out.h5", "writing frame %d failed", 3);
    ck_assert_int_eq(avi_error_append(&e, " (%s)", "No space left on device"), AVI_ERR_RUN);
    ck_assert_str_eq(e.message, "out.h5: writing frame 3 failed (No space left on device)");

    /* NULL: nothing written, the status returned. */
    ck_assert_int_eq(avi_error_set_at(NULL, AVI_ERR_INPUT, "x", "y"), AVI_ERR_INPUT);
    ck_assert_int_eq(line_fail(NULL, "x", 1, "y"), AVI_ERR_INPUT);
    ck_assert_int_eq(avi_error_append(NULL, "z"), AVI_OK);
}
END_TEST

START_TEST(test_error_truncation)
{
    const size_t size = sizeof ((avi_error *)0)->message;
    char lng[2000];
    memset(lng, 'a', sizeof lng - 1);
    lng[sizeof lng - 1] = 0;

    /* A long message after a position: cut at size - 1, position first. */
    avi_error e = {0};
    avi_error_set_at(&e, AVI_ERR_INPUT, "scene.yaml:3", "%s", lng);
    ck_assert_uint_eq(strlen(e.message), size - 1);
    ck_assert(strncmp(e.message, "scene.yaml:3: aaa", 17) == 0);
    ck_assert_int_eq(e.status, AVI_ERR_INPUT);

    /* A position longer than the message: cut, the status still set. */
    avi_error_set_at(&e, AVI_ERR_RUN, lng, "lost");
    ck_assert_uint_eq(strlen(e.message), size - 1);
    ck_assert(strstr(e.message, "lost") == NULL);
    ck_assert_int_eq(e.status, AVI_ERR_RUN);
    line_fail(&e, lng, 9, "lost");
    ck_assert_uint_eq(strlen(e.message), size - 1);
    ck_assert_int_eq(e.status, AVI_ERR_INPUT);

    /* Nothing appended to a full message, and a detail that does not fit
     * is cut at the end. */
    avi_error_append(&e, " (detail)");
    ck_assert_uint_eq(strlen(e.message), size - 1);
    ck_assert(strstr(e.message, "detail") == NULL);
    avi_error_set(&e, AVI_ERR_RUN, "%.*s", (int)(size - 6), lng);
    avi_error_append(&e, " (detail)");
    ck_assert_uint_eq(strlen(e.message), size - 1);
    ck_assert_str_eq(e.message + size - 6, " (det");
}
END_TEST

static Suite *error_suite(void)
{
    Suite *s = suite_create("error");
    TCase *tc = tcase_create("error");
    tcase_add_test(tc, test_error_format);
    tcase_add_test(tc, test_error_truncation);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(error_suite)
