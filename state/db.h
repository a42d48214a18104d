/* db: the statement layer the files of state/ share (private to state/),
 * the same over both engines: statements prepared once per connection and
 * kept (their SQL, with ?N parameters, a string of static storage whose
 * address is the cache key), bound by index, stepped row by row. Each
 * engine is a driver behind struct db_ops: db_sqlite.c and db_pg.c. The
 * SQL of store_*.c is written once, in the subset both engines accept. */
#ifndef POSTERN_STATE_DB_H
#define POSTERN_STATE_DB_H

#include <stddef.h>

#include "store.h"

/* Statements a process prepares at most (all of state/ holds 50). */
#define STORE_MAX_STMTS 64

/* What db_step returns. */
enum { DB_ERROR = -1, DB_DONE = 0, DB_ROW = 1 };

struct store;
struct db_stmt;          /* a driver's statement, opaque here */
struct sesskeep;

struct db_ops {
	const char *name;
	/* Whether other nodes may share the database, and so are told of
	 * what changes (NOTIFY): PostgreSQL's yes, SQLite's no. */
	int shared;
	struct db_stmt *(*stmt)(struct store *st, const char *sql);
	int (*bind_text)(struct db_stmt *s, int i, const char *t);
	int (*bind_blob)(struct db_stmt *s, int i, const void *p, size_t n);
	int (*bind_int)(struct db_stmt *s, int i, long long v);
	int (*nparams)(struct db_stmt *s);
	int (*step)(struct db_stmt *s);
	void (*reset)(struct db_stmt *s);
	int (*col_null)(struct db_stmt *s, int i);
	const char *(*col_text)(struct db_stmt *s, int i);
	const unsigned char *(*col_blob)(struct db_stmt *s, int i, size_t *n);
	long long (*col_int)(struct db_stmt *s, int i);
	/* Rows the last statement changed; since the connection opened. */
	long long (*changes)(struct store *st);
	long long (*total_changes)(struct store *st);
	/* Runs sql (one or more statements, no parameters): 0 or -1. */
	int (*exec)(struct store *st, const char *sql);
	/* The first column of sql's first row: 0 with *v, 1 no row, 2 NULL,
	 * -1 when sql does not run. */
	int (*one_int)(struct store *st, const char *sql, long long *v);
	int (*begin)(struct store *st);
	int (*commit)(struct store *st);
	const char *(*errmsg)(struct store *st);
	void (*close)(struct store *st);
	/* Listening on the store's own connection, for what other nodes
	 * tell (NULL where nobody tells: SQLite). listen: LISTEN channel
	 * (a plain identifier), 0 or -1. told: without waiting, hands what
	 * arrived to fn; then 1 when the connection also answered a
	 * statement within the last fresh_ms (so nothing told before then
	 * can still be on its way), 0 when it did not, -1 when it does not
	 * listen (never did, or was made again since: told things are
	 * lost). */
	int (*listen)(struct store *st, const char *channel);
	int (*told)(struct store *st, long fresh_ms, store_listen_fn *fn,
	    void *ctx);
};

/* The common head of each driver's struct store. */
struct db_head {
	const struct db_ops *ops;
	char node[STORE_NODE_MAX + 1];  /* store_set_node's, else "" */
	struct sesskeep *keep;          /* store_sess_keep's, else NULL */
};

/* The drivers: open (creating and migrating) or inspect read-only, as
 * store_open and store_inspect say. */
int db_sqlite_open(struct store **out, const char *path, char *err,
    size_t errlen);
int db_sqlite_inspect(const char *path, long long *version,
    long long *objects, char *err, size_t errlen);
int db_pg_open(struct store **out, const char *uri, char *err,
    size_t errlen);
int db_pg_inspect(const char *uri, long long *version, long long *objects,
    char *err, size_t errlen);

/* PostgreSQL's schema (db_pg_schema.c): created at STORE_SCHEMA_VERSION
 * on a fresh database, checked on one made before: 0, or -1 with err.
 * And the version a database holds (0 for none). */
int db_pg_schema(struct store *st, char *err, size_t errlen);
int db_pg_version(struct store *st, long long *version, char *err,
    size_t errlen);

/* The step from version from to the next (db_upgrades.c), in the
 * schema's words; NULL past the current version. */
const char *db_upgrade_step(int from);
/* SQL in the schema's words as PostgreSQL takes it (malloc'd), or NULL. */
char *db_pg_mapped(const char *sql);

/* conf/schema.sql, compiled in (store.c): the one schema. */
extern const char db_schema_sql[];

/* The common head of an open store, and its driver. */
static inline struct db_head *db_head(struct store *st)
{
	return (struct db_head *)(void *)st;
}

static inline const struct db_ops *db_ops(struct store *st)
{
	return db_head(st)->ops;
}

/* The prepared statement for sql, reset and unbound; NULL on error
 * (logged). Text and blobs bound to it are copied or used before the
 * call that bound them returns. */
struct db_stmt *db_stmt(struct store *st, const char *sql);
/* Binders, 0 or -1; db_text binds NULL for a NULL string. */
int db_text(struct store *st, struct db_stmt *s, int i, const char *t);
int db_blob(struct store *st, struct db_stmt *s, int i, const void *p,
    size_t n);
int db_int(struct store *st, struct db_stmt *s, int i, long long v);
/* DB_ROW, DB_DONE or DB_ERROR (logged by db_fail). */
int db_step(struct store *st, struct db_stmt *s);
void db_reset(struct store *st, struct db_stmt *s);
/* Columns of the current row: text is "" when NULL. */
const char *db_col_text(struct store *st, struct db_stmt *s, int i);
const unsigned char *db_col_blob(struct store *st, struct db_stmt *s, int i,
    size_t *n);
long long db_col_int(struct store *st, struct db_stmt *s, int i);
/* Steps a statement that returns no rows, then resets it: 0 or -1. */
int db_exec(struct store *st, struct db_stmt *s);
/* As db_exec, then the rows it changed: the count or -1. */
int db_changes(struct store *st, struct db_stmt *s);
/* Steps a statement of one integer row and resets it: the integer, or -1
 * (no row, or an error). */
long long db_one(struct store *st, struct db_stmt *s);
/* Logs the connection's last error under what: always -1. */
int db_fail(struct store *st, const char *what);

#endif
