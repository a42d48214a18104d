#include "acct.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "js.h"
#include "log.h"
#include "pushd.h"
#include "seal.h"
#include "tab.h"

#define POLL_RESP_MAX (256 * 1024)
#define FLUSH_MS 1000
#define SESSION_DOC_MAX (1 << 20)
#define MAIL_CAP "urn:ietf:params:jmap:mail"

const char *const acct_type_names[ACCT_NTYPES] = { "Email", "Mailbox", "Thread" };
/* The get method whose "state" tells each type's state, and its tag. */
static const char *const poll_methods[ACCT_NTYPES] = {
	"Email/get", "Mailbox/get", "Thread/get"
};
static const char *const mode_names[] = { "poll", "relay", "subscription" };

static const char sql_upsert[] =
    "INSERT INTO push_accounts(account, mode, state, tabs, updated)"
    " VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(account) DO UPDATE SET"
    " mode = excluded.mode, state = excluded.state, tabs = excluded.tabs,"
    " updated = excluded.updated";
/* Poll and relay channels die with the process; a subscription (later)
 * outlives it and keeps its row. */
static const char sql_delete[] =
    "DELETE FROM push_accounts WHERE account = ?1 AND mode IN ('poll', 'relay')";
static const char sql_clean[] =
    "DELETE FROM push_accounts WHERE mode IN ('poll', 'relay')";
static const char sql_untab[] = "UPDATE push_accounts SET tabs = 0";

static void acct_poll_start(struct acct *a);

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

static void acct_write(struct acct *a)
{
	struct db *db = &a->pd->app.db;
	sqlite3_stmt *st = db_stmt(db, sql_upsert);
	json_object *o;

	if (st == NULL)
		return;
	o = states_json(a->states);
	db_bind_text(st, 1, a->key);
	db_bind_text(st, 2, mode_names[a->mode]);
	if (a->states[0])
		db_bind_text(st, 3, json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN));
	sqlite3_bind_int(st, 4, (int)a->ntabs);
	sqlite3_bind_int64(st, 5, (long long)time(NULL));
	db_exec_stmt(db, st);
	json_object_put(o);
	a->dirty = 0;
}

/* Dirty rows are written together once a second: a thousand tabs that
 * reconnect at once make one transaction, not a thousand. */
static void acct_on_flush(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);
	struct acct *a;
	unsigned i;

	sqlite3_exec(pd->app.db.h, "BEGIN", NULL, NULL, NULL);
	for (i = 0; i < PUSHD_ACCT_BUCKETS; i++)
		for (a = pd->accts[i]; a; a = a->next)
			if (a->dirty)
				acct_write(a);
	sqlite3_exec(pd->app.db.h, "COMMIT", NULL, NULL, NULL);
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
	sqlite3_stmt *st;

	ev_timer_init(&pd->flush_timer, acct_on_flush);
	if ((st = db_stmt(&pd->app.db, sql_clean)) != NULL)
		db_exec_stmt(&pd->app.db, st);
	if ((st = db_stmt(&pd->app.db, sql_untab)) != NULL)
		db_exec_stmt(&pd->app.db, st);
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
	struct acct **pp;
	sqlite3_stmt *st;

	a->dead = 1;
	for (pp = acct_bucket(pd, a->key); *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	pd->naccts--;
	mc_cancel(pd, &a->job);
	ev_timer_stop(&pd->ev, &a->poll_timer);
	buf_wipe_free(&a->creds);
	if ((st = db_stmt(&pd->app.db, sql_delete)) != NULL) {
		db_bind_text(st, 1, a->key);
		db_exec_stmt(&pd->app.db, st);
	}
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

static void acct_on_poll_timer(struct ev *ev, struct ev_timer *t)
{
	acct_poll_start(container_of(t, struct acct, poll_timer));
}

static void acct_use_poll(struct acct *a)
{
	a->mode = ACCT_POLL;
	acct_dirty(a);
	ev_timer_set(&a->pd->ev, &a->poll_timer, 0);
}

/* The answer began: that is all the probe wanted to know. */
static size_t probe_write(char *p, size_t size, size_t n, void *ctx)
{
	return 0;
}

/* The event_url template with types=*, closeafter=state, ping=0. */
static char *probe_url(const char *tmpl)
{
	static const char *const keys[3][2] = {
		{ "{types}", "*" }, { "{closeafter}", "state" }, { "{ping}", "0" }
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

static void acct_probe_done(struct mc_job *job, CURLcode rc, long status)
{
	struct acct *a = container_of(job, struct acct, job);

	/* 200 text/event-stream is a server that can push: relay mode (one
	 * upstream stream for the account, parsed by a strict event-stream
	 * reader) belongs here. Anything else, Cyrus 3.6's 204 included,
	 * means polling. */
	if ((rc == CURLE_OK || rc == CURLE_WRITE_ERROR) && status == 200)
		log_info("pushd: the mail server offers an event stream; relay "
		    "mode is not built yet, polling");
	else
		log_debug("pushd: event_url answered %ld (%s): polling", status,
		    curl_easy_strerror(rc));
	acct_use_poll(a);
}

/* Asks event_url whether the server pushes: 0 when the question is on its
 * way (acct_probe_done decides), -1 when it could not be asked. */
static int acct_probe(struct acct *a)
{
	struct pushd *pd = a->pd;
	char *url = probe_url(a->event_url);
	CURL *e = mc_easy(pd);

	a->job.done = acct_probe_done;
	if (url == NULL || e == NULL ||
	    curl_easy_setopt(e, CURLOPT_URL, url) ||
	    curl_easy_setopt(e, CURLOPT_HTTPHEADER, pd->sse_headers) ||
	    curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) ||
	    curl_easy_setopt(e, CURLOPT_USERNAME, a->creds.data) ||
	    curl_easy_setopt(e, CURLOPT_PASSWORD,
	    a->creds.data + strlen(a->creds.data) + 1) ||
	    curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L) ||
	    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, probe_write)) {
		curl_easy_cleanup(e);
		free(url);
		return -1;
	}
	free(url);
	a->job.easy = e;
	return mc_start(pd, &a->job);
}

/* The channel for a new account (its first tab is attached, so the
 * credentials are there). The order is subscription (a PushSubscription
 * verified through /api/push/, nothing held open), relay (one upstream
 * EventSource), poll, each falling back to the next; poll is what is built
 * so far. push_mode names one mode to use, or "auto". */
static void acct_start(struct acct *a)
{
	const char *want = a->pd->app.cfg.push_mode;

	a->mode = ACCT_POLL;
	if (strcmp(want, "poll") && *a->event_url && acct_probe(a) == 0)
		return;
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
	b = acct_bucket(pd, a->key);
	a->next = *b;
	*b = a;
	pd->naccts++;
	return a;
}

int acct_attach(struct pushd *pd, const struct sess *s, struct tab *t)
{
	struct acct *a = acct_find(pd, s->account);
	int fresh = a == NULL;

	if (fresh && (a = acct_new(pd, s)) == NULL)
		return -1;
	/* The newest sign-in's credentials: after a password change, the
	 * tab opened with the new one brings it. */
	if (acct_set_creds(a, s) == -1) {
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
	if (fresh)
		acct_start(a);
	return 0;
}

void acct_detach(struct tab *t)
{
	struct acct *a = t->acct;

	if (t->prev)
		t->prev->next = t->next;
	else
		a->tabs = t->next;
	if (t->next)
		t->next->prev = t->prev;
	/* t->next stays: a fan-out walking the list goes on from here. */
	if (--a->ntabs == 0)
		acct_end(a);
	else
		acct_dirty(a);
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
    struct tab *t, struct buf *frame)
{
	if (event_frame(a, e, t->types, frame) <= 0)
		return;
	if (tab_send(t, frame->data, frame->len) == 0 && t->closeafter)
		tab_end(t);
}

static void acct_emit(struct acct *a, const struct acct_event *e)
{
	struct buf full, one;
	struct tab *t, *next;

	buf_init(&full, 64 * 1024);
	buf_init(&one, 64 * 1024);
	/* Most tabs want everything: that frame is made once. */
	event_frame(a, e, ACCT_ALL, &full);
	for (t = a->tabs; t; t = next) {
		next = t->next;
		if (t->dead)
			continue;
		if ((t->types & e->mask) == e->mask) {
			if (tab_send(t, full.data, full.len) == 0 && t->closeafter)
				tab_end(t);
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

void acct_replay(struct acct *a, struct tab *t, const char *last_event_id)
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
		tab_send(t, resync, (size_t)n);
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

static void acct_poll_again(struct acct *a)
{
	ev_timer_set(&a->pd->ev, &a->poll_timer,
	    (uint64_t)a->pd->app.cfg.push_poll_interval * 1000);
}

static void acct_poll_start(struct acct *a)
{
	struct pushd *pd = a->pd;
	char *body = poll_body(a);
	CURL *e = mc_easy(pd);

	a->job.done = acct_poll_done;
	buf_reset(&a->resp);
	if (body == NULL || e == NULL ||
	    curl_easy_setopt(e, CURLOPT_URL, a->api_url) ||
	    curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body) ||
	    curl_easy_setopt(e, CURLOPT_HTTPHEADER, pd->json_headers) ||
	    curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) ||
	    curl_easy_setopt(e, CURLOPT_USERNAME, a->creds.data) ||
	    curl_easy_setopt(e, CURLOPT_PASSWORD,
	    a->creds.data + strlen(a->creds.data) + 1) ||
	    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, poll_write) ||
	    curl_easy_setopt(e, CURLOPT_WRITEDATA, a)) {
		log_err("pushd: cannot set up a poll");
		curl_easy_cleanup(e);
		e = NULL;
	}
	free(body);
	a->job.easy = e;
	if (e == NULL || mc_start(pd, &a->job) == -1)
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
    unsigned got)
{
	struct acct_event *e = NULL;
	unsigned i, changed = 0, first = a->states[0] == NULL &&
	    a->states[1] == NULL && a->states[2] == NULL;

	for (i = 0; i < ACCT_NTYPES; i++)
		if ((got & (1u << i)) && (!a->states[i] ||
		    strcmp(a->states[i], states[i])))
			changed |= 1u << i;
	if (changed && !first) {
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

/* Ends the tabs whose session was signed out or expired; on each poll, so
 * a signed-out stream ends within one interval. */
static void acct_check_tabs(struct acct *a, int revoke)
{
	struct pushd *pd = a->pd;
	struct tab *t, *next;
	time_t now = time(NULL);

	for (t = a->tabs; t; t = next) {
		next = t->next;
		if (t->dead)
			continue;
		if (revoke)
			sess_destroy(&pd->app, t->sess_id);
		if (revoke || tab_session_alive(pd, t, now) == 0)
			tab_end(t);
	}
}

static void acct_poll_done(struct mc_job *job, CURLcode rc, long status)
{
	struct acct *a = container_of(job, struct acct, job);
	char *states[ACCT_NTYPES] = { NULL };
	json_object *root = NULL;
	unsigned i, got = 0;

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
		acct_new_states(a, states, got);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	if (!a->dead)
		acct_poll_again(a);
}
