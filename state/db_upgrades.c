/* db_upgrades: the one list of schema migrations for both engines, each
 * the step from one version to the next, in conf/schema.sql's words
 * (db_pg_schema.c maps them for PostgreSQL as it maps the schema). The
 * steps to version 5 are SQLite's only: every PostgreSQL database was
 * created at version 5 or later, and step 3 -> 4 calls a function the
 * SQLite driver registers while it upgrades. */
#include "db.h"
#include "store.h"

static const char *const upgrades[] = {
	/* 1 -> 2: pushd counts each account's open event streams. */
	"ALTER TABLE push_accounts ADD COLUMN tabs INTEGER NOT NULL DEFAULT 0",
	/* 2 -> 3: when the mail server last accepted a session. 0 for the
	 * sessions already there: their next route that does not ask the
	 * mail server itself asks it first. */
	"ALTER TABLE sessions ADD COLUMN verified INTEGER NOT NULL DEFAULT 0",
	/* 3 -> 4: a verified subscription's push token, the only credential
	 * of its callback, is kept as its SHA-256 (hex). The rows there are
	 * hashed in place, so that their subscriptions go on. A pushd of
	 * the old version still running meets no column "token" and so
	 * cannot write a clear one. */
	"ALTER TABLE push_accounts RENAME COLUMN token TO token_hash;"
	" UPDATE push_accounts SET token_hash = postern_sha256_hex(token_hash)"
	" WHERE token_hash IS NOT NULL",
	/* 4 -> 5: devices' Web Push subscriptions (conf/schema.sql). */
	"CREATE TABLE webpush (session TEXT PRIMARY KEY REFERENCES"
	" sessions(id) ON DELETE CASCADE, account TEXT NOT NULL,"
	" endpoint TEXT NOT NULL, p256dh BLOB NOT NULL, auth BLOB NOT NULL,"
	" sealed BLOB NOT NULL, created INTEGER NOT NULL) WITHOUT ROWID;"
	" CREATE INDEX webpush_account ON webpush(account)",
	/* 5 -> 6: the nodes sharing the state, which node's pushd wrote each
	 * push row, and its lease on the account. The rows already there
	 * belong to no node: the first pushd to start cleans them up, as it
	 * did before. */
	"CREATE TABLE nodes (name TEXT PRIMARY KEY, started INTEGER NOT NULL,"
	" seen INTEGER NOT NULL) WITHOUT ROWID;"
	" ALTER TABLE push_accounts ADD COLUMN node TEXT NOT NULL DEFAULT '';"
	" ALTER TABLE push_accounts ADD COLUMN lease_until INTEGER NOT NULL"
	" DEFAULT 0",
};
_Static_assert(sizeof(upgrades) / sizeof(upgrades[0]) ==
    STORE_SCHEMA_VERSION - 1, "one upgrade step for each version");

const char *db_upgrade_step(int from)
{
	if (from < 1 || from >= STORE_SCHEMA_VERSION)
		return NULL;
	return upgrades[from - 1];
}
