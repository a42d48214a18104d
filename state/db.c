/* db: the engine-neutral statement layer (db.h) over a store's driver. */
#include "db.h"

#include "log.h"

struct db_stmt *db_stmt(struct store *st, const char *sql)
{
	return db_ops(st)->stmt(st, sql);
}

int db_text(struct store *st, struct db_stmt *s, int i, const char *t)
{
	return db_ops(st)->bind_text(s, i, t);
}

int db_blob(struct store *st, struct db_stmt *s, int i, const void *p,
    size_t n)
{
	return db_ops(st)->bind_blob(s, i, p, n);
}

int db_int(struct store *st, struct db_stmt *s, int i, long long v)
{
	return db_ops(st)->bind_int(s, i, v);
}

int db_step(struct store *st, struct db_stmt *s)
{
	int rc = db_ops(st)->step(s);

	if (rc == DB_ERROR)
		db_fail(st, "db");
	return rc;
}

void db_reset(struct store *st, struct db_stmt *s)
{
	db_ops(st)->reset(s);
}

const char *db_col_text(struct store *st, struct db_stmt *s, int i)
{
	const char *t = db_ops(st)->col_text(s, i);

	return t ? t : "";
}

const unsigned char *db_col_blob(struct store *st, struct db_stmt *s, int i,
    size_t *n)
{
	return db_ops(st)->col_blob(s, i, n);
}

long long db_col_int(struct store *st, struct db_stmt *s, int i)
{
	return db_ops(st)->col_int(s, i);
}

int db_exec(struct store *st, struct db_stmt *s)
{
	int rc = db_step(st, s);

	db_reset(st, s);
	return rc == DB_ERROR ? -1 : 0;
}

int db_changes(struct store *st, struct db_stmt *s)
{
	return db_exec(st, s) == -1 ? -1 : (int)db_ops(st)->changes(st);
}

long long db_one(struct store *st, struct db_stmt *s)
{
	long long v = -1;

	if (db_step(st, s) == DB_ROW)
		v = db_col_int(st, s, 0);
	db_reset(st, s);
	return v;
}

int db_fail(struct store *st, const char *what)
{
	log_err("%s: %s", what, db_ops(st)->errmsg(st));
	return -1;
}
