/* sess: sessions in the shared database: the cookie opens them, nothing
 * else does; expiry; listing and revoking an account's sessions; the
 * record of when the mail server last accepted each, and its bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sess.h"
#include "testapp.h"

#define NOW ((time_t)1700000000)
#define USER "alice.liddell@example.test"
#define PASS "Jabberwock-Vorpal-7431"
#define DOC "{\"username\":\"" USER "\",\"marker\":\"DOC-MARKER-5f3a\"}"

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Creates a session for user at now; its cookie into cookie. */
static void make(struct testapp *t, const char *user, int remember,
    time_t now, char cookie[SESS_COOKIE_LEN + 1])
{
	struct sess_new n;

	memset(&n, 0, sizeof(n));
	n.user = user;
	n.pass = PASS;
	n.remember = remember;
	n.doc = DOC;
	n.api_url = "http://127.0.0.1:9/jmap/";
	n.download_url = "http://127.0.0.1:9/jmap/download/{accountId}/{blobId}/{name}?accept={type}";
	n.upload_url = "http://127.0.0.1:9/jmap/upload/{accountId}/";
	n.event_url = "";
	n.agent = "Mozilla/5.0 (test)";
	n.ip = "192.0.2.7";
	memset(cookie, 0, SESS_COOKIE_LEN + 1);
	assert_int_equal(sess_create(&t->app, &n, now, cookie), 0);
	assert_int_equal(strlen(cookie), SESS_COOKIE_LEN);
}

/* sess_lookup's result, then the touch that ends a request (as
 * serve_dispatch does); the session freed. */
static int lookup(struct testapp *t, const char *cookie, time_t now)
{
	struct sess *s = NULL;
	int rc = sess_lookup(&t->app, cookie, now, &s);

	if (rc != 0)
		assert_null(s);
	else
		assert_non_null(s);
	sess_touch(&t->app, s, now);
	sess_free(s);
	return rc;
}

static long long rows(struct testapp *t)
{
	return testapp_count(t, "SELECT count(*) FROM sessions");
}

/* The character d places after c in the base64url alphabet. */
static char b64_shift(char c, int d)
{
	const char *p = strchr(b64chars, c);

	assert_non_null(p);
	return b64chars[((p - b64chars) + d) % 64];
}

static void create_then_lookup_opens_credentials(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(cookie[SESS_ID_LEN], '.');
	assert_int_equal(strspn(cookie, b64chars), SESS_ID_LEN);
	assert_int_equal(strspn(cookie + SESS_ID_LEN + 1, b64chars),
	    SESS_SECRET_LEN);
	assert_int_equal(sess_lookup(&t->app, cookie, NOW + 5, &s), 0);
	assert_non_null(s);
	assert_string_equal(s->user, USER);
	assert_string_equal(s->pass, PASS);
	assert_memory_equal(s->id, cookie, SESS_ID_LEN);
	assert_string_equal(s->api_url, "http://127.0.0.1:9/jmap/");
	assert_string_equal(s->upload_url, "http://127.0.0.1:9/jmap/upload/{accountId}/");
	assert_string_equal(s->event_url, "");
	assert_int_equal(s->remember, 0);
	assert_true(s->created == NOW);
	assert_true(s->expires == NOW + t->app.cfg.session_lifetime);
	sess_free(s);
}

static void cookies_differ(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1];

	make(t, USER, 0, NOW, a);
	make(t, USER, 0, NOW, b);
	assert_memory_not_equal(a, b, SESS_ID_LEN);
	assert_memory_not_equal(a + SESS_ID_LEN, b + SESS_ID_LEN,
	    SESS_SECRET_LEN + 1);
	assert_int_equal(rows(t), 2);
}

static void changed_secret_character_not_found(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], bad[SESS_COOKIE_LEN + 1];
	size_t i;

	make(t, USER, 0, NOW, cookie);
	for (i = SESS_ID_LEN + 1; i < SESS_COOKIE_LEN; i++) {
		memcpy(bad, cookie, sizeof(bad));
		/* +32 changes the top bit of the 6, which every position
		 * carries into the secret. */
		bad[i] = b64_shift(bad[i], 32);
		if (lookup(t, bad, NOW + 1) != 1)
			fail_msg("secret character %zu changed still opens",
			    i - SESS_ID_LEN - 1);
	}
	/* The real one still works: a bad try deletes nothing. */
	assert_int_equal(lookup(t, cookie, NOW + 2), 0);
}

/* The secret's last character carries pad bits: moving it by one place
 * in the alphabet must not give a cookie that still opens the session. */
static void changed_last_secret_character_not_found(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], bad[SESS_COOKIE_LEN + 1];
	long v;
	int d;

	make(t, USER, 0, NOW, cookie);
	v = strchr(b64chars, cookie[SESS_COOKIE_LEN - 1]) - b64chars;
	/* An encoder writes the pad bits as zero. */
	assert_int_equal(v & 3, 0);
	for (d = 1; d < 4; d++) {
		memcpy(bad, cookie, sizeof(bad));
		bad[SESS_COOKIE_LEN - 1] = b64chars[v | d];
		if (lookup(t, bad, NOW + 1) != 1)
			fail_msg("last character '%c' -> '%c' still opens",
			    cookie[SESS_COOKIE_LEN - 1], bad[SESS_COOKIE_LEN - 1]);
	}
}

static void changed_id_not_found(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];

	make(t, USER, 0, NOW, cookie);
	cookie[3] = b64_shift(cookie[3], 1);
	assert_int_equal(lookup(t, cookie, NOW + 1), 1);
}

static void unknown_id_not_found(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];

	memset(cookie, 'A', SESS_COOKIE_LEN);
	cookie[SESS_ID_LEN] = '.';
	cookie[SESS_COOKIE_LEN] = '\0';
	assert_int_equal(lookup(t, cookie, NOW), 1);
	make(t, USER, 0, NOW, cookie);
	memset(cookie, 'B', SESS_ID_LEN);
	assert_int_equal(lookup(t, cookie, NOW), 1);
}

static void malformed_cookies_not_found(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], bad[SESS_COOKIE_LEN + 8];

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(lookup(t, "", NOW), 1);
	assert_int_equal(lookup(t, "short", NOW), 1);
	assert_int_equal(lookup(t, ".", NOW), 1);
	/* One character short, one too long. */
	snprintf(bad, sizeof(bad), "%.*s", SESS_COOKIE_LEN - 1, cookie);
	assert_int_equal(lookup(t, bad, NOW), 1);
	snprintf(bad, sizeof(bad), "%sA", cookie);
	assert_int_equal(lookup(t, bad, NOW), 1);
	/* No dot: the dot replaced by a letter. */
	snprintf(bad, sizeof(bad), "%s", cookie);
	bad[SESS_ID_LEN] = 'A';
	assert_int_equal(lookup(t, bad, NOW), 1);
	/* The dot one place off. */
	snprintf(bad, sizeof(bad), "%s", cookie);
	bad[SESS_ID_LEN] = bad[SESS_ID_LEN - 1];
	bad[SESS_ID_LEN - 1] = '.';
	assert_int_equal(lookup(t, bad, NOW), 1);
	/* Bad base64 in the secret and in the id. */
	snprintf(bad, sizeof(bad), "%s", cookie);
	bad[SESS_ID_LEN + 5] = '+';
	assert_int_equal(lookup(t, bad, NOW), 1);
	snprintf(bad, sizeof(bad), "%s", cookie);
	bad[SESS_COOKIE_LEN - 1] = '=';
	assert_int_equal(lookup(t, bad, NOW), 1);
	snprintf(bad, sizeof(bad), "%s", cookie);
	bad[2] = '/';
	assert_int_equal(lookup(t, bad, NOW), 1);
	snprintf(bad, sizeof(bad), "%s", cookie);
	bad[2] = '\'';
	assert_int_equal(lookup(t, bad, NOW), 1);
	assert_int_equal(lookup(t, cookie, NOW), 0);
}

/* Whether needle is anywhere in the file at path (a missing file: no). */
static int file_contains(const char *path, const char *needle)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t n = 0, cap = 0, got;
	int found;

	if (f == NULL)
		return 0;
	for (;;) {
		if (n + 65536 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			assert_non_null(data = realloc(data, cap));
		}
		if ((got = fread(data + n, 1, cap - n, f)) == 0)
			break;
		n += got;
	}
	fclose(f);
	found = memmem(data, n, needle, strlen(needle)) != NULL;
	free(data);
	return found;
}

static void database_holds_no_clear_credentials(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], path[300], secret[SESS_SECRET_LEN + 1];
	char id[SESS_ID_LEN + 1];
	static const char *const suffix[] = { "", "-wal", "-journal" };
	size_t i;
	int seen = 0;

	testapp_sqlite_only();
	make(t, USER, 1, NOW, cookie);
	memcpy(secret, cookie + SESS_ID_LEN + 1, sizeof(secret));
	memcpy(id, cookie, SESS_ID_LEN);
	id[SESS_ID_LEN] = '\0';
	for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", t->db_path, suffix[i]);
		/* The id is stored in clear: proof these are the right files. */
		seen |= file_contains(path, id);
		if (file_contains(path, PASS))
			fail_msg("the password is in %s", path);
		if (file_contains(path, USER))
			fail_msg("the username is in %s", path);
		if (file_contains(path, "alice.liddell"))
			fail_msg("part of the username is in %s", path);
		if (file_contains(path, "DOC-MARKER-5f3a"))
			fail_msg("the session document is in %s in clear", path);
		if (file_contains(path, secret))
			fail_msg("the cookie's secret is in %s", path);
	}
	assert_true(seen);
	/* And the session still opens. */
	assert_int_equal(lookup(t, cookie, NOW), 0);
}

static void idle_expiry_deletes(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1];
	long idle = t->app.cfg.session_idle;

	make(t, USER, 0, NOW, a);
	make(t, USER, 0, NOW, b);
	assert_int_equal(lookup(t, a, NOW + idle - 1), 0);
	assert_int_equal(lookup(t, b, NOW + idle), 1);
	assert_int_equal(rows(t), 1);
	/* Gone for good, even looked up at an earlier time. */
	assert_int_equal(lookup(t, b, NOW), 1);
}

static void use_extends_idle(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1];
	long idle = t->app.cfg.session_idle;

	make(t, USER, 0, NOW, a);
	assert_int_equal(lookup(t, a, NOW + idle - 100), 0);
	assert_int_equal(lookup(t, a, NOW + 2 * idle - 200), 0);
	assert_int_equal(lookup(t, a, NOW + 3 * idle - 200), 1);
}

static void remember_uses_longer_idle(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1];
	char c[SESS_COOKIE_LEN + 1];
	long idle = t->app.cfg.session_idle;
	long remember = t->app.cfg.session_remember_idle;

	assert_true(remember > idle);
	make(t, USER, 1, NOW, a);
	make(t, USER, 1, NOW, b);
	make(t, USER, 1, NOW, c);
	assert_int_equal(lookup(t, a, NOW + idle), 0);
	assert_int_equal(lookup(t, b, NOW + remember - 1), 0);
	assert_int_equal(lookup(t, c, NOW + remember), 1);
	assert_int_equal(rows(t), 2);
}

static void absolute_lifetime_ends_session(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1];

	t->app.cfg.session_idle = 3600;
	t->app.cfg.session_lifetime = 7200;
	make(t, USER, 0, NOW, a);
	/* Used often enough never to be idle, yet it ends. */
	assert_int_equal(lookup(t, a, NOW + 3000), 0);
	assert_int_equal(lookup(t, a, NOW + 6000), 0);
	assert_int_equal(lookup(t, a, NOW + 7199), 0);
	assert_int_equal(lookup(t, a, NOW + 7200), 1);
	assert_int_equal(rows(t), 0);
}

static void prune_deletes_past_lifetime(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1];

	t->app.cfg.session_lifetime = 7200;
	make(t, USER, 0, NOW, a);
	make(t, USER, 0, NOW + 100, b);
	assert_int_equal(sess_prune(&t->app, NOW + 7199), 0);
	assert_int_equal(sess_prune(&t->app, NOW + 7200), 1);
	assert_int_equal(rows(t), 1);
}

static void doc_returns_document(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;
	struct buf b;

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(sess_lookup(&t->app, cookie, NOW, &s), 0);
	buf_init(&b, 1 << 20);
	assert_int_equal(sess_doc(&t->app, s, &b), 0);
	assert_string_equal(buf_str(&b), DOC);
	buf_free(&b);
	sess_free(s);
}

static void doc_of_destroyed_session_fails(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;
	struct buf b;

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(sess_lookup(&t->app, cookie, NOW, &s), 0);
	assert_int_equal(sess_destroy(&t->app, s->id), 0);
	buf_init(&b, 1 << 20);
	assert_int_equal(sess_doc(&t->app, s, &b), -1);
	assert_int_equal(b.len, 0);
	buf_free(&b);
	sess_free(s);
	assert_int_equal(lookup(t, cookie, NOW), 1);
}

/* The entry of list whose "current" is cur; how many there are. */
static int count_current(json_object *list, int cur, json_object **which)
{
	size_t i;
	int n = 0;
	json_object *e, *v;

	for (i = 0; i < json_object_array_length(list); i++) {
		e = json_object_array_get_idx(list, i);
		assert_true(json_object_object_get_ex(e, "current", &v));
		if (json_object_get_boolean(v) == cur) {
			n++;
			*which = e;
		}
	}
	return n;
}

static void list_marks_current(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1];
	char other[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;
	json_object *list, *cur = NULL, *e, *v;

	make(t, USER, 0, NOW, a);
	make(t, USER, 1, NOW + 1, b);
	make(t, "bob@example.test", 0, NOW, other);
	assert_int_equal(sess_lookup(&t->app, a, NOW + 2, &s), 0);
	assert_non_null(list = sess_list(&t->app, s));
	assert_true(json_object_is_type(list, json_type_array));
	assert_int_equal(json_object_array_length(list), 2);
	assert_int_equal(count_current(list, 1, &cur), 1);
	assert_int_equal(count_current(list, 0, &e), 1);
	/* Only a prefix of the id is shown. */
	assert_true(json_object_object_get_ex(cur, "id", &v));
	assert_int_equal(json_object_get_string_len(v), 8);
	assert_memory_equal(json_object_get_string(v), a, 8);
	assert_true(json_object_object_get_ex(e, "id", &v));
	assert_memory_equal(json_object_get_string(v), b, 8);
	assert_true(json_object_object_get_ex(e, "remember", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(cur, "userAgent", &v));
	assert_string_equal(json_object_get_string(v), "Mozilla/5.0 (test)");
	assert_true(json_object_object_get_ex(cur, "ip", &v));
	assert_string_equal(json_object_get_string(v), "192.0.2.7");
	/* Nothing of the cookie's secret is in it. */
	assert_null(strstr(json_object_to_json_string(list), a + SESS_ID_LEN + 1));
	json_object_put(list);
	sess_free(s);
}

static void revoke_others_keeps_current_and_other_users(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1];
	char c[SESS_COOKIE_LEN + 1], bob[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;

	make(t, USER, 0, NOW, a);
	make(t, USER, 1, NOW, b);
	/* The same account: logins are compared without case. */
	make(t, "Alice.Liddell@EXAMPLE.test", 0, NOW, c);
	make(t, "bob@example.test", 0, NOW, bob);
	assert_int_equal(sess_lookup(&t->app, a, NOW, &s), 0);
	assert_int_equal(sess_revoke_others(&t->app, s), 2);
	sess_free(s);
	assert_int_equal(lookup(t, a, NOW), 0);
	assert_int_equal(lookup(t, b, NOW), 1);
	assert_int_equal(lookup(t, c, NOW), 1);
	assert_int_equal(lookup(t, bob, NOW), 0);
	assert_int_equal(rows(t), 2);
}

static void account_ignores_case_only(void **state)
{
	struct testapp *t = *state;
	char a[APP_KEY_HEX + 1], b[APP_KEY_HEX + 1], c[APP_KEY_HEX + 1];

	sess_account(&t->app, "Alice@Example.Test", a);
	sess_account(&t->app, "alice@example.test", b);
	sess_account(&t->app, "alice@example.test.", c);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_int_equal(strlen(a), APP_KEY_HEX);
	assert_null(strstr(a, "alice"));
}

static void other_server_secret_cannot_open(void **state)
{
	struct testapp *t = *state, t2;
	char cookie[SESS_COOKIE_LEN + 1], err[256];
	struct sess *s = (struct sess *)1;

	make(t, USER, 0, NOW, cookie);
	/* A second app over the same database with a new secret. */
	testapp_init(&t2);
	assert_int_equal(cfg_set(&t2.app.cfg, "state_db", t->db_path, err,
	    sizeof(err)), 0);
	testapp_start(&t2);
	assert_memory_not_equal(t2.app.secret, t->app.secret, APP_SECRET_LEN);
	assert_int_equal(sess_lookup(&t2.app, cookie, NOW, &s), 1);
	assert_null(s);
	testapp_close(&t2);
	/* The first app still opens it: the failure deleted nothing. */
	assert_int_equal(lookup(t, cookie, NOW), 0);
}

static void same_secret_file_opens(void **state)
{
	struct testapp *t = *state, t2;
	char cookie[SESS_COOKIE_LEN + 1];

	make(t, USER, 0, NOW, cookie);
	/* Another process with the same secret file and database. */
	testapp_open_twin(t, &t2);
	assert_memory_equal(t2.app.secret, t->app.secret, APP_SECRET_LEN);
	assert_int_equal(lookup(&t2, cookie, NOW), 0);
	testapp_close(&t2);
}

/* sess_lookup's user, or "" when it fails. */
static void lookup_user(struct testapp *t, const char *cookie, time_t now,
    char *out, size_t n)
{
	struct sess *s = NULL;

	out[0] = '\0';
	if (sess_lookup(&t->app, cookie, now, &s) == 0) {
		snprintf(out, n, "%s", s->user);
		assert_string_equal(s->pass, PASS);
	}
	sess_free(s);
}

static void exec_sql(struct testapp *t, const char *sql)
{
	assert_int_equal(store_test_exec(t->app.store, sql), 0);
}

/* Kept open between requests, each session still opens as its own, also
 * with more sessions than the process keeps. */
static void repeated_lookups_open_each_own(void **state)
{
	struct testapp *t = *state;
	char cookies[100][SESS_COOKIE_LEN + 1], user[64], got[64];
	int i, k, round;

	for (i = 0; i < 100; i++) {
		snprintf(user, sizeof(user), "user%d@example.test", i);
		make(t, user, 0, NOW, cookies[i]);
	}
	for (round = 0; round < 3; round++)
		for (i = 0; i < 100; i++) {
			k = (i * 37 + round) % 100;
			lookup_user(t, cookies[k], NOW + 1, got, sizeof(got));
			snprintf(user, sizeof(user), "user%d@example.test", k);
			assert_string_equal(got, user);
		}
}

/* What a process keeps open counts only while the row is unchanged. */
static void kept_session_follows_its_row(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], got[64];

	make(t, USER, 0, NOW, cookie);
	lookup_user(t, cookie, NOW + 1, got, sizeof(got));
	assert_string_equal(got, USER);
	/* Other bytes in each (SQL that SQLite and PostgreSQL both run). */
	exec_sql(t, "UPDATE sessions SET sealed = salt");
	assert_int_equal(lookup(t, cookie, NOW + 2), 1);

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(lookup(t, cookie, NOW + 1), 0);
	exec_sql(t, "UPDATE sessions SET salt = verifier");
	assert_int_equal(lookup(t, cookie, NOW + 2), 1);

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(lookup(t, cookie, NOW + 1), 0);
	exec_sql(t, "DELETE FROM sessions");
	assert_int_equal(lookup(t, cookie, NOW + 2), 1);
}

/* Ended in another process (its row deleted there): gone here too. */
static void session_ended_elsewhere_not_found(void **state)
{
	struct testapp *t = *state, t2;
	char cookie[SESS_COOKIE_LEN + 1], id[SESS_ID_LEN + 1];

	make(t, USER, 0, NOW, cookie);
	memcpy(id, cookie, SESS_ID_LEN);
	id[SESS_ID_LEN] = '\0';
	assert_int_equal(lookup(t, cookie, NOW + 1), 0);
	testapp_open_twin(t, &t2);
	assert_int_equal(lookup(&t2, cookie, NOW + 2), 0);
	assert_int_equal(sess_destroy(&t2.app, id), 0);
	testapp_close(&t2);
	assert_int_equal(lookup(t, cookie, NOW + 3), 1);
}

/* One column of the session row of cookie. */
static long long row_value(struct testapp *t, const char *cookie,
    const char *column)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SELECT %s FROM sessions WHERE id = '%.*s'",
	    column, SESS_ID_LEN, cookie);
	return testapp_count(t, sql);
}

static void id_of(const char *cookie, char id[SESS_ID_LEN + 1])
{
	memcpy(id, cookie, SESS_ID_LEN);
	id[SESS_ID_LEN] = '\0';
}

/* A sign-in is an acceptance by the mail server. */
static void verified_at_sign_in(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(row_value(t, cookie, "verified"), NOW);
	assert_int_equal(sess_lookup(&t->app, cookie, NOW + 5, &s), 0);
	assert_true(s->verified == NOW);
	assert_true(s->accepted == 0);
	sess_free(s);
}

/* A lookup writes nothing; what a request learns is written by the touch
 * after it, seen and verified together, at most once a minute: the relay
 * gains no write. */
static void acceptance_rides_on_the_seen_write(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;
	int before;

	make(t, USER, 0, NOW, cookie);
	before = store_test_changes(t->app.store);
	/* Requests within the minute: accepted, nothing written. */
	for (int i = 1; i < 60; i += 7) {
		assert_int_equal(sess_lookup(&t->app, cookie, NOW + i, &s), 0);
		sess_accepted(s, NOW + i);
		sess_touch(&t->app, s, NOW + i);
		sess_free(s);
	}
	assert_int_equal(store_test_changes(t->app.store), before);
	assert_int_equal(row_value(t, cookie, "verified"), NOW);
	/* The minute passed: one write carries both. */
	assert_int_equal(sess_lookup(&t->app, cookie, NOW + 61, &s), 0);
	sess_accepted(s, NOW + 61);
	sess_touch(&t->app, s, NOW + 61);
	assert_true(s->verified == NOW + 61 && s->seen == NOW + 61);
	sess_free(s);
	assert_int_equal(store_test_changes(t->app.store), before + 1);
	assert_int_equal(row_value(t, cookie, "seen"), NOW + 61);
	assert_int_equal(row_value(t, cookie, "verified"), NOW + 61);
}

/* A request the mail server did not answer for the session (or no call
 * at all: settings, images) marks it seen and leaves verified. */
static void seen_without_acceptance_keeps_verified(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(lookup(t, cookie, NOW + 120), 0);
	assert_int_equal(row_value(t, cookie, "seen"), NOW + 120);
	assert_int_equal(row_value(t, cookie, "verified"), NOW);
}

/* A session that ended during its request is not written again. */
static void ended_session_not_touched(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;

	make(t, USER, 0, NOW, cookie);
	assert_int_equal(sess_lookup(&t->app, cookie, NOW + 120, &s), 0);
	s->ended = 1;
	sess_touch(&t->app, s, NOW + 120);
	sess_free(s);
	assert_int_equal(row_value(t, cookie, "seen"), NOW);
}

/* The bound: an acceptance stands for session_recheck seconds. */
static void fresh_within_recheck(void **state)
{
	struct testapp *t = *state;

	assert_int_equal(t->app.cfg.session_recheck, 60);
	assert_true(sess_fresh(&t->app, NOW, NOW));
	assert_true(sess_fresh(&t->app, NOW, NOW + 59));
	assert_false(sess_fresh(&t->app, NOW, NOW + 60));
	assert_false(sess_fresh(&t->app, 0, NOW));
	t->app.cfg.session_recheck = 5;
	assert_true(sess_fresh(&t->app, NOW, NOW + 4));
	assert_false(sess_fresh(&t->app, NOW, NOW + 5));
}

/* A check's answer is written at once, for every process, and never
 * moves the record back. */
static void confirmed_seen_by_other_process(void **state)
{
	struct testapp *t = *state, t2;
	char cookie[SESS_COOKIE_LEN + 1], id[SESS_ID_LEN + 1];
	struct sess *s = NULL;

	make(t, USER, 0, NOW, cookie);
	id_of(cookie, id);
	assert_int_equal(sess_confirmed(&t->app, id, NOW + 100), 0);
	testapp_open_twin(t, &t2);
	assert_int_equal(sess_lookup(&t2.app, cookie, NOW + 101, &s), 0);
	assert_true(s->verified == NOW + 100);
	assert_true(s->seen == NOW + 100);
	sess_free(s);
	testapp_close(&t2);
	assert_int_equal(sess_confirmed(&t->app, id, NOW + 50), 0);
	assert_int_equal(row_value(t, cookie, "verified"), NOW + 100);
	/* Nor does a touch carrying an older acceptance. */
	assert_int_equal(sess_lookup(&t->app, cookie, NOW + 200, &s), 0);
	sess_accepted(s, NOW + 90);
	sess_touch(&t->app, s, NOW + 200);
	sess_free(s);
	assert_int_equal(row_value(t, cookie, "verified"), NOW + 100);
}

/* Refused by the mail server: gone in every process, the account's other
 * sessions untouched. */
static void refused_ends_session_everywhere(void **state)
{
	struct testapp *t = *state, t2;
	char cookie[SESS_COOKIE_LEN + 1], other[SESS_COOKIE_LEN + 1];
	char id[SESS_ID_LEN + 1];

	make(t, USER, 0, NOW, cookie);
	make(t, USER, 0, NOW, other);
	id_of(cookie, id);
	assert_int_equal(lookup(t, cookie, NOW + 1), 0);
	testapp_open_twin(t, &t2);
	assert_int_equal(lookup(&t2, cookie, NOW + 1), 0);
	sess_refused(&t2.app, id);
	testapp_close(&t2);
	assert_int_equal(lookup(t, cookie, NOW + 2), 1);
	assert_int_equal(lookup(t, other, NOW + 2), 0);
}

/* What pushd reads for a tab: the record without the cookie. */
static void state_reads_the_record(void **state)
{
	struct testapp *t = *state;
	char cookie[SESS_COOKIE_LEN + 1], id[SESS_ID_LEN + 1];
	long long verified = -1;
	long idle = t->app.cfg.session_idle;

	make(t, USER, 0, NOW, cookie);
	id_of(cookie, id);
	assert_int_equal(sess_state(&t->app, id, NOW + 1, &verified), 1);
	assert_true(verified == NOW);
	assert_int_equal(sess_confirmed(&t->app, id, NOW + 30), 0);
	assert_int_equal(sess_state(&t->app, id, NOW + 31, &verified), 1);
	assert_true(verified == NOW + 30);
	/* Idle past its end (counted from seen, which the check moved). */
	assert_int_equal(sess_state(&t->app, id, NOW + 30 + idle, &verified), 0);
	assert_int_equal(sess_destroy(&t->app, id), 0);
	assert_int_equal(sess_state(&t->app, id, NOW + 31, &verified), 0);
	assert_int_equal(sess_state(&t->app, "AAAAAAAAAAAAAAAAAAAAAA", NOW,
	    &verified), 0);
}

/* A database of schema version 2 gains the column; its sessions keep
 * working and, never recorded as accepted, are asked about first. */
static void version_2_database_migrated(void **state)
{
	struct testapp *t = *state, t2;
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess *s = NULL;

	testapp_sqlite_only();
	make(t, USER, 0, NOW, cookie);
	exec_sql(t, "ALTER TABLE sessions DROP COLUMN verified");
	exec_sql(t, "ALTER TABLE push_accounts RENAME COLUMN token_hash TO token");
	exec_sql(t, "DROP TABLE webpush");
	exec_sql(t, "DROP TABLE nodes");
	exec_sql(t, "ALTER TABLE push_accounts DROP COLUMN node");
	exec_sql(t, "ALTER TABLE push_accounts DROP COLUMN lease_until");
	exec_sql(t, "PRAGMA user_version = 2");
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM"
	    " pragma_table_info('sessions') WHERE name = 'verified'"), 0);
	testapp_open_twin(t, &t2);
	assert_int_equal(testapp_count(&t2, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(testapp_count(&t2, "SELECT count(*) FROM"
	    " pragma_table_info('sessions') WHERE name = 'verified'"), 1);
	assert_int_equal(sess_lookup(&t2.app, cookie, NOW + 1, &s), 0);
	assert_string_equal(s->pass, PASS);
	assert_true(s->verified == 0);
	assert_false(sess_fresh(&t2.app, s->verified, NOW + 1));
	sess_free(s);
	testapp_close(&t2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, testapp_setup, testapp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(create_then_lookup_opens_credentials),
		T(cookies_differ),
		T(changed_secret_character_not_found),
		T(changed_last_secret_character_not_found),
		T(changed_id_not_found),
		T(unknown_id_not_found),
		T(malformed_cookies_not_found),
		T(database_holds_no_clear_credentials),
		T(idle_expiry_deletes),
		T(use_extends_idle),
		T(remember_uses_longer_idle),
		T(absolute_lifetime_ends_session),
		T(prune_deletes_past_lifetime),
		T(doc_returns_document),
		T(doc_of_destroyed_session_fails),
		T(list_marks_current),
		T(revoke_others_keeps_current_and_other_users),
		T(account_ignores_case_only),
		T(other_server_secret_cannot_open),
		T(same_secret_file_opens),
		T(repeated_lookups_open_each_own),
		T(kept_session_follows_its_row),
		T(session_ended_elsewhere_not_found),
		T(verified_at_sign_in),
		T(acceptance_rides_on_the_seen_write),
		T(seen_without_acceptance_keeps_verified),
		T(ended_session_not_touched),
		T(fresh_within_recheck),
		T(confirmed_seen_by_other_process),
		T(refused_ends_session_everywhere),
		T(state_reads_the_record),
		T(version_2_database_migrated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
