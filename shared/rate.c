#include "rate.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

/* The in-memory side of rate_hit_batched: a direct-mapped table of the
 * keys this process counts, each with the hits it admitted but has not
 * yet added to the shared row. */
#define RATE_SLOTS 128
#define RATE_WHAT_MAX 64
#define RATE_BATCH_MAX 32

struct rate_slot {
	char what[RATE_WHAT_MAX];  /* "" when free */
	char key[APP_KEY_HEX + 1];
	long window;
	long long win;             /* the window known and pending belong to */
	long long known;           /* the shared count after our last write */
	long pending;              /* admitted here, not yet written */
	time_t written;            /* when we last wrote; 0: never */
};

struct rate_cache {
	struct rate_slot slot[RATE_SLOTS];
};

static const char sql_hit[] =
    "INSERT INTO rate(key, win, n, until) VALUES(?1, ?2, ?4, ?3)"
    " ON CONFLICT(key, win) DO UPDATE SET n = n + ?4 RETURNING n";
static const char sql_refund[] =
    "UPDATE rate SET n = n - 1 WHERE key = ?1 AND win = ?2 AND n > 0";
static const char sql_prune[] = "DELETE FROM rate WHERE until <= ?1";

/* Adds k hits to key's row of window win: the new count, or -1. */
static long long add_hits(struct app *a, const char *key, long long win,
    long window, long k)
{
	sqlite3_stmt *st;
	long long n = -1;

	if ((st = db_stmt(&a->db, sql_hit)) == NULL)
		return -1;
	db_bind_text(st, 1, key);
	sqlite3_bind_int64(st, 2, win);
	sqlite3_bind_int64(st, 3, win + window);
	sqlite3_bind_int64(st, 4, k);
	if (sqlite3_step(st) == SQLITE_ROW) {
		n = sqlite3_column_int64(st, 0);
		/* Step on to SQLITE_DONE: only then does SQLite end the write and
		 * run its WAL auto-checkpoint; a reset after the row leaves the
		 * WAL growing until some other write checkpoints it. */
		if (sqlite3_step(st) != SQLITE_DONE)
			n = -1;
	}
	sqlite3_reset(st);
	if (n < 0)
		log_err("rate: %s", sqlite3_errmsg(a->db.h));
	return n;
}

/* Whether a count n is past limit (retry_after then set). */
static int over(long long n, long limit, long window, time_t now,
    long *retry_after)
{
	if (n <= limit)
		return 0;
	*retry_after = rate_window_left(window, now);
	return 1;
}

/* A window's first write clears out ended ones: at most once per key and
 * window, and cheap through the index on until. */
static void first_write(struct app *a, long long n, long k, time_t now)
{
	if (n == k)
		rate_prune(a, now);
}

long rate_window_left(long window, time_t now)
{
	return (long)((long long)now / window * window + window - now);
}

/* Statements over 1 to RATE_KEYS_MAX keys at once (?1 to ?4), in the
 * window ?5 that ends at ?6: one read or one write for all of them. The
 * upsert has no RETURNING: over several rows it costs the heap a grow
 * and a trim per call (brk and page faults, more than the write), so the
 * counts are read in a second statement. */
static const char *const sql_count_keys[RATE_KEYS_MAX] = {
	"SELECT key, n FROM rate WHERE win = ?5 AND key IN (?1)",
	"SELECT key, n FROM rate WHERE win = ?5 AND key IN (?1, ?2)",
	"SELECT key, n FROM rate WHERE win = ?5 AND key IN (?1, ?2, ?3)",
	"SELECT key, n FROM rate WHERE win = ?5 AND key IN (?1, ?2, ?3, ?4)",
};
#define ADD_KEYS(values) "INSERT INTO rate(key, win, n, until) VALUES " values \
	" ON CONFLICT(key, win) DO UPDATE SET n = n + 1"
static const char *const sql_add_keys[RATE_KEYS_MAX] = {
	ADD_KEYS("(?1, ?5, 1, ?6)"),
	ADD_KEYS("(?1, ?5, 1, ?6), (?2, ?5, 1, ?6)"),
	ADD_KEYS("(?1, ?5, 1, ?6), (?2, ?5, 1, ?6), (?3, ?5, 1, ?6)"),
	ADD_KEYS("(?1, ?5, 1, ?6), (?2, ?5, 1, ?6), (?3, ?5, 1, ?6), (?4, ?5, 1, ?6)"),
};
#undef ADD_KEYS
static const char *const sql_refund_keys[RATE_KEYS_MAX] = {
	"UPDATE rate SET n = n - 1 WHERE win = ?5 AND n > 0 AND key IN (?1)",
	"UPDATE rate SET n = n - 1 WHERE win = ?5 AND n > 0 AND key IN (?1, ?2)",
	"UPDATE rate SET n = n - 1 WHERE win = ?5 AND n > 0 AND key IN (?1, ?2, ?3)",
	"UPDATE rate SET n = n - 1 WHERE win = ?5 AND n > 0"
	" AND key IN (?1, ?2, ?3, ?4)",
};

/* sqls[k - 1] with the keys of whats[0..k) (into keys) and the window
 * holding now bound; NULL on error. */
static sqlite3_stmt *keys_stmt(struct app *a, const char *const sqls[],
    const char *const whats[], int k, char keys[][APP_KEY_HEX + 1],
    long window, time_t now)
{
	long long win = (long long)now / window * window;
	sqlite3_stmt *st;
	int i;

	if (k < 1 || k > RATE_KEYS_MAX || (st = db_stmt(&a->db, sqls[k - 1])) == NULL)
		return NULL;
	for (i = 0; i < k; i++) {
		app_key(a, "rate", whats[i], keys[i]);
		db_bind_text(st, i + 1, keys[i]);
	}
	sqlite3_bind_int64(st, 5, win);
	if (sqlite3_bind_parameter_count(st) >= 6)
		sqlite3_bind_int64(st, 6, win + window);
	return st;
}

/* Steps st through its rows (key, n), each count into n[] by its key (0
 * for a key without a row), and resets it: 0 or -1. */
static int keys_rows(struct app *a, sqlite3_stmt *st,
    char keys[][APP_KEY_HEX + 1], int k, long long n[])
{
	const char *key;
	int i, rc;

	for (i = 0; i < k; i++)
		n[i] = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		key = (const char *)sqlite3_column_text(st, 0);
		for (i = 0; key && i < k; i++)
			if (!strcmp(key, keys[i]))
				n[i] = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return 0;
	log_err("rate: %s", sqlite3_errmsg(a->db.h));
	return -1;
}

int rate_count_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now, long long n[])
{
	char keys[RATE_KEYS_MAX][APP_KEY_HEX + 1];
	sqlite3_stmt *st = keys_stmt(a, sql_count_keys, whats, k, keys, window, now);

	return st ? keys_rows(a, st, keys, k, n) : -1;
}

int rate_add_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now, long long n[])
{
	char keys[RATE_KEYS_MAX][APP_KEY_HEX + 1];
	sqlite3_stmt *st = keys_stmt(a, sql_add_keys, whats, k, keys, window, now);
	int i;

	if (st == NULL || db_exec_stmt(&a->db, st) == -1 ||
	    rate_count_keys(a, whats, k, window, now, n) == -1)
		return -1;
	/* A window's first hit of any of them clears out ended windows. */
	for (i = 0; i < k; i++)
		if (n[i] == 1) {
			rate_prune(a, now);
			break;
		}
	return 0;
}

int rate_refund_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now)
{
	char keys[RATE_KEYS_MAX][APP_KEY_HEX + 1];
	sqlite3_stmt *st = keys_stmt(a, sql_refund_keys, whats, k, keys, window, now);

	return st ? db_exec_stmt(&a->db, st) : -1;
}

int rate_hit(struct app *a, const char *what, long limit, long window,
    time_t now, long *retry_after)
{
	char key[APP_KEY_HEX + 1];
	long long n;

	app_key(a, "rate", what, key);
	if ((n = add_hits(a, key, (long long)now / window * window, window, 1)) < 0)
		return -1;
	first_write(a, n, 1, now);
	return over(n, limit, window, now, retry_after);
}

/* Hits held in memory at most: a 64th of the limit, so that the few
 * processes of a responder together overshoot it by a few per cent at
 * worst; 1 (every hit written) below a limit of 128. */
static long batch_size(long limit)
{
	long k = limit / 64;

	return k < 1 ? 1 : k > RATE_BATCH_MAX ? RATE_BATCH_MAX : k;
}

static unsigned int slot_index(const char *what, long window)
{
	unsigned int h = 2166136261u ^ (unsigned int)window;

	for (; *what; what++)
		h = (h ^ (unsigned char)*what) * 16777619u;
	return h % RATE_SLOTS;
}

/* Writes what a slot holds: its owner left or another key takes it. */
static void slot_flush(struct app *a, struct rate_slot *sl)
{
	if (sl->what[0] && sl->pending > 0)
		add_hits(a, sl->key, sl->win, sl->window, sl->pending);
	sl->pending = 0;
}

static struct rate_slot *slot_for(struct app *a, const char *what, long window)
{
	struct rate_slot *sl;

	if (strlen(what) >= RATE_WHAT_MAX)
		return NULL;
	if (a->rate_cache == NULL &&
	    (a->rate_cache = calloc(1, sizeof(*a->rate_cache))) == NULL)
		return NULL;
	sl = &a->rate_cache->slot[slot_index(what, window)];
	if (sl->window == window && !strcmp(sl->what, what))
		return sl;
	slot_flush(a, sl);
	memset(sl, 0, sizeof(*sl));
	strcpy(sl->what, what);
	app_key(a, "rate", what, sl->key);
	sl->window = window;
	sl->win = -1;
	return sl;
}

int rate_hit_batched(struct app *a, const char *what, long limit,
    long window, time_t now, long *retry_after)
{
	long long win = (long long)now / window * window, n;
	struct rate_slot *sl = slot_for(a, what, window);
	long k;

	if (sl == NULL)
		return rate_hit(a, what, limit, window, now, retry_after);
	if (sl->win != win) {
		/* Hits still pending belong to a window that has ended. */
		sl->win = win;
		sl->known = 0;
		sl->pending = 0;
		sl->written = 0;
	}
	/* Held here only while well below the limit, less than the batch,
	 * and within the second of the last write (which read the count). */
	if (sl->written == now && sl->pending + 1 < batch_size(limit) &&
	    sl->known + sl->pending + 1 <= limit / 2) {
		sl->pending++;
		return 0;
	}
	k = sl->pending + 1;
	if ((n = add_hits(a, sl->key, win, window, k)) < 0)
		return -1;
	sl->pending = 0;
	sl->known = n;
	sl->written = now;
	first_write(a, n, k, now);
	return over(n, limit, window, now, retry_after);
}

void rate_cache_close(struct app *a)
{
	size_t i;

	if (a->rate_cache == NULL)
		return;
	for (i = 0; i < RATE_SLOTS; i++)
		slot_flush(a, &a->rate_cache->slot[i]);
	free(a->rate_cache);
	a->rate_cache = NULL;
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
