/* req: one HTTP exchange with the web server, the same whether it came
 * over FastCGI or plain CGI. The front end (serve.c) fills in the I/O
 * callbacks; handlers read the validated request and write the response
 * through these functions only. */
#ifndef POSTERN_REQ_H
#define POSTERN_REQ_H

#include <stddef.h>
#include <time.h>

#include <json-c/json.h>

#include "app.h"
#include "buf.h"
#include "err.h"

#define REQ_PATH_MAX 1024
#define REQ_IP_MAX 64

struct req_io {
	void *ctx;
	/* bytes read (0 at the end), or -1 */
	int (*read)(void *ctx, char *p, int n);
	/* 0 or -1 */
	int (*write)(void *ctx, const char *p, int n);
	int (*flush)(void *ctx);
	/* a CGI variable, or NULL */
	const char *(*param)(void *ctx, const char *name);
};

/* Bounds the next reads and writes on a transport: each waits at most
 * recv_ms or send_ms for the web server. 0 or -1. */
typedef int (*req_timeouts_fn)(void *ctx, long recv_ms, long send_ms);

struct sess;

struct req {
	struct app *app;
	struct req_io io;
	const char *method;
	char path[REQ_PATH_MAX];  /* REQUEST_URI up to '?', as sent */
	const char *query;        /* after '?', or "" */
	char ip[REQ_IP_MAX];      /* the client, behind trusted proxies */
	int https;
	long long content_length; /* -1 when not given */
	long long body_read;
	time_t now;
	/* monotonic: when the body's first read began (0: not yet), from
	 * which its deadline runs; the time postern spends before reading
	 * (a busy database, up to 5 s a statement) is not the client's */
	long long body_started_ms;
	req_timeouts_fn timeouts; /* NULL: the transport has none (CGI) */
	struct sess *sess;        /* routes that need a session */

	int status;
	struct buf head;          /* response headers not yet sent */
	int head_sent;
	int client_gone;
};

/* Fills r from the CGI variables. -1 with an error already answered when
 * the request line itself is unusable. */
int req_init(struct req *r, struct app *a, const struct req_io *io);
/* Gives the request its transport's deadlines (REQ_BODY_GRACE and
 * REQ_SEND_IDLE from now on; req_read keeps the body's rate). Where it
 * is never called (CGI's pipes) the web server bounds the transport. */
void req_deadlines(struct req *r, req_timeouts_fn fn);
/* Frees what the request holds (the session too). */
void req_free(struct req *r);

const char *req_param(const struct req *r, const char *name);
/* The cookie's value copied into out, or -1 when absent or too long. */
int req_cookie(const struct req *r, const char *name, char *out, size_t n);
/* The media type of the body, lower-cased, without parameters. */
int req_media_type(const struct req *r, char *out, size_t n);
/* Whether the client accepts gzip. */
int req_accepts_gzip(const struct req *r);

/* How long a slow web server or client may take: the body must come at
 * REQ_BODY_MIN_RATE bytes a second after a grace of REQ_BODY_GRACE
 * seconds, and a write that makes no progress for REQ_SEND_IDLE seconds
 * ends the answer (a reader that stopped reading). The shipped web
 * server configurations collect bodies and take answers off the
 * responder's hands, so these bite only where they do not. */
#define REQ_BODY_GRACE 10
#define REQ_BODY_MIN_RATE 500
#define REQ_SEND_IDLE 30

/* Reads up to n body bytes: the count, 0 at the end, -1 on error (the
 * body's deadline passed too). Never reads past CONTENT_LENGTH. */
long req_read(struct req *r, char *p, size_t n);
/* req_read for a body streamed on to the mail server: REQ_TOO_LARGE once
 * more than max bytes came (a body without a declared length is stopped
 * there, unfinished, so the server never takes it). */
#define REQ_TOO_LARGE (-2)
long req_read_max(struct req *r, char *p, size_t n, long long max);
/* Reads the whole body into b: 0, -1 when it passes b->max, -2 on an I/O
 * error. */
int req_read_all(struct req *r, struct buf *b);
/* Reads a body that must be one JSON object of at most max bytes, sent as
 * application/json. Returns it (caller puts it), or NULL with the error
 * answered (415, 413 or 400), each message starting with what ("The
 * settings"). The bytes read are wiped when wipe is set (a password). */
json_object *req_json_body(struct req *r, size_t max, const char *what,
    int wipe);

/* Response. Headers are queued until the first body byte or req_end. */
void req_status(struct req *r, int status);
/* The reason phrase of status, or NULL when postern never sends it: the
 * one list of statuses (req.c). An upstream status not in it is a bad
 * upstream answer. */
const char *req_status_text(int status);
/* -1 (and nothing queued) when name or value holds CR, LF or NUL. */
int req_header(struct req *r, const char *name, const char *value);
int req_write(struct req *r, const void *p, size_t n);
int req_end(struct req *r);
/* A whole JSON response; the object stays the caller's. */
void req_json(struct req *r, int status, json_object *o);
/* {"error": code, "message": msg} with e's code and status (err.h);
 * msg NULL: the table's message. */
void req_error(struct req *r, enum err e, const char *msg);
/* The same with a status of the caller's (ERR_DAV_REFUSED: the address
 * book server's own 4xx). */
void req_error_status(struct req *r, enum err e, int status, const char *msg);
/* 429 with Retry-After. */
void req_rate_limited(struct req *r, long retry_after);

#endif
