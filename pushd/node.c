/* node: this pushd among the nodes that share the state. Each says it is
 * alive in the nodes table every STORE_NODE_BEAT seconds; a pushd that
 * starts cleans up only its own rows and those of nodes not seen for
 * STORE_NODE_GONE seconds, so that a node starting or stopping never ends
 * another live node's channels (store_push_startup).
 *
 * On a shared state (PostgreSQL), one node holds each account's channel:
 * the one holding its lease (store_lease.c). Every PUSHD_LEASE_TICK_MS
 * this node renews the leases it holds, stops the channels of those it
 * lost, stops all of them by itself when no renewal went through for
 * PUSHD_LEASE_FENCE_MS (before another node may take them), asks which
 * of the accounts it follows have a free lease (one statement for all)
 * and takes those; it checks the followed tabs' sessions every
 * push_poll_interval (no poll of its own does). All of it off the loop
 * (dbq.h). */
#include "node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acct.h"
#include "dbq.h"
#include "log.h"
#include "pushd.h"
#include "store.h"

/* The renewal: sent at a round, off the loop (dbq.c); what came back is
 * the accounts still held. */
struct renew_job {
	struct dbq_job j;
	unsigned round;
	uint64_t (*clock)(void);   /* the loop's (a thread-safe ev_clock) */
	uint64_t sent;             /* its ms when the statement was sent */
	char (*held)[APP_KEY_HEX + 1];
	size_t n, cap;
};

static void renew_held(void *ctx, const char *account)
{
	struct renew_job *r = ctx;
	size_t cap;
	void *p;

	if (r->j.rc == -1)
		return;
	if (r->n == r->cap) {
		cap = r->cap ? 2 * r->cap : 64;
		if ((p = realloc(r->held, cap * sizeof(*r->held))) == NULL) {
			r->j.rc = -1;   /* a renewal not known whole counts as none */
			return;
		}
		r->held = p;
		r->cap = cap;
	}
	snprintf(r->held[r->n++], sizeof(*r->held), "%s", account);
}

static void renew_work(struct dbq_job *j, struct store *st)
{
	struct renew_job *r = container_of(j, struct renew_job, j);

	/* Taken here, just before the statement, not when it was asked
	 * for: the time it waited behind other work does not count. */
	r->sent = r->clock();
	j->rc = 0;
	if (store_lease_renew(st, renew_held, r) == -1)
		j->rc = -1;
}

struct renewed {
	struct pushd *pd;
	unsigned round;
};

static void lost_unless_renewed(struct acct *a, void *ctx)
{
	const struct renewed *w = ctx;

	/* Rounds only grow: an account taken since this renewal was sent
	 * counts as renewed by it (acct.c sets its round at the take). */
	if (!a->follower && (int)(a->lease_round - w->round) < 0)
		acct_lease_lost(a);
}

static void lost(struct acct *a, void *ctx)
{
	(void)ctx;
	acct_lease_lost(a);
}

/* No renewal went through for PUSHD_LEASE_FENCE_MS: this node's channels
 * stop by themselves, before another node may take them, whether the
 * renewal failed or is still out (a frozen database). */
static void node_fence(struct pushd *pd)
{
	uint64_t now = pd->ev.clock();

	if (now <= pd->lease_ok || now - pd->lease_ok < PUSHD_LEASE_FENCE_MS)
		return;
	if (!pd->fenced)
		log_warn("pushd: node %s: the leases were not renewed for %llu "
		    "ms: this node's channels stop", pd->app.cfg.node_name,
		    (unsigned long long)(now - pd->lease_ok));
	pd->fenced = 1;
	acct_each(pd, lost, NULL);
}

static void renew_done(struct dbq_job *j)
{
	struct renew_job *r = container_of(j, struct renew_job, j);
	struct pushd *pd = j->pd;
	struct renewed w = { pd, r->round };
	struct acct *a;
	size_t i;

	pd->renew_out = 0;
	if (!pd->stopping && j->rc == 0) {
		if (r->sent > pd->lease_ok)
			pd->lease_ok = r->sent;
		/* A renewal sent long ago (a database frozen, then back)
		 * does not lift the fence: the next one does. */
		if (pd->ev.clock() - pd->lease_ok < PUSHD_LEASE_FENCE_MS)
			pd->fenced = 0;
		for (i = 0; i < r->n; i++) {
			a = acct_lookup(pd, r->held[i]);
			if (a && !a->dead && !a->follower)
				a->lease_round = r->round;
			/* A row left behind: another node may take it. Not
			 * while a take of it is out (it comes after this and
			 * gives it up itself when it does not use it). */
			else if (a == NULL || a->dead || !a->taking)
				acct_release(pd, r->held[i], ACCT_ROW_KEEP);
		}
		acct_each(pd, lost_unless_renewed, &w);
	} else if (!pd->stopping)
		node_fence(pd);
	free(r->held);
	free(r);
}

static void node_renew(struct pushd *pd)
{
	struct renew_job *r;

	/* One out at a time: a slow database gets no pile of them. */
	if (pd->renew_out || (r = calloc(1, sizeof(*r))) == NULL)
		return;
	r->round = ++pd->lease_round;
	r->clock = pd->ev.clock;
	r->j.work = renew_work;
	r->j.done = renew_done;
	/* Set first: without the thread done may run inside the push. */
	pd->renew_out = 1;
	if (dbq_push_first(pd, &r->j) == -1) {
		pd->renew_out = 0;
		free(r);
	}
}

/* Which followed accounts' leases are free: one statement for all of
 * them (store_lease_free), then a take for each that is. */
struct free_job {
	struct dbq_job j;
	char (*keys)[APP_KEY_HEX + 1];
	const char **list;
	size_t n, cap;
	char (*free)[APP_KEY_HEX + 1];
	size_t nfree;
};

static void free_one(void *ctx, const char *account)
{
	struct free_job *f = ctx;

	/* At most one answer per account asked. */
	if (f->nfree < f->n)
		snprintf(f->free[f->nfree++], sizeof(*f->free), "%s", account);
}

static void free_work(struct dbq_job *j, struct store *st)
{
	struct free_job *f = container_of(j, struct free_job, j);

	j->rc = store_lease_free(st, f->list, f->n, free_one, f);
}

static void free_done(struct dbq_job *j)
{
	struct free_job *f = container_of(j, struct free_job, j);
	struct acct *a;
	size_t i;

	j->pd->free_out = 0;
	for (i = 0; i < f->nfree && !j->pd->stopping; i++)
		if ((a = acct_lookup(j->pd, f->free[i])) != NULL)
			acct_lease_retry(a);
	free(f->keys);
	free(f->list);
	free(f->free);
	free(f);
}

static void gather(struct acct *a, void *ctx)
{
	struct free_job *f = ctx;
	void *p;

	if (!a->follower || a->taking || !a->ntabs)
		return;
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 64;
		if ((p = realloc(f->keys, f->cap * sizeof(*f->keys))) == NULL) {
			f->cap = f->n;      /* the rest next time */
			return;
		}
		f->keys = p;
	}
	memcpy(f->keys[f->n++], a->key, sizeof(*f->keys));
}

static void node_follow(struct pushd *pd)
{
	struct free_job *f;
	size_t i;

	if (pd->free_out || (f = calloc(1, sizeof(*f))) == NULL)
		return;
	acct_each(pd, gather, f);
	if (f->n == 0 ||
	    (f->list = calloc(f->n, sizeof(*f->list))) == NULL ||
	    (f->free = calloc(f->n, sizeof(*f->free))) == NULL) {
		free(f->keys);
		free(f->list);
		free(f);
		return;
	}
	for (i = 0; i < f->n; i++)
		f->list[i] = f->keys[i];
	f->j.work = free_work;
	f->j.done = free_done;
	pd->free_out = 1;       /* first: without the thread done may run now */
	if (dbq_push(pd, &f->j) == -1) {
		pd->free_out = 0;
		f->j.rc = -1;
		free_done(&f->j);
	}
}

static void follow(struct acct *a, void *ctx)
{
	struct pushd *pd = ctx;

	if (a->follower && pd->followed_checked == pd->ev.now)
		acct_check_tabs(a, 0);
}

static void node_lease(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);

	node_renew(pd);
	node_fence(pd);
	node_follow(pd);
	if (ev->now - pd->followed_checked >=
	    (uint64_t)pd->app.cfg.push_poll_interval * 1000)
		pd->followed_checked = ev->now;
	acct_each(pd, follow, pd);
	ev_timer_set(ev, t, PUSHD_LEASE_TICK_MS);
}

/* The heartbeat: one out at a time. Missed beats are harmless until
 * STORE_NODE_GONE: logged, and the next one tries again (the store
 * reconnects by itself). */
struct beat_job {
	struct dbq_job j;
	long long now;
};

static void beat_work(struct dbq_job *j, struct store *st)
{
	j->rc = store_node_beat(st, container_of(j, struct beat_job, j)->now, 0);
}

static void beat_done(struct dbq_job *j)
{
	struct pushd *pd = j->pd;

	pd->beat_out = 0;
	if (j->rc == -1)
		log_warn("pushd: node %s: the heartbeat was not written",
		    pd->app.cfg.node_name);
	free(container_of(j, struct beat_job, j));
}

static void node_beat(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);
	struct beat_job *b;

	if (!pd->beat_out && (b = calloc(1, sizeof(*b))) != NULL) {
		b->now = (long long)time(NULL);
		b->j.work = beat_work;
		b->j.done = beat_done;
		pd->beat_out = 1;
		if (dbq_push_first(pd, &b->j) == -1) {
			pd->beat_out = 0;
			free(b);
		}
	}
	ev_timer_set(ev, t, STORE_NODE_BEAT * 1000);
}

/* Two nodes of one name would hold each other's leases and clean up each
 * other's rows: a pushd of this name heard from within two beats is
 * another one (or this one's last run, killed just now). */
static void node_same_name(struct pushd *pd, long long now)
{
	long long seen;

	if (store_node_seen(pd->app.store, &seen) == 1 &&
	    seen >= now - 2 * STORE_NODE_BEAT)
		log_warn("pushd: node %s: a pushd of this node_name was alive %lld "
		    "s ago; if it runs on another node, give each node its own "
		    "node_name", pd->app.cfg.node_name, now - seen);
}

void node_start(struct pushd *pd)
{
	ev_timer_init(&pd->node_timer, node_beat);
	ev_timer_init(&pd->lease_timer, node_lease);
	node_same_name(pd, (long long)time(NULL));
	if (store_push_startup(pd->app.store, (long long)time(NULL)) == -1)
		log_warn("pushd: node %s: start-up could not clean up the push "
		    "rows", pd->app.cfg.node_name);
	ev_timer_set(&pd->ev, &pd->node_timer, STORE_NODE_BEAT * 1000);
	pd->lease_ok = pd->followed_checked = pd->ev.clock();
	if (store_shared(pd->app.store))
		ev_timer_set(&pd->ev, &pd->lease_timer, PUSHD_LEASE_TICK_MS);
}

/* The node's row goes on the database thread, after the accounts'
 * releases queued before it: a database that does not answer at shutdown holds the
 * thread (dbq_stop gives up after DBQ_STOP_S), never the loop. */
static void leave_work(struct dbq_job *j, struct store *st)
{
	j->rc = store_node_leave(st);
}

static void leave_done(struct dbq_job *j)
{
	if (j->rc == -1)
		log_warn("pushd: node %s: its row was not removed",
		    j->pd->app.cfg.node_name);
	free(j);
}

void node_stop(struct pushd *pd)
{
	struct dbq_job *j = calloc(1, sizeof(*j));

	ev_timer_stop(&pd->ev, &pd->node_timer);
	ev_timer_stop(&pd->ev, &pd->lease_timer);
	if (j == NULL)
		return;
	j->work = leave_work;
	j->done = leave_done;
	if (dbq_push(pd, j) == -1)
		free(j);
}
