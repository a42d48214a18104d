/* store_settings: the settings table, one JSON document per account
 * (checked by settings.c before it is written). */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "db.h"

static const char sql_get[] = "SELECT json FROM settings WHERE account = ?1";
static const char sql_put[] =
    "INSERT INTO settings(account, json, updated) VALUES(?1, ?2, ?3)"
    " ON CONFLICT(account) DO UPDATE SET json = ?2, updated = ?3";

int store_settings_get(struct store *st, const char *account, char **json)
{
	struct db_stmt *s = db_stmt(st, sql_get);
	int rc;

	*json = NULL;
	if (s == NULL || db_text(st, s, 1, account) == -1)
		return -1;
	rc = db_step(st, s);
	if (rc == DB_ROW && (*json = strdup(db_col_text(st, s, 0))) == NULL)
		rc = DB_ERROR;
	db_reset(st, s);
	return rc == DB_ERROR ? -1 : 0;
}

int store_settings_put(struct store *st, const char *account,
    const char *json, long long now)
{
	struct db_stmt *s = db_stmt(st, sql_put);

	if (s == NULL || db_text(st, s, 1, account) == -1 ||
	    db_text(st, s, 2, json) == -1 || db_int(st, s, 3, now) == -1)
		return -1;
	return db_exec(st, s);
}
