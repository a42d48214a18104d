#include "rate.h"

#include "log.h"

static const char sql_hit[] =
    "INSERT INTO rate(key, win, n, until) VALUES(?1, ?2, 1, ?3)"
    " ON CONFLICT(key, win) DO UPDATE SET n = n + 1 RETURNING n";
static const char sql_refund[] =
    "UPDATE rate SET n = n - 1 WHERE key = ?1 AND win = ?2 AND n > 0";
static const char sql_prune[] = "DELETE FROM rate WHERE until <= ?1";

int rate_hit(struct app *a, const char *what, long limit, long window,
    time_t now, long *retry_after)
{
	char key[APP_KEY_HEX + 1];
	sqlite3_stmt *st;
	long long win = (long long)now / window * window, n = -1;
	int rc;

	app_key(a, "rate", what, key);
	if ((st = db_stmt(&a->db, sql_hit)) == NULL)
		return -1;
	db_bind_text(st, 1, key);
	sqlite3_bind_int64(st, 2, win);
	sqlite3_bind_int64(st, 3, win + window);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		n = sqlite3_column_int64(st, 0);
		/* Step on to SQLITE_DONE: only then does SQLite end the write and
		 * run its WAL auto-checkpoint; a reset after the row leaves the
		 * WAL growing until some other write checkpoints it. */
		if (sqlite3_step(st) != SQLITE_DONE)
			n = -1;
	}
	sqlite3_reset(st);
	if (n < 0) {
		log_err("rate: %s", sqlite3_errmsg(a->db.h));
		return -1;
	}
	/* A window's first hit clears out ended ones: at most once per key
	 * and window, and cheap through the index on until. */
	if (n == 1)
		rate_prune(a, now);
	if (n <= limit)
		return 0;
	*retry_after = (long)(win + window - now);
	return 1;
}

int rate_refund(struct app *a, const char *what, long window, time_t now)
{
	char key[APP_KEY_HEX + 1];
	sqlite3_stmt *st;

	app_key(a, "rate", what, key);
	if ((st = db_stmt(&a->db, sql_refund)) == NULL)
		return -1;
	db_bind_text(st, 1, key);
	sqlite3_bind_int64(st, 2, (long long)now / window * window);
	return db_exec_stmt(&a->db, st);
}

int rate_prune(struct app *a, time_t now)
{
	sqlite3_stmt *st = db_stmt(&a->db, sql_prune);

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, (long long)now);
	return db_exec_stmt(&a->db, st);
}
