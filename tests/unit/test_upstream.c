/* upstream: pinning the URLs a JMAP server advertises to the configured
 * upstream (upstream_pin and upstream_join), and calls of different shapes
 * one after another on one handle against an echo server on 127.0.0.1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "buf.h"
#include "cfg.h"
#include "upstream.h"

#define UP "http://127.0.0.1:8080"
#define CYRUS_BASE UP "/jmap/"

static struct cfg *cfg_with(const char *upstream, int follow)
{
	struct cfg *c = malloc(sizeof(*c));
	char err[256];

	assert_non_null(c);
	cfg_defaults(c);
	assert_int_equal(cfg_set(c, "upstream", upstream, err, sizeof(err)), 0);
	c->upstream_follow_advertised = follow;
	return c;
}

static void cfg_gone(struct cfg *c)
{
	cfg_free(c);
	free(c);
}

/* upstream_pin(c, base, adv) equals want (NULL: fails). */
static void pins_to(const struct cfg *c, const char *base, const char *adv,
    const char *want)
{
	char *got = upstream_pin(c, base, adv);

	if (want == NULL && got != NULL) {
		char copy[512];

		snprintf(copy, sizeof(copy), "%s", got);
		free(got);
		fail_msg("\"%s\" pinned to \"%s\", expected failure", adv, copy);
	}
	if (want != NULL && got == NULL)
		fail_msg("\"%s\" did not pin, expected \"%s\"", adv, want);
	if (got) {
		if (strcmp(got, want)) {
			char copy[512];

			snprintf(copy, sizeof(copy), "%s", got);
			free(got);
			fail_msg("\"%s\" pinned to \"%s\", expected \"%s\"", adv,
			    copy, want);
		}
		free(got);
	}
}

static void cyrus_relative_api_url(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE, "/jmap/", UP "/jmap/");
	cfg_gone(c);
}

static void cyrus_relative_download_keeps_template(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE,
	    "/jmap/download/{accountId}/{blobId}/{name}?accept={type}",
	    UP "/jmap/download/{accountId}/{blobId}/{name}?accept={type}");
	pins_to(c, CYRUS_BASE, "/jmap/upload/{accountId}/",
	    UP "/jmap/upload/{accountId}/");
	pins_to(c, CYRUS_BASE,
	    "/jmap/eventsource/?types={types}&closeafter={closeafter}&ping={ping}",
	    UP "/jmap/eventsource/?types={types}&closeafter={closeafter}"
	    "&ping={ping}");
	cfg_gone(c);
}

static void path_relative_url_resolves_against_base(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE, "api/", UP "/jmap/api/");
	pins_to(c, CYRUS_BASE, "../other/", UP "/other/");
	cfg_gone(c);
}

static void stalwart_absolute_url_pinned(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, UP "/.well-known/jmap",
	    "https://mail.example.com/jmap/eventsource/?types={types}"
	    "&closeafter={closeafter}&ping={ping}",
	    UP "/jmap/eventsource/?types={types}&closeafter={closeafter}"
	    "&ping={ping}");
	pins_to(c, UP "/.well-known/jmap", "https://mail.example.com/jmap/",
	    UP "/jmap/");
	pins_to(c, UP "/.well-known/jmap",
	    "https://mail.example.com/jmap/download/{accountId}/{blobId}/"
	    "{name}?accept={type}",
	    UP "/jmap/download/{accountId}/{blobId}/{name}?accept={type}");
	cfg_gone(c);
}

static void scheme_relative_url_pinned(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE, "//evil.example.net/jmap/?x=1", UP "/jmap/?x=1");
	cfg_gone(c);
}

static void other_host_and_port_pinned(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE, "http://127.0.0.1:9999/jmap/", UP "/jmap/");
	pins_to(c, CYRUS_BASE, "http://169.254.169.254/latest/meta-data/",
	    UP "/latest/meta-data/");
	cfg_gone(c);
}

static void follow_advertised_keeps_origin(void **state)
{
	struct cfg *c = cfg_with(UP, 1);

	pins_to(c, UP "/.well-known/jmap",
	    "https://mail.example.com/jmap/eventsource/?types={types}"
	    "&closeafter={closeafter}&ping={ping}",
	    "https://mail.example.com/jmap/eventsource/?types={types}"
	    "&closeafter={closeafter}&ping={ping}");
	pins_to(c, UP "/.well-known/jmap", "https://mail.example.com:8443/jmap/",
	    "https://mail.example.com:8443/jmap/");
	/* Relative ones still resolve against the base. */
	pins_to(c, CYRUS_BASE, "/jmap/upload/{accountId}/",
	    UP "/jmap/upload/{accountId}/");
	cfg_gone(c);
}

static void nondefault_upstream_port_replaces_default(void **state)
{
	struct cfg *c = cfg_with("https://mail.example.com:8443", 0);

	pins_to(c, "https://mail.example.com:8443/.well-known/jmap",
	    "https://mail.example.com/jmap/?a=1",
	    "https://mail.example.com:8443/jmap/?a=1");
	cfg_gone(c);
}

static void default_upstream_port_drops_advertised_port(void **state)
{
	struct cfg *c = cfg_with("https://mail.example.com", 0);

	pins_to(c, "https://mail.example.com/.well-known/jmap",
	    "https://mail.example.com:8443/jmap/",
	    "https://mail.example.com/jmap/");
	/* The scheme is the upstream's too. */
	pins_to(c, "https://mail.example.com/.well-known/jmap",
	    "http://mail.example.com/jmap/", "https://mail.example.com/jmap/");
	cfg_gone(c);
}

static void credentials_and_fragment_dropped(void **state)
{
	struct cfg *pin = cfg_with(UP, 0), *follow = cfg_with(UP, 1);

	pins_to(pin, CYRUS_BASE, "https://user:pass@mail.example.com/jmap/?q=1#frag",
	    UP "/jmap/?q=1");
	pins_to(follow, CYRUS_BASE,
	    "https://user:pass@mail.example.com/jmap/?q=1#frag",
	    "https://mail.example.com/jmap/?q=1");
	pins_to(follow, CYRUS_BASE, "https://user@mail.example.com/jmap/",
	    "https://mail.example.com/jmap/");
	pins_to(pin, CYRUS_BASE, "/jmap/#top", UP "/jmap/");
	cfg_gone(pin);
	cfg_gone(follow);
}

static void garbage_returns_null(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, "not a url", "also not", NULL);
	pins_to(c, "", "", NULL);
	pins_to(c, CYRUS_BASE, "http://", NULL);
	pins_to(c, CYRUS_BASE, "https://[::1/jmap/", NULL);
	pins_to(c, CYRUS_BASE, "http://exa mple.com/", NULL);
	cfg_gone(c);
}

static void join_makes_session_url(void **state)
{
	struct cfg *c = cfg_with(UP, 0);
	char *u;

	assert_non_null(u = upstream_join(c, "/.well-known/jmap"));
	assert_string_equal(u, UP "/.well-known/jmap");
	free(u);
	assert_non_null(u = upstream_join(c, "/jmap/"));
	assert_string_equal(u, UP "/jmap/");
	free(u);
	cfg_gone(c);
}

static void join_with_https_upstream(void **state)
{
	struct cfg *c = cfg_with("https://mail.example.com:8443", 0);
	char *u;

	assert_non_null(u = upstream_join(c, "/.well-known/jmap"));
	assert_string_equal(u, "https://mail.example.com:8443/.well-known/jmap");
	free(u);
	cfg_gone(c);
}

/* The configured upstream is parsed once and kept: pinning for another
 * configuration in between must not leak one's origin into the other. */
static void alternating_upstreams_keep_their_own(void **state)
{
	struct cfg *a = cfg_with("http://127.0.0.1:8080", 0);
	struct cfg *b = cfg_with("https://mail.example.com:8443", 0);
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		pins_to(a, CYRUS_BASE, "https://other.example/jmap/",
		    "http://127.0.0.1:8080/jmap/");
		pins_to(b, "https://mail.example.com:8443/jmap/",
		    "http://127.0.0.1:8080/jmap/",
		    "https://mail.example.com:8443/jmap/");
	}
	cfg_gone(a);
	cfg_gone(b);
}

/* -- calls against an echo server -------------------------------------- */

/* The value of header name in the request head h, or "-". */
static void head_value(const char *h, const char *name, char *out, size_t n)
{
	const char *p = strcasestr(h, name);
	size_t k;

	snprintf(out, n, "-");
	if (p == NULL)
		return;
	p += strlen(name);
	k = strcspn(p, "\r\n");
	snprintf(out, n, "%.*s", (int)k, p);
}

/* Answers one request on fd with what it was: 0, or -1 at the end. */
static int echo_one(int fd)
{
	char req[8192], auth[256], type[256], body[512];
	size_t got = 0, need;
	char *end;
	ssize_t n;
	long len = 0;
	int blen;

	req[0] = '\0';
	while ((end = strstr(req, "\r\n\r\n")) == NULL) {
		if (got + 1 >= sizeof(req) ||
		    (n = read(fd, req + got, sizeof(req) - 1 - got)) <= 0)
			return -1;
		got += (size_t)n;
		req[got] = '\0';
	}
	head_value(req, "\r\nContent-Length: ", body, sizeof(body));
	if (strcmp(body, "-"))
		len = atol(body);
	need = (size_t)(end + 4 - req) + (size_t)len;
	while (got < need && got + 1 < sizeof(req)) {
		if ((n = read(fd, req + got, sizeof(req) - 1 - got)) <= 0)
			return -1;
		got += (size_t)n;
		req[got] = '\0';
	}
	head_value(req, "\r\nAuthorization: ", auth, sizeof(auth));
	head_value(req, "\r\nContent-Type: ", type, sizeof(type));
	blen = snprintf(body, sizeof(body), "%.*s|auth %s|type %s|len %ld",
	    (int)strcspn(req, "\r\n"), req, auth, type, len);
	snprintf(req, sizeof(req), "HTTP/1.1 200 OK\r\nContent-Type: text/plain"
	    "\r\nContent-Length: %d\r\n\r\n%s", blen, body);
	return write(fd, req, strlen(req)) > 0 ? 0 : -1;
}

/* A child answering keep-alive connections one at a time; its port. */
static pid_t echo_server(int *port)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), c;
	pid_t pid;

	assert_true(s >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 8), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	if ((pid = fork()) == 0) {
		alarm(20);  /* bounded, whatever the test does */
		while ((c = accept(s, NULL, NULL)) >= 0) {
			while (echo_one(c) == 0)
				;
			close(c);
		}
		_exit(0);
	}
	close(s);
	assert_true(pid > 0);
	return pid;
}

struct echo_call {
	const char *body;
	size_t off;
	struct buf got;
};

static size_t echo_read(char *p, size_t n, void *ctx)
{
	struct echo_call *e = ctx;
	size_t k = strlen(e->body + e->off);

	if (k > n)
		k = n;
	memcpy(p, e->body + e->off, k);
	e->off += k;
	return k;
}

static int echo_body(const char *p, size_t n, void *ctx)
{
	return buf_append(&((struct echo_call *)ctx)->got, p, n);
}

/* One call through up; asserts the echo equals want. */
static void call_echo(struct upstream *up, int port, const char *method,
    const char *path, const char *user, const char *body, int follow,
    const char *want)
{
	struct echo_call e = { body, 0, { NULL, 0, 0, 1 << 16 } };
	struct up_call c;
	char url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	memset(&c, 0, sizeof(c));
	c.method = method;
	c.url = url;
	c.user = user;
	c.pass = user ? "pw" : NULL;
	if (body) {
		c.content_type = "application/json";
		c.body_len = (long long)strlen(body);
		c.read = echo_read;
	}
	c.on_body = echo_body;
	c.ctx = &e;
	c.follow = follow;
	c.max_body = follow ? 4096 : 0;
	assert_int_equal(upstream_call(up, &c), UP_OK);
	assert_int_equal(c.status, 200);
	assert_string_equal(buf_str(&e.got), want);
	buf_free(&e.got);
}

/* The relay's POSTs reuse the handle's set-up; a call of another shape in
 * between must neither inherit their options nor leave its own behind. */
static void calls_of_other_shapes_keep_their_own_options(void **state)
{
	struct cfg *cf = cfg_with(UP, 0);
	struct upstream *up;
	int port, status;
	pid_t pid;

	(void)state;
	assert_int_equal(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	pid = echo_server(&port);
	assert_non_null(up = upstream_new(cf));
	call_echo(up, port, "POST", "/a", "alice", "{}", 0,
	    "POST /a HTTP/1.1|auth Basic YWxpY2U6cHc=|type application/json|len 2");
	call_echo(up, port, "POST", "/b", "bob", "{\"x\":1}", 0,
	    "POST /b HTTP/1.1|auth Basic Ym9iOnB3|type application/json|len 7");
	call_echo(up, port, "GET", "/c", NULL, NULL, 1,
	    "GET /c HTTP/1.1|auth -|type -|len 0");
	call_echo(up, port, "POST", "/d", "alice", "{}", 0,
	    "POST /d HTTP/1.1|auth Basic YWxpY2U6cHc=|type application/json|len 2");
	call_echo(up, port, "POST", "/e", NULL, "[]", 0,
	    "POST /e HTTP/1.1|auth -|type application/json|len 2");
	call_echo(up, port, "POST", "/f", "bob", "{}", 0,
	    "POST /f HTTP/1.1|auth Basic Ym9iOnB3|type application/json|len 2");
	upstream_free(up);
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	cfg_gone(cf);
	curl_global_cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cyrus_relative_api_url),
		cmocka_unit_test(cyrus_relative_download_keeps_template),
		cmocka_unit_test(path_relative_url_resolves_against_base),
		cmocka_unit_test(stalwart_absolute_url_pinned),
		cmocka_unit_test(scheme_relative_url_pinned),
		cmocka_unit_test(other_host_and_port_pinned),
		cmocka_unit_test(follow_advertised_keeps_origin),
		cmocka_unit_test(nondefault_upstream_port_replaces_default),
		cmocka_unit_test(default_upstream_port_drops_advertised_port),
		cmocka_unit_test(credentials_and_fragment_dropped),
		cmocka_unit_test(garbage_returns_null),
		cmocka_unit_test(join_makes_session_url),
		cmocka_unit_test(join_with_https_upstream),
		cmocka_unit_test(alternating_upstreams_keep_their_own),
		cmocka_unit_test(calls_of_other_shapes_keep_their_own_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
