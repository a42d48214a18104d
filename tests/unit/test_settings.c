/* settings: the check of a settings object and its storage per account. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "settings.h"
#include "testapp.h"

/* settings_check over JSON text: the result, or NULL with err filled. */
static json_object *check(const char *text, char *err, size_t n)
{
	json_object *in = json_tokener_parse(text), *out;

	err[0] = '\0';
	out = settings_check(in, err, n);
	json_object_put(in);
	return out;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_string(v);
}

static void empty_object_gives_defaults(void **state)
{
	char err[160];
	json_object *o = check("{}", err, sizeof(err));

	(void)state;
	assert_non_null(o);
	assert_string_equal(str(o, "theme"), "system");
	assert_string_equal(str(o, "density"), "comfortable");
	assert_string_equal(str(o, "threads"), "true");
	assert_string_equal(str(o, "compose"), "plain");
	assert_string_equal(str(o, "signature"), "");
	assert_string_equal(str(o, "language"), "");
	json_object_put(o);
}

static void known_keys_kept(void **state)
{
	char err[160];
	json_object *o = check("{\"theme\":\"dark\",\"density\":\"compact\","
	    "\"threads\":false,\"signature\":\"-- \\nA\",\"language\":\"pt-BR\","
	    "\"compose\":\"rich\",\"showImages\":true}", err, sizeof(err));

	(void)state;
	assert_non_null(o);
	assert_string_equal(str(o, "theme"), "dark");
	assert_string_equal(str(o, "density"), "compact");
	assert_string_equal(str(o, "threads"), "false");
	assert_string_equal(str(o, "signature"), "-- \nA");
	assert_string_equal(str(o, "language"), "pt-BR");
	assert_string_equal(str(o, "compose"), "rich");
	assert_string_equal(str(o, "showImages"), "true");
	json_object_put(o);
}

static void refused(const char *text, const char *in_err)
{
	char err[160];
	json_object *o = check(text, err, sizeof(err));

	assert_null(o);
	if (strstr(err, in_err) == NULL)
		fail_msg("%s: error \"%s\" lacks \"%s\"", text, err, in_err);
}

static void bad_input_refused_with_reason(void **state)
{
	char big[SETTINGS_SIGNATURE_MAX + 64], err[160];
	json_object *o;

	(void)state;
	refused("[]", "must be a JSON object");
	refused("\"dark\"", "must be a JSON object");
	refused("{\"colour\":\"red\"}", "no setting called \"colour\"");
	refused("{\"theme\":\"pink\"}", "system, light or dark");
	refused("{\"theme\":1}", "must be a string");
	refused("{\"threads\":\"yes\"}", "true or false");
	refused("{\"density\":null}", "must be a string");
	refused("{\"compose\":\"html\"}", "plain or rich");
	refused("{\"language\":\"en_GB\"}", "language tag");
	refused("{\"language\":\"-en\"}", "language tag");
	refused("{\"language\":\"en-\"}", "language tag");
	refused("{\"language\":\"../x\"}", "language tag");
	refused("{\"signature\":\"a\\u0000b\"}", "NUL");
	snprintf(big, sizeof(big), "{\"signature\":\"%0*d\"}",
	    SETTINGS_SIGNATURE_MAX + 1, 0);
	refused(big, "longer than");
	snprintf(big, sizeof(big), "{\"signature\":\"%0*d\"}",
	    SETTINGS_SIGNATURE_MAX, 0);
	o = check(big, err, sizeof(err));
	assert_non_null(o);
	json_object_put(o);
}

static void stored_per_account(void **state)
{
	struct testapp *t = *state;
	char err[160];
	json_object *o = check("{\"theme\":\"dark\"}", err, sizeof(err)), *got;

	assert_non_null(o);
	assert_int_equal(settings_load(&t->app, "acct-a", &got), 0);
	assert_string_equal(str(got, "theme"), "system");
	json_object_put(got);
	assert_int_equal(settings_store(&t->app, "acct-a", o, 1000), 0);
	assert_int_equal(settings_load(&t->app, "acct-a", &got), 0);
	assert_string_equal(str(got, "theme"), "dark");
	json_object_put(got);
	assert_int_equal(settings_load(&t->app, "acct-b", &got), 0);
	assert_string_equal(str(got, "theme"), "system");
	json_object_put(got);
	/* A second store replaces the row, not adds one. */
	assert_int_equal(settings_store(&t->app, "acct-a", o, 2000), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM settings"), 1);
	json_object_put(o);
}

static void unknown_stored_settings_fall_back(void **state)
{
	struct testapp *t = *state;
	json_object *got;

	assert_int_equal(sqlite3_exec(t->app.db.h, "INSERT INTO settings"
	    " VALUES('acct-c', '{\"gone\":1}', 1)", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(settings_load(&t->app, "acct-c", &got), 0);
	assert_string_equal(str(got, "theme"), "system");
	json_object_put(got);
}

#define T(f) cmocka_unit_test_setup_teardown(f, testapp_setup, testapp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_object_gives_defaults),
		cmocka_unit_test(known_keys_kept),
		cmocka_unit_test(bad_input_refused_with_reason),
		T(stored_per_account),
		T(unknown_stored_settings_fall_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
