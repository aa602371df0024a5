/* test_strbuf.c — common/strbuf.h's invariants: always a string, appends never
 * truncate, a failure is kept and later appends do nothing, detach hands the text over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static void test_fresh_is_an_empty_string(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    assert_string_equal(sb.buf, "");
    assert_int_equal(sb.len, 0);
    strbuf_reset(&sb);
    strbuf_release(&sb);
    assert_string_equal(sb.buf, "");
}

static void test_appends_grow_without_truncating(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "step");
    strbuf_addch(&sb, ' ');
    for (int i = 0; i < 1000; i++)
        strbuf_addf(&sb, "%d,", i);
    assert_false(sb.failed);
    assert_int_equal(sb.len, strlen(sb.buf));
    assert_true(sb.len < sb.alloc);
    assert_memory_equal(sb.buf, "step 0,1,2,", 11);
    assert_non_null(strstr(sb.buf, ",998,999,"));
    /* One append longer than all the room there is. */
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    size_t before = sb.len;
    strbuf_addf(&sb, "[%s]", big);
    assert_int_equal(sb.len, before + sizeof big + 1);
    assert_int_equal(sb.buf[sb.len - 1], ']');
    size_t n;
    char *s = strbuf_detach(&sb, &n);
    assert_int_equal(n, strlen(s));
    assert_string_equal(sb.buf, "");
    free(s);
}

static void test_failure_is_kept(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "kept");
    assert_false(strbuf_grow(&sb, (size_t)-1 / 2));
    assert_true(sb.failed);
    strbuf_addstr(&sb, " lost");
    assert_string_equal(sb.buf, "kept");
    assert_null(strbuf_detach(&sb, NULL));
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_is_an_empty_string),
        cmocka_unit_test(test_appends_grow_without_truncating),
        cmocka_unit_test(test_failure_is_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
