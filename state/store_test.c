#include "store_test.h"

#include "sqlite.h"

int store_test_exec(struct store *st, const char *sql)
{
	return sqlite3_exec(st->h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 :
	    sq_fail(st, sql);
}

long long store_test_int(struct store *st, const char *sql)
{
	long long v = -1;

	switch (sq_one_int(st->h, sql, &v)) {
	case 0:
		return v;
	case 1:
		return -1;
	case 2:
		return -2;
	default:
		sq_fail(st, sql);
		return -3;
	}
}

long long store_test_changes(struct store *st)
{
	return sqlite3_total_changes(st->h);
}
