/* store_webpush: the webpush table, a device's Web Push subscription per
 * session (what is in it, and why sealed so: conf/schema.sql). */
#include "store.h"

#include "db.h"

#define COLS "session, account, endpoint, p256dh, auth, sealed, created"

static const char sql_put[] =
    "INSERT INTO webpush(" COLS ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
    " ON CONFLICT(session) DO UPDATE SET account = ?2, endpoint = ?3,"
    " p256dh = ?4, auth = ?5, sealed = ?6, created = ?7";
static const char sql_get[] = "SELECT " COLS " FROM webpush WHERE session = ?1";
static const char sql_account[] =
    "SELECT " COLS " FROM webpush WHERE account = ?1";
static const char sql_endpoint[] =
    "SELECT " COLS " FROM webpush WHERE endpoint = ?1";
static const char sql_all[] = "SELECT " COLS " FROM webpush ORDER BY account";
static const char sql_delete[] = "DELETE FROM webpush WHERE session = ?1"
    " AND (?2 IS NULL OR endpoint = ?2)";

int store_webpush_put(struct store *st, const struct store_webpush_row *row)
{
	struct db_stmt *s = db_stmt(st, sql_put);

	if (s == NULL || db_text(st, s, 1, row->session) == -1 ||
	    db_text(st, s, 2, row->account) == -1 ||
	    db_text(st, s, 3, row->endpoint) == -1 ||
	    db_blob(st, s, 4, row->p256dh, row->p256dh_len) == -1 ||
	    db_blob(st, s, 5, row->auth, row->auth_len) == -1 ||
	    db_blob(st, s, 6, row->sealed, row->sealed_len) == -1 ||
	    db_int(st, s, 7, row->created) == -1)
		return -1;
	return db_exec(st, s);
}

static void read_row(struct store *st, struct db_stmt *s,
    struct store_webpush_row *r)
{
	r->session = db_col_text(st, s, 0);
	r->account = db_col_text(st, s, 1);
	r->endpoint = db_col_text(st, s, 2);
	r->p256dh = db_col_blob(st, s, 3, &r->p256dh_len);
	r->auth = db_col_blob(st, s, 4, &r->auth_len);
	r->sealed = db_col_blob(st, s, 5, &r->sealed_len);
	r->created = db_col_int(st, s, 6);
}

/* Each row of a bound statement to fn: 0, fn's first other result, or -1;
 * none when there is no row. */
static int walk(struct store *st, struct db_stmt *s, store_webpush_fn *fn,
    void *ctx, int none)
{
	struct store_webpush_row r;
	int rc, res = none;

	while ((rc = db_step(st, s)) == DB_ROW) {
		read_row(st, s, &r);
		if ((res = fn(ctx, &r)) != 0)
			break;
	}
	db_reset(st, s);
	return rc == DB_ERROR ? -1 : res;
}

int store_webpush_get(struct store *st, const char *session,
    store_webpush_fn *fn, void *ctx)
{
	struct db_stmt *s = db_stmt(st, sql_get);

	if (s == NULL || db_text(st, s, 1, session) == -1)
		return -1;
	return walk(st, s, fn, ctx, 1);
}

int store_webpush_list(struct store *st, const char *account,
    store_webpush_fn *fn, void *ctx)
{
	struct db_stmt *s = db_stmt(st, account ? sql_account : sql_all);

	if (s == NULL || (account && db_text(st, s, 1, account) == -1))
		return -1;
	return walk(st, s, fn, ctx, 0);
}

int store_webpush_endpoint(struct store *st, const char *endpoint,
    store_webpush_fn *fn, void *ctx)
{
	struct db_stmt *s = db_stmt(st, sql_endpoint);

	if (s == NULL || db_text(st, s, 1, endpoint) == -1)
		return -1;
	return walk(st, s, fn, ctx, 0);
}

int store_webpush_delete(struct store *st, const char *session,
    const char *endpoint)
{
	struct db_stmt *s = db_stmt(st, sql_delete);

	if (s == NULL || db_text(st, s, 1, session) == -1 ||
	    db_text(st, s, 2, endpoint) == -1)
		return -1;
	return db_changes(st, s);
}
