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
/* Of a list of accounts (a text[] literal), those whose lease this node
 * could take now: no row, its own row, or a lapsed lease. */
static const char sql_free[] =
    "SELECT t.a FROM unnest(CAST(?1 AS text[])) AS t(a)"
    " LEFT JOIN push_accounts p ON p.account = t.a"
    " WHERE p.account IS NULL OR p.node = ?2 OR p.lease_until < " DB_NOW_MS;
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

/* accounts[from..from+n) as a PostgreSQL array literal, each element
 * quoted: malloc'd, or NULL. */
static char *array_literal(const char *const *accounts, size_t n)
{
	size_t i, len = 3;
	const char *p;
	char *out, *o;

	for (i = 0; i < n; i++)
		len += 2 * strlen(accounts[i]) + 3;
	if ((out = o = malloc(len)) == NULL)
		return NULL;
	*o++ = '{';
	for (i = 0; i < n; i++) {
		if (i)
			*o++ = ',';
		*o++ = '"';
		for (p = accounts[i]; *p; p++) {
			if (*p == '"' || *p == '\\')
				*o++ = '\\';
			*o++ = *p;
		}
		*o++ = '"';
	}
	*o++ = '}';
	*o = '\0';
	return out;
}

int store_lease_free(struct store *st, const char *const *accounts, size_t n,
    store_lease_fn *fn, void *ctx)
{
	struct db_stmt *s;
	size_t i, k;
	char *list;
	int rc = DB_DONE;

	if (!db_ops(st)->shared) {
		for (i = 0; i < n; i++)
			fn(ctx, accounts[i]);
		return 0;
	}
	for (i = 0; i < n && rc == DB_DONE; i += k) {
		k = n - i < STORE_LEASE_BATCH ? n - i : STORE_LEASE_BATCH;
		if ((list = array_literal(accounts + i, k)) == NULL)
			return -1;
		if ((s = db_stmt(st, sql_free)) == NULL ||
		    db_text(st, s, 1, list) == -1 ||
		    db_text(st, s, 2, store_node(st)) == -1) {
			free(list);
			return -1;
		}
		while ((rc = db_step(st, s)) == DB_ROW)
			fn(ctx, db_col_text(st, s, 0));
		db_reset(st, s);
		free(list);
	}
	return rc == DB_DONE ? 0 : -1;
}
