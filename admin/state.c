/* state: postern-admin sessions, revoke and push, over the state
 * database. Logins are never stored in clear (an account is an HMAC of
 * the login under the server secret), so a login given here is turned
 * into its account key the way sess.c does it. */
#include "admin.h"

#include <string.h>

#include "sess.h"
#include "usock.h"

static const char sql_live[] =
    "SELECT id, account, created, seen, expires, remember FROM sessions"
    " WHERE (?1 IS NULL OR account = ?1) ORDER BY seen DESC";
static const char sql_match[] =
    "SELECT count(*) FROM sessions WHERE substr(id, 1, length(?1)) = ?1";
static const char sql_del_prefix[] =
    "DELETE FROM sessions WHERE substr(id, 1, length(?1)) = ?1";
static const char sql_del_account[] = "DELETE FROM sessions WHERE account = ?1";
static const char sql_del_all[] = "DELETE FROM sessions";
static const char sql_modes[] =
    "SELECT mode, count(*), coalesce(sum(tabs > 0), 0),"
    " coalesce(sum(tabs), 0) FROM push_accounts GROUP BY mode ORDER BY mode";
static const char sql_subs[] =
    "SELECT count(*), coalesce(sum(expires < ?1), 0),"
    " coalesce(sum(expires >= ?1 AND expires < ?2), 0) FROM push_accounts"
    " WHERE mode = 'subscription' AND sub_id IS NOT NULL";

int admin_id_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= ADMIN_ID_MIN && n <= SESS_ID_LEN &&
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_") == n;
}

static void utc(long long t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL || !strftime(out, n, "%Y-%m-%d %H:%M", &tm))
		snprintf(out, n, "%lld", t);
}

static void print_row(sqlite3_stmt *st, time_t ends, FILE *out)
{
	char c[32], s[32], e[32];
	int remember = sqlite3_column_int(st, 5);

	utc(sqlite3_column_int64(st, 2), c, sizeof(c));
	utc(sqlite3_column_int64(st, 3), s, sizeof(s));
	utc(ends, e, sizeof(e));
	fprintf(out, "%-*.*s  %-*.*s  %-16s  %-16s  %-16s  %s\n",
	    ADMIN_ID_SHOWN, ADMIN_ID_SHOWN, sqlite3_column_text(st, 0),
	    ADMIN_ACCOUNT_SHOWN, ADMIN_ACCOUNT_SHOWN, sqlite3_column_text(st, 1),
	    c, s, e, remember ? "yes" : "no");
}

int admin_sessions(struct app *a, const char *login, time_t now, FILE *out)
{
	char account[APP_KEY_HEX + 1];
	sqlite3_stmt *st;
	int n = 0, rc;

	if ((st = db_stmt(&a->db, sql_live)) == NULL)
		return -1;
	if (login) {
		sess_account(a, login, account);
		db_bind_text(st, 1, account);
	}
	fprintf(out, "%-*s  %-*s  %-16s  %-16s  %-16s  %s\n", ADMIN_ID_SHOWN,
	    "ID", ADMIN_ACCOUNT_SHOWN, "ACCOUNT", "CREATED (UTC)",
	    "LAST SEEN (UTC)", "ENDS (UTC)", "REMEMBERED");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		time_t ends = sess_ends(a, sqlite3_column_int64(st, 3),
		    sqlite3_column_int64(st, 4), sqlite3_column_int(st, 5));

		/* An ended session is deleted at its next use: not listed. */
		if (ends <= now)
			continue;
		print_row(st, ends, out);
		n++;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? n : -1;
}

/* Runs a DELETE bound to text (or nothing): the rows deleted, or -1. */
static int delete(struct app *a, const char *sql, const char *text)
{
	sqlite3_stmt *st;

	if ((st = db_stmt(&a->db, sql)) == NULL)
		return -1;
	if (text && db_bind_text(st, 1, text) == -1)
		return -1;
	if (db_exec_stmt(&a->db, st) == -1)
		return -1;
	return sqlite3_changes(a->db.h);
}

int admin_revoke_id(struct app *a, const char *prefix, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	long long n = -1;
	int rc;

	if ((st = db_stmt(&a->db, sql_match)) == NULL ||
	    db_bind_text(st, 1, prefix) == -1) {
		snprintf(err, errlen, "database error");
		return -1;
	}
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (n < 0) {
		snprintf(err, errlen, "database error");
		return -1;
	}
	if (n > 1) {
		snprintf(err, errlen, "%s matches %lld sessions: give more of "
		    "the id", prefix, n);
		return -1;
	}
	if (n == 0)
		return 0;
	if ((rc = delete(a, sql_del_prefix, prefix)) == -1)
		snprintf(err, errlen, "database error");
	return rc;
}

int admin_revoke_login(struct app *a, const char *login)
{
	char account[APP_KEY_HEX + 1];

	sess_account(a, login, account);
	return delete(a, sql_del_account, account);
}

int admin_revoke_all(struct app *a)
{
	return delete(a, sql_del_all, NULL);
}

static int print_modes(struct app *a, FILE *out)
{
	sqlite3_stmt *st;
	int rc, rows = 0;

	if ((st = db_stmt(&a->db, sql_modes)) == NULL)
		return -1;
	fprintf(out, "%-14s  %8s  %9s  %6s\n", "MODE", "ACCOUNTS", "WITH TABS",
	    "TABS");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		fprintf(out, "%-14s  %8lld  %9lld  %6lld\n",
		    (const char *)sqlite3_column_text(st, 0),
		    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
		    sqlite3_column_int64(st, 3));
		rows++;
	}
	sqlite3_reset(st);
	if (rows == 0)
		fprintf(out, "(no account is followed)\n");
	return rc == SQLITE_DONE ? 0 : -1;
}

static int print_subs(struct app *a, time_t now, FILE *out)
{
	sqlite3_stmt *st;
	int rc;

	if ((st = db_stmt(&a->db, sql_subs)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, (long long)now);
	sqlite3_bind_int64(st, 2, (long long)now + a->cfg.push_renew);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		fprintf(out, "subscriptions: %lld (expired %lld, due for "
		    "renewal %lld)\n", sqlite3_column_int64(st, 0),
		    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

int admin_push(struct app *a, time_t now, FILE *out)
{
	fprintf(out, "pushd: %s (%s)\n", usock_alive(a->cfg.pushd_socket) ?
	    "running" : "not running: the app polls", a->cfg.pushd_socket);
	fprintf(out, "push_mode: %s\n", a->cfg.push_mode);
	if (print_modes(a, out) == -1 || print_subs(a, now, out) == -1)
		return -1;
	return 0;
}
