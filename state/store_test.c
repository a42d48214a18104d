#include "store_test.h"

#include "sqlite.h"

int store_test_exec(struct store *st, const char *sql)
{
	return sqlite3_exec(st->h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 :
	    sq_fail(st, sql);
}

long long store_test_int(struct store *st, const char *sql)
{
	sqlite3_stmt *s;
	long long v = -1;

	if (sqlite3_prepare_v2(st->h, sql, -1, &s, NULL) != SQLITE_OK) {
		sq_fail(st, sql);
		return -3;
	}
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_type(s, 0) == SQLITE_NULL ? -2 :
		    sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

long long store_test_changes(struct store *st)
{
	return sqlite3_total_changes(st->h);
}
