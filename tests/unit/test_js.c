/* js: exactly one JSON object, bounded depth, the same answers whether the
 * bytes come at once or one by one; typed getters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "js.h"

/* 1 when js_parse accepts s (an object), 0 when it refuses. */
static int parses(const char *s, size_t n)
{
	json_object *o = js_parse(s, n);

	if (o == NULL)
		return 0;
	assert_true(json_object_is_type(o, json_type_object));
	json_object_put(o);
	return 1;
}

/* The same, fed to a js_check one byte at a time. */
static int checks_bytewise(const char *s, size_t n)
{
	struct js_check c;
	size_t i;
	int ok = 1;

	assert_int_equal(js_check_init(&c), 0);
	for (i = 0; i < n && ok; i++)
		if (js_check_feed(&c, s + i, 1) == -1)
			ok = 0;
	if (ok && js_check_end(&c) == -1)
		ok = 0;
	if (ok)
		assert_true(json_object_is_type(c.root, json_type_object));
	js_check_free(&c);
	return ok;
}

/* Both ways, which must agree; the answer. */
static int accepted(const char *s)
{
	size_t n = strlen(s);
	int whole = parses(s, n), bytewise = checks_bytewise(s, n);

	if (whole != bytewise)
		fail_msg("\"%s\": js_parse says %d, byte by byte %d", s, whole,
		    bytewise);
	return whole;
}

static void accepts_object_with_white_space(void **state)
{
	json_object *o;
	const char *s = " \r\n\t{\"a\": 1, \"b\": [true, null]}\n\t \r\n";

	assert_true(accepted(s));
	assert_true(accepted("{}"));
	assert_true(accepted("{\"nested\":{\"x\":\"y\"}}"));
	assert_non_null(o = js_parse(s, strlen(s)));
	assert_int_equal(json_object_get_int(json_object_object_get(o, "a")), 1);
	json_object_put(o);
}

static void rejects_non_objects(void **state)
{
	static const char *const bad[] = {
		"[]", "[1,2]", "1", "123", "-1.5", "null", "true", "false",
		"\"a string\"", "", "   ", "\n",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (accepted(bad[i]))
			fail_msg("\"%s\" was accepted", bad[i]);
}

static void rejects_two_objects(void **state)
{
	assert_false(accepted("{}{}"));
	assert_false(accepted("{} {}"));
	assert_false(accepted("{\"a\":1}\n{\"b\":2}"));
	assert_false(accepted("{}[]"));
}

static void rejects_trailing_garbage(void **state)
{
	assert_false(accepted("{}x"));
	assert_false(accepted("{} x"));
	assert_false(accepted("{}\n,"));
	assert_false(parses("{} \n\x01", 5));
}

/* NUL bytes after the object are not white space: "{}\0" must not
 * pass as one JSON object (the relay would forward such a body). */
static void rejects_trailing_nul(void **state)
{
	assert_false(parses("{}\0", 3));
	assert_false(checks_bytewise("{} \0\0", 5));
}

static void rejects_truncated(void **state)
{
	static const char *const bad[] = {
		"{\"a\":", "{", "{\"a\"", "{\"a\":1", "{\"a\":1,", "{\"a\":\"x",
		"{\"a\":[1,2", "{\"a\":tru",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (accepted(bad[i]))
			fail_msg("\"%s\" was accepted", bad[i]);
}

static void rejects_broken_and_lax_json(void **state)
{
	static const char *const bad[] = {
		"{a:1}", "{\"a\":'x'}", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":01}",
		"{\"a\":1}}", "{/* c */}", "x{}", "{\"a\":.5}", "{\"a\":+1}",
		"{\"a\":[1,]}", "{\"a\":\"\\x41\"}", "\xef\xbb\xbf{}",
		/* Found by fuzzing: json-c takes these even when strict. */
		"{\"f\":NaN}", "{\"a\":[Infinity]}", "{\"a\":{\"b\":-Infinity}}",
		"{\"a\":1e999}",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (accepted(bad[i]))
			fail_msg("\"%s\" was accepted", bad[i]);
}

/* depth nested objects: {"a":{"a":...{}...}} in a malloc'd string. */
static char *nested(int depth)
{
	char *s = malloc((size_t)depth * 6 + 1), *p = s;
	int i;

	assert_non_null(s);
	for (i = 0; i < depth - 1; i++) {
		memcpy(p, "{\"a\":", 5);
		p += 5;
	}
	*p++ = '{';
	for (i = 0; i < depth; i++)
		*p++ = '}';
	*p = '\0';
	return s;
}

static void depth_60_accepted(void **state)
{
	char *s = nested(60);

	assert_true(accepted(s));
	free(s);
}

static void depth_64_accepted(void **state)
{
	char *s = nested(JS_MAX_DEPTH);

	assert_true(accepted(s));
	free(s);
}

static void depth_65_rejected(void **state)
{
	char *s = nested(JS_MAX_DEPTH + 1);

	assert_false(accepted(s));
	free(s);
	s = nested(200);
	assert_false(accepted(s));
	free(s);
}

static void only_whole_length_is_read(void **state)
{
	/* n bounds the input: the bytes after it are not looked at. */
	const char *s = "{\"a\":1}garbage";

	assert_true(parses(s, 7));
	assert_false(parses(s, 6));
	assert_false(parses(s, 8));
}

static void check_after_error_stays_bad(void **state)
{
	struct js_check c;

	assert_int_equal(js_check_init(&c), 0);
	assert_int_equal(js_check_feed(&c, "{]", 2), -1);
	assert_int_equal(js_check_feed(&c, "}", 1), -1);
	assert_int_equal(js_check_feed(&c, "", 0), -1);
	assert_int_equal(js_check_end(&c), -1);
	js_check_free(&c);
}

static void check_in_chunks(void **state)
{
	struct js_check c;

	assert_int_equal(js_check_init(&c), 0);
	assert_int_equal(js_check_feed(&c, "  {\"me", 6), 0);
	assert_int_equal(js_check_feed(&c, "", 0), 0);
	assert_int_equal(js_check_end(&c), -1);  /* not complete yet */
	assert_int_equal(js_check_feed(&c, "thod\":\"x\"", 9), 0);
	assert_int_equal(js_check_feed(&c, "} \n", 3), 0);
	assert_int_not_equal(js_check_feed(&c, "  ", 2), -1);
	assert_int_equal(js_check_end(&c), 0);
	assert_string_equal(js_str(c.root, "method"), "x");
	assert_int_equal(js_check_feed(&c, " y", 2), -1);
	assert_int_equal(js_check_end(&c), -1);
	js_check_free(&c);
}

/* Once the object is complete, more white space (or nothing) still
 * answers 0, as js.h promises. */
/* 1 when head then tail, as two pieces, make an accepted object. */
static int two_pieces(const char *head, const char *tail)
{
	struct js_check c;
	int rc;

	assert_int_equal(js_check_init(&c), 0);
	rc = js_check_feed(&c, head, strlen(head)) == 0 &&
	    js_check_feed(&c, tail, strlen(tail)) == 0 && js_check_end(&c) == 0;
	js_check_free(&c);
	return rc;
}

/* Found by fuzzing: json-c took "1" then "-2}" as a number. */
static void minus_inside_a_number_across_pieces(void **state)
{
	assert_false(two_pieces("{\"a\":1", "-2}"));
	assert_false(two_pieces("{\"a\":-", "-2}"));
	assert_false(two_pieces("{\"a\":1.5", "-}"));
	assert_false(two_pieces("{\"a\":1e+5", "-}"));
	assert_true(two_pieces("{\"a\":1e", "-2}"));
	assert_true(two_pieces("{\"a\":[1,", "-2]}"));
	assert_true(two_pieces("{\"s\":\"1", "-2\"}"));
	assert_true(two_pieces("{\"s\":\"\\\"1", "-2\"}"));
	assert_false(two_pieces("{\"s\":\"\\\\\"1", "-2}"));
}

/* What json-c 0.16 takes even in strict mode and RFC 8259 does not:
 * single-quoted member names (at any depth), control characters inside
 * strings, and numbers off the grammar (leading zeros, a point without
 * digits after it, a minus without a digit). */
static void rejects_what_strict_json_c_takes(void **state)
{
	static const char *const bad[] = {
		"{'a':1}", "{\"a\":{'b':1}}", "{\"a\":[{'b':1}]}", "{'a\"b':1}",
		"{'a':\"x\"}", "{\"a\":1,'b':2}",
		"{\"a\":\"x\ty\"}", "{\"a\":\"x\ny\"}", "{\"a\":\"\r\"}",
		"{\"a\":\"\x01\"}", "{\"a\":\"\x1f\"}", "{\"a\x01\":1}",
		"{\"a\":00}", "{\"a\":-00}", "{\"a\":000}", "{\"a\":-012}",
		"{\"a\":[00]}", "{\"a\":1.}", "{\"a\":-1.}", "{\"a\":0.}",
		"{\"a\":1.e5}", "{\"a\":1.E5}", "{\"a\":[1.,2]}", "{\"a\":-.5}",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (accepted(bad[i]))
			fail_msg("\"%s\" was accepted", bad[i]);
	/* A NUL is a control character too. */
	assert_false(parses("{\"a\":\"x\0y\"}", 11));
	assert_false(checks_bytewise("{\"a\":\"x\0y\"}", 11));
}

/* What json-c refuses by itself in strict mode (checked against it):
 * comments, trailing and empty commas, unquoted names, single-quoted
 * values, white space other than RFC 8259's four, literals in another
 * case, escapes JSON has not, hex numbers. */
static void rejects_what_strict_json_c_refuses(void **state)
{
	static const char *const bad[] = {
		"{\"a\":1/* c */}", "{\"a\"/**/:1}", "{\"a\":1 // c\n}",
		"{\"a\":[1/**/]}", "{}/*c*/", "/*c*/{}", "{}//c", "{\"a\":1#c\n}",
		"{,}", "{\"a\":1,,\"b\":2}", "{\"a\":[1,,2]}", "{b:1}",
		"{\"a\":['x']}", "{\v}", "{\f}", "{\"a\":\f1}", "{}\v",
		"{\"a\":TRUE}", "{\"a\":Null}", "{\"a\":\"\\'\"}", "{\"a\":\"\\0\"}",
		"{\"a\":\"\\v\"}", "{\"a\":\"\\u12\"}", "{\"a\":0x10}", "{\"a\":1e}",
		"{\"a\":1e+}", "{\"a\":-}", "{\"a\":--1}", "{\"a\":1.2.3}",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (accepted(bad[i]))
			fail_msg("\"%s\" was accepted", bad[i]);
}

/* Everything RFC 8259 allows at those places still passes. */
static void accepts_strict_edge_cases(void **state)
{
	static const char *const good[] = {
		"{\"a\":0}", "{\"a\":-0}", "{\"a\":[0,-0,10,-10,109]}",
		"{\"a\":0.0}", "{\"a\":-0.5}", "{\"a\":10.25}", "{\"a\":1.5e01}",
		"{\"a\":0e5}", "{\"a\":-0e-0}", "{\"a\":1E+2}", "{\"a\":1e-05}",
		"{\"a\":[1,-2]}", "{\"a\":{\"b\":-1}}",
		"{\"it's\":\"it's\"}", "{\"a\":\"'\"}", "{\"a\":\"\\\"'\\\"\"}",
		"{\"a\":\"\\t\\n\\r\\b\\f\\/\\\\\"}", "{\"a\":\"\\u0001\\u001f\"}",
		"{\"a\":\"\x7f\"}", "{\"a\":\"\\u0000\"}",
		"{\"e\":true,\"f\":false,\"n\":null}", "{ \"a\" : [ 1 , 2 ] }",
		"{\"a\":\"0.\"}", "{\"01\":\"-.5\"}",
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!accepted(good[i]))
			fail_msg("\"%s\" was refused", good[i]);
}

/* The same, wherever the network cuts the body. */
static void strictness_across_pieces(void **state)
{
	assert_false(two_pieces("{", "'a':1}"));
	assert_false(two_pieces("{\"a\":{", "'b':1}}"));
	assert_false(two_pieces("{\"a\":\"x", "\ty\"}"));
	assert_false(two_pieces("{\"a\":0", "0}"));
	assert_false(two_pieces("{\"a\":-0", "1}"));
	assert_false(two_pieces("{\"a\":1", ".}"));
	assert_false(two_pieces("{\"a\":1.", "}"));
	assert_false(two_pieces("{\"a\":1.", "e5}"));
	assert_false(two_pieces("{\"a\":-", ".5}"));
	assert_true(two_pieces("{\"a\":1.", "5}"));
	assert_true(two_pieces("{\"a\":0", ".5}"));
	assert_true(two_pieces("{\"a\":-", "0}"));
	assert_true(two_pieces("{\"a\":1", "0}"));
	assert_true(two_pieces("{\"a\":\"it", "'s\"}"));
	assert_true(two_pieces("{\"a\":\"\\", "u0009\"}"));
}

/* Found by fuzzing: json-c's UTF-8 check refused a character split
 * between two pieces, so a request with an accent failed or passed by
 * where the network cut it. */
static void utf8_across_pieces(void **state)
{
	assert_true(accepted("{\"a\":\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}"));
	assert_true(two_pieces("{\"a\":\"\xc3", "\xa9\"}"));
	assert_true(two_pieces("{\"a\":\"\xf0\x9f", "\x98\x80\"}"));
}

static void rejects_bad_utf8(void **state)
{
	static const char *const bad[] = {
		"{\"a\":\"\xff\"}", "{\"a\":\"\xc0\xaf\"}",
		"{\"a\":\"\xe0\x80\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}",
		"{\"a\":\"\xf4\x90\x80\x80\"}", "{\"a\":\"\xc3\"}",
		"{\"a\":\"\x80\"}", "{\"a\":\"\xe2\x82\"}",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (accepted(bad[i]))
			fail_msg("bad UTF-8 %zu was accepted", i);
}

static void feed_after_complete_returns_0(void **state)
{
	struct js_check c;
	int whole, space, nothing, end;

	assert_int_equal(js_check_init(&c), 0);
	whole = js_check_feed(&c, "{}", 2);
	space = js_check_feed(&c, "\n", 1);
	nothing = js_check_feed(&c, "", 0);
	end = js_check_end(&c);
	js_check_free(&c);
	assert_int_equal(whole, 0);
	assert_int_equal(space, 0);
	assert_int_equal(nothing, 0);
	assert_int_equal(end, 0);
}

/* A string holding a NUL would be cut short as a C string: "alice\0x"
 * read as "alice". js_str has none. */
static void str_refuses_nul(void **state)
{
	const char *s = "{\"n\":\"alice\\u0000x\",\"z\":\"\\u0000\","
	    "\"e\":\"\",\"t\":\"\\u0009\"}";
	json_object *o = js_parse(s, strlen(s));

	assert_non_null(o);
	assert_null(js_str(o, "n"));
	assert_null(js_str(o, "z"));
	assert_string_equal(js_str(o, "e"), "");
	assert_string_equal(js_str(o, "t"), "\t");
	json_object_put(o);
}

static void str_checks_type(void **state)
{
	const char *s = "{\"s\":\"text\",\"n\":5,\"b\":true,\"o\":{},\"z\":null,"
	    "\"a\":[\"x\"]}";
	json_object *o = js_parse(s, strlen(s));

	assert_non_null(o);
	assert_string_equal(js_str(o, "s"), "text");
	assert_null(js_str(o, "n"));
	assert_null(js_str(o, "b"));
	assert_null(js_str(o, "o"));
	assert_null(js_str(o, "z"));
	assert_null(js_str(o, "a"));
	assert_null(js_str(o, "missing"));
	assert_null(js_str(NULL, "s"));
	json_object_put(o);
}

static void bool_checks_type(void **state)
{
	const char *s = "{\"t\":true,\"f\":false,\"n\":1,\"s\":\"true\","
	    "\"z\":null}";
	json_object *o = js_parse(s, strlen(s));

	assert_non_null(o);
	assert_int_equal(js_bool(o, "t", 0), 1);
	assert_int_equal(js_bool(o, "f", 1), 0);
	assert_int_equal(js_bool(o, "n", 0), 0);
	assert_int_equal(js_bool(o, "n", -1), -1);
	assert_int_equal(js_bool(o, "s", 0), 0);
	assert_int_equal(js_bool(o, "z", 7), 7);
	assert_int_equal(js_bool(o, "missing", 3), 3);
	assert_int_equal(js_bool(NULL, "t", 4), 4);
	json_object_put(o);
}

static void obj_checks_type(void **state)
{
	const char *s = "{\"o\":{\"k\":\"v\"},\"a\":[],\"s\":\"{}\",\"z\":null}";
	json_object *o = js_parse(s, strlen(s)), *v;

	assert_non_null(o);
	assert_non_null(v = js_obj(o, "o"));
	assert_string_equal(js_str(v, "k"), "v");
	assert_null(js_obj(o, "a"));
	assert_null(js_obj(o, "s"));
	assert_null(js_obj(o, "z"));
	assert_null(js_obj(o, "missing"));
	assert_null(js_obj(NULL, "o"));
	json_object_put(o);
}

/* A method response by its tag and name; never an "error" answer. */
static void response_by_tag_and_method(void **state)
{
	const char *text = "{\"methodResponses\":[[\"error\",{\"type\":"
	    "\"serverFail\"},\"a\"],[\"Email/get\",{\"state\":\"s1\"},\"b\"],"
	    "[\"Mailbox/get\",{\"state\":\"m1\"},\"c\"],\"junk\"]}";
	json_object *root = js_parse(text, strlen(text));

	(void)state;
	assert_non_null(root);
	assert_null(js_response(root, "a", NULL));
	assert_string_equal(js_str(js_response(root, "b", NULL), "state"), "s1");
	assert_string_equal(js_str(js_response(root, "b", "Email/get"), "state"), "s1");
	assert_null(js_response(root, "b", "Mailbox/get"));
	assert_null(js_response(root, "z", NULL));
	assert_null(js_response(NULL, "b", NULL));
	json_object_put(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepts_object_with_white_space),
		cmocka_unit_test(rejects_non_objects),
		cmocka_unit_test(rejects_two_objects),
		cmocka_unit_test(rejects_trailing_garbage),
		cmocka_unit_test(rejects_trailing_nul),
		cmocka_unit_test(rejects_truncated),
		cmocka_unit_test(rejects_broken_and_lax_json),
		cmocka_unit_test(depth_60_accepted),
		cmocka_unit_test(depth_64_accepted),
		cmocka_unit_test(depth_65_rejected),
		cmocka_unit_test(only_whole_length_is_read),
		cmocka_unit_test(check_after_error_stays_bad),
		cmocka_unit_test(check_in_chunks),
		cmocka_unit_test(minus_inside_a_number_across_pieces),
		cmocka_unit_test(utf8_across_pieces),
		cmocka_unit_test(rejects_bad_utf8),
		cmocka_unit_test(feed_after_complete_returns_0),
		cmocka_unit_test(rejects_what_strict_json_c_takes),
		cmocka_unit_test(rejects_what_strict_json_c_refuses),
		cmocka_unit_test(accepts_strict_edge_cases),
		cmocka_unit_test(strictness_across_pieces),
		cmocka_unit_test(str_refuses_nul),
		cmocka_unit_test(str_checks_type),
		cmocka_unit_test(bool_checks_type),
		cmocka_unit_test(obj_checks_type),
		cmocka_unit_test(response_by_tag_and_method),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
