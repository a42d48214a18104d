/* db_pg: the PostgreSQL driver of the statement layer (db.h), over libpq.
 * One connection per process, opened from a libpq URI; each statement is
 * prepared once per connection (its ?N rewritten to $N), its parameters
 * sent as text (blobs in binary) and its rows read in binary. A
 * connection that broke (server down, restarted) fails the call that met
 * it; a later call connects again, so that no process needs a restart. */
#include "db.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <poll.h>
#include <time.h>

#include <libpq-fe.h>

#include "log.h"
#include "store.h"

/* Parameters a statement takes at most (the session insert takes 15). */
#define PG_MAX_PARAMS 16
/* The type OIDs read here (server/catalog/pg_type_d.h, stable). */
#define PG_BOOL 16
#define PG_INT8 20
#define PG_INT2 21
#define PG_INT4 23
#define PG_TEXT 25

struct pg_db;

struct pg_stmt {
	struct pg_db *db;
	const char *sql;
	char name[8];
	int nparams;
	unsigned gen;               /* the connection it was prepared on */
	const char *val[PG_MAX_PARAMS];
	int len[PG_MAX_PARAMS], fmt[PG_MAX_PARAMS];
	char num[PG_MAX_PARAMS][24];
	PGresult *res;
	int row;
};

struct pg_db {
	struct db_head head;
	PGconn *conn;
	unsigned gen;               /* counts connections made */
	int in_tx;                  /* between store_begin and store_commit */
	int listening;              /* LISTEN ran on connection listen_gen */
	unsigned listen_gen;
	struct timespec answered;   /* when a statement last ran (monotonic) */
	long long changes, total;
	char err[256];
	struct pg_stmt stmts[STORE_MAX_STMTS];
	int n;
};

#define PGDB(st) ((struct pg_db *)(void *)(st))
#define STMT(s) ((struct pg_stmt *)(void *)(s))

/* Keeps message as the last error, without its final newline. */
static void pg_error(struct pg_db *db, const char *message)
{
	size_t n;

	snprintf(db->err, sizeof(db->err), "%s", message ? message : "");
	n = strlen(db->err);
	while (n > 0 && (db->err[n - 1] == '\n' || db->err[n - 1] == ' '))
		db->err[--n] = '\0';
}

/* The server's notices (e.g. "there is no transaction in progress") are
 * not errors, and libpq would print them on stderr. */
static void pg_notice(void *arg, const char *message)
{
	log_debug("postgresql: %s", message);
}

/* Whether an idle connection's server went away (a restart): it then
 * sent its farewell and closed, which libpq notes once it reads them.
 * Found before a statement is sent, rather than by the statement's
 * failure, so that the first request after a restart succeeds. */
static int pg_gone(PGconn *conn)
{
	struct pollfd p = { .fd = PQsocket(conn), .events = POLLIN };
	int i;

	for (i = 0; i < 4 && p.fd >= 0 && poll(&p, 1, 0) == 1; i++)
		if (!PQconsumeInput(conn))
			break;
	return PQstatus(conn) != CONNECTION_OK;
}

/* The connection, made again when it broke: 0, or -1 when it cannot be
 * (and always while a transaction was open on the broken one, so that
 * its remaining writes fail rather than land outside it). */
static int pg_alive(struct pg_db *db)
{
	if (!pg_gone(db->conn))
		return 0;
	if (db->in_tx) {
		pg_error(db, "connection lost in a transaction");
		return -1;
	}
	PQreset(db->conn);
	if (PQstatus(db->conn) != CONNECTION_OK) {
		pg_error(db, PQerrorMessage(db->conn));
		return -1;
	}
	PQsetErrorVerbosity(db->conn, PQERRORS_TERSE);
	db->gen++;
	log_info("postgresql: connected again");
	return 0;
}

/* sql with ?N turned into $N (same length) into out; the highest N into
 * *max and which N occur into used[]. -1 past PG_MAX_PARAMS. */
static int pg_rewrite(const char *sql, char *out, int *max,
    int used[PG_MAX_PARAMS])
{
	int quoted = 0, n;

	*max = 0;
	for (; *sql; sql++, out++) {
		*out = *sql;
		if (*sql == '\'')
			quoted = !quoted;
		if (quoted || *sql != '?' || sql[1] < '0' || sql[1] > '9')
			continue;
		*out = '$';
		n = (int)strtol(sql + 1, NULL, 10);
		if (n < 1 || n > PG_MAX_PARAMS)
			return -1;
		used[n - 1] = 1;
		if (n > *max)
			*max = n;
	}
	*out = '\0';
	return 0;
}

/* Prepares s on the current connection. A parameter the SQL never
 * names (the rate statements skip some) is declared text, since
 * PostgreSQL cannot infer its type. 0 or -1. */
static int pg_prepare(struct pg_db *db, struct pg_stmt *s)
{
	Oid types[PG_MAX_PARAMS];
	int used[PG_MAX_PARAMS] = { 0 }, i, rc = -1;
	char *text = malloc(strlen(s->sql) + 1);
	PGresult *res;

	if (text == NULL || pg_rewrite(s->sql, text, &s->nparams, used) == -1) {
		free(text);
		pg_error(db, "statement not prepared");
		return -1;
	}
	for (i = 0; i < s->nparams; i++)
		types[i] = used[i] ? 0 : PG_TEXT;
	res = PQprepare(db->conn, s->name, text, s->nparams, types);
	if (PQresultStatus(res) == PGRES_COMMAND_OK) {
		s->gen = db->gen;
		rc = 0;
	} else
		pg_error(db, PQresultErrorMessage(res));
	PQclear(res);
	free(text);
	return rc;
}

static void pg_reset(struct db_stmt *ds)
{
	struct pg_stmt *s = STMT(ds);

	PQclear(s->res);
	s->res = NULL;
	s->row = -1;
	memset(s->val, 0, sizeof(s->val));
	memset(s->fmt, 0, sizeof(s->fmt));
	memset(s->len, 0, sizeof(s->len));
}

static struct pg_stmt *pg_find(struct pg_db *db, const char *sql)
{
	struct pg_stmt *s;
	int i;

	for (i = 0; i < db->n; i++)
		if (db->stmts[i].sql == sql)
			return &db->stmts[i];
	if (db->n == STORE_MAX_STMTS) {
		log_err("db: statement cache full");
		return NULL;
	}
	s = &db->stmts[db->n];
	s->db = db;
	s->sql = sql;
	snprintf(s->name, sizeof(s->name), "p%d", db->n);
	s->gen = db->gen - 1;
	s->res = NULL;
	db->n++;
	return s;
}

static struct db_stmt *pg_stmt(struct store *st, const char *sql)
{
	struct pg_db *db = PGDB(st);
	struct pg_stmt *s;

	if (pg_alive(db) == -1 || (s = pg_find(db, sql)) == NULL) {
		log_err("db: %s", db->err);
		return NULL;
	}
	pg_reset((struct db_stmt *)(void *)s);
	if (s->gen != db->gen && pg_prepare(db, s) == -1) {
		log_err("db: prepare: %s", db->err);
		return NULL;
	}
	return (struct db_stmt *)(void *)s;
}

static int pg_bind(struct pg_stmt *s, int i, const void *p, int len, int fmt)
{
	if (i < 1 || i > s->nparams)
		return -1;
	s->val[i - 1] = p;
	s->len[i - 1] = len;
	s->fmt[i - 1] = fmt;
	return 0;
}

static int pg_bind_text(struct db_stmt *ds, int i, const char *t)
{
	return pg_bind(STMT(ds), i, t, 0, 0);
}

/* A blob in binary: bytea's text form would need escaping. An empty one
 * still needs a pointer that is not NULL, or it would be NULL. */
static int pg_bind_blob(struct db_stmt *ds, int i, const void *p, size_t n)
{
	if (n > INT32_MAX)
		return -1;
	return pg_bind(STMT(ds), i, p ? p : "", (int)n, 1);
}

static int pg_bind_int(struct db_stmt *ds, int i, long long v)
{
	struct pg_stmt *s = STMT(ds);

	if (i < 1 || i > s->nparams)
		return -1;
	snprintf(s->num[i - 1], sizeof(s->num[0]), "%lld", v);
	return pg_bind(s, i, s->num[i - 1], 0, 0);
}

static int pg_nparams(struct db_stmt *ds)
{
	return STMT(ds)->nparams;
}

/* What a command changed, as sqlite3_changes counts: the rows of an
 * INSERT, UPDATE or DELETE. */
static void pg_count(struct pg_db *db, PGresult *res)
{
	const char *tag = PQcmdStatus(res);

	if (strncmp(tag, "INSERT", 6) && strncmp(tag, "UPDATE", 6) &&
	    strncmp(tag, "DELETE", 6))
		return;
	db->changes = strtoll(PQcmdTuples(res), NULL, 10);
	db->total += db->changes;
}

/* Runs s on the first step: 0 or -1. */
static int pg_run(struct pg_stmt *s)
{
	struct pg_db *db = s->db;
	ExecStatusType rc;

	s->res = PQexecPrepared(db->conn, s->name, s->nparams, s->val, s->len,
	    s->fmt, 1);
	rc = PQresultStatus(s->res);
	if (rc == PGRES_COMMAND_OK || rc == PGRES_TUPLES_OK) {
		pg_count(db, s->res);
		clock_gettime(CLOCK_MONOTONIC, &db->answered);
		return 0;
	}
	pg_error(db, s->res ? PQresultErrorMessage(s->res) :
	    PQerrorMessage(db->conn));
	PQclear(s->res);
	s->res = NULL;
	return -1;
}

static int pg_step(struct db_stmt *ds)
{
	struct pg_stmt *s = STMT(ds);

	if (s->res == NULL && pg_run(s) == -1)
		return DB_ERROR;
	if (s->row + 1 >= PQntuples(s->res))
		return DB_DONE;
	s->row++;
	return DB_ROW;
}

static int pg_col_null(struct db_stmt *ds, int i)
{
	struct pg_stmt *s = STMT(ds);

	return PQgetisnull(s->res, s->row, i);
}

static const char *pg_col_text(struct db_stmt *ds, int i)
{
	struct pg_stmt *s = STMT(ds);

	return pg_col_null(ds, i) ? NULL : PQgetvalue(s->res, s->row, i);
}

static const unsigned char *pg_col_blob(struct db_stmt *ds, int i, size_t *n)
{
	struct pg_stmt *s = STMT(ds);

	if (pg_col_null(ds, i)) {
		*n = 0;
		return NULL;
	}
	*n = (size_t)PQgetlength(s->res, s->row, i);
	return (const unsigned char *)PQgetvalue(s->res, s->row, i);
}

/* A big-endian integer of n bytes, sign-extended. */
static long long pg_be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	if (n < 8 && (p[0] & 0x80))
		v |= ~(uint64_t)0 << (8 * n);
	return (long long)v;
}

static long long pg_col_int(struct db_stmt *ds, int i)
{
	struct pg_stmt *s = STMT(ds);
	const unsigned char *p;

	if (pg_col_null(ds, i))
		return 0;
	p = (const unsigned char *)PQgetvalue(s->res, s->row, i);
	switch (PQftype(s->res, i)) {
	case PG_INT8:
		return pg_be(p, 8);
	case PG_INT4:
		return pg_be(p, 4);
	case PG_INT2:
		return pg_be(p, 2);
	case PG_BOOL:
		return p[0] != 0;
	default:
		log_err("db: column %d is not an integer", i);
		return 0;
	}
}

static long long pg_changes(struct store *st)
{
	return PGDB(st)->changes;
}

static long long pg_total_changes(struct store *st)
{
	return PGDB(st)->total;
}

/* sql run as a simple query (no parameters, text results): its result
 * when it ran, else NULL with the error kept. */
static PGresult *pg_simple(struct pg_db *db, const char *sql)
{
	PGresult *res;
	ExecStatusType rc;

	if (pg_alive(db) == -1)
		return NULL;
	res = PQexec(db->conn, sql);
	rc = PQresultStatus(res);
	if (rc == PGRES_COMMAND_OK || rc == PGRES_TUPLES_OK) {
		pg_count(db, res);
		clock_gettime(CLOCK_MONOTONIC, &db->answered);
		return res;
	}
	pg_error(db, res ? PQresultErrorMessage(res) : PQerrorMessage(db->conn));
	PQclear(res);
	return NULL;
}

static int pg_exec(struct store *st, const char *sql)
{
	PGresult *res = pg_simple(PGDB(st), sql);

	PQclear(res);
	return res ? 0 : -1;
}

/* The first column of a simple query's first row: as db_ops.one_int. */
static int pg_one_res(PGresult *res, long long *v)
{
	int rc;

	if (res == NULL)
		return -1;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = -1;
	else if (PQntuples(res) == 0 || PQnfields(res) == 0)
		rc = 1;
	else if (PQgetisnull(res, 0, 0))
		rc = 2;
	else {
		*v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		rc = 0;
	}
	PQclear(res);
	return rc;
}

static int pg_one(struct store *st, const char *sql, long long *v)
{
	return pg_one_res(pg_simple(PGDB(st), sql), v);
}

/* Not within another: its COMMIT would end the outer one early. */
static int pg_begin(struct store *st)
{
	struct pg_db *db = PGDB(st);

	if (db->in_tx) {
		pg_error(db, "a transaction is open already");
		return -1;
	}
	if (pg_exec(st, "BEGIN") == -1)
		return -1;
	db->in_tx = 1;
	return 0;
}

/* COMMIT, which PostgreSQL answers with ROLLBACK after a failed statement
 * and with a mere warning outside a transaction: both fail here. */
static int pg_commit(struct store *st)
{
	struct pg_db *db = PGDB(st);
	PGresult *res;
	int rc = -1;

	if (!db->in_tx) {
		pg_error(db, "no transaction is open");
		return -1;
	}
	db->in_tx = 0;
	/* A failed statement, or a connection lost meanwhile (whose
	 * replacement would commit nothing, with a warning). */
	if (PQtransactionStatus(db->conn) != PQTRANS_INTRANS) {
		if (PQtransactionStatus(db->conn) == PQTRANS_INERROR)
			PQclear(PQexec(db->conn, "ROLLBACK"));
		pg_error(db, "the transaction failed");
		return -1;
	}
	/* On this connection only: a reconnect here would COMMIT nothing on
	 * a new one and answer "COMMIT" all the same. */
	res = PQexec(db->conn, "COMMIT");
	if (res && PQresultStatus(res) == PGRES_COMMAND_OK &&
	    !strcmp(PQcmdStatus(res), "COMMIT") &&
	    PQtransactionStatus(db->conn) == PQTRANS_IDLE)
		rc = 0;
	else
		pg_error(db, res && PQresultStatus(res) == PGRES_COMMAND_OK ?
		    "the transaction was rolled back" : PQerrorMessage(db->conn));
	PQclear(res);
	return rc;
}

/* On the connection as it is: one that broke is made again by the next
 * statement, not here as well (a database away would cost each request
 * two connection timeouts). */
static int pg_listen(struct store *st, const char *channel)
{
	struct pg_db *db = PGDB(st);
	PGresult *res;
	char sql[80];
	int rc = -1;

	if (db->in_tx || PQstatus(db->conn) != CONNECTION_OK ||
	    snprintf(sql, sizeof(sql), "LISTEN %s", channel) >= (int)sizeof(sql))
		return -1;
	res = PQexec(db->conn, sql);
	if (PQresultStatus(res) == PGRES_COMMAND_OK) {
		db->listening = 1;
		db->listen_gen = db->gen;
		clock_gettime(CLOCK_MONOTONIC, &db->answered);
		rc = 0;
	} else
		pg_error(db, res ? PQresultErrorMessage(res) :
		    PQerrorMessage(db->conn));
	PQclear(res);
	return rc;
}

static long pg_ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t->tv_sec) * 1000 +
	    (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* Reads all that has arrived: 1 when it is all in, 0 when more kept
 * coming (64 reads; a flood is not waited out), -1 when the connection
 * broke. */
static int pg_drain(PGconn *conn)
{
	struct pollfd p = { .fd = PQsocket(conn), .events = POLLIN };
	int i;

	for (i = 0; i < 64; i++) {
		if (p.fd < 0 || PQstatus(conn) != CONNECTION_OK)
			return -1;
		switch (poll(&p, 1, 0)) {
		case 0:
			return 1;
		case -1:
			return 0;           /* a signal: not known to be all */
		}
		if (!PQconsumeInput(conn))
			return -1;
	}
	return 0;
}

static int pg_told(struct store *st, long fresh_ms, store_listen_fn *fn,
    void *ctx)
{
	struct pg_db *db = PGDB(st);
	PGnotify *n;
	int in;

	if (!db->listening || db->listen_gen != db->gen ||
	    (in = pg_drain(db->conn)) == -1)
		return -1;
	while ((n = PQnotifies(db->conn)) != NULL) {
		fn(ctx, n->relname, n->extra);
		PQfreemem(n);
	}
	/* Inside a transaction the server holds what it has to tell. */
	return in == 1 && !db->in_tx &&
	    pg_ms_since(&db->answered) <= fresh_ms ? 1 : 0;
}

static const char *pg_errmsg(struct store *st)
{
	return PGDB(st)->err;
}

static void pg_close(struct store *st)
{
	struct pg_db *db = PGDB(st);
	int i;

	if (db == NULL)
		return;
	for (i = 0; i < db->n; i++)
		PQclear(db->stmts[i].res);
	PQfinish(db->conn);
	free(db);
}

static const struct db_ops pg_ops = {
	.name = "postgresql", .shared = 1,
	.stmt = pg_stmt, .bind_text = pg_bind_text, .bind_blob = pg_bind_blob,
	.bind_int = pg_bind_int, .nparams = pg_nparams, .step = pg_step,
	.reset = pg_reset, .col_null = pg_col_null, .col_text = pg_col_text,
	.col_blob = pg_col_blob, .col_int = pg_col_int, .changes = pg_changes,
	.total_changes = pg_total_changes, .exec = pg_exec, .one_int = pg_one,
	.begin = pg_begin, .commit = pg_commit, .errmsg = pg_errmsg,
	.close = pg_close, .listen = pg_listen, .told = pg_told,
};

/* Bounds on every wait, so that no request (nor pushd's loop) hangs on a
 * lock or a peer gone silent: 5 s for a statement or a lock (ours take
 * milliseconds), 10 s of unacknowledged data, keepalives after 10 s idle. */
#define PG_OPTIONS "-c statement_timeout=5s -c lock_timeout=5s"
#define PG_OPTIONS_RO PG_OPTIONS " -c default_transaction_read_only=on"

/* A connection to uri. Our defaults come before the URI so that it can
 * override them: bounded waits, and our name in pg_stat_activity.
 * read_only for postern-admin check. NULL with err set. */
static PGconn *pg_connect(const char *uri, int read_only, char *err,
    size_t errlen)
{
	const char *keys[] = { "connect_timeout", "application_name", "options",
	    "tcp_user_timeout", "keepalives_idle", "keepalives_interval",
	    "keepalives_count", "dbname", NULL };
	const char *vals[] = { "5", "postern", read_only ? PG_OPTIONS_RO :
	    PG_OPTIONS, "10000", "10", "5", "3", uri, NULL };
	PGconn *conn = PQconnectdbParams(keys, vals, 1);

	if (conn && PQstatus(conn) == CONNECTION_OK) {
		PQsetNoticeProcessor(conn, pg_notice, NULL);
		/* No row's values (a DETAIL line) in a logged error. */
		PQsetErrorVerbosity(conn, PQERRORS_TERSE);
		return conn;
	}
	/* Not the URI in the message: it may hold a password. */
	snprintf(err, errlen, "state_db (PostgreSQL): %s",
	    conn ? PQerrorMessage(conn) : "out of memory");
	err[strcspn(err, "\n")] = '\0';
	PQfinish(conn);
	return NULL;
}

int db_pg_open(struct store **out, const char *uri, char *err, size_t errlen)
{
	struct pg_db *db;

	*out = NULL;
	if ((db = calloc(1, sizeof(*db))) == NULL) {
		snprintf(err, errlen, "state_db: out of memory");
		return -1;
	}
	db->head.ops = &pg_ops;
	db->gen = 1;
	if ((db->conn = pg_connect(uri, 0, err, errlen)) == NULL ||
	    db_pg_schema((struct store *)(void *)db, err, errlen) == -1) {
		pg_close((struct store *)(void *)db);
		return -1;
	}
	*out = (struct store *)(void *)db;
	return 0;
}

/* The version of a database (0 when it has none) and its tables and
 * indexes: 0, or -1 with err set. */
static int pg_version(PGconn *conn, long long *version, long long *objects,
    char *err, size_t errlen)
{
	static const char sql_objects[] =
	    "SELECT count(*) FROM pg_class c JOIN pg_namespace n"
	    " ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"
	    " AND c.relkind IN ('r', 'i')";
	long long has = 0;

	*version = 0;
	if (pg_one_res(PQexec(conn, "SELECT CASE WHEN to_regclass("
	    "'postern_schema') IS NULL THEN 0 ELSE 1 END"), &has) != 0 ||
	    (has && pg_one_res(PQexec(conn,
	    "SELECT version FROM postern_schema"), version) != 0) ||
	    (objects && pg_one_res(PQexec(conn, sql_objects), objects) != 0)) {
		snprintf(err, errlen, "state_db (PostgreSQL): %s",
		    PQerrorMessage(conn));
		err[strcspn(err, "\n")] = '\0';
		return -1;
	}
	return 0;
}

int db_pg_inspect(const char *uri, long long *version, long long *objects,
    char *err, size_t errlen)
{
	PGconn *conn = pg_connect(uri, 1, err, errlen);
	int rc;

	if (conn == NULL)
		return -1;
	rc = pg_version(conn, version, objects, err, errlen);
	PQfinish(conn);
	return rc;
}

int db_pg_version(struct store *st, long long *version, char *err,
    size_t errlen)
{
	return pg_version(PGDB(st)->conn, version, NULL, err, errlen);
}
