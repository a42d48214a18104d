/* store: the state interface's own calls, over the engine state_db names
 * (a libpq connection URI: PostgreSQL, db_pg.c; anything else: a SQLite
 * file, db_sqlite.c). */
#include "store.h"

#include <string.h>

#include "db.h"

const char db_schema_sql[] =
#include "schema.inc"
;

int store_is_url(const char *state_db)
{
	return state_db && (!strncmp(state_db, "postgresql://", 13) ||
	    !strncmp(state_db, "postgres://", 11));
}

int store_open(struct store **out, const char *path, char *err,
    size_t errlen)
{
	if (store_is_url(path))
		return db_pg_open(out, path, err, errlen);
	return db_sqlite_open(out, path, err, errlen);
}

void store_close(struct store *st)
{
	if (st)
		db_ops(st)->close(st);
}

int store_ping(struct store *st)
{
	static const char sql[] = "SELECT count(*) FROM sessions";
	struct db_stmt *s;

	if (st == NULL || (s = db_stmt(st, sql)) == NULL)
		return -1;
	return db_one(st, s) >= 0 ? 0 : -1;
}

int store_begin(struct store *st)
{
	return db_ops(st)->begin(st) == 0 ? 0 : db_fail(st, "db: begin");
}

int store_commit(struct store *st)
{
	return db_ops(st)->commit(st) == 0 ? 0 : db_fail(st, "db: commit");
}

int store_inspect(const char *path, long long *version, long long *objects,
    char *err, size_t errlen)
{
	if (store_is_url(path))
		return db_pg_inspect(path, version, objects, err, errlen);
	return db_sqlite_inspect(path, version, objects, err, errlen);
}
