/* store_settings: the settings table, one JSON document per account
 * (checked by settings.c before it is written). */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "sqlite.h"

static const char sql_get[] = "SELECT json FROM settings WHERE account = ?1";
static const char sql_put[] =
    "INSERT INTO settings(account, json, updated) VALUES(?1, ?2, ?3)"
    " ON CONFLICT(account) DO UPDATE SET json = ?2, updated = ?3";

int store_settings_get(struct store *st, const char *account, char **json)
{
	sqlite3_stmt *s = sq_stmt(st, sql_get);
	int rc;

	*json = NULL;
	if (s == NULL || sq_text(s, 1, account) == -1)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && (*json = strdup(sq_col_text(s, 0))) == NULL)
		rc = SQLITE_NOMEM;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sq_fail(st, "settings");
	return 0;
}

int store_settings_put(struct store *st, const char *account,
    const char *json, long long now)
{
	sqlite3_stmt *s = sq_stmt(st, sql_put);

	if (s == NULL || sq_text(s, 1, account) == -1 || sq_text(s, 2, json) == -1)
		return -1;
	sqlite3_bind_int64(s, 3, now);
	return sq_exec(st, s);
}
