/* store_push: the push_accounts table, where pushd records how it follows
 * each account (for postern-admin and /api/auth/health) and keeps a
 * verified subscription across its restarts. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "sqlite.h"

static const char *const mode_names[STORE_PUSH_NMODES] = {
	"poll", "relay", "subscription"
};

static const char sql_put[] =
    "INSERT INTO push_accounts(account, mode, state, tabs, updated, sub_id,"
    " token_hash, expires) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    " ON CONFLICT(account) DO UPDATE SET"
    " mode = excluded.mode, state = excluded.state, tabs = excluded.tabs,"
    " updated = excluded.updated, sub_id = excluded.sub_id,"
    " token_hash = excluded.token_hash, expires = excluded.expires";
static const char sql_delete[] =
    "DELETE FROM push_accounts WHERE account = ?1";
/* Poll and relay channels die with the process; a subscription
 * outlives it and keeps its row. */
static const char sql_delete_channel[] =
    "DELETE FROM push_accounts WHERE account = ?1 AND mode IN ('poll', 'relay')";
static const char sql_clean[] =
    "DELETE FROM push_accounts WHERE mode IN ('poll', 'relay')";
static const char sql_untab[] = "UPDATE push_accounts SET tabs = 0";
/* A subscription past its expiry is gone on the server too. */
static const char sql_expired[] =
    "DELETE FROM push_accounts WHERE mode = 'subscription' AND expires < ?1";
static const char sql_held[] =
    "SELECT sub_id, token_hash, expires FROM push_accounts WHERE account = ?1"
    " AND mode = 'subscription' AND sub_id IS NOT NULL"
    " AND token_hash IS NOT NULL";
static const char sql_token[] =
    "SELECT count(*) FROM push_accounts WHERE token_hash = ?1"
    " AND mode = 'subscription'";
static const char sql_modes[] =
    "SELECT mode, count(*), coalesce(sum(tabs > 0), 0),"
    " coalesce(sum(tabs), 0) FROM push_accounts GROUP BY mode ORDER BY mode";
static const char sql_subs[] =
    "SELECT count(*), coalesce(sum(expires < ?1), 0),"
    " coalesce(sum(expires >= ?1 AND expires < ?2), 0) FROM push_accounts"
    " WHERE mode = 'subscription' AND sub_id IS NOT NULL";

int store_push_put(struct store *st, const struct store_push_row *r)
{
	sqlite3_stmt *s = sq_stmt(st, sql_put);

	if (s == NULL || (unsigned)r->mode >= STORE_PUSH_NMODES)
		return -1;
	sq_text(s, 1, r->account);
	sq_text(s, 2, mode_names[r->mode]);
	sq_text(s, 3, r->states);
	sqlite3_bind_int64(s, 4, r->tabs);
	sqlite3_bind_int64(s, 5, r->updated);
	if (r->sub_id && r->token_hash) {
		sq_text(s, 6, r->sub_id);
		sq_text(s, 7, r->token_hash);
		sqlite3_bind_int64(s, 8, r->expires);
	}
	return sq_exec(st, s);
}

static int by_account(struct store *st, const char *sql, const char *account)
{
	sqlite3_stmt *s = sq_stmt(st, sql);

	if (s == NULL || sq_text(s, 1, account) == -1)
		return -1;
	return sq_exec(st, s);
}

int store_push_delete(struct store *st, const char *account)
{
	return by_account(st, sql_delete, account);
}

int store_push_delete_channel(struct store *st, const char *account)
{
	return by_account(st, sql_delete_channel, account);
}

int store_push_startup(struct store *st, long long now)
{
	sqlite3_stmt *s;
	int rc = 0;

	if ((s = sq_stmt(st, sql_clean)) == NULL || sq_exec(st, s) == -1)
		rc = -1;
	if ((s = sq_stmt(st, sql_untab)) == NULL || sq_exec(st, s) == -1)
		rc = -1;
	if ((s = sq_stmt(st, sql_expired)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, now);
	return sq_exec(st, s) == -1 ? -1 : rc;
}

int store_push_held(struct store *st, const char *account, char **sub_id,
    char *hash, size_t hash_len, long long *expires)
{
	sqlite3_stmt *s = sq_stmt(st, sql_held);
	int rc;

	*sub_id = NULL;
	if (s == NULL || sq_text(s, 1, account) == -1)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW &&
	    strlen(sq_col_text(s, 1)) == hash_len &&
	    (*sub_id = strdup(sq_col_text(s, 0))) != NULL) {
		memcpy(hash, sq_col_text(s, 1), hash_len + 1);
		*expires = sqlite3_column_int64(s, 2);
		rc = 1;
	} else
		rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
		    sq_fail(st, "push_accounts");
	sqlite3_reset(s);
	return rc;
}

int store_push_token_known(struct store *st, const char *hash)
{
	sqlite3_stmt *s = sq_stmt(st, sql_token);
	long long n;

	if (s == NULL || sq_text(s, 1, hash) == -1 || (n = sq_int(st, s)) < 0)
		return -1;
	return n > 0;
}

int store_push_modes(struct store *st, store_push_mode_fn *fn, void *ctx)
{
	sqlite3_stmt *s = sq_stmt(st, sql_modes);
	int rc;

	if (s == NULL)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		fn(ctx, sq_col_text(s, 0), sqlite3_column_int64(s, 1),
		    sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3));
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sq_fail(st, "push_accounts");
}

int store_push_subs(struct store *st, long long now, long long renew_by,
    long long *all, long long *expired, long long *due)
{
	sqlite3_stmt *s = sq_stmt(st, sql_subs);
	int rc;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, now);
	sqlite3_bind_int64(s, 2, renew_by);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*all = sqlite3_column_int64(s, 0);
		*expired = sqlite3_column_int64(s, 1);
		*due = sqlite3_column_int64(s, 2);
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW ? 0 : sq_fail(st, "push_accounts");
}
