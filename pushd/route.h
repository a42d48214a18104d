/* route: what pushd answers. A request whose head is in becomes a struct
 * req (shared/req.h) over the FastCGI request, so that the checks and the
 * answers are the responders' own: cross-site refusal, the session
 * cookie, the security headers, the JSON errors.
 *
 * What a request needs of the database (its session, its budget, a push
 * token not followed here, a Web Push subscription) is asked on the
 * database thread (dbq.h): the request waits, every stream goes on, and
 * the request is made anew from its head when the answer is back.
 * (Lifetime: pushd.h.) */
#ifndef POSTERN_ROUTE_H
#define POSTERN_ROUTE_H

#include "dbq.h"

struct preq;
struct req;
struct sess;

/* Answers q, or turns it into a tab's stream (main.c hands it to conn.c
 * as pd->route). */
void route_request(struct preq *q);

/* A request waiting for the database: within the caller's own struct,
 * which j.work fills on the thread. Until then the request has no
 * timeout of its own (the statement's bounds it) and its head is kept. */
struct route_wait {
	struct dbq_job j;         /* work: the caller's; done: route.c's */
	struct preq *q;           /* NULL once the request ended meanwhile */
	/* The request's session, for work to read (its fields only). */
	struct sess *sess;
	/* On the loop, once work ran, with the request made anew (r->sess
	 * set again): answers it, or waits once more. Not called when the
	 * request ended meanwhile. */
	void (*then)(struct req *r, struct route_wait *w);
	/* Frees the caller's struct, after then or instead of it. */
	void (*free)(struct route_wait *w);
};

/* From a handler: r waits for w's work, then w->then answers it (w's
 * work, then and free set). */
void route_wait(struct req *r, struct route_wait *w);

#endif
