/* db_sqlite: the SQLite driver of the statement layer (db.h), postern's
 * default engine: one file opened with WAL, a busy handler and defensive
 * settings, its schema created or brought up to date by PRAGMA
 * user_version, its statements kept. */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "log.h"
#include "seal.h"
#include "store.h"

struct sq_db {
	struct db_head head;
	sqlite3 *h;
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} stmts[STORE_MAX_STMTS];
	int n;
};

#define SQ(st) ((struct sq_db *)(void *)(st))
#define STMT(s) ((sqlite3_stmt *)(void *)(s))

/* Waits for another process's write lock. Writes here hold it for
 * microseconds, but SQLite's own busy timeout sleeps a millisecond or more
 * from the first retry. So the wait starts at 20 us and doubles up to
 * 10 ms, then stays there, about 5 s in all. Doubling rather than polling
 * matters when many CGI processes share two cores: a holder descheduled
 * for a time slice must not be starved by waiters retrying. */
static int db_busy(void *ctx, int count)
{
	if (count >= 10 + 500)
		return 0;
	usleep(count < 10 ? (useconds_t)20 << count : 10000);
	return 1;
}

static int db_pragmas(struct sq_db *db)
{
	int on = 1;

	sqlite3_busy_handler(db->h, db_busy, NULL);
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DEFENSIVE, 1, &on);
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &on);
	/* secure_delete (Debian's build has it on anyway): what a row held
	 * before an update or delete is overwritten, not left in free space
	 * for a copy of the file to show. */
	return sqlite3_exec(db->h,
	    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
	    " PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF;"
	    " PRAGMA secure_delete=ON;",
	    NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static int sq_one_int(sqlite3 *h, const char *sql, long long *v)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL)
		rc = 2;
	else if (rc == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		rc = 0;
	} else
		rc = rc == SQLITE_DONE ? 1 : -1;
	sqlite3_finalize(st);
	return rc;
}

static int db_user_version(struct sq_db *db, int *v)
{
	long long n;

	if (sq_one_int(db->h, "PRAGMA user_version", &n) != 0)
		return -1;
	*v = (int)n;
	return 0;
}

/* postern_sha256_hex(text): the SHA-256 of its bytes in hex, for the
 * upgrades only (registered while they run). */
static void db_sha256_hex(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	unsigned char h[SEAL_HASH_LEN];
	char hex[2 * SEAL_HASH_LEN + 1];
	const unsigned char *p;

	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	p = sqlite3_value_text(argv[0]);
	seal_sha256(p ? p : (const unsigned char *)"", (size_t)sqlite3_value_bytes(argv[0]), h);
	seal_hex(h, sizeof(h), hex);
	sqlite3_result_text(ctx, hex, -1, SQLITE_TRANSIENT);
}

static int db_upgrade(struct sq_db *db, int from)
{
	int v, rc = 0;

	if (sqlite3_create_function(db->h, "postern_sha256_hex", 1, SQLITE_UTF8 |
	    SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL, db_sha256_hex, NULL,
	    NULL) != SQLITE_OK)
		return -1;
	for (v = from; v < STORE_SCHEMA_VERSION && rc == 0; v++)
		if (sqlite3_exec(db->h, db_upgrade_step(v), NULL, NULL, NULL) !=
		    SQLITE_OK)
			rc = -1;
	sqlite3_create_function(db->h, "postern_sha256_hex", 1, SQLITE_UTF8,
	    NULL, NULL, NULL, NULL);
	return rc;
}

/* Creates the schema inside one write transaction, so that processes that
 * start together create it once and nothing half-made is ever seen. */
static int db_migrate(struct sq_db *db, char *err, size_t errlen)
{
	char sql[64];
	int v;

	/* The common case, a current schema, needs no write lock: a CGI
	 * process starting per request must not queue behind the others. */
	if (db_user_version(db, &v) == 0 && v == STORE_SCHEMA_VERSION)
		return 0;
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	if (db_user_version(db, &v) == -1)
		goto fail;
	if (v > STORE_SCHEMA_VERSION) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		snprintf(err, errlen, "database schema %d is newer than this "
		    "program (%d)", v, STORE_SCHEMA_VERSION);
		return -1;
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", STORE_SCHEMA_VERSION);
	if (v == 0) {
		if (sqlite3_exec(db->h, db_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(db->h, sql, NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
	} else if (v < STORE_SCHEMA_VERSION) {
		if (db_upgrade(db, v) == -1 ||
		    sqlite3_exec(db->h, sql, NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
	}
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) {
		/* The pages an upgrade replaced (clear push tokens before
		 * version 4) leave the log too, unless a reader holds it. */
		if (v > 0 && v < STORE_SCHEMA_VERSION)
			sqlite3_exec(db->h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL,
			    NULL, NULL);
		return 0;
	}
fail:
	snprintf(err, errlen, "database schema: %s", sqlite3_errmsg(db->h));
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static struct db_stmt *sq_stmt(struct store *st, const char *sql)
{
	struct sq_db *db = SQ(st);
	sqlite3_stmt *s;
	int i;

	for (i = 0; i < db->n; i++)
		if (db->stmts[i].sql == sql) {
			s = db->stmts[i].st;
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			return (struct db_stmt *)(void *)s;
		}
	if (db->n == STORE_MAX_STMTS) {
		log_err("db: statement cache full");
		return NULL;
	}
	if (sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &s, NULL) != SQLITE_OK) {
		log_err("db: prepare: %s", sqlite3_errmsg(db->h));
		return NULL;
	}
	db->stmts[db->n].sql = sql;
	db->stmts[db->n].st = s;
	db->n++;
	return (struct db_stmt *)(void *)s;
}

static int sq_bind_text(struct db_stmt *s, int i, const char *t)
{
	return sqlite3_bind_text(STMT(s), i, t, -1, SQLITE_TRANSIENT) ==
	    SQLITE_OK ? 0 : -1;
}

static int sq_bind_blob(struct db_stmt *s, int i, const void *p, size_t n)
{
	return sqlite3_bind_blob(STMT(s), i, p, (int)n, SQLITE_TRANSIENT) ==
	    SQLITE_OK ? 0 : -1;
}

static int sq_bind_int(struct db_stmt *s, int i, long long v)
{
	return sqlite3_bind_int64(STMT(s), i, v) == SQLITE_OK ? 0 : -1;
}

static int sq_nparams(struct db_stmt *s)
{
	return sqlite3_bind_parameter_count(STMT(s));
}

static int sq_step(struct db_stmt *s)
{
	int rc = sqlite3_step(STMT(s));

	return rc == SQLITE_ROW ? DB_ROW : rc == SQLITE_DONE ? DB_DONE :
	    DB_ERROR;
}

static void sq_reset(struct db_stmt *s)
{
	sqlite3_reset(STMT(s));
}

static int sq_col_null(struct db_stmt *s, int i)
{
	return sqlite3_column_type(STMT(s), i) == SQLITE_NULL;
}

static const char *sq_col_text(struct db_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(STMT(s), i);
}

static const unsigned char *sq_col_blob(struct db_stmt *s, int i, size_t *n)
{
	const unsigned char *p = sqlite3_column_blob(STMT(s), i);

	*n = p ? (size_t)sqlite3_column_bytes(STMT(s), i) : 0;
	return p;
}

static long long sq_col_int(struct db_stmt *s, int i)
{
	return sqlite3_column_int64(STMT(s), i);
}

static long long sq_changes(struct store *st)
{
	return sqlite3_changes(SQ(st)->h);
}

static long long sq_total_changes(struct store *st)
{
	return sqlite3_total_changes(SQ(st)->h);
}

static int sq_exec(struct store *st, const char *sql)
{
	return sqlite3_exec(SQ(st)->h, sql, NULL, NULL, NULL) == SQLITE_OK ?
	    0 : -1;
}

static int sq_one(struct store *st, const char *sql, long long *v)
{
	return sq_one_int(SQ(st)->h, sql, v);
}

static int sq_begin(struct store *st)
{
	return sq_exec(st, "BEGIN");
}

static int sq_commit(struct store *st)
{
	return sq_exec(st, "COMMIT");
}

static const char *sq_errmsg(struct store *st)
{
	return sqlite3_errmsg(SQ(st)->h);
}

static void sq_close(struct store *st)
{
	struct sq_db *db = SQ(st);
	int i;

	if (db == NULL)
		return;
	for (i = 0; i < db->n; i++)
		sqlite3_finalize(db->stmts[i].st);
	if (db->h)
		sqlite3_close(db->h);
	free(db);
}

static const struct db_ops sq_ops = {
	.name = "sqlite",
	.stmt = sq_stmt, .bind_text = sq_bind_text, .bind_blob = sq_bind_blob,
	.bind_int = sq_bind_int, .nparams = sq_nparams, .step = sq_step,
	.reset = sq_reset, .col_null = sq_col_null, .col_text = sq_col_text,
	.col_blob = sq_col_blob, .col_int = sq_col_int, .changes = sq_changes,
	.total_changes = sq_total_changes, .exec = sq_exec, .one_int = sq_one,
	.begin = sq_begin, .commit = sq_commit, .errmsg = sq_errmsg,
	.close = sq_close,
};

int db_sqlite_open(struct store **out, const char *path, char *err,
    size_t errlen)
{
	struct sq_db *db;
	mode_t old;
	int rc;

	*out = NULL;
	if ((db = calloc(1, sizeof(*db))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	db->head.ops = &sq_ops;
	/* The file and its -wal/-shm siblings are created 0600. */
	old = umask(077);
	rc = sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	umask(old);
	if (rc != SQLITE_OK || db_pragmas(db) == -1) {
		snprintf(err, errlen, "%s: %s", path,
		    db->h ? sqlite3_errmsg(db->h) : "cannot open");
		sq_close((struct store *)(void *)db);
		return -1;
	}
	if (db_migrate(db, err, errlen) == -1) {
		sq_close((struct store *)(void *)db);
		return -1;
	}
	*out = (struct store *)(void *)db;
	return 0;
}

int db_sqlite_inspect(const char *path, long long *version,
    long long *objects, char *err, size_t errlen)
{
	sqlite3 *h = NULL;
	int rc = 0;

	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sq_one_int(h, "PRAGMA user_version", version) != 0 ||
	    sq_one_int(h, "SELECT count(*) FROM sqlite_schema", objects) != 0) {
		snprintf(err, errlen, "%s", h ? sqlite3_errmsg(h) : "cannot open");
		rc = -1;
	}
	sqlite3_close(h);
	return rc;
}
