/* chan_poll: the state calls. Each type's /get with no ids returns just
 * its state; a change becomes an event (events.c). In poll mode one call
 * every push_poll_interval (push_poll_visible while a tab is in view);
 * in every mode the baseline, the call after a reconnect, and the watch
 * that re-checks the tabs' sessions. (Interface: chan.h; lifetime:
 * pushd.h.) */
#include "chan.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "js.h"
#include "log.h"
#include "pushd.h"

#define POLL_RESP_MAX (256 * 1024)
/* An upstream slower than the interval still gets this between two. */
#define POLL_REST_MS 1000
#define MAIL_CAP "urn:ietf:params:jmap:mail"

/* The get method whose "state" tells each type's state, and its tag. */
static const char *const poll_methods[ACCT_NTYPES] = {
	"Email/get", "Mailbox/get", "Thread/get"
};

struct chan_poll {
	struct acct *a;
	struct pushd *pd;
	struct ev_timer timer;           /* the next call */
	struct ev_timer watch;           /* the tabs' sessions re-checked */
	struct mc_job job;               /* the call in flight */
	struct buf resp;
	uint64_t started;                /* ev.now when the last call began */
	uint8_t again;                   /* asked for while one ran */
	uint8_t failing;                 /* the last call failed (log once) */
};

static void poll_start(struct chan_poll *p);

static int poll_alive(const struct chan_poll *p)
{
	return !p->a->dead && p->a->poll == p;
}

/* The poll call: each type's /get with no ids returns just its state. */
static char *poll_body(const struct acct *a)
{
	json_object *o = json_object_new_object(), *using, *calls, *call, *args;
	char *out;
	unsigned i;

	using = json_object_new_array();
	json_object_array_add(using, json_object_new_string("urn:ietf:params:jmap:core"));
	json_object_array_add(using, json_object_new_string(MAIL_CAP));
	calls = json_object_new_array();
	for (i = 0; i < ACCT_NTYPES; i++) {
		call = json_object_new_array();
		args = json_object_new_object();
		json_object_object_add(args, "accountId", json_object_new_string(a->jmap_id));
		json_object_object_add(args, "ids", json_object_new_array());
		json_object_array_add(call, json_object_new_string(poll_methods[i]));
		json_object_array_add(call, args);
		json_object_array_add(call, json_object_new_string(acct_type_names[i]));
		json_object_array_add(calls, call);
	}
	json_object_object_add(o, "using", using);
	json_object_object_add(o, "methodCalls", calls);
	out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return out;
}

/* The interval: push_poll_visible while a tab of the account is in view
 * (the app says so with visible=1), else push_poll_interval. */
static uint64_t poll_ms(const struct acct *a)
{
	const struct cfg *c = &a->pd->app.cfg;

	return (uint64_t)(a->nvisible ? c->push_poll_visible :
	    c->push_poll_interval) * 1000;
}

/* The next call, one interval after the last one began (not ended), so
 * that a change waits at most the interval plus one call's answer. */
static void poll_again(struct chan_poll *p)
{
	uint64_t iv = poll_ms(p->a), since = p->pd->ev.now - p->started;

	ev_timer_set(&p->pd->ev, &p->timer,
	    since + POLL_REST_MS < iv ? iv - since : POLL_REST_MS);
}

/* A call now; one in flight may have been sent before the change this
 * one is for (a relay gap): it runs again when that one ends. */
static void poll_fire(struct chan_poll *p)
{
	if (p->job.easy == NULL)
		poll_start(p);
	else
		p->again = 1;
}

static void poll_on_timer(struct ev *ev, struct ev_timer *t)
{
	poll_fire(container_of(t, struct chan_poll, timer));
}

/* The watch: nothing else asks the mail server in the relay and the
 * subscription modes. When it took the account's credentials longer ago
 * than session_recheck, a state call asks again, and its answer checks
 * the tabs; else the tabs are checked against their records. */
static void poll_on_watch(struct ev *ev, struct ev_timer *t)
{
	struct chan_poll *p = container_of(t, struct chan_poll, watch);
	struct acct *a = p->a;

	if (!sess_fresh(&a->pd->app, a->accepted, time(NULL)))
		poll_fire(p);
	else
		acct_check_tabs(a, 0);
	if (poll_alive(p))
		ev_timer_set(ev, t, (uint64_t)a->pd->app.cfg.push_poll_interval * 1000);
}

static struct chan_poll *poll_get(struct acct *a)
{
	struct chan_poll *p = a->poll;

	if (p == NULL && (p = calloc(1, sizeof(*p))) != NULL) {
		p->a = a;
		p->pd = a->pd;
		ev_timer_init(&p->timer, poll_on_timer);
		ev_timer_init(&p->watch, poll_on_watch);
		buf_init(&p->resp, POLL_RESP_MAX);
		a->poll = p;
	}
	if (p == NULL)
		log_err("pushd: out of memory for a poll");
	return p;
}

static void poll_free(void *v)
{
	struct chan_poll *p = v;

	mc_cancel(p->pd, &p->job);
	buf_free(&p->resp);
	free(p);
}

static void poll_stop(struct acct *a)
{
	struct chan_poll *p = a->poll;

	if (p == NULL)
		return;
	a->poll = NULL;
	ev_timer_stop(&p->pd->ev, &p->timer);
	ev_timer_stop(&p->pd->ev, &p->watch);
	if (!p->pd->in_curl)
		mc_cancel(p->pd, &p->job);
	ev_defer(&p->pd->ev, poll_free, p);
}

/* The states in a poll's answer: the mask of types that answered. */
static unsigned poll_states(json_object *root, char *states[ACCT_NTYPES])
{
	const char *st;
	unsigned i, mask = 0;

	for (i = 0; i < ACCT_NTYPES; i++)
		if ((st = js_str(js_response(root, acct_type_names[i],
		    poll_methods[i]), "state")) != NULL &&
		    (states[i] = strdup(st)) != NULL)
			mask |= 1u << i;
	return mask;
}

static void poll_done(struct mc_job *job, CURLcode rc, long status)
{
	struct chan_poll *p = container_of(job, struct chan_poll, job);
	struct acct *a = p->a;
	char *states[ACCT_NTYPES] = { NULL };
	json_object *root = NULL;
	unsigned i, got = 0;

	if (!poll_alive(p))
		return;
	if (rc == CURLE_OK)
		acct_accepted(a, status);
	/* The mail server refused the password: like the relay, pushd ends
	 * the sessions (the app signs in again) rather than keep failing a
	 * login every interval, which could get the gateway banned. */
	acct_check_tabs(a, rc == CURLE_OK && status == 401);
	if (!poll_alive(p))
		return;
	if (rc == CURLE_OK && status == 200 && p->resp.len &&
	    (root = js_parse(p->resp.data, p->resp.len)) != NULL)
		got = poll_states(root, states);
	json_object_put(root);
	buf_free(&p->resp);
	if (got == 0 && !p->failing)
		log_warn("pushd: poll failed (%s, HTTP %ld)",
		    rc == CURLE_OK ? "answered" : curl_easy_strerror(rc), status);
	p->failing = got == 0;
	if (got)
		acct_new_states(a, states, got);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	/* In the other modes the call ran once, for the baseline, a gap or
	 * the watch, unless another was asked for while this one ran. */
	if (!poll_alive(p))
		return;
	if (p->again)
		ev_timer_set(&p->pd->ev, &p->timer, 0);
	else if (a->mode == ACCT_POLL)
		poll_again(p);
	else if (!ev_timer_armed(&p->watch))
		poll_stop(a);
}

static void poll_start(struct chan_poll *p)
{
	char *body;

	/* A lease not renewed in time (a node frozen, then woken): no call
	 * until node.c has renewed it or stopped this channel. */
	if (!acct_leased(p->a)) {
		poll_again(p);
		return;
	}
	body = poll_body(p->a);

	p->job.done = poll_done;
	p->again = 0;
	p->started = p->pd->ev.now;
	buf_reset(&p->resp);
	if (acct_call(p->a, &p->job, body, &p->resp) == -1) {
		log_err("pushd: cannot set up a poll");
		poll_again(p);
	}
	free(body);
}

void poll_now(struct acct *a)
{
	struct chan_poll *p = poll_get(a);

	/* From the loop: this may run inside a libcurl callback. */
	if (p)
		ev_timer_set(&p->pd->ev, &p->timer, 0);
}

void poll_watch(struct acct *a)
{
	struct chan_poll *p = poll_get(a);

	if (p && !ev_timer_armed(&p->watch))
		ev_timer_set(&p->pd->ev, &p->watch,
		    (uint64_t)a->pd->app.cfg.push_poll_interval * 1000);
}

void poll_rest(struct acct *a)
{
	if (a->poll)
		ev_timer_stop(&a->pd->ev, &a->poll->timer);
}

static int poll_usable(const struct acct *a)
{
	return 1;
}

/* Poll mode: a call now, then every interval; each checks the tabs. */
static void poll_enter(struct acct *a)
{
	struct chan_poll *p = poll_get(a);

	if (p) {
		ev_timer_stop(&p->pd->ev, &p->watch);
		ev_timer_set(&p->pd->ev, &p->timer, 0);
	}
}

static int poll_idle(struct acct *a)
{
	poll_stop(a);
	return 0;
}

/* A tab came into view: a call waiting longer than the visible interval
 * is brought forward (one in flight reschedules itself when it ends). */
static void poll_visible(struct acct *a)
{
	struct chan_poll *p = a->poll;

	if (a->mode == ACCT_POLL && p && ev_timer_armed(&p->timer) &&
	    p->job.easy == NULL)
		poll_again(p);
}

const struct chan chan_poll = {
	.name = "polling",
	.usable = poll_usable,
	.enter = poll_enter,
	.stop = poll_stop,
	.idle = poll_idle,
	.visible = poll_visible,
};
