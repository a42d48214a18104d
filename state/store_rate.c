/* store_rate: the rate table, one row per key and window. The rules
 * (limits, batching, which keys) are rate.c's and login.c's. */
#include "store.h"

#include <string.h>

#include "sqlite.h"

static const char sql_add[] =
    "INSERT INTO rate(key, win, n, until) VALUES(?1, ?2, ?4, ?3)"
    " ON CONFLICT(key, win) DO UPDATE SET n = n + ?4 RETURNING n";
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
	" ON CONFLICT(key, win) DO UPDATE SET n = n + 1"
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
	sqlite3_stmt *s = sq_stmt(st, sql_add);
	long long n = -1;

	if (s == NULL || sq_text(s, 1, key) == -1)
		return -1;
	sqlite3_bind_int64(s, 2, win);
	sqlite3_bind_int64(s, 3, until);
	sqlite3_bind_int64(s, 4, k);
	if (sqlite3_step(s) == SQLITE_ROW) {
		n = sqlite3_column_int64(s, 0);
		/* Step on to SQLITE_DONE: only then does SQLite end the
		 * write and run its WAL auto-checkpoint; a reset after the
		 * row leaves the WAL growing until some other write
		 * checkpoints it. */
		if (sqlite3_step(s) != SQLITE_DONE)
			n = -1;
	}
	sqlite3_reset(s);
	if (n < 0)
		sq_fail(st, "rate");
	return n;
}

int store_rate_refund(struct store *st, const char *key, long long win)
{
	sqlite3_stmt *s = sq_stmt(st, sql_refund);

	if (s == NULL || sq_text(s, 1, key) == -1)
		return -1;
	sqlite3_bind_int64(s, 2, win);
	return sq_exec(st, s);
}

int store_rate_prune(struct store *st, long long now)
{
	sqlite3_stmt *s = sq_stmt(st, sql_prune);

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, now);
	return sq_exec(st, s);
}

/* sqls[k - 1] with keys[0..k), the window win and its end bound; NULL on
 * error. */
static sqlite3_stmt *each_stmt(struct store *st, const char *const sqls[],
    const char *const keys[], int k, long long win, long long until)
{
	sqlite3_stmt *s;
	int i;

	if (k < 1 || k > STORE_RATE_KEYS_MAX || (s = sq_stmt(st, sqls[k - 1])) == NULL)
		return NULL;
	for (i = 0; i < k; i++)
		if (sq_text(s, i + 1, keys[i]) == -1)
			return NULL;
	sqlite3_bind_int64(s, 5, win);
	if (sqlite3_bind_parameter_count(s) >= 6)
		sqlite3_bind_int64(s, 6, until);
	return s;
}

int store_rate_counts(struct store *st, const char *const keys[], int k,
    long long win, long long n[])
{
	sqlite3_stmt *s = each_stmt(st, sql_counts, keys, k, win, 0);
	const char *key;
	int i, rc;

	if (s == NULL)
		return -1;
	for (i = 0; i < k; i++)
		n[i] = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		key = (const char *)sqlite3_column_text(s, 0);
		for (i = 0; key && i < k; i++)
			if (!strcmp(key, keys[i]))
				n[i] = sqlite3_column_int64(s, 1);
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sq_fail(st, "rate");
}

int store_rate_add_each(struct store *st, const char *const keys[], int k,
    long long win, long long until)
{
	sqlite3_stmt *s = each_stmt(st, sql_add_each, keys, k, win, until);

	return s ? sq_exec(st, s) : -1;
}

int store_rate_refund_each(struct store *st, const char *const keys[], int k,
    long long win)
{
	sqlite3_stmt *s = each_stmt(st, sql_refund_each, keys, k, win, 0);

	return s ? sq_exec(st, s) : -1;
}
