/*
 * wal_returning: shows that a write committed by sqlite3_reset() instead of
 * a sqlite3_step() that returned SQLITE_DONE never runs SQLite's WAL
 * auto-checkpoint, so the -wal file grows without bound. postern's
 * rate_hit() (shared/rate.c) steps its "INSERT ... RETURNING n" once and
 * resets it, on every API request.
 *
 *     cc -O2 -o /tmp/wal_returning bench/wal_returning.c -lsqlite3
 *     cd /tmp && ./wal_returning && ./wal_returning done
 */
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int to_done = argc > 1;
	sqlite3 *db;
	sqlite3_stmt *st;
	struct stat sb;
	int i;

	unlink("wal_returning.db");
	unlink("wal_returning.db-wal");
	unlink("wal_returning.db-shm");
	if (sqlite3_open("wal_returning.db", &db) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
	    " CREATE TABLE rate(key TEXT, win INT, n INT, until INT,"
	    " PRIMARY KEY(key, win));", 0, 0, 0) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO rate(key, win, n, until)"
	    " VALUES('k', 1, 1, 2) ON CONFLICT(key, win) DO UPDATE SET n = n + 1"
	    " RETURNING n", -1, &st, 0) != SQLITE_OK) {
		fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	for (i = 0; i < 5000; i++) {
		if (sqlite3_step(st) != SQLITE_ROW)
			return 1;
		if (to_done && sqlite3_step(st) != SQLITE_DONE)
			return 2;
		sqlite3_reset(st);
	}
	stat("wal_returning.db-wal", &sb);
	printf("SQLite %s, %s: -wal is %lld bytes after 5000 upserts\n",
	    sqlite3_libversion(), to_done ? "stepped to SQLITE_DONE" :
	    "stepped once, then reset", (long long)sb.st_size);
	sqlite3_finalize(st);
	sqlite3_close(db);
	unlink("wal_returning.db");
	unlink("wal_returning.db-wal");
	unlink("wal_returning.db-shm");
	return 0;
}
