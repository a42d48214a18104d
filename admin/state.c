/* state: postern-admin sessions, revoke and push, over the state
 * database. Logins are never stored in clear (an account is an HMAC of
 * the login under the server secret), so a login given here is turned
 * into its account key the way sess.c does it. */
#include "admin.h"

#include <string.h>

#include "sess.h"
#include "store.h"
#include "usock.h"

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

/* The walk over the sessions: the live ones printed, counted. */
struct live {
	struct app *a;
	time_t now;
	FILE *out;
	int n;
};

static int print_row(void *ctx, const struct store_sess_row *r)
{
	struct live *l = ctx;
	time_t ends = sess_ends(l->a, (time_t)r->seen, (time_t)r->expires,
	    r->remember);
	char c[32], s[32], e[32];

	/* An ended session is deleted at its next use: not listed. */
	if (ends <= l->now)
		return 0;
	utc(r->created, c, sizeof(c));
	utc(r->seen, s, sizeof(s));
	utc(ends, e, sizeof(e));
	fprintf(l->out, "%-*.*s  %-*.*s  %-16s  %-16s  %-16s  %s\n",
	    ADMIN_ID_SHOWN, ADMIN_ID_SHOWN, r->id,
	    ADMIN_ACCOUNT_SHOWN, ADMIN_ACCOUNT_SHOWN, r->account,
	    c, s, e, r->remember ? "yes" : "no");
	l->n++;
	return 0;
}

int admin_sessions(struct app *a, const char *login, time_t now, FILE *out)
{
	char account[APP_KEY_HEX + 1];
	struct live l = { a, now, out, 0 };

	if (login)
		sess_account(a, login, account);
	fprintf(out, "%-*s  %-*s  %-16s  %-16s  %-16s  %s\n", ADMIN_ID_SHOWN,
	    "ID", ADMIN_ACCOUNT_SHOWN, "ACCOUNT", "CREATED (UTC)",
	    "LAST SEEN (UTC)", "ENDS (UTC)", "REMEMBERED");
	if (store_sess_list(a->store, login ? account : NULL, print_row, &l) != 0)
		return -1;
	return l.n;
}

int admin_revoke_id(struct app *a, const char *prefix, char *err, size_t errlen)
{
	long long n = store_sess_count_prefix(a->store, prefix);
	int rc;

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
	if ((rc = store_sess_delete_prefix(a->store, prefix)) == -1)
		snprintf(err, errlen, "database error");
	return rc;
}

int admin_revoke_login(struct app *a, const char *login)
{
	char account[APP_KEY_HEX + 1];

	sess_account(a, login, account);
	return store_sess_delete_account(a->store, account);
}

int admin_revoke_all(struct app *a)
{
	return store_sess_delete_all(a->store);
}

/* The table of push modes: its rows so far. */
struct modes {
	FILE *out;
	int rows;
};

static void print_mode(void *ctx, const char *mode, long long accounts,
    long long with_tabs, long long tabs)
{
	struct modes *m = ctx;

	fprintf(m->out, "%-14s  %8lld  %9lld  %6lld\n", mode, accounts,
	    with_tabs, tabs);
	m->rows++;
}

static int print_modes(struct app *a, FILE *out)
{
	struct modes m = { out, 0 };
	int rc;

	fprintf(out, "%-14s  %8s  %9s  %6s\n", "MODE", "ACCOUNTS", "WITH TABS",
	    "TABS");
	rc = store_push_modes(a->store, print_mode, &m);
	if (m.rows == 0)
		fprintf(out, "(no account is followed)\n");
	return rc;
}

static int print_subs(struct app *a, time_t now, FILE *out)
{
	long long all, expired, due;

	if (store_push_subs(a->store, (long long)now,
	    (long long)now + a->cfg.push_renew, &all, &expired, &due) == -1)
		return -1;
	fprintf(out, "subscriptions: %lld (expired %lld, due for renewal "
	    "%lld)\n", all, expired, due);
	return 0;
}

/* The nodes whose pushd shares the state, one line each. */
struct nodes {
	FILE *out;
	time_t now;
};

static void print_node(void *ctx, const char *name, long long started,
    long long seen)
{
	struct nodes *n = ctx;
	long long ago = (long long)n->now - seen;

	(void)started;
	fprintf(n->out, "node %s: seen %lld s ago%s\n", name, ago < 0 ? 0 : ago,
	    ago > STORE_NODE_GONE ? " (gone)" : "");
}

int admin_push(struct app *a, time_t now, FILE *out)
{
	struct nodes n = { out, now };

	fprintf(out, "pushd: %s (%s)\n", usock_alive(a->cfg.pushd_socket) ?
	    "running" : "not running: the app polls", a->cfg.pushd_socket);
	fprintf(out, "push_mode: %s\n", cfg_push_modes[a->cfg.push_mode]);
	fprintf(out, "node_name: %s\n", a->cfg.node_name);
	if (store_node_list(a->store, print_node, &n) == -1 ||
	    print_modes(a, out) == -1 || print_subs(a, now, out) == -1)
		return -1;
	return 0;
}
