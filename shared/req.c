#include "req.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "js.h"
#include "log.h"
#include "sess.h"

#define REQ_HEAD_MAX (16 * 1024)
/* Body bytes that go out with the head in one write. */
#define REQ_FIRST_MAX (16 * 1024)

/* Sent on every API response: no sniffing, no framing, no referrer, no
 * caching, and a CSP under which a JSON body can do nothing. */
static const char req_security_headers[] =
    "X-Content-Type-Options: nosniff\r\n"
    "X-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer\r\n"
    "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'\r\n"
    "Cross-Origin-Resource-Policy: same-origin\r\n"
    "Cache-Control: no-store\r\n";

/* Every status postern may send: its own and those it passes on from the
 * JMAP server (the relay, an upload), which are refused as a bad upstream
 * when they are not here. The HTTP status registry's codes, with RFC
 * 9110's phrases (RFC 4918, 5842, 3229, 8470, 6585, 7725, 2774, 8297 for
 * the others); 418 and 306 are unused, 1xx are never sent. */
static const struct {
	int code;
	const char *text;
} statuses[] = {
	{ 200, "OK" }, { 201, "Created" }, { 202, "Accepted" },
	{ 203, "Non-Authoritative Information" }, { 204, "No Content" },
	{ 205, "Reset Content" }, { 206, "Partial Content" },
	{ 207, "Multi-Status" }, { 208, "Already Reported" }, { 226, "IM Used" },
	{ 300, "Multiple Choices" }, { 301, "Moved Permanently" },
	{ 302, "Found" }, { 303, "See Other" }, { 304, "Not Modified" },
	{ 305, "Use Proxy" }, { 307, "Temporary Redirect" },
	{ 308, "Permanent Redirect" },
	{ 400, "Bad Request" }, { 401, "Unauthorized" },
	{ 402, "Payment Required" }, { 403, "Forbidden" }, { 404, "Not Found" },
	{ 405, "Method Not Allowed" }, { 406, "Not Acceptable" },
	{ 407, "Proxy Authentication Required" }, { 408, "Request Timeout" },
	{ 409, "Conflict" }, { 410, "Gone" }, { 411, "Length Required" },
	{ 412, "Precondition Failed" }, { 413, "Content Too Large" },
	{ 414, "URI Too Long" }, { 415, "Unsupported Media Type" },
	{ 416, "Range Not Satisfiable" }, { 417, "Expectation Failed" },
	{ 421, "Misdirected Request" }, { 422, "Unprocessable Content" },
	{ 423, "Locked" }, { 424, "Failed Dependency" }, { 425, "Too Early" },
	{ 426, "Upgrade Required" }, { 428, "Precondition Required" },
	{ 429, "Too Many Requests" },
	{ 431, "Request Header Fields Too Large" },
	{ 451, "Unavailable For Legal Reasons" },
	{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
	{ 502, "Bad Gateway" }, { 503, "Service Unavailable" },
	{ 504, "Gateway Timeout" }, { 505, "HTTP Version Not Supported" },
	{ 506, "Variant Also Negotiates" }, { 507, "Insufficient Storage" },
	{ 508, "Loop Detected" }, { 510, "Not Extended" },
	{ 511, "Network Authentication Required" },
};

const char *req_status_text(int status)
{
	size_t i;

	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (statuses[i].code == status)
			return statuses[i].text;
	return NULL;
}

const char *req_param(const struct req *r, const char *name)
{
	return r->io.param(r->io.ctx, name);
}

static int ip_trusted(const struct cfg *c, const char *ip)
{
	int i;

	for (i = 0; i < c->n_trusted_proxies; i++)
		if (!strcmp(c->trusted_proxies[i], ip))
			return 1;
	return 0;
}

/* Copies the hop [p, p+n) trimmed into out: 0, or -1 when it is not an
 * address. */
static int xff_hop(const char *p, size_t n, char *out, size_t outlen)
{
	while (n && isspace((unsigned char)*p))
		p++, n--;
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	if (n == 0 || n >= outlen)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return strspn(out, "0123456789abcdefABCDEF.:") == n ? 0 : -1;
}

/* Walks X-Forwarded-For from the right past trusted proxies: the first
 * address not ours is the client. Without a trusted peer it is ignored. */
static void client_ip(struct req *r)
{
	const char *remote = req_param(r, "REMOTE_ADDR");
	const char *xff = req_param(r, "HTTP_X_FORWARDED_FOR");
	const char *end, *seg;
	char hop[REQ_IP_MAX];

	snprintf(r->ip, sizeof(r->ip), "%s", remote ? remote : "");
	if (!xff || !ip_trusted(&r->app->cfg, r->ip))
		return;
	for (end = xff + strlen(xff); end > xff; end = seg > xff ? seg - 1 : xff) {
		for (seg = end; seg > xff && seg[-1] != ','; seg--)
			;
		if (xff_hop(seg, (size_t)(end - seg), hop, sizeof(hop)) == -1)
			return;
		memcpy(r->ip, hop, sizeof(hop));
		if (!ip_trusted(&r->app->cfg, hop))
			return;
	}
}

static void detect_https(struct req *r)
{
	const char *v = req_param(r, "HTTPS");
	const char *proto;

	r->https = (v && !strcasecmp(v, "on")) ||
	    ((v = req_param(r, "REQUEST_SCHEME")) && !strcasecmp(v, "https"));
	proto = req_param(r, "HTTP_X_FORWARDED_PROTO");
	if (!r->https && proto && !strcasecmp(proto, "https")) {
		v = req_param(r, "REMOTE_ADDR");
		r->https = v && ip_trusted(&r->app->cfg, v);
	}
}

static int parse_length(struct req *r)
{
	const char *v = req_param(r, "CONTENT_LENGTH");
	char *end;
	long long n;

	r->content_length = -1;
	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end != '\0' || n < 0 || !isdigit((unsigned char)*v))
		return -1;
	r->content_length = n;
	return 0;
}

static int parse_target(struct req *r)
{
	const char *uri = req_param(r, "REQUEST_URI");
	const char *q;
	size_t n;

	if (uri == NULL || *uri != '/')
		return -1;
	q = strchr(uri, '?');
	n = q ? (size_t)(q - uri) : strlen(uri);
	if (n >= sizeof(r->path) || strpbrk(uri, "\r\n") != NULL)
		return -1;
	memcpy(r->path, uri, n);
	r->path[n] = '\0';
	r->query = q ? q + 1 : "";
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The milliseconds the body may still take to reach body_read + 1
 * bytes at the minimum rate; 0 when the deadline has passed. */
static long body_time_left(const struct req *r)
{
	long long allowed = REQ_BODY_GRACE * 1000LL +
	    (r->body_read * 1000) / REQ_BODY_MIN_RATE;
	long long left = r->body_started_ms + allowed - now_ms();

	if (left <= 0)
		return 0;
	return left > 3600000 ? 3600000 : (long)left;
}

int req_init(struct req *r, struct app *a, const struct req_io *io)
{
	memset(r, 0, sizeof(*r));
	r->app = a;
	r->io = *io;
	r->status = 200;
	r->now = time(NULL);
	buf_init(&r->head, REQ_HEAD_MAX);
	buf_puts(&r->head, req_security_headers);
	r->method = req_param(r, "REQUEST_METHOD");
	if (r->method == NULL)
		r->method = "";
	client_ip(r);
	detect_https(r);
	if (parse_target(r) == -1) {
		req_error(r, ERR_BAD_REQUEST, "The request target is not valid.");
		return -1;
	}
	if (parse_length(r) == -1) {
		req_error(r, ERR_BAD_REQUEST, "Content-Length is not valid.");
		return -1;
	}
	return 0;
}

void req_deadlines(struct req *r, req_timeouts_fn fn)
{
	r->timeouts = fn;
	if (fn(r->io.ctx, REQ_BODY_GRACE * 1000L, REQ_SEND_IDLE * 1000L) == -1)
		log_warn("%s %s: cannot set the transport's deadlines", r->method,
		    r->path);
}

void req_free(struct req *r)
{
	sess_free(r->sess);
	r->sess = NULL;
	buf_free(&r->head);
}

int req_cookie(const struct req *r, const char *name, char *out, size_t n)
{
	const char *c = req_param(r, "HTTP_COOKIE");
	size_t len = strlen(name), vlen;

	while (c && *c) {
		while (*c == ' ' || *c == ';')
			c++;
		if (!strncmp(c, name, len) && c[len] == '=') {
			c += len + 1;
			vlen = strcspn(c, ";");
			if (vlen >= n)
				return -1;
			memcpy(out, c, vlen);
			out[vlen] = '\0';
			return 0;
		}
		c = strchr(c, ';');
	}
	return -1;
}

int req_media_type(const struct req *r, char *out, size_t n)
{
	const char *v = req_param(r, "CONTENT_TYPE");
	size_t i;

	if (v == NULL || n == 0)
		return -1;
	for (i = 0; v[i] && v[i] != ';' && !isspace((unsigned char)v[i]); i++) {
		if (i + 1 >= n)
			return -1;
		out[i] = (char)tolower((unsigned char)v[i]);
	}
	out[i] = '\0';
	return 0;
}

/* Whether a "gzip" coding at p carries a q-value of zero. */
static int q_is_zero(const char *p)
{
	char *end;

	p += strspn(p, " \t");
	if (*p != ';')
		return 0;
	p += 1 + strspn(p + 1, " \t");
	if ((*p != 'q' && *p != 'Q') || p[1] != '=')
		return 0;
	return strtod(p + 2, &end) == 0.0 && end != p + 2;
}

int req_accepts_gzip(const struct req *r)
{
	const char *v = req_param(r, "HTTP_ACCEPT_ENCODING");
	const char *p;

	for (p = v; p && (p = strcasestr(p, "gzip")) != NULL; p += 4) {
		if (p > v && !strchr(" ,\t", p[-1]))
			continue;   /* part of another token, e.g. "x-gzip" */
		return !q_is_zero(p + 4);
	}
	return 0;
}

long req_read(struct req *r, char *p, size_t n)
{
	int got;

	if (r->content_length >= 0) {
		if (r->body_read >= r->content_length)
			return 0;
		if ((long long)n > r->content_length - r->body_read)
			n = (size_t)(r->content_length - r->body_read);
	}
	if (n > 65536)
		n = 65536;
	if (r->body_started_ms == 0)
		r->body_started_ms = now_ms();
	if (r->timeouts) {
		long left = body_time_left(r);

		if (left == 0 || r->timeouts(r->io.ctx, left, REQ_SEND_IDLE * 1000L) == -1) {
			log_warn("%s %s: the body came too slowly (%lld bytes in time)",
			    r->method, r->path, r->body_read);
			return -1;
		}
	}
	got = r->io.read(r->io.ctx, p, (int)n);
	if (got < 0)
		return -1;
	r->body_read += got;
	/* A body shorter than its declared length is an error, not an end. */
	if (got == 0 && r->content_length >= 0 && r->body_read < r->content_length)
		return -1;
	return got;
}

long req_read_max(struct req *r, char *p, size_t n, long long max)
{
	long got = req_read(r, p, n);

	if (got >= 0 && r->body_read > max)
		return REQ_TOO_LARGE;
	return got;
}

int req_read_all(struct req *r, struct buf *b)
{
	char chunk[16384];
	long n;

	if (r->content_length > (long long)b->max)
		return -1;
	while ((n = req_read(r, chunk, sizeof(chunk))) > 0)
		if (buf_append(b, chunk, (size_t)n) == -1)
			return -1;
	return n < 0 ? -2 : 0;
}

json_object *req_json_body(struct req *r, size_t max, const char *what,
    int wipe)
{
	char type[64], msg[160];
	struct buf b;
	json_object *o = NULL;
	int rc;

	if (req_media_type(r, type, sizeof(type)) == -1 ||
	    strcmp(type, "application/json")) {
		snprintf(msg, sizeof(msg), "%s must be sent as application/json.",
		    what);
		req_error(r, ERR_MEDIA_TYPE, msg);
		return NULL;
	}
	buf_init(&b, max);
	if ((rc = req_read_all(r, &b)) == 0)
		o = js_parse(buf_str(&b), b.len);
	if (wipe)
		buf_wipe_free(&b);
	else
		buf_free(&b);
	if (rc == -1)
		snprintf(msg, sizeof(msg), "%s must be at most %zu bytes.", what, max);
	else if (rc == -2)
		snprintf(msg, sizeof(msg), "%s could not be read.", what);
	else if (o == NULL)
		snprintf(msg, sizeof(msg), "%s must be one JSON object.", what);
	if (o == NULL)
		req_error(r, rc == -1 ? ERR_TOO_LARGE : ERR_BAD_REQUEST, msg);
	return o;
}

void req_status(struct req *r, int status)
{
	r->status = status;
}

static int header_safe(const char *s)
{
	for (; *s; s++)
		if (*s == '\r' || *s == '\n')
			return 0;
	return 1;
}

int req_header(struct req *r, const char *name, const char *value)
{
	size_t mark = r->head.len;

	if (r->head_sent || !header_safe(name) || !header_safe(value))
		return -1;
	/* Appends, not printf: a relay answer sets three or four headers. */
	if (buf_puts(&r->head, name) | buf_append(&r->head, ": ", 2) |
	    buf_puts(&r->head, value) | buf_append(&r->head, "\r\n", 2)) {
		r->head.len = mark;
		r->head.data[mark] = '\0';
		return -1;
	}
	return 0;
}

/* Sends the status line, the headers and the first body bytes (up to a
 * few KiB) in one write: over FastCGI that is one record and one send.
 * A response whose head came in several pieces cost lighttpd over 4 KiB
 * more per held event stream. */
static int send_head(struct req *r, const void *body, size_t n)
{
	const char *text;
	struct buf out;
	int rc;

	if ((text = req_status_text(r->status)) == NULL) {
		/* A bug: the unit test walks every status the code sends. */
		log_err("%s %s: status %d is not in the table of statuses",
		    r->method, r->path, r->status);
		text = "";
	}
	r->head_sent = 1;
	buf_init(&out, REQ_HEAD_MAX + 64 + REQ_FIRST_MAX);
	rc = buf_printf(&out, "Status: %d %s\r\n", r->status, text) |
	    buf_append(&out, r->head.data, r->head.len) |
	    buf_append(&out, "\r\n", 2) | buf_append(&out, body, n);
	if (rc == 0 && r->io.write(r->io.ctx, out.data, (int)out.len) == -1)
		rc = -1;
	buf_free(&out);
	buf_free(&r->head);
	return rc == 0 ? 0 : (r->client_gone = -1);
}

int req_write(struct req *r, const void *p, size_t n)
{
	const char *s = p;
	int k;

	if (r->client_gone)
		return -1;
	if (!r->head_sent) {
		k = n <= REQ_FIRST_MAX ? (int)n : 0;
		if (send_head(r, s, (size_t)k) == -1)
			return -1;
		s += k;
		n -= (size_t)k;
	}
	while (n) {
		k = n > 65536 ? 65536 : (int)n;
		if (r->io.write(r->io.ctx, s, k) == -1)
			return r->client_gone = -1;
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

int req_end(struct req *r)
{
	if (r->client_gone)
		return -1;
	if (!r->head_sent && send_head(r, NULL, 0) == -1)
		return -1;
	return r->io.flush ? r->io.flush(r->io.ctx) : 0;
}

void req_json(struct req *r, int status, json_object *o)
{
	const char *s;
	size_t n;

	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
	req_status(r, status);
	req_header(r, "Content-Type", "application/json; charset=utf-8");
	req_write(r, s, n);
	req_end(r);
}

void req_error_status(struct req *r, enum err e, int status, const char *msg)
{
	const struct err_entry *t = err_entry(e);
	json_object *o;

	if (r->head_sent) {
		/* Too late for a status: the client sees a cut body. */
		log_warn("%s %s: %s after the response began", r->method,
		    r->path, t->code);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string(t->code));
	json_object_object_add(o, "message",
	    json_object_new_string(msg ? msg : t->message));
	req_json(r, status, o);
	json_object_put(o);
}

void req_error(struct req *r, enum err e, const char *msg)
{
	req_error_status(r, e, err_entry(e)->status, msg);
}

void req_rate_limited(struct req *r, long retry_after)
{
	char v[32];

	snprintf(v, sizeof(v), "%ld", retry_after > 0 ? retry_after : 1);
	req_header(r, "Retry-After", v);
	req_error(r, ERR_RATE_LIMITED, NULL);
}
