/* store_rate: the rate table, one row per key and window. The rules
 * (limits, batching, which keys) are rate.c's and login.c's. */
#include "store.h"

#include <string.h>

#include "db.h"

/* rate.n, not n: PostgreSQL will not guess between the row there and
 * the one proposed (excluded). */
static const char sql_add[] =
    "INSERT INTO rate(key, win, n, until) VALUES(?1, ?2, ?4, ?3)"
    " ON CONFLICT(key, win) DO UPDATE SET n = rate.n + ?4 RETURNING n";
static const char sql_refund[] =
    "UPDATE rate SET n = n - 1 WHERE key = ?1 AND win = ?2 AND n > 0";
static const char sql_prune[] = "DELETE FROM rate WHERE until <= ?1";

/* Statements over 1 to STORE_RATE_KEYS_MAX keys at once (?1 to ?4), in
 * the window ?5 that ends at ?6: one read or one write for all of them.
 * The upsert has no RETURNING: over several rows it costs the heap a grow
 * and a trim per call (brk and page faults, more than the write), so the
 * counts are read in a second statement. */
static const char *const sql_counts[STORE_RATE_KEYS_MAX] = {
	"SELECT key, n FROM rate WHERE win = ?5 AND key IN (?1)",
	"SELECT key, n FROM rate WHERE win = ?5 AND key IN (?1, ?2)",
	"SELECT key, n FROM rate WHERE win = ?5 AND key IN (?1, ?2, ?3)",
	"SELECT key, n FROM rate WHERE win = ?5 AND key IN (?1, ?2, ?3, ?4)",
};
#define ADD_EACH(values) "INSERT INTO rate(key, win, n, until) VALUES " values \
	" ON CONFLICT(key, win) DO UPDATE SET n = rate.n + 1"
static const char *const sql_add_each[STORE_RATE_KEYS_MAX] = {
	ADD_EACH("(?1, ?5, 1, ?6)"),
	ADD_EACH("(?1, ?5, 1, ?6), (?2, ?5, 1, ?6)"),
	ADD_EACH("(?1, ?5, 1, ?6), (?2, ?5, 1, ?6), (?3, ?5, 1, ?6)"),
	ADD_EACH("(?1, ?5, 1, ?6), (?2, ?5, 1, ?6), (?3, ?5, 1, ?6), (?4, ?5, 1, ?6)"),
};
#undef ADD_EACH
static const char *const sql_refund_each[STORE_RATE_KEYS_MAX] = {
	"UPDATE rate SET n = n - 1 WHERE win = ?5 AND n > 0 AND key IN (?1)",
	"UPDATE rate SET n = n - 1 WHERE win = ?5 AND n > 0 AND key IN (?1, ?2)",
	"UPDATE rate SET n = n - 1 WHERE win = ?5 AND n > 0 AND key IN (?1, ?2, ?3)",
	"UPDATE rate SET n = n - 1 WHERE win = ?5 AND n > 0"
	" AND key IN (?1, ?2, ?3, ?4)",
};

long long store_rate_add(struct store *st, const char *key, long long win,
    long long until, long k)
{
	struct db_stmt *s = db_stmt(st, sql_add);
	long long n = -1;

	if (s == NULL || db_text(st, s, 1, key) == -1 ||
	    db_int(st, s, 2, win) == -1 || db_int(st, s, 3, until) == -1 ||
	    db_int(st, s, 4, k) == -1)
		return -1;
	if (db_step(st, s) == DB_ROW) {
		n = db_col_int(st, s, 0);
		/* Step on to the end: only then does SQLite end the write
		 * and run its WAL auto-checkpoint; a reset after the row
		 * leaves the WAL growing until some other write
		 * checkpoints it. */
		if (db_step(st, s) != DB_DONE)
			n = -1;
	}
	db_reset(st, s);
	return n;
}

/* A statement over a key (or none) and a time: 0 or -1. */
static int key_time(struct store *st, const char *sql, const char *key,
    long long t)
{
	struct db_stmt *s = db_stmt(st, sql);

	if (s == NULL || (key && db_text(st, s, 1, key) == -1) ||
	    db_int(st, s, key ? 2 : 1, t) == -1)
		return -1;
	return db_exec(st, s);
}

int store_rate_refund(struct store *st, const char *key, long long win)
{
	return key_time(st, sql_refund, key, win);
}

int store_rate_prune(struct store *st, long long now)
{
	return key_time(st, sql_prune, NULL, now);
}

/* PostgreSQL locks the rows a statement writes one after another, as it
 * meets them: two statements over the same keys met in other orders
 * deadlock, and one of them fails after deadlock_timeout (measured: sign-
 * ins at 50 connections, an upsert against a refund, 1 s waits and lost
 * refunds, 64 sign-ins/s against SQLite's 1,099). So the keys are bound
 * in one order, sorted, and a refund, whose UPDATE meets its rows in the
 * table's order, is one statement per key there (store_rate_refund_each).
 * SQLite writes one statement at a time: nothing to order. */
static void sort_keys(const char *const keys[], int k, const char *out[])
{
	const char *t;
	int i, j;

	for (i = 0; i < k; i++) {
		t = keys[i];
		for (j = i; j > 0 && strcmp(out[j - 1], t) > 0; j--)
			out[j] = out[j - 1];
		out[j] = t;
	}
}

/* sqls[k - 1] with keys[0..k) (sorted), the window win and its end bound;
 * NULL on error. */
static struct db_stmt *each_stmt(struct store *st, const char *const sqls[],
    const char *const keys[], int k, long long win, long long until)
{
	const char *in_order[STORE_RATE_KEYS_MAX];
	struct db_stmt *s;
	int i;

	if (k < 1 || k > STORE_RATE_KEYS_MAX || (s = db_stmt(st, sqls[k - 1])) == NULL)
		return NULL;
	sort_keys(keys, k, in_order);
	for (i = 0; i < k; i++)
		if (db_text(st, s, i + 1, in_order[i]) == -1)
			return NULL;
	if (db_int(st, s, 5, win) == -1 || (db_ops(st)->nparams(s) >= 6 &&
	    db_int(st, s, 6, until) == -1))
		return NULL;
	return s;
}

int store_rate_counts(struct store *st, const char *const keys[], int k,
    long long win, long long n[])
{
	struct db_stmt *s = each_stmt(st, sql_counts, keys, k, win, 0);
	const char *key;
	int i, rc;

	if (s == NULL)
		return -1;
	for (i = 0; i < k; i++)
		n[i] = 0;
	while ((rc = db_step(st, s)) == DB_ROW) {
		key = db_col_text(st, s, 0);
		for (i = 0; i < k; i++)
			if (!strcmp(key, keys[i]))
				n[i] = db_col_int(st, s, 1);
	}
	db_reset(st, s);
	return rc == DB_DONE ? 0 : -1;
}

int store_rate_add_each(struct store *st, const char *const keys[], int k,
    long long win, long long until)
{
	struct db_stmt *s = each_stmt(st, sql_add_each, keys, k, win, until);

	return s ? db_exec(st, s) : -1;
}

int store_rate_refund_each(struct store *st, const char *const keys[], int k,
    long long win)
{
	const char *in_order[STORE_RATE_KEYS_MAX];
	struct db_stmt *s;
	int i, rc = 0;

	if (!db_ops(st)->shared) {
		s = each_stmt(st, sql_refund_each, keys, k, win, 0);
		return s ? db_exec(st, s) : -1;
	}
	if (k < 1 || k > STORE_RATE_KEYS_MAX)
		return -1;
	sort_keys(keys, k, in_order);
	for (i = 0; i < k; i++)
		if (store_rate_refund(st, in_order[i], win) == -1)
			rc = -1;
	return rc;
}
