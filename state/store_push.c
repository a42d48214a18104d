/* store_push: the push_accounts table, where pushd records how it follows
 * each account (for postern-admin and /api/auth/health) and keeps a
 * verified subscription across its restarts. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "db.h"

static const char *const mode_names[STORE_PUSH_NMODES] = {
	"poll", "relay", "subscription"
};

/* On a shared state (?10 = 1) another node's row is never overwritten:
 * the lease (store_lease.c) is taken first; on one node (SQLite) every
 * row is this node's, whatever name wrote it. */
static const char sql_put[] =
    "INSERT INTO push_accounts(account, mode, state, tabs, updated, sub_id,"
    " token_hash, expires, node) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
    " ON CONFLICT(account) DO UPDATE SET"
    " mode = excluded.mode, state = excluded.state, tabs = excluded.tabs,"
    " updated = excluded.updated, sub_id = excluded.sub_id,"
    " token_hash = excluded.token_hash, expires = excluded.expires,"
    " node = excluded.node WHERE push_accounts.node = excluded.node"
    " OR ?10 = 0";
/* This node's (?2) on a shared state (?3 = 1); any on one node. */
static const char sql_delete[] =
    "DELETE FROM push_accounts WHERE account = ?1 AND (node = ?2 OR ?3 = 0)";
/* Poll and relay channels die with the process; a subscription
 * outlives it and keeps its row. */
static const char sql_delete_channel[] =
    "DELETE FROM push_accounts WHERE account = ?1 AND (node = ?2 OR ?3 = 0)"
    " AND mode IN ('poll', 'relay')";
/* On a shared state (?3 = 1) the rows of this node (?1) and of no other
 * node seen since ?2; on one node, all. */
#define NOT_LIVE " (?3 = 0 OR node NOT IN (SELECT name FROM nodes" \
    " WHERE name <> ?1 AND seen >= ?2))"
static const char sql_clean[] =
    "DELETE FROM push_accounts WHERE mode IN ('poll', 'relay') AND" NOT_LIVE;
static const char sql_untab[] =
    "UPDATE push_accounts SET tabs = 0 WHERE" NOT_LIVE;
static const char sql_gone[] =
    "DELETE FROM nodes WHERE name <> ?1 AND seen < ?2";
#undef NOT_LIVE
/* A subscription past its expiry is gone on the server too. */
static const char sql_expired[] =
    "DELETE FROM push_accounts WHERE mode = 'subscription' AND expires < ?1";
static const char sql_held[] =
    "SELECT sub_id, token_hash, expires FROM push_accounts WHERE account = ?1"
    " AND mode = 'subscription' AND sub_id IS NOT NULL"
    " AND token_hash IS NOT NULL";
/* A subscription awaiting its verification has its token hash in the
 * row too (no sub_id yet): the verification may reach another node. */
static const char sql_token[] =
    "SELECT account FROM push_accounts WHERE token_hash = ?1";
/* Counts by CASE, not by summing a comparison (PostgreSQL has no sum of
 * booleans), and cast: PostgreSQL's sum of BIGINT is NUMERIC. */
#define COUNT_IF(cond) "coalesce(sum(CASE WHEN " cond " THEN 1 ELSE 0 END), 0)"
static const char sql_modes[] =
    "SELECT mode, count(*), " COUNT_IF("tabs > 0") ","
    " CAST(coalesce(sum(tabs), 0) AS BIGINT) FROM push_accounts"
    " GROUP BY mode ORDER BY mode";
static const char sql_subs[] =
    "SELECT count(*), " COUNT_IF("expires < ?1") ","
    " " COUNT_IF("expires >= ?1 AND expires < ?2") " FROM push_accounts"
    " WHERE mode = 'subscription' AND sub_id IS NOT NULL";
#undef COUNT_IF

int store_push_put(struct store *st, const struct store_push_row *r)
{
	struct db_stmt *s = db_stmt(st, sql_put);

	if (s == NULL || (unsigned)r->mode >= STORE_PUSH_NMODES ||
	    db_text(st, s, 1, r->account) == -1 ||
	    db_text(st, s, 2, mode_names[r->mode]) == -1 ||
	    db_text(st, s, 3, r->states) == -1 ||
	    db_int(st, s, 4, r->tabs) == -1 ||
	    db_int(st, s, 5, r->updated) == -1 ||
	    db_text(st, s, 9, store_node(st)) == -1 ||
	    db_int(st, s, 10, store_shared(st)) == -1)
		return -1;
	if (r->token_hash && db_text(st, s, 7, r->token_hash) == -1)
		return -1;
	if (r->sub_id && (db_text(st, s, 6, r->sub_id) == -1 ||
	    db_int(st, s, 8, r->expires) == -1))
		return -1;
	return db_exec(st, s);
}

static int by_account(struct store *st, const char *sql, const char *account)
{
	struct db_stmt *s = db_stmt(st, sql);

	if (s == NULL || db_text(st, s, 1, account) == -1 ||
	    db_text(st, s, 2, store_node(st)) == -1 ||
	    db_int(st, s, 3, store_shared(st)) == -1)
		return -1;
	return db_exec(st, s);
}

int store_push_delete(struct store *st, const char *account)
{
	return by_account(st, sql_delete, account);
}

int store_push_delete_channel(struct store *st, const char *account)
{
	return by_account(st, sql_delete_channel, account);
}

/* sql with this node (?1), the time before which a node is gone (?2) and,
 * but for sql_gone, whether the state is shared (?3). */
static int node_gone(struct store *st, const char *sql, long long now)
{
	struct db_stmt *s = db_stmt(st, sql);

	if (s == NULL || db_text(st, s, 1, store_node(st)) == -1 ||
	    db_int(st, s, 2, now - STORE_NODE_GONE) == -1 ||
	    (sql != sql_gone && db_int(st, s, 3, store_shared(st)) == -1))
		return -1;
	return db_exec(st, s);
}

int store_push_startup(struct store *st, long long now)
{
	struct db_stmt *s;
	int rc = 0;

	if (node_gone(st, sql_clean, now) == -1 ||
	    node_gone(st, sql_untab, now) == -1 ||
	    node_gone(st, sql_gone, now) == -1)
		rc = -1;
	if ((s = db_stmt(st, sql_expired)) == NULL ||
	    db_int(st, s, 1, now) == -1 || db_exec(st, s) == -1)
		rc = -1;
	return store_node_beat(st, now, 1) == -1 ? -1 : rc;
}

int store_push_held(struct store *st, const char *account, char **sub_id,
    char *hash, size_t hash_len, long long *expires)
{
	struct db_stmt *s = db_stmt(st, sql_held);
	int rc;

	*sub_id = NULL;
	if (s == NULL || db_text(st, s, 1, account) == -1)
		return -1;
	rc = db_step(st, s);
	if (rc == DB_ROW &&
	    strlen(db_col_text(st, s, 1)) == hash_len &&
	    (*sub_id = strdup(db_col_text(st, s, 0))) != NULL) {
		memcpy(hash, db_col_text(st, s, 1), hash_len + 1);
		*expires = db_col_int(st, s, 2);
		rc = 1;
	} else
		rc = rc == DB_ERROR ? -1 : 0;
	db_reset(st, s);
	return rc;
}

int store_push_token_account(struct store *st, const char *hash,
    char *account, size_t n)
{
	struct db_stmt *s = db_stmt(st, sql_token);
	const char *v;
	int rc;

	if (s == NULL || db_text(st, s, 1, hash) == -1)
		return -1;
	rc = db_step(st, s);
	if (rc == DB_ROW && (v = db_col_text(st, s, 0)) != NULL &&
	    strlen(v) < n)
		memcpy(account, v, strlen(v) + 1);
	else if (rc == DB_ROW)
		rc = DB_ERROR;
	db_reset(st, s);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}


int store_push_modes(struct store *st, store_push_mode_fn *fn, void *ctx)
{
	struct db_stmt *s = db_stmt(st, sql_modes);
	int rc;

	if (s == NULL)
		return -1;
	while ((rc = db_step(st, s)) == DB_ROW)
		fn(ctx, db_col_text(st, s, 0), db_col_int(st, s, 1),
		    db_col_int(st, s, 2), db_col_int(st, s, 3));
	db_reset(st, s);
	return rc == DB_DONE ? 0 : -1;
}

int store_push_subs(struct store *st, long long now, long long renew_by,
    long long *all, long long *expired, long long *due)
{
	struct db_stmt *s = db_stmt(st, sql_subs);
	int rc;

	if (s == NULL || db_int(st, s, 1, now) == -1 ||
	    db_int(st, s, 2, renew_by) == -1)
		return -1;
	if ((rc = db_step(st, s)) == DB_ROW) {
		*all = db_col_int(st, s, 0);
		*expired = db_col_int(st, s, 1);
		*due = db_col_int(st, s, 2);
	}
	db_reset(st, s);
	return rc == DB_ROW ? 0 : -1;
}
