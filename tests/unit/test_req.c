/* req + serve_dispatch: one request through a fake transport (CGI
 * variables from a table, body from a string, output into a buffer) and a
 * small route table of the tests' own. */
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "js.h"
#include "req.h"
#include "serve.h"
#include "sess.h"
#include "testapp.h"

#define USER "alice@example.test"
/* A 60 s window starts at T0: the API budget's windows are aligned. */
#define T0 ((time_t)1700000040)

/* ---- the fake transport ---- */

struct fake {
	const char *params[64];  /* name, value, ..., NULL */
	int nparams;
	const char *body;
	size_t body_len, pos;
	int asked_max;           /* the most one read asked for */
	int reads;
	struct buf out;
	int flushes;
};

static int f_read(void *ctx, char *p, int n)
{
	struct fake *f = ctx;
	size_t k = f->body_len - f->pos;

	f->reads++;
	if (n > f->asked_max)
		f->asked_max = n;
	if (k > (size_t)n)
		k = (size_t)n;
	memcpy(p, f->body + f->pos, k);
	f->pos += k;
	return (int)k;
}

static int f_write(void *ctx, const char *p, int n)
{
	struct fake *f = ctx;

	return buf_append(&f->out, p, (size_t)n);
}

static int f_flush(void *ctx)
{
	((struct fake *)ctx)->flushes++;
	return 0;
}

static const char *f_param(void *ctx, const char *name)
{
	struct fake *f = ctx;
	int i;

	for (i = 0; i + 1 < f->nparams; i += 2)
		if (!strcmp(f->params[i], name))
			return f->params[i + 1];
	return NULL;
}

static void fake_init(struct fake *f, const char *method, const char *uri)
{
	memset(f, 0, sizeof(*f));
	buf_init(&f->out, 1 << 20);
	f->body = "";
	if (method) {
		f->params[f->nparams++] = "REQUEST_METHOD";
		f->params[f->nparams++] = method;
	}
	if (uri) {
		f->params[f->nparams++] = "REQUEST_URI";
		f->params[f->nparams++] = uri;
	}
	f->params[f->nparams++] = "REMOTE_ADDR";
	f->params[f->nparams++] = "192.0.2.50";
}

/* Adds (or, being earlier in the table, overrides) a CGI variable. */
static void fake_set(struct fake *f, const char *name, const char *value)
{
	int i;

	for (i = 0; i + 1 < f->nparams; i += 2)
		if (!strcmp(f->params[i], name)) {
			f->params[i + 1] = value;
			return;
		}
	assert_true(f->nparams + 2 < 64);
	f->params[f->nparams++] = name;
	f->params[f->nparams++] = value;
}

static void fake_body(struct fake *f, const char *body)
{
	f->body = body;
	f->body_len = strlen(body);
}

static struct req_io fake_io(struct fake *f)
{
	struct req_io io = { f, f_read, f_write, f_flush, f_param };

	return io;
}

/* ---- the routes ---- */

static int calls;
static char seen_user[128];

static void h_ok(struct req *r)
{
	json_object *o = json_object_new_object();

	calls++;
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	req_json(r, 200, o);
	json_object_put(o);
}

static void h_me(struct req *r)
{
	calls++;
	assert_non_null(r->sess);
	snprintf(seen_user, sizeof(seen_user), "%s", r->sess->user);
	req_status(r, 204);
	/* serve_dispatch ends what the handler did not. */
}

static const struct route routes[] = {
	{ "GET", "/api/ping", 0, h_ok },
	{ "POST", "/api/ping", 0, h_ok },
	{ "GET", "/api/me", ROUTE_SESSION, h_me },
	{ "GET", "/api/mine", ROUTE_SESSION, h_me },
	{ "POST", "/api/mine", ROUTE_SESSION, h_me },
	/* As the relay: its own call to the mail server is the check. */
	{ "POST", "/api/jmap", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_UPSTREAM, h_ok },
	{ "GET", "/api/blob/", ROUTE_SESSION | ROUTE_PREFIX, h_me },
	{ NULL, NULL, 0, NULL },
};

/* Runs one request through req_init and serve_dispatch; now, when not 0,
 * replaces the clock. */
static void run_at(struct testapp *t, struct fake *f, time_t now)
{
	struct req_io io = fake_io(f);
	struct req r;

	f->body_len = strlen(f->body);
	if (req_init(&r, &t->app, &io) == 0) {
		if (now)
			r.now = now;
		serve_dispatch(&r, routes);
	}
	req_free(&r);
}

static void run(struct testapp *t, struct fake *f)
{
	run_at(t, f, 0);
}

/* ---- reading the response ---- */

static int status_of(const struct fake *f)
{
	int s = 0;

	if (sscanf(buf_str(&f->out), "Status: %d ", &s) != 1)
		fail_msg("no Status line in \"%s\"", buf_str(&f->out));
	return s;
}

/* The value of header name (first one), or NULL; into v. */
static const char *header_of(const struct fake *f, const char *name,
    char *v, size_t n)
{
	const char *p = buf_str(&f->out), *end = strstr(p, "\r\n\r\n");
	const char *eol;
	size_t k = strlen(name);

	assert_non_null(end);
	while (p < end) {
		eol = strstr(p, "\r\n");
		if (!strncasecmp(p, name, k) && p[k] == ':') {
			p += k + 1;
			while (*p == ' ')
				p++;
			snprintf(v, n, "%.*s", (int)(eol - p), p);
			return v;
		}
		p = eol + 2;
	}
	return NULL;
}

static int header_count(const struct fake *f, const char *name)
{
	const char *p = buf_str(&f->out), *end = strstr(p, "\r\n\r\n");
	size_t k = strlen(name);
	int n = 0;

	while (p && p < end) {
		if (!strncasecmp(p, name, k) && p[k] == ':')
			n++;
		p = strstr(p, "\r\n");
		p = p ? p + 2 : NULL;
	}
	return n;
}

static const char *body_of(const struct fake *f)
{
	const char *p = strstr(buf_str(&f->out), "\r\n\r\n");

	assert_non_null(p);
	return p + 4;
}

/* The "error" member of the JSON body, into code. */
static const char *error_of(const struct fake *f, char *code, size_t n)
{
	const char *b = body_of(f);
	json_object *o = js_parse(b, strlen(b));

	if (o == NULL)
		fail_msg("body is not a JSON object: \"%s\"", b);
	snprintf(code, n, "%s", js_str(o, "error") ? js_str(o, "error") : "");
	json_object_put(o);
	return code;
}

static void assert_security_headers(const struct fake *f)
{
	char v[512];

	assert_non_null(header_of(f, "X-Content-Type-Options", v, sizeof(v)));
	assert_string_equal(v, "nosniff");
	assert_non_null(header_of(f, "Content-Security-Policy", v, sizeof(v)));
	assert_non_null(strstr(v, "frame-ancestors 'none'"));
	assert_non_null(strstr(v, "default-src 'none'"));
	assert_non_null(header_of(f, "X-Frame-Options", v, sizeof(v)));
	assert_string_equal(v, "DENY");
	assert_non_null(header_of(f, "Referrer-Policy", v, sizeof(v)));
	assert_string_equal(v, "no-referrer");
	assert_non_null(header_of(f, "Cache-Control", v, sizeof(v)));
	assert_string_equal(v, "no-store");
	assert_int_equal(header_count(f, "Cache-Control"), 1);
}

/* Status, error code and the security headers in one go. */
static void assert_error(const struct fake *f, int status, const char *code)
{
	char got[64];

	assert_int_equal(status_of(f), status);
	assert_string_equal(error_of(f, got, sizeof(got)), code);
	assert_security_headers(f);
}

/* A session for USER at now; its cookie. */
static void make_session(struct testapp *t, time_t now,
    char cookie[SESS_COOKIE_LEN + 1])
{
	struct sess_new n;

	memset(&n, 0, sizeof(n));
	n.user = USER;
	n.pass = "pw-123456";
	n.doc = "{}";
	n.api_url = n.download_url = n.upload_url = n.event_url = "";
	assert_int_equal(sess_create(&t->app, &n, now, cookie), 0);
}

static int setup(void **state)
{
	calls = 0;
	seen_user[0] = '\0';
	return testapp_setup(state);
}

/* ---- dispatch ---- */

static void route_answers_with_security_headers(void **state)
{
	struct fake f;

	fake_init(&f, "GET", "/api/ping?x=1");
	run(*state, &f);
	assert_int_equal(status_of(&f), 200);
	assert_security_headers(&f);
	assert_string_equal(body_of(&f), "{\"ok\":true}");
	assert_int_equal(calls, 1);
	assert_true(f.flushes >= 1);
	buf_free(&f.out);
}

static void unknown_path_404(void **state)
{
	struct fake f;

	fake_init(&f, "GET", "/api/pingx");
	run(*state, &f);
	assert_error(&f, 404, "not_found");
	assert_int_equal(calls, 0);
	buf_free(&f.out);
	/* A prefix route matches only below its path. */
	fake_init(&f, "GET", "/api/blo");
	run(*state, &f);
	assert_error(&f, 404, "not_found");
	buf_free(&f.out);
}

static void wrong_method_405_with_allow(void **state)
{
	struct fake f;
	char v[64];

	fake_init(&f, "DELETE", "/api/ping");
	fake_set(&f, SERVE_CSRF_PARAM, "1");
	run(*state, &f);
	assert_error(&f, 405, "method_not_allowed");
	assert_non_null(header_of(&f, "Allow", v, sizeof(v)));
	assert_string_equal(v, "GET, POST");
	assert_int_equal(calls, 0);
	buf_free(&f.out);

	fake_init(&f, "POST", "/api/me");
	fake_set(&f, SERVE_CSRF_PARAM, "1");
	run(*state, &f);
	assert_error(&f, 405, "method_not_allowed");
	assert_non_null(header_of(&f, "Allow", v, sizeof(v)));
	assert_string_equal(v, "GET");
	buf_free(&f.out);
}

static void post_without_csrf_header_403(void **state)
{
	struct fake f;

	fake_init(&f, "POST", "/api/ping");
	run(*state, &f);
	assert_error(&f, 403, "missing_csrf_header");
	buf_free(&f.out);
	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, SERVE_CSRF_PARAM, "");
	run(*state, &f);
	assert_error(&f, 403, "missing_csrf_header");
	buf_free(&f.out);
	assert_int_equal(calls, 0);
	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, SERVE_CSRF_PARAM, "1");
	run(*state, &f);
	assert_int_equal(status_of(&f), 200);
	assert_int_equal(calls, 1);
	buf_free(&f.out);
}

static void csrf_checked_before_session(void **state)
{
	struct fake f;

	/* No cookie either: the CSRF refusal comes first. */
	fake_init(&f, "POST", "/api/jmap");
	run(*state, &f);
	assert_error(&f, 403, "missing_csrf_header");
	assert_int_equal(header_count(&f, "Set-Cookie"), 0);
	buf_free(&f.out);
}

static void cross_site_403(void **state)
{
	static const char *const refused[] = { "cross-site", "same-site", "x" };
	struct fake f;
	size_t i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		fake_init(&f, "GET", "/api/ping");
		fake_set(&f, "HTTP_SEC_FETCH_SITE", refused[i]);
		run(*state, &f);
		assert_error(&f, 403, "cross_site_request");
		buf_free(&f.out);
	}
	/* Before anything else, even on an unknown path. */
	fake_init(&f, "GET", "/api/nothing");
	fake_set(&f, "HTTP_SEC_FETCH_SITE", "cross-site");
	run(*state, &f);
	assert_error(&f, 403, "cross_site_request");
	buf_free(&f.out);
	assert_int_equal(calls, 0);
}

static void same_origin_and_none_pass(void **state)
{
	static const char *const ok[] = { "same-origin", "none" };
	struct fake f;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		fake_init(&f, "GET", "/api/ping");
		fake_set(&f, "HTTP_SEC_FETCH_SITE", ok[i]);
		run(*state, &f);
		assert_int_equal(status_of(&f), 200);
		buf_free(&f.out);
	}
	assert_int_equal(calls, 2);
}

static void session_route_without_cookie_401(void **state)
{
	struct fake f;
	char v[256];

	fake_init(&f, "GET", "/api/me");
	fake_set(&f, "HTTP_COOKIE", "theme=dark");
	run(*state, &f);
	assert_error(&f, 401, "unauthenticated");
	assert_non_null(header_of(&f, "Set-Cookie", v, sizeof(v)));
	assert_int_equal(strncmp(v, SESS_COOKIE "=;", strlen(SESS_COOKIE) + 2), 0);
	assert_non_null(strstr(v, "Max-Age=0"));
	assert_non_null(strstr(v, "Path=/"));
	assert_non_null(strstr(v, "HttpOnly"));
	/* Plain http and cookie_secure = auto: no Secure. */
	assert_null(strstr(v, "Secure"));
	assert_int_equal(calls, 0);
	buf_free(&f.out);
}

static void clearing_cookie_secure_over_https(void **state)
{
	struct fake f;
	char v[256];

	fake_init(&f, "GET", "/api/me");
	fake_set(&f, "HTTPS", "on");
	run(*state, &f);
	assert_error(&f, 401, "unauthenticated");
	assert_non_null(header_of(&f, "Set-Cookie", v, sizeof(v)));
	assert_non_null(strstr(v, "; Secure"));
	buf_free(&f.out);
}

static void session_route_with_bad_cookie_401(void **state)
{
	char cookie[SESS_COOKIE_LEN + 1], hdr[200];
	struct fake f;

	make_session(*state, time(NULL), cookie);
	cookie[SESS_ID_LEN + 3] = cookie[SESS_ID_LEN + 3] == 'A' ? 'B' : 'A';
	snprintf(hdr, sizeof(hdr), SESS_COOKIE "=%s", cookie);
	fake_init(&f, "GET", "/api/me");
	fake_set(&f, "HTTP_COOKIE", hdr);
	run(*state, &f);
	assert_error(&f, 401, "unauthenticated");
	assert_int_equal(header_count(&f, "Set-Cookie"), 1);
	assert_int_equal(calls, 0);
	buf_free(&f.out);
}

static void session_route_with_cookie_reaches_handler(void **state)
{
	char cookie[SESS_COOKIE_LEN + 1], hdr[200];
	struct fake f;

	make_session(*state, T0, cookie);
	snprintf(hdr, sizeof(hdr), "theme=dark; " SESS_COOKIE "=%s; lang=en",
	    cookie);
	fake_init(&f, "GET", "/api/me");
	fake_set(&f, "HTTP_COOKIE", hdr);
	run_at(*state, &f, T0 + 1);
	assert_int_equal(status_of(&f), 204);
	assert_security_headers(&f);
	assert_int_equal(header_count(&f, "Set-Cookie"), 0);
	assert_int_equal(calls, 1);
	assert_string_equal(seen_user, USER);
	buf_free(&f.out);
	/* A prefix route too. */
	fake_init(&f, "GET", "/api/blob/acc/blob/name");
	fake_set(&f, "HTTP_COOKIE", hdr);
	run_at(*state, &f, T0 + 2);
	assert_int_equal(status_of(&f), 204);
	assert_int_equal(calls, 2);
	buf_free(&f.out);
}

/* A session signed in at T0: its Cookie header into hdr (200 bytes). */
static void signed_in_at_t0(struct testapp *t, char *hdr)
{
	char cookie[SESS_COOKIE_LEN + 1];

	make_session(t, T0, cookie);
	snprintf(hdr, 200, SESS_COOKIE "=%s", cookie);
}

/* A session route at time at for the session in hdr (POST with the CSRF
 * header). The test upstream refuses connections: a session check there
 * is a mail server that does not answer. */
static void me_at(struct testapp *t, struct fake *f, const char *method,
    const char *hdr, time_t at)
{
	fake_init(f, method, "/api/mine");
	fake_set(f, SERVE_CSRF_PARAM, "1");
	fake_set(f, "HTTP_COOKIE", hdr);
	run_at(t, f, at);
}

/* Within session_recheck of the last acceptance nothing is asked: a
 * change goes through although the mail server is down. */
static void fresh_session_not_checked(void **state)
{
	struct testapp *t = *state;
	char hdr[200];
	struct fake f;

	signed_in_at_t0(t, hdr);
	me_at(t, &f, "POST", hdr, T0 + 59);
	assert_int_equal(status_of(&f), 204);
	assert_int_equal(calls, 1);
	buf_free(&f.out);
}

/* Past it the mail server is asked first; when it does not answer, a read
 * goes on (an outage locks nobody out), a change is refused, and the
 * session is kept. */
static void stale_session_checked_first(void **state)
{
	struct testapp *t = *state;
	char hdr[200];
	struct fake f;

	signed_in_at_t0(t, hdr);
	me_at(t, &f, "POST", hdr, T0 + 60);
	assert_error(&f, 502, "upstream_error");
	assert_int_equal(header_count(&f, "Set-Cookie"), 0);
	assert_int_equal(calls, 0);
	buf_free(&f.out);
	me_at(t, &f, "GET", hdr, T0 + 61);
	assert_int_equal(status_of(&f), 204);
	assert_int_equal(calls, 1);
	buf_free(&f.out);
	/* Nothing was accepted: the record stays; the use is seen. */
	assert_int_equal(testapp_count(t, "SELECT verified FROM sessions"), T0);
	assert_int_equal(testapp_count(t, "SELECT seen FROM sessions"), T0 + 60);
	/* A shorter session_recheck moves the bound. */
	t->app.cfg.session_recheck = 5;
	signed_in_at_t0(t, hdr);
	me_at(t, &f, "POST", hdr, T0 + 4);
	assert_int_equal(status_of(&f), 204);
	buf_free(&f.out);
	me_at(t, &f, "POST", hdr, T0 + 5);
	assert_error(&f, 502, "upstream_error");
	buf_free(&f.out);
}

/* A route whose handler asks the mail server itself is not checked
 * before it. */
static void upstream_route_not_checked(void **state)
{
	struct testapp *t = *state;
	char hdr[200];
	struct fake f;

	signed_in_at_t0(t, hdr);
	fake_init(&f, "POST", "/api/jmap");
	fake_set(&f, SERVE_CSRF_PARAM, "1");
	fake_set(&f, "HTTP_COOKIE", hdr);
	run_at(t, &f, T0 + 3600);
	assert_int_equal(status_of(&f), 200);
	assert_int_equal(calls, 1);
	buf_free(&f.out);
}

/* One budgeted call (POST /api/jmap) of the session in hdr at time at. */
static void budget_call(struct testapp *t, struct fake *f, const char *hdr,
    time_t at)
{
	fake_init(f, "POST", "/api/jmap");
	fake_set(f, SERVE_CSRF_PARAM, "1");
	fake_set(f, "HTTP_COOKIE", hdr);
	run_at(t, f, at);
}

static void api_budget_429_on_third_call(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], hdr[200], v[32];
	struct fake f;
	int i;

	t->app.cfg.api_budget = 2;
	make_session(t, T0, cookie);
	snprintf(hdr, sizeof(hdr), SESS_COOKIE "=%s", cookie);
	for (i = 0; i < 3; i++) {
		budget_call(t, &f, hdr, T0 + 10 + i);
		if (i < 2) {
			assert_int_equal(status_of(&f), 200);
			assert_null(header_of(&f, "Retry-After", v, sizeof(v)));
		} else {
			assert_error(&f, 429, "rate_limited");
			assert_non_null(header_of(&f, "Retry-After", v, sizeof(v)));
			/* The window ends at T0 + 60. */
			assert_string_equal(v, "48");
		}
		buf_free(&f.out);
	}
	assert_int_equal(calls, 2);
	/* Routes outside the budget still answer. */
	fake_init(&f, "GET", "/api/me");
	fake_set(&f, "HTTP_COOKIE", hdr);
	run_at(t, &f, T0 + 20);
	assert_int_equal(status_of(&f), 204);
	buf_free(&f.out);
	/* The next window starts afresh. */
	budget_call(t, &f, hdr, T0 + 60);
	assert_int_equal(status_of(&f), 200);
	buf_free(&f.out);
}

/* api_budget_window sets the window the budget counts in. */
static void api_budget_window_is_configured(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], hdr[200], v[32];
	struct fake f;
	const int at[3] = { 1, 2, 10 }, want[3] = { 200, 429, 200 };
	int i;

	t->app.cfg.api_budget = 1;
	t->app.cfg.api_budget_window = 10;
	make_session(t, T0, cookie);
	snprintf(hdr, sizeof(hdr), SESS_COOKIE "=%s", cookie);
	for (i = 0; i < 3; i++) {
		budget_call(t, &f, hdr, T0 + at[i]);
		assert_int_equal(status_of(&f), want[i]);
		if (want[i] == 429) {
			/* The window ends at T0 + 10, not at the minute. */
			assert_non_null(header_of(&f, "Retry-After", v, sizeof(v)));
			assert_string_equal(v, "8");
		}
		buf_free(&f.out);
	}
}

static void api_budget_zero_is_off(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], hdr[200];
	struct fake f;
	int i;

	t->app.cfg.api_budget = 0;
	make_session(t, T0, cookie);
	snprintf(hdr, sizeof(hdr), SESS_COOKIE "=%s", cookie);
	for (i = 0; i < 5; i++) {
		budget_call(t, &f, hdr, T0 + 1);
		assert_int_equal(status_of(&f), 200);
		buf_free(&f.out);
	}
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 0);
}

/* ---- req_init and the helpers, on a request of their own ---- */

/* req_init over f; the result. */
static int init(struct testapp *t, struct fake *f, struct req *r)
{
	struct req_io io = fake_io(f);

	f->body_len = strlen(f->body);
	return req_init(r, &t->app, &io);
}

static void bad_request_target_400(void **state)
{
	static const char *const bad[] = { "api/ping", "", "http://x/api" };
	struct fake f;
	struct req r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fake_init(&f, "GET", bad[i]);
		assert_int_equal(init(*state, &f, &r), -1);
		req_free(&r);
		assert_error(&f, 400, "bad_request");
		buf_free(&f.out);
	}
	fake_init(&f, "GET", NULL);
	assert_int_equal(init(*state, &f, &r), -1);
	req_free(&r);
	assert_error(&f, 400, "bad_request");
	buf_free(&f.out);
}

static void path_and_query_split(void **state)
{
	struct fake f;
	struct req r;

	fake_init(&f, "GET", "/api/blob/a/b/c?accept=image/png&x=?");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_string_equal(r.path, "/api/blob/a/b/c");
	assert_string_equal(r.query, "accept=image/png&x=?");
	assert_string_equal(r.method, "GET");
	assert_true(r.content_length == -1);
	req_free(&r);
	buf_free(&f.out);
}

static void bad_content_length_400(void **state)
{
	static const char *const bad[] = {
		"abc", "-1", "5x", "+5", " 5", "5 ", "0x10", "99999999999999999999",
	};
	struct fake f;
	struct req r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fake_init(&f, "POST", "/api/ping");
		fake_set(&f, SERVE_CSRF_PARAM, "1");
		fake_set(&f, "CONTENT_LENGTH", bad[i]);
		if (init(*state, &f, &r) != -1)
			fail_msg("Content-Length \"%s\" was accepted", bad[i]);
		req_free(&r);
		assert_error(&f, 400, "bad_request");
		buf_free(&f.out);
	}
	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_LENGTH", "");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_true(r.content_length == -1);
	req_free(&r);
	buf_free(&f.out);
	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_LENGTH", "0");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_true(r.content_length == 0);
	req_free(&r);
	buf_free(&f.out);
}

static void read_stops_at_content_length(void **state)
{
	struct fake f;
	struct req r;
	char p[100];

	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_LENGTH", "5");
	fake_body(&f, "helloEXTRA-BYTES-OF-THE-NEXT-REQUEST");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_int_equal(req_read(&r, p, sizeof(p)), 5);
	assert_memory_equal(p, "hello", 5);
	assert_int_equal(req_read(&r, p, sizeof(p)), 0);
	assert_int_equal(req_read(&r, p, sizeof(p)), 0);
	/* Never asked the transport for more than was declared. */
	assert_int_equal(f.pos, 5);
	assert_true(f.asked_max <= 5);
	req_free(&r);
	buf_free(&f.out);
}

static void read_in_small_pieces(void **state)
{
	struct fake f;
	struct req r;
	char p[4];

	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_LENGTH", "6");
	fake_body(&f, "abcdefgh");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_int_equal(req_read(&r, p, 4), 4);
	assert_int_equal(req_read(&r, p, 4), 2);
	assert_memory_equal(p, "ef", 2);
	assert_int_equal(req_read(&r, p, 4), 0);
	assert_int_equal(f.pos, 6);
	req_free(&r);
	buf_free(&f.out);
}

static void read_short_body_is_error(void **state)
{
	struct fake f;
	struct req r;
	char p[100];

	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_LENGTH", "10");
	fake_body(&f, "abc");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_int_equal(req_read(&r, p, sizeof(p)), 3);
	assert_int_equal(req_read(&r, p, sizeof(p)), -1);
	req_free(&r);
	buf_free(&f.out);
}

/* What the transport was last told to wait (req_deadlines, req_read). */
static long told_recv, told_send;

static int f_timeouts(void *ctx, long recv_ms, long send_ms)
{
	(void)ctx;
	told_recv = recv_ms;
	told_send = send_ms;
	return 0;
}

/* The body's deadline: the grace at first, then REQ_BODY_MIN_RATE; a
 * body that has fallen behind it is an error before the read. */
static void read_has_a_deadline(void **state)
{
	struct fake f;
	struct req r;
	char p[100];

	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_LENGTH", "10");
	fake_body(&f, "abcdefghij");
	assert_int_equal(init(*state, &f, &r), 0);
	req_deadlines(&r, f_timeouts);
	/* The body's clock starts at its first read, not at the request:
	 * what postern did before (a busy database) is not the client's. */
	assert_int_equal(r.body_started_ms, 0);
	assert_int_equal(told_recv, REQ_BODY_GRACE * 1000L);
	assert_int_equal(told_send, REQ_SEND_IDLE * 1000L);
	assert_int_equal(req_read(&r, p, 4), 4);
	assert_true(told_recv > (REQ_BODY_GRACE - 1) * 1000L);
	/* As if the grace and what 4 bytes earn had passed long ago. */
	r.body_started_ms -= REQ_BODY_GRACE * 1000LL + 60000;
	assert_int_equal(req_read(&r, p, sizeof(p)), -1);
	assert_int_equal(f.pos, 4);
	req_free(&r);
	buf_free(&f.out);
}

/* req_json_body over one body: the object (put here) or NULL, with the
 * answer left in f. */
static int json_body(struct testapp *t, struct fake *f, const char *type,
    const char *body)
{
	char len[24];
	struct req r;
	json_object *o;

	fake_init(f, "PUT", "/api/x");
	if (type)
		fake_set(f, "CONTENT_TYPE", type);
	snprintf(len, sizeof(len), "%zu", strlen(body));
	fake_set(f, "CONTENT_LENGTH", len);
	fake_body(f, body);
	assert_int_equal(init(t, f, &r), 0);
	o = req_json_body(&r, 16, "The thing", 0);
	req_free(&r);
	json_object_put(o);
	return o != NULL;
}

static void json_body_checks_type_size_and_shape(void **state)
{
	struct fake f;

	assert_true(json_body(*state, &f, "application/json; charset=utf-8",
	    "{\"a\":1}"));
	assert_int_equal(f.out.len, 0);
	buf_free(&f.out);
	assert_false(json_body(*state, &f, "text/plain", "{}"));
	assert_error(&f, 415, "unsupported_media_type");
	assert_non_null(strstr(body_of(&f), "The thing must be sent as"));
	buf_free(&f.out);
	assert_false(json_body(*state, &f, NULL, "{}"));
	assert_error(&f, 415, "unsupported_media_type");
	buf_free(&f.out);
	assert_false(json_body(*state, &f, "application/json",
	    "{\"a\":\"0123456789\"}"));
	assert_error(&f, 413, "too_large");
	buf_free(&f.out);
	assert_false(json_body(*state, &f, "application/json", "{\"a\""));
	assert_error(&f, 400, "bad_request");
	assert_non_null(strstr(body_of(&f), "must be one JSON object"));
	buf_free(&f.out);
	assert_false(json_body(*state, &f, "application/json", "[1]"));
	assert_error(&f, 400, "bad_request");
	buf_free(&f.out);
}

static void read_all_stops_at_content_length(void **state)
{
	struct fake f;
	struct req r;
	struct buf b;

	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_LENGTH", "7");
	fake_body(&f, "{\"a\":1}{\"b\":2}");
	assert_int_equal(init(*state, &f, &r), 0);
	buf_init(&b, 1024);
	assert_int_equal(req_read_all(&r, &b), 0);
	assert_string_equal(buf_str(&b), "{\"a\":1}");
	assert_int_equal(f.pos, 7);
	buf_free(&b);
	req_free(&r);
	buf_free(&f.out);
}

static void read_all_refuses_declared_too_large(void **state)
{
	struct fake f;
	struct req r;
	struct buf b;

	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_LENGTH", "100");
	fake_body(&f, "0123456789012345678901234567890123456789"
	    "0123456789012345678901234567890123456789"
	    "01234567890123456789");
	assert_int_equal(init(*state, &f, &r), 0);
	buf_init(&b, 10);
	assert_int_equal(req_read_all(&r, &b), -1);
	/* Refused from the header alone: nothing read. */
	assert_int_equal(f.reads, 0);
	buf_free(&b);
	req_free(&r);
	buf_free(&f.out);
}

static void read_all_without_length_caps_at_max(void **state)
{
	struct fake f;
	struct req r;
	struct buf b;

	fake_init(&f, "POST", "/api/ping");
	fake_body(&f, "0123456789abcdef");
	assert_int_equal(init(*state, &f, &r), 0);
	buf_init(&b, 10);
	assert_int_equal(req_read_all(&r, &b), -1);
	assert_true(b.len <= 10);
	buf_free(&b);
	req_free(&r);
	buf_free(&f.out);
}

static void cookie_picks_the_right_one(void **state)
{
	struct fake f;
	struct req r;
	char v[80];

	fake_init(&f, "GET", "/api/ping");
	fake_set(&f, "HTTP_COOKIE", "xpostern_session=bad1; "
	    "postern_session_old=bad2;other=postern_session=bad3; "
	    "postern_session=good; last=x");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_int_equal(req_cookie(&r, SESS_COOKIE, v, sizeof(v)), 0);
	assert_string_equal(v, "good");
	assert_int_equal(req_cookie(&r, "other", v, sizeof(v)), 0);
	assert_string_equal(v, "postern_session=bad3");
	assert_int_equal(req_cookie(&r, "last", v, sizeof(v)), 0);
	assert_string_equal(v, "x");
	assert_int_equal(req_cookie(&r, "missing", v, sizeof(v)), -1);
	assert_int_equal(req_cookie(&r, "postern", v, sizeof(v)), -1);
	/* Too long for out. */
	assert_int_equal(req_cookie(&r, SESS_COOKIE, v, 4), -1);
	assert_int_equal(req_cookie(&r, SESS_COOKIE, v, 5), 0);
	req_free(&r);
	buf_free(&f.out);
}

static void cookie_absent_header(void **state)
{
	struct fake f;
	struct req r;
	char v[80];

	fake_init(&f, "GET", "/api/ping");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_int_equal(req_cookie(&r, SESS_COOKIE, v, sizeof(v)), -1);
	req_free(&r);
	buf_free(&f.out);
	fake_init(&f, "GET", "/api/ping");
	fake_set(&f, "HTTP_COOKIE", "postern_session=first;postern_session=second");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_int_equal(req_cookie(&r, SESS_COOKIE, v, sizeof(v)), 0);
	assert_string_equal(v, "first");
	req_free(&r);
	buf_free(&f.out);
}

static void header_refuses_cr_lf(void **state)
{
	struct fake f;
	struct req r;
	char v[64];

	fake_init(&f, "GET", "/api/ping");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_int_equal(req_header(&r, "X-Test", "a\r\nSet-Cookie: evil=1"), -1);
	assert_int_equal(req_header(&r, "X-Test", "a\nSet-Cookie: evil=2"), -1);
	assert_int_equal(req_header(&r, "X-Test", "a\rb"), -1);
	assert_int_equal(req_header(&r, "Set-Cookie: evil=3\r\nX", "1"), -1);
	assert_int_equal(req_header(&r, "X-Ok", "fine"), 0);
	assert_int_equal(req_end(&r), 0);
	/* Headers cannot follow the head. */
	assert_int_equal(req_header(&r, "X-Late", "1"), -1);
	assert_null(strstr(buf_str(&f.out), "evil"));
	assert_null(header_of(&f, "X-Test", v, sizeof(v)));
	assert_int_equal(header_count(&f, "Set-Cookie"), 0);
	assert_non_null(header_of(&f, "X-Ok", v, sizeof(v)));
	assert_string_equal(v, "fine");
	assert_null(strstr(buf_str(&f.out), "X-Late"));
	req_free(&r);
	buf_free(&f.out);
}

/* The client address req_init settles on. */
static void assert_client_ip(struct testapp *t, const char *remote,
    const char *xff, const char *want)
{
	struct fake f;
	struct req r;

	fake_init(&f, "GET", "/api/ping");
	fake_set(&f, "REMOTE_ADDR", remote);
	if (xff)
		fake_set(&f, "HTTP_X_FORWARDED_FOR", xff);
	assert_int_equal(init(t, &f, &r), 0);
	if (strcmp(r.ip, want))
		fail_msg("REMOTE_ADDR %s, X-Forwarded-For \"%s\": client %s, "
		    "expected %s", remote, xff ? xff : "", r.ip, want);
	req_free(&r);
	buf_free(&f.out);
}

static void xff_ignored_without_trusted_proxy(void **state)
{
	struct testapp *t = *state;
	char err[128];

	assert_client_ip(t, "203.0.113.5", NULL, "203.0.113.5");
	assert_client_ip(t, "203.0.113.5", "198.51.100.1", "203.0.113.5");
	assert_int_equal(cfg_set(&t->app.cfg, "trusted_proxies", "10.0.0.1",
	    err, sizeof(err)), 0);
	/* Only the direct peer's trust counts. */
	assert_client_ip(t, "203.0.113.5", "198.51.100.1, 10.0.0.1",
	    "203.0.113.5");
}

static void xff_rightmost_untrusted_hop(void **state)
{
	struct testapp *t = *state;
	char err[128];

	assert_int_equal(cfg_set(&t->app.cfg, "trusted_proxies",
	    "10.0.0.1 10.0.0.2 ::1", err, sizeof(err)), 0);
	assert_client_ip(t, "10.0.0.1", "198.51.100.1", "198.51.100.1");
	/* A client-supplied left part is not believed. */
	assert_client_ip(t, "10.0.0.1", "1.2.3.4, 198.51.100.1", "198.51.100.1");
	assert_client_ip(t, "10.0.0.1", "1.2.3.4,198.51.100.1 , 10.0.0.2",
	    "198.51.100.1");
	assert_client_ip(t, "::1", "2001:db8::7", "2001:db8::7");
	/* Nothing forwarded: the proxy itself. */
	assert_client_ip(t, "10.0.0.1", NULL, "10.0.0.1");
}

static void accepts_gzip(void **state)
{
	static const struct { const char *v; int want; } cases[] = {
		{ "gzip", 1 }, { "deflate, gzip", 1 }, { "gzip, deflate, br", 1 },
		{ "gzip;q=0.5", 1 }, { "br;q=1.0, gzip;q=0.8, *;q=0.1", 1 },
		{ "gzip;q=0", 0 }, { "deflate, gzip;q=0", 0 }, { "deflate", 0 },
		{ "", 0 }, { "identity", 0 }, { NULL, 0 },
	};
	struct fake f;
	struct req r;
	size_t i;
	int yes;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_init(&f, "GET", "/api/ping");
		if (cases[i].v)
			fake_set(&f, "HTTP_ACCEPT_ENCODING", cases[i].v);
		assert_int_equal(init(*state, &f, &r), 0);
		yes = req_accepts_gzip(&r);
		req_free(&r);
		buf_free(&f.out);
		if (yes != cases[i].want)
			fail_msg("Accept-Encoding \"%s\": expected %d",
			    cases[i].v ? cases[i].v : "(none)", cases[i].want);
	}
}

/* gzip with a zero q-value is declined however it is spelled: white
 * space around ';' (RFC 9110 section 12.4.2), 'Q', "0.0", "0.000". */
static void gzip_declined_with_spaced_or_long_q0(void **state)
{
	static const char *const declined[] = {
		"gzip; q=0", "gzip ; q=0", "gzip;Q=0", "gzip;q=0.0", "gzip;q=0.000",
	};
	struct fake f;
	struct req r;
	size_t i;
	int yes;

	for (i = 0; i < sizeof(declined) / sizeof(declined[0]); i++) {
		fake_init(&f, "GET", "/api/ping");
		fake_set(&f, "HTTP_ACCEPT_ENCODING", declined[i]);
		assert_int_equal(init(*state, &f, &r), 0);
		yes = req_accepts_gzip(&r);
		req_free(&r);
		buf_free(&f.out);
		if (yes != 0)
			fail_msg("Accept-Encoding \"%s\" was read as accepting "
			    "gzip", declined[i]);
	}
}

static void media_type_lower_case_without_parameters(void **state)
{
	struct fake f;
	struct req r;
	char v[32];

	fake_init(&f, "POST", "/api/ping");
	fake_set(&f, "CONTENT_TYPE", "Application/JSON; charset=utf-8");
	assert_int_equal(init(*state, &f, &r), 0);
	assert_int_equal(req_media_type(&r, v, sizeof(v)), 0);
	assert_string_equal(v, "application/json");
	assert_int_equal(req_media_type(&r, v, 8), -1);
	req_free(&r);
	buf_free(&f.out);
}

static void https_from_trusted_proxy_only(void **state)
{
	struct testapp *t = *state;
	struct fake f;
	struct req r;
	char err[128];

	fake_init(&f, "GET", "/api/ping");
	fake_set(&f, "HTTP_X_FORWARDED_PROTO", "https");
	assert_int_equal(init(t, &f, &r), 0);
	assert_int_equal(r.https, 0);
	req_free(&r);
	buf_free(&f.out);
	assert_int_equal(cfg_set(&t->app.cfg, "trusted_proxies", "192.0.2.50",
	    err, sizeof(err)), 0);
	fake_init(&f, "GET", "/api/ping");
	fake_set(&f, "HTTP_X_FORWARDED_PROTO", "https");
	assert_int_equal(init(t, &f, &r), 0);
	assert_int_equal(r.https, 1);
	req_free(&r);
	buf_free(&f.out);
	fake_init(&f, "GET", "/api/ping");
	fake_set(&f, "HTTPS", "on");
	assert_int_equal(init(t, &f, &r), 0);
	assert_int_equal(r.https, 1);
	req_free(&r);
	buf_free(&f.out);
}

static void rate_limited_sets_retry_after(void **state)
{
	struct fake f;
	struct req r;
	char v[32];

	fake_init(&f, "GET", "/api/ping");
	assert_int_equal(init(*state, &f, &r), 0);
	req_rate_limited(&r, 0);
	req_free(&r);
	assert_error(&f, 429, "rate_limited");
	assert_non_null(header_of(&f, "Retry-After", v, sizeof(v)));
	assert_string_equal(v, "1");
	buf_free(&f.out);
}

/* ---- statuses ---- */

/* Every status postern sends, with its reason phrase (RFC 9110): those
 * the code names (status_walk checks that it names no other) and 201,
 * which an upload passes on from the JMAP server. */
static const struct {
	int code;
	const char *text;
} sent[] = {
	{ 200, "OK" }, { 201, "Created" }, { 202, "Accepted" },
	{ 204, "No Content" }, { 206, "Partial Content" },
	{ 400, "Bad Request" },
	{ 401, "Unauthorized" }, { 403, "Forbidden" }, { 404, "Not Found" },
	{ 405, "Method Not Allowed" }, { 413, "Content Too Large" },
	{ 414, "URI Too Long" },
	{ 415, "Unsupported Media Type" }, { 416, "Range Not Satisfiable" },
	{ 422, "Unprocessable Content" },
	{ 429, "Too Many Requests" }, { 500, "Internal Server Error" },
	{ 502, "Bad Gateway" }, { 503, "Service Unavailable" },
	{ 504, "Gateway Timeout" },
};
#define NSENT (sizeof(sent) / sizeof(sent[0]))

static const char *sent_text(int code)
{
	size_t i;

	for (i = 0; i < NSENT; i++)
		if (sent[i].code == code)
			return sent[i].text;
	return NULL;
}

/* Each status goes out with its phrase, on the Status line. */
static void status_lines_have_phrases(void **state)
{
	char want[64];
	struct fake f;
	struct req r;
	size_t i;

	for (i = 0; i < NSENT; i++) {
		fake_init(&f, "GET", "/api/ping");
		assert_int_equal(init(*state, &f, &r), 0);
		req_status(&r, sent[i].code);
		req_end(&r);
		req_free(&r);
		snprintf(want, sizeof(want), "Status: %d %s\r\n", sent[i].code,
		    sent[i].text);
		if (strncmp(buf_str(&f.out), want, strlen(want)))
			fail_msg("%d: \"%.40s\", not \"%s\"", sent[i].code,
			    buf_str(&f.out), want);
		buf_free(&f.out);
	}
}

/* What postern does not know it does not send: no phrase, and an
 * upstream answer with such a status is refused. */
static void unknown_statuses_have_no_phrase(void **state)
{
	static const int unknown[] = { 0, 100, 102, 199, 299, 306, 418, 499,
	    599, 600, 999 };
	size_t i;

	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		assert_null(req_status_text(unknown[i]));
	assert_string_equal(req_status_text(422), "Unprocessable Content");
	assert_string_equal(req_status_text(409), "Conflict");
}

/* The status literals of a line that calls req_error, req_status or
 * req_json: the three-digit numbers between the call and its first
 * string. Their count, at most max. */
static int line_statuses(const char *line, int *out, int max)
{
	static const char *const fns[] = { "req_error(", "req_status(",
	    "req_json(" };
	const char *p = NULL, *q;
	int n = 0, len;
	size_t i;

	for (i = 0; i < 3 && p == NULL; i++)
		if ((q = strstr(line, fns[i])) != NULL)
			p = q + strlen(fns[i]);
	for (; p && *p && *p != '"' && n < max; p += len ? len : 1) {
		len = (int)strspn(p, "0123456789");
		if (len == 3 && !isalnum((unsigned char)p[-1]) && p[-1] != '_')
			out[n++] = atoi(p);
	}
	return n;
}

/* Checks every status literal in the C files of one folder; their count. */
static int walk_folder(const char *src, const char *folder)
{
	char path[1024], line[1024];
	struct dirent *e;
	int codes[8], found = 0, k, i, lineno;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", src, folder);
	assert_non_null(d = opendir(path));
	while ((e = readdir(d)) != NULL) {
		if (strlen(e->d_name) < 3 ||
		    strcmp(e->d_name + strlen(e->d_name) - 2, ".c"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", src, folder, e->d_name);
		assert_non_null(f = fopen(path, "r"));
		for (lineno = 1; fgets(line, sizeof(line), f); lineno++) {
			k = line_statuses(line, codes, 8);
			for (i = 0; i < k; i++, found++)
				if (sent_text(codes[i]) == NULL ||
				    strcmp(req_status_text(codes[i]) ?
				    req_status_text(codes[i]) : "", sent_text(codes[i])))
					fail_msg("%s/%s:%d sends %d: not in the "
					    "tables with its phrase", folder,
					    e->d_name, lineno, codes[i]);
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/* Walks every status the responders and pushd name in their code. */
static void status_walk(void **state)
{
	const char *src = getenv("POSTERN_SRCDIR");
	int codes[8];

	if (src == NULL)
		skip();  /* run outside make check */
	assert_int_equal(line_statuses("req_error(r, rc ? 500 : 404, \"x 200\"",
	    codes, 8), 2);
	assert_int_equal(codes[0], 500);
	assert_int_equal(codes[1], 404);
	assert_int_equal(line_statuses("req_status(x->r, (int)h->status);",
	    codes, 8), 0);
	assert_true(walk_folder(src, "shared") > 5);
	assert_true(walk_folder(src, "pushd") > 0);
}

/* Whether the file at path holds text. */
static int file_has(const char *path, const char *text)
{
	static char doc[1 << 20];
	size_t n;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	return strstr(doc, text) != NULL;
}

/* Every error of the table goes out with a status postern sends, and
 * docs/API.md names its code with that status ("404 `not_found`"). */
static void error_table_matches_api_md(void **state)
{
	const char *src = getenv("POSTERN_SRCDIR");
	char path[1024], want[96];
	const struct err_entry *t;
	int e;

	if (src == NULL)
		skip();  /* run outside make check */
	snprintf(path, sizeof(path), "%s/docs/API.md", src);
	for (e = ERR_NONE + 1; e < ERR_COUNT; e++) {
		t = err_entry((enum err)e);
		assert_non_null(t->code);
		assert_non_null(t->message);
		if (t->status == 0)   /* the caller's status: the code alone */
			snprintf(want, sizeof(want), "`%s`", t->code);
		else {
			if (sent_text(t->status) == NULL)
				fail_msg("%s: %d is not a status postern sends",
				    t->code, t->status);
			snprintf(want, sizeof(want), "%d `%s`", t->status, t->code);
		}
		if (!file_has(path, want))
			fail_msg("docs/API.md does not name %s", want);
	}
}

/* The body of an error: the table's code and message, or the caller's
 * message; a status of the caller's for the address book's refusals. */
static void error_body_from_table(void **state)
{
	struct fake f;
	struct req r;

	fake_init(&f, "GET", "/api/ping");
	assert_int_equal(init(*state, &f, &r), 0);
	req_error(&r, ERR_MISSING_CSRF, NULL);
	req_free(&r);
	assert_error(&f, 403, "missing_csrf_header");
	assert_non_null(strstr(buf_str(&f.out),
	    "The X-Postern-CSRF header is required."));
	buf_free(&f.out);
	fake_init(&f, "GET", "/api/ping");
	assert_int_equal(init(*state, &f, &r), 0);
	req_error_status(&r, ERR_DAV_REFUSED, 412, "Changed meanwhile.");
	req_free(&r);
	assert_error(&f, 412, "dav_refused");
	assert_non_null(strstr(buf_str(&f.out), "Changed meanwhile."));
	buf_free(&f.out);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, testapp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(route_answers_with_security_headers),
		T(unknown_path_404),
		T(wrong_method_405_with_allow),
		T(post_without_csrf_header_403),
		T(csrf_checked_before_session),
		T(cross_site_403),
		T(same_origin_and_none_pass),
		T(session_route_without_cookie_401),
		T(clearing_cookie_secure_over_https),
		T(session_route_with_bad_cookie_401),
		T(session_route_with_cookie_reaches_handler),
		T(api_budget_429_on_third_call),
		T(api_budget_window_is_configured),
		T(fresh_session_not_checked),
		T(stale_session_checked_first),
		T(upstream_route_not_checked),
		T(api_budget_zero_is_off),
		T(bad_request_target_400),
		T(path_and_query_split),
		T(bad_content_length_400),
		T(read_stops_at_content_length),
		T(read_in_small_pieces),
		T(read_short_body_is_error),
		T(read_has_a_deadline),
		T(read_all_stops_at_content_length),
		T(read_all_refuses_declared_too_large),
		T(read_all_without_length_caps_at_max),
		T(json_body_checks_type_size_and_shape),
		T(cookie_picks_the_right_one),
		T(cookie_absent_header),
		T(header_refuses_cr_lf),
		T(xff_ignored_without_trusted_proxy),
		T(xff_rightmost_untrusted_hop),
		T(accepts_gzip),
		T(gzip_declined_with_spaced_or_long_q0),
		T(media_type_lower_case_without_parameters),
		T(https_from_trusted_proxy_only),
		T(rate_limited_sets_retry_after),
		T(status_lines_have_phrases),
		cmocka_unit_test(unknown_statuses_have_no_phrase),
		cmocka_unit_test(status_walk),
		cmocka_unit_test(error_table_matches_api_md),
		T(error_body_from_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
