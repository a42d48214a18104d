/* store_test: the store's own hooks for the unit tests, which must make
 * and read states the interface never does (an older schema, a damaged
 * row, what a column holds). Not for the programs: a library of its own
 * (state/libstoretest.a) that only the unit tests link. */
#ifndef POSTERN_STORE_TEST_H
#define POSTERN_STORE_TEST_H

#include "store.h"

/* Runs sql (one or more statements): 0 or -1. */
int store_test_exec(struct store *st, const char *sql);
/* The first column of the first row of sql as an integer; -1 when there
 * is no row; -2 when that column is NULL; -3 when sql is not valid. */
long long store_test_int(struct store *st, const char *sql);
/* Empties every table (a shared PostgreSQL database between tests):
 * 0 or -1. */
int store_test_wipe(struct store *st);
/* The database the unit tests use when set (POSTERN_TEST_STATE_DB, e.g. a
 * PostgreSQL URI), or NULL for a SQLite file of their own. */
const char *store_test_db(void);
/* Rows this connection changed since it opened. */
long long store_test_changes(struct store *st);

#endif
