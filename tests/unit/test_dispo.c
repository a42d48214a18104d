/* dispo and pct: which content types reach the browser, what may be shown
 * inline, filenames cleaned of bidi controls, quotes and line breaks, the
 * RFC 5987 Content-Disposition, and percent-encoding both ways. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dispo.h"
#include "pct.h"

static void type_is(const char *in, const char *want)
{
	char out[DISPO_TYPE_MAX];

	dispo_type(in, out);
	if (strcmp(out, want))
		fail_msg("dispo_type(%s) = %s, want %s", in ? in : "NULL", out, want);
}

static void dangerous_types_neutralised(void **state)
{
	static const char *const bad[] = {
		"text/html", "TEXT/HTML; charset=utf-8", "application/xhtml+xml",
		"image/svg+xml", "text/xml", "application/xml",
		"application/rss+xml", "text/javascript", "application/javascript",
		"application/x-javascript", "text/ecmascript", "text/vbscript",
		"text/xsl", "text/css", "multipart/x-mixed-replace; boundary=x",
		"application/x-shockwave-flash", "application/xml-dtd",
		"application/vnd.mozilla.xul+xml", "text/html+x", "", "html",
		"text/", "/html",
		"text/plain\r\nX: y", "te xt/plain", "text/plain/x", NULL
	};
	int i;

	for (i = 0; bad[i]; i++)
		type_is(bad[i], "application/octet-stream");
	type_is(NULL, "application/octet-stream");
}

static void safe_types_kept(void **state)
{
	type_is("application/pdf", "application/pdf");
	type_is("Image/PNG", "image/png");
	type_is("text/plain; charset=UTF-8", "text/plain; charset=UTF-8");
	type_is("text/plain; format=flowed; charset=\"iso-8859-1\"",
	    "text/plain; charset=iso-8859-1");
	type_is("text/plain; charset=\"x\r\n\"", "text/plain; charset=x");
	type_is("text/plain; charset=a;b", "text/plain; charset=a");
	type_is("application/pdf; name=x.pdf", "application/pdf");
	type_is("application/vnd.ms-excel", "application/vnd.ms-excel");
	type_is("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	    "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
}

static void inline_only_for_safe(void **state)
{
	assert_true(dispo_inline_ok("image/png"));
	assert_true(dispo_inline_ok("image/jpeg"));
	assert_true(dispo_inline_ok("text/plain; charset=utf-8"));
	assert_true(dispo_inline_ok("video/mp4"));
	assert_true(dispo_inline_ok("audio/mpeg"));
	assert_false(dispo_inline_ok("application/octet-stream"));
	assert_false(dispo_inline_ok("application/pdf"));
	assert_false(dispo_inline_ok("image/svg+xml"));
	assert_false(dispo_inline_ok("image/pngx"));
	assert_false(dispo_inline_ok("text/plainx"));
}

static void name_is(const char *in, const char *want)
{
	char out[DISPO_NAME_MAX + 1];

	dispo_clean_name(in, out);
	if (strcmp(out, want))
		fail_msg("dispo_clean_name(%s) = %s, want %s", in, out, want);
}

static void names_cleaned(void **state)
{
	name_is("report.pdf", "report.pdf");
	name_is("a\"b\".txt", "ab.txt");
	name_is("line\r\nbreak.txt", "linebreak.txt");
	name_is("tab\there\x7f.txt", "tabhere.txt");
	name_is("../../etc/passwd", ".._.._etc_passwd");
	name_is("c:\\windows\\x.exe", "c:_windows_x.exe");
	/* U+202E RIGHT-TO-LEFT OVERRIDE: "invoice_\u202Efdp.exe" */
	name_is("invoice_\xe2\x80\xae" "fdp.exe", "invoice_fdp.exe");
	name_is("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad" "a"
	    "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9" "b"
	    "\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c" "c", "abc");
	name_is("C1\xc2\x85" "control", "C1control");
	name_is("gr\xc3\xbc\xc3\x9f" "e \xe6\x97\xa5\xe6\x9c\xac.txt",
	    "gr\xc3\xbc\xc3\x9f" "e \xe6\x97\xa5\xe6\x9c\xac.txt");
	name_is("emoji \xf0\x9f\x98\x80.png", "emoji \xf0\x9f\x98\x80.png");
	name_is("bad\xff\xfe utf8", "bad__ utf8");
	name_is("overlong\xc0\xaf", "overlong__");
	name_is("surrogate\xed\xa0\x80", "surrogate___");
	name_is("   spaced   ", "spaced");
	name_is("", "download");
	name_is("\"\r\n\xe2\x80\xae", "download");
}

static void long_names_cut_on_a_character(void **state)
{
	char in[600], out[DISPO_NAME_MAX + 1];
	size_t i;

	for (i = 0; i + 3 < sizeof(in); i += 3)
		memcpy(in + i, "\xe6\x97\xa5", 3);     /* U+65E5, 3 bytes */
	in[i] = '\0';
	dispo_clean_name(in, out);
	assert_true(strlen(out) <= DISPO_NAME_MAX);
	assert_int_equal(strlen(out) % 3, 0);
	assert_true(strlen(out) > DISPO_NAME_MAX - 3);
}

static void header_has_both_filenames(void **state)
{
	char name[DISPO_NAME_MAX + 1];
	struct buf b;

	buf_init(&b, 4096);
	dispo_clean_name("My \"Report\" \xe2\x80\xae" "gr\xc3\xbc\xc3\x9f" "e 100%.pdf", name);
	assert_int_equal(dispo_header(&b, 0, name), 0);
	assert_string_equal(buf_str(&b),
	    "attachment; filename=\"My Report gr__e 100_.pdf\"; "
	    "filename*=UTF-8''My%20Report%20gr%C3%BC%C3%9Fe%20100%25.pdf");
	buf_reset(&b);
	assert_int_equal(dispo_header(&b, 1, "a;b'c.png"), 0);
	assert_string_equal(buf_str(&b),
	    "inline; filename=\"a;b'c.png\"; filename*=UTF-8''a%3Bb%27c.png");
	buf_free(&b);
}

static void percent_decoding(void **state)
{
	char out[16], q[32];

	assert_int_equal(pct_decode("a%20b+c", 7, out, sizeof(out)), 5);
	assert_string_equal(out, "a b+c");
	assert_int_equal(pct_decode("%C3%bc", 6, out, sizeof(out)), 2);
	assert_string_equal(out, "\xc3\xbc");
	assert_int_equal(pct_decode("%00", 3, out, sizeof(out)), -1);
	assert_int_equal(pct_decode("%2", 2, out, sizeof(out)), -1);
	assert_int_equal(pct_decode("%zz", 3, out, sizeof(out)), -1);
	assert_int_equal(pct_decode("0123456789abcdef", 16, out, sizeof(out)), -1);
	assert_int_equal(pct_decode("0123456789abcde", 15, out, sizeof(out)), 15);
	assert_int_equal(pct_query("a=1&url=http%3A%2F%2Fx%2F&b", "url", q, sizeof(q)), 1);
	assert_string_equal(q, "http://x/");
	assert_int_equal(pct_query("a=1&b", "b", q, sizeof(q)), 1);
	assert_string_equal(q, "");
	assert_int_equal(pct_query("ab=1", "a", q, sizeof(q)), 0);
	assert_int_equal(pct_query("", "a", q, sizeof(q)), 0);
	assert_int_equal(pct_query("a=%0", "a", q, sizeof(q)), -1);
}

static void percent_encoding(void **state)
{
	struct buf b;

	buf_init(&b, 64);
	assert_int_equal(pct_encode(&b, "alice@example.test/x y~", 23,
	    PCT_UNRESERVED), 0);
	assert_string_equal(buf_str(&b), "alice%40example.test%2Fx%20y~");
	buf_reset(&b);
	assert_int_equal(pct_encode(&b, "a\0b", 3, PCT_UNRESERVED), 0);
	assert_string_equal(buf_str(&b), "a%00b");
	buf_free(&b);
	buf_init(&b, 4);
	assert_int_equal(pct_encode(&b, "\xff\xff", 2, ""), -1);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dangerous_types_neutralised),
		cmocka_unit_test(safe_types_kept),
		cmocka_unit_test(inline_only_for_safe),
		cmocka_unit_test(names_cleaned),
		cmocka_unit_test(long_names_cut_on_a_character),
		cmocka_unit_test(header_has_both_filenames),
		cmocka_unit_test(percent_decoding),
		cmocka_unit_test(percent_encoding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
