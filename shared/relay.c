#include "relay.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "fault.h"
#include "gz.h"
#include "js.h"
#include "sess.h"
#include "upstream.h"

/* A body up to this size is read whole before the call, so that libcurl
 * sends it with the request head in one write; a larger one streams. */
#define RELAY_WHOLE_MAX (64 * 1024)

#define TOO_LARGE "The JMAP request is too large."
#define NOT_JSON "The JMAP request is not a JSON object."

struct relay {
	struct req *r;
	struct js_check chk;
	struct gz gz;
	struct fault fault;
	int client_gzip;
};

static size_t relay_read(char *p, size_t n, void *ctx)
{
	struct relay *x = ctx;
	struct req *r = x->r;
	size_t got = fault_read_body(r, &x->fault, p, n, r->app->cfg.max_request,
	    TOO_LARGE);

	if (got == (size_t)-1)
		return got;
	if (js_check_feed(&x->chk, p, got) == -1) {
		fault_set(&x->fault, ERR_BAD_REQUEST, NOT_JSON);
		return (size_t)-1;
	}
	/* libcurl stops asking once the declared length is sent, so the last
	 * byte, not a read of 0, is where the body must be complete. */
	if ((got == 0 || r->body_read == r->content_length) &&
	    js_check_end(&x->chk) == -1) {
		fault_set(&x->fault, ERR_BAD_REQUEST, NOT_JSON);
		return (size_t)-1;
	}
	return got;
}

/* Reads and checks a body of known, small length into b: 0, or -1 with
 * x->fault set. */
static int read_whole(struct relay *x, struct buf *b)
{
	size_t n = (size_t)x->r->content_length, off = 0, got;
	char none, *p = &none;

	if (n && (p = buf_extend(b, n)) == NULL) {
		fault_set(&x->fault, ERR_TOO_LARGE, TOO_LARGE);
		return -1;
	}
	do {
		if ((got = relay_read(p + off, n - off, x)) == (size_t)-1)
			return -1;
		off += got;
	} while (off < n && got > 0);
	return 0;
}

static int is_json_type(const char *t)
{
	return !strncmp(t, "application/json", 16) ||
	    !strncmp(t, "application/problem+json", 24);
}

/* Decides what of the upstream answer reaches the browser. */
static int relay_head(const struct up_head *h, void *ctx)
{
	struct relay *x = ctx;
	struct req *r = x->r;

	x->fault.status = h->status;
	if (h->status == 401) {
		fault_set(&x->fault, ERR_SESSION_REFUSED, NULL);
		return -1;
	}
	if (h->status >= 200 && h->status < 300)
		sess_accepted(r->sess, r->now);
	if (h->status >= 500 || h->status < 200 || !is_json_type(h->content_type) ||
	    req_status_text((int)h->status) == NULL) {
		fault_set(&x->fault, ERR_UPSTREAM, NULL);
		return -1;
	}
	req_status(r, (int)h->status);
	req_header(r, "Content-Type", h->content_type);
	req_header(r, "Vary", "Accept-Encoding");
	if (h->retry_after[0] && strspn(h->retry_after, "0123456789") ==
	    strlen(h->retry_after))
		req_header(r, "Retry-After", h->retry_after);
	if (!strcmp(h->content_encoding, "gzip") && x->client_gzip)
		req_header(r, "Content-Encoding", "gzip");
	else if (h->content_encoding[0]) {
		/* an encoding we did not ask for */
		fault_set(&x->fault, ERR_UPSTREAM, NULL);
		return -1;
	} else if (x->client_gzip) {
		if (gz_start(&x->gz) == -1)
			return -1;
		req_header(r, "Content-Encoding", "gzip");
	}
	return 0;
}

static int relay_body(const char *p, size_t n, void *ctx)
{
	struct relay *x = ctx;

	if (x->gz.on)
		return gz_write(&x->gz, x->r, p, n, 0);
	return req_write(x->r, p, n);
}

static void relay_finish(struct relay *x, int res)
{
	if (x->fault.err != ERR_NONE || res != UP_OK)
		fault_finish(x->r, &x->fault, res);
	else if (x->gz.on)
		gz_write(&x->gz, x->r, "", 0, 1);
}

void relay_handle(struct req *r)
{
	struct relay x;
	struct up_call c;
	struct buf body;
	char type[64];
	int res = UP_ABORTED;

	if (req_media_type(r, type, sizeof(type)) == -1 ||
	    strcmp(type, "application/json")) {
		req_error(r, ERR_MEDIA_TYPE,
		    "JMAP requests are application/json.");
		return;
	}
	if (r->content_length > r->app->cfg.max_request) {
		req_error(r, ERR_TOO_LARGE, TOO_LARGE);
		return;
	}
	memset(&x, 0, sizeof(x));
	x.r = r;
	x.client_gzip = r->app->cfg.compress && req_accepts_gzip(r);
	if (js_check_init(&x.chk) == -1) {
		req_error(r, ERR_INTERNAL, "Out of memory.");
		return;
	}
	memset(&c, 0, sizeof(c));
	c.method = "POST";
	c.url = r->sess->api_url;
	c.user = r->sess->user;
	c.pass = r->sess->pass;
	c.content_type = "application/json";
	c.body_len = r->content_length;
	c.read = relay_read;
	c.on_head = relay_head;
	c.on_body = relay_body;
	c.ctx = &x;
	c.pass_gzip = x.client_gzip;
	buf_init(&body, RELAY_WHOLE_MAX);
	if (r->content_length >= 0 && r->content_length <= RELAY_WHOLE_MAX) {
		c.read = NULL;
		if (read_whole(&x, &body) == 0) {
			c.body = body.data ? body.data : "";
			res = upstream_call(r->app->up, &c);
		}
	} else
		res = upstream_call(r->app->up, &c);
	relay_finish(&x, res);
	buf_free(&body);
	gz_end(&x.gz);
	js_check_free(&x.chk);
}
