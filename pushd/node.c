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
 * PUSHD_LEASE_FENCE_MS (before another node may take them), and tries
 * again the accounts it follows, whose tabs' sessions it also checks
 * every push_poll_interval (no poll of its own does). */
#include "node.h"

#include <time.h>

#include "acct.h"
#include "log.h"
#include "pushd.h"
#include "store.h"

/* What the renewal returned: the accounts still held. A lease without a
 * live account here (a row left behind) is given up, so that another
 * node with tabs of the account can take it. */
static void node_held(void *ctx, const char *account)
{
	struct pushd *pd = ctx;
	struct acct *a = acct_lookup(pd, account);

	if (a && !a->dead && !a->follower)
		a->lease_round = pd->lease_round;
	else if (store_lease_release(pd->app.store, account) == -1)
		log_warn("pushd: a lease left behind was not given up");
}

static void lost_unless_renewed(struct acct *a, void *ctx)
{
	if (!a->follower && a->lease_round != ((struct pushd *)ctx)->lease_round)
		acct_lease_lost(a);
}

static void lost(struct acct *a, void *ctx)
{
	(void)ctx;
	acct_lease_lost(a);
}

static void follow(struct acct *a, void *ctx)
{
	struct pushd *pd = ctx;

	if (a->follower && !acct_lease_retry(a) && !a->dead &&
	    pd->followed_checked == pd->ev.now)
		acct_check_tabs(a, 0);
}

static void node_lease(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);
	uint64_t sent = ev->clock(), now;

	pd->lease_round++;
	if (store_lease_renew(pd->app.store, node_held, pd) == 0) {
		pd->lease_ok = sent;
		acct_each(pd, lost_unless_renewed, pd);
	} else if ((now = ev->clock()) - pd->lease_ok >= PUSHD_LEASE_FENCE_MS) {
		/* The clock after the failed call: it may have waited for the
		 * database's timeouts. */
		log_warn("pushd: node %s: the leases were not renewed for %llu "
		    "ms: this node's channels stop", pd->app.cfg.node_name,
		    (unsigned long long)(now - pd->lease_ok));
		acct_each(pd, lost, NULL);
	}
	if (ev->now - pd->followed_checked >=
	    (uint64_t)pd->app.cfg.push_poll_interval * 1000)
		pd->followed_checked = ev->now;
	acct_each(pd, follow, pd);
	ev_timer_set(ev, t, PUSHD_LEASE_TICK_MS);
}

static void node_beat(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);

	/* Missed beats are harmless until STORE_NODE_GONE: logged, and the
	 * next one tries again (the store reconnects by itself). */
	if (store_node_beat(pd->app.store, (long long)time(NULL), 0) == -1)
		log_warn("pushd: node %s: the heartbeat was not written",
		    pd->app.cfg.node_name);
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

void node_stop(struct pushd *pd)
{
	ev_timer_stop(&pd->ev, &pd->node_timer);
	ev_timer_stop(&pd->ev, &pd->lease_timer);
	if (pd->app.store && store_node_leave(pd->app.store) == -1)
		log_warn("pushd: node %s: its row was not removed",
		    pd->app.cfg.node_name);
}
