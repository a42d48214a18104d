/* store_listen: what one node tells the others through the database.
 * PostgreSQL's NOTIFY carries it; a listener is a connection of its own,
 * made and read without ever waiting (libpq's non-blocking interface),
 * so that pushd can drive it from its event loop beside every stream.
 * SQLite is one node: nothing is told, nobody listens. */
#include "store.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "db.h"
#include "log.h"

int store_notify(struct store *st, const char *channel, const char *payload)
{
	static const char sql[] = "SELECT pg_notify(?1, ?2)";
	struct db_stmt *s;
	int rc;

	if (!db_ops(st)->shared)
		return 0;
	if ((s = db_stmt(st, sql)) == NULL || db_text(st, s, 1, channel) == -1 ||
	    db_text(st, s, 2, payload) == -1)
		return -1;
	rc = db_step(st, s);
	db_reset(st, s);
	return rc == DB_ROW ? 0 : -1;
}

enum listen_state { L_IDLE, L_CONNECTING, L_SUBSCRIBING, L_READY };

struct store_listen {
	char *uri;
	char *listen_sql;           /* "LISTEN a; LISTEN b" */
	PGconn *conn;
	enum listen_state state;
	short events;
};

static void l_notice(void *arg, const char *message)
{
	(void)arg;
	log_debug("postgresql (listener): %s", message);
}

struct store_listen *store_listen_new(const char *state_db,
    const char *const *channels)
{
	struct store_listen *l;
	size_t n = 1, i;

	if (!store_is_url(state_db))
		return NULL;
	for (i = 0; channels[i]; i++)
		n += strlen(channels[i]) + 9;
	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->uri = strdup(state_db)) == NULL ||
	    (l->listen_sql = calloc(1, n)) == NULL) {
		store_listen_free(l);
		return NULL;
	}
	for (i = 0; channels[i]; i++) {
		strcat(l->listen_sql, "LISTEN ");
		strcat(l->listen_sql, channels[i]);
		strcat(l->listen_sql, ";");
	}
	if (store_listen_restart(l) == -1)
		log_warn("postgresql (listener): cannot start connecting");
	return l;
}

void store_listen_free(struct store_listen *l)
{
	if (l == NULL)
		return;
	PQfinish(l->conn);
	free(l->uri);
	free(l->listen_sql);
	free(l);
}

int store_listen_restart(struct store_listen *l)
{
	/* As the store's own connection (db_pg.c): keepalives and a bound on
	 * unacknowledged data, so that a peer gone silent is noticed. The
	 * caller bounds the connect itself (libpq's connect_timeout does not
	 * apply without waiting). */
	const char *keys[] = { "application_name", "tcp_user_timeout",
	    "keepalives_idle", "keepalives_interval", "keepalives_count",
	    "dbname", NULL };
	const char *vals[] = { "postern-listen", "10000", "10", "5", "3", l->uri,
	    NULL };

	PQfinish(l->conn);
	l->state = L_IDLE;
	l->events = 0;
	if ((l->conn = PQconnectStartParams(keys, vals, 1)) == NULL ||
	    PQstatus(l->conn) == CONNECTION_BAD) {
		PQfinish(l->conn);
		l->conn = NULL;
		return -1;
	}
	PQsetNoticeProcessor(l->conn, l_notice, NULL);
	l->state = L_CONNECTING;
	/* libpq: before the first PQconnectPoll, wait as if for writing. */
	l->events = POLLOUT;
	return 0;
}

int store_listen_fd(const struct store_listen *l)
{
	return l->conn && l->state != L_IDLE ? PQsocket(l->conn) : -1;
}

short store_listen_events(const struct store_listen *l)
{
	return l->events;
}

int store_listen_ready(const struct store_listen *l)
{
	return l->state == L_READY;
}

static int l_broken(struct store_listen *l, const char *what)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%s", l->conn ? PQerrorMessage(l->conn) : "");
	msg[strcspn(msg, "\n")] = '\0';
	if (l->state != L_IDLE)
		log_warn("postgresql (listener): %s%s%s", what, *msg ? ": " : "",
		    msg);
	l->state = L_IDLE;
	l->events = 0;
	return -1;
}

/* Connecting: one step of libpq's state machine. */
static int l_connect(struct store_listen *l)
{
	switch (PQconnectPoll(l->conn)) {
	case PGRES_POLLING_READING:
		l->events = POLLIN;
		return 0;
	case PGRES_POLLING_WRITING:
		l->events = POLLOUT;
		return 0;
	case PGRES_POLLING_OK:
		break;
	default:
		return l_broken(l, "cannot connect");
	}
	if (PQsetnonblocking(l->conn, 1) == -1 ||
	    !PQsendQuery(l->conn, l->listen_sql))
		return l_broken(l, "cannot listen");
	l->state = L_SUBSCRIBING;
	return 0;
}

/* Connected: what the server sent. 1 once LISTEN is answered. */
static int l_read(struct store_listen *l, store_listen_fn *fn, void *ctx)
{
	PGresult *res;
	PGnotify *n;
	int flushed, began = 0;

	if ((flushed = PQflush(l->conn)) == -1 || !PQconsumeInput(l->conn))
		return l_broken(l, "connection lost");
	while (!PQisBusy(l->conn) && (res = PQgetResult(l->conn)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			PQclear(res);
			return l_broken(l, "LISTEN refused");
		}
		PQclear(res);
	}
	if (l->state == L_SUBSCRIBING && !PQisBusy(l->conn) && flushed == 0) {
		l->state = L_READY;
		began = 1;
	}
	while ((n = PQnotifies(l->conn)) != NULL) {
		if (l->state == L_READY)
			fn(ctx, n->relname, n->extra);
		PQfreemem(n);
	}
	l->events = POLLIN | (flushed == 1 ? POLLOUT : 0);
	return began;
}

int store_listen_step(struct store_listen *l, store_listen_fn *fn, void *ctx)
{
	int rc;

	if (l->conn == NULL || l->state == L_IDLE)
		return -1;
	if (l->state == L_CONNECTING && (rc = l_connect(l)) != 0)
		return rc;
	if (l->state == L_CONNECTING)
		return 0;
	return l_read(l, fn, ctx);
}
