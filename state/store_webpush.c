/* store_webpush: the webpush table, a device's Web Push subscription per
 * session (what is in it, and why sealed so: conf/schema.sql). */
#include "store.h"

#include "sqlite.h"

#define COLS "session, account, endpoint, p256dh, auth, sealed, created"

static const char sql_put[] =
    "INSERT INTO webpush(" COLS ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
    " ON CONFLICT(session) DO UPDATE SET account = ?2, endpoint = ?3,"
    " p256dh = ?4, auth = ?5, sealed = ?6, created = ?7";
static const char sql_get[] = "SELECT " COLS " FROM webpush WHERE session = ?1";
static const char sql_account[] =
    "SELECT " COLS " FROM webpush WHERE account = ?1";
static const char sql_all[] = "SELECT " COLS " FROM webpush ORDER BY account";
static const char sql_delete[] = "DELETE FROM webpush WHERE session = ?1"
    " AND (?2 IS NULL OR endpoint = ?2)";
static const char sql_count[] = "SELECT count(*) FROM webpush";

int store_webpush_put(struct store *st, const struct store_webpush_row *row)
{
	sqlite3_stmt *s = sq_stmt(st, sql_put);

	if (s == NULL || sq_text(s, 1, row->session) == -1 ||
	    sq_text(s, 2, row->account) == -1 ||
	    sq_text(s, 3, row->endpoint) == -1 ||
	    sq_blob(s, 4, row->p256dh, row->p256dh_len) == -1 ||
	    sq_blob(s, 5, row->auth, row->auth_len) == -1 ||
	    sq_blob(s, 6, row->sealed, row->sealed_len) == -1)
		return -1;
	sqlite3_bind_int64(s, 7, row->created);
	return sq_exec(st, s);
}

static void read_row(sqlite3_stmt *s, struct store_webpush_row *r)
{
	r->session = sq_col_text(s, 0);
	r->account = sq_col_text(s, 1);
	r->endpoint = sq_col_text(s, 2);
	r->p256dh = sqlite3_column_blob(s, 3);
	r->p256dh_len = (size_t)sqlite3_column_bytes(s, 3);
	r->auth = sqlite3_column_blob(s, 4);
	r->auth_len = (size_t)sqlite3_column_bytes(s, 4);
	r->sealed = sqlite3_column_blob(s, 5);
	r->sealed_len = (size_t)sqlite3_column_bytes(s, 5);
	r->created = sqlite3_column_int64(s, 6);
}

/* Each row of a bound statement to fn: 0, fn's first other result, or -1;
 * none when there is no row. */
static int walk(struct store *st, sqlite3_stmt *s, store_webpush_fn *fn,
    void *ctx, int none)
{
	struct store_webpush_row r;
	int rc, res = none;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		read_row(s, &r);
		if ((res = fn(ctx, &r)) != 0)
			break;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sq_fail(st, "webpush");
	return res;
}

int store_webpush_get(struct store *st, const char *session,
    store_webpush_fn *fn, void *ctx)
{
	sqlite3_stmt *s = sq_stmt(st, sql_get);

	if (s == NULL || sq_text(s, 1, session) == -1)
		return -1;
	return walk(st, s, fn, ctx, 1);
}

int store_webpush_list(struct store *st, const char *account,
    store_webpush_fn *fn, void *ctx)
{
	sqlite3_stmt *s = sq_stmt(st, account ? sql_account : sql_all);

	if (s == NULL || (account && sq_text(s, 1, account) == -1))
		return -1;
	return walk(st, s, fn, ctx, 0);
}

int store_webpush_delete(struct store *st, const char *session,
    const char *endpoint)
{
	sqlite3_stmt *s = sq_stmt(st, sql_delete);

	if (s == NULL || sq_text(s, 1, session) == -1 ||
	    sq_text(s, 2, endpoint) == -1)
		return -1;
	return sq_changes(st, s);
}

long long store_webpush_count(struct store *st)
{
	sqlite3_stmt *s = sq_stmt(st, sql_count);

	return s ? sq_int(st, s) : -1;
}
