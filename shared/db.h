/* db: the process's one SQLite connection to the shared state. Opened at
 * start-up (WAL, busy timeout, defensive), schema created or checked by
 * PRAGMA user_version, statements prepared once and kept. */
#ifndef POSTERN_DB_H
#define POSTERN_DB_H

#include <stddef.h>

#include <sqlite3.h>

#define DB_SCHEMA_VERSION 4
#define DB_MAX_STMTS 48

struct db {
	sqlite3 *h;
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} stmts[DB_MAX_STMTS];
	int n;
};

/* Opens (creating with mode 0600 when missing) and brings the schema to
 * DB_SCHEMA_VERSION. 0, or -1 with a message in err. */
int db_open(struct db *db, const char *path, char *err, size_t errlen);
void db_close(struct db *db);
/* The prepared statement for sql, which must be a string with static
 * storage (its address is the cache key). Reset and unbound, ready to bind;
 * NULL on error (logged). */
sqlite3_stmt *db_stmt(struct db *db, const char *sql);
/* Steps a statement that returns no rows, then resets it: 0 or -1. */
int db_exec_stmt(struct db *db, sqlite3_stmt *st);
/* Binds a NUL-terminated string or a blob, copying: 0 or -1. */
int db_bind_text(sqlite3_stmt *st, int i, const char *s);
int db_bind_blob(sqlite3_stmt *st, int i, const void *p, size_t n);
/* A plain check that the database answers. */
int db_ping(struct db *db);

#endif
