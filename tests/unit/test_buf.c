/* buf: growth, the hard maximum, NUL termination. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"

static void append_keeps_nul(void **state)
{
	struct buf b;

	buf_init(&b, 100);
	assert_string_equal(buf_str(&b), "");
	assert_int_equal(buf_puts(&b, "abc"), 0);
	assert_int_equal(buf_printf(&b, "-%d", 42), 0);
	assert_string_equal(buf_str(&b), "abc-42");
	assert_int_equal(b.len, 6);
	buf_free(&b);
}

static void max_is_hard(void **state)
{
	struct buf b;

	buf_init(&b, 4);
	assert_int_equal(buf_puts(&b, "abcd"), 0);
	assert_int_equal(buf_putc(&b, 'e'), -1);
	assert_string_equal(buf_str(&b), "abcd");
	assert_int_equal(buf_printf(&b, "%s", "x"), -1);
	assert_int_equal(b.len, 4);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(append_keeps_nul),
		cmocka_unit_test(max_is_hard),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
