#define _GNU_SOURCE 1
#include "acct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <json-c/json.h>

#include "check.h"
#include "js.h"
#include "log.h"
#include "pushd.h"
#include "seal.h"
#include "store.h"
#include "wpmail.h"

#define SESSION_DOC_MAX (1 << 20)
#define MAIL_CAP "urn:ietf:params:jmap:mail"

/* The channels in the order of preference: the first usable one carries
 * an account's changes, the next when it cannot. */
static const enum acct_mode acct_order[ACCT_NMODES] = {
	ACCT_SUBSCRIPTION, ACCT_RELAY, ACCT_POLL
};

static const struct chan *acct_chan(const struct acct *a, enum acct_mode m)
{
	return a->pd->chans[m];
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

/* -- the channel in charge ---------------------------------------------- */

/* The first usable channel after `after` in the order (all of them for
 * ACCT_NMODES); the poll always is. */
static enum acct_mode acct_next(const struct acct *a, enum acct_mode after)
{
	unsigned i = 0;

	if (after != ACCT_NMODES)
		while (acct_order[i++] != after)
			;
	for (; i < ACCT_NMODES; i++)
		if (acct_chan(a, acct_order[i])->usable(a))
			return acct_order[i];
	return ACCT_POLL;
}

void acct_set_mode(struct acct *a, enum acct_mode m, const char *why)
{
	if (a->dead)
		return;
	if (a->mode != m) {
		/* The first choice is routine; a change after it is news. */
		if (a->mode == ACCT_NMODES)
			log_debug("pushd: an account's changes come by %s (%s)",
			    acct_chan(a, m)->name, why);
		else
			log_info("pushd: an account's changes now come by %s (%s)",
			    acct_chan(a, m)->name, why);
		a->mode = m;
		acct_dirty(a);
	}
	acct_chan(a, m)->enter(a);
}

void acct_fall_back(struct acct *a, enum acct_mode from, const char *why)
{
	acct_set_mode(a, acct_next(a, from), why);
}

/* -- the lease (several nodes on one state: acct_db.c) -------------------- */

/* The channels start: each begins what it must, and the best usable one
 * carries. */
void acct_begin(struct acct *a)
{
	unsigned i;
	int wait = 0;

	a->follower = 0;
	for (i = 0; i < ACCT_NMODES && !a->dead; i++)
		if (acct_chan(a, acct_order[i])->start)
			wait |= acct_chan(a, acct_order[i])->start(a);
	if (!wait)
		acct_choose(a);
}

void acct_choose(struct acct *a)
{
	acct_set_mode(a, acct_next(a, ACCT_NMODES), "a tab is open");
}

/* A tab is there (the first, or one back after idle): the channels start
 * where this node holds the account's lease; until then it follows
 * (bus.c brings the changes, node.c tries the lease again). */
static void acct_start(struct acct *a)
{
	/* A subscription kept the account with no tab: its lease is held,
	 * unless the fence stopped counting on it (its channels stop). */
	if (!a->follower && a->mode != ACCT_NMODES) {
		if (acct_leased(a)) {
			acct_begin(a);
			return;
		}
		acct_lease_lost(a);
	}
	a->follower = 1;
	if (acct_lease(a))
		acct_begin(a);
}

void acct_lease_lost(struct acct *a)
{
	unsigned i;

	if (a->dead || a->follower)
		return;
	for (i = 0; i < ACCT_NMODES; i++)
		acct_chan(a, i)->stop(a);
	wp_mail_end(a);
	a->mode = ACCT_NMODES;
	a->follower = 1;
	log_info("pushd: an account's channel stops on this node (its lease "
	    "was not renewed)");
}

void acct_heard(struct acct *a, char *states[ACCT_NTYPES], unsigned got)
{
	if (!a->dead && a->follower)
		acct_new_states(a, states, got);
}

/* -- life ------------------------------------------------------------------ */

static void acct_free(void *p)
{
	struct acct *a = p;

	check_free_all(&a->checks);
	acct_events_free(a);
	buf_wipe_free(&a->creds);
	free(a->jmap_id);
	free(a->api_url);
	free(a->event_url);
	free(a);
}

/* The last tab closed: the channels stop, the credentials are wiped, the
 * row goes; the memory after the batch (the channels' first). */
void acct_end(struct acct *a)
{
	struct pushd *pd = a->pd;
	struct acct **pp;
	unsigned i;

	if (a->dead)
		return;
	a->dead = 1;
	for (pp = acct_bucket(pd, a->key); *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	pd->naccts--;
	for (i = 0; i < ACCT_NMODES; i++)
		acct_chan(a, i)->stop(a);
	wp_mail_end(a);
	check_stop_all(&a->checks);
	buf_wipe_free(&a->creds);
	/* Poll and relay channels die with the process; a subscription
	 * outlives it and keeps its row, whose lease goes (another node with
	 * tabs of the account takes it). A follower has no row. */
	if (!a->follower)
		acct_release(pd, a->key, ACCT_ROW_CHANNEL);
	ev_defer(&pd->ev, acct_free, a);
}

char *acct_primary_mail(struct app *app, const struct sess *s)
{
	struct buf doc;
	json_object *o, *p;
	const char *id;
	char *out = NULL;

	buf_init(&doc, SESSION_DOC_MAX);
	if (sess_doc(app, s, &doc) == 0 && doc.len &&
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

void acct_accepted(struct acct *a, long status)
{
	if (status >= 200 && status < 300)
		a->accepted = (long long)time(NULL);
}

const char *acct_user(const struct acct *a)
{
	return a->creds.data;
}

const char *acct_pass(const struct acct *a)
{
	return a->creds.data + strlen(a->creds.data) + 1;
}

/* An answer's bytes into its buf; short when it passes the buf's cap
 * (libcurl then stops). */
static size_t acct_collect(char *p, size_t size, size_t n, void *ctx)
{
	return buf_append(ctx, p, n) == -1 ? 0 : n;
}

int acct_call(struct acct *a, struct mc_job *job, const char *json,
    struct buf *answer)
{
	struct mc_req rq = {
		.kind = MC_CALL, .url = a->api_url,
		.user = acct_user(a), .pass = acct_pass(a),
		.json = json, .write = acct_collect, .ctx = answer,
	};

	return json ? mc_request(a->pd, job, &rq) : -1;
}

/* Compares with the states seen before; a change becomes an event. The
 * first answer (the baseline) is one too: the tabs open already looked at
 * the account before it, as their stream opened, and what came between
 * that look and this call would otherwise be told to nobody (it costs
 * each a look that finds nothing, each time pushd begins to follow the
 * account). */
void acct_new_states(struct acct *a, char *states[ACCT_NTYPES],
    unsigned got)
{
	struct acct_event *e = NULL;
	unsigned i, changed = 0, first = a->states[0] == NULL &&
	    a->states[1] == NULL && a->states[2] == NULL;

	for (i = 0; i < ACCT_NTYPES; i++)
		if ((got & (1u << i)) && (!a->states[i] ||
		    strcmp(a->states[i], states[i])))
			changed |= 1u << i;
	if (changed) {
		e = acct_ring_push(a, changed);
		e->baseline = first && !a->follower;
		for (i = 0; i < ACCT_NTYPES; i++)
			if (changed & (1u << i))
				e->states[i] = strdup(states[i]);
		if (!a->follower && store_shared(a->pd->app.store) &&
		    acct_leased(a))
			acct_publish(a, states, changed);
	}
	/* From the state before, the watches' push looks for new mail (on
	 * the node that holds the account: one push, not one per node). */
	if ((changed & (1u << ACCT_EMAIL)) && a->nwatch && !first &&
	    acct_leased(a))
		wp_mail_changed(a, a->states[ACCT_EMAIL]);
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

/* -- tabs ------------------------------------------------------------------ */

void acct_end_session(struct acct *a, const char *sess_id)
{
	struct acct_tab *t, *next;

	for (t = a->tabs; t; t = next) {
		next = t->next;
		if (!t->dead && !strcmp(t->sess_id, sess_id))
			t->ops->end(t);
	}
}

/* A check's answer: written, and a refused session's streams end once it
 * is (acct_db.c). */
static void acct_checked(struct check_set *set, const char *sess_id,
    int refused)
{
	acct_verdict(container_of(set, struct acct, checks), sess_id, refused);
}

static struct acct *acct_new(struct pushd *pd, const struct sess *s,
    const char *jmap_id)
{
	struct acct *a = calloc(1, sizeof(*a));
	struct acct **b;

	if (a == NULL)
		return NULL;
	a->pd = pd;
	a->checks.pd = pd;
	a->checks.verdict = acct_checked;
	memcpy(a->key, s->account, sizeof(a->key));
	buf_init(&a->creds, 4096);
	a->mode = ACCT_NMODES;          /* none yet: acct_start chooses */
	a->jmap_id = jmap_id ? strdup(jmap_id) : NULL;
	a->api_url = strdup(s->api_url);
	a->event_url = strdup(s->event_url);
	if (!a->jmap_id || !a->api_url || !a->event_url) {
		log_warn("pushd: a session without a primary mail account");
		acct_free(a);
		return NULL;
	}
	acct_mark(a);
	b = acct_bucket(pd, a->key);
	a->next = *b;
	*b = a;
	pd->naccts++;
	return a;
}

int acct_attach(struct pushd *pd, const struct sess *s, const char *jmap_id,
    struct acct_tab *t)
{
	struct acct *a = acct_find(pd, s->account);
	int fresh = a == NULL;
	time_t now = time(NULL);

	if (fresh && (a = acct_new(pd, s, jmap_id)) == NULL)
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
	a->nwatch += t->watch;
	acct_dirty(a);
	if (t->visible && a->nvisible++ == 0)
		acct_chan(a, ACCT_POLL)->visible(a);
	/* Neither the account's calls nor a recent record vouch for it: its
	 * own credentials are asked (the account's first call asks its first
	 * tab's). */
	if (!t->acct_creds && !sess_fresh(&pd->app, s->verified, now))
		check_start(&a->checks, s);
	/* The first tab, or the first back while a subscription kept the
	 * account: the channels start (the subscription carries on). */
	if (a->ntabs == 1)
		acct_start(a);
	return 0;
}

/* The last tab closed: the account ends, unless a channel keeps it. */
static void acct_idle(struct acct *a)
{
	unsigned i;
	int kept = 0;

	for (i = 0; i < ACCT_NMODES; i++)
		kept |= acct_chan(a, acct_order[i])->idle(a);
	if (kept && !a->pd->stopping)
		acct_dirty(a);
	else
		acct_end(a);
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
	a->nwatch -= t->watch;
	/* The last watch: what it gathered, and the state it looked from,
	 * go; a watch later starts from its own first change. */
	if (t->watch && a->nwatch == 0)
		wp_mail_end(a);
	if (--a->ntabs == 0)
		acct_idle(a);
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
			acct_chan(a, ACCT_POLL)->visible(a);
	}
	return n;
}

void acct_each(struct pushd *pd, void (*fn)(struct acct *a, void *ctx),
    void *ctx)
{
	struct acct *a, *next;
	unsigned i;

	for (i = 0; i < PUSHD_ACCT_BUCKETS; i++)
		for (a = pd->accts[i]; a; a = next) {
			next = a->next;
			if (!a->dead)
				fn(a, ctx);
		}
}

struct acct *acct_lookup(struct pushd *pd, const char *key)
{
	return acct_find(pd, key);
}

int acct_sess_visible(const struct acct *a, const char *sess_id)
{
	const struct acct_tab *t;

	for (t = a->tabs; t; t = t->next)
		if (!t->dead && t->visible && !strcmp(t->sess_id, sess_id))
			return 1;
	return 0;
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
