#include "tab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acct.h"
#include "conn.h"
#include "log.h"
#include "clientnet.h"
#include "pct.h"
#include "pushd.h"
#include "req.h"
#include "route.h"

#define QUERY_VALUE_MAX 256

/* Opens the stream for the browser and lighttpd at once; "retry" asks the
 * EventSource to come back after 5 s when the stream ends. */
static const char tab_hello[] = ": postern\nretry: 5000\n\n";

struct tab_opts {
	unsigned types;
	int closeafter;
	long ping;
	int visible;
};

/* types: "*" or a comma list of type names; names pushd does not report
 * are allowed and simply never match. */
static int parse_types(const char *v, unsigned *mask)
{
	const char *p = v;
	size_t n;

	*mask = 0;
	if (!strcmp(v, "*") || *v == '\0') {
		*mask = ACCT_ALL;
		return 0;
	}
	for (;;) {
		n = strcspn(p, ",");
		if (n == 0 || n > 64)
			return -1;
		if (strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") < n)
			return -1;
		*mask |= acct_type_bit(p, n);
		if (p[n] == '\0')
			return 0;
		p += n + 1;
	}
}

static int parse_ping(const char *v, long *out)
{
	char *end;
	long n;

	if (*v == '\0') {
		*out = TAB_PING_MAX;
		return 0;
	}
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 0 || *v < '0' || *v > '9')
		return -1;
	/* 0 (Stalwart: no pings) still pings: proxies drop silent streams. */
	*out = n == 0 || n > TAB_PING_MAX ? TAB_PING_MAX :
	    n < TAB_PING_MIN ? TAB_PING_MIN : n;
	return 0;
}

static int parse_opt(struct tab_opts *o, const char *k, size_t kn,
    const char *v)
{
	if (kn == 5 && !memcmp(k, "types", 5))
		return parse_types(v, &o->types);
	if (kn == 10 && !memcmp(k, "closeafter", 10)) {
		if (strcmp(v, "state") && strcmp(v, "no") && *v)
			return -1;
		o->closeafter = !strcmp(v, "state");
		return 0;
	}
	if (kn == 4 && !memcmp(k, "ping", 4))
		return parse_ping(v, &o->ping);
	if (kn == 7 && !memcmp(k, "visible", 7)) {
		if (strcmp(v, "1") && strcmp(v, "0") && *v)
			return -1;
		o->visible = !strcmp(v, "1");
		return 0;
	}
	return 0;   /* other parameters (cache busters) are ignored */
}

/* The query string: 0, or -1 when a known parameter is malformed. */
static int parse_query(const char *q, struct tab_opts *o)
{
	char v[QUERY_VALUE_MAX];
	const char *eq;
	size_t n;

	*o = (struct tab_opts){ ACCT_ALL, 0, TAB_PING_MAX, 0 };
	while (*q) {
		n = strcspn(q, "&");
		eq = memchr(q, '=', n);
		if (eq == NULL) {
			v[0] = '\0';
			eq = q + n;
		} else if (pct_decode(eq + 1, (size_t)(q + n - eq - 1), v,
		    sizeof(v)) < 0)
			return -1;
		if (parse_opt(o, q, (size_t)(eq - q), v) == -1)
			return -1;
		q += n + (q[n] == '&');
	}
	return 0;
}

static void tab_on_ping(struct ev *ev, struct ev_timer *timer)
{
	struct tab *t = container_of(timer, struct tab, ping);
	char frame[96];
	int n;

	n = snprintf(frame, sizeof(frame),
	    "event: ping\nid: %llu\ndata: {\"interval\":%u}\n\n",
	    (unsigned long long)t->at.acct->last_id, t->ping_s * 1000u);
	tab_send(t, frame, (size_t)n);
}

int tab_send(struct tab *t, const char *frame, size_t n)
{
	struct pushd *pd;

	if (t->at.dead)
		return -1;
	pd = t->q->c->pd;
	if (conn_send(t->q, frame, n) == -1)
		return -1;
	/* Any event is as good as a ping to keep proxies patient. */
	ev_timer_set(&pd->ev, &t->ping, (uint64_t)t->ping_s * 1000);
	return 0;
}

static void tab_free(void *p)
{
	free(p);
}

void tab_gone(struct tab *t)
{
	struct pushd *pd;

	if (t->at.dead)
		return;
	pd = t->q->c->pd;
	t->at.dead = 1;
	ev_timer_stop(&pd->ev, &t->ping);
	acct_detach(&t->at);
	cap_remove(&pd->cap, &t->cap);
	t->q->stream.owner = NULL;
	pd->ntabs--;
	/* Freed after the batch: a fan-out may still be walking past it. */
	ev_defer(&pd->ev, tab_free, t);
}

void tab_end(struct tab *t)
{
	struct preq *q = t->q;

	if (t->at.dead)
		return;
	tab_gone(t);
	/* Still inside its own route handler: route finishes the request. */
	if (q->head == NULL)
		conn_finish(q);
}

/* The account's way to the stream (acct.h's acct_tab_ops). */
static int tab_at_send(struct acct_tab *at, const char *frame, size_t n)
{
	return tab_send(container_of(at, struct tab, at), frame, n);
}

static void tab_at_end(struct acct_tab *at)
{
	tab_end(container_of(at, struct tab, at));
}

static const struct acct_tab_ops tab_acct_ops = { tab_at_send, tab_at_end };

/* The request's hooks (conn.h's preq_stream). */
static void tab_gone_cb(void *t)
{
	tab_gone(t);
}

static void tab_end_cb(void *t)
{
	tab_end(t);
}

/* Starts the stream: headers and the first bytes, then what was missed. */
static void tab_start(struct req *r, struct tab *t)
{
	struct pushd *pd = t->q->c->pd;

	req_status(r, 200);
	req_header(r, "Content-Type", "text/event-stream; charset=utf-8");
	/* nginx and friends: do not buffer this response. */
	req_header(r, "X-Accel-Buffering", "no");
	if (req_write(r, tab_hello, sizeof(tab_hello) - 1) == -1 || t->at.dead)
		return;
	ev_timer_set(&pd->ev, &t->ping, (uint64_t)t->ping_s * 1000);
	acct_replay(t->at.acct, &t->at, req_param(r, "HTTP_LAST_EVENT_ID"));
}

/* The key the client's address is counted under: the network the
 * sign-in limits count it as (an IPv6 client's /login_ipv6_prefix). */
static void tab_net(const struct pushd *pd, const struct req *r,
    char out[CAP_KEY_MAX + 1])
{
	if (client_net(r->ip, pd->app.cfg.login_ipv6_prefix, out,
	    CAP_KEY_MAX + 1) == -1)
		snprintf(out, CAP_KEY_MAX + 1, "%s", r->ip);
}

/* Over a cap: 429 before anything of the stream exists. Logged at most
 * once a minute, with how many were refused since. */
static void tab_refuse(struct req *r, struct pushd *pd, enum cap_verdict v,
    unsigned retry_s, const char *net, uint64_t now)
{
	char ra[16];

	pd->cap_refused++;
	if (now - pd->cap_logged >= 60000 || pd->cap_logged == 0) {
		log_info("pushd: %u event streams refused over their cap since "
		    "the last report (the last: %s, address %s)", pd->cap_refused,
		    v == CAP_SESSION_FULL ? "its session's" : "its address's", net);
		pd->cap_refused = 0;
		pd->cap_logged = now;
	}
	snprintf(ra, sizeof(ra), "%u", retry_s);
	req_header(r, "Retry-After", ra);
	if (v == CAP_SESSION_FULL)
		req_error(r, ERR_RATE_LIMITED, "This session has too many "
		    "event streams open. Please wait and try again.");
	else
		req_error(r, ERR_RATE_LIMITED, "Too many event streams from "
		    "your address. Please wait and try again.");
}

/* The session's oldest stream makes way for its newest: most likely a
 * browser that went away without closing it. Should it still be there,
 * it is asked to come back only after a minute, so that two holders of
 * one cookie over its cap take turns slowly rather than every 5 s. */
static void tab_replaced(struct tab *t)
{
	static const char bye[] = ": replaced by a newer stream of this "
	    "session\nretry: 60000\n\n";

	log_debug("pushd: a session's oldest stream makes way for a new one");
	tab_send(t, bye, sizeof(bye) - 1);
	tab_end(t);
}

/* Opens the stream; jmap_id names the session's primary mail account
 * when its account is not followed here yet. */
static void tab_open(struct req *r, const char *jmap_id)
{
	struct preq *q = conn_preq(r);
	struct pushd *pd = q->c->pd;
	char net[CAP_KEY_MAX + 1];
	struct cap_stream *old;
	struct tab_opts o;
	enum cap_verdict v;
	struct tab *t;
	unsigned retry_s;
	uint64_t now = ev_clock();

	if (pd->app.cfg.push_mode == CFG_PUSH_OFF) {
		req_error(r, ERR_NOT_FOUND, "Push is turned off.");
		return;
	}
	if (parse_query(r->query, &o) == -1) {
		req_error(r, ERR_BAD_REQUEST,
		    "types, closeafter, ping or visible is not valid.");
		return;
	}
	tab_net(pd, r, net);
	v = cap_admit(&pd->cap, r->sess->id, net, now, &old, &retry_s);
	if (v == CAP_SESSION_FULL || v == CAP_ADDRESS_FULL) {
		tab_refuse(r, pd, v, retry_s, net, now);
		return;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		goto fail;
	t->q = q;
	t->at.ops = &tab_acct_ops;
	t->at.types = (uint8_t)o.types;
	t->at.closeafter = (uint8_t)o.closeafter;
	t->ping_s = (uint8_t)o.ping;
	t->at.visible = (uint8_t)o.visible;
	memcpy(t->at.sess_id, r->sess->id, sizeof(t->at.sess_id));
	ev_timer_init(&t->ping, tab_on_ping);
	if (cap_add(&pd->cap, &t->cap, r->sess->id, net, now) == -1) {
		free(t);
		goto fail;
	}
	if (acct_attach(pd, r->sess, jmap_id, &t->at) == -1) {
		cap_remove(&pd->cap, &t->cap);
		free(t);
		goto fail;
	}
	q->stream = (struct preq_stream){ t, tab_gone_cb, tab_end_cb };
	pd->ntabs++;
	/* The new stream is in its account first: ending the old one then
	 * never ends the account under it. */
	if (old)
		tab_replaced(container_of(old, struct tab, cap));
	tab_start(r, t);
	return;
fail:
	req_error(r, ERR_INTERNAL, "The stream could not be opened.");
}

/* A session's first stream here: its primary mail account is read from
 * its sealed document, on the database thread. */
struct doc_wait {
	struct route_wait w;
	char *jmap_id;
};

static void doc_work(struct dbq_job *j, struct store *st)
{
	struct doc_wait *d = container_of(j, struct doc_wait, w.j);

	(void)st;
	d->jmap_id = acct_primary_mail(j->app, d->w.sess);
}

static void doc_then(struct req *r, struct route_wait *w)
{
	tab_open(r, container_of(w, struct doc_wait, w)->jmap_id);
}

static void doc_free(struct route_wait *w)
{
	struct doc_wait *d = container_of(w, struct doc_wait, w);

	free(d->jmap_id);
	free(d);
}

void tab_handle(struct req *r)
{
	struct pushd *pd = conn_preq(r)->c->pd;
	struct doc_wait *d;

	if (acct_lookup(pd, r->sess->account) || pd->app.cfg.push_mode ==
	    CFG_PUSH_OFF || (d = calloc(1, sizeof(*d))) == NULL) {
		tab_open(r, NULL);
		return;
	}
	d->w.j.work = doc_work;
	d->w.then = doc_then;
	d->w.free = doc_free;
	route_wait(r, &d->w);
}
