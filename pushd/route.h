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

#include <stdint.h>

#include "dbq.h"
#include "ev.h"

struct preq;
struct req;
struct sess;

/* Answers q, or turns it into a tab's stream (main.c hands it to conn.c
 * as pd->route). */
void route_request(struct preq *q);

/* Seconds a request waits for the database before it is answered 503
 * with Retry-After: the statement's own bound (5 s) and a queue's worth
 * of others, and less than a proxy's usual 30 s, so that a database that
 * stopped answering gives the app an answer it acts on. */
#define ROUTE_WAIT_S 15

/* A request waiting for the database: within the caller's own struct,
 * which j.work fills on the thread. Meanwhile the request has no
 * timeout of conn.c's, only ROUTE_WAIT_S, and its head is kept. */
struct route_wait {
	struct dbq_job j;         /* work: the caller's; done: route.c's */
	struct preq *q;           /* NULL once the request ended meanwhile */
	/* The request's session, for work and settle to read. */
	struct sess *sess;
	struct ev_timer timer;    /* ROUTE_WAIT_S */
	/* Work that changes what the user asked to change runs even when
	 * the request ends first (its client left, its wait ran out);
	 * other work is then taken out of the queue (dbq_cancel). */
	uint8_t keep;
	/* On the loop once work ran (j.rc -1 when it was taken out),
	 * whether or not the request is still there, or NULL: what the
	 * change means to the loop (watches ended or made, other nodes
	 * told). */
	void (*settle)(struct route_wait *w);
	/* On the loop, after settle, with the request made anew (r->sess
	 * set again): answers it, or waits once more. Not called when the
	 * request ended meanwhile. */
	void (*then)(struct req *r, struct route_wait *w);
	/* Frees the caller's struct, after then or instead of it. */
	void (*free)(struct route_wait *w);
};

/* From a handler: r waits for w's work, then w->then answers it (w's
 * work, then and free set; keep and settle as needed). */
void route_wait(struct req *r, struct route_wait *w);

#endif
