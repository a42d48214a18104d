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
	assert_string_equal(str(o, "sendDelay"), "10");
	assert_string_equal(str(o, "identities"), "{ }");
	assert_string_equal(str(o, "templates"), "[ ]");
	assert_string_equal(str(o, "afterAction"), "next");
	/* null: the Inbox (json-c's string of null is NULL). */
	assert_null(str(o, "notifyFolders"));
	json_object_put(o);
}


static void known_keys_kept(void **state)
{
	char err[160];
	json_object *o = check("{\"theme\":\"dark\",\"density\":\"compact\","
	    "\"threads\":false,\"signature\":\"-- \\nA\",\"language\":\"pt-BR\","
	    "\"compose\":\"rich\",\"showImages\":true,"
	    "\"afterAction\":\"previous\"}", err, sizeof(err));

	(void)state;
	assert_non_null(o);
	assert_string_equal(str(o, "theme"), "dark");
	assert_string_equal(str(o, "density"), "compact");
	assert_string_equal(str(o, "threads"), "false");
	assert_string_equal(str(o, "signature"), "-- \nA");
	assert_string_equal(str(o, "language"), "pt-BR");
	assert_string_equal(str(o, "compose"), "rich");
	assert_string_equal(str(o, "showImages"), "true");
	assert_string_equal(str(o, "afterAction"), "previous");
	json_object_put(o);
}

static void identities_templates_and_delay_kept(void **state)
{
	char err[160];
	json_object *o = check("{\"sendDelay\":0,\"identities\":{\"alice@"
	    "example.test\":{\"name\":\"Alice Archer\",\"replyTo\":\"a@b.c\","
	    "\"signature\":\"A\"},\"x\":{}},\"templates\":[{\"name\":\"Thanks\","
	    "\"body\":\"Thank you!\"}]}", err, sizeof(err)), *v, *id;

	(void)state;
	assert_non_null(o);
	assert_string_equal(str(o, "sendDelay"), "0");
	assert_true(json_object_object_get_ex(o, "identities", &v));
	assert_true(json_object_object_get_ex(v, "alice@example.test", &id));
	assert_string_equal(str(id, "name"), "Alice Archer");
	assert_string_equal(str(id, "replyTo"), "a@b.c");
	assert_true(json_object_object_get_ex(o, "templates", &v));
	assert_int_equal(json_object_array_length(v), 1);
	assert_string_equal(str(json_object_array_get_idx(v, 0), "body"),
	    "Thank you!");
	json_object_put(o);
	o = check("{\"sendDelay\":30}", err, sizeof(err));
	assert_non_null(o);
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
	refused("{\"afterAction\":\"close\"}", "next, previous or list");
	refused("{\"afterAction\":true}", "must be a string");
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

/* {"key": [entry, ...]} or {"key": {"id0": entry, ...}} of count
 * entries, for the limits on counts. */
static void many(char *out, size_t n, const char *key, int array,
    int count, const char *entry)
{
	size_t used = (size_t)snprintf(out, n, "{\"%s\":%c", key,
	    array ? '[' : '{');
	int i;

	for (i = 0; i < count && used < n; i++) {
		if (array)
			used += (size_t)snprintf(out + used, n - used, "%s%s",
			    i ? "," : "", entry);
		else
			used += (size_t)snprintf(out + used, n - used,
			    "%s\"id%d\":%s", i ? "," : "", i, entry);
	}
	if (used < n)
		snprintf(out + used, n - used, "%c}", array ? ']' : '}');
}

static void bad_new_keys_refused(void **state)
{
	char big[4096];

	(void)state;
	refused("{\"sendDelay\":31}", "from 0 to 30");
	refused("{\"sendDelay\":-1}", "from 0 to 30");
	refused("{\"sendDelay\":\"10\"}", "whole number");
	refused("{\"sendDelay\":1.5}", "whole number");
	refused("{\"identities\":[]}", "must be an object");
	refused("{\"identities\":{\"\":{}}}", "identity id");
	refused("{\"identities\":{\"a\":\"Alice\"}}", "must be an object");
	refused("{\"identities\":{\"a\":{\"name\":1}}}",
	    "\"name\" of an entry of the setting \"identities\" must be a string");
	refused("{\"identities\":{\"a\":{\"colour\":\"x\"}}}",
	    "unknown member \"colour\"");
	refused("{\"templates\":{}}", "must be an array");
	refused("{\"templates\":[{\"name\":\"\",\"body\":\"x\"}]}", "is empty");
	refused("{\"templates\":[{\"name\":\"n\"}]}", "\"body\" of an entry"
	    " of the setting \"templates\" is missing");
	refused("{\"templates\":[{\"name\":\"n\",\"body\":\"a\\u0000\"}]}",
	    "NUL");
	many(big, sizeof(big), "templates", 1, SETTINGS_TEMPLATES_MAX + 1,
	    "{\"name\":\"n\",\"body\":\"b\"}");
	refused(big, "more than 30 templates");
	many(big, sizeof(big), "identities", 0, SETTINGS_IDENTITIES_MAX + 1, "{}");
	refused(big, "more than 20 identities");
	snprintf(big, sizeof(big), "{\"identities\":{\"a\":{\"name\":"
	    "\"%0*d\"}}}", SETTINGS_NAME_MAX + 1, 0);
	refused(big, "longer than 256 bytes");
}

/* notifyFolders: null or up to 100 folder ids; [] is none. */
static void notify_folders(void **state)
{
	char big[8192], err[160];
	json_object *o;

	(void)state;
	o = check("{\"notifyFolders\":[\"m1\",\"Lists-7\"]}", err, sizeof(err));
	assert_non_null(o);
	assert_string_equal(str(o, "notifyFolders"), "[ \"m1\", \"Lists-7\" ]");
	json_object_put(o);
	o = check("{\"notifyFolders\":[]}", err, sizeof(err));
	assert_non_null(o);
	json_object_put(o);
	o = check("{\"notifyFolders\":null}", err, sizeof(err));
	assert_non_null(o);
	json_object_put(o);
	refused("{\"notifyFolders\":\"m1\"}", "null or an array");
	refused("{\"notifyFolders\":[1]}", "must be a string");
	refused("{\"notifyFolders\":[\"\"]}", "is empty");
	many(big, sizeof(big), "notifyFolders", 1, SETTINGS_FOLDERS_MAX + 1, "\"m\"");
	refused(big, "at most 100 folder ids");
	many(big, sizeof(big), "notifyFolders", 1, SETTINGS_FOLDERS_MAX, "\"m\"");
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

	assert_int_equal(store_test_exec(t->app.store, "INSERT INTO settings"
	    " VALUES('acct-c', '{\"gone\":1}', 1)"), 0);
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
		cmocka_unit_test(identities_templates_and_delay_kept),
		cmocka_unit_test(bad_new_keys_refused),
		cmocka_unit_test(notify_folders),
		T(stored_per_account),
		T(unknown_stored_settings_fall_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
