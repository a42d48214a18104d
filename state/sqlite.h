/* sqlite: what the files of state/ share over the one SQLite connection
 * (private to state/): the connection, its statements prepared once and
 * kept, and small helpers to bind and step them. */
#ifndef POSTERN_STATE_SQLITE_H
#define POSTERN_STATE_SQLITE_H

#include <stddef.h>

#include <sqlite3.h>

/* Statements a process prepares at most (all of state/ holds 50). */
#define STORE_MAX_STMTS 64

struct store {
	sqlite3 *h;
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} stmts[STORE_MAX_STMTS];
	int n;
};

/* The prepared statement for sql, which must be a string with static
 * storage (its address is the cache key). Reset and unbound, ready to
 * bind; NULL on error (logged). */
sqlite3_stmt *sq_stmt(struct store *st, const char *sql);
/* Steps a statement that returns no rows, then resets it: 0 or -1. */
int sq_exec(struct store *st, sqlite3_stmt *s);
/* As sq_exec, then the rows it changed: the count or -1. */
int sq_changes(struct store *st, sqlite3_stmt *s);
/* Steps a statement of one integer row and resets it: the integer, or -1
 * (no row, or an error). */
long long sq_int(struct store *st, sqlite3_stmt *s);
/* Binds a NUL-terminated string (NULL binds NULL) or a blob, copying:
 * 0 or -1. */
int sq_text(sqlite3_stmt *s, int i, const char *t);
int sq_blob(sqlite3_stmt *s, int i, const void *p, size_t n);
/* A column as text ("" when NULL). */
const char *sq_col_text(sqlite3_stmt *s, int i);
/* The first column of sql's first row, on any connection: 0 with *v set,
 * 1 when there is no row, 2 when the column is NULL, -1 when sql does
 * not run. For statements run once (the schema's version, inspections,
 * the test hooks), so not kept. */
int sq_one_int(sqlite3 *h, const char *sql, long long *v);
/* Logs the connection's last error under what: always -1. */
int sq_fail(struct store *st, const char *what);

#endif
