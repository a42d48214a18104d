#include "store_test.h"

#include <stdlib.h>

#include "db.h"

int store_test_exec(struct store *st, const char *sql)
{
	return db_ops(st)->exec(st, sql) == 0 ? 0 : db_fail(st, sql);
}

long long store_test_int(struct store *st, const char *sql)
{
	long long v = -1;

	switch (db_ops(st)->one_int(st, sql, &v)) {
	case 0:
		return v;
	case 1:
		return -1;
	case 2:
		return -2;
	default:
		db_fail(st, sql);
		return -3;
	}
}

long long store_test_changes(struct store *st)
{
	return db_ops(st)->total_changes(st);
}

int store_test_wipe(struct store *st)
{
	return store_test_exec(st, "DELETE FROM webpush; DELETE FROM sessions;"
	    " DELETE FROM rate; DELETE FROM settings; DELETE FROM push_accounts;"
	    " DELETE FROM nodes");
}

const char *store_test_db(void)
{
	const char *db = getenv("POSTERN_TEST_STATE_DB");

	return db && *db ? db : NULL;
}
