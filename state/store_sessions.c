/* store_sessions: the sessions table. What a row means (the sealed
 * credentials, the expiry rule) is sess.c's; here only how it is kept. */
#include "store.h"

#include "sqlite.h"

static const char sql_insert[] =
    "INSERT INTO sessions(id, verifier, salt, sealed, doc, account, remember,"
    " created, seen, expires, api_url, download_url, upload_url, event_url,"
    " agent, ip, verified)"
    " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?8,?9,?10,?11,?12,?13,?14,?15,?8)";
static const char sql_get[] =
    "SELECT verifier, salt, sealed, account, remember, created, seen, expires,"
    " api_url, download_url, upload_url, event_url, verified"
    " FROM sessions WHERE id = ?1";
static const char sql_get_doc[] = "SELECT doc FROM sessions WHERE id = ?1";
/* seen and verified together: the relay's acceptances ride on the write
 * that marks the session seen, once a minute. */
static const char sql_seen[] =
    "UPDATE sessions SET seen = ?2, verified = max(verified, ?3) WHERE id = ?1";
static const char sql_confirmed[] =
    "UPDATE sessions SET verified = max(verified, ?2), seen = max(seen, ?2)"
    " WHERE id = ?1";
static const char sql_times[] =
    "SELECT remember, seen, expires, verified FROM sessions WHERE id = ?1";
/* One account's sessions by its index; every session only for
 * postern-admin. */
static const char sql_list[] =
    "SELECT id, account, remember, created, seen, expires, agent, ip"
    " FROM sessions WHERE account = ?1 ORDER BY seen DESC";
static const char sql_list_all[] =
    "SELECT id, account, remember, created, seen, expires, agent, ip"
    " FROM sessions ORDER BY seen DESC";
static const char sql_delete[] = "DELETE FROM sessions WHERE id = ?1";
static const char sql_delete_others[] =
    "DELETE FROM sessions WHERE account = ?1 AND id <> ?2";
static const char sql_delete_account[] =
    "DELETE FROM sessions WHERE account = ?1";
static const char sql_delete_all[] = "DELETE FROM sessions";
static const char sql_delete_prefix[] =
    "DELETE FROM sessions WHERE substr(id, 1, length(?1)) = ?1";
static const char sql_count_prefix[] =
    "SELECT count(*) FROM sessions WHERE substr(id, 1, length(?1)) = ?1";
static const char sql_prune[] = "DELETE FROM sessions WHERE expires <= ?1";

int store_sess_insert(struct store *st, const struct store_sess_row *r)
{
	sqlite3_stmt *s = sq_stmt(st, sql_insert);

	if (s == NULL)
		return -1;
	sq_text(s, 1, r->id);
	sq_blob(s, 2, r->verifier, r->verifier_len);
	sq_blob(s, 3, r->salt, r->salt_len);
	sq_blob(s, 4, r->sealed, r->sealed_len);
	sq_blob(s, 5, r->doc, r->doc_len);
	sq_text(s, 6, r->account);
	sqlite3_bind_int(s, 7, r->remember);
	sqlite3_bind_int64(s, 8, r->created);
	sqlite3_bind_int64(s, 9, r->expires);
	sq_text(s, 10, r->api_url);
	sq_text(s, 11, r->download_url);
	sq_text(s, 12, r->upload_url);
	sq_text(s, 13, r->event_url);
	sq_text(s, 14, r->agent ? r->agent : "");
	sq_text(s, 15, r->ip ? r->ip : "");
	return sq_exec(st, s);
}

static const unsigned char *col_blob(sqlite3_stmt *s, int i, size_t *n)
{
	const unsigned char *p = sqlite3_column_blob(s, i);

	*n = p ? (size_t)sqlite3_column_bytes(s, i) : 0;
	return p;
}

/* Steps s (its id bound) to its one row, has read fill row from it, hands
 * it to fn and resets s: fn's result, 1 when there is no row, or -1. */
static int one_row(struct store *st, sqlite3_stmt *s,
    void (*read)(sqlite3_stmt *, struct store_sess_row *), store_sess_fn *fn,
    void *ctx)
{
	struct store_sess_row row = { 0 };
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW) {
		read(s, &row);
		rc = fn(ctx, &row);
	} else if (rc == SQLITE_DONE)
		rc = 1;
	else
		rc = sq_fail(st, "sessions");
	sqlite3_reset(s);
	return rc;
}

static void read_get(sqlite3_stmt *s, struct store_sess_row *r)
{
	r->verifier = col_blob(s, 0, &r->verifier_len);
	r->salt = col_blob(s, 1, &r->salt_len);
	r->sealed = col_blob(s, 2, &r->sealed_len);
	r->account = sq_col_text(s, 3);
	r->remember = sqlite3_column_int(s, 4);
	r->created = sqlite3_column_int64(s, 5);
	r->seen = sqlite3_column_int64(s, 6);
	r->expires = sqlite3_column_int64(s, 7);
	r->api_url = sq_col_text(s, 8);
	r->download_url = sq_col_text(s, 9);
	r->upload_url = sq_col_text(s, 10);
	r->event_url = sq_col_text(s, 11);
	r->verified = sqlite3_column_int64(s, 12);
}

int store_sess_get(struct store *st, const char *id, store_sess_fn *fn,
    void *ctx)
{
	sqlite3_stmt *s = sq_stmt(st, sql_get);

	if (s == NULL || sq_text(s, 1, id) == -1)
		return -1;
	return one_row(st, s, read_get, fn, ctx);
}

static void read_doc(sqlite3_stmt *s, struct store_sess_row *r)
{
	r->doc = col_blob(s, 0, &r->doc_len);
}

int store_sess_doc(struct store *st, const char *id, store_sess_fn *fn,
    void *ctx)
{
	sqlite3_stmt *s = sq_stmt(st, sql_get_doc);

	if (s == NULL || sq_text(s, 1, id) == -1)
		return -1;
	return one_row(st, s, read_doc, fn, ctx);
}

int store_sess_times(struct store *st, const char *id,
    struct store_sess_row *r)
{
	sqlite3_stmt *s = sq_stmt(st, sql_times);
	int rc;

	if (s == NULL || sq_text(s, 1, id) == -1)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		r->remember = sqlite3_column_int(s, 0);
		r->seen = sqlite3_column_int64(s, 1);
		r->expires = sqlite3_column_int64(s, 2);
		r->verified = sqlite3_column_int64(s, 3);
		rc = 1;
	} else
		rc = rc == SQLITE_DONE ? 0 : sq_fail(st, "sessions");
	sqlite3_reset(s);
	return rc;
}

int store_sess_seen(struct store *st, const char *id, long long seen,
    long long verified)
{
	sqlite3_stmt *s = sq_stmt(st, sql_seen);

	if (s == NULL || sq_text(s, 1, id) == -1)
		return -1;
	sqlite3_bind_int64(s, 2, seen);
	sqlite3_bind_int64(s, 3, verified);
	return sq_exec(st, s);
}

int store_sess_confirmed(struct store *st, const char *id, long long now)
{
	sqlite3_stmt *s = sq_stmt(st, sql_confirmed);

	if (s == NULL || sq_text(s, 1, id) == -1)
		return -1;
	sqlite3_bind_int64(s, 2, now);
	return sq_exec(st, s);
}

int store_sess_list(struct store *st, const char *account, store_sess_fn *fn,
    void *ctx)
{
	sqlite3_stmt *s = sq_stmt(st, account ? sql_list : sql_list_all);
	struct store_sess_row row = { 0 };
	int rc, out = 0;

	if (s == NULL || (account && sq_text(s, 1, account) == -1))
		return -1;
	while (out == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		row.id = sq_col_text(s, 0);
		row.account = sq_col_text(s, 1);
		row.remember = sqlite3_column_int(s, 2);
		row.created = sqlite3_column_int64(s, 3);
		row.seen = sqlite3_column_int64(s, 4);
		row.expires = sqlite3_column_int64(s, 5);
		row.agent = sq_col_text(s, 6);
		row.ip = sq_col_text(s, 7);
		out = fn(ctx, &row);
	}
	if (out == 0 && rc != SQLITE_DONE)
		out = sq_fail(st, "sessions");
	sqlite3_reset(s);
	return out;
}

/* A deletion by one text (or none): the rows deleted, or -1. */
static int delete_by(struct store *st, const char *sql, const char *t1,
    const char *t2)
{
	sqlite3_stmt *s = sq_stmt(st, sql);

	if (s == NULL || (t1 && sq_text(s, 1, t1) == -1) ||
	    (t2 && sq_text(s, 2, t2) == -1))
		return -1;
	return sq_changes(st, s);
}

int store_sess_delete(struct store *st, const char *id)
{
	return delete_by(st, sql_delete, id, NULL);
}

int store_sess_delete_others(struct store *st, const char *account,
    const char *keep_id)
{
	return delete_by(st, sql_delete_others, account, keep_id);
}

int store_sess_delete_account(struct store *st, const char *account)
{
	return delete_by(st, sql_delete_account, account, NULL);
}

int store_sess_delete_all(struct store *st)
{
	return delete_by(st, sql_delete_all, NULL, NULL);
}

int store_sess_delete_prefix(struct store *st, const char *prefix)
{
	return delete_by(st, sql_delete_prefix, prefix, NULL);
}

int store_sess_prune(struct store *st, long long now)
{
	sqlite3_stmt *s = sq_stmt(st, sql_prune);

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, now);
	return sq_changes(st, s);
}

long long store_sess_count_prefix(struct store *st, const char *prefix)
{
	sqlite3_stmt *s = sq_stmt(st, sql_count_prefix);

	if (s == NULL || sq_text(s, 1, prefix) == -1)
		return -1;
	return sq_int(st, s);
}
