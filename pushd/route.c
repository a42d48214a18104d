#include "route.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callback.h"
#include "chan.h"
#include "conn.h"
#include "log.h"
#include "pushd.h"
#include "req.h"
#include "seal.h"
#include "serve.h"
#include "sess.h"
#include "tab.h"
#include "visible.h"
#include "wpsub.h"

#define TOKEN_MAX 128

/* Every route calls no one (ROUTE_UPSTREAM): a session check waiting on
 * the mail server would stall every stream. */
static const struct route pushd_routes[] = {
	{ "GET", "/api/events", ROUTE_SESSION | ROUTE_UPSTREAM, tab_handle },
	/* Marks the session's streams in view. */
	{ "POST", "/api/events", ROUTE_SESSION | ROUTE_UPSTREAM, visible_handle },
	/* A device's Web Push subscription. */
	{ "GET", "/api/webpush", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_UPSTREAM,
	    wpsub_handle },
	{ "PUT", "/api/webpush", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_UPSTREAM,
	    wpsub_handle },
	{ "DELETE", "/api/webpush", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_UPSTREAM,
	    wpsub_handle },
	{ NULL, NULL, 0, NULL }
};

/* -- a request made of its head, now or once the database answered ----- */

static void wait_gone(void *owner);

static int waiting(const struct preq *q)
{
	return q->stream.owner && q->stream.gone == wait_gone;
}

/* Makes q's request, has fn answer it (or have it wait, or stream), and
 * ends what fn left. */
static void request_run(struct preq *q, void (*fn)(struct req *r, void *ctx),
    void *ctx)
{
	struct pushd *pd = q->c->pd;
	struct conn_req_ctx x;
	struct req_io io;
	struct req r;

	conn_req_io(q, &x, &io);
	if (req_init(&r, &pd->app, &io) == 0)
		fn(&r, ctx);
	if (waiting(q)) {
		req_free(&r);   /* nothing written yet; the session is aside */
		return;
	}
	req_end(&r);
	req_free(&r);
	if (q->stream.owner)
		conn_head_done(q);
	else
		conn_finish(q);
}

/* The request ends before the database answered: its work is taken out
 * of the queue unless it must still be done. */
static void wait_detach(struct route_wait *w)
{
	struct pushd *pd = w->j.pd;

	w->q = NULL;
	ev_timer_stop(&pd->ev, &w->timer);
	if (!w->keep)
		dbq_cancel(pd, &w->j);
}

static void wait_gone(void *owner)
{
	wait_detach(owner);
}

static void unavailable(struct req *r, void *ctx)
{
	(void)ctx;
	serve_store_failed(r);
}

/* pushd stops, or the wait ran out: 503, as while the database is away. */
static void wait_give_up(struct route_wait *w)
{
	struct preq *q = w->q;

	wait_detach(w);
	q->stream.owner = NULL;
	request_run(q, unavailable, NULL);
}

static void wait_end(void *owner)
{
	wait_give_up(owner);
}

static void wait_late(struct ev *ev, struct ev_timer *t)
{
	(void)ev;
	log_warn("pushd: a request waited %d s for the database; 503",
	    ROUTE_WAIT_S);
	wait_give_up(container_of(t, struct route_wait, timer));
}

static void wait_then(struct req *r, void *ctx)
{
	struct route_wait *w = ctx;

	r->sess = w->sess;
	w->sess = NULL;
	w->then(r, w);
}

static void wait_done(struct dbq_job *j)
{
	struct route_wait *w = container_of(j, struct route_wait, j);
	struct preq *q = w->q;

	ev_timer_stop(&j->pd->ev, &w->timer);
	if (w->settle && !j->pd->stopping)
		w->settle(w);
	if (q) {
		q->stream.owner = NULL;
		request_run(q, wait_then, w);
	}
	sess_free(w->sess);
	w->free(w);
}

void route_wait(struct req *r, struct route_wait *w)
{
	struct preq *q = conn_preq(r);
	struct pushd *pd = q->c->pd;

	w->q = q;
	w->sess = r->sess;
	r->sess = NULL;
	w->j.done = wait_done;
	w->j.pd = pd;
	ev_timer_init(&w->timer, wait_late);
	ev_timer_set(&pd->ev, &w->timer, (uint64_t)ROUTE_WAIT_S * 1000);
	q->stream = (struct preq_stream){ w, wait_gone, wait_end };
	conn_wait(q);
	dbq_push_request(pd, &w->j);
}

/* -- the session and the budget, then the route ------------------------- */

struct admit {
	struct route_wait w;
	const struct route *rt;
	char cookie[SESS_COOKIE_LEN + 2];
	time_t now;
	int rc;                    /* sess_lookup's */
	int budget;                /* serve_budget's */
	long retry;
};

static void admit_work(struct dbq_job *j, struct store *st)
{
	struct admit *m = container_of(j, struct admit, w.j);
	struct app *a = j->app;

	(void)st;
	m->rc = sess_lookup(a, m->cookie, m->now, &m->w.sess);
	if (m->rc != 0)
		return;
	if (m->rt->flags & ROUTE_BUDGET)
		m->budget = serve_budget(a, m->w.sess->id, m->now, &m->retry);
	sess_touch(a, m->w.sess, m->now);
}

static void admit_then(struct req *r, struct route_wait *w)
{
	struct admit *m = container_of(w, struct admit, w);

	if (m->rc != 0)
		serve_no_session(r, m->rc);
	else if (m->budget != 0)
		serve_over_budget(r, m->budget, m->retry);
	else
		m->rt->handler(r);
}

static void admit_free(struct route_wait *w)
{
	struct admit *m = container_of(w, struct admit, w);

	seal_wipe(m->cookie, sizeof(m->cookie));     /* a bearer credential */
	free(m);
}

/* A route's request: refused at once, or waits for its session. */
static void admit(struct req *r)
{
	const struct route *rt = serve_admit(r, pushd_routes);
	struct admit *m;

	if (rt == NULL)
		return;
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		req_error(r, ERR_INTERNAL, NULL);
		return;
	}
	if (req_cookie(r, SESS_COOKIE, m->cookie, sizeof(m->cookie)) == -1) {
		free(m);
		serve_no_session(r, 1);
		return;
	}
	m->rt = rt;
	m->now = r->now;
	m->rc = -1;                /* until work says: a lookup not run failed */
	m->w.j.work = admit_work;
	m->w.then = admit_then;
	m->w.free = admit_free;
	route_wait(r, &m->w);
}

/* -- the mail server's push callback ------------------------------------ */

static int token_valid(const char *t)
{
	size_t n = strlen(t);

	return n > 0 && n <= TOKEN_MAX && strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_") == n;
}

/* The callback whose token is known (1: followed here, or stored with
 * key), unknown (0) or not found out (-1). */
static void push_answer(struct req *r, const char *hash, const char *key,
    int known)
{
	struct preq *q = conn_preq(r);
	int rc;

	if (known <= 0) {
		req_error(r, known ? ERR_INTERNAL : ERR_NOT_FOUND,
		    known ? "The push store failed." : "No such push subscription.");
		return;
	}
	/* Known or not, a body too large is not read: the token decides
	 * only what happens to a body that fits. */
	if (q->head->too_large) {
		req_error(r, ERR_TOO_LARGE, "The push body is too large.");
		return;
	}
	rc = callback_take(q->c->pd, hash, key, conn_param(q, "CONTENT_TYPE"),
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
		req_error(r, ERR_INTERNAL, NULL);
	}
}

struct push_wait {
	struct route_wait w;
	char hash[ACCT_TOKEN_HEX + 1];
	char key[APP_KEY_HEX + 1];
};

static void push_work(struct dbq_job *j, struct store *st)
{
	struct push_wait *p = container_of(j, struct push_wait, w.j);

	j->rc = callback_stored(st, p->hash, p->key);
}

static void push_then(struct req *r, struct route_wait *w)
{
	struct push_wait *p = container_of(w, struct push_wait, w);

	push_answer(r, p->hash, p->key, w->j.rc);
}

static void push_free(struct route_wait *w)
{
	free(container_of(w, struct push_wait, w));
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
	struct push_wait *p;

	if (strcmp(r->method, "POST")) {
		req_header(r, "Allow", "POST");
		req_error(r, ERR_METHOD, NULL);
		return;
	}
	if (!token_valid(token)) {
		req_error(r, ERR_NOT_FOUND, "No such push subscription.");
		return;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		req_error(r, ERR_INTERNAL, NULL);
		return;
	}
	sub_token_hash(token, p->hash);
	if (callback_here(q->c->pd, p->hash)) {
		push_answer(r, p->hash, NULL, 1);
		free(p);
		return;
	}
	p->w.j.work = push_work;
	p->w.then = push_then;
	p->w.free = push_free;
	route_wait(r, &p->w);
}

static void route_one(struct req *r, void *ctx)
{
	(void)ctx;
	if (!strncmp(r->path, "/api/push/", 10))
		push_handle(r);
	else
		admit(r);
}

void route_request(struct preq *q)
{
	request_run(q, route_one, NULL);
}
