/* db_pg_schema: conf/schema.sql on PostgreSQL. The one schema and the one
 * list of upgrades (db_upgrades.c), with a small mapping of SQLite's words
 * to PostgreSQL's (schema_map below); its version in a one-row table,
 * postern_schema, where SQLite keeps PRAGMA user_version. A fresh database
 * is created at STORE_SCHEMA_VERSION, an older one upgraded step by step,
 * in one transaction under an advisory lock, so that processes starting
 * together do it once. */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* The advisory lock's key: "pstn". */
#define SCHEMA_LOCK "1886614638"

/* SQLite's words in conf/schema.sql and PostgreSQL's for them: bytes are
 * BYTEA; every integer is 64-bit, as SQLite's are; a table without a rowid
 * is what every PostgreSQL table is. */
static const struct {
	const char *from, *to;
} schema_map[] = {
	{ "BLOB", "BYTEA" },
	{ "INTEGER", "BIGINT" },
	{ " WITHOUT ROWID", "" },
};

/* Words are matched whole: the schema's text has nothing else in
 * capitals. */
char *db_pg_mapped(const char *sql)
{
	size_t cap = 2 * strlen(sql) + 1, n = 0, i, k;
	const char *p = sql;
	char *out = malloc(cap);

	if (out == NULL)
		return NULL;
	while (*p && n + 16 < cap) {
		for (i = 0; i < sizeof(schema_map) / sizeof(schema_map[0]); i++) {
			k = strlen(schema_map[i].from);
			if (!strncmp(p, schema_map[i].from, k))
				break;
		}
		if (i < sizeof(schema_map) / sizeof(schema_map[0])) {
			n += (size_t)snprintf(out + n, cap - n, "%s",
			    schema_map[i].to);
			p += k;
		} else
			out[n++] = *p++;
	}
	out[n] = '\0';
	return out;
}

/* Creates the schema and its version: 0 or -1. */
static int schema_create(struct store *st)
{
	char *sql = db_pg_mapped(db_schema_sql);
	int rc;

	if (sql == NULL)
		return -1;
	rc = db_ops(st)->exec(st, sql);
	free(sql);
	if (rc == -1)
		return -1;
	return db_ops(st)->exec(st, "CREATE TABLE postern_schema ("
	    " one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),"
	    " version BIGINT NOT NULL);"
	    " INSERT INTO postern_schema(version) VALUES (" STR(STORE_SCHEMA_VERSION)
	    ")");
}

/* The steps from version v to the current one, then the version. */
static int schema_upgrade(struct store *st, long long v)
{
	char *sql, done[80];
	int rc = 0;

	for (; v < STORE_SCHEMA_VERSION && rc == 0; v++) {
		if ((sql = db_pg_mapped(db_upgrade_step((int)v))) == NULL)
			return -1;
		rc = db_ops(st)->exec(st, sql);
		free(sql);
	}
	snprintf(done, sizeof(done), "UPDATE postern_schema SET version = %d",
	    STORE_SCHEMA_VERSION);
	return rc == 0 ? db_ops(st)->exec(st, done) : -1;
}

/* Under the lock: creates a fresh schema, upgrades an older one (made at
 * version 5 or later), or accepts the current one. */
static int schema_locked(struct store *st, char *err, size_t errlen)
{
	long long v;

	if (db_ops(st)->exec(st, "SELECT pg_advisory_xact_lock("
	    SCHEMA_LOCK ")") == -1 || db_pg_version(st, &v, err, errlen) == -1)
		return -1;
	if (v == 0)
		return schema_create(st);
	if (v == STORE_SCHEMA_VERSION)
		return 0;
	if (v >= 5 && v < STORE_SCHEMA_VERSION)
		return schema_upgrade(st, v);
	snprintf(err, errlen, "database schema %lld is %s than this program "
	    "(%d)", v, v > STORE_SCHEMA_VERSION ? "newer" : "older",
	    STORE_SCHEMA_VERSION);
	return -2;
}

int db_pg_schema(struct store *st, char *err, size_t errlen)
{
	const struct db_ops *ops = db_ops(st);
	long long v;
	int rc;

	/* The common case, a current schema, takes no lock. */
	if (db_pg_version(st, &v, err, errlen) == -1)
		return -1;
	if (v == STORE_SCHEMA_VERSION)
		return 0;
	if (ops->exec(st, "BEGIN") == -1)
		rc = -1;
	else if ((rc = schema_locked(st, err, errlen)) == 0 &&
	    ops->exec(st, "COMMIT") == 0)
		return 0;
	if (rc != -2)
		snprintf(err, errlen, "database schema: %s", ops->errmsg(st));
	ops->exec(st, "ROLLBACK");
	return -1;
}
