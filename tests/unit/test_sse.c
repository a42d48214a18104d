/* sse: the event-stream reader, at every split point, with every line
 * ending, and its caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sse.h"

/* What the callback saw, as text: "event|data|id;" per event. */
struct seen {
	struct buf out;
	int stop_after;     /* stop (return 1) after this many events; 0: never */
	int n;
};

static int record(void *ctx, const char *event, const char *data, size_t len,
    const char *id)
{
	struct seen *s = ctx;

	assert_int_equal(strlen(data), len);
	assert_int_equal(buf_printf(&s->out, "%s|%s|%s;", event, data, id), 0);
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

/* Feeds text whole, then split at every point, then byte by byte: the
 * same events and the same result each time. Returns the events. */
static char *feed_all_ways(const char *text, size_t n, int want_rc)
{
	struct seen whole = { .n = 0 }, part;
	struct sse s;
	size_t k, i;
	int rc;
	char *out;

	buf_init(&whole.out, 1 << 20);
	sse_init(&s, record, &whole);
	assert_int_equal(sse_feed(&s, text, n), want_rc);
	sse_free(&s);
	for (k = 0; k <= n; k++) {
		part.n = 0;
		part.stop_after = 0;
		buf_init(&part.out, 1 << 20);
		sse_init(&s, record, &part);
		rc = sse_feed(&s, text, k);
		if (rc == 0)
			rc = sse_feed(&s, text + k, n - k);
		assert_int_equal(rc, want_rc);
		assert_string_equal(buf_str(&part.out), buf_str(&whole.out));
		sse_free(&s);
		buf_free(&part.out);
	}
	part.n = 0;
	buf_init(&part.out, 1 << 20);
	sse_init(&s, record, &part);
	for (i = 0, rc = 0; i < n && rc == 0; i++)
		rc = sse_feed(&s, text + i, 1);
	assert_int_equal(rc, want_rc);
	assert_string_equal(buf_str(&part.out), buf_str(&whole.out));
	sse_free(&s);
	buf_free(&part.out);
	out = strdup(buf_str(&whole.out));
	buf_free(&whole.out);
	return out;
}

static void check(const char *text, const char *want)
{
	char *got = feed_all_ways(text, strlen(text), 0);

	assert_string_equal(got, want);
	free(got);
}

static void test_stalwart_frames(void **state)
{
	check("event: state\ndata: {\"@type\":\"StateChange\",\"changed\":{\"a\":{\"Email\":\"s1\"}}}\n\n"
	    "event: ping\ndata: {\"interval\": 30000}\n\n",
	    "state|{\"@type\":\"StateChange\",\"changed\":{\"a\":{\"Email\":\"s1\"}}}|;"
	    "ping|{\"interval\": 30000}|;");
}

static void test_line_endings(void **state)
{
	check("event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n",
	    "a|1|;b|2|;message|3|;");
	/* A CR at the end of a read and the LF at the start of the next are
	 * one line end (feed_all_ways splits there too). */
	check("data: x\r\n\r\n", "message|x|;");
}

static void test_fields(void **state)
{
	/* Comments, no space after the colon, multi-line data, a field with
	 * no colon, unknown fields, retry, ids that persist. */
	check(": hello\n\ndata:a\ndata: b\ndata\n\n", "message|a\nb\n|;");
	check("id: 7\nretry: 10\nfoo: bar\ndata: x\n\ndata: y\n\n",
	    "message|x|7;message|y|7;");
	check("id\ndata: z\n\n", "message|z|;");
	/* An event with no data is not dispatched, and its name is reset. */
	check("event: state\n\ndata: q\n\n", "message|q|;");
	/* An incomplete event at the end is not dispatched. */
	check("data: q\n", "");
	check("data:  two spaces\n\n", "message| two spaces|;");
	check("\xEF\xBB\xBF" "data: bom\n\n", "message|bom|;");
}

static void test_caps(void **state)
{
	size_t n = SSE_LINE_MAX + 16;
	char *big = malloc(n + 4), *got;

	/* A line of exactly the maximum is fine; one byte more breaks it. */
	memset(big, 'x', n + 4);
	memcpy(big, "data:", 5);
	big[SSE_LINE_MAX] = '\n';
	big[SSE_LINE_MAX + 1] = '\n';
	got = feed_all_ways(big, SSE_LINE_MAX + 2, 0);
	assert_int_equal(strlen(got), strlen("message||;") + SSE_LINE_MAX - 5);
	free(got);
	big[SSE_LINE_MAX] = 'x';
	big[SSE_LINE_MAX + 1] = '\n';
	free(feed_all_ways(big, SSE_LINE_MAX + 2, -1));
	free(big);
	/* NUL, an over-long event name or id. */
	free(feed_all_ways("data: a\0b\n\n", 11, -1));
	{
		char ev[128];

		snprintf(ev, sizeof(ev), "event: %0*d\ndata: 1\n\n", SSE_NAME_MAX + 1, 0);
		free(feed_all_ways(ev, strlen(ev), -1));
	}
}

static void test_data_cap(void **state)
{
	struct sse s;
	struct seen w = { .n = 0 };
	char line[1024];
	size_t i;
	int rc = 0;

	buf_init(&w.out, 1 << 20);
	sse_init(&s, record, &w);
	memset(line, 'd', sizeof(line));
	memcpy(line, "data: ", 6);
	line[sizeof(line) - 1] = '\n';
	for (i = 0; i < 2 * SSE_DATA_MAX / sizeof(line) && rc == 0; i++)
		rc = sse_feed(&s, line, sizeof(line));
	assert_int_equal(rc, -1);
	/* Broken stays broken. */
	assert_int_equal(sse_feed(&s, "\n\n", 2), -1);
	assert_int_equal(w.n, 0);
	sse_reset(&s);
	assert_int_equal(sse_feed(&s, "data: ok\n\n", 10), 0);
	assert_int_equal(w.n, 1);
	sse_free(&s);
	buf_free(&w.out);
}

static void test_stop(void **state)
{
	struct sse s;
	struct seen w = { .n = 0, .stop_after = 1 };

	buf_init(&w.out, 4096);
	sse_init(&s, record, &w);
	assert_int_equal(sse_feed(&s, "data: 1\n\ndata: 2\n\n", 18), 1);
	assert_string_equal(buf_str(&w.out), "message|1|;");
	sse_free(&s);
	buf_free(&w.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stalwart_frames),
		cmocka_unit_test(test_line_endings),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_data_cap),
		cmocka_unit_test(test_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
