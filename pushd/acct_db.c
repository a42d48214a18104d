/* acct_db: an account's part of the shared state, all of it off pushd's
 * loop (dbq.h): its lease (on several nodes the one holding it runs the
 * account's channel: store_lease.c), its push row, written once a second
 * with every other dirty one, the changes the holder tells the other
 * nodes, and its tabs' sessions, checked against their rows. (Lifetime:
 * pushd.h; the account core: acct.c.) */
#include "acct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "bus.h"
#include "dbq.h"
#include "js.h"
#include "log.h"
#include "pushd.h"
#include "sess.h"
#include "store.h"

#define FLUSH_MS 1000

/* -- the lease ------------------------------------------------------------- */

/* The row's last states (JSON), as the account's where it has none: the
 * baseline a new holder polls against, so that what came while no node
 * held the account (its holder killed) is still told. */
static void acct_baseline(struct acct *a, const char *json)
{
	json_object *o = js_parse(json, strlen(json));
	const char *v;
	unsigned i;

	for (i = 0; o && i < ACCT_NTYPES; i++)
		if (!a->states[i] && (v = js_str(o, acct_type_names[i])) != NULL)
			a->states[i] = strdup(v);
	json_object_put(o);
}

/* Taking the lease, off the loop (dbq.h): until the answer the account
 * follows. */
struct take_job {
	struct dbq_job j;
	char account[APP_KEY_HEX + 1];
	long long now;
	int retry;                 /* not the account's first try */
	char *states;              /* the row's last states, or NULL */
};

static void take_work(struct dbq_job *j, struct store *st)
{
	struct take_job *k = container_of(j, struct take_job, j);

	j->rc = store_lease_take(st, k->account, "poll", k->now, &k->states);
}

static void take_done(struct dbq_job *j)
{
	struct take_job *k = container_of(j, struct take_job, j);
	struct pushd *pd = j->pd;
	struct acct *a = acct_lookup(pd, k->account);

	if (a && a->dead)
		a = NULL;
	if (a && a->taking)
		a->taking--;
	if (j->rc != 1 || (a && !a->follower)) {
		/* Not taken; or held and used already (an earlier take). */
	} else if (a && a->ntabs && !pd->stopping && !pd->fenced) {
		if (k->states)
			acct_baseline(a, k->states);
		/* Taken after any renewal still out: that one counts it. */
		a->lease_round = pd->lease_round;
		acct_begin(a);
		if (k->retry)
			log_info("pushd: an account's channel moves to this node");
	} else
		/* Taken and not used: no tab left, or this node's channels
		 * fenced (node.c; taken again once renewals go through).
		 * Given up here, after the take, never before it. */
		acct_release(pd, k->account, ACCT_ROW_KEEP);
	free(k->states);
	free(k);
}

/* Asks for the account's lease (on one node it always holds it): 1 when
 * it holds it now, 0 when the answer comes later (take_done). */
int acct_lease(struct acct *a)
{
	struct take_job *k;

	if (!store_shared(a->pd->app.store))
		return 1;
	/* One out at a time per account. */
	if (a->taking || (k = calloc(1, sizeof(*k))) == NULL)
		return 0;
	memcpy(k->account, a->key, sizeof(k->account));
	k->now = (long long)time(NULL);
	k->retry = a->states[0] != NULL || a->tried;
	a->tried = 1;
	k->j.work = take_work;
	k->j.done = take_done;
	a->taking++;            /* first: without the thread done may run now */
	if (dbq_push(a->pd, &k->j) == -1) {
		a->taking--;
		free(k);
	}
	return 0;
}

int acct_leased(const struct acct *a)
{
	const struct pushd *pd = a->pd;

	/* lease_ok may be later than the loop's cached now (read within
	 * this batch): fresh. */
	return !a->follower && (!store_shared(pd->app.store) ||
	    pd->ev.now < pd->lease_ok ||
	    pd->ev.now - pd->lease_ok < PUSHD_LEASE_FENCE_MS);
}

void acct_lease_retry(struct acct *a)
{
	if (!a->dead && a->follower && a->ntabs)
		acct_lease(a);
}

/* -- what the holder tells the other nodes -------------------------------- */

/* The holder tells the other nodes' tabs (STORE_CHAN_CHANGES): the
 * account's key and the states that changed. */
void acct_publish(struct acct *a, char *const states[ACCT_NTYPES],
    unsigned changed)
{
	json_object *o = json_object_new_object(), *s = json_object_new_object();
	const char *text;
	unsigned i;

	json_object_object_add(o, "a", json_object_new_string(a->key));
	for (i = 0; i < ACCT_NTYPES; i++)
		if (changed & (1u << i))
			json_object_object_add(s, acct_type_names[i],
			    json_object_new_string(states[i]));
	json_object_object_add(o, "s", s);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	/* PostgreSQL takes 8,000 bytes at most: states that long (no server
	 * seen makes them so) are not told, the tabs are told to resync. */
	if (strlen(text) > PUSHD_NOTIFY_MAX) {
		json_object_object_del(o, "s");
		json_object_object_add(o, "resync", json_object_new_boolean(1));
		text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	}
	bus_tell(a->pd, text);
	json_object_put(o);
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

/* A flush: the dirty rows as they were, written off the loop in one
 * transaction (dbq.h). */
struct flush_row {
	struct store_push_row row;     /* its strings: the copies below */
	char account[APP_KEY_HEX + 1];
	char *states, *sub_id, *token_hash;
};

struct flush_job {
	struct dbq_job j;
	size_t n;
	struct flush_row rows[];
};

static void flush_row_free(struct flush_row *r)
{
	free(r->states);
	free(r->sub_id);
	free(r->token_hash);
}

/* The account's row as it is now, copied: 0 or -1. */
static int acct_row(struct acct *a, struct flush_row *r)
{
	json_object *o = states_json(a->states);
	struct store_push_row row = {
		.mode = (enum store_push_mode)a->mode,
		.tabs = (long)(a->ntabs - a->nwatch),
		.updated = (long long)time(NULL),
	};
	unsigned i;
	int bad = 0;

	memset(r, 0, sizeof(*r));
	memcpy(r->account, a->key, sizeof(r->account));
	if (a->states[0])
		bad |= (r->states = strdup(json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN))) == NULL;
	json_object_put(o);
	for (i = 0; i < ACCT_NMODES; i++)
		if (a->pd->chans[i]->row)
			a->pd->chans[i]->row(a, &row);
	if (row.sub_id)
		bad |= (r->sub_id = strdup(row.sub_id)) == NULL;
	if (row.token_hash)
		bad |= (r->token_hash = strdup(row.token_hash)) == NULL;
	row.account = r->account;
	row.states = r->states;
	row.sub_id = r->sub_id;
	row.token_hash = r->token_hash;
	r->row = row;
	if (bad)
		flush_row_free(r);
	return bad ? -1 : 0;
}

static void flush_work(struct dbq_job *j, struct store *st)
{
	struct flush_job *f = container_of(j, struct flush_job, j);
	size_t i;
	int ok = store_begin(st) == 0;

	for (i = 0; i < f->n && ok; i++)
		ok = store_push_put(st, &f->rows[i].row) == 0;
	/* PostgreSQL drops the whole batch at a failed statement. */
	j->rc = store_commit(st) == 0 && ok ? 0 : -1;
}

static void flush_done(struct dbq_job *j)
{
	struct flush_job *f = container_of(j, struct flush_job, j);
	struct pushd *pd = j->pd;
	struct acct *a;
	size_t i;

	pd->flush_out = 0;
	for (i = 0; i < f->n; i++) {
		/* Not written: written again at the next flush. */
		if (j->rc == -1 && !pd->stopping &&
		    (a = acct_lookup(pd, f->rows[i].account)) != NULL && !a->dead)
			acct_dirty(a);
		flush_row_free(&f->rows[i]);
	}
	free(f);
}

static void count_dirty(struct acct *a, void *ctx)
{
	/* The row is the lease holder's to write. */
	if (a->follower)
		a->dirty = 0;
	*(size_t *)ctx += a->dirty;
}

static void take_dirty(struct acct *a, void *ctx)
{
	struct flush_job *f = ctx;

	if (a->dirty && acct_row(a, &f->rows[f->n]) == 0) {
		f->n++;
		a->dirty = 0;
	}
}

/* Dirty rows are written together once a second: a thousand tabs that
 * reconnect at once make one transaction, not a thousand. One flush is
 * out at a time; the rows dirtied meanwhile wait for the next. */
static void acct_on_flush(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);
	struct flush_job *f;
	size_t n = 0;

	acct_each(pd, count_dirty, &n);
	if (n == 0)
		return;
	if (pd->flush_out) {
		ev_timer_set(ev, t, FLUSH_MS);
		return;
	}
	if ((f = calloc(1, sizeof(*f) + n * sizeof(f->rows[0]))) == NULL) {
		ev_timer_set(ev, t, FLUSH_MS);
		return;
	}
	acct_each(pd, take_dirty, f);
	if (f->n < n)           /* a row not copied (no memory): later */
		ev_timer_set(ev, t, FLUSH_MS);
	f->j.work = flush_work;
	f->j.done = flush_done;
	pd->flush_out = 1;      /* first: without the thread done may run now */
	if (dbq_push(pd, &f->j) == -1) {
		f->j.rc = -1;
		flush_done(&f->j);
	}
}

void acct_dirty_now(struct acct *a)
{
	a->dirty = 1;
	ev_timer_set(&a->pd->ev, &a->pd->flush_timer, 0);
}

void acct_dirty(struct acct *a)
{
	struct pushd *pd = a->pd;

	a->dirty = 1;
	if (!ev_timer_armed(&pd->flush_timer))
		ev_timer_set(&pd->ev, &pd->flush_timer, FLUSH_MS);
}

void acct_startup(struct pushd *pd)
{
	ev_timer_init(&pd->flush_timer, acct_on_flush);
}

/* -- the lease and the row given up --------------------------------------- */

/* The account's lease goes, and with row set its poll's or relay's row
 * (a subscription's outlives the process), off the loop. */
struct release_job {
	struct dbq_job j;
	char account[APP_KEY_HEX + 1];
	int row;
};

static void release_work(struct dbq_job *j, struct store *st)
{
	struct release_job *r = container_of(j, struct release_job, j);

	j->rc = 0;
	if (r->row == ACCT_ROW_CHANNEL &&
	    store_push_delete_channel(st, r->account) == -1)
		j->rc = -1;
	if (r->row == ACCT_ROW_ANY && store_push_delete(st, r->account) == -1)
		j->rc = -1;
	if (r->row == ACCT_ROW_ANY)
		return;         /* the row, and with it the lease */
	if (store_lease_release(st, r->account) == -1)
		j->rc = -1;
}

static void release_done(struct dbq_job *j)
{
	/* A row or lease left behind is cleaned at the next start, or
	 * given up by the renewal (node.c) or its TTL. */
	if (j->rc == -1)
		log_warn("pushd: an account's row or lease was not given up");
	free(container_of(j, struct release_job, j));
}

void acct_release(struct pushd *pd, const char *key, int row)
{
	struct release_job *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return;
	snprintf(r->account, sizeof(r->account), "%s", key);
	r->row = row;
	r->j.work = release_work;
	r->j.done = release_done;
	if (dbq_push(pd, &r->j) == -1) {
		r->j.rc = -1;
		release_done(&r->j);
	}
}

/* -- the tabs' sessions --------------------------------------------------- */

/* The tabs' sessions asked of the store, off the loop: each session
 * once, sorted, so that the answer is found for each tab by a binary
 * search (an account may have thousands of tabs of one session). */
struct check_sess {
	char id[SESS_ID_LEN + 1];
	int rc;                          /* store_sess_times' */
	struct store_sess_row row;
};

struct check_job {
	struct dbq_job j;
	char account[APP_KEY_HEX + 1];
	time_t now;
	size_t n;
	struct check_sess s[];
};

static int by_id(const void *x, const void *y)
{
	return strcmp(((const struct check_sess *)x)->id,
	    ((const struct check_sess *)y)->id);
}

static void check_work(struct dbq_job *j, struct store *st)
{
	struct check_job *c = container_of(j, struct check_job, j);
	size_t i;

	j->rc = 0;
	for (i = 0; i < c->n; i++)
		c->s[i].rc = store_sess_times(st, c->s[i].id, &c->s[i].row);
}

/* Each tab of a session that is gone, or that nothing vouches for, ends;
 * a session the store did not answer for is asked again next time. */
static void acct_check_sessions(struct acct *a);

static void check_done(struct dbq_job *j)
{
	struct check_job *c = container_of(j, struct check_job, j);
	struct pushd *pd = j->pd;
	struct acct *a = acct_lookup(pd, c->account);
	struct acct_tab *t, *next;
	struct check_sess key;
	const struct check_sess *s;

	if (a)
		a->checking = 0;
	/* No store to ask (it never opened): nothing is known. */
	for (t = a && j->rc == 0 && !pd->stopping ? a->tabs : NULL; t &&
	    !a->dead; t = next) {
		next = t->next;
		if (t->dead)
			continue;
		memcpy(key.id, t->sess_id, sizeof(key.id));
		s = bsearch(&key, c->s, c->n, sizeof(c->s[0]), by_id);
		if (s == NULL || s->rc == -1)
			continue;   /* a tab come since, or no answer: next time */
		if (s->rc != 1 || !sess_row_alive(&pd->app, &s->row, c->now) ||
		    (!t->acct_creds &&
		    !sess_fresh(&pd->app, s->row.verified, c->now)))
			t->ops->end(t);
	}
	if (a && !a->dead && !pd->stopping && a->check_again) {
		a->check_again = 0;
		acct_check_sessions(a);
	}
	free(c);
}

static void acct_check_sessions(struct acct *a)
{
	struct acct_tab *t;
	struct check_job *c;
	size_t i, n = 0;

	/* One out at a time per account, and one more after it when asked
	 * for meanwhile (a sign-out told by another node comes after the
	 * reads of the one out). */
	if (a->checking) {
		a->check_again = 1;
		return;
	}
	if (a->ntabs == 0)
		return;
	c = calloc(1, sizeof(*c) + a->ntabs * sizeof(c->s[0]));
	if (c == NULL)
		return;
	for (t = a->tabs; t && n < a->ntabs; t = t->next)
		if (!t->dead)
			memcpy(c->s[n++].id, t->sess_id, sizeof(c->s[0].id));
	qsort(c->s, n, sizeof(c->s[0]), by_id);
	for (i = c->n = 0; i < n; i++)
		if (c->n == 0 || strcmp(c->s[c->n - 1].id, c->s[i].id))
			c->s[c->n++] = c->s[i];
	memcpy(c->account, a->key, sizeof(c->account));
	c->now = time(NULL);
	c->j.work = check_work;
	c->j.done = check_done;
	a->checking = 1;        /* first: without the thread done may run now */
	if (dbq_push(a->pd, &c->j) == -1) {
		a->checking = 0;
		free(c);
	}
}

struct verdict_job {
	struct dbq_job j;
	char account[APP_KEY_HEX + 1];
	char sess_id[SESS_ID_LEN + 1];
	time_t now;
	int refused;
};

static void verdict_work(struct dbq_job *j, struct store *st)
{
	struct verdict_job *v = container_of(j, struct verdict_job, j);

	(void)st;
	if (v->refused)
		sess_refused(j->app, v->sess_id);
	else
		sess_confirmed(j->app, v->sess_id, v->now);
}

static void verdict_done(struct dbq_job *j)
{
	struct verdict_job *v = container_of(j, struct verdict_job, j);
	struct acct *a = acct_lookup(j->pd, v->account);

	if (v->refused && a && !a->dead)
		acct_end_session(a, v->sess_id);
	free(v);
}

void acct_verdict(struct acct *a, const char *sess_id, int refused)
{
	struct verdict_job *v = calloc(1, sizeof(*v));

	if (v) {
		memcpy(v->account, a->key, sizeof(v->account));
		snprintf(v->sess_id, sizeof(v->sess_id), "%s", sess_id);
		v->now = time(NULL);
		v->refused = refused;
		v->j.work = verdict_work;
		v->j.done = verdict_done;
		if (dbq_push(a->pd, &v->j) == 0)
			return;
		free(v);
	}
	log_warn("pushd: a session's check was not recorded (the database's "
	    "queue is full)");
	if (refused)
		acct_end_session(a, sess_id);
}

/* Whether a tab after t is of t's session with the account's
 * credentials: its session's end is written once, by the last. */
static int told_later(const struct acct_tab *t)
{
	const struct acct_tab *o;

	for (o = t->next; o; o = o->next)
		if (!o->dead && o->acct_creds && !strcmp(o->sess_id, t->sess_id))
			return 1;
	return 0;
}

/* Ends the tabs whose session was signed out or expired, and those that
 * nothing vouches for: not on the account's credentials, and not
 * accepted by the mail server within session_recheck (they come back,
 * and their own credentials are asked). On each poll, and every interval
 * in the other modes, so such a stream ends within one interval of it.
 * revoke: the mail server refused the account's credentials; the
 * sessions they came from end, the other tabs' streams too (they come
 * back with their own). */
void acct_check_tabs(struct acct *a, int revoke)
{
	struct acct_tab *t, *next;

	if (!revoke) {
		acct_check_sessions(a);
		return;
	}
	a->creds_refused = 1;
	for (t = a->tabs; t; t = next) {
		next = t->next;
		if (t->dead)
			continue;
		/* A refused session's tabs end once its end is written; the
		 * others' at once (nothing vouches for them now). */
		if (!t->acct_creds)
			t->ops->end(t);
		else if (!told_later(t))
			acct_verdict(a, t->sess_id, 1);
	}
}
