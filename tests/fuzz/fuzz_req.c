/* Fuzz target for what a responder reads of a request before any handler
 * runs (shared/req.c, shared/serve.c, the cookie in shared/sess.c): the
 * request line, Content-Length, the client address behind trusted
 * proxies, HTTPS, Sec-Fetch-Site, the CSRF header, the session cookie,
 * Content-Type and Accept-Encoding.
 *
 * The input's lines are the CGI variables below, in order. The request
 * goes through req_init and serve_dispatch over a real state database;
 * what req_init keeps must be bounded and clean, the helpers must return
 * bounded, NUL-terminated values, and the response must start with a
 * Status line and hold no header line broken by the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "lines.h"
#include "fuzzapp.h"
#include "req.h"
#include "serve.h"
#include "sess.h"

static const char *const names[] = {
	"REQUEST_METHOD", "REQUEST_URI", "CONTENT_LENGTH", "REMOTE_ADDR",
	"HTTP_X_FORWARDED_FOR", "HTTPS", "HTTP_X_FORWARDED_PROTO",
	"HTTP_SEC_FETCH_SITE", SERVE_CSRF_PARAM, "HTTP_COOKIE",
	"CONTENT_TYPE", "HTTP_ACCEPT_ENCODING", "REQUEST_SCHEME"
};
#define NVARS (sizeof(names) / sizeof(names[0]))

struct ctx {
	struct lines l;
	struct buf out;
	char cookie[SESS_COOKIE_LEN + 256];
};

/* A signed-in session, made once: a Cookie line starting with '@' sends
 * it, followed by the rest of the line, so that the fuzzer reaches the
 * handlers behind the session check too. */
static char session[SESS_COOKIE_LEN + 1];

static void make_session(struct app *a)
{
	struct sess_new n = { "alice", "secret", 0, "{}",
	    "http://127.0.0.1:9/api", "http://127.0.0.1:9/d", "http://127.0.0.1:9/u",
	    "http://127.0.0.1:9/e", "fuzz", "127.0.0.1" };

	if (session[0] == '\0' && sess_create(a, &n, time(NULL), session) != 0)
		abort();
}

static const char *param(void *p, const char *name)
{
	struct ctx *x = p;
	size_t i;

	for (i = 0; i < NVARS; i++)
		if (!strcmp(name, names[i]))
			break;
	if (i == NVARS || x->l.f[i][0] == '\0')
		return NULL;
	if (!strcmp(name, "HTTP_COOKIE") && x->l.f[i][0] == '@') {
		snprintf(x->cookie, sizeof(x->cookie), "%s=%s%.200s", SESS_COOKIE,
		    session, x->l.f[i] + 1);
		return x->cookie;
	}
	return x->l.f[i];
	return NULL;
}

static int rd(void *p, char *b, int n)
{
	return 0;
}

static int wr(void *p, const char *b, int n)
{
	return buf_append(&((struct ctx *)p)->out, b, (size_t)n);
}

static int fl(void *p)
{
	return 0;
}

static void handler(struct req *r)
{
	if (r->sess == NULL)
		abort();       /* only session routes reach here */
	req_status(r, 204);
}

static const struct route routes[] = {
	{ "GET", "/api/x", ROUTE_SESSION, handler },
	{ "POST", "/api/x", ROUTE_SESSION | ROUTE_BUDGET, handler },
	{ "GET", "/api/p/", ROUTE_SESSION | ROUTE_PREFIX, handler },
	{ NULL, NULL, 0, NULL }
};

static void helpers(struct req *r, size_t small)
{
	char v[128];
	size_t n = small < sizeof(v) ? small : sizeof(v);

	if (req_cookie(r, SESS_COOKIE, v, n) == 0 &&
	    (strlen(v) >= n || strchr(v, ';')))
		abort();
	if (req_media_type(r, v, n) == 0 &&
	    (strlen(v) >= n || strpbrk(v, "; \tABCDEFGHIJKLMNOPQRSTUVWXYZ")))
		abort();
	if ((unsigned)req_accepts_gzip(r) > 1)
		abort();
}

static void kept(const struct req *r)
{
	size_t n = strnlen(r->path, sizeof(r->path));

	if (n >= sizeof(r->path) || r->path[0] != '/' ||
	    strpbrk(r->path, "\r\n?") || strpbrk(r->query, "\r\n") ||
	    strnlen(r->ip, sizeof(r->ip)) >= sizeof(r->ip) ||
	    r->content_length < -1 || r->method == NULL)
		abort();
}

/* "Status: NNN ..." first, then lines, each "Name: value". */
static void response(const struct buf *out)
{
	const char *p = buf_str(out), *end, *colon;

	if (strncmp(p, "Status: ", 8))
		abort();
	for (; (end = strstr(p, "\r\n")) != NULL && end != p; p = end + 2) {
		colon = memchr(p, ':', (size_t)(end - p));
		if (colon == NULL || colon == p || memchr(p, '\n', (size_t)(end - p)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct app app;
	struct ctx x;
	struct req_io io = { &x, rd, wr, fl, param };
	struct req r;

	fuzzapp_open(&app);
	make_session(&app);
	if (size == 0 || lines_split(&x.l, data, size, NVARS) == -1)
		return 0;
	buf_init(&x.out, 1 << 20);
	if (req_init(&r, &app, &io) == 0) {
		kept(&r);
		helpers(&r, (size_t)data[0] % 80);
		serve_dispatch(&r, routes);
	}
	req_end(&r);
	req_free(&r);
	response(&x.out);
	buf_free(&x.out);
	lines_free(&x.l);
	return 0;
}

#define FUZZ_CORPUS "req"
#include "replay.h"
