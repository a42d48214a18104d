/* conn: FastCGI connections from the web server. Reads records through
 * fcgirec, keeps each request (several may share a connection) until its
 * head is in, hands it to route, and queues what a request writes as
 * STDOUT records in a bounded buffer that exists only while bytes wait.
 * (Lifetime: pushd.h.) */
#ifndef POSTERN_CONN_H
#define POSTERN_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "ev.h"

struct pushd;
struct req;
struct req_io;

enum preq_state { PQ_PARAMS, PQ_STDIN, PQ_ANSWERED };

/* What a request holds only while its head is read. */
struct preq_head {
	struct buf params;      /* raw name-value pairs, then "name\0value\0"... */
	struct buf body;        /* STDIN */
	uint8_t too_large;      /* params or body passed their cap */
};

/* A request that goes on as a stream (a tab's events): its owner, told
 * when the request ends under it (its client left, the connection
 * closed) and when pushd ends every stream on the way out. conn.c knows
 * no more of it than this. */
struct preq_stream {
	void *owner;            /* NULL: the request carries no stream */
	void (*gone)(void *owner);
	void (*end)(void *owner);
};

/* One FastCGI request. A streaming one lives on with stream.owner set. */
struct preq {
	struct preq *next;
	struct conn *c;
	struct preq_head *head; /* NULL once answered */
	struct preq_stream stream;
	uint16_t id;
	uint8_t state;          /* enum preq_state */
	uint8_t keep_conn;
};

struct conn {
	struct ev_io io;
	struct pushd *pd;
	struct conn *next, *prev;   /* pd->conns */
	struct buf in;              /* an incomplete record, NULL when none */
	struct buf out;             /* queued records, NULL when none */
	size_t out_off;             /* sent so far of out */
	struct preq *reqs;
	struct ev_timer timer;      /* head and idle timeouts */
	uint16_t nreqs;
	uint8_t closing;            /* close once out has drained */
	uint8_t dead;
};

/* Takes an accepted descriptor: 0, or -1 (the descriptor is closed). */
int conn_new(struct pushd *pd, int fd);
/* Closes the connection and ends every request on it (tabs included);
 * freed after the current batch of events. */
void conn_close(struct conn *c);

/* Queues n bytes of the request's STDOUT: 0, or -1 when the queue passed
 * its cap or the connection failed (the connection is then closing, and
 * every tab on it ends). */
int conn_send(struct preq *q, const void *p, size_t n);
/* Ends the request: the empty STDOUT, END_REQUEST, and unless the web
 * server asked to keep the connection, closes it once drained. Frees q. */
void conn_finish(struct preq *q);
/* The request, answered by the web server's side (its body is in),
 * waits for pushd (route.h) with its head kept: no head timeout for it
 * from now on, as for an answered one. */
void conn_wait(struct preq *q);
/* Frees the head of a request that goes on streaming. */
void conn_head_done(struct preq *q);
/* A CGI variable of a request whose head is in, or NULL. */
const char *conn_param(const struct preq *q, const char *name);

/* The I/O of a struct req (shared/req.h) over q, whose head is in: its
 * body read from the head, its answer queued with conn_send. ctx is the
 * caller's, as long as the req. */
struct conn_req_ctx {
	struct preq *q;
	size_t body_off;
};
void conn_req_io(struct preq *q, struct conn_req_ctx *ctx, struct req_io *io);
/* The FastCGI request behind a struct req made over conn_req_io. */
struct preq *conn_preq(const struct req *r);

#endif
