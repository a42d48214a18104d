/* chan_relay: the mail server's event stream (RFC 8620 7.3), one per
 * account, relayed to its tabs. A stream that ends is opened again after
 * a backoff; one that fails three times in a row leaves the polling in
 * charge while it is still tried; a server that answers without a stream
 * is polled for good. (Interface: chan.h; lifetime: pushd.h.) */
#include "chan.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "js.h"
#include "log.h"
#include "pushd.h"
#include "sse.h"

#define RELAY_BACKOFF_MIN_MS 500
#define RELAY_BACKOFF_MAX_MS 60000
#define RELAY_FAILS_MAX 3          /* failed reconnects before polling */

struct chan_relay {
	struct acct *a;
	struct pushd *pd;
	struct mc_job stream;
	struct sse sse;
	struct ev_timer timer;           /* the reconnect after a backoff;
	                                    while it opens, the head deadline */
	unsigned backoff_ms;
	uint8_t up;                      /* it answered 200 event-stream */
	uint8_t fails;                   /* reconnects in a row that failed */
};

static void relay_open(struct chan_relay *r);
static void relay_done(struct mc_job *job, CURLcode rc, long status);

static int relay_alive(const struct chan_relay *r)
{
	return !r->a->dead && r->a->relay == r;
}

/* The event_url template with types=*, closeafter and ping filled. */
static char *event_url_fill(const char *tmpl, const char *closeafter,
    const char *ping)
{
	const char *const keys[3][2] = {
		{ "{types}", "*" }, { "{closeafter}", closeafter }, { "{ping}", ping }
	};
	struct buf b;
	const char *p = tmpl;
	char *out;
	int i, hit;

	buf_init(&b, 8192);
	while (*p) {
		for (i = 0, hit = 0; i < 3 && !hit; i++)
			if (!strncmp(p, keys[i][0], strlen(keys[i][0]))) {
				hit = buf_puts(&b, keys[i][1]) == 0;
				p += strlen(keys[i][0]);
			}
		if (!hit && buf_putc(&b, *p++) == -1)
			break;
	}
	out = b.data ? strdup(b.data) : NULL;
	buf_free(&b);
	return out;
}

/* One `event: state` frame from the upstream: the states of our account's
 * types become an event for the tabs (a ping is only a sign of life). */
static int relay_event(void *ctx, const char *event, const char *data,
    size_t len, const char *id)
{
	struct chan_relay *r = ctx;
	char *states[ACCT_NTYPES] = { NULL };
	json_object *o;
	unsigned i, got;

	if (!relay_alive(r) || strcmp(event, "state"))
		return 0;
	if ((o = js_parse(data, len)) == NULL)
		return 0;
	got = acct_changed_states(r->a, js_obj(o, "changed"), states);
	json_object_put(o);
	if (got)
		acct_new_states(r->a, states, got);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	return 0;
}

/* The response head: a 200 text/event-stream is a stream. Inside
 * libcurl: the call for the gap runs from the loop. */
static void relay_head_in(struct chan_relay *r, long status, const char *type)
{
	struct acct *a = r->a;

	acct_accepted(a, status);
	if (status != 200 || type == NULL ||
	    strncasecmp(type, "text/event-stream", 17))
		return;
	r->up = 1;
	ev_timer_stop(&r->pd->ev, &r->timer);
	r->fails = 0;
	r->backoff_ms = 0;
	a->stream_seen = 1;
	if (a->mode == ACCT_POLL)
		acct_set_mode(a, ACCT_RELAY, "the event stream is back");
	/* One call now: its answer is the baseline, or, after a reconnect,
	 * tells the tabs what changed while no stream was open. */
	poll_now(a);
	poll_watch(a);
}

/* libcurl's header callback: in_curl while it runs (pushd.h, rule 5). */
static void relay_head(struct mc_job *job, long status, const char *type)
{
	struct chan_relay *r = container_of(job, struct chan_relay, stream);

	r->pd->in_curl++;
	if (relay_alive(r))
		relay_head_in(r, status, type);
	r->pd->in_curl--;
}

static size_t relay_write(char *p, size_t size, size_t n, void *ctx)
{
	struct chan_relay *r = ctx;
	struct pushd *pd = r->pd;
	int rc;

	if (!r->up || !relay_alive(r))
		return 0;
	pd->in_curl++;
	rc = sse_feed(&r->sse, p, n);
	pd->in_curl--;
	if (rc == -1)
		log_warn("pushd: the mail server's event stream broke a rule; "
		    "reconnecting");
	/* Short: libcurl ends the transfer (relay_done runs). */
	return rc || !relay_alive(r) || r->a->ntabs == 0 ? 0 : n;
}

/* The reconnect after a backoff; while a stream opens, the deadline for
 * its head. A server (or a proxy before it) that takes the request and
 * never answers would otherwise hold the account without a channel, and
 * nothing polled, until the stall limit. */
static void relay_on_timer(struct ev *ev, struct ev_timer *t)
{
	struct chan_relay *r = container_of(t, struct chan_relay, timer);

	if (r->stream.easy && !r->up) {
		mc_cancel(r->pd, &r->stream);
		relay_done(&r->stream, CURLE_OPERATION_TIMEDOUT, 0);
		return;
	}
	if (r->a->mode != ACCT_SUBSCRIPTION && r->a->ntabs &&
	    r->stream.easy == NULL)
		relay_open(r);
}

static void relay_free(void *v)
{
	struct chan_relay *r = v;

	mc_cancel(r->pd, &r->stream);
	sse_free(&r->sse);
	free(r);
}

static void relay_stop(struct acct *a)
{
	struct chan_relay *r = a->relay;

	if (r == NULL)
		return;
	a->relay = NULL;
	ev_timer_stop(&r->pd->ev, &r->timer);
	/* Inside libcurl's callback the transfer is left to relay_free,
	 * after the batch; relay_write stops it meanwhile. */
	if (!r->pd->in_curl)
		mc_cancel(r->pd, &r->stream);
	ev_defer(&r->pd->ev, relay_free, r);
}

/* The stream ended: again, after a backoff that doubles while the
 * reconnects fail. */
static void relay_again(struct chan_relay *r, CURLcode rc, long status)
{
	r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : RELAY_BACKOFF_MIN_MS;
	if (r->backoff_ms > RELAY_BACKOFF_MAX_MS)
		r->backoff_ms = RELAY_BACKOFF_MAX_MS;
	log_debug("pushd: the event stream ended (%s, HTTP %ld); again in %u ms",
	    curl_easy_strerror(rc), status, r->backoff_ms);
	ev_timer_set(&r->pd->ev, &r->timer, r->backoff_ms);
}

static void relay_done(struct mc_job *job, CURLcode rc, long status)
{
	struct chan_relay *r = container_of(job, struct chan_relay, stream);
	struct acct *a = r->a;
	int was_up = r->up;

	if (!relay_alive(r))
		return;
	ev_timer_stop(&r->pd->ev, &r->timer);   /* the head deadline */
	r->up = 0;
	sse_reset(&r->sse);
	if (a->mode == ACCT_SUBSCRIPTION || a->ntabs == 0) {
		relay_stop(a);
		return;
	}
	if (status == 401) {
		/* As in poll mode: the sessions end, the app signs in again. */
		acct_check_tabs(a, 1);
		return;
	}
	if (!a->stream_seen && status != 0) {
		/* It answered, and not with a stream (Cyrus 3.6: 204): no
		 * event stream here. Polling, for good. */
		log_debug("pushd: event_url answered %ld", status);
		a->no_stream = 1;
		relay_stop(a);
		acct_fall_back(a, ACCT_RELAY, "the server has no event stream");
		return;
	}
	/* Counted up to the limit, not past it: the fallback happens once.
	 * It stopped working, or never answered at all (refused, reset, no
	 * head by the deadline: a server mid-restart): polling, without
	 * dropping a tab, while the stream is tried on the backoff. */
	if (!was_up && r->fails < RELAY_FAILS_MAX &&
	    ++r->fails == RELAY_FAILS_MAX) {
		log_debug("pushd: the event stream fails (%s, HTTP %ld)",
		    curl_easy_strerror(rc), status);
		acct_fall_back(a, ACCT_RELAY, "the event stream fails");
	}
	relay_again(r, rc, status);
}

/* Opens the account's one upstream EventSource: types=*, closeafter=no,
 * a ping every 30 s (the stream's sign of life). */
static void relay_open(struct chan_relay *r)
{
	struct acct *a = r->a;
	struct mc_req rq = {
		.kind = MC_STREAM, .user = acct_user(a), .pass = acct_pass(a),
		.write = relay_write, .ctx = r,
	};
	char *url;
	int rc = -1;

	/* A lease not renewed in time (a node frozen, then woken): nothing
	 * opens until node.c has renewed it or stopped this channel. */
	if (!acct_leased(a)) {
		ev_timer_set(&r->pd->ev, &r->timer, PUSHD_LEASE_TICK_MS);
		return;
	}
	r->up = 0;
	sse_reset(&r->sse);
	r->stream.done = relay_done;
	r->stream.head = relay_head;
	if ((url = event_url_fill(a->event_url, "no", "30")) != NULL) {
		rq.url = url;
		rc = mc_request(r->pd, &r->stream, &rq);
		free(url);
	}
	if (rc == -1) {
		log_err("pushd: cannot open the event stream");
		relay_stop(a);
		acct_fall_back(a, ACCT_RELAY, "the event stream cannot be opened");
		return;
	}
	ev_timer_set(&r->pd->ev, &r->timer, (uint64_t)1000 *
	    (r->pd->app.cfg.upstream_connect_timeout +
	    r->pd->app.cfg.upstream_timeout));
}

static int relay_usable(const struct acct *a)
{
	return a->pd->app.cfg.push_mode != CFG_PUSH_POLL && *a->event_url &&
	    !a->no_stream;
}

/* In charge: the stream opens, unless it is open or opening. */
static void relay_enter(struct acct *a)
{
	struct chan_relay *r = a->relay;

	if (r == NULL) {
		if ((r = calloc(1, sizeof(*r))) == NULL) {
			log_err("pushd: out of memory for an event stream");
			acct_fall_back(a, ACCT_RELAY, "out of memory");
			return;
		}
		r->a = a;
		r->pd = a->pd;
		ev_timer_init(&r->timer, relay_on_timer);
		sse_init(&r->sse, relay_event, r);
		a->relay = r;
	}
	if (r->stream.easy == NULL)
		relay_open(r);
}

static int relay_idle(struct acct *a)
{
	relay_stop(a);
	return 0;
}

const struct chan chan_relay = {
	.name = "the event stream",
	.usable = relay_usable,
	.enter = relay_enter,
	.stop = relay_stop,
	.idle = relay_idle,
};
