/* bus: what pushd hears from the other nodes through the database
 * (store_listen: PostgreSQL's LISTEN on a connection of its own, read on
 * the loop without waiting). Sessions ended on any node (a sign-out, a
 * revoke) end their streams here at once, rather than at the next poll's
 * check; the changes the holder of an account's lease finds reach the
 * tabs this node has of it (node.c: leases). A connection that breaks is
 * made again after BUS_RETRY_MS, and once it listens again every tab's
 * session is checked, every followed account's tabs are told to resync
 * and the Web Push watches are read again: what was told meanwhile is
 * lost. */
#include "bus.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <json-c/json.h>

#include "acct.h"
#include "callback.h"
#include "dbq.h"
#include "js.h"
#include "log.h"
#include "pushd.h"
#include "store.h"
#include "tab.h"
#include "wpwatch.h"

/* 1 s between attempts to connect; 10 s for one to come (libpq's own
 * connect_timeout does not apply to a connection made without waiting). */
#define BUS_RETRY_MS 1000
#define BUS_CONNECT_MS 10000

static const char *const bus_channels[] = {
	STORE_CHAN_SESSIONS, STORE_CHAN_CHANGES, NULL
};

/* -- telling --------------------------------------------------------------- */

struct tell_job {
	struct dbq_job j;
	char text[];
};

static void tell_work(struct dbq_job *j, struct store *st)
{
	j->rc = store_notify(st, STORE_CHAN_CHANGES,
	    container_of(j, struct tell_job, j)->text);
}

static void tell_done(struct dbq_job *j)
{
	if (j->rc == -1)
		log_warn("pushd: a change was not told to the other nodes");
	free(container_of(j, struct tell_job, j));
}

void bus_tell(struct pushd *pd, const char *payload)
{
	size_t n = strlen(payload) + 1;
	struct tell_job *m;

	if (!store_shared(pd->app.store))
		return;
	if ((m = malloc(sizeof(*m) + n)) == NULL) {
		log_warn("pushd: a change was not told to the other nodes");
		return;
	}
	memset(&m->j, 0, sizeof(m->j));
	memcpy(m->text, payload, n);
	m->j.work = tell_work;
	m->j.done = tell_done;
	if (dbq_push(pd, &m->j) == -1) {
		m->j.rc = -1;
		tell_done(&m->j);
	}
}

/* -- hearing --------------------------------------------------------------- */

/* An account's tabs' sessions checked when one of them holds sess_id
 * (every account's when NULL): the ended ones' streams end. */
static void bus_check_one(struct acct *a, void *ctx)
{
	const char *const *sess_id_of = ctx, *sess_id = *sess_id_of;
	struct acct_tab *t;

	for (t = a->tabs; t && sess_id; t = t->next)
		if (!t->dead && !strcmp(t->sess_id, sess_id))
			break;
	if (sess_id == NULL || t != NULL)
		acct_check_tabs(a, 0);
}

static void bus_check(struct pushd *pd, const char *key, const char *sess_id)
{
	struct acct *a;

	if (key == NULL)
		acct_each(pd, bus_check_one, &sess_id);
	else if ((a = acct_lookup(pd, key)) != NULL && !a->dead)
		acct_check_tabs(a, 0);
}

/* The holder's new states ({"a": key, "s": {type: state}}) for the tabs
 * of an account this node follows. */
static void bus_changes(struct pushd *pd, const char *payload)
{
	json_object *o = js_parse(payload, strlen(payload)), *s;
	char *states[ACCT_NTYPES] = { NULL };
	const char *key = o ? js_str(o, "a") : NULL, *v;
	struct acct *a = key ? acct_lookup(pd, key) : NULL;
	unsigned i, got = 0;

	/* A device's subscription stored or removed on another node. */
	if (o && key && js_str(o, "w")) {
		v = js_str(o, "n");
		if (v == NULL || strcmp(v, pd->app.cfg.node_name))
			wp_watch_told(pd, key, js_str(o, "w"));
		json_object_put(o);
		return;
	}
	/* A push callback that reached another node: for the holder. */
	if (o && js_str(o, "h")) {
		if (a && !a->dead && !a->follower)
			callback_passed(a, o);
		json_object_put(o);
		return;
	}
	if (a == NULL || a->dead || !a->follower) {
		json_object_put(o);
		return;
	}
	if ((s = js_obj(o, "s")) == NULL) {
		acct_resync(a);        /* states too long to be told */
		json_object_put(o);
		return;
	}
	for (i = 0; i < ACCT_NTYPES; i++)
		if ((v = js_str(s, acct_type_names[i])) != NULL &&
		    (states[i] = strdup(v)) != NULL)
			got |= 1u << i;
	acct_heard(a, states, got);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	json_object_put(o);
}

static void bus_heard(void *ctx, const char *channel, const char *payload)
{
	struct pushd *pd = ctx;

	if (!strcmp(channel, STORE_CHAN_CHANGES)) {
		bus_changes(pd, payload);
		return;
	}
	if (strcmp(channel, STORE_CHAN_SESSIONS))
		return;
	if (!strncmp(payload, "s ", 2))
		bus_check(pd, NULL, payload + 2);
	else if (!strncmp(payload, "a ", 2))
		bus_check(pd, payload + 2, NULL);
	else
		bus_check(pd, NULL, NULL);
}

/* Listening again: the followed accounts' tabs may have missed changes. */
static void bus_resync_one(struct acct *a, void *ctx)
{
	(void)ctx;
	if (a->follower)
		acct_resync(a);
}

static uint32_t epoll_of(short events)
{
	return ((events & POLLIN) ? EPOLLIN : 0) |
	    ((events & POLLOUT) ? EPOLLOUT : 0);
}

static void bus_io(struct ev *ev, struct ev_io *io, uint32_t revents);

/* After a step: the socket watched for what the listener waits for (the
 * socket itself may change while connecting), or a retry armed. */
static void bus_watch(struct pushd *pd, int rc)
{
	int fd = rc == -1 ? -1 : store_listen_fd(pd->bus), io = 0;
	uint32_t want = epoll_of(store_listen_events(pd->bus));

	/* While connecting libpq may close its socket and open another
	 * (the next address), under the same number: the watcher is made
	 * anew after each step until it listens. */
	if (pd->bus_io.fd >= 0 && (pd->bus_io.fd != fd || want == 0 ||
	    !store_listen_ready(pd->bus)))
		ev_io_del(&pd->ev, &pd->bus_io);
	if (fd >= 0 && want && rc != -1) {
		if (pd->bus_io.fd < 0)
			io = ev_io_add(&pd->ev, &pd->bus_io, fd, want, bus_io);
		else if (pd->bus_io.events != want)
			io = ev_io_mod(&pd->ev, &pd->bus_io, want);
		if (io == -1 && pd->bus_io.fd >= 0)
			ev_io_del(&pd->ev, &pd->bus_io);
	}
	if (io == -1 && store_listen_ready(pd->bus)) {
		/* Listening, but not watched: made again. */
		log_warn("pushd: the listening connection cannot be watched");
		store_listen_restart(pd->bus);
		rc = -1;
	}
	if (rc == -1 || io == -1)
		ev_timer_set(&pd->ev, &pd->bus_timer, BUS_RETRY_MS);
	else if (rc == 1) {
		ev_timer_stop(&pd->ev, &pd->bus_timer);
		log_info("pushd: listening to the other nodes");
		bus_check(pd, NULL, NULL);
		acct_each(pd, bus_resync_one, NULL);
		wp_watch_recheck(pd);
	}
}

static void bus_io(struct ev *ev, struct ev_io *io, uint32_t revents)
{
	struct pushd *pd = pushd_of(ev);

	(void)io;
	(void)revents;
	bus_watch(pd, store_listen_step(pd->bus, bus_heard, pd));
}

/* A retry, or a connection that did not come in time. */
static void bus_timeout(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);

	(void)t;
	if (store_listen_ready(pd->bus))
		return;
	if (pd->bus_io.fd >= 0)
		ev_io_del(&pd->ev, &pd->bus_io);
	if (store_listen_restart(pd->bus) == -1) {
		ev_timer_set(&pd->ev, &pd->bus_timer, BUS_RETRY_MS);
		return;
	}
	ev_timer_set(&pd->ev, &pd->bus_timer, BUS_CONNECT_MS);
	bus_watch(pd, store_listen_step(pd->bus, bus_heard, pd));
}

void bus_start(struct pushd *pd)
{
	pd->bus_io.fd = -1;
	ev_timer_init(&pd->bus_timer, bus_timeout);
	if ((pd->bus = store_listen_new(pd->app.cfg.state_db, bus_channels)) == NULL)
		return;
	ev_timer_set(&pd->ev, &pd->bus_timer, BUS_CONNECT_MS);
	if (store_listen_fd(pd->bus) < 0)
		ev_timer_set(&pd->ev, &pd->bus_timer, BUS_RETRY_MS);
	else
		bus_watch(pd, 0);
}

void bus_stop(struct pushd *pd)
{
	ev_timer_stop(&pd->ev, &pd->bus_timer);
	if (pd->bus_io.fd >= 0)
		ev_io_del(&pd->ev, &pd->bus_io);
	store_listen_free(pd->bus);
	pd->bus = NULL;
}
