/* dav: the CardDAV relay passes only paths that stay in the DAV tree and
 * only XML or vCard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dav.h"

static void paths(void **state)
{
	static const char *const ok[] = {
		"", "addressbooks/user/alice@example.test/Default/",
		"addressbooks/user/alice%40example.test/Default/card-1.vcf",
		"principals/user/alice@example.test/", "a.b/..c/c..d/.e", "x~y_z-1",
	};
	static const char *const bad[] = {
		"..", "../jmap", "a/../b", "a/..", "./a", "a/./b", "/etc", "a//b",
		"%2e%2e/x", "a/%2E%2e/b", "a%2fb", "a%2Fb", "a%5cb", "a%00b",
		"a%zz", "a%2", "a\\b", "a b", "a?b", "a#b", "a\"b", "a<b",
		"%252e%252e/x", "a%25b",
		"caf\xc3\xa9",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(dav_path_ok(ok[i]), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s\n", bad[i]);
		assert_int_equal(dav_path_ok(bad[i]), -1);
	}
}

static void types(void **state)
{
	(void)state;
	assert_true(dav_type_ok("application/xml"));
	assert_true(dav_type_ok("text/xml; charset=utf-8"));
	assert_true(dav_type_ok("TEXT/VCARD ;charset=utf-8"));
	assert_true(dav_type_ok("text/vcard"));
	assert_false(dav_type_ok("application/json"));
	assert_false(dav_type_ok("text/html"));
	assert_false(dav_type_ok("text/xmlx"));
	assert_false(dav_type_ok("text/vcardx; a=b"));
	assert_false(dav_type_ok(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paths),
		cmocka_unit_test(types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
