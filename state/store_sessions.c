/* store_sessions: the sessions table. What a row means (the sealed
 * credentials, the expiry rule) is sess.c's; here only how it is kept. */
#include "store.h"

#include <stdio.h>
#include <string.h>

#include "db.h"
#include "sesskeep.h"

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
 * that marks the session seen, once a minute. (CASE, not max(): SQLite's
 * two-argument max is PostgreSQL's greatest.) */
static const char sql_seen[] =
    "UPDATE sessions SET seen = ?2, verified = CASE WHEN verified > ?3"
    " THEN verified ELSE ?3 END WHERE id = ?1";
static const char sql_confirmed[] =
    "UPDATE sessions SET verified = CASE WHEN verified > ?2 THEN verified"
    " ELSE ?2 END, seen = CASE WHEN seen > ?2 THEN seen ELSE ?2 END"
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
	struct db_stmt *s = db_stmt(st, sql_insert);

	if (s == NULL || db_text(st, s, 1, r->id) == -1 ||
	    db_blob(st, s, 2, r->verifier, r->verifier_len) == -1 ||
	    db_blob(st, s, 3, r->salt, r->salt_len) == -1 ||
	    db_blob(st, s, 4, r->sealed, r->sealed_len) == -1 ||
	    db_blob(st, s, 5, r->doc, r->doc_len) == -1 ||
	    db_text(st, s, 6, r->account) == -1 ||
	    db_int(st, s, 7, r->remember) == -1 ||
	    db_int(st, s, 8, r->created) == -1 ||
	    db_int(st, s, 9, r->expires) == -1 ||
	    db_text(st, s, 10, r->api_url) == -1 ||
	    db_text(st, s, 11, r->download_url) == -1 ||
	    db_text(st, s, 12, r->upload_url) == -1 ||
	    db_text(st, s, 13, r->event_url) == -1 ||
	    db_text(st, s, 14, r->agent ? r->agent : "") == -1 ||
	    db_text(st, s, 15, r->ip ? r->ip : "") == -1)
		return -1;
	return db_exec(st, s);
}

/* Steps s (its id bound) to its one row, has read fill row from it, hands
 * it to fn and resets s: fn's result, 1 when there is no row, or -1. */
static int one_row(struct store *st, struct db_stmt *s,
    void (*read)(struct store *, struct db_stmt *, struct store_sess_row *),
    store_sess_fn *fn, void *ctx)
{
	struct store_sess_row row = { 0 };
	int rc = db_step(st, s);

	if (rc == DB_ROW) {
		read(st, s, &row);
		rc = fn(ctx, &row);
	} else
		rc = rc == DB_DONE ? 1 : -1;
	db_reset(st, s);
	return rc;
}

static void read_get(struct store *st, struct db_stmt *s,
    struct store_sess_row *r)
{
	r->verifier = db_col_blob(st, s, 0, &r->verifier_len);
	r->salt = db_col_blob(st, s, 1, &r->salt_len);
	r->sealed = db_col_blob(st, s, 2, &r->sealed_len);
	r->account = db_col_text(st, s, 3);
	r->remember = (int)db_col_int(st, s, 4);
	r->created = db_col_int(st, s, 5);
	r->seen = db_col_int(st, s, 6);
	r->expires = db_col_int(st, s, 7);
	r->api_url = db_col_text(st, s, 8);
	r->download_url = db_col_text(st, s, 9);
	r->upload_url = db_col_text(st, s, 10);
	r->event_url = db_col_text(st, s, 11);
	r->verified = db_col_int(st, s, 12);
}

static struct sesskeep *kept(struct store *st)
{
	return db_head(st)->keep;
}

static void on_told(void *ctx, const char *channel, const char *payload)
{
	if (!strcmp(channel, STORE_CHAN_SESSIONS))
		sesskeep_told(ctx, payload);
}

/* Whether kept rows may answer now, once what was told is read: 1 yes; 0
 * no, but a row read now may be kept; -1 neither (not listening: every
 * kept row is forgotten, and listening starts again). */
static int keep_state(struct store *st)
{
	struct sesskeep *k = kept(st);
	int rc;

	if (k == NULL)
		return -1;
	rc = db_ops(st)->told(st, STORE_SESS_KEPT_MS, on_told, k);
	if (rc != -1)
		return rc;
	sesskeep_clear(k);
	return db_ops(st)->listen(st, STORE_CHAN_SESSIONS) == 0 ? 0 : -1;
}

/* What store_sess_get hands fn, and the row it read to keep. */
struct get_keep {
	store_sess_fn *fn;
	void *ctx;
	struct sesskeep *keep;      /* NULL: keep nothing */
	const char *id;
};

static int get_and_keep(void *ctx, const struct store_sess_row *r)
{
	struct get_keep *g = ctx;
	struct store_sess_row row = *r;
	int rc = g->fn(g->ctx, r);

	if (g->keep && rc == 0) {
		row.id = g->id;
		sesskeep_put(g->keep, &row);
	}
	return rc;
}

int store_sess_get(struct store *st, const char *id, store_sess_fn *fn,
    void *ctx)
{
	struct get_keep g = { fn, ctx, NULL, id };
	const struct store_sess_row *r;
	struct db_stmt *s;
	int ks = keep_state(st);

	if (ks == 1 && (r = sesskeep_find(kept(st), id)) && fn(ctx, r) == 0)
		return 0;
	if (ks >= 0) {
		g.keep = kept(st);
		sesskeep_drop(g.keep, id);
	}
	if ((s = db_stmt(st, sql_get)) == NULL || db_text(st, s, 1, id) == -1)
		return -1;
	return one_row(st, s, read_get, get_and_keep, &g);
}

int store_sess_keep(struct store *st)
{
	struct db_head *h = db_head(st);

	if (st == NULL || db_ops(st)->listen == NULL)
		return -1;
	if (h->keep == NULL && (h->keep = sesskeep_new()) == NULL)
		return -1;
	return 0;
}

static void read_doc(struct store *st, struct db_stmt *s,
    struct store_sess_row *r)
{
	r->doc = db_col_blob(st, s, 0, &r->doc_len);
}

int store_sess_doc(struct store *st, const char *id, store_sess_fn *fn,
    void *ctx)
{
	struct db_stmt *s = db_stmt(st, sql_get_doc);

	if (s == NULL || db_text(st, s, 1, id) == -1)
		return -1;
	return one_row(st, s, read_doc, fn, ctx);
}

int store_sess_times(struct store *st, const char *id,
    struct store_sess_row *r)
{
	struct db_stmt *s = db_stmt(st, sql_times);
	int rc;

	if (s == NULL || db_text(st, s, 1, id) == -1)
		return -1;
	rc = db_step(st, s);
	if (rc == DB_ROW) {
		r->remember = (int)db_col_int(st, s, 0);
		r->seen = db_col_int(st, s, 1);
		r->expires = db_col_int(st, s, 2);
		r->verified = db_col_int(st, s, 3);
	}
	db_reset(st, s);
	return rc;
}

/* A statement over a text and two integers (or one): 0 or -1. */
static int by_id_times(struct store *st, const char *sql, const char *id,
    long long a, long long b)
{
	struct db_stmt *s = db_stmt(st, sql);

	if (s == NULL || db_text(st, s, 1, id) == -1 ||
	    db_int(st, s, 2, a) == -1 ||
	    (db_ops(st)->nparams(s) >= 3 && db_int(st, s, 3, b) == -1))
		return -1;
	return db_exec(st, s);
}

/* A row this process changes is read anew at its next lookup. */
static void forget(struct store *st, const char *id)
{
	if (kept(st))
		sesskeep_drop(kept(st), id);
}

int store_sess_seen(struct store *st, const char *id, long long seen,
    long long verified)
{
	forget(st, id);
	return by_id_times(st, sql_seen, id, seen, verified);
}

int store_sess_confirmed(struct store *st, const char *id, long long now)
{
	forget(st, id);
	return by_id_times(st, sql_confirmed, id, now, 0);
}

int store_sess_list(struct store *st, const char *account, store_sess_fn *fn,
    void *ctx)
{
	struct db_stmt *s = db_stmt(st, account ? sql_list : sql_list_all);
	struct store_sess_row row = { 0 };
	int rc, out = 0;

	if (s == NULL || (account && db_text(st, s, 1, account) == -1))
		return -1;
	while (out == 0 && (rc = db_step(st, s)) == DB_ROW) {
		row.id = db_col_text(st, s, 0);
		row.account = db_col_text(st, s, 1);
		row.remember = (int)db_col_int(st, s, 2);
		row.created = db_col_int(st, s, 3);
		row.seen = db_col_int(st, s, 4);
		row.expires = db_col_int(st, s, 5);
		row.agent = db_col_text(st, s, 6);
		row.ip = db_col_text(st, s, 7);
		out = fn(ctx, &row);
	}
	if (out == 0 && rc == DB_ERROR)
		out = -1;
	db_reset(st, s);
	return out;
}

/* A deletion by one text (or none): the rows deleted, or -1. Rows
 * deleted are told to the other nodes as kind ("s", "a") and t1, or "*",
 * in the same transaction where nodes share the database: their kept rows
 * (store_sess_keep) trust that no row ends untold. */
static int delete_by(struct store *st, const char *sql, const char *t1,
    const char *t2, const char *kind)
{
	struct db_stmt *s;
	int tx = db_ops(st)->shared, n;
	char told[128];

	if (kind)
		snprintf(told, sizeof(told), "%s %s", kind, t1);
	else
		snprintf(told, sizeof(told), "*");
	if (kept(st))
		sesskeep_told(kept(st), told);
	if (tx && store_begin(st) == -1)
		return -1;
	s = db_stmt(st, sql);
	if (s == NULL || (t1 && db_text(st, s, 1, t1) == -1) ||
	    (t2 && db_text(st, s, 2, t2) == -1))
		n = -1;
	else
		n = db_changes(st, s);
	if (n > 0 && store_notify(st, STORE_CHAN_SESSIONS, told) == -1)
		n = -1;
	/* A failed statement rolls the whole back. */
	if (tx && store_commit(st) == -1)
		n = -1;
	return n;
}

int store_sess_delete(struct store *st, const char *id)
{
	return delete_by(st, sql_delete, id, NULL, "s");
}

int store_sess_delete_others(struct store *st, const char *account,
    const char *keep_id)
{
	return delete_by(st, sql_delete_others, account, keep_id, "a");
}

int store_sess_delete_account(struct store *st, const char *account)
{
	return delete_by(st, sql_delete_account, account, NULL, "a");
}

int store_sess_delete_all(struct store *st)
{
	return delete_by(st, sql_delete_all, NULL, NULL, NULL);
}

int store_sess_delete_prefix(struct store *st, const char *prefix)
{
	return delete_by(st, sql_delete_prefix, prefix, NULL, NULL);
}

int store_sess_prune(struct store *st, long long now)
{
	struct db_stmt *s = db_stmt(st, sql_prune);

	if (s == NULL || db_int(st, s, 1, now) == -1)
		return -1;
	return db_changes(st, s);
}

long long store_sess_count_prefix(struct store *st, const char *prefix)
{
	struct db_stmt *s = db_stmt(st, sql_count_prefix);

	if (s == NULL || db_text(st, s, 1, prefix) == -1)
		return -1;
	return db_one(st, s);
}
