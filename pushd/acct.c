#define _GNU_SOURCE 1
#include "acct.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <json-c/json.h>

#include "js.h"
#include "log.h"
#include "pushd.h"
#include "seal.h"
#include "store.h"
#include "upstream.h"

#define POLL_RESP_MAX (256 * 1024)
#define FLUSH_MS 1000
#define SESSION_DOC_MAX (1 << 20)
#define MAIL_CAP "urn:ietf:params:jmap:mail"

const char *const acct_type_names[ACCT_NTYPES] = { "Email", "Mailbox", "Thread" };
/* The get method whose "state" tells each type's state, and its tag. */
static const char *const poll_methods[ACCT_NTYPES] = {
	"Email/get", "Mailbox/get", "Thread/get"
};

static void acct_poll_start(struct acct *a);
static void acct_poll_sooner(struct acct *a);
static void acct_new_states(struct acct *a, char *states[ACCT_NTYPES],
    unsigned got, int quiet_first);
static void acct_check_tabs(struct acct *a, int revoke);
static void acct_on_poll_timer(struct ev *ev, struct ev_timer *t);

/* A tab's own credentials, asked of the mail server when nothing vouches
 * for its session (see acct_attach). */
struct acct_check {
	struct mc_job job;
	struct acct_check *next;
	struct acct *a;
	char sess_id[SESS_ID_LEN + 1];
};
#define CHECK_DOC_MAX (1 << 20)

#define RELAY_BACKOFF_MIN_MS 500
#define RELAY_BACKOFF_MAX_MS 60000
#define RELAY_FAILS_MAX 3          /* failed reconnects before polling */
#define RELAY_STALL_S 120L         /* no byte (not even a ping) for this long */

unsigned acct_type_bit(const char *name, size_t n)
{
	unsigned i;

	for (i = 0; i < ACCT_NTYPES; i++)
		if (strlen(acct_type_names[i]) == n &&
		    !memcmp(acct_type_names[i], name, n))
			return 1u << i;
	return 0;
}

static struct acct **acct_bucket(struct pushd *pd, const char *key)
{
	unsigned long h = 5381;

	while (*key)
		h = h * 33 + (unsigned char)*key++;
	return &pd->accts[h % PUSHD_ACCT_BUCKETS];
}

static struct acct *acct_find(struct pushd *pd, const char *key)
{
	struct acct *a;

	for (a = *acct_bucket(pd, key); a; a = a->next)
		if (!strcmp(a->key, key))
			return a;
	return NULL;
}

/* -- the database row ------------------------------------------------------ */

static json_object *states_json(char *const states[ACCT_NTYPES])
{
	json_object *o = json_object_new_object();
	unsigned i;

	for (i = 0; i < ACCT_NTYPES; i++)
		if (states[i])
			json_object_object_add(o, acct_type_names[i],
			    json_object_new_string(states[i]));
	return o;
}

_Static_assert((int)ACCT_POLL == STORE_PUSH_POLL &&
    (int)ACCT_RELAY == STORE_PUSH_RELAY &&
    (int)ACCT_SUBSCRIPTION == STORE_PUSH_SUBSCRIPTION,
    "pushd's modes are the store's");

static void acct_write(struct acct *a)
{
	json_object *o = states_json(a->states);
	struct store_push_row row = {
		.account = a->key,
		.mode = (enum store_push_mode)a->mode,
		.tabs = (long)a->ntabs,
		.updated = (long long)time(NULL),
	};

	if (a->states[0])
		row.states = json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN);
	/* A subscription's identity is written once it is verified: only a
	 * verified one is worth reusing after a restart. */
	if (a->sub_id && a->sub_state == SUB_VERIFIED) {
		row.sub_id = a->sub_id;
		row.token_hash = a->token_hash;
		row.expires = a->sub_expires;
	}
	/* A row that could not be written stays dirty for the next flush. */
	if (store_push_put(a->pd->app.store, &row) == 0)
		a->dirty = 0;
	json_object_put(o);
}

/* Dirty rows are written together once a second: a thousand tabs that
 * reconnect at once make one transaction, not a thousand. */
static void acct_on_flush(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);
	struct acct *a;
	unsigned i;

	store_begin(pd->app.store);
	for (i = 0; i < PUSHD_ACCT_BUCKETS; i++)
		for (a = pd->accts[i]; a; a = a->next)
			if (a->dirty)
				acct_write(a);
	store_commit(pd->app.store);
}

static void acct_dirty(struct acct *a)
{
	struct pushd *pd = a->pd;

	a->dirty = 1;
	if (!ev_timer_armed(&pd->flush_timer))
		ev_timer_set(&pd->ev, &pd->flush_timer, FLUSH_MS);
}

void acct_startup(struct pushd *pd)
{
	ev_timer_init(&pd->flush_timer, acct_on_flush);
	store_push_startup(pd->app.store, (long long)time(NULL));
}

/* -- life ------------------------------------------------------------------ */

static void ring_clear(struct acct_event *e)
{
	unsigned i;

	for (i = 0; i < ACCT_NTYPES; i++) {
		free(e->states[i]);
		e->states[i] = NULL;
	}
}

static void acct_free(void *p)
{
	struct acct *a = p;
	unsigned i;

	struct acct_check *c;

	/* Cancelled here when acct_end ran inside a libcurl callback. */
	mc_cancel(a->pd, &a->job);
	mc_cancel(a->pd, &a->stream);
	mc_cancel(a->pd, &a->sjob);
	while ((c = a->checks) != NULL) {
		a->checks = c->next;
		mc_cancel(a->pd, &c->job);
		free(c);
	}
	sse_free(&a->sse);
	buf_free(&a->sresp);
	free(a->sub_id);
	free(a->verify_code);
	for (i = 0; i < ACCT_RING; i++)
		ring_clear(&a->ring[i]);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(a->states[i]);
	buf_wipe_free(&a->creds);
	buf_free(&a->resp);
	free(a->jmap_id);
	free(a->api_url);
	free(a->event_url);
	free(a);
}

/* The last tab closed: the channel stops, the credentials are wiped, the
 * row goes; the memory after the batch. */
static void acct_end(struct acct *a)
{
	struct pushd *pd = a->pd;
	struct acct_check *c;
	struct acct **pp;

	a->dead = 1;
	for (pp = acct_bucket(pd, a->key); *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	pd->naccts--;
	/* Inside libcurl's callback (a relayed event ended the last tab) the
	 * transfers are left to acct_free, after the batch; the stream's
	 * write callback stops it meanwhile. */
	if (!pd->in_curl) {
		mc_cancel(pd, &a->job);
		mc_cancel(pd, &a->stream);
		mc_cancel(pd, &a->sjob);
		for (c = a->checks; c; c = c->next)
			mc_cancel(pd, &c->job);
	}
	ev_timer_stop(&pd->ev, &a->sub_timer);
	ev_timer_stop(&pd->ev, &a->idle_timer);
	ev_timer_stop(&pd->ev, &a->grace_timer);
	ev_timer_stop(&pd->ev, &a->poll_timer);
	ev_timer_stop(&pd->ev, &a->relay_timer);
	ev_timer_stop(&pd->ev, &a->check_timer);
	buf_wipe_free(&a->creds);
	/* Poll and relay channels die with the process; a subscription
	 * outlives it and keeps its row. */
	store_push_delete_channel(pd->app.store, a->key);
	ev_defer(&pd->ev, acct_free, a);
}

/* Adds an event to the ring (taking the strings) and makes it the newest. */
static struct acct_event *ring_push(struct acct *a, unsigned mask)
{
	struct acct_event *e = &a->ring[a->ring_head];

	ring_clear(e);
	e->id = pushd_next_id(a->pd);
	e->mask = (uint8_t)mask;
	a->ring_head = (a->ring_head + 1) % ACCT_RING;
	if (a->ring_n < ACCT_RING)
		a->ring_n++;
	a->last_id = e->id;
	return e;
}

/* The JMAP accountId of the session's primary mail account. */
static char *primary_mail(struct pushd *pd, const struct sess *s)
{
	struct buf doc;
	json_object *o, *p;
	const char *id;
	char *out = NULL;

	buf_init(&doc, SESSION_DOC_MAX);
	if (sess_doc(&pd->app, s, &doc) == 0 && doc.len &&
	    (o = js_parse(doc.data, doc.len)) != NULL) {
		p = js_obj(o, "primaryAccounts");
		if (p && (id = js_str(p, MAIL_CAP)) != NULL)
			out = strdup(id);
		json_object_put(o);
	}
	buf_free(&doc);
	return out;
}

static int acct_set_creds(struct acct *a, const struct sess *s)
{
	buf_wipe_free(&a->creds);
	buf_init(&a->creds, 4096);
	return buf_puts(&a->creds, s->user) | buf_putc(&a->creds, '\0') |
	    buf_puts(&a->creds, s->pass);
}

/* Whether s signs in as the account does: the same login (in any case,
 * as the account key takes it) and the same password. */
static int creds_match(const struct acct *a, const struct sess *s)
{
	const char *user = a->creds.data, *pass;
	size_t n;

	if (user == NULL || strcasecmp(user, s->user))
		return 0;
	pass = user + strlen(user) + 1;
	n = strlen(s->pass);
	return a->creds.len - (size_t)(pass - user) == n &&
	    seal_equal(pass, s->pass, n);
}

/* Whose credentials the account calls the mail server with: its first
 * tab's; later, a newer sign-in's that the mail server accepted within
 * session_recheck (after a password change, the new sign-in brings the
 * new password). A tab whose session signs in otherwise (an older
 * sign-in with the old password, a copied cookie) is vouched for by
 * nothing the account does: it stands on its session's own record. 0, or
 * -1 when the credentials cannot be kept. */
static int acct_creds_for(struct acct *a, const struct sess *s,
    struct acct_tab *t, int first, time_t now)
{
	struct acct_tab *o;

	t->acct_creds = 0;
	if (!first && creds_match(a, s)) {
		t->acct_creds = 1;
		if (s->verified > a->accepted)
			a->accepted = s->verified;
		return 0;
	}
	if (!first && (!sess_fresh(&a->pd->app, s->verified, now) ||
	    s->created < a->creds_created))
		return 0;
	if (acct_set_creds(a, s) == -1)
		return -1;
	for (o = a->tabs; o; o = o->next)
		o->acct_creds = 0;
	t->acct_creds = 1;
	a->creds_created = s->created;
	a->accepted = s->verified;
	a->creds_refused = 0;
	return 0;
}

/* The mail server answered with the account's credentials. */
static void acct_accepted(struct acct *a, long status)
{
	if (status >= 200 && status < 300)
		a->accepted = (long long)time(NULL);
}

static size_t check_write(char *p, size_t size, size_t n, void *ctx)
{
	return n;   /* the session document itself is not needed */
}

static void check_done(struct mc_job *job, CURLcode rc, long status)
{
	struct acct_check *c = container_of(job, struct acct_check, job);
	struct acct *a = c->a;
	struct acct_check **pp;
	struct acct_tab *t, *next;

	if (a->dead)
		return;     /* acct_free frees it */
	for (pp = &a->checks; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	if (rc == CURLE_OK && status >= 200 && status < 300)
		sess_confirmed(&a->pd->app, c->sess_id, time(NULL));
	else if (rc == CURLE_OK && (status == 401 || status == 403)) {
		sess_refused(&a->pd->app, c->sess_id);
		for (t = a->tabs; t; t = next) {
			next = t->next;
			if (!t->dead && !strcmp(t->sess_id, c->sess_id))
				t->ops->end(t);
		}
	} else
		log_warn("pushd: a session check failed (%s, HTTP %ld)",
		    rc == CURLE_OK ? "answered" : curl_easy_strerror(rc), status);
	free(c);
}

/* Asks the mail server's session resource with s's credentials (as
 * sign-in does), in the multi loop: the answer ends the session and its
 * streams, or records the acceptance. When it cannot be asked, t stands
 * on its record. */
static void acct_check_start(struct acct *a, const struct sess *s,
    struct acct_tab *t)
{
	struct pushd *pd = a->pd;
	const struct cfg *cf = &pd->app.cfg;
	struct acct_check *c;
	char *url;
	CURL *e;

	/* One question at a time per session: more streams opened with the
	 * same cookie meanwhile wait for its answer (a refused password asked
	 * again and again would count failed logins against the gateway). */
	for (c = a->checks; c; c = c->next)
		if (!strcmp(c->sess_id, t->sess_id))
			return;
	c = calloc(1, sizeof(*c));
	url = upstream_join(cf, cf->upstream_session_path);
	e = c && url ? mc_easy(pd) : NULL;

	if (e && (curl_easy_setopt(e, CURLOPT_URL, url) ||
	    curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) ||
	    curl_easy_setopt(e, CURLOPT_USERNAME, s->user) ||
	    curl_easy_setopt(e, CURLOPT_PASSWORD, s->pass) ||
	    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L) ||
	    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 3L) ||
	    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") ||
	    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)CHECK_DOC_MAX) ||
	    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, check_write))) {
		curl_easy_cleanup(e);
		e = NULL;
	}
	free(url);
	if (e == NULL) {
		log_err("pushd: cannot set up a session check");
		free(c);
		return;
	}
	c->a = a;
	memcpy(c->sess_id, t->sess_id, sizeof(c->sess_id));
	c->job.easy = e;
	c->job.done = check_done;
	if (mc_start(pd, &c->job) == -1) {
		free(c);
		return;
	}
	c->next = a->checks;
	a->checks = c;
}

/* An easy handle for url with the account's credentials, or NULL. */
static CURL *acct_easy(struct acct *a, const char *url)
{
	CURL *e = mc_easy(a->pd);

	if (e && (curl_easy_setopt(e, CURLOPT_URL, url) ||
	    curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) ||
	    curl_easy_setopt(e, CURLOPT_USERNAME, a->creds.data) ||
	    curl_easy_setopt(e, CURLOPT_PASSWORD,
	    a->creds.data + strlen(a->creds.data) + 1))) {
		curl_easy_cleanup(e);
		e = NULL;
	}
	return e;
}

/* One JMAP API call of the account: body posted as JSON (copied), the
 * answer given to write with a as its context. NULL when it cannot be set
 * up. */
static CURL *acct_api_easy(struct acct *a, const char *body,
    curl_write_callback write)
{
	CURL *e = body ? acct_easy(a, a->api_url) : NULL;

	if (e && (curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body) ||
	    curl_easy_setopt(e, CURLOPT_HTTPHEADER, a->pd->json_headers) ||
	    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write) ||
	    curl_easy_setopt(e, CURLOPT_WRITEDATA, a))) {
		curl_easy_cleanup(e);
		e = NULL;
	}
	return e;
}

/* The states a StateChange's "changed" object names for the account: the
 * mask of types taken into states (strdup'd). */
static unsigned changed_states(const struct acct *a, json_object *changed,
    char *states[ACCT_NTYPES])
{
	json_object *mine = changed ? js_obj(changed, a->jmap_id) : NULL;
	const char *st;
	unsigned i, got = 0;

	for (i = 0; mine && i < ACCT_NTYPES; i++)
		if ((st = js_str(mine, acct_type_names[i])) != NULL &&
		    (states[i] = strdup(st)) != NULL)
			got |= 1u << i;
	return got;
}

static void acct_on_poll_timer(struct ev *ev, struct ev_timer *t)
{
	struct acct *a = container_of(t, struct acct, poll_timer);

	/* A poll in flight may have been sent before the change this one is
	 * for (a relay gap): it is run again when that one ends. */
	if (a->job.easy == NULL)
		acct_poll_start(a);
	else
		a->poll_again = 1;
}

static void acct_use_poll(struct acct *a)
{
	a->mode = ACCT_POLL;
	acct_dirty(a);
	ev_timer_set(&a->pd->ev, &a->poll_timer, 0);
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

/* -- relay ----------------------------------------------------------------- */

static int sub_enabled(struct pushd *pd);
static void sub_load(struct acct *a);
static void sub_next(struct acct *a);
static void sub_arm(struct acct *a);
static void sub_on_timer(struct ev *ev, struct ev_timer *t);
static void sub_on_idle(struct ev *ev, struct ev_timer *t);
static void sub_on_grace(struct ev *ev, struct ev_timer *t);
#define WANT_GET 1u
#define WANT_VERIFY 2u
#define WANT_RENEW 4u
#define WANT_DESTROY 8u       /* idle: destroy it, then the account ends */
#define WANT_DROP 16u         /* not verified in time: destroy, relay on */

static void acct_relay_start(struct acct *a);

/* One `event: state` frame from the upstream: the states of our account's
 * types become an event for the tabs (a ping is only a sign of life). */
static int relay_event(void *ctx, const char *event, const char *data,
    size_t len, const char *id)
{
	struct acct *a = ctx;
	char *states[ACCT_NTYPES] = { NULL };
	json_object *o;
	unsigned i, got;

	if (a->dead || strcmp(event, "state"))
		return 0;
	if ((o = js_parse(data, len)) == NULL)
		return 0;
	got = changed_states(a, js_obj(o, "changed"), states);
	json_object_put(o);
	if (got)
		acct_new_states(a, states, got, 0);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	return 0;
}

static void acct_on_check(struct ev *ev, struct ev_timer *t)
{
	struct acct *a = container_of(t, struct acct, check_timer);

	/* Nothing else asks the mail server in these modes: when it took the
	 * account's credentials longer ago than session_recheck, the poll's
	 * state call asks again, and its answer checks the tabs. */
	if (!sess_fresh(&a->pd->app, a->accepted, time(NULL)))
		acct_on_poll_timer(ev, &a->poll_timer);
	else
		acct_check_tabs(a, 0);
	if (!a->dead)
		ev_timer_set(ev, t, (uint64_t)a->pd->app.cfg.push_poll_interval * 1000);
}

/* The end of the response head: a 200 text/event-stream is a stream. No
 * libcurl call here but getinfo; the gap poll runs from the loop. */
static size_t relay_header(char *p, size_t size, size_t n, void *ctx)
{
	struct acct *a = ctx;
	struct pushd *pd = a->pd;
	const char *ct = NULL;
	long status = 0;

	if (n > 2 || (n == 2 && p[0] != '\r') || (n == 1 && p[0] != '\n'))
		return n;
	curl_easy_getinfo(a->stream.easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(a->stream.easy, CURLINFO_CONTENT_TYPE, &ct);
	acct_accepted(a, status);
	if (status != 200 || ct == NULL ||
	    strncasecmp(ct, "text/event-stream", 17))
		return n;
	a->relay_up = 1;
	ev_timer_stop(&pd->ev, &a->relay_timer);
	a->relay_fails = 0;
	a->backoff_ms = 0;
	if (a->mode != ACCT_RELAY && a->mode != ACCT_SUBSCRIPTION) {
		a->mode = ACCT_RELAY;
		acct_dirty(a);
		log_debug("pushd: relaying the mail server's event stream");
	}
	a->relay_ever = 1;
	/* One poll now: its answer is the baseline, or, after a reconnect,
	 * tells the tabs what changed while no stream was open. */
	ev_timer_stop(&pd->ev, &a->poll_timer);
	ev_timer_set(&pd->ev, &a->poll_timer, 0);
	if (!ev_timer_armed(&a->check_timer))
		ev_timer_set(&pd->ev, &a->check_timer,
		    (uint64_t)pd->app.cfg.push_poll_interval * 1000);
	return n;
}

static size_t relay_write(char *p, size_t size, size_t n, void *ctx)
{
	struct acct *a = ctx;
	struct pushd *pd = a->pd;
	int rc;

	if (!a->relay_up || a->dead)
		return 0;
	pd->in_curl++;
	rc = sse_feed(&a->sse, p, n);
	pd->in_curl--;
	if (rc == -1)
		log_warn("pushd: the mail server's event stream broke a rule; "
		    "reconnecting");
	/* Short: libcurl ends the transfer (relay_done runs). */
	return rc || a->dead || a->ntabs == 0 ? 0 : n;
}

static void acct_relay_done(struct mc_job *job, CURLcode rc, long status);

/* The reconnect after a backoff; while a stream opens, the deadline for
 * its head. A server (or a proxy before it) that takes the request and
 * never answers would otherwise hold the account without a channel, and
 * nothing polled, until the stall limit. */
static void acct_on_relay_timer(struct ev *ev, struct ev_timer *t)
{
	struct acct *a = container_of(t, struct acct, relay_timer);

	if (a->stream.easy && !a->relay_up) {
		mc_cancel(a->pd, &a->stream);
		acct_relay_done(&a->stream, CURLE_OPERATION_TIMEDOUT, 0);
		return;
	}
	if (a->mode != ACCT_SUBSCRIPTION && a->ntabs && a->stream.easy == NULL)
		acct_relay_start(a);
}

/* The stream ended: again, after a backoff that doubles while the
 * reconnects fail. */
static void relay_again(struct acct *a, CURLcode rc, long status)
{
	a->backoff_ms = a->backoff_ms ? a->backoff_ms * 2 : RELAY_BACKOFF_MIN_MS;
	if (a->backoff_ms > RELAY_BACKOFF_MAX_MS)
		a->backoff_ms = RELAY_BACKOFF_MAX_MS;
	log_debug("pushd: the event stream ended (%s, HTTP %ld); again in %u ms",
	    curl_easy_strerror(rc), status, a->backoff_ms);
	ev_timer_set(&a->pd->ev, &a->relay_timer, a->backoff_ms);
}

static void acct_relay_done(struct mc_job *job, CURLcode rc, long status)
{
	struct acct *a = container_of(job, struct acct, stream);
	int was_up = a->relay_up;

	if (a->dead)
		return;
	ev_timer_stop(&a->pd->ev, &a->relay_timer);   /* the head deadline */
	a->relay_up = 0;
	sse_reset(&a->sse);
	if (a->mode == ACCT_SUBSCRIPTION || a->ntabs == 0)
		return;
	if (status == 401) {
		/* As in poll mode: the sessions end, the app signs in again. */
		acct_check_tabs(a, 1);
		return;
	}
	if (!a->relay_ever && status != 0) {
		/* It answered, and not with a stream (Cyrus 3.6: 204): no
		 * event stream here. Polling, for good. */
		log_debug("pushd: event_url answered %ld: polling", status);
		ev_timer_stop(&a->pd->ev, &a->check_timer);
		acct_use_poll(a);
		return;
	}
	/* Counted up to the limit, not past it: the fallback happens once. */
	if (!was_up && a->relay_fails < RELAY_FAILS_MAX &&
	    ++a->relay_fails == RELAY_FAILS_MAX) {
		/* It stopped working, or never answered at all (refused,
		 * reset, no head by the deadline: a server mid-restart):
		 * polling, without dropping a tab, while the stream is tried
		 * on the backoff. */
		log_debug("pushd: the event stream fails (%s, HTTP %ld): polling",
		    curl_easy_strerror(rc), status);
		ev_timer_stop(&a->pd->ev, &a->check_timer);
		acct_use_poll(a);
	}
	relay_again(a, rc, status);
}

/* Opens the account's one upstream EventSource: types=*, closeafter=no,
 * a ping every 30 s (the stream's sign of life). */
static void acct_relay_start(struct acct *a)
{
	struct pushd *pd = a->pd;
	char *url;
	CURL *e;

	if (a->stream.easy)
		return;
	url = event_url_fill(a->event_url, "no", "30");
	e = url ? acct_easy(a, url) : NULL;
	a->stream.done = acct_relay_done;
	a->relay_up = 0;
	sse_reset(&a->sse);
	if (e == NULL ||
	    curl_easy_setopt(e, CURLOPT_HTTPHEADER, pd->sse_headers) ||
	    curl_easy_setopt(e, CURLOPT_TIMEOUT, 0L) ||
	    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L) ||
	    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, RELAY_STALL_S) ||
	    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, relay_header) ||
	    curl_easy_setopt(e, CURLOPT_HEADERDATA, a) ||
	    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, relay_write) ||
	    curl_easy_setopt(e, CURLOPT_WRITEDATA, a)) {
		curl_easy_cleanup(e);
		e = NULL;
	}
	free(url);
	a->stream.easy = e;
	if (e == NULL || mc_start(pd, &a->stream) == -1) {
		log_err("pushd: cannot open the event stream; polling");
		acct_use_poll(a);
		return;
	}
	ev_timer_set(&pd->ev, &a->relay_timer, (uint64_t)1000 *
	    (pd->app.cfg.upstream_connect_timeout + pd->app.cfg.upstream_timeout));
}

/* The channel for a new account (its first tab is attached, so the
 * credentials are there). The order is subscription (a PushSubscription
 * verified through /api/push/, nothing held open), relay (one upstream
 * EventSource), poll, each falling back to the next without dropping a
 * tab. push_mode "poll" polls, "relay" never subscribes; "auto" and
 * "subscription" subscribe when push_public_url allows. */
static void acct_start(struct acct *a)
{
	int want = a->pd->app.cfg.push_mode;

	a->mode = ACCT_POLL;
	if (sub_enabled(a->pd)) {
		/* A verified subscription from an earlier run is used at once;
		 * the first call (PushSubscription/get) checks it is still
		 * there and clears our leftovers. Meanwhile, and until a new one
		 * is verified, the relay (or poll) carries the changes. */
		sub_load(a);
		a->sub_want |= WANT_GET;
		sub_next(a);
		if (a->sub_state == SUB_VERIFIED) {
			a->mode = ACCT_SUBSCRIPTION;
			acct_dirty(a);
			ev_timer_set(&a->pd->ev, &a->check_timer,
			    (uint64_t)a->pd->app.cfg.push_poll_interval * 1000);
			sub_arm(a);
			return;
		}
	}
	if (want != CFG_PUSH_POLL && *a->event_url) {
		/* Relay until the stream says otherwise: a server without
		 * one (not 200 text/event-stream) makes it poll. */
		acct_relay_start(a);
		return;
	}
	acct_use_poll(a);
}

static struct acct *acct_new(struct pushd *pd, const struct sess *s)
{
	struct acct *a = calloc(1, sizeof(*a));
	struct acct **b;

	if (a == NULL)
		return NULL;
	a->pd = pd;
	memcpy(a->key, s->account, sizeof(a->key));
	buf_init(&a->creds, 4096);
	buf_init(&a->resp, POLL_RESP_MAX);
	a->jmap_id = primary_mail(pd, s);
	a->api_url = strdup(s->api_url);
	a->event_url = strdup(s->event_url);
	if (!a->jmap_id || !a->api_url || !a->event_url) {
		log_warn("pushd: a session without a primary mail account");
		acct_free(a);
		return NULL;
	}
	ring_push(a, 0);      /* the mark a first Last-Event-ID can name */
	ev_timer_init(&a->poll_timer, acct_on_poll_timer);
	ev_timer_init(&a->relay_timer, acct_on_relay_timer);
	ev_timer_init(&a->check_timer, acct_on_check);
	sse_init(&a->sse, relay_event, a);
	ev_timer_init(&a->sub_timer, sub_on_timer);
	ev_timer_init(&a->idle_timer, sub_on_idle);
	ev_timer_init(&a->grace_timer, sub_on_grace);
	buf_init(&a->sresp, POLL_RESP_MAX);
	b = acct_bucket(pd, a->key);
	a->next = *b;
	*b = a;
	pd->naccts++;
	return a;
}

int acct_attach(struct pushd *pd, const struct sess *s, struct acct_tab *t)
{
	struct acct *a = acct_find(pd, s->account);
	int fresh = a == NULL;
	time_t now = time(NULL);

	if (fresh && (a = acct_new(pd, s)) == NULL)
		return -1;
	if (acct_creds_for(a, s, t, fresh || a->creds_refused, now) == -1) {
		if (a->ntabs == 0)
			acct_end(a);
		return -1;
	}
	t->acct = a;
	t->prev = NULL;
	t->next = a->tabs;
	if (a->tabs)
		a->tabs->prev = t;
	a->tabs = t;
	a->ntabs++;
	acct_dirty(a);
	if (t->visible && a->nvisible++ == 0)
		acct_poll_sooner(a);
	/* Neither the account's calls nor a recent record vouch for it: its
	 * own credentials are asked (the account's first call asks its first
	 * tab's). */
	if (!t->acct_creds && !sess_fresh(&pd->app, s->verified, now))
		acct_check_start(a, s, t);
	if (fresh)
		acct_start(a);
	else if (a->ntabs == 1 && ev_timer_armed(&a->idle_timer)) {
		/* Back from idle: the subscription carries on; without a
		 * verified one the relay (or poll) starts again. */
		ev_timer_stop(&pd->ev, &a->idle_timer);
		ev_timer_set(&pd->ev, &a->check_timer,
		    (uint64_t)pd->app.cfg.push_poll_interval * 1000);
		if (a->mode != ACCT_SUBSCRIPTION)
			acct_relay_start(a);
	}
	return 0;
}

void acct_detach(struct acct_tab *t)
{
	struct acct *a = t->acct;

	if (t->prev)
		t->prev->next = t->next;
	else
		a->tabs = t->next;
	if (t->next)
		t->next->prev = t->prev;
	/* t->next stays: a fan-out walking the list goes on from here. */
	if (t->visible)
		a->nvisible--;
	if (--a->ntabs == 0 && (a->sub_state == SUB_PENDING ||
	    a->sub_state == SUB_VERIFIED) && !a->pd->stopping) {
		/* A subscription outlives the tabs for push_idle (with the
		 * credentials, to destroy it then); the relay and the poll
		 * stop now. */
		struct pushd *pd = a->pd;

		if (!pd->in_curl)
			mc_cancel(pd, &a->stream);
		a->relay_up = 0;
		ev_timer_stop(&pd->ev, &a->relay_timer);
		ev_timer_stop(&pd->ev, &a->poll_timer);
		ev_timer_stop(&pd->ev, &a->check_timer);
		ev_timer_stop(&pd->ev, &a->grace_timer);
		ev_timer_set(&pd->ev, &a->idle_timer,
		    (uint64_t)pd->app.cfg.push_idle * 1000);
		acct_dirty(a);
	} else if (a->ntabs == 0)
		acct_end(a);
	else
		acct_dirty(a);
}

int acct_set_visible(struct pushd *pd, const struct sess *s, int visible)
{
	struct acct *a = acct_find(pd, s->account);
	struct acct_tab *t;
	int n = 0;

	for (t = a ? a->tabs : NULL; t; t = t->next) {
		if (t->dead || strcmp(t->sess_id, s->id))
			continue;
		n++;
		if (t->visible == !!visible)
			continue;
		t->visible = !!visible;
		if (!visible)
			a->nvisible--;
		else if (a->nvisible++ == 0)
			acct_poll_sooner(a);
	}
	return n;
}

void acct_shutdown(struct pushd *pd)
{
	unsigned i;

	/* Tabs are gone by now, and with them every account; this catches an
	 * account whose creation failed half-way. */
	for (i = 0; i < PUSHD_ACCT_BUCKETS; i++)
		while (pd->accts[i])
			acct_end(pd->accts[i]);
}

/* -- events ---------------------------------------------------------------- */

/* The frame of event e for a tab that wants types: its length, 0 when
 * nothing in e is for the tab, -1 on error. */
static int event_frame(const struct acct *a, const struct acct_event *e,
    unsigned types, struct buf *out)
{
	json_object *o, *changed, *st;
	unsigned i, mask = e->mask & types;
	int rc;

	if (mask == 0)
		return 0;
	o = json_object_new_object();
	changed = json_object_new_object();
	st = json_object_new_object();
	for (i = 0; i < ACCT_NTYPES; i++)
		if (mask & (1u << i))
			json_object_object_add(st, acct_type_names[i],
			    json_object_new_string(e->states[i]));
	json_object_object_add(changed, a->jmap_id, st);
	json_object_object_add(o, "@type", json_object_new_string("StateChange"));
	json_object_object_add(o, "changed", changed);
	buf_reset(out);
	rc = buf_printf(out, "event: state\nid: %llu\ndata: %s\n\n",
	    (unsigned long long)e->id,
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return rc == -1 ? -1 : (int)out->len;
}

/* Sends e to t; a closeafter=state tab then ends. */
static void event_to_tab(struct acct *a, const struct acct_event *e,
    struct acct_tab *t, struct buf *frame)
{
	if (event_frame(a, e, t->types, frame) <= 0)
		return;
	if (t->ops->send(t, frame->data, frame->len) == 0 && t->closeafter)
		t->ops->end(t);
}

static void acct_emit(struct acct *a, const struct acct_event *e)
{
	struct buf full, one;
	struct acct_tab *t, *next;

	buf_init(&full, 64 * 1024);
	buf_init(&one, 64 * 1024);
	/* Most tabs want everything: that frame is made once. */
	event_frame(a, e, ACCT_ALL, &full);
	for (t = a->tabs; t; t = next) {
		next = t->next;
		if (t->dead)
			continue;
		if ((t->types & e->mask) == e->mask) {
			if (t->ops->send(t, full.data, full.len) == 0 && t->closeafter)
				t->ops->end(t);
		} else
			event_to_tab(a, e, t, &one);
	}
	buf_free(&full);
	buf_free(&one);
}

static int parse_id(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

void acct_replay(struct acct *a, struct acct_tab *t, const char *last_event_id)
{
	struct buf frame;
	uint64_t last;
	unsigned i, k, start = (a->ring_head + ACCT_RING - a->ring_n) % ACCT_RING;
	char resync[96];
	int n;

	if (last_event_id == NULL || *last_event_id == '\0')
		return;
	/* Held in the ring: everything after it can be told. */
	i = a->ring_n;
	if (parse_id(last_event_id, &last) == 0)
		for (i = 0; i < a->ring_n; i++)
			if (a->ring[(start + i) % ACCT_RING].id == last)
				break;
	if (i == a->ring_n) {
		n = snprintf(resync, sizeof(resync),
		    "event: resync\nid: %llu\ndata: {}\n\n",
		    (unsigned long long)a->last_id);
		t->ops->send(t, resync, (size_t)n);
		return;
	}
	buf_init(&frame, 64 * 1024);
	for (k = i + 1; k < a->ring_n && !t->dead; k++)
		event_to_tab(a, &a->ring[(start + k) % ACCT_RING], t, &frame);
	buf_free(&frame);
}

/* -- polling --------------------------------------------------------------- */

static size_t poll_write(char *p, size_t size, size_t n, void *ctx)
{
	struct acct *a = ctx;

	/* Returning short makes libcurl stop: the answer passed its cap. */
	return buf_append(&a->resp, p, n) == -1 ? 0 : n;
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

static void acct_poll_done(struct mc_job *job, CURLcode rc, long status);

/* The poll interval: push_poll_visible while a tab of the account is in
 * view (the app says so with visible=1), else push_poll_interval. */
static uint64_t acct_poll_ms(const struct acct *a)
{
	const struct cfg *c = &a->pd->app.cfg;

	return (uint64_t)(a->nvisible ? c->push_poll_visible :
	    c->push_poll_interval) * 1000;
}

/* The next poll, one interval after the last one began (not ended), so
 * that a change waits at most the interval plus one poll's answer; an
 * upstream slower than the interval still gets POLL_REST_MS between two. */
#define POLL_REST_MS 1000
static void acct_poll_again(struct acct *a)
{
	uint64_t iv = acct_poll_ms(a), since = a->pd->ev.now - a->poll_started;

	ev_timer_set(&a->pd->ev, &a->poll_timer,
	    since + POLL_REST_MS < iv ? iv - since : POLL_REST_MS);
}

/* A tab came into view: a poll waiting longer than the visible interval
 * is brought forward (one in flight reschedules itself when it ends). */
static void acct_poll_sooner(struct acct *a)
{
	if (a->mode == ACCT_POLL && ev_timer_armed(&a->poll_timer) &&
	    a->job.easy == NULL)
		acct_poll_again(a);
}

static void acct_poll_start(struct acct *a)
{
	char *body = poll_body(a);
	CURL *e = acct_api_easy(a, body, poll_write);

	free(body);
	a->job.done = acct_poll_done;
	a->poll_again = 0;
	a->poll_started = a->pd->ev.now;
	buf_reset(&a->resp);
	if (e == NULL)
		log_err("pushd: cannot set up a poll");
	a->job.easy = e;
	if (e == NULL || mc_start(a->pd, &a->job) == -1)
		acct_poll_again(a);
}

/* The states in a poll's answer: the mask of types that answered. */
static unsigned poll_states(json_object *root, char *states[ACCT_NTYPES])
{
	json_object *resps = NULL, *r, *args;
	const char *tag, *st;
	unsigned i, mask = 0;
	size_t k;

	if (!json_object_object_get_ex(root, "methodResponses", &resps) ||
	    !json_object_is_type(resps, json_type_array))
		return 0;
	for (k = 0; k < json_object_array_length(resps); k++) {
		r = json_object_array_get_idx(resps, k);
		if (!json_object_is_type(r, json_type_array) ||
		    json_object_array_length(r) != 3)
			continue;
		args = json_object_array_get_idx(r, 1);
		if (!json_object_is_type(json_object_array_get_idx(r, 2), json_type_string))
			continue;
		tag = json_object_get_string(json_object_array_get_idx(r, 2));
		for (i = 0; i < ACCT_NTYPES; i++)
			if (!strcmp(tag, acct_type_names[i]) &&
			    (st = js_str(args, "state")) != NULL && !states[i] &&
			    (states[i] = strdup(st)) != NULL)
				mask |= 1u << i;
	}
	return mask;
}

/* Compares with the states seen before; a change becomes an event. The
 * first answer only sets the baseline. */
static void acct_new_states(struct acct *a, char *states[ACCT_NTYPES],
    unsigned got, int quiet_first)
{
	struct acct_event *e = NULL;
	unsigned i, changed = 0, first = a->states[0] == NULL &&
	    a->states[1] == NULL && a->states[2] == NULL;

	for (i = 0; i < ACCT_NTYPES; i++)
		if ((got & (1u << i)) && (!a->states[i] ||
		    strcmp(a->states[i], states[i])))
			changed |= 1u << i;
	if (changed && !(first && quiet_first)) {
		e = ring_push(a, changed);
		for (i = 0; i < ACCT_NTYPES; i++)
			if (changed & (1u << i))
				e->states[i] = strdup(states[i]);
	}
	for (i = 0; i < ACCT_NTYPES; i++)
		if (changed & (1u << i)) {
			free(a->states[i]);
			a->states[i] = states[i];
			states[i] = NULL;
		}
	if (changed)
		acct_dirty(a);
	if (e)
		acct_emit(a, e);
}

/* Ends the tabs whose session was signed out or expired, and those that
 * nothing vouches for: not on the account's credentials, and not
 * accepted by the mail server within session_recheck (they come back,
 * and their own credentials are asked). On each poll, and every interval
 * in the other modes, so such a stream ends within one interval of it.
 * revoke: the mail server refused the account's credentials; the
 * sessions they came from end, the other tabs' streams too (they come
 * back with their own). */
static void acct_check_tabs(struct acct *a, int revoke)
{
	struct pushd *pd = a->pd;
	struct acct_tab *t, *next;
	time_t now = time(NULL);
	long long verified = 0;
	int alive;

	if (revoke)
		a->creds_refused = 1;
	for (t = a->tabs; t; t = next) {
		next = t->next;
		if (t->dead)
			continue;
		if (revoke) {
			if (t->acct_creds)
				sess_refused(&pd->app, t->sess_id);
			t->ops->end(t);
			continue;
		}
		alive = sess_state(&pd->app, t->sess_id, now, &verified);
		if (alive == 0 || (alive == 1 && !t->acct_creds &&
		    !sess_fresh(&pd->app, verified, now)))
			t->ops->end(t);
	}
}

static void acct_poll_done(struct mc_job *job, CURLcode rc, long status)
{
	struct acct *a = container_of(job, struct acct, job);
	char *states[ACCT_NTYPES] = { NULL };
	json_object *root = NULL;
	unsigned i, got = 0;

	if (a->dead)
		return;
	if (rc == CURLE_OK)
		acct_accepted(a, status);
	/* The mail server refused the password: like the relay, pushd ends
	 * the sessions (the app signs in again) rather than keep failing a
	 * login every interval, which could get the gateway banned. */
	acct_check_tabs(a, rc == CURLE_OK && status == 401);
	if (a->dead)
		return;
	if (rc == CURLE_OK && status == 200 && a->resp.len &&
	    (root = js_parse(a->resp.data, a->resp.len)) != NULL)
		got = poll_states(root, states);
	json_object_put(root);
	buf_free(&a->resp);
	if (got == 0 && !a->failing)
		log_warn("pushd: poll failed (%s, HTTP %ld)",
		    rc == CURLE_OK ? "answered" : curl_easy_strerror(rc), status);
	a->failing = got == 0;
	if (got)
		acct_new_states(a, states, got, 1);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	/* In relay mode the poll ran once, for the baseline or a gap, unless
	 * another was asked for while this one ran. */
	if (a->dead)
		return;
	if (a->poll_again)
		ev_timer_set(&a->pd->ev, &a->poll_timer, 0);
	else if (a->mode == ACCT_POLL)
		acct_poll_again(a);
}

/* -- subscription ---------------------------------------------------------- */

#define CORE_CAP "urn:ietf:params:jmap:core"
#define SUB_GRACE_MS 3000      /* the relay overlaps a new subscription */
#define SUB_CHECK_MAX_S 3600L

enum { SOP_NONE, SOP_GET, SOP_SET, SOP_VERIFY, SOP_RENEW, SOP_DESTROY, SOP_DROP,
    SOP_CLEAN };

/* push_public_url must be an https origin (the JMAP server refuses other
 * callbacks), and push_mode auto or subscription. */
static int sub_enabled(struct pushd *pd)
{
	const struct cfg *c = &pd->app.cfg;

	return c->push_public_url && !strncmp(c->push_public_url, "https://", 8) &&
	    (c->push_mode == CFG_PUSH_AUTO || c->push_mode == CFG_PUSH_SUBSCRIPTION);
}

/* The deviceClientId of this installation: the same for every account, so
 * that leftovers are recognised as ours, and nobody else's. */
static void sub_device(struct pushd *pd, char out[APP_KEY_HEX + 1])
{
	app_key(&pd->app, "device", "pushd", out);
}

static void sub_load(struct acct *a)
{
	long long expires;
	char *id;

	if (store_push_held(a->pd->app.store, a->key, &id, a->token_hash,
	    ACCT_TOKEN_HEX, &expires) != 1)
		return;
	if (expires > (long long)time(NULL)) {
		a->sub_id = id;
		a->sub_expires = expires;
		a->sub_state = SUB_VERIFIED;
	} else {
		free(id);
		memset(a->token_hash, 0, sizeof(a->token_hash));
	}
}

/* The next renewal check, or the verification deadline. */
static void sub_arm(struct acct *a)
{
	const struct cfg *c = &a->pd->app.cfg;
	long s = c->push_renew / 4;

	if (a->sub_state == SUB_PENDING)
		s = c->push_verify_timeout;
	else if (s > SUB_CHECK_MAX_S)
		s = SUB_CHECK_MAX_S;
	if (s < 1)
		s = 1;
	ev_timer_set(&a->pd->ev, &a->sub_timer, (uint64_t)s * 1000);
}

static void sub_clear(struct acct *a, enum acct_sub st)
{
	free(a->sub_id);
	a->sub_id = NULL;
	free(a->verify_code);
	a->verify_code = NULL;
	seal_wipe(a->token_hash, sizeof(a->token_hash));
	a->sub_state = (uint8_t)st;
	ev_timer_stop(&a->pd->ev, &a->sub_timer);
}

/* Back to the relay (or poll) from subscription mode, without a gap. */
static void sub_lost(struct acct *a)
{
	if (a->mode == ACCT_SUBSCRIPTION && a->ntabs) {
		a->mode = ACCT_RELAY;
		acct_dirty(a);
		if (*a->event_url && a->pd->app.cfg.push_mode != CFG_PUSH_POLL)
			acct_relay_start(a);
		else
			acct_use_poll(a);
	}
}

static size_t sub_write(char *p, size_t size, size_t n, void *ctx)
{
	struct acct *a = ctx;

	return buf_append(&a->sresp, p, n) == -1 ? 0 : n;
}

static void sub_done(struct mc_job *job, CURLcode rc, long status);

/* One PushSubscription call (args taken): 0, or -1. */
static int sub_call(struct acct *a, int op, const char *method, json_object *args)
{
	json_object *o = json_object_new_object(), *using, *calls, *call;
	CURL *e;

	json_object_object_add(args, "accountId", json_object_new_string(a->jmap_id));
	using = json_object_new_array();
	json_object_array_add(using, json_object_new_string(CORE_CAP));
	call = json_object_new_array();
	json_object_array_add(call, json_object_new_string(method));
	json_object_array_add(call, args);
	json_object_array_add(call, json_object_new_string("p"));
	calls = json_object_new_array();
	json_object_array_add(calls, call);
	json_object_object_add(o, "using", using);
	json_object_object_add(o, "methodCalls", calls);
	buf_free(&a->sresp);
	e = acct_api_easy(a,
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), sub_write);
	json_object_put(o);
	if (e == NULL)
		return -1;
	a->sjob.easy = e;
	a->sjob.done = sub_done;
	a->sop = (uint8_t)op;
	return mc_start(a->pd, &a->sjob);
}

static json_object *sub_utc(long long t)
{
	char out[32];
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, sizeof(out), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_object_new_string(out);
}

/* A UTCDate, or 0. */
static long long sub_parse_utc(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (s == NULL || (end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return 0;
	return (long long)timegm(&tm);
}

static json_object *sub_create_args(struct acct *a, json_object *destroy)
{
	struct pushd *pd = a->pd;
	unsigned char rnd[32];
	char dev[APP_KEY_HEX + 1], url[1024], token[44];
	json_object *args = json_object_new_object(), *create, *c;
	size_t n;

	/* The token goes into the URL the JMAP server is given, and only
	 * its hash is kept. */
	seal_random(rnd, sizeof(rnd));
	seal_b64url_encode(rnd, sizeof(rnd), token);
	seal_wipe(rnd, sizeof(rnd));
	acct_token_hash(token, a->token_hash);
	sub_device(pd, dev);
	n = strlen(pd->app.cfg.push_public_url);
	while (n && pd->app.cfg.push_public_url[n - 1] == '/')
		n--;
	snprintf(url, sizeof(url), "%.*s/api/push/%s", (int)n,
	    pd->app.cfg.push_public_url, token);
	seal_wipe(token, sizeof(token));
	a->sub_expires = (long long)time(NULL) + pd->app.cfg.push_expiry;
	c = json_object_new_object();
	json_object_object_add(c, "deviceClientId", json_object_new_string(dev));
	json_object_object_add(c, "url", json_object_new_string(url));
	seal_wipe(url, sizeof(url));
	json_object_object_add(c, "expires", sub_utc(a->sub_expires));
	json_object_object_add(c, "types", NULL);
	create = json_object_new_object();
	json_object_object_add(create, "c", c);
	json_object_object_add(args, "create", create);
	if (destroy)
		json_object_object_add(args, "destroy", destroy);
	return args;
}

static json_object *sub_ids(const char *id)
{
	json_object *a = json_object_new_array();

	json_object_array_add(a, json_object_new_string(id));
	return a;
}

/* Starts the most urgent call that waits, when none is in flight. */
static void sub_next(struct acct *a)
{
	json_object *args, *upd, *patch;
	unsigned w;
	int op = SOP_NONE, rc = 0;

	if (a->dead || a->sjob.easy || a->pd->in_curl)
		return;
	w = a->sub_want;
	args = json_object_new_object();
	if (w & WANT_DESTROY) {
		a->sub_want &= ~WANT_DESTROY;
		op = SOP_DESTROY;
	} else if ((w & WANT_VERIFY) && a->verify_code && a->sub_id) {
		a->sub_want &= ~WANT_VERIFY;
		patch = json_object_new_object();
		json_object_object_add(patch, "verificationCode",
		    json_object_new_string(a->verify_code));
		upd = json_object_new_object();
		json_object_object_add(upd, a->sub_id, patch);
		json_object_object_add(args, "update", upd);
		rc = sub_call(a, SOP_VERIFY, "PushSubscription/set", args);
		goto started;
	} else if (w & WANT_GET) {
		a->sub_want &= ~WANT_GET;
		json_object_object_add(args, "ids", NULL);
		rc = sub_call(a, SOP_GET, "PushSubscription/get", args);
		goto started;
	} else if ((w & WANT_RENEW) && a->sub_id) {
		a->sub_want &= ~WANT_RENEW;
		patch = json_object_new_object();
		json_object_object_add(patch, "expires", sub_utc((long long)time(NULL) +
		    a->pd->app.cfg.push_expiry));
		upd = json_object_new_object();
		json_object_object_add(upd, a->sub_id, patch);
		json_object_object_add(args, "update", upd);
		rc = sub_call(a, SOP_RENEW, "PushSubscription/set", args);
		goto started;
	} else if (w & WANT_DROP) {
		a->sub_want &= ~WANT_DROP;
		op = SOP_DROP;
	}
	if (op == SOP_NONE) {
		json_object_put(args);
		return;
	}
	if (a->sub_id == NULL) {
		/* Nothing to destroy. */
		json_object_put(args);
		if (op == SOP_DESTROY) {
			a->sop = SOP_DESTROY;
			sub_done(&a->sjob, CURLE_OK, 0);
		}
		return;
	}
	json_object_object_add(args, "destroy", sub_ids(a->sub_id));
	rc = sub_call(a, op, "PushSubscription/set", args);
started:
	if (rc == -1) {
		log_warn("pushd: cannot make a PushSubscription call");
		if (op == SOP_DESTROY)
			acct_end(a);
	}
}

/* The arguments of the call's answer, inside root; NULL when it failed. */
static json_object *sub_answer(struct acct *a, long status, const char *method,
    json_object **root)
{
	json_object *resps, *r, *args;

	*root = NULL;
	if (status != 200 || a->sresp.len == 0 ||
	    (*root = js_parse(a->sresp.data, a->sresp.len)) == NULL)
		return NULL;
	if (!json_object_object_get_ex(*root, "methodResponses", &resps) ||
	    !json_object_is_type(resps, json_type_array) ||
	    json_object_array_length(resps) < 1 ||
	    !json_object_is_type(r = json_object_array_get_idx(resps, 0),
	    json_type_array) || json_object_array_length(r) != 3 ||
	    strcmp(json_object_get_string(json_object_array_get_idx(r, 0)), method) ||
	    !json_object_is_type(args = json_object_array_get_idx(r, 1),
	    json_type_object))
		return NULL;
	return args;
}

/* Verified: subscription mode. The relay goes on for a short grace, so
 * that an event the upstream stream still held back is not lost (the
 * same state from both is told once). */
static void sub_verified(struct acct *a)
{
	struct pushd *pd = a->pd;

	a->sub_state = SUB_VERIFIED;
	free(a->verify_code);
	a->verify_code = NULL;
	a->mode = ACCT_SUBSCRIPTION;
	acct_dirty(a);
	log_info("pushd: a push subscription is verified; the relay ends");
	ev_timer_set(&pd->ev, &a->grace_timer, SUB_GRACE_MS);
	if (!ev_timer_armed(&a->check_timer) && a->ntabs)
		ev_timer_set(&pd->ev, &a->check_timer,
		    (uint64_t)pd->app.cfg.push_poll_interval * 1000);
	sub_arm(a);
}

static void sub_on_grace(struct ev *ev, struct ev_timer *t)
{
	struct acct *a = container_of(t, struct acct, grace_timer);

	if (a->mode != ACCT_SUBSCRIPTION)
		return;
	mc_cancel(a->pd, &a->stream);
	a->relay_up = 0;
	ev_timer_stop(ev, &a->relay_timer);
	ev_timer_stop(ev, &a->poll_timer);
}

static void sub_got_list(struct acct *a, json_object *args)
{
	json_object *list = NULL, *destroy = NULL, *it;
	char dev[APP_KEY_HEX + 1];
	const char *id, *d;
	int held = 0;
	size_t k;

	json_object_object_get_ex(args, "list", &list);
	sub_device(a->pd, dev);
	for (k = 0; list && json_object_is_type(list, json_type_array) &&
	    k < json_object_array_length(list); k++) {
		it = json_object_array_get_idx(list, k);
		if ((id = js_str(it, "id")) == NULL ||
		    (d = js_str(it, "deviceClientId")) == NULL || strcmp(d, dev))
			continue;     /* somebody else's: never touched */
		if (a->sub_id && !strcmp(id, a->sub_id) &&
		    js_str(it, "verificationCode") != NULL) {
			held = 1;
			continue;
		}
		if (destroy == NULL)
			destroy = json_object_new_array();
		json_object_array_add(destroy, json_object_new_string(id));
	}
	if (a->sub_state == SUB_VERIFIED && !held) {
		/* The server no longer has it (expired, or removed). */
		log_info("pushd: the stored push subscription is gone; a new one");
		sub_clear(a, SUB_NONE);
		sub_lost(a);
	}
	if (held) {
		if (destroy) {
			json_object *args2 = json_object_new_object();

			json_object_object_add(args2, "destroy", destroy);
			/* Our leftovers only: the answer changes nothing. */
			sub_call(a, SOP_CLEAN, "PushSubscription/set", args2);
		}
		return;
	}
	if (a->ntabs == 0) {
		json_object_put(destroy);
		return;
	}
	if (sub_call(a, SOP_SET, "PushSubscription/set",
	    sub_create_args(a, destroy)) == -1)
		sub_clear(a, SUB_FAILED);
}

static void sub_done(struct mc_job *job, CURLcode rc, long status)
{
	struct acct *a = container_of(job, struct acct, sjob);
	json_object *root = NULL, *args, *o;
	const char *method = a->sop == SOP_GET ? "PushSubscription/get" :
	    "PushSubscription/set";
	const char *id, *exp;
	int op = a->sop;

	if (a->dead)
		return;
	a->sop = SOP_NONE;
	if (rc == CURLE_OK)
		acct_accepted(a, status);
	args = rc == CURLE_OK ? sub_answer(a, status, method, &root) : NULL;
	buf_free(&a->sresp);
	if (rc == CURLE_OK && status == 401) {
		json_object_put(root);
		acct_check_tabs(a, 1);
		if (!a->dead && a->ntabs == 0)
			acct_end(a);
		return;
	}
	switch (op) {
	case SOP_GET:
		if (args == NULL) {
			/* No PushSubscription here (unknownMethod), or it
			 * failed: the relay (or poll) it is. */
			log_info("pushd: no push subscriptions on this server; "
			    "relay or poll");
			sub_clear(a, SUB_FAILED);
			sub_lost(a);
		} else
			sub_got_list(a, args);
		break;
	case SOP_SET:
		o = args ? js_obj(args, "created") : NULL;
		o = o ? js_obj(o, "c") : NULL;
		if (o && (id = js_str(o, "id")) != NULL &&
		    (a->sub_id = strdup(id)) != NULL) {
			if ((exp = js_str(o, "expires")) != NULL &&
			    sub_parse_utc(exp) > 0)
				a->sub_expires = sub_parse_utc(exp);
			a->sub_state = SUB_PENDING;
			sub_arm(a);
			log_debug("pushd: push subscription %s created", id);
		} else {
			log_warn("pushd: the mail server did not create the push "
			    "subscription; relay or poll");
			sub_clear(a, SUB_FAILED);
		}
		break;
	case SOP_VERIFY:
		o = args ? js_obj(args, "updated") : NULL;
		if (o && a->sub_id && json_object_object_get_ex(o, a->sub_id, NULL))
			sub_verified(a);
		else
			log_warn("pushd: the push verification was not accepted");
		break;
	case SOP_RENEW:
		o = args ? js_obj(args, "updated") : NULL;
		if (o && a->sub_id && json_object_object_get_ex(o, a->sub_id, NULL)) {
			json_object *u = js_obj(o, a->sub_id);

			a->sub_expires = (long long)time(NULL) + a->pd->app.cfg.push_expiry;
			if (u && (exp = js_str(u, "expires")) != NULL &&
			    sub_parse_utc(exp) > 0)
				a->sub_expires = sub_parse_utc(exp);
			acct_dirty(a);
			log_debug("pushd: push subscription renewed");
		} else if (args) {
			/* notUpdated: gone. A new one. */
			sub_clear(a, SUB_NONE);
			sub_lost(a);
			a->sub_want |= WANT_GET;
		}
		if (a->sub_state == SUB_VERIFIED)
			sub_arm(a);
		break;
	case SOP_DROP:
		sub_clear(a, SUB_FAILED);
		break;
	case SOP_DESTROY: {
		store_push_delete(a->pd->app.store, a->key);
		sub_clear(a, SUB_NONE);
		json_object_put(root);
		acct_end(a);
		return;
	}
	default:
		break;
	}
	json_object_put(root);
	sub_next(a);
}

/* Renewal check (verified) or verification deadline (pending). */
static void sub_on_timer(struct ev *ev, struct ev_timer *t)
{
	struct acct *a = container_of(t, struct acct, sub_timer);
	const struct cfg *c = &a->pd->app.cfg;

	if (a->sub_state == SUB_PENDING) {
		log_warn("pushd: the push subscription was not verified in time; "
		    "relay or poll");
		a->sub_state = SUB_FAILED;
		a->sub_want |= WANT_DROP;
		sub_next(a);
		return;
	}
	if (a->sub_state != SUB_VERIFIED)
		return;
	if (a->sub_expires - (long long)time(NULL) < c->push_renew) {
		a->sub_want |= WANT_RENEW;
		sub_next(a);
	}
	sub_arm(a);
}

static void sub_on_idle(struct ev *ev, struct ev_timer *t)
{
	struct acct *a = container_of(t, struct acct, idle_timer);

	if (a->ntabs)
		return;
	a->sub_want |= WANT_DESTROY;
	if (a->sjob.easy == NULL)
		sub_next(a);
}

void acct_token_hash(const char *token, char out[ACCT_TOKEN_HEX + 1])
{
	unsigned char h[SEAL_HASH_LEN];

	seal_sha256(token, strlen(token), h);
	seal_hex(h, sizeof(h), out);
}

/* The account whose token hashes to hash, compared in constant time. */
static struct acct *acct_by_token(struct pushd *pd, const char *hash)
{
	struct acct *a;
	unsigned i;

	for (i = 0; i < PUSHD_ACCT_BUCKETS; i++)
		for (a = pd->accts[i]; a; a = a->next)
			if (a->token_hash[0] &&
			    seal_equal(a->token_hash, hash, ACCT_TOKEN_HEX))
				return a;
	return NULL;
}

/* A verified subscription whose account has no tabs in this process (a
 * restart): 1 when the database holds the token's hash. Looked up by the
 * hash, so that what the lookup's time tells is of a hash, not of the
 * token. */
static int token_stored(struct pushd *pd, const char *hash)
{
	return store_push_token_known(pd->app.store, hash);
}

int acct_token_known(struct pushd *pd, const char *token)
{
	char hash[ACCT_TOKEN_HEX + 1];

	acct_token_hash(token, hash);
	return acct_by_token(pd, hash) ? 1 : token_stored(pd, hash);
}

int acct_push_callback(struct pushd *pd, const char *token,
    const char *content_type, const char *body, size_t n)
{
	struct acct *a;
	json_object *o, *changed;
	char *states[ACCT_NTYPES] = { NULL };
	char hash[ACCT_TOKEN_HEX + 1];
	const char *type, *id, *code;
	unsigned i, got;
	int known, rc;

	acct_token_hash(token, hash);
	if ((a = acct_by_token(pd, hash)) == NULL &&
	    (known = token_stored(pd, hash)) <= 0)
		return known == -1 ? 500 : 404;
	if (content_type == NULL || strncasecmp(content_type, "application/json", 16) ||
	    (content_type[16] != '\0' && content_type[16] != ';'))
		return 415;
	if ((o = js_parse(body, n)) == NULL ||
	    !json_object_is_type(o, json_type_object) ||
	    (type = js_str(o, "@type")) == NULL) {
		json_object_put(o);
		return 400;
	}
	if (!strcmp(type, "PushVerification")) {
		id = js_str(o, "pushSubscriptionId");
		code = js_str(o, "verificationCode");
		rc = 403;
		if (id == NULL || code == NULL || strlen(code) > 512)
			rc = 400;
		else if (a && a->sub_state == SUB_PENDING && a->sub_id &&
		    !strcmp(id, a->sub_id)) {
			free(a->verify_code);
			a->verify_code = strdup(code);
			a->sub_want |= WANT_VERIFY;
			sub_next(a);
			rc = 202;
		}
		json_object_put(o);
		return rc;
	}
	if (strcmp(type, "StateChange")) {
		json_object_put(o);
		return 400;
	}
	if (a == NULL) {
		/* Ours, but no tab is open in this process: nobody to tell. */
		json_object_put(o);
		return 202;
	}
	if (a->sub_state != SUB_VERIFIED) {
		json_object_put(o);
		return 403;
	}
	if ((changed = js_obj(o, "changed")) == NULL) {
		json_object_put(o);
		return 400;
	}
	got = changed_states(a, changed, states);
	json_object_put(o);
	if (got && a->ntabs)
		acct_new_states(a, states, got, 0);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	return 202;
}
