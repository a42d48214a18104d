#include "route.h"

#include <string.h>

#include "callback.h"
#include "conn.h"
#include "log.h"
#include "pushd.h"
#include "req.h"
#include "serve.h"
#include "tab.h"
#include "visible.h"
#include "wpsub.h"

#define TOKEN_MAX 128

static const struct route pushd_routes[] = {
	{ "GET", "/api/events", ROUTE_SESSION | ROUTE_UPSTREAM, tab_handle },
	/* Marks the session's streams in view; ROUTE_UPSTREAM: it calls no
	 * one, and a blocking session check would stall every stream. */
	{ "POST", "/api/events", ROUTE_SESSION | ROUTE_UPSTREAM, visible_handle },
	/* A device's Web Push subscription; ROUTE_UPSTREAM: as above. */
	{ "GET", "/api/webpush", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_UPSTREAM,
	    wpsub_handle },
	{ "PUT", "/api/webpush", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_UPSTREAM,
	    wpsub_handle },
	{ "DELETE", "/api/webpush", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_UPSTREAM,
	    wpsub_handle },
	{ NULL, NULL, 0, NULL }
};

static int token_valid(const char *t)
{
	size_t n = strlen(t);

	return n > 0 && n <= TOKEN_MAX && strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_") == n;
}

/* POST /api/push/<token>: the JMAP server's callback (RFC 8620 7.2). It
 * carries no cookie and no CSRF header: the long random token in the URL
 * is the only credential, so an unknown one learns nothing but 404. Then
 * the body must be JSON (415), within its cap (413) and well-formed (400);
 * a PushVerification is taken only for a subscription that awaits one, a
 * StateChange only for a verified one (403 otherwise). */
static void push_handle(struct req *r)
{
	struct preq *q = conn_preq(r);
	const char *token = r->path + strlen("/api/push/");
	int rc;

	if (strcmp(r->method, "POST")) {
		req_header(r, "Allow", "POST");
		req_error(r, ERR_METHOD, NULL);
		return;
	}
	if (!token_valid(token)) {
		req_error(r, ERR_NOT_FOUND, "No such push subscription.");
		return;
	}
	if (q->head->too_large) {
		/* Known or not, the body is not read: the token decides only
		 * what happens to a body that fits. */
		rc = callback_token_known(q->c->pd, token);
		if (rc <= 0)
			req_error(r, rc ? ERR_INTERNAL : ERR_NOT_FOUND,
			    rc ? "The push store failed." : "No such push subscription.");
		else
			req_error(r, ERR_TOO_LARGE, "The push body is too large.");
		return;
	}
	rc = callback_handle(q->c->pd, token, conn_param(q, "CONTENT_TYPE"),
	    q->head->body.data ? q->head->body.data : "", q->head->body.len);
	switch (rc) {
	case 202:
		req_status(r, 202);
		req_end(r);
		break;
	case 400:
		req_error(r, ERR_BAD_REQUEST, "The push body is not a push object.");
		break;
	case 403:
		req_error(r, ERR_FORBIDDEN, "This subscription does not take that.");
		break;
	case 404:
		req_error(r, ERR_NOT_FOUND, "No such push subscription.");
		break;
	case 415:
		req_error(r, ERR_MEDIA_TYPE, "The push body must be JSON.");
		break;
	default:
		req_error(r, ERR_INTERNAL, "The push store failed.");
	}
}

void route_request(struct preq *q)
{
	struct pushd *pd = q->c->pd;
	struct conn_req_ctx x;
	struct req_io io;
	struct req r;

	conn_req_io(q, &x, &io);
	if (req_init(&r, &pd->app, &io) == 0) {
		if (!strncmp(r.path, "/api/push/", 10))
			push_handle(&r);
		else
			serve_dispatch(&r, pushd_routes);
	}
	req_end(&r);
	req_free(&r);
	if (q->stream.owner)
		conn_head_done(q);
	else
		conn_finish(q);
}
