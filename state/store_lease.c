/* store_lease: which node holds an account's upstream channel when
 * several nodes share a PostgreSQL state. The account's push row is its
 * lease: node holds it until lease_until, in milliseconds of the
 * database's clock (one clock for every node), and renews it; once that
 * has passed another node may take it over. SQLite is one node, which
 * holds every lease: nothing is asked. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "db.h"

/* The database's clock, in milliseconds (PostgreSQL only: these
 * statements never run on SQLite). */
#define DB_NOW_MS "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)"

/* Taken when there is no row, when the row is this node's, or when its
 * lease has lapsed; the row's last states come back with it. */
static const char sql_take[] =
    "INSERT INTO push_accounts(account, mode, updated, tabs, node,"
    " lease_until) VALUES(?1, ?2, ?3, 0, ?4, " DB_NOW_MS " + ?5)"
    " ON CONFLICT(account) DO UPDATE SET node = excluded.node,"
    " lease_until = excluded.lease_until"
    " WHERE push_accounts.node = excluded.node"
    " OR push_accounts.lease_until < " DB_NOW_MS
    " RETURNING coalesce(state, '')";
/* A released lease (lease_until 0) is not renewed: the row stays (a
 * subscription's outlives its tabs) but any node may take it. */
static const char sql_renew[] =
    "UPDATE push_accounts SET lease_until = " DB_NOW_MS " + ?2"
    " WHERE node = ?1 AND lease_until > 0 RETURNING account";
static const char sql_release[] =
    "UPDATE push_accounts SET lease_until = 0 WHERE account = ?1"
    " AND node = ?2";

int store_shared(struct store *st)
{
	return db_ops(st)->shared;
}

int store_lease_take(struct store *st, const char *account, const char *mode,
    long long now, char **states)
{
	struct db_stmt *s;
	int rc;

	*states = NULL;
	if (!db_ops(st)->shared)
		return 1;
	if ((s = db_stmt(st, sql_take)) == NULL ||
	    db_text(st, s, 1, account) == -1 || db_text(st, s, 2, mode) == -1 ||
	    db_int(st, s, 3, now) == -1 ||
	    db_text(st, s, 4, store_node(st)) == -1 ||
	    db_int(st, s, 5, STORE_LEASE_TTL_MS) == -1)
		return -1;
	rc = db_step(st, s);
	if (rc == DB_ROW) {
		if (*db_col_text(st, s, 0) &&
		    (*states = strdup(db_col_text(st, s, 0))) == NULL)
			rc = DB_ERROR;
	}
	db_reset(st, s);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

int store_lease_renew(struct store *st, store_lease_fn *fn, void *ctx)
{
	struct db_stmt *s;
	int rc;

	if (!db_ops(st)->shared)
		return 0;
	if ((s = db_stmt(st, sql_renew)) == NULL ||
	    db_text(st, s, 1, store_node(st)) == -1 ||
	    db_int(st, s, 2, STORE_LEASE_TTL_MS) == -1)
		return -1;
	while ((rc = db_step(st, s)) == DB_ROW)
		fn(ctx, db_col_text(st, s, 0));
	db_reset(st, s);
	return rc == DB_DONE ? 0 : -1;
}

int store_lease_release(struct store *st, const char *account)
{
	struct db_stmt *s;

	if (!db_ops(st)->shared)
		return 0;
	if ((s = db_stmt(st, sql_release)) == NULL ||
	    db_text(st, s, 1, account) == -1 ||
	    db_text(st, s, 2, store_node(st)) == -1)
		return -1;
	return db_exec(st, s);
}
