#include "dav.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fault.h"
#include "sess.h"
#include "upstream.h"

/* A header value passed on (an ETag list, a vCard Accept) is at most
 * this long: CardDAV's are a few dozen bytes. */
#define DAV_VALUE_MAX 200

struct dav {
	struct req *r;
	struct fault fault;
	int drop_body;     /* a PUT's or DELETE's answer: its status only */
};

static int hex(char c)
{
	return isxdigit((unsigned char)c);
}

/* A %XX that stands for '.', '/', '\' or NUL could step out of the tree
 * once the server decodes it, and a '%' (%25) once something on the way
 * decodes twice. */
static int escape_ok(const char *p)
{
	if (!hex(p[1]) || !hex(p[2]))
		return 0;
	return strncasecmp(p, "%2e", 3) && strncasecmp(p, "%2f", 3) &&
	    strncasecmp(p, "%5c", 3) && strncmp(p, "%00", 3) && strncmp(p, "%25", 3);
}

/* RFC 3986 pchar and '/', nothing else. */
static int char_ok(char c)
{
	return isalnum((unsigned char)c) || strchr("-._~!$&'()*+,;=:@/", c) != NULL;
}

int dav_path_ok(const char *rest)
{
	const char *p, *seg = rest;
	size_t n;

	for (p = rest;; p++) {
		if (*p == '/' || *p == '\0') {
			n = (size_t)(p - seg);
			if ((n == 0 && *p == '/') || (n == 1 && seg[0] == '.') ||
			    (n == 2 && seg[0] == '.' && seg[1] == '.'))
				return -1;
			if (*p == '\0')
				return 0;
			seg = p + 1;
		} else if (*p == '%') {
			if (!escape_ok(p))
				return -1;
			p += 2;
		} else if (!char_ok(*p))
			return -1;
	}
}

int dav_type_ok(const char *type)
{
	static const char *const ok[] = { "application/xml", "text/xml", "text/vcard" };
	size_t i, n = strcspn(type, ";");

	while (n && isspace((unsigned char)type[n - 1]))
		n--;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (n == strlen(ok[i]) && !strncasecmp(type, ok[i], n))
			return 1;
	return 0;
}

static int value_ok(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || n > DAV_VALUE_MAX)
		return 0;
	for (; *v; v++)
		if (*v < 0x20 || *v > 0x7e)
			return 0;
	return 1;
}

/* The request headers CardDAV needs, as "Name: value" in lines[], listed
 * in list[] (NULL-terminated): 0, or -1 with the 400 sent. A condition
 * that cannot be passed on is refused, never dropped: a PUT without its
 * If-Match would overwrite what it meant to check. */
static int dav_headers(struct req *r, char lines[][DAV_VALUE_MAX + 32],
    const char **list)
{
	static const struct { const char *param, *name; } pass[] = {
		{ "HTTP_IF_MATCH", "If-Match" },
		{ "HTTP_IF_NONE_MATCH", "If-None-Match" },
		{ "HTTP_ACCEPT", "Accept" },
	};
	const char *depth = req_param(r, "HTTP_DEPTH"), *v;
	size_t i;
	int k = 0;

	if (depth && strcmp(depth, "0") && strcmp(depth, "1")) {
		req_error(r, ERR_BAD_REQUEST, "Depth is 0 or 1.");
		return -1;
	}
	if (depth) {
		snprintf(lines[k], DAV_VALUE_MAX + 32, "Depth: %s", depth);
		list[k] = lines[k];
		k++;
	}
	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		if ((v = req_param(r, pass[i].param)) == NULL)
			continue;
		/* Only a vCard version is asked for; the rest is libcurl's. */
		if (!strcmp(pass[i].name, "Accept")) {
			if (!value_ok(v) || strncasecmp(v, "text/vcard", 10))
				continue;
		} else if (!value_ok(v)) {
			req_error(r, ERR_BAD_REQUEST, "A condition header is too long "
			    "or not plain text.");
			return -1;
		}
		snprintf(lines[k], DAV_VALUE_MAX + 32, "%s: %s", pass[i].name, v);
		list[k] = lines[k];
		k++;
	}
	list[k] = NULL;
	return 0;
}

static size_t dav_read(char *p, size_t n, void *ctx)
{
	struct dav *x = ctx;

	return fault_read_body(x->r, &x->fault, p, n, x->r->app->cfg.max_request,
	    NULL);
}

/* What of the answer reaches the browser: a 2xx of XML or vCard (or
 * none), with its ETag. */
static int dav_head(const struct up_head *h, void *ctx)
{
	struct dav *x = ctx;
	struct req *r = x->r;
	int typed = h->content_type[0] && dav_type_ok(h->content_type);
	int writes = !strcmp(r->method, "PUT") || !strcmp(r->method, "DELETE");

	/* The JMAP relay judges the session's credentials: a DAV tree behind
	 * other authentication must not sign the user out at every load. */
	x->fault.status = h->status == 401 ? 403 : h->status;
	if (h->status >= 400 && h->status < 500 && req_status_text((int)h->status)) {
		fault_set(&x->fault, ERR_DAV_REFUSED, NULL);
		return -1;
	}
	if (h->status < 200 || h->status >= 300 || h->content_encoding[0] ||
	    req_status_text((int)h->status) == NULL) {
		fault_set(&x->fault, ERR_UPSTREAM, NULL);
		return -1;
	}
	/* A body goes on only as XML or vCard, and a GET's only as a vCard
	 * (the tree may hold other files: none is served on our origin); a
	 * write's answer is its status. */
	x->drop_body = writes && !typed;
	if (!x->drop_body && h->status != 204 && h->content_length != 0 &&
	    (!typed || (!strcmp(r->method, "GET") && strncasecmp(h->content_type, "text/vcard", 10)))) {
		fault_set(&x->fault, ERR_UPSTREAM, NULL);
		return -1;
	}
	sess_accepted(r->sess, r->now);
	req_status(r, (int)h->status);
	if (typed && !x->drop_body)
		req_header(r, "Content-Type", h->content_type);
	if (h->etag[0] && value_ok(h->etag))
		req_header(r, "ETag", h->etag);
	return 0;
}

static int dav_body(const char *p, size_t n, void *ctx)
{
	struct dav *x = ctx;

	return x->drop_body ? 0 : req_write(x->r, p, n);
}

/* A body comes with the request: a length, or chunks. */
static int has_body(const struct req *r)
{
	return r->content_length > 0 || req_param(r, "HTTP_TRANSFER_ENCODING") != NULL;
}

/* The request's own checks: 0, or -1 with the error sent. */
static int dav_request_ok(struct req *r, const char *rest)
{
	const char *type = req_param(r, "CONTENT_TYPE");

	if (!cfg_carddav_on(&r->app->cfg)) {
		req_error(r, ERR_NOT_FOUND, "No address book is set up here.");
		return -1;
	}
	if (dav_path_ok(rest) == -1) {
		req_error(r, ERR_BAD_REQUEST, "Not a path of the address book.");
		return -1;
	}
	if (has_body(r) && (!strcmp(r->method, "GET") || !strcmp(r->method, "DELETE"))) {
		req_error(r, ERR_BAD_REQUEST, "A GET or DELETE has no body.");
		return -1;
	}
	if (has_body(r) && (type == NULL || !dav_type_ok(type))) {
		req_error(r, ERR_MEDIA_TYPE,
		    "Address book requests are XML or vCard.");
		return -1;
	}
	if (r->content_length > r->app->cfg.max_request) {
		req_error(r, ERR_TOO_LARGE, NULL);
		return -1;
	}
	return 0;
}

void dav_handle(struct req *r)
{
	char lines[4][DAV_VALUE_MAX + 32], path[REQ_PATH_MAX + 256], *url;
	const char *list[5], *rest = r->path + strlen(DAV_PREFIX);
	struct up_call c;
	struct dav x;
	int res, body = has_body(r);

	if (dav_request_ok(r, rest) == -1 || dav_headers(r, lines, list) == -1)
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s%s", r->app->cfg.carddav_path,
	    rest) >= sizeof(path)) {
		req_error(r, ERR_URI_TOO_LONG, NULL);
		return;
	}
	if ((url = upstream_join(&r->app->cfg, path)) == NULL) {
		req_error(r, ERR_INTERNAL, "Out of memory.");
		return;
	}
	memset(&x, 0, sizeof(x));
	x.r = r;
	memset(&c, 0, sizeof(c));
	c.method = r->method;
	c.url = url;
	c.user = r->sess->user;
	c.pass = r->sess->pass;
	c.content_type = body ? req_param(r, "CONTENT_TYPE") : NULL;
	c.body_len = r->content_length;
	c.read = body ? dav_read : NULL;
	c.headers = list;
	c.on_head = dav_head;
	c.on_body = dav_body;
	c.ctx = &x;
	res = upstream_call(r->app->up, &c);
	fault_finish(r, &x.fault, res);
	free(url);
}
