/* Push tokens: pushd keeps only their SHA-256, in memory and in
 * push_accounts.token_hash; a callback's token is found by its hash,
 * whether its account is in memory or only in the database (a restart);
 * a database of schema 3, with tokens in clear, is migrated with its
 * tokens hashed and nothing of them left in its files. */
#define _GNU_SOURCE 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "testapp.h"

#include "acct.h"
#include "callback.h"
#include "testcallback.h"
#include "chan.h"
#include "pushd.h"
#include "seal.h"

#define TOKEN "dG9rZW4tb2YtdGhlLXVuaXQtdGVzdC0wMTIzNDU2Nzg"
#define OTHER "dG9rZW4tb2YtdGhlLXVuaXQtdGVzdC0wMTIzNDU2Nzk"
#define STATE_CHANGE "{\"@type\":\"StateChange\",\"changed\":{}}"

static void exec_sql(struct testapp *t, const char *sql)
{
	if (store_test_exec(t->app.store, sql) == -1)
		fail_msg("%s", sql);
}

static void sha256_hex(const char *s, char out[65])
{
	unsigned char h[SEAL_HASH_LEN];

	seal_sha256(s, strlen(s), h);
	seal_hex(h, sizeof(h), out);
}

/* Whether the bytes of s are anywhere in the file at path (absent: no). */
static int file_holds(const char *path, const char *s)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long n;
	int found = 0;

	if (f == NULL)
		return 0;
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	assert_non_null(data = malloc((size_t)n + 1));
	assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	found = n > 0 && memmem(data, (size_t)n, s, strlen(s)) != NULL;
	free(data);
	return found;
}

static int db_holds(struct testapp *t, const char *s)
{
	char path[300];

	snprintf(path, sizeof(path), "%s-wal", t->db_path);
	return file_holds(t->db_path, s) || file_holds(path, s);
}

static void insert_sub(struct testapp *t, const char *col, const char *value)
{
	char sql[512];

	snprintf(sql, sizeof(sql), "INSERT INTO push_accounts(account, mode,"
	    " sub_id, %s, expires, updated, tabs) VALUES ('a1', 'subscription',"
	    " 's1', '%s', %lld, 0, 0)", col, value,
	    (long long)time(NULL) + 86400);
	exec_sql(t, sql);
}

/* What sub_token_hash gives is the SHA-256 of the token, in hex. */
static void hash_is_sha256_hex(void **state)
{
	char got[ACCT_TOKEN_HEX + 1], want[65];

	sub_token_hash(TOKEN, got);
	sha256_hex(TOKEN, want);
	assert_string_equal(got, want);
	assert_int_equal(strlen(got), ACCT_TOKEN_HEX);
	sub_token_hash(OTHER, want);
	assert_string_not_equal(got, want);
}

/* A database of schema 3 holds its verified tokens in clear; opened by
 * this version, the column is token_hash and holds their hashes, and
 * neither the file nor its log holds a token any more. */
static void version_3_database_migrated(void **state)
{
	struct testapp *t = *state, t2;
	char want[65], sql[256];

	testapp_sqlite_only();
	exec_sql(t, "ALTER TABLE push_accounts RENAME COLUMN token_hash TO token");
	exec_sql(t, "DROP TABLE webpush");
	exec_sql(t, "DROP TABLE nodes");
	exec_sql(t, "ALTER TABLE push_accounts DROP COLUMN node");
	exec_sql(t, "ALTER TABLE push_accounts DROP COLUMN lease_until");
	exec_sql(t, "PRAGMA user_version = 3");
	insert_sub(t, "token", TOKEN);
	exec_sql(t, "INSERT INTO push_accounts(account, mode, updated, tabs)"
	    " VALUES ('a2', 'relay', 0, 1)");
	assert_true(db_holds(t, TOKEN));
	testapp_open_twin(t, &t2);
	assert_int_equal(testapp_count(&t2, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	assert_int_equal(testapp_count(&t2, "SELECT count(*) FROM"
	    " pragma_table_info('push_accounts') WHERE name = 'token'"), 0);
	/* Version 5's devices' subscriptions, as conf/schema.sql has them. */
	assert_int_equal(testapp_count(&t2, "SELECT count(*) FROM"
	    " pragma_table_info('webpush')"), 7);
	sha256_hex(TOKEN, want);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM push_accounts WHERE"
	    " account = 'a1' AND token_hash = '%s'", want);
	assert_int_equal(testapp_count(&t2, sql), 1);
	/* -2: the column is NULL */
	assert_int_equal(store_test_int(t2.app.store, "SELECT token_hash"
	    " FROM push_accounts WHERE account = 'a2'"), -2);
	assert_false(db_holds(&t2, TOKEN));
	testapp_close(&t2);
}

/* A restarted pushd: the account is not in memory, its row is. The
 * token presented is found by its hash; another token is not. */
static void stored_token_found_by_hash(void **state)
{
	struct testapp *t = *state;
	static struct pushd pd;
	char hash[ACCT_TOKEN_HEX + 1], hash_[ACCT_TOKEN_HEX + 1];
	char key_[APP_KEY_HEX + 1];

	memset(&pd, 0, sizeof(pd));
	pd.app = t->app;
	assert_int_equal(ev_init(&pd.ev), 0);
	sub_token_hash(TOKEN, hash);
	insert_sub(t, "token_hash", hash);
	assert_int_equal(tc_known(&pd, TOKEN, hash_, key_), 1);
	assert_int_equal(tc_known(&pd, OTHER, hash_, key_), 0);
	assert_int_equal(tc_known(&pd, hash, hash_, key_), 0);  /* the hash is no token */
	assert_int_equal(tc_callback(&pd, TOKEN, STATE_CHANGE), 202);
	assert_int_equal(tc_callback(&pd, OTHER, STATE_CHANGE), 404);
	assert_false(db_holds(t, TOKEN));
	ev_free(&pd.ev);          /* on PostgreSQL: the callback passed on */
}

/* An account in memory holds the hash only, and a callback with its
 * token reaches it; one character changed, it is 404. */
static void account_in_memory_found_by_hash(void **state)
{
	struct testapp *t = *state;
	static struct pushd pd;
	static struct acct a;
	static struct chan_sub sub;
	char near[sizeof(TOKEN)], hash_[ACCT_TOKEN_HEX + 1];
	char key_[APP_KEY_HEX + 1];

	memset(&pd, 0, sizeof(pd));
	memset(&a, 0, sizeof(a));
	memset(&sub, 0, sizeof(sub));
	pd.app = t->app;
	a.pd = &pd;
	a.jmap_id = (char *)"A1";
	a.sub = &sub;
	sub.a = &a;
	sub.state = SUB_PENDING;
	sub_token_hash(TOKEN, sub.token_hash);
	pd.accts[3] = &a;
	pd.naccts = 1;
	assert_null(memmem(&a, sizeof(a), TOKEN, strlen(TOKEN)));
	assert_null(memmem(&sub, sizeof(sub), TOKEN, strlen(TOKEN)));
	/* Not verified yet: a StateChange is refused, so the token was found. */
	assert_int_equal(tc_callback(&pd, TOKEN, STATE_CHANGE), 403);
	sub.state = SUB_VERIFIED;
	assert_int_equal(tc_callback(&pd, TOKEN, STATE_CHANGE), 202);
	memcpy(near, TOKEN, sizeof(near));
	near[sizeof(near) - 2] ^= 1;
	assert_int_equal(tc_callback(&pd, near, STATE_CHANGE), 404);
	assert_int_equal(tc_known(&pd, TOKEN, hash_, key_), 2);
	assert_int_equal(tc_known(&pd, near, hash_, key_), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, testapp_setup, testapp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hash_is_sha256_hex),
		T(version_3_database_migrated),
		T(stored_token_found_by_hash),
		T(account_in_memory_found_by_hash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
