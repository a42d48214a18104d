/* store: the state interface's own calls, over the engine state_db names
 * (a libpq connection URI: PostgreSQL, db_pg.c; anything else: a SQLite
 * file, db_sqlite.c). */
#include "store.h"

#include <stdio.h>
#include <string.h>

#include "db.h"
#include "sesskeep.h"

const char db_schema_sql[] =
#include "schema.inc"
;

int store_is_url(const char *state_db)
{
	return state_db && (!strncmp(state_db, "postgresql://", 13) ||
	    !strncmp(state_db, "postgres://", 11));
}

void store_shown(const char *state_db, char *out, size_t n)
{
	const char *auth, *at, *end, *p;
	size_t k = 0;

	snprintf(out, n, "%s", state_db ? state_db : "");
	if (!store_is_url(state_db) || n == 0)
		return;
	/* The authority's "user:password@" goes. */
	auth = strstr(state_db, "://") + 3;
	end = auth + strcspn(auth, "/?");
	at = memchr(auth, '@', (size_t)(end - auth));
	k = (size_t)snprintf(out, n, "%.*s", (int)(auth - state_db), state_db);
	for (p = at ? at + 1 : auth; *p && k + 1 < n; p++) {
		/* A password=... parameter goes too, up to its & or the end. */
		if ((p[-1] == '?' || p[-1] == '&') &&
		    !strncmp(p, "password=", 9)) {
			p += strcspn(p, "&");
			if (*p == '\0')
				break;
			continue;
		}
		out[k++] = *p;
	}
	out[k < n ? k : n - 1] = '\0';
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
	if (st == NULL)
		return;
	sesskeep_free(db_head(st)->keep);
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
