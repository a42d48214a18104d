/* serve: the front of every responder. Runs the FastCGI accept loop (or
 * one CGI request when started as CGI), turns each request into a struct
 * req and dispatches it through a route table. Method, cross-site, CSRF,
 * session and API budget checks happen here once, never in a handler. */
#ifndef POSTERN_SERVE_H
#define POSTERN_SERVE_H

#include "req.h"

enum route_flags {
	ROUTE_SESSION = 1,  /* needs a valid session cookie (r->sess set) */
	ROUTE_BUDGET = 2,   /* counts against the per-session API budget */
	ROUTE_PREFIX = 4,   /* path is a prefix ("/api/blob/") */
	/* The handler calls the mail server with the session's credentials
	 * itself (the relay, blobs; pushd, without blocking): its answer is
	 * the session's check. Every other ROUTE_SESSION route asks the mail
	 * server first when the session's last acceptance is older than
	 * session_recheck. */
	ROUTE_UPSTREAM = 8
};

struct route {
	const char *method;
	const char *path;
	int flags;
	void (*handler)(struct req *r);
};

/* The header a browser must send on every non-GET API call. A cross-site
 * form cannot set it, and a cross-site script cannot without CORS. */
#define SERVE_CSRF_PARAM "HTTP_X_POSTERN_CSRF"

/* Runs a responder: reads the configuration, opens the state, and serves
 * until the web server stops it. Returns the process exit status. */
int serve_main(int argc, char **argv, const char *prog,
    const struct route *routes);
/* Answers one request that req_init accepted. */
void serve_dispatch(struct req *r, const struct route *routes);

/* The steps of serve_dispatch, for a caller that runs the database's
 * part elsewhere (pushd, off its loop). */
/* The route of r, once the request may go on (same site, a route that
 * takes its method, the store open, the CSRF header on a change), or
 * NULL with the refusal answered. */
const struct route *serve_admit(struct req *r, const struct route *routes);
/* A session lookup that did not find one (rc 1) or failed (-1): 401 with
 * the cookie cleared, or 503. */
void serve_no_session(struct req *r, int rc);
/* Counts a request against its session's API budget: 0 within it, 1
 * over it (*retry: seconds), -1 the store failed. */
int serve_budget(struct app *a, const char *sess_id, time_t now, long *retry);
/* Answers what serve_budget refused (1: 429 with Retry-After; -1: 503). */
void serve_over_budget(struct req *r, int rc, long retry);
/* The Set-Cookie value that ends the session cookie. */
void serve_clear_cookie(struct req *r);
/* The mail server refused r->sess's credentials: the session ends, the
 * cookie is cleared, 401 unauthenticated (the app signs in again). */
void serve_session_refused(struct req *r);
/* A call to the mail server that did not end with an answer (res, an
 * enum up_result other than UP_OK): 504 upstream_timeout or 502
 * upstream_error. */
void serve_upstream_failed(struct req *r, int res);
/* Seconds a client waits before retrying while the state database is
 * unavailable (Retry-After). */
#define SERVE_RETRY_AFTER "5"
/* 503 service_unavailable with Retry-After: the state database is busy,
 * locked, read-only, full or (PostgreSQL) down. A fault that clears, so
 * the app retries. */
void serve_store_failed(struct req *r);

#endif
